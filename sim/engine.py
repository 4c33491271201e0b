"""The ns-3 model's driver: one incast Point run on the simulator, as a RunResult.

    run_point(point) -> RunResult            (experiments/SCHEMA.md)

The model (sim/cpp/scenario.h): star or leaf-spine of point-to-point links
(topology.link_gbps, topology.delay_us per link, model.wire.wire_frame_bytes
of wire time per full packet), a byte buffer per switch port
(topology.buffer_bytes), the P4 pipeline's OFF / MARK_TAIL / MARK_FRONT
decision with K in packets on the ports that face the receiver
(sim/cpp/ecn_queue.h), ns-3 TCP (Linux reno, cubic, bbr, DCTCP with Linux's
2-segment floor, and NewDCTCP, sim/cpp/tcp_newdctcp.h), persistent
connections (app.connections: per-round — a new connection per server per
round) and barrier rounds as apps/incast.py runs them.

Receiver policies (docs/algorithms.md §3) act on the ACK window field at the
receiver's NIC, as the host agent does:
- newdctcp-rx: per packet in C++ (sim/cpp/rx_agent.h), a port of
  agent/policies/newdctcp_rx.py checked against it in tests/sim;
- ictcp, rcc: the Python policies the host agent runs too (p4incast/policies/
  ictcp.py, rcc.py), stepped from here every transport.policy_tick_us of
  simulated time (default: one base RTT), with the counters the C++ data path
  keeps — shared code, not a port.
Batch scheduling (seed 003, docs/algorithms.md §4): model.batching.plan gives
each server's request offset (model.scheme.batch_schedule). The senders'
segment size is transport.mss_bytes (model/wire.py: the frame follows it).

Each process loads ns-3 and compiles the C++ once (about 30 s); run_point can
then be called any number of times (the runner's pool workers do).
"""

from __future__ import annotations

import array
import itertools
import math
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from p4incast.model import switch_budget
from p4incast.model.ecn import EcnMode
from p4incast.model.scheme import (
    BUDGET_AGENT,
    RCC_RTO_R_MS,
    App,
    Point,
    RunResult,
    Scheme,
    Transport,
    base_rtt_s,
    batch_schedule,
    model_pipe_frames,
    receiver_clears_ece,
    receiver_delayed_ack,
    rx_ack_cost_bytes,
    rx_budget_bytes,
    rx_min_segs,
)
from p4incast.model.wire import MODEL_GAP_BYTES, eth_frame_bytes
from p4incast.policies.config import POLICY_MODES, start_segs, tunables
from p4incast.policies.ictcp import FlowSample, Ictcp, IctcpParams
from p4incast.policies.rcc import Rcc, RccParams
from p4incast.policies.rxwin_h import RXWIN
from p4incast.sim import native

# How the C++ receiver (sim/cpp/rx_agent.h RxPolicy) runs each agent policy:
# the host agent's data-path modes (agent/bpf/rx_policy.h, which RxPolicy reads)
# — off, observe, newdctcp-rx per packet in C++, a window written from Python
# (ictcp, rcc), newdctcp-rx capped by the budget's share.
AGENT_CODES = POLICY_MODES
BOTTLENECK_PORT = "1"  # the receiver's port on its ToR/leaf (attached first, as on BMv2)
SERIES_POINTS = 2000  # depth_series is decimated to at most this many points
MAX_SIM_S = 120.0  # a run that needs more simulated time than this is reported failed
TCP_RETRIES2 = 15  # Linux's net.ipv4.tcp_retries2: a segment's retransmissions before giving up
NS3_MAX_RTO_S = 60.0  # ns-3's TcpSocketBase doubles the RTO up to this


def give_up_s(rto_min_ms: float) -> float:
    """The longest a sender of the model waits on one segment before its connection
    gives up: an RTO after the segment and after each of its TCP_RETRIES2
    retransmissions, from rto_min doubling, capped at NS3_MAX_RTO_S (rto_min 10 ms:
    262 s; 200 ms: 522 s). A round that
    lasts longer is stuck; one that lasts this long only waits, which costs little
    wall time (seed 003's unscheduled N = 1000: 102 s rounds in ~5 s)."""
    rto = rto_min_ms / 1000
    return sum(min(rto * 2**i, NS3_MAX_RTO_S) for i in range(TCP_RETRIES2 + 1))


