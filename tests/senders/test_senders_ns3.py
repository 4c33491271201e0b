"""The ns-3 model's senders against the papers' rules (tests/senders/sender_table.py).

Every scenario of the table, for every CC it names, and the same 30 seeded flows
with marks and losses anywhere as the kernel suite (test_senders_kernel.py) run
through the simulator's senders (sim/cpp/tcp_newdctcp.h on the senders' socket,
sim/cpp/tcp_sender_socket.h) in one scripted flow (tests/senders/ns3_lab.py,
sim/cpp/sender_conformance.h); `check` must find no departure from the rules.
Skipped, with the reason, when ns-3 cannot be imported.
"""

from __future__ import annotations

import pytest
import sender_table as table  # tests/senders is on sys.path (pytest's rootdir import)

from p4incast.sim import native

CASES = [pytest.param(sc, cc, id=f"{sc.name}-{cc}") for sc in table.SCENARIOS for cc in sc.ccs]
RANDOM = table.random_scenarios(seed=1, count=30)


@pytest.fixture(scope="module")
def lab():
    ok, why = native.available()
    if not ok:
        pytest.skip(f"simulator: {why}")
    import ns3_lab

    try:
        ns3_lab._lib()
    except Exception as exc:  # ns-3 present but unusable here
        pytest.skip(f"simulator: ns-3 failed to load: {type(exc).__name__}: {exc}")
    return ns3_lab


@pytest.mark.parametrize(("scenario", "cc"), CASES)
def test_sender_follows_the_papers(lab, scenario: table.Scenario, cc: str) -> None:
    trace = lab.run(cc, scenario)
    episodes, errors = table.check(cc, scenario, trace)
    print(f"{scenario.name} / {cc}: {scenario.what}")
    for e in episodes:
        print(
            f"  {e.kind}: cwnd0 {e.cwnd0}, n {e.outstanding}, m {e.marked}: "
            f"expected {e.expected} ± {e.tolerance}, observed {e.observed}"
        )
    print(f"  final cwnd {trace.final_cwnd}, ssthresh {trace.final_ssthresh}")
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize(("scenario", "cc"), RANDOM, ids=[f"{sc.name}-{cc}" for sc, cc in RANDOM])
def test_sender_follows_the_papers_anywhere(lab, scenario: table.Scenario, cc: str) -> None:
    """Marks and losses anywhere in the flow: every episode ends as its paper says."""
    trace = lab.run(cc, scenario)
    _, errors = table.check(cc, scenario, trace)
    assert not errors, f"{scenario.name} ({scenario.what}), {cc}: " + "; ".join(errors)


# Every segment of a 60-segment flow CE-marked, one ACK per segment: each window
# the sender sends is fully marked (m = n), so NewDCTCP's A = n − m = 0 and eq. (3)
# gives max(cwnd0/2, 0) at every cut (seed 004 §4.2). By hand, from IW 10: 10 → 5
# → 2 → then ⌊2/2⌋ = 1 MSS, which eq. (3) allows (§4.2, the sentences after eq. 4:
# below one packet only RFC 3168's timer rule is left) and a 2-segment floor
# (Linux's) keeps at 2; the next cuts stay at the floor. DCTCP with α = 1 (it
# starts there and every window is fully marked) halves the same way, 10 → 5 → 3
# → 2 → 1 or 2 (RFC 8257 §3.3, eq. 2).
ALL_MARKED = table.Scenario(
    "all-marked",
    "every segment marked: each window cut again",
    60,
    frozenset(range(1, 61)),
    kinds=None,
)
NEWDCTCP_CUTS = {1: [5, 2, 1, 1], 2: [5, 2, 2, 2]}  # ECN-cut floor -> the first four cuts


@pytest.mark.parametrize("floor", sorted(NEWDCTCP_CUTS))
def test_newdctcp_window_reaches_the_floor(lab, floor: int) -> None:
    """transport.min_cwnd_segs = 1 lets NewDCTCP's cut reach 1 MSS as eq. (3) does;
    the default keeps Linux's 2 segments."""
    trace = lab.run("newdctcp", ALL_MARKED, min_cwnd_segs=floor)
    eps, errors = table.check("newdctcp", ALL_MARKED, trace, floor)
    assert not errors, "; ".join(errors)
    assert [e.observed for e in eps[:4]] == NEWDCTCP_CUTS[floor]
    assert min(a.cwnd for a in trace.acks) == floor


@pytest.mark.parametrize("floor", sorted(NEWDCTCP_CUTS))
def test_dctcp_window_reaches_the_floor(lab, floor: int) -> None:
    """The same floor for DCTCP's cut (dctcp_ssthresh's 2 segments, or 1)."""
    trace = lab.run("dctcp", ALL_MARKED, min_cwnd_segs=floor)
    _, errors = table.check("dctcp", ALL_MARKED, trace, floor)
    assert not errors, "; ".join(errors)
    assert min(a.cwnd for a in trace.acks) == floor


def test_the_default_floor_is_linux_two_segments() -> None:
    """The model's default is the floor Linux's congestion controls keep."""
    from p4incast.model.scheme import SENDER_MIN_CWND_SEGS

    assert SENDER_MIN_CWND_SEGS == table.LINUX_MIN_CWND
