"""RCC: receiver-side window assignment over the NIC's flows, plus the receiver α.

Xu, Xu, Jiang, Ren, Wang, "Throughput optimization of TCP incast congestion
control in large-scale datacenter networks" (RCC: receiver cooperative
congestion control), Computer Networks, 2017. docs/algorithms.md §3.

Window assignment per NIC, in packets, with queue_maxsize Q (40 in the paper)
and priority shares w_i (equal when unknown):

    W_i = max(1, floor(w_i · Q))           capped at the flow's remaining size
    spare = Q − Σ W_i, handed out one packet at a time to uncapped flows
          (largest share first, then key order)

Remote congestion, once per RTT per flow, α_r = CE packets / packets:

    rwnd <- rwnd · (1 − α_r / 2)          (at least 1 packet)

The paper also holds ACKs in an ACK queue while the windows in flight add up
to more than Q. The simulator models it (sim/cpp/rx_agent.h: an ACK that would
overfill Q waits, in order per flow, until arriving data makes room or
transport.ack_hold_max_us passes; none is ever dropped). This host agent does
not, and cannot here: a tc program can only pass or drop a packet, and a
dropped ACK is lost, not delayed; delaying it needs an earliest-departure-time
qdisc (fq), which this kernel lacks, and even fq releases a packet at a time
set when it is queued, while the ACK queue releases on an event (data
arriving). Because every W_i caps that flow's in-flight data and Σ W_i <= Q
whenever the flow count is <= Q, the assignment alone bounds the total in
flight to Q packets; above Q flows each keeps 1 packet.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from p4incast.model.wire import MSS_BYTES

__all__ = ["Rcc", "RccParams", "assign_windows", "remote_cut"]


def assign_windows(
    flows: Mapping[Hashable, float],
    queue_maxsize: int = 40,
    sizes: Mapping[Hashable, int] | None = None,
) -> dict[Hashable, int]:
    """{flow: share} -> {flow: W in packets}; sizes = remaining packets if known."""
    if not flows:
        return {}
    total = sum(flows.values()) or float(len(flows))
    sizes = sizes or {}
    out: dict[Hashable, int] = {}
    for k, share in flows.items():
        w = max(1, int((share or 1.0) / total * queue_maxsize))
        if k in sizes:
            w = max(1, min(w, sizes[k]))
        out[k] = w
    spare = queue_maxsize - sum(out.values())
    order = sorted(flows, key=lambda k: (-flows[k], str(k)))
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
        counters: Mapping[Hashable, tuple[int, int, float]],
        shares: Mapping[Hashable, float] | None = None,
    ) -> dict[Hashable, int]:
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
        base = assign_windows({k: (shares or {}).get(k, 1.0) for k in live}, p.queue_maxsize)
        out: dict[Hashable, int] = {}
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
