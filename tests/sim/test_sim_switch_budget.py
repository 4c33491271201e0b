"""The model switch's receiver budget (sim/cpp/switch_budget.h) against the rule's
text, docs/algorithms.md §8: the scenarios of the BMv2 PTF suite
(ptf-tests/tests/rx_budget.py), the same scripted handshakes and ACKs, each
expected window worked by hand from §8 (comment beside it).

Scripted packets go through the model switch's own path (`SwitchBudget::Ipv4`,
ns-3 IPv4 + TCP headers, the window scale as a TCP option); IPv6 and options
the parser cannot walk, which the model's IPv4 TCP never sends, go to the rule
itself (`SwitchBudget::Handle`). The model computes no checksum (sim/MODEL.md),
so the checksum the PTF tests assert is BMv2's alone.

Budget of every test but the ageing one (as the PTF suite's): B = 8 segments of
1448 bytes = 11584, so (§8) share(1) = 11584, share(2) = 5792, share(3) =
share(4) = 2896 and share(N >= 5) = 1448 (the floor); epoch 2^30 ticks (no
flow ages out while a test runs).

Every packet sent here is checked for what leaves for it: one packet, or for
the ACK that ends the handshake of a flow the receiver opened (its SYN had ACK
clear), without payload, of known scale, that ACK and then a copy of it with
window 0 (§8, "The handshake's ACK").
"""

from __future__ import annotations

from typing import Any

from p4incast.model import switch_budget
from p4incast.model.scheme import App, Point, Scheme, base_rtt_s
from p4incast.sim import engine

RX4, RX6 = "10.0.2.2", "2001:db8:2::2"
MSS = 1448
B = 8 * MSS  # 11584 bytes
LONG_EPOCH = 1 << 30
FIN, SYN, ACK, PSH, RST = 0x01, 0x02, 0x10, 0x08, 0x04
NO_WS, BAD_OPTIONS = -1, -2  # the SYN's window-scale option: none; options not walkable


def peer4(i: int) -> str:
    return f"10.0.1.{10 + i}"


def peer6(i: int) -> str:
    return f"2001:db8:1::{10 + i:x}"


