"""The simulation engine: one incast run on ns-3, returned in the testbed's result schema.

    run_point(point) -> run dict            (experiments/SCHEMA.md)

point = {"scheme": {"name", "ecn", "k", "cc", "agent", "batching"}, "n": N,
         "repeat": r, "seed": s, "topology": {...}, "app": {...}}

The model (sim/cpp/scenario.h): star or leaf-spine of point-to-point links
(1 Gbps, 25 µs per link, 1538 wire bytes per full packet), a byte buffer per
switch port (64 KB), the P4 pipeline's OFF / MARK_TAIL / MARK_FRONT decision
with K in packets on the ports that face the receiver (sim/cpp/ecn_queue.h),
ns-3 TCP (Linux reno, cubic, bbr, DCTCP with Linux's 2-segment floor, and
NewDCTCP, sim/cpp/tcp_newdctcp.h), min RTO 10 ms, persistent connections and
barrier rounds as apps/incast.py runs them.

Receiver policies (ALGORITHMS.md §3) act on the ACK window field at the
receiver's NIC, as the host agent does:
- newdctcp-rx: per packet in C++ (sim/cpp/rx_agent.h), a port of
  agent/policies/newdctcp_rx.py checked against it in tests/sim;
- ictcp, rcc: the agent's own Python policies (agent/policies/ictcp.py, rcc.py)
  stepped every agent tick (interval_ms) from here, with the counters the C++
  data path keeps — shared code, not a port.
Batch scheduling (seed 003, ALGORITHMS.md §4): experiments/batching.plan gives
each server's request offset.

Each process loads ns-3 and compiles the C++ once (about 30 s); run_point can
then be called any number of times (the runner's pool workers do).
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Mapping
from typing import Any

from p4incast.sim import native

ECN_MODES = {"off": 0, "tail": 1, "front": 2}
CCS = ("reno", "cubic", "bbr", "dctcp", "newdctcp")
AGENTS = {"off": 0, "observe": 1, "newdctcp-rx": 2, "ictcp": 3, "rcc": 3}
TOPOLOGIES = ("incast_star", "leaf_spine")
MODES = ("per-server", "total")
BOTTLENECK_PORT = "1"  # the receiver's port on its ToR/leaf (attached first, as on BMv2)

# Defaults of the model, per experiments/SCHEMA.md (topology / app keys).
TOPOLOGY_DEFAULTS: dict[str, Any] = {
    "kind": "incast_star",
    "spines": 1,
    "background": False,
    "link_gbps": 1.0,
    "delay_us": 25.0,
    "buffer_bytes": 65536,
    "rto_min_ms": 10.0,
}
APP_DEFAULTS: dict[str, Any] = {
    "sru_bytes": 65536,
    "mode": "per-server",
    "rounds": 20,
    "jitter_us": 10.0,  # server think time, uniform [0, jitter_us]
}
SERIES_POINTS = 2000  # depth_series is decimated to at most this many points
MAX_SIM_S = 120.0  # a run that needs more simulated time than this is reported failed


def _agent_tunables() -> dict[str, float]:
    """The host agent's defaults (agent/config.py), so both engines run the same policy."""
    try:
        from p4incast.agent.config import TUNABLES
    except ImportError:  # pragma: no cover - agent package absent
        return {"init_segs": 10, "min_segs": 2, "max_w": 4 << 20, "interval_ms": 5.0}
    return {k: v[0] for k, v in TUNABLES.items()}


def init_worker() -> None:
    """Load ns-3, compile the model, and run one tiny point (cppyy compiles the rest
    lazily on first use, ~10 s): call once per pool worker before timing anything."""
    native.load()
    run_point(
        {
            "scheme": {"name": "warm-up", "ecn": "front", "k": 4, "cc": "newdctcp"},
            "n": 2,
            "app": {"rounds": 1, "sru_bytes": 16384},
        }
    )


