"""The controller's config validation: every bad input is one clear error."""

from __future__ import annotations

import copy

import pytest

from p4incast.controller import addresses, config
from p4incast.controller.config import EcnPolicy, PortConfig, Route
from p4incast.controller.errors import ControllerError
from p4incast.controller.targets import TNA, V1MODEL
from p4incast.model.ecn import EcnMode

GOOD = {
    "switch": {"address": "127.0.0.1:9559", "device_id": 0},
    "ports": {
        1: {"mac": "00:00:00:00:01:01", "queue_depth": 64, "ecn": {"mode": "front", "k": 20}},
        2: {"mac": "00:00:00:00:01:02"},
    },
    "routes": [
        {"prefix": "10.0.1.1/32", "port": 1, "dmac": "00:00:00:00:00:01"},
        {"prefix": "2001:db8::2/128", "port": 2, "dmac": "00:00:00:00:00:02"},
    ],
}


def with_change(path: tuple, value: object) -> dict:
    data = copy.deepcopy(GOOD)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


def test_good_config_parses_with_defaults() -> None:
    cfg = config.parse(GOOD)
    assert cfg.switch.target == "v1model"
    assert cfg.switch.thrift_port == 9090
    assert cfg.ports[1].ecn.encoded(V1MODEL) == (2, 20, 0)
    assert cfg.ports[2].ecn.mode == "off"
    assert [r.prefix for r in cfg.routes] == ["10.0.1.1/32", "2001:db8::2/128"]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("ports", 1, "ecn", "mode"), "middle", "not one of off, tail, front"),
        (("ports", 1, "ecn", "k"), 0, "outside what v1model can hold"),
        (("ports", 1, "ecn", "k"), 1 << 19, "outside what v1model can hold"),
        (("ports", 1, "ecn", "k"), 64, r"k=64 packets is not below the queue \(64 packets\)"),
        (("ports", 1, "ecn", "mode"), True, "True is not one of off, tail, front"),
        (("ports", 1, "queue_depth"), 0, "queue_depth=0 is outside 1..65536 packets"),
        (("ports", 1, "queue_rate"), "fast", "queue_rate must be a whole number"),
        (("ports", 1, "ecn", "k"), "20", "whole number"),
        (("ports", 1, "mac"), "00:00:00:00:01", "not a MAC"),
        (("ports", 1, "colour"), "red", "unknown key 'colour'"),
        (("ports", 600), {"mac": "00:00:00:00:06:00"}, "outside 0..511"),
        (("routes", 0, "port"), 7, "port 7 is not declared"),
        (("routes", 0, "prefix"), "10.0.1.300/32", "does not appear to be an IPv4 or IPv6"),
        (("switch", "target"), "tofino9", "not one of v1model, tna"),
        (("switch", "address"), "localhost", "not HOST:PORT"),
    ],
)
def test_bad_config_is_one_clear_error(path: tuple, value: object, message: str) -> None:
    with pytest.raises(ControllerError, match=message):
        config.parse(with_change(path, value))


def test_duplicate_prefix_and_mac_refused() -> None:
    data = copy.deepcopy(GOOD)
    data["routes"].append(dict(data["routes"][0]))
    with pytest.raises(ControllerError, match="repeats routes\\[0\\]"):
        config.parse(data)
    data = with_change(("ports", 2, "mac"), "00:00:00:00:01:01")
    with pytest.raises(ControllerError, match="already port 1"):
        config.parse(data)


def test_tna_k_is_bytes_converted_to_cells() -> None:
    assert TNA.unit.threshold(1600) == 20  # 80-byte cells
    assert TNA.unit.threshold(1601) == 21  # rounded up to whole cells
    with pytest.raises(ControllerError, match="1..41942960 bytes"):
        TNA.unit.threshold(80 * (1 << 19))


