"""RCC's receiver against its paper's Algorithm 1 (p4incast/policies/rcc.py).

Window assignment [RCC Algorithm 1]: W_i = max(1, ⌊w_i·Q⌋), w_i the flow's
priority share (1/N when priorities are not used), capped at a known flow
size; the spare Q − Σ W_i is handed out one packet at a time, largest share
first, only while priorities are in use. The ACK queue: the reference
AckQueue replays tests/agent/rcc_scenarios.py, whose expectations are worked
out by hand from the rules listed there (the same table runs through the
simulator's receiver in tests/sim/test_rcc_ack_queue_model.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rcc_scenarios import CAP, FIN, MSS, SCENARIOS, Q, Scenario

from p4incast.policies import rcc
from p4incast.policies.rcc import AckQueue, assign_windows

# -- window assignment ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "each"),
    [
        (30, 1),  # ⌊40/30⌋ = 1: Σ = 30, not 40 (no spare without priorities)
        (16, 2),  # ⌊40/16⌋ = 2: Σ = 32
        (50, 1),  # ⌊40/50⌋ = 0 → at least 1: Σ = 50 > Q
        (40, 1),  # Σ = 40
        (3, 13),  # ⌊40/3⌋ = 13: Σ = 39
        (1, 40),
    ],
)
def test_equal_shares_hand_out_no_spare(n: int, each: int) -> None:
    w = assign_windows(range(n), 40)
    assert w == {i: each for i in range(n)}
    assert sum(w.values()) == n * each


def test_spare_goes_one_packet_at_a_time_largest_share_first() -> None:
    # shares 1, 4, 2, 3 (Σ 10) of Q = 13: ⌊1.3⌋ = 1, ⌊5.2⌋ = 5, ⌊2.6⌋ = 2, ⌊3.9⌋ = 3,
    # Σ 11; spare 2: one to b (share 4), one to d (share 3)
    pr = {"a": 1, "b": 4, "c": 2, "d": 3}
    assert assign_windows(pr, 13, priorities=pr) == {"a": 1, "b": 6, "c": 2, "d": 4}
    # the same flows without priorities: ⌊13/4⌋ = 3 each, Σ 12, no spare
    assert assign_windows(pr, 13) == {"a": 3, "b": 3, "c": 3, "d": 3}


def test_spare_ties_go_in_key_order() -> None:
    # equal priorities, Q = 12, N = 5: 2 each, spare 2 → a, b
    pr = dict.fromkeys("abcde", 1)
    assert assign_windows(pr, 12, priorities=pr) == {"a": 3, "b": 3, "c": 2, "d": 2, "e": 2}


def test_spare_skips_flows_at_their_size() -> None:
    # shares 1:1 of Q = 40: 20 each; a's size is 5 → 5; spare 15, a is capped,
    # so b takes all 15 (one packet at a time, every round only b) → 35
    pr = {"a": 1, "b": 1}
    assert assign_windows(pr, 40, sizes={"a": 5}, priorities=pr) == {"a": 5, "b": 35}
    # without priorities the cap applies and nothing is handed out
    assert assign_windows(pr, 40, sizes={"a": 5}) == {"a": 5, "b": 20}


def test_rcc_step_passes_no_priorities() -> None:
    """The agent and the model step Rcc without shares: equal W, no spare."""
    out = rcc.Rcc(rcc.RccParams(mss=MSS, queue_maxsize=40)).step(
        0.0, {k: (0, 0, 1e-4) for k in range(30)}
    )
    assert out == {k: 1 * MSS for k in range(30)}  # Σ = 30 packets


# -- the ACK queue -------------------------------------------------------------------------

BASES = [0, (1 << 32) - 2500]  # sequence numbers from 1, and wrapping past 2^32


def replay(sc: Scenario, base: int) -> None:
    q = AckQueue(Q, MSS)
    m = 1 << 32
    for i, st in enumerate(sc.steps):
        where = f"{sc.name} step {i} ({st.op} {st.flow} {st.a} {st.b})"
        if st.op == "data":
            got = q.data(st.flow, (st.a + base) % m, st.b, mss=MSS)
        elif st.op == "peer_fin":
            got = q.data(st.flow, (st.a + base) % m, 0, mss=MSS, fin=True)
        elif st.op == "ack":
            got = q.ack(st.flow, (st.a + base) % m, st.b)
        else:
            got = q.fin(st.flow)
        want = [o if o[1] == FIN else (o[0], (o[1] + base) % m, o[2]) for o in st.out]
        assert got == want, where
        assert tuple(q.held) == st.held, where
        # never more than Q packets in flight once anything has left
        assert q.total <= CAP, where
        if st.total is not None:
            assert q.total == st.total, where
        for f, b in st.flight.items():
            assert q.in_flight(f) == b, f"{where}: flow {f}"


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_ack_queue_reference(sc: Scenario, base: int) -> None:
    replay(sc, base)


def test_every_latest_ack_leaves() -> None:
    """No ACK is lost: whatever was replaced, each flow's last ACK given to the
    queue is among what leaves, and nothing of a flow leaves after its last one."""
    for sc in SCENARIOS:
        q = AckQueue(Q, MSS)
        last: dict[str, tuple] = {}
        sent: list[tuple] = []
        for st in sc.steps:
            if st.op == "data":
                sent += q.data(st.flow, st.a, st.b, mss=MSS)
            elif st.op == "peer_fin":
                sent += q.data(st.flow, st.a, 0, mss=MSS, fin=True)
            elif st.op == "ack":
                last[st.flow] = (st.flow, st.a, st.b)
                sent += q.ack(st.flow, st.a, st.b)
            else:
                last[st.flow] = (st.flow, FIN)
                sent += q.fin(st.flow)
        assert not q.held, sc.name
        for f, o in last.items():
            assert [x for x in sent if x[0] == f][-1] == o, (sc.name, f)
