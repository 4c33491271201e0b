"""Check that a change to the ns-3 model's speed changed no result: run a fixed set
of points (a few of each preset's costly kinds, rounds cut so the set takes
minutes) and keep every run record without its timings; run it on two commits
and diff the two files. The records must be identical.

    .venv/bin/python scripts/sim_outcome_diff.py record before.json [--only NAME ...]
    .venv/bin/python scripts/sim_outcome_diff.py diff before.json after.json

`record` also prints each point's wall and CPU seconds (the machine's load
beside them), so the same file pair gives the before/after cost of each point.
Needs ns-3 (pip install ns3).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

from p4incast.experiments import scenario
from p4incast.sim import atscale as sim_atscale
from p4incast.sim import engine

REPO = Path(__file__).resolve().parent.parent
PAPERS = REPO / "experiments" / "papers"

# name -> (preset, flags as p4incast-run takes them, variant name or None, scheme, x)
# x: N (incast) or load (at-scale). Rounds cut to keep the set short.
POINTS: dict[str, tuple[Path, dict[str, Any], str | None, str, float]] = {
    "ictcp89-256k-tcp-40": (
        PAPERS / "ictcp-fig8-9.yaml",
        {"rounds": 4},
        "ictcp-fig8-9-sru256k",
        "tcp",
        40,
    ),
    "ictcp89-256k-ictcp-32": (
        PAPERS / "ictcp-fig8-9.yaml",
        {"rounds": 4},
        "ictcp-fig8-9-sru256k",
        "ictcp",
        32,
    ),
    "ictcp10-ictcp-24": (PAPERS / "ictcp-fig10.yaml", {"rounds": 4}, None, "ictcp", 24),
    "ndctcp7-128k-newdctcp-35": (
        PAPERS / "newdctcp-fig7.yaml",
        {"rounds": 6},
        "newdctcp-fig7-sru128k",
        "newdctcp",
        35,
    ),
    "ndctcp7-128k-dctcp-40": (
        PAPERS / "newdctcp-fig7.yaml",
        {"rounds": 6},
        "newdctcp-fig7-sru128k",
        "dctcp",
        40,
    ),
    "ndctcp7-128k-rx-35": (
        PAPERS / "newdctcp-fig7.yaml",
        {"rounds": 6},
        "newdctcp-fig7-sru128k",
        "newdctcp-rx",
        35,
    ),
    "rccheavy-rcc-90": (PAPERS / "rcc-heavy.yaml", {"rounds": 2}, None, "rcc", 90),
    "sim-rcc-200": (
        REPO / "experiments" / "sim.yaml",
        {"rounds": 2},
        "sim-sru64k-buf64k",
        "rcc",
        200,
    ),
    "sim-ictcp-200": (
        REPO / "experiments" / "sim.yaml",
        {"rounds": 2},
        "sim-sru64k-buf64k",
        "ictcp",
        200,
    ),
    # ICTCP's incremental stepping (sim/engine.py PolicyStepper): sim.yaml's own
    # 10 rounds at small N and with its 32 KB buffer at N = 200, and one round
    # at N = 100, 500 and 1000 for the step's cost
    **{
        f"sim-ictcp-{n}-r10": (
            REPO / "experiments" / "sim.yaml",
            {"rounds": 10},
            "sim-sru64k-buf64k",
            "ictcp",
            n,
        )
        for n in (1, 8, 64, 100)
    },
    "sim-ictcp-200-buf32k-r10": (
        REPO / "experiments" / "sim.yaml",
        {"rounds": 10},
        "sim-sru64k-buf32k",
        "ictcp",
        200,
    ),
    **{
        f"sim-ictcp-{n}-r1": (
            REPO / "experiments" / "sim.yaml",
            {"rounds": 1},
            "sim-sru64k-buf64k",
            "ictcp",
            n,
        )
        for n in (100, 500, 1000)
    },
    # RCC's incremental stepping (sim/engine.py PolicyStepper): the same points,
    # the RCC presets at small N (per-round connections: flows come and go)
    **{
        f"sim-rcc-{n}-r10": (
            REPO / "experiments" / "sim.yaml",
            {"rounds": 10},
            "sim-sru64k-buf64k",
            "rcc",
            n,
        )
        for n in (1, 8, 64, 100)
    },
    "sim-rcc-200-buf32k-r10": (
        REPO / "experiments" / "sim.yaml",
        {"rounds": 10},
        "sim-sru64k-buf32k",
        "rcc",
        200,
    ),
    **{
        f"sim-rcc-{n}-r1": (
            REPO / "experiments" / "sim.yaml",
            {"rounds": 1},
            "sim-sru64k-buf64k",
            "rcc",
            n,
        )
        for n in (500, 1000)
    },
    **{
        f"rccheavy-rcc-{n}-r4": (PAPERS / "rcc-heavy.yaml", {"rounds": 4}, None, "rcc", n)
        for n in (10, 40)
    },
    "rccfig7d-rcc-30-r2": (PAPERS / "rcc-fig7d.yaml", {"rounds": 2}, None, "rcc", 30),
    "sim-rotate-200": (
        REPO / "experiments" / "sim.yaml",
        {"rounds": 2},
        "sim-sru64k-buf64k",
        "front+rotate",
        200,
    ),
    "sim-switch-100": (
        REPO / "experiments" / "sim.yaml",
        {"rounds": 2},
        "sim-sru64k-buf64k",
        "front+switch",
        100,
    ),
    "seed003-batched-100": (PAPERS / "seed003.yaml", {"rounds": 3}, None, "batched", 100),
    "atscale-rcc-0.6": (
        PAPERS / "rcc-at-scale.yaml",
        {"tors": 4, "hosts_per_tor": 10, "short_flows": 150},
        None,
        "rcc",
        0.6,
    ),
    "atscale-ictcp-0.6": (
        PAPERS / "rcc-at-scale.yaml",
        {"tors": 4, "hosts_per_tor": 10, "short_flows": 150},
        None,
        "ictcp",
        0.6,
    ),
}

TIMINGS = ("wall_s", "point_peak_rss_mb", "rss_before_mb")  # differ from run to run


def _point(name: str) -> Any:
    path, flags, variant, scheme, x = POINTS[name]
    sc = scenario.of_path(path)
    exps = sc.load(path, flags)
    exp = next(e for e in exps if variant is None or e.name == variant)
    for p in exp.points():
        if p.scheme.name == scheme and p.repeat == 0 and getattr(p, "n", None) == x:
            return p
        if p.scheme.name == scheme and p.repeat == 0 and getattr(p, "load", None) == x:
            return p
    raise SystemExit(f"{name}: no point {scheme} at {x} in {exp.name}")


def _outcome(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k not in TIMINGS}


def record(out: Path, only: list[str]) -> int:
    engine.init_worker()
    got: dict[str, Any] = {}
    for name in only or list(POINTS):
        p = _point(name)
        load = os.getloadavg()[0]
        c0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
        t0 = time.monotonic()
        at_scale = hasattr(p, "load")
        rec = sim_atscale.run_point(p) if at_scale else engine.run_point(p).record()
        wall = time.monotonic() - t0
        cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime - c0
        print(f"{name:28s} {rec.get('status')} wall {wall:7.2f} s cpu {cpu:7.2f} s load {load:.2f}")
        sys.stdout.flush()
        got[name] = {"outcome": _outcome(rec), "wall_s": wall, "cpu_s": cpu, "load": load}
    out.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    return 0


def diff(a: Path, b: Path) -> int:
    old, new = json.loads(a.read_text()), json.loads(b.read_text())
    bad = 0
    for name in sorted(set(old) & set(new)):
        same = old[name]["outcome"] == new[name]["outcome"]
        bad += not same
        ratio = new[name]["cpu_s"] / old[name]["cpu_s"] if old[name]["cpu_s"] else float("nan")
        print(
            f"{name:28s} {'same' if same else 'DIFFERENT'}  cpu {old[name]['cpu_s']:7.2f} -> "
            f"{new[name]['cpu_s']:7.2f} s (x{ratio:.2f})"
        )
        if not same:
            for k in sorted(set(old[name]["outcome"]) | set(new[name]["outcome"])):
                if old[name]["outcome"].get(k) != new[name]["outcome"].get(k):
                    print(f"    differs: {k}")
    for name in sorted(set(old) ^ set(new)):
        print(f"{name:28s} only in {'the first' if name in old else 'the second'} file")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("out", type=Path)
    r.add_argument("--only", nargs="*", default=[], choices=list(POINTS))
    d = sub.add_parser("diff")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "record":
        return record(args.out, args.only)
    return diff(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
