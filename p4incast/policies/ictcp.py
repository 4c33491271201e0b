"""ICTCP: incast congestion control at the receiver, through the advertised window.

Wu, Feng, Guo, Zhang, "ICTCP: Incast Congestion Control for TCP in Data-Center
Networks", IEEE/ACM ToN 21(2), 2013 (CoNEXT 2010), §IV; the places below are
that paper's (seed 000). docs/algorithms.md ("ICTCP") has the table of where
this code bends the paper and the ablation that measures each bend.

§IV-A, global: C the interface capacity, BW_T the interface's incoming rate
over a first subslot, BW_A = max(0, alpha·C − BW_T), alpha = 0.9. Slots of two
subslots of length T. A first subslot measures BW_A; in the second, window
increases pay from it, the flow whose control time came first paying first,
and all of a second subslot's increases together stay less than BW_A.

§IV-B, T = the mean RTT of the connections weighted by their traffic volume
over the last T (computed as a subslot ends, over every connection the caller
reports, controlled or not).

§IV-B/C, per flow, once per RTT in which it received data, b_s = bytes
received over the sample / its length:

    b_m <- max(b_s, 0.75·b_m + 0.25·b_s)     b_e = max(b_m, rwnd / RTT)
    d    = (b_e − b_m) / b_e

    d > gamma2 (0.5) on 3 RTTs in a row: rwnd − 1 MSS, in either subslot
    at a control time (more than 2·RTT since the flow's last window change):
      d <= gamma1 (0.1) or d <= MSS/rwnd: in a second subslot, if the quota
          pays: rwnd doubles in slow start, else + 1 MSS; slow start ends,
          with no increase, when the quota cannot pay for the doubling
      otherwise: hold, slow start ends (as it does on a decrease)

A new flow, and one that received no data for longer than `idle_s`, starts
in slow start at 2 MSS (§IV-C). Floor min_segs MSS (2; Fig. 10 runs 1).
§IV-D: when BW_A < 0.2·C, once per slot as BW_A is computed, every flow above
the mean rwnd loses 1 MSS; a flow whose RTT is larger than 2 ms is left alone.

The comparisons are the paper's words, each in one helper: "larger than"
(`larger`), "less than" (`less`), with a relative slack so that a value equal
to its bound on paper is equal here too, whatever the float rounding.

Pure logic: the agent feeds it per-flow byte counters and RTTs read from the
data path, and writes the returned windows into the data path's wset map.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Generic, NamedTuple, TypeVar

from p4incast.model.wire import MSS_BYTES
from p4incast.policies.rxwin_h import RXWIN
from p4incast.policies.steps import StepTimes

__all__ = ["FlowSample", "Ictcp", "IctcpFlow", "IctcpParams", "datacenter_flow", "larger", "less"]

# Clock slack for "at least this long": callers step on float sums of ticks.
EPS_S = 1e-9
# Relative slack of the paper's strict comparisons: a and b this close are equal.
REL = 1e-9
# step_changes visits a flow this long before a clock of its own may come due:
# far above the float error of a sum of times, far below a step.
WAKE_EARLY_S = 1e-9

K = TypeVar("K", bound=Hashable)  # a caller's flow key (bytes, a 4-tuple, an int)


def larger(a: float, b: float) -> bool:
    """The paper's "larger than": a > b, a value equal to b (to rounding) is not."""
    return a > b and not math.isclose(a, b, rel_tol=REL, abs_tol=EPS_S * 1e-3)


def less(a: float, b: float) -> bool:
    """The paper's "less than": a < b, a value equal to b (to rounding) is not."""
    return larger(b, a)


def datacenter_flow(min_rtt_s: float, limit_s: float) -> bool:
    """§IV-D: ICTCP leaves alone a flow whose RTT is larger than the limit (2 ms),
    tested on the smallest RTT seen, so queueing (incast itself) never releases a
    flow. The data path's twin: agent/bpf/rxwin_flow.h rtt_sample (`>` in µs)."""
    return not larger(min_rtt_s, limit_s)


