"""experiments/claims.py: the claims' schema a preset is checked against when it
loads — a malformed claim is refused, and every shipped preset's claims are well
formed and name variants the preset has."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from p4incast.experiments.claims import ClaimError, check_claim, claim_variants
from p4incast.experiments.config import load_all
from p4incast.reports.reproduce import ABLATIONS, presets, variant_of
from p4incast.reports.verdicts import MIN_EFFECT


def claim(**kw: Any) -> dict[str, Any]:
    return {"id": "c", "text": "t", **kw}


@pytest.mark.parametrize(
    "bad",
    [
        {"id": "x"},
        claim(kind="sideways"),
        claim(kind="collapse_n", scheme="tcp", lo=1),
        # the collapse kinds read the paper's words by fixed rules (reports/verdicts.py)
        claim(kind="collapse_n", scheme="tcp", lo=1, hi=5, fraction=0.5),
        claim(kind="no_collapse", scheme="tcp", n_max=10, rto_max=1.5),
        claim(kind="collapse_n", scheme="tcp", lo=1, hi=5, rto_max=0.1),
        claim(kind="relative", scheme="rcc", value=-0.5),  # than whom?
    ],
)
def test_malformed_claims_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ClaimError):
        check_claim(bad, "paper.claims[0]")


@pytest.mark.parametrize("path", presets(), ids=lambda p: p.stem)
def test_shipped_presets_claims_name_their_variants(path: Path) -> None:
    exps = load_all(path)
    assert exps[0].paper is not None and exps[0].paper.claims
    names = {variant_of(e, path.stem) for e in exps}
    for c in exps[0].paper.claims:
        assert claim_variants(c, sorted(names)), c["id"]  # raises if it names none
    for key in exps[0].paper.reference:
        assert key in names, key


def test_a_claim_names_a_variant_or_a_list_of_them() -> None:
    two_axes = ["rto_min_ms10-sru64k", "rto_min_ms10-sru128k", "rto_min_ms200-sru64k"]
    assert claim_variants({"id": "a"}, two_axes) == two_axes
    assert claim_variants({"id": "a", "variant": "rto_min_ms10-sru128k"}, two_axes) == [
        "rto_min_ms10-sru128k"
    ]
    both = {"id": "a", "variant": ["rto_min_ms200-sru64k", "rto_min_ms10-sru64k"]}
    assert claim_variants(both, two_axes) == ["rto_min_ms10-sru64k", "rto_min_ms200-sru64k"]
    with pytest.raises(ValueError, match="'sru64k'"):
        claim_variants({"id": "a", "variant": "sru64k"}, two_axes)  # a label, whole
    with pytest.raises(ValueError, match="rto_min_ms200-sru128k"):
        claim_variants({"id": "a", "variant": ["rto_min_ms200-sru128k"]}, two_axes)


# What a kind reads when it names no metric of its own (reports/verdicts.py).
GOODPUT_KINDS = ("collapse_n", "no_collapse", "above_bound", "matches_bound", "closed_form")


def _metric(c: dict[str, Any]) -> str:
    if c["kind"] in GOODPUT_KINDS or c["kind"] == "gap_diminishes":
        return "goodput_mbps"
    m = str(c.get("metric", "goodput_mbps"))
    return "goodput_mbps" if m == "peak_goodput_mbps" else m


PAPER_PRESETS = [p for p in presets() if p.parent != ABLATIONS]


@pytest.mark.parametrize("path", PAPER_PRESETS, ids=lambda p: p.stem)
def test_a_claim_reads_the_metric_its_figure_plots(path: Path) -> None:
    """Each paper claim names its figure (or "text": a statement with no figure) and
    reads the metric the preset says that figure's axis plots (paper.plots): a
    claim on p99 where the figure is read as the mean fails here."""
    paper = load_all(path)[0].paper
    assert paper is not None and paper.plots, f"{path.stem}: no paper.plots"
    for c in paper.claims:
        fig = str(c.get("figure"))
        assert fig in paper.plots, f"{c['id']}: figure {fig!r} not in paper.plots"
        assert _metric(c) in paper.plots[fig], f"{c['id']}: {_metric(c)} is not what {fig} plots"


def test_a_claim_on_another_metric_than_its_figure_fails_the_check() -> None:
    """The check above on a claim that reads p99 where Fig. 8 is read as the mean."""
    plots = {"8": ["fct_mean_ms"]}
    bad = claim(kind="ordering", figure=8, schemes=["a", "b"], metric="fct_p99_ms")
    assert _metric(bad) not in plots[str(bad["figure"])]
    good = {**bad, "metric": "fct_mean_ms"}
    assert _metric(good) in plots[str(good["figure"])]


@pytest.mark.parametrize("path", presets(), ids=lambda p: p.stem)
def test_orderings_have_a_minimum_effect_and_scheme_at_variant_exists(path: Path) -> None:
    """Every compared metric has its minimum effect (verdicts.MIN_EFFECT), and a
    scheme@variant names a scheme and a variant of the same preset."""
    exps = load_all(path)
    variants = {variant_of(e, path.stem) for e in exps}
    schemes = {s.name for s in exps[0].schemes} if hasattr(exps[0], "schemes") else set()
    for c in exps[0].paper.claims if exps[0].paper else ():
        if c["kind"] in ("ordering", "grows", "earlier", "steps_diminish"):
            assert c.get("metric", "goodput_mbps") in MIN_EFFECT, c["id"]
        for name in [c.get("scheme"), c.get("than"), *c.get("schemes", [])]:
            if name and "@" in str(name):
                scheme, variant = str(name).split("@")
                assert variant in variants, f"{c['id']}: no variant {variant}"
                assert not schemes or scheme in schemes, f"{c['id']}: no scheme {scheme}"
