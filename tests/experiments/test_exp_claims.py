"""experiments/claims.py: the claims' schema a preset is checked against when it
loads — a malformed claim is refused, and every shipped preset's claims are well
formed and name variants the preset has."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from p4incast.experiments.claims import ClaimError, check_claim, claim_variants
from p4incast.experiments.config import load_all
from p4incast.reports.reproduce import presets, variant_of


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
