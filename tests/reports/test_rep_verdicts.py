"""reports/verdicts.py on constructed summary rows: each kind of claim gives the
verdict its definition says (holds / diverges / inconclusive)."""

from __future__ import annotations

from typing import Any

import pytest

from p4incast.model.scheme import App, Topology, Transport, batch_schedule
from p4incast.reports.verdicts import (
    DIVERGES,
    HOLDS,
    INCONCLUSIVE,
    NO_DATA,
    RULES,
    Point,
    Rule,
    evaluate,
    framing_limit_mbps,
    near_band,
    poisson_band,
    printed_half_unit,
)

CTX = {"topology": Topology(), "app": App(), "transport": Transport()}


def row(
    scheme: str,
    n: int,
    goodput: float,
    lo: float | None = None,
    hi: float | None = None,
    **more: Any,
) -> dict[str, Any]:
    return {
        "scheme": scheme,
        "n": n,
        "goodput_mbps": goodput,
        "goodput_mbps_ci_lo": lo,
        "goodput_mbps_ci_hi": hi,
        **more,
    }


def rto(scheme: str, n: int, goodput: float, ratio: float) -> dict[str, Any]:
    """A summary row with goodput and the ratio of rounds with an RTO."""
    return row(scheme, n, goodput, rto_round_ratio=ratio)


def claim(**kw: Any) -> dict[str, Any]:
    return {"id": "c", "text": "t", **kw}


# TCP on a clean clone (newdctcp-fig7, SRU 64 KB, 30 rounds): 776 -> 418 Mbit/s into
# N = 10 (-46 %) with an RTO in 96 % of the rounds there
TCP = [rto("tcp", 1, 850, 0.0), rto("tcp", 5, 776, 0.1), rto("tcp", 10, 418, 0.96)]
TCP += [rto("tcp", 15, 380, 1.0), rto("tcp", 20, 300, 1.0)]
# NewDCTCP, same run: a slide from 909 at N = 20 to 704 at N = 35 (-23 % over 15
# senders, no step of a quarter), an RTO in every round from N = 25
NEWDCTCP = [rto("newdctcp", 10, 900, 0.0), rto("newdctcp", 20, 909, 0.2)]
NEWDCTCP += [rto("newdctcp", 25, 850, 1.0), rto("newdctcp", 30, 780, 1.0)]
NEWDCTCP += [rto("newdctcp", 35, 704, 1.0), rto("newdctcp", 45, 690, 1.0)]


def test_a_sharp_drop_with_timeouts_in_most_rounds_is_where_goodput_drops_sharply() -> None:
    """ "TCP's goodput drops sharply from about 10 senders": -46 % in one step, 96 % RTO rounds."""
    v = evaluate(claim(kind="collapse_n", scheme="tcp", lo=5, hi=15, span=5), TCP, CTX)
    assert v.verdict == HOLDS and "sharp drop at N=10" in v.ours
    assert Point("tcp", 10, "goodput_mbps", 418) in v.points  # the N that decided it
    assert Point("tcp", 10, "rto_round_ratio", 0.96) in v.points
    v = evaluate(claim(kind="collapse_n", scheme="tcp", lo=20, hi=30, span=5), TCP, CTX)
    assert v.verdict == DIVERGES and "N=10" in v.ours


def test_a_slide_or_a_drop_without_timeouts_is_not_a_sharp_drop() -> None:
    c = claim(kind="collapse_n", scheme="newdctcp", lo=20, hi=45, span=5)
    v = evaluate(c, NEWDCTCP, CTX)
    assert v.verdict == DIVERGES and "no sharp drop" in v.ours
    assert v.points  # the steepest step, shown though it is not sharp
    quiet = [rto("tcp", 5, 776, 0.1), rto("tcp", 10, 418, 0.2)]  # the same step, few RTOs
    assert evaluate({**c, "scheme": "tcp", "lo": 5}, quiet, CTX).verdict == DIVERGES


