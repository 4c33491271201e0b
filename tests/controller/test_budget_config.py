"""The receiver's budget in the controller's YAML and the shares it writes
(docs/algorithms.md §8), without a switch."""

from __future__ import annotations

from typing import Any

import pytest

from p4incast.controller import budget, config
from p4incast.controller.errors import ControllerError
from p4incast.model import switch_budget


def _cfg(budget_value: Any) -> dict[str, Any]:
    return {
        "ports": {2: {"mac": "00:aa:00:00:00:02", "budget": budget_value}},
        "routes": [],
    }


def test_budget_key_parsed_with_defaults() -> None:
    cfg = config.parse(_cfg({"bytes": 11584}))
    b = cfg.ports[2].budget
    # The default epoch, docs/algorithms.md §8 "Flows and N": 2^17 ticks.
    assert b == config.PortBudget(bytes=11584, mss=1448, epoch_ticks=131072)


def test_port_without_budget_is_off() -> None:
    cfg = config.parse({"ports": {1: {"mac": "00:aa:00:00:00:01"}}, "routes": []})
    assert cfg.ports[1].budget is None
    assert budget.desired(1, None) == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"bytes": 1000}, "ports.2.budget: budget 1000 bytes is below one segment (1448 bytes)"),
        ({"bytes": 11584, "epoch_ticks": 48}, "a power of two in [4, 1073741824]"),
        ({"bytes": 11584, "epoch_ticks": 2}, "a power of two in [4, 1073741824]"),
        ({"bytes": 11584, "mss": 100}, "ports.2.budget.mss: 100 not in [536, 1448]"),
        ({"bytes": "lots"}, "ports.2.budget.bytes: expected an integer"),
        ({"mss": 1448}, "ports.2.budget: missing bytes"),
        ({"bytes": 11584, "flows": 3}, "flows"),
        ({"bytes": 2 * 4097 * 1448}, "more than the switch's 4096 shares"),
    ],
)
def test_bad_budget_refused_in_one_line(value: dict[str, Any], message: str) -> None:
    with pytest.raises(ControllerError) as err:
        config.parse(_cfg(value))
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_shares_as_worked_in_algorithms_md() -> None:
    # §8's worked example: B = 8 x 1448 = 11584: 11584, 5792, 2896, 2896 for
    # N = 1..4 (above one segment); N >= 5 gets the floor, 1448.
    assert switch_budget.share_entries(11584, 1448) == [
        (1, 11584),
        (2, 5792),
        (3, 2896),
        (4, 2896),
    ]
    assert switch_budget.share_bytes(11584, 1448, 5) == 1448
    assert switch_budget.share_bytes(11584, 1448, 100) == 1448
    # B of 1 segment: no entry, every N gets the floor.
    assert switch_budget.share_entries(1448, 1448) == []
    entries = budget.desired(2, config.PortBudget(bytes=11584))
    assert len(entries) == 1 + 4


def test_active_flows_from_flow_epochs() -> None:
    # v1model epoch of 64 ticks = 64 x 1.024 ms = 65.536 ms; 1.31072 s is 20
    # epochs; 40 flows counted in them (each once per epoch) = 2 flows active.
    assert switch_budget.active_flows(40, 1.31072, 64, "v1model") == pytest.approx(2.0)
    # Tofino's tick is 1.048576 ms: the same 40 over 20 of its epochs.
    assert switch_budget.active_flows(40, 20 * 64 * 1.048576e-3, 64, "tna") == pytest.approx(2.0)


def test_exporter_serves_the_budget_per_receiver_port() -> None:
    from prometheus_client.core import Metric

    from p4incast.controller import units
    from p4incast.controller.export import State, SwitchCollector
    from p4incast.controller.stats import PortStats, Snapshot

    col = SwitchCollector("tor", units.BMV2, "v1model")
    col.update(
        snapshot=Snapshot({2: PortStats(2)}, {}),
        up=True,
        last_success=1.0,
        budget={2: budget.PortCounters(acks=7, rewritten=6, flow_epochs=5, epoch_ticks=64)},
        active_flows={2: 3.0},
    )
    fams: dict[str, Metric] = {f.name: f for f in col.collect()}
    samples = {
        s.name: (s.labels["port"], s.value)
        for n in (
            "p4incast_switch_budget_rewritten_acks",
            "p4incast_switch_budget_acks",
            "p4incast_switch_budget_active_flows",
        )
        for s in fams[n].samples
    }
    assert samples == {
        "p4incast_switch_budget_rewritten_acks_total": ("2", 6),
        "p4incast_switch_budget_acks_total": ("2", 7),
        "p4incast_switch_budget_active_flows": ("2", 3.0),
    }
    assert isinstance(col.state, State)


def test_active_flows_gauge_spans_one_to_two_epochs() -> None:
    """The gauge waits until the counters span one epoch, then averages over one
    to two epochs. Epoch 64 v1model ticks = 65.536 ms. Polls at t = 0 (base, 0
    flows counted), 0.05 s (under one epoch: none), 0.1 s (40 counted since
    the base over 0.1 / 0.065536 = 1.526 epochs: 26.2), 0.14 s (more than two
    epochs since the base: 44 / 2.136 epochs = 20.6; the base moves to the
    0.1 s sample), 0.2 s (60 - 40 = 20 over 0.1 s = 1.526 epochs: 13.1)."""
    from p4incast.controller import units
    from p4incast.controller.config import SwitchSettings
    from p4incast.controller.export import Poller, SwitchCollector

    poller = Poller(SwitchSettings(), SwitchCollector("tor", units.BMV2, "v1model"), 1.0)

    def at(t: float, counted: int) -> float | None:
        c = budget.PortCounters(flow_epochs=counted, epoch_ticks=64)
        return poller._active_flows(2, c, t)

    epoch = 64 * 1.024e-3
    assert at(0.0, 0) is None
    assert at(0.05, 30) is None
    assert at(0.1, 40) == pytest.approx(40 / (0.1 / epoch))
    assert at(0.14, 44) == pytest.approx(44 / (0.14 / epoch))
    assert at(0.2, 60) == pytest.approx(20 / (0.1 / epoch))
    # A counter that went back (the switch restarted): counted from there again.
    assert at(0.3, 5) is None
