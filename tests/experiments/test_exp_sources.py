"""experiments/sources.py: every setting of a paper preset says where it comes
from (the paper's place, "not stated (searched: ...)", or an ablation's
"as <preset>"), so a reader of REPORT.md can check each one against the paper."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4incast.experiments import config, scenario, sources
from p4incast.reports.reproduce import PAPERS

PRESETS = sorted(PAPERS.rglob("*.yaml"))

PAPER = """\
name: toy
engine: sim
topology: {kind: incast_star, rto_min_ms: 10, buffer_bytes: 65536}
app: {sru_bytes: 65536, rounds: 10}
senders: [2, 4]
variants:
  transport.init_cwnd: [1, 10]
schemes:
  - {name: tcp, ecn: off, cc: reno}
paper:
  cite: "toy"
  figure: "Fig. 1"
  sources:
    engine: "§2 ¶1"
    topology.kind: "§2 ¶1"
    topology.rto_min_ms: "§2 ¶2"
    topology.buffer_bytes: "Table 1"
    app.sru_bytes: "§3 ¶1"
    app.rounds: "not stated (searched: §2, §3) — enough for intervals; ablation: none needed"
    senders: "Fig. 1 x-axis"
    variants.transport.init_cwnd: "not stated (searched: §2) — both readings"
    schemes.tcp: "§4 ¶1"
    app.connections: "§3 ¶2 — persistent (the default)"
"""

ABLATION = """\
name: toy-abl
engine: sim
topology: {kind: incast_star, rto_min_ms: 10, buffer_bytes: 65536}
app: {sru_bytes: 65536, rounds: 10}
senders: [2, 4]
variants:
  app.connections: [persistent, per-round]
schemes:
  - {name: tcp, ecn: off, cc: reno}
paper:
  cite: "ablation of toy"
  figure: "Fig. 1"
  sources:
    engine: as toy
    topology.kind: as toy
    topology.rto_min_ms: as toy
    topology.buffer_bytes: as toy
    app.sru_bytes: as toy
    app.rounds: as toy
    senders: as toy
    variants.app.connections: "ablation: a connection per request (§3 ¶2 does not say)"
    schemes.tcp: as toy
"""


@pytest.fixture
def papers(tmp_path: Path) -> Path:
    (tmp_path / "ablations").mkdir()
    (tmp_path / "toy.yaml").write_text(PAPER)
    (tmp_path / "ablations" / "toy-abl.yaml").write_text(ABLATION)
    return tmp_path


@pytest.mark.parametrize("path", PRESETS, ids=lambda p: p.stem)
def test_every_preset_setting_has_a_source(path: Path) -> None:
    """Each parameter of each shipped preset has a non-empty source, an "as" names
    a paper preset that has one for that key, and every source names a parameter."""
    raw = sources.read(path)
    got = sources.resolve(raw, PAPERS)  # refuses a source naming no parameter
    assert sources.unsourced(raw, PAPERS) == []
    assert all(text.strip() for text in got.values())
    scenario.of_path(path).load(path, {})  # the loader checks the sources too


def test_a_parameter_without_a_source_is_found(papers: Path) -> None:
    raw = sources.read(papers / "toy.yaml")
    assert sources.unsourced(raw, papers) == []
    del raw["paper"]["sources"]["app.rounds"]
    assert sources.unsourced(raw, papers) == ["app.rounds"]
    raw["schemes"].append({"name": "dctcp", "ecn": "tail", "k": 20, "cc": "dctcp"})
    assert sources.unsourced(raw, papers) == ["app.rounds", "schemes.dctcp"]


def test_parameters_are_what_the_file_sets(papers: Path) -> None:
    raw = sources.read(papers / "toy.yaml")
    assert sources.parameters(raw) == {
        "engine": "sim",
        "topology.kind": "incast_star",
        "topology.rto_min_ms": 10,
        "topology.buffer_bytes": 65536,
        "app.sru_bytes": 65536,
        "app.rounds": 10,
        "senders": [2, 4],
        "variants.transport.init_cwnd": [1, 10],
        "schemes.tcp": {"ecn": "off", "cc": "reno"},
    }
    # a section key a variant sweeps is the variant's
    raw["transport"] = {"init_cwnd": 3}
    assert "transport.init_cwnd" not in sources.parameters(raw)


def test_as_resolves_to_the_paper_preset_s_source(papers: Path) -> None:
    raw = sources.read(papers / "ablations" / "toy-abl.yaml")
    got = sources.resolve(raw, papers)
    assert got["topology.buffer_bytes"] == "Table 1 (as toy)"
    assert got["variants.app.connections"].startswith("ablation:")
    assert sources.unsourced(raw, papers) == []


def test_bad_references_give_one_clear_error(papers: Path) -> None:
    raw = sources.read(papers / "ablations" / "toy-abl.yaml")
    raw["paper"]["sources"]["transport.delayed_ack"] = "as toy"  # toy has none for it
    with pytest.raises(sources.SourceError, match="toy has no source for transport.delayed_ack"):
        sources.resolve(raw, papers)
    raw["paper"]["sources"]["transport.delayed_ack"] = "as nothing"
    with pytest.raises(sources.SourceError, match="no preset"):
        sources.resolve(raw, papers)
    (papers / "ablations" / "toy-abl.yaml").write_text(
        ABLATION.replace("app.rounds: as toy", "app.rounds: as toy\n    app.nothing: as toy")
    )
    with pytest.raises(config.ExperimentError, match="app.nothing: names no parameter"):
        config.load_all(papers / "ablations" / "toy-abl.yaml")
    (papers / "ablations" / "toy-abl.yaml").write_text(ABLATION)
    raw = sources.read(papers / "ablations" / "toy-abl.yaml")
    raw["paper"]["sources"]["schemes.dctcp"] = "§4 ¶2"  # a scheme the preset does not run
    with pytest.raises(sources.SourceError, match="schemes.dctcp: names no parameter"):
        sources.resolve(raw, papers)
    raw["paper"]["sources"] = {"variants.app.nothing": "§4 ¶2"}
    with pytest.raises(sources.SourceError, match="variants.app.nothing: names no parameter"):
        sources.check(raw, present=False)
    (papers / "ablations" / "toy-abl.yaml").write_text(
        ABLATION.replace("engine: as toy", 'engine: ""')
    )
    with pytest.raises(config.ExperimentError, match="engine: expected non-empty text"):
        config.load_all(papers / "ablations" / "toy-abl.yaml")


def test_as_is_followed_one_level_only(papers: Path) -> None:
    (papers / "toy2.yaml").write_text(PAPER.replace('engine: "§2 ¶1"', "engine: as toy"))
    raw = sources.read(papers / "ablations" / "toy-abl.yaml")
    raw["paper"]["sources"]["engine"] = "as toy2"
    with pytest.raises(sources.SourceError, match="one level only"):
        sources.resolve(raw, papers)


def test_the_table_shows_values_and_resolved_sources(papers: Path) -> None:
    lines = sources.table(sources.read(papers / "ablations" / "toy-abl.yaml"), papers)
    assert lines[0] == "| parameter | value | source |"
    assert "| variants.app.connections | [persistent, per-round] | ablation: a connection" in (
        "\n".join(lines)
    )
    assert "| schemes.tcp | ecn: off, cc: reno | §4 ¶1 (as toy) |" in lines
    toy = sources.table(sources.read(papers / "toy.yaml"), papers)
    assert "| app.connections | default: persistent | §3 ¶2 — persistent (the default) |" in toy
