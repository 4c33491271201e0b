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
//   egress parser:    Ethernet + IPv4 (with options) / IPv6 only; for the
//                     handshake ACK's zero-window copy (egress_rid
//                     ZERO_COPY_RID) TCP too, with the checksum's residual
//   egress:           EgressEcnMarker    (depth histogram; OFF / MARK_TAIL on
//                                         enq_qdepth / MARK_FRONT on
//                                         deq_qdepth, K in cells; counters)
//   ingress:          IngressRxBudget    (the receiver's budget, TCP from a
//                                         budget port; docs/algorithms.md §8),
//                     then the handshake ACK to multicast group
//                     ZERO_COPY_GROUP_BASE + egress port (two replicas:
//                     rid 0, then the zero-window copy, rid ZERO_COPY_RID)
//                     instead of the unicast port
//   ingress deparser: TCP checksum for a lowered window (residual + window)
//   egress:           window 0 in the zero-window copy
//   egress deparser:  IPv4 header checksum recomputed with the Checksum extern
//                     (covers both the TTL and the ECN change, with options);
//                     the copy's TCP checksum for window 0 (residual + window)
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
//  - The receiver's budget (p4src/shared/rx_budget.p4): its flow table in
//    RegisterActions, the SYN's window scale from the option layouts Linux
//    and Windows send (no run-time shift in the parser), the TCP checksum in
//    the ingress deparser from the parser's residual (docs/tofino.md).
//  - The handshake ACK's zero-window copy (docs/algorithms.md §8, "The
//    handshake's ACK, twice"): as on v1model the ACK goes to its port's
//    multicast group and egress tells the copy by its egress_rid; here the
//    egress parser reads egress_rid and parses TCP for the copy only (the
//    TCP header of no other packet is parsed in egress), and the egress
//    deparser fixes the copy's TCP checksum from the parser's residual.
// Compiled with p4c 17ade03c's Tofino backend before the receiver's budget:
// 15 s, 4 stages (ingress 2, egress 4), 31 tables, 30 SRAM and 8 TCAM units
// (`make build-tna`); the budget and the zero-window copy have not been
// compiled for Tofino here.
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

// The handshake ACK's zero-window copy (docs/algorithms.md §8, "The
// handshake's ACK, twice"): the ACK leaves by multicast group
// ZERO_COPY_GROUP_BASE (p4src/shared/sizes.p4) + its egress port, one group
// a port, which the controller writes with two replicas to that port: rid 0
// (the ACK as the budget wrote it), then rid ZERO_COPY_RID (the copy, window
// 0 in egress). Group 0 is no group and a port is 9 bits, so the groups are
// base .. base + 511 within MulticastGroupId_t; a unicast packet has
// egress_rid 0, so the copy's rid is not 0.
const bool ZERO_COPY_GROUPS_FIT = static_assert(
    ZERO_COPY_GROUP_BASE >= 1
        && ZERO_COPY_GROUP_BASE + 511 <= (1 << MULTICAST_GROUP_ID_WIDTH) - 1,
    "ZERO_COPY_GROUP_BASE + port must be a multicast group (1..65535)");
const bool ZERO_COPY_RID_NOT_UNICAST = static_assert(
    ZERO_COPY_RID != 0, "ZERO_COPY_RID must differ from a unicast packet's egress_rid 0");

// The receiver's budget (p4src/shared/rx_budget.p4). Ticks: the nanosecond
// global timestamp >> 20, 1.048576 ms. The TCP checksum is not touched in
// the pipeline: the ingress parser deposits the checksum's residual without
// the window and the checksum (tcp_residual), and the ingress deparser adds
// the new window to it when hdr.budget.rewritten is set — RFC 1624 eqn. 3 in
// the checksum engine.
#define RX_BUDGET_TICKS(ts) ((bit<32>)(ts)[47:20])
#define RX_WINDOW_CHECKSUM

// A flow slot: its signature (0: empty) and the epoch it was last seen in
// (0: opened by a SYN, not yet counted), one 64-bit register pair so that
// one stateful ALU finds, opens, closes or refuses the slot.
struct flow_slot_t {
    bit<32> sig;
    bit<32> epoch;
}

