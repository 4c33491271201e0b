"""The sender conformance table: scripted marks and losses, and the windows the
papers' equations give after them (docs/algorithms.md §2).

Every scenario scripts what the path does to the data segments of one TCP flow:
which are CE-marked and which are dropped. Both act on a segment's *first*
transmission only (a retransmission passes untouched). Segments are numbered
from 1 in sequence order. An engine (the Linux kernel with the BPF modules,
tests/senders/kernel_lab.py; the ns-3 model) runs the flow and returns a
`Trace`: the sender's state *before* each ACK it processes, plus every
congestion-state change, all read by a probe that is not the module under test.

The flows start with an initial window of 10 segments and the receiver ACKs
every segment (unless `delayed_ack`), so slow start proceeds in rounds that
double: round r carries segments 10·(2^r − 1) + 1 … 10·(2^(r+1) − 1), and round
3 (segments 71–150, n = 80) is the first window that finds cwnd = 80. The
scenarios mark the first k segments of round 3: the first ECE then comes back
on the ACK of segment 71, when exactly round 3 is outstanding, so "the window"
of every reading of the papers is the same 80 segments.

`expected` computes from the scenario and from the sender's state at the moment
congestion is signalled (cwnd₀, the data outstanding) what each paper's
equation says ssthresh must be once the reduction is complete; the equations
are written here beside their sources, never obtained by running an engine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

IW = 10  # initial window, segments (RFC 6928; Linux's TCP_INIT_CWND)
ROUND3 = range(71, 151)  # the 80 segments of slow-start round 3
INFINITE = 1 << 30  # ssthresh before any reduction (Linux TCP_INFINITE_SSTHRESH is 2^31 − 1)

# Linux congestion states (include/net/inet_connection_sock.h enum tcp_ca_state);
# the ns-3 engine maps its TcpCongState_t onto the same numbers.
OPEN, DISORDER, CWR, RECOVERY, LOSS = range(5)

CCS = ("reno", "dctcp", "newdctcp")


@dataclass(frozen=True)
class Scenario:
    name: str
    what: str
    segments: int  # data segments the flow sends
    marks: frozenset[int] = frozenset()
    drops: frozenset[int] = frozenset()
    delayed_ack: bool = False
    ccs: tuple[str, ...] = CCS
    # the congestion episodes it must cause, in order (None: any, each must match)
    kinds: tuple[str, ...] | None = ()
    reno_kinds: tuple[str, ...] | None = None  # Reno's, where RFC 3168's echo differs

    def expected_kinds(self, cc: str) -> tuple[str, ...] | None:
        return self.reno_kinds if cc == "reno" and self.reno_kinds is not None else self.kinds


def _seg(a: int, b: int) -> frozenset[int]:
    return frozenset(range(a, b + 1))


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("k0", "slow start, round 3 unmarked: no reduction", 300),
    Scenario(
        "k1", "1 of round 3's 80 segments marked (its first)", 300, _seg(71, 71), kinds=("ecn",)
    ),
    Scenario(
        "k-quarter",
        "the first 20 of round 3's 80 segments marked",
        300,
        _seg(71, 90),
        kinds=("ecn",),
    ),
    Scenario(
        "k-half", "the first 40 of round 3's 80 segments marked", 300, _seg(71, 110), kinds=("ecn",)
    ),
    Scenario("k-all", "all 80 segments of round 3 marked", 300, _seg(71, 150), kinds=("ecn",)),
    Scenario(
        "two-windows",
        "round 3's first half marked, then the first 40 segments sent after it",
        400,
        _seg(71, 110) | _seg(151, 190),
        kinds=("ecn", "ecn"),
    ),
    Scenario(
        "loss",
        "segment 71 lost, no marks: fast retransmit",
        300,
        drops=_seg(71, 71),
        kinds=("loss",),
    ),
    Scenario(
        "loss-then-marks",
        "segment 71 lost, 75–110 of the same window marked: the loss is seen first",
        300,
        _seg(75, 110),
        _seg(71, 71),
        kinds=("loss",),
        # RFC 3168's receiver echoes ECE until it sees CWR, which rides on the first
        # new segment; the retransmission of 71 arrives before it, so the ACK that
        # ends the recovery still carries ECE and starts a new window's reduction.
        reno_kinds=("loss", "ecn"),
    ),
    Scenario(
        "marks-then-loss",
        "the first 20 of round 3 marked, its segment 120 lost: one episode, one cut",
        300,
        _seg(71, 90),
        _seg(120, 120),
        kinds=("ecn+loss",),
    ),
    Scenario(
        "rto",
        "all of round 3 lost: nothing comes back, a retransmission timeout",
        300,
        drops=_seg(71, 150),
        kinds=("rto",),
    ),
    Scenario(
        "echo",
        "delayed ACKs, marks switching on and off: ECE on exactly the ACKs of CE data",
        200,
        _seg(21, 30) | _seg(41, 41) | _seg(43, 43) | _seg(60, 75),
        delayed_ack=True,
        ccs=("dctcp", "newdctcp"),
    ),
)


@dataclass(frozen=True)
class Ack:
    """The sender's state just before it processes one ACK (segments)."""

    ack: int  # segments cumulatively acknowledged by this ACK
    ece: bool
    una: int  # before this ACK: segments acknowledged
    nxt: int  # before this ACK: segments sent (SND.NXT)
    cwnd: int
    ssthresh: int  # INFINITE before any reduction
    t_us: float = 0.0


