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

// Fields a target's parser adds to rx_budget_t for walking a SYN's options
// (v1model: the options and the walk's state).
#ifndef RX_BUDGET_TARGET_FIELDS
#define RX_BUDGET_TARGET_FIELDS
#endif

// The receive-window budget's working fields (docs/algorithms.md §8). A
// header that is never emitted rather than metadata: BMv2 resets every
// metadata field of every packet, but a header only by its valid bit, so a
// packet the budget does not read pays for one instance. The parser makes
// it valid for a SYN (scale); the port's rx_budget entry for
// every other TCP packet from a budget port.
header rx_budget_t {
    bit<8>   scale;       // SYN: its window scale (parser), or RX_SCALE_UNKNOWN; then the flow's,
                          // bit 4 RX_OPENED_BY_RX (defines.p4)
    bit<32>  epoch;       // this packet's epoch (never 0)
    bit<32>  epoch_prev;  // the epoch before it (epoch - length, wrapping: odd, never 0)
    bit<32>  epoch_old;   // epoch |-| 2 x length: a flow last seen at or before it aged out
    bit<32>  floor;       // one segment, bytes: the share of every N without an entry
    bit<128> key_rx_addr;   // flow key: the receiver's address (IPv4 zero-extended)
    bit<128> key_peer_addr; // flow key: the peer's address
    bit<32>  key_ports;     // flow key: the receiver's port, the peer's port
    bit<32>  slot;        // flow table slot: way 0's, then the way the flow is in
    bit<32>  sig;         // flow signature (never 0)
    bit<32>  slot_sig;    // the slot's signature before this packet
    bit<32>  slot_epoch;  // the epoch the slot's flow was last seen in (0: not counted, or empty)
    bit<32>  slot1;       // way 1's slot (v1model: an index past way 0's)
    bit<32>  slot1_sig;   // way 1's slot's signature before this packet (v1model)
    bit<32>  slot1_epoch; // way 1's slot's epoch before this packet (v1model)
    bit<32>  port_epoch;  // the epoch of the port's current count
    bit<32>  cur;         // counted flows last seen in this epoch
    bit<32>  prev;        // counted flows last seen in the epoch before
    bit<32>  dcur;        // this packet's change to cur: 1, 0 or -1 (all ones)
    bit<32>  dprev;       // this packet's change to prev: 0 or -1 (all ones)
    bit<1>   tracked;     // the flow has a slot
    bit<1>   counted;     // first packet of the flow in this epoch
    bit<1>   rewritten;   // the window was lowered (TNA: the deparser fixes the checksum)
    bit<1>   fresh;       // the packet that ends the flow's handshake (counts it first)
    bit<1>   zero_copy;   // leaves twice: this, then a copy with window 0 (§8)
    bit<3>   _pad;
    bit<16>  flows;       // N
    bit<32>  share;       // the flow's share, bytes
    bit<32>  wnd32;       // the share in window units of the flow's scale
    bit<16>  wnd;         // the same, at most 65535
    bit<16>  gap;         // window |-| wnd: 0 iff the ACK is within the share
    RX_BUDGET_TARGET_FIELDS
}

struct headers_t {
    ethernet_t     ethernet;
    ipv4_t         ipv4;
    ipv4_options_t ipv4_options;
    ipv6_t         ipv6;
    tcp_t          tcp;
    udp_t          udp;
    rx_budget_t    budget;        // never emitted
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
