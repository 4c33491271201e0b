"""The report tests read run records the experiments' tests build: their helper
module (tests/experiments/run_records.py) on sys.path, and the same make_run
fixture (a hand-built run dict of the shared result schema)."""

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))  # run_records.py
from run_records import build_run


@pytest.fixture
def make_run() -> Callable[..., dict[str, Any]]:
    return build_run
