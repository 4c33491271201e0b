"""docs/grafana-p4incast.json asks only for metrics the exporters serve: every
metric name in its queries (each depth_unit option substituted) is one of the
sample names the collectors themselves produce (`describe()`), switch and agent."""

from __future__ import annotations

import json
import re
from pathlib import Path

from p4incast.agent.metrics import AgentCollector
from p4incast.controller import units
from p4incast.controller.export import SwitchCollector

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana-p4incast.json"
OPERATIONS = DASHBOARD.parent / "operations.md"
NAME = re.compile(r"\bp4incast_[A-Za-z0-9_]+")


def served() -> set[str]:
    collectors = [
        SwitchCollector("s", units.BMV2, "v1model"),
        SwitchCollector("s", units.TOFINO1, "tna"),
        AgentCollector("eth0", "rcc"),
    ]
    return {s.name for c in collectors for fam in c.describe() for s in fam.samples}


def queries(dash: dict) -> list[str]:
    out = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    for var in dash["templating"]["list"]:
        q = var.get("query")
        if var["type"] == "query":
            out.append(q["query"] if isinstance(q, dict) else q)
    return out


def depth_units(dash: dict) -> list[str]:
    (var,) = [v for v in dash["templating"]["list"] if v["name"] == "depth_unit"]
    return [o["value"] for o in var["options"]]


def test_every_metric_the_dashboard_queries_is_served() -> None:
    dash = json.loads(DASHBOARD.read_text())
    names = served()
    assert sorted(depth_units(dash)) == sorted({u.depth_unit for u in units.UNITS.values()})
    used: set[str] = set()
    for q in queries(dash):
        for unit in depth_units(dash):
            text = q.replace("${depth_unit}", unit).replace("$depth_unit", unit)
            found = set(NAME.findall(text))
            assert found, f"a query without a p4incast metric: {q}"
            assert found <= names, f"{sorted(found - names)} not served (query: {q})"
            used |= found
    # the dashboard shows both exporters, the depth histogram in both units
    assert any(n.startswith("p4incast_agent_") for n in used)
    assert {
        "p4incast_switch_queue_depth_packets_bucket",
        "p4incast_switch_queue_depth_cells_bucket",
    } <= used


def test_operations_md_documents_exactly_the_served_metrics() -> None:
    text = OPERATIONS.read_text()
    names = served()
    families = {re.sub(r"_(bucket|count|sum)$", "", n) for n in names}
    for family in families:
        assert f"`{family}`" in text, f"{family} is not documented in docs/operations.md"
    for name in set(NAME.findall(text)):
        assert name in names | families, f"docs/operations.md names {name}, which is not served"


def test_flows_the_rtt_limit_excludes_are_beside_rewrites_and_flows() -> None:
    """An agent that rewrites nothing because every flow is above its RTT limit
    shows why where rewrites and flows are read."""
    dash = json.loads(DASHBOARD.read_text())
    exprs = {p["title"]: " ".join(t["expr"] for t in p.get("targets", [])) for p in dash["panels"]}
    (rewrites,) = [e for e in exprs.values() if "p4incast_agent_rewrites_total" in e]
    (flows,) = [e for e in exprs.values() if "p4incast_agent_flows{" in e]
    assert "p4incast_agent_rtt_excluded_total" in rewrites
    assert "p4incast_agent_rtt_excluded_flows" in flows
