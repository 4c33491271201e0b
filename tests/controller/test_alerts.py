"""docs/prometheus-alerts.yml: every metric a rule names is one the exporters serve
(the collectors' own names, switch and agent), every job one the documented
scrape config defines, and with Prometheus's promtool installed the file passes
`promtool check rules` and its expressions do what their comments say on
synthetic series (`promtool test rules`): a stopped exporter is caught by `up`
and absent(), where `p4incast_switch_up == 0` returns nothing."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from test_dashboard import NAME, OPERATIONS, served

ALERTS = OPERATIONS.parent / "prometheus-alerts.yml"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool not found (make setup installs it: Debian's prometheus)"
)


def rules() -> dict[str, str]:
    """alert name -> expression, for every rule of the file."""
    doc = yaml.safe_load(ALERTS.read_text())
    return {r["alert"]: r["expr"] for g in doc["groups"] for r in g["rules"]}


def scrape_jobs() -> set[str]:
    """The job names of the scrape config docs/operations.md documents."""
    text = OPERATIONS.read_text()
    (block,) = re.findall(r"```yaml\n# prometheus.yml\n(.*?)```", text, re.S)
    return {job["job_name"] for job in yaml.safe_load(block)["scrape_configs"]}


def test_every_metric_and_job_a_rule_names_exists() -> None:
    names = served()
    jobs = scrape_jobs()
    found = rules()
    assert len(found) >= 8
    for alert, expr in found.items():
        metrics = set(NAME.findall(expr))
        assert metrics or "up{" in expr, f"{alert}: no p4incast metric and no up{{}}"
        assert metrics <= names, f"{alert}: {sorted(metrics - names)} not served"
        for job in re.findall(r'job="([^"]+)"', expr):
            assert job in jobs, f"{alert}: job {job} is not in operations.md's scrape config"


def test_operations_md_describes_every_rule_and_the_dead_exporter_query() -> None:
    text = OPERATIONS.read_text()
    assert "prometheus-alerts.yml" in text
    assert 'up{job="p4incast-switch"} == 0' in text and "absent(p4incast_switch_up)" in text
    for alert in rules():
        assert f"`{alert}`" in text, f"{alert} is not described in docs/operations.md"


@needs_promtool
def test_promtool_checks_the_rules() -> None:
    assert PROMTOOL is not None
    out = subprocess.run(
        [PROMTOOL, "check", "rules", str(ALERTS)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"SUCCESS: {len(rules())} rules found" in out.stdout, out.stdout


SW = 'job="p4incast-switch", instance="127.0.0.1:9464"'
AG = 'job="p4incast-agent", instance="10.0.0.3:9465", iface="eth0"'

# (what, input series (series, values), {alert: the samples its expression returns at 10m})
SCENARIOS: list[tuple[str, list[tuple[str, str]], dict[str, list[tuple[str, float]]]]] = [
    (
        "exporter stopped: its series are gone, up is 0",
        [(f"up{{{SW}}}", "1 1 0x10")],
        {
            "P4incastSwitchDown": [],  # the alert operations.md used to document
            "P4incastSwitchExporterDown": [(f"up{{{SW}}}", 0)],
            "P4incastSwitchMetricsAbsent": [("{}", 1)],
        },
    ),
    (
        "switch down, exporter up",
        [
            (f"up{{{SW}}}", "1x12"),
            (f'p4incast_switch_up{{{SW}, switch="tor1"}}', "1 1 0x10"),
            (f'p4incast_switch_read_failures_total{{{SW}, switch="tor1"}}', "0 0 0+1x10"),
        ],
        {
            "P4incastSwitchDown": [(f'p4incast_switch_up{{{SW}, switch="tor1"}}', 0)],
            "P4incastSwitchExporterDown": [],
            "P4incastSwitchMetricsAbsent": [],
            # 8 failures in the 10 min window: from 0 at 2 min to 8 at 10 min
            "P4incastSwitchReadFailures": [(f'{{{SW}, switch="tor1"}}', 8)],
        },
    ),
    (
        "port 3 marks 60 % of its ECT packets and queues deep; port 2 neither",
        [
            (f'p4incast_switch_marked_packets_total{{{SW}, switch="tor1", port="3"}}', "0+360x12"),
            (f'p4incast_switch_ect_packets_total{{{SW}, switch="tor1", port="3"}}', "0+600x12"),
            (f'p4incast_switch_marked_packets_total{{{SW}, switch="tor1", port="2"}}', "0+6x12"),
            (f'p4incast_switch_ect_packets_total{{{SW}, switch="tor1", port="2"}}', "0+600x12"),
            *(
                (
                    f'p4incast_switch_queue_depth_packets_bucket{{{SW}, switch="tor1", '
                    f'port="{port}", le="{le}"}}',
                    f"0+{n}x12",
                )
                for port, counts in (("3", (30, 600, 600)), ("2", (540, 600, 600)))
                for le, n in zip(("10", "40", "+Inf"), counts, strict=True)
            ),
        ],
        {
            "P4incastMarkingRatioHigh": [(f'{{{SW}, switch="tor1", port="3"}}', 0.6)],
            # port 3: 95 % of its packets saw 10 < depth <= 40, p95 interpolated
            # in that bucket; port 2's p95 is 25, below K + margin
            "P4incastQueueP95AboveK": [('{switch="tor1", port="3"}', 10 + 30 * 540 / 570)],
        },
    ),
    (
        "agent stopped; another agent whose 4 flows are all above its RTT limit",
        [
            (f"up{{{AG}}}", "1 1 0x10"),
            ('p4incast_agent_info{job="p4incast-agent", instance="b", iface="r0"}', "1x12"),
            ('p4incast_agent_flows{job="p4incast-agent", instance="b", iface="r0"}', "4x12"),
            (
                'p4incast_agent_rtt_excluded_flows{job="p4incast-agent", instance="b", iface="r0"}',
                "4x12",
            ),
        ],
        {
            "P4incastAgentDown": [(f"up{{{AG}}}", 0)],
            "P4incastAgentMetricsAbsent": [],
            "P4incastAgentAllFlowsExcluded": [
                (
                    'p4incast_agent_rtt_excluded_flows{job="p4incast-agent", instance="b", '
                    'iface="r0"}',
                    4,
                )
            ],
        },
    ),
]


@needs_promtool
@pytest.mark.parametrize(("what", "series", "expect"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_rule_expressions_on_synthetic_series(
    what: str,
    series: list[tuple[str, str]],
    expect: dict[str, list[tuple[str, float]]],
    tmp_path: Path,
) -> None:
    assert PROMTOOL is not None
    exprs = rules()
    spec = {
        "rule_files": [str(ALERTS)],
        "evaluation_interval": "1m",
        "tests": [
            {
                "name": what,
                "interval": "1m",
                "input_series": [{"series": s, "values": v} for s, v in series],
                "promql_expr_test": [
                    {
                        "expr": exprs[alert],
                        "eval_time": "10m",
                        "exp_samples": [{"labels": lab, "value": v} for lab, v in samples],
                    }
                    for alert, samples in expect.items()
                ],
            }
        ],
    }
    path = tmp_path / "alerts_test.yml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    out = subprocess.run(
        [PROMTOOL, "test", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr
