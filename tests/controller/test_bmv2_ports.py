"""A BMv2 port another process holds. The launcher (p4incast/bmv2.py): one line
naming the port and the process holding it, at once, and no switch left running.
p4incast-ctl, facing a hand-started switch that serves no gRPC because its thrift
port was taken: the same, at once, instead of a 30 s wait and "cannot reach"."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from p4incast import bmv2, tools
from p4incast.controller.config import Pipeline

GRPC, THRIFT = 50291, 9691  # this file's own: no other test or testbed uses them

BMV2_MISSING = tools.missing_reason("simple_switch_grpc")
needs_bmv2 = pytest.mark.skipif(BMV2_MISSING is not None, reason=BMV2_MISSING or "")

HOLDER = """
import socket, sys, time
s = socket.socket()
if sys.argv[2] == "listen":  # as a server would
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
if sys.argv[2] == "listen":
    s.listen()
print("holding", flush=True)
time.sleep(120)
"""


@pytest.fixture
def holder(request: pytest.FixtureRequest) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """A process of its own holding port `request.param[0]`: listening, or only bound
    (without SO_REUSEADDR, so that the switch's bind fails although nothing listens)."""
    port, how = request.param
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(port), how], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
        yield port, proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def comm(pid: int) -> str:
    return Path(f"/proc/{pid}/comm").read_text().strip()


@pytest.mark.bmv2
@needs_bmv2
@pytest.mark.parametrize(
    ("holder", "what"),
    [((THRIFT, "listen"), "thrift"), ((GRPC, "listen"), "P4Runtime (gRPC)")],
    indirect=["holder"],
)
def test_a_taken_port_is_one_line_naming_it_and_its_process(
    holder: tuple[int, subprocess.Popen[str]], what: str, tmp_path: Path
) -> None:
    port, proc = holder
    sw = bmv2.Bmv2Switch(ports={}, grpc_port=GRPC, thrift_port=THRIFT, log_file=tmp_path / "sw.log")
    t0 = time.monotonic()
    try:
        with pytest.raises(RuntimeError) as err:
            sw.start()
        took = time.monotonic() - t0
        assert sw.proc is None, "the launcher left its switch running"
    finally:
        sw.stop()
    line = str(err.value)
    assert line == (
        f"simple_switch_grpc: its {what} port {port} is taken by pid {proc.pid} "
        f"({comm(proc.pid)}); stop that or give the switch another {what} port"
    )
    assert took < 2, took


@pytest.mark.bmv2
@needs_bmv2
@pytest.mark.parametrize("holder", [(THRIFT, "bind")], indirect=True)
def test_a_port_bound_but_not_listened_on_is_caught_in_the_switchs_output(
    holder: tuple[int, subprocess.Popen[str]], tmp_path: Path
) -> None:
    """No listener for /proc to show before the start: the switch's own output
    says it could not bind, and the launcher stops it at once instead of waiting
    for a gRPC server that never comes."""
    port, _proc = holder
    sw = bmv2.Bmv2Switch(ports={}, grpc_port=GRPC, thrift_port=THRIFT, log_file=tmp_path / "sw.log")
    t0 = time.monotonic()
    try:
        with pytest.raises(RuntimeError) as err:
            sw.start(timeout=30)
        took = time.monotonic() - t0
        assert sw.proc is None, "the launcher left its switch running"
    finally:
        sw.stop()
    out = tmp_path / "sw.out"
    assert str(err.value) == (
        f"simple_switch_grpc could not bind its thrift port {port} (see {out})"
    )
    assert took < 5, took
    assert f"Could not bind to port {port}" in out.read_text()


@pytest.mark.bmv2
@needs_bmv2
def test_a_free_switch_starts_and_holds_both_ports(tmp_path: Path) -> None:
    sw = bmv2.Bmv2Switch(ports={}, grpc_port=GRPC, thrift_port=THRIFT)
    with sw:
        assert sw.proc is not None
        for port in (GRPC, THRIFT):
            assert tools.port_listeners(port) == [(sw.proc.pid, comm(sw.proc.pid))]
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", GRPC)) == 0
    assert tools.port_listeners(GRPC) == [] and tools.port_listeners(THRIFT) == []


CLASH = (
    "BMv2's thrift port {port} is taken by pid {pid} ({comm}), not a switch; a "
    "simple_switch_grpc started on it serves no gRPC: start the switch with another "
    "--thrift-port and give p4incast-ctl the same (--thrift-port)"
)


def ctl(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "p4incast.controller", *args],
        capture_output=True,
        text=True,
        timeout=90,
    )
    return out, time.monotonic() - t0


@pytest.mark.parametrize("holder", [(THRIFT, "listen")], indirect=True)
@pytest.mark.parametrize("cmd", ["stats", "apply", "set-queue"])
def test_ctl_names_the_thrift_port_clash_at_once(
    holder: tuple[int, subprocess.Popen[str]], cmd: str, tmp_path: Path
) -> None:
    """Nothing serves gRPC on GRPC (as when simple_switch_grpc lost its thrift port)
    and THRIFT is held by a process that is not a switch, as Prometheus holds 9090:
    every command says so in one line, within seconds. `apply` with queue settings
    and `set-queue` used to wait 30 s for simple_switch_CLI talking to that process;
    both now ask the thrift runtime before writing anything, and name the clash."""
    port, proc = holder
    clash = CLASH.format(port=port, pid=proc.pid, comm=comm(proc.pid))
    unreachable = f"cannot reach the switch's P4Runtime server at 127.0.0.1:{GRPC}: {clash}"
    where = ["--address", f"127.0.0.1:{GRPC}", "--thrift-port", str(port)]
    if cmd == "stats":
        out, took = ctl(*where, "stats")
        expected = unreachable
    elif cmd == "set-queue":
        out, took = ctl(*where, "set-queue", "--port", "1", "--rate", "100")
        expected = clash
    else:
        pipeline = Pipeline.default()
        if pipeline.config is None or not pipeline.config.is_file():
            pytest.skip(f"{pipeline.config} not built (make build needs p4c-bm2-ss)")
        cfg = tmp_path / "switch.yaml"
        cfg.write_text(
            yaml.safe_dump(
                {
                    "switch": {"address": f"127.0.0.1:{GRPC}", "thrift_port": port},
                    "ports": {1: {"mac": "00:aa:00:00:00:01", "queue_rate": 100}},
                    "routes": [],
                }
            )
        )
        out, took = ctl("apply", str(cfg))
        expected = clash  # its queue setting's thrift runtime is checked before any write
    assert out.returncode == 2 and not out.stdout, out
    assert out.stderr.strip() == f"p4incast-ctl: error: {expected}", out.stderr
    assert took < 10, took