class Switch:
    """One model switch port with its budget, and the receiver's packets."""

    def __init__(self, p4i: Any, epoch_ticks: int = LONG_EPOCH, budget: int = B) -> None:
        self.probe = p4i.SwitchBudgetProbe()
        sw = self.probe.sw
        sw.budgetBytes, sw.mss = budget, MSS
        sw.slots = switch_budget.FLOW_SLOTS
        sw.epochTicks = epoch_ticks
        sw.tickS = switch_budget.TICK_SECONDS["v1model"]
        self.now = 0.0

    @property
    def sw(self) -> Any:
        return self.probe.sw

    def sent(self) -> list[int]:
        """The windows of the packets the switch forwarded for the last one sent."""
        return [int(p.window) for p in self.probe.sent]

    def one(self) -> int:
        """The window of the one packet forwarded for the last one sent (no copy)."""
        windows = self.sent()
        assert len(windows) == 1, f"forwarded {windows}"
        return windows[0]

    def send(
        self,
        i: int,
        flags: int,
        window: int,
        *,
        ws: int = NO_WS,
        payload: int = 0,
        sport: int | None = None,
        dport: int = 5001,
    ) -> list[int]:
        """Any packet of flow i from the receiver; the windows of what leaves."""
        port = sport or 50000 + i
        self.probe.Send4(RX4, peer4(i), port, dport, flags, window, ws, payload, self.now)
        return self.sent()

    def syn(
        self,
        i: int,
        scale: int | None,
        *,
        sport: int | None = None,
        dport: int = 5001,
        accept: bool = False,
    ) -> int:
        """The receiver's SYN (it connects), or with `accept` its SYN-ACK."""
        ws = NO_WS if scale is None else scale
        flags = SYN | ACK if accept else SYN
        self.send(i, flags, 64240, ws=ws, sport=sport, dport=dport)
        return self.one()

    def ack(
        self,
        i: int,
        window: int,
        *,
        payload: int = 0,
        sport: int | None = None,
        dport: int = 5001,
    ) -> int:
        """An ACK (with `payload`: PSH too) that is not a handshake's zero-copy
        one: its window as forwarded, the only packet that leaves."""
        flags = ACK | (PSH if payload else 0)
        self.send(i, flags, window, payload=payload, sport=sport, dport=dport)
        return self.one()

    def handshake(
        self, i: int, scale: int | None, *, sport: int | None = None, dport: int = 5001
    ) -> None:
        """Flow i's SYN (the receiver connects), then the ACK that ends its
        handshake (w 29200, no payload): it counts the flow and offers two
        segments (§8, "The handshake's ACK"): ceil(2896 / 2^s) units, s = the
        scale (none: 0); and a flow the receiver opened gets that ACK again
        right after it with window 0, the rest of it unchanged."""
        self.syn(i, scale, sport=sport, dport=dport)
        s = min(scale or 0, 14)
        two = (2 * MSS + (1 << s) - 1) >> s
        assert self.send(i, ACK, 29200, sport=sport, dport=dport) == [two, 0]
        first, copy = self.probe.sent
        fields = ("flags", "srcPort", "dstPort", "seq", "ack", "payload", "src", "dst")
        assert [getattr(copy, f) for f in fields] == [getattr(first, f) for f in fields]

    def syn6(self, i: int, ws: int) -> int:
        return int(self.probe.Send6(RX6, peer6(i), 50000 + i, 5001, SYN, 64240, ws, self.now))

    def ack6(self, i: int, window: int) -> int:
        self.probe.Send6(RX6, peer6(i), 50000 + i, 5001, ACK, window, NO_WS, self.now)
        return self.one()

    def handshake6(self, i: int, scale: int) -> int:
        """Flow i's SYN and its handshake's ACK (w 29200) on IPv6: the ACK's window;
        it leaves twice (the copy's window 0), as on IPv4."""
        self.syn6(i, scale)
        self.probe.Send6(RX6, peer6(i), 50000 + i, 5001, ACK, 29200, NO_WS, self.now)
        first, zero = self.sent()
        assert zero == 0
        return first


def test_worked_table_scales_none_7_3_0_14(p4i: Any) -> None:
    """§8's worked table, steps 1-7 (PTF RxBudgetScalesTest)."""
    s = Switch(p4i)
    A, B_, C, D, E = range(5)
    # Step 1: A's SYN has no window-scale option: s = 0; N = 1, share 11584,
    # w 29200 -> min(29200, 11584) = 11584.
    s.handshake(A, None)
    assert s.ack(A, 29200) == 11584
    # Step 2: B at scale 7; N = 2, share 5792: ceil(5792 / 128) = 46.
    s.handshake(B_, 7)
    assert s.ack(B_, 512) == 46
    # Step 3: C at scale 3; N = 3, share 2896: ceil(2896 / 8) = 362.
    s.handshake(C, 3)
    assert s.ack(C, 8000) == 362
    # Step 4: D at scale 0; N = 4, share 2896 > 2000: never raised.
    s.handshake(D, 0)
    assert s.ack(D, 2000) == 2000
    # Step 5: A again, N = 4: 2896.
    assert s.ack(A, 29200) == 2896
    # Step 6: E at scale 14; N = 5, share 1448 (floor): ceil(1448 / 16384) = 1.
    s.handshake(E, 14)
    assert s.ack(E, 4) == 1
    # Step 7: C's request, 100 bytes of data on the ACK; N = 5, share 1448 at
    # scale 3: ceil(1448 / 8) = 181.
    assert s.ack(C, 8000, payload=100) == 181
    # Counted: 12 ACKs held to the share (the 5 handshakes' and steps 1-7), 11
    # of them lowered (all but step 4); 5 flows, each once in this one epoch.
    sw = s.sw
    assert (sw.acks, sw.rewritten, sw.flowEpochs, sw.untracked) == (12, 11, 5, 0)


