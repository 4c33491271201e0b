"""ICTCP: incast congestion control at the receiver, through the advertised window.

Wu, Feng, Guo, Zhang, "ICTCP: Incast Congestion Control for TCP in Data-Center
Networks", IEEE/ACM ToN 21(2), 2013 (CoNEXT 2010). docs/algorithms.md §3.

Interface capacity C (bytes/s), incoming rate BW_T measured over a subslot:

    BW_A = max(0, alpha·C − BW_T),  alpha = 0.9

Time is cut into slots of two subslots of length T = traffic-weighted mean
RTT of the flows. In the first subslot BW_A is measured; in the second it is a
quota for window increases. Per flow, in a second subslot once at least 2·RTT
have passed since its last adjustment, with b_s the bytes received since then
divided by the time:

    b_m <- max(b_s, 0.75·b_m + 0.25·b_s)        measured throughput
    b_e  = max(b_m, rwnd / RTT)                 expected throughput
    d    = (b_e − b_m) / b_e

    d <= gamma1 (0.1) or d <= MSS/rwnd:  increase, if the quota allows: rwnd
        doubles in slow start, else + 1 MSS; the quota loses increase / RTT.
        (Here: when the quota cannot pay for doubling, + 1 MSS is tried and
        slow start ends — otherwise a lone flow would stop at half of C.)
    d >  gamma2 (0.5) for 3 periods in a row: rwnd − 1 MSS, slow start ends
    else: hold

rwnd >= 2 MSS. When BW_A < 0.2·C, flows whose rwnd is above the mean lose
1 MSS (fairness). Only flows with RTT < 2 ms are controlled.

Pure logic: the agent feeds it per-flow byte counters and RTTs read from the
data path, and writes the returned windows into the data path's wset map.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from p4incast.model.wire import MSS_BYTES

__all__ = ["FlowSample", "Ictcp", "IctcpParams", "IctcpFlow"]


@dataclass(frozen=True)
class IctcpParams:
    capacity_Bps: float  # C, interface capacity, bytes/s
    mss: int = MSS_BYTES  # bytes
    alpha: float = 0.9  # share of C the flows may use
    gamma1: float = 0.1  # d at or below: increase
    gamma2: float = 0.5  # d above (3 periods in a row): decrease
    init_segs: int = 2  # rwnd at flow start, MSS (the paper starts at 2)
    min_segs: int = 2  # rwnd floor, MSS
    fair_frac: float = 0.2  # BW_A below fair_frac·C: fairness cut
    rtt_limit_s: float = 2e-3  # flows slower than this are left alone
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
    over: int = 0  # consecutive periods with d > gamma2
    last_t: float | None = None
    last_bytes: int = 0
    rtt_s: float = 0.0


@dataclass
class Ictcp:
    p: IctcpParams
    flows: dict[Hashable, IctcpFlow] = field(default_factory=dict)
    slot_start: float | None = None
    slot_bytes0: int = 0  # interface bytes at the start of the subslot
    bw_a: float = 0.0
    quota: float = 0.0  # bytes/s that increases may still claim this subslot
    second: bool = False  # in the second subslot
    # Smallest RTT seen per flow: the "RTT < 2 ms" test is a datacenter-flow test,
    # so queueing delay (incast itself) must not take a flow out of control.
    min_rtt: dict[Hashable, float] = field(default_factory=dict)

    def subslot_len(self) -> float:
        """T: traffic-weighted mean RTT (weights = b_m), default RTT when idle."""
        num = den = 0.0
        for f in self.flows.values():
            if f.rtt_s > 0:
                w = f.b_m or 1.0
                num += w * f.rtt_s
                den += w
        return num / den if den else self.p.default_rtt_s

    def step(self, now: float, iface_bytes: int, samples: Mapping[Hashable, FlowSample]) -> dict:
        """Advance to `now`; return {flow: rwnd bytes} for every controlled flow."""
        p = self.p
        for k in list(self.flows):
            if k not in samples:
                del self.flows[k]
        for k in list(self.min_rtt):
            if k not in samples:
                del self.min_rtt[k]
        # Subslot bookkeeping.
        if self.slot_start is None:
            self.slot_start, self.slot_bytes0 = now, iface_bytes
        t = self.subslot_len()
        if now - self.slot_start >= t:
            bw_t = (iface_bytes - self.slot_bytes0) / max(now - self.slot_start, 1e-9)
            self.bw_a = max(0.0, p.alpha * p.capacity_Bps - bw_t)
            self.second = not self.second
            self.quota = self.bw_a if self.second else 0.0
            self.slot_start, self.slot_bytes0 = now, iface_bytes
        out: dict[Hashable, int] = {}
        for k, s in samples.items():
            if s.rtt_s > 0:
                self.min_rtt[k] = min(self.min_rtt.get(k, s.rtt_s), s.rtt_s)
            if self.min_rtt.get(k, 0.0) > p.rtt_limit_s:
                self.flows.pop(k, None)
                continue
            f = self.flows.get(k)
            if f is None:
                f = self.flows[k] = IctcpFlow(rwnd=p.init_segs * p.mss)
                f.last_t, f.last_bytes = now, s.bytes
            f.rtt_s = s.rtt_s or p.default_rtt_s
            if self.second and now - f.last_t >= 2 * f.rtt_s:  # type: ignore[operator]
                b_s = (s.bytes - f.last_bytes) / (now - f.last_t)  # type: ignore[operator]
                self.adjust(f, b_s)
                f.last_t, f.last_bytes = now, s.bytes
            out[k] = f.rwnd
        if self.second and self.bw_a < p.fair_frac * p.capacity_Bps and self.flows:
            mean = sum(f.rwnd for f in self.flows.values()) / len(self.flows)
            for k, f in self.flows.items():
                if f.rwnd > mean:
                    f.rwnd = max(f.rwnd - p.mss, p.min_segs * p.mss)
                    out[k] = f.rwnd
        return out

    def adjust(self, f: IctcpFlow, b_s: float) -> None:
        """The per-flow rule, once per 2·RTT (b_s in bytes/s)."""
        p = self.p
        f.b_m = max(b_s, 0.75 * f.b_m + 0.25 * b_s)
        b_e = max(f.b_m, f.rwnd / f.rtt_s)
        d = (b_e - f.b_m) / b_e if b_e > 0 else 0.0
        if d <= p.gamma1 or d <= p.mss / f.rwnd:
            f.over = 0
            for inc in (f.rwnd, p.mss) if f.slow_start else (p.mss,):
                need = inc / f.rtt_s
                if self.second and self.quota >= need:
                    self.quota -= need
                    f.rwnd += inc
                    if inc == p.mss:
                        f.slow_start = False
                    break
        elif d > p.gamma2:
            f.over += 1
            if f.over >= 3:
                f.rwnd = max(f.rwnd - p.mss, p.min_segs * p.mss)
                f.slow_start = False
                f.over = 0
        else:
            f.over = 0