def test_a_slow_slide_with_timeouts_in_every_round_does_not_keep_its_goodput() -> None:
    """ "NewDCTCP keeps its goodput up to about 45 senders": 909 -> 704 is no keeping."""
    v = evaluate(claim(kind="no_collapse", scheme="newdctcp", n_max=45), NEWDCTCP, CTX)
    assert v.verdict == DIVERGES
    assert "N=20's 909" in v.ours and "worst N=45" in v.ours
    assert Point("newdctcp", 20, "goodput_mbps", 909) in v.points
    assert Point("newdctcp", 45, "goodput_mbps", 690) in v.points
    assert Point("newdctcp", 25, "rto_round_ratio", 1.0) in v.points


def test_keeping_its_goodput_allows_a_rise_and_the_band_but_not_timeouts() -> None:
    rising = [rto("ictcp", 4, 600, 0.0), rto("ictcp", 20, 800, 0.03), rto("ictcp", 40, 760, 0.06)]
    c = claim(kind="no_collapse", scheme="ictcp", n_max=47)
    assert evaluate(c, rising, CTX).verdict == HOLDS  # 760 is 5 % below 800
    assert evaluate({**c, "rto_max": 0.05}, rising, CTX).verdict == DIVERGES  # 6 % > 5 %
    assert evaluate({**c, "n_max": 20}, rising, CTX).verdict == HOLDS
    fell = [*rising, rto("ictcp", 44, 700, 0.0)]  # 12.5 % below 800
    assert evaluate(c, fell, CTX).verdict == DIVERGES
    # below the band on the mean, but the interval reaches it: inconclusive
    edge = [*rising, row("ictcp", 44, 700, 650, 730, rto_round_ratio=0.0)]
    assert evaluate(c, edge, CTX).verdict == INCONCLUSIVE


def test_timeouts_in_most_rounds_break_keeping_even_at_full_goodput() -> None:
    flat = [rto("tcp", 5, 900, 0.0), rto("tcp", 10, 890, 0.7)]
    assert (
        evaluate(claim(kind="no_collapse", scheme="tcp", n_max=10), flat, CTX).verdict == DIVERGES
    )
    assert evaluate(claim(kind="no_collapse", scheme="tcp", n_max=5), flat, CTX).verdict == HOLDS


def test_collapse_kinds_need_the_rto_ratio() -> None:
    bare = [row("tcp", 5, 800), row("tcp", 10, 400)]
    assert evaluate(claim(kind="no_collapse", scheme="tcp", n_max=10), bare, CTX).verdict == NO_DATA
    c = claim(kind="collapse_n", scheme="tcp", lo=5, hi=15, span=5)
    assert evaluate(c, bare, CTX).verdict == NO_DATA


def test_at_least_uses_the_interval_for_inconclusive() -> None:
    rows = [row("a", 10, 95, 85, 105), row("a", 20, 70, 60, 80)]
    c = claim(kind="at_least", scheme="a", value=100, n_max=10)
    assert evaluate(c, rows, CTX).verdict == INCONCLUSIVE  # mean below, interval reaches 100
    assert evaluate({**c, "n_max": 20}, rows, CTX).verdict == DIVERGES  # N=20: even 80 < 100
    assert evaluate({**c, "value": 90}, rows, CTX).verdict == HOLDS


def test_at_most_on_drops() -> None:
    rows = [{"scheme": "rcc", "n": 10, "drops": 0}, {"scheme": "rcc", "n": 100, "drops": 7}]
    c = claim(kind="at_most", scheme="rcc", metric="drops", value=0)
    v = evaluate(c, rows, CTX)
    assert v.verdict == DIVERGES and "N=100" in v.ours
    assert evaluate({**c, "n_max": 10}, rows, CTX).verdict == HOLDS


def test_near_at_n_and_at_the_peak() -> None:
    c = claim(kind="near", scheme="tcp", n=10, value=420)
    v = evaluate(c, TCP, CTX)
    assert v.verdict == HOLDS and v.points == (Point("tcp", 10, "goodput_mbps", 418),)
    assert evaluate({**c, "value": 600}, TCP, CTX).verdict == DIVERGES
    peak = claim(kind="near", scheme="tcp", metric="peak_goodput_mbps", value=850)
    v = evaluate(peak, TCP, CTX)
    assert v.verdict == HOLDS and v.points == (Point("tcp", 1, "goodput_mbps", 850),)


def ci(scheme: str, n: int, goodput: float, hw: float = 10.0) -> dict[str, Any]:
    """A goodput row with a 95 % interval of half width hw."""
    return row(scheme, n, goodput, goodput - hw, goodput + hw)


