"""Rotation conformance scenarios: scripted requests, data, ACKs and agent
ticks, and what the receiver does with each.

One table, replayed on the host agent's BPF data path under BPF_PROG_TEST_RUN
(with agent/rotation.py's rescue for the ticks; tests/agent/
test_rotation_conformance.py) and on the simulator's receiver (sim/cpp/
rx_rotation.h through RxRotationProbe; tests/sim/test_sim_rotation.py).
Every expectation is worked by hand from the rule as docs/algorithms.md §3.6
("newdctcp-budget" and "Rotation") states it, never read back from either
engine. The rule's parts, as cited beside each expectation:

- B1 share = max(B / F, 1 MSS) (min_segs 1); W starts at B, follows §3.2 at
  the end of each of its windows of data (W new bytes), and is capped at the
  share, in whole segments, on every data packet (before it counts), at every
  window end and on every ACK: a flow's first window is its share;
- B2 the handshake's ACK of a flow we opened leaves with a zero window; our
  request opens the window;
- E  the field never moves the right edge left (§3.3): it is at least the
  edge the flow was last offered by an ACK, less the ack — except on the ACK
  that ends a flow's data (R4), which closes the window completely;
- R1 H starts at its ceiling min(F, B / MSS) (R8: less every flow's
  acknowledgment); the receiver's window of data
  is H segments of new bytes from all flows; at its end H <- max(H/2, n - m)
  if a flow whose W was already one segment saw CE in it, else H + 1; within
  [1, ceiling];
- R2 an IDLE flow takes a slot on our next packet to it if one is free and
  no flow waits, else it waits at the queue's tail with a zero window;
- R3 a holder's turn ends with the ACK of new data that leaves less than a
  segment of the window it was last offered by an ACK (an ACK at the same
  ack, the kernel's window update or our request, leaves the window a grant
  offered); then the slot goes back if there
  are more holders than H, else passes to the queue's head if flows wait and
  none is free (the holder waits at the tail; the grant goes first); while
  flows wait a holder is offered one segment;
- R4 the ACK that newly acknowledges a short segment (shorter than the MSS,
  the flow's latest) ends what the flow had to send: it becomes IDLE and its
  window closes completely, a holder giving its slot back, a waiting flow
  leaving the queue; a later packet at the same ack (our next request) is no
  such ACK;
- R5 a free slot goes to the queue's head with the next packet we send: a
  window update offering one segment;
- R6 an agent tick while flows wait takes back the slot of a holder idle for
  more than 4 smoothed RTTs and 2 ticks, then grants the free slots;
- R7 a flow we sent data to (our request) owes its acknowledgment from that
  packet until one of its packets acknowledges all we sent; each such
  acknowledgment due takes ack_cost bytes of B, so R1's ceiling is
  min(F, (B - due x ack_cost) / MSS), at least 1, counted at every decision;
- R8 until the receiver's first window of data ends, H is its start: the
  ceiling with every flow's acknowledgment counted as due,
  min(F, (B - F x ack_cost) / MSS), at least 1.

Conventions: MSS 1448 bytes, our window scale 3, so one segment is 181 in
the window field and two are 362. States: 0 idle, 1 holds a slot, 2 waits.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as _field

MSS = 1448
WS = 3
SEG = MSS >> WS  # 181: one segment in the window field


@dataclass(frozen=True)
class Step:
    op: str  # open | req | data | ack | tick
    flow: int = 0
    size: int = MSS  # req / data: bytes
    ce: bool = False
    field: int | None = None  # open / req / ack: the window field it leaves with
    grants: tuple[int, ...] = ()  # flows sent a window update of one segment, in order
    states: dict[int, int] = _field(default_factory=dict)  # afterwards, by flow
    h: int | None = None  # H afterwards
    queue: tuple[int, ...] | None = None  # waiting flows afterwards, head first


@dataclass(frozen=True)
class Scenario:
    name: str
    doc: str
    flows: int
    budget_segs: int
    steps: tuple[Step, ...]
    ack_cost: int = 0  # R7: bytes of B one acknowledgment due takes


def _round(flows: range, ce: bool, fields: list[int]) -> tuple[Step, ...]:
    """Each flow sends a segment and we acknowledge it, in flow order."""
    out: list[Step] = []
    for i, f in zip(flows, fields, strict=True):
        out += [Step("data", i, ce=ce), Step("ack", i, field=f)]
    return tuple(out)


TURNS = Scenario(
    "turns",
    "four flows share B = 4 MSS; marks on flows at one segment cut H, the "
    "holders' turns end, the slot passes to the queue's head, then a free slot "
    "goes to it",
    flows=4,
    budget_segs=4,
    steps=(
        # B2: the handshakes close the windows
        *(Step("open", i, field=0) for i in range(4)),
        # R1: H = min(F 4, B/MSS 4) = 4; R2: each request takes a free slot;
        # B1: W = B = 4 MSS capped at the share 4/4 = 1 MSS
        *(Step("req", i, size=100, field=SEG) for i in range(3)),
        Step("req", 3, size=100, field=SEG, states={0: 1, 1: 1, 2: 1, 3: 1}, h=4),
        # B1: each flow's W is capped at 1 MSS as its segment arrives, so its
        # window of data (1 MSS) ends with 1 of 1 marked: W = max(W/2, 0,
        # 1 MSS) = 1 MSS. R1's window of data (H = 4 segments) ends at flow
        # 3's segment, all 4 marked on flows whose W was one segment: H =
        # max(4/2, 4 - 4) = 2. Flows 0-2 were acknowledged while H was 4 (R3:
        # their turns end, nothing left of the one segment offered, but no one
        # waits: the slots stay). R3: flow 3's turn ends with 4 holders > H 2:
        # the slot goes back, it waits (zero; E: nothing left).
        *_round(range(3), True, [SEG] * 3),
        Step("data", 3, ce=True),
        Step("ack", 3, field=0, states={0: 1, 1: 1, 2: 1, 3: 2}, h=2, queue=(3,)),
        # R3: flow 0's turn ends, 3 holders > H 2: it waits behind 3.
        Step("data", 0, ce=True),
        Step("ack", 0, field=0, h=2, queue=(3, 0)),
        # R1: 2 segments, both marked on one-segment flows: H = max(1, 0) = 1.
        # R3: 2 holders > 1: flow 1 waits.
        Step("data", 1, ce=True),
        Step("ack", 1, field=0, h=1, queue=(3, 0, 1)),
        # R1: H = max(0, 0) -> 1. R3: flow 2's turn ends, 1 holder = H and
        # flows wait: the slot passes to the head, flow 3 (its update goes
        # first), flow 2 waits at the tail.
        Step("data", 2, ce=True),
        Step(
            "ack",
            2,
            field=0,
            grants=(3,),
            states={0: 2, 1: 2, 2: 2, 3: 1},
            h=1,
            queue=(0, 1, 2),
        ),
        # Flow 3 sends its segment, unmarked: R1 (1 segment, no mark) H = 2.
        # R3: its turn ends, 1 holder < H 2: it keeps the slot and, flows
        # waiting, is offered one segment; R5: the free slot goes to the head,
        # flow 0.
        Step("data", 3),
        Step(
            "ack",
            3,
            field=SEG,
            grants=(0,),
            states={0: 1, 1: 2, 2: 2, 3: 1},
            h=2,
            queue=(1, 2),
        ),
    ),
)

# Two flows, one slot (B = 1 MSS): both connect (B2: zero windows), then
# R1: H = min(2, 1) = 1. R2: flow 0's request takes the slot; B1: share
# max(1/2, 1) = 1 MSS. Flow 1 finds no free slot: it waits, zero (E: the
# handshake left nothing open).
ONE_SLOT_START = (
    Step("open", 0, field=0),
    Step("open", 1, field=0),
    Step("req", 0, size=100, field=SEG, states={0: 1}, h=1),
    Step("req", 1, size=100, field=0, states={0: 1, 1: 2}, queue=(1,)),
)

SHORT = Scenario(
    "short-segment",
    "two flows, one slot (B = 1 MSS): a response's short last segment gives "
    "the slot back, the next waiting flow gets it, and the flow's next "
    "request waits for a turn",
    flows=2,
    budget_segs=1,
    steps=(
        *ONE_SLOT_START,
        # R1: 1 segment, no mark: H + 1, held at the ceiling 1. R3: flow 0's
        # turn ends, a flow waits and no slot is free: the slot passes to
        # flow 1, flow 0 waits.
        Step("data", 0),
        Step("ack", 0, field=0, grants=(1,), states={0: 2, 1: 1}, h=1, queue=(0,)),
        # R4: flow 1's response ends with 500 bytes: the slot goes back, flow
        # 1 is idle with a zero window (E: its last ACK offered nothing); R5:
        # the free slot goes to flow 0.
        Step("data", 1, size=500),
        Step("ack", 1, field=0, grants=(0,), states={0: 1, 1: 0}, queue=()),
        # R2: flow 1's next request finds no free slot: it waits.
        Step("req", 1, size=100, field=0, states={0: 1, 1: 2}, queue=(1,)),
    ),
)

STALE = Scenario(
    "stale-holder",
    "two flows, one slot: a holder with nothing to send loses its slot at the "
    "agent's tick; a waiting flow keeps the window it was already offered",
    flows=2,
    budget_segs=1,
    steps=(
        *ONE_SLOT_START,
        # R6: flow 0 has sent nothing since it took the slot, far longer than
        # 4 RTTs and 2 ticks: its slot is taken back, then granted to flow 1.
        Step("tick", grants=(1,), states={0: 0, 1: 1}, queue=()),
        # R1: H stays 1 (ceiling). R3: flow 1's turn ends, no one waits: it
        # keeps the slot; B1: W (2 MSS after its window of data, slow start)
        # capped at 1 MSS.
        Step("data", 1),
        Step("ack", 1, field=SEG, states={0: 0, 1: 1}, h=1),
        # R2: flow 0's next request finds no free slot: it waits with a zero
        # window, but E keeps the segment its first request offered (its ack
        # has not moved): one segment.
        Step("req", 0, size=100, field=SEG, states={0: 2, 1: 1}, queue=(0,)),
        # It sends its 500-byte answer through that segment. R4: waiting, it
        # leaves the queue, idle, its window closed completely (E would have
        # kept 1448 - 500 = 948 bytes). No one waits: no grant.
        Step("data", 0, size=500),
        Step("ack", 0, field=0, states={0: 0, 1: 1}, queue=()),
        # R3: flow 1's turn ends and no one waits (flow 0 left): it keeps the
        # slot.
        Step("data", 1),
        Step("ack", 1, field=SEG, states={0: 0, 1: 1}, h=1),
    ),
)

AFTER_GRANT = Scenario(
    "after-a-grant",
    "two flows, one slot: our ACK at the same ack right after a grant (the "
    "kernel's window update) keeps the granted turn; a finished flow's next "
    "request takes a free slot",
    flows=2,
    budget_segs=1,
    steps=(
        *ONE_SLOT_START,
        # R3: flow 0's turn ends, the slot passes to flow 1.
        Step("data", 0),
        Step("ack", 0, field=0, grants=(1,), states={0: 2, 1: 1}, queue=(0,)),
        # Our ACK to flow 1 with nothing new acknowledged: R3 its turn goes on
        # (the grant's segment is still to come); it is offered one segment.
        Step("ack", 1, field=SEG, grants=(), states={0: 2, 1: 1}, queue=(0,)),
        # R1: H + 1, held at 1. R3: that segment ends the turn (E: nothing
        # left of the 1448 bytes offered), the slot passes to flow 0.
        Step("data", 1),
        Step("ack", 1, field=0, grants=(0,), states={0: 1, 1: 2}, h=1, queue=(1,)),
        # R4: flow 0's answer ends with 500 bytes: idle, zero (E: its last ACK
        # offered nothing); R5: the free slot goes to flow 1.
        Step("data", 0, size=500),
        Step("ack", 0, field=0, grants=(1,), states={0: 0, 1: 1}, queue=()),
        # R4: flow 1's ends too (its grant's edge is not our last ACK's: zero).
        Step("data", 1, size=500),
        Step("ack", 1, field=0, states={0: 0, 1: 0}, queue=()),
        # R2: flow 0's next request (at the same ack as its last ACK, not an
        # ACK of its short segment) takes the free slot: B1 one segment.
        Step("req", 0, size=100, field=SEG, states={0: 1, 1: 0}, queue=()),
    ),
)

LAST_SEGMENT = Scenario(
    "last-segment",
    "one flow with room for four segments: its answer's short last segment "
    "closes the window completely, where E alone would keep the rest open",
    flows=1,
    budget_segs=4,
    steps=(
        Step("open", 0, field=0),
        # R1: H = min(1, 4) = 1; R2: the request takes it; B1: W = B = 4 MSS,
        # the share (F = 1: the whole budget).
        Step("req", 0, size=100, field=4 * SEG, states={0: 1}, h=1),
        # R3: 4344 of the 5792 offered are left: the turn goes on; B1: W is
        # still 4 MSS (its window of data, 5792 bytes, has not ended).
        Step("data", 0),
        Step("ack", 0, field=4 * SEG, states={0: 1}),
        # R4: its 500-byte last segment: idle, the window closed completely
        # (E would keep 1448 + 5792 - 1948 = 5292 bytes, field 662).
        Step("data", 0, size=500),
        Step("ack", 0, field=0, states={0: 0}),
        # R2: the next request takes the free slot; B1: W 4 MSS (its window of
        # data, 1948 bytes so far, has not ended).
        Step("req", 0, size=100, field=4 * SEG, states={0: 1}),
    ),
)

ACKS_DUE = Scenario(
    "acknowledgments-due",
    "three flows share B = 3 MSS, an acknowledgment due taking half a segment: "
    "H starts with every flow's acknowledgment counted, so one flow holds "
    "while the requests go out, and H grows as the acknowledgments arrive",
    flows=3,
    budget_segs=3,
    ack_cost=MSS // 2,
    steps=(
        *(Step("open", i, field=0) for i in range(3)),
        # R8: H's start counts all F = 3 acknowledgments due: min(3, (4344 -
        # 3 x 724) // 1448) = min(3, 2172 // 1448) = 1 (R7 alone, one due,
        # would give (4344 - 724) // 1448 = 2). R2: the slot is free; B1: W =
        # B capped at the share 4344 / 3 = 1 MSS.
        Step("req", 0, size=100, field=SEG, states={0: 1}, h=1),
        # R8: still 1 (two due, F = 3 counted); R2: 1 holder, no free slot:
        # flow 1 waits, zero.
        Step("req", 1, size=100, field=0, states={0: 1, 1: 2}, h=1, queue=(1,)),
        Step("req", 2, size=100, field=0, states={0: 1, 1: 2, 2: 2}, h=1, queue=(1, 2)),
        # Flow 0's segment acknowledges our request: two due (R7). R1: the
        # first window of data (H = 1 segment) ends, no mark: H = 1 + 1 = 2,
        # within the ceiling min(3, (4344 - 1448) // 1448) = 2.
        Step("data", 0, h=2),
        # R3: flow 0's turn ends with 1 holder < H 2: it keeps its slot, one
        # segment while flows wait; R5: the free slot goes to flow 1.
        Step("ack", 0, field=SEG, grants=(1,), states={0: 1, 1: 1, 2: 2}, h=2, queue=(2,)),
        # Flow 1's segment pays its acknowledgment: one due, ceiling (4344 -
        # 724) // 1448 = 2; R1's window of data has 1 of 2 segments: H = 2.
        Step("data", 1, h=2),
        # R3: flow 1's turn ends, 2 holders = H, flow 2 waits: the slot
        # passes to flow 2 (its grant first), flow 1 waits.
        Step("ack", 1, field=0, grants=(2,), states={0: 1, 1: 2, 2: 1}, h=2, queue=(1,)),
        # Flow 2's segment pays the last acknowledgment: none due, ceiling
        # min(3, 3) = 3. R1: the window of data (2 segments) ends, no mark:
        # H = 3.
        Step("data", 2, h=3),
        # R3: flow 2's turn ends with 2 holders < 3: it keeps its slot, one
        # segment; R5: the free slot goes to flow 1.
        Step("ack", 2, field=SEG, grants=(1,), states={0: 1, 1: 1, 2: 1}, h=3, queue=()),
    ),
)

SCENARIOS = (TURNS, SHORT, STALE, AFTER_GRANT, LAST_SEGMENT, ACKS_DUE)
