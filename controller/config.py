"""The controller's YAML config, loaded into dataclasses and validated whole.

Everything is checked before anything is written to the switch: unknown keys,
types, port numbers, MACs, prefixes, modes, K against the target's range and
the port's queue depth, queue settings the target cannot apply, routes
pointing at ports the config does not declare. The rules that are not the
YAML's own come from elsewhere, stated once: ECN modes from
`p4incast.model.ecn.EcnMode`, K against the queue and the queue settings from
the target (`targets`), K's range from its depth unit (`units`).

    switch:                      # where and what the switch is
      address: 127.0.0.1:9559    # P4Runtime (simple_switch_grpc)
      device_id: 0
      election_id: 10            # primary arbitration, 1..2^128-1 (P4Runtime's Uint128)
      thrift_port: 9090          # BMv2 thrift runtime (queue depth/rate)
      # thrift_address: 10.0.0.2 # its host; default: the host of `address` if loopback,
                                 # else none (queue settings are then refused)
      target: v1model            # v1model (K in packets) | tna (K in bytes, no queue_*)
      runtime: stratum           # tna only: stratum | bf-switchd, the P4Runtime server
      bf_switchd_parts: 5        # bf-switchd: 5 (with pipe name, bf-rt.json) | 3 (PI's)
      plaintext: false           # true: plaintext P4Runtime to a non-loopback address
      tls:                       # TLS to P4Runtime (without it: plaintext, loopback only)
        ca: certs/ca.pem         # TLS: the CA that signed the switch's certificate
        cert: certs/ctl.pem      # mutual TLS: our certificate and its key (both or neither)
        key: certs/ctl.key
        server_name: switch1     # the name to check in the switch's certificate
                                 # (default: the host of `address`)
    pipeline:                    # optional: defaults to build/<target>/p4incast.*
      p4info: build/v1model/p4incast.p4info.txtpb
      config: build/v1model/p4incast.json   # v1model: BMv2 JSON, sent as is
      # build_dir: build/tna     # tna instead of config: bf-p4c's output (tofino.bin,
      #                          # context.json, bf-rt.json; p4info defaults to in it)
    ports:
      1:
        mac: "00:00:00:00:01:01" # this switch port's MAC (routes' source MAC)
        queue_depth: 64          # packets, BMv2 egress queue capacity (optional; K < it)
        queue_rate: 1000         # packets/s, BMv2 egress queue drain rate (optional)
        ecn: {mode: front, k: 20, drop_k: 0}   # mode off|tail|front (bare `off` is fine)
        budget: {bytes: 92672}   # the receiver's budget held by the switch on this,
                                 # a receiver's port (docs/algorithms.md §8); optional:
                                 # mss (bytes, 1448), epoch_ticks (power of two, 131072)
    routes:
      - {prefix: 10.0.1.1/32, port: 1, dmac: "00:00:00:00:00:01"}
      - {prefix: "2001:db8::1/128", port: 1, dmac: "00:00:00:00:00:01"}
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, cast

import yaml

from p4incast.model import switch_budget
from p4incast.model.ecn import EcnMode
from p4incast.model.errors import ModelError
from p4incast.model.switch_budget import DEFAULT_EPOCH_TICKS
from p4incast.model.wire import MIN_MSS_BYTES, MSS_BYTES

from . import targets, tls, tofino_config
from .addresses import host_of, is_loopback
from .errors import ControllerError, model_errors
from .p4names import PORT_MAX
from .targets import QueueSetting, Target, ThriftAddress
from .tls import TlsSettings

REPO = Path(__file__).resolve().parent.parent
DEVICE_ID_MAX = 2**64 - 1  # P4Runtime's device_id is a uint64
ELECTION_ID_MAX = 2**128 - 1  # P4Runtime's election_id is a Uint128
_MAC = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


@dataclass(frozen=True)
class SwitchSettings:
    """How to reach the switch."""

    address: str = "127.0.0.1:9559"  # P4Runtime gRPC address
    device_id: int = 0  # P4Runtime device id (simple_switch_grpc --device-id)
    election_id: int = 10  # primary arbitration: highest id is primary (up to 128 bits)
    thrift_port: int = 9090  # BMv2 thrift runtime port (queue depth/rate)
    thrift_address: str | None = None  # its host (None: `address`'s host if loopback)
    target: str = "v1model"  # v1model | tna
    runtime: str | None = None  # tna: stratum | bf-switchd (None: stratum)
    bf_switchd_parts: int = tofino_config.BF_SWITCHD_PARTS[0]  # bf-switchd: 5 | 3
    tls: TlsSettings | None = None  # None: plaintext P4Runtime (controller/tls.py)
    plaintext: bool = False  # plaintext P4Runtime to a non-loopback address, as asked

    @property
    def thrift(self) -> ThriftAddress | None:
        """Where BMv2's thrift runtime listens: switch.thrift_address, else the host of
        `address` when it is loopback; None for a remote switch whose thrift host was
        not named (thrift is never guessed for it, nor sent to this host)."""
        if self.thrift_address is not None:
            return ThriftAddress(self.thrift_address, self.thrift_port)
        host = host_of(self.address)
        return ThriftAddress(host, self.thrift_port) if is_loopback(host) else None

    def queue_thrift(self, what: str) -> ThriftAddress:
        """`thrift` for a queue setting (`what`), or one ControllerError naming the fix."""
        thrift = self.thrift
        if thrift is None:
            raise ControllerError(
                f"{what}: queues are set through BMv2's thrift runtime, and the switch at "
                f"{self.address} is not on loopback: name the host its thrift runtime "
                "listens on (switch.thrift_address / --thrift-address)"
            )
        return thrift

    @property
    def target_profile(self) -> Target:
        """The target object (depth unit, queues, port listing) for `target`."""
        return targets.get(self.target, "switch.target")

    @property
    def tofino_runtime(self) -> str:
        """The P4Runtime server whose device-config format a packed build takes."""
        return self.runtime or tofino_config.DEFAULT_RUNTIME


@dataclass(frozen=True)
class Pipeline:
    """Compiled pipeline files (p4c output).

    v1model: `config` is BMv2's JSON, sent as the device config unchanged.
    tna: `build_dir` is bf-p4c's output directory; the device config is packed from
    its tofino.bin, context.json and bf-rt.json for the switch's runtime
    (`tofino_config`), never sent as a bare file. Exactly one of the two is set.
    """

    p4info: Path
    config: Path | None = None
    build_dir: Path | None = None

    @classmethod
    def default(cls, target: str = "v1model") -> Pipeline:
        base = REPO / "build" / target
        if targets.get(target, "switch.target").packs_build_dir:
            return cls(p4info=base / tofino_config.P4INFO, build_dir=base)
        return cls(p4info=base / "p4incast.p4info.txtpb", config=base / "p4incast.json")

    @property
    def label(self) -> str:
        """What is installed, for messages: the config file or the build directory."""
        if self.build_dir is not None:
            return str(self.build_dir)
        return self.config.name if self.config is not None else "(no device config)"

    def check(self, need_config: bool) -> None:
        """The files a push needs (need_config) or the p4info alone exist; one error
        naming the first missing one."""
        if need_config and self.build_dir is not None:
            part = tofino_config.missing_part(self.build_dir)
            if part is not None:
                raise ControllerError(tofino_config.lacks(self.build_dir, part))
            if not self.p4info.is_file() and self.p4info.parent == self.build_dir:
                raise ControllerError(tofino_config.lacks(self.build_dir, self.p4info.name))
        if need_config and self.build_dir is None and self.config is None:
            raise ControllerError("pipeline has no device config (pipeline.config)")
        files = (self.p4info, self.config) if need_config and self.config else (self.p4info,)
        missing = [p for p in files if not p.is_file()]
        if missing:
            raise ControllerError(
                f"pipeline file {missing[0]} not found; run `make build` (needs p4c) "
                "or point pipeline.p4info / pipeline.config at your compiled files"
            )


@dataclass(frozen=True)
class EcnPolicy:
    """Per-port marking: mode off|tail|front, K and the Not-ECT drop threshold.

    k and drop_k are in the target's user unit (packets on v1model, bytes on tna);
    drop_k = 0 disables the drop. `mode` may be given as an EcnMode, its string or
    YAML's `false` (a bare `off`); it is stored as an EcnMode.
    """

    mode: EcnMode | str | Literal[False] = EcnMode.OFF
    k: int = 0
    drop_k: int = 0

    def __post_init__(self) -> None:
        with model_errors():
            object.__setattr__(self, "mode", EcnMode.parse(self.mode, "ECN mode"))

    @property
    def ecn_mode(self) -> EcnMode:
        return EcnMode(self.mode)

    def check(self, target: Target, queue_depth: int | None, where: str) -> None:
        """K and drop_k for one port of `target` whose queue holds queue_depth (if set)."""
        if self.ecn_mode is not EcnMode.OFF:
            target.check_k(self.k, queue_depth, where)
        if self.drop_k:
            target.unit.threshold(self.drop_k, f"{where}: drop_k", allow_zero=True)

    def encoded(self, target: Target) -> tuple[int, int, int]:
        """(mode, k, drop_k) as set_ecn_policy's parameters, K in the target's depth unit."""
        mode = self.ecn_mode
        k = target.unit.convert(self.k) if mode is not EcnMode.OFF else 0
        drop_k = target.unit.convert(self.drop_k) if self.drop_k else 0
        return mode.code, k, drop_k


@dataclass(frozen=True)
class PortBudget:
    """The receiver's budget a port's ACKs are held to (docs/algorithms.md §8)."""

    bytes: int  # B, the port's budget
    mss: int = MSS_BYTES  # the segment the shares are whole numbers of
    epoch_ticks: int = DEFAULT_EPOCH_TICKS  # ~1 ms ticks; an idle open flow counts 1-2 epochs

    def check(self, where: str) -> None:
        for name in ("bytes", "mss", "epoch_ticks"):
            value = cast(object, getattr(self, name))
            if not isinstance(value, int) or isinstance(value, bool):
                raise ControllerError(f"{where}.{name}: expected an integer, got {value!r}")
        if not MIN_MSS_BYTES <= self.mss <= MSS_BYTES:
            raise ControllerError(f"{where}.mss: {self.mss} not in [{MIN_MSS_BYTES}, {MSS_BYTES}]")
        try:
            switch_budget.check_budget(self.bytes, self.mss, self.epoch_ticks)
        except ModelError as err:
            raise ControllerError(f"{where}: {err}") from None


@dataclass(frozen=True)
class PortConfig:
    """One switch port."""

    port: int
    mac: str
    queue_depth: int | None = None  # packets (BMv2 set_queue_depth)
    queue_rate: int | None = None  # packets per second (BMv2 set_queue_rate)
    ecn: EcnPolicy = field(default_factory=EcnPolicy)
    budget: PortBudget | None = None  # None: the receiver's budget off

    @property
    def queue(self) -> QueueSetting:
        return QueueSetting(self.queue_depth, self.queue_rate)


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
    return cast("dict[str, Any]", value)


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


def _with_budget(pc: PortConfig, value: Any, where: str) -> PortConfig:
    """A port's `budget:` mapping ({bytes, mss, epoch_ticks}), checked."""
    bdata = _mapping(value, where)
    _known_keys(bdata, _dataclass_keys(PortBudget), where)
    if "bytes" not in bdata:
        raise ControllerError(f"{where}: missing bytes (the port's budget B)")
    budget = PortBudget(**bdata)
    budget.check(where)
    return PortConfig(pc.port, pc.mac, pc.queue_depth, pc.queue_rate, pc.ecn, budget)


