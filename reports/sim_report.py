"""The report of a `make sim` run: where each scheme breaks, N = 1 to 1000.

    python -m p4incast.reports.sim_report --run RESULTS_DIR --out docs/sim/REPORT.md

RESULTS_DIR is the folder `make sim` wrote (experiments/sim.yaml): one results
folder per variant (SRU × buffer), every scheme side by side in each. Writes
one Markdown file and, in figures/ beside it, each variant's goodput and
ratio of rounds with an RTO against N (reports/plots.py: N on a log axis, the
framing limit dashed, each scheme's break dotted). The report holds: where
the results came from (each variant's provenance, resumed runs included),
one table of where each scheme breaks per variant (plots.break_n: the first
N with an RTO in more than half its rounds), the budgeted schemes at N ≥ 100
(goodput against the framing limit, RTO rounds, drops, queue p95), the runs
that failed with their errors, and each variant's summary table (what
p4incast-run prints). Every figure comes from the results files.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from p4incast.experiments import provenance, results
from p4incast.experiments.metrics import framing_limit_bps

from . import plots

FIGURES_DIR = "figures"  # beside the report
AT_SCALE = ("front+rotate", "front+budget", "front+switch")  # the budgeted schemes
AT_SCALE_MIN_N = 100


def _natural(name: str) -> list[Any]:
    """A sort key that orders the numbers in a name by value (buf32k < buf256k)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def variants(run_dir: Path) -> list[results.ResultSet]:
    """The variant folders of a `make sim` results folder, their names' numbers
    in order (a folder that is itself one results folder is its only variant)."""
    if (run_dir / results.RESULTS_JSON).is_file():
        return [results.load(run_dir)]
    found = sorted(
        (p for p in run_dir.iterdir() if (p / results.RESULTS_JSON).is_file()),
        key=lambda p: _natural(p.name),
    )
    if not found:
        raise ValueError(f"{run_dir}: no results folder ({results.RESULTS_JSON}) in it")
    return [results.load(p) for p in found]


def _schemes(sets: Sequence[results.ResultSet]) -> list[str]:
    """The schemes in the experiment's order (its config), then any other run."""
    out: dict[str, None] = {}
    for rs in sets:
        config = rs.config if isinstance(rs.config, dict) else {}
        out.update(dict.fromkeys(str(s["name"]) for s in config.get("schemes") or []))
    for rs in sets:
        out.update(dict.fromkeys(str(r["scheme"]) for r in rs.runs))
    return list(out)


def break_cell(rows: Sequence[Mapping[str, Any]], scheme: str) -> str:
    """Where a scheme breaks in one variant; "—" with the largest N when it
    never does; blank when the variant did not run it."""
    mine = [r for r in rows if r["scheme"] == scheme]
    if not mine:
        return ""
    n = plots.break_n(rows, scheme)
    if n is not None:
        return str(n)
    held = [r["n"] for r in mine if r.get("rto_round_ratio") is not None]
    return f"— ({max(held)})" if held else "—"


def breaks_section(sets: Sequence[results.ResultSet]) -> list[str]:
    schemes = _schemes(sets)
    lines = [
        "## Where each scheme breaks",
        "",
        "The first N at which a scheme has an RTO in more than half its rounds "
        "(reports/plots.py break_n); — when it never does, with the largest N run.",
        "",
        "| variant | " + " | ".join(schemes) + " |",
        "|---|" + "---|" * len(schemes),
    ]
    for rs in sets:
        rows = rs.aggregate()
        lines.append(f"| {rs.name} | " + " | ".join(break_cell(rows, s) for s in schemes) + " |")
    return lines + [""]


def _num(v: Any, fmt: str) -> str:
    return "—" if v is None else format(v, fmt)


