"""reports/scenario_report.py: what the reports show of each scenario, keyed by the
scenario's name. Every scenario the running side knows has an entry, and the
claims' context names the scenario's own axis."""

from __future__ import annotations

from p4incast.experiments import scenario
from p4incast.experiments.config import load_all
from p4incast.reports import reproduce, scenario_report


def test_every_scenario_has_its_report() -> None:
    assert set(scenario_report.REPORTS) == set(scenario.SCENARIOS)
    for name, sc in scenario.SCENARIOS.items():
        assert scenario_report.of_scenario(sc) is scenario_report.REPORTS[name]


def test_the_claims_context_is_on_the_scenario_s_axis() -> None:
    (exp, *_rest) = load_all(reproduce.PAPERS / "newdctcp-fig7.yaml")
    ctx = scenario_report.of(exp).claim_context(exp)
    assert ctx["axis"] == scenario.INCAST.axis == "n"
    assert ctx["topology"] == exp.topology and ctx["app"] == exp.app
    at_scale = scenario_report.REPORTS[scenario.AT_SCALE.name]
    assert at_scale.claim_context(None) == {"axis": scenario.AT_SCALE.axis}
