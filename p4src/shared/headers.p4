// p4-incast: header and metadata types shared by every target (core.p4 only).
#ifndef P4INCAST_HEADERS_P4
#define P4INCAST_HEADERS_P4

#include "defines.p4"

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header ipv4_t {
    bit<4>      version;
    bit<4>      ihl;          // header length, 32-bit words (>= 5)
    bit<6>      dscp;
    ecn_t       ecn;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

// IPv4 options: (ihl - 5) 32-bit words, at most 40 bytes.
header ipv4_options_t {
    varbit<320> options;
}

header ipv6_t {
    bit<4>      version;
    bit<6>      dscp;         // traffic class, high six bits
    ecn_t       ecn;          // traffic class, low two bits
    bit<20>     flow_label;
    bit<16>     payload_len;
    bit<8>      next_hdr;
    bit<8>      hop_limit;
    ipv6_addr_t src_addr;
    ipv6_addr_t dst_addr;
}

header tcp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4>  data_offset;
    bit<4>  res;
    bit<8>  flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

struct headers_t {
    ethernet_t     ethernet;
    ipv4_t         ipv4;
    ipv4_options_t ipv4_options;
    ipv6_t         ipv6;
    tcp_t          tcp;
    udp_t          udp;
}

// Fields a target wrapper or a test harness adds to local_metadata_t (TNA:
// hist_index; the decision harness: ecn_verdict). None by default: BMv2 resets
// every metadata field of every packet, at a cost per field.
#ifndef LOCAL_METADATA_TARGET_FIELDS
#define LOCAL_METADATA_TARGET_FIELDS
#endif

// What ingress hands to egress, and the egress marker's working fields.
// The parser sets ecn; ecn_policy's action sets the policy fields; the
// decision tests them (p4src/shared/ecn_decision.p4).
struct local_metadata_t {
    bool     drop;              // drop this packet (ingress or egress decided)
    ecn_t    ecn;               // ECN codepoint of the IPv4 or IPv6 header
    ecn_mode_t ecn_mode;        // egress port's ECN_MODE_*
    qdepth_t k_minus_enq;       // K |-| enqueue depth: 0 iff enqueue depth >= K
    qdepth_t k_minus_deq;       // K |-| dequeue depth: 0 iff dequeue depth >= K
    qdepth_t drop_k;            // Not-ECT drop threshold, 0 = off
    qdepth_t drop_k_minus_enq;  // drop_k |-| enqueue depth: 0 iff enqueue depth >= drop_k
                                // (computed for Not-ECT packets only)
    LOCAL_METADATA_TARGET_FIELDS
}

#endif  // P4INCAST_HEADERS_P4
