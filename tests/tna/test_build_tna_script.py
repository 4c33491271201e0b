"""scripts/build-tna.sh without the real compiler: the skip line, and its handling of
the compiler's outputs (copies, compile time, resource summary) driven by a stand-in
`bf-p4c` that writes the files in the layout the Tofino driver uses."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from p4incast import tools
from p4incast.controller import tofino_config

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts/build-tna.sh"

FAKE = r"""#!/usr/bin/env bash
# Stand-in for the Tofino p4c driver: records its arguments, writes its outputs.
set -euo pipefail
echo "$@" > "$FAKE_ARGS"
out=""; bfrt=""; p4info=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=$2; shift;;
    --bf-rt-schema) bfrt=$2; shift;;
    --p4runtime-files) p4info=$2; shift;;
  esac
  shift
done
mkdir -p "$out/pipe/logs"
printf 'BIN' > "$out/pipe/tofino.bin"
echo '{"tables": [{"name": "P4IncastEgress.ecn_marker.ecn_policy", "table_type": "match"},
                  {"name": "tbl_x", "table_type": "match"},
                  {"name": "c", "table_type": "statistics"}]}' > "$out/pipe/context.json"
echo '{"tables": []}' > "$bfrt"
echo 'pkg_info {}' > "$p4info"
cat > "$out/pipe/logs/table_summary.log" <<'EOF'
Number of stages in table allocation: 5
  Number of stages for ingress table allocation: 3
Critical path length through the table dependency graph: 5
EOF
cp "$FAKE_RESOURCES" "$out/pipe/logs/resources.json"
echo "fake compile done"
[ "${FAKE_FAIL:-0}" = 1 ] && { echo "error: fake failure" >&2; exit 1; }
exit 0
"""


def _stage(n: int, srams: int, tcams: int, tables: list[str]) -> dict:
    return {
        "stage_number": n,
        "rams": {"nRows": 8, "nColumns": 10, "srams": [{"row": 0, "column": 0}] * srams},
        "tcams": {"nRows": 12, "nColumns": 2, "tcams": [{"row": 0, "column": 0}] * tcams},
        "logical_tables": {"ids": [{"id": i, "table_name": t} for i, t in enumerate(tables)]},
    }


@pytest.fixture()
def fake_compiler(tmp_path: Path) -> dict[str, str]:
    fake = tmp_path / "bin" / "bf-p4c"
    fake.parent.mkdir()
    fake.write_text(FAKE)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    resources = tmp_path / "resources.json"
    stages = [_stage(0, 4, 2, ["routes_v4", "routes_v6"]), _stage(1, 2, 0, ["ecn_policy"])]
    stages += [_stage(n, 0, 0, []) for n in range(2, 12)]
    resources.write_text(json.dumps({"resources": {"mau": {"nStages": 12, "mau_stages": stages}}}))
    return {
        **os.environ,
        "P4C_TOFINO": str(fake),
        "FAKE_ARGS": str(tmp_path / "args"),
        "FAKE_RESOURCES": str(resources),
        "TNA_OUT": str(tmp_path / "out"),
    }


def test_outputs_copied_and_summary_printed(fake_compiler: dict[str, str], tmp_path: Path) -> None:
    proc = subprocess.run(
        ["bash", str(SCRIPT)], env=fake_compiler, capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    assert (out / "tofino.bin").read_text() == "BIN"
    assert json.loads((out / "context.json").read_text())["tables"]
    assert float((out / "compile_seconds").read_text()) >= 0
    args = (tmp_path / "args").read_text().split()
    assert args[:6] == ["--target", "tofino", "--arch", "tna", "--std", "p4-16"]
    assert "--p4runtime-force-std-externs" in args and args[-1] == "p4src/tna/main.p4"
    text = proc.stdout
    assert "build-tna: compiled in" in text
    assert "Number of stages in table allocation: 5" in text
    assert "MAU stages used: 2 of 12" in text
    assert "logical tables: 3" in text
    assert "SRAM blocks: 6 of 960   TCAM blocks: 2 of 288" in text
    assert "p4incast.p4info.txtpb" in text and "MISSING" not in text
    # Both device configs the Tofino P4Runtime servers take, packed from those files.
    files = [(out / f).read_bytes() for f in ("tofino.bin", "context.json", "bf-rt.json")]
    stratum = tofino_config.unpack_stratum((out / "device_config.stratum.pb").read_bytes())
    assert [stratum.binary, stratum.context, stratum.bfrt] == files
    bf = tofino_config.unpack_bf_switchd((out / "device_config.bf-switchd.bin").read_bytes())
    assert [bf.binary, bf.context, bf.bfrt] == files and bf.pipe_name == "pipe"
    assert f"build-tna: packed {out / 'device_config.stratum.pb'} (" in text
    assert f"build-tna: packed {out / 'device_config.bf-switchd.bin'} (" in text


def test_compiler_failure_is_reported(fake_compiler: dict[str, str]) -> None:
    proc = subprocess.run(
        ["bash", str(SCRIPT)],
        env={**fake_compiler, "FAKE_FAIL": "1"},
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 1
    assert "build-tna: FAILED after" in proc.stderr


def test_absent_compiler_skips_with_one_line(tmp_path: Path) -> None:
    if tools.tofino_p4c() is not None:
        pytest.skip("a Tofino p4c is installed here: the absent-compiler path cannot be shown")
    env = {k: v for k, v in os.environ.items() if k != "P4C_TOFINO"}
    env["TNA_OUT"] = str(tmp_path / "out")
    proc = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("build-tna: skipped")
    assert "ENABLE_TOFINO" in lines[0]
    assert not (tmp_path / "out").exists()
