"""One experiment as YAML, loaded into dataclasses and validated whole before
anything runs. The same file drives both engines (BMv2 testbed, ns-3 model);
each engine reads the topology keys that apply to it.

    name: default                 # results go to results/<name>-<timestamp>/
    engine: auto                  # auto | bmv2 | sim
    cluster: local                # local | auto | ray://HOST:PORT | HOST:PORT (a Ray cluster)
    topology:
      kind: incast_star           # incast_star | leaf_spine
      spines: 1                   # leaf_spine: 1 or 2
      background: false           # one long flow to the receiver during rounds
      rto_min_ms: 10              # per-route minimum RTO (papers: 10 ms), datacenter time
      # bmv2 engine
      queue_pkts: 64              # BMv2 egress queue toward the receiver, packets
      bottleneck_pps: 2000        # its drain rate, packets/s
      host_mbps: 100              # htb rate of every host link, Mbit/s
      dilate: true                # stretch the min RTO by the measured time dilation
                                  # (1 Gbit/s / measured bottleneck; p4incast/model/dilation.py)
      # sim engine
      link_gbps: 1.0              # every link
      delay_us: 25                # per link, one way
      buffer_bytes: 65536         # per switch port
    app:
      sru_bytes: 65536            # bytes per server per round (per-server mode)
      mode: per-server            # per-server | total (total: sru_bytes split over N)
      rounds: 10
      jitter_us: 10               # sim: server think time, uniform [0, jitter_us]
      connections: persistent     # persistent | per-round (connect, request, SRU, close
                                  # each round: a handshake and the initial window per round)
    transport:                    # the hosts' TCP (defaults: Linux-like)
      init_cwnd: 10               # senders' initial window, segments
      delayed_ack: true           # false: the receiver ACKs every segment
      dctcp_g: 0.0625             # DCTCP's gain g
      rx_min_segs: 2              # receiver policies' window floor, MSS (newdctcp-budget: 1)
      rx_budget_pkts: 0           # newdctcp-budget's budget, MSS; 0 = the bottleneck's queue
      policy_tick_us: 0           # agent tick; 0 = sim ICTCP/RCC every base RTT, else interval_ms
      rx_idle_ms: 0               # receiver policies: idle longer than this restarts a
                                  # flow's window (ICTCP: slow start); 0 = the agent's 1 s
      delack_ms: 1                # sim: delayed-ACK timeout (the testbed: Linux's own)
      syn_rto_ms: 200             # sim: SYN retransmission timeout (the testbed: Linux's 1 s)
      tail_loss_probe: false      # testbed: Linux's tail-loss probe (the model has none)
      rcc_rto_r_ms: 10            # rcc's receiver timer RTO^r (seed 002 Alg. 3); 0 = none
    senders: [1, 2, 4, 8, 16, 32, 48, 64]
    repeats: 1
    variants:                     # optional: one sub-experiment per combination
      app.sru_bytes: [65536, 131072]        # named <name>-sru64k-buf64k, ...
      topology.buffer_bytes: [65536, 262144]
    schemes:
      - {name: droptail, ecn: off, cc: reno}
      - {name: mark-tail, ecn: tail, k: 20, cc: dctcp}
      - {name: front+rx, ecn: front, k: 20, cc: reno, agent: newdctcp-rx}
      - {name: front+rotate, ecn: front, k: 20, cc: reno, agent: newdctcp-budget,
         rotate: true}            # windows below one segment, taken in turns
      - {name: batched, ecn: off, cc: reno, batching: true}
      - {name: front+switch, ecn: front, k: 20, cc: reno,
         switch_budget: true}     # the receiver's budget held by the ToR, no agent

A scheme is everything that differs between the things compared: the switch's
ECN mode and K (packets), the senders' congestion control, the receiver
agent's policy (with newdctcp-budget: `rotate`, windows below one segment taken
in turns), whether the ToR holds the receiver's budget (`switch_budget`,
docs/algorithms.md §8) and seed-003 application-level batching.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

import yaml

from p4incast.engines import REGISTRY
from p4incast.experiments import sources as paper_sources
from p4incast.experiments.claims import ClaimError, check_claim, claim_variants
from p4incast.model import ModelError
from p4incast.model.ecn import EcnMode
from p4incast.model.scheme import (
    INCAST_SCENARIO,
    App,
    Point,
    Scheme,
    Topology,
    Transport,
    check_app,
    check_scheme,
    check_topology,
    check_transport,
)

ENGINE_CHOICES = ("auto", *REGISTRY)
# Where points run: here (local), or a Ray cluster (experiments/executors.py).
CLUSTER_RE = re.compile(r"(local|auto|(ray://)?(\[[0-9A-Fa-f:]+\]|[A-Za-z0-9.-]+):[0-9]{1,5})")
MAX_SENDERS = max(e.max_senders for e in REGISTRY.values())  # each engine checks its own


class ExperimentError(ModelError):
    """A bad experiment file: one message naming the key and the fix."""


@dataclass(frozen=True)
class Paper:
    """Where a preset comes from and what it claims (experiments/claims.py)."""

    cite: str
    figure: str
    claims: tuple[dict[str, Any], ...] = ()
    reference: dict[str, Any] = field(default_factory=dict)
    # an ablation's variant that is the paper's own setting: {variant key: value}
    baseline: dict[str, Any] = field(default_factory=dict)
    # parameter -> where its value comes from (experiments/sources.py)
    sources: dict[str, str] = field(default_factory=dict)
    # an ablation's readings the paper allows: {variant key: {value: the paper's place,
    # quoted, that leaves the value open}}; a value not listed is one the paper
    # contradicts, and cannot explain a divergence (reports/verdicts.py EXPLAINING_RULE)
    allows: dict[str, dict[Any, str]] = field(default_factory=dict)
    # figure -> the metric(s) its axis plots, as the preset reads it (a claim's
    # `figure` and metric must match: tests/experiments/test_exp_claims.py)
    plots: dict[str, list[str]] = field(default_factory=dict)

    def is_baseline(self, exp: Any) -> bool:
        """Whether the experiment (one variant) runs the paper's setting of `baseline`."""
        if not self.baseline:
            return False
        for key, value in self.baseline.items():
            section, name = key.split(".")
            if getattr(getattr(exp, section), name) != value:
                return False
        return True

    def reading(self, exp: Any) -> str | None:
        """The places that allow every setting the experiment (one variant of an
        ablation) runs, joined; None if one of them is not a reading the paper allows."""
        if not self.allows:
            return None
        places = []
        for key, values in self.allows.items():
            section, name = key.split(".")
            value = getattr(getattr(exp, section), name)
            if value not in values:
                return None
            places.append(f"{key} {value}: {values[value]}")
        return "; ".join(places)