def test_ordering_higher_and_lower() -> None:
    rows = [ci("a", 10, 900), ci("b", 10, 500), ci("a", 20, 800), ci("b", 20, 600)]
    assert evaluate(claim(kind="ordering", schemes=["a", "b"]), rows, CTX).verdict == HOLDS
    assert evaluate(claim(kind="ordering", schemes=["b", "a"]), rows, CTX).verdict == DIVERGES
    low = claim(kind="ordering", schemes=["b", "a"], lower=True)
    assert evaluate(low, rows, CTX).verdict == HOLDS


def test_an_ordering_without_intervals_is_inconclusive_at_best() -> None:
    """Jain's index, queue p95 and drops had no interval: 0.993 vs 0.984 "held" on any
    difference. Without one it cannot hold; a reversal beyond the effect still diverges."""
    rows = [
        {"scheme": "newdctcp", "n": 10, "jain": 0.993},
        {"scheme": "dctcp", "n": 10, "jain": 0.884},
    ]
    c = claim(kind="ordering", schemes=["newdctcp", "dctcp"], metric="jain")
    v = evaluate(c, rows, CTX)
    assert v.verdict == INCONCLUSIVE and "no interval" in v.ours
    assert evaluate({**c, "schemes": ["dctcp", "newdctcp"]}, rows, CTX).verdict == DIVERGES


def test_an_ordering_needs_the_minimum_effect_of_its_metric() -> None:
    """newdctcp-fig9a newdctcp-stays-ahead on our run: 938 ±0.171 vs 937 ±0.319 Mbit/s.
    The intervals are apart, but 1 Mbit/s is far below 3 % of 938 (28.1): even the
    intervals' edge (1.49) falls short of it, so the order is not there: diverges."""
    rows = [row("newdctcp", 40, 938, 937.829, 938.171), row("dctcp", 40, 937, 936.681, 937.319)]
    c = claim(kind="ordering", schemes=["newdctcp", "dctcp"])
    assert evaluate(c, rows, CTX).verdict == DIVERGES
    # the same two at 30 Mbit/s apart (3.2 % of 938 >= 3 %): holds
    rows[1] = row("dctcp", 40, 908, 907.681, 908.319)
    assert evaluate(c, rows, CTX).verdict == HOLDS
    # 30 apart but the intervals overlap (half widths 0.171 + 38): inconclusive
    rows[1] = row("dctcp", 40, 908, 870, 946)
    assert evaluate(c, rows, CTX).verdict == INCONCLUSIVE
    # 23 apart, below the effect, but the intervals' edge (23 + 10.2) reaches it: inconclusive
    rows[1] = row("dctcp", 40, 915, 905, 925)
    assert evaluate(c, rows, CTX).verdict == INCONCLUSIVE


def test_above_bound_reads_g_as_the_guaranteed_goodput_at_every_n() -> None:
    # Seed 003: T and T~ are upper bounds, so goodput >= g wherever nothing is lost,
    # N = 1 (one batch, g ~ 117 Mbit/s: T counts a full buffer per slow-start round)
    # included; 64 KB buffer, 1 Gbit/s, SRU 64 KB: g(N=8) ~ 106 Mbit/s
    c = claim(kind="above_bound", scheme="batched")
    v = evaluate(c, [row("batched", 1, 900.0), row("batched", 8, 110.0)], CTX)
    assert v.verdict == HOLDS and "N=1 (k=1)" in v.ours and "N=8 (k=" in v.ours
    assert evaluate(c, [row("batched", 8, 990.0)], CTX).verdict == HOLDS
    assert evaluate(c, [row("batched", 8, 60.0)], CTX).verdict == DIVERGES


def test_matches_bound_holds_within_tolerance_over_its_n_range() -> None:
    # 64 KB buffer, 1 Gbit/s, SRU 64 KB: g(N=8) ~ 106 Mbit/s; N = 1 (g ~ 117, a full
    # buffer of queueing per slow-start round in T) is left out by n_min
    c = claim(kind="matches_bound", scheme="batched", n_min=6)
    v = evaluate(c, [row("batched", 1, 900.0), row("batched", 8, 110.0)], CTX)
    assert v.verdict == HOLDS and "N=1 " not in v.ours and "N=8 (k=8)" in v.ours
    assert evaluate(c, [row("batched", 8, 990.0)], CTX).verdict == DIVERGES
    wide = claim(kind="matches_bound", scheme="batched")
    assert evaluate(wide, [row("batched", 1, 900.0)], CTX).verdict == DIVERGES


