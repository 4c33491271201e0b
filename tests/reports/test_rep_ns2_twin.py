"""Our model beside ns-2 (reports/ns2_twin.py): the twin table says where the two
engines disagree, and a claim ns-2 reproduces but our model does not is our
model's divergence."""

from __future__ import annotations

from run_records import build_run  # on sys.path: tests/reports/conftest.py

from p4incast.experiments.results import aggregate
from p4incast.reports import ns2_twin
from p4incast.reports.verdicts import evaluate


def _rows(engine: str, slow: float, repeats: int = 3) -> list[dict]:
    runs = [
        build_run("tcp", n=2, repeat=r, slow=slow * (1 + 0.01 * r), engine=engine)
        for r in range(repeats)
    ]
    return aggregate(runs)


def test_the_twin_flags_goodputs_whose_intervals_do_not_overlap() -> None:
    """Two engines with the same records agree; ours at a quarter of ns-2's goodput
    (every FCT four times longer, build_run: 160/80/160/200 Mbit/s a round on
    ns-2, 40/20/40/50 on ours) disagree, and the table marks our cell with ✗."""
    same = ns2_twin.compare(_rows("ns2", 1.0), _rows("sim", 1.0))
    assert same[0]["goodput_mbps_agree"] is True
    rows = ns2_twin.compare(_rows("ns2", 1.0), _rows("sim", 4.0))
    (row,) = rows
    assert row["goodput_mbps_agree"] is False
    assert row["goodput_mbps_diff"] < 0
    lines = ns2_twin.table(rows)
    assert "✗" in lines[2].split("|")[4]
    assert lines[-1].startswith("Disagreements (✗): goodput (Mbit/s) 1/1")


def test_a_claim_ns2_reproduces_and_ours_misses_is_our_models_divergence() -> None:
    """A claim "about X Mbit/s at N = 2" with X at ns-2's mean (about 150 Mbit/s:
    build_run's rounds carry 160, 80, 160 and 200) holds on ns-2; ours, a quarter
    of it, diverges: the divergence is our model's."""
    ns2_rows, sim_rows = _rows("ns2", 1.0), _rows("sim", 4.0)
    target = round(ns2_rows[0]["goodput_mbps"])
    claim = {"id": "tcp-at-2", "kind": "near", "scheme": "tcp", "n": 2, "value": target,
             "text": "about that at N = 2"}  # fmt: skip
    (pair,) = ns2_twin.judge([claim], sim_rows, ns2_rows, {"axis": "n"}, ("tcp",))
    ours, theirs = pair
    assert (ours.verdict, theirs.verdict) == ("diverges", "holds")
    assert ns2_twin.attribute(ours, theirs) == ns2_twin.OURS_DIVERGES
    lines = ns2_twin.section([("", ns2_rows, sim_rows)], [pair], "note")
    assert any("the divergence is our model's" in line for line in lines)
    # a claim about a scheme ns-2 did not run is not judged on it
    other = {**claim, "scheme": "batched"}
    assert ns2_twin.judge([other], sim_rows, ns2_rows, {"axis": "n"}, ("tcp",)) == []
    assert evaluate(claim, ns2_rows, {"axis": "n"}).verdict == "holds"


def test_near_zero_intervals_a_hair_apart_are_not_a_disagreement() -> None:
    """Every round an RTO: both engines' intervals are a hair wide. 1 % apart
    (ns2_twin.MIN_EFFECT is 2 %) agrees; 10 % apart does not."""

    def row(gp: float) -> dict:
        return {"scheme": "tcp", "n": 11, "goodput_mbps": gp, "goodput_mbps_ci_lo": gp * 0.999,
                "goodput_mbps_ci_hi": gp * 1.001, "goodput_mbps_ci_n": 5,
                "goodput_mbps_ci_method": "t"}  # fmt: skip

    assert ns2_twin.compare([row(4.40)], [row(4.44)])[0]["goodput_mbps_agree"] is True
    assert ns2_twin.compare([row(4.40)], [row(4.84)])[0]["goodput_mbps_agree"] is False
