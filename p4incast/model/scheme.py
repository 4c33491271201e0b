"""What is compared, where, and what one run returns — one definition for every engine.

- `Topology`: the network an incast runs on (each engine reads the keys that
  apply to it: the BMv2 testbed its queue in packets and drain rate, the
  simulator its link rate, delay and byte buffer).
- `App`: the incast application (bytes per server per round, rounds, and
  whether each round runs over new connections).
- `Transport`: the hosts' TCP settings (initial window, delayed ACK, DCTCP's
  g, the receiver policies' window floor).
- `Scheme`: everything that differs between the things compared — the
  switch's ECN mode and K (packets), the senders' congestion control, the
  receiver agent's policy and seed-003 batching.
- `Point`: one (scheme, N, repeat) of an experiment, with its topology and app:
  what an engine is asked to run.
- `RunResult`: what an engine returns for a point (the run record of
  experiments/SCHEMA.md).

The rules that check a setting are here once (`check_scheme`, `check_topology`,
`check_app`); engines, the experiment loader and the testbed's controller
config all call them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any, cast

from . import batching
from .ecn import EcnMode
from .errors import ModelError
from .wire import (
    ACK_FRAME_BYTES,
    ACK_WIRE_BYTES,
    MIN_MSS_BYTES,
    MSS_BYTES,
    QUEUED_FRAME_BYTES,
    WIRE_FRAME_BYTES,
    eth_frame_bytes,
    ip_packet_bytes,
    wire_frame_bytes,
)

INCAST_SCENARIO = "incast"  # what a Point is part of (a preset's `scenario:` when absent)
TOPOLOGIES = ("incast_star", "leaf_spine")
CCS = ("reno", "cubic", "bbr", "dctcp", "newdctcp")
AGENT_POLICIES = ("off", "observe", "newdctcp-rx", "ictcp", "rcc", "newdctcp-budget")
APP_MODES = ("per-server", "total")
# How the client reaches its servers: one connection each for the whole run, or a
# new one per round (connect, request, read the SRU, close; handshake and IW each round).
APP_CONNECTIONS = ("persistent", "per-round")
# The simulator's servers wait a uniform [0, jitter] before answering, as real
# servers' scheduling would (no paper states it; 10 µs = a tenth of the base RTT).
SERVER_JITTER_US = 10.0
RX_MIN_SEGS = 2  # receiver policies' window floor, MSS: 1 segment alone waits on a delayed ACK
# DCTCP's and NewDCTCP's senders: the smallest window an ECN cut leaves, segments.
# 2 is Linux's floor for every congestion control (and ns-3's); NewDCTCP's eq. (3)
# (seed 004 §4.2) allows 1 MSS, the other value an experiment may set.
SENDER_MIN_CWND_SEGS = 2
SENDER_MIN_CWND_CHOICES = (1, 2)
# newdctcp-budget: floor 1 MSS (N flows of 1 MSS fit a queue of N packets) and
# the receiver ACKs every segment, so a 1-MSS window never waits on a delayed ACK.
# The handshake offers 2 MSS (BUDGET_INIT_SEGS; a flow's W itself starts at B,
# capped at its share): a Linux sender never sends a segment larger than half
# the largest window it was offered (tcp_bound_to_half_wnd) — a handshake at
# 1 MSS left every segment of the connection at 768 bytes on the testbed,
# halving goodput per packet.
BUDGET_AGENT = "newdctcp-budget"
# Receiver policies whose window rule is the only cut (docs/algorithms.md §3.7):
# the agent clears ECE on every ACK it sends for their flows, so a stock sender
# never also halves on ECN. RCC's sender "uses rwnd instead of its congestion
# window" and its window "will not decrease" on marks [RCC §4]; NewDCTCP-rx's
# rule is NewDCTCP's one cut, taken at the receiver; ICTCP's senders are plain
# NewReno (§7.2), which no mark reaches. `Scheme.sender_ecn` keeps the echo.
RX_CUT_AGENTS = ("newdctcp-rx", "ictcp", "rcc", BUDGET_AGENT)
# Receiver policies that ACK every segment whatever transport.delayed_ack says:
# RCC's receiver "disables the delayed ACK mechanism" [RCC §4];
# newdctcp-budget's 1-MSS windows would each wait for the delayed-ACK timer.
NO_DELACK_AGENTS = ("rcc", BUDGET_AGENT)
BUDGET_MIN_SEGS = 1
BUDGET_INIT_SEGS = 2
# Seed 003's closed form is for an SRU sent in slow start from a window of one
# packet, each segment ACKed, over a new connection ("MLAs do not use
# persistent TCP connections") [Seed003 §III, §VI]. A batched scheme runs so
# on both engines, whatever the experiment's transport and app say
# (`Point.__post_init__`), as the paper describes the scheme.
BATCHING_INIT_SEGS = 1
# The largest window the hosts advertise, bytes (the route's `window`
# attribute; the testbed sets it): window scale ilog2(256 KiB) - 15 = 3, a
# granularity of 8 bytes, in which a receiver can advertise whole 1448-byte
# segments. At the scale Linux takes from its buffer limits (7 for 4 MiB) a
# 1-MSS window is 1536 bytes, and a window-limited sender with TCP_NODELAY
# sends the last 88 as a runt: two packets for one segment.
RECEIVER_WINDOW_CLAMP = 256 * 1024
# A testbed round counts as an RTO round when a server's TCPTimeouts grew or some
# flow waited this fraction of the min RTO for data (apps/incast.py --stall-s):
# Linux's tail-loss probe rescues a lone lost segment at min RTO + 2 SRTT, and a
# zero window waits for the persist timer (at least the min RTO); neither counts
# as a timeout, both cost as much. No queue here delays a packet
# half a min RTO (64 packets drain in 16 ms; the dilated min RTO is ~4 s).
STALL_RTO_FRACTION = 0.5
# The model's delayed-ACK timeout: a datacenter host's (Linux's 40 ms minimum is
# for WANs; the papers' simulators use ~1 ms, DCTCP's testbed hosts too).
SIM_DELACK_MS = 1.0
# The model's SYN retransmission timeout (ns-3's ConnTimeout; Linux: 1 s,
# TCP_TIMEOUT_INIT, doubling). No paper states it; 200 ms is Linux's minimum RTO,
# a datacenter host's usual floor. A lost SYN or SYN-ACK costs a flow this much,
# which decides drop-tail's FCT tail at scale (ablations/rcc-at-scale-syn-rto.yaml).
SIM_SYN_RTO_MS = 200.0
# The largest advertised window transport.adv_window_segs may set, segments: the
# model's receive buffer (sim/cpp/scenario.h rcvBufBytes, 256 KiB) in the
# smallest segment; a cap at or above it changes nothing.
ADV_WINDOW_MAX_SEGS = (256 * 1024) // MIN_MSS_BYTES
# RCC's receiver retransmission timeout RTO^r, its first value (seed 002 §6 sets
# RTO^s and RTO^r to 10 ms; Alg. 3 doubles it at each firing).
RCC_RTO_R_MS = 10.0
DCTCP_G = 1 / 16  # DCTCP's EWMA gain (Alizadeh et al. 2010; Linux dctcp_shift_g = 4)


@dataclass(frozen=True)
class Topology:
    kind: str = "incast_star"  # incast_star | leaf_spine
    spines: int = 1  # leaf_spine only: 1 or 2
    background: bool = False  # a long flow to the receiver during the rounds
    rto_min_ms: int = 10  # per-route minimum RTO, ms (datacenter time: bmv2 stretches it by dilate)
    queue_pkts: int = 64  # bmv2: egress queue toward the receiver, packets
    bottleneck_pps: int = 2000  # bmv2: its drain rate, packets/s
    host_mbps: float = 100.0  # bmv2: htb rate of host links, Mbit/s
    dilate: bool = True  # bmv2: stretch timers by the measured time dilation (model/dilation.py)
    link_gbps: float = 1.0  # sim: link rate, Gbit/s
    delay_us: float = 25.0  # sim: one-way delay per link, µs
    buffer_bytes: int = 65536  # sim: per-port buffer, bytes (QUEUED_FRAME_BYTES a full frame)
    shared_buffer_bytes: int = 0  # sim: > 0 = one buffer per switch shared by its ports
    dt_alpha: float = 1.0  # sim: dynamic-threshold alpha of the shared buffer

    @property
    def port_buffer_bytes(self) -> float:
        """What one congested port can hold: buffer_bytes, or with a shared buffer
        the dynamic threshold's fixed point when it is the only port queueing,
        Q = alpha * (B - Q), i.e. Q = alpha / (1 + alpha) * B (Choudhury & Hahne 1998)."""
        if self.shared_buffer_bytes:
            return self.dt_alpha / (1 + self.dt_alpha) * self.shared_buffer_bytes
        return float(self.buffer_bytes)

    @property
    def buffer_frames(self) -> int:
        """The simulator's queue in packets: the full frames one congested port holds."""
        return int(self.port_buffer_bytes // QUEUED_FRAME_BYTES)

    def bottleneck_bps(self, engine: str) -> float:
        """Rate of the receiver's port in bit/s of full frames (for the framing limit)."""
        if engine == "bmv2":
            return self.bottleneck_pps * WIRE_FRAME_BYTES * 8
        return self.link_gbps * 1e9


def base_rtt_s(topo: Topology, mss: int = MSS_BYTES) -> float:
    """Unloaded RTT of the simulator's model of `topo` (its link_gbps and delay_us):
    4 link delays, a full frame of an `mss`-byte segment twice, an ACK frame
    twice (leaf_spine: twice that)."""
    rate = topo.link_gbps * 1e9
    hops = 4 if topo.kind == "incast_star" else 8
    frames = (hops // 2) * 8 * (wire_frame_bytes(mss) + ACK_WIRE_BYTES) / rate
    return hops * topo.delay_us * 1e-6 + frames


@dataclass(frozen=True)
class App:
    sru_bytes: int = 65536  # per server per round (per-server) or per round (total)
    mode: str = "per-server"  # per-server | total
    rounds: int = 10  # barrier rounds per run
    jitter_us: float = SERVER_JITTER_US  # sim: server think time, uniform [0, jitter_us], µs
    connections: str = APP_CONNECTIONS[0]  # persistent | per-round (a new connection per round)

    def bytes_per_server(self, n: int) -> int:
        """What each of n servers sends in a round."""
        return self.sru_bytes if self.mode == "per-server" else max(1, self.sru_bytes // n)

    @property
    def per_round_connections(self) -> bool:
        """Whether the client opens a new connection to every server each round."""
        return self.connections == APP_CONNECTIONS[1]


@dataclass(frozen=True)
class Transport:
    """The hosts' TCP settings the papers vary (docs/algorithms.md §7)."""

    init_cwnd: int = 10  # senders' initial window, segments (Linux's IW10)
    delayed_ack: bool = True  # receiver ACKs every 2nd segment (delack_ms timer); false: every one
    delack_ms: float = SIM_DELACK_MS  # sim: delayed-ACK timeout (bmv2: Linux's 40 ms, fixed)
    syn_rto_ms: float = SIM_SYN_RTO_MS  # sim: SYN retransmission timeout (bmv2: Linux's 1 s)
    dctcp_g: float = DCTCP_G  # DCTCP's α gain g
    rx_min_segs: int = RX_MIN_SEGS  # window floor of the receiver policies, MSS
    rx_budget_pkts: float = 0.0  # newdctcp-budget's B, MSS; 0 = the bottleneck's queue
    # the agent's tick, µs: sim ICTCP/RCC step (0 = one base RTT) and the rotation's
    # rescue (0 = the agent's interval_ms); bmv2 the agent's --interval-ms (0 = its own)
    policy_tick_us: float = 0.0
    # receiver policies' "prolonged idle": no data for longer than this, ms, and the
    # flow's window restarts (ICTCP: slow start at 2 MSS); 0 = the agent's
    # idle_reset_s (1 s). An ablation: rounds over persistent connections are idle
    # a few RTTs between rounds, which only a threshold below that counts.
    rx_idle_ms: float = 0.0
    restart_each_round: bool = False  # sim: cwnd back to init_cwnd at each round's start
    # sim: the window floor of DCTCP's and NewDCTCP's ECN cut, segments (a loss
    # still halves to at least 2, RFC 5681 eq. 4)
    min_cwnd_segs: int = SENDER_MIN_CWND_SEGS
    ack_queue: bool = True  # rcc: the receiver's ACK queue (both engines; off: an ablation)
    # rcc: the receiver timer RTO^r (seed 002 Alg. 3), first value, ms (the testbed
    # stretches it as it does the min RTO); 0 = none (an ablation)
    rcc_rto_r_ms: float = RCC_RTO_R_MS
    # bmv2: Linux's tail-loss probe (net.ipv4.tcp_early_retrans). Off: the papers'
    # hosts predate it, the simulator has none, and its 2 ms floor cannot be
    # dilated (docs/testbed.md, "Time dilation").
    tail_loss_probe: bool = False
    # sim: the senders' segment size, bytes (ns-3 TcpSocket SegmentSize); the
    # frames, buffer and wire time follow it (model/wire.py). Seed 003's ns-2
    # packets carry 1000 bytes; bmv2 runs Linux's own (MSS_BYTES).
    mss_bytes: int = MSS_BYTES
    # sim: selective acknowledgements (ns-3 TcpSocketBase Sack). Off, the senders
    # recover as NewReno (RFC 6582: fast recovery at cwnd = ssthresh, a partial ACK
    # retransmits the next hole; ns-3's classic recovery), as ns-2's
    # Agent/TCP/Newreno and QualNet's NewReno; on: SACK loss recovery with
    # Linux's PRR (Reno, DCTCP) as Linux hosts run it.
    sack: bool = True
    # sim: the window every receiver advertises, segments (ns-2's Agent/TCP
    # window_, a fixed cap on the sender's window); 0 = the model's receive buffer
    # (256 KiB), which bounds only long flows.
    adv_window_segs: int = 0


def batch_schedule(n: int, topo: Topology, app: App, t: Transport) -> batching.Schedule:
    """The seed-003 schedule a batched scheme runs with for n servers (both the
    simulator's request offsets and the closed form g a report compares with):
    S_SRU of the transport's segments, S_f their IP packet, R the model's base
    RTT, the first window BATCHING_INIT_SEGS."""
    mss = t.mss_bytes
    return batching.plan(
        n,
        app.bytes_per_server(n),
        int(topo.port_buffer_bytes),
        topo.link_gbps * 1e9,
        base_rtt_s(topo, mss),
        mss=mss,
        frame_bytes=ip_packet_bytes(mss),
        init_segs=BATCHING_INIT_SEGS,
    )


@dataclass(frozen=True)
class Scheme:
    name: str
    ecn: str = EcnMode.OFF.value  # off | tail | front
    k: int = 0  # marking threshold, packets
    cc: str = "reno"  # sender congestion control
    agent: str = "off"  # receiver host-agent policy
    batching: bool = False  # seed-003 application-level batch scheduling
    # newdctcp-budget: windows below one segment by rotation (docs/algorithms.md §3.6)
    rotate: bool = False
    # under an RX_CUT_AGENTS policy: leave ECE on the receiver's ACKs, so the
    # sender cuts on ECN too (the ablation of §3.7; off: the receiver's rule alone)
    sender_ecn: bool = False
    # the receiver's budget held by its ToR (docs/algorithms.md §8): the
    # receiver's ACKs lowered to each flow's share of rx_budget_bytes on the
    # receiver's port, with no agent on the receiver (front+switch)
    switch_budget: bool = False

    @property
    def mode(self) -> EcnMode:
        return EcnMode(self.ecn)

    def describe(self) -> str:
        parts = [f"ECN {self.ecn}" + (f" K={self.k}" if self.ecn != "off" else ""), self.cc]
        if self.agent != "off":
            parts.append(f"agent {self.agent}")
        if self.rotate:
            parts.append("rotation")
        if self.sender_ecn:
            parts.append("sender ECN kept")
        if self.switch_budget:
            parts.append("receiver's budget in the switch")
        if self.batching:
            parts.append(
                f"batching (IW {BATCHING_INIT_SEGS}, ACK per segment, a connection per round)"
            )
        return ", ".join(parts)


def _one_of(where: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ModelError(f"{where}: {value!r} is not one of {', '.join(allowed)}")


def _at_least(where: str, value: float, low: float = 1) -> None:
    if not value >= low:
        raise ModelError(f"{where}: {value} must be >= {low}")


def check_k(k: int, queue_pkts: int, where: str) -> None:
    """K in packets against a queue of queue_pkts packets: 1 <= K < queue.

    A queue of Q packets never holds Q waiting behind an arriving packet (nor
    leaves Q behind a departing one), so K >= Q would never mark."""
    _at_least(f"{where}: k", k)
    if k >= queue_pkts:
        raise ModelError(
            f"{where}: k={k} packets is not below the queue ({queue_pkts} packets): "
            "nothing would ever be marked"
        )


def check_topology(topo: Topology) -> None:
    _one_of("topology.kind", topo.kind, TOPOLOGIES)
    if topo.spines not in (1, 2):
        raise ModelError(f"topology.spines: {topo.spines} must be 1 or 2")
    for key in ("rto_min_ms", "queue_pkts", "bottleneck_pps"):
        _at_least(f"topology.{key}", getattr(topo, key))
    for key in ("host_mbps", "link_gbps"):
        _at_least(f"topology.{key}", getattr(topo, key), 1e-3)
    if not (math.isfinite(topo.delay_us) and topo.delay_us >= 0):
        raise ModelError(f"topology.delay_us: {topo.delay_us} must be >= 0")
    if not 0 < topo.dt_alpha <= 64:
        raise ModelError(f"topology.dt_alpha: {topo.dt_alpha} must be in (0, 64]")
    if topo.shared_buffer_bytes and topo.port_buffer_bytes < QUEUED_FRAME_BYTES:
        raise ModelError(
            f"topology.shared_buffer_bytes: {topo.shared_buffer_bytes} leaves one port less "
            f"than one packet ({QUEUED_FRAME_BYTES} bytes) at dt_alpha={topo.dt_alpha}"
        )
    if topo.buffer_bytes < QUEUED_FRAME_BYTES:
        raise ModelError(
            f"topology.buffer_bytes: {topo.buffer_bytes} is smaller than one packet "
            f"({QUEUED_FRAME_BYTES} bytes)"
        )
    if topo.host_mbps * 1e6 < topo.bottleneck_bps("bmv2"):
        raise ModelError(
            f"topology.host_mbps: {topo.host_mbps} Mbit/s is below the bottleneck "
            f"({topo.bottleneck_pps} pkt/s = {topo.bottleneck_bps('bmv2') / 1e6:.1f} "
            "Mbit/s); the queue would build in the host, not the switch"
        )


def check_app(app: App) -> None:
    _one_of("app.mode", app.mode, APP_MODES)
    _one_of("app.connections", app.connections, APP_CONNECTIONS)
    _at_least("app.sru_bytes", app.sru_bytes)
    _at_least("app.rounds", app.rounds)
    _at_least("app.jitter_us", app.jitter_us, 0)


def pipe_frames(frames_per_s: float, rtt_s: float) -> int:
    """What a path holds in flight, in whole frames (rounded up, at least one): the
    bottleneck's rate in frames per second over the path's unloaded RTT."""
    if frames_per_s <= 0 or rtt_s <= 0:
        raise ModelError(f"pipe: need a rate and an RTT above 0, got {frames_per_s}, {rtt_s}")
    return max(1, math.ceil(frames_per_s * rtt_s))


def model_pipe_frames(topo: Topology, mss: int = MSS_BYTES) -> int:
    """The simulator's pipe of `topo` in full frames (`pipe_frames`): its link rate
    in wire frames of `mss`-byte segments over `base_rtt_s`."""
    return pipe_frames(topo.link_gbps * 1e9 / (8 * wire_frame_bytes(mss)), base_rtt_s(topo, mss))


def rx_budget_bytes(
    t: Transport, queue_pkts: float, k_pkts: int, pipe_pkts: int, delayed_ack: bool
) -> int:
    """The receiver's budget B in bytes (docs/algorithms.md §3.6, §8):
    transport.rx_budget_pkts MSS if set; else the full frames the bottleneck's
    queue holds, and, on a port that marks at K (k_pkts > 0) toward a receiver
    that ACKs every segment (not `delayed_ack`), at most K plus the pipe
    (`pipe_frames`). A round's first flight leaves every holder at once, with no
    ACK to pace it, and lands in the queue whole, so B never counts more than the
    queue; once ACKs pace the senders, a sum of windows B leaves B - pipe standing
    in the queue, so B above K + pipe only stands above the depth the switch
    marks at. A receiver that delays its ACKs keeps the queue: under the cap its
    shares reach one segment at a lower N, and a one-segment window waits out
    the delayed-ACK timer every round trip."""
    pkts = t.rx_budget_pkts
    if not pkts:
        capped = k_pkts > 0 and not delayed_ack
        pkts = min(queue_pkts, k_pkts + pipe_pkts) if capped else queue_pkts
    return max(1, int(pkts)) * t.mss_bytes


def rx_ack_cost_bytes(t: Transport, counts_packets: bool = False) -> int:
    """The rotation's ack_cost (docs/algorithms.md §3.6): what one pure ACK takes
    of the budget, whose unit is a full frame of the transport's MSS. On a port
    whose buffer counts bytes (the model's), MSS x ACK_FRAME_BYTES / that frame,
    rounded up (64 bytes at 1448); on a queue that counts packets (BMv2's,
    `counts_packets`), a whole slot: the MSS."""
    mss = t.mss_bytes
    if counts_packets:
        return mss
    return -(-mss * ACK_FRAME_BYTES // eth_frame_bytes(mss))


def check_transport(t: Transport) -> None:
    _at_least("transport.init_cwnd", t.init_cwnd)
    _at_least("transport.rx_min_segs", t.rx_min_segs)
    _at_least("transport.rx_budget_pkts", t.rx_budget_pkts, 0)
    _at_least("transport.delack_ms", t.delack_ms, 0.001)
    _at_least("transport.syn_rto_ms", t.syn_rto_ms, 0.001)
    if not 0 < t.dctcp_g <= 1:
        raise ModelError(f"transport.dctcp_g: {t.dctcp_g} must be in (0, 1]")
    _at_least("transport.policy_tick_us", t.policy_tick_us, 0)
    _at_least("transport.rx_idle_ms", t.rx_idle_ms, 0)
    if not MIN_MSS_BYTES <= t.mss_bytes <= MSS_BYTES:
        raise ModelError(
            f"transport.mss_bytes: {t.mss_bytes} must be in [{MIN_MSS_BYTES}, {MSS_BYTES}] "
            f"(TCP's default MSS up to a full segment of a 1500-byte IP MTU with timestamps)"
        )
    if not 0 <= t.adv_window_segs <= ADV_WINDOW_MAX_SEGS:
        raise ModelError(
            f"transport.adv_window_segs: {t.adv_window_segs} must be 0 (no cap) or "
            f"1..{ADV_WINDOW_MAX_SEGS} segments (the model's 256 KiB receive buffer)"
        )
    if t.min_cwnd_segs not in SENDER_MIN_CWND_CHOICES:
        raise ModelError(
            f"transport.min_cwnd_segs: {t.min_cwnd_segs} must be "
            f"{' or '.join(map(str, SENDER_MIN_CWND_CHOICES))} (segments)"
        )


def check_scheme(s: Scheme, topo: Topology, engine: str | None = None) -> None:
    """A scheme on a topology: vocabularies, and K against the queue of the engine
    that runs it (`engine`: bmv2 or sim; None, an engine not chosen yet: both)."""
    where = f"scheme {s.name}"
    vocab = (
        ("ecn", s.ecn, tuple(m.value for m in EcnMode)),
        ("cc", s.cc, CCS),
        ("agent", s.agent, AGENT_POLICIES),
    )
    wrong = [
        f"{where}: {key}: {v!r} is not one of {', '.join(ok)}"
        for key, v, ok in vocab
        if v not in ok
    ]
    if wrong:
        raise ModelError("; ".join(wrong))
    if s.rotate and s.agent != BUDGET_AGENT:
        raise ModelError(f"{where}: rotate needs agent {BUDGET_AGENT}")
    if s.sender_ecn and s.agent not in RX_CUT_AGENTS:
        raise ModelError(
            f"{where}: sender_ecn needs a receiver policy that owns the cut "
            f"({', '.join(RX_CUT_AGENTS)}); without one the sender's ECN is always on"
        )
    if s.switch_budget and s.agent != "off":
        raise ModelError(
            f"{where}: switch_budget holds the receiver's budget where no agent runs; "
            f"with agent {s.agent} the receiver sets its window itself"
        )
    if s.ecn == EcnMode.OFF:
        if s.k:
            raise ModelError(f"{where}: k={s.k} given but ecn is off")
        return
    if engine in (None, "bmv2"):
        check_k(s.k, topo.queue_pkts, f"{where} (bmv2: topology.queue_pkts)")
    if engine in (None, "sim"):
        frames = topo.buffer_frames
        check_k(
            s.k,
            frames,
            f"{where} (sim: {topo.port_buffer_bytes:.0f} B of buffer = {frames} full frames)",
        )


@dataclass(frozen=True)
class Point:
    """One run: a scheme at N senders, repeat r, on a topology with an app."""

    scheme: Scheme
    n: int
    repeat: int = 0
    topology: Topology = field(default_factory=Topology)
    app: App = field(default_factory=App)
    transport: Transport = field(default_factory=Transport)
    seed: int = 1  # the run's random seed; an experiment's repeat r runs with seed r + 1

    def __post_init__(self) -> None:
        # A Point is what an engine runs: a batched scheme's preconditions
        # (BATCHING_INIT_SEGS) replace the experiment's transport and app.
        if self.scheme.batching:
            t = replace(self.transport, init_cwnd=BATCHING_INIT_SEGS, delayed_ack=False)
            object.__setattr__(self, "transport", t)
            object.__setattr__(self, "app", replace(self.app, connections=APP_CONNECTIONS[1]))

    def problems(self, engine: str | None = None) -> list[str]:
        """Every problem with the point, one message each (empty: it can run);
        K is checked against `engine`'s queue (None: both engines')."""
        out: list[str] = []
        n = cast(object, self.n)  # whatever the caller passed, not only an int
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            out.append(f"n must be an integer >= 1, got {n!r}")
        checks = (
            lambda: check_topology(self.topology),
            lambda: check_app(self.app),
            lambda: check_transport(self.transport),
            lambda: check_scheme(self.scheme, self.topology, engine),
        )
        for check in checks:
            try:
                check()
            except ModelError as err:
                out.append(str(err))
        return out

    def check(self, engine: str | None = None) -> None:
        """Raise ModelError with the first problem."""
        problems = self.problems(engine)
        if problems:
            raise ModelError(problems[0])

    def label(self) -> str:
        return f"{self.scheme.name} N={self.n} #{self.repeat + 1}"

    @property
    def rx_min_segs(self) -> int:
        return rx_min_segs(self.scheme, self.transport)

    @property
    def receiver_delayed_ack(self) -> bool:
        return receiver_delayed_ack(self.scheme, self.transport)


def rx_min_segs(s: Scheme, t: Transport) -> int:
    """The receiver policy's window floor, MSS (1 under newdctcp-budget)."""
    return BUDGET_MIN_SEGS if s.agent == BUDGET_AGENT else t.rx_min_segs


def receiver_clears_ece(agent: str, sender_ecn: bool) -> bool:
    """Whether the receiver agent clears ECE on its ACKs: its policy owns the cut
    and the sender's own ECN reaction is not kept (Scheme.sender_ecn)."""
    return agent in RX_CUT_AGENTS and not sender_ecn


def receiver_delayed_ack(s: Scheme, t: Transport) -> bool:
    """Whether the receiver delays ACKs: transport.delayed_ack, never under
    NO_DELACK_AGENTS (newdctcp-budget: its 1-MSS windows would each wait for the
    timer; rcc: the paper's receiver "disables the delayed ACK mechanism")."""
    return t.delayed_ack and s.agent not in NO_DELACK_AGENTS


RUN_STATUSES = ("ok", "failed")


@dataclass
class RunResult:
    """What an engine returns for one Point (experiments/SCHEMA.md's run record).

    rounds: one dict per barrier round (round, completion_s, bytes, goodput_bps,
    fct_s, timeouts, retrans, rto); switch: {"bottleneck_port", "ports": {port:
    counters}}; extra: engine-specific keys (batch, depth_series, sim_s, agent,
    traceback) that readers may ignore.
    """

    scheme: str
    n: int
    repeat: int
    engine: str
    status: str = "failed"
    error: str | None = None
    wall_s: float = 0.0
    base_rtt_ms: float | None = None
    rounds: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    switch: dict[str, Any] = field(default_factory=dict[str, Any])
    extra: dict[str, Any] = field(default_factory=dict[str, Any])

    @classmethod
    def failed(cls, point: Point, engine: str, error: str, wall_s: float) -> RunResult:
        return cls(point.scheme.name, point.n, point.repeat, engine, "failed", error, wall_s)

    def record(self) -> dict[str, Any]:
        """The run as results.json stores it."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        out.update(self.extra)
        return out

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> RunResult:
        names = {f.name for f in fields(cls)} - {"extra"}
        return cls(
            **{k: v for k, v in rec.items() if k in names},
            extra={k: v for k, v in rec.items() if k not in names},
        )
