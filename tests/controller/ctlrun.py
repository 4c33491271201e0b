"""Running `p4incast-ctl` as a user would, for the tests against a real switch."""

from __future__ import annotations

import subprocess
import sys


def ctl(*args: str) -> subprocess.CompletedProcess[str]:
    """`p4incast-ctl ARGS` in a process of its own; its exit code, stdout and stderr."""
    return subprocess.run(
        [sys.executable, "-m", "p4incast.controller", *args],
        capture_output=True,
        text=True,
        timeout=90,
    )
