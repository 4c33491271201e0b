"""PNG plots of one experiment (matplotlib, Agg canvas; no display needed).

    paths = plot_all(results_set)                    # from a runner
    python -m p4incast.reports.plots results/<dir> [--link-gbps 1] [--out DIR]

Figures (docs/algorithms.md §6): goodput vs N per scheme with the framing limit
(C * MSS / wire bytes) dashed when the link rate is known; ratio of rounds
with >= 1 RTO vs N; on both, where each scheme breaks: the first N with an RTO
in most of its rounds (verdicts.FREQUENT_RTO, the papers' incast collapse)
dotted in the scheme's colour and named in its legend entry, and on the RTO
figure that line of rounds dotted across; FCT p99 vs N (log y when it spans more than a decade);
CDF of the bottleneck queue depth at the largest N, one line per scheme
(histograms of that N's repeats added up); queue depth vs time when runs carry
`depth_series`. Points are means over repeats; goodput, RTO rounds and FCT p99
carry error bars: the 95 % confidence interval of summary.csv
(`<metric>_ci_lo/_hi`; Student t over repeats when there are two or more, else
batch means or Wilson over the rounds of the one: experiments/metrics.py).
Schemes are nudged apart along N (by 1.5 % of its range in all) so their bars do
not hide each other. Failed (scheme, N) points are left out, not drawn as zero.
N is on a log axis when it spans more than a decade. An interval is cut to
what the metric can be: goodput from 0 to the framing limit (when the link
rate is known), a ratio of rounds from 0 to 1, a time or count from 0.
"""

from __future__ import annotations

import argparse
import io
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter, ScalarFormatter
from PIL import Image

from p4incast.experiments.metrics import framing_limit_bps, hist_cdf, hist_counts, interval_of
from p4incast.experiments.results import ResultSet, aggregate, load
from p4incast.model.wire import MSS_BYTES
from p4incast.reports.verdicts import FREQUENT_RTO, Point

DPI = 120
SIZE = (6.4, 4.2)  # inches
BREAKS_SIZE = (9.0, 4.2)  # goodput and RTO rounds: room for a legend of breaks beside the axes


def _figure(size: tuple[float, float] = SIZE) -> tuple[Figure, Any]:
    fig = Figure(figsize=size, dpi=DPI)
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def _save(fig: Figure, path: Path) -> Path:
    """The figure as a PNG of at most 256 colours (`shrink_png`)."""
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    path.write_bytes(shrink_png(buf.getvalue()))
    return path


def shrink_png(png: bytes) -> bytes:
    """A PNG re-encoded with a palette of at most 256 colours, undithered: a line
    plot's few colours and their anti-aliased edges, at about a third of the
    bytes of full colour (the committed reports' figures share one size limit)."""
    with Image.open(io.BytesIO(png)) as im:
        small = im.convert("RGB").quantize(colors=256, dither=Image.Dither.NONE)
    out = io.BytesIO()
    small.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _schemes(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(r["scheme"]) for r in rows))


YErr = tuple[list[float], list[float]]


Bounds = tuple[float, float]  # what a metric can be, in the plotted unit
NON_NEGATIVE: Bounds = (0.0, math.inf)


def series(
    rows: Sequence[Mapping[str, Any]],
    scheme: str,
    key: str,
    scale: float = 1.0,
    axis: str = "n",
    bounds: Bounds = NON_NEGATIVE,
) -> tuple[list[float], list[float], YErr | None]:
    """(x, value, (below, above) or None) of one scheme, skipping points without a value;
    x is the rows' `axis` (N, or an at-scale sweep's load).

    below/above are the distances from the value down to the 95 % interval's lo and
    up to its hi (matplotlib's asymmetric yerr), each end cut to `bounds`, NaN at a
    point without an interval; None when no point of the scheme has one.
    """
    xs, ys, below, above = [], [], [], []
    for r in rows:
        if str(r["scheme"]) != scheme or r.get(key) is None or r["status"] == "failed":
            continue
        y = r[key] * scale
        ci = interval_of(r, key)
        xs.append(r[axis])
        ys.append(y)
        lo, hi = (None, None) if ci is None else (ci.lo * scale, ci.hi * scale)
        below.append(math.nan if lo is None else max(0.0, y - max(lo, bounds[0])))
        above.append(math.nan if hi is None else max(0.0, min(hi, bounds[1]) - y))
    has_err = any(not math.isnan(b) for b in below)
    return xs, ys, (below, above) if has_err else None


