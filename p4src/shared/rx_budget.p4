// p4-incast: the receiver's budget held by the ToR (docs/algorithms.md §8),
// written once against core.p4 only.
//
// For a port whose receiver's budget is on, every TCP packet FROM that port
// (the receiver's SYNs, ACKs, FINs and RSTs) finds its flow's slot: a SYN
// opens the flow, its next packet (the handshake's end) counts it, a FIN or
// RST closes it, and the port's count N of counted flows (each until it
// closes or has been idle for one to two epochs) is kept exact; an ACK of a
// counted flow whose window scale is known gets its window lowered to at
// most the flow's share of the port's budget. The controller divides, not the switch: budget_share holds the
// share per (port, N) for the N above one segment; every other N gets the
// port's floor, one segment.
//
// The target wrapper must define, before including this file:
//   PORT_COUNTER(size)       as for ecn_marker.p4
//   RX_BUDGET_TICKS(ts)      the target's ingress timestamp as bit<32> ticks
//                            of about a millisecond
//   control RxBudgetFlows(inout headers_t hdr, in port_t port)
//                            the flow table and the port's counts, in the
//                            target's registers: from hdr.budget's epoch
//                            fields (set by set_rx_budget, epoch still
//                            without the time), sets epoch, epoch_prev,
//                            epoch_old, slot, sig, tracked, counted, fresh,
//                            the flow's scale as its slot keeps it (a
//                            SYN's from the parser, with RX_OPENED_BY_RX),
//                            cur and prev after this packet (N = cur + prev)
//   RX_WINDOW_CHECKSUM       statements that fix hdr.tcp.checksum for the
//                            window going from hdr.tcp.window to
//                            hdr.budget.wnd, run before the window is written
//                            (v1model: RFC 1624 in the action; TNA: nothing,
//                            its ingress deparser does it)
#ifndef P4INCAST_RX_BUDGET_P4
#define P4INCAST_RX_BUDGET_P4

#include "defines.p4"
#include "sizes.p4"
#include "headers.p4"

// The share in window units of scale s, rounded up so that a flow keeps at
// least the whole segments of its share (docs/algorithms.md §8, "Whole
// segments"). One action per scale: a Tofino action shifts by a constant.
#define RX_WINDOW_ACTION(s) \
    action window_##s() { \
        hdr.budget.wnd32 = (hdr.budget.share + ((32w1 << s) - 1)) >> s; \
    }