def check_port(target: Target, pc: PortConfig, where: str) -> None:
    """One port's queue settings and ECN policy on `target` (queue first: K is checked
    against the queue depth only once the depth itself is known to be valid)."""
    target.check_queue(pc.queue, where)
    pc.ecn.check(target, pc.queue_depth, f"{where}.ecn")


def check(cfg: Config) -> None:
    """Validate a Config built in code (the testbed's) as `parse` validates YAML:
    port numbers, queue settings, ECN policies, routes to declared ports."""
    target = cfg.switch.target_profile
    check_switch(cfg.switch, "config")
    for number, pc in sorted(cfg.ports.items()):
        where = f"port {number}"
        check_port_number(number, where)
        if pc.port != number:
            raise ControllerError(f"{where}: its PortConfig says port {pc.port}")
        check_port(target, pc, where)
    for i, route in enumerate(cfg.routes):
        if route.port not in cfg.ports:
            raise ControllerError(
                f"routes[{i}] ({route.prefix}): port {route.port} is not among the ports"
            )


def check_switch(sw: SwitchSettings, source: str) -> None:
    """The switch settings, however given (YAML, flags, code), each rule once:
    address, ids, thrift, runtime, and TLS or plaintext (not both)."""
    address = cast(object, sw.address)  # from YAML: anything
    if not isinstance(address, str) or ":" not in address:
        raise ControllerError(f"{source}: switch.address {address!r} is not HOST:PORT")
    _int(sw.device_id, f"{source}: switch.device_id", 0, DEVICE_ID_MAX)
    _int(sw.election_id, f"{source}: switch.election_id", 1, ELECTION_ID_MAX)
    _int(sw.thrift_port, f"{source}: switch.thrift_port", 1, 65535)
    _thrift_address(cast(object, sw.thrift_address), source)
    if not isinstance(cast(object, sw.plaintext), bool):
        raise ControllerError(
            f"{source}: switch.plaintext: expected true or false, got {sw.plaintext!r}"
        )
    if sw.plaintext and sw.tls is not None:
        raise ControllerError(
            f"{source}: switch.plaintext (--plaintext) and switch.tls (--tls-*) together: "
            "P4Runtime is either plaintext or TLS; drop one"
        )
    check_runtime(sw, source)
    if sw.tls is not None:
        tls.check(sw.tls, source)


