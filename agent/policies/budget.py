"""newdctcp-budget: NewDCTCP-rx's W under a receiver-wide budget, and the rotation.

Ours, not in a paper (docs/algorithms.md §3.6). Reference for the budget's
hooks in agent/bpf/rxwin_hooks.h (budget_on_data, budget_on_ack), its rules
in rxwin_rules.h (budget_share, budget_cap), and for rxwin_rotation.h.

The same W as newdctcp_rx, capped by an even share of a receiver-wide budget B
(bytes; what the bottleneck's queue holds: a round's first flight lands in
it at once, before any ACK paces it):

    share = max(B // F, min_segs·MSS),   F = flows whose handshake was seen
    W starts at B, and the cap brings it to the share wherever it is used:
      a flow's first window is its share when our request opens it (a single
      flow: the whole budget, no slow start from a small window)
    W <- min(W, share)   on every data packet (before it counts) and at every
      window end, in whole segments (at least one)
    enforced the same way on each ACK (the share shrinks when a flow arrives)
    the handshake's ACK of a flow we opened: a copy offering init_segs·MSS
      (BUDGET_INIT_SEGS, 2) goes out first, then the ACK itself with a zero
      window. The sender's segments
      stay full-size (its bound is half the largest window offered), and our
      request, at the same sequence number, then opens the window at the
      share of that moment: a Linux sender ignores a smaller non-zero window
      there (tcp_may_update_window) but takes a zero one, and, with nothing
      to send, a zero window costs it nothing (a peer that speaks first
      waits for our first segment, or its persist timer)

Idle flows keep their share: the window a flow's last ACK advertised is what
its next burst may send at once, so the windows of all F flows, idle or not,
add up to at most B while B // F is above the floor (RCC's window assignment,
Xu et al. 2017, here with NewDCTCP-rx's reaction to CE inside each share).

Rotation (`rotate`), windows below one segment taken in turns: at most H
flows hold a window of one segment at once, the others wait in a FIFO with a
zero window, and H follows NewDCTCP's rule over the receiver's window of data
(H segments of new bytes from all flows):

    a flow whose W is already one segment saw CE:  H <- max(H/2, n - m)
    otherwise:                                     H <- H + 1
    1 <= H <= ceiling = min(F, B // MSS)          (H starts at the ceiling)

A holder's turn ends with the ACK that leaves less than a segment of the
window it was offered; the slot then goes back (H shrank), passes to the
queue's head by a window update forged for it (forged_update), or, after a
segment shorter than the MSS (the end of what it had to send), goes back
with the flow idle.
"""

from __future__ import annotations

import struct
from collections import deque
from dataclasses import dataclass

from p4incast.agent.policies.frames import ACK, Frame, s32, tcp_checksum, u32
from p4incast.agent.policies.newdctcp_rx import DEFAULT_MSS, RxFlow
from p4incast.model.scheme import BUDGET_AGENT as BUDGET_POLICY
from p4incast.policies.rxwin_h import RXWIN

__all__ = [
    "BUDGET_POLICY",
    "ROT_FRAME_LEN",
    "ROT_HDR_LEN",
    "ROT_HOLD",
    "ROT_IDLE",
    "ROT_WAIT",
    "RotEntry",
    "Rotation",
    "budget_share",
    "budget_window",
    "forged_update",
    "grant_field",
    "rotation_ceiling",
    "rotation_slots",
    "rotation_window_end",
]

# rxwin.h: rotation states, the forged frame (Ethernet + IPv4 header, whole)
ROT_IDLE, ROT_HOLD, ROT_WAIT = RXWIN.ROT_IDLE, RXWIN.ROT_HOLD, RXWIN.ROT_WAIT
ROT_HDR_LEN, ROT_FRAME_LEN = RXWIN.ROT_HDR_LEN, RXWIN.ROT_FRAME_LEN

Key = tuple[str, int, str, int]