def check_point(point: Mapping[str, Any]) -> list[str]:
    """Problems with a point that would stop it from running (empty = fine)."""
    errs: list[str] = []
    sch = point.get("scheme") or {}
    topo = {**TOPOLOGY_DEFAULTS, **(point.get("topology") or {})}
    app = {**APP_DEFAULTS, **(point.get("app") or {})}
    n = point.get("n")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        errs.append(f"n must be an integer >= 1, got {n!r}")
    if str(sch.get("ecn", "off")) not in ECN_MODES:
        errs.append(f"scheme ecn {sch.get('ecn')!r}: one of {', '.join(ECN_MODES)}")
    if str(sch.get("cc", "reno")) not in CCS:
        errs.append(f"scheme cc {sch.get('cc')!r}: one of {', '.join(CCS)}")
    if str(sch.get("agent", "off")) not in AGENTS:
        errs.append(f"scheme agent {sch.get('agent')!r}: one of {', '.join(AGENTS)}")
    k = sch.get("k", 0)
    if not isinstance(k, int) or k < 0:
        errs.append(f"scheme k must be an integer >= 0, got {k!r}")
    if topo["kind"] not in TOPOLOGIES:
        errs.append(f"topology kind {topo['kind']!r}: one of {', '.join(TOPOLOGIES)}")
    if not float(topo["link_gbps"]) > 0:
        errs.append("topology link_gbps must be > 0")
    if float(topo["delay_us"]) < 0:
        errs.append("topology delay_us must be >= 0")
    if int(topo["buffer_bytes"]) < 1514:
        errs.append(f"topology buffer_bytes {topo['buffer_bytes']} is less than one packet (1514)")
    elif (
        isinstance(k, int)
        and str(sch.get("ecn", "off")) != "off"
        and k * 1514 > int(topo["buffer_bytes"])
    ):
        errs.append(f"K = {k} packets is above the buffer ({topo['buffer_bytes']} bytes)")
    if app["mode"] not in MODES:
        errs.append(f"app mode {app['mode']!r}: one of {', '.join(MODES)}")
    if int(app["sru_bytes"]) < 1:
        errs.append("app sru_bytes must be >= 1")
    if int(app["rounds"]) < 1:
        errs.append("app rounds must be >= 1")
    return errs


def _decimate(ts: list[float], ds: list[int], limit: int) -> list[list[float]]:
    """At most `limit` points of a max-per-bin series, keeping each group's maximum."""
    if len(ts) <= limit:
        return [[round(t, 6), int(d)] for t, d in zip(ts, ds, strict=True)]
    step = math.ceil(len(ts) / limit)
    out: list[list[float]] = []
    for i in range(0, len(ts), step):
        j = max(range(i, min(i + step, len(ts))), key=lambda x: ds[x])
        out.append([round(ts[i], 6), int(ds[j])])
    return out


def _offsets(n: int, size: int, topo: Mapping[str, Any], rtt_s: float) -> list[float]:
    """Seed-003 request offsets (seconds) of servers 1..n."""
    from p4incast.experiments import batching

    sched = batching.plan(
        n,
        size,
        int(topo["buffer_bytes"]),
        float(topo["link_gbps"]) * 1e9,
        rtt_s,
    )
    return list(sched.offsets)


