"""Seed 003's own simulator beside our model: the ns-2 reference (engines/ns2.py).

Seed 003 validated its model on ns-2 (§V ¶1). For the presets named in
REFERENCE, `make reproduce` runs their no-scheme baseline (the schemes listed)
a second time on ns-2 — the same points, rounds and repeats — and REPORT.md's
section of the preset shows:

- the twin table: per variant and N, goodput and the RTO-round ratio on ns-2
  and on our model, each with its 95 % interval, and the bottleneck's drops; a
  ✗ where the two disagree (reports/twin.py compare: the intervals do not
  overlap and the values are more than MIN_EFFECT apart; drops, which have no
  interval: more than 25 % apart);
- each of the preset's claims about those schemes, judged on both engines'
  rows by the same rule (reports/verdicts.py evaluate), and whose the
  divergence is (`attribute`): where ns-2 reproduces the paper's number and
  our model does not, the divergence is our model's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import twin
from .verdicts import DIVERGES, HOLDS, Verdict, evaluate

# preset stem -> the schemes that run on ns-2 too (plain TCP only: engines/ns2.py check)
REFERENCE: dict[str, tuple[str, ...]] = {
    "seed003": ("tcp",),
    "seed003-fig7": ("tcp",),
    "seed003-fig8-25": ("tcp",),
    "seed003-fig8-100": ("tcp",),
}
REF = "ns2"
METRICS = (
    ("goodput_mbps", "goodput (Mbit/s)"),
    ("rto_round_ratio", "rounds with an RTO"),
    ("drops", "bottleneck drops per run"),
)
# ns-2's runs differ only by the servers' think times, so at a point every
# round of which ends in an RTO its interval (and ours) is a fraction of a
# percent wide: two such intervals apart by less than the figures' printed
# precision (about 2 % of the value) are not a disagreement.
MIN_EFFECT = 0.02
OURS_DIVERGES = "our model's divergence: ns-2 reproduces the paper"
BOTH_DIVERGE = "both engines diverge: not our model's alone"
NS2_DIVERGES = "ns-2 diverges, our model holds"
BOTH_HOLD = "both hold"


def compare(
    ns2_rows: Sequence[Mapping[str, Any]], sim_rows: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """One row per (scheme, N) that ran on ns-2, both engines' values side by side."""
    return twin.compare(ns2_rows, sim_rows, REF, METRICS, MIN_EFFECT)


def attribute(ours: Verdict, theirs: Verdict) -> str:
    """Whose a claim's divergence is, from its verdict on our model and on ns-2
    ("" when either is inconclusive or has no data: nothing to attribute)."""
    pair = (ours.verdict, theirs.verdict)
    return {
        (DIVERGES, HOLDS): OURS_DIVERGES,
        (DIVERGES, DIVERGES): BOTH_DIVERGE,
        (HOLDS, DIVERGES): NS2_DIVERGES,
        (HOLDS, HOLDS): BOTH_HOLD,
    }.get(pair, "")


def _cell(row: Mapping[str, Any], metric: str, eng: str) -> str:
    v, ci = row.get(f"{metric}_{eng}"), row.get(f"{metric}_{eng}_ci")
    if v is None:
        return "—"
    if metric == "rto_round_ratio":
        return f"{100 * v:.0f} %" + (f" [{100 * ci[0]:.0f}, {100 * ci[1]:.0f}]" if ci else "")
    if metric == "drops":
        return f"{v:.0f}"
    return f"{v:.1f}" + (f" [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else "")


def table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The twin table (markdown lines); ✗ marks our model's cell where the two disagree."""
    head = "| scheme | N |" + "".join(f" {label}: ns-2 | ours |" for _m, label in METRICS)
    out = [head, "|---|---|" + "---|---|" * len(METRICS)]
    for r in rows:
        cells = [str(r["scheme"]), str(r["n"])]
        for metric, _label in METRICS:
            mark = " ✗" if r.get(f"{metric}_agree") is False else ""
            cells += [_cell(r, metric, REF), _cell(r, metric, "sim") + mark]
        out.append("| " + " | ".join(cells) + " |")
    n = len(rows)
    dis = [
        f"{label} {sum(1 for r in rows if r.get(f'{m}_agree') is False)}/{n}"
        for m, label in METRICS
    ]
    return [*out, "", "Disagreements (✗): " + ", ".join(dis) + "."]


def claims_table(pairs: Sequence[tuple[Verdict, Verdict]]) -> list[str]:
    """Each claim judged on our model and on ns-2, and whose a divergence is."""
    out = ["| claim | paper | ours | ns-2 | whose |", "|---|---|---|---|---|"]
    for ours, theirs in pairs:
        c = ours.claim
        where = f" ({c['variant']})" if c.get("variant") else ""
        out.append(
            f"| {c['id']}{where} | {c['text']} | {ours.ours} **{ours.verdict}** | "
            f"{theirs.ours} **{theirs.verdict}** | {attribute(ours, theirs) or '—'} |"
        )
    return out


def judge(
    claims: Sequence[Mapping[str, Any]],
    sim_rows: Sequence[Mapping[str, Any]],
    ns2_rows: Sequence[Mapping[str, Any]],
    ctx: Mapping[str, Any],
    schemes: Sequence[str],
) -> list[tuple[Verdict, Verdict]]:
    """(verdict on our model, verdict on ns-2) of each claim about `schemes` only."""
    out = []
    for c in claims:
        named = c.get("schemes") or [c.get("scheme")]
        if not all(s in schemes for s in named):
            continue
        out.append((evaluate(c, sim_rows, ctx), evaluate(c, ns2_rows, ctx)))
    return out


def section(
    variant_rows: Sequence[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]],
    pairs: Sequence[tuple[Verdict, Verdict]],
    note: str,
) -> list[str]:
    """REPORT.md's ns-2 subsection of a preset: `variant_rows` (variant, ns-2 rows,
    our rows) and the claims judged on both (`judge`); `note`: how ns-2 ran."""
    lines = ["### ns-2, seed 003's simulator, beside our model", "", note, ""]
    for variant, ns2_rows, sim_rows in variant_rows:
        if variant:
            lines += [f"Variant {variant}:", ""]
        lines += [*table(compare(ns2_rows, sim_rows)), ""]
    if pairs:
        lines += [*claims_table(pairs), ""]
        ours = [o for o, t in pairs if attribute(o, t) == OURS_DIVERGES]
        if ours:
            ids = ", ".join(str(o.claim["id"]) for o in ours)
            lines += [
                f"ns-2 reproduces what our model does not: {ids} — the divergence is our model's.",
                "",
            ]
    return lines
