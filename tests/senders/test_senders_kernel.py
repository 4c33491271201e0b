"""The sender conformance table in the Linux kernel (docs/algorithms.md §2).

Every scenario of tests/senders/sender_table.py runs as one real TCP flow
between network namespaces (kernel_lab.py), with the BPF senders p4i_dctcp and
p4i_newdctcp and, as the control, the kernel's own reno: the control must show
RFC 3168's and NewReno's halving exactly, or the harness is wrong. The expected
ssthresh of every congestion episode is the paper's equation over what the
sender saw when the episode began (sender_table.episodes).
"""

from __future__ import annotations

import pytest
from kernel_lab import KernelLab
from sender_table import SCENARIOS, check, random_scenarios

pytestmark = pytest.mark.root

CASES = [(sc, cc) for sc in SCENARIOS for cc in sc.ccs]


@pytest.mark.parametrize(("sc", "cc"), CASES, ids=[f"{sc.name}-{cc}" for sc, cc in CASES])
def test_sender_follows_the_paper(lab: KernelLab, sc, cc) -> None:
    trace = lab.run(cc, sc)
    episodes, errors = check(cc, sc, trace)
    for e in episodes:
        print(
            f"{sc.name} {cc}: {e.kind} cwnd0 {e.cwnd0} n {e.outstanding} m {e.marked} "
            f"ssthresh {e.observed} (paper {e.expected} ± {e.tolerance})"
        )
    assert not errors, f"{sc.name} ({sc.what}), {cc}: " + "; ".join(errors)


RANDOM = random_scenarios(seed=1, count=30)


@pytest.mark.parametrize(("sc", "cc"), RANDOM, ids=[f"{sc.name}-{cc}" for sc, cc in RANDOM])
def test_sender_follows_the_paper_anywhere(lab: KernelLab, sc, cc) -> None:
    """Marks and losses anywhere in the flow: every episode ends as its paper says."""
    trace = lab.run(cc, sc)
    _, errors = check(cc, sc, trace)
    assert not errors, f"{sc.name} ({sc.what}), {cc}: " + "; ".join(errors)
