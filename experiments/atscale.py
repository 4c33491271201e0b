"""The at-scale scenario (`scenario: at-scale`): RCC's §6.2 fabric swept over
offered load, on the ns-3 model (engines/atscale.py) — its preset and its
summary rows (its report: reports/scenario_report.py). Everything else is the
incast experiments': the run loop and resume (runner.py), the claims
(claims.py), the CLI (p4incast-run, reports/run_cli.py), make reproduce
(reports/reproduce.py); experiments/scenario.py says which step calls what.

    p4incast-run experiments/papers/rcc-at-scale.yaml
    p4incast-run experiments/papers/rcc-at-scale.yaml --loads 0.3,0.6 --schemes tcp,rcc
    p4incast-run experiments/papers/rcc-at-scale.yaml --tors 4 --hosts-per-tor 5 --short-flows 200
    p4incast-run experiments/papers/rcc-at-scale.yaml --resume results/rcc-at-scale-2026...
    p4incast-run experiments/papers/rcc-at-scale.yaml --cluster ray://HEAD:10001

The preset:

    name: rcc-at-scale
    scenario: at-scale
    fabric: {tors: 40, hosts_per_tor: 25, host_gbps: 1, uplink_gbps: 25, delay_us: 40,
             buffer_bytes: 121120, rto_min_ms: 10}          # p4incast/model/atscale.py Fabric
    traffic: {aggregators: 5, mean_bytes: 50000, pareto_shape: 1.2, max_bytes: 30000000,
              short_flows: 2000, background_flows: 5, background_bytes: 30000000}
    transport: {init_cwnd: 1, delayed_ack: false}        # as an incast experiment's
    loads: [0.1, 0.2, ..., 0.9]                          # offered load, fraction of a link
    # or arrival_means_us: [300, 700]   short-flow inter-arrival means over the whole
    #                                   fabric, each run as its load (model.atscale
    #                                   load_of_arrival_mean); one of the two
    repeats: 1
    cluster: local                                       # as an incast experiment's
    schemes: [...]          # as an incast experiment's (no batching), K below the
                            # fabric's per-port buffer in full frames
    paper: {cite, figure, claims: [...]}                 # claims.py's kinds, x = load

Every (scheme, load, repeat) is one ns-3 run of the whole fabric (engines/atscale.py).
Written per sweep: results.json (every record, with every short flow's FCT),
summary.csv, and by p4incast-run's report (reports/scenario_report.py)
SUMMARY.md (the settings, the table, the claims' verdicts) and plots of FCT
p50/p99, long-flow throughput and drops against load.
`--resume` may add loads, schemes or repeats to a folder of the same fabric,
traffic and transport.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from p4incast.engines.atscale import ENGINE, SIM
from p4incast.engines.base import Engine
from p4incast.model.atscale import ATSCALE_SCENARIO as SCENARIO
from p4incast.model.atscale import (
    AtScalePoint,
    Fabric,
    Traffic,
    check_fabric,
    check_load,
    check_traffic,
    load_of_arrival_mean,
)
from p4incast.model.errors import ModelError
from p4incast.model.scheme import Scheme, Transport, check_transport

from . import results
from .atscale_summary import SUMMARY_METRICS, AtScaleResultSet
from .config import (
    ExperimentError,
    Paper,
    check_cluster,
    check_name,
    check_repeats,
    check_sources,
    first_difference,
    parse_paper,
    parse_schemes,
    read_yaml,
    typed_section,
)

TOP_KEYS = (
    "name",
    "scenario",
    "fabric",
    "traffic",
    "transport",
    "loads",
    "arrival_means_us",
    "repeats",
    "cluster",
    "schemes",
    "paper",
)
CLAIM_KINDS = ("at_least", "at_most", "near", "ordering", "drops_from")  # of claims.KINDS


@dataclass(frozen=True)
class AtScaleExperiment:
    name: str
    fabric: Fabric
    traffic: Traffic
    transport: Transport
    loads: tuple[float, ...]
    repeats: int
    schemes: tuple[Scheme, ...]
    paper: Paper | None = None
    cluster: str = "local"  # where points run: not part of what is compared

    scenario: ClassVar[str] = SCENARIO

    def points(self) -> list[AtScalePoint]:
        return [
            AtScalePoint(s, load, r, self.fabric, self.traffic, self.transport)
            for s in self.schemes
            for load in self.loads
            for r in range(self.repeats)
        ]

    def as_dict(self) -> dict[str, Any]:
        """The settings results.json echoes (`config`): what the runs depend on."""
        return {
            "fabric": asdict(self.fabric),
            "traffic": asdict(self.traffic),
            "transport": asdict(self.transport),
            "schemes": [asdict(s) for s in self.schemes],
            "loads": list(self.loads),
            "repeats": self.repeats,
        }


def _check_claims(paper: Paper | None, schemes: set[str]) -> None:
    """The claims a preset states, against what an at-scale sweep measures."""
    for i, c in enumerate(paper.claims if paper else ()):
        where = f"paper.claims[{i}] ({c['id']})"
        if c["kind"] not in CLAIM_KINDS:
            raise ExperimentError(
                f"{where}: kind {c['kind']} is an incast claim; at scale: {', '.join(CLAIM_KINDS)}"
            )
        named = [c["scheme"]] if "scheme" in c else list(c.get("schemes") or [])
        unknown = [s for s in named if s not in schemes]
        if not named or unknown:
            raise ExperimentError(f"{where}: scheme(s) {unknown or named} not among the schemes")
        metric = c.get("metric", "drops" if c["kind"] == "drops_from" else None)
        if metric not in SUMMARY_METRICS:
            raise ExperimentError(
                f"{where}: metric {metric!r} is not one of {', '.join(SUMMARY_METRICS)}"
            )
        try:
            for key in ("load", "load_min", "load_max"):
                if key in c:
                    check_load(c[key])
        except ModelError as err:
            raise ExperimentError(f"{where}: {err}") from None


def _check(point: AtScalePoint) -> None:
    """ModelError naming the first of the engine's problems with `point`."""
    problems = ENGINE.check(point)
    if problems:
        raise ModelError(problems[0])


