"""Benchmark: what the receiver's budget in the switch (docs/algorithms.md §8)
costs the pipeline, in packets/s on the same BMv2, against the pipeline as it
was before the budget.

Four cases, each a fresh simple_switch_grpc between two veth pairs with the
switch pinned to CPU 1 and tcpreplay (top speed) to CPU 0, as
bench_pipeline.py measures:
- before:      the pipeline of the commit before the budget came (built from
               git into a temporary directory), 64-byte ECT(0) UDP frames,
               mark-tail K=20: the common path as it was;
- now:         the current pipeline, the same frames and policy: what the
               budget costs a packet it does not read;
- ACKs, off:   the current pipeline, 66-byte TCP ACKs from port 1 to port 2,
               no budget on port 1: a TCP packet from a port without one;
- ACKs, on:    the same ACKs with port 1's budget on (B = 8 segments, 8
               flows whose SYNs went first: N = 8, share one segment), every
               ACK's window lowered from 29200 to 1448 with its checksum.
The cases alternate ROUNDS times and the medians are compared. Single rounds
on a shared VM move by ±10 % and more (bench_pipeline.py).

    sudo .venv/bin/python scripts/bench_pipeline_budget.py [--base REF] [--rounds N]

Needs root, BMv2, tcpreplay, p4c-bm2-ss, git and `make build`; prints why
when it cannot run.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_pipeline import IN, OUT, SECONDS, saturate, why_not, write_pcap

from p4incast import bmv2, tools
from p4incast.controller import entries
from p4incast.controller.config import EcnPolicy, Pipeline, SwitchSettings
from p4incast.controller.connection import connect
from p4incast.controller.targets import V1MODEL

REPO = Path(__file__).resolve().parent.parent
MSS = 1448
FLOWS = 8
CASES = ("before", "now", "acks-off", "acks-on")


def base_commit(ref: str | None) -> str:
    """`ref`, or the parent of the commit that added p4src/shared/rx_budget.p4."""
    if ref:
        return ref
    added = subprocess.run(
        ["git", "log", "--diff-filter=A", "--format=%H", "--", "p4src/shared/rx_budget.p4"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if not added:
        raise SystemExit("bench_pipeline_budget: no commit adds p4src/shared/rx_budget.p4")
    return f"{added[-1]}^"


def build_base(ref: str, out: Path) -> Pipeline:
    """The v1model pipeline of commit `ref`, compiled into `out`."""
    archive = subprocess.run(
        ["git", "archive", ref, "p4src"], cwd=REPO, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    p4c = str(tools.require("p4c-bm2-ss"))
    json_, p4info = out / "base.json", out / "base.p4info.txtpb"
    subprocess.run(
        [p4c, "--arch", "v1model", "--std", "p4-16", "--p4runtime-files", str(p4info)]
        + ["-o", str(json_), str(out / "p4src/v1model/main.p4")],
        check=True,
    )
    return Pipeline(p4info, json_)


def write_ack_pcaps(syns: Path, acks: Path) -> None:
    """FLOWS SYNs of the receiver behind port 1 (scale 7), then its ACKs (window
    29200 at scale 7, far above the share), 64 frames looped."""
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether
    from scapy.packet import Packet
    from scapy.utils import wrpcap

    def head() -> Packet:
        return Ether(src="00:bb:00:00:00:01", dst="00:aa:00:00:00:01") / IP(
            src="10.0.1.1", dst="10.0.2.2", tos=0b10
        )

    wrpcap(
        str(syns),
        [
            head()
            / TCP(sport=50000 + i, dport=5001, flags="S", options=[("MSS", MSS), ("WScale", 7)])
            for i in range(FLOWS)
        ],
    )
    wrpcap(
        str(acks),
        [
            head() / TCP(sport=50000 + i % FLOWS, dport=5001, flags="A", window=29200)
            for i in range(64)
        ],
    )


async def program(case: str, settings: SwitchSettings, pl: Pipeline) -> None:
    async with connect(settings, pl, push=True) as sw:
        updates = [
            +entries.route(
                prefix="10.0.2.0/24", port=2, smac="00:aa:00:00:00:02", dmac="00:bb:00:00:00:02"
            ),
            +entries.ecn_policy(port=2, policy=EcnPolicy("tail", 20), target=V1MODEL),
        ]
        if case == "acks-on":
            updates.append(+entries.rx_budget(port=1, floor_bytes=MSS, epoch_ticks=1 << 20))
        await sw.write(updates)


def measure(case: str, pl: Pipeline, pcap: Path, warmup: Path | None) -> float:
    """Packets out per wall second while tcpreplay saturates the switch."""
    sw = bmv2.Bmv2Switch(
        ports={1: IN[0], 2: OUT[0]},
        grpc_port=50083,
        thrift_port=9483,
        extra_args=["--log-level", "off"],
    )
    with sw:
        settings = SwitchSettings(address=sw.grpc_addr, thrift_port=sw.thrift_port)
        asyncio.run(program(case, settings, pl))
        pps, per_cpu = saturate(sw, pcap, warmup)
    print(f"    {case:9s} {pps:9.0f} pkt/s ({per_cpu:9.0f} per switch CPU-s)", flush=True)
    return pps


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument(
        "--base",
        help="git ref of the pipeline to compare with (default: "
        "the commit before p4src/shared/rx_budget.p4 came)",
    )
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    reason = why_not() or tools.missing_reason("p4c-bm2-ss")
    if reason is None and shutil.which("git") is None:
        reason = "needs git"
    if reason:
        print(f"bench_pipeline_budget: skipped — {reason}")
        return 0
    now = Pipeline.default()
    for a, b in (IN, OUT):
        bmv2.make_veth(a, b)
    rates: dict[str, list[float]] = {c: [] for c in CASES}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            ref = base_commit(args.base)
            base = build_base(ref, t)
            udp, syns, acks = t / "udp.pcap", t / "syns.pcap", t / "acks.pcap"
            write_pcap(udp)
            write_ack_pcaps(syns, acks)
            runs = {
                "before": (base, udp, None),
                "now": (now, udp, None),
                "acks-off": (now, acks, syns),
                "acks-on": (now, acks, syns),
            }
            for r in range(args.rounds):
                print(f"  round {r + 1}", flush=True)
                for case in CASES:
                    pl, pcap, warm = runs[case]
                    rates[case].append(measure(case, pl, pcap, warm))
    finally:
        for a, _b in (IN, OUT):
            bmv2.del_veth(a)
    med = {c: statistics.median(v) for c, v in rates.items()}
    print(
        f"BMv2 pipeline throughput, the receiver's budget (median of {args.rounds}, "
        f"{SECONDS:.0f} s each; before = {ref})"
    )
    for c in CASES:
        print(f"  {c:9s}: {med[c]:10.0f} pkt/s")
    print(f"  ratio now/before (ECT UDP, budget not read) = {med['now'] / med['before']:.3f}")
    print(f"  ratio ACKs on/off (every window lowered)    = {med['acks-on'] / med['acks-off']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
