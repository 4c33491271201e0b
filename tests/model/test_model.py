"""The domain model: the ECN codes against the P4 source, one parser for modes,
the K and buffer rules every layer uses, Point and RunResult round trips."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from p4incast.model import ModelError
from p4incast.model.ecn import EcnMode
from p4incast.model.scheme import (
    AGENT_POLICIES,
    RX_CUT_AGENTS,
    App,
    Point,
    RunResult,
    Scheme,
    Topology,
    Transport,
    check_k,
    receiver_clears_ece,
    receiver_delayed_ack,
)
from p4incast.model.wire import ETH_FRAME_BYTES, IP_MTU_BYTES, MSS_BYTES, WIRE_FRAME_BYTES
from p4incast.policies.config import AgentConfig, ConfigError

DEFINES = Path(__file__).resolve().parents[2] / "p4src/shared/defines.p4"


def test_ecn_codes_are_the_pipelines() -> None:
    text = DEFINES.read_text()
    found = dict(re.findall(r"const ecn_mode_t ECN_MODE_(\w+)\s*=\s*(\d+);", text))
    assert found == {"OFF": "0", "MARK_TAIL": "1", "MARK_FRONT": "2"}
    names = {"OFF": EcnMode.OFF, "MARK_TAIL": EcnMode.TAIL, "MARK_FRONT": EcnMode.FRONT}
    for k, v in found.items():
        assert names[k].code == int(v)


@pytest.mark.parametrize("raw", [False, "off", EcnMode.OFF])
def test_bare_off_is_off(raw: object) -> None:
    assert EcnMode.parse(raw) is EcnMode.OFF


@pytest.mark.parametrize("raw", [True, "Off", "middle", 1, None])
def test_other_modes_refused_naming_the_choices(raw: object) -> None:
    with pytest.raises(ModelError, match="port 2: .* is not one of off, tail, front"):
        EcnMode.parse(raw, "port 2")


def test_wire_sizes_add_up() -> None:
    assert IP_MTU_BYTES - 20 - 20 - 12 == MSS_BYTES
    assert ETH_FRAME_BYTES == IP_MTU_BYTES + 14
    assert WIRE_FRAME_BYTES == ETH_FRAME_BYTES + 4 + 8 + 12


def test_k_rule_is_below_the_queue() -> None:
    check_k(63, 64, "x")
    for k in (0, 64, 65):
        with pytest.raises(ModelError, match="x: k"):
            check_k(k, 64, "x")


def test_point_problems_lists_each() -> None:
    p = Point(Scheme("s", "sideways", 3, "vegas"), 0, topology=Topology(buffer_bytes=100))
    problems = p.problems()
    assert len(problems) == 3
    assert problems[0].startswith("n must be")
    assert "buffer_bytes" in problems[1] and "sideways" in problems[2]
    with pytest.raises(ModelError, match="n must be"):
        p.check()


def test_k_is_checked_against_the_queue_of_the_engine_that_runs_it() -> None:
    # the simulator's buffer of 20 full 1514-byte frames (+ 1000 B: not a 21st) is a
    # queue of 20 packets: an arriving packet sees at most 19 waiting, so K = 20
    # would never mark there; BMv2's queue is queue_pkts packets
    topo = Topology(queue_pkts=200, buffer_bytes=20 * 1514 + 1000)
    point = Point(Scheme("s", "tail", 20, "dctcp"), 4, topology=topo)
    Point(Scheme("s", "tail", 19, "dctcp"), 4, topology=topo).check("sim")
    point.check("bmv2")
    with pytest.raises(ModelError, match=r"sim: .* = 20 full frames\): k=20"):
        point.check("sim")
    with pytest.raises(ModelError, match="sim: "):
        point.check()  # no engine chosen yet: both queues
    small = Point(Scheme("s", "tail", 20, "dctcp"), 4, topology=Topology(queue_pkts=16))
    small.check("sim")
    with pytest.raises(ModelError, match=r"bmv2: topology.queue_pkts\): k=20"):
        small.check("bmv2")


def test_bytes_per_server() -> None:
    assert App(65536).bytes_per_server(8) == 65536
    assert App(65536, mode="total").bytes_per_server(8) == 8192


def test_run_result_record_round_trip() -> None:
    r = RunResult("s", 4, 1, "sim", "ok", None, 1.5, 0.1, [{"round": 0}], {"ports": {}})
    r.extra["sim_s"] = 2.0
    rec = r.record()
    assert rec["sim_s"] == 2.0 and rec["scheme"] == "s" and "extra" not in rec
    assert RunResult.from_record(rec) == r


def test_shared_buffer_port_share_is_the_dt_fixed_point() -> None:
    """One port queueing under Choudhury-Hahne DT: Q = a (B - Q), so Q = a/(1+a) B."""
    topo = Topology(shared_buffer_bytes=4_000_000, dt_alpha=1.0)
    assert topo.port_buffer_bytes == 2_000_000
    assert Topology(shared_buffer_bytes=3_000_000, dt_alpha=0.5).port_buffer_bytes == 1_000_000
    assert Topology(buffer_bytes=65536).port_buffer_bytes == 65536


def test_receiver_rule_is_the_only_cut_unless_sender_ecn() -> None:
    """docs/algorithms.md §3.7: every window policy clears ECE; observe and off
    never do; sender_ecn keeps the echo and needs a policy that would clear it."""
    assert set(RX_CUT_AGENTS) == set(AGENT_POLICIES) - {"off", "observe"}
    for agent in AGENT_POLICIES:
        assert receiver_clears_ece(agent, False) == (agent in RX_CUT_AGENTS)
        assert not receiver_clears_ece(agent, True)
    Point(Scheme("s", "front", 12, "reno", "rcc", sender_ecn=True), 4).check()
    with pytest.raises(ModelError, match="sender_ecn needs a receiver policy"):
        Point(Scheme("s", "front", 12, "reno", "observe", sender_ecn=True), 4).check()
    with pytest.raises(ConfigError, match="never clears ECE"):
        AgentConfig(iface="x", policy="observe", sender_ecn=1).validated()


def test_batched_points_run_the_closed_forms_preconditions() -> None:
    """Seed 003 [§III, §VI]: slow start from one packet, every segment ACKed, no
    persistent connections — a batched point runs so whatever the experiment says;
    the other schemes of the same experiment keep its transport and app."""
    t = Transport(init_cwnd=10, delayed_ack=True, dctcp_g=0.15)
    app = App(32768, rounds=7, connections="persistent")
    batched = Point(Scheme("b", batching=True), 8, app=app, transport=t)
    assert batched.transport.init_cwnd == 1 and not batched.transport.delayed_ack
    assert batched.app.per_round_connections and batched.app.rounds == 7
    assert batched.transport.dctcp_g == 0.15 and not batched.receiver_delayed_ack
    plain = Point(Scheme("d"), 8, app=app, transport=t)
    assert plain.transport == t and plain.app == app


def test_rcc_receiver_never_delays_acks() -> None:
    """RCC's receiver disables delayed ACK [RCC §4] whatever the transport says."""
    t = Transport(delayed_ack=True)
    assert not receiver_delayed_ack(Scheme("r", "tail", 12, "reno", "rcc"), t)
    assert receiver_delayed_ack(Scheme("r", "tail", 12, "reno", "newdctcp-rx"), t)
    assert receiver_delayed_ack(Scheme("r", "off", 0, "reno", "ictcp"), t)
