"""The ns-3 model's at-scale driver: one (scheme, offered load, repeat) point
of RCC's §6.2 fabric (sim/cpp/atscale.h) as a record.

    run_point(AtScalePoint) -> dict          (docs: experiments/papers/rcc-at-scale.yaml)

The flows come from p4incast.model.atscale.plan (the same flows for every
scheme at a seed); the TCP, ECN and receiver-agent settings are built as the
incast engine builds them (sim/engine.py: one RunConfig, the same agent codes,
the same ICTCP/RCC stepping), with one receiver agent per aggregator.
"""

from __future__ import annotations

import contextlib
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

from p4incast.model.atscale import (
    ATSCALE_SCENARIO,
    AtScalePoint,
    Fabric,
    Plan,
    check_fabric,
    check_load,
    check_traffic,
    plan,
    port_topology,
)
from p4incast.model.errors import ModelError
from p4incast.model.scheme import Point, model_pipe_frames, receiver_delayed_ack
from p4incast.model.wire import ACK_WIRE_BYTES, MSS_BYTES, wire_frame_bytes
from p4incast.sim import native
from p4incast.sim.engine import (
    AGENT_CODES,
    PolicyStepper,
    hosts_config,
    policy_tick_s,
    port_budget_bytes,
    rx_tunables,
)
from p4incast.sim.engine import check_point as check_incast_point

MAX_DRAIN_S = 5.0  # simulated seconds a point may run past its last arrival before it is cut


def base_rtt_s(f: Fabric, mss: int = MSS_BYTES) -> float:
    """Unloaded RTT between hosts on different ToRs: 8 link delays, a full frame (of
    an `mss`-byte segment) and an ACK over two host links and two uplinks."""
    per_frame = 8 * (wire_frame_bytes(mss) + ACK_WIRE_BYTES)
    ser = 2 * per_frame / (f.host_gbps * 1e9) + 2 * per_frame / (f.uplink_gbps * 1e9)
    return 8 * f.delay_us * 1e-6 + ser


def check_point(p: AtScalePoint) -> None:
    """ModelError naming the first problem with a point. The scheme and transport
    go through the incast simulator's rules on the fabric's switch port
    (`port_topology`): `check_scheme` (vocabularies, K below the port's buffer in
    full frames) and what the model cannot run (a tail-loss probe)."""
    check_fabric(p.fabric)
    check_traffic(p.traffic, p.fabric)
    check_load(p.load)
    s = p.scheme
    if s.batching:
        raise ModelError(
            f"scheme {s.name}: batching schedules incast rounds; the at-scale traffic has none"
        )
    if s.switch_budget:
        raise ModelError(
            f"scheme {s.name}: the receiver's budget in the switch is on the incast "
            "model's ToR only; the at-scale fabric's switches do not hold it"
        )
    problems = check_incast_point(Point(s, 1, 0, port_topology(p.fabric), transport=p.transport))
    if problems:
        raise ModelError(problems[0])
    if s.agent not in AGENT_CODES:
        raise ModelError(
            f"scheme {s.name}: agent {s.agent!r} is not one of {', '.join(AGENT_CODES)}"
        )


def init_worker() -> None:
    """Load ns-3 and compile the model once per process (about 30 s)."""
    native.load()


def _config(p: AtScalePoint, fl: Plan) -> Any:
    p4i = native.load()
    sch, fab, tr = p.scheme, p.fabric, p.transport
    c = p4i.AtScaleConfig()
    t = c.tcp
    t.linkBps = fab.host_gbps * 1e9
    t.delayUs = fab.delay_us
    t.bufferBytes = fab.buffer_bytes
    t.rtoMinMs = float(fab.rto_min_ms)
    # newdctcp-budget: each aggregator's ToR port, its buffer, the scheme's K and
    # the pipe of a path across the spine (the longest a flow takes)
    pipe = model_pipe_frames(replace(port_topology(fab), kind="leaf_spine"), tr.mss_bytes)
    budget = port_budget_bytes(tr, fab.buffer_bytes, sch.k, pipe, receiver_delayed_ack(sch, tr))
    hosts_config(t, sch, tr, budget)
    t.seed = p.seed
    t.run = 1
    t.seriesBinUs = 0
    t.maxSimS = max(fl.start_s) + MAX_DRAIN_S
    c.tors = fab.tors
    c.hostsPerTor = fab.hosts_per_tor
    c.uplinkBps = fab.uplink_gbps * 1e9
    c.aggregators = native.int_vector(fl.aggregators)
    c.src = native.int_vector(fl.src)
    c.dst = native.int_vector(fl.dst)
    c.start = native.double_vector(list(fl.start_s))
    c.bytes = native.double_vector([float(b) for b in fl.nbytes])
    c.isLong = native.int_vector([int(x) for x in fl.long])
    c.windowEndS = p.traffic.start_s + fl.window_s
    return c


