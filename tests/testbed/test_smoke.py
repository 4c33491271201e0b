"""Smoke test of the Mininet + BMv2 testbed: N = 4 senders, 3 rounds, mark-front."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4incast.controller.config import EcnPolicy
from p4incast.experiments import engines


@pytest.mark.bmv2
@pytest.mark.root
@pytest.mark.skipif(engines.bmv2_unavailable() is not None, reason=engines.bmv2_unavailable() or "")
def test_incast_star_smoke(tmp_path: Path) -> None:
    from p4incast.topologies.incast import LinkShape
    from p4incast.topologies.testbed import TestbedRun, run

    spec = TestbedRun(
        n=4,
        rounds=3,
        sru_bytes=32 * 1024,
        ecn=EcnPolicy("front", 10),
        shape=LinkShape(queue_pkts=64, queue_rate_pps=2000),
    )
    res = run(spec, tmp_path)
    assert [r["round"] for r in res.rounds] == [0, 1, 2]
    for r in res.rounds:
        assert r["bytes"] == 4 * 32 * 1024
        assert r["goodput_bps"] > 0 and len(r["fct_s"]) == 4
    tor_port = res.switch["ports"]["1"]  # receiver-facing port
    assert tor_port["egress"] > 4 * 32 * 1024 // 1500  # data packets went through the queue
    assert tor_port["depth"]["packets"] == tor_port["egress"]
    assert res.base_rtt_ms is not None and res.base_rtt_ms > 0
