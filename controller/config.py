"""The controller's YAML config, loaded into dataclasses and validated whole.

Everything is checked before anything is written to the switch: unknown keys,
types, port numbers, MACs, prefixes, modes, K against the target's range and
the port's queue depth, routes pointing at ports the config does not declare.

    switch:                      # where and what the switch is
      address: 127.0.0.1:9559    # P4Runtime (simple_switch_grpc)
      device_id: 0
      election_id: 10
      thrift_port: 9090          # BMv2 thrift runtime (queue depth/rate)
      target: v1model            # v1model (K in packets) | tna (K in bytes)
    pipeline:                    # optional: defaults to build/<target>/p4incast.*
      p4info: build/v1model/p4incast.p4info.txtpb
      config: build/v1model/p4incast.json
    ports:
      1:
        mac: "00:00:00:00:01:01" # this switch port's MAC (routes' source MAC)
        queue_depth: 64          # packets, BMv2 egress queue capacity (optional)
        queue_rate: 1000         # packets/s, BMv2 egress queue drain rate (optional)
        ecn: {mode: front, k: 20, drop_k: 0}
    routes:
      - {prefix: 10.0.1.1/32, port: 1, dmac: "00:00:00:00:00:01"}
      - {prefix: "2001:db8::1/128", port: 1, dmac: "00:00:00:00:00:01"}
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from . import p4names
from .errors import ControllerError
from .target import PORT_MAX, TARGETS, Target

REPO = Path(__file__).resolve().parent.parent
_MAC = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


@dataclass(frozen=True)
class SwitchSettings:
    """How to reach the switch."""

    address: str = "127.0.0.1:9559"  # P4Runtime gRPC address
    device_id: int = 0  # P4Runtime device id (simple_switch_grpc --device-id)
    election_id: int = 10  # primary arbitration: highest id is primary
    thrift_port: int = 9090  # BMv2 thrift runtime port (queue depth/rate)
    target: str = "v1model"  # v1model | tna

    @property
    def target_profile(self) -> Target:
        return TARGETS[self.target]


@dataclass(frozen=True)
class Pipeline:
    """Compiled pipeline files (p4c output)."""

    p4info: Path
    config: Path

    @classmethod
    def default(cls, target: str = "v1model") -> Pipeline:
        base = REPO / "build" / target
        return cls(p4info=base / "p4incast.p4info.txtpb", config=base / "p4incast.json")

    def check(self, need_config: bool) -> None:
        missing = [p for p in ((self.p4info, self.config) if need_config else (self.p4info,))]
        missing = [p for p in missing if not p.is_file()]
        if missing:
            raise ControllerError(
                f"pipeline file {missing[0]} not found; run `make build` (needs p4c) "
                "or point pipeline.p4info / pipeline.config at your compiled files"
            )


@dataclass(frozen=True)
class EcnPolicy:
    """Per-port marking: mode off|tail|front, K and the Not-ECT drop threshold.

    k and drop_k are in the target's user unit (packets on v1model, bytes on tna);
    drop_k = 0 disables the drop.
    """

    mode: str = "off"
    k: int = 0
    drop_k: int = 0

    def check(self, target: Target, queue_depth: int | None, where: str) -> None:
        if self.mode not in p4names.ECN_MODES:
            raise ControllerError(
                f"{where}: ECN mode {self.mode!r} is not one of {', '.join(p4names.ECN_MODES)}"
            )
        if self.mode != "off":
            target.threshold(self.k, f"{where}: k")
            if queue_depth is not None and target.cell_bytes == 0 and self.k > queue_depth:
                raise ControllerError(
                    f"{where}: k={self.k} is above the port's queue depth {queue_depth} "
                    "packets, so it would never mark"
                )
        if self.drop_k:
            target.threshold(self.drop_k, f"{where}: drop_k", allow_zero=True)

    def encoded(self, target: Target) -> tuple[int, int, int]:
        """(mode, k, drop_k) as the pipeline's action parameters."""
        k = target.convert(self.k) if self.mode != "off" else 0
        drop_k = target.convert(self.drop_k) if self.drop_k else 0
        return p4names.ECN_MODES[self.mode], k, drop_k


@dataclass(frozen=True)
class PortConfig:
    """One switch port."""

    port: int
    mac: str
    queue_depth: int | None = None  # packets (BMv2 set_queue_depth)
    queue_rate: int | None = None  # packets per second (BMv2 set_queue_rate)
    ecn: EcnPolicy = field(default_factory=EcnPolicy)


@dataclass(frozen=True)
class Route:
    """An LPM route: prefix -> (port, next-hop MAC). IPv4 or IPv6 by the prefix."""

    prefix: str
    port: int
    dmac: str

    @property
    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        return ipaddress.ip_network(self.prefix, strict=False)


@dataclass(frozen=True)
class Config:
    """A whole switch: settings, pipeline, ports, routes."""

    switch: SwitchSettings
    pipeline: Pipeline
    ports: dict[int, PortConfig]
    routes: list[Route]


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ControllerError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _known_keys(data: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(str(k) for k in set(data) - allowed)
    if unknown:
        raise ControllerError(
            f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})"
        )


