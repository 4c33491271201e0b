"""Root loads no BPF object that anyone but root could have changed.

The agent runs as root; an object in build/agent/ (or $P4INCAST_AGENT_BPF_DIR)
is kernel code it loads, and a struct_ops congestion control it registers stays
for every socket of the host. `Lib.open_object` refuses an object or a directory
owned by another user or writable by group or others, or an object that is a
symbolic link, naming the file and the fix, before libbpf reads it: for the
data path (`p4incast-agent run`) and for `p4incast-agent cc load` alike. The
objects `make build` writes as root pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from p4incast.agent import cc
from p4incast.agent.datapath import default_bpf_dir
from p4incast.agent.libbpf import UntrustedObject, lib

BUILT = default_bpf_dir()
OBJECTS = ("rxwin.bpf.o", "p4i_dctcp.bpf.o")
NOBODY = 65534

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chown to another user)"),
    pytest.mark.skipif(
        not all((BUILT / o).exists() for o in OBJECTS),
        reason=f"{BUILT} not built (make build: clang, bpftool)",
    ),
]


@pytest.fixture
def bpf_dir(tmp_path: Path) -> Path:
    """A copy of the built objects in a root-owned 0755 directory."""
    d = tmp_path / "bpf"
    d.mkdir(mode=0o755)
    for o in OBJECTS:
        shutil.copy(BUILT / o, d / o)
        (d / o).chmod(0o644)
    return d


def agent(bpf_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "P4INCAST_AGENT_BPF_DIR": str(bpf_dir)}
    return subprocess.run(
        [sys.executable, "-m", "p4incast.agent", *args],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip


def test_what_make_build_wrote_as_root_is_accepted() -> None:
    for o in OBJECTS:
        lib().open_object(BUILT / o)  # raises if refused
        st = (BUILT / o).stat()
        assert st.st_uid == 0 and st.st_mode & 0o022 == 0, oct(st.st_mode)


def test_a_trusted_copy_is_accepted(bpf_dir: Path) -> None:
    lib().open_object(bpf_dir / "rxwin.bpf.o")


@pytest.mark.parametrize(
    ("spoil", "culprit", "why"),
    [
        (lambda d: (d / "rxwin.bpf.o").chmod(0o664), "rxwin.bpf.o",
         "writable by group or others (mode 0664)"),
        (lambda d: (d / "rxwin.bpf.o").chmod(0o646), "rxwin.bpf.o",
         "writable by group or others (mode 0646)"),
        (lambda d: os.chown(d / "rxwin.bpf.o", NOBODY, NOBODY), "rxwin.bpf.o",
         f"owned by uid {NOBODY}, not root"),
        (lambda d: d.chmod(0o777), "", "writable by group or others (mode 0777)"),
        (lambda d: os.chown(d, NOBODY, NOBODY), "", f"owned by uid {NOBODY}, not root"),
    ],
)  # fmt: skip
def test_an_object_others_could_change_is_refused(
    bpf_dir: Path, spoil: object, culprit: str, why: str
) -> None:
    spoil(bpf_dir)  # type: ignore[operator]
    path = bpf_dir / culprit if culprit else bpf_dir
    with pytest.raises(UntrustedObject) as err:
        lib().open_object(bpf_dir / "rxwin.bpf.o")
    msg = str(err.value)
    assert f"refusing to load BPF from {path}: {why}" in msg
    assert msg.endswith(f"Fix: chown root: {path} && chmod go-w {path}")


def test_a_symbolic_link_is_refused(bpf_dir: Path, tmp_path: Path) -> None:
    (bpf_dir / "rxwin.bpf.o").rename(tmp_path / "elsewhere.o")
    (bpf_dir / "rxwin.bpf.o").symlink_to(tmp_path / "elsewhere.o")
    with pytest.raises(UntrustedObject, match="rxwin.bpf.o: a symbolic link"):
        lib().open_object(bpf_dir / "rxwin.bpf.o")


def test_agent_run_refuses_in_one_line_before_attaching(bpf_dir: Path) -> None:
    obj = bpf_dir / "rxwin.bpf.o"
    obj.chmod(0o666)
    proc = agent(bpf_dir, "run", "--iface", "lo", "--policy", "observe")
    assert proc.returncode == 2 and not proc.stdout, proc
    assert proc.stderr == (
        f"p4incast-agent: refusing to load BPF from {obj}: writable by group or others "
        "(mode 0666); whoever can change it runs code in the kernel as root. "
        f"Fix: chown root: {obj} && chmod go-w {obj}\n"
    ), proc.stderr


def test_cc_load_registers_nothing_from_a_writable_directory(bpf_dir: Path) -> None:
    if "p4i_dctcp" in cc.available():
        pytest.skip("p4i_dctcp is registered already (another run's); cc load would skip it")
    bpf_dir.chmod(0o775)
    proc = agent(bpf_dir, "cc", "load")
    assert proc.returncode == 2 and not proc.stdout, proc
    assert proc.stderr.startswith(
        f"p4incast-agent: refusing to load BPF from {bpf_dir}: writable by group or others "
        "(mode 0775)"
    ), proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert "p4i_dctcp" not in cc.available()
