"""Prometheus exporter of the switch's counters (`p4incast-ctl export`).

A poller reads the pipeline's counters every `interval` seconds through the
same path as `p4incast-ctl stats` (`stats.read`) and keeps the last
successful Snapshot; a custom collector turns it into metric families on
every scrape, so the values are the switch's own cumulative counters (a
switch restart shows as a counter reset, which `rate()` handles).

Read-only by construction: `ReadOnlySwitch` holds a bare finsy `P4Client`
and sends only Read and GetForwardingPipelineConfig (P4Runtime serves both
to any client, with no arbitration). It never opens the StreamChannel, so it
never sends a MasterArbitrationUpdate: it is neither primary nor backup, and
cannot take (or be handed) mastership from the controller that owns the
pipeline. It has no write or pipeline-push method at all.

It reaches the switch with the controller's TLS settings (`switch.tls`), and
serves HTTPS (and basic auth) when given --metrics-tls-* files or
--web.config.file, through the server both metrics endpoints share
(`p4incast.metrics_server`: one idle or hostile client never stalls a scrape).

A switch that is down, restarting or runs no pipeline is not an error: the
exporter serves `p4incast_switch_up 0` (and no per-port series), logs the
change once, and keeps polling; the gRPC channel reconnects by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar, cast

import finsy as fy
from finsy import p4entity
from finsy.p4client import P4Client
from finsy.proto import p4r
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry

from p4incast import metrics_server
from p4incast.metrics_server import MetricsServer
from p4incast.model import switch_budget
from p4incast.model.tls import MetricsTls

from . import budget as budget_tables
from . import stats, tls
from .config import SwitchSettings
from .connection import check_handshake
from .errors import ControllerError, model_errors
from .p4names import DROP_REASONS, HIST_BUCKETS
from .units import DepthUnit

LOG = logging.getLogger("p4incast.controller.export")

DEFAULT_LISTEN = "127.0.0.1:9464"
DEFAULT_INTERVAL_S = 2.0
PREFIX = "p4incast_switch"

_E = TypeVar("_E", bound=p4entity.P4Entity)

# PortStats attribute -> (metric name without _total, help). All packets at one
# egress port, as `p4incast-ctl stats` shows them.
PORT_COUNTERS: dict[str, tuple[str, str]] = {
    "routed": ("routed_packets", "packets routed to this egress port at ingress"),
    "routed_bytes": ("routed_bytes", "bytes routed to this egress port at ingress"),
    "egress": (
        "egress_packets",
        "packets that left the queue into egress (the depth histogram's count)",
    ),
    "ect": ("ect_packets", "packets that reached egress as ECT(0)/ECT(1)"),
    "marked": ("marked_packets", "packets turned into CE at this port"),
    "ce_in": ("ce_in_packets", "packets that reached egress already CE"),
    "not_ect_over_k": (
        "not_ect_over_k_packets",
        "Not-ECT packets that saw depth >= K (never marked)",
    ),
    "ecn_drop": ("ecn_drop_packets", "Not-ECT packets dropped at depth >= drop_k"),
}


def parse_listen(value: str, what: str = "--listen") -> tuple[str, int]:
    """ADDR:PORT (IPv6 as [ADDR]:PORT) -> (addr, port); ControllerError if malformed."""
    host, sep, port = value.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ControllerError(
            f"{what} {value!r}: expected ADDR:PORT, e.g. 127.0.0.1:9464 or [::]:9464"
        )
    return host, int(port)


def serve(
    registry: CollectorRegistry,
    listen: str,
    what: str = "--listen",
    metrics_tls: MetricsTls | None = None,
) -> MetricsServer:
    """Bind and serve `registry` on ADDR:PORT from worker threads (text format and
    OpenMetrics, negotiated by prometheus_client), over HTTPS and with basic auth as
    `metrics_tls` says (the settings in effect: `tls.check_metrics`'s);
    ControllerError when the address is malformed or cannot be bound, or the TLS
    files are unusable. Returns the server (`.shutdown()` stops it)."""
    addr, port = parse_listen(listen, what)
    with model_errors():
        try:
            return metrics_server.serve(registry, addr, port, metrics_tls or MetricsTls())
        except OSError as err:
            raise ControllerError(
                f"{what} {listen}: cannot listen: {err.strerror or err}"
            ) from None


class ReadOnlySwitch:
    """Reads from one switch over P4Runtime without a stream channel (no arbitration).

    Offers what `stats.read` uses of a finsy Switch: `read()` and `p4info`.
    """

    def __init__(self, settings: SwitchSettings) -> None:
        self.settings = settings
        self.address = settings.address
        self.device_id = settings.device_id
        self.p4info = fy.P4Schema()
        self.cookie: int | None = None
        self._client: P4Client | None = None

    async def open(self) -> None:
        if self._client is None:
            # wait_for_ready=False: an RPC to a switch that is down fails at once.
            self._client = P4Client(
                self.address, tls.credentials(self.settings.tls), wait_for_ready=False
            )
            await self._client.open()

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def refresh_pipeline(self) -> None:
        """Learn the running pipeline's p4info when its cookie changed (a new push or
        a switch restart); ControllerError when the switch runs no pipeline."""
        assert self._client is not None
        reply = await self._client.request(
            p4r.GetForwardingPipelineConfigRequest(
                device_id=self.device_id,
                response_type=p4r.GetForwardingPipelineConfigRequest.COOKIE_ONLY,
            )
        )
        cookie = reply.config.cookie.cookie if reply.config.HasField("cookie") else None
        if cookie is not None and cookie == self.cookie and self.p4info.exists:
            return
        reply = await self._client.request(
            p4r.GetForwardingPipelineConfigRequest(
                device_id=self.device_id,
                response_type=p4r.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE,
            )
        )
        if not reply.config.HasField("p4info"):
            raise ControllerError(f"the switch at {self.address} runs no pipeline")
        self.p4info = fy.P4Schema()
        self.p4info.set_p4info(reply.config.p4info)
        self.cookie = cookie

    async def read(self, entities: _E | Iterable[_E]) -> AsyncIterator[_E]:
        """Like finsy's Switch.read: decoded entities, one ReadRequest."""
        assert self._client is not None
        if isinstance(entities, p4entity.P4Entity):
            entities = [entities]
        request = p4r.ReadRequest(
            device_id=self.device_id,
            entities=p4entity.encode_entities(entities, self.p4info),
        )
        async for reply in self._client.request_iter(request):
            for ent in reply.entities:
                yield cast(_E, p4entity.decode_entity(ent, self.p4info))


