"""RCC's incremental step (`Rcc.step_changes`, what the simulator calls) is
`Rcc.step` (what the host agent calls) told only the flows that moved.

Random traces — flows coming and going (so W_i = floor(Q/N) moves), bursts
with and without CE marks and long silences, RTTs moving or unknown, flows
waiting long enough for the receiver timer to fire and double — give exactly
the windows, the fired flows in their order, the timers and the per-flow state
`step` gives, float for float, step by step.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from p4incast.policies.rcc import Rcc, RccParams

Row = tuple[int, int, float, bool]  # packets, ce, rtt_s, waits


def _trace(seed: int, steps: int) -> list[tuple[float, dict[int, Row]]]:
    """Random counters of up to 20 flows, stepped on a nanosecond clock every
    ~126 µs (as the simulator steps every base RTT): bursts with CE marks,
    silences of up to tens of ms while a flow waits (its timer of 10 ms fires,
    then doubles), RTTs that move (one of two steps exactly, some unknown),
    flows ending and new ones starting."""
    rng = random.Random(seed)
    t_ns = 0
    flows: dict[int, list[float]] = {}  # key -> [pkts, ce, rtt, waits, on-probability]
    next_key = 1
    out: list[tuple[float, dict[int, Row]]] = []
    for _ in range(steps):
        t_ns += 126_000 + rng.randint(-3, 3)
        if len(flows) < 20 and rng.random() < 0.04:
            rtt = rng.choice([0.0, 1.2e-4, 2.52e-4, 3e-4, 1e-3])
            flows[next_key * 7919 % 10007] = [0, 0, rtt, False, rng.random()]
            next_key += 1
        if flows and rng.random() < 0.008:
            del flows[rng.choice(sorted(flows))]
        for st in flows.values():
            if rng.random() < 0.01:
                st[4] = rng.choice([0.0, 0.0, 0.0, 0.05, 0.6])  # a silence or a burst
            if rng.random() < st[4] or not st[0]:
                n = rng.randint(1, 4)
                st[0] += n
                if rng.random() < 0.3:
                    st[1] += rng.randint(1, n)
                if rng.random() < 0.2:
                    st[2] = rng.choice([1.2e-4, 1.3e-4, 2.52e-4, 4e-4, 9e-4])
            if rng.random() < 0.05:
                st[3] = rng.random() < 0.7  # waits: long stretches either way
        cur: dict[int, Row] = {
            k: (int(st[0]), int(st[1]), st[2], bool(st[3])) for k, st in sorted(flows.items())
        }
        out.append((t_ns * 1e-9, cur))
    return out


def _state(r: Rcc) -> dict[object, dict[str, object]]:
    """Each flow's state but step_changes' own bookkeeping and the window cache."""
    out: dict[object, dict[str, object]] = {}
    for k, st in r.state.items():
        d = dataclasses.asdict(st)
        for own in ("seen", "period", "idle", "w_pk", "w_cur"):
            del d[own]
        out[k] = d
    return out


@pytest.mark.parametrize("seed", range(12))
def test_incremental_step_is_the_full_step_on_random_traces(seed: int) -> None:
    # Q = 40 (the paper's) or 12: W_i from 40 down to 1 packet as flows come
    params = RccParams(queue_maxsize=(40, 12)[seed % 2], rto_r_s=10e-3)
    timed = seed % 3 != 2  # the simulator's ACK queue on (the timer runs) or off
    full, inc = Rcc(params), Rcc(params)
    trace = _trace(seed, 4000)
    windows: dict[int, int] = {}
    prev: dict[int, Row] = {}
    changes = fired = cuts = 0
    shares: set[int] = set()
    for i, (now, cur) in enumerate(trace):
        counters = {k: r[:3] for k, r in cur.items()}
        waits = {k: r[3] for k, r in cur.items()} if timed else None
        want = full.step(now, counters, waits=waits)
        changed = {k: r for k, r in cur.items() if prev.get(k) != r}
        if i == len(trace) - 1:  # the last step visits every flow: all state caught up
            changed = dict(cur)
        gone = [k for k in prev if k not in cur]
        got = inc.step_changes(now, changed, gone, timed)
        windows = {k: w for k, w in {**windows, **got}.items() if k in cur}
        prev = cur
        assert windows == want, f"step {i}"
        assert inc.fired == full.fired, f"step {i}"
        assert inc.timer.timers == full.timer.timers, f"step {i}"
        changes += len(changed)
        fired += len(full.fired)
        cuts += sum(st.cut < 1 for st in full.state.values())
        shares.add(40 // max(len(cur), 1))
    assert _state(inc) == _state(full)
    # the trace exercised what it is for: few flows change per step, windows
    # below W_i (CE cuts, timeouts) regrow, W_i moves, timers fire when they run
    assert changes < 0.5 * sum(len(c) for _, c in trace)
    assert cuts and len(shares) > 3
    assert fired if timed else not fired
