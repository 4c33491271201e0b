"""The make_run fixture: run_records.build_run, a hand-built run dict of the shared
result schema (experiments/SCHEMA.md)."""

from collections.abc import Callable
from typing import Any

import pytest
from run_records import build_run


@pytest.fixture
def make_run() -> Callable[..., dict[str, Any]]:
    return build_run
