"""RCC's ACK queue in the simulator's receiver (sim/cpp/rx_agent.h RxAgent).

The same scripted scenarios as tests/agent/test_rcc_conformance.py
(tests/agent/rcc_scenarios.py, expectations worked out by hand from RCC's
Algorithm 1), as real frames through the receiver agent's Ingress (data
arriving at the NIC) and Egress (ACKs leaving it), driven by RccAckQueueProbe
without a network: what leaves, in order, which flows are held, and the bytes
in flight after every step must be what the table says.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agent"))
from rcc_scenarios import CAP, FIN, MSS, SCENARIOS, Q, Scenario

BASES = [0, (1 << 32) - 2500]  # sequence numbers from 1, and wrapping past 2^32


def replay(p4i: Any, sc: Scenario, base: int) -> None:
    probe = p4i.RccAckQueueProbe(Q, MSS)
    names = sorted({st.flow for st in sc.steps})
    idx = {n: i for i, n in enumerate(names)}
    m = 1 << 32
    for i, st in enumerate(sc.steps):
        where = f"{sc.name} step {i} ({st.op} {st.flow} {st.a} {st.b})"
        k = idx[st.flow]
        if st.op == "data":
            probe.Data(k, (st.a + base) % m, st.b, False)
        elif st.op == "peer_fin":
            probe.Data(k, (st.a + base) % m, 0, True)
        elif st.op == "ack":
            probe.Ack(k, (st.a + base) % m, st.b)
        else:
            probe.Fin(k)
        got = [
            (names[f], FIN) if fin else (names[f], int(a), int(w))
            for f, a, w, fin in zip(probe.flow, probe.ack, probe.win, probe.fin, strict=True)
        ]
        want = [o if o[1] == FIN else (o[0], (o[1] + base) % m, o[2]) for o in st.out]
        assert got == want, where
        assert tuple(names[f] for f in probe.Held()) == st.held, where
        assert int(probe.Total()) <= CAP, where
        if st.total is not None:
            assert int(probe.Total()) == st.total, where
        for f, b in st.flight.items():
            assert int(probe.InFlight(idx[f])) == b, f"{where}: flow {f}"
    assert int(probe.agent.maxInFlight) <= CAP


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_ack_queue_model(p4i: Any, sc: Scenario, base: int) -> None:
    replay(p4i, sc, base)


@pytest.mark.parametrize(
    ("name", "counts"),
    [
        # entries b, c, d queued and all sent; c's held ACK replaced once
        ("latest_ack_replaces_the_held_one_in_place", (3, 3, 1, 0, 0)),
        # entries b and a queued; a's superseded by an ACK opening nothing new,
        # b sent; one ACK left early with the window up to a's released RE
        ("nothing_new_supersedes_the_held_ack", (2, 1, 0, 1, 1)),
        # a's entry replaced twice, two of its ACKs sent their released part
        # (the third had nothing below a's released RE); b and a sent
        ("a_waiting_ack_sends_what_opens_nothing_new", (2, 2, 2, 0, 2)),
    ],
)
def test_model_counters(p4i: Any, name: str, counts: tuple[int, ...]) -> None:
    """(held, released, replaced, superseded, splitAcks) as the engine reports them;
    held = released + superseded + still held."""
    sc = next(s for s in SCENARIOS if s.name == name)
    probe = p4i.RccAckQueueProbe(Q, MSS)
    names = sorted({st.flow for st in sc.steps})
    for st in sc.steps:
        k = names.index(st.flow)
        if st.op == "data":
            probe.Data(k, st.a, st.b, False)
        elif st.op == "ack":
            probe.Ack(k, st.a, st.b)
    a = probe.agent
    got = (int(a.held), int(a.released), int(a.replaced), int(a.superseded), int(a.splitAcks))
    assert got == counts
    assert int(a.held) == int(a.released) + int(a.superseded) + int(a.QueueLength())
