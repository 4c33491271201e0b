"""Results of one experiment on disk: results.json, rounds.csv, summary.csv.

    rs = ResultSet(Path("results/2026-11-22-incast"), name="default", config=cfg)
    for run in engine_runs:          # one run dict per (scheme, N, repeat): SCHEMA.md
        rs.add(run)                  # rewrites every file, so a crash keeps what finished
    print(rs.summary_table())

results.json holds the experiment name, the config echo and every run with every
round as the engine returned it (non-finite floats become null). rounds.csv has
one row per round; summary.csv one row per (scheme, N) over the repeats, with
the metrics of `metrics.summarize` averaged over the repeats that succeeded
(qdepth_max: the maximum) and the standard deviation across repeats of the
ones plots draw error bars for. Files are written to a temporary name and
renamed into place, so a reader never sees half a file.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import numbers
import os
import statistics
import tempfile
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from p4incast.experiments.metrics import SUMMARY_METRICS, percentile, summarize

RESULTS_JSON = "results.json"
ROUNDS_CSV = "rounds.csv"
SUMMARY_CSV = "summary.csv"
FORMAT = 1  # results.json layout version

ROUND_FIELDS = (
    "scheme",
    "n",
    "repeat",
    "round",
    "completion_s",
    "bytes",
    "goodput_bps",
    "timeouts",
    "retrans",
    "rto",
    "fct_p50_s",
    "fct_max_s",
)
# Metrics whose spread across repeats is kept (error bars).
SPREAD_METRICS = ("goodput_mbps", "rto_round_ratio", "fct_p99_ms")
SUMMARY_FIELDS = (
    ("scheme", "n", "repeats", "ok_repeats", "status")
    + SUMMARY_METRICS
    + tuple(f"{m}_repeat_std" for m in SPREAD_METRICS)
)


def _jsonable(value: Any) -> Any:
    """Plain JSON: dataclasses expanded, numpy scalars as numbers, NaN/inf null, Paths text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _jsonable(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, bool | str) or value is None:
        return value
    if isinstance(value, numbers.Integral):  # also numpy integers
        return int(value)
    if isinstance(value, numbers.Real):  # also numpy floats
        return float(value) if math.isfinite(value) else None
    return str(value)  # Path, enum, ...


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _csv_text(fields: Iterable[str], rows: Iterable[Mapping[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(fields), lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: "" if v is None else v for k, v in row.items()})
    return buf.getvalue()


def round_rows(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per round of every run (rounds.csv); failed runs add the rounds they have."""
    rows = []
    for run in runs:
        for r in run.get("rounds") or []:
            fcts = r.get("fct_s") or []
            finite = [f for f in fcts if f is not None and math.isfinite(f)]
            rows.append(
                {
                    "scheme": run.get("scheme"),
                    "n": run.get("n"),
                    "repeat": run.get("repeat", 0),
                    "round": r.get("round"),
                    "completion_s": r.get("completion_s"),
                    "bytes": r.get("bytes"),
                    "goodput_bps": r.get("goodput_bps"),
                    "timeouts": r.get("timeouts"),
                    "retrans": r.get("retrans"),
                    "rto": r.get("rto"),
                    "fct_p50_s": percentile(finite, 50),
                    "fct_max_s": max(finite) if finite else None,
                }
            )
    return rows


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def aggregate(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """summary.csv rows: one per (scheme, N), schemes in order of first appearance, N ascending.

    Each metric is the mean over the repeats whose summary has it (qdepth_max:
    the max); `<metric>_repeat_std` is the sample standard deviation across repeats
    (None with fewer than two). status: "ok" when every repeat succeeded,
    "failed" when none did, else "partial".
    """
    summaries = [summarize(run) for run in runs]
    order: dict[str, int] = {}
    groups: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for s in summaries:
        order.setdefault(str(s["scheme"]), len(order))
        groups.setdefault((s["scheme"], s["n"]), []).append(s)

    def key(item: tuple[tuple[Any, Any], list[dict[str, Any]]]) -> tuple[int, float]:
        (scheme, n), _ = item
        return order[str(scheme)], n if isinstance(n, int | float) else math.inf

    rows = []
    for (scheme, n), group in sorted(groups.items(), key=key):
        ok = [s for s in group if s["status"] == "ok"]
        row: dict[str, Any] = {
            "scheme": scheme,
            "n": n,
            "repeats": len(group),
            "ok_repeats": len(ok),
            "status": "ok" if len(ok) == len(group) else "failed" if not ok else "partial",
        }
        for m in SUMMARY_METRICS:
            vals = [float(s[m]) for s in ok if s[m] is not None]
            row[m] = (max(vals) if vals else None) if m == "qdepth_max" else _mean(vals)
        for m in SPREAD_METRICS:
            vals = [float(s[m]) for s in ok if s[m] is not None]
            row[f"{m}_repeat_std"] = statistics.stdev(vals) if len(vals) >= 2 else None
        rows.append(row)
    return rows


def _fmt(value: Any, spec: str) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return format(value, spec)


def run_line(summary: Mapping[str, Any]) -> str:
    """One progress line for a run's `metrics.summarize` output, for the runner to print."""
    who = f"{summary.get('scheme')} N={summary.get('n')} rep {summary.get('repeat')}"
    if summary.get("status") != "ok":
        return f"{who}: FAILED: {summary.get('error') or 'no reason given'}"
    rto = summary.get("rto_round_ratio")
    return (
        f"{who}: {_fmt(summary.get('goodput_mbps'), '.1f')} Mbps, "
        f"RTO rounds {_fmt(None if rto is None else 100 * rto, '.0f')}%, "
        f"FCT p99 {_fmt(summary.get('fct_p99_ms'), '.2f')} ms, "
        f"queue max {_fmt(summary.get('qdepth_max'), 'd')} pkts, "
        f"CE {_fmt(summary.get('ce_marks'), 'd')}, drops {_fmt(summary.get('drops'), 'd')}"
    )


# (header, width, summary key, format spec, scale)
_TABLE = (
    ("scheme", 14, "scheme", "s", 1),
    ("N", 4, "n", "d", 1),
    ("goodput Mbps", 12, "goodput_mbps", ".1f", 1),
    ("RTO rnd %", 9, "rto_round_ratio", ".1f", 100),
    ("FCT p99 ms", 10, "fct_p99_ms", ".2f", 1),
    ("q p95", 6, "qdepth_p95", ".0f", 1),
    ("q max", 6, "qdepth_max", ".0f", 1),
    ("CE marks", 9, "ce_marks", ".0f", 1),
    ("drops", 7, "drops", ".0f", 1),
    ("jain", 5, "jain", ".3f", 1),
    ("status", 9, "status", "s", 1),
)


def summary_table(runs: Iterable[Mapping[str, Any]], title: str | None = None) -> str:
    """Fixed-width text table of `aggregate(runs)`: one line per scheme x N.

    Partial rows show the count of good repeats after the status ("partial 2/3");
    unknown values show as "-". The scheme column widens to the longest name.
    """
    rows = aggregate(runs)
    widest = max((len(str(r["scheme"])) for r in rows), default=0)
    table = [(h, max(w, widest) if k == "scheme" else w, k, f, x) for h, w, k, f, x in _TABLE]
    head = "  ".join(
        f"{h:<{w}}" if fmt == "s" else f"{h:>{w}}" for h, w, _, fmt, _ in table
    ).rstrip()
    lines = [title, "=" * len(head)] if title else []
    lines += [head, "-" * len(head)]
    for row in rows:
        cells = []
        for _, w, k, fmt, scale in table:
            v = row[k]
            if k == "status" and v == "partial":
                v = f"partial {row['ok_repeats']}/{row['repeats']}"
            if isinstance(v, int | float) and not isinstance(v, bool) and scale != 1:
                v = v * scale
            if fmt == "d" and isinstance(v, int | float):
                v = int(v)
            text = _fmt(v, fmt) if fmt != "s" else ("-" if v is None else str(v))
            cells.append(f"{text:<{w}}" if fmt == "s" else f"{text:>{w}}")
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _results_text(data: Mapping[str, Any]) -> str:
    """results.json text: the header keys one per line, then one run per line (jq-friendly)."""
    head = {k: v for k, v in data.items() if k != "runs"}
    lines = [f" {json.dumps(k)}: {json.dumps(v, allow_nan=False)}," for k, v in head.items()]
    runs = ",\n".join(f"  {json.dumps(r, allow_nan=False)}" for r in data["runs"])
    return "{\n" + "\n".join(lines) + '\n "runs": [\n' + runs + ("\n" if runs else "") + " ]\n}\n"


class ResultSet:
    """The runs of one experiment, kept on disk in `out_dir` after every `add`.

    `config` is echoed into results.json as given (dataclasses become dicts).
    `link_bps` is the bottleneck rate when known; plots draw its framing limit.
    """

    def __init__(
        self,
        out_dir: Path | str,
        name: str,
        config: Any = None,
        *,
        link_bps: float | None = None,
        runs: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        self.out_dir = Path(out_dir)
        self.name = name
        self.config = _jsonable(config)
        self.link_bps = link_bps
        self.runs: list[dict[str, Any]] = [_jsonable(r) for r in runs]
        self.created = datetime.now(UTC).isoformat(timespec="seconds")

    def add(self, run: Mapping[str, Any], *, write: bool = True) -> dict[str, Any]:
        """Keep one run (experiments/SCHEMA.md schema), rewrite the files, return its summary."""
        if not isinstance(run, Mapping):
            raise TypeError(f"ResultSet.add: run must be a dict, got {type(run).__name__}")
        self.runs.append(_jsonable(run))
        if write:
            self.write()
        return summarize(self.runs[-1])

    def summaries(self) -> list[dict[str, Any]]:
        """`metrics.summarize` of every run, in the order added."""
        return [summarize(r) for r in self.runs]

    def aggregate(self) -> list[dict[str, Any]]:
        """summary.csv rows (see `aggregate`)."""
        return aggregate(self.runs)

    def summary_table(self) -> str:
        """The terminal table for this experiment."""
        return summary_table(self.runs, title=f"experiment {self.name}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "experiment": self.name,
            "created": self.created,
            "link_bps": self.link_bps,
            "config": self.config,
            "runs": self.runs,
        }

    def write(self) -> list[Path]:
        """Write results.json, rounds.csv and summary.csv (each atomically); return their paths."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        paths = [self.out_dir / RESULTS_JSON, self.out_dir / ROUNDS_CSV, self.out_dir / SUMMARY_CSV]
        _write_atomic(paths[0], _results_text(self.to_dict()))
        _write_atomic(paths[1], _csv_text(ROUND_FIELDS, round_rows(self.runs)))
        _write_atomic(paths[2], _csv_text(SUMMARY_FIELDS, self.aggregate()))
        return paths


def load(path: Path | str) -> ResultSet:
    """Reload a ResultSet from its directory or its results.json (files are not rewritten)."""
    path = Path(path)
    file = path / RESULTS_JSON if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"no {RESULTS_JSON} at {path}") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{file} is not valid JSON: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise ValueError(f"{file} is not a p4incast results file (no 'runs' list)")
    rs = ResultSet(
        file.parent,
        str(data.get("experiment") or file.parent.name),
        data.get("config"),
        link_bps=data.get("link_bps"),
        runs=data["runs"],
    )
    rs.created = data.get("created") or rs.created
    return rs
