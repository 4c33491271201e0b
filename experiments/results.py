"""Results of one experiment on disk: results.json, rounds.csv, summary.csv.

    rs = ResultSet(Path("results/2026-11-22-incast"), name="default", config=cfg)
    for run in engine_runs:          # one run dict per (scheme, N, repeat): SCHEMA.md
        rs.add(run)                  # rewrites every file, so a crash keeps what finished
    print(rs.summary_table())

results.json holds the experiment name, the config echo, where the runs came
from (`provenance`: the commit, engine versions and machine, experiments/provenance.py;
`start` records it when a sweep begins) and every run with every
round as the engine returned it (non-finite floats become null). rounds.csv has
one row per round; summary.csv one row per (scheme, N) over the repeats, with
the metrics of `metrics.summarize` averaged over the repeats that succeeded
(qdepth_max: the maximum), the standard deviation across repeats of some, and
the 95 % confidence interval of goodput, RTO-round ratio and FCT p99/mean
(`<metric>_ci_lo/_hi/_n/_method`; from repeats when there are two or more, else
from the rounds of the one: see experiments/metrics.py). Files are written to
a temporary name and renamed into place, so a reader never sees half a file.
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
from collections.abc import Iterable, Mapping, Sequence, Set
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from p4incast.experiments import provenance as prov
from p4incast.experiments.metrics import (
    CI_FIELDS,
    CI_METRICS,
    SUMMARY_METRICS,
    ci_fields,
    interval_of,
    point_interval,
    summarize,
)
from p4incast.experiments.stats import WILSON, Interval, percentile
from p4incast.model.scheme import INCAST_SCENARIO
from p4incast.model.wire import MSS_BYTES

RESULTS_JSON = "results.json"
ROUNDS_CSV = "rounds.csv"
SUMMARY_CSV = "summary.csv"
FORMAT = 1  # results.json layout version
# A run record copied from an identical point of another experiment of the same
# sweep (runner.share_identical) names the folder that ran it under this key;
# its wall_s is that run's, so worker time counts it once (reports/cost.py).
SHARED_FROM = "shared_from"

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
    "stall_s",
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
    + ("rounds",)
    + CI_FIELDS
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


def write_atomic(path: Path, text: str) -> None:
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


def csv_text(fields: Iterable[str], rows: Iterable[Mapping[str, Any]]) -> str:
    """A CSV file's text: a header of `fields`, one line per row (None as empty)."""
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
                    "stall_s": r.get("stall_s"),
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
    (None with fewer than two). rounds: rounds of the good repeats, added up.
    `<metric>_ci_lo/_hi/_n/_method` for CI_METRICS: `metrics.point_interval` (None
    when there is none). status: "ok" when every repeat succeeded, "failed" when
    none did, else "partial".
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
        row["rounds"] = sum(int(s["rounds"]) for s in ok)
        for m in CI_METRICS:
            row.update(ci_fields(m, point_interval(ok, m)))
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


CI_LEGEND = (
    "± and [lo,hi]: 95 % confidence interval, cut at 0 (lo/hi in summary.csv; see metrics.py).",
    '"R rep": Student t over R repeats. "n rnd": one repeat: goodput and FCT by batch means',
    "over min(30, floor(sqrt(n))) batches of its n rounds, RTO rounds by Wilson over its rounds.",
    "* Wilson treats rounds as independent, which they are not (likely too narrow); with",
    "  repeats that all have the same RTO ratio, over their rounds pooled (t would be empty).",
)


def _decimals(value: float) -> int:
    """Decimals that show about three significant digits of a value below 1000."""
    return 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0


def _pm(value: Any, interval: Interval | None, decimals: int | None = None) -> str:
    """The cell "value ±half"; half = hi - value, the t half-width (only lo is ever cut at 0)."""
    if value is None:
        return "-"
    d = _decimals(value) if decimals is None else decimals
    text = f"{value:.{d}f}"
    return text if interval is None else f"{text} ±{interval.hi - value:.{d}f}"


