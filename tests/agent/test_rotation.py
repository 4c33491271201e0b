"""newdctcp-budget's rotation: the BPF data path against the Python reference.

A driver plays the senders: a flow sends a segment only while the right edge
it was last offered (by an ACK, or by a window update the rotation forged)
lets it. Every ACK goes through rx_egress (BPF_PROG_TEST_RUN) and through
RxReference; the forged updates, which bpf_clone_redirect sends out of the
loopback device the test run uses, are captured there and must be
byte-identical to the reference's.
"""

from __future__ import annotations

import ctypes
import socket
import time

import pytest
from agent_labs import drain
from agent_traces import FlowTrace, L, R
from scapy.layers.inet import TCP
from scapy.layers.l2 import Ether
from test_conformance import tcp_checksum_ok

from p4incast.agent import datapath
from p4incast.agent.datapath import FlowKey, RxWin
from p4incast.agent.policies.budget import (
    ROT_HOLD,
    ROT_IDLE,
    ROT_WAIT,
    forged_update,
)
from p4incast.agent.policies.reference import RxReference
from p4incast.agent.rotation import STALE_RTTS, STALE_TICKS, Rescuer, stale

pytestmark = pytest.mark.root

MSS = 1448


class Driver:
    """Senders that respect the windows they were offered; L ACKs every segment."""

    def __init__(self, rx: RxWin, ref: RxReference, cap: socket.socket, n: int) -> None:
        self.rx, self.ref, self.cap = rx, ref, cap
        self.flows = [FlowTrace(lport=43000 + i, l_isn=9000 * (i + 1)) for i in range(n)]
        self.edge: dict[int, int] = {}  # lport -> right edge the sender last saw
        self.forged = 0
        self.max_open = 0

    def key(self, ft: FlowTrace) -> tuple[str, int, str, int]:
        return (R, ft.rport, L, ft.lport)

    def egress(self, ft: FlowTrace, frame: bytes, handshake: bool = False) -> int:
        rv, out, _ = self.rx.run(True, frame)
        assert rv == -1
        want = self.ref.egress(frame)
        t = Ether(out)[TCP]
        if want is not None:
            assert t.window == want, f"flow {ft.lport}: BPF {t.window}, reference {want}"
        assert tcp_checksum_ok(out)
        self.edge[ft.lport] = (t.ack + (t.window << 7)) & 0xFFFFFFFF
        got = drain(self.cap)
        if handshake:  # the copy offering 2 MSS ahead of the zero window
            assert len(got) == 1 and self.ref.copies[-1] == (self.key(ft), 23)
            return t.window
        ref_new = self.ref.rotation.forged[self.forged :]
        assert got == ref_new, "forged updates differ from the reference's"
        for fr in got:
            assert tcp_checksum_ok(fr)
            ft2 = next(f for f in self.flows if f.lport == Ether(fr)[TCP].sport)
            u = Ether(fr)[TCP]
            assert u.seq == ft2.l_next and u.ack == ft2.rcv  # the sender accepts it
            self.edge[ft2.lport] = (u.ack + (u.window << 7)) & 0xFFFFFFFF
        self.forged += len(got)
        opened = sum(1 for f in self.flows if self.can_send(f, 1))
        self.max_open = max(self.max_open, opened)
        return t.window

    def ingress(self, frame: bytes) -> None:
        rv, out, _ = self.rx.run(False, frame)
        assert rv == -1 and out == frame
        self.ref.ingress(frame)

    def can_send(self, ft: FlowTrace, size: int) -> bool:
        e = self.edge.get(ft.lport)
        return (
            e is not None
            and ((e - ft.r_next) & 0xFFFFFFFF) < 0x80000000
            and ((e - ft.r_next) & 0xFFFFFFFF) >= size
        )

    def open_all(self) -> None:
        for ft in self.flows:
            syn, syn_ack, last_ack = ft.handshake()
            self.egress(ft, syn[1])
            self.ingress(syn_ack[1])
            self.egress(ft, last_ack[1], handshake=True)
        for ft in self.flows:
            self.egress(ft, ft.request()[1])

    def step(self, ce: bool, size: int = MSS) -> int:
        """Every flow whose window allows sends one segment, L acknowledges it."""
        sent = 0
        for ft in self.flows:
            if self.can_send(ft, size):
                self.ingress(ft.data(ce=ce, size=size)[1])
                self.egress(ft, ft.ack()[1])
                sent += 1
        return sent


