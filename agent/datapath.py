"""The loaded rxwin data path: config, flow table, counters, attachment.

Its structures and constants are agent/bpf/rxwin.h's, read from the header
(p4incast/policies/rxwin_h.py); the loader checks the map value sizes of the
object against them. Attachment (fail-open, see `RxWin.attach`):

- ``tcx`` (default, kernel >= 6.6): two TCX links created with libbpf's
  bpf_link_create(). The kernel detaches them when the last fd closes, so
  SIGKILL and crashes leave nothing behind.
- ``clsact``: libbpf's bpf_tc_hook_create/bpf_tc_attach (netlink filters,
  which outlive the process). `detach()` runs from the signal handlers and
  atexit; a SIGKILL leaves the filters: `p4incast-agent detach --iface IF`.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from p4incast.agent.libbpf import BpfError, Lib, Ring, TcOpts, lib
from p4incast.policies.config import POLICY_MODES, AgentConfig
from p4incast.policies.rxwin_h import RXWIN, HeaderError

__all__ = [
    "POLICIES",
    "STRUCTS",
    "AckqFlow",
    "AckqGlobal",
    "ST_NAMES",
    "Flow",
    "FlowKey",
    "RotFlow",
    "RotGlobal",
    "RxConfig",
    "RxWin",
    "default_bpf_dir",
]

# rx_config.policy of each agent policy; ictcp and rcc run as "user": the agent writes W
POLICIES = POLICY_MODES
# the rotation rescue's state changes, made by rx_rescue after ROT_OP_OFF zero bytes
ROT_OP_GRANT = RXWIN.ROT_OP_GRANT
ROT_OP_COUNT = RXWIN.ROT_OP_COUNT
ROT_OP_ADJUST = RXWIN.ROT_OP_ADJUST
ROT_OP_SCAN = RXWIN.ROT_OP_SCAN
ROT_OP_OFF = RXWIN.ROT_OP_OFF
# rcc's ACK-queue rescue ops (rx_rescue) and its flow states
ACKQ_OP_RELEASE = RXWIN.ACKQ_OP_RELEASE
ACKQ_OP_END = RXWIN.ACKQ_OP_END
ACKQ_NONE = RXWIN.ACKQ_NONE
ACKQ_HELD = RXWIN.ACKQ_HELD
# flow.flags
FL_PEER_SYN = RXWIN.FL_PEER_SYN
FL_LOCAL_SYN = RXWIN.FL_LOCAL_SYN
FL_MARKED = RXWIN.FL_MARKED
FL_COUNTED = RXWIN.FL_COUNTED
FL_SLOW = RXWIN.FL_SLOW
FL_HS = RXWIN.FL_HS


def _stat_names() -> tuple[str, ...]:
    """p4i_stats' entries by index: rxwin.h's ST_* but ST_MAX, lower-cased
    without the prefix (the status keys and metric names)."""
    st = {k: v for k, v in RXWIN.prefixed("ST_").items() if k != "ST_MAX"}
    if sorted(st.values()) != list(range(RXWIN.ST_MAX)):
        raise HeaderError(f"{RXWIN.path}: ST_* must number 0..ST_MAX-1, each once")
    by_index = sorted(st, key=st.__getitem__)
    return tuple(n.removeprefix("ST_").lower() for n in by_index)


ST_NAMES = _stat_names()


def default_bpf_dir() -> Path:
    """build/agent/ of this checkout, or $P4INCAST_AGENT_BPF_DIR."""
    env = os.environ.get("P4INCAST_AGENT_BPF_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1] / "build" / "agent"


# Each class below is laid out from its rxwin.h struct. __slots__ = (): writing a
# field the header does not have raises instead of adding a Python attribute.


class RxConfig(ctypes.Structure):
    __slots__ = ()
    _fields_ = RXWIN.fields("rx_config")


class FlowKey(ctypes.Structure):
    __slots__ = ()
    _fields_ = RXWIN.fields("flow_key")

    @classmethod
    def make(cls, raddr: str, rport: int, laddr: str, lport: int) -> FlowKey:
        k = cls()
        k.raddr_be = struct.unpack("=I", socket.inet_aton(raddr))[0]
        k.laddr_be = struct.unpack("=I", socket.inet_aton(laddr))[0]
        k.rport_be = socket.htons(rport)
        k.lport_be = socket.htons(lport)
        return k

    def label(self) -> str:
        r, rp, l_, lp = self.as_tuple()
        return f"{r}:{rp}>{l_}:{lp}"

    def as_tuple(self) -> tuple[str, int, str, int]:
        """(remote, rport, local, lport): the Python reference's flow key."""
        r = socket.inet_ntoa(struct.pack("=I", self.raddr_be))
        l_ = socket.inet_ntoa(struct.pack("=I", self.laddr_be))
        return (r, socket.ntohs(self.rport_be), l_, socket.ntohs(self.lport_be))


