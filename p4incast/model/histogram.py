"""Queue-depth percentiles from the pipeline's per-port histogram (pure).

Bucket b of `queue_depth_stats` counts packets that saw depth b at enqueue
(v1model: packets); the last bucket counts everything at or above it. The
q-quantile is the smallest bucket whose cumulative count reaches q * total,
so percentiles are exact to one depth unit below the last bucket.
"""

from __future__ import annotations

from collections.abc import Sequence


def quantile(counts: Sequence[int], q: float) -> int | None:
    """Depth (bucket) at quantile q in [0, 1]; None when the histogram is empty."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q} outside [0, 1]")
    total = sum(counts)
    if total == 0:
        return None
    need = max(1, q * total)
    running = 0
    for bucket, count in enumerate(counts):
        running += count
        if running >= need:
            return bucket
    return len(counts) - 1


def maximum(counts: Sequence[int]) -> int | None:
    """Highest non-empty bucket; None when empty."""
    for bucket in range(len(counts) - 1, -1, -1):
        if counts[bucket]:
            return bucket
    return None


def summary(counts: Sequence[int]) -> dict[str, int | None]:
    """p50, p95, p99 and max depth, plus the packet count."""
    return {
        "packets": sum(counts),
        "p50": quantile(counts, 0.50),
        "p95": quantile(counts, 0.95),
        "p99": quantile(counts, 0.99),
        "max": maximum(counts),
    }


def label(bucket: int | None, n_buckets: int) -> str:
    """Bucket as text: '12', '>=127' for the open last bucket, '-' for none."""
    if bucket is None:
        return "-"
    return f">={bucket}" if bucket >= n_buckets - 1 else str(bucket)