def log_x(rows: Sequence[Mapping[str, Any]], axis: str = "n") -> bool:
    """True when the x values are all positive and span more than a decade."""
    xs = [r[axis] for r in rows if isinstance(r.get(axis), int | float)]
    return bool(xs) and min(xs) > 0 and max(xs) / min(xs) > 10


def _log_axis(ax: Any, rows: Sequence[Mapping[str, Any]], axis: str = "n") -> None:
    """N on a log axis, labelled in plain numbers (at each N when there are few)."""
    ax.set_xscale("log")
    xs = sorted({r[axis] for r in rows if isinstance(r.get(axis), int | float)})
    if len(xs) <= 12:
        ax.set_xticks(xs)
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())


def _dodge(
    rows: Sequence[Mapping[str, Any]], schemes: Sequence[str], axis: str = "n", log: bool = False
) -> list[float]:
    """x offset per scheme: spread over 1.5 % of the x range, centred on the true x
    (on a log axis, of the range of log x: the offsets are then exponents of 10)."""
    ns = [r[axis] for r in rows if isinstance(r.get(axis), int | float)]
    if log:
        ns = [math.log10(n) for n in ns]
    span = (max(ns) - min(ns)) if ns else 0
    step = 0.015 * span / max(len(schemes) - 1, 1)
    return [(i - (len(schemes) - 1) / 2) * step for i in range(len(schemes))]


def _nudge(xs: Sequence[float], dx: float, log: bool) -> list[float]:
    return [x * 10**dx if log else x + dx for x in xs]


def break_n(rows: Sequence[Mapping[str, Any]], scheme: str) -> Any | None:
    """Where `scheme` breaks: the first N at which it has an RTO in more than
    FREQUENT_RTO of its rounds (the papers' incast collapse, reports/verdicts.py),
    on the means; None when it never does at the N run."""
    xs, ratios, _ = series(rows, scheme, "rto_round_ratio")
    return next((n for n, r in sorted(zip(xs, ratios, strict=True)) if r > FREQUENT_RTO), None)


def break_label(rows: Sequence[Mapping[str, Any]], scheme: str) -> str:
    """A scheme's legend entry with where it breaks, or the largest N it holds to."""
    n = break_n(rows, scheme)
    if n is not None:
        return f"{scheme}: breaks at N = {n}"
    xs, _, _ = series(rows, scheme, "rto_round_ratio")
    return f"{scheme}: holds to N = {max(xs)}" if xs else scheme


def _per_scheme(
    ax: Any,
    rows: Sequence[Mapping[str, Any]],
    key: str,
    scale: float = 1.0,
    axis: str = "n",
    x_scale: float = 1.0,
    bounds: Bounds = NON_NEGATIVE,
    breaks: bool = False,
) -> list[float]:
    """Each scheme's `key` against `axis` with its 95 % bars; with `breaks`, each
    scheme's break (break_n) as a dotted vertical line in its colour, and its
    legend entry saying where it breaks or how far it holds."""
    values: list[float] = []
    schemes = _schemes(rows)
    bars = False
    log = log_x(rows, axis)
    if log:
        _log_axis(ax, rows, axis)
    for scheme, dx in zip(schemes, _dodge(rows, schemes, axis, log), strict=True):
        xs, ys, yerr = series(rows, scheme, key, scale, axis, bounds)
        if not xs:
            continue
        xs = [x * x_scale for x in _nudge(xs, dx, log)]
        label = break_label(rows, scheme) if breaks else scheme
        drawn = ax.errorbar(xs, ys, yerr=yerr, marker="o", capsize=3, label=label)
        at = break_n(rows, scheme) if breaks else None
        if at is not None:
            ax.axvline(at * x_scale, color=drawn.lines[0].get_color(), ls=":", lw=1.2)
        values += ys
        bars = bars or yerr is not None
    if bars:
        ax.text(
            0.99, 0.01, "bars: 95 % CI", transform=ax.transAxes, ha="right", va="bottom",
            fontsize="x-small", color="gray",
        )  # fmt: skip
    return values