def agent_tunables() -> dict[str, float]:
    """The host agent's defaults (p4incast/policies/config.py AgentConfig), so both
    engines run the same policy."""
    return {t.name: t.default for t in tunables()}


def rx_tunables(t: Transport) -> dict[str, float]:
    """agent_tunables() with what a point's transport overrides (rx_idle_ms), as
    the testbed passes the same settings to the agent's command line."""
    tun = agent_tunables()
    if t.rx_idle_ms:
        tun["idle_reset_s"] = t.rx_idle_ms / 1000
    return tun


def init_worker() -> None:
    """Load ns-3, compile the model, and run one tiny point (cppyy compiles the rest
    lazily on first use, ~10 s): call once per pool worker before timing anything."""
    native.load()
    run_point(Point(Scheme("warm-up", "front", 4, "newdctcp"), 2, app=App(16384, rounds=1)))


def check_point(point: Point) -> list[str]:
    """Problems with a point that would stop it from running (empty = fine)."""
    problems = point.problems("sim")
    if point.transport.tail_loss_probe:
        problems.append(
            "transport.tail_loss_probe: the model's senders (ns-3) have no tail-loss "
            "probe; it is a testbed (Linux) ablation"
        )
    return problems


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


def port_budget_bytes(
    t: Transport, buffer_bytes: float, k_pkts: int, pipe_pkts: int, delayed_ack: bool
) -> int:
    """The receiver's budget B on the model (`rx_budget_bytes`): the full frames a
    bottleneck port's buffer holds (frames of the transport's MSS), at most K plus
    the pipe when the port marks at K and the receiver ACKs every segment."""
    frames = buffer_bytes // eth_frame_bytes(t.mss_bytes)
    return rx_budget_bytes(t, frames, k_pkts, pipe_pkts, delayed_ack)


def budget_bytes(point: Point) -> int:
    """The receiver's budget B for an incast point: the receiver's port, its
    scheme's K, the topology's pipe (`model_pipe_frames`), its receiver's ACKs."""
    topo, t = point.topology, point.transport
    pipe = model_pipe_frames(topo, t.mss_bytes)
    k, delack = point.scheme.k, point.receiver_delayed_ack
    return port_budget_bytes(t, topo.port_buffer_bytes, k, pipe, delack)


# A written window no ACK's own window exceeds: the flow is not clamped.
LEFT_ALONE = 1 << 40


