"""Tofino (TNA): K in bytes, converted to buffer cells; queues are not ours to set.

The pipeline compares K with `eg_intr_md.enq_qdepth` / `deq_qdepth`, counted
in 80-byte cells on Tofino 1 (`units.TOFINO1`; `units.TOFINO2` for 176-byte
cells), so K is given in bytes and rounded up to whole cells.

A Tofino port's queue (its buffer share and shaping rate) belongs to the
traffic manager, which the SDE's TM API programs (bf_switchd, BF Runtime's
tm tables); there is no BMv2 thrift runtime to drive. This target refuses
queue settings, in the config and from `set-queue`, instead of ignoring them.
It cannot list the switch's ports either: P4Runtime has no call for it, so the
config's ports are trusted (and range-checked).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ControllerError
from ..units import TOFINO1, DepthUnit
from .base import QueueSetting, Target, ThriftAddress

NO_QUEUES = (
    "target tna shapes ports through the SDE's traffic-manager (TM) API, not BMv2's "
    "thrift runtime: set queue depth and rate with the SDE (bf_switchd / BF Runtime tm tables)"
)


@dataclass(frozen=True)
class TnaTarget(Target):
    """A Tofino running p4src/tna: K in bytes -> cells; no queue settings; no port list."""

    name: str = "tna"
    unit: DepthUnit = TOFINO1
    packs_build_dir: bool = True  # tofino.bin + context.json + bf-rt.json -> switch.runtime

    def check_queue(self, setting: QueueSetting, where: str) -> None:
        if not setting.empty:
            raise ControllerError(f"{where}: no queue_depth/queue_rate on tna; {NO_QUEUES}")

    def set_queues(self, settings: Mapping[int, QueueSetting], thrift: ThriftAddress) -> None:
        if any(not s.empty for s in settings.values()):
            raise ControllerError(NO_QUEUES)

    def existing_ports(self, thrift: ThriftAddress) -> set[int] | None:
        return None
