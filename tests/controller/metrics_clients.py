"""Clients of a metrics endpoint for the tests of both (the exporter's and the
agent's): a timed scrape, and the idle, half-finished and slow connections a
hostile or broken client holds open, all on loopback with real sockets and TLS.
"""

from __future__ import annotations

import base64
import contextlib
import socket
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import bcrypt

REFUSED = (urllib.error.URLError, ConnectionError, ssl.SSLError, TimeoutError)


@dataclass(frozen=True)
class Scrape:
    status: int
    text: str
    seconds: float


def scrape(
    url: str,
    ctx: ssl.SSLContext | None = None,
    auth: tuple[str, str] | None = None,
    timeout: float = 5.0,
) -> Scrape:
    """GET `url`; an HTTP error status is returned, a refused connection raised."""
    req = urllib.request.Request(url)
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as reply:
            body = reply.read().decode()
            return Scrape(reply.status, body, time.monotonic() - t0)
    except urllib.error.HTTPError as err:
        return Scrape(err.code, err.read().decode(), time.monotonic() - t0)


def client_context(ca: Path, cert: Path | None = None, key: Path | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca))
    if cert is not None and key is not None:
        ctx.load_cert_chain(str(cert), str(key))
    return ctx


def bcrypt_hash(password: str) -> str:
    """As `htpasswd -nB` writes it ($2y$), at bcrypt's lowest cost (a test's speed)."""
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()
    return "$2y$" + hashed[4:]


def idle(port: int) -> socket.socket:
    """A TCP connection that sends nothing: `nc 127.0.0.1 PORT`."""
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def half_handshake(port: int, whole_hello: bool) -> socket.socket:
    """A TLS handshake left unfinished: the ClientHello sent (the server answers and
    waits for the client's Finished forever), or only its first 5 bytes (the server
    waits for the rest)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with contextlib.suppress(ssl.SSLWantReadError):
        tls.do_handshake()
    hello = outgoing.read()
    sock = idle(port)
    sock.sendall(hello if whole_hello else hello[:5])
    return sock


@contextlib.contextmanager
def hostile(port: int, idle_n: int, half_n: int) -> Iterator[list[socket.socket]]:
    """`idle_n` idle TCP connections and `half_n` unfinished handshakes (alternately
    a whole ClientHello and 5 bytes of one), held open inside the block."""
    socks: list[socket.socket] = []
    try:
        socks += [idle(port) for _ in range(idle_n)]
        socks += [half_handshake(port, whole_hello=i % 2 == 0) for i in range(half_n)]
        yield socks
    finally:
        for s in socks:
            s.close()


def closed_by_server(sock: socket.socket, within: float) -> float | None:
    """Seconds until the server closed `sock` (EOF or reset), reading and discarding
    what it sends (a ServerHello); None if it is still open after `within`."""
    t0 = time.monotonic()
    sock.settimeout(0.2)
    while time.monotonic() - t0 < within:
        try:
            if not sock.recv(65536):
                return time.monotonic() - t0
        except TimeoutError:
            continue
        except ConnectionError:
            return time.monotonic() - t0
    return None
