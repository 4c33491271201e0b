"""The two engines checked against each other (`experiments/twin.yaml`).

One experiment runs on the BMv2 testbed, then on the simulator configured to
what the testbed measured, and the two are compared per scheme and N.

The simulator's twin of a testbed run (`sim_twin`), from the testbed's
calibration (p4incast/model/dilation.py):
- every link at the bottleneck's measured rate (measured pkt/s × 1538 B × 8);
  the testbed's host links are faster (htb at host_mbps), so on the model a
  sender's own link adds one frame time (0.5 ms at 2000 pkt/s) to its path;
- the bottleneck port's buffer = queue_pkts full frames (wire.QUEUED_FRAME_BYTES each),
  them;
- link delay chosen so the model's unloaded RTT of a full frame equals the
  testbed's: the ping RTT plus a full frame's time at the bottleneck and on
  the sender's host link (ping's small packets take neither);
- the min RTO the testbed ran with (the dilated one), and Linux's 40 ms
  delayed-ACK timer, since the twin runs on the testbed's clock, not the
  datacenter's.
Everything else (schemes, K in packets, SRU, rounds, transport) is the
experiment's own.

Compared: goodput, the RTO-round ratio and queue p95 with each engine's 95 %
interval; a difference counts as a disagreement when the two intervals do
not overlap. Writes twin.md (table), twin.png (three panels) and twin.json in
the output folder, beside the two engines' own results folders.

    python -m p4incast.reports.twin experiments/twin.yaml [--rounds R] [--senders ...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from p4incast.engines import resolve
from p4incast.experiments import results
from p4incast.experiments.config import Experiment, ExperimentError, load_all
from p4incast.experiments.metrics import interval_of
from p4incast.experiments.runner import run_experiments
from p4incast.model.dilation import LINUX_DELACK_MS, Dilation
from p4incast.model.wire import ACK_WIRE_BYTES, QUEUED_FRAME_BYTES, WIRE_FRAME_BYTES

REPO = Path(__file__).resolve().parents[1]
METRICS = (
    ("goodput_mbps", "goodput (Mbit/s)"),
    ("rto_round_ratio", "rounds with an RTO"),
    ("qdepth_p95", "queue p95 (packets)"),
)


def sim_twin(exp: Experiment, dil: Dilation) -> Experiment:
    """The experiment on the simulator, at the testbed's measured rate, RTT, queue and timers."""
    t = exp.topology
    rate_bps = dil.measured_pps * WIRE_FRAME_BYTES * 8
    host_bps = t.host_mbps * 1e6
    frame = 8 * WIRE_FRAME_BYTES
    # testbed: ping + a full frame at the bottleneck and on the sender's link
    target_s = (dil.base_rtt_ms or 0) / 1e3 + frame / rate_bps + frame / host_bps
    # model (model.scheme.base_rtt_s, incast_star): 4 delays + 2 × (frame + ACK) at rate_bps
    model_frames_s = 2 * 8 * (WIRE_FRAME_BYTES + ACK_WIRE_BYTES) / rate_bps
    delay_us = max(0.0, (target_s - model_frames_s) / 4 * 1e6)
    rto = dil.rto_min_ms(t.rto_min_ms) if t.dilate else t.rto_min_ms
    topo = replace(
        t,
        link_gbps=rate_bps / 1e9,
        delay_us=delay_us,
        buffer_bytes=t.queue_pkts * QUEUED_FRAME_BYTES,
        shared_buffer_bytes=0,
        rto_min_ms=rto,
    )
    transport = replace(exp.transport, delack_ms=LINUX_DELACK_MS)
    return replace(exp, name=f"{exp.name}-sim", engine="sim", topology=topo, transport=transport)


