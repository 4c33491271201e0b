"""RCC: receiver-side window assignment, the receiver α, and the ACK queue.

Xu, Xu, Jiang, Ren, Wang, "Throughput optimization of TCP incast congestion
control in large-scale datacenter networks" (RCC: receiver cooperative
congestion control), Computer Networks, 2017. docs/algorithms.md §3 ("RCC").

Window assignment per NIC, in packets, with queue_maxsize Q (40 in the paper)
and priority shares w_i (equal, 1/N, when priorities are not used)
[RCC Algorithm 1]:

    W_i = max(1, floor(w_i · Q))           capped at the flow's size if known
    while use_flow_priority and Q − Σ W_i > 0:
        one more packet to each uncapped flow, largest share first

Without priorities (the agent and the simulator pass none) no spare is handed
out: W_i = max(1, floor(Q / N)) and Σ W_i = N · W_i (30 packets for N = 30).

Remote congestion, once per RTT per flow, α_r = CE packets / packets
[RCC §4]:

    rwnd <- rwnd · (1 − α_r / 2)          (at least 1 packet)

The ACK queue [RCC Algorithm 1], `AckQueue` here (the reference the
simulator's sim/cpp/rx_agent.h follows; tests/agent/rcc_scenarios.py checks
both): the receiver holds ACKs while the windows in flight would exceed Q,
keeps one ACK per flow, the flow's latest (a newer cumulative ACK replaces
the held one, which keeps its place), and pops them first in, first out:

- in flight of a flow = the right edge last released to it (ack + window)
  − the highest byte received from it (0 before any release);
- the head leaves only if the total in flight after it is <= Q·MSS; a head
  that does not fit blocks everything behind it; the queue is tried whenever
  data arrives (in flight went down) and whenever an ACK is queued; no timer;
- an ACK passes at once if the queue is empty and it fits, or if it opens
  nothing new (right edge not beyond the flow's last released one; the
  flow's held ACK, if any, is then superseded and leaves the queue);
- our FIN waits behind its flow's held ACK (and anything we send on that flow
  after the FIN waits behind the FIN); the flow ends when the FIN leaves, or
  when the peer's FIN arrives, and then counts nothing.

Deviations, ours:

- Idle flows: a flow whose latest data segment is shorter than its MSS has
  emptied its send buffer and counts 0 in flight until its next data
  arrives. p4-incast's rounds run over persistent connections; a finished
  flow keeps the window its last ACK opened, and counted forever that unused
  window would block every other flow's ACKs (the paper's flows end with
  their data).
- Split ACKs: RCC's sender runs on rwnd alone, ours keep a congestion window
  (docs/algorithms.md §3.7). A sender held by its cwnd below its window has
  nothing in the network yet counts its whole window, while its own ACK waits
  behind a head that cannot fit: a deadlock. So an ACK that has to wait also
  leaves at once as (ack, released right edge − ack), which opens nothing
  new, when that window is more than 0; the full ACK waits.
- Handshake: an ACK of a flow no data has arrived from passes, counting
  nothing (as the SYN-ACK that opens the paper's flows).

The host agent's data path (agent/bpf/rxwin_ackq.h, config.ackq_pkts) builds
the queue from `AckQueue`; a tc program cannot hold a packet, so every ACK
leaves at once and one that has to wait goes out split (window up to the
right edge already released, zero if nothing), its permission held and
released later by a window update forged from an outgoing ACK or sent by
the agent's tick (tests/agent/test_rcc_ackq_bpf.py replays the scenarios).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeVar

from p4incast.model.wire import MSS_BYTES

__all__ = ["FIN", "AckQueue", "Rcc", "RccParams", "assign_windows", "equal_share", "remote_cut"]

K = TypeVar("K", bound=Hashable)  # a caller's flow key (bytes, a 4-tuple, an int)


def equal_share(queue_maxsize: int, flows: int) -> int:
    """W_i with equal shares and no priorities, packets: max(1, floor(Q / N)).
    A new flow's window before the policy's first step is this, at least
    2 segments (the data path and the simulator give it at the handshake:
    RCC assigns at arrival; docs/algorithms.md "RCC" says why 2)."""
    return max(1, queue_maxsize // max(flows, 1))


def assign_windows(
    flows: Iterable[K],
    queue_maxsize: int = 40,
    sizes: Mapping[K, int] | None = None,
    priorities: Mapping[K, float] | None = None,
) -> dict[K, int]:
    """flows -> {flow: W in packets} [RCC Algorithm 1].

    priorities: {flow: share} when flow priorities are in use (the paper's
    use_flow_priority): W_i from the shares, then the spare Q − Σ W_i one packet
    at a time, largest share first (then key order), skipping capped flows.
    None: equal shares and no spare. sizes: remaining packets, if known (cap)."""
    keys = list(flows)
    if not keys:
        return {}
    sizes = sizes or {}
    out: dict[K, int] = {}
    if priorities is None:
        for k in keys:
            out[k] = equal_share(queue_maxsize, len(keys))
    else:
        shares = {k: Fraction(priorities.get(k, 1.0) or 1.0) for k in keys}
        total = sum(shares.values())
        for k in keys:
            out[k] = max(1, int(shares[k] * queue_maxsize / total))
    for k in keys:
        if k in sizes:
            out[k] = max(1, min(out[k], sizes[k]))
    if priorities is None:
        return out
    spare = queue_maxsize - sum(out.values())
    order = sorted(keys, key=lambda k: (-shares[k], str(k)))
    while spare > 0:
        given = False
        for k in order:
            if spare <= 0:
                break
            if k in sizes and out[k] >= sizes[k]:
                continue
            out[k] += 1
            spare -= 1
            given = True
        if not given:
            break
    return out


# -- the ACK queue ------------------------------------------------------------------------

SEQ_MOD = 1 << 32
FIN = "FIN"  # a FIN in AckQueue's output: (flow, FIN)


def _after(a: int, b: int) -> bool:
    """a is beyond b in sequence space (mod 2^32)."""
    return 0 < (a - b) % SEQ_MOD < SEQ_MOD // 2


@dataclass
class _AqFlow:
    mss: int
    hi: int  # highest byte received (end of the furthest data)
    rel: int | None = None  # right edge last released to the flow
    idle: bool = False  # latest segment shorter than MSS: counts 0 (our deviation)


@dataclass
class _Held:
    flow: Hashable
    ack: int
    window: int
    after: list[tuple] = field(default_factory=list)  # our FIN, then what followed it

    @property
    def re(self) -> int:
        return (self.ack + self.window) % SEQ_MOD


class AckQueue:
    """RCC's ACK queue [RCC Algorithm 1] with our deviations (module docstring).

    Every method returns what leaves the receiver now, in order: (flow, ack,
    window) for an ACK, (flow, FIN) for our FIN."""

    def __init__(self, queue_maxsize: int = 40, mss: int = MSS_BYTES) -> None:
        self.cap = queue_maxsize * mss  # bytes
        self.flows: dict[Hashable, _AqFlow] = {}
        self.queue: list[_Held] = []

    # -- state
    @property
    def held(self) -> list[Hashable]:
        """Flows with an ACK held, head first."""
        return [h.flow for h in self.queue]

    def in_flight(self, flow: Hashable) -> int:
        f = self.flows.get(flow)
        if f is None or f.rel is None or f.idle or not _after(f.rel, f.hi):
            return 0
        return (f.rel - f.hi) % SEQ_MOD

    @property
    def total(self) -> int:
        return sum(self.in_flight(k) for k in self.flows)

    def _total_after(self, flow: Hashable, re: int) -> int:
        f = self.flows[flow]
        rel = f.rel
        if rel is None or _after(re, rel):
            f.rel = re
        t = self.total
        f.rel = rel
        return t

    def _entry(self, flow: Hashable) -> _Held | None:
        return next((h for h in self.queue if h.flow == flow), None)

    def _release(self) -> list[tuple]:
        """Pop from the head while the head fits."""
        out: list[tuple] = []
        while self.queue:
            h = self.queue[0]
            f = self.flows.get(h.flow)
            if f is not None and self._total_after(h.flow, h.re) > self.cap:
                break
            self.queue.pop(0)
            if f is not None and (f.rel is None or _after(h.re, f.rel)):
                f.rel = h.re
            out.append((h.flow, h.ack, h.window))
            for o in h.after:
                out.append(o)
                if o[1] == FIN:
                    self.flows.pop(h.flow, None)  # the flow ends when its FIN leaves
        return out

    # -- events
    def data(
        self,
        flow: Hashable,
        seq_end: int,
        payload_len: int,
        mss: int = MSS_BYTES,
        fin: bool = False,
    ) -> list[tuple]:
        """A data segment [seq_end − payload_len, seq_end) arrives from flow; fin:
        it carries the peer's FIN (the flow ends)."""
        if fin:
            self.flows.pop(flow, None)
        elif payload_len > 0:
            seq_end %= SEQ_MOD
            f = self.flows.get(flow)
            if f is None:
                f = self.flows[flow] = _AqFlow(mss, (seq_end - payload_len) % SEQ_MOD)
            if _after(seq_end, f.hi):
                f.hi = seq_end
            f.idle = payload_len < f.mss
        else:
            return []
        return self._release()

    def ack(self, flow: Hashable, ack: int, window: int) -> list[tuple]:
        """We send an ACK with this ack number and window (bytes) to flow."""
        ack %= SEQ_MOD
        h = self._entry(flow)
        if h is not None and h.after:  # behind our FIN: keeps its order
            h.after.append((flow, ack, window))
            return self._release()
        f = self.flows.get(flow)
        if f is None:
            if h is not None:  # the flow has ended: the latest ACK still waits its turn
                h.ack, h.window = ack, window
                return self._release()
            return [(flow, ack, window)]  # no data seen from it: the handshake
        re = (ack + window) % SEQ_MOD
        if f.rel is not None and not _after(re, f.rel):
            # opens nothing new: leaves now, and supersedes the flow's held ACK
            if h is not None:
                self.queue.remove(h)
            return [(flow, ack, window), *self._release()]
        if h is None and not self.queue and self._total_after(flow, re) <= self.cap:
            f.rel = re
            return [(flow, ack, window)]
        if h is not None:  # the flow's latest cumulative ACK replaces the held one, in place
            h.ack, h.window = ack, window
        else:
            self.queue.append(_Held(flow, ack, window))
        # it waits; what of it opens nothing new leaves now (our rule: senders
        # with a congestion window): the ACK with the window up to the
        # right edge already released, if that is more than nothing
        now = []
        if f.rel is not None and _after(f.rel, ack):
            now = [(flow, ack, (f.rel - ack) % SEQ_MOD)]
        return now + self._release()

    def fin(self, flow: Hashable) -> list[tuple]:
        """We send a FIN to flow: it waits behind the flow's held ACK, if any."""
        h = self._entry(flow)
        if h is not None:
            h.after.append((flow, FIN))
            return []
        self.flows.pop(flow, None)
        return [(flow, FIN), *self._release()]


