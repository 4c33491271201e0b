"""The at-scale engine: points of RCC's 1000-host fabric (sim/atscale.py,
`scenario: at-scale` presets) on the ns-3 model, through the same executors as
incast points — the local process pool, or warm actors on a Ray cluster.

Not an incast engine (`engine:` and `--engine` never pick it): it runs
AtScalePoints, which the shared runner hands it for `scenario: at-scale`
presets (experiments/scenario.py, experiments/atscale.py). It is
registered after the incast engines (engines/__init__.py), whose order is
`engine: auto`'s preference.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from p4incast.model.atscale import ATSCALE_SCENARIO, AtScalePoint
from p4incast.sim import atscale

from .base import ENGINES, register

SIM = "sim"  # the incast simulator engine: the same ns-3 and model (looked up when used)


@dataclass(frozen=True)
class AtScaleResult:
    """A point's record, as engines return results (`.record()`)."""

    rec: dict[str, Any]

    def record(self) -> dict[str, Any]:
        return self.rec


class AtScaleEngine:
    name: ClassVar[str] = "sim-at-scale"
    parallel: ClassVar[bool] = True
    max_senders: ClassVar[int] = 0  # no senders: flows between the fabric's hosts

    def describe(self) -> str:
        return "sim (ns-3), RCC's at-scale fabric"

    def unavailable(self) -> str | None:
        return ENGINES[SIM].unavailable()

    def check(self, point: AtScalePoint) -> list[str]:
        return atscale.problems(point)

    def worker_init(self) -> None:
        ENGINES[SIM].worker_init()  # atscale.h is compiled with the incast model

    def run(self, point: AtScalePoint, log_dir: Path) -> AtScaleResult:
        return AtScaleResult(atscale.run_point(point))

    def failed_record(self, point: AtScalePoint, why: str) -> dict[str, Any]:
        return atscale.failed_record(point, why)


ENGINE = register(AtScaleEngine(), scenario=ATSCALE_SCENARIO)
