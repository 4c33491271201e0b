"""The receiver's budget held by the ToR (docs/algorithms.md §8): what the
controller computes for the switch, which does not divide.

    share(N) = max(floor(B / (N * MSS)), 1) * MSS        bytes, B whole segments

The switch reads the share of N from a table filled per (port, N) for the N
whose share is above one segment; every other N gets the port's floor, one
segment. Time in the switch runs in ticks of about a millisecond, and a port's
epoch is a power of two of ticks: a flow counts from its SYN until its FIN or
RST, or until it has been idle for one to two epochs.
"""

from __future__ import annotations

from .errors import ModelError

# One tick of the switch's clock, seconds: BMv2's microsecond timestamp >> 10,
# Tofino's nanosecond timestamp >> 20 (p4src/*/main.p4 RX_BUDGET_TICKS).
TICK_SECONDS = {"v1model": 1024e-6, "tna": 1048576e-9}
# 2^17 ticks: 134.2 s on BMv2, 137.4 s on Tofino. An idle flow counts for at
# least one epoch, so the epoch is longer than the longest gap a live
# connection leaves between its packets through the ToR: Linux's largest RTO
# backoff, TCP_RTO_MAX = 120 s (include/net/tcp.h), above any gap between
# incast rounds on persistent connections (docs/algorithms.md §8).
DEFAULT_EPOCH_TICKS = 1 << 17
MIN_EPOCH_TICKS = 4  # the epoch's low bits, all ones, keep it >= 3 (p4src/shared/rx_budget.p4)
MAX_EPOCH_TICKS = 1 << 30  # the switch compares epochs as 32-bit numbers
BUDGET_SHARE_SIZE = 4096  # budget_share entries, all ports together (p4src/shared/sizes.p4)
FLOW_SLOTS = 4096  # flow table slots, a power of two (p4src/shared/sizes.p4)


def share_bytes(budget_bytes: int, mss_bytes: int, flows: int) -> int:
    """A flow's share of the port's budget when `flows` flows are active."""
    return max(budget_bytes // (max(flows, 1) * mss_bytes), 1) * mss_bytes


def share_count(budget_bytes: int, mss_bytes: int) -> int:
    """How many N have a share above one segment: those with B / (N MSS) >= 2."""
    return budget_bytes // (2 * mss_bytes)


def share_entries(budget_bytes: int, mss_bytes: int) -> list[tuple[int, int]]:
    """(N, share) for every N whose share is above one segment, N from 1."""
    n_max = share_count(budget_bytes, mss_bytes)
    return [(n, share_bytes(budget_bytes, mss_bytes, n)) for n in range(1, n_max + 1)]


def active_flows(flow_epochs: int, seconds: float, epoch_ticks: int, target: str) -> float:
    """Flows active on average over `seconds`, from the flows the switch counted in
    that time (each active flow once per epoch): counted / epochs elapsed."""
    epochs = seconds / (epoch_ticks * TICK_SECONDS[target])
    return flow_epochs / epochs if epochs > 0 else 0.0


def check_budget(budget_bytes: int, mss_bytes: int, epoch_ticks: int) -> None:
    """Refuse what the switch cannot hold, in one line."""
    if share_count(budget_bytes, mss_bytes) > BUDGET_SHARE_SIZE:
        raise ModelError(
            f"budget {budget_bytes} bytes needs more than the switch's {BUDGET_SHARE_SIZE} "
            "shares (one per flow count with a share above one segment)"
        )
    if budget_bytes < mss_bytes:
        raise ModelError(f"budget {budget_bytes} bytes is below one segment ({mss_bytes} bytes)")
    if not MIN_EPOCH_TICKS <= epoch_ticks <= MAX_EPOCH_TICKS or epoch_ticks & (epoch_ticks - 1):
        raise ModelError(
            f"epoch {epoch_ticks} ticks: a power of two in [{MIN_EPOCH_TICKS}, {MAX_EPOCH_TICKS}]"
        )
