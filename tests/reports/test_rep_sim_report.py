"""reports/sim_report.py: the report of a `make sim` run — where each scheme
breaks per variant, the budgeted schemes at N >= 100, the failed runs, each
variant's figures. Fixture results folders are written here with
results.ResultSet (not read from results/)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from run_records import fake_record

from p4incast.experiments import results
from p4incast.reports import sim_report

MakeRun = Callable[..., dict[str, Any]]
SENDERS = (1, 100, 1000)
SCHEMES = ("front+rotate", "droptail", "front+budget")  # the experiment's order


def every_round_times_out(run: dict[str, Any]) -> dict[str, Any]:
    for r in run["rounds"]:
        r["rto"], r["timeouts"] = True, max(1, r["timeouts"])
    return run


def variant(root: Path, name: str, make_run: MakeRun, droptail_breaks_at: int) -> None:
    """droptail times out in every round from `droptail_breaks_at` on; front+rotate
    in one round of four (build_run's round 1) at every N; front+budget's N = 1000
    run failed."""
    config = {"topology": {}, "schemes": [{"name": s} for s in SCHEMES]}
    rs = results.ResultSet(root / name, name, config, link_bps=1e9)
    rs.start(fake_record("a" * 40))
    for n in SENDERS:
        run = make_run("droptail", n)
        rs.add(every_round_times_out(run) if n >= droptail_breaks_at else run)
        rs.add(make_run("front+rotate", n))
        if n == 1000:
            failed = "round 0 did not finish within 2619.1 simulated seconds"
            rs.add(make_run("front+budget", n, status="failed", error=failed, rounds=[]))
        else:
            rs.add(make_run("front+budget", n))


def test_report_breaks_failed_and_figures(make_run: MakeRun, tmp_path: Path) -> None:
    root = tmp_path / "sim-run"
    variant(root, "sim-sru64k-buf256k", make_run, droptail_breaks_at=1000)
    variant(root, "sim-sru64k-buf32k", make_run, droptail_breaks_at=100)
    out = tmp_path / "docs" / "sim" / "REPORT.md"
    assert sim_report.main(["--run", str(root), "--out", str(out)]) == 0
    text = out.read_text()
    assert f"Run: `{root}`: 2 variants, 18 runs, 16 ok, 2 failed." in text
    # variants in their numbers' order (32 KB before 256 KB), schemes in the
    # experiment's (not the order they ran in)
    assert "| variant | front+rotate | droptail | front+budget |" in text
    assert "| sim-sru64k-buf32k | — (1000) | 100 | — (100) |" in text
    assert "| sim-sru64k-buf256k | — (1000) | 1000 | — (100) |" in text
    assert text.index("## sim-sru64k-buf32k") < text.index("## sim-sru64k-buf256k")
    # the budgeted schemes from N = 100: a failed point says so; RTO rounds in %
    assert "| sim-sru64k-buf32k | front+budget | 1000 | failed |||||" in text
    rows = [line for line in text.splitlines() if line.startswith("| sim-sru64k-buf32k | front+")]
    assert len(rows) == 4 and all("| 25 % |" in r for r in rows if "failed" not in r)
    assert "droptail | 100 |" not in text  # not a budgeted scheme
    assert (
        "- sim-sru64k-buf32k: front+budget N = 1000 rep 0: round 0 did not finish within "
        "2619.1 simulated seconds" in text
    )
    for name in ("sim-sru64k-buf32k", "sim-sru64k-buf256k"):
        for fig in ("goodput", "rto_rounds"):
            png = out.parent / "figures" / f"{name}-{fig}.png"
            assert png.read_bytes()[:4] == b"\x89PNG"
            assert f"(figures/{name}-{fig}.png)" in text


def test_one_results_folder_is_its_only_variant(make_run: MakeRun, tmp_path: Path) -> None:
    variant(tmp_path, "sim-sru64k-buf64k", make_run, droptail_breaks_at=100)
    sets = sim_report.variants(tmp_path / "sim-sru64k-buf64k")
    assert [rs.name for rs in sets] == ["sim-sru64k-buf64k"]


def test_no_results_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    out = tmp_path / "REPORT.md"
    assert sim_report.main(["--run", str(tmp_path / "empty"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no results folder" in err[0]
    assert not out.exists()
    assert sim_report.main(["--run", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
