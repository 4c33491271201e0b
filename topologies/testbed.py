"""One incast run on Mininet + BMv2: build the network, program the switches
with the p4-incast controller, run the incast application, collect per-round
records and the switch's counters, tear everything down.

Needs root, Mininet (Debian), simple_switch_grpc and `make build`.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from p4incast.controller import app, stats
from p4incast.controller.config import EcnPolicy
from p4incast.controller.connection import connect

from .incast import BACKGROUND, RECEIVER, LinkShape, switch_configs, topos

SERVER_PORT = 5001


@dataclass(frozen=True)
class TestbedRun:
    """Everything one (scheme, N) run needs."""

    topology: str = "incast_star"  # incast_star | leaf_spine
    n: int = 4  # senders
    spines: int = 2  # leaf_spine only
    sru_bytes: int = 65536
    mode: str = "per-server"  # per-server | total
    rounds: int = 10
    ecn: EcnPolicy = field(default_factory=EcnPolicy)
    cc: str = "reno"  # sender TCP_CONGESTION
    agent: str = "off"  # receiver host-agent policy
    batch: int = 0  # seed-003 batch size n (0: off)
    stagger_us: float = 0.0  # seed-003 T~
    background: bool = False  # a long flow from `bg` to the receiver
    rto_min_ms: int = 10
    shape: LinkShape = field(default_factory=LinkShape)


@dataclass
class TestbedResult:
    rounds: list[dict[str, Any]]
    switch: dict[str, Any]  # stats.Snapshot.as_dict() of the receiver-facing ToR
    base_rtt_ms: float | None
    log_dir: Path


def _host_setup(host: Any, rto_min_ms: int) -> None:
    intf = host.defaultIntf().name
    host.cmd(f"ethtool -K {intf} tx off rx off tso off gso off gro off >/dev/null 2>&1")
    host.cmd(f"sysctl -qw net.ipv6.conf.{intf}.disable_ipv6=1")
    host.cmd("sysctl -qw net.ipv4.tcp_ecn=1")
    host.cmd(f"ip route replace 10.0.0.0/8 dev {intf} rto_min {rto_min_ms}ms")


def _ping_rtt_ms(src: Any, dst_ip: str) -> float | None:
    out = src.cmd(f"ping -c 5 -i 0.2 -q {dst_ip}")
    for line in out.splitlines():
        if "min/avg/max" in line:
            return float(line.split("=")[1].split("/")[1])
    return None


def run(
    spec: TestbedRun, log_dir: Path, progress: Callable[[str], None] = lambda s: None
) -> TestbedResult:
    """Run one experiment on a fresh Mininet network; always tears it down."""
    from mininet.link import TCLink
    from mininet.log import setLogLevel
    from mininet.net import Mininet

    from .bmv2_switch import Bmv2GrpcSwitch

    setLogLevel("error")
    log_dir.mkdir(parents=True, exist_ok=True)
    topo = topos[spec.topology](
        n=spec.n, spines=spec.spines, host_mbps=spec.shape.host_mbps, background=spec.background
    )
    net = Mininet(
        topo=topo,
        switch=partial(Bmv2GrpcSwitch, log_dir=log_dir),
        link=TCLink,
        controller=None,
        autoStaticArp=True,
        build=True,
    )
    procs: list[Any] = []
    try:
        net.start()
        for host in net.hosts:
            _host_setup(host, spec.rto_min_ms)
        configs = switch_configs(net, ecn=spec.ecn, shape=spec.shape)
        for cfg in configs.values():
            asyncio.run(app.apply(cfg))
        progress("switches programmed")
        receiver = net.get(RECEIVER)
        senders = [net.get(f"h{i}") for i in range(1, spec.n + 1)]
        rtt = _ping_rtt_ms(senders[0], receiver.IP())
        for h in senders:
            procs.append(
                h.popen(
                    [
                        sys.executable,
                        "-m",
                        "p4incast.apps.incast",
                        "server",
                        "--port",
                        str(SERVER_PORT),
                        "--cc",
                        spec.cc,
                    ]
                )
            )
        if spec.background:
            bg = net.get(BACKGROUND)
            procs.append(receiver.popen(["iperf3", "-s", "-1", "-p", "5201"]))
            time.sleep(0.3)
            procs.append(
                bg.popen(["iperf3", "-c", receiver.IP(), "-p", "5201", "-t", "3600", "-C", spec.cc])
            )
        out = log_dir / "rounds.jsonl"
        cmd = [
            sys.executable,
            "-m",
            "p4incast.apps.incast",
            "client",
            "--servers",
            ",".join(h.IP() for h in senders),
            "--port",
            str(SERVER_PORT),
            "--sru",
            str(spec.sru_bytes),
            "--rounds",
            str(spec.rounds),
            "--mode",
            spec.mode,
            "--out",
            str(out),
        ]
        if spec.batch:
            cmd += ["--batch", str(spec.batch), "--stagger-us", str(spec.stagger_us)]
        client_log = log_dir / "client.log"
        with client_log.open("w") as log:
            client = receiver.popen(cmd, stdout=log, stderr=log)
            rc = client.wait(timeout=60 + spec.rounds * 30)
        if rc != 0:
            tail = client_log.read_text().strip().splitlines()[-5:]
            raise RuntimeError(
                f"incast client failed (exit {rc}): {shlex.join(cmd)}\n" + "\n".join(tail)
            )
        rounds = [json.loads(line) for line in out.read_text().splitlines()]
        tor = configs["s1"]
        snap = asyncio.run(_read_stats(tor))
        return TestbedResult(rounds=rounds, switch=snap, base_rtt_ms=rtt, log_dir=log_dir)
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except Exception:  # noqa: BLE001 — best effort, then kill
                p.kill()
        net.stop()


async def _read_stats(cfg: Any) -> dict[str, Any]:
    async with connect(cfg.switch, cfg.pipeline) as sw:
        return (await stats.read(sw)).as_dict()
