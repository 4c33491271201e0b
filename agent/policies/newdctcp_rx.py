"""NewDCTCP-rx: NewDCTCP's rate rule, enforced by the receiver's advertised window.

Reference for agent/bpf/rxwin.bpf.c; the conformance test drives one packet
trace through both and compares the advertised windows exactly.

Sender rule being moved to the receiver (NewDCTCP, Sreekumari, Jung, Lee,
"An early congestion feedback and rate adjustment schemes for many-to-one
communication in cloud-based data center networks", Springer 2015): on a
marked window, cwnd = max(cwnd/2, A·MSS) with A = packets of the window minus
the marked ones; unmarked windows grow as NewReno. At the receiver
(docs/algorithms.md §3), per flow, with W in bytes:

    window of data = W new bytes received
    at its end, n packets and m of them CE:
        m > 0:  W <- max(W/2, (n - m)·MSS), at least min_segs·MSS; slow start is over
        m = 0:  W <- 2·W before the first mark (slow start), W + MSS after
    W <= max_w (default 4 MiB); W starts at init_segs·MSS (default 10)

enforced on each ACK we send, RE being the right edge of the previous ACK:

    field = min(kernel_field, max(ceil(W / 2^ws), ceil((RE - ack) / 2^ws)))

so the right edge never moves left (the window shrinks by at most the newly
acknowledged bytes; ICTCP, Wu et al., ToN 2013, makes the same point).

Two choices beyond docs/algorithms.md §3, both because a receiver that offers
room for one segment only makes the sender wait for the receiver's delayed
ACK (40 ms on Linux) and collapses the flow: the floor is min_segs MSS
(default 2, as ICTCP's minimum; 1 gives the literal rule), and W / 2^ws is
rounded up, not down (W >> ws at scale 9 turns 2 MSS into 1.77 MSS). The
window scale ws is ours when both SYNs carried the option (else 0; values
above 14 count as 14, RFC 7323). MSS = min of the MSS options seen (536 when
none, at least 88), minus 12 when both SYNs carried timestamps. Flows whose
handshake was not seen are measured but never rewritten. FIN or RST ends the
flow. The BPF program additionally skips flows with min RTT above 2 ms and
restarts W after idle; both need a clock and are not part of this reference.

newdctcp-budget (ours, not in a paper): the same W, capped by an even share of
a receiver-wide budget B (bytes; what the bottleneck can hold, queue plus
bandwidth-delay product):

    share = max(B // F, min_segs·MSS),   F = flows whose handshake was seen
    W starts at init_segs·MSS, uncapped: a window already advertised cannot
      be taken back when more flows arrive, so it starts small and earns its
      share (the engines run this policy with init_segs = BUDGET_INIT_SEGS, 2:
      a Linux sender never sends segments larger than half the largest window
      it was offered, and the handshake's window is the first one it sees)
    W <- min(W, share)   at every window end, in whole segments (at least one)
    enforced the same way on each ACK (the share shrinks when a flow arrives)
    the handshake's ACK of a flow we opened: a copy offering W goes out
      first, then the ACK itself with a zero window. The sender's segments
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
"""

from __future__ import annotations

import struct
from collections import deque
from dataclasses import dataclass, field

from p4incast.agent.policies.rcc import equal_share
from p4incast.model.scheme import BUDGET_AGENT as BUDGET_POLICY

# rxwin.h: rotation states, the fixed point of its sum, the forged frame
ROT_IDLE, ROT_HOLD, ROT_WAIT = 0, 1, 2
ROT_HDR_LEN, ROT_FRAME_LEN = 34, 66

__all__ = [
    "BUDGET_POLICY",
    "ROT_HDR_LEN",
    "ROT_HOLD",
    "ROT_IDLE",
    "ROT_WAIT",
    "RotEntry",
    "forged_update",
    "grant_field",
    "rotation_ceiling",
    "rotation_slots",
    "rotation_window_end",
    "tcp_checksum",
    "DEFAULT_MSS",
    "MAX_WSCALE",
    "Frame",
    "RxFlow",
    "RxReference",
    "TcpOptions",
    "budget_share",
    "budget_window",
    "next_window",
    "parse_frame",
    "parse_options",
]

