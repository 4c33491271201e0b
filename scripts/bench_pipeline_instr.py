"""Benchmark: CPU instructions per packet of the p4-incast pipeline vs the minimal
IPv4 router, on the same BMv2 build — the deterministic companion of
bench_pipeline.py.

Wall-clock throughput on a small shared VM moves by ±10 % and more between
rounds; instruction counts do not (±0.5 % here; about one run in five reads
~10 % high, when something else wakes the switch inside the window: run it
twice). For each pipeline: simple_switch_grpc runs under valgrind's
callgrind with instrumentation off, the pipeline is pushed and one route
(plus mark-tail K=20 for p4-incast) written, then instrumentation is
switched on only while BURST frames (64-byte ECT(0) UDP, as in
bench_pipeline.py) cross the switch at a low rate, and the instructions
executed in that window are divided by the packets that left. User space
only (callgrind does not see the kernel), and it includes the switch's idle
wake-ups during the window, which are the same for both pipelines.

Prints Ir per packet for both, the ratio minimal/p4incast (the throughput
ratio the switch would reach if it spent all its time in user space), and the
BMv2 functions where p4-incast's extra instructions go.

    sudo .venv/bin/python scripts/bench_pipeline_instr.py [--packets 1280]

P4INCAST_BENCH_BMV2 may name one simple_switch_grpc build (best: one with
symbols, e.g. configured as BMv2's docs/performance.md says). Needs root,
valgrind, tcpreplay, BMv2 and `make build`; prints why when it cannot run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_pipeline import IN, OUT, PIPELINES, program, rx_packets, why_not, write_pcap

from p4incast import bmv2, tools
from p4incast.controller.config import SwitchSettings

GRPC_PORT, THRIFT_PORT = 50091, 9491
RATE_PPS = 300  # what simple_switch keeps up with under callgrind
COMPARED = ("minimal", "p4incast")


def run_under_callgrind(name: str, packets: int, pcap: Path, out: Path) -> tuple[int, int, Path]:
    """(packets out, instructions in the window, callgrind output file) for one pipeline."""
    callgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
    sw = bmv2.Bmv2Switch(
        ports={1: IN[0], 2: OUT[0]},
        grpc_port=GRPC_PORT,
        thrift_port=THRIFT_PORT,
        extra_args=["--log-level", "off"],
        wrapper=[*callgrind, f"--callgrind-out-file={out}/{name}.%p"],
    )
    sw.start(timeout=180)  # valgrind takes a while to bring the switch up
    try:
        assert sw.proc is not None
        pid = str(sw.proc.pid)  # valgrind runs the switch in its own process
        settings = SwitchSettings(address=sw.grpc_addr, thrift_port=sw.thrift_port)
        asyncio.run(program(name, settings, PIPELINES[name]))
        replay = ["tcpreplay", "-q", "--pps", str(RATE_PPS), "-i", IN[1], str(pcap)]
        subprocess.run(replay, capture_output=True)  # warm-up: first-packet paths, caches
        time.sleep(2)
        before = rx_packets(OUT[1])
        subprocess.run(["callgrind_control", "-i", "on", pid], capture_output=True, check=True)
        loops = max(1, packets // 64)  # the pcap holds 64 frames
        subprocess.run([*replay[:-1], f"--loop={loops}", str(pcap)], capture_output=True)
        time.sleep(3)  # let the last packets leave
        subprocess.run(["callgrind_control", "-i", "off", pid], capture_output=True, check=True)
        sent = rx_packets(OUT[1]) - before
        subprocess.run(["callgrind_control", "-d", pid], capture_output=True, check=True)
        time.sleep(2)
    finally:
        sw.stop()
    dumps = sorted(out.glob(f"{name}.*"), key=lambda p: p.stat().st_size)
    if not dumps:
        raise RuntimeError("callgrind wrote no profile")
    total = max(
        int(m.group(1))
        for line in dumps[-1].read_text(errors="replace").splitlines()
        if (m := re.match(r"(?:summary|totals): (\d+)", line))
    )
    return sent, total, dumps[-1]


def inclusive_by_function(dump: Path) -> dict[str, int]:
    """Inclusive Ir per BMv2 function (bm:: and SimpleSwitch::), from callgrind_annotate."""
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(dump)],
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+\S*:((?:bm::|SimpleSwitch::)[^(\[]+)", line)
        if m:
            fn = m.group(2).strip()
            result[fn] = max(result.get(fn, 0), int(m.group(1).replace(",", "")))
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--packets", type=int, default=1280, help="frames in the measured window")
    args = ap.parse_args()
    reason = why_not()
    if reason is None and shutil.which("valgrind") is None:
        reason = "needs valgrind (apt install valgrind)"
    if reason:
        print(f"bench_pipeline_instr: skipped — {reason}")
        return 0
    builds = [b for b in os.environ.get("P4INCAST_BENCH_BMV2", "").split(":") if b]
    if builds:  # Bmv2Switch runs the build tools.require finds: this one
        os.environ[tools.TOOLS["simple_switch_grpc"].env_var] = builds[0]
    binary = str(tools.require("simple_switch_grpc"))
    for a, b in (IN, OUT):
        bmv2.make_veth(a, b)
    per_packet: dict[str, float] = {}
    profiles: dict[str, dict[str, int]] = {}
    sent_by: dict[str, int] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            pcap = out / "burst.pcap"
            write_pcap(pcap)
            for name in COMPARED:
                sent, total, dump = run_under_callgrind(name, args.packets, pcap, out)
                if sent <= 0:
                    print(f"bench_pipeline_instr: no packet left the switch for {name}")
                    return 1
                per_packet[name] = total / sent
                sent_by[name] = sent
                profiles[name] = inclusive_by_function(dump)
                print(f"  {name:9s}: {sent} packets, {total:,} Ir -> {total / sent:,.0f} Ir/packet")
    finally:
        for a, _b in (IN, OUT):
            bmv2.del_veth(a)
    ratio = per_packet["minimal"] / per_packet["p4incast"]
    print(f"BMv2 instructions per packet on {binary} (callgrind, user space):")
    print(f"  minimal IPv4 router       : {per_packet['minimal']:10,.0f} Ir/packet")
    print(f"  p4-incast, mark-tail K=20 : {per_packet['p4incast']:10,.0f} Ir/packet")
    print(f"  ratio minimal/p4incast    = {ratio:.3f}")
    print("  where p4-incast's extra instructions go (inclusive Ir per packet, top 10):")
    extra = {
        fn: profiles["p4incast"][fn] / sent_by["p4incast"]
        - profiles["minimal"].get(fn, 0) / sent_by["minimal"]
        for fn in profiles["p4incast"]
    }
    for fn, ir in sorted(extra.items(), key=lambda kv: -kv[1])[:10]:
        print(f"    {ir:+9,.0f}  {fn}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
