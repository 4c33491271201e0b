"""The incast application on loopback: complete per-round records, barrier
rounds, batch staggering, RTO attribution from the servers' counters."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from p4incast.apps.incast import REQ, RESP
from p4incast.experiments.ray_local import free_port


@pytest.fixture
def server() -> Iterator[int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "p4incast.apps.incast", "server", "--port", str(port)],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    yield port
    proc.terminate()
    proc.wait(timeout=5)


def run_client(port: int, out: Path, *args: str) -> list[dict]:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "p4incast.apps.incast",
            "client",
            "--port",
            str(port),
            "--out",
            str(out),
            *args,
        ],
        check=True,
        timeout=60,
    )
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_rounds_are_complete_records(server: int, tmp_path: Path) -> None:
    recs = run_client(
        server,
        tmp_path / "r.jsonl",
        "--servers",
        "127.0.0.1,127.0.0.1,127.0.0.1",
        "--sru",
        "65536",
        "--rounds",
        "4",
    )
    assert [r["round"] for r in recs] == [0, 1, 2, 3]
    for r in recs:
        assert r["bytes"] == 3 * 65536
        assert len(r["fct_s"]) == 3 and all(f > 0 for f in r["fct_s"])
        assert r["completion_s"] == pytest.approx(max(r["fct_s"]))  # the slowest flow ends it
        assert r["goodput_bps"] == pytest.approx(8 * r["bytes"] / r["completion_s"])
        assert r["timeouts"] >= 0 and isinstance(r["rto"], bool)


def test_total_mode_and_batch_stagger(server: int, tmp_path: Path) -> None:
    recs = run_client(
        server,
        tmp_path / "r.jsonl",
        "--servers",
        "127.0.0.1,127.0.0.1",
        "--sru",
        "200000",
        "--rounds",
        "2",
        "--mode",
        "total",
        "--batch",
        "1",
        "--stagger-us",
        "20000",
    )
    for r in recs:
        assert r["bytes"] == 200000  # fixed total block split over the servers
        # Server 2 is asked 20 ms after server 1: the round lasts at least that.
        assert r["completion_s"] >= 0.020


def test_unreachable_server_is_one_clear_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "p4incast.apps.incast",
            "client",
            "--servers",
            "127.0.0.1",
            "--port",
            str(free_port()),
            "--sru",
            "10",
            "--connect-timeout",
            "1",
            "--out",
            str(tmp_path / "x"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "cannot connect to server" in proc.stderr
    assert "Traceback" not in proc.stderr


# /proc/net/tcp states of a connection this host closed first: FIN_WAIT1,
# FIN_WAIT2, TIME_WAIT, CLOSING (it stays in one of them for 60 s).
CLOSED_HERE_FIRST = {"04", "05", "06", "0B"}


def time_wait_to(port: int) -> int:
    """Connections to `port` that this host closed first: one per connection the
    client closed (counted whether or not the server's FIN has arrived yet)."""
    rows = [r.split() for r in Path("/proc/net/tcp").read_text().splitlines()[1:]]
    return sum(1 for r in rows if r[3] in CLOSED_HERE_FIRST and int(r[2].split(":")[1], 16) == port)


@pytest.mark.parametrize("connections", ["persistent", "per-round"])
def test_connections_persistent_or_new_each_round(
    server: int, tmp_path: Path, connections: str
) -> None:
    """--connections per-round: the client connects to every server at each
    round's start and closes after the response (plus one closed connection per
    server for the final counters round and one for the start-up check);
    persistent: one connection per server for the run. Records are complete either way."""
    before = time_wait_to(server)
    recs = run_client(
        server,
        tmp_path / "r.jsonl",
        "--servers",
        "127.0.0.1,127.0.0.1,127.0.0.1",
        "--sru",
        "100000",
        "--rounds",
        "3",
        "--connections",
        connections,
    )
    assert [r["round"] for r in recs] == [0, 1, 2]
    for r in recs:
        assert r["bytes"] == 3 * 100000
        assert len(r["fct_s"]) == 3 and all(f > 0 for f in r["fct_s"])
        assert r["completion_s"] == pytest.approx(max(r["fct_s"]))
    closed = time_wait_to(server) - before
    # Counted on this side only when the client's FIN went first; the start-up
    # check's connection sometimes closes from the server first (seen in CI: 14
    # of 15), so count what must hold: a new connection per server per round,
    # or none beyond the run's own.
    if connections == "per-round":
        assert 3 * 3 <= closed <= 3 * (3 + 1) + 3, closed
    else:
        assert closed <= 3, closed


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("tcpdump"), reason="needs root and tcpdump"
)
def test_server_acknowledges_each_request_with_its_response(server: int, tmp_path: Path) -> None:
    """The servers start in delayed-ACK mode, so no round — round 0 on a new
    connection included — costs a pure ACK per server toward the receiver
    (in quick-ACK mode the first requests each drew one: on the BMv2 testbed
    N of them beside N segments overflowed the packet-counted queue)."""
    dump = tmp_path / "lo.txt"
    with dump.open("w") as out:
        cap = subprocess.Popen(
            ["tcpdump", "-i", "lo", "-nn", "-l", f"tcp port {server}"],
            stdout=out,
            stderr=subprocess.PIPE,
        )
        assert cap.stderr is not None
        cap.stderr.readline()  # "listening on lo ..."
        try:
            recs = run_client(
                server, tmp_path / "r.jsonl", "--servers", "127.0.0.1,127.0.0.1", "--sru",
                "3000", "--rounds", "3",
            )  # fmt: skip
        finally:
            time.sleep(0.3)
            cap.terminate()
            cap.wait(timeout=5)
    assert len(recs) == 3
    text = dump.read_text().splitlines()
    before_close = []
    for line in text:
        if "Flags [F" in line or "Flags [R" in line:
            break
        before_close.append(line)
    from_server = [ln for ln in before_close if f".{server} >" in ln and "Flags [S" not in ln]
    data = [ln for ln in from_server if not ln.endswith("length 0")]
    pure_acks = [ln for ln in from_server if ln.endswith("length 0")]
    assert len(data) >= 2 * 3, text  # every response arrived in the capture
    assert pure_acks == [], pure_acks


