#!/usr/bin/env python3
"""Benchmark: the budgeted receiver agent against drop-tail on the BMv2 testbed
(targets in brackets, printed with what was measured; nothing here is a test).

In one run of experiments/default.yaml restricted to droptail and the two
budgeted agents, front+budget and front+rotate (its windows below one
segment, in turns) (N = 1..64, 10 rounds; or the results folder given with
--results, e.g. a whole `make run`), for each budgeted agent:
  - goodput / framing limit [>= 0.90] and rounds with an RTO [< 1 %] at
    every N, beside drop-tail's goodput in the same run (its collapse: below
    half the framing limit);
  - queue p95 at N = 32 [within K ± 25 %].
Beside the ratio it prints the ceiling no scheme can pass: a round carries
N x SRU after one base RTT of idle link (metrics.round_ceiling_bps); at N = 1
on the testbed that is below 0.90 of the framing limit.
It also prints the agent's CPU over each run's rounds (most of any repeat;
the BMv2 engine records it): the rotation's userspace rescue runs every tick
while flows wait. bench_agent.py measures the agent's CPU at line rate on a
veth pair, and observe mode's goodput ratio.

Needs root, Mininet, BMv2 and `make build`; prints why when it cannot run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from p4incast.engines.bmv2 import ENGINE  # noqa: E402
from p4incast.experiments import results  # noqa: E402
from p4incast.experiments.metrics import framing_limit_bps, round_ceiling_bps  # noqa: E402

BUDGETED, DROPTAIL = ("front+budget", "front+rotate"), "droptail"


def _run_sweep() -> Path:
    out = REPO / "results" / "bench-budget"
    cmd = [
        sys.executable,
        "-m",
        "p4incast.reports.run_cli",
        str(REPO / "experiments" / "default.yaml"),
        "--engine",
        "bmv2",
        "--schemes",
        ",".join((DROPTAIL, *BUDGETED)),
        "--out",
        str(out),
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def _k_of(rs: results.ResultSet, scheme: str) -> int | None:
    for s in rs.config.get("schemes", []):
        if s.get("name") == scheme:
            return s.get("k")
    return None


def report(rs: results.ResultSet) -> int:
    rows = {(r["scheme"], r["n"]): r for r in rs.aggregate()}
    assert rs.link_bps is not None, "the sweep's config names its topology"
    limit = framing_limit_bps(rs.link_bps) / 1e6
    print(f"results: {rs.out_dir}  (framing limit {limit:.1f} Mbit/s)")
    for scheme in BUDGETED:
        if any(s == scheme for s, _ in rows):
            report_scheme(rs, rows, scheme, limit)
    return 0


def cpu_s(c: float | None) -> str:
    return "-" if c is None else f"{100 * c:.1f} %"


def report_scheme(
    rs: results.ResultSet, rows: dict[tuple[str, int], Any], scheme: str, limit: float
) -> None:
    ns = sorted({n for s, n in rows if s == scheme})
    sru = (rs.config.get("app") or {}).get("sru_bytes")
    rtts = [r["base_rtt_ms"] for r in rs.runs if r.get("scheme") == scheme and r.get("base_rtt_ms")]
    rtt_s = sorted(rtts)[len(rtts) // 2] / 1e3 if rtts else 0.0
    print(f"\n{scheme}  (ceiling: one base RTT, median {rtt_s * 1e3:.2f} ms, per round)")
    cpu: dict[int, float] = {}  # the agent's CPU over the rounds, most of any repeat
    for r in rs.runs:
        if r.get("scheme") == scheme and r.get("agent_cpu") is not None:
            cpu[r["n"]] = max(cpu.get(r["n"], 0.0), r["agent_cpu"])
    print(
        f"{'N':>3}  {'goodput':>15}  {'ratio':>6}  {'ceiling':>7}  {'RTO %':>6}  "
        f"{'droptail ratio':>14}  {'agent CPU':>9}"
    )
    met_all = True
    for n in ns:
        b, d = rows[(scheme, n)], rows.get((DROPTAIL, n))
        g = b.get("goodput_mbps") or 0.0
        ratio, rto = g / limit, 100 * (b.get("rto_round_ratio") or 0.0)
        dr = (d.get("goodput_mbps") or 0.0) / limit if d else float("nan")
        ceil = (
            round_ceiling_bps(n * sru, rs.link_bps, rtt_s) / 1e6 / limit
            if sru and rs.link_bps
            else float("nan")
        )
        ok = ratio >= 0.9 and rto < 1
        met_all &= ok
        miss = "" if ok else "MISSED"
        print(
            f"{n:>3}  {g:>10.1f} Mbps  {ratio:>6.2f}  {ceil:>7.2f}  {rto:>6.0f}  "
            f"{dr:>14.2f}  {cpu_s(cpu.get(n)):>9}  {miss}"
        )
    print(
        f"{scheme} >= 0.90 of the framing limit and < 1 % RTO rounds at every N: "
        f"{'met' if met_all else 'missed'}"
    )
    k = _k_of(rs, scheme)
    q32: Any = rows.get((scheme, 32), {}).get("qdepth_p95")
    if k and q32 is not None:
        lo, hi = 0.75 * k, 1.25 * k
        verdict = "met" if lo <= q32 <= hi else "missed"
        print(f"queue p95 at N=32: {q32} packets [K={k}: {lo:.0f}..{hi:.0f}] {verdict}")


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--results", type=Path, help="evaluate this results folder instead")
    a = ap.parse_args()
    if a.results:
        return report(results.load(a.results))
    why = ENGINE.unavailable()
    if why:
        print(f"bench_budget: skipped — {why}")
        return 0
    return report(results.load(_run_sweep()))


if __name__ == "__main__":
    sys.exit(main())
