"""reports/verdicts.py on constructed summary rows: each kind of claim gives the
verdict its definition says (holds / diverges / inconclusive)."""

from __future__ import annotations

from typing import Any

from p4incast.model.scheme import App, Topology, Transport
from p4incast.reports.verdicts import DIVERGES, HOLDS, INCONCLUSIVE, NO_DATA, Point, evaluate

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
    v = evaluate(claim(kind="collapse_n", scheme="tcp", lo=5, hi=15), TCP, CTX)
    assert v.verdict == HOLDS and "sharp drop at N=10" in v.ours
    assert Point("tcp", 10, "goodput_mbps", 418) in v.points  # the N that decided it
    assert Point("tcp", 10, "rto_round_ratio", 0.96) in v.points
    v = evaluate(claim(kind="collapse_n", scheme="tcp", lo=20, hi=30), TCP, CTX)
    assert v.verdict == DIVERGES and "N=10" in v.ours


def test_a_slide_or_a_drop_without_timeouts_is_not_a_sharp_drop() -> None:
    c = claim(kind="collapse_n", scheme="newdctcp", lo=20, hi=45)
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
    c = claim(kind="collapse_n", scheme="tcp", lo=5, hi=15)
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


def test_ordering_higher_and_lower() -> None:
    rows = [row("a", 10, 900), row("b", 10, 500), row("a", 20, 800), row("b", 20, 600)]
    assert evaluate(claim(kind="ordering", schemes=["a", "b"]), rows, CTX).verdict == HOLDS
    assert evaluate(claim(kind="ordering", schemes=["b", "a"]), rows, CTX).verdict == DIVERGES
    low = claim(kind="ordering", schemes=["b", "a"], lower=True)
    assert evaluate(low, rows, CTX).verdict == HOLDS


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
    rows = [row("rcc", 60, 900.0), row("dctcp", 60, 600.0), row("ictcp", 60, 800.0)]
    c = claim(kind="ordering", schemes=["rcc", "dctcp", "ictcp"])
    assert evaluate(c, rows, CTX).verdict == DIVERGES  # the full order: dctcp < ictcp
    assert evaluate({**c, "best": True}, rows, CTX).verdict == HOLDS
    behind = [row("rcc", 60, 700.0), row("dctcp", 60, 600.0), row("ictcp", 60, 800.0)]
    assert evaluate({**c, "best": True}, behind, CTX).verdict == DIVERGES
    fct = {**c, "schemes": ["rcc", "dctcp"], "best": True, "lower": True}
    assert evaluate(fct, [row("rcc", 60, 10.0), row("dctcp", 60, 30.0)], CTX).verdict == HOLDS


def test_figures_from_1000_up_print_whole() -> None:
    """A reader sees 1430 drops or an interval up to 1000, never 1.43e+03."""
    c = claim(kind="near", scheme="tcp", n=20, value=300)
    v = evaluate(c, [row("tcp", 20, 777.4, 550.2, 1004.6)], CTX)
    assert v.ours == "N=20: 777 [550, 1005]"
    o = evaluate(
        claim(kind="ordering", schemes=["a", "b"]), [row("a", 5, 1430.0), row("b", 5, 9.5)], CTX
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
    assert v.verdict == INCONCLUSIVE and "intervals overlap" in v.ours
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


def test_relative_is_the_mean_over_n_of_the_per_n_differences() -> None:
    """RCC's "47.5 % lower mean queue than TCP, on average": -40 % at N = 10 and
    -55 % at N = 20 average to -47.5 % (the ratio of the means would be -50 %)."""
    rows = [
        row("rcc", 10, 0, qdepth_mean=6.0), row("tcp", 10, 0, qdepth_mean=10.0),
        row("rcc", 20, 0, qdepth_mean=18.0), row("tcp", 20, 0, qdepth_mean=40.0),
        row("rcc", 40, 0, qdepth_mean=1.0),  # no tcp at N = 40: left out
    ]  # fmt: skip
    c = claim(kind="relative", scheme="rcc", than="tcp", metric="qdepth_mean")
    v = evaluate({**c, "value": -0.475}, rows, CTX)
    assert v.verdict == HOLDS and v.ours.startswith("mean -47.5% (N=10: -40.0%, N=20: -55.0%)")
    assert {(p.scheme, p.x) for p in v.points} == {(s, n) for s in ("rcc", "tcp") for n in (10, 20)}
    # the band is value · (1 ± NEAR_TOLERANCE): -0.44 gives [-0.484, -0.396]
    assert evaluate({**c, "value": -0.44}, rows, CTX).verdict == HOLDS
    assert evaluate({**c, "value": -0.42}, rows, CTX).verdict == DIVERGES
    assert evaluate({**c, "value": -0.475, "n_max": 10}, rows, CTX).verdict == DIVERGES
    assert evaluate({**c, "value": -0.4, "than": "dctcp"}, rows, CTX).verdict == "no data"