def test_load_reports_missing_file_and_bad_yaml(tmp_path) -> None:
    with pytest.raises(ControllerError, match="cannot read config"):
        config.load(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("ports: [1, 2\n")
    with pytest.raises(ControllerError, match="not valid YAML"):
        config.load(bad)


def test_shipped_example_config_is_valid() -> None:
    cfg = config.load(config.REPO / "examples" / "switch.yaml")
    assert cfg.ports[3].ecn.mode == "front" and cfg.ports[3].queue_rate == 1000
    assert len(cfg.routes) == 4


def test_bare_off_mode_in_yaml_loads(tmp_path) -> None:
    # YAML 1.1 reads a bare `off` as false; it still means ECN off (EcnMode.parse).
    path = tmp_path / "off.yaml"
    path.write_text(
        "ports:\n"
        '  1: {mac: "00:00:00:00:01:01", queue_depth: 64, ecn: {mode: off}}\n'
        '  2: {mac: "00:00:00:00:01:02", ecn: {mode: off, k: 5}}\n'
    )
    cfg = config.load(path)
    assert cfg.ports[1].ecn.mode is EcnMode.OFF and cfg.ports[2].ecn.mode is EcnMode.OFF
    assert cfg.ports[2].ecn.encoded(V1MODEL) == (0, 0, 0)  # off writes no K


def test_ecn_policy_takes_mode_as_string_enum_or_false() -> None:
    # EcnPolicy(scheme.ecn, scheme.k) with a str mode is how experiments build it.
    assert EcnPolicy("front", 20) == EcnPolicy(EcnMode.FRONT, 20)
    assert EcnPolicy(False).mode is EcnMode.OFF
    assert EcnPolicy("tail", 3).encoded(V1MODEL) == (EcnMode.TAIL.code, 3, 0)
    with pytest.raises(ControllerError, match="'middle' is not one of off, tail, front"):
        EcnPolicy("middle")


def test_k_below_queue_depth_is_the_model_rule() -> None:
    # 1 <= K < queue (p4incast.model.scheme.check_k), raised as a ControllerError.
    assert config.parse(with_change(("ports", 1, "ecn", "k"), 63)).ports[1].ecn.k == 63
    with pytest.raises(ControllerError, match="not below the queue") as err:
        config.parse(with_change(("ports", 1, "ecn", "k"), 64))
    assert type(err.value) is ControllerError  # converted, not the model's ModelError
    # No queue depth configured: only the depth field's range applies.
    assert config.parse(with_change(("ports", 2, "ecn"), {"mode": "tail", "k": 500}))


@pytest.mark.parametrize("key", ["queue_depth", "queue_rate"])
def test_tna_refuses_queue_settings(key: str) -> None:
    data = {
        "switch": {"target": "tna"},
        "ports": {3: {"mac": "00:00:00:00:01:03", key: 64, "ecn": {"mode": "tail", "k": 1600}}},
    }
    with pytest.raises(ControllerError, match=r"ports\.3: no queue_depth/queue_rate on tna"):
        config.parse(data)
    del data["ports"][3][key]
    cfg = config.parse(data)
    assert cfg.ports[3].ecn.encoded(TNA) == (EcnMode.TAIL.code, 20, 0)  # 1600 B = 20 cells


def test_check_validates_a_config_built_in_code() -> None:
    # The testbed builds Config objects directly; app.apply checks them like YAML.
    good = config.parse(GOOD)
    config.check(good)
    bad_k = config.Config(
        good.switch,
        good.pipeline,
        {1: PortConfig(1, "00:00:00:00:01:01", queue_depth=8, ecn=EcnPolicy("front", 8))},
        [],
    )
    with pytest.raises(ControllerError, match=r"port 1\.ecn: k=8 packets is not below"):
        config.check(bad_k)
    stray = config.Config(
        good.switch, good.pipeline, {}, [Route("10.0.0.0/8", 4, "00:" * 5 + "01")]
    )
    with pytest.raises(ControllerError, match="port 4 is not among the ports"):
        config.check(stray)


def test_election_ids_are_p4runtime_uint128() -> None:
    """P4Runtime's election_id is a Uint128 (p4runtime.proto, MasterArbitrationUpdate):
    1..2^128-1, from the YAML and from --election-id alike (both go through parse)."""
    for good in (1, 2**64 - 1, 2**64, 2**128 - 1):
        assert config.parse(with_change(("switch", "election_id"), good)).switch.election_id == good
    for bad in (0, 2**128):
        with pytest.raises(
            ControllerError, match=rf"switch\.election_id: {bad} is outside 1\.\.{2**128 - 1}$"
        ):
            config.parse(with_change(("switch", "election_id"), bad))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("10.0.0.2:9090", "switch.thrift_address '10.0.0.2:9090': give the host alone; its "
         "port is switch.thrift_port (--thrift-port)"),
        ("", "switch.thrift_address: expected a host name or IP address, got ''"),
        (9090, "switch.thrift_address: expected a host name or IP address, got 9090"),
    ],
)  # fmt: skip
def test_bad_thrift_address_refused(value: object, message: str) -> None:
    with pytest.raises(ControllerError) as err:
        config.parse(with_change(("switch", "thrift_address"), value), "t.yaml")
    assert str(err.value) == f"t.yaml: {message}"


def test_thrift_goes_to_the_switch_named_never_to_a_guess() -> None:
    """The thrift host is switch.thrift_address, else the P4Runtime address's host when
    that is loopback; a remote switch without one has none, and a queue setting for it
    is refused with the fix."""
    local = config.parse(with_change(("switch", "address"), "[::1]:9559")).switch
    assert local.thrift is not None and str(local.thrift) == "[::1]:9090"
    named = config.parse(with_change(("switch", "thrift_address"), "10.0.0.2")).switch
    assert named.thrift is not None and str(named.thrift) == "10.0.0.2:9090"
    remote = config.parse(with_change(("switch", "address"), "10.0.0.2:9559")).switch
    assert remote.thrift is None
    with pytest.raises(ControllerError) as err:
        remote.queue_thrift("port 1's queue_depth/queue_rate")
    assert str(err.value) == (
        "port 1's queue_depth/queue_rate: queues are set through BMv2's thrift runtime, and "
        "the switch at 10.0.0.2:9559 is not on loopback: name the host its thrift runtime "
        "listens on (switch.thrift_address / --thrift-address)"
    )


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.3.2.1", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),  # /etc/hosts: loopback only
        ("10.0.0.2", False),
        ("::ffff:10.0.0.2", False),
        ("0.0.0.0", False),
        ("switch1.invalid", False),  # any other name: not loopback, never resolved
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert addresses.is_loopback(host) is loopback
