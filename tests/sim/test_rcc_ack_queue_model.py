"""RCC's ACK queue in the simulator's receiver (sim/cpp/rx_agent.h RxAgent).

The same scripted scenarios as tests/agent/test_rcc_conformance.py
(tests/agent/rcc_scenarios.py, expectations worked out by hand from seed 002
Alg. 2), as real frames through the receiver agent's Ingress (data arriving
at the NIC) and Egress (ACKs leaving it), driven by RccAckQueueProbe without
a network: what leaves, in order, which flows are held, and the bytes in
flight after every step must be what the table says. The receiver timer's
ACK (Alg. 3 l.7, TimerAck) goes through the same queue.
"""

from __future__ import annotations

import array
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agent"))
from rcc_scenarios import CAP, FIN, MSS, SCENARIOS, Q, Scenario

from p4incast.sim import engine, native

BASES = [0, (1 << 32) - 2500]  # sequence numbers from 1, and wrapping past 2^32


def sent(names: list[str], probe: Any) -> list[tuple]:
    return [
        (names[f], FIN) if fin else (names[f], int(a), int(w))
        for f, a, w, fin in zip(probe.flow, probe.ack, probe.win, probe.fin, strict=True)
    ]


def replay(p4i: Any, sc: Scenario, base: int) -> None:
    probe = p4i.RccAckQueueProbe(Q, MSS, sc.split)
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
        want = [o if o[1] == FIN else (o[0], (o[1] + base) % m, o[2]) for o in st.out]
        assert sent(names, probe) == want, where
        assert tuple(names[f] for f in probe.Held()) == st.held, where
        if st.op in ("ack", "fin"):
            # Alg. 2 l.3: the loop ends with the queue empty or the total at Q·MSS
            assert not st.held or int(probe.Total()) >= CAP, where
        if st.total is not None:
            assert int(probe.Total()) == st.total, where
        for f, b in st.flight.items():
            assert int(probe.InFlight(idx[f])) == b, f"{where}: flow {f}"


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_ack_queue_model(p4i: Any, sc: Scenario, base: int) -> None:
    replay(p4i, sc, base)


@pytest.mark.parametrize(
    ("name", "counts"),
    [
        # b, c, d waited; c's erased by its newer ACK, which waited (replaced);
        # a waited (split), then b (split), then a's newer one erased a's first
        # (replaced) and waited (split): 7 held; b, d, c sent; b and a still held
        ("a_newer_ack_is_erased_and_goes_to_the_tail", (7, 3, 2, 0, 3)),
        # b waited, a's window update waited (split), erased by a's next ACK,
        # which left whole (superseded); b sent
        ("an_ack_opening_nothing_new_leaves_whole", (2, 1, 0, 1, 1)),
    ],
)
def test_model_counters(p4i: Any, name: str, counts: tuple[int, ...]) -> None:
    """(held, released, replaced, superseded, splitAcks) as the engine reports them;
    held = released + replaced + superseded + still held."""
    sc = next(s for s in SCENARIOS if s.name == name)
    probe = p4i.RccAckQueueProbe(Q, MSS, sc.split)
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
    assert int(a.held) == (
        int(a.released) + int(a.replaced) + int(a.superseded) + int(a.QueueLength())
    )


