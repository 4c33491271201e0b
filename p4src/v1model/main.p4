// p4-incast ToR pipeline for BMv2 simple_switch_grpc (v1model).
//
// A thin wrapper: parser, checksums and deparser for v1model, plus the glue
// that reads v1model's queue metadata and calls the shared controls in
// p4src/shared. Queue depth on BMv2 is in packets, so K is in packets.
//
//   parser:  copies the IPv4 / IPv6 ECN codepoint into meta.ecn
//   ingress: IngressForwarding   (parse checks, LPM route, MAC rewrite, TTL)
//   egress:  EgressEcnMarker     (depth histogram; per-port OFF / MARK_TAIL /
//                                 MARK_FRONT with K; counters; drop)
//   deparser recomputes the IPv4 header checksum (with options).
//
// BMv2 pays for every table, condition and statement block it runs, so the
// common path is kept short: in ingress one test and the route table; in
// egress the ecn_policy table, a few tests against constants and one action.
#include <core.p4>
// v1model's counter<I> takes its index type (PORT_COUNTER below) from this version on.
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

// The counter types the shared controls use (see p4src/shared/ecn_marker.p4):
// indexed by port (no cast, so no per-packet temporary) or by a 32-bit index.
#define PORT_COUNTER(size) counter<port_t>(size, CounterType.packets_and_bytes)
#define INDEX_COUNTER(size) counter<counter_index_t>(size, CounterType.packets_and_bytes)

// Ingress drops by sending to simple_switch's drop port (what mark_to_drop
// does), which saves BMv2 a test per packet (p4src/shared/forwarding.p4).
#define DROP_PORT 511

// Histogram cell (p4src/shared/ecn_marker.p4): one packet per bucket, the last
// bucket holds everything deeper; "B-1 - (B-1 |-| depth)" is min(depth, B-1)
// without a branch.
#define HIST_INDEX(port, depth) \
    ((port) < HIST_PORTS \
        ? (counter_index_t)(port) * HIST_BUCKETS + (HIST_BUCKETS - 1) \
          - (counter_index_t)((qdepth_t)(HIST_BUCKETS - 1) |-| (depth)) \
        : HIST_OTHER_PORTS)

#include "../shared/defines.p4"
#include "../shared/sizes.p4"
#include "../shared/headers.p4"
#include "../shared/forwarding.p4"
#include "../shared/ecn_marker.p4"

error {
    IPv4BadVersion,
    IPv4HeaderTooShort,
    IPv6BadVersion
}

parser P4IncastParser(packet_in packet,
                      out headers_t hdr,
                      inout local_metadata_t meta,
                      inout standard_metadata_t std_meta) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    // One state for the common case: version 4, no options, first fragment,
    // TCP/UDP. The version and IHL checks are select cases rather than
    // verify() calls, which would cost BMv2 a temporary field per packet;
    // malformed headers go to states that raise the parser error.
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        meta.ecn = hdr.ipv4.ecn;
        transition select(hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.frag_offset,
                          hdr.ipv4.protocol) {
            (4, 5, 0, IP_PROTO_TCP): parse_tcp;
            (4, 5, 0, IP_PROTO_UDP): parse_udp;
            (4, 5, _, _): accept;
            (4, 0 &&& 0xc, _, _): ipv4_header_too_short;  // IHL 0..3
            (4, 4, _, _): ipv4_header_too_short;
            (4, _, _, _): parse_ipv4_options;             // IHL 6..15
            default: ipv4_bad_version;
        }
    }

    state ipv4_bad_version {
        verify(false, error.IPv4BadVersion);
        transition accept;
    }

    state ipv4_header_too_short {
        verify(false, error.IPv4HeaderTooShort);
        transition accept;
    }

    state parse_ipv4_options {
        packet.extract(hdr.ipv4_options, ((bit<32>)hdr.ipv4.ihl - 5) * 32);
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

    // Extension headers are not walked: routing and ECN need only the fixed
    // header, and the payload leaves untouched.
    state parse_ipv6 {
        packet.extract(hdr.ipv6);
        meta.ecn = hdr.ipv6.ecn;
        transition select(hdr.ipv6.version, hdr.ipv6.next_hdr) {
            (6, IP_PROTO_TCP): parse_tcp;
            (6, IP_PROTO_UDP): parse_udp;
            (6, _): accept;
            default: ipv6_bad_version;
        }
    }

    state ipv6_bad_version {
        verify(false, error.IPv6BadVersion);
        transition accept;
    }

    state parse_tcp {
        packet.extract(hdr.tcp);
        transition accept;
    }

    state parse_udp {
        packet.extract(hdr.udp);
        transition accept;
    }
}

// One field list covers IPv4 with and without options: BMv2 leaves the fields
// of an invalid header out of a checksum (bm_sim/calculations.cpp), as Tofino's
// checksum engine does, so hdr.ipv4_options adds nothing when absent. One
// verify and one update instead of two each: BMv2 evaluates every one's
// condition per packet.
#define IPV4_CHECKSUM_FIELDS \
    { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, \
      hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags, \
      hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol, \
      hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4_options.options }

control P4IncastVerifyChecksum(inout headers_t hdr, inout local_metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(), IPV4_CHECKSUM_FIELDS,
                        hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control P4IncastIngress(inout headers_t hdr,
                        inout local_metadata_t meta,
                        inout standard_metadata_t std_meta) {
    IngressForwarding() forwarding;

    apply {
        bool parser_ok = std_meta.parser_error == error.NoError;
        bool checksum_ok = std_meta.checksum_error == 0;
        forwarding.apply(hdr, meta, parser_ok, checksum_ok, std_meta.egress_spec);
    }
}

control P4IncastEgress(inout headers_t hdr,
                       inout local_metadata_t meta,
                       inout standard_metadata_t std_meta) {
    EgressEcnMarker() ecn_marker;

    apply {
        // BMv2: enq_qdepth = packets already waiting when this one was
        // enqueued; deq_qdepth = packets left waiting when it was dequeued.
        ecn_marker.apply(hdr, meta, std_meta.egress_port,
                         std_meta.enq_qdepth, std_meta.deq_qdepth);
        if (meta.drop) {
            mark_to_drop(std_meta);
        }
    }
}

control P4IncastComputeChecksum(inout headers_t hdr, inout local_metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(), IPV4_CHECKSUM_FIELDS,
                        hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control P4IncastDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.ipv4_options);
        packet.emit(hdr.ipv6);
        packet.emit(hdr.tcp);
        packet.emit(hdr.udp);
    }
}

V1Switch(P4IncastParser(),
         P4IncastVerifyChecksum(),
         P4IncastIngress(),
         P4IncastEgress(),
         P4IncastComputeChecksum(),
         P4IncastDeparser()) main;
