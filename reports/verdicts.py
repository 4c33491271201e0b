"""A paper's claims, as a preset states them (experiments/claims.py: the kinds and
what each checks), checked against our summary rows.

Verdicts: `holds`; `diverges` when our value is on the wrong side even at the
edge of its 95 % interval (or has no interval); `inconclusive` when only the
mean is on the wrong side. Pure: rows in, verdicts out.

`classify` puts a paper preset's verdicts in REPORT.md's classes: holds;
diverges — explained by an ablation (experiments/papers/ablations/, which reuse
the claim ids of the preset they vary) whose own verdict flips it: the claim
holds there under the ablated setting and not under the paper's (its baseline
rows: `paper.baseline: {<variant key>: <value>, ...}` names the variant that
is the paper's setting, or a claim carries `baseline: true`); diverges —
unexplained; inconclusive and no data as they are. Computed from the verdicts
of the same report, never typed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from p4incast.model.scheme import App, Topology, Transport, batch_schedule

COLLAPSE_FRACTION = 0.5  # "drops sharply": goodput below half the scheme's own peak
HOLDS, DIVERGES, INCONCLUSIVE, NO_DATA = "holds", "diverges", "inconclusive", "no data"

Rows = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Verdict:
    claim: Mapping[str, Any]
    verdict: str
    ours: str  # our value(s), with intervals, as the report prints them


def _series(
    rows: Rows, scheme: str, metric: str, axis: str = "n"
) -> list[tuple[Any, float, Any, Any]]:
    """(x, mean, ci_lo, ci_hi) of one scheme, x ascending, rows without the metric left out."""
    out = []
    for r in rows:
        if r.get("scheme") == scheme and r.get(metric) is not None:
            out.append(
                (r[axis], float(r[metric]), r.get(f"{metric}_ci_lo"), r.get(f"{metric}_ci_hi"))
            )
    return sorted(out, key=lambda x: x[0])


def _in_range(x: float, claim: Mapping[str, Any], axis: str = "n") -> bool:
    return claim.get(f"{axis}_min", -math.inf) <= x <= claim.get(f"{axis}_max", math.inf)


def _at(axis: str, x: Any) -> str:
    """How a report names x: N=8, or a load as 30%."""
    return f"{x:.0%}" if axis == "load" else f"N={x}"


def _num(x: float) -> str:
    """Three significant digits, but whole numbers from 1000 up (1430, not 1.43e+03)."""
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def _fmt(mean: float, lo: Any, hi: Any) -> str:
    if lo is None or hi is None:
        return _num(mean)
    return f"{_num(mean)} [{_num(float(lo))}, {_num(float(hi))}]"


def _side(ok_mean: bool, ok_edge: bool) -> str:
    return HOLDS if ok_mean else INCONCLUSIVE if ok_edge else DIVERGES


def _bound(claim: Mapping[str, Any], rows: Rows, claim_ctx: Mapping[str, Any]) -> Verdict:
    """Goodput against the seed-003 closed form g: at least g (above_bound), or
    within tolerance of it (matches_bound)."""
    topo: Topology = claim_ctx["topology"]
    app: App = claim_ctx["app"]
    transport: Transport = claim_ctx["transport"]
    above = claim["kind"] == "above_bound"
    worst, parts = HOLDS, []
    for n, mean, lo, hi in _series(rows, claim["scheme"], "goodput_mbps"):
        if not _in_range(n, claim):
            continue
        plan = batch_schedule(n, topo, app, transport)
        g = plan.goodput_bound_bps / 1e6
        if above:
            band = (g, float("inf"))
        else:
            band = (g * (1 - claim["tolerance"]), g * (1 + claim["tolerance"]))
        inside = band[0] <= mean <= band[1]
        reach = lo is not None and hi is not None and float(lo) <= band[1] and float(hi) >= band[0]
        v = _side(inside, reach)
        worst = v if v != HOLDS and worst != DIVERGES else worst
        parts.append(f"N={n} (k={plan.k}): {_fmt(mean, lo, hi)} vs g {g:.0f}")
    if not parts:
        return Verdict(claim, NO_DATA, "no runs")
    return Verdict(claim, worst, "; ".join(parts))


def _ordering(claim: Mapping[str, Any], rows: Rows, axis: str) -> Verdict:
    """The schemes in the claim's order: on their means over x, or (every) at each x."""
    metric, lower = claim.get("metric", "goodput_mbps"), bool(claim.get("lower", False))

    def ordered(vals: Sequence[float]) -> bool:
        if claim.get("best"):
            return vals[0] == (min(vals) if lower else max(vals))
        return list(vals) == sorted(vals, reverse=not lower)

    per = {s: {x: m for x, m, _lo, _hi in _series(rows, s, metric, axis)} for s in claim["schemes"]}
    per = {s: {x: m for x, m in xs.items() if _in_range(x, claim, axis)} for s, xs in per.items()}
    missing = [s for s, xs in per.items() if not xs]
    if missing:
        return Verdict(claim, NO_DATA, f"no {metric} for {missing[0]}")
    if claim.get("every"):
        common = sorted(set.intersection(*(set(xs) for xs in per.values())))
        if not common:
            return Verdict(claim, NO_DATA, f"no {axis} with {metric} for every scheme")
        parts, held = [], True
        for x in common:
            vals = [per[s][x] for s in claim["schemes"]]
            held = held and ordered(vals)
            mark = "" if ordered(vals) else " ✗"
            parts.append(f"{_at(axis, x)}: " + " / ".join(f"{v:.2f}" for v in vals) + mark)
        return Verdict(claim, HOLDS if held else DIVERGES, "; ".join(parts))
    means = [(s, sum(xs.values()) / len(xs)) for s, xs in per.items()]
    ours = ", ".join(f"{s} {_num(m)}" for s, m in means)
    verdict = HOLDS if ordered([m for _s, m in means]) else DIVERGES
    return Verdict(claim, verdict, f"mean over {'N' if axis == 'n' else axis}: {ours}")


