"""The domain model every layer of p4-incast imports, and nothing else defines.

Pure: no I/O, no network, no engine. Each vocabulary (ECN modes, congestion
controls, agent policies, topologies), each wire constant and each rule that
checks a setting lives here once:

- `ecn`      — the marking modes and their pipeline encoding (defines.p4)
- `wire`     — segment, frame and wire sizes, each with its unit
- `scheme`   — Scheme, Topology, App, Point and RunResult, with their checks
- `batching` — seed-003 application-level batch scheduling (docs/algorithms.md §4)
"""

from .errors import ModelError

__all__ = ["ModelError"]
