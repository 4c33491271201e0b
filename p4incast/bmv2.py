"""Run BMv2 `simple_switch_grpc` for tests, benchmarks and the testbed.

One process per switch, started with no pipeline (`--no-p4`; the controller
pushes it over P4Runtime), its P4Runtime port on loopback, its thrift port on
every address (BMv2 has no option for that; its default, 9090, is also
Prometheus's), and a
log file. `stop()` ends only the process this object started, by pid.
`LoopbackFence` keeps such ports from every peer but this host (nftables);
the testbed runs its switches inside one.
Also: veth pairs for data-plane tests, with IPv6 autoconfiguration and checksum
offloads off so that nothing but the test's own packets crosses them and
checksums on the wire are the ones the switch wrote.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import tools

# What simple_switch_grpc prints when it cannot bind a port (thrift's TServerSocket;
# gRPC's chttp2 server, which names the address it was given).
_BIND_FAILED = (
    re.compile(r"Could not bind to port (\d+)"),
    re.compile(r"No address added out of total \d+ resolved for '[^']*:(\d+)'"),
)


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
    _scratch: Path | None = None  # its output, without a log_file (deleted by stop)

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

    def _ports(self) -> dict[int, str]:
        """The TCP ports this switch binds on the host, and what each is."""
        return {self.grpc_port: "P4Runtime (gRPC)", self.thrift_port: "thrift"}

    def _clash(self, port: int) -> str | None:
        """One line if `port` is held by a process other than this switch, else None."""
        mine = self.proc.pid if self.proc is not None else None
        others = [(pid, name) for pid, name in tools.port_listeners(port) if pid != mine]
        if not others:
            return None
        what = self._ports()[port]
        return (
            f"simple_switch_grpc: its {what} port {port} is taken by "
            f"{tools.describe_listeners(others)}; stop that or give the switch another "
            f"{what} port"
        )

    def _unbound(self, output: Path) -> str | None:
        """One line if the switch's output says it could not bind one of its ports."""
        try:
            text = output.read_text(errors="replace")
        except OSError:
            return None
        for pattern in _BIND_FAILED:
            m = pattern.search(text)
            if m and int(m.group(1)) in self._ports():
                port = int(m.group(1))
                return self._clash(port) or (
                    f"simple_switch_grpc could not bind its {self._ports()[port]} port {port} "
                    f"(see {output})"
                )
        return None

    def start(self, timeout: float = 15.0) -> Bmv2Switch:
        """Start the switch and return once it serves P4Runtime. A port it cannot bind
        (held by another process: found in /proc before it starts, or in its output
        after) is one RuntimeError naming the port and the process holding it, at
        once: simple_switch_grpc itself keeps running without gRPC when its thrift
        port is taken, and binds nothing when its gRPC port is."""
        if self.netns is None:  # another namespace's ports are not in our /proc/net
            for port in self._ports():
                clash = self._clash(port)
                if clash:
                    raise RuntimeError(clash)
        if self.log_file:
            output = self.log_file.with_suffix(".out")
        else:
            fd, name = tempfile.mkstemp(prefix="p4incast-bmv2-", suffix=".out")
            os.close(fd)
            output = self._scratch = Path(name)
        with open(output, "wb") as out:
            self.proc = subprocess.Popen(
                self.command(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        if self.netns is not None:
            return self
        deadline = time.monotonic() + timeout
        waiting = dict(self._ports())
        while waiting:
            exited = self.proc.poll() is not None  # first: then its output is complete
            problem = self._unbound(output)
            for port in list(waiting):
                problem = problem or self._clash(port)
                if self.proc.pid in {pid for pid, _ in tools.port_listeners(port)}:
                    del waiting[port]
            if problem is None and exited:
                code = self.proc.returncode
                problem = f"simple_switch_grpc exited with code {code} (see {output})"
            if problem is None and time.monotonic() > deadline:
                problem = (
                    f"simple_switch_grpc did not open {', '.join(map(str, waiting))} "
                    f"in {timeout} s (see {output})"
                )
            if problem is not None:
                self.stop()
                raise RuntimeError(problem)
            if waiting:
                time.sleep(0.05)
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
        if self._scratch is not None:
            self._scratch.unlink(missing_ok=True)
            self._scratch = None
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


# -- the fence: a switch's control ports reachable from this host only ----------------
# BMv2 binds its thrift port on every interface and has no option to do otherwise;
# anyone who reaches it writes tables and queues with no authentication. A fence
# is one nftables table of our own (inet: IPv4 and IPv6) whose input chain resets
# every TCP connection to the fenced ports that did not arrive on lo, i.e. that
# came from anywhere but this host. Deleting the table removes every rule at once.
FENCE_TABLE_PREFIX = "p4incast_fence_"
_NFT_HINT = "apt-get install nftables (make setup installs it)"
_fence_seq = itertools.count()


def nft_path() -> str | None:
    """nft (Debian's nftables; /usr/sbin is not on every PATH), or None."""
    return shutil.which("nft") or next(
        (p for p in ("/usr/sbin/nft", "/sbin/nft") if os.access(p, os.X_OK)), None
    )


def fence_unavailable() -> str | None:
    """Why a LoopbackFence cannot be set up here, or None."""
    if nft_path() is None:
        return f"fencing the BMv2 switches' control ports needs nft: {_NFT_HINT}"
    return None


def _nft(*args: str, script: str | None = None) -> subprocess.CompletedProcess[str]:
    nft = nft_path()
    if nft is None:
        raise RuntimeError(f"nft not found: {_NFT_HINT}")
    return subprocess.run([nft, *args], input=script, capture_output=True, text=True)


def fence_tables() -> list[str]:
    """The names of the fence tables present in this network namespace."""
    out = _nft("list", "tables", "inet").stdout.split()
    return [w for w in out if w.startswith(FENCE_TABLE_PREFIX)]


def _owner_alive(table: str) -> bool:
    """Whether the process that made fence `table` (..._<pid>_<n>) still runs."""
    try:
        pid = int(table.removeprefix(FENCE_TABLE_PREFIX).split("_")[0])
    except ValueError:
        return True  # not a name we give: leave it
    return Path(f"/proc/{pid}").exists()


@dataclass
class LoopbackFence:
    """TCP `ports` of this network namespace refused (reset) to every peer that is
    not this host, while the fence is up. `up()` first deletes fences that a
    killed run left (their process is gone); `down()` is idempotent."""

    ports: tuple[int, ...]
    table: str = ""

    def up(self) -> LoopbackFence:
        for stale in fence_tables():
            if not _owner_alive(stale):
                _nft("delete", "table", "inet", stale)
        self.table = f"{FENCE_TABLE_PREFIX}{os.getpid()}_{next(_fence_seq)}"
        ports = ", ".join(str(p) for p in sorted(set(self.ports)))
        script = (
            f"table inet {self.table} {{\n"
            "  chain input {\n"
            "    type filter hook input priority filter; policy accept;\n"
            f'    iifname != "lo" tcp dport {{ {ports} }} reject with tcp reset\n'
            "  }\n"
            "}\n"
        )
        r = _nft("-f", "-", script=script)
        if r.returncode != 0:
            table, self.table = self.table, ""
            raise RuntimeError(f"nft could not add the fence {table}: {r.stderr.strip()}")
        return self

    def down(self) -> None:
        if not self.table:
            return
        r = _nft("delete", "table", "inet", self.table)
        if r.returncode != 0 and self.table in fence_tables():
            raise RuntimeError(f"nft could not delete the fence {self.table}: {r.stderr.strip()}")
        self.table = ""

    def __enter__(self) -> LoopbackFence:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()