def parse_paper(raw: Any, axis: str = "n") -> Paper | None:
    """A preset's `paper:` section (None without one); its claims checked against the
    claim kinds (`claims.check_claim`; `axis`: what the scenario sweeps, n or load),
    its sources' form (`sources.sources`; what they name: `check_sources`)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ExperimentError("paper: expected a mapping with cite, figure, claims, reference")
    check_keys("paper", raw, Paper)
    for key in ("cite", "figure"):
        if not isinstance(raw.get(key), str):
            raise ExperimentError(f"paper.{key}: expected text")
    claims = raw.get("claims") or []
    if not isinstance(claims, list | tuple):
        raise ExperimentError("paper.claims: expected a list")
    try:
        for i, c in enumerate(claims):
            check_claim(c, f"paper.claims[{i}]", axis)
    except ClaimError as err:
        raise ExperimentError(str(err)) from None
    reference = raw.get("reference") or {}
    if not isinstance(reference, dict):
        raise ExperimentError("paper.reference: expected a mapping of variant -> metric -> values")
    baseline = raw.get("baseline") or {}
    if not isinstance(baseline, dict) or any(k not in VARIANT_KEYS for k in baseline):
        raise ExperimentError(
            "paper.baseline: expected a mapping of variant keys (e.g. app.connections) "
            "to the paper's value"
        )
    try:
        sources = paper_sources.sources({"paper": raw})
    except paper_sources.SourceError as err:
        raise ExperimentError(str(err)) from None
    allows = raw.get("allows") or {}
    if not isinstance(allows, dict) or any(
        not isinstance(k, str)
        or k.count(".") != 1
        or not isinstance(v, dict)
        or not all(isinstance(t, str) for t in v.values())
        for k, v in allows.items()
    ):
        raise ExperimentError(
            "paper.allows: expected a mapping of settings (section.name) to {value: the "
            "paper's place that allows it}"
        )
    plots = raw.get("plots") or {}
    if not isinstance(plots, dict):
        raise ExperimentError("paper.plots: expected a mapping of figure -> metric or metrics")
    return Paper(
        raw["cite"],
        raw["figure"],
        tuple(claims),
        reference,
        dict(baseline),
        sources,
        {k: dict(v) for k, v in allows.items()},
        {str(k): [v] if isinstance(v, str) else list(v) for k, v in plots.items()},
    )


def check_sources(raw: Any) -> None:
    """A whole preset's `paper.sources`: each key names a parameter of its scenario
    (experiments/sources.py; that each scheme and variant named is in the file is
    checked where sources are resolved, as callers may narrow the schemes);
    ExperimentError naming the first that does not."""
    if isinstance(raw, dict):
        try:
            paper_sources.check(raw, present=False)
        except paper_sources.SourceError as err:
            raise ExperimentError(str(err)) from None


@dataclass(frozen=True)
class Experiment:
    name: str
    schemes: tuple[Scheme, ...]
    senders: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 48, 64)
    repeats: int = 1
    engine: str = "auto"
    topology: Topology = field(default_factory=Topology)
    app: App = field(default_factory=App)
    transport: Transport = field(default_factory=Transport)
    cluster: str = "local"  # where points run: not part of what is compared
    paper: Paper | None = None  # a preset's source and claims (experiments/claims.py)

    scenario: ClassVar[str] = INCAST_SCENARIO  # experiments/scenario.py

    def points(self) -> list[Point]:
        """Every (scheme, N, repeat), N outermost so one N's schemes run side by side."""
        return [
            Point(s, n, r, self.topology, self.app, self.transport, seed=1 + r)
            for r in range(self.repeats)
            for n in self.senders
            for s in self.schemes
        ]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def link_bps(self, engine: str) -> float:
        """Bottleneck rate in bit/s of goodput-bearing frames (for the framing limit)."""
        return self.topology.bottleneck_bps(engine)

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


