"""The at-scale traffic plan (p4incast/model/atscale.py): the paper's stated
distribution and arrival process, and the documented choices, checked on
samples — no simulator needed."""

from __future__ import annotations

import random
import statistics

import pytest

from p4incast.experiments.stats import quantile_interval
from p4incast.model.atscale import (
    Fabric,
    Traffic,
    arrival_rate,
    capped_mean,
    load_of_arrival_mean,
    pareto_scale,
    plan,
    short_flow_count,
)
from p4incast.model.errors import ModelError

SMALL = Fabric(tors=4, hosts_per_tor=5)


def test_capped_mean_matches_the_integral_of_the_survival_function() -> None:
    xm, a, cap = 8000.0, 1.2, 3e6
    steps = 200_000
    # E[min(X, cap)] = integral_0^cap P(X > x) dx, P = 1 below xm, (xm/x)^a above
    h = (cap - xm) / steps
    tail = sum((xm / (xm + (i + 0.5) * h)) ** a for i in range(steps)) * h
    assert capped_mean(xm, a, cap) == pytest.approx(xm + tail, rel=1e-4)


def test_pareto_scale_gives_the_stated_mean_after_the_cap() -> None:
    t = Traffic()
    xm = pareto_scale(t.mean_bytes, t.pareto_shape, t.max_bytes)
    assert capped_mean(xm, t.pareto_shape, t.max_bytes) == pytest.approx(t.mean_bytes, rel=1e-9)
    # uncapped, mean = xm * a / (a - 1): the cap costs mean, so xm sits above 50 KB / 6
    assert xm > t.mean_bytes * (t.pareto_shape - 1) / t.pareto_shape


def test_plan_is_the_papers_traffic() -> None:
    t = Traffic(aggregators=3, short_flows=20_000, background_flows=3, background_bytes=10**6)
    p = plan(SMALL, t, 0.5, seed=7)
    aggs = set(p.aggregators)
    assert len(aggs) == 3 and all(0 <= a < SMALL.hosts for a in aggs)
    assert not aggs & set(p.src), "an aggregator never sends"
    assert set(p.dst) <= aggs
    longs = [i for i, x in enumerate(p.long) if x]
    assert len(longs) == 3 and {p.dst[i] for i in longs} == aggs
    assert all(p.nbytes[i] == 10**6 and p.start_s[i] == 0 for i in longs)
    short = p.short
    xm = pareto_scale(t.mean_bytes, t.pareto_shape, t.max_bytes)
    sizes = [p.nbytes[i] for i in short]
    assert min(sizes) >= xm and max(sizes) <= t.max_bytes
    # Pareto: P(X > 2 xm) = 2^-1.2 = 0.435
    assert sum(s > 2 * xm for s in sizes) / len(sizes) == pytest.approx(2**-1.2, abs=0.015)
    # Poisson arrivals at aggregators x load x C / (8 mean): exponential gaps with that mean
    starts = [p.start_s[i] for i in short]
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert min(gaps) >= 0
    rate = 3 * 0.5 * 1e9 / (8 * t.mean_bytes)
    assert statistics.fmean(gaps) == pytest.approx(1 / rate, rel=0.03)
    assert statistics.stdev(gaps) == pytest.approx(1 / rate, rel=0.05)  # exponential: sd = mean
    # every aggregator gets its share
    for a in aggs:
        assert sum(p.dst[i] == a for i in short) / len(short) == pytest.approx(1 / 3, abs=0.02)


def test_plan_depends_on_the_seed_only() -> None:
    t = Traffic(aggregators=2, short_flows=50, background_flows=2)
    assert plan(SMALL, t, 0.4, 3) == plan(SMALL, t, 0.4, 3)
    assert plan(SMALL, t, 0.4, 3) != plan(SMALL, t, 0.4, 4)
    # the load scales the arrival times and nothing else
    lo, hi = plan(SMALL, t, 0.2, 3), plan(SMALL, t, 0.8, 3)
    assert lo.nbytes == hi.nbytes and lo.src == hi.src and lo.dst == hi.dst
    assert lo.window_s == pytest.approx(4 * hi.window_s)


