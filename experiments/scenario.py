"""What differs between kinds of experiment, behind one protocol, so that one CLI
(p4incast-run), one run loop and one resume (runner.py), one claims vocabulary
(claims.py) and one report (reports/reproduce.py) serve them all. What a
report shows of each scenario is the report side's (reports/scenario_report.py,
keyed by the scenario's name): nothing here draws or writes a report.

A preset's `scenario:` (absent: incast) picks its Scenario (`of_path`). The steps,
and the Scenario member each calls:

    parse      load(path, flags) -> experiments  the preset (every variant) validated
                                                 whole; every scheme through
                                                 model.scheme.check_scheme
    points     exp.points(); point_key / run_key (what resume matches), label,
               weight (progress bar), log_dir, problems (before anything runs)
    run        engine(exp, cluster) -> the engine; runner.run_experiments
    summarize  new_set / result_set: a results.ResultSet whose aggregate() are the
               summary rows, one per (scheme, x); x is `axis` (n or load)
    cost       rounds(exp), wall_label -> reports/cost.py's groups

and the steps of reports/scenario_report.py's ScenarioReport:

    claims     claim_context(exp) -> the context of verdicts.evaluate (axis, ...)
    report     report(exp, rs) -> what p4incast-run prints (and keeps);
               section(...) -> REPORT.md's body for it (reports/reproduce.py)
    plots      plots(rs) -> the PNGs written

Two scenarios: incast (config.Experiment, N senders × rounds on a star or leaf-spine;
`IncastScenario` here) and at-scale (RCC's 1000-host fabric over offered load;
experiments/atscale.py). An experiment names its scenario (`exp.scenario`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from p4incast.engines import REGISTRY, Engine, resolve
from p4incast.model.atscale import ATSCALE_SCENARIO
from p4incast.model.scheme import INCAST_SCENARIO, Point

from . import results
from .atscale import AT_SCALE
from .config import (
    Experiment,
    ExperimentError,
    expand,
    first_difference,
    read_yaml,
    scenario_of,
)


class Scenario(Protocol):
    """A kind of experiment (module docstring). `exp` is the scenario's experiment
    (name, repeats, cluster, paper, points(), as_dict()); `point` one of its points."""

    name: str  # a preset's `scenario:`; what reports/scenario_report.py keys on
    axis: str  # the summary rows' x, as claims name it: n | load
    shared_sweep: bool  # reproduce: all its presets in one sweep (else one each, continued)
    wall_label: str  # a run record as cost.walls_of names it

    # Read-only, so a scenario's class attribute may be of a narrower type.
    @property
    def flags(self) -> tuple[str, ...]: ...  # p4incast-run's overrides (argparse dests)

    @property
    def result_set(self) -> type[results.ResultSet]: ...  # the class its results load as

    def load(self, path: Path, over: Mapping[str, Any]) -> list[Any]: ...
    def engine(self, exp: Any, cluster: str) -> tuple[Engine, str]: ...
    def plan(self, exp: Any) -> str: ...
    def problems(self, point: Any) -> list[str]: ...
    def point_key(self, point: Any) -> tuple[Any, ...]: ...
    def run_key(self, run: Mapping[str, Any]) -> tuple[Any, ...]: ...
    def label(self, point: Any, repeats: int) -> str: ...
    def weight(self, point: Any) -> float: ...
    def log_dir(self, out: Path, point: Any) -> Path: ...
    def recorded_engine(self, engine: Engine) -> str: ...
    def new_set(self, exp: Any, out: Path, engine: Engine | None = None) -> results.ResultSet: ...
    def resume_difference(self, old: Any, new: Any) -> str | None: ...
    def rounds(self, exp: Any) -> int | None: ...


class IncastScenario:
    """N senders answer one receiver, round after round (config.py's experiments)."""

    name = INCAST_SCENARIO
    axis = "n"
    flags = ("senders", "rounds", "repeats", "schemes", "engine")
    shared_sweep = True
    wall_label = "{scheme} N={n} #{repeat}"
    result_set = results.ResultSet

    def load(self, path: Path, over: Mapping[str, Any]) -> list[Experiment]:
        """Every variant of the preset, with p4incast-run's flags (`flags`) applied."""
        raw = read_yaml(path)
        if isinstance(raw, dict) and raw.get("scenario") == INCAST_SCENARIO:
            raw = {k: v for k, v in raw.items() if k != "scenario"}
        try:
            exps = expand(raw)
        except ExperimentError as err:
            raise ExperimentError(f"{path}: {err}") from None
        return [e.with_overrides(**over) for e in exps]

    def engine(self, exp: Experiment, cluster: str) -> tuple[Engine, str]:
        """The experiment's engine (`engine:`, auto: the first that runs here). A sweep
        on a cluster that names its engine does not need it here: the nodes check it."""
        if cluster != "local" and exp.engine != "auto":
            engine = REGISTRY[exp.engine]
            if engine.unavailable():
                return engine, f"engine: {engine.name} (on the cluster; not installed here)"
        return resolve(exp.engine)

    def plan(self, exp: Experiment) -> str:
        return (
            f"{exp.name}: {len(exp.schemes)} schemes x N in {list(exp.senders)} x {exp.repeats} "
            f"repeat(s) = {len(exp.points())} runs of {exp.app.rounds} rounds"
        )

    def problems(self, point: Point) -> list[str]:
        return point.problems()

    def point_key(self, point: Point) -> tuple[str, int, int]:
        return point.scheme.name, point.n, point.repeat

    def run_key(self, run: Mapping[str, Any]) -> tuple[str, int, int]:
        return str(run.get("scheme")), int(run.get("n") or 0), int(run.get("repeat") or 0)

    def label(self, point: Point, repeats: int) -> str:
        return f"{point.scheme.name} N={point.n}" + (f" #{point.repeat + 1}" if repeats > 1 else "")

    def weight(self, point: Point) -> float:
        return 8 + point.n  # a network setup (~8 senders' worth), then time in proportion to N

    def log_dir(self, out: Path, point: Point) -> Path:
        return out / "logs" / f"{point.scheme.name}-n{point.n}-r{point.repeat}"

    def recorded_engine(self, engine: Engine) -> str:
        return engine.name

    def new_set(
        self, exp: Experiment, out: Path, engine: Engine | None = None
    ) -> results.ResultSet:
        link = exp.link_bps(engine.name) if engine else None
        return results.ResultSet(out, exp.name, exp.as_dict(), link_bps=link)

    def resume_difference(self, old: Any, new: Any) -> str | None:
        """Every setting the same (where the points ran aside), except that the sweep
        may grow: schemes, N values and repeats may be added, never dropped or
        redefined, so every run the folder keeps is a point of the new sweep."""
        grows = ("cluster", "schemes", "senders", "repeats")

        def plain(config: Any) -> Any:
            if not isinstance(config, dict):
                return config
            return {k: v for k, v in config.items() if k not in grows}

        diff = first_difference(plain(old), plain(new))
        if diff or not isinstance(old, dict):
            return diff
        ours = {s["name"]: s for s in new["schemes"]}
        for s in old.get("schemes", []):
            if s["name"] not in ours:
                return f"scheme {s['name']} there, not now"
            diff = first_difference(s, ours[s["name"]], f"scheme {s['name']}")
            if diff:
                return diff
        gone = sorted(set(old.get("senders", [])) - set(new["senders"]))
        if gone:
            return f"senders {gone} there, not now"
        if int(old.get("repeats", 1)) > int(new["repeats"]):
            return f"repeats: {old.get('repeats')} there vs {new['repeats']} now"
        return None

    def rounds(self, exp: Experiment) -> int | None:
        return exp.app.rounds


INCAST = IncastScenario()
SCENARIOS: dict[str, Scenario] = {INCAST_SCENARIO: INCAST, ATSCALE_SCENARIO: AT_SCALE}


def named(name: str) -> Scenario:
    """The scenario a preset's `scenario:` names; ExperimentError naming the known ones."""
    if name not in SCENARIOS:
        raise ExperimentError(f"scenario: {name!r} is not one of {', '.join(SCENARIOS)}")
    return SCENARIOS[name]


def of_path(path: Path) -> Scenario:
    """The scenario of a preset file (incast when it names none)."""
    return named(scenario_of(path))


def of(exp: Any) -> Scenario:
    """The scenario of a loaded experiment."""
    return SCENARIOS[getattr(exp, "scenario", INCAST_SCENARIO)]
