"""P4Runtime names and sizes of the pipeline's objects (aliases in the p4info).

The P4 program (p4src/shared, the same names on both targets) defines them;
this module names the ones the controller uses, so nothing else in the
controller spells a table, action, parameter, key or counter. `check` reads
them back from a pipeline's p4info before the controller writes to it
(app.apply, keep, set_ecn): a name the program renamed or dropped is one
error naming it and the p4info, before anything is written.
tests/controller/test_p4names.py runs the same check on the built p4info.
ECN mode codes are the domain model's (`p4incast.model.ecn.EcnMode`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import ControllerError

if TYPE_CHECKING:
    import finsy as fy

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


def missing(schema: fy.P4Schema) -> list[str]:
    """What the controller uses that the p4info `schema` lacks or has otherwise,
    one line each (empty: everything is there, as the controller uses it)."""
    out: list[str] = []
    for name, keys in MATCH_FIELDS.items():
        table = schema.tables.get(name)
        if table is None:
            out.append(f"no table {name}")
            continue
        got = tuple(m.name for m in table.match_fields)
        if got != keys:
            out.append(f"table {name} matches on {', '.join(got)}, not {', '.join(keys)}")
        if TABLE_ACTION[name] not in {a.alias for a in table.actions}:
            out.append(f"table {name} has no action {TABLE_ACTION[name]}")
    for name, params in ACTION_PARAMS.items():
        action = schema.actions.get(name)
        if action is None:
            out.append(f"no action {name}")
        elif (got := tuple(p.name for p in action.params)) != params:
            out.append(f"action {name} takes {', '.join(got)}, not {', '.join(params)}")
    sizes = {
        INGRESS_DROPS: len(DROP_REASONS),
        QUEUE_DEPTH: HIST_PORTS * HIST_BUCKETS,
        **{c: PORT_MAX + 1 for c in (ROUTED, *ECN_COUNTERS.values())},
    }
    for name, least in sizes.items():
        counter = schema.counters.get(name)
        if counter is None:
            out.append(f"no counter {name}")
        elif counter.size < least:
            out.append(f"counter {name} has {counter.size} cells, fewer than {least}")
    port = schema.tables.get(ECN_POLICY)
    if port is not None and PORT_KEY in {m.name for m in port.match_fields}:
        width = next(m.bitwidth for m in port.match_fields if m.name == PORT_KEY)
        if (1 << width) - 1 != PORT_MAX:
            out.append(f"{ECN_POLICY}.{PORT_KEY} is bit<{width}>, not ports 0..{PORT_MAX}")
    return out


def check(schema: fy.P4Schema, source: object) -> None:
    """Raise ControllerError if the p4info `schema` (read from `source`, named in
    the message) lacks anything the controller uses; the message names the
    first such name and how many more there are."""
    problems = missing(schema)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ControllerError(
            f"{source}: {problems[0]}{more}, which the controller uses "
            "(controller/p4names.py); rebuild the pipeline (`make build`) or pass "
            "the p4info of this program"
        )
