"""RCC: receiver-side window assignment, the receiver α, the ACK queue and the
receiver's retransmission timer.

Xu, Xu, Jiang, Ren, Wang, "Throughput optimization of TCP incast congestion
control in large-scale datacenter networks" (RCC: receiver cooperative
congestion control), Computer Networks, 2017 (seed 002). docs/algorithms.md
§3 ("RCC") has the rules and the table of where ours bends the paper.

Window assignment per NIC, in packets, with queue_maxsize Q (40 in the paper)
and priority shares w_i (equal, 1/N, when priorities are not used)
[seed 002 Alg. 1]:

    W_i = max(1, floor(w_i · Q))           capped at the flow's size only
                                           with priorities (Alg. 1 l.5)
    while use_flow_priority and Q − Σ W_i > 0:
        one more packet to each flow not near its size, lowest share first

Without priorities (the agent and the simulator pass none) no spare is handed
out: W_i = max(1, floor(Q / N)) and Σ W_i = N · W_i (30 packets for N = 30).

Remote congestion, once per RTT per flow, α_r = CE packets / packets
[seed 002 §4.6, Eq. 3]:

    rwnd <- rwnd · (1 − α_r / 2)          (at least 1 packet)

The ACK queue [seed 002 Alg. 2], `AckQueue` (the reference the simulator's
sim/cpp/rx_agent.h and the data path's agent/bpf/rxwin_ackq.h follow;
tests/agent/rcc_scenarios.py checks all three). Every ACK the receiver
sends goes through it:

- l.1–2: the flow's held ACK, if any, is taken out, and the new ACK goes in
  at the tail (no priorities: first in, first out);
- l.3–6: while the windows in flight add up to less than Q·MSS, the head is
  sent and its window counted; the test comes before each send, so the last
  ACK sent may take the total past Q·MSS;
- in flight of a flow [§4.2, footnote 4, our reading] = the right edge last
  sent to it (ack + window) − the highest byte received from it, 0 before
  any ACK of it was counted. Data arriving lowers it and sends nothing:
  the ACK that data makes the receiver send runs the loop.

Choices where the paper leaves one: an ACK of a flow no data has arrived
from (the handshake) is sent at once, counts nothing and is not queued; it
still runs the loop, like every ACK. Our FIN waits behind its flow's held
ACK (what we send after it waits behind the FIN); the flow ends, and counts
nothing, when the FIN leaves or the peer's FIN arrives. The cap is Q times
one MSS.

Deviations, ours (each with its ablation in docs/algorithms.md):

- Idle flows: a flow whose latest data segment is shorter than its MSS has
  emptied its send buffer and counts 0 in flight until its next data
  arrives. p4-incast's rounds run over persistent connections; a finished
  flow keeps the window its last ACK opened, and counted forever that unused
  window would block every other flow's ACKs (the paper's flows end with
  their data).
- Split ACKs: RCC's sender runs on rwnd alone, ours keep a congestion window
  (docs/algorithms.md §3.7). A sender held by its cwnd below its window has
  nothing in the network yet is counted for its whole window, while its
  ACK waits behind others: with every sender so stalled no data arrives,
  no ACK is made, and the queue never moves (the scenario
  cwnd_limited_senders_deadlock_without_the_split). So an ACK still held
  after the loop also leaves at once as (ack, released right edge − ack),
  when that is more than 0: it opens nothing new, so the count in flight
  is unchanged, and for an rwnd-only sender it changes nothing. An ACK
  that opens nothing new thus leaves whole, and nothing of it is held.

The receiver's retransmission timer [seed 002 §4.5, Alg. 3], `RxTimer` and
`Rcc.timeout`: a flow that counts something in flight and has no ACK held
times out after RTO^r (10 ms in §6) without a packet from it: ssthresh =
max(2, rwnd/2) packets (l.3), rwnd = 1 packet (l.4), RTO^r doubles (l.6)
and the caller sends the flow an ACK through the queue (l.7; PSH and the
skiptime bonus change nothing to a FIFO queue or a stock sender). RTO^r
returns to its first value when a packet of the flow arrives. After a
timeout the window regrows per RTT without CE: doubling below ssthresh,
one packet above (the receiver's NewReno of §4.3, as far as a window goes).

The host agent's data path (agent/bpf/rxwin_ackq.h, config.ackq_pkts) cannot
hold a packet: every ACK leaves at once, and one that has to wait leaves
split (window up to the right edge already released, zero if nothing), its
permission held and released later by a window update forged from an
outgoing ACK or sent by the agent's tick (tests/agent/test_rcc_ackq_bpf.py);
the tick also runs the receiver timer (agent/runner.py AckqRescuer).
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeVar

from p4incast.model.scheme import RCC_RTO_R_MS
from p4incast.model.wire import MSS_BYTES
from p4incast.policies.steps import StepTimes

__all__ = [
    "FIN",
    "RTO_R_S",
    "AckQueue",
    "Rcc",
    "RccParams",
    "RxTimer",
    "assign_windows",
    "equal_share",
    "remote_cut",
]

K = TypeVar("K", bound=Hashable)  # a caller's flow key (bytes, a 4-tuple, an int)

RTO_R_S = RCC_RTO_R_MS / 1000  # the receiver's first RTO^r, s


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
    """flows -> {flow: W in packets} [seed 002 Alg. 1].

    priorities: {flow: share} when flow priorities are in use (the paper's
    use_flow_priority): W_i from the shares, capped at the flow's size (l.5–6),
    then the spare Q − Σ W_i one packet at a time (l.11–19), walking the flows
    from the end of their order by priority, highest first (l.1, l.10, l.17):
    the lowest share first; ties in key order, so walked in reverse. A flow
    whose W is within one packet of its size takes none (l.12); one whose
    size is not given always may. None: equal shares, no cap and no spare
    (l.5 and l.11 test use_flow_priority). sizes: remaining packets, if
    known; read only with priorities."""
    keys = list(flows)
    if not keys:
        return {}
    if priorities is None:
        return dict.fromkeys(keys, equal_share(queue_maxsize, len(keys)))
    sizes = sizes or {}
    shares = {k: Fraction(priorities.get(k, 1.0) or 1.0) for k in keys}
    total = sum(shares.values())
    out: dict[K, int] = {}
    for k in keys:
        out[k] = max(1, int(shares[k] * queue_maxsize / total))
        if k in sizes:
            out[k] = max(1, min(out[k], sizes[k]))
    spare = queue_maxsize - sum(out.values())
    order = sorted(keys, key=lambda k: (-shares[k], str(k)))  # l.1: highest first
    while spare > 0:
        given = False
        for k in reversed(order):  # l.10, l.17: from the end
            if spare <= 0:
                break
            if k in sizes and abs(out[k] - sizes[k]) <= 1:
                continue  # l.12–13: near its size, no need
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


@dataclass(eq=False)
class _Held:
    flow: Hashable
    ack: int
    window: int
    after: list[tuple] = field(default_factory=list)  # our FIN, then what followed it

    @property
    def re(self) -> int:
        return (self.ack + self.window) % SEQ_MOD


class AckQueue:
    """RCC's ACK queue [seed 002 Alg. 2] with our deviations (module docstring).

    `ack` and `fin` return what leaves the receiver now, in order: (flow, ack,
    window) for an ACK, (flow, FIN) for our FIN. split=False drops our split
    ACKs (the paper's rule alone, for the deadlock scenario)."""

    def __init__(self, queue_maxsize: int = 40, mss: int = MSS_BYTES, split: bool = True) -> None:
        self.cap = queue_maxsize * mss  # bytes
        self.split = split
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

    def _entry(self, flow: Hashable) -> _Held | None:
        return next((h for h in self.queue if h.flow == flow), None)

    def _release(self) -> list[tuple]:
        """Alg. 2 l.3–6: while the total is below the cap, send the head and
        count its window (tested before each send)."""
        out: list[tuple] = []
        while self.queue and self.total < self.cap:
            h = self.queue.pop(0)
            f = self.flows.get(h.flow)
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
    ) -> None:
        """A data segment [seq_end − payload_len, seq_end) arrives from flow (the
        flow's count in flight goes down, §4.2; nothing is sent: the ACK it makes
        the receiver send runs the queue); fin: it carries the peer's FIN (the
        flow ends)."""
        if fin:
            self.flows.pop(flow, None)
            return
        if payload_len <= 0:
            return
        seq_end %= SEQ_MOD
        f = self.flows.get(flow)
        if f is None:
            f = self.flows[flow] = _AqFlow(mss, (seq_end - payload_len) % SEQ_MOD)
        if _after(seq_end, f.hi):
            f.hi = seq_end
        f.idle = payload_len < f.mss

    def ack(self, flow: Hashable, ack: int, window: int) -> list[tuple]:
        """We send an ACK with this ack number and window (bytes) to flow."""
        ack %= SEQ_MOD
        h = self._entry(flow)
        if h is not None and h.after:  # behind our FIN: keeps its order
            h.after.append((flow, ack, window))
            return self._release()
        f = self.flows.get(flow)
        if f is None and h is None:
            # no data seen from it (the handshake), or it has ended: sent, counts
            # nothing; the loop runs as for every ACK
            return [(flow, ack, window), *self._release()]
        if h is not None:
            self.queue.remove(h)  # Alg. 2 l.1
        new = _Held(flow, ack, window)
        self.queue.append(new)  # l.2: no priorities, the tail
        out = self._release()  # l.3–6
        if self.split and f is not None and any(e is new for e in self.queue):
            # ours: what of it opens nothing new leaves now
            if f.rel is not None and not _after(new.re, f.rel):
                self.queue.remove(new)  # all of it: nothing is left to hold
                out.append((flow, ack, window))
            elif f.rel is not None and _after(f.rel, ack):
                out.append((flow, ack, (f.rel - ack) % SEQ_MOD))
        return out

    def fin(self, flow: Hashable) -> list[tuple]:
        """We send a FIN to flow: it waits behind the flow's held ACK, if any."""
        h = self._entry(flow)
        if h is not None:
            h.after.append((flow, FIN))
            return []
        self.flows.pop(flow, None)
        return [(flow, FIN), *self._release()]


