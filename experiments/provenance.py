"""Where a results folder came from: one record captured when a sweep starts.

    prov = capture("sim")         # {"commit": "2f90…", "dirty": False, "engine": "sim", …}
    print(line(prov))             # "provenance: commit 2f90223abcde, sim (ns3 3.44.post0), …"

The record (experiments/SCHEMA.md, "Provenance") holds the git commit of the
checkout this code runs from and whether its tracked files were modified, the
engine and the versions it rests on (ns-3's `ns3` package; BMv2's
simple_switch_grpc, which binary and what `--version` says), the kernel
release, Python, the CPU count, the load average at the start and the UTC time.
Every probe has a short timeout and gives None when it cannot answer: capturing
never fails a run. It describes the machine that drives the sweep; with
`--cluster` the points run on the cluster's nodes, which may differ.

A resumed sweep keeps the folder's first record and appends its own to the
first record's `resumed` list (`note_start`), so a folder made on two commits
says so.
"""

from __future__ import annotations

import copy
import importlib.metadata
import os
import platform
import re
import subprocess
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent  # the checkout (the package is installed editable)
TIMEOUT_S = 5.0  # per probe (git, simple_switch_grpc --version)
SHORT = 12  # hex digits of a commit in one-line summaries
NOT_RECORDED = "not recorded: these runs were written before results kept their provenance"


def _run(
    cmd: Sequence[str], timeout: float = TIMEOUT_S, env: Mapping[str, str] | None = None
) -> str | None:
    """stdout of a command, stripped; None when it cannot run, fails or times out."""
    try:
        proc = subprocess.run(
            list(cmd),
            env=None if env is None else dict(env),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def git_state(repo_root: Path, timeout: float = TIMEOUT_S) -> tuple[str | None, bool | None]:
    """(HEAD's commit, tracked files modified) of the checkout at `repo_root`;
    (None, None) without git or outside a checkout."""
    if not Path(repo_root).is_dir():
        return None, None
    # -C root and GIT_CEILING_DIRECTORIES: a folder that is not a checkout must not
    # borrow the commit of a checkout somewhere above it.
    root = Path(repo_root).resolve()
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(root.parent), "GIT_OPTIONAL_LOCKS": "0"}
    git = ["git", "-C", str(root)]
    top = _run([*git, "rev-parse", "--show-toplevel"], timeout, env)
    if top is None or Path(top).resolve() != root:
        return None, None
    commit = _run([*git, "rev-parse", "HEAD"], timeout, env)
    if commit is None or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        return None, None
    status = _run([*git, "status", "--porcelain", "--untracked-files=no"], timeout, env)
    return commit, None if status is None else status != ""


def ns3_version() -> str | None:
    """The installed `ns3` package's version (the simulator's ns-3), or None."""
    try:
        return importlib.metadata.version("ns3")
    except Exception:  # a probe never fails the run
        return None


def bmv2_binary() -> Path | None:
    """The simple_switch_grpc the testbed would start (p4incast.tools), or None."""
    try:
        from p4incast.tools import fastest_simple_switch_grpc

        return fastest_simple_switch_grpc()[0]
    except Exception:  # not installed: ToolMissing; anything else: no answer
        return None


def bmv2_version(binary: Path | None, timeout: float = TIMEOUT_S) -> str | None:
    """`simple_switch_grpc --version`, first line; None when it cannot say."""
    if binary is None:
        return None
    out = _run([str(binary), "--version"], timeout)
    return out.splitlines()[0].strip() if out else None