def at_scale_section(sets: Sequence[results.ResultSet]) -> list[str]:
    lines = [
        f"## The budgeted schemes at N ≥ {AT_SCALE_MIN_N}",
        "",
        "Goodput (mean of the rounds, 95 % interval), its share of the framing limit "
        "(TCP's goodput ceiling on the bottleneck with full segments, "
        "experiments/metrics.py framing_limit_bps), rounds with an RTO, drops and queue "
        "p95 (packets) per round; a point whose runs failed shows its status.",
        "",
        "| variant | scheme | N | Mbit/s | of the limit | RTO rounds | drops | queue p95 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for rs in sets:
        limit = framing_limit_bps(rs.link_bps) / 1e6 if rs.link_bps else None
        rows = rs.aggregate()
        for scheme in AT_SCALE:
            for r in rows:
                if r["scheme"] != scheme or r["n"] < AT_SCALE_MIN_N:
                    continue
                g = r.get("goodput_mbps")
                if g is None:
                    lines.append(f"| {rs.name} | {scheme} | {r['n']} | {r['status']} |||||")
                    continue
                lo, hi = r.get("goodput_mbps_ci_lo"), r.get("goodput_mbps_ci_hi")
                gtext = f"{g:.1f}" + (f" [{lo:.1f}, {hi:.1f}]" if lo is not None else "")
                share = _num(g / limit if limit else None, ".3f")
                rto = r.get("rto_round_ratio")
                lines.append(
                    f"| {rs.name} | {scheme} | {r['n']} | {gtext} | {share} "
                    f"| {_num(None if rto is None else rto * 100, '.0f')} % "
                    f"| {_num(r.get('drops'), '.1f')} | {_num(r.get('qdepth_p95'), '.0f')} |"
                )
    return lines + [""]


def failed_section(sets: Sequence[results.ResultSet]) -> list[str]:
    failed = [(rs.name, r) for rs in sets for r in rs.runs if r.get("status") != "ok"]
    if not failed:
        return []
    lines = ["## Runs that failed", ""]
    for name, r in failed:
        error = " ".join(str(r.get("error") or "").split())
        lines.append(f"- {name}: {r['scheme']} N = {r['n']} rep {r.get('repeat', 0)}: {error}")
    return lines + [""]


def draw_figures(rs: results.ResultSet, out_dir: Path) -> list[str]:
    """One variant's goodput and RTO-round figures into out_dir/figures/; their
    links relative to out_dir."""
    fig_dir = out_dir / FIGURES_DIR
    fig_dir.mkdir(parents=True, exist_ok=True)
    order = _schemes([rs])  # the experiment's order: each scheme's colour in every run
    rows = sorted(rs.aggregate(), key=lambda r: order.index(str(r["scheme"])))
    goodput, rto = f"{rs.name}-goodput.png", f"{rs.name}-rto_rounds.png"
    plots.plot_goodput(rows, fig_dir / goodput, rs.name, rs.link_bps)
    plots.plot_rto(rows, fig_dir / rto, rs.name)
    return [f"{FIGURES_DIR}/{goodput}", f"{FIGURES_DIR}/{rto}"]


def report(
    run_dir: Path, sets: Sequence[results.ResultSet], figures: Mapping[str, Sequence[str]]
) -> str:
    """The report's Markdown from loaded variants; `figures`: per variant name, the
    links `draw_figures` wrote."""
    runs = [r for rs in sets for r in rs.runs]
    ok = sum(1 for r in runs if r.get("status") == "ok")
    lines = [
        "# p4-incast at the papers' scale: `make sim` on the ns-3 model",
        "",
        f"Run: `{run_dir}`: {len(sets)} variants, {len(runs)} runs, {ok} ok, "
        f"{len(runs) - ok} failed.",
        "",
        *provenance.report_header([(rs.name, rs.provenance) for rs in sets]),
        *breaks_section(sets),
        *at_scale_section(sets),
        *failed_section(sets),
    ]
    for rs in sets:
        lines += [f"## {rs.name}", ""]
        if figures.get(rs.name):
            lines += [" ".join(f"![{Path(f).stem}]({f})" for f in figures[rs.name]), ""]
        lines += ["```", rs.summary_table().rstrip("\n"), "```", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="sim_report", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--run", type=Path, required=True, help="the folder `make sim` wrote")
    ap.add_argument("--out", type=Path, required=True, help="e.g. docs/sim/REPORT.md")
    args = ap.parse_args(argv)
    try:
        sets = variants(args.run)
    except (OSError, ValueError) as err:
        print(f"sim_report: --run {args.run}: {err}", file=sys.stderr)
        return 2
    figures = {rs.name: draw_figures(rs, args.out.parent) for rs in sets}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    results.write_atomic(args.out, report(args.run, sets, figures))
    print(f"sim report: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
