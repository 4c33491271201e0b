"""The held-queue model: which depth each packet of a burst saw (docs/algorithms.md §1).

A burst of n numbered packets is sent into a BMv2 egress queue that drains at
a low rate (RATE_PPS). BMv2 gives every packet its departure time at enqueue,
1/rate apart, and egress reads
    enq_qdepth(m) = packets waiting when m was enqueued,
    deq_qdepth(i) = packets left waiting when i was dequeued.
Packet 1 finds the queue empty and leaves at once; on a quiet machine the rest
of the burst arrives long before the second departure, so (j = 1 early leaver)
    enq_qdepth(m) = max(0, m - 2),   deq_qdepth(i) = 0 if i == 1 else n - i,
and mark-tail (enq >= K) marks exactly K+2..2K, mark-front (deq >= K) 2..K.

A loaded machine can stall the sender or BMv2 for tens of milliseconds, so a
test must not assume j = 1. It reads the depth each packet saw from the
pipeline's own depth histogram instead (one count per packet at its enqueue
depth): in a FIFO burst the enqueue depth never falls between consecutive
arrivals while departures are 1/rate apart and arrivals are closer, so packet
m's depth is the m-th smallest histogram entry. Departures before m arrived
are D(m) = m - 1 - enq(m); packet m is still waiting when i leaves iff
D(m) <= i - 1, which gives deq_qdepth(i) = #{m > i : D(m) <= i - 1}.
"""

from __future__ import annotations

from collections.abc import Sequence

RATE_PPS = 20  # 50 ms between departures: a burst is queued long before the second one
MAX_EARLY = 2  # early leavers a test tolerates (the modes stay apart for K >= 3)


def enq_from_hist(hist: Sequence[int], n: int) -> list[int]:
    """Enqueue depth of packets 1..n from one burst's histogram delta."""
    depths = [b for b, c in enumerate(hist) for _ in range(c)]
    if len(depths) != n:
        raise AssertionError(f"histogram counts {len(depths)} packets, burst was {n}")
    if depths and depths[0] != 0:
        raise AssertionError(f"first packet saw depth {depths[0]}: queue was not empty")
    for a, b in zip(depths, depths[1:], strict=False):
        if b - a > 1:
            raise AssertionError(f"depth jumped {a} -> {b}: packets missing from the burst")
    return depths


def deq_from_enq(enq: Sequence[int]) -> list[int]:
    """Dequeue depth of each packet, from the enqueue depths (FIFO)."""
    n = len(enq)
    departed_before = [m - enq[m] for m in range(n)]  # D(m+1), 0-based m
    return [sum(1 for m in range(i + 1, n) if departed_before[m] <= i) for i in range(n)]


def early_leavers(enq: Sequence[int]) -> int:
    """Packets that had left before the last one of the burst arrived (j)."""
    return len(enq) - 1 - enq[-1] if enq else 0


def canonical(n: int) -> list[int]:
    """Enqueue depths of a burst on a quiet machine: packet 1 left before 2 arrived."""
    return [max(0, m - 1) for m in range(n)]


def marked(mode: str, k: int, enq: Sequence[int]) -> set[int]:
    """1-based numbers of the packets `mode` marks at threshold k."""
    depth = enq if mode == "tail" else deq_from_enq(enq)
    return {i + 1 for i, d in enumerate(depth) if d >= k}


def ideal(mode: str, k: int, n: int, j: int = 1) -> set[int]:
    """Closed form for a burst with j early leavers (j = 1: K+2..n / 2..K)."""
    return set(range(k + j + 1, n + 1)) if mode == "tail" else set(range(j + 1, k + 1))
