"""Run BMv2 `simple_switch_grpc` for tests, benchmarks and the testbed.

One process per switch, started with no pipeline (`--no-p4`; the controller
pushes it over P4Runtime), its P4Runtime and thrift ports on loopback, and a
log file. `stop()` ends only the process this object started, by pid.
Also: veth pairs for data-plane tests, with IPv6 autoconfiguration and checksum
offloads off so that nothing but the test's own packets crosses them and
checksums on the wire are the ones the switch wrote.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import tools


def wait_port(port: int, timeout: float, host: str = "127.0.0.1") -> bool:
    """True once something accepts TCP connections on host:port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex((host, port)) == 0:
                return True
        time.sleep(0.05)
    return False


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        return s.connect_ex((host, port)) != 0


@dataclass
class Bmv2Switch:
    """A simple_switch_grpc process.

    ports: switch port number -> interface name.
    """

    ports: dict[int, str]
    grpc_port: int = 9559
    thrift_port: int = 9090
    device_id: int = 0
    log_file: Path | None = None
    netns: str | None = None  # run inside this network namespace (ip netns)
    extra_args: list[str] = field(default_factory=list)
    grpc_args: list[str] = field(default_factory=list)  # P4Runtime server's, e.g. --grpc-server-ssl
    wrapper: list[str] = field(default_factory=list)  # run under this, e.g. ["valgrind", ...]
    exe: Path | None = None  # this simple_switch_grpc build; None: the one tools.require finds
    proc: subprocess.Popen[bytes] | None = None

    @property
    def grpc_addr(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def command(self) -> list[str]:
        exe = str(self.exe or tools.require("simple_switch_grpc"))
        cmd = [
            exe,
            "--no-p4",
            "--device-id",
            str(self.device_id),
            "--thrift-port",
            str(self.thrift_port),
        ]
        for num, iface in sorted(self.ports.items()):
            cmd += ["-i", f"{num}@{iface}"]
        if self.log_file:
            cmd += ["--log-file", str(self.log_file.with_suffix("")), "--log-flush"]
        cmd += self.extra_args
        cmd += ["--", "--grpc-server-addr", self.grpc_addr, *self.grpc_args]
        cmd = [*self.wrapper, *cmd]
        if self.netns:
            cmd = ["ip", "netns", "exec", self.netns, *cmd]
        return cmd

    def start(self, timeout: float = 15.0) -> Bmv2Switch:
        for port in (self.grpc_port, self.thrift_port):
            if self.netns is None and not port_free(port):
                raise RuntimeError(f"port {port} on 127.0.0.1 is in use (another switch running?)")
        if self.log_file:
            with open(self.log_file.with_suffix(".out"), "wb") as out:
                self.proc = subprocess.Popen(
                    self.command(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
                )
        else:
            self.proc = subprocess.Popen(
                self.command(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        if self.netns is None and not wait_port(self.grpc_port, timeout):
            self.stop()
            raise RuntimeError(f"simple_switch_grpc did not open {self.grpc_addr} in {timeout} s")
        if self.netns is None:
            wait_port(self.thrift_port, timeout)
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """Hard kill (simulates a crash)."""
        if self.alive():
            assert self.proc is not None
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self.proc = None

    def __enter__(self) -> Bmv2Switch:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


def quiet_iface(name: str) -> None:
    """No IPv6 autoconf chatter, no checksum offload (the wire shows real checksums)."""
    subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{name}.disable_ipv6=1"], capture_output=True)
    subprocess.run(
        ["ethtool", "-K", name, "tx", "off", "rx", "off", "tso", "off", "gso", "off", "gro", "off"],
        capture_output=True,
    )


def make_veth(a: str, b: str, mtu: int = 9500) -> None:
    """Create veth pair a<->b (replacing a stale one), both up and quiet."""
    subprocess.run(["ip", "link", "del", a], capture_output=True)
    _run("ip", "link", "add", a, "type", "veth", "peer", "name", b)
    for name in (a, b):
        quiet_iface(name)
        _run("ip", "link", "set", name, "mtu", str(mtu), "up")


def del_veth(a: str) -> None:
    subprocess.run(["ip", "link", "del", a], capture_output=True)


def have_root() -> bool:
    return os.geteuid() == 0