class PolicyStepper:
    """Steps p4incast/policies ictcp or rcc with the C++ data path's counters.

    Each policy keeps its own clock (ICTCP: RTT-long subslots, each flow every
    2·RTT; RCC: each flow once per RTT), so it is stepped often enough for
    that clock to bite: every `transport.policy_tick_us`, by default one base
    RTT of the model (the agent on a real host ticks every interval_ms)."""

    def __init__(
        self,
        name: str,
        link_bps: float,
        tun: Mapping[str, float],
        min_segs: int,
        rto_r_ms: float = RCC_RTO_R_MS,
        *,
        bulk: Any = None,
    ) -> None:
        """`bulk`: the loaded model (native.load()) to read what moved and write the
        windows in one call each (scenario.h ReadFlowChanges or ReadRccChanges,
        SetUserWindows); None reads every flow one by one from the agent and
        steps the full policy (what a stand-in agent offers)."""
        self.bulk = bulk
        self.name = name
        if name == "ictcp":
            cap = float(tun.get("capacity_mbps") or 0) * 1e6 / 8 or link_bps / 8
            # the agent's tunables: its datacenter-flow limit and its idle restart
            self.policy: Any = Ictcp(
                IctcpParams(
                    capacity_Bps=cap,
                    min_segs=min_segs,
                    rtt_limit_s=float(tun.get("rtt_limit_us", RXWIN.RX_RTT_LIMIT_US)) * 1e-6,
                    idle_s=float(tun.get("idle_reset_s", RXWIN.RX_IDLE_RESET_MS * 1e-3)),
                )
            )
        else:
            q = int(tun.get("queue_maxsize", 40))
            self.policy = Rcc(RccParams(queue_maxsize=q, rto_r_s=rto_r_ms / 1000))
        self.steps = 0
        self.timer_acks = 0
        # with `bulk`: ReadFlowChanges' (ictcp) or ReadRccChanges' (rcc) arrays
        # and what it last reported
        self._chg_cap = 0
        self._chg: tuple[Any, ...] = ()
        self._seen: Any = None
        if bulk is not None:
            self._seen = bulk.FlowsSeen() if name == "ictcp" else bulk.RccSeen()
            self._grow_changes(64)

    def _write(self, agent: Any, out: Mapping[int, int]) -> None:
        """Set the windows `out` on the agent (scenario.h SetUserWindows)."""
        if self.bulk is not None:
            if out:  # (an empty array is no buffer cppyy can pass)
                ks, ws = native.u64_array(out), native.u64_array(map(int, out.values()))
                self.bulk.SetUserWindows(agent, ks, ws, len(ks))
        else:
            for k, w in out.items():
                agent.SetUserWindow(k, int(w))

    def _grow_changes(self, cap: int) -> None:
        self._chg_cap = cap
        zeros = [0] * cap
        if self.name == "ictcp":  # keys, bytes, rtt, gone
            u64 = [native.u64_array(zeros) for _ in range(2)]
            self._chg = (*u64, array.array("d", zeros), array.array("i", zeros))
        else:  # keys, pkts, ce, rtt, waits, gone
            u64 = [native.u64_array(zeros) for _ in range(3)]
            i32 = [array.array("i", zeros) for _ in range(2)]
            self._chg = (*u64, array.array("d", zeros), *i32)

    def _changes(self, agent: Any) -> tuple[dict[int, FlowSample], list[int]]:
        """ICTCP's input with `bulk`: the flows that moved since the previous step
        ({key: FlowSample}, ascending keys) and those gone (scenario.h
        ReadFlowChanges); at N = 1000 a step moves a handful."""
        n = self.bulk.ReadFlowChanges(agent, self._seen, *self._chg, self._chg_cap)
        if n > self._chg_cap:  # less room than it may need (n): grow, and read again
            self._grow_changes(2 * n)
            n = self.bulk.ReadFlowChanges(agent, self._seen, *self._chg, self._chg_cap)
        keys, nbytes, rtt, gone = (c[:n].tolist() for c in self._chg)
        changed: dict[int, FlowSample] = {}
        lost: list[int] = []
        for k, b, r, g in zip(keys, nbytes, rtt, gone, strict=True):
            if g:
                lost.append(k)
            else:
                changed[k] = FlowSample(b, r)
        return changed, lost

    def _rcc_changes(self, agent: Any) -> tuple[dict[int, tuple[int, int, float, bool]], list[int]]:
        """RCC's input with `bulk`: the flows that moved since the previous step
        ({key: (pkts, ce, rtt, waits)}, ascending keys) and those gone
        (scenario.h ReadRccChanges)."""
        n = self.bulk.ReadRccChanges(agent, self._seen, *self._chg, self._chg_cap)
        if n > self._chg_cap:  # less room than it may need (n): grow, and read again
            self._grow_changes(2 * n)
            n = self.bulk.ReadRccChanges(agent, self._seen, *self._chg, self._chg_cap)
        if not n:
            return {}, []
        keys, pkts, ce, rtt, waits, gone = (c[:n].tolist() for c in self._chg)
        changed: dict[int, tuple[int, int, float, bool]] = {}
        lost: list[int] = []
        for k, p, c, r, w, g in zip(keys, pkts, ce, rtt, waits, gone, strict=True):
            if g:
                lost.append(k)
            else:
                changed[k] = (p, c, r, bool(w))
        return changed, lost

    def _live(
        self, agent: Any, flow_rtt: Callable[[int], float]
    ) -> tuple[list[int], list[int], list[int], list[int], list[float], list[bool]]:
        """(keys, pkts, ce, bytes, rtt, waits) of every flow that has sent data,
        read flow by flow (without `bulk`)."""
        flows = {int(k): agent.flows[k] for k in agent.Keys()}
        queue = self.name == "rcc" and bool(agent.ackQueueCap)  # ICTCP reads no waits
        live = [k for k, f in flows.items() if f.pkts]
        return (
            live,
            [int(flows[k].pkts) for k in live],
            [int(flows[k].ce) for k in live],
            [int(flows[k].bytes) for k in live],
            [float(flow_rtt(k)) for k in live],
            [bool(queue and agent.Waits(k)) for k in live],
        )

    def step(self, agent: Any, now: float, flow_rtt: Callable[[int], float]) -> None:
        """One step of the policy on `agent` (a C++ RxAgent) at `now`; flow_rtt(key)
        is a flow's RTT as its sender measured it (0 if unknown; with `bulk`, the
        agent's own srtt, which the scenarios set to the same)."""
        if self._seen is not None and self.name == "rcc":
            # RCC on the model: only what moved is read, visited and written
            # (Rcc.step_changes: the windows step() would write, each one
            # written when it may change; the C++ agent keeps the rest)
            changed, lost = self._rcc_changes(agent)
            out = self.policy.step_changes(now, changed, lost, bool(agent.ackQueueCap))
            self._write(agent, out)
            for k in self.policy.fired:  # Alg. 3 l.7: the flow's ACK, under its new window
                agent.TimerAck(k)
                self.timer_acks += 1
            self.steps += 1
            return
        if self._seen is not None:
            # ICTCP on the model: only what moved is read, visited and written
            # (Ictcp.step_changes: the windows step() would write, each one
            # written when it changes; the C++ agent keeps the rest)
            changed, lost = self._changes(agent)
            out = self.policy.step_changes(now, int(agent.ifaceBytes), changed, lost)
            flows = self.policy.flows
            for k in changed:
                if k not in flows:  # left alone (RTT above the limit), as below
                    out[k] = LEFT_ALONE
            self._write(agent, out)
            self.steps += 1
            return
        keys, pkts, ce, nbytes, rtt, waits = self._live(agent, flow_rtt)
        if self.name == "ictcp":
            # FlowSample(bytes, rtt): _make builds the tuple in C, not through __new__
            rows = zip(nbytes, rtt, itertools.repeat(0.0))
            samples = dict(zip(keys, map(FlowSample._make, rows), strict=True))
            out = self.policy.step(now, int(agent.ifaceBytes), samples)
            # a flow ICTCP leaves alone (RTT larger than the limit) keeps the ACK's
            # own window, as the host agent's data path never rewrites it (FL_SLOW);
            # without a written window the C++ receiver would hold it at 2 MSS
            if len(out) < len(keys):
                out = {**{k: LEFT_ALONE for k in keys if k not in out}, **out}
        else:
            counters = dict(zip(keys, zip(pkts, ce, rtt, strict=True), strict=True))
            queued = dict(zip(keys, waits, strict=True)) if agent.ackQueueCap else None
            out = self.policy.step(now, counters, waits=queued)
        self._write(agent, out)
        if self.name == "rcc":
            for k in self.policy.fired:  # Alg. 3 l.7: the flow's ACK, under its new window
                agent.TimerAck(k)
                self.timer_acks += 1
        self.steps += 1


