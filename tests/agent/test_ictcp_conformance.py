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
    ic = Ictcp(
        IctcpParams(
            capacity_Bps=sc.capacity_Bps, mss=MSS, min_segs=sc.min_segs, idle_s=sc.idle_ms / 1000
        )
    )
    for i, tk in enumerate(ticks(sc)):
        samples = {k: FlowSample(b, rtt) for k, (b, rtt) in tk.flows.items()}
        out = ic.step(tk.now_s, tk.iface_bytes, samples)
        got = {k: w / MSS for k, w in out.items()}
        want = {k: w / MSS for k, w in tk.expect_bytes.items()}
        assert got == want, f"{sc.name}: step {i} (t = {tk.now_s * 1e3:g} ms), windows in MSS"
    return ic


def test_slow_start_doubles_after_two_rtts_in_second_subslots_only() -> None:
    """§IV-A/B/C: increases only in a second subslot, more than 2·RTT apart;
    slow start doubles (lone_flow: 2, 4, 8, 16, 32 at t = 3, 7, 11, 15)."""
    ic = replay(BY_NAME["lone_flow"])
    assert not ic.flows[1].slow_start


def test_quota_that_cannot_pay_the_doubling_ends_slow_start_then_plus_one_mss() -> None:
    """§IV-C: no increase when the quota cannot pay for doubling (t = 19 stays 32),
    slow start ends; later increases are + 1 MSS (33 at t = 21, 34 at t = 25)."""
    sc = BY_NAME["lone_flow"]
    assert [s.expect[1] for s in sc.steps[18:]] == [32, 32, 32, 33, 33, 33, 33, 34]
    replay(sc)


def test_hold_at_a_control_time_ends_slow_start_without_a_decrease() -> None:
    """§IV-C: γ1 < d <= γ2 keeps rwnd and ends slow start: the next increase is
    + 1 MSS (4 -> 5), not a doubling."""
    ic = replay(BY_NAME["hold_exits_slow_start"])
    assert not ic.flows[1].slow_start


def test_hold_at_exactly_two_rtts_is_not_a_control_time() -> None:
    """§IV-B: a control time is *more* than 2·RTT after a change; a d > γ1 at
    exactly 2·RTT decides nothing and slow start goes on (4 -> 8)."""
    replay(BY_NAME["hold_between_control_times"])


def test_decrease_after_three_rtts_over_gamma2_in_a_first_subslot_too() -> None:
    """§IV-C: d > γ2 on 3 RTTs in a row (counted per RTT, not per 2·RTT) -> − 1 MSS,
    in either subslot (t = 10 opens a first subslot); an RTT with d <= γ2 (t = 12)
    resets the count, so t = 13 does not decrease."""
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


def test_flows_with_min_rtt_larger_than_2ms_are_not_controlled() -> None:
    """§IV-D: a flow whose RTT is larger than 2 ms is left alone (2 ms exactly is
    controlled); tested on the smallest RTT seen."""
    replay(BY_NAME["rtt_limit"])


def test_control_time_is_more_than_two_rtts() -> None:
    """§IV-B "larger than 2·RTT": 2 ms after the start is no control time for a
    1 ms RTT, and is one for a 0.99 ms RTT."""
    replay(BY_NAME["control_time_boundary"])


@pytest.mark.parametrize("name", ["quota_equal_to_the_increase", "quota_above_the_increase"])
def test_increases_stay_less_than_the_quota(name: str) -> None:
    """§IV-A: a second subslot's increases must be less than BW_A: a doubling that
    costs exactly BW_A is refused (and ends slow start, §IV-C); one that costs a
    little less is paid."""
    replay(BY_NAME[name])


def test_subslot_length_is_weighted_by_all_traffic() -> None:
    """§IV-B: T = Σ w_i·RTT_i, w_i the normalized traffic volume over the last T of
    every connection, a 4 ms flow ICTCP leaves alone included: T = 3.25 ms, then
    3 ms, so flow 1's second doubling waits for t = 8."""
    replay(BY_NAME["t_weighted_by_all_traffic"])


def test_prolonged_idle_restarts_slow_start() -> None:
    """§IV-C: a prolonged idle connection starts again in slow start at 2 MSS; its
    2·RTT clock starts again at its first data."""
    ic = replay(BY_NAME["idle_restart"])
    assert ic.flows[1].restarts == 1 and ic.flows[1].slow_start


def test_short_idle_sends_no_acks_and_changes_nothing() -> None:
    """§IV-B: no data, no ACK, no adjustment: an idle shorter than the threshold
    neither counts RTTs over γ2 nor ends slow start (8 -> 16)."""
    ic = replay(BY_NAME["idle_short_keeps_state"])
    assert ic.flows[1].restarts == 0


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
        "control_time_boundary",
        "quota_equal_to_the_increase",
        "quota_above_the_increase",
        "t_weighted_by_all_traffic",
        "idle_restart",
        "idle_short_keeps_state",
    }
    assert {sc.name for sc in SCENARIOS} == named | {sc.name for sc in ACK_ORDER}
