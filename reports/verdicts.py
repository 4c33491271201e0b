"""A paper's claims, as a preset states them (experiments/claims.py: the kinds and
what each checks), checked against our summary rows.

Verdicts: `holds`; `diverges` when our value is on the wrong side even at the
edge of its 95 % interval; `inconclusive` when only the mean is on the wrong
side, or when a comparison lacks the interval it needs. Pure: rows in, verdicts
out. Every verdict names the points that decided it (`Verdict.points`: scheme,
x, metric, value), which the report's figure marks (plots.reference_plot).

What a paper's words are taken to mean, each rule once, with its reason beside
its constant below (the kinds: experiments/claims.py). Each can fail both ways:
`RULES` names, per rule, one of our claims that holds under it and one that
fails, on our runs' numbers, and the report prints that table
(tests/reports/test_rep_verdicts.py pins both).

- "keeps its goodput", "stays high" (no_collapse): KEEP_BAND, RTO_MAX.
- "drops sharply from about N" (collapse_n): SHARP_DROP over the claim's `span`
  of senders, a span the paper's figure fixes, not our grid.
- "fewer", "lower", "the best", "ahead of" (ordering): ORDERING_RULE with
  MIN_EFFECT of the metric, every compared point with its interval.
- "the same", "identical", "does not vary much" (alike): within NEAR_TOLERANCE
  of each other at every x.
- "grows / increases with N" (grows): last above first by ORDERING_RULE, no
  step a clear fall.
- "with X, incast sets in at fewer senders" (earlier): INCAST_ONSET, ordered.
- "sudden decreases whose amplitude diminishes" (steps_diminish): the falls
  across each step read like grows in reverse, by ORDERING_RULE.
- "about X", "~X" (near): NEAR_TOLERANCE, widened to the paper's printed
  precision (PRINTED_PRECISION) and, for counts, to a Poisson interval
  (COUNT_METRICS), and cut at the link's framing limit for goodput (PHYSICAL).
- "at most X", "below X", "more than X" (at_most, at_least): PRINTED_PRECISION.
- "X % lower on average" (relative): RELATIVE_RULE, a ratio of means.
- "from load X on" (drops_from): the first drops at X itself.
- seed 003's closed form (above_bound, matches_bound, closed_form,
  gap_diminishes): BOUND_TOLERANCE; the closed form's own numbers against our
  closed form, not against the simulation.

`classify` puts a paper preset's verdicts in REPORT.md's classes: holds;
diverges — explained by an ablation (experiments/papers/ablations/, which reuse
the claim ids of the preset they vary) whose own verdict flips it: the claim
holds there under the ablated setting and not under the paper's (its baseline
rows: `paper.baseline: {<variant key>: <value>, ...}` names the variant that
is the paper's setting, or a claim carries `baseline: true`), and the ablated
setting is a reading the paper allows (EXPLAINING_RULE: the ablation states
`paper.allows` for it, with the paper's place quoted); diverges — unexplained;
inconclusive and no data as they are. Computed from the verdicts of the same
report, never typed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from p4incast.model.scheme import App, Topology, Transport, batch_schedule
from p4incast.model.wire import wire_frame_bytes

# "Keeps its goodput" (no_collapse): no N up to n_max falls more than this fraction
# below the best goodput of the scheme at fewer senders. The same 10 % band the
# presets give a number a paper states as "about"/"around" (the `near` claims,
# e.g. NewDCTCP §5.2 "around 850 Mbps" for TCP's peak, ICTCP §VII 741 Mb/s at
# 40 senders): a fall larger than what "about" allows is a drop a reader of the
# figure would see, which "keeps" rules out (ICTCP §VII on Fig. 8: goodput
# smooth and increasing with the senders). Measured from the running best, not
# the overall peak, so a curve that rises (ICTCP's) keeps, and a slow slide does not.
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
# "Drops sharply / a sudden drop from about N" (collapse_n): goodput at N is at
# least this fraction below the best goodput the scheme had within the `span`
# senders before N (N - span <= m < N). The drops the papers call sudden or sharp
# take goodput to a half or a third of its peak (NewDCTCP §5.2: DCTCP peaks at
# about 945 Mbps, is down to about 300 around 20 senders at SRU 128 KB in Fig. 7a,
# and to about 475 after 35 senders in Fig. 9a); a quarter lost is well past the
# KEEP_BAND a "keeps" allows and short of those. The span is the claim's, read off
# the paper's figure (the spacing of the N the paper names around the drop), so
# the same loss counts whether our grid takes it in one step or in two; where
# our grid has no run inside the span before N, a drop found against an older
# run cannot tell a step from a slide: inconclusive.
SHARP_DROP = 0.25
# "Fewer / lower / the best" (ordering): a difference counts when the 95 % intervals
# of the two means do not overlap (the gap exceeds the sum of the half widths) AND
# the gap is at least MIN_EFFECT of the metric. The papers plot single curves with
# no error bars and state the order as something seen, so ours must be one another
# seed would not reverse (the intervals) and one a reader would see on the figure
# (the effect): with many rounds an interval shrinks until 938 vs 937 Mbit/s is
# "apart", which no reader calls an order. Diverges when even the edge of the
# intervals falls short of the effect in the claimed direction (the order is
# absent or reversed); inconclusive between, and wherever a compared point has no
# interval (a metric without one cannot show its difference is real). A mean
# over a range of x takes its interval from the per-x ones as independent
# estimates (_mean_of).
ORDERING_RULE = (
    "the two means' 95 % intervals do not overlap and they differ by at least the "
    "metric's minimum effect"
)
# "Incast congestion sets in at N" (earlier): the first N whose goodput falls below
# the best the scheme had at fewer senders by ORDERING_RULE (the intervals apart and
# the goodput's MIN_EFFECT: a fall a reader sees and another seed would not undo),
# with an RTO in at least one of its rounds. ICTCP §VII-A ¶2 defines the onset so:
# with more senders the goodput per round drops because some connections time out,
# and the least N that triggers it depends on the amount per sender; a timeout on
# "some connections" is any round with one, not most rounds (FREQUENT_RTO is what
# a collapse needs, not its onset).
INCAST_ONSET = (
    "the first N whose goodput falls below the best at fewer senders by ORDERING_RULE, "
    "with an RTO in some round there"
)
# The minimum effect per metric an ordering needs: (relative to the larger of the
# two means, absolute in the metric's unit); the larger of the two applies.
# Relative 3 %: below the smallest difference any of our papers states as an
# order (NewDCTCP §5.2 on Fig. 7a: NewDCTCP's 981 against DCTCP's about 945
# Mbit/s, 3.7 %), so every stated order can hold, and above what separates two
# curves a reader sees as one on a full-scale axis. Absolute floors where a
# relative one means nothing near zero: a whole packet for queue depths and
# counts (their resolution), 0.05 of the rounds for the RTO-round ratio (one
# round in twenty; ICTCP §VII's smallest stated ratio is 6 %), 0.01 for Jain's
# index (one flow of ten 30 % behind the other nine gives J = 0.991).
MIN_EFFECT: dict[str, tuple[float, float]] = {
    "goodput_mbps": (0.03, 0.0),
    "fct_mean_ms": (0.03, 0.0),
    "fct_p50_ms": (0.03, 0.0),
    "fct_p95_ms": (0.03, 0.0),
    "fct_p99_ms": (0.03, 0.0),
    "fct_p1_ms": (0.03, 0.0),
    "fct_max_ms": (0.03, 0.0),
    "fct_spread_ms": (0.03, 0.0),
    "long_p50_mbps": (0.03, 0.0),
    "long_range_mbps": (0.03, 0.0),
    "rto_round_ratio": (0.0, 0.05),
    "jain": (0.0, 0.01),
    "qdepth_mean": (0.03, 1.0),
    "qdepth_p95": (0.03, 1.0),
    "qdepth_max": (0.03, 1.0),
    "drops": (0.03, 1.0),
    "drops_agg_queue": (0.03, 1.0),
    "drops_root": (0.03, 1.0),
    "ce_marks": (0.03, 1.0),
    "bound_gap": (0.0, 0.05),
}
# "About X", "around X", "~X" (near): within this fraction of the paper's number,
# in the middle of a metric's range. The papers give these numbers once, with no
# interval, most of them read off a figure or rounded in the text (NewDCTCP §5.2
# "around 850 Mbps"; ICTCP §VII-A2 741 Mb/s; RCC §6.1.1 47.5 %; seed 003 §V-A
# "about 200 Mbps"), so one tenth is what the last written digit of such a number
# and a reader's reading of a curve allow between them; wider would take in a
# different curve. At the ends of the range a tenth is either unphysical or
# unreachable, so the band follows what can be (PHYSICAL, COUNT_METRICS,
# PRINTED_PRECISION).
NEAR_TOLERANCE = 0.10
# What is physical at the top of the goodput range: no TCP goodput exceeds the
# link's framing limit C * MSS / wire bytes per segment (experiments/metrics.py
# framing_limit_bps: 941 Mbit/s on 1 GbE with 1448-B segments). "About X" near or
# above it (NewDCTCP §5.2's 981 Mbit/s, a figure's QualNet reading) is cut there:
# a band reaching 1079 Mbit/s would take values no run can reach as agreement.
PHYSICAL = "goodput at most the link's framing limit"
# Counts near zero (drops, marks): a count the paper states once is one draw of a
# random number; for a count of mean X the central 95 % of a Poisson(X) variable
# is what another run of the same setting gives (RCC §6.2's 1 drop at 60 % load:
# 0 to 3). The band is the wider of that and NEAR_TOLERANCE; from X ~ 400 up the
# tenth is wider.
COUNT_METRICS = ("drops", "drops_agg_queue", "drops_root", "ce_marks", "timeouts", "retrans")
# The paper's printed precision: a number printed with its last digit in some
# place means anything that rounds to it, half a unit of that place either side
# ("does not exceed 39" holds at 39.2, not at 39.6; "0.3 Mbit/s" is 0.25-0.35).
# Every bound (at_most, at_least) and every "about" gets it; a zero ("no drop",
# "never") and a count stated whole get none, being exact.
PRINTED_PRECISION = "half a unit of the paper's last printed digit"
# Ratios the papers print as percentages (ICTCP Fig. 9's 6 %): their printed digit
# is a whole percent, so half a unit is 0.005.
PERCENT_METRICS = ("rto_round_ratio",)
# "X % lower on average" (relative): the ratio of the two schemes' means over the
# x both ran, minus 1 — the papers' "mean decrease over" a set of runs (RCC
# §6.1.1, §6.1.3) compares averages, and a mean of per-x ratios weighs a point
# near zero as much as the rest. Its 95 % interval propagates the two means'
# (first order), and the band is value · (1 ± NEAR_TOLERANCE).
RELATIVE_RULE = "the ratio of the two means over the common x, minus 1"
# "Good agreement" of a simulation with its closed form (matches_bound, seed 003
# §V-A ¶3 on Fig. 6, §V-B ¶2 on Fig. 7): within this fraction of g. The paper
# calls its own gap small only above N = 5, and T is an upper bound carrying a
# full buffer of queueing per slow-start round (Eq. 17), so the measured time is
# expected below it by up to that queueing share; a quarter is where the paper's
# own Fig. 6 curves stop being called close (its gap at N <= 5).
BOUND_TOLERANCE = 0.25
# An ablation explains a divergence only when its changed setting is one the
# paper allows: the ablation's `paper.allows` quotes the place that leaves it
# open (not stated, or stated loosely). A setting the paper contradicts (a 200 ms
# RTO_min where NewDCTCP §5.1.2 states 10 ms) can flip a verdict but explains
# nothing about the paper's result.
EXPLAINING_RULE = "the ablated setting is a reading the paper allows (its place quoted)"
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
    widths) / k."""
    k = len(points)
    mean = sum(m for m, _hw in points) / k
    return mean, math.sqrt(sum(hw**2 for _m, hw in points)) / k