@dataclass
class State:
    """What the collector serves: the last successful read and the poller's health."""

    snapshot: stats.Snapshot | None = None
    up: bool = False
    last_success: float | None = None  # time.time() of the last successful read
    failures: int = 0  # reads that failed since the exporter started
    last_error: str = ""
    # The receiver's budget held by the switch (docs/algorithms.md §8): its
    # counters per port with a budget, when they were read, and the flows
    # active over the last poll interval.
    budget: dict[int, budget_tables.PortCounters] = field(
        default_factory=dict[int, budget_tables.PortCounters]
    )
    budget_time: float | None = None
    active_flows: dict[int, float] = field(default_factory=dict[int, float])


# The budget's counters (controller/budget.py PortCounters), per receiver port.
BUDGET_COUNTERS = {
    "rewritten": ("budget_rewritten_acks", "ACKs from the receiver whose window was lowered"),
    "acks": ("budget_acks", "ACKs from the receiver held to their flow's share"),
    "unknown_scale": (
        "budget_unknown_scale_acks",
        "ACKs of flows whose window scale the switch did not read (left alone)",
    ),
    "untracked": (
        "budget_untracked_packets",
        "packets of flows with no slot in the flow table (forwarded unchanged)",
    ),
    "flow_epochs": ("budget_flow_epochs", "flows counted, each once per epoch it was active in"),
}