class Flow(ctypes.Structure):
    __slots__ = ()
    _fields_ = RXWIN.fields("flow")

    def as_dict(self) -> dict[str, int | bool]:
        d: dict[str, int | bool] = {
            n: getattr(self, n)
            for n, *_ in self._fields_
            if n not in ("ts_val", "ts_echoed", "re_valid")
        }
        d["handshake"] = (self.flags & FL_HS) == FL_HS
        d["slow_start"] = not self.flags & FL_MARKED
        d["rtt_excluded"] = bool(self.flags & FL_SLOW)
        return d


class RotGlobal(ctypes.Structure):
    """struct rot_global: H (`slots`, 0 until the first window of data ends),
    flows holding a window, flows waiting, the receiver's window of data."""

    __slots__ = ()
    _fields_ = RXWIN.fields("rot_global")


class RotOp(ctypes.Structure):
    """struct rot_op: one of the rescue's state changes (rx_rescue)."""

    __slots__ = ()
    _fields_ = RXWIN.fields("rot_op", flow_key=FlowKey)


class RotFlow(ctypes.Structure):
    """struct rot_flow: a flow's rotation state and what its window update needs."""

    __slots__ = ()
    _fields_ = RXWIN.fields("rot_flow")


class AckqFlow(ctypes.Structure):
    """struct ackq_flow: a flow in rcc's ACK queue (rel: right edge last
    released; held: ack << 32 | right edge of its held ACK)."""

    __slots__ = ()
    _fields_ = RXWIN.fields("ackq_flow")


class AckqGlobal(ctypes.Structure):
    """struct ackq_global: total in flight (bytes), its largest value after a
    pass or release, flows held, the try-lock, releases."""

    __slots__ = ()
    _fields_ = RXWIN.fields("ackq_global")


class AckqOp(ctypes.Structure):
    """struct ackq_op: one of the ACK-queue rescue's ops (rx_rescue)."""

    __slots__ = ()
    _fields_ = RXWIN.fields("ackq_op", flow_key=FlowKey)


# rxwin.h struct name -> its class here
STRUCTS: dict[str, type[ctypes.Structure]] = {
    "rx_config": RxConfig,
    "flow_key": FlowKey,
    "flow": Flow,
    "rot_global": RotGlobal,
    "rot_op": RotOp,
    "rot_flow": RotFlow,
    "ackq_flow": AckqFlow,
    "ackq_global": AckqGlobal,
    "ackq_op": AckqOp,
}


@dataclass(frozen=True)
class Attachment:
    kind: str  # "tcx" | "clsact"
    ifindex: int
    link_fds: tuple[int, ...] = ()
    hook_created: bool = False


class NewFlows:
    """The data path's notices of new flows (p4i_newflows), as FlowKeys."""

    def __init__(self, ring: Ring) -> None:
        self.ring = ring

    def take(self) -> list[FlowKey]:
        return [FlowKey.from_buffer_copy(b[: ctypes.sizeof(FlowKey)]) for b in self.ring.take()]

    def close(self) -> None:
        self.ring.close()


