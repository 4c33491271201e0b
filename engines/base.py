"""The interface every engine implements, and the registry that picks one.

An engine runs one `Point` (scheme, N, repeat on a topology with an app) and
returns a `RunResult`:

    unavailable() -> str | None     why it cannot run here (None: it can)
    check(point)  -> list[str]      problems that would make the point fail
    run(point, log_dir) -> RunResult   never raises: a failure is a failed result
    failed_record(point, why) -> dict  the record of a point that could not run

Incast engines (REGISTRY: `engine:` / `--engine`) run incast Points; an engine
of another scenario (engines/atscale.py: RCC's 1000-host fabric) runs its own
kind of point through the same executors, registered with `scenario=`.

`parallel` says whether points may run side by side in worker processes
(the simulator) or one at a time in this process (the BMv2 testbed takes
the whole machine); `worker_init` prepares such a worker once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from p4incast.model.scheme import INCAST_SCENARIO, Point, RunResult


class Result(Protocol):
    """What `run` returns: a RunResult, or another scenario's result."""

    def record(self) -> dict[str, Any]: ...


class Engine(Protocol):
    """An engine of any scenario: `point` is that scenario's kind of point (an
    incast Point, an AtScalePoint), which each engine names in its own methods."""

    name: ClassVar[str]
    parallel: ClassVar[bool]
    max_senders: ClassVar[int]

    def unavailable(self) -> str | None: ...

    def check(self, point: Any) -> list[str]: ...

    def run(self, point: Any, log_dir: Path) -> Result: ...

    def worker_init(self) -> None: ...

    def describe(self) -> str: ...

    def failed_record(self, point: Any, why: str) -> dict[str, Any]: ...


E = TypeVar("E", bound=Engine)


class IncastEngine:
    """What every incast engine shares."""

    name: ClassVar[str]

    def failed_record(self, point: Point, why: str) -> dict[str, Any]:
        return RunResult.failed(point, self.name, why, 0.0).record()


REGISTRY: dict[str, Engine] = {}  # incast engines, in order of preference for `auto`
ENGINES: dict[str, Engine] = {}  # every engine, of every scenario, by name (workers look up here)


def register(engine: E, scenario: str = INCAST_SCENARIO) -> E:
    if scenario == INCAST_SCENARIO:
        REGISTRY[engine.name] = engine
    ENGINES[engine.name] = engine
    return engine


def resolve(requested: str) -> tuple[Engine, str]:
    """(engine, one line saying which and why). `auto` takes the first registered
    engine that can run here. Raises RuntimeError naming every reason otherwise."""
    if requested != "auto":
        if requested not in REGISTRY:
            raise RuntimeError(f"engine {requested!r} is not one of {', '.join(REGISTRY)}")
        engine = REGISTRY[requested]
        why = engine.unavailable()
        if why:
            raise RuntimeError(f"engine {requested} requested, but {why}")
        return engine, f"engine: {engine.describe()}"
    reasons: list[str] = []
    for engine in REGISTRY.values():
        if not getattr(engine, "auto", True):  # a reference engine (ns2) is only asked for
            continue
        why = engine.unavailable()
        if why is None:
            because = f", because {reasons[0]}" if reasons else ""
            return engine, f"engine: {engine.describe()}{because}"
        reasons.append(why)
    raise RuntimeError(
        f"no engine can run here: {'; and '.join(reasons)}. Install BMv2 + p4c "
        "(README, 'The P4 toolchain') and run as root, or install the simulator."
    )


def init_worker(engine_name: str) -> None:
    """A worker process's initializer (module level, so a spawned worker can unpickle it;
    importing this module through the package registers every engine)."""
    ENGINES[engine_name].worker_init()


def run_in_worker(engine_name: str, point: Any, log_dir: Path) -> dict[str, Any]:
    """A worker process's job: one point on the named engine, as its record."""
    return ENGINES[engine_name].run(point, log_dir).record()
