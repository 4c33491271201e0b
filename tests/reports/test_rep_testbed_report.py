"""reports/testbed_report.py: one report of a BMv2 testbed run — provenance, the
runner's table, the twin's — and what moved per (scheme, N) since earlier runs.
Fixture results folders are written here with results.ResultSet (not read from results/)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from run_records import fake_record

from p4incast.experiments import results
from p4incast.reports import report_diff
from p4incast.reports import testbed_report as tb
from p4incast.reports.report_diff import Value

MakeRun = Callable[..., dict[str, Any]]
CONFIG = {"topology": {"queue_pkts": 64, "bottleneck_pps": 4000}, "app": {"rounds": 4}}


def folder(
    path: Path,
    make_run: MakeRun,
    slow: dict[str, float],
    senders: tuple[int, ...] = (2, 4),
    config: dict[str, Any] | None = None,
    commit: str = "c" * 40,
) -> results.ResultSet:
    """A testbed-like results folder: per scheme, `slow[scheme]` times slower than
    make_run's base (two repeats, 5 % apart, so goodput has a t interval)."""
    rs = results.ResultSet(path, "default", config or CONFIG)
    rs.start(fake_record(commit) | {"engine": "bmv2"})
    for scheme, s in slow.items():
        for n in senders:
            for rep, k in ((0, 1.0), (1, 1.05)):
                rs.add(make_run(scheme, n, rep, slow=s * k, engine="bmv2"))
    return rs


def test_interval_moved() -> None:
    assert not tb.interval_moved(Value(40, 38, 42), Value(41, 41.5, 43))  # overlap
    assert not tb.interval_moved(Value(40, 30, 50), Value(46, 41, 51))  # 15 % apart, overlap
    assert tb.interval_moved(Value(40, 38, 42), Value(44, 43, 45))
    assert tb.interval_moved(Value(44, 43, 45), Value(40, 38, 42))
    assert not tb.interval_moved(Value(40), Value(41.9))  # no intervals: within 5 %
    assert tb.interval_moved(Value(40), Value(42.1, 42, 43))
    assert tb.interval_moved(None, Value(1)) and not tb.interval_moved(None, None)


def test_compare_per_scheme_and_n(make_run: MakeRun, tmp_path: Path) -> None:
    old = folder(tmp_path / "old", make_run, {"droptail": 1.0, "mark-front": 1.0, "gone": 1.0})
    newer = folder(tmp_path / "newer", make_run, {"mark-front": 2.0}, senders=(2,))
    now = folder(tmp_path / "now", make_run, {"droptail": 1.0, "mark-front": 2.0}, (2, 4, 8))
    d = tb.since_diff(now, [old, newer])
    # mark-front N=2: the newer run replaces the old one (same goodput as now: no move);
    # N=4 only in the old run, at half the goodput of now's: moved
    assert [(c.now.scheme, c.now.n, c.moved, tb._short(c.before.source)) for c in d.changed] == [
        ("mark-front", 4, ("goodput_mbps",), str(tmp_path / "old"))
    ]
    assert [(r.scheme, r.n) for r in d.new] == [("droptail", 8), ("mark-front", 8)]
    assert d.vanished == [] and d.other_schemes == ("gone",)
    gone = folder(tmp_path / "later", make_run, {"droptail": 1.0}, senders=(2,))
    d2 = tb.since_diff(gone, [old])
    assert [(r.scheme, r.n) for r in d2.vanished] == [("droptail", 4)]
    assert d2.other_schemes == ("mark-front", "gone")


def test_report_cli(make_run: MakeRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = folder(tmp_path / "old", make_run, {"droptail": 1.0, "mark-front": 1.0}, commit="a" * 40)
    other = {**CONFIG, "topology": {"queue_pkts": 64, "bottleneck_pps": 2000}}
    folder(tmp_path / "twin-bmv2", make_run, {"droptail": 1.0}, config=other)
    run = folder(tmp_path / "run", make_run, {"droptail": 1.0, "mark-front": 2.0}, commit="b" * 40)
    twin = tmp_path / "twin"
    twin.mkdir()
    (twin / "twin.md").write_text("# Twin engines: BMv2 vs the simulator\n\n| scheme | N |\n")
    why = tmp_path / "why.yaml"
    why.write_text('"mark-front/N=2": the senders\' cut\n"mark-front": receivers\n"x": stale\n')
    out = tmp_path / "docs" / "REPORT.md"
    argv = ["--run", str(tmp_path / "run"), "--twin", str(twin), "--why", str(why), "--out"]
    argv += [str(out), "--since", str(tmp_path / "twin-bmv2"), str(tmp_path / "old")]
    assert tb.main(argv) == 0
    assert "--why entries for no moved point: x" in capsys.readouterr().out
    text = out.read_text()
    head = text.partition(report_diff.SECTION)[0]
    assert f"Results from commit `{'b' * 40}`." in head
    assert f"provenance: commit {'b' * 12}, bmv2" in head
    # the runner's own table, as p4incast-run prints it
    assert results.load(tmp_path / "run").summary_table().rstrip("\n") in text
    assert "\n## Twin engines: BMv2 vs the simulator\n" in text  # twin.md, one level down
    assert "\n# Twin" not in text
    section = text.partition(report_diff.SECTION)[2].partition("## The run")[0]
    assert f"- `{tmp_path / 'twin-bmv2'}`: experiment default, 4 runs, " in section
    assert "settings differ: topology.bottleneck_pps: 2000 there vs 4000 now" in section
    assert f"- `{tmp_path / 'old'}`: experiment default, 8 runs" in section
    assert "same topology, app, transport" in section
    assert "2 points moved; 0 new; 0 vanished." in section
    rows = {ln.split(" | ")[1]: ln for ln in section.splitlines() if ln.startswith("| mark-front")}
    now = {(r.scheme, r.n): r for r in tb.point_rows(run.aggregate())}
    before = {(r.scheme, r.n): r for r in tb.point_rows(old.aggregate())}
    g = "goodput_mbps"
    cell = f"**{tb._fmt(g, before[('mark-front', 2)].values[g])} → "
    cell += f"{tb._fmt(g, now[('mark-front', 2)].values[g])}**"
    assert cell in rows["2"] and rows["2"].endswith(f"| {tmp_path / 'old'} | the senders' cut |")
    assert rows["4"].endswith("| receivers |")  # the scheme's entry when N has none
    assert "| droptail |" not in section  # the same runs: nothing moved


def test_report_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.md"
    assert tb.main(["--run", str(tmp_path / "none"), "--out", str(out)]) == 2
    assert "--run" in capsys.readouterr().err and not out.exists()
    assert tb.main(["--run", str(tmp_path), "--why", "w.yaml", "--out", str(out)]) == 2
    assert "--why needs --since" in capsys.readouterr().err


def test_report_embeds_goodput_and_rto_against_n(make_run: MakeRun, tmp_path: Path) -> None:
    folder(tmp_path / "run", make_run, {"droptail": 1.0, "mark-front": 2.0})
    out = tmp_path / "docs" / "REPORT.md"
    assert tb.main(["--run", str(tmp_path / "run"), "--out", str(out)]) == 0
    text = out.read_text()
    for name in tb.FIGURES:
        assert f"![{Path(name).stem}](figures/{name})" in text
        png = out.parent / "figures" / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert text.index("figures/") < text.index("```")  # above the run's table
