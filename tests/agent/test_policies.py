"""Unit tests of the pure policies on hand-built traces (run everywhere)."""

from __future__ import annotations

import pytest
from agent_traces import FlowTrace, L, R, bulk, egress_windows, standard_trace

from p4incast.agent.policies.budget import ROT_FRAME_LEN, ROT_HDR_LEN, RotEntry, forged_update
from p4incast.agent.policies.frames import parse_frame, parse_options
from p4incast.agent.policies.newdctcp_rx import RxFlow, next_window
from p4incast.agent.policies.reference import RxReference
from p4incast.policies.ictcp import FlowSample, Ictcp, IctcpParams
from p4incast.policies.rcc import Rcc, RccParams, assign_windows, remote_cut

MSS = 1448
KEY = (R, 5001, L, 40000)

# -- NewDCTCP-rx ---------------------------------------------------------------------


def test_window_rule_hand_values() -> None:
    # Slow start doubles until the first mark.
    assert next_window(10 * MSS, 10, 0, MSS, False, 1 << 30) == (20 * MSS, False)
    # Marked: max(W/2, (n - m)·MSS): 20 packets, 2 marked -> 18 MSS beats 10 MSS.
    assert next_window(20 * MSS, 20, 2, MSS, False, 1 << 30) == (18 * MSS, True)
    # Marked heavily: W/2 wins.
    assert next_window(20 * MSS, 20, 15, MSS, True, 1 << 30) == (10 * MSS, True)
    # After the first mark: + 1 MSS per unmarked window.
    assert next_window(10 * MSS, 10, 0, MSS, True, 1 << 30) == (11 * MSS, True)
    # Floor min_segs MSS (2 by default, 1 for the literal rule), cap max_w.
    assert next_window(2 * MSS, 2, 2, MSS, True, 1 << 30) == (2 * MSS, True)
    assert next_window(2 * MSS, 2, 2, MSS, True, 1 << 30, min_segs=1) == (MSS, True)
    assert next_window(3 << 20, 10, 0, MSS, False, 4 << 20) == (4 << 20, False)


def test_parse_options_like_the_kernel() -> None:
    o = parse_options(bytes([2, 4, 5, 0xB4, 1, 3, 3, 7, 8, 10, 0, 0, 0, 9, 0, 0, 0, 1]))
    assert (o.mss, o.ws, o.ts, o.bad) == (1460, 7, (9, 1), False)
    o = parse_options(bytes([2, 4, 5, 0xB4, 3, 9]))  # length past the end: keep MSS
    assert (o.mss, o.ws, o.bad) == (1460, None, True)
    o = parse_options(bytes([0, 2, 4, 5, 0xB4]))  # EOL first
    assert (o.mss, o.bad) == (None, False)
    o = parse_options(bytes([2, 3, 5, 3, 3, 7]))  # MSS of length 3 skipped, flagged
    assert (o.mss, o.ws, o.bad) == (None, 7, True)