def parse(raw: Any) -> AtScaleExperiment:
    """Validate a whole at-scale preset; ExperimentError naming the first problem.
    Every scheme is checked as the model runs it (the engine's check: the
    incast simulator's check_scheme on the fabric's switch port, and more)."""
    if not isinstance(raw, dict):
        raise ExperimentError("experiment: expected a YAML mapping at the top level")
    unknown = sorted(set(raw) - set(TOP_KEYS))
    if unknown:
        raise ExperimentError(
            f"experiment: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(TOP_KEYS)}"
        )
    if raw.get("scenario") != SCENARIO:
        raise ExperimentError(f"scenario: {raw.get('scenario')!r}, expected {SCENARIO}")
    check_sources(raw)
    name = check_name(raw.get("name", SCENARIO))
    fabric = typed_section("fabric", Fabric, raw.get("fabric"))
    traffic = typed_section("traffic", Traffic, raw.get("traffic"))
    transport = typed_section("transport", Transport, raw.get("transport"))
    key = "arrival_means_us" if "arrival_means_us" in raw else "loads"
    if "loads" in raw and key != "loads":
        raise ExperimentError("experiment: give loads or arrival_means_us, not both")
    values = raw.get(key)
    if not isinstance(values, list) or not values:
        what = "inter-arrival means in µs" if key != "loads" else "fractions in (0, 1)"
        raise ExperimentError(f"{key}: expected a non-empty list of {what}")
    repeats = check_repeats(raw.get("repeats", 1))
    cluster = check_cluster(raw.get("cluster", "local"))
    try:
        check_fabric(fabric)
        check_traffic(traffic, fabric)
        check_transport(transport)
        if key != "loads":
            values = [load_of_arrival_mean(fabric, traffic, m) for m in values]
        loads = [check_load(x) for x in values]
    except ModelError as err:
        raise ExperimentError(str(err)) from None
    schemes = parse_schemes(
        raw.get("schemes"),
        lambda s: _check(AtScalePoint(s, loads[0], 0, fabric, traffic, transport)),
    )
    paper = parse_paper(raw.get("paper"), axis="load")
    _check_claims(paper, {s.name for s in schemes})
    return AtScaleExperiment(
        name, fabric, traffic, transport, tuple(loads), repeats, schemes, paper, cluster
    )


FLAGS = ("loads", "repeats", "schemes", "tors", "hosts_per_tor", "short_flows")
_SECTION_FLAGS = {"tors": "fabric", "hosts_per_tor": "fabric", "short_flows": "traffic"}


