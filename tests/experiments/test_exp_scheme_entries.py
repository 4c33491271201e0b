"""Each scheme of the shipped experiments becomes exactly the ecn_policy entry the
switch must get (BMv2, K in packets): mark-tail -> mode 1, mark-front -> mode 2,
off -> no entry (the table's default, OFF)."""

from __future__ import annotations

from pathlib import Path

import finsy as fy
import pytest

from p4incast.controller.reconcile import desired_ecn
from p4incast.controller.targets import V1MODEL
from p4incast.engines.bmv2 import ecn_policy
from p4incast.experiments.config import load_all

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = sorted((REPO / "experiments").glob("*.yaml"))
PORT = 1  # the receiver's port on the ToR


def expected(ecn: str, k: int) -> list[fy.P4TableEntry]:
    """Written out by hand from p4src/shared/defines.p4 (ECN_MODE_MARK_TAIL = 1, _FRONT = 2)."""
    if ecn == "off":
        return []
    mode = {"tail": 1, "front": 2}[ecn]
    return [
        fy.P4TableEntry(
            "ecn_policy",
            match=fy.Match({"port": PORT}),
            action=fy.Action("set_ecn_policy", mode=mode, k=k, drop_k=0),
        )
    ]


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.name)
def test_every_scheme_maps_to_its_exact_entry(path: Path) -> None:
    schemes = {s.name: s for exp in load_all(path) for s in exp.schemes}
    assert schemes
    for s in schemes.values():
        got = desired_ecn(PORT, ecn_policy(s), V1MODEL)
        assert got == expected(s.ecn, s.k), s.name