def _rto_cell(ratio: Any, interval: Interval | None) -> str:
    """Percent of rounds with an RTO and its interval, "25 [5,70]"; Wilson marked "*"."""
    if ratio is None:
        return "-"
    if interval is None:
        return f"{100 * ratio:.0f} "
    mark = "*" if interval.method == WILSON else " "
    return f"{100 * ratio:.0f} [{100 * interval.lo:.0f},{100 * interval.hi:.0f}]{mark}"


def _ci_basis(row: Mapping[str, Any]) -> str:
    if row["ok_repeats"] >= 2:
        return f"{row['ok_repeats']} rep"
    return f"{row['rounds']} rnd" if row["ok_repeats"] == 1 else "-"


def _count(value: Any) -> str:
    return _fmt(None if value is None else float(value), ".0f")


def _grid(head: Sequence[str], rows: Sequence[Sequence[str]], left: Set[int]) -> list[str]:
    """Header, rule and rows, two spaces apart; columns in `left` left-aligned, others right."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    header = line(head)
    return [header, "-" * len(header)] + [line(r) for r in rows]


def summary_table(
    runs: Iterable[Mapping[str, Any]],
    title: str | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> str:
    """Fixed-width text tables of `aggregate(runs)`, one line per scheme x N in each.

    The first has goodput, RTO rounds and FCT p99/mean with their 95 % intervals,
    what the intervals rest on ("3 rep", "20 rnd") and the status, then CI_LEGEND;
    the second the bottleneck queue (time-averaged, p95 and deepest), CE marks, drops
    and fairness. Partial rows
    show the count of good repeats after the status ("partial 2/3"); unknown
    values show as "-". Columns widen to their longest cell. With a `provenance`
    record, its one line (`provenance.line`) follows the title.
    """
    rows = aggregate(runs)
    main = []
    for r in rows:
        status = str(r["status"])
        if status == "partial":
            status = f"partial {r['ok_repeats']}/{r['repeats']}"
        main.append(
            [
                str(r["scheme"]),
                "-" if r["n"] is None else str(r["n"]),
                _pm(r["goodput_mbps"], interval_of(r, "goodput_mbps"), 1),
                _rto_cell(r["rto_round_ratio"], interval_of(r, "rto_round_ratio")),
                _pm(r["fct_p99_ms"], interval_of(r, "fct_p99_ms")),
                _pm(r["fct_mean_ms"], interval_of(r, "fct_mean_ms")),
                _ci_basis(r),
                status,
            ]
        )
    switch = [
        [
            str(r["scheme"]),
            main[i][1],
            _fmt(r["qdepth_mean"], ".1f"),
            _count(r["qdepth_p95"]),
            _count(r["qdepth_max"]),
            _count(r["ce_marks"]),
            _count(r["drops"]),
            _fmt(r["jain"], ".3f"),
        ]
        for i, r in enumerate(rows)
    ]
    head = ("scheme", "N", "goodput Mbps", "RTO rounds %", "FCT p99 ms", "FCT mean ms")
    table = _grid(head + ("CI on", "status"), main, left={0, 7})
    lines = [title, "=" * len(table[0])] if title else []
    if provenance is not None:
        lines.append(prov.line(provenance))
    lines += table + list(CI_LEGEND) + ["", "switch (bottleneck port) and fairness"]
    lines += _grid(
        ("scheme", "N", "q mean", "q p95", "q max", "CE marks", "drops", "jain"), switch, {0}
    )
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
    `provenance`: where the runs came from (experiments/provenance.py; None until
    `start` records it, or in a folder written before it was kept).

    This class holds incast runs (rounds.csv, the per-(scheme, N) summary); a
    scenario whose records differ subclasses it (experiments/atscale.py) and
    replaces `scenario`, `aggregate`, `summary_table`, `line`, `failed` and
    `csv_files`.
    """

    scenario = INCAST_SCENARIO  # results.json's `scenario`

    def __init__(
        self,
        out_dir: Path | str,
        name: str,
        config: Any = None,
        *,
        link_bps: float | None = None,
        runs: Iterable[Mapping[str, Any]] = (),
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        self.out_dir = Path(out_dir)
        self.name = name
        self.config = _jsonable(config)
        self.link_bps = link_bps
        self.runs: list[dict[str, Any]] = [_jsonable(r) for r in runs]
        self.created = datetime.now(UTC).isoformat(timespec="seconds")
        self.provenance: dict[str, Any] | None = (
            None if provenance is None else _jsonable(provenance)
        )

    def start(self, record: Mapping[str, Any]) -> None:
        """A sweep starts on this set with provenance `record` (`provenance.capture`):
        kept as the set's provenance when it is new, else appended to the first
        record's `resumed` list (`provenance.note_start`). Written with the next `add`."""
        self.provenance = _jsonable(prov.note_start(self.provenance, record, len(self.runs)))

    @property
    def mss_bytes(self) -> int:
        """The segment size its runs used: the config's transport.mss_bytes (sets
        written before the key existed: the default, wire.MSS_BYTES)."""
        transport = (self.config or {}).get("transport") or {}
        return int(transport.get("mss_bytes") or MSS_BYTES)

    def add(self, run: Mapping[str, Any], *, write: bool = True) -> dict[str, Any]:
        """Keep one run (experiments/SCHEMA.md schema), rewrite the files, return its summary."""
        if not isinstance(run, Mapping):
            raise TypeError(f"ResultSet.add: run must be a dict, got {type(run).__name__}")
        self.runs.append(_jsonable(run))
        if write:
            self.write()
        return summarize(self.runs[-1])

    def line(self, run: Mapping[str, Any]) -> str:
        """One progress line for a run just added (the runner prints it)."""
        return run_line(summarize(run))

    def summaries(self) -> list[dict[str, Any]]:
        """`metrics.summarize` of every run, in the order added."""
        return [summarize(r) for r in self.runs]

    def failed(self) -> int:
        """How many runs failed (or are malformed)."""
        return sum(1 for s in self.summaries() if s.get("status") != "ok")

    def aggregate(self) -> list[dict[str, Any]]:
        """summary.csv rows (see `aggregate`)."""
        return aggregate(self.runs)

    def summary_table(self) -> str:
        """The terminal table for this experiment."""
        title = f"experiment {self.name}"
        return summary_table(self.runs, title=title, provenance=self.provenance or {})

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "scenario": self.scenario,
            "experiment": self.name,
            "created": self.created,
            "link_bps": self.link_bps,
            "provenance": self.provenance,
            "config": self.config,
            "runs": self.runs,
        }

    def csv_files(self) -> dict[str, str]:
        """The CSV files written next to results.json: file name -> text."""
        return {
            ROUNDS_CSV: csv_text(ROUND_FIELDS, round_rows(self.runs)),
            SUMMARY_CSV: csv_text(SUMMARY_FIELDS, self.aggregate()),
        }

    def write(self) -> list[Path]:
        """Write results.json and the CSV files (each atomically); return their paths."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        paths = [self.out_dir / RESULTS_JSON]
        write_atomic(paths[0], _results_text(self.to_dict()))
        for name, text in self.csv_files().items():
            paths.append(self.out_dir / name)
            write_atomic(paths[-1], text)
        return paths


def load(path: Path | str, cls: type[ResultSet] = ResultSet) -> ResultSet:
    """Reload a ResultSet (of class `cls`: the scenario's) from its directory or its
    results.json (files are not rewritten). A folder written by the at-scale runner
    before it kept ResultSets (`name` and `settings` for `experiment` and `config`)
    loads too."""
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
    rs = cls(
        file.parent,
        str(data.get("experiment") or data.get("name") or file.parent.name),
        data.get("config", data.get("settings")),
        link_bps=data.get("link_bps"),
        runs=data["runs"],
        provenance=data.get("provenance"),
    )
    rs.created = data.get("created") or rs.created
    return rs