def test_ordering_best_needs_only_the_first_to_lead() -> None:
    # "RCC has the best goodput": the others may come in any order
    rows = [ci("rcc", 60, 900.0), ci("dctcp", 60, 600.0), ci("ictcp", 60, 800.0)]
    c = claim(kind="ordering", schemes=["rcc", "dctcp", "ictcp"])
    assert evaluate(c, rows, CTX).verdict == DIVERGES  # the full order: dctcp < ictcp
    assert evaluate({**c, "best": True}, rows, CTX).verdict == HOLDS
    behind = [ci("rcc", 60, 700.0), ci("dctcp", 60, 600.0), ci("ictcp", 60, 800.0)]
    assert evaluate({**c, "best": True}, behind, CTX).verdict == DIVERGES
    fct = {**c, "schemes": ["rcc", "dctcp"], "best": True, "lower": True}
    fast = [ci("rcc", 60, 10.0, 1.0), ci("dctcp", 60, 30.0, 1.0)]
    assert evaluate(fct, fast, CTX).verdict == HOLDS


def test_figures_from_1000_up_print_whole() -> None:
    """A reader sees 1430 drops or an interval up to 1000, never 1.43e+03."""
    c = claim(kind="near", scheme="tcp", n=20, value=300)
    v = evaluate(c, [row("tcp", 20, 777.4, 550.2, 1004.6)], CTX)
    assert v.ours == "N=20: 777 [550, 1005] (band 270-330)"
    o = evaluate(
        claim(kind="ordering", schemes=["a", "b"]),
        [row("a", 5, 1430.0, 1430.0, 1430.0), row("b", 5, 9.5, 9.5, 9.5)],
        CTX,
    )
    assert o.ours == "mean over N: a 1430, b 9.5"


def ratio(scheme: str, n: int, mean: float, lo: float, hi: float) -> dict[str, Any]:
    """A row of the ratio of rounds with an RTO, with its 95 % interval."""
    return {
        "scheme": scheme,
        "n": n,
        "rto_round_ratio": mean,
        "rto_round_ratio_ci_lo": lo,
        "rto_round_ratio_ci_hi": hi,
    }


FEWER = claim(kind="ordering", schemes=["newdctcp", "dctcp"], metric="rto_round_ratio", lower=True)


def test_fewer_with_overlapping_intervals_is_inconclusive() -> None:
    """ "NewDCTCP has fewer timeouts than DCTCP" on 0.685 vs 0.702: not a real difference."""
    rows = [ratio("newdctcp", 20, 0.685, 0.62, 0.75), ratio("dctcp", 20, 0.702, 0.64, 0.76)]
    v = evaluate(FEWER, rows, CTX)
    assert v.verdict == INCONCLUSIVE and "not apart" in v.ours
    assert {p.scheme: p.value for p in v.points} == {"newdctcp": 0.685, "dctcp": 0.702}
    assert all(p.x == (20, 20) and p.metric == "rto_round_ratio" for p in v.points)


def test_fewer_holds_or_diverges_when_the_intervals_are_apart() -> None:
    apart = [ratio("newdctcp", 20, 0.20, 0.15, 0.25), ratio("dctcp", 20, 0.70, 0.64, 0.76)]
    assert evaluate(FEWER, apart, CTX).verdict == HOLDS
    swapped = [ratio("newdctcp", 20, 0.70, 0.64, 0.76), ratio("dctcp", 20, 0.20, 0.15, 0.25)]
    assert evaluate(FEWER, swapped, CTX).verdict == DIVERGES


