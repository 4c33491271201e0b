"""One cut, the receiver's: under a receiver policy a stock sender never reduces on CE.

docs/algorithms.md §3.7. RCC's sender "uses rwnd instead of its congestion
window", whose window "will not decrease" on marks [RCC §4]; NewDCTCP-rx's rule
is NewDCTCP's one reduction, taken at the receiver. So the host agent clears ECE
on the ACKs of the flows its policy controls, and a stock Reno sender — which
would halve on the first ECE of a window (RFC 3168 §6.1.2) — keeps its
congestion window. The flow runs in the Linux kernel (kernel_lab.py) with the
router CE-marking segments 71–90 and 200–210; the same flow without the agent,
or with the agent told to keep the sender's ECN (`sender_ecn`), must cut.
"""

from __future__ import annotations

import pytest
from kernel_lab import KernelLab
from sender_table import CWR, INFINITE, Scenario

from p4incast.model.scheme import RX_CUT_AGENTS

pytestmark = pytest.mark.root

MARKED = Scenario(
    "rx-cut",
    "segments 71-90 and 200-210 CE-marked",
    300,
    frozenset(range(71, 91)) | frozenset(range(200, 211)),
)
# what each policy needs to run on a 10 Gbit/s veth path with one flow
POLICY_FLAGS = {
    "newdctcp-rx": (),
    "ictcp": ("--capacity-mbps", "10000"),
    "rcc": (),
    "newdctcp-budget": ("--budget-bytes", str(200 * 1448)),
}


def cuts(trace) -> list[str]:
    """Every sign that the sender reduced for congestion, one line each."""
    out = [f"ACK {a.ack} reached the sender with ECE" for a in trace.acks if a.ece]
    out += [f"sender entered CWR at SND.UNA {s.una}" for s in trace.states if s.state == CWR]
    if trace.final_ssthresh != INFINITE:
        out.append(f"ssthresh ended at {trace.final_ssthresh}, not infinite")
    return out


def test_policies_cover_every_receiver_rule() -> None:
    assert set(POLICY_FLAGS) == set(RX_CUT_AGENTS)


@pytest.mark.parametrize(
    ("policy", "rotate"),
    [(p, False) for p in RX_CUT_AGENTS] + [("newdctcp-budget", True)],
    ids=[*RX_CUT_AGENTS, "newdctcp-budget-rotate"],
)
def test_stock_reno_never_cuts_under_the_policy(lab: KernelLab, policy: str, rotate: bool) -> None:
    flags = POLICY_FLAGS[policy] + (("--rotate", "1") if rotate else ())
    with lab.receiver_agent(policy, *flags) as agent:
        trace = lab.run("reno", MARKED)
    print(policy, rotate, {k: agent["stats"][k] for k in ("ece_cleared", "rewrites", "tx_acks")})
    assert agent["stats"]["ece_cleared"] > 0, "the receiver never echoed a CE: nothing was tested"
    assert cuts(trace) == []


def test_stock_reno_cuts_without_the_agent(lab: KernelLab) -> None:
    """The control: the same marks reach the sender as ECE and Reno halves."""
    problems = cuts(lab.run("reno", MARKED))
    assert any("ECE" in p for p in problems)
    assert any("CWR" in p for p in problems)


def test_sender_ecn_ablation_keeps_the_senders_cut(lab: KernelLab) -> None:
    with lab.receiver_agent("newdctcp-rx", "--sender-ecn", "1") as agent:
        trace = lab.run("reno", MARKED)
    assert agent["stats"]["ece_cleared"] == 0
    problems = cuts(trace)
    assert any("CWR" in p for p in problems), problems
