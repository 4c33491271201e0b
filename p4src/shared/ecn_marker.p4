// p4-incast: per-port ECN policy at the egress queue, its counters, and the
// queue-depth histogram.
//
// The target wrapper must define, before including this file:
//   PORT_COUNTER(size)  an indexed packets-and-bytes counter type with
//                       .count(counter_index_t)
// and pass in the target's queue depths (already in the target unit the
// controller programs K in) and the histogram bucket of this packet.
#ifndef P4INCAST_ECN_MARKER_P4
#define P4INCAST_ECN_MARKER_P4

#include "defines.p4"
#include "sizes.p4"
#include "headers.p4"
#include "ecn_decision.p4"

// EgressEcnMarker: looks up the egress port's (mode, K, drop threshold), runs
// the shared decision on the IPv4 or IPv6 ECN field, counts what it saw per
// egress port, and tells the caller whether to drop. Runs in egress, where the
// queue depths are known; the caller then fixes the IPv4 checksum.
control EgressEcnMarker(inout headers_t hdr,
                        in    port_t    egress_port,
                        in    qdepth_t  enq_depth,
                        in    qdepth_t  deq_depth,
                        out   bool      drop) {
    PORT_COUNTER(PORT_STATS_SIZE) ecn_ect_stats;           // arrived ECT(0)/ECT(1)
    PORT_COUNTER(PORT_STATS_SIZE) ecn_marked_stats;        // turned into CE here
    PORT_COUNTER(PORT_STATS_SIZE) ecn_ce_in_stats;         // arrived already CE
    PORT_COUNTER(PORT_STATS_SIZE) ecn_not_ect_over_k_stats;// Not-ECT above K
    PORT_COUNTER(PORT_STATS_SIZE) ecn_drop_stats;          // Not-ECT dropped above drop_k

    ecn_mode_t policy_mode = ECN_MODE_OFF;
    qdepth_t   policy_k = 0;
    qdepth_t   policy_drop_k = 0;

    // mode: ECN_MODE_*; k and drop_k in the target's queue unit (packets on
    // BMv2, cells on Tofino); drop_k = 0 disables the Not-ECT drop.
    action set_ecn_policy(ecn_mode_t mode, qdepth_t k, qdepth_t drop_k) {
        policy_mode = mode;
        policy_k = k;
        policy_drop_k = drop_k;
    }

    action no_ecn_policy() {
        policy_mode = ECN_MODE_OFF;
    }

    table ecn_policy {
        key = {
            egress_port : exact @name("port");
        }
        actions = {
            set_ecn_policy;
            @defaultonly no_ecn_policy;
        }
        const default_action = no_ecn_policy();
        size = ECN_POLICY_SIZE;
    }

    EcnDecision() decide;

    apply {
        drop = false;
        ecn_verdict_t verdict;
        counter_index_t port_index = (counter_index_t)egress_port;
        ecn_t ecn = 0;  // set below; 0 only keeps the compiler's flow analysis quiet
        if (hdr.ipv4.isValid()) {
            ecn = hdr.ipv4.ecn;
        } else if (hdr.ipv6.isValid()) {
            ecn = hdr.ipv6.ecn;
        } else {
            return;
        }
        ecn_policy.apply();
        decide.apply(policy_mode, policy_k, policy_drop_k, enq_depth, deq_depth, ecn, verdict);
        if (hdr.ipv4.isValid()) {
            hdr.ipv4.ecn = ecn;
        } else {
            hdr.ipv6.ecn = ecn;
        }
        if (verdict.ect) {
            ecn_ect_stats.count(port_index);
        }
        if (verdict.marked) {
            ecn_marked_stats.count(port_index);
        }
        if (verdict.ce_in) {
            ecn_ce_in_stats.count(port_index);
        }
        if (verdict.not_ect_over_k) {
            ecn_not_ect_over_k_stats.count(port_index);
        }
        if (verdict.drop) {
            ecn_drop_stats.count(port_index);
            drop = true;
        }
    }
}

// EgressQueueStats: one histogram cell per (egress port, depth bucket), so the
// controller can read depth percentiles over P4Runtime (registers are not
// readable there). The caller computes `bucket` < HIST_BUCKETS from the depth
// this packet saw at enqueue, in the target's unit.
control EgressQueueStats(in port_t egress_port, in bit<32> bucket) {
    PORT_COUNTER(HIST_SIZE) queue_depth_stats;

    apply {
        if (egress_port < HIST_PORTS) {
            queue_depth_stats.count((counter_index_t)egress_port * HIST_BUCKETS + bucket);
        }
    }
}

#endif  // P4INCAST_ECN_MARKER_P4