def test_the_handshakes_ack_leaves_twice_only_when_all_three_conditions_hold(p4i: Any) -> None:
    """§8, "The handshake's ACK": the ACK that counts a flow leaves twice (its
    two segments, then window 0) only if it has no payload, the receiver
    opened the flow (its SYN had ACK clear) and the flow's scale is known.
    Each condition broken alone, it leaves once; nothing but the packets
    changes (the copy is counted nowhere):
    - flow 0, the receiver accepts (its SYN-ACK, scale 7): its first ACK
      (w 29200, no payload) counts it, N = 1, two segments ⌈2896 / 128⌉ = 23,
      alone; its next ACK: share(1) = 11584, ⌈11584 / 128⌉ = 91 (90.5 up);
    - flow 1, the receiver connects (SYN, scale 3), its handshake's ACK
      carries 100 bytes (a request on the ACK): N = 2, ⌈2896 / 8⌉ = 362,
      alone; its next ACK: share(2) = 5792, 5792 / 8 = 724;
    - flow 2 (IPv6), the receiver connects, its SYN's options cannot be
      walked (scale unknown): its handshake's ACK counts it (N = 3) and leaves
      once, as it came (29200), counted as of unknown scale;
    - flow 3, all three hold (SYN, scale 0, no payload): N = 4, 2896 and then
      0; its next ACK: share(4) = 2896;
    - flow 0 connects again on its ports (a SYN, ACK clear, on its own slot:
      the slot now records a flow the receiver opened): the SYN takes it out
      of the count (N = 3), its handshake's ACK counts it again (N = 4), 23
      and then 0.
    Counters: 7 ACKs held to the share (every ACK here but flow 2's), all 7
    lowered; 5 flow counts (flows 0-3 and flow 0 again); 1 of unknown scale."""
    s = Switch(p4i)
    assert s.syn(0, 7, accept=True) == 64240
    assert s.send(0, ACK, 29200) == [23]
    assert s.ack(0, 29200) == 91
    s.syn(1, 3)
    assert s.send(1, ACK | PSH, 29200, payload=100) == [362]
    assert s.ack(1, 29200) == 724
    s.probe.Send6(RX6, peer6(2), 50002, 5001, SYN, 64240, BAD_OPTIONS, 0.0)
    assert s.ack6(2, 29200) == 29200
    s.handshake(3, 0)  # [2896, 0]
    assert s.ack(3, 29200) == 2896
    s.handshake(0, 7)  # [23, 0]
    sw = s.sw
    assert (sw.acks, sw.rewritten, sw.flowEpochs, sw.unknownScale) == (7, 7, 5, 1)


def test_syns_are_not_rewritten(p4i: Any) -> None:
    """Only an ACK (ACK set, none of SYN, FIN, RST) carries a window the budget
    lowers (§8, "Which packets"): the SYN leaves with its own 64240, the RST
    and the FIN with theirs."""
    s = Switch(p4i)
    assert s.syn(0, 7) == 64240
    assert s.send(0, FIN | ACK, 29200) == [29200]
    s.syn(0, 7)
    assert s.send(0, RST | ACK, 29200) == [29200]


def test_ipv6_scale_7(p4i: Any) -> None:
    """IPv6, scale 7, N = 1: ceil(11584 / 128) = 91 (90.5 up) (PTF RxBudgetIpv6Test)."""
    s = Switch(p4i)
    assert s.handshake6(0, 7) == 23  # the handshake's ACK: ceil(2896 / 128), then 0
    assert s.ack6(0, 1000) == 91


