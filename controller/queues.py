"""BMv2 egress queue depth and rate per port, through BMv2's thrift runtime.

P4Runtime has no call for queue shaping, so this drives `simple_switch_CLI`
(BMv2's own thrift client) on the switch's thrift port. Depth is in packets,
rate in packets per second.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from p4incast import tools

from .errors import ControllerError

_TIMEOUT_S = 30


def run_cli(commands: list[str], thrift_port: int) -> str:
    """Run simple_switch_CLI commands; ControllerError on connection or command errors."""
    try:
        cli = tools.require("simple_switch_CLI")
    except tools.ToolMissing as err:
        raise ControllerError(str(err)) from None
    # Run BMv2's CLI with our interpreter (it has `thrift`) and BMv2's Python runtime
    # on its path only.
    env = dict(os.environ)
    pydir = tools.bmv2_python_dir()
    if pydir is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pydir), env.get("PYTHONPATH")]))
    try:
        proc = subprocess.run(
            [sys.executable, str(cli), "--thrift-port", str(thrift_port)],
            env=env,
            input="\n".join(commands) + "\n",
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise ControllerError(
            f"simple_switch_CLI on thrift port {thrift_port} did not finish in {_TIMEOUT_S} s"
        ) from None
    out = proc.stdout + proc.stderr
    if "Could not connect" in out or "TTransportException" in out:
        raise ControllerError(
            f"cannot reach BMv2's thrift runtime on 127.0.0.1:{thrift_port} (is the switch "
            "running with --thrift-port, built --with-thrift?)"
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


def switch_ports(thrift_port: int) -> dict[int, str]:
    """The switch's ports (number -> interface), from `show_ports`."""
    out = run_cli(["show_ports"], thrift_port)
    ports: dict[int, str] = {}
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+)\s+(\S+)", line.replace("RuntimeCmd:", ""))
        if m:
            ports[int(m.group(1))] = m.group(2)
    return ports


def queue_commands(port: int, *, depth: int | None = None, rate: int | None = None) -> list[str]:
    cmds = []
    if depth is not None:
        cmds.append(f"set_queue_depth {depth} {port}")
    if rate is not None:
        cmds.append(f"set_queue_rate {rate} {port}")
    return cmds


def set_queues(settings: dict[int, tuple[int | None, int | None]], thrift_port: int) -> None:
    """Apply (depth, rate) per port in one CLI session."""
    cmds = [
        c
        for port, (d, r) in sorted(settings.items())
        for c in queue_commands(port, depth=d, rate=r)
    ]
    if cmds:
        run_cli(cmds, thrift_port)