// IngressRxBudget: runs in ingress after IngressForwarding, for TCP packets
// that are not dropped; reads the ingress port (the receiver's port), the
// parser's hdr.budget of a SYN, and whether the segment is bare (no payload:
// the target works it out from the IP and TCP lengths).
control IngressRxBudget(inout headers_t hdr,
                        in    port_t    port,
                        in    bit<48>   timestamp,
                        in    bool      bare) {
    PORT_COUNTER(PORT_STATS_SIZE) budget_ack_stats;            // ACKs held to the share
    PORT_COUNTER(PORT_STATS_SIZE) budget_rewritten_stats;      // of those, window lowered
    PORT_COUNTER(PORT_STATS_SIZE) budget_unknown_scale_stats;  // ACKs of flows of unknown scale
    PORT_COUNTER(PORT_STATS_SIZE) budget_untracked_stats;      // packets of flows not open in a slot
    PORT_COUNTER(PORT_STATS_SIZE) budget_flow_stats;           // counted flows, once per epoch each

    RxBudgetFlows() flows;

    // floor_bytes: one segment, the share when N has no budget_share entry;
    // epoch_ticks: the epoch's length, a power of two >= 4 ticks (the
    // controller checks). The epoch is epoch_ticks - 1 with the time ORed in
    // by the flow table: its low bits all ones, so never 0.
    action set_rx_budget(bit<32> floor_bytes, bit<32> epoch_ticks) {
        hdr.budget.setValid();
        hdr.budget.floor = floor_bytes;
        hdr.budget.rewritten = 0;
        hdr.budget.zero_copy = 0;
        hdr.budget.epoch = RX_BUDGET_TICKS(timestamp) | (epoch_ticks - 1);
        hdr.budget.epoch_prev = epoch_ticks;
        hdr.budget.epoch_old = epoch_ticks << 1;
    }

    table rx_budget {
        key = {
            port : exact @name("port");
        }
        actions = {
            set_rx_budget;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = RX_BUDGET_SIZE;
    }

    action set_share(bit<32> share_bytes) {
        hdr.budget.share = share_bytes;
    }
    action share_floor() {
        hdr.budget.share = hdr.budget.floor;
    }
    // The ACK that ends a handshake: two segments (docs/algorithms.md §8,
    // "The handshake's ACK").
    action share_handshake() {
        hdr.budget.share = hdr.budget.floor << 1;
    }

    table budget_share {
        key = {
            port             : exact @name("port");
            hdr.budget.flows : exact @name("flows");
        }
        actions = {
            set_share;
            @defaultonly share_floor;
        }
        const default_action = share_floor();
        size = BUDGET_SHARE_SIZE;
    }

    RX_WINDOW_ACTION(0)
    RX_WINDOW_ACTION(1)
    RX_WINDOW_ACTION(2)
    RX_WINDOW_ACTION(3)
    RX_WINDOW_ACTION(4)
    RX_WINDOW_ACTION(5)
    RX_WINDOW_ACTION(6)
    RX_WINDOW_ACTION(7)
    RX_WINDOW_ACTION(8)
    RX_WINDOW_ACTION(9)
    RX_WINDOW_ACTION(10)
    RX_WINDOW_ACTION(11)
    RX_WINDOW_ACTION(12)
    RX_WINDOW_ACTION(13)
    RX_WINDOW_ACTION(14)

    // scale -> the share in its window units. Fixed: the controller writes
    // nothing here. The flow table only stores shifts 0..14 in the scale's
    // low four bits (bit 4: RX_OPENED_BY_RX).
    table budget_window {
        key = {
            hdr.budget.scale[3:0] : exact @name("scale");
        }
        actions = {
            window_0; window_1; window_2; window_3; window_4;
            window_5; window_6; window_7; window_8; window_9;
            window_10; window_11; window_12; window_13; window_14;
        }
        const entries = {
            0 : window_0();   1 : window_1();   2 : window_2();   3 : window_3();
            4 : window_4();   5 : window_5();   6 : window_6();   7 : window_7();
            8 : window_8();   9 : window_9();   10 : window_10(); 11 : window_11();
            12 : window_12(); 13 : window_13(); 14 : window_14();
        }
    }

    // A SYN without ACK: the receiver opens the flow (with ACK, its SYN-ACK,
    // it accepts); the flow table keeps the bit with the scale.
    action opened_by_rx() {
        hdr.budget.scale = hdr.budget.scale | RX_OPENED_BY_RX;
    }
    action count_untracked() {
        budget_untracked_stats.count(port);
    }
    action count_unknown_scale() {
        budget_unknown_scale_stats.count(port);
    }
    action count_flow() {
        budget_flow_stats.count(port);
    }
    // N: the counted flows, last seen in this epoch or the previous one.
    action load_flows() {
        hdr.budget.flows = hdr.budget.cur[15:0] + hdr.budget.prev[15:0];
    }
    action window_max() {
        hdr.budget.wnd = 0xffff;
    }
    action window_low() {
        hdr.budget.wnd = hdr.budget.wnd32[15:0];
    }
    action load_window_gap() {
        hdr.budget.gap = hdr.tcp.window |-| hdr.budget.wnd;
    }
    action within_share() {
        budget_ack_stats.count(port);
    }
    // RFC 1624 eqn. 3 for the one changed word (RX_WINDOW_CHECKSUM), then the
    // window.
    action rewrite_window() {
        RX_WINDOW_CHECKSUM
        hdr.tcp.window = hdr.budget.wnd;
        hdr.budget.rewritten = 1;
        budget_ack_stats.count(port);
        budget_rewritten_stats.count(port);
    }
    // The handshake's ACK of a flow the receiver opened, without payload,
    // leaves twice: as it is, then a copy with window 0 (the target's
    // egress makes the copy; docs/algorithms.md §8, "The handshake's ACK,
    // twice").
    action copy_zero() {
        hdr.budget.zero_copy = 1;
    }
    // The parser made hdr.budget valid (a SYN) on a port without a budget:
    // what the deparser and egress read says the budget did nothing (header
    // fields are not reset between packets; set_rx_budget clears them on a
    // budget port).
    action not_held() {
        hdr.budget.rewritten = 0;
        hdr.budget.zero_copy = 0;
    }

    apply {
        if (rx_budget.apply().hit) {
            if ((hdr.tcp.flags & (TCP_FLAG_SYN | TCP_FLAG_ACK)) == TCP_FLAG_SYN) {
                opened_by_rx();
            }
            flows.apply(hdr, port);
            if (hdr.budget.tracked == 0) {
                count_untracked();                 // no slot of its flow, or fail-open: forwarded as it came
            } else {
                if (hdr.budget.counted == 1) {
                    count_flow();
                }
                // Only an ACK (ACK set, none of SYN, FIN, RST) carries a
                // window the budget lowers; a flow of unknown scale is left
                // alone.
                if ((hdr.tcp.flags & (TCP_FLAG_SYN | TCP_FLAG_FIN | TCP_FLAG_RST
                                      | TCP_FLAG_ACK)) == TCP_FLAG_ACK) {
                    if (hdr.budget.scale[3:0] == RX_SCALE_UNKNOWN[3:0]) {
                        count_unknown_scale();
                    } else {
                        load_flows();
                        // The ACK that ends the handshake offers two segments:
                        // a peer sizes its segments by the largest window it
                        // was offered, and takes a smaller one at the same
                        // sequence (the request after it) only if it is 0 —
                        // so, where the receiver opened the flow, a copy with
                        // window 0 follows it (docs/algorithms.md §8, "The
                        // handshake's ACK", "... twice").
                        if (hdr.budget.fresh == 1) {
                            share_handshake();
                            if (hdr.budget.scale[4:4] == 1 && bare) {
                                copy_zero();
                            }
                        } else {
                            budget_share.apply();
                        }
                        budget_window.apply();
                        if (hdr.budget.wnd32[31:16] != 0) {
                            window_max();
                        } else {
                            window_low();
                        }
                        load_window_gap();
                        if (hdr.budget.gap != 0) {
                            rewrite_window();
                        } else {
                            within_share();
                        }
                    }
                }
            }
        } else if (hdr.budget.isValid()) {
            not_held();                            // a SYN from a port without a budget
        }
    }
}

#endif  // P4INCAST_RX_BUDGET_P4