# -- the receiver's retransmission timer ---------------------------------------------------


@dataclass
class _Timer:
    pkts: int
    rto: float
    deadline: float | None = None  # None: not running (the flow does not wait)


@dataclass
class RxTimer:
    """RTO^r per flow [seed 002 §4.5, Alg. 3]. Runs while the flow waits for data
    (counts something in flight, no ACK of it held); a packet from the flow
    restarts it at its first value; when it fires RTO^r doubles (Alg. 3 l.6)."""

    rto_s: float = RTO_R_S
    timers: dict[Hashable, _Timer] = field(default_factory=dict)

    def step(self, now: float, flows: Mapping[K, tuple[int, bool]]) -> list[K]:
        """flows: {flow: (packets received, cumulative; waits for data)}. Returns
        the flows whose timer fired, in the order given."""
        for k in [k for k in self.timers if k not in flows]:
            del self.timers[k]
        return [k for k, (pkts, waits) in flows.items() if self.tick(k, pkts, waits, now)]

    def tick(self, k: Hashable, pkts: int, waits: bool, now: float) -> bool:
        """One flow's timer at a step: whether it fired. Unless its packets or
        its waiting changed since the previous step, it changes nothing before
        `now` reaches its deadline."""
        t = self.timers.get(k)
        if t is None:
            t = self.timers[k] = _Timer(pkts, self.rto_s)
        elif pkts != t.pkts:  # a packet: the timer starts again at its first value
            t.pkts, t.rto, t.deadline = pkts, self.rto_s, None
        if not waits:
            t.deadline = None
        elif t.deadline is None:
            t.deadline = now + t.rto  # runs from the step the flow starts waiting
        elif now >= t.deadline:
            t.rto *= 2
            t.deadline = now + t.rto
            return True
        return False


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
    default_rtt_s: float = 100e-6
    rto_r_s: float = RTO_R_S  # the receiver's first RTO^r; 0: no timer (ablation)


