"""Plots of a small synthetic experiment: files exist, are PNGs, failed points are left out."""

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from matplotlib.container import ErrorbarContainer
from PIL import Image

from p4incast.experiments import results
from p4incast.experiments.results import ResultSet
from p4incast.reports import plots, reproduce
from p4incast.reports.verdicts import Point, evaluate

MakeRun = Callable[..., dict[str, Any]]
PNG = b"\x89PNG\r\n\x1a\n"


def _result_set(tmp_path: Path, make_run: MakeRun, repeats: int = 2) -> ResultSet:
    rs = ResultSet(tmp_path / "exp", "demo", {"senders": [2, 4, 8]}, link_bps=1e9)
    for scheme, slow in (("droptail", 4.0), ("mark-front", 1.0)):
        for n in (2, 4, 8):
            for rep in range(repeats):
                if scheme == "droptail" and n == 8:
                    rs.add(make_run(scheme, n, rep, status="failed", error="x", rounds=[]))
                    continue
                run = make_run(scheme, n, rep, slow=slow * (1 + 0.1 * rep))
                if n == 8 and rep == 0:
                    run["depth_series"] = [[i * 1e-4, (i * 7) % 40] for i in range(50)]
                rs.add(run)
    return rs


def _is_png(path: Path) -> bool:
    return path.stat().st_size > 1000 and path.read_bytes()[:8] == PNG


def test_plot_all_writes_pngs(tmp_path: Path, make_run: MakeRun) -> None:
    rs = _result_set(tmp_path, make_run)
    paths = plots.plot_all(rs)
    names = [p.name for p in paths]
    assert names == [
        "goodput.png",
        "rto_rounds.png",
        "fct_p99.png",
        "qdepth_cdf.png",
        "qdepth_time.png",
    ]
    assert all(p.parent == rs.out_dir and _is_png(p) for p in paths)


def test_figures_are_written_with_a_palette(tmp_path: Path, make_run: MakeRun) -> None:
    """Every figure is a palette PNG (`plots.shrink_png`): at most 256 colours, the
    full-colour image's size, and fewer bytes than matplotlib's own RGBA PNG."""
    rs = _result_set(tmp_path, make_run)
    path = plots.plot_goodput(rs.aggregate(), tmp_path / "g.png", "t", rs.link_bps)
    fig = plots.goodput_figure(rs.aggregate(), "t", rs.link_bps)
    fig.tight_layout()
    full = tmp_path / "full.png"
    fig.savefig(full)
    with Image.open(path) as small, Image.open(full) as rgba:
        assert small.mode == "P" and rgba.mode == "RGBA"
        assert small.size == rgba.size
        assert len(small.getcolors(256) or []) <= 256
    assert path.stat().st_size < full.stat().st_size


def test_plot_all_without_switch_data_or_series(tmp_path: Path, make_run: MakeRun) -> None:
    rs = ResultSet(tmp_path, "bare")
    rs.add(make_run(switch=None))
    paths = plots.plot_all(rs, tmp_path / "png")
    assert [p.name for p in paths] == ["goodput.png", "rto_rounds.png", "fct_p99.png"]
    assert all(_is_png(p) for p in paths)


def test_failed_points_are_omitted(make_run: MakeRun) -> None:
    rows = results.aggregate(
        [
            make_run("droptail", 2, 0),
            make_run("droptail", 4, 0, status="failed", rounds=[]),
            make_run("droptail", 8, 0),
        ]
    )
    xs, ys, errs = plots.series(rows, "droptail", "goodput_mbps")
    assert xs == [2, 8]
    assert ys == pytest.approx([150.0, 600.0])
    assert errs is not None and len(errs[0]) == len(errs[1]) == 2  # one bar per point drawn


def test_error_bars_with_repeats(make_run: MakeRun) -> None:
    rows = results.aggregate([make_run(repeat=0), make_run(repeat=1, slow=2.0)])
    xs, ys, errs = plots.series(rows, "mark-front", "goodput_mbps")
    assert xs == [2] and ys == pytest.approx([112.5])
    # repeats 150 and 75 Mbps: half-width t(0.975, 1) * s / sqrt(2) = 12.706205 * 37.5; lo
    # clipped at 0, so the bar reaches down to 0 and up by the full half-width
    assert errs is not None
    assert errs[0] == pytest.approx([112.5]) and errs[1] == pytest.approx([12.706205 * 37.5])


