"""A paper's claims, as a preset states them (experiments/claims.py: the kinds and
what each checks), checked against our summary rows.

Verdicts: `holds`; `diverges` when our value is on the wrong side even at the
edge of its 95 % interval (or has no interval); `inconclusive` when only the
mean is on the wrong side. Pure: rows in, verdicts out. Every verdict names the
points that decided it (`Verdict.points`: scheme, x, metric, value), which the
report's figure marks (plots.reference_plot).

What a paper's words are taken to mean, once each (the kinds: experiments/claims.py):

- "keeps its goodput", "stays high", "no collapse" (no_collapse): at every N up
  to n_max the goodput is within KEEP_BAND of the best it reached at fewer
  senders, and at no such N does an RTO hit more than `rto_max` of the rounds
  (RTO_MAX unless the claim says less, as where a paper shows a number).
- "drops sharply from about N" (collapse_n): the first N whose goodput is at
  least SHARP_DROP below the previous N's, with an RTO in most rounds
  (over FREQUENT_RTO) at that N, lies in [lo, hi].
- "fewer", "lower", "lowest", "ahead of", "the best" (ordering): in the stated
  order on the means, and each difference real: the 95 % intervals of the two
  means do not overlap (ORDERING_RULE).
- "about X", "~X", "X % lower" (near, relative): within NEAR_TOLERANCE of X;
  "good agreement" with the closed form (matches_bound): within BOUND_TOLERANCE.

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

# "Keeps its goodput" (no_collapse): no N up to n_max falls more than this fraction
# below the best goodput of the scheme at fewer senders. The same 10 % band the
# presets give a number a paper states as "about"/"around" (the `near` claims,
# e.g. NewDCTCP §5.2 "around 850 Mbps" for TCP's peak, ICTCP §VII 741 Mb/s at
# 40 senders): a fall larger than what "about" allows is a drop a reader of the
# figure would see, which "keeps" rules out (NewDCTCP §5.2 on Fig. 7a: its goodput
# the same at SRU 64 and 128 KB up to about 45 senders while TCP's and DCTCP's
# drop; ICTCP §VII on Fig. 8: goodput smooth and increasing with the senders).
# Measured from the running best, not the overall peak, so a curve that rises
# (ICTCP's) keeps, and a slow slide does not.
KEEP_BAND = 0.10
# Timeouts in most rounds: the papers name frequent retransmission timeouts as
# what incast collapse is (NewDCTCP §2 and §3: the throughput falls because of
# frequent timeouts; ICTCP §VII on Fig. 9: TCP has at least one timeout in a
# round once incast congestion sets in). Over this ratio of rounds with an RTO,
# a scheme has collapsed in the papers' sense whatever its goodput: "drops
# sharply" needs it at the drop, and "keeps its goodput" rules it out by default.
FREQUENT_RTO = 0.5
# "Keeps its goodput": the most rounds with an RTO allowed at any N up to n_max,
# unless the claim's `rto_max` states the paper's own (ICTCP's Fig. 9: 6 %).
RTO_MAX = FREQUENT_RTO
# "Drops sharply / a sudden drop from about N" (collapse_n): the step into N loses
# at least this fraction of the previous N's goodput. The drops the papers call
# sudden or sharp take goodput to a half or a third of its peak (NewDCTCP §5.2:
# DCTCP peaks at about 945 Mbps, is down to about 300 around 20 senders at SRU
# 128 KB in Fig. 7a, and to about 475 after 35 senders in Fig. 9a); a quarter
# lost in one step of the sweep (5 or 10 senders in the presets) is well past the
# KEEP_BAND a "keeps" allows and short of those, so a drop of that size between
# neighbours counts, and a slide of small steps (which fails "keeps") does not.
SHARP_DROP = 0.25
# "Fewer / lower / the best" (ordering): a difference counts when the 95 % intervals
# of the two means do not overlap (the gap exceeds the sum of the half widths). The
# papers plot single curves with no error bars and state the order as something
# seen, so ours must be one another seed would not reverse; non-overlap is the
# stricter of the two usual readings and the one a reader checks on the figure
# (the error bars do not touch). Overlapping intervals: inconclusive. A mean over a
# range of x takes its interval from the per-x ones as independent estimates
# (_mean_of).
ORDERING_RULE = "the two means' 95 % intervals do not overlap"
# "About X", "around X", "~X", "X %" (near, relative): within this fraction of the
# paper's number. The papers give these numbers once, with no interval, most of
# them read off a figure or rounded in the text (NewDCTCP §5.2 "around 850 Mbps";
# ICTCP §VII-A2 741 Mb/s; RCC §6.1.1 47.5 %; seed 003 §V-A "about 200 Mbps"), so
# one tenth is what the last written digit of such a number and a reader's
# reading of a curve allow between them; wider would take in a different curve.
NEAR_TOLERANCE = 0.10
# "Good agreement" of a simulation with its closed form (matches_bound, seed 003
# §V-A ¶3 on Fig. 6, §V-B ¶2 on Fig. 7): within this fraction of g. The paper
# calls its own gap small only above N = 5, and T is an upper bound carrying a
# full buffer of queueing per slow-start round (Eq. 17), so the measured time is
# expected below it by up to that queueing share; a quarter is where the paper's
# own Fig. 6 curves stop being called close (its gap at N <= 5).
BOUND_TOLERANCE = 0.25
HOLDS, DIVERGES, INCONCLUSIVE, NO_DATA = "holds", "diverges", "inconclusive", "no data"

Rows = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Point:
    """One point a verdict was decided on: a scheme's `metric` at x (an x of the
    sweep, or (lo, hi): the mean over that range of x, as an ordering compares)."""

    scheme: str
    x: Any
    metric: str
    value: float


@dataclass(frozen=True)
class Verdict:
    claim: Mapping[str, Any]
    verdict: str
    ours: str  # our value(s), with intervals, as the report prints them
    points: tuple[Point, ...] = ()  # what decided it, for the report's figure


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
    closest: tuple[float, Any, float] | None = None
    for n, mean, lo, hi in _series(rows, claim["scheme"], "goodput_mbps"):
        if not _in_range(n, claim):
            continue
        plan = batch_schedule(n, topo, app, transport)
        g = plan.goodput_bound_bps / 1e6
        if above:
            band = (g, float("inf"))
        else:
            band = (g * (1 - BOUND_TOLERANCE), g * (1 + BOUND_TOLERANCE))
        inside = band[0] <= mean <= band[1]
        reach = lo is not None and hi is not None and float(lo) <= band[1] and float(hi) >= band[0]
        v = _side(inside, reach)
        worst = v if v != HOLDS and worst != DIVERGES else worst
        parts.append(f"N={n} (k={plan.k}): {_fmt(mean, lo, hi)} vs g {g:.0f}")
        margin = min(mean - band[0], band[1] - mean)
        if closest is None or margin < closest[0]:
            closest = (margin, n, mean)
    if not parts or closest is None:
        return Verdict(claim, NO_DATA, "no runs")
    pts = (Point(claim["scheme"], closest[1], "goodput_mbps", closest[2]),)
    return Verdict(claim, worst, "; ".join(parts), pts)


def _half_width(lo: Any, hi: Any) -> float | None:
    """Half the width of a 95 % interval (None without one)."""
    return None if lo is None or hi is None else (float(hi) - float(lo)) / 2


def _mean_of(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The mean of per-x means (mean, half width) and the half width of its 95 %
    interval, the per-x estimates taken as independent: sqrt(sum of squared half
    widths) / k. A mean without an interval counts as exact (half width 0)."""
    k = len(points)
    mean = sum(m for m, _hw in points) / k
    return mean, math.sqrt(sum(hw**2 for _m, hw in points)) / k


