"""Depth percentiles from the pipeline's bucket counts."""

import pytest

from p4incast.model import histogram


def test_quantiles_of_known_distribution() -> None:
    counts = [0] * 128
    counts[0] = 50  # half the packets saw an empty queue
    counts[10] = 45
    counts[40] = 5
    assert histogram.quantile(counts, 0.5) == 0
    assert histogram.quantile(counts, 0.51) == 10
    assert histogram.quantile(counts, 0.95) == 10
    assert histogram.quantile(counts, 0.96) == 40
    assert histogram.maximum(counts) == 40
    assert histogram.summary(counts)["packets"] == 100


def test_empty_and_open_last_bucket() -> None:
    assert histogram.quantile([0] * 8, 0.5) is None
    assert histogram.maximum([0] * 8) is None
    counts = [0] * 128
    counts[127] = 3
    assert histogram.label(histogram.maximum(counts), 128) == ">=127"
    with pytest.raises(ValueError):
        histogram.quantile(counts, 1.5)
