#!/usr/bin/env python3
"""make typecheck: pyright over the whole tree, configured in pyproject.toml.

`p4incast.*` maps to top-level folders (pyproject's `package-dir`); the
editable install resolves that with an import hook, which a static checker
cannot follow. So this script first lays `build/typecheck/p4incast/`: the
folders of `package-dir` as real directories whose .py files are symlinks to
the sources (pyright reads a symlinked file, but does not descend into a
symlinked directory). pyproject's `[tool.pyright]` checks the package there,
so `from . import x` and `from p4incast.<pkg> import x` are one module, and
this script prints each file under its real path. The tree is laid anew on
every run: a new module or subpackage needs no edit here.

Arguments are passed on to pyright (e.g. a file to check alone: give its
path under build/typecheck/).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "typecheck"


def lay_tree() -> None:
    with (ROOT / "pyproject.toml").open("rb") as f:
        package_dir: dict[str, str] = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    if TREE.exists():
        shutil.rmtree(TREE)
    for name, folder in package_dir.items():
        src = ROOT / folder
        dst = TREE.joinpath(*name.split("."))
        for path in sorted(src.rglob("*.py*")):
            if path.suffix not in (".py", ".pyi") or "__pycache__" in path.parts:
                continue
            rel = path.relative_to(src)
            if _nested(name, rel, package_dir):
                continue
            link = dst / rel
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(os.path.relpath(path, link.parent))


def _nested(name: str, rel: Path, package_dir: dict[str, str]) -> bool:
    """Whether `rel` (under `name`'s folder) belongs to a subpackage with its own
    entry in package-dir (then that entry lays it)."""
    return any(f"{name}.{'.'.join(rel.parts[:i])}" in package_dir for i in range(1, len(rel.parts)))


def main() -> int:
    lay_tree()
    pyright = Path(sys.executable).parent / "pyright"
    # --pythonpath: the venv's interpreter, whose sys.path also has Debian's
    # site-packages (Mininet), however make was started.
    cmd = [str(pyright), "--pythonpath", sys.executable, *sys.argv[1:]]
    linked = re.compile(re.escape(str(TREE)) + r"/[^\s:\"']+")
    with subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(linked.sub(lambda m: os.path.realpath(m.group(0)), line))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
