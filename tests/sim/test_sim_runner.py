"""p4incast-run on the ns-3 engine: same runner, same result files as BMv2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from p4incast.engines.sim import ENGINE
from p4incast.experiments import config, results, runner
from p4incast.experiments.executors import Sequential
from p4incast.model.scheme import (
    Point,
    Scheme,
    Topology,
    Transport,
    pipe_frames,
    rx_budget_bytes,
)
from p4incast.sim.engine import budget_bytes

WHY = ENGINE.unavailable()


@pytest.mark.skipif(WHY is not None, reason=f"simulator: {WHY}")
def test_sim_engine_through_the_runner(tmp_path: Path) -> None:
    exp = {
        "name": "simsmoke",
        "engine": "sim",
        "app": {"sru_bytes": 65536, "rounds": 2},
        "senders": [2, 8],
        "variants": {"topology.buffer_bytes": [65536, 262144]},
        "schemes": [{"name": "mark-front", "ecn": "front", "k": 20, "cc": "newdctcp"}],
    }
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(exp))
    proc = subprocess.run(
        [sys.executable, "-m", "p4incast.reports.run_cli", str(path), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[0] == "engine: sim (ns-3)"
    for variant in ("simsmoke-buf64k", "simsmoke-buf256k"):
        data = json.loads((tmp_path / "o" / variant / "results.json").read_text())
        assert sorted(r["n"] for r in data["runs"]) == [2, 8]
        for run in data["runs"]:
            assert run["status"] == "ok", run["error"]
            assert run["engine"] == "sim" and len(run["rounds"]) == 2
            assert all(r["goodput_bps"] > 0 for r in run["rounds"])
            port = run["switch"]["ports"][run["switch"]["bottleneck_port"]]
            assert port["marked"] > 0  # N=8 x 64 KB bursts cross K = 20
        assert (tmp_path / "o" / variant / "goodput.png").stat().st_size > 0


def test_testbed_only_settings_are_refused_by_name() -> None:
    """Linux's tail-loss probe is a testbed ablation: the model has none, so a
    point asking for it is one problem naming the setting, not a silent run."""
    point = Point(Scheme("x", "front", 12, "reno"), 2, transport=Transport(tail_loss_probe=True))
    assert [p.split(":")[0] for p in ENGINE.check(point)] == ["transport.tail_loss_probe"]
    assert ENGINE.check(Point(Scheme("x", "front", 12, "reno"), 2)) == []


def test_a_point_two_experiments_share_runs_once(p4i: Any, tmp_path: Path) -> None:
    """An ablation's baseline rows are often a paper preset's points: the sweep runs
    each identical point once and gives both experiments its record."""
    base = {
        "engine": "sim",
        "app": {"sru_bytes": 16384, "rounds": 2},
        "schemes": [{"name": "tcp", "ecn": "off", "cc": "reno"}],
    }
    paper = config.parse({**base, "name": "paper", "senders": [2]})
    ablation = config.parse({**base, "name": "ablation", "senders": [2, 4]})
    dirs = [tmp_path / "paper", tmp_path / "ablation"]
    sets = runner.run_experiments([paper, ablation], ENGINE, dirs, 1, executor=Sequential(ENGINE))
    (mine,) = sets[0].runs
    by_n = {r["n"]: r for r in sets[1].runs}
    assert sorted(by_n) == [2, 4] and mine["status"] == by_n[4]["status"] == "ok"
    # the very run, wall time and all (a second run would have its own wall time)
    assert by_n[2] == {**mine, results.SHARED_FROM: "paper"}
    assert results.SHARED_FROM not in mine and results.SHARED_FROM not in by_n[4]
    on_disk = json.loads((dirs[1] / "results.json").read_text())["runs"]
    assert sorted(r.get(results.SHARED_FROM, "") for r in on_disk) == ["", "paper"]


def test_budget_is_the_queue_at_most_k_and_the_pipe() -> None:
    """newdctcp-budget's B (docs/algorithms.md §3.6): the full frames the
    bottleneck's queue holds, at most K plus the pipe, × MSS. Worked by hand: a
    1448-byte MSS with timestamps is a 1514-byte frame (1448 + 12 + 20 + 20 +
    14); a 65536-byte port holds 65536 // 1514 = 43 of them. The model's
    unloaded RTT at 25 µs links is 4 × 25 µs plus a full frame (1538 bytes on
    the wire, 12.304 µs at 1 Gbit/s) and an ACK (84 bytes, 0.672 µs) twice:
    125.952 µs, which holds 125.952 / 12.304 = 10.24 frames, 11 whole. With
    K = 20, B = min(43, 20 + 11) = 31 frames = 31 × 1448 = 44888 bytes. At
    250 µs links the pipe is (1000 + 25.952) / 12.304 = 83.4, 84 frames, and the
    queue binds: 43 × 1448 = 62264. A port that does not mark (K = 0), and a
    receiver that delays its ACKs (front+switch's stock host), leave B the
    queue: 64 × 1448 = 92672; transport.rx_budget_pkts: 40 overrides all:
    40 × 1448 = 57920."""
    rotate = Scheme("front+rotate", "front", 20, "reno", agent="newdctcp-budget", rotate=True)
    on_switch = Scheme("front+switch", "front", 20, "reno", switch_budget=True)
    for delay_us, frames in ((25, 31), (250, 43)):
        topo = Topology(buffer_bytes=65536, link_gbps=1.0, delay_us=delay_us)
        assert budget_bytes(Point(rotate, 64, topology=topo)) == frames * 1448
        assert budget_bytes(Point(on_switch, 64, topology=topo)) == 43 * 1448
    assert pipe_frames(1e9 / (8 * 1538), 125.952e-6) == 11
    assert rx_budget_bytes(Transport(), 64, 0, 11, False) == 92672
    assert rx_budget_bytes(Transport(), 64, 20, 11, True) == 92672
    assert rx_budget_bytes(Transport(), 64, 20, 11, False) == 31 * 1448
    assert rx_budget_bytes(Transport(rx_budget_pkts=40), 64, 20, 11, False) == 57920