def budget_share(budget: int, flows: int, mss: int, min_segs: int) -> int:
    """newdctcp-budget: one flow's share of the receiver-wide budget, bytes."""
    return max(budget // max(flows, 1), min_segs * mss)


def budget_window(w: int, share: int, mss: int) -> int:
    """newdctcp-budget's W: min(W, share) in whole segments, at least one. A window
    that ends inside a segment makes a window-limited sender (TCP_NODELAY, or
    nothing in flight) send the rest as a runt: two packets for one segment's
    worth, and a queue that counts packets (BMv2's) fills twice as fast."""
    return max(min(w, share) // mss * mss, mss)


def rotation_ceiling(budget: int, flows: int, mss: int, due: int = 0, ack_cost: int = 0) -> int:
    """The rotation's H at most: one slot per flow, no more segments than what B
    leaves beside the acknowledgments due (`due` flows owe one for data we sent
    them, each taking `ack_cost` bytes of B), at least one."""
    return min(max(flows, 1), max((budget - due * ack_cost) // mss, 1))


def rotation_slots(h: int, budget: int, flows: int, mss: int, due: int, ack_cost: int) -> int:
    """H now (rxwin_rotation.h rot_slots): the controller's value `h` within
    [1, ceiling]; until the first window of data ends (h <= 0) the start, the
    ceiling with every flow's acknowledgment counted as due (§3.6, "H's
    start")."""
    if h <= 0:
        return rotation_ceiling(budget, flows, mss, max(due, flows), ack_cost)
    return min(h, rotation_ceiling(budget, flows, mss, due, ack_cost))


def grant_field(mss: int, wscale: int) -> int:
    """The window field of a grant: one segment, rounded up to the scale."""
    return (mss + (1 << wscale) - 1) >> wscale


def rotation_window_end(h: int, n: int, m: int, floor_ce: int, ceiling: int) -> int:
    """The end of the receiver's window of data (H segments of new bytes from all
    flows): NewDCTCP's rule on H — max(H/2, n - m) when a flow already at one
    segment saw CE, else H + 1 — within [1, ceiling]."""
    h = max(h // 2, n - m) if floor_ce else h + 1
    return max(1, min(h, ceiling))


@dataclass
class RotEntry:
    """Rotation state of one flow (struct rot_flow)."""

    state: int = ROT_IDLE
    seq_next: int = 0
    ack: int = 0
    tsval: int = 0
    tsecr: int = 0
    hdr: bytes | None = None  # Ethernet + IPv4 header of our last pure ACK
    advanced: bool = False  # our last packet acknowledged more than the one before it
    due: bool = False  # we sent it data that no packet of its has acknowledged yet


def forged_update(r: RotEntry, key: Key, field: int) -> bytes:
    """The window update the rotation sends for a waiting flow: its last pure
    ACK's Ethernet and IP headers, our next sequence number, its ack and
    timestamps, the window `field`, a full TCP checksum (rxwin_forge.h)."""
    assert r.hdr is not None
    raddr, rport, laddr, lport = key

    def tcp(check: int) -> bytes:
        return struct.pack(
            "!HHIIBBHHH4sII",
            lport,
            rport,
            r.seq_next,
            r.ack,
            (ROT_FRAME_LEN - ROT_HDR_LEN) // 4 << 4,
            ACK,
            field,
            check,
            0,
            b"\x01\x01\x08\x0a",
            r.tsval,
            r.tsecr,
        )

    src, dst = bytes(map(int, laddr.split("."))), bytes(map(int, raddr.split(".")))
    return r.hdr + tcp(tcp_checksum(src, dst, tcp(0)))


class Rotation:
    """The rotation's receiver-wide state (struct rot_global, p4i_rot_flows,
    p4i_rotq) and what each packet does to it (rxwin_rotation.h)."""

    def __init__(self, budget: int, flows: dict[Key, RxFlow], ack_cost: int = 0) -> None:
        self.budget = budget
        self.ack_cost = ack_cost  # what one acknowledgment due takes of B, bytes
        self.due = 0  # flows whose acknowledgment of our data is due
        self.flows = flows  # the reference's flow table: F, and each flow's MSS
        self.h = 0  # H; 0 = not set yet (the ceiling)
        self.mss = DEFAULT_MSS  # MSS of the last flow that sent an ACK
        self.win_bytes = self.win_pkts = self.win_ce = self.win_floor_ce = 0
        self.entries: dict[Key, RotEntry] = {}
        self.queue: deque[Key] = deque()  # waiting flows (p4i_rotq)
        self.open = 0  # flows holding a slot
        self.waiting = 0  # flows in the queue
        # every window update the rotation forged, in order (whole frames)
        self.forged: list[bytes] = []

    def _counted(self) -> int:
        return sum(1 for f in self.flows.values() if f.counted)

    def _ceiling(self, mss: int) -> int:
        return rotation_ceiling(self.budget, self._counted(), mss, self.due, self.ack_cost)

    def slots(self, mss: int) -> int:
        """H, how many flows may hold a window at once (the start until the
        first window of data ends)."""
        return rotation_slots(self.h, self.budget, self._counted(), mss, self.due, self.ack_cost)

    def on_data(self, f: RxFlow, nb: int, ce: bool, w_before: int) -> None:
        """rot_on_data: one data packet in the receiver's window of data."""
        self.win_bytes += nb
        self.win_pkts += 1
        self.win_ce += ce
        self.win_floor_ce += ce and w_before <= f.mss
        h = self.slots(f.mss)
        if self.win_bytes < h * f.mss:
            return
        self.h = rotation_window_end(
            h,
            self.win_pkts,
            min(self.win_ce, self.win_pkts),
            self.win_floor_ce,
            self._ceiling(f.mss),
        )
        self.win_bytes = self.win_pkts = self.win_ce = self.win_floor_ce = 0

    def end(self, key: Key) -> None:
        """rot_end: the flow's slot or its place in the queue is counted out."""
        r = self.entries.pop(key, None)
        if r is not None and r.due:
            self.due -= 1
        if r is not None and r.state == ROT_HOLD:
            self.open -= 1
        elif r is not None and r.state == ROT_WAIT:
            self.waiting -= 1

    def grant(self, frame_len: int) -> bool:
        """rot_grant: the head of the queue takes a slot through a forged window
        update of one segment; entries of flows that ended or left the queue
        are skipped. True when a flow got its window."""
        if frame_len != ROT_FRAME_LEN:
            return False
        for _ in range(4):
            if not self.queue:
                return False
            bk = self.queue.popleft()
            br = self.entries.get(bk)
            if br is None or br.state != ROT_WAIT:
                continue
            bf = self.flows.get(bk)
            if bf is None or br.hdr is None:
                self.queue.append(bk)
                return False
            self.forged.append(forged_update(br, bk, grant_field(bf.mss, bf.wscale)))
            br.state = ROT_HOLD
            self.waiting -= 1
            self.open += 1
            return True
        return False

    def fill(self, frame_len: int) -> None:
        """rot_fill: a free slot goes to the queue's head."""
        if self.waiting > 0 and self.open < self.slots(self.mss):
            self.grant(frame_len)

    def note(self, key: Key, p: Frame, b: bytes) -> RotEntry:
        """rot_note: what a forged update for the flow needs, from each of its
        ACKs (the handshake's included)."""
        r = self.entries.setdefault(key, RotEntry())
        r.seq_next = u32(p.seq + p.payload)
        if p.payload and not r.due:
            r.due = True  # our data (a request): the flow owes its acknowledgment
            self.due += 1
        r.advanced = p.ack != r.ack
        r.ack = p.ack
        if p.opts.ts is not None:
            r.tsval, r.tsecr = p.opts.ts
        if (
            len(b) == ROT_FRAME_LEN
            and (b[14] & 15) == 5
            and not p.payload
            and p.opts.ts is not None
            and b[ROT_HDR_LEN + 20 : ROT_HDR_LEN + 24] == b"\x01\x01\x08\x0a"
        ):
            r.hdr = b[:ROT_HDR_LEN]
        return r

    def acked(self, key: Key, ack: int) -> None:
        """rot_acked: a packet of the flow (ingress) acknowledging all we sent it
        pays its acknowledgment due."""
        r = self.entries.get(key)
        if r is not None and r.due and s32(ack - r.seq_next) >= 0:
            r.due = False
            self.due -= 1

    def on_ack(
        self, key: Key, r: RotEntry, f: RxFlow, p: Frame, b: bytes, w: int
    ) -> tuple[int, int]:
        """rotate_ack: (W to enforce, 0 or how to close the window: RX_CLOSE_EDGE,
        RX_CLOSE_ALL when this ACK ends the flow's data)."""
        self.mss = f.mss
        h = self.slots(f.mss)
        zero = to_wait = False
        # this ACK newly acknowledges a short segment, the flow's latest
        runt = 0 < f.last_len < f.mss and p.ack == f.hi_seq and r.advanced
        if runt and r.state != ROT_HOLD:
            # its data ended while it held no slot: it stays out of the queue
            if r.state == ROT_WAIT:
                r.state = ROT_IDLE
                self.waiting -= 1
            zero = True
        elif r.state == ROT_IDLE:
            if self.open < h and self.waiting <= 0:
                r.state = ROT_HOLD
                self.open += 1
            else:
                r.state, to_wait, zero = ROT_WAIT, True, True
        elif r.state == ROT_HOLD:
            # an ACK of new data: one at the same ack leaves a grant's window
            end = runt or (r.advanced and f.last_re is not None and s32(f.last_re - p.ack) < f.mss)
            release = False
            if end:
                if self.open > h or runt:
                    release = True
                elif self.waiting > 0 and self.open >= h:
                    release = self.grant(len(b))  # hand the slot on, or keep it
            if release:
                self.open -= 1
                zero = True
                if runt:
                    r.state = ROT_IDLE
                else:
                    r.state, to_wait = ROT_WAIT, True
            elif self.waiting > 0 and w > f.mss:
                w = f.mss
        else:
            zero = True
        if self.waiting > 0 and self.open < h:
            self.grant(len(b))
        if to_wait:
            self.queue.append(key)
            self.waiting += 1
        if runt:  # its data ended: nothing of its window is left for it to use
            return w, RXWIN.RX_CLOSE_ALL
        return w, RXWIN.RX_CLOSE_EDGE if zero else 0
