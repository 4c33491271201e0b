"""The controller's operations: bring a switch to a config, change one port live,
set a port's queue, and keep a switch at its config across restarts.

Every operation validates first and then writes in one P4Runtime WriteRequest,
so bad input leaves the switch as it was. What to write is decided by the pure
`reconcile` module; this one does the I/O around it (P4Runtime reads and
writes through finsy, queue settings through the target). Nothing here prints:
results are returned, events go to a callback or the `p4incast.controller` log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

import finsy as fy

from p4incast.model.ecn import EcnMode
from p4incast.model.switch_budget import share_count

from . import budget as budget_tables
from . import config, entries, p4names, reconcile
from .config import Config, EcnPolicy, Pipeline, PortBudget, SwitchSettings
from .connection import check_handshake, connect, options, read_entities
from .errors import ControllerError
from .targets import QueueSetting

LOG = logging.getLogger("p4incast.controller")


async def read_entries(
    sw: fy.Switch, tables: tuple[str, ...] = reconcile.MANAGED_TABLES
) -> list[fy.P4TableEntry]:
    """Every entry of `tables` on the switch."""
    found: list[fy.P4TableEntry] = []
    for table in tables:
        async for entry in read_entities(sw, fy.P4TableEntry(table)):
            found.append(entry)
    return found


def check_names(pipeline: Pipeline) -> None:
    """The pipeline's p4info has every table, action and counter the controller
    uses, as it uses them (p4names.check); one error naming the first that is
    missing and the p4info. Skipped when the p4info is not a local file (the
    switch's running pipeline is then used as it is)."""
    if not pipeline.p4info.is_file():
        return
    try:
        schema = fy.P4Schema(pipeline.p4info)
    except Exception as err:  # protobuf's text or binary parser, whichever the file took
        raise ControllerError(f"cannot read p4info {pipeline.p4info}: {err}") from None
    p4names.check(schema, pipeline.p4info)


def check_ports_exist(ports: Iterable[int], settings: SwitchSettings) -> None:
    """Refuse ports the running switch does not have, when its target can list them."""
    have = settings.target_profile.existing_ports(settings.thrift_port)
    if have is None:
        return  # the target cannot tell; the config's port range check stands
    unknown = [p for p in ports if p not in have]
    if unknown:
        raise ControllerError(
            f"port {unknown[0]} does not exist on the switch (its ports: "
            f"{', '.join(map(str, sorted(have)))})"
        )


async def write_config(sw: fy.Switch, cfg: Config) -> int:
    """Reconcile the managed tables with `cfg` in one write; returns the update count."""
    plan = reconcile.config_plan(cfg, await read_entries(sw), sw.p4info)
    if plan:
        await sw.write(plan.updates())
    return len(plan)


def apply_queues(cfg: Config) -> None:
    """Set every configured queue depth/rate through the target (blocking)."""
    settings = reconcile.queue_settings(cfg)
    if settings:
        cfg.switch.target_profile.set_queues(settings, cfg.switch.thrift_port)


async def apply(cfg: Config, *, force_push: bool = False) -> int:
    """Push the pipeline (if not already running), write every entry, set queues.

    Returns the number of table updates written (0 when the switch already
    runs `cfg`).
    """
    config.check(cfg)
    cfg.pipeline.check(need_config=True)
    check_names(cfg.pipeline)
    if reconcile.queue_settings(cfg):
        check_ports_exist(sorted(cfg.ports), cfg.switch)
    async with connect(cfg.switch, cfg.pipeline, push=True, force=force_push) as sw:
        count = await write_config(sw, cfg)
        count += await budget_tables.write_budgets(sw, cfg)
    await asyncio.to_thread(apply_queues, cfg)
    return count


async def push(settings: SwitchSettings, pipeline: Pipeline, *, force: bool = False) -> None:
    """Install the pipeline (unless the same one already runs, or `force`)."""
    async with connect(settings, pipeline, push=True, force=force):
        pass


async def set_ecn(
    settings: SwitchSettings,
    pipeline: Pipeline,
    *,
    port: int,
    policy: EcnPolicy,
    queue_depth: int | None = None,
    known_ports: list[int] | None = None,
) -> str:
    """Change one port's ECN policy live; returns what was done.

    queue_depth: the port's configured queue (K must be below it on v1model);
    known_ports: the config's ports, or None to ask the switch (if it can tell).
    """
    target = settings.target_profile
    config.check_port_number(port, "port")
    policy.check(target, queue_depth, f"port {port}")
    if known_ports is not None and port not in known_ports:
        raise ControllerError(
            f"port {port} is not in the config (ports: {', '.join(map(str, known_ports))})"
        )
    if known_ports is None:
        check_ports_exist([port], settings)
    check_names(pipeline)
    async with connect(settings, pipeline) as sw:
        current = [e async for e in read_entities(sw, entries.ecn_policy_key(port=port))]
        plan = reconcile.ecn_plan(port, policy, target, current, sw.p4info)
        if plan:
            await sw.write(plan.updates())
    if policy.ecn_mode is EcnMode.OFF:
        return f"port {port}: ECN off"
    unit = target.unit.user_unit
    drop = f", drop Not-ECT at {policy.drop_k} {unit}" if policy.drop_k else ""
    return f"port {port}: mark-{policy.ecn_mode} at K={policy.k} {unit}{drop}"


def set_queue(
    settings: SwitchSettings, *, port: int, depth: int | None = None, rate: int | None = None
) -> str:
    """Set one port's queue depth (packets) and/or rate (packets/s); returns what was done."""
    config.check_port_number(port, "port")
    setting = QueueSetting(depth, rate)
    if setting.empty:
        raise ControllerError(f"port {port}: a queue setting needs a depth and/or a rate")
    target = settings.target_profile
    target.check_queue(setting, f"port {port}")
    check_ports_exist([port], settings)
    target.set_queues({port: setting}, settings.thrift_port)
    return f"port {port}: queue depth={depth} rate={rate}"


async def keep(cfg: Config, on_event: Callable[[str], None] = LOG.info) -> None:
    """Hold the switch at `cfg` until cancelled: after every (re)connection the
    pipeline is re-pushed if the switch lost it, and all state is written again
    (the plan inserts everything a restarted switch lost)."""
    config.check(cfg)
    cfg.pipeline.check(need_config=True)
    check_names(cfg.pipeline)

    async def ready(sw: fy.Switch) -> None:
        count = await write_config(sw, cfg)
        count += await budget_tables.write_budgets(sw, cfg)
        try:
            await asyncio.to_thread(apply_queues, cfg)
        except ControllerError as err:
            on_event(f"queues not set: {err}")
        on_event(f"switch {cfg.switch.address} ready: {count} updates written")
        await asyncio.Event().wait()  # cancelled by finsy when the channel drops

    def down(sw: fy.Switch) -> None:
        on_event(f"switch {cfg.switch.address} connection lost; reconnecting")

    await check_handshake(cfg.switch)
    opts = options(cfg.switch, cfg.pipeline, push=True, ready_handler=ready)
    sw = fy.Switch("p4incast", cfg.switch.address, opts)
    sw.ee.add_listener(fy.SwitchEvent.CHANNEL_DOWN, down)
    await fy.Controller([sw]).run()


async def set_budget(
    settings: SwitchSettings,
    pipeline: Pipeline,
    *,
    port: int,
    budget: PortBudget | None,
    known_ports: list[int] | None = None,
) -> str:
    """Set (or, with None, turn off) one port's budget live; returns what was done."""
    config.check_port_number(port, "port")
    if budget is not None:
        budget.check("budget")
    if known_ports is not None and port not in known_ports:
        raise ControllerError(
            f"port {port} is not in the config (ports: {', '.join(map(str, known_ports))})"
        )
    if known_ports is None:
        check_ports_exist([port], settings)
    async with connect(settings, pipeline) as sw:
        await budget_tables.write_port(sw, port, budget)
    if budget is None:
        return f"port {port}: budget off"
    shares = share_count(budget.bytes, budget.mss)
    return (
        f"port {port}: budget {budget.bytes} bytes, segments of {budget.mss} "
        f"({shares} shares above one segment), epoch {budget.epoch_ticks} ticks"
    )
