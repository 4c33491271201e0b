"""Benchmark: what the Mininet + BMv2 testbed can carry, so the bottleneck the
experiments set (experiments/default.yaml: bottleneck_pps) sits below it.

On an incast_star with 2 senders, the p4-incast pipeline, no queue rate limit
and host links at 1 Gbit/s (htb), it measures:
  - base RTT: ping sender -> receiver through BMv2 (idle queue);
  - forwarding capacity: one iperf3 TCP flow for 5 s (1448-byte segments),
    in Mbit/s and data packets/s, and the same with two senders at once;
and prints the default experiment's bottleneck as a fraction of capacity.

Needs root, Mininet, BMv2, iperf3 and `make build`; prints why when it cannot run.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from p4incast.engines.bmv2 import ENGINE
from p4incast.experiments import config
from p4incast.model.wire import MSS_BYTES
from p4incast.topologies.incast import RECEIVER, LinkShape

REPO = Path(__file__).resolve().parent.parent
SECONDS = 5


def main() -> int:
    why = ENGINE.unavailable()
    if why:
        print(f"bench_testbed: skipped — {why}")
        return 0
    from p4incast.controller.config import EcnPolicy
    from p4incast.engines import testbed  # imports Mininet, which only the testbed needs

    with (
        TemporaryDirectory() as tmp,
        testbed.network(
            "incast_star", 2, spines=1, host_mbps=1000.0, background=False, log_dir=Path(tmp)
        ) as net,
    ):
        for h in net.hosts:
            testbed.host_setup(h, 10)
        shape = LinkShape(host_mbps=1000.0, queue_pkts=64, queue_rate_pps=None)
        testbed.program(net, EcnPolicy(), shape)
        r, h1, h2 = net.get(RECEIVER), net.get("h1"), net.get("h2")
        rtt = testbed.ping_rtt_ms(h1, r.IP())
        r.cmd("iperf3 -s -D -p 5202; iperf3 -s -D -p 5203")
        time.sleep(0.5)
        one = json.loads(h1.cmd(f"iperf3 -c {r.IP()} -p 5202 -t {SECONDS} -J"))
        p1 = h1.popen(["iperf3", "-c", r.IP(), "-p", "5202", "-t", str(SECONDS), "-J"])
        p2 = h2.popen(["iperf3", "-c", r.IP(), "-p", "5203", "-t", str(SECONDS), "-J"])
        two = [json.loads(p.communicate()[0]) for p in (p1, p2)]
    mbps1 = one["end"]["sum_received"]["bits_per_second"] / 1e6
    mbps2 = sum(t["end"]["sum_received"]["bits_per_second"] for t in two) / 1e6
    pps1, pps2 = mbps1 * 1e6 / (MSS_BYTES * 8), mbps2 * 1e6 / (MSS_BYTES * 8)
    exp = config.load(REPO / "experiments" / "default.yaml")
    bottleneck = exp.topology.bottleneck_pps
    print("Mininet + BMv2 testbed (p4-incast pipeline, no queue rate limit):")
    print(f"  base RTT (ping, idle)          : {rtt:.3f} ms" if rtt else "  base RTT: ping failed")
    print(f"  capacity, 1 TCP flow           : {mbps1:7.1f} Mbit/s = {pps1:6.0f} data pkt/s")
    print(f"  capacity, 2 TCP flows          : {mbps2:7.1f} Mbit/s = {pps2:6.0f} data pkt/s")
    print(
        f"  default bottleneck_pps {bottleneck} = {bottleneck / max(pps1, pps2):.2f} of capacity"
        f" ({bottleneck * MSS_BYTES * 8 / 1e6:.1f} Mbit/s goodput limit)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
