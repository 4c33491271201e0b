"""The BMv2 engine: each point on a fresh Mininet network of BMv2 switches
running the real pipeline (engines/testbed.py), one point at a time.

A scheme becomes the switch's per-port ECN policy (`ecn_policy`) and the
senders' kernel congestion control; DCTCP/NewDCTCP come from the host agent's
BPF struct_ops versions (p4i_dctcp, p4i_newdctcp) when the kernel has no module,
registered by the first run that needs them (`check` only looks).
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path
from typing import ClassVar

from p4incast import bmv2, tools
from p4incast.agent import cc as agent_cc
from p4incast.controller.config import EcnPolicy, Pipeline
from p4incast.model.dilation import Dilation
from p4incast.model.scheme import (
    DCTCP_G,
    SENDER_MIN_CWND_SEGS,
    SIM_DELACK_MS,
    SIM_SYN_RTO_MS,
    Point,
    RunResult,
    Scheme,
)
from p4incast.model.wire import MSS_BYTES

from .base import IncastEngine, register

# Kernel congestion-control names per scheme cc, in order of preference.
KERNEL_CC = {
    "reno": ("reno",),
    "cubic": ("cubic",),
    "bbr": ("bbr",),
    "dctcp": ("dctcp", "p4i_dctcp"),
    "newdctcp": ("p4i_newdctcp",),
}
MAX_SENDERS = 64  # topologies/incast.py numbers hosts and ports up to this


def available_cc() -> set[str]:
    path = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    return set(path.read_text().split()) if path.exists() else set()


def obtainable_cc() -> set[str]:
    """What a run can use: the kernel's congestion controls, and the agent's BPF
    ones that are built (the run registers them, `Bmv2Engine._load_bpf_cc`)."""
    return available_cc() | set(agent_cc.built())


def kernel_cc(cc: str, have: set[str] | None = None) -> str:
    """The kernel name for scheme cc, or RuntimeError saying how to get it."""
    have = available_cc() if have is None else have
    for name in KERNEL_CC[cc]:
        if name in have:
            return name
    hint = (
        "load the BPF versions with `sudo .venv/bin/p4incast-agent cc load` (built by make build)"
        if cc in ("dctcp", "newdctcp")
        else f"modprobe tcp_{cc}"
    )
    raise RuntimeError(
        f"congestion control {cc} is not available in this kernel "
        f"(has: {', '.join(sorted(have)) or 'none'}); {hint}"
    )


def ecn_policy(scheme: Scheme) -> EcnPolicy:
    """The switch policy a scheme asks for on every port toward the receiver."""
    return EcnPolicy(scheme.ecn, scheme.k)


class Bmv2Engine(IncastEngine):
    name: ClassVar[str] = "bmv2"
    parallel: ClassVar[bool] = False  # a Mininet network takes the whole machine
    max_senders: ClassVar[int] = MAX_SENDERS

    def __init__(
        self, *, capture: bool = False, dilation: dict[int, Dilation] | None = None
    ) -> None:
        self._bpf_tried = False
        # p4incast-run --capture: each run's receiver-side pcap (headers) and,
        # with rotation, the agent's per-tick trace, in the run's log folder
        self.capture = capture
        # by bottleneck_pps, measured once
        self._dilation: dict[int, Dilation] = {} if dilation is None else dilation

    def capturing(self) -> Bmv2Engine:
        """This engine with --capture on: a new engine for the caller's runs (the
        registered one, which every run shares, never changes), sharing the
        dilations measured so far."""
        return Bmv2Engine(capture=True, dilation=self._dilation)

    def dilation(self, point: Point, log_dir: Path) -> Dilation | None:
        """The time dilation for the point's bottleneck (None: topology.dilate off);
        measured on the first point that needs it, printed once."""
        t = point.topology
        if not t.dilate:
            return None
        if t.bottleneck_pps not in self._dilation:
            from . import testbed  # imports Mininet, which only this engine needs

            d = testbed.calibrate(point, log_dir / "calibration")
            self._dilation[t.bottleneck_pps] = d
            print(d.describe(t.rto_min_ms), flush=True)
        return self._dilation[t.bottleneck_pps]

    def describe(self) -> str:
        return f"bmv2 (Mininet + {tools.fastest_simple_switch_grpc()[1]})"

    def unavailable(self) -> str | None:
        if not bmv2.have_root():
            return "the BMv2 testbed needs root (Mininet network namespaces)"
        try:
            import mininet.net  # noqa: F401  (Mininet is optional: only this engine needs it)
        except ImportError:
            return "the BMv2 testbed needs Mininet (Debian package mininet; make setup installs it)"
        missing = tools.missing_reason("simple_switch_grpc", "simple_switch_CLI")
        if missing:
            return missing
        unfenced = bmv2.fence_unavailable()
        if unfenced:
            return unfenced
        config = Pipeline.default().config
        if config is None or not config.is_file():
            return "build/v1model/p4incast.json is not built (make build; needs p4c-bm2-ss)"
        return None

    def _load_bpf_cc(self, cc: str) -> None:
        """Register the agent's BPF DCTCP/NewDCTCP, once per engine (the first run
        that needs them), from the objects built now: ones an earlier build left
        registered are replaced (the kernel keeps them until `p4incast-agent cc
        unload`; sockets using them keep them)."""
        if self._bpf_tried or not any(c.startswith("p4i_") for c in KERNEL_CC[cc]):
            return
        if any(c in available_cc() for c in KERNEL_CC[cc] if not c.startswith("p4i_")):
            return  # the kernel's own module
        self._bpf_tried = True
        wanted = tuple(c for names in KERNEL_CC.values() for c in names if c.startswith("p4i_"))
        try:
            agent_cc.unload(wanted)
            agent_cc.load(wanted)
            print(f"registered the BPF congestion controls {', '.join(wanted)}", flush=True)
        except Exception as err:  # reported by kernel_cc as unavailable
            print(f"could not load the BPF congestion controls: {err}", flush=True)

    def check(self, point: Point) -> list[str]:
        problems = point.problems(self.name)
        if point.transport.restart_each_round:
            problems.append(
                "transport.restart_each_round: the testbed's Linux senders keep their "
                "windows across rounds; the restart is a simulator ablation"
            )
        if point.transport.min_cwnd_segs != SENDER_MIN_CWND_SEGS:
            problems.append(
                f"transport.min_cwnd_segs: the testbed's Linux senders (kernel DCTCP and "
                f"p4i_newdctcp) keep at least {SENDER_MIN_CWND_SEGS} segments after an ECN "
                "cut; a 1-segment floor is a simulator ablation"
            )
        if point.topology.shared_buffer_bytes:
            problems.append(
                "topology.shared_buffer_bytes: BMv2's egress queues are per port "
                "(topology.queue_pkts); the shared buffer is a simulator feature"
            )
        if point.transport.dctcp_g != DCTCP_G and point.scheme.cc == "dctcp":
            problems.append(
                f"scheme {point.scheme.name}: transport.dctcp_g is fixed at {DCTCP_G} on the "
                "testbed (the kernel's dctcp_shift_g and p4i_dctcp's are compile-time)"
            )
        if point.transport.delack_ms != SIM_DELACK_MS:
            problems.append(
                "transport.delack_ms: the testbed's Linux hosts delay ACKs by their own "
                "40 ms minimum (about 1 ms at the testbed's time dilation)"
            )
        if point.transport.mss_bytes != MSS_BYTES:
            problems.append(
                f"transport.mss_bytes: the testbed's Linux hosts send their own "
                f"{MSS_BYTES}-byte segments (1500-byte MTU, timestamps); "
                f"{point.transport.mss_bytes} is a simulator setting"
            )
        if point.transport.syn_rto_ms != SIM_SYN_RTO_MS:
            problems.append(
                "transport.syn_rto_ms: the testbed's Linux hosts retransmit a SYN after "
                "their own 1 s (TCP_TIMEOUT_INIT)"
            )
        if not point.transport.sack:
            problems.append(
                "transport.sack: the testbed's Linux hosts negotiate SACK; NewReno "
                "recovery without it is a simulator setting"
            )
        if point.transport.adv_window_segs:
            problems.append(
                "transport.adv_window_segs: the testbed's receivers advertise Linux's own "
                "window (the route's window clamp); a fixed cap is a simulator setting"
            )
        if point.n > MAX_SENDERS:
            problems.append(f"senders: {point.n} above {MAX_SENDERS}, the BMv2 testbed's limit")
        try:
            kernel_cc(point.scheme.cc, obtainable_cc())  # no side effect: run() registers
        except RuntimeError as err:
            problems.append(f"scheme {point.scheme.name}: {err}")
        return problems

    def worker_init(self) -> None:
        """Nothing to prepare: each point builds its own network."""

    def run(self, point: Point, log_dir: Path) -> RunResult:
        """One point on a fresh Mininet network; never raises."""
        t0 = time.monotonic()
        try:
            from . import testbed  # imports Mininet, which only this engine needs

            dil = self.dilation(point, log_dir)
            self._load_bpf_cc(point.scheme.cc)  # check() only looks
            cc = kernel_cc(point.scheme.cc)
            res = testbed.run(
                point, cc, ecn_policy(point.scheme), log_dir, dil, capture=self.capture
            )
        except Exception as err:  # one failed run must not stop the sweep
            log_dir.mkdir(parents=True, exist_ok=True)
            (log_dir / "error.txt").write_text(traceback.format_exc())
            msg = f"{type(err).__name__}: {err}"
            return RunResult.failed(point, self.name, msg, time.monotonic() - t0)
        return RunResult(
            point.scheme.name,
            point.n,
            point.repeat,
            self.name,
            status="ok",
            wall_s=time.monotonic() - t0,
            base_rtt_ms=res.base_rtt_ms,
            rounds=res.rounds,
            switch=res.switch,
            extra={
                "batch": res.batch,
                "dilation": dil.as_dict() if dil else None,
                "depth_series": res.depth_series,
                "depth_series_kind": testbed.DEPTH_SERIES_KIND,
                "agent_cpu": res.agent_cpu,
            },
        )


ENGINE = register(Bmv2Engine())
