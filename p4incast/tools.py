"""Find the external P4 tools p4-incast drives, and say how to get a missing one.

p4c, BMv2 and PI are not in any package registry Debian or PyPI serves, so
they are found on PATH (or through the P4INCAST_<TOOL> environment variable)
and, when absent, every caller gets the same one-line message naming what it
disables and how to install it.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

_P4LANG_PKGS = (
    "p4lang's Ubuntu packages (https://build.opensuse.org/project/show/home:p4lang: "
    "apt install p4lang-p4c p4lang-bmv2), or build p4lang/{repo} from source"
)


@dataclass(frozen=True)
class Tool:
    """One external program: its name, what needs it, where it comes from."""

    name: str
    repo: str
    needed_for: str

    @property
    def env_var(self) -> str:
        return "P4INCAST_" + self.name.upper().replace("-", "_")

    def how_to_get(self) -> str:
        return _P4LANG_PKGS.format(repo=self.repo)


TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        Tool("p4c-bm2-ss", "p4c", "compiling the P4 pipeline (make build)"),
        Tool(
            "simple_switch_grpc",
            "behavioral-model (configured --with-pi --with-thrift, on p4lang/PI)",
            "the BMv2 switch: PTF tests, controller tests, Mininet testbed, make bench",
        ),
        Tool(
            "simple_switch_CLI",
            "behavioral-model",
            "setting BMv2 queue depth and rate (thrift runtime)",
        ),
    )
}


class ToolMissing(RuntimeError):
    """An external tool is not installed; the message says how to get it."""

    def __init__(self, tool: Tool) -> None:
        super().__init__(
            f"{tool.name} not found (PATH or ${tool.env_var}); it is needed for "
            f"{tool.needed_for}. Get it from {tool.how_to_get()}."
        )
        self.tool = tool


def find(name: str) -> Path | None:
    """Path of tool `name`, or None. $P4INCAST_<NAME> overrides PATH."""
    tool = TOOLS[name]
    override = os.environ.get(tool.env_var)
    if override:
        path = Path(override)
        return path if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which(name)
    return Path(found) if found else None


def require(name: str) -> Path:
    """Path of tool `name`; raises ToolMissing with the install hint."""
    path = find(name)
    if path is None:
        raise ToolMissing(TOOLS[name])
    return path


def bmv2_python_dir() -> Path | None:
    """Where BMv2 installed its Python runtime (runtime_CLI.py, bm_runtime, sswitch_runtime).

    `make install` of BMv2 puts it under the prefix's site-packages, which neither
    Debian's python3 (dist-packages) nor a pyenv python searches, so callers add it to
    PYTHONPATH of the simple_switch_CLI process only (it also holds PI's `google` and
    `p4` packages, which must not shadow protobuf in our own process).
    """
    import glob

    override = os.environ.get("P4INCAST_BMV2_PYTHON_DIR")
    candidates = [override] if override else []
    for prefix in ("/usr/local/lib", "/usr/lib"):
        for sub in ("site-packages", "dist-packages"):
            candidates += sorted(glob.glob(f"{prefix}/python3*/{sub}"), reverse=True)
    candidates.append("/usr/lib/python3/dist-packages")
    for cand in candidates:
        if cand and (Path(cand) / "runtime_CLI.py").is_file():
            return Path(cand)
    return None


def missing_reason(*names: str) -> str | None:
    """None when every named tool is present, else the message for the first missing one."""
    for name in names:
        if find(name) is None:
            return str(ToolMissing(TOOLS[name]))
    return None


def report() -> list[str]:
    """One line per tool: found where, or what its absence disables and how to get it."""
    lines = []
    for name, tool in TOOLS.items():
        path = find(name)
        if path:
            lines.append(f"  found   {name:20s} {path}")
        else:
            lines.append(
                f"  MISSING {name:20s} disables {tool.needed_for}; get it from {tool.how_to_get()}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    """`python -m p4incast.tools` reports every tool; `... which NAME` prints one path."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] == "which":
        try:
            print(require(args[1]))
        except (ToolMissing, KeyError) as err:
            print(
                err if isinstance(err, ToolMissing) else f"unknown tool {args[1]}", file=sys.stderr
            )
            return 1
        return 0
    print("\n".join(report()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