def test_a_port_without_a_budget_leaves_everything(p4i: Any) -> None:
    """B = 0 (the budget off): SYNs and ACKs leave unchanged (PTF RxBudgetOffTest)."""
    s = Switch(p4i, budget=0)
    s.syn(0, 7)
    assert s.ack(0, 29200) == 29200
    assert s.sw.acks == 0


def test_a_flow_whose_syn_was_not_seen_is_not_counted_and_left_alone(p4i: Any) -> None:
    """§8, "Flows and N": a flow counts from its SYN. Flow 0's ACK comes first
    (no SYN): forwarded unchanged, not counted, counted untracked; flow 1 then
    opens at scale 0, and its ACK sees N = 1: share 11584 (PTF
    RxBudgetUnseenScaleTest)."""
    s = Switch(p4i)
    assert s.ack(0, 29200) == 29200  # no slot: not fresh, no copy
    s.handshake(1, 0)
    assert s.ack(1, 29200) == 11584
    assert s.ack(0, 29200) == 29200
    assert (s.sw.untracked, s.sw.unknownScale, s.sw.flowEpochs) == (2, 0, 1)


def test_a_flow_whose_slot_is_held_takes_way_1_and_both_held_fail_open(p4i: Any) -> None:
    """Flow A holds its way-0 slot; flow B, of the same way-0 slot, takes its
    way-1 slot and is counted beside A (N = 2, share 5792); flow C, whose way-0
    slot is A's and way-1 slot B's, is forwarded unchanged and counted
    untracked (fail-open), N stays 2 (PTF RxBudgetCollisionTest). The slots
    are the pipeline's CRC-32 of the flow (switch_budget.flow_crc, zlib)."""
    s = Switch(p4i)
    a0, _a1 = switch_budget.flow_slots(switch_budget.flow_crc(RX4, peer4(0), 50000, 5001))
    b_rx, b_peer = switch_budget.ports_in_slots(RX4, peer4(0), a0, 7)
    c_rx, c_peer = switch_budget.ports_in_slots(RX4, peer4(1), a0, 7)  # another peer
    s.handshake(0, 0)  # A: way 0, counted, N = 1
    s.handshake(0, 0, sport=b_rx, dport=b_peer)  # B: way 1, counted, N = 2
    assert s.ack(0, 29200) == 5792
    assert s.ack(0, 29200, sport=b_rx, dport=b_peer) == 5792
    assert s.sw.untracked == 0 and s.sw.flowEpochs == 2
    s.syn(1, 0, sport=c_rx, dport=c_peer)  # C: both ways held, untracked
    assert s.ack(1, 29200, sport=c_rx, dport=c_peer) == 29200
    assert s.ack(0, 29200) == 5792  # still N = 2
    assert (s.sw.untracked, s.sw.flowEpochs) == (2, 2)
    # B closes: its way-1 slot empties and C's next SYN takes it (N = 3 once
    # C's handshake ends: share 2896), while A keeps way 0.
    assert s.send(0, FIN | ACK, 29200, sport=b_rx, dport=b_peer) == [29200]
    s.handshake(1, 0, sport=c_rx, dport=c_peer)
    assert s.ack(1, 29200, sport=c_rx, dport=c_peer) == 5792  # N = 2: A and C
    # A slot opened by a SYN and not yet counted is taken by the next SYN to
    # it: the first flow's ACK then finds no slot of its own in either way.
    home = switch_budget.flow_slots(switch_budget.flow_crc(RX4, peer4(2), 50002, 5001))
    d_rx, d_peer = switch_budget.ports_in_slots(RX4, peer4(2), home[0], home[1])
    s.syn(2, 0)
    s.handshake(2, 0, sport=d_rx, dport=d_peer)
    assert s.ack(2, 29200) == 29200
    assert s.ack(2, 29200, sport=d_rx, dport=d_peer) == 2896  # N = 3


