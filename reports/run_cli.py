"""p4incast-run: run one YAML experiment on the BMv2 testbed or the ns-3 model,
here or on a Ray cluster, write results and plots, print a summary table.

    p4incast-run experiments/default.yaml            # engine from the file (auto)
    p4incast-run experiments/default.yaml --engine sim --senders 1,8,32 --rounds 5
    p4incast-run experiments/sim.yaml --cluster ray://head:10001   # every point on Ray
    p4incast-run experiments/sim.yaml --resume results/sim-20261122T101500Z
    p4incast-run experiments/papers/rcc-at-scale.yaml --loads 0.3,0.6 --tors 4 --hosts-per-tor 5
    p4incast-run [PRESET] --report-only results/<name>-<time>   # rewrite its summary and plots
    p4incast-run reproduce [--only PRESET ...] [--rounds R] [--out DIR] [--report-only]

The preset's `scenario:` says what one point is (experiments/scenario.py): an
incast (absent, or `incast`: every (scheme, N, repeat)) or RCC's 1000-host
fabric (`at-scale`: every (scheme, offered load, repeat), experiments/atscale.py).
Each takes its own flags (incast: --engine --senders --rounds --capture;
at-scale: --loads --tors --hosts-per-tor --short-flows); the rest are shared.

`p4incast-run reproduce` is `make reproduce` (reports/reproduce.py): every
paper preset and ablation on the simulator, then REPORT.md. The word
`reproduce` always means that subcommand; an experiment file named just
`reproduce` runs as `p4incast-run ./reproduce`.

A failed run is recorded as failed and the sweep goes on. Results land in
results/<name>-<UTC time>/ (results.json, summary.csv, *.png; incast:
rounds.csv; at-scale: SUMMARY.md), rewritten after every run, so an
interrupted sweep (Ctrl-C, a crash) keeps what it finished. `--resume DIR`
runs only what DIR lacks: every point with no run there, or whose run failed
(a failed run is replaced by the new one); points finished ok are kept as
they are. Where points run is experiments/executors.py: one at a time (BMv2),
a local process pool (the simulator), or warm actors on a Ray cluster
(`--cluster`, or `cluster:` in the file).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from p4incast.experiments import results, scenario
from p4incast.experiments.config import ENGINE_CHOICES, ExperimentError, check_cluster
from p4incast.experiments.executors import RETRIES, ClusterError
from p4incast.experiments.runner import executor_for, pending, resume_sets, run_experiments
from p4incast.model.atscale import ATSCALE_SCENARIO
from p4incast.model.scheme import INCAST_SCENARIO

from . import scenario_report

REPO = Path(__file__).resolve().parent.parent
DEFAULT_EXPERIMENT = REPO / "experiments" / "default.yaml"
SUBCOMMAND = "reproduce"


def _numbers(kind: type) -> Any:
    def parse(text: str) -> list[Any]:
        try:
            return [kind(x) for x in text.split(",") if x]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected comma-separated {'integers' if kind is int else 'numbers'}"
            ) from None

    return parse


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="p4incast-run",
        description=(__doc__ or "").split("\n")[0],
        epilog=f"p4incast-run {SUBCOMMAND} --help: the paper presets and their report "
        "(make reproduce)",
    )
    ap.add_argument(
        "experiment",
        nargs="?",
        type=Path,
        help="experiment YAML (default: experiments/default.yaml; with --report-only, "
        "the preset the results folder names)",
    )
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
    where.add_argument(
        "--report-only",
        type=Path,
        metavar="RESULTS_DIR",
        help="run nothing: rewrite RESULTS_DIR's summary and plots (its runs read as "
        "the scenario its results.json records)",
    )
    ap.add_argument("--schemes", help="only these schemes (comma-separated names)")
    ap.add_argument("--repeats", type=int, help="override repeats")
    incast = ap.add_argument_group("incast presets")
    incast.add_argument("--engine", choices=ENGINE_CHOICES, help="override the file's engine")
    incast.add_argument("--senders", type=_numbers(int), help="override N values, e.g. 1,4,16")
    incast.add_argument("--rounds", type=int, help="override app.rounds")
    incast.add_argument(
        "--capture",
        action="store_true",
        help="bmv2: keep each run's receiver-side packet headers (receiver.pcap) and, "
        "with rotation, the agent's per-tick state (rotation.jsonl) in its log folder",
    )
    scale = ap.add_argument_group("at-scale presets")
    scale.add_argument("--loads", type=_numbers(float), help="only these loads, e.g. 0.3,0.6")
    scale.add_argument("--tors", type=int, help="ToRs (scale the fabric down for a quick look)")
    scale.add_argument("--hosts-per-tor", type=int, help="hosts per ToR")
    scale.add_argument(
        "--short-flows",
        type=int,
        help="short-flow arrivals per point (instead of the preset's background_share)",
    )
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
    ap.add_argument("--check", action="store_true", help="validate and show the plan, run nothing")
    ap.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when any run failed (default: only when every run failed)",
    )
    return ap


SCENARIO_FLAGS = ("senders", "rounds", "engine", "loads", "tors", "hosts_per_tor", "short_flows")


def _overrides(args: argparse.Namespace, sc: scenario.Scenario) -> dict[str, Any]:
    """The flags that change the preset, as the scenario's load takes them
    (ExperimentError naming the flags given that it does not take)."""
    given = {k: getattr(args, k) for k in ("repeats", *SCENARIO_FLAGS)}
    given["schemes"] = args.schemes.split(",") if args.schemes else None
    wrong = [k for k, v in given.items() if v is not None and k not in sc.flags]
    if args.capture and sc is not scenario.INCAST:
        wrong.append("capture")
    if wrong:
        flags = ", ".join("--" + k.replace("_", "-") for k in wrong)
        raise ExperimentError(f"{flags}: not a flag of {sc.name} presets")
    return {k: v for k, v in given.items() if k in sc.flags}


def _recorded(root: Path) -> tuple[str, str] | None:
    """(scenario, experiment) a results folder's records name: its results.json, or
    its first variant's (root/<variant>/results.json); None when it has none. A
    file from before `scenario` was kept is at-scale when it has the at-scale
    runner's `settings`, else incast."""
    files = [root / results.RESULTS_JSON, *sorted(root.glob(f"*/{results.RESULTS_JSON}"))]
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            old = ATSCALE_SCENARIO if "settings" in data else INCAST_SCENARIO
            name = str(data.get("experiment") or data.get("name") or f.parent.name)
            return str(data.get("scenario") or old), name
    return None


