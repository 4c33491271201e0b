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

import ipaddress
import zlib
from collections.abc import Iterable

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
FLOW_SLOTS = 4096  # flow table slots a way, a power of two (p4src/shared/sizes.p4)
FLOW_SLOT_BITS = 12  # log2(FLOW_SLOTS)
FLOW_WAYS = 2  # way 0, then way 1 (p4src/v1model/main.p4 RxBudgetFlows)
# The handshake's ACK and its zero-window copy leave as the replicas 0 and
# ZERO_COPY_RID of multicast group ZERO_COPY_GROUP_BASE + the egress port
# (p4src/shared/sizes.p4).
ZERO_COPY_GROUP_BASE = 1
ZERO_COPY_RID = 1


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


def flow_crc(rx: str, peer: str, rx_port: int, peer_port: int) -> int:
    """The pipeline's CRC-32 of a flow (p4src/v1model/main.p4 RxBudgetFlows):
    16-byte receiver address, 16-byte peer address (IPv4 zero-extended),
    receiver port, peer port — zlib's CRC-32, BMv2's crc32."""
    return zlib.crc32(_flow_key(rx, peer) + _ports(rx_port, peer_port))


def flow_slots(crc: int) -> tuple[int, int]:
    """A flow's slot in way 0 and in way 1 (each 0 .. FLOW_SLOTS - 1): the CRC's
    low FLOW_SLOT_BITS bits and the FLOW_SLOT_BITS above them."""
    return crc & (FLOW_SLOTS - 1), (crc >> FLOW_SLOT_BITS) & (FLOW_SLOTS - 1)


def place(crcs: Iterable[int]) -> list[int | None]:
    """The way each flow ends in when the flows open one after another and each
    is counted before the next opens (a SYN, then its handshake's ACK): way 0
    if its slot there is free, else way 1 if free there, else None
    (untracked). No flow closes or ages out."""
    held: set[tuple[int, int]] = set()
    out: list[int | None] = []
    for crc in crcs:
        way = next((w for w, s in enumerate(flow_slots(crc)) if (w, s) not in held), None)
        if way is not None:
            held.add((way, flow_slots(crc)[way]))
        out.append(way)
    return out


def ports_in_slots(rx: str, peer: str, slot0: int, slot1: int) -> tuple[int, int]:
    """A receiver port and a peer port, both >= 1024, whose flow (rx, peer) has
    slot `slot0` in way 0 and `slot1` in way 1: a CRC-32 over a key of fixed
    length is affine in the key's bits, so the ports are a solution of 24
    equations over GF(2) in their 32 bits (for tests of both ways held)."""
    prefix = _flow_key(rx, peer)
    bits = 2 * FLOW_SLOT_BITS
    mask = (1 << bits) - 1
    base = zlib.crc32(prefix + bytes(4)) & mask
    target = (slot1 << FLOW_SLOT_BITS | slot0) ^ base
    # column j: what bit j of (rx_port << 16 | peer_port) flips in the low bits
    cols = [(zlib.crc32(prefix + (1 << j).to_bytes(4, "big")) & mask) ^ base for j in range(32)]
    null: list[int] = []  # combinations of the variables that flip no low bit
    basis: dict[int, tuple[int, int]] = {}  # pivot output bit -> (column value, variables)
    for j, col in enumerate(cols):
        value, var = col, 1 << j
        for pivot in sorted(basis, reverse=True):
            if value >> pivot & 1:
                value ^= basis[pivot][0]
                var ^= basis[pivot][1]
        if value:
            basis[value.bit_length() - 1] = (value, var)
        else:
            null.append(var)
    value, var = target, 0
    for pivot in sorted(basis, reverse=True):
        if value >> pivot & 1:
            value ^= basis[pivot][0]
            var ^= basis[pivot][1]
    if value:
        raise ModelError(f"no ports put {rx} -> {peer} in slots {slot0}, {slot1}")
    for k in range(1 << len(null)):
        x = var
        for i, free in enumerate(null):
            if k >> i & 1:
                x ^= free
        rx_port, peer_port = x >> 16, x & 0xFFFF
        if rx_port >= 1024 and peer_port >= 1024:
            return rx_port, peer_port
    raise ModelError(f"no ports >= 1024 put {rx} -> {peer} in slots {slot0}, {slot1}")


def _flow_key(rx: str, peer: str) -> bytes:
    def a16(a: str) -> bytes:
        return int(ipaddress.ip_address(a)).to_bytes(16, "big")

    return a16(rx) + a16(peer)


def _ports(rx_port: int, peer_port: int) -> bytes:
    return rx_port.to_bytes(2, "big") + peer_port.to_bytes(2, "big")
