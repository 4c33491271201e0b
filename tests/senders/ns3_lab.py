"""The ns-3 engine of the sender conformance table (tests/senders/sender_table.py).

`run(cc, scenario)` runs one scripted flow through the simulator's senders
(sim/cpp/tcp_newdctcp.h: reno → TcpRenoP4i, dctcp → TcpDctcpLinux, newdctcp →
TcpNewDctcp, on the senders' socket of sim/cpp/tcp_sender_socket.h, as every
sending host of the model) in sim/cpp/sender_conformance.h and returns its `Trace`: the
sender's state before every ACK it processes and every congestion-state change
(ns-3's TcpCongState_t, numbered as Linux's tcp_ca_state), read from the socket's
trace sources, not from the CC under test.
"""

from __future__ import annotations

import functools
from typing import Any

import sender_table as table  # tests/senders is on sys.path (pytest's rootdir import)

from p4incast.model.scheme import SENDER_MIN_CWND_SEGS
from p4incast.sim import native


def available() -> tuple[bool, str]:
    """(True, "") when ns-3 can be imported here, else (False, why)."""
    return native.available()


@functools.cache
def _lib() -> Any:
    p4i = native.load()
    import cppyy  # loaded with ns-3 by native.load()

    cppyy.include("sender_conformance.h")  # sim/cpp is on the include path
    return p4i


def run(
    cc: str, scenario: table.Scenario, min_cwnd_segs: int = SENDER_MIN_CWND_SEGS
) -> table.Trace:
    """One flow of `scenario` under `cc` ("reno", "dctcp", "newdctcp"); `min_cwnd_segs`:
    the window floor of DCTCP's and NewDCTCP's ECN cut (transport.min_cwnd_segs)."""
    if cc not in table.CCS:
        raise ValueError(f"cc {cc!r}: one of {table.CCS}")
    p4i = _lib()
    r = p4i.RunSenderScript(
        cc,
        scenario.segments,
        native.int_vector(sorted(scenario.marks)),
        native.int_vector(sorted(scenario.drops)),
        scenario.delayed_ack,
        min_cwnd_segs,
    )
    if not r.complete:
        raise RuntimeError(
            f"{scenario.name}/{cc}: the flow did not complete ({r.acked} of "
            f"{scenario.segments} segments acknowledged)"
        )
    if (r.marked, r.dropped) != (len(scenario.marks), len(scenario.drops)):
        raise RuntimeError(
            f"{scenario.name}/{cc}: the script marked {r.marked} and dropped {r.dropped}, "
            f"not {len(scenario.marks)} and {len(scenario.drops)}"
        )
    events: list[table.Ack | table.StateChange] = []
    for e in r.events:
        if e.kind == 0:
            events.append(
                table.Ack(
                    ack=int(e.ack),
                    ece=bool(e.ece),
                    una=int(e.una),
                    nxt=int(e.nxt),
                    cwnd=int(e.cwnd),
                    ssthresh=int(e.ssthresh),
                    t_us=float(e.tUs),
                )
            )
        else:
            events.append(
                table.StateChange(
                    state=int(e.state),
                    cwnd=int(e.cwnd),
                    ssthresh=int(e.ssthresh),
                    una=int(e.una),
                    nxt=int(e.nxt),
                    t_us=float(e.tUs),
                )
            )
    return table.Trace(
        acks=[e for e in events if isinstance(e, table.Ack)],
        states=[e for e in events if isinstance(e, table.StateChange)],
        final_cwnd=int(r.finalCwnd),
        final_ssthresh=int(r.finalSsthresh),
        events=events,
    )
