"""reports/cost.py: worker time from the run records and the papers' setting
(100 rounds × 5 repeats) projected to this machine and to 100 Ray workers."""

from __future__ import annotations

import dataclasses

import pytest

from p4incast.reports import cost
from p4incast.reports.cost import Group

GROUPS = [
    Group("toy", "incast", (("a N=2 #0", 1.5), ("b N=2 #0", 2.5)), 0, rounds=4, repeats=1),
    Group("fig7", "incast", (("x N=10 #2", 10.0),), 1, rounds=100, repeats=3),
    Group(
        "rcc-at-scale",
        "rcc-at-scale",
        (("rcc load 0.5 #0", 30.0), ("tcp load 0.1 #1", 6.0)),
        0,
        rounds=None,
        repeats=3,
    ),
]


def test_scales_to_the_papers_rounds_and_repeats() -> None:
    toy, fig7, scale = GROUPS
    assert toy.scale == pytest.approx(125.0) and toy.point_scale == pytest.approx(25.0)
    assert fig7.scale == pytest.approx(5 / 3) and fig7.point_scale == pytest.approx(1.0)
    assert scale.scale == 1.0 and scale.point_scale == 1.0  # at scale: kept as run


def test_cost_from_hand_numbers() -> None:
    c = cost.cost(GROUPS)
    assert (c.runs, c.missing) == (5, 1)
    assert c.worker_s == pytest.approx(50.0)
    assert c.mean_s == pytest.approx(10.0)
    assert (c.longest_s, c.longest) == (30.0, "rcc-at-scale: rcc load 0.5 #0")
    assert c.papers_worker_s == pytest.approx(4 * 125 + 10 * 5 / 3 + 36)
    assert c.local_hours(2) == pytest.approx((500 + 50 / 3 + 36) / 2 / 3600)
    # incast sweep: its longest point at 100 rounds (2.5 s × 25) beats 516.7 s / 100;
    # the at-scale sweep: its longest point, 30 s; each over the efficiency, summed
    assert c.cluster_s == pytest.approx(62.5 / 0.92 + 30 / 0.92)
    # one worker: the work bounds each sweep
    one = cost.cluster_seconds(GROUPS, workers=1)
    assert one == pytest.approx((500 + 50 / 3) / 0.92 + 36 / 0.92)
    assert cost.cost([]).runs == 0 and cost.cluster_seconds([]) == 0.0


def test_walls_of_records() -> None:
    records = [
        {"scheme": "a", "n": 2, "repeat": 0, "wall_s": 1.25},
        {"scheme": "a", "n": 4, "repeat": 1, "wall_s": None},
        {"scheme": "b", "n": 4, "repeat": 0},
        {"scheme": "b", "n": 8, "repeat": 0, "wall_s": True},
        {"scheme": "b", "n": 8, "repeat": 1, "wall_s": 3},
        {"scheme": "b", "n": 8, "repeat": 1, "wall_s": 3, "shared_from": "fig7-sru64k"},
    ]
    walls, missing = cost.walls_of(records)
    assert walls == (("a N=2 #0", 1.25), ("b N=8 #1", 3.0))
    assert missing == 3
    scale, _ = cost.walls_of([{"scheme": "rcc", "load": 0.5, "repeat": 2, "wall_s": 7.0}],
                             "{scheme} load {load} #{repeat}")  # fmt: skip
    assert scale == (("rcc load 0.5 #2", 7.0),)


def test_section_prints_what_the_records_say() -> None:
    text = "\n".join(cost.section(GROUPS, None, 2))
    assert text.startswith("## Cost, and the papers' rounds\n")
    assert (
        "5 runs (1 more without a wall time): 50 worker-seconds (50.0 s), mean point 10.0 s, "
        "longest 30.0 s (rcc-at-scale: rcc load 0.5 #0)." in text
    )
    assert "wall time was not recorded" in text
    assert "| toy | 2 | 4 × 1 | 4 | 125 | 0.14 |" in text
    assert "| fig7 | 1 | 100 × 3 | 10 | 1.67 | 0.00 |" in text
    assert "| rcc-at-scale | 2 | not round-based, 3 repeats | 36 | 1 | 0.01 |" in text
    total = 500 + 50 / 3 + 36
    minutes = (62.5 + 30) / 0.92 / 60
    assert (
        f"In all {total / 3600:.1f} worker-hours: {total / 2 / 3600:.1f} h on this machine's "
        f"2 cores; {minutes:.1f} min on a Ray cluster of 100 workers" in text
    )
    assert "efficiency 0.92" in text
    ran = "\n".join(cost.section(GROUPS, 150.0, 4))
    assert "The run took 2.5 min wall time on 4 cores." in ran
    assert cost.section([], None, 2)[-2] == "No run records with a wall time."


def test_section_counts_shared_runs_apart() -> None:
    shared = [*GROUPS[:-1], dataclasses.replace(GROUPS[-1], shared=3)]
    text = "\n".join(cost.section(shared, None, 2))
    assert "5 runs (1 more without a wall time) (and 3 identical to a point of another" in text
    assert cost.cost(shared).worker_s == cost.cost(GROUPS).worker_s