def _drops_from(claim: Mapping[str, Any], rows: Rows, axis: str) -> Verdict:
    """No drop below the claim's x, some at or above it (drops: mean per run)."""
    drops = [(x, m) for x, m, _lo, _hi in _series(rows, claim["scheme"], "drops", axis)]
    if not drops:
        return Verdict(claim, NO_DATA, "no runs")
    below = [d for x, d in drops if x < claim[axis]]
    above = [d for x, d in drops if x >= claim[axis]]
    ours = ", ".join(f"{_at(axis, x)}: {d:.0f}" for x, d in drops)
    if not below or not above:
        return Verdict(claim, INCONCLUSIVE, ours)
    return Verdict(claim, HOLDS if max(below) == 0 and max(above) > 0 else DIVERGES, ours)


def evaluate(claim: Mapping[str, Any], rows: Rows, ctx: Mapping[str, Any]) -> Verdict:
    """One claim against the summary rows of the variant it is about.

    ctx: axis (the row key x is read from: n, the default, or load); topology,
    app and transport (the variant's), needed by matches_bound and above_bound
    only (the schedule the batched scheme ran, model.scheme.batch_schedule)."""
    kind, metric = claim["kind"], claim.get("metric", "goodput_mbps")
    axis = ctx.get("axis", "n")
    if kind in ("matches_bound", "above_bound"):
        return _bound(claim, rows, ctx)
    if kind == "ordering":
        return _ordering(claim, rows, axis)
    if kind == "drops_from":
        return _drops_from(claim, rows, axis)
    series = _series(
        rows, claim["scheme"], "goodput_mbps" if metric == "peak_goodput_mbps" else metric, axis
    )
    if not series:
        return Verdict(claim, NO_DATA, "no runs")
    if kind in ("collapse_n", "no_collapse"):
        peak = max(m for _n, m, _lo, _hi in series)
        frac = claim.get("fraction", COLLAPSE_FRACTION)
        first = next((n for n, m, _lo, _hi in series if m < frac * peak), None)
        ours = (
            f"peak {peak:.0f} Mbit/s; below {frac:.0%} of it from N={first}"
            if first
            else (f"peak {peak:.0f} Mbit/s; never below {frac:.0%} of it")
        )
        if kind == "no_collapse":
            ok = first is None or first > claim["n_max"]
        else:
            ok = first is not None and claim["lo"] <= first <= claim["hi"]
        return Verdict(claim, HOLDS if ok else DIVERGES, ours)
    if kind == "near":
        if metric == "peak_goodput_mbps":
            n, mean, lo, hi = max(series, key=lambda x: x[1])
        else:
            at = [x for x in series if x[0] == claim.get(axis)]
            if not at:
                return Verdict(claim, NO_DATA, f"no run at {_at(axis, claim.get(axis))}")
            n, mean, lo, hi = at[0]
        band = (
            claim["value"] * (1 - claim["tolerance"]),
            claim["value"] * (1 + claim["tolerance"]),
        )
        inside = band[0] <= mean <= band[1]
        reach = lo is not None and hi is not None and float(lo) <= band[1] and float(hi) >= band[0]
        return Verdict(claim, _side(inside, reach), f"{_at(axis, n)}: {_fmt(mean, lo, hi)}")
    # at_least / at_most over the N range: the worst N decides
    value, worst, parts = claim["value"], HOLDS, []
    for n, mean, lo, hi in series:
        if not _in_range(n, claim, axis):
            continue
        if kind == "at_least":
            v = _side(mean >= value, hi is not None and float(hi) >= value)
        else:
            v = _side(mean <= value, lo is not None and float(lo) <= value)
        if v == DIVERGES or (v == INCONCLUSIVE and worst == HOLDS):
            worst = v
        if v != HOLDS:
            parts.append(f"{_at(axis, n)}: {_fmt(mean, lo, hi)}")
    if not parts and worst == HOLDS:
        every = "every N" if axis == "n" else f"every {axis}"
        return Verdict(
            claim, HOLDS, f"{every} in range {'>=' if kind == 'at_least' else '<='} {value}"
        )
    return Verdict(claim, worst, "; ".join(parts))


