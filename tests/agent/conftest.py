"""Fixtures for the agent tests: a freshly loaded rxwin object per test."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from p4incast.agent.datapath import RxWin, default_bpf_dir


def bpf_skip_reason(obj: str = "rxwin.bpf.o") -> str | None:
    """Why a BPF test cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (loads BPF programs, BPF_PROG_TEST_RUN)"
    if not (default_bpf_dir() / obj).exists():
        return f"{default_bpf_dir() / obj} not built (scripts/build-agent.sh needs clang, bpftool)"
    return None


@pytest.fixture
def rxwin() -> Iterator[RxWin]:
    why = bpf_skip_reason()
    if why:
        pytest.skip(why)
    rx = RxWin(max_flows=1024)
    try:
        yield rx
    finally:
        rx.close()
