"""Experiment files: the shipped ones load; every bad input is one clear error."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from p4incast.experiments import config
from p4incast.experiments.config import ExperimentError

REPO = Path(__file__).resolve().parents[2]
GOOD = {
    "name": "t",
    "topology": {"queue_pkts": 64, "bottleneck_pps": 2000, "host_mbps": 100},
    "app": {"sru_bytes": 32768, "rounds": 3},
    "senders": [1, 4],
    "schemes": [
        {"name": "droptail", "ecn": "off", "cc": "reno"},
        {"name": "front", "ecn": "front", "k": 12, "cc": "newdctcp", "agent": "newdctcp-rx"},
    ],
}


@pytest.mark.parametrize("name", ["default.yaml", "sweep.yaml"])
def test_shipped_experiments_load(name: str) -> None:
    exp = config.load(REPO / "experiments" / name)
    assert exp.schemes and exp.senders
    assert len(exp.points()) == len(exp.schemes) * len(exp.senders) * exp.repeats


def test_good_experiment_and_points_order() -> None:
    exp = config.parse(GOOD)
    assert [(p.scheme.name, p.n) for p in exp.points()] == [
        ("droptail", 1),
        ("front", 1),
        ("droptail", 4),
        ("front", 4),
    ]
    assert exp.link_bps("bmv2") == 2000 * 1538 * 8
    assert exp.schemes[1].describe() == "ECN front K=12, newdctcp, agent newdctcp-rx"


def test_yaml_off_is_read_as_mode_off(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    path.write_text("name: t\nschemes:\n  - {name: a, ecn: off, agent: off}\n")
    assert config.load(path).schemes[0].ecn == "off"


def _bad(mutate, match: str) -> None:
    raw = copy.deepcopy(GOOD)
    mutate(raw)
    with pytest.raises(ExperimentError, match=match):
        config.parse(raw)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda r: r["schemes"][0].update(ecn="middle"), "ecn: 'middle' is not one of"),
        (lambda r: r["schemes"][0].update(cc="vegas"), "cc: 'vegas' is not one of"),
        (lambda r: r["schemes"][1].update(agent="magic"), "agent: 'magic'"),
        (lambda r: r["schemes"][1].update(k=64), "k=64 packets is not below the queue"),
        (lambda r: r["schemes"][1].update(k=0), "k: 0 must be >= 1"),
        (lambda r: r["schemes"][0].update(k=5), "k=5 given but ecn is off"),
        (lambda r: r["schemes"].append({"name": "droptail"}), "name used twice"),
        (lambda r: r["schemes"][0].update(colour="red"), "unknown key"),
        (lambda r: r.update(senders=[0]), "senders: 0 must be an integer >= 1"),
        (lambda r: r.update(senders=[]), "non-empty list"),
        (lambda r: r.update(senders=[1001]), "above 1000"),
        (lambda r: r.update(repeats=0), "repeats"),
        (lambda r: r.update(engine="gpu"), "engine: 'gpu'"),
        (lambda r: r["topology"].update(buffer_bytes=1000), "smaller than one packet"),
        (lambda r: r["topology"].update(host_mbps=10), "below the bottleneck"),
        (lambda r: r["topology"].update(kind="ring"), "topology.kind"),
        (lambda r: r["topology"].update(queue_pkts="deep"), "expected an integer"),
        (lambda r: r["app"].update(mode="some"), "app.mode"),
        (lambda r: r["app"].update(rounds=0), "app.rounds"),
        (
            lambda r: r["app"].update(connections="sometimes"),
            "app.connections: 'sometimes' is not one of persistent, per-round",
        ),
        (
            lambda r: r.setdefault("transport", {}).update(mss_bytes=1460),
            r"transport.mss_bytes: 1460 must be in \[536, 1448\]",
        ),
        (
            lambda r: r.setdefault("transport", {}).update(mss_bytes=100),
            r"transport.mss_bytes: 100 must be in \[536, 1448\]",
        ),
        (lambda r: r.update(name="a b"), "name"),
        (lambda r: r.pop("schemes"), "schemes"),
    ],
)
def test_bad_experiment_is_one_clear_error(mutate, match: str) -> None:
    _bad(mutate, match)


def test_sim_buffer_below_k_refused() -> None:
    # 8 full frames of buffer is a simulated queue of 8 packets, below K = 12
    _bad(lambda r: r["topology"].update(buffer_bytes=8 * 1538), r"= 8 full frames\): k=12")


def test_k_is_checked_only_against_the_chosen_engines_queue() -> None:
    """A simulator preset's K needs no BMv2 queue_pkts, and a testbed one no byte buffer."""
    sim = copy.deepcopy(GOOD)
    sim["engine"] = "sim"
    sim["topology"] = {"buffer_bytes": 80 * 1514}
    sim["schemes"][1]["k"] = 70  # above BMv2's default 64-packet queue, below 80 frames
    assert config.parse(sim).schemes[1].k == 70
    sim["engine"] = "auto"
    with pytest.raises(ExperimentError, match="bmv2: topology.queue_pkts"):
        config.parse(sim)
    bmv2 = copy.deepcopy(GOOD)
    bmv2["engine"] = "bmv2"
    bmv2["topology"]["buffer_bytes"] = 8 * 1514
    assert config.parse(bmv2).schemes[1].k == 12


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ExperimentError, match="cannot read"):
        config.load(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ExperimentError, match="not valid YAML"):
        config.load(bad)
    bad.write_text(yaml.safe_dump([1, 2]))
    with pytest.raises(ExperimentError, match="mapping at the top level"):
        config.load(bad)


