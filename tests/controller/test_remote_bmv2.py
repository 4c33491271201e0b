"""A switch that is not on loopback: simple_switch_grpc in a network namespace
the test makes, reached over a veth pair at 10.199.44.2 (its P4Runtime and its
thrift runtime answer there only; nothing listens on this host's loopback).

Plaintext P4Runtime to it is refused in one line unless asked for
(--plaintext, switch.plaintext), and nothing reaches the switch. Queue settings
go to its thrift runtime only when named (switch.thrift_address,
--thrift-address): without one they are refused, and with a thrift runtime
that does not answer, nothing at all is written (not even the pipeline).
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from ctlrun import bmv2_unavailable, ctl

from p4incast import bmv2, tools
from p4incast.controller import app
from p4incast.controller.config import Pipeline, SwitchSettings
from p4incast.controller.connection import connect
from p4incast.experiments.ray_local import free_port

PIPELINE = Pipeline.default()
GRPC, THRIFT = 50095, 9415
NS = "p4ctl-remote"
HOST_IF, SW_IF = "p4ctlr0", "p4ctlr1"
HOST_IP, SW_IP = "10.199.44.1", "10.199.44.2"
ADDRESS = f"{SW_IP}:{GRPC}"
REFUSED = (
    f"p4incast-ctl: error: the switch at {ADDRESS} is not on loopback and this client has "
    "no TLS settings: give switch.tls.ca (--tls-ca) (mutual TLS: with switch.tls.cert "
    "(--tls-cert) and switch.tls.key (--tls-key)), or switch.plaintext: true (--plaintext) "
    "to speak plaintext P4Runtime to it on a network you trust\n"
)


WHY_NOT = bmv2_unavailable(root=True)

pytestmark = [
    pytest.mark.bmv2,
    pytest.mark.root,
    pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or ""),
]


class RemoteSwitch(bmv2.Bmv2Switch):
    """simple_switch_grpc in namespace NS, its P4Runtime server on SW_IP."""

    @property
    def grpc_addr(self) -> str:
        return ADDRESS


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def _answers(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


@pytest.fixture(scope="module")
def switch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteSwitch]:
    subprocess.run(["ip", "netns", "del", NS], capture_output=True)
    subprocess.run(["ip", "link", "del", HOST_IF], capture_output=True)
    _ip("netns", "add", NS)
    sw = RemoteSwitch(
        ports={},
        grpc_port=GRPC,
        thrift_port=THRIFT,
        netns=NS,
        log_file=tmp_path_factory.mktemp("remote") / "switch.log",
    )
    try:
        _ip("link", "add", HOST_IF, "type", "veth", "peer", "name", SW_IF)
        _ip("link", "set", SW_IF, "netns", NS)
        _ip("addr", "add", f"{HOST_IP}/29", "dev", HOST_IF)
        _ip("link", "set", HOST_IF, "up")
        _ip("netns", "exec", NS, "ip", "addr", "add", f"{SW_IP}/29", "dev", SW_IF)
        _ip("netns", "exec", NS, "ip", "link", "set", SW_IF, "up")
        _ip("netns", "exec", NS, "ip", "link", "set", "lo", "up")
        sw.start()
        deadline = time.monotonic() + 20
        while not (_answers(SW_IP, GRPC) and _answers(SW_IP, THRIFT)):
            assert sw.alive() and time.monotonic() < deadline, "the switch did not come up"
            time.sleep(0.1)
        # the thrift runtime is not on this host's loopback: the CLI's default misses it
        assert not _answers("127.0.0.1", THRIFT) and tools.port_listeners(THRIFT) == []
        yield sw
    finally:
        sw.stop()
        subprocess.run(["ip", "netns", "del", NS], capture_output=True)
        subprocess.run(["ip", "link", "del", HOST_IF], capture_output=True)


def write_config(path: Path, queues: bool = False, **switch: object) -> Path:
    port2: dict[str, object] = {"mac": "00:aa:00:00:00:02", "ecn": {"mode": "tail", "k": 5}}
    if queues:
        port2.update(queue_depth=64, queue_rate=1000)
    path.write_text(
        yaml.safe_dump(
            {
                "switch": {"address": ADDRESS, "thrift_port": THRIFT, **switch},
                "pipeline": {"p4info": str(PIPELINE.p4info), "config": str(PIPELINE.config)},
                "ports": {1: {"mac": "00:aa:00:00:00:01"}, 2: port2},
                "routes": [{"prefix": "10.0.2.0/24", "port": 2, "dmac": "00:bb:00:00:00:02"}],
            }
        )
    )
    return path


def read_tables() -> dict[str, int]:
    """How many entries each managed table holds (plaintext, as asked)."""

    async def _read() -> dict[str, int]:
        settings = SwitchSettings(address=ADDRESS, thrift_port=THRIFT, plaintext=True)
        async with connect(settings, PIPELINE) as sw:
            out: dict[str, int] = {}
            for e in await app.read_entries(sw):
                table = e.table_id.split(".")[-1]
                out[table] = out.get(table, 0) + 1
            return out

    return asyncio.run(_read())


def assert_untouched() -> None:
    """Nothing was ever written: the switch still runs no pipeline."""
    proc = ctl("--address", ADDRESS, "--plaintext", "stats")
    assert proc.returncode == 2 and "runs no pipeline yet" in proc.stderr, proc


def test_plaintext_refused_off_loopback_unless_asked(switch: RemoteSwitch, tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "switch.yaml")
    for args in (
        ("apply", str(cfg)),
        ("apply", str(cfg), "--keep"),
        ("--address", ADDRESS, "push"),
        ("--address", ADDRESS, "stats"),
        ("--config", str(cfg), "set-ecn", "--port", "2", "--mode", "front", "--k", "3"),
        ("--config", str(cfg), "export", "--listen", f"127.0.0.1:{free_port()}"),
    ):
        proc = ctl(*args)
        assert proc.returncode == 2 and not proc.stdout, (args, proc)
        assert proc.stderr == REFUSED, (args, proc.stderr)
    assert_untouched()
    # asked for: the flag, or switch.plaintext in the YAML
    assert "1 routes, 2 ports; 4 updates" in ctl("--plaintext", "apply", str(cfg)).stdout
    asked = write_config(tmp_path / "asked.yaml", plaintext=True)
    assert "1 routes, 2 ports; 0 updates" in ctl("apply", str(asked)).stdout
    assert read_tables() == {"routes_v4": 1, "ecn_policy": 1}


def test_thrift_goes_to_the_switch_named_or_nothing_is_written(
    switch: RemoteSwitch, tmp_path: Path
) -> None:
    push = ctl("--address", ADDRESS, "--plaintext", "push", "--force")  # no entries
    assert push.returncode == 0 and read_tables() == {}, push
    # queue settings for a remote switch without a thrift address: refused, nothing written
    unnamed = write_config(tmp_path / "unnamed.yaml", queues=True, plaintext=True)
    proc = ctl("apply", str(unnamed))
    assert proc.returncode == 2 and not proc.stdout, proc
    assert proc.stderr == (
        "p4incast-ctl: error: port 2's queue_depth/queue_rate: queues are set through BMv2's "
        f"thrift runtime, and the switch at {ADDRESS} is not on loopback: name the host its "
        "thrift runtime listens on (switch.thrift_address / --thrift-address)\n"
    )
    proc = ctl("--config", str(unnamed), "set-queue", "--port", "2", "--rate", "100")
    assert proc.returncode == 2 and "port 2: queues are set through BMv2's" in proc.stderr
    # a thrift address where no thrift runtime answers: nothing written either
    wrong = write_config(
        tmp_path / "wrong.yaml", queues=True, plaintext=True, thrift_address=HOST_IP
    )
    proc = ctl("apply", str(wrong))
    assert proc.returncode == 2 and not proc.stdout, proc
    assert proc.stderr.startswith(
        f"p4incast-ctl: error: cannot reach BMv2's thrift runtime at {HOST_IP}:{THRIFT} "
    ), proc.stderr
    assert read_tables() == {}
    # named: the queues go to the switch's own thrift runtime (nothing on this host's)
    named = write_config(tmp_path / "named.yaml", queues=True, plaintext=True, thrift_address=SW_IP)
    proc = ctl("apply", str(named))
    assert proc.returncode == 0 and "1 routes, 2 ports; 4 updates" in proc.stdout, proc
    assert read_tables() == {"routes_v4": 1, "ecn_policy": 1}
    proc = ctl(
        "--address", ADDRESS, "--plaintext", "--thrift-address", SW_IP,
        "--thrift-port", str(THRIFT), "set-queue", "--port", "2", "--rate", "100",
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout == "port 2: queue depth=None rate=100\n", proc
