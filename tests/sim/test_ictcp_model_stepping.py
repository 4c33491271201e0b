"""ICTCP through the simulator's stepping: sim/engine.py's PolicyStepper('ictcp').

The same scripted scenarios as tests/agent/test_ictcp_conformance.py
(tests/agent/ictcp_scenarios.py), fed to PolicyStepper.step the way the C++
receiver feeds it, and the same hand-worked windows expected from what the
stepper writes back. Needs no ns-3: the stand-in below only carries the
counters PolicyStepper.step reads (Keys(), flows[k].pkts/.bytes/.ce,
ifaceBytes) and records SetUserWindow; the policy is the real one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agent"))
from ictcp_scenarios import MSS, SCENARIOS, Scenario, ticks

from p4incast.sim.engine import LEFT_ALONE, PolicyStepper


class CounterAgent:
    """Stand-in for the C++ RxAgent: counters in, windows out, no data path."""

    def __init__(self) -> None:
        self.flows: dict[int, SimpleNamespace] = {}
        self.ifaceBytes = 0
        self.written: dict[int, int] = {}

    def Keys(self) -> list[int]:  # the C++ name
        return list(self.flows)

    def SetUserWindow(self, key: int, w: int) -> None:
        self.written[key] = w

    def load(self, iface: int, flows: dict[int, tuple[int, float]]) -> None:
        """The counters of one step; a flow's packet count includes its SYN, so a
        flow is live (pkts > 0) from its first step, as in the C++ table."""
        self.ifaceBytes = iface
        self.flows = {
            k: SimpleNamespace(pkts=1 + b // MSS, bytes=b, ce=0) for k, (b, _) in flows.items()
        }
        self.written = {}


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda sc: sc.name)
def test_policy_stepper_writes_the_papers_windows(sc: Scenario) -> None:
    # link_bps = 8·C and no capacity_mbps tunable: the stepper's C is link_bps / 8.
    stepper = PolicyStepper(
        "ictcp", 8 * sc.capacity_Bps, {"idle_reset_s": sc.idle_ms / 1000}, sc.min_segs
    )
    assert stepper.policy.p.mss == MSS and stepper.policy.p.capacity_Bps == sc.capacity_Bps
    assert stepper.policy.p.idle_s == sc.idle_ms / 1000
    agent = CounterAgent()
    for i, tk in enumerate(ticks(sc)):
        agent.load(tk.iface_bytes, tk.flows)
        stepper.step(agent, tk.now_s, lambda k, tk=tk: tk.flows[k][1])
        got = {k: w / MSS for k, w in agent.written.items() if w != LEFT_ALONE}
        want = {k: w / MSS for k, w in tk.expect_bytes.items()}
        # every other flow is left alone, as the agent's data path leaves it (§IV-D)
        alone = {k for k, w in agent.written.items() if w == LEFT_ALONE}
        assert alone == set(tk.flows) - set(tk.expect_bytes), f"{sc.name}: step {i}"
        assert got == want, f"{sc.name}: step {i} (t = {tk.now_s * 1e3:g} ms), windows in MSS"
    assert stepper.steps == len(sc.steps)