def _thrift_address(value: object, source: str) -> None:
    """switch.thrift_address: a host (name or IP), its port being switch.thrift_port."""
    where = f"{source}: switch.thrift_address"
    if value is None:
        return
    if not isinstance(value, str) or not value.strip():
        raise ControllerError(f"{where}: expected a host name or IP address, got {value!r}")
    bare = value.removeprefix("[").removesuffix("]")
    if ":" in bare:
        try:
            ipaddress.IPv6Address(bare.split("%", 1)[0])
        except ValueError:
            raise ControllerError(
                f"{where} {value!r}: give the host alone; its port is switch.thrift_port "
                "(--thrift-port)"
            ) from None


def check_runtime(sw: SwitchSettings, source: str) -> None:
    """switch.runtime only where a build is packed (tna), and one of the known ones;
    bf_switchd_parts one of 5, 3."""
    if sw.runtime is not None:
        if not sw.target_profile.packs_build_dir:
            raise ControllerError(
                f"{source}: switch.runtime is for target tna (the Tofino P4Runtime server "
                f"the build is packed for); {sw.target} sends pipeline.config as is"
            )
        if sw.runtime not in tofino_config.RUNTIMES:
            raise ControllerError(
                f"{source}: switch.runtime {sw.runtime!r} is not one of "
                f"{', '.join(tofino_config.RUNTIMES)}"
            )
    if isinstance(sw.bf_switchd_parts, bool) or sw.bf_switchd_parts not in (
        tofino_config.BF_SWITCHD_PARTS
    ):
        raise ControllerError(
            f"{source}: switch.bf_switchd_parts {sw.bf_switchd_parts!r} is not one of 5, 3"
        )


