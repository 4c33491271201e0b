"""The kernel lab (kernel_lab.py), set up once per test module that asks for it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kernel_lab import KernelLab, skip_reason


@pytest.fixture(scope="module")
def lab() -> Iterator[KernelLab]:
    why = skip_reason()
    if why:
        pytest.skip(why)
    with KernelLab() as lab:
        yield lab
