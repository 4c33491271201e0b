"""`reproduce --since OLD.md ... --why FILE`: REPORT.md's "Changed since the last
report", built from the earlier report's rows and this report's computed verdicts,
and its cost section, computed from the run records (toy presets, --report-only)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from test_rep_verdict_classes import report_verdicts, toy, write_results  # noqa: F401

from p4incast.reports import report_diff, reproduce

MakeRun = Callable[..., dict[str, Any]]


def build(root: Path, *extra: str) -> str:
    argv = ["--only", "toy", "toy-abl", "--report-only", "--out", str(root), *extra]
    assert reproduce.main(argv) == 0
    return (root / "REPORT.md").read_text()


def tables(report: str) -> str:
    """The report without its "Changed since" section: the claim tables."""
    head, _, rest = report.partition(report_diff.SECTION)
    return head + rest.partition("\n## Cost")[2]


def test_parsing_a_written_report_gives_its_verdict_column(toy: Path, make_run: MakeRun) -> None:  # noqa: F811
    write_results(toy, "toy", [2.0], make_run)
    write_results(toy, "toy-abl", [2.0, 0.5], make_run)
    report = build(toy)
    rows = report_diff.parse_report(report)
    assert [r.name for r in rows] == [
        "toy: a-first",
        "toy: a-fast",
        "toy: b-first",
        "toy-abl: a-first (init_cwnd3)",
        "toy-abl: a-first (init_cwnd10)",
    ]
    shown = report_verdicts(report)
    for r in rows[:3]:
        assert r.verdict == shown[r.claim]
    assert rows[3].verdict == "diverges" and rows[4].verdict == "holds"
    assert report_diff.SECTION not in report  # no --since, no section


def test_changed_since_an_earlier_report(
    toy: Path,  # noqa: F811
    make_run: MakeRun,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_results(toy, "toy", [2.0], make_run)
    write_results(toy, "toy-abl", [2.0, 0.5], make_run)
    old = tmp_path / "old.md"
    text = build(toy)
    # the earlier report had a claim since removed and not yet b-first
    b_first = next(ln for ln in text.splitlines() if ln.startswith("| b-first |"))
    text = text.replace(b_first, "| gone | a claim since removed | N=2: 5 | **holds** |")
    old.write_text(text)
    before = {r.key: r for r in report_diff.parse_report(text)}
    # an even older report in which a-fast held: old.md's row replaces it
    a_fast = next(ln for ln in text.splitlines() if ln.startswith("| a-fast |"))
    older = tmp_path / "older.md"
    older.write_text(text.replace(a_fast, a_fast.rsplit("| **", 1)[0] + "| **holds** |"))
    why = tmp_path / "why.yaml"
    why.write_text(
        '"toy/a-first": the ablation stopped holding\n'
        '"toy-abl/a-first/init_cwnd10": a is slower with init_cwnd 10 now\n'
        '"toy/never": stale\n'
    )
    write_results(toy, "toy-abl", [2.0, 3.0], make_run)  # a-first no longer holds there
    report = build(toy, "--since", str(older), str(old), "--why", str(why))
    assert "--why entries for no changed claim: toy/never" in capsys.readouterr().err
    now = {r.key: r for r in report_diff.parse_report(tables(report))}
    # the section sits right after the class counts, before the cost and the presets
    assert report.index("Paper claims (3,") < report.index(report_diff.SECTION)
    assert report.index(report_diff.SECTION) < report.index("## Cost, and the papers' rounds")
    assert report.index("## Cost, and the papers' rounds") < report.index("## toy\n")
    section = report.partition(report_diff.SECTION)[2].partition("\n## Cost")[0]
    assert f"`{older}` (5 claim rows), `{old}` (5 claim rows), oldest first" in section
    assert "2 claims changed (2 verdicts, 0 figures only); 1 new; 1 vanished." in section

    def cells(key: tuple[str, str, str], what: str, because: str) -> str:
        b, n = before[key], now[key]
        return (
            f"| {n.name}; {what} | {b.ours} — **{b.verdict}** (old.md) "
            f"| {n.ours} — **{n.verdict}** | {because} |"
        )

    paper = ("toy", "a-first", "")
    abl = ("toy-abl", "a-first", "init_cwnd10")
    assert before[paper].verdict == "diverges — explained by toy-abl (init_cwnd10)"
    assert now[paper].verdict == "diverges — unexplained"
    assert (before[abl].verdict, now[abl].verdict) == ("holds", "diverges")
    assert cells(paper, "verdict changed", "the ablation stopped holding") in section
    assert cells(abl, "verdict changed", "a is slower with init_cwnd 10 now") in section
    assert "toy: a-fast" not in section  # as in old.md, which replaces older.md's row
    b_now = now[("toy", "b-first", "")]
    assert f"- toy: b-first: {b_now.ours} — **{b_now.verdict}**\n" in section
    assert "- toy: gone: last N=2: 5 — **holds** (old.md) — why: not yet written" in section


def test_report_only_states_the_recorded_run(toy: Path, make_run: MakeRun) -> None:  # noqa: F811
    """A run records its wall time and the machine's load (sweep.json); --report-only
    on its folder states them, and the cost section uses that wall time."""
    write_results(toy, "toy", [2.0], make_run)
    write_results(toy, "toy-abl", [2.0, 0.5], make_run)
    reproduce.write_sweep(
        toy, 12, 150.0, datetime(2026, 11, 26, 11, 0, tzinfo=UTC), (1.5, 1.25, 1.0)
    )
    report = build(toy)
    assert "The run that made them took 2.5 min from 2026-11-26T11:00:00+00:00" in report
    assert "load average 1.50/1.25/1.00 at its start" in report
    assert "The run took 2.5 min wall time" in report


def test_cost_section_from_the_records(toy: Path, make_run: MakeRun) -> None:  # noqa: F811
    write_results(toy, "toy", [2.0], make_run)
    write_results(toy, "toy-abl", [2.0, 0.5], make_run)
    report = build(toy)
    section = report.partition("## Cost, and the papers' rounds")[2].partition("\n## toy")[0]
    # 3 experiments × 2 schemes × N in [2, 4], 1.5 s each (make_run), 4 rounds, 1 repeat
    assert "12 runs: 18 worker-seconds (18.0 s), mean point 1.5 s, longest 1.5 s" in section
    assert "wall time was not recorded" in section
    assert "| toy | 4 | 4 × 1 | 6 | 125 | 0.21 |" in section
    assert "| toy-abl | 8 | 4 × 1 | 12 | 125 | 0.42 |" in section
    cpus = os.cpu_count() or 1
    # one sweep: the longest point at 100 rounds (1.5 s × 25) beats 2250 s / 100 workers
    assert (
        f"In all 0.6 worker-hours: {2250 / cpus / 3600:.1f} h on this machine's {cpus} cores; "
        f"{37.5 / 0.92 / 60:.1f} min on a Ray cluster of 100 workers" in section
    )


def test_bad_since_or_why_stops_before_anything_runs(
    toy: Path,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    missing = tmp_path / "nope.md"
    argv = ["--only", "toy", "--out", str(toy)]  # would run the simulator if it got that far
    assert reproduce.main([*argv, "--since", str(missing)]) == 2
    assert f"--since {missing}: No such file or directory" in capsys.readouterr().err
    old = tmp_path / "old.md"
    shutil.copy(Path(report_diff.__file__), old)  # any text: no claim rows is fine
    bad = tmp_path / "why.yaml"
    bad.write_text("- a list\n- not a mapping\n")
    assert reproduce.main([*argv, "--since", str(old), "--why", str(bad)]) == 2
    assert "expected a mapping" in capsys.readouterr().err
    assert reproduce.main([*argv, "--why", str(bad)]) == 2
    assert "--why needs --since" in capsys.readouterr().err
    assert not (toy / "toy").exists()  # nothing ran, no folder made


def test_published_report_carries_its_figures_beside_it(tmp_path: Path) -> None:
    root = tmp_path / "reproduce-abc"
    (root / "newdctcp-fig7" / "sru64k").mkdir(parents=True)
    (root / "newdctcp-fig7" / "sru64k" / "reference.png").write_bytes(b"png 1")
    (root / "y.png").write_bytes(b"png 2")
    figures = tmp_path / "docs" / "figures"
    figures.mkdir(parents=True)
    (figures / "stale.png").write_bytes(b"from the report before")
    text = "a\n![fig7](newdctcp-fig7/sru64k/reference.png) ![x](y.png)\nb"
    out = reproduce.published(text, root, figures)
    assert out == (
        "a\n![fig7](figures/newdctcp-fig7--sru64k--reference.png) ![x](figures/y.png)\nb"
    )
    assert sorted(p.name for p in figures.iterdir()) == [
        "newdctcp-fig7--sru64k--reference.png",
        "y.png",
    ]
    assert (figures / "y.png").read_bytes() == b"png 2"