def test_overrides_revalidate() -> None:
    exp = config.parse(GOOD)
    assert exp.with_overrides(senders=[2, 3], rounds=7).app.rounds == 7
    assert [s.name for s in exp.with_overrides(schemes=["front"]).schemes] == ["front"]
    with pytest.raises(ExperimentError, match="not in the experiment"):
        exp.with_overrides(schemes=["nope"])
    with pytest.raises(ExperimentError, match="senders"):
        exp.with_overrides(senders=[-1])


def test_variants_expand_to_one_validated_experiment_each() -> None:
    raw = {
        **GOOD,
        "variants": {"app.sru_bytes": [65536, 131072], "topology.buffer_bytes": [65536, 262144]},
    }
    exps = config.expand(raw)
    assert [e.name for e in exps] == [
        "t-sru64k-buf64k",
        "t-sru64k-buf256k",
        "t-sru128k-buf64k",
        "t-sru128k-buf256k",
    ]
    assert {(e.app.sru_bytes, e.topology.buffer_bytes) for e in exps} == {
        (a, b) for a in (65536, 131072) for b in (65536, 262144)
    }
    assert all(e.schemes == exps[0].schemes for e in exps)
    shipped = config.load_all(REPO / "experiments" / "sim.yaml")
    assert len(shipped) == 6 and all(max(e.senders) == 1000 for e in shipped)


def test_bad_variants_refused() -> None:
    with pytest.raises(ExperimentError, match="not one of"):
        config.expand({**GOOD, "variants": {"app.colour": [1]}})
    with pytest.raises(ExperimentError, match="non-empty list"):
        config.expand({**GOOD, "variants": {"app.rounds": []}})
    with pytest.raises(ExperimentError, match=r"variant t-buf1k: .*smaller than one packet"):
        config.expand({**GOOD, "variants": {"topology.buffer_bytes": [1024]}})
    claim = {"id": "c", "kind": "above_bound", "scheme": "a", "text": "x", "variant": "sru32k"}
    paper = {"cite": "x", "figure": "1", "claims": [claim]}
    with pytest.raises(ExperimentError, match=r"paper.claims: claim c names variant 'sru32k'"):
        config.expand({**GOOD, "paper": paper, "variants": {"app.sru_bytes": [65536]}})
