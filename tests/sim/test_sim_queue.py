"""The simulator's queue against the PTF held-queue vectors (docs/algorithms.md §1).

A burst of 2K numbered ECT packets into an idle port. With an ideal pause (all
2K queued before any leaves) mark-tail marks K+1..2K and mark-front 1..K. Fed
the way BMv2 is fed in the PTF suite — packet 1 finds the port idle and leaves
at once, the rest are held — the marks are exactly BMv2's: K+2..2K and 2..K.
"""

from __future__ import annotations

from typing import Any

import pytest

OFF, TAIL, FRONT = 0, 1, 2


def closed_form(mode: int, k: int, n: int, early: int) -> list[int]:
    if mode == TAIL:
        return list(range(k + early + 1, n + 1))
    return list(range(early + 1, k + 1))


@pytest.mark.parametrize("k", [4, 8, 20])
@pytest.mark.parametrize("mode", [TAIL, FRONT])
def test_ideal_pause_vectors(p4i: Any, mode: int, k: int) -> None:
    got = list(p4i.HeldQueueMarks(mode, k, 2 * k, 0))
    assert got == closed_form(mode, k, 2 * k, 0)  # tail K+1..2K, front 1..K


@pytest.mark.parametrize("k", [4, 8, 20])
@pytest.mark.parametrize("mode", [TAIL, FRONT])
def test_bmv2_vectors_one_early_leaver(p4i: Any, mode: int, k: int) -> None:
    got = list(p4i.HeldQueueMarks(mode, k, 2 * k, 1))
    assert got == closed_form(mode, k, 2 * k, 1)  # tail K+2..2K, front 2..K


@pytest.mark.parametrize("k", [4, 8, 20])
@pytest.mark.parametrize("mode", [TAIL, FRONT])
def test_bmv2_vectors_on_a_real_port(p4i: Any, mode: int, k: int) -> None:
    """The same burst handed to a slow point-to-point device at one instant."""
    res = p4i.HeldQueueOnWire(mode, k, 2 * k, 1e6)
    assert list(res.order) == list(range(1, 2 * k + 1)), "the port reordered packets"
    assert list(res.marked) == closed_form(mode, k, 2 * k, 1)
    assert res.markedCount == len(res.marked)
    assert res.ect == 2 * k
    # enqueue depths 0, 0, 1, ..., 2K-2: packet 1 left before packet 2 arrived
    want = [0] * 128
    for d in [0] + list(range(0, 2 * k - 1)):
        want[d] += 1
    assert list(res.hist) == want


def test_off_marks_nothing(p4i: Any) -> None:
    assert list(p4i.HeldQueueMarks(OFF, 0, 16, 1)) == []
    assert list(p4i.HeldQueueOnWire(OFF, 0, 16, 1e6).marked) == []


def test_k_zero_marks_every_packet_in_front_and_tail(p4i: Any) -> None:
    """K = 0: every ECT packet is at or above the threshold in both modes."""
    assert list(p4i.HeldQueueMarks(TAIL, 0, 6, 1)) == [1, 2, 3, 4, 5, 6]
    assert list(p4i.HeldQueueMarks(FRONT, 0, 6, 1)) == [1, 2, 3, 4, 5, 6]


def test_not_ect_and_ce_are_never_marked_but_counted(p4i: Any) -> None:
    assert p4i.EcnQueue.GetTypeId().GetName() == "p4i::EcnQueue"
    queue = p4i.NewEcnQueue(TAIL, 0, 0)
    for i, code in enumerate([0, 3, 2, 1], start=1):
        queue.Enqueue(p4i.MakeTestFrame(i, code))
    outs = []
    while True:
        p = queue.Dequeue()
        if not p:
            break
        outs.append(p4i.FrameEcn(p))
    assert outs == [0, 3, 3, 3]  # Not-ECT stays, CE stays, ECT(0)/ECT(1) -> CE
    assert (queue.notEct, queue.ceIn, queue.ect, queue.marked) == (1, 1, 2, 2)


def test_byte_buffer_drops_at_the_tail(p4i: Any) -> None:
    queue = p4i.NewEcnQueue(OFF, 0, 3 * (122 + 24))  # three test frames (2 + 20 + 100 bytes)
    for i in range(1, 6):
        queue.Enqueue(p4i.MakeTestFrame(i))
    assert queue.GetNPackets() == 3
    assert queue.drops == 2
    assert queue.admitted == 3


@pytest.mark.parametrize("n", [2, 10, 40])
def test_mean_depth_is_the_time_average_of_packets_waiting(p4i: Any, n: int) -> None:
    """A burst of n frames into an idle port: the first leaves at once and one more
    leaves every serialisation time tau, so n - 1, n - 2, ..., 0 wait for tau each:
    n(n - 1)/2 packet-taus, averaged over the run (it ends when the last frame has
    crossed the 25 us link, n tau + 25 us after the burst)."""
    res = p4i.HeldQueueOnWire(OFF, 0, n, 1e6)
    tau = (res.endS - 25e-6) / n
    assert res.meanDepth == pytest.approx(tau * n * (n - 1) / 2 / res.endS, rel=1e-9)