@pytest.fixture
def pausing_server() -> Iterator[int]:
    """A server speaking the incast protocol that stops for 0.4 s halfway
    through its round-1 response, as a sender waiting on a timer does."""
    lsock = socket.create_server(("127.0.0.1", 0))
    port = lsock.getsockname()[1]

    def serve() -> None:
        conn, _ = lsock.accept()
        with conn:
            while True:
                req = conn.recv(REQ.size, socket.MSG_WAITALL)
                if len(req) < REQ.size:
                    return
                rnd, size = REQ.unpack(req)
                conn.sendall(RESP.pack(0, 0) + bytes(size // 2))
                if rnd == 1:
                    time.sleep(0.4)
                conn.sendall(bytes(size - size // 2))

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield port
    lsock.close()


@pytest.mark.parametrize("stall_s", [0.0, 0.25])
def test_a_flow_that_waits_a_timeout_marks_its_round(
    pausing_server: int, tmp_path: Path, stall_s: float
) -> None:
    """stall_s is each round's longest wait for data; with --stall-s a round
    whose wait reaches it counts as an RTO round even with no TCPTimeouts (a
    tail-loss probe at min RTO), and only that round."""
    recs = run_client(
        pausing_server, tmp_path / "r.jsonl", "--servers", "127.0.0.1", "--sru", "20000",
        "--rounds", "3", "--stall-s", str(stall_s),
    )  # fmt: skip
    assert [r["timeouts"] for r in recs] == [0, 0, 0]
    assert recs[1]["stall_s"] >= 0.4 and recs[1]["completion_s"] >= 0.4
    assert recs[0]["stall_s"] < 0.2 and recs[2]["stall_s"] < 0.2
    assert [r["rto"] for r in recs] == [False, stall_s > 0, False]
