"""RCC ACK-queue conformance scenarios: scripted data arrivals and ACKs, and what leaves.

One table, replayed on the reference (p4incast/policies/rcc.py AckQueue, by
tests/agent/test_rcc_conformance.py) and on the simulator's receiver
(sim/cpp/rx_agent.h RxAgent through RccAckQueueProbe, by
tests/sim/test_rcc_ack_queue_model.py). Every expectation below is worked out
by hand from the rules of RCC's Algorithm 1 as docs/algorithms.md ("RCC")
records them — never read back from the code:

- Q1 one entry per flow, the flow's latest ACK: a newer ACK of a held flow
  replaces the held one and keeps its place in the FIFO;
- Q2 strict FIFO: only the head may leave, and only if the total in flight
  after it is <= Q·MSS; a head that does not fit blocks those behind it;
- Q3 tried whenever data arrives and whenever an ACK is queued; an ACK of a
  flow with nothing held passes at once if the queue is empty and it fits;
- Q4 an ACK that opens nothing new (right edge ack + window not beyond the
  flow's last released one) passes at once; if its flow had an ACK held, that
  one is superseded and leaves the queue;
- Q5 in flight of a flow = right edge last released − highest byte received
  (0 before any release);
- Q6 (our idle-flow rule) a flow whose latest segment is shorter than its MSS
  counts 0 until its next data arrives;
- Q7 our FIN waits behind its flow's held ACK, and what we send on the flow
  after the FIN waits behind the FIN; the flow ends (counts 0) when the FIN
  leaves, or when the peer's FIN arrives;
- Q8 (our rule for senders with a congestion window) an ACK that has to wait
  (queued, or replacing its flow's held one) leaves at once as a copy whose
  window reaches only the right edge already released, (ack, RE_rel − ack),
  when that window is more than 0; the full ACK waits;
- Q9 an ACK of a flow no data has arrived from passes and counts nothing (it
  completes the handshake).

Conventions: Q = 4 packets, MSS = 1000 bytes, so the cap is 4000 bytes. Flow
sequence numbers start at 1 (the peer's ISN is 0): the k-th full segment of a
flow ends at 1 + 1000·k. Windows are in bytes; right edge RE = ack + window.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Q = 4
MSS = 1000
CAP = Q * MSS
FIN = "FIN"

Sent = tuple  # (flow, ack, window) for an ACK, (flow, FIN) for our FIN


@dataclass(frozen=True)
class Step:
    op: str  # data | peer_fin | ack | fin
    flow: str
    a: int = 0  # data: end of the segment (seq_end); ack: ack number
    b: int = 0  # data: payload bytes; ack: window bytes
    out: tuple[Sent, ...] = ()  # what the receiver sends now, in order
    held: tuple[str, ...] = ()  # flows with an ACK held afterwards, head first
    total: int | None = None  # total in flight afterwards, bytes
    flight: dict[str, int] = field(default_factory=dict)  # per flow, afterwards


@dataclass(frozen=True)
class Scenario:
    name: str
    steps: tuple[Step, ...]


def data(flow: str, end: int, size: int = MSS, **expect: Any) -> Step:
    return Step("data", flow, end, size, **expect)


def ack(flow: str, ack_no: int, window: int, **expect: Any) -> Step:
    return Step("ack", flow, ack_no, window, **expect)


def fin(flow: str, **expect: Any) -> Step:
    return Step("fin", flow, **expect)


def peer_fin(flow: str, end: int, **expect: Any) -> Step:
    return Step("peer_fin", flow, end, 0, **expect)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "head_of_line_blocking",
        (
            data("a", 1001),  # a: hi 1001; nothing released yet, so 0 in flight (Q5)
            # RE 3001: a counts 3001 − 1001 = 2000 <= 4000, queue empty: passes (Q3)
            ack("a", 1001, 2000, out=(("a", 1001, 2000),), total=2000),
            data("b", 1001, total=2000),
            # b: 2000 more, total 4000 <= 4000: passes (Q3, the cap is inclusive)
            ack("b", 1001, 2000, out=(("b", 1001, 2000),), total=4000),
            data("c", 1001, total=4000),
            # c would make 6000 > 4000: held (Q2)
            ack("c", 1001, 2000, held=("c",), total=4000),
            data("d", 1001, held=("c",), total=4000),
            # d: queue not empty, so d goes behind c (Q3) whether or not it fits
            ack("d", 1001, 1000, held=("c", "d"), total=4000),
            # a's 2nd segment: a counts 3001 − 2001 = 1000, total 3000. Head c
            # needs 2000: 5000 > 4000, blocked; d (1000: 4000) fits but waits (Q2)
            data("a", 2001, held=("c", "d"), total=3000, flight={"a": 1000}),
            # b's 2nd: total 2000; c: 2000 + 2000 = 4000 goes; then d: 4000 + 1000
            # = 5000 > 4000 stays
            data("b", 2001, out=(("c", 1001, 2000),), held=("d",), total=4000),
            # c's 2nd: c counts 3001 − 2001 = 1000; total a 1000 + b 1000 + c 1000
            # = 3000; d: 3000 + 1000 = 4000 goes
            data("c", 2001, out=(("d", 1001, 1000),), total=4000, flight={"d": 1000}),
        ),
    ),
    Scenario(
        "latest_ack_replaces_the_held_one_in_place",
        (
            data("a", 1001),
            # RE 5001: a counts 4000 = the cap: passes
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), total=4000),
            data("b", 1001, total=4000),
            ack("b", 1001, 2000, held=("b",), total=4000),  # 6000 > 4000 (Q2)
            data("c", 1001, held=("b",)),
            ack("c", 1001, 1000, held=("b", "c")),
            data("d", 1001, held=("b", "c")),
            ack("d", 1001, 1000, held=("b", "c", "d")),
            # c's 2nd segment (sent in its initial window): c has no release, 0 (Q5)
            data("c", 2001, held=("b", "c", "d"), total=4000, flight={"c": 0}),
            # c's newer cumulative ACK (RE 3001) replaces its held one (RE 2001) and
            # keeps c's place, ahead of d (Q1); head b still needs 2000: blocked
            ack("c", 2001, 1000, held=("b", "c", "d"), total=4000),
            data("a", 2001, held=("b", "c", "d"), total=3000),  # b: 5000 > 4000
            # a counts 5001 − 3001 = 2000; b: 2000 + 2000 = 4000 goes. Then c's
            # entry is its latest ACK (2001, 1000), RE 3001, hi 2001: +1000 → 5000
            data("a", 3001, out=(("b", 1001, 2000),), held=("c", "d"), total=4000),
            # b counts 3001 − 2001 = 1000: total a 2000 + b 1000 = 3000; c leaves
            # with its latest ACK, never the replaced one (no ACK lost, Q1):
            # 3000 + 1000 = 4000. d: 5000 > 4000 stays
            data(
                "b",
                2001,
                out=(("c", 2001, 1000),),
                held=("d",),
                total=4000,
                flight={"a": 2000, "b": 1000, "c": 1000, "d": 0},
            ),
            # a counts 1000: total 3000; d: 3000 + 1000 = 4000 goes
            data("a", 4001, out=(("d", 1001, 1000),), total=4000),
            data("a", 5001, total=3000, flight={"a": 0}),
        ),
    ),
    Scenario(
        "head_replaced_in_place",
        (
            data("a", 1001),
            ack("a", 1001, 3000, out=(("a", 1001, 3000),), total=3000),  # RE 4001
            data("b", 1001),
            ack("b", 1001, 2000, held=("b",), total=3000),  # 3000 + 2000 > 4000
            data("c", 1001, held=("b",)),
            ack("c", 1001, 1000, held=("b", "c")),
            # b's window update (same ack, RE 4001) replaces the head in place (Q1)
            ack("b", 1001, 3000, held=("b", "c"), total=3000),
            # a counts 4001 − 2001 = 2000; b: 2000 + 3000 = 5000 > 4000, blocked
            data("a", 2001, held=("b", "c"), total=2000),
            # a counts 1000; b: 1000 + 3000 = 4000 goes, with its latest ACK;
            # c: 4000 + 1000 = 5000 stays
            data("a", 3001, out=(("b", 1001, 3000),), held=("c",), total=4000),
            # a counts 0: total 3000; c: 3000 + 1000 = 4000 goes
            data(
                "a",
                4001,
                out=(("c", 1001, 1000),),
                total=4000,
                flight={"a": 0, "b": 3000, "c": 1000},
            ),
        ),
    ),
    Scenario(
        "nothing_new_passes_a_blocked_queue",
        (
            data("a", 1001),
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), total=4000),  # RE 5001
            data("b", 1001),
            ack("b", 1001, 2000, held=("b",)),  # 6000 > 4000
            data("a", 2001, held=("b",), total=3000),  # b: 3000 + 2000 = 5000
            # a's ACK: RE 2001 + 3000 = 5001, not beyond a's released 5001 and a
            # has nothing held: passes at once, ahead of the blocked b (Q4)
            ack("a", 2001, 3000, out=(("a", 2001, 3000),), held=("b",), total=3000),
            # a counts 2000: total 2000; b: 2000 + 2000 = 4000 goes
            data("a", 3001, out=(("b", 1001, 2000),), total=4000),
        ),
    ),
    Scenario(
        "short_segment_frees_its_flows_flight",
        (
            data("a", 1001),
            ack("a", 1001, 3000, out=(("a", 1001, 3000),), total=3000),  # RE 4001
            data("b", 1001),
            ack("b", 1001, 2000, held=("b",), total=3000),  # 5000 > 4000
            # a sends 500 < MSS: its send buffer is empty, a counts 0 (Q6);
            # total 0; b: 0 + 2000 = 2000 goes
            data("a", 1501, 500, out=(("b", 1001, 2000),), total=2000, flight={"a": 0}),
            # a's ACK RE 4501 opens new window; a is idle and counts 0: total after
            # stays 2000 <= 4000, queue empty: passes
            ack("a", 1501, 3000, out=(("a", 1501, 3000),), total=2000, flight={"a": 0}),
            # a's next data (full): a counts again, 4501 − 2501 = 2000; total 4000
            data("a", 2501, total=4000, flight={"a": 2000}),
            # RE 5501: a would count 3000, total 5000 > 4000: held; its part up to
            # the released RE 4501 leaves now: (2501, 4501 − 2501 = 2000) (Q8)
            ack("a", 2501, 3000, out=(("a", 2501, 2000),), held=("a",), total=4000),
            # b counts 3001 − 2001 = 1000, a still 2000: total 3000; a's held ACK
            # would make a 5501 − 2501 = 3000: 1000 + 3000 = 4000 goes
            data("b", 2001, out=(("a", 2501, 3000),), total=4000),
        ),
    ),
    Scenario(
        "a_waiting_ack_sends_what_opens_nothing_new",
        (
            data("a", 1001),
            ack("a", 1001, 3000, out=(("a", 1001, 3000),), total=3000),  # RE 4001
            data("b", 1001),
            ack("b", 1001, 3000, held=("b",), total=3000),  # 3000 + 3000 > 4000
            data("a", 2001, held=("b",), total=2000),  # b: 2000 + 3000 > 4000
            # a's ACK RE 5001 opens new, the queue is not empty: a waits behind b;
            # its part up to a's released RE 4001 leaves: (2001, 2000) (Q8)
            ack("a", 2001, 3000, out=(("a", 2001, 2000),), held=("b", "a"), total=2000),
            # a counts 4001 − 3001 = 1000; b: 1000 + 3000 = 4000 goes; a (head): b
            # 3000 + a 5001 − 3001 = 2000 → 5000 > 4000 stays
            data("a", 3001, out=(("b", 1001, 3000),), held=("a",), total=4000),
            # a's newer ACK (RE 6001) replaces the held one; its part: (3001, 1000)
            ack("a", 3001, 3000, out=(("a", 3001, 1000),), held=("a",), total=4000),
            # a counts 0; a's entry: 6001 − 4001 = 2000, 3000 + 2000 > 4000
            data("a", 4001, held=("a",), total=3000, flight={"a": 0}),
            # RE 7001 replaces it; a's released RE 4001 − 4001 = 0: nothing leaves
            ack("a", 4001, 3000, held=("a",), total=3000),
            data("b", 2001, held=("a",), total=2000),  # a: 2000 + 3000 > 4000
            # b counts 1000; a: 1000 + 7001 − 4001 = 4000 goes, its latest ACK
            data("b", 3001, out=(("a", 4001, 3000),), total=4000, flight={"a": 3000}),
        ),
    ),
    Scenario(
        "nothing_new_supersedes_the_held_ack",
        (
            data("a", 1001),
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), total=4000),  # RE 5001
            data("b", 1001),
            ack("b", 1001, 2000, held=("b",)),  # 6000 > 4000
            data("a", 2001, held=("b",), total=3000),  # b: 3000 + 2000 > 4000
            # RE 6001 opens new: a waits behind b, its part (2001, 3000) leaves (Q8)
            ack("a", 2001, 4000, out=(("a", 2001, 3000),), held=("b", "a"), total=3000),
            # a's newer ACK with RE 5001 opens nothing new: it leaves now and a's
            # held ACK is superseded (Q4); b still blocked
            ack("a", 2001, 3000, out=(("a", 2001, 3000),), held=("b",), total=3000),
            # a counts 2000; b: 2000 + 2000 = 4000 goes
            data("a", 3001, out=(("b", 1001, 2000),), total=4000),
        ),
    ),
    Scenario(
        "an_ack_before_any_data_passes",
        (
            data("a", 1001),
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), total=4000),
            data("b", 1001),
            ack("b", 1001, 1000, held=("b",)),  # 5000 > 4000
            # c has sent nothing: its ACK completes the handshake, passes at once
            # and counts nothing (Q9), though b is held
            ack("c", 1, 5000, out=(("c", 1, 5000),), held=("b",), total=4000),
            # a counts 3000; b: 3000 + 1000 = 4000 goes; c counts nothing yet
            data("a", 2001, out=(("b", 1001, 1000),), total=4000, flight={"c": 0}),
        ),
    ),
    Scenario(
        "fin_waits_behind_its_flows_held_ack",
        (
            data("a", 1001),
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), total=4000),
            data("b", 1001),
            ack("b", 1001, 1000, held=("b",)),  # 5000 > 4000
            # our FIN on b: b has an ACK held, the FIN waits behind it (Q7)
            fin("b", held=("b",)),
            # an ACK we send on b after its FIN waits behind the FIN, in order (Q7)
            ack("b", 1001, 1000, held=("b",)),
            data("c", 1001, held=("b",)),
            # our FIN on c, nothing held: leaves at once; c ends; b still blocked
            fin("c", out=(("c", FIN),), held=("b",), total=4000, flight={"c": 0}),
            # a counts 3000; b: + 1000 = 4000: the held ACK, then the FIN, then
            # what followed it; b ends with its FIN and counts 0
            data(
                "a",
                2001,
                out=(("b", 1001, 1000), ("b", FIN), ("b", 1001, 1000)),
                total=3000,
                flight={"a": 3000, "b": 0},
            ),
        ),
    ),
    Scenario(
        "peer_fin_ends_the_flow",
        (
            data("a", 1001),
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), total=4000),
            data("b", 1001),
            ack("b", 1001, 1000, held=("b",)),
            # the peer's FIN on a: a ends, counts 0 (Q7); total 0; b: 1000 goes
            peer_fin("a", 2001, out=(("b", 1001, 1000),), total=1000, flight={"a": 0}),
        ),
    ),
    Scenario(
        "more_flows_than_q",
        (
            # six flows of one packet each against Q = 4: four fit, two wait
            data("a", 1001),
            ack("a", 1001, 1000, out=(("a", 1001, 1000),), total=1000),
            data("b", 1001),
            ack("b", 1001, 1000, out=(("b", 1001, 1000),), total=2000),
            data("c", 1001),
            ack("c", 1001, 1000, out=(("c", 1001, 1000),), total=3000),
            data("d", 1001),
            ack("d", 1001, 1000, out=(("d", 1001, 1000),), total=4000),
            data("e", 1001),
            ack("e", 1001, 1000, held=("e",), total=4000),
            data("f", 1001, held=("e",)),
            ack("f", 1001, 1000, held=("e", "f"), total=4000),
            # each arriving packet frees one: the head leaves, FIFO
            data("a", 2001, out=(("e", 1001, 1000),), held=("f",), total=4000),
            ack("a", 2001, 1000, held=("f", "a"), total=4000),
            data("b", 2001, out=(("f", 1001, 1000),), held=("a",), total=4000),
            data("c", 2001, out=(("a", 2001, 1000),), total=4000),
        ),
    ),
)
