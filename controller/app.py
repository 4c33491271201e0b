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
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping

import finsy as fy
from finsy.grpcutil import GRPCStatusCode

from p4incast.model.ecn import EcnMode
from p4incast.model.switch_budget import share_count

from . import budget as budget_tables
from . import config, entries, p4names, reconcile
from .config import Config, EcnPolicy, Pipeline, PortBudget, SwitchSettings
from .connection import (
    check_handshake,
    connect,
    options,
    read_entities,
    refused,
    require_primary,
)
from .errors import ControllerError
from .targets import QueueSetting, ThriftAddress

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


def check_ports_exist(
    ports: Iterable[int], settings: SwitchSettings, thrift: ThriftAddress | None, *, strict: bool
) -> None:
    """Refuse ports the running switch does not have, when its target can list them
    through its thrift runtime at `thrift` (blocking). `strict` (before a queue
    setting): that thrift runtime must answer. Otherwise a switch that cannot be
    asked (no thrift address, or no answer) is trusted to have the ports."""
    if thrift is None:
        return
    try:
        have = settings.target_profile.existing_ports(thrift)
    except ControllerError:
        if strict:
            raise
        return
    if have is None:
        return  # the target cannot tell; the config's port range check stands
    unknown = [p for p in ports if p not in have]
    if unknown:
        raise ControllerError(
            f"port {unknown[0]} does not exist on the switch (its ports: "
            f"{', '.join(map(str, sorted(have)))})"
        )


async def write_config(sw: fy.Switch, cfg: Config) -> int:
    """Reconcile the managed tables, and each port's multicast group (the
    budget's handshake ACK and its zero-window copy leave by it, whether a
    budget is set now or live later: budget.groups), with `cfg` in one
    write; returns the update count."""
    plan = reconcile.config_plan(cfg, await read_entries(sw), sw.p4info)
    groups = await budget_tables.group_updates(sw, sorted(cfg.ports))
    updates = [*plan.updates(), *groups]
    if updates:
        await sw.write(updates)
    return len(plan) + len(groups)


async def write_queues(
    sw: fy.Switch,
    settings: Mapping[int, QueueSetting],
    switch: SwitchSettings,
    thrift: ThriftAddress,
) -> None:
    """Set queue depths/rates through the target's thrift runtime, only while `sw`
    is primary: thrift has no arbitration of its own, so P4Runtime's stands in."""
    require_primary(sw, switch)
    await asyncio.to_thread(switch.target_profile.set_queues, settings, thrift)


def _checked(cfg: Config) -> ThriftAddress | None:
    """Everything about `cfg` that needs no switch, checked: the config, the pipeline
    files and names, and where its queue settings would go (the thrift address, or
    one error for a remote switch that names none). That address, or None when the
    config sets no queue."""
    config.check(cfg)
    cfg.pipeline.check(need_config=True)
    check_names(cfg.pipeline)
    queues = reconcile.queue_settings(cfg)
    if not queues:
        return None
    return cfg.switch.queue_thrift(f"port {min(queues)}'s queue_depth/queue_rate")


async def apply(cfg: Config, *, force_push: bool = False) -> int:
    """Push the pipeline (if not already running), write every entry, set queues.

    Everything is checked before anything is written: the config, then the
    P4Runtime handshake (plaintext only where allowed), then, when the config
    sets queues, that the thrift runtime answers and has the ports. Only then
    the pipeline, the entries in one write, and the queues, as primary.
    Returns the number of table updates written (0 when the switch already
    runs `cfg`).
    """
    thrift = _checked(cfg)
    await check_handshake(cfg.switch)
    if thrift is not None:
        await asyncio.to_thread(
            check_ports_exist, sorted(cfg.ports), cfg.switch, thrift, strict=True
        )
    async with connect(cfg.switch, cfg.pipeline, push=True, force=force_push) as sw:
        count = await write_config(sw, cfg)
        count += await budget_tables.write_budgets(sw, cfg)
        if thrift is not None:
            await write_queues(sw, reconcile.queue_settings(cfg), cfg.switch, thrift)
    return count


async def push(settings: SwitchSettings, pipeline: Pipeline, *, force: bool = False) -> None:
    """Install the pipeline (unless the same one already runs, or `force`)."""
    async with connect(settings, pipeline, push=True, force=force):
        pass


async def _check_live_port(
    settings: SwitchSettings, pipeline: Pipeline, port: int, known_ports: list[int] | None
) -> None:
    """Before a live change of one port: the port is the config's (`known_ports`), or
    else one the switch has (where its target can tell); the pipeline's names and the
    P4Runtime handshake check out."""
    if known_ports is not None and port not in known_ports:
        raise ControllerError(
            f"port {port} is not in the config (ports: {', '.join(map(str, known_ports))})"
        )
    check_names(pipeline)
    await check_handshake(settings)
    if known_ports is None:
        await asyncio.to_thread(check_ports_exist, [port], settings, settings.thrift, strict=False)


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
    await _check_live_port(settings, pipeline, port, known_ports)
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


