"""p4incast-run for presets with `scenario: at-scale`: RCC's §6.2 fabric swept
over offered load, on the ns-3 model (p4incast.sim.atscale).

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
    repeats: 1
    schemes: [...]                                       # as an incast experiment's (no batching)
    paper: {cite, figure, claims: [{id, kind: drops_from | ordering, ...}]}

Every (scheme, load, repeat) is one ns-3 run of the whole fabric; points run
through the incast sweeps' executors (engines/atscale.py): a local process
pool, or warm actors on a Ray cluster (--cluster), ns-3 loaded once per
worker, lost points retried (--retries). results.json is
rewritten after every point, so Ctrl-C leaves a folder `--resume` completes.
Written per sweep: results.json (every record, with every short flow's FCT),
summary.csv, SUMMARY.md (the table, the claims' verdicts, the settings), and
plots of FCT p50/p99, long-flow throughput and drops against load. results.json
and SUMMARY.md say where the runs came from (`provenance`, experiments/provenance.py:
captured when the sweep starts; `--resume` keeps the first and lists its own
under `resumed`).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from p4incast.engines.atscale import ENGINE
from p4incast.model.atscale import ATSCALE_SCENARIO as SCENARIO
from p4incast.model.atscale import Fabric, Traffic, check_fabric, check_load, check_traffic
from p4incast.model.errors import ModelError
from p4incast.model.scheme import Scheme, Transport, check_transport
from p4incast.sim import native
from p4incast.sim.atscale import AtScalePoint, check_point

from . import metrics, provenance
from .config import (
    ExperimentError,
    _check_keys,
    _typed,
    check_cluster,
    check_name,
    parse_schemes,
    read_yaml,
)
from .executors import RETRIES, ClusterError, Job
from .results import write_atomic
from .runner import executor_for, first_difference

REPO = Path(__file__).resolve().parent.parent
TOP_KEYS = (
    "name",
    "scenario",
    "fabric",
    "traffic",
    "transport",
    "loads",
    "repeats",
    "schemes",
    "paper",
)
CLAIM_KINDS = ("drops_from", "ordering")
PERCENTILES = (1, 50, 99)


@dataclass(frozen=True)
class AtScaleExperiment:
    name: str
    fabric: Fabric
    traffic: Traffic
    transport: Transport
    loads: tuple[float, ...]
    repeats: int
    schemes: tuple[Scheme, ...]
    paper: Mapping[str, Any]

    def points(self) -> list[AtScalePoint]:
        return [
            AtScalePoint(s, load, r, self.fabric, self.traffic, self.transport)
            for s in self.schemes
            for load in self.loads
            for r in range(self.repeats)
        ]


def _claim(i: int, raw: Any, schemes: set[str]) -> dict[str, Any]:
    where = f"paper.claims[{i}]"
    if not isinstance(raw, dict) or raw.get("kind") not in CLAIM_KINDS:
        raise ExperimentError(
            f"{where}: expected a mapping with kind one of {', '.join(CLAIM_KINDS)}"
        )
    named = [raw.get("scheme")] if raw["kind"] == "drops_from" else list(raw.get("schemes") or [])
    unknown = [s for s in named if s not in schemes]
    if not named or unknown:
        raise ExperimentError(
            f"{where}: scheme(s) {unknown or named} not among the preset's schemes"
        )
    if raw["kind"] == "drops_from":
        try:
            check_load(raw.get("load"))
        except ModelError as err:
            raise ExperimentError(f"{where}: {err}") from None
    elif raw.get("metric") not in SUMMARY_METRICS:
        raise ExperimentError(
            f"{where}: metric {raw.get('metric')!r} not one of {', '.join(SUMMARY_METRICS)}"
        )
    return dict(raw)


def parse(raw: Any) -> AtScaleExperiment:
    """Validate a whole at-scale preset; ExperimentError naming the first problem."""
    if not isinstance(raw, dict):
        raise ExperimentError("experiment: expected a YAML mapping at the top level")
    unknown = sorted(set(raw) - set(TOP_KEYS))
    if unknown:
        raise ExperimentError(
            f"experiment: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(TOP_KEYS)}"
        )
    if raw.get("scenario") != SCENARIO:
        raise ExperimentError(f"scenario: {raw.get('scenario')!r}, expected {SCENARIO}")
    name = check_name(raw.get("name", SCENARIO))
    fabric = _typed("fabric", Fabric, raw.get("fabric"))
    traffic = _typed("traffic", Traffic, raw.get("traffic"))
    transport = _typed("transport", Transport, raw.get("transport"))
    loads = raw.get("loads")
    if not isinstance(loads, list) or not loads:
        raise ExperimentError("loads: expected a non-empty list of fractions in (0, 1)")
    repeats = raw.get("repeats", 1)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ExperimentError(f"repeats: {repeats!r} must be an integer >= 1")
    try:
        check_fabric(fabric)
        check_traffic(traffic, fabric)
        check_transport(transport)
        loads = [check_load(x) for x in loads]
    except ModelError as err:
        raise ExperimentError(str(err)) from None
    schemes = parse_schemes(
        raw.get("schemes"),
        lambda s: check_point(AtScalePoint(s, loads[0], 0, fabric, traffic, transport)),
    )
    paper = raw.get("paper") or {}
    if not isinstance(paper, dict):
        raise ExperimentError("paper: expected a mapping")
    _check_keys("paper", paper, _PaperKeys)
    claims = [
        _claim(i, c, {s.name for s in schemes}) for i, c in enumerate(paper.get("claims") or [])
    ]
    return AtScaleExperiment(
        name,
        fabric,
        traffic,
        transport,
        tuple(loads),
        repeats,
        schemes,
        {**paper, "claims": claims},
    )


@dataclass
class _PaperKeys:  # the keys a preset's paper: may carry
    cite: str = ""
    figure: str = ""
    claims: list | None = None


def load(path: Path) -> AtScaleExperiment:
    raw = read_yaml(path)
    try:
        return parse(raw)
    except ExperimentError as err:
        raise ExperimentError(f"{path}: {err}") from None


# -- summary -----------------------------------------------------------------

SUMMARY_METRICS = (
    "fct_p1_ms",
    "fct_p50_ms",
    "fct_p99_ms",
    "fct_mean_ms",
    "long_mbps",
    "drops_tor",
    "drops_root",
    "short_timeouts",
)


def summarize(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (scheme, load): FCT percentiles of the short flows with a 95 %
    interval (one repeat: the run's percentile, order statistics over its flows;
    more: the mean of the repeats' percentiles, Student t over them), long-flow throughput
    (mean over flows and repeats), drops and short-flow RTOs (mean per run)."""
    groups: dict[tuple[str, float], list[Mapping[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["scheme"], r["load"]), []).append(r)
    rows = []
    for (scheme, load_), runs in groups.items():
        ok = [r for r in runs if r["status"] == "ok"]
        row: dict[str, Any] = {"scheme": scheme, "load": load_, "runs": len(runs), "ok": len(ok)}
        rows.append(row)
        if not ok:
            row["error"] = runs[0].get("error")
            continue
        fcts = [x for r in ok for x in r["fct_ms"] if x is not None]
        row["flows"] = sum(len(r["fct_ms"]) for r in ok)
        row["unfinished"] = row["flows"] - len(fcts)
        row["offered_load"] = statistics.fmean(r["offered_load"] for r in ok)
        for q in PERCENTILES:
            key = f"fct_p{q}_ms"
            if len(ok) > 1:  # the mean of the repeats' percentiles, and its t interval
                per_run = [
                    metrics.percentile([x for x in r["fct_ms"] if x is not None], q) for r in ok
                ]
                row[key] = statistics.fmean(v for v in per_run if v is not None)
                ci = metrics.t_interval(per_run)
            else:
                row[key] = metrics.percentile(fcts, q)
                ci = metrics.quantile_interval(fcts, q)
            ci = metrics.clip(ci, key)  # an FCT is >= 0
            # an end the flows cannot bound (too few for that tail) is None: unbounded
            ends = [x if ci and math.isfinite(x) else None for x in (ci.lo, ci.hi)] if ci else None
            row[f"{key}_ci"] = [*ends, ci.method] if ci else None
        row["fct_mean_ms"] = statistics.fmean(fcts) if fcts else None
        longs = [x for r in ok for x in r["long_mbps"]]
        row["long_mbps"] = statistics.fmean(longs) if longs else None
        for where in ("tor", "root"):
            row[f"drops_{where}"] = statistics.fmean(r["drops"][where] for r in ok)
        row["short_timeouts"] = statistics.fmean(r["short_timeouts"] for r in ok)
        row["wall_s"] = statistics.fmean(r["wall_s"] for r in ok)
    rows.sort(key=lambda r: (r["scheme"], r["load"]))
    return rows


def _num(v: Any, spec: str = ".1f") -> str:
    return "—" if v is None else format(v, spec)


def _ci(row: Mapping[str, Any], key: str) -> str:
    ci = row.get(f"{key}_ci")
    if not ci:
        return _num(row.get(key), ".2f")
    lo = "−∞" if ci[0] is None else f"{ci[0]:.2f}"
    hi = "∞" if ci[1] is None else f"{ci[1]:.2f}"
    return f"{_num(row.get(key), '.2f')} [{lo}, {hi}]"


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The summary as a Markdown table."""
    head = (
        "| scheme | load | offered | short flows (unfinished) | FCT p1 ms | FCT p50 ms [95 % CI] "
        "| FCT p99 ms [95 % CI] | long flows Mbit/s | drops ToR | drops root | short-flow RTOs |"
    )
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if not r.get("ok"):
            out.append(f"| {r['scheme']} | {r['load']:.0%} | failed: {r.get('error')} |")
            continue
        out.append(
            f"| {r['scheme']} | {r['load']:.0%} | {r['offered_load']:.0%} "
            f"| {r['flows']} ({r['unfinished']}) | {_num(r['fct_p1_ms'], '.2f')} "
            f"| {_ci(r, 'fct_p50_ms')} | {_ci(r, 'fct_p99_ms')} | {_num(r['long_mbps'])} "
            f"| {_num(r['drops_tor'], '.0f')} | {_num(r['drops_root'], '.0f')} "
            f"| {_num(r['short_timeouts'], '.0f')} |"
        )
    return "\n".join(out)


# -- the paper's claims ------------------------------------------------------


def verdicts(exp: AtScaleExperiment, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each claim of the preset: holds | diverges | inconclusive, with the numbers.

    drops_from (scheme, load): no drop anywhere in the fabric below `load`, and
      some at or above it (drops = ToR + root, mean per run);
    ordering (schemes, metric, lower): at every load, the schemes' values are in
      the listed order (lower: ascending)."""
    at = {(r["scheme"], r["load"]): r for r in rows if r.get("ok")}
    out = []
    for c in exp.paper.get("claims", []):
        v = {"id": c.get("id", c["kind"]), "text": c.get("text", "")}
        if c["kind"] == "drops_from":
            drops = {
                ld: at[(c["scheme"], ld)]["drops_tor"] + at[(c["scheme"], ld)]["drops_root"]
                for ld in exp.loads
                if (c["scheme"], ld) in at
            }
            below = [d for ld, d in drops.items() if ld < c["load"]]
            above = [d for ld, d in drops.items() if ld >= c["load"]]
            v["measured"] = ", ".join(f"{ld:.0%}: {d:.0f}" for ld, d in sorted(drops.items()))
            if not below or not above:
                v["verdict"] = "inconclusive"
            else:
                v["verdict"] = "holds" if max(below) == 0 and max(above) > 0 else "diverges"
        else:
            lower = bool(c.get("lower", False))
            held, seen, parts = True, 0, []
            for ld in exp.loads:
                vals = [at.get((s, ld), {}).get(c["metric"]) for s in c["schemes"]]
                if any(x is None for x in vals):
                    continue
                seen += 1
                ordered = all(
                    (a <= b) if lower else (a >= b) for a, b in zip(vals, vals[1:], strict=False)
                )
                held = held and ordered
                parts.append(
                    f"{ld:.0%}: " + " / ".join(f"{x:.2f}" for x in vals) + ("" if ordered else " ✗")
                )
            v["measured"] = "; ".join(parts)
            v["verdict"] = "inconclusive" if not seen else ("holds" if held else "diverges")
        out.append(v)
    return out


# -- plots -------------------------------------------------------------------


def _plot(
    rows: Sequence[Mapping[str, Any]],
    key: str,
    ylabel: str,
    title: str,
    path: Path,
    log: bool = False,
) -> Path:
    fig = Figure(figsize=(6.4, 4.2), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for scheme in dict.fromkeys(r["scheme"] for r in rows):
        pts = [r for r in rows if r["scheme"] == scheme and r.get(key) is not None]
        if not pts:
            continue
        xs = [100 * r["load"] for r in pts]
        ys = [r[key] for r in pts]
        cis = [r.get(f"{key}_ci") for r in pts]
        yerr = None
        if all(c and None not in c[:2] for c in cis):
            pairs = list(zip(ys, cis, strict=True))
            yerr = ([y - c[0] for y, c in pairs], [c[1] - y for y, c in pairs])
        ax.errorbar(xs, ys, yerr=yerr, marker="o", capsize=3, label=scheme)
    if log:
        ax.set_yscale("symlog" if key.startswith("drops") else "log")
    ax.set_title(title)
    ax.set_xlabel("offered load at each aggregator (%)")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    return path


def plot_all(rows: Sequence[Mapping[str, Any]], out: Path, name: str) -> list[Path]:
    return [
        _plot(
            rows,
            "fct_p99_ms",
            "short-flow FCT p99 (ms)",
            f"{name}: FCT p99",
            out / "fct_p99.png",
            True,
        ),
        _plot(
            rows,
            "fct_p50_ms",
            "short-flow FCT p50 (ms)",
            f"{name}: FCT p50",
            out / "fct_p50.png",
            True,
        ),
        _plot(
            rows,
            "long_mbps",
            "long-flow throughput (Mbit/s)",
            f"{name}: long flows",
            out / "long.png",
        ),
        _plot(
            rows,
            "drops_tor",
            "packets dropped at the ToRs",
            f"{name}: ToR drops",
            out / "drops_tor.png",
            True,
        ),
        _plot(
            rows,
            "drops_root",
            "packets dropped at the root",
            f"{name}: root drops",
            out / "drops_root.png",
            True,
        ),
    ]


# -- running -----------------------------------------------------------------


def point_key(rec: Mapping[str, Any]) -> tuple[str, float, int]:
    return (str(rec["scheme"]), float(rec["load"]), int(rec["repeat"]))


def _settings(exp: AtScaleExperiment) -> dict[str, Any]:
    return {
        "fabric": asdict(exp.fabric),
        "traffic": asdict(exp.traffic),
        "transport": asdict(exp.transport),
        "schemes": [asdict(s) for s in exp.schemes],
        "loads": list(exp.loads),
        "repeats": exp.repeats,
    }


def _write(
    out: Path,
    exp: AtScaleExperiment,
    records: list[dict[str, Any]],
    prov: Mapping[str, Any] | None = None,
) -> None:
    data = {
        "scenario": SCENARIO,
        "name": exp.name,
        "provenance": prov,
        "settings": _settings(exp),
        "runs": records,
    }
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "results.json", json.dumps(data, indent=1))


def report(out: Path, exp: AtScaleExperiment, records: list[dict[str, Any]]) -> str:
    """summary.csv, SUMMARY.md and the plots from the records; returns the Markdown."""
    rows = summarize(records)
    buf = io.StringIO()
    keys = [
        "scheme",
        "load",
        "runs",
        "ok",
        "flows",
        "unfinished",
        "offered_load",
        *SUMMARY_METRICS,
        "wall_s",
    ]
    w = csv.DictWriter(buf, fieldnames=keys, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    (out / "summary.csv").write_text(buf.getvalue())
    plot_all(rows, out, exp.name)
    walls = [r["wall_s"] for r in records if r["status"] == "ok"]
    peaks = [r["point_peak_rss_mb"] for r in records if r.get("point_peak_rss_mb")]
    bases = [r["rss_before_mb"] for r in records if r.get("rss_before_mb")]
    lines = [
        f"# {exp.name}: {exp.fabric.hosts} hosts, {len(exp.schemes)} schemes × "
        f"{len(exp.loads)} loads × {exp.repeats} repeats",
        "",
        f"Fabric: {exp.fabric}",
        f"Traffic: {exp.traffic}",
        f"Transport: {exp.transport}",
        "",
        provenance.line(load_provenance(out)),
        "",
        table(rows),
        "",
        "FCT = from the connect call to the last byte at the aggregator (handshake included). "
        "Intervals: 95 %, "
        + (
            "order statistics over the flows of the run (assumes independent flows)."
            if exp.repeats == 1
            else "Student t over the repeats' percentiles."
        ),
        "",
    ]
    if walls:
        lines.append(
            f"Wall time per point: mean {statistics.fmean(walls):.1f} s, max {max(walls):.1f} s"
            + (
                f"; peak RSS during a point {max(peaks):.0f} MB, of which {min(bases):.0f} MB"
                " is the worker with ns-3 loaded before it"
                if peaks and bases
                else ""
            )
            + f" ({len(walls)} points)."
        )
    vs = verdicts(exp, rows)
    if vs:
        lines += ["", "| claim | verdict | measured |", "|---|---|---|"]
        lines += [f"| {v['id']}: {v['text']} | **{v['verdict']}** | {v['measured']} |" for v in vs]
    text = "\n".join(lines) + "\n"
    (out / "SUMMARY.md").write_text(text)
    return text


def load_records(out: Path) -> list[dict[str, Any]]:
    """The records in a results folder ([] when it has none yet)."""
    path = out / "results.json"
    return json.loads(path.read_text())["runs"] if path.is_file() else []


def load_provenance(out: Path) -> dict[str, Any] | None:
    """The provenance record of a results folder (None when it has none)."""
    path = out / "results.json"
    try:
        return json.loads(path.read_text()).get("provenance") if path.is_file() else None
    except (OSError, ValueError, AttributeError):
        return None


def check_resumable(out: Path, exp: AtScaleExperiment) -> None:
    """ExperimentError unless `out` holds this preset's records: the same fabric,
    traffic and transport, and the same definition of every scheme both name
    (other loads, schemes or repeats may be added)."""
    path = out / "results.json"
    if not path.is_file():
        return
    old = json.loads(path.read_text()).get("settings", {})
    new = _settings(exp)
    mine = {s["name"]: s for s in new["schemes"]}
    theirs = {s["name"]: s for s in old.get("schemes", [])}
    for key in ("fabric", "traffic", "transport"):
        diff = first_difference(old.get(key), new[key], key)
        if diff:
            raise ExperimentError(f"--resume {out}: not this preset's results ({diff})")
    for name in sorted(set(mine) & set(theirs)):
        diff = first_difference(theirs[name], mine[name], f"scheme {name}")
        if diff:
            raise ExperimentError(f"--resume {out}: not this preset's results ({diff})")


def run(
    exp: AtScaleExperiment,
    out: Path,
    jobs: int,
    resume: bool = False,
    cluster: str = "local",
    retries: int = RETRIES,
) -> list[dict[str, Any]]:
    """Every point not yet finished ok in `out`: in a local pool of `jobs` processes,
    or on a Ray cluster (`cluster`: an address as p4incast-run --cluster takes it;
    `jobs` then caps the actors) — the incast sweeps' executors (experiments/executors.py).
    Raises ClusterError when the cluster cannot be used, KeyboardInterrupt on Ctrl-C
    (what finished is in `out` either way; `out` is made with the first record)."""
    records: list[dict[str, Any]] = []
    first = None
    if resume:
        check_resumable(out, exp)
        records = [r for r in load_records(out) if r["status"] == "ok"]
        first = load_provenance(out)
    prov = provenance.note_start(first, provenance.capture(ENGINE.name), len(records))
    done = {point_key(r) for r in records}
    todo = [p for p in exp.points() if (p.scheme.name, p.load, p.repeat) not in done]
    print(f"{exp.name}: {len(todo)} points to run ({len(done)} already done) in {out}", flush=True)
    if not todo:
        return records
    t0 = time.monotonic()

    def finished(job: Job, rec: dict[str, Any]) -> None:
        records.append(rec)
        _write(out, exp, records, prov)
        fin = [x for x in rec.get("fct_ms") or [] if x is not None]
        ok = rec["status"] == "ok"
        print(
            f"[{len(records) - len(done)}/{len(todo)} {time.monotonic() - t0:6.0f}s] "
            f"{job.point.label()}: {rec['status']}"
            + (
                f", FCT p99 {metrics.percentile(fin, 99):.2f} ms, drops ToR "
                f"{rec['drops']['tor']} root {rec['drops']['root']}, {rec['wall_s']:.1f} s"
                if ok
                else f": {rec.get('error')}"
            ),
            flush=True,
        )

    work = [Job(0, p, out / "logs") for p in todo]
    try:
        with executor_for(ENGINE, cluster, workers=min(jobs, len(work)), retries=retries) as ex:
            print(f"running on {ex.where}", flush=True)
            ex.run(work, finished)
    except KeyboardInterrupt:
        _write(out, exp, records, prov)
        print(
            f"interrupted: {len(records)} points kept; resume with --resume {out}", file=sys.stderr
        )
        raise
    return records


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated numbers") from None


def main(argv: list[str] | None = None, prog: str = "p4incast-run") -> int:
    ap = argparse.ArgumentParser(
        prog=prog,
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("experiment", type=Path, help="a preset with scenario: at-scale")
    ap.add_argument("--loads", type=_floats, help="only these offered loads, e.g. 0.3,0.6")
    ap.add_argument("--schemes", help="only these schemes (comma-separated names)")
    ap.add_argument("--repeats", type=int, help="repeats per point (seeds 1..R)")
    ap.add_argument("--tors", type=int, help="ToRs (scale the fabric down, e.g. for a quick look)")
    ap.add_argument("--hosts-per-tor", type=int, help="hosts per ToR")
    ap.add_argument("--short-flows", type=int, help="short-flow arrivals per point")
    ap.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: CPUs)"
    )
    ap.add_argument("--out", type=Path, help="results folder (default results/<name>-<UTC time>)")
    ap.add_argument("--resume", type=Path, metavar="DIR", help="run only the points DIR lacks")
    ap.add_argument(
        "--cluster",
        metavar="ADDRESS",
        default="local",
        help="run the points on a Ray cluster: auto, ray://HOST:PORT or HOST:PORT (default local)",
    )
    ap.add_argument(
        "--retries",
        type=int,
        default=RETRIES,
        help=f"cluster: times a point lost with its worker runs again (default {RETRIES})",
    )
    ap.add_argument(
        "--report-only", type=Path, metavar="DIR", help="rewrite DIR's summary and plots"
    )
    a = ap.parse_args(argv)
    ok, why = native.available()
    if not ok:
        print(
            f"{prog}: the at-scale scenario runs on the ns-3 model: {why} (make setup installs it)",
            file=sys.stderr,
        )
        return 2
    try:
        exp = load(a.experiment)
        over: dict[str, dict[str, Any]] = {"fabric": {}, "traffic": {}}
        if a.tors is not None:
            over["fabric"]["tors"] = a.tors
        if a.hosts_per_tor is not None:
            over["fabric"]["hosts_per_tor"] = a.hosts_per_tor
        if a.short_flows is not None:
            over["traffic"]["short_flows"] = a.short_flows
        raw = read_yaml(a.experiment)
        for section, vals in over.items():
            raw[section] = {**(raw.get(section) or {}), **vals}
        if a.loads:
            raw["loads"] = a.loads
        if a.repeats is not None:
            raw["repeats"] = a.repeats
        if a.schemes:
            want = a.schemes.split(",")
            have = [s["name"] for s in raw["schemes"]]
            missing = sorted(set(want) - set(have))
            if missing:
                raise ExperimentError(
                    f"--schemes: no scheme {', '.join(missing)} (have {', '.join(have)})"
                )
            raw["schemes"] = [s for s in raw["schemes"] if s["name"] in want]
            claims = (raw.get("paper") or {}).get("claims") or []
            raw.setdefault("paper", {})["claims"] = [
                c
                for c in claims
                if {c.get("scheme"), *(c.get("schemes") or [])} - {None} <= set(want)
            ]
        exp = parse(raw)
        check_cluster(a.cluster, "--cluster")
        if a.retries < 0 or a.jobs < 1:
            raise ExperimentError("--retries must be >= 0 and --jobs >= 1")
    except ExperimentError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    if a.report_only:
        print(report(a.report_only, exp, load_records(a.report_only)))
        return 0
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = a.resume or a.out or REPO / "results" / f"{exp.name}-{stamp}"
    try:
        records = run(exp, out, a.jobs, a.resume is not None, a.cluster, a.retries)
    except ExperimentError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    except ClusterError as err:
        hint = f"; resume with --resume {out}" if (out / "results.json").is_file() else ""
        print(f"{prog}: {err}{hint}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    print(report(out, exp, records))
    print(f"results: {out}")
    return 0 if all(r["status"] == "ok" for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
