"""What differs between targets, in one place: queue-depth unit, K bounds, histogram.

BMv2 (v1model) counts queue depth in packets; Tofino 1 (TNA) in 80-byte cells.
Users give K in packets on BMv2 and in bytes on Tofino; `to_depth_units`
converts to what the pipeline compares against `enq_qdepth` / `deq_qdepth`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

QDEPTH_MAX = (1 << 19) - 1  # qdepth_t is bit<19> on both targets
PORT_MAX = (1 << 9) - 1  # port_t is bit<9>
HIST_PORTS = 128  # p4src/shared/sizes.p4
HIST_BUCKETS = 128


@dataclass(frozen=True)
class Target:
    """A P4 target's queue unit and limits."""

    name: str
    user_unit: str  # unit of K in configs and on the command line
    depth_unit: str  # unit the pipeline compares K in
    unit_bytes: int  # bytes per depth unit (0: the unit is a packet)

    def to_depth_units(self, value: int) -> int:
        """K as the user gave it -> K in the pipeline's depth unit (rounded up)."""
        if self.unit_bytes == 0:
            return value
        return math.ceil(value / self.unit_bytes)

    def check_threshold(self, value: int, what: str = "K") -> int:
        """Validate a user threshold; return it in depth units (ControllerError if out of range)."""
        from .errors import ControllerError

        if isinstance(value, bool) or not isinstance(value, int):
            raise ControllerError(f"{what} must be a whole number of {self.user_unit}: {value!r}")
        if not 1 <= self.to_depth_units(value) <= QDEPTH_MAX:
            hi = QDEPTH_MAX * max(1, self.unit_bytes)
            raise ControllerError(
                f"{what}={value} {self.user_unit} is outside what {self.name} can hold "
                f"(1..{hi} {self.user_unit})"
            )
        return self.to_depth_units(value)

    def bucket_range(self, bucket: int) -> tuple[int, int | None]:
        """Depth range [lo, hi] (depth units) of histogram bucket; hi None = open-ended."""
        if bucket >= HIST_BUCKETS - 1:
            return (HIST_BUCKETS - 1, None)
        return (bucket, bucket)


V1MODEL = Target(name="v1model", user_unit="packets", depth_unit="packets", unit_bytes=0)
TNA = Target(name="tna", user_unit="bytes", depth_unit="cells", unit_bytes=80)

TARGETS = {t.name: t for t in (V1MODEL, TNA)}
