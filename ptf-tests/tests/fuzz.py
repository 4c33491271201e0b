"""10 000 random and malformed frames: the switch stays up, marks no Not-ECT
packet, and every IPv4 header that leaves it has a valid checksum."""

from __future__ import annotations

import random

import packets as P
from base_test import P4IncastTest, autocleanup, host_mac, port_mac
from ptf import testutils
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import (
    IPv6,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrRouting,
)
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw, fuzz

FRAMES = 10_000
SEED = 20261122


def _ether(in_port: int, ethertype: int | None = None) -> Packet:
    e = Ether(src=host_mac(in_port), dst=port_mac(in_port))
    if ethertype is not None:
        e.type = ethertype
    return e


def not_ect(pkt):
    """Clear the ECN bits of the first IP header (the marker must leave them so)."""
    if IP in pkt:
        pkt[IP].tos = int(pkt[IP].tos) & 0xFC
    if IPv6 in pkt:
        pkt[IPv6].tc = int(pkt[IPv6].tc) & 0xFC
    return pkt


def make_frames(rng: random.Random) -> list[bytes]:
    frames: list[bytes] = []
    kinds = (
        "fuzz_ip",
        "fuzz_ip_good_csum",
        "truncated",
        "bad_ihl",
        "ipv6_ext",
        "fuzz_ipv6",
        "random_bytes",
        "options",
    )
    for n in range(FRAMES):
        kind = kinds[n % len(kinds)]
        if kind == "fuzz_ip":
            pkt = _ether(1) / not_ect(fuzz(IP(version=4) / rng.choice([TCP(), UDP()])))
            raw = bytes(pkt)
        elif kind == "fuzz_ip_good_csum":
            ip = fuzz(IP(version=4, ihl=5, dst=f"10.{rng.randrange(256)}.0.1"))
            ip = IP(bytes(not_ect(ip)))
            ip.ihl, ip.chksum, ip.options = 5, None, []
            raw = bytes(_ether(1) / ip / rng.choice([TCP(), UDP()]) / Raw(b"x" * rng.randrange(40)))
        elif kind == "truncated":
            full = bytes(_ether(1) / IP(dst="10.0.2.2", tos=0) / TCP() / Raw(b"y" * 20))
            raw = full[: rng.randrange(14, len(full))]
        elif kind == "bad_ihl":
            raw = bytearray(bytes(_ether(1) / IP(dst="10.0.2.2", tos=0) / UDP() / Raw(b"z" * 40)))
            raw[14] = 0x40 | rng.choice([0, 1, 2, 3, 4, 14, 15])
            raw = bytes(raw)
        elif kind == "ipv6_ext":
            ext = rng.choice(
                [
                    IPv6ExtHdrHopByHop(),
                    IPv6ExtHdrRouting(),
                    IPv6ExtHdrDestOpt(),
                    IPv6ExtHdrFragment(),
                ]
            )
            raw = bytes(
                _ether(1)
                / IPv6(dst="2001:db8:2::2", tc=rng.choice([0, 4, 0xB8]))
                / ext
                / TCP()
                / Raw(b"e" * 20)
            )
        elif kind == "fuzz_ipv6":
            raw = bytes(_ether(1) / not_ect(fuzz(IPv6(version=6))) / UDP())
        elif kind == "options":
            opts = bytes(rng.randrange(256) for _ in range(4 * rng.randrange(1, 11)))
            ip = IP(dst="10.0.2.2", tos=0, options=[Raw(opts)])
            raw = bytes(_ether(1) / ip / UDP() / Raw(b"o" * 10))
        else:  # random bytes after a plausible Ethernet header
            et = rng.choice([0x0800, 0x86DD, 0x0806, rng.randrange(65536)])
            body = bytearray(rng.randrange(256) for _ in range(rng.randrange(0, 80)))
            if len(body) > 1:  # Not-ECT wherever the switch might parse an ECN field
                body[1] &= 0xCF if et == 0x86DD else 0xFC if et == 0x0800 else 0xFF
            body = bytes(body)
            raw = bytes(_ether(1, et)) + body
        frames.append(raw)
    return frames


class FuzzTest(P4IncastTest):
    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("0.0.0.0/0", 2)
        self.sw.add_route("::/0", 2)
        self.sw.set_ecn(2, "tail", k=1)  # any queue at all: mark
        self.set_queue(2, rate=3000, depth=256)
        frames = make_frames(random.Random(SEED))
        marker = [P.tcp4(900_000 + i, P.ECT0) for i in range(50)]  # proves marking is live
        for i, raw in enumerate(frames):
            self.send(1, raw)
            if i % 200 == 0:
                self.send(1, marker[i // 200])
        out = self.drain(2, quiet=2.0)
        assert out, "nothing came out: switch dead or every frame dropped"
        marked_markers = 0
        for frame in out:
            seq = P.seq_of(frame)
            ecn = P.ecn_of(frame)
            if seq is not None and seq >= 900_000:
                marked_markers += ecn == P.CE
                continue
            assert P.ipv4_checksum_ok(frame) is not False, f"bad IPv4 checksum out: {frame.hex()}"
            assert ecn != P.CE, f"a Not-ECT frame left as CE: {frame.hex()}"
        assert marked_markers > 0, "no ECT marker packet was marked: the queue never built"
        # Still alive and forwarding correctly.
        self.set_queue(2, rate=1_000_000)
        pkt = P.tcp4(1, P.NOT_ECT)
        self.send(1, pkt)
        testutils.verify_packet(self, P.expected_routed4(pkt, 2), 2, timeout=3)
        print(f"fuzz: {len(frames)} frames in, {len(out)} out, {marked_markers} ECT markers marked")
