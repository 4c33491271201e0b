"""What a reproduce run cost, from its run records, and what the papers' setting would
cost (pure: records in, figures and REPORT.md lines out).

Every run record carries `wall_s`, the seconds its worker spent on the point
(experiments/SCHEMA.md; at-scale records too). From them:

- worker time: the sum of `wall_s` over the runs; the mean and longest point.
  A record another experiment's identical point gave (results.SHARED_FROM) cost
  nothing here and is left out;
- the papers' setting: 100 rounds × 5 repeats for every incast preset. A
  run's time grows with its rounds and a preset's runs with its repeats, so an
  experiment of R rounds × P repeats is scaled by (100 / R) · (5 / P), and its
  longest point (one repeat: a point is one (scheme, N, repeat)) by 100 / R.
  At-scale presets are not round-based (a point is one arrival window of
  flows): they are kept as they ran;
- on this machine: projected worker time / os.cpu_count();
- on a Ray cluster of W = 100 workers: each sweep (reproduce runs the incast
  presets in one sweep, then each at-scale preset as a sweep of its own) takes
  max(its worker time / W, its longest point) / RAY_EFFICIENCY — with
  longest-first scheduling no sweep ends before its longest point, and the
  work cannot end before it is spread over W workers — and the sweeps add up.
  The ns-3 load of each actor (14–20 s, docs/cluster.md) is not included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from p4incast.experiments.results import SHARED_FROM

PAPER_ROUNDS = 100  # rounds per point in the papers' experiments
PAPER_REPEATS = 5  # repeats per point in the papers' experiments
CLUSTER_WORKERS = 100
# Points per minute of a 1-node Ray cluster over the local process pool, both with
# 2 workers on the same machine: 159 / 172 (scripts/bench_cluster.py --full
# --repeat 2; docs/cluster.md, "Overhead and cost").
RAY_EFFICIENCY = 0.92


@dataclass(frozen=True)
class Group:
    """The runs of one experiment (an incast preset's variant) or one at-scale preset."""

    preset: str  # the preset's file stem
    sweep: str  # runs of one sweep share the cluster: "incast", or the at-scale preset
    walls: tuple[tuple[str, float], ...]  # (point label, wall_s) of every run with a wall time
    missing: int = 0  # runs without a wall time
    rounds: int | None = None  # rounds per point; None: not round-based (at-scale)
    repeats: int = 1
    shared: int = 0  # runs taken from an identical point of another experiment

    @property
    def scale(self) -> float:
        """Worker time at the papers' setting over worker time as run."""
        if self.rounds is None:
            return 1.0
        return (PAPER_ROUNDS / self.rounds) * (PAPER_REPEATS / self.repeats)

    @property
    def point_scale(self) -> float:
        """A point's time at the papers' rounds over its time as run."""
        return 1.0 if self.rounds is None else PAPER_ROUNDS / self.rounds


def walls_of(
    records: Iterable[Mapping[str, object]], label: str = "{scheme} N={n} #{repeat}"
) -> tuple[tuple[tuple[str, float], ...], int]:
    """(label, wall_s) of every record with a number for wall_s, and how many had none;
    a record shared from an identical point of another experiment is neither."""
    out, missing = [], 0
    for r in records:
        if r.get(SHARED_FROM):  # ran once, for the experiment it names: counted there
            continue
        w = r.get("wall_s")
        if isinstance(w, int | float) and not isinstance(w, bool):
            fields = {k: r.get(k) for k in ("scheme", "n", "load", "repeat")}
            out.append((label.format(**fields), float(w)))
        else:
            missing += 1
    return tuple(out), missing


@dataclass(frozen=True)
class Cost:
    runs: int  # runs with a wall time
    missing: int  # runs without one
    shared: int  # runs taken from an identical point of another experiment (not run)
    worker_s: float
    longest_s: float
    longest: str  # "preset: label" of the longest point
    papers_worker_s: float  # worker time at the papers' setting
    cluster_s: float  # the papers' setting on CLUSTER_WORKERS Ray workers

    @property
    def mean_s(self) -> float:
        return self.worker_s / self.runs if self.runs else 0.0

    def local_hours(self, cpus: int) -> float:
        """The papers' setting on `cpus` cores of this machine, in hours."""
        return self.papers_worker_s / max(cpus, 1) / 3600


def cluster_seconds(
    groups: Sequence[Group],
    workers: int = CLUSTER_WORKERS,
    efficiency: float = RAY_EFFICIENCY,
) -> float:
    """The papers' setting on `workers` Ray workers: per sweep max(work / workers,
    longest point) / efficiency, summed over the sweeps."""
    sweeps: dict[str, list[Group]] = {}
    for g in groups:
        sweeps.setdefault(g.sweep, []).append(g)
    total = 0.0
    for gs in sweeps.values():
        work = sum(w * g.scale for g in gs for _label, w in g.walls)
        longest = max((w * g.point_scale for g in gs for _label, w in g.walls), default=0.0)
        total += max(work / workers, longest) / efficiency
    return total


def cost(groups: Sequence[Group]) -> Cost:
    points = [(g, label, w) for g in groups for label, w in g.walls]
    top = max(points, key=lambda p: p[2], default=None)
    return Cost(
        runs=len(points),
        missing=sum(g.missing for g in groups),
        shared=sum(g.shared for g in groups),
        worker_s=sum(w for _g, _label, w in points),
        longest_s=top[2] if top else 0.0,
        longest=f"{top[0].preset}: {top[1]}" if top else "-",
        papers_worker_s=sum(w * g.scale for g, _label, w in points),
        cluster_s=cluster_seconds(groups),
    )


def _dur(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def section(groups: Sequence[Group], wall_s: float | None, cpus: int) -> list[str]:
    """REPORT.md's cost section. `wall_s`: the wall time of the run that made the
    records (None when not recorded); `cpus`: this machine's cores (os.cpu_count())."""
    c = cost(groups)
    lines = ["## Cost, and the papers' rounds", ""]
    if not c.runs:
        return lines + ["No run records with a wall time.", ""]
    missing = f" ({c.missing} more without a wall time)" if c.missing else ""
    if c.shared:
        missing += (
            f" (and {c.shared} identical to a point of another preset, run once for both:"
            " experiments/runner.py share_identical)"
        )
    this = (
        f"The run took {_dur(wall_s)} wall time on {cpus} cores."
        if wall_s is not None
        else "The run's wall time was not recorded (--report-only on older results)."
    )
    lines += [
        f"{c.runs} runs{missing}: {c.worker_s:.0f} worker-seconds ({_dur(c.worker_s)}), "
        f"mean point {c.mean_s:.1f} s, longest {c.longest_s:.1f} s ({c.longest}). {this}",
        "",
        f"At the papers' setting, {PAPER_ROUNDS} rounds × {PAPER_REPEATS} repeats for every "
        "incast preset (worker time × 100 / rounds × 5 / repeats; at-scale presets are not "
        "round-based and stay as they ran):",
        "",
        "| preset | runs | rounds × repeats run | worker-s run | × | worker-h at the papers' |",
        "|---|---|---|---|---|---|",
    ]
    presets: dict[str, list[Group]] = {}
    for g in groups:
        presets.setdefault(g.preset, []).append(g)
    for name, gs in presets.items():
        run_s = sum(w for g in gs for _label, w in g.walls)
        papers_s = sum(w * g.scale for g in gs for _label, w in g.walls)
        shapes = sorted({(g.rounds, g.repeats) for g in gs}, key=str)
        shape = " / ".join(
            f"{r} × {p}" if r is not None else f"not round-based, {p} repeats" for r, p in shapes
        )
        factor = f"{papers_s / run_s:.3g}" if run_s else "-"
        lines.append(
            f"| {name} | {sum(len(g.walls) for g in gs)} | {shape} | {run_s:.0f} | {factor} "
            f"| {papers_s / 3600:.2f} |"
        )
    lines += [
        "",
        f"In all {c.papers_worker_s / 3600:.1f} worker-hours: {c.local_hours(cpus):.1f} h on "
        f"this machine's {cpus} cores; {c.cluster_s / 60:.1f} min on a Ray cluster of "
        f"{CLUSTER_WORKERS} workers (per sweep the longer of its work over {CLUSTER_WORKERS} "
        f"workers and its longest point, over the executor's efficiency {RAY_EFFICIENCY} "
        "measured by scripts/bench_cluster.py; ns-3 loads not included; reports/cost.py).",
        "",
    ]
    return lines
