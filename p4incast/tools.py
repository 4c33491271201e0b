"""Find the external P4 tools p4-incast drives, and say how to get a missing one.

p4c, BMv2 and PI are not in any package registry Debian or PyPI serves, so
they are found on PATH (or through the P4INCAST_<TOOL> environment variable)
and, when absent, every caller gets the same one-line message naming what it
disables and how to install it.
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

_P4LANG_PKGS = (
    "`make setup` as root with P4INCAST_TOOLCHAIN_BUNDLE=/path/p4-toolchain-debian12-amd64.tar.zst "
    "(Debian 12), or on Ubuntu 20.04/22.04/24.04 (p4lang's home:p4lang packages); "
    "or build p4lang/{repo} from source (README, 'The P4 toolchain')"
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


# BMv2 built as p4lang's docs/performance.md says (--disable-logging-macros
# --disable-elogger, -O3), in a prefix of its own so the default build on PATH
# stays (scripts/install-p4-toolchain.sh, P4INCAST_BMV2_PERF_BUNDLE).
BMV2_PERF_PREFIX = Path("/opt/bmv2-perf")


def bmv2_perf_build() -> Path | None:
    """simple_switch_grpc of the BMv2 performance build, when installed."""
    exe = BMV2_PERF_PREFIX / "bin/simple_switch_grpc"
    return exe if exe.is_file() and os.access(exe, os.X_OK) else None


def fastest_simple_switch_grpc() -> tuple[Path, str]:
    """(simple_switch_grpc for the testbed, one line naming the build).

    $P4INCAST_SIMPLE_SWITCH_GRPC wins; else the performance build when installed
    (it forwards ~1.3x faster, so the testbed's bottleneck can be faster); else PATH.
    """
    if not os.environ.get(TOOLS["simple_switch_grpc"].env_var):
        perf = bmv2_perf_build()
        if perf is not None:
            return perf, f"BMv2 performance build ({perf})"
    exe = require("simple_switch_grpc")
    return exe, f"BMv2 default build ({exe})"


def tofino_p4c() -> Path | None:
    """The Tofino p4c (p4c built with -DENABLE_TOFINO=ON); scripts/build-tna.sh searches
    alike: $P4C_TOFINO, then /opt/p4c-tofino/bin and PATH for a p4c beside p4c-barefoot."""
    env = os.environ.get("P4C_TOFINO")
    if env:
        return Path(env) if os.access(env, os.X_OK) else None
    for d in map(Path, ["/opt/p4c-tofino/bin", *os.environ.get("PATH", "").split(os.pathsep)]):
        if not (d / "p4c-barefoot").is_file():
            continue
        for name in ("bf-p4c", "p4c"):
            if os.access(d / name, os.X_OK):
                return d / name
    found = shutil.which("bf-p4c")
    return Path(found) if found else None


def tna_include_dir() -> Path | None:
    """A directory holding TNA's tna.p4, for p4test's front end on the TNA program.

    $P4INCAST_TNA_INCLUDE; the Tofino p4c's share/p4c/p4include; the toolchain
    bundle's share/p4c/tna-include beside p4test (/usr/local/share/p4c/tna-include).
    """
    cands = [os.environ.get("P4INCAST_TNA_INCLUDE")]
    p4c = tofino_p4c()
    if p4c:
        cands.append(str(p4c.resolve().parent.parent / "share/p4c/p4include"))
    cands.append("/opt/p4c-tofino/share/p4c/p4include")
    p4test = shutil.which("p4test")
    if p4test:
        cands.append(str(Path(p4test).resolve().parent.parent / "share/p4c/tna-include"))
    cands.append("/usr/local/share/p4c/tna-include")
    for c in cands:
        if c and (Path(c) / "tna.p4").is_file():
            return Path(c)
    return None


def bmv2_python_dir() -> Path | None:
    """Where BMv2 installed its Python runtime (runtime_CLI.py, bm_runtime, sswitch_runtime).

    `make install` of BMv2 puts it under the prefix's site-packages, which neither
    Debian's python3 (dist-packages) nor a pyenv python searches, so callers add it to
    PYTHONPATH of the simple_switch_CLI process only (it also holds PI's `google` and
    `p4` packages, which must not shadow protobuf in our own process).
    """
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


def port_listeners(port: int) -> list[tuple[int, str]]:
    """Who listens on TCP `port` (any address, IPv4 or IPv6) in this network
    namespace: (pid, command name) each, from /proc/net/tcp{,6} (the listening
    socket's inode) and /proc/<pid>/fd (which process has that socket open). A
    listener /proc shows no process for (another user's, without root) is
    (0, "?"). Empty: nothing listens there."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()  # sl local_address rem_address st ... uid timeout inode
            if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{f[9]}]")
    found: dict[int, str] = {}
    if inodes:
        for fd_dir in glob.glob("/proc/[0-9]*/fd"):
            pid = int(fd_dir.split("/")[2])
            try:
                if any(os.readlink(f"{fd_dir}/{fd}") in inodes for fd in os.listdir(fd_dir)):
                    found[pid] = Path(f"/proc/{pid}/comm").read_text().strip()
            except OSError:
                continue  # gone, or not ours to read
    return sorted(found.items()) if found or not inodes else [(0, "?")]


def describe_listeners(listeners: list[tuple[int, str]]) -> str:
    """[(812, "prometheus")] -> "pid 812 (prometheus)"; (0, "?") is a process /proc
    does not show."""
    return ", ".join(
        f"pid {pid} ({name})" if pid else "a process /proc does not show" for pid, name in listeners
    )


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
    perf = bmv2_perf_build()
    lines.append(
        f"  found   {'BMv2 performance':20s} {perf} (the testbed uses it)"
        if perf
        else f"  absent  {'BMv2 performance':20s} optional (P4INCAST_BMV2_PERF_BUNDLE); "
        "the testbed uses the default build"
    )
    tna = tna_include_dir()
    lines.append(
        f"  found   {'TNA include files':20s} {tna}"
        if tna
        else f"  absent  {'TNA include files':20s} the TNA name check (tests/tna) skips"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    """`python -m p4incast.tools` reports every tool; `... which NAME` prints one path."""
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
