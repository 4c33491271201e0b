"""The ns-2 engine: seed 003's own simulator as a reference for the incast star.

Seed 003 validated its model on ns-2 (§V ¶1). This engine runs a point of the
incast star with plain TCP on Debian's ns-2 2.35 (`ns`): it writes a Tcl script
from ns-2's documented classes, runs it, and parses what the script prints
into the same run record as the ns-3 model's (experiments/SCHEMA.md), so the
same preset and report show both (reports/ns2_twin.py compares them).

The script, for a Point:
- one switch, one client, N servers; every link a duplex-link of
  topology.link_gbps and topology.delay_us with a DropTail queue; the
  switch's port to the client holds `queue_packets` packets (the buffer over
  ns-2's packet of transport.mss_bytes + 40 header bytes: ns-2 links carry no
  framing), every other queue is large enough never to drop;
- each server's response is an Application/FTP on an Agent/TCP/Newreno (or
  Agent/TCP/Sack1 with transport.sack) to an Agent/TCPSink (per-packet ACKs;
  TCPSink/DelAck with transport.delayed_ack), with ns-2's defaults except
  what the point sets: packetSize_ (mss_bytes), windowInit_ (init_cwnd),
  window_ (adv_window_segs; 0 = our 256 KiB receive buffer in segments),
  minrto_ (rto_min_ms), rtxcur_init_ (syn_rto_ms: ns-2's syn_ models the SYN,
  whose timeout that is);
- rounds as seed 003 §V runs its requests: every server of a round starts
  its SRU over a new connection (a fresh agent pair) after a think time
  uniform in [0, app.jitter_us] (§V ¶1: d ~ U[0, d_max]), and the next round
  starts when the last SRU of this one is acknowledged (a barrier);
- an agent's `done` (ns-2 calls it once its data is all acknowledged) prints
  the flow's end and its counters; a queue monitor on the bottleneck prints
  its drops and departures at the end.

A round completes when its last segment reaches the client: the last `done`
less the ACK's path back (two links' delay and a 40-byte ACK's serialisation;
the reverse direction never queues). Only what the star with plain TCP needs
is supported; `check` names anything else.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

from p4incast.model.scheme import Point, RunResult

from .base import IncastEngine, register
from .sim import SimEngine

NS = "ns"  # Debian's ns2 package installs ns-2 2.35 as /usr/bin/ns
HOW_TO_GET = "install Debian's ns2 package (make setup, or apt-get install ns2)"
HEADER_BYTES = 40  # ns-2's TCP/IP header: a data packet is packetSize_ + 40 bytes
ACK_BYTES = 40  # Agent/TCPSink packetSize_
NO_CAP_BYTES = 256 * 1024  # "no cap": the ns-3 model's receive buffer (sim/cpp/scenario.h)
SLACK_PACKETS = 100_000  # a queue that never drops (server links, the client's uplink)
BOTTLENECK_PORT = "1"  # the run record's name of the switch port to the client (as sim's)
TIMEOUT_S = 600.0  # wall-clock limit of one `ns` run
# Simulated time a round may take before the run is called stuck: a flow may back
# off to ns-2's maxrto_ (60 s) several times, and idle simulated time costs ns-2
# nothing (seed 003's plain TCP into 32 KB takes about 570 simulated s a round at
# N = 500 and 1110 at N = 800, growing by about 180 s per 100 servers).
STUCK_ROUND_S = 3600.0


def ns_binary() -> str | None:
    return shutil.which(NS)


def queue_packets(point: Point) -> int:
    """The bottleneck's DropTail limit: the buffer's bytes over ns-2's packet size."""
    return max(
        1, int(point.topology.port_buffer_bytes // (point.transport.mss_bytes + HEADER_BYTES))
    )


def ack_path_s(point: Point) -> float:
    """An ACK's time from the client to a server: two links' delay and serialisation."""
    t = point.topology
    return 2 * (t.delay_us * 1e-6 + 8 * ACK_BYTES / (t.link_gbps * 1e9))


def framing_limit_bps(point: Point) -> float:
    """The most goodput ns-2's bottleneck can carry: payload over packet, at link rate."""
    mss = point.transport.mss_bytes
    return point.topology.link_gbps * 1e9 * mss / (mss + HEADER_BYTES)


def think_times(point: Point) -> list[list[float]]:
    """Each round's server think times, s (uniform in [0, jitter_us]), seeded by the
    point's seed and repeat as the ns-3 model's are (not the same draws)."""
    rng = random.Random(f"ns2:{point.seed}:{point.repeat}")
    j = point.app.jitter_us * 1e-6
    return [[rng.uniform(0, j) for _ in range(point.n)] for _ in range(point.app.rounds)]


def script(point: Point) -> str:
    """The Tcl script that runs `point` on ns-2 and prints FLOW / QUEUE / END lines."""
    t, app, tr = point.topology, point.app, point.transport
    rate = f"{t.link_gbps * 1e3:g}Mb"
    delay = f"{t.delay_us:g}us"
    window = tr.adv_window_segs or NO_CAP_BYTES // tr.mss_bytes
    agent = "Agent/TCP/Sack1" if tr.sack else "Agent/TCP/Newreno"
    sink = "Agent/TCPSink" + ("/Sack1" if tr.sack else "") + ("/DelAck" if tr.delayed_ack else "")
    rounds = app.rounds
    size = app.bytes_per_server(point.n)
    stuck_s = rounds * STUCK_ROUND_S
    thinks = " ".join("{" + " ".join(f"{d:.9f}" for d in r) + "}" for r in think_times(point))
    delack = (
        f"Agent/TCPSink/DelAck set interval_ {tr.delack_ms / 1000:g}\n" if tr.delayed_ack else ""
    )
    return f"""# p4-incast: one point of the incast star on ns-2 (engines/ns2.py)
set ns [new Simulator]
set N {point.n}
set ROUNDS {rounds}
set SIZE {size}
set THINK [list {thinks}]
Agent/TCP set packetSize_ {tr.mss_bytes}
Agent/TCP set windowInit_ {tr.init_cwnd}
Agent/TCP set window_ {window}
Agent/TCP set minrto_ {t.rto_min_ms / 1000:g}
Agent/TCP set rtxcur_init_ {tr.syn_rto_ms / 1000:g}
{delack}set sw [$ns node]
set cl [$ns node]
$ns duplex-link $sw $cl {rate} {delay} DropTail
$ns queue-limit $sw $cl {queue_packets(point)}
$ns queue-limit $cl $sw {SLACK_PACKETS}
set qm [$ns monitor-queue $sw $cl [open /dev/null w]]
for {{set i 0}} {{$i < $N}} {{incr i}} {{
    set s($i) [$ns node]
    $ns duplex-link $s($i) $sw {rate} {delay} DropTail
    $ns queue-limit $s($i) $sw {SLACK_PACKETS}
    $ns queue-limit $sw $s($i) {SLACK_PACKETS}
}}
set ndone 0
proc start_round {{r}} {{
    global ns N s cl ndone SIZE THINK
    set ndone 0
    set now [$ns now]
    puts "ROUND $r $now"
    for {{set i 0}} {{$i < $N}} {{incr i}} {{
        set tcp [new {agent}]
        set sink [new {sink}]
        $ns attach-agent $s($i) $tcp
        $ns attach-agent $cl $sink
        $ns connect $tcp $sink
        set ftp [new Application/FTP]
        $ftp attach-agent $tcp
        $tcp proc done {{}} "flow_done $r $i $tcp"
        $ns at [expr {{$now + [lindex [lindex $THINK $r] $i]}}] "$ftp send $SIZE"
    }}
}}
proc flow_done {{r i tcp}} {{
    global ns N ndone ROUNDS
    puts "FLOW $r $i [$ns now] [$tcp set nrexmit_] [$tcp set nrexmitpack_]"
    incr ndone
    if {{$ndone == $N}} {{
        if {{$r + 1 < $ROUNDS}} {{ start_round [expr {{$r + 1}}] }} else {{ finish 0 }}
    }}
}}
proc finish {{code}} {{
    global ns qm
    puts "QUEUE [$qm set pdrops_] [$qm set pdepartures_] [$qm set parrivals_]"
    puts "END [$ns now] $code"
    exit 0
}}
$ns at 0.0 "start_round 0"
$ns at {stuck_s:g} "finish 1"
$ns run
"""


def parse(point: Point, text: str, out: RunResult) -> None:
    """The FLOW / QUEUE / END lines of a run into `out` (rounds, switch, status)."""
    starts: dict[int, float] = {}
    flows: dict[int, list[tuple[float, int, int]]] = {}
    queue: tuple[int, int, int] | None = None
    stuck = True
    for line in text.splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] == "ROUND":
            starts[int(f[1])] = float(f[2])
        elif f[0] == "FLOW":
            flows.setdefault(int(f[1]), []).append((float(f[3]), int(f[4]), int(f[5])))
        elif f[0] == "QUEUE":
            queue = (int(f[1]), int(f[2]), int(f[3]))
        elif f[0] == "END":
            stuck = f[2] != "0"
    size = point.app.bytes_per_server(point.n)
    back = ack_path_s(point)
    rounds = []
    for r in sorted(starts):
        done = flows.get(r, [])
        if len(done) < point.n:
            break
        t0 = starts[r]
        fct = [max(0.0, d - back - t0) for d, _, _ in done]
        comp = max(fct)
        timeouts = sum(to for _, to, _ in done)
        nbytes = size * point.n
        rounds.append(
            {
                "round": r,
                "completion_s": comp,
                "bytes": nbytes,
                "goodput_bps": 8 * nbytes / comp if comp > 0 else 0.0,
                "fct_s": fct,
                "timeouts": timeouts,
                "retrans": sum(rx for _, _, rx in done),
                "rto": timeouts > 0,
            }
        )
    out.rounds = rounds
    drops, departures, arrivals = queue or (0, 0, 0)
    out.switch = {
        "bottleneck_port": BOTTLENECK_PORT,
        "ports": {
            BOTTLENECK_PORT: {
                "marked": 0,
                "ect": 0,
                "ce_in": 0,
                "ecn_drop": 0,
                "queue_drops": drops,
                "egress": departures,
                "not_ect": arrivals,
                "hist": {},
            }
        },
    }
    out.extra["ns2"] = {"queue_packets": queue_packets(point), "ack_path_s": back}
    if stuck or len(rounds) < point.app.rounds:
        out.status = "failed"
        out.error = (
            f"ns-2: {len(rounds)} of {point.app.rounds} rounds completed "
            "before the run's time limit"
        )
    else:
        out.status = "ok"


