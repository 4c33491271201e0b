"""Read the pipeline's counters and depth histogram; per-port statistics."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import finsy as fy

from p4incast.model import histogram

from . import p4names
from .connection import EntityReader, read_entities
from .p4names import HIST_BUCKETS, HIST_PORTS


@dataclass
class PortStats:
    """Counters of one egress port (packets; bytes where it says so)."""

    port: int
    routed: int = 0  # routed to this port at ingress
    routed_bytes: int = 0
    ect: int = 0  # reached egress as ECT(0)/ECT(1)
    marked: int = 0  # turned into CE at this port
    ce_in: int = 0  # reached egress already CE
    not_ect_over_k: int = 0  # Not-ECT above K (never marked)
    ecn_drop: int = 0  # Not-ECT dropped above drop_k
    hist: list[int] = field(default_factory=lambda: [0] * HIST_BUCKETS)

    @property
    def egress(self) -> int:
        """Packets that left the queue into egress (sum of the histogram)."""
        return sum(self.hist)

    @property
    def queue_drops(self) -> int:
        """Routed but never reached egress: dropped by the full queue (or still queued)."""
        return max(0, self.routed - self.egress)

    def as_dict(self) -> dict[str, object]:
        d = asdict(self)
        d.pop("hist")
        d["egress"] = self.egress
        d["queue_drops"] = self.queue_drops
        d["depth"] = histogram.summary(self.hist)
        d["hist"] = {str(b): c for b, c in enumerate(self.hist) if c}
        return d


@dataclass
class Snapshot:
    """Everything `stats` reports."""

    ports: dict[int, PortStats]
    ingress_drops: dict[str, int]

    def as_dict(self) -> dict[str, object]:
        return {
            "ports": {str(p): s.as_dict() for p, s in sorted(self.ports.items())},
            "ingress_drops": self.ingress_drops,
        }


async def _counter(sw: fy.Switch | EntityReader, name: str) -> dict[int, fy.P4CounterData]:
    out: dict[int, fy.P4CounterData] = {}
    async for entry in read_entities(sw, fy.P4CounterEntry(name)):
        if entry.data is not None and entry.index is not None:
            out[entry.index] = entry.data
    return out


async def depth_hist(sw: fy.Switch, port: int) -> list[int]:
    """The depth histogram of one egress port (HIST_BUCKETS counts): one read of
    its HIST_BUCKETS counter cells, not the whole array."""
    base = port * HIST_BUCKETS
    hist = [0] * HIST_BUCKETS
    cells = [fy.P4CounterEntry(p4names.QUEUE_DEPTH, index=base + b) for b in range(HIST_BUCKETS)]
    async for entry in read_entities(sw, cells):
        if entry.data is not None and entry.index is not None:
            hist[entry.index - base] = entry.data.packet_count
    return hist


async def read(sw: fy.Switch | EntityReader, ports: list[int] | None = None) -> Snapshot:
    """Read every counter; keep `ports` (or every port with traffic)."""
    by_port: dict[int, PortStats] = {}

    def port(p: int) -> PortStats:
        if p not in by_port:
            by_port[p] = PortStats(p)
        return by_port[p]

    for p, data in (await _counter(sw, p4names.ROUTED)).items():
        if data.packet_count:
            port(p).routed = data.packet_count
            port(p).routed_bytes = data.byte_count
    for attr, name in p4names.ECN_COUNTERS.items():
        for p, data in (await _counter(sw, name)).items():
            if data.packet_count:
                setattr(port(p), attr, data.packet_count)
    for index, data in (await _counter(sw, p4names.QUEUE_DEPTH)).items():
        if data.packet_count:
            p, bucket = divmod(index, HIST_BUCKETS)
            if p < HIST_PORTS:
                port(p).hist[bucket] = data.packet_count
    drops = await _counter(sw, p4names.INGRESS_DROPS)
    ingress = {
        reason: (drops[i].packet_count if i in drops else 0)
        for i, reason in enumerate(p4names.DROP_REASONS)
    }
    if ports is not None:
        by_port = {p: by_port.get(p, PortStats(p)) for p in ports}
    return Snapshot(ports=by_port, ingress_drops=ingress)


def table(snap: Snapshot) -> str:
    """Human-readable table, one row per port."""
    head = (
        "port",
        "routed",
        "egress",
        "q_drop",
        "ect",
        "marked",
        "ce_in",
        "notect>K",
        "ecn_drop",
        "d_p50",
        "d_p95",
        "d_max",
    )
    rows: list[tuple[str, ...]] = [head]
    for p, s in sorted(snap.ports.items()):
        d = histogram.summary(s.hist)
        lab = [histogram.label(d[k], HIST_BUCKETS) for k in ("p50", "p95", "max")]
        rows.append(
            (
                str(p),
                str(s.routed),
                str(s.egress),
                str(s.queue_drops),
                str(s.ect),
                str(s.marked),
                str(s.ce_in),
                str(s.not_ect_over_k),
                str(s.ecn_drop),
                *lab,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    drops = ", ".join(f"{k}={v}" for k, v in snap.ingress_drops.items())
    lines.append(f"ingress drops: {drops}   (depth in packets, sampled at enqueue)")
    return "\n".join(lines)
