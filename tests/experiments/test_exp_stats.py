"""95 % confidence intervals against hand-computed values (experiments/stats.py docstring;
which interval each metric gets: experiments/metrics.py).

Reference values: Student t quantiles as printed in every t table; the Wilson interval
of 3/10 is (0.1078, 0.6032) and of 1/4 (0.0456, 0.6994), e.g. Brown, Cai & DasGupta
(2001); batch means and sectioning worked by hand on constructed rounds.
"""

import csv
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from matplotlib.container import ErrorbarContainer

from p4incast.experiments import metrics, results, stats
from p4incast.experiments.metrics import CI_FIELDS
from p4incast.experiments.stats import Interval
from p4incast.reports import plots

MakeRun = Callable[..., dict[str, Any]]


# -- Student t quantile ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("df", "t"),
    [
        (1, 12.706205),
        (2, 4.302653),
        (3, 3.182446),
        (9, 2.262157),
        (10, 2.228139),
        (30, 2.042272),
        (31, 2.039513),  # past the table: Cornish-Fisher expansion
        (40, 2.021075),
        (60, 2.000298),
        (120, 1.979930),
        (math.inf, 1.959964),
    ],
)
def test_t975_known_quantiles(df: float, t: float) -> None:
    assert stats.t975(df) == pytest.approx(t, abs=1e-6)


def test_t975_decreases_to_z_and_rejects_bad_df() -> None:
    ts = [stats.t975(df) for df in range(1, 500)]
    assert all(a > b for a, b in zip(ts, ts[1:], strict=False))
    assert ts[-1] > stats.Z975 == pytest.approx(1.959964, abs=1e-6)
    for bad in (0, -1, 1.5, math.nan):
        with pytest.raises(ValueError):
            stats.t975(bad)


# -- Student t over repeats -----------------------------------------------------------
def test_t_interval_hand_computed() -> None:
    # 150, 120, 100: mean 123.33, s^2 = (26.67^2 + 3.33^2 + 23.33^2) / 2 = 1900/3,
    # half = t(0.975, 2) * s / sqrt(3) = 4.302653 * sqrt(1900) / 3 = 62.5166
    iv = stats.t_interval([150.0, 120.0, None, 100.0, math.nan])
    half = 4.302653 * math.sqrt(1900) / 3
    assert iv is not None and (iv.n, iv.method) == (3, "t-repeats")
    assert (iv.lo, iv.hi) == (pytest.approx(370 / 3 - half), pytest.approx(370 / 3 + half))
    assert stats.t_interval([5.0]) is None
    assert stats.t_interval([]) is None
    assert stats.t_interval([2.0, 2.0]) == Interval(2.0, 2.0, 2, "t-repeats")


# -- Wilson score ---------------------------------------------------------------------
def test_wilson_3_of_10() -> None:
    # p = 0.3, n = 10, z^2 = 3.841459: centre (0.3 + 0.192073) / 1.384146 = 0.355507,
    # half 1.959964 * sqrt(0.021 + 0.009604) / 1.384146 = 0.247715
    iv = stats.wilson_interval(3, 10)
    assert iv is not None
    assert (iv.lo, iv.hi) == (pytest.approx(0.107791, abs=1e-6), pytest.approx(0.603222, abs=1e-6))
    assert (iv.n, iv.method) == (10, "wilson-rounds")
    assert iv.lo < 0.3 < iv.hi and (iv.lo + iv.hi) / 2 > 0.3  # pulled towards 1/2


def test_wilson_ends_and_errors() -> None:
    none, every = stats.wilson_interval(0, 10), stats.wilson_interval(10, 10)
    assert none is not None and every is not None
    assert none.lo == 0.0 and none.hi == pytest.approx(3.841459 / 13.841459, abs=1e-6)
    assert every.hi == 1.0 and every.lo == pytest.approx(10 / 13.841459, abs=1e-6)
    assert stats.wilson_interval(0, 0) is None
    for bad in ((4, 3), (-1, 3), (0, -1)):
        with pytest.raises(ValueError):
            stats.wilson_interval(*bad)


