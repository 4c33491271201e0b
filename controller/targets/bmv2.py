"""BMv2 (v1model): K in packets, queues and ports through BMv2's thrift runtime.

P4Runtime has no call for queue shaping, so this target drives
`simple_switch_CLI` (BMv2's own thrift client) at the switch's thrift address
(`--thrift-ip`, `--thrift-port`; the CLI's own default host is localhost,
which is never relied on):
`set_queue_depth` (packets) and `set_queue_rate` (packets per second) per
egress port, and `show_ports` to learn which ports exist. The CLI runs with
our interpreter (it has `thrift`) and BMv2's Python runtime on its
PYTHONPATH only (DEVELOPERS.md, "Dependencies").

K is compared with `standard_metadata.enq_qdepth` / `deq_qdepth`, packets
waiting in the port's queue, so on a port with a configured queue depth K
must be below it (`p4incast.model.scheme.check_k`: 1 <= K < queue).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from p4incast import tools
from p4incast.model.scheme import check_k

from ..errors import ControllerError, model_errors
from ..units import BMV2, DepthUnit
from .base import QueueSetting, Target, ThriftAddress

CLI_TIMEOUT_S = 30
QUEUE_DEPTH_MAX = 1 << 16  # packets: far above any incast queue; BMv2 allocates per packet
QUEUE_RATE_MAX = 10**7  # packets/s: beyond what BMv2 forwards


def _switch(pid: int) -> bool:
    """Whether process `pid` is a BMv2 switch: simple_switch* in its command line
    (wrapped too, e.g. under valgrind). A process /proc does not show (pid 0) may
    be one: no clash is claimed for it."""
    if pid == 0:
        return True
    try:
        return b"simple_switch" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # gone meanwhile


def thrift_clash(thrift_port: int) -> str | None:
    """One line when a process other than a BMv2 switch listens on `thrift_port`
    (BMv2's default 9090 is also Prometheus's), else None. simple_switch_grpc
    started on a taken thrift port keeps running and serves no gRPC, and
    simple_switch_CLI talking to that other process waits for its timeout."""
    others = [(pid, name) for pid, name in tools.port_listeners(thrift_port) if not _switch(pid)]
    if not others:
        return None
    return (
        f"BMv2's thrift port {thrift_port} is taken by {tools.describe_listeners(others)}, "
        "not a switch; a simple_switch_grpc started on it serves no gRPC: start the "
        "switch with another --thrift-port and give p4incast-ctl the same (--thrift-port)"
    )


def run_cli(commands: list[str], thrift: ThriftAddress) -> str:
    """Run simple_switch_CLI commands against `thrift`; ControllerError on connection
    or command errors.

    A local thrift port another program holds (thrift_clash) is refused at once. The
    CLI exits 0 even when a command fails, so its output is searched for "Error",
    "Invalid" and "exception" lines.
    """
    clash = thrift_clash(thrift.port) if thrift.local else None
    if clash:
        raise ControllerError(clash)
    try:
        cli = tools.require("simple_switch_CLI")
    except tools.ToolMissing as err:
        raise ControllerError(str(err)) from None
    env = dict(os.environ)
    pydir = tools.bmv2_python_dir()
    if pydir is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pydir), env.get("PYTHONPATH")]))
    try:
        proc = subprocess.run(
            [
                sys.executable,
                str(cli),
                "--thrift-ip",
                thrift.host,
                "--thrift-port",
                str(thrift.port),
            ],
            env=env,
            input="\n".join(commands) + "\n",
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise ControllerError(
            f"simple_switch_CLI at {thrift} did not finish in {CLI_TIMEOUT_S} s"
        ) from None
    out = proc.stdout + proc.stderr
    if "Could not connect" in out or "TTransportException" in out:
        raise ControllerError(
            f"cannot reach BMv2's thrift runtime at {thrift} (is the switch running with "
            "that --thrift-port, built --with-thrift, and is switch.thrift_address its host?)"
        )
    if "No module named" in out:
        missing = re.search(r"No module named '([^']+)'", out)
        raise ControllerError(
            f"simple_switch_CLI cannot import {missing.group(1) if missing else 'a module'}; "
            "install Debian's python3-thrift (make setup does)"
        )
    bad = [line for line in out.splitlines() if re.search(r"Error|Invalid|exception", line)]
    if proc.returncode != 0 or bad:
        raise ControllerError(f"simple_switch_CLI: {(bad or [out.strip()])[0].strip()}")
    return proc.stdout


def parse_show_ports(out: str) -> dict[int, str]:
    """`show_ports` output -> {port number: interface}."""
    ports: dict[int, str] = {}
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+)\s+(\S+)", line.replace("RuntimeCmd:", ""))
        if m:
            ports[int(m.group(1))] = m.group(2)
    return ports


def switch_ports(thrift: ThriftAddress) -> dict[int, str]:
    """The switch's ports (number -> interface), from `show_ports`."""
    return parse_show_ports(run_cli(["show_ports"], thrift))


def queue_commands(port: int, *, depth: int | None = None, rate: int | None = None) -> list[str]:
    """simple_switch_CLI commands that set one port's queue depth and/or rate."""
    cmds: list[str] = []
    if depth is not None:
        cmds.append(f"set_queue_depth {depth} {port}")
    if rate is not None:
        cmds.append(f"set_queue_rate {rate} {port}")
    return cmds


def _in_range(value: object, what: str, hi: int, unit: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ControllerError(f"{what} must be a whole number of {unit}, got {value!r}")
    if not 1 <= value <= hi:
        raise ControllerError(f"{what}={value} is outside 1..{hi} {unit}")


@dataclass(frozen=True)
class Bmv2Target(Target):
    """simple_switch_grpc: depth in packets, queues and port list over thrift."""

    name: str = "v1model"
    unit: DepthUnit = BMV2

    def check_k(self, k: object, queue_depth: int | None, where: str) -> None:
        """K fits the depth field and, on a port with a queue depth, 1 <= K < queue."""
        super().check_k(k, queue_depth, where)
        if queue_depth is not None:
            assert isinstance(k, int)  # threshold() refused anything else
            with model_errors():
                check_k(k, queue_depth, where)

    def check_queue(self, setting: QueueSetting, where: str) -> None:
        if setting.depth is not None:
            _in_range(setting.depth, f"{where}: queue_depth", QUEUE_DEPTH_MAX, "packets")
        if setting.rate is not None:
            _in_range(setting.rate, f"{where}: queue_rate", QUEUE_RATE_MAX, "packets/s")

    def set_queues(self, settings: Mapping[int, QueueSetting], thrift: ThriftAddress) -> None:
        """All ports' depth and rate in one CLI session."""
        cmds = [
            c
            for port, s in sorted(settings.items())
            for c in queue_commands(port, depth=s.depth, rate=s.rate)
        ]
        if cmds:
            run_cli(cmds, thrift)

    def local_port_clash(self, thrift_port: int) -> str | None:
        return thrift_clash(thrift_port)

    def existing_ports(self, thrift: ThriftAddress) -> set[int] | None:
        """BMv2's ports from `show_ports` (P4Runtime alone cannot list them);
        ControllerError when its thrift runtime does not answer."""
        return set(switch_ports(thrift)) or None
