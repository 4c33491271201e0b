"""Benchmark: packets/s through the p4-incast pipeline vs a minimal IPv4 router,
on the same BMv2 build, in the same run.

For each pipeline: a fresh simple_switch_grpc (no log file) between two veth
pairs, the pipeline pushed over P4Runtime, one route (and, for p4-incast,
mark-tail K=20 on the egress port so the marking path runs). tcpreplay sends
64-byte ECT(0) UDP frames at top speed for a few seconds, so BMv2 is the
bottleneck; the rate is what leaves the egress veth. The pipelines alternate
(minimal, p4incast, ...) ROUNDS times; the medians are compared, and so are
the two pipelines within each round (median and range of those ratios).

The switch (all its threads) is pinned to CPU 1 and tcpreplay to CPU 0, so
the rate is one core's worth of switch. Two figures per pipeline, each as a
ratio to the minimal router:
- pkt/s: packets out per wall-clock second, the issue's figure;
- pkt per switch CPU-s: packets out per CPU second simple_switch_grpc used
  (all its threads, from /proc). With the switch saturating its core the two
  agree; they part when something else takes that core.
On this 2-vCPU VM single rounds move by ±10 % and more (the same pipeline
has run 30 % slower from one round to the next, with the machine otherwise
idle); bench_pipeline_instr.py gives the repeatable figure.

What BMv2 charges per packet (callgrind on simple_switch_grpc 1.15.5, see
bench_pipeline_instr.py): ~1.1 k instructions per action primitive, ~0.7 k
per metadata field (PHV::reset_metadata resets each one with GMP), ~1.5 k
per extracted header, a few hundred per condition. p4src/v1model is written
to that price list (docs/pipeline.md, DEVELOPERS.md). With the default build, each
applied table also formats its key and entry into strings
(MatchTableAbstract::dump_entry_string_) even at --log-level off; a build
configured as BMv2's docs/performance.md says (--disable-logging-macros
--disable-elogger, -O3) does not. To compare builds, list them (each a
simple_switch_grpc path) in P4INCAST_BENCH_BMV2, colon-separated; every build
gets its own ratios. Unset, it runs the default build on PATH and, when it is
installed (/opt/bmv2-perf, make setup with P4INCAST_BMV2_PERF_BUNDLE), the
performance build, side by side.

Needs root, BMv2, tcpreplay and `make build`; prints why when it cannot run.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from p4incast import bmv2, tools
from p4incast.controller import entries
from p4incast.controller.config import EcnPolicy, Pipeline, SwitchSettings
from p4incast.controller.connection import connect
from p4incast.controller.targets import V1MODEL

REPO = Path(__file__).resolve().parent.parent
ROUNDS = 7
SECONDS = 4.0
IN, OUT = ("p4b1s", "p4b1h"), ("p4b2s", "p4b2h")
PIPELINES = {
    "minimal": Pipeline(
        REPO / "build/bench/minimal.p4info.txtpb", REPO / "build/bench/minimal.json"
    ),
    "p4incast-off": Pipeline.default(),  # our pipeline, no ECN policy entry (mode OFF)
    "p4incast": Pipeline.default(),  # our pipeline, mark-tail K=20 on the egress port
}


def why_not() -> str | None:
    if not bmv2.have_root():
        return "needs root"
    if shutil.which("tcpreplay") is None:
        return "needs tcpreplay (apt install tcpreplay)"
    missing = tools.missing_reason("simple_switch_grpc")
    if missing:
        return missing
    for pl in set(PIPELINES.values()):
        if pl.config is None or not pl.config.is_file():
            return f"{pl.config} not built (make build)"
    return None


def rx_packets(iface: str) -> int:
    return int(Path(f"/sys/class/net/{iface}/statistics/rx_packets").read_text())


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` (all threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def program(name: str, settings: SwitchSettings, pl: Pipeline) -> None:
    async with connect(settings, pl, push=True) as sw:
        route = entries.route(
            prefix="10.0.2.0/24", port=2, smac="00:aa:00:00:00:02", dmac="00:bb:00:00:00:02"
        )
        updates = [+route]
        if name == "p4incast":
            updates.append(
                +entries.ecn_policy(port=2, policy=EcnPolicy("tail", 20), target=V1MODEL)
            )
        await sw.write(updates)


def write_pcap(path: Path) -> None:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.utils import wrpcap

    pkts = [
        Ether(src="00:bb:00:00:00:01", dst="00:aa:00:00:00:01")
        / IP(src="10.0.1.1", dst="10.0.2.2", tos=0b10, id=i)
        / UDP(sport=1000 + i, dport=5001)
        / (b"\0" * 18)
        for i in range(64)
    ]
    wrpcap(str(path), pkts)


def saturate(sw: bmv2.Bmv2Switch, pcap: Path, warmup: Path | None = None) -> tuple[float, float]:
    """(packets out per wall second, packets out per switch CPU second) of the
    programmed, running `sw` while tcpreplay sends `pcap` into port 1 as fast as
    it can (after `warmup`, replayed once, if given).

    The switch (all its threads) runs on CPU 1, the sender on CPU 0: the rate is
    then one core's worth of switch, not a split of two cores."""
    assert sw.proc is not None
    subprocess.run(["taskset", "-a", "-p", "-c", "1", str(sw.proc.pid)], capture_output=True)
    if warmup is not None:
        subprocess.run(["tcpreplay", "-q", "-i", IN[1], str(warmup)], capture_output=True)
        time.sleep(0.5)
    replay = ["tcpreplay", "-q", "--topspeed", "--loop=0", "-i", IN[1], str(pcap)]
    sender = subprocess.Popen(
        ["taskset", "-c", "0", *replay], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        time.sleep(1.0)  # warm up, then count what leaves the switch
        start_n, start_t = rx_packets(OUT[1]), time.monotonic()
        start_cpu = cpu_seconds(sw.proc.pid)
        time.sleep(SECONDS)
        end_n, end_t = rx_packets(OUT[1]), time.monotonic()
        end_cpu = cpu_seconds(sw.proc.pid)
    finally:
        sender.terminate()
        sender.wait(timeout=5)
    sent = end_n - start_n
    return sent / (end_t - start_t), sent / max(end_cpu - start_cpu, 1e-9)


def measure(name: str, pcap: Path, tmp: Path) -> tuple[float, float]:
    """(packets out per wall second, packets out per switch CPU second)."""
    sw = bmv2.Bmv2Switch(
        ports={1: IN[0], 2: OUT[0]},
        grpc_port=50081,
        thrift_port=9481,
        extra_args=["--log-level", "off"],
    )
    with sw:
        settings = SwitchSettings(address=sw.grpc_addr, thrift_port=sw.thrift_port)
        asyncio.run(program(name, settings, PIPELINES[name]))
        return saturate(sw, pcap)


Rates = dict[str, list[tuple[float, float]]]


def bench_build(pcap: Path, tmp: Path) -> Rates:
    """(pkt/s, pkt per switch CPU-s) of every round, per pipeline, on the
    simple_switch_grpc tools.require finds."""
    rates: Rates = {n: [] for n in PIPELINES}
    for r in range(ROUNDS):
        for name in PIPELINES:
            pps, per_cpu = measure(name, pcap, tmp)
            rates[name].append((pps, per_cpu))
            print(
                f"  round {r + 1}: {name:12s} {pps:10.0f} pkt/s {per_cpu:10.0f} pkt/CPU-s",
                flush=True,
            )
    return rates


def report(build: str, rates: Rates) -> None:
    """Medians per pipeline, then the ratios: of the medians, and the median
    and range of the ratios within each round (the two pipelines of a round
    ran seconds apart, so they share most of the VM's slow spells)."""
    med = {
        n: (statistics.median(p for p, _ in v), statistics.median(c for _, c in v))
        for n, v in rates.items()
    }
    print(f"BMv2 pipeline throughput on {build}")
    print(f"(median of {ROUNDS}, 64 B frames, {SECONDS:.0f} s each)    pkt/s   pkt/switch-CPU-s")
    rows = (
        ("minimal IPv4 router", "minimal"),
        ("p4-incast, ECN policy OFF", "p4incast-off"),
        ("p4-incast, mark-tail K=20", "p4incast"),
    )
    for label, name in rows:
        print(f"  {label:28s}: {med[name][0]:10.0f} {med[name][1]:12.0f}")
    for i, what in enumerate(("pkt/s", "pkt per switch CPU-s")):
        ratio = med["p4incast"][i] / med["minimal"][i]
        per_round = [a[i] / b[i] for a, b in zip(rates["p4incast"], rates["minimal"], strict=True)]
        verdict = "met" if ratio >= 0.9 else "NOT met"
        print(
            f"  ratio p4incast/minimal, {what:20s} = {ratio:.3f}  (target >= 0.90: {verdict});"
            f" per round: median {statistics.median(per_round):.3f},"
            f" {min(per_round):.3f}..{max(per_round):.3f}"
        )
    print(f"  ratio marking on/off, pkt/s = {med['p4incast'][0] / med['p4incast-off'][0]:.3f}")


def main() -> int:
    reason = why_not()
    if reason:
        print(f"bench_pipeline: skipped — {reason}")
        return 0
    var = tools.TOOLS["simple_switch_grpc"].env_var
    builds = [b for b in os.environ.get("P4INCAST_BENCH_BMV2", "").split(":") if b]
    for b in builds:
        if not (Path(b).is_file() and os.access(b, os.X_OK)):
            print(f"bench_pipeline: P4INCAST_BENCH_BMV2 entry {b} is not an executable")
            return 2
    for a, b in (IN, OUT):
        bmv2.make_veth(a, b)
    results: list[tuple[str, Rates]] = []
    saved = os.environ.get(var)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            pcap = Path(tmp) / "burst.pcap"
            write_pcap(pcap)
            default = [str(tools.require("simple_switch_grpc"))]
            perf = tools.bmv2_perf_build()
            default += [str(perf)] if perf else []
            for build in builds or default:
                os.environ[var] = build
                print(f"build {build}", flush=True)
                results.append((build, bench_build(pcap, Path(tmp))))
    finally:
        if saved is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = saved
        for a, _b in (IN, OUT):
            bmv2.del_veth(a)
    for build, rates in results:
        report(build, rates)
    return 0


if __name__ == "__main__":
    sys.exit(main())
