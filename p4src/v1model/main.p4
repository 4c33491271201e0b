// p4-incast ToR pipeline for BMv2 simple_switch_grpc (v1model).
//
// A thin wrapper: parser, checksums and deparser for v1model, plus the glue
// that reads v1model's queue metadata and calls the shared controls in
// p4src/shared. Queue depth on BMv2 is in packets, so K is in packets.
//
//   parser:  copies the IPv4 / IPv6 ECN codepoint into meta.ecn
//   ingress: IngressForwarding   (parse checks, LPM route, MAC rewrite, TTL)
//            IngressRxBudget     (the receiver's budget, TCP from a budget
//                                 port; docs/algorithms.md §8)
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

// The SYN options walk's fields (rx_budget_t, p4src/shared/headers.p4):
// opt_left, the option bytes not walked yet; opt_kind, opt_len, opt_shift,
// the option at hand's kind, length and third byte, and opt_rem = opt_left -
// opt_len (top bit set: the option runs past the header); opts, the options
// not walked yet, left-aligned; look_n, the lookahead of n option bytes;
// short_pkt and short_ip, the bytes the frame and the IP datagram hold past
// the TCP header as its data offset gives it (top bit set: fewer than none).
#define RX_BUDGET_TARGET_FIELDS \
    bit<32>  short_pkt; \
    bit<32>  short_ip; \
    bit<16>  opt_left; \
    bit<8>   opt_kind; \
    bit<8>   opt_shift; \
    bit<16>  opt_len; \
    bit<16>  opt_rem; \
    bit<320> opts; \
    bit<32>  look_4; \
    bit<64>  look_8; \
    bit<96>  look_12; \
    bit<128> look_16; \
    bit<160> look_20; \
    bit<192> look_24; \
    bit<224> look_28; \
    bit<256> look_32; \
    bit<288> look_36; \

#include "../shared/defines.p4"
#include "../shared/sizes.p4"
#include "../shared/headers.p4"
#include "../shared/forwarding.p4"
#include "../shared/ecn_marker.p4"

// The receiver's budget (p4src/shared/rx_budget.p4): ticks of 1024 us from
// BMv2's microsecond timestamp; the TCP checksum fixed in the rewrite action
// by RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'), in a 32-bit sum folded twice
// (hdr.budget.share is free by then).
#define RX_BUDGET_TICKS(ts) ((ts)[41:10])
#define RX_WINDOW_CHECKSUM \
    hdr.budget.share = (bit<32>)(~hdr.tcp.checksum) + (bit<32>)(~hdr.tcp.window) \
                     + (bit<32>)hdr.budget.wnd; \
    hdr.budget.share = (hdr.budget.share & 0xffff) + (hdr.budget.share >> 16); \
    hdr.budget.share = (hdr.budget.share & 0xffff) + (hdr.budget.share >> 16); \
    hdr.tcp.checksum = ~hdr.budget.share[15:0];

