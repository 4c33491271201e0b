"""The rotation's userspace half: slots held by flows with nothing to send.

The data path (agent/bpf/rxwin.bpf.c, rotate_ack) passes a slot on at the end
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
  window update the data path forges (policies/newdctcp_rx.forged_update),
  through a packet socket whose mark the data path lets pass.

It also recounts the holders and the waiting flows from the table, which
repairs the counters if concurrent updates made them drift, and puts waiting
flows the queue has lost back on it. It does this
every RECOUNT_TICKS ticks even when the count says no flow waits.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from p4incast.agent.datapath import FlowKey, RotFlow, RxWin
from p4incast.agent.policies.newdctcp_rx import (
    DEFAULT_MSS,
    ROT_HDR_LEN,
    ROT_HOLD,
    ROT_IDLE,
    ROT_WAIT,
    RotEntry,
    forged_update,
    grant_field,
    rotation_ceiling,
    rotation_slots,
)

__all__ = ["RX_CLONE_MARK", "STALE_RTTS", "STALE_TICKS", "Rescuer", "stale"]

RX_CLONE_MARK = 0x50344943  # rxwin.h: packets with this mark pass rx_egress untouched
STALE_RTTS = 4  # a holder idle this many of its smoothed RTTs has nothing to send
STALE_TICKS = 2  # ... and at least this many agent ticks (the RTT may be unknown)
RECOUNT_TICKS = 20  # the table is recounted at least this often (100 ms at 5 ms ticks)


def stale(now_ns: int, since_ns: int, last_ns: int, srtt_us: int, tick_s: float) -> bool:
    """Whether a holder has been idle long enough to lose its slot."""
    idle = now_ns - max(since_ns, last_ns)
    return idle > max(STALE_RTTS * srtt_us * 1000, STALE_TICKS * tick_s * 1e9)


@dataclass
class RescueCounts:
    reclaimed: int = 0  # slots taken back from idle holders
    granted: int = 0  # window updates sent from userspace
    requeued: int = 0  # times waiting flows were missing from the queue


class Rescuer:
    """One agent's rescue: `step` once per tick."""

    def __init__(self, rx: RxWin, iface: str, budget_bytes: int, tick_s: float) -> None:
        self.rx, self.budget, self.tick_s = rx, budget_bytes, tick_s
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, RX_CLONE_MARK)
        self.sock.bind((iface, 0))
        self.counts = RescueCounts()
        self.ticks = 0

    def close(self) -> None:
        self.sock.close()

    def step(self, now_ns: int) -> None:
        g = self.rx.rotation()
        self.ticks += 1
        # While no flow waits by the count, the table is still read every
        # RECOUNT_TICKS ticks: a count that drifted to 0 (our write of the
        # counts races the data path's atomic adds) would strand waiting flows.
        if g.waiting <= 0 and self.ticks % RECOUNT_TICKS:
            return
        ents = self.rx.rot_flows()
        changed = False
        for key, r in ents:
            if r.state != ROT_HOLD:
                continue
            f = self.rx.flow(key)
            if f is None or stale(now_ns, r.since, f.last_ns, f.srtt_us, self.tick_s):
                r.state = ROT_IDLE
                self.rx.set_rot_flow(key, r)
                self.counts.reclaimed += 1
                changed = True
        open_ = sum(1 for _, r in ents if r.state == ROT_HOLD)
        waiting = sum(1 for _, r in ents if r.state == ROT_WAIT)
        mss = g.mss or DEFAULT_MSS
        h = rotation_slots(g.slots, rotation_ceiling(self.budget, self.rx.budget_flows(), mss))
        grants = g.grants
        refilled = False
        while open_ < h and waiting > 0:
            key = self.rx.rotq_pop()
            if key is None and not refilled:
                # Flows wait by the table but not in the queue: put them back
                # (a duplicate entry is skipped once its flow holds a slot).
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
            self._send(key, r, grant_field(f.mss, f.wscale))
            r.state, r.since = ROT_HOLD, now_ns
            self.rx.set_rot_flow(key, r)
            open_, waiting, grants = open_ + 1, waiting - 1, grants + 1
            self.counts.granted += 1
            changed = True
        if changed or (open_, waiting) != (g.open, g.waiting):
            self.rx.set_rotation_counts(open_, waiting, grants)

    def _send(self, key: FlowKey, r: RotFlow, field: int) -> None:
        e = RotEntry(
            state=r.state,
            seq_next=r.seq_next,
            ack=r.ack,
            tsval=r.tsval,
            tsecr=r.tsecr,
            hdr=bytes(r.hdr[:ROT_HDR_LEN]),
        )
        self.sock.send(forged_update(e, key.as_tuple(), field))