def _pipeline(pl_data: dict[str, Any], target: Target, name: str, source: str) -> Pipeline:
    """pipeline: p4info + config (v1model) or p4info + build_dir (tna); the other key
    is refused with the one to use."""
    default = Pipeline.default(name)
    if target.packs_build_dir:
        if "config" in pl_data:
            raise ControllerError(
                f"{source}: pipeline.config is not used on {name}: its device config is "
                "packed from pipeline.build_dir (tofino.bin, context.json, bf-rt.json)"
            )
        build_dir = Path(pl_data.get("build_dir", default.build_dir))
        return Pipeline(
            p4info=Path(pl_data.get("p4info", build_dir / tofino_config.P4INFO)),
            build_dir=build_dir,
        )
    if "build_dir" in pl_data:
        raise ControllerError(
            f"{source}: pipeline.build_dir is for target tna; {name} takes pipeline.config"
        )
    return Pipeline(
        p4info=Path(pl_data.get("p4info", default.p4info)),
        config=Path(pl_data.get("config", default.config)),
    )


def _tls(value: Any, source: str, base: Path | None) -> TlsSettings:
    """switch.tls as given: its keys, their types, the files relative to `base`
    (an empty one too: check_switch refuses a switch.tls without a CA)."""
    where = f"{source}: switch.tls"
    data = _mapping(value, where)
    _known_keys(data, _dataclass_keys(TlsSettings), where)
    for key, v in data.items():
        if v is not None and not isinstance(v, str | Path):
            raise ControllerError(f"{source}: {tls.name(key)}: expected text, got {v!r}")

    def path(key: str) -> Path | None:
        v = data.get(key)
        if v is None:
            return None
        p = Path(v)
        return base / p if base is not None and not p.is_absolute() else p

    name = data.get("server_name")
    return TlsSettings(
        ca=path("ca"),
        cert=path("cert"),
        key=path("key"),
        server_name=None if name is None else str(name),
    )


