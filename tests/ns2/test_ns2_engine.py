"""The ns-2 engine (engines/ns2.py): seed 003's simulator runs a point of the
incast star with plain TCP and returns the shared run record. Needs Debian's
ns2 (`ns`, installed by make setup); skipped with that reason otherwise."""

from __future__ import annotations

import pytest

from p4incast.engines import ns2
from p4incast.model.scheme import App, Point, Scheme, Topology, Transport

pytestmark = pytest.mark.skipif(ns2.ns_binary() is None, reason=f"ns-2 absent: {ns2.HOW_TO_GET}")

TOPO = Topology(rto_min_ms=200, link_gbps=1.0, delay_us=25, buffer_bytes=32768)
APP = App(sru_bytes=5000, rounds=2, jitter_us=20, connections="per-round")
NEWRENO = Transport(init_cwnd=1, delayed_ack=False, mss_bytes=1000, sack=False,
                    adv_window_segs=20, syn_rto_ms=3000)  # fmt: skip


def test_a_tiny_point_delivers_every_byte_below_the_framing_limit() -> None:
    """N = 2 servers, 5000 B each (five 1000-B packets), two rounds: each round
    delivers 2 × 5000 = 10 000 bytes. ns-2's packet is the payload plus a 40-byte
    header and its links add no framing, so 1 Gbit/s carries at most
    1000 / 1040 × 1000 = 961.5 Mbit/s of payload; ten packets into a 31-packet
    buffer (32 768 B / 1040 B) never drop."""
    run = ns2.record_of(Point(Scheme("tcp"), 2, topology=TOPO, app=APP, transport=NEWRENO))
    assert run["status"] == "ok", run["error"]
    assert run["engine"] == "ns2"
    assert [r["bytes"] for r in run["rounds"]] == [10_000, 10_000]
    limit = 1e9 * 1000 / 1040
    for r in run["rounds"]:
        assert 0 < r["goodput_bps"] <= limit
        assert r["timeouts"] == 0 and len(r["fct_s"]) == 2
    port = run["switch"]["ports"][run["switch"]["bottleneck_port"]]
    assert port["queue_drops"] == 0
    # 2 SYNs and 10 data packets per round leave the bottleneck toward the client
    assert port["egress"] == 2 * (2 + 10)


def test_an_incast_that_overflows_the_buffer_times_out_after_the_min_rto() -> None:
    """N = 20 servers × 10 packets (200 packets, from 20 first windows of 1 and
    doubling) into 31 packets of buffer: some flow loses the tail of its window
    and waits for its 200 ms minimum RTO, so every round lasts at least 200 ms and
    its goodput is at most 20 × 10 000 × 8 bit / 0.2 s = 8 Mbit/s."""
    app = App(sru_bytes=10_000, rounds=2, jitter_us=20, connections="per-round")
    run = ns2.record_of(Point(Scheme("tcp"), 20, topology=TOPO, app=app, transport=NEWRENO))
    assert run["status"] == "ok", run["error"]
    for r in run["rounds"]:
        assert r["rto"] and r["completion_s"] >= 0.2
        assert r["goodput_bps"] <= 8e6 * 1.0001
    assert run["switch"]["ports"]["1"]["queue_drops"] > 0


def test_what_ns2_cannot_run_is_named() -> None:
    """Only plain TCP on the star with a connection per round: anything else is one
    line naming the setting (never a traceback)."""
    bad = ns2.ENGINE.check(
        Point(
            Scheme("dctcp", "tail", 20, "dctcp"),
            4,
            topology=TOPO,
            app=App(connections="persistent"),
            transport=NEWRENO,
        )  # fmt: skip
    )
    assert [p.split(":")[0] for p in bad] == ["scheme dctcp", "app.connections"]
    run = ns2.record_of(Point(Scheme("dctcp", "tail", 20, "dctcp"), 4, topology=TOPO, app=APP))
    assert run["status"] == "failed" and run["error"].startswith("scheme dctcp")
