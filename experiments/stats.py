"""Statistics for the experiments' 95 % confidence intervals (pure; no
incast knowledge: experiments/metrics.py decides which interval a metric gets).

- Student t interval for the mean of k independent values [Law]:

      x_bar +- t(0.975, k-1) * s / sqrt(k),   s^2 = sum (x_i - x_bar)^2 / (k - 1)

  Method "t-repeats" (`t_interval`): the values are per-repeat results.
- Batch means / sectioning over the n rounds of one run (`batches`,
  `batch_interval`). The rounds are cut into k = min(30, floor(sqrt(n)))
  contiguous batches (sizes ceil(n/k) or floor(n/k), the longer first);
  theta_j is the metric computed on batch j alone, and the interval is
  centred on theta, the metric over all rounds:

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
- Wilson score interval for a proportion, x successes in n trials, p = x/n,
  z = Phi^-1(0.975) [Wilson; Brown-Cai-DasGupta, who recommend it over
  p +- z sqrt(p(1-p)/n) for small n or p near 0 or 1] (`wilson_interval`):

      (p + z^2/(2n) +- z * sqrt(p(1-p)/n + z^2/(4n^2))) / (1 + z^2/n)

  Method "wilson-rounds", n = trials.
- A quantile's distribution-free interval from order statistics of
  independent samples [Nakayama] (`quantile_interval`), method
  "order-statistics".

t(0.975, nu) is a table exact to 6 decimals for nu <= 30 and the
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
from collections.abc import Iterable, Sequence
from typing import NamedTuple

T_REPEATS = "t-repeats"  # Student t over per-repeat values
T_BATCHES = "t-batches"  # batch means / sectioning over the rounds of one repeat
WILSON = "wilson-rounds"  # Wilson score over rounds (assumes independent rounds)
ORDER_STAT = "order-statistics"  # a quantile's distribution-free interval over independent samples
METHODS = (T_REPEATS, T_BATCHES, WILSON, ORDER_STAT)

LEVEL = 0.95
Z975 = statistics.NormalDist().inv_cdf(0.975)  # 1.959964
MAX_BATCHES = 30  # Schmeiser (1982): little is gained beyond 30 batches
MIN_ROUNDS_FOR_BATCHES = 4  # two batches of two rounds

# t(0.975, nu) for nu = 1..30 (two-sided 95 %), to 6 decimals.
_T975 = (
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004,
    2.262157, 2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905,
    2.109816, 2.100922, 2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899,
    2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
)  # fmt: skip


def finite(values: Iterable[float | None]) -> list[float]:
    """The values that are numbers: None and NaN/inf left out."""
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
    xs = sorted(finite(values))
    if not xs:
        return None
    h = q / 100.0 * (len(xs) - 1)
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


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
    xs = finite(values)
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
    xs = sorted(finite(values))
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
    xs = finite(batch_values)
    if point is None or not math.isfinite(point) or len(xs) < 2:
        return None
    half = _t_half(xs)
    return Interval(point - half, point + half, len(xs), T_BATCHES)
