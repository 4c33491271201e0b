"""Run the PTF suite on BMv2 simple_switch_grpc over veth pairs it creates.

    python ptf-tests/run/bmv2/run.py [--xunit-dir DIR] [TEST ...]

Creates the veth pairs of port_map.json, starts simple_switch_grpc (no
pipeline), pushes build/v1model/p4incast.* with the controller, runs `ptf`,
then stops the switch and removes the veths, whatever happened. Exit code is
PTF's; 77 when it cannot run here (no root, no BMv2, no compiled pipeline),
with the reason printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SKIP = 77


def cannot_run() -> str | None:
    from p4incast import bmv2, tools

    if not bmv2.have_root():
        return "PTF needs root (raw sockets, veth pairs)"
    missing = tools.missing_reason("simple_switch_grpc", "simple_switch_CLI")
    if missing:
        return missing
    from p4incast.controller.config import Pipeline

    pl = Pipeline.default()
    if pl.config is None or not pl.config.is_file():
        return f"{pl.config} not built (make build needs p4c-bm2-ss)"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--xunit-dir", type=Path)
    ap.add_argument("--log-dir", type=Path, default=REPO / "build" / "ptf")
    ap.add_argument("tests", nargs="*", help="PTF test names (default: all)")
    args = ap.parse_args()

    reason = cannot_run()
    if reason:
        print(f"ptf: SKIPPED — {reason}")
        return SKIP

    from p4incast import bmv2
    from p4incast.controller import app
    from p4incast.controller.config import Pipeline, SwitchSettings

    port_map = {
        int(k): v
        for k, v in json.loads((HERE / "port_map.json").read_text()).items()
        if not k.startswith("_")
    }
    args.log_dir.mkdir(parents=True, exist_ok=True)
    pipeline = Pipeline.default()
    switch = bmv2.Bmv2Switch(
        ports={p: s for p, (s, _h) in port_map.items()}, log_file=args.log_dir / "switch.log"
    )
    try:
        for sw_if, host_if in port_map.values():
            bmv2.make_veth(sw_if, host_if)
        switch.start()
        settings = SwitchSettings(
            address=switch.grpc_addr, device_id=switch.device_id, thrift_port=switch.thrift_port
        )
        asyncio.run(app.push(settings, pipeline))
        ptf = shutil.which("ptf", path=str(Path(sys.executable).parent)) or "ptf"
        params = (
            f"grpc_addr='{switch.grpc_addr}';device_id={switch.device_id};"
            f"thrift_port={switch.thrift_port};p4info='{pipeline.p4info}';"
            f"p4config='{pipeline.config}'"
        )
        cmd = [
            ptf,
            "--test-dir",
            str(REPO / "ptf-tests" / "tests"),
            "--pypath",
            str(REPO / "ptf-tests" / "lib"),
            "--test-params",
            params,
            "--qlen",
            "20000",
            "--log-file",
            str(args.log_dir / "ptf.log"),
        ]
        for port, (_s, host_if) in sorted(port_map.items()):
            cmd += ["-i", f"{port}@{host_if}"]
        if args.xunit_dir:
            args.xunit_dir.mkdir(parents=True, exist_ok=True)
            cmd += ["--xunit", "--xunit-dir", str(args.xunit_dir)]
        cmd += args.tests
        env = {**os.environ, "PYTHONPATH": str(REPO / "ptf-tests" / "lib")}
        return subprocess.run(cmd, env=env).returncode
    finally:
        switch.stop()
        for sw_if, _h in port_map.values():
            bmv2.del_veth(sw_if)


if __name__ == "__main__":
    sys.exit(main())
