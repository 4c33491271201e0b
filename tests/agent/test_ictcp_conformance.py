"""ICTCP's receiver rule as the paper states it (Wu et al., ToN 2013, §IV).

Scripted counters drive `Ictcp.step` directly; every window it returns is
compared with the window worked out by hand from the paper's rules
(tests/agent/ictcp_scenarios.py, arithmetic in its comments). The same table
runs through the simulator's stepping in tests/sim/test_ictcp_model_stepping.py.
"""

from __future__ import annotations

import pytest
from ictcp_scenarios import ACK_ORDER, BY_NAME, MSS, SCENARIOS, Scenario, ticks

from p4incast.policies.ictcp import FlowSample, Ictcp, IctcpParams


def replay(sc: Scenario) -> Ictcp:
    """Run the scenario on a fresh policy; assert every step's windows."""
    ic = Ictcp(IctcpParams(capacity_Bps=sc.capacity_Bps, mss=MSS, min_segs=sc.min_segs))
    for i, tk in enumerate(ticks(sc)):
        samples = {k: FlowSample(b, rtt) for k, (b, rtt) in tk.flows.items()}
        out = ic.step(tk.now_s, tk.iface_bytes, samples)
        got = {k: w / MSS for k, w in out.items()}
        want = {k: w / MSS for k, w in tk.expect_bytes.items()}
        assert got == want, f"{sc.name}: step {i} (t = {tk.now_s * 1e3:g} ms), windows in MSS"
    return ic


def test_slow_start_doubles_every_two_rtts_in_second_subslots_only() -> None:
    """§IV-A/B/C: increases only in a second subslot, at least 2·RTT apart;
    slow start doubles (lone_flow t = 0..10: 2, 4, 8, 16, 32 at t = 3, 5, 7, 9)."""
    ic = replay(BY_NAME["lone_flow"])
    assert not ic.flows[1].slow_start


def test_quota_that_cannot_pay_the_doubling_ends_slow_start_then_plus_one_mss() -> None:
    """§IV-C: no increase when the quota cannot pay for doubling (t = 11 stays 32),
    slow start ends; later increases are + 1 MSS (33 at t = 13, 34 at t = 15)."""
    sc = BY_NAME["lone_flow"]
    assert [s.expect[1] for s in sc.steps[10:]] == [32, 32, 32, 33, 33, 34]
    replay(sc)


def test_hold_at_a_control_time_ends_slow_start_without_a_decrease() -> None:
    """§IV-C: γ1 < d <= γ2 keeps rwnd and ends slow start: the next increase is
    + 1 MSS (4 -> 5), not a doubling."""
    ic = replay(BY_NAME["hold_exits_slow_start"])
    assert not ic.flows[1].slow_start


def test_hold_in_the_rtt_after_a_change_is_not_a_control_time() -> None:
    """§IV-B: within 2·RTT of a change d still measures the old window; slow start
    goes on (4 -> 8)."""
    replay(BY_NAME["hold_between_control_times"])


def test_decrease_after_three_rtts_over_gamma2_in_a_first_subslot_too() -> None:
    """§IV-C: d > γ2 on 3 RTTs in a row (counted per RTT, not per 2·RTT) -> − 1 MSS,
    in either subslot (t = 8 and t = 14 open first subslots); an RTT with d <= γ2
    (t = 11) resets the count, so t = 12 does not decrease."""
    replay(BY_NAME["decrease_per_rtt"])


@pytest.mark.parametrize("name", ["floor_2_mss", "floor_1_mss"])
def test_window_floor(name: str) -> None:
    """§IV-C: rwnd >= 2 MSS; min_segs = 1 (the paper's Fig. 10) floors at 1 MSS."""
    replay(BY_NAME[name])


@pytest.mark.parametrize("sc", ACK_ORDER, ids=lambda sc: sc.name)
def test_quota_is_taken_in_ack_order(sc: Scenario) -> None:
    """§IV-A: the flow whose control time came first takes the quota first, whatever
    the order of the flows in the dicts; on a tie the key decides."""
    replay(sc)


def test_fairness_cut_once_per_slot_when_bw_a_is_low() -> None:
    """§IV-D: BW_A < 0.2·C: flows above the mean rwnd lose 1 MSS, once per slot."""
    replay(BY_NAME["fairness_once_per_slot"])


def test_flows_with_min_rtt_of_2ms_or_more_are_not_controlled() -> None:
    """§IV: only flows with RTT < 2 ms; tested on the smallest RTT seen."""
    replay(BY_NAME["rtt_limit"])


def test_every_scenario_has_a_test() -> None:
    """The sim test replays SCENARIOS; make sure each one is also checked here."""
    named = {
        "lone_flow",
        "hold_exits_slow_start",
        "hold_between_control_times",
        "decrease_per_rtt",
        "floor_2_mss",
        "floor_1_mss",
        "fairness_once_per_slot",
        "rtt_limit",
    }
    assert {sc.name for sc in SCENARIOS} == named | {sc.name for sc in ACK_ORDER}
