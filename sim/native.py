"""Load the simulator's C++ (sim/cpp/*.h) into this process through ns-3's cppyy bindings.

`load()` imports ns-3 (`pip install ns3`; about 20 s the first time in a
process) and compiles the headers once; later calls return the same namespace.
`available()` says whether ns-3 can be imported at all, with the reason when not.
"""

from __future__ import annotations

import array
import functools
import importlib.util
from collections.abc import Iterable
from pathlib import Path
from typing import Any

CPP_DIR = Path(__file__).resolve().parent / "cpp"


def available() -> tuple[bool, str]:
    """(True, "") when `import ns` can work here, else (False, why)."""
    if importlib.util.find_spec("ns") is None:
        return False, "ns-3 is not installed (pip install ns3)"
    return True, ""


@functools.cache
def load() -> Any:
    """The C++ namespace `p4i` (EcnQueue, RxAgent, Scenario, ...), compiled once per process."""
    ok, why = available()
    if not ok:
        raise RuntimeError(why)
    # `from ns import ns` loads ns-3 and cppyy. ns-3's `ns` package is a stub that
    # puts ns3.ns in its place at import time: no checker can see that `ns`.
    import cppyy  # ns-3 (and with it cppyy) is optional and heavy: loaded on first use only
    from ns import ns  # noqa: F401  # pyright: ignore[reportAttributeAccessIssue]

    cppyy.add_include_path(str(CPP_DIR))
    cppyy.include("scenario.h")
    cppyy.include("conformance.h")
    cppyy.include("atscale.h")
    cppyy.include("rx_rotation_probe.h")
    cppyy.include("switch_budget_probe.h")
    return cppyy.gbl.p4i


def double_vector(values: list[float]) -> Any:
    """A std::vector<double> for a RunConfig field (cppyy is loaded by `load()`)."""
    import cppyy  # loaded with ns-3 by load(); kept out of import time on purpose

    return cppyy.gbl.std.vector["double"](values)


# array.array's type code whose items cppyy passes as a `uint64_t*` (unsigned
# long: 8 bytes on the 64-bit Linux ns-3's wheels are built for).
U64 = "L"


def u64_array(values: Iterable[int]) -> array.array[int]:
    """An array of uint64_t the model's C++ takes as a pointer (flow keys, windows,
    counters): built and read in C, where a std::vector crosses item by item."""
    out = array.array(U64, values)
    if out.itemsize != 8:
        raise RuntimeError(f"array type {U64!r} is {out.itemsize} bytes here, not 8")
    return out


def int_vector(values: Iterable[int]) -> Any:
    """A std::vector<int> for a config field (cppyy is loaded by `load()`)."""
    import cppyy  # loaded with ns-3 by load(); kept out of import time on purpose

    return cppyy.gbl.std.vector["int"]([int(v) for v in values])
