"""One Point on Mininet + BMv2: build the network, program the switches through
the controller's validated path (`app.apply`, as `p4incast-ctl apply` does),
run the incast application, collect per-round records and the switch's
counters, tear everything down.

Needs root, Mininet (Debian), simple_switch_grpc and `make build`; the engine
(engines/bmv2.py) imports this module only when it runs, so Mininet stays
optional for everything else.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, cast

from mininet.link import TCLink
from mininet.log import setLogLevel
from mininet.net import Mininet

from p4incast import bmv2
from p4incast.agent.runner import process_cpu_s
from p4incast.controller import app, stats
from p4incast.controller import budget as budget_tables
from p4incast.controller.config import (
    Config,
    EcnPolicy,
    Pipeline,
    PortBudget,
    PortConfig,
    Route,
    SwitchSettings,
)
from p4incast.controller.connection import connect, quiet_finsy
from p4incast.controller.tls import TlsSettings
from p4incast.model import batching
from p4incast.model.dilation import Dilation
from p4incast.model.scheme import (
    BUDGET_AGENT,
    RECEIVER_WINDOW_CLAMP,
    STALL_RTO_FRACTION,
    Point,
    Transport,
    pipe_frames,
    rx_ack_cost_bytes,
    rx_budget_bytes,
)
from p4incast.model.wire import ETH_FRAME_BYTES, MSS_BYTES, WIRE_FRAME_BYTES
from p4incast.topologies.bmv2_switch import Bmv2GrpcSwitch
from p4incast.topologies.incast import (
    BACKGROUND,
    RECEIVER,
    LinkShape,
    receiver_switch,
    switch_plans,
    topos,
)

SERVER_PORT = 5001
ECHO_CCS = ("dctcp", "newdctcp")  # scheme ccs whose receiver must run them too
# net.ipv4.tcp_early_retrans with the tail-loss probe on (Linux's default; 0: off).
LINUX_EARLY_RETRANS_TLP = 3
DEPTH_POLL_S = 0.1  # the queue-depth series: one histogram read per 100 ms
DEPTH_SERIES_KIND = f"mean depth per {DEPTH_POLL_S * 1000:.0f} ms poll of the depth histogram"


class DepthPoller(threading.Thread):
    """Queue depth over time at one switch port while a run goes on: every
    DEPTH_POLL_S the port's depth histogram is read over P4Runtime, and the
    packets that left the queue since the last read give the interval's mean
    depth (BMv2 has no depth register the controller could read directly)."""

    def __init__(self, cfg: Any, port: int, interval_s: float = DEPTH_POLL_S) -> None:
        super().__init__(daemon=True)
        self.cfg, self.port, self.interval_s = cfg, port, interval_s
        self.series: list[tuple[float, float]] = []
        self.stop = threading.Event()
        self.error: str | None = None

    def run(self) -> None:
        try:
            asyncio.run(self._poll())
        except Exception as err:  # the series is extra; the run goes on
            self.error = f"{type(err).__name__}: {err}"

    async def _poll(self) -> None:
        async with connect(self.cfg.switch, self.cfg.pipeline) as sw:
            prev = await stats.depth_hist(sw, self.port)
            t0 = time.monotonic()
            while not self.stop.is_set():
                await asyncio.sleep(self.interval_s)
                hist = await stats.depth_hist(sw, self.port)
                delta = [a - b for a, b in zip(hist, prev, strict=True)]
                prev = hist
                n = sum(delta)
                if n:
                    mean = sum(d * c for d, c in enumerate(delta)) / n
                    self.series.append((time.monotonic() - t0, mean))


@dataclass
class TestbedResult:
    rounds: list[dict[str, Any]]
    switch: dict[str, Any]  # stats.Snapshot.as_dict() of the ToR, plus "bottleneck_port"
    base_rtt_ms: float | None
    log_dir: Path
    batch: dict[str, Any] | None = None  # the seed-003 plan used, if batching
    depth_series: list[tuple[float, float]] | None = None  # (s, mean depth) per poll
    agent_cpu: float | None = None  # the host agent's CPU over the rounds, fraction of a core


def link_shape(point: Point) -> LinkShape:
    t = point.topology
    return LinkShape(
        host_mbps=t.host_mbps, queue_pkts=t.queue_pkts, queue_rate_pps=t.bottleneck_pps
    )


def plan_batches(point: Point, shape: LinkShape, rtt_s: float) -> tuple[int, float, dict[str, Any]]:
    """Seed-003 batch size n and stagger T~ (µs) for this run's bottleneck queue."""
    rate = shape.queue_rate_pps or 0
    plan = batching.plan(
        point.n,
        point.app.bytes_per_server(point.n),
        buffer_bytes=shape.queue_pkts * ETH_FRAME_BYTES,
        link_bps=rate * WIRE_FRAME_BYTES * 8,
        rtt_s=rtt_s,
        init_segs=point.transport.init_cwnd,
    )
    info = {
        "n": plan.n,
        "k": plan.k,
        "stagger_us": plan.stagger_us,
        "wnd_max": plan.wnd_max,
        "init_segs": plan.init_segs,
    }
    return plan.n, plan.stagger_us, info


