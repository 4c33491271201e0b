"""One experiment as YAML, loaded into dataclasses and validated whole before
anything runs. The same file drives both engines (BMv2 testbed, ns-3 model);
each engine reads the topology keys that apply to it.

    name: default                 # results go to results/<name>-<timestamp>/
    engine: auto                  # auto | bmv2 | sim
    topology:
      kind: incast_star           # incast_star | leaf_spine
      spines: 1                   # leaf_spine: 1 or 2
      background: false           # one long flow to the receiver during rounds
      rto_min_ms: 10              # per-route minimum RTO (papers: 10 ms)
      # bmv2 engine
      queue_pkts: 64              # BMv2 egress queue toward the receiver, packets
      bottleneck_pps: 2000        # its drain rate, packets/s
      host_mbps: 100              # htb rate of every host link, Mbit/s
      # sim engine
      link_gbps: 1.0              # every link
      delay_us: 25                # per link, one way
      buffer_bytes: 65536         # per switch port
    app:
      sru_bytes: 65536            # bytes per server per round (per-server mode)
      mode: per-server            # per-server | total (total: sru_bytes split over N)
      rounds: 10
    senders: [1, 2, 4, 8, 16, 32, 48, 64]
    repeats: 1
    variants:                     # optional: one sub-experiment per combination
      app.sru_bytes: [65536, 131072]        # named <name>-sru64k-buf64k, ...
      topology.buffer_bytes: [65536, 262144]
    schemes:
      - {name: droptail, ecn: off, cc: reno}
      - {name: mark-tail, ecn: tail, k: 20, cc: dctcp}
      - {name: front+rx, ecn: front, k: 20, cc: reno, agent: newdctcp-rx}
      - {name: batched, ecn: off, cc: reno, batching: true}

A scheme is everything that differs between the things compared: the switch's
ECN mode and K (packets), the senders' congestion control, the receiver
agent's policy and seed-003 application-level batching.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

ENGINES = ("auto", "bmv2", "sim")
TOPOLOGIES = ("incast_star", "leaf_spine")
ECN_MODES = ("off", "tail", "front")
CCS = ("reno", "cubic", "bbr", "dctcp", "newdctcp")
AGENT_POLICIES = ("off", "observe", "newdctcp-rx", "ictcp", "rcc")
APP_MODES = ("per-server", "total")
MAX_SENDERS = {"bmv2": 64, "sim": 100}
MTU_FRAME = 1538  # bytes on the wire for a full-size TCP segment (1448 B payload)


class ExperimentError(ValueError):
    """A bad experiment file: one message naming the key and the fix."""


@dataclass(frozen=True)
class Topology:
    kind: str = "incast_star"  # incast_star | leaf_spine
    spines: int = 1  # leaf_spine only: 1 or 2
    background: bool = False  # a long flow to the receiver during the rounds
    rto_min_ms: int = 10  # per-route minimum RTO, ms
    queue_pkts: int = 64  # bmv2: egress queue toward the receiver, packets
    bottleneck_pps: int = 2000  # bmv2: its drain rate, packets/s
    host_mbps: float = 100.0  # bmv2: htb rate of host links, Mbit/s
    link_gbps: float = 1.0  # sim: link rate, Gbit/s
    delay_us: float = 25.0  # sim: one-way delay per link, µs
    buffer_bytes: int = 65536  # sim: per-port buffer, bytes


@dataclass(frozen=True)
class App:
    sru_bytes: int = 65536  # per server per round (per-server) or per round (total)
    mode: str = "per-server"  # per-server | total
    rounds: int = 10  # barrier rounds per run


@dataclass(frozen=True)
class Scheme:
    name: str
    ecn: str = "off"  # off | tail | front
    k: int = 0  # marking threshold, packets
    cc: str = "reno"  # sender congestion control
    agent: str = "off"  # receiver host-agent policy
    batching: bool = False  # seed-003 application-level batch scheduling

    def describe(self) -> str:
        parts = [f"ECN {self.ecn}" + (f" K={self.k}" if self.ecn != "off" else ""), self.cc]
        if self.agent != "off":
            parts.append(f"agent {self.agent}")
        if self.batching:
            parts.append("batching")
        return ", ".join(parts)


@dataclass(frozen=True)
class Experiment:
    name: str
    schemes: tuple[Scheme, ...]
    senders: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 48, 64)
    repeats: int = 1
    engine: str = "auto"
    topology: Topology = field(default_factory=Topology)
    app: App = field(default_factory=App)

    def points(self) -> list[tuple[Scheme, int, int]]:
        """Every (scheme, N, repeat), N outermost so one N's schemes run side by side."""
        return [(s, n, r) for r in range(self.repeats) for n in self.senders for s in self.schemes]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def link_bps(self, engine: str) -> float:
        """Bottleneck rate in bit/s of goodput-bearing frames (for the framing limit)."""
        if engine == "bmv2":
            return self.topology.bottleneck_pps * MTU_FRAME * 8
        return self.topology.link_gbps * 1e9

    def with_overrides(self, **kw: Any) -> Experiment:
        """Copy with CLI overrides (None values ignored), re-validated."""
        d = self.as_dict()
        for key, value in kw.items():
            if value is None:
                continue
            if key in ("rounds", "sru_bytes"):
                d["app"][key] = value
            elif key == "schemes":
                names = {s["name"] for s in d["schemes"]}
                unknown = [n for n in value if n not in names]
                if unknown:
                    raise ExperimentError(
                        f"--schemes: {', '.join(unknown)} not in the experiment "
                        f"(it has {', '.join(sorted(names))})"
                    )
                d["schemes"] = [s for s in d["schemes"] if s["name"] in value]
            else:
                d[key] = value
        return parse(d)