def min_effect(metric: str, a: float, b: float) -> float:
    """The smallest difference of `metric` an ordering counts (MIN_EFFECT): the larger
    of its relative share of the larger mean and its absolute floor. KeyError for a
    metric with none stated (tests/experiments/test_exp_claims.py checks every preset)."""
    rel, floor = MIN_EFFECT[metric]
    return max(rel * max(abs(a), abs(b)), floor)


def _pair(a: tuple[float, float], b: tuple[float, float], lower: bool, metric: str) -> str:
    """a before b in the claimed order (ORDERING_RULE): holds when a leads by at least
    the minimum effect and the intervals do not overlap; diverges when even the
    intervals' edge in a's favour falls short of the effect; else inconclusive."""
    (ma, ha), (mb, hb) = a, b
    lead = (mb - ma) if lower else (ma - mb)  # > 0: in the claimed order
    effect = min_effect(metric, ma, mb)
    if lead > ha + hb and lead >= effect:
        return HOLDS
    if lead + ha + hb < effect:
        return DIVERGES
    return INCONCLUSIVE


def _worst(vs: Sequence[str]) -> str:
    return DIVERGES if DIVERGES in vs else INCONCLUSIVE if INCONCLUSIVE in vs else HOLDS


def _pairs(claim: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (ahead, behind) pairs a claimed order states: the first against each
    other (best: true), else each scheme against the next."""
    s = list(claim["schemes"])
    if claim.get("best"):
        return [(s[0], o) for o in s[1:]]
    return list(zip(s, s[1:], strict=False))


def _pm(mean: float, hw: float | None) -> str:
    if hw is None:
        return f"{_num(mean)} (no interval)"
    return f"{_num(mean)} ±{_num(hw)}" if hw else _num(mean)


def _judge(
    a: tuple[float, float | None], b: tuple[float, float | None], metric: str, lower: bool = False
) -> str:
    """a before b by ORDERING_RULE (_pair: above it, or below it when `lower`), each
    (mean, half width); a point without an interval leaves a holding pair
    inconclusive (it cannot show the difference is real)."""
    v = _pair((a[0], a[1] or 0.0), (b[0], b[1] or 0.0), lower, metric)
    return INCONCLUSIVE if v == HOLDS and (a[1] is None or b[1] is None) else v


def _ordering(claim: Mapping[str, Any], rows: Rows, axis: str) -> Verdict:
    """The schemes in the claim's order: on their means over x, or (every) at each x;
    each neighbouring difference real and large enough by ORDERING_RULE. A point
    without an interval leaves its pairs inconclusive at best (it cannot show a
    difference is real)."""
    metric, lower = claim.get("metric", "goodput_mbps"), bool(claim.get("lower", False))
    per = {
        s: {
            x: (m, _half_width(lo, hi))
            for x, m, lo, hi in _series(rows, s, metric, axis)
            if _in_range(x, claim, axis)
        }
        for s in claim["schemes"]
    }
    missing = [s for s, xs in per.items() if not xs]
    if missing:
        return Verdict(claim, NO_DATA, f"no {metric} for {missing[0]}")
    pairs = _pairs(claim)

    def judge(a: tuple[float, float | None], b: tuple[float, float | None]) -> str:
        return _judge(a, b, metric, lower)

    if claim.get("every"):
        common = sorted(set.intersection(*(set(xs) for xs in per.values())))
        if not common:
            return Verdict(claim, NO_DATA, f"no {axis} with {metric} for every scheme")
        parts, found = [], []
        for x in common:
            v = _worst([judge(per[a][x], per[b][x]) for a, b in pairs])
            found.append((v, x))
            vals = " / ".join(f"{per[s][x][0]:.2f}" for s in claim["schemes"])
            mark = {HOLDS: "", DIVERGES: " ✗", INCONCLUSIVE: " (not apart)"}[v]
            parts.append(f"{_at(axis, x)}: {vals}{mark}")
        verdict = _worst([v for v, _x in found])
        # the deciding x: the first where the verdict is the worst one
        x = next(x for v, x in found if v == verdict)
        pts = tuple(Point(s, x, metric, per[s][x][0]) for s in claim["schemes"])
        return Verdict(claim, verdict, "; ".join(parts), pts)
    means: dict[str, tuple[float, float | None]] = {}
    for s, xs in per.items():
        hws = [hw for _m, hw in xs.values()]
        m, hw = _mean_of([(m, hw or 0.0) for m, hw in xs.values()])
        means[s] = (m, None if any(h is None for h in hws) else hw)
    verdict = _worst([judge(means[a], means[b]) for a, b in pairs])
    ours = ", ".join(f"{s} {_pm(m, hw)}" for s, (m, hw) in means.items())
    if verdict == INCONCLUSIVE:
        ours += " (not apart by the interval and the minimum effect)"
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
    SHARP_DROP below the best within the claim's `span` senders before it, with an RTO
    in over FREQUENT_RTO of its rounds, lies in [lo, hi]; read on the means. Found only
    against a run older than the span (our grid coarser than the paper's figure):
    inconclusive."""
    scheme, span = claim["scheme"], claim["span"]
    series = _series(rows, scheme, "goodput_mbps")
    rto = _rto(rows, scheme)
    if len(series) < 2:
        return Verdict(claim, NO_DATA, "fewer than two N run")
    steepest: tuple[float, Any, float, Any, float, bool] | None = None
    for i, (n, m, _lo, _hi) in enumerate(series[1:], start=1):
        if n not in rto:
            return Verdict(claim, NO_DATA, f"no rto_round_ratio at N={n}")
        inside = [(pn, pm) for pn, pm, _a, _b in series[:i] if n - span <= pn]
        within = bool(inside)
        pn, pm = max(inside, key=lambda p: p[1]) if inside else series[i - 1][:2]
        drop = 1 - m / pm if pm > 0 else 0.0
        sharp = drop >= SHARP_DROP and rto[n][0] > FREQUENT_RTO
        if sharp or steepest is None or drop > steepest[0]:
            steepest = (drop, pn, pm, n, m, within)
        if sharp:
            break
    assert steepest is not None
    drop, pn, pm, n, m, within = steepest
    found = drop >= SHARP_DROP and rto[n][0] > FREQUENT_RTO
    step = f"N={pn} {_num(pm)} -> N={n} {_num(m)} ({-drop:+.0%}, RTO rounds {rto[n][0]:.0%})"
    if found and not within:
        ours = f"drop at N={n} against a run older than the span of {span}: {step}"
    elif found:
        ours = f"sharp drop at N={n} (span {span}): {step}"
    else:
        ours = f"no sharp drop (>= {SHARP_DROP:.0%} within {span} senders, RTO in most rounds)"
        ours += f"; steepest {step}"
    pts = (
        Point(scheme, pn, "goodput_mbps", pm),
        Point(scheme, n, "goodput_mbps", m),
        Point(scheme, n, "rto_round_ratio", rto[n][0]),
    )
    if found and claim["lo"] <= n <= claim["hi"]:
        return Verdict(claim, HOLDS if within else INCONCLUSIVE, ours, pts)
    return Verdict(claim, DIVERGES, ours, pts)


def _drops_from(claim: Mapping[str, Any], rows: Rows, axis: str) -> Verdict:
    """No drop at any x below the claim's x, some at that x itself (drops: mean per run;
    counts are exact, so no interval). The onset is at the paper's x, not anywhere
    above it: no run at that x is no data."""
    drops = [(x, m) for x, m, _lo, _hi in _series(rows, claim["scheme"], "drops", axis)]
    if not drops:
        return Verdict(claim, NO_DATA, "no runs")
    at = [d for x, d in drops if x == claim[axis]]
    below = [(x, d) for x, d in drops if x < claim[axis]]
    ours = ", ".join(f"{_at(axis, x)}: {d:.0f}" for x, d in drops)
    pts = tuple(
        Point(claim["scheme"], x, "drops", d)
        for x, d in [*below[-1:], *((claim[axis], a) for a in at)]
    )
    if not at:
        return Verdict(claim, NO_DATA, f"no run at {_at(axis, claim[axis])}; {ours}", pts)
    if not below:
        return Verdict(claim, INCONCLUSIVE, ours, pts)
    ok = max(d for _x, d in below) == 0 and at[0] > 0
    return Verdict(claim, HOLDS if ok else DIVERGES, ours, pts)


def _relative(claim: Mapping[str, Any], rows: Rows, axis: str) -> Verdict:
    """RELATIVE_RULE: (mean of scheme's metric / mean of than's) − 1 over the x both ran,
    against value · (1 ± NEAR_TOLERANCE), the ratio's interval from the two means'."""
    metric = claim.get("metric", "goodput_mbps")
    mine, theirs = (
        {
            x: (m, _half_width(lo, hi))
            for x, m, lo, hi in _series(rows, s, metric, axis)
            if _in_range(x, claim, axis)
        }
        for s in (claim["scheme"], claim["than"])
    )
    common = sorted(set(mine) & set(theirs))
    if not common:
        return Verdict(claim, NO_DATA, f"no {axis} with {metric} for both")
    a, ha = _mean_of([(mine[x][0], mine[x][1] or 0.0) for x in common])
    b, hb = _mean_of([(theirs[x][0], theirs[x][1] or 0.0) for x in common])
    if b <= 0:
        return Verdict(claim, NO_DATA, f"{claim['than']}'s mean {metric} is 0")
    r = a / b - 1
    hr = (a / b) * math.hypot(ha / a if a else 0.0, hb / b)
    lo, hi = sorted((claim["value"] * (1 - NEAR_TOLERANCE), claim["value"] * (1 + NEAR_TOLERANCE)))
    inside = lo <= r <= hi
    reach = r - hr <= hi and r + hr >= lo
    pts = tuple(
        Point(s, x, metric, vals[x][0])
        for s, vals in ((claim["scheme"], mine), (claim["than"], theirs))
        for x in common
    )
    ours = (
        f"ratio of means {r:+.1%} ±{hr:.1%} ({claim['scheme']} {_num(a)}, "
        f"{claim['than']} {_num(b)} over {_at(axis, common[0])}..{common[-1]})"
    )
    return Verdict(claim, _side(inside, reach), ours, pts)


def printed_half_unit(value: float, metric: str) -> float:
    """PRINTED_PRECISION: half a unit of the last digit of `value` as the preset types
    the paper's number (39 -> 0.5, 0.3 -> 0.05; 0.06 of the rounds, printed 6 %,
    -> 0.005); 0 for zero and for a count stated as a whole number (exact)."""
    if value == 0 or (metric in COUNT_METRICS and float(value).is_integer()):
        return 0.0  # "none", "never" and a whole count are exact
    scale = 100.0 if metric in PERCENT_METRICS else 1.0  # printed as a percentage
    exp = Decimal(str(value * scale)).normalize().as_tuple().exponent
    places = -exp if isinstance(exp, int) and exp < 0 else 0
    return 0.5 * 10.0**-places / scale


def poisson_band(mean: float) -> tuple[int, int]:
    """The central 95 % of a Poisson(mean) count: the largest k with P(K < k) <= 2.5 %
    and the smallest k with P(K <= k) >= 97.5 % (COUNT_METRICS)."""
    if mean <= 0:
        return 0, 0
    lo_k, hi_k, k, cdf = 0, 0, 0, 0.0
    pmf = math.exp(-mean)
    while True:
        if cdf <= 0.025:
            lo_k = k  # P(K < k) = cdf so far
        cdf += pmf
        if cdf >= 0.975:
            hi_k = k
            break
        k += 1
        pmf *= mean / k
    return lo_k, hi_k


def framing_limit_mbps(ctx: Mapping[str, Any]) -> float | None:
    """PHYSICAL: the most goodput the variant's bottleneck carries (Mbit/s), or None
    without a topology in the context."""
    topo, transport = ctx.get("topology"), ctx.get("transport")
    if not isinstance(topo, Topology):
        return None
    mss = transport.mss_bytes if isinstance(transport, Transport) else Transport().mss_bytes
    return topo.link_gbps * 1e3 * mss / wire_frame_bytes(mss)


def near_band(value: float, metric: str, ctx: Mapping[str, Any]) -> tuple[float, float]:
    """What "about `value`" of `metric` accepts: value · (1 ± NEAR_TOLERANCE), widened to
    the printed precision (PRINTED_PRECISION) and for counts to the Poisson band
    (COUNT_METRICS), and for goodput cut at the framing limit (PHYSICAL)."""
    lo, hi = sorted((value * (1 - NEAR_TOLERANCE), value * (1 + NEAR_TOLERANCE)))
    half = printed_half_unit(value, metric)
    lo, hi = min(lo, value - half), max(hi, value + half)
    if metric in COUNT_METRICS:
        plo, phi = poisson_band(value)
        lo, hi = min(lo, plo), max(hi, phi)
    cap = framing_limit_mbps(ctx) if metric in ("goodput_mbps", "peak_goodput_mbps") else None
    if cap is not None:  # a number past the framing limit is read as the limit
        hi = min(hi, cap)
        lo = min(lo, cap * (1 - NEAR_TOLERANCE)) if value > cap else lo
    return max(lo, 0.0) if value >= 0 else lo, hi


def _closed_form(claim: Mapping[str, Any], ctx: Mapping[str, Any]) -> Verdict:
    """The paper's closed-form number against ours (closed_form): g at the claim's n
    from model.scheme.batch_schedule on the variant's settings, within near_band
    (exact, so holds or diverges). The simulation does not enter."""
    plan = batch_schedule(claim["n"], ctx["topology"], ctx["app"], ctx["transport"])
    g = plan.goodput_bound_bps / 1e6
    lo, hi = near_band(claim["value"], "goodput_mbps", {})
    ok = lo <= g <= hi
    ours = f"our closed form at N={claim['n']} (k={plan.k}): {g:.1f} (band {_num(lo)}-{_num(hi)})"
    return Verdict(claim, HOLDS if ok else DIVERGES, ours, ())


def _gap_diminishes(claim: Mapping[str, Any], rows: Rows, ctx: Mapping[str, Any]) -> Verdict:
    """ "The gap between simulation and closed form diminishes as N grows"
    (gap_diminishes): the mean relative gap |goodput − g| / g over N <= n_split is
    larger than over N > n_split, by ORDERING_RULE on `bound_gap`."""
    sides: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for n, mean, lo, hi in _series(rows, claim["scheme"], "goodput_mbps"):
        if not _in_range(n, claim):
            continue
        g = batch_schedule(n, ctx["topology"], ctx["app"], ctx["transport"]).goodput_bound_bps
        g /= 1e6
        hw = _half_width(lo, hi)
        sides[n <= claim["n_split"]].append((abs(mean - g) / g, (hw or 0.0) / g))
    if not sides[True] or not sides[False]:
        return Verdict(claim, NO_DATA, f"no runs on both sides of N={claim['n_split']}")
    small, large = _mean_of(sides[True]), _mean_of(sides[False])
    v = _pair(large, small, True, "bound_gap")
    ours = (
        f"mean gap to g: N <= {claim['n_split']} {small[0]:.1%} ±{small[1]:.1%}, "
        f"N > {claim['n_split']} {large[0]:.1%} ±{large[1]:.1%}"
    )
    return Verdict(claim, v, ours, ())


def _alike(claim: Mapping[str, Any], rows: Rows, axis: str) -> Verdict:
    """ "The same / identical / does not vary much" (alike): at every x in range the
    two schemes' means differ by at most NEAR_TOLERANCE of the larger (what "about"
    allows); diverges when even the intervals' nearest edges are further apart."""
    metric = claim.get("metric", "goodput_mbps")
    a_s, b_s = claim["schemes"]
    a, b = (
        {
            x: (m, lo, hi)
            for x, m, lo, hi in _series(rows, s, metric, axis)
            if _in_range(x, claim, axis)
        }
        for s in (a_s, b_s)
    )
    common = sorted(set(a) & set(b))
    if not common:
        return Verdict(claim, NO_DATA, f"no {axis} with {metric} for both {a_s} and {b_s}")
    found, parts = [], []
    for x in common:
        (ma, alo, ahi), (mb, blo, bhi) = a[x], b[x]
        tol = NEAR_TOLERANCE * max(abs(ma), abs(mb))
        near = abs(ma - mb) <= tol
        ha, hb = _half_width(alo, ahi) or 0.0, _half_width(blo, bhi) or 0.0
        v = _side(near, abs(ma - mb) - ha - hb <= tol)
        found.append((v, x, ma, mb))
        if v != HOLDS:
            parts.append(f"{_at(axis, x)}: {_num(ma)} vs {_num(mb)} ({ma / mb - 1:+.0%})")
    verdict = _worst([v for v, *_r in found])
    _v, x, ma, mb = next(f for f in found if f[0] == verdict)
    pts = (Point(a_s, x, metric, ma), Point(b_s, x, metric, mb))
    ours = "; ".join(parts) if parts else f"within {NEAR_TOLERANCE:.0%} at every {axis} in range"
    return Verdict(claim, verdict, ours, pts)


def _grows(claim: Mapping[str, Any], rows: Rows, axis: str) -> Verdict:
    """ "Grows / increases with N" (grows): the metric at the last x in range above the
    first by ORDERING_RULE, and no step between neighbours a fall by it; diverges when
    the last is not above the first or some step clearly falls, else inconclusive."""
    metric, scheme = claim.get("metric", "goodput_mbps"), claim["scheme"]
    series = [
        (x, (m, _half_width(lo, hi)))
        for x, m, lo, hi in _series(rows, scheme, metric, axis)
        if _in_range(x, claim, axis)
    ]
    if len(series) < 2:
        return Verdict(claim, NO_DATA, f"fewer than two {axis} with {metric}")

    def judge(a: tuple[float, float | None], b: tuple[float, float | None]) -> str:
        return _judge(a, b, metric)

    (x0, first), (x1, last) = series[0], series[-1]
    end = judge(last, first)
    falls = [(xa, xb) for (xa, a), (xb, b) in zip(series, series[1:], strict=False)
             if judge(a, b) == HOLDS]  # fmt: skip
    verdict = DIVERGES if end == DIVERGES or falls else end
    ours = f"{_at(axis, x0)} {_pm(*first)} -> {_at(axis, x1)} {_pm(*last)}"
    if falls:
        ours += "; falls " + ", ".join(f"{_at(axis, a)}->{b}" for a, b in falls)
    pts = (Point(scheme, x0, metric, first[0]), Point(scheme, x1, metric, last[0]))
    return Verdict(claim, verdict, ours, pts)


def incast_onset(rows: Rows, scheme: str, claim: Mapping[str, Any]) -> tuple[Any, float] | None:
    """INCAST_ONSET of one scheme over the claim's N range: (N, its goodput), or None
    when no N in range qualifies. The best at fewer senders counts every N run below."""
    rto = _rto(rows, scheme)
    best: tuple[float, float | None] | None = None
    for n, mean, lo, hi in _series(rows, scheme, "goodput_mbps"):
        here = (mean, _half_width(lo, hi))
        if (
            best is not None
            and _in_range(n, claim)
            and _judge(best, here, "goodput_mbps") == HOLDS
            and n in rto
            and rto[n][0] > 0
        ):
            return n, mean
        if best is None or mean > best[0]:
            best = here
    return None


def _earlier(claim: Mapping[str, Any], rows: Rows) -> Verdict:
    """ "With X, incast sets in at fewer senders" (earlier): each scheme's INCAST_ONSET
    before the next one's. A pair holds when the first sets in at a smaller N, or the
    second not in range (beyond the last N run); diverges when the first does not set
    in, or at a larger N; two onsets at the same N are inconclusive."""
    schemes = list(claim["schemes"])
    if any(not _series(rows, s, "goodput_mbps") for s in schemes):
        missing = next(s for s in schemes if not _series(rows, s, "goodput_mbps"))
        return Verdict(claim, NO_DATA, f"no runs for {missing}")
    onsets = {s: incast_onset(rows, s, claim) for s in schemes}
    found = []
    for a, b in zip(schemes, schemes[1:], strict=False):
        oa, ob = onsets[a], onsets[b]
        if oa is None:
            found.append(DIVERGES)
        elif ob is None or oa[0] < ob[0]:
            found.append(HOLDS)
        else:
            found.append(INCONCLUSIVE if oa[0] == ob[0] else DIVERGES)
    parts = [
        f"{s} N={o[0]} ({_num(o[1])})" if o else f"{s} none in range" for s, o in onsets.items()
    ]
    pts = tuple(Point(s, o[0], "goodput_mbps", o[1]) for s, o in onsets.items() if o)
    return Verdict(claim, _worst(found), "onset: " + ", ".join(parts), pts)


def _steps_diminish(claim: Mapping[str, Any], rows: Rows) -> Verdict:
    """ "Sudden decreases whose amplitude diminishes as N grows" (steps_diminish): the
    fall of the metric from N to N + 1 at every such pair run in range, its interval
    from the two points' (independent); the last fall below the first by ORDERING_RULE
    and no fall clearly larger than the one before it (grows, in reverse)."""
    metric, scheme = claim.get("metric", "goodput_mbps"), claim["scheme"]
    pts_in = {
        x: (m, _half_width(lo, hi))
        for x, m, lo, hi in _series(rows, scheme, metric)
        if _in_range(x, claim)
    }
    falls: list[tuple[Any, tuple[float, float | None]]] = []
    for x in sorted(pts_in):
        if x + 1 in pts_in:
            (ma, ha), (mb, hb) = pts_in[x], pts_in[x + 1]
            hw = None if ha is None or hb is None else math.hypot(ha, hb)
            falls.append((x, (ma - mb, hw)))
    if len(falls) < 2:
        return Verdict(claim, NO_DATA, f"fewer than two steps (N, N+1) with {metric}")
    (x0, first), (x1, last) = falls[0], falls[-1]
    end = _judge(first, last, metric)
    rises = [(xa, xb) for (xa, a), (xb, b) in zip(falls, falls[1:], strict=False)
             if _judge(b, a, metric) == HOLDS]  # fmt: skip
    verdict = DIVERGES if end == DIVERGES or rises else end
    ours = (
        f"fall N={x0}->{x0 + 1} {_pm(*first)} ... N={x1}->{x1 + 1} {_pm(*last)} "
        f"({len(falls)} steps)"
    )
    if rises:
        ours += "; larger than the step before at " + ", ".join(f"N={b}" for _a, b in rises)
    pts = tuple(Point(scheme, x, metric, pts_in[x][0]) for x in (x0, x0 + 1, x1, x1 + 1))
    return Verdict(claim, verdict, ours, pts)


def evaluate(claim: Mapping[str, Any], rows: Rows, ctx: Mapping[str, Any]) -> Verdict:
    """One claim against the summary rows of the variant it is about.

    ctx: axis (the row key x is read from: n, the default, or load); topology,
    app and transport (the variant's), needed by the closed-form kinds (the
    schedule the batched scheme ran, model.scheme.batch_schedule) and by `near`
    on goodput (the framing limit)."""
    kind, metric = claim["kind"], claim.get("metric", "goodput_mbps")
    axis = ctx.get("axis", "n")
    if kind in ("matches_bound", "above_bound"):
        return _bound(claim, rows, ctx)
    if kind == "closed_form":
        return _closed_form(claim, ctx)
    if kind == "gap_diminishes":
        return _gap_diminishes(claim, rows, ctx)
    if kind == "ordering":
        return _ordering(claim, rows, axis)
    if kind == "alike":
        return _alike(claim, rows, axis)
    if kind == "grows":
        return _grows(claim, rows, axis)
    if kind == "earlier":
        return _earlier(claim, rows)
    if kind == "steps_diminish":
        return _steps_diminish(claim, rows)
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
    if kind == "near" and metric != "peak_goodput_mbps" and axis not in claim:
        # "converges to about X" over a range: every x in range within the band, the
        # x furthest from X decides
        band = near_band(claim["value"], metric, ctx)
        inside_x = [x for x in series if _in_range(x[0], claim, axis)]
        if not inside_x:
            return Verdict(claim, NO_DATA, "no runs in range")
        worst_v, worst = HOLDS, max(inside_x, key=lambda x: abs(x[1] - claim["value"]))
        for _n, mean, lo, hi in inside_x:
            reach = (
                lo is not None and hi is not None and float(lo) <= band[1] and float(hi) >= band[0]
            )
            worst_v = _worst([worst_v, _side(band[0] <= mean <= band[1], reach)])
        n, mean, lo, hi = worst
        ours = (
            f"furthest {_at(axis, n)}: {_fmt(mean, lo, hi)} (band {_num(band[0])}-{_num(band[1])})"
        )
        return Verdict(claim, worst_v, ours, (Point(claim["scheme"], n, metric, mean),))
    if kind == "near":
        if metric == "peak_goodput_mbps":
            n, mean, lo, hi = max(series, key=lambda x: x[1])
        else:
            at = [x for x in series if x[0] == claim.get(axis)]
            if not at:
                return Verdict(claim, NO_DATA, f"no run at {_at(axis, claim.get(axis))}")
            n, mean, lo, hi = at[0]
        band = near_band(claim["value"], metric, ctx)
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
        ours = f"{_at(axis, n)}: {_fmt(mean, lo, hi)} (band {_num(band[0])}-{_num(band[1])})"
        return Verdict(claim, _side(inside, reach), ours, pts)
    # at_least / at_most over the N range: the worst N decides (and is the point shown);
    # the bound is the paper's number to its printed precision (PRINTED_PRECISION)
    half = printed_half_unit(claim["value"], metric)
    value = claim["value"] + half if kind == "at_most" else claim["value"] - half
    worst, parts = HOLDS, []
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
    sign = ">=" if kind == "at_least" else "<="
    if not parts and worst == HOLDS:
        every = "every N" if axis == "n" else f"every {axis}"
        return Verdict(claim, HOLDS, f"{every} in range {sign} {_num(value)}", pts)
    return Verdict(claim, worst, f"{'; '.join(parts)} (bound {sign} {_num(value)})", pts)


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
        setting = c.get("baseline_label", "(paper's setting)")
        text = f"{setting} {c['text']}" if c.get("baseline") else c["text"]
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
    paper preset reproduces diverges, so the flip explains nothing;
    not_allowed: (ablation, variant) where the claim holds under a setting the
    paper does not allow (EXPLAINING_RULE), so the flip explains nothing."""

    preset: str
    verdict: Verdict
    cls: str
    explained_by: tuple[tuple[str, str], ...] = ()
    not_run: tuple[str, ...] = ()
    broke: tuple[tuple[str, str, str], ...] = ()
    not_allowed: tuple[tuple[str, str], ...] = ()

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
        for abl, variant in self.not_allowed:
            where = f"{abl} ({variant})" if variant else abl
            parts.append(f"{where} flips it under a setting the paper does not allow")
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
    in `broke`), and only if the ablated setting is one the paper allows: the
    ablation's row carries `allowed` (the place, from the ablation's `paper.allows`,
    EXPLAINING_RULE; else it is named in `not_allowed`). Else unexplained, naming
    the ablations that state that id but have no data for it (not run, or not at
    the x it names). Pure: verdicts in, classes out."""
    holding = {v.claim.get("id") for _p, v in paper if v.verdict == HOLDS}
    out = []
    for preset, v in paper:
        if v.verdict != DIVERGES:
            out.append(Classified(preset, v, v.verdict))
            continue
        same = [(a, av) for a, av in ablations if av.claim.get("id") == v.claim.get("id")]
        held: list[tuple[str, str]] = []
        broke: list[tuple[str, str, str]] = []
        not_allowed: list[tuple[str, str]] = []
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
                elif not av.claim.get("allowed"):
                    not_allowed.append((name, variant))
                else:
                    held.append((name, variant))
        if held:
            out.append(Classified(preset, v, EXPLAINED, explained_by=tuple(held)))
            continue
        names = list(dict.fromkeys(a for a, _av in same))
        not_run = tuple(a for a in names if all(av.verdict == NO_DATA for b, av in same if b == a))
        out.append(
            Classified(
                preset,
                v,
                UNEXPLAINED,
                not_run=not_run,
                broke=tuple(broke),
                not_allowed=tuple(not_allowed),
            )
        )
    return out


def class_counts(classified: Sequence[Classified]) -> dict[str, int]:
    """How many claims in each class (every class present, 0 when none)."""
    counts: dict[str, int] = dict.fromkeys(CLASSES, 0)
    for c in classified:
        counts[c.cls] = counts.get(c.cls, 0) + 1
    return counts


# -- the rules, each with one of our claims that holds and one that fails ------


@dataclass(frozen=True)
class Example:
    """A claim of ours on our runs' numbers (`source` says which run): the rows and
    the context it is evaluated on; `expect` is the verdict the rule gives it."""

    label: str  # "<preset>/<claim id>"
    claim: Mapping[str, Any]
    rows: tuple[Mapping[str, Any], ...]
    expect: str
    ctx: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Rule:
    name: str  # the constant(s) in this module that state it
    reading: str  # what the paper's words are taken to mean
    holds: Example
    fails: Example


def _g(scheme: str, n: Any, mean: float, hw: float | None = None, **more: Any) -> dict[str, Any]:
    lo, hi = (None, None) if hw is None else (mean - hw, mean + hw)
    return {"scheme": scheme, "n": n, "goodput_mbps": mean, "goodput_mbps_ci_lo": lo,
            "goodput_mbps_ci_hi": hi, **more}  # fmt: skip


def _seed003_ctx() -> dict[str, Any]:
    """seed003.yaml's settings, which its closed form is computed on."""
    topo = Topology(rto_min_ms=200, link_gbps=1.0, delay_us=25, buffer_bytes=32768)
    app = App(sru_bytes=10000, mode="per-server", rounds=3, jitter_us=20, connections="per-round")
    return {"topology": topo, "app": app, "transport": Transport(init_cwnd=1, delayed_ack=False,
            mss_bytes=1000)}  # fmt: skip


# rcc-heavy with 8 rounds (p4incast-run reproduce --only rcc-heavy --rounds 8) when
# it still ran persistent connections (now ablations/rcc-heavy-connections.yaml's
# ablated variant; issue 46 item 1 made the preset open a connection per flow):
# per N, (scheme, N, mean, 95 % interval) of the mean queue and the p99 FCT
_RCC_QUEUE = (
    ("ictcp", 10, 15.088, 0.0, 113.657), ("ictcp", 20, 24.226, 19.822, 28.63),
    ("ictcp", 30, 43.213, 39.209, 47.216), ("ictcp", 40, 62.234, 59.966, 64.503),
    ("ictcp", 50, 39.789, 13.823, 65.755), ("ictcp", 60, 42.557, 32.737, 52.378),
    ("ictcp", 70, 50.455, 42.067, 58.844), ("ictcp", 80, 43.741, 41.306, 46.177),
    ("ictcp", 90, 51.706, 23.722, 79.691), ("ictcp", 100, 41.972, 28.651, 55.292),
    ("rcc", 10, 20.002, 0.0, 51.826), ("rcc", 20, 22.202, 1.359, 43.044),
    ("rcc", 30, 14.144, 6.616, 21.673), ("rcc", 40, 23.669, 11.143, 36.195),
    ("rcc", 50, 24.972, 19.136, 30.808), ("rcc", 60, 25.617, 19.807, 31.426),
    ("rcc", 70, 25.79, 14.705, 36.875), ("rcc", 80, 26.377, 15.727, 37.027),
    ("rcc", 90, 25.024, 14.239, 35.81), ("rcc", 100, 25.808, 19.786, 31.829),
)  # fmt: skip
_RCC_P99 = (
    ("dctcp", 10, 3.042, 2.369, 3.715), ("dctcp", 20, 5.861, 5.743, 5.978),
    ("dctcp", 30, 8.563, 8.313, 8.812), ("dctcp", 40, 11.345, 11.344, 11.346),
    ("dctcp", 50, 21.639, 0.0, 50.347), ("dctcp", 60, 32.009, 31.86, 32.159),
    ("dctcp", 70, 34.215, 32.353, 36.078), ("dctcp", 80, 36.357, 22.183, 50.532),
    ("dctcp", 90, 40.136, 35.076, 45.195), ("dctcp", 100, 41.557, 35.67, 47.444),
    ("rcc", 10, 3.617, 0.0, 7.95), ("rcc", 20, 6.417, 2.169, 10.665),
    ("rcc", 30, 9.234, 4.796, 13.671), ("rcc", 40, 11.995, 7.784, 16.205),
    ("rcc", 50, 14.784, 10.594, 18.974), ("rcc", 60, 17.573, 13.404, 21.742),
    ("rcc", 70, 20.37, 16.171, 24.569), ("rcc", 80, 23.192, 15.956, 30.427),
    ("rcc", 90, 26.217, 26.139, 26.295), ("rcc", 100, 28.729, 24.807, 32.651),
)  # fmt: skip


def _rows(
    metric: str, data: Sequence[tuple[str, int, float, float, float]]
) -> tuple[dict[str, Any], ...]:
    return tuple(
        {"scheme": s, "n": n, metric: m, f"{metric}_ci_lo": lo, f"{metric}_ci_hi": hi}
        for s, n, m, lo, hi in data
    )


# ictcp-fig8-9's TCP at 256 and 64 KB per sender, as docs/reproduce/REPORT.md at
# fde4a1c printed them (the run of ccc5031): (variant, N, goodput, half width of its
# interval, ratio of rounds with an RTO). 256 KB sets in at N = 24 (900 against 935,
# 35 > 20 and >= 3 %), 64 KB at N = 32 (884 against 932).
_ONSETS = tuple(
    _g(f"tcp@{v}", n, m, hw, rto_round_ratio=r)
    for v, n, m, hw, r in (
        ("sru256k", 8, 935.1, 0.0, 0.0), ("sru256k", 16, 924.2, 12.0, 0.02),
        ("sru256k", 24, 899.7, 19.7, 0.05), ("sru256k", 32, 823.7, 55.8, 0.16),
        ("sru64k", 16, 928.3, 0.0, 0.0), ("sru64k", 24, 932.3, 0.0, 0.0),
        ("sru64k", 32, 884.2, 12.8, 0.06), ("sru64k", 40, 857.1, 64.9, 0.09),
    )
)  # fmt: skip


# Our numbers are those of docs/reproduce/REPORT.md at commit 83d4649 (the report
# before these rules) unless a label says otherwise; a label ending "(would fail)"
# is a value no run of ours gave, shown because the rule cannot be failed by ours.
_GBE = {"topology": Topology(link_gbps=1.0), "transport": Transport()}
RULES: tuple[Rule, ...] = (
    Rule(
        "ORDERING_RULE, MIN_EFFECT",
        "an order holds when the 95 % intervals are apart and the gap is at least the "
        "metric's minimum effect (goodput: 3 % of the larger)",
        Example(
            "rcc-heavy/rcc-best-goodput",
            {
                "id": "rcc-best-goodput",
                "kind": "ordering",
                "best": True,
                "schemes": ["rcc", "dctcp", "ictcp", "tcp"],
                "text": "",
            },
            (
                _g("rcc", 60, 922, 4.45),
                _g("dctcp", 60, 617, 18.4),
                _g("ictcp", 60, 861, 21.5),
                _g("tcp", 60, 644, 32.2),
            ),
            HOLDS,
        ),
        Example(
            "newdctcp-fig9a/newdctcp-stays-ahead",
            {
                "id": "newdctcp-stays-ahead",
                "kind": "ordering",
                "schemes": ["newdctcp", "dctcp"],
                "text": "",
            },
            (_g("newdctcp", 40, 938, 0.171), _g("dctcp", 40, 937, 0.319)),
            DIVERGES,
        ),
    ),
    Rule(
        "NEAR_TOLERANCE",
        "'about X' in the middle of a range: within 10 % of X",
        Example(
            "seed003/tcp-8-at-20",
            {"id": "tcp-8-at-20", "kind": "near", "scheme": "tcp", "n": 20, "value": 8, "text": ""},
            (_g("tcp", 20, 7.95, 0.005),),
            HOLDS,
            _GBE,
        ),
        Example(
            "seed003/tcp-600-at-5",
            {
                "id": "tcp-600-at-5",
                "kind": "near",
                "scheme": "tcp",
                "n": 5,
                "value": 600,
                "text": "",
            },
            (_g("tcp", 5, 525, 1.0),),
            DIVERGES,
            _GBE,
        ),
    ),
    Rule(
        "PHYSICAL",
        "'about X' near the link rate: the band stops at the framing limit (941 Mbit/s on "
        "1 GbE with 1448-B segments)",
        Example(
            "newdctcp-fig7/peak-newdctcp",
            {
                "id": "peak-newdctcp",
                "kind": "near",
                "scheme": "newdctcp",
                "metric": "peak_goodput_mbps",
                "value": 981,
                "text": "",
            },
            (_g("newdctcp", 20, 924, 2.0),),
            HOLDS,
            _GBE,
        ),
        Example(
            "newdctcp-fig7/peak-newdctcp at 960 (would fail)",
            {
                "id": "peak-newdctcp",
                "kind": "near",
                "scheme": "newdctcp",
                "metric": "peak_goodput_mbps",
                "value": 981,
                "text": "",
            },
            (_g("newdctcp", 20, 960, 2.0),),
            DIVERGES,
            _GBE,
        ),
    ),
    Rule(
        "COUNT_METRICS",
        "'about X' of a count: the wider of 10 % and the central 95 % of a Poisson(X) count",
        Example(
            "rcc-at-scale/rcc-drops-1-at-60",
            {
                "id": "rcc-drops-1-at-60",
                "kind": "near",
                "scheme": "rcc",
                "metric": "drops_agg_queue",
                "load": 0.6,
                "value": 1,
                "text": "",
            },
            ({"scheme": "rcc", "load": 0.6, "drops_agg_queue": 0.0},),
            HOLDS,
            {"axis": "load"},
        ),
        Example(
            "rcc-at-scale/rcc-drops-64-at-90",
            {
                "id": "rcc-drops-64-at-90",
                "kind": "near",
                "scheme": "rcc",
                "metric": "drops_agg_queue",
                "load": 0.9,
                "value": 64,
                "text": "",
            },
            ({"scheme": "rcc", "load": 0.9, "drops_agg_queue": 0.0},),
            DIVERGES,
            {"axis": "load"},
        ),
    ),
    Rule(
        "PRINTED_PRECISION",
        "a bound is the paper's number to its last printed digit: 'at most 39' holds to 39.5",
        Example(
            "seed003-fig8-25/tcp-39-to-96k (buf96k)",
            {"id": "tcp-39-to-96k", "kind": "at_most", "scheme": "tcp", "value": 39, "text": ""},
            (_g("tcp", 25, 39.2, 0.05),),
            HOLDS,
        ),
        Example(
            "seed003-fig8-25/tcp-900-above-96k (buf112k)",
            {
                "id": "tcp-900-above-96k",
                "kind": "at_least",
                "scheme": "tcp",
                "value": 900,
                "text": "",
            },
            (_g("tcp", 25, 39.1, 0.05),),
            DIVERGES,
        ),
    ),
    Rule(
        "SHARP_DROP, FREQUENT_RTO",
        "'drops sharply from about N': 25 % below the best within the span the paper's "
        "figure fixes (NewDCTCP: 5 senders), with an RTO in most rounds",
        Example(
            "newdctcp-fig7/tcp-collapses-near-10 (sru64k)",
            {
                "id": "tcp-collapses-near-10",
                "kind": "collapse_n",
                "scheme": "tcp",
                "lo": 5,
                "hi": 15,
                "span": 5,
                "text": "",
            },
            (_g("tcp", 5, 621, rto_round_ratio=0.0), _g("tcp", 10, 415, rto_round_ratio=0.96)),
            HOLDS,
        ),
        Example(
            "newdctcp-fig7/dctcp-collapses-near-25 (sru64k)",
            {
                "id": "dctcp-collapses-near-25",
                "kind": "collapse_n",
                "scheme": "dctcp",
                "lo": 20,
                "hi": 30,
                "span": 5,
                "text": "",
            },
            (_g("dctcp", 30, 911, rto_round_ratio=1.0), _g("dctcp", 35, 769, rto_round_ratio=1.0)),
            DIVERGES,
        ),
    ),
    Rule(
        "INCAST_ONSET",
        "'with X, incast sets in at fewer senders': the first N whose goodput falls below "
        "the best at fewer senders by ORDERING_RULE, with an RTO in some round, comes "
        "first for X",
        Example(
            "ictcp-fig8-9/tcp-incast-earlier-with-larger-sru, 256 before 64 KB",
            {
                "id": "tcp-incast-earlier-with-larger-sru",
                "kind": "earlier",
                "schemes": ["tcp@sru256k", "tcp@sru64k"],
                "text": "",
            },
            _ONSETS,
            HOLDS,
        ),
        Example(
            "ictcp-fig8-9/tcp-incast-earlier-with-larger-sru read 64 before 256 KB (would fail)",
            {
                "id": "tcp-incast-earlier-with-larger-sru",
                "kind": "earlier",
                "schemes": ["tcp@sru64k", "tcp@sru256k"],
                "text": "",
            },
            _ONSETS,
            DIVERGES,
        ),
    ),
    Rule(
        "RELATIVE_RULE",
        "'X % lower on average': the ratio of the two means over N, minus 1, within 10 % of X",
        Example(
            "rcc-heavy/rcc-queue-vs-ictcp (8 rounds, persistent connections)",
            {
                "id": "rcc-queue-vs-ictcp",
                "kind": "relative",
                "scheme": "rcc",
                "than": "ictcp",
                "metric": "qdepth_mean",
                "value": -0.436,
                "text": "",
            },
            _rows("qdepth_mean", _RCC_QUEUE),
            HOLDS,
        ),
        Example(
            "rcc-heavy/rcc-p99-vs-dctcp (8 rounds, persistent connections)",
            {
                "id": "rcc-p99-vs-dctcp",
                "kind": "relative",
                "scheme": "rcc",
                "than": "dctcp",
                "metric": "fct_p99_ms",
                "value": -0.164,
                "text": "",
            },
            _rows("fct_p99_ms", _RCC_P99),
            DIVERGES,
        ),
    ),
)


def explaining_examples() -> tuple[Classified, Classified]:
    """EXPLAINING_RULE on two of our divergences as docs/reproduce/REPORT.md at 83d4649
    classed them: rcc-at-scale's rcc-drops-from-60 flips under an initial window of 10
    (RCC states none: allowed, explained); newdctcp-fig7's dctcp-collapses-near-25 flips
    under a 200 ms RTO_min (NewDCTCP §5.1.2 states 10 ms: not allowed, unexplained)."""

    def v(cid: str, verdict: str, variant: str = "", **more: Any) -> Verdict:
        return Verdict({"id": cid, "text": "", "variant": variant, **more}, verdict, "")

    allowed = classify(
        [("rcc-at-scale", v("rcc-drops-from-60", DIVERGES))],
        [("rcc-at-scale-init-cwnd", v("rcc-drops-from-60", HOLDS,
          allowed="transport.init_cwnd 10: RCC §4.1, §4.3, §6, §6.2: not stated"))],
    )[0]  # fmt: skip
    contradicted = classify(
        [("newdctcp-fig7", v("dctcp-collapses-near-25", DIVERGES, "sru64k"))],
        [("newdctcp-rto-min", v("dctcp-collapses-near-25", DIVERGES, "rto_min_ms10-sru64k",
          baseline=True, allowed="topology.rto_min_ms 10: NewDCTCP §5.1.2")),
         ("newdctcp-rto-min", v("dctcp-collapses-near-25", HOLDS, "rto_min_ms200-sru64k"))],
    )[0]  # fmt: skip
    return allowed, contradicted


def rule_table() -> list[str]:
    """REPORT.md's table of the rules: per rule, one claim of ours that holds under it
    and one that fails, each evaluated here (tests pin the verdicts)."""
    lines = [
        "| rule | reading | holds under it | fails under it |",
        "|---|---|---|---|",
    ]
    for r in RULES:
        cells = []
        for ex in (r.holds, r.fails):
            v = evaluate(ex.claim, ex.rows, ex.ctx or {})
            cells.append(f"{ex.label}: {v.ours} — **{v.verdict}**")
        lines.append(f"| `{r.name}` | {r.reading} | {cells[0]} | {cells[1]} |")
    ok, no = explaining_examples()
    lines.append(
        f"| `EXPLAINING_RULE` | {EXPLAINING_RULE} | {ok.preset}/{ok.verdict.claim['id']}: "
        f"**{ok.label}** (RCC states no initial window) | {no.preset}/"
        f"{no.verdict.claim['id']} ({no.verdict.claim['variant']}): **{no.label}** "
        "(§5.1.2 states 10 ms) |"
    )
    return lines
