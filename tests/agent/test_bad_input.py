"""Bad input the data path must survive, each checked against the reference.

No window scale, window scale 14 (and an illegal 15), MSS missing, malformed
option lists, retransmissions and reordering, and 10 000 churning flows
(the LRU map stays at its bound).
"""

from __future__ import annotations

import struct

import pytest
from agent_traces import FlowTrace, Item, L, R, bulk
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from test_conformance import drive

from p4incast.agent.datapath import FlowKey, RxWin
from p4incast.agent.policies.reference import RxReference

pytestmark = pytest.mark.root
KEY = (R, 5001, L, 40000)


def bkey() -> FlowKey:
    return FlowKey.make(R, 5001, L, 40000)


def run_both(rx: RxWin, items: list[Item], policy: str = "newdctcp-rx") -> RxReference:
    rx.configure(policy)
    ref = RxReference(policy)
    got, want = drive(rx, ref, items)
    assert got == want
    return ref


def test_syn_without_window_scale(rxwin: RxWin) -> None:
    ft = FlowTrace(window=65535)
    items = ft.handshake(l_opts=[("MSS", 1460)], r_opts=[("MSS", 1460), ("WScale", 9)])
    items += bulk(ft, 80, ce_every=7)
    ref = run_both(rxwin, items)
    f = rxwin.flow(bkey())
    assert f is not None and f.wscale == 0 and ref.flows[KEY].wscale == 0
    assert f.mss == 1460  # no timestamps
    assert rxwin.stats()["rewrites"] > 0


def test_window_scale_only_on_one_side_means_no_scaling(rxwin: RxWin) -> None:
    ft = FlowTrace(window=65535)
    items = ft.handshake(r_opts=[("MSS", 1460)])  # peer did not offer scaling
    items += bulk(ft, 40)
    run_both(rxwin, items)
    f = rxwin.flow(bkey())
    assert f is not None and f.wscale == 0 and f.local_ws == 7


@pytest.mark.parametrize("ws", [14, 15, 255])
def test_window_scale_14_and_beyond(rxwin: RxWin, ws: int) -> None:
    ft = FlowTrace(window=4)  # 4 << 14 = 64 KB
    items = ft.handshake(
        l_opts=[("MSS", 1460), ("WScale", ws)], r_opts=[("MSS", 1460), ("WScale", 14)]
    )
    items += bulk(ft, 120, ce_every=3)
    ref = run_both(rxwin, items)
    f = rxwin.flow(bkey())
    assert f is not None and f.wscale == 14 == ref.flows[KEY].wscale
    # W < 16 KB cannot be expressed at scale 14: the field never drops below 1.
    out = [rxwin.run(True, ft.ack()[1])[1]]
    assert Ether(out[0])[TCP].window >= 1


def test_mss_option_missing(rxwin: RxWin) -> None:
    ft = FlowTrace(mss=536)
    items = ft.handshake(l_opts=[("WScale", 7)], r_opts=[("WScale", 7)])
    items += bulk(ft, 60, ce_every=4)
    ref = run_both(rxwin, items)
    f = rxwin.flow(bkey())
    assert f is not None and f.mss == 536 == ref.flows[KEY].mss


def with_raw_options(frame: bytes, raw: bytes) -> bytes:
    """Replace the TCP options of `frame` by `raw` (padded to 4 bytes); lengths fixed."""
    p = Ether(frame)
    payload = bytes(p[TCP].payload)
    raw = raw + b"\x00" * (-len(raw) % 4)
    t = p[TCP]
    hdr = TCP(
        sport=t.sport,
        dport=t.dport,
        seq=t.seq,
        ack=t.ack,
        flags=t.flags,
        window=t.window,
        dataofs=5 + len(raw) // 4,
    )
    ip = p[IP]
    return bytes(
        Ether(src=p.src, dst=p.dst) / IP(src=ip.src, dst=ip.dst, tos=ip.tos) / hdr / (raw + payload)
    )


MALFORMED = [
    bytes([2, 0, 5, 0xB4]),  # MSS with length 0
    bytes([2, 4, 5, 0xB4, 3, 9, 7]),  # window scale longer than the header
    bytes([3, 2, 2, 4, 5, 0xB4]),  # window scale with length 2
    bytes([2, 4, 5, 0xB4, 99, 1]),  # unknown option, length 1
    bytes([1] * 39 + [3]),  # 39 NOPs then a kind without its length byte
    bytes([8, 10, 0, 0, 0, 1]),  # timestamps cut short
    bytes([0, 3, 3, 14]),  # EOL, then garbage that must be ignored
]


@pytest.mark.parametrize("raw", MALFORMED, ids=lambda r: r.hex()[:16])
def test_malformed_options(rxwin: RxWin, raw: bytes) -> None:
    ft = FlowTrace()
    hs = ft.handshake()
    items = [(hs[0][0], with_raw_options(hs[0][1], raw)), hs[1], hs[2]]
    data = bulk(ft, 30, ce_every=4)
    items += [
        (e, with_raw_options(fr, raw) if i % 3 == 0 else fr) for i, (e, fr) in enumerate(data)
    ]
    run_both(rxwin, items)
    if raw[0] != 0:
        assert rxwin.stats()["bad_opts"] > 0


def test_retransmission_and_reordering(rxwin: RxWin) -> None:
    ft = FlowTrace()
    items = ft.handshake() + bulk(ft, 20)
    s0 = ft.r_next
    seg = 1448
    # Out of order: 2, 1, 4, 3; then 1 and 2 again (retransmissions), then 5..
    items.append(ft.data(seq=s0 + seg))
    items.append(ft.data(seq=s0))
    items.append(ft.data(seq=s0 + 3 * seg))
    items.append(ft.data(seq=s0 + 2 * seg, ce=True))
    items.append(ft.data(seq=s0))
    items.append(ft.data(seq=s0 + seg))
    ft.r_next = s0 + 4 * seg
    ft.rcv = ft.r_next
    items.append(ft.ack())
    items += bulk(ft, 40, ce_every=6)
    ref = run_both(rxwin, items)
    f = rxwin.flow(bkey())
    assert f is not None
    assert f.retrans == 4  # the late 1 and 3, and the two retransmissions
    assert f.hi_seq == ref.flows[KEY].hi_seq == ft.r_next


def test_sequence_wraparound(rxwin: RxWin) -> None:
    ft = FlowTrace(r_isn=0xFFFFFFFF - 20 * 1448)
    items = ft.handshake() + bulk(ft, 60, ce_every=9)
    run_both(rxwin, items)
    f = rxwin.flow(bkey())
    assert f is not None and f.retrans == 0 and f.bytes == 60 * 1448


def test_ten_thousand_churning_flows_stay_bounded(rxwin: RxWin) -> None:
    """10 000 short flows, half never closed: entries <= max_flows (1024 here)."""
    rxwin.configure("newdctcp-rx")
    ft = FlowTrace()
    tmpl = ft.handshake() + [ft.data(), ft.ack()]
    fin = ft.fin()
    n = 10_000
    for i in range(n):
        port = struct.pack("!H", 10000 + i % 50000)
        for egress, fr in tmpl:
            off = 34 if egress else 36  # our sport, or the peer's dport
            rxwin.run(egress, fr[:off] + port + fr[off + 2 :])
        if i % 2:
            rxwin.run(False, fin[1][:36] + port + fin[1][38:])
    keys = rxwin.flow_keys()
    st = rxwin.stats()
    assert st["flows_new"] == n
    assert st["flows_end"] == n // 2
    assert 0 < len(keys) <= rxwin.max_flows
