"""reports/verdicts.py on constructed summary rows: each kind of claim gives the
verdict its definition says (holds / diverges / inconclusive)."""

from __future__ import annotations

from typing import Any

from p4incast.model.scheme import App, Topology, Transport
from p4incast.reports.verdicts import DIVERGES, HOLDS, INCONCLUSIVE, evaluate

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


CURVE = [row("tcp", 1, 900), row("tcp", 5, 800), row("tcp", 10, 400), row("tcp", 20, 300)]


def claim(**kw: Any) -> dict[str, Any]:
    return {"id": "c", "text": "t", **kw}


def test_collapse_n_within_the_stated_range() -> None:
    assert (
        evaluate(claim(kind="collapse_n", scheme="tcp", lo=8, hi=12), CURVE, CTX).verdict == HOLDS
    )
    v = evaluate(claim(kind="collapse_n", scheme="tcp", lo=20, hi=30), CURVE, CTX)
    assert v.verdict == DIVERGES and "N=10" in v.ours


def test_no_collapse() -> None:
    assert evaluate(claim(kind="no_collapse", scheme="tcp", n_max=5), CURVE, CTX).verdict == HOLDS
    assert (
        evaluate(claim(kind="no_collapse", scheme="tcp", n_max=20), CURVE, CTX).verdict == DIVERGES
    )


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
    c = claim(kind="near", scheme="tcp", n=10, value=420, tolerance=0.1)
    assert evaluate(c, CURVE, CTX).verdict == HOLDS
    assert evaluate({**c, "value": 600}, CURVE, CTX).verdict == DIVERGES
    peak = claim(kind="near", scheme="tcp", metric="peak_goodput_mbps", value=850, tolerance=0.1)
    assert evaluate(peak, CURVE, CTX).verdict == HOLDS  # 900 within 850 ± 85


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
    c = claim(kind="matches_bound", scheme="batched", tolerance=0.25, n_min=6)
    v = evaluate(c, [row("batched", 1, 900.0), row("batched", 8, 110.0)], CTX)
    assert v.verdict == HOLDS and "N=1 " not in v.ours and "N=8 (k=8)" in v.ours
    assert evaluate(c, [row("batched", 8, 990.0)], CTX).verdict == DIVERGES
    wide = claim(kind="matches_bound", scheme="batched", tolerance=0.25)
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
    c = claim(kind="near", scheme="tcp", n=20, value=300, tolerance=0.5)
    v = evaluate(c, [row("tcp", 20, 777.4, 550.2, 1004.6)], CTX)
    assert v.ours == "N=20: 777 [550, 1005]"
    o = evaluate(
        claim(kind="ordering", schemes=["a", "b"]), [row("a", 5, 1430.0), row("b", 5, 9.5)], CTX
    )
    assert o.ours == "mean over N: a 1430, b 9.5"
