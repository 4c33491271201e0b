"""p4incast-ctl export without a switch: bad --listen refused in one line (exit 2),
an unreachable switch served as `up 0`, and the names the collector serves."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from ctlrun import ctl
from prometheus_client.parser import text_string_to_metric_families

from p4incast.controller import units
from p4incast.controller.export import SwitchCollector


@pytest.mark.parametrize("listen", ["taken", "9464", "localhost:http", "[::1]:70000", ":9464"])
def test_bound_or_malformed_listen_is_one_line_and_exit_2(listen: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        if listen == "taken":
            listen = f"127.0.0.1:{s.getsockname()[1]}"
        proc = ctl("--address", "127.0.0.1:1", "export", "--listen", listen)
    assert proc.returncode == 2, proc
    assert proc.stderr.startswith("p4incast-ctl: error: --listen"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not proc.stdout


def test_bad_interval_and_ports_refused() -> None:
    for args in (("--interval", "0"), ("--ports", "1,x"), ("--ports", "600")):
        proc = ctl("--address", "127.0.0.1:1", "export", "--listen", "127.0.0.1:0", *args)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc


def test_unreachable_switch_serves_up_0() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "p4incast.controller", "--address", "127.0.0.1:1", "export",
         "--listen", f"127.0.0.1:{port}", "--interval", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        # The failure counter is served (at 0) before the first read fails: wait
        # for the first failed read, not for the counter's name.
        deadline = time.monotonic() + 15
        samples: dict[str, float] = {}
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    text = r.read().decode()
                samples = {
                    s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples
                }
                if samples.get("p4incast_switch_read_failures_total", 0) >= 1:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        assert samples["p4incast_switch_up"] == 0
        assert samples["p4incast_switch_read_failures_total"] >= 1
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def served_names(collector: SwitchCollector) -> set[str]:
    return {s.name for fam in collector.describe() for s in fam.samples}


def test_depth_histogram_is_named_and_bucketed_in_the_targets_unit() -> None:
    bmv2 = served_names(SwitchCollector("s", units.BMV2, "v1model"))
    tofino = served_names(SwitchCollector("s", units.TOFINO1, "tna"))
    assert "p4incast_switch_queue_depth_packets_bucket" in bmv2
    assert "p4incast_switch_queue_depth_cells_bucket" in tofino
    assert bmv2 - tofino == {
        f"p4incast_switch_queue_depth_packets_{x}" for x in ("bucket", "count", "sum")
    }


def test_tofino_histogram_buckets_are_the_pipelines_16_cell_cells() -> None:
    from p4incast.controller.export import State
    from p4incast.controller.stats import PortStats, Snapshot

    ps = PortStats(5, routed=7)
    ps.hist[0], ps.hist[2], ps.hist[127] = 3, 2, 1  # depths 0-15, 32-47, >= 2032 cells
    col = SwitchCollector("tor", units.TOFINO1, "tna")
    col.update(snapshot=Snapshot({5: ps}, {}), up=True, last_success=1.0)
    (hist,) = [f for f in col.collect() if f.name == "p4incast_switch_queue_depth_cells"]
    buckets = [(s.labels["le"], s.value) for s in hist.samples if s.name.endswith("_bucket")]
    assert buckets[:3] == [("15", 3), ("31", 3), ("47", 5)]
    assert buckets[-2:] == [("2031", 5), ("+Inf", 6)] and len(buckets) == 128
    by_name = {s.name: s.value for s in hist.samples}
    assert by_name["p4incast_switch_queue_depth_cells_count"] == 6 == ps.egress
    assert by_name["p4incast_switch_queue_depth_cells_sum"] == 2 * 32 + 2032  # lower edges
    assert "cells" in hist.documentation
    col.update(up=False)  # down: no stale per-port series
    assert {f.name for f in col.collect()} == {
        "p4incast_switch_up",
        "p4incast_switch",
        "p4incast_switch_read_failures",
        "p4incast_switch_last_success_timestamp_seconds",
    }
    assert State().up is False
