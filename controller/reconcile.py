"""What to write: the entries a config asks for, and the updates that bring what
a switch has to them. Pure: app.py reads the switch, calls these, and writes.

The controller owns three tables (`MANAGED_TABLES`) and reconciles them:

    desired = routes (one per config route) + ecn_policy (one per port whose mode
              is not off; no entry means the table's default, set_ecn_policy(OFF, 0, 0))
    plan    = delete   what the switch has and the config does not  (by key)
            + modify   what both have with a different action
            + insert   what the config has and the switch does not

Entries are compared by their P4Runtime encoding (table id + match, then
action), since what a read returns (full names, canonical values) is spelled
differently from what the builders make (aliases, config strings). An apply
whose config the switch already runs writes nothing; after a switch restart
(`apply --keep`) the switch has nothing and the plan inserts everything;
`set-ecn` is the same plan restricted to one port's ecn_policy entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import finsy as fy

from p4incast.model.ecn import EcnMode

from . import entries, p4names
from .config import Config, EcnPolicy
from .targets import QueueSetting, Target

MANAGED_TABLES = (p4names.ROUTES_V4, p4names.ROUTES_V6, p4names.ECN_POLICY)


def desired_entries(cfg: Config) -> list[fy.P4TableEntry]:
    """Every table entry the config asks for: routes in config order, then ECN by port."""
    target = cfg.switch.target_profile
    out = [entries.route_from_config(r, cfg.ports[r.port].mac) for r in cfg.routes]
    for port in sorted(cfg.ports):
        ecn = cfg.ports[port].ecn
        if ecn.ecn_mode is not EcnMode.OFF:
            out.append(entries.ecn_policy(port=port, policy=ecn, target=target))
    return out


def desired_ecn(port: int, policy: EcnPolicy, target: Target) -> list[fy.P4TableEntry]:
    """The ecn_policy entries one port should have: one, or none when the mode is off."""
    if policy.ecn_mode is EcnMode.OFF:
        return []
    return [entries.ecn_policy(port=port, policy=policy, target=target)]


def entry_key(entry: fy.P4TableEntry, schema: fy.P4Schema) -> bytes:
    """Identity of an entry: its table and match, encoded."""
    msg = entry.encode(schema).table_entry
    msg.ClearField("action")
    return msg.SerializeToString(deterministic=True)


def _action(entry: fy.P4TableEntry, schema: fy.P4Schema) -> bytes:
    return entry.encode(schema).table_entry.action.SerializeToString(deterministic=True)


@dataclass
class Plan:
    """Updates to write, by kind; `updates()` gives them in one WriteRequest's order."""

    deletes: list[fy.P4TableEntry] = field(default_factory=list[fy.P4TableEntry])
    modifies: list[fy.P4TableEntry] = field(default_factory=list[fy.P4TableEntry])
    inserts: list[fy.P4TableEntry] = field(default_factory=list[fy.P4TableEntry])

    def __len__(self) -> int:
        return len(self.deletes) + len(self.modifies) + len(self.inserts)

    def updates(self) -> list[fy.P4TableEntry]:
        """Deletes, then modifies, then inserts, each marked (-, ~, +) on a copy:
        finsy marks an entity in place, and the plan's entries stay reusable."""
        return [
            *(-dataclasses.replace(e) for e in self.deletes),
            *(~dataclasses.replace(e) for e in self.modifies),
            *(+dataclasses.replace(e) for e in self.inserts),
        ]


def plan(
    current: Iterable[fy.P4TableEntry], desired: Iterable[fy.P4TableEntry], schema: fy.P4Schema
) -> Plan:
    """The updates that turn the switch's `current` entries into `desired` (distinct keys).

    Entries to delete are the switch's own (as read); entries to insert or
    modify are the desired ones.
    """
    cur = {entry_key(e, schema): e for e in current}
    want = {entry_key(e, schema): e for e in desired}
    out = Plan()
    out.deletes = [e for key, e in cur.items() if key not in want]
    for key, entry in want.items():
        if key not in cur:
            out.inserts.append(entry)
        elif _action(cur[key], schema) != _action(entry, schema):
            out.modifies.append(entry)
    return out


def config_plan(cfg: Config, current: Sequence[fy.P4TableEntry], schema: fy.P4Schema) -> Plan:
    """apply / keep: everything in the managed tables brought to `cfg`."""
    return plan(current, desired_entries(cfg), schema)


def ecn_plan(
    port: int,
    policy: EcnPolicy,
    target: Target,
    current: Sequence[fy.P4TableEntry],
    schema: fy.P4Schema,
) -> Plan:
    """set-ecn: `current` is what the switch has for this port's ecn_policy key."""
    return plan(current, desired_ecn(port, policy, target), schema)


def queue_settings(cfg: Config) -> dict[int, QueueSetting]:
    """The ports with a queue depth and/or rate in the config, by port."""
    return {p: pc.queue for p, pc in sorted(cfg.ports.items()) if not pc.queue.empty}
