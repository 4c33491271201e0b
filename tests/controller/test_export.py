"""p4incast-ctl export against a real simple_switch_grpc: the scraped counters are
the switch's own (as `stats` reads them), every scrape under sustained traffic is
one consistent snapshot, the controller keeps writing while the exporter runs (it
never takes mastership), and a stopped switch is `up 0`."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from test_bmv2_controller import (  # the same switch, veth pairs and traffic
    GRPC,
    THRIFT,
    VETH,
    _wait_line,
    burst_marks,
    cfg_file,  # noqa: F401 - fixture
    config_dict,
    ctl,
    pytestmark,  # noqa: F401 - bmv2, root, skip reasons
    switch,  # noqa: F401 - fixture
)

from p4incast import bmv2
from p4incast.controller.export import PORT_COUNTERS
from p4incast.experiments.ray_local import free_port

ADDR = f"127.0.0.1:{GRPC}"


@pytest.fixture
def exporter() -> Iterator[tuple[subprocess.Popen[str], str]]:
    listen = f"127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "p4incast.controller",
            "--address",
            ADDR,
            "--thrift-port",
            str(THRIFT),
            "export",
            "--listen",
            listen,
            "--interval",
            "0.3",
            "--name",
            "tor1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert _wait_line(proc, "serving", 15), "exporter did not start"
        yield proc, f"http://{listen}/metrics"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of one scrape (Prometheus text format)."""
    with urllib.request.urlopen(url, timeout=5) as r:
        text = r.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }


def value(m: dict, name: str, **labels: str) -> float | None:
    return m.get((name, tuple(sorted(labels.items()))))


def port_value(m: dict, metric: str, port: str) -> float:
    """p4incast_switch_<metric> of switch tor1's `port`; fails if it is not served."""
    got = value(m, f"p4incast_switch_{metric}", switch="tor1", port=port)
    assert got is not None, f"{metric} of port {port} not served"
    return got


