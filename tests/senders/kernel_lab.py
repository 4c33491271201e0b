"""The Linux engine of the sender conformance suite: one real TCP flow per scenario.

    ns p4s-snd ── veth ── ns p4s-rtr ── veth ── ns p4s-rcv
      sender            router: tc seg_script on     receiver (same CC: its
      (CC under test)   the egress to the receiver   echo of CE is the CC's)

- The senders are this build's agent/bpf/p4i_dctcp.bpf.c and
  p4i_newdctcp.bpf.c, registered by the lab under names of its own, p4t_dctcp
  and p4t_newdctcp (tests/senders/bpf/p4t_*.bpf.c), for as long as it runs:
  TCP_CONGESTION names are global to the host, and "p4i_dctcp" is whichever
  registration holds it when the socket is made (the agent, the testbed, the
  agent tests and other checkouts load and unload theirs at any time).
- seg_script (tests/senders/bpf) CE-marks or drops the scenario's segments,
  by number, on their first transmission.
- cc_probe (tests/senders/bpf) records, from the kernel's own `tcp_probe` and
  `tcp_cong_state_set` BTF tracepoints, the sender's state before every ACK
  and every congestion-state change: the module under test is not asked.
- No bottleneck: a queue that holds the sender's packets would let TCP Small
  Queues hold back its sending (they stay charged to its socket until the
  receiver takes them), so the flow runs at the speed of the CPU, on the
  other CPU than the applications (RPS at the router's ingress), in order.
- The sender is cwnd-limited and every ACK reaches it alone: TSO/GSO/GRO
  off and `gso_max_segs 1` (one segment per skb, so the script counts
  segments and TCP never holds back a send to build a larger one); the whole flow is
  written behind a closed gate (a token bucket on the sender's egress) which
  then opens, so the application is never the limit and never holds its
  socket while ACKs arrive (KernelLab._gate; the run fails if an ACK was merged
  in the socket's backlog); the receiver reads nothing until the end and its
  window is far above the flow (`initrwnd`, 32 MB of rmem); the sender closes
  only once every byte is acknowledged. Tail-loss probes and F-RTO are off and
  route metrics are not saved, so a timeout is a timeout and every flow starts
  afresh. The receiver ACKs every segment (`quickack`) unless the scenario
  wants delayed ACKs.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sender_table import INFINITE, LOSS, Ack, Scenario, StateChange, Trace

from p4incast.agent.datapath import default_bpf_dir
from p4incast.agent.libbpf import BpfError, lib
from p4incast.agent.runner import status as agent_status

NS_S, NS_R, NS_X = "p4s-snd", "p4s-rcv", "p4s-rtr"
ADDR_S, ADDR_XS, ADDR_XR, ADDR_R = "10.203.1.1", "10.203.1.2", "10.203.2.1", "10.203.2.2"
PORT = 5471
APP_CPU, PATH_CPU = 0, 1
KERNEL_CC = {"reno": "reno", "dctcp": "p4t_dctcp", "newdctcp": "p4t_newdctcp"}
LAB_CCS = ("p4t_dctcp", "p4t_newdctcp")  # the lab's own registrations (tests/senders/bpf)
SCRIPT_MARK, SCRIPT_DROP = 1, 2
MAX_SEGS = 4096


class ProbeRec(ctypes.Structure):
    _fields_ = [
        ("t_ns", ctypes.c_uint64),
        ("kind", ctypes.c_uint32),
        ("state", ctypes.c_uint32),
        ("ack_seq", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("snd_una", ctypes.c_uint32),
        ("snd_nxt", ctypes.c_uint32),
        ("cwnd", ctypes.c_uint32),
        ("ssthresh", ctypes.c_uint32),
        ("mss", ctypes.c_uint32),
        ("snd_wnd", ctypes.c_uint32),
        ("prior_cwnd", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
    ]


def skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, tc, BPF tracepoints, struct_ops)"
    for t, pkg in {"ip": "iproute2", "tc": "iproute2", "ethtool": "ethtool"}.items():
        if not shutil.which(t):
            return f"{t} not found (apt-get install {pkg})"
    for obj in ("seg_script.bpf.o", "cc_probe.bpf.o", *(f"{n}.bpf.o" for n in LAB_CCS)):
        if not (default_bpf_dir() / obj).exists():
            return f"{default_bpf_dir() / obj} not built (scripts/build-agent.sh: clang, bpftool)"
    return None


def sh(*cmd: str, check: bool = True) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip()}")
    return p.stdout


def ns(name: str, *cmd: str, check: bool = True) -> str:
    return sh("ip", "netns", "exec", name, *cmd, check=check)


RECEIVER = r"""
import os, socket, sys
os.sched_setaffinity(0, {int(sys.argv[-1])})
cc, port = sys.argv[1], int(sys.argv[2])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
ls.bind(("0.0.0.0", port))
ls.listen(1)
print("ready", flush=True)
c, _ = ls.accept()
sys.stdin.readline()  # read only once the sender is done: segments never wait in a backlog
n = 0
while True:
    b = c.recv(1 << 20)
    if not b:
        break
    n += len(b)
