"""The TNA pipeline: it compiles for Tofino 1, and its P4Runtime names are v1model's.

- test_tna_compiles / test_p4info_names_match_v1model need the Tofino p4c
  (p4c built with ENABLE_TOFINO, see scripts/build-tna.sh); skipped with the
  reason when it is absent.
- test_tna_frontend_names_match_v1model runs p4test (front + mid end, the
  BMv2 p4c installs it) on the TNA program where TNA's include files are
  available, and checks the table/action/key names without the Tofino
  backend (p4test does not know TNA's Counter, so counters are left to the
  full test).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import text_format

from p4incast import tools

REPO = Path(__file__).resolve().parents[2]
TNA_MAIN = REPO / "p4src/tna/main.p4"
V1MODEL_MAIN = REPO / "p4src/v1model/main.p4"
SKIP_LINE = "build-tna: skipped"


def _load_p4info(path: Path) -> p4info_pb2.P4Info:
    return text_format.Parse(path.read_text(), p4info_pb2.P4Info())


def _names(info: p4info_pb2.P4Info, *, counters: bool = True) -> dict[str, object]:
    """What the controller depends on: names, aliases, keys, parameters, counter units."""
    out: dict[str, object] = {
        "tables": {
            t.preamble.name: (
                t.preamble.alias,
                [(m.name, m.match_type, m.bitwidth) for m in t.match_fields],
                sorted(
                    next(a.preamble.name for a in info.actions if a.preamble.id == r.id)
                    for r in t.action_refs
                ),
            )
            for t in info.tables
        },
        "actions": {
            a.preamble.name: (a.preamble.alias, [(p.name, p.bitwidth) for p in a.params])
            for a in info.actions
        },
    }
    if counters:
        out["counters"] = {
            c.preamble.name: (c.preamble.alias, c.spec.unit, c.size) for c in info.counters
        }
    return out


@pytest.fixture(scope="module")
def v1model_p4info(tmp_path_factory: pytest.TempPathFactory) -> p4info_pb2.P4Info:
    """The v1model p4info, compiled afresh from the current sources."""
    reason = tools.missing_reason("p4c-bm2-ss")
    if reason:
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("v1model")
    subprocess.run(
        [
            str(tools.require("p4c-bm2-ss")),
            "--arch",
            "v1model",
            "--std",
            "p4-16",
            "--p4runtime-files",
            str(out / "p4incast.p4info.txtpb"),
            "-o",
            str(out / "p4incast.json"),
            str(V1MODEL_MAIN),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return _load_p4info(out / "p4incast.p4info.txtpb")


@pytest.fixture(scope="module")
def tna_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """scripts/build-tna.sh run into a temporary build/tna."""
    if tools.tofino_p4c() is None:
        pytest.skip(
            "no Tofino p4c (p4c built with -DENABLE_TOFINO=ON in /opt/p4c-tofino, "
            "or P4C_TOFINO=/path/to/bf-p4c): the TNA program is not compiled here"
        )
    out = tmp_path_factory.mktemp("tna")
    proc = subprocess.run(
        ["bash", str(REPO / "scripts/build-tna.sh")],
        env={**os.environ, "TNA_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=3600,
        cwd=REPO,
    )
    print(proc.stdout[-4000:])
    assert proc.returncode == 0, f"build-tna failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    assert SKIP_LINE not in proc.stdout
    assert "compiled in" in proc.stdout
    return out


def test_tna_compiles(tna_build: Path) -> None:
    for name in ("tofino.bin", "context.json", "bf-rt.json", "p4incast.p4info.txtpb"):
        assert (tna_build / name).stat().st_size > 0, name
    context = json.loads((tna_build / "context.json").read_text())
    table_names = {t["name"] for t in context["tables"]}
    for table in ("routes_v4", "routes_v6", "ecn_policy"):
        assert any(n.endswith(table) for n in table_names), (table, sorted(table_names))
    bfrt = json.loads((tna_build / "bf-rt.json").read_text())
    bfrt_names = {t["name"] for t in bfrt["tables"]}
    assert any(n.endswith("P4IncastEgress.ecn_marker.ecn_policy") for n in bfrt_names)


def test_p4info_names_match_v1model(tna_build: Path, v1model_p4info: p4info_pb2.P4Info) -> None:
    tna = _names(_load_p4info(tna_build / "p4incast.p4info.txtpb"))
    v1 = _names(v1model_p4info)
    assert tna["tables"] == v1["tables"]
    assert tna["actions"] == v1["actions"]
    assert tna["counters"] == v1["counters"]


def test_tna_frontend_names_match_v1model(
    tmp_path: Path, v1model_p4info: p4info_pb2.P4Info
) -> None:
    include = tools.tna_include_dir()
    if include is None:
        pytest.skip(
            "TNA include files (tna.p4) not found: the toolchain bundle installs them in "
            "/usr/local/share/p4c/tna-include (make setup), the Tofino p4c has them in "
            "share/p4c/p4include, or set P4INCAST_TNA_INCLUDE to p4c's "
            "backends/tofino/bf-p4c/p4include"
        )
    p4test = shutil.which("p4test")
    if p4test is None:
        pytest.skip("p4test not found (it is installed with p4c)")
    out = tmp_path / "tna.p4info.txtpb"
    proc = subprocess.run(
        [
            p4test,
            "--std",
            "p4-16",
            "-I",
            str(include),
            "-D__TARGET_TOFINO__=1",
            "--p4runtime-files",
            str(out),
            str(TNA_MAIN),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    tna = _names(_load_p4info(out), counters=False)
    v1 = _names(v1model_p4info, counters=False)
    assert tna == v1
