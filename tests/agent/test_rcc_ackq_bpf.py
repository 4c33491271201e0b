"""RCC's ACK queue in the BPF data path against the reference, packet by packet.

The hand-worked scenarios of tests/agent/rcc_scenarios.py (seed 002 Alg. 2;
the table the reference AckQueue and the simulator replay) go through
rx_ingress / rx_egress with BPF_PROG_TEST_RUN, policy rcc with
config.ackq_pkts = Q = 4 and flows whose MSS is the scenarios' 1000 bytes
(MSS option 1012 with timestamps, no window scale: window fields are bytes).
The policy's W is set far above every window, so the window an ACK carries
into the queue is the scenario's. For every step what leaves must be what
the reference sends:

- a data step: nothing (the data path only recounts the flow);
- an ACK step: the ACK's window field as it leaves rx_egress, then the
  window updates forged for the heads the loop released (bpf_clone_redirect
  sends them out of the loopback device the test run uses; captured there,
  as in test_rotation.py). The ACK is the reference's entry of its own
  flow and ack, wherever the reference has it (released by the loop, or its
  split part); where the reference holds it and sends nothing of it, the
  BPF ACK leaves with a zero window: a tc program cannot hold a packet;

and after it the flows held, the total in flight and each flow's share must
be the reference's. With release="rescue", userspace's tick (AckqRescuer)
runs after every ACK step too and must send nothing: the loop stops only
with the queue empty or the total at the cap, which is what the rescue
tests.

Not replayed (a tc program cannot hold a packet): fin_waits_behind_its_flows
_held_ack (our FIN passes and ends the flow at once; its held entry is
skipped when popped), cwnd_limited_senders_deadlock_without_the_split (the
data path always sends the ACK, split).
"""

from __future__ import annotations

import ctypes
import socket
import sys

import pytest
from agent_labs import drain
from agent_traces import FlowTrace, L, R
from rcc_scenarios import CAP, MSS, SCENARIOS, Q, Scenario
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from test_conformance import tcp_checksum_ok

from p4incast.agent.datapath import ACKQ_HELD, AckqGlobal, FlowKey, RxWin
from p4incast.agent.rotation import RX_CLONE_MARK
from p4incast.agent.runner import AckqRescuer
from p4incast.policies.config import NO_RTT_LIMIT_US
from p4incast.policies.rcc import Rcc, RccParams

pytestmark = pytest.mark.root

M = 1 << 32
SKIPPED = {
    "fin_waits_behind_its_flows_held_ack": "a tc program cannot hold our FIN",
    "cwnd_limited_senders_deadlock_without_the_split": "a tc program always sends the ACK",
}
REPLAYED = [s for s in SCENARIOS if s.name not in SKIPPED]
BASES = [0, M - 2500]  # sequence numbers from 1, and wrapping past 2^32