// What the slot's actions return besides a slot's last epoch (an epoch is
// >= 3: its low bits, epoch_ticks - 1 with epoch_ticks >= 4, are all ones).
const bit<32> SLOT_CLAIMED   = 0;   // a SYN took a slot of no counted flow
const bit<32> SLOT_UNTRACKED = 1;   // not this flow's slot: left alone

// RxBudgetFlows for Tofino: the rule of docs/algorithms.md §8 in registers,
// one access per register per packet, in stages:
//   1  epoch |= ticks (set_rx_budget's action loaded the rest); a SYN with
//      ACK clear has RX_OPENED_BY_RX set in the scale it will store
//      (IngressRxBudget's opened_by_rx, before this control)
//   2  epoch_prev (wrapping) and epoch_old (saturating) by subtraction;
//      CRC-32 of the key
//   3  budget_flow_slot0 (pair), way 0, one of three actions by the packet's
//      flags: a SYN opens (own / claim / refused; epoch 0: not counted until
//      the flow's next packet), a FIN or RST empties the flow's slot, any
//      other packet refreshes it; each returns the last epoch or SLOT_*
//   4  budget_flow_slot1 (pair), way 1: the same, when way 0 returned
//      SLOT_UNTRACKED (not the flow's, and for a SYN held by a counted flow)
//   5  budget_flow_scale0 or budget_flow_scale1, the way's: written by a SYN
//      (bits 3:0 the scale, bit 4 RX_OPENED_BY_RX), else read;
//      budget_port_epoch: returns the port's epoch, writes this one
//   6  budget_port_cur: + dcur (1, 0 or -1), or restarted at this packet's
//      flow (returning the last epoch's count)
//   7  budget_port_prev: + dprev (0 or -1), or written with that count (or
//      0), less one if the flow leaves it
// Comparisons are of a field with a constant, or equalities, or inside a
// stateful ALU (register value against a field). IngressRxBudget decides
// the zero-window copy after stage 5 (it needs fresh and the scale), and
// P4IncastIngress sends the ACK to its port's multicast group on it (one
// gateway, one action), beside stages 6 and 7.
control RxBudgetFlows(inout headers_t hdr, in port_t port) {
    // Its actions are @hidden: target-specific, they stay out of the
    // P4Runtime names both targets share (tests/tna).
    Hash<bit<32>>(HashAlgorithm_t.CRC32) flow_hash;
    Register<bit<32>, port_t>(PORT_STATS_SIZE) budget_port_epoch;
    Register<bit<32>, port_t>(PORT_STATS_SIZE) budget_port_cur;
    Register<bit<32>, port_t>(PORT_STATS_SIZE) budget_port_prev;

    // One way of the flow table (W: 0 or 1): its slot register pair and its
    // scales, and their actions.
    // A SYN: its own slot (any epoch) gets epoch 0 (open, not yet counted)
    // and returns the last epoch; a slot of no counted flow (epoch at or
    // before epoch_old, 0 included) is claimed; a counted flow's slot
    // refuses. Any other packet: the flow's own slot gets this epoch and
    // returns the last one (0: counted from this packet, the handshake's
    // end). A FIN or RST: the flow's own slot empties (signature and epoch 0).
#define FLOW_WAY(W) \
    Register<flow_slot_t, bit<FLOW_SLOT_BITS>>(FLOW_SLOTS) budget_flow_slot##W; \
    Register<bit<8>, bit<FLOW_SLOT_BITS>>(FLOW_SLOTS) budget_flow_scale##W; \
    RegisterAction<flow_slot_t, bit<FLOW_SLOT_BITS>, bit<32>>(budget_flow_slot##W) open_slot##W = { \
        void apply(inout flow_slot_t v, out bit<32> rv) { \
            if (v.sig == hdr.budget.sig) { \
                rv = v.epoch; \
                v.epoch = 0; \
            } else if (v.epoch <= hdr.budget.epoch_old) { \
                v.sig = hdr.budget.sig; \
                v.epoch = 0; \
                rv = SLOT_CLAIMED; \
            } else { \
                rv = SLOT_UNTRACKED; \
            } \
        } \
    }; \
    RegisterAction<flow_slot_t, bit<FLOW_SLOT_BITS>, bit<32>>(budget_flow_slot##W) see_slot##W = { \
        void apply(inout flow_slot_t v, out bit<32> rv) { \
            if (v.sig == hdr.budget.sig) { \
                rv = v.epoch; \
                v.epoch = hdr.budget.epoch; \
            } else { \
                rv = SLOT_UNTRACKED; \
            } \
        } \
    }; \
    RegisterAction<flow_slot_t, bit<FLOW_SLOT_BITS>, bit<32>>(budget_flow_slot##W) close_slot##W = { \
        void apply(inout flow_slot_t v, out bit<32> rv) { \
            if (v.sig == hdr.budget.sig) { \
                rv = v.epoch; \
                v.sig = 0; \
                v.epoch = 0; \
            } else { \
                rv = SLOT_UNTRACKED; \
            } \
        } \
    }; \
    RegisterAction<bit<8>, bit<FLOW_SLOT_BITS>, bit<8>>(budget_flow_scale##W) write_scale##W = { \
        void apply(inout bit<8> v, out bit<8> rv) { \
            v = hdr.budget.scale; \
            rv = v; \
        } \
    }; \
    RegisterAction<bit<8>, bit<FLOW_SLOT_BITS>, bit<8>>(budget_flow_scale##W) read_scale##W = { \
        void apply(inout bit<8> v, out bit<8> rv) { \
            rv = v; \
        } \
    };
    FLOW_WAY(0)
    FLOW_WAY(1)

    RegisterAction<bit<32>, port_t, bit<32>>(budget_port_epoch) swap_port_epoch = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v;
            v = hdr.budget.epoch;
        }
    };
    // Same epoch: the flow's change to each count.
    RegisterAction<bit<32>, port_t, bit<32>>(budget_port_cur) add_cur = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = v + hdr.budget.dcur;
            rv = v;
        }
    };
    RegisterAction<bit<32>, port_t, bit<32>>(budget_port_prev) add_prev = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = v + hdr.budget.dprev;
            rv = v;
        }
    };
    // A new epoch: return the count of the last one and start at this
    // packet's flow; prev becomes that count (or 0), less the flow if it
    // leaves it.
    RegisterAction<bit<32>, port_t, bit<32>>(budget_port_cur) restart_cur = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v;
            v = (bit<32>)hdr.budget.counted;
        }
    };
    RegisterAction<bit<32>, port_t, bit<32>>(budget_port_prev) write_prev = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = hdr.budget.prev;
            rv = v;
        }
    };
    RegisterAction<bit<32>, port_t, bit<32>>(budget_port_prev) write_prev_less = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = hdr.budget.prev - 1;
            rv = v;
        }
    };

    @hidden action load_epochs() {
        hdr.budget.epoch_prev = hdr.budget.epoch - hdr.budget.epoch_prev;  // odd: never 0 (closed)
        hdr.budget.epoch_old = hdr.budget.epoch |-| hdr.budget.epoch_old;
    }
    @hidden action hash_v4() {
        hdr.budget.sig = flow_hash.get({ (bit<96>)0, hdr.ipv4.src_addr,
                                         (bit<96>)0, hdr.ipv4.dst_addr,
                                         hdr.tcp.src_port, hdr.tcp.dst_port });
    }
    @hidden action hash_v6() {
        hdr.budget.sig = flow_hash.get({ hdr.ipv6.src_addr, hdr.ipv6.dst_addr,
                                         hdr.tcp.src_port, hdr.tcp.dst_port });
    }
    @hidden action load_slot() {
        hdr.budget.slot = hdr.budget.sig & (FLOW_SLOTS - 1);
        hdr.budget.slot1 = (hdr.budget.sig >> FLOW_SLOT_BITS) & (FLOW_SLOTS - 1);
        hdr.budget.sig = hdr.budget.sig | 1;
    }

    apply {
        load_epochs();
        if (hdr.ipv4.isValid()) {
            hash_v4();
        } else {
            hash_v6();
        }
        load_slot();
        bool closing = (hdr.tcp.flags & (TCP_FLAG_FIN | TCP_FLAG_RST)) != 0;
        bool syn = (hdr.tcp.flags & TCP_FLAG_SYN) != 0;
        // Way 0, then way 1 when way 0 is not the flow's (v1model's order).
        bit<1> way = 0;
        if (closing) {
            hdr.budget.slot_epoch = close_slot0.execute((bit<FLOW_SLOT_BITS>)hdr.budget.slot);
        } else if (syn) {
            hdr.budget.slot_epoch = open_slot0.execute((bit<FLOW_SLOT_BITS>)hdr.budget.slot);
        } else {
            hdr.budget.slot_epoch = see_slot0.execute((bit<FLOW_SLOT_BITS>)hdr.budget.slot);
        }
        if (hdr.budget.slot_epoch == SLOT_UNTRACKED) {
            way = 1;
            if (closing) {
                hdr.budget.slot_epoch = close_slot1.execute((bit<FLOW_SLOT_BITS>)hdr.budget.slot1);
            } else if (syn) {
                hdr.budget.slot_epoch = open_slot1.execute((bit<FLOW_SLOT_BITS>)hdr.budget.slot1);
            } else {
                hdr.budget.slot_epoch = see_slot1.execute((bit<FLOW_SLOT_BITS>)hdr.budget.slot1);
            }
        }
        hdr.budget.tracked = 1;
        hdr.budget.counted = 0;
        hdr.budget.fresh = 0;
        hdr.budget.dcur = 0;
        hdr.budget.dprev = 0;
        if (hdr.budget.slot_epoch == SLOT_UNTRACKED) {
            hdr.budget.tracked = 0;
        } else {
            // Where the flow was counted before this packet: cur (last seen
            // in this epoch), prev (in the one before), or nowhere. A FIN or
            // RST leaves the count, and so does a SYN (a new handshake).
            if (closing || syn) {
                if (hdr.budget.slot_epoch == hdr.budget.epoch) {
                    hdr.budget.dcur = 0xffffffff;
                } else if (hdr.budget.slot_epoch == hdr.budget.epoch_prev) {
                    hdr.budget.dprev = 0xffffffff;
                }
            } else if (hdr.budget.slot_epoch != hdr.budget.epoch) {
                hdr.budget.counted = 1;      // first packet of the flow in this epoch
                hdr.budget.dcur = 1;
                if (hdr.budget.slot_epoch == 0) {
                    hdr.budget.fresh = 1;    // ... ending its handshake
                }
                if (hdr.budget.slot_epoch == hdr.budget.epoch_prev) {
                    hdr.budget.dprev = 0xffffffff;   // ... moving from prev
                }
            }
            if (way == 0) {
                if (syn) {
                    write_scale0.execute((bit<FLOW_SLOT_BITS>)hdr.budget.slot);
                } else {
                    hdr.budget.scale = read_scale0.execute((bit<FLOW_SLOT_BITS>)hdr.budget.slot);
                }
            } else {
                if (syn) {
                    write_scale1.execute((bit<FLOW_SLOT_BITS>)hdr.budget.slot1);
                } else {
                    hdr.budget.scale = read_scale1.execute((bit<FLOW_SLOT_BITS>)hdr.budget.slot1);
                }
            }
        }
        // Every packet of the port rolls its epoch, so the count is current
        // as of the port's last packet; only a tracked one changes it (an
        // untracked one's dcur, dprev and counted are 0).
        hdr.budget.port_epoch = swap_port_epoch.execute(port);
        if (hdr.budget.port_epoch == hdr.budget.epoch) {
            hdr.budget.cur = add_cur.execute(port);
            hdr.budget.prev = add_prev.execute(port);
        } else {
            // A new epoch: the last count is the previous epoch's if the
            // last epoch was the previous one.
            hdr.budget.prev = restart_cur.execute(port);
            if (hdr.budget.port_epoch != hdr.budget.epoch_prev) {
                hdr.budget.prev = 0;
            }
            if (hdr.budget.dprev == 0) {
                write_prev.execute(port);
            } else {
                hdr.budget.prev = write_prev_less.execute(port);
            }
            hdr.budget.cur = (bit<32>)hdr.budget.counted;
        }
    }
}