DEFAULT_MSS = 536
MAX_WSCALE = 14
MIN_MSS = 88
FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10


@dataclass
class TcpOptions:
    mss: int | None = None
    ws: int | None = None
    ts: tuple[int, int] | None = None  # (TSval, TSecr)
    bad: bool = False


def parse_options(raw: bytes) -> TcpOptions:
    """TCP options as tcp_parse_options() reads them (EOL ends, NOP is 1 byte, a
    bad length stops parsing and keeps what was read; known kinds with the
    wrong length are ignored and flagged)."""
    o = TcpOptions()
    if len(raw) > 40:
        o.bad = True
        return o
    i, n = 0, len(raw)
    while i < n:
        kind = raw[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= n:
            o.bad = True
            break
        ln = raw[i + 1]
        if ln < 2 or i + ln > n:
            o.bad = True
            break
        body = raw[i + 2 : i + ln]
        if kind == 2:
            if ln == 4:
                o.mss = struct.unpack("!H", body)[0]
            else:
                o.bad = True
        elif kind == 3:
            if ln == 3:
                o.ws = body[0]
            else:
                o.bad = True
        elif kind == 8:
            if ln == 10:
                o.ts = struct.unpack("!II", body)  # type: ignore[assignment]
            else:
                o.bad = True
        i += ln
    return o


@dataclass(frozen=True)
class Frame:
    """The fields of one Ethernet/IPv4/TCP frame that the data path reads."""

    saddr: str
    daddr: str
    sport: int
    dport: int
    seq: int
    ack: int
    flags: int
    window: int
    ecn: int
    payload: int
    opts: TcpOptions

    def key_in(self) -> tuple[str, int, str, int]:
        """Flow key of a packet arriving at the receiver: (remote, rport, local, lport)."""
        return (self.saddr, self.sport, self.daddr, self.dport)

    def key_out(self) -> tuple[str, int, str, int]:
        return (self.daddr, self.dport, self.saddr, self.sport)


def parse_frame(b: bytes) -> Frame | None:
    """Ethernet + IPv4 (unfragmented) + TCP, else None — what rxwin.bpf.c accepts."""
    if len(b) < 14 + 20 or struct.unpack("!H", b[12:14])[0] != 0x0800:
        return None
    ip = b[14:]
    if ip[0] >> 4 != 4 or ip[9] != 6:
        return None
    if struct.unpack("!H", ip[6:8])[0] & 0x3FFF:
        return None
    ihl = (ip[0] & 15) * 4
    if ihl < 20 or len(ip) < ihl + 20:
        return None
    tot = struct.unpack("!H", ip[2:4])[0]
    t = ip[ihl:]
    sport, dport, seq, ack, offres, flags, window = struct.unpack("!HHIIBBH", t[:16])
    doff = (offres >> 4) * 4
    if doff < 20 or tot < ihl + doff:
        return None
    raw_opts = t[20:doff]
    opts = parse_options(raw_opts) if len(raw_opts) == doff - 20 else TcpOptions(bad=True)
    return Frame(
        saddr=".".join(map(str, ip[12:16])),
        daddr=".".join(map(str, ip[16:20])),
        sport=sport,
        dport=dport,
        seq=seq,
        ack=ack,
        flags=flags,
        window=window,
        ecn=ip[1] & 3,
        payload=tot - ihl - doff,
        opts=opts,
    )


def next_window(
    w: int, n: int, m: int, mss: int, marked: bool, max_w: int, min_segs: int = 2
) -> tuple[int, bool]:
    """One end of a window of data: (new W, slow start over)."""
    if m > 0:
        w = max(w // 2, (n - m) * mss, min_segs * mss)
        marked = True
    elif not marked:
        w = 2 * w
    else:
        w = w + mss
    return min(w, max_w), marked


def budget_share(budget: int, flows: int, mss: int, min_segs: int) -> int:
    """newdctcp-budget: one flow's share of the receiver-wide budget, bytes."""
    return max(budget // max(flows, 1), min_segs * mss)


def budget_window(w: int, share: int, mss: int) -> int:
    """newdctcp-budget's W: min(W, share) in whole segments, at least one. A window
    that ends inside a segment makes a window-limited sender (TCP_NODELAY, or
    nothing in flight) send the rest as a runt: two packets for one segment's
    worth, and a queue that counts packets (BMv2's) fills twice as fast."""
    return max(min(w, share) // mss * mss, mss)


def rotation_ceiling(budget: int, flows: int, mss: int) -> int:
    """The rotation's H at most: one slot per flow, no more segments than B."""
    return min(max(flows, 1), max(budget // mss, 1))


def rotation_slots(h: int, ceiling: int) -> int:
    """H now (rxwin.bpf.c rot_slots): the controller's value within [1, ceiling],
    the ceiling until the first window of data ends (h <= 0)."""
    return ceiling if h <= 0 or h > ceiling else h


def grant_field(mss: int, wscale: int) -> int:
    """The window field of a grant: one segment, rounded up to the scale."""
    return (mss + (1 << wscale) - 1) >> wscale


def rotation_window_end(h: int, n: int, m: int, floor_ce: int, ceiling: int) -> int:
    """The end of the receiver's window of data (H segments of new bytes from all
    flows): NewDCTCP's rule on H — max(H/2, n - m) when a flow already at one
    segment saw CE, else H + 1 — within [1, ceiling]."""
    h = max(h // 2, n - m) if floor_ce else h + 1
    return max(1, min(h, ceiling))


def _u32(x: int) -> int:
    return x & 0xFFFFFFFF


def _s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


@dataclass
class RxFlow:
    """Per-flow state of the reference (the subset of struct flow that matters)."""

    init_segs: int
    max_w: int
    min_segs: int = 2
    peer_syn: bool = False
    local_syn: bool = False
    peer_ws: int | None = None
    local_ws: int | None = None
    peer_mss: int = 0
    local_mss: int = 0
    peer_ts: bool = False
    local_ts: bool = False
    mss: int = DEFAULT_MSS
    wscale: int = 0
    w: int = 0
    marked: bool = False
    hi_seq: int | None = None
    win_bytes: int = 0
    win_pkts: int = 0
    win_ce: int = 0
    pkts: int = 0
    ce: int = 0
    last_re: int | None = None
    counted: bool = False  # handshake complete: shares the budget
    last_len: int = 0  # payload of the last data packet
    windows: list[int] = field(default_factory=list)  # W after each window end

    def __post_init__(self) -> None:
        self.w = self.init_segs * DEFAULT_MSS

    @property
    def handshake(self) -> bool:
        return self.peer_syn and self.local_syn

    def finish_handshake(self) -> None:
        """Both SYNs seen: scale, MSS, W = init_segs·MSS; the flow counts in a
        budget from now on."""
        if not self.handshake:
            return
        self.counted = True
        both_ws = self.peer_ws is not None and self.local_ws is not None
        self.wscale = self.local_ws if both_ws else 0  # type: ignore[assignment]
        cands = [m for m in (self.local_mss, self.peer_mss) if m]
        mss = min(cands) if cands else DEFAULT_MSS
        mss = max(mss, MIN_MSS)
        if self.peer_ts and self.local_ts:
            mss -= 12
        self.mss = mss
        self.w = self.init_segs * mss
        self.marked = False
        self.win_bytes = self.win_pkts = self.win_ce = 0

    def on_data(self, seq: int, payload: int, ce: bool, cap: int | None = None) -> int:
        """One data packet; `cap` = the budget's share, which caps W at a window end.
        Returns the new bytes it brought."""
        end = _u32(seq + payload)
        self.pkts += 1
        self.ce += ce
        self.last_len = payload
        if self.hi_seq is None:
            self.hi_seq = seq
        nb = 0
        if _s32(end - self.hi_seq) > 0:
            nb = _u32(end - self.hi_seq)
            self.hi_seq = end
        self.win_pkts += 1
        self.win_ce += ce
        self.win_bytes += nb
        if self.win_bytes >= self.w:
            self.w, self.marked = next_window(
                self.w,
                self.win_pkts,
                self.win_ce,
                self.mss,
                self.marked,
                self.max_w,
                self.min_segs,
            )
            if cap is not None:
                self.w = budget_window(self.w, cap, self.mss)
            self.win_bytes = self.win_pkts = self.win_ce = 0
            self.windows.append(self.w)
        return nb

    def ack_field(self, ack: int, kernel_field: int, w: int | None, zero: bool = False) -> int:
        """Window field to send on an ACK; w None = do not clamp (observe);
        zero: close the window (as far as the right edge allows)."""
        ws = self.wscale
        out = kernel_field
        if w or zero:
            want = 0 if zero else (w + (1 << ws) - 1) >> ws
            if self.last_re is not None:
                d = _u32(self.last_re - ack)
                if _s32(d) > 0:
                    want = max(want, (d + (1 << ws) - 1) >> ws)
            out = min(kernel_field, want)
        self.last_re = _u32(ack + (out << ws))
        return out


@dataclass
class RotEntry:
    """Rotation state of one flow (struct rot_flow)."""

    state: int = ROT_IDLE
    seq_next: int = 0
    ack: int = 0
    tsval: int = 0
    tsecr: int = 0
    hdr: bytes | None = None  # Ethernet + IPv4 header of our last pure ACK


def tcp_checksum(src: bytes, dst: bytes, segment: bytes) -> int:
    """Internet checksum of a TCP segment (its check field zero) and pseudo-header."""
    data = src + dst + struct.pack("!BBH", 0, 6, len(segment)) + segment
    if len(data) % 2:
        data += b"\x00"
    x = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while x >> 16:
        x = (x & 0xFFFF) + (x >> 16)
    return ~x & 0xFFFF


def forged_update(r: RotEntry, key: tuple[str, int, str, int], field: int) -> bytes:
    """The window update the rotation sends for a waiting flow: its last pure
    ACK's Ethernet and IP headers, our next sequence number, its ack and
    timestamps, the window `field`, a full TCP checksum."""
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


class RxReference:
    """The whole data path in Python: feed frames in order, get egress windows back."""

    def __init__(
        self,
        policy: str = "newdctcp-rx",
        init_segs: int = 10,
        max_w: int = 4 << 20,
        min_segs: int = 2,
        budget: int = 0,
        rotate: int = 0,
        share_pkts: int = 0,
    ) -> None:
        self.policy = policy
        self.share_pkts = share_pkts  # rcc: Q, a new flow's window is its share
        self.budget = budget
        self.rotate = rotate if policy == BUDGET_POLICY else 0
        self.h = 0  # the rotation's H; 0 = not set yet (the ceiling)
        self.rot_mss = DEFAULT_MSS  # MSS of the last flow that sent an ACK
        self.win_bytes = self.win_pkts = self.win_ce = self.win_floor_ce = 0
        self.rot: dict[tuple[str, int, str, int], RotEntry] = {}
        self.rotq: deque[tuple[str, int, str, int]] = deque()
        self.open = 0  # flows holding a slot
        self.waiting = 0  # flows in rotq
        # every window update the rotation forged, in order (whole frames)
        self.forged: list[bytes] = []
        self.init_segs = init_segs
        self.max_w = max_w
        self.min_segs = min_segs
        self.flows: dict[tuple[str, int, str, int], RxFlow] = {}
        self.user_w: dict[tuple[str, int, str, int], int] = {}
        # (flow, window field) of each copy the data path sends ahead of an ACK
        self.copies: list[tuple[tuple[str, int, str, int], int]] = []

    def share(self, mss: int) -> int:
        """newdctcp-budget: a flow's share of the budget now."""
        flows = sum(1 for f in self.flows.values() if f.counted)
        return budget_share(self.budget, flows, mss, self.min_segs)

    def slots(self, mss: int) -> int:
        """Rotation: H, how many flows may hold a window at once (the ceiling
        until the first window of data ends)."""
        flows = sum(1 for f in self.flows.values() if f.counted)
        return rotation_slots(self.h, rotation_ceiling(self.budget, flows, mss))

    def _rot_data(self, f: RxFlow, nb: int, ce: bool, w_before: int) -> None:
        """rxwin.bpf.c rot_on_data: one data packet in the receiver's window of data."""
        self.win_bytes += nb
        self.win_pkts += 1
        self.win_ce += ce
        self.win_floor_ce += ce and w_before <= f.mss
        h = self.slots(f.mss)
        if self.win_bytes < h * f.mss:
            return
        flows = sum(1 for g in self.flows.values() if g.counted)
        self.h = rotation_window_end(
            h,
            self.win_pkts,
            min(self.win_ce, self.win_pkts),
            self.win_floor_ce,
            rotation_ceiling(self.budget, flows, f.mss),
        )
        self.win_bytes = self.win_pkts = self.win_ce = self.win_floor_ce = 0

    def _new(self, key: tuple[str, int, str, int]) -> RxFlow:
        self._end(key)
        f = RxFlow(self.init_segs, self.max_w, self.min_segs)
        self.flows[key] = f
        return f

    def _end(self, key: tuple[str, int, str, int]) -> None:
        self.flows.pop(key, None)
        self.user_w.pop(key, None)
        r = self.rot.pop(key, None)
        if r is not None and r.state == ROT_HOLD:
            self.open -= 1
        elif r is not None and r.state == ROT_WAIT:
            self.waiting -= 1

    def _grant(self, frame_len: int) -> bool:
        """The head of the queue takes a slot through a forged window update of
        one segment; entries of flows that ended or left the queue are skipped.
        True when a flow got its window."""
        if frame_len != ROT_FRAME_LEN:
            return False
        for _ in range(4):
            if not self.rotq:
                return False
            bk = self.rotq.popleft()
            br = self.rot.get(bk)
            if br is None or br.state != ROT_WAIT:
                continue
            bf = self.flows.get(bk)
            if bf is None or br.hdr is None:
                self.rotq.append(bk)
                return False
            self.forged.append(forged_update(br, bk, grant_field(bf.mss, bf.wscale)))
            br.state = ROT_HOLD
            self.waiting -= 1
            self.open += 1
            return True
        return False

    def _fill(self, frame_len: int) -> None:
        """rxwin.bpf.c rot_fill: a free slot goes to the queue's head."""
        if self.rotate and self.waiting > 0 and self.open < self.slots(self.rot_mss):
            self._grant(frame_len)

    def _rot_note(self, key: tuple[str, int, str, int], p: Frame, b: bytes) -> RotEntry:
        """rxwin.bpf.c rot_note: what a forged update for the flow needs, from each
        of its ACKs (the handshake's included)."""
        r = self.rot.setdefault(key, RotEntry())
        r.seq_next = _u32(p.seq + p.payload)
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

    def _rotate(
        self, key: tuple[str, int, str, int], r: RotEntry, f: RxFlow, p: Frame, b: bytes, w: int
    ) -> tuple[int, bool]:
        """rxwin.bpf.c rotate_ack: (W to enforce, close the window)."""
        self.rot_mss = f.mss
        h = self.slots(f.mss)
        zero = to_wait = False
        if r.state == ROT_IDLE:
            if self.open < h and self.waiting <= 0:
                r.state = ROT_HOLD
                self.open += 1
            else:
                r.state, to_wait, zero = ROT_WAIT, True, True
        elif r.state == ROT_HOLD:
            runt = 0 < f.last_len < f.mss and p.ack == f.hi_seq
            end = runt or (f.last_re is not None and _s32(f.last_re - p.ack) < f.mss)
            release = False
            if end:
                if self.open > h or runt:
                    release = True
                elif self.waiting > 0 and self.open >= h:
                    release = self._grant(len(b))  # hand the slot on, or keep it
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
            self._grant(len(b))
        if to_wait:
            self.rotq.append(key)
            self.waiting += 1
        return w, zero

    def ingress(self, b: bytes) -> None:
        p = parse_frame(b)
        if p is None or self.policy == "off":
            return
        key = p.key_in()
        if p.flags & (RST | FIN):
            self._end(key)
            return
        f = self.flows.get(key)
        if p.flags & SYN:
            if not p.flags & ACK or f is None:
                f = self._new(key)
            f.peer_syn = True
            if p.opts.ws is not None:
                f.peer_ws = min(p.opts.ws, MAX_WSCALE)
            if p.opts.mss is not None:
                f.peer_mss = p.opts.mss
            if p.opts.ts is not None:
                f.peer_ts = True
            f.hi_seq = _u32(p.seq + 1)
            f.finish_handshake()
            return
        if f is None:
            if p.payload == 0:
                return
            f = self._new(key)
        if p.payload:
            cap = self.share(f.mss) if self.policy == BUDGET_POLICY else None
            w_before = f.w
            nb = f.on_data(p.seq, p.payload, p.ecn == 3, cap)
            if self.rotate and f.counted:
                self._rot_data(f, nb, p.ecn == 3, w_before)

    def egress(self, b: bytes) -> int | None:
        """Window field the data path would send (None: frame not an ACK of a flow)."""
        p = parse_frame(b)
        if p is None or self.policy == "off":
            return None
        key = p.key_out()
        if p.flags & (RST | FIN):
            self._end(key)
            self._fill(len(b))
            return None
        f = self.flows.get(key)
        if p.flags & SYN:
            if not p.flags & ACK or f is None:
                f = self._new(key)
            f.local_syn = True
            if p.opts.ws is not None:
                f.local_ws = min(p.opts.ws, MAX_WSCALE)
            if p.opts.mss is not None:
                f.local_mss = p.opts.mss
            if p.opts.ts is not None:
                f.local_ts = True
            f.finish_handshake()
            return None
        if f is None or not p.flags & ACK:
            self._fill(len(b))
            return None
        w: int | None = None
        if f.handshake and self.policy not in ("observe",):
            if self.policy == "newdctcp-rx":
                w = f.w
            elif self.policy == BUDGET_POLICY:
                rot = self.rotate and f.peer_ts and f.local_ts  # a forged update repeats them
                r = self._rot_note(key, p, b) if rot else None
                w = budget_window(f.w, self.share(f.mss), f.mss)
                if f.last_re is None and not f.pkts and not p.payload:
                    # the handshake's ACK of a flow we opened: a copy offering
                    # the initial window first, then this ACK with a zero window
                    self.copies.append((key, f.ack_field(p.ack, p.window, f.w)))
                    return f.ack_field(p.ack, 0, None)
                if r is not None:
                    w, zero = self._rotate(key, r, f, p, b, w)
                    return f.ack_field(p.ack, p.window, w, zero)
            else:  # ictcp / rcc: userspace's W; until it writes one, rcc's share
                # of Q (share_pkts) or the initial window
                flows = sum(1 for g in self.flows.values() if g.counted)
                unset = (
                    max(equal_share(self.share_pkts, flows), self.init_segs) * f.mss
                    if self.share_pkts
                    else self.init_segs * f.mss
                )
                w = self.user_w.get(key, unset)
        return f.ack_field(p.ack, p.window, w)
