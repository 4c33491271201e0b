"""The model past 100 senders (issue 45, item 2): an incast star of N = 300.

300 servers put host addresses past the first /24 (10.1.0.255 and 10.1.1.x)
and give the ToR 301 ports; the test runs a whole point there and checks what
a user reads off it: every server's response arrived in full in every round
(the flows' byte counts, not only the round's end), and the round goodput is
below the link's framing limit (experiments/metrics.py framing_limit_bps). Small
SRU and two rounds keep it to a few seconds.
"""

from __future__ import annotations

from typing import Any

import pytest

from p4incast.engines.sim import ENGINE
from p4incast.experiments.metrics import framing_limit_bps
from p4incast.model.scheme import App, Point, Scheme, Topology, Transport
from p4incast.sim import engine

N = 300  # above the old cap of 100, and past 254 hosts (the first /24)
SRU = 4096
ROUNDS = 2
RESP_HDR = 16  # bytes of application header before each response (scenario.h RESP_HDR)
ROTATE = Scheme("front+rotate", ecn="front", k=20, cc="reno", agent="newdctcp-budget", rotate=True)
DROPTAIL = Scheme("droptail", ecn="off", cc="reno")
# seed003.yaml's transport: IW 1, an ACK per segment, ns-2's 1000-B payloads
SEED003_TCP = Transport(init_cwnd=1, delayed_ack=False, mss_bytes=1000)


def _point(scheme: Scheme, buffer_bytes: int = 65536) -> Point:
    topo = Topology(buffer_bytes=buffer_bytes)
    return Point(scheme, N, topology=topo, app=App(SRU, rounds=ROUNDS))


def test_the_engine_takes_1000_senders() -> None:
    assert ENGINE.check(Point(ROTATE, 1000)) == []
    assert ENGINE.check(Point(ROTATE, 1001)) == ["senders: 1001 above 1000, the simulator's limit"]


def test_every_sender_delivers_at_n_300(p4i: Any) -> None:
    point = _point(ROTATE)
    sc = p4i.Scenario(engine.run_config(point))
    try:
        sc.Setup()
        sc.Advance(sc.cfg.maxSimS)
        assert str(sc.error) == ""
        assert len(sc.results) == ROUNDS
        got = [int(f.got) for f in sc.flows]
        assert len(got) == N
        assert set(got) == {ROUNDS * (RESP_HDR + SRU)}, "a server's response fell short"
    finally:
        p4i.Scenario.Teardown()


def test_goodput_at_n_300_stays_under_the_framing_limit(p4i: Any) -> None:
    limit = framing_limit_bps(1e9)
    for scheme in (ROTATE, DROPTAIL):
        # droptail with a buffer that holds every first flight (300 x IW 10 x 1538 B
        # is 4.6 MB), so its rounds end without waiting 10 ms RTOs
        run = engine.run_point(_point(scheme, 8 << 20 if scheme is DROPTAIL else 65536)).record()
        assert run["status"] == "ok", run["error"]
        assert len(run["rounds"]) == ROUNDS
        for r in run["rounds"]:
            fct = r["fct_s"]
            assert len(fct) == N and all(0 < t < r["completion_s"] + 1e-9 for t in fct)
            mbps = r["goodput_bps"] / 1e6
            assert 0 < r["goodput_bps"] <= limit, f"{scheme.name}: {mbps:.1f} Mbit/s"


def test_a_flow_waits_out_its_retransmissions_before_a_run_is_stuck() -> None:
    # Linux's tcp_retries2 is 15 (ip-sysctl.rst); ns-3 doubles the RTO up to 60 s.
    # rto_min 10 ms: 0.01 s x (1 + 2 + ... + 2^12) = 81.91 s, then 3 waits of 60 s;
    # 200 ms: 0.2 s x (1 + ... + 2^8) = 102.2 s, then 7 waits of 60 s.
    assert engine.TCP_RETRIES2 == 15
    assert engine.give_up_s(10) == pytest.approx(81.91 + 180)
    assert engine.give_up_s(200) == pytest.approx(102.2 + 420)


def test_unscheduled_incast_of_1000_ends_every_round(p4i: Any) -> None:
    """Seed 003's baseline at its largest N (§V-A: 1000 servers, 10 KB each, 32 KB
    port, min RTO 200 ms): flows lose a segment nine times in a row (a 102 s round),
    more than ns-3's default 6 retransmissions allow; with Linux's 15 every server's
    response still arrives."""
    top = Topology(buffer_bytes=32768, rto_min_ms=200)
    app = App(10000, rounds=1, jitter_us=20, connections="per-round")
    point = Point(DROPTAIL, 1000, topology=top, app=app, transport=SEED003_TCP)
    run = engine.run_point(point).record()
    assert run["status"] == "ok", run["error"]
    (r,) = run["rounds"]
    assert len(r["fct_s"]) == 1000 and all(t > 0 for t in r["fct_s"])
    assert 0 < r["goodput_bps"] <= framing_limit_bps(1e9, 1000)


def test_policy_steps_read_in_one_call_run_the_same(p4i: Any, monkeypatch: Any) -> None:
    """ICTCP and RCC read in one call what moved (scenario.h ReadFlowChanges,
    ReadRccChanges) and step only those flows (step_changes); the run is the
    one that reading every flow one by one and the full step give."""
    rcc = Scheme("rcc", ecn="front", k=20, cc="reno", agent="rcc")
    ictcp = Scheme("ictcp", ecn="off", cc="reno", agent="ictcp")
    runs: dict[str, list[dict[str, Any]]] = {}
    for scheme in (rcc, ictcp):
        point = Point(scheme, 16, app=App(32768, rounds=2))
        runs[scheme.name] = [engine.run_point(point).record()]
    init = engine.PolicyStepper.__init__

    def one_by_one(self: engine.PolicyStepper, *args: Any, **kw: Any) -> None:
        init(self, *args, **{**kw, "bulk": None})

    monkeypatch.setattr(engine.PolicyStepper, "__init__", one_by_one)
    for scheme in (rcc, ictcp):
        point = Point(scheme, 16, app=App(32768, rounds=2))
        runs[scheme.name].append(engine.run_point(point).record())
    for name, (bulk, each) in runs.items():
        assert bulk["status"] == "ok", bulk["error"]
        for run in (bulk, each):
            run.pop("wall_s")
        assert bulk == each, name
    assert runs["rcc"][0]["agent"]["ack_queue"]["held"] > 0  # the waits were read