def budget_bytes(point: Point, shape: LinkShape, rtt_ms: float | None) -> int:
    """The receiver's budget B on the testbed (`rx_budget_bytes`): the bottleneck
    queue's packets, at most the scheme's K plus the pipe, the queue's drain rate
    over the base RTT measured before the run (`pipe_frames`), when the receiver
    ACKs every segment. Without a drain rate (BMv2's own speed) the pipe is not
    known and B is the queue; without an RTT the run stops here."""
    k, pipe = point.scheme.k, shape.queue_pkts
    if shape.queue_rate_pps and k > 0 and not point.receiver_delayed_ack:
        if rtt_ms is None:
            raise RuntimeError("the receiver's budget needs the base RTT, and ping measured none")
        pipe = pipe_frames(shape.queue_rate_pps, rtt_ms / 1e3)
    return rx_budget_bytes(point.transport, shape.queue_pkts, k, pipe, point.receiver_delayed_ack)


def _agent_cmd(
    intf: str,
    point: Point,
    shape: LinkShape,
    ready: Path,
    dilation: Dilation | None = None,
    rtt_ms: float | None = None,
) -> list[str]:
    """The host agent on the receiver. BMv2 RTTs are ~1 ms idle and tens of ms
    queued, above the agent's 2 ms datacenter limit, so the limit is lifted;
    ICTCP's capacity C is what the receiver can get: the bottleneck rate;
    newdctcp-budget's budget is `budget_bytes` (base RTT `rtt_ms`); RCC's receiver
    timer is stretched to the testbed's clock as the min RTO is (`dilation`)."""
    policy, transport = point.scheme.agent, point.transport
    cmd = [sys.executable, "-m", "p4incast.agent", "run", "--iface", intf, "--policy", policy]
    cmd += ["--rtt-limit-us", "1000000", "--ready-file", str(ready)]
    cmd += ["--min-segs", str(point.rx_min_segs)]
    if transport.policy_tick_us:
        cmd += ["--interval-ms", str(transport.policy_tick_us / 1000)]
    if transport.rx_idle_ms:
        cmd += ["--idle-reset-s", str(transport.rx_idle_ms / 1000)]
    if shape.queue_rate_pps:
        mbps = shape.queue_rate_pps * WIRE_FRAME_BYTES * 8 / 1e6
        cmd += ["--capacity-mbps", str(max(1, round(mbps)))]
    if policy == BUDGET_AGENT:
        cmd += ["--budget-bytes", str(budget_bytes(point, shape, rtt_ms))]
        if point.scheme.rotate:
            # BMv2's queue counts packets: a pure ACK due takes a whole slot (§3.6)
            ack_cost = rx_ack_cost_bytes(transport, counts_packets=True)
            cmd += ["--rotate", "1", "--ack-cost", str(ack_cost)]
    if point.scheme.sender_ecn:
        cmd += ["--sender-ecn", "1"]
    if policy == "rcc" and not transport.ack_queue:
        cmd += ["--ack-queue", "0"]
    if policy == "rcc":
        rto_r = transport.rcc_rto_r_ms
        rto_r = dilation.testbed_ms(rto_r) if dilation else rto_r
        cmd += ["--rcc-rto-r-ms", str(rto_r)]
    return cmd


def switch_budget(point: Point, shape: LinkShape, rtt_ms: float | None) -> PortBudget | None:
    """The receiver's budget the ToR holds for a `switch_budget` scheme: the same
    B as the host agent's (`budget_bytes`), whole segments of Linux's MSS; None
    for every other scheme."""
    if not point.scheme.switch_budget:
        return None
    return PortBudget(bytes=budget_bytes(point, shape, rtt_ms))