#include "../shared/rx_budget.p4"

// Histogram bucket = enq_qdepth >> HIST_DEPTH_SHIFT, i.e. 16 cells (1280 bytes
// on Tofino 1) per bucket; bucket HIST_BUCKETS - 1 holds everything from
// 127 * 16 cells (162560 bytes) up. controller/units.py has the same value.
#define HIST_DEPTH_SHIFT 4

// Ingress-only metadata: the shared part plus what v1model gets from
// standard_metadata (parser_error, checksum_error).
struct ingress_metadata_t {
    local_metadata_t local;           // drop decision (p4src/shared/headers.p4)
    bit<16>          tcp_residual;    // TCP checksum without its window and itself
    bool             malformed;       // bad IPv4 version/IHL or IPv6 version
    bool             ipv4_checksum_err; // IPv4 header checksum wrong
    // The zero-window copy (P4IncastIngress): is this a pure ACK without
    // payload.
    bit<16>          tcp_seg_len;     // the IP payload, bytes: TCP header + data
    bit<16>          ip_hdr_len;      // IPv4 header bytes (ihl * 4); 0 for IPv6
    bit<16>          tcp_hdr_len;     // TCP header bytes (data_offset * 4)
    bool             bare;            // TCP without data (IngressRxBudget's bare)
}

