"""The held-queue test that tells mark-tail from mark-front (docs/algorithms.md §1).

A burst of 2K numbered ECT packets is sent at once into the egress queue toward
port 2, which drains at held.RATE_PPS. The depth every packet saw is read from
the pipeline's depth histogram (see lib/held.py for the model and why), and the
CE bits on the wire must be exactly the set that depth gives: on a quiet machine
(one early leaver) mark-tail marks K+2..2K and mark-front 2..K.
"""

from __future__ import annotations

import held
import packets as P
from base_test import P4IncastTest, autocleanup

from p4incast.controller.p4names import HIST_BUCKETS


class HeldQueueBase(P4IncastTest):
    enq: list[int] = []  # enqueue depth of each packet of the last burst

    def hist2(self) -> list[int]:
        port = self.sw.stats().ports.get(2)
        return list(port.hist) if port else [0] * HIST_BUCKETS

    def burst(self, n: int, builder=P.tcp4, code: int = P.ECT0) -> dict[int, bytes]:
        """Send packets 1..n at once behind the held queue; return seq -> frame out.
        Sets self.enq from the depth histogram of this burst."""
        self.set_queue(2, rate=held.RATE_PPS)
        before = self.hist2()
        self.send_burst(1, [builder(i, code) for i in range(1, n + 1)])
        got = self.collect(2, n, timeout=n / held.RATE_PPS + 3)
        frames = {P.our_seq(f): f for f in got}
        assert len(frames) == n, f"sent {n}, received {len(frames)} distinct packets"
        order = [P.our_seq(f) for f in got]
        assert order == sorted(order), f"queue reordered packets: {order}"
        self.enq = held.enq_from_hist([a - b for a, b in zip(self.hist2(), before, strict=True)], n)
        j = held.early_leavers(self.enq)
        assert j <= held.MAX_EARLY, f"{j} packets left before the burst was queued: {self.enq}"
        return frames

    def check_marks(self, mode: str, k: int, frames: dict[int, bytes]) -> None:
        n = len(frames)
        marked = {i for i, f in frames.items() if P.ecn_of(f) == P.CE}
        want = held.marked(mode, k, self.enq)
        assert marked == want, (
            f"mark-{mode} K={k} burst {n} (enqueue depths {self.enq}): "
            f"marked {sorted(marked)}, expected {sorted(want)}"
        )
        if self.enq == held.canonical(n):  # quiet machine: the closed form of §1
            assert want == held.ideal(mode, k, n), (mode, k, sorted(want))
        for i, f in frames.items():
            assert P.ipv4_checksum_ok(f) is not False, f"packet {i}: bad IPv4 checksum"


class HeldQueueMarkTailTest(HeldQueueBase):
    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("10.0.2.0/24", 2)
        for k in (4, 8, 20):
            self.sw.set_ecn(2, "tail", k=k, modify=k != 4)
            frames = self.burst(2 * k)
            self.check_marks("tail", k, frames)


class HeldQueueMarkFrontTest(HeldQueueBase):
    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("10.0.2.0/24", 2)
        for k in (4, 8, 20):
            self.sw.set_ecn(2, "front", k=k, modify=k != 4)
            frames = self.burst(2 * k)
            self.check_marks("front", k, frames)


class HeldQueueIpv6Test(HeldQueueBase):
    """Same vectors on IPv6: the traffic-class ECN bits are marked alike."""

    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("2001:db8:2::/48", 2)
        for mode in ("tail", "front"):
            self.sw.set_ecn(2, mode, k=6, modify=mode == "front")
            self.check_marks(mode, 6, self.burst(12, builder=P.tcp6))


class HeldQueueOffTest(HeldQueueBase):
    """Mode OFF (no policy entry, the default): nothing is marked, however deep the queue."""

    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("10.0.2.0/24", 2)
        frames = self.burst(16)
        assert all(P.ecn_of(f) == P.ECT0 for f in frames.values())


class RuntimeModeChangeTest(HeldQueueBase):
    """Mode and K changed live (P4Runtime MODIFY) apply to the very next burst, no restart."""

    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("10.0.2.0/24", 2)
        steps = [("tail", 4), ("front", 8), ("tail", 10), ("off", 0), ("front", 5)]
        installed = False
        for mode, k in steps:
            if mode == "off":
                self.sw.clear()
                self.sw.add_route("10.0.2.0/24", 2)
                installed = False
                frames = self.burst(12)
                assert not any(P.ecn_of(f) == P.CE for f in frames.values())
                continue
            self.sw.set_ecn(2, mode, k=k, modify=installed)
            installed = True
            self.check_marks(mode, k, self.burst(2 * k))


class HistogramAndCountersTest(HeldQueueBase):
    """Counters equal what was sent; the depth histogram accounts for every packet
    at exactly the depth each one saw."""

    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("10.0.2.0/24", 2)
        k, n = 5, 16
        self.sw.set_ecn(2, "tail", k=k)
        before = self.sw.stats().ports.get(2)
        # ECT burst, then a Not-ECT burst and a CE burst (each held the same way).
        frames = self.burst(n)
        enq_ect = self.enq
        self.burst(n, code=P.NOT_ECT)
        enq_not = self.enq
        self.burst(n, code=P.CE)
        enq_ce = self.enq
        after = self.sw.stats().ports[2]
        b = before or type(after)(2)
        d = {
            name: getattr(after, name) - getattr(b, name)
            for name in ("routed", "ect", "marked", "ce_in", "not_ect_over_k", "ecn_drop")
        }
        over_k = len(held.marked("tail", k, enq_ect))
        assert d == {
            "routed": 3 * n,
            "ect": n,
            "marked": over_k,
            "ce_in": n,
            "not_ect_over_k": len(held.marked("tail", k, enq_not)),
            "ecn_drop": 0,
        }, d
        assert sum(P.ecn_of(f) == P.CE for f in frames.values()) == over_k
        hist = [a - bb for a, bb in zip(after.hist, b.hist, strict=True)]
        want = [0] * HIST_BUCKETS
        for d in enq_ect + enq_not + enq_ce:
            want[min(d, HIST_BUCKETS - 1)] += 1
        assert hist == want, f"histogram {hist[:n]} != {want[:n]}"
        assert sum(hist) == 3 * n


class NotEctDropTest(HeldQueueBase):
    """drop_k drops exactly the Not-ECT packets whose enqueue depth >= drop_k,
    counts them, and never touches ECT packets."""

    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("10.0.2.0/24", 2)
        drop_k, n = 6, 14
        self.sw.set_ecn(2, "tail", k=n + 10, drop_k=drop_k)  # K out of reach: isolate the drop
        before = self.sw.stats().ports.get(2)
        hist_before = self.hist2()
        self.set_queue(2, rate=held.RATE_PPS)
        self.send_burst(1, [P.tcp4(i, P.NOT_ECT) for i in range(1, n + 1)])
        got = self.drain(2, quiet=1.5)
        seqs = sorted(P.our_seq(f) for f in got)
        # The histogram counts every packet before the drop decision.
        delta = [a - b for a, b in zip(self.hist2(), hist_before, strict=True)]
        enq = held.enq_from_hist(delta, n)
        kept = [i for i in range(1, n + 1) if enq[i - 1] < drop_k]
        assert seqs == kept, f"kept {seqs}, expected {kept} (enqueue depths {enq})"
        after = self.sw.stats().ports[2]
        dropped = after.ecn_drop - (before.ecn_drop if before else 0)
        assert dropped == n - len(kept), dropped
        # ECT packets in the same queue are not dropped by drop_k.
        frames = self.burst(n)
        assert len(frames) == n