class Replay:
    """The scenario's flows on one loaded rxwin: handshakes first (MSS 1000,
    timestamps, no window scale), every flow's peer ISN at `base`."""

    def __init__(self, rx: RxWin, cap: socket.socket, base: int, names, release: str) -> None:
        self.rx, self.cap, self.base, self.release = rx, cap, base, release
        rx.configure("rcc", init_segs=100_000, rtt_limit_us=NO_RTT_LIMIT_US, ackq_pkts=Q)
        self.flows: dict[str, FlowTrace] = {}
        self.by_port: dict[int, str] = {}
        names = list(names)
        for i, n in enumerate(names):
            ft = FlowTrace(lport=44000 + i, l_isn=7000 * (i + 1), r_isn=base % M)
            self.flows[n] = ft
            self.by_port[ft.lport] = n
            opts = [("MSS", MSS + 12), ("Timestamp", (ft.ts_now, 0))]
            syn, syn_ack, last = ft.handshake(l_opts=opts, r_opts=opts)
            self.egress(syn[1])
            self.ingress(syn_ack[1])
            assert self.egress(last[1]) == ft.window  # no data yet: passes
            f = rx.flow(self.key(n))
            assert f is not None and f.mss == MSS and f.wscale == 0
        self.rescuer = None
        if release == "rescue":
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, RX_CLONE_MARK)
            s.bind(("lo", 0))
            self.rescuer = AckqRescuer(rx, "lo", sock=s)
        drain(cap)

    def key(self, n: str) -> FlowKey:
        return FlowKey.make(R, self.flows[n].rport, L, self.flows[n].lport)

    def egress(self, frame: bytes) -> int:
        rv, out, _ = self.rx.run(True, frame)
        assert rv == -1 and tcp_checksum_ok(out)
        return Ether(out)[TCP].window

    def ingress(self, frame: bytes) -> None:
        rv, out, _ = self.rx.run(False, frame)
        assert rv == -1 and out == frame

    def forged(self) -> list[tuple]:
        out = []
        for fr in drain(self.cap):
            e = Ether(fr)
            if IP not in e or (e[IP].src, e[IP].dst) != (L, R) or TCP not in e:
                continue  # lo carries other programs' traffic too
            if e[TCP].sport not in self.by_port:
                continue  # not this replay's (another test's flows use these addresses)
            assert tcp_checksum_ok(fr)
            t = e[TCP]
            n = self.by_port[t.sport]
            ft = self.flows[n]
            assert t.flags == "A" and t.seq == ft.l_next  # the sender takes it
            out.append((n, (t.ack - self.base) % M, t.window))
        return out

    def data(self, n: str, end: int, size: int, fin: bool = False) -> list[tuple]:
        ft = self.flows[n]
        end = (end + self.base) % M
        if fin:
            self.ingress(ft._r("FA", seq=end, ack=ft.l_next))
        else:
            self.ingress(ft._r("PA", seq=(end - size) % M, ack=ft.l_next, payload=size))
        return self.forged()

    def ack(self, n: str, ack_no: int, window: int) -> list[tuple]:
        ft = self.flows[n]
        w = self.egress(ft._l("A", seq=ft.l_next, ack=(ack_no + self.base) % M, window=window))
        got = [(n, ack_no, w), *self.forged()]
        if self.rescuer is not None:
            assert self.rescuer.step() == 0  # the loop left nothing the tick may send
        return got

    def held(self) -> set[str]:
        out = set()
        for n in self.flows:
            a = self.rx.ackq_flow(self.key(n))
            if a is not None and a.state == ACKQ_HELD:
                out.add(n)
        return out

    def flight(self, n: str) -> int:
        a = self.rx.ackq_flow(self.key(n))
        return 0 if a is None else a.counted


def bpf_expected(st, flow: str) -> list[tuple]:
    """What the data path sends for the reference's output of an ACK step: the
    ACK first, as the reference sends its flow's entry of this ack (released
    by the loop, or its split part), with a zero window where the reference
    sends nothing of it; then the other heads released, in order."""
    out = list(st.out)
    own = next((i for i, o in enumerate(out) if o[0] == flow and o[1] == st.a), None)
    if own is None:
        return [(flow, st.a, 0), *out]
    return [out.pop(own), *out]


def replay(rx: RxWin, cap: socket.socket, sc: Scenario, base: int, release: str) -> None:
    names = sorted({st.flow for st in sc.steps})
    rp = Replay(rx, cap, base, names, release)
    offered: dict[str, int] = {}  # highest right edge sent to each flow (scenario numbers)
    last: dict[str, int] = {}  # right edge of each flow's latest ACK
    for i, st in enumerate(sc.steps):
        where = f"{sc.name} step {i} ({st.op} {st.flow} {st.a} {st.b}) via {release}"
        if st.op == "data":
            got, want = rp.data(st.flow, st.a, st.b), list(st.out)
        elif st.op == "peer_fin":
            got, want = rp.data(st.flow, st.a, 0, fin=True), list(st.out)
        else:
            assert st.op == "ack", where
            got, want = rp.ack(st.flow, st.a, st.b), bpf_expected(st, st.flow)
            last[st.flow] = st.a + st.b
        assert got == want, where
        for n, a, w in got:
            offered[n] = max(offered.get(n, 0), a + w)
        assert rp.held() == set(st.held), where
        g: AckqGlobal = rx.ackq()
        assert g.held == len(st.held), where
        if st.op == "ack":
            assert not st.held or g.total >= CAP, where  # Alg. 2 l.3
        if st.total is not None:
            assert g.total == st.total, where
        for f, b in st.flight.items():
            assert rp.flight(f) == b, f"{where}: flow {f}"
    # no permission lost: each flow was offered its latest ACK's right edge,
    # or holds it
    held = rp.held()
    for n, re in last.items():
        if n in held:
            a = rx.ackq_flow(rp.key(n))
            assert a is not None and a.held & (M - 1) == (re + base) % M, (sc.name, n)
        else:
            assert offered[n] >= re, (sc.name, n)
    assert rx.stats()["forge_fail"] == 0
    if rp.rescuer is not None:
        rp.rescuer.close()


