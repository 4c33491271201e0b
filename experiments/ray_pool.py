"""The Ray executor (`p4incast-run --cluster`): warm actors on a Ray cluster, with
lost points retried elsewhere (experiments/executors.py says what every
executor promises), and `LocalRayCluster`, a real cluster of node processes
on this machine for the tests and the benchmark. Ray itself is imported only
when a cluster is used (`pip install .[cluster]`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import socket
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from p4incast.engines import Engine
from p4incast.engines.base import ENGINES, init_worker, run_in_worker

from .executors import RETRIES, ClusterError, Executor, Job, OnResult, OnStart, lost_record

# For `ray start --head`: Ray Client's proxy forks a server per client while gRPC
# threads run, and with gRPC's fork handlers on that child sometimes dies at once
# ("Starting Ray client server failed", ray-project/ray#63202: 4 connections of
# ~25 on this machine). With them off: none of 34.
HEAD_ENV = {"GRPC_ENABLE_FORK_SUPPORT": "0"}

CAPACITY_EVERY_S = 5.0  # how often the Ray pool re-reads the cluster's nodes
WAIT_S = 1.0  # longest the Ray pool blocks before looking at the cluster again
STALL_S = 300.0  # the Ray pool gives up after this long with nowhere to run a point
CONNECT_TIMEOUT_S = 5.0  # TCP probe of a cluster address before Ray's own (30 s) timeout


# --- Ray ---------------------------------------------------------------------------------


class _QuietThreadNote(logging.Filter):
    """Drops Ray's note that the client's server set no SIGTERM handler (it calls
    ray.init from a thread); the runner handles Ctrl-C and ends the sweep itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in record.getMessage()


def _ray() -> ModuleType:
    """The ray module, or ClusterError saying how to install it."""
    try:
        import ray  # Ray is an optional extra (pip install .[cluster]): only --cluster loads it
    except ImportError:
        raise ClusterError(
            "--cluster needs Ray: pip install -e '.[cluster]' (make setup installs it)"
        ) from None
    return ray


class PointWorker:
    """A Ray actor: the engine's `worker_init` once, then any number of points.

    Its methods return plain data (a record dict), so the driver needs nothing
    of the engine's to read them."""

    def __init__(self, engine_name: str) -> None:
        self.engine = ENGINES[engine_name]
        why = self.engine.unavailable()
        if why:
            raise RuntimeError(f"{socket.gethostname()}: {why}")
        init_worker(engine_name)

    def where(self) -> tuple[str, str, int]:
        """(Ray node id, host name, pid): ready once this returns."""
        ray = _ray()  # loaded already: this runs inside a Ray worker
        return ray.get_runtime_context().get_node_id(), socket.gethostname(), os.getpid()

    def run(self, point: Any, log_dir: Path) -> dict[str, Any]:
        """One point's record; the engine's checks run here, on the node that runs it."""
        problems = self.engine.check(point)
        if problems:
            return self.engine.failed_record(point, "; ".join(problems))
        return run_in_worker(self.engine.name, point, log_dir)


@dataclass
class _Slot:
    """One actor of the Ray pool and what it is doing."""

    actor: Any
    ready_ref: Any  # where() while the actor starts; None once ready
    node: str = ""
    host: str = ""
    pid: int = 0
    job: Job | None = None
    ref: Any = None  # the running point's result
    born: float = field(default_factory=time.monotonic)


_EXIT = re.compile(r"Worker exit type: (\S+) Worker exit detail: (.*?)(?: Some common causes|$)")
_RAISED = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt): ")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _short(err: BaseException) -> str:
    """A Ray error as one line. Ray's messages quote tracebacks and advice; keep the
    worker's exit detail, else the exception raised in the worker, else why the
    actor died, else the first line."""
    text = _ANSI.sub("", str(err))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if m := _EXIT.search(" ".join(lines)):
        return f"{type(err).__name__}: worker process died ({m[1]}: {m[2]})"[:200]
    raised = [ln for ln in lines if _RAISED.match(ln)]
    because = [ln for ln in lines if " because " in ln]
    reason = raised[-1] if raised else because[0] if because else lines[0] if lines else ""
    return (reason if raised else f"{type(err).__name__}: {reason}")[:200]


def parse_address(address: str) -> tuple[str, int] | None:
    """(host, port) of `ray://HOST:PORT` or `HOST:PORT`; None for `auto`."""
    if address == "auto":
        return None
    rest = address.removeprefix("ray://")
    host, _, port = rest.rpartition(":")
    return host.strip("[]"), int(port)


