"""Which codepoints become CE above K: ECT(0)/ECT(1) do, Not-ECT never, CE stays."""

from __future__ import annotations

from collections.abc import Callable

import held
import packets as P
from base_test import P4IncastTest, autocleanup
from scapy.packet import Packet

from p4incast.controller.p4names import HIST_BUCKETS


class EcnCodepointTest(P4IncastTest):
    """Mark-tail K=2 on a held queue: three ECT(0) packets first, then every
    codepoint on TCP/IPv4, TCP/IPv6 and UDP/IPv4. Each packet's codepoint on the
    wire is what §1 says for the depth it saw (from the depth histogram; see
    lib/held.py): ECT(0)/ECT(1) at depth >= K become CE, Not-ECT and CE leave
    unchanged; every IPv4 checksum out is valid."""

    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("10.0.2.0/24", 2)
        self.sw.add_route("2001:db8:2::/48", 2)
        self.sw.set_ecn(2, "tail", k=2)
        self.set_queue(2, rate=held.RATE_PPS)
        port = self.sw.stats().ports.get(2)
        before = list(port.hist) if port else [0] * HIST_BUCKETS
        # (seq, builder, codepoint in)
        plan: list[tuple[int, Callable[..., Packet], int]] = [
            (1, P.tcp4, P.ECT0),
            (2, P.tcp4, P.ECT0),
            (3, P.tcp4, P.ECT0),
        ]
        codes = [P.ECT0, P.ECT1, P.NOT_ECT, P.CE]
        seq = 4
        for builder in (P.tcp4, P.tcp6, P.udp4):
            for code in codes:
                plan.append((seq, builder, code))
                seq += 1
        self.send_burst(1, [builder(s, code) for s, builder, code in plan])
        got = self.collect(2, len(plan), timeout=len(plan) / held.RATE_PPS + 3)
        assert len(got) == len(plan), f"sent {len(plan)}, got {len(got)}"
        by_seq = {P.our_seq(f): f for f in got}
        after = self.sw.stats().ports[2].hist
        enq = held.enq_from_hist([a - b for a, b in zip(after, before, strict=True)], len(plan))
        assert held.early_leavers(enq) <= held.MAX_EARLY, f"queue never held: {enq}"
        assert enq[0] < 2 and enq[-1] >= 2, f"burst did not cross K=2: {enq}"
        for s, builder, code in plan:
            frame = by_seq[s]
            over_k = enq[s - 1] >= 2
            want = {P.ECT0: P.CE, P.ECT1: P.CE}.get(code, code) if over_k else code
            assert P.ecn_of(frame) == want, (
                f"packet {s} ({builder.__name__}, {P.ECN_NAMES[code]}) left as "
                f"{P.ECN_NAMES[P.ecn_of(frame)]}, want {P.ECN_NAMES[want]}"
            )
            assert P.ipv4_checksum_ok(frame) is not False, f"packet {s}: bad IPv4 checksum"
