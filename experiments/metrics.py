"""Per-run metrics of an incast experiment (pure; docs/algorithms.md §6).

Input is one run dict of the shared result schema (experiments/SCHEMA.md):
rounds with completion time, bytes, goodput, per-flow FCTs and the senders'
TcpExt TCPTimeouts delta, plus the switch's per-port counters and its
queue-depth histogram. `summarize` turns it into one flat record:

- goodput: mean and sample standard deviation over rounds of
  bytes / completion time (a round ends when its slowest flow ends);
- rto_round_ratio: rounds in which >= 1 flow hit an RTO / rounds;
- FCT p50/p99: over every flow of every round, pooled;
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
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from p4incast.controller import histogram

MSS = 1448  # TCP payload bytes per packet (1500 MTU, 20 IP + 32 TCP with timestamps)
WIRE = 1538  # bytes per full packet on Ethernet: 1500 + 14 header + 4 FCS + 8 preamble + 12 IFG

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
)


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
    return out


def summarize(run: Mapping[str, Any]) -> dict[str, Any]:
    """One flat summary of a run dict (experiments/SCHEMA.md schema); see the module docstring.

    Keys: scheme, n, repeat, engine, status, error, rounds, base_rtt_ms, wall_s
    and SUMMARY_METRICS. Metrics are None when unknown: everything for a failed
    run, a run with no rounds, or a malformed run (status "failed", the reason
    in `error` — this never raises); switch metrics when the run has no switch
    counters; goodput_std_mbps with fewer than two rounds.
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
    if goodputs:
        out["goodput_mbps"] = statistics.fmean(goodputs) / 1e6
    if len(goodputs) >= 2:
        out["goodput_std_mbps"] = statistics.stdev(goodputs) / 1e6
    out["rto_round_ratio"] = sum(_round_rto(r) for r in rounds) / len(rounds)
    out["timeouts"] = sum(int(r.get("timeouts") or 0) for r in rounds)
    out["retrans"] = sum(int(r.get("retrans") or 0) for r in rounds)

    fcts = [f for r in rounds for f in r.get("fct_s") or []]
    p50, p99 = percentile(fcts, 50), percentile(fcts, 99)
    out["fct_p50_ms"] = None if p50 is None else p50 * 1e3
    out["fct_p99_ms"] = None if p99 is None else p99 * 1e3

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