def test_options_not_walkable_leave_the_scale_unknown(p4i: Any) -> None:
    """Five SYNs whose options cannot be walked: their flows' ACKs are left alone
    (scale unknown) and counted; a good flow after them sees N = 6 (five of
    unknown scale and itself), share 1448 (floor), scale 0: 1448 (PTF
    RxBudgetMalformedOptionsTest; the parser's verdict given to the rule)."""
    s = Switch(p4i)
    for i in range(5):
        s.probe.Send6(RX6, peer6(i), 50000 + i, 5001, SYN, 64240, BAD_OPTIONS, 0.0)
        assert s.ack6(i, 29200) == 29200
    assert s.sw.unknownScale == 5
    assert s.handshake6(5, 0) == 2896  # the handshake's ACK: two segments, then 0
    assert s.ack6(5, 29200) == 1448


def test_idle_flows_age_out(p4i: Any) -> None:
    """Epochs of 1024 ticks (1.05 s): three flows at scale 0 within one epoch,
    each counted at its handshake's ACK (two segments), N = 3, share 2896; 3 s
    later (more than two epochs) with no packet all three have aged out: flow
    0's ACK, its slot still its own, counts it again, alone: N = 1, share
    11584 (PTF RxBudgetAgeingTest)."""
    s = Switch(p4i, epoch_ticks=1024)
    for i in range(3):
        s.handshake(i, 0)
    assert s.ack(2, 29200) == 2896  # N = 3
    s.now = 3.0
    assert s.ack(0, 29200) == 11584


def test_a_flow_counts_for_one_to_two_epochs_after_its_last_packet(p4i: Any) -> None:
    """§8, "Flows and N": a flow seen in the previous epoch still counts. Epochs of
    1024 ticks of 1.024 ms: flows 0 and 1 open in epoch 0 (t = 0, epoch 1023;
    each counted at its handshake's ACK);
    at t = 1.5 s (tick 1464, epoch 2047) flow 0's ACK moves it from prev to
    cur: N = cur 1 + prev 1 = 2, share 5792; at t = 2.5 s (tick 2441, epoch
    3071) flow 1, last seen two epochs ago, has aged out and flow 0 moves
    again: N = 1, 11584."""
    s = Switch(p4i, epoch_ticks=1024)
    for i in range(2):
        s.handshake(i, 0)
    s.now = 1.5
    assert s.ack(0, 29200) == 5792
    s.now = 2.5
    assert s.ack(0, 29200) == 11584


def test_idle_persistent_connections_stay_counted_across_rounds(p4i: Any) -> None:
    """§8, "Flows and N", at the default epoch 2^17 ticks (134.2 s): three flows
    open at t = 0 (tick 0, epoch 131071), each counted at its handshake's
    ACK. At t = 4 s (a testbed RTO; tick
    3906, the same epoch) and at t = 200 s (tick 195312, epoch 262143, the
    next one: prev) flow 0's ACK still sees N = 3, share 2896; the idle flows
    1 and 2 were never uncounted. At t = 300 s (tick 292968, epoch 393215)
    flows 1 and 2, last seen in epoch 131071 = 393215 - 2 x 131072, have aged
    out; flow 0, seen in the previous epoch: N = 1, 11584."""
    s = Switch(p4i, epoch_ticks=switch_budget.DEFAULT_EPOCH_TICKS)
    assert switch_budget.DEFAULT_EPOCH_TICKS == 1 << 17
    for i in range(3):
        s.handshake(i, 0)
    s.now = 4.0
    assert s.ack(0, 29200) == 2896
    s.now = 200.0
    assert s.ack(0, 29200) == 2896
    s.now = 300.0
    assert s.ack(0, 29200) == 11584