@dataclass(frozen=True)
class IctcpParams:
    capacity_Bps: float  # C, interface capacity, bytes/s
    mss: int = MSS_BYTES  # bytes
    alpha: float = 0.9  # share of C the flows may use
    gamma1: float = 0.1  # d at or below: increase
    gamma2: float = 0.5  # d above on 3 RTTs in a row: decrease
    over_rtts: int = 3  # those 3 RTTs
    init_segs: int = 2  # rwnd at flow start, MSS (the paper starts at 2)
    min_segs: int = 2  # rwnd floor, MSS (Fig. 10: 1)
    fair_frac: float = 0.2  # BW_A below fair_frac·C: fairness cut
    rtt_limit_s: float = RXWIN.RX_RTT_LIMIT_US * 1e-6  # datacenter_flow's limit
    idle_s: float = RXWIN.RX_IDLE_RESET_MS * 1e-3  # no data for longer: slow start again
    default_rtt_s: float = 100e-6  # RTT before the first sample, and T before any traffic


class FlowSample(NamedTuple):
    """What the data path reports for one flow at one instant (a tuple: the
    simulator builds one per flow every base RTT, ~5x faster than a frozen
    dataclass)."""

    bytes: int  # cumulative payload bytes received
    rtt_s: float  # RTT estimate; 0 if unknown
    # the data path's own minimum RTT, 0 if it keeps none: the host agent's BPF
    # tests its 2 ms limit on it, so the policy does too and the two agree
    min_rtt_s: float = 0.0


@dataclass
class IctcpFlow:
    rwnd: int
    slow_start: bool = True
    b_m: float = 0.0
    d: float = 0.0  # of the latest RTT sample
    over: int = 0  # consecutive RTT samples with d > gamma2
    sample_t: float = 0.0  # start of the current RTT sample
    sample_bytes: int = 0
    adj_t: float = 0.0  # last window change (or the flow's start, or its restart)
    rtt_s: float = 0.0
    data_t: float = 0.0  # the last step at which it had received new data
    seen_bytes: int = 0  # its bytes at the previous step
    parked: bool = False  # restarted after idle, no data since
    restarts: int = 0  # slow-start restarts after idle
    seen_step: int = 0  # step_changes: the step that last visited it


@dataclass
class _Incremental(Generic[K]):
    """What Ictcp.step_changes keeps between calls."""

    steps: StepTimes = field(default_factory=StepTimes)  # every step's `now`
    cur: dict[K, FlowSample] = field(default_factory=dict)  # every reported flow's latest
    moved: set[K] = field(default_factory=set)  # bytes changed since the subslot began
    # per flow, the time it must next be visited at; the heap may hold stale entries
    wake: dict[K, float] = field(default_factory=dict)
    heap: list[tuple[float, int, K]] = field(default_factory=list)
    seq: int = 0  # the heap's tie-break
    touched: set[K] | None = None  # during a step: windows the fairness cut changed


