"""Helpers the agent tests share (a module of its own: test modules import it
by name, which a conftest, one of several in tests/, cannot be)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from agent_traces import L, R
from vethlab import VethLab, lab_skip_reason

PACKET_OUTGOING = 4
# IPv4 source and destination of the traces' frames, as they sit in an
# Ethernet frame (bytes 26..33): lo also carries whatever else the host runs.
_TRACE_ADDRS = {socket.inet_aton(a) + socket.inet_aton(b) for a, b in ((L, R), (R, L))}


def drain(s: socket.socket) -> list[bytes]:
    """Frames between the traces' hosts sent out of lo since the last call (the
    forged updates); other traffic on lo is left out."""
    out = []
    while True:
        try:
            data, addr = s.recvfrom(4096)
        except BlockingIOError:
            return out
        if addr[2] == PACKET_OUTGOING and data[26:34] in _TRACE_ADDRS:
            out.append(data)


def veth_lab(marker: bool) -> Iterator[VethLab]:
    """The veth lab with its iperf3 server up; `marker`: the test CE marker on
    (erased at the receiver)."""
    why = lab_skip_reason()
    if why:
        pytest.skip(why)
    lab = VethLab()
    try:
        lab.up()
        if marker:
            lab.add_marker(erase_at_receiver=True)
        lab.start_server()
        yield lab
    finally:
        lab.close()  # kills iperf3/agents, deletes both p4ia namespaces
