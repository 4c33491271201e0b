"""One report of a BMv2 testbed run, and what changed since the last one.

    python -m p4incast.reports.testbed_report --run RESULTS_DIR [--twin TWIN_DIR]
        [--since RESULTS_DIR ...] [--why FILE] --out docs/testbed/REPORT.md

Writes one Markdown file: where the run came from (its results.json's
`provenance`, the header reproduce prints: provenance.report_header), "Changed
since the last report" (with --since), the runner's summary table of the run
(results.ResultSet.summary_table, what p4incast-run prints) under two
figures, goodput and the ratio of rounds with an RTO against N for every
scheme (reports/plots.py; written to figures/ beside the report, which keeps
them in the tree), and the twin's table when --twin names a folder of
reports/twin.py (its twin.md, headers one level down).

"Changed since the last report" compares per (scheme, N) the run's goodput
and RTO-round ratio — the summary rows of results.aggregate, with their 95 %
intervals `<metric>_ci_lo/_ci_hi` (experiments/metrics.py) — with the
earlier runs given by --since (results folders or results.json files), oldest
first: a later run's row replaces an earlier one for the same scheme and N.
A metric **moved** when the two 95 % intervals do not overlap (before's hi <
now's lo, or now's hi < before's lo); when either side has no interval (one
repeat of fewer than 4 rounds), when the means differ by more than 5 % of
the earlier one (report_diff.relative_moved). (scheme, N) of the run with no
earlier row are new; earlier N of a scheme the run has but not at that N,
vanished (schemes the run does not have at all are named, not compared). Each
earlier run is listed with the first setting (topology, app, transport) in
which it differs from this one, since a figure only compares at the same
settings. Why: --why, YAML mapping `"<scheme>"` or `"<scheme>/N=<n>"` (wins)
to one line; a moved or vanished point without an entry shows "why: not yet
written". Every figure comes from the results files, none is typed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from p4incast.experiments import provenance, results
from p4incast.experiments.config import first_difference

from . import plots, report_diff
from .report_diff import NOT_WRITTEN, Value, relative_moved, why_of

METRICS = (("goodput_mbps", "goodput Mbit/s"), ("rto_round_ratio", "RTO rounds %"))
FIGURES_DIR = "figures"  # beside the report
FIGURES = ("testbed-goodput.png", "testbed-rto_rounds.png")  # in FIGURES_DIR
SETTINGS = ("topology", "app", "transport")  # what a (scheme, N) figure depends on

PointKey = tuple[str, int]  # (scheme, N)


@dataclass(frozen=True)
class PointRow:
    """One (scheme, N) of a run: each metric's mean and 95 % interval (None: no value)."""

    scheme: str
    n: int
    values: Mapping[str, Value | None]
    source: str = ""

    @property
    def key(self) -> PointKey:
        return self.scheme, self.n


def point_rows(summary: Iterable[Mapping[str, Any]], source: str = "") -> list[PointRow]:
    """PointRows of summary rows (results.aggregate)."""
    out = []
    for r in summary:
        values: dict[str, Value | None] = {}
        for m, _label in METRICS:
            mean, lo, hi = r.get(m), r.get(f"{m}_ci_lo"), r.get(f"{m}_ci_hi")
            values[m] = (
                None
                if mean is None
                else Value(
                    float(mean),
                    None if lo is None else float(lo),
                    None if hi is None else float(hi),
                )
            )
        out.append(PointRow(str(r["scheme"]), int(r["n"]), values, source))
    return out


def merge(runs: Iterable[Iterable[PointRow]]) -> dict[PointKey, PointRow]:
    """Earlier runs' rows, oldest first: a later row replaces an earlier one."""
    out: dict[PointKey, PointRow] = {}
    for rows in runs:
        for row in rows:
            out.pop(row.key, None)
            out[row.key] = row
    return out


def interval_moved(before: Value | None, now: Value | None) -> bool:
    """The two 95 % intervals do not overlap; without both, > 5 % apart. A value that
    appears or goes (None on one side) moved."""
    if before is None or now is None:
        return (before is None) != (now is None)
    if before.has_interval and now.has_interval:
        assert before.lo is not None and before.hi is not None
        assert now.lo is not None and now.hi is not None
        return before.hi < now.lo or now.hi < before.lo
    return relative_moved(before.mean, now.mean)


@dataclass(frozen=True)
class PointChange:
    before: PointRow
    now: PointRow
    moved: tuple[str, ...]  # the metrics that moved


@dataclass(frozen=True)
class PointDiff:
    changed: list[PointChange]
    new: list[PointRow]
    vanished: list[PointRow]  # earlier N of a scheme this run has, not in this run
    other_schemes: tuple[str, ...] = ()  # earlier schemes this run does not have at all


