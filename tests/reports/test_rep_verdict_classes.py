"""Issue 28, item 2: a paper claim's verdict in REPORT.md is holds, diverges —
explained by an ablation (a claim of the same id that holds in one of the
ablation's variants, in the same report), or diverges — unexplained; computed
from the results, never typed."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from run_records import fake_record

from p4incast.experiments import config, results
from p4incast.reports import reproduce
from p4incast.reports.verdicts import (
    DIVERGES,
    EXPLAINED,
    HOLDS,
    INCONCLUSIVE,
    NO_DATA,
    UNEXPLAINED,
    Verdict,
    class_counts,
    classify,
)
from p4incast.sim import native

MakeRun = Callable[..., dict[str, Any]]


def v(
    cid: str, verdict: str, variant: str = "", baseline: bool = False, allowed: bool = True
) -> Verdict:
    """A verdict; an ablation's row `allowed`: its setting a reading the paper allows
    (reproduce.verdict_rows sets the place from the ablation's paper.allows)."""
    claim: dict[str, Any] = {
        "id": cid,
        "text": f"{cid} text",
        **({"variant": variant} if variant else {}),
        **({"allowed": "§x: not stated"} if allowed else {}),
    }
    if baseline:
        claim["baseline"] = True
    return Verdict(claim, verdict, "ours")


# -- the pure classifier ---------------------------------------------------------


def test_holds_inconclusive_and_no_data_keep_their_verdicts() -> None:
    paper = [("p", v("a", HOLDS)), ("p", v("b", INCONCLUSIVE)), ("p", v("c", NO_DATA))]
    out = classify(paper, [("abl", v("a", DIVERGES)), ("abl", v("b", HOLDS))])
    assert [c.cls for c in out] == [HOLDS, INCONCLUSIVE, NO_DATA]
    assert [c.label for c in out] == ["holds", "inconclusive", "no data"]


def test_diverges_explained_by_an_ablation_that_holds_in_one_variant() -> None:
    ablation = [("abl", v("a", DIVERGES, "v1")), ("abl", v("a", HOLDS, "v2"))]
    (c,) = classify([("p", v("a", DIVERGES, "sru64k"))], ablation)
    assert c.cls == EXPLAINED
    assert c.explained_by == (("abl", "v2"),)
    assert c.label == "diverges — explained by abl (v2)"


def test_a_setting_the_paper_does_not_allow_explains_nothing() -> None:
    """Item 7 of issue 46: NewDCTCP's dctcp-collapses-near-25 holds under a 200 ms
    RTO_min, which §5.1.2 contradicts (10 ms): the flip explains nothing."""
    ablation = [
        ("newdctcp-rto-min", v("a", DIVERGES, "rto10", baseline=True)),
        ("newdctcp-rto-min", v("a", HOLDS, "rto200", allowed=False)),
    ]
    (c,) = classify([("p", v("a", DIVERGES))], ablation)
    assert c.cls == UNEXPLAINED and c.not_allowed == (("newdctcp-rto-min", "rto200"),)
    assert c.label == (
        "diverges — unexplained (newdctcp-rto-min (rto200) flips it under a setting "
        "the paper does not allow)"
    )
    # the same flip under a reading the paper leaves open explains it
    ablation[1] = ("newdctcp-rto-min", v("a", HOLDS, "rto200"))
    (c,) = classify([("p", v("a", DIVERGES))], ablation)
    assert c.cls == EXPLAINED


def test_the_report_rule_table_classes_an_allowed_and_a_contradicted_setting() -> None:
    from p4incast.reports.verdicts import explaining_examples

    ok, no = explaining_examples()
    assert ok.cls == EXPLAINED and ok.explained_by == (("rcc-at-scale-init-cwnd", ""),)
    assert no.cls == UNEXPLAINED
    assert no.not_allowed == (("newdctcp-rto-min", "rto_min_ms200-sru64k"),)


def test_explained_names_every_ablation_and_variant_where_it_holds() -> None:
    ablation = [
        ("abl", v("a", HOLDS, "v1")),
        ("abl", v("a", HOLDS, "v2")),
        ("other", v("a", HOLDS)),
    ]
    (c,) = classify([("p", v("a", DIVERGES))], ablation)
    assert c.label == "diverges — explained by abl (v1, v2); other"


def test_an_ablation_explains_only_when_its_own_verdict_flips() -> None:
    """The ablation's row under the paper's own setting (baseline) must not hold:
    when it holds there too, the ablated setting changed nothing the paper's
    divergence could be blamed on (ours differs from the paper's preset run only
    by noise or by the ablation's own rounds), so nothing is explained."""
    flips = [("abl", v("a", DIVERGES, "v1", baseline=True)), ("abl", v("a", HOLDS, "v2"))]
    (c,) = classify([("p", v("a", DIVERGES))], flips)
    assert c.cls == EXPLAINED and c.explained_by == (("abl", "v2"),)
    agrees = [("abl", v("a", HOLDS, "v1", baseline=True)), ("abl", v("a", HOLDS, "v2"))]
    (c,) = classify([("p", v("a", DIVERGES))], agrees)
    assert c.cls == UNEXPLAINED
    # a baseline row alone never explains, even when it holds
    (c,) = classify([("p", v("a", DIVERGES))], [("abl", v("a", HOLDS, baseline=True))])
    assert c.cls == UNEXPLAINED
    # another ablation that flips still explains
    both = [*agrees, ("other", v("a", HOLDS))]
    (c,) = classify([("p", v("a", DIVERGES))], both)
    assert c.cls == EXPLAINED and c.explained_by == (("other", ""),)


def test_a_flip_that_breaks_what_the_preset_reproduces_explains_nothing() -> None:
    """A setting under which the divergent claim holds but a claim the paper preset
    reproduces diverges (a coarser RTO that makes DCTCP collapse as the paper says,
    and NewDCTCP collapse where the paper says it holds) is not the paper's
    setting either: the divergence stays unexplained, and the report says why."""
    paper = [("p", v("dctcp-collapses", DIVERGES)), ("p", v("newdctcp-holds", HOLDS))]
    ablation = [
        ("abl", v("dctcp-collapses", DIVERGES, "rto10", baseline=True)),
        ("abl", v("newdctcp-holds", HOLDS, "rto10", baseline=True)),
        ("abl", v("dctcp-collapses", HOLDS, "rto200")),
        ("abl", v("newdctcp-holds", DIVERGES, "rto200")),
    ]
    c, _ = classify(paper, ablation)
    assert c.cls == UNEXPLAINED and c.explained_by == ()
    assert c.broke == (("abl", "rto200", "newdctcp-holds"),)
    assert c.label == "diverges — unexplained (abl (rto200) flips it but breaks newdctcp-holds)"
    # the same flip with the other claim intact (or inconclusive there) explains
    intact = [*ablation[:3], ("abl", v("newdctcp-holds", INCONCLUSIVE, "rto200"))]
    c, _ = classify(paper, intact)
    assert c.cls == EXPLAINED and c.explained_by == (("abl", "rto200"),)
    # a claim the preset itself does not reproduce cannot be broken
    diverging = [("p", v("dctcp-collapses", DIVERGES)), ("p", v("newdctcp-holds", DIVERGES))]
    c, _ = classify(diverging, ablation)
    assert c.cls == EXPLAINED


def test_ablation_presets_name_the_variant_that_is_the_papers_setting() -> None:
    """Every ablation with variants names its baseline (paper.baseline), one of
    its own variants, so classify can tell a flip from agreement."""
    ablations = sorted((reproduce.PAPERS / "ablations").glob("*.yaml"))
    assert ablations
    for path in ablations:
        raw = config.read_yaml(path)
        if raw.get("variants") and (raw.get("paper") or {}).get("claims"):
            exps = config.load_all(path)
            assert sum(e.paper is not None and e.paper.is_baseline(e) for e in exps) >= 1, path.name


def test_a_baseline_outside_the_variants_is_refused() -> None:
    raw = config.read_yaml(reproduce.PAPERS / "ablations" / "newdctcp-rto-min.yaml")
    raw["paper"]["baseline"] = {"topology.rto_min_ms": 50}
    with pytest.raises(config.ExperimentError, match=r"paper.baseline: topology.rto_min_ms: 50"):
        config.expand(raw)


def test_diverges_where_the_ablation_also_diverges_is_unexplained() -> None:
    ablation = [("abl", v("a", DIVERGES, "v1")), ("abl", v("a", INCONCLUSIVE, "v2"))]
    (c,) = classify([("p", v("a", DIVERGES))], ablation)
    assert c.cls == UNEXPLAINED and c.explained_by == () and c.not_run == ()
    assert c.label == "diverges — unexplained"


def test_an_ablation_with_another_claim_id_does_not_explain() -> None:
    (c,) = classify([("p", v("a", DIVERGES))], [("abl", v("b", HOLDS)), ("abl", v("a-2", HOLDS))])
    assert c.cls == UNEXPLAINED
    assert c.label == "diverges — unexplained"


def test_unexplained_names_the_ablations_without_results_for_that_id() -> None:
    ablation = [
        ("ran", v("a", DIVERGES, "v1")),
        ("ran", v("a", NO_DATA, "v2")),  # has results in v1: it ran
        ("unrun", v("a", NO_DATA)),
        ("unrun-other-id", v("b", NO_DATA)),
    ]
    (c,) = classify([("p", v("a", DIVERGES))], ablation)
    assert c.cls == UNEXPLAINED and c.not_run == ("unrun",)
    assert c.label == "diverges — unexplained (no data for it in: unrun)"


def test_class_counts_has_every_class() -> None:
    out = classify(
        [("p", v("a", HOLDS)), ("p", v("b", DIVERGES)), ("q", v("c", DIVERGES))],
        [("abl", v("b", HOLDS))],
    )
    assert class_counts(out) == {
        HOLDS: 1,
        EXPLAINED: 1,
        UNEXPLAINED: 1,
        INCONCLUSIVE: 0,
        NO_DATA: 0,
    }


# -- REPORT.md rebuilt (--report-only) from hand-made results folders --------------

HEAD = """engine: sim
topology: {kind: incast_star, rto_min_ms: 10, link_gbps: 1.0, delay_us: 25, buffer_bytes: 65536}
app: {sru_bytes: 65536, mode: per-server, rounds: 4}
transport: {init_cwnd: 10, delayed_ack: true}
senders: [2, 4]
schemes:
  - {name: a, ecn: off, cc: reno}
  - {name: b, ecn: off, cc: reno}
"""
PAPER = f"""# A toy paper preset.
name: toy
{HEAD}paper:
  cite: "toy"
  figure: "Fig. 1"
  claims:
    - {{id: a-first, kind: ordering, schemes: [a, b], text: "a beats b"}}
    - {{id: a-fast, kind: at_least, scheme: a, value: 1000000, text: "a is very fast"}}
    - {{id: b-first, kind: ordering, schemes: [b, a], text: "b beats a"}}
"""
ABLATION = f"""# Ablation of toy: init_cwnd.
name: toy-abl
{HEAD}variants:
  transport.init_cwnd: [3, 10]
paper:
  cite: "ablation of toy.yaml"
  figure: "Fig. 1, init_cwnd"
  allows: {{transport.init_cwnd: {{3: "toy §1: not stated", 10: "toy §1: not stated"}}}}
  claims:
    - {{id: a-first, kind: ordering, schemes: [a, b], text: "a beats b"}}
"""
UNRUN = f"""# Ablation of toy, never run here.
name: toy-unrun
{HEAD}paper:
  cite: "ablation of toy.yaml"
  figure: "Fig. 1, nothing"
  claims:
    - {{id: a-fast, kind: at_least, scheme: a, value: 1000000, text: "a is very fast"}}
"""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """experiments/papers/ replaced by a toy paper preset and two ablations of it."""
    ok, why = native.available()
    if not ok:
        pytest.skip(f"reproduce needs the simulator engine: {why}")
    papers = tmp_path / "papers"
    (papers / "ablations").mkdir(parents=True)
    (papers / "toy.yaml").write_text(PAPER)
    (papers / "ablations" / "toy-abl.yaml").write_text(ABLATION)
    (papers / "ablations" / "toy-unrun.yaml").write_text(UNRUN)
    monkeypatch.setattr(reproduce, "PAPERS", papers)
    monkeypatch.setattr(reproduce, "ABLATIONS", papers / "ablations")
    return tmp_path / "out"


PROVENANCE = fake_record("a" * 40)


def write_results(root: Path, stem: str, slow_a: list[float], make_run: MakeRun) -> None:
    """One results folder per variant of the preset: scheme a `slow_a[i]` times
    slower than b (ordering a, b holds when < 1) in variant i. Every round of a run
    alike (make_run's last), so each 95 % interval has zero width and an ordering
    is decided on its means."""
    path = reproduce.PAPERS / f"{stem}.yaml"
    if not path.is_file():
        path = reproduce.ABLATIONS / f"{stem}.yaml"
    for exp, slow in zip(config.load_all(path), slow_a, strict=True):
        d = root / path.relative_to(reproduce.PAPERS).with_suffix("") / exp.name
        rs = results.ResultSet(d, exp.name, exp.as_dict())
        rs.start(PROVENANCE)
        for n in exp.senders:
            for scheme, factor in (("a", slow), ("b", 1.0)):
                run = make_run(scheme, n, 0, slow=factor)
                run["rounds"] = [{**run["rounds"][-1], "round": i} for i in range(4)]
                rs.add(run)


def report_verdicts(report: str) -> dict[str, str]:
    """claim (variant) -> the verdict column, from the tables of the report."""
    row = re.compile(r"^\| (\S+(?: \([^)]*\))?) \| .* \| \*\*(.+)\*\* \|$")
    out = {}
    for line in report.splitlines():
        m = row.match(line)
        if m:
            out.setdefault(m.group(1), m.group(2))  # the paper preset's section comes first
    return out


def recomputed(root: Path) -> dict[str, str]:
    """The toy preset's classes recomputed here from the results folders."""
    verdicts = []
    for path in [reproduce.PAPERS / "toy.yaml", reproduce.ABLATIONS / "toy-abl.yaml"]:
        exps = config.load_all(path)
        sets = []
        for e in exps:
            d = root / path.relative_to(reproduce.PAPERS).with_suffix("") / e.name
            sets.append(results.load(d) if (d / "results.json").is_file() else None)
        if any(s is None for s in sets):
            continue
        verdicts.append((path, reproduce.verdict_rows(exps, sets, reproduce.base_name(path, exps))))
    paper = [("toy", x) for p, vs in verdicts if p.stem == "toy" for x in vs]
    ablation = [(p.stem, x) for p, vs in verdicts if p.stem != "toy" for x in vs]
    ablation += [("toy-unrun", Verdict({"id": "a-fast"}, NO_DATA, "not run"))]
    return {c.verdict.claim["id"]: c.label for c in classify(paper, ablation)}


def build(root: Path) -> str:
    assert reproduce.main(["--only", "toy", "toy-abl", "--report-only", "--out", str(root)]) == 0
    return (root / "REPORT.md").read_text()


def test_report_counts_and_classes(toy: Path, make_run: MakeRun) -> None:
    write_results(toy, "toy", [2.0], make_run)  # a slower than b: a-first diverges
    write_results(toy, "toy-abl", [2.0, 0.5], make_run)  # a-first holds with init_cwnd 10
    report = build(toy)
    head = report.split("## ", 1)[0]
    assert (
        "Paper claims (3, ablations' own rows not counted): 1 hold; "
        "1 diverge, explained by an ablation; 1 diverge, unexplained; "
        "0 inconclusive; 0 no data." in head
    )
    assert "- toy: a-fast — no data for it in: toy-unrun" in head
    assert head.index("Results from commit") < head.index("Paper claims")  # after provenance
    # the rules' table: one claim that holds and one that fails under each rule
    rules = report.split("## The rules, each failing both ways", 1)[1].split("\n## ", 1)[0]
    assert "| `ORDERING_RULE, MIN_EFFECT` |" in rules
    assert "newdctcp-fig9a/newdctcp-stays-ahead" in rules and "— **diverges** |" in rules
    got = report_verdicts(report)
    assert got["a-first"] == "diverges — explained by toy-abl (init_cwnd10)"
    assert got["a-fast"] == "diverges — unexplained (no data for it in: toy-unrun)"
    assert got["b-first"] == "holds"
    # the ablation's own rows keep their plain verdicts
    assert got["a-first (init_cwnd3)"] == "diverges"
    assert got["a-first (init_cwnd10)"] == "holds"
    assert {k: got[k] for k in ("a-first", "a-fast", "b-first")} == recomputed(toy)


def test_report_follows_the_results_not_its_previous_text(toy: Path, make_run: MakeRun) -> None:
    """The classes are recomputed from the results on every build: when the
    ablation's results stop holding, the explanation goes, and the report agrees
    with a classification recomputed here from the same folders."""
    write_results(toy, "toy", [2.0], make_run)
    write_results(toy, "toy-abl", [2.0, 0.5], make_run)
    assert report_verdicts(build(toy))["a-first"].startswith("diverges — explained by")
    write_results(toy, "toy-abl", [2.0, 3.0], make_run)  # now it diverges in both variants
    report = build(toy)
    got = report_verdicts(report)
    assert got["a-first"] == "diverges — unexplained"
    assert "1 hold; 0 diverge, explained by an ablation; 2 diverge, unexplained;" in report
    assert "- toy: a-first\n" in report
    assert {k: got[k] for k in ("a-first", "a-fast", "b-first")} == recomputed(toy)


def test_report_with_the_ablation_unrun_says_so(toy: Path, make_run: MakeRun) -> None:
    """--only the paper preset: its divergences are unexplained, naming every
    ablation with a claim of that id that has no results in this report."""
    write_results(toy, "toy", [2.0], make_run)
    write_results(toy, "toy-abl", [2.0, 0.5], make_run)  # on disk, but not in this report
    assert reproduce.main(["--only", "toy", "--report-only", "--out", str(toy)]) == 0
    got = report_verdicts((toy / "REPORT.md").read_text())
    assert got["a-first"] == "diverges — unexplained (no data for it in: toy-abl)"
    assert got["a-fast"] == "diverges — unexplained (no data for it in: toy-unrun)"


def test_at_scale_section_shows_the_class(tmp_path: Path) -> None:
    """An at-scale preset's section has the same claims table, with the class too."""
    from p4incast.experiments import atscale

    preset = reproduce.PAPERS / "rcc-at-scale.yaml"
    exp = atscale.load(preset, {"loads": [0.3, 0.6], "schemes": ["tcp", "rcc"], "repeats": 1})
    rs = atscale.AT_SCALE.new_set(exp, tmp_path / "rcc-at-scale")
    for p in exp.points():
        drops = {"tor": 3 if p.scheme.name == "tcp" else 0, "root": 0}
        rs.add({"scheme": p.scheme.name, "load": p.load, "repeat": 0, "status": "ok",
                "fct_ms": [1.0, 2.0], "offered_load": p.load, "long_mbps": [500.0],
                "drops": drops, "short_timeouts": 0, "wall_s": 0.1})  # fmt: skip
    c = reproduce.verdict_rows([exp], [rs], "rcc-at-scale")[0]  # the preset's first claim
    assert (c.claim["id"], c.verdict, c.ours) == ("rcc-drops-from-60", DIVERGES, "30%: 0, 60%: 0")
    classified = classify([("rcc-at-scale", c)], [("abl", v("rcc-drops-from-60", HOLDS))])
    text = reproduce.report_section(preset, [exp], [rs], tmp_path, classified)
    row = "| rcc-drops-from-60 | §6.2 ¶7, Fig. 8(c): RCC first drops at 60 % offered load (drops)"
    row += " | 30%: 0, 60%: 0"
    assert f"{row} | **diverges — explained by abl** |" in text
    assert text.startswith("## rcc-at-scale (at scale)")
    plain = reproduce.report_section(preset, [exp], [rs], tmp_path)
    assert f"{row} | **diverges** |" in plain