def run_point(point: Point, *, max_sim_s: float = MAX_SIM_S) -> RunResult:
    """One Point on the simulator; never raises (a failure is a failed RunResult)."""
    t0 = time.monotonic()
    out = RunResult(point.scheme.name, point.n, point.repeat, "sim")
    out.switch = {"bottleneck_port": BOTTLENECK_PORT, "ports": {}}
    errs = check_point(point)
    if errs:
        out.error = "; ".join(errs)
    else:
        try:
            _run(point, out, max_sim_s)
        except Exception as exc:  # a run that fails must not take the sweep down
            out.status = "failed"
            out.error = f"{type(exc).__name__}: {exc}"
            out.extra["traceback"] = traceback.format_exc(limit=5)
    out.wall_s = time.monotonic() - t0
    return out


def policy_tick_s(t: Transport, rtt_s: float) -> float:
    """ICTCP's and RCC's clock on the model: transport.policy_tick_us, else one
    base RTT `rtt_s` (their papers adjust per RTT; docs/algorithms.md,
    "Alternative receiver policies")."""
    return t.policy_tick_us * 1e-6 or rtt_s


def rotation_tick_s(t: Transport) -> float:
    """The rotation's tick on the model (its stale holders and free slots):
    the host agent's own, `interval_ms` (docs/algorithms.md §3.6, "Slots held
    by flows with nothing to send"), or transport.policy_tick_us, which the
    testbed passes to the agent as its --interval-ms."""
    return t.policy_tick_us * 1e-6 or agent_tunables()["interval_ms"] / 1000


