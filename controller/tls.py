"""TLS to the switch's P4Runtime server, and the checks that explain its failures.

`TlsSettings` is `switch.tls` (`--tls-ca`, `--tls-cert`, `--tls-key`,
`--tls-server-name`). The combinations (docs/security.md):

    no switch.tls        plaintext: to a loopback address, or anywhere with
                         switch.plaintext (--plaintext) (`check_transport`)
    ca                   TLS; the switch's certificate must be signed by ca
    ca + cert + key      mutual TLS: the switch also verifies our certificate
    server_name          with ca: the name checked in the switch's certificate
                         instead of the address's host (and sent as SNI)

Anything else (a switch.tls without a CA, a cert without its key, a key or
cert or name without a CA) is refused, as is a file that cannot be read or
is not PEM of its kind, a private key that group or others may access
(`key_access_problem`, checked again wherever the key is read), or a
certificate and key that are not a pair: `check` raises one ControllerError
before any connection.

gRPC reports every handshake failure as the same UNAVAILABLE, after its
connect timeout. `probe` therefore shakes hands itself first, with Python's
`ssl` and the same files and name, and names the cause: a TLS server asked
in plaintext, a plaintext server asked in TLS, a certificate our CA does not
sign, a name the certificate does not carry, a client certificate missing or
refused. It trusts exactly what gRPC trusts, the CA file alone (never the
system's bundle), so the two agree on every certificate. Nothing is sent but
the handshake and HTTP/2's connection preface.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

import finsy as fy

from p4incast.model.tls import MetricsTls, Pem, key_access_problem, pem_problem

from .addresses import host_of, host_port, is_loopback
from .errors import ControllerError, model_errors

PROBE_TIMEOUT_S = 3.0
PLAINTEXT = "switch.plaintext: true (--plaintext)"

# HTTP/2's client connection preface and an empty SETTINGS frame: a gRPC server
# that accepted the connection answers with its own SETTINGS at once.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


@dataclass(frozen=True)
class TlsSettings:
    """switch.tls: the files of TLS (ca) or mutual TLS (ca, cert, key) to P4Runtime."""

    ca: Path | None = None  # PEM CA that signed the switch's certificate
    cert: Path | None = None  # PEM client certificate (mutual TLS)
    key: Path | None = None  # its PEM private key
    server_name: str | None = None  # name to check in the switch's certificate

    @property
    def mutual(self) -> bool:
        return self.cert is not None


def name(field: str) -> str:
    """A TLS setting as both the YAML key and the flag that set it."""
    return f"switch.tls.{field} (--tls-{field.replace('_', '-')})"


def _read(path: Path, field: str, source: str) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        raise ControllerError(f"{source}: {name(field)} {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) else "not text"
        raise ControllerError(f"{source}: {name(field)} {path}: cannot read it: {reason}") from None


def check(tls: TlsSettings, source: str) -> None:
    """The combination is one of those above and every file is readable PEM of its
    kind; the certificate and key are a pair. ControllerError naming the first
    problem."""
    if tls.ca is None:
        given = [f for f in ("cert", "key", "server_name") if getattr(tls, f) is not None]
        if given:
            raise ControllerError(
                f"{source}: {name(given[0])} needs {name('ca')}, the CA that signed the "
                "switch's certificate"
            )
        raise ControllerError(
            f"{source}: switch.tls names no CA: give {name('ca')}, the CA that signed the "
            f"switch's certificate, or leave switch.tls out (plaintext: loopback, or {PLAINTEXT})"
        )
    if (tls.cert is None) != (tls.key is None):
        given, missing = ("cert", "key") if tls.key is None else ("key", "cert")
        raise ControllerError(
            f"{source}: {name(given)} needs {name(missing)}: mutual TLS takes a client "
            "certificate and its key"
        )
    if tls.server_name is not None and not tls.server_name.strip():
        raise ControllerError(f"{source}: {name('server_name')} is empty")
    for field, kind in (("ca", Pem.CERT), ("cert", Pem.CERT), ("key", Pem.KEY)):
        path: Path | None = getattr(tls, field)
        if path is None:
            continue
        problem = pem_problem(_read(path, field, source), kind)
        if problem is None and kind is Pem.KEY:
            problem = key_access_problem(path)
        if problem is not None:
            raise ControllerError(f"{source}: {name(field)} {path}: {problem}")
    context(tls, source)


def context(tls: TlsSettings, source: str = "switch") -> ssl.SSLContext:
    """A client SSLContext that trusts the CA alone, as gRPC does (no system bundle),
    checks the name, and (mutual TLS) presents the certificate and key."""
    assert tls.ca is not None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, check_hostname
    try:
        ctx.load_verify_locations(cafile=str(tls.ca))
    except ssl.SSLError as err:
        raise ControllerError(
            f"{source}: {name('ca')} {tls.ca}: not a usable CA ({err.reason})"
        ) from None
    if tls.cert is not None and tls.key is not None:
        try:
            ctx.load_cert_chain(str(tls.cert), str(tls.key))
        except ssl.SSLError as err:
            raise ControllerError(
                f"{source}: {name('cert')} {tls.cert} and {name('key')} {tls.key}: not a "
                f"certificate and its key ({err.reason})"
            ) from None
    ctx.set_alpn_protocols(["h2"])
    return ctx


def credentials(tls: TlsSettings | None) -> fy.GRPCCredentialsTLS | None:
    """finsy's channel credentials for `tls` (None: plaintext)."""
    if tls is None:
        return None
    assert tls.ca is not None  # check() refused a switch.tls without one
    problem = key_access_problem(tls.key) if tls.key else None
    if problem is not None:
        raise ControllerError(f"{name('key')} {tls.key}: {problem}")
    try:
        return fy.GRPCCredentialsTLS(
            cacert=tls.ca.read_bytes(),
            cert=tls.cert.read_bytes() if tls.cert else None,
            private_key=tls.key.read_bytes() if tls.key else None,
            target_name_override=tls.server_name or "",
        )
    except OSError as err:
        raise ControllerError(f"cannot read {err.filename}: {err.strerror}") from None