def failed_record(p: AtScalePoint, why: str | None) -> dict[str, Any]:
    """The record of a point that did not run (why), and every record's first keys."""
    return {
        "scenario": ATSCALE_SCENARIO,
        "scheme": p.scheme.name,
        "load": p.load,
        "repeat": p.repeat,
        "seed": p.seed,
        "engine": "sim",
        "status": "failed",
        "error": why,
        "wall_s": 0.0,
    }


def problems(p: AtScalePoint) -> list[str]:
    """Every problem with a point that would stop it from running (empty = fine)."""
    try:
        check_point(p)
    except ModelError as err:
        return [str(err)]
    return []


def run_point(p: AtScalePoint) -> dict[str, Any]:
    """One point; never raises (a failure is a record with status failed)."""
    if native.available()[0]:
        native.load()  # before the clock and the memory baseline: paid once per process
    _reset_peak()
    before = _vm_mb("VmRSS")
    t0 = time.monotonic()
    rec = failed_record(p, None)
    try:
        check_point(p)
        fl = plan(p.fabric, p.traffic, p.load, p.seed)
        _run(p, fl, rec)
    except ModelError as err:
        rec["error"] = str(err)
    except Exception as exc:  # a failed point must not take the sweep down
        rec["error"] = f"{type(exc).__name__}: {exc}"
        rec["traceback"] = traceback.format_exc(limit=5)
    rec["wall_s"] = time.monotonic() - t0
    rec["point_peak_rss_mb"] = _vm_mb("VmHWM")
    rec["rss_before_mb"] = before
    return rec


def _vm_mb(field_name: str) -> float | None:
    """This process's VmRSS / VmHWM (peak) from /proc, MB; None where /proc lacks it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_peak() -> None:
    """Start VmHWM over at the current RSS (Linux: `5` to clear_refs), so that the
    peak read after a point is that point's, not the worker's lifetime's."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _run(p: AtScalePoint, fl: Plan, rec: dict[str, Any]) -> None:
    p4i = native.load()
    c = _config(p, fl)
    sc = p4i.AtScale(c)
    try:
        sc.Setup()
        steppers = []
        if c.tcp.agent == AGENT_CODES["ictcp"]:
            tun = rx_tunables(p.transport)
            steppers = [
                PolicyStepper(
                    p.scheme.agent,
                    c.tcp.linkBps,
                    tun,
                    int(c.tcp.agentMinSegs),
                    p.transport.rcc_rto_r_ms,
                    bulk=p4i,
                )
                for _ in range(sc.Aggregators())
            ]
        if not steppers:
            sc.Advance(c.tcp.maxSimS)
        else:
            tick = policy_tick_s(p.transport, base_rtt_s(p.fabric, p.transport.mss_bytes))
            t = 0.0
            while True:
                t += tick
                if sc.Advance(t):
                    break
                for i, st in enumerate(steppers):
                    st.step(sc.Agent(i), sc.Now(), sc.FlowRtt)
            rec["policy"] = {"tick_s": tick, "steps": steppers[0].steps}
        _fill(p, fl, sc, rec)
    finally:
        p4i.AtScale.Teardown()


def _fill(p: AtScalePoint, fl: Plan, sc: Any, rec: dict[str, Any]) -> None:
    fct: list[float | None] = []
    long_mbps: list[float] = []
    timeouts = 0
    end = p.traffic.start_s + fl.window_s
    for i in range(len(fl.src)):
        f = sc.flows[i]
        done = float(f.done)
        if fl.long[i]:
            upto = done if 0 <= done <= end else end
            span = upto - fl.start_s[i]
            long_mbps.append(8 * int(f.gotAtWindowEnd) / span / 1e6 if span > 0 else 0.0)
        else:
            fct.append(round((done - fl.start_s[i]) * 1e3, 6) if done >= 0 else None)
            timeouts += int(f.timeouts)
    rec.update(
        {
            "status": "ok" if not str(sc.error) else "failed",
            "error": str(sc.error) or None,
            "hosts": p.fabric.hosts,
            "aggregators": list(fl.aggregators),
            "offered_load": fl.offered_load,
            "window_s": fl.window_s,
            "short_bytes": [fl.nbytes[i] for i in fl.short],
            "fct_ms": fct,  # per short flow, in plan order; None = unfinished
            "short_timeouts": timeouts,
            "long_mbps": long_mbps,
            "drops": {
                "tor": int(sc.TorDrops()),
                "root": int(sc.RootDrops()),
                "aggregator_ports": int(sc.AggregatorPortDrops()),
            },
            "marks": {"tor": int(sc.TorMarks()), "root": int(sc.RootMarks())},
            "sim_s": float(sc.Now()),
            "base_rtt_ms": base_rtt_s(p.fabric, p.transport.mss_bytes) * 1e3,
        }
    )
