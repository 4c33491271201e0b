"""The incast application: one aggregator (client) and N servers over TCP, in
barrier-synchronised rounds (docs/algorithms.md "The problem").

    python -m p4incast.apps.incast server [--port 5001] [--cc reno]
    python -m p4incast.apps.incast client --servers IP,IP,... --sru BYTES
        [--rounds R] [--mode per-server|total] [--batch N --stagger-us T]
        [--connections persistent|per-round] --out FILE

--connections persistent (the default): one connection per server for the
whole run, so a round starts with the windows the last one ended with.
per-round: at each round's start (at its batch offset) the client connects to
every server, sends the request, reads the response and closes, so every round
pays a handshake and starts from the initial window; a flow's FCT counts from
the connect.

Each round the client asks every server at once (or, with application-level
batch scheduling — seed 003, docs/algorithms.md §4 — server i at T̃·((i-1) mod k))
and the round ends when the last response byte arrives. Wire format:
request  = round:u32, size:u64                        (client -> server)
response = timeouts:u64, retrans:u64, then size bytes (server -> client)
where timeouts/retrans are the server namespace's cumulative TcpExt
TCPTimeouts and Tcp RetransSegs when the response starts, so the client can
attribute RTOs to rounds: round r had an RTO iff some server's TCPTimeouts
grew between its round-r and round-(r+1) headers. A last request of size 0
closes the final round's counters.

TCPTimeouts misses waits that cost a round as much as a timeout: a flow with
one segment in flight that loses it is rescued by Linux's tail-loss probe
(when the host runs it), armed at the route's min RTO + 2 SRTT
(tcp_schedule_loss_probe), and a sender facing a zero window waits for its
persist timer; neither counts as a timeout. So the client also times every flow's
longest wait for data within a round (stall_s: from the request to the first
byte, and between arrivals), and with --stall-s S a round counts as an RTO
round when TCPTimeouts grew or some flow waited at least S (the engines pass
half the min RTO in effect: no queue here delays a packet that long).

One JSON record per round goes to --out (JSON lines).
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import selectors
import socket
import socketserver
import struct
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from p4incast.model.scheme import APP_CONNECTIONS

REQ = struct.Struct("!IQ")
RESP = struct.Struct("!QQ")
CHUNK = memoryview(bytes(1 << 20))


def netstat_counters() -> tuple[int, int]:
    """(TcpExt TCPTimeouts, Tcp RetransSegs) of this network namespace."""
    timeouts = retrans = 0
    for path, key, name in (
        ("/proc/net/netstat", "TcpExt:", "TCPTimeouts"),
        ("/proc/net/snmp", "Tcp:", "RetransSegs"),
    ):
        lines = [ln.split() for ln in Path(path).read_text().splitlines() if ln.startswith(key)]
        for head, vals in zip(lines[::2], lines[1::2], strict=False):
            if name in head:
                value = int(vals[head.index(name)])
                if name == "TCPTimeouts":
                    timeouts = value
                else:
                    retrans = value
    return timeouts, retrans


def set_cc(sock: socket.socket, cc: str | None) -> None:
    if cc:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        except OSError as err:
            raise SystemExit(f"incast: congestion control {cc!r} unavailable here: {err}") from None


# -- server ------------------------------------------------------------------------
class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        set_cc(sock, self.server.cc)
        while True:
            req = _recv_exact(sock, REQ.size)
            if req is None:
                return
            _round, size = REQ.unpack(req)
            # Corked: the 16-byte header goes out inside the first full segment,
            # not as a packet of its own (which took one more queue slot per flow
            # and round, and overflowed a budget of one segment per flow).
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
            sock.sendall(RESP.pack(*netstat_counters()))
            while size > 0:
                n = min(size, len(CHUNK))
                sock.sendall(CHUNK[:n])
                size -= n
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 0)


class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = 1024  # per-round connections: every client connect at once
    cc: str | None = None


def serve(port: int, cc: str | None) -> None:
    with _Server(("0.0.0.0", port), _Handler) as srv:
        srv.cc = cc
        set_cc(srv.socket, cc)
        # Delayed-ACK (pingpong) mode from the start, where Linux puts a
        # request/response server after its first answer: a request's ACK rides
        # on the response. In quick-ACK mode (a new connection's first
        # segments) each of round 0's requests drew a pure ACK: N of them
        # toward the receiver beside the data, in a queue that counts packets
        # (BMv2's 64 slots; a switch's 96 KB byte buffer or the simulator's
        # holds them in 4 KB). Set on the listener, so accepted connections
        # have it before their first request (the handler thread may start later).
        srv.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 0)
        print(f"incast server on :{port} cc={cc or 'default'}", flush=True)
        srv.serve_forever()


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        part = sock.recv(n - len(buf))
        if not part:
            return None
        buf += part
    return bytes(buf)


# -- client --------------------------------------------------------------------------
@dataclass
class Flow:
    server: str
    sock: socket.socket | None  # None between rounds with per-round connections
    size: int = 0
    got: int = 0
    header: bytearray = field(default_factory=bytearray)
    counters: tuple[int, int] | None = None
    sent_at: float = 0.0
    done_at: float = 0.0
    last_at: float = 0.0  # the request, or the last data that arrived
    max_gap: float = 0.0  # this round's longest wait for data


@dataclass
class RoundRecord:
    round: int
    start: float
    completion_s: float
    bytes: int
    goodput_bps: float
    fct_s: list[float]
    # Filled one round later, from the servers' counters.
    timeouts: int = 0
    retrans: int = 0
    stall_s: float = 0.0  # the longest any flow waited for data this round
    rto: bool = False


def connect_all(servers: list[str], port: int, timeout: float = 10.0) -> list[Flow]:
    flows = []
    for srv in servers:
        deadline = time.monotonic() + timeout
        while True:
            try:
                s = socket.create_connection((srv, port), timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"incast: cannot connect to server {srv}:{port}") from None
                time.sleep(0.1)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
        flows.append(Flow(srv, s))
    return flows


def _request(f: Flow, rnd: int, sel: selectors.BaseSelector, registered: bool) -> None:
    """Send f's request and wait for its response (EVENT_READ)."""
    assert f.sock is not None
    f.sock.setblocking(True)
    f.sock.sendall(REQ.pack(rnd, f.size))
    f.sock.setblocking(False)
    if registered:
        sel.modify(f.sock, selectors.EVENT_READ, f)
    else:
        sel.register(f.sock, selectors.EVENT_READ, f)