class Ns2Engine(IncastEngine):
    name: ClassVar[str] = "ns2"
    parallel: ClassVar[bool] = True
    auto: ClassVar[bool] = False  # a reference for seed 003's star, never `engine: auto`'s pick
    # the N the ns-3 model runs, so that the two engines compare the same points
    max_senders: ClassVar[int] = SimEngine.max_senders

    def describe(self) -> str:
        return "ns2 (ns-2 2.35, seed 003's simulator)"

    def unavailable(self) -> str | None:
        if ns_binary() is None:
            return f"the ns-2 engine cannot run (`{NS}` not found: {HOW_TO_GET})"
        return None

    def check(self, point: Point) -> list[str]:
        """What the script cannot express: only plain TCP on the incast star."""
        problems = point.problems("sim")
        s, t, app = point.scheme, point.topology, point.app
        plain = s.ecn == "off" and s.cc == "reno" and s.agent == "off"
        if not plain or s.batching or s.rotate or s.switch_budget:
            problems.append(
                f"scheme {s.name}: the ns-2 engine runs plain TCP only (ecn off, cc reno, "
                "no agent, no batching, no budget in the switch)"
            )
        if t.kind != "incast_star" or t.background or t.shared_buffer_bytes:
            problems.append(
                "topology: the ns-2 engine runs the incast star only (no leaf_spine, "
                "background flow or shared buffer)"
            )
        if not app.per_round_connections:
            problems.append(
                "app.connections: the ns-2 engine opens a connection per round (per-round); "
                "persistent connections are not modelled there"
            )
        if point.n > self.max_senders:
            problems.append(f"senders: {point.n} above {self.max_senders}, the ns-2 engine's limit")
        return problems

    def worker_init(self) -> None:
        """Nothing to prepare: each point is one `ns` process."""

    def run(self, point: Point, log_dir: Path) -> RunResult:
        """One point on ns-2; never raises (a failure is a failed RunResult)."""
        t0 = time.monotonic()
        out = RunResult(point.scheme.name, point.n, point.repeat, self.name)
        errs = self.check(point)
        ns = ns_binary()
        if errs or ns is None:
            out.error = "; ".join(errs) or f"`{NS}` not found: {HOW_TO_GET}"
            out.wall_s = time.monotonic() - t0
            return out
        try:
            with tempfile.TemporaryDirectory(prefix="p4incast-ns2-") as tmp:
                tcl = Path(tmp) / "point.tcl"
                tcl.write_text(script(point))
                proc = subprocess.run(
                    [ns, str(tcl)],
                    capture_output=True,
                    text=True,
                    timeout=TIMEOUT_S,
                    cwd=tmp,
                    check=False,
                )
            parse(point, proc.stdout, out)
            if proc.returncode != 0:
                out.status = "failed"
                out.error = f"ns exited {proc.returncode}: {proc.stderr.strip()[-400:]}"
        except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
            out.status = "failed"
            out.error = f"{type(exc).__name__}: {exc}"
        out.wall_s = time.monotonic() - t0
        return out


ENGINE = register(Ns2Engine())


def record_of(point: Point) -> dict[str, Any]:
    """One point on ns-2, as its run record (tests and the twin use it)."""
    return ENGINE.run(point, Path(tempfile.gettempdir())).record()