// RxBudgetFlows: the flow table and the port's counts of counted flows
// (docs/algorithms.md §8, "Flows and N") in v1model registers. The flow's
// CRC-32 over (receiver address, peer address, receiver port ++ peer port),
// IPv4 addresses zero-extended to 128 bits — this packet comes from the
// receiver — gives its two slots, one a way: way 0's the low FLOW_SLOT_BITS
// bits, way 1's the next FLOW_SLOT_BITS (past way 0's in the one register
// of FLOW_TABLE), and its signature (all 32, low bit set so that 0 means an
// empty slot). The ways are tried in order, as TNA's stages run them: way 0
// is the flow's if it holds its signature, or, for a SYN, if no counted flow
// holds it; else way 1 is tried the same way. One hash call: BMv2 copies its
// field list into temporaries it resets on every packet.
#define FLOW_KEY { hdr.budget.key_rx_addr, hdr.budget.key_peer_addr, hdr.budget.key_ports }
control RxBudgetFlows(inout headers_t hdr, in port_t port) {
    // Its actions are @hidden: target-specific, they stay out of the
    // P4Runtime names both targets share (tests/tna).
    register<bit<32>, bit<32>>(FLOW_TABLE) budget_flow_sig;
    register<bit<32>, bit<32>>(FLOW_TABLE) budget_flow_epoch;
    register<bit<8>, bit<32>>(FLOW_TABLE) budget_flow_scale;
    register<bit<32>, port_t>(PORT_STATS_SIZE) budget_port_epoch;
    register<bit<32>, port_t>(PORT_STATS_SIZE) budget_port_cur;
    register<bit<32>, port_t>(PORT_STATS_SIZE) budget_port_prev;

    // The flow's key, receiver side first (IPv4 addresses zero-extended).
    @hidden action key_v4() {
        hdr.budget.key_rx_addr = (bit<128>)hdr.ipv4.src_addr;
        hdr.budget.key_peer_addr = (bit<128>)hdr.ipv4.dst_addr;
        hdr.budget.key_ports = hdr.tcp.src_port ++ hdr.tcp.dst_port;
    }
    @hidden action key_v6() {
        hdr.budget.key_rx_addr = hdr.ipv6.src_addr;
        hdr.budget.key_peer_addr = hdr.ipv6.dst_addr;
        hdr.budget.key_ports = hdr.tcp.src_port ++ hdr.tcp.dst_port;
    }
    // The epochs this packet compares with, and what the slot and the port hold.
    @hidden action read_state() {
        hash(hdr.budget.sig, HashAlgorithm.crc32, 32w0, FLOW_KEY, 64w0x100000000);
        hdr.budget.slot = hdr.budget.sig & (FLOW_SLOTS - 1);
        hdr.budget.slot1 = FLOW_SLOTS + ((hdr.budget.sig >> FLOW_SLOT_BITS) & (FLOW_SLOTS - 1));
        hdr.budget.sig = hdr.budget.sig | 1;
        hdr.budget.epoch_prev = hdr.budget.epoch - hdr.budget.epoch_prev;  // odd: never 0 (closed)
        hdr.budget.epoch_old = hdr.budget.epoch |-| hdr.budget.epoch_old;
        budget_flow_sig.read(hdr.budget.slot_sig, hdr.budget.slot);
        budget_flow_epoch.read(hdr.budget.slot_epoch, hdr.budget.slot);
        budget_flow_sig.read(hdr.budget.slot1_sig, hdr.budget.slot1);
        budget_flow_epoch.read(hdr.budget.slot1_epoch, hdr.budget.slot1);
        budget_port_epoch.read(hdr.budget.port_epoch, port);
        budget_port_cur.read(hdr.budget.cur, port);
        budget_port_prev.read(hdr.budget.prev, port);
        hdr.budget.tracked = 1;
        hdr.budget.counted = 0;
        hdr.budget.fresh = 0;
    }
    // Way 0 is not the flow's: the packet works on way 1's slot.
    @hidden action use_way1() {
        hdr.budget.slot = hdr.budget.slot1;
        hdr.budget.slot_sig = hdr.budget.slot1_sig;
        hdr.budget.slot_epoch = hdr.budget.slot1_epoch;
    }
    // A SYN opens its flow's slot with epoch 0 (open, not yet counted): its
    // own slot (the scale read again), or a slot that holds no counted flow
    // (empty, closed, opened and not yet counted, or aged out).
    @hidden action open_own() {
        budget_flow_scale.write(hdr.budget.slot, hdr.budget.scale);
        budget_flow_epoch.write(hdr.budget.slot, 0);
    }
    @hidden action open_claim() {
        budget_flow_sig.write(hdr.budget.slot, hdr.budget.sig);
        budget_flow_scale.write(hdr.budget.slot, hdr.budget.scale);
        budget_flow_epoch.write(hdr.budget.slot, 0);
        hdr.budget.slot_epoch = 0;                       // new: not counted before
    }
    // Any other packet of the flow whose slot it is: seen in this epoch
    // (counted from the first one after its SYN, the handshake's end, and
    // again after it aged out).
    @hidden action see_own() {
        budget_flow_scale.read(hdr.budget.scale, hdr.budget.slot);
        budget_flow_epoch.write(hdr.budget.slot, hdr.budget.epoch);
    }
    @hidden action see_fresh() {
        hdr.budget.fresh = 1;
    }
    // A FIN or RST closes it: the slot empties, so the flow's later packets
    // (the ACK of the peer's FIN) find no slot of theirs.
    @hidden action close_own() {
        budget_flow_sig.write(hdr.budget.slot, 0);
        budget_flow_epoch.write(hdr.budget.slot, 0);
    }
    @hidden action untracked() {
        hdr.budget.tracked = 0;
    }
    // A new epoch: the flows of the one before are the previous epoch's if it
    // was the previous epoch, else there are none (the port was idle).
    @hidden action roll_keep() {
        hdr.budget.prev = hdr.budget.cur;
        hdr.budget.cur = 0;
    }
    @hidden action roll_reset() {
        hdr.budget.prev = 0;
        hdr.budget.cur = 0;
    }
    // The flow's first packet in this epoch: it moves to cur (from prev if it
    // was last seen in the previous epoch).
    @hidden action count_in_cur() {
        hdr.budget.counted = 1;
        hdr.budget.cur = hdr.budget.cur + 1;
    }
    @hidden action leave_cur() {
        hdr.budget.cur = hdr.budget.cur - 1;
    }
    @hidden action leave_prev() {
        hdr.budget.prev = hdr.budget.prev - 1;
    }
    @hidden action write_port() {
        budget_port_epoch.write(port, hdr.budget.epoch);
        budget_port_cur.write(port, hdr.budget.cur);
        budget_port_prev.write(port, hdr.budget.prev);
    }

    apply {
        if (hdr.ipv4.isValid()) {
            key_v4();
        } else {
            key_v6();
        }
        read_state();
        bool closing = (hdr.tcp.flags & (TCP_FLAG_FIN | TCP_FLAG_RST)) != 0;
        // Way 0 first: the flow's if it holds its signature, or for a SYN
        // (not closing) if it holds no counted flow; else way 1.
        if (hdr.budget.slot_sig != hdr.budget.sig) {
            if (closing || (hdr.tcp.flags & TCP_FLAG_SYN) == 0
                    || hdr.budget.slot_epoch > hdr.budget.epoch_old) {
                use_way1();
            }
        }
        // The slot is the flow's if it holds its signature; its epoch is
        // the one the flow was last seen in (counted if this one or the one
        // before), or 0 (opened by a SYN, not yet counted).
        bool own = hdr.budget.slot_sig == hdr.budget.sig;
        if (closing) {
            if (own) {
                close_own();
            } else {
                untracked();
            }
        } else if ((hdr.tcp.flags & TCP_FLAG_SYN) != 0) {
            if (own) {
                open_own();
            } else if (hdr.budget.slot_epoch <= hdr.budget.epoch_old) {
                open_claim();
            } else {
                untracked();                      // both ways held: a collision, or the table full
            }
        } else if (own) {
            see_own();
            if (hdr.budget.slot_epoch == 0) {
                see_fresh();                      // the handshake's end
            }
        } else {
            untracked();                          // no SYN seen, closed, or its slot taken
        }
        // Every packet of the port rolls its epoch, so the count is current
        // as of the port's last packet; only a tracked one changes it.
        if (hdr.budget.port_epoch != hdr.budget.epoch) {
            if (hdr.budget.port_epoch == hdr.budget.epoch_prev) {
                roll_keep();
            } else {
                roll_reset();
            }
        }
        if (hdr.budget.tracked == 1) {
            // Where the flow was counted before this packet: cur (last seen
            // in this epoch), prev (in the one before), or nowhere. A FIN or
            // RST leaves the count, and so does a SYN (a new handshake).
            if (closing || (hdr.tcp.flags & TCP_FLAG_SYN) != 0) {
                if (hdr.budget.slot_epoch == hdr.budget.epoch) {
                    leave_cur();
                } else if (hdr.budget.slot_epoch == hdr.budget.epoch_prev) {
                    leave_prev();
                }
            } else if (hdr.budget.slot_epoch != hdr.budget.epoch) {
                count_in_cur();
                if (hdr.budget.slot_epoch == hdr.budget.epoch_prev) {
                    leave_prev();
                }
            }
        }
        write_port();
    }
}