def test_timer_ack_goes_through_the_queue(p4i: Any) -> None:
    """Alg. 3 l.7: the timer's ACK is the flow's latest ACK again, with PSH, under
    the window the policy now gives (1 segment, Alg. 3 l.4), through Alg. 2.
    Q = 4, MSS 1000. a: RE 3001 sent (a counts 2000); b: RE 3001 sent (4000).
    a's sender goes silent: a waits (counts 2000, nothing held). The timer: a's
    ACK (1001) with 1 segment is clamped up to the right edge already offered
    (3001 − 1001 = 2000: a window never moves left, docs/algorithms.md §3.3);
    4000 is not below 4000, so it would wait, but it opens nothing new: it
    leaves whole (D2)."""
    probe = p4i.RccAckQueueProbe(Q, MSS)
    probe.Data(0, 1001, MSS, False)
    probe.Ack(0, 1001, 2000)
    probe.Data(1, 1001, MSS, False)
    probe.Ack(1, 1001, 2000)
    assert int(probe.Total()) == 4000 and bool(probe.Waits(0)) and bool(probe.Waits(1))
    probe.Timer(0, MSS)
    assert sent(["a", "b"], probe) == [("a", 1001, 2000)] and list(probe.psh) == [1]
    assert list(probe.Held()) == [] and int(probe.agent.timerAcks) == 1
    # a's window is the policy's 1 segment now: a's next ACK (2001) offers
    # max(1000, 3001 − 2001) = 1000. Then the policy has regrown it to 3000:
    # b's next data (b 1000, a 1000: 2000 < 4000), a's ACK RE 5001 is sent
    probe.Data(0, 2001, MSS, False)
    probe.Ack(0, 2001, 3000)
    assert sent(["a", "b"], probe) == [("a", 2001, 1000)]
    probe.Data(1, 2001, MSS, False)
    probe.agent.SetUserWindow(p4i.ProbeFlows.KeyOf(0), 3000)
    probe.Ack(0, 2001, 3000)
    assert sent(["a", "b"], probe) == [("a", 2001, 3000)] and int(probe.Total()) == 4000
    # b's ACK (RE 5001) finds 4000: held; a flow with an ACK held does not wait
    probe.Ack(1, 2001, 3000)
    assert list(probe.Held()) == [1]
    assert not bool(probe.Waits(1)) and bool(probe.Waits(0))


def _read_changes(p4i: Any, probe: Any, seen: Any) -> tuple[dict[int, tuple], list[int]]:
    """scenario.h ReadRccChanges on the probe's agent, as sim/engine.py reads it."""
    cap = 64
    cols = (
        *(native.u64_array([0] * cap) for _ in range(3)),
        array.array("d", [0.0] * cap),
        array.array("i", [0] * cap),
        array.array("i", [0] * cap),
    )
    n = int(p4i.ReadRccChanges(probe.agent, seen, *cols, cap))
    assert n <= cap
    keys, pkts, ce, rtt, waits, gone = (c[:n].tolist() for c in cols)
    changed = {
        int(k): (p, c, r, bool(w))
        for k, p, c, r, w, g in zip(keys, pkts, ce, rtt, waits, gone, strict=True)
        if not g
    }
    return changed, [int(k) for k, g in zip(keys, gone, strict=True) if g]


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_rcc_changes_track_every_flow(p4i: Any, sc: Scenario) -> None:
    """What ReadRccChanges reports, applied step by step to the table of the
    previous reads, is every flow's packets, CE, RTT and waits as read one by
    one (RxAgent::Waits): a change of waits with no packet (an ACK held or
    released) is reported though the flows' epoch did not move. Each reported
    flow gets a window written, as the stepper does (LEFT_ALONE: the ACKs of
    the scenario keep their own), so the read may skip its scan."""
    probe = p4i.RccAckQueueProbe(Q, MSS, sc.split)
    agent = probe.agent
    names = sorted({st.flow for st in sc.steps})
    idx = {n: i for i, n in enumerate(names)}
    seen = p4i.RccSeen()
    table: dict[int, tuple] = {}
    for i, st in enumerate(sc.steps):
        k = idx[st.flow]
        if st.op == "data":
            probe.Data(k, st.a, st.b, False)
        elif st.op == "peer_fin":
            probe.Data(k, st.a, 0, True)
        elif st.op == "ack":
            probe.Ack(k, st.a, st.b)
        else:
            probe.Fin(k)
        changed, gone = _read_changes(p4i, probe, seen)
        for g in gone:
            del table[g]
        table.update(changed)
        for key in changed:
            agent.SetUserWindow(key, engine.LEFT_ALONE)
        want = {}
        for key in agent.Keys():
            f = agent.flows[key]
            if f.pkts:
                want[int(key)] = (int(f.pkts), int(f.ce), 0.0, bool(agent.Waits(key)))
        assert table == want, f"{sc.name} step {i} ({st.op} {st.flow})"
