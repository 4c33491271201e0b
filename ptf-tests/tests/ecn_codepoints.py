"""Which codepoints become CE above K: ECT(0)/ECT(1) do, Not-ECT never, CE stays."""

from __future__ import annotations

import packets as P
from base_test import P4IncastTest, autocleanup

# Burst held behind a 50 packets/s queue: packet i (i >= 2) sees enqueue depth i - 2.
RATE_PPS = 50


class EcnCodepointTest(P4IncastTest):
    """Mark-tail K=2: packets 1..3 see depth < 2, 4.. see depth >= 2; every
    packet's codepoint on the wire is what §1 says, for v4 and v6, and every
    IPv4 checksum out is valid."""

    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("10.0.2.0/24", 2)
        self.sw.add_route("2001:db8:2::/48", 2)
        self.sw.set_ecn(2, "tail", k=2)
        self.set_queue(2, rate=RATE_PPS)
        # (seq, builder, codepoint in)
        plan = [(1, P.tcp4, P.ECT0), (2, P.tcp4, P.ECT0), (3, P.tcp4, P.ECT0)]
        codes = [P.ECT0, P.ECT1, P.NOT_ECT, P.CE]
        seq = 4
        for builder in (P.tcp4, P.tcp6, P.udp4):
            for code in codes:
                plan.append((seq, builder, code))
                seq += 1
        for s, builder, code in plan:
            self.send(1, builder(s, code))
        got = self.collect(2, len(plan), timeout=len(plan) / RATE_PPS + 3)
        assert len(got) == len(plan), f"sent {len(plan)}, got {len(got)}"
        by_seq = {P.seq_of(f): f for f in got}
        for s, builder, code in plan:
            frame = by_seq[s]
            want = code if s < 4 else {P.ECT0: P.CE, P.ECT1: P.CE}.get(code, code)
            assert P.ecn_of(frame) == want, (
                f"packet {s} ({builder.__name__}, {P.ECN_NAMES[code]}) left as "
                f"{P.ECN_NAMES[P.ecn_of(frame)]}, want {P.ECN_NAMES[want]}"
            )
            assert P.ipv4_checksum_ok(frame) is not False, f"packet {s}: bad IPv4 checksum"
