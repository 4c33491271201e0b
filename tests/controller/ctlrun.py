"""Running `p4incast-ctl` as a user would, and when a test can start a real switch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from p4incast import bmv2, tools
from p4incast.controller.config import Pipeline


def ctl(
    *args: str, timeout: float = 90, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`p4incast-ctl ARGS` in a process of its own; its exit code, stdout and stderr."""
    return subprocess.run(
        [sys.executable, "-m", "p4incast.controller", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


def ctl_ok(*args: str) -> subprocess.CompletedProcess[str]:
    """`ctl`, failing the test with the command's stderr unless it exits 0."""
    proc = ctl(*args)
    if proc.returncode != 0:
        raise AssertionError(f"p4incast-ctl {' '.join(args)} failed: {proc.stderr}")
    return proc


def bmv2_unavailable(*, root: bool, also: str | None = None) -> str | None:
    """Why simple_switch_grpc with the built pipeline cannot run here (root: the test
    also makes veth pairs or namespaces; also: another missing tool's message), or None."""
    if root and not bmv2.have_root():
        return "needs root (veth pairs, network namespaces, raw sockets)"
    missing = tools.missing_reason("simple_switch_grpc", "simple_switch_CLI") or also
    if missing:
        return missing
    config = Pipeline.default().config
    if config is None or not config.is_file():
        return f"{config} not built (make build needs p4c-bm2-ss)"
    return None
