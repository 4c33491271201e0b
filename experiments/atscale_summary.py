"""An at-scale sweep's results (experiments/atscale.py): its summary rows, one per
(scheme, offered load), their Markdown table, and the ResultSet that keeps its
records (results.json, summary.csv; no rounds). The rows and the table are pure
functions of the records; the rest of SUMMARY.md is the report side's
(reports/scenario_report.py)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from p4incast.experiments import metrics, results, stats
from p4incast.model.atscale import ATSCALE_SCENARIO

PERCENTILES = (1, 50, 95, 99)  # RCC Fig. 8(a) plots the 95th too (§6.2 ¶3 claims it)
SUMMARY_METRICS = (
    "fct_p1_ms",
    "fct_p50_ms",
    "fct_p95_ms",
    "fct_p99_ms",
    "fct_mean_ms",
    "long_mbps",
    "long_min_mbps",  # the background flows' lowest, median and highest throughput
    "long_p50_mbps",  # in a run (RCC Fig. 8(b)), and the highest less the lowest
    "long_max_mbps",
    "long_range_mbps",
    "drops_tor",
    "drops_root",
    "drops",  # ToR + root
    "short_timeouts",
    "drops_agg_queue",  # per aggregator's last-hop ToR queue (RCC Fig. 8(c))
)


def _ci_fields(key: str, ci: stats.Interval | None) -> dict[str, Any]:
    """A percentile's 95 % interval as ci fields (cut at 0); an end the flows cannot
    bound (too few for that tail) is None: unbounded."""
    out = metrics.ci_fields(key, metrics.clip(ci, key))
    for end in ("lo", "hi"):
        v = out[f"{key}_ci_{end}"]
        if v is not None and not math.isfinite(v):
            out[f"{key}_ci_{end}"] = None
    return out


def summarize(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (scheme, load): FCT percentiles of the short flows with a 95 %
    interval (one repeat: the run's percentile, order statistics over its flows;
    more: the mean of the repeats' percentiles, Student t over them), long-flow
    throughput (mean over flows and repeats; and each run's lowest, median, highest
    and their range, averaged over repeats with a Student-t interval), drops (ToR,
    root, both), drops per aggregator queue (a run's drops at the ToR ports facing
    an aggregator over the number of aggregators: the paper's mean over its
    aggregators' last-hop queues, RCC §6.2 sixth para; with the repeats' Student-t
    interval, as drops at the root) and short-flow RTOs (mean per run)."""
    groups: dict[tuple[str, float], list[Mapping[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["scheme"], r["load"]), []).append(r)
    rows = []
    for (scheme, load_), runs in groups.items():
        ok = [r for r in runs if r["status"] == "ok"]
        row: dict[str, Any] = {"scheme": scheme, "load": load_, "runs": len(runs), "ok": len(ok)}
        row["status"] = "ok" if ok else "failed"
        rows.append(row)
        if not ok:
            row["error"] = runs[0].get("error")
            continue
        fcts = [x for r in ok for x in r["fct_ms"] if x is not None]
        row["flows"] = sum(len(r["fct_ms"]) for r in ok)
        row["unfinished"] = row["flows"] - len(fcts)
        row["offered_load"] = statistics.fmean(r["offered_load"] for r in ok)
        for q in PERCENTILES:
            key = f"fct_p{q}_ms"
            if len(ok) > 1:  # the mean of the repeats' percentiles, and its t interval
                per_run = [
                    stats.percentile([x for x in r["fct_ms"] if x is not None], q) for r in ok
                ]
                row[key] = statistics.fmean(v for v in per_run if v is not None)
                ci = stats.t_interval(per_run)
            else:
                row[key] = stats.percentile(fcts, q)
                ci = stats.quantile_interval(fcts, q)
            row.update(_ci_fields(key, ci))
        row["fct_mean_ms"] = statistics.fmean(fcts) if fcts else None
        longs = [x for r in ok for x in r["long_mbps"]]
        row["long_mbps"] = statistics.fmean(longs) if longs else None
        # RCC Fig. 8(b): per run the lowest, median and highest of its background
        # flows' throughput, and their range; the mean over repeats, Student t over them
        per_run = [sorted(r["long_mbps"]) for r in ok if r.get("long_mbps")]
        for key, of in (
            ("long_min_mbps", lambda xs: xs[0]),
            ("long_p50_mbps", statistics.median),
            ("long_max_mbps", lambda xs: xs[-1]),
            ("long_range_mbps", lambda xs: xs[-1] - xs[0]),
        ):
            values = [float(of(xs)) for xs in per_run]
            row[key] = statistics.fmean(values) if values else None
            row.update(_ci_fields(key, stats.t_interval(values)))
        for where in ("tor", "root"):
            row[f"drops_{where}"] = statistics.fmean(r["drops"][where] for r in ok)
        row["drops"] = row["drops_tor"] + row["drops_root"]
        per_queue = [
            r["drops"]["aggregator_ports"] / len(r["aggregators"])
            for r in ok
            if "aggregator_ports" in r["drops"] and r.get("aggregators")
        ]
        row["drops_agg_queue"] = statistics.fmean(per_queue) if per_queue else None
        # the drops a claim compares get their repeats' Student-t interval
        row.update(_ci_fields("drops_agg_queue", stats.t_interval(per_queue)))
        row.update(_ci_fields("drops_root", stats.t_interval([r["drops"]["root"] for r in ok])))
        row["short_timeouts"] = statistics.fmean(r["short_timeouts"] for r in ok)
        row["wall_s"] = statistics.fmean(r["wall_s"] for r in ok)
    rows.sort(key=lambda r: (r["scheme"], r["load"]))
    return rows


def _num(v: Any, spec: str = ".1f") -> str:
    return "—" if v is None else format(v, spec)


def _with_ci(row: Mapping[str, Any], key: str) -> str:
    if row.get(f"{key}_ci_method") is None:
        return _num(row.get(key), ".2f")
    lo, hi = row[f"{key}_ci_lo"], row[f"{key}_ci_hi"]
    lo_s = "−∞" if lo is None else f"{lo:.2f}"
    hi_s = "∞" if hi is None else f"{hi:.2f}"
    return f"{_num(row.get(key), '.2f')} [{lo_s}, {hi_s}]"


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The summary as a Markdown table."""
    head = (
        "| scheme | load | offered | short flows (unfinished) | FCT p1 ms | FCT p50 ms [95 % CI] "
        "| FCT p99 ms [95 % CI] | long flows Mbit/s | drops ToR | drops root | short-flow RTOs |"
    )
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if not r.get("ok"):
            out.append(f"| {r['scheme']} | {r['load']:.0%} | failed: {r.get('error')} |")
            continue
        out.append(
            f"| {r['scheme']} | {r['load']:.0%} | {r['offered_load']:.0%} "
            f"| {r['flows']} ({r['unfinished']}) | {_num(r['fct_p1_ms'], '.2f')} "
            f"| {_with_ci(r, 'fct_p50_ms')} | {_with_ci(r, 'fct_p99_ms')} "
            f"| {_num(r['long_mbps'])} | {_num(r['drops_tor'], '.0f')} "
            f"| {_num(r['drops_root'], '.0f')} | {_num(r['short_timeouts'], '.0f')} |"
        )
    return "\n".join(out)


class AtScaleResultSet(results.ResultSet):
    """An at-scale sweep's records: results.json and summary.csv (one row per
    (scheme, load), `summarize`); no rounds."""

    scenario = ATSCALE_SCENARIO

    def aggregate(self) -> list[dict[str, Any]]:
        return summarize(self.runs)

    def summary_table(self) -> str:
        return table(self.aggregate())

    def line(self, run: Mapping[str, Any]) -> str:
        who = f"{run.get('scheme')} load={run.get('load', 0):.0%} #{run.get('repeat', 0) + 1}"
        if run.get("status") != "ok":
            return f"{who}: {run.get('status')}: {run.get('error')}"
        fin = [x for x in run.get("fct_ms") or [] if x is not None]
        p99 = stats.percentile(fin, 99)
        return (
            f"{who}: ok, FCT p99 {_num(p99, '.2f')} ms, drops ToR {run['drops']['tor']} "
            f"root {run['drops']['root']}, {run['wall_s']:.1f} s"
        )

    def failed(self) -> int:
        return sum(1 for r in self.runs if r.get("status") != "ok")

    def csv_files(self) -> dict[str, str]:
        keys = ("scheme", "load", "runs", "ok", "flows", "unfinished", "offered_load")
        keys += SUMMARY_METRICS + ("wall_s",)
        keys += tuple(f"fct_p{q}_ms_ci_{p}" for q in PERCENTILES for p in metrics.CI_PARTS)
        rows = [{k: r.get(k) for k in keys} for r in self.aggregate()]
        return {results.SUMMARY_CSV: results.csv_text(keys, rows)}