def scenario_of(path: Path) -> str:
    """The preset's top-level `scenario:` (incast when absent or unreadable: the
    incast loader then reports the problem); experiments/scenario.py maps it to
    the Scenario that loads, runs and reports the preset."""
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError):
        return INCAST_SCENARIO
    if isinstance(raw, dict) and raw.get("scenario") is not None:
        return str(raw["scenario"])
    return INCAST_SCENARIO


def check_keys(section: str, raw: dict[str, Any], cls: type) -> None:
    """ExperimentError naming the keys of `raw` that are not fields of dataclass `cls`."""
    allowed = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise ExperimentError(
            f"{section}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
        )


def typed_section(section: str, cls: type, raw: Any) -> Any:
    """A YAML mapping as dataclass `cls`: unknown keys and mistyped values refused
    (ExperimentError naming `section.key`); absent keys keep their defaults."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ExperimentError(f"{section}: expected a mapping, got {type(raw).__name__}")
    check_keys(section, raw, cls)
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
            if f.name == "ecn":  # one parser for the mode vocabulary (bare `off` is false)
                try:
                    v = EcnMode.parse(v, f"{section}: ecn").value
                except ModelError as err:
                    raise ExperimentError(str(err)) from None
            if v is False and f.name == "agent":  # YAML 1.1 reads `off` as false
                v = "off"
            if not isinstance(v, str):
                raise ExperimentError(f"{section}.{f.name}: expected text, got {v!r}")
        out[f.name] = v
    return cls(**out)


def check_cluster(value: Any, where: str = "cluster") -> str:
    """A cluster address as `cluster:` or --cluster take it; ExperimentError otherwise."""
    if not isinstance(value, str) or not CLUSTER_RE.fullmatch(value):
        raise ExperimentError(
            f"{where}: {value!r} is not local, auto, ray://HOST:PORT or HOST:PORT"
        )
    return value


def check_name(name: Any) -> str:
    """An experiment's name: a non-empty word (results go to a folder named after it)."""
    if not isinstance(name, str) or not name or any(c in name for c in "/\\ "):
        raise ExperimentError(f"name: {name!r} must be a non-empty word (used in a path)")
    return name