# -- batch means / sectioning over the rounds of one repeat ---------------------------
def test_batches_square_root_rule() -> None:
    assert stats.batches(3) == []  # too few rounds for two batches
    assert stats.batches(4) == [range(0, 2), range(2, 4)]
    assert stats.batches(10) == [range(0, 4), range(4, 7), range(7, 10)]
    hundred = stats.batches(100)
    assert len(hundred) == 10 and {len(b) for b in hundred} == {10}
    many = stats.batches(10_000)
    assert len(many) == 30 and sum(len(b) for b in many) == 10_000
    assert [b.start for b in many[1:]] == [b.stop for b in many[:-1]]


def _rounds(goodputs_mbps: list[float], fcts_ms: list[list[float]] | None = None) -> list[Any]:
    fcts_ms = fcts_ms or [[1.0, 1.0]] * len(goodputs_mbps)
    return [
        {"round": i, "completion_s": 0.01, "bytes": 1, "goodput_bps": g * 1e6,
         "fct_s": [f / 1e3 for f in fcts], "timeouts": 0, "retrans": 0, "rto": i == 0}
        for i, (g, fcts) in enumerate(zip(goodputs_mbps, fcts_ms, strict=True))
    ]  # fmt: skip


def test_batch_means_on_a_constructed_series(make_run: MakeRun) -> None:
    # 9 rounds in 3 runs of 3 alike rounds (strongly dependent): batch means 100, 50, 80.
    series = [100.0] * 3 + [50.0] * 3 + [80.0] * 3
    s = metrics.summarize(make_run(rounds=_rounds(series)))
    point = 230 / 3
    s_b = math.sqrt(((100 - point) ** 2 + (50 - point) ** 2 + (80 - point) ** 2) / 2)
    half = 4.302653 * s_b / math.sqrt(3)  # t(0.975, k - 1 = 2)
    assert s["goodput_mbps"] == pytest.approx(point)
    assert s["goodput_mbps_ci_lo"] == pytest.approx(point - half)
    assert s["goodput_mbps_ci_hi"] == pytest.approx(point + half)
    assert (s["goodput_mbps_ci_n"], s["goodput_mbps_ci_method"]) == (3, "t-batches")
    # treating the 9 rounds as independent would claim a far narrower interval
    naive = stats.t_interval(series)
    assert naive is not None and naive.hi - naive.lo < (2 * half) / 3


def test_batch_interval_direct() -> None:
    iv = stats.batch_interval(10.0, [8.0, 12.0, None])
    # batch estimates 8 and 12: s_B = 2 sqrt 2, half = t(0.975, 1) * 2 sqrt 2 / sqrt 2
    assert iv is not None and (iv.n, iv.method) == (2, "t-batches")
    assert (iv.lo, iv.hi) == (pytest.approx(10 - 12.706205 * 2), pytest.approx(10 + 12.706205 * 2))
    assert stats.batch_interval(10.0, [8.0]) is None
    assert stats.batch_interval(None, [8.0, 12.0]) is None


def test_round_intervals_of_the_fixture_run(make_run: MakeRun) -> None:
    """4 rounds -> 2 batches of 2. FCTs (ms) per round: [5,10] [10,20] | [10,10] [8,8]."""
    s = metrics.summarize(make_run())
    t1 = 12.706205  # t(0.975, 1)
    # goodput: batches 120 and 180 Mbps, point 150; s_B = 60/sqrt 2; half = t1 * 30
    assert s["goodput_mbps_ci_lo"] == 0.0  # 150 - 381.2, cut at 0
    assert s["goodput_mbps_ci_hi"] == pytest.approx(150 + t1 * 30)
    # FCT p99 (sectioning): batch p99s 10 + 0.97 * 10 = 19.7 and 10; point 19.3
    assert s["fct_p99_ms_ci_hi"] == pytest.approx(19.3 + t1 * 9.7 / 2)
    assert (s["fct_p99_ms_ci_n"], s["fct_p99_ms_ci_method"]) == (2, "t-batches")
    # FCT mean: batches 45/4 and 36/4 ms, point 81/8
    assert s["fct_mean_ms_ci_hi"] == pytest.approx(81 / 8 + t1 * 2.25 / 2)
    # RTO rounds: 1 of 4, Wilson (0.0456, 0.6994)
    assert s["rto_round_ratio_ci_lo"] == pytest.approx(0.045587, abs=1e-6)
    assert s["rto_round_ratio_ci_hi"] == pytest.approx(0.699358, abs=1e-6)
    assert (s["rto_round_ratio_ci_n"], s["rto_round_ratio_ci_method"]) == (4, "wilson-rounds")