def test_the_interval_of_a_mean_over_n_narrows_with_more_n() -> None:
    # each N's intervals overlap (half widths 0.05, gap 0.08), but the means over four
    # N have half widths 0.05 / sqrt(4) = 0.025 each: apart
    rows = []
    for n in (10, 20, 30, 40):
        rows += [ratio("newdctcp", n, 0.50, 0.45, 0.55), ratio("dctcp", n, 0.58, 0.53, 0.63)]
    assert evaluate(FEWER, rows, CTX).verdict == HOLDS
    every = evaluate({**FEWER, "every": True}, rows, CTX)
    assert every.verdict == INCONCLUSIVE
    assert {p.x for p in every.points} == {10}  # the first N that decided it


def test_the_best_needs_a_real_lead_over_each_other() -> None:
    c = claim(kind="ordering", best=True, schemes=["rcc", "dctcp", "tcp"])
    rows = [row("rcc", 60, 900, 880, 920), row("dctcp", 60, 890, 870, 910)]
    rows += [row("tcp", 60, 300, 280, 320)]
    assert evaluate(c, rows, CTX).verdict == INCONCLUSIVE
    rows[1] = row("dctcp", 60, 700, 680, 720)
    assert evaluate(c, rows, CTX).verdict == HOLDS


def test_every_other_kind_names_its_deciding_point() -> None:
    rows = [row("a", 10, 95, 85, 105), row("a", 20, 70, 60, 80)]
    v = evaluate(claim(kind="at_least", scheme="a", value=100), rows, CTX)
    assert v.points == (Point("a", 20, "goodput_mbps", 70),)  # the worst N
    drops = [{"scheme": "rcc", "load": x, "drops": d} for x, d in ((0.4, 0), (0.6, 3), (0.8, 9))]
    v = evaluate(claim(kind="drops_from", scheme="rcc", load=0.6), drops, {**CTX, "axis": "load"})
    assert v.verdict == HOLDS
    assert v.points == (Point("rcc", 0.4, "drops", 0), Point("rcc", 0.6, "drops", 3))
    b = evaluate(claim(kind="above_bound", scheme="batched"), [row("batched", 8, 110.0)], CTX)
    assert b.points == (Point("batched", 8, "goodput_mbps", 110.0),)


def test_relative_is_the_ratio_of_the_means() -> None:
    """RCC's "47.5 % lower mean queue than TCP": RCC 6 and 18 (mean 12) against TCP
    10 and 40 (mean 25) over N = 10, 20 is 12 / 25 - 1 = -52 % (the mean of the per-N
    ratios, -40 % and -55 %, would be -47.5 %, which weighs N = 10 as much as N = 20)."""
    rows = [
        row("rcc", 10, 0, qdepth_mean=6.0), row("tcp", 10, 0, qdepth_mean=10.0),
        row("rcc", 20, 0, qdepth_mean=18.0), row("tcp", 20, 0, qdepth_mean=40.0),
        row("rcc", 40, 0, qdepth_mean=1.0),  # no tcp at N = 40: left out
    ]  # fmt: skip
    c = claim(kind="relative", scheme="rcc", than="tcp", metric="qdepth_mean")
    v = evaluate({**c, "value": -0.52}, rows, CTX)
    assert v.verdict == HOLDS and v.ours.startswith("ratio of means -52.0%")
    assert {(p.scheme, p.x) for p in v.points} == {(s, n) for s in ("rcc", "tcp") for n in (10, 20)}
    # the band is value · (1 ± NEAR_TOLERANCE): -0.475 gives [-0.5225, -0.4275]: -0.52 in
    assert evaluate({**c, "value": -0.475}, rows, CTX).verdict == HOLDS
    assert evaluate({**c, "value": -0.44}, rows, CTX).verdict == DIVERGES  # [-0.484, -0.396]
    assert evaluate({**c, "value": -0.475, "n_max": 10}, rows, CTX).verdict == DIVERGES  # -40 %
    assert evaluate({**c, "value": -0.4, "than": "dctcp"}, rows, CTX).verdict == "no data"


# -- issue 46 item 4: each rule fails both ways -----------------------------------

# seed003.yaml's settings (§V ¶1, §II ¶4; 1000-B segments), which its closed form uses
SEED003 = {
    "topology": Topology(rto_min_ms=200, link_gbps=1.0, delay_us=25, buffer_bytes=32768),
    "app": App(sru_bytes=10000, mode="per-server", rounds=3, jitter_us=20),
    "transport": Transport(init_cwnd=1, delayed_ack=False, mss_bytes=1000),
}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_each_rule_holds_for_one_of_our_claims_and_fails_for_another(rule: Rule) -> None:
    """The report's rule table (verdicts.rule_table): the holding example holds, the
    failing one diverges (our runs' numbers, verdicts.RULES)."""
    for ex in (rule.holds, rule.fails):
        assert evaluate(ex.claim, ex.rows, ex.ctx or {}).verdict == ex.expect, ex.label
    assert rule.holds.expect == HOLDS and rule.fails.expect == DIVERGES


