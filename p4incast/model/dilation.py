"""Dilated time: how the BMv2 testbed stands for a 1 Gbit/s datacenter.

BMv2 forwards thousands of packets per second, not the 81 k full frames per
second of a 1 Gbit/s link. Slowing the link down by a factor D stretches
every serialization and queueing delay by D, so a round of N × SRU bytes lasts
D times longer on the testbed. What decides an incast outcome is the ratio of
a round's length to the time a timeout costs; for that ratio to be the
datacenter's, every timer whose length matters is stretched by the same D
(time dilation, as in Gupta et al., "To Infinity and Beyond: Time-Warped
Network Emulation", NSDI 2006):

    D = (datacenter link rate in full frames/s) / (measured bottleneck frames/s)
      = datacenter_gbps · 1e9 / (8 · 1538) / measured_pps

    min RTO on the testbed = D × topology.rto_min_ms

Measured, not assumed: the engine measures what its bottleneck drains (one
bulk TCP flow through the rate-limited egress queue) before the first point.
Queue sizes and K are in packets and need no scaling. What cannot be
stretched is reported in datacenter time instead (divided by D): BMv2's own
base RTT and Linux's fixed 40 ms delayed-ACK timer.
"""

from __future__ import annotations

from dataclasses import dataclass

from .wire import WIRE_FRAME_BYTES

DATACENTER_GBPS = 1.0  # the papers' link rate the testbed stands for
LINUX_DELACK_MS = 40.0  # Linux's minimum delayed-ACK timeout (TCP_DELACK_MIN, HZ/25)


def frames_per_s(gbps: float) -> float:
    """Full frames (1538 bytes on the wire) per second at `gbps`."""
    return gbps * 1e9 / (8 * WIRE_FRAME_BYTES)


@dataclass(frozen=True)
class Dilation:
    """The testbed's time stretch, from its measured bottleneck rate."""

    measured_pps: float  # full data frames per second the bottleneck drained
    configured_pps: float  # topology.bottleneck_pps
    base_rtt_ms: float | None = None  # ping through the idle testbed
    datacenter_gbps: float = DATACENTER_GBPS

    @property
    def factor(self) -> float:
        return frames_per_s(self.datacenter_gbps) / self.measured_pps

    def testbed_ms(self, datacenter_ms: float) -> float:
        """A datacenter duration, stretched to the testbed's clock."""
        return datacenter_ms * self.factor

    def datacenter_us(self, testbed_ms: float) -> float:
        """A testbed duration, in the datacenter's µs."""
        return testbed_ms * 1000 / self.factor

    def rto_min_ms(self, datacenter_rto_ms: float) -> int:
        """The route's rto_min on the testbed (whole ms, as `ip route` takes it)."""
        return max(1, round(self.testbed_ms(datacenter_rto_ms)))

    def as_dict(self) -> dict[str, float | None]:
        return {
            "factor": self.factor,
            "measured_pps": self.measured_pps,
            "configured_pps": self.configured_pps,
            "base_rtt_ms": self.base_rtt_ms,
            "datacenter_gbps": self.datacenter_gbps,
        }

    def describe(self, datacenter_rto_ms: float) -> str:
        """One line: the factor and what the testbed's settings stand for."""
        rtt = ""
        if self.base_rtt_ms:
            there = self.datacenter_us(self.base_rtt_ms)
            rtt = f"; base RTT {self.base_rtt_ms:.2f} ms here = {there:.0f} µs there"
        delack = self.datacenter_us(LINUX_DELACK_MS)
        return (
            f"time dilation ×{self.factor:.1f}: the bottleneck drains {self.measured_pps:.0f} "
            f"pkt/s (set {self.configured_pps:.0f}) = {self.datacenter_gbps:g} Gbit/s slowed "
            f"{self.factor:.1f}×; min RTO {datacenter_rto_ms:g} ms there = "
            f"{self.rto_min_ms(datacenter_rto_ms)} ms here{rtt}; Linux's "
            f"{LINUX_DELACK_MS:.0f} ms delayed ACK = {delack:.0f} µs there"
        )
