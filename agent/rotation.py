"""The rotation's userspace half: slots held by flows with nothing to send.

The data path (agent/bpf/rxwin_rotation.h, rotate_ack) passes a slot on at the end
of its holder's turn, which is an ACK. A holder that has nothing to send never
produces that ACK, and its slot is lost. If every slot is lost, the waiting
flows have no window and the data path has no packet to carry a grant. They
then wait for their senders' persist timers (the min RTO, 4 s on the dilated
testbed).

Every agent tick, while flows wait, the agent does two things:
- It takes back the slot of each holder that has received nothing for
  STALE_RTTS of its smoothed RTTs (at least STALE_TICKS ticks) since it took
  the slot or since its last data. The smoothed RTT carries the queueing
  delay a granted segment meets on its way; with the minimum RTT, holders
  whose segment was still queued lost their slots (testbed, N = 64: 257
  slots taken back, none of them idle).
- It grants the free slots to the head of the queue itself. It sends the same
  window update the data path forges (policies/budget.forged_update),
  through a packet socket whose mark the data path lets pass.

Both are made in BPF (rx_rescue, run through BPF_PROG_TEST_RUN), by
compare-and-swap against the data path; the agent never writes an entry back.
The take-back is one pass over the table in BPF (ROT_OP_SCAN, the rule of
`stale` below, checked against it by a test), which also counts holders and
waiting flows. The pass walks every bucket of the table (0.3 ms at 16384
entries), so it runs every STALE_TICKS ticks only while no slot passes on,
else every SCAN_TICKS. A grant takes the slot first and sends the update
after, as the data path does.

Why: a rescue that read a holder as idle while its segment was being
acknowledged, or that marked a flow granted after its update went out and
its segment came back, overwrote the data path's change. The flow was then
left with a closed window, out of the queue, until its sender's zero-window
probe one min RTO later: a whole round lost to one flow.

Every RECOUNT_TICKS ticks, even when the count says no flow waits, it
repairs counters that drifted from the table (_recount), and it puts waiting
flows the queue has lost back on it. With `trace`, it writes its view of
every tick (_trace).
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from typing import TextIO

from p4incast.agent.datapath import FlowKey, RotFlow, RxWin
from p4incast.agent.policies.budget import (
    ROT_HDR_LEN,
    ROT_WAIT,
    RotEntry,
    forged_update,
    grant_field,
    rotation_slots,
)
from p4incast.agent.policies.newdctcp_rx import DEFAULT_MSS
from p4incast.policies.rxwin_h import RXWIN

__all__ = [
    "RX_CLONE_MARK",
    "SCAN_TICKS",
    "STALE_RTTS",
    "STALE_TICKS",
    "Rescuer",
    "stale",
    "window_update",
]

RX_CLONE_MARK = RXWIN.RX_CLONE_MARK  # packets with this mark pass rx_egress untouched
STALE_RTTS = 4  # a holder idle this many of its smoothed RTTs has nothing to send
STALE_TICKS = 2  # ... and at least this many agent ticks (the RTT may be unknown)
RECOUNT_TICKS = 20  # the table is recounted at least this often (100 ms at 5 ms ticks)
SCAN_TICKS = 20  # stale holders are looked for this often while slots pass on


def stale(now_ns: int, since_ns: int, last_ns: int, srtt_us: int, tick_s: float) -> bool:
    """Whether a holder has been idle long enough to lose its slot."""
    idle = now_ns - max(since_ns, last_ns)
    return idle > max(STALE_RTTS * srtt_us * 1000, STALE_TICKS * tick_s * 1e9)


def window_update(key: FlowKey, r: RotFlow, field: int, ack: int | None = None) -> bytes:
    """The window update the data path would forge for flow `key` from its
    rotation record `r` (its last pure ACK's headers, sequence number and
    timestamps), offering `field`, with `ack` if given, else r's."""
    e = RotEntry(
        state=r.state,
        seq_next=r.seq_next,
        ack=r.ack if ack is None else ack,
        tsval=r.tsval,
        tsecr=r.tsecr,
        hdr=bytes(r.hdr[:ROT_HDR_LEN]),
    )
    return forged_update(e, key.as_tuple(), field)


@dataclass
class RescueCounts:
    reclaimed: int = 0  # slots taken back from idle holders
    granted: int = 0  # window updates sent from userspace
    requeued: int = 0  # times waiting flows were missing from the queue
    recounted: int = 0  # times the counters had drifted from the table


