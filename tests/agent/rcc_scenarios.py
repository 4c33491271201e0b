"""RCC ACK-queue conformance scenarios: scripted data arrivals and ACKs, and what leaves.

One table, replayed on the reference (p4incast/policies/rcc.py AckQueue, by
tests/agent/test_rcc_conformance.py), on the simulator's receiver
(sim/cpp/rx_agent.h RxAgent through RccAckQueueProbe, by
tests/sim/test_rcc_ack_queue_model.py) and on the host agent's data path
(agent/bpf/rxwin_ackq.h under BPF_PROG_TEST_RUN, by
tests/agent/test_rcc_ackq_bpf.py). Every expectation is worked out by hand
from the text of seed 002 (RCC, Xu et al., Computer Networks 2017), Algorithm
2 and §4.2, with the line cited beside it — never read back from
docs/algorithms.md or from the code. The rules, and where the paper leaves a
choice, the one taken:

- P1 (Alg. 2 l.1) an ACK the receiver sends first takes its flow's held ACK,
  if any, out of the queue;
- P2 (Alg. 2 l.2; §4.1 and §4.2: without priorities the queue is first in,
  first out) then goes in at the tail;
- P3 (Alg. 2 l.3–5) then, while the windows in flight add up to less than
  Q·MSS, the head is sent and its window counted. The test is made before
  each send, so the last ACK sent may take the total past Q·MSS;
- P4 (§4.2 and its footnote 4; our reading of "flight windows") in flight of
  a flow = the right edge last sent to it (ack + window) − the highest byte
  received from it, 0 before an ACK of it was counted;
- P5 (§4.2: data lowers the count; Alg. 2 is invoked when the receiver sends
  an ACK) a data arrival sends nothing: the ACK it makes the receiver send
  runs the queue.

Choices where the paper says nothing:

- C1 an ACK of a flow no data has arrived from (the handshake) is sent at
  once and counts nothing; it still runs the loop, like every ACK (P3);
- C2 our FIN waits behind its flow's held ACK, and what we send on the flow
  after it waits behind the FIN; a flow ends (counts 0) when our FIN leaves
  or the peer's FIN arrives; an ACK of an ended flow is sent like C1's;
- C3 the cap is Q times one MSS (the paper counts packets).

Ours (docs/algorithms.md, "Where our RCC bends the paper"):

- D1 (idle flows) a flow whose latest segment is shorter than its MSS counts
  0 until its next data arrives;
- D2 (split ACK) an ACK still held after P3 leaves at once as a copy whose
  window reaches only the right edge already sent, (ack, RE_rel − ack), when
  that is more than 0; if the ACK opens nothing new (its right edge not
  beyond RE_rel), it leaves whole and nothing of it stays held. Scenarios
  with split=False run the paper's rule without it.

Beside each expectation, the place it follows: "Alg. 2 l.N" (seed 002's
Algorithm 2, line N), "§4.2" and "§4.2 fn. 4" (P4, P5), or the code of a
choice (C1–C3) or of ours (D1, D2).

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
    split: bool = True  # D2 on (False: the paper's rule alone)


def data(flow: str, end: int, size: int = MSS, **expect: Any) -> Step:
    return Step("data", flow, end, size, **expect)


def ack(flow: str, ack_no: int, window: int, **expect: Any) -> Step:
    return Step("ack", flow, ack_no, window, **expect)


def fin(flow: str, **expect: Any) -> Step:
    return Step("fin", flow, **expect)


def peer_fin(flow: str, end: int, **expect: Any) -> Step:
    return Step("peer_fin", flow, end, 0, **expect)


# The cwnd-limited senders of the deadlock scenario: the same steps without and
# with D2 up to the point where, without it, nothing can move again.
_STALL = (
    data("a", 1001),
    # a RE 4001: queue empty, total 0 < 4000: sent (Alg. 2 l.3); a counts 3000 (§4.2 fn. 4)
    ack("a", 1001, 3000, out=(("a", 1001, 3000),), total=3000),
    data("b", 1001, total=3000),
    # b RE 4001: total 3000 < 4000, so it is sent (Alg. 2 l.3, tested before the send):
    # the total passes the cap, 6000
    ack("b", 1001, 3000, out=(("b", 1001, 3000),), total=6000),
    # each sender's cwnd lets it send one more segment, no more
    data("a", 2001, total=5000, flight={"a": 2000}),  # §4.2: nothing is sent
)

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "the_head_goes_while_the_total_is_below_q",
        (
            data("a", 1001),  # nothing sent to a yet: 0 in flight (§4.2 fn. 4)
            # RE 3001; total 0 < 4000: sent (Alg. 2 l.3); a counts 3001 − 1001 = 2000
            ack("a", 1001, 2000, out=(("a", 1001, 2000),), total=2000),
            data("b", 1001, total=2000),
            # total 2000 < 4000: sent; b 2000, total 4000
            ack("b", 1001, 2000, out=(("b", 1001, 2000),), total=4000),
            data("c", 1001, total=4000),
            # c at the tail (Alg. 2 l.2); total 4000 is not below 4000: held (Alg. 2 l.3); nothing
            # was sent to c, so no copy (D2)
            ack("c", 1001, 2000, held=("c",), total=4000),
            data("d", 1001, held=("c",), total=4000),
            ack("d", 1001, 1000, held=("c", "d"), total=4000),  # behind c (Alg. 2 l.2)
            # a's 2nd segment: a counts 3001 − 2001 = 1000, total 3000; a data
            # arrival sends nothing (§4.2)
            data("a", 2001, held=("c", "d"), total=3000, flight={"a": 1000}),
            # a's ACK (RE 4001) goes to the tail (Alg. 2 l.2): c, d, a. 3000 < 4000: head
            # c is sent, its 2000 counted: 5000 (Alg. 2 l.3: past the cap); the loop
            # stops. a is held; its part up to its RE 3001 leaves: (2001, 1000) (D2)
            ack(
                "a",
                2001,
                2000,
                out=(("c", 1001, 2000), ("a", 2001, 1000)),
                held=("d", "a"),
                total=5000,
                flight={"a": 1000, "b": 2000, "c": 2000},
            ),
            data("b", 2001, held=("d", "a"), total=4000),  # b 3001 − 2001 = 1000
            data("c", 2001, held=("d", "a"), total=3000),  # c 1000
            # c's ACK (RE 4001) to the tail: d, a, c. 3000 < 4000: d sent (+1000):
            # 4000, stop. c's part up to its RE 3001: (2001, 1000) (D2)
            ack(
                "c",
                2001,
                2000,
                out=(("d", 1001, 1000), ("c", 2001, 1000)),
                held=("a", "c"),
                total=4000,
                flight={"d": 1000},
            ),
        ),
    ),
    Scenario(
        "a_newer_ack_is_erased_and_goes_to_the_tail",
        (
            data("a", 1001),
            # RE 5001: total 0 < 4000, sent; a counts 4000
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), total=4000),
            data("b", 1001, total=4000),
            ack("b", 1001, 2000, held=("b",), total=4000),  # 4000 not < 4000 (Alg. 2 l.3)
            data("c", 1001, held=("b",)),
            ack("c", 1001, 1000, held=("b", "c")),
            data("d", 1001, held=("b", "c")),
            ack("d", 1001, 1000, held=("b", "c", "d")),
            # c's 2nd segment (sent in its first window): nothing was sent to c, 0
            data("c", 2001, held=("b", "c", "d"), total=4000, flight={"c": 0}),
            # c's newer ACK: its held one is taken out (Alg. 2 l.1) and the new one goes
            # in at the tail (Alg. 2 l.2): b, d, c. 4000: nothing leaves
            ack("c", 2001, 1000, held=("b", "d", "c"), total=4000),
            data("a", 2001, held=("b", "d", "c"), total=3000),  # a 5001 − 2001
            # a (RE 6001) to the tail; 3000 < 4000: b sent, +2000 = 5000, stop.
            # a's part up to its RE 5001: (2001, 3000) (D2)
            ack(
                "a",
                2001,
                4000,
                out=(("b", 1001, 2000), ("a", 2001, 3000)),
                held=("d", "c", "a"),
                total=5000,
            ),
            data("a", 3001, held=("d", "c", "a"), total=4000),  # a 2000
            data("b", 2001, held=("d", "c", "a"), total=3000),  # b 1000
            # b (RE 4001) to the tail: d, c, a, b. 3000 < 4000: d sent (+1000) =
            # 4000, stop. b's part up to its RE 3001: (2001, 1000) (D2)
            ack(
                "b",
                2001,
                2000,
                out=(("d", 1001, 1000), ("b", 2001, 1000)),
                held=("c", "a", "b"),
                total=4000,
            ),
            data("a", 4001, held=("c", "a", "b"), total=3000),  # a 1000
            # a's newer ACK (RE 8001): its held (2001, 4000) out (Alg. 2 l.1), the new one
            # at the tail (Alg. 2 l.2): c, b, a. 3000 < 4000: c sent with its latest ACK
            # (2001, 1000), RE 3001, hi 2001: +1000 = 4000, stop. The paper's
            # order b, d, c. a's part up to its RE 5001: (4001, 1000) (D2)
            ack(
                "a",
                4001,
                4000,
                out=(("c", 2001, 1000), ("a", 4001, 1000)),
                held=("b", "a"),
                total=4000,
                flight={"a": 1000, "b": 1000, "c": 1000, "d": 1000},
            ),
        ),
    ),
    Scenario(
        "the_heads_newer_ack_goes_behind_the_rest",
        (
            data("a", 1001),
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), total=4000),  # RE 5001
            data("b", 1001),
            ack("b", 1001, 2000, held=("b",), total=4000),
            data("c", 1001, held=("b",)),
            ack("c", 1001, 1000, held=("b", "c")),
            # b's window update (same ack, RE 4001): the head is taken out (Alg. 2 l.1) and
            # goes in behind c (Alg. 2 l.2)
            ack("b", 1001, 3000, held=("c", "b"), total=4000),
            data("a", 2001, held=("c", "b"), total=3000),
            # a (RE 6001) to the tail: c, b, a. 3000 < 4000: c sent (+1000) = 4000,
            # stop: c before b, though b was queued first. a's part: (2001, 3000)
            ack(
                "a",
                2001,
                4000,
                out=(("c", 1001, 1000), ("a", 2001, 3000)),
                held=("b", "a"),
                total=4000,
            ),
        ),
    ),
    Scenario(
        "an_ack_opening_nothing_new_leaves_whole",
        (
            data("a", 1001),
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), total=4000),  # RE 5001
            data("b", 1001),
            ack("b", 1001, 2000, held=("b",), total=4000),
            # a's window update RE 6001: to the tail (Alg. 2 l.2), 4000: held; its part up
            # to RE 5001 leaves: (1001, 4000) (D2)
            ack("a", 1001, 5000, out=(("a", 1001, 4000),), held=("b", "a"), total=4000),
            # a's next ACK, RE 5001: a's held RE 6001 is taken out (Alg. 2 l.1: the latest
            # ACK is the flow's); the new one opens nothing beyond RE 5001, so it
            # leaves whole and nothing of a is held (D2)
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), held=("b",), total=4000),
            data("a", 2001, held=("b",), total=3000),  # nothing sent (§4.2)
            # a RE 5001 to the tail: b, a. 3000 < 4000: b sent (+2000) = 5000, stop;
            # a opens nothing new: whole (D2)
            ack(
                "a",
                2001,
                3000,
                out=(("b", 1001, 2000), ("a", 2001, 3000)),
                total=5000,
                flight={"a": 3000, "b": 2000},
            ),
        ),
    ),
    Scenario(
        "cwnd_limited_senders_deadlock_without_the_split",
        (
            *_STALL,
            # a (RE 5001) at the tail; 5000 not < 4000: held; nothing leaves
            ack("a", 2001, 3000, held=("a",), total=5000),
            data("b", 2001, held=("a",), total=4000),  # b 2000
            # b (RE 5001) behind a; 4000 not < 4000: held. Both senders wait for
            # these ACKs, with nothing in the network: no data can arrive, no ACK
            # is made, and the 4000 counted never go down: the queue never moves
            ack("b", 2001, 3000, held=("a", "b"), total=4000),
        ),
        split=False,
    ),
    Scenario(
        "cwnd_limited_senders_move_with_the_split",
        (
            *_STALL,
            # as above, held; a's part up to its RE 4001 leaves: (2001, 2000) (D2)
            ack("a", 2001, 3000, out=(("a", 2001, 2000),), held=("a",), total=5000),
            data("b", 2001, held=("a",), total=4000),
            ack("b", 2001, 3000, out=(("b", 2001, 2000),), held=("a", "b"), total=4000),
            # each sender got its ACK and sends one more segment
            data("a", 3001, held=("a", "b"), total=3000),  # a 1000
            # a's newer ACK (RE 6001): its held one out (Alg. 2 l.1), the new at the tail
            # (Alg. 2 l.2): b, a. 3000 < 4000: b sent (2001, 3000), b 5001 − 2001 = 3000:
            # a 1000 + b 3000 = 4000, stop. a's part up to RE 4001: (3001, 1000) (D2)
            ack(
                "a",
                3001,
                3000,
                out=(("b", 2001, 3000), ("a", 3001, 1000)),
                held=("a",),
                total=4000,
            ),
        ),
    ),
    Scenario(
        "short_segment_frees_its_flows_flight",
        (
            data("a", 1001),
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), total=4000),  # RE 5001
            data("b", 1001),
            ack("b", 1001, 2000, held=("b",), total=4000),
            # a sends 500 < MSS: its send buffer is empty, a counts 0 (D1); sends
            # nothing (§4.2)
            data("a", 1501, 500, held=("b",), total=0, flight={"a": 0}),
            # a (RE 5501) to the tail: b, a. 0 < 4000: b sent (2000); 2000 < 4000:
            # a sent, idle, counts 0 (D1)
            ack(
                "a",
                1501,
                4000,
                out=(("b", 1001, 2000), ("a", 1501, 4000)),
                total=2000,
                flight={"a": 0},
            ),
            # a full segment: a counts again, 5501 − 2501 = 3000
            data("a", 2501, total=5000, flight={"a": 3000}),
            # RE 6501 at the tail; 5000: held; its part to RE 5501: (2501, 3000)
            ack("a", 2501, 4000, out=(("a", 2501, 3000),), held=("a",), total=5000),
            data("b", 2001, held=("a",), total=4000),
            data("b", 3001, held=("a",), total=3000),  # b 0
            # b (RE 5001) behind a: 3000 < 4000: a sent, a 6501 − 2501 = 4000:
            # 4000, stop. b: RE 3001 − ack 3001 = 0, nothing to send early (D2)
            ack("b", 3001, 2000, out=(("a", 2501, 4000),), held=("b",), total=4000),
        ),
    ),
    Scenario(
        "an_ack_before_any_data_passes_and_runs_the_queue",
        (
            data("a", 1001),
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), total=4000),
            data("b", 1001),
            ack("b", 1001, 1000, held=("b",)),
            # c has sent nothing: its ACK is sent and counts nothing (C1); the loop
            # finds 4000: b stays
            ack("c", 1, 5000, out=(("c", 1, 5000),), held=("b",), total=4000),
            data("a", 2001, held=("b",), total=3000),
            # c's next ACK: sent (C1), then the loop: 3000 < 4000, b sent (Alg. 2 l.3)
            ack(
                "c",
                1,
                5000,
                out=(("c", 1, 5000), ("b", 1001, 1000)),
                total=4000,
                flight={"c": 0},
            ),
        ),
    ),
    Scenario(
        "fin_waits_behind_its_flows_held_ack",
        (
            data("a", 1001),
            ack("a", 1001, 4000, out=(("a", 1001, 4000),), total=4000),
            data("b", 1001),
            ack("b", 1001, 1000, held=("b",)),
            fin("b", held=("b",)),  # behind b's held ACK (C2)
            ack("b", 1001, 1000, held=("b",)),  # behind the FIN (C2)
            data("c", 1001, held=("b",)),
            # nothing of c held: the FIN leaves, c ends (C2); 4000: b stays
            fin("c", out=(("c", FIN),), held=("b",), total=4000, flight={"c": 0}),
            data("a", 2001, held=("b",), total=3000),
            # a (RE 5001) at the tail; 3000 < 4000: b's ACK, its FIN (b ends, C2)
            # and what followed; a alone counts, 3000 < 4000: a sent (opens nothing)
            ack(
                "a",
                2001,
                3000,
                out=(("b", 1001, 1000), ("b", FIN), ("b", 1001, 1000), ("a", 2001, 3000)),
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
            # the peer's FIN: a ends, counts 0 (C2); an arrival sends nothing (§4.2)
            peer_fin("a", 2001, held=("b",), total=0, flight={"a": 0}),
            # our ACK of it: a has ended, sent (C2); the loop: 0 < 4000, b sent
            ack("a", 2002, 4000, out=(("a", 2002, 4000), ("b", 1001, 1000)), total=1000),
        ),
    ),
    Scenario(
        "more_flows_than_q_take_turns",
        (
            # six flows of one packet each against Q = 4
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
            data("a", 2001, held=("e", "f"), total=3000),  # a 0
            # a (RE 3001) behind f; 3000 < 4000: e sent, 4000, stop. a's RE 2001
            # − 2001 = 0: no copy (D2)
            ack("a", 2001, 1000, out=(("e", 1001, 1000),), held=("f", "a"), total=4000),
            data("b", 2001, held=("f", "a"), total=3000),
            ack("b", 2001, 1000, out=(("f", 1001, 1000),), held=("a", "b"), total=4000),
            data("c", 2001, held=("a", "b"), total=3000),
            ack("c", 2001, 1000, out=(("a", 2001, 1000),), held=("b", "c"), total=4000),
        ),
    ),
)