def test_too_few_rounds_gives_wilson_only(make_run: MakeRun) -> None:
    s = metrics.summarize(make_run(rounds=_rounds([100.0, 50.0, 80.0])))
    assert s["goodput_mbps_ci_lo"] is None and s["fct_p99_ms_ci_method"] is None
    assert s["rto_round_ratio_ci_method"] == "wilson-rounds"
    assert s["rto_round_ratio_ci_n"] == 3


def test_failed_run_has_no_interval(make_run: MakeRun) -> None:
    s = metrics.summarize(make_run(status="failed", rounds=[]))
    assert all(s[k] is None for k in CI_FIELDS)


def test_clip() -> None:
    assert metrics.clip(Interval(-0.2, 1.3, 3, "t-repeats"), "rto_round_ratio") == Interval(
        0.0, 1.0, 3, "t-repeats"
    )
    assert metrics.clip(Interval(-5.0, 9.0, 3, "t-repeats"), "goodput_mbps") == Interval(
        0.0, 9.0, 3, "t-repeats"
    )
    assert metrics.clip(None, "goodput_mbps") is None


# -- one (scheme, N) point: repeats vs rounds -----------------------------------------
def test_point_uses_repeats_when_there_are_two_or_more(make_run: MakeRun) -> None:
    runs = [make_run(repeat=r, slow=slow) for r, slow in enumerate((1.0, 1.25, 1.5))]
    (row,) = results.aggregate(runs)
    # per-repeat goodput 150, 120, 100 Mbps: as in test_t_interval_hand_computed
    half = 4.302653 * math.sqrt(1900) / 3
    assert row["goodput_mbps"] == pytest.approx(370 / 3)
    assert row["goodput_mbps_ci_lo"] == pytest.approx(370 / 3 - half)
    assert row["goodput_mbps_ci_hi"] == pytest.approx(370 / 3 + half)
    assert (row["goodput_mbps_ci_n"], row["goodput_mbps_ci_method"]) == (3, "t-repeats")
    # every repeat has RTO rounds 1/4: no spread, so Wilson over the 12 rounds pooled (3/12)
    pooled = stats.wilson_interval(3, 12)
    assert pooled is not None
    assert row["rto_round_ratio_ci_lo"] == pytest.approx(pooled.lo)
    assert (row["rto_round_ratio_ci_n"], row["rto_round_ratio_ci_method"]) == (
        12,
        "wilson-rounds",
    )
    assert row["rounds"] == 12


def test_point_with_spread_rto_uses_t(make_run: MakeRun) -> None:
    calm = make_run(repeat=1)
    for r in calm["rounds"]:
        r["rto"] = False  # RTO ratios 0.25 and 0
    (row,) = results.aggregate([make_run(repeat=0), calm])
    assert row["rto_round_ratio_ci_method"] == "t-repeats"
    assert row["rto_round_ratio_ci_lo"] == 0.0  # 0.125 - 12.706 * 0.125, cut at 0
    assert row["rto_round_ratio_ci_hi"] == 1.0  # cut at 1


def test_point_with_one_good_repeat_uses_its_rounds(make_run: MakeRun) -> None:
    good = make_run(repeat=0)
    (row,) = results.aggregate([good, make_run(repeat=1, status="failed", rounds=[])])
    s = metrics.summarize(good)
    assert row["status"] == "partial" and row["rounds"] == 4
    for key in CI_FIELDS:
        assert row[key] == s[key], key
    assert row["goodput_mbps_ci_method"] == "t-batches"