def remote_cut(rwnd: int, ce: int, pkts: int, floor: int = 1) -> int:
    """rwnd·(1 − α_r/2) with α_r = ce/pkts over the last RTT."""
    if pkts <= 0 or ce <= 0:
        return rwnd
    alpha = min(1.0, ce / pkts)
    return max(floor, int(rwnd * (1 - alpha / 2)))


@dataclass(frozen=True)
class RccParams:
    mss: int = MSS_BYTES  # bytes
    queue_maxsize: int = 40  # packets
    rtt_limit_s: float = 2e-3
    default_rtt_s: float = 100e-6


@dataclass
class _State:
    cut: float = 1.0  # product of the remote-congestion cuts, recovers +1 packet/RTT
    last_t: float = 0.0
    pkts: int = 0
    ce: int = 0


@dataclass
class Rcc:
    p: RccParams = field(default_factory=RccParams)
    state: dict[Hashable, _State] = field(default_factory=dict)
    min_rtt: dict[Hashable, float] = field(default_factory=dict)  # per flow, as ICTCP

    def step(
        self,
        now: float,
        counters: Mapping[K, tuple[int, int, float]],
        shares: Mapping[K, float] | None = None,
    ) -> dict[K, int]:
        """counters: {flow: (packets, ce, rtt_s)} cumulative; returns {flow: W bytes}."""
        p = self.p
        for k, (_pkts, _ce, rtt) in counters.items():
            if rtt > 0:
                self.min_rtt[k] = min(self.min_rtt.get(k, rtt), rtt)
        self.min_rtt = {k: v for k, v in self.min_rtt.items() if k in counters}
        # a datacenter flow stays controlled when incast queueing raises its RTT
        live = {k: v for k, v in counters.items() if self.min_rtt.get(k, 0.0) <= p.rtt_limit_s}
        for k in list(self.state):
            if k not in live:
                del self.state[k]
        prio = None if shares is None else {k: shares.get(k, 1.0) for k in live}
        base = assign_windows(live, p.queue_maxsize, priorities=prio)
        out: dict[K, int] = {}
        for k, (pkts, ce, rtt) in live.items():
            st = self.state.get(k)
            if st is None:
                st = self.state[k] = _State(last_t=now, pkts=pkts, ce=ce)
            w_pk = base[k]
            if now - st.last_t >= (rtt or p.default_rtt_s):
                dp, dc = pkts - st.pkts, ce - st.ce
                cur = max(1, int(w_pk * st.cut))
                if dc > 0:
                    st.cut = remote_cut(cur, dc, dp) / w_pk
                else:
                    st.cut = min(1.0, (cur + 1) / w_pk)
                st.last_t, st.pkts, st.ce = now, pkts, ce
            out[k] = max(1, int(w_pk * st.cut)) * p.mss
        return out