def base_rtt_s(topo: Mapping[str, Any]) -> float:
    """Unloaded RTT of the model: 4 link delays, a full frame twice, an ACK frame twice."""
    rate = float(topo["link_gbps"]) * 1e9
    hops = 4 if topo.get("kind", "incast_star") == "incast_star" else 8
    return hops * float(topo["delay_us"]) * 1e-6 + (hops // 2) * 8 * (1538 + 84) / rate


class _PolicyStepper:
    """Steps agent/policies ictcp or rcc every agent tick with the C++ data path's counters."""

    def __init__(self, name: str, link_bps: float, tun: Mapping[str, float]) -> None:
        self.name = name
        if name == "ictcp":
            from p4incast.agent.policies.ictcp import Ictcp, IctcpParams

            cap = float(tun.get("capacity_mbps") or 0) * 1e6 / 8 or link_bps / 8
            self.policy: Any = Ictcp(IctcpParams(capacity_Bps=cap))
        else:
            from p4incast.agent.policies.rcc import Rcc, RccParams

            self.policy = Rcc(RccParams(queue_maxsize=int(tun.get("queue_maxsize", 40))))
        self.steps = 0

    def step(self, sc: Any) -> None:
        agent = sc.agent
        now = sc.Now()
        keys = [int(k) for k in agent.Keys()]
        flows = {k: agent.flows[k] for k in keys}
        live = {k: f for k, f in flows.items() if f.pkts}
        if self.name == "ictcp":
            from p4incast.agent.policies.ictcp import FlowSample

            samples = {k: FlowSample(int(f.bytes), float(sc.FlowRtt(k))) for k, f in live.items()}
            out = self.policy.step(now, int(agent.ifaceBytes), samples)
        else:
            counters = {k: (int(f.pkts), int(f.ce), float(sc.FlowRtt(k))) for k, f in live.items()}
            out = self.policy.step(now, counters)
        for k, w in out.items():
            agent.SetUserWindow(k, int(w))
        self.steps += 1


def run_point(point: Mapping[str, Any]) -> dict[str, Any]:
    """One (scheme, N, repeat) run on the simulator, as the run dict of experiments/SCHEMA.md."""
    t0 = time.monotonic()
    sch = dict(point.get("scheme") or {})
    n = point.get("n")
    out: dict[str, Any] = {
        "scheme": sch.get("name", ""),
        "n": n,
        "repeat": int(point.get("repeat", 0) or 0),
        "engine": "sim",
        "status": "failed",
        "error": None,
        "wall_s": 0.0,
        "base_rtt_ms": None,
        "rounds": [],
        "switch": {"bottleneck_port": BOTTLENECK_PORT, "ports": {}},
    }
    errs = check_point(point)
    if errs:
        out["error"] = "; ".join(errs)
        out["wall_s"] = time.monotonic() - t0
        return out
    try:
        _run(point, out)
    except Exception as exc:  # a run that fails must not take the sweep down
        out["status"] = "failed"
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc(limit=5)
    out["wall_s"] = time.monotonic() - t0
    return out


def _run(point: Mapping[str, Any], out: dict[str, Any]) -> None:
    p4i = native.load()
    sch = point["scheme"]
    topo = {**TOPOLOGY_DEFAULTS, **(point.get("topology") or {})}
    app = {**APP_DEFAULTS, **(point.get("app") or {})}
    tun = _agent_tunables()
    n = int(point["n"])
    sru = int(app["sru_bytes"])
    size = sru if app["mode"] == "per-server" else max(1, sru // n)
    agent = str(sch.get("agent", "off"))

    c = p4i.RunConfig()
    c.n = n
    c.topo = str(topo["kind"])
    c.spines = int(topo["spines"])
    c.background = bool(topo["background"])
    c.linkBps = float(topo["link_gbps"]) * 1e9
    c.delayUs = float(topo["delay_us"])
    c.bufferBytes = int(topo["buffer_bytes"])
    c.rtoMinMs = float(topo["rto_min_ms"])
    c.ecnMode = ECN_MODES[str(sch.get("ecn", "off"))]
    c.k = int(sch.get("k", 0))
    c.cc = str(sch.get("cc", "reno"))
    c.agent = AGENTS[agent]
    c.agentInitSegs = int(tun["init_segs"])
    c.agentMinSegs = int(tun["min_segs"])
    c.agentMaxW = int(tun["max_w"])
    c.sizeBytes = size
    c.rounds = int(app["rounds"])
    c.jitterUs = float(app["jitter_us"])
    c.seed = int(point.get("seed", 1) or 1)
    c.run = int(point.get("repeat", 0) or 0) + 1
    c.maxSimS = float(point.get("max_sim_s", MAX_SIM_S))
    if sch.get("batching"):
        offs = _offsets(n, size, topo, base_rtt_s(topo))
        import cppyy

        c.offsets = cppyy.gbl.std.vector["double"](offs)
    sc = p4i.Scenario(c)
    try:
        sc.Setup()
        stepper = _PolicyStepper(agent, c.linkBps, tun) if agent in ("ictcp", "rcc") else None
        if stepper is None:
            sc.Advance(c.maxSimS)
        else:
            tick = float(point.get("agent_interval_ms", tun.get("interval_ms", 5.0))) / 1000
            t = 0.0
            while True:
                t += tick
                if sc.Advance(t):
                    break
                stepper.step(sc)
        sc.Collect()
        _fill(sc, out, size, n)
    finally:
        p4i.Scenario.Teardown()


def _fill(sc: Any, out: dict[str, Any], size: int, n: int) -> None:
    rounds = []
    for i, r in enumerate(sc.results):
        comp = float(r.completion)
        nbytes = int(r.bytes)
        rounds.append(
            {
                "round": i,
                "completion_s": comp,
                "bytes": nbytes,
                "goodput_bps": 8 * nbytes / comp if comp > 0 else 0.0,
                "fct_s": [float(x) for x in r.fct],
                "timeouts": int(r.timeouts),
                "retrans": int(r.retrans),
                "rto": int(r.timeouts) > 0,
            }
        )
    out["rounds"] = rounds
    q = sc.bottleneck
    hist = {str(b): int(c) for b, c in enumerate(q.hist) if c}
    out["switch"]["ports"][BOTTLENECK_PORT] = {
        "marked": int(q.marked),
        "ect": int(q.ect),
        "ce_in": int(q.ceIn),
        "ecn_drop": 0,
        "queue_drops": int(q.drops),
        "egress": int(q.egress),
        "hist": hist,
        "not_ect": int(q.notEct),
        "peak": int(q.peak),
    }
    out["depth_series"] = _decimate(list(q.seriesT), list(q.seriesD), SERIES_POINTS)
    out["base_rtt_ms"] = float(sc.baseRtt) * 1e3 if sc.baseRtt > 0 else None
    out["sim_s"] = float(sc.Now())
    out["agent"] = {
        "flows": len(list(sc.agent.Keys())),
        "clamped_acks": sum(int(sc.agent.flows[k].clamped) for k in sc.agent.Keys()),
    }
    err = str(sc.error)
    if err:
        out["status"] = "failed"
        out["error"] = err
    else:
        out["status"] = "ok"
