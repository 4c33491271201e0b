"""scripts/bench_budget.py's ratio to drop-tail at small N (issue 45 item 4)."""

import importlib.util
import math
from pathlib import Path
from types import ModuleType

import pytest
from run_records import build_run

from p4incast.experiments.results import ResultSet

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_budget.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_budget", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ratio_to_droptail_pairs_runs_by_repeat(tmp_path: Path) -> None:
    """build_run's rounds average 150 Mbit/s at slow = 1. Drop-tail 150 in both
    repeats; front+budget 135 then 165 (slow 1/0.9, 1/1.1): per-repeat ratios 0.9
    and 1.1. Geometric mean sqrt(0.99) = 0.994987; logs -0.105361 and 0.095310,
    their mean -0.005025 and s = 0.200671 / sqrt(2) = 0.141896; half-width
    t(0.975, 1) s / sqrt(2) = 12.706205 x 0.100335 = 1.274881, so the interval is
    exp(-1.279906) = 0.27806 to exp(1.269856) = 3.56034."""
    bench = _bench()
    rs = ResultSet(tmp_path, "small", {}, link_bps=1e9)
    for rep, slow in ((0, 1 / 0.9), (1, 1 / 1.1)):
        rs.add(build_run("droptail", 1, rep))
        rs.add(build_run("front+budget", 1, rep, slow=slow))
    rs.add(build_run("front+budget", 1, 2, status="failed", rounds=[]))  # no pair: left out
    got = bench.paired_ratio(rs, "front+budget", 1)
    assert got is not None
    ratio, lo, hi, pairs = got
    assert pairs == 2
    assert ratio == pytest.approx(math.sqrt(0.99))
    assert (lo, hi) == pytest.approx((0.27806, 3.56034), rel=1e-4)
    assert bench.paired_ratio(rs, "front+rotate", 1) is None  # never run