def host_setup(
    host: Any,
    rto_min_ms: int,
    transport: Transport | None = None,
    delayed_ack: bool = True,
    congctl: str | None = None,
) -> None:
    """Offloads off, ECN on, the tail-loss probe as transport.tail_loss_probe
    says, and the route's TCP settings: min RTO, initial window,
    the largest window RECEIVER_WINDOW_CLAMP (window scale 3),
    quickack (no delayed ACK) unless both transport.delayed_ack and `delayed_ack`
    (the point's receiver_delayed_ack, on the receiver) hold, and `congctl`, the
    congestion control of the host's connections (on the receiver: how it
    echoes CE)."""
    t = transport or Transport()
    intf = host.defaultIntf().name
    host.cmd(f"ethtool -K {intf} tx off rx off tso off gso off gro off >/dev/null 2>&1")
    host.cmd(f"sysctl -qw net.ipv6.conf.{intf}.disable_ipv6=1")
    host.cmd("sysctl -qw net.ipv4.tcp_ecn=1")
    tlp = LINUX_EARLY_RETRANS_TLP if t.tail_loss_probe else 0
    host.cmd(f"sysctl -qw net.ipv4.tcp_early_retrans={tlp}")
    quickack = "" if t.delayed_ack and delayed_ack else " quickack 1"
    cc = f" congctl {congctl}" if congctl else ""
    host.cmd(
        f"ip route replace 10.0.0.0/8 dev {intf} rto_min {rto_min_ms}ms "
        f"initcwnd {t.init_cwnd} window {RECEIVER_WINDOW_CLAMP}{quickack}{cc}"
    )


CALIBRATE_S = 3  # seconds of bulk TCP through the bottleneck


def calibrate(point: Point, log_dir: Path) -> Dilation:
    """Measure what the point's bottleneck drains: one sender, the point's queue
    and rate, one bulk TCP flow for CALIBRATE_S seconds (the first omitted),
    data packets per second at the receiver; and the idle base RTT."""
    t = point.topology
    shape = link_shape(point)
    with network(
        "incast_star", 1, spines=1, host_mbps=t.host_mbps, background=False, log_dir=log_dir
    ) as net:
        for h in net.hosts:
            host_setup(h, t.rto_min_ms)
        program(net, EcnPolicy(), shape)
        r, h1 = net.get(RECEIVER), net.get("h1")
        rtt = ping_rtt_ms(h1, r.IP())
        r.cmd("iperf3 -s -D -1 -p 5210")
        time.sleep(0.3)
        out = h1.cmd(f"iperf3 -c {r.IP()} -p 5210 -t {CALIBRATE_S + 1} -O 1 -J")
    try:
        bps = json.loads(out)["end"]["sum_received"]["bits_per_second"]
    except (ValueError, KeyError) as err:
        raise RuntimeError(f"calibration: iperf3 gave no result ({err}): {out[-300:]}") from None
    return Dilation(
        measured_pps=bps / (8 * MSS_BYTES),
        configured_pps=float(t.bottleneck_pps),
        base_rtt_ms=rtt,
    )


def ping_rtt_ms(src: Any, dst_ip: str) -> float | None:
    out = src.cmd(f"ping -c 5 -i 0.2 -q {dst_ip}")
    for line in out.splitlines():
        if "min/avg/max" in line:
            return float(line.split("=")[1].split("/")[1])
    return None


def quiet_switches() -> None:
    """Mininet reports htb's harmless "quantum is big" notes as errors; finsy warns
    that BMv2 has no gNMI. Our own errors carry what matters."""
    setLogLevel("critical")
    quiet_finsy(verbose=False)


@contextmanager
def network(
    topology: str, n: int, *, spines: int, host_mbps: float, background: bool, log_dir: Path
) -> Iterator[Any]:
    """A started Mininet network of BMv2 switches (no pipeline yet); stopped on exit.
    The switches run in the root namespace and BMv2 binds thrift on every
    interface: their thrift and P4Runtime ports are fenced to this host
    (`bmv2.LoopbackFence`) from before the first switch starts until the last
    has stopped, whatever happens in between."""
    quiet_switches()
    log_dir.mkdir(parents=True, exist_ok=True)
    topo = topos[topology](n=n, spines=spines, host_mbps=host_mbps, background=background)
    net = Mininet(
        topo=topo,
        # any switch class or factory (Mininet's untyped default reads as OVSKernelSwitch)
        switch=cast(Any, partial(Bmv2GrpcSwitch, log_dir=log_dir)),
        link=TCLink,
        controller=None,
        autoStaticArp=True,
        build=True,
    )
    fence = bmv2.LoopbackFence(
        tuple(p for sw in net.switches for p in (sw.thrift_port, sw.grpc_port))
    )
    try:
        fence.up()
        net.start()
        yield net
    finally:
        try:
            net.stop()
        finally:
            fence.down()