def _engine_versions(engine_name: str, timeout: float) -> dict[str, Any]:
    """The versions the engine rests on: ns-3 for the simulators, BMv2 for the testbed
    (both for an engine this module does not know)."""
    sim = engine_name.startswith("sim")
    bmv2 = engine_name.startswith("bmv2")
    versions: dict[str, Any] = {}
    if sim or not bmv2:
        versions["ns3"] = ns3_version()
    if bmv2 or not sim:
        binary = bmv2_binary()
        versions["simple_switch_grpc"] = bmv2_version(binary, timeout)
        versions["simple_switch_grpc_path"] = None if binary is None else str(binary)
    return versions


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def capture(
    engine_name: str, *, repo_root: Path | str | None = None, timeout: float = TIMEOUT_S
) -> dict[str, Any]:
    """The provenance record of a sweep starting now (SCHEMA.md); never raises.

    `repo_root`: the checkout whose commit to record (default: the one this code
    runs from); `timeout`: seconds per external probe.
    """
    root = Path(repo_root) if repo_root is not None else REPO
    try:
        commit, dirty = git_state(root, timeout)
    except Exception:
        commit, dirty = None, None
    try:
        versions = _engine_versions(engine_name, timeout)
    except Exception:
        versions = {}
    versions["python"] = platform.python_version()
    versions["kernel"] = platform.release() or None
    return {
        "commit": commit,
        "dirty": dirty,
        "engine": engine_name,
        "versions": versions,
        "host": platform.node() or None,
        "cpus": os.cpu_count(),
        "loadavg": _loadavg(),
        "captured": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def note_start(
    first: Mapping[str, Any] | None, new: Mapping[str, Any], kept_runs: int
) -> dict[str, Any]:
    """The provenance a folder holds once a sweep starts in it with record `new`.

    A fresh folder (`first` None, no runs kept) takes `new`. A resumed one keeps
    `first` and appends `new` to its `resumed` list; a folder with runs but no
    record (written before provenance was kept) gets a record whose commit is
    None and whose `note` says so, with `new` in its `resumed` list.
    """
    new = copy.deepcopy(dict(new))
    if first is None and not kept_runs:
        return new
    if first is None:
        first = {"commit": None, "dirty": None, "note": NOT_RECORDED}
    out = copy.deepcopy(dict(first))
    out["resumed"] = [*(out.get("resumed") or []), new]
    return out


def commits(prov: Mapping[str, Any] | None) -> list[str]:
    """Every commit a folder's runs came from, first record first ("?" for unknown,
    "+dirty" when modified), without repeats."""
    if not prov:
        return ["?"]
    out: list[str] = []
    for p in [prov, *(prov.get("resumed") or [])]:
        c = _commit_text(p)
        if c not in out:
            out.append(c)
    return out


def _commit_text(p: Mapping[str, Any], digits: int | None = None) -> str:
    commit = p.get("commit")
    text = str(commit)[:digits] if commit else "?"
    return text + ("+dirty" if p.get("dirty") else "")


def _one(p: Mapping[str, Any]) -> str:
    v = p.get("versions") or {}
    engine = str(p.get("engine") or "?")
    eng = []
    if "ns3" in v:
        eng.append(f"ns3 {v['ns3'] or '?'}")
    if "simple_switch_grpc" in v:
        eng.append(f"simple_switch_grpc {v['simple_switch_grpc'] or '?'}")
    load = p.get("loadavg")
    load_text = "/".join(f"{x:.2f}" for x in load) if load else "?"
    return (
        f"commit {_commit_text(p, SHORT)}, {engine}"
        + (f" ({', '.join(eng)})" if eng else "")
        + f", Python {v.get('python') or '?'}, kernel {v.get('kernel') or '?'}, "
        f"{p.get('cpus') or '?'} cores, load {load_text} at {p.get('captured') or '?'}"
    )


def line(prov: Mapping[str, Any] | None) -> str:
    """One line for a report's header: commit[+dirty], engine versions, cores, load;
    then every resume ("; resumed: commit …")."""
    if not prov:
        return "provenance: not recorded"
    if prov.get("note") and not prov.get("commit"):
        head = "provenance: first runs not recorded"
    else:
        head = f"provenance: {_one(prov)}"
    resumed = prov.get("resumed") or []
    return head + "".join(f"; resumed: {_one(r)}" for r in resumed)


def report_header(named: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[str]:
    """REPORT.md's lines on where the results came from; `named`: (preset, provenance
    record or None) per experiment. One commit line and the first record's line when
    every preset's runs came from the same commit(s); else the commits per preset."""
    per_preset: dict[str, list[str]] = {}
    for name, prov in named:
        mine = per_preset.setdefault(name, [])
        mine += [c for c in commits(prov) if c not in mine]
    if not per_preset:
        return []
    distinct = {tuple(c) for c in per_preset.values()}
    if len(distinct) == 1:
        only = ", ".join(f"`{c}`" for c in next(iter(distinct)))
        first = next((p for _n, p in named if p), None)
        return [f"Results from commit {only}.", f"{line(first)}.", ""]
    lines = ['Results from different commits, per preset ("?": not recorded):', ""]
    lines += [f"- {name}: {', '.join(f'`{c}`' for c in cs)}" for name, cs in per_preset.items()]
    return lines + [""]
