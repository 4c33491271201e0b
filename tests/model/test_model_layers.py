"""Packages import one way (DEVELOPERS.md, "Layers"): every import of every
module of the p4incast package — module-level and function-level, absolute and
relative — read with ast and checked against the graph written down there.

ALLOWED is that graph; the first test reads DEVELOPERS.md's table and asserts
it is the same, so the two cannot drift apart. Nothing is imported: the
sources are parsed, so a wrong import fails here even when its package (ns-3,
Mininet, Ray) is not installed.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOT = "p4incast"

# package -> the packages it may import (DEVELOPERS.md, "Layers"). A package is
# a subpackage of p4incast (`sim` is p4incast.sim) or a module of p4incast/
# itself (`tools` is p4incast/tools.py).
ALLOWED: dict[str, set[str]] = {
    "reports": {"experiments", "engines", "model", "tools"},
    "experiments": {"engines", "model", "tools"},
    "engines": {"agent", "sim", "controller", "topologies", "model", "tools", "bmv2"},
    "agent": {"policies", "model", "metrics_server"},
    "sim": {"policies", "model"},
    "controller": {"model", "tools", "metrics_server"},
    "topologies": {"bmv2", "tools"},
    "apps": {"model"},
    "policies": {"model"},
    "metrics_server": {"model"},
    "bmv2": {"tools"},
    "tools": set(),
    "model": set(),
}


def _package_dirs() -> dict[str, Path]:
    """Dotted package name -> its folder, from pyproject's package-dir and packages."""
    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapped = {name: REPO / d for name, d in tool["package-dir"].items()}
    out: dict[str, Path] = {}
    for name in tool["packages"]:
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            prefix = ".".join(parts[:i])
            if prefix in mapped:
                out[name] = mapped[prefix].joinpath(*parts[i:])
                break
    return out


def _modules() -> dict[str, Path]:
    """Every module of the package: dotted name -> file (a package's is its __init__.py)."""
    mods: dict[str, Path] = {}
    for pkg, folder in _package_dirs().items():
        for f in sorted(folder.rglob("*.py")):
            rel = f.relative_to(folder).with_suffix("").parts
            if any(p.startswith(".") or p == "__pycache__" for p in rel):
                continue
            # a sub-folder listed as a package of its own is visited as that package too
            name = ".".join((pkg, *rel))
            mods[name.removesuffix(".__init__")] = f
    return mods


MODULES = _modules()


def _node(module: str) -> str | None:
    """The graph node a dotted module belongs to (None: not ours)."""
    parts = module.split(".")
    if parts[0] != ROOT or len(parts) < 2:
        return None
    return parts[1]


def _imports(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import in `path`: `from X import n` names
    X.n when that is a module of ours, else X."""
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((node.lineno, sub if sub in MODULES else target))
    return out


def _edges() -> list[tuple[str, str, str, int]]:
    """(importing module, imported module, file, line) across packages."""
    edges = []
    for module, path in sorted(MODULES.items()):
        here = _node(module)
        for line, target in _imports(module, path):
            there = _node(target)
            if there and there != here:
                edges.append((module, target, str(path.relative_to(REPO)), line))
    return edges


def _developers_table() -> dict[str, set[str]]:
    """DEVELOPERS.md's "| package | imports only |" table."""
    text = (REPO / "DEVELOPERS.md").read_text()
    m = re.search(r"\| package \| imports only \|\n *\|[-|]+\|\n((?: *\|.*\|\n)+)", text)
    assert m, "DEVELOPERS.md has no '| package | imports only |' table under Layers"
    table: dict[str, set[str]] = {}
    for row in m.group(1).splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        table[cells[0].strip("`")] = set(re.findall(r"`([\w.]+)`", cells[1]))
    return table


def test_the_graph_is_developers_md_s() -> None:
    assert _developers_table() == ALLOWED


def test_every_package_has_a_row_and_the_graph_has_no_cycle() -> None:
    nodes = {_node(m) for m in MODULES} - {None}
    assert nodes == set(ALLOWED), "a package of pyproject.toml without a row, or a stale row"
    assert all(deps <= set(ALLOWED) for deps in ALLOWED.values())
    done: set[str] = set()

    def visit(n: str, path: tuple[str, ...]) -> None:
        assert n not in path, f"import cycle: {' -> '.join((*path, n))}"
        if n not in done:
            for d in ALLOWED[n]:
                visit(d, (*path, n))
            done.add(n)

    for n in ALLOWED:
        visit(n, ())


def test_the_reader_sees_imports_of_every_kind() -> None:
    """The walk finds module-level, function-level and relative imports (so an
    empty result below means the tree is clean, not that the reader is blind)."""
    edges = {(a, b) for a, b, _, _ in _edges()}
    assert ("p4incast.engines.bmv2", "p4incast.engines.testbed") not in edges  # same package
    assert ("p4incast.experiments.provenance", "p4incast.tools") in edges  # function-level
    assert ("p4incast.engines.sim", "p4incast.sim.native") in edges
    assert ("p4incast.controller.targets.bmv2", "p4incast.tools") in edges  # sub-folder


def test_packages_import_one_way() -> None:
    wrong = [
        f"{file}:{line}: {a} imports {b} ({_node(a)} → {_node(b)} is not in DEVELOPERS.md's graph)"
        for a, b, file, line in _edges()
        if _node(b) not in ALLOWED.get(_node(a) or "", set())
    ]
    assert not wrong, "\n".join(dict.fromkeys(wrong))
