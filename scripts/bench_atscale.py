"""Benchmark: what one point of RCC's at-scale scenario costs on this machine —
wall time and peak memory of a 1000-host point (experiments/papers/rcc-at-scale.yaml),
against the same point on a quarter of the fabric, so the ratio shows how the
cost grows with the fabric.

Each measurement runs in a fresh process (as a sweep's worker does): ns-3's
load and the model's compile, then cppyy's compile of what a run calls (on a
4-host point of the same scheme), are timed apart from the point, and the point's
peak resident memory is read from /proc (VmHWM, reset when the point starts),
next to the process's memory before it (ns-3 and cppyy loaded). Printed per
(hosts, scheme): load s, point wall s, simulated s, peak RSS, RSS before,
and the 1000-host/250-host ratios.

    .venv/bin/python scripts/bench_atscale.py [--load 0.5] [--schemes tcp,rcc] [--quick]

--quick: 100 and 250 hosts instead of 250 and 1000 (a check that it runs).
Needs ns-3 (pip install ns3); prints why when it cannot run.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import dataclasses
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

from p4incast.experiments.atscale import load
from p4incast.model.atscale import AtScalePoint
from p4incast.sim import native
from p4incast.sim.atscale import init_worker, run_point

PRESET = Path(__file__).resolve().parent.parent / "experiments" / "papers" / "rcc-at-scale.yaml"


def _timed_init() -> float:
    t0 = time.monotonic()
    init_worker()
    return time.monotonic() - t0


def _warm_up(point: AtScalePoint) -> float:
    """A 4-host point of the same scheme: cppyy compiles the C++ a run uses on its
    first call (~10 s), once per process, as a sweep's first point pays it."""
    tiny = dataclasses.replace(
        point,
        fabric=dataclasses.replace(point.fabric, tors=2, hosts_per_tor=2),
        traffic=dataclasses.replace(
            point.traffic, aggregators=1, short_flows=5, background_flows=1, background_bytes=10**5
        ),
    )
    return run_point(tiny)["wall_s"]


def measure(point: AtScalePoint) -> tuple[float, float, dict[str, Any]]:
    """(ns-3 load s, first-call compile s, the point's record), in a new process."""
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        load_s = pool.submit(_timed_init).result()
        warm_s = pool.submit(_warm_up, point).result()
        rec = pool.submit(run_point, point).result()
    return load_s, warm_s, rec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument(
        "--load", type=float, default=0.5, help="offered load of the point (default 0.5)"
    )
    ap.add_argument("--schemes", default="tcp,rcc", help="schemes of the preset (default tcp,rcc)")
    ap.add_argument("--quick", action="store_true", help="100 and 250 hosts")
    a = ap.parse_args(argv)
    ok, why = native.available()
    if not ok:
        print(f"bench_atscale: skipped: {why}")
        return 0
    exp = load(PRESET)
    by_name = {s.name: s for s in exp.schemes}
    names = a.schemes.split(",")
    unknown = [n for n in names if n not in by_name]
    if unknown:
        ap.error(f"--schemes: {unknown} not in {PRESET.name} ({', '.join(by_name)})")
    full = exp.fabric
    sizes = [(4, 25), (10, 25)] if a.quick else [(10, 25), (full.tors, full.hosts_per_tor)]
    print(
        f"at-scale point cost: load {a.load:.0%}, {exp.traffic.short_flows} short flows, "
        f"{exp.traffic.background_flows} x {exp.traffic.background_bytes / 1e6:.0f} MB background; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} before"
    )
    head = f"{'hosts':>6} {'scheme':>8} {'ns-3 load s':>11} {'1st call s':>10} {'point s':>8} "
    head += f"{'sim s':>6} "
    head += f"{'peak RSS MB':>11} {'RSS before MB':>13} {'drops':>6} {'status':>6}"
    print(head)
    results: dict[tuple[int, str], dict[str, Any]] = {}
    for tors, hpt in sizes:
        fabric = dataclasses.replace(full, tors=tors, hosts_per_tor=hpt)
        for name in names:
            point = AtScalePoint(by_name[name], a.load, 0, fabric, exp.traffic, exp.transport)
            load_s, warm_s, rec = measure(point)
            results[(fabric.hosts, name)] = rec
            drops = rec.get("drops") or {}
            print(
                f"{fabric.hosts:>6} {name:>8} {load_s:>11.1f} {warm_s:>10.1f} "
                f"{rec['wall_s']:>8.1f} "
                f"{rec.get('sim_s', 0):>6.2f} {rec['point_peak_rss_mb'] or 0:>11.0f} "
                f"{rec['rss_before_mb'] or 0:>13.0f} "
                f"{drops.get('tor', 0) + drops.get('root', 0):>6} "
                f"{rec['status']:>6}",
                flush=True,
            )
    small, big = (s[0] * s[1] for s in sizes)
    for name in names:
        r0, r1 = results[(small, name)], results[(big, name)]
        grow = (r1["point_peak_rss_mb"] - r1["rss_before_mb"]) / max(
            1e-9, r0["point_peak_rss_mb"] - r0["rss_before_mb"]
        )
        print(
            f"{name}: {big} vs {small} hosts: point wall x{r1['wall_s'] / r0['wall_s']:.2f}, "
            f"memory above the loaded process x{grow:.2f} "
            f"({r1['point_peak_rss_mb'] - r1['rss_before_mb']:.0f} vs "
            f"{r0['point_peak_rss_mb'] - r0['rss_before_mb']:.0f} MB)"
        )
    failed = [k for k, r in results.items() if r["status"] != "ok"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
