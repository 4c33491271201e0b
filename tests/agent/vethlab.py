"""A two-namespace veth lab for the agent's root tests and its benchmark
(scripts/bench_agent.py imports it from here).

    ns p4ia-s<tag>  p4ia-s0 10.199.<n>.1 ──veth── p4ia-r0 10.199.<n>.2  ns p4ia-r<tag>
      sender: tcp_ecn=1,                    receiver: tcp_ecn=1,
      htb bottleneck on p4ia-s0, test CE marker    agent on p4ia-r0, (test CE eraser)

Every name carries the `p4ia` prefix; `close()` (also on exceptions, and
from a pytest finalizer) kills what it started and deletes both namespaces,
which removes the veth pair. Only `ip`, `tc`, `ethtool`, `ss`, `iperf3`
commands are used.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from p4incast.agent.datapath import default_bpf_dir
from p4incast.agent.libbpf import BpfError, TcOpts, lib
from p4incast.agent.runner import _map_id

__all__ = ["SsSample", "VethLab", "lab_skip_reason"]

TOOLS = {
    "ip": "iproute2",
    "tc": "iproute2",
    "ss": "iproute2",
    "iperf3": "iperf3",
    "ethtool": "ethtool",
}


def lab_skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, veth, tc)"
    for t, pkg in TOOLS.items():
        if not shutil.which(t):
            return f"{t} not found (apt-get install {pkg})"
    for obj in ("rxwin.bpf.o", "ce_mark.bpf.o", "ce_clear.bpf.o"):
        if not (default_bpf_dir() / obj).exists():
            return f"{default_bpf_dir() / obj} not built (scripts/build-agent.sh)"
    return None


@dataclass
class SsSample:
    t: float
    unacked: int  # packets in flight
    mss: int
    snd_wnd: int  # peer's advertised window as the sender sees it, bytes
    cwnd: int
    bytes_acked: int
    text: str = ""  # the ss -ti block of this connection

    @property
    def inflight(self) -> int:
        return self.unacked * self.mss


_SS_FIELDS = {
    "unacked": re.compile(r"\bunacked:(\d+)"),
    "mss": re.compile(r"\bmss:(\d+)"),
    "snd_wnd": re.compile(r"\bsnd_wnd:(\d+)"),
    "cwnd": re.compile(r"\bcwnd:(\d+)"),
    "bytes_acked": re.compile(r"\bbytes_acked:(\d+)"),
}


@dataclass
class VethLab:
    rate_mbit: int = 200
    queue_pkts: int = 1000
    tag: str = field(default_factory=lambda: str(os.getpid() % 100000))
    procs: list[subprocess.Popen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ns_s = f"p4ia-s{self.tag}"
        self.ns_r = f"p4ia-r{self.tag}"
        n = int(self.tag) % 250 + 1
        self.ip_s = f"10.199.{n}.1"
        self.ip_r = f"10.199.{n}.2"
        self.dev_s, self.dev_r = "p4ia-s0", "p4ia-r0"
        self.bpf = default_bpf_dir()

    # -- plumbing -------------------------------------------------------------------
    @staticmethod
    def sh(*cmd: str, check: bool = True) -> str:
        r = subprocess.run(cmd, capture_output=True, text=True)
        if check and r.returncode:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip() or r.stdout.strip()}")
        return r.stdout

    def ns(self, ns: str, *cmd: str, check: bool = True) -> str:
        return self.sh("ip", "netns", "exec", ns, *cmd, check=check)

    def up(self) -> VethLab:
        self.close()
        for ns in (self.ns_s, self.ns_r):
            self.sh("ip", "netns", "add", ns)
            self.ns(ns, "ip", "link", "set", "lo", "up")
            self.ns(ns, "sysctl", "-qw", "net.ipv4.tcp_ecn=1")
        self.sh(
            "ip",
            "link",
            "add",
            self.dev_s,
            "netns",
            self.ns_s,
            "type",
            "veth",
            "peer",
            "name",
            self.dev_r,
            "netns",
            self.ns_r,
        )
        for ns, dev, ip in ((self.ns_s, self.dev_s, self.ip_s), (self.ns_r, self.dev_r, self.ip_r)):
            self.ns(ns, "ip", "addr", "add", f"{ip}/24", "dev", dev)
            self.ns(ns, "ip", "link", "set", dev, "up")
            # One skb per wire packet, as on a NIC without offloads.
            self.ns(ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", check=False)
        self.ns(
            self.ns_s,
            "tc",
            "qdisc",
            "add",
            "dev",
            self.dev_s,
            "root",
            "handle",
            "1:",
            "htb",
            "default",
            "10",
        )
        self.ns(
            self.ns_s,
            "tc",
            "class",
            "add",
            "dev",
            self.dev_s,
            "parent",
            "1:",
            "classid",
            "1:10",
            "htb",
            "rate",
            f"{self.rate_mbit}mbit",
            "ceil",
            f"{self.rate_mbit}mbit",
        )
        self.ns(
            self.ns_s,
            "tc",
            "qdisc",
            "add",
            "dev",
            self.dev_s,
            "parent",
            "1:10",
            "pfifo",
            "limit",
            str(self.queue_pkts),
        )
        return self

    def bottleneck_backlog(self) -> int:
        """Packets waiting in the bottleneck's queue now: one read of the qdisc's
        own counter, so one instant (a sum of `ss` lines is not: it reads the
        sockets one after another while a turn passes between them)."""
        out = self.ns(self.ns_s, "tc", "-s", "qdisc", "show", "dev", self.dev_s, "parent", "1:10")
        m = re.search(r"\bbacklog \d+b (\d+)p", out)
        if m is None:
            raise RuntimeError(f"no backlog in the bottleneck's qdisc stats: {out!r}")
        return int(m.group(1))

    def backlog_sender(self, sndbuf_bytes: int = 4 << 20) -> None:
        """Give the sender's sockets a send buffer that takes the link
        `sndbuf_bytes` to drain (4 MB: 160 ms at 200 Mbit/s), so a sender
        descheduled on a busy machine still has data queued: without it a
        connection's queue runs dry, its last segment goes out short, and
        under rotation that reads as the end of its data (docs/algorithms.md
        §3.6)."""
        wmem = f"net.ipv4.tcp_wmem=4096 {sndbuf_bytes} {sndbuf_bytes}"
        self.ns(self.ns_s, "sysctl", "-qw", wmem)

    def add_marker(self, erase_at_receiver: bool = True) -> None:
        """CE-mark 1/32 of the sender's ECT packets; optionally clear CE after the agent."""
        self.ns(self.ns_s, "tc", "qdisc", "add", "dev", self.dev_s, "clsact")
        self.ns(
            self.ns_s,
            "tc",
            "filter",
            "add",
            "dev",
            self.dev_s,
            "egress",
            "bpf",
            "da",
            "obj",
            str(self.bpf / "ce_mark.bpf.o"),
            "sec",
            "tc",
        )
        if erase_at_receiver:
            self.ns(self.ns_r, "tc", "qdisc", "add", "dev", self.dev_r, "clsact")
            self.ns(
                self.ns_r,
                "tc",
                "filter",
                "add",
                "dev",
                self.dev_r,
                "ingress",
                "bpf",
                "da",
                "obj",
                str(self.bpf / "ce_clear.bpf.o"),
                "sec",
                "tc",
            )

    def add_vq_marker(self, k_bytes: int, rate_mbit: int | None = None) -> None:
        """Mark CE at the bottleneck when its (virtual) backlog is >= k_bytes."""
        rate = rate_mbit or self.rate_mbit
        out = self.ns(
            self.ns_s,
            sys.executable,
            str(Path(__file__).resolve()),
            "attach-marker",
            self.dev_s,
            str(rate),
            str(k_bytes),
        )
        self.vq_map_id = int(out.split()[-1])

    def marker_counts(self) -> tuple[int, int]:
        """(packets marked, packets seen) by the virtual-queue marker."""
        lb = lib()
        fd = lb.c.bpf_map_get_fd_by_id(self.vq_map_id)
        if fd < 0:
            return (0, 0)
        try:
            v = (ctypes.c_uint64 * 4)()
            lb.lookup(fd, ctypes.c_uint32(0), v)
            return int(v[2]), int(v[3])
        finally:
            os.close(fd)

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(timeout=5)
        self.procs.clear()
        for ns in (self.ns_s, self.ns_r):
            if Path(f"/run/netns/{ns}").exists():
                self.sh("ip", "netns", "del", ns, check=False)

    def __enter__(self) -> VethLab:
        try:
            return self.up()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- processes ------------------------------------------------------------------
    def spawn(self, ns: str, *cmd: str) -> subprocess.Popen:
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, *cmd],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.procs.append(p)
        return p

    def start_agent(self, policy: str, *extra: str, timeout: float = 15.0) -> subprocess.Popen:
        # the ready file in a directory of our own (a fixed /tmp name could be
        # another user's symlink)
        tmp = Path(tempfile.mkdtemp(prefix="p4ia-agent-"))
        ready = tmp / "ready"
        exe = [sys.executable, "-m", "p4incast.agent"]
        try:
            p = self.spawn(
                self.ns_r,
                *exe,
                "run",
                "--iface",
                self.dev_r,
                "--policy",
                policy,
                "--ready-file",
                str(ready),
                *extra,
            )
            t0 = time.monotonic()
            while not ready.exists():
                if p.poll() is not None:
                    raise RuntimeError(
                        f"agent exited {p.returncode}: {p.stderr.read() if p.stderr else ''}"
                    )
                if time.monotonic() - t0 > timeout:
                    raise RuntimeError("agent did not become ready")
                time.sleep(0.05)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return p

    @staticmethod
    def stop(p: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        p.send_signal(sig)
        return p.wait(timeout=timeout)

    def start_server(self, port: int = 5201, in_sender: bool = False) -> subprocess.Popen:
        """iperf3 server in the receiver's namespace, or in the sender's (for -R runs)."""
        p = self.spawn(self.ns_s if in_sender else self.ns_r, "iperf3", "-s", "-p", str(port))
        time.sleep(0.3)
        return p

    def start_reverse_client(
        self, seconds: float, port: int = 5202, parallel: int = 1
    ) -> subprocess.Popen:
        """The receiver connects (active open, as the incast client does); data flows
        from the sender's namespace to the receiver's (iperf3 -R)."""
        return self.spawn(
            self.ns_r,
            "iperf3",
            "-c",
            self.ip_s,
            "-p",
            str(port),
            "-t",
            str(seconds),
            "-R",
            "-C",
            "cubic",
            "-P",
            str(parallel),
            "-J",
        )

    def sender_segment_sizes(self, port: int) -> list[float]:
        """Mean data segment size (bytes_sent / data_segs_out) of every connection
        the sender's side of `port` sent data on, from `ss -ti`."""
        out = self.ns(self.ns_s, "ss", "-tinH", "sport", f"= :{port}", check=False)
        sizes = []
        for block in re.split(r"\n(?=\S)", out.strip()):
            segs = re.search(r"\bdata_segs_out:(\d+)", block)
            sent = re.search(r"\bbytes_sent:(\d+)", block)
            if segs and sent and int(segs.group(1)) >= 50:
                sizes.append(int(sent.group(1)) / int(segs.group(1)))
        return sizes

    def start_client(
        self, seconds: float, port: int = 5201, cc: str = "cubic", parallel: int = 1
    ) -> subprocess.Popen:
        return self.spawn(
            self.ns_s,
            "iperf3",
            "-c",
            self.ip_r,
            "-p",
            str(port),
            "-t",
            str(seconds),
            "-C",
            cc,
            "-P",
            str(parallel),
            "-J",
        )

    @staticmethod
    def goodput_bps(client: subprocess.Popen, timeout: float = 60.0) -> float:
        out, _ = client.communicate(timeout=timeout)
        j = json.loads(out)
        return float(j["end"]["sum_received"]["bits_per_second"])

    def ss_sample(self, port: int = 5201, sender_port: bool = False) -> SsSample | None:
        """The sender's busiest connection to the receiver, from `ss -ti`
        (sender_port: the sender is the server side, port is its local port)."""
        sel = ("sport", f"= :{port}") if sender_port else ("dport", f"= :{port}")
        out = self.ns(self.ns_s, "ss", "-tinH", "dst", self.ip_r, *sel, check=False)
        best: SsSample | None = None
        for block in re.split(r"\n(?=\S)", out.strip()):
            vals = {
                k: int(m.group(1)) if (m := rx.search(block)) else 0 for k, rx in _SS_FIELDS.items()
            }
            s = SsSample(time.monotonic(), **vals, text=block)
            if best is None or s.bytes_acked > best.bytes_acked:
                best = s
        return best

    def sender_rtts_ms(self, port: int = 5201) -> list[float]:
        """Smoothed RTT (ms) of every sender connection that carries data."""
        out = self.ns(
            self.ns_s, "ss", "-tinH", "dst", self.ip_r, "dport", f"= :{port}", check=False
        )
        rtts = []
        for block in re.split(r"\n(?=\S)", out.strip()):
            m = re.search(r"\brtt:([\d.]+)/", block)
            if m and "bytes_acked" in block and _SS_FIELDS["unacked"].search(block):
                rtts.append(float(m.group(1)))
        return rtts

    def attached_progs(self) -> str:
        """What `bpftool net` would show, via tc: our tcx/clsact programs on the receiver."""
        out = self.ns(self.ns_r, "tc", "filter", "show", "dev", self.dev_r, "ingress", check=False)
        out += self.ns(self.ns_r, "tc", "filter", "show", "dev", self.dev_r, "egress", check=False)
        return out


def _attach_marker(dev: str, rate_mbit: int, k_bytes: int) -> int:
    """In the current netns: ce_mark.bpf.o on dev's clsact egress (netlink filter, outlives
    this process; deleting the namespace removes it), configured for a virtual queue."""
    lb = lib()
    obj = lb.open_object(default_bpf_dir() / "ce_mark.bpf.o")
    lb.load_object(obj, "ce_mark.bpf.o")
    cfg = (ctypes.c_uint64 * 2)(rate_mbit * 1_000_000 // 8, k_bytes)
    lb.update(lb.c.bpf_map__fd(lb.map(obj, "ce_cfg")), ctypes.c_uint32(0), cfg)
    ifindex = socket.if_nametoindex(dev)
    h = lb.tc_hook(ifindex, egress=True)
    h.attach_point = 1 | 2
    rc = lb.c.bpf_tc_hook_create(ctypes.byref(h))
    if rc not in (0, -17):
        raise BpfError("bpf_tc_hook_create", rc)
    o = TcOpts()
    o.sz = ctypes.sizeof(TcOpts)
    o.prog_fd = lb.c.bpf_program__fd(lb.program(obj, "ce_mark"))
    hk = lb.tc_hook(ifindex, egress=True)
    rc = lb.c.bpf_tc_attach(ctypes.byref(hk), ctypes.byref(o))
    if rc:
        raise BpfError("bpf_tc_attach", rc)
    return _map_id(lb.c.bpf_map__fd(lb.map(obj, "ce_vq")))


if __name__ == "__main__":  # helper run inside the sender's namespace
    if len(sys.argv) == 5 and sys.argv[1] == "attach-marker":
        print(_attach_marker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    else:
        sys.exit(f"usage: {sys.argv[0]} attach-marker DEV RATE_MBIT K_BYTES")
