"""The controller's operations: bring a switch to a config, change one port live,
and keep a switch at its config across restarts.

Every operation validates first and then writes in one P4Runtime WriteRequest,
so bad input leaves the switch as it was.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import finsy as fy
from finsy.p4entity import P4UpdateList

from . import entries, p4names, queues
from .config import Config, EcnPolicy, Pipeline, SwitchSettings
from .connection import connect, options
from .errors import ControllerError

LOG = logging.getLogger("p4incast.controller")

_MANAGED_TABLES = (p4names.ROUTES_V4, p4names.ROUTES_V6, p4names.ECN_POLICY)


def desired_entries(cfg: Config) -> list[fy.P4TableEntry]:
    """Every table entry the config asks for (ECN 'off' ports have no entry: OFF is the default)."""
    target = cfg.switch.target_profile
    out = [entries.route_from_config(r, cfg.ports[r.port].mac) for r in cfg.routes]
    for port in sorted(cfg.ports):
        pc = cfg.ports[port]
        if pc.ecn.mode != "off":
            out.append(entries.ecn_policy(port=port, policy=pc.ecn, target=target))
    return out


def _key(entry: fy.P4TableEntry, schema: fy.P4Schema) -> bytes:
    """Identity of an entry: its table and match, encoded."""
    msg = entry.encode(schema).table_entry
    msg.ClearField("action")
    return msg.SerializeToString(deterministic=True)


def _action(entry: fy.P4TableEntry, schema: fy.P4Schema) -> bytes:
    return entry.encode(schema).table_entry.action.SerializeToString(deterministic=True)


async def read_entries(
    sw: fy.Switch, tables: tuple[str, ...] = _MANAGED_TABLES
) -> list[fy.P4TableEntry]:
    found: list[fy.P4TableEntry] = []
    for table in tables:
        async for entry in sw.read(fy.P4TableEntry(table)):
            found.append(entry)
    return found


def diff(
    current: list[fy.P4TableEntry], desired: list[fy.P4TableEntry], schema: fy.P4Schema
) -> list[P4UpdateList]:
    """Updates that turn `current` into `desired`: delete, modify, insert (distinct keys)."""
    cur = {_key(e, schema): e for e in current}
    want = {_key(e, schema): e for e in desired}
    updates: list[P4UpdateList] = []
    for key, entry in cur.items():
        if key not in want:
            updates.append(-entry)
    for key, entry in want.items():
        if key not in cur:
            updates.append(+entry)
        elif _action(cur[key], schema) != _action(entry, schema):
            updates.append(~entry)
    return updates


def check_ports_exist(cfg_ports: list[int], thrift_port: int) -> None:
    """Refuse ports the running BMv2 does not have (when its thrift runtime answers)."""
    try:
        have = queues.switch_ports(thrift_port)
    except ControllerError:
        return  # no thrift: P4Runtime alone cannot list ports; the range check stands
    unknown = [p for p in cfg_ports if p not in have]
    if unknown and have:
        raise ControllerError(
            f"port {unknown[0]} does not exist on the switch (its ports: "
            f"{', '.join(map(str, sorted(have)))})"
        )


async def write_config(sw: fy.Switch, cfg: Config) -> int:
    """Reconcile the managed tables with `cfg` in one write; returns the update count."""
    updates = diff(await read_entries(sw), desired_entries(cfg), sw.p4info)
    if updates:
        await sw.write(updates)
    return len(updates)


def apply_queues(cfg: Config) -> None:
    settings = {
        p: (pc.queue_depth, pc.queue_rate)
        for p, pc in cfg.ports.items()
        if pc.queue_depth is not None or pc.queue_rate is not None
    }
    if settings:
        queues.set_queues(settings, cfg.switch.thrift_port)


async def apply(cfg: Config, *, force_push: bool = False) -> int:
    """Push the pipeline (if not already running), write every entry, set queues."""
    cfg.pipeline.check(need_config=True)
    if any(pc.queue_depth or pc.queue_rate for pc in cfg.ports.values()):
        check_ports_exist(sorted(cfg.ports), cfg.switch.thrift_port)
    async with connect(cfg.switch, cfg.pipeline, push=True, force=force_push) as sw:
        count = await write_config(sw, cfg)
    apply_queues(cfg)
    return count


async def push(settings: SwitchSettings, pipeline: Pipeline, *, force: bool = False) -> None:
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
    """Change one port's ECN policy live; returns what was done."""
    policy.check(settings.target_profile, queue_depth, f"port {port}")
    if known_ports is not None and port not in known_ports:
        raise ControllerError(
            f"port {port} is not in the config (ports: {', '.join(map(str, known_ports))})"
        )
    if known_ports is None:
        check_ports_exist([port], settings.thrift_port)
    async with connect(settings, pipeline) as sw:
        existing = [
            e
            async for e in sw.read(
                fy.P4TableEntry(p4names.ECN_POLICY, match=fy.Match({p4names.PORT_KEY: port}))
            )
        ]
        if policy.mode == "off":
            if existing:
                await sw.write([-existing[0]])
            return f"port {port}: ECN off"
        entry = entries.ecn_policy(port=port, policy=policy, target=settings.target_profile)
        await sw.write([~entry if existing else +entry])
    unit = settings.target_profile.user_unit
    drop = f", drop Not-ECT at {policy.drop_k} {unit}" if policy.drop_k else ""
    return f"port {port}: mark-{policy.mode} at K={policy.k} {unit}{drop}"


async def keep(cfg: Config, on_event: Callable[[str], None] = print) -> None:
    """Hold the switch at `cfg` until cancelled: after every (re)connection the
    pipeline is re-pushed if the switch lost it, and all state is written again."""
    cfg.pipeline.check(need_config=True)

    async def ready(sw: fy.Switch) -> None:
        count = await write_config(sw, cfg)
        try:
            await asyncio.to_thread(apply_queues, cfg)
        except ControllerError as err:
            on_event(f"queues not set: {err}")
        on_event(f"switch {cfg.switch.address} ready: {count} updates written")
        await asyncio.Event().wait()  # cancelled by finsy when the channel drops

    def down(sw: fy.Switch) -> None:
        on_event(f"switch {cfg.switch.address} connection lost; reconnecting")

    opts = options(cfg.switch, cfg.pipeline, push=True, ready_handler=ready)
    sw = fy.Switch("p4incast", cfg.switch.address, opts)
    sw.ee.add_listener(fy.SwitchEvent.CHANNEL_DOWN, down)
    await fy.Controller([sw]).run()