def overridden(raw: Any, over: Mapping[str, Any]) -> Any:
    """The preset's YAML with p4incast-run's flags (FLAGS; None: not given) applied;
    --schemes keeps the claims that name only the chosen schemes; --short-flows
    replaces a background_share that would set the count."""
    if not isinstance(raw, dict):
        return raw
    raw = dict(raw)
    for key, value in over.items():
        if value is None:
            continue
        if key in _SECTION_FLAGS:
            section = _SECTION_FLAGS[key]
            kept = dict(raw.get(section) or {})
            if key == "short_flows":  # a count given outright, not the share's
                kept.pop("background_share", None)
            raw[section] = {**kept, key: value}
        elif key == "loads":
            raw = {k: v for k, v in raw.items() if k != "arrival_means_us"}
            raw["loads"] = value
        elif key == "schemes":
            have = [s.get("name") for s in raw.get("schemes") or [] if isinstance(s, dict)]
            missing = sorted(set(value) - set(have))
            if missing:
                raise ExperimentError(
                    f"--schemes: no scheme {', '.join(missing)} (have {', '.join(map(str, have))})"
                )
            raw["schemes"] = [s for s in raw["schemes"] if s.get("name") in value]
            paper = dict(raw.get("paper") or {})
            keep = [
                c
                for c in paper.get("claims") or []
                if {c.get("scheme"), *(c.get("schemes") or [])} - {None} <= set(value)
            ]
            gone = {f"schemes.{n}" for n in have} - {f"schemes.{n}" for n in value}
            kept = {k: v for k, v in (paper.get("sources") or {}).items() if k not in gone}
            if raw.get("paper"):
                raw["paper"] = {**paper, "claims": keep, **({"sources": kept} if kept else {})}
        else:
            raw[key] = value
    return raw


def load(path: Path, over: Mapping[str, Any] | None = None) -> AtScaleExperiment:
    """An at-scale preset file, with p4incast-run's flags applied (`overridden`)."""
    try:
        return parse(overridden(read_yaml(path), over or {}))
    except ExperimentError as err:
        raise ExperimentError(f"{path}: {err}") from None


# -- the scenario: what p4incast-run, the runner and reproduce call ----------


class AtScaleScenario:
    """experiments/scenario.py's Scenario for `scenario: at-scale` presets."""

    name = SCENARIO
    axis = "load"  # what the claims' x is
    flags = FLAGS
    shared_sweep = False  # reproduce: each preset a sweep of its own, continued
    wall_label = "{scheme} load {load} #{repeat}"
    result_set = AtScaleResultSet

    def load(self, path: Path, over: Mapping[str, Any]) -> list[AtScaleExperiment]:
        return [load(path, over)]

    def engine(self, exp: AtScaleExperiment, cluster: str) -> tuple[Engine, str]:
        why = ENGINE.unavailable()
        if why and cluster == "local":
            raise RuntimeError(f"the at-scale scenario runs on the ns-3 model: {why}")
        where = " (on the cluster; not installed here)" if why else ""
        return ENGINE, f"engine: {ENGINE.describe()}{where}"

    def plan(self, exp: AtScaleExperiment) -> str:
        return (
            f"{exp.name}: {len(exp.schemes)} schemes x load in {list(exp.loads)} x "
            f"{exp.repeats} repeat(s) = {len(exp.points())} runs on {exp.fabric.hosts} hosts"
        )

    def problems(self, point: AtScalePoint) -> list[str]:
        return ENGINE.check(point)

    def point_key(self, point: AtScalePoint) -> tuple[str, float, int]:
        return point.scheme.name, point.load, point.repeat

    def run_key(self, run: Mapping[str, Any]) -> tuple[str, float, int]:
        return str(run.get("scheme")), float(run.get("load") or 0), int(run.get("repeat") or 0)

    def label(self, point: AtScalePoint, repeats: int) -> str:
        return point.label()

    def weight(self, point: AtScalePoint) -> float:
        return 1.0

    def log_dir(self, out: Path, point: AtScalePoint) -> Path:
        return out / "logs" / f"{point.scheme.name}-load{point.load}-r{point.repeat}"

    def recorded_engine(self, engine: Engine) -> str:
        return SIM  # sim.atscale's records name the simulator they run on

    def new_set(
        self, exp: AtScaleExperiment, out: Path, engine: Engine | None = None
    ) -> results.ResultSet:
        return AtScaleResultSet(out, exp.name, exp.as_dict())

    def resume_difference(self, old: Any, new: Mapping[str, Any]) -> str | None:
        """The same fabric, traffic and transport, and the same definition of every
        scheme both name (other loads, schemes or repeats may be added)."""
        old = old if isinstance(old, dict) else {}
        for key in ("fabric", "traffic", "transport"):
            diff = first_difference(old.get(key), new[key], key)
            if diff:
                return diff
        theirs = {s["name"]: s for s in old.get("schemes", [])}
        for s in new["schemes"]:
            diff = first_difference(theirs.get(s["name"], s), s, f"scheme {s['name']}")
            if diff:
                return diff
        return None

    def rounds(self, exp: AtScaleExperiment) -> int | None:
        return None  # not round-based (reports/cost.py)


AT_SCALE = AtScaleScenario()