#include "../shared/rx_budget.p4"

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
            (4, 5, 0, IP_PROTO_TCP): parse_tcp_v4;
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
            (0, IP_PROTO_TCP): parse_tcp_v4;
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
            (6, IP_PROTO_TCP): parse_tcp_v6;
            (6, IP_PROTO_UDP): parse_udp;
            (6, _): accept;
            default: ipv6_bad_version;
        }
    }

    state ipv6_bad_version {
        verify(false, error.IPv6BadVersion);
        transition accept;
    }

    // A SYN's options are walked for the window scale (docs/algorithms.md
    // §8): copied into hdr.budget.opts with one lookahead of exactly the
    // header's option bytes, then walked there by shifts, so that no option
    // byte is taken out of the packet (what the parser extracts, the
    // deparser must emit). No lookahead reads past the frame: a SYN whose
    // data offset is below 5, or runs past the frame or the IP datagram,
    // is not walked and leaves its scale unknown (forwarded as it came, not
    // dropped as a truncated header). Any other segment leaves its options
    // in the payload. One TCP state per IP version, so that the room check
    // below knows which header is valid.
#define PARSE_TCP_STATE(v) \
    state parse_tcp_##v { \
        packet.extract(hdr.tcp); \
        transition select(hdr.tcp.flags, hdr.tcp.data_offset) { \
            (TCP_FLAG_SYN &&& TCP_FLAG_SYN, 0 &&& 0xc): tcp_options_malformed; /* 0..3 */ \
            (TCP_FLAG_SYN &&& TCP_FLAG_SYN, 4): tcp_options_malformed; \
            (TCP_FLAG_SYN &&& TCP_FLAG_SYN, 5): tcp_syn_no_options; \
            (TCP_FLAG_SYN &&& TCP_FLAG_SYN, _): tcp_syn_room_##v; \
            default: accept; \
        } \
    }
    PARSE_TCP_STATE(v4)
    PARSE_TCP_STATE(v6)

    state tcp_syn_no_options {
        hdr.budget.setValid();
        hdr.budget.scale = 0;                 // no window-scale option: scale 0
        transition accept;
    }

    // Where the TCP header ends against the frame (std_meta.packet_length:
    // the whole frame, Ethernet's 14 bytes included) and against the IP
    // datagram (its total or payload length): what remains, in 32 bits so
    // that a shortfall sets the top bit.
    state tcp_syn_room_v4 {
        hdr.budget.setValid();
        hdr.budget.short_ip = (bit<32>)hdr.ipv4.total_len - (bit<32>)hdr.ipv4.ihl * 4
                            - (bit<32>)hdr.tcp.data_offset * 4;
        hdr.budget.short_pkt = std_meta.packet_length - 14 - (bit<32>)hdr.ipv4.ihl * 4
                             - (bit<32>)hdr.tcp.data_offset * 4;
        transition tcp_syn_room;
    }

    state tcp_syn_room_v6 {
        hdr.budget.setValid();
        hdr.budget.short_ip = (bit<32>)hdr.ipv6.payload_len - (bit<32>)hdr.tcp.data_offset * 4;
        hdr.budget.short_pkt = std_meta.packet_length - 54 - (bit<32>)hdr.tcp.data_offset * 4;
        transition tcp_syn_room;
    }

    state tcp_syn_room {
        transition select(hdr.budget.short_pkt, hdr.budget.short_ip) {
            (0x80000000 &&& 0x80000000, _): tcp_options_malformed;
            (_, 0x80000000 &&& 0x80000000): tcp_options_malformed;
            default: tcp_syn_options_fit;
        }
    }

    state tcp_syn_options_fit {
        hdr.budget.scale = 0;
        hdr.budget.opt_left = ((bit<16>)hdr.tcp.data_offset - 5) * 4;
        transition select(hdr.tcp.data_offset) {
            6: tcp_opts_4;   7: tcp_opts_8;   8: tcp_opts_12;  9: tcp_opts_16;
            10: tcp_opts_20; 11: tcp_opts_24; 12: tcp_opts_28; 13: tcp_opts_32;
            14: tcp_opts_36; default: tcp_opts_40;
        }
    }

