"""The running agent: attach rxwin on one interface, run the chosen policy, fail open.

Fail-open paths, all tested in tests/agent/test_veth.py:
- SIGINT / SIGTERM: the handler raises SystemExit; `finally` detaches.
- Python exception: the same `finally`.
- SIGKILL / interpreter crash: with --attach tcx (default) the programs hang
  off TCX links whose only fds this process holds, so the kernel detaches them
  when the process dies. With --attach clsact they stay:
  `p4incast-agent detach --iface IF` removes them.
Detaching removes the clamp at once: the next ACK carries the kernel's window.

`status` reads the live maps of every running agent: each agent writes
/run/p4incast-agent/<pid>.json with its interface, policy and map IDs (map
IDs are global, so status works from any network namespace).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import cast

from p4incast.agent.datapath import (
    ACKQ_HELD,
    FL_HS,
    Flow,
    FlowKey,
    RxWin,
    read_flows,
    read_stats,
)
from p4incast.agent.libbpf import BpfError, MapInfo, lib
from p4incast.agent.metrics import AgentCollector, totals
from p4incast.agent.rotation import RX_CLONE_MARK, Rescuer, window_update
from p4incast.model.scheme import BUDGET_AGENT, receiver_clears_ece
from p4incast.policies.config import (
    AgentConfig,
    ConfigError,
    data_path_rtt_limit_us,
    start_segs,
)
from p4incast.policies.ictcp import FlowSample, Ictcp, IctcpParams
from p4incast.policies.rcc import Rcc, RccParams

__all__ = ["STATE_DIR", "AckqRescuer", "ackq_pkts", "run", "status"]

STATE_DIR = Path(os.environ.get("P4INCAST_AGENT_STATE", "/run/p4incast-agent"))
# ictcp / rcc: the full table scan's period, s; new flows arrive through the
# data path's ring at once, the scan only catches what the ring had no room for
SCAN_S = 1.0


def _map_id(fd: int) -> int:
    info = MapInfo()
    ln = ctypes.c_uint32(ctypes.sizeof(info))
    lib().c.bpf_obj_get_info_by_fd(fd, ctypes.byref(info), ctypes.byref(ln))
    return info.id


def _iface_rx_bytes(iface: str) -> int:
    return int(Path(f"/sys/class/net/{iface}/statistics/rx_bytes").read_text())


def _capacity_Bps(cfg: AgentConfig) -> float:
    if cfg.capacity_mbps:
        return cfg.capacity_mbps * 1e6 / 8
    try:
        speed = int(Path(f"/sys/class/net/{cfg.iface}/speed").read_text())
    except (OSError, ValueError):
        speed = -1
    if speed <= 0:
        raise ConfigError(f"{cfg.iface} reports no link speed (veth?): give ICTCP --capacity-mbps")
    return speed * 1e6 / 8


class _Stop(Exception):
    pass


def ackq_pkts(cfg: AgentConfig) -> int:
    """rx_config.ackq_pkts: Q for rcc with its ACK queue on, else 0 (off)."""
    return cfg.queue_maxsize if cfg.policy == "rcc" and cfg.ack_queue else 0


class AckqRescuer:
    """rcc's ACK queue, userspace's side: every tick, release heads while the
    total in flight is below the cap (RCC Algorithm 2 l.3; in BPF, rx_rescue
    ACKQ_OP_RELEASE, under the data path's lock) and send their window
    updates through a packet socket whose mark the data path lets pass. The
    data path releases from the ACKs it sends; this covers the moments no ACK
    flows (every flow waiting, data drained). Also the receiver timer's ACKs
    (Algorithm 3, `timer_ack`)."""

    BURST = 64  # heads a tick at most

    def __init__(self, rx: RxWin, iface: str, sock=None) -> None:
        self.rx = rx
        if sock is None:
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, RX_CLONE_MARK)
            sock.bind((iface, 0))
        self.sock = sock
        self.sent = 0
        self.timer_acks = 0  # RCC Algorithm 3 l.7

    def close(self) -> None:
        self.sock.close()

    def waits(self, key: FlowKey) -> bool:
        """RCC's receiver timer runs for the flow (Algorithm 3): it counts
        something in flight and has no ACK held."""
        a = self.rx.ackq_flow(key)
        return a is not None and a.counted > 0 and a.state != ACKQ_HELD

    def timer_ack(self, key: FlowKey) -> bool:
        """The flow's timer fired: its latest ACK again (ack, window field). Its
        right edge was sent already, so it opens nothing new and the ACK queue
        would let it pass whole (docs/algorithms.md "RCC"); it goes out here
        without PSH, which a stock sender ignores. False when the flow has no
        ACK to repeat."""
        f, r = self.rx.flow(key), self.rx.rot_flow(key)
        if f is None or r is None or not r.has_hdr or not f.re_valid:
            return False
        self.sock.send(window_update(key, r, f.last_field, f.last_ack))
        self.timer_acks += 1
        return True

    def step(self) -> int:
        """Release heads while the total is below the cap; returns how many
        updates were sent."""
        n = 0
        if self.rx.ackq().held <= 0:
            return 0
        for _ in range(self.BURST):
            got = self.rx.ackq_release()
            if not got:  # None: the head waits; False: the data path is deciding
                break
            key, ack, field = got
            r = self.rx.rot_flow(key)
            if r is None:
                continue
            self.sock.send(window_update(key, r, field, ack))
            n += 1
        self.sent += n
        return n


@contextlib.contextmanager
def _signals_stop() -> Iterator[None]:
    def handler(signum: int, _frame: FrameType | None) -> None:
        raise _Stop(signal.Signals(signum).name)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def run(
    cfg: AgentConfig,
    *,
    ready: Path | None = None,
    trace: Path | None = None,
    log=print,
    metrics: AgentCollector | None = None,
) -> int:
    """Attach, loop until a signal, detach. Returns the exit status. `trace`:
    the rotation's state every tick (agent/rotation.py, Rescuer._trace).
    `metrics`: a collector already being served; it reads the maps once attached."""
    cfg = cfg.validated()
    if trace is not None and not cfg.rotate:
        raise ConfigError("--trace writes the rotation's state: it needs rotate=1")
    try:
        ifindex = socket.if_nametoindex(cfg.iface)
    except OSError:
        raise ConfigError(f"no interface {cfg.iface!r} in this network namespace") from None
    if cfg.policy == "off":
        log(f"p4incast-agent: policy off — nothing attached to {cfg.iface}; waiting for a signal")
        with _signals_stop(), contextlib.suppress(_Stop):
            if ready:
                ready.write_text("off\n")
            while True:
                time.sleep(3600)
        return 0
    capacity = _capacity_Bps(cfg) if cfg.policy == "ictcp" else 0.0
    rx = RxWin(max_flows=cfg.max_flows)
    state = STATE_DIR / f"{os.getpid()}.json"
    with _signals_stop():
        try:
            rx.configure(
                cfg.policy,
                # ICTCP starts every flow at its own initial window (2 MSS).
                init_segs=start_segs(cfg.policy, cfg.init_segs),
                max_w=cfg.max_w,
                min_segs=cfg.min_segs,
                rtt_limit_us=data_path_rtt_limit_us(cfg.policy, cfg.rtt_limit_us),
                idle_s=cfg.idle_reset_s,
                ifindex=ifindex,
                budget_bytes=cfg.budget_bytes,
                rotate=cfg.rotate,
                ack_cost=cfg.ack_cost,
                clear_ece=int(receiver_clears_ece(cfg.policy, bool(cfg.sender_ecn))),
                ackq_pkts=ackq_pkts(cfg),
                share_pkts=cfg.queue_maxsize if cfg.policy == "rcc" else 0,
            )
            att = rx.attach(cfg.iface, cfg.attach)
            STATE_DIR.mkdir(parents=True, exist_ok=True)
            state.write_text(
                json.dumps(
                    {
                        "pid": os.getpid(),
                        "iface": cfg.iface,
                        "policy": cfg.policy,
                        "attach": att.kind,
                        "maps": {
                            "flows": _map_id(rx.flows_fd),
                            "stats": _map_id(rx.stats_fd),
                            "config": _map_id(rx.config_fd),
                            "wset": _map_id(rx.wset_fd),
                        },
                    }
                )
            )
            log(f"p4incast-agent: {cfg.policy} on {cfg.iface} ({att.kind}); SIGINT/SIGTERM detach")
            if metrics is not None:
                metrics.attach(rx, att.kind)
            if ready:
                ready.write_text(f"{att.kind}\n")
            _loop(rx, cfg, capacity, log, trace)
        except _Stop as s:
            log(f"p4incast-agent: {s}; detaching from {cfg.iface}")
        finally:
            rx.detach()  # first: fail open before anything else can go wrong
            if metrics is not None:
                metrics.detach()  # before the maps close
            with contextlib.suppress(Exception):
                log(f"p4incast-agent: {_summary(rx)}")
            rx.close()
            with contextlib.suppress(OSError):
                state.unlink()
    return 0


def _loop(
    rx: RxWin, cfg: AgentConfig, capacity_Bps: float, log=print, trace: Path | None = None
) -> None:
    tick = cfg.interval_ms / 1000
    # the agent's configured datacenter-flow limit (rtt_limit_us)
    limit_s = cfg.rtt_limit_us / 1e6
    ictcp = (
        Ictcp(IctcpParams(capacity_Bps=capacity_Bps, rtt_limit_s=limit_s, idle_s=cfg.idle_reset_s))
        if cfg.policy == "ictcp"
        else None
    )
    rcc = (
        Rcc(RccParams(queue_maxsize=cfg.queue_maxsize, rto_r_s=cfg.rcc_rto_r_ms / 1000))
        if cfg.policy == "rcc"
        else None
    )
    next_sweep = time.monotonic() + 1.0
    next_scan = 0.0
    trace_f = trace.open("w", buffering=1 << 16) if trace is not None else None
    rescue = (
        Rescuer(rx, cfg.iface, cfg.budget_bytes, tick, trace_f, ack_cost=cfg.ack_cost)
        if cfg.policy == BUDGET_AGENT and cfg.rotate
        else None
    )
    ackq = AckqRescuer(rx, cfg.iface) if ackq_pkts(cfg) else None
    rx_bytes = open(f"/sys/class/net/{cfg.iface}/statistics/rx_bytes", "rb")  # noqa: SIM115
    keys: dict[bytes, FlowKey] = {}
    written: dict[bytes, int] = {}
    newflows = rx.new_flows() if ictcp is not None or rcc is not None else None
    try:
        # newdctcp-rx / observe: W lives in BPF; userspace only sweeps idle entries.
        # ictcp / rcc: the data path hands over each new flow's key (p4i_newflows),
        # so a flow is stepped from the first tick after it appears; until then its
        # ACKs carry the data path's start window (ictcp: 2 MSS, the policy's own).
        # A full table scan (its cost grows with max_flows) once a second finds
        # the flows whose notice the ring had no room for; each tick looks up only
        # the known keys.
        while True:
            if ictcp is None and rcc is None and rescue is None:
                time.sleep(max(0.0, next_sweep - time.monotonic()))
            else:
                time.sleep(tick)
            now = time.monotonic()
            if rescue is not None:
                rescue.step(time.monotonic_ns())
            if ackq is not None:
                ackq.step()
            if newflows is not None:
                for k in newflows.take():
                    keys[bytes(k)] = k
                    written.pop(bytes(k), None)  # a new flow has no W in the data path
                if now >= next_scan:
                    keys = {bytes(k): k for k, _ in rx.dump()}
                    next_scan = now + SCAN_S
                live: dict[bytes, Flow] = {}
                for b, k in list(keys.items()):
                    f = rx.flow(k)
                    if f is None:  # ended (FIN/RST, LRU, idle sweep)
                        del keys[b]
                        written.pop(b, None)
                    elif f.pkts:
                        live[b] = f
                if ictcp is not None:
                    rx_bytes.seek(0)
                    samples = {
                        b: FlowSample(f.bytes, _rtt_s(f), f.rtt_min_us / 1e6)
                        for b, f in live.items()
                    }
                    out = ictcp.step(now, int(rx_bytes.read()), samples)
                else:
                    assert rcc is not None
                    counters = {b: (f.pkts, f.ce, _rtt_s(f)) for b, f in live.items()}
                    waits = {b: ackq.waits(keys[b]) for b in live} if ackq else None
                    out = rcc.step(now, counters, waits=waits)
                for b, w in out.items():
                    if written.get(b) != w:
                        rx.set_w(keys[b], w)
                        written[b] = w
                if rcc is not None and ackq is not None:
                    for b in rcc.fired:  # RCC Algorithm 3 l.7, under the window just set
                        ackq.timer_ack(keys[cast(bytes, b)])
            if now >= next_sweep:
                if _sweep(rx, cfg) and cfg.policy == BUDGET_AGENT:
                    rx.recount_budget()
                next_sweep = now + 1.0
    finally:
        rx_bytes.close()
        if newflows is not None:
            newflows.close()
        if ackq is not None:
            ackq.close()
            st, g = rx.stats(), rx.ackq()
            log(
                f"p4incast-agent: ACK queue: {st['ackq_held']} ACKs held, "
                f"{st['ackq_replaced']} replaced, {st['ackq_superseded']} superseded, "
                f"{st['ackq_released']} released by ACKs, {st['ackq_rescued']} by the rescue, "
                f"{st['ackq_zero']} zero windows; most in flight {g.max_total} bytes; "
                f"{ackq.timer_acks} receiver-timer ACKs"
            )
        if trace_f is not None:
            trace_f.close()
        if rescue is not None:
            rescue.close()
            c, st = rescue.counts, rx.stats()
            log(
                f"p4incast-agent: rotation: {st['rot_grant']} slots passed on, "
                f"{st['rot_release']} released, {st['rot_idle']} after a short segment, "
                f"{st['rot_defer']} grants deferred; rescue: {c.reclaimed} idle slots "
                f"taken back, {c.granted} window updates sent from userspace, "
                f"{c.requeued} times waiting flows put back in the queue, "
                f"{c.recounted} counter repairs; ack cost {cfg.ack_cost} bytes"
            )


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used so far, from
    /proc/<pid>/stat: how the agent's own cost is measured (bench_agent.py,
    the BMv2 testbed)."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def _summary(rx: RxWin) -> str:
    """One line for the log: what the data path saw and did since it attached;
    `resident` and `no_handshake` are the flows still in the table."""
    st = rx.stats()
    flows = [f for _, f in rx.dump()]
    nohs = sum(1 for f in flows if (f.flags & FL_HS) != FL_HS)
    return (
        f"rx_pkts={st['rx_pkts']} acks={st['tx_acks']} rewrites={st['rewrites']} "
        f"flows_new={st['flows_new']} flows_end={st['flows_end']} bad_opts={st['bad_opts']} "
        f"rtt_excluded={st['rtt_excluded']} resident={len(flows)} no_handshake={nohs}"
    )


def _rtt_s(f: Flow) -> float:
    """RTT for the userspace policies: smoothed (queueing included), else the minimum."""
    return (f.srtt_us or f.rtt_min_us) / 1e6


def _sweep(rx: RxWin, cfg: AgentConfig) -> int:
    """Delete entries idle longer than idle_timeout_s (bpf_ktime = CLOCK_MONOTONIC)."""
    now_ns = time.monotonic_ns()
    limit = int(cfg.idle_timeout_s * 1e9)
    n = 0
    for k, f in rx.dump():
        if now_ns - f.last_ns > limit:
            rx.delete_flow(k)
            n += 1
    return n


# -- status ------------------------------------------------------------------------------


def _open_map(map_id: int) -> int:
    fd = lib().c.bpf_map_get_fd_by_id(map_id)
    if fd < 0:
        raise BpfError(f"map id {map_id}", fd)
    return fd


def status() -> list[dict]:
    """One dict per running agent: iface, policy, totals, flows."""
    out: list[dict] = []
    if not STATE_DIR.is_dir():
        return out
    for p in sorted(STATE_DIR.glob("*.json")):
        try:
            st = json.loads(p.read_text())
            os.kill(int(st["pid"]), 0)
        except (OSError, ValueError, KeyError):
            with contextlib.suppress(OSError):
                p.unlink()  # a crashed agent's file; its TCX links died with it
            continue
        lb = lib()
        ffd = _open_map(st["maps"]["flows"])
        sfd = _open_map(st["maps"]["stats"])
        wfd = _open_map(st["maps"]["wset"]) if "wset" in st["maps"] else -1
        try:
            flows: dict[str, Flow] = read_flows(lb, ffd)
            stats = read_stats(lb, sfd)
            wset = (
                {k.label(): v.value for k, v in lb.dump(wfd, FlowKey, ctypes.c_uint32)}
                if (wfd >= 0)
                else {}
            )
        finally:
            os.close(ffd)
            os.close(sfd)
            if wfd >= 0:
                os.close(wfd)
        rows = []
        for label, f in sorted(flows.items()):
            d = cast("dict[str, object]", f.as_dict())
            d["flow"] = label
            d["w_user"] = wset.get(label)  # ictcp / rcc: the W userspace wrote
            rows.append(d)
        out.append(
            {
                **{k: st[k] for k in ("pid", "iface", "policy", "attach")},
                "totals": totals(flows, stats),  # what --metrics serves
                "flows": rows,
            }
        )
    return out


__all__ += ["FlowKey"]
