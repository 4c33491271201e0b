"""ICTCP conformance scenarios: scripted counters and the windows the paper's rules give.

One table, replayed on the policy itself (tests/agent/test_ictcp_conformance.py)
and through the simulator's stepping (tests/sim/test_ictcp_model_stepping.py).
Every expected window below is worked out by hand from the rules of Wu et al.,
ICTCP, ToN 2013 §IV as docs/algorithms.md ("ICTCP") records them — never read
back from the code. The arithmetic is in the comments.

Conventions, unless a scenario says otherwise:
- MSS = 1448 B (model.wire.MSS_BYTES, the policy's default), windows in MSS.
- Every flow's RTT is 1 ms, so 1 MSS per RTT is 1448 B / 1 ms = 1.448e6 B/s,
  rwnd/RTT of a w-MSS window is w·1.448e6 B/s, and T (the RTT-weighted mean of
  equal RTTs) is 1 ms.
- C = 100e6 B/s: α·C = 90e6 B/s, 0.2·C = 20e6 B/s.
- A step at t (ms) reports each flow's bytes received since the previous step
  (`got`, in MSS) and other interface traffic (`other`, bytes); the interface
  counter is the running sum of both.
- Subslots: the first call opens a first subslot at t = 0; with T = 1 ms and a
  step every 1 ms, first subslots are [0,1), [2,3), ... The step at an odd t
  closes a first subslot: BW_T = interface bytes over [t−1, t] / 1 ms,
  BW_A = α·C − BW_T is the quota of the second subslot [t, t+1). The step at
  an even t opens a first subslot again.
- A flow takes one throughput sample per RTT (b_s = MSS received over the
  last 1 ms, in MSS/RTT). Rates in comments are in MSS/RTT unless in B/s.
- A flow's control time: at least 2·RTT since its start or last window change.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4incast.model.wire import MSS_BYTES

MSS = MSS_BYTES
C_BPS = 100e6  # C, bytes/s


@dataclass(frozen=True)
class Step:
    t_ms: float
    got: dict[int, float]  # flow -> MSS received since the previous step (flows present now)
    expect: dict[int, int]  # flow -> rwnd in MSS returned by this step (controlled flows only)
    other: int = 0  # other bytes on the interface since the previous step
    rtt_ms: dict[int, float] = field(default_factory=dict)  # per-step RTT; default 1 ms


@dataclass(frozen=True)
class Scenario:
    name: str
    steps: tuple[Step, ...]
    capacity_Bps: float = C_BPS
    min_segs: int = 2


@dataclass(frozen=True)
class Tick:
    """One step as the callers see it: absolute time, cumulative counters."""

    now_s: float
    iface_bytes: int
    flows: dict[int, tuple[int, float]]  # flow -> (cumulative bytes, RTT s)
    expect_bytes: dict[int, int]


def ticks(sc: Scenario) -> list[Tick]:
    """The scenario as cumulative counters, in the order the flows appear in `got`."""
    cum: dict[int, int] = {}
    iface = 0
    out = []
    for s in sc.steps:
        for k, segs in s.got.items():
            b = round(segs * MSS)
            cum[k] = cum.get(k, 0) + b
            iface += b
        iface += s.other
        flows = {k: (cum[k], s.rtt_ms.get(k, 1.0) / 1000) for k in s.got}
        out.append(Tick(s.t_ms / 1000, iface, flows, {k: w * MSS for k, w in s.expect.items()}))
    return out


S = Step

# 1. Slow start doubles every 2·RTT, in second subslots only; the quota ends it;
#    then + 1 MSS per 2·RTT (congestion avoidance). One flow using its window.
LONE_FLOW = Scenario(
    "lone_flow",
    (
        S(0, {1: 0}, {1: 2}),  # starts at 2 MSS
        # b_s = 2, b_m = max(2, 0.75·0 + 0.25·2) = 2, b_e = max(2, 2/1) = 2, d = 0;
        # 1 ms since the start: not a control time
        S(1, {1: 2}, {1: 2}),
        S(2, {1: 2}, {1: 2}),  # d = 0, control time, but a first subslot: no increase
        # d = 0, second subslot; BW_A = 90e6 − 2·1448/1ms = 87.104e6 B/s pays the
        # doubling, 2 MSS/RTT = 2.896e6 B/s: rwnd 2 -> 4
        S(3, {1: 2}, {1: 4}),
        S(4, {1: 4}, {1: 4}),  # d = 0, 1 ms since the change
        S(5, {1: 4}, {1: 8}),  # BW_A = 90e6 − 5.792e6 = 84.208e6 >= 5.792e6: 4 -> 8
        S(6, {1: 8}, {1: 8}),
        S(7, {1: 8}, {1: 16}),  # BW_A = 90e6 − 11.584e6 = 78.416e6 >= 11.584e6
        S(8, {1: 16}, {1: 16}),
        S(9, {1: 16}, {1: 32}),  # BW_A = 90e6 − 23.168e6 = 66.832e6 >= 23.168e6
        S(10, {1: 32}, {1: 32}),
        # d = 0, control time, second subslot: BW_A = 90e6 − 32·1.448e6 = 43.664e6
        # < doubling 32 MSS/RTT = 46.336e6: no increase, slow start ends
        S(11, {1: 32}, {1: 32}),
        S(12, {1: 32}, {1: 32}),  # still due, but a first subslot
        # congestion avoidance: + 1 MSS, costs 1.448e6 <= BW_A = 43.664e6
        S(13, {1: 32}, {1: 33}),
        S(14, {1: 33}, {1: 33}),
        S(15, {1: 33}, {1: 34}),  # BW_A = 90e6 − 33·1.448e6 = 42.216e6 >= 1.448e6
    ),
)

# 2. A hold (γ1 < d <= γ2) at a control time ends slow start without a decrease.
HOLD_EXITS_SLOW_START = Scenario(
    "hold_exits_slow_start",
    (
        S(0, {1: 0}, {1: 2}),
        S(1, {1: 2}, {1: 2}),
        S(2, {1: 2}, {1: 2}),
        S(3, {1: 2}, {1: 4}),  # doubling, as in lone_flow
        # b_s = 2.5, b_m = max(2.5, 0.75·2 + 0.25·2.5 = 2.125) = 2.5, b_e = max(2.5, 4) = 4,
        # d = 1.5/4 = 0.375 (<= γ2: no count); 1 ms since the change: not a control time
        S(4, {1: 2.5}, {1: 4}),
        # b_m = max(2.5, 2.5) = 2.5, d = 0.375 > γ1 = 0.1 and > MSS/rwnd = 1/4:
        # hold at a control time -> slow start ends, rwnd kept
        S(5, {1: 2.5}, {1: 4}),
        # b_s = 4, b_m = max(4, 0.75·2.5 + 1 = 2.875) = 4, d = 0; first subslot
        S(6, {1: 4}, {1: 4}),
        S(7, {1: 4}, {1: 5}),  # d = 0, second subslot: + 1 MSS (not doubling to 8)
        S(8, {1: 5}, {1: 5}),
    ),
)

# 2b. The same d = 0.375 in the RTT right after a change, not a control time:
#     slow start goes on (reading of §IV-B: d then still measures the old window).
HOLD_BETWEEN_CONTROL_TIMES = Scenario(
    "hold_between_control_times",
    (
        S(0, {1: 0}, {1: 2}),
        S(1, {1: 2}, {1: 2}),
        S(2, {1: 2}, {1: 2}),
        S(3, {1: 2}, {1: 4}),
        S(4, {1: 2.5}, {1: 4}),  # d = 0.375 (as above), 1 ms after the change
        # b_s = 4, b_m = max(4, 0.75·2.5 + 0.25·4 = 2.875) = 4, d = 0, control time,
        # second subslot, still slow start: 4 -> 8 (BW_A = 90e6 − 5.792e6 >= 5.792e6)
        S(5, {1: 4}, {1: 8}),
        S(6, {1: 8}, {1: 8}),
    ),
)

# 3. d > γ2 on 3 RTTs in a row: − 1 MSS, counted per RTT (not per 2·RTT) and in a
#    first subslot too; an RTT with d <= γ2 resets the count.
DECREASE_PER_RTT = Scenario(
    "decrease_per_rtt",
    (
        S(0, {1: 0}, {1: 2}),
        S(1, {1: 2}, {1: 2}),
        S(2, {1: 2}, {1: 2}),
        S(3, {1: 2}, {1: 4}),
        S(4, {1: 4}, {1: 4}),
        S(5, {1: 4}, {1: 8}),  # as lone_flow; b_m = 4
        # b_s = 0, b_m = max(0, 0.75·4) = 3, b_e = 8, d = 5/8 = 0.625 > γ2: 1st RTT
        S(6, {1: 0}, {1: 8}),
        # b_m = 2.25, d = 5.75/8 = 0.71875: 2nd RTT; control time: hold, slow start ends
        S(7, {1: 0}, {1: 8}),
        # b_m = 1.6875, d = 6.3125/8 = 0.789: 3rd RTT -> 8 − 1 = 7, at t = 8, the
        # start of a FIRST subslot
        S(8, {1: 0}, {1: 7}),
        S(9, {1: 0}, {1: 7}),  # b_m = 1.265625, b_e = 7, d = 0.819: 1st RTT
        S(10, {1: 0}, {1: 7}),  # b_m = 0.94921875, d = 0.864: 2nd RTT
        # b_s = 4, b_m = max(4, 0.75·0.949 + 1 = 1.71) = 4, d = 3/7 = 0.43 <= γ2: count
        # back to 0; control time, d > γ1 and > MSS/rwnd = 1/7: hold
        S(11, {1: 4}, {1: 7}),
        S(12, {1: 0}, {1: 7}),  # b_m = 3, d = 4/7 = 0.57: 1st (3rd without the reset)
        S(13, {1: 0}, {1: 7}),  # b_m = 2.25, d = 4.75/7 = 0.68: 2nd
        S(14, {1: 0}, {1: 6}),  # b_m = 1.6875, d = 5.3125/7 = 0.76: 3rd -> 6, first subslot
    ),
)


def _idle_flow(name: str, min_segs: int, w: list[int]) -> Scenario:
    """A flow that receives nothing: b_m = 0, b_e = rwnd/RTT > 0, d = 1 every RTT."""
    return Scenario(
        name,
        tuple(S(t, {1: 0}, {1: w[t]}) for t in range(len(w))),
        min_segs=min_segs,
    )


# 4. The floor. d = 1 > γ2 on every RTT, so every 3rd RTT in a row asks for − 1 MSS.
#    min_segs 2: t = 2 is a control time, d = 1 > MSS/rwnd = 1/2: hold (slow start
#    ends); t = 3, 6, 9: max(2 − 1, 2) = 2, never lower (and never an increase).
FLOOR_2_MSS = _idle_flow("floor_2_mss", 2, [2] * 10)
#    min_segs 1 (Fig. 10): t = 3: max(2 − 1, 1) = 1. At 1 MSS, d <= MSS/rwnd = 1
#    always holds (rule 1: increase): t = 5, control time (2 ms since t = 3) in a
#    second subslot: + 1 MSS -> 2 (d = 1 was still its 2nd RTT over γ2). t = 6: 3rd
#    RTT -> 1. t = 8: control time, first subslot: none. t = 9: 3rd RTT again, but
#    max(1 − 1, 1) = 1 leaves it at the floor; rule 1 holds in a second subslot: -> 2.
FLOOR_1_MSS = _idle_flow("floor_1_mss", 1, [2, 2, 2, 1, 1, 2, 1, 1, 1, 2])


def _ack_order(
    name: str, order: tuple[int, int], rtt2_ms: float, got2: int, other: int, win: dict[int, int]
) -> Scenario:
    """Two flows, both due for a slow-start doubling in the same step, quota for one;
    `order` is the order they appear in (insertion order of every dict downstream)."""
    return Scenario(
        name,
        (
            S(0, {k: 0 for k in order}, {1: 2, 2: 2}, rtt_ms={2: rtt2_ms}),
            S(2, {k: {1: 4, 2: got2}[k] for k in order}, win, other=other, rtt_ms={2: rtt2_ms}),
        ),
        capacity_Bps=20e6,
    )


# 5. Quota in ACK order. C = 20e6: α·C = 18e6 B/s, 0.2·C = 4e6 B/s. Steps at 0 and
#    2 ms only. At t = 2, T <= 1 ms has passed: the first subslot [0, 2] closes.
#    Flow 1: RTT 1 ms, 4 MSS in 2 ms: b_s = 2 MSS/ms = rwnd/RTT, d = 0, due at
#    0 + 2·1 = 2 ms; doubling costs 2896 B / 1 ms = 2.896e6 B/s.
#    Flow 2: RTT 0.5 ms, 8 MSS in 2 ms: b_s = 5.792e6 B/s = 2896 B / 0.5 ms, d = 0,
#    due at 0 + 2·0.5 = 1 ms (first); doubling costs 5.792e6 B/s.
#    Interface: (4 + 8)·1448 + 4144 = 21520 B over 2 ms: BW_T = 10.76e6,
#    BW_A = 18e6 − 10.76e6 = 7.24e6 (>= 4e6: no fairness cut).
#    Flow 2 pays first: 7.24e6 − 5.792e6 = 1.448e6 < 2.896e6, so flow 1 cannot
#    double (its slow start ends). In key or insertion order flow 1 would pay
#    first and leave 4.344e6 < 5.792e6 for flow 2.
ACK_ORDER = [
    _ack_order(f"ack_order_due_first[{o[0]},{o[1]}]", o, 0.5, 8, 4144, {1: 2, 2: 4})
    for o in ((1, 2), (2, 1))
]
# 5b. Same due time (both RTT 1 ms, both 4 MSS in 2 ms, both due at 2 ms): the key
#    decides. Interface (4 + 4)·1448 + 15728 = 27312 B over 2 ms: BW_T = 13.656e6,
#    BW_A = 4.344e6 (>= 4e6); flow 1 pays 2.896e6, 1.448e6 left < 2.896e6 for flow 2.
ACK_ORDER += [
    _ack_order(f"ack_order_tie_by_key[{o[0]},{o[1]}]", o, 1.0, 4, 15728, {1: 4, 2: 2})
    for o in ((1, 2), (2, 1))
]

# 6. Fairness, once per slot when BW_A < 0.2·C = 20e6 B/s: the flows above the
#    mean rwnd lose 1 MSS when BW_A is computed (odd t), not at the other steps of
#    the slot (the half-ms steps). 74208 B of other traffic per ms from t = 4.
#    Flow 2 receives nothing (d = 1): its decreases stop at the 2 MSS floor.
FAIRNESS = Scenario(
    "fairness_once_per_slot",
    (
        S(0, {1: 0}, {1: 2}),
        S(1, {1: 2}, {1: 2}),
        S(2, {1: 2}, {1: 2}),
        S(3, {1: 2, 2: 0}, {1: 4, 2: 2}),  # flow 1 doubles as in lone_flow; flow 2 starts
        S(4, {1: 4, 2: 0}, {1: 4, 2: 2}, other=74208),  # flow 2: d = 1, 1st RTT
        # BW_T = (4·1448 + 74208) B / 1 ms = 80e6, BW_A = 10e6 < 20e6: mean rwnd
        # (4 + 2)/2 = 3, flow 1 (4) -> 3 and its 2·RTT restarts (no increase now).
        # Flow 2: d = 1, 2nd RTT; control time: hold.
        S(5, {1: 4, 2: 0}, {1: 3, 2: 2}, other=74208),
        S(5.5, {1: 1.5, 2: 0}, {1: 3, 2: 2}, other=37104),  # same slot: no second cut
        # flow 2: 3rd RTT with d = 1: max(2 − 1, 2) = 2
        S(6, {1: 1.5, 2: 0}, {1: 3, 2: 2}, other=37104),
        S(6.5, {1: 1.5, 2: 0}, {1: 3, 2: 2}, other=37104),
        # BW_T = (3·1448 + 74208) / 1 ms = 78.552e6, BW_A = 11.448e6 < 20e6: mean
        # (3 + 2)/2 = 2.5, flow 1 (3) -> 2
        S(7, {1: 1.5, 2: 0}, {1: 2, 2: 2}, other=37104),
        S(7.5, {1: 1, 2: 0}, {1: 2, 2: 2}, other=37104),
    ),
)

# 7. Only flows whose smallest RTT is below 2 ms are controlled: flow 2 (2 ms) and
#    flow 3 (3 ms) never get a window; flow 1 keeps control when queueing raises
#    its RTT to 30 ms (its smallest RTT is still 1 ms).
RTT_LIMIT = Scenario(
    "rtt_limit",
    (
        S(0, {1: 0, 2: 0, 3: 0}, {1: 2}, rtt_ms={2: 2.0, 3: 3.0}),
        S(1, {1: 2, 2: 2, 3: 2}, {1: 2}, rtt_ms={1: 30.0, 2: 2.0, 3: 3.0}),
    ),
)

SCENARIOS: list[Scenario] = [
    LONE_FLOW,
    HOLD_EXITS_SLOW_START,
    HOLD_BETWEEN_CONTROL_TIMES,
    DECREASE_PER_RTT,
    FLOOR_2_MSS,
    FLOOR_1_MSS,
    *ACK_ORDER,
    FAIRNESS,
    RTT_LIMIT,
]
BY_NAME = {sc.name: sc for sc in SCENARIOS}