// The lookahead goes into a field of its own width (an expression of a
// lookahead costs BMv2 a temporary per packet), then is moved to the top of
// opts by (40 - n) x 8 bits, in two variable shifts (BMv2 shifts by at most
// 255).
#define TCP_OPTS_STATE(n) \
    state tcp_opts_##n { \
        hdr.budget.look_##n = packet.lookahead<bit<(n * 8)>>(); \
        hdr.budget.opts = (bit<320>)hdr.budget.look_##n; \
        hdr.budget.opt_len = (40 - n) * 4; \
        transition tcp_opts_align; \
    }
    TCP_OPTS_STATE(4)
    TCP_OPTS_STATE(8)
    TCP_OPTS_STATE(12)
    TCP_OPTS_STATE(16)
    TCP_OPTS_STATE(20)
    TCP_OPTS_STATE(24)
    TCP_OPTS_STATE(28)
    TCP_OPTS_STATE(32)
    TCP_OPTS_STATE(36)

    state tcp_opts_40 {
        hdr.budget.opts = packet.lookahead<bit<320>>();
        transition tcp_option_load;
    }

    state tcp_opts_align {
        hdr.budget.opts = hdr.budget.opts << (bit<8>)hdr.budget.opt_len;
        hdr.budget.opts = hdr.budget.opts << (bit<8>)hdr.budget.opt_len;
        transition tcp_option_load;
    }

    // One option per pass: kind at opts[319:312], length at opts[311:304],
    // copied into fields (a select on a slice, or on a field p4c folds back
    // into one, costs BMv2 a temporary per packet: the kind is selected with
    // a mask on opts itself).
    state tcp_option_load {
        hdr.budget.opt_kind = hdr.budget.opts[319:312];
        hdr.budget.opt_len = (bit<16>)hdr.budget.opts[311:304];
        hdr.budget.opt_rem = hdr.budget.opt_left - (bit<16>)hdr.budget.opts[311:304];
        hdr.budget.opt_shift = hdr.budget.opts[303:296];
        transition tcp_option;
    }

