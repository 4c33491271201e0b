"""RCC's at-scale scenario (Xu et al. 2017, §6.2): a two-tier fabric, a few
aggregators, Pareto-sized short flows and long background flows — the settings
and the traffic plan, one definition for the simulator and its tests.

    Fabric(tors=40, hosts_per_tor=25, ...)     the network (1000 hosts)
    Traffic(aggregators=5, mean_bytes=50e3, ...)
    AtScalePoint(scheme, load, repeat, ...)    one run of the scenario
    plan(fabric, traffic, load, seed) -> Plan   every flow: source, sink, start, bytes

What the paper states (docs/algorithms.md §7): 40 ToRs × 25 hosts, 25 Gbit/s
ToR uplinks to one root, 1 Gbit/s host links, 5 random aggregators, short
flows Pareto-sized (mean 50 KB, shape 1.2) with exponential inter-arrivals,
5 background flows of 30 MB, offered load 0–90 %. Its §6.1 settings carry
over: 40 µs links, a 128 KB (80-packet) output queue, RTO 10 ms, no delayed
ACK, K = queue_maxsize = 40 packets.

What it does not state gets one value here, each documented where it is
defined and ablated in experiments/papers/ablations/rcc-at-scale-*.yaml:
- offered load = the short flows' bytes per second sent to each aggregator
  over its 1 Gbit/s link (the aggregators' links are the fabric's only
  oversubscribed points: a ToR's 25 hosts × 1 Gbit/s fit its 25 Gbit/s uplink);
- the background flows are not counted in it: one per aggregator, from a
  random non-aggregator host, all starting at t = 0;
- a short flow's sender is a uniformly random non-aggregator host, its sink a
  uniformly random aggregator;
- sizes are min(Pareto, max_bytes) with max_bytes = the background flows' 30 MB
  (a short flow is never longer than a long one), the Pareto scale chosen so
  that the capped distribution's mean is mean_bytes exactly (pareto_scale);
- a point is `short_flows` arrivals (2000: a p99 over 20 flows per percent);
  the arrival window is however long they take at that load.

The paper's own traffic figures (§6.2 first para), for its ablation
(experiments/papers/ablations/rcc-at-scale-arrivals.yaml): exponential
inter-arrival means of 300–700 µs, read as one arrival process over the whole
fabric (`load_of_arrival_mean` turns a mean into the load above), and the
background flows as 75 % of all bytes (`Traffic.background_share`, which then
sets the number of short flows: `short_flow_count`).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from .errors import ModelError
from .scheme import Scheme, Topology, Transport

ATSCALE_SCENARIO = "at-scale"  # a preset's `scenario:` for this one
MIN_LOAD, MAX_LOAD = 0.0, 1.0  # offered load is a fraction of an aggregator's link


@dataclass(frozen=True)
class Fabric:
    """A two-tier fabric: `tors` ToRs of `hosts_per_tor` hosts, every ToR on one root."""

    tors: int = 40
    hosts_per_tor: int = 25
    host_gbps: float = 1.0  # host <-> ToR links
    uplink_gbps: float = 25.0  # ToR <-> root links
    delay_us: float = 40.0  # one way, every link (RCC §6.1)
    buffer_bytes: int = (
        121120  # every switch port: 80 full frames of 1514 B (RCC's 128 KB, 80 pkts)
    )
    rto_min_ms: int = 10

    @property
    def hosts(self) -> int:
        return self.tors * self.hosts_per_tor

    def tor_of(self, host: int) -> int:
        return host // self.hosts_per_tor


@dataclass(frozen=True)
class Traffic:
    aggregators: int = 5
    mean_bytes: float = 50_000.0  # short flows' mean size (KB = 1000 B)
    pareto_shape: float = 1.2
    max_bytes: int = 30_000_000  # short flows are capped at the background flows' size
    short_flows: int = 2000  # arrivals per point; 0 with background_share
    # > 0: the background flows' share of all bytes, which sets the number of
    # short flows instead of short_flows (short_flow_count); 0: short_flows
    background_share: float = 0.0
    background_flows: int = 5  # one per aggregator while there are aggregators left
    background_bytes: int = 30_000_000
    start_s: float = 0.001  # first arrival after this much simulated time


@dataclass(frozen=True)
class AtScalePoint:
    """One (scheme, offered load, repeat) of the fabric: what the at-scale engine runs."""

    scheme: Scheme
    load: float
    repeat: int = 0
    fabric: Fabric = field(default_factory=Fabric)
    traffic: Traffic = field(default_factory=Traffic)
    transport: Transport = field(default_factory=Transport)

    @property
    def seed(self) -> int:
        """Repeat r runs with seed r + 1, as in an incast experiment (flows and ns-3's streams)."""
        return self.repeat + 1

    def label(self) -> str:
        return f"{self.scheme.name} load={self.load:.0%} #{self.repeat + 1}"


def port_topology(f: Fabric) -> Topology:
    """A fabric's switch port as an incast topology on the simulator: its buffer, link
    rate, delay and minimum RTO, so a scheme is checked by the incast rules
    (`check_scheme(s, port_topology(f), "sim")`: K below the port's buffer in full
    frames, `Topology.buffer_frames`)."""
    return Topology(
        buffer_bytes=f.buffer_bytes,
        link_gbps=f.host_gbps,
        delay_us=f.delay_us,
        rto_min_ms=f.rto_min_ms,
    )


def check_fabric(f: Fabric) -> None:
    if f.tors < 1 or f.hosts_per_tor < 1:
        raise ModelError(
            f"fabric: tors ({f.tors}) and hosts_per_tor ({f.hosts_per_tor}) must be >= 1"
        )
    if f.hosts > 60000:
        raise ModelError(f"fabric: {f.hosts} hosts; the model addresses at most 60000")
    for name in ("host_gbps", "uplink_gbps"):
        if not getattr(f, name) > 0:
            raise ModelError(f"fabric.{name}: {getattr(f, name)!r} must be > 0")
    if f.delay_us < 0 or f.buffer_bytes < 1514 or f.rto_min_ms < 1:
        raise ModelError("fabric: delay_us >= 0, buffer_bytes >= 1514 (one frame), rto_min_ms >= 1")


def check_traffic(t: Traffic, fabric: Fabric) -> None:
    if not 1 <= t.aggregators < fabric.hosts:
        raise ModelError(
            f"traffic.aggregators: {t.aggregators} must be >= 1 and leave senders among "
            f"{fabric.hosts} hosts"
        )
    if not t.pareto_shape > 1:
        raise ModelError(f"traffic.pareto_shape: {t.pareto_shape} must be > 1 (a finite mean)")
    if not 0 < t.mean_bytes < t.max_bytes:
        raise ModelError(
            f"traffic: mean_bytes ({t.mean_bytes}) must be in (0, max_bytes = {t.max_bytes})"
        )
    if t.background_flows < 0 or t.background_bytes < 1:
        raise ModelError("traffic: background_flows >= 0, background_bytes >= 1")
    if not 0 <= t.background_share < 1:
        raise ModelError(f"traffic.background_share: {t.background_share} must be in [0, 1)")
    if t.background_share and (t.short_flows != 0 or t.background_flows < 1):
        raise ModelError(
            "traffic.background_share sets the number of short flows: it needs "
            f"short_flows: 0 (got {t.short_flows}) and background_flows >= 1"
        )
    if not t.background_share and t.short_flows < 1:
        raise ModelError("traffic: short_flows >= 1 (or a background_share that sets it)")
    if t.start_s < 0:
        raise ModelError("traffic.start_s must be >= 0")


def check_load(load: object) -> float:
    if (
        isinstance(load, bool)
        or not isinstance(load, int | float)
        or not MIN_LOAD < load < MAX_LOAD
    ):
        raise ModelError(f"load: {load!r} must be a fraction in (0, 1)")
    return float(load)


def short_flow_count(t: Traffic) -> int:
    """Short flows per point: `short_flows`, or with a background_share s the count
    whose expected bytes (count × mean_bytes) make the background flows' bytes s of
    all bytes: background bytes × (1 − s) / s / mean_bytes, rounded (at least 1).
    The background flows are min(background_flows, aggregators), as `plan` starts."""
    if not t.background_share:
        return t.short_flows
    background = min(t.background_flows, t.aggregators) * t.background_bytes
    share = t.background_share
    return max(1, round(background * (1 - share) / share / t.mean_bytes))


def arrival_rate(fabric: Fabric, traffic: Traffic, load: float) -> float:
    """Short-flow arrivals per second over the whole fabric at this offered load: each
    aggregator's link gets `load` of its rate in short-flow bytes (the module docstring)."""
    return traffic.aggregators * load * fabric.host_gbps * 1e9 / (8 * traffic.mean_bytes)


def load_of_arrival_mean(fabric: Fabric, traffic: Traffic, mean_us: object) -> float:
    """The offered load whose arrivals over the whole fabric are `mean_us` apart on
    average (the inverse of `arrival_rate`); ModelError unless it is a load in (0, 1)."""
    if isinstance(mean_us, bool) or not isinstance(mean_us, int | float) or not mean_us > 0:
        raise ModelError(f"arrival mean: {mean_us!r} must be a number of µs > 0")
    load = 1 / (mean_us * 1e-6) / arrival_rate(fabric, traffic, 1.0)
    if not MIN_LOAD < load < MAX_LOAD:
        raise ModelError(
            f"arrival mean {mean_us} µs is {load:.0%} of each aggregator's link; a load "
            f"must be in (0, 1)"
        )
    return load


def capped_mean(scale: float, shape: float, cap: float) -> float:
    """E[min(X, cap)] for X ~ Pareto(scale, shape): the integral of P(X > x) over [0, cap]."""
    if cap <= scale:
        return cap
    return scale + scale**shape * (scale ** (1 - shape) - cap ** (1 - shape)) / (shape - 1)


def pareto_scale(mean: float, shape: float, cap: float) -> float:
    """The Pareto scale x_m whose capped distribution min(X, cap) has this mean."""
    lo, hi = 0.0, mean  # capped_mean(x_m) grows with x_m, and capped_mean(mean) >= mean
    for _ in range(200):
        mid = (lo + hi) / 2
        if capped_mean(mid, shape, cap) < mean:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@dataclass(frozen=True)
class Plan:
    """Every flow of one point; index i is flow i in every list."""

    aggregators: tuple[int, ...]
    src: tuple[int, ...]
    dst: tuple[int, ...]
    start_s: tuple[float, ...]
    nbytes: tuple[int, ...]
    long: tuple[bool, ...]
    window_s: float  # from the first to the last short-flow arrival
    offered_load: float  # the short flows' bytes over (aggregators × link × window)

    @property
    def short(self) -> list[int]:
        return [i for i, x in enumerate(self.long) if not x]


def plan(fabric: Fabric, traffic: Traffic, load: float, seed: int) -> Plan:
    """The flows of one point, the same for every scheme with the same seed."""
    check_fabric(fabric)
    check_traffic(traffic, fabric)
    load = check_load(load)
    rng = random.Random(seed)
    aggs = tuple(sorted(rng.sample(range(fabric.hosts), traffic.aggregators)))
    agg_set = set(aggs)
    senders = [h for h in range(fabric.hosts) if h not in agg_set]
    src: list[int] = []
    dst: list[int] = []
    start: list[float] = []
    size: list[int] = []
    long: list[bool] = []
    for i in range(min(traffic.background_flows, len(aggs))):
        src.append(rng.choice(senders))
        dst.append(aggs[i])
        start.append(0.0)
        size.append(traffic.background_bytes)
        long.append(True)
    scale = pareto_scale(traffic.mean_bytes, traffic.pareto_shape, traffic.max_bytes)
    # arrivals to all aggregators together: Poisson, rate = aggregators × per-link rate
    rate = arrival_rate(fabric, traffic, load)
    t = traffic.start_s
    short_bytes = 0
    for k in range(short_flow_count(traffic)):
        if k:
            t += rng.expovariate(rate)
        u = 1.0 - rng.random()  # (0, 1]
        b = min(math.ceil(scale / u ** (1 / traffic.pareto_shape)), traffic.max_bytes)
        src.append(rng.choice(senders))
        dst.append(rng.choice(aggs))
        start.append(t)
        size.append(b)
        long.append(False)
        short_bytes += b
    window = t - traffic.start_s
    cap_bps = len(aggs) * fabric.host_gbps * 1e9
    offered = 8 * short_bytes / (cap_bps * window) if window > 0 else float("nan")
    return Plan(
        aggs, tuple(src), tuple(dst), tuple(start), tuple(size), tuple(long), window, offered
    )