def check_repeats(value: Any) -> int:
    """`repeats:`, an integer >= 1 (repeat r runs with seed r + 1)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ExperimentError(f"repeats: {value!r} must be an integer >= 1")
    return value


def parse_schemes(raw: Any, check: Callable[[Scheme], None]) -> tuple[Scheme, ...]:
    """The `schemes:` list: each a Scheme passing `check` (ModelError), names unique."""
    if not isinstance(raw, list | tuple) or not raw:
        raise ExperimentError("schemes: expected a non-empty list of schemes")
    schemes: list[Scheme] = []
    for i, rs in enumerate(raw):
        where = f"schemes[{i}]"
        if not isinstance(rs, dict) or "name" not in rs:
            raise ExperimentError(f"{where}: expected a mapping with at least a name")
        s = typed_section(f"{where} ({rs['name']})", Scheme, rs)
        try:
            check(s)
        except ModelError as err:
            raise ExperimentError(str(err)) from None
        if s.name in {x.name for x in schemes}:
            raise ExperimentError(f"scheme {s.name}: name used twice")
        schemes.append(s)
    return tuple(schemes)


def parse(raw: Any) -> Experiment:
    """Validate a whole experiment dict; raise ExperimentError naming the first problem."""
    if not isinstance(raw, dict):
        raise ExperimentError("experiment: expected a YAML mapping at the top level")
    check_keys(
        "experiment",
        raw,
        Experiment,
    )
    name = check_name(raw.get("name", "experiment"))
    topo = typed_section("topology", Topology, raw.get("topology"))
    app = typed_section("app", App, raw.get("app"))
    transport = typed_section("transport", Transport, raw.get("transport"))
    engine = raw.get("engine", "auto")
    if engine not in ENGINE_CHOICES:
        raise ExperimentError(f"engine: {engine!r} is not one of {', '.join(ENGINE_CHOICES)}")
    cluster = check_cluster(raw.get("cluster", "local"))
    try:
        check_topology(topo)
        check_app(app)
        check_transport(transport)
    except ModelError as err:
        raise ExperimentError(str(err)) from None
    senders = raw.get("senders", list(Experiment.__dataclass_fields__["senders"].default))
    if isinstance(senders, int) and not isinstance(senders, bool):
        senders = [senders]
    if not isinstance(senders, list | tuple) or not senders:
        raise ExperimentError("senders: expected a non-empty list of sender counts")
    for n in senders:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ExperimentError(f"senders: {n!r} must be an integer >= 1")
        if n > MAX_SENDERS:
            raise ExperimentError(f"senders: {n} above {MAX_SENDERS}")
    repeats = check_repeats(raw.get("repeats", 1))
    runs_on = None if engine == "auto" else engine
    schemes = parse_schemes(raw.get("schemes"), lambda s: check_scheme(s, topo, runs_on))
    return Experiment(
        name=name,
        schemes=schemes,
        senders=tuple(senders),
        repeats=repeats,
        engine=engine,
        topology=topo,
        app=app,
        transport=transport,
        cluster=cluster,
        paper=parse_paper(raw.get("paper")),
    )


SECTIONS = {"app": App, "topology": Topology, "transport": Transport}
VARIANT_KEYS = {f"{name}.{f.name}" for name, cls in SECTIONS.items() for f in fields(cls)}


def expand(raw: Any) -> list[Experiment]:
    """An experiment dict with optional `variants` -> one validated Experiment per
    combination (the whole file is validated before anything runs)."""
    check_sources(raw)
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
    baseline = (raw.get("paper") or {}).get("baseline") or {}
    if isinstance(baseline, dict):
        for key, value in baseline.items():
            if key not in variants or value not in variants[key]:
                raise ExperimentError(
                    f"paper.baseline: {key}: {value!r} is not one of the preset's variants "
                    f"({key}: {variants.get(key)})"
                )
    allows = (raw.get("paper") or {}).get("allows") or {}
    if isinstance(allows, dict) and allows and set(allows) != set(variants):
        raise ExperimentError(
            f"paper.allows: names {', '.join(sorted(allows))}; it must say for every "
            f"variant key ({', '.join(sorted(variants))}) which values the paper allows"
        )
    base = {k: v for k, v in raw.items() if k != "variants"}
    out: list[Experiment] = []
    labels: list[str] = []
    for combo in itertools.product(*axes):
        one = {**base, **{name: dict(base.get(name) or {}) for name in SECTIONS}}
        label = []
        for key, value in combo:
            section, name = key.split(".")
            one[section][name] = value
            short = {"sru_bytes": "sru", "buffer_bytes": "buf", "connections": ""}.get(name, name)
            is_kib = isinstance(value, int) and name.endswith("_bytes") and value % 1024 == 0
            label.append(f"{short}{value // 1024}k" if is_kib else f"{short}{value}")
        labels.append("-".join(label))
        one["name"] = f"{base.get('name', 'experiment')}-{labels[-1]}"
        try:
            out.append(parse(one))
        except ExperimentError as err:
            raise ExperimentError(f"variant {one['name']}: {err}") from None
    for c in out[0].paper.claims if out[0].paper else ():
        try:
            claim_variants(c, labels)
        except ValueError as err:
            raise ExperimentError(f"paper.claims: {err}") from None
    return out


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """The first key at which two config echoes differ ("app.rounds: 10 vs 2"), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            diff = first_difference(a.get(key), b.get(key), f"{where}.{key}" if where else key)
            if diff:
                return diff
        return None
    return None if a == b else f"{where}: {json.dumps(a)} there vs {json.dumps(b)} now"


def read_yaml(path: Path) -> Any:
    """A preset file's YAML; ExperimentError naming the file when it cannot be read."""
    try:
        return yaml.safe_load(Path(path).read_text())
    except OSError as err:
        raise ExperimentError(f"{path}: cannot read ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise ExperimentError(f"{path}: not valid YAML ({err})") from None


def load_all(path: Path) -> list[Experiment]:
    """Read and validate an experiment file: one Experiment, or one per variant."""
    raw = read_yaml(path)
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