def test_the_printed_precision_is_half_a_unit_of_the_last_digit() -> None:
    assert printed_half_unit(39, "goodput_mbps") == 0.5
    assert printed_half_unit(0.3, "goodput_mbps") == pytest.approx(0.05)
    assert printed_half_unit(0.06, "rto_round_ratio") == pytest.approx(0.005)
    assert printed_half_unit(900, "goodput_mbps") == 0.5
    assert printed_half_unit(0, "drops") == 0.0  # a zero is exact
    assert printed_half_unit(7, "drops") == 0.0  # and a count stated whole
    assert printed_half_unit(0.0, "rto_round_ratio") == 0.0  # "no timeout"
    assert printed_half_unit(0.5, "rto_round_ratio") == pytest.approx(0.005)  # 50 %
    # "does not exceed 39" (seed 003 §V-C ¶3): 39.2 holds, 39.6 does not
    c = claim(kind="at_most", scheme="tcp", value=39)
    assert evaluate(c, [row("tcp", 25, 39.2)], CTX).verdict == HOLDS
    assert evaluate(c, [row("tcp", 25, 39.6)], CTX).verdict == DIVERGES
    drops = claim(kind="at_most", scheme="rcc", metric="drops", value=0)
    assert evaluate(drops, [{"scheme": "rcc", "n": 10, "drops": 0.4}], CTX).verdict == DIVERGES


def test_about_a_count_takes_a_poisson_band_near_zero() -> None:
    """Poisson(1): P(K <= 2) = 0.920, P(K <= 3) = 0.981, so 95 % of counts are 0..3;
    Poisson(64): 49..80 (tabulated quantiles), wider than 64 ± 10 % (57.6..70.4)."""
    assert poisson_band(1) == (0, 3)
    assert poisson_band(64) == (49, 80)
    assert poisson_band(0) == (0, 0)
    assert near_band(1, "drops", {}) == (0, 3)
    assert near_band(0.3, "goodput_mbps", {}) == pytest.approx((0.25, 0.35))  # precision
    assert near_band(600, "goodput_mbps", {}) == pytest.approx((540, 660))


def test_about_a_goodput_stops_at_the_framing_limit() -> None:
    """1 GbE, 1448-B segments in 1538 wire bytes: 1000 * 1448 / 1538 = 941.5 Mbit/s."""
    cap = 1000 * 1448 / 1538
    assert framing_limit_mbps(CTX) == pytest.approx(cap)
    assert near_band(900, "goodput_mbps", CTX) == pytest.approx((810, cap))  # 990 cut
    # a paper number past the limit is read as the limit: 10 % below it
    assert near_band(981, "goodput_mbps", CTX) == pytest.approx((0.9 * cap, cap))


def test_a_sharp_drop_is_judged_over_the_span_not_the_grid() -> None:
    """-16 % then -11 % over two steps of 5 is -25 % over 10: with the paper's span of
    10 senders it is sharp at N = 40 whichever grid took it; with a span of 5 it is not."""
    two = [rto("dctcp", 30, 911, 1.0), rto("dctcp", 35, 765, 1.0), rto("dctcp", 40, 683, 1.0)]
    one = [rto("dctcp", 30, 911, 1.0), rto("dctcp", 40, 683, 1.0)]
    c = claim(kind="collapse_n", scheme="dctcp", lo=35, hi=45, span=10)
    assert evaluate(c, two, CTX).verdict == HOLDS
    assert evaluate(c, one, CTX).verdict == HOLDS
    assert evaluate({**c, "span": 5}, two, CTX).verdict == DIVERGES
    # a grid coarser than the span: found against an older run, inconclusive
    assert evaluate({**c, "span": 5}, one, CTX).verdict == INCONCLUSIVE


