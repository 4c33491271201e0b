"""P4Runtime names and sizes of the pipeline's objects (aliases in the p4info).

The P4 program (p4src/shared, the same names on both targets) defines them;
controller/p4info_names.py is generated from its built p4info
(scripts/gen_p4names.py, run by `make build`), and this module picks the ones
the controller uses from there, so nothing in the controller spells a table,
action, parameter, key or counter, and a name the program renames fails at
import. `check` reads
them back from a pipeline's p4info before the controller writes to it
(app.apply, keep, set_ecn): a name the program renamed or dropped is one
error naming it and the p4info, before anything is written.
tests/controller/test_p4names.py runs the same check on the built p4info.
ECN mode codes are the domain model's (`p4incast.model.ecn.EcnMode`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import p4info_names as gen
from .errors import ControllerError

if TYPE_CHECKING:
    import finsy as fy

ROUTES_V4 = gen.TABLE_ROUTES_V4
ROUTES_V6 = gen.TABLE_ROUTES_V6
ROUTE = gen.ACTION_ROUTE  # routes_v4 action (port, smac, dmac)
ROUTE_V6 = gen.ACTION_ROUTE_V6  # routes_v6 action (port, smac, dmac)
DST_ADDR = gen.FIELD_DST_ADDR

ECN_POLICY = gen.TABLE_ECN_POLICY
SET_ECN_POLICY = gen.ACTION_SET_ECN_POLICY  # (mode, k, drop_k)
PORT_KEY = gen.FIELD_PORT

# The receiver's budget (docs/algorithms.md §8): per receiver port, and per
# (port, N active flows) the share.
RX_BUDGET = gen.TABLE_RX_BUDGET
SET_RX_BUDGET = gen.ACTION_SET_RX_BUDGET  # (floor_bytes, epoch_ticks)
BUDGET_SHARE = gen.TABLE_BUDGET_SHARE
SET_SHARE = gen.ACTION_SET_SHARE  # (share_bytes)
FLOWS_KEY = gen.FIELD_FLOWS
BUDGET_COUNTERS = {
    "acks": gen.COUNTER_BUDGET_ACK_STATS,
    "rewritten": gen.COUNTER_BUDGET_REWRITTEN_STATS,
    "unknown_scale": gen.COUNTER_BUDGET_UNKNOWN_SCALE_STATS,
    "untracked": gen.COUNTER_BUDGET_UNTRACKED_STATS,
    "flows": gen.COUNTER_BUDGET_FLOW_STATS,
}

# What the controller writes: each table's match fields and its one action,
# and each action's parameters (entries.py passes them by these names), as the
# generated p4info names give them; `check` holds another target's p4info to them.
TABLE_ACTION: dict[str, str] = {ROUTES_V4: ROUTE, ROUTES_V6: ROUTE_V6, ECN_POLICY: SET_ECN_POLICY}
MATCH_FIELDS: dict[str, tuple[str, ...]] = {t: gen.MATCH_FIELDS[t] for t in TABLE_ACTION}
ACTION_PARAMS: dict[str, tuple[str, ...]] = {a: gen.ACTION_PARAMS[a] for a in TABLE_ACTION.values()}

# Per egress port, packets and bytes.
ECN_COUNTERS = {
    "ect": gen.COUNTER_ECN_ECT_STATS,
    "marked": gen.COUNTER_ECN_MARKED_STATS,
    "ce_in": gen.COUNTER_ECN_CE_IN_STATS,
    "not_ect_over_k": gen.COUNTER_ECN_NOT_ECT_OVER_K_STATS,
    "ecn_drop": gen.COUNTER_ECN_DROP_STATS,
}
ROUTED = gen.COUNTER_ROUTED_STATS  # per egress port, counted at ingress
INGRESS_DROPS = gen.COUNTER_INGRESS_DROP_STATS  # per reason
QUEUE_DEPTH = gen.COUNTER_QUEUE_DEPTH_STATS  # port * HIST_BUCKETS + bucket
COUNTERS = (ROUTED, INGRESS_DROPS, QUEUE_DEPTH, *ECN_COUNTERS.values())

# Index order of ingress_drop_stats (p4src/shared/defines.p4).
DROP_REASONS = ("route_miss", "not_ip", "parser_error", "bad_checksum", "ttl_expired")

# Sizes both targets share (p4src/shared/defines.p4, sizes.p4).
PORT_MAX = (1 << gen.FIELD_BITS[(ECN_POLICY, PORT_KEY)]) - 1  # port_t: bit<9> on v1model
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