def test_intervals_stop_at_what_the_metric_can_be(make_run: MakeRun) -> None:
    rows = results.aggregate([make_run(repeat=0), make_run(repeat=1, slow=2.0)])
    # the same interval (112.5 +- 476.5) under a 120 Mbit/s ceiling: the bar
    # reaches up to 120, not 589; a ratio of rounds cannot pass 1 either
    _, _, errs = plots.series(rows, "mark-front", "goodput_mbps", bounds=(0.0, 120.0))
    assert errs is not None and errs[1] == pytest.approx([7.5])
    row = {"scheme": "s", "n": 4, "status": "ok", "rto_round_ratio": 0.9}
    row |= {"rto_round_ratio_ci_lo": 0.6, "rto_round_ratio_ci_hi": 1.2}
    row |= {"rto_round_ratio_ci_n": 3, "rto_round_ratio_ci_method": "t"}
    _, _, errs = plots.series([row], "s", "rto_round_ratio", 100.0, bounds=(0.0, 100.0))
    assert errs is not None
    assert errs[0] == pytest.approx([30.0]) and errs[1] == pytest.approx([10.0])


def test_n_on_a_log_axis_when_it_spans_more_than_a_decade() -> None:
    def rows(*ns: int) -> list[dict[str, Any]]:
        return [{"scheme": "s", "n": n} for n in ns]

    assert plots.log_x(rows(1, 16, 1000))
    assert not plots.log_x(rows(8, 16, 64))  # 8x: linear
    assert not plots.log_x(rows(0, 16, 64))  # N = 0 has no log


def test_a_sweep_to_1000_senders_is_drawn_on_a_log_axis_with_the_framing_limit(
    make_run: MakeRun,
) -> None:
    """make sim's N (experiments/sim.yaml): goodput and RTO rounds against N on a log
    axis that reaches 1000, goodput under the framing limit of 1 Gbit/s with 1448-B
    segments in 1538 wire bytes: 1e9 x 1448 / 1538 = 941.5 Mbit/s."""
    ns = (1, 2, 4, 8, 16, 32, 64, 100, 200, 500, 1000)
    rows = results.aggregate([make_run(s, n, 0) for s in ("droptail", "front+rotate") for n in ns])
    for fig in (plots.goodput_figure(rows, "sim", 1e9), plots.rto_figure(rows, "sim")):
        (ax,) = fig.axes
        assert ax.get_xscale() == "log"
        assert ax.get_xlim()[1] >= 1000 and 1000 in ax.get_xticks()
    (ax,) = plots.goodput_figure(rows, "sim", 1e9).axes
    limits = [ln for ln in ax.get_lines() if str(ln.get_label()).startswith("framing limit")]
    assert len(limits) == 1
    ys = cast(Sequence[float], limits[0].get_ydata())
    assert list(ys) == pytest.approx([941.48, 941.48], abs=0.01)


def test_depth_plots_skip_when_no_data(tmp_path: Path, make_run: MakeRun) -> None:
    runs = [make_run(switch=None)]
    assert plots.plot_depth_cdf(runs, tmp_path / "cdf.png", "demo") is None
    assert plots.plot_depth_series(runs, tmp_path / "t.png", "demo") is None
    assert not list(tmp_path.iterdir())


