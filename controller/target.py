"""What differs between targets, in one place: the depth unit of K and the pipeline's sizes.

BMv2 (v1model) counts queue depth in packets; Tofino (TNA) in buffer cells
(80 bytes on Tofino 1). Users give K in packets on v1model and in bytes on
tna; the conversion and its bounds live in `units` (DepthUnit.threshold).
"""

from __future__ import annotations

from .units import QDEPTH_MAX, TARGET_UNITS, DepthUnit

Target = DepthUnit  # a controller target is described by how it counts queue depth

PORT_MAX = (1 << 9) - 1  # port_t is bit<9>
HIST_PORTS = 128  # p4src/shared/sizes.p4
HIST_BUCKETS = 128

TARGETS: dict[str, Target] = TARGET_UNITS  # v1model -> BMv2 packets, tna -> Tofino 1 cells
V1MODEL = TARGETS["v1model"]
TNA = TARGETS["tna"]

__all__ = [
    "HIST_BUCKETS",
    "HIST_PORTS",
    "PORT_MAX",
    "QDEPTH_MAX",
    "TARGETS",
    "TNA",
    "V1MODEL",
    "Target",
]