def _preset_of(root: Path) -> Path:
    """The preset whose results `root` holds (--report-only without one): the
    file under experiments/ named after the recorded experiment, else
    experiments/default.yaml (ExperimentError when the records are another
    scenario's and no preset has that name)."""
    rec = _recorded(root)
    if rec is None:
        raise ExperimentError(f"--report-only {root}: no {results.RESULTS_JSON} there")
    found = sorted((REPO / "experiments").rglob(f"{rec[1]}.yaml"))
    if found:
        return found[0]
    if rec[0] != INCAST_SCENARIO:
        raise ExperimentError(
            f"--report-only {root}: its runs are {rec[0]} runs of {rec[1]!r}, which no "
            "preset under experiments/ is named; give it: p4incast-run PRESET --report-only DIR"
        )
    return DEFAULT_EXPERIMENT


def _report_only(sc: scenario.Scenario, exps: Sequence[Any], root: Path) -> int:
    """Rewrite a results folder's summary and plots from its records, read as the
    scenario they record (never as another's: every run would read as failed)."""
    rec = _recorded(root)
    if rec is not None and rec[0] != sc.name:
        print(
            f"p4incast-run: --report-only {root}: its runs are {rec[0]} runs "
            f"({rec[1]!r}); the preset given is {sc.name}: give the preset they ran",
            file=sys.stderr,
        )
        return 2
    rep = scenario_report.of_scenario(sc)
    dirs = [root / e.name for e in exps] if len(exps) > 1 else [root]
    try:
        sets = [results.load(d, sc.result_set) for d in dirs]
    except ValueError as err:
        print(f"p4incast-run: --report-only: {err}", file=sys.stderr)
        return 2
    for e, rs in zip(exps, sets, strict=True):
        print(rep.report(e, rs))
        for p in rep.plots(rs):
            print(f"plot:    {p}")
    return 0


