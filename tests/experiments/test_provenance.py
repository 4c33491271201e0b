"""Every results folder records where it came from (issue 28): the commit, the
engine's versions and the machine, kept across --resume and printed by every report."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from run_records import fake_record

from p4incast.engines.base import ENGINES
from p4incast.experiments import config, provenance, results, runner, scenario
from p4incast.experiments.executors import Executor, Job, OnResult, OnStart
from p4incast.reports import reproduce
from p4incast.sim import native

MakeRun = Callable[..., dict[str, Any]]
HEX40 = re.compile(r"[0-9a-f]{40}")


def test_capture_in_this_checkout_names_its_commit() -> None:
    prov = provenance.capture("sim")
    assert HEX40.fullmatch(prov["commit"]), prov
    assert isinstance(prov["dirty"], bool)
    assert prov["engine"] == "sim"
    assert prov["versions"]["python"] and "kernel" in prov["versions"]
    assert "ns3" in prov["versions"] and "simple_switch_grpc" not in prov["versions"]
    assert prov["cpus"] is None or prov["cpus"] >= 1
    assert prov["loadavg"] is None or len(prov["loadavg"]) == 3
    json.dumps(prov, allow_nan=False)  # plain JSON
    line = provenance.line(prov)
    assert line.startswith(f"provenance: commit {prov['commit'][:12]}") and "\n" not in line


def test_bmv2_capture_names_the_binary_or_none() -> None:
    v = provenance.capture("bmv2")["versions"]
    assert "ns3" not in v and "simple_switch_grpc" in v
    if v["simple_switch_grpc_path"] is None:  # none installed: no version either
        assert v["simple_switch_grpc"] is None


def test_capture_outside_a_checkout_gives_none(tmp_path: Path) -> None:
    """A folder that is not a checkout (even one inside a checkout's tree) and one
    that does not exist: no commit, no error."""
    for root in (tmp_path, tmp_path / "missing", provenance.REPO / "experiments"):
        prov = provenance.capture("sim", repo_root=root)
        assert prov["commit"] is None and prov["dirty"] is None, root
        assert prov["versions"]["python"]
    assert "commit ?" in provenance.line(provenance.capture("sim", repo_root=tmp_path))


def test_capture_without_git_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    prov = provenance.capture("bmv2")
    assert prov["commit"] is None and prov["dirty"] is None


def test_result_set_round_trip_keeps_provenance(tmp_path: Path, make_run: MakeRun) -> None:
    rs = results.ResultSet(tmp_path, "demo", {"x": 1})
    rs.start(fake_record("a" * 40, dirty=True))
    rs.add(make_run("droptail", 2, 0))
    data = json.loads((tmp_path / results.RESULTS_JSON).read_text())
    assert data["provenance"]["commit"] == "a" * 40
    back = results.load(tmp_path)
    assert back.provenance == rs.provenance == data["provenance"]
    table = back.summary_table()
    assert f"provenance: commit {'a' * 12}+dirty, sim (ns3 3.44.post0)" in table
    assert "8 cores, load 0.50/0.25/0.12" in table
    # a folder written before provenance was kept loads, and says so
    del data["provenance"]
    (tmp_path / results.RESULTS_JSON).write_text(json.dumps(data))
    old = results.load(tmp_path)
    assert old.provenance is None and "provenance: not recorded" in old.summary_table()


class FakeExecutor(Executor):
    """Finishes the jobs whose N is in `only` (all when None) with a hand-built run."""

    def __init__(self, make_run: MakeRun, only: set[int] | None = None) -> None:
        self.make_run, self.only = make_run, only
        self.ran: list[tuple[str, int, int]] = []

    def run(
        self, jobs: Sequence[Job], on_result: OnResult, on_start: OnStart | None = None
    ) -> None:
        for job in jobs:
            p = job.point
            if self.only is None or p.n in self.only:
                self.ran.append(scenario.INCAST.point_key(p))
                on_result(job, self.make_run(p.scheme.name, p.n, p.repeat))


def test_resumed_folder_keeps_first_provenance_and_records_the_second(
    tmp_path: Path, make_run: MakeRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    exp = config.parse(
        {"name": "t", "engine": "sim", "senders": [2, 4], "app": {"rounds": 4},
         "schemes": [{"name": "tcp", "ecn": "off", "cc": "reno"}]}
    )  # fmt: skip
    engine = ENGINES["sim"]
    records = iter([fake_record("a" * 40), fake_record("b" * 40, dirty=True)])
    monkeypatch.setattr(runner.provenance, "capture", lambda name: next(records))
    first = FakeExecutor(make_run, only={2})  # "interrupted" after N=2
    runner.run_experiments([exp], engine, [tmp_path], 1, executor=first)
    prov = results.load(tmp_path).provenance
    assert prov is not None and prov["commit"] == "a" * 40
    assert "resumed" not in prov

    sets = runner.resume_sets([exp], engine, [tmp_path])
    second = FakeExecutor(make_run)
    runner.run_experiments([exp], engine, [tmp_path], 1, executor=second, sets=sets)
    assert second.ran == [("tcp", 4, 0)]
    prov = results.load(tmp_path).provenance
    assert prov is not None
    assert prov["commit"] == "a" * 40 and prov["dirty"] is False
    assert [r["commit"] for r in prov["resumed"]] == ["b" * 40]
    assert prov["resumed"][0]["dirty"] is True and "resumed" not in prov["resumed"][0]
    assert provenance.commits(prov) == ["a" * 40, "b" * 40 + "+dirty"]
    line = provenance.line(prov)
    assert line.count("commit ") == 2 and f"; resumed: commit {'b' * 12}+dirty" in line


def test_resuming_a_folder_without_provenance_does_not_claim_it() -> None:
    new = fake_record("c" * 40)
    assert provenance.note_start(None, new, kept_runs=0) == new
    prov = provenance.note_start(None, new, kept_runs=3)
    assert prov["commit"] is None and prov["note"] == provenance.NOT_RECORDED
    assert prov["resumed"] == [new]
    assert provenance.commits(prov) == ["?", "c" * 40]
    assert provenance.line(prov).startswith("provenance: first runs not recorded; resumed:")


def test_report_names_the_commits(tmp_path: Path, make_run: MakeRun) -> None:
    """REPORT.md rebuilt (--report-only) from a hand-made results folder: its header
    and every table carry the commit; the second variant was resumed on another."""
    ok, why = native.available()
    if not ok:
        pytest.skip(f"reproduce needs the simulator engine: {why}")
    path = reproduce.ABLATIONS / "ictcp-policy-tick.yaml"
    exps = config.load_all(path)
    a, b = "a" * 40, "b" * 40
    for i, exp in enumerate(exps):
        d = tmp_path / path.relative_to(reproduce.PAPERS).with_suffix("") / exp.name
        rs = results.ResultSet(d, exp.name, exp.as_dict())
        rs.start(fake_record(a))
        if i == 1:
            rs.start(fake_record(b))
        for n in exp.senders:
            rs.add(make_run("ictcp", n, 0))
    code = reproduce.main(["--only", path.stem, "--report-only", "--out", str(tmp_path)])
    assert code == 0
    report = (tmp_path / "REPORT.md").read_text()
    head = report.split("## ", 1)[0]
    assert f"Results from commit `{a}`, `{b}`." in head
    assert f"provenance: commit {a[:12]}, sim (ns3 3.44.post0)" in head
    assert report.count(f"provenance: commit {a[:12]}") == 3  # the header, then each table
    assert f"; resumed: commit {b[:12]}" in report


def test_report_header_lists_commits_per_preset_when_they_differ() -> None:
    a, b = fake_record("a" * 40), fake_record("b" * 40, dirty=True)
    same = reproduce.provenance_header([("p1", a), ("p2", a)])
    assert same[0] == f"Results from commit `{'a' * 40}`."
    differ = "\n".join(reproduce.provenance_header([("p1", a), ("p1", a), ("p2", b), ("p3", None)]))
    assert "Results from different commits, per preset" in differ
    assert f"- p1: `{'a' * 40}`\n- p2: `{'b' * 40}+dirty`\n- p3: `?`" in differ
    assert reproduce.provenance_header([]) == []


def test_at_scale_folder_keeps_first_provenance_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An at-scale sweep goes through the same runner: the same record in its
    results.json, kept on --resume (points "run" by a stand-in executor: no ns-3)."""
    from p4incast.experiments import atscale

    class Loads(Executor):
        def __init__(self, loads: set[float] | None) -> None:
            self.loads = loads

        def run(
            self, jobs: Sequence[Job], on_result: OnResult, on_start: OnStart | None = None
        ) -> None:
            for job in jobs:
                p = job.point
                if self.loads is None or p.load in self.loads:
                    rec = {"scheme": p.scheme.name, "load": p.load, "repeat": p.repeat}
                    rec |= {"status": "ok", "fct_ms": [1.0], "wall_s": 0.1, "engine": "sim"}
                    rec |= {"offered_load": p.load, "long_mbps": [], "short_timeouts": 0}
                    on_result(job, rec | {"drops": {"tor": 0, "root": 0}})

    exp = atscale.load(reproduce.PAPERS / "rcc-at-scale.yaml")
    engine = atscale.ENGINE
    records = iter([fake_record("a" * 40), fake_record("b" * 40)])
    monkeypatch.setattr(runner.provenance, "capture", lambda name: next(records))
    runner.run_experiments([exp], engine, [tmp_path], 1, executor=Loads({0.1}))
    prov = results.load(tmp_path).provenance
    assert prov is not None and prov["commit"] == "a" * 40
    sets = runner.resume_sets([exp], engine, [tmp_path])
    runner.run_experiments([exp], engine, [tmp_path], 1, executor=Loads(None), sets=sets)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["scenario"] == "at-scale"
    assert len(data["runs"]) == len(exp.points())
    assert data["provenance"]["commit"] == "a" * 40
    assert [r["commit"] for r in data["provenance"]["resumed"]] == ["b" * 40]