class RxWin:
    """One loaded rxwin.bpf.o: its maps, its two programs, their attachment."""

    OBJECT = "rxwin.bpf.o"

    def __init__(self, bpf_dir: Path | None = None, max_flows: int = 16384) -> None:
        self.lib: Lib = lib()
        path = (bpf_dir or default_bpf_dir()) / self.OBJECT
        if not path.exists():
            raise FileNotFoundError(f"{path} not built: run scripts/build-agent.sh (make build)")
        self.obj = self.lib.open_object(path)
        c = self.lib.c
        for name in (
            "p4i_flows",
            "p4i_wset",
            "p4i_rot_flows",
            "p4i_rotq",
            "p4i_ackq_flows",
        ):
            c.bpf_map__set_max_entries(self.lib.map(self.obj, name), max_flows)
        c.bpf_map__set_max_entries(
            self.lib.map(self.obj, "p4i_ackq"), max_flows * RXWIN.ACKQ_ENTRIES_PER_FLOW
        )
        self.lib.load_object(self.obj, str(path))
        self.max_flows = max_flows
        m = {n: self.lib.map(self.obj, n) for n in ("p4i_config", "p4i_flows", "p4i_wset")}
        for n in ("p4i_rot", "p4i_rot_flows", "p4i_rotq", "p4i_ackq_flows", "p4i_ackq_g"):
            m[n] = self.lib.map(self.obj, n)
        for n, t in (
            ("p4i_config", RxConfig),
            ("p4i_flows", Flow),
            ("p4i_rot", RotGlobal),
            ("p4i_rot_flows", RotFlow),
            ("p4i_ackq_flows", AckqFlow),
            ("p4i_ackq_g", AckqGlobal),
        ):
            if c.bpf_map__value_size(m[n]) != ctypes.sizeof(t):
                raise BpfError(f"{n}: value size differs from agent/bpf/rxwin.h (make build)", 22)
        self.config_fd = c.bpf_map__fd(m["p4i_config"])
        self.flows_fd = c.bpf_map__fd(m["p4i_flows"])
        self.wset_fd = c.bpf_map__fd(m["p4i_wset"])
        self.stats_fd = c.bpf_map__fd(self.lib.map(self.obj, "p4i_stats"))
        self.budget_fd = c.bpf_map__fd(self.lib.map(self.obj, "p4i_budget"))
        self.rot_fd = c.bpf_map__fd(m["p4i_rot"])
        self.rot_flows_fd = c.bpf_map__fd(m["p4i_rot_flows"])
        self.rotq_fd = c.bpf_map__fd(m["p4i_rotq"])
        self.ackq_flows_fd = c.bpf_map__fd(m["p4i_ackq_flows"])
        self.ackq_g_fd = c.bpf_map__fd(m["p4i_ackq_g"])
        self.ingress_fd = c.bpf_program__fd(self.lib.program(self.obj, "rx_ingress"))
        self.egress_fd = c.bpf_program__fd(self.lib.program(self.obj, "rx_egress"))
        self.rescue_fd = c.bpf_program__fd(self.lib.program(self.obj, "rx_rescue"))
        self.newflows_fd = c.bpf_map__fd(self.lib.map(self.obj, "p4i_newflows"))
        self.attachment: Attachment | None = None
        self.cfg = RxConfig()

    # -- configuration -----------------------------------------------------------
    def configure(
        self,
        policy: str,
        *,
        init_segs: int = AgentConfig.init_segs,
        max_w: int = AgentConfig.max_w,
        rtt_limit_us: int = AgentConfig.rtt_limit_us,
        idle_s: float = AgentConfig.idle_reset_s,
        ifindex: int = 0,
        min_segs: int = AgentConfig.min_segs,
        budget_bytes: int = 0,
        rotate: int = 0,
        clear_ece: int = 0,
        ackq_pkts: int = 0,
        share_pkts: int = 0,
        ack_cost: int = 0,
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}; one of {', '.join(POLICIES)}")
        c = RxConfig()
        c.policy = POLICIES[policy]
        c.init_segs = init_segs
        c.max_w = max_w
        c.rtt_limit_us = rtt_limit_us
        c.ifindex = ifindex
        c.min_segs = min_segs
        c.idle_ns = int(idle_s * 1e9)
        c.budget_bytes = budget_bytes
        c.rotate = rotate
        c.clear_ece = clear_ece
        c.ackq_pkts = ackq_pkts
        c.share_pkts = share_pkts
        c.ack_cost = ack_cost
        self.lib.update(self.config_fd, ctypes.c_uint32(0), c)
        self.cfg = c

    # -- flows ------------------------------------------------------------------------
    def flows(self) -> dict[str, Flow]:
        return read_flows(self.lib, self.flows_fd)

    def dump(self) -> list[tuple[FlowKey, Flow]]:
        """All (key, flow) pairs, one batch syscall per 256 entries."""
        return self.lib.dump(self.flows_fd, FlowKey, Flow)

    def flow_keys(self) -> list[FlowKey]:
        return self.lib.keys(self.flows_fd, FlowKey)

    def flow(self, key: FlowKey) -> Flow | None:
        f = Flow()
        return f if self.lib.lookup(self.flows_fd, key, f) else None

    def delete_flow(self, key: FlowKey) -> None:
        """Userspace's idle sweep: the entry and its rotation state (the rescue
        recounts holders and waiting flows from the table; rcc's ACK queue
        counts the flow out in BPF)."""
        if self.cfg.ackq_pkts:
            self.ackq_end(key)
        self.lib.delete(self.flows_fd, key)
        self.lib.delete(self.wset_fd, key)
        self.lib.delete(self.rot_flows_fd, key)

    def budget_flows(self) -> int:
        """newdctcp-budget: how many flows share the budget now (p4i_budget)."""
        n = ctypes.c_uint64()
        self.lib.lookup(self.budget_fd, ctypes.c_uint32(0), n)
        return ctypes.c_int64(n.value).value

    def recount_budget(self) -> int:
        """Set p4i_budget to the counted entries in the table, after userspace
        deleted idle ones (the programs count FIN/RST themselves) or the LRU
        evicted some. A handshake completing between the dump and the write is
        missed until the next recount (the agent recounts every second)."""
        n = sum(1 for _, f in self.dump() if f.flags & FL_COUNTED)
        self.lib.update(self.budget_fd, ctypes.c_uint32(0), ctypes.c_uint64(n))
        return n

    def rotation(self) -> RotGlobal:
        """newdctcp-budget's rotation: H, flows holding a window, flows waiting."""
        g = RotGlobal()
        self.lib.lookup(self.rot_fd, ctypes.c_uint32(0), g)
        return g

    def _rot_op(self, o: RotOp) -> tuple[int, RotOp]:
        rc, out, _ = self.lib.test_run(self.rescue_fd, bytes(ROT_OP_OFF) + bytes(o))
        if rc < 0:
            raise BpfError(f"rx_rescue: op {o.op} refused (rebuild the agent)", 22)
        return rc, RotOp.from_buffer_copy(out[ROT_OP_OFF : ROT_OP_OFF + ctypes.sizeof(RotOp)])

    def rot_grant(self, key: FlowKey) -> bool:
        """A waiting flow takes a slot (the rescue sends its update after), in
        BPF by compare-and-swap against the data path: whether it did (False:
        the flow was no longer waiting)."""
        return self._rot_op(RotOp(key=key, op=ROT_OP_GRANT))[0] == 1

    def rot_count(self) -> tuple[int, int]:
        """(holders, waiting flows) counted in the rotation table, in BPF."""
        _, o = self._rot_op(RotOp(op=ROT_OP_COUNT))
        return o.open, o.waiting

    def rot_scan(self, now_ns: int, min_idle_ns: int, stale_rtts: int) -> tuple[int, int, int]:
        """Take back the slot of every holder idle for more than
        max(stale_rtts smoothed RTTs, min_idle_ns) at `now_ns` (the rule of
        rotation.stale, in BPF: one pass over the table), then count:
        (holders, waiting flows, slots taken back)."""
        o = RotOp(op=ROT_OP_SCAN, since=now_ns, min_idle_ns=min_idle_ns, stale_rtts=stale_rtts)
        _, out = self._rot_op(o)
        return out.open, out.waiting, out.reclaimed

    def rot_adjust(self, d_open: int, d_waiting: int) -> None:
        """Add to the rotation's counters (atomically: the data path's
        concurrent adds are kept)."""
        self._rot_op(RotOp(op=ROT_OP_ADJUST, open=d_open, waiting=d_waiting))

    def rot_flows(self) -> list[tuple[FlowKey, RotFlow]]:
        return self.lib.dump(self.rot_flows_fd, FlowKey, RotFlow)

    def rot_flow(self, key: FlowKey) -> RotFlow | None:
        r = RotFlow()
        return r if self.lib.lookup(self.rot_flows_fd, key, r) else None

    def rotq_pop(self) -> FlowKey | None:
        k = FlowKey()
        return k if self.lib.pop(self.rotq_fd, k) else None

    def rotq_push(self, key: FlowKey) -> None:
        self.lib.push(self.rotq_fd, key)

    # -- rcc's ACK queue ------------------------------------------------------------
    def ackq(self) -> AckqGlobal:
        """rcc's ACK queue: total in flight, its maximum, flows held."""
        g = AckqGlobal()
        self.lib.lookup(self.ackq_g_fd, ctypes.c_uint32(0), g)
        return g

    def ackq_flow(self, key: FlowKey) -> AckqFlow | None:
        a = AckqFlow()
        return a if self.lib.lookup(self.ackq_flows_fd, key, a) else None

    def _ackq_op(self, o: AckqOp) -> tuple[int, AckqOp]:
        rc, out, _ = self.lib.test_run(self.rescue_fd, bytes(ROT_OP_OFF) + bytes(o))
        if rc < 0:
            raise BpfError(f"rx_rescue: ACK-queue op {o.op} refused (rebuild the agent)", 22)
        return rc, AckqOp.from_buffer_copy(out[ROT_OP_OFF : ROT_OP_OFF + ctypes.sizeof(AckqOp)])

    def ackq_release(self) -> tuple[FlowKey, int, int] | None | Literal[False]:
        """Release the head of the ACK queue if it fits, in BPF under the data
        path's lock: (key, ack, window field) of the update to send; None when
        nothing can go; False when the data path held the lock."""
        rc, o = self._ackq_op(AckqOp(op=ACKQ_OP_RELEASE))
        if rc == 2:
            return False
        if rc != 1:
            return None
        k = FlowKey()
        ctypes.memmove(ctypes.byref(k), ctypes.byref(o.key), ctypes.sizeof(FlowKey))
        return k, o.ack, o.field

    def ackq_end(self, key: FlowKey) -> None:
        """Count a flow out of the ACK queue (before userspace deletes it)."""
        self._ackq_op(AckqOp(key=key, op=ACKQ_OP_END))

    def new_flows(self) -> NewFlows:
        """The keys the data path created flows for since the last read (ictcp,
        rcc: the p4i_newflows ring); close() it before this object."""
        return NewFlows(self.lib.ring(self.newflows_fd))

    def set_w(self, key: FlowKey, w: int) -> None:
        self.lib.update(self.wset_fd, key, ctypes.c_uint32(max(0, min(w, 0xFFFFFFFF))))

    def stats(self) -> dict[str, int]:
        return read_stats(self.lib, self.stats_fd)

    # -- attachment ---------------------------------------------------------------
    def attach(self, ifname: str, mode: str = "tcx") -> Attachment:
        """Attach ingress+egress on `ifname`. mode: tcx (fail-open on crash) or clsact."""
        ifindex = socket.if_nametoindex(ifname)
        if mode == "tcx":
            fds: list[int] = []
            try:
                fds.append(self.lib.tcx_link(self.ingress_fd, ifindex, egress=False))
                fds.append(self.lib.tcx_link(self.egress_fd, ifindex, egress=True))
            except BpfError as e:
                for fd in fds:
                    os.close(fd)
                if e.errno in (22, 95):  # EINVAL / EOPNOTSUPP: kernel without TCX (< 6.6)
                    raise BpfError(
                        f"{e} — this kernel lacks TCX: use --attach clsact", e.errno
                    ) from e
                raise
            self.attachment = Attachment("tcx", ifindex, tuple(fds))
        elif mode == "clsact":
            c = self.lib.c
            created = False
            h = self.lib.tc_hook(ifindex, egress=False)
            h.attach_point = 1 | 2  # BPF_TC_INGRESS | BPF_TC_EGRESS: the clsact qdisc
            rc = c.bpf_tc_hook_create(ctypes.byref(h))
            if rc == 0:
                created = True
            elif rc != -17:  # EEXIST: someone's clsact; we only add our filters
                raise BpfError("bpf_tc_hook_create", rc)
            for egress, fd in ((False, self.ingress_fd), (True, self.egress_fd)):
                hk = self.lib.tc_hook(ifindex, egress)
                o = _tc_opts(fd)
                rc = c.bpf_tc_attach(ctypes.byref(hk), ctypes.byref(o))
                if rc:
                    raise BpfError("bpf_tc_attach", rc)
            self.attachment = Attachment("clsact", ifindex, (), created)
        else:
            raise ValueError(f"attach mode {mode!r}: tcx or clsact")
        return self.attachment

    def detach(self) -> None:
        """Remove our programs; idempotent (signal handler, atexit, finally)."""
        a, self.attachment = self.attachment, None
        if a is None:
            return
        if a.kind == "tcx":
            for fd in a.link_fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            return
        detach_clsact(self.lib, a.ifindex, destroy_hook=a.hook_created)

    def close(self) -> None:
        self.detach()
        if self.obj:
            self.lib.c.bpf_object__close(self.obj)
            self.obj = 0

    # -- test runs ------------------------------------------------------------------
    def run(self, egress: bool, frame: bytes, repeat: int = 1) -> tuple[int, bytes, int]:
        return self.lib.test_run(self.egress_fd if egress else self.ingress_fd, frame, repeat)


