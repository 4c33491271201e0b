"""`make reproduce`: every paper preset on the simulator, and a report that puts
each paper's claims beside what we measured.

    python -m p4incast.reports.reproduce [--only NAME ...] [--rounds R] [--out DIR]
        [--report-only] [--since FILE ...] [--why FILE]
    p4incast-run reproduce [--only NAME ...] [--rounds R] [--out DIR]   (the same)
    make reproduce                               (all of them)

Runs experiments/papers/*.yaml (every variant) through the runner, then writes
results/reproduce-<UTC time>/REPORT.md: per preset its citation, the preset's
header comment (quoted), a table of its settings with the place in the paper
each comes from (`| parameter | value | source |`, experiments/sources.py),
and one row per claim — the paper's words, our value with its 95 % interval,
and the verdict of reports/verdicts.py — plus one figure per preset variant
with the paper's stated numbers drawn over our curves (reference.png).
`--rounds` cuts every preset's rounds (the report says so, and the intervals
widen accordingly); `--only` picks presets by file stem; `--cluster` runs the
points on a Ray cluster. Presets with `scenario: at-scale` (RCC's 1000-host
fabric, experiments/atscale.py) run after the incast ones, each a sweep of
its own that continues what its folder holds; their sections are built the
same way (reports/scenario_report.py: the claims table, then the scenario's
own body) and `--rounds` does not apply to them. The report's header
says which commit(s) the results came from (every preset's `provenance`,
experiments/provenance.py; listed per preset when they differ), and each
table repeats its experiment's provenance line. Then it counts the paper
presets' claims per class (verdicts.classify: holds; diverges — explained by an
ablation whose claim of the same id holds in one of its variants in this very
report; diverges — unexplained; inconclusive; no data) and lists the
unexplained ones; each paper preset's table shows the class, the ablations'
tables their plain verdicts. All verdicts are computed before any section is
written, from the results (also with --report-only), never from earlier text.

`--since FILE ...` names earlier reports (REPORT.md files, or the hand-kept
docs/reproduce/*.md), oldest first; a later file's row replaces an earlier
one for the same preset, claim and variant. REPORT.md then has a section
"Changed since the last report" right after the class counts: one row per
claim whose verdict changed or whose figure moved (before: ours, verdict and
file, as that file printed them; now: this report's), then the claims that
are new and those that vanished (of the presets this report covers). What
"changed" and "moved" mean exactly: reports/report_diff.py. `--why FILE`
(docs/reproduce/why.yaml) gives each change its reason: YAML
`"<preset>/<claim-id>[/<variant>]": one line`; a change without one shows
"why: not yet written". Both files are read before anything runs.
Then a section "Cost, and the papers' rounds" (reports/cost.py): the runs'
worker-seconds (each record's wall_s), the mean and longest point, this
reproduce's wall time, and the projection to 100 rounds × 5 repeats per incast
preset, in hours on this machine's cores and minutes on 100 Ray workers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from p4incast.engines.base import REGISTRY, resolve
from p4incast.experiments import provenance, results, scenario, sources
from p4incast.experiments.claims import claim_variants
from p4incast.experiments.config import ExperimentError, check_cluster, scenario_of
from p4incast.experiments.executors import ClusterError
from p4incast.experiments.runner import executor_for, resume_sets, run_experiments
from p4incast.model.atscale import ATSCALE_SCENARIO
from p4incast.model.scheme import INCAST_SCENARIO

from . import cost, ns2_twin, plots, report_diff, scenario_report, verdicts
from .verdicts import (
    CLASSES,
    NO_DATA,
    UNEXPLAINED,
    Classified,
    Verdict,
    class_counts,
    classify,
    evaluate,
    rule_table,
)

REPO = Path(__file__).resolve().parent.parent
PAPERS = REPO / "experiments" / "papers"
ABLATIONS = PAPERS / "ablations"
UNRUN_FIGURES = REPO / "reports" / "unrun_figures.yaml"  # figures without a preset, and why
RUN_HERE = tuple(scenario.SCENARIOS)  # the scenarios make reproduce runs
# (preset, its scenario, its experiments (one per variant), their result sets)
Group = tuple[Path, scenario.Scenario, list[Any], list[results.ResultSet]]


def skip_note(path: Path) -> str | None:
    """Why make reproduce does not run this preset (None: it does)."""
    name = scenario_of(path)
    if name in RUN_HERE:
        return None
    return (
        f"{path.stem}: scenario {name}, not one reproduce runs ({' and '.join(RUN_HERE)}): {path}"
    )


def _all_presets(only: list[str] | None) -> list[Path]:
    paths = sorted(PAPERS.glob("*.yaml")) + sorted(ABLATIONS.glob("*.yaml"))
    if only:
        unknown = sorted(set(only) - {p.stem for p in paths})
        if unknown:
            raise ExperimentError(
                f"--only: no preset {', '.join(unknown)} (have {', '.join(p.stem for p in paths)})"
            )
        paths = [p for p in paths if p.stem in only]
    return paths


def presets(only: list[str] | None = None, of: str = INCAST_SCENARIO) -> list[Path]:
    """The paper presets of scenario `of`, then its ablations (each changes one
    setting of a preset)."""
    return [p for p in _all_presets(only) if scenario_of(p) == of]


def atscale_presets(only: list[str] | None = None) -> list[Path]:
    """The at-scale presets (RCC's 1000-host fabric, experiments/atscale.py), ablations last."""
    return presets(only, ATSCALE_SCENARIO)


def skipped(only: list[str] | None = None) -> list[str]:
    """One line per preset of a scenario reproduce does not run."""
    notes = [skip_note(p) for p in _all_presets(only)]
    return [n for n in notes if n]


def unrun_figures(path: Path = UNRUN_FIGURES) -> list[str]:
    """One line per paper figure no preset reproduces, with what it needs that we
    lack (reports/unrun_figures.yaml: a list of {paper, figure, why})."""
    raw = yaml.safe_load(path.read_text()) or []
    keys = ("paper", "figure", "why")
    if not isinstance(raw, list) or not all(
        isinstance(e, dict) and set(e) == set(keys) and all(isinstance(e[k], str) for k in keys)
        for e in raw
    ):
        raise ExperimentError(f"{path}: expected a list of {{paper, figure, why}}, each text")
    return [f"{e['paper']} {e['figure']}: {e['why']}" for e in raw]


def variant_of(exp: Any, base_name: str) -> str:
    """The variant label p4incast-run appended to the preset's name ("" without variants)."""
    return exp.name[len(base_name) + 1 :] if exp.name != base_name else ""


def header_comment(path: Path) -> str:
    """The preset's leading comment: what the paper states and what we chose."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[2:] if line.startswith("# ") else line[1:])
    return "\n".join(lines)


def verdict_rows(
    exps: list[Any], sets: list[results.ResultSet], base: str, path: Path | None = None
) -> list[Verdict]:
    """Every claim of a preset against the summary rows of the variant it names
    (a claim that names none: every variant, as the ablations state them). A
    baseline row carries `baseline_label` (sources.baseline_label: the paper's
    setting, or our choice and why), read from the preset file at `path`."""
    rep = scenario_report.of(exps[0])
    by_variant = {variant_of(e, base): (e, rs) for e, rs in zip(exps, sets, strict=True)}
    paper = exps[0].paper
    out = []
    for claim in paper.claims if paper else ():
        try:
            variants = claim_variants(claim, list(by_variant))
        except ValueError as err:
            raise ExperimentError(f"{base}: {err}") from None
        for variant in variants:
            exp, rs = by_variant[variant]
            one = {**claim, "variant": variant} if variant else dict(claim)
            if paper and paper.is_baseline(exp):
                one["baseline"] = True
            if paper and paper.allows:
                one["allowed"] = paper.reading(exp)
            if one.get("baseline") and path is not None:
                one["baseline_label"] = baseline_label(path, one)
            rows = rs.aggregate()
            if "@" in " ".join(
                map(str, [claim.get("scheme"), claim.get("than"), *claim.get("schemes", [])])
            ):
                # scheme@variant: that scheme's rows in another variant (experiments/claims.py)
                rows = rows + [
                    {**r, "scheme": f"{r['scheme']}@{v}"}
                    for v, (_e, other) in by_variant.items()
                    for r in other.aggregate()
                ]
            out.append(evaluate(one, rows, rep.claim_context(exp)))
    return out


def baseline_label(path: Path, claim: dict[str, Any]) -> str:
    """The baseline row's label (experiments/sources.py baseline_label)."""
    try:
        return sources.baseline_label(sources.read(path), claim, PAPERS)
    except sources.SourceError as err:
        raise ExperimentError(f"{path}: {err}") from None


def base_name(path: Path, exps: list[Any]) -> str:
    """The name the preset's variants extend (its file stem, or its `name:`)."""
    return path.stem if exps[0].name.startswith(path.stem) else exps[0].name


def settings_table(path: Path) -> list[str]:
    """The preset's parameters, each with its value and where it comes from
    (its `paper.sources`, an "as <preset>" resolved in PAPERS: experiments/sources.py)."""
    try:
        return sources.table(sources.read(path), PAPERS)
    except sources.SourceError as err:
        raise ExperimentError(f"{path}: {err}") from None


def report_section(
    path: Path,
    exps: list[Any],
    sets: list[results.ResultSet],
    root: Path,
    classified: list[Classified] | None = None,
) -> str:
    """REPORT.md's section of a preset of any scenario: its citation, its header
    comment, its settings with their sources (settings_table), its claims
    (`classified`: their classes, verdicts.classify, in the verdict column;
    without it, the plain verdicts), what its scenario shows of the whole preset
    (`ScenarioReport.preset_lines`: seed 003's schedule table), then per variant
    what it shows (`ScenarioReport.section`, reports/scenario_report.py)."""
    rep = scenario_report.of(exps[0])
    base = base_name(path, exps)
    paper = exps[0].paper
    lines = [f"## {path.stem}{rep.section_suffix}", ""]
    if paper:
        lines += [f"**{paper.figure}** — {paper.cite}", ""]
    lines += ["```", header_comment(path), "```", ""]
    lines += [*settings_table(path), ""]
    if classified is None:
        shown = [(v, v.verdict) for v in verdict_rows(exps, sets, base, path)]
    else:
        shown = [(c.verdict, c.label) for c in classified]
    if shown:
        lines += [*verdicts.table(shown), ""]
    else:
        lines += ["The paper states no number for this figure in its text; results only.", ""]
    lines += rep.preset_lines(exps)
    for exp, rs in zip(exps, sets, strict=True):
        variant = variant_of(exp, base)
        ref = (paper.reference.get(variant) if paper else None) or {}
        lines += rep.section(exp, rs, root, ref, claim_marks(shown, variant))
    return "\n".join(lines)


def claim_marks(shown: Sequence[tuple[Verdict, str]], variant: str) -> list[plots.Mark]:
    """(claim id, point) of every verdict about `variant` ("" in a preset of one
    variant): the points its figure marks."""
    return [
        (str(v.claim["id"]), p)
        for v, _label in shown
        if str(v.claim.get("variant") or "") == variant
        for p in v.points
    ]


# REPORT.md's lines on where the results came from (the testbed report prints the same)
provenance_header = provenance.report_header


CLASS_WORDS = {
    "holds": "hold",
    "explained": "diverge, explained by an ablation",
    "unexplained": "diverge, unexplained",
    "inconclusive": "inconclusive",
    "no data": "no data",
}


def classes_header(classified: list[Classified]) -> list[str]:
    """REPORT.md's count of the paper presets' claims per class, and the unexplained ones."""
    if not classified:
        return []
    counts = class_counts(classified)
    parts = [f"{counts.get(k, 0)} {CLASS_WORDS[k]}" for k in CLASSES]
    parts += [f"{n} {k}" for k, n in counts.items() if k not in CLASSES]
    lines = [
        f"Paper claims ({len(classified)}, ablations' own rows not counted): {'; '.join(parts)}.",
        "",
    ]
    unexplained = [c for c in classified if c.cls == UNEXPLAINED]
    if unexplained:
        lines += ["Unexplained divergences:", ""]
        for c in unexplained:
            variant = c.verdict.claim.get("variant")
            where = f" ({variant})" if variant else ""
            note = f" — {c.why_unexplained}" if c.why_unexplained else ""
            lines.append(f"- {c.preset}: {c.verdict.claim['id']}{where}{note}")
        lines.append("")
    return lines


def unrun_ablation_verdicts(ran: set[str]) -> list[tuple[str, Verdict]]:
    """A no-data verdict for each claim of the ablations this report does not run
    (--only), so an unexplained divergence can name them."""
    out = []
    for path in sorted(ABLATIONS.glob("*.yaml")):
        if path.stem in ran:
            continue
        try:
            raw = yaml.safe_load(path.read_text())
            claims = raw.get("paper", {}).get("claims") or []
        except (OSError, yaml.YAMLError, AttributeError):
            continue
        for c in claims:
            if isinstance(c, dict) and "id" in c:
                out.append((path.stem, Verdict(dict(c), NO_DATA, "not run")))
    return out


def classify_all(
    verdicts: list[tuple[Path, list[Verdict]]],
) -> dict[Path, list[Classified]]:
    """Every paper preset's verdicts in their classes, from the ablations' verdicts
    of the same report (and the ablations it did not run). `verdicts`: (preset path,
    its verdicts) for every preset of the report, ablations included."""
    ablation = [(p.stem, v) for p, vs in verdicts if p.parent == ABLATIONS for v in vs]
    ablation += unrun_ablation_verdicts({p.stem for p, _vs in verdicts})
    out = {}
    for path, vs in verdicts:
        if path.parent != ABLATIONS:
            out[path] = classify([(path.stem, v) for v in vs], ablation)
    return out


SWEEP_JSON = "sweep.json"  # a finished run's wall time and machine load, for --report-only


def write_sweep(
    root: Path, runs: int, wall_s: float, started: datetime, load0: tuple[float, ...]
) -> None:
    """Record how long the run took and how loaded the machine was (start, end)."""
    data = {
        "runs": runs,
        "wall_s": round(wall_s, 1),
        "started": started.isoformat(timespec="seconds"),
        "load_start": [round(x, 2) for x in load0],
        "load_end": [round(x, 2) for x in os.getloadavg()],
    }
    root.mkdir(parents=True, exist_ok=True)
    results.write_atomic(root / SWEEP_JSON, json.dumps(data, indent=1) + "\n")


def read_sweep(root: Path) -> dict[str, Any] | None:
    """What write_sweep recorded in `root`, or None."""
    try:
        data = json.loads((root / SWEEP_JSON).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def sweep_line(sweep: dict[str, Any]) -> str:
    """The run's wall time and load as REPORT.md states them."""

    def load(key: str) -> str:
        v = sweep.get(key)
        return "/".join(f"{x:.2f}" for x in v) if isinstance(v, list) else "not recorded"

    wall = sweep.get("wall_s")
    took = f"{wall / 60:.1f} min" if isinstance(wall, int | float) else "an unrecorded time"
    return (
        f"The run that made them took {took} from {sweep.get('started', '?')}, load average "
        f"{load('load_start')} at its start and {load('load_end')} at its end."
    )


def read_since(files: list[Path]) -> list[tuple[Path, list[report_diff.ClaimRow]]]:
    """(file, its claim rows) of each earlier report, oldest first (OSError naming a
    file it cannot read)."""
    out = []
    for f in files:
        try:
            text = f.read_text(encoding="utf-8")
        except OSError as err:
            raise OSError(f"--since {f}: {err.strerror or err}") from None
        out.append((f, report_diff.parse_report(text, str(f))))
    return out


def read_why(path: Path) -> dict[str, str]:
    """--why: the YAML mapping of claims to why they changed (report_diff.load_why)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise OSError(f"--why {path}: {err.strerror or err}") from None
    return report_diff.load_why(text, f"--why {path}")


def now_verdicts(
    verdicts: list[tuple[Path, list[Verdict]]], classified: dict[Path, list[Classified]]
) -> list[tuple[str, Verdict, str]]:
    """(preset, verdict, the verdict column as REPORT.md prints it) of every claim row:
    a paper preset's class label, an ablation's plain verdict."""
    out = []
    for path, vs in verdicts:
        if path in classified:
            out += [(path.stem, c.verdict, c.label) for c in classified[path]]
        else:
            out += [(path.stem, v, v.verdict) for v in vs]
    return out


def cost_groups(groups: list[Group]) -> list[cost.Group]:
    """The run records' wall times for the cost section: one group per experiment;
    the incast presets share one sweep, each at-scale preset is a sweep of its own."""
    out = []
    for path, sc, pexps, mine in groups:
        sweep = sc.name if sc.shared_sweep else path.stem
        for e, rs in zip(pexps, mine, strict=True):
            walls, missing = cost.walls_of(rs.runs, sc.wall_label)
            shared = sum(1 for r in rs.runs if r.get(results.SHARED_FROM))
            out.append(
                cost.Group(path.stem, sweep, walls, missing, sc.rounds(e), e.repeats, shared)
            )
    return out


def _dir(root: Path, path: Path, e: Any) -> Path:
    """Where an experiment's results go: <root>/<preset path>/<experiment name> for
    the presets of the shared sweep; an at-scale preset's own sweep owns
    <root>/<preset path> (the folder it continues)."""
    d = root / path.relative_to(PAPERS).with_suffix("")
    return d / e.name if scenario.of(e).shared_sweep else d


def _run(
    loaded: list[tuple[Path, scenario.Scenario, list[Any]]],
    root: Path,
    jobs: int,
    cluster: str,
) -> list[Group]:
    """Every preset's points: the incast presets in one sweep (one worker pool,
    prepared once), then each at-scale preset in a sweep of its own that
    continues what its folder holds. `jobs`: local workers (0: one per CPU), or at
    most that many on a cluster (0: what it offers). ExperimentError, ClusterError
    as they come."""
    shared = [(p, sc, es) for p, sc, es in loaded if sc.shared_sweep]
    alone = [(p, sc, es) for p, sc, es in loaded if not sc.shared_sweep]
    sweeps = [shared] if shared else []
    sweeps += [[one] for one in alone]
    by_path: dict[Path, list[results.ResultSet]] = {}
    for sweep in sweeps:
        exps = [e for _p, _sc, es in sweep for e in es]
        dirs = [_dir(root, p, e) for p, _sc, es in sweep for e in es]
        engine, _note = sweep[0][1].engine(exps[0], cluster)
        for d in dirs:
            d.mkdir(parents=True, exist_ok=True)
        sets = None if sweep[0][1].shared_sweep else resume_sets(exps, engine, dirs)
        if cluster == "local":
            sets = run_experiments(exps, engine, dirs, jobs or os.cpu_count() or 1, sets=sets)
        else:
            with executor_for(engine, cluster, workers=jobs or None) as ex:
                print(f"running on {ex.where}", flush=True)
                sets = run_experiments(exps, engine, dirs, 0, executor=ex, sets=sets)
        at = 0
        for p, _sc, es in sweep:
            by_path[p] = sets[at : at + len(es)]
            at += len(es)
    return [(p, sc, es, by_path[p]) for p, sc, es in loaded]


def _saved(loaded: list[tuple[Path, scenario.Scenario, list[Any]]], root: Path) -> list[Group]:
    """--report-only: the sets in `root` (an empty one where a folder has none)."""
    out = []
    for p, sc, es in loaded:
        sets = []
        for e in es:
            d = _dir(root, p, e)
            ok = (d / results.RESULTS_JSON).is_file()
            sets.append(results.load(d, sc.result_set) if ok else sc.new_set(e, d))
        out.append((p, sc, es, sets))
    return out


def ns2_reference(
    groups: list[Group], root: Path, jobs: int | None, saved: bool
) -> dict[Path, list[str]]:
    """The ns-2 subsection of every preset ns2_twin.REFERENCE names: its schemes
    listed there, run again on ns-2 (engines/ns2.py) at the same points into
    <root>/ns2/<preset>/<variant> (`saved`, --report-only: read from there), beside
    our model's rows and the preset's claims on both (reports/ns2_twin.py)."""
    out: dict[Path, list[str]] = {}
    engine = REGISTRY[ns2_twin.REF]
    for path, _sc, exps, mine in groups:
        schemes = ns2_twin.REFERENCE.get(path.stem)
        if not schemes:
            continue
        why = engine.unavailable()
        if why and not saved:
            out[path] = [
                "### ns-2, seed 003's simulator, beside our model",
                "",
                f"Not run: {why}.",
                "",
            ]
            continue
        refs = [
            e.with_overrides(name=f"{e.name}-ns2", engine=ns2_twin.REF, schemes=list(schemes))
            for e in exps
        ]
        dirs = [root / "ns2" / path.stem / e.name for e in exps]
        if saved:
            sets = [results.load(d) if (d / results.RESULTS_JSON).is_file() else None for d in dirs]
        else:
            for d in dirs:
                d.mkdir(parents=True, exist_ok=True)
            sets = list(run_experiments(refs, engine, dirs, jobs or os.cpu_count() or 1))
        base = base_name(path, exps)
        rep = scenario_report.of(exps[0])
        variant_rows = []
        pairs = []
        claims = exps[0].paper.claims if exps[0].paper else ()
        for exp, rs, ref in zip(exps, mine, sets, strict=True):
            if ref is None:
                continue
            variant = variant_of(exp, base)
            ns2_rows, sim_rows = ref.aggregate(), rs.aggregate()
            variant_rows.append((variant, ns2_rows, sim_rows))
            mine_claims = [
                {**c, "variant": variant} if variant else dict(c)
                for c in claims
                if variant in claim_variants(c, [variant_of(e, base) for e in exps])
            ]
            pairs += ns2_twin.judge(
                mine_claims, sim_rows, ns2_rows, rep.claim_context(exp), schemes
            )
        note = (
            f"{', '.join(schemes)} at the preset's points on {engine.describe()}: the Tcl "
            "engines/ns2.py writes (ns-2's Agent/TCP defaults except what the preset sets), "
            f"results in ns2/{path.stem}/."
        )
        out[path] = ns2_twin.section(variant_rows, pairs, note)
    return out


def main(argv: list[str] | None = None, prog: str = "reproduce") -> int:
    ap = argparse.ArgumentParser(prog=prog, description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--only", nargs="+", metavar="PRESET", help="preset file stems to run")
    ap.add_argument("--rounds", type=int, help="cut every preset's rounds (intervals widen)")
    ap.add_argument("--out", type=Path, help="results folder (default results/reproduce-<time>)")
    ap.add_argument("--jobs", type=int, default=0, help="simulator workers (default: all CPUs)")
    ap.add_argument(
        "--cluster",
        metavar="ADDRESS",
        default="local",
        help="run every point on a Ray cluster: auto, ray://HOST:PORT or HOST:PORT "
        "(as p4incast-run --cluster); default local",
    )
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="run nothing: write REPORT.md from the results already in --out (e.g. after Ctrl-C)",
    )
    ap.add_argument(
        "--since",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="earlier reports, oldest first: REPORT.md says what changed since them",
    )
    ap.add_argument(
        "--publish",
        type=Path,
        metavar="FILE",
        help="also write REPORT.md to FILE (docs/reproduce/REPORT.md), its figures "
        "copied to figures/ beside it (the PNGs there before are replaced)",
    )
    ap.add_argument(
        "--why",
        type=Path,
        metavar="FILE",
        help='why claims changed: YAML "<preset>/<claim-id>[/<variant>]": one line '
        "(docs/reproduce/why.yaml)",
    )
    args = ap.parse_args(argv)
    if args.report_only and not args.out:
        print(f"{prog}: --report-only needs --out RESULTS_DIR", file=sys.stderr)
        return 2
    if args.why and not args.since:
        print(f"{prog}: --why needs --since (what changed since which report)", file=sys.stderr)
        return 2
    try:  # read before anything runs: a bad file must not wait for the sweep
        earlier = read_since(args.since or [])
        why = read_why(args.why) if args.why else {}
    except (OSError, report_diff.WhyError) as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    try:
        paths = [p for name in RUN_HERE for p in presets(args.only, name)]
        loaded = []
        for p in paths:
            sc = scenario.of_path(p)
            flags = {"rounds": args.rounds, "engine": "sim"}  # every preset on the simulator
            over = {k: v for k, v in flags.items() if k in sc.flags}
            loaded.append((p, sc, sc.load(p, over)))
        note = "engine: results on disk" if args.report_only else resolve("sim")[1]
        cluster = check_cluster(args.cluster, "--cluster")
        figures_unrun = unrun_figures()
    except (ExperimentError, RuntimeError) as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    root = args.out or REPO / "results" / f"reproduce-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
    total = sum(len(e.points()) for _p, _sc, exps in loaded for e in exps)
    notes = skipped(args.only)
    for line in notes:
        print(f"skipped {line}", flush=True)
    for line in figures_unrun:
        print(f"no preset for {line}", flush=True)
    print(f"{note}; {len(paths)} presets, {total} runs; results in {root}", flush=True)
    t0, t0_wall = time.monotonic(), datetime.now(UTC)
    load0 = os.getloadavg()
    try:
        if args.report_only:  # what an interrupted run finished; unrun points are missing
            groups = _saved(loaded, root)
        else:
            groups = _run(loaded, root, args.jobs, cluster)
    except (ClusterError, ExperimentError, RuntimeError) as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    try:  # the ns-2 reference of seed 003's presets (reports/ns2_twin.py)
        reference = ns2_reference(groups, root, args.jobs, args.report_only)
    except (ExperimentError, RuntimeError) as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    # Every verdict first (paper presets and ablations), then the paper presets'
    # classes from the ablations' verdicts of this very report, then the sections.
    try:
        verdicts = [
            (p, verdict_rows(pexps, mine, base_name(p, pexps), p)) for p, _sc, pexps, mine in groups
        ]
    except ExperimentError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    classified = classify_all(verdicts)
    sections: list[str] = []
    named: list[tuple[str, Any]] = []
    for path, _sc, pexps, mine in groups:
        if path.parent == ABLATIONS and "# Ablations" not in sections:
            sections += ["# Ablations", "", "Each changes one setting of a preset above.", ""]
        named += [(path.stem, rs.provenance) for rs in mine]
        sections.append(report_section(path, pexps, mine, root, classified.get(path)))
        if path in reference:
            sections.append("\n".join(reference[path]))
    wall_s: float | None = time.monotonic() - t0
    cut = f" Rounds cut to {args.rounds} per run (--rounds)." if args.rounds else ""
    done = sum(len(rs.runs) for _p, _sc, _e, mine in groups for rs in mine)
    if args.report_only:
        ran = f"Rebuilt from the {done} of {total} runs finished in {root} (--report-only)."
        sweep = read_sweep(root)
        wall_s = sweep.get("wall_s") if sweep else None
        if sweep and wall_s is not None:
            ran += f" {sweep_line(sweep)}"
    else:
        assert wall_s is not None
        ran = f"{total} runs in {wall_s / 60:.1f} min on {note.removeprefix('engine: ')}."
        write_sweep(root, total, wall_s, t0_wall, load0)
        ran += f" {sweep_line(read_sweep(root) or {})}"
    changed: list[str] = []
    if args.since:
        now = report_diff.rows_of(now_verdicts(verdicts, classified))
        d = report_diff.diff(report_diff.merge(rows for _f, rows in earlier), now, args.only)
        counts = [(str(f), len(rows)) for f, rows in earlier]
        changed = report_diff.changed_section(d, why, counts)
        stale = report_diff.unused_why(why, d)
        if stale:
            unused = ", ".join(stale)
            print(f"{prog}: --why entries for no changed claim: {unused}", file=sys.stderr)
    groups_cost = cost_groups(groups)
    head = [
        "# p4-incast: the papers' headline results on the simulator",
        "",
        f"{ran}{cut}",
        *provenance_header(named),
        "Verdicts (reports/verdicts.py): holds; diverges (wrong side even at the edge of our",
        "95 % interval); inconclusive (only the mean is on the wrong side; for an ordering:",
        "the intervals overlap, or the gap is below the metric's minimum effect only on the",
        'means, or a point has no interval). What each wording is taken to mean ("keeps its',
        'goodput", "drops sharply", "fewer"): the rules at the top of reports/verdicts.py,',
        "below with one claim of ours that holds under each and one that fails;",
        "each figure circles the points that decided a verdict, labelled with the claim's id.",
        "A paper preset's divergence is explained by an ablation whose own verdict flips it:",
        "a claim of the same id holds there under the ablated setting and not under the",
        "paper's (its baseline rows), no claim the preset reproduces diverges under that",
        "setting, and the setting is one the paper allows (the ablation's paper.allows",
        "quotes the place; verdicts.EXPLAINING_RULE), in this report; else unexplained",
        "(computed, verdicts.classify).",
        *[f"Not run here: {line}." for line in notes],
        *[f"Not run here, no preset: {line}." for line in figures_unrun],
        "",
        *classes_header([c for cs in classified.values() for c in cs]),
        "## The rules, each failing both ways",
        "",
        *rule_table(),
        "",
        *changed,
        *cost.section(groups_cost, wall_s, os.cpu_count() or 1),
    ]
    root.mkdir(parents=True, exist_ok=True)
    report = root / "REPORT.md"
    report.write_text("\n".join(head + sections))
    print(f"\n{ran}\nreport: {report}")
    if args.publish:
        figures = args.publish.parent / FIGURES_DIR
        args.publish.write_text(published(report.read_text(), root, figures))
        print(f"published: {args.publish}")
    return 0


FIGURE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")


FIGURES_DIR = "figures"  # beside the published report


def published(text: str, root: Path, figures: Path) -> str:
    """REPORT.md for docs/: each embedded figure (a path under the results folder
    `root`) is copied into `figures`, named by that path with "--" for "/", and
    linked there. The PNGs `figures` held before are removed first, so it keeps
    only what the report shows."""
    figures.mkdir(parents=True, exist_ok=True)
    for old in figures.glob("*.png"):
        old.unlink()

    def copy(m: re.Match[str]) -> str:
        alt, rel = m.group(1), m.group(2)
        name = "--".join(Path(rel).parts)
        shutil.copyfile(root / rel, figures / name)
        return f"![{alt}]({FIGURES_DIR}/{name})"

    return FIGURE.sub(copy, text)


if __name__ == "__main__":
    sys.exit(main())
