"""The rotation's conformance scenarios (tests/agent/rotation_scenarios.py) on
the host agent's BPF data path: every frame through rx_ingress / rx_egress
under BPF_PROG_TEST_RUN, the agent's tick through agent/rotation.py's
Rescuer; the window updates it sends (forged by the data path with
bpf_clone_redirect, or by the rescue through its packet socket) are read off
lo. The simulator's receiver replays the same table
(tests/sim/test_sim_rotation.py)."""

from __future__ import annotations

import socket
import time

import pytest
from agent_labs import drain
from agent_traces import FlowTrace, L, R
from rotation_scenarios import MSS, SCENARIOS, WS, Scenario, Step
from scapy.layers.inet import TCP
from scapy.layers.l2 import Ether

from p4incast.agent.datapath import FlowKey, RxWin
from p4incast.agent.policies.budget import ROT_WAIT, rotation_slots
from p4incast.agent.rotation import Rescuer

pytestmark = pytest.mark.root

TICK_S = 0.005  # the agent's default tick (interval_ms)


class BpfRotation:
    """The scenarios' flows on the BPF data path, newdctcp-budget with rotation."""

    def __init__(self, rx: RxWin, cap: socket.socket, sc: Scenario) -> None:
        self.rx, self.cap, self.budget = rx, cap, sc.budget_segs * MSS
        self.ack_cost = sc.ack_cost
        rx.configure(
            "newdctcp-budget",
            budget_bytes=self.budget,
            min_segs=1,
            init_segs=2,
            rotate=1,
            ack_cost=sc.ack_cost,
        )
        self.flows = [FlowTrace(lport=45000 + i, l_isn=11000 * (i + 1)) for i in range(sc.flows)]
        self.port = {ft.lport: i for i, ft in enumerate(self.flows)}

    def key(self, i: int) -> FlowKey:
        return FlowKey.make(R, self.flows[i].rport, L, self.flows[i].lport)

    def egress(self, frame: bytes) -> int:
        rv, out, _ = self.rx.run(True, frame)
        assert rv == -1
        return Ether(out)[TCP].window

    def ingress(self, frame: bytes) -> None:
        rv, out, _ = self.rx.run(False, frame)
        assert rv == -1 and out == frame

    def step(self, s: Step) -> tuple[int | None, list[int]]:
        """Play one step: (the window field it sent, the flows sent a grant)."""
        ft = self.flows[s.flow]
        field = None
        if s.op == "open":
            ts = [("Timestamp", (ft.ts_now, 0))]
            syn, syn_ack, last = ft.handshake(l_opts=[("MSS", 1460), ("WScale", WS), *ts])
            self.egress(syn[1])
            self.ingress(syn_ack[1])
            field = self.egress(last[1])
            # the copy offering the initial window, ahead of the zero (§3.6)
            copies = drain(self.cap)
            assert len(copies) == 1 and Ether(copies[0])[TCP].window == 2 * MSS >> WS
            return field, []
        if s.op == "req":
            field = self.egress(ft.request(s.size)[1])
        elif s.op == "data":
            self.ingress(ft.data(ce=s.ce, size=s.size)[1])
        elif s.op == "ack":
            field = self.egress(ft.ack()[1])
        elif s.op == "tick":
            rescue = Rescuer(self.rx, "lo", self.budget, tick_s=TICK_S, ack_cost=self.ack_cost)
            try:
                rescue.step(time.monotonic_ns() + 10**9)  # a second after the last packet
            finally:
                rescue.close()
        else:
            raise AssertionError(f"unknown step {s.op}")
        grants = []
        for fr in drain(self.cap):
            t = Ether(fr)[TCP]
            assert t.window == MSS >> WS, "a grant offers one segment"
            grants.append(self.port[t.sport])
        return field, grants

    def state(self, i: int) -> int:
        r = self.rx.rot_flow(self.key(i))
        return 0 if r is None else r.state

    def h(self) -> int:
        g = self.rx.rotation()
        return rotation_slots(
            g.slots, self.budget, self.rx.budget_flows(), MSS, int(g.due), self.ack_cost
        )

    def queue(self) -> tuple[int, ...]:
        """Waiting flows, head first (the queue is read out and put back)."""
        keys = []
        while (k := self.rx.rotq_pop()) is not None:
            keys.append(k)
        for k in keys:
            self.rx.rotq_push(k)
        out = []
        for k in keys:
            r = self.rx.rot_flow(k)
            if r is not None and r.state == ROT_WAIT:
                out.append(self.port[k.as_tuple()[3]])
        return tuple(out)


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_rotation_scenario_on_the_bpf_path(
    rxwin: RxWin, lo_capture: socket.socket, sc: Scenario
) -> None:
    run = BpfRotation(rxwin, lo_capture, sc)
    drain(lo_capture)
    for n, s in enumerate(sc.steps):
        where = f"{sc.name} step {n} ({s.op} {s.flow})"
        field, grants = run.step(s)
        if s.field is not None:
            assert field == s.field, where
        assert tuple(grants) == s.grants, where
        for i, st in s.states.items():
            assert run.state(i) == st, f"{where}: flow {i}"
        if s.h is not None:
            assert run.h() == s.h, where
        if s.queue is not None:
            assert run.queue() == s.queue, where
    assert rxwin.stats()["forge_fail"] == 0
