"""p4incast-run: run one YAML experiment — every (scheme, N, repeat) — on the
BMv2 testbed or the ns-3 model, write results and plots, print a summary table.

    p4incast-run experiments/default.yaml            # engine from the file (auto)
    p4incast-run experiments/default.yaml --engine sim --senders 1,8,32 --rounds 5

A failed run is recorded as failed and the sweep goes on. Results land in
results/<name>-<UTC time>/ (results.json, rounds.csv, summary.csv, *.png),
rewritten after every run, so an interrupted sweep keeps what it finished.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import UTC, datetime
from pathlib import Path

from p4incast.engines import Engine, resolve
from p4incast.engines.base import init_worker, run_in_worker
from p4incast.model.scheme import Point

from . import plots, results
from .config import ENGINE_CHOICES, Experiment, ExperimentError, load_all

REPO = Path(__file__).resolve().parent.parent


class Progress:
    """One-line progress bar with an ETA on stderr (one line per run when not a tty)."""

    def __init__(self, weights: list[float]) -> None:
        """`weights`: expected cost of each run in order (ETA = elapsed per unit done)."""
        self.weights = weights
        self.total, self.done, self.t0 = len(weights), 0, time.monotonic()
        self.tty = sys.stderr.isatty()

    def _bar(self, label: str) -> str:
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        elapsed = time.monotonic() - self.t0
        done_w = sum(self.weights[: self.done])
        left_w = sum(self.weights[self.done :])
        eta = elapsed / done_w * left_w if done_w else float("nan")
        eta_s = "--:--" if eta != eta else f"{int(eta) // 60:02d}:{int(eta) % 60:02d}"
        return (
            f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
            f"eta {eta_s}  {label}"
        )

    def start(self, label: str) -> None:
        if self.tty:
            sys.stderr.write("\r\033[K" + self._bar(f"running {label}"))
            sys.stderr.flush()

    def finish(self, line: str) -> None:
        self.done += 1
        if self.tty:
            sys.stderr.write("\r\033[K")
        sys.stderr.write(self._bar(line) + "\n")
        sys.stderr.flush()


def _label(point: Point, repeats: int) -> str:
    return f"{point.scheme.name} N={point.n}" + (f" #{point.repeat + 1}" if repeats > 1 else "")


def _log_dir(out_dir: Path, point: Point) -> Path:
    return out_dir / "logs" / f"{point.scheme.name}-n{point.n}-r{point.repeat}"


def run_experiments(
    exps: list[Experiment], engine: Engine, out_dirs: list[Path], jobs: int
) -> list[results.ResultSet]:
    """Every point of every experiment; one ResultSet per experiment, rewritten per run."""
    sets = [
        results.ResultSet(d, e.name, e.as_dict(), link_bps=e.link_bps(engine.name))
        for e, d in zip(exps, out_dirs, strict=True)
    ]
    points = [(i, p) for i, e in enumerate(exps) for p in e.points()]
    # A run costs a network setup (~8 senders' worth) plus time in proportion to N.
    bar = Progress([8 + p.n for _i, p in points])
    if not engine.parallel:
        for i, point in points:
            bar.start(_label(point, exps[i].repeats))
            run = engine.run(point, _log_dir(out_dirs[i], point))
            bar.finish(_prefix(exps, i) + results.run_line(sets[i].add(run.record())))
        return sets
    # Engines that run side by side get fresh (spawn) worker processes, so the
    # parent never loads what a worker loads (ns-3 is a process-wide singleton).
    bar.weights = sorted(bar.weights)  # completion order: small N first
    ctx = multiprocessing.get_context("spawn")
    print(f"starting {jobs} {engine.name} worker(s) (ns-3 load and model compile, ~1 min)")
    with ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=ctx,
        initializer=init_worker,
        initargs=(engine.name,),
    ) as pool:
        futures = {
            pool.submit(run_in_worker, engine.name, p, _log_dir(out_dirs[i], p)): i
            for i, p in points
        }
        for fut in as_completed(futures):
            i = futures[fut]
            run = fut.result()
            bar.finish(_prefix(exps, i) + results.run_line(sets[i].add(run.record())))
    return sets


def _prefix(exps: list[Experiment], i: int) -> str:
    return f"[{exps[i].name}] " if len(exps) > 1 else ""


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated integers") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="p4incast-run", description=__doc__.split("\n")[0])
    ap.add_argument(
        "experiment",
        nargs="?",
        type=Path,
        default=REPO / "experiments" / "default.yaml",
        help="experiment YAML (default: experiments/default.yaml)",
    )
    ap.add_argument("--engine", choices=ENGINE_CHOICES, help="override the file's engine")
    ap.add_argument("--out", type=Path, help="results directory (default: results/<name>-<time>)")
    ap.add_argument("--senders", type=_ints, help="override N values, e.g. 1,4,16")
    ap.add_argument("--schemes", help="only these schemes (comma-separated names)")
    ap.add_argument("--rounds", type=int, help="override app.rounds")
    ap.add_argument("--repeats", type=int, help="override repeats")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="sim: parallel runs")
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
        engine, note = resolve(exps[0].engine)
    except (ExperimentError, RuntimeError) as err:
        print(f"p4incast-run: {err}", file=sys.stderr)
        return 2
    print(note, flush=True)
    problems = [f"{msg}" for e in exps for p in e.points() for msg in engine.check(p)]
    if problems:
        for p in dict.fromkeys(problems):
            print(f"p4incast-run: {p}", file=sys.stderr)
        return 2
    total = sum(len(e.points()) for e in exps)
    for e in exps:
        print(
            f"{e.name}: {len(e.schemes)} schemes x N in {list(e.senders)} x {e.repeats} "
            f"repeat(s) = {len(e.points())} runs of {e.app.rounds} rounds",
            flush=True,
        )
    for s in exps[0].schemes:
        print(f"  {s.name:14s} {s.describe()}")
    if args.check:
        return 0
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = args.experiment.stem if len(exps) > 1 else exps[0].name
    root = args.out or REPO / "results" / f"{base}-{stamp}"
    out_dirs = [root / e.name for e in exps] if len(exps) > 1 else [root]
    for d in out_dirs:
        d.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    try:
        sets = run_experiments(exps, engine, out_dirs, max(1, args.jobs))
    except KeyboardInterrupt:
        print(f"\ninterrupted; finished runs are in {root}", file=sys.stderr)
        return 130
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


if __name__ == "__main__":
    sys.exit(main())