def _finish(ax: Any, title: str, xlabel: str, ylabel: str, outside: bool = False) -> None:
    """Title, labels, grid and legend (`outside`: right of the axes, clear of the curves)."""
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        where = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0)} if outside else {}
        ax.legend(fontsize="small", **where)


def plot_goodput(
    rows: Sequence[Mapping[str, Any]],
    path: Path,
    name: str,
    link_bps: float | None = None,
    mss: int = MSS_BYTES,
) -> Path:
    """Mean round goodput (Mbps) vs senders, per scheme; the framing limit of
    segments of `mss` bytes dashed."""
    return _save(goodput_figure(rows, name, link_bps, mss), path)


def goodput_figure(
    rows: Sequence[Mapping[str, Any]], name: str, link_bps: float | None, mss: int = MSS_BYTES
) -> Figure:
    """plot_goodput's figure: N on a log axis when it spans more than a decade (a
    sweep to N = 1000 shows where each scheme falls off), each scheme's break
    dotted (break_n)."""
    limit = framing_limit_bps(link_bps, mss) / 1e6 if link_bps else math.inf
    fig, ax = _figure(BREAKS_SIZE)
    _per_scheme(ax, rows, "goodput_mbps", bounds=(0.0, limit), breaks=True)
    if link_bps:
        ax.axhline(limit, linestyle="--", color="gray", label=f"framing limit {limit:.0f} Mbps")
    ax.set_ylim(bottom=0)
    _finish(ax, f"{name}: goodput vs senders", "senders N", "goodput (Mbps)", outside=True)
    return fig


def plot_rto(rows: Sequence[Mapping[str, Any]], path: Path, name: str) -> Path:
    """Percentage of rounds with at least one RTO vs senders, per scheme."""
    return _save(rto_figure(rows, name), path)


def rto_figure(rows: Sequence[Mapping[str, Any]], name: str) -> Figure:
    """plot_rto's figure (N on a log axis as goodput_figure's), with the ratio past
    which a scheme has broken (FREQUENT_RTO) dotted across."""
    fig, ax = _figure(BREAKS_SIZE)
    _per_scheme(ax, rows, "rto_round_ratio", 100.0, bounds=(0.0, 100.0), breaks=True)
    collapse = 100 * FREQUENT_RTO
    ax.axhline(collapse, ls=":", color="gray", label=f"breaks: RTO in > {collapse:.0f} % of rounds")
    ax.set_ylim(-2, 102)
    _finish(ax, f"{name}: rounds with an RTO", "senders N", "rounds with >= 1 RTO (%)", True)
    return fig


def plot_fct(rows: Sequence[Mapping[str, Any]], path: Path, name: str) -> Path:
    """99th-percentile flow completion time (ms) vs senders; log y when it spans > 10x."""
    fig, ax = _figure()
    values = [v for v in _per_scheme(ax, rows, "fct_p99_ms") if v > 0]
    if values and max(values) / min(values) > 10:
        ax.set_yscale("log")
    _finish(ax, f"{name}: FCT p99 vs senders", "senders N", "flow completion time p99 (ms)")
    return _save(fig, path)


