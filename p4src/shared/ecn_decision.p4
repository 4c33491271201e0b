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
//     mode, drop_k and the differences K |-| enq, K |-| deq. A saturating
//     difference is 0 exactly when depth >= threshold: Tofino 1 cannot
//     compare two run-time values, but it can subtract, and test a field
//     against a constant.
//  2. EcnDecision tests those fields and the arriving codepoint and runs at
//     most one action, which counts, marks, or drops (a Not-ECT packet with
//     a drop threshold first computes drop_k |-| enq).
// BMv2 pays per condition and per table it runs (and formats each table's
// key and entry even with logging off), so there is no lookup table here and
// the common cases (ECT marked or not) take the fewest tests (`make bench`).
#ifndef P4INCAST_ECN_DECISION_P4
#define P4INCAST_ECN_DECISION_P4

#include "defines.p4"
#include "headers.p4"

// What the marker did with this packet, as ECN_VERDICT_* flags. Only a build
// that defines ECN_DECISION_TRACE records it (in meta.ecn_verdict, which that
// build adds through LOCAL_METADATA_TARGET_FIELDS): the test harness
// tests/tna/ecn_decision_harness.p4 reads it. The pipelines leave it out: BMv2
// pays per packet for every metadata field and every assignment.
const bit<8> ECN_VERDICT_ECT            = 0x01;  // arrived ECT(0) or ECT(1)
const bit<8> ECN_VERDICT_CE_IN          = 0x02;  // arrived already CE
const bit<8> ECN_VERDICT_MARKED         = 0x04;  // this queue turned it into CE
const bit<8> ECN_VERDICT_NOT_ECT_OVER_K = 0x08;  // Not-ECT while the marking depth was >= K
const bit<8> ECN_VERDICT_DROP           = 0x10;  // Not-ECT at or above drop_k: dropped
#ifdef ECN_DECISION_TRACE
#define ECN_VERDICT(flags) meta.ecn_verdict = (flags)
#else
#define ECN_VERDICT(flags)
#endif

// Step 1: the egress port's policy and this packet's queue depths, in the
// target's unit, as the fields the decision tests. drop_k is only copied: the
// Not-ECT path, the only one that needs it, computes drop_k |-| enqueue depth.
action load_ecn_inputs(inout local_metadata_t meta,
                       in ecn_mode_t mode, in qdepth_t k, in qdepth_t drop_k,
                       in qdepth_t enq_depth, in qdepth_t deq_depth) {
    meta.ecn_mode = mode;
    meta.k_minus_enq = k |-| enq_depth;
    meta.k_minus_deq = k |-| deq_depth;
    meta.drop_k = drop_k;
}

// Step 2: decide, count per egress port, mark or drop. Reads meta.ecn (set
// by the parser), hdr.ipv4's validity, and the fields load_ecn_inputs wrote;
// enq_depth is the depth drop_k is compared with.
control EcnDecision(inout headers_t        hdr,
                    inout local_metadata_t meta,
                    in    port_t           egress_port,
                    in    qdepth_t         enq_depth) {
    PORT_COUNTER(PORT_STATS_SIZE) ecn_ect_stats;            // arrived ECT(0)/ECT(1)
    PORT_COUNTER(PORT_STATS_SIZE) ecn_marked_stats;         // turned into CE here
    PORT_COUNTER(PORT_STATS_SIZE) ecn_ce_in_stats;          // arrived already CE
    PORT_COUNTER(PORT_STATS_SIZE) ecn_not_ect_over_k_stats; // Not-ECT above K
    PORT_COUNTER(PORT_STATS_SIZE) ecn_drop_stats;           // Not-ECT dropped above drop_k

    action ect() {
        ecn_ect_stats.count(egress_port);
        ECN_VERDICT(ECN_VERDICT_ECT);
    }
    action mark_ipv4() {
        hdr.ipv4.ecn = ECN_CE;
        ecn_ect_stats.count(egress_port);
        ecn_marked_stats.count(egress_port);
        ECN_VERDICT(ECN_VERDICT_ECT | ECN_VERDICT_MARKED);
    }
    action mark_ipv6() {
        hdr.ipv6.ecn = ECN_CE;
        ecn_ect_stats.count(egress_port);
        ecn_marked_stats.count(egress_port);
        ECN_VERDICT(ECN_VERDICT_ECT | ECN_VERDICT_MARKED);
    }
    action ce_in() {
        ecn_ce_in_stats.count(egress_port);
        ECN_VERDICT(ECN_VERDICT_CE_IN);
    }
    action load_drop_gap() {
        meta.drop_k_minus_enq = meta.drop_k |-| enq_depth;
    }
    action not_ect_over_k() {
        ecn_not_ect_over_k_stats.count(egress_port);
        ECN_VERDICT(ECN_VERDICT_NOT_ECT_OVER_K);
    }
    action not_ect_drop() {
        ecn_drop_stats.count(egress_port);
        meta.drop = true;
        ECN_VERDICT(ECN_VERDICT_DROP);
    }
    action not_ect_over_k_drop() {
        ecn_not_ect_over_k_stats.count(egress_port);
        ecn_drop_stats.count(egress_port);
        meta.drop = true;
        ECN_VERDICT(ECN_VERDICT_NOT_ECT_OVER_K | ECN_VERDICT_DROP);
    }

    apply {
        // Every test compares a field with a constant (a Tofino gateway can);
        // a saturating difference of 0 means "depth >= threshold". Mode
        // values other than MARK_TAIL and MARK_FRONT never reach K: OFF.
        // Nested so that BMv2, which pays for every test it evaluates, runs
        // two short conditions for an ECT packet.
        bool over_k = (meta.ecn_mode == ECN_MODE_MARK_TAIL && meta.k_minus_enq == 0)
                   || (meta.ecn_mode == ECN_MODE_MARK_FRONT && meta.k_minus_deq == 0);
        if (meta.ecn == ECN_ECT0 || meta.ecn == ECN_ECT1) {
            if (!over_k) {
                ect();
            } else if (hdr.ipv4.isValid()) {
                mark_ipv4();
            } else {
                mark_ipv6();
            }
        } else if (meta.ecn == ECN_CE) {
            ce_in();                  // CE stays CE
        } else if (meta.drop_k == 0) {
            // Not-ECT, no drop threshold: never marked, only counted over K.
            if (over_k) {
                not_ect_over_k();
            }
        } else {
            // Not-ECT with a drop threshold: dropped at or above drop_k.
            load_drop_gap();
            if (over_k && meta.drop_k_minus_enq == 0) {
                not_ect_over_k_drop();
            } else if (over_k) {
                not_ect_over_k();
            } else if (meta.drop_k_minus_enq == 0) {
                not_ect_drop();
            }
        }
    }
}

#endif  // P4INCAST_ECN_DECISION_P4