@pytest.mark.parametrize("release", ["egress", "rescue"])
@pytest.mark.parametrize("base", BASES, ids=["from1", "wrap"])
@pytest.mark.parametrize("sc", REPLAYED, ids=[s.name for s in REPLAYED])
def test_ack_queue_bpf_matches_reference(
    rxwin: RxWin, lo_capture: socket.socket, sc: Scenario, base: int, release: str
) -> None:
    replay(rxwin, lo_capture, sc, base, release)


def test_counters_of_a_scenario(rxwin: RxWin, lo_capture: socket.socket) -> None:
    sc = next(s for s in SCENARIOS if s.name == "a_newer_ack_is_erased_and_goes_to_the_tail")
    replay(rxwin, lo_capture, sc, 0, "egress")
    st = rxwin.stats()
    # b, c, d, c's newer, a, b's newer, a's newer waited (7; c's newer and a's
    # newer took their flow's held one out: 2 replaced); b, d, c released by
    # ACKs; b, c, d and c's newer had nothing below a released right edge: 4
    # left with a zero window
    got = (st["ackq_held"], st["ackq_replaced"], st["ackq_released"], st["ackq_superseded"])
    assert got == (7, 2, 3, 0)
    assert st["ackq_rescued"] == 0 and st["ackq_zero"] == 4


def test_a_busy_lock_holds_the_ack_and_the_rescue_waits(
    rxwin: RxWin, lo_capture: socket.socket
) -> None:
    """A program that finds the queue's lock taken (another CPU deciding)
    holds an ACK that would have passed: safe for the cap; the rescue then
    finds the lock taken too and tries again next tick."""
    rp = Replay(rxwin, lo_capture, 0, ["a"], "rescue")
    rp.data("a", 1001, MSS)
    g = rxwin.ackq()
    g.lock = 1
    rxwin.lib.update(rxwin.ackq_g_fd, ctypes.c_uint32(0), g)
    assert rp.ack("a", 1001, 2000) == [("a", 1001, 0)]
    assert rp.held() == {"a"}
    assert rxwin.ackq_release() is False
    g = rxwin.ackq()
    g.lock = 0
    rxwin.lib.update(rxwin.ackq_g_fd, ctypes.c_uint32(0), g)
    assert rp.rescuer is not None and rp.rescuer.step() == 1
    assert rp.forged() == [("a", 1001, 2000)]
    assert rxwin.ackq().total == 2000 and rxwin.stats()["ackq_rescued"] == 1
    rp.rescuer.close()


def test_receiver_timer_repeats_a_waiting_flows_latest_ack(
    rxwin: RxWin, lo_capture: socket.socket
) -> None:
    """RCC Algorithm 3 on a host. a and b each count 2000 in flight (RE 3001,
    total 4000); a's window update (RE 4001) finds 4000, not below the cap: held
    (Alg. 2 l.3). b waits for data (counts something, nothing held); a does not.
    With RTO^r = 10 ms and no packet for 10 ms, b's timer fires in Rcc (its
    window one segment, Alg. 3 l.4) and the rescuer repeats b's latest ACK,
    (1001, 2000): its right edge was sent already, so it opens nothing new."""
    rp = Replay(rxwin, lo_capture, 0, ["a", "b"], "rescue")
    rp.data("a", 1001, MSS)
    assert rp.ack("a", 1001, 2000) == [("a", 1001, 2000)]
    rp.data("b", 1001, MSS)
    assert rp.ack("b", 1001, 2000) == [("b", 1001, 2000)]
    assert rp.ack("a", 1001, 3000) == [("a", 1001, 2000)]  # held; its part to RE 3001
    resc = rp.rescuer
    assert resc is not None
    keys = {n: rp.key(n) for n in ("a", "b")}
    assert not resc.waits(keys["a"]) and resc.waits(keys["b"])
    rcc = Rcc(RccParams(mss=MSS, queue_maxsize=Q, rto_r_s=10e-3))
    for t in (0.0, 10.01e-3):
        counters = {}
        for n, k in keys.items():
            f = rxwin.flow(k)
            assert f is not None
            counters[n] = (f.pkts, f.ce, 1e-4)
        out = rcc.step(t, counters, waits={n: resc.waits(k) for n, k in keys.items()})
    assert rcc.fired == ["b"] and out["b"] == MSS
    assert resc.timer_ack(keys["b"]) and rp.forged() == [("b", 1001, 2000)]
    resc.close()


