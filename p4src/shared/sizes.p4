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
// The zero-window copy of a handshake's ACK (docs/algorithms.md §8) leaves by
// clone/mirror session ZERO_COPY_SESSION_BASE + its egress port; the
// controller makes one per port (p4incast.model.switch_budget).
#define ZERO_COPY_SESSION_BASE 1

#endif  // P4INCAST_SIZES_P4
