"""The runner's cluster and resume flags refuse bad input with one line and exit 2,
before anything runs or any folder is made (no Ray cluster needed)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from p4incast.engines.sim import ENGINE as SIM
from p4incast.experiments import config, results
from p4incast.experiments.ray_local import free_port

TINY = {
    "name": "tiny",
    "engine": "sim",
    "app": {"sru_bytes": 65536, "rounds": 2},
    "senders": [1, 2],
    "schemes": [{"name": "droptail", "ecn": "off", "cc": "reno"}],
}
HAVE_RAY = importlib.util.find_spec("ray") is not None


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "p4incast.reports.run_cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def write(tmp: Path, exp: dict[str, object]) -> Path:
    path = tmp / "e.yaml"
    path.write_text(yaml.safe_dump(exp))
    return path


@pytest.mark.parametrize(
    "value",
    ["local", "auto", "ray://head:10001", "10.0.0.5:6379", "ray://[::1]:10001"],
)
def test_cluster_key_accepts_addresses(value: str) -> None:
    assert config.parse({**TINY, "cluster": value}).cluster == value


@pytest.mark.parametrize("value", ["head", "ray://head", "http://head:1", 6379, "ray://:1"])
def test_cluster_key_refuses_other_values(value: object) -> None:
    with pytest.raises(config.ExperimentError, match="not local, auto, ray://HOST:PORT"):
        config.parse({**TINY, "cluster": value})


def test_bad_cluster_flag_is_one_line(tmp_path: Path) -> None:
    proc = cli(str(write(tmp_path, TINY)), "--cluster", "head", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "p4incast-run: --cluster: 'head' is not local, auto, ray://HOST:PORT or HOST:PORT"
    ]
    assert not (tmp_path / "o").exists()


@pytest.mark.skipif(not HAVE_RAY, reason="Ray is not installed (pip install -e '.[cluster]')")
def test_unreachable_cluster_is_one_line(tmp_path: Path) -> None:
    """Nothing listens there: refused in seconds (not Ray's 30 s timeout), no folder."""
    address = f"ray://127.0.0.1:{free_port()}"
    proc = cli(str(write(tmp_path, TINY)), "--cluster", address, "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"p4incast-run: cluster {address}: cannot reach 127.0.0.1:")
    assert "Connection refused" in line
    assert not (tmp_path / "o").exists()
    # the at-scale runner: the same executor, the same one line, no folder
    preset = Path(__file__).resolve().parents[2] / "experiments/papers/rcc-at-scale.yaml"
    small = ("--repeats", "1", "--loads", "0.5", "--schemes", "tcp")
    proc = cli(str(preset), *small, "--cluster", address, "--out", str(tmp_path / "a"))
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"p4incast-run: cluster {address}: cannot reach 127.0.0.1:")
    assert not (tmp_path / "a").exists()


@pytest.mark.skipif(SIM.unavailable() is not None, reason=f"simulator: {SIM.unavailable()}")
def test_resume_refuses_other_settings_and_missing_folders(tmp_path: Path) -> None:
    """--resume needs a folder of the same experiment with the same settings."""
    exp = write(tmp_path, TINY)
    other = config.parse({**TINY, "app": {"sru_bytes": 65536, "rounds": 3}})
    done = tmp_path / "done"
    rs = results.ResultSet(done, "tiny", other.as_dict())
    rs.add({"scheme": "droptail", "n": 1, "repeat": 0, "engine": "sim", "status": "ok"})
    proc = cli(str(exp), "--resume", str(done))
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"p4incast-run: --resume {done}: not this experiment's results "
        "(app.rounds: 3 there vs 2 now); resume with the same file and flags"
    ]
    proc = cli(str(exp), "--resume", str(tmp_path / "nowhere"))
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"p4incast-run: --resume {tmp_path / 'nowhere'}: no such results folder"
    ]
    proc = cli(str(exp), "--resume", str(done), "--out", str(tmp_path / "x"))
    assert proc.returncode == 2 and "not allowed with argument" in proc.stderr


@pytest.mark.skipif(SIM.unavailable() is not None, reason=f"simulator: {SIM.unavailable()}")
def test_resume_grows_the_sweep_but_never_drops_or_redefines(tmp_path: Path) -> None:
    """A folder run with fewer schemes and N values is finished by the whole file:
    only its missing points are run (--check says how many); a scheme it ran that
    the sweep drops or defines otherwise is refused."""
    droptail, marking = TINY["schemes"][0], {"name": "mark", "ecn": "tail", "k": 20, "cc": "dctcp"}
    exp = write(tmp_path, {**TINY, "schemes": [droptail, marking]})
    done = tmp_path / "done"
    part = config.parse({**TINY, "senders": [1]})
    rs = results.ResultSet(done, "tiny", part.as_dict())
    rs.add({"scheme": "droptail", "n": 1, "repeat": 0, "engine": "sim", "status": "ok"})
    proc = cli(str(exp), "--resume", str(done), "--check")
    assert proc.returncode == 0, proc.stderr
    assert "resuming" in proc.stdout and "1 of 4 runs finished ok, 3 to run" in proc.stdout
    for schemes, why in (
        ([marking], "scheme droptail there, not now"),
        ([{**droptail, "cc": "cubic"}, marking], 'scheme droptail.cc: "reno" there vs "cubic" now'),
    ):
        proc = cli(str(write(tmp_path, {**TINY, "schemes": schemes})), "--resume", str(done))
        assert proc.returncode == 2
        assert proc.stderr.splitlines() == [
            f"p4incast-run: --resume {done}: not this experiment's results ({why}); "
            "resume with the same file and flags"
        ]