def hosts_config(c: Any, sch: Scheme, t: Transport, budget: int) -> None:
    """The scheme's switch, sender and receiver-agent settings and the hosts' TCP on a
    RunConfig `c` — one mapping for every scenario (incast here, sim/atscale.py).
    `budget`: newdctcp-budget's B in bytes (the scenario knows its bottleneck)."""
    tun = agent_tunables()
    c.ecnMode = EcnMode(sch.ecn).code
    c.k = sch.k
    c.cc = sch.cc
    c.agent = AGENT_CODES[sch.agent]
    # each policy starts a flow where the host agent does (p4incast/policies/config.py)
    c.agentInitSegs = start_segs(sch.agent, int(tun["init_segs"]))
    c.agentMinSegs = rx_min_segs(sch, t)
    c.agentMaxW = int(tun["max_w"])
    c.agentBudgetBytes = budget if sch.agent == BUDGET_AGENT else 0
    c.agentRotate = sch.rotate
    # the model's buffer counts bytes: a pure ACK due takes its frame's share (§3.6)
    c.agentAckCost = rx_ack_cost_bytes(t) if sch.rotate else 0
    c.agentTickS = rotation_tick_s(t)
    c.agentClearEce = receiver_clears_ece(sch.agent, sch.sender_ecn)
    c.agentSharePkts = int(tun["queue_maxsize"]) if sch.agent == "rcc" else 0
    ackq = sch.agent == "rcc" and t.ack_queue
    c.ackQueueBytes = int(tun["queue_maxsize"]) * t.mss_bytes if ackq else 0
    c.initCwnd = t.init_cwnd
    c.delAckCount = 2 if receiver_delayed_ack(sch, t) else 1
    c.delAckTimeoutMs = t.delack_ms
    c.synRtoMs = t.syn_rto_ms
    c.dataRetries = TCP_RETRIES2
    c.sack = t.sack
    c.advWindowSegs = t.adv_window_segs
    c.dctcpG = t.dctcp_g
    c.minCwndSegs = t.min_cwnd_segs
    c.segSize = t.mss_bytes
    c.gapBytes = MODEL_GAP_BYTES


def switch_config(c: Any, point: Point) -> None:
    """The receiver's budget held by the ToR (docs/algorithms.md §8) on RunConfig
    `c`: for a `switch_budget` scheme the same B as newdctcp-budget's on this
    port (`budget_bytes`) in whole segments of the transport's MSS; the flow
    table's FLOW_SLOTS, and BMv2's tick and the controller's default epoch (a
    flow counts from its SYN to its FIN or RST, or 134-268 s idle, as on the
    switch); B = 0: off."""
    on = point.scheme.switch_budget
    c.switchBudgetBytes = budget_bytes(point) if on else 0
    c.switchMss = point.transport.mss_bytes
    c.switchFlowSlots = switch_budget.FLOW_SLOTS
    c.switchEpochTicks = switch_budget.DEFAULT_EPOCH_TICKS
    c.switchTickS = switch_budget.TICK_SECONDS["v1model"]


def run_config(point: Point, max_sim_s: float = MAX_SIM_S) -> Any:
    """The C++ RunConfig (sim/cpp/scenario.h) of `point`. It sets every field the
    C++ has no default for, so the model's and the agent's defaults are Python's
    only; a run built by hand starts from this one and changes what it varies."""
    p4i = native.load()
    sch, topo, app = point.scheme, point.topology, point.app
    n = point.n
    size = app.bytes_per_server(n)
    c = p4i.RunConfig()
    c.n = n
    c.topo = topo.kind
    c.spines = topo.spines
    c.background = topo.background
    c.linkBps = topo.link_gbps * 1e9
    c.delayUs = topo.delay_us
    c.bufferBytes = topo.buffer_bytes
    c.sharedBufferBytes = topo.shared_buffer_bytes
    c.dtAlpha = topo.dt_alpha
    c.rtoMinMs = float(topo.rto_min_ms)
    hosts_config(c, sch, point.transport, budget_bytes(point))
    c.sizeBytes = size
    c.rounds = app.rounds
    c.jitterUs = app.jitter_us
    c.perRoundConnections = app.per_round_connections
    c.seed = point.seed
    c.run = point.repeat + 1
    # a run is called stuck only when it outlasts every round's senders giving up
    c.maxSimS = max(max_sim_s, app.rounds * give_up_s(topo.rto_min_ms))
    c.restartEachRound = point.transport.restart_each_round
    switch_config(c, point)
    offs: list[float] = []  # all at once
    if sch.batching:
        offs = list(batch_schedule(n, topo, app, point.transport).offsets)
    c.offsets = native.double_vector(offs)
    return c


