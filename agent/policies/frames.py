"""Frames as the receiver's data path reads them, and TCP's checksum.

Reference of agent/bpf/rxwin_parse.h: Ethernet + IPv4 (unfragmented) + TCP,
with the TCP options read the way Linux's tcp_parse_options() reads them
(EOL ends the list, NOP is one byte, a bad length stops parsing and keeps
what was read). Sequence numbers are 32-bit and wrap: `u32` and `s32` do
TCP's modular arithmetic.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = [
    "ACK",
    "FIN",
    "RST",
    "SYN",
    "Frame",
    "TcpOptions",
    "parse_frame",
    "parse_options",
    "s32",
    "tcp_checksum",
    "u32",
]

FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10


def u32(x: int) -> int:
    """x modulo 2^32 (a sequence number)."""
    return x & 0xFFFFFFFF


def s32(x: int) -> int:
    """x modulo 2^32 as a signed 32-bit value (a sequence difference)."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


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
                o.ts = struct.unpack("!II", body)
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
    """Ethernet + IPv4 (unfragmented) + TCP, else None — what rxwin_parse.h accepts."""
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


def tcp_checksum(src: bytes, dst: bytes, segment: bytes) -> int:
    """Internet checksum of a TCP segment (its check field zero) and pseudo-header."""
    data = src + dst + struct.pack("!BBH", 0, 6, len(segment)) + segment
    if len(data) % 2:
        data += b"\x00"
    x = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while x >> 16:
        x = (x & 0xFFFF) + (x >> 16)
    return ~x & 0xFFFF
