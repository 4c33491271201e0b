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
// The caller fixes any checksum (IPv4) after `ecn` changed; this control only
// decides.
#ifndef P4INCAST_ECN_DECISION_P4
#define P4INCAST_ECN_DECISION_P4

#include "defines.p4"

struct ecn_verdict_t {
    bool ect;            // arrived ECT(0) or ECT(1)
    bool ce_in;          // arrived already CE
    bool marked;         // this queue turned it into CE
    bool not_ect_over_k; // Not-ECT while the marking depth was >= K
    bool drop;           // Not-ECT at or above drop_k: drop it
}

control EcnDecision(in    ecn_mode_t    mode,
                    in    qdepth_t      k,
                    in    qdepth_t      drop_k,
                    in    qdepth_t      enq_depth,
                    in    qdepth_t      deq_depth,
                    inout ecn_t         ecn,
                    out   ecn_verdict_t verdict) {
    apply {
        verdict.ect = false;
        verdict.ce_in = false;
        verdict.marked = false;
        verdict.not_ect_over_k = false;
        verdict.drop = false;

        qdepth_t depth = enq_depth;
        if (mode == ECN_MODE_MARK_FRONT) {
            depth = deq_depth;
        }
        // "depth >= k" as a saturating subtraction: k |-| depth is 0 exactly
        // when depth >= k. Tofino 1 cannot compare two run-time values (no
        // compare instruction; its gateways compare a field with a constant),
        // so every test below is against a constant. Same result on BMv2.
        qdepth_t k_minus_depth = k |-| depth;
        qdepth_t drop_k_minus_enq = drop_k |-| enq_depth;
        bool over_k = false;
        if ((mode == ECN_MODE_MARK_TAIL || mode == ECN_MODE_MARK_FRONT) && k_minus_depth == 0) {
            over_k = true;
        }

        if (ecn == ECN_CE) {
            verdict.ce_in = true;
        } else if (ecn == ECN_NOT_ECT) {
            verdict.not_ect_over_k = over_k;
            if (drop_k != 0 && drop_k_minus_enq == 0) {
                verdict.drop = true;
            }
        } else {
            verdict.ect = true;
            if (over_k) {
                ecn = ECN_CE;
                verdict.marked = true;
            }
        }
    }
}

#endif  // P4INCAST_ECN_DECISION_P4