def wait_for(url: str, pred, timeout: float = 10.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        m = scrape(url)
        if pred(m) or time.monotonic() > deadline:
            return m
        time.sleep(0.2)


def test_scrape_equals_the_switchs_counters(switch, cfg_file: Path, exporter) -> None:  # noqa: F811
    proc, url = exporter
    ctl("apply", str(cfg_file))
    m = wait_for(url, lambda m: value(m, "p4incast_switch_up", switch="tor1") == 1)
    assert value(m, "p4incast_switch_up", switch="tor1") == 1, m
    got = burst_marks(4) + burst_marks(6)
    assert len(got) == 10
    # Every packet has left the queue (50 pkt/s) and the exporter has read the
    # counters since: from then on they hold still, and both reads agree.
    drained = lambda m: (  # noqa: E731
        value(m, "p4incast_switch_egress_packets_total", switch="tor1", port="2") == 10
    )
    m = wait_for(url, drained)
    assert drained(m), m
    snap = json.loads(ctl("--config", str(cfg_file), "stats", "--json").stdout)
    m = scrape(url)
    for p, st in snap["ports"].items():
        for attr, (metric, _help) in PORT_COUNTERS.items():
            assert value(m, f"p4incast_switch_{metric}_total", switch="tor1", port=p) == st[attr]
        assert (
            value(m, "p4incast_switch_queue_drop_packets", switch="tor1", port=p)
            == (st["queue_drops"])
        )
        # The histogram's count is what left the port as the pipeline counts it, and
        # its buckets are the pipeline's own (one packet each on BMv2).
        count = value(m, "p4incast_switch_queue_depth_packets_count", switch="tor1", port=p)
        assert count == st["egress"] == st["depth"]["packets"]
        running = 0
        for b in range(127):
            running += st["hist"].get(str(b), 0)
            le = value(
                m, "p4incast_switch_queue_depth_packets_bucket", switch="tor1", port=p, le=str(b)
            )
            assert le == running, (p, b)
    port2 = snap["ports"]["2"]
    assert port2["routed"] == port2["ect"] == 10 and port2["marked"] == sum(e == 3 for _, e in got)
    for reason, n in snap["ingress_drops"].items():
        assert (
            value(m, "p4incast_switch_ingress_drop_packets_total", switch="tor1", reason=reason)
            == n
        )
    info = value(m, "p4incast_switch_info", switch="tor1", target="v1model", depth_unit="packets")
    assert info == 1
    # OpenMetrics too, negotiated by the library.
    req = urllib.request.Request(url, headers={"Accept": "application/openmetrics-text"})
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.headers["Content-Type"].startswith("application/openmetrics-text")
        assert r.read().decode().rstrip().endswith("# EOF")
    assert proc.poll() is None


def test_controller_keeps_mastership_while_exporting(switch, cfg_file: Path, exporter) -> None:  # noqa: F811
    _proc, url = exporter
    ctl("apply", str(cfg_file))
    wait_for(url, lambda m: value(m, "p4incast_switch_up", switch="tor1") == 1)
    time.sleep(1.0)  # several reads
    # Writes succeed while the exporter reads: the controller is primary ...
    out = ctl("--config", str(cfg_file), "set-ecn", "--port", "2", "--mode", "front", "--k", "2")
    assert "mark-front at K=2" in out.stdout
    # ... and with the primary gone the exporter did not take over: a controller
    # with the lowest election id still becomes primary and writes.
    out = ctl(
        "--config",
        str(cfg_file),
        "--election-id",
        "1",
        "set-ecn",
        "--port",
        "2",
        "--mode",
        "tail",
        "--k",
        "1",
    )
    assert "mark-tail at K=1" in out.stdout
    assert "0 updates" in ctl("apply", str(cfg_file)).stdout  # the config's policy again


def test_stopped_switch_is_up_0_and_comes_back(
    switch: bmv2.Bmv2Switch,  # noqa: F811
    cfg_file: Path,  # noqa: F811
    exporter,
) -> None:
    proc, url = exporter
    ctl("apply", str(cfg_file))
    burst_marks(4)
    m = wait_for(
        url,
        lambda m: value(m, "p4incast_switch_routed_packets_total", switch="tor1", port="2") == 4,
    )
    last = value(m, "p4incast_switch_last_success_timestamp_seconds", switch="tor1")
    assert last is not None and abs(time.time() - last) < 5
    switch.stop()
    m = wait_for(url, lambda m: value(m, "p4incast_switch_up", switch="tor1") == 0)
    assert value(m, "p4incast_switch_up", switch="tor1") == 0
    assert value(m, "p4incast_switch_routed_packets_total", switch="tor1", port="2") is None
    failures = value(m, "p4incast_switch_read_failures_total", switch="tor1")
    assert failures is not None and failures >= 1
    since = value(m, "p4incast_switch_last_success_timestamp_seconds", switch="tor1")
    assert since is not None and since >= last
    assert proc.poll() is None, "the exporter exited when the switch stopped"
    # Back, without its pipeline: still down; once the controller re-applies, up again
    # with the restarted switch's counters (a reset, as Prometheus expects).
    switch.start()
    time.sleep(1.0)
    assert value(scrape(url), "p4incast_switch_up", switch="tor1") == 0
    ctl("apply", str(cfg_file))
    m = wait_for(url, lambda m: value(m, "p4incast_switch_up", switch="tor1") == 1)
    assert value(m, "p4incast_switch_up", switch="tor1") == 1
    assert proc.poll() is None
    # The log: each failure a WARNING, each recovery INFO (nothing went wrong).
    proc.terminate()
    out, _ = proc.communicate(timeout=10)
    events = [line for line in out.splitlines() if "p4incast.controller.export" in line]
    assert any(e.startswith("WARNING ") and "read failed" in e for e in events), out
    recovered = [e for e in events if "reading counters" in e]
    assert len(recovered) >= 2 and all(e.startswith("INFO ") for e in recovered), out


# Sustained traffic for the consistency test: host 1 -> port 2 (queue 64 at 400 pkt/s,
# mark-tail K=5: the queue fills, marks and drops), host 2 -> port 1 (no rate limit:
# next to nothing dropped), each ~600 pkt/s, one packet in four Not-ECT.
SENDER = """
import sys, time
from scapy.config import conf
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
conf.ifaces.reload()
flows = []
for host, src, dst, mac in ((sys.argv[1], "10.0.1.1", "10.0.2.2", "00:aa:00:00:00:01"),
                            (sys.argv[2], "10.0.2.1", "10.0.1.2", "00:aa:00:00:00:02")):
    pkts = [bytes(Ether(src="00:bb:00:00:00:09", dst=mac) / IP(src=src, dst=dst, tos=tos)
                  / UDP(dport=5001) / (b"x" * 30)) for tos in (2, 2, 2, 0)]
    flows.append((conf.L2socket(iface=host), pkts))
print("sending", flush=True)
while True:
    for sock, pkts in flows:
        for p in pkts * 3:
            sock.send(p)
    time.sleep(0.02)
"""


def test_every_scrape_is_one_consistent_snapshot_under_traffic(
    switch,  # noqa: F811
    tmp_path: Path,
    exporter,
) -> None:
    """Scraped every 0.25 s for 30 s while both ports carry traffic, each port holds
    marked <= ect <= egress <= routed, the queue-drop gauge is routed - egress >= 0,
    and no counter ever goes back. 30 s, not a minute: the ordering is structural,
    not a rate (the old read broke it in the first snapshot under load, egress
    above routed by tens of packets), and this machine is shared with BMv2 runs."""
    cfg = tmp_path / "load.yaml"
    data = config_dict(mode="tail", k=5, rate=400)
    cfg.write_text(yaml.safe_dump(data))
    _proc, url = exporter
    ctl("apply", str(cfg))
    wait_for(url, lambda m: value(m, "p4incast_switch_up", switch="tor1") == 1)
    sender = subprocess.Popen(
        [sys.executable, "-c", SENDER, VETH[1][1], VETH[2][1]],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    bad: list[str] = []
    prev: dict = {}
    scrapes = 0
    try:
        assert _wait_line(sender, "sending", 15), "traffic did not start"
        end = time.monotonic() + 30
        while time.monotonic() < end:
            m = scrape(url)
            scrapes += 1
            assert value(m, "p4incast_switch_up", switch="tor1") == 1, m
            for p in ("1", "2"):
                if value(m, "p4incast_switch_routed_packets_total", switch="tor1", port=p) is None:
                    continue  # no traffic there yet (then, once served, it stays: below)
                r, e = (
                    port_value(m, "routed_packets_total", p),
                    port_value(m, "egress_packets_total", p),
                )
                ect, marked = (
                    port_value(m, "ect_packets_total", p),
                    port_value(m, "marked_packets_total", p),
                )
                if not marked <= ect <= e <= r or port_value(m, "queue_drop_packets", p) != r - e:
                    bad.append(f"scrape {scrapes} port {p}: {r=} {e=} {ect=} {marked=}")
            for key, x in m.items():
                monotone = key[0].endswith(("_total", "_bucket", "_count", "_sum"))
                if monotone and key in prev and x < prev[key]:
                    bad.append(f"scrape {scrapes}: {key} fell from {prev[key]} to {x}")
            bad += [f"scrape {scrapes}: {key} vanished" for key in prev.keys() - m.keys()]
            prev = m
            time.sleep(0.25)
    finally:
        sender.terminate()
        sender.wait(timeout=10)
    assert not bad, f"{len(bad)} of {scrapes} scrapes inconsistent: {bad[:5]}"
    time.sleep(64 / 400 + 1.0)  # the queue drained, the exporter read again
    m = scrape(url)
    routed = {p: port_value(m, "routed_packets_total", p) for p in ("1", "2")}
    egress = {p: port_value(m, "egress_packets_total", p) for p in ("1", "2")}
    marked = port_value(m, "marked_packets_total", "2")
    # The load was real: thousands of packets each way, port 2 (400 pkt/s) marked
    # and dropped; port 1 (BMv2's default queue, no rate limit) dropped next to
    # nothing: at most a few while BMv2's egress thread lagged on this machine.
    assert scrapes >= 60 and routed["1"] > 5000 and routed["2"] > 5000, (scrapes, routed)
    assert marked > 1000
    drops = {p: routed[p] - egress[p] for p in routed}
    assert drops["2"] > 1000 and 0 <= drops["1"] < drops["2"] / 10, drops


def test_budget_series_count_the_receivers_acks(
    switch,  # noqa: F811
    tmp_path: Path,
    exporter,
) -> None:
    """docs/algorithms.md §8 on a live switch: the receiver behind port 2 (budget
    B = 11584) opens one flow at scale 0 and sends 3 ACKs of window 29200: N = 1,
    share 11584, so all 3 are lowered; the flow is counted once (one epoch)."""
    from scapy.config import conf
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether
    from scapy.sendrecv import sendp

    data = config_dict()
    data["ports"][2]["budget"] = {"bytes": 11584, "epoch_ticks": 1 << 20}
    path = tmp_path / "budget.yaml"
    path.write_text(yaml.safe_dump(data))
    ctl("apply", str(path))
    _proc, url = exporter
    conf.ifaces.reload()
    head = Ether(src="00:bb:00:00:00:02", dst="00:aa:00:00:00:02") / IP(
        src="10.0.2.2", dst="10.0.1.1"
    )
    syn = head / TCP(sport=50000, dport=5001, flags="S", options=[("MSS", 1448)])
    acks = [head / TCP(sport=50000, dport=5001, flags="A", window=29200) for _ in range(3)]
    sendp([syn, *acks], iface=VETH[2][1], verbose=False)

    def counted(m: dict) -> bool:
        lowered = value(m, "p4incast_switch_budget_rewritten_acks_total", switch="tor1", port="2")
        return lowered == 3

    m = wait_for(url, counted)
    assert port_value(m, "budget_rewritten_acks_total", "2") == 3
    assert port_value(m, "budget_acks_total", "2") == 3
    assert port_value(m, "budget_flow_epochs_total", "2") == 1
    assert port_value(m, "budget_untracked_packets_total", "2") == 0
    # The active-flows gauge waits until its counters span one epoch (2^20
    # ticks, 18 minutes here): none yet.
    assert value(m, "p4incast_switch_budget_active_flows", switch="tor1", port="2") is None