def dilation_of(rs: results.ResultSet) -> Dilation:
    """The calibration the testbed runs carry (the same for every run of a sweep)."""
    for run in rs.runs:
        d = run.get("dilation")
        if run.get("status") == "ok" and d:
            return Dilation(d["measured_pps"], d["configured_pps"], d["base_rtt_ms"])
    raise ExperimentError(
        f"{rs.out_dir}: no testbed run carries a calibration (topology.dilate must be true)"
    )


def _cell(row: Mapping[str, Any] | None, metric: str) -> tuple[float | None, Any]:
    if row is None or row.get(metric) is None:
        return None, None
    return float(row[metric]), interval_of(row, metric)


def compare(
    bmv2_rows: Sequence[Mapping[str, Any]],
    sim_rows: Sequence[Mapping[str, Any]],
    ref: str = "bmv2",
    metrics: Sequence[tuple[str, str]] = METRICS,
    min_effect: float = 0.0,
) -> list[dict[str, Any]]:
    """One row per (scheme, N) of the reference engine `ref` (the testbed; ns-2 for
    reports/ns2_twin.py) with both engines' values, intervals and difference:
    `<metric>_<ref>`, `<metric>_sim`, their `_ci`, `<metric>_diff` (sim - ref) and
    `<metric>_agree` (the two 95 % intervals overlap, or the two values are
    within `min_effect` of the larger one; a metric without intervals: within
    25 % of the larger value)."""
    sims = {(r["scheme"], r["n"]): r for r in sim_rows}
    out = []
    for b in bmv2_rows:
        s = sims.get((b["scheme"], b["n"]))
        row: dict[str, Any] = {"scheme": b["scheme"], "n": b["n"]}
        for metric, _label in metrics:
            bv, bi = _cell(b, metric)
            sv, si = _cell(s, metric)
            row[f"{metric}_{ref}"], row[f"{metric}_sim"] = bv, sv
            row[f"{metric}_{ref}_ci"] = [bi.lo, bi.hi] if bi else None
            row[f"{metric}_sim_ci"] = [si.lo, si.hi] if si else None
            row[f"{metric}_diff"] = None if bv is None or sv is None else sv - bv
            if bv is None or sv is None:
                row[f"{metric}_agree"] = None
            elif bi and si:
                near = abs(sv - bv) <= min_effect * max(abs(sv), abs(bv))
                row[f"{metric}_agree"] = near or not (bi.hi < si.lo or si.hi < bi.lo)
            else:  # no interval (queue p95, drops): agree within 25 % of the larger value
                row[f"{metric}_agree"] = abs(sv - bv) <= 0.25 * max(abs(sv), abs(bv), 1.0)
        out.append(row)
    return out


def _fmt(v: float | None, ci: list[float] | None, metric: str) -> str:
    if v is None:
        return "—"
    if metric == "rto_round_ratio":
        text = f"{100 * v:.0f}"
        return text + (f" [{100 * ci[0]:.0f},{100 * ci[1]:.0f}]" if ci else "")
    text = f"{v:.1f}" if metric == "goodput_mbps" else f"{v:.0f}"
    return text + (f" ±{(ci[1] - ci[0]) / 2:.1f}" if ci and metric == "goodput_mbps" else "")