def test_ack_queue_off_for_ictcp_and_when_not_configured(
    rxwin: RxWin, lo_capture: socket.socket
) -> None:
    """ackq_pkts 0 (ictcp, or rcc with ack_queue=0): ACKs pass with the
    policy's window, nothing is held."""
    rp = Replay(rxwin, lo_capture, 0, ["a", "b"], "egress")
    cfg = rxwin.cfg
    cfg.ackq_pkts = 0
    rxwin.lib.update(rxwin.config_fd, ctypes.c_uint32(0), cfg)
    rp.data("a", 1001, MSS)
    assert rp.ack("a", 1001, 4000) == [("a", 1001, 4000)]
    rp.data("b", 1001, MSS)
    assert rp.ack("b", 1001, 4000) == [("b", 1001, 4000)]
    assert rp.held() == set() and rxwin.stats()["ackq_held"] == 0


# -- real packets ------------------------------------------------------------------------

SERVER = r"""
import socket, sys, threading
host, port, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((host, port))
ls.listen(64)
print("ready", flush=True)
def serve(c):
    c.recv(1)
    c.sendall(b"x" * size)
    c.close()
ts = []
for _ in range(n):
    c, _ = ls.accept()
    t = threading.Thread(target=serve, args=(c,))
    t.start()
    ts.append(t)
for t in ts:
    t.join()
"""

CLIENT = r"""
import json, socket, sys, threading
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
socks = [socket.create_connection((host, port)) for _ in range(n)]
got = [0] * n
def read(i):
    s = socks[i]
    s.sendall(b"r")
    while True:
        b = s.recv(65536)
        if not b:
            break
        got[i] += len(b)
ts = [threading.Thread(target=read, args=(i,)) for i in range(n)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(json.dumps(got))
"""


def test_veth_incast_through_the_ack_queue() -> None:
    """8 senders answer one receiver's requests at once (one namespace each
    side, one server port), policy rcc with Q = 4 packets and the ACK queue,
    no delayed ACK (RCC's receiver ACKs every segment). Every flow delivers
    all its bytes; ACKs were held and released; the data path never allowed
    more than Q·MSS in flight in all (its own maximum of the total)."""
    import json
    import re

    from vethlab import VethLab, lab_skip_reason

    from p4incast.agent.runner import status

    why = lab_skip_reason()
    if why:
        pytest.skip(why)
    n, size, q, port = 8, 1_000_000, 4, 5301
    lab = VethLab()
    try:
        lab.up()
        lab.ns(
            lab.ns_r, "ip", "route", "replace", f"{lab.ip_s}/32", "dev", lab.dev_r, "quickack", "1"
        )
        agent = lab.start_agent("rcc", "--queue-maxsize", str(q), "--rtt-limit-us", "1000000")
        srv = lab.spawn(
            lab.ns_s, sys.executable, "-c", SERVER, lab.ip_s, str(port), str(n), str(size)
        )
        assert srv.stdout is not None and srv.stdout.readline().strip() == "ready"
        cli = lab.spawn(lab.ns_r, sys.executable, "-c", CLIENT, lab.ip_s, str(port), str(n))
        out, err = cli.communicate(timeout=60)
        assert cli.returncode == 0, err
        got = json.loads(out)
        st = [a for a in status() if a["pid"] == agent.pid][0]["totals"]
        assert lab.stop(agent) == 0
        log = agent.stdout.read() if agent.stdout else ""
        srv.wait(timeout=10)
    finally:
        lab.close()
    assert got == [size] * n  # every flow completed its bytes
    assert st["ackq_held"] > 0 and st["ackq_released"] + st["ackq_rescued"] > 0, st
    assert st["forge_fail"] == 0
    m = re.search(r"most in flight (\d+) bytes", log)
    assert m, log
    # the queue caps what it releases at Q segments; a flow's first window is
    # at least 2 segments (docs/algorithms.md "RCC"), so with more than Q / 2
    # flows the handshakes alone may offer up to 2 per flow
    assert 0 < int(m.group(1)) <= max(q, 2 * n) * 1448, log
