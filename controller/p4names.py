"""P4Runtime names and sizes of the pipeline's objects (aliases in the p4info).

Both targets use the same names (p4src/shared), so nothing else in the
controller spells a table, action, parameter, key or counter.
tests/controller/test_p4names.py checks every name here against the built
p4info. ECN mode codes are the domain model's (`p4incast.model.ecn.EcnMode`).
"""

from __future__ import annotations

ROUTES_V4 = "routes_v4"
ROUTES_V6 = "routes_v6"
ROUTE = "route"  # routes_v4 action (port, smac, dmac)
ROUTE_V6 = "route_v6"  # routes_v6 action (port, smac, dmac)
DST_ADDR = "dst_addr"

ECN_POLICY = "ecn_policy"
SET_ECN_POLICY = "set_ecn_policy"  # (mode, k, drop_k)
PORT_KEY = "port"

# What the controller writes: each table's match fields and its one action,
# and each action's parameters (entries.py passes them by these names).
MATCH_FIELDS: dict[str, tuple[str, ...]] = {
    ROUTES_V4: (DST_ADDR,),
    ROUTES_V6: (DST_ADDR,),
    ECN_POLICY: (PORT_KEY,),
}
TABLE_ACTION: dict[str, str] = {ROUTES_V4: ROUTE, ROUTES_V6: ROUTE_V6, ECN_POLICY: SET_ECN_POLICY}
ACTION_PARAMS: dict[str, tuple[str, ...]] = {
    ROUTE: ("port", "smac", "dmac"),
    ROUTE_V6: ("port", "smac", "dmac"),
    SET_ECN_POLICY: ("mode", "k", "drop_k"),
}

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
COUNTERS = (ROUTED, INGRESS_DROPS, QUEUE_DEPTH, *ECN_COUNTERS.values())

# Index order of ingress_drop_stats (p4src/shared/defines.p4).
DROP_REASONS = ("route_miss", "not_ip", "parser_error", "bad_checksum", "ttl_expired")

# Sizes both targets share (p4src/shared/defines.p4, sizes.p4).
PORT_MAX = (1 << 9) - 1  # port_t is bit<9>
HIST_PORTS = 128  # queue_depth_stats covers ports 0..HIST_PORTS-1
HIST_BUCKETS = 128  # depth buckets per port; the last one is open (>= 127)
