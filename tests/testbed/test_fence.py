"""The testbed's switches answer on their control ports to this host only.

The switches run in the root namespace; BMv2 binds thrift on every interface
(P4Runtime on 127.0.0.1). During a run, a peer that is not this host — here a
network namespace of the test's own, joined to the root namespace by a veth
pair — reaching a switch's thrift or P4Runtime port at the root namespace's
address gets its connection refused, while the controller on loopback programs
the switch (P4Runtime and the thrift queue settings) and reads its counters. A
listener of the test's own on every address answers that peer, so the path
itself is open and the refusal is the fence's. After the run, normal or failed,
no fence table is left; and a fence left by a killed run is cleared by the next.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from p4incast import bmv2
from p4incast.engines.bmv2 import ENGINE, ecn_policy
from p4incast.model.scheme import App, Point, Scheme, Topology

WHY = ENGINE.unavailable()
TOPO = Topology(queue_pkts=64, bottleneck_pps=2000, host_mbps=100)
NS, HOST_DEV, NS_DEV = "p4ifence", "p4ifence-h", "p4ifence-n"
HOST_IP, NS_IP = "10.251.0.1", "10.251.0.2"
pytestmark = [
    pytest.mark.bmv2,
    pytest.mark.root,
    pytest.mark.skipif(WHY is not None, reason=WHY or ""),
]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def outsider() -> Iterator[str]:
    """A namespace NS at NS_IP, whose only way out is a veth to HOST_IP in the
    root namespace."""
    subprocess.run(["ip", "netns", "del", NS], capture_output=True)
    subprocess.run(["ip", "link", "del", HOST_DEV], capture_output=True)
    _ip("netns", "add", NS)
    try:
        _ip("link", "add", HOST_DEV, "type", "veth", "peer", "name", NS_DEV, "netns", NS)
        _ip("addr", "add", f"{HOST_IP}/30", "dev", HOST_DEV)
        _ip("link", "set", HOST_DEV, "up")
        _ip("-n", NS, "addr", "add", f"{NS_IP}/30", "dev", NS_DEV)
        _ip("-n", NS, "link", "set", NS_DEV, "up")
        _ip("-n", NS, "link", "set", "lo", "up")
        yield NS
    finally:
        subprocess.run(["ip", "link", "del", HOST_DEV], capture_output=True)
        subprocess.run(["ip", "netns", "del", NS], capture_output=True)


def connect_from(ns: str, port: int) -> str:
    """What a TCP connect from namespace `ns` to HOST_IP:port ends in: "connected",
    or the error's name (ConnectionRefusedError for a reset)."""
    code = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(({HOST_IP!r}, {port}), timeout=3).close()\n"
        "    print('connected')\n"
        "except OSError as e:\n"
        "    print(type(e).__name__)\n"
    )
    out = subprocess.run(
        ["ip", "netns", "exec", ns, sys.executable, "-c", code],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return out.stdout.strip()


def ours() -> list[str]:
    """This process's fence tables."""
    return [
        t for t in bmv2.fence_tables() if t.startswith(f"{bmv2.FENCE_TABLE_PREFIX}{os.getpid()}_")
    ]


def test_switch_ports_refused_from_outside_during_a_run(outsider: str, tmp_path: Path) -> None:
    from p4incast.engines import testbed  # imports Mininet, which only the testbed needs
    from p4incast.topologies.incast import RECEIVER, receiver_switch

    control = socket.create_server(("0.0.0.0", 0))  # a listener of ours on every address
    threading.Thread(target=lambda: control.accept()[0].close(), daemon=True).start()
    point = Point(Scheme("front", "front", 10, "reno"), 2, topology=TOPO, app=App(32768))
    with testbed.network(
        "incast_star", 2, spines=1, host_mbps=TOPO.host_mbps, background=False, log_dir=tmp_path
    ) as net:
        assert len(ours()) == 1
        switches = list(net.switches)
        assert switches
        # the path from the outsider is open: our own listener answers it
        assert connect_from(outsider, control.getsockname()[1]) == "connected"
        for sw in switches:
            for port in (sw.thrift_port, sw.grpc_port):
                assert connect_from(outsider, port) == "ConnectionRefusedError", (sw.name, port)
        # the controller on loopback: pipeline, routes and thrift queue settings
        # (a config with queue_depth fails whole if simple_switch_CLI cannot
        # reach thrift), then the counters of the packets the routes carried
        configs = testbed.program(net, ecn_policy(point.scheme), testbed.link_shape(point))
        assert all(any(p.queue_depth for p in c.ports.values()) for c in configs.values())
        assert net.ping([net.get("h1"), net.get(RECEIVER)], timeout="2") == 0
        snap = asyncio.run(testbed.read_stats(configs[receiver_switch(net).name]))
        assert sum(p["routed"] for p in snap["ports"].values()) >= 2, snap
    control.close()
    assert ours() == []


def test_fence_removed_when_the_run_fails(tmp_path: Path) -> None:
    from p4incast.engines import testbed

    with (
        pytest.raises(RuntimeError, match="a step failed"),
        testbed.network(
            "incast_star", 1, spines=1, host_mbps=100, background=False, log_dir=tmp_path
        ),
    ):
        assert len(ours()) == 1
        raise RuntimeError("a step failed")
    assert ours() == []


def test_a_killed_runs_fence_is_cleared_by_the_next() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = f"{bmv2.FENCE_TABLE_PREFIX}{dead.pid}_0"
    r = subprocess.run(
        [bmv2.nft_path() or "nft", "add", "table", "inet", stale], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    try:
        with bmv2.LoopbackFence((1,)):
            assert stale not in bmv2.fence_tables()
            assert len(ours()) == 1
    finally:
        subprocess.run([bmv2.nft_path() or "nft", "delete", "table", "inet", stale],
                       capture_output=True)  # fmt: skip
    assert ours() == []
