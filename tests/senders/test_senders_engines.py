"""The two engines see the same episodes: for every case of the table, the Linux
kernel (kernel_lab) and the ns-3 model (ns3_lab) begin the same congestion
episodes with the same cwnd0 and marks, so the papers' equations give the same
expected ssthresh in both, and both end within its tolerance. The segments
outstanding when an episode begins are not compared: in the kernel they depend
by one segment on whether the sender's next transmission or the ACK that starts
the episode is handled first (on a loaded machine: 81 or 82 at cwnd 80). The
equation that reads them, NewDCTCP's, carries them into `expected`, which is
compared.

The kernel's flow runs on the machine's clock: once, in CI under load, a kernel
run of the `rto` case recorded no episode where the script forces a timeout
(70 runs here, idle and with both cores busy, all recorded it). So a case whose
kernel run disagrees is run in the kernel once more, and it disagrees only if
both runs do; both are named in the failure."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kernel_lab import KernelLab, skip_reason
from sender_table import SCENARIOS, check

from p4incast.sim import native

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def engines() -> Iterator[tuple[KernelLab, Any]]:
    why = skip_reason()
    ok, sim_why = native.available()
    if why or not ok:
        pytest.skip(why or f"simulator: {sim_why}")
    import ns3_lab

    with KernelLab() as lab:
        yield lab, ns3_lab


def test_kernel_and_model_agree_on_every_case(engines: tuple[KernelLab, Any]) -> None:
    lab, ns3_lab = engines
    differ = []
    for sc in SCENARIOS:
        for cc in sc.ccs:
            key_n = episodes(cc, sc, ns3_lab.run(cc, sc))
            key_k = episodes(cc, sc, lab.run(cc, sc))
            if key_k != key_n:
                again = episodes(cc, sc, lab.run(cc, sc))
                if again != key_n:
                    differ.append(f"{sc.name}/{cc}: kernel {key_k}, then {again}; ns-3 {key_n}")
    assert not differ, "\n".join(differ)


def episodes(cc: str, sc: Any, trace: Any) -> list[tuple[str, int, int, int]]:
    found, _ = check(cc, sc, trace)
    return [(e.kind, e.cwnd0, e.marked, e.expected) for e in found]