def _check_keys(section: str, raw: dict[str, Any], cls: type) -> None:
    allowed = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise ExperimentError(
            f"{section}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
        )


def _typed(section: str, cls: type, raw: Any) -> Any:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ExperimentError(f"{section}: expected a mapping, got {type(raw).__name__}")
    _check_keys(section, raw, cls)
    out = {}
    for f in fields(cls):
        if f.name not in raw:
            continue
        v = raw[f.name]
        want = f.type if isinstance(f.type, str) else f.type.__name__
        if want == "bool":
            if not isinstance(v, bool):
                raise ExperimentError(f"{section}.{f.name}: expected true/false, got {v!r}")
        elif want == "int":
            if isinstance(v, bool) or not isinstance(v, int):
                raise ExperimentError(f"{section}.{f.name}: expected an integer, got {v!r}")
        elif want == "float":
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise ExperimentError(f"{section}.{f.name}: expected a number, got {v!r}")
            v = float(v)
        elif want == "str":
            if v is False and f.name in ("ecn", "agent"):  # YAML 1.1 reads `off` as false
                v = "off"
            if not isinstance(v, str):
                raise ExperimentError(f"{section}.{f.name}: expected text, got {v!r}")
        out[f.name] = v
    return cls(**out)


def _one_of(where: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ExperimentError(f"{where}: {value!r} is not one of {', '.join(allowed)}")


def _positive(where: str, value: float, low: float = 1) -> None:
    if value < low:
        raise ExperimentError(f"{where}: {value} must be >= {low}")


def parse(raw: Any) -> Experiment:
    """Validate a whole experiment dict; raise ExperimentError naming the first problem."""
    if not isinstance(raw, dict):
        raise ExperimentError("experiment: expected a YAML mapping at the top level")
    _check_keys(
        "experiment",
        raw,
        Experiment,
    )
    name = raw.get("name", "experiment")
    if not isinstance(name, str) or not name or any(c in name for c in "/\\ "):
        raise ExperimentError(f"name: {name!r} must be a non-empty word (used in a path)")
    topo = _typed("topology", Topology, raw.get("topology"))
    app = _typed("app", App, raw.get("app"))
    engine = raw.get("engine", "auto")
    _one_of("engine", engine, ENGINES)
    _one_of("topology.kind", topo.kind, TOPOLOGIES)
    if topo.spines not in (1, 2):
        raise ExperimentError(f"topology.spines: {topo.spines} must be 1 or 2")
    for key in ("rto_min_ms", "queue_pkts", "bottleneck_pps"):
        _positive(f"topology.{key}", getattr(topo, key))
    for key in ("host_mbps", "link_gbps"):
        _positive(f"topology.{key}", getattr(topo, key), 1e-3)
    if topo.delay_us < 0:
        raise ExperimentError(f"topology.delay_us: {topo.delay_us} must be >= 0")
    if topo.buffer_bytes < MTU_FRAME:
        raise ExperimentError(
            f"topology.buffer_bytes: {topo.buffer_bytes} is smaller than one packet "
            f"({MTU_FRAME} bytes on the wire)"
        )
    if topo.host_mbps * 1e6 < topo.bottleneck_pps * MTU_FRAME * 8:
        raise ExperimentError(
            f"topology.host_mbps: {topo.host_mbps} Mbit/s is below the bottleneck "
            f"({topo.bottleneck_pps} pkt/s = {topo.bottleneck_pps * MTU_FRAME * 8 / 1e6:.1f} "
            "Mbit/s); the queue would build in the host, not the switch"
        )
    _one_of("app.mode", app.mode, APP_MODES)
    _positive("app.sru_bytes", app.sru_bytes)
    _positive("app.rounds", app.rounds)
    senders = raw.get("senders", list(Experiment.__dataclass_fields__["senders"].default))
    if isinstance(senders, int) and not isinstance(senders, bool):
        senders = [senders]
    if not isinstance(senders, list | tuple) or not senders:
        raise ExperimentError("senders: expected a non-empty list of sender counts")
    for n in senders:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ExperimentError(f"senders: {n!r} must be an integer >= 1")
        if n > MAX_SENDERS["sim"]:
            raise ExperimentError(f"senders: {n} above {MAX_SENDERS['sim']}")
    repeats = raw.get("repeats", 1)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ExperimentError(f"repeats: {repeats!r} must be an integer >= 1")
    raw_schemes = raw.get("schemes")
    if not isinstance(raw_schemes, list | tuple) or not raw_schemes:
        raise ExperimentError("schemes: expected a non-empty list of schemes")
    schemes: list[Scheme] = []
    for i, rs in enumerate(raw_schemes):
        where = f"schemes[{i}]"
        if not isinstance(rs, dict) or "name" not in rs:
            raise ExperimentError(f"{where}: expected a mapping with at least a name")
        s = _typed(f"{where} ({rs['name']})", Scheme, rs)
        where = f"scheme {s.name}"
        _one_of(f"{where}: ecn", s.ecn, ECN_MODES)
        _one_of(f"{where}: cc", s.cc, CCS)
        _one_of(f"{where}: agent", s.agent, AGENT_POLICIES)
        if s.ecn != "off":
            _positive(f"{where}: k", s.k)
            if s.k >= topo.queue_pkts:
                raise ExperimentError(
                    f"{where}: k={s.k} packets is not below the queue (topology.queue_pkts="
                    f"{topo.queue_pkts}): nothing would ever be marked"
                )
            if s.k * MTU_FRAME > topo.buffer_bytes:
                raise ExperimentError(
                    f"{where}: k={s.k} packets ({s.k * MTU_FRAME} B) is above the buffer "
                    f"(topology.buffer_bytes={topo.buffer_bytes})"
                )
        elif s.k:
            raise ExperimentError(f"{where}: k={s.k} given but ecn is off")
        if s.name in {x.name for x in schemes}:
            raise ExperimentError(f"{where}: name used twice")
        schemes.append(s)
    return Experiment(
        name=name,
        schemes=tuple(schemes),
        senders=tuple(senders),
        repeats=repeats,
        engine=engine,
        topology=topo,
        app=app,
    )


VARIANT_KEYS = {f"app.{f.name}" for f in fields(App)} | {
    f"topology.{f.name}" for f in fields(Topology)
}


def expand(raw: Any) -> list[Experiment]:
    """An experiment dict with optional `variants` -> one validated Experiment per
    combination (the whole file is validated before anything runs)."""
    if not isinstance(raw, dict) or "variants" not in raw:
        return [parse(raw)]
    variants = raw["variants"]
    if not isinstance(variants, dict) or not variants:
        raise ExperimentError("variants: expected a mapping of key -> list of values")
    axes = []
    for key, values in variants.items():
        if key not in VARIANT_KEYS:
            raise ExperimentError(
                f"variants: {key!r} is not one of {', '.join(sorted(VARIANT_KEYS))}"
            )
        if not isinstance(values, list) or not values:
            raise ExperimentError(f"variants.{key}: expected a non-empty list")
        axes.append([(key, v) for v in values])
    base = {k: v for k, v in raw.items() if k != "variants"}
    out = []
    for combo in itertools.product(*axes):
        one = {
            **base,
            "app": dict(base.get("app") or {}),
            "topology": dict(base.get("topology") or {}),
        }
        label = []
        for key, value in combo:
            section, name = key.split(".")
            one[section][name] = value
            short = {"sru_bytes": "sru", "buffer_bytes": "buf"}.get(name, name)
            is_kib = isinstance(value, int) and name.endswith("_bytes") and value % 1024 == 0
            label.append(f"{short}{value // 1024}k" if is_kib else f"{short}{value}")
        one["name"] = f"{base.get('name', 'experiment')}-{'-'.join(label)}"
        try:
            out.append(parse(one))
        except ExperimentError as err:
            raise ExperimentError(f"variant {one['name']}: {err}") from None
    return out


def load_all(path: Path) -> list[Experiment]:
    """Read and validate an experiment file: one Experiment, or one per variant."""
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except OSError as err:
        raise ExperimentError(f"{path}: cannot read ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise ExperimentError(f"{path}: not valid YAML ({err})") from None
    try:
        return expand(raw)
    except ExperimentError as err:
        raise ExperimentError(f"{path}: {err}") from None


def load(path: Path) -> Experiment:
    """Read and validate an experiment file that has no variants."""
    exps = load_all(path)
    if len(exps) != 1:
        raise ExperimentError(f"{path}: has {len(exps)} variants; use load_all")
    return exps[0]
