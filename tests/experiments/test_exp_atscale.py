"""The at-scale scenario behind the shared machinery (issue 29, item 1): its
schemes go through the incast rule for K (model.scheme.check_scheme on the
fabric's switch port), its claims through verdicts.evaluate, its folders through
results.load and the runner's resume — no simulator needed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from p4incast.experiments import (
    atscale,
    atscale_summary,
    config,
    results,
    runner,
)
from p4incast.model.wire import QUEUED_FRAME_BYTES
from p4incast.reports import reproduce, scenario_report, verdicts
from p4incast.reports.verdicts import DIVERGES, HOLDS, INCONCLUSIVE, NO_DATA, evaluate

PRESET = reproduce.PAPERS / "rcc-at-scale.yaml"
RUN = [sys.executable, "-m", "p4incast.reports.run_cli"]  # what the p4incast-run script calls
# At scale the context is the axis alone: no experiment needed.
CTX = scenario_report.REPORTS[atscale.SCENARIO].claim_context(None)


def raw_preset(**schemes: Any) -> dict[str, Any]:
    raw = config.read_yaml(PRESET)
    raw["schemes"] = [{"name": "tcp", "ecn": "off", "cc": "reno"}, {"name": "x", **schemes}]
    raw["paper"]["claims"] = []
    return raw


# -- every point through check_scheme ----------------------------------------------


def test_k_at_the_fabrics_buffer_in_frames_is_refused_with_one_message() -> None:
    frames = 121120 // QUEUED_FRAME_BYTES  # the preset's buffer: 80 full frames
    assert frames == 80
    ok = atscale.parse(raw_preset(ecn="tail", k=frames - 1, cc="dctcp"))
    assert ok.schemes[1].k == 79
    for k in (frames, frames + 1, 500):
        with pytest.raises(config.ExperimentError) as err:
            atscale.parse(raw_preset(ecn="tail", k=k, cc="dctcp"))
        assert str(err.value) == (
            f"scheme x (sim: 121120 B of buffer = 80 full frames): k={k} packets is not "
            "below the queue (80 packets): nothing would ever be marked"
        )


@pytest.mark.parametrize(
    ("scheme", "words"),
    [
        ({"ecn": "off", "cc": "vegas"}, "cc: 'vegas' is not one of"),
        ({"ecn": "off", "cc": "reno", "agent": "rcc", "rotate": True}, "rotate needs agent"),
        ({"ecn": "off", "k": 5, "cc": "reno"}, "k=5 given but ecn is off"),
        ({"ecn": "off", "cc": "reno", "batching": True}, "the at-scale traffic has none"),
    ],
)
def test_the_incast_scheme_rules_apply_at_scale(scheme: dict[str, Any], words: str) -> None:
    with pytest.raises(config.ExperimentError, match=words):
        atscale.parse(raw_preset(**scheme))


def test_cli_refuses_k_at_the_buffer_before_anything_runs(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(PRESET.read_text().replace("ecn: tail, k: 40", "ecn: tail, k: 80"))
    cmd = [*RUN, str(bad), "--out", str(tmp_path / "o")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    (line,) = r.stderr.splitlines()
    assert "scheme dctcp (sim: 121120 B of buffer = 80 full frames): k=80 packets" in line
    assert not (tmp_path / "o").exists()


def test_a_flag_of_the_other_scenario_is_refused(tmp_path: Path) -> None:
    cmd = [*RUN, str(PRESET), "--senders", "4", "--check"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.splitlines() == ["p4incast-run: --senders: not a flag of at-scale presets"]


# -- one claims vocabulary on at-scale rows ------------------------------------------


def record(scheme: str, load: float, tor: int, p99: float, repeat: int = 0) -> dict[str, Any]:
    return {
        "scheme": scheme, "load": load, "repeat": repeat, "status": "ok", "engine": "sim",
        "fct_ms": [1.0] * 99 + [p99], "offered_load": load, "long_mbps": [400.0],
        "drops": {"tor": tor, "root": 0}, "short_timeouts": 0, "wall_s": 1.0,
    }  # fmt: skip


ROWS = atscale_summary.summarize(
    [record("rcc", 0.3, 0, 5.0), record("rcc", 0.6, 4, 6.0), record("rcc", 0.9, 9, 7.0)]
    + [record("tcp", x, 50, 30.0) for x in (0.3, 0.6, 0.9)]
)


def claim(kind: str, **kw: Any) -> dict[str, Any]:
    return {"id": "c", "text": "t", "kind": kind, **kw}


def test_drops_from_on_the_load_axis() -> None:
    v = evaluate(claim("drops_from", scheme="rcc", load=0.6), ROWS, CTX)
    assert (v.verdict, v.ours) == (HOLDS, "30%: 0, 60%: 4, 90%: 9")
    assert evaluate(claim("drops_from", scheme="rcc", load=0.9), ROWS, CTX).verdict == DIVERGES
    # the onset is at the paper's load itself: none run there is no data
    assert evaluate(claim("drops_from", scheme="rcc", load=0.2), ROWS, CTX).verdict == NO_DATA
    assert evaluate(claim("drops_from", scheme="rcc", load=0.3), ROWS, CTX).verdict == INCONCLUSIVE
    assert evaluate(claim("drops_from", scheme="dctcp", load=0.6), ROWS, CTX).verdict == NO_DATA


def test_ordering_and_limits_on_the_load_axis() -> None:
    order = claim("ordering", schemes=["rcc", "tcp"], metric="fct_p99_ms", lower=True)
    v = evaluate(order, ROWS, CTX)
    # one repeat: the p99's order-statistics interval has no upper end from so few
    # flows, so the order cannot show it is real (verdicts.ORDERING_RULE)
    assert v.verdict == INCONCLUSIVE and v.ours.startswith("mean over load: rcc ")
    assert "no interval" in v.ours
    every = evaluate({**order, "every": True, "schemes": ["tcp", "rcc"]}, ROWS, CTX)
    assert every.verdict == DIVERGES and every.ours.count("✗") == 3
    assert every.ours.startswith("30%: ")
    under = claim("at_most", scheme="rcc", metric="drops", value=5, load_max=0.6)
    assert evaluate(under, ROWS, CTX).verdict == HOLDS
    over = evaluate({**under, "load_max": 0.9}, ROWS, CTX)
    assert over.verdict == DIVERGES and over.ours == "90%: 9 (bound <= 5)"  # drops: exact


def test_preset_claims_are_checked_against_what_at_scale_measures() -> None:
    raw = config.read_yaml(PRESET)
    for bad, words in [
        (claim("collapse_n", scheme="tcp", lo=1, hi=5, span=5), "is an incast claim"),
        (claim("at_least", scheme="tcp", value=1), "metric None is not one of"),
        (claim("drops_from", scheme="nope", load=0.5), "not among the schemes"),
        (claim("drops_from", scheme="tcp"), "needs load"),
        (claim("drops_from", scheme="tcp", load=1.5), "must be a fraction"),
    ]:
        raw["paper"]["claims"] = [bad]
        with pytest.raises(config.ExperimentError, match=words):
            atscale.parse(raw)


def test_the_claims_table_is_the_shared_one_and_report_diff_reads_it(tmp_path: Path) -> None:
    exp = atscale.load(PRESET, {"schemes": ["tcp", "rcc"], "loads": [0.3, 0.6, 0.9]})
    rs = atscale.AT_SCALE.new_set(exp, tmp_path / "rcc-at-scale")
    for r in [record("rcc", 0.3, 0, 5.0), record("rcc", 0.6, 4, 6.0)]:
        rs.add(r)
    text = reproduce.report_section(PRESET, [exp], [rs], tmp_path)
    row = reproduce.report_diff.parse_report(text)[0]  # the preset's first claim
    assert (row.preset, row.claim, row.ours, row.verdict) == (
        "rcc-at-scale",
        "rcc-drops-from-60",
        "30%: 0, 60%: 4",
        "holds",
    )
    assert verdicts.table([]) == [
        "| claim | paper | ours (95 % CI) | verdict |",
        "|---|---|---|---|",
    ]


# -- one results folder, one resume ---------------------------------------------------


def test_a_folder_of_the_old_at_scale_runner_loads_and_resumes(tmp_path: Path) -> None:
    exp = atscale.load(PRESET, {"schemes": ["rcc"], "loads": [0.3], "repeats": 1})
    old = {"scenario": "at-scale", "name": exp.name, "provenance": None}
    old |= {"settings": exp.as_dict(), "runs": [record("rcc", 0.3, 0, 5.0)]}
    (tmp_path / "results.json").write_text(json.dumps(old))
    rs = results.load(tmp_path, atscale_summary.AtScaleResultSet)
    assert rs.name == exp.name and rs.config == exp.as_dict()
    assert rs.aggregate()[0]["drops"] == 0
    sets = runner.resume_sets([exp], atscale.ENGINE, [tmp_path])
    assert len(sets[0].runs) == 1 and runner.pending([exp], [tmp_path], sets) == []
    bigger = atscale.load(PRESET, {"schemes": ["rcc"], "loads": [0.3, 0.6], "repeats": 1})
    sets = runner.resume_sets([bigger], atscale.ENGINE, [tmp_path])
    assert [j.point.load for j in runner.pending([bigger], [tmp_path], sets)] == [0.6]
    other = atscale.load(PRESET, {"schemes": ["rcc"], "loads": [0.3], "tors": 3})
    with pytest.raises(config.ExperimentError, match="fabric.tors: 40 there vs 3 now"):
        runner.resume_sets([other], atscale.ENGINE, [tmp_path])


def test_drops_per_aggregator_queue_are_a_runs_aggregator_port_drops_over_aggregators() -> None:
    runs = [record("rcc", 0.6, 9, 6.0, repeat=r) for r in (0, 1)]
    for r, agg in zip(runs, (10, 30), strict=True):
        r["drops"]["aggregator_ports"] = agg
        r["aggregators"] = [1, 2, 3, 4, 5]
    (row,) = atscale_summary.summarize(runs)
    assert row["drops_agg_queue"] == 4.0  # (10 / 5 + 30 / 5) / 2
    (old,) = atscale_summary.summarize([record("rcc", 0.6, 9, 6.0)])
    assert old["drops_agg_queue"] is None  # a record without aggregator_ports


def test_arrival_means_are_run_as_their_loads() -> None:
    raw = config.read_yaml(PRESET)
    del raw["loads"]
    raw["arrival_means_us"] = [400, 800]
    exp = atscale.parse(raw)
    # 5 aggregators, 50 KB mean, 1 Gbit/s: 400 µs apart is 400 kbit / 2 ms = 20 %
    assert exp.loads == pytest.approx((0.2, 0.1))
    for bad, words in [
        ({"loads": [0.5]}, "not both"),
        ({"arrival_means_us": []}, "non-empty list of inter-arrival means"),
        ({"arrival_means_us": [50]}, "160% of each aggregator's link"),
        ({"arrival_means_us": [-1]}, "must be a number of µs > 0"),
    ]:
        with pytest.raises(config.ExperimentError, match=words):
            atscale.parse({**raw, **bad})
    del raw["arrival_means_us"]
    with pytest.raises(config.ExperimentError, match="non-empty list of fractions"):
        atscale.parse(raw)
    assert atscale.overridden({**raw, "arrival_means_us": [400]}, {"loads": [0.3]})["loads"] == [
        0.3
    ]


def test_long_flows_lowest_median_highest_and_range_per_run() -> None:
    """RCC Fig. 8(b) plots the five background flows' lowest, median and highest
    throughput. By hand, two repeats: (100, 300, 350, 400, 500) and (200, 250, 300,
    450, 600) give lowest 150, median (350 + 300) / 2 = 325, highest 550, range
    (400 + 400) / 2 = 400, each with the repeats' t interval."""
    runs = [record("rcc", 0.6, 0, 6.0, repeat=r) for r in (0, 1)]
    runs[0]["long_mbps"] = [350.0, 100.0, 500.0, 300.0, 400.0]  # any order
    runs[1]["long_mbps"] = [200.0, 250.0, 300.0, 450.0, 600.0]
    (row,) = atscale_summary.summarize(runs)
    got = [row[f"long_{k}_mbps"] for k in ("min", "p50", "max", "range")]
    assert got == [150.0, 325.0, 550.0, 400.0]
    assert row["long_range_mbps_ci_lo"] == row["long_range_mbps_ci_hi"] == 400.0  # no spread
    assert row["long_min_mbps_ci_lo"] < 150.0 < row["long_min_mbps_ci_hi"]
    (one,) = atscale_summary.summarize(runs[:1])
    assert one["long_range_mbps"] == 400.0 and one["long_range_mbps_ci_lo"] is None