def row_label(claim: Mapping[str, Any]) -> str:
    """What tells a claim's rows of one id apart in a report: its variant, "baseline"
    for a baseline claim without one, else ""."""
    if claim.get("variant"):
        return str(claim["variant"])
    return "baseline" if claim.get("baseline") else ""


def table(shown: Sequence[tuple[Verdict, str]]) -> list[str]:
    """A report's claim table (REPORT.md, an at-scale SUMMARY.md): one row per
    (verdict, the text of its verdict column: the verdict, or its class)."""
    lines = ["| claim | paper | ours (95 % CI) | verdict |", "|---|---|---|---|"]
    for v, label in shown:
        c = v.claim
        where = f" ({row_label(c)})" if row_label(c) else ""
        text = f"(paper's setting) {c['text']}" if c.get("baseline") else c["text"]
        lines.append(f"| {c['id']}{where} | {text} | {v.ours} | **{label}** |")
    return lines


# -- a paper preset's verdicts, classed against the ablations' -----------------

EXPLAINED, UNEXPLAINED = "explained", "unexplained"
CLASSES = (HOLDS, EXPLAINED, UNEXPLAINED, INCONCLUSIVE, NO_DATA)  # the report's order


@dataclass(frozen=True)
class Classified:
    """One paper claim's verdict and its class in REPORT.md.

    cls: holds | explained | unexplained | inconclusive | no data;
    explained_by: (ablation, variant) where a claim of the same id holds;
    not_run: ablations with a claim of that id but no results for it;
    broke: (ablation, variant, claim id) where the claim holds but a claim the
    paper preset reproduces diverges, so the flip explains nothing."""

    preset: str
    verdict: Verdict
    cls: str
    explained_by: tuple[tuple[str, str], ...] = ()
    not_run: tuple[str, ...] = ()
    broke: tuple[tuple[str, str, str], ...] = ()

    @property
    def why_unexplained(self) -> str:
        """What the report adds to an unexplained divergence ("" when nothing)."""
        parts = []
        if self.not_run:
            parts.append(f"ablations not run: {', '.join(self.not_run)}")
        flips: dict[tuple[str, str], list[str]] = {}
        for abl, variant, claim in self.broke:
            flips.setdefault((abl, variant), []).append(claim)
        for (abl, variant), claims in flips.items():
            where = f"{abl} ({variant})" if variant else abl
            parts.append(f"{where} flips it but breaks {', '.join(claims)}")
        return "; ".join(parts)

    @property
    def label(self) -> str:
        """The verdict column: `diverges — explained by abl (variant)`, ... ."""
        if self.cls == EXPLAINED:
            by: dict[str, list[str]] = {}
            for abl, variant in self.explained_by:
                by.setdefault(abl, [])
                if variant and variant not in by[abl]:
                    by[abl].append(variant)
            names = [f"{a} ({', '.join(vs)})" if vs else a for a, vs in by.items()]
            return f"{DIVERGES} — explained by {'; '.join(names)}"
        if self.cls == UNEXPLAINED:
            why = self.why_unexplained
            return f"{DIVERGES} — unexplained" + (f" ({why})" if why else "")
        return self.cls


