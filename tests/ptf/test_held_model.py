"""The held-queue model the PTF suite derives its expected CE sets from (pure)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "ptf-tests" / "lib"))
import held


@pytest.mark.parametrize("k", [4, 8, 20])
def test_quiet_burst_gives_the_documented_bmv2_sets(k: int) -> None:
    enq = held.canonical(2 * k)
    assert held.marked("tail", k, enq) == set(range(k + 2, 2 * k + 1))
    assert held.marked("front", k, enq) == set(range(2, k + 1))
    assert held.early_leavers(enq) == 1


def test_ideal_pause_and_two_early_leavers() -> None:
    k, n = 4, 8
    paused = list(range(n))  # nothing left before the burst was queued
    assert held.marked("tail", k, paused) == set(range(k + 1, n + 1))
    assert held.marked("front", k, paused) == set(range(1, k + 1))
    two = [0, 0, 0, *range(1, n - 2)]  # packets 1 and 2 left early
    assert held.early_leavers(two) == 2
    assert held.marked("tail", k, two) == held.ideal("tail", k, n, 2) == set(range(k + 3, n + 1))
    assert held.marked("front", k, two) == held.ideal("front", k, n, 2) == set(range(3, k + 1))


def test_departure_in_the_middle_of_a_burst() -> None:
    # Packet 2 found packet 1 still queued; one departure happened before packet 6.
    enq = [0, 1, 2, 3, 4, 4, 5, 6]
    assert held.deq_from_enq(enq) == [4, 6, 5, 4, 3, 2, 1, 0]
    assert held.marked("tail", 4, enq) == {5, 6, 7, 8}
    assert held.marked("front", 4, enq) == {1, 2, 3, 4}


def test_histogram_that_cannot_be_one_burst_is_refused() -> None:
    with pytest.raises(AssertionError, match="counts 3 packets"):
        held.enq_from_hist([2, 1], 4)
    with pytest.raises(AssertionError, match="jumped"):
        held.enq_from_hist([1, 1, 0, 1], 3)
    assert held.enq_from_hist([2, 1, 1], 4) == [0, 0, 1, 2]
