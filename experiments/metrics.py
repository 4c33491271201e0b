"""Per-run metrics of an incast experiment and their 95 % confidence intervals
(pure; docs/algorithms.md §6).

Input is one run dict of the shared result schema (experiments/SCHEMA.md):
rounds with completion time, bytes, goodput, per-flow FCTs and the senders'
TcpExt TCPTimeouts delta, plus the switch's per-port counters and its
queue-depth histogram. `summarize` turns it into one flat record:

- goodput: mean and sample standard deviation over rounds of
  bytes / completion time (a round ends when its slowest flow ends);
- rto_round_ratio: rounds in which >= 1 flow hit an RTO / rounds;
- FCT p1/p50/p99 and mean: over every flow of every round, pooled;
  fct_spread_ms: p99 - p1 of the same flows (RCC §6.1.3 ¶1 reads a scheme's
  stability as the difference between its 1st and 99th percentile FCTs);
- fct_max_ms: each round's slowest flow (the FCT the round's last flow
  determines), averaged over rounds;
- queue depth p50/p95/max: from the bottleneck port's histogram, exact to one
  bucket (model/histogram.py); these weigh depth per admitted packet. The
  simulator's histogram has a bucket per depth (no cap); the testbed's stops
  at 127 (its last bucket is open);
- qdepth_mean: packets waiting at the bottleneck port averaged over time (the
  integral of depth over simulated time divided by its span), from the first
  round's start to the last round's end: the port's `mean_depth`, which the
  simulator records (sim/cpp/ecn_queue.h) and the testbed does not;
- ce_marks: packets the switch turned CE at the bottleneck (`marked`);
  drops: tail drops plus Not-ECT drops (`queue_drops + ecn_drop`);
- jain: Jain's fairness index (Jain, Chiu & Hawe, DEC-TR-301, 1984),
  J = (sum x)^2 / (n * sum x^2), over the flows of one round, where flow i's
  throughput is x_i = its bytes / its FCT (FCT counted from its own request,
  so seed-003 batching does not look unfair), then averaged over rounds.

The framing limit is the goodput a saturated link can carry:
C * MSS / wire bytes per packet (1448 / 1538 on Ethernet with TCP timestamps:
94.1 % of the line rate).

Confidence intervals (95 %, two-sided) on every metric a claim compares
(CI_METRICS: goodput, RTO-round ratio, FCT p99, p1, mean, per-round max and
p1-p99 spread, Jain's index, and the queue's time-averaged depth, p95 depth, drops and
CE marks), for one (scheme, N) point; the methods, their formulas and
references are in experiments/stats.py. The queue's come from the rounds' own `queue` records
(the simulator's; a testbed run has them only across repeats).

Unit of replication. The rounds of a run are not independent: a round starts
with the windows, DCTCP alpha and queue the previous round left, so rounds
near each other look alike. Repeats are independent: each is a fresh network
(testbed) or simulation with its own seed (repeat r runs with seed r + 1).

- R >= 2 repeats with a value: Student t over the R per-repeat values x_r
  (each repeat's mean goodput, RTO-round ratio, FCT p99, FCT mean).
  Method "t-repeats", n = R. One exception: when every repeat has the same
  RTO-round ratio (s = 0; typically all 0 or all 1) the t interval has zero
  width, which says nothing; the Wilson interval over all the repeats'
  rounds pooled is given instead (method "wilson-rounds", n = rounds).
- One repeat, every other metric: batch means / sectioning over its n rounds,
  k = min(30, floor(sqrt(n))) contiguous batches; theta_j is the metric
  computed on batch j alone (mean goodput, per-round max FCT or Jain's index
  of its rounds; p99 or mean of its flows pooled; the time-weighted mean depth
  of its rounds; the p95 of their histograms merged; drops and marks of its
  rounds scaled to the run's rounds), and the interval is centred on the
  metric over all rounds. Method "t-batches", n = k; with fewer than 4 rounds
  there is none.
- One repeat, RTO-round ratio: the Wilson score interval over its n rounds,
  x of them with an RTO. Method "wilson-rounds", n = rounds. It treats rounds
  as independent Bernoulli trials, which they are not (RTO rounds cluster), so
  it is likely too narrow; tables mark it with "*".

Every interval is clipped to the metric's range ([0, 1] for the ratio, >= 0
otherwise).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from p4incast.experiments.stats import (
    Interval,
    batch_interval,
    batches,
    finite,
    percentile,
    t_interval,
    wilson_interval,
)
from p4incast.model import histogram
from p4incast.model.wire import MSS_BYTES, WIRE_FRAME_BYTES, wire_frame_bytes

MSS = MSS_BYTES  # TCP payload bytes per full packet
WIRE = WIRE_FRAME_BYTES  # wire bytes per full packet

# Every metric key of a summary, in the order tables and CSVs show them.
SUMMARY_METRICS = (
    "goodput_mbps",
    "goodput_std_mbps",
    "rto_round_ratio",
    "timeouts",
    "retrans",
    "fct_p1_ms",
    "fct_p50_ms",
    "fct_p99_ms",
    "fct_spread_ms",
    "qdepth_p50",
    "qdepth_p95",
    "qdepth_max",
    "qdepth_mean",
    "ce_marks",
    "drops",
    "jain",
    "fct_mean_ms",
    "fct_max_ms",
)

# Metrics that carry a 95 % confidence interval, and the keys that hold it:
# <metric>_ci_lo, _ci_hi (bounds, the metric's unit), _ci_n (samples the interval
# rests on: repeats, batches or rounds), _ci_method (stats.METHODS).
CI_METRICS = (
    "goodput_mbps",
    "rto_round_ratio",
    "fct_p99_ms",
    "fct_mean_ms",
    "fct_max_ms",
    "fct_p1_ms",
    "fct_spread_ms",
    "jain",
    "qdepth_mean",
    "qdepth_p95",
    "drops",
    "ce_marks",
)
CI_PARTS = ("lo", "hi", "n", "method")
CI_FIELDS = tuple(f"{m}_ci_{p}" for m in CI_METRICS for p in CI_PARTS)

_BOUNDS = {"rto_round_ratio": (0.0, 1.0), "jain": (0.0, 1.0)}  # every other: [0, inf)


def jain(values: Iterable[float | None]) -> float | None:
    """Jain's fairness index (sum x)^2 / (n * sum x^2), in [1/n, 1].

    None and NaN values are ignored. Empty input, or every value zero (0/0:
    nobody got anything, so fairness is undefined), gives None. Negative
    values are an error.
    """
    xs = finite(values)
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


def framing_limit_bps(link_bps: float, mss: int = MSS, wire: int | None = None) -> float:
    """Most goodput a link of `link_bps` carries with full packets: C * MSS / wire bytes
    (`wire`: by default what a segment of `mss` takes on Ethernet, wire.wire_frame_bytes)."""
    wire = wire_frame_bytes(mss) if wire is None else wire
    if not link_bps > 0 or not 0 < mss <= wire:
        raise ValueError(f"framing_limit: need link_bps > 0 and 0 < mss <= wire, got {link_bps}")
    return link_bps * mss / wire


def round_ceiling_bps(round_bytes: float, link_bps: float, rtt_s: float) -> float:
    """Most goodput a round of `round_bytes` can reach: its bytes at the framing
    limit, after one base RTT in which the link carries nothing of it (the
    request going out, the first segment coming back)."""
    t = round_bytes * 8 / framing_limit_bps(link_bps)
    return round_bytes * 8 / (t + max(rtt_s, 0.0))


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
    goodputs = finite(r["goodput_bps"] for r in rounds)
    return statistics.fmean(goodputs) / 1e6 if goodputs else None


def _flows(rounds: Sequence[Mapping[str, Any]]) -> list[float]:
    return finite(f for r in rounds for f in r.get("fct_s") or [])


def _fct_percentile_ms(rounds: Sequence[Mapping[str, Any]], q: float) -> float | None:
    value = percentile(_flows(rounds), q)
    return None if value is None else value * 1e3


def _fct_spread_ms(rounds: Sequence[Mapping[str, Any]]) -> float | None:
    """p99 - p1 of the rounds' flows pooled (None without flows)."""
    lo, hi = _fct_percentile_ms(rounds, 1), _fct_percentile_ms(rounds, 99)
    return None if lo is None or hi is None else hi - lo


