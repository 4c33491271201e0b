"""ECN marking modes at the switch's egress queue (docs/algorithms.md §1).

The pipeline encodes them as `ecn_mode_t` constants in p4src/shared/defines.p4
(ECN_MODE_OFF = 0, ECN_MODE_MARK_TAIL = 1, ECN_MODE_MARK_FRONT = 2); a test
reads that file and checks these codes against it.

    off    never mark
    tail   DCTCP mark-tail: the depth a packet saw at enqueue >= K
    front  NewDCTCP mark-front: the depth a packet left behind at dequeue >= K
"""

from __future__ import annotations

from enum import StrEnum

from .errors import ModelError


class EcnMode(StrEnum):
    OFF = "off"
    TAIL = "tail"
    FRONT = "front"

    @property
    def code(self) -> int:
        """The pipeline's ecn_mode_t value (set_ecn_policy's `mode` parameter)."""
        return _CODES[self]

    @classmethod
    def parse(cls, value: object, where: str = "ecn mode") -> EcnMode:
        """A mode from a config value. YAML 1.1 reads a bare `off` as false, so
        false means off wherever a mode is read (switch YAML, experiment YAML, CLI)."""
        if value is False:
            return cls.OFF
        if isinstance(value, cls):
            return value
        if isinstance(value, str) and value in cls._value2member_map_:
            return cls(value)
        raise ModelError(f"{where}: {value!r} is not one of {', '.join(m.value for m in cls)}")


_CODES = {EcnMode.OFF: 0, EcnMode.TAIL: 1, EcnMode.FRONT: 2}
