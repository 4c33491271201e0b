"""NewDCTCP-rx: NewDCTCP's rate rule, enforced by the receiver's advertised window.

Reference for agent/bpf/rxwin_rules.h (window_end) and rxwin_write.h
(enforce_field); reference.py runs it per packet, and the conformance test
drives one packet trace through both and compares the advertised windows
exactly.

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
above MAX_WSCALE, 14, count as it, RFC 7323). MSS = min of the MSS options seen
(DEFAULT_MSS, 536, when none; at least MIN_MSS, 88: agent/bpf/rx_tcp.h), minus
12 when both SYNs carried timestamps. Flows whose
handshake was not seen are measured but never rewritten. FIN or RST ends the
flow. The BPF program additionally skips flows with min RTT above 2 ms and
restarts W after idle; both need a clock and are not part of this reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from p4incast.agent.policies.frames import TcpOptions, s32, u32
from p4incast.model.scheme import RX_MIN_SEGS
from p4incast.policies.rxwin_h import RXWIN

__all__ = ["DEFAULT_MSS", "MAX_WSCALE", "MIN_MSS", "RxFlow", "next_window"]

# the data path's TCP limits (agent/bpf/rx_tcp.h, read through rxwin.h)
DEFAULT_MSS = RXWIN.RX_DEFAULT_MSS
MAX_WSCALE = RXWIN.RX_MAX_WSCALE
MIN_MSS = RXWIN.RX_MIN_MSS


def next_window(
    w: int, n: int, m: int, mss: int, marked: bool, max_w: int, min_segs: int = RX_MIN_SEGS
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


@dataclass
class RxFlow:
    """Per-flow state of the reference (the subset of struct flow that matters)."""

    init_segs: int
    max_w: int
    min_segs: int = RX_MIN_SEGS
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
    # W of a new flow, bytes, when a policy sets it (newdctcp-budget: B, which
    # its cap brings down to the share); 0 = init_segs·MSS
    start_w: int = 0

    def __post_init__(self) -> None:
        self.w = self.start_w or self.init_segs * DEFAULT_MSS

    @property
    def handshake(self) -> bool:
        return self.peer_syn and self.local_syn

    def note_syn(self, side: str, opts: TcpOptions) -> None:
        """A SYN from `side` ("peer": the sender's, "local": ours) and its options:
        window scale (capped at MAX_WSCALE), MSS, timestamps."""
        setattr(self, f"{side}_syn", True)
        if opts.ws is not None:
            setattr(self, f"{side}_ws", min(opts.ws, MAX_WSCALE))
        if opts.mss is not None:
            setattr(self, f"{side}_mss", opts.mss)
        if opts.ts is not None:
            setattr(self, f"{side}_ts", True)

    def finish_handshake(self) -> None:
        """Both SYNs seen: scale, MSS, W = init_segs·MSS (or start_w); the flow
        counts in a budget from now on."""
        if not self.handshake:
            return
        self.counted = True
        both_ws = self.peer_ws is not None and self.local_ws is not None
        self.wscale = cast(int, self.local_ws) if both_ws else 0  # both_ws: not None
        cands = [m for m in (self.local_mss, self.peer_mss) if m]
        mss = min(cands) if cands else DEFAULT_MSS
        mss = max(mss, MIN_MSS)
        if self.peer_ts and self.local_ts:
            mss -= 12
        self.mss = mss
        self.w = self.start_w or self.init_segs * mss
        self.marked = False
        self.win_bytes = self.win_pkts = self.win_ce = 0

    def on_data(
        self, seq: int, payload: int, ce: bool, cap: Callable[[int], int] | None = None
    ) -> int:
        """One data packet; at a window end W follows next_window, then `cap`
        (a policy's bound on W: newdctcp-budget's budget.budget_window).
        Returns the new bytes it brought."""
        end = u32(seq + payload)
        self.pkts += 1
        self.ce += ce
        self.last_len = payload
        if self.hi_seq is None:
            self.hi_seq = seq
        nb = 0
        if s32(end - self.hi_seq) > 0:
            nb = u32(end - self.hi_seq)
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
                self.w = cap(self.w)
            self.win_bytes = self.win_pkts = self.win_ce = 0
            self.windows.append(self.w)
        return nb

    def ack_field(self, ack: int, kernel_field: int, w: int | None, zero: int = 0) -> int:
        """Window field to send on an ACK; w None = do not clamp (observe);
        zero: 0, or close the window, as far as the right edge allows
        (RX_CLOSE_EDGE) or completely (RX_CLOSE_ALL: the flow's data ended)."""
        ws = self.wscale
        out = kernel_field
        if w or zero:
            want = 0 if zero or w is None else (w + (1 << ws) - 1) >> ws
            if self.last_re is not None and zero != RXWIN.RX_CLOSE_ALL:
                d = u32(self.last_re - ack)
                if s32(d) > 0:
                    want = max(want, (d + (1 << ws) - 1) >> ws)
            out = min(kernel_field, want)
        self.last_re = u32(ack + (out << ws))
        return out
