"""Per-run metrics of an incast experiment and their 95 % confidence intervals
(pure; docs/algorithms.md §6).

Input is one run dict of the shared result schema (experiments/SCHEMA.md):
rounds with completion time, bytes, goodput, per-flow FCTs and the senders'
TcpExt TCPTimeouts delta, plus the switch's per-port counters and its
queue-depth histogram. `summarize` turns it into one flat record:

- goodput: mean and sample standard deviation over rounds of
  bytes / completion time (a round ends when its slowest flow ends);
- rto_round_ratio: rounds in which >= 1 flow hit an RTO / rounds;
- FCT p50/p99 and mean: over every flow of every round, pooled;
- queue depth p50/p95/max: from the bottleneck port's histogram, exact to one
  bucket (controller/histogram.py);
- ce_marks: packets the switch turned CE at the bottleneck (`marked`);
  drops: tail drops plus Not-ECT drops (`queue_drops + ecn_drop`);
- jain: Jain's fairness index (Jain, Chiu & Hawe, DEC-TR-301, 1984),
  J = (sum x)^2 / (n * sum x^2), over the flows of one round, where flow i's
  throughput is x_i = its bytes / its FCT (FCT counted from its own request,
  so seed-003 batching does not look unfair), then averaged over rounds.

The framing limit is the goodput a saturated link can carry:
C * MSS / wire bytes per packet (1448 / 1538 on Ethernet with TCP timestamps:
94.1 % of the line rate).

Confidence intervals (95 %, two-sided) on goodput, RTO-round ratio, FCT p99
and FCT mean (CI_METRICS), for one (scheme, N) point:

Unit of replication. The rounds of a run are not independent: a round starts
with the windows, DCTCP alpha and queue the previous round left, so rounds
near each other look alike. Repeats are independent: each is a fresh network
(testbed) or simulation with its own seed (repeat r runs with seed r + 1).

- R >= 2 repeats with a value: Student t over the R per-repeat values x_r
  (each repeat's mean goodput, RTO-round ratio, FCT p99, FCT mean) [Law]:

      x_bar +- t(0.975, R-1) * s / sqrt(R),   s^2 = sum (x_r - x_bar)^2 / (R - 1)

  Method "t-repeats", n = R. One exception: when every repeat has the same
  RTO-round ratio (s = 0; typically all 0 or all 1) the t interval has zero
  width, which says nothing; the Wilson interval below over all the repeats'
  rounds pooled is given instead (method "wilson-rounds", n = rounds).
- One repeat, goodput and FCT: batch means / sectioning over its n rounds.
  The rounds are cut into k = min(30, floor(sqrt(n))) contiguous batches
  (sizes ceil(n/k) or floor(n/k), the longer first); theta_j is the metric
  computed on batch j alone (mean goodput of its rounds; p99 or mean of its
  flows pooled), and the interval is centred on theta, the metric over all
  rounds:

      theta +- t(0.975, k-1) * s_B / sqrt(k),  s_B^2 = sum (theta_j - mean_j theta_j)^2 / (k-1)

  For a mean this is the method of batch means [Schmeiser; Law]; for a
  quantile it is sectioning [Asmussen-Glynn; Nakayama]. Batch estimates are
  nearly independent once a batch is much longer than the few rounds over
  which the windows a round inherits still matter; sqrt(n) batches of
  sqrt(n) rounds lets both grow with n [Chien-Goldsman-Melamed], and beyond
  30 batches the t quantile gains nothing [Schmeiser]. Method "t-batches",
  n = k. 10 rounds give 3 batches and t(0.975, 2) = 4.30: a wide interval,
  honestly so; with fewer than 4 rounds there is none. A batch's p99 over few
  flows is close to its maximum, so the p99 interval is rough when a batch
  holds fewer than ~100 flows.
- One repeat, RTO-round ratio: the Wilson score interval over its n rounds,
  x of them with an RTO, p = x/n, z = Phi^-1(0.975) [Wilson; Brown-Cai-DasGupta,
  who recommend it over p +- z sqrt(p(1-p)/n) for small n or p near 0 or 1]:

      (p + z^2/(2n) +- z * sqrt(p(1-p)/n + z^2/(4n^2))) / (1 + z^2/n)

  Method "wilson-rounds", n = rounds. It treats rounds as independent
  Bernoulli trials, which they are not (RTO rounds cluster), so it is likely
  too narrow; tables mark it with "*".

Every interval is clipped to the metric's range ([0, 1] for the ratio, >= 0
otherwise). t(0.975, nu) is a table exact to 6 decimals for nu <= 30 and the
Cornish-Fisher expansion A&S 26.7.5 above (error < 1e-7), z at nu = inf.

[Law] A. M. Law, Simulation Modeling and Analysis, 5th ed., McGraw-Hill 2015, ch. 9.
[Schmeiser] B. Schmeiser, Batch size effects in the analysis of simulation
    output, Operations Research 30(3):556-568, 1982.
[Chien-Goldsman-Melamed] C. Chien, D. Goldsman, B. Melamed, Large-sample
    results for batch means, Management Science 43(9):1288-1295, 1997.
[Asmussen-Glynn] S. Asmussen, P. W. Glynn, Stochastic Simulation: Algorithms
    and Analysis, Springer 2007, ch. III.5 (sectioning).
[Nakayama] M. K. Nakayama, Confidence intervals for quantiles using
    sectioning when applying variance-reduction techniques, ACM TOMACS 24(4), 2014.
[Wilson] E. B. Wilson, Probable inference, the law of succession, and
    statistical inference, JASA 22(158):209-212, 1927.
[Brown-Cai-DasGupta] L. D. Brown, T. T. Cai, A. DasGupta, Interval estimation
    for a binomial proportion, Statistical Science 16(2):101-133, 2001.
[A&S] M. Abramowitz, I. A. Stegun, Handbook of Mathematical Functions, 1964, 26.7.5.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from p4incast.controller import histogram
from p4incast.model.wire import MSS_BYTES, WIRE_FRAME_BYTES

MSS = MSS_BYTES  # TCP payload bytes per full packet
WIRE = WIRE_FRAME_BYTES  # wire bytes per full packet

# Every metric key of a summary, in the order tables and CSVs show them.
SUMMARY_METRICS = (
    "goodput_mbps",
    "goodput_std_mbps",
    "rto_round_ratio",
    "timeouts",
    "retrans",
    "fct_p50_ms",
    "fct_p99_ms",
    "qdepth_p50",
    "qdepth_p95",
    "qdepth_max",
    "ce_marks",
    "drops",
    "jain",
    "fct_mean_ms",
)

# Metrics that carry a 95 % confidence interval, and the keys that hold it:
# <metric>_ci_lo, _ci_hi (bounds, the metric's unit), _ci_n (samples the interval
# rests on: repeats, batches or rounds), _ci_method (METHODS).
CI_METRICS = ("goodput_mbps", "rto_round_ratio", "fct_p99_ms", "fct_mean_ms")
CI_PARTS = ("lo", "hi", "n", "method")
CI_FIELDS = tuple(f"{m}_ci_{p}" for m in CI_METRICS for p in CI_PARTS)

T_REPEATS = "t-repeats"  # Student t over per-repeat values
T_BATCHES = "t-batches"  # batch means / sectioning over the rounds of one repeat
WILSON = "wilson-rounds"  # Wilson score over rounds (assumes independent rounds)
ORDER_STAT = "order-statistics"  # a quantile's distribution-free interval over independent samples
METHODS = (T_REPEATS, T_BATCHES, WILSON, ORDER_STAT)

LEVEL = 0.95
Z975 = statistics.NormalDist().inv_cdf(0.975)  # 1.959964
MAX_BATCHES = 30  # Schmeiser (1982): little is gained beyond 30 batches
MIN_ROUNDS_FOR_BATCHES = 4  # two batches of two rounds
_BOUNDS = {"rto_round_ratio": (0.0, 1.0)}  # every other CI metric: [0, inf)

# t(0.975, nu) for nu = 1..30 (two-sided 95 %), to 6 decimals.
_T975 = (
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004,
    2.262157, 2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905,
    2.109816, 2.100922, 2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899,
    2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
)  # fmt: skip


def _finite(values: Iterable[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def percentile(values: Iterable[float | None], q: float) -> float | None:
    """q-th percentile, q in [0, 100], by linear interpolation between order statistics.

    The sorted finite values x_0..x_{n-1} sit at ranks 0..n-1; percentile q is at
    rank h = q/100 * (n - 1), interpolated between x_floor(h) and x_ceil(h)
    (numpy's default, "linear"). None and NaN values are ignored; with no
    values left the result is None.
    """
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile {q} outside [0, 100]")
    xs = sorted(_finite(values))
    if not xs:
        return None
    h = q / 100.0 * (len(xs) - 1)
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def jain(values: Iterable[float | None]) -> float | None:
    """Jain's fairness index (sum x)^2 / (n * sum x^2), in [1/n, 1].

    None and NaN values are ignored. Empty input, or every value zero (0/0:
    nobody got anything, so fairness is undefined), gives None. Negative
    values are an error.
    """
    xs = _finite(values)
    if any(x < 0 for x in xs):
        raise ValueError("jain: negative throughput")
    sq = sum(x * x for x in xs)
    if not xs or sq == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sq)


def goodput_bps(nbytes: float, seconds: float) -> float:
    """Application bytes over a duration, in bit/s."""
    if nbytes < 0:
        raise ValueError(f"goodput: negative byte count {nbytes}")
    if not seconds > 0:
        raise ValueError(f"goodput: duration must be > 0 s, got {seconds}")
    return 8.0 * nbytes / seconds


def timeouts_delta(before: Mapping[str, int], after: Mapping[str, int]) -> int:
    """Total growth of per-namespace TcpExt TCPTimeouts counters between two readings.

    Both maps are namespace -> cumulative counter. The namespaces must match,
    and a counter that went backwards (namespace restarted, counters reset)
    makes the delta meaningless, so both are errors.
    """
    if set(before) != set(after):
        missing = sorted(set(before) ^ set(after))
        raise ValueError(f"timeouts_delta: namespaces differ between readings: {missing}")
    total = 0
    for ns, old in before.items():
        new = after[ns]
        if new < old:
            raise ValueError(f"timeouts_delta: TCPTimeouts in {ns!r} went backwards ({old}->{new})")
        total += new - old
    return total


def _bucket(key: str | int) -> int:
    text = str(key).strip().removeprefix(">=")
    try:
        bucket = int(text)
    except ValueError:
        raise ValueError(f"histogram bucket {key!r} is not a depth") from None
    if bucket < 0:
        raise ValueError(f"histogram bucket {key!r} is negative")
    return bucket


def hist_counts(hist: Mapping[str, int] | Sequence[int]) -> list[int]:
    """Histogram as a list of counts indexed by depth.

    Accepts the list the controller reads, or the schema's {"<depth>": count}
    map (keys may also be ">=N" for the open last bucket, as
    `histogram.label` prints it; that bucket counts as depth N).
    """
    if isinstance(hist, Mapping):
        counts: list[int] = []
        for key, count in hist.items():
            b = _bucket(key)
            if b >= len(counts):
                counts.extend([0] * (b + 1 - len(counts)))
            counts[b] += int(count)
    else:
        counts = [int(c) for c in hist]
    if any(c < 0 for c in counts):
        raise ValueError("histogram has a negative count")
    return counts


def hist_percentile(hist: Mapping[str, int] | Sequence[int], q: float) -> int | None:
    """Depth at percentile q in [0, 100] (smallest bucket reaching q% of packets); None if empty."""
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile {q} outside [0, 100]")
    return histogram.quantile(hist_counts(hist), q / 100.0)


def hist_max(hist: Mapping[str, int] | Sequence[int]) -> int | None:
    """Deepest non-empty bucket; None if empty."""
    return histogram.maximum(hist_counts(hist))


def hist_cdf(hist: Mapping[str, int] | Sequence[int]) -> list[tuple[int, float]]:
    """(depth, fraction of packets that saw depth <= it) for every bucket; [] if empty."""
    counts = hist_counts(hist)
    total = sum(counts)
    if total == 0:
        return []
    out, running = [], 0
    for depth, count in enumerate(counts):
        running += count
        out.append((depth, running / total))
    return out


def framing_limit_bps(link_bps: float, mss: int = MSS, wire: int = WIRE) -> float:
    """Most goodput a link of `link_bps` carries with full packets: C * MSS / wire bytes."""
    if not link_bps > 0 or not 0 < mss <= wire:
        raise ValueError(f"framing_limit: need link_bps > 0 and 0 < mss <= wire, got {link_bps}")
    return link_bps * mss / wire


def round_ceiling_bps(round_bytes: float, link_bps: float, rtt_s: float) -> float:
    """Most goodput a round of `round_bytes` can reach: its bytes at the framing
    limit, after one base RTT in which the link carries nothing of it (the
    request going out, the first segment coming back)."""
    t = round_bytes * 8 / framing_limit_bps(link_bps)
    return round_bytes * 8 / (t + max(rtt_s, 0.0))


class Interval(NamedTuple):
    """A two-sided 95 % confidence interval [lo, hi].

    n is the number of samples it rests on (repeats, batches or rounds) and
    method one of METHODS.
    """

    lo: float
    hi: float
    n: int
    method: str


def t975(df: float) -> float:
    """Student t quantile t(0.975, df): the two-sided 95 % multiplier, df an integer >= 1 or inf.

    A table (exact to 6 decimals) up to df = 30; above, the Cornish-Fisher expansion
    t = z + g1/df + g2/df^2 + g3/df^3 + g4/df^4 (A&S 26.7.5), z = Phi^-1(0.975).
    """
    if df == math.inf:
        return Z975
    if not (isinstance(df, int | float) and df >= 1 and df == int(df)):
        raise ValueError(f"t975: degrees of freedom must be an integer >= 1, got {df}")
    nu = int(df)
    if nu <= len(_T975):
        return _T975[nu - 1]
    z = Z975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / nu + g2 / nu**2 + g3 / nu**3 + g4 / nu**4


def _t_half(values: Sequence[float]) -> float:
    return t975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


def t_interval(values: Iterable[float | None]) -> Interval | None:
    """Student t interval for the mean of k independent values: x_bar +- t(0.975, k-1) s/sqrt(k).

    None/NaN are ignored; None with fewer than two values. Method "t-repeats": the
    values are per-repeat results.
    """
    xs = _finite(values)
    if len(xs) < 2:
        return None
    mean, half = statistics.fmean(xs), _t_half(xs)
    return Interval(mean - half, mean + half, len(xs), T_REPEATS)


def wilson_interval(successes: int, trials: int) -> Interval | None:
    """Wilson score interval for the proportion successes/trials (module docstring).

    None when there are no trials.
    """
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"wilson: need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return None
    n, p, z2 = trials, successes / trials, Z975 * Z975
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z975 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    lo = 0.0 if successes == 0 else max(0.0, centre - half)  # exact 0 and 1 at the ends
    hi = 1.0 if successes == trials else min(1.0, centre + half)
    return Interval(lo, hi, n, WILSON)


def quantile_interval(values: Iterable[float | None], q: float) -> Interval | None:
    """Distribution-free 95 % interval for the q-th percentile of independent samples
    [Nakayama, §2]: order statistics x_(l) <= x_(u) with B ~ Binomial(n, q/100)
    (how many samples fall below the quantile), l the largest rank with
    P(B < l) <= 2.5 % and u the smallest with P(B >= u) <= 2.5 %: coverage
    P(l <= B < u) >= 95 %, exactly, for any continuous distribution. An end the
    sample cannot bound (l = 0, or u > n: too few samples for that tail, e.g.
    fewer than 367 for the p99's upper end) is -inf / +inf. None below two values."""
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile {q} outside [0, 100]")
    xs = sorted(_finite(values))
    n = len(xs)
    if n < 2:
        return None
    p = q / 100.0
    cdf, acc = [], 0.0  # cdf[k] = P(B <= k)
    for k in range(n + 1):
        acc += _binom_pmf(n, k, p)
        cdf.append(acc)
    tail = (1 - LEVEL) / 2
    below = [k for k in range(1, n + 1) if cdf[k - 1] <= tail]  # P(B < k) = P(B <= k - 1)
    above = [k for k in range(1, n + 1) if 1 - cdf[k - 1] <= tail]  # P(B >= k)
    lo = xs[max(below) - 1] if below else -math.inf
    hi = xs[min(above) - 1] if above else math.inf
    return Interval(lo, hi, n, ORDER_STAT)


def _binom_pmf(n: int, k: int, p: float) -> float:
    if p <= 0.0 or p >= 1.0:
        return float(k == (0 if p <= 0.0 else n))
    log = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return math.exp(log + k * math.log(p) + (n - k) * math.log1p(-p))


def batches(n: int) -> list[range]:
    """Index ranges of k = min(30, floor(sqrt(n))) contiguous batches covering n rounds.

    Sizes differ by at most one, the longer batches first. [] when k < 2 (n < 4):
    too few rounds for an interval.
    """
    k = min(MAX_BATCHES, math.isqrt(max(n, 0)))
    if k < 2:
        return []
    size, extra = divmod(n, k)
    out, start = [], 0
    for j in range(k):
        stop = start + size + (1 if j < extra else 0)
        out.append(range(start, stop))
        start = stop
    return out


def batch_interval(point: float | None, batch_values: Iterable[float | None]) -> Interval | None:
    """Batch means / sectioning: point +- t(0.975, k-1) * s_B / sqrt(k) over k batch estimates.

    `point` is the metric over all rounds, `batch_values` the same metric on each
    batch (None/NaN ignored). None without a point or with fewer than two batches.
    """
    xs = _finite(batch_values)
    if point is None or not math.isfinite(point) or len(xs) < 2:
        return None
    half = _t_half(xs)
    return Interval(point - half, point + half, len(xs), T_BATCHES)


def clip(interval: Interval | None, metric: str) -> Interval | None:
    """The interval cut to the metric's range: [0, 1] for rto_round_ratio, [0, inf) otherwise."""
    if interval is None:
        return None
    low, high = _BOUNDS.get(metric, (0.0, math.inf))
    return interval._replace(
        lo=min(max(interval.lo, low), high), hi=max(min(interval.hi, high), low)
    )


def ci_fields(metric: str, interval: Interval | None) -> dict[str, Any]:
    """The flat <metric>_ci_lo/_hi/_n/_method keys of an interval (all None without one)."""
    values = (None,) * len(CI_PARTS) if interval is None else tuple(interval)
    return {f"{metric}_ci_{p}": v for p, v in zip(CI_PARTS, values, strict=True)}


def interval_of(summary: Mapping[str, Any], metric: str) -> Interval | None:
    """The interval stored in a flat record (a summary or a summary.csv row), or None."""
    lo, hi = summary.get(f"{metric}_ci_lo"), summary.get(f"{metric}_ci_hi")
    if lo in (None, "") or hi in (None, ""):  # "" is how summary.csv writes None
        return None
    return Interval(
        float(lo), float(hi), int(summary[f"{metric}_ci_n"]), str(summary[f"{metric}_ci_method"])
    )


def point_interval(summaries: Sequence[Mapping[str, Any]], metric: str) -> Interval | None:
    """95 % interval of `metric` at one (scheme, N) from the summaries of its good repeats.

    Two or more repeats with a value: Student t over their values (for the RTO-round
    ratio with no spread, Wilson over their rounds pooled). One: the interval
    `summarize` computed from that repeat's rounds. See the module docstring.
    """
    have = [s for s in summaries if s.get("status") == "ok" and s.get(metric) is not None]
    if len(have) == 1:
        return interval_of(have[0], metric)
    values = [float(s[metric]) for s in have]
    if metric == "rto_round_ratio" and len(have) >= 2 and max(values) == min(values):
        trials = sum(int(s["rounds"]) for s in have)
        hits = sum(round(float(s[metric]) * int(s["rounds"])) for s in have)
        return wilson_interval(hits, trials)
    return clip(t_interval(values), metric)


def _round_jain(rnd: Mapping[str, Any]) -> float | None:
    fcts = [f for f in rnd.get("fct_s") or [] if f is not None and math.isfinite(f)]
    if not fcts or any(f <= 0 for f in fcts):
        return None
    per_flow = rnd["bytes"] / len(fcts)  # every flow of a round asks for the same size
    return jain(per_flow / f for f in fcts)


def _round_rto(rnd: Mapping[str, Any]) -> bool:
    if "rto" in rnd and rnd["rto"] is not None:
        return bool(rnd["rto"])
    return (rnd.get("timeouts") or 0) > 0


def _goodput_mbps(rounds: Sequence[Mapping[str, Any]]) -> float | None:
    goodputs = _finite(r["goodput_bps"] for r in rounds)
    return statistics.fmean(goodputs) / 1e6 if goodputs else None


def _flows(rounds: Sequence[Mapping[str, Any]]) -> list[float]:
    return _finite(f for r in rounds for f in r.get("fct_s") or [])


def _fct_percentile_ms(rounds: Sequence[Mapping[str, Any]], q: float) -> float | None:
    value = percentile(_flows(rounds), q)
    return None if value is None else value * 1e3


def _fct_mean_ms(rounds: Sequence[Mapping[str, Any]]) -> float | None:
    fcts = _flows(rounds)
    return statistics.fmean(fcts) * 1e3 if fcts else None


def round_intervals(rounds: Sequence[Mapping[str, Any]]) -> dict[str, Interval | None]:
    """95 % intervals of one run's CI_METRICS from its rounds alone (module docstring).

    Goodput, FCT p99 and FCT mean: batch means / sectioning over `batches(len(rounds))`,
    centred on the metric over all rounds. RTO-round ratio: Wilson over the rounds.
    """
    parts = [rounds[b.start : b.stop] for b in batches(len(rounds))]
    estimators: dict[str, Callable[[Sequence[Mapping[str, Any]]], float | None]] = {
        "goodput_mbps": _goodput_mbps,
        "fct_p99_ms": lambda rs: _fct_percentile_ms(rs, 99),
        "fct_mean_ms": _fct_mean_ms,
    }
    out = {
        metric: clip(batch_interval(estimate(rounds), [estimate(p) for p in parts]), metric)
        for metric, estimate in estimators.items()
    }
    out["rto_round_ratio"] = wilson_interval(sum(_round_rto(r) for r in rounds), len(rounds))
    return {m: out[m] for m in CI_METRICS}


def _empty(run: Mapping[str, Any], error: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "scheme": run.get("scheme"),
        "n": run.get("n"),
        "repeat": run.get("repeat", 0),
        "engine": run.get("engine"),
        "status": "failed",
        "error": error,
        "rounds": 0,
        "base_rtt_ms": run.get("base_rtt_ms"),
        "wall_s": run.get("wall_s"),
    }
    out.update(dict.fromkeys(SUMMARY_METRICS))
    out.update(dict.fromkeys(CI_FIELDS))
    return out


def summarize(run: Mapping[str, Any]) -> dict[str, Any]:
    """One flat summary of a run dict (experiments/SCHEMA.md schema); see the module docstring.

    Keys: scheme, n, repeat, engine, status, error, rounds, base_rtt_ms, wall_s,
    SUMMARY_METRICS and CI_FIELDS: this run's own intervals from its rounds
    (`round_intervals`; used as the point's interval when it is the only good
    repeat). Metrics are None when unknown: everything for a failed run, a run
    with no rounds, or a malformed run (status "failed", the reason in `error` —
    this never raises); switch metrics when the run has no switch counters;
    goodput_std_mbps with fewer than two rounds; batch intervals with fewer
    than four.
    """
    if not isinstance(run, Mapping):
        return _empty({}, f"run is a {type(run).__name__}, not a dict")
    if run.get("status") != "ok":
        return _empty(run, run.get("error") or f"status {run.get('status')!r}")
    try:
        return _summarize_ok(run)
    except (KeyError, TypeError, ValueError, AttributeError, ZeroDivisionError) as err:
        return _empty(run, f"malformed run: {type(err).__name__}: {err}")


def _summarize_ok(run: Mapping[str, Any]) -> dict[str, Any]:
    rounds = run.get("rounds") or []
    if not rounds:
        return _empty(run, "no rounds recorded")
    out = _empty(run, run.get("error"))
    out["status"] = "ok"
    out["rounds"] = len(rounds)

    goodputs = _finite(r["goodput_bps"] for r in rounds)
    out["goodput_mbps"] = _goodput_mbps(rounds)
    if len(goodputs) >= 2:
        out["goodput_std_mbps"] = statistics.stdev(goodputs) / 1e6
    out["rto_round_ratio"] = sum(_round_rto(r) for r in rounds) / len(rounds)
    out["timeouts"] = sum(int(r.get("timeouts") or 0) for r in rounds)
    out["retrans"] = sum(int(r.get("retrans") or 0) for r in rounds)

    out["fct_p50_ms"] = _fct_percentile_ms(rounds, 50)
    out["fct_p99_ms"] = _fct_percentile_ms(rounds, 99)
    out["fct_mean_ms"] = _fct_mean_ms(rounds)
    for metric, interval in round_intervals(rounds).items():
        out.update(ci_fields(metric, interval))

    fairness = [j for j in (_round_jain(r) for r in rounds) if j is not None]
    out["jain"] = statistics.fmean(fairness) if fairness else None

    switch = run.get("switch") or {}
    port = (switch.get("ports") or {}).get(str(switch.get("bottleneck_port")))
    if port is not None:
        hist = port.get("hist") or {}
        out["qdepth_p50"] = hist_percentile(hist, 50)
        out["qdepth_p95"] = hist_percentile(hist, 95)
        out["qdepth_max"] = hist_max(hist)
        if port.get("marked") is not None:
            out["ce_marks"] = int(port["marked"])
        if port.get("queue_drops") is not None or port.get("ecn_drop") is not None:
            out["drops"] = int(port.get("queue_drops") or 0) + int(port.get("ecn_drop") or 0)
    return out
