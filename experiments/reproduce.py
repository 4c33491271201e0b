"""`make reproduce`: every paper preset on the simulator, and a report that puts
each paper's claims beside what we measured.

    python -m p4incast.experiments.reproduce [--only NAME ...] [--rounds R] [--out DIR]
        [--report-only] [--since FILE ...] [--why FILE]
    p4incast-run reproduce [--only NAME ...] [--rounds R] [--out DIR]   (the same)
    make reproduce                               (all of them)

Runs experiments/papers/*.yaml (every variant) through the runner, then writes
results/reproduce-<UTC time>/REPORT.md: per preset its citation, its settings,
the settings the paper does not state (the preset's header comment, quoted),
and one row per claim — the paper's words, our value with its 95 % interval,
and the verdict of experiments/claims.py — plus one figure per preset variant
with the paper's stated numbers drawn over our curves (reference.png).
`--rounds` cuts every preset's rounds (the report says so, and the intervals
widen accordingly); `--only` picks presets by file stem; `--cluster` runs the
points on a Ray cluster. Presets with `scenario: at-scale` (RCC's 1000-host
fabric) run after the incast ones through experiments/atscale.py, each a
section of the report (`--rounds` does not apply to them). The report's header
says which commit(s) the results came from (every preset's `provenance`,
experiments/provenance.py; listed per preset when they differ), and each
table repeats its experiment's provenance line. Then it counts the paper
presets' claims per class (claims.classify: holds; diverges — explained by an
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
"changed" and "moved" mean exactly: experiments/report_diff.py. `--why FILE`
(docs/reproduce/why.yaml) gives each change its reason: YAML
`"<preset>/<claim-id>[/<variant>]": one line`; a change without one shows
"why: not yet written". Both files are read before anything runs.
Then a section "Cost, and the papers' rounds" (experiments/cost.py): the runs'
worker-seconds (each record's wall_s), the mean and longest point, this
reproduce's wall time, and the projection to 100 rounds × 5 repeats per incast
preset, in hours on this machine's cores and minutes on 100 Ray workers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib
import yaml

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the Agg backend is chosen)

from p4incast.engines.base import resolve  # noqa: E402
from p4incast.model.atscale import ATSCALE_SCENARIO  # noqa: E402
from p4incast.model.scheme import INCAST_SCENARIO  # noqa: E402
from p4incast.sim.engine import base_rtt_s  # noqa: E402

from . import atscale, cost, provenance, report_diff, results  # noqa: E402
from .claims import (  # noqa: E402
    CLASSES,
    NO_DATA,
    UNEXPLAINED,
    Classified,
    Verdict,
    class_counts,
    classify,
    evaluate,
)
from .config import (  # noqa: E402
    Experiment,
    ExperimentError,
    check_cluster,
    load_all,
    scenario_of,
)
from .executors import ClusterError  # noqa: E402
from .runner import executor_for, run_experiments  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PAPERS = REPO / "experiments" / "papers"
ABLATIONS = PAPERS / "ablations"
METRIC_LABEL = {
    "goodput_mbps": "goodput (Mbit/s)",
    "rto_round_ratio": "rounds with an RTO",
    "fct_p99_ms": "FCT p99 (ms)",
    "drops": "drops",
}


RUN_HERE = (INCAST_SCENARIO, ATSCALE_SCENARIO)  # the scenarios make reproduce runs


def skip_note(path: Path) -> str | None:
    """Why make reproduce does not run this preset (None: it does)."""
    scenario = scenario_of(path)
    if scenario in RUN_HERE:
        return None
    return (
        f"{path.stem}: scenario {scenario}, not one reproduce runs "
        f"({' and '.join(RUN_HERE)}): {path}"
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


def presets(only: list[str] | None = None) -> list[Path]:
    """The incast paper presets, then the ablations (each changes one setting of a preset)."""
    return [p for p in _all_presets(only) if scenario_of(p) == INCAST_SCENARIO]


def atscale_presets(only: list[str] | None = None) -> list[Path]:
    """The at-scale presets (RCC's 1000-host fabric, experiments/atscale.py), ablations last."""
    return [p for p in _all_presets(only) if scenario_of(p) == ATSCALE_SCENARIO]


def skipped(only: list[str] | None = None) -> list[str]:
    """One line per preset of a scenario reproduce does not run."""
    notes = [skip_note(p) for p in _all_presets(only)]
    return [n for n in notes if n]


def atscale_verdicts(exp: atscale.AtScaleExperiment, d: Path) -> list[Verdict]:
    """The at-scale preset's claims against the records in `d` (no data without any)."""
    records = atscale.load_records(d)
    if not records:
        return [
            Verdict({"id": c.get("id", c["kind"]), "text": c.get("text", "")}, NO_DATA, "no runs")
            for c in exp.paper.get("claims", [])
        ]
    return [
        Verdict({"id": v["id"], "text": v["text"]}, v["verdict"], v["measured"])
        for v in atscale.verdicts(exp, atscale.summarize(records))
    ]


def atscale_section(
    path: Path,
    exp: atscale.AtScaleExperiment,
    d: Path,
    root: Path,
    classified: list[Classified] | None = None,
) -> str:
    """REPORT.md's section of an at-scale preset: its header comment, then its SUMMARY
    (its claims' verdict column shows their classes when `classified` is given)."""
    records = atscale.load_records(d)
    if not records:
        return f"## {path.stem}\n\nNo runs in {d}.\n"
    summary = atscale.report(d, exp, records).split("\n", 1)[1]  # its own title dropped
    lines = summary.split("\n")
    for c in classified or ():  # the claim's row: `| id: text | **verdict** | measured |`
        cell = f"| {c.verdict.claim['id']}: {c.verdict.claim['text']} | **"
        plain, shown = f"{cell}{c.verdict.verdict}** |", f"{cell}{c.label}** |"
        lines = [shown + ln[len(plain) :] if ln.startswith(plain) else ln for ln in lines]
    summary = "\n".join(lines)
    figures = " ".join(f"![{f.stem}]({f.relative_to(root)})" for f in sorted(d.glob("*.png")))
    return "\n".join(
        [f"## {path.stem} (at scale)", "", "```", header_comment(path), "```", summary, figures, ""]
    )


def variant_of(exp: Experiment, base_name: str) -> str:
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


def reference_plot(
    rows: list[dict[str, Any]], reference: dict[str, Any], title: str, out: Path
) -> Path | None:
    """Our goodput (and any other referenced metric) per scheme with 95 % error bars,
    and the paper's stated numbers over them: points as black markers, peaks as
    dashed horizontal lines, "collapses near N" as dotted vertical lines."""
    metrics = [m for m in reference if m in METRIC_LABEL] or ["goodput_mbps"]
    fig, axes = plt.subplots(1, len(metrics), figsize=(6.5 * len(metrics), 4.2), squeeze=False)
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    for ax, metric in zip(axes[0], metrics, strict=True):
        for i, s in enumerate(schemes):
            pts = [r for r in rows if r["scheme"] == s and r.get(metric) is not None]
            if not pts:
                continue
            xs = [r["n"] for r in pts]
            ys = [float(r[metric]) for r in pts]
            lo = [r.get(f"{metric}_ci_lo") for r in pts]
            hi = [r.get(f"{metric}_ci_hi") for r in pts]
            err = None
            if all(v is not None for v in lo + hi):
                err = [
                    [y - float(a) for y, a in zip(ys, lo, strict=True)],
                    [float(b) - y for y, b in zip(ys, hi, strict=True)],
                ]
            ax.errorbar(xs, ys, yerr=err, marker="o", ms=3, capsize=2, label=s, color=f"C{i}")
            for n, v in reference.get(metric, {}).get(s, []):
                ax.plot([n], [v], "k*", ms=12)
                ax.annotate(f"paper {s}", (n, v), textcoords="offset points", xytext=(4, 4))
            if metric == "goodput_mbps":
                peak = reference.get("peak_goodput_mbps", {}).get(s)
                if peak is not None:
                    ax.axhline(peak, color=f"C{i}", ls="--", lw=1)
                n_c = reference.get("collapse_n", {}).get(s)
                if n_c is not None:
                    ax.axvline(n_c, color=f"C{i}", ls=":", lw=1)
        ax.set_xlabel("senders N")
        ax.set_ylabel(METRIC_LABEL[metric])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"{title}\nours: lines with 95 % CI; paper: ★ points, -- peaks, : collapse N")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def verdict_rows(exps: list[Experiment], sets: list[results.ResultSet], base: str) -> list[Verdict]:
    by_variant = {variant_of(e, base): (e, rs) for e, rs in zip(exps, sets, strict=True)}
    paper = exps[0].paper
    out = []
    for claim in paper.claims if paper else ():
        # a claim that names no variant is checked on every variant (ablations)
        variants = [str(claim["variant"])] if "variant" in claim else list(by_variant)
        for variant in variants:
            if variant not in by_variant:
                raise ExperimentError(
                    f"{base}: claim {claim['id']} names variant {variant!r}; "
                    f"the preset has {', '.join(repr(v) for v in by_variant)}"
                )
            exp, rs = by_variant[variant]
            ctx = {"topology": exp.topology, "app": exp.app, "base_rtt_s": base_rtt_s}
            one = {**claim, "variant": variant} if variant else claim
            out.append(evaluate(one, rs.aggregate(), ctx))
    return out


