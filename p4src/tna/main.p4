// p4-incast ToR pipeline for Tofino 1 (TNA), for p4c's open Tofino backend.
//
// A thin wrapper like p4src/v1model/main.p4: TNA parsers and deparsers, plus
// the glue that reads TNA's queue metadata and calls the shared controls in
// p4src/shared. Same controls, tables, actions, counters and key names as
// v1model, so the P4Runtime names are the same on both targets.
//
// Queue depth on Tofino is in cells (80 bytes on Tofino 1), so K is in cells:
// the user gives K in bytes and the controller converts (controller/units.py).
//
//   ingress parser:   IPv4 header checksum verified with the Checksum extern
//   ingress:          IngressForwarding  (parse checks, LPM route, MAC, TTL)
//   egress parser:    Ethernet + IPv4 (with options) / IPv6 only
//   egress:           EgressEcnMarker    (depth histogram; OFF / MARK_TAIL on
//                                         enq_qdepth / MARK_FRONT on
//                                         deq_qdepth, K in cells; counters)
//   egress deparser:  IPv4 header checksum recomputed with the Checksum extern
//                     (covers both the TTL and the ECN change, with options)
//
// Differences from v1model, all forced by the target:
//  - v1model's parser verify() is not supported by the Tofino parser: a bad
//    IP version or IHL sets ingress_metadata_t.malformed instead, and
//    ingress treats it like a parser error (DROP_PARSER_ERROR), as v1model
//    does; hardware parser errors (e.g. truncated headers) come from
//    ig_intr_md_from_prsr.parser_err.
//  - The histogram bucket is 2^HIST_DEPTH_SHIFT cells (16 cells = 1280 bytes,
//    about one full-size packet) rather than one packet.
//  - As on v1model only ports < HIST_PORTS (128) have their own histogram
//    rows; on Tofino that is pipe 0's ports (device ports 0..71), the other
//    pipes' ports share the HIST_OTHER_PORTS cell.
//  - The histogram cell is computed in the control (with ifs, as
//    port[6:0] ++ bucket) and handed to the shared marker in meta.hist_index:
//    v1model computes it inside the ecn_policy action with ?:, which a Tofino
//    action cannot do, and a Tofino action cannot add a value computed in an
//    earlier stage.
//  - The histogram is counted after ecn_policy, not in its action
//    (HIST_COUNT_IN_APPLY): the backend rejects a metadata-addressed counter
//    in the action of a table whose default action carries action data.
//  - meta.ecn is copied in the egress control, not the parser: the parser
//    cannot write one field from IPv4's and IPv6's ECN bits, which sit at
//    different offsets within their bytes.
// Compiled with p4c 17ade03c's Tofino backend: 15 s, 4 stages (ingress 2,
// egress 4), 31 tables, 30 SRAM and 8 TCAM units (`make build-tna`).
#include <core.p4>
#include <tna.p4>

// The counter types the shared controls use (see p4src/shared/ecn_marker.p4).
#define PORT_COUNTER(size) Counter<bit<64>, port_t>(size, CounterType_t.PACKETS_AND_BYTES)
#define INDEX_COUNTER(size) Counter<bit<64>, counter_index_t>(size, CounterType_t.PACKETS_AND_BYTES)

// Ingress drops with drop_ctl when meta.drop is set; the port value is unused.
#define DROP_PORT 0

// Histogram cell (p4src/shared/ecn_marker.p4), computed by P4IncastEgress
// before the marker runs (a Tofino action cannot branch), in a field TNA adds
// to the shared metadata.
#define LOCAL_METADATA_TARGET_FIELDS counter_index_t hist_index;
#define HIST_INDEX(port, depth) meta.hist_index
// ... and counted outside the policy action (see p4src/shared/ecn_marker.p4).
#define HIST_COUNT_IN_APPLY

#include "../shared/defines.p4"
#include "../shared/sizes.p4"
#include "../shared/headers.p4"
#include "../shared/forwarding.p4"
#include "../shared/ecn_marker.p4"

// Histogram bucket = enq_qdepth >> HIST_DEPTH_SHIFT, i.e. 16 cells (1280 bytes
// on Tofino 1) per bucket; bucket HIST_BUCKETS - 1 holds everything from
// 127 * 16 cells (162560 bytes) up. controller/units.py has the same value.
#define HIST_DEPTH_SHIFT 4

// Ingress-only metadata: the shared part plus what v1model gets from
// standard_metadata (parser_error, checksum_error).
struct ingress_metadata_t {
    local_metadata_t local;           // drop decision (p4src/shared/headers.p4)
    bool             malformed;       // bad IPv4 version/IHL or IPv6 version
    bool             ipv4_checksum_err; // IPv4 header checksum wrong
}

// Egress needs nothing from ingress: no bridged header. The egress parser
// fills the shared part (drop, ecn) as the v1model parser does.
struct egress_metadata_t {
    local_metadata_t local;           // + hist_index, this packet's histogram cell
}