def test_fin_and_rst_uncount_a_flow(p4i: Any) -> None:
    """§8, "Flows and N": three flows open, each counted at its handshake's ACK
    (two segments); flow 0's next ACK: N = 3, 2896. Flow 1's FIN
    closes it: flow 0's ACK sees N = 2, share 5792; flow 1's last ACK (of the
    peer's FIN) finds its slot closed: unchanged, untracked. Flow 2's RST
    closes it: N = 1, 11584. Flow 1's new SYN opens it again, counted from
    its ACK: N = 2, 5792."""
    s = Switch(p4i)
    for i in range(3):
        s.handshake(i, 0)
    assert s.ack(0, 29200) == 2896
    assert s.send(1, FIN | ACK, 29200) == [29200]
    assert s.ack(0, 29200) == 5792
    assert s.ack(1, 29200) == 29200
    assert s.sw.untracked == 1
    assert s.send(2, RST | ACK, 0) == [0]
    assert s.ack(0, 29200) == 11584
    s.handshake(1, 0)
    assert s.ack(1, 29200) == 5792


def test_a_fin_in_the_epoch_after_uncounts_from_prev(p4i: Any) -> None:
    """§8, "Flows and N": a FIN of a flow last seen in the previous epoch leaves
    prev. Epochs of 1024 ticks: flows 0, 1, 2 open at t = 0 (epoch 1023;
    each counted at its handshake's ACK); at
    t = 1.5 s (epoch 2047) flow 1's FIN: prev 3 - 1 = 2, cur 0; flow 0's ACK
    then moves it to cur: N = cur 1 + prev 1 = 2, share 5792."""
    s = Switch(p4i, epoch_ticks=1024)
    for i in range(3):
        s.handshake(i, 0)
    s.now = 1.5
    assert s.send(1, FIN | ACK, 29200) == [29200]
    assert s.ack(0, 29200) == 5792