def _fct_mean_ms(rounds: Sequence[Mapping[str, Any]]) -> float | None:
    fcts = _flows(rounds)
    return statistics.fmean(fcts) * 1e3 if fcts else None


def _fct_max_ms(rounds: Sequence[Mapping[str, Any]]) -> float | None:
    """Each round's slowest flow, averaged over the rounds that have flows."""
    worst = [max(f) for f in (finite(r.get("fct_s") or []) for r in rounds) if f]
    return statistics.fmean(worst) * 1e3 if worst else None


def _jain(rounds: Sequence[Mapping[str, Any]]) -> float | None:
    fairness = [j for j in (_round_jain(r) for r in rounds) if j is not None]
    return statistics.fmean(fairness) if fairness else None


def _queues(rounds: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]] | None:
    """The rounds' own bottleneck records (`queue`), or None unless every round has one."""
    qs = [r.get("queue") for r in rounds]
    return None if not qs or any(q is None for q in qs) else [q for q in qs if q is not None]


def _qdepth_mean(rounds: Sequence[Mapping[str, Any]]) -> float | None:
    """Packets waiting averaged over the rounds' time (each round weighted by its span)."""
    qs = _queues(rounds)
    spans = [float(r["completion_s"]) for r in rounds] if qs is not None else []
    if qs is None or sum(spans) <= 0:
        return None
    return sum(float(q["mean_depth"]) * t for q, t in zip(qs, spans, strict=True)) / sum(spans)