print(n, flush=True)
"""

SENDER = r"""
import json, os, socket, struct, sys, time
os.sched_setaffinity(0, {int(sys.argv[-1])})
cc, host, port, segs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
s.connect((host, port))
mss = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
s.sendall(b"x" * (segs * mss))  # behind the closed gate: nothing leaves yet
print("written", flush=True)
sys.stdin.readline()  # the gate is open: one datagram behind the flow makes the gate dequeue
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"go", (host, 9))
end = time.monotonic() + 20
while True:
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    unacked, ssthresh, cwnd = (struct.unpack_from("I", info, o)[0] for o in (24, 76, 80))
    if unacked == 0 or time.monotonic() > end:
        break
    time.sleep(0.005)
print(json.dumps({"mss": mss, "unacked": unacked, "cwnd": cwnd, "ssthresh": ssthresh}), flush=True)
sys.stdin.readline()  # the probe has stopped: what the close brings back is not the flow's
s.close()
"""


def _spawn(name: str, script: str, *args: str) -> subprocess.Popen[str]:
    """`script` in namespace `name`, on APP_CPU, its standard streams ours."""
    return subprocess.Popen(
        ["ip", "netns", "exec", name, sys.executable, "-c", script, *args, str(APP_CPU)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


class KernelLab:
    """Three namespaces, the path's script and the probe; `run` one flow at a time."""

    def __init__(self) -> None:
        self.lb = lib()
        self.probe_obj: int | None = None
        self.links: list[int] = []
        self.cc_links: list[int] = []

    # -- set-up ------------------------------------------------------------------
    def __enter__(self) -> KernelLab:
        try:
            self._up()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _up(self) -> None:
        self._down()
        for n in (NS_S, NS_X, NS_R):
            sh("ip", "netns", "add", n)
            ns(n, "ip", "link", "set", "lo", "up")
        sh(
            "ip",
            "link",
            "add",
            "p4s-s",
            "netns",
            NS_S,
            "type",
            "veth",
            "peer",
            "p4s-xs",
            "netns",
            NS_X,
        )
        sh(
            "ip",
            "link",
            "add",
            "p4s-xr",
            "netns",
            NS_X,
            "type",
            "veth",
            "peer",
            "p4s-r",
            "netns",
            NS_R,
        )
        for n, dev, addr in (
            (NS_S, "p4s-s", ADDR_S),
            (NS_X, "p4s-xs", ADDR_XS),
            (NS_X, "p4s-xr", ADDR_XR),
            (NS_R, "p4s-r", ADDR_R),
        ):
            ns(n, "ip", "addr", "add", f"{addr}/24", "dev", dev)
            ns(n, "ip", "link", "set", dev, "up")
            ns(n, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", check=False)
            # TCP builds skbs of many segments whatever the device offers (software
            # GSO), and then may wait to send a larger one (tcp_tso_should_defer):
            # one segment per skb, so every ACK's room is used at once
            ns(n, "ip", "link", "set", "dev", dev, "gso_max_segs", "1")
        ns(NS_X, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        # The path runs on the other CPU than the sender (RPS at the router's
        # ingress): the sender's one write is over before most ACKs come back.
        ns(NS_X, "sh", "-c", f"echo {1 << PATH_CPU:x} > /sys/class/net/p4s-xs/queues/rx-0/rps_cpus")
        ns(NS_S, "ip", "route", "add", "10.203.2.0/24", "via", ADDR_XS)
        # Each flow names its congestion control (TCP_CONGESTION); a socket is
        # created under the namespace's default, inherited from the host's
        # (often bbr or cubic), and the lab fixes it to the control, reno, so
        # that the host's choice never enters a trace.
        for n, kv in (
            (
                NS_S,
                (
                    "tcp_ecn=1",
                    "tcp_congestion_control=reno",
                    "tcp_early_retrans=0",
                    "tcp_frto=0",
                    "tcp_no_metrics_save=1",
                    "tcp_wmem=4096 67108864 67108864",
                    "tcp_pacing_ss_ratio=1000",
                    "tcp_pacing_ca_ratio=1000",
                    "tcp_limit_output_bytes=67108864",
                ),
            ),
            (
                NS_R,
                (
                    "tcp_ecn=1",
                    "tcp_congestion_control=reno",
                    "tcp_no_metrics_save=1",
                    "tcp_rmem=4096 33554432 67108864",
                ),
            ),
        ):
            for x in kv:
                ns(n, "sysctl", "-qw", f"net.ipv4.{x}")
        self._receiver_route(delayed_ack=False)
        ns(NS_X, "tc", "qdisc", "add", "dev", "p4s-xr", "clsact")
        ns(
            NS_X,
            "tc",
            "filter",
            "add",
            "dev",
            "p4s-xr",
            "egress",
            "bpf",
            "da",
            "obj",
            str(default_bpf_dir() / "seg_script.bpf.o"),
            "sec",
            "tc",
        )
        self._register_ccs()
        self._probe()

    def _register_ccs(self) -> None:
        """Register this build's senders under the lab's names (LAB_CCS). Only
        the lab uses those names, under the shared lock: one an earlier lab
        left (killed before its close) is its own to remove."""
        c = self.lb.c
        self._unregister_ccs()
        for name in LAB_CCS:
            path = default_bpf_dir() / f"{name}.bpf.o"
            obj = self.lb.open_object(path)
            self.lb.load_object(obj, str(path))
            link = c.bpf_map__attach_struct_ops(self.lb.map(obj, name))
            err = c.libbpf_get_error(link) if link else -ctypes.get_errno()
            if not link or err:
                raise BpfError(f"register {name}", int(err) or 22)
            self.cc_links.append(link)  # destroying it unregisters the CC (close)

    def _unregister_ccs(self) -> None:
        for link in self.cc_links:
            self.lb.c.bpf_link__destroy(link)
        self.cc_links.clear()
        for name in LAB_CCS:
            for fd, _ in self.lb.maps_named(name):
                try:
                    self.lb.delete(fd, ctypes.c_uint32(0))
                finally:
                    os.close(fd)

    def _receiver_route(self, delayed_ack: bool) -> None:
        quick = [] if delayed_ack else ["quickack", "1"]
        ns(
            NS_R,
            "ip",
            "route",
            "replace",
            "10.203.1.0/24",
            "via",
            ADDR_XR,
            "initrwnd",
            "2000",
            *quick,
        )

    def _gate(self, closed: bool) -> None:
        """The sender's egress: closed, a token bucket that lets the handshake
        through and then nothing (8 bit/s); open, one that never holds a packet.
        The flow is written whole behind the closed gate, so the application is
        never the limit and the sender never holds its socket while ACKs arrive
        (an ACK that finds the socket busy waits in its backlog and is merged
        with the next one)."""
        if closed:
            ns(
                NS_S,
                "tc",
                "qdisc",
                "replace",
                "dev",
                "p4s-s",
                "root",
                "tbf",
                "rate",
                "8bit",
                "burst",
                "1514",
                "limit",
                "67108864",
            )
            return
        ns(
            NS_S,
            "tc",
            "qdisc",
            "change",
            "dev",
            "p4s-s",
            "root",
            "tbf",
            "rate",
            "100gbit",
            "burst",
            "67108864",
            "limit",
            "67108864",
        )
        # tbf refills its bucket on a change but dequeues only at its next enqueue:
        # the sender sends a datagram once told (SENDER)

    def _probe(self) -> None:
        c = self.lb.c
        c.bpf_program__attach.restype = ctypes.c_void_p
        c.bpf_program__attach.argtypes = [ctypes.c_void_p]
        path = default_bpf_dir() / "cc_probe.bpf.o"
        self.probe_obj = self.lb.open_object(path)
        self.lb.load_object(self.probe_obj, str(path))
        for prog in ("p4p_ack", "p4p_state"):
            link = c.bpf_program__attach(self.lb.program(self.probe_obj, prog))
            if not link or c.libbpf_get_error(link):
                raise BpfError(f"attach {prog}", 22)
            self.links.append(link)
        self.cfg_fd = c.bpf_map__fd(self.lb.map(self.probe_obj, "p4p_cfg"))
        self.log_fd = c.bpf_map__fd(self.lb.map(self.probe_obj, "p4p_log"))

    def _down(self) -> None:
        for n in (NS_S, NS_X, NS_R):
            if Path(f"/run/netns/{n}").exists():
                sh("ip", "netns", "del", n, check=False)

    def close(self) -> None:
        for link in self.links:
            self.lb.c.bpf_link__destroy(link)
        self.links.clear()
        if self.probe_obj:
            self.lb.c.bpf_object__close.argtypes = [ctypes.c_void_p]
            self.lb.c.bpf_object__close(self.probe_obj)
            self.probe_obj = None
        self._down()
        self._unregister_ccs()

    # -- the receiver's host agent --------------------------------------------------
    @contextmanager
    def receiver_agent(self, policy: str, *flags: str) -> Iterator[dict]:
        """p4incast-agent on the receiver's interface with `policy` and extra
        `flags`, for the flows run meanwhile; yields a dict whose "stats" the
        agent's global counters fill once the block ends."""
        out: dict = {}
        with tempfile.TemporaryDirectory() as tmp:
            ready, log = Path(tmp) / "ready", Path(tmp) / "log"
            cmd = [sys.executable, "-m", "p4incast.agent", "run", "--iface", "p4s-r"]
            cmd += ["--policy", policy, "--ready-file", str(ready), "--rtt-limit-us", "1000000"]
            with log.open("w") as lf:
                agent = subprocess.Popen(
                    ["ip", "netns", "exec", NS_R, *cmd, *flags], stdout=lf, stderr=lf
                )
            try:
                end = time.monotonic() + 30
                while not ready.exists() and agent.poll() is None and time.monotonic() < end:
                    time.sleep(0.05)
                if not ready.exists():
                    raise RuntimeError(f"agent did not start: {log.read_text()[-500:]}")
                yield out
                mine = [a for a in agent_status() if a["pid"] == agent.pid]
                if not mine:
                    raise RuntimeError(f"agent {agent.pid} not running: {log.read_text()[-500:]}")
                out["stats"] = mine[0]["totals"]
            finally:
                agent.terminate()
                agent.wait(timeout=10)

    # -- one flow ----------------------------------------------------------------
    def _script_fd(self, name: str) -> int:
        found = self.lb.maps_named(name)
        if not found:
            raise RuntimeError(f"map {name} not found: seg_script not attached")
        found.sort(key=lambda f: f[1].id)
        for fd, _ in found[:-1]:
            os.close(fd)
        return found[-1][0]

    def _set_script(self, sc: Scenario, mss: int) -> None:
        fds = {n: self._script_fd(n) for n in ("p4s_cfg", "p4s_script", "p4s_seen")}
        try:
            u32 = ctypes.c_uint32
            for i in range(MAX_SEGS):
                act = (SCRIPT_MARK if i in sc.marks else 0) | (SCRIPT_DROP if i in sc.drops else 0)
                self.lb.update(fds["p4s_script"], u32(i), u32(act))
                self.lb.update(fds["p4s_seen"], u32(i), u32(0))
            self.lb.update(fds["p4s_cfg"], u32(0), (u32 * 4)(PORT, mss, 0, 0))
        finally:
            for fd in fds.values():
                os.close(fd)

    def _isn(self) -> int:
        fd = self._script_fd("p4s_cfg")
        try:
            v = (ctypes.c_uint32 * 4)()
            self.lb.lookup(fd, ctypes.c_uint32(0), v)
            if not v[3]:
                raise RuntimeError("the router never saw the flow's SYN")
            return int(v[2])
        finally:
            os.close(fd)

    def run(self, cc: str, sc: Scenario) -> Trace:
        kcc = KERNEL_CC[cc]
        self._receiver_route(sc.delayed_ack)
        mss = 1448  # MTU 1500 with timestamps; checked against the sender's TCP_MAXSEG
        self._set_script(sc, mss)
        coalesced0 = self._backlog_coalesced()
        u32 = ctypes.c_uint32
        self.lb.update(self.cfg_fd, u32(0), (u32 * 2)(PORT, 0))
        rx = _spawn(NS_R, RECEIVER, kcc, str(PORT))
        try:
            assert rx.stdout is not None
            if rx.stdout.readline().strip() != "ready":
                raise RuntimeError(f"receiver: {rx.stderr.read() if rx.stderr else ''}")
            self._gate(closed=True)
            tx = _spawn(NS_S, SENDER, kcc, ADDR_R, str(PORT), str(sc.segments))
            try:
                assert tx.stdout is not None
                if tx.stdout.readline().strip() != "written":
                    raise RuntimeError(f"sender: {tx.stderr.read() if tx.stderr else ''}")
                self._gate(closed=False)
                assert tx.stdin is not None
                tx.stdin.write("go\n")
                tx.stdin.flush()
                out = tx.stdout.readline()
                recs = self._records()
                _, err = tx.communicate("close\n", timeout=30)
                if tx.returncode or not out:
                    raise RuntimeError(f"sender: {err}")
            finally:
                if tx.poll() is None:
                    tx.kill()
                    tx.wait()
            got, _ = rx.communicate("go\n", timeout=30)
        finally:
            if rx.poll() is None:
                rx.kill()
                rx.wait()
        coalesced = self._backlog_coalesced() - coalesced0
        if coalesced:
            raise RuntimeError(
                f"{coalesced} ACKs merged in the sender's backlog: the trace misses ACKs"
            )
        fin = json.loads(out)
        if fin["mss"] != mss or fin["unacked"]:
            raise RuntimeError(f"flow did not complete as scripted: {fin}")
        if int(got.split()[-1]) != sc.segments * mss:
            raise RuntimeError(f"receiver got {got.strip()} bytes, not {sc.segments * mss}")
        self._check_script_applied(sc)
        return self._trace(recs, self._isn(), mss, fin)

    def _check_script_applied(self, sc: Scenario) -> None:
        """Refuse a run whose script did not meet the segments it names: every
        scripted segment passed the router on its own (no packet of more than one
        MSS, p4s_seen[0]), and each was seen at least once."""
        fd = self._script_fd("p4s_seen")
        try:
            v = ctypes.c_uint32()
            seen = {}
            for i in (0, *sorted(set(sc.marks) | set(sc.drops))):
                self.lb.lookup(fd, ctypes.c_uint32(i), v)
                seen[i] = int(v.value)
        finally:
            os.close(fd)
        merged = seen.pop(0)
        unseen = [i for i, n in seen.items() if n == 0]
        if merged or unseen:
            raise RuntimeError(
                f"{sc.name}: the script missed its segments ({merged} packets of more than "
                f"one MSS passed the router; scripted segments never seen: {unseen}); "
                f"ISN {self._isn()}"
            )

    @staticmethod
    def _backlog_coalesced() -> int:
        """The sender namespace's TCPBacklogCoalesce: ACKs merged while the socket was busy."""
        lines = ns(NS_S, "cat", "/proc/net/netstat").splitlines()
        for names, values in zip(lines[::2], lines[1::2], strict=False):
            if names.startswith("TcpExt:"):
                row = dict(zip(names.split(), values.split(), strict=True))
                return int(row.get("TCPBacklogCoalesce", 0))
        return 0

    def _records(self) -> list[ProbeRec]:
        u32 = ctypes.c_uint32
        cfg = (u32 * 2)()
        self.lb.lookup(self.cfg_fd, u32(0), cfg)
        n = min(int(cfg[1]), 65536)
        recs = []
        for i in range(n):
            r = ProbeRec()
            self.lb.lookup(self.log_fd, u32(i), r)
            recs.append(r)
        self.lb.update(self.cfg_fd, u32(0), (u32 * 2)(0, 0))  # stop recording
        return recs

    def _trace(self, recs: list[ProbeRec], isn: int, mss: int, fin: dict) -> Trace:
        base = (isn + 1) & 0xFFFFFFFF

        def seg(x: int, up: bool = False) -> int:
            d = (x - base) & 0xFFFFFFFF
            return -(-d // mss) if up else d // mss

        def thresh(v: int) -> int:
            # Linux's "infinite" is 2^31 - 1; anything above it is kept as it is
            return INFINITE if INFINITE <= v <= 0x7FFFFFFF else v

        events: list[Ack | StateChange] = []
        t0 = recs[0].t_ns if recs else 0
        for r in recs:
            t = (r.t_ns - t0) / 1e3
            if r.kind == 0:
                if not r.flags & 0x10:  # not an ACK
                    continue
                events.append(
                    Ack(
                        seg(r.ack_seq, up=True),
                        bool(r.flags & 0x40),
                        seg(r.snd_una, True),
                        seg(r.snd_nxt, True),
                        r.cwnd,
                        thresh(r.ssthresh),
                        t,
                    )
                )
            else:
                events.append(
                    StateChange(
                        r.state,
                        # on a timeout Linux sets cwnd = 1 before the state: the
                        # cwnd the reduction began with is prior_cwnd
                        r.prior_cwnd if r.state == LOSS else r.cwnd,
                        thresh(r.ssthresh),
                        seg(r.snd_una, True),
                        seg(r.snd_nxt, True),
                        t,
                    )
                )
        return Trace(
            acks=[e for e in events if isinstance(e, Ack)],
            states=[e for e in events if isinstance(e, StateChange)],
            final_cwnd=fin["cwnd"],
            final_ssthresh=thresh(fin["ssthresh"]),
            events=events,
        )