@dataclass
class Ictcp(Generic[K]):
    p: IctcpParams
    flows: dict[K, IctcpFlow] = field(default_factory=dict)
    slot_start: float | None = None  # start of the current subslot
    slot_bytes0: int = 0  # interface bytes at that start
    t_len: float = 0.0  # T of the current subslot (0: default_rtt_s)
    bw_a: float = 0.0
    quota: float = 0.0  # bytes/s increases may still claim this subslot
    second: bool = False  # in the second subslot
    # Smallest RTT seen per flow (controlled or not), for datacenter_flow.
    min_rtt: dict[K, float] = field(default_factory=dict)
    # Every reported connection's bytes at the start of the subslot (T's weights).
    vol0: dict[K, int] = field(default_factory=dict)
    _inc: _Incremental[K] | None = field(default=None, init=False, repr=False)

    def subslot_len(self) -> float:
        """T of the current subslot."""
        return self.t_len or self.p.default_rtt_s

    def step(self, now: float, iface_bytes: int, samples: Mapping[K, FlowSample]) -> dict[K, int]:
        """Advance to `now`; return {flow: rwnd bytes} for every controlled flow."""
        for d in (self.flows, self.min_rtt, self.vol0):
            if not d.keys() <= samples.keys():  # flows gone since the last step
                for k in [k for k in d if k not in samples]:
                    del d[k]
        fresh: set[K] = set()  # new (or back from idle) at this step: no sample yet
        for k, s in samples.items():
            self._arrive(k, s, now, fresh)
        self._subslot(now, iface_bytes, samples)
        due: list[tuple[float, K, IctcpFlow]] = []
        for k, f in self.flows.items():
            if k not in fresh:
                self._sample(k, f, samples[k].bytes, now, due)
        self._pay(due, now)
        return {k: f.rwnd for k, f in self.flows.items()}

    def step_changes(
        self, now: float, iface_bytes: int, changed: Mapping[K, FlowSample], gone: Iterable[K]
    ) -> dict[K, int]:
        """`step`, told only what moved: `changed` the flows new since the last call
        or whose bytes or RTT changed (any other flow may be added: a flow is
        never visited wrongly), `gone` those no longer reported. Returns the
        windows of the flows it visited or changed; every other controlled
        flow's window is the one last returned for it. Exactly `step`'s
        windows and state, at the cost of the flows that moved: a flow is
        visited when it changed, or when a clock of its own (a sample holding
        data coming due, the idle restart) may be due (`_wake`); the idle flow's
        sample clock, which moves on its own, is replayed when next visited
        (`_catch_up`). T's volume-weighted sum runs over the flows in ascending
        key order, the order of the simulator's table (a std::map): so the
        simulator's keys must be ordered and its full `samples` ascending.
        A policy is stepped by `step` or by `step_changes`, never both."""
        inc = self._inc
        if inc is None:
            inc = self._inc = _Incremental()
        idx = inc.steps.add(now)
        cur = inc.cur
        for k in gone:
            cur.pop(k, None)
            for d in (self.flows, self.min_rtt, self.vol0, inc.wake):
                d.pop(k, None)
            inc.moved.discard(k)
        visit: set[K] = set(changed)
        for k, s in changed.items():
            old = cur.get(k)
            if old is None or old.bytes != s.bytes:
                inc.moved.add(k)
            cur[k] = s
        heap, wake = inc.heap, inc.wake
        while heap and heap[0][0] <= now:
            t, _, k = heapq.heappop(heap)
            if wake.get(k) == t:
                del wake[k]
                visit.add(k)
        fresh: set[K] = set()
        for k in visit:
            f = self.flows.get(k)
            if f is not None:
                self._catch_up(f, idx)
            self._arrive(k, cur[k], now, fresh)
        inc.touched = touched = set[K]()
        self._subslot(now, iface_bytes, cur, inc.moved)
        inc.touched = None
        due: list[tuple[float, K, IctcpFlow]] = []
        out: dict[K, int] = {}
        for k in visit:
            f = self.flows.get(k)
            if f is None:
                continue
            if k not in fresh:
                self._sample(k, f, cur[k].bytes, now, due)
            f.seen_step = idx
            self._schedule(k, f)
            out[k] = 0
        self._pay(due, now)
        for k in touched:
            out[k] = 0
        for k in out:
            out[k] = self.flows[k].rwnd
        return out

    def _arrive(self, k: K, s: FlowSample, now: float, fresh: set[K]) -> None:
        """A step's first look at flow `k`: its smallest RTT, whether ICTCP
        controls it, its new data, the restart of a prolonged idle flow."""
        p = self.p
        min_rtt = self.min_rtt
        self.vol0.setdefault(k, s.bytes)
        for r in (s.rtt_s, s.min_rtt_s) if s.min_rtt_s > 0 else (s.rtt_s,):
            if r > 0:
                m = min_rtt.get(k)
                if m is None or r < m:
                    min_rtt[k] = r
        if not datacenter_flow(min_rtt.get(k, 0.0), p.rtt_limit_s):
            self.flows.pop(k, None)
            return
        f = self.flows.get(k)
        if f is None:
            f = self.flows[k] = IctcpFlow(rwnd=p.init_segs * p.mss)
            f.sample_t = f.adj_t = f.data_t = now
            f.sample_bytes = f.seen_bytes = s.bytes
            fresh.add(k)
        elif s.bytes != f.seen_bytes:
            f.seen_bytes, f.data_t = s.bytes, now
            if f.parked:  # data again after a restart: its clocks start now
                f.parked = False
                f.sample_t = f.adj_t = now
                f.sample_bytes = s.bytes
                fresh.add(k)
        elif not f.parked and larger(now - f.data_t, p.idle_s):
            self._restart(f)  # §IV-C: a prolonged idle connection
        f.rtt_s = s.rtt_s or p.default_rtt_s

    def _sample(
        self, k: K, f: IctcpFlow, nbytes: int, now: float, due: list[tuple[float, K, IctcpFlow]]
    ) -> None:
        """Per flow, once per RTT with data: d, the decrease rule, whether it asks
        to grow (appended to `due`). `nbytes`: its bytes now."""
        p = self.p
        if f.parked or now - f.sample_t < f.rtt_s - EPS_S:
            return
        if nbytes == f.sample_bytes:
            # §IV-B: a flow adjusts only as it sends an ACK; with no data over
            # the RTT it sent none. The idle time is no sample: the next one
            # starts now.
            f.sample_t = now
            return
        b_s = (nbytes - f.sample_bytes) / (now - f.sample_t)
        f.sample_t, f.sample_bytes = now, nbytes
        f.b_m = max(b_s, 0.75 * f.b_m + 0.25 * b_s)
        b_e = max(f.b_m, f.rwnd / f.rtt_s)
        f.d = (b_e - f.b_m) / b_e
        if larger(f.d, p.gamma2):
            f.over += 1
            if f.over >= p.over_rtts:
                f.over, f.slow_start = 0, False
                if self._cut(f, now):
                    return
                # at the floor: nothing to cut, and at 1 MSS d <= MSS/rwnd always
                # holds, so the rule's first case (increase) still applies
        else:
            f.over = 0
        if not larger(now - f.adj_t, 2 * f.rtt_s):
            return  # not a control time
        if not larger(f.d, p.gamma1) or not larger(f.d, p.mss / f.rwnd):
            if self.second:
                due.append((f.adj_t + 2 * f.rtt_s, k, f))
        else:
            f.slow_start = False  # hold

    def _pay(self, due: list[tuple[float, K, IctcpFlow]], now: float) -> None:
        """Increases pay from the quota in the order the flows became due (ACK order)."""
        p = self.p
        try:
            due.sort(key=lambda e: (e[0], e[1]))
        except TypeError:  # keys without an order: due time only
            due.sort(key=lambda e: e[0])
        for _, _, f in due:
            inc = f.rwnd if f.slow_start else p.mss
            if less(inc / f.rtt_s, self.quota):
                self.quota -= inc / f.rtt_s
                f.rwnd += inc
                f.adj_t = now
            elif f.slow_start:
                f.slow_start = False  # the quota cannot pay for the doubling

    def _catch_up(self, f: IctcpFlow, idx: int) -> None:
        """step_changes: replay the sample clock of a flow left unvisited since
        step f.seen_step, up to (not including) step `idx`. Unvisited, its bytes
        and RTT did not change and no sample holding data came due, so each of
        those steps did to it what `_sample` does to a flow without new data
        (the same comparison, on the same floats): at the first step j with
        not times[j] - sample_t < rtt_s − EPS_S, sample_t moves to times[j]."""
        inc = self._inc
        lo = f.seen_step + 1
        if inc is None or lo >= idx or f.parked or f.seen_bytes != f.sample_bytes:
            return
        f.sample_t = inc.steps.replay(f.sample_t, lo, idx, f.rtt_s - EPS_S)

    def _schedule(self, k: K, f: IctcpFlow) -> None:
        """step_changes: the earliest step flow `k` must be visited at though it
        does not change: its idle restart, and a sample holding data coming due
        (an idle flow's own sample clock is replayed by `_catch_up` instead).
        WAKE_EARLY_S early: a visit before its time does what `step` does."""
        inc = self._inc
        assert inc is not None
        if f.parked:
            return
        t = f.data_t + self.p.idle_s
        if f.seen_bytes != f.sample_bytes:
            t = min(t, f.sample_t + f.rtt_s - EPS_S)
        t -= WAKE_EARLY_S
        inc.wake[k] = t
        inc.seq += 1
        heapq.heappush(inc.heap, (t, inc.seq, k))

    def _restart(self, f: IctcpFlow) -> None:
        """Slow start again from the initial window, as a new connection starts
        (written at once, while the flow is idle); its clocks start again at the
        first step that sees its data, as a new flow's do."""
        f.rwnd, f.slow_start = self.p.init_segs * self.p.mss, True
        f.b_m = f.d = 0.0
        f.over = 0
        f.parked = True
        f.restarts += 1

    def _subslot(
        self,
        now: float,
        iface_bytes: int,
        samples: Mapping[K, FlowSample],
        moved: set[K] | None = None,
    ) -> None:
        """Close the current subslot if T has passed: set the next T from the
        subslot's traffic; at the end of a first subslot compute BW_A, open the
        quota and apply the fairness cut (once per slot). `moved` (step_changes):
        the only flows whose bytes changed since the last close, emptied here;
        None: every flow of `samples` may have."""
        p = self.p
        if self.slot_start is None:
            self.slot_start, self.slot_bytes0 = now, iface_bytes
            return
        if now - self.slot_start < self.subslot_len() - EPS_S:
            return
        num = den = 0.0
        # step_changes' keys are ordered (its docstring); step's need not be
        ordered = samples if moved is None else sorted(moved)  # pyright: ignore[reportArgumentType]
        for k in ordered:
            s = samples[k]
            v = s.bytes - self.vol0.get(k, s.bytes)
            if v > 0:
                f = self.flows.get(k)
                rtt = f.rtt_s if f is not None else (s.rtt_s or p.default_rtt_s)
                num += v * rtt
                den += v
            self.vol0[k] = s.bytes
        if moved is not None:
            moved.clear()
        if den:
            self.t_len = num / den  # no traffic: T stays
        if self.second:
            self.second, self.quota = False, 0.0
        else:
            bw_t = (iface_bytes - self.slot_bytes0) / max(now - self.slot_start, 1e-9)
            self.bw_a = max(0.0, p.alpha * p.capacity_Bps - bw_t)
            self.second, self.quota = True, self.bw_a
            if less(self.bw_a, p.fair_frac * p.capacity_Bps) and self.flows:
                mean = sum(f.rwnd for f in self.flows.values()) / len(self.flows)
                touched = self._inc.touched if self._inc is not None else None
                for k, f in self.flows.items():
                    if larger(f.rwnd, mean) and self._cut(f, now) and touched is not None:
                        touched.add(k)
        self.slot_start, self.slot_bytes0 = now, iface_bytes

    def _cut(self, f: IctcpFlow, now: float) -> bool:
        """rwnd − 1 MSS down to the floor; a change restarts the flow's 2·RTT."""
        w = max(f.rwnd - self.p.mss, self.p.min_segs * self.p.mss)
        if w == f.rwnd:
            return False
        f.rwnd, f.adj_t = w, now
        return True
