"""The rotation's conformance scenarios (tests/agent/rotation_scenarios.py,
expectations worked by hand from docs/algorithms.md §3.6) on the simulator's
receiver: real frames through RxAgent's Ingress and Egress (sim/cpp/
rx_rotation.h), driven by RxRotationProbe without a network, the agent's tick
a second after the last packet. The BPF data path replays the same table
(tests/agent/test_rotation_conformance.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agent"))
from rotation_scenarios import MSS, SCENARIOS, SEG, WS, Scenario

TICK_S = 0.005  # as the BPF runner's rescue
SRTT_S = 0.0001


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_rotation_scenario_on_the_model(p4i: Any, sc: Scenario) -> None:
    probe = p4i.RxRotationProbe(sc.budget_segs * MSS, 2, 1, MSS, WS)
    probe.agent.rot.ackCost = sc.ack_cost
    for n, s in enumerate(sc.steps):
        where = f"{sc.name} step {n} ({s.op} {s.flow})"
        field = None
        if s.op == "open":
            field = int(probe.Open(s.flow))
        elif s.op == "req":
            field = int(probe.Request(s.flow, s.size))
        elif s.op == "data":
            probe.Data(s.flow, s.size, s.ce)
        elif s.op == "ack":
            field = int(probe.Ack(s.flow))
        elif s.op == "tick":
            probe.Tick(1.0, TICK_S, SRTT_S)
        else:
            raise AssertionError(f"unknown step {s.op}")
        grants = tuple(int(g) for g in probe.Granted())
        if s.field is not None:
            assert field == s.field, where
        assert grants == s.grants, where
        assert all(int(f) == SEG for f in probe.grantFields), where  # one segment each
        for i, st in s.states.items():
            assert max(int(probe.State(i)), 0) == st, f"{where}: flow {i}"
        if s.h is not None:
            assert int(probe.H()) == s.h, where
        if s.queue is not None:
            assert tuple(int(q) for q in probe.Queue()) == s.queue, where
