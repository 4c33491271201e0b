// Minimal IPv4 router for `make bench`: the baseline p4-incast's pipeline is
// compared against on the same BMv2 build. It does what any L3 forwarder must
// (parse Ethernet/IPv4, LPM route, MAC rewrite, TTL decrement, checksum) and
// nothing p4-incast adds (IPv6, options, L4, ECN policy, counters, histogram).
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst_addr; bit<48> src_addr; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> total_len;
    bit<16> identification; bit<3> flags; bit<13> frag_offset;
    bit<8> ttl; bit<8> protocol; bit<16> hdr_checksum;
    bit<32> src_addr; bit<32> dst_addr;
}
struct headers_t { ethernet_t ethernet; ipv4_t ipv4; }
struct meta_t { }

parser MinParser(packet_in packet, out headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t std_meta) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 { packet.extract(hdr.ipv4); transition accept; }
}

control MinVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MinIngress(inout headers_t hdr, inout meta_t meta,
                   inout standard_metadata_t std_meta) {
    action drop_packet() { mark_to_drop(std_meta); }
    action route(bit<9> port, bit<48> smac, bit<48> dmac) {
        std_meta.egress_spec = port;
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    table routes_v4 {
        key = { hdr.ipv4.dst_addr : lpm @name("dst_addr"); }
        actions = { route; @defaultonly drop_packet; }
        const default_action = drop_packet();
        size = 1024;
    }
    apply {
        if (hdr.ipv4.isValid()) { routes_v4.apply(); } else { drop_packet(); }
    }
}

control MinEgress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t std_meta) { apply { } }

control MinCompute(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control MinDeparser(packet_out packet, in headers_t hdr) {
    apply { packet.emit(hdr.ethernet); packet.emit(hdr.ipv4); }
}

V1Switch(MinParser(), MinVerify(), MinIngress(), MinEgress(), MinCompute(),
         MinDeparser()) main;