def compare(before: Mapping[PointKey, PointRow], now: Sequence[PointRow]) -> PointDiff:
    """This run's rows against the earlier ones (`merge`), in this run's order."""
    changed, new = [], []
    for row in now:
        old = before.get(row.key)
        if old is None:
            new.append(row)
            continue
        moved = tuple(
            m for m, _label in METRICS if interval_moved(old.values.get(m), row.values.get(m))
        )
        if moved:
            changed.append(PointChange(old, row, moved))
    here = {r.key for r in now}
    schemes = {r.scheme for r in now}
    vanished = [r for k, r in before.items() if k not in here and r.scheme in schemes]
    others = tuple(dict.fromkeys(r.scheme for r in before.values() if r.scheme not in schemes))
    return PointDiff(changed, new, vanished, others)


def why_keys(row: PointRow) -> tuple[str, str]:
    """The why keys of a point, most specific first."""
    return f"{row.scheme}/N={row.n}", row.scheme


def unused_why(why: Mapping[str, str], d: PointDiff) -> list[str]:
    """Keys of `why` that match no moved or vanished point (stale entries)."""
    rows = [c.now for c in d.changed] + d.vanished
    used = {k for r in rows for k in why_keys(r)}
    return [k for k in why if k not in used]


def _fmt(metric: str, v: Value | None) -> str:
    if v is None:
        return "—"
    k, d = (100.0, 0) if metric == "rto_round_ratio" else (1.0, 1)
    text = f"{v.mean * k:.{d}f}"
    if v.has_interval:
        assert v.lo is not None and v.hi is not None
        text += f" [{v.lo * k:.{d}f}, {v.hi * k:.{d}f}]"
    return text


def _short(source: str) -> str:
    """A results folder as given (its results.json's folder)."""
    path = Path(source)
    return str(path.parent if path.name == results.RESULTS_JSON else path)


def changed_section(
    d: PointDiff, why: Mapping[str, str], sources: Sequence[tuple[str, str]]
) -> list[str]:
    """REPORT.md's "Changed since the last report". `sources`: (earlier run, a note on
    its settings) oldest first."""
    lines = [
        report_diff.SECTION,
        "",
        "Against, oldest first (a later run's row replaces an earlier one for the same scheme",
        "and N):",
        "",
        *[f"- `{s}`: {note}" for s, note in sources],
        "",
    ]
    lines += [
        "Per (scheme, N): a metric moved when its two 95 % intervals do not overlap (without",
        "intervals: more than 5 % apart); moved cells in bold (reports/testbed_report.py).",
        "",
        f"{len(d.changed)} points moved; {len(d.new)} new; {len(d.vanished)} vanished."
        + (
            f" Schemes of the earlier runs that this run does not have (not compared): "
            f"{', '.join(d.other_schemes)}."
            if d.other_schemes
            else ""
        ),
        "",
    ]
    if d.changed:
        head = " | ".join(f"{label}: before → now" for _m, label in METRICS)
        lines += [f"| scheme | N | {head} | before from | why |"]
        lines += ["|---|---|" + "---|" * len(METRICS) + "---|---|"]
        for c in d.changed:
            cells = []
            for m, _label in METRICS:
                cell = f"{_fmt(m, c.before.values.get(m))} → {_fmt(m, c.now.values.get(m))}"
                cells.append(f"**{cell}**" if m in c.moved else cell)
            text = why_of(why, *why_keys(c.now)) or NOT_WRITTEN
            lines.append(
                f"| {c.now.scheme} | {c.now.n} | {' | '.join(cells)} "
                f"| {_short(c.before.source)} | {text} |"
            )
        lines.append("")

    def point(r: PointRow) -> str:
        return ", ".join(f"{label} {_fmt(m, r.values.get(m))}" for m, label in METRICS)

    if d.new:
        lines += ["New points (no earlier row):", ""]
        lines += [f"- {r.scheme} N={r.n}: {point(r)}" for r in d.new] + [""]
    if d.vanished:
        lines += ["Vanished points (an earlier row, none in this run):", ""]
        for r in d.vanished:
            text = why_of(why, *why_keys(r)) or NOT_WRITTEN
            lines.append(f"- {r.scheme} N={r.n}: last {point(r)} ({_short(r.source)}) — {text}")
        lines.append("")
    return lines


def settings_note(earlier: results.ResultSet, run: results.ResultSet) -> str:
    """The first setting in which an earlier run differs from this one, or that none does."""

    def settings(rs: results.ResultSet) -> dict[str, Any]:
        config = rs.config if isinstance(rs.config, dict) else {}
        return {k: config.get(k) for k in SETTINGS}

    diff = first_difference(settings(earlier), settings(run))
    where = f"experiment {earlier.name}, {len(earlier.runs)} runs, {earlier.created}"
    return f"{where}; settings differ: {diff}" if diff else f"{where}; same {', '.join(SETTINGS)}"


