"""`p4incast-run --report-only DIR` reads DIR's runs as the scenario they record:
an at-scale folder (sim/atscale.py's records) given without its preset was read
as the default incast preset's, and every run came out failed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from p4incast.experiments import atscale, atscale_summary
from p4incast.reports import reproduce

PRESET = reproduce.PAPERS / "rcc-at-scale.yaml"
RUN = [sys.executable, "-m", "p4incast.reports.run_cli"]  # what the p4incast-run script calls


def record(scheme: str, load: float) -> dict[str, Any]:
    """An ok at-scale run record (experiments/SCHEMA.md, at-scale)."""
    return {
        "scenario": "at-scale", "scheme": scheme, "load": load, "repeat": 0, "status": "ok",
        "engine": "sim", "fct_ms": [2.0] * 100, "offered_load": load, "long_mbps": [400.0],
        "drops": {"tor": 3, "root": 0}, "short_timeouts": 0, "wall_s": 1.0,
    }  # fmt: skip


def at_scale_folder(tmp_path: Path, name: str) -> Path:
    exp = atscale.load(PRESET, {"schemes": ["rcc", "tcp"], "loads": [0.3], "repeats": 1})
    out = tmp_path / "atscale"
    rs = atscale_summary.AtScaleResultSet(out, name, exp.as_dict())
    rs.add(record("rcc", 0.3))
    rs.add(record("tcp", 0.3))
    return out


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RUN, *args], capture_output=True, text=True, timeout=120)


def test_an_at_scale_folder_without_its_preset_reads_as_at_scale(tmp_path: Path) -> None:
    out = at_scale_folder(tmp_path, "rcc-at-scale")
    proc = run("--report-only", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [ln for ln in proc.stdout.splitlines() if ln.startswith(("| rcc |", "| tcp |"))]
    # both runs ok: one table row each with its p50 FCT, none "failed"
    assert len(rows) == 2 and not any("failed" in r for r in rows), proc.stdout[-3000:]
    assert all("| 2.00" in r for r in rows), rows
    assert (out / "fct_p99.png").is_file() and (out / "SUMMARY.md").is_file()
    assert not (out / "goodput.png").exists()  # no incast plot drawn over it


def test_an_at_scale_folder_with_an_incast_preset_is_refused_in_one_line(tmp_path: Path) -> None:
    out = at_scale_folder(tmp_path, "rcc-at-scale")
    default = reproduce.PAPERS.parent / "default.yaml"
    proc = run(str(default), "--report-only", str(out))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "its runs are at-scale runs" in proc.stderr and "give the preset" in proc.stderr
    assert not list(out.glob("*.png"))  # nothing rewritten


def test_a_folder_no_preset_is_named_after_says_to_give_it(tmp_path: Path) -> None:
    out = at_scale_folder(tmp_path, "my-own-scale")
    proc = run("--report-only", str(out))
    assert proc.returncode == 2
    assert "no preset under experiments/ is named" in proc.stderr
    assert "p4incast-run PRESET --report-only DIR" in proc.stderr
