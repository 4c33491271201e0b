"""Hand-built packet traces for the agent tests (scapy frames, in wire order).

The receiver (local, L) connects to the sender (remote, R), as the incast
client does; R then sends data, L acknowledges it. Each item is
(egress, frame): egress True = a frame L sends (through rx_egress).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

Item = tuple[bool, bytes]
L, R = "10.77.0.2", "10.77.0.1"
LPORT, RPORT = 40000, 5001


def have_root() -> bool:
    return os.geteuid() == 0


@dataclass
class FlowTrace:
    """Builds one flow's frames; seq/ack bookkeeping as a real pair would do."""

    lport: int = LPORT
    rport: int = RPORT
    laddr: str = L
    raddr: str = R
    l_isn: int = 1000
    r_isn: int = 5_000_000
    mss: int = 1448
    ts: bool = True
    ts_now: int = 100
    window: int = 2000  # kernel's window field on L's ACKs (x 2^7 = 256 KB)

    def __post_init__(self) -> None:
        self.r_next = (self.r_isn + 1) & 0xFFFFFFFF
        self.l_next = (self.l_isn + 1) & 0xFFFFFFFF
        self.rcv = self.r_next  # what L has received in order

    def _l(
        self,
        flags: str,
        *,
        seq: int,
        ack: int = 0,
        window: int | None = None,
        opts=None,
        payload: int = 0,
    ) -> bytes:
        o = list(opts or [])
        window = self.window if window is None else window
        if self.ts and not opts:
            o = [("NOP", None), ("NOP", None), ("Timestamp", (self.ts_now, self.ts_now))]
        p = (
            Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")
            / IP(src=self.laddr, dst=self.raddr, tos=0)
            / TCP(
                sport=self.lport,
                dport=self.rport,
                flags=flags,
                seq=seq,
                ack=ack,
                window=window,
                options=o,
            )
            / (b"r" * payload)
        )
        return bytes(p)

    def _r(
        self, flags: str, *, seq: int, ack: int = 0, payload: int = 0, tos: int = 2, opts=None
    ) -> bytes:
        o = list(opts or [])
        if self.ts and not opts:
            o = [("NOP", None), ("NOP", None), ("Timestamp", (self.ts_now + 7, self.ts_now))]
        p = (
            Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
            / IP(src=self.raddr, dst=self.laddr, tos=tos)
            / TCP(sport=self.rport, dport=self.lport, flags=flags, seq=seq, ack=ack, options=o)
            / (b"x" * payload)
        )
        return bytes(p)

    def handshake(
        self, l_opts: Sequence | None = None, r_opts: Sequence | None = None
    ) -> list[Item]:
        ts = [("Timestamp", (self.ts_now, 0))] if self.ts else []
        lo = list(l_opts) if l_opts is not None else [("MSS", 1460), ("WScale", 7), *ts]
        ro = list(r_opts) if r_opts is not None else [("MSS", 1460), ("WScale", 9), *ts]
        return [
            (True, self._l("S", seq=self.l_isn, opts=lo or [("NOP", None)])),
            (False, self._r("SA", seq=self.r_isn, ack=self.l_next, opts=ro or [("NOP", None)])),
            (True, self._l("A", seq=self.l_next, ack=self.r_next)),
        ]

    def data(self, ce: bool = False, size: int | None = None, seq: int | None = None) -> Item:
        size = self.mss if size is None else size
        s = self.r_next if seq is None else seq
        if seq is None:
            self.r_next = (self.r_next + size) & 0xFFFFFFFF
        end = (s + size) & 0xFFFFFFFF
        if s == self.rcv:
            self.rcv = end
        self.ts_now += 1
        return (False, self._r("PA", seq=s, ack=self.l_next, payload=size, tos=3 if ce else 2))

    def ack(self, window: int | None = None) -> Item:
        return (True, self._l("A", seq=self.l_next, ack=self.rcv, window=window))

    def request(self, size: int = 100) -> Item:
        """L sends data (the incast client's request), acknowledging all received."""
        f = self._l("PA", seq=self.l_next, ack=self.rcv, payload=size)
        self.l_next = (self.l_next + size) & 0xFFFFFFFF
        return (True, f)

    def fin(self) -> Item:
        return (False, self._r("FA", seq=self.r_next, ack=self.l_next))


def bulk(
    ft: FlowTrace,
    n: int,
    ce_every: int = 0,
    ce_from: int = 0,
    ack_every: int = 2,
    window: int | None = None,
) -> list[Item]:
    """n data packets; CE on every ce_every-th packet from ce_from; an ACK every ack_every."""
    out: list[Item] = []
    for i in range(n):
        ce = bool(ce_every) and i >= ce_from and (i - ce_from) % ce_every == 0
        out.append(ft.data(ce=ce))
        if (i + 1) % ack_every == 0:
            out.append(ft.ack(window))
    return out


def standard_trace() -> list[Item]:
    """Handshake (wscale 7 both ways, MSS 1460, timestamps), slow start, marks, recovery."""
    ft = FlowTrace()
    items = ft.handshake()
    items += bulk(ft, 60)  # slow start: W doubles per window
    items += bulk(ft, 120, ce_every=5)  # marks: W = max(W/2, (n-m)·MSS)
    items += bulk(ft, 80)  # unmarked after marks: + 1 MSS per window
    items += bulk(ft, 40, ce_every=1)  # every packet marked: W falls to its floor
    items += bulk(ft, 40, window=20)  # kernel window below W: kernel's value wins
    return items


def egress_windows(items: Iterable[Item]) -> list[int]:
    return [TCP(f[34:]).window for e, f in items if e]
