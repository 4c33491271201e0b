"""Queue-depth units: what the user writes (K) -> what the pipeline compares.

The pipeline compares K against the target's own queue-depth field
(p4src/shared/ecn_decision.p4: mark when depth >= K):

- BMv2 (v1model): `standard_metadata.enq_qdepth` / `deq_qdepth` count
  packets. K is given in packets and written unchanged.
- Tofino (TNA): `eg_intr_md.enq_qdepth` / `deq_qdepth` count buffer cells,
  80 bytes per cell on Tofino 1 and 176 bytes on Tofino 2 (the cell size of
  each chip's traffic manager). K is given in bytes and converted:

      K_cells = ceil(K_bytes / cell_bytes)

  Rounding up means the switch never marks (or drops) below the byte count
  the user asked for: it marks once at least K_bytes of cell space is queued,
  and at most one cell (cell_bytes - 1 bytes) later than K_bytes exactly.
  A packet occupies whole cells, so a queue of n packets of L bytes holds
  n * ceil(L / cell_bytes) cells; K in bytes is a threshold on buffer
  occupancy, not on payload bytes.

Bounds are the depth field's width: both targets' queue-depth fields are
bit<19> (v1model.p4 enq_qdepth; tofino1_base.p4 / tofino2_base.p4
egress_intrinsic_metadata_t.enq_qdepth and deq_qdepth), and so is the
pipeline's `qdepth_t`, so a threshold must fit in 1 .. 2**19 - 1 depth units
(drop thresholds may also be 0, "off"). On Tofino 1 that is at most
524287 cells = 41,942,960 bytes. Values the target cannot hold are refused
with a message naming the allowed range, never wrapped or clamped.

The queue-depth histogram (queue_depth_stats) buckets depth at enqueue:
one packet per bucket on BMv2, 2**HIST_DEPTH_SHIFT = 16 cells per bucket on
Tofino (p4src/tna/main.p4), about one full-size packet on Tofino 1.

Pure: no I/O, imports only the controller's error type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

from .errors import ControllerError

QDEPTH_BITS = 19  # width of enq_qdepth / deq_qdepth on v1model, Tofino 1 and Tofino 2
QDEPTH_MAX = (1 << QDEPTH_BITS) - 1  # 524287 depth units


class DepthUnitError(ControllerError, ValueError):
    """A threshold the target cannot hold; the message names the allowed range."""


@dataclass(frozen=True)
class DepthUnit:
    """How one target counts queue depth.

    cell_bytes = 0 means the target counts packets (BMv2): thresholds are
    given in packets and pass through unchanged. Otherwise thresholds are
    given in bytes and converted to cells of `cell_bytes` bytes.
    """

    name: str  # target/chip name used in messages
    cell_bytes: int  # bytes per depth unit; 0 = the unit is a packet
    hist_bucket_units: int = 1  # depth units per histogram bucket (p4src/<target>/main.p4)
    depth_max: int = QDEPTH_MAX  # largest value the depth field (and qdepth_t) holds

    def __post_init__(self) -> None:
        if self.cell_bytes < 0:
            raise ValueError(f"{self.name}: cell_bytes must be >= 0, got {self.cell_bytes}")
        if self.hist_bucket_units < 1:
            raise ValueError(f"{self.name}: hist_bucket_units must be >= 1")

    @property
    def user_unit(self) -> str:
        """Unit of K in configs and on the command line."""
        return "packets" if self.cell_bytes == 0 else "bytes"

    @property
    def depth_unit(self) -> str:
        """Unit the pipeline compares K in."""
        return "packets" if self.cell_bytes == 0 else "cells"

    @property
    def user_max(self) -> int:
        """Largest K (in user units) whose converted value still fits the depth field."""
        if self.cell_bytes == 0:
            return self.depth_max
        return self.depth_max * self.cell_bytes

    def convert(self, value: int) -> int:
        """User units -> depth units (packets unchanged; bytes rounded up to cells).

        No range check: use `threshold` for values that go to the switch.
        """
        if self.cell_bytes == 0:
            return value
        return math.ceil(value / self.cell_bytes)

    def threshold(self, value: object, what: str = "K", *, allow_zero: bool = False) -> int:
        """Validate a user threshold and return it in depth units.

        allow_zero: 0 is accepted and means "off" (drop_k); K itself must be >= 1,
        since K = 0 would mark every ECN-capable packet.
        Raises DepthUnitError for non-integers, negatives and values the depth field
        cannot hold.
        """
        unit = self.user_unit
        lo = 0 if allow_zero else 1
        if isinstance(value, bool) or not isinstance(value, int):
            raise DepthUnitError(f"{what} must be a whole number of {unit}, got {value!r}")
        if value < lo or value > self.user_max:
            raise DepthUnitError(
                f"{what}={value} {unit} is outside what {self.name} can hold: "
                f"use {lo}..{self.user_max} {unit}"
                + ("" if self.cell_bytes == 0 else f" ({self.cell_bytes}-byte cells, bit<19>)")
            )
        return self.convert(value)

    def to_user(self, depth: int) -> int:
        """Depth units -> user units (cells -> bytes of cell space; packets unchanged)."""
        return depth if self.cell_bytes == 0 else depth * self.cell_bytes

    def bucket_range(self, bucket: int, n_buckets: int) -> tuple[int, int | None]:
        """Depth-unit range [lo, hi] of histogram bucket; hi None for the open last bucket."""
        if not 0 <= bucket < n_buckets:
            raise ValueError(f"bucket {bucket} outside 0..{n_buckets - 1}")
        lo = bucket * self.hist_bucket_units
        if bucket == n_buckets - 1:
            return (lo, None)
        return (lo, lo + self.hist_bucket_units - 1)


HIST_DEPTH_SHIFT_TNA = 4  # p4src/tna/main.p4 HIST_DEPTH_SHIFT: 16 cells per bucket

BMV2 = DepthUnit(name="v1model", cell_bytes=0)
TOFINO1 = DepthUnit(name="tofino", cell_bytes=80, hist_bucket_units=1 << HIST_DEPTH_SHIFT_TNA)
TOFINO2 = DepthUnit(name="tofino2", cell_bytes=176, hist_bucket_units=1 << HIST_DEPTH_SHIFT_TNA)

UNITS = {u.name: u for u in (BMV2, TOFINO1, TOFINO2)}
TARGET_UNITS = {"v1model": BMV2, "tna": TOFINO1}  # controller target -> default chip


def bytes_to_cells(k_bytes: int, cell_bytes: int = TOFINO1.cell_bytes) -> int:
    """K in bytes -> cells, rounded up, checked against the bit<19> depth field."""
    # Checked as any value: a caller may pass what a config file held.
    if (
        isinstance(cell_bytes, bool)
        or not isinstance(cast(object, cell_bytes), int)
        or cell_bytes <= 0
    ):
        raise ValueError(f"cell_bytes must be a whole number > 0, got {cell_bytes!r}")
    unit = TOFINO1 if cell_bytes == TOFINO1.cell_bytes else DepthUnit("tofino", cell_bytes)
    return unit.threshold(k_bytes, "K")


def for_target(target: str, chip: str | None = None) -> DepthUnit:
    """The depth unit of a controller target ('v1model' | 'tna'); chip picks the Tofino."""
    if target not in TARGET_UNITS:
        raise DepthUnitError(
            f"unknown target {target!r}: use one of {', '.join(sorted(TARGET_UNITS))}"
        )
    if chip is None:
        return TARGET_UNITS[target]
    tofinos = sorted(n for n, u in UNITS.items() if u.cell_bytes)
    if target != "tna" or chip not in tofinos:
        raise DepthUnitError(
            f"chip {chip!r} does not apply to target {target!r}: "
            f"with target tna use one of {', '.join(tofinos)}"
        )
    return UNITS[chip]