def switch_configs(
    net: Any,
    ecn: EcnPolicy,
    shape: LinkShape,
    tls: TlsSettings | None = None,
) -> dict[str, Config]:
    """Controller config per switch of `net`: the topology's ports and routes
    (`switch_plans`), with `ecn` on every port toward the receiver. The
    receiver's budget held by the switch (docs/algorithms.md §8) is set live
    later, once the base RTT is known (`_Run.hold_budget`). P4Runtime is
    plaintext (the testbed's switches listen on loopback) unless `tls` is given."""
    return {
        name: Config(
            switch=SwitchSettings(
                address=p.address, device_id=p.device_id, thrift_port=p.thrift_port, tls=tls
            ),
            pipeline=Pipeline.default(),
            ports={
                q.port: PortConfig(
                    port=q.port,
                    mac=q.mac,
                    queue_depth=q.queue_depth,
                    queue_rate=q.queue_rate,
                    ecn=ecn if q.toward_receiver else EcnPolicy(),
                )
                for q in p.ports
            },
            routes=[Route(prefix=r.prefix, port=r.port, dmac=r.dmac) for r in p.routes],
        )
        for name, p in switch_plans(net, shape=shape).items()
    }


def program(
    net: Any,
    ecn: EcnPolicy,
    shape: LinkShape,
    tls: TlsSettings | None = None,
) -> dict[str, Any]:
    """Every switch programmed through app.apply (the path `p4incast-ctl apply` takes)."""
    configs = switch_configs(net, ecn=ecn, shape=shape, tls=tls)
    for cfg in configs.values():
        asyncio.run(app.apply(cfg))
    return configs


def run(
    point: Point,
    cc: str,
    ecn: EcnPolicy,
    log_dir: Path,
    dilation: Dilation | None = None,
    progress: Callable[[str], None] = lambda s: None,
    capture: bool = False,
) -> TestbedResult:
    """Run one point with sender congestion control `cc` (a kernel name) and the
    switch policy `ecn` on a fresh Mininet network; always tears it down. With
    `dilation`, the min RTO is stretched to the testbed's clock. With `capture`,
    the receiver's packet headers go to receiver.pcap and a rotating agent's
    per-tick state to rotation.jsonl, in `log_dir`."""
    t = point.topology
    shape = link_shape(point)
    with network(
        t.kind,
        point.n,
        spines=t.spines,
        host_mbps=t.host_mbps,
        background=t.background,
        log_dir=log_dir,
    ) as net:
        steps = _Run(net, point, cc, ecn, shape, log_dir, dilation, progress, capture)
        try:
            return steps.run()
        finally:
            steps.stop_processes()


