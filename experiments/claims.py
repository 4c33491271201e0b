"""A paper's claims as a preset states them: the schema its `paper:` section is
checked against when the preset loads (config.parse_paper), before anything
runs. Their verdicts against our summary rows are the report side's
(reports/verdicts.py).

A preset (experiments/papers/*.yaml) carries a `paper:` section:

    paper:
      cite: "authors, title, venue, year"
      figure: "Fig. 7a"
      claims:
        - {id: tcp-collapses-near-10, kind: collapse_n, scheme: tcp, lo: 5, hi: 15,
           variant: sru64k, text: "TCP's goodput drops sharply from ~10 senders"}
      reference:                       # numbers the paper states, drawn over our curves
        sru64k: {peak_goodput_mbps: {tcp: 850}, collapse_n: {tcp: 10},
                 goodput_mbps: {dctcp: [[20, 300]]}}
      sources:                         # each setting's place in the paper (experiments/sources.py)
        topology.delay_us: "§5.1.2 — 25 µs per link"

A scheme named `scheme@variant` (newdctcp@sru128k) is that scheme's rows in
another variant of the same preset, so a claim can compare variants ("the same
at SRU 64 and 128 KB": alike, schemes [newdctcp, newdctcp@sru128k]).

`variant` names the variant (the suffix p4incast-run gives it, e.g. sru64k),
or a list of them (variant: [rto_min_ms10-sru64k, rto_min_ms200-sru64k]);
absent: every variant (claim_variants). What a wording is taken to mean
("about", "keeps", "drops sharply", "fewer") is the kind's, stated once with
its reason in reports/verdicts.py (NEAR_TOLERANCE, KEEP_BAND, SHARP_DROP,
ORDERING_RULE, BOUND_TOLERANCE), never a claim's own number.

Rows are a scenario's summary rows, one per (scheme, x): x is what the
scenario sweeps, the `axis` of the evaluation context — N (senders) for an
incast preset, the offered load for an at-scale one (experiments/scenario.py).
A claim names x by that key (n: 10, load: 0.6) and narrows it with
<axis>_min / <axis>_max (n_min, n_max; load_min, load_max).

Kinds (`metric` defaults to goodput_mbps; x ranges default to every x run):

    at_least / at_most   scheme's metric at every x in [min, max] vs value, to
                         the paper's printed precision (verdicts.PRINTED_PRECISION)
    near                 metric at x (n: 10, or peak_goodput_mbps: the best N; no
                         x named: at every x in [min, max], "converges to about X")
                         within verdicts.near_band(value): value · (1 ±
                         NEAR_TOLERANCE), widened to the printed precision and
                         for counts to a Poisson band, goodput cut at the
                         framing limit
    ordering             "fewer", "lower", "lowest", "ahead of", "the best":
                         schemes (first = best) ordered by their mean metric over
                         x in [min, max]; higher is better unless lower: true;
                         every: true — ordered at each x, not only on the means;
                         best: true — only the first must lead ("the best"),
                         the others in any order. Each difference must be real
                         and large enough: the 95 % intervals of the two means do
                         not overlap and they differ by at least the metric's
                         verdicts.MIN_EFFECT (verdicts.ORDERING_RULE); a metric
                         needs a MIN_EFFECT and every point an interval
    drops_from           the scheme's `drops` (per run, mean over repeats) are 0
                         at every x below the claim's x (load: 0.6) and > 0 at that
                         x itself (no data without a run there, inconclusive
                         without one below)
    relative             "scheme's metric is `value` (a fraction: -0.475 = 47.5 %
                         lower) relative to scheme `than`'s": the ratio of the two
                         means over every x in [min, max] run for both, minus 1,
                         within value · (1 ± NEAR_TOLERANCE), with an interval
                         from the means' (verdicts.RELATIVE_RULE)
    collapse_n           "drops sharply from about N": the first N whose goodput
                         is at least verdicts.SHARP_DROP below the best within
                         the `span` senders before it (a span read off the
                         paper's figure), with an RTO in most rounds (over
                         verdicts.FREQUENT_RTO) at that N, lies in [lo, hi]
    no_collapse          "keeps its goodput", "stays high": at every N <= n_max
                         (from n_min) goodput within verdicts.KEEP_BAND of
                         the best at fewer senders, and rounds with an RTO at most
                         `rto_max` (default verdicts.RTO_MAX, "not in most rounds";
                         the paper's own number where it shows one)
    above_bound          seed-003, as the paper states it: T and T~ are upper
                         bounds on a batch's time and on the stagger, so the closed
                         form g is the goodput the schedule guarantees; goodput
                         >= g at every N in [n_min, n_max]
    matches_bound        seed-003: goodput within g·(1 ± BOUND_TOLERANCE) at every N in
                         [n_min, n_max] (T's full buffer of queueing per slow-start
                         round over-estimates a batch's time: the paper states
                         the match above N = 5)
    alike                "the same", "identical", "does not vary much": the two
                         `schemes` within NEAR_TOLERANCE of each other at every x
                         in [min, max] (inconclusive where only the intervals reach)
    grows                "grows / increases with N": the metric at the last x in
                         range above the first by verdicts.ORDERING_RULE, and no
                         step between neighbours a fall by it
    earlier              "with X, incast sets in at fewer senders": the `schemes`
                         (scheme@variant, earliest first) ordered by their incast
                         onset (verdicts.INCAST_ONSET: the first N whose goodput
                         falls below the best at fewer senders by
                         verdicts.ORDERING_RULE, with an RTO in some round there);
                         a scheme with no onset in range sets in beyond the last N
                         run; two onsets at the same N are inconclusive (one step
                         of our grid cannot order them)
    steps_diminish       "sudden decreases whose amplitude diminishes as N grows"
                         (seed 003's zig-zag): the falls of the metric between
                         neighbouring N one apart (N, N + 1, both run: the preset
                         runs both sides of each step), read like `grows` in
                         reverse: the last step's fall below the first's by
                         verdicts.ORDERING_RULE, and no fall clearly larger than
                         the one before it
    closed_form          seed-003: the paper's closed-form number at n against
                         OUR closed form g there (no simulation), within
                         verdicts.near_band(value)
    gap_diminishes       seed-003: "the gap between simulation and model
                         diminishes as N grows": the mean |goodput − g| / g over
                         N <= n_split exceeds that over N > n_split, by
                         verdicts.ORDERING_RULE (metric bound_gap)
    These take g from model.batching.plan on the variant's topology, app and
    transport (its segment size), with the batched scheme's first window: the
    schedule the simulator ran (model.scheme.batch_schedule).

Each verdict names the points that decided it (scheme, x, metric), and the
report's figure marks them with the claim's id (reports/plots.reference_plot).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

KINDS = (
    "at_least",
    "at_most",
    "near",
    "ordering",
    "collapse_n",
    "no_collapse",
    "matches_bound",
    "above_bound",
    "drops_from",
    "relative",
    "closed_form",
    "gap_diminishes",
    "alike",
    "grows",
    "earlier",
    "steps_diminish",
)


class ClaimError(ValueError):
    """A claim a preset states in a form this module cannot check."""


def check_claim(claim: Any, where: str, axis: str = "n") -> None:
    """Refuse a malformed claim before anything runs (one message naming it);
    `axis`: the key that names x in the preset's scenario (n, load)."""
    if not isinstance(claim, dict) or "id" not in claim or "text" not in claim:
        raise ClaimError(f"{where}: a claim needs at least an id and a text")
    where = f"{where} ({claim['id']})"
    kind = claim.get("kind")
    if kind not in KINDS:
        raise ClaimError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    need = {
        "at_least": ("scheme", "value"),
        "at_most": ("scheme", "value"),
        "near": ("scheme", "value"),
        "ordering": ("schemes",),
        "collapse_n": ("scheme", "lo", "hi", "span"),
        "no_collapse": ("scheme", "n_max"),
        "matches_bound": ("scheme",),
        "above_bound": ("scheme",),
        "drops_from": ("scheme", axis),
        "relative": ("scheme", "than", "value"),
        "closed_form": ("n", "value"),
        "gap_diminishes": ("scheme", "n_split"),
        "alike": ("schemes",),
        "grows": ("scheme",),
        "earlier": ("schemes",),
        "steps_diminish": ("scheme",),
    }[kind]
    missing = [k for k in need if k not in claim]
    if missing:
        raise ClaimError(f"{where}: kind {kind} needs {', '.join(missing)}")
    if "tolerance" in claim:
        raise ClaimError(
            f'{where}: `tolerance` is not a claim field; what "about" allows is the '
            "kind's (reports/verdicts.py: NEAR_TOLERANCE, BOUND_TOLERANCE)"
        )
    if "fraction" in claim:
        raise ClaimError(
            f"{where}: `fraction` is not a claim field; collapse_n and no_collapse read "
            "the paper's words by fixed rules (reports/verdicts.py: SHARP_DROP, KEEP_BAND)"
        )
    if kind == "collapse_n" and not (isinstance(claim["span"], int) and claim["span"] >= 1):
        raise ClaimError(f"{where}: span is the senders a drop is judged over, an int >= 1")
    if "rto_max" in claim:
        r = claim["rto_max"]
        if kind != "no_collapse" or not isinstance(r, int | float) or not 0 <= r <= 1:
            raise ClaimError(f"{where}: rto_max is a ratio of rounds in [0, 1], of no_collapse")


def claim_variants(claim: Mapping[str, Any], variants: Sequence[str]) -> list[str]:
    """The variants (suffix labels, in the preset's order) a claim is about: every one
    without `variant`; else the one it names, or each of the list it names. Raises
    ValueError naming what it names that the preset lacks."""
    if "variant" not in claim:
        return list(variants)
    named = claim["variant"]
    want = [str(v) for v in named] if isinstance(named, list) else [str(named)]
    missing = [v for v in want if v not in variants]
    if missing or not want:
        raise ValueError(
            f"claim {claim.get('id')} names variant {', '.join(map(repr, missing)) or '[]'}; "
            f"the preset has {', '.join(repr(v) for v in variants)}"
        )
    return [v for v in variants if v in want]
