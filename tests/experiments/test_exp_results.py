"""ResultSet on disk: results.json round trip, CSV rows, aggregation, the terminal table."""

import csv
import dataclasses
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from p4incast.experiments import metrics, results
from p4incast.experiments.results import ResultSet

MakeRun = Callable[..., dict[str, Any]]


def sweep(make_run: MakeRun) -> list[dict[str, Any]]:
    """2 schemes x N in {2, 4} x 2 repeats; droptail N=4 repeat 1 failed."""
    runs = []
    for scheme, slow in (("droptail", 4.0), ("mark-front", 1.0)):
        for n in (2, 4):
            for rep in (0, 1):
                if scheme == "droptail" and n == 4 and rep == 1:
                    runs.append(
                        make_run(scheme, n, rep, status="failed", error="timeout", rounds=[])
                    )
                else:
                    runs.append(make_run(scheme, n, rep, slow=slow * (1 + rep)))
    return runs


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_every_add_leaves_valid_files(tmp_path: Path, make_run: MakeRun) -> None:
    out = tmp_path / "exp"
    rs = ResultSet(out, "demo", {"senders": [2, 4], "dir": Path("/x")}, link_bps=1e9)
    for i, run in enumerate(sweep(make_run), start=1):
        rs.add(run)
        data = json.loads((out / "results.json").read_text())
        assert len(data["runs"]) == i
    assert sorted(p.name for p in out.iterdir()) == ["results.json", "rounds.csv", "summary.csv"]


def test_round_trip(tmp_path: Path, make_run: MakeRun) -> None:
    runs = sweep(make_run)
    rs = ResultSet(tmp_path, "demo", {"senders": [2, 4], "dir": Path("/x")}, link_bps=1e9)
    for run in runs:
        rs.add(run)
    back = results.load(tmp_path)
    assert back.runs == runs
    assert back.name == "demo"
    assert back.config == {"senders": [2, 4], "dir": "/x"}
    assert back.link_bps == 1e9
    assert results.load(tmp_path / "results.json").runs == runs
    assert back.aggregate() == rs.aggregate()


def test_rounds_csv(tmp_path: Path, make_run: MakeRun) -> None:
    rs = ResultSet(tmp_path, "demo")
    for run in sweep(make_run):
        rs.add(run)
    rows = _csv(tmp_path / "rounds.csv")
    assert list(rows[0]) == list(results.ROUND_FIELDS)
    assert len(rows) == 7 * 4  # 7 good runs x 4 rounds, the failed run has none
    first = rows[0]
    assert (first["scheme"], first["n"], first["repeat"], first["round"]) == (
        "droptail",
        "2",
        "0",
        "0",
    )
    # droptail slow=4: FCTs 20 and 40 ms in round 0
    assert float(first["fct_p50_s"]) == pytest.approx(0.030)
    assert float(first["fct_max_s"]) == pytest.approx(0.040)
    assert float(first["completion_s"]) == pytest.approx(0.040)
    assert rows[1]["rto"] == "True" and rows[1]["timeouts"] == "2"


def test_summary_csv_aggregates_repeats(tmp_path: Path, make_run: MakeRun) -> None:
    rs = ResultSet(tmp_path, "demo")
    for run in sweep(make_run):
        rs.add(run)
    rows = _csv(tmp_path / "summary.csv")
    assert len(rows) == 4
    assert [(r["scheme"], r["n"]) for r in rows] == [
        ("droptail", "2"),
        ("droptail", "4"),
        ("mark-front", "2"),
        ("mark-front", "4"),
    ]
    mf2 = rows[2]
    # repeats at slow 1 and 2: 150 and 75 Mbps mean goodput
    assert float(mf2["goodput_mbps"]) == pytest.approx(112.5)
    assert float(mf2["goodput_mbps_repeat_std"]) == pytest.approx(math.sqrt(2) * 37.5)
    assert float(mf2["rto_round_ratio"]) == pytest.approx(0.25)
    assert mf2["status"] == "ok" and mf2["ok_repeats"] == "2"
    dt4 = rows[1]
    assert dt4["status"] == "partial" and (dt4["repeats"], dt4["ok_repeats"]) == ("2", "1")
    assert float(dt4["goodput_mbps"]) == pytest.approx(150 / 4 * 2)  # N=4: twice the bytes
    assert dt4["goodput_mbps_repeat_std"] == ""  # one good repeat: no spread


def test_aggregate_all_failed_and_qdepth_max(make_run: MakeRun) -> None:
    deep = make_run(repeat=1)
    deep["switch"]["ports"]["2"]["hist"] = {"0": 1, "60": 1}
    rows = results.aggregate(
        [
            make_run(),
            deep,
            make_run("x", 8, 0, status="failed", error="boom", rounds=[]),
        ]
    )
    assert rows[0]["qdepth_max"] == 60  # the max over repeats, not the mean
    assert rows[0]["ce_marks"] == 30
    assert rows[1]["status"] == "failed" and rows[1]["goodput_mbps"] is None


def test_non_finite_numbers_become_null(tmp_path: Path, make_run: MakeRun) -> None:
    run = make_run()
    run["rounds"][0]["goodput_bps"] = math.nan
    rs = ResultSet(tmp_path, "demo", runs=[])
    rs.add(run)

    def reject(token: str) -> None:
        raise AssertionError(f"non-standard JSON {token}")

    data = json.loads((tmp_path / "results.json").read_text(), parse_constant=reject)
    assert data["runs"][0]["rounds"][0]["goodput_bps"] is None
    # the NaN round is left out of the mean: (80 + 160 + 200) / 3
    assert results.load(tmp_path).summaries()[0]["goodput_mbps"] == pytest.approx(440 / 3)