def test_summary_csv_keeps_old_columns_and_adds_intervals(
    tmp_path: Path, make_run: MakeRun
) -> None:
    rs = results.ResultSet(tmp_path, "demo")
    rs.add(make_run())
    with (tmp_path / "summary.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        fields, (row,) = list(reader.fieldnames or []), list(reader)
    old = ["scheme", "n", "repeats", "ok_repeats", "status", "goodput_mbps", "goodput_std_mbps",
           "rto_round_ratio", "timeouts", "retrans", "fct_p50_ms", "fct_p99_ms", "qdepth_p50",
           "qdepth_p95", "qdepth_max", "ce_marks", "drops", "jain", "goodput_mbps_repeat_std",
           "rto_round_ratio_repeat_std", "fct_p99_ms_repeat_std"]  # fmt: skip
    assert [f for f in fields if f in old] == old  # same names, same order
    assert set(CI_FIELDS) | {"fct_mean_ms", "rounds"} <= set(fields)
    assert float(row["goodput_mbps_ci_hi"]) == pytest.approx(150 + 12.706205 * 30)
    assert row["goodput_mbps_ci_method"] == "t-batches" and row["goodput_mbps_ci_n"] == "2"
    assert metrics.interval_of(row, "goodput_mbps") == metrics.interval_of(
        rs.aggregate()[0], "goodput_mbps"
    )


# -- the printed table ----------------------------------------------------------------
def test_single_repeat_table_prints_intervals(make_run: MakeRun) -> None:
    text = results.summary_table([make_run("mark-front", 2, 0)], title="experiment demo")
    row = next(ln for ln in text.splitlines() if ln.startswith("mark-front")).split()
    # goodput 150 +- t(0.975, 1) * 30 (two batches); RTO 1/4 by Wilson, marked *
    assert row[2:4] == ["150.0", f"±{12.706205 * 30:.1f}"]
    assert row[4:6] == ["25", "[5,70]*"]
    assert row[-3:] == ["4", "rnd", "ok"]
    assert "* Wilson treats rounds as independent" in text  # the legend says what * means


def test_table_of_the_default_experiment_fits_100_columns(make_run: MakeRun) -> None:
    runs = [
        make_run(scheme, n, rep, slow=1 + rep / 10)
        for scheme in ("droptail", "mark-tail", "mark-front", "front+rx")
        for n in (1, 2, 4, 8, 16, 32, 48, 64)
        for rep in (0, 1)
    ]
    runs.append(make_run("front+rx", 64, 2, status="failed", rounds=[]))
    lines = results.summary_table(runs, title="experiment default").splitlines()
    assert max(len(ln) for ln in lines) <= 100
    rows = [ln for ln in lines if " ±" in ln]
    assert len(rows) == 4 * 8 and all(ln.count(" ±") == 3 for ln in rows)
    assert all(ln.split()[-3:] == ["2", "rep", "ok"] for ln in rows[:-1])
    assert rows[-1].endswith("2 rep  partial 2/3")


# -- plots ----------------------------------------------------------------------------
def test_plots_draw_interval_error_bars(make_run: MakeRun) -> None:
    rows = results.aggregate([make_run("a", n, 0) for n in (2, 4)] + [make_run("b", 2, 0)])
    xs, ys, yerr = plots.series(rows, "a", "rto_round_ratio", 100.0)
    assert xs == [2, 4] and ys == pytest.approx([25.0, 25.0])
    assert yerr is not None
    assert yerr[0] == pytest.approx([25 - 4.5587] * 2, abs=1e-3)  # Wilson 1/4, in %
    assert yerr[1] == pytest.approx([69.9358 - 25] * 2, abs=1e-3)
    fig, ax = plots._figure()
    plots._per_scheme(ax, rows, "goodput_mbps")
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert [c.get_label() for c in bars] == ["a", "b"]
    assert all(c.has_yerr for c in bars)
    # schemes at the same N are nudged apart so their bars do not overlap
    xa, xb = (cast("list[float]", c.lines[0].get_xdata())[0] for c in bars)
    assert xa < 2 < xb and xb - xa < 0.1


def test_point_without_interval_has_no_bar(make_run: MakeRun) -> None:
    short = make_run(rounds=_rounds([100.0, 50.0, 80.0]))  # 3 rounds: no batch interval
    rows = results.aggregate([short])
    assert plots.series(rows, "mark-front", "goodput_mbps")[2] is None
    _, _, yerr = plots.series(rows + results.aggregate([make_run(n=4)]), "mark-front", "fct_p99_ms")
    assert yerr is not None and math.isnan(yerr[0][0]) and not math.isnan(yerr[0][1])
