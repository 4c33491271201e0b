"""p4incast-agent run --metrics on the veth lab with real flows: the scraped totals
are status()'s totals, the policy is an info label, flows the RTT limit excludes
are served and counted (also in the exit line), and a taken or malformed address
is one line and exit 2 with nothing attached."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families
from vethlab import VethLab

from p4incast.agent.datapath import ST_NAMES
from p4incast.agent.metrics import AgentCollector
from p4incast.agent.runner import status

pytestmark = pytest.mark.root
PORT = 9465


def scrape(lab: VethLab) -> dict[str, tuple[float, dict[str, str]]]:
    """{sample name: (value, labels)} from inside the receiver's namespace."""
    text = lab.ns(lab.ns_r, "curl", "-sf", f"http://{lab.ip_r}:{PORT}/metrics")
    return {
        s.name: (s.value, s.labels)
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }


# status() totals key -> the sample that serves it
SERVED = {
    "flows": "p4incast_agent_flows",
    "pkts": "p4incast_agent_flow_packets",
    "bytes": "p4incast_agent_flow_bytes",
    "ce": "p4incast_agent_flow_ce_packets",
    "rtt_excluded_flows": "p4incast_agent_rtt_excluded_flows",
    **{n: f"p4incast_agent_{n}_total" for n in ST_NAMES},
}


def test_scraped_totals_equal_status(lab: VethLab) -> None:
    agent = lab.start_agent("newdctcp-rx", "--metrics", f"{lab.ip_r}:{PORT}")
    client = lab.start_client(3)
    time.sleep(2.0)
    during = scrape(lab)
    assert during["p4incast_agent_flow_packets"][0] > 1000
    lab.goodput_bps(client)  # the flows are over: the counters stand still
    time.sleep(0.5)
    first = scrape(lab)
    (mine,) = [a for a in status() if a["pid"] == agent.pid]
    second = scrape(lab)
    assert lab.stop(agent) == 0
    tot = mine["totals"]
    assert set(SERVED) == set(tot)
    for key, name in SERVED.items():
        assert first[name][0] == tot[key] == second[name][0], (key, first[name], tot[key])
        assert first[name][1] == {"iface": lab.dev_r}  # aggregate: no per-flow label
    assert tot["rx_pkts"] > 1000 and tot["rewrites"] > 0 and tot["flows_new"] >= 2
    info = first["p4incast_agent_info"]
    assert info == (1.0, {"iface": lab.dev_r, "policy": "newdctcp-rx", "attach": "tcx"})
    # CE: the marker marked 1/32 of the packets; the monotonic count keeps what the
    # resident-flow gauge loses when the flows end.
    ce = first["p4incast_agent_ce_packets_total"][0]
    assert ce >= during["p4incast_agent_ce_packets_total"][0] > 0
    assert ce >= during["p4incast_agent_flow_ce_packets"][0]


def test_flows_above_the_rtt_limit_are_served_and_counted(lab: VethLab) -> None:
    """With the limit below the lab's RTT (this kernel has no netem to delay the
    lab past the default 2 ms), every flow's smallest RTT is above it: the agent
    leaves them alone and says so, in the gauge of resident excluded flows
    (status' rtt>limit flows), in the counter (which keeps them after their FIN
    deleted the entries), and in its exit line."""
    limit = 1  # us; a veth RTT through two namespaces is tens of us
    agent = lab.start_agent(
        "newdctcp-rx", "--rtt-limit-us", str(limit), "--metrics", f"{lab.ip_r}:{PORT}"
    )
    client = lab.start_client(3, parallel=3)
    time.sleep(2.0)
    (mine,) = [a for a in status() if a["pid"] == agent.pid]
    during = scrape(lab)
    excluded = [f for f in mine["flows"] if f["rtt_excluded"]]
    # iperf3's 3 data connections and its control connection, all above the limit
    assert len(excluded) >= 4 and all(f["rtt_min_us"] > limit for f in excluded), mine
    assert mine["totals"]["rtt_excluded_flows"] == len(excluded)
    assert during["p4incast_agent_rtt_excluded_flows"][0] == len(excluded)
    assert during["p4incast_agent_rtt_excluded_total"][0] >= len(excluded)
    lab.goodput_bps(client)  # the flows are over; FIN deleted their entries
    time.sleep(0.5)
    after = scrape(lab)
    total = after["p4incast_agent_rtt_excluded_total"][0]
    assert after["p4incast_agent_rtt_excluded_flows"][0] == 0
    assert total >= len(excluded), after
    assert lab.stop(agent) == 0
    out = agent.stdout.read() if agent.stdout else ""
    (summary,) = [line for line in out.splitlines() if "rx_pkts=" in line]
    assert f" rtt_excluded={int(total)} " in summary, summary


@pytest.mark.parametrize("listen", ["taken", "9465", "nohost:port"])
def test_bad_metrics_address_is_one_line_exit_2_and_nothing_attached(
    lab: VethLab, listen: str
) -> None:
    holder = None
    if listen == "taken":
        holder = lab.spawn(
            lab.ns_r,
            sys.executable,
            "-c",
            "import socket,time; s=socket.socket(); "
            f"s.bind(('{lab.ip_r}', {PORT})); s.listen(); time.sleep(60)",
        )
        time.sleep(0.5)
        listen = f"{lab.ip_r}:{PORT}"
    proc = subprocess.run(
        [
            "ip",
            "netns",
            "exec",
            lab.ns_r,
            sys.executable,
            "-m",
            "p4incast.agent",
            "run",
            "--iface",
            lab.dev_r,
            "--policy",
            "newdctcp-rx",
            "--metrics",
            listen,
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if holder is not None:
        holder.kill()
    assert proc.returncode == 2, proc
    assert proc.stderr.startswith("p4incast-agent: --metrics"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not proc.stdout
    assert "rx_" not in lab.attached_progs()


def test_served_names_cover_every_stat() -> None:
    names = {s.name for fam in AgentCollector("eth0", "rcc").describe() for s in fam.samples}
    assert set(SERVED.values()) | {"p4incast_agent_info", "p4incast_agent_ce_packets_total"} == (
        names
    )
    # nothing attached (policy off, or before attaching): only the info metric
    assert [f.name for f in AgentCollector("eth0", "off").collect()] == ["p4incast_agent"]
