"""TLS settings shared by the controller and the host agent (docs/security.md).

Both metrics endpoints (`p4incast-ctl export --listen`, `p4incast-agent run
--metrics`) take the same three flags, defined here once (`METRICS_TLS_FLAGS`)
with the one rule for which of them go together (`MetricsTls.check`):

    --metrics-tls-cert FILE  --metrics-tls-key FILE   HTTPS (both or neither)
    --metrics-client-ca FILE                          and a client certificate
                                                      signed by FILE is required

What a PEM certificate or private key looks like (`pem_problem`) is stated here
too, for those files and for the controller's P4Runtime TLS files, and so is
who may read a private key (`key_access_problem`: its owner only, as ssh
demands of an identity file), for every key the project reads; it stats the
key, nothing more. `check` judges text the caller reads; `verify`, the one
place here that reads files, reads them, applies `key_access_problem` to the
key and loads the pair as the HTTPS server will, for both endpoints (each
turns the ModelError into its own error).
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import ssl
import stat
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from .errors import ModelError


class Pem(StrEnum):
    """What a PEM file must hold."""

    CERT = "certificate"
    KEY = "private key"


# BEGIN labels of each kind (RFC 7468; a key as PKCS#8, PKCS#1 or SEC1)
_LABELS: dict[Pem, tuple[str, ...]] = {
    Pem.CERT: ("CERTIFICATE",),
    Pem.KEY: ("PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"),
}
_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----\s*(.*?)\s*-----END \1-----", re.DOTALL)


def pem_problem(text: str, kind: Pem) -> str | None:
    """Why `text` is not a PEM file holding a `kind` (a certificate, or an
    unencrypted private key), or None when it is."""
    blocks = _BLOCK.findall(text)
    if not blocks:
        return f"not a PEM file (no -----BEGIN {_LABELS[kind][0]}----- block)"
    ours = [body for label, body in blocks if label in _LABELS[kind]]
    if not ours:
        found = ", ".join(sorted({label for label, _ in blocks}))
        return f"holds no PEM {kind} (found: {found})"
    for body in ours:
        try:
            base64.b64decode("".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            return f"its PEM {kind} is not valid base64"
    return None


# A private key's mode bits that give anyone but its owner access: ssh refuses an
# identity file with any of them (OpenSSH authfile.c, sshkey_perm_ok), and so do we.
KEY_MODE_FORBIDDEN = 0o077


def key_access_problem(path: str | os.PathLike[str]) -> str | None:
    """Why the private key at `path` is refused for its permissions (group or
    others may access it: one line naming the file and the fix), or None. A file
    that cannot be stat'ed is None here: reading it reports that."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None
    if mode & KEY_MODE_FORBIDDEN:
        return (
            f"private key accessible by group or others (mode {mode:04o}); refused as ssh "
            f"refuses such a key: chmod 600 {path}"
        )
    return None


@dataclass(frozen=True)
class MetricsTlsFlag:
    """One command-line flag of a metrics endpoint's TLS."""

    flag: str
    dest: str
    help: str


METRICS_TLS_FLAGS: tuple[MetricsTlsFlag, ...] = (
    MetricsTlsFlag(
        "--metrics-tls-cert",
        "metrics_tls_cert",
        "serve the metrics over HTTPS with this PEM certificate (with --metrics-tls-key)",
    ),
    MetricsTlsFlag(
        "--metrics-tls-key", "metrics_tls_key", "the PEM private key of --metrics-tls-cert"
    ),
    MetricsTlsFlag(
        "--metrics-client-ca",
        "metrics_client_ca",
        "HTTPS: require a client certificate signed by this PEM CA (mutual TLS)",
    ),
)


@dataclass(frozen=True)
class MetricsTls:
    """A metrics endpoint's TLS files; all None is plain HTTP."""

    cert: str | None = None
    key: str | None = None
    client_ca: str | None = None

    @classmethod
    def from_args(cls, args: object) -> MetricsTls:
        """The settings of METRICS_TLS_FLAGS from a parsed argparse namespace."""
        cert, key, ca = (getattr(args, f.dest, None) for f in METRICS_TLS_FLAGS)
        return cls(
            cert=None if cert is None else str(cert),
            key=None if key is None else str(key),
            client_ca=None if ca is None else str(ca),
        )

    @property
    def enabled(self) -> bool:
        return self.cert is not None

    @property
    def scheme(self) -> str:
        """The URL scheme the endpoint serves."""
        return "https" if self.enabled else "http"

    def check(self, read: Callable[[str, str], str]) -> None:
        """Which flags go together, then each named file as PEM of its kind.
        `read(flag, path)` returns a file's text (and raises the caller's error if it
        cannot); ModelError names the flag and the file of the first problem."""
        cert, key, ca = (f.flag for f in METRICS_TLS_FLAGS)
        if (self.cert is None) != (self.key is None):
            given, missing = (cert, key) if self.key is None else (key, cert)
            raise ModelError(f"{given} needs {missing}: HTTPS takes a certificate and its key")
        if self.client_ca is not None and self.cert is None:
            raise ModelError(
                f"{ca} requires client certificates over HTTPS: give {cert} and {key} too"
            )
        for flag, path, kind in (
            (cert, self.cert, Pem.CERT),
            (key, self.key, Pem.KEY),
            (ca, self.client_ca, Pem.CERT),
        ):
            if path is not None:
                problem = pem_problem(read(flag, path), kind)
                if problem is not None:
                    raise ModelError(f"{flag} {path}: {problem}")

    def verify(self) -> None:
        """`check` on the files as they are, then the certificate and key loaded
        as the HTTPS server will load them: a pair that does not match is refused
        before anything is bound. ModelError names the flag and file."""

        def read(flag: str, path: str) -> str:
            try:
                return Path(path).read_text()
            except (OSError, UnicodeDecodeError) as err:
                reason = err.strerror if isinstance(err, OSError) else "not text"
                raise ModelError(f"{flag} {path}: cannot read it: {reason}") from None

        self.check(read)
        if self.key is not None:
            problem = key_access_problem(self.key)
            if problem is not None:
                key = METRICS_TLS_FLAGS[1].flag
                raise ModelError(f"{key} {self.key}: {problem}")
        if self.cert is not None and self.key is not None:
            try:
                ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(self.cert, self.key)
            except ssl.SSLError as err:
                cert, key = (f.flag for f in METRICS_TLS_FLAGS[:2])
                raise ModelError(
                    f"{cert} {self.cert} and {key} {self.key}: not a certificate and "
                    f"its key ({err.reason})"
                ) from None

    def server_args(self) -> dict[str, Any]:
        """prometheus_client.start_http_server's TLS arguments for these files."""
        return {
            "certfile": self.cert,
            "keyfile": self.key,
            "client_cafile": self.client_ca,
            "client_auth_required": self.client_ca is not None,
        }
