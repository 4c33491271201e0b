"""The shared marking decision, compiled for BMv2, against the rule it implements.

p4src/shared/ecn_decision.p4 writes "depth >= K" as a saturating subtraction
(K |-| depth == 0) so that Tofino 1 can evaluate it; this test pins that the
BMv2 build still decides exactly as the rule says (docs/algorithms.md §1), at and
around every threshold and at the bit<19> extremes. It runs the decision on
simple_switch with pcap files in and out (no interfaces, no root): inputs
ride in a probe header, the verdict comes back in the same header.
"""

from __future__ import annotations

import itertools
import os
import random
import struct
import subprocess
import time
from pathlib import Path

import pytest

from p4incast import tools
from p4incast.experiments.ray_local import free_port

REPO = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).with_name("ecn_decision_harness.p4")
QMAX = (1 << 19) - 1
OFF, TAIL, FRONT = 0, 1, 2
NOT_ECT, ECT1, ECT0, CE = 0, 1, 2, 3

pytestmark = pytest.mark.bmv2


def reference(mode: int, k: int, drop_k: int, enq: int, deq: int, ecn: int) -> tuple:
    """(ecn_out, ect, ce_in, marked, not_ect_over_k, drop) as docs/algorithms.md §1 states it."""
    depth = deq if mode == FRONT else enq
    over_k = mode in (TAIL, FRONT) and depth >= k
    if ecn == CE:
        return (CE, 0, 1, 0, 0, 0)
    if ecn == NOT_ECT:
        return (NOT_ECT, 0, 0, 0, int(over_k), int(drop_k != 0 and enq >= drop_k))
    return (CE if over_k else ecn, 1, 0, int(over_k), 0, 0)


def pack(mode: int, k: int, drop_k: int, enq: int, deq: int, ecn: int, *, ipv6: bool) -> bytes:
    return (
        struct.pack("!B", mode)
        + b"".join(v.to_bytes(3, "big") for v in (k, drop_k, enq, deq))
        + bytes([ecn, 0, 0x20 if ipv6 else 0])
    )


def unpack(pkt: bytes) -> tuple[tuple, tuple]:
    mode = pkt[0] & 0x3
    k, drop_k, enq, deq = (int.from_bytes(pkt[1 + 3 * i : 4 + 3 * i], "big") for i in range(4))
    ecn_in, ecn_out, flags = pkt[13] & 0x3, pkt[14] & 0x3, pkt[15]
    assert flags & 0xC0 == 0, "meta.drop and the verdict's drop flag disagree"
    bits = tuple((flags >> s) & 1 for s in (4, 3, 2, 1, 0))  # ect ce_in marked not_ect drop
    return (mode, k, drop_k, enq, deq, ecn_in), (ecn_out, *bits)


def cases() -> list[tuple[int, int, int, int, int, int]]:
    out = set()
    for k in (1, 2, 20, 1250, QMAX):
        depths = sorted({0, k - 1, k, k + 1, QMAX} & set(range(QMAX + 1)))
        for mode, ecn, enq, deq, drop_k in itertools.product(
            (OFF, TAIL, FRONT, 3), (NOT_ECT, ECT1, ECT0, CE), depths, depths, (0, k, QMAX)
        ):
            out.add((mode, k, drop_k, enq, deq, ecn))
    rng = random.Random(20261122)
    for _ in range(500):
        out.add(
            (
                rng.randrange(4),
                rng.randrange(1, QMAX + 1),
                rng.choice((0, rng.randrange(QMAX + 1))),
                rng.randrange(QMAX + 1),
                rng.randrange(QMAX + 1),
                rng.randrange(4),
            )
        )
    return sorted(out)


def write_pcap(path: Path, packets: list[bytes]) -> None:
    with path.open("wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for p in packets:
            f.write(struct.pack("<IIII", 0, 0, len(p), len(p)) + p)


def read_pcap(path: Path) -> list[bytes]:
    data = path.read_bytes() if path.exists() else b""
    out, off = [], 24
    while off + 16 <= len(data):
        incl = struct.unpack_from("<IIII", data, off)[2]
        if off + 16 + incl > len(data):
            break
        out.append(data[off + 16 : off + 16 + incl])
        off += 16 + incl
    return out


def run_probes(sswitch: Path, workdir: Path, program: Path, probes: list) -> list[bytes]:
    """Run simple_switch on pcap files: probes in on port 0, verdicts out on port 1."""
    workdir.mkdir()
    # Every other probe runs on an IPv6 header: both marking actions are covered.
    write_pcap(workdir / "p0_in.pcap", [pack(*c, ipv6=i % 2 == 1) for i, c in probes])
    write_pcap(workdir / "p1_in.pcap", [])
    proc = subprocess.Popen(
        [
            str(sswitch),
            "--use-files", "0",
            "-i", f"0@{workdir}/p0",
            "-i", f"1@{workdir}/p1",
            "--thrift-port", str(free_port()),
            "--device-id", str(random.randrange(1000, 60000)),
            "--notifications-addr", f"ipc://{workdir}/notifications.ipc",
            str(program),
        ],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        last, since = -1, time.monotonic()
        while time.monotonic() < deadline and proc.poll() is None:
            n = len(read_pcap(workdir / "p1_out.pcap"))
            if n >= len(probes) or (n == last and time.monotonic() - since > 5):
                break  # all back, or nothing new for 5 s
            if n != last:
                last, since = n, time.monotonic()
            time.sleep(0.5)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return read_pcap(workdir / "p1_out.pcap")


def test_shared_decision_on_bmv2_matches_the_rule(tmp_path: Path) -> None:
    reason = tools.missing_reason("p4c-bm2-ss", "simple_switch_grpc")
    if reason:
        pytest.skip(reason)
    sswitch = tools.require("simple_switch_grpc").with_name("simple_switch")
    if not os.access(sswitch, os.X_OK):
        pytest.skip(f"simple_switch not found next to {sswitch.parent}/simple_switch_grpc")
    subprocess.run(
        [str(tools.require("p4c-bm2-ss")), "--std", "p4-16", "-o", str(tmp_path / "h.json"),
         str(HARNESS)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    inputs = cases()
    # simple_switch reads the input pcap as fast as it can and its queue can
    # overflow on a loaded machine: probes that did not come back are sent
    # again (each probe carries its own inputs, so order does not matter).
    outputs: list[bytes] = []
    missing = list(enumerate(inputs))
    for attempt in range(3):
        got = run_probes(sswitch, tmp_path / f"try{attempt}", tmp_path / "h.json", missing)
        outputs += got
        back = {unpack(p)[0] for p in got}
        missing = [(i, c) for i, c in missing if c not in back]
        if not missing:
            break
    assert not missing, f"{len(missing)} of {len(inputs)} probes never came back: {missing[:3]}"
    seen = []
    wrong = []
    for pkt in outputs:
        given, verdict = unpack(pkt)
        seen.append(given)
        if verdict != reference(*given):
            wrong.append((given, verdict, reference(*given)))
    assert sorted(set(seen)) == inputs
    assert not wrong, f"{len(wrong)} wrong verdicts, first: {wrong[:5]}"
    # The grid really exercises both sides of every threshold.
    verdicts = [reference(*c) for c in inputs]
    assert any(v[3] for v in verdicts) and any(v[1] and not v[3] for v in verdicts)
    assert any(v[5] for v in verdicts) and any(v[4] for v in verdicts)