#define OPT_KIND(k) (((bit<320>)(k)) << 312) &&& (((bit<320>)0xff) << 312)
    state tcp_option {
        transition select(hdr.budget.opt_left, hdr.budget.opts) {
            (0, _): accept;                         // all walked, no scale: 0
            (_, OPT_KIND(TCP_OPT_EOL)): accept;
            (_, OPT_KIND(TCP_OPT_NOP)): tcp_option_nop;
            (1, _): tcp_options_malformed;           // no room for a length
            default: tcp_option_sized;
        }
    }

    state tcp_option_nop {
        hdr.budget.opts = hdr.budget.opts << 8;
        hdr.budget.opt_left = hdr.budget.opt_left - 1;
        transition tcp_option_load;
    }

    // opt_rem's top bit is set when the length runs past the options.
    state tcp_option_sized {
        transition select(hdr.budget.opt_kind, hdr.budget.opt_len, hdr.budget.opt_rem) {
            (_, 0, _): tcp_options_malformed;
            (_, 1, _): tcp_options_malformed;
            (_, _, 0x8000 &&& 0x8000): tcp_options_malformed;
            (TCP_OPT_WSCALE, 3, _): tcp_option_wscale;
            (TCP_OPT_WSCALE, _, _): tcp_options_malformed;
            default: tcp_option_skip;
        }
    }

    state tcp_option_skip {
        // Two shifts of 4 x length bits each: BMv2 shifts by at most 255.
        hdr.budget.opts = hdr.budget.opts << (bit<8>)(hdr.budget.opt_len << 2);
        hdr.budget.opts = hdr.budget.opts << (bit<8>)(hdr.budget.opt_len << 2);
        hdr.budget.opt_left = hdr.budget.opt_rem;
        transition tcp_option_load;
    }

    // The first window-scale option is the one the stack takes.
    state tcp_option_wscale {
        transition select(hdr.budget.opt_shift) {
            0 &&& 0xf0: tcp_option_wscale_shift;     // 0..15
            default: tcp_option_wscale_max;
        }
    }

    state tcp_option_wscale_shift {
        hdr.budget.scale = hdr.budget.opt_shift;
        transition select(hdr.budget.opt_shift) {
            15: tcp_option_wscale_max;
            default: accept;
        }
    }

    state tcp_option_wscale_max {
        hdr.budget.scale = TCP_WSCALE_MAX;
        transition accept;
    }

    state tcp_options_malformed {
        hdr.budget.setValid();
        hdr.budget.scale = RX_SCALE_UNKNOWN;
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
    IngressRxBudget() rx_budget;

    apply {
        bool parser_ok = std_meta.parser_error == error.NoError;
        bool checksum_ok = std_meta.checksum_error == 0;
        forwarding.apply(hdr, meta, parser_ok, checksum_ok, std_meta.egress_spec);
        if (hdr.tcp.isValid() && !meta.drop) {
            // Bare: the IP datagram is its IP and TCP headers alone.
            bool bare = hdr.ipv4.isValid()
                ? hdr.ipv4.total_len == ((bit<16>)hdr.ipv4.ihl + (bit<16>)hdr.tcp.data_offset) << 2
                : hdr.ipv6.payload_len == (bit<16>)hdr.tcp.data_offset << 2;
            rx_budget.apply(hdr, std_meta.ingress_port, std_meta.ingress_global_timestamp, bare);
            // The handshake's ACK, twice (docs/algorithms.md §8): the two
            // replicas of the port's group, queued together here, before
            // any later packet of the receiver's (its request).
            if (hdr.budget.isValid() && hdr.budget.zero_copy == 1) {
                std_meta.mcast_grp = ZERO_COPY_GROUP_BASE + (bit<16>)std_meta.egress_spec;
            }
        }
    }
}

control P4IncastEgress(inout headers_t hdr,
                       inout local_metadata_t meta,
                       inout standard_metadata_t std_meta) {
    EgressEcnMarker() ecn_marker;

    // RFC 1624 for the window going to 0 (RX_WINDOW_CHECKSUM).
    @hidden action zero_window() {
        hdr.budget.wnd = 0;
        RX_WINDOW_CHECKSUM
        hdr.tcp.window = 0;
    }

    apply {
        // BMv2: enq_qdepth = packets already waiting when this one was
        // enqueued; deq_qdepth = packets left waiting when it was dequeued.
        ecn_marker.apply(hdr, meta, std_meta.egress_port,
                         std_meta.enq_qdepth, std_meta.deq_qdepth);
        if (meta.drop) {
            mark_to_drop(std_meta);
        } else if (std_meta.egress_rid == ZERO_COPY_RID && hdr.budget.isValid()
                   && hdr.budget.zero_copy == 1) {
            zero_window();                 // the copy, the group's second replica
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