def base_name(path: Path, exps: list[Experiment]) -> str:
    """The name the preset's variants extend (its file stem, or its `name:`)."""
    return path.stem if exps[0].name.startswith(path.stem) else exps[0].name


def report_section(
    path: Path,
    exps: list[Experiment],
    sets: list[results.ResultSet],
    root: Path,
    classified: list[Classified] | None = None,
) -> str:
    """REPORT.md's section of an incast preset. `classified`: its claims' classes
    (claims.classify), shown in the verdict column; without it, the plain verdicts."""
    base = base_name(path, exps)
    paper = exps[0].paper
    lines = [f"## {path.stem}", ""]
    if paper:
        lines += [f"**{paper.figure}** — {paper.cite}", ""]
    lines += ["```", header_comment(path), "```", ""]
    if classified is None:
        shown = [(v, v.verdict) for v in verdict_rows(exps, sets, base)]
    else:
        shown = [(c.verdict, c.label) for c in classified]
    if shown:
        lines += ["| claim | paper | ours (95 % CI) | verdict |", "|---|---|---|---|"]
        for v, label in shown:
            c = v.claim
            where = f" ({c['variant']})" if c.get("variant") else ""
            lines.append(f"| {c['id']}{where} | {c['text']} | {v.ours} | **{label}** |")
        lines.append("")
    else:
        lines += ["The paper states no number for this figure in its text; results only.", ""]
    for exp, rs in zip(exps, sets, strict=True):
        variant = variant_of(exp, base)
        ref = (paper.reference.get(variant) if paper else None) or {}
        fig = reference_plot(rs.aggregate(), ref, exp.name, rs.out_dir / "reference.png")
        rel = fig.relative_to(root) if fig else None
        lines += [f"### {exp.name}", "", f"![{exp.name}]({rel})", "", "```"]
        lines += [rs.summary_table(), "```", ""]
    return "\n".join(lines)


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
            note = f" — ablations not run: {', '.join(c.not_run)}" if c.not_run else ""
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