def test_failed_write_keeps_previous_file(
    tmp_path: Path, make_run: MakeRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    rs = ResultSet(tmp_path, "demo")
    rs.add(make_run())
    before = (tmp_path / "results.json").read_text()

    def crash(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        rs.add(make_run(repeat=1))
    assert (tmp_path / "results.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "results.json",
        "rounds.csv",
        "summary.csv",
    ]


def test_summary_table(make_run: MakeRun) -> None:
    text = results.summary_table(sweep(make_run), title="experiment demo")
    lines = text.splitlines()
    assert lines[0] == "experiment demo"
    header = lines[2]
    for col in ("scheme", "N", "goodput Mbps", "RTO rounds %", "FCT p99 ms", "FCT mean ms",
                "CI on", "status"):  # fmt: skip
        assert col in header
    body = lines[4:8]
    mf2 = next(ln for ln in body if ln.startswith("mark-front") and ln.split()[1] == "2")
    cells = mf2.split()
    # repeats of 150 and 75 Mbps: 112.5 +- t(0.975, 1) * 53.03 / sqrt(2) = 12.706205 * 37.5
    assert cells[2:4] == ["112.5", "±476.5"]
    # both repeats 1 RTO round in 4: no spread, so Wilson over the 8 rounds pooled (2/8)
    assert cells[4:6] == ["25", "[7,59]*"]
    assert cells[-3:] == ["2", "rep", "ok"]
    dt4 = next(ln for ln in body if ln.startswith("droptail") and ln.split()[1] == "4")
    assert dt4.endswith("4 rnd  partial 1/2")  # one good repeat: intervals from its 4 rounds
    switch_head = lines.index("switch (bottleneck port) and fairness") + 1
    for col in ("q mean", "q p95", "q max", "CE marks", "drops", "jain"):
        assert col in lines[switch_head]
    assert len(lines) == switch_head + 2 + 4
    # fixed width: the goodput column ends at the same place on every line
    end = header.index("goodput Mbps") + len("goodput Mbps")
    assert all(ln[end - 1] != " " and ln[end] == " " for ln in body)


def test_summary_table_failed_row_shows_dashes(make_run: MakeRun) -> None:
    text = results.summary_table([make_run("droptail", 64, 0, status="failed", rounds=[])])
    rows = [ln.split() for ln in text.splitlines() if ln.startswith("droptail")]
    assert rows[0][:2] == ["droptail", "64"] and rows[0][-1] == "failed"
    assert set(rows[0][2:-1]) == {"-"}
    assert rows[1][:2] == ["droptail", "64"] and set(rows[1][2:]) == {"-"}


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no results.json"):
        results.load(tmp_path)
    (tmp_path / "results.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        results.load(tmp_path)
    (tmp_path / "results.json").write_text('{"experiment": "x"}')
    with pytest.raises(ValueError, match="no 'runs' list"):
        results.load(tmp_path)


def test_summary_table_long_scheme_name_keeps_columns(make_run: MakeRun) -> None:
    name = "front+rx-newdctcp-long"
    lines = results.summary_table([make_run(name, 2, 0), make_run("a", 2, 0)]).splitlines()
    header, body = lines[0], lines[2:4]
    end = header.index("goodput Mbps") + len("goodput Mbps")
    assert body[0].startswith(name + " ")
    assert all(ln[end - 1] != " " and ln[end] == " " for ln in body)


def test_run_line(make_run: MakeRun) -> None:
    line = results.run_line(metrics.summarize(make_run()))
    assert line == (
        "mark-front N=2 rep 0: 150.0 Mbps, RTO rounds 25%, FCT p99 19.30 ms, "
        "queue max 40 pkts, CE 30, drops 5"
    )
    failed = metrics.summarize(make_run(status="failed", error="bmv2 died", rounds=[]))
    assert results.run_line(failed) == "mark-front N=2 rep 0: FAILED: bmv2 died"
    bare = metrics.summarize(make_run(switch=None))
    assert results.run_line(bare).endswith("queue max - pkts, CE -, drops -")


def test_numpy_scalars_and_dataclass_config_are_plain_json(
    tmp_path: Path, make_run: MakeRun
) -> None:
    np = pytest.importorskip("numpy")

    @dataclasses.dataclass
    class Cfg:
        name: str
        senders: tuple[int, ...]
        out: Path

    run = make_run()
    run["rounds"][0]["bytes"] = np.int64(200_000)
    run["rounds"][0]["goodput_bps"] = np.float64(160e6)
    rs = ResultSet(tmp_path, "demo", Cfg("demo", (2, 4), Path("/r")))
    rs.add(run)
    back = results.load(tmp_path)
    assert back.config == {"name": "demo", "senders": [2, 4], "out": "/r"}
    assert back.runs[0]["rounds"][0]["bytes"] == 200_000
    assert type(back.runs[0]["rounds"][0]["bytes"]) is int
    assert back.runs[0]["rounds"][0]["goodput_bps"] == 160e6


def test_a_set_knows_its_segment_size(tmp_path: Path) -> None:
    """Plots draw the framing limit of the segments the runs sent (seed 003: 1000 B)."""
    small = ResultSet(tmp_path, "s", {"transport": {"mss_bytes": 1000}}, link_bps=1e9)
    assert small.mss_bytes == 1000
    assert ResultSet(tmp_path, "d", {"senders": [2]}).mss_bytes == 1448  # the default
