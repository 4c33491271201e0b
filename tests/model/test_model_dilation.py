"""Time dilation: the factor from the measured bottleneck, the stretched min RTO,
and what the testbed's fixed timers stand for in datacenter time."""

from __future__ import annotations

import pytest

from p4incast.model.dilation import LINUX_DELACK_MS, Dilation, frames_per_s
from p4incast.model.wire import WIRE_FRAME_BYTES


def test_factor_is_the_datacenter_rate_over_the_measured_one() -> None:
    d = Dilation(measured_pps=2000.0, configured_pps=2000.0, base_rtt_ms=0.6)
    assert frames_per_s(1.0) == pytest.approx(1e9 / (8 * WIRE_FRAME_BYTES))
    assert d.factor == pytest.approx(81274.4 / 2000, rel=1e-4)
    # A 10 ms datacenter min RTO costs the testbed's round what it costs at 1 Gbit/s.
    assert d.rto_min_ms(10) == round(10 * d.factor) == 406
    # ... and what cannot be stretched is reported in datacenter time.
    assert d.datacenter_us(LINUX_DELACK_MS) == pytest.approx(984, abs=1)
    assert d.datacenter_us(0.6) == pytest.approx(14.8, abs=0.1)


def test_measured_rate_not_the_configured_one_sets_the_factor() -> None:
    slow = Dilation(measured_pps=1000.0, configured_pps=2000.0)
    assert slow.factor == pytest.approx(2 * Dilation(2000.0, 2000.0).factor)
    line = slow.describe(10)
    assert "drains 1000 pkt/s (set 2000)" in line and "813 ms here" in line
