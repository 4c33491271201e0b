"""The C++ model (sim/cpp) against the Python model it ports: the ECN mode codes,
the receiver's policy modes, and the run's settings. RunConfig
(sim/cpp/scenario.h) keeps no copy of a Python default: sim/engine.py sets
exactly the fields the C++ leaves at zero, and the RunConfig it builds for a
default Point carries p4incast.model's and the agent's defaults."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest

from p4incast.model.ecn import EcnMode
from p4incast.model.scheme import BUDGET_AGENT, App, Point, Scheme, Topology, Transport
from p4incast.model.wire import MODEL_GAP_BYTES, MSS_BYTES
from p4incast.policies.config import AgentConfig
from p4incast.sim import engine, native
from p4incast.sim.engine import AGENT_CODES

SCENARIO_H = native.CPP_DIR / "scenario.h"
ZERO = ("", "0", "false", "{}")  # value-initialised: no default of its own


def test_ecn_mode_codes_match(p4i: Any) -> None:
    assert EcnMode.OFF.code == p4i.ECN_OFF
    assert EcnMode.TAIL.code == p4i.MARK_TAIL
    assert EcnMode.FRONT.code == p4i.MARK_FRONT


def test_receiver_modes_are_the_data_paths(p4i: Any) -> None:
    """Each policy runs in the C++ receiver in the mode of the host agent's data
    path: RxPolicy takes its values from agent/bpf/rx_policy.h."""
    modes = {
        "off": p4i.RX_OFF,
        "observe": p4i.RX_OBSERVE,
        "newdctcp-rx": p4i.RX_NEWDCTCP,
        "ictcp": p4i.RX_USER,
        "rcc": p4i.RX_USER,
        "newdctcp-budget": p4i.RX_BUDGET,
    }
    assert modes == AGENT_CODES
    assert len(set(modes.values())) == 5


def run_config_fields() -> dict[str, str]:
    """RunConfig's fields in scenario.h, each with its initializer ("" if none)."""
    struct = re.search(r"\nstruct RunConfig\s*\{(.*?)\n\};", SCENARIO_H.read_text(), re.S)
    assert struct, f"{SCENARIO_H}: no struct RunConfig"
    out: dict[str, str] = {}
    for decl in re.sub(r"//[^\n]*", "", struct.group(1)).split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        m = re.fullmatch(r"[\w:<>, ]+? (\w+)(?: ?= ?(.+)| ?(\{\}))?", decl)
        assert m, f"{SCENARIO_H}: RunConfig: cannot read `{decl}`"
        out[m.group(1)] = m.group(2) or m.group(3) or ""
    return out


class _Recorder:
    """Stands in for p4i.RunConfig: records what the engine sets."""

    set: dict[str, object]

    def __init__(self) -> None:
        object.__setattr__(self, "set", {})

    def __setattr__(self, name: str, value: object) -> None:
        self.set[name] = value


POINTS = {
    "default": Point(Scheme("default"), 1),
    "budget": Point(Scheme("budget", "front", 8, "reno", BUDGET_AGENT), 16),
    "rcc": Point(Scheme("rcc", agent="rcc"), 16),
    "batching": Point(Scheme("batched", "tail", 20, "dctcp", batching=True), 32),
}


@pytest.mark.parametrize("name", POINTS)
def test_engine_sets_exactly_the_fields_without_a_cpp_default(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field the C++ initialises to zero is Python's to set, for every scheme; a
    field with a C++ default is the model's own and the engine leaves it (a
    default here and a value set from Python would be two sources)."""
    fields = run_config_fields()
    zero = {f for f, init in fields.items() if init in ZERO}
    own = set(fields) - zero
    assert own == {"rcvBufBytes", "mslS", "seriesBinUs", "startS", "scheduler"}
    monkeypatch.setattr(native, "load", lambda: SimpleNamespace(RunConfig=_Recorder))
    monkeypatch.setattr(native, "double_vector", list)
    c = engine.run_config(POINTS[name])
    assert set(c.set) == zero, {"not set": zero - set(c.set), "own": set(c.set) & own}


def test_run_config_of_a_default_point_carries_the_python_defaults(p4i: Any) -> None:
    c = engine.run_config(Point(Scheme("default"), 1))
    topo, app, t, agent = Topology(), App(), Transport(), AgentConfig()
    assert (c.n, c.seed, c.run) == (1, 1, 1)
    assert (c.topo, c.spines, c.background) == (topo.kind, topo.spines, topo.background)
    assert (c.linkBps, c.delayUs) == (topo.link_gbps * 1e9, topo.delay_us)
    assert (c.bufferBytes, c.rtoMinMs) == (topo.buffer_bytes, topo.rto_min_ms)
    assert (c.sharedBufferBytes, c.dtAlpha) == (topo.shared_buffer_bytes, topo.dt_alpha)
    assert (c.sizeBytes, c.rounds, c.jitterUs) == (app.sru_bytes, app.rounds, app.jitter_us)
    assert c.perRoundConnections == app.per_round_connections
    assert len(c.offsets) == 0
    assert (c.segSize, c.gapBytes) == (MSS_BYTES, MODEL_GAP_BYTES)
    assert (c.ecnMode, c.k, c.cc) == (EcnMode.OFF.code, 0, Scheme("default").cc)
    assert c.agent == AGENT_CODES["off"] == p4i.RX_OFF
    assert (c.agentInitSegs, c.agentMinSegs) == (agent.init_segs, agent.min_segs)
    assert (c.agentMaxW, c.agentBudgetBytes, c.agentSharePkts) == (agent.max_w, 0, 0)
    assert (c.agentClearEce, c.ackQueueBytes) == (False, 0)
    assert (c.initCwnd, c.delAckCount == 2, c.dctcpG) == (t.init_cwnd, t.delayed_ack, t.dctcp_g)
    assert c.restartEachRound == t.restart_each_round
    assert c.minCwndSegs == t.min_cwnd_segs
    assert (c.sack, c.advWindowSegs) == (t.sack, t.adv_window_segs)
    assert (c.delAckTimeoutMs, c.synRtoMs) == (t.delack_ms, t.syn_rto_ms)
    assert c.maxSimS >= engine.MAX_SIM_S