def _pair(a: tuple[float, float], b: tuple[float, float], lower: bool) -> str:
    """a before b in the claimed order: holds when a leads and the intervals do not
    overlap (ORDERING_RULE), diverges when b leads and they do not, else inconclusive."""
    (ma, ha), (mb, hb) = a, b
    leads = ma < mb if lower else ma > mb
    if abs(ma - mb) <= ha + hb:
        return INCONCLUSIVE
    return HOLDS if leads else DIVERGES


def _worst(vs: Sequence[str]) -> str:
    return DIVERGES if DIVERGES in vs else INCONCLUSIVE if INCONCLUSIVE in vs else HOLDS


def _pairs(claim: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (ahead, behind) pairs a claimed order states: the first against each
    other (best: true), else each scheme against the next."""
    s = list(claim["schemes"])
    if claim.get("best"):
        return [(s[0], o) for o in s[1:]]
    return list(zip(s, s[1:], strict=False))


def _pm(mean: float, hw: float) -> str:
    return f"{_num(mean)} ±{_num(hw)}" if hw else _num(mean)


def _ordering(claim: Mapping[str, Any], rows: Rows, axis: str) -> Verdict:
    """The schemes in the claim's order: on their means over x, or (every) at each x;
    each neighbouring difference real by ORDERING_RULE."""
    metric, lower = claim.get("metric", "goodput_mbps"), bool(claim.get("lower", False))
    per = {
        s: {
            x: (m, _half_width(lo, hi) or 0.0)
            for x, m, lo, hi in _series(rows, s, metric, axis)
            if _in_range(x, claim, axis)
        }
        for s in claim["schemes"]
    }
    missing = [s for s, xs in per.items() if not xs]
    if missing:
        return Verdict(claim, NO_DATA, f"no {metric} for {missing[0]}")
    pairs = _pairs(claim)
    if claim.get("every"):
        common = sorted(set.intersection(*(set(xs) for xs in per.values())))
        if not common:
            return Verdict(claim, NO_DATA, f"no {axis} with {metric} for every scheme")
        parts, found = [], []
        for x in common:
            v = _worst([_pair(per[a][x], per[b][x], lower) for a, b in pairs])
            found.append((v, x))
            vals = " / ".join(f"{per[s][x][0]:.2f}" for s in claim["schemes"])
            mark = {HOLDS: "", DIVERGES: " ✗", INCONCLUSIVE: " (intervals overlap)"}[v]
            parts.append(f"{_at(axis, x)}: {vals}{mark}")
        verdict = _worst([v for v, _x in found])
        # the deciding x: the first where the verdict is the worst one
        x = next(x for v, x in found if v == verdict)
        pts = tuple(Point(s, x, metric, per[s][x][0]) for s in claim["schemes"])
        return Verdict(claim, verdict, "; ".join(parts), pts)
    means = {s: _mean_of(list(xs.values())) for s, xs in per.items()}
    verdict = _worst([_pair(means[a], means[b], lower) for a, b in pairs])
    ours = ", ".join(f"{s} {_pm(m, hw)}" for s, (m, hw) in means.items())
    if verdict == INCONCLUSIVE:
        ours += " (intervals overlap)"
    span = {s: (min(xs), max(xs)) for s, xs in per.items()}
    pts = tuple(Point(s, span[s], metric, m) for s, (m, _hw) in means.items())
    label = "N" if axis == "n" else axis
    return Verdict(claim, verdict, f"mean over {label}: {ours}", pts)


def _rto(rows: Rows, scheme: str) -> dict[Any, tuple[float, Any, Any]]:
    """x -> (ratio of rounds with an RTO, its 95 % interval) of one scheme."""
    return {n: (m, lo, hi) for n, m, lo, hi in _series(rows, scheme, "rto_round_ratio")}


def _keeps(claim: Mapping[str, Any], rows: Rows) -> Verdict:
    """ "Keeps its goodput" (no_collapse): every N in [n_min, n_max] within KEEP_BAND of
    the best goodput at fewer senders, and RTO rounds at most rto_max (RTO_MAX) there.
    The worst N of each test decides: holds when both means pass; diverges when even
    the edge of a 95 % interval fails; else inconclusive."""
    scheme = claim["scheme"]
    series = _series(rows, scheme, "goodput_mbps")
    rto = _rto(rows, scheme)
    if not series:
        return Verdict(claim, NO_DATA, "no runs")
    rto_max = float(claim.get("rto_max", RTO_MAX))
    best: tuple[Any, float] | None = None
    worst_fall: tuple[float, Any, float, Any, Any, tuple[Any, float]] | None = None
    worst_rto: tuple[Any, float, Any, Any] | None = None
    for n, mean, lo, hi in series:
        if n > claim["n_max"]:
            break
        if best is None or mean > best[1]:
            best = (n, mean)
        if not _in_range(n, claim):
            continue
        fall = 1 - mean / best[1] if best[1] > 0 else 0.0
        if worst_fall is None or fall > worst_fall[0]:
            worst_fall = (fall, n, mean, lo, hi, best)
        if n not in rto:
            return Verdict(claim, NO_DATA, f"no rto_round_ratio at N={n}")
        r = rto[n]
        if worst_rto is None or r[0] > worst_rto[1]:
            worst_rto = (n, *r)
    if worst_fall is None or worst_rto is None:
        return Verdict(claim, NO_DATA, f"no run at N <= {claim['n_max']}")
    fall, n, mean, lo, hi, (bn, bm) = worst_fall
    floor = (1 - KEEP_BAND) * bm
    v_fall = _side(mean >= floor, hi is not None and float(hi) >= floor)
    rn, rm, rlo, _rhi = worst_rto
    v_rto = _side(rm <= rto_max, rlo is not None and float(rlo) <= rto_max)
    worst = (
        f"worst N={n}: {_fmt(mean, lo, hi)}, {fall:.0%} below N={bn}'s {_num(bm)}"
        if fall > 0
        else "never below its best at fewer senders"
    )
    ours = (
        f"{worst} (band {KEEP_BAND:.0%}); RTO rounds up to {rm:.0%} at N={rn} (max {rto_max:.0%})"
    )
    pts = (
        Point(scheme, bn, "goodput_mbps", bm),
        Point(scheme, n, "goodput_mbps", mean),
        Point(scheme, rn, "rto_round_ratio", rm),
    )
    return Verdict(claim, _worst([v_fall, v_rto]), ours, pts)


def _sharp_drop(claim: Mapping[str, Any], rows: Rows) -> Verdict:
    """ "Drops sharply from about N" (collapse_n): the first N whose goodput is at least
    SHARP_DROP below the previous N's with an RTO in over FREQUENT_RTO of its rounds
    lies in [lo, hi]; read on the means."""
    scheme = claim["scheme"]
    series = _series(rows, scheme, "goodput_mbps")
    rto = _rto(rows, scheme)
    if len(series) < 2:
        return Verdict(claim, NO_DATA, "fewer than two N run")
    steepest: tuple[float, Any, float, Any, float] | None = None
    for (pn, pm, _plo, _phi), (n, m, _lo, _hi) in zip(series, series[1:], strict=False):
        if n not in rto:
            return Verdict(claim, NO_DATA, f"no rto_round_ratio at N={n}")
        drop = 1 - m / pm if pm > 0 else 0.0
        sharp = drop >= SHARP_DROP and rto[n][0] > FREQUENT_RTO
        if sharp or steepest is None or drop > steepest[0]:
            steepest = (drop, pn, pm, n, m)
        if sharp:
            break
    assert steepest is not None
    drop, pn, pm, n, m = steepest
    found = drop >= SHARP_DROP and rto[n][0] > FREQUENT_RTO
    step = f"N={pn} {_num(pm)} -> N={n} {_num(m)} ({-drop:+.0%}, RTO rounds {rto[n][0]:.0%})"
    ours = (
        f"sharp drop at N={n}: {step}"
        if found
        else f"no sharp drop (>= {SHARP_DROP:.0%} with RTO in most rounds); steepest {step}"
    )
    ok = found and claim["lo"] <= n <= claim["hi"]
    pts = (
        Point(scheme, pn, "goodput_mbps", pm),
        Point(scheme, n, "goodput_mbps", m),
        Point(scheme, n, "rto_round_ratio", rto[n][0]),
    )
    return Verdict(claim, HOLDS if ok else DIVERGES, ours, pts)


def _drops_from(claim: Mapping[str, Any], rows: Rows, axis: str) -> Verdict:
    """No drop below the claim's x, some at or above it (drops: mean per run)."""
    drops = [(x, m) for x, m, _lo, _hi in _series(rows, claim["scheme"], "drops", axis)]
    if not drops:
        return Verdict(claim, NO_DATA, "no runs")
    below = [d for x, d in drops if x < claim[axis]]
    above = [d for x, d in drops if x >= claim[axis]]
    ours = ", ".join(f"{_at(axis, x)}: {d:.0f}" for x, d in drops)
    # the points shown: the first x with drops, and the last x below the claim's
    first = next(((x, d) for x, d in drops if d > 0), None)
    last_below = [(x, d) for x, d in drops if x < claim[axis]][-1:]
    pts = tuple(
        Point(claim["scheme"], x, "drops", d) for x, d in [*last_below, *([first] if first else [])]
    )
    if not below or not above:
        return Verdict(claim, INCONCLUSIVE, ours, pts)
    ok = max(below) == 0 and max(above) > 0
    return Verdict(claim, HOLDS if ok else DIVERGES, ours, pts)


def _relative(claim: Mapping[str, Any], rows: Rows, axis: str) -> Verdict:
    """The mean over x of (scheme's metric − than's) / than's, against
    value · (1 ± NEAR_TOLERANCE)."""
    metric = claim.get("metric", "goodput_mbps")
    mine, theirs = (
        {x: m for x, m, _lo, _hi in _series(rows, s, metric, axis) if _in_range(x, claim, axis)}
        for s in (claim["scheme"], claim["than"])
    )
    common = sorted(x for x in set(mine) & set(theirs) if theirs[x] != 0)
    if not common:
        return Verdict(claim, NO_DATA, f"no {axis} with {metric} for both and {claim['than']} > 0")
    ratios = [(mine[x] - theirs[x]) / theirs[x] for x in common]
    mean = sum(ratios) / len(ratios)
    lo, hi = sorted((claim["value"] * (1 - NEAR_TOLERANCE), claim["value"] * (1 + NEAR_TOLERANCE)))
    each = ", ".join(f"{_at(axis, x)}: {r:+.1%}" for x, r in zip(common, ratios, strict=True))
    pts = tuple(
        Point(s, x, metric, vals[x])
        for s, vals in ((claim["scheme"], mine), (claim["than"], theirs))
        for x in common
    )
    ok = lo <= mean <= hi
    return Verdict(claim, HOLDS if ok else DIVERGES, f"mean {mean:+.1%} ({each})", pts)


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
    if kind == "no_collapse":
        return _keeps(claim, rows)
    if kind == "collapse_n":
        return _sharp_drop(claim, rows)
    if kind == "relative":
        return _relative(claim, rows, axis)
    series = _series(
        rows, claim["scheme"], "goodput_mbps" if metric == "peak_goodput_mbps" else metric, axis
    )
    if not series:
        return Verdict(claim, NO_DATA, "no runs")
    if kind == "near":
        if metric == "peak_goodput_mbps":
            n, mean, lo, hi = max(series, key=lambda x: x[1])
        else:
            at = [x for x in series if x[0] == claim.get(axis)]
            if not at:
                return Verdict(claim, NO_DATA, f"no run at {_at(axis, claim.get(axis))}")
            n, mean, lo, hi = at[0]
        band = (
            claim["value"] * (1 - NEAR_TOLERANCE),
            claim["value"] * (1 + NEAR_TOLERANCE),
        )
        inside = band[0] <= mean <= band[1]
        reach = lo is not None and hi is not None and float(lo) <= band[1] and float(hi) >= band[0]
        pts = (
            Point(
                claim["scheme"],
                n,
                "goodput_mbps" if metric == "peak_goodput_mbps" else metric,
                mean,
            ),
        )
        return Verdict(claim, _side(inside, reach), f"{_at(axis, n)}: {_fmt(mean, lo, hi)}", pts)
    # at_least / at_most over the N range: the worst N decides (and is the point shown)
    value, worst, parts = claim["value"], HOLDS, []
    closest: tuple[float, Any, float] | None = None
    for n, mean, lo, hi in series:
        if not _in_range(n, claim, axis):
            continue
        if kind == "at_least":
            v = _side(mean >= value, hi is not None and float(hi) >= value)
        else:
            v = _side(mean <= value, lo is not None and float(lo) <= value)
        slack = mean - value if kind == "at_least" else value - mean
        if closest is None or slack < closest[0]:
            closest = (slack, n, mean)
        if v == DIVERGES or (v == INCONCLUSIVE and worst == HOLDS):
            worst = v
        if v != HOLDS:
            parts.append(f"{_at(axis, n)}: {_fmt(mean, lo, hi)}")
    pts = () if closest is None else (Point(claim["scheme"], closest[1], metric, closest[2]),)
    if not parts and worst == HOLDS:
        every = "every N" if axis == "n" else f"every {axis}"
        sign = ">=" if kind == "at_least" else "<="
        return Verdict(claim, HOLDS, f"{every} in range {sign} {value}", pts)
    return Verdict(claim, worst, "; ".join(parts), pts)


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
            parts.append(f"no data for it in: {', '.join(self.not_run)}")
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
    no data for it (not run, or not at the x it names). Pure: verdicts in, classes out."""
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
