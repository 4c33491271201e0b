"""RCC's at-scale scenario on the ns-3 model (sim/cpp/atscale.h, p4incast/sim/atscale.py,
experiments/atscale.py and the shared runner), on a fabric small enough for CI: every flow is
delivered no faster than the links allow, the run is a function of its seed,
the receiver policies act at every aggregator, and the preset runs, resumes
and reports from the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from p4incast.experiments import results
from p4incast.experiments.atscale import load as load_preset
from p4incast.experiments.atscale_summary import AtScaleResultSet
from p4incast.model.atscale import AtScalePoint, Fabric, Traffic, plan
from p4incast.model.scheme import Scheme, Transport
from p4incast.model.wire import MSS_BYTES, WIRE_FRAME_BYTES
from p4incast.sim.atscale import base_rtt_s, run_point

REPO = Path(__file__).resolve().parents[2]
PRESET = REPO / "experiments" / "papers" / "rcc-at-scale.yaml"
FABRIC = Fabric(tors=4, hosts_per_tor=5)
TRAFFIC = Traffic(aggregators=2, short_flows=150, background_flows=2, background_bytes=1_000_000)
RCC_SETTINGS = Transport(init_cwnd=1, delayed_ack=False)
TCP = Scheme("tcp")


def point(scheme: Scheme, load: float, repeat: int = 0) -> AtScalePoint:
    return AtScalePoint(scheme, load, repeat, FABRIC, TRAFFIC, RCC_SETTINGS)


@pytest.fixture(scope="module")
def tcp_run(p4i: Any) -> dict[str, Any]:
    return run_point(point(TCP, 0.7))


def test_every_flow_arrives_no_faster_than_the_links_allow(tcp_run: dict[str, Any]) -> None:
    rec = tcp_run
    assert rec["status"] == "ok", rec["error"]
    fl = plan(FABRIC, TRAFFIC, 0.7, seed=1)
    assert len(rec["fct_ms"]) == len(fl.short) and None not in rec["fct_ms"]
    rtt = base_rtt_s(FABRIC)
    for fct_ms, nbytes in zip(rec["fct_ms"], rec["short_bytes"], strict=True):
        # handshake (one RTT), then the bytes at 1 Gbit/s in full frames, half an RTT to arrive
        floor = 1.5 * rtt + 8 * nbytes * WIRE_FRAME_BYTES / MSS_BYTES / 1e9
        assert fct_ms / 1e3 >= 0.98 * floor, (fct_ms, nbytes)
    # the background flows share an aggregator's 1 Gbit/s link with the short flows
    assert all(0 < x < 1000 * MSS_BYTES / WIRE_FRAME_BYTES for x in rec["long_mbps"])
    # drop-tail incast at the aggregators' ports, nothing lost on the 25 Gbit/s root
    assert rec["drops"]["aggregator_ports"] > 0
    assert rec["drops"]["tor"] >= rec["drops"]["aggregator_ports"]
    assert rec["drops"]["root"] == 0
    assert rec["short_timeouts"] > 0


def test_a_point_is_a_function_of_its_seed(tcp_run: dict[str, Any]) -> None:
    again = run_point(point(TCP, 0.7))
    keep = ("fct_ms", "drops", "long_mbps", "short_timeouts", "sim_s")
    assert {k: again[k] for k in keep} == {k: tcp_run[k] for k in keep}
    other = run_point(point(TCP, 0.7, repeat=1))
    assert other["fct_ms"] != tcp_run["fct_ms"]


@pytest.mark.parametrize(
    "scheme",
    [
        Scheme("rcc", "tail", 40, "reno", "rcc"),
        Scheme("ictcp", "off", 0, "reno", "ictcp"),
        Scheme("budget", "front", 40, "reno", "newdctcp-budget"),
    ],
    ids=lambda s: s.name,
)
def test_receiver_policies_act_at_every_aggregator(tcp_run: dict[str, Any], scheme: Scheme) -> None:
    rec = run_point(point(scheme, 0.7))
    assert rec["status"] == "ok", rec["error"]
    assert None not in rec["fct_ms"]
    # windows set at the aggregators keep their ports from overflowing as drop-tail's do
    assert rec["drops"]["tor"] < tcp_run["drops"]["tor"] / 4, (rec["drops"], tcp_run["drops"])
    if scheme.agent in ("rcc", "ictcp"):
        assert rec["policy"]["steps"] > 100


def test_bad_point_is_one_clear_error(p4i: Any) -> None:
    rec = run_point(point(Scheme("x", "tail", 500, "dctcp"), 0.5))
    assert rec["status"] == "failed" and "k=500 packets is not below the queue" in rec["error"]
    rec = run_point(point(Scheme("x", "off", 0, "reno", "no-such"), 0.5))
    assert rec["status"] == "failed" and "no-such" in rec["error"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "p4incast.reports.run_cli", str(PRESET), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO)


def test_preset_runs_resumes_and_reports_from_the_cli(p4i: Any, tmp_path: Path) -> None:
    exp = load_preset(PRESET)
    assert exp.fabric.hosts == 1000 and exp.traffic.aggregators == 5 and len(exp.loads) == 9
    out = tmp_path / "as"
    small = ["--tors", "2", "--hosts-per-tor", "4", "--short-flows", "40", "--jobs", "1"]
    small += ["--repeats", "1"]
    r = _cli(*small, "--loads", "0.5", "--schemes", "tcp,rcc", "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads((out / "results.json").read_text())
    assert sorted((x["scheme"], x["load"]) for x in data["runs"]) == [("rcc", 0.5), ("tcp", 0.5)]
    text = (out / "SUMMARY.md").read_text()
    assert "| rcc | 50% |" in text and "FCT p99" in text
    assert (out / "fct_p99.png").stat().st_size > 0 and (out / "drops_tor.png").stat().st_size > 0
    # a second load: --resume runs only what the folder lacks
    r = _cli(*small, "--loads", "0.5,0.8", "--schemes", "tcp,rcc", "--resume", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"resuming {out}: 2 of 4 runs finished ok, 2 to run" in r.stdout
    data = json.loads((out / "results.json").read_text())
    assert len(data["runs"]) == 4
    # another fabric's folder is refused, naming the difference, and left as it was
    assert small[:2] == ["--tors", "2"]
    r = _cli("--tors", "3", *small[2:], "--loads", "0.5", "--schemes", "tcp", "--resume", str(out))
    assert r.returncode == 2 and "fabric.tors: 2 there vs 3 now" in r.stderr, r.stderr[-2000:]
    assert json.loads((out / "results.json").read_text()) == data


def test_bad_preset_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(PRESET.read_text().replace("loads: [0.1,", "loads: [1.5,"))
    r = subprocess.run(
        [sys.executable, "-m", "p4incast.reports.run_cli", str(bad)], capture_output=True, text=True
    )
    assert r.returncode == 2 and "load: 1.5 must be a fraction" in r.stderr
    assert "Traceback" not in r.stderr


def test_reproduce_reports_an_at_scale_folder(p4i: Any, tmp_path: Path) -> None:
    """make reproduce's REPORT.md section of an at-scale preset: the preset's header
    comment, the table and the claim's verdict, from the records in its folder."""
    from p4incast.reports import reproduce  # matplotlib's Agg set up by the module

    out = tmp_path / "rcc-at-scale"
    small = ["--tors", "2", "--hosts-per-tor", "3", "--short-flows", "20", "--jobs", "1"]
    r = _cli(*small, "--repeats", "1", "--loads", "0.3,0.7", "--schemes", "rcc", "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    rs = results.load(out, AtScaleResultSet)
    text = reproduce.report_section(PRESET, [load_preset(PRESET)], [rs], tmp_path)
    assert text.startswith("## rcc-at-scale (at scale)")
    assert "Stated (docs/algorithms.md §7)" in text  # the header comment
    assert "| rcc | 30% |" in text and "| rcc | 70% |" in text
    row = "| rcc-drops-from-60 | §6.2 ¶7, Fig. 8(c): RCC first drops at 60 % offered load (drops) |"
    assert row in text
    assert "](rcc-at-scale/fct_p99.png)" in text