class Rescuer:
    """One agent's rescue: `step` once per tick."""

    def __init__(
        self,
        rx: RxWin,
        iface: str,
        budget_bytes: int,
        tick_s: float,
        trace: TextIO | None = None,
        *,
        ack_cost: int = 0,
    ) -> None:
        self.rx, self.budget, self.tick_s = rx, budget_bytes, tick_s
        self.ack_cost = ack_cost  # what one acknowledgment due takes of the budget
        self.trace = trace  # one JSON line per tick: counts, every flow's state, what we did
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, RX_CLONE_MARK)
        self.sock.bind((iface, 0))
        self.counts = RescueCounts()
        self.ticks = 0
        self.drift: tuple[int, int] | None = None  # the last recount's difference
        self.scanned_ns = 0  # when the last scan ran
        self.seen_grants = -1  # the grant count at the last tick

    def close(self) -> None:
        self.sock.close()

    def step(self, now_ns: int) -> None:
        g = self.rx.rotation()
        self.ticks += 1
        # While no flow waits by the count, the table is still read every
        # RECOUNT_TICKS ticks: a count that drifted to 0 would strand waiting
        # flows.
        if g.waiting <= 0 and self.ticks % RECOUNT_TICKS:
            if self.trace is not None:  # observe only: the rescue does nothing this tick
                self._trace(now_ns, g, -1, self.rx.rot_flows(), 0, [])
            return
        # The scan walks every bucket of the table (0.3 ms at 16384 entries).
        # While slots pass on (grants move), a holder with nothing to send
        # only costs its slot: scan every SCAN_TICKS. When grants stop, every
        # slot may be held by such flows: scan every STALE_TICKS, the least a
        # holder can be idle before it is stale. In between, the counters say
        # what is free.
        period = STALE_TICKS if g.grants == self.seen_grants else SCAN_TICKS
        self.seen_grants = g.grants
        open_, waiting, took = g.open, g.waiting, 0
        if now_ns >= self.scanned_ns + period * self.tick_s * 1e9:
            self.scanned_ns = now_ns
            open_, waiting, took = self.rx.rot_scan(
                now_ns, int(STALE_TICKS * self.tick_s * 1e9), STALE_RTTS
            )
            self.counts.reclaimed += took
        gave: list[str] = []
        mss = g.mss or DEFAULT_MSS
        h = rotation_slots(
            g.slots, self.budget, self.rx.budget_flows(), mss, int(g.due), self.ack_cost
        )
        refilled = False
        while open_ < h and waiting > 0:
            key = self.rx.rotq_pop()
            if key is None and not refilled:
                # Flows wait by the table but not in the queue: put them back
                # (a duplicate entry is skipped once its flow holds a slot).
                ents = self.rx.rot_flows()
                for k, r in ents:
                    if r.state == ROT_WAIT:
                        self.rx.rotq_push(k)
                refilled = True
                self.counts.requeued += 1
                continue
            if key is None:
                break
            r = self.rx.rot_flow(key)
            if r is None or r.state != ROT_WAIT:
                continue  # an entry of a flow that ended or left the queue
            f = self.rx.flow(key)
            if f is None or not r.has_hdr:
                self.rx.rotq_push(key)
                break
            # The slot first, then the update (as the data path does): the
            # segment it lets out must find the flow a holder.
            if not self.rx.rot_grant(key):
                continue
            self._send(key, r, grant_field(f.mss, f.wscale))
            open_, waiting = open_ + 1, waiting - 1
            self.counts.granted += 1
            gave.append(key.as_tuple()[0])
        if self.trace is not None:
            self._trace(now_ns, g, h, self.rx.rot_flows(), took, gave)
        if self.ticks % RECOUNT_TICKS == 0:
            self._recount()

    def _recount(self) -> None:
        """Repair counters that drifted from the table (a flow ended while it
        was being granted, an entry the LRU evicted). A count read while a
        flow changes state differs from the counters for a moment; a drift
        differs by the same amount twice in a row, and only then is added."""
        open_, waiting = self.rx.rot_count()
        g = self.rx.rotation()
        delta = (open_ - g.open, waiting - g.waiting)
        if delta == (0, 0):
            self.drift = None
        elif delta == self.drift:
            self.rx.rot_adjust(*delta)
            self.counts.recounted += 1
            self.drift = None
        else:
            self.drift = delta

    def _trace(self, now_ns: int, g, h: int, ents, took: int, gave) -> None:
        """One tick: the counters as the data path left them before the
        rescue (H -1: not computed on a quiet tick), each flow's state after
        it by its remote address (0 idle, 1 holds a slot, 2 waits), how many
        slots the rescue took back, the flows it granted."""
        states = {k.as_tuple()[0]: r.state for k, r in ents}
        rec = {
            "t_ns": now_ns,
            "H": h,
            "slots": g.slots,
            "open": g.open,
            "waiting": g.waiting,
            "grants": g.grants,
            "states": {a: states[a] for a in sorted(states)},
            "took": took,
            "gave": gave,
        }
        assert self.trace is not None  # called only with a trace
        self.trace.write(json.dumps(rec, separators=(",", ":")) + "\n")

    def _send(self, key: FlowKey, r: RotFlow, field: int) -> None:
        self.sock.send(window_update(key, r, field))
