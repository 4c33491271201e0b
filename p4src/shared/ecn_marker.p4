// p4-incast: per-port ECN policy at the egress queue, its counters, and the
// queue-depth histogram.
//
// The target wrapper must define, before including this file:
//   PORT_COUNTER(size)  a packets-and-bytes counter indexed by port_t, so
//                       per-port counts take the port as it is (a cast in
//                       the index costs BMv2 a temporary per packet)
//   INDEX_COUNTER(size) the same, indexed by counter_index_t
//   HIST_INDEX(port, enq_depth)
//                       this packet's cell of queue_depth_stats, an expression
//                       in the target's depth unit: port * HIST_BUCKETS +
//                       bucket for ports below HIST_PORTS, HIST_OTHER_PORTS
//                       for every other port (one shared cell the controller
//                       does not report)
// and pass in the target's queue depths (already in the target unit the
// controller programs K in).
#ifndef P4INCAST_ECN_MARKER_P4
#define P4INCAST_ECN_MARKER_P4

#include "defines.p4"
#include "sizes.p4"
#include "headers.p4"
#include "ecn_decision.p4"

// EgressEcnMarker: looks up the egress port's (mode, K, drop threshold),
// counts the packet in the queue-depth histogram, and runs the shared decision
// (ecn_decision.p4), which counts per egress port, marks the IPv4 or IPv6 ECN
// field, or sets meta.drop. Runs in egress, where the queue depths are known;
// the target's deparser then fixes the IPv4 checksum.

control EgressEcnMarker(inout headers_t        hdr,
                        inout local_metadata_t meta,
                        in    port_t           egress_port,
                        in    qdepth_t         enq_depth,
                        in    qdepth_t         deq_depth) {
    // One histogram cell per (egress port, depth bucket), so the controller
    // can read depth percentiles over P4Runtime (registers are not readable
    // there).
    INDEX_COUNTER(HIST_SIZE + 1) queue_depth_stats;

    // mode: ECN_MODE_*; k and drop_k in the target's queue unit (packets on
    // BMv2, cells on Tofino); drop_k = 0 disables the Not-ECT drop. A port
    // without an entry runs the default, OFF. One action for both, so BMv2
    // needs one temporary for the histogram cell, not one per action.
    action set_ecn_policy(ecn_mode_t mode, qdepth_t k, qdepth_t drop_k) {
        load_ecn_inputs(meta, mode, k, drop_k, enq_depth, deq_depth);
#ifndef HIST_COUNT_IN_APPLY
        queue_depth_stats.count(HIST_INDEX(egress_port, enq_depth));
#endif
    }

    table ecn_policy {
        key = {
            egress_port : exact @name("port");
        }
        actions = {
            set_ecn_policy;
        }
        const default_action = set_ecn_policy(ECN_MODE_OFF, 0, 0);
        size = ECN_POLICY_SIZE;
    }

    EcnDecision() decide;

    apply {
        ecn_policy.apply();
#ifdef HIST_COUNT_IN_APPLY
        // Tofino: a counter addressed from metadata in an action with action
        // data would need the hit path for the table's default action too.
        queue_depth_stats.count(HIST_INDEX(egress_port, enq_depth));
#endif
        decide.apply(hdr, meta, egress_port, enq_depth);
    }
}

#endif  // P4INCAST_ECN_MARKER_P4
