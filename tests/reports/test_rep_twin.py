"""The simulator twin of a testbed run (reports/twin.py): the model gets the
testbed's measured rate, queue in packets, stretched min RTO, Linux's delayed
ACK, and a link delay that makes its unloaded RTT of a full frame the testbed's."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4incast.experiments.config import load_all
from p4incast.model.dilation import Dilation
from p4incast.model.scheme import base_rtt_s
from p4incast.model.wire import WIRE_FRAME_BYTES
from p4incast.reports.twin import compare, sim_twin

TWIN = Path(__file__).resolve().parents[2] / "experiments" / "twin.yaml"


def test_sim_twin_takes_the_testbeds_measured_settings() -> None:
    (exp,) = load_all(TWIN)
    dil = Dilation(measured_pps=1990.0, configured_pps=2000.0, base_rtt_ms=0.6)
    twin = sim_twin(exp, dil)
    t = twin.topology
    assert twin.engine == "sim" and twin.schemes == exp.schemes and twin.app == exp.app
    assert t.link_gbps * 1e9 == pytest.approx(1990.0 * WIRE_FRAME_BYTES * 8)
    # the model's buffer holds exactly the testbed's queue of full 1514-byte frames
    # (14-byte Ethernet header + a 1500-byte IP packet), no more, no fewer
    assert t.buffer_bytes // 1514 == exp.topology.queue_pkts == 64
    assert t.buffer_bytes % 1514 == 0
    assert t.rto_min_ms == dil.rto_min_ms(exp.topology.rto_min_ms) > 400
    assert twin.transport.delack_ms == 40
    # The model's unloaded RTT equals ping + a full frame at the bottleneck and host link.
    frame = 8 * WIRE_FRAME_BYTES
    want = 0.6e-3 + frame / (t.link_gbps * 1e9) + frame / (exp.topology.host_mbps * 1e6)
    assert base_rtt_s(t) == pytest.approx(want, rel=1e-6)


def test_compare_flags_non_overlapping_intervals() -> None:
    def row(scheme: str, gp: float, lo: float, hi: float) -> dict:
        return {
            "scheme": scheme,
            "n": 8,
            "goodput_mbps": gp,
            "goodput_mbps_ci_lo": lo,
            "goodput_mbps_ci_hi": hi,
            "goodput_mbps_ci_n": 5,
            "goodput_mbps_ci_method": "batch",
            "rto_round_ratio": 0.0,
            "qdepth_p95": 20,
        }

    rows = compare(
        [row("a", 20.0, 19.0, 21.0), row("b", 20.0, 19.0, 21.0)],
        [row("a", 20.5, 20.0, 21.0), row("b", 23.0, 22.5, 23.5)],
    )
    assert [r["goodput_mbps_agree"] for r in rows] == [True, False]
    assert rows[1]["goodput_mbps_diff"] == pytest.approx(3.0)
    assert all(r["qdepth_p95_agree"] for r in rows)