def table(
    rows: Sequence[Mapping[str, Any]], dil: Dilation, exp: Experiment, twin: Experiment
) -> str:
    t = twin.topology
    head = [
        "# Twin engines: BMv2 testbed vs the simulator at the testbed's settings",
        "",
        f"Testbed: {dil.describe(exp.topology.rto_min_ms)}.",
        f"Simulator twin: links {t.link_gbps * 1e3:.2f} Mbit/s, delay {t.delay_us:.0f} µs per "
        f"link, buffer {t.buffer_bytes} B ({t.queue_pkts} packets), min RTO {t.rto_min_ms} ms, "
        f"delayed ACK {twin.transport.delack_ms:g} ms.",
        "Cells: value ±95 % CI (goodput), % [CI] (RTO rounds); ✗ = the two intervals do not",
        "overlap (queue p95 has none: ✗ = more than 25 % apart).",
        "",
        "| scheme | N | goodput bmv2 | goodput sim | Δ | RTO % bmv2 | RTO % sim | q p95 bmv2 | "
        "q p95 sim |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lines = []
    for r in rows:
        cells = [str(r["scheme"]), str(r["n"])]
        for metric, _ in METRICS:
            mark = " ✗" if r.get(f"{metric}_agree") is False else ""
            cells.append(_fmt(r[f"{metric}_bmv2"], r[f"{metric}_bmv2_ci"], metric))
            cells.append(_fmt(r[f"{metric}_sim"], r[f"{metric}_sim_ci"], metric) + mark)
            if metric == "goodput_mbps":
                d = r[f"{metric}_diff"]
                cells.append("—" if d is None else f"{d:+.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    n_dis = {m: sum(1 for r in rows if r.get(f"{m}_agree") is False) for m, _ in METRICS}
    foot = [
        "",
        "Disagreements: "
        + ", ".join(f"{label} {n_dis[m]}/{len(rows)}" for m, label in METRICS)
        + ".",
    ]
    return "\n".join(head + lines + foot) + "\n"


def plot(rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    fig = Figure(figsize=(5 * len(METRICS), 4), dpi=110)
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(METRICS))
    colors = [f"C{i}" for i in range(10)]
    for ax, (metric, label) in zip(axes, METRICS, strict=True):
        for i, sch in enumerate(schemes):
            mine = [r for r in rows if r["scheme"] == sch]
            ns = [r["n"] for r in mine]
            c = colors[i % len(colors)]
            for eng, style in (("bmv2", "-o"), ("sim", "--s")):
                ys = [r[f"{metric}_{eng}"] for r in mine]
                ys = [math.nan if y is None else y for y in ys]
                ax.plot(ns, ys, style, color=c, ms=3, lw=1, label=f"{sch} ({eng})")
        ax.set_xlabel("senders N")
        ax.set_title(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=6, ncol=2)
    fig.suptitle("BMv2 testbed (solid) vs simulator twin (dashed)")
    fig.tight_layout()
    fig.savefig(path)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="twin", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("experiment", type=Path)
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--senders", help="comma-separated N")
    ap.add_argument("--schemes", help="comma-separated scheme names")
    ap.add_argument("--out", type=Path, help="default results/twin-<time>")
    ap.add_argument("--bmv2-results", type=Path, help="reuse a finished testbed run")
    args = ap.parse_args(argv)
    try:
        (exp,) = load_all(args.experiment)
        senders = [int(x) for x in args.senders.split(",")] if args.senders else None
        schemes = args.schemes.split(",") if args.schemes else None
        exp = exp.with_overrides(rounds=args.rounds, senders=senders, schemes=schemes)
        bmv2, note = resolve("bmv2")
        sim, sim_note = resolve("sim")
    except (ExperimentError, RuntimeError, ValueError) as err:
        print(f"twin: {err}", file=sys.stderr)
        return 2
    root = args.out or REPO / "results" / f"twin-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
    root.mkdir(parents=True, exist_ok=True)
    print(f"{note}; then {sim_note}; results in {root}", flush=True)
    if args.bmv2_results:
        tb = results.load(args.bmv2_results)
    else:
        (tb,) = run_experiments([exp], bmv2, [root / "bmv2"], 1)
    dil = dilation_of(tb)
    twin = sim_twin(exp, dil)
    (sm,) = run_experiments([twin], sim, [root / "sim"], os.cpu_count() or 1)
    rows = compare(results.aggregate(tb.runs), results.aggregate(sm.runs))
    (root / "twin.json").write_text(json.dumps({"dilation": dil.as_dict(), "rows": rows}, indent=1))
    (root / "twin.md").write_text(table(rows, dil, exp, twin))
    plot(rows, root / "twin.png")
    print(table(rows, dil, exp, twin))
    print(f"twin: {root / 'twin.md'}, {root / 'twin.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
