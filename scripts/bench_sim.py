"""Benchmark: simulated seconds per wall-clock second of the ns-3 engine (target > 1).

Incast at N = 100 servers (default), 1 Gbps links, 25 µs per link, 64 KB
buffer, SRU 64 KB per server, 20 barrier rounds, for a few schemes. The
bottleneck is busy for most of the run, so this is close to the engine's
slowest case (idle RTO waits cost no wall time). Prints, per scheme, the
simulated seconds, the wall seconds, their ratio, the packets through the
bottleneck per wall second, and the CPU seconds this process used (the machine
may be shared: wall time then includes other people's work). Also prints how
long loading ns-3 and compiling the model took (once per process).

    .venv/bin/python scripts/bench_sim.py [--n 100] [--rounds 20] [--schemes a,b]

Needs ns-3 (pip install ns3); prints why when it cannot run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from p4incast.sim import engine, native

SCHEMES = {
    "droptail": {"ecn": "off", "k": 0, "cc": "reno", "agent": "off"},
    "mark-tail": {"ecn": "tail", "k": 20, "cc": "dctcp", "agent": "off"},
    "mark-front": {"ecn": "front", "k": 20, "cc": "newdctcp", "agent": "off"},
    "front+rx": {"ecn": "front", "k": 20, "cc": "reno", "agent": "newdctcp-rx"},
    "ictcp": {"ecn": "off", "k": 0, "cc": "reno", "agent": "ictcp"},
    "rcc": {"ecn": "front", "k": 20, "cc": "reno", "agent": "rcc"},
    "batching": {"ecn": "off", "k": 0, "cc": "reno", "agent": "off", "batching": True},
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100, help="servers (default 100)")
    ap.add_argument("--rounds", type=int, default=20, help="barrier rounds (default 20)")
    ap.add_argument("--sru", type=int, default=65536, help="bytes per server per round")
    ap.add_argument(
        "--schemes",
        default="droptail,mark-front",
        help=f"comma-separated, from {','.join(SCHEMES)} (default droptail,mark-front)",
    )
    args = ap.parse_args()
    names = [s for s in args.schemes.split(",") if s]
    bad = [s for s in names if s not in SCHEMES]
    if bad:
        print(f"bench_sim: unknown scheme(s) {', '.join(bad)}; choose from {', '.join(SCHEMES)}")
        return 2
    ok, why = native.available()
    if not ok:
        print(f"bench_sim: cannot run: {why}")
        return 0
    t = time.monotonic()
    engine.init_worker()
    print(
        f"sim: ns-3 import + model compile + warm-up run: {time.monotonic() - t:.1f} s "
        "(once per process)"
    )
    print(f"sim: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    ratios = []
    for name in names:
        sch = {"name": name, "batching": False, **SCHEMES[name]}
        point = {
            "scheme": sch,
            "n": args.n,
            "repeat": 0,
            "seed": 1,
            "topology": {},
            "app": {"sru_bytes": args.sru, "rounds": args.rounds},
        }
        cpu0 = time.process_time()
        run = engine.run_point(point)
        cpu = time.process_time() - cpu0
        if run["status"] != "ok":
            print(f"sim N={args.n} {name}: FAILED: {run['error']}")
            return 1
        sim_s, wall = run["sim_s"], run["wall_s"]
        pkts = run["switch"]["ports"][engine.BOTTLENECK_PORT]["egress"]
        ratio = sim_s / wall
        ratios.append(ratio)
        rto = sum(r["rto"] for r in run["rounds"])
        print(
            f"sim N={args.n} {name:10s}: {sim_s:.3f} simulated s in {wall:.2f} s wall "
            f"({cpu:.2f} s CPU) -> {ratio:.3f} sim-s per wall-s, {sim_s / cpu:.3f} per CPU-s; "
            f"{pkts / wall:,.0f} bottleneck packets per wall-s; {rto}/{args.rounds} RTO rounds"
        )
    print(
        f"sim: simulated seconds per wall-clock second at N={args.n}, 1 Gbps: "
        f"{min(ratios):.3f} (slowest scheme), target > 1"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
