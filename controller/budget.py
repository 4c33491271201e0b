"""The receiver's budget held by the switch (docs/algorithms.md §8): the entries
of one port's budget, what the switch has, and the config's budgets on apply
(`app.set_budget` sets one port's live).

A port's budget is its rx_budget entry (the floor, one segment, and the
epoch) and one budget_share entry per flow count N whose share is above one
segment (`p4incast.model.switch_budget`); the controller divides, the switch
only looks the share up. Every change is one WriteRequest, built by the same
`reconcile.plan` as the ECN policy: what the switch has for the port, brought
to what the budget asks for.
"""

from __future__ import annotations

from dataclasses import dataclass

import finsy as fy

from p4incast.model import switch_budget

from . import entries, p4names, reconcile
from .config import Config, PortBudget
from .connection import EntityReader, read_entities
from .errors import ControllerError

BUDGET_TABLES = (p4names.RX_BUDGET, p4names.BUDGET_SHARE)


def desired(port: int, budget: PortBudget | None) -> list[fy.P4TableEntry]:
    """The entries one port's budget asks for: none when it is off."""
    if budget is None:
        return []
    out = [entries.rx_budget(port=port, floor_bytes=budget.mss, epoch_ticks=budget.epoch_ticks)]
    out += [
        entries.budget_share(port=port, flows=n, share_bytes=share)
        for n, share in switch_budget.share_entries(budget.bytes, budget.mss)
    ]
    return out


def _port_of(entry: fy.P4TableEntry) -> int | None:
    match = entry.match
    if match is None or p4names.PORT_KEY not in match:
        return None
    return int(match[p4names.PORT_KEY])


async def current(sw: fy.Switch, ports: set[int] | None) -> list[fy.P4TableEntry]:
    """What the switch has in the budget tables, for `ports` (None: every port)."""
    if sw.p4info.tables.get(p4names.RX_BUDGET) is None:
        raise ControllerError(
            "the running pipeline has no rx_budget table: it predates the switch's "
            "budget (make build, then p4incast-ctl push --force)"
        )
    found: list[fy.P4TableEntry] = []
    for table in BUDGET_TABLES:
        async for entry in read_entities(sw, fy.P4TableEntry(table)):
            if ports is None or _port_of(entry) in ports:
                found.append(entry)
    return found


async def write_port(sw: fy.Switch, port: int, budget: PortBudget | None) -> int:
    """One port's budget brought to `budget` (None: off); returns the update count."""
    plan = reconcile.plan(await current(sw, {port}), desired(port, budget), sw.p4info)
    if plan:
        await sw.write(plan.updates())
    return len(plan)


def groups(ports: list[int]) -> list[fy.P4MulticastGroupEntry]:
    """The multicast groups the handshake's ACK leaves by with its zero-window
    copy: one per port, ZERO_COPY_GROUP_BASE + port -> that port twice, replica
    0 (the ACK) and ZERO_COPY_RID (the copy; docs/algorithms.md §8, "The
    handshake's ACK, twice"). Listed copy first: BMv2 (PI's group, its
    replication engine) sends a group's replicas in the reverse of the order
    P4Runtime lists them, and the copy must leave second
    (ptf-tests RxBudgetHandshakeCopyTest checks the order)."""
    return [
        fy.P4MulticastGroupEntry(
            switch_budget.ZERO_COPY_GROUP_BASE + p,
            replicas=[(p, switch_budget.ZERO_COPY_RID), (p, 0)],
        )
        for p in ports
    ]


async def group_updates(sw: fy.Switch, ports: list[int]) -> list[fy.P4MulticastGroupEntry]:
    """The updates that bring the ports' groups to `groups(ports)`: an insert
    where the switch has none, a modify where it has another."""
    have: dict[int, fy.P4MulticastGroupEntry] = {}
    async for g in read_entities(sw, fy.P4MulticastGroupEntry()):
        have[g.multicast_group_id] = g
    updates: list[fy.P4MulticastGroupEntry] = []
    for want in groups(ports):
        got = have.get(want.multicast_group_id)
        if got is None:
            updates.append(+want)
        elif sorted(got.replicas_str().split()) != sorted(want.replicas_str().split()):
            updates.append(~want)  # (a read lists the replicas in its own order)
    return updates


async def write_groups(sw: fy.Switch, ports: list[int]) -> int:
    """The ports' groups written where missing or different; returns the
    update count."""
    updates = await group_updates(sw, ports)
    if updates:
        await sw.write(updates)
    return len(updates)


async def write_budgets(sw: fy.Switch, cfg: Config) -> int:
    """apply: every port's budget brought to the config (a port without
    `budget:` off); returns the update count."""
    want = [e for p, pc in sorted(cfg.ports.items()) for e in desired(p, pc.budget)]
    if not want and sw.p4info.tables.get(p4names.RX_BUDGET) is None:
        return 0  # an older pipeline, and no budget asked for
    plan = reconcile.plan(await current(sw, None), want, sw.p4info)
    if plan:
        await sw.write(plan.updates())
    return len(plan)


@dataclass(frozen=True)
class PortCounters:
    """The budget's counters of one receiver port (packets), and its epoch."""

    acks: int = 0  # ACKs held to the share (budget_ack_stats)
    rewritten: int = 0  # of those, the window lowered
    unknown_scale: int = 0  # ACKs of flows whose scale the switch did not read
    untracked: int = 0  # packets of flows without a slot (fail-open)
    flow_epochs: int = 0  # flows counted, each once per epoch it was active in
    epoch_ticks: int = 0  # the port's epoch (0: no budget entry)


async def read_counters(
    sw: fy.Switch | EntityReader, ports: list[int] | None
) -> dict[int, PortCounters]:
    """The budget's counters of the ports (None: all) that have a budget entry,
    in one Read of their cells (after a read of rx_budget for which have one)."""
    epochs: dict[int, int] = {}
    async for entry in read_entities(sw, fy.P4TableEntry(p4names.RX_BUDGET)):
        port = _port_of(entry)
        if port is not None and (ports is None or port in ports) and entry.action is not None:
            action = entry.action
            if isinstance(action, fy.P4TableAction):
                epochs[port] = int(action.args.get("epoch_ticks", 0))
    if not epochs:
        return {}
    attr = {name: a for a, name in p4names.BUDGET_COUNTERS.items()}
    got: dict[int, dict[str, int]] = {p: {} for p in epochs}
    cells = [fy.P4CounterEntry(n, index=p) for p in sorted(epochs) for n in attr]
    async for c in read_entities(sw, cells):
        if c.data is not None and c.index in got and c.counter_id in attr:
            got[c.index][attr[c.counter_id]] = c.data.packet_count
    return {
        p: PortCounters(
            acks=v.get("acks", 0),
            rewritten=v.get("rewritten", 0),
            unknown_scale=v.get("unknown_scale", 0),
            untracked=v.get("untracked", 0),
            flow_epochs=v.get("flows", 0),
            epoch_ticks=epochs[p],
        )
        for p, v in got.items()
    }