class RayPool(Executor):
    """Points on a Ray cluster in warm actors (see the module docstring).

    `address`: `auto` (the cluster this machine belongs to, or $RAY_ADDRESS),
    `ray://HOST:PORT` (Ray Client, default port 10001) or `HOST:PORT` (the
    head's GCS port, from a machine of the cluster). `max_workers` caps the
    actors (default: one per CPU, or per node advertising the engine).
    """

    def __init__(
        self,
        engine: Engine,
        address: str,
        *,
        retries: int = RETRIES,
        max_workers: int | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.engine = engine
        self.address = address
        self.retries = retries
        self.max_workers = max_workers
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.lost = 0  # points lost with a worker (each retried or recorded failed)
        self._ray: ModuleType | None = None

    # connection

    def open(self) -> str:
        """Connect; ClusterError (one line) when unreachable or nowhere to run."""
        ray = _ray()
        where = parse_address(self.address)
        if where:
            host, port = where
            try:
                socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
            except OSError as err:
                raise ClusterError(
                    f"cluster {self.address}: cannot reach {host}:{port} "
                    f"({err.strerror or err}); is `ray start --head` running there, port open?"
                ) from None
        for name in ("ray._private.worker", "ray.util.client.logsclient"):  # direct, client
            logging.getLogger(name).addFilter(_QuietThreadNote())
        try:
            try:
                self._init(ray)
            except (ConnectionError, RuntimeError) as err:
                if "client server failed" not in str(err) and "from server" not in str(err):
                    raise
                # ray-project/ray#63202 (see HEAD_ENV): a second connection works.
                self.log(f"ray: {_short(err)}; connecting again (ray-project/ray#63202)")
                self._init(ray)
        except (ConnectionError, RuntimeError, ValueError) as err:
            hint = (
                "no Ray cluster runs on this machine (start one with `ray start --head`, "
                "or give ray://HOST:PORT)"
                if self.address == "auto"
                else _short(err)
            )
            raise ClusterError(f"cluster {self.address}: {hint}") from None
        self._ray = ray
        nodes = self._alive_nodes()
        cpus = sum(int(n["Resources"].get("CPU", 0)) for n in nodes)
        line = f"ray cluster {self.address}: {len(nodes)} node(s), {cpus} CPU(s)"
        if not self.engine.parallel:
            line += f", {self._capacity()} advertising {self.engine.name!r}"
        if self._capacity() == 0:
            self.close()
            raise ClusterError(f"{line}: nowhere to run {self.engine.name} points ({self._need()})")
        return line

    def _init(self, ray: ModuleType) -> None:
        ray.init(address=self.address, logging_level=logging.WARNING, log_to_driver=False)

    def close(self) -> None:
        if self._ray is not None:
            self._ray.shutdown()
            self._ray = None

    def _need(self) -> str:
        if self.engine.parallel:
            return "no node offers a CPU"
        return (
            f"start such nodes with `ray start --address HEAD:PORT --resources "
            f"'{{\"{self.engine.name}\": 1}}'`"
        )

    def _alive_nodes(self) -> list[dict[str, Any]]:
        assert self._ray is not None
        return [n for n in self._ray.nodes() if n.get("Alive")]

    def _capacity(self) -> int:
        """How many actors the cluster holds now: one per CPU, or one per node that
        advertises the engine's resource (an engine that takes the whole node)."""
        nodes = self._alive_nodes()
        if self.engine.parallel:
            cap = sum(int(n["Resources"].get("CPU", 0)) for n in nodes)
        else:
            cap = sum(1 for n in nodes if n["Resources"].get(self.engine.name, 0) >= 1)
        return min(cap, self.max_workers) if self.max_workers else cap

    def _actor_options(self) -> dict[str, Any]:
        if self.engine.parallel:
            return {"num_cpus": 1, "max_restarts": 0}
        return {"num_cpus": 0, "resources": {self.engine.name: 1}, "max_restarts": 0}

    # the sweep

    def run(
        self, jobs: Sequence[Job], on_result: OnResult, on_start: OnStart | None = None
    ) -> None:
        if self._ray is None:
            raise ClusterError("RayPool.run before open()")
        sweep = _RaySweep(self, jobs, on_result, on_start)
        try:
            sweep.run()
        finally:
            for slot in sweep.slots:
                self._kill(slot)

    def _kill(self, slot: _Slot) -> None:
        assert self._ray is not None
        # An actor already gone with its node has nothing left to stop.
        with contextlib.suppress(Exception):
            self._ray.kill(slot.actor, no_restart=True)


class _RaySweep:
    """One `RayPool.run`: the queue, the actors, and what each is doing.

    Each turn: re-read the cluster's size now and then, start actors up to it
    (never more than points left), give every idle ready actor a point, then
    wait up to WAIT_S for one actor to become ready or one point to come back.
    """

    def __init__(
        self,
        pool: RayPool,
        jobs: Sequence[Job],
        on_result: OnResult,
        on_start: OnStart | None,
    ) -> None:
        assert pool._ray is not None
        self.pool, self.ray, self.engine = pool, pool._ray, pool.engine
        self.on_result, self.on_start = on_result, on_start
        self.remote = self.ray.remote(PointWorker).options(**pool._actor_options())
        self.pending: deque[Job] = deque(jobs)
        self.slots: list[_Slot] = []
        self.waiting: dict[Any, _Slot] = {}  # ObjectRef -> its actor: where() or run()
        self.target, self.checked = 0, -math.inf
        self.start_failures, self.ever_ready = 0, False

    def run(self) -> None:
        idle_since = time.monotonic()
        while self.pending or any(s.job for s in self.slots):
            self._grow()
            self._assign()
            if not self.waiting:  # no actor at all: the cluster has nowhere to run one
                if time.monotonic() - idle_since > STALL_S:
                    raise ClusterError(
                        f"nowhere to run {self.engine.name} points for {STALL_S:.0f} s "
                        f"({self.pool._need()}); finished points are kept"
                    )
                time.sleep(WAIT_S)
                continue
            idle_since = time.monotonic()
            done, _ = self.ray.wait(list(self.waiting), num_returns=1, timeout=WAIT_S)
            for ref in done:
                slot = self.waiting.pop(ref)
                if slot.ready_ref is not None:
                    self._started(slot, ref)
                else:
                    self._finished(slot, ref)

    def _grow(self) -> None:
        """Actors up to the cluster's size, and none that a shrunk cluster cannot start."""
        now = time.monotonic()
        if now - self.checked >= CAPACITY_EVERY_S:
            self.target, self.checked = self.pool._capacity(), now
        left = len(self.pending) + sum(1 for s in self.slots if s.job)
        new = 0
        while len(self.slots) < min(self.target, left):
            actor = self.remote.remote(self.engine.name)
            slot = _Slot(actor, actor.where.remote())
            self.slots.append(slot)
            self.waiting[slot.ready_ref] = slot
            new += 1
        if new:
            per = "CPU" if self.engine.parallel else f"node advertising {self.engine.name!r}"
            self.pool.log(
                f"ray: starting {new} {self.engine.name} worker(s), one per {per} "
                "(each loads its engine once)"
            )
        starting = [s for s in self.slots if s.ready_ref is not None]
        for slot in starting[: max(0, len(self.slots) - self.target)]:
            self._drop(slot)

    def _assign(self) -> None:
        """Give each idle ready actor the next point, preferring points that were not
        lost on its node (unless no other node has a ready actor)."""
        ready_nodes = {s.node for s in self.slots if s.ready_ref is None}
        for slot in self.slots:
            if not self.pending or slot.ready_ref is not None or slot.job is not None:
                continue
            job = next(
                (j for j in self.pending if slot.node not in j.lost_on or ready_nodes <= j.lost_on),
                None,
            )
            if job is None:
                continue
            self.pending.remove(job)
            if self.on_start:
                self.on_start(job)
            slot.job, slot.ref = job, slot.actor.run.remote(job.point, job.log_dir)
            self.waiting[slot.ref] = slot

    def _started(self, slot: _Slot, ref: Any) -> None:
        """An actor's where() came back: ready, or it failed to start (ClusterError
        once every actor failed, or three times the cluster's size did)."""
        try:
            slot.node, slot.host, slot.pid = self.ray.get(ref)
        except self.ray.exceptions.RayError as err:
            self.start_failures += 1
            self._drop(slot)
            reason = _short(err)
            self.pool.log(f"ray: a {self.engine.name} worker failed to start: {reason}")
            limit = 3 * max(1, self.target) if self.ever_ready else max(1, self.target)
            if self.start_failures >= limit:
                raise ClusterError(
                    f"{self.engine.name} workers cannot start on the cluster "
                    f"({self.start_failures} tries): {reason}"
                ) from None
            return
        slot.ready_ref, self.ever_ready = None, True
        self.pool.log(
            f"ray: worker ready on {slot.host} pid {slot.pid} (node {slot.node[:8]}) "
            f"after {time.monotonic() - slot.born:.0f} s"
        )

    def _finished(self, slot: _Slot, ref: Any) -> None:
        """A point came back: its record, or lost with its worker."""
        job = slot.job
        assert job is not None
        slot.job, slot.ref = None, None
        try:
            record = self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as err:  # raised in the engine: a result
            record = self.engine.failed_record(job.point, _short(err))
        except self.ray.exceptions.RayError as err:  # the worker or its node died
            self._drop(slot)
            self._lost(job, slot, _short(err))
            return
        self.on_result(job, record)

    def _lost(self, job: Job, slot: _Slot, reason: str) -> None:
        """A point whose worker died: back to the front of the queue, or failed for good."""
        self.pool.lost += 1
        job.attempts += 1
        job.lost_on.add(slot.node)
        what = f"ray: {job.point.label()} lost on {slot.host} pid {slot.pid} "
        what += f"(node {slot.node[:8]}): {reason}"
        if job.attempts > self.pool.retries:
            self.pool.log(f"{what}; lost {job.attempts} times: recorded as failed")
            self.on_result(job, lost_record(job, self.engine, reason))
            return
        self.pool.log(f"{what}; retry {job.attempts}/{self.pool.retries}")
        self.pending.appendleft(job)

    def _drop(self, slot: _Slot) -> None:
        """Forget an actor (dead, or not needed) and make sure it is gone."""
        if slot in self.slots:
            self.slots.remove(slot)
        for ref in (slot.ready_ref, slot.ref):
            self.waiting.pop(ref, None)
        self.pool._kill(slot)
