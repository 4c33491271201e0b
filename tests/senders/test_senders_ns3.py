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