def parse(data: Any, source: str = "config", base: Path | None = None) -> Config:
    """Validate a parsed YAML document and build a Config (ControllerError on any
    problem). Relative TLS file names are relative to `base` (the config's folder)."""
    top = _mapping(data, source)
    _known_keys(top, {"switch", "pipeline", "ports", "routes"}, source)

    sw_data = _mapping(top.get("switch"), f"{source}: switch")
    _known_keys(sw_data, _dataclass_keys(SwitchSettings), f"{source}: switch")
    sw_args: dict[str, Any] = dict(sw_data)
    if "tls" in sw_data:  # present: TLS, so it must name a CA (an empty `tls:` too)
        sw_args["tls"] = _tls(sw_data["tls"], source, base)
    sw = SwitchSettings(**sw_args)
    target = targets.get(sw.target, f"{source}: switch.target")
    check_switch(sw, source)

    pl_data = _mapping(top.get("pipeline"), f"{source}: pipeline")
    _known_keys(pl_data, {"p4info", "config", "build_dir"}, f"{source}: pipeline")
    pipeline = _pipeline(pl_data, target, sw.target, source)

    ports: dict[int, PortConfig] = {}
    macs: dict[str, int] = {}
    for key, pdata in _mapping(top.get("ports"), f"{source}: ports").items():
        where = f"{source}: ports.{key}"
        number = check_port_number(key, where)
        pdata = _mapping(pdata, where)
        _known_keys(pdata, {"mac", "queue_depth", "queue_rate", "ecn", "budget"}, where)
        if "mac" not in pdata:
            raise ControllerError(f"{where}: missing mac (this port's MAC address)")
        mac = _mac(pdata["mac"], f"{where}.mac")
        if mac in macs:
            raise ControllerError(f"{where}.mac: {mac} is already port {macs[mac]}'s MAC")
        macs[mac] = number
        edata = _mapping(pdata.get("ecn"), f"{where}.ecn")
        _known_keys(edata, _dataclass_keys(EcnPolicy), f"{where}.ecn")
        with model_errors():
            mode = EcnMode.parse(edata.get("mode", EcnMode.OFF), f"{where}.ecn.mode")
        ecn_args: dict[str, Any] = {**edata, "mode": mode}
        ecn = EcnPolicy(**ecn_args)
        pc = PortConfig(number, mac, pdata.get("queue_depth"), pdata.get("queue_rate"), ecn)
        if "budget" in pdata:
            pc = _with_budget(pc, pdata["budget"], f"{where}.budget")
        check_port(target, pc, where)
        ports[number] = pc

    routes: list[Route] = []
    seen: dict[str, int] = {}
    raw_routes = cast(object, top.get("routes") or [])
    if not isinstance(raw_routes, list):
        raise ControllerError(f"{source}: routes must be a list")
    for i, rdata in enumerate(cast("list[Any]", raw_routes)):
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
    cfg = parse(data, str(path), base=path.parent)

    # Relative pipeline paths are relative to the config file.
    def fix(p: Path | None) -> Path | None:
        return p if p is None or p.is_absolute() else path.parent / p

    pl = cfg.pipeline
    if pl != Pipeline.default(cfg.switch.target):
        p4info = fix(pl.p4info)
        assert p4info is not None
        pl = Pipeline(p4info=p4info, config=fix(pl.config), build_dir=fix(pl.build_dir))
    return Config(cfg.switch, pl, cfg.ports, cfg.routes)