def _run(point: Point, out: RunResult, max_sim_s: float) -> None:
    p4i = native.load()
    sch = point.scheme
    c = run_config(point, max_sim_s)
    sc = p4i.Scenario(c)
    try:
        sc.Setup()
        floor = point.rx_min_segs
        tun = rx_tunables(point.transport)
        user = c.agent == RXWIN.RX_POLICY_USER  # ictcp, rcc: W written from Python
        rto_r = point.transport.rcc_rto_r_ms
        stepper = PolicyStepper(sch.agent, c.linkBps, tun, floor, rto_r, bulk=p4i) if user else None
        if stepper is None:
            sc.Advance(c.maxSimS)
        else:
            rtt = base_rtt_s(point.topology, point.transport.mss_bytes)
            tick = policy_tick_s(point.transport, rtt)
            t = 0.0
            while True:
                t += tick
                if sc.Advance(t):
                    break
                stepper.step(sc.agent, sc.Now(), sc.FlowRtt)
            out.extra["policy"] = {"tick_s": tick, "steps": stepper.steps}
        sc.Collect()
        _fill(sc, out)
    finally:
        p4i.Scenario.Teardown()


def _fill(sc: Any, out: RunResult) -> None:
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
                "queue": {
                    "drops": int(r.drops),
                    "marked": int(r.marked),
                    "mean_depth": float(r.meanDepth),
                    "max_depth": int(r.maxDepth),
                    "hist": {str(b): int(c) for b, c in enumerate(r.hist) if c},
                },
            }
        )
    out.rounds = rounds
    q = sc.bottleneck
    hist = {str(b): int(c) for b, c in enumerate(q.hist) if c}
    out.switch["ports"][BOTTLENECK_PORT] = {
        "marked": int(q.marked),
        "ect": int(q.ect),
        "ce_in": int(q.ceIn),
        "ecn_drop": 0,
        "queue_drops": int(q.drops),
        "egress": int(q.egress),
        "hist": hist,
        "not_ect": int(q.notEct),
        "peak": int(q.peak),
        "peak_bytes": int(q.peakBytes),
        "mean_depth": float(q.MeanDepth()),
    }
    sb = sc.switchBudget
    if sb.On():  # the pipeline's budget counters of the receiver's port (testbed: "budget")
        out.switch["budget"] = {
            BOTTLENECK_PORT: {
                "acks": int(sb.acks),
                "rewritten": int(sb.rewritten),
                "unknown_scale": int(sb.unknownScale),
                "untracked": int(sb.untracked),
                "flow_epochs": int(sb.flowEpochs),
                "epoch_ticks": int(sb.epochTicks),
            }
        }
    out.extra["depth_series"] = _decimate(list(q.seriesT), list(q.seriesD), SERIES_POINTS)
    out.base_rtt_ms = float(sc.baseRtt) * 1e3 if sc.baseRtt > 0 else None
    out.extra["sim_s"] = float(sc.Now())
    keys = list(sc.agent.Keys())  # open flows; closed ones (per-round connections) are counted
    agent_extra: dict[str, Any] = {  # ack_queue (a dict) joins below
        "flows": len(keys) + int(sc.agent.closedFlows),
        "clamped_acks": sum(int(sc.agent.flows[k].clamped) for k in keys)
        + int(sc.agent.closedClamped),
        "ece_cleared": int(sc.agent.eceCleared),
    }
    out.extra["agent"] = agent_extra
    if sc.agent.ackQueueCap:
        a = sc.agent
        out.extra["agent"]["ack_queue"] = {
            "cap_bytes": int(a.ackQueueCap),
            "held": int(a.held),
            "released": int(a.released),
            "replaced": int(a.replaced),
            "superseded": int(a.superseded),
            "split_acks": int(a.splitAcks),
            "timer_acks": int(a.timerAcks),
            "still_held": int(a.QueueLength()),
            "max_held": int(a.maxHeld),
            "max_in_flight_bytes": int(a.maxInFlight),
        }
    err = str(sc.error)
    out.status = "failed" if err else "ok"
    out.error = err or None
