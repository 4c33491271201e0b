"""P4Runtime names of the pipeline's objects (aliases in the p4info).

Both targets use the same names (p4src/shared), so nothing else in the
controller spells a table, action, key or counter.
"""

ROUTES_V4 = "routes_v4"
ROUTES_V6 = "routes_v6"
ROUTE = "route"  # routes_v4 action (port, smac, dmac)
ROUTE_V6 = "route_v6"  # routes_v6 action (port, smac, dmac)
DST_ADDR = "dst_addr"

ECN_POLICY = "ecn_policy"
SET_ECN_POLICY = "set_ecn_policy"  # (mode, k, drop_k)
PORT_KEY = "port"

# Per egress port, packets and bytes.
ECN_COUNTERS = {
    "ect": "ecn_ect_stats",
    "marked": "ecn_marked_stats",
    "ce_in": "ecn_ce_in_stats",
    "not_ect_over_k": "ecn_not_ect_over_k_stats",
    "ecn_drop": "ecn_drop_stats",
}
ROUTED = "routed_stats"  # per egress port, counted at ingress
INGRESS_DROPS = "ingress_drop_stats"  # per reason
QUEUE_DEPTH = "queue_depth_stats"  # port * HIST_BUCKETS + bucket

# Index order of ingress_drop_stats (p4src/shared/defines.p4).
DROP_REASONS = ("route_miss", "not_ip", "parser_error", "bad_checksum", "ttl_expired")

# ECN modes as the pipeline encodes them (ECN_MODE_* in defines.p4).
ECN_MODES = {"off": 0, "tail": 1, "front": 2}