def _demote(markdown: str) -> str:
    """Every Markdown header one level down (twin.md's title under the report's)."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        out.append("#" + line if not fenced and line.startswith("#") else line)
    return "\n".join(out)


def since_diff(run: results.ResultSet, since: Sequence[results.ResultSet]) -> PointDiff:
    """The run's (scheme, N) rows against the earlier runs', oldest first."""
    now = point_rows(run.aggregate(), str(run.out_dir))
    return compare(merge(point_rows(rs.aggregate(), str(rs.out_dir)) for rs in since), now)


def report(
    run: results.ResultSet,
    *,
    twin_md: str | None = None,
    twin_dir: str = "",
    since: Sequence[results.ResultSet] = (),
    why: Mapping[str, str] | None = None,
    figures: Sequence[str] = (),
) -> str:
    """The report's Markdown from loaded results (no files read or written here);
    `figures`: links to embed above the run's table (`draw_figures`)."""
    ok = sum(1 for r in run.runs if r.get("status") == "ok")
    engines = sorted({str(r.get("engine")) for r in run.runs})
    lines = [
        "# p4-incast on the BMv2 testbed",
        "",
        f"Run: `{run.out_dir}` (experiment {run.name}, created {run.created}): "
        f"{len(run.runs)} runs, {ok} ok, engine {', '.join(engines) or '?'}.",
        *provenance.report_header([(run.name, run.provenance)]),
    ]
    if since:
        notes = [(str(rs.out_dir), settings_note(rs, run)) for rs in since]
        lines += changed_section(since_diff(run, since), why or {}, notes)
    lines += ["## The run", ""]
    if figures:
        lines += [" ".join(f"![{Path(f).stem}]({f})" for f in figures), ""]
    lines += ["```", run.summary_table().rstrip("\n"), "```", ""]
    if twin_md is not None:
        title, _, rest = _demote(twin_md).rstrip("\n").partition("\n")
        lines += [title, "", f"From `{twin_dir}` (reports/twin.py, twin.md).", rest, ""]
    return "\n".join(lines) + "\n"


def draw_figures(run: results.ResultSet, out_dir: Path) -> list[str]:
    """Goodput and RTO-round ratio against N, every scheme, into out_dir/figures/;
    their links relative to out_dir."""
    fig_dir = out_dir / FIGURES_DIR
    fig_dir.mkdir(parents=True, exist_ok=True)
    rows = run.aggregate()
    goodput, rto = (fig_dir / f for f in FIGURES)
    plots.plot_goodput(rows, goodput, run.name, run.link_bps)
    plots.plot_rto(rows, rto, run.name)
    return [f"{FIGURES_DIR}/{f}" for f in FIGURES]


def _load(path: Path, flag: str) -> results.ResultSet:
    try:
        return results.load(path)
    except (OSError, ValueError) as err:
        raise ValueError(f"{flag} {path}: {err}") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="testbed_report", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--run", type=Path, required=True, help="the testbed run's results folder")
    ap.add_argument("--twin", type=Path, help="a folder of reports/twin.py (its twin.md)")
    ap.add_argument(
        "--since",
        nargs="+",
        type=Path,
        default=[],
        metavar="RESULTS_DIR",
        help="earlier runs, oldest first: what moved since them",
    )
    ap.add_argument("--why", type=Path, help='YAML "<scheme>[/N=<n>]": one line')
    ap.add_argument("--out", type=Path, required=True, help="e.g. docs/testbed/REPORT.md")
    args = ap.parse_args(argv)
    if args.why and not args.since:
        print("testbed_report: --why needs --since", file=sys.stderr)
        return 2
    try:
        run = _load(args.run, "--run")
        since = [_load(p, "--since") for p in args.since]
        twin_md = None
        if args.twin:
            try:
                twin_md = (args.twin / "twin.md").read_text(encoding="utf-8")
            except OSError as err:
                raise ValueError(f"--twin {args.twin}: {err.strerror or err}") from None
        why: dict[str, str] = {}
        if args.why:
            try:
                text = args.why.read_text(encoding="utf-8")
            except OSError as err:
                raise ValueError(f"--why {args.why}: {err.strerror or err}") from None
            why = report_diff.load_why(text, f"--why {args.why}")
    except ValueError as err:  # WhyError is one
        print(f"testbed_report: {err}", file=sys.stderr)
        return 2
    figures = draw_figures(run, args.out.parent)
    text = report(
        run, twin_md=twin_md, twin_dir=str(args.twin or ""), since=since, why=why, figures=figures
    )
    stale = unused_why(why, since_diff(run, since)) if since else []
    if stale:
        print(f"testbed_report: --why entries for no moved point: {', '.join(stale)}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    results.write_atomic(args.out, text)
    print(f"testbed report: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
