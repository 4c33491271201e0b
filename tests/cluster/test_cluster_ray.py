"""p4incast-run on a real Ray cluster of two node processes on this machine.

One cluster serves the module: a head (1 CPU) and a second node (1 CPU,
custom resource `node2`), started with `ray start` in sessions of their own
and stopped by those sessions' processes. The sweeps are the simulator's
(each pays ns-3's load once per actor, ~20 s here), except the last test's:
BMv2 points on a third node, added for it, that advertises `bmv2` (skipped
without root and BMv2). Skipped with the reason when Ray or ns-3 is missing
or Ray cannot start.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from p4incast.engines.bmv2 import ENGINE as BMV2
from p4incast.engines.sim import ENGINE as SIM
from p4incast.experiments.executors import ClusterError, without_timing
from p4incast.experiments.ray_local import LocalRayCluster

REPO = Path(__file__).resolve().parents[2]

RAY_WHY = (
    None
    if importlib.util.find_spec("ray")
    else "Ray is not installed (pip install -e '.[cluster]'; make setup installs it)"
)
SIM_WHY = SIM.unavailable()
pytestmark = pytest.mark.skipif(
    bool(RAY_WHY or SIM_WHY), reason=f"cluster: {RAY_WHY or f'simulator: {SIM_WHY}'}"
)

MARK_FRONT = {"name": "mark-front", "ecn": "front", "k": 20, "cc": "newdctcp"}
DROPTAIL = {"name": "droptail", "ecn": "off", "cc": "reno"}
TINY = {
    "name": "tiny",
    "engine": "sim",
    "app": {"sru_bytes": 65536, "rounds": 2},
    "senders": [1, 2],
    "schemes": [DROPTAIL, MARK_FRONT],
}
# 8 points of 1-4 s (40 rounds): long enough to interrupt between points.
MID = {
    **TINY,
    "name": "mid",
    "app": {"sru_bytes": 65536, "rounds": 40},
    "senders": [16, 32, 48, 64],
}
# 8 points of 4-15 s: both nodes' actors get points, so one can be killed mid-point.
LONG = {
    **MID,
    "name": "long",
    "app": {"sru_bytes": 65536, "rounds": 100},
    "senders": [32, 48, 64, 100],
}
# The testbed's smoke point (tests/testbed) at N = 2 and 4: two short BMv2 runs.
BMV2_SMOKE = {
    "name": "bmv2smoke",
    "engine": "bmv2",
    "topology": {"queue_pkts": 64, "bottleneck_pps": 2000, "host_mbps": 100},
    "app": {"sru_bytes": 32768, "rounds": 3},
    "senders": [2, 4],
    "schemes": [{"name": "mark-front", "ecn": "front", "k": 12, "cc": "reno"}],
}
PROGRESS = re.compile(r"\] \d+/\d+ eta \S+  (\S+) N=(\d+) rep (\d+): ")


@dataclass
class Cluster:
    ray: LocalRayCluster
    node2: int  # the second node's session id (its processes, workers included)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    # A short temp path: Ray's unix sockets live under it (108-byte limit).
    tmp = Path(tempfile.mkdtemp(prefix="p4i-ray-", dir="/tmp"))
    c = LocalRayCluster(tmp)
    try:
        c.start_head(cpus=1)
        node2 = c.add_node(cpus=1, resources={"node2": 1})
    except (ClusterError, subprocess.TimeoutExpired, OSError) as err:
        c.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.skip(f"cluster: Ray cannot start here: {err}")
    try:
        yield Cluster(c, node2)
    finally:
        c.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def write(tmp: Path, exp: dict[str, Any], name: str = "e.yaml") -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump(exp))
    return path


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "p4incast.reports.run_cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_cli(*args: str, out: Path) -> subprocess.Popen[str]:
    """The runner in the background, Ctrl-C-able (SIGINT at its default), output to files."""
    return subprocess.Popen(
        [sys.executable, "-m", "p4incast.reports.run_cli", *args],
        stdout=(out / "stdout").open("w"),
        stderr=(out / "stderr").open("w"),
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def runs(folder: Path) -> list[dict[str, Any]]:
    try:
        return json.loads((folder / "results.json").read_text())["runs"]
    except (FileNotFoundError, json.JSONDecodeError):
        return []


def by_key(folder: Path) -> dict[tuple[str, int, int], dict[str, Any]]:
    """Run records keyed by (scheme, N, repeat); fails on a point recorded twice."""
    out = {}
    for r in runs(folder):
        key = (r["scheme"], r["n"], r["repeat"])
        assert key not in out, f"{key} recorded twice"
        out[key] = r
    return out


def finished_lines(stderr: str) -> list[tuple[str, int, int]]:
    """The points the runner reported finished, from its progress lines."""
    return [(m[1], int(m[2]), int(m[3])) for m in PROGRESS.finditer(stderr)]


def test_cluster_records_match_local_in_any_order(cluster: Cluster, tmp_path: Path) -> None:
    """The same experiment gives the same records (wall_s aside) in the local pool,
    on the cluster's two nodes, and in one actor running the points backwards."""
    exp = write(tmp_path, TINY)
    local = cli(str(exp), "--out", str(tmp_path / "local"), "--jobs", "2")
    assert local.returncode == 0, local.stderr[-2000:]
    on_ray = cli(str(exp), "--out", str(tmp_path / "ray"), "--cluster", cluster.ray.client_address)
    assert on_ray.returncode == 0, on_ray.stderr[-2000:]
    assert (
        f"running on ray cluster {cluster.ray.client_address}: 2 node(s), 2 CPU(s)" in on_ray.stdout
    )
    # Backwards (N and schemes reversed), one actor, the cluster named in the file.
    backwards = {
        **TINY,
        "senders": TINY["senders"][::-1],
        "schemes": TINY["schemes"][::-1],
        "cluster": cluster.ray.gcs_address,
    }
    rev = cli(
        str(write(tmp_path, backwards, "rev.yaml")), "--out", str(tmp_path / "rev"), "--jobs", "1"
    )
    assert rev.returncode == 0, rev.stderr[-2000:]
    assert f"running on ray cluster {cluster.ray.gcs_address}" in rev.stdout
    assert finished_lines(rev.stderr) == [
        ("mark-front", 2, 0),
        ("droptail", 2, 0),
        ("mark-front", 1, 0),
        ("droptail", 1, 0),
    ]

    expected = {(s["name"], n, 0) for s in TINY["schemes"] for n in TINY["senders"]}
    ref = by_key(tmp_path / "local")
    assert set(ref) == expected
    assert all(r["status"] == "ok" and r["engine"] == "sim" for r in ref.values())
    assert ref[("mark-front", 2, 0)]["switch"]["ports"]["1"]["marked"] > 0  # a real run
    for other in ("ray", "rev"):
        got = by_key(tmp_path / other)
        assert set(got) == expected
        for key in expected:
            assert without_timing(got[key]) == without_timing(ref[key]), (other, key)