def _largest_n(runs: Sequence[Mapping[str, Any]]) -> Any:
    ns = cast(  # each an int, as filtered
        "list[int]",
        [r.get("n") for r in runs if r.get("status") == "ok" and isinstance(r.get("n"), int)],
    )
    return max(ns) if ns else None


def _bottleneck_hist(run: Mapping[str, Any]) -> list[int]:
    switch = run.get("switch") or {}
    port = (switch.get("ports") or {}).get(str(switch.get("bottleneck_port"))) or {}
    try:
        return hist_counts(port.get("hist") or {})
    except (ValueError, TypeError, AttributeError):
        return []  # a malformed histogram is left out of the plot, as a failed run is


def depth_cdfs(
    runs: Sequence[Mapping[str, Any]],
) -> tuple[int | None, list[tuple[str, list[tuple[int, float]]]]]:
    """(largest N, [(label, CDF of bottleneck depth)] one per scheme) for the depth-CDF plot.

    The histograms of the good repeats at the largest N are added up. A scheme
    with no histogram at the largest N (failed there) is shown at its own
    largest N with one, and its label says which. Schemes with no histogram
    at all are left out.
    """
    n = _largest_n(runs)
    lines = []
    for scheme in dict.fromkeys(str(r.get("scheme")) for r in runs):
        by_n: dict[int, list[int]] = {}
        for r in runs:
            if str(r.get("scheme")) != scheme or r.get("status") != "ok":
                continue
            counts = _bottleneck_hist(r)
            if not isinstance(r.get("n"), int) or not sum(counts):
                continue
            total = by_n.get(r["n"], [])
            width = max(len(total), len(counts))
            by_n[r["n"]] = [
                a + b for a, b in zip(_pad(total, width), _pad(counts, width), strict=True)
            ]
        if by_n:
            at = n if n in by_n else max(by_n)
            lines.append((scheme if at == n else f"{scheme} (N = {at})", hist_cdf(by_n[at])))
    return n, lines


def plot_depth_cdf(runs: Sequence[Mapping[str, Any]], path: Path, name: str) -> Path | None:
    """CDF of bottleneck queue depth at the largest N, one line per scheme; None if no data."""
    n, lines = depth_cdfs(runs)
    if not lines:
        return None
    fig, ax = _figure()
    for label, cdf in lines:
        ax.step([d for d, _ in cdf], [f for _, f in cdf], where="post", label=label)
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    _finish(ax, f"{name}: queue depth CDF, N = {n}", "queue depth (packets)", "fraction of packets")
    return _save(fig, path)


def _pad(xs: list[int], length: int) -> list[int]:
    return xs + [0] * (length - len(xs))