def classify(
    paper: Sequence[tuple[str, Verdict]], ablations: Sequence[tuple[str, Verdict]]
) -> list[Classified]:
    """Each paper verdict (preset, Verdict) in its class, from the ablations' verdicts
    (ablation, Verdict) of the same report. A claim that diverges is explained by an
    ablation whose own verdict flips it: a row of the same id holds there under the
    ablated setting, and the ablation's rows under the paper's setting (claims marked
    `baseline`: the variant of `paper.baseline`, or a claim with `baseline: true`) do
    not hold; an ablation with no baseline row for the id varies one setting as a
    whole, and the paper preset's own divergence is its baseline. A flip counts only
    if the ablated setting breaks nothing the preset reproduces: no claim that holds
    in `paper` diverges in that ablation's rows of the same variant (else it is named
    in `broke`). Else unexplained, naming the ablations that state that id but have
    no data for it (not run). Pure: verdicts in, classes out."""
    holding = {v.claim.get("id") for _p, v in paper if v.verdict == HOLDS}
    out = []
    for preset, v in paper:
        if v.verdict != DIVERGES:
            out.append(Classified(preset, v, v.verdict))
            continue
        same = [(a, av) for a, av in ablations if av.claim.get("id") == v.claim.get("id")]
        held: list[tuple[str, str]] = []
        broke: list[tuple[str, str, str]] = []
        for name in dict.fromkeys(a for a, _av in same):
            rows = [av for a, av in same if a == name]
            base = [av for av in rows if av.claim.get("baseline")]
            if any(av.verdict == HOLDS for av in base):
                continue  # the ablation agrees with the paper at the paper's setting: no flip
            for av in rows:
                if av.verdict != HOLDS or av.claim.get("baseline"):
                    continue
                variant = str(av.claim.get("variant") or "")
                broken = [
                    str(o.claim.get("id"))
                    for a, o in ablations
                    if a == name
                    and str(o.claim.get("variant") or "") == variant
                    and o.claim.get("id") in holding
                    and o.verdict == DIVERGES
                ]
                if broken:
                    broke += [(name, variant, b) for b in broken]
                else:
                    held.append((name, variant))
        if held:
            out.append(Classified(preset, v, EXPLAINED, explained_by=tuple(held)))
            continue
        names = list(dict.fromkeys(a for a, _av in same))
        not_run = tuple(a for a in names if all(av.verdict == NO_DATA for b, av in same if b == a))
        out.append(Classified(preset, v, UNEXPLAINED, not_run=not_run, broke=tuple(broke)))
    return out


def class_counts(classified: Sequence[Classified]) -> dict[str, int]:
    """How many claims in each class (every class present, 0 when none)."""
    counts: dict[str, int] = dict.fromkeys(CLASSES, 0)
    for c in classified:
        counts[c.cls] = counts.get(c.cls, 0) + 1
    return counts