def test_cli_redraws_from_directory(tmp_path: Path, make_run: MakeRun) -> None:
    rs = _result_set(tmp_path, make_run, repeats=1)
    out = tmp_path / "redraw"
    proc = subprocess.run(
        [sys.executable, "-m", "p4incast.reports.plots", str(rs.out_dir), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    printed = [Path(line) for line in proc.stdout.split()]
    assert len(printed) == 5 and all(p.parent == out and _is_png(p) for p in printed)


def test_cli_reports_missing_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert plots.main([str(tmp_path / "nowhere")]) == 2
    assert "no results.json" in capsys.readouterr().err


def test_depth_cdfs_sum_repeats_and_fall_back(make_run: MakeRun) -> None:
    a0, a1 = make_run("a", 8, 0), make_run("a", 8, 1)
    a0["switch"]["ports"]["2"]["hist"] = {"0": 1, "2": 1}
    a1["switch"]["ports"]["2"]["hist"] = {"4": 2}
    b4 = make_run("b", 4, 0)
    b4["switch"]["ports"]["2"]["hist"] = {"1": 1}
    runs = [a0, a1, b4, make_run("b", 8, 0, status="failed", rounds=[]), make_run("c", 8, 0)]
    runs[-1]["switch"] = None  # no histogram at all: no line
    n, lines = plots.depth_cdfs(runs)
    assert n == 8
    assert lines == [
        ("a", [(0, 0.25), (1, 0.25), (2, 0.5), (3, 0.5), (4, 1.0)]),
        ("b (N = 4)", [(0, 0.0), (1, 1.0)]),
    ]


def test_reference_figure_marks_the_points_that_decided_each_verdict(
    tmp_path: Path, make_run: MakeRun
) -> None:
    """Each verdict's deciding points are drawn on its variant's figure, labelled with
    the claim's id, on the panel of their metric (a panel added for it when the paper
    states no number of that metric)."""
    rs = _result_set(tmp_path, make_run)
    rows = rs.aggregate()
    ctx = {"axis": "n"}
    keeps = {"id": "keeps", "text": "t", "kind": "no_collapse", "scheme": "mark-front", "n_max": 8}
    fewer = {"id": "fewer", "text": "t", "kind": "ordering", "schemes": ["mark-front", "droptail"]}
    fewer |= {"metric": "rto_round_ratio", "lower": True}
    shown = [(evaluate(keeps, rows, ctx), "x"), (evaluate(fewer, rows, ctx), "x")]
    marks = reproduce.claim_marks(shown, "")
    assert {c for c, _p in marks} == {"keeps", "fewer"}
    fig = plots.reference_plot(rows, {}, "demo", tmp_path / "ref.png", 1e9, marks)
    assert _is_png(fig.path)
    assert sorted(fig.marks, key=str) == sorted(marks, key=str)  # every one drawn
    assert any(p.metric == "rto_round_ratio" for _c, p in fig.marks)  # its own panel
    # a point of a scheme the rows lack, or of a metric no panel shows, is not drawn
    stray = [("z", Point("absent", 4, "goodput_mbps", 1.0)), ("q", Point("droptail", 4, "x", 1))]
    assert plots.reference_plot(rows, {}, "demo", tmp_path / "r2.png", marks=stray).marks == ()
    assert reproduce.claim_marks(shown, "sru64k") == []  # another variant's figure


def _row(scheme: str, n: int, goodput: float, rto: float) -> dict[str, Any]:
    return {"scheme": scheme, "n": n, "status": "ok", "goodput_mbps": goodput} | {
        "rto_round_ratio": rto
    }


def test_each_scheme_breaks_where_most_of_its_rounds_first_have_an_rto() -> None:
    """A scheme breaks at the first N with an RTO in more than half its rounds
    (verdicts.FREQUENT_RTO = 0.5, the papers' incast collapse): 0.5 itself is not
    past it, 0.6 is; a later N back under it does not undo the break."""
    rows = [
        _row("droptail", 1, 900.0, 0.0),
        _row("droptail", 8, 800.0, 0.5),
        _row("droptail", 16, 300.0, 0.6),
        _row("droptail", 32, 400.0, 0.3),
        _row("front+rotate", 1, 900.0, 0.0),
        _row("front+rotate", 1000, 930.0, 0.1),
    ]
    assert plots.break_n(rows, "droptail") == 16
    assert plots.break_label(rows, "droptail") == "droptail: breaks at N = 16"
    assert plots.break_n(rows, "front+rotate") is None
    assert plots.break_label(rows, "front+rotate") == "front+rotate: holds to N = 1000"


def test_figures_draw_where_each_scheme_breaks() -> None:
    """Goodput and RTO figures of make sim's N: droptail breaks at N = 16 (RTO in
    every round from there), front+rotate never does. Each break is a dotted vertical
    line at its N in the colour of the scheme's own curve, the legend says where each
    scheme breaks or how far it holds, and the RTO figure draws the 50 % line past
    which a scheme has broken."""
    ns = (1, 2, 4, 8, 16, 32, 64, 100, 200, 500, 1000)
    rows = [_row("droptail", n, 900.0 if n < 16 else 100.0, float(n >= 16)) for n in ns]
    rows += [_row("front+rotate", n, 930.0, 0.0) for n in ns]
    for fig in (plots.goodput_figure(rows, "sim", 1e9), plots.rto_figure(rows, "sim")):
        (ax,) = fig.axes
        bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
        curves = {c.get_label(): c.lines[0].get_color() for c in bars}
        assert set(curves) == {"droptail: breaks at N = 16", "front+rotate: holds to N = 1000"}
        vertical = [
            ln for ln in ax.get_lines() if len(set(cast(Sequence[float], ln.get_xdata()))) == 1
        ]
        assert len(vertical) == 1
        assert list(cast(Sequence[float], vertical[0].get_xdata())) == [16, 16]
        assert vertical[0].get_color() == curves["droptail: breaks at N = 16"]
        assert vertical[0].get_linestyle() == ":"
        legend = ax.get_legend()
        assert legend is not None
        assert "droptail: breaks at N = 16" in [t.get_text() for t in legend.get_texts()]
    (ax,) = plots.rto_figure(rows, "sim").axes
    (line,) = [ln for ln in ax.get_lines() if str(ln.get_label()).startswith("breaks: RTO in")]
    assert list(cast(Sequence[float], line.get_ydata())) == [50.0, 50.0]