def test_right_edge_never_moves_left() -> None:
    f = RxFlow(init_segs=10, max_w=1 << 30)
    f.peer_syn = f.local_syn = True
    f.peer_ws, f.local_ws, f.local_mss, f.peer_mss = 7, 7, 1460, 1460
    f.finish_handshake()
    assert (f.wscale, f.mss, f.w) == (7, 1460, 14600)
    # The kernel advertised 256 KB before the clamp: W = 14600 takes effect only
    # as acknowledged bytes consume the old right edge.
    ack, edges, fields = 1000, [], []
    fields.append(f.ack_field(ack, 2000, None))
    edges.append(ack + (fields[-1] << 7))
    while ack < 1000 + (2000 << 7) + 10 * 1460:
        ack += 2 * 1460
        fields.append(f.ack_field(ack, 2000, f.w))
        edges.append(ack + (fields[-1] << 7))
    assert all(b >= a for a, b in zip(edges, edges[1:], strict=False))
    assert fields[1] == 2000 - (2 * 1460) // 128  # shrank by the newly acked bytes only
    assert fields[-1] == -(-14600 // 128)  # then W / 2^ws, rounded up


def test_reference_on_standard_trace() -> None:
    ref = RxReference("newdctcp-rx")
    out = []
    for egress, fr in standard_trace():
        if egress:
            out.append(ref.egress(fr))
        else:
            ref.ingress(fr)
    f = ref.flows[KEY]
    assert f.mss == 1448 and f.wscale == 7
    # Windows: slow start doubles, marks cut, recovery adds one MSS.
    ws = f.windows
    assert ws[:2] == [2 * 14480, 4 * 14480]
    assert any(b < a for a, b in zip(ws, ws[1:], strict=False))
    assert any(b - a == MSS for a, b in zip(ws, ws[1:], strict=False))
    # The last segment of the trace has the kernel window (20) below W: kept.
    assert out[-1] == 20


def test_observe_and_off_never_change_windows() -> None:
    items = standard_trace()
    for pol in ("observe", "off"):
        ref = RxReference(pol)
        out = []
        for egress, fr in items:
            if egress:
                w = ref.egress(fr)
                if w is not None:
                    out.append(w)
            else:
                ref.ingress(fr)
        if pol == "observe":
            assert out == egress_windows(items)[1:]  # all but the SYN
        else:
            assert out == []


def test_parse_frame_rejects_non_tcp() -> None:
    ft = FlowTrace()
    e, fr = ft.data()
    p = parse_frame(fr)
    assert p is not None and p.payload == 1448 and p.ecn == 2
    assert parse_frame(fr[:20]) is None
    assert parse_frame(fr[:12] + b"\x86\xdd" + fr[14:]) is None


def test_no_handshake_means_no_clamp() -> None:
    ft = FlowTrace()
    ft.handshake()
    ref = RxReference()
    got = []
    for egress, fr in bulk(ft, 20, ce_every=2):
        if egress:
            got.append(ref.egress(fr))
        else:
            ref.ingress(fr)
    assert got == [2000] * 10


# -- newdctcp-budget ---------------------------------------------------------------------


def test_forged_update_fills_the_frame_the_data_path_forges() -> None:
    """A rotation grant is ROT_FRAME_LEN bytes (rxwin.h): the ROT_HDR_LEN bytes of
    headers it reuses, then a TCP header with NOP NOP TS whose data offset
    covers the rest, as rxwin_forge.h writes it."""
    hdr = bytes(range(ROT_HDR_LEN))
    r = RotEntry(seq_next=1, ack=2, tsval=3, tsecr=4, hdr=hdr)
    b = forged_update(r, (R, 5001, L, 40000), 7)
    assert len(b) == ROT_FRAME_LEN and b[:ROT_HDR_LEN] == hdr
    tcp = b[ROT_HDR_LEN:]
    assert (tcp[12] >> 4) * 4 == len(tcp) and tcp[14:16] == b"\x00\x07"
    assert tcp[20:24] == b"\x01\x01\x08\x0a"


# -- ICTCP ------------------------------------------------------------------------------


def _ictcp_run(capacity_Bps: float, steps: int = 400) -> list[int]:
    """One flow that fills its window every RTT (100 us); rwnd after each step."""
    p = IctcpParams(capacity_Bps=capacity_Bps, mss=MSS)
    ic = Ictcp(p)
    rtt = 100e-6
    t, got, byts = 0.0, [], 0
    rwnd = p.init_segs * MSS
    for _ in range(steps):
        t += rtt / 2
        byts += int(rwnd / 2)
        rwnd = ic.step(t, iface_bytes=byts, samples={"a": FlowSample(byts, rtt)})["a"]
        got.append(rwnd)
    return got


def test_ictcp_grows_while_the_quota_allows() -> None:
    got = _ictcp_run(1.25e9)  # 10 Gbps: BDP 125 KB
    assert got[-1] > 16 * 2 * MSS
    assert all(b >= a for a, b in zip(got, got[1:], strict=False))


def test_ictcp_stops_growing_at_the_interface_quota() -> None:
    got = _ictcp_run(125e6)  # 1 Gbps, RTT 100 us: 0.9·C·RTT = 11250 B = 7.8 MSS
    assert got[-1] > 4 * MSS  # past the point where doubling no longer fits: + 1 MSS steps
    assert max(got) <= 0.9 * 125e6 * 100e-6


def test_ictcp_shrinks_a_flow_that_does_not_use_its_window() -> None:
    p = IctcpParams(capacity_Bps=125e6, mss=MSS)
    ic = Ictcp(p)
    rtt = 100e-6
    ic.flows.clear()
    t, byts = 0.0, 0
    out = ic.step(t, 0, {"a": FlowSample(0, rtt)})
    ic.flows["a"].rwnd = 20 * MSS
    for _ in range(40):
        t += rtt
        byts += MSS  # 1 MSS per RTT against a 20 MSS window: d ~ 0.95
        out = ic.step(t, byts, {"a": FlowSample(byts, rtt)})
    assert out["a"] < 20 * MSS
    assert out["a"] >= p.min_segs * MSS


def test_ictcp_leaves_slow_flows_alone() -> None:
    ic = Ictcp(IctcpParams(capacity_Bps=125e6))
    assert ic.step(0.0, 0, {"wan": FlowSample(0, 30e-3)}) == {}


def test_ictcp_fairness_cut_when_link_is_busy() -> None:
    p = IctcpParams(capacity_Bps=125e6, mss=MSS)
    ic = Ictcp(p)
    samples = {"a": FlowSample(0, 1e-4), "b": FlowSample(0, 1e-4)}
    ic.step(0.0, 0, samples)
    ic.flows["a"].rwnd, ic.flows["b"].rwnd = 40 * MSS, 4 * MSS
    for f in ic.flows.values():
        f.sample_t = 10.0  # no per-flow RTT samples now: only the fairness cut acts
    # The interface received at line rate: BW_A = 0 < 0.2 C. Subslots of T = 1e-4:
    # BW_A is computed at 1, 3 and 5e-4 s, one cut of a (above the mean) per slot.
    t, out = 0.0, {}
    for i in range(1, 6):
        t = i * 1e-4
        out = ic.step(t, int(125e6 * t), samples)
    assert out["a"] == 37 * MSS and out["b"] == 4 * MSS


# -- RCC ----------------------------------------------------------------------------------


def test_rcc_assignment_equal_shares_and_spare() -> None:
    # Without priorities no spare is handed out [RCC Algorithm 1]: ⌊40/3⌋ = 13 each.
    w = assign_windows({"a": 1, "b": 1, "c": 1}, queue_maxsize=40)
    assert w == {"a": 13, "b": 13, "c": 13}
    # With priorities the spare goes one packet at a time, from the end of the
    # order by priority (ties in key order): 13, 13, 13 + 1 to "c".
    pr = {"a": 1, "b": 1, "c": 1}
    assert assign_windows(pr, 40, priorities=pr) == {"a": 13, "b": 13, "c": 14}
    # More flows than Q: everyone keeps 1 packet.
    w = assign_windows({i: 1 for i in range(50)}, queue_maxsize=40)
    assert set(w.values()) == {1}
    # Priorities and a known size cap: hi 30 → 10, lo 10 + the spare 20 = 30.
    pr = {"hi": 3, "lo": 1}
    w = assign_windows(pr, 40, sizes={"hi": 10}, priorities=pr)
    assert w == {"hi": 10, "lo": 30}


def test_rcc_remote_cut() -> None:
    assert remote_cut(20, 0, 20) == 20
    assert remote_cut(20, 10, 20) == 15  # alpha 0.5
    assert remote_cut(20, 20, 20) == 10
    assert remote_cut(1, 5, 5) == 1


def test_rcc_step_cuts_on_ce_and_recovers() -> None:
    rcc = Rcc(RccParams(mss=MSS, queue_maxsize=40))
    c = {"a": (0, 0, 1e-4), "b": (0, 0, 1e-4)}
    out = rcc.step(0.0, c)
    assert out == {"a": 20 * MSS, "b": 20 * MSS}
    out = rcc.step(2e-4, {"a": (20, 20, 1e-4), "b": (20, 0, 1e-4)})
    assert out["a"] == 10 * MSS and out["b"] == 20 * MSS
    for i in range(2, 20):
        out = rcc.step(i * 2e-4, {"a": (20 * i, 20, 1e-4), "b": (20 * i, 0, 1e-4)})
    assert out["a"] == 20 * MSS


@pytest.mark.parametrize("q", [1, 8, 40, 64])
def test_rcc_total_never_exceeds_queue(q: int) -> None:
    # with priorities the spare fills Q exactly (each flow keeps at least 1)
    pr = {i: 1 + i % 3 for i in range(7)}
    assert sum(assign_windows(pr, q, priorities=pr).values()) == max(q, 7)
    # without, N·max(1, ⌊Q/N⌋): at most Q while N <= Q
    assert sum(assign_windows(pr, q).values()) == 7 * max(1, q // 7)


def test_ictcp_keeps_control_when_queueing_raises_the_rtt() -> None:
    """The 2 ms limit is on a flow's smallest RTT: incast queueing (30 ms here) must
    not release a datacenter flow, while a flow never below 2 ms stays uncontrolled."""
    ic = Ictcp(IctcpParams(capacity_Bps=125e6))
    assert "dc" in ic.step(0.0, 0, {"dc": FlowSample(0, 100e-6)})
    out = ic.step(1e-3, 0, {"dc": FlowSample(0, 30e-3), "wan": FlowSample(0, 30e-3)})
    assert set(out) == {"dc"}


def test_ictcp_takes_the_data_paths_minimum_rtt_for_the_2ms_limit() -> None:
    """The agent's BPF leaves a flow alone on its own minimum RTT (rxwin_flow.h
    rtt_sample); the policy decides on the same number, not on the smoothed RTTs
    it happens to see at its ticks, so the two never disagree about a flow."""
    ic = Ictcp(IctcpParams(capacity_Bps=125e6))
    out = ic.step(0.0, 0, {"dc": FlowSample(0, 3e-3, 150e-6), "wan": FlowSample(0, 3e-3, 3e-3)})
    assert set(out) == {"dc"}


def test_rcc_controls_every_flow_whatever_its_rtt() -> None:
    """Seed 002 has no RTT limit: a flow at 30 ms is controlled like one at 100 µs."""
    rcc = Rcc()
    assert set(rcc.step(0.0, {"dc": (1, 0, 100e-6)})) == {"dc"}
    assert set(rcc.step(1e-3, {"dc": (5, 0, 30e-3), "wan": (5, 0, 30e-3)})) == {"dc", "wan"}
