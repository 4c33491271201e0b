"""The Mininet + BMv2 testbed end to end.

- A scheme's ECN policy reaches the switch through the path `p4incast-ctl
  apply` takes: with mark-front K = 10 the receiver sees CE marks, exactly as
  many as the switch counted; with ECN off it sees none and the switch counts none.
- One incast run (N = 4, 3 rounds, mark-front) through the BMv2 engine.
- The budgeted agent, without and with rotation (captured); the same budget
  held by the ToR (front+switch).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from p4incast.engines.bmv2 import ENGINE, ecn_policy
from p4incast.model.scheme import App, Point, Scheme, Topology

WHY = ENGINE.unavailable()
CE_FILTER = "ip and (ip[1] & 3) = 3"
TOPO = Topology(queue_pkts=64, bottleneck_pps=2000, host_mbps=100)
pytestmark = [
    pytest.mark.bmv2,
    pytest.mark.root,
    pytest.mark.skipif(WHY is not None, reason=WHY or ""),
]


def _ce_on_the_wire(scheme: Scheme, log_dir: Path) -> tuple[int, dict[str, int]]:
    """Two iperf3 senders into the receiver for 2 s under `scheme`'s switch policy:
    (CE-marked packets tcpdump saw arrive at the receiver, the bottleneck port's counters)."""
    from p4incast.engines import testbed  # imports Mininet, which only the testbed needs
    from p4incast.topologies.incast import RECEIVER, receiver_switch

    point = Point(scheme, 2, topology=TOPO, app=App(32768, rounds=1))
    pcap = log_dir / "receiver.pcap"
    with testbed.network(
        "incast_star", 2, spines=1, host_mbps=TOPO.host_mbps, background=False, log_dir=log_dir
    ) as net:
        for h in net.hosts:
            testbed.host_setup(h, TOPO.rto_min_ms)
        configs = testbed.program(net, ecn_policy(scheme), testbed.link_shape(point))
        r = net.get(RECEIVER)
        cap = r.popen(  # CE-marked IPv4 packets (ECN field 11) arriving at the receiver
            ["tcpdump", "-i", r.defaultIntf().name, "-n", "-p", "-U", "-w", str(pcap), CE_FILTER],
            stderr=subprocess.PIPE,
        )
        r.cmd("iperf3 -s -D -p 5202; iperf3 -s -D -p 5203")
        time.sleep(1.0)
        senders = [
            net.get(h).popen(["iperf3", "-c", r.IP(), "-p", str(port), "-t", "2"])
            for h, port in (("h1", 5202), ("h2", 5203))
        ]
        for s in senders:
            s.wait(timeout=30)
        time.sleep(2.0)  # the queue drains and tcpdump writes out what it holds
        cap.send_signal(signal.SIGINT)
        _, err = cap.communicate(timeout=10)
        assert b"\n0 packets dropped by kernel" in err, err
        snap = asyncio.run(testbed.read_stats(configs[receiver_switch(net).name]))
        port = snap["ports"][str(testbed.bottleneck_port(net))]
    out = subprocess.run(
        ["tcpdump", "-r", str(pcap), "-n", CE_FILTER],
        capture_output=True,
        text=True,
        check=True,
    )
    return len(out.stdout.splitlines()), port


def test_k_reaches_the_switch_marks_on_the_wire(tmp_path: Path) -> None:
    ce, port = _ce_on_the_wire(Scheme("front", "front", 10, "reno"), tmp_path)
    assert port["ect"] > 500  # the senders negotiated ECN; traffic crossed the bottleneck
    assert port["marked"] > 0, port
    assert ce == port["marked"] + port["ce_in"], (ce, port)


def test_ecn_off_marks_nothing(tmp_path: Path) -> None:
    ce, port = _ce_on_the_wire(Scheme("droptail", "off", 0, "reno"), tmp_path)
    assert port["ect"] > 500
    assert port["marked"] == 0 and ce == 0, (ce, port)


def test_incast_run_through_the_engine(tmp_path: Path) -> None:
    point = Point(
        Scheme("front", "front", 10, "reno"), 4, topology=TOPO, app=App(32 * 1024, rounds=3)
    )
    res = ENGINE.run(point, tmp_path).record()
    assert res["status"] == "ok", res["error"]
    assert [r["round"] for r in res["rounds"]] == [0, 1, 2]
    for r in res["rounds"]:
        assert r["bytes"] == 4 * 32 * 1024
        assert r["goodput_bps"] > 0 and len(r["fct_s"]) == 4
    tor_port = res["switch"]["ports"][res["switch"]["bottleneck_port"]]
    assert tor_port["egress"] > 4 * 32 * 1024 // 1500  # data packets went through the queue
    assert tor_port["depth"]["packets"] == tor_port["egress"]
    assert res["base_rtt_ms"] is not None and res["base_rtt_ms"] > 0
    # Time dilation from the measured bottleneck: BMv2 drains what it was set to.
    dil = res["dilation"]
    assert dil["measured_pps"] == pytest.approx(TOPO.bottleneck_pps, rel=0.1), dil
    assert 35 < dil["factor"] < 45
    # The queue-depth series was polled while the rounds ran: the three rounds
    # last about 0.2 s, two or three polls of 100 ms, and a poll during which no
    # packet left the queue adds no point, so one point is all a fast run owes.
    series = res["depth_series"]
    assert series and all(0 <= d <= TOPO.queue_pkts for _, d in series)


def test_budget_agent_holds_the_queue_and_sends_full_segments(tmp_path: Path) -> None:
    """newdctcp-budget on 16 senders: the windows of all flows add up to at most
    B, within the queue, so nothing is dropped; each round runs at >= 80 % of the
    framing limit (a handshake window below 2 MSS made Linux send 768-byte
    segments: ~50 %)."""
    scheme = Scheme("budget", "front", 12, "reno", agent="newdctcp-budget")
    point = Point(scheme, 16, topology=TOPO, app=App(32 * 1024, rounds=4))
    res = ENGINE.run(point, tmp_path).record()
    assert res["status"] == "ok", res["error"]
    port = res["switch"]["ports"][res["switch"]["bottleneck_port"]]
    assert port["queue_drops"] == 0 and port["marked"] > 0, port
    limit = TOPO.bottleneck_bps("bmv2") * 1448 / 1538
    rates = [r["goodput_bps"] / limit for r in res["rounds"][1:]]
    assert min(rates) > 0.8, rates


def test_rotation_runs_and_the_capture_shows_it(tmp_path: Path) -> None:
    """front+rotate on 16 senders with `--capture`: no drop, no RTO; the
    receiver's pcap holds the zero windows the rotation sends and the window
    updates it forges; the agent's trace saw flows waiting; the run records
    the agent's CPU; the agent counts each acknowledgment due as one MSS."""
    scheme = Scheme("rotate", "front", 12, "reno", agent="newdctcp-budget", rotate=True)
    point = Point(scheme, 16, topology=TOPO, app=App(32 * 1024, rounds=3))
    res = ENGINE.capturing().run(point, tmp_path).record()
    assert res["status"] == "ok", res["error"]
    port = res["switch"]["ports"][res["switch"]["bottleneck_port"]]
    assert port["queue_drops"] == 0, port
    assert not any(r["rto"] for r in res["rounds"]), res["rounds"]
    assert 0 <= res["agent_cpu"] < 0.5
    acks = subprocess.run(
        ["tcpdump", "-r", str(tmp_path / "receiver.pcap"), "-n", "src", "10.0.0.1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    closed = [a for a in acks if ", win 0," in a]
    assert len(closed) > 16, len(closed)  # turns ended with a zero window
    trace = [json.loads(line) for line in (tmp_path / "rotation.jsonl").read_text().splitlines()]
    assert any(2 in t["states"].values() for t in trace)  # flows waited their turn
    log = (tmp_path / "agent.log").read_text()
    passed = int(log.split("rotation: ")[1].split(" slots passed on")[0])
    assert passed > 16, log[-400:]
    # BMv2's queue counts packets: an acknowledgment due takes a whole slot,
    # one MSS of B (docs/algorithms.md §3.6, "Acknowledgments due")
    assert "ack cost 1448 bytes" in log, log[-400:]


def test_front_switch_holds_the_budget_in_the_tor(tmp_path: Path) -> None:
    """front+switch on 16 senders, no agent: the ToR reads every receiver SYN and
    holds every ACK of the receiver to its share (docs/algorithms.md §8: B = 64
    segments, N = 16, share 4 segments, window scale 3: 724 units, below the
    receiver's own), and no round has an RTO, the first included: every
    persistent connection is counted from its handshake, before the first
    request (§8, "Flows and N"). Untracked: at most the receiver's last ACK of
    each flow, after its own FIN closed the flow."""
    scheme = Scheme("front+switch", "front", 12, "reno", switch_budget=True)
    point = Point(scheme, 16, topology=TOPO, app=App(32 * 1024, rounds=3))
    res = ENGINE.run(point, tmp_path).record()
    assert res["status"] == "ok", res["error"]
    assert not any(r["rto"] for r in res["rounds"]), res["rounds"]
    budget = res["switch"]["budget"][res["switch"]["bottleneck_port"]]
    assert budget["untracked"] <= 16 and budget["unknown_scale"] == 0, budget
    # Every flow counted (none refused a slot), once per epoch it sent in: the
    # run lasts less than two epochs of 134 s.
    assert 16 <= budget["flow_epochs"] <= 32, budget
    assert budget["acks"] > 16 * 3 and budget["rewritten"] > 0.9 * budget["acks"], budget
    assert res["agent_cpu"] is None  # no agent ran