def test_killed_worker_points_rerun(cluster: Cluster, tmp_path: Path) -> None:
    """SIGKILL the second node's workers while one runs a point: the sweep completes,
    the killed point runs again (elsewhere) with the same record, nothing is lost."""
    exp = write(tmp_path, LONG)
    out = tmp_path / "ray"
    proc = start_cli(
        str(exp), "--out", str(out), "--cluster", cluster.ray.client_address, out=tmp_path
    )
    killed: list[int] = []
    deadline = time.monotonic() + 600
    while proc.poll() is None and not killed and time.monotonic() < deadline:
        if cluster.ray.workers(cluster.node2, running=True):
            killed = cluster.ray.workers(cluster.node2)
            for pid in killed:
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
    done_before_kill = len(runs(out))
    assert proc.wait(timeout=600) == 0, (tmp_path / "stderr").read_text()[-3000:]
    stderr = (tmp_path / "stderr").read_text()
    assert killed, f"node2 never ran a point:\n{stderr[-3000:]}"

    lost = re.findall(r"ray: (\S+) N=(\d+) #1 lost on .*; retry 1/2", stderr)
    assert len(lost) == 1, stderr[-3000:]
    (scheme, n), key = lost[0], (lost[0][0], int(lost[0][1]), 0)
    expected = {(s["name"], n, 0) for s in LONG["schemes"] for n in LONG["senders"]}
    got = by_key(out)
    assert set(got) == expected and all(r["status"] == "ok" for r in got.values())
    assert sorted(finished_lines(stderr)) == sorted(expected)  # each point finished once
    assert done_before_kill < len(expected)  # the kill came mid-sweep

    # The re-run point's record is the one a local run gives.
    local = cli(str(exp), "--out", str(tmp_path / "local"), "--schemes", scheme, "--senders", n)
    assert local.returncode == 0, local.stderr[-2000:]
    assert without_timing(got[key]) == without_timing(by_key(tmp_path / "local")[key])


