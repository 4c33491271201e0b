"""Forwarding: IPv4/IPv6 LPM routes, MAC rewrite, TTL, drops by reason."""

from __future__ import annotations

import packets as P
from base_test import P4IncastTest, autocleanup
from ptf import testutils
from scapy.layers.inet import IP
from scapy.layers.l2 import ARP, Ether


class ForwardingV4Test(P4IncastTest):
    """Longest prefix wins; MACs rewritten, TTL decremented, checksum valid."""

    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("10.0.0.0/8", 3)
        self.sw.add_route("10.0.2.0/24", 2)
        for dst, out in (("10.0.2.2", 2), ("10.9.9.9", 3)):
            pkt = P.tcp4(1, P.NOT_ECT, dst=dst)
            self.send(1, pkt)
            testutils.verify_packet(self, P.expected_routed4(pkt, out), out)
        testutils.verify_no_other_packets(self)


class ForwardingV6Test(P4IncastTest):
    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("2001:db8::/32", 3)
        self.sw.add_route("2001:db8:2::/48", 2)
        for dst, out in (("2001:db8:2::2", 2), ("2001:db8:ffff::1", 3)):
            pkt = P.tcp6(1, P.NOT_ECT, dst=dst)
            self.send(1, pkt)
            testutils.verify_packet(self, P.expected_routed6(pkt, out), out)
        testutils.verify_no_other_packets(self)


class Ipv4OptionsTest(P4IncastTest):
    """IPv4 with options is parsed, routed and its checksum recomputed over the options."""

    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("10.0.2.0/24", 2)
        pkt = P.tcp4(7, P.NOT_ECT, options=b"\x01\x01\x01\x00")  # NOP NOP NOP EOL
        assert pkt[IP].ihl is None or pkt[IP].ihl == 6
        self.send(1, pkt)
        testutils.verify_packet(self, P.expected_routed4(pkt, 2), 2)


class DropsCountedTest(P4IncastTest):
    """Route miss, non-IP, bad checksum, TTL 1, bad IHL: dropped and counted by reason."""

    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("10.0.2.0/24", 2)
        before = self.sw.stats().ingress_drops
        self.send(1, P.tcp4(1, dst="192.0.2.1"))  # route_miss
        self.send(1, P.tcp6(1, dst="2001:db8:9::9"))  # route_miss (no v6 route)
        self.send(1, Ether(src=P.host_mac(1), dst="ff:ff:ff:ff:ff:ff") / ARP())  # not_ip
        bad = P.tcp4(2)
        bad[IP].chksum = 0x1234
        self.send(1, bad)  # bad_checksum
        self.send(1, P.tcp4(3, ttl=1))  # ttl_expired
        raw = bytearray(bytes(P.tcp4(4)))
        raw[14] = 0x43  # version 4, IHL 3: parser error
        self.send(1, bytes(raw))
        self.send(1, bytes(P.tcp4(5))[: 14 + 12])  # truncated IPv4 header: parser error
        testutils.verify_no_other_packets(self, timeout=1)
        after = self.sw.stats().ingress_drops
        delta = {k: after[k] - before[k] for k in after}
        assert delta == {
            "route_miss": 2,
            "not_ip": 1,
            "parser_error": 2,
            "bad_checksum": 1,
            "ttl_expired": 1,
        }, delta