async def set_queue(
    settings: SwitchSettings, *, port: int, depth: int | None = None, rate: int | None = None
) -> str:
    """Set one port's queue depth (packets) and/or rate (packets/s) as the P4Runtime
    primary (thrift has no arbitration); returns what was done."""
    config.check_port_number(port, "port")
    setting = QueueSetting(depth, rate)
    if setting.empty:
        raise ControllerError(f"port {port}: a queue setting needs a depth and/or a rate")
    settings.target_profile.check_queue(setting, f"port {port}")
    thrift = settings.queue_thrift(f"port {port}")
    await check_handshake(settings)
    await asyncio.to_thread(check_ports_exist, [port], settings, thrift, strict=True)
    async with connect(settings, None) as sw:
        await write_queues(sw, {port: setting}, settings, thrift)
    return f"port {port}: queue depth={depth} rate={rate}"


async def keep(cfg: Config, on_event: Callable[[str], None] = LOG.info) -> None:
    """Hold the switch at `cfg` until cancelled.

    Writes only while primary. After every (re)connection as primary, and on
    regaining primary, the pipeline is re-pushed if the switch lost it and all
    state is written again (the plan inserts what a restarted switch lost and
    reverts what another controller changed meanwhile). Losing primary and
    regaining it are logged at WARNING. A write the switch refuses for any
    reason but our not being primary ends it with that one ControllerError.
    """
    thrift = _checked(cfg)
    queues = reconcile.queue_settings(cfg)
    address = cfg.switch.address
    failed: asyncio.Future[ControllerError] = asyncio.get_running_loop().create_future()

    def fail(err: ControllerError) -> None:
        if not failed.done():
            failed.set_result(err)

    async def ready(sw: fy.Switch) -> None:
        if not sw.is_primary:
            LOG.warning(
                "switch %s: backup (primary is election id %s, ours %s); not writing until primary",
                address,
                sw.primary_id,
                sw.election_id,
            )
            return
        try:
            if thrift is not None:
                await asyncio.to_thread(
                    check_ports_exist, sorted(cfg.ports), cfg.switch, thrift, strict=True
                )
            count = await write_config(sw, cfg)
            count += await budget_tables.write_budgets(sw, cfg)
            if thrift is not None:
                await write_queues(sw, queues, cfg.switch, thrift)
        except fy.P4ClientError as err:
            if err.code is not GRPCStatusCode.PERMISSION_DENIED and sw.is_primary:
                fail(ControllerError(refused(err, address)))
            return  # not primary (any more): the backup event says so, and waits
        except ControllerError as err:
            if sw.is_primary:
                fail(err)
            return
        on_event(f"switch {address} ready: {count} updates written")

    def backup(sw: fy.Switch) -> None:
        LOG.warning(
            "switch %s: lost primary to election id %s (ours %s); not writing until primary again",
            address,
            sw.primary_id,
            sw.election_id,
        )

    def primary(sw: fy.Switch) -> None:
        LOG.warning(
            "switch %s: primary again (election id %s); restoring the config",
            address,
            sw.election_id,
        )

    def down(sw: fy.Switch) -> None:
        on_event(f"switch {address} connection lost; reconnecting")

    await check_handshake(cfg.switch)
    opts = options(cfg.switch, cfg.pipeline, push=True, ready_handler=ready)
    sw = fy.Switch("p4incast", address, opts)
    sw.ee.add_listener(fy.SwitchEvent.CHANNEL_DOWN, down)
    sw.ee.add_listener(fy.SwitchEvent.BECOME_BACKUP, backup)
    sw.ee.add_listener(fy.SwitchEvent.BECOME_PRIMARY, primary)
    running = asyncio.create_task(fy.Controller([sw]).run())
    try:
        await asyncio.wait([running, failed], return_when=asyncio.FIRST_COMPLETED)
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
    if failed.done():
        raise failed.result()


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
    await _check_live_port(settings, pipeline, port, known_ports)
    async with connect(settings, pipeline) as sw:
        await budget_tables.write_port(sw, port, budget)
    if budget is None:
        return f"port {port}: budget off"
    shares = share_count(budget.bytes, budget.mss)
    return (
        f"port {port}: budget {budget.bytes} bytes, segments of {budget.mss} "
        f"({shares} shares above one segment), epoch {budget.epoch_ticks} ticks"
    )
