"""Where the points of a sweep run — here one at a time, in a local process
pool, or on a Ray cluster — behind one interface, so the runner and the
results folder are the same whichever runs them.

    with executor:                                  # open(): connect, say where
        executor.run(jobs, on_result, on_start)     # on_result(job, record) per point

- `Sequential`: in this process, in order. Engines that take the whole
  machine (`parallel` False: the BMv2 testbed).
- `LocalPool`: fresh (spawn) worker processes on this machine, each prepared
  once by the engine's `worker_init` (ns-3's load and the model's compile).
  The default for engines that run side by side (the simulator).
- `RayPool` (ray_pool.py): warm Ray actors on a cluster (`p4incast-run --cluster`), one per
  CPU the cluster's nodes offer, each paying `worker_init` once. Engines that
  take a whole node run only on nodes that advertise a resource named after
  the engine (`ray start ... --resources '{"bmv2": 1}'`), one actor per such
  node, so one point at a time per node. Every node needs p4incast and the
  engine installed (the same `make setup`).

Faults on Ray: a point whose actor or node dies is lost, not failed — it goes
back to the front of the queue (to a worker on another node when there is
one) up to `retries` times, then is recorded as failed with the reason. A
dead actor is replaced while the cluster still offers the CPU for it. Points
that finished were handed to `on_result` (and written by the runner) as they
came back, so a fault never loses them. A point that *fails* (the engine's
own failed record) is a result and is not retried.

Determinism: an engine's record depends only on its Point, seeds included,
never on which worker ran it or what ran there before; `without_timing`
drops the keys that measure wall-clock time, so records from any two
executors compare equal.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from p4incast.engines import Engine
from p4incast.engines.base import init_worker, run_in_worker

# record keys that measure the process that ran a point (its wall-clock time, its memory),
# not the network: what may differ between two runs of the same point
TIMING_KEYS = ("wall_s", "point_peak_rss_mb", "rss_before_mb")
RETRIES = 2  # a lost point runs at most 1 + RETRIES times


class ClusterError(RuntimeError):
    """The cluster cannot be used (unreachable, Ray missing, nowhere to run): one line."""


@dataclass
class Job:
    """One point to run, for experiment `index` of the sweep."""

    index: int
    point: Any  # the engine's kind of point: an incast Point, or an AtScalePoint
    log_dir: Path
    attempts: int = 0  # times it was lost with its worker
    lost_on: set[str] = field(default_factory=set)  # Ray node ids where it was lost


OnResult = Callable[[Job, dict[str, Any]], None]
OnStart = Callable[[Job], None]


def without_timing(record: Mapping[str, Any]) -> dict[str, Any]:
    """A run record without its wall-clock keys: what must match across executors."""
    return {k: v for k, v in record.items() if k not in TIMING_KEYS}


def lost_record(job: Job, engine: Engine, reason: str) -> dict[str, Any]:
    """The failed record of a point given up on after its retries."""
    why = f"lost with its worker {job.attempts} times; last: {reason}"
    return engine.failed_record(job.point, why)


class Executor:
    """Runs jobs and hands each record back as it finishes (see the module docstring)."""

    where: str = ""  # set by `with executor:` (what open() said)

    def open(self) -> str:
        """Get ready (connect to a cluster); one line saying where points will run."""
        return "here"

    def run(
        self, jobs: Sequence[Job], on_result: OnResult, on_start: OnStart | None = None
    ) -> None:
        """Run every job: on_start(job) as it is handed out, on_result(job, record) as it
        finishes, both in the caller's thread. Ctrl-C stops the workers and re-raises."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what `open` took (idempotent)."""

    def __enter__(self) -> Executor:
        self.where = self.open()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class Sequential(Executor):
    """One point at a time in this process (engines that take the whole machine)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def open(self) -> str:
        return f"this machine, one {self.engine.name} point at a time"

    def run(
        self, jobs: Sequence[Job], on_result: OnResult, on_start: OnStart | None = None
    ) -> None:
        for job in jobs:
            if on_start:
                on_start(job)
            on_result(job, self.engine.run(job.point, job.log_dir).record())


def _pool_worker_init(engine_name: str) -> None:
    """A local pool worker's initializer: leave Ctrl-C to the runner (which stops the
    pool), then prepare the engine. Module level, so a spawned worker can unpickle it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    init_worker(engine_name)


class LocalPool(Executor):
    """`workers` fresh (spawn) processes on this machine, each prepared once.

    Spawned, not forked, so the runner never loads what a worker loads (ns-3 is
    a process-wide singleton). Ctrl-C terminates the workers and re-raises.
    """

    def __init__(self, engine: Engine, workers: int) -> None:
        self.engine = engine
        self.workers = max(1, workers)

    def open(self) -> str:
        return (
            f"this machine, {self.workers} {self.engine.name} worker process(es), "
            "each prepared once (ns-3 load and model compile, ~1 min)"
        )

    def run(
        self, jobs: Sequence[Job], on_result: OnResult, on_start: OnStart | None = None
    ) -> None:
        if not jobs:
            return
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_pool_worker_init,
            initargs=(self.engine.name,),
        )
        try:
            futures = {
                pool.submit(run_in_worker, self.engine.name, j.point, j.log_dir): j for j in jobs
            }
            for fut in as_completed(futures):
                on_result(futures[fut], fut.result())
        except BaseException:
            for child in multiprocessing.active_children():
                child.terminate()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
