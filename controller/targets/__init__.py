"""The controller's targets, keyed by the switch YAML's `switch.target`.

- `v1model` (`bmv2.Bmv2Target`): BMv2 simple_switch_grpc, K in packets,
  queue depth/rate and the port list through BMv2's thrift CLI.
- `tna` (`tna.TnaTarget`): Tofino 1, K in bytes converted to 80-byte cells,
  no queue settings (the SDE's TM API owns them), no port list.

Everything target-specific lives behind `base.Target`; the rest of the
controller asks `TARGETS[name]` and never branches on the name.
"""

from __future__ import annotations

from ..errors import ControllerError
from .base import QueueSetting, Target, ThriftAddress
from .bmv2 import Bmv2Target
from .tna import TnaTarget

V1MODEL: Target = Bmv2Target()
TNA: Target = TnaTarget()
TARGETS: dict[str, Target] = {t.name: t for t in (V1MODEL, TNA)}


def get(name: object, where: str = "target") -> Target:
    """The target called `name`, or one ControllerError listing the known ones."""
    if not isinstance(name, str) or name not in TARGETS:
        raise ControllerError(f"{where} {name!r} is not one of {', '.join(TARGETS)}")
    return TARGETS[name]


__all__ = [
    "TARGETS",
    "TNA",
    "V1MODEL",
    "Bmv2Target",
    "QueueSetting",
    "Target",
    "ThriftAddress",
    "TnaTarget",
    "get",
]