class SwitchCollector(Collector):
    """Metric families of one switch from the poller's State (custom collector)."""

    def __init__(self, name: str, unit: DepthUnit, target: str, state: State | None = None):
        self.name = name
        self.unit = unit
        self.target = target
        self.state = state if state is not None else State()
        self.lock = threading.Lock()

    @property
    def depth_metric(self) -> str:
        """The histogram's name carries the target's depth unit (packets | cells)."""
        return f"{PREFIX}_queue_depth_{self.unit.depth_unit}"

    def update(self, **kw: object) -> None:
        with self.lock:
            for k, v in kw.items():
                setattr(self.state, k, v)

    def describe(self) -> Iterator[Metric]:
        """Every family this collector can serve, with one sample set of each (port 0,
        zeros): the served metric and sample names."""
        snap = stats.Snapshot({0: stats.PortStats(0)}, {})
        return self._families(
            State(
                snapshot=snap,
                up=True,
                last_success=0,
                budget={0: budget_tables.PortCounters()},
                active_flows={0: 0.0},
            )
        )

    def collect(self) -> Iterator[Metric]:
        with self.lock:
            st = State(**vars(self.state))
        return self._families(st)

    def _families(self, st: State) -> Iterator[Metric]:
        sw = self.name
        up = GaugeMetricFamily(
            f"{PREFIX}_up",
            "1 if the last read of the switch's counters succeeded, else 0",
            labels=["switch"],
        )
        up.add_metric([sw], 1.0 if st.up else 0.0)
        yield up
        info = InfoMetricFamily(
            PREFIX, "the switch's target and the unit of its queue depth", labels=["switch"]
        )
        info.add_metric([sw], {"target": self.target, "depth_unit": self.unit.depth_unit})
        yield info
        fails = CounterMetricFamily(
            f"{PREFIX}_read_failures",
            "reads of the switch's counters that failed since the exporter started",
            labels=["switch"],
        )
        fails.add_metric([sw], st.failures)
        yield fails
        if st.last_success is not None:
            last = GaugeMetricFamily(
                f"{PREFIX}_last_success_timestamp_seconds",
                "Unix time of the last successful read of the switch's counters",
                labels=["switch"],
            )
            last.add_metric([sw], st.last_success)
            yield last
        snap = st.snapshot
        if not st.up or snap is None:
            return  # no stale counters: the series go stale in Prometheus while down
        ports = sorted(snap.ports.items())
        for attr, (metric, help_) in PORT_COUNTERS.items():
            fam = CounterMetricFamily(f"{PREFIX}_{metric}", help_, labels=["switch", "port"])
            for p, s in ports:
                fam.add_metric([sw, str(p)], getattr(s, attr))
            yield fam
        qd = GaugeMetricFamily(
            f"{PREFIX}_queue_drop_packets",
            "routed minus egress: packets dropped by the full queue, or still queued "
            "(a gauge: it falls when queued packets leave)",
            labels=["switch", "port"],
        )
        for p, s in ports:
            qd.add_metric([sw, str(p)], s.queue_drops)
        yield qd
        drops = CounterMetricFamily(
            f"{PREFIX}_ingress_drop_packets",
            "packets dropped at ingress, by reason",
            labels=["switch", "reason"],
        )
        for reason in DROP_REASONS:
            drops.add_metric([sw, reason], snap.ingress_drops.get(reason, 0))
        yield drops
        u = self.unit.depth_unit
        hist = HistogramMetricFamily(
            self.depth_metric,
            f"queue depth at enqueue in {u} ({self.unit.name}), one observation per packet "
            f"that left the queue; buckets are the pipeline's own ({self.unit.hist_bucket_units} "
            f"{u} each, the last open); _sum is a lower bound (each packet at its bucket's "
            "lower edge)",
            labels=["switch", "port"],
        )
        for p, s in ports:
            buckets: list[tuple[str, float]] = []
            total, lower = 0, 0
            for b, count in enumerate(s.hist):
                lo, hi = self.unit.bucket_range(b, HIST_BUCKETS)
                total += count
                lower += lo * count
                buckets.append(("+Inf" if hi is None else str(hi), total))
            hist.add_metric([sw, str(p)], buckets, sum_value=lower)
        yield hist
        yield from self._budget_families(st)

    def _budget_families(self, st: State) -> Iterator[Metric]:
        """The receiver's budget per receiver port (docs/algorithms.md §8)."""
        sw = self.name
        for attr, (metric, help_) in BUDGET_COUNTERS.items():
            fam = CounterMetricFamily(f"{PREFIX}_{metric}", help_, labels=["switch", "port"])
            for p, c in sorted(st.budget.items()):
                fam.add_metric([sw, str(p)], getattr(c, attr))
            yield fam
        flows = GaugeMetricFamily(
            f"{PREFIX}_budget_active_flows",
            "flows active toward the receiver's port, on average over the last one to "
            "two epochs (the flows the switch counted, each once per epoch, per epoch)",
            labels=["switch", "port"],
        )
        for p, n in sorted(st.active_flows.items()):
            flows.add_metric([sw, str(p)], n)
        yield flows


