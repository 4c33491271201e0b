"""ICTCP: incast congestion control at the receiver, through the advertised window.

Wu, Feng, Guo, Zhang, "ICTCP: Incast Congestion Control for TCP in Data-Center
Networks", IEEE/ACM ToN 21(2), 2013 (CoNEXT 2010), §IV. docs/algorithms.md.

§IV-A, global: C the interface capacity, BW_T the interface's incoming rate
over a first subslot, BW_A = max(0, alpha·C − BW_T), alpha = 0.9. Slots of two
subslots of T = mean RTT of the flows weighted by b_m. A first subslot
measures BW_A; in the second, BW_A is the quota window increases pay from
(increase / RTT each), the flow whose control time came first paying first.

§IV-B/C, per flow, once per RTT, b_s = bytes received over the sample / its
length:

    b_m <- max(b_s, 0.75·b_m + 0.25·b_s)     b_e = max(b_m, rwnd / RTT)
    d    = (b_e − b_m) / b_e

    d > gamma2 (0.5) on 3 RTTs in a row: rwnd − 1 MSS, in either subslot
    at a control time (>= 2·RTT since the flow's last window change):
      d <= gamma1 (0.1) or d <= MSS/rwnd: in a second subslot, if the quota
          pays: rwnd doubles in slow start, else + 1 MSS; slow start ends,
          with no increase, when the quota cannot pay for the doubling
      otherwise: hold, slow start ends (as it does on a decrease)

rwnd starts at 2 MSS, floor min_segs MSS (2; Fig. 10 runs 1). §IV-D: when
BW_A < 0.2·C, once per slot as BW_A is computed, every flow above the mean
rwnd loses 1 MSS. Only flows with RTT < 2 ms are controlled.

Readings and deviations (docs/algorithms.md, "ICTCP"):
- The policy sees time only at step(): a subslot, an RTT and a control
  interval end at the first call at or after their end (callers' period:
  agent interval_ms, 5 ms; simulator transport.policy_tick_us, one base RTT),
  and "ACK order" is the order of the flows' due times within one call.
- A hold (d > gamma1) ends slow start only at a control time: in the RTT
  after a change d still measures the old window.
- A fairness cut is a window change: it restarts the flow's 2·RTT.
- The 2 ms test is on the smallest RTT seen (rtt_limit_s), so incast
  queueing never releases a flow; default_rtt_s stands in for an unknown RTT.

Pure logic: the agent feeds it per-flow byte counters and RTTs read from the
data path, and writes the returned windows into the data path's wset map.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from p4incast.model.wire import MSS_BYTES

__all__ = ["FlowSample", "Ictcp", "IctcpParams", "IctcpFlow"]

# Clock slack for "at least this long": callers step on float sums of ticks.
EPS_S = 1e-9

K = TypeVar("K", bound=Hashable)  # a caller's flow key (bytes, a 4-tuple, an int)


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
    rtt_limit_s: float = 2e-3  # flows whose smallest RTT is not below this are left alone
    default_rtt_s: float = 100e-6  # RTT before the first sample


@dataclass(frozen=True)
class FlowSample:
    """What the data path reports for one flow at one instant."""

    bytes: int  # cumulative payload bytes received
    rtt_s: float  # RTT estimate; 0 if unknown


@dataclass
class IctcpFlow:
    rwnd: int
    slow_start: bool = True
    b_m: float = 0.0
    d: float = 0.0  # of the latest RTT sample
    over: int = 0  # consecutive RTT samples with d > gamma2
    sample_t: float = 0.0  # start of the current RTT sample
    sample_bytes: int = 0
    adj_t: float = 0.0  # last window change (or the flow's start)
    rtt_s: float = 0.0


@dataclass
class Ictcp(Generic[K]):
    p: IctcpParams
    flows: dict[K, IctcpFlow] = field(default_factory=dict)
    slot_start: float | None = None  # start of the current subslot
    slot_bytes0: int = 0  # interface bytes at that start
    bw_a: float = 0.0
    quota: float = 0.0  # bytes/s increases may still claim this subslot
    second: bool = False  # in the second subslot
    # Smallest RTT seen per flow: the "RTT < 2 ms" test is a datacenter-flow test,
    # so queueing delay (incast itself) must not take a flow out of control.
    min_rtt: dict[K, float] = field(default_factory=dict)

    def subslot_len(self) -> float:
        """T: traffic-weighted mean RTT (weights = b_m), default RTT when idle."""
        num = den = 0.0
        for f in self.flows.values():
            if f.rtt_s > 0:
                w = f.b_m or 1.0
                num += w * f.rtt_s
                den += w
        return num / den if den else self.p.default_rtt_s

    def step(self, now: float, iface_bytes: int, samples: Mapping[K, FlowSample]) -> dict[K, int]:
        """Advance to `now`; return {flow: rwnd bytes} for every controlled flow."""
        p = self.p
        for k in list(self.flows):
            if k not in samples:
                del self.flows[k]
        for k in list(self.min_rtt):
            if k not in samples:
                del self.min_rtt[k]
        fresh: set[K] = set()
        for k, s in samples.items():
            if s.rtt_s > 0:
                self.min_rtt[k] = min(self.min_rtt.get(k, s.rtt_s), s.rtt_s)
            if self.min_rtt.get(k, 0.0) >= p.rtt_limit_s:
                self.flows.pop(k, None)
                continue
            f = self.flows.get(k)
            if f is None:
                f = self.flows[k] = IctcpFlow(rwnd=p.init_segs * p.mss)
                f.sample_t = f.adj_t = now
                f.sample_bytes = s.bytes
                fresh.add(k)
            f.rtt_s = s.rtt_s or p.default_rtt_s
        self._subslot(now, iface_bytes)
        # Per flow, once per RTT: d, the decrease rule, and whether it asks for an increase.
        due: list[tuple[float, K, IctcpFlow]] = []
        for k, f in self.flows.items():
            if k in fresh or now - f.sample_t < f.rtt_s - EPS_S:
                continue
            b_s = (samples[k].bytes - f.sample_bytes) / (now - f.sample_t)
            f.sample_t, f.sample_bytes = now, samples[k].bytes
            f.b_m = max(b_s, 0.75 * f.b_m + 0.25 * b_s)
            b_e = max(f.b_m, f.rwnd / f.rtt_s)
            f.d = (b_e - f.b_m) / b_e
            if f.d > p.gamma2:
                f.over += 1
                if f.over >= p.over_rtts:
                    f.over, f.slow_start = 0, False
                    if self._cut(f, now):
                        continue
                    # at the floor: nothing to cut, and at 1 MSS d <= MSS/rwnd always
                    # holds, so the rule's first case (increase) still applies
            else:
                f.over = 0
            if now - f.adj_t < 2 * f.rtt_s - EPS_S:
                continue  # not a control time
            if f.d <= p.gamma1 or f.d <= p.mss / f.rwnd:
                if self.second:
                    due.append((f.adj_t + 2 * f.rtt_s, k, f))
            else:
                f.slow_start = False  # hold
        # Increases pay from the quota in the order the flows became due (ACK order).
        try:
            due.sort(key=lambda e: (e[0], e[1]))
        except TypeError:  # keys without an order: due time only
            due.sort(key=lambda e: e[0])
        for _, _, f in due:
            inc = f.rwnd if f.slow_start else p.mss
            if self.quota >= inc / f.rtt_s:
                self.quota -= inc / f.rtt_s
                f.rwnd += inc
                f.adj_t = now
            elif f.slow_start:
                f.slow_start = False  # the quota cannot pay for the doubling
        return {k: f.rwnd for k, f in self.flows.items()}

    def _subslot(self, now: float, iface_bytes: int) -> None:
        """Close the current subslot if T has passed; at the end of a first subslot
        compute BW_A, open the quota and apply the fairness cut (once per slot)."""
        p = self.p
        if self.slot_start is None:
            self.slot_start, self.slot_bytes0 = now, iface_bytes
            return
        if now - self.slot_start < self.subslot_len() - EPS_S:
            return
        if self.second:
            self.second, self.quota = False, 0.0
        else:
            bw_t = (iface_bytes - self.slot_bytes0) / max(now - self.slot_start, 1e-9)
            self.bw_a = max(0.0, p.alpha * p.capacity_Bps - bw_t)
            self.second, self.quota = True, self.bw_a
            if self.bw_a < p.fair_frac * p.capacity_Bps and self.flows:
                mean = sum(f.rwnd for f in self.flows.values()) / len(self.flows)
                for f in self.flows.values():
                    if f.rwnd > mean:
                        self._cut(f, now)
        self.slot_start, self.slot_bytes0 = now, iface_bytes

    def _cut(self, f: IctcpFlow, now: float) -> bool:
        """rwnd − 1 MSS down to the floor; a change restarts the flow's 2·RTT."""
        w = max(f.rwnd - self.p.mss, self.p.min_segs * self.p.mss)
        if w == f.rwnd:
            return False
        f.rwnd, f.adj_t = w, now
        return True
