"""`p4incast-run reproduce`: the same code path as `make reproduce`, and no
surprise for an experiment file that happens to be named `reproduce`."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from p4incast.sim import native

RUN = [sys.executable, "-m", "p4incast.reports.run_cli"]  # what the p4incast-run script calls


def p4incast_run(
    *args: str, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    return subprocess.run([*RUN, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def test_reproduce_subcommand_writes_a_report_with_verdicts(tmp_path: Path) -> None:
    ok, why = native.available()
    if not ok:
        pytest.skip(f"simulator: {why}")
    out = tmp_path / "rep"
    proc = p4incast_run(
        "reproduce", "--only", "ictcp-policy-tick", "--rounds", "2", "--jobs", "1",
        "--out", str(out), timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = (out / "REPORT.md").read_text()
    assert "Rounds cut to 2 per run (--rounds)." in report
    assert "## ictcp-policy-tick" in report
    verdicts = [ln for ln in report.splitlines() if ln.startswith("| ictcp-timeouts")]
    verdict = re.compile(r"\| \*\*(holds|diverges|inconclusive)\*\* \|$")
    assert verdicts and all(verdict.search(ln.rstrip()) for ln in verdicts), verdicts
    # the papers' figures without a preset, each with its reason, whatever --only picks
    from p4incast.reports import reproduce

    unrun = reproduce.unrun_figures()
    assert any(line.startswith("NewDCTCP (Sreekumari et al. 2015) Fig. 10: ") for line in unrun)
    assert all(f"Not run here, no preset: {line}." in report for line in unrun), unrun
    # --report-only rebuilds the report from the results already there
    again = p4incast_run("reproduce", "--only", "ictcp-policy-tick", "--report-only",
                         "--out", str(out))  # fmt: skip
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Rebuilt from the 12 of 12 runs" in (out / "REPORT.md").read_text()


def test_reproduce_is_the_subcommand_and_a_file_of_that_name_stays_reachable(
    tmp_path: Path,
) -> None:
    """With a file `reproduce` in the folder, the word still means the subcommand,
    which says so and how to run the file; `./reproduce` runs the file."""
    exp = "name: reproduce\nengine: sim\nsenders: [2]\nschemes: [{name: tcp, ecn: off, cc: reno}]\n"
    (tmp_path / "reproduce").write_text(exp)
    sub = p4incast_run("reproduce", "--report-only", cwd=tmp_path)
    assert sub.returncode == 2
    assert "--report-only needs --out" in sub.stderr
    assert "./reproduce here runs with `p4incast-run ./reproduce`" in sub.stderr
    assert "Traceback" not in sub.stderr
    bad = p4incast_run("reproduce", "--only", "no-such-preset", cwd=tmp_path)
    assert bad.returncode == 2 and "--only: no preset no-such-preset" in bad.stderr
    as_file = p4incast_run("./reproduce", "--check", cwd=tmp_path)
    assert as_file.returncode == 0, as_file.stderr[-2000:]
    assert "reproduce: 1 schemes x N in [2]" in as_file.stdout


def test_presets_are_split_by_scenario(tmp_path: Path) -> None:
    """Incast presets run through the incast runner, at-scale ones (issue 18) through
    experiments/atscale.py; a scenario reproduce does not know is named, not run."""
    from p4incast.reports import reproduce

    other = tmp_path / "future.yaml"
    other.write_text("scenario: fat-tree-2030\nname: future\n")
    note = reproduce.skip_note(other)
    assert note is not None and "scenario fat-tree-2030, not one reproduce runs" in note
    assert reproduce.skip_note(reproduce.PAPERS / "ictcp-fig10.yaml") is None
    incast, scale = reproduce.presets(), reproduce.atscale_presets()
    assert reproduce.PAPERS / "rcc-at-scale.yaml" in scale and not set(incast) & set(scale)
    assert reproduce.PAPERS / "rcc-heavy.yaml" in incast
    assert scale[0].parent == reproduce.PAPERS  # the preset before its ablations
    assert reproduce.skipped() == []


def test_unrun_figures_need_a_paper_a_figure_and_a_reason(tmp_path: Path) -> None:
    """reports/unrun_figures.yaml: one line per figure; an entry without its reason
    is one error naming the file, before anything runs."""
    from p4incast.experiments.config import ExperimentError
    from p4incast.reports import reproduce

    ok = tmp_path / "ok.yaml"
    ok.write_text("- {paper: P, figure: Fig. 2, why: needs a fabric we lack}\n")
    assert reproduce.unrun_figures(ok) == ["P Fig. 2: needs a fabric we lack"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("- {paper: P, figure: Fig. 2}\n")
    with pytest.raises(ExperimentError, match="bad.yaml: expected a list of"):
        reproduce.unrun_figures(bad)
