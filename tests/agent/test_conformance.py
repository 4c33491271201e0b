"""The loaded BPF data path and the Python reference agree, window for window.

Every trace goes through rx_ingress / rx_egress with BPF_PROG_TEST_RUN and
through agent/policies/reference.RxReference; the sequence of advertised
window fields must be identical, every rewritten ACK must carry a correct TCP
checksum, and the right edge must never move left.
"""

from __future__ import annotations

import struct
import time

import pytest
from agent_traces import FlowTrace, Item, L, R, bulk, standard_trace
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from p4incast.agent.datapath import FlowKey, RxWin
from p4incast.agent.policies.reference import RxReference

pytestmark = pytest.mark.root


def tcp_checksum_ok(frame: bytes) -> bool:
    """Ones'-complement sum over pseudo-header + TCP segment is 0xffff."""
    ip = frame[14:]
    ihl = (ip[0] & 15) * 4
    tot = struct.unpack("!H", ip[2:4])[0]
    seg = ip[ihl:tot]
    data = ip[12:20] + struct.pack("!BBH", 0, 6, len(seg)) + seg
    if len(data) % 2:
        data += b"\x00"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s == 0xFFFF


def drive(rx: RxWin, ref: RxReference, items: list[Item]) -> tuple[list[int], list[int]]:
    got: list[int] = []
    want: list[int] = []
    for egress, frame in items:
        rv, out, _ = rx.run(egress, frame)
        assert rv == -1, "programs must return TC_ACT_UNSPEC"
        if egress:
            w = ref.egress(frame)
            tcp_in, tcp_out = TCP(frame[34:]), Ether(out)[TCP]
            if w is not None:
                want.append(w)
                got.append(tcp_out.window)
            else:
                assert tcp_out.window == tcp_in.window
            # What left the program carries a valid checksum (RFC 1624 update).
            assert tcp_checksum_ok(out)
        else:
            ref.ingress(frame)
            assert out == frame, "ingress never changes a packet"
    return got, want


def right_edges_monotone(items: list[Item], rx_out: list[bytes]) -> None:
    last = None
    for (egress, _), out in zip(items, rx_out, strict=True):
        if not egress:
            continue
        t = Ether(out)[TCP]
        if "S" in t.flags:
            continue
        re = t.ack + (t.window << 7)
        if last is not None:
            assert ((re - last) & 0xFFFFFFFF) < 0x80000000, "right edge moved left"
        last = re


def test_standard_trace_windows_match_reference(rxwin: RxWin) -> None:
    rxwin.configure("newdctcp-rx")
    ref = RxReference("newdctcp-rx")
    items = standard_trace()
    got, want = drive(rxwin, ref, items)
    assert got == want
    assert len(got) > 150
    # The trace exercises every branch: some ACKs clamped, kernel value kept at the end.
    assert min(got) < 2000 and got[-1] == 20
    key = FlowKey.make(R, 5001, L, 40000)
    f = rxwin.flow(key)
    rf = ref.flows[(R, 5001, L, 40000)]
    assert f is not None
    assert (f.w, f.mss, f.wscale, f.pkts, f.ce) == (rf.w, rf.mss, rf.wscale, rf.pkts, rf.ce)
    assert f.mss == 1448 and f.wscale == 7
    assert f.windows == len(rf.windows) and f.marked_windows > 0


def test_right_edge_never_moves_left(rxwin: RxWin) -> None:
    rxwin.configure("newdctcp-rx")
    items = standard_trace()
    outs = [rxwin.run(e, fr)[1] for e, fr in items]
    right_edges_monotone(items, outs)


def test_observe_rewrites_nothing_but_computes_w(rxwin: RxWin) -> None:
    rxwin.configure("observe")
    ref = RxReference("observe")
    items = standard_trace()
    got, want = drive(rxwin, ref, items)
    assert (
        got == want == [TCP(f[34:]).window for e, f in items if e and "S" not in TCP(f[34:]).flags]
    )
    assert rxwin.stats()["rewrites"] == 0
    f = rxwin.flow(FlowKey.make(R, 5001, L, 40000))
    assert f is not None and f.w == ref.flows[(R, 5001, L, 40000)].w