def cost_groups(
    groups: list[tuple[Path, list[Experiment], list[results.ResultSet]]],
    scale_paths: list[Path],
    scale_exps: list[atscale.AtScaleExperiment],
    scale_dirs: list[Path],
) -> list[cost.Group]:
    """The run records' wall times for the cost section: one group per incast
    experiment (all in one sweep), one per at-scale preset (a sweep of its own)."""
    out = []
    for path, pexps, mine in groups:
        for e, rs in zip(pexps, mine, strict=True):
            walls, missing = cost.walls_of(rs.runs)
            out.append(cost.Group(path.stem, "incast", walls, missing, e.app.rounds, e.repeats))
    for path, sexp, d in zip(scale_paths, scale_exps, scale_dirs, strict=True):
        records = atscale.load_records(d)
        walls, missing = cost.walls_of(records, "{scheme} load {load} #{repeat}")
        out.append(cost.Group(path.stem, path.stem, walls, missing, None, sexp.repeats))
    return out


def main(argv: list[str] | None = None, prog: str = "reproduce") -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
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
        paths = presets(args.only)
        scale_paths = atscale_presets(args.only)
        scale_exps = [atscale.load(p) for p in scale_paths]
        loaded = [(p, [e.with_overrides(rounds=args.rounds) for e in load_all(p)]) for p in paths]
        engine, note = resolve("sim")
        cluster = check_cluster(args.cluster, "--cluster")
    except (ExperimentError, RuntimeError) as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    root = args.out or REPO / "results" / f"reproduce-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
    total = sum(len(e.points()) for _p, exps in loaded for e in exps)
    total += sum(len(e.points()) for e in scale_exps)
    notes = skipped(args.only)
    for line in notes:
        print(f"skipped {line}", flush=True)
    print(f"{note}; {len(paths)} presets, {total} runs; results in {root}", flush=True)
    t0 = time.monotonic()
    # One sweep over every preset's experiments: one worker pool, prepared once.
    exps = [e for _path, pexps in loaded for e in pexps]
    dirs = [
        root / path.relative_to(PAPERS).with_suffix("") / e.name
        for path, pexps in loaded
        for e in pexps
    ]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    if args.report_only:  # what an interrupted run finished; unrun points are missing
        sets = [
            results.load(d)
            if (d / "results.json").is_file()
            else results.ResultSet(d, e.name, e.as_dict())
            for d, e in zip(dirs, exps, strict=True)
        ]
    elif not exps:
        sets = []
    elif cluster == "local":
        sets = run_experiments(exps, engine, dirs, args.jobs or os.cpu_count() or 1)
    else:
        try:
            with executor_for(engine, cluster, workers=args.jobs or None) as ex:
                print(f"running on {ex.where}", flush=True)
                sets = run_experiments(exps, engine, dirs, 0, executor=ex)
        except ClusterError as err:
            print(f"{prog}: {err}", file=sys.stderr)
            return 2
    scale_dirs = [root / path.relative_to(PAPERS).with_suffix("") for path in scale_paths]
    for sexp, d in zip(scale_exps, scale_dirs, strict=True):
        if not args.report_only:
            try:
                atscale.run(sexp, d, args.jobs or os.cpu_count() or 1, True, cluster)
            except (ClusterError, ExperimentError) as err:
                print(f"{prog}: {err}", file=sys.stderr)
                return 2
    # Every verdict first (paper presets and ablations), then the paper presets'
    # classes from the ablations' verdicts of this very report, then the sections.
    groups = []
    at = 0
    for path, pexps in loaded:
        groups.append((path, pexps, sets[at : at + len(pexps)]))
        at += len(pexps)
    try:
        verdicts = [
            (p, verdict_rows(pexps, mine, base_name(p, pexps))) for p, pexps, mine in groups
        ]
    except ExperimentError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    verdicts += [
        (p, atscale_verdicts(sexp, d))
        for p, sexp, d in zip(scale_paths, scale_exps, scale_dirs, strict=True)
    ]
    classified = classify_all(verdicts)
    sections: list[str] = []
    named: list[tuple[str, Any]] = []
    for path, pexps, mine in groups:
        if path.parent == ABLATIONS and "# Ablations" not in sections:
            sections += ["# Ablations", "", "Each changes one setting of a preset above.", ""]
        named += [(path.stem, rs.provenance) for rs in mine]
        sections.append(report_section(path, pexps, mine, root, classified.get(path)))
    for path, sexp, d in zip(scale_paths, scale_exps, scale_dirs, strict=True):
        sections.append(atscale_section(path, sexp, d, root, classified.get(path)))
        named.append((path.stem, atscale.load_provenance(d)))
    wall_s = time.monotonic() - t0
    cut = f" Rounds cut to {args.rounds} per run (--rounds)." if args.rounds else ""
    done = sum(len(rs.runs) for rs in sets)
    ran = (
        f"Rebuilt from the {done} of {total} runs finished in {root} (--report-only)."
        if args.report_only
        else f"{total} runs in {wall_s / 60:.1f} min on {note.removeprefix('engine: ')}."
    )
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
    groups_cost = cost_groups(groups, scale_paths, scale_exps, scale_dirs)
    head = [
        "# p4-incast: the papers' headline results on the simulator",
        "",
        f"{ran}{cut}",
        *provenance_header(named),
        "Verdicts (experiments/claims.py): holds; diverges (wrong side even at the edge of our",
        "95 % interval); inconclusive (only the mean is on the wrong side). A paper preset's",
        "divergence is explained by an ablation when a claim of the same id holds in one of",
        "its variants in this report, else unexplained (computed, claims.classify).",
        *[f"Not run here: {line}." for line in notes],
        "",
        *classes_header([c for cs in classified.values() for c in cs]),
        *changed,
        *cost.section(groups_cost, None if args.report_only else wall_s, os.cpu_count() or 1),
    ]
    report = root / "REPORT.md"
    report.write_text("\n".join(head + sections))
    print(f"\n{ran}\nreport: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
