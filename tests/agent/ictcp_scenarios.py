"""ICTCP conformance scenarios: scripted counters and the windows the paper's rules give.

One table, replayed on the policy itself (tests/agent/test_ictcp_conformance.py)
and through the simulator's stepping (tests/sim/test_ictcp_model_stepping.py).
Every expected window below is worked out by hand from the text of Wu et al.,
ICTCP, IEEE/ACM ToN 2013 (seed 000), §IV — never from docs/algorithms.md or
the code. The place each rule comes from is cited beside the step it decides;
the arithmetic is in the comments.

The rules, as read from the paper (the places the comments cite):
- §IV-A: slots of two subslots of length T; a first subslot measures BW_A =
  max(0, α·C − BW_T); windows grow only in a second subslot, and the growth of
  all of a second subslot's windows (window increase / RTT each) must stay
  less than BW_A.
- §IV-B: a flow adjusts only as it sends an ACK (no data, no ACK, no
  adjustment); it may grow when more than 2·RTT has passed since its last
  window change; T = Σ w_i·RTT_i with w_i the normalized traffic volume, over
  the last T, of the connections that updated their RTT then.
- §IV-C: b_m, b_e, d per RTT (eqs. 2-4); case 1 d ≤ γ1 or d ≤ MSS/rwnd: grow
  (double in slow start, + 1 MSS after) if the quota pays; case 2 d > γ2 on
  three RTTs in a row: − 1 MSS, floor 2 MSS; case 3 keep. Slow start ends on
  case 2, case 3, or a case 1 the quota cannot pay for. A new connection, and
  a connection back from a prolonged idle, starts in slow start (the paper
  does not say how long "prolonged" is: ours is no data for longer than
  idle_ms, 1000 by default, given per scenario below).
- §IV-D: when BW_A < 0.2·C, flows whose rwnd is larger than the mean lose
  1 MSS; a flow whose RTT is larger than 2 ms is not adjusted.
- The initial window is 2 MSS (the floor of §IV-C, the start of every
  example in the paper).

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
- A flow's control time: more than 2·RTT since its start or last window change
  (§IV-B "larger than"): with steps 1 ms apart and RTT 1 ms, 3 steps after.
  With increases in second subslots only, slow start then doubles every 4
  steps.
- T: from the volumes of the subslot that just ended; before any traffic,
  100 µs (it only makes the first subslot end at the first step).
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
    idle_ms: float = 1000.0  # "prolonged idle": no data for longer than this


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


def _grow(tail: tuple[Step, ...] = ()) -> tuple[Step, ...]:
    """The start every lone-flow scenario shares: one flow using its window,
    RTT 1 ms, doubling 2 -> 4 at t = 3 and 4 -> 8 at t = 7 (lone_flow's
    comments), then `tail`."""
    return (
        S(0, {1: 0}, {1: 2}),
        S(1, {1: 2}, {1: 2}),
        S(2, {1: 2}, {1: 2}),
        S(3, {1: 2}, {1: 4}),
        S(4, {1: 4}, {1: 4}),
        S(5, {1: 4}, {1: 4}),
        S(6, {1: 4}, {1: 4}),
        S(7, {1: 4}, {1: 8}),
        *tail,
    )


# 1. Slow start doubles when more than 2·RTT has passed, in second subslots only;
#    the quota ends it; then + 1 MSS (congestion avoidance). One flow using its
#    window.
LONE_FLOW = Scenario(
    "lone_flow",
    (
        S(0, {1: 0}, {1: 2}),  # a new connection: slow start at 2 MSS (§IV-C)
        # b_s = 2, b_m = max(2, 0.75·0 + 0.25·2) = 2 (eq. 2), b_e = max(2, 2/1) = 2
        # (eq. 3), d = 0 (eq. 4); 1 ms since the start: not a control time (§IV-B)
        S(1, {1: 2}, {1: 2}),
        S(2, {1: 2}, {1: 2}),  # d = 0; 2 ms = 2·RTT is not larger than 2·RTT (§IV-B)
        # d = 0 <= γ1: case 1 (§IV-C); 3 ms > 2·RTT; second subslot (§IV-A);
        # BW_A = 90e6 − 2·1448/1ms = 87.104e6 B/s; doubling costs 2 MSS/RTT =
        # 2.896e6 < 87.104e6 (§IV-A "less than"): rwnd 2 -> 4
        S(3, {1: 2}, {1: 4}),
        S(4, {1: 4}, {1: 4}),  # d = 0, 1 ms since the change
        S(5, {1: 4}, {1: 4}),  # 2 ms: not larger than 2·RTT (§IV-B)
        S(6, {1: 4}, {1: 4}),  # a control time, but a first subslot: no increase (§IV-A)
        # second subslot: BW_A = 90e6 − 5.792e6 = 84.208e6 > 5.792e6: 4 -> 8
        S(7, {1: 4}, {1: 8}),
        S(8, {1: 8}, {1: 8}),
        S(9, {1: 8}, {1: 8}),
        S(10, {1: 8}, {1: 8}),
        S(11, {1: 8}, {1: 16}),  # BW_A = 90e6 − 11.584e6 = 78.416e6 > 11.584e6
        S(12, {1: 16}, {1: 16}),
        S(13, {1: 16}, {1: 16}),
        S(14, {1: 16}, {1: 16}),
        S(15, {1: 16}, {1: 32}),  # BW_A = 90e6 − 23.168e6 = 66.832e6 > 23.168e6
        S(16, {1: 32}, {1: 32}),
        S(17, {1: 32}, {1: 32}),
        S(18, {1: 32}, {1: 32}),
        # d = 0, control time, second subslot: BW_A = 90e6 − 32·1.448e6 = 43.664e6,
        # doubling costs 32 MSS/RTT = 46.336e6, not less: no increase, and the
        # connection goes into congestion avoidance (§IV-C)
        S(19, {1: 32}, {1: 32}),
        S(20, {1: 32}, {1: 32}),  # still due, but a first subslot
        # congestion avoidance: + 1 MSS (§IV-C), costs 1.448e6 < BW_A = 43.664e6
        S(21, {1: 32}, {1: 33}),
        S(22, {1: 33}, {1: 33}),
        S(23, {1: 33}, {1: 33}),
        S(24, {1: 33}, {1: 33}),
        S(25, {1: 33}, {1: 34}),  # BW_A = 90e6 − 33·1.448e6 = 42.216e6 > 1.448e6
    ),
)

# 2. A hold (γ1 < d <= γ2, case 3) at a control time ends slow start without a
#    decrease (§IV-C "whenever the second and third conditions are met").
HOLD_EXITS_SLOW_START = Scenario(
    "hold_exits_slow_start",
    (
        *_grow()[:4],  # 2 -> 4 at t = 3
        # b_s = 2.5, b_m = max(2.5, 0.75·2 + 0.25·2.5 = 2.125) = 2.5 (eq. 2),
        # b_e = max(2.5, 4) = 4, d = 1.5/4 = 0.375 (<= γ2: no count)
        S(4, {1: 2.5}, {1: 4}),
        S(5, {1: 2.5}, {1: 4}),  # d = 0.375; 2 ms since the change: not a control time
        # d = 0.375 > γ1 and > MSS/rwnd = 1/4, <= γ2: case 3 at a control time
        # (3 ms > 2·RTT): rwnd kept, slow start ends (§IV-C)
        S(6, {1: 2.5}, {1: 4}),
        # b_s = 4, b_m = max(4, 0.75·2.5 + 1 = 2.875) = 4, d = 0; second subslot,
        # congestion avoidance: + 1 MSS (not doubling to 8)
        S(7, {1: 4}, {1: 5}),
        S(8, {1: 5}, {1: 5}),
    ),
)

# 2b. The same d = 0.375 exactly 2·RTT after a change — not larger than 2·RTT, so
#     not a control time (§IV-B): slow start goes on.
HOLD_BETWEEN_CONTROL_TIMES = Scenario(
    "hold_between_control_times",
    (
        *_grow()[:4],
        S(4, {1: 2.5}, {1: 4}),  # d = 0.375 (as above), 1 ms after the change
        S(5, {1: 2.5}, {1: 4}),  # d = 0.375, 2 ms after: equal to 2·RTT, no decision
        # b_s = 4, b_m = max(4, 0.75·2.5 + 1 = 2.875) = 4, d = 0: case 1 at a control
        # time, but a first subslot (§IV-A): nothing
        S(6, {1: 4}, {1: 4}),
        # d = 0, second subslot, still slow start: 4 -> 8 (BW_A = 90e6 − 5.792e6
        # = 84.208e6 > 5.792e6)
        S(7, {1: 4}, {1: 8}),
    ),
)

# 3. d > γ2 on 3 RTTs in a row: − 1 MSS, counted per RTT and in a first subslot
#    too (§IV-A: decreases in either subslot; §IV-C case 2); an RTT with d <= γ2
#    resets the count ("three continuous RTT"). The flow keeps receiving a
#    little (1 MSS per ms), so it keeps sending ACKs (§IV-B).
DECREASE_PER_RTT = Scenario(
    "decrease_per_rtt",
    _grow(
        (
            # b_s = 1, b_m = max(1, 0.75·4 + 0.25 = 3.25) = 3.25, b_e = max(3.25, 8) = 8,
            # d = 4.75/8 = 0.594 > γ2: 1st RTT
            S(8, {1: 1}, {1: 8}),
            S(9, {1: 1}, {1: 8}),  # b_m = 2.6875, d = 5.3125/8 = 0.664: 2nd RTT
            # b_m = 2.265625, d = 5.734375/8 = 0.717: 3rd RTT -> 8 − 1 = 7 (§IV-C case
            # 2), at t = 10, a FIRST subslot (§IV-A)
            S(10, {1: 1}, {1: 7}),
            S(11, {1: 1}, {1: 7}),  # b_m = 1.949, b_e = 7, d = 0.722: 1st RTT
            # b_s = 4, b_m = max(4, 0.75·1.949 + 1 = 2.46) = 4, d = 3/7 = 0.43 <= γ2:
            # the count restarts
            S(12, {1: 4}, {1: 7}),
            # b_m = max(1, 0.75·4 + 0.25) = 3.25, d = 3.75/7 = 0.536: 1st (it would be
            # the 3rd without the reset); control time (3 ms > 2·RTT): d > γ1 and
            # > MSS/rwnd = 1/7: case 3, keep
            S(13, {1: 1}, {1: 7}),
            S(14, {1: 1}, {1: 7}),  # b_m = 2.6875, d = 4.3125/7 = 0.616: 2nd
            S(15, {1: 1}, {1: 6}),  # b_m = 2.265625, d = 4.734/7 = 0.676: 3rd -> 6
        )
    ),
)


def _trickle(name: str, min_segs: int, w: list[int]) -> Scenario:
    """A flow that receives 0.5 MSS per ms whatever its window: b_m = 0.5 MSS/RTT,
    so d = 1 − 0.5/rwnd: 0.75 at 2 MSS (> γ2), 0.5 at 1 MSS (not > γ2)."""
    return Scenario(
        name,
        (S(0, {1: 0}, {1: w[0]}), *(S(t, {1: 0.5}, {1: w[t]}) for t in range(1, len(w)))),
        min_segs=min_segs,
    )


# 4. The floor (§IV-C: "the minimal receive window is 2·MSS"; §VII-A-2 runs 1).
#    min_segs 2: d = 0.75 > γ2 on t = 1, 2, 3: the cut at t = 3 gives max(2 − 1, 2)
#    = 2; slow start ends (case 2); at control times d > γ1 and > MSS/rwnd = 0.5:
#    keep. Every third RTT asks again and the floor holds: 2 throughout.
FLOOR_2_MSS = _trickle("floor_2_mss", 2, [2] * 11)
#    min_segs 1: t = 3: 3rd RTT over γ2 -> 1 (a change). At 1 MSS, d = 1 − 0.5 =
#    0.5: not > γ2 (count back to 0) and <= MSS/rwnd = 1: case 1. t = 4, 5: not
#    larger than 2·RTT since t = 3; t = 6: control time but a first subslot;
#    t = 7: second subslot, + 1 MSS (slow start is over) -> 2, costs 1.448e6 <
#    BW_A. t = 8, 9, 10: d = 0.75 three times -> 1 at t = 10.
FLOOR_1_MSS = _trickle("floor_1_mss", 1, [2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 1])


def _ack_order(
    name: str, order: tuple[int, int], rtt2_ms: float, got2: int, other: int, win: dict[int, int]
) -> Scenario:
    """Two flows, both due for a slow-start doubling in the same step, quota for one;
    `order` is the order they appear in (insertion order of every dict downstream)."""
    return Scenario(
        name,
        (
            S(0, {k: 0 for k in order}, {1: 2, 2: 2}, rtt_ms={2: rtt2_ms}),
            S(2.5, {k: {1: 5, 2: got2}[k] for k in order}, win, other=other, rtt_ms={2: rtt2_ms}),
        ),
        capacity_Bps=20e6,
    )


# 5. Quota in ACK order (§IV-C "first come first service, determined by the order
#    of ACKs"). C = 20e6: α·C = 18e6 B/s, 0.2·C = 4e6 B/s. Steps at 0 and 2.5 ms
#    only: at 2.5 the first subslot [0, 2.5] closes and a second one opens.
#    Flow 1: RTT 1 ms, 5 MSS in 2.5 ms: b_s = 2 MSS/ms = rwnd/RTT, d = 0; 2.5 ms >
#    2·RTT, it became due at 0 + 2 = 2 ms; doubling costs 2896 B / 1 ms = 2.896e6.
#    Flow 2: RTT 0.5 ms, 10 MSS in 2.5 ms: b_s = 4 MSS/ms = 2 MSS / 0.5 ms, d = 0,
#    due at 0 + 1 = 1 ms (first); doubling costs 2896 B / 0.5 ms = 5.792e6.
#    Interface: (5 + 10)·1448 + 5180 = 26900 B over 2.5 ms: BW_T = 10.76e6,
#    BW_A = 18e6 − 10.76e6 = 7.24e6 (not < 4e6: no fairness cut, §IV-D).
#    Flow 2 pays first: 7.24e6 − 5.792e6 = 1.448e6 left, and 2.896e6 is not less:
#    flow 1 does not double. In key or insertion order flow 1 would pay first and
#    leave 4.344e6 < 5.792e6 for flow 2.
ACK_ORDER = [
    _ack_order(f"ack_order_due_first[{o[0]},{o[1]}]", o, 0.5, 10, 5180, {1: 2, 2: 4})
    for o in ((1, 2), (2, 1))
]
# 5b. Same due time (both RTT 1 ms, both 5 MSS in 2.5 ms, both due at 2 ms): the
#    key decides. Interface (5 + 5)·1448 + 19660 = 34140 B over 2.5 ms: BW_T =
#    13.656e6, BW_A = 4.344e6 (not < 4e6); flow 1 pays 2.896e6, 1.448e6 left is not
#    more than flow 2's 2.896e6.
ACK_ORDER += [
    _ack_order(f"ack_order_tie_by_key[{o[0]},{o[1]}]", o, 1.0, 5, 19660, {1: 4, 2: 2})
    for o in ((1, 2), (2, 1))
]

# 6. Fairness, once per slot when BW_A < 0.2·C = 20e6 B/s (§IV-D): the flows whose
#    rwnd is larger than the mean lose 1 MSS when BW_A is computed (odd t), not
#    at the other steps of the slot (the half-ms steps). 74208 B of other traffic
#    per ms from t = 4. Flow 2 receives nothing: no ACK, no adjustment of its
#    own (§IV-B), it only counts in the mean.
FAIRNESS = Scenario(
    "fairness_once_per_slot",
    (
        S(0, {1: 0}, {1: 2}),
        S(1, {1: 2}, {1: 2}),
        S(2, {1: 2}, {1: 2}),
        S(3, {1: 2, 2: 0}, {1: 4, 2: 2}),  # flow 1 doubles as in lone_flow; flow 2 starts
        S(4, {1: 4, 2: 0}, {1: 4, 2: 2}, other=74208),
        # BW_T = (4·1448 + 74208) B / 1 ms = 80e6, BW_A = 10e6 < 20e6: mean rwnd
        # (4 + 2)/2 = 3, flow 1 (4 > 3) -> 3
        S(5, {1: 4, 2: 0}, {1: 3, 2: 2}, other=74208),
        S(5.5, {1: 1.5, 2: 0}, {1: 3, 2: 2}, other=37104),  # same slot: no second cut
        S(6, {1: 1.5, 2: 0}, {1: 3, 2: 2}, other=37104),  # a first subslot
        S(6.5, {1: 1.5, 2: 0}, {1: 3, 2: 2}, other=37104),
        # BW_T = (3·1448 + 74208) / 1 ms = 78.552e6, BW_A = 11.448e6 < 20e6: mean
        # (3 + 2)/2 = 2.5, flow 1 (3) -> 2
        S(7, {1: 1.5, 2: 0}, {1: 2, 2: 2}, other=37104),
        S(7.5, {1: 1, 2: 0}, {1: 2, 2: 2}, other=37104),
    ),
)

# 7. §IV-D: a flow whose RTT is larger than 2 ms is not adjusted. Flow 2's RTT is
#    2 ms exactly — not larger: controlled (§III words the rule as "less than
#    2 ms", which would leave it alone; docs/algorithms.md, "where our ICTCP bends
#    the paper"). Flow 3 (2.5 ms) never gets a window. Flow 1 keeps control when
#    queueing raises its RTT to 30 ms: the test is on its smallest RTT.
RTT_LIMIT = Scenario(
    "rtt_limit",
    (
        S(0, {1: 0, 2: 0, 3: 0}, {1: 2, 2: 2}, rtt_ms={2: 2.0, 3: 2.5}),
        S(1, {1: 2, 2: 2, 3: 2}, {1: 2, 2: 2}, rtt_ms={1: 30.0, 2: 2.0, 3: 2.5}),
    ),
)

# 8. The control time's boundary (§IV-B "larger than 2·RTT"): two flows start
#    together at t = 1, each receiving 2 MSS per ms; flow 1's RTT is 1 ms, flow 2's
#    0.99 ms. At t = 3, 2 ms have passed: not larger than flow 1's 2·RTT = 2 ms,
#    larger than flow 2's 1.98 ms.
#    t = 0: no flow yet (the first subslot opens); t = 1: both start at 2 MSS.
#    t = 2: flow 1 d = 0; flow 2: b_s = 2896 B/ms = 2.896e6, b_e = max(2.896e6,
#    2896 B / 0.99 ms = 2.925e6), d = 0.01 <= γ1. A first subslot.
#    t = 3: second subslot, BW_A = 90e6 − 4·1448/1ms = 84.208e6. Flow 1: no
#    control time. Flow 2: control time, case 1: 2 -> 4 (costs 2.925e6).
#    t = 4: first subslot. t = 5: second subslot (T, from t = 4's volumes, is
#    (2·1 + 4·0.99)/6 = 0.993 ms: one subslot per step); BW_A = 90e6 −
#    6·1448/1ms = 81.312e6. Flow 1: 4 ms > 2 ms, d = 0: 2 -> 4 (2.896e6). Flow 2:
#    b_s = 4 MSS/ms, b_e = max(5.792e6, 4·1448/0.99ms = 5.851e6), d = 0.01; 2 ms
#    since its change > 1.98 ms: 4 -> 8 (5.851e6; 81.312e6 − 2.896e6 left).
CONTROL_TIME_BOUNDARY = Scenario(
    "control_time_boundary",
    (
        S(0, {}, {}),
        S(1, {1: 0, 2: 0}, {1: 2, 2: 2}, rtt_ms={2: 0.99}),
        S(2, {1: 2, 2: 2}, {1: 2, 2: 2}, rtt_ms={2: 0.99}),
        S(3, {1: 2, 2: 2}, {1: 2, 2: 4}, rtt_ms={2: 0.99}),
        S(4, {1: 2, 2: 4}, {1: 2, 2: 4}, rtt_ms={2: 0.99}),
        S(5, {1: 2, 2: 4}, {1: 4, 2: 8}, rtt_ms={2: 0.99}),
    ),
)


def _quota(name: str, other: int, w3: int) -> Scenario:
    """A lone flow whose first doubling (t = 3, 2 MSS/RTT = 2.896e6 B/s) meets a
    quota set by `other` bytes arriving in the subslot [2, 3]."""
    tail = (S(4, {1: 2}, {1: w3}), S(5, {1: 2}, {1: w3 if w3 == 4 else w3 + 1}))
    return Scenario(
        name,
        (*_grow()[:3], S(3, {1: 2}, {1: w3}, other=other), *tail),
    )


# 9. The quota's boundary (§IV-A: the increases of a second subslot must be "less
#    than" BW_A). other = 84208: BW_T = (2896 + 84208) B / 1 ms = 87.104e6, BW_A =
#    90e6 − 87.104e6 = 2.896e6, equal to the doubling's cost: not less, no
#    increase, slow start ends (§IV-C). (BW_A < 0.2·C, but the one flow is not
#    above the mean: no fairness cut, §IV-D.) t = 5: second subslot, BW_A =
#    90e6 − 2.896e6: congestion avoidance, 2 -> 3.
QUOTA_EQUAL = _quota("quota_equal_to_the_increase", 84208, 2)
#    other = 84207: BW_A = 2.897e6 > 2.896e6: the doubling is paid, 2 -> 4 (then
#    1 and 2 ms after the change: 4).
QUOTA_ABOVE = _quota("quota_above_the_increase", 84207, 4)

# 10. T weighted by the traffic volume of every connection (§IV-B), the flows
#    ICTCP leaves alone included: flow 1 (RTT 1 ms, controlled) receives 2, then
#    4 MSS per ms; flow 3 (RTT 4 ms, larger than 2 ms: not controlled, §IV-D)
#    6 MSS per ms.
#    t = 0: the first subslot opens; T = 100 µs (no traffic yet).
#    t = 1: it ends (1 ms >= T). Volumes over it: 2 and 6 MSS: T = (2·1 + 6·4)/8
#    = 3.25 ms. BW_T = 8·1448 B/ms, BW_A = 90e6 − 11.584e6 = 78.416e6: a second
#    subslot until 1 + 3.25 = 4.25.
#    t = 3: flow 1, 3 ms > 2·RTT, d = 0, second subslot: 2 -> 4.
#    t = 5: the second subslot ends (4 >= 3.25); volumes over [1, 5]: flow 1
#    2 + 2 + 4 + 4 = 12 MSS, flow 3 24: T = (12·1 + 24·4)/36 = 3 ms. A first
#    subslot until 8: flow 1's control time at t = 6 (3 ms after t = 3) waits.
#    t = 8: the first subslot ends; BW_A = 90e6 − (12 + 18)·1448 B / 3 ms =
#    75.52e6; flow 1 (d = 0): 4 -> 8 (costs 5.792e6).
#    Weighted by the controlled flows alone T would be 1 ms and flow 1 would
#    double at t = 7.
T_WEIGHTING = Scenario(
    "t_weighted_by_all_traffic",
    (
        S(0, {1: 0, 3: 0}, {1: 2}, rtt_ms={3: 4.0}),
        *(S(t, {1: 2, 3: 6}, {1: 4 if t == 3 else 2}, rtt_ms={3: 4.0}) for t in (1, 2, 3)),
        *(S(t, {1: 4, 3: 6}, {1: 8 if t == 8 else 4}, rtt_ms={3: 4.0}) for t in range(4, 9)),
    ),
)

# 11. A prolonged idle connection starts again in slow start (§IV-C). idle_ms = 3:
#    "prolonged" is no data for longer than 3 ms. The flow grows to 8 by t = 7 and
#    then receives nothing: no ACKs, no adjustment (§IV-B). Its last data came at
#    t = 7; at t = 10 it has been idle 3 ms, not longer; at t = 11, 4 ms: slow
#    start again from 2 MSS (written at once, while idle). Data again at t = 13:
#    its clock starts there, as a new connection's: 1 ms at t = 14, 2 ms at t = 15
#    (not larger than 2·RTT), t = 16 a first subslot, t = 17: d = 0, second
#    subslot, doubling paid: 2 -> 4.
IDLE_RESTART = Scenario(
    "idle_restart",
    _grow(
        (
            *(S(t, {1: 0}, {1: 8}) for t in (8, 9, 10)),
            S(11, {1: 0}, {1: 2}),
            S(12, {1: 0}, {1: 2}),
            *(S(t, {1: 2}, {1: 4 if t == 17 else 2}) for t in range(13, 18)),
        )
    ),
    idle_ms=3.0,
)

# 11b. An idle shorter than that changes nothing (§IV-B: no ACK, no adjustment):
#    no data at t = 8, 9 (2 ms, not longer than 3). At t = 10 data again: b_s =
#    8 MSS over the 1 ms since t = 9 (the idle RTTs were no samples), b_m = max(8,
#    0.75·4 + 2) = 8, d = 0; control time (3 ms since t = 7) in a first subslot.
#    t = 11: d = 0, second subslot, still slow start: BW_A = 90e6 − 11.584e6 =
#    78.416e6 > 11.584e6: 8 -> 16.
IDLE_SHORT = Scenario(
    "idle_short_keeps_state",
    _grow(
        (
            S(8, {1: 0}, {1: 8}),
            S(9, {1: 0}, {1: 8}),
            S(10, {1: 8}, {1: 8}),
            S(11, {1: 8}, {1: 16}),
        )
    ),
    idle_ms=3.0,
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
    CONTROL_TIME_BOUNDARY,
    QUOTA_EQUAL,
    QUOTA_ABOVE,
    T_WEIGHTING,
    IDLE_RESTART,
    IDLE_SHORT,
]
BY_NAME = {sc.name: sc for sc in SCENARIOS}