def test_user_policy_uses_the_written_window(rxwin: RxWin) -> None:
    rxwin.configure("ictcp")
    ref = RxReference("ictcp")
    ft = FlowTrace(window=100)
    items = ft.handshake()
    got, want = drive(rxwin, ref, items)
    key = FlowKey.make(R, 5001, L, 40000)
    rxwin.set_w(key, 4 * 1448)
    ref.user_w[(R, 5001, L, 40000)] = 4 * 1448
    more = bulk(ft, 30)
    g2, w2 = drive(rxwin, ref, more)
    assert g2 == w2
    assert g2[-1] == -(-4 * 1448 // 128)


@pytest.mark.parametrize(("q", "segs"), [(40, 13), (4, 2)])
def test_rcc_flow_starts_at_its_share_of_q(rxwin: RxWin, q: int, segs: int) -> None:
    """RCC assigns W_i at a flow's arrival [RCC Algorithm 1]: before userspace
    writes a window, a flow gets floor(Q / F) segments, F the flows whose
    handshake was seen, at least init_segs = 2 (a Linux sender bounds its
    segments to half the largest window offered): 3 flows, Q = 40: 13; Q = 4:
    1, floored at 2. Written windows win as for any user policy. The BPF path
    and the reference agree."""
    rxwin.configure("rcc", share_pkts=q, init_segs=2)
    ref = RxReference("rcc", share_pkts=q, init_segs=2)
    flows = [FlowTrace(lport=42000 + i, l_isn=7000 * (i + 1), window=1000) for i in range(3)]
    shakes = [ft.handshake() for ft in flows]
    for hs in shakes:  # the three SYN / SYN-ACK exchanges: F = 3 ...
        drive(rxwin, ref, hs[:-1])
    for hs in shakes:  # ... before any flow's first ACK offers a window
        drive(rxwin, ref, hs[-1:])
    got, want = drive(rxwin, ref, bulk(flows[0], 20))
    assert got == want
    flow = rxwin.flow(FlowKey.make(R, 5001, L, 42000))
    assert flow is not None
    mss = flow.mss
    assert got[-1] == -(-segs * mss // 128)  # at window scale 7
    rxwin.set_w(FlowKey.make(R, 5001, L, 42000), 40 * mss)
    ref.user_w[(R, 5001, L, 42000)] = 40 * mss
    g2, w2 = drive(rxwin, ref, bulk(flows[0], 20))
    assert g2 == w2 and g2[-1] == -(-40 * mss // 128)


def test_fin_and_rst_end_the_flow(rxwin: RxWin) -> None:
    rxwin.configure("newdctcp-rx")
    ft = FlowTrace()
    for e, fr in ft.handshake() + bulk(ft, 4):
        rxwin.run(e, fr)
    assert len(rxwin.flows()) == 1
    rxwin.run(*ft.fin())
    assert rxwin.flows() == {}
    assert rxwin.stats()["flows_end"] == 1


def test_flow_without_handshake_is_measured_not_rewritten(rxwin: RxWin) -> None:
    rxwin.configure("newdctcp-rx")
    ref = RxReference("newdctcp-rx")
    ft = FlowTrace()
    ft.handshake()  # not sent: the agent started mid-connection
    got, want = drive(rxwin, ref, bulk(ft, 40))
    assert got == want == [2000] * 20
    (f,) = rxwin.flows().values()
    assert f.pkts == 40 and f.flags & 3 != 3
    assert rxwin.stats()["no_handshake"] == 20


def test_ip_and_non_tcp_frames_pass_untouched(rxwin: RxWin) -> None:
    rxwin.configure("newdctcp-rx")
    udp = bytes(Ether() / IP(src=R, dst=L, proto=17) / (b"\x00" * 30))
    arp = bytes(Ether(type=0x0806) / (b"\x00" * 28))
    frag = bytes(Ether() / IP(src=R, dst=L, flags="MF") / TCP() / b"x")
    for fr in (udp, arp, frag):
        for e in (False, True):
            rv, out, _ = rxwin.run(e, fr)
            assert (rv, out) == (-1, fr)
    assert rxwin.flows() == {}


def test_flows_slower_than_the_rtt_limit_are_left_alone(rxwin: RxWin) -> None:
    """Timestamps give the RTT: ACK (TSval) out, data echoing it back 3 ms later."""
    rxwin.configure("newdctcp-rx", rtt_limit_us=2000)
    ft = FlowTrace()
    for e, fr in ft.handshake() + bulk(ft, 20):
        rxwin.run(e, fr)
    key = FlowKey.make(R, 5001, L, 40000)
    before = rxwin.flow(key)
    assert before is not None and before.rewrites > 0
    assert rxwin.stats()["rtt_excluded"] == 0

    def slow_sample() -> int:
        """An RTT sample of 3 ms; returns the TSval it echoed."""
        ft.ts_now += 50  # a new TSval on the next ACK
        tsval = ft.ts_now
        rxwin.run(*ft.ack())
        time.sleep(0.003)
        e, fr = ft.data()
        p = Ether(fr)
        p[TCP].options = [("NOP", None), ("NOP", None), ("Timestamp", (999, tsval))]
        rxwin.run(e, bytes(p))
        return tsval

    slow_sample()
    f = rxwin.flow(key)
    assert f is not None and f.rtt_min_us >= 3000 and f.flags & (1 << 10)
    n = f.rewrites
    for e, fr in bulk(ft, 20):
        rxwin.run(e, fr)
    after = rxwin.flow(key)
    assert after is not None and after.rewrites == n  # untouched from now on
    # counted once when it was excluded, not again at its next slow sample
    assert rxwin.stats()["rtt_excluded"] == 1
    tsval = slow_sample()
    again = rxwin.flow(key)
    assert again is not None and again.ts_echoed == tsval  # a second RTT sample
    assert rxwin.stats()["rtt_excluded"] == 1


def test_idle_flow_restarts_its_window(rxwin: RxWin) -> None:
    rxwin.configure("newdctcp-rx", idle_s=0.02)
    ft = FlowTrace()
    for e, fr in ft.handshake() + bulk(ft, 40):
        rxwin.run(e, fr)
    key = FlowKey.make(R, 5001, L, 40000)
    grown = rxwin.flow(key)
    assert grown is not None and grown.w > 10 * grown.mss
    time.sleep(0.05)
    rxwin.run(*ft.data())
    f = rxwin.flow(key)
    assert f is not None and f.w == 10 * f.mss
    assert rxwin.stats()["idle_reset"] == 1


def test_userspace_sweep_deletes_idle_entries(rxwin: RxWin) -> None:
    from p4incast.agent.runner import _sweep
    from p4incast.policies.config import AgentConfig

    rxwin.configure("newdctcp-rx")
    ft = FlowTrace()
    for e, fr in ft.handshake() + bulk(ft, 4):
        rxwin.run(e, fr)
    assert _sweep(rxwin, AgentConfig(idle_timeout_s=10)) == 0
    time.sleep(0.05)
    assert _sweep(rxwin, AgentConfig(idle_timeout_s=0.02)) == 1
    assert rxwin.flows() == {}


def budget_trace() -> tuple[list[Item], list[FlowTrace]]:
    """Three flows share a 12-MSS budget: two arrive at their shares and are
    marked; a third arrives (the shares shrink), the first ends (they grow again)."""
    a, b, c = (FlowTrace(lport=40000 + i, l_isn=1000 * (i + 1)) for i in range(3))
    items = a.handshake() + b.handshake()
    items += bulk(a, 30) + bulk(b, 30)  # W starts at B, capped at the share (6 MSS each)
    items += bulk(a, 20, ce_every=3) + bulk(b, 20)
    items += c.handshake()  # three flows: 4 MSS each
    items += bulk(a, 20) + bulk(b, 20) + bulk(c, 20)
    items.append(a.fin())  # two flows again: 6 MSS each
    items += bulk(b, 40) + bulk(c, 40)
    return items, [a, b, c]


def test_budget_windows_match_reference_and_add_up_to_the_budget(rxwin: RxWin) -> None:
    budget = 12 * 1448
    rxwin.configure("newdctcp-budget", budget_bytes=budget, min_segs=1, init_segs=2)
    ref = RxReference("newdctcp-budget", init_segs=2, budget=budget, min_segs=1)
    items, flows = budget_trace()
    got, want = drive(rxwin, ref, items)
    assert got == want and len(got) > 100
    # The flows alive hold windows that add up to at most the budget.
    assert rxwin.budget_flows() == 2
    assert sum(ref.flows[(R, 5001, L, f.lport)].w for f in flows[1:]) <= budget
    b, c = (rxwin.flow(FlowKey.make(R, 5001, L, f.lport)) for f in flows[1:])
    assert b is not None and c is not None
    assert b.w <= budget // 2 and c.w <= budget // 2
    assert b.w == ref.flows[(R, 5001, L, 40001)].w and c.w == ref.flows[(R, 5001, L, 40002)].w


def test_budget_share_shrinks_when_a_flow_arrives(rxwin: RxWin) -> None:
    """The share is enforced on the ACK even before the flow's next window end."""
    budget = 20 * 1448
    rxwin.configure("newdctcp-budget", budget_bytes=budget, min_segs=1, init_segs=2)
    flows = [FlowTrace(lport=41000 + i, l_isn=5000 * (i + 1)) for i in range(4)]
    first = flows[0]
    for e, fr in first.handshake() + bulk(first, 40):
        rxwin.run(e, fr)
    alone = rxwin.flow(FlowKey.make(R, 5001, L, 41000))
    assert alone is not None and alone.w == budget  # the whole budget (F = 1), no more
    for ft in flows[1:]:
        for e, fr in ft.handshake():
            rxwin.run(e, fr)
    assert rxwin.budget_flows() == 4
    # 4 flows: 5 MSS each; the next ACKs of the first flow step down to it (the
    # right edge never moves left, so by at most what each ACK acknowledges).
    fields = [Ether(rxwin.run(e, fr)[1])[TCP].window for e, fr in bulk(first, 40) if e]
    assert fields[-1] == -(-5 * 1448 // 128)
    assert rxwin.recount_budget() == 4


def test_budget_handshake_offers_the_initial_window_then_zero(rxwin: RxWin) -> None:
    """The handshake's ACK goes out as a copy offering the initial 2 MSS (a Linux
    sender bounds its segments by half the largest window it was offered) and then
    with a zero window, so each request opens the window at the share of that
    moment: the first flight is the share, also for the flows that connected while
    the share was still above 2 MSS."""
    budget = 3 * 1448
    rxwin.configure("newdctcp-budget", budget_bytes=budget, min_segs=1, init_segs=2)
    ref = RxReference("newdctcp-budget", init_segs=2, budget=budget, min_segs=1)
    flows = [FlowTrace(lport=42000 + i, l_isn=7000 * (i + 1)) for i in range(4)]
    items: list[Item] = []
    for ft in flows:
        items += ft.handshake()
    items += [ft.request() for ft in flows]
    items += bulk(flows[3], 6, ack_every=1)
    got, want = drive(rxwin, ref, items)
    assert got == want
    scaled = -(-2 * 1448 // 128)
    # handshake ACKs: zero, each after a copy offering 2 MSS
    assert got[:4] == [0, 0, 0, 0]
    assert ref.copies == [((R, 5001, L, 42000 + i), scaled) for i in range(4)]
    stats = rxwin.stats()
    assert stats["hs_reopen"] == 4 and stats["forge_fail"] == 0
    # the requests open at the share now (4 flows: the 1-MSS floor), the first
    # flow's too, though its share was 3 MSS when it connected
    assert got[4:8] == [-(-1448 // 128)] * 4
    assert all(w == -(-1448 // 128) for w in got[8:])


def test_budget_lone_flow_opens_at_the_whole_budget(rxwin: RxWin) -> None:
    """docs/algorithms.md §3.6: W starts at B and is capped at the share, so a
    lone flow's request opens its window at the whole budget (F = 1), with no
    slow start from the handshake's 2 MSS. By hand (MSS 1460 - 12 for
    timestamps = 1448, our scale 7): B = 12 MSS = 17376 bytes, field
    ceil(17376 / 128) = 136; the handshake's copy offers ceil(2896 / 128) = 23,
    the handshake's ACK itself 0. Its next 6 segments (8688 bytes, no CE) end no
    window of data (W = 17376): each ACK offers W, 136, which E does not raise
    (the edge left by the one before is 17408 - 1448 bytes ahead: 125)."""
    budget = 12 * 1448
    rxwin.configure("newdctcp-budget", budget_bytes=budget, min_segs=1, init_segs=2)
    ref = RxReference("newdctcp-budget", init_segs=2, budget=budget, min_segs=1)
    ft = FlowTrace(lport=43000, l_isn=9000)
    items = ft.handshake() + [ft.request()] + bulk(ft, 6, ack_every=1)
    got, want = drive(rxwin, ref, items)
    assert got == want
    assert ref.copies == [((R, 5001, L, 43000), 23)]
    assert got == [0] + [136] * 7