@dataclass(frozen=True)
class StateChange:
    """The sender enters congestion state `state` (set when it happens)."""

    state: int
    cwnd: int
    ssthresh: int
    una: int
    nxt: int
    t_us: float = 0.0


@dataclass
class Trace:
    acks: list[Ack]
    states: list[StateChange]
    final_cwnd: int
    final_ssthresh: int
    events: list[Ack | StateChange] = field(default_factory=list)  # both, in order


@dataclass(frozen=True)
class Episode:
    """One congestion episode: what the sender saw when it began, what it must end with."""

    kind: str  # "ecn", "loss", "rto"
    cwnd0: int
    outstanding: int  # segments outstanding at its start (n)
    marked: int  # of them CE-marked (m)
    expected: int  # ssthresh the paper's equation gives
    tolerance: int
    observed: int | None = None  # ssthresh once the episode is over


DCTCP_G = 1 / 16  # RFC 8257 §3.3 and Linux tcp_dctcp.c: g = 1/16


def reno_ssthresh(cwnd0: int) -> int:
    # RFC 5681 §3.1 eq. (4), ssthresh = max(FlightSize / 2, 2·SMSS), taken by Linux
    # (tcp_reno_ssthresh) over cwnd; RFC 3168 §6.1.2: an ECE halves "as in
    # response to a dropped packet", once per window.
    return max(cwnd0 // 2, 2)


LINUX_MIN_CWND = 2  # segments: the floor of every Linux congestion control's cut


def newdctcp_ssthresh(cwnd0: int, n: int, m: int, floor: int = LINUX_MIN_CWND) -> int:
    # Seed 004 §4.2 eq. (3)-(4): cwnd = max(cwnd / 2, A·MSS), A = the unmarked ACKs of
    # the last window of data (one per segment here, so A = n − m); never above the
    # window it cuts, never below `floor`: Linux's 2 segments (docs/algorithms.md
    # §2.2), or the 1 MSS the equation itself allows (§4.2, after eq. 4).
    return min(max(cwnd0 // 2, n - m, floor), cwnd0)


def dctcp_ssthresh(cwnd0: int, alpha: float, floor: int = LINUX_MIN_CWND) -> int:
    # Alizadeh et al. 2010 eq. (2), RFC 8257 §3.3: cwnd ← cwnd · (1 − α/2), at least
    # `floor` segments (tcp_dctcp.c dctcp_ssthresh: 2).
    return max(round(cwnd0 * (1 - alpha / 2)), floor)


def dctcp_alpha(trace: Trace, scenario: Scenario, upto: int) -> float:
    """α before ACK `upto` (index into trace.acks), RFC 8257 §3.3: α starts at 1
    (Linux's dctcp_alpha_on_init) and at the end of every observation window —
    it ends when the cumulative ACK reaches the SND.NXT recorded when it began —
    α ← (1 − g)·α + g·F, F the fraction of the window's segments CE-marked."""
    alpha = 1.0
    end = 0  # the window that is open when the connection starts ends at its first ACK
    acked = marked = 0
    for i, a in enumerate(trace.acks[: upto + 1]):
        new = range(a.una + 1, a.ack + 1)
        acked += len(new)
        marked += sum(1 for s in new if s in scenario.marks)
        if a.ack >= end and acked:
            alpha = (1 - DCTCP_G) * alpha + DCTCP_G * (marked / acked)
            end, acked, marked = a.nxt, 0, 0
        if i == upto:
            break
    return alpha


def episodes(
    cc: str, scenario: Scenario, trace: Trace, floor: int = LINUX_MIN_CWND
) -> list[Episode]:
    """Each congestion episode of the trace, with the ssthresh the paper gives
    (`floor`: the smallest window an ECN cut of DCTCP or NewDCTCP leaves).

    An episode begins when the sender leaves Open/Disorder for CWR (an ECE),
    Recovery (a loss found by the ACKs) or Loss (a retransmission timeout). It
    covers the data outstanding then (RFC 3168 §6.1.2: at most one reduction per
    window of data; RFC 6582 for loss): a loss found inside an ECN episode is the
    same episode. The observed value is the sender's ssthresh when it returns to
    Open (or at the first ACK it processes in Open with that data acknowledged).
    """
    out: list[Episode] = []
    state = OPEN
    last_ack: Ack | None = None
    cur: dict | None = None
    for ev in trace.events:
        if isinstance(ev, Ack):
            if cur is not None and state == OPEN and ev.una >= cur["nxt"]:
                out.append(
                    Episode(**{k: v for k, v in cur.items() if k != "nxt"}, observed=ev.ssthresh)
                )
                cur = None
            last_ack = ev
            continue
        new = ev.state
        if new == OPEN and cur is not None and state in (CWR, RECOVERY, LOSS):
            # Leaving a reduction: its data is acknowledged and ssthresh is final
            # (Linux sets cwnd = ssthresh before it returns to Open).
            out.append(
                Episode(**{k: v for k, v in cur.items() if k != "nxt"}, observed=ev.ssthresh)
            )
            cur = None
        elif new in (CWR, RECOVERY, LOSS) and state in (OPEN, DISORDER) and cur is None:
            kind = {CWR: "ecn", RECOVERY: "loss", LOSS: "rto"}[new]
            # The ACK being processed when the state changes (not for a timeout):
            # the data outstanding before it is the window that was signalled.
            una = last_ack.una if (new != LOSS and last_ack is not None) else ev.una
            n = ev.nxt - una
            m = sum(1 for s in range(una + 1, ev.nxt + 1) if s in scenario.marks)
            cwnd0 = ev.cwnd
            if kind != "ecn" or cc == "reno":
                # Loss: NewReno's halving for all three (RFC 6582 with RFC 5681 eq. 4;
                # RFC 8257 §3.5 for DCTCP; seed 004 §4.2: unmarked, "the sender
                # proceeds like TCP NewReno"). ECN for Reno: RFC 3168 §6.1.2.
                exp, tol = reno_ssthresh(cwnd0), 0
            elif cc == "newdctcp":
                exp, tol = newdctcp_ssthresh(cwnd0, n, m, floor), 0
            else:
                assert last_ack is not None
                # α is kept ×1024 in integers by Linux and by the BPF module: ±1 segment
                alpha = dctcp_alpha(trace, scenario, trace.acks.index(last_ack))
                exp, tol = dctcp_ssthresh(cwnd0, alpha, floor), 1
            cur = dict(
                kind=kind,
                cwnd0=cwnd0,
                outstanding=n,
                marked=m,
                expected=exp,
                tolerance=tol,
                nxt=ev.nxt,
            )
        elif new in (RECOVERY, LOSS) and cur is not None and cur["kind"] == "ecn":
            # A loss inside an ECN episode: one episode (RFC 3168 §6.1.2: one
            # reduction per window of data), whose cut is the deeper of the two:
            # NewReno's halving of cwnd0 (RFC 8257 §3.5, seed 004 §4.2).
            cur["kind"] = "ecn+loss"
            cur["expected"] = min(cur["expected"], reno_ssthresh(cur["cwnd0"]))
            cur["tolerance"] = 0
        state = new
    if cur is not None:
        out.append(
            Episode(**{k: v for k, v in cur.items() if k != "nxt"}, observed=trace.final_ssthresh)
        )
    return out


def echo_errors(scenario: Scenario, trace: Trace) -> list[str]:
    """The receiver's exact echo (RFC 8257 §3.2, Alizadeh et al. §3.1; Linux
    dctcp_ece_ack_update): every ACK carries ECE iff the segments it newly
    acknowledges were CE, no ACK acknowledges both CE and non-CE segments, and
    the segment at which the CE state flips is acknowledged at once, on its own
    (a delayed ACK would wait for the next segment)."""
    errs = []
    alone = {(a.una, a.ack) for a in trace.acks}
    for s in range(2, scenario.segments + 1):
        if (s in scenario.marks) != (s - 1 in scenario.marks) and (s - 1, s) not in alone:
            errs.append(f"segment {s} flips the CE state but is not acknowledged at once, alone")
    for a in trace.acks:
        new = range(a.una + 1, a.ack + 1)
        if not new:
            continue
        ce = {s in scenario.marks for s in new}
        if len(ce) > 1:
            errs.append(f"ACK {a.ack} covers CE and non-CE segments {new.start}..{new.stop - 1}")
        elif a.ece != ce.pop():
            errs.append(f"ACK {a.ack} (segments {new.start}..{new.stop - 1}) ece={a.ece}")
    return errs


def check(
    cc: str, scenario: Scenario, trace: Trace, floor: int = LINUX_MIN_CWND
) -> tuple[list[Episode], list[str]]:
    """The scenario's episodes and every way the trace departs from the papers
    (`floor`: the ECN cut's smallest window, as `episodes`)."""
    errs = [
        f"impossible window: cwnd {e.cwnd}, ssthresh {e.ssthresh}"
        for e in trace.events
        if e.cwnd > 2 * scenario.segments + IW or e.ssthresh > INFINITE
    ][:1]
    if scenario.name == "echo":
        return [], errs + echo_errors(scenario, trace)
    eps = episodes(cc, scenario, trace, floor)
    kinds = tuple(e.kind for e in eps)
    if scenario.kinds is not None and kinds != scenario.expected_kinds(cc):
        errs.append(f"episodes {kinds}, expected {scenario.expected_kinds(cc)}")
    for e in eps:
        if e.observed is None or abs(e.observed - e.expected) > e.tolerance:
            errs.append(
                f"{e.kind} episode (cwnd0 {e.cwnd0}, n {e.outstanding}, m {e.marked}): "
                f"ssthresh {e.observed}, paper {e.expected} ± {e.tolerance}"
            )
    if scenario.kinds == () and trace.final_ssthresh < INFINITE:
        errs.append(f"no congestion scripted, yet ssthresh {trace.final_ssthresh}")
    if scenario.kinds and "rto" in scenario.kinds:
        # RFC 5681 §3.1: after a timeout cwnd is the loss window, 1 segment.
        after = [a for a in trace.acks if a.cwnd <= 2]
        if not after or after[0].cwnd != 1:
            errs.append("no ACK found with the loss window (cwnd 1) after the timeout")
    return eps, errs


def random_scenarios(seed: int, count: int) -> list[tuple[Scenario, str]]:
    """`count` flows with marks and losses anywhere (seeded), each with a sender:
    whatever episodes they cause, each must end with the ssthresh its paper gives."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        segs = rng.choice((200, 400))
        marks: set[int] = set()
        for _ in range(rng.randint(0, 3)):
            a = rng.randint(20, segs)
            marks |= set(range(a, min(segs, a + rng.randint(1, 60)) + 1))
        drops = set(rng.sample(range(20, segs + 1), rng.randint(0, 2)))
        marks -= drops  # a segment's first transmission is either marked or lost
        cc = CCS[i % len(CCS)]
        what = f"{len(marks)} marks, losses {sorted(drops)}"
        out.append(
            (
                Scenario(
                    f"random-{seed}-{i}", what, segs, frozenset(marks), frozenset(drops), kinds=None
                ),
                cc,
            )
        )
    return out