def check_transport(address: str, tls: TlsSettings | None, plaintext: bool) -> None:
    """Plaintext P4Runtime only where it is safe or asked for: to a loopback
    address, or with switch.plaintext (--plaintext); never with switch.tls too
    (config.check_switch refuses that combination where it is written)."""
    if tls is not None or plaintext or is_loopback(host_of(address)):
        return
    raise ControllerError(
        f"the switch at {address} is not on loopback and this client has no TLS settings: "
        f"give {name('ca')} (mutual TLS: with {name('cert')} and {name('key')}), or "
        f"{PLAINTEXT} to speak plaintext P4Runtime to it on a network you trust"
    )


def _speaks_tls(sock: socket.socket, host: str) -> bool:
    """Whether the server on `sock` answers a TLS handshake: completes it (nothing
    is verified) or ends it with a TLS alert (a TLS 1.2 server that wants a client
    certificate does)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with ctx.wrap_socket(sock, server_hostname=host):
            return True
    except ssl.SSLError as err:
        return "ALERT" in (err.reason or "")
    except OSError:
        return False


def probe(address: str, tls: TlsSettings | None, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """Shake hands with the P4Runtime server at `address` as gRPC would with `tls`;
    the reason it would fail, naming the setting that fixes it, or None when the
    handshake succeeds or nothing answers (then gRPC's own error stands)."""
    host, port = host_port(address)
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError:
        return None  # unreachable: not a TLS matter
    with sock:
        if tls is None:
            if _speaks_tls(sock, host):
                return (
                    f"the switch at {address} speaks TLS and this client plaintext: give "
                    f"{name('ca')}, and {name('cert')} and {name('key')} if the switch "
                    "requires client certificates"
                )
            return None
        return _tls_problem(sock, address, host, tls)


def _tls_problem(sock: socket.socket, address: str, host: str, tls: TlsSettings) -> str | None:
    peer_name = tls.server_name or host
    try:
        with context(tls).wrap_socket(sock, server_hostname=peer_name) as conn:
            conn.sendall(_H2_PREFACE)
            answer = conn.recv(9)
    except ssl.SSLCertVerificationError as err:
        if err.verify_code == 62:  # X509_V_ERR_HOSTNAME_MISMATCH
            return (
                f"the switch at {address} has a certificate that is not valid for "
                f"{peer_name!r}: give {name('server_name')} a name it carries"
            )
        return (
            f"the switch at {address} has a certificate that {name('ca')} {tls.ca} does "
            f"not verify ({err.verify_message}): give the CA that signed it"
        )
    except TimeoutError:
        return None  # a slow server: gRPC's own timeout decides
    except ssl.SSLError as err:
        reason = err.reason or str(err)
        if reason in ("WRONG_VERSION_NUMBER", "UNEXPECTED_EOF_WHILE_READING"):
            return _plaintext_server(address)
        if "ALERT" not in reason:
            return f"TLS with the switch at {address} failed: {reason}"
        return _client_refused(address, tls, reason.lower())
    except (ConnectionResetError, BrokenPipeError):
        return _client_refused(address, tls, "connection closed")
    except OSError:
        return None
    if not answer:  # closed right after the handshake: our certificate (or its lack)
        return _client_refused(address, tls, "connection closed after the handshake")
    return None


def _plaintext_server(address: str) -> str:
    return (
        f"the switch at {address} does not speak TLS (plaintext P4Runtime): leave out "
        f"{name('ca')} and the other TLS settings, or start the switch with TLS"
    )


def _client_refused(address: str, tls: TlsSettings, how: str) -> str:
    if tls.cert is None:
        return (
            f"the switch at {address} requires a client certificate ({how}): give "
            f"{name('cert')} and {name('key')}"
        )
    return (
        f"the switch at {address} refused the client certificate {name('cert')} "
        f"{tls.cert} ({how}): give one signed by a CA the switch trusts"
    )


def check_metrics(tls: MetricsTls) -> MetricsTls:
    """A metrics endpoint's TLS flags, web configuration file and the files they
    name (`MetricsTls.verify`, shared with the agent): refused before anything is
    bound. The settings in effect."""
    with model_errors():
        return tls.verify()
