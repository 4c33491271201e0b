"""What a report shows of each scenario (experiments/scenario.py), keyed by the
scenario's name: the claims' evaluation context, what p4incast-run prints and
keeps after a sweep, its plots, and its section of REPORT.md. The running
side's Scenario says what a point is and how its results are kept; this is
the report side's half, so that experiments/ never imports plots or verdicts.

    claims     claim_context(exp) -> verdicts.evaluate's context (axis, ...)
    report     report(exp, rs) -> what p4incast-run prints (and keeps: at scale,
               SUMMARY.md next to results.json)
    plots      plots(rs) -> the PNGs written
    section    section(exp, rs, root, reference) -> REPORT.md's body for one
               experiment (reports/reproduce.py)
    preset     preset_lines(exps) -> REPORT.md's lines for a whole preset (all
               its variants), after its claims: an incast preset with a
               batched scheme shows the seed-003 schedule of every point

`REPORTS` has one entry per scenario of experiments/scenario.py's SCENARIOS
(tests/reports/test_rep_scenario_report.py checks that none is missing).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from p4incast.experiments import atscale_summary, provenance, results, scenario
from p4incast.experiments.atscale import AT_SCALE, AtScaleExperiment
from p4incast.experiments.config import Experiment
from p4incast.model.atscale import ATSCALE_SCENARIO, Fabric, Traffic
from p4incast.model.scheme import INCAST_SCENARIO, Transport, batch_schedule

from . import plots, verdicts

SUMMARY_MD = "SUMMARY.md"  # an at-scale sweep's report, next to its results.json
SETTINGS = (("fabric", Fabric), ("traffic", Traffic), ("transport", Transport))


class ScenarioReport(Protocol):
    """What the reports show of one scenario (module docstring); `exp` is one of the
    scenario's experiments, `rs` its results."""

    section_suffix: str  # after the preset's name in REPORT.md's section header

    def claim_context(self, exp: Any) -> dict[str, Any]: ...
    def report(self, exp: Any, rs: results.ResultSet) -> str: ...
    def plots(self, rs: results.ResultSet) -> list[Path]: ...
    def section(
        self,
        exp: Any,
        rs: results.ResultSet,
        root: Path,
        reference: Any,
        marks: Sequence[plots.Mark] = (),
    ) -> list[str]: ...
    def preset_lines(self, exps: list[Any]) -> list[str]: ...


class IncastReport:
    """An incast experiment's (config.Experiment): the runner's summary table, the
    plots against N, and REPORT.md's figure of our curves under the paper's numbers."""

    section_suffix = ""

    def claim_context(self, exp: Experiment) -> dict[str, Any]:
        return {
            "axis": scenario.INCAST.axis,
            "topology": exp.topology,
            "app": exp.app,
            "transport": exp.transport,
        }

    def report(self, exp: Experiment, rs: results.ResultSet) -> str:
        return rs.summary_table()

    def plots(self, rs: results.ResultSet) -> list[Path]:
        return plots.plot_all(rs, rs.out_dir)

    def section(
        self,
        exp: Experiment,
        rs: results.ResultSet,
        root: Path,
        reference: Any,
        marks: Sequence[plots.Mark] = (),
    ) -> list[str]:
        """One variant's part of REPORT.md: our curves under the paper's numbers and the
        points its claims' verdicts were decided on (`marks`), the table."""
        path = rs.out_dir / "reference.png"
        fig = plots.reference_plot(
            rs.aggregate(), reference or {}, exp.name, path, rs.link_bps, marks, rs.mss_bytes
        ).path
        lines = [f"### {exp.name}", "", f"![{exp.name}]({fig.relative_to(root)})", ""]
        return [*lines, "```", rs.summary_table(), "```", ""]

    def preset_lines(self, exps: list[Experiment]) -> list[str]:
        return schedule_table(exps)


