"""The step times of a policy stepped incrementally (the simulator's
Ictcp.step_changes and Rcc.step_changes), and the replay of a per-flow clock
left unvisited over some of them.

A clock of the kind both policies keep moves, at each step j, to that step's
time when `not times[j] - t0 < lim` (t0: its time now, always a step's). A
flow that moves on nothing but that clock is not visited; when it next is,
`StepTimes.replay` says where the clock stands, on the same floats the full
step would have compared.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

__all__ = ["STEP_SLACK_S", "StepTimes"]

# Bound on the rounding of a difference of two step times (< 120 s: ulp ~1e-14).
STEP_SLACK_S = 1e-12


@dataclass
class StepTimes:
    times: list[float] = field(default_factory=list)  # every step's `now`
    gap_min: float = math.inf  # the shortest and longest time between two steps
    gap_max: float = 0.0

    def add(self, now: float) -> int:
        """A step at `now` (ascending); returns its index."""
        times = self.times
        if times:
            gap = now - times[-1]
            self.gap_min, self.gap_max = min(self.gap_min, gap), max(self.gap_max, gap)
        times.append(now)
        return len(times) - 1

    def replay(self, t0: float, lo: int, idx: int, lim: float) -> float:
        """The clock at t0 (a step's time) after steps lo .. idx − 1: at the
        first step j with not times[j] − t0 < lim it moves to times[j], and so
        on from there."""
        times = self.times
        if lo >= idx:
            return t0
        # Steps apart by gaps in [gap_min, gap_max]: when h gaps always reach lim
        # and h − 1 never do (by more than any rounding of a difference of two
        # times), every move is h steps, from t0's own step on.
        h = max(1, math.ceil((lim + STEP_SLACK_S) / self.gap_min))
        if h * self.gap_min - STEP_SLACK_S >= lim > (h - 1) * self.gap_max + STEP_SLACK_S:
            s0 = bisect.bisect_left(times, t0, 0, lo)  # t0 is a step's time
            last = s0 + (idx - 1 - s0) // h * h
            return times[last] if last >= lo else t0
        while lo < idx:
            # the first such j: times ascend and a float difference is monotonic,
            # so bisect, then settle on the exact test
            j = bisect.bisect_left(times, t0 + lim, lo, idx)
            while j > lo and not times[j - 1] - t0 < lim:
                j -= 1
            while j < idx and times[j] - t0 < lim:
                j += 1
            if j >= idx:
                break
            t0, lo = times[j], j + 1
        return t0