// P4IncastIngressParser: intrinsic and port metadata, then Ethernet, IPv4
// (options as varbit) or IPv6, then TCP/UDP as on v1model. Verifies the IPv4
// header checksum (options included) in the parser's checksum engine.
parser P4IncastIngressParser(packet_in pkt,
                             out headers_t hdr,
                             out ingress_metadata_t md,
                             out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ipv4_checksum;

    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        md.local.drop = false;
        md.malformed = false;
        md.ipv4_checksum_err = false;
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: check_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    // v1model: verify(version == 4) and verify(ihl >= 5) before extracting.
    state check_ipv4 {
        transition select(pkt.lookahead<bit<8>>()) {
            8w0x45 &&& 8w0xff: parse_ipv4;  // IHL 5
            8w0x46 &&& 8w0xfe: parse_ipv4;  // IHL 6, 7
            8w0x48 &&& 8w0xf8: parse_ipv4;  // IHL 8..15
            default: malformed;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        ipv4_checksum.add(hdr.ipv4);
        transition select(hdr.ipv4.ihl) {
            5: parse_ipv4_no_options;
            default: parse_ipv4_options;
        }
    }

    state parse_ipv4_no_options {
        md.ipv4_checksum_err = ipv4_checksum.verify();  // true: checksum wrong
        transition parse_ipv4_payload;
    }

    state parse_ipv4_options {
        pkt.extract(hdr.ipv4_options, ((bit<32>)hdr.ipv4.ihl - 5) * 32);
        ipv4_checksum.add({hdr.ipv4_options.options});
        md.ipv4_checksum_err = ipv4_checksum.verify();
        transition parse_ipv4_payload;
    }

    // Only the first fragment carries the L4 header.
    state parse_ipv4_payload {
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, IP_PROTO_TCP): parse_tcp;
            (0, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }

    // Extension headers are not walked (as on v1model).
    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        transition select(hdr.ipv6.version, hdr.ipv6.next_hdr) {
            (6, IP_PROTO_TCP): parse_tcp;
            (6, IP_PROTO_UDP): parse_udp;
            (6, _): accept;
            default: malformed;
        }
    }

    state parse_tcp {
        pkt.extract(hdr.tcp);
        transition accept;
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        transition accept;
    }

    state malformed {
        md.malformed = true;
        transition accept;
    }
}

control P4IncastIngress(inout headers_t hdr,
                        inout ingress_metadata_t md,
                        in    ingress_intrinsic_metadata_t ig_intr_md,
                        in    ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                        inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                        inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    IngressForwarding() forwarding;

    apply {
        port_t egress_port;
        forwarding.apply(hdr, md.local,
                         ig_prsr_md.parser_err == PARSER_ERROR_OK && !md.malformed,
                         !md.ipv4_checksum_err,
                         egress_port);
        if (md.local.drop) {
            ig_dprsr_md.drop_ctl = 1;
        } else {
            ig_tm_md.ucast_egress_port = egress_port;
        }
    }
}

// The IPv4 checksum is left stale here (TTL changed) and recomputed once, in
// the egress deparser, after ECN marking.
control P4IncastIngressDeparser(packet_out pkt,
                                inout headers_t hdr,
                                in    ingress_metadata_t md,
                                in    ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv4_options);
        pkt.emit(hdr.ipv6);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
    }
}

// P4IncastEgressParser: only what egress reads or rewrites (the IP header and
// its options, for the checksum); TCP/UDP stay in the payload untouched.
// Ingress already dropped malformed packets.
parser P4IncastEgressParser(packet_in pkt,
                            out headers_t hdr,
                            out egress_metadata_t md,
                            out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        md.local.drop = false;
        md.local.ecn = ECN_NOT_ECT;
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl) {
            5: accept;
            default: parse_ipv4_options;
        }
    }

    state parse_ipv4_options {
        pkt.extract(hdr.ipv4_options, ((bit<32>)hdr.ipv4.ihl - 5) * 32);
        transition accept;
    }

    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        transition accept;
    }
}

control P4IncastEgress(inout headers_t hdr,
                       inout egress_metadata_t md,
                       in    egress_intrinsic_metadata_t eg_intr_md,
                       in    egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                       inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                       inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    EgressEcnMarker() ecn_marker;

    apply {
        // Tofino: enq_qdepth = cells queued when this packet was enqueued;
        // deq_qdepth = cells left queued when it was dequeued (bit<19> both).
        // Cell = port * HIST_BUCKETS + bucket, written as port[6:0] ++ bucket
        // (HIST_PORTS = HIST_BUCKETS = 128): a Tofino action cannot add a
        // value computed in an earlier stage, but it can deposit bits.
        bit<7> bucket;
        // (a test of the high bits, not `>= 127 << 4`: a gateway compares few bits)
        if (eg_intr_md.enq_qdepth[18:HIST_DEPTH_SHIFT + 7] != 0) {
            bucket = HIST_BUCKETS - 1;
        } else {
            bucket = eg_intr_md.enq_qdepth[HIST_DEPTH_SHIFT + 6:HIST_DEPTH_SHIFT];
        }
        if (eg_intr_md.egress_port < HIST_PORTS) {
            md.local.hist_index = (counter_index_t)(eg_intr_md.egress_port[6:0] ++ bucket);
        } else {
            md.local.hist_index = HIST_OTHER_PORTS;
        }

        ecn_marker.apply(hdr, md.local, eg_intr_md.egress_port,
                         eg_intr_md.enq_qdepth, eg_intr_md.deq_qdepth);
        if (md.local.drop) {
            eg_dprsr_md.drop_ctl = 1;
        }
    }
}

// Recomputes the IPv4 header checksum (TTL from ingress, ECN from egress);
// one update covers packets with and without options.
control P4IncastEgressDeparser(packet_out pkt,
                               inout headers_t hdr,
                               in    egress_metadata_t md,
                               in    egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;

    apply {
        // Unconditional, as in switch.p4: the engine sums only valid headers'
        // fields and the result is emitted only with a valid hdr.ipv4.
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
            hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
            hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
            hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4_options.options });
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv4_options);
        pkt.emit(hdr.ipv6);
    }
}

Pipeline(P4IncastIngressParser(),
         P4IncastIngress(),
         P4IncastIngressDeparser(),
         P4IncastEgressParser(),
         P4IncastEgress(),
         P4IncastEgressDeparser()) pipe;

Switch(pipe) main;