def test_alike_compares_two_curves_point_by_point() -> None:
    """NewDCTCP at SRU 64 and 128 KB "the same up to about 45 senders"."""
    rows = [ci("newdctcp", 20, 920), ci("newdctcp@sru128k", 20, 900)]
    rows += [ci("newdctcp", 40, 710), ci("newdctcp@sru128k", 40, 900)]
    c = claim(kind="alike", schemes=["newdctcp", "newdctcp@sru128k"], n_max=45)
    assert evaluate({**c, "n_max": 20}, rows, CTX).verdict == HOLDS  # 2 % apart
    v = evaluate(c, rows, CTX)
    assert v.verdict == DIVERGES and "N=40" in v.ours  # 21 % apart
    assert v.points == (Point("newdctcp", 40, "goodput_mbps", 710),
                        Point("newdctcp@sru128k", 40, "goodput_mbps", 900))  # fmt: skip


def test_a_closed_form_number_is_checked_against_our_closed_form() -> None:
    """Seed 003 §V-A ¶2: 203 and 162 Mbit/s at N = 15, 16 against our g (200.7 and
    160.4, tests/experiments/test_exp_seed003.py); no runs enter."""
    ctx = SEED003
    c = claim(kind="closed_form", n=15, value=203)
    v = evaluate(c, [], ctx)
    assert v.verdict == HOLDS and "200.7" in v.ours
    assert evaluate({**c, "n": 16, "value": 162}, [], ctx).verdict == HOLDS
    assert evaluate({**c, "n": 16}, [], ctx).verdict == DIVERGES  # 203 is not g at 16


def test_the_gap_to_the_closed_form_diminishes() -> None:
    """Gaps |goodput - g| / g of 40 % at N <= 5 and about 5 % above: diminishes; the
    other way round it does not."""
    ctx = SEED003
    g = {n: batch_schedule(n, ctx["topology"], ctx["app"], ctx["transport"]).goodput_bound_bps / 1e6
         for n in (2, 4, 20, 40)}  # fmt: skip
    rows = [ci("batched", n, g[n] * (1.4 if n <= 5 else 1.05), 1.0) for n in g]
    c = claim(kind="gap_diminishes", scheme="batched", n_split=5)
    assert evaluate(c, rows, ctx).verdict == HOLDS
    rows = [ci("batched", n, g[n] * (1.05 if n <= 5 else 1.4), 1.0) for n in g]
    assert evaluate(c, rows, ctx).verdict == DIVERGES


def test_grows_needs_the_last_above_the_first_and_no_clear_fall() -> None:
    """NewDCTCP §5.2 on Fig. 8: "the FCT grows with the senders"."""

    def fct(n: int, ms: float) -> dict[str, Any]:
        return {"scheme": "tcp", "n": n, "fct_mean_ms": ms, "fct_mean_ms_ci_lo": ms - 0.1,
                "fct_mean_ms_ci_hi": ms + 0.1}  # fmt: skip

    c = claim(kind="grows", scheme="tcp", metric="fct_mean_ms")
    assert evaluate(c, [fct(10, 2.0), fct(30, 5.0), fct(50, 9.0)], CTX).verdict == HOLDS
    v = evaluate(c, [fct(10, 2.0), fct(30, 6.0), fct(50, 4.0)], CTX)
    assert v.verdict == DIVERGES and "falls N=30->50" in v.ours  # a clear fall
    assert evaluate(c, [fct(10, 5.0), fct(50, 2.0)], CTX).verdict == DIVERGES
    flat = [fct(10, 5.0), {**fct(50, 5.02), "fct_mean_ms_ci_lo": None}]
    assert evaluate(c, flat, CTX).verdict == DIVERGES  # 0.02 + 0.1 < 3 % of 5.02


def test_about_x_over_a_range_is_every_x_in_the_band() -> None:
    """Seed 003 §V-A ¶2: "converges to about 200 Mbit/s" from N = 50: each N within
    200 ± 10 % (180-220); the N furthest from 200 is shown."""
    c = claim(kind="near", scheme="batched", value=200, n_min=50)
    rows = [row("batched", 40, 150.0), row("batched", 50, 190.0), row("batched", 60, 214.0)]
    v = evaluate(c, rows, CTX)
    assert v.verdict == HOLDS and v.points == (Point("batched", 60, "goodput_mbps", 214.0),)
    rows.append(row("batched", 70, 230.0))
    assert evaluate(c, rows, CTX).verdict == DIVERGES


