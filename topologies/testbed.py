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
from p4incast.controller.connection import connect, quiet_finsy

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
    batching: bool = False  # seed-003 batches, planned from the buffer and the base RTT
    background: bool = False  # a long flow from `bg` to the receiver
    rto_min_ms: int = 10
    shape: LinkShape = field(default_factory=LinkShape)


@dataclass
class TestbedResult:
    rounds: list[dict[str, Any]]
    switch: dict[str, Any]  # stats.Snapshot.as_dict() of the ToR, plus "bottleneck_port"
    base_rtt_ms: float | None
    log_dir: Path
    batch: dict[str, Any] | None = None  # the seed-003 plan used, if batching


def plan_batches(spec: TestbedRun, rtt_s: float) -> tuple[int, float, dict[str, Any]]:
    """Seed-003 batch size n and stagger T~ (µs) for this run's bottleneck queue."""
    from p4incast.experiments import batching

    sru = spec.sru_bytes if spec.mode == "per-server" else max(1, spec.sru_bytes // spec.n)
    plan = batching.plan(
        spec.n,
        sru,
        buffer_bytes=spec.shape.queue_pkts * 1500,
        link_bps=spec.shape.queue_rate_pps * 1500 * 8,
        rtt_s=rtt_s,
    )
    info = {"n": plan.n, "k": plan.k, "stagger_us": plan.stagger_us, "wnd_max": plan.wnd_max}
    return plan.n, plan.stagger_us, info


def _agent_cmd(intf: str, policy: str, shape: LinkShape, ready: Path) -> list[str]:
    """The host agent on the receiver. BMv2 RTTs are ~1 ms idle and tens of ms
    queued, above the agent's 2 ms datacenter limit, so the limit is lifted;
    ICTCP's capacity C is what the receiver can get: the bottleneck rate."""
    cmd = [sys.executable, "-m", "p4incast.agent", "run", "--iface", intf, "--policy", policy]
    cmd += ["--rtt-limit-us", "1000000", "--ready-file", str(ready)]
    if shape.queue_rate_pps:
        cmd += ["--capacity-mbps", str(max(1, round(shape.queue_rate_pps * 1538 * 8 / 1e6)))]
    return cmd


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


def quiet_switches() -> None:
    """Mininet reports htb's harmless "quantum is big" notes as errors; finsy warns
    that BMv2 has no gNMI. Our own errors carry what matters."""
    from mininet.log import setLogLevel

    setLogLevel("critical")
    quiet_finsy(verbose=False)


def run(
    spec: TestbedRun, log_dir: Path, progress: Callable[[str], None] = lambda s: None
) -> TestbedResult:
    """Run one experiment on a fresh Mininet network; always tears it down."""
    from mininet.link import TCLink
    from mininet.net import Mininet

    from .bmv2_switch import Bmv2GrpcSwitch

    quiet_switches()
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
        if spec.agent != "off":
            agent_log = (log_dir / "agent.log").open("w")
            ready = log_dir / "agent.ready"
            agent = receiver.popen(
                _agent_cmd(receiver.defaultIntf().name, spec.agent, spec.shape, ready),
                stdout=agent_log,
                stderr=agent_log,
            )
            procs.append(agent)
            deadline = time.monotonic() + 15
            while not ready.exists() and agent.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            if not ready.exists():
                raise RuntimeError(
                    "host agent did not start: " + (log_dir / "agent.log").read_text()[-500:]
                )
        for i, h in enumerate(senders):
            log = (log_dir / f"server-{i + 1}.log").open("w")
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
                    ],
                    stdout=log,
                    stderr=log,
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
        batch_info = None
        if spec.batching:
            n_batch, stagger_us, batch_info = plan_batches(spec, (rtt or 1.0) / 1e3)
            cmd += ["--batch", str(n_batch), "--stagger-us", f"{stagger_us:.0f}"]
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
        snap["bottleneck_port"] = str(bottleneck_port(net))
        return TestbedResult(
            rounds=rounds, switch=snap, base_rtt_ms=rtt, log_dir=log_dir, batch=batch_info
        )
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


def bottleneck_port(net: Any) -> int:
    """The ToR (s1) port facing the receiver: the incast bottleneck."""
    tor, receiver = net.get("s1"), net.get(RECEIVER)
    for intf in tor.intfList():
        link = intf.link
        if link is not None and receiver in (link.intf1.node, link.intf2.node):
            return tor.ports[intf]
    raise RuntimeError("no ToR port faces the receiver")


async def _read_stats(cfg: Any) -> dict[str, Any]:
    async with connect(cfg.switch, cfg.pipeline) as sw:
        return (await stats.read(sw)).as_dict()
