"""ICTCP's incremental step (`Ictcp.step_changes`, what the simulator calls) is
`Ictcp.step` (what the host agent calls) told only the flows that moved.

The hand-worked scenarios of tests/agent/ictcp_scenarios.py (cited there to
the paper) run through it and give their windows; and random traces — flows
coming and going, bursts and long silences, RTTs moving and crossing the 2 ms
limit, idle restarts, a subslot's fairness cut — give exactly the windows and
the per-flow state `step` gives, float for float, step by step.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from ictcp_scenarios import MSS, SCENARIOS, Scenario, ticks

from p4incast.policies.ictcp import FlowSample, Ictcp, IctcpFlow, IctcpParams


def _changes(
    prev: dict[int, FlowSample], cur: dict[int, FlowSample]
) -> tuple[dict[int, FlowSample], list[int]]:
    """What moved between two steps' samples, as the simulator reports it."""
    changed = {k: s for k, s in cur.items() if prev.get(k) != s}
    return changed, [k for k in prev if k not in cur]


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda sc: sc.name)
def test_scenarios_give_the_papers_windows_through_the_incremental_step(sc: Scenario) -> None:
    ic: Ictcp[int] = Ictcp(
        IctcpParams(
            capacity_Bps=sc.capacity_Bps, mss=MSS, min_segs=sc.min_segs, idle_s=sc.idle_ms / 1000
        )
    )
    windows: dict[int, int] = {}
    prev: dict[int, FlowSample] = {}
    for i, tk in enumerate(ticks(sc)):
        cur = {k: FlowSample(b, rtt) for k, (b, rtt) in sorted(tk.flows.items())}
        changed, gone = _changes(prev, cur)
        windows.update(ic.step_changes(tk.now_s, tk.iface_bytes, changed, gone))
        prev = cur
        got = {k: w / MSS for k, w in windows.items() if k in ic.flows}
        want = {k: w / MSS for k, w in tk.expect_bytes.items()}
        assert got == want, f"{sc.name}: step {i} (t = {tk.now_s * 1e3:g} ms), windows in MSS"


def _state(f: IctcpFlow) -> dict[str, object]:
    d = dataclasses.asdict(f)
    del d["seen_step"]  # step_changes' own bookkeeping
    return d


def _trace(seed: int, steps: int) -> list[tuple[float, int, dict[int, FlowSample]]]:
    """Random counters of up to 24 flows on a 1 Gbit/s-like port, stepped on a
    nanosecond clock every ~126 µs: bursts, silences of up to 30 ms, RTTs that
    move (some above 2 ms, some unknown, one of two steps exactly), flows
    ending and new ones starting."""
    rng = random.Random(seed)
    t_ns, iface = 0, 0
    flows: dict[int, list[float]] = {}  # key -> [bytes, rtt, on-probability]
    next_key = 1
    out = []
    for _ in range(steps):
        t_ns += 126_000 + rng.randint(-3, 3)
        if len(flows) < 24 and rng.random() < 0.08:
            rtt = rng.choice([0.0, 1.2e-4, 3e-4, 2.5e-3])
            flows[next_key * 7919 % 10007] = [0, rtt, rng.random()]
            next_key += 1
        if flows and rng.random() < 0.01:
            del flows[rng.choice(sorted(flows))]
        for st in flows.values():
            if rng.random() < 0.02:
                st[2] = rng.choice([0.0, 0.0, 0.05, 0.5, 0.95])  # a silence or a burst
            if rng.random() < st[2]:
                b = rng.choice([1448, 2896, 1448 * rng.randint(1, 12)])
                st[0] += b
                iface += b
                if rng.random() < 0.4:
                    st[1] = rng.choice([1.2e-4, 1.3e-4, 2.52e-4, 2.6e-4, 6e-4, 1.9e-3, 2.1e-3])
        iface += rng.choice([0, 0, 1448 * rng.randint(0, 20)])
        cur = {k: FlowSample(int(st[0]), st[1]) for k, st in sorted(flows.items())}
        out.append((t_ns * 1e-9, iface, cur))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_incremental_step_is_the_full_step_on_random_traces(seed: int) -> None:
    # C ~ 30 Mbit/s: the quota binds and the fairness cut fires; idle restarts
    # after 5 ms (every step ~126 µs), so silences restart flows
    params = IctcpParams(capacity_Bps=4e6, idle_s=5e-3, min_segs=1 + seed % 2)
    full: Ictcp[int] = Ictcp(params)
    inc: Ictcp[int] = Ictcp(params)
    windows: dict[int, int] = {}
    prev: dict[int, FlowSample] = {}
    changes = cuts = restarts = 0
    for i, (now, iface, cur) in enumerate(_trace(seed, 3000)):
        want = full.step(now, iface, cur)
        changed, gone = _changes(prev, cur)
        if i == 2999:  # the last step visits every flow: all state caught up
            changed = dict(cur)
        got = inc.step_changes(now, iface, changed, gone)
        windows = {k: w for k, w in {**windows, **got}.items() if k in cur}
        prev = cur
        assert {k: windows[k] for k in inc.flows} == want, f"step {i}"
        assert inc.flows.keys() == full.flows.keys()
        assert (inc.t_len, inc.bw_a, inc.quota, inc.second) == (
            full.t_len,
            full.bw_a,
            full.quota,
            full.second,
        ), f"step {i}"
        changes += len(changed)
    for k, f in full.flows.items():
        assert _state(inc.flows[k]) == _state(f), k
        restarts += f.restarts
    cuts = sum(1 for f in full.flows.values() if not f.slow_start)
    # the trace exercised what it is for: few flows change per step, some restart
    assert changes < 0.5 * sum(len(c) for _, _, c in _trace(seed, 3000))
    assert restarts and cuts
