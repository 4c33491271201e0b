"""p4incast-run: run one YAML experiment — every (scheme, N, repeat) — on the
BMv2 testbed or the ns-3 model, here or on a Ray cluster, write results and
plots, print a summary table.

    p4incast-run experiments/default.yaml            # engine from the file (auto)
    p4incast-run experiments/default.yaml --engine sim --senders 1,8,32 --rounds 5
    p4incast-run experiments/sim.yaml --cluster ray://head:10001   # every point on Ray
    p4incast-run experiments/sim.yaml --resume results/sim-20261122T101500Z
    p4incast-run reproduce [--only PRESET ...] [--rounds R] [--out DIR] [--report-only]
    p4incast-run experiments/papers/rcc-at-scale.yaml [--loads 0.3,0.6] [--tors 4 ...]

A preset with `scenario: at-scale` (RCC's 1000-host fabric swept over offered
load) runs in experiments/atscale.py, with its own options (--help there).

`p4incast-run reproduce` is `make reproduce` (experiments/reproduce.py): every
paper preset and ablation on the simulator, then REPORT.md. The word
`reproduce` always means that subcommand; an experiment file named just
`reproduce` runs as `p4incast-run ./reproduce`.

A failed run is recorded as failed and the sweep goes on. Results land in
results/<name>-<UTC time>/ (results.json, rounds.csv, summary.csv, *.png),
rewritten after every run, so an interrupted sweep (Ctrl-C, a crash) keeps
what it finished. `--resume DIR` runs only what DIR lacks: every point with
no run there, or whose run failed (a failed run is replaced by the new one);
points finished ok are kept as they are. Where points run is
experiments/executors.py: one at a time (BMv2), a local process pool (the
simulator), or warm actors on a Ray cluster (`--cluster`, or `cluster:` in
the file).
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from p4incast.engines import REGISTRY, Engine, resolve
from p4incast.model.atscale import ATSCALE_SCENARIO

from . import plots
from .config import (
    ENGINE_CHOICES,
    ExperimentError,
    check_cluster,
    load_all,
    scenario_of,
)
from .executors import RETRIES, ClusterError
from .runner import executor_for, resume_sets, run_experiments

REPO = Path(__file__).resolve().parent.parent


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated integers") from None


SUBCOMMAND = "reproduce"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [SUBCOMMAND]:
        if Path(SUBCOMMAND).is_file():
            print(
                f"p4incast-run: running the {SUBCOMMAND} subcommand; the experiment file "
                f"./{SUBCOMMAND} here runs with `p4incast-run ./{SUBCOMMAND}`",
                file=sys.stderr,
            )
        from . import reproduce  # matplotlib and the report code: only when asked for

        return reproduce.main(argv[1:], prog=f"p4incast-run {SUBCOMMAND}")
    first = next((a for a in argv if not a.startswith("-")), None)
    if first and Path(first).is_file() and scenario_of(Path(first)) == ATSCALE_SCENARIO:
        from . import atscale  # loads the at-scale model's driver: only for its presets

        return atscale.main(argv)
    ap = argparse.ArgumentParser(
        prog="p4incast-run",
        description=__doc__.split("\n")[0],
        epilog=f"p4incast-run {SUBCOMMAND} --help: the paper presets and their report "
        "(make reproduce)",
    )
    ap.add_argument(
        "experiment",
        nargs="?",
        type=Path,
        default=REPO / "experiments" / "default.yaml",
        help="experiment YAML (default: experiments/default.yaml)",
    )
    ap.add_argument("--engine", choices=ENGINE_CHOICES, help="override the file's engine")
    where = ap.add_mutually_exclusive_group()
    where.add_argument(
        "--out", type=Path, help="results directory (default: results/<name>-<time>)"
    )
    where.add_argument(
        "--resume",
        type=Path,
        metavar="RESULTS_DIR",
        help="continue the sweep whose results are in RESULTS_DIR: run only the points "
        "it has no ok run for (failed ones run again)",
    )
    ap.add_argument("--senders", type=_ints, help="override N values, e.g. 1,4,16")
    ap.add_argument("--schemes", help="only these schemes (comma-separated names)")
    ap.add_argument("--rounds", type=int, help="override app.rounds")
    ap.add_argument("--repeats", type=int, help="override repeats")
    ap.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run every point on a Ray cluster: auto (the one this machine is in), "
        "ray://HOST:PORT or HOST:PORT; local: here (overrides the file's cluster:)",
    )
    ap.add_argument(
        "--retries",
        type=int,
        default=RETRIES,
        help=f"cluster: times a point lost with its worker is run again (default {RETRIES})",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        help="sim: parallel runs (default: one per CPU here; on a cluster, at most this many)",
    )
    ap.add_argument(
        "--capture",
        action="store_true",
        help="bmv2: keep each run's receiver-side packet headers (receiver.pcap) and, "
        "with rotation, the agent's per-tick state (rotation.jsonl) in its log folder",
    )
    ap.add_argument("--check", action="store_true", help="validate and show the plan, run nothing")
    args = ap.parse_args(argv)

    try:
        exps = [
            e.with_overrides(
                senders=args.senders,
                rounds=args.rounds,
                repeats=args.repeats,
                schemes=args.schemes.split(",") if args.schemes else None,
                engine=args.engine,
            )
            for e in load_all(args.experiment)
        ]
        cluster = check_cluster(args.cluster or exps[0].cluster, "--cluster")
        engine, note = _engine(exps[0].engine, cluster)
        if args.retries < 0 or (args.jobs is not None and args.jobs < 1):
            raise ExperimentError("--retries must be >= 0 and --jobs >= 1")
        if args.capture:
            if not hasattr(engine, "capture") or cluster != "local":
                raise ExperimentError("--capture: only the bmv2 engine, run here, captures")
            engine.capture = True
    except (ExperimentError, RuntimeError) as err:
        print(f"p4incast-run: {err}", file=sys.stderr)
        return 2
    print(note, flush=True)
    # On a cluster, checks that need the engine installed run on the node that runs the point.
    local = engine.unavailable() is None
    problems = [
        m for e in exps for p in e.points() for m in (engine.check(p) if local else p.problems())
    ]
    if problems:
        for p in dict.fromkeys(problems):
            print(f"p4incast-run: {p}", file=sys.stderr)
        return 2
    for e in exps:
        print(
            f"{e.name}: {len(e.schemes)} schemes x N in {list(e.senders)} x {e.repeats} "
            f"repeat(s) = {len(e.points())} runs of {e.app.rounds} rounds",
            flush=True,
        )
    for s in exps[0].schemes:
        print(f"  {s.name:14s} {s.describe()}")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = args.experiment.stem if len(exps) > 1 else exps[0].name
    root = args.resume or args.out or REPO / "results" / f"{base}-{stamp}"
    out_dirs = [root / e.name for e in exps] if len(exps) > 1 else [root]
    sets = None
    try:
        if args.resume:
            if not args.resume.is_dir():
                raise ExperimentError(f"--resume {args.resume}: no such results folder")
            sets = resume_sets(exps, engine, out_dirs)
            kept = sum(len(rs.runs) for rs in sets)
            total = sum(len(e.points()) for e in exps)
            print(f"resuming {root}: {kept} of {total} runs finished ok, {total - kept} to run")
        executor = executor_for(engine, cluster, workers=args.jobs, retries=args.retries)
        print(f"{'would run' if args.check else 'running'} on {executor.open()}", flush=True)
    except (ExperimentError, ClusterError) as err:
        print(f"p4incast-run: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted while connecting; nothing ran", file=sys.stderr)
        return 130
    t0 = time.monotonic()
    try:
        if args.check:
            return 0
        for d in out_dirs:
            d.mkdir(parents=True, exist_ok=True)
        sets = run_experiments(exps, engine, out_dirs, 1, executor=executor, sets=sets)
    except KeyboardInterrupt:
        print(
            f"\ninterrupted; finished runs are in {root}\n"
            f"resume with: p4incast-run {args.experiment} --resume {root} (and the same flags)",
            file=sys.stderr,
        )
        return 130
    except ClusterError as err:
        print(f"p4incast-run: {err}; resume with --resume {root}", file=sys.stderr)
        return 2
    finally:
        executor.close()
    total = sum(len(rs.runs) for rs in sets)
    failed = 0
    for rs in sets:
        print()
        print(rs.summary_table())
        failed += sum(1 for r in rs.summaries() if r.get("status") != "ok")
    print(f"\n{total} runs in {(time.monotonic() - t0) / 60:.1f} min ({failed} failed)")
    for rs in sets:
        print(f"results: {rs.out_dir}")
        for p in plots.plot_all(rs, rs.out_dir):
            print(f"plot:    {p}")
    return 1 if failed == total else 0


def _engine(requested: str, cluster: str) -> tuple[Engine, str]:
    """The engine and the line that says which. A sweep on a cluster that names its
    engine does not need that engine here: the nodes check it when they start."""
    if cluster != "local" and requested != "auto":
        engine = REGISTRY[requested]
        if engine.unavailable():
            return engine, f"engine: {engine.name} (on the cluster; not installed here)"
    return resolve(requested)


if __name__ == "__main__":
    sys.exit(main())
