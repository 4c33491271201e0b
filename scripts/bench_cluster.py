"""Benchmark: what the Ray executor costs — simulator points per minute with the
local process pool vs a 1-node and a 2-node Ray cluster on this machine, in one
run, with the same number of workers each (one per CPU), so the ratio is the
executor's overhead (target: Ray within 10 % of the pool, ratio >= 0.90).

The sweep is experiments/sim.yaml's variant SRU 64 KB, buffer 64 KB at its N up
to 100 (9 schemes x 8 N = 72 points of 10 rounds; --full: all six variants, 432
points; --senders to go past 100). Each executor runs every point once, from
cold workers to the last record: the wall time includes each worker's ns-3 load
and model compile (15-30 s here), as a user's sweep does, so on a short sweep
that start-up's jitter dominates the ratio (--full, --repeat). The Ray clusters
are started (`ray start`) before the clock and stopped after; the times their
workers became ready are printed, and whether every record of every run is
identical (wall_s aside: experiments/executors.py). Also printed: the CPU
seconds per point of every process an executor used (its workers, Ray's
daemons, this driver) and their ratio, which other people's work on the machine
skews far less than wall time.

The Ray nodes' workers run at nice 0 here (Ray's default is 15), so that on a
shared machine they compete for CPU as the pool's workers do; the machine's
load average is printed before each run — other people's work skews a run.

    .venv/bin/python scripts/bench_cluster.py [--full] [--repeat 3] [--senders 1,8] [--rounds 10]

Needs ns-3 and Ray (pip install -e '.[cluster]'); prints why when it cannot run.
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from p4incast.engines.sim import ENGINE
from p4incast.experiments import config
from p4incast.experiments.executors import ClusterError, Executor, Job, LocalPool, without_timing
from p4incast.experiments.ray_local import LocalRayCluster, cpu_s, cpu_used
from p4incast.experiments.ray_pool import RayPool

REPO = Path(__file__).resolve().parent.parent
TARGET = 0.90  # Ray's points per minute over the local pool's


FIRST = "sim-sru64k-buf64k"  # the variant the benchmark runs without --full


def sweep(full: bool, senders: list[int] | None, rounds: int) -> list[Job]:
    """The benchmark's points, in the runner's order."""
    exps = config.load_all(REPO / "experiments" / "sim.yaml")
    exps = [e for e in exps if full or e.name == FIRST]
    # N up to 100 unless told: the executors' overhead, not the model's scale
    # (scripts/bench_sim_scale.py measures N to 1000)
    exps = [
        e.with_overrides(senders=senders or [n for n in e.senders if n <= 100], rounds=rounds)
        for e in exps
    ]
    log = Path(tempfile.gettempdir()) / "p4i-bench-cluster-logs"
    return [Job(i, p, log) for i, e in enumerate(exps) for p in e.points()]


@dataclass
class Run:
    """One sweep by one executor."""

    wall: float  # s, start to the last record
    first: float  # s, start to the first record
    cpu: float  # CPU-s of every process it used (workers, Ray's daemons, this driver)
    records: dict[Any, dict[str, Any]]


def timed(executor: Executor, jobs: list[Job], cpu_now: Callable[[], dict[int, float]]) -> Run:
    """Run the sweep; `cpu_now` reads the CPU seconds of the executor's processes (read
    again at the last record, before the executor stops its workers)."""
    records: dict[Any, dict[str, Any]] = {}
    first: list[float] = []
    cpu: list[float] = []
    before, t0 = cpu_now(), time.monotonic()

    def done(job: Job, record: dict[str, Any]) -> None:
        if not first:
            first.append(time.monotonic() - t0)
        records[(job.index, job.point.scheme.name, job.point.n, job.point.repeat)] = record
        if len(records) == len(jobs):
            cpu.append(cpu_used(before, cpu_now()))

    executor.run(jobs, done)
    return Run(time.monotonic() - t0, first[0], cpu[0], records)


def me_and_children() -> dict[int, float]:
    """CPU seconds of this process and its (pool worker) children."""
    children = cast("list[int]", [p.pid for p in multiprocessing.active_children()])  # started
    return cpu_s([os.getpid(), *children])


def on_ray(nodes: list[int], jobs: list[Job], workers: int) -> Run:
    """The sweep on a fresh local Ray cluster of nodes with these CPU counts."""
    tmp = Path(tempfile.mkdtemp(prefix="p4i-bench-ray-", dir="/tmp"))  # short: unix sockets
    cluster = LocalRayCluster(tmp, niceness=0)
    try:
        t = time.monotonic()
        cluster.start_head(cpus=nodes[0])
        for cpus in nodes[1:]:
            cluster.add_node(cpus=cpus)
        print(f"cluster: {len(nodes)}-node Ray cluster started in {time.monotonic() - t:.1f} s")
        notes: list[str] = []
        # The driver on the head node, as `p4incast-run --cluster auto` there (Ray Client,
        # ray://, adds a proxy hop per call; the tests run sweeps through it).
        pool = RayPool(ENGINE, cluster.gcs_address, max_workers=workers, log=notes.append)
        with pool:
            d0 = cluster.cpu_s(daemons=True)
            run = timed(pool, jobs, lambda: {**cluster.cpu_s(), **cpu_s([os.getpid()])})
            end = cluster.cpu_s()  # the same daemons (a stopped worker may change its title)
            daemons = sum(end[pid] - t for pid, t in d0.items() if pid in end)
        ready = [re.search(r"after (\d+) s", n) for n in notes]
        print(
            f"cluster: workers ready after {', '.join(f'{m[1]} s' for m in ready if m)}; "
            f"Ray's daemons used {daemons:.1f} CPU-s during the sweep "
            f"({100 * daemons / (run.wall * (os.cpu_count() or 1)):.1f} % of the machine)"
        )
        if pool.lost:
            print(f"cluster: {pool.lost} point(s) lost with their worker and run again")
        return run
    finally:
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument(
        "--full", action="store_true", help="all six variants of sim.yaml, N <= 100 (432)"
    )
    ap.add_argument("--senders", help="override N values, e.g. 1,8,64")
    ap.add_argument("--rounds", type=int, default=10, help="rounds per point (default 10)")
    ap.add_argument(
        "--repeat", type=int, default=1, help="run the three in turn this many times (median)"
    )
    args = ap.parse_args()
    why = ENGINE.unavailable()
    if why is None and importlib.util.find_spec("ray") is None:
        why = "Ray is not installed (pip install -e '.[cluster]'; make setup installs it)"
    if why:
        print(f"bench_cluster: skipped — {why}")
        return 0
    senders = [int(x) for x in args.senders.split(",")] if args.senders else None
    jobs = sweep(args.full, senders, args.rounds)
    cpus = os.cpu_count() or 1
    print(
        f"cluster: {len(jobs)} simulator points of {args.rounds} rounds "
        f"(experiments/sim.yaml{'' if args.full else ', first variant'}), {cpus} workers each"
    )
    runs: dict[str, Callable[[], Run]] = {
        "local pool": lambda: timed(LocalPool(ENGINE, cpus), jobs, me_and_children),
        "ray, 1 node": lambda: on_ray([cpus], jobs, cpus),
        f"ray, {cpus} nodes": lambda: on_ray([1] * cpus, jobs, cpus),
    }
    rates: dict[str, list[float]] = {name: [] for name in runs}
    cpus_per_point: dict[str, list[float]] = {name: [] for name in runs}
    ref: dict[Any, Any] | None = None
    same = True
    for _ in range(max(1, args.repeat)):
        for name, sweep_with in runs.items():
            load = os.getloadavg()[0]
            try:
                run = sweep_with()
            except ClusterError as err:
                print(f"bench_cluster: {name}: {err}")
                return 1
            rates[name].append(len(jobs) / run.wall * 60)
            cpus_per_point[name].append(run.cpu / len(jobs))
            failed = sum(1 for r in run.records.values() if r.get("status") != "ok")
            print(
                f"cluster: {name:12s}: {len(jobs)} points in {run.wall:6.1f} s -> "
                f"{rates[name][-1]:6.1f} points/min (first record at {run.first:.1f} s), "
                f"{run.cpu / len(jobs):.3f} CPU-s per point; {failed} failed; "
                f"load average before {load:.1f}",
                flush=True,
            )
            plain = {k: without_timing(v) for k, v in run.records.items()}
            ref = plain if ref is None else ref
            same = same and plain == ref
    print(f"cluster: records identical in every run (wall_s aside): {'yes' if same else 'NO'}")
    local = statistics.median(rates["local pool"])
    local_cpu = statistics.median(cpus_per_point["local pool"])
    for name in list(runs)[1:]:
        ratio = statistics.median(rates[name]) / local
        cpu_ratio = local_cpu / statistics.median(cpus_per_point[name])
        verdict = "met" if ratio >= TARGET else "NOT met"
        print(
            f"cluster: {name} / local pool = {ratio:.3f} (median points per minute "
            f"{statistics.median(rates[name]):.1f} / {local:.1f}; overhead "
            f"{100 * (1 - ratio):+.1f} %; target ratio >= {TARGET}: {verdict}); "
            f"per CPU-second {cpu_ratio:.3f} (overhead {100 * (1 - cpu_ratio):+.1f} %)"
        )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
