"""Targets own what differs between BMv2 and Tofino; the CLI alone prints and exits.

No switch needed: the BMv2 target's thrift I/O is exercised by
test_bmv2_controller.py; here its pure parts and the TNA refusals.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from ctlrun import ctl

from p4incast.controller import units
from p4incast.controller.errors import ControllerError
from p4incast.controller.targets import TARGETS, TNA, V1MODEL, QueueSetting, ThriftAddress, get
from p4incast.controller.targets.bmv2 import parse_show_ports, queue_commands
from p4incast.controller.targets.tna import NO_QUEUES

CONTROLLER = Path(__file__).resolve().parents[2] / "controller"


def test_registry_keys_and_depth_units() -> None:
    assert set(TARGETS) == {"v1model", "tna"}
    assert TARGETS["v1model"] is V1MODEL and V1MODEL.unit is units.BMV2
    assert TARGETS["tna"] is TNA and TNA.unit is units.TOFINO1
    with pytest.raises(ControllerError, match="'psa' is not one of v1model, tna"):
        get("psa")


def test_v1model_k_rule_needs_k_below_the_queue() -> None:
    V1MODEL.check_k(63, 64, "port 2")
    V1MODEL.check_k(500, None, "port 2")  # no queue depth: the field's range only
    with pytest.raises(ControllerError, match=r"port 2: k=64 packets is not below the queue"):
        V1MODEL.check_k(64, 64, "port 2")
    with pytest.raises(ControllerError, match="outside what v1model can hold"):
        V1MODEL.check_k(0, 64, "port 2")


def test_tna_k_range_in_bytes() -> None:
    TNA.check_k(41_942_960, None, "port 1")
    with pytest.raises(ControllerError, match=r"use 1\.\.41942960 bytes"):
        TNA.check_k(41_942_961, None, "port 1")


def test_bmv2_queue_commands_and_ranges() -> None:
    assert queue_commands(3, depth=64, rate=1000) == [
        "set_queue_depth 64 3",
        "set_queue_rate 1000 3",
    ]
    assert queue_commands(3, rate=5) == ["set_queue_rate 5 3"]
    V1MODEL.check_queue(QueueSetting(65536, 10**7), "port 3")
    with pytest.raises(ControllerError, match="queue_depth=65537 is outside 1..65536 packets"):
        V1MODEL.check_queue(QueueSetting(depth=65537), "port 3")
    with pytest.raises(ControllerError, match="queue_rate=0 is outside"):
        V1MODEL.check_queue(QueueSetting(rate=0), "port 3")


def test_bmv2_show_ports_parsing() -> None:
    out = (
        "Obtaining JSON from switch...\nDone\nControl utility for runtime P4 table "
        "manipulation\nRuntimeCmd: port # | iface name | status | extra info\n"
        "========================================\n"
        "1      p4c1s      UP\n"
        "2      p4c2s      UP\n"
        "RuntimeCmd: \n"
    )
    assert parse_show_ports(out) == {1: "p4c1s", 2: "p4c2s"}


def test_tna_refuses_queues_and_cannot_list_ports() -> None:
    TNA.check_queue(QueueSetting(), "port 1")  # nothing asked: fine
    for setting in (QueueSetting(depth=64), QueueSetting(rate=1000)):
        with pytest.raises(ControllerError, match=r"port 1: .*traffic-manager \(TM\) API"):
            TNA.check_queue(setting, "port 1")
        with pytest.raises(ControllerError, match="not BMv2's thrift runtime"):
            TNA.set_queues({1: setting}, ThriftAddress("127.0.0.1", 9090))
    TNA.set_queues({}, ThriftAddress("127.0.0.1", 9090))
    assert TNA.existing_ports(ThriftAddress("127.0.0.1", 9090)) is None  # trust the config


def test_cli_set_queue_on_tna_is_one_error() -> None:
    # Refused before any thrift or P4Runtime connection: no switch is needed.
    proc = ctl("--target", "tna", "set-queue", "--port", "1", "--depth", "64")
    assert proc.returncode == 2, proc
    want = f"p4incast-ctl: error: port 1: no queue_depth/queue_rate on tna; {NO_QUEUES}"
    assert proc.stderr.strip().splitlines() == [want]


def test_cli_mode_goes_through_the_model_parser(tmp_path: Path) -> None:
    proc = ctl("set-ecn", "--port", "1", "--mode", "middle")
    assert proc.returncode == 2 and "'middle' is not one of off, tail, front" in proc.stderr
    # A config whose bare `off` YAML reads as false is accepted by the CLI too: the
    # next error is the K rule of the live change, not the config's mode.
    cfg = tmp_path / "switch.yaml"
    cfg.write_text('ports:\n  1: {mac: "00:00:00:00:01:01", queue_depth: 8, ecn: {mode: off}}\n')
    proc = ctl("--config", str(cfg), "set-ecn", "--port", "1", "--mode", "tail", "--k", "8")
    assert proc.returncode == 2, proc
    assert proc.stderr.strip().splitlines() == [
        "p4incast-ctl: error: port 1: k=8 packets is not below the queue (8 packets): "
        "nothing would ever be marked"
    ]


_CLI_ONLY_CALLS = {"print", "exit", "quit"}
_CLI_ONLY_ATTRS = {("sys", "exit"), ("logging", "basicConfig"), ("os", "_exit")}
_CLI_ONLY_IMPORTS = {"argparse"}


def test_only_main_parses_arguments_prints_configures_logging_or_exits() -> None:
    offenders: list[str] = []
    for path in sorted(CONTROLLER.rglob("*.py")):
        if path.name == "__main__.py":
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(CONTROLLER)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Name) and node.id in _CLI_ONLY_CALLS | {"SystemExit"}:
                offenders.append(f"{where} {node.id}")
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if (node.value.id, node.attr) in _CLI_ONLY_ATTRS:
                    offenders.append(f"{where} {node.value.id}.{node.attr}")
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if _CLI_ONLY_IMPORTS & set(names):
                    offenders.append(f"{where} import argparse")
    assert offenders == []
