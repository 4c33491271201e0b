"""p4incast-run end to end: a real sweep point on Mininet + BMv2 (when present),
and the one-line refusal when the engine asked for cannot run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from p4incast.controller.config import PortBudget
from p4incast.engines import testbed
from p4incast.engines.bmv2 import ENGINE
from p4incast.model.scheme import Point, Scheme, Transport
from p4incast.topologies.incast import LinkShape

WHY = ENGINE.unavailable()

SMOKE = {
    "name": "smoke",
    "engine": "bmv2",
    "topology": {"queue_pkts": 64, "bottleneck_pps": 2000, "host_mbps": 100},
    "app": {"sru_bytes": 32768, "rounds": 3},
    "senders": [4],
    "schemes": [{"name": "mark-front", "ecn": "front", "k": 12, "cc": "reno"}],
}


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "p4incast.reports.run_cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.bmv2
@pytest.mark.root
@pytest.mark.skipif(WHY is not None, reason=WHY or "")
def test_smoke_sweep_on_bmv2(tmp_path: Path) -> None:
    exp = tmp_path / "smoke.yaml"
    exp.write_text(yaml.safe_dump(SMOKE))
    out = tmp_path / "out"
    proc = run_cli(str(exp), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    first = proc.stdout.splitlines()[0]  # which BMv2 build ran, e.g. the performance one
    assert first.startswith("engine: bmv2 (Mininet + BMv2 ") and "simple_switch_grpc" in first
    data = json.loads((out / "results.json").read_text())
    (run,) = data["runs"]
    assert run["status"] == "ok", run["error"]
    assert [r["round"] for r in run["rounds"]] == [0, 1, 2]
    for r in run["rounds"]:
        assert r["bytes"] == 4 * 32768
        assert r["goodput_bps"] > 0
        assert len(r["fct_s"]) == 4 and all(f > 0 for f in r["fct_s"])
        assert {"timeouts", "retrans", "rto", "completion_s"} <= set(r)
    port = run["switch"]["ports"][run["switch"]["bottleneck_port"]]
    assert port["egress"] >= 3 * 4 * 32768 // 1448  # every data packet crossed the queue
    assert port["ect"] > 0  # ECN was negotiated end to end
    assert (out / "goodput.png").stat().st_size > 0
    assert "mark-front" in proc.stdout and "goodput Mbps" in proc.stdout


def test_engine_that_cannot_run_is_one_clear_line(tmp_path: Path) -> None:
    exp = tmp_path / "e.yaml"
    exp.write_text(yaml.safe_dump(SMOKE))
    proc = run_cli(str(exp), env={"P4INCAST_SIMPLE_SWITCH_GRPC": "/nonexistent"})
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "engine bmv2 requested" in line and "simple_switch_grpc" in line
    assert not (tmp_path / "results").exists()


def test_auto_falling_back_to_the_simulator_runs_every_default_scheme() -> None:
    """The default experiment without BMv2: `auto` takes the simulator, which
    runs all ten schemes, front+rotate (the model's rotation) and front+switch
    (the model's switch budget) included."""
    proc = run_cli(
        str(Path(__file__).parents[2] / "experiments" / "default.yaml"),
        "--check",
        env={"P4INCAST_SIMPLE_SWITCH_GRPC": "/nonexistent"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("engine: sim (ns-3), because simple_switch_grpc")
    assert "left out" not in proc.stdout and not proc.stderr.strip()
    listed = [ln.split()[0] for ln in proc.stdout.splitlines() if ln.startswith("  ")]
    assert len(listed) == 10 and {"front+rotate", "front+switch"} <= set(listed)


@pytest.mark.bmv2
@pytest.mark.root
@pytest.mark.skipif(WHY is not None, reason=WHY or "")
def test_a_scheme_the_engine_cannot_run_is_left_out_and_the_rest_runs(tmp_path: Path) -> None:
    """DCTCP's gain is compiled into the testbed's senders: with another g the
    DCTCP scheme is left out, named with the reason, and the sweep goes on with
    the others; a sweep with nothing left to run is refused."""
    exp = tmp_path / "e.yaml"
    dctcp = {"name": "mark-tail", "ecn": "tail", "k": 12, "cc": "dctcp"}
    base = {**SMOKE, "transport": {"dctcp_g": 0.25}}
    exp.write_text(yaml.safe_dump({**base, "schemes": [*SMOKE["schemes"], dctcp]}))
    proc = run_cli(str(exp), "--check")
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("left out:")]
    assert line.startswith("left out: mark-tail (bmv2 cannot run it: ") and "dctcp_g" in line
    listed = [ln.split()[0] for ln in proc.stdout.splitlines() if ln.startswith("  ")]
    assert listed == ["mark-front"]
    exp.write_text(yaml.safe_dump({**base, "schemes": [dctcp]}))
    proc = run_cli(str(exp), "--check")
    assert proc.returncode == 2 and "dctcp_g" in proc.stderr


def test_budget_on_the_testbed_is_the_queue_at_most_k_and_the_pipe() -> None:
    """The testbed's B (docs/algorithms.md §3.6), worked by hand: a queue of 64
    packets drained at 4000 packets/s, K = 12, the agent's receiver ACKing every
    segment. A base RTT of 0.5 ms holds 4000 × 0.0005 = 2 packets, so B =
    min(64, 12 + 2) = 14 segments = 14 × 1448 = 20272 bytes; 1.17 ms holds 4.68,
    5 whole: 17 × 1448 = 24616. With no drain rate set (BMv2's own speed) the
    pipe is unknown and B is the queue, 64 × 1448 = 92672; with no RTT measured
    the run stops with one error. front+switch's stock receiver delays its ACKs,
    so its switch holds the queue, 92672 (§8); other schemes have none."""
    rotate = Scheme("front+rotate", "front", 12, "reno", agent="newdctcp-budget", rotate=True)
    shape = LinkShape(queue_pkts=64, queue_rate_pps=4000)
    assert testbed.budget_bytes(Point(rotate, 8), shape, 0.5) == 20272
    assert testbed.budget_bytes(Point(rotate, 8), shape, 1.17) == 24616
    free = LinkShape(queue_pkts=64, queue_rate_pps=None)
    assert testbed.budget_bytes(Point(rotate, 8), free, None) == 92672
    with pytest.raises(RuntimeError, match="base RTT"):
        testbed.budget_bytes(Point(rotate, 8), shape, None)
    on_switch = Scheme("front+switch", "front", 12, "reno", switch_budget=True)
    assert testbed.switch_budget(Point(on_switch, 8), shape, 0.5) == PortBudget(bytes=92672)
    assert testbed.switch_budget(Point(on_switch, 8), shape, None) == PortBudget(bytes=92672)
    mark_front = Scheme("mark-front", "front", 12, "newdctcp")
    assert testbed.switch_budget(Point(mark_front, 8), shape, 0.5) is None


def test_bad_experiment_refused_before_running(tmp_path: Path) -> None:
    exp = tmp_path / "e.yaml"
    exp.write_text(yaml.safe_dump({**SMOKE, "senders": [0]}))
    proc = run_cli(str(exp))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"p4incast-run: {exp}: senders: 0 must be an integer >= 1"


@pytest.mark.root
@pytest.mark.skipif(WHY is not None, reason=WHY or "")
def test_failed_run_is_recorded_and_sweep_goes_on(tmp_path: Path) -> None:
    from p4incast.experiments import config, results

    exp = config.parse({**SMOKE, "senders": [65, 2]})
    scheme = exp.schemes[0]
    rs = results.ResultSet(tmp_path, "t", exp.as_dict())
    bad = ENGINE.run(Point(scheme, 65, 0, exp.topology, exp.app), tmp_path / "bad").record()
    assert bad["status"] == "failed" and "outside 1..64" in bad["error"]
    assert (tmp_path / "bad" / "error.txt").read_text().startswith("Traceback")
    good = ENGINE.run(Point(scheme, 2, 0, exp.topology, exp.app), tmp_path / "good").record()
    assert good["status"] == "ok", good["error"]
    rs.add(bad)
    rs.add(good)
    rows = {(r["n"], r["status"]) for r in rs.aggregate()}
    assert rows == {(65, "failed"), (2, "ok")}
    assert "failed" in rs.summary_table()


def test_simulator_only_settings_are_refused_by_name() -> None:
    """Settings the testbed's Linux hosts and BPF senders cannot honour are each one
    problem naming the setting; the testbed's own values pass."""

    def problems(t: Transport) -> list[str]:
        return ENGINE.check(Point(Scheme("x", "front", 12, "reno"), 2, transport=t))

    bad = problems(
        Transport(
            syn_rto_ms=10,
            delack_ms=2,
            mss_bytes=1000,
            min_cwnd_segs=1,
            sack=False,
            adv_window_segs=20,
        )
    )
    assert [p.split(":")[0] for p in bad] == [
        "transport.min_cwnd_segs",
        "transport.delack_ms",
        "transport.mss_bytes",
        "transport.syn_rto_ms",
        "transport.sack",
        "transport.adv_window_segs",
    ]
    assert problems(Transport()) == []


def test_capture_is_refused_where_nothing_can_capture(tmp_path: Path) -> None:
    """--capture keeps packet headers from the testbed's receiver: asked of the
    simulator it is one line saying so, and nothing runs."""
    exp = tmp_path / "smoke.yaml"
    exp.write_text(yaml.safe_dump({**SMOKE, "engine": "sim"}))
    out = run_cli(str(exp), "--capture", "--check", "--out", str(tmp_path / "res"))
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.strip() == (
        "p4incast-run: --capture: only the bmv2 engine, run here, captures"
    )
    assert not (tmp_path / "res").exists()
