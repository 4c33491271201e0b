"""Running an experiment's points: a progress bar, the ResultSets they land in,
and resuming an interrupted sweep — for every scenario (experiments/scenario.py
gives each step what differs: the points' keys, labels, result sets). The
command line (p4incast-run, reports/run_cli.py) and `make reproduce`
(reports/reproduce.py) both run points through `run_experiments`; where they
run is experiments/executors.py.
Every sweep records where it came from (experiments/provenance.py) in each
ResultSet when it starts; a resumed one keeps the folder's first record and
appends its own to `resumed`.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from p4incast.engines import Engine

from . import provenance, results, scenario
from .config import ExperimentError
from .executors import RETRIES, Executor, Job, LocalPool, Sequential
from .ray_pool import RayPool


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


def pending(
    exps: Sequence[Any], out_dirs: Sequence[Path], sets: Sequence[results.ResultSet]
) -> list[Job]:
    """The jobs of every point that has no run finished ok in its experiment's set."""
    todo = []
    for i, (e, d, rs) in enumerate(zip(exps, out_dirs, sets, strict=True)):
        sc = scenario.of(e)
        done = {sc.run_key(r) for r in rs.runs if r.get("status") == "ok"}
        todo += [Job(i, p, sc.log_dir(d, p)) for p in e.points() if sc.point_key(p) not in done]
    return todo


def share_identical(jobs: Sequence[Job]) -> tuple[list[Job], dict[Any, list[Job]]]:
    """The jobs to run, each point once, and per point run the jobs of other
    experiments with an identical point: they take its record. A point is all a
    run depends on (scheme, N, repeat and its seed, topology, app, transport;
    the engine is the sweep's) and the engines are deterministic for it, so an
    ablation's baseline rows that repeat a paper preset's points cost nothing twice."""
    run: dict[Any, Job] = {}
    twins: dict[Any, list[Job]] = {}
    for job in jobs:
        if run.setdefault(job.point, job) is not job:
            twins.setdefault(job.point, []).append(job)
    return list(run.values()), twins


def run_experiments(
    exps: Sequence[Any],
    engine: Engine,
    out_dirs: Sequence[Path],
    jobs: int,
    *,
    executor: Executor | None = None,
    sets: list[results.ResultSet] | None = None,
) -> list[results.ResultSet]:
    """Every point of every experiment; one ResultSet per experiment, rewritten per run.

    The experiments may be of any scenario (experiments/scenario.py) whose points
    `engine` runs. `sets`: ResultSets to continue (--resume); their runs finished
    ok are not run again. `executor`: an opened executor (default: the local one
    for the engine, `jobs` worker processes when it runs points side by side). The
    provenance of this sweep (`provenance.capture`) goes to every set first
    (`ResultSet.start`: a resumed set keeps its own and lists this one as resumed).
    """
    if sets is None:
        sets = [scenario.of(e).new_set(e, d, engine) for e, d in zip(exps, out_dirs, strict=True)]
    record = provenance.capture(engine.name)
    for rs in sets:
        rs.start(record)
    todo, twins = share_identical(pending(exps, out_dirs, sets))
    bar = Progress([scenario.of(exps[j.index]).weight(j.point) for j in todo])
    if engine.parallel:
        bar.weights = sorted(bar.weights)  # completion order: the cheapest first

    def started(job: Job) -> None:
        e = exps[job.index]
        bar.start(scenario.of(e).label(job.point, e.repeats))

    def finished(job: Job, record: dict[str, Any]) -> None:
        rs = sets[job.index]
        rs.add(record)
        line = _prefix(exps, job.index) + rs.line(record)
        for twin in twins.get(job.point, []):
            sets[twin.index].add({**record, results.SHARED_FROM: out_dirs[job.index].name})
            line += f" (also {_prefix(exps, twin.index).strip() or 'another experiment'})"
        bar.finish(line)

    if executor is None:
        with executor_for(engine, "local", workers=jobs) as local:
            print(f"running on {local.where}", flush=True)
            local.run(todo, finished, started)
    else:
        executor.run(todo, finished, started)
    return sets


def resume_sets(
    exps: Sequence[Any], engine: Engine, out_dirs: Sequence[Path]
) -> list[results.ResultSet]:
    """The ResultSets of an interrupted sweep, ready to continue: ExperimentError when
    a folder holds another experiment, other settings (what its scenario's
    `resume_difference` compares) or another engine's runs. A continued set keeps
    its runs finished ok and takes this sweep's settings."""
    sets = []
    for e, d in zip(exps, out_dirs, strict=True):
        sc = scenario.of(e)
        fresh = sc.new_set(e, d, engine)
        if not (d / results.RESULTS_JSON).is_file():
            sets.append(fresh)  # interrupted before its first point finished
            continue
        try:
            old = results.load(d, sc.result_set)
        except ValueError as err:
            raise ExperimentError(f"--resume: {err}") from None
        differs = sc.resume_difference(old.config, fresh.config)
        if old.name != e.name or differs:
            why = differs or f"it holds experiment {old.name!r}"
            raise ExperimentError(
                f"--resume {d}: not this experiment's results ({why}); "
                "resume with the same file and flags"
            )
        engines = {r.get("engine") for r in old.runs if r.get("status") == "ok"}
        if engines - {sc.recorded_engine(engine)}:
            raise ExperimentError(
                f"--resume {d}: its runs are from engine {', '.join(map(str, engines))}, "
                f"this sweep runs {engine.name}; pass --engine"
            )
        old.runs = [r for r in old.runs if r.get("status") == "ok"]
        old.config, old.link_bps = fresh.config, fresh.link_bps
        sets.append(old)
    return sets


def _prefix(exps: Sequence[Any], i: int) -> str:
    return f"[{exps[i].name}] " if len(exps) > 1 else ""


def executor_for(
    engine: Engine,
    cluster: str,
    *,
    workers: int | None = None,
    retries: int = RETRIES,
    log: Callable[[str], None] | None = None,
) -> Executor:
    """The executor a sweep asks for: `cluster` "local" picks by engine, else Ray."""
    if cluster != "local":
        return RayPool(engine, cluster, retries=retries, max_workers=workers, log=log)
    if not engine.parallel:
        return Sequential(engine)
    return LocalPool(engine, workers or os.cpu_count() or 1)