def _runnable(
    exps: Sequence[Any], check: Callable[[Any], list[str]]
) -> tuple[list[Any], dict[str, str], list[str]]:
    """The experiments with only the schemes the engine runs: (experiments,
    {scheme left out: why}, problems that stop the whole sweep). A scheme
    every point of which has a problem is left out, and the sweep goes on
    with the others; a problem of a point whose scheme runs elsewhere in the
    sweep, or a sweep with no scheme left, stops it."""
    why: dict[str, list[str]] = {}
    ok: set[str] = set()
    for e in exps:
        for p in e.points():
            found = check(p)
            if found:
                why.setdefault(p.scheme.name, []).extend(found)
            else:
                ok.add(p.scheme.name)
    partial = [m for name in why if name in ok for m in why[name]]
    left = {n: "; ".join(dict.fromkeys(ms)) for n, ms in why.items() if n not in ok}
    if partial or not ok:
        stop = partial or [m for ms in why.values() for m in ms]
        return list(exps), {}, list(dict.fromkeys(stop))
    kept = [replace(e, schemes=tuple(s for s in e.schemes if s.name not in left)) for e in exps]
    return kept, left, []


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
    args = _parser().parse_args(argv)
    try:
        if args.experiment is None:
            args.experiment = (
                _preset_of(args.report_only) if args.report_only else DEFAULT_EXPERIMENT
            )
        sc = scenario.of_path(args.experiment)
        exps = sc.load(args.experiment, _overrides(args, sc))
        cluster = check_cluster(args.cluster or exps[0].cluster, "--cluster")
        if args.retries < 0 or (args.jobs is not None and args.jobs < 1):
            raise ExperimentError("--retries must be >= 0 and --jobs >= 1")
        if args.report_only:
            return _report_only(sc, exps, args.report_only)
        engine, note = sc.engine(exps[0], cluster)
        if args.capture:  # this sweep's own engine object: the registered one is shared
            capturing = getattr(engine, "capturing", None)
            if capturing is None or cluster != "local":
                raise ExperimentError("--capture: only the bmv2 engine, run here, captures")
            engine = capturing()
    except (ExperimentError, RuntimeError) as err:
        print(f"p4incast-run: {err}", file=sys.stderr)
        return 2
    print(note, flush=True)
    # On a cluster, checks that need the engine installed run on the node that runs the point.
    local = engine.unavailable() is None
    check = engine.check if local else sc.problems
    exps, left_out, problems = _runnable(exps, check)
    if problems:
        for p in problems:
            print(f"p4incast-run: {p}", file=sys.stderr)
        if getattr(exps[0], "engine", None) == "auto":
            print(
                f"p4incast-run: `engine: auto` chose {engine.name} (why: the first line); "
                "install the engine those runs need",
                file=sys.stderr,
            )
        return 2
    for name, why in left_out.items():
        print(f"left out: {name} ({engine.name} cannot run it: {why})", flush=True)
    for e in exps:
        print(sc.plan(e), flush=True)
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
            todo = len(pending(exps, out_dirs, sets))
            total = sum(len(e.points()) for e in exps)
            print(f"resuming {root}: {total - todo} of {total} runs finished ok, {todo} to run")
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
    rep = scenario_report.of_scenario(sc)
    for e, rs in zip(exps, sets, strict=True):
        print()
        print(rep.report(e, rs))
        failed += rs.failed()
    for name, why in left_out.items():
        print(f"left out: {name} ({engine.name} cannot run it: {why})")
    print(f"\n{total} runs in {(time.monotonic() - t0) / 60:.1f} min ({failed} failed)")
    for rs in sets:
        print(f"results: {rs.out_dir}")
        for p in rep.plots(rs):
            print(f"plot:    {p}")
    return 1 if failed == total or (failed and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