def _open(f: Flow, port: int, sel: selectors.BaseSelector) -> None:
    """Per-round connections: start a non-blocking connect to f's server; the
    request goes out when it completes (EVENT_WRITE)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setblocking(False)
    err = s.connect_ex((f.server, port))
    if err not in (0, errno.EINPROGRESS):
        s.close()
        raise SystemExit(f"incast: cannot connect to server {f.server}:{port}: {os.strerror(err)}")
    f.sock = s
    sel.register(s, selectors.EVENT_WRITE, f)


def wait_for_servers(servers: list[str], port: int, timeout: float) -> None:
    """Per-round connections: check once, before round 0, that every server answers."""
    for f in connect_all(servers, port, timeout):
        assert f.sock is not None
        f.sock.close()


def run_round(
    flows: list[Flow],
    rnd: int,
    sizes: list[int],
    offsets: list[float],
    timeout: float,
    port: int | None = None,
) -> tuple[float, float]:
    """One barrier round; returns (start, end) monotonic times. With `port`, each
    flow first connects to its server on that port (per-round connections) and
    closes the connection when its response is complete."""
    sel = selectors.DefaultSelector()
    start = time.monotonic()
    pending = sorted(range(len(flows)), key=lambda i: offsets[i])
    for f in flows:
        f.got, f.header, f.counters, f.done_at, f.max_gap = 0, bytearray(), None, 0.0, 0.0
    active = 0
    remaining = len(flows)
    while remaining:
        now = time.monotonic()
        while pending and now - start >= offsets[pending[0]]:
            i = pending.pop(0)
            f = flows[i]
            f.size, f.sent_at = sizes[i], time.monotonic()
            f.last_at = f.sent_at
            if port is None:
                _request(f, rnd, sel, registered=False)
            else:
                _open(f, port, sel)
            active += 1
        wait = (start + offsets[pending[0]] - now) if pending else 1.0
        if now - start > timeout:
            raise SystemExit(f"incast: round {rnd} did not finish in {timeout} s")
        for key, events in sel.select(
            timeout=max(0.0, min(wait, 1.0)) if active else max(0.0, wait)
        ):
            f = key.data
            assert f.sock is not None
            if events & selectors.EVENT_WRITE:  # a per-round connect finished
                err = f.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    raise SystemExit(
                        f"incast: cannot connect to server {f.server}:{port}: {os.strerror(err)}"
                    )
                _request(f, rnd, sel, registered=True)
                continue
            try:
                data = f.sock.recv(1 << 20)
            except BlockingIOError:
                continue
            if not data:
                raise SystemExit(f"incast: server {f.server} closed the connection")
            now = time.monotonic()
            f.max_gap = max(f.max_gap, now - f.last_at)
            f.last_at = now
            if f.counters is None:
                need = RESP.size - len(f.header)
                f.header += data[:need]
                data = data[need:]
                if len(f.header) == RESP.size:
                    f.counters = RESP.unpack(bytes(f.header))
            f.got += len(data)
            if f.counters is not None and f.got >= f.size:
                f.done_at = time.monotonic()
                sel.unregister(f.sock)
                if port is not None:  # per-round: this round's connection ends
                    f.sock.close()
                    f.sock = None
                active -= 1
                remaining -= 1
    sel.close()
    return start, max(f.done_at for f in flows)


def client(args: argparse.Namespace) -> int:
    servers = [s for s in args.servers.split(",") if s]
    n = len(servers)
    if n < 1 or args.sru < 1 or args.rounds < 1 or args.stall_s < 0:
        raise SystemExit("incast: need >= 1 server, --sru >= 1, --rounds >= 1, --stall-s >= 0")
    sizes = [args.sru if args.mode == "per-server" else max(1, args.sru // n)] * n
    if args.batch and args.batch < n:
        k = -(-n // args.batch)  # batches
        offsets = [args.stagger_us * 1e-6 * (i % k) for i in range(n)]
    else:
        offsets = [0.0] * n
    per_round = args.connections == APP_CONNECTIONS[1]
    if per_round:
        flows = [Flow(srv, None) for srv in servers]
        wait_for_servers(servers, args.port, args.connect_timeout)
    else:
        flows = connect_all(servers, args.port, args.connect_timeout)
    records: list[RoundRecord] = []
    prev: list[tuple[int, int]] | None = None
    out = open(args.out, "w") if args.out != "-" else sys.stdout  # noqa: SIM115
    try:
        for rnd in range(args.rounds + 1):
            last = rnd == args.rounds  # probe: closes the counters of the final round
            start, end = run_round(
                flows,
                rnd,
                [0] * n if last else sizes,
                [0.0] * n if last else offsets,
                args.round_timeout,
                args.port if per_round else None,
            )
            counters = [f.counters or (0, 0) for f in flows]
            if prev is not None:
                rec = records[-1]
                rec.timeouts = sum(c[0] - p[0] for c, p in zip(counters, prev, strict=True))
                rec.retrans = sum(c[1] - p[1] for c, p in zip(counters, prev, strict=True))
                rec.rto = rec.timeouts > 0 or (args.stall_s > 0 and rec.stall_s >= args.stall_s)
                out.write(json.dumps(asdict(rec)) + "\n")
                out.flush()
            prev = counters
            if last:
                break
            total = sum(sizes)
            elapsed = end - start
            records.append(
                RoundRecord(
                    round=rnd,
                    start=start,
                    completion_s=elapsed,
                    bytes=total,
                    goodput_bps=8 * total / elapsed if elapsed > 0 else 0.0,
                    fct_s=[
                        f.done_at - (start + off) for f, off in zip(flows, offsets, strict=True)
                    ],
                    stall_s=max(f.max_gap for f in flows),
                )
            )
    finally:
        if out is not sys.stdout:
            out.close()
        for f in flows:
            if f.sock is not None:
                f.sock.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="p4incast.apps.incast", description=(__doc__ or "").split("\n")[0]
    )
    sub = ap.add_subparsers(dest="role", required=True)
    s = sub.add_parser("server")
    s.add_argument("--port", type=int, default=5001)
    s.add_argument("--cc", help="TCP_CONGESTION for the responses (reno, cubic, bbr, p4i_dctcp…)")
    c = sub.add_parser("client")
    c.add_argument("--servers", required=True, help="comma-separated server addresses")
    c.add_argument("--port", type=int, default=5001)
    c.add_argument("--sru", type=int, required=True, help="bytes per server (or total, --mode)")
    c.add_argument("--rounds", type=int, default=10)
    c.add_argument("--mode", choices=["per-server", "total"], default="per-server")
    c.add_argument("--batch", type=int, default=0, help="seed-003 batch size n (0: all at once)")
    c.add_argument("--stagger-us", type=float, default=0.0, help="seed-003 T~ in microseconds")
    c.add_argument(
        "--connections",
        choices=APP_CONNECTIONS,
        default=APP_CONNECTIONS[0],
        help="one connection per server for the run, or a new one each round",
    )
    c.add_argument(
        "--stall-s",
        type=float,
        default=0.0,
        help="a round where some flow waits this long for data counts as an RTO round "
        "(0: TCPTimeouts alone)",
    )
    c.add_argument("--round-timeout", type=float, default=60.0)
    c.add_argument("--connect-timeout", type=float, default=10.0)
    c.add_argument("--out", default="-", help="JSON-lines file for per-round records")
    args = ap.parse_args(argv)
    if args.role == "server":
        serve(args.port, args.cc)
        return 0
    return client(args)


if __name__ == "__main__":
    sys.exit(main())
