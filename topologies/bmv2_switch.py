"""A Mininet switch that is a BMv2 `simple_switch_grpc` process.

It starts with no pipeline; the p4-incast controller pushes the pipeline and
programs routes, ECN policy and queues once the network is up
(`engines/testbed.py` `program`). Each switch gets its own P4Runtime port,
bound to 127.0.0.1, its own thrift port, which BMv2 binds on every interface
of the root namespace (it has no option to do otherwise; the testbed fences
both ports to this host with nftables, `engines/testbed.py` `network`), and a
log under the run's directory; `stop()` ends only the process it started.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from mininet.node import Switch

from p4incast import bmv2, tools

_GRPC_BASE, _THRIFT_BASE = 50100, 9190
_next_index = itertools.count()


class Bmv2GrpcSwitch(Switch):
    """Mininet Switch backed by simple_switch_grpc (root namespace, veths as ports).

    The BMv2 performance build when installed (tools.fastest_simple_switch_grpc)."""

    def __init__(
        self,
        name: str,
        *,
        grpc_port: int | None = None,
        thrift_port: int | None = None,
        device_id: int = 0,
        log_dir: str | Path | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, **kwargs)
        index = next(_next_index)
        self.grpc_port = grpc_port or _GRPC_BASE + index
        self.thrift_port = thrift_port or _THRIFT_BASE + index
        self.device_id = device_id
        self.log_dir = Path(log_dir) if log_dir else None
        self.process: bmv2.Bmv2Switch | None = None

    @property
    def grpc_addr(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def switch_ports(self) -> dict[int, str]:
        """Switch port number -> interface name, as Mininet numbered them."""
        return {self.ports[intf]: intf.name for intf in self.intfList() if intf.name != "lo"}

    def start(self, controllers: list[Any]) -> None:
        for name in self.switch_ports().values():
            bmv2.quiet_iface(name)
        log = self.log_dir / f"{self.name}.log" if self.log_dir else None
        self.process = bmv2.Bmv2Switch(
            ports=self.switch_ports(),
            grpc_port=self.grpc_port,
            thrift_port=self.thrift_port,
            device_id=self.device_id,
            log_file=log,
            extra_args=["--log-level", "warn"],
            exe=tools.fastest_simple_switch_grpc()[0],
        )
        self.process.start()

    def stop(self, deleteIntfs: bool = True) -> None:  # Mininet's signature
        if self.process is not None:
            self.process.stop()
            self.process = None
        super().stop(deleteIntfs)

    def connected(self) -> bool:
        return self.process is not None and self.process.alive()