def rotating(
    rx: RxWin, cap: socket.socket, n: int, budget: int, ack_cost: int = 0
) -> tuple[Driver, RxReference]:
    """newdctcp-budget with rotation in BPF and in the reference, n flows open."""
    rx.configure(
        "newdctcp-budget",
        budget_bytes=budget,
        min_segs=1,
        init_segs=2,
        rotate=1,
        ack_cost=ack_cost,
    )
    ref = RxReference(
        "newdctcp-budget", init_segs=2, budget=budget, min_segs=1, rotate=1, ack_cost=ack_cost
    )
    d = Driver(rx, ref, cap, n)
    d.open_all()
    return d, ref


def test_rotation_matches_reference_and_keeps_h_flows_open(
    rxwin: RxWin, lo_capture: socket.socket
) -> None:
    n = 8
    budget = 8 * MSS
    d, ref = rotating(rxwin, lo_capture, n, budget)
    # H starts at its ceiling: a slot each
    assert ref.rotation.open == n and ref.rotation.slots(MSS) == n

    # Every segment marked: the flows' W fall to one segment, then H is cut,
    # fewer flows hold a window, the others wait and take turns.
    for _ in range(10):
        d.step(ce=True)
    g = rxwin.rotation()
    assert (g.open, g.waiting, g.slots) == (ref.rotation.open, ref.rotation.waiting, ref.rotation.h)
    assert g.cuts > 0 and 1 <= g.slots < n / 2 and g.waiting == n - g.slots
    # From here at most H flows have a window open at any moment, and turns go
    # round: every flow gets segments through, each its share.
    d.max_open = 0
    before = [ft.r_next for ft in d.flows]
    for _ in range(5):
        d.step(ce=True)
    assert 1 <= d.max_open <= g.slots
    got = [((ft.r_next - b) & 0xFFFFFFFF) // MSS for ft, b in zip(d.flows, before, strict=True)]
    assert min(got) >= 1 and max(got) - min(got) <= 1, got
    st = rxwin.stats()
    assert st["rot_grant"] == d.forged > 2 * n and st["forge_fail"] == 0

    # Unmarked: H grows by one per window of data (H segments) back to the
    # ceiling; every flow holds a slot again, no one waits.
    for _ in range(40):
        d.step(ce=False)
    g = rxwin.rotation()
    assert g.slots == ref.rotation.h == n
    assert g.waiting == ref.rotation.waiting == 0 and g.open == ref.rotation.open == n
    assert d.step(ce=False) == n
    for ft in d.flows:
        f = rxwin.flow(_key(ft))
        assert f is not None and f.w == ref.flows[d.key(ft)].w


def test_h_starts_with_every_acknowledgment_due_as_the_reference_does(
    rxwin: RxWin, lo_capture: socket.socket
) -> None:
    """docs/algorithms.md §3.6, "H's start": 8 flows, B = 8 MSS, an
    acknowledgment due taking half a segment (724 bytes). Until the first
    window of data ends H = min(8, (11584 - 8 x 724) // 1448) = 4: four
    requests take a slot, four wait. Each segment pays its flow's
    acknowledgment; unmarked, H then grows one a window of data to the
    ceiling with none due, min(8, 8) = 8. BPF and the reference agree on
    every window and forged update on the way (the Driver checks each)."""
    d, ref = rotating(rxwin, lo_capture, 8, 8 * MSS, ack_cost=MSS // 2)
    g = rxwin.rotation()
    assert ref.rotation.slots(MSS) == 4 and (g.open, g.waiting) == (4, 4)
    assert (ref.rotation.open, ref.rotation.waiting) == (4, 4)
    for _ in range(30):
        d.step(ce=False)
    g = rxwin.rotation()
    assert g.due == ref.rotation.due == 0
    assert g.slots == ref.rotation.h == 8 and g.open == ref.rotation.open == 8
    assert g.waiting == ref.rotation.waiting == 0


def test_rotation_short_segment_gives_the_slot_back(
    rxwin: RxWin, lo_capture: socket.socket
) -> None:
    """A segment shorter than the MSS ends what the flow had to send: its ACK
    closes the window and the slot goes to a waiting flow, not to the queue
    tail; the flow's next request takes a slot again."""
    n = 4
    budget = 4 * MSS
    d, ref = rotating(rxwin, lo_capture, n, budget)
    for _ in range(12):
        d.step(ce=True)
    assert ref.rotation.waiting > 0
    holder = next(ft for ft in d.flows if ref.rotation.entries[d.key(ft)].state == ROT_HOLD)
    d.ingress(holder.data(size=500)[1])
    w = d.egress(holder, holder.ack()[1])
    assert w == 0 and ref.rotation.entries[d.key(holder)].state == 0  # idle
    assert rxwin.stats()["rot_idle"] == 1
    # Its request comes back as a slot or a place in the queue, never lost.
    d.egress(holder, holder.request()[1])
    assert ref.rotation.entries[d.key(holder)].state in (1, 2)
    g = rxwin.rotation()
    assert (g.open, g.waiting) == (ref.rotation.open, ref.rotation.waiting)


def test_rotation_fin_counts_the_flow_out(rxwin: RxWin, lo_capture: socket.socket) -> None:
    n = 4
    budget = 4 * MSS
    d, ref = rotating(rxwin, lo_capture, n, budget)
    for _ in range(12):
        d.step(ce=True)
    for ft in d.flows:
        d.ingress(ft.fin()[1])
    g = rxwin.rotation()
    assert (g.open, g.waiting) == (0, 0)
    assert ref.rotation.open == ref.rotation.waiting == 0


def _key(ft: FlowTrace) -> FlowKey:
    return FlowKey.make(R, ft.rport, L, ft.lport)


def _rot(rxwin: RxWin, ft: FlowTrace) -> datapath.RotFlow:
    """The flow's rotation entry, which it must have."""
    r = rxwin.rot_flow(_key(ft))
    assert r is not None, f"no rotation entry for port {ft.lport}"
    return r


def _flow(rxwin: RxWin, ft: FlowTrace) -> datapath.Flow:
    """The flow's entry, which it must have."""
    f = rxwin.flow(_key(ft))
    assert f is not None, f"no flow entry for port {ft.lport}"
    return f


def test_rescue_takes_back_a_silent_holders_slot(rxwin: RxWin, lo_capture: socket.socket) -> None:
    """A holder with nothing to send never ends its turn: the agent's tick takes
    its slot back once it has been idle long enough and sends the head of the
    queue the window update the data path would have forged, from userspace."""
    n = 4
    budget = MSS  # H = 1: one flow at a time
    d, ref = rotating(rxwin, lo_capture, n, budget)
    for _ in range(3):
        d.step(ce=False)
    holder = next(ft for ft in d.flows if ref.rotation.entries[d.key(ft)].state == ROT_HOLD)
    head = ref.rotation.queue[0]
    assert rxwin.rotation().open == 1 and rxwin.rotation().waiting == n - 1

    rescue = Rescuer(rxwin, "lo", budget, tick_s=0.005)
    try:
        rescue.step(time.monotonic_ns())  # idle for less than two ticks: kept
        assert rescue.counts.reclaimed == 0 and drain(lo_capture) == []
        rescue.step(time.monotonic_ns() + 10**9)
    finally:
        rescue.close()
    assert rescue.counts.reclaimed == 1 and rescue.counts.granted == 1
    sent = drain(lo_capture)
    r = ref.rotation.entries[head]
    assert sent == [forged_update(r, head, -(-MSS // 128))]
    assert tcp_checksum_ok(sent[0])
    st = {ft.lport: _rot(rxwin, ft).state for ft in d.flows}
    assert st[holder.lport] == ROT_IDLE and st[head[3]] == ROT_HOLD
    g = rxwin.rotation()
    assert (g.open, g.waiting) == (1, n - 2)
    # idle for 4 smoothed RTTs, and at least two ticks
    assert stale(10**9, 0, 0, 1000, 0.005) and not stale(10**6, 0, 0, 1000, 0.005)


def test_rotation_leaves_flows_without_timestamps_alone(
    rxwin: RxWin, lo_capture: socket.socket
) -> None:
    """A forged update repeats the flow's timestamps: a flow that negotiated none
    is never made to wait (its windows are newdctcp-budget's), in BPF and in
    the reference alike."""
    budget = MSS
    rxwin.configure("newdctcp-budget", budget_bytes=budget, min_segs=1, init_segs=2, rotate=1)
    ref = RxReference("newdctcp-budget", init_segs=2, budget=budget, min_segs=1, rotate=1)
    flows = [FlowTrace(lport=44000 + i, l_isn=3000 * (i + 1), ts=False) for i in range(3)]
    got, want = [], []
    for ft in flows:
        for e, fr in ft.handshake():
            if e:
                rv, out, _ = rxwin.run(True, fr)
                w = ref.egress(fr)
                if w is not None:
                    got.append(Ether(out)[TCP].window)
                    want.append(w)
            else:
                rxwin.run(False, fr)
                ref.ingress(fr)
    assert len(drain(lo_capture)) == len(flows)  # the handshake's copies, nothing else
    for _ in range(4):
        for ft in flows:
            e, fr = ft.data(ce=True)
            rxwin.run(False, fr)
            ref.ingress(fr)
            e, fr = ft.ack()
            rv, out, _ = rxwin.run(True, fr)
            got.append(Ether(out)[TCP].window)
            want.append(ref.egress(fr))
    assert got == want and min(got[len(flows) :]) > 0
    g = rxwin.rotation()
    assert (g.open, g.waiting) == (0, 0) and not ref.rotation.entries and drain(lo_capture) == []


def test_rescue_puts_back_waiting_flows_the_queue_lost(
    rxwin: RxWin, lo_capture: socket.socket
) -> None:
    """Flows that wait by the table but are missing from the queue would never
    be granted: the rescue puts them back and grants the free slot."""
    n = 3
    d, ref = rotating(rxwin, lo_capture, n, MSS)
    for _ in range(2):
        d.step(ce=False)
    while rxwin.rotq_pop() is not None:  # the queue loses its entries
        pass
    rescue = Rescuer(rxwin, "lo", MSS, tick_s=0.005)
    try:
        rescue.step(time.monotonic_ns() + 10**9)  # the holder is idle: its slot is free
    finally:
        rescue.close()
    assert rescue.counts.requeued == 1 and rescue.counts.granted == 1
    assert len(drain(lo_capture)) == 1
    g = rxwin.rotation()
    assert (g.open, g.waiting) == (1, n - 2)


def _silent_holder_scene(
    rxwin: RxWin, cap: socket.socket, n: int
) -> tuple[Driver, RxReference, FlowTrace, list[tuple[str, int, str, int]]]:
    """H = 1: one holder, n - 1 flows waiting in the queue (their order)."""
    d, ref = rotating(rxwin, cap, n, MSS)
    for _ in range(3):
        d.step(ce=False)
    holder = next(ft for ft in d.flows if ref.rotation.entries[d.key(ft)].state == ROT_HOLD)
    assert (rxwin.rotation().open, rxwin.rotation().waiting) == (1, n - 1)
    return d, ref, holder, list(ref.rotation.queue)


def test_rescue_grant_is_a_holder_before_its_segment_is_acknowledged(
    rxwin: RxWin, lo_capture: socket.socket
) -> None:
    """The rescue's window update lets a segment out, which may be acknowledged
    at once, on another CPU. That ACK must find the flow holding the slot, end
    its turn and pass the slot on. (Sending first and marking the flow a holder
    after left it holding a closed window, out of the queue: it waited for its
    sender's zero-window probe, one min RTO — a 4.36 s round on the testbed.)"""
    d, ref, holder, queue = _silent_holder_scene(rxwin, lo_capture, 3)
    granted = {ft.lport: ft for ft in d.flows}[queue[0][3]]
    nxt = {ft.lport: ft for ft in d.flows}[queue[1][3]]
    acked: list[int] = []
    rescue = Rescuer(rxwin, "lo", MSS, tick_s=0.005)
    send = rescue._send

    def send_then_ack(key: FlowKey, r: datapath.RotFlow, field: int) -> None:
        send(key, r, field)
        rxwin.run(False, granted.data()[1])  # the segment arrives, is acknowledged
        _, out, _ = rxwin.run(True, granted.ack()[1])
        acked.append(Ether(out)[TCP].window)

    rescue._send = send_then_ack
    try:
        rescue.step(time.monotonic_ns() + 10**9)  # the holder is idle: its slot is free
    finally:
        rescue.close()
    assert rescue.counts.granted == 1 and acked == [0]  # the turn ended with that ACK
    st = {ft.lport: _rot(rxwin, ft).state for ft in d.flows}
    assert st[holder.lport] == ROT_IDLE  # its slot was taken back
    assert st[granted.lport] == ROT_WAIT and st[nxt.lport] == ROT_HOLD  # and passed on
    g = rxwin.rotation()
    assert (g.open, g.waiting) == (1, 1)
    sent = drain(lo_capture)  # the rescue's update, then the data path's to the next flow
    assert [Ether(f)[TCP].sport for f in sent] == [granted.lport, nxt.lport]


def test_scan_takes_back_exactly_the_stale_holders(rxwin: RxWin, lo_capture: socket.socket) -> None:
    """The take-back runs in BPF, in one pass over the table (ROT_OP_SCAN): it
    takes back the slots rotation.stale() says are stale (idle for more than
    4 smoothed RTTs and 2 ticks), no others, never a waiting flow's, and
    counts what is left."""
    n, tick = 6, 0.005
    d, ref = rotating(rxwin, lo_capture, n, 3 * MSS)  # H = 3: three holders
    holders = [ft for ft in d.flows if ref.rotation.entries[d.key(ft)].state == ROT_HOLD]
    assert len(holders) == 3 and rxwin.rot_count() == (3, 3)
    t0 = max(_rot(rxwin, ft).since for ft in holders)
    for ft, srtt in zip(holders, (1000, 5000, 20000), strict=True):
        f = _flow(rxwin, ft)
        f.srtt_us, f.last_ns = srtt, t0
        rxwin.lib.update(rxwin.flows_fd, _key(ft), f)
    now = t0 + 30_000_000  # 30 ms on: stale past 10, 20 and 80 ms
    want = {
        ft.lport
        for ft in holders
        if stale(now, _rot(rxwin, ft).since, t0, _flow(rxwin, ft).srtt_us, tick)
    }
    assert len(want) == 2
    got = rxwin.rot_scan(now, int(STALE_TICKS * tick * 1e9), STALE_RTTS)
    assert got == (1, 3, 2)
    st = {ft.lport: _rot(rxwin, ft).state for ft in d.flows}
    assert {p for p, s in st.items() if s == ROT_IDLE} == want
    assert sum(1 for s in st.values() if s == ROT_WAIT) == 3
    assert (rxwin.rotation().open, rxwin.rotation().waiting) == (1, 3)
    # Before anyone is stale, nothing is taken back.
    assert rxwin.rot_scan(t0, int(STALE_TICKS * tick * 1e9), STALE_RTTS) == (1, 3, 0)

    # The counters agree with the table; a drift is repaired by the rescue's
    # recount once it has seen the same difference twice, by adding to them.
    g = rxwin.rotation()
    g.waiting = 0
    rxwin.lib.update(rxwin.rot_fd, ctypes.c_uint32(0), g)
    rescue = Rescuer(rxwin, "lo", 3 * MSS, tick_s=tick)
    try:
        rescue._recount()
        assert rxwin.rotation().waiting == 0 and rescue.counts.recounted == 0
        rescue._recount()
    finally:
        rescue.close()
    assert rescue.counts.recounted == 1
    assert (rxwin.rotation().open, rxwin.rotation().waiting) == (1, 3)