class Poller:
    """Read the switch every `interval` seconds into a SwitchCollector, forever."""

    def __init__(
        self,
        settings: SwitchSettings,
        collector: SwitchCollector,
        interval: float,
        ports: list[int] | None = None,
    ) -> None:
        self.settings = settings
        self.collector = collector
        self.interval = interval
        self.ports = ports
        self.reader = ReadOnlySwitch(settings)
        # Per budget port: the (time, flow_epochs) the active-flows gauge
        # counts from, and the sample that replaces it once it is two epochs
        # old, so the gauge always spans one to two epochs.
        self._flows_base: dict[int, tuple[float, int]] = {}
        self._flows_next: dict[int, tuple[float, int]] = {}

    async def poll_once(self) -> bool:
        """One read; True if it succeeded. Never raises for a switch that fails."""
        try:
            await self.reader.open()
            async with asyncio.timeout(max(self.interval, 5.0)):
                await self.reader.refresh_pipeline()
                last = self.collector.state.snapshot
                known = list(last.ports) if last is not None else []
                snap = await stats.read(self.reader, self.ports, known)
        except (Exception, TimeoutError) as err:  # any failure is "down"
            text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            st = self.collector.state
            if st.up or st.last_error != text:
                LOG.warning("switch %s: read failed: %s", self.settings.address, text)
            self.reader.cookie = None  # learn the pipeline again once it answers
            self.collector.update(up=False, failures=st.failures + 1, last_error=text)
            return False
        if not self.collector.state.up:
            LOG.info("switch %s: reading counters", self.settings.address)
        self.collector.update(snapshot=snap, up=True, last_success=time.time(), last_error="")
        await self.poll_budget(self.ports)
        return True

    async def poll_budget(self, ports: list[int] | None) -> None:
        """The budget's counters of `ports` (None: every port with a budget) and
        the flows active since the last poll. A pipeline without the budget's
        tables has none to serve."""
        try:
            got = await budget_tables.read_counters(self.reader, ports)
        except Exception as err:  # an older pipeline, or a failed read: none served
            LOG.debug("switch %s: no budget counters: %s", self.settings.address, err)
            self.collector.update(budget={}, budget_time=None, active_flows={})
            return
        now = time.monotonic()
        active: dict[int, float] = {}
        for p, c in got.items():
            active_p = self._active_flows(p, c, now)
            if active_p is not None:
                active[p] = active_p
        self.collector.update(budget=got, budget_time=now, active_flows=active)

    def _active_flows(self, port: int, c: budget_tables.PortCounters, now: float) -> float | None:
        """The flows active toward `port` over the last one to two of its epochs
        (each counted once per epoch it sent in; docs/algorithms.md §8), or
        None until the counters span one epoch. A poll interval is far
        shorter than the default epoch (134 s), and a flow is counted at its
        first packet of an epoch, so a shorter window would swing."""
        epoch_s = c.epoch_ticks * switch_budget.TICK_SECONDS[self.collector.target]
        base = self._flows_base.get(port)
        if base is None or c.flow_epochs < base[1] or epoch_s <= 0:
            self._flows_base[port] = (now, c.flow_epochs)  # first poll, or a reset switch
            self._flows_next.pop(port, None)
            return None
        window = now - base[0]
        if window < epoch_s:
            return None
        got = switch_budget.active_flows(
            c.flow_epochs - base[1], window, c.epoch_ticks, self.collector.target
        )
        nxt = self._flows_next.get(port)
        if nxt is None:
            self._flows_next[port] = (now, c.flow_epochs)
        elif window >= 2 * epoch_s:
            self._flows_base[port] = nxt
            self._flows_next[port] = (now, c.flow_epochs)
        return got

    async def run(self) -> None:
        try:
            while True:
                t0 = time.monotonic()
                await self.poll_once()
                await asyncio.sleep(max(0.0, self.interval - (time.monotonic() - t0)))
        finally:
            with contextlib.suppress(Exception):
                await self.reader.close()


def registry_for(collector: SwitchCollector) -> CollectorRegistry:
    """A registry with only this collector (no process/python metrics of the exporter)."""
    reg = CollectorRegistry(auto_describe=True)
    reg.register(collector)
    return reg


async def export(
    settings: SwitchSettings,
    *,
    listen: str = DEFAULT_LISTEN,
    interval: float = DEFAULT_INTERVAL_S,
    name: str | None = None,
    ports: list[int] | None = None,
    metrics_tls: MetricsTls | None = None,
    on_listen: Callable[[str], None] | None = None,
) -> None:
    """Serve the switch's counters on `listen` (HTTPS with `metrics_tls`) until cancelled.
    A switch that refuses our TLS settings is an error (`check_handshake`); the
    listen address is bound next (ControllerError if malformed or taken); the
    switch may be down."""
    if not interval > 0:
        raise ControllerError(f"--interval {interval}: expected seconds > 0")
    await check_handshake(settings)
    unit = settings.target_profile.unit
    collector = SwitchCollector(name or settings.address, unit, settings.target)
    server = serve(registry_for(collector), listen, metrics_tls=metrics_tls)
    if on_listen is not None:
        on_listen(listen)
    try:
        await Poller(settings, collector, interval, ports).run()
    finally:
        server.shutdown()
