"""RCC's receiver against its paper, seed 002 (p4incast/policies/rcc.py).

Window assignment [seed 002 Alg. 1]: W_i = max(1, ⌊w_i·Q⌋), w_i the flow's
priority share (1/N when priorities are not used), capped at a known flow
size only with priorities (l.5); the spare Q − Σ W_i is handed out one
packet at a time, only while priorities are in use (l.11). The ACK queue
[Alg. 2]: the reference AckQueue replays tests/agent/rcc_scenarios.py,
whose expectations are worked out by hand from the paper's text (the same
table runs through the simulator's receiver and the BPF data path). The
receiver's retransmission timer [§4.5, Alg. 3]: RxTimer and Rcc, worked
by hand below.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rcc_scenarios import CAP, FIN, MSS, SCENARIOS, Q, Scenario

from p4incast.policies import rcc
from p4incast.policies.config import NO_RTT_LIMIT_US, data_path_rtt_limit_us
from p4incast.policies.rcc import AckQueue, Rcc, RccParams, RxTimer, assign_windows

# -- window assignment ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "each"),
    [
        (30, 1),  # ⌊40/30⌋ = 1: Σ = 30, not 40 (no spare without priorities, Alg. 1 l.11)
        (16, 2),  # ⌊40/16⌋ = 2: Σ = 32
        (50, 1),  # ⌊40/50⌋ = 0 → 1 (l.4): Σ = 50 > Q
        (40, 1),  # Σ = 40
        (3, 13),  # ⌊40/3⌋ = 13: Σ = 39
        (1, 40),
    ],
)
def test_equal_shares_hand_out_no_spare(n: int, each: int) -> None:
    w = assign_windows(range(n), 40)
    assert w == {i: each for i in range(n)}
    assert sum(w.values()) == n * each


def test_spare_goes_one_packet_at_a_time_from_the_lowest_priority() -> None:
    # shares 1, 4, 2, 3 (Σ 10) of Q = 13: ⌊1.3⌋ = 1, ⌊5.2⌋ = 5, ⌊2.6⌋ = 2, ⌊3.9⌋ = 3
    # (Alg. 1 l.3), Σ 11; sorted highest first b, d, c, a (l.1), the spare 2 goes
    # from the end (l.10, l.15, l.17): a, then c
    pr = {"a": 1, "b": 4, "c": 2, "d": 3}
    assert assign_windows(pr, 13, priorities=pr) == {"a": 2, "b": 5, "c": 3, "d": 3}
    # the same flows without priorities: ⌊13/4⌋ = 3 each, Σ 12, no spare
    assert assign_windows(pr, 13) == {"a": 3, "b": 3, "c": 3, "d": 3}


def test_spare_ties_are_walked_in_reverse_key_order() -> None:
    # equal priorities, Q = 12, N = 5: 2 each, spare 2; ties sorted in key order
    # (our choice), walked from the end (Alg. 1 l.10, l.17) → e, d
    pr = dict.fromkeys("abcde", 1)
    assert assign_windows(pr, 12, priorities=pr) == {"a": 2, "b": 2, "c": 2, "d": 3, "e": 3}


def test_a_flow_within_one_packet_of_its_size_takes_no_spare() -> None:
    pr = {"a": 1, "b": 1}
    # Q = 11: ⌊5.5⌋ = 5 each (Alg. 1 l.3), under both sizes (l.5); spare 1, from
    # the end (l.10): b, 5 far from 20 (l.12), takes it
    assert assign_windows(pr, 11, sizes={"a": 6, "b": 20}, priorities=pr) == {"a": 5, "b": 6}
    # Q = 17: 8 each, a capped at its 8; spare 1: b, whose size is not given, takes it
    assert assign_windows(pr, 17, sizes={"a": 8}, priorities=pr) == {"a": 8, "b": 9}
    # Q = 25: 12 each (a's size 12, b's 13); spare 1: b is within one packet of
    # its size, a at it (l.12): no flow takes it (l.13) and it stays unused
    assert assign_windows(pr, 25, sizes={"a": 12, "b": 13}, priorities=pr) == {"a": 12, "b": 12}


def test_the_size_cap_needs_priorities() -> None:
    # shares 1:1 of Q = 40: 20 each; a's size is 5 → 5 (Alg. 1 l.5–6); spare 15, a
    # is capped, so b takes all 15 (one packet at a time, every round only b) → 35
    pr = {"a": 1, "b": 1}
    assert assign_windows(pr, 40, sizes={"a": 5}, priorities=pr) == {"a": 5, "b": 35}
    # without priorities l.5 does not apply: a keeps ⌊40/2⌋ = 20 whatever its size
    assert assign_windows(pr, 40, sizes={"a": 5}) == {"a": 20, "b": 20}


def test_rcc_step_passes_no_priorities() -> None:
    """The agent and the model step Rcc without shares: equal W, no spare."""
    out = rcc.Rcc(rcc.RccParams(mss=MSS, queue_maxsize=40)).step(
        0.0, {k: (0, 0, 1e-4) for k in range(30)}
    )
    assert out == {k: 1 * MSS for k in range(30)}  # Σ = 30 packets


def test_rcc_has_no_rtt_limit() -> None:
    """Seed 002 controls every flow of the NIC (§4.1: info holds all flows): a
    flow whose RTT is 50 ms gets its share like one at 100 µs."""
    out = Rcc(RccParams(mss=MSS, queue_maxsize=40)).step(
        0.0, {"near": (1, 0, 1e-4), "far": (1, 0, 50e-3)}
    )
    assert out == {"near": 20 * MSS, "far": 20 * MSS}
    # and the data path leaves no rcc flow alone for its RTT (FL_SLOW never set)
    assert data_path_rtt_limit_us("rcc", 2000) == NO_RTT_LIMIT_US == (1 << 32) - 1
    assert data_path_rtt_limit_us("ictcp", 2000) == 2000


# -- the receiver's retransmission timer ----------------------------------------------------


def test_rx_timer_fires_after_rto_r_and_doubles() -> None:
    """RTO^r = 10 ms (§6). The flow waits for data from t = 0: it fires at 10 ms,
    RTO^r doubles (Alg. 3 l.6), so next at 10 + 20 = 30 ms; a packet at 35 ms
    restarts it at 10 ms: next at 45 ms. While the flow does not wait (no data
    expected, or an ACK of it held) it never fires."""
    t = RxTimer(rto_s=10e-3)
    assert t.step(0.0, {"a": (5, True), "b": (5, False)}) == []
    assert t.step(9.9e-3, {"a": (5, True), "b": (5, False)}) == []
    assert t.step(10e-3, {"a": (5, True), "b": (5, False)}) == ["a"]
    assert t.timers["a"].rto == pytest.approx(20e-3)
    assert t.step(29.9e-3, {"a": (5, True), "b": (5, False)}) == []
    assert t.step(30e-3, {"a": (5, True), "b": (5, False)}) == ["a"]
    assert t.step(35e-3, {"a": (6, True), "b": (5, False)}) == []  # a packet: restart
    assert t.timers["a"].rto == pytest.approx(10e-3)
    assert t.step(44.9e-3, {"a": (6, True), "b": (5, False)}) == []
    assert t.step(45.01e-3, {"a": (6, True), "b": (5, False)}) == ["a"]
    # b starts waiting at 50 ms: its 10 ms count from there
    assert t.step(50e-3, {"a": (7, False), "b": (5, True)}) == []
    assert t.step(59.9e-3, {"a": (7, False), "b": (5, True)}) == []
    assert t.step(60.01e-3, {"a": (7, False), "b": (5, True)}) == ["b"]


def test_rcc_timeout_sets_one_segment_then_slow_start_to_ssthresh() -> None:
    """Q = 40, one flow: W = 40. It times out at 10 ms: ssthresh = max(2, 40/2) =
    20 (Alg. 3 l.3), rwnd = 1 (l.4). Then per RTT (100 µs) without CE: slow start
    below ssthresh (§4.3, NewReno) 2, 4, 8, 16, 20 (capped at ssthresh), then
    one packet per RTT: 21, 22 (stepped every 150 µs: one RTT each)."""
    r = Rcc(RccParams(mss=MSS, queue_maxsize=40, rto_r_s=10e-3))
    assert r.step(0.0, {"a": (10, 0, 1e-4)}, waits={"a": True}) == {"a": 40 * MSS}
    assert r.fired == []
    assert r.step(10e-3, {"a": (10, 0, 1e-4)}, waits={"a": True}) == {"a": 1 * MSS}
    assert r.fired == ["a"]
    got = []
    for i in range(1, 8):
        got.append(r.step(10e-3 + i * 1.5e-4, {"a": (10 + i, 0, 1e-4)}, waits={"a": True})["a"])
    assert got == [m * MSS for m in (2, 4, 8, 16, 20, 21, 22)]


def test_rcc_timeout_ssthresh_floor_is_two() -> None:
    """With 40 flows W = 1: ssthresh = max(2, 1/2) = 2 (Alg. 3 l.3); rwnd 1, and it
    regrows to W = 1 at most (the assignment bounds it)."""
    r = Rcc(RccParams(mss=MSS, queue_maxsize=40, rto_r_s=10e-3))
    c = {k: (1, 0, 1e-4) for k in range(40)}
    w = dict.fromkeys(range(40), False)
    r.step(0.0, c, waits=w | {0: True})
    assert r.step(10e-3, c, waits=w | {0: True})[0] == 1 * MSS
    assert r.fired == [0] and r.state[0].ssthresh == 2


def test_rcc_without_the_timer() -> None:
    """rto_r_s = 0 (the ablation), or no `waits` given: nothing times out."""
    r = Rcc(RccParams(mss=MSS, queue_maxsize=40, rto_r_s=0))
    r.step(0.0, {"a": (10, 0, 1e-4)}, waits={"a": True})
    assert r.step(1.0, {"a": (10, 0, 1e-4)}, waits={"a": True}) == {"a": 40 * MSS}
    r = Rcc(RccParams(mss=MSS, queue_maxsize=40))
    r.step(0.0, {"a": (10, 0, 1e-4)})
    assert r.step(1.0, {"a": (10, 0, 1e-4)}) == {"a": 40 * MSS} and r.fired == []


# -- the ACK queue -------------------------------------------------------------------------

BASES = [0, (1 << 32) - 2500]  # sequence numbers from 1, and wrapping past 2^32


def replay(sc: Scenario, base: int) -> None:
    q = AckQueue(Q, MSS, split=sc.split)
    m = 1 << 32
    for i, st in enumerate(sc.steps):
        where = f"{sc.name} step {i} ({st.op} {st.flow} {st.a} {st.b})"
        got: list[tuple] = []
        if st.op == "data":
            q.data(st.flow, (st.a + base) % m, st.b, mss=MSS)
        elif st.op == "peer_fin":
            q.data(st.flow, (st.a + base) % m, 0, mss=MSS, fin=True)
        elif st.op == "ack":
            got = q.ack(st.flow, (st.a + base) % m, st.b)
        else:
            got = q.fin(st.flow)
        want = [o if o[1] == FIN else (o[0], (o[1] + base) % m, o[2]) for o in st.out]
        assert got == want, where
        assert tuple(q.held) == st.held, where
        if st.op in ("ack", "fin"):
            # Alg. 2 l.3: the loop ends with the queue empty or the total at Q·MSS
            assert not q.held or q.total >= CAP, where
        if st.total is not None:
            assert q.total == st.total, where
        for f, b in st.flight.items():
            assert q.in_flight(f) == b, f"{where}: flow {f}"


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_ack_queue_reference(sc: Scenario, base: int) -> None:
    replay(sc, base)


def test_data_sends_nothing() -> None:
    """§4.2: data lowers the count; only an ACK the receiver sends runs Alg. 2."""
    q = AckQueue(Q, MSS)
    q.data("a", 1001, MSS, mss=MSS)
    assert q.ack("a", 1001, 4000) == [("a", 1001, 4000)]
    q.data("b", 1001, MSS, mss=MSS)
    assert q.ack("b", 1001, 1000) == []
    assert q.data("a", 2001, MSS, mss=MSS) is None and q.held == ["b"] and q.total == 3000


def test_every_latest_ack_of_a_live_flow_leaves_or_waits() -> None:
    """No ACK is lost but by Alg. 2 l.1 (a newer ACK of the flow takes its place):
    with the split, what is still held at a scenario's end is each such flow's
    latest ACK."""
    for sc in SCENARIOS:
        q = AckQueue(Q, MSS, split=sc.split)
        last: dict[str, tuple] = {}
        for st in sc.steps:
            if st.op == "data":
                q.data(st.flow, st.a, st.b, mss=MSS)
            elif st.op == "peer_fin":
                q.data(st.flow, st.a, 0, mss=MSS, fin=True)
            elif st.op == "ack":
                last[st.flow] = (st.flow, st.a, st.b)
                q.ack(st.flow, st.a, st.b)
            else:
                q.fin(st.flow)
        for h in q.queue:
            if not h.after:
                assert (h.flow, h.ack, h.window) == last[str(h.flow)], sc.name