def _qdepth_p95(rounds: Sequence[Mapping[str, Any]]) -> float | None:
    qs = _queues(rounds)
    if qs is None:
        return None
    merged: list[int] = []
    for q in qs:
        for depth, count in enumerate(hist_counts(q.get("hist") or {})):
            if depth >= len(merged):
                merged.extend([0] * (depth + 1 - len(merged)))
            merged[depth] += count
    p = histogram.quantile(merged, 0.95)
    return None if p is None else float(p)


def _per_run(key: str, total_rounds: int) -> Callable[[Sequence[Mapping[str, Any]]], float | None]:
    """A count over some rounds, scaled to the run's `total_rounds` (a batch's estimate
    of the run's total)."""

    def estimate(rounds: Sequence[Mapping[str, Any]]) -> float | None:
        qs = _queues(rounds)
        if qs is None:
            return None
        return sum(int(q[key]) for q in qs) * total_rounds / len(qs)

    return estimate


def round_intervals(
    rounds: Sequence[Mapping[str, Any]], points: Mapping[str, Any] | None = None
) -> dict[str, Interval | None]:
    """95 % intervals of one run's CI_METRICS from its rounds alone (module docstring).

    Every metric but the RTO-round ratio: batch means / sectioning over
    `batches(len(rounds))`, centred on the metric over all rounds, or on `points`'
    value of it where given (the queue's: only when every round has its `queue`
    record). RTO-round ratio: Wilson over the rounds.
    """
    parts = [rounds[b.start : b.stop] for b in batches(len(rounds))]
    estimators: dict[str, Callable[[Sequence[Mapping[str, Any]]], float | None]] = {
        "goodput_mbps": _goodput_mbps,
        "fct_p99_ms": lambda rs: _fct_percentile_ms(rs, 99),
        "fct_mean_ms": _fct_mean_ms,
        "fct_max_ms": _fct_max_ms,
        "fct_p1_ms": lambda rs: _fct_percentile_ms(rs, 1),
        "fct_spread_ms": _fct_spread_ms,
        "jain": _jain,
        "qdepth_mean": _qdepth_mean,
        "qdepth_p95": _qdepth_p95,
        "drops": _per_run("drops", len(rounds)),
        "ce_marks": _per_run("marked", len(rounds)),
    }
    given = points or {}

    def centre(
        metric: str, estimate: Callable[[Sequence[Mapping[str, Any]]], float | None]
    ) -> float | None:
        value = given.get(metric)
        return float(value) if value is not None else estimate(rounds)

    out = {
        metric: clip(batch_interval(centre(metric, est), [est(p) for p in parts]), metric)
        for metric, est in estimators.items()
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

    goodputs = finite(r["goodput_bps"] for r in rounds)
    out["goodput_mbps"] = _goodput_mbps(rounds)
    if len(goodputs) >= 2:
        out["goodput_std_mbps"] = statistics.stdev(goodputs) / 1e6
    out["rto_round_ratio"] = sum(_round_rto(r) for r in rounds) / len(rounds)
    out["timeouts"] = sum(int(r.get("timeouts") or 0) for r in rounds)
    out["retrans"] = sum(int(r.get("retrans") or 0) for r in rounds)

    out["fct_p1_ms"] = _fct_percentile_ms(rounds, 1)
    out["fct_p50_ms"] = _fct_percentile_ms(rounds, 50)
    out["fct_p99_ms"] = _fct_percentile_ms(rounds, 99)
    out["fct_spread_ms"] = _fct_spread_ms(rounds)
    out["fct_mean_ms"] = _fct_mean_ms(rounds)
    out["fct_max_ms"] = _fct_max_ms(rounds)
    out["jain"] = _jain(rounds)

    switch = run.get("switch") or {}
    port = (switch.get("ports") or {}).get(str(switch.get("bottleneck_port")))
    if port is not None:
        hist = port.get("hist") or {}
        out["qdepth_p50"] = hist_percentile(hist, 50)
        out["qdepth_p95"] = hist_percentile(hist, 95)
        out["qdepth_max"] = hist_max(hist)
        if port.get("mean_depth") is not None:
            out["qdepth_mean"] = float(port["mean_depth"])
        if port.get("marked") is not None:
            out["ce_marks"] = int(port["marked"])
        if port.get("queue_drops") is not None or port.get("ecn_drop") is not None:
            out["drops"] = int(port.get("queue_drops") or 0) + int(port.get("ecn_drop") or 0)
    # the intervals, centred on the run's own values (the port's counters for the
    # queue, which also count the set-up before the first round)
    for metric, interval in round_intervals(rounds, out).items():
        out.update(ci_fields(metric, interval if out.get(metric) is not None else None))
    return out
