"""The C++ model (sim/cpp) against the Python model it ports: the ECN mode codes,
the receiver's policy modes, the wire sizes and every RunConfig default equal
p4incast.model's and the agent's."""

from __future__ import annotations

from typing import Any

from p4incast.agent.config import AgentConfig
from p4incast.model.ecn import EcnMode
from p4incast.model.scheme import App, Topology, Transport
from p4incast.model.wire import MODEL_GAP_BYTES, MSS_BYTES
from p4incast.sim.engine import AGENT_CODES


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


def test_run_config_defaults_are_the_models(p4i: Any) -> None:
    c, topo, app = p4i.RunConfig(), Topology(), App()
    assert (c.topo, c.spines, c.background) == (topo.kind, topo.spines, topo.background)
    assert (c.linkBps, c.delayUs) == (topo.link_gbps * 1e9, topo.delay_us)
    assert (c.bufferBytes, c.rtoMinMs) == (topo.buffer_bytes, topo.rto_min_ms)
    assert (c.sizeBytes, c.rounds, c.jitterUs) == (app.sru_bytes, app.rounds, app.jitter_us)
    assert c.perRoundConnections == app.per_round_connections
    assert (c.segSize, c.gapBytes) == (MSS_BYTES, MODEL_GAP_BYTES)
    agent = AgentConfig()
    assert (c.agentInitSegs, c.agentMinSegs) == (agent.init_segs, agent.min_segs)
    assert c.agentMaxW == agent.max_w
    t = Transport()
    assert (c.initCwnd, c.delAckCount == 2, c.dctcpG) == (t.init_cwnd, t.delayed_ack, t.dctcp_g)
    assert c.restartEachRound == t.restart_each_round
    assert c.delAckTimeoutMs == t.delack_ms
    assert c.synRtoMs == t.syn_rto_ms
    assert (c.sharedBufferBytes, c.dtAlpha) == (topo.shared_buffer_bytes, topo.dt_alpha)
