// p4-incast: the ECN marking decision, written once against core.p4 only.
//
// Mark-tail — DCTCP (Alizadeh et al., SIGCOMM 2010): the packet that ARRIVES
// while the instantaneous queue is >= K is marked; the target passes the depth
// this packet saw when it was enqueued (v1model enq_qdepth, TNA enq_qdepth).
//
// Mark-front — NewDCTCP's early congestion feedback (Sreekumari, Jung, Lee,
// Springer 2015; Liu & Jain, Computer Networks 35(2-3), 2001): when the queue
// is >= K, the packet LEAVING the head is marked; the target passes the depth
// left behind when this packet was dequeued (v1model deq_qdepth, TNA
// deq_qdepth). Feedback then reaches the senders one queueing delay earlier.
//
// Only ECT(0)/ECT(1) become CE; CE stays CE; Not-ECT is never marked. A
// Not-ECT packet that arrives at a queue at or above the optional drop
// threshold (drop_k > 0, enqueue depth) is dropped instead.
//
// How it is computed, in two steps:
//  1. load_ecn_inputs (called by the port's ecn_policy action) stores the
//     mode and the three differences K |-| enq, K |-| deq, drop_k |-| enq.
//     A saturating difference is 0 exactly when depth >= threshold: Tofino 1
//     cannot compare two run-time values, but it can subtract, and test a
//     field against a constant.
//  2. EcnDecision tests those fields and the arriving codepoint and runs one
//     action, which counts, marks, or drops.
// BMv2 pays per condition and per table it runs (and formats each table's
// key and entry even with logging off), so there is no lookup table here and
// the common cases (ECT marked or not) take the fewest tests (`make bench`).
#ifndef P4INCAST_ECN_DECISION_P4
#define P4INCAST_ECN_DECISION_P4

#include "defines.p4"
#include "headers.p4"

// meta.ecn_verdict flags: what the marker did with this packet.
const bit<8> ECN_VERDICT_ECT            = 0x01;  // arrived ECT(0) or ECT(1)
const bit<8> ECN_VERDICT_CE_IN          = 0x02;  // arrived already CE
const bit<8> ECN_VERDICT_MARKED         = 0x04;  // this queue turned it into CE
const bit<8> ECN_VERDICT_NOT_ECT_OVER_K = 0x08;  // Not-ECT while the marking depth was >= K
const bit<8> ECN_VERDICT_DROP           = 0x10;  // Not-ECT at or above drop_k: dropped

// Step 1: the egress port's policy and this packet's queue depths, in the
// target's unit, as the fields the decision table matches.
action load_ecn_inputs(inout local_metadata_t meta,
                       in ecn_mode_t mode, in qdepth_t k, in qdepth_t drop_k,
                       in qdepth_t enq_depth, in qdepth_t deq_depth) {
    meta.ecn_mode = mode;
    meta.k_minus_enq = k |-| enq_depth;
    meta.k_minus_deq = k |-| deq_depth;
    meta.drop_k = drop_k;
    meta.drop_k_minus_enq = drop_k |-| enq_depth;
}

// Step 2: decide, count per egress port, mark or drop. Reads meta.ecn and
// meta.is_ipv4 (set by the parser) and the fields load_ecn_inputs wrote.
control EcnDecision(inout headers_t        hdr,
                    inout local_metadata_t meta,
                    in    port_t           egress_port) {
    PORT_COUNTER(PORT_STATS_SIZE) ecn_ect_stats;            // arrived ECT(0)/ECT(1)
    PORT_COUNTER(PORT_STATS_SIZE) ecn_marked_stats;         // turned into CE here
    PORT_COUNTER(PORT_STATS_SIZE) ecn_ce_in_stats;          // arrived already CE
    PORT_COUNTER(PORT_STATS_SIZE) ecn_not_ect_over_k_stats; // Not-ECT above K
    PORT_COUNTER(PORT_STATS_SIZE) ecn_drop_stats;           // Not-ECT dropped above drop_k

    action ect() {
        ecn_ect_stats.count(egress_port);
        meta.ecn_verdict = ECN_VERDICT_ECT;
    }
    action mark_ipv4() {
        hdr.ipv4.ecn = ECN_CE;
        ecn_ect_stats.count(egress_port);
        ecn_marked_stats.count(egress_port);
        meta.ecn_verdict = ECN_VERDICT_ECT | ECN_VERDICT_MARKED;
    }
    action mark_ipv6() {
        hdr.ipv6.ecn = ECN_CE;
        ecn_ect_stats.count(egress_port);
        ecn_marked_stats.count(egress_port);
        meta.ecn_verdict = ECN_VERDICT_ECT | ECN_VERDICT_MARKED;
    }
    action ce_in() {
        ecn_ce_in_stats.count(egress_port);
        meta.ecn_verdict = ECN_VERDICT_CE_IN;
    }
    action not_ect() {
        meta.ecn_verdict = 0;
    }
    action not_ect_over_k() {
        ecn_not_ect_over_k_stats.count(egress_port);
        meta.ecn_verdict = ECN_VERDICT_NOT_ECT_OVER_K;
    }
    action not_ect_drop() {
        ecn_drop_stats.count(egress_port);
        meta.drop = true;
        meta.ecn_verdict = ECN_VERDICT_DROP;
    }
    action not_ect_over_k_drop() {
        ecn_not_ect_over_k_stats.count(egress_port);
        ecn_drop_stats.count(egress_port);
        meta.drop = true;
        meta.ecn_verdict = ECN_VERDICT_NOT_ECT_OVER_K | ECN_VERDICT_DROP;
    }

    apply {
        // Every test compares a field with a constant (a Tofino gateway can);
        // a saturating difference of 0 means "depth >= threshold". Mode
        // values other than MARK_TAIL and MARK_FRONT never reach K: OFF.
        bool over_k = (meta.ecn_mode == ECN_MODE_MARK_TAIL && meta.k_minus_enq == 0)
                   || (meta.ecn_mode == ECN_MODE_MARK_FRONT && meta.k_minus_deq == 0);
        bool is_ect = meta.ecn == ECN_ECT0 || meta.ecn == ECN_ECT1;
        // The common cases first: BMv2 pays for every test it runs.
        if (is_ect && over_k && meta.is_ipv4 == 1) {
            mark_ipv4();
        } else if (is_ect && over_k) {
            mark_ipv6();
        } else if (is_ect) {
            ect();
        } else if (meta.ecn == ECN_CE) {
            ce_in();                  // CE stays CE
        } else {
            // Not-ECT: never marked; dropped at or above drop_k (if set).
            bool over_drop_k = meta.drop_k != 0 && meta.drop_k_minus_enq == 0;
            if (over_k && over_drop_k) {
                not_ect_over_k_drop();
            } else if (over_k) {
                not_ect_over_k();
            } else if (over_drop_k) {
                not_ect_drop();
            } else {
                not_ect();
            }
        }
    }
}

#endif  // P4INCAST_ECN_DECISION_P4
