"""front+rotate at N = 1000 in a 32 KB buffer (issue 45, item 3): the rotation's
promise — no RTO round at any N — on the model, cheaply (small responses, two
rounds; a few CPU seconds).

Two things broke it past N = 200 (docs/algorithms.md §3.6, "Acknowledgments
due"; sim/MODEL.md, the senders' departure 4): the pure ACKs our N requests
bring back, which B did not count, overflowed the queue behind the holders'
first flight; and ns-3's senders timed out on nothing in flight while their
window was closed for longer than the minimum RTO (a turn comes round every
~12 ms at N = 1000). The second test keeps the first cause in view: with the
acknowledgments due left out of H's ceiling (ack_cost 0), the same point's
first round drops and times out.
"""

from __future__ import annotations

from typing import Any

from p4incast.experiments.metrics import framing_limit_bps
from p4incast.model.scheme import App, Point, Scheme, Topology
from p4incast.sim import engine

ROTATE = Scheme("front+rotate", ecn="front", k=20, cc="reno", agent="newdctcp-budget", rotate=True)
N = 1000
BUFFER = 32768  # 21 full frames: one segment per flow overflows it 47 times over
SRU = 8192  # 6 segments per server: each flow waits for its turn ~6 times a round
ROUNDS = 2


def _point() -> Point:
    return Point(ROTATE, N, topology=Topology(buffer_bytes=BUFFER), app=App(SRU, rounds=ROUNDS))


def test_rotation_holds_1000_senders_in_32_kb() -> None:
    run = engine.run_point(_point()).record()
    assert run["status"] == "ok", run["error"]
    assert len(run["rounds"]) == ROUNDS
    limit = framing_limit_bps(1e9)
    for r in run["rounds"]:
        assert r["timeouts"] == 0, f"round {r['round']}: {r['timeouts']} RTOs"
        assert r["queue"]["drops"] == 0, f"round {r['round']}: {r['queue']['drops']} drops"
        # the target (the request train costs ~2 % of a 6-segment round)
        assert r["goodput_bps"] >= 0.95 * limit, f"{r['goodput_bps'] / 1e6:.1f} Mbit/s"


def test_first_round_holds_500_senders_in_256_kb() -> None:
    """The first round at N = 500 in 256 KB (173 full frames), where B is deep
    against the request train (docs/algorithms.md §3.6, "H's start"): H starts
    at min(500, (250504 - 500 x 64) // 1448) = 150, so its 150 segments and
    500 acknowledgments fit the buffer, and the rescue ticks on the agent's
    5 ms. Before both (H's start at the ceiling of the acknowledgments due,
    the rescue every base RTT) this round dropped 483 segments, each an RTO."""
    point = Point(ROTATE, 500, topology=Topology(buffer_bytes=262144), app=App(SRU, rounds=1))
    assert engine.run_config(point).agentTickS == 0.005  # the agent's interval_ms
    run = engine.run_point(point).record()
    assert run["status"] == "ok", run["error"]
    (r,) = run["rounds"]
    assert r["timeouts"] == 0 and r["queue"]["drops"] == 0, r["queue"]
    assert r["goodput_bps"] >= 0.95 * framing_limit_bps(1e9), r["goodput_bps"]


def test_without_acknowledgments_due_the_request_acks_overflow(p4i: Any) -> None:
    c = engine.run_config(_point())
    assert c.agentAckCost == 64  # 1448 x 66 / 1514, rounded up (p4incast.model.scheme)
    c.agentAckCost = 0
    sc = p4i.Scenario(c)
    try:
        sc.Setup()
        sc.Advance(c.maxSimS)
        assert str(sc.error) == ""
        assert len(sc.results) == ROUNDS
        # the first round, H at its ceiling min(F, B / MSS) = 21 (later rounds
        # start from the H the marks left)
        first = sc.results[0]
        assert int(first.drops) > 0 and int(first.timeouts) > 0
    finally:
        p4i.Scenario.Teardown()