def test_incast_sets_in_earlier_where_its_onset_is_at_fewer_senders() -> None:
    """ICTCP §VII-A ¶2: with more data per sender, fewer senders trigger incast. The
    onset (verdicts.INCAST_ONSET) by hand: 256 KB falls from 935 to 924 ±12 at N = 16
    (11 < 3 % of 935 = 28.05: no) and to 900 ±10 at N = 24 with an RTO (35 > 11 and
    >= 28.05: the onset); 64 KB first falls at N = 32 (932 -> 884 ±13, 48 > 14)."""

    def pt(v: str, n: int, g: float, hw: float, r: float) -> dict[str, Any]:
        return {**row(f"tcp@{v}", n, g, g - hw, g + hw), "rto_round_ratio": r}

    big = [pt("sru256k", 8, 935, 1, 0.0), pt("sru256k", 16, 924, 12, 0.02),
           pt("sru256k", 24, 900, 10, 0.05)]  # fmt: skip
    small = [pt("sru64k", 8, 917, 1, 0.0), pt("sru64k", 16, 928, 1, 0.0),
             pt("sru64k", 24, 932, 1, 0.0), pt("sru64k", 32, 884, 13, 0.06)]  # fmt: skip
    c = claim(kind="earlier", schemes=["tcp@sru256k", "tcp@sru64k"])
    v = evaluate(c, big + small, CTX)
    assert v.verdict == HOLDS and "tcp@sru256k N=24" in v.ours and "tcp@sru64k N=32" in v.ours
    assert v.points == (Point("tcp@sru256k", 24, "goodput_mbps", 900),
                        Point("tcp@sru64k", 32, "goodput_mbps", 884))  # fmt: skip
    reverse = claim(kind="earlier", schemes=["tcp@sru64k", "tcp@sru256k"])
    assert evaluate(reverse, big + small, CTX).verdict == DIVERGES
    # the same N: one step of the grid cannot order the two
    same = small[:3] + [pt("sru64k", 24, 890, 10, 0.05)]
    assert evaluate(c, big + same, CTX).verdict == INCONCLUSIVE
    # a fall without a timeout is no onset: 64 KB then sets in beyond N = 32
    calm = small[:3] + [pt("sru64k", 32, 884, 13, 0.0)]
    assert evaluate(c, big + calm, CTX).verdict == HOLDS
    assert evaluate(reverse, big + calm, CTX).verdict == DIVERGES  # 64 KB never sets in
    assert evaluate(c, big, CTX).verdict == NO_DATA


def test_the_zigzag_steps_diminish() -> None:
    """Seed 003 §V-A ¶2: the sudden decreases of goodput shrink as N grows. Falls by
    hand across N = 5m -> 5m + 1: 202 - 120.6 = 81.4, 201 - 147.1 = 53.9,
    200.7 - 160.4 = 40.3, 200.5 - 168.3 = 32.2 (each ±0.71): diminishing."""
    pts = {5: 202.0, 6: 120.6, 10: 201.0, 11: 147.1, 15: 200.7, 16: 160.4, 20: 200.5, 21: 168.3}
    rows = [row("batched", n, g, g - 0.5, g + 0.5) for n, g in pts.items()]
    c = claim(kind="steps_diminish", scheme="batched", n_min=5)
    v = evaluate(c, rows, CTX)
    assert v.verdict == HOLDS and "N=5->6 81.4" in v.ours and "N=20->21 32.2" in v.ours
    # a later step falling further (200.5 -> 140.5: 60 after 40.3) breaks it
    worse = [r if r["n"] != 21 else row("batched", 21, 140.5, 140.0, 141.0) for r in rows]
    v = evaluate(c, worse, CTX)
    assert v.verdict == DIVERGES and "at N=20" in v.ours
    # falls of one size throughout do not diminish
    even = [row("batched", n, 200.0 if n % 5 == 0 else 160.0, None, None) for n in pts]
    assert evaluate(c, even, CTX).verdict == DIVERGES
    assert evaluate(c, rows[:2], CTX).verdict == NO_DATA  # one step only
