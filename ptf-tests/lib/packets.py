"""Packet builders and checks for the PTF suite (scapy)."""

from __future__ import annotations

import struct

from base_test import host_mac, port_mac
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw
from scapy.utils import checksum

NOT_ECT, ECT1, ECT0, CE = 0b00, 0b01, 0b10, 0b11
ECN_NAMES: dict[int | None, str] = {NOT_ECT: "Not-ECT", ECT1: "ECT(1)", ECT0: "ECT(0)", CE: "CE"}

SRC4, DST4 = "10.0.1.1", "10.0.2.2"
SRC6, DST6 = "2001:db8:1::1", "2001:db8:2::2"
MAGIC = b"P4IC"  # payload tag: MAGIC + 4-byte sequence number


def numbered(seq: int, size: int = 64) -> bytes:
    return (MAGIC + struct.pack("!I", seq)).ljust(size, b"\0")


def tcp4(
    seq: int,
    ecn: int = ECT0,
    *,
    in_port: int = 1,
    dst: str = DST4,
    options: bytes = b"",
    ttl: int = 64,
    size: int = 64,
) -> Packet:
    """Numbered IPv4/TCP data packet as a sender behind `in_port` emits it."""
    ip = IP(src=SRC4, dst=dst, tos=ecn, ttl=ttl, id=seq & 0xFFFF)
    if options:
        ip.options = [Raw(options)]
    return (
        Ether(src=host_mac(in_port), dst=port_mac(in_port))
        / ip
        / TCP(sport=40000, dport=5001, flags="A", seq=seq)
        / Raw(numbered(seq, size))
    )


def tcp6(seq: int, ecn: int = ECT0, *, in_port: int = 1, dst: str = DST6, hlim: int = 64) -> Packet:
    return (
        Ether(src=host_mac(in_port), dst=port_mac(in_port))
        / IPv6(src=SRC6, dst=dst, tc=ecn, hlim=hlim)
        / TCP(sport=40000, dport=5001, flags="A", seq=seq)
        / Raw(numbered(seq))
    )


def udp4(seq: int, ecn: int = ECT0, *, in_port: int = 1, dst: str = DST4) -> Packet:
    return (
        Ether(src=host_mac(in_port), dst=port_mac(in_port))
        / IP(src=SRC4, dst=dst, tos=ecn)
        / UDP(sport=40000, dport=5001)
        / Raw(numbered(seq))
    )


def expected_routed4(pkt: Packet, out_port: int, ecn: int | None = None) -> Packet:
    """What the switch must emit for IPv4 `pkt` routed to `out_port`."""
    exp = pkt.copy()
    exp[Ether].src = port_mac(out_port)
    exp[Ether].dst = host_mac(out_port)
    exp[IP].ttl -= 1
    if ecn is not None:
        exp[IP].tos = (exp[IP].tos & 0xFC) | ecn
    del exp[IP].chksum
    return Ether(bytes(exp))


def expected_routed6(pkt: Packet, out_port: int, ecn: int | None = None) -> Packet:
    exp = pkt.copy()
    exp[Ether].src = port_mac(out_port)
    exp[Ether].dst = host_mac(out_port)
    exp[IPv6].hlim -= 1
    if ecn is not None:
        exp[IPv6].tc = (exp[IPv6].tc & 0xFC) | ecn
    return Ether(bytes(exp))


def seq_of(frame: bytes) -> int | None:
    """Sequence number from a numbered payload, or None."""
    at = frame.find(MAGIC)
    if at < 0 or at + 8 > len(frame):
        return None
    return struct.unpack("!I", frame[at + 4 : at + 8])[0]


def our_seq(frame: bytes) -> int:
    """seq_of a frame that must be one of our numbered packets."""
    seq = seq_of(frame)
    assert seq is not None, f"not a numbered packet: {frame.hex()}"
    return seq


def ecn_of(frame: bytes) -> int | None:
    """ECN codepoint of an IPv4/IPv6 frame (no VLAN), else None."""
    if len(frame) < 16:
        return None
    ethertype = struct.unpack("!H", frame[12:14])[0]
    if ethertype == 0x0800 and len(frame) >= 15 + 1:
        return frame[15] & 0b11
    if ethertype == 0x86DD and len(frame) >= 16:
        tc = ((frame[14] & 0x0F) << 4) | (frame[15] >> 4)
        return tc & 0b11
    return None


def ipv4_checksum_ok(frame: bytes) -> bool | None:
    """True/False for an IPv4 frame's header checksum, None for non-IPv4."""
    if len(frame) < 34 or struct.unpack("!H", frame[12:14])[0] != 0x0800:
        return None
    ihl = (frame[14] & 0x0F) * 4
    if ihl < 20 or len(frame) < 14 + ihl:
        return False
    return checksum(frame[14 : 14 + ihl]) == 0
