"""Fixtures for the agent tests: a freshly loaded rxwin object per test, the
veth lab with its CE marker and iperf3 server, and a capture of what the data
path sends out of lo (its forged window updates)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import pytest
from agent_labs import veth_lab
from vethlab import VethLab

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


ETH_P_ALL = 3


@pytest.fixture
def lo_capture() -> Iterator[socket.socket]:
    """A raw socket on lo; `drain` reads what was sent out of it."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind(("lo", 0))
    s.setblocking(False)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def lab() -> Iterator[VethLab]:
    """The veth lab, CE marker on, iperf3 server up."""
    yield from veth_lab(marker=True)
