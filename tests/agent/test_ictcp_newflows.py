"""The data path tells userspace of each new flow at once (p4i_newflows), so
ICTCP and RCC control a flow from the agent's next tick, not from a table scan
up to 100 ms later (issue 36). Real BPF under BPF_PROG_TEST_RUN."""

from __future__ import annotations

import pytest
from agent_traces import FlowTrace, L, R, bulk

from p4incast.agent.datapath import FlowKey, RxWin


@pytest.mark.parametrize("policy", ["ictcp", "rcc"])
def test_a_new_flow_reaches_userspace_once(rxwin: RxWin, policy: str) -> None:
    rxwin.configure(policy)
    ring = rxwin.new_flows()
    try:
        assert ring.take() == []
        ft = FlowTrace()
        for e, fr in ft.handshake():
            rxwin.run(e, fr)
        key = FlowKey.make(R, 5001, L, 40000)
        got = ring.take()
        assert [bytes(k) for k in got] == [bytes(key)]
        for e, fr in bulk(ft, 10):  # the same flow's data: no second notice
            rxwin.run(e, fr)
        assert ring.take() == []
    finally:
        ring.close()


def test_policies_in_the_data_path_send_no_notices(rxwin: RxWin) -> None:
    rxwin.configure("newdctcp-rx")
    ring = rxwin.new_flows()
    try:
        ft = FlowTrace()
        for e, fr in ft.handshake() + bulk(ft, 5):
            rxwin.run(e, fr)
        assert rxwin.flow(FlowKey.make(R, 5001, L, 40000)) is not None
        assert ring.take() == []
    finally:
        ring.close()
