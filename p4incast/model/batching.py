"""Application-level batch scheduling for the incast client (seed 003, pure).

Podlesny & Williamson, "Solving the TCP-incast problem with application-level
scheduling" (poster version at IEEE IWQoS 2011); docs/algorithms.md §4.

Instead of asking all N servers at once, the client asks them in batches of n
so that one batch never overflows the bottleneck buffer B.

A Server Request Unit of S_SRU packets sent in slow start from a window of one
packet has at most wnd_max packets in flight:

    m      = floor(log2(S_SRU + 1)) - 1
    wnd_A  = 2^m                          (last full slow-start window)
    wnd_B  = S_SRU - (2^(m+1) - 1)        (packets left after the full windows)
    wnd_max = wnd_A                       if wnd_B = 0
            = wnd_A + wnd_B - 1           if wnd_A >= wnd_B
            = 2 wnd_A - 1                 otherwise

Batch size and number of batches (S_f = frame size in bytes):

    n = floor(B / (S_f * wnd_max)),  k = ceil(N / n)

Round time of one batch (C = link rate, R = base RTT, S_ACK = ACK size), the
serialisation of the batch's data and ACKs (its n flows share the bottleneck)
plus one RTT and one full buffer of queueing per slow-start round:

    T = n * (S_f + S_ACK) * S_SRU / C + ceil(log2(S_SRU + 1)) * (R + B / C)

The paper's Eq. (16) prints the transmission term of one flow, without the n;
its own numbers need the n (docs/algorithms.md §4, "Which T"): with it the
closed form gives 203.4 -> 162.0 Mbit/s at N = 15 -> 16 (§V-A) and
119.2 -> 240.4 at N = 499 -> 500 (§V-B), which the paper prints as 203, 162,
119 and 241; the one-flow term gives 216, 169, 237 and 477.

The client staggers batches by T rounded up to its timer granularity Δt,
after adding the jitter d_max:

    T~ = ceil((T + d_max) / Δt) * Δt

Server i (1-based) is asked at T~ * ((i - 1) mod k), and with S bytes asked
for in a round the goodput is at most

    g = S / (T~ * (k - 1) + T + d_max).

Worked example (docs/algorithms.md §4): S_SRU = 21 -> wnd_A = 8, wnd_B = 6,
wnd_max = 13; B = 64 KiB, S_f = 1500 B -> n = 3; C = 1 Gbps, R = 100 µs,
S_ACK = 40 B -> T = 3897.6 µs; Δt = 1 ms, d_max = 20 µs -> T~ = 4 ms;
N = 32 -> k = 11.

Also here, because it answers the same question (how much buffer a
synchronised burst needs): the ICTCP bound of Wu, Feng, Guo & Zhang (IEEE/ACM
ToN 21(2), 2013), Q >= N * w * δ - R * C (docs/algorithms.md §5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import ModelError
from .wire import IP_MTU_BYTES, MSS_BYTES

D_MAX_S = 20e-6  # scheduling jitter d_max, seconds (paper: 20 µs)
DT_S = 1e-3  # client timer granularity Δt, seconds (paper: 1 ms)
# S_f, bytes: the IP packet of a full default segment (MSS); a point that runs
# another segment size passes its own (model.scheme.batch_schedule). The
# paper's ns-2 packets carry 1000 B, 1040 B with headers: its n = 5 and
# wnd_max = 6 at B = 32 KB, §V-A.
FRAME_BYTES = IP_MTU_BYTES
ACK_BYTES = 40  # S_ACK, bytes: an IP packet with no payload
MSS = MSS_BYTES

# Ceil of a ratio that is an integer up to float rounding (2.98e-3 / 1e-3 and
# the like) must not jump to the next integer.
_EPS = 1e-9


def _positive(name: str, value: object) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ModelError(f"batching: {name} must be a positive number, got {value!r}")


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ModelError(f"batching: {name} must be an integer >= 1, got {value!r}")


def _non_negative(name: str, value: object) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
        raise ModelError(f"batching: {name} must be a number >= 0, got {value!r}")


def _ceil(x: float) -> int:
    return math.ceil(x - _EPS * max(1.0, abs(x)))


def sru_packets(sru_bytes: int, mss: int = MSS) -> int:
    """S_SRU: packets needed to carry one SRU of `sru_bytes` with `mss` bytes each."""
    _positive_int("sru_bytes", sru_bytes)
    _positive_int("mss", mss)
    return -(-sru_bytes // mss)


def slow_start_windows(s_sru_pkts: int, init_segs: int = 1) -> tuple[int, int]:
    """(wnd_A, wnd_B) for an SRU of `s_sru_pkts` packets sent in slow start from
    a window of `init_segs` packets (the paper: 1).

    The windows are w0, 2·w0, 4·w0, ...; wnd_A is the last complete one and
    wnd_B what is left after it. With w0 = 1 this is the paper's
    m = floor(log2(S_SRU + 1)) - 1, wnd_A = 2^m, wnd_B = S_SRU - (2^(m+1) - 1).
    An SRU no larger than w0 goes in its first window: (S_SRU, 0).
    """
    _positive_int("s_sru_pkts", s_sru_pkts)
    _positive_int("init_segs", init_segs)
    if s_sru_pkts <= init_segs:
        return s_sru_pkts, 0
    m = 0  # the largest m with w0·(2^(m+1) - 1) <= S_SRU, exact on integers
    while init_segs * ((1 << (m + 2)) - 1) <= s_sru_pkts:
        m += 1
    wnd_a = init_segs << m
    wnd_b = s_sru_pkts - init_segs * ((1 << (m + 1)) - 1)
    return wnd_a, wnd_b


def wnd_max(s_sru_pkts: int, init_segs: int = 1) -> int:
    """Largest number of packets of one SRU in flight at once (slow start from
    `init_segs` packets; the paper's case rule on wnd_A and wnd_B)."""
    wnd_a, wnd_b = slow_start_windows(s_sru_pkts, init_segs)
    if wnd_b == 0:
        return wnd_a
    if wnd_a >= wnd_b:
        return wnd_a + wnd_b - 1
    return 2 * wnd_a - 1


def slow_start_rounds(s_sru_pkts: int, init_segs: int = 1) -> int:
    """Round trips to send an SRU in slow start from `init_segs` packets: the
    smallest r with w0·(2^r - 1) >= S_SRU; ceil(log2(S_SRU + 1)) for w0 = 1."""
    _positive_int("s_sru_pkts", s_sru_pkts)
    _positive_int("init_segs", init_segs)
    r = 1
    while init_segs * ((1 << r) - 1) < s_sru_pkts:
        r += 1
    return r


def batch_size(buffer_bytes: int, frame_bytes: int, s_sru_pkts: int, init_segs: int = 1) -> int:
    """n = floor(B / (S_f * wnd_max)), at least 1.

    When even one flow's peak window does not fit the buffer (B < S_f * wnd_max)
    the formula gives 0; we return 1 — servers are then asked one at a time,
    which is the best batching can do, but that single flow may still overflow
    the buffer (see `Schedule.overflows`).
    """
    _positive("buffer_bytes", buffer_bytes)
    _positive_int("frame_bytes", frame_bytes)
    return max(1, int(buffer_bytes // (frame_bytes * wnd_max(s_sru_pkts, init_segs))))


def batches(n_servers: int, n: int) -> int:
    """k = ceil(N / n): how many batches N servers are split into."""
    _positive_int("n_servers", n_servers)
    _positive_int("n", n)
    return -(-n_servers // n)


def round_time_T(
    frame_bytes: int,
    ack_bytes: int,
    s_sru_pkts: int,
    link_bps: float,
    rtt_s: float,
    buffer_bytes: int,
    init_segs: int = 1,
    *,
    n: int,
) -> float:
    """T in seconds for a batch of `n` flows:
    n * (S_f + S_ACK) * S_SRU / C + ceil(log2(S_SRU + 1)) * (R + B / C),
    the slow-start rounds counted from a first window of `init_segs` packets."""
    _positive_int("n", n)
    _positive_int("frame_bytes", frame_bytes)
    _non_negative("ack_bytes", ack_bytes)
    _positive_int("s_sru_pkts", s_sru_pkts)
    _positive("link_bps", link_bps)
    _non_negative("rtt_s", rtt_s)
    _positive("buffer_bytes", buffer_bytes)
    ss_rounds = slow_start_rounds(s_sru_pkts, init_segs)
    serialise = 8 * n * (frame_bytes + ack_bytes) * s_sru_pkts / link_bps
    return serialise + ss_rounds * (rtt_s + 8 * buffer_bytes / link_bps)


def stagger(T: float, d_max_s: float = D_MAX_S, dt_s: float = DT_S) -> float:
    """T~ in seconds: ceil((T + d_max) / Δt) * Δt.

    `dt_s = 0` means a timer with no useful granularity: T~ = T + d_max.
    """
    _non_negative("T", T)
    _non_negative("d_max_s", d_max_s)
    _non_negative("dt_s", dt_s)
    if dt_s == 0:
        return T + d_max_s
    return _ceil((T + d_max_s) / dt_s) * dt_s


def start_offsets(n_servers: int, k: int, t_tilde: float) -> list[float]:
    """Request time of each server in seconds: server i (1-based) at T~ * ((i - 1) mod k)."""
    _positive_int("n_servers", n_servers)
    _positive_int("k", k)
    _non_negative("t_tilde", t_tilde)
    return [t_tilde * (i % k) for i in range(n_servers)]


def goodput_bound(
    total_bytes: float, k: int, T: float, t_tilde: float, d_max_s: float = D_MAX_S
) -> float:
    """Upper bound on round goodput in bit/s: 8 S / (T~ * (k - 1) + T + d_max).

    `total_bytes` is S, the application bytes asked for in one round (N * SRU).
    """
    _non_negative("total_bytes", total_bytes)
    _positive_int("k", k)
    _non_negative("T", T)
    _non_negative("t_tilde", t_tilde)
    _non_negative("d_max_s", d_max_s)
    span = t_tilde * (k - 1) + T + d_max_s
    if span <= 0:
        raise ModelError("batching: T + d_max must be > 0 for a goodput bound")
    return 8 * total_bytes / span


@dataclass(frozen=True)
class Schedule:
    """One seed-003 schedule for an incast round (all times in seconds)."""

    n_servers: int
    sru_bytes: int
    init_segs: int  # the senders' first window, packets (the paper: 1)
    s_sru_pkts: int  # S_SRU
    wnd_max: int  # peak packets in flight per flow
    n: int  # servers per batch
    k: int  # batches
    T: float  # round time of one batch
    t_tilde: float  # stagger between batches, T~
    offsets: tuple[float, ...]  # request time of server i (0-based index)
    goodput_bound_bps: float  # g, with S = N * sru_bytes
    overflows: bool  # True when even one flow's wnd_max exceeds the buffer

    @property
    def batched(self) -> bool:
        """False when every server fits in one batch (all asked at once)."""
        return self.k > 1

    @property
    def stagger_us(self) -> float:
        """T~ in microseconds, as `apps/incast.py --stagger-us` takes it."""
        return self.t_tilde * 1e6


def plan(
    n_servers: int,
    sru_bytes: int,
    buffer_bytes: int,
    link_bps: float,
    rtt_s: float,
    *,
    mss: int = MSS,
    frame_bytes: int = FRAME_BYTES,
    ack_bytes: int = ACK_BYTES,
    d_max_s: float = D_MAX_S,
    dt_s: float = DT_S,
    init_segs: int = 1,
) -> Schedule:
    """The seed-003 schedule for N servers each sending `sru_bytes` (Podlesny & Williamson).

    S_SRU = ceil(sru_bytes / mss). `frame_bytes` is S_f, the IP packet (pass
    1538 to count Ethernet framing on the wire, which is more cautious). T
    counts the formula's n flows even when fewer than n servers are asked
    (k = 1), as the paper's numbers do (at N = 16 its batches hold 4 flows,
    and its 162 Mbit/s is the value for n = 5).
    `init_segs` is the initial window the senders actually use (the paper's
    formulas assume 1; a larger one raises wnd_max and shortens slow start).
    """
    _positive_int("n_servers", n_servers)
    s_sru = sru_packets(sru_bytes, mss)
    w = wnd_max(s_sru, init_segs)
    n = batch_size(buffer_bytes, frame_bytes, s_sru, init_segs)
    k = batches(n_servers, n)
    t = round_time_T(frame_bytes, ack_bytes, s_sru, link_bps, rtt_s, buffer_bytes, init_segs, n=n)
    t_tilde = stagger(t, d_max_s, dt_s)
    return Schedule(
        n_servers=n_servers,
        sru_bytes=sru_bytes,
        init_segs=init_segs,
        s_sru_pkts=s_sru,
        wnd_max=w,
        n=n,
        k=k,
        T=t,
        t_tilde=t_tilde,
        offsets=tuple(start_offsets(n_servers, k, t_tilde)),
        goodput_bound_bps=goodput_bound(n_servers * sru_bytes, k, t, t_tilde, d_max_s),
        overflows=frame_bytes * w > buffer_bytes,
    )


def ictcp_buffer_bytes(
    n_flows: int, window_pkts: float, rtt_s: float, link_bps: float, delta_bytes: int = IP_MTU_BYTES
) -> float:
    """Buffer that N synchronised flows of window w never overflow: N w δ - R C, floor 0.

    Wu, Feng, Guo & Zhang, ICTCP (IEEE/ACM ToN 21(2), 2013); docs/algorithms.md §5.
    1 Gbps, R = 100 µs, w = 2, δ = 1500 B, N = 47 -> 128 500 B.
    """
    _positive_int("n_flows", n_flows)
    _non_negative("window_pkts", window_pkts)
    _non_negative("rtt_s", rtt_s)
    _positive("link_bps", link_bps)
    _positive_int("delta_bytes", delta_bytes)
    return max(0.0, n_flows * window_pkts * delta_bytes - rtt_s * link_bps / 8)
