"""Run records the experiments' and the reports' tests share: a hand-built run
dict of the shared result schema (experiments/SCHEMA.md) and a provenance
record (experiments/provenance.py). A module of its own, imported by name
(tests/reports puts this folder on sys.path): a conftest, one of several in
tests/, cannot be."""

from typing import Any


def _round(i: int, fcts: list[float], timeouts: int = 0) -> dict[str, Any]:
    done = max(fcts)
    return {
        "round": i,
        "completion_s": done,
        "bytes": 100_000 * len(fcts),
        "goodput_bps": 8 * 100_000 * len(fcts) / done,
        "fct_s": fcts,
        "timeouts": timeouts,
        "retrans": 3 * timeouts,
        "rto": timeouts > 0,
    }


def build_run(
    scheme: str = "mark-front", n: int = 2, repeat: int = 0, slow: float = 1.0, **over: Any
) -> dict[str, Any]:
    """Four rounds of n servers x 100 kB; with n = 2, slow = 1: goodputs 160, 80, 160, 200 Mbps.

    `slow` stretches every FCT (goodput divides by it). Round 1 has 2 RTOs.
    """
    base = [[0.005, 0.010], [0.010, 0.020], [0.010, 0.010], [0.008, 0.008]]
    rounds = [
        _round(i, [pattern[j % 2] * slow for j in range(n)], timeouts=2 if i == 1 else 0)
        for i, pattern in enumerate(base)
    ]
    run = {
        "scheme": scheme,
        "n": n,
        "repeat": repeat,
        "engine": "sim",
        "status": "ok",
        "error": None,
        "wall_s": 1.5,
        "base_rtt_ms": 0.1,
        "rounds": rounds,
        "switch": {
            "bottleneck_port": "2",
            "ports": {
                "1": {"marked": 999, "ect": 0, "ce_in": 0, "ecn_drop": 9, "queue_drops": 9,
                      "egress": 0, "hist": {"100": 1}},
                "2": {"marked": 30, "ect": 500, "ce_in": 0, "ecn_drop": 1, "queue_drops": 4,
                      "egress": 495, "hist": {"0": 50, "10": 45, "40": 5}},
            },
        },
    }  # fmt: skip
    run.update(over)
    return run


def fake_record(commit: str, dirty: bool = False) -> dict[str, Any]:
    return {
        "commit": commit,
        "dirty": dirty,
        "engine": "sim",
        "versions": {"ns3": "3.44.post0", "python": "3.11.2", "kernel": "6.1.0"},
        "host": "box",
        "cpus": 8,
        "loadavg": [0.5, 0.25, 0.125],
        "captured": "2026-11-26T10:00:00+00:00",
    }
