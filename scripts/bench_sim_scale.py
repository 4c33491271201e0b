"""Benchmark: what a point costs on the ns-3 engine as N grows to 1000 (issue 45).

Incast star at N = 100, 200, 500, 1000 servers (default), 1 Gbit/s links,
25 µs per link, 64 KB per-port buffer, SRU 64 KB per server, 2 barrier rounds,
for two schemes: front+rotate (the receiver budget in C++, per packet) and
drop-tail (no agent; its RTO waits cost simulated, not wall, time). `--schemes
rcc` measures the costliest path, a Python policy stepped every base RTT over
every flow (its N = 1000 point takes minutes, the step about half of them;
sim/MODEL.md has the figures).
Per point it prints the wall and CPU seconds, the simulated seconds, the peak
resident memory (VmHWM, reset before each point through /proc/self/clear_refs;
the process holds ns-3 and the compiled model before any point) and each figure's
ratio to N = 100.

Then what a whole sweep costs: `make sim`'s grid (experiments/sim.yaml, every
variant) with each point's time taken from the slowest measured scheme at the
nearest measured N at or above it, per round and per SRU byte, times the
preset's rounds and SRU; on this machine (worker time / cores) and on a Ray
cluster of reports/cost.py's 100 workers (max(work / workers, longest point) /
the executor's efficiency). The projection uses CPU seconds, which other
people's work on a shared machine inflates far less than wall time (on an idle
core a point's wall time is its CPU time).

    .venv/bin/python scripts/bench_sim_scale.py [--ns 100,200,500,1000] [--rounds 2]
        [--schemes front+rotate,droptail] [--sru 65536]

Needs ns-3 (pip install ns3); prints why when it cannot run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from p4incast.engines.sim import ENGINE
from p4incast.experiments import config
from p4incast.model.scheme import App, Point, Scheme
from p4incast.reports.cost import CLUSTER_WORKERS, Group, cluster_seconds
from p4incast.sim import engine, native

SCHEMES = {
    "front+rotate": Scheme(
        "front+rotate", ecn="front", k=20, cc="reno", agent="newdctcp-budget", rotate=True
    ),
    "rcc": Scheme("rcc", ecn="front", k=20, cc="reno", agent="rcc"),
    "droptail": Scheme("droptail", ecn="off", cc="reno"),
    "front+budget": Scheme("front+budget", ecn="front", k=20, cc="reno", agent="newdctcp-budget"),
}
SIM_YAML = Path(__file__).resolve().parent.parent / "experiments" / "sim.yaml"


def _kib(field: str) -> int:
    """A /proc/self/status field in KiB (0 where there is none)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux: 5 > /proc/PID/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def sweep_cost(per_byte: dict[int, float], cpus: int) -> tuple[int, float, float, float]:
    """(points, worker-seconds, hours here, minutes on the cluster) of make sim's grid,
    each point's time = per_byte[the smallest measured N >= its N] x its rounds x SRU
    (a round's packets, and so its events, grow with the SRU)."""
    measured = sorted(per_byte)
    walls: list[tuple[str, float]] = []
    for exp in config.load_all(SIM_YAML):
        for p in exp.points():
            n = next((m for m in measured if m >= p.n), measured[-1])
            # points below the smallest measured N cost at most as much as it
            cost = per_byte[n] * p.app.rounds * p.app.bytes_per_server(p.n)
            walls.append((f"{exp.name} {p.scheme.name} N={p.n}", cost))
    work = sum(w for _label, w in walls)
    group = Group("sim", "incast", tuple(walls))
    return len(walls), work, work / cpus / 3600, cluster_seconds([group]) / 60


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--ns", default="100,200,500,1000", help="servers, comma-separated")
    ap.add_argument("--rounds", type=int, default=2, help="barrier rounds (default 2)")
    ap.add_argument("--sru", type=int, default=65536, help="bytes per server per round")
    ap.add_argument(
        "--schemes",
        default="front+rotate,droptail",
        help=f"comma-separated, from {','.join(SCHEMES)} (default front+rotate,droptail)",
    )
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # each point as it ends
    try:
        ns = sorted(int(x) for x in args.ns.split(",") if x)
    except ValueError:
        print(f"bench_sim_scale: --ns: not a list of integers: {args.ns!r}")
        return 2
    names = [s for s in args.schemes.split(",") if s]
    bad = [s for s in names if s not in SCHEMES]
    if bad:
        print(
            f"bench_sim_scale: unknown scheme(s) {', '.join(bad)}; choose from {', '.join(SCHEMES)}"
        )
        return 2
    ok, why = native.available()
    if not ok:
        print(f"bench_sim_scale: cannot run: {why}")
        return 0
    t = time.monotonic()
    ENGINE.worker_init()
    cpus = os.cpu_count() or 1
    print(
        f"sim-scale: ns-3 load + model compile + warm-up: {time.monotonic() - t:.1f} s; "
        f"RSS then {_kib('VmRSS') / 1024:.0f} MiB; load average {os.getloadavg()[0]:.1f} "
        f"on {cpus} CPUs; SRU {args.sru} B, {args.rounds} rounds, 64 KB buffer"
    )
    can_reset = _reset_peak()
    per_byte: dict[int, float] = {}  # CPU s per round per SRU byte, slowest scheme
    for name in names:
        base: tuple[float, float, float] | None = None
        for n in ns:
            point = Point(SCHEMES[name], n, app=App(args.sru, rounds=args.rounds))
            _reset_peak()
            rss0 = _kib("VmRSS")
            cpu0 = time.process_time()
            run = engine.run_point(point).record()
            cpu = time.process_time() - cpu0
            peak = _kib("VmHWM") / 1024
            grew = max(peak - rss0 / 1024, 0.0)
            if run["status"] != "ok":
                print(f"sim-scale N={n} {name}: FAILED: {run['error']}")
                return 1
            wall = run["wall_s"]
            per_byte[n] = max(per_byte.get(n, 0.0), cpu / args.rounds / args.sru)
            if base is None:
                base = (wall, cpu, peak)
            rto = sum(r["rto"] for r in run["rounds"])
            print(
                f"sim-scale N={n:5d} {name:12s}: {wall:7.1f} s wall ({wall / base[0]:5.1f}x), "
                f"{cpu:7.1f} s CPU ({cpu / base[1]:5.1f}x), {run['sim_s']:.3f} simulated s; "
                f"peak RSS {peak:.0f} MiB ({peak / base[2]:.2f}x), {grew:+.0f} MiB over the "
                f"loaded process; {rto}/{args.rounds} RTO rounds"
            )
    if not can_reset:
        print("sim-scale: /proc/self/clear_refs not writable: peaks are the process's so far")
    points, work, hours, cluster_min = sweep_cost(per_byte, cpus)
    print(
        f"sim-scale: make sim (experiments/sim.yaml, {points} points) at these CPU times "
        f"per round and SRU byte: {work / 3600:.1f} worker-hours -> {hours:.1f} h on this "
        f"machine's {cpus} cores, {cluster_min:.1f} min on a Ray cluster of "
        f"{CLUSTER_WORKERS} workers (reports/cost.py; ns-3 loads not included; every "
        f"point at the cost of the slowest of {', '.join(names)}: ICTCP and RCC cost more)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
