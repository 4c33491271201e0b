"""Running an experiment's points: a progress bar, the ResultSets they land in,
and resuming an interrupted sweep. The command line (p4incast-run, __main__)
and `make reproduce` (reproduce.py) both run points through `run_experiments`;
where they run is experiments/executors.py. Every sweep records where it came
from (experiments/provenance.py) in each ResultSet when it starts; a resumed
one keeps the folder's first record and appends its own to `resumed`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from p4incast.engines import Engine
from p4incast.model.scheme import Point

from . import provenance, results
from .config import Experiment, ExperimentError
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


def _label(point: Point, repeats: int) -> str:
    return f"{point.scheme.name} N={point.n}" + (f" #{point.repeat + 1}" if repeats > 1 else "")


def _log_dir(out_dir: Path, point: Point) -> Path:
    return out_dir / "logs" / f"{point.scheme.name}-n{point.n}-r{point.repeat}"


def point_key(point: Point) -> tuple[str, int, int]:
    """What identifies a point within its experiment: (scheme, N, repeat)."""
    return point.scheme.name, point.n, point.repeat


def run_key(run: Mapping[str, Any]) -> tuple[str, int, int]:
    """The same key for a run record of results.json."""
    return str(run.get("scheme")), int(run.get("n") or 0), int(run.get("repeat") or 0)


def run_experiments(
    exps: list[Experiment],
    engine: Engine,
    out_dirs: list[Path],
    jobs: int,
    *,
    executor: Executor | None = None,
    sets: list[results.ResultSet] | None = None,
) -> list[results.ResultSet]:
    """Every point of every experiment; one ResultSet per experiment, rewritten per run.

    `sets`: ResultSets to continue (--resume); their runs finished ok are not
    run again. `executor`: an opened executor (default: the local one for the
    engine, `jobs` worker processes when it runs points side by side). The
    provenance of this sweep (`provenance.capture`) goes to every set first
    (`ResultSet.start`: a resumed set keeps its own and lists this one as resumed).
    """
    if sets is None:
        sets = [
            results.ResultSet(d, e.name, e.as_dict(), link_bps=e.link_bps(engine.name))
            for e, d in zip(exps, out_dirs, strict=True)
        ]
    record = provenance.capture(engine.name)
    for rs in sets:
        rs.start(record)
    done = [{run_key(r) for r in rs.runs if r.get("status") == "ok"} for rs in sets]
    todo = [
        Job(i, p, _log_dir(out_dirs[i], p))
        for i, e in enumerate(exps)
        for p in e.points()
        if point_key(p) not in done[i]
    ]
    # A run costs a network setup (~8 senders' worth) plus time in proportion to N.
    bar = Progress([8 + j.point.n for j in todo])
    if engine.parallel:
        bar.weights = sorted(bar.weights)  # completion order: small N first

    def started(job: Job) -> None:
        bar.start(_label(job.point, exps[job.index].repeats))

    def finished(job: Job, record: dict[str, Any]) -> None:
        summary = sets[job.index].add(record)
        bar.finish(_prefix(exps, job.index) + results.run_line(summary))

    if executor is None:
        with executor_for(engine, "local", workers=jobs) as local:
            print(f"running on {local.where}", flush=True)
            local.run(todo, finished, started)
    else:
        executor.run(todo, finished, started)
    return sets


def resume_sets(
    exps: list[Experiment], engine: Engine, out_dirs: list[Path]
) -> list[results.ResultSet]:
    """The ResultSets of an interrupted sweep, ready to continue: ExperimentError when
    a folder holds another experiment, other settings or another engine's runs."""
    sets = []
    for e, d in zip(exps, out_dirs, strict=True):
        fresh = results.ResultSet(d, e.name, e.as_dict(), link_bps=e.link_bps(engine.name))
        if not (d / results.RESULTS_JSON).is_file():
            sets.append(fresh)  # interrupted before its first point finished
            continue
        try:
            old = results.load(d)
        except ValueError as err:
            raise ExperimentError(f"--resume: {err}") from None
        differs = first_difference(_settings(old.config), _settings(fresh.config))
        if old.name != e.name or differs:
            why = differs or f"it holds experiment {old.name!r}"
            raise ExperimentError(
                f"--resume {d}: not this experiment's results ({why}); "
                "resume with the same file and flags"
            )
        engines = {r.get("engine") for r in old.runs if r.get("status") == "ok"}
        if engines - {engine.name}:
            raise ExperimentError(
                f"--resume {d}: its runs are from engine {', '.join(map(str, engines))}, "
                f"this sweep runs {engine.name}; pass --engine"
            )
        old.runs = [r for r in old.runs if r.get("status") == "ok"]
        sets.append(old)
    return sets


def _settings(config: Any) -> Any:
    """An experiment's config echo without what does not change the results."""
    plain = json.loads(json.dumps(config))
    if isinstance(plain, dict):
        plain.pop("cluster", None)
    return plain


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """The first key at which two config echoes differ ("app.rounds: 10 vs 2"), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            diff = first_difference(a.get(key), b.get(key), f"{where}.{key}" if where else key)
            if diff:
                return diff
        return None
    return None if a == b else f"{where}: {json.dumps(a)} there vs {json.dumps(b)} now"


def _prefix(exps: list[Experiment], i: int) -> str:
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
