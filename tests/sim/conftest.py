"""Fixtures for the simulator tests: ns-3 and the C++ model, loaded once per session.

Every test here needs ns-3 (`pip install ns3`); without it they are skipped
with the reason, never passed.
"""

from __future__ import annotations

from typing import Any

import pytest

from p4incast.sim import native


@pytest.fixture(scope="session")
def p4i() -> Any:
    ok, why = native.available()
    if not ok:
        pytest.skip(f"simulator: {why}")
    try:
        return native.load()
    except Exception as exc:  # ns-3 present but unusable here
        pytest.skip(f"simulator: ns-3 failed to load: {type(exc).__name__}: {exc}")
