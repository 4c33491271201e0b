"""The struct_ops sender baselines: registered, selectable per socket, ECN-driven.

On the p4ia veth lab with the test CE marker (1/32 of packets, no eraser, so
the receiver echoes ECE): a p4i_dctcp or p4i_newdctcp sender negotiates ECN
(ss -ti counts delivered_ce, the CE echoed back to it), carries data, and
cuts its window in proportion to the marks instead of halving it, so its
median cwnd stays above cubic's under the same marks.
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


def test_dctcp_and_newdctcp_react_to_marks_proportionally(registered: list[str]) -> None:
    with VethLab() as lab:
        lab.add_marker(erase_at_receiver=False)
        lab.start_server()
        res = {n: cwnds(lab, n) for n in ("cubic", "p4i_dctcp", "p4i_newdctcp")}
    for name in ("p4i_dctcp", "p4i_newdctcp"):
        cw, text, gp = res[name]
        assert name in text, f"{name} not in use: {text[:200]}"
        ce = re.search(r"delivered_ce:(\d+)", text)
        assert ce and int(ce.group(1)) > 0, f"{name}: no ECE-echoed CE delivered: {text}"
        assert gp > 0.5 * lab.rate_mbit * 1e6
        assert statistics.median(cw) > statistics.median(res["cubic"][0]), (
            f"{name} median cwnd {statistics.median(cw)} vs cubic "
            f"{statistics.median(res['cubic'][0])}"
        )