ONE = Fraction(1)
# step_changes visits a flow this long before its RTT clock may come due: far
# above the float error of a sum of times, far below a step.
WAKE_EARLY_S = 1e-9


@dataclass
class _State:
    cut: Fraction = ONE  # window / W_i: the cuts since, and what regrew
    ssthresh: int = 0  # packets; > 0 after a receiver timeout (slow start below it)
    last_t: float = 0.0
    pkts: int = 0
    ce: int = 0
    # window() of the last W_i asked (0: none since `cut` changed): a step asks it of
    # every flow, and a flow's cut changes at most once per RTT
    w_pk: int = 0
    w_cur: int = 0
    # step_changes: the step that last visited it, its RTT clock's period then,
    # and whether that clock is all a step without new data moves (`_idle`)
    seen: int = 0
    period: float = 0.0
    idle: bool = False

    def window(self, w_pk: int) -> int:
        """The window in packets, max(1, floor(W_i · cut)) (cut >= 0: int() floors)."""
        if w_pk != self.w_pk:
            self.w_pk = w_pk
            self.w_cur = max(1, w_pk * self.cut.numerator // self.cut.denominator)
        return self.w_cur

    def set_cut(self, cut: Fraction) -> None:
        self.cut, self.w_pk = cut, 0


def _share(packets: int, w_pk: int) -> Fraction:
    """min(1, packets / W_i) as a cut (W_i >= 1)."""
    return ONE if packets >= w_pk else Fraction(packets, w_pk)


@dataclass
class _Incremental:
    """What Rcc.step_changes keeps between calls."""

    steps: StepTimes = field(default_factory=StepTimes)
    # every reported flow's latest (packets, ce, rtt_s, waits)
    rows: dict[Hashable, tuple[int, int, float, bool]] = field(default_factory=dict)
    w_pk: int = 0  # W_i at the previous step
    # per flow, when it must next be visited though it does not change: its RTT
    # clock (a flow not idle), its receiver timer's deadline; the heap may hold
    # stale entries
    clock: dict[Hashable, float] = field(default_factory=dict)
    timer: dict[Hashable, float] = field(default_factory=dict)
    heap: list[tuple[float, int, Hashable]] = field(default_factory=list)
    seq: int = 0  # the heap's tie-break

    def wake(self, at: dict[Hashable, float], k: Hashable, t: float | None) -> None:
        """Flow k's entry in `at` (clock or timer) is t (None: none)."""
        if t is None:
            at.pop(k, None)
        elif at.get(k) != t:
            at[k] = t
            self.seq += 1
            heapq.heappush(self.heap, (t, self.seq, k))


@dataclass
class Rcc:
    p: RccParams = field(default_factory=RccParams)
    state: dict[Hashable, _State] = field(default_factory=dict)
    timer: RxTimer = field(default_factory=RxTimer)
    fired: list[Hashable] = field(default_factory=list)  # timed out at the last step
    _inc: _Incremental | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.timer.rto_s = self.p.rto_r_s

    def timeout(self, flow: Hashable, w_pk: int) -> None:
        """The flow's RTO^r fired [Alg. 3 l.3–4]: ssthresh = max(2, rwnd/2) packets,
        rwnd = 1 packet (its W_i is w_pk)."""
        st = self.state[flow]
        cur = st.window(w_pk)
        st.ssthresh = max(2, cur // 2)
        st.set_cut(Fraction(1, w_pk))

    def step(
        self,
        now: float,
        counters: Mapping[K, tuple[int, int, float]],
        shares: Mapping[K, float] | None = None,
        waits: Mapping[K, bool] | None = None,
    ) -> dict[K, int]:
        """counters: {flow: (packets, ce, rtt_s)} cumulative; waits: {flow: it counts
        something in flight and has no ACK held} for the receiver's timer (None:
        no timer this step). Returns {flow: W bytes}; `fired` lists the flows
        whose timer fired, to each of which the caller sends an ACK (Alg. 3 l.7)."""
        p = self.p
        for k in list(self.state):
            if k not in counters:
                del self.state[k]
        prio = None if shares is None else {k: shares.get(k, 1.0) for k in counters}
        base = assign_windows(counters, p.queue_maxsize, priorities=prio)
        self.fired = []
        if waits is not None and p.rto_r_s > 0:
            timed = {k: (c[0], waits.get(k, False)) for k, c in counters.items()}
            self.fired = list[Hashable](self.timer.step(now, timed))
        fired = set(self.fired)
        out: dict[K, int] = {}
        for k, (pkts, ce, rtt) in counters.items():
            st = self._flow(k, now, base[k], k in fired, pkts, ce, rtt)
            out[k] = st.window(base[k]) * p.mss
        return out

    def step_changes(
        self,
        now: float,
        changed: Mapping[K, tuple[int, int, float, bool]],
        gone: Iterable[K],
        timed: bool,
    ) -> dict[K, int]:
        """`step` without shares, told only what moved (the simulator's entry):
        `changed` {flow: (packets, ce, rtt_s, waits)} the flows new since the last
        call or whose values changed (any other flow may be added: a flow is
        never visited wrongly), `gone` those no longer reported; timed: `step`'s
        waits is not None. Returns the windows of the flows it visited; every
        other flow's window is the one last returned for it. `fired` is
        `step`'s, in ascending key order (the simulator's table is a std::map
        and `step` fires in its order): keys must be ordered.

        Exactly `step`'s windows, state and `fired`, at the cost of the flows
        that moved. Unvisited, a flow's counters and waiting are those of its
        last visit, so its timer does nothing before its deadline (RxTimer.tick)
        and its once-per-RTT update, when due, moves it only if it has packets
        not yet counted by an update or a cut below 1 (the regrowth: the window
        rises each RTT up to W_i). A flow with either is visited when its RTT
        clock may be due; one with neither ("idle") is a fixed point of the
        update but for the clock itself (last_t moves to the step's time), which
        is replayed when it is next visited (StepTimes.replay). W_i = floor(Q/N)
        is every flow's: when the number of flows changes it, every flow is
        visited. A policy is stepped by `step` or by `step_changes`, never both."""
        p = self.p
        inc = self._inc
        if inc is None:
            inc = self._inc = _Incremental()
        idx = inc.steps.add(now)
        heap = inc.heap
        if not changed and not gone and not (heap and heap[0][0] <= now):
            self.fired = []  # nothing moved, nothing due (most steps of a large incast)
            return {}
        rows = inc.rows
        for k in gone:
            rows.pop(k, None)
            self.state.pop(k, None)
            self.timer.timers.pop(k, None)
            inc.clock.pop(k, None)
            inc.timer.pop(k, None)
        for k, row in changed.items():
            rows[k] = row
        visit = set[Hashable](changed)
        w_pk = equal_share(p.queue_maxsize, len(rows))
        if w_pk != inc.w_pk:
            inc.w_pk = w_pk
            visit = set(rows)
        while heap and heap[0][0] <= now:
            t, _, k = heapq.heappop(heap)
            for at in (inc.clock, inc.timer):
                if at.get(k) == t:
                    del at[k]
                    visit.add(k)
        # `step`'s order (ordered keys: the docstring)
        order = sorted(visit)  # pyright: ignore[reportArgumentType]
        timed = timed and p.rto_r_s > 0
        self.fired = []
        if timed:
            self.fired = [k for k in order if self.timer.tick(k, rows[k][0], rows[k][3], now)]
        fired = set(self.fired)
        out: dict[K, int] = {}
        for k in order:
            pkts, ce, rtt, _ = rows[k]
            st = self.state.get(k)
            if st is not None and st.idle:  # its RTT clock since its last visit
                st.last_t = inc.steps.replay(st.last_t, st.seen + 1, idx, st.period)
            st = self._flow(k, now, w_pk, k in fired, pkts, ce, rtt)
            st.seen, st.period = idx, rtt or p.default_rtt_s
            cut = st.cut  # == ONE, without Fraction's slower __eq__
            st.idle = cut.numerator == cut.denominator and st.pkts == pkts and st.ce == ce
            due = None if st.idle else st.last_t + st.period - WAKE_EARLY_S
            inc.wake(inc.clock, k, due)
            if timed:
                inc.wake(inc.timer, k, self.timer.timers[k].deadline)
            out[k] = st.window(w_pk) * p.mss
        return out

    def _flow(
        self, k: Hashable, now: float, w_pk: int, fired: bool, pkts: int, ce: int, rtt: float
    ) -> _State:
        """One flow at a step: its timeout [Alg. 3 l.3–4], else its once-per-RTT
        update [Eq. 3 and the regrowth] when its RTT has passed since the last."""
        st = self.state.get(k)
        if st is None:
            st = self.state[k] = _State(last_t=now, pkts=pkts, ce=ce)
        if fired:
            self.timeout(k, w_pk)
            st.last_t, st.pkts, st.ce = now, pkts, ce
        elif now - st.last_t >= (rtt or self.p.default_rtt_s):
            dp, dc = pkts - st.pkts, ce - st.ce
            cur = st.window(w_pk)
            if dc > 0:
                st.set_cut(Fraction(remote_cut(cur, dc, dp), w_pk))
                st.ssthresh = 0
            elif cur < st.ssthresh:  # slow start after a timeout
                st.set_cut(_share(min(2 * cur, st.ssthresh), w_pk))
            else:
                st.set_cut(_share(cur + 1, w_pk))
            st.last_t, st.pkts, st.ce = now, pkts, ce
        return st
