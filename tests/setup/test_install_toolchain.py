"""scripts/install-p4-toolchain.sh: what `make setup` runs to get p4c, BMv2 and PI.

Refusals are checked on small bundles made here (a tar.zst and a MANIFEST.txt
in the format of the shipped one); the real install on the bundle named by
P4INCAST_TOOLCHAIN_BUNDLE (`.ci/run` names the one in ../shared/toolchain),
unpacked into a scratch prefix whose tools must then compile p4-incast's own
program and start.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts/install-p4-toolchain.sh"
NAME = "p4-toolchain-debian12-amd64.tar.zst"
PERF_NAME = "bmv2-perf-debian12-amd64.tar.zst"
# Packages every Debian has: the synthetic manifest's runtime list.
PACKAGES = "libc6 zstd"


def run(*args: str | Path, user: str | None = None) -> subprocess.CompletedProcess[str]:
    cmd = ["bash", str(SCRIPT), *map(str, args)]
    if user:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("P4INCAST_TOOLCHAIN", "P4INCAST_BMV2"))
    }
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)


@pytest.fixture
def world_dir() -> Iterator[Path]:
    """A directory another user can read (pytest's tmp_path is root-only)."""
    d = Path(tempfile.mkdtemp(prefix="p4i-install-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d)


def make_bundle(folder: Path, name: str = NAME, *, sha: str | None = None) -> Path:
    """A tar.zst holding usr/local/bin/marker, and a MANIFEST.txt entry for it."""
    if shutil.which("zstd") is None:
        pytest.skip("zstd not installed (Debian package zstd; make setup installs it)")
    tree = folder / f"tree-{name}"
    (tree / "usr/local/bin").mkdir(parents=True)
    (tree / "usr/local/bin/marker").write_text("installed\n")
    bundle = folder / name
    subprocess.run(
        f"tar -C {tree} -c usr | zstd -q -o {bundle}", shell=True, check=True, capture_output=True
    )
    digest = sha or hashlib.sha256(bundle.read_bytes()).hexdigest()
    manifest = folder / "MANIFEST.txt"
    old = manifest.read_text() if manifest.exists() else ""
    manifest.write_text(
        old + f"bundle: {name}\nsha256: {digest}\n\n"
        f"apt-get install -y --no-install-recommends {PACKAGES}\n"
    )
    return bundle


def test_bad_sha256_is_refused_and_nothing_installed(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path, sha="0" * 64)
    prefix = tmp_path / "root"
    proc = run("--bundle", bundle, "--prefix", prefix, "--no-apt")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "sha256" in lines[0] and "refusing" in lines[0], proc.stderr
    assert not prefix.exists()


def test_bad_perf_bundle_stops_the_main_one_too(tmp_path: Path) -> None:
    """Both bundles are checked before either is unpacked."""
    main = make_bundle(tmp_path)
    perf = make_bundle(tmp_path, PERF_NAME, sha="f" * 64)
    prefix = tmp_path / "root"
    proc = run("--bundle", main, "--perf-bundle", perf, "--prefix", prefix, "--no-apt")
    assert proc.returncode == 2 and PERF_NAME in proc.stderr
    assert not prefix.exists()


def test_missing_bundle_one_line(tmp_path: Path) -> None:
    proc = run("--bundle", tmp_path / "nowhere.tar.zst")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "does not exist" in proc.stderr


def test_bundle_without_manifest_entry(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path)
    (tmp_path / "MANIFEST.txt").write_text("bundle: something-else.tar.zst\nsha256: 00\n")
    proc = run("--bundle", bundle, "--prefix", tmp_path / "root")
    assert proc.returncode == 2 and "no 'bundle: " + NAME in proc.stderr


def test_unknown_os_says_both_ways_and_succeeds(tmp_path: Path) -> None:
    osr = tmp_path / "os-release"
    osr.write_text('ID=fedora\nVERSION_ID="40"\n')
    proc = run("--os-release", osr)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.strip().splitlines()
    assert len(out) == 1
    assert (
        "fedora 40" in out[0] and "P4INCAST_TOOLCHAIN_BUNDLE" in out[0] and "p4lang-p4c" in out[0]
    )


def test_non_root_changes_nothing(world_dir: Path) -> None:
    if os.geteuid() != 0:
        user = None  # already not root
    elif shutil.which("setpriv"):
        user = "65534"  # nobody
    else:
        pytest.skip("running as root without setpriv (util-linux) to drop privileges")
    bundle = make_bundle(world_dir)
    prefix = world_dir / "root"
    proc = run("--bundle", bundle, "--prefix", prefix, user=user)
    assert proc.returncode == 0, proc.stderr
    assert "not root: changed nothing" in proc.stdout and str(bundle) in proc.stdout
    assert not prefix.exists()


def test_synthetic_bundle_unpacks_into_prefix(tmp_path: Path) -> None:
    """The unpack itself, on a bundle too small to hold tools: it fails at the
    first tool check, after unpacking, and names the tool."""
    if os.geteuid() != 0:
        pytest.skip("installing needs root (the script refuses otherwise)")
    bundle = make_bundle(tmp_path)
    prefix = tmp_path / "root"
    proc = run("--bundle", bundle, "--prefix", prefix, "--no-apt")
    assert (prefix / "usr/local/bin/marker").read_text() == "installed\n"
    assert proc.returncode == 2 and "p4c-bm2-ss --version does not run" in proc.stderr


def _given(var: str, name: str) -> Path:
    value = os.environ.get(var)
    if not value:
        pytest.skip(
            f"{var} not set: no {name} to install (.ci/run sets it from ../shared/toolchain)"
        )
    return Path(value)


def test_real_bundle_into_scratch_prefix(tmp_path: Path) -> None:
    """The shipped bundle(s): installed into a scratch root, its p4c compiles
    p4-incast's v1model program and its simple_switch_grpc starts."""
    if os.geteuid() != 0:
        pytest.skip("installing needs root (the script refuses otherwise)")
    bundle = _given("P4INCAST_TOOLCHAIN_BUNDLE", "toolchain bundle")
    args: list[str | Path] = ["--bundle", bundle]
    perf = os.environ.get("P4INCAST_BMV2_PERF_BUNDLE")
    if perf:
        args += ["--perf-bundle", perf]
    prefix = tmp_path / "root"
    proc = run(*args, "--prefix", prefix)
    assert proc.returncode == 0, proc.stderr
    assert "runs: p4c-bm2-ss --version" in proc.stdout
    assert "runs: simple_switch_grpc --help" in proc.stdout
    local = prefix / "usr/local"
    assert (local / "share/p4c/tna-include/tna.p4").is_file()
    env = {**os.environ, "LD_LIBRARY_PATH": str(local / "lib")}
    compiled = subprocess.run(
        [
            str(local / "bin/p4c-bm2-ss"),
            "-I",
            str(local / "share/p4c/p4include"),
            "--p4runtime-files",
            str(tmp_path / "p4info.txtpb"),
            "-o",
            str(tmp_path / "p4incast.json"),
            str(REPO / "p4src/v1model/main.p4"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert compiled.returncode == 0, compiled.stderr
    assert "ecn_policy" in (tmp_path / "p4info.txtpb").read_text()
    version = subprocess.run(
        [str(local / "bin/simple_switch_grpc"), "--version"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert version.returncode == 0 and version.stdout.strip(), version.stderr
    if perf:
        assert (prefix / "opt/bmv2-perf/bin/simple_switch_grpc").is_file()
        assert "runs: BMv2 performance build" in proc.stdout