def plot_depth_series(runs: Sequence[Mapping[str, Any]], path: Path, name: str) -> Path | None:
    """Queue depth vs time at the largest N, one panel per scheme (shared axes;
    the first repeat with a series). The simulator records every change of the
    depth; the BMv2 testbed the mean depth per poll of the switch's histogram
    (run key depth_series_kind says which)."""
    n = _largest_n(runs)
    picked: dict[str, Mapping[str, Any]] = {}
    for r in runs:
        scheme = str(r.get("scheme"))
        ok = r.get("n") == n and r.get("status") == "ok" and r.get("depth_series")
        if ok and scheme not in picked:
            picked[scheme] = r
    if not picked:
        return None
    cols = min(2, len(picked))
    rows = math.ceil(len(picked) / cols)
    fig = Figure(figsize=(SIZE[0] * cols * 0.8, 1.9 * rows + 0.6), dpi=DPI)
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False).ravel()
    for ax, (scheme, r) in zip(axes, picked.items(), strict=False):
        series = r["depth_series"]
        ax.plot([p[0] * 1e3 for p in series], [p[1] for p in series], lw=0.7)
        ax.set_title(scheme, fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes[len(picked) :]:
        ax.set_visible(False)
    for ax in axes[(rows - 1) * cols :]:
        ax.set_xlabel("time (ms)")
    for ax in axes[::cols]:
        ax.set_ylabel("depth (pkts)")
    kind = next(iter(picked.values())).get("depth_series_kind")
    fig.suptitle(f"{name}: queue depth over time, N = {n}" + (f"\n({kind})" if kind else ""))
    return _save(fig, path)


def plot_all(
    results: ResultSet | Path | str,
    out_dir: Path | str | None = None,
    *,
    link_bps: float | None = None,
) -> list[Path]:
    """Draw every figure of an experiment; return the PNG paths written.

    `results` is a ResultSet or a results directory; PNGs go to `out_dir`
    (default: the results directory). `link_bps` overrides the ResultSet's.
    """
    rs = results if isinstance(results, ResultSet) else load(results)
    out = Path(out_dir) if out_dir is not None else rs.out_dir
    out.mkdir(parents=True, exist_ok=True)
    rows = aggregate(rs.runs)
    rate = link_bps if link_bps is not None else rs.link_bps
    paths = [
        plot_goodput(rows, out / "goodput.png", rs.name, rate, rs.mss_bytes),
        plot_rto(rows, out / "rto_rounds.png", rs.name),
        plot_fct(rows, out / "fct_p99.png", rs.name),
    ]
    for p in (
        plot_depth_cdf(rs.runs, out / "qdepth_cdf.png", rs.name),
        plot_depth_series(rs.runs, out / "qdepth_time.png", rs.name),
    ):
        if p is not None:
            paths.append(p)
    return paths


# An at-scale sweep (experiments/atscale.py): its summary rows against offered load.
LOAD_FIGURES = (  # key, y label, file, y scale
    ("fct_p99_ms", "short-flow FCT p99 (ms)", "fct_p99.png", "log"),
    ("fct_p50_ms", "short-flow FCT p50 (ms)", "fct_p50.png", "log"),
    ("long_mbps", "long-flow throughput (Mbit/s)", "long.png", "linear"),
    ("drops_tor", "packets dropped at the ToRs", "drops_tor.png", "symlog"),
    ("drops_root", "packets dropped at the root", "drops_root.png", "symlog"),
)


def plot_loads(rows: Sequence[Mapping[str, Any]], out: Path, name: str) -> list[Path]:
    """Each of LOAD_FIGURES against offered load, per scheme, 95 % intervals as bars."""
    paths = []
    for key, ylabel, file, yscale in LOAD_FIGURES:
        fig, ax = _figure()
        _per_scheme(ax, rows, key, axis="load", x_scale=100.0)
        ax.set_yscale(yscale)
        title = f"{name}: {ylabel.split(' (')[0]}"
        _finish(ax, title, "offered load at each aggregator (%)", ylabel)
        paths.append(_save(fig, out / file))
    return paths


REFERENCE_LABELS = {
    "goodput_mbps": "goodput (Mbit/s)",
    "rto_round_ratio": "rounds with an RTO",
    "fct_p99_ms": "FCT p99 (ms)",
    "fct_mean_ms": "FCT mean (ms)",
    "fct_max_ms": "FCT max per round (ms)",
    "drops": "drops",
    "qdepth_mean": "queue mean (packets)",
    "jain": "Jain's index",
    "qdepth_p95": "queue p95 (packets)",
}


REFERENCE_DPI = 72  # these are committed (docs/reproduce/figures/): all of them under 5 MB


def _bounds(metric: str, link_bps: float | None, mss: int) -> Bounds:
    """What `metric` can be, as reference_plot draws it (segments of `mss` bytes)."""
    if metric == "goodput_mbps" and link_bps:
        return (0.0, framing_limit_bps(link_bps, mss) / 1e6)
    if metric == "rto_round_ratio":
        return (0.0, 1.0)
    return NON_NEGATIVE


Mark = tuple[str, Point]  # (claim id, a point its verdict was decided on)


@dataclass(frozen=True)
class ReferenceFigure:
    """A preset variant's figure in REPORT.md and the claim points marked on it."""

    path: Path
    marks: tuple[Mark, ...]


def _mark(ax: Any, claim_id: str, p: Point, color: str) -> None:
    """An open circle at a point a verdict was decided on, labelled with the claim's
    id; a mean over a range of N as a dashed line across that range."""
    if isinstance(p.x, tuple):
        lo, hi = p.x
        ax.plot([lo, hi], [p.value, p.value], ls="--", lw=1, color=color)
        x = lo if lo == hi else (lo * hi) ** 0.5 if ax.get_xscale() == "log" else (lo + hi) / 2
    else:
        x = p.x
    ax.plot([x], [p.value], "o", ms=10, mfc="none", mec=color, mew=1.2)
    ax.annotate(claim_id, (x, p.value), textcoords="offset points", xytext=(5, -9), fontsize=6)


def reference_plot(
    rows: Sequence[Mapping[str, Any]],
    reference: Mapping[str, Any],
    title: str,
    out: Path,
    link_bps: float | None = None,
    marks: Sequence[Mark] = (),
    mss: int = MSS_BYTES,
) -> ReferenceFigure:
    """Our goodput (and any other referenced or marked metric) per scheme with 95 %
    error bars, and a paper's stated numbers over them (make reproduce): points as
    black markers, peaks as dashed horizontal lines, "collapses near N" as dotted
    vertical lines; each point a claim's verdict was decided on (`marks`) as an open
    circle labelled with the claim's id. N on a log axis when it spans more than a
    decade; intervals cut to what the metric can be (goodput to the framing limit
    of `link_bps` with segments of `mss` bytes, ratios to [0, 1]). Returns the
    figure's path and the marks drawn (those on a metric REFERENCE_LABELS names
    and a scheme the rows have)."""
    schemes = _schemes(rows)
    wanted = [*reference, *(p.metric for _c, p in marks)]
    keys = list(dict.fromkeys(m for m in wanted if m in REFERENCE_LABELS)) or ["goodput_mbps"]
    fig = Figure(figsize=(6.5 * len(keys), 4.2), dpi=REFERENCE_DPI)
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(keys), squeeze=False)[0]
    log = log_x(rows)
    drawn: list[Mark] = []
    for ax, metric in zip(axes, keys, strict=True):
        if log:
            _log_axis(ax, rows)
        for i, s in enumerate(schemes):
            xs, ys, err = series(rows, s, metric, bounds=_bounds(metric, link_bps, mss))
            if not xs:
                continue
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
            here: dict[Point, list[str]] = {}  # one circle per point, its claims' ids joined
            for claim_id, p in marks:
                if p.metric == metric and p.scheme == s:
                    here.setdefault(p, []).append(claim_id)
                    drawn.append((claim_id, p))
            for p, ids in here.items():
                _mark(ax, ", ".join(dict.fromkeys(ids)), p, f"C{i}")
        ax.set_xlabel("senders N")
        ax.set_ylabel(REFERENCE_LABELS.get(metric, metric))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        f"{title}\nours: lines with 95 % CI; paper: ★ points, -- peaks, : collapse N;"
        " ○ decides the labelled claim"
    )
    return ReferenceFigure(_save(fig, out), tuple(drawn))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m p4incast.reports.plots", description="Redraw an experiment's plots."
    )
    ap.add_argument("results", type=Path, help="results directory (or its results.json)")
    ap.add_argument("--out", type=Path, help="where to write the PNGs (default: results dir)")
    ap.add_argument("--link-gbps", type=float, help="bottleneck rate, for the framing limit")
    args = ap.parse_args(argv)
    try:
        rs = load(args.results)
    except ValueError as err:
        print(f"plots: {err}", file=sys.stderr)
        return 2
    link = args.link_gbps * 1e9 if args.link_gbps else None
    if link is not None and not math.isfinite(link):
        print("plots: --link-gbps must be a finite number", file=sys.stderr)
        return 2
    for path in plot_all(rs, args.out, link_bps=link):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
