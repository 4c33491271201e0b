"""The ns-3 engine: points run on the simulator (sim/), several at once in worker processes.

ns-3 is a process-wide singleton, so each worker process runs one point at a
time; `worker_init` loads ns-3 and compiles the model once per worker (~1 min).
The parent process never loads ns-3 (importing sim.engine does not).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import ClassVar

from p4incast.model.scheme import Point, RunResult
from p4incast.sim import engine, native  # importing loads no ns-3: run_point does

from .base import IncastEngine, register


class SimEngine(IncastEngine):
    name: ClassVar[str] = "sim"
    parallel: ClassVar[bool] = True
    # The papers' largest incast (seed 003 §V-A/B: 1000 servers). Nothing in the
    # star is sized to N (host addresses 10.1.0.0 + h + 1 under a /8, one
    # host-route map per switch, flows looked up by address in O(1)); what grows
    # is time and memory, which scripts/bench_sim_scale.py measures to here.
    max_senders: ClassVar[int] = 1000

    def describe(self) -> str:
        return "sim (ns-3)"

    def unavailable(self) -> str | None:
        ok, why = native.available()
        return None if ok else f"the simulator engine cannot run ({why})"

    def check(self, point: Point) -> list[str]:
        problems = engine.check_point(point)
        if point.n > self.max_senders:
            problems.append(f"senders: {point.n} above {self.max_senders}, the simulator's limit")
        return problems

    def worker_init(self) -> None:
        """Load ns-3 and compile the model in this worker.

        cling prints harmless "Failed to materialize symbols" notes on stderr while
        it compiles ns-3's static initialisers; they are kept out of the user's
        terminal and shown only if loading fails.
        """
        with tempfile.TemporaryFile() as notes:
            saved = os.dup(2)
            os.dup2(notes.fileno(), 2)
            try:
                engine.init_worker()
            except BaseException:
                os.dup2(saved, 2)
                notes.seek(0)
                sys.stderr.write(notes.read().decode(errors="replace")[-4000:])
                raise
            finally:
                os.dup2(saved, 2)
                os.close(saved)

    def run(self, point: Point, log_dir: Path) -> RunResult:
        return engine.run_point(point)


ENGINE = register(SimEngine())