P4I_TC_HANDLE = 0x4149  # "AI": our filter handle and priority on clsact
P4I_TC_PRIO = 0x4149


def _tc_opts(prog_fd: int = 0) -> ctypes.Structure:
    o = TcOpts()
    o.sz = ctypes.sizeof(TcOpts)
    o.prog_fd = prog_fd
    o.handle = P4I_TC_HANDLE
    o.priority = P4I_TC_PRIO
    return o


def detach_clsact(lb: Lib, ifindex: int, destroy_hook: bool = False) -> int:
    """Remove our clsact filters (handle/prio P4I_TC_*) from both directions."""
    removed = 0
    for egress in (False, True):
        hk = lb.tc_hook(ifindex, egress)
        o = _tc_opts()
        if lb.c.bpf_tc_detach(ctypes.byref(hk), ctypes.byref(o)) == 0:
            removed += 1
    if destroy_hook:
        h = lb.tc_hook(ifindex, False)
        h.attach_point = 1 | 2
        lb.c.bpf_tc_hook_destroy(ctypes.byref(h))
    return removed


def read_flows(lb: Lib, fd: int) -> dict[str, Flow]:
    return {k.label(): f for k, f in lb.dump(fd, FlowKey, Flow)}


def read_stats(lb: Lib, fd: int) -> dict[str, int]:
    ncpu = lb.num_cpus()
    out: dict[str, int] = {}
    for i, name in enumerate(ST_NAMES):
        vals = (ctypes.c_uint64 * ncpu)()
        lb.lookup(fd, ctypes.c_uint32(i), vals)
        out[name] = int(sum(vals))
    return out
