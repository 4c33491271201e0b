"""The held-queue test that tells mark-tail from mark-front (ALGORITHMS.md §1).

The egress queue toward port 2 drains at 50 packets/s; a burst of 2K numbered
ECT packets is sent at once. On BMv2, packet 1 leaves before the queue builds,
so packet i >= 2 sees enqueue depth i - 2 and leaves depth 2K - i behind.
Expected CE sets, derived from those depths:
  mark-tail  (enq_qdepth >= K): exactly K+2 .. 2K
  mark-front (deq_qdepth >= K): exactly 2 .. K
"""

from __future__ import annotations

import packets as P
from base_test import P4IncastTest, autocleanup
from p4incast.controller.target import HIST_BUCKETS

RATE_PPS = 50


def enq_depth(i: int) -> int:
    """Depth packet i (1-based) sees at enqueue in the held burst."""
    return 0 if i == 1 else i - 2


def deq_depth(i: int, n: int) -> int:
    """Depth packet i leaves behind at dequeue in a held burst of n."""
    return 0 if i == 1 else n - i


def expected_marks(mode: str, k: int, n: int) -> set[int]:
    depth = (lambda i: enq_depth(i)) if mode == "tail" else (lambda i: deq_depth(i, n))
    return {i for i in range(1, n + 1) if depth(i) >= k}


class HeldQueueBase(P4IncastTest):
    def burst(self, n: int, builder=P.tcp4, code: int = P.ECT0) -> dict[int, bytes]:
        """Send packets 1..n at once behind the held queue; return seq -> frame out."""
        self.set_queue(2, rate=RATE_PPS)
        for i in range(1, n + 1):
            self.send(1, builder(i, code))
        got = self.collect(2, n, timeout=n / RATE_PPS + 3)
        frames = {P.seq_of(f): f for f in got}
        assert len(frames) == n, f"sent {n}, received {len(frames)} distinct packets"
        order = [P.seq_of(f) for f in got]
        assert order == sorted(order), f"queue reordered packets: {order}"
        return frames

    def check_marks(self, mode: str, k: int, frames: dict[int, bytes]) -> None:
        n = len(frames)
        marked = {i for i, f in frames.items() if P.ecn_of(f) == P.CE}
        want = expected_marks(mode, k, n)
        assert marked == want, (
            f"mark-{mode} K={k} burst {n}: marked {sorted(marked)}, expected {sorted(want)}"
        )
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
            assert expected_marks("tail", k, 2 * k) == set(range(k + 2, 2 * k + 1))


class HeldQueueMarkFrontTest(HeldQueueBase):
    @autocleanup
    def runTest(self) -> None:
        self.sw.add_route("10.0.2.0/24", 2)
        for k in (4, 8, 20):
            self.sw.set_ecn(2, "front", k=k, modify=k != 4)
            frames = self.burst(2 * k)
            self.check_marks("front", k, frames)
            assert expected_marks("front", k, 2 * k) == set(range(2, k + 1))


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
        self.burst(n, code=P.NOT_ECT)
        self.burst(n, code=P.CE)
        after = self.sw.stats().ports[2]
        b = before or type(after)(2)
        d = {
            name: getattr(after, name) - getattr(b, name)
            for name in ("routed", "ect", "marked", "ce_in", "not_ect_over_k", "ecn_drop")
        }
        over_k = len(expected_marks("tail", k, n))
        assert d == {
            "routed": 3 * n,
            "ect": n,
            "marked": over_k,
            "ce_in": n,
            "not_ect_over_k": over_k,
            "ecn_drop": 0,
        }, d
        assert sum(P.ecn_of(f) == P.CE for f in frames.values()) == over_k
        hist = [a - bb for a, bb in zip(after.hist, b.hist, strict=True)]
        want = [0] * HIST_BUCKETS
        for _ in range(3):
            for i in range(1, n + 1):
                want[min(enq_depth(i), HIST_BUCKETS - 1)] += 1
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
        self.set_queue(2, rate=RATE_PPS)
        for i in range(1, n + 1):
            self.send(1, P.tcp4(i, P.NOT_ECT))
        got = self.drain(2, quiet=1.5)
        seqs = sorted(P.seq_of(f) for f in got)
        kept = [i for i in range(1, n + 1) if enq_depth(i) < drop_k]
        assert seqs == kept, f"kept {seqs}, expected {kept}"
        after = self.sw.stats().ports[2]
        dropped = after.ecn_drop - (before.ecn_drop if before else 0)
        assert dropped == n - len(kept), dropped
        # ECT packets in the same queue are not dropped by drop_k.
        frames = self.burst(n)
        assert len(frames) == n
