"""The struct_ops sender baselines: registered, selectable per socket, ECN-driven.

On the p4ia veth lab with the test CE marker (each ECT packet CE with
probability 1/32, no eraser, so the receiver echoes ECE): a p4i_dctcp or
p4i_newdctcp sender negotiates ECN (ss -ti counts delivered_ce, the CE echoed
back to it) and carries data. The kernel's reno, which halves once per marked
window (RFC 3168), is the control in the same lab: DCTCP cuts by alpha/2 with
alpha near the marked fraction, so its median cwnd stays well above reno's
(measured 94-272 against 22-28 segments, idle and with both cores busy).

NewDCTCP is not compared here: at this marking rate nearly every window of
its carries a mark, so its window seldom grows while a decision is pending
and its level sits near reno's (25-40 segments). Its cut, m of n segments per
marked window, is asserted episode by episode in tests/senders.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Iterator

import pytest
from vethlab import VethLab, lab_skip_reason

from p4incast.agent import cc

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def registered() -> Iterator[list[str]]:
    why = lab_skip_reason()
    if why is None:
        for n in cc.CC_NAMES:
            if not (cc.default_bpf_dir() / f"{n}.bpf.o").exists():
                why = f"{n}.bpf.o not built (scripts/build-agent.sh)"
    if why:
        pytest.skip(why)
    new = cc.load()
    try:
        yield new
    finally:
        if new:  # only what this test registered; others may be using theirs
            cc.unload(tuple(new))


def test_registered_under_their_names(registered: list[str]) -> None:
    have = cc.available()
    assert "p4i_dctcp" in have and "p4i_newdctcp" in have
    assert cc.load() == []  # idempotent


def cwnds(lab: VethLab, name: str, seconds: float = 4.0) -> tuple[list[int], str, float]:
    client = lab.start_client(seconds, cc=name)
    time.sleep(1.0)
    cw: list[int] = []
    text = ""
    t_end = time.monotonic() + seconds - 1.5
    while time.monotonic() < t_end:
        s = lab.ss_sample()
        if s is not None and s.bytes_acked > 1 << 20:
            cw.append(s.cwnd)
            text = s.text
        time.sleep(0.05)
    return cw, text, lab.goodput_bps(client)


def test_dctcp_and_newdctcp_negotiate_ecn_and_dctcp_cuts_in_proportion(
    registered: list[str],
) -> None:
    with VethLab() as lab:
        lab.add_marker(erase_at_receiver=False)
        lab.start_server()
        res = {n: cwnds(lab, n) for n in ("reno", "p4i_dctcp", "p4i_newdctcp")}
    for name in ("p4i_dctcp", "p4i_newdctcp"):
        cw, text, gp = res[name]
        assert name in text, f"{name} not in use: {text[:200]}"
        ce = re.search(r"delivered_ce:(\d+)", text)
        assert ce and int(ce.group(1)) > 0, f"{name}: no ECE-echoed CE delivered: {text}"
        assert gp > 0.5 * lab.rate_mbit * 1e6
    reno, dctcp = (statistics.median(res[n][0]) for n in ("reno", "p4i_dctcp"))
    assert dctcp > 2 * reno, f"p4i_dctcp median cwnd {dctcp}, reno's (halving) {reno}"