def _int(value: Any, where: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ControllerError(f"{where}: expected a whole number, got {value!r}")
    if not lo <= value <= hi:
        raise ControllerError(f"{where}: {value} is outside {lo}..{hi}")
    return value


def _mac(value: Any, where: str) -> str:
    if not isinstance(value, str) or not _MAC.match(value):
        raise ControllerError(f"{where}: {value!r} is not a MAC address like 00:11:22:33:44:55")
    return value.lower()


def check_port_number(port: Any, where: str = "port") -> int:
    return _int(port, where, 0, PORT_MAX)


def _dataclass_keys(cls: type) -> set[str]:
    return {f.name for f in fields(cls)}


def parse(data: Any, source: str = "config") -> Config:
    """Validate a parsed YAML document and build a Config (ControllerError on any problem)."""
    top = _mapping(data, source)
    _known_keys(top, {"switch", "pipeline", "ports", "routes"}, source)

    sw_data = _mapping(top.get("switch"), f"{source}: switch")
    _known_keys(sw_data, _dataclass_keys(SwitchSettings), f"{source}: switch")
    sw = SwitchSettings(**sw_data)
    if sw.target not in TARGETS:
        raise ControllerError(
            f"{source}: switch.target {sw.target!r} is not one of {', '.join(TARGETS)}"
        )
    if not isinstance(sw.address, str) or ":" not in sw.address:
        raise ControllerError(f"{source}: switch.address {sw.address!r} is not HOST:PORT")
    _int(sw.device_id, f"{source}: switch.device_id", 0, 2**64 - 1)
    _int(sw.election_id, f"{source}: switch.election_id", 1, 2**64 - 1)
    _int(sw.thrift_port, f"{source}: switch.thrift_port", 1, 65535)
    target = sw.target_profile

    pl_data = _mapping(top.get("pipeline"), f"{source}: pipeline")
    _known_keys(pl_data, {"p4info", "config"}, f"{source}: pipeline")
    default = Pipeline.default(sw.target)
    pipeline = Pipeline(
        p4info=Path(pl_data.get("p4info", default.p4info)),
        config=Path(pl_data.get("config", default.config)),
    )

    ports: dict[int, PortConfig] = {}
    macs: dict[str, int] = {}
    for key, pdata in _mapping(top.get("ports"), f"{source}: ports").items():
        where = f"{source}: ports.{key}"
        number = check_port_number(key, where)
        pdata = _mapping(pdata, where)
        _known_keys(pdata, {"mac", "queue_depth", "queue_rate", "ecn"}, where)
        if "mac" not in pdata:
            raise ControllerError(f"{where}: missing mac (this port's MAC address)")
        mac = _mac(pdata["mac"], f"{where}.mac")
        if mac in macs:
            raise ControllerError(f"{where}.mac: {mac} is already port {macs[mac]}'s MAC")
        macs[mac] = number
        depth = pdata.get("queue_depth")
        if depth is not None:
            _int(depth, f"{where}.queue_depth", 1, 1 << 16)
        rate = pdata.get("queue_rate")
        if rate is not None:
            _int(rate, f"{where}.queue_rate", 1, 10**7)
        edata = _mapping(pdata.get("ecn"), f"{where}.ecn")
        _known_keys(edata, _dataclass_keys(EcnPolicy), f"{where}.ecn")
        ecn = EcnPolicy(**edata)
        ecn.check(target, depth, f"{where}.ecn")
        ports[number] = PortConfig(number, mac, depth, rate, ecn)

    routes: list[Route] = []
    seen: dict[str, int] = {}
    raw_routes = top.get("routes") or []
    if not isinstance(raw_routes, list):
        raise ControllerError(f"{source}: routes must be a list")
    for i, rdata in enumerate(raw_routes):
        where = f"{source}: routes[{i}]"
        rdata = _mapping(rdata, where)
        _known_keys(rdata, _dataclass_keys(Route), where)
        for key in ("prefix", "port", "dmac"):
            if key not in rdata:
                raise ControllerError(f"{where}: missing {key}")
        try:
            net = ipaddress.ip_network(str(rdata["prefix"]), strict=False)
        except ValueError as err:
            raise ControllerError(f"{where}: {err}") from None
        port = check_port_number(rdata["port"], f"{where}.port")
        if port not in ports:
            raise ControllerError(
                f"{where}: port {port} is not declared under ports: (declared: "
                f"{', '.join(map(str, sorted(ports))) or 'none'})"
            )
        route = Route(str(net), port, _mac(rdata["dmac"], f"{where}.dmac"))
        if route.prefix in seen:
            raise ControllerError(
                f"{where}: prefix {route.prefix} repeats routes[{seen[route.prefix]}]"
            )
        seen[route.prefix] = i
        routes.append(route)

    return Config(switch=sw, pipeline=pipeline, ports=ports, routes=routes)


def load(path: Path) -> Config:
    """Read and validate a YAML config file."""
    try:
        text = path.read_text()
    except OSError as err:
        raise ControllerError(f"cannot read config {path}: {err.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ControllerError(f"{path}: not valid YAML: {err}") from None
    cfg = parse(data, str(path))
    # Relative pipeline paths are relative to the config file.
    pl = cfg.pipeline
    fix = [p if p.is_absolute() else (path.parent / p) for p in (pl.p4info, pl.config)]
    default = Pipeline.default(cfg.switch.target)
    if pl != default:
        pl = Pipeline(p4info=fix[0], config=fix[1])
    return Config(cfg.switch, pl, cfg.ports, cfg.routes)
