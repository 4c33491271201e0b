"""What the controller writes, decided without a switch (controller/reconcile.py).

desired_entries and queue_settings are pure and run everywhere. The plans
compare entries by their P4Runtime encoding, so they need the p4info that
`make build` writes (skipped with the reason when it is not built); the
switch's side is simulated by encoding and decoding entries as a read returns
them.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, cast

import finsy as fy
import pytest
from finsy.p4entity import encode_updates
from finsy.proto import p4r

from p4incast.controller import config, reconcile
from p4incast.controller.config import EcnPolicy, Pipeline
from p4incast.controller.targets import TNA, V1MODEL, QueueSetting

P4INFO = Pipeline.default().p4info

CFG: dict[str, Any] = {
    "ports": {
        1: {"mac": "00:aa:00:00:00:01"},
        2: {"mac": "00:aa:00:00:00:02", "ecn": {"mode": "tail", "k": 5, "drop_k": 30}},
        3: {
            "mac": "00:aa:00:00:00:03",
            "queue_depth": 64,
            "queue_rate": 1000,
            "ecn": {"mode": "front", "k": 20},
        },
        4: {"mac": "00:aa:00:00:00:04", "queue_depth": 16, "ecn": {"mode": False}},
    },
    "routes": [
        {"prefix": "10.0.3.0/24", "port": 3, "dmac": "00:bb:00:00:00:03"},
        {"prefix": "10.0.1.1/32", "port": 1, "dmac": "00:bb:00:00:00:01"},
        {"prefix": "2001:db8::3/128", "port": 3, "dmac": "00:bb:00:00:00:03"},
    ],
}


def route(table: str, action: str, prefix: str, port: int) -> fy.P4TableEntry:
    return fy.P4TableEntry(
        table,
        match=fy.Match({"dst_addr": prefix}),
        action=fy.Action(
            action, port=port, smac=f"00:aa:00:00:00:0{port}", dmac=f"00:bb:00:00:00:0{port}"
        ),
    )


def ecn(port: int, mode: int, k: int, drop_k: int) -> fy.P4TableEntry:
    return fy.P4TableEntry(
        "ecn_policy",
        match=fy.Match({"port": port}),
        action=fy.Action("set_ecn_policy", mode=mode, k=k, drop_k=drop_k),
    )


def test_desired_entries_v1model_exact() -> None:
    # Routes in config order, then one ecn_policy entry per port whose mode is not
    # off (ports 1 and 4 have none: off is the table's default). K in packets.
    assert reconcile.desired_entries(config.parse(CFG)) == [
        route("routes_v4", "route", "10.0.3.0/24", 3),
        route("routes_v4", "route", "10.0.1.1/32", 1),
        route("routes_v6", "route_v6", "2001:db8::3/128", 3),
        ecn(2, mode=1, k=5, drop_k=30),  # tail
        ecn(3, mode=2, k=20, drop_k=0),  # front
    ]


def test_desired_entries_tna_converts_bytes_to_cells() -> None:
    data = copy.deepcopy(CFG)
    data["switch"] = {"target": "tna"}
    for p in (3, 4):
        del data["ports"][p]["queue_depth"]
    del data["ports"][3]["queue_rate"]
    data["ports"][2]["ecn"] = {"mode": "tail", "k": 1600, "drop_k": 200_000}
    data["ports"][3]["ecn"] = {"mode": "front", "k": 1601}
    assert reconcile.desired_entries(config.parse(data))[3:] == [
        ecn(2, mode=1, k=20, drop_k=2500),  # 1600 B = 20 cells; 200000 B = 2500 cells
        ecn(3, mode=2, k=21, drop_k=0),  # 1601 B rounds up to 21 80-byte cells
    ]


def test_queue_settings_only_ports_that_have_them() -> None:
    assert reconcile.queue_settings(config.parse(CFG)) == {
        3: QueueSetting(depth=64, rate=1000),
        4: QueueSetting(depth=16),
    }


@pytest.fixture(scope="module")
def schema() -> fy.P4Schema:
    if not P4INFO.is_file():
        pytest.skip(f"{P4INFO} not built (`make build` needs p4c-bm2-ss)")
    return fy.P4Schema(P4INFO)


def as_read(entries: list[fy.P4TableEntry], schema: fy.P4Schema) -> list[fy.P4TableEntry]:
    """Entries as a P4Runtime read returns them (canonical values, not config strings)."""
    return [fy.P4TableEntry.decode(e.encode(schema), schema) for e in entries]


def kinds(plan: reconcile.Plan, schema: fy.P4Schema) -> list[int]:
    updates = cast("list[p4r.Update]", encode_updates(plan.updates(), schema))  # no requests
    return [u.type for u in updates]


def test_restarted_switch_gets_everything_inserted(schema: fy.P4Schema) -> None:
    # apply on a fresh switch, and apply --keep after the switch restarted (empty).
    cfg = config.parse(CFG)
    plan = reconcile.config_plan(cfg, [], schema)
    assert plan.inserts == reconcile.desired_entries(cfg)
    assert plan.deletes == [] and plan.modifies == []
    assert kinds(plan, schema) == [p4r.Update.INSERT] * 5


def test_switch_at_the_config_gets_nothing(schema: fy.P4Schema) -> None:
    cfg = config.parse(CFG)
    current = as_read(reconcile.desired_entries(cfg), schema)
    plan = reconcile.config_plan(cfg, current, schema)
    assert len(plan) == 0 and plan.updates() == []


def test_changed_config_deletes_modifies_and_inserts(schema: fy.P4Schema) -> None:
    old = copy.deepcopy(CFG)
    old["routes"].append({"prefix": "10.9.0.0/16", "port": 1, "dmac": "00:bb:00:00:00:01"})
    old["ports"][3]["ecn"]["k"] = 10
    current = as_read(reconcile.desired_entries(config.parse(old)), schema)
    plan = reconcile.config_plan(config.parse(CFG), current, schema)
    assert plan.deletes == as_read([route("routes_v4", "route", "10.9.0.0/16", 1)], schema)
    assert plan.modifies == [ecn(3, mode=2, k=20, drop_k=0)]
    assert plan.inserts == []
    assert kinds(plan, schema) == [p4r.Update.DELETE, p4r.Update.MODIFY]
    # updates() marks copies: the plan can be written again (finsy marks in place).
    assert kinds(plan, schema) == [p4r.Update.DELETE, p4r.Update.MODIFY]


@pytest.mark.parametrize(
    ("before", "policy", "deletes", "modifies", "inserts"),
    [
        (None, EcnPolicy("tail", 4), [], [], [ecn(2, 1, 4, 0)]),
        (ecn(2, 1, 4, 0), EcnPolicy("front", 4, 9), [], [ecn(2, 2, 4, 9)], []),
        (ecn(2, 1, 4, 0), EcnPolicy("tail", 4), [], [], []),
        (ecn(2, 1, 4, 0), EcnPolicy(False), [ecn(2, 1, 4, 0)], [], []),
        (None, EcnPolicy("off"), [], [], []),
    ],
)
def test_set_ecn_plan(
    schema: fy.P4Schema,
    before: fy.P4TableEntry | None,
    policy: EcnPolicy,
    deletes: list[fy.P4TableEntry],
    modifies: list[fy.P4TableEntry],
    inserts: list[fy.P4TableEntry],
) -> None:
    current = as_read([before] if before else [], schema)
    plan = reconcile.ecn_plan(2, policy, V1MODEL, current, schema)
    assert plan.deletes == as_read(deletes, schema)
    assert plan.modifies == modifies and plan.inserts == inserts


def test_set_ecn_plan_tna_in_cells(schema: fy.P4Schema) -> None:
    # Same names on both targets, so TNA entries encode against the v1model p4info.
    plan = reconcile.ecn_plan(2, EcnPolicy("front", 8000, 16000), TNA, [], schema)
    assert plan.inserts == [ecn(2, mode=2, k=100, drop_k=200)]


def test_example_config_plan_matches_its_yaml(schema: fy.P4Schema) -> None:
    cfg = config.load(Path(config.REPO) / "examples" / "switch.yaml")
    plan = reconcile.config_plan(cfg, [], schema)
    assert [e.table_id for e in plan.inserts] == ["routes_v4"] * 3 + ["routes_v6", "ecn_policy"]
    assert plan.inserts[-1] == ecn(3, mode=2, k=20, drop_k=0)
