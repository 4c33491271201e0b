"""REPORT.md's section of a preset shows every setting with its value and where it
comes from (the preset's `paper.sources`, an ablation's "as <preset>" resolved
to that preset's source: experiments/sources.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from run_records import fake_record

from p4incast.experiments import atscale, config, results
from p4incast.reports import reproduce

PAPER = """\
# A toy paper preset.
name: toy
engine: sim
topology: {kind: incast_star, rto_min_ms: 10, buffer_bytes: 65536}
app: {sru_bytes: 65536, rounds: 4}
senders: [2]
schemes:
  - {name: tcp, ecn: off, cc: reno}
paper:
  cite: "toy"
  figure: "Fig. 1"
  sources:
    engine: "§2 ¶1 — a simulator"
    topology.kind: "§2 ¶1"
    topology.rto_min_ms: "§2 ¶2 | min RTO"
    topology.buffer_bytes: "Table 1"
    app.sru_bytes: "§3 ¶1"
    app.rounds: "not stated (searched: §2, §3) — four rounds; ablation: none needed"
    senders: "Fig. 1 x-axis"
    schemes.tcp: "§4 ¶1"
"""

ABLATION = """\
# A toy ablation.
name: toy-abl
engine: sim
topology: {kind: incast_star, rto_min_ms: 10, buffer_bytes: 65536}
app: {sru_bytes: 65536, rounds: 4}
senders: [2]
variants:
  transport.init_cwnd: [1, 10]
schemes:
  - {name: tcp, ecn: off, cc: reno}
paper:
  cite: "ablation of toy"
  figure: "Fig. 1, initial window"
  sources:
    engine: as toy
    topology.kind: as toy
    topology.rto_min_ms: as toy
    topology.buffer_bytes: as toy
    app.sru_bytes: as toy
    app.rounds: as toy
    senders: as toy
    variants.transport.init_cwnd: "ablation: IW1 (ns-3) vs IW10 (Linux); §2 does not say"
    schemes.tcp: as toy
"""


def section(path: Path, root: Path, make_run: Callable[..., dict[str, Any]]) -> str:
    exps = config.load_all(path)
    sets = []
    for exp in exps:
        rs = results.ResultSet(root / exp.name, exp.name, exp.as_dict())
        rs.start(fake_record("a" * 40))
        rs.add(make_run("tcp", 2, 0))
        sets.append(rs)
    return reproduce.report_section(path, exps, sets, root)


def test_a_section_shows_each_setting_with_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_run: Callable[..., dict[str, Any]]
) -> None:
    papers = tmp_path / "papers"
    (papers / "ablations").mkdir(parents=True)
    (papers / "toy.yaml").write_text(PAPER)
    (papers / "ablations" / "toy-abl.yaml").write_text(ABLATION)
    monkeypatch.setattr(reproduce, "PAPERS", papers)

    text = section(papers / "toy.yaml", tmp_path / "out", make_run)
    lines = text.splitlines()
    head = lines.index("| parameter | value | source |")
    assert lines[head + 1] == "|---|---|---|"
    rows = lines[head + 2 : head + 10]
    assert [r.split(" | ")[0] for r in rows] == [
        "| engine",
        "| topology.kind",
        "| topology.rto_min_ms",
        "| topology.buffer_bytes",
        "| app.sru_bytes",
        "| app.rounds",
        "| senders",
        "| schemes.tcp",
    ]
    assert "| topology.rto_min_ms | 10 | §2 ¶2 \\| min RTO |" in rows  # a | in the text escaped
    assert "| senders | [2] | Fig. 1 x-axis |" in rows
    assert "| schemes.tcp | ecn: off, cc: reno | §4 ¶1 |" in rows
    # the claims table is still the one report_diff reads; the settings table is not a claim
    assert reproduce.report_diff.parse_report(text) == []

    abl = section(papers / "ablations" / "toy-abl.yaml", tmp_path / "out", make_run)
    assert "| topology.buffer_bytes | 65536 | Table 1 (as toy) |" in abl.splitlines()
    row = "| variants.transport.init_cwnd | [1, 10] | ablation: IW1 (ns-3) vs IW10 (Linux);"
    assert row in abl


def test_a_bad_as_stops_the_report_with_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_run: Callable[..., dict[str, Any]]
) -> None:
    papers = tmp_path / "papers"
    (papers / "ablations").mkdir(parents=True)
    (papers / "toy.yaml").write_text(PAPER.replace('    senders: "Fig. 1 x-axis"\n', ""))
    (papers / "ablations" / "toy-abl.yaml").write_text(ABLATION)
    monkeypatch.setattr(reproduce, "PAPERS", papers)
    with pytest.raises(
        config.ExperimentError, match="toy-abl.yaml: .*toy has no source for senders"
    ):
        section(papers / "ablations" / "toy-abl.yaml", tmp_path / "out", make_run)


def test_the_at_scale_section_has_the_table_too(tmp_path: Path) -> None:
    preset = reproduce.PAPERS / "rcc-at-scale.yaml"
    exp = atscale.load(preset, {"loads": [0.3], "schemes": ["rcc"], "repeats": 1})
    rs = atscale.AT_SCALE.new_set(exp, tmp_path / "rcc-at-scale")
    text = reproduce.report_section(preset, [exp], [rs], tmp_path)
    lines = text.splitlines()
    head = lines.index("| parameter | value | source |")
    names = [r.split(" | ")[0][2:] for r in lines[head + 2 :] if r.startswith("| ")]
    assert {"fabric.tors", "traffic.mean_bytes", "loads", "schemes.rcc"} <= set(names)
    tors = next(r for r in lines if r.startswith("| fabric.tors | 40 | "))
    assert "§6.2" in tors


def test_a_baseline_row_says_whether_the_paper_states_its_setting(tmp_path: Path) -> None:
    """An ablation's baseline row is "(paper's setting)" only where the preset it
    ablates sources that setting in the paper; a setting its source calls "not
    stated" is "(our choice: REASON)", the reason taken from that source; a
    baseline claim without paper.baseline is judged by its scheme's source."""
    from p4incast.experiments import sources

    (tmp_path / "toy.yaml").write_text(PAPER)

    def label(baseline: dict[str, Any], claim: dict[str, Any]) -> str:
        raw = {"paper": {"cite": "ablation of toy.yaml (toy)", "baseline": baseline}}
        return sources.baseline_label(raw, claim, tmp_path)

    assert label({"topology.buffer_bytes": 65536}, {}) == "(paper's setting)"
    assert label({"app.rounds": 4}, {}) == "(our choice: app.rounds: four rounds)"
    assert label({}, {"scheme": "tcp"}) == "(paper's setting)"
    assert label({"app.jitter_us": 10}, {}) == "(our choice: app.jitter_us: toy gives no source)"
