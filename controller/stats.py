"""Read the pipeline's counters and depth histogram; per-port statistics."""

from __future__ import annotations

from collections.abc import Iterable
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
        """Routed but never reached egress: dropped by the full queue (or still queued).
        Never negative in a snapshot `read` took (its Read order, EGRESS_ORDER)."""
        return self.routed - self.egress

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


# One snapshot is one P4Runtime Read, its entities in this order.
#
# The pipeline counts a packet in routed_stats at ingress; when it leaves the
# queue, in queue_depth_stats (ecn_policy's action, p4src/shared/ecn_marker.p4);
# then in one ECN action (p4src/shared/ecn_decision.p4), which counts ect before
# marked, and not_ect_over_k before ecn_drop. BMv2's P4Runtime server (PI's
# DeviceMgr::read) serves a Read's entities one after another, cell by cell,
# while packets keep flowing: a Read is not atomic. So, per port, the snapshot
# reads the counter a packet reaches last first and the one it reaches first
# last: a packet in a cell read earlier was counted, before that, in every cell
# read later. Every snapshot holds marked <= ect <= egress <= routed per port (so
# routed - egress >= 0 with no clamping), and each ECN counter <= egress. A
# port's cells are read one after another, about 1.5 ms on BMv2 from first to
# last, so counters of one port are that close in time, however many ports.
EGRESS_ORDER: tuple[str, ...] = ("marked", "ect", "ecn_drop", "not_ect_over_k", "ce_in")
assert sorted(EGRESS_ORDER) == sorted(p4names.ECN_COUNTERS), "every ECN counter, once"


def _snapshot_entities(ports: list[int]) -> list[fy.P4CounterEntry]:
    """The Read of one snapshot: per port its ECN counters (EGRESS_ORDER), its depth
    histogram's cells and its routed_stats cell; then routed_stats whole (which
    ports have traffic) and ingress_drop_stats."""
    out: list[fy.P4CounterEntry] = []
    for p in ports:
        out += [fy.P4CounterEntry(p4names.ECN_COUNTERS[a], index=p) for a in EGRESS_ORDER]
        if p < HIST_PORTS:
            base = p * HIST_BUCKETS
            out += [
                fy.P4CounterEntry(p4names.QUEUE_DEPTH, index=base + b) for b in range(HIST_BUCKETS)
            ]
        out.append(fy.P4CounterEntry(p4names.ROUTED, index=p))
    out += [fy.P4CounterEntry(p4names.ROUTED), fy.P4CounterEntry(p4names.INGRESS_DROPS)]
    return out


async def _read_once(
    sw: fy.Switch | EntityReader, ports: list[int]
) -> tuple[dict[int, PortStats], set[int], dict[int, int]]:
    """One Read: PortStats of `ports`, the ports with traffic (routed_stats read
    whole, after them), ingress drops by index."""
    by_port = {p: PortStats(p) for p in ports}
    attr = {name: a for a, name in p4names.ECN_COUNTERS.items()}
    own_routed: set[int] = set()
    busy: set[int] = set()
    drops: dict[int, int] = {}
    async for entry in read_entities(sw, _snapshot_entities(ports)):
        if entry.data is None or entry.index is None:
            continue
        name, i, data = entry.counter_id, entry.index, entry.data
        if name in attr:
            setattr(by_port[i], attr[name], data.packet_count)
        elif name == p4names.QUEUE_DEPTH:
            p, bucket = divmod(i, HIST_BUCKETS)
            by_port[p].hist[bucket] = data.packet_count
        elif name == p4names.ROUTED:
            if i in by_port and i not in own_routed:  # served in order: the port's own cell
                own_routed.add(i)
                by_port[i].routed, by_port[i].routed_bytes = data.packet_count, data.byte_count
            if data.packet_count:
                busy.add(i)
        elif name == p4names.INGRESS_DROPS:
            drops[i] = data.packet_count
    return by_port, busy, drops


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


async def read(
    sw: fy.Switch | EntityReader, ports: list[int] | None = None, known: Iterable[int] = ()
) -> Snapshot:
    """One consistent snapshot (EGRESS_ORDER) of `ports`, or of every port with
    traffic. Only the ports' own cells are read: the whole histogram (16k cells,
    ~0.2 s on BMv2) would put that much time between a port's counters. Without
    `ports`, the Read covers `known` (a hint: the last snapshot's ports) and is
    repeated with the larger set when routed_stats shows traffic on a port it did
    not cover, so it is one Read per call while the busy ports stay the same."""
    want = sorted(set(ports if ports is not None else known))
    while True:
        by_port, busy, drops = await _read_once(sw, want)
        if ports is not None or busy <= set(want):
            break
        want = sorted(busy | set(want))
    if ports is None:
        by_port = {p: s for p, s in by_port.items() if p in busy}
    ingress = {reason: drops.get(i, 0) for i, reason in enumerate(p4names.DROP_REASONS)}
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