def test_resume_after_interrupt_runs_only_missing(cluster: Cluster, tmp_path: Path) -> None:
    """Ctrl-C mid-sweep leaves a resumable folder; --resume runs exactly the points
    with no ok run there (one marked failed included) and keeps the others as they are."""
    exp = write(tmp_path, MID)
    out = tmp_path / "ray"
    proc = start_cli(
        str(exp), "--out", str(out), "--cluster", cluster.ray.client_address, out=tmp_path
    )
    deadline = time.monotonic() + 600
    while proc.poll() is None and len(runs(out)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    assert f"--resume {out}" in (tmp_path / "stderr").read_text()
    assert not cluster.ray.workers(cluster.node2)  # its actors went with the sweep

    expected = {(s["name"], n, 0) for s in MID["schemes"] for n in MID["senders"]}
    first = by_key(out)
    assert 2 <= len(first) < len(expected), "interrupted too late to test resume"
    assert all(r["status"] == "ok" for r in first.values())
    # A failed run is run again on resume: mark one so.
    data = json.loads((out / "results.json").read_text())
    data["runs"][0].update(status="failed", error="marked failed by the test")
    (out / "results.json").write_text(json.dumps(data))
    failed = (data["runs"][0]["scheme"], data["runs"][0]["n"], data["runs"][0]["repeat"])
    kept = {k: v for k, v in first.items() if k != failed}

    again = cli(str(exp), "--resume", str(out), "--cluster", cluster.ray.client_address)
    assert again.returncode == 0, again.stderr[-2000:]
    todo = len(expected) - len(kept)
    assert (
        f"resuming {out}: {len(kept)} of {len(expected)} runs finished ok, {todo} to run"
        in again.stdout
    )
    assert sorted(finished_lines(again.stderr)) == sorted(expected - set(kept))
    final = by_key(out)
    assert set(final) == expected and all(r["status"] == "ok" for r in final.values())
    for key, run in kept.items():
        assert final[key] == run  # wall_s included: not run again


def test_bmv2_points_need_a_bmv2_node(cluster: Cluster, tmp_path: Path) -> None:
    """No node advertises `bmv2`: one line saying how to start one, exit 2, no folder."""
    exp = write(tmp_path, {**TINY, "schemes": [DROPTAIL]})
    out = tmp_path / "out"
    proc = cli(
        str(exp), "--engine", "bmv2", "--out", str(out), "--cluster", cluster.ray.gcs_address
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert "0 advertising 'bmv2': nowhere to run bmv2 points" in line
    assert "--resources '{\"bmv2\": 1}'" in line
    assert not out.exists()


BMV2_WHY = BMV2.unavailable()


@pytest.mark.bmv2
@pytest.mark.root
@pytest.mark.skipif(BMV2_WHY is not None, reason=f"bmv2: {BMV2_WHY}")
def test_bmv2_points_run_on_the_bmv2_node(cluster: Cluster, tmp_path: Path) -> None:
    """A node advertising `bmv2` (and no CPU, so no simulator actor lands there) gets
    the one BMv2 actor; both points run on it, one after the other, and succeed."""
    bmv2_node = cluster.ray.add_node(cpus=0, resources={"bmv2": 1})
    try:
        exp = write(tmp_path, BMV2_SMOKE)
        out = tmp_path / "out"
        proc = start_cli(
            str(exp), "--out", str(out), "--cluster", cluster.ray.client_address, out=tmp_path
        )
        seen: set[int] = set()
        while proc.poll() is None:
            seen.update(cluster.ray.workers(bmv2_node))
            time.sleep(0.1)
        stderr = (tmp_path / "stderr").read_text()
        assert proc.returncode == 0, stderr[-3000:]
        assert "1 advertising 'bmv2'" in (tmp_path / "stdout").read_text()
        ready = re.findall(r"ray: worker ready on \S+ pid (\d+)", stderr)
        assert len(ready) == 1 and int(ready[0]) in seen, (ready, seen)
        got = by_key(out)
        assert set(got) == {("mark-front", 2, 0), ("mark-front", 4, 0)}
        for run in got.values():
            assert run["status"] == "ok" and run["engine"] == "bmv2", run.get("error")
            assert all(r["goodput_bps"] > 0 for r in run["rounds"])
    finally:
        for pid in cluster.ray.pids(bmv2_node):
            os.kill(pid, signal.SIGKILL)


def test_reproduce_on_the_cluster_matches_local(cluster: Cluster, tmp_path: Path) -> None:
    """`p4incast-run reproduce --cluster` runs a preset's points on the cluster with
    the records (wall_s aside) and the report of the local run."""
    args = ("reproduce", "--only", "rcc-heavy", "--rounds", "1")
    local = cli(*args, "--out", str(tmp_path / "local"), "--jobs", "2")
    assert local.returncode == 0, local.stderr[-2000:]
    on_ray = cli(*args, "--out", str(tmp_path / "ray"), "--cluster", cluster.ray.client_address)
    assert on_ray.returncode == 0, on_ray.stderr[-2000:]
    assert f"running on ray cluster {cluster.ray.client_address}" in on_ray.stdout
    ref, got = (by_key(tmp_path / w / "rcc-heavy" / "rcc-heavy") for w in ("local", "ray"))
    preset = yaml.safe_load((REPO / "experiments/papers/rcc-heavy.yaml").read_text())
    points = len(preset["senders"]) * len(preset["schemes"])  # one repeat
    assert len(ref) == points and set(got) == set(ref)
    assert all(r["status"] == "ok" for r in ref.values())
    for key, r in ref.items():
        assert without_timing(got[key]) == without_timing(r), key

    def claim_lines(report: str) -> list[str]:
        # the cost section's worker-seconds and wall time are timings, not results
        head, _, rest = report.partition("## Cost, and the papers' rounds")
        body = head + rest.partition("\n## ")[2]
        return [line for line in body.splitlines() if "rcc-" in line]

    verdicts = [claim_lines((tmp_path / w / "REPORT.md").read_text()) for w in ("local", "ray")]
    assert verdicts[0] and verdicts[0] == verdicts[1]


def test_at_scale_points_on_the_cluster_match_local(cluster: Cluster, tmp_path: Path) -> None:
    """RCC's at-scale preset (engines/atscale.py) runs through the same Ray executor:
    its records (process measurements aside) equal the local pool's."""
    preset = REPO / "experiments" / "papers" / "rcc-at-scale.yaml"
    small = ["--tors", "2", "--hosts-per-tor", "4", "--short-flows", "30", "--repeats", "1"]
    small += ["--loads", "0.4,0.8", "--schemes", "tcp,rcc"]
    local = cli(str(preset), *small, "--out", str(tmp_path / "local"), "--jobs", "2")
    assert local.returncode == 0, local.stderr[-2000:]
    on_ray = cli(
        str(preset), *small, "--out", str(tmp_path / "ray"), "--cluster", cluster.ray.client_address
    )
    assert on_ray.returncode == 0, on_ray.stderr[-2000:]
    assert f"running on ray cluster {cluster.ray.client_address}" in on_ray.stdout

    def keyed(folder: Path) -> dict[tuple[str, float, int], dict[str, Any]]:
        return {(r["scheme"], r["load"], r["repeat"]): r for r in runs(folder)}

    ref, got = keyed(tmp_path / "local"), keyed(tmp_path / "ray")
    assert len(ref) == 4 and set(got) == set(ref)
    assert all(r["status"] == "ok" and len(r["fct_ms"]) == 30 for r in ref.values())
    for key, r in ref.items():
        assert without_timing(got[key]) == without_timing(r), key