def schedule_table(exps: list[Experiment]) -> list[str]:
    """The seed-003 schedule a batched scheme ran at every (variant, N) of a preset
    (model.scheme.batch_schedule, the same the simulator and the bound claims use):
    S_SRU, wnd_max, n, k, T, T~ and the closed form g. Empty without a batched scheme."""
    if not any(s.batching for e in exps for s in e.schemes):
        return []
    lines = [
        "Schedule of the batched scheme (docs/algorithms.md §4; S_SRU in segments of "
        f"{exps[0].transport.mss_bytes} B):",
        "",
        "| buffer (B) | N | SRU (B) | S_SRU | wnd_max | n | k | T (µs) | T~ (ms) | g (Mbit/s) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for exp in exps:
        for n in exp.senders:
            p = batch_schedule(n, exp.topology, exp.app, exp.transport)
            over = " (overflows)" if p.overflows else ""
            lines.append(
                f"| {exp.topology.port_buffer_bytes:.0f} | {n} | {p.sru_bytes} | {p.s_sru_pkts} "
                f"| {p.wnd_max}{over} | {p.n} | {p.k} | {p.T * 1e6:.1f} | {p.t_tilde * 1e3:g} "
                f"| {p.goodput_bound_bps / 1e6:.1f} |"
            )
    return [*lines, ""]


def _settings_line(config: Mapping[str, Any], key: str, cls: type) -> str:
    """`Fabric: Fabric(tors=40, ...)`, from the settings the runs were made with."""
    try:
        return f"{key.title()}: {cls(**config[key])}"
    except (KeyError, TypeError):
        return f"{key.title()}: {config.get(key)}"


def summary_body(rs: results.ResultSet) -> list[str]:
    """SUMMARY.md without its title and claims (REPORT.md's section shows these):
    the settings the runs were made with, provenance, the table, how to read it."""
    config = rs.config or {}
    records = rs.runs
    rows = rs.aggregate()
    walls = [r["wall_s"] for r in records if r["status"] == "ok"]
    peaks = [r["point_peak_rss_mb"] for r in records if r.get("point_peak_rss_mb")]
    bases = [r["rss_before_mb"] for r in records if r.get("rss_before_mb")]
    repeated = any(r.get("ok", 0) > 1 for r in rows)
    lines = [_settings_line(config, k, c) for k, c in SETTINGS]
    lines += ["", provenance.line(rs.provenance), "", atscale_summary.table(rows), ""]
    lines.append(
        "FCT = from the connect call to the last byte at the aggregator (handshake included). "
        "Intervals: 95 %, "
        + (
            "Student t over the repeats' percentiles."
            if repeated
            else "order statistics over the flows of the run (assumes independent flows)."
        )
    )
    if walls:
        lines += [
            "",
            f"Wall time per point: mean {statistics.fmean(walls):.1f} s, max {max(walls):.1f} s"
            + (
                f"; peak RSS during a point {max(peaks):.0f} MB, of which {min(bases):.0f} MB"
                " is the worker with ns-3 loaded before it"
                if peaks and bases
                else ""
            )
            + f" ({len(walls)} points).",
        ]
    return lines


class AtScaleReport:
    """An at-scale sweep's (experiments/atscale.py): SUMMARY.md (the settings, the
    table, the claims' verdicts) and the plots against offered load."""

    section_suffix = " (at scale)"

    def claim_context(self, exp: AtScaleExperiment) -> dict[str, Any]:
        return {"axis": AT_SCALE.axis}

    def report(self, exp: AtScaleExperiment, rs: results.ResultSet) -> str:
        """SUMMARY.md (written next to results.json), returned to be printed."""
        config = rs.config or {}
        fabric = Fabric(**config["fabric"]) if "fabric" in config else exp.fabric
        title = (
            f"# {rs.name}: {fabric.hosts} hosts, {len(config.get('schemes', []))} schemes × "
            f"{len(config.get('loads', []))} loads × {config.get('repeats')} repeats"
        )
        lines = [title, "", *summary_body(rs)]
        rows, ctx = rs.aggregate(), self.claim_context(exp)
        vs = [verdicts.evaluate(c, rows, ctx) for c in exp.paper.claims] if exp.paper else []
        if vs:
            lines += ["", *verdicts.table([(v, v.verdict) for v in vs])]
        text = "\n".join(lines) + "\n"
        (rs.out_dir / SUMMARY_MD).write_text(text)
        return text

    def plots(self, rs: results.ResultSet) -> list[Path]:
        return plots.plot_loads(rs.aggregate(), rs.out_dir, rs.name)

    def section(
        self,
        exp: AtScaleExperiment,
        rs: results.ResultSet,
        root: Path,
        reference: Any,
        marks: Sequence[plots.Mark] = (),
    ) -> list[str]:
        """REPORT.md's body for the preset: the summary and its figures (against load;
        they do not mark claim points, whose verdict text names them)."""
        if not rs.runs:
            return [f"No runs in {rs.out_dir}.", ""]
        figures = " ".join(f"![{f.stem}]({f.relative_to(root)})" for f in sorted(self.plots(rs)))
        return [*summary_body(rs), "", figures, ""]

    def preset_lines(self, exps: list[AtScaleExperiment]) -> list[str]:
        return []


REPORTS: dict[str, ScenarioReport] = {
    INCAST_SCENARIO: IncastReport(),
    ATSCALE_SCENARIO: AtScaleReport(),
}


def of_scenario(sc: scenario.Scenario) -> ScenarioReport:
    """What the reports show of a scenario."""
    return REPORTS[sc.name]


def of(exp: Any) -> ScenarioReport:
    """What the reports show of a loaded experiment's scenario."""
    return of_scenario(scenario.of(exp))