@pytest.mark.parametrize(
    ("fabric", "traffic", "load", "words"),
    [
        (SMALL, Traffic(aggregators=2), 0.0, "load"),
        (SMALL, Traffic(aggregators=2), 1.5, "load"),
        (SMALL, Traffic(aggregators=20), 0.5, "aggregators"),
        (SMALL, Traffic(aggregators=2, pareto_shape=1.0), 0.5, "pareto_shape"),
        (SMALL, Traffic(aggregators=2, mean_bytes=4e7), 0.5, "mean_bytes"),
        (Fabric(tors=0), Traffic(), 0.5, "tors"),
        (Fabric(buffer_bytes=100), Traffic(), 0.5, "buffer_bytes"),
        (SMALL, Traffic(aggregators=2, background_share=0.75), 0.5, "short_flows: 0"),
        (SMALL, Traffic(aggregators=2, short_flows=0), 0.5, "short_flows >= 1"),
        (SMALL, Traffic(aggregators=2, short_flows=0, background_share=1.0), 0.5, r"in \[0, 1\)"),
        (
            SMALL,
            Traffic(aggregators=2, short_flows=0, background_share=0.5, background_flows=0),
            0.5,
            "background_flows >= 1",
        ),
    ],
)
def test_bad_settings_name_the_setting(
    fabric: Fabric, traffic: Traffic, load: float, words: str
) -> None:
    with pytest.raises(ModelError, match=words):
        plan(fabric, traffic, load, 1)


@pytest.mark.parametrize(("q", "n"), [(50, 200), (99, 200), (99, 2000), (1, 2000)])
def test_quantile_interval_covers_the_true_quantile_at_least_95_percent(q: int, n: int) -> None:
    rng = random.Random(11)
    trials, hits, unbounded = 400, 0, 0
    true = q / 100  # Uniform(0, 1)
    for _ in range(trials):
        ci = quantile_interval([rng.random() for _ in range(n)], q)
        assert ci is not None and ci.lo <= ci.hi
        hits += ci.lo <= true <= ci.hi
        unbounded += ci.hi == float("inf")
    assert hits / trials >= 0.93, hits / trials  # >= 95 % by construction, less sampling noise
    # 200 samples cannot bound a p99 from above (0.99^200 = 13 % > 2.5 %); 2000 can
    assert unbounded == (trials if (q, n) == (99, 200) else 0)
    if (q, n) == (50, 200):
        assert hits / trials <= 0.99  # and it is not trivially wide


def test_quantile_interval_needs_two_values() -> None:
    assert quantile_interval([1.0], 50) is None


def test_background_share_sets_the_short_flows_bytes() -> None:
    """RCC §6.2: 5 background flows of 30 MB are 75 % of the bytes, so the short
    flows carry 50 MB: 1000 of the 50 KB mean; their realised share is near it."""
    paper = Traffic(short_flows=0, background_share=0.75)
    assert short_flow_count(paper) == 1000
    assert short_flow_count(Traffic()) == 2000  # without a share: short_flows
    t = Traffic(
        aggregators=2, short_flows=0, background_share=0.5, background_flows=3,
        background_bytes=10**6, max_bytes=10**6,
    )  # fmt: skip
    p = plan(SMALL, t, 0.5, seed=3)
    assert len(p.short) == 40  # 2 background flows (one per aggregator): 2 MB of short flows
    short = sum(p.nbytes[i] for i in p.short)
    assert 0.25 < 2e6 / (2e6 + short) < 0.75  # Pareto sizes: the share holds on average


def test_an_arrival_mean_is_the_load_whose_arrivals_are_that_far_apart() -> None:
    f, t = Fabric(), Traffic()
    for mean_us in (300, 700):
        load = load_of_arrival_mean(f, t, mean_us)
        assert 1 / arrival_rate(f, t, load) == pytest.approx(mean_us * 1e-6)
    # RCC's stated 300 µs over 5 aggregators: 50 KB every 300 µs is 1.33 Gbit/s, 26.7 % of 5
    assert load_of_arrival_mean(f, t, 300) == pytest.approx(0.4e6 / 300e-6 / 5e9)
    with pytest.raises(ModelError, match="must be in"):
        load_of_arrival_mean(f, t, 50)
