"""The HTTP(S) server of both metrics endpoints (`p4incast-ctl export`,
`p4incast-agent run --metrics`): prometheus_client's exposition of a registry,
with the TLS and basic auth of `p4incast.model.tls.MetricsTls`.

prometheus_client's own `start_http_server` wraps the listening socket, so each
TLS handshake runs inside `accept()` on its one serving thread, with no
timeout: one client that connects and sends nothing stops every scrape. Here
the accepting thread only accepts. Each connection goes to a worker of a
bounded set (`workers`), which does the handshake, reads the request and writes
the answer, each against a deadline (`handshake_timeout`, `request_timeout`);
a connection that is idle, slow or never finishes its handshake costs one
worker for those seconds, never another scrape. When every worker is busy a
new connection is closed at once (and logged, at most once a minute), never
queued.

One request per connection (`Connection: close`); GET or HEAD of `/metrics`,
`?name[]=` filters as prometheus_client's server does, OpenMetrics when asked
for, gzip when accepted. With basic-auth users, every request needs one of
them (bcrypt, checked one at a time; a user and password once accepted are
remembered for the process's life, as exporter-toolkit caches them).
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import logging
import select
import socket
import ssl
import threading
import time
from urllib.parse import parse_qs, urlsplit

import bcrypt
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import CollectorRegistry

from p4incast.model.tls import MetricsTls

LOG = logging.getLogger("p4incast.metrics_server")

WORKERS = 32  # connections served at once; more are closed
HANDSHAKE_TIMEOUT_S = 3.0  # from accept to a finished TLS handshake
REQUEST_TIMEOUT_S = 5.0  # to read the request's head, and again to write the answer
MAX_HEAD_BYTES = 16384  # request line and headers
BUSY_LOG_EVERY_S = 60.0
METRICS_PATH = "/metrics"

# The bcrypt hash an unknown user's password is checked against, so that an unknown
# user takes as long as a wrong password (no user enumeration by timing). A hash of
# random bytes nobody kept.
_DUMMY_HASH = b"$2b$10$CqPsL2JQVRM/etMig890RuPlpN1GdskLreAMESpNr17iH/cVDxyyW"
_BCRYPT_MAX_BYTES = 72  # bcrypt reads no more of a password (and bcrypt 5 refuses more)

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
}


class _Closed(Exception):
    """The client went away, or missed its deadline: nothing more to do for it."""


def _wait(sock: socket.socket, write: bool, deadline: float) -> None:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _Closed("deadline")
    poll = select.poll()
    poll.register(sock, select.POLLOUT if write else select.POLLIN)
    if not poll.poll(left * 1000):
        raise _Closed("deadline")


def _handshake(sock: ssl.SSLSocket, deadline: float) -> None:
    while True:
        try:
            sock.do_handshake()
            return
        except ssl.SSLWantReadError:
            _wait(sock, False, deadline)
        except ssl.SSLWantWriteError:
            _wait(sock, True, deadline)


def _recv(sock: socket.socket, deadline: float) -> bytes:
    while True:
        try:
            data = sock.recv(4096)
        except (ssl.SSLWantReadError, BlockingIOError):
            _wait(sock, False, deadline)
            continue
        except ssl.SSLWantWriteError:
            _wait(sock, True, deadline)
            continue
        if not data:
            raise _Closed("end of stream")
        return data


def _send_all(sock: socket.socket, data: bytes, deadline: float) -> None:
    view = memoryview(data)
    while view:
        try:
            sent = sock.send(view)
        except (ssl.SSLWantWriteError, BlockingIOError):
            _wait(sock, True, deadline)
            continue
        except ssl.SSLWantReadError:
            _wait(sock, False, deadline)
            continue
        view = view[sent:]


class BasicAuth:
    """basic_auth_users: user -> bcrypt hash."""

    def __init__(self, users: tuple[tuple[str, str], ...]) -> None:
        self.users = {u: h.encode() for u, h in users}
        self._accepted: set[tuple[str, bytes]] = set()  # (user, sha256 of the password)
        self._lock = threading.Lock()  # bcrypt is CPU-bound: one check at a time

    def allows(self, header: str | None) -> bool:
        """Whether an Authorization header names a user and their password."""
        if header is None or header[:6].lower() != "basic ":
            return False
        try:
            user, sep, password = (
                base64.b64decode(header[6:].strip(), validate=True).decode("utf-8").partition(":")
            )
        except (binascii.Error, ValueError):
            return False
        if not sep:
            return False
        secret = password.encode()
        seen = (user, hashlib.sha256(secret).digest())
        if seen in self._accepted:
            return True
        hashed = self.users.get(user)
        with self._lock:
            ok = bcrypt.checkpw(secret[:_BCRYPT_MAX_BYTES], hashed or _DUMMY_HASH)
        ok = ok and hashed is not None and len(secret) <= _BCRYPT_MAX_BYTES
        if ok:
            self._accepted.add(seen)
        return ok


class MetricsServer:
    """Serves a registry on one bound socket (see the module's docstring).
    `start` begins accepting; `shutdown` stops and closes."""

    def __init__(
        self,
        registry: CollectorRegistry,
        host: str,
        port: int,
        tls: MetricsTls,
        *,
        workers: int = WORKERS,
        handshake_timeout: float = HANDSHAKE_TIMEOUT_S,
        request_timeout: float = REQUEST_TIMEOUT_S,
    ) -> None:
        """Check `tls` and its files (`MetricsTls.verify`: the settings a web
        configuration file holds, if not read yet) and make the TLS context
        (ModelError naming the problem), then bind ADDR:PORT (OSError when it
        cannot)."""
        tls = tls.verify()
        self.registry = registry
        self.context = tls.server_context()
        self.auth = BasicAuth(tls.basic_auth) if tls.basic_auth else None
        self.handshake_timeout = handshake_timeout
        self.request_timeout = request_timeout
        self._slots = threading.BoundedSemaphore(workers)
        self.workers = workers
        self.refused = 0  # connections closed because every worker was busy
        self._last_busy_log = -BUSY_LOG_EVERY_S
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.create_server((host, port), family=family, backlog=128)
        self._sock.setblocking(False)
        self._wake_r, self._wake_w = socket.socketpair()
        self._thread = threading.Thread(
            target=self._accept_loop, name="metrics-accept", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    def start(self) -> MetricsServer:
        self._thread.start()
        return self

    def shutdown(self) -> None:
        """Stop accepting and close the listening socket (connections being served
        finish by their own deadlines)."""
        if self._thread.is_alive():
            self._wake_w.send(b"x")
            self._thread.join()
        for s in (self._sock, self._wake_r, self._wake_w):
            s.close()

    def _accept_loop(self) -> None:
        poll = select.poll()
        poll.register(self._sock, select.POLLIN)
        poll.register(self._wake_r, select.POLLIN)
        while True:
            ready = {fd for fd, _ in poll.poll()}
            if self._wake_r.fileno() in ready:
                return
            try:
                conn, peer = self._sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                continue
            except OSError as err:  # e.g. out of file descriptors: wait, do not spin
                LOG.warning("metrics endpoint: accept failed: %s", err.strerror or err)
                time.sleep(0.1)
                continue
            if not self._slots.acquire(blocking=False):
                conn.close()
                self._busy(peer)
                continue
            try:
                threading.Thread(
                    target=self._serve, args=(conn, peer), name="metrics-conn", daemon=True
                ).start()
            except RuntimeError:  # no thread to be had: as if every worker were busy
                conn.close()
                self._slots.release()
                self._busy(peer)

    def _busy(self, peer: object) -> None:
        self.refused += 1
        now = time.monotonic()
        if now - self._last_busy_log >= BUSY_LOG_EVERY_S:
            self._last_busy_log = now
            LOG.warning(
                "metrics endpoint: all %d workers busy, closed a connection from %s "
                "(%d so far); each frees within %gs",
                self.workers,
                peer,
                self.refused,
                self.handshake_timeout + 2 * self.request_timeout,
            )

    def _serve(self, conn: socket.socket, peer: object) -> None:
        sock: socket.socket = conn
        try:
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.context is not None:
                sock = self.context.wrap_socket(
                    conn, server_side=True, do_handshake_on_connect=False
                )
                _handshake(sock, time.monotonic() + self.handshake_timeout)
            head = self._read_head(sock, time.monotonic() + self.request_timeout)
            answer = self._answer(head)
            _send_all(sock, answer, time.monotonic() + self.request_timeout)
        except (_Closed, OSError) as err:  # ssl.SSLError is an OSError
            LOG.debug("metrics endpoint: %s: %s", peer, err)
        except Exception:
            LOG.exception("metrics endpoint: %s", peer)
        finally:
            sock.close()
            self._slots.release()

    @staticmethod
    def _read_head(sock: socket.socket, deadline: float) -> bytes:
        buf = b""
        while b"\r\n\r\n" not in buf:
            if len(buf) > MAX_HEAD_BYTES:
                return b""  # answered 431
            buf += _recv(sock, deadline)
        return buf.split(b"\r\n\r\n", 1)[0]

    def _answer(self, head: bytes) -> bytes:
        if not head:
            return _response(431, b"request head too large\n")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or parts[2] not in ("HTTP/1.0", "HTTP/1.1"):
            return _response(400, b"bad request line\n")
        method, target, _version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                return _response(400, b"bad header line\n")
            headers[name.strip().lower()] = value.strip()
        if self.auth is not None and not self.auth.allows(headers.get("authorization")):
            return _response(
                401, b"Unauthorized\n", (("WWW-Authenticate", 'Basic realm="p4incast"'),)
            )
        if method not in ("GET", "HEAD"):
            return _response(405, b"GET or HEAD\n", (("Allow", "GET, HEAD"),))
        url = urlsplit(target)
        if url.path != METRICS_PATH:
            return _response(404, f"metrics are at {METRICS_PATH}\n".encode())
        encoder, content_type = choose_encoder(headers.get("accept", ""))
        names = parse_qs(url.query).get("name[]")
        registry = self.registry.restricted_registry(names) if names else self.registry
        try:
            body = encoder(registry)
        except Exception:  # a collector failed: the scrape fails, the server stays
            LOG.exception("metrics endpoint: collecting failed")
            return _response(500, b"collecting the metrics failed\n")
        extra: tuple[tuple[str, str], ...] = ()
        if "gzip" in headers.get("accept-encoding", ""):
            body = gzip.compress(body, compresslevel=5)
            extra = (("Content-Encoding", "gzip"),)
        return _response(200, body, extra, content_type, head_only=method == "HEAD")


def _response(
    code: int,
    body: bytes,
    headers: tuple[tuple[str, str], ...] = (),
    content_type: str = "text/plain; charset=utf-8",
    head_only: bool = False,
) -> bytes:
    lines = [f"HTTP/1.1 {code} {_REASONS[code]}", f"Content-Type: {content_type}"]
    lines += [f"{k}: {v}" for k, v in headers]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1") + (b"" if head_only else body)


def serve(registry: CollectorRegistry, host: str, port: int, tls: MetricsTls) -> MetricsServer:
    """Bind and start serving `registry` (OSError when the address cannot be bound)."""
    return MetricsServer(registry, host, port, tls).start()
