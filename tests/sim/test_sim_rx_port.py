"""The simulator's NewDCTCP-rx (sim/cpp/rx_agent.h) against the agent's Python reference.

agent/policies/ is the reference of the host agent's data path (newdctcp_rx.py
the rule, budget.py newdctcp-budget's cap, reference.py the whole path); the
simulator runs a C++ port of its per-packet rule (the Python one would be
called ~10^5 times per simulated second). One random trace of data packets
(new data, retransmissions, reordering, CE runs, sequence wraparound) and ACKs
goes through both; W after every packet and every ACK's window field must be
identical.
"""

from __future__ import annotations

import random
from functools import partial
from typing import Any, cast

import pytest

from p4incast.agent.policies.budget import BUDGET_POLICY, budget_window
from p4incast.agent.policies.newdctcp_rx import RxFlow
from p4incast.agent.policies.reference import RxReference

MSS = 1448


def _trace(rng: random.Random, isn: int, packets: int) -> list[tuple[str, int, int, bool]]:
    """("data", seq, payload, ce) and ("ack", ack, kernel_field, False) events."""
    out: list[tuple[str, int, int, bool]] = []
    nxt = (isn + 1) & 0xFFFFFFFF
    ce_run = 0
    for _ in range(packets):
        if ce_run == 0 and rng.random() < 0.08:
            ce_run = rng.randint(1, 30)
        ce = ce_run > 0
        ce_run = max(0, ce_run - 1)
        r = rng.random()
        if r < 0.05:  # retransmission of something old
            seq = (nxt - MSS * rng.randint(1, 8)) & 0xFFFFFFFF
            out.append(("data", seq, MSS, ce))
        elif r < 0.08:  # a short segment
            size = rng.randint(1, MSS)
            out.append(("data", nxt, size, ce))
            nxt = (nxt + size) & 0xFFFFFFFF
        else:
            out.append(("data", nxt, MSS, ce))
            nxt = (nxt + MSS) & 0xFFFFFFFF
        if rng.random() < 0.5:
            out.append(("ack", nxt, rng.choice([65535, 40000, 3000, 20]), False))
    return out


@pytest.mark.parametrize("ws", [0, 7, 9, 14])
@pytest.mark.parametrize("min_segs", [1, 2])
def test_port_matches_reference(p4i: Any, ws: int, min_segs: int) -> None:
    rng = random.Random(1000 * ws + min_segs)
    isn = 0xFFFFFFFF - 50 * MSS  # wraps around inside the trace
    init_segs, max_w = 10, 4 << 20
    flow = RxFlow(init_segs=init_segs, max_w=max_w, min_segs=min_segs)
    flow.peer_syn = flow.local_syn = True
    flow.peer_ws = flow.local_ws = ws
    flow.peer_mss = flow.local_mss = MSS
    flow.finish_handshake()
    flow.hi_seq = (isn + 1) & 0xFFFFFFFF
    port = p4i.RxPortProbe(init_segs, min_segs, max_w, MSS, ws, isn)
    assert int(port.f.w) == flow.w == init_segs * MSS
    windows = 0
    for i, (kind, a, b, ce) in enumerate(_trace(rng, isn, 3000)):
        if kind == "data":
            flow.on_data(a, b, ce)
            got = int(port.Data(a, b, ce))
            assert got == flow.w, f"event {i}: W {got} != reference {flow.w}"
        else:
            want = flow.ack_field(a, b, flow.w)
            got = int(port.Ack(a, b))
            assert got == want, f"event {i}: window field {got} != reference {want}"
    windows = len(flow.windows)
    assert windows > 20 and int(port.f.windows) == windows
    assert flow.marked and bool(port.f.marked)


def test_budget_port_matches_reference(p4i: Any) -> None:
    """newdctcp-budget over flows that arrive, send, are marked and leave: W after
    every event, every window field and the share match the reference."""
    rng = random.Random(7)
    budget, init_segs, max_w, min_segs, ws = 30 * MSS, 2, 4 << 20, 1, 7
    rx = RxReference(BUDGET_POLICY, init_segs, max_w, min_segs, budget=budget)
    # The C++ port keys its flows by an int; so does this test, in the reference too.
    flows = cast("dict[int, RxFlow]", rx.flows)
    port = p4i.RxBudgetProbe(init_segs, min_segs, max_w, MSS, budget)
    nxt: dict[int, int] = {}
    shares: set[int] = set()
    for step in range(6000):
        r = rng.random()
        if (r < 0.01 or not nxt) and len(nxt) < 40:  # a flow arrives
            key = rng.randrange(1 << 20)
            isn = rng.randrange(1 << 32)
            # newdctcp-budget's W starts at B (RxReference._new)
            f = RxFlow(init_segs=init_segs, max_w=max_w, min_segs=min_segs, start_w=budget)
            flows.pop(key, None)
            flows[key] = f
            f.peer_syn = f.local_syn = True
            f.peer_ws = f.local_ws = ws
            f.peer_mss = f.local_mss = MSS
            f.finish_handshake()
            f.hi_seq = (isn + 1) & 0xFFFFFFFF
            nxt[key] = f.hi_seq
            assert int(port.Open(key, ws, isn)) == f.w, f"event {step}: open"
            continue
        key = rng.choice(sorted(nxt))
        f = flows[key]
        if r < 0.015:  # the flow ends
            del flows[key]
            del nxt[key]
            port.Close(key)
        elif r < 0.6:
            ce = rng.random() < 0.2
            cap = partial(budget_window, share=rx.share(f.mss), mss=f.mss)
            f.w = cap(f.w)  # within the share as the segment arrives (RxReference)
            f.on_data(nxt[key], MSS, ce, cap)
            assert int(port.Data(key, nxt[key], MSS, ce)) == f.w, f"event {step}: W"
            nxt[key] = (nxt[key] + MSS) & 0xFFFFFFFF
        else:
            share = rx.share(f.mss)
            shares.add(share)
            want = f.ack_field(nxt[key], 65535, budget_window(f.w, share, f.mss))
            assert int(port.Ack(key, nxt[key], 65535)) == want, f"event {step}: field"
    assert len(shares) > 5  # the share moved with the flow count
    assert min(shares) == MSS  # and reached the floor