def test_more_flows_than_slots_fail_open(p4i: Any) -> None:
    """FLOW_WAYS × FLOW_SLOTS + 64 = 8256 flows at scale 0, each a SYN and its
    handshake's ACK (counted: two segments, then the zero-window copy): a flow
    whose slots in both ways counted flows hold is untracked (its SYN and its
    ACK, which leaves alone, unchanged), so the untracked packets are twice
    the flows `switch_budget.place` finds no way for (the pipeline's CRC-32).
    An untracked flow's ACK leaves unchanged, a tracked one's is lowered to
    the floor, 1448 (PTF RxBudgetTableFullTest)."""
    s = Switch(p4i)
    total = switch_budget.FLOW_WAYS * switch_budget.FLOW_SLOTS + 64
    peers = [(i // 60000, 1024 + i % 60000) for i in range(total)]
    ways = switch_budget.place(
        switch_budget.flow_crc(RX4, peer4(peer), sport, 5001) for peer, sport in peers
    )
    for (peer, sport), way in zip(peers, ways, strict=True):
        s.syn(peer, 0, sport=sport)
        # the handshake's ACK: two segments and the zero copy, or untracked
        expect = [29200] if way is None else [2896, 0]
        assert s.send(peer, ACK, 29200, sport=sport) == expect
    untracked = [i for i, way in enumerate(ways) if way is None]
    assert untracked and s.sw.untracked == 2 * len(untracked)  # the SYN and the ACK of each
    assert s.sw.flowEpochs == total - len(untracked)
    lost = untracked[0]
    assert s.ack(peers[lost][0], 29200, sport=peers[lost][1]) == 29200
    kept = ways.index(1)  # a flow in way 1
    assert s.ack(peers[kept][0], 29200, sport=peers[kept][1]) == 1448


def test_the_ways_a_flow_is_placed_in() -> None:
    """switch_budget.place, the expectation of the table-full tests, against §8's
    order worked by hand on CRCs whose slots are chosen (way 0's slot the low
    12 bits, way 1's the next 12, the rest of the signature): (5, 7) takes way
    0; (5, 9) finds slot 5 of way 0 held and takes way 1; another flow of (5, 9)
    finds both held: untracked; (6, 7) takes way 0 (way 1's slot 7 is free, but
    way 0 is tried first); (6, 1) way 1."""
    crcs = [5 | 7 << 12, 5 | 9 << 12, 5 | 9 << 12 | 1 << 24, 6 | 7 << 12, 6 | 1 << 12]
    assert [switch_budget.flow_slots(c) for c in crcs[:2]] == [(5, 7), (5, 9)]
    assert switch_budget.place(crcs) == [0, 1, None, 0, 1]
    # the receiver's key, 36 bytes: zlib's CRC-32 of it, BMv2's crc32
    crc = switch_budget.flow_crc(RX4, peer4(0), 50000, 5001)
    rx_port, peer_port = switch_budget.ports_in_slots(RX4, peer4(3), *switch_budget.flow_slots(crc))
    assert rx_port >= 1024 and peer_port >= 1024
    other = switch_budget.flow_crc(RX4, peer4(3), rx_port, peer_port)
    assert switch_budget.flow_slots(other) == switch_budget.flow_slots(crc) and other != crc


def test_round_0s_first_flight_is_share_n_on_the_model(p4i: Any) -> None:
    """The model end to end (sim/cpp/scenario.h, front+switch): B = 8 segments,
    N = 8 persistent connections the receiver opens, all set up before the
    first request (round 0 starts 5 ms after the handshakes), so every request
    offers share(8) = max(⌊8 / 8⌋, 1) = one segment: round 0's first flight is
    8 × 1448 bytes, one segment per server (two segments each, 16, would be
    the handshake's window). Worked from the rule:
    - after the handshakes every server holds window 0: its handshake's ACK
      offered 2896 bytes (⌈2896 / 8⌉ = 362 units at the receiver's scale 3)
      and its copy 0, and ns-3 takes the copy (established, its ACK number 1
      is above the 0 ns-3 last recorded: TcpSocketBase::UpdateWindowSize);
    - the request (the same numbers, 181 units = 1448 bytes) raises it to 1448;
    - in the round's first RTT (125.952 µs on this topology) each server sends
      one segment: its highest sequence sent is 1449 (ns-3's first data byte
      is 1, its ISN being 0), 8 × 1448 bytes in all; the bottleneck's queue
      holds at most 8 packets in the round, with no drop and no timeout.
    ns-3 alone would do the same without the copy: its sender takes any
    window from an ACK whose number is above the one it recorded, and the
    handshake's ACK, which arrives in SYN_RCVD, records none (UpdateWindowSize
    returns before), so the request's share lowers the handshake's 2896
    (measured without the copy: windows 2896 before the request, the same
    first flight and rounds to the microsecond). What the copy shows on the
    model is the zero window between the handshake and the request, and that
    the request reopens it: the model's servers speak only when asked
    (Scenario::ServerRecv), so no server waits on its persist timer."""
    point = Point(
        Scheme("front+switch", "front", 20, "reno", switch_budget=True),
        8,
        app=App(sru_bytes=64 * 1024, rounds=1, jitter_us=0.0),
    )
    c = engine.run_config(point)
    c.switchBudgetBytes = B
    rtt = base_rtt_s(point.topology, MSS)
    assert round(rtt * 1e9) == 125952
    sc = p4i.Scenario(c)
    try:
        sc.Setup()
        sc.Advance(c.startS - 1e-6)
        assert int(sc.round) == -1 and int(sc.switchBudget.flowEpochs) == 8
        assert list(sc.ServerWindows()) == [0] * 8
        assert [int(f.maxSeqEnd) for f in sc.flows] == [0] * 8  # no data yet
        sc.Advance(c.startS + rtt)
        assert int(sc.round) == 0 and float(sc.roundStart) == c.startS
        assert list(sc.ServerWindows()) == [MSS] * 8
        assert [int(f.maxSeqEnd) for f in sc.flows] == [1 + MSS] * 8
        assert sc.Advance(c.maxSimS)
        (r,) = sc.results
        assert (int(r.drops), int(r.timeouts), int(r.retrans)) == (0, 0, 0)
        assert int(r.maxDepth) <= 8
    finally:
        p4i.Scenario.Teardown()
