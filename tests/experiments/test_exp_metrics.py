"""Per-run metrics on hand-built data (percentiles, Jain, RTO deltas, summarize)."""

import copy
import math
from collections.abc import Callable
from typing import Any

import pytest

from p4incast.experiments import metrics, stats
from p4incast.experiments.metrics import CI_FIELDS, SUMMARY_METRICS

MakeRun = Callable[..., dict[str, Any]]


# -- percentile -----------------------------------------------------------------------
def test_percentile_linear_interpolation() -> None:
    xs = [4.0, 1.0, 3.0, 2.0]
    assert stats.percentile(xs, 0) == 1.0
    assert stats.percentile(xs, 25) == pytest.approx(1.75)
    assert stats.percentile(xs, 50) == pytest.approx(2.5)
    assert stats.percentile(xs, 100) == 4.0
    assert stats.percentile([7.0], 99) == 7.0


def test_percentile_edge_cases() -> None:
    assert stats.percentile([], 50) is None
    assert stats.percentile([None, math.nan], 50) is None
    assert stats.percentile([1.0, None, math.nan, 3.0], 50) == 2.0
    with pytest.raises(ValueError):
        stats.percentile([1.0], 101)
    with pytest.raises(ValueError):
        stats.percentile([1.0], -1)


# -- jain ---------------------------------------------------------------------------
def test_jain_index() -> None:
    assert metrics.jain([5.0, 5.0, 5.0, 5.0]) == pytest.approx(1.0)
    assert metrics.jain([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)  # 1/n: one flow has all
    assert metrics.jain([200.0, 100.0]) == pytest.approx(0.9)


def test_jain_edge_cases() -> None:
    assert metrics.jain([]) is None
    assert metrics.jain([0.0, 0.0]) is None
    assert metrics.jain([3.0, None, math.nan]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        metrics.jain([1.0, -1.0])


# -- goodput, framing, timeouts -------------------------------------------------------
def test_goodput_and_framing_limit() -> None:
    assert metrics.goodput_bps(125_000, 1.0) == pytest.approx(1e6)
    assert metrics.goodput_bps(0, 0.5) == 0.0
    with pytest.raises(ValueError):
        metrics.goodput_bps(1000, 0)
    with pytest.raises(ValueError):
        metrics.goodput_bps(-1, 1)
    assert metrics.framing_limit_bps(1e9) == pytest.approx(941.482e6, rel=1e-6)
    assert metrics.framing_limit_bps(1e9, mss=1460, wire=1538) == pytest.approx(949.285e6, rel=1e-6)
    # seed 003's 1000-B segments: 1000 + 52 (IP, TCP, timestamps) + 14 + 24 = 1090 on the wire
    assert metrics.framing_limit_bps(1e9, mss=1000) == pytest.approx(1e9 * 1000 / 1090, rel=1e-9)
    with pytest.raises(ValueError):
        metrics.framing_limit_bps(0)


def test_round_ceiling_is_the_framing_limit_after_one_idle_rtt() -> None:
    """One incast round on the testbed (4000 pkt/s of 1514-byte frames, a
    32 KB response, 0.67 ms base RTT) cannot reach 0.90 of the framing limit
    with one sender: its 5.8 ms of data come after an RTT of idle link."""
    link = 4000 * 1538 * 8
    limit = metrics.framing_limit_bps(link)
    t = 32768 * 8 / limit
    assert metrics.round_ceiling_bps(32768, link, 0.0) == pytest.approx(limit)
    assert metrics.round_ceiling_bps(32768, link, t) == pytest.approx(limit / 2)
    one = metrics.round_ceiling_bps(32768, link, 0.67e-3) / limit
    assert 0.88 < one < 0.90
    assert metrics.round_ceiling_bps(64 * 32768, link, 0.67e-3) / limit > 0.99


def test_timeouts_delta() -> None:
    before = {"h1": 3, "h2": 5, "h3": 0}
    after = {"h1": 4, "h2": 9, "h3": 0}
    assert metrics.timeouts_delta(before, after) == 5
    assert metrics.timeouts_delta({}, {}) == 0
    assert metrics.timeouts_delta(before, before) == 0


def test_timeouts_delta_errors() -> None:
    with pytest.raises(ValueError, match="went backwards"):
        metrics.timeouts_delta({"h1": 4}, {"h1": 3})
    with pytest.raises(ValueError, match="namespaces differ"):
        metrics.timeouts_delta({"h1": 4}, {"h1": 5, "h2": 0})


# -- histograms -----------------------------------------------------------------------
def test_hist_dict_and_list_agree() -> None:
    as_list = [0] * 41
    as_list[0], as_list[10], as_list[40] = 50, 45, 5
    as_dict = {"0": 50, "10": 45, "40": 5}
    for h in (as_list, as_dict):
        assert metrics.hist_percentile(h, 50) == 0
        assert metrics.hist_percentile(h, 51) == 10
        assert metrics.hist_percentile(h, 95) == 10
        assert metrics.hist_percentile(h, 96) == 40
        assert metrics.hist_max(h) == 40
    assert metrics.hist_counts(as_dict) == as_list


def test_hist_edge_cases() -> None:
    assert metrics.hist_percentile({}, 50) is None
    assert metrics.hist_max({}) is None
    assert metrics.hist_max([0, 0, 0]) is None
    assert metrics.hist_max({">=127": 3, "5": 1}) == 127  # the open last bucket
    assert metrics.hist_cdf({}) == []
    assert metrics.hist_cdf({"1": 1, "3": 3}) == [(0, 0.0), (1, 0.25), (2, 0.25), (3, 1.0)]
    with pytest.raises(ValueError):
        metrics.hist_counts({"deep": 1})
    with pytest.raises(ValueError):
        metrics.hist_counts({"-1": 1})
    with pytest.raises(ValueError):
        metrics.hist_percentile({"1": 1}, 120)


# -- summarize ------------------------------------------------------------------------
def test_summarize_every_field(make_run: MakeRun) -> None:
    s = metrics.summarize(make_run())
    expected = {
        "scheme": "mark-front",
        "n": 2,
        "repeat": 0,
        "engine": "sim",
        "status": "ok",
        "error": None,
        "rounds": 4,
        "base_rtt_ms": 0.1,
        "wall_s": 1.5,
        "goodput_mbps": 150.0,  # (160 + 80 + 160 + 200) / 4
        "goodput_std_mbps": math.sqrt(7600 / 3),  # deviations 10, -70, 10, 50
        "rto_round_ratio": 0.25,
        "timeouts": 2,
        "retrans": 6,
        # pooled FCTs sorted: 5 8 8 10 10 10 10 20 ms; p99 at rank 6.93, p1 at 0.07
        "fct_p1_ms": 5.0 + 0.07 * 3.0,
        "fct_p50_ms": 10.0,
        "fct_p99_ms": 10.0 + 0.93 * 10.0,
        "fct_spread_ms": (10.0 + 0.93 * 10.0) - (5.0 + 0.07 * 3.0),  # p99 - p1
        "fct_mean_ms": 81 / 8,
        "fct_max_ms": 12.0,  # each round's slowest flow: 10, 20, 10, 8 ms
        "qdepth_p50": 0,
        "qdepth_p95": 10,
        "qdepth_max": 40,
        "qdepth_mean": None,  # the port has no mean_depth (the testbed records none)
        "ce_marks": 30,
        "drops": 5,  # 4 tail + 1 Not-ECT, bottleneck port only
        "jain": 0.95,  # rounds: 0.9, 0.9, 1, 1
    }
    assert set(s) == set(expected) | set(CI_FIELDS)  # intervals: test_exp_stats.py
    for key, want in expected.items():
        if isinstance(want, float):
            assert s[key] == pytest.approx(want), key
        else:
            assert s[key] == want, key


def test_summarize_reads_the_time_averaged_depth(make_run: MakeRun) -> None:
    run = copy.deepcopy(make_run())
    run["switch"]["ports"]["2"]["mean_depth"] = 3.25
    assert metrics.summarize(run)["qdepth_mean"] == 3.25


def test_summarize_failed_run_has_no_metrics(make_run: MakeRun) -> None:
    run = make_run(status="failed", error="bmv2 did not start", rounds=[])
    s = metrics.summarize(run)
    assert s["status"] == "failed"
    assert s["error"] == "bmv2 did not start"
    assert (s["scheme"], s["n"], s["repeat"], s["rounds"]) == ("mark-front", 2, 0, 0)
    assert all(s[m] is None for m in SUMMARY_METRICS)


def test_summarize_failed_run_keeps_no_partial_numbers(make_run: MakeRun) -> None:
    s = metrics.summarize(make_run(status="failed", error=None))  # rounds present, still failed
    assert s["status"] == "failed" and s["error"] == "status 'failed'"
    assert s["goodput_mbps"] is None


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda r: r["rounds"][1].pop("goodput_bps"), "malformed run: KeyError"),
        (lambda r: r["rounds"][0].update(bytes="lots"), "malformed run: TypeError"),
        (lambda r: r["switch"]["ports"]["2"].update(hist={"deep": 3}), "malformed run"),
        (lambda r: r.update(rounds=[]), "no rounds recorded"),
    ],
)
def test_summarize_malformed_never_raises(mutate: Any, reason: str, make_run: MakeRun) -> None:
    run = copy.deepcopy(make_run())
    mutate(run)
    s = metrics.summarize(run)
    assert s["status"] == "failed"
    assert s["error"].startswith(reason)
    assert all(s[m] is None for m in SUMMARY_METRICS + CI_FIELDS)


def test_summarize_not_a_dict() -> None:
    # None on purpose: a run record that is not a mapping must come back "failed".
    s = metrics.summarize(None)  # pyright: ignore[reportArgumentType]
    assert s["status"] == "failed" and "not a dict" in s["error"]


def test_summarize_without_switch_and_single_round(make_run: MakeRun) -> None:
    run = make_run(switch=None)
    run["rounds"] = run["rounds"][:1]
    s = metrics.summarize(run)
    assert s["status"] == "ok"
    assert s["goodput_mbps"] == pytest.approx(160.0)
    assert s["goodput_std_mbps"] is None  # needs two rounds
    assert s["rto_round_ratio"] == 0.0
    assert s["jain"] == pytest.approx(0.9)
    for key in ("qdepth_p50", "qdepth_p95", "qdepth_max", "ce_marks", "drops"):
        assert s[key] is None, key


def test_summarize_rto_falls_back_to_timeouts(make_run: MakeRun) -> None:
    run = make_run()
    for r in run["rounds"]:
        del r["rto"]
    assert metrics.summarize(run)["rto_round_ratio"] == 0.25
