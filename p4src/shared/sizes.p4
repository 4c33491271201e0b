// p4-incast: every table and counter size in one place.
#ifndef P4INCAST_SIZES_P4
#define P4INCAST_SIZES_P4

#define ROUTES_V4_SIZE     1024   // IPv4 LPM entries
#define ROUTES_V6_SIZE     1024   // IPv6 LPM entries
#define ECN_POLICY_SIZE    512    // one entry per egress port

// Per-port counters are indexed by the port number itself (port_t is 9 bits).
#define PORT_STATS_SIZE    512

// Queue-depth histogram: HIST_PORTS ports x HIST_BUCKETS buckets, index
// port * HIST_BUCKETS + bucket. The target wrapper turns its depth into a
// bucket (v1model: one packet per bucket); the last bucket holds everything
// at or above it. Ports >= HIST_PORTS all count into one extra cell,
// HIST_OTHER_PORTS, which the controller does not report.
#define HIST_PORTS         128
#define HIST_BUCKETS       128
#define HIST_SIZE          16384  // HIST_PORTS * HIST_BUCKETS
#define HIST_OTHER_PORTS   16384  // == HIST_SIZE: the cell after the last port's

// Receive-window budget (docs/algorithms.md §8).
#define RX_BUDGET_SIZE     512    // one entry per receiver-facing port
#define BUDGET_SHARE_SIZE  4096   // (port, N) -> share, for the N above one segment
#define FLOW_SLOTS         4096   // flow table slots per way (a power of two)
#define FLOW_SLOT_BITS     12     // log2(FLOW_SLOTS)
#define FLOW_TABLE         8192   // FLOW_SLOTS x 2 ways: v1model's one register
// The handshake's ACK and its zero-window copy (docs/algorithms.md §8) leave
// as the two replicas of multicast group ZERO_COPY_GROUP_BASE + the egress
// port: replica 0 as it is, then replica ZERO_COPY_RID, to which egress gives
// window 0; the controller makes one group per port
// (p4incast.model.switch_budget).
#define ZERO_COPY_GROUP_BASE 1
#define ZERO_COPY_RID 1

#endif  // P4INCAST_SIZES_P4
