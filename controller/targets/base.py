"""What a controller target is: the part of the controller that differs between
switches running the same P4Runtime names (p4src/shared).

A target owns three things the P4Runtime pipeline cannot describe:

- its depth unit: what K is given in and what the pipeline compares it with
  (`units.DepthUnit`: packets on BMv2, 80-byte cells on Tofino 1), plus any
  rule that ties K to the port's queue;
- its egress queue settings (depth, drain rate): P4Runtime has no call for
  them, so each target says how they are set, or that they are not;
- how to list the switch's ports, when the target can.

Validation (`check_k`, `check_queue`) is pure; `set_queues` and
`existing_ports` talk to the switch, at the `ThriftAddress` the switch's
settings name (`config.SwitchSettings.thrift`), never a guessed one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass

from ..addresses import bracketed, is_loopback
from ..units import DepthUnit


@dataclass(frozen=True)
class QueueSetting:
    """One egress port's queue: depth in packets, drain rate in packets/s (None: unchanged)."""

    depth: int | None = None
    rate: int | None = None

    @property
    def empty(self) -> bool:
        return self.depth is None and self.rate is None


@dataclass(frozen=True)
class ThriftAddress:
    """Where a switch's thrift runtime listens: host (name or IP) and port."""

    host: str
    port: int

    @property
    def local(self) -> bool:
        """On this host's loopback (so its listeners are in this host's /proc)."""
        return is_loopback(self.host)

    def __str__(self) -> str:
        return f"{bracketed(self.host)}:{self.port}"


class Target(ABC):
    """One switch target, keyed by `name` in `targets.TARGETS` (the YAML's switch.target)."""

    name: str  # "v1model" | "tna": switch.target, and build/<name>/ holds its pipeline
    unit: DepthUnit  # how its queue depth (and so K) is counted
    # False: the device config is one compiled file, sent as is (pipeline.config).
    # True: it is packed from a compiler build directory (pipeline.build_dir) in the
    # format of the switch's P4Runtime server (switch.runtime; `tofino_config`).
    packs_build_dir: bool = False

    def check_k(self, k: object, queue_depth: int | None, where: str) -> None:
        """Refuse a K (user units) the depth field cannot hold; targets add their own rules.

        queue_depth is the port's configured queue capacity, when it has one.
        """
        self.unit.threshold(k, f"{where}: k")

    @abstractmethod
    def check_queue(self, setting: QueueSetting, where: str) -> None:
        """Refuse queue settings this target cannot apply (ControllerError naming the fix)."""

    @abstractmethod
    def set_queues(self, settings: Mapping[int, QueueSetting], thrift: ThriftAddress) -> None:
        """Apply the queue setting of each port (already checked) in one go."""

    @abstractmethod
    def existing_ports(self, thrift: ThriftAddress) -> set[int] | None:
        """The ports the running switch has, or None when the target cannot list
        ports (then the config's ports are trusted and only the port range is
        checked). ControllerError when it can but the switch does not answer."""

    def local_port_clash(self, thrift_port: int) -> str | None:
        """Why a switch of this target on this host may serve no P4Runtime although
        it runs: one line, or None (nothing this target knows of)."""
        return None