@dataclass
class _Run:
    """One point on a started network: what its steps share, and the processes
    they start (all stopped by `stop_processes`, whatever happened)."""

    net: Any
    point: Point
    cc: str
    ecn: EcnPolicy
    shape: LinkShape
    log_dir: Path
    dilation: Dilation | None
    progress: Callable[[str], None]
    capture: bool
    procs: list[Any] = field(default_factory=list)
    configs: dict[str, Any] = field(default_factory=dict)  # by switch name
    rtt_ms: float | None = None  # the idle base RTT, sender 1 -> receiver
    agent: Any = None  # the host agent's process, if the scheme has one
    client_cmd: list[str] = field(default_factory=list)
    batch: dict[str, Any] | None = None  # the seed-003 plan, if batching
    agent_cpu: float | None = None  # the agent's CPU over the rounds, fraction of a core
    budget: PortBudget | None = None  # the receiver's budget its ToR holds, if any

    def run(self) -> TestbedResult:
        """The steps of a run, in order."""
        sch, t = self.point.scheme, self.point.topology
        self.configure_hosts()
        self.program_switches()
        self.measure_base_rtt()
        self.hold_budget()
        if self.capture:
            self.start_capture()
        if sch.agent != "off":
            self.start_agent()
        self.start_servers()
        if t.background:
            self.start_background()
        self.plan_client()
        poller = self.run_client()
        return self.collect_results(poller)

    @property
    def receiver(self) -> Any:
        return self.net.get(RECEIVER)

    @property
    def senders(self) -> list[Any]:
        return [self.net.get(f"h{i}") for i in range(1, self.point.n + 1)]

    @property
    def rto_ms(self) -> int:
        """The min RTO, stretched to the testbed's clock with a dilation."""
        t = self.point.topology
        return self.dilation.rto_min_ms(t.rto_min_ms) if self.dilation else t.rto_min_ms

    @property
    def tor(self) -> Any:
        """The controller config of the receiver's ToR."""
        return self.configs[receiver_switch(self.net).name]

    def configure_hosts(self) -> None:
        """Every host's TCP settings (`host_setup`). DCTCP's and NewDCTCP's
        receivers echo CE exactly (one ECE per CE run, an ACK when CE state
        flips) only when the receiving socket runs the same congestion control;
        a stock receiver echoes RFC 3168-style, ECE on every ACK until the
        sender's CWR, which the sender's α then reads as more marks."""
        point, rto, receiver = self.point, self.rto_ms, self.receiver
        echo_cc = self.cc if point.scheme.cc in ECHO_CCS else None
        for host in self.net.hosts:
            if host is receiver:
                host_setup(host, rto, point.transport, point.receiver_delayed_ack, echo_cc)
            else:
                host_setup(host, rto, point.transport)

    def program_switches(self) -> None:
        """Every switch through the controller, before any connection opens."""
        self.configs = program(self.net, self.ecn, self.shape)
        self.progress("switches programmed")

    def measure_base_rtt(self) -> None:
        self.rtt_ms = ping_rtt_ms(self.senders[0], self.receiver.IP())

    def hold_budget(self) -> None:
        """A scheme with `switch_budget`: the receiver's ToR port holds the budget,
        set live once the base RTT gives the pipe (`switch_budget`) and before
        any connection opens, so the switch reads the receiver's SYNs (their
        window scale) from the first one."""
        self.budget = switch_budget(self.point, self.shape, self.rtt_ms)
        if self.budget is None:
            return
        cfg = self.tor
        port = bottleneck_port(self.net)
        asyncio.run(app.set_budget(cfg.switch, cfg.pipeline, port=port, budget=self.budget))
        self.progress(f"budget {self.budget.bytes} bytes on the receiver's port")

    def start_capture(self) -> None:
        """tcpdump on the receiver: headers only (96 bytes: Ethernet, IP, TCP with
        options); the agent's forged window updates are seen too (tc egress runs
        before the tap)."""
        if not shutil.which("tcpdump"):
            raise RuntimeError("--capture needs tcpdump (apt-get install tcpdump)")
        pcap = self.log_dir / "receiver.pcap"
        intf = self.receiver.defaultIntf().name
        self.procs.append(
            self.receiver.popen(["tcpdump", "-i", intf, "-s", "96", "-U", "-w", str(pcap), "tcp"])
        )
        time.sleep(0.5)  # tcpdump attached before the first packet

    def start_agent(self) -> None:
        """The host agent on the receiver (`_agent_cmd`); waits up to 15 s for its
        ready file."""
        receiver, log_dir, sch = self.receiver, self.log_dir, self.point.scheme
        agent_log = (log_dir / "agent.log").open("w")
        ready = log_dir / "agent.ready"
        self.agent = agent = receiver.popen(
            _agent_cmd(
                receiver.defaultIntf().name,
                self.point,
                self.shape,
                ready,
                self.dilation,
                self.rtt_ms,
            )
            + (["--trace", str(log_dir / "rotation.jsonl")] if self.capture and sch.rotate else []),
            stdout=agent_log,
            stderr=agent_log,
        )
        self.procs.append(agent)
        deadline = time.monotonic() + 15
        while not ready.exists() and agent.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not ready.exists():
            raise RuntimeError(
                "host agent did not start: " + (log_dir / "agent.log").read_text()[-500:]
            )

    def start_servers(self) -> None:
        """The incast server on every sender, logging to server-<i>.log."""
        for i, h in enumerate(self.senders):
            log = (self.log_dir / f"server-{i + 1}.log").open("w")
            server = [sys.executable, "-m", "p4incast.apps.incast", "server"]
            server += ["--port", str(SERVER_PORT), "--cc", self.cc]
            self.procs.append(h.popen(server, stdout=log, stderr=log))

    def start_background(self) -> None:
        """A long iperf3 flow from the background host to the receiver."""
        receiver, bg = self.receiver, self.net.get(BACKGROUND)
        self.procs.append(receiver.popen(["iperf3", "-s", "-1", "-p", "5201"]))
        time.sleep(0.3)
        self.procs.append(
            bg.popen(["iperf3", "-c", receiver.IP(), "-p", "5201", "-t", "3600", "-C", self.cc])
        )

    def plan_client(self) -> None:
        """The incast client's command line; with batching, the seed-003 plan
        at the measured base RTT."""
        a, sch = self.point.app, self.point.scheme
        cmd = [sys.executable, "-m", "p4incast.apps.incast", "client"]
        cmd += ["--servers", ",".join(h.IP() for h in self.senders)]
        cmd += ["--port", str(SERVER_PORT), "--sru", str(a.sru_bytes)]
        cmd += ["--rounds", str(a.rounds), "--mode", a.mode, "--connections", a.connections]
        cmd += ["--stall-s", f"{STALL_RTO_FRACTION * self.rto_ms / 1e3:.3f}"]
        cmd += ["--out", str(self.log_dir / "rounds.jsonl")]
        if sch.batching:
            rtt_s = (self.rtt_ms or 1.0) / 1e3
            n_batch, stagger_us, self.batch = plan_batches(self.point, self.shape, rtt_s)
            cmd += ["--batch", str(n_batch), "--stagger-us", f"{stagger_us:.0f}"]
        self.client_cmd = cmd

    def run_client(self) -> DepthPoller:
        """The client on the receiver, logging to client.log, while the ToR's
        bottleneck depth is polled (the poller, stopped, is returned) and the
        agent's CPU is measured; raises with the log's tail if it fails."""
        client_log = self.log_dir / "client.log"
        poller = DepthPoller(self.tor, bottleneck_port(self.net))
        poller.start()
        agent = self.agent
        agent_cpu0 = (process_cpu_s(agent.pid), time.monotonic()) if agent is not None else None
        with client_log.open("w") as log:
            client = self.receiver.popen(self.client_cmd, stdout=log, stderr=log)
            try:
                rc = client.wait(timeout=60 + self.point.app.rounds * 30)
            finally:
                poller.stop.set()
                poller.join(timeout=10)
        if agent is not None and agent_cpu0 is not None and agent.poll() is None:
            c0, t0 = agent_cpu0
            self.agent_cpu = (process_cpu_s(agent.pid) - c0) / max(time.monotonic() - t0, 1e-9)
        if rc != 0:
            tail = client_log.read_text().strip().splitlines()[-5:]
            raise RuntimeError(
                f"incast client failed (exit {rc}): {shlex.join(self.client_cmd)}\n"
                + "\n".join(tail)
            )
        return poller

    def collect_results(self, poller: DepthPoller) -> TestbedResult:
        """The client's rounds, the ToR's counters and the depth series."""
        out = self.log_dir / "rounds.jsonl"
        rounds = [json.loads(line) for line in out.read_text().splitlines()]
        if poller.error:
            self.progress(f"queue-depth series lost: {poller.error}")
        port = bottleneck_port(self.net)
        snap = asyncio.run(read_stats(self.tor, budget_port=port if self.budget else None))
        snap["bottleneck_port"] = str(port)
        return TestbedResult(
            rounds=rounds,
            switch=snap,
            base_rtt_ms=self.rtt_ms,
            log_dir=self.log_dir,
            batch=self.batch,
            depth_series=poller.series,
            agent_cpu=self.agent_cpu,
        )

    def stop_processes(self) -> None:
        """Terminate what the steps started; kill what does not exit in 5 s."""
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except Exception:  # best effort, then kill
                p.kill()


def bottleneck_port(net: Any) -> int:
    """The receiver's ToR port facing the receiver: the incast bottleneck."""
    tor, receiver = receiver_switch(net), net.get(RECEIVER)
    for intf in tor.intfList():
        link = intf.link
        if link is not None and receiver in (link.intf1.node, link.intf2.node):
            return tor.ports[intf]
    raise RuntimeError("no ToR port faces the receiver")


async def read_stats(cfg: Any, budget_port: int | None = None) -> dict[str, Any]:
    """The switch's counters (`stats.read`); with `budget_port`, that port's
    budget counters too, under "budget" (rewritten ACKs, untracked packets...)."""
    async with connect(cfg.switch, cfg.pipeline) as sw:
        snap = (await stats.read(sw)).as_dict()
        if budget_port is not None:
            got = await budget_tables.read_counters(sw, [budget_port])
            snap["budget"] = {str(p): asdict(c) for p, c in got.items()}
        return snap