// Nothing is bridged from ingress: the egress parser fills the shared part
// (drop, ecn) as the v1model parser does, and tells the zero-window copy by
// its replication id.
struct egress_metadata_t {
    local_metadata_t local;           // + hist_index, this packet's histogram cell
    bit<1>           zero_copy;       // the zero-window copy (egress_rid == ZERO_COPY_RID)
    bit<16>          tcp_residual;    // the copy's TCP checksum without its window and itself
}

// P4IncastIngressParser: intrinsic and port metadata, then Ethernet, IPv4
// (options as varbit) or IPv6, then TCP/UDP as on v1model. Verifies the IPv4
// header checksum (options included) in the parser's checksum engine.
parser P4IncastIngressParser(packet_in pkt,
                             out headers_t hdr,
                             out ingress_metadata_t md,
                             out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ipv4_checksum;
    Checksum() tcp_checksum;

    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        md.local.drop = false;
        md.malformed = false;
        md.ipv4_checksum_err = false;
        md.tcp_residual = 0;
        md.bare = false;
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

    // The checksum's residual for the receiver's budget (the ingress
    // deparser adds the new window back), then a SYN's window scale.
    state parse_tcp {
        pkt.extract(hdr.tcp);
        tcp_checksum.subtract({hdr.tcp.window, hdr.tcp.checksum});
        tcp_checksum.subtract_all_and_deposit(md.tcp_residual);
        transition select(hdr.tcp.flags, hdr.tcp.data_offset) {
            (TCP_FLAG_SYN &&& TCP_FLAG_SYN, 5): tcp_syn_no_options;
            (TCP_FLAG_SYN &&& TCP_FLAG_SYN, 7): tcp_syn_options_7;
            (TCP_FLAG_SYN &&& TCP_FLAG_SYN, 8): tcp_syn_options_8;
            (TCP_FLAG_SYN &&& TCP_FLAG_SYN, 10): tcp_syn_options_10;
            (TCP_FLAG_SYN &&& TCP_FLAG_SYN, _): tcp_syn_other_options;
            default: accept;
        }
    }

    // Tofino's parser cannot shift by a run-time amount, and what it extracts
    // the deparser must emit in order, so it does not walk the options as
    // v1model's parser does: it reads them with one lookahead and knows the
    // layouts stacks send with a window-scale option — Linux's (MSS, SACK
    // permitted, timestamps, NOP, WS: 20 bytes; without SACK, NOP NOP; without
    // timestamps: 12 bytes; neither: 8) and Windows' (MSS, NOP, WS, NOP NOP,
    // SACK permitted: 12 bytes). A SYN with no options has scale 0; any
    // other layout, malformed ones included (a data offset below 5, an
    // option of length 0 or 1, a window scale of another length), leaves
    // the scale unknown. A lookahead past the frame's end stops the parser
    // with PARSER_ERROR_PARTIAL_HDR; ingress forwards that SYN unchanged
    // with its scale unknown.
    state tcp_syn_no_options {
        hdr.budget.setValid();
        hdr.budget.scale = 0;
        transition accept;
    }

    state tcp_syn_other_options {
        hdr.budget.setValid();
        hdr.budget.scale = RX_SCALE_UNKNOWN;
        transition accept;
    }

    // MSS (02 04 xx xx), NOP, WS (03 03 s)
    state tcp_syn_options_7 {
        hdr.budget.setValid();
        hdr.budget.scale = RX_SCALE_UNKNOWN;
        transition select(pkt.lookahead<bit<64>>()) {
            64w0x0204000001030300 &&& 64w0xffff0000ffffff00: tcp_syn_ws_at_7;
            default: accept;
        }
    }

    state tcp_syn_ws_at_7 {
        hdr.budget.scale = pkt.lookahead<bit<64>>()[7:0];
        transition select(pkt.lookahead<bit<64>>()[7:0]) {
            0 .. 14: accept;
            default: tcp_syn_ws_max;
        }
    }

    // Linux without timestamps: MSS, SACK-permitted (or NOP NOP), NOP, WS;
    // Windows: MSS, NOP, WS, NOP, NOP, SACK-permitted.
    state tcp_syn_options_8 {
        hdr.budget.setValid();
        hdr.budget.scale = RX_SCALE_UNKNOWN;
        transition select(pkt.lookahead<bit<96>>()) {
            96w0x020400000402010103030300 &&& 96w0xffff0000ffffffffffffff00: tcp_syn_ws_at_12;
            96w0x020400000101010103030300 &&& 96w0xffff0000ffffffffffffff00: tcp_syn_ws_at_12;
            96w0x020400000103030001010402 &&& 96w0xffff0000ffffff00ffffffff: tcp_syn_ws_at_8;
            default: accept;
        }
    }

    state tcp_syn_ws_at_12 {
        hdr.budget.scale = pkt.lookahead<bit<96>>()[7:0];
        transition select(pkt.lookahead<bit<96>>()[7:0]) {
            0 .. 14: accept;
            default: tcp_syn_ws_max;
        }
    }

    state tcp_syn_ws_at_8 {
        hdr.budget.scale = pkt.lookahead<bit<96>>()[39:32];
        transition select(pkt.lookahead<bit<96>>()[39:32]) {
            0 .. 14: accept;
            default: tcp_syn_ws_max;
        }
    }

    // Linux: MSS, SACK-permitted (or NOP NOP), timestamps, NOP, WS.
    state tcp_syn_options_10 {
        hdr.budget.setValid();
        hdr.budget.scale = RX_SCALE_UNKNOWN;
        transition select(pkt.lookahead<bit<160>>()) {
            160w0x020400000402080a000000000000000001030300
                &&& 160w0xffff0000ffffffff0000000000000000ffffff00: tcp_syn_ws_at_20;
            160w0x020400000101080a000000000000000001030300
                &&& 160w0xffff0000ffffffff0000000000000000ffffff00: tcp_syn_ws_at_20;
            default: accept;
        }
    }

    state tcp_syn_ws_at_20 {
        hdr.budget.scale = pkt.lookahead<bit<160>>()[7:0];
        transition select(pkt.lookahead<bit<160>>()[7:0]) {
            0 .. 14: accept;
            default: tcp_syn_ws_max;
        }
    }

    // A shift above 14 counts as 14 (RFC 7323 §2.3), as on v1model.
    state tcp_syn_ws_max {
        hdr.budget.scale = TCP_WSCALE_MAX;
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
    IngressRxBudget() rx_budget;

    // The lengths that say whether a TCP segment carries data: the IP
    // payload (IPv4: total_len less ihl * 4; IPv6: payload_len, extension
    // headers not walked) against the TCP header (data_offset * 4). A
    // Tofino action writes a field once, so the IPv4 header comes off in a
    // second action.
    @hidden action load_lengths_v4() {
        md.tcp_seg_len = hdr.ipv4.total_len;
        md.ip_hdr_len = (bit<16>)(hdr.ipv4.ihl ++ 2w0);
        md.tcp_hdr_len = (bit<16>)(hdr.tcp.data_offset ++ 2w0);
    }
    @hidden action load_lengths_v6() {
        md.tcp_seg_len = hdr.ipv6.payload_len;
        md.ip_hdr_len = 0;
        md.tcp_hdr_len = (bit<16>)(hdr.tcp.data_offset ++ 2w0);
    }
    @hidden action less_ip_header() {
        md.tcp_seg_len = md.tcp_seg_len - md.ip_hdr_len;
    }

    apply {
        port_t egress_port;
        // A bare segment, without data (the budget's zero-window copy):
        // from the parser's fields alone, so its three steps (the lengths,
        // the IP header off, the test) take early stages beside forwarding
        // and the flow table, not the ACK path's last ones.
        if (hdr.tcp.isValid()) {
            if (hdr.ipv4.isValid()) {
                load_lengths_v4();
            } else {
                load_lengths_v6();
            }
            less_ip_header();
            if (md.tcp_seg_len == md.tcp_hdr_len) {
                md.bare = true;
            }
        }
        bool parser_ok = ig_prsr_md.parser_err == PARSER_ERROR_OK && !md.malformed;
        // A SYN whose options run past the frame: the parser stopped in the
        // options' lookahead, after the TCP header (the only read past it).
        // The SYN is forwarded as it came, its scale unknown (docs/algorithms.md
        // §8), not dropped as a truncated header.
        if (ig_prsr_md.parser_err == PARSER_ERROR_PARTIAL_HDR && !md.malformed
                && hdr.tcp.isValid() && (hdr.tcp.flags & TCP_FLAG_SYN) != 0) {
            parser_ok = true;
            hdr.budget.setValid();
            hdr.budget.scale = RX_SCALE_UNKNOWN;
        }
        forwarding.apply(hdr, md.local, parser_ok,
                         !md.ipv4_checksum_err,
                         egress_port);
        if (hdr.tcp.isValid() && !md.local.drop) {
            rx_budget.apply(hdr, ig_intr_md.ingress_port, ig_prsr_md.global_tstamp, md.bare);
        }
        // A TCP packet kept here went through rx_budget, which writes
        // zero_copy of a valid hdr.budget (not_held for a SYN from a port
        // without a budget); a dropped one may not, so drop comes first.
        if (md.local.drop) {
            ig_dprsr_md.drop_ctl = 1;
        } else if (hdr.budget.isValid() && hdr.budget.zero_copy == 1) {
            // The handshake's ACK of a connection the receiver opened goes
            // out twice (docs/algorithms.md §8, "The handshake's ACK,
            // twice"): the port's group has two replicas to the port, rid 0
            // as the budget left it (two segments), then rid ZERO_COPY_RID,
            // to which egress gives window 0. Both are made when this
            // packet leaves ingress, before any later packet of the port
            // (on Tofino as we read its traffic manager; docs/tofino.md).
            // No unicast port: it would be a third copy. The budget decides
            // (zero_copy, after the scale's stage, RxBudgetFlows 5); the
            // group is set beside the port's counts.
            ig_tm_md.mcast_grp_a = ZERO_COPY_GROUP_BASE + (MulticastGroupId_t)egress_port;
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
    Checksum() tcp_checksum;

    apply {
        // The receiver's budget lowered the window: RFC 1624 on the residual.
        // Both replicas of the handshake's ACK carry this checksum.
        if (hdr.budget.rewritten == 1) {
            hdr.tcp.checksum = tcp_checksum.update({hdr.tcp.window, md.tcp_residual});
        }
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv4_options);
        pkt.emit(hdr.ipv6);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
    }
}

// P4IncastEgressParser: only what egress reads or rewrites (the IP header and
// its options, for the checksum); TCP/UDP stay in the payload untouched,
// except in the zero-window copy, whose TCP header egress rewrites. The
// intrinsic metadata's egress_rid says which: ZERO_COPY_RID is the copy
// (the second replica of its port's group), anything else (0: unicast, or
// the group's first replica) is not. Ingress already dropped malformed
// packets, and sends only a TCP ACK to a zero-copy group.
parser P4IncastEgressParser(packet_in pkt,
                            out headers_t hdr,
                            out egress_metadata_t md,
                            out egress_intrinsic_metadata_t eg_intr_md) {
    Checksum() tcp_checksum;

    state start {
        pkt.extract(eg_intr_md);
        md.local.drop = false;
        md.local.ecn = ECN_NOT_ECT;
        md.zero_copy = 0;
        md.tcp_residual = 0;
        transition select(eg_intr_md.egress_rid) {
            ZERO_COPY_RID: zero_copy_ethernet;
            default: parse_ethernet;
        }
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

    // The zero-window copy: the packet as the ingress deparser emitted it,
    // down to TCP (ingress parsed TCP, so the IPv4 datagram is a first
    // fragment and IPv6's next header is TCP).
    state zero_copy_ethernet {
        md.zero_copy = 1;
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: zero_copy_ipv4;
            ETHERTYPE_IPV6: zero_copy_ipv6;
            default: accept;
        }
    }

    state zero_copy_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl) {
            5: zero_copy_tcp;
            default: zero_copy_ipv4_options;
        }
    }

    state zero_copy_ipv4_options {
        pkt.extract(hdr.ipv4_options, ((bit<32>)hdr.ipv4.ihl - 5) * 32);
        transition zero_copy_tcp;
    }

    state zero_copy_ipv6 {
        pkt.extract(hdr.ipv6);
        transition zero_copy_tcp;
    }

    // As the ingress parser: the residual without the window and the
    // checksum, to which the egress deparser adds window 0.
    state zero_copy_tcp {
        pkt.extract(hdr.tcp);
        tcp_checksum.subtract({hdr.tcp.window, hdr.tcp.checksum});
        tcp_checksum.subtract_all_and_deposit(md.tcp_residual);
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
        // The handshake ACK's zero-window copy (P4IncastIngress): window 0,
        // the egress deparser fixes the checksum. It is otherwise a packet
        // of the port like any other: the marker above counts it in the
        // histogram and the port's counters, and may mark or drop it (a
        // lost copy leaves the peer with the two segments, as before the
        // copy existed).
        if (md.zero_copy == 1) {
            hdr.tcp.window = 0;
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
    Checksum() tcp_checksum;

    apply {
        // Unconditional, as in switch.p4: the engine sums only valid headers'
        // fields and the result is emitted only with a valid hdr.ipv4.
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
            hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
            hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
            hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4_options.options });
        // The zero-window copy: RFC 1624 on the egress parser's residual,
        // as the ingress deparser does for a lowered window.
        if (md.zero_copy == 1) {
            hdr.tcp.checksum = tcp_checksum.update({hdr.tcp.window, md.tcp_residual});
        }
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv4_options);
        pkt.emit(hdr.ipv6);
        pkt.emit(hdr.tcp);          // the zero-window copy's only
    }
}

Pipeline(P4IncastIngressParser(),
         P4IncastIngress(),
         P4IncastIngressDeparser(),
         P4IncastEgressParser(),
         P4IncastEgress(),
         P4IncastEgressDeparser()) pipe;

Switch(pipe) main;
