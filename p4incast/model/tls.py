"""TLS settings shared by the controller and the host agent (docs/security.md).

Both metrics endpoints (`p4incast-ctl export --listen`, `p4incast-agent run
--metrics`) take the same flags, defined here once (`METRICS_TLS_FLAGS`) with
the one rule for which of them go together (`MetricsTls.check`):

    --metrics-tls-cert FILE  --metrics-tls-key FILE   HTTPS (both or neither)
    --metrics-client-ca FILE                          and a client certificate
                                                      signed by FILE is required
    --web.config.file FILE   the same settings, plus the lowest TLS version and
                             basic-auth users, from a Prometheus exporter-toolkit
                             web configuration file (not with the three above)

The file flags are shorthand for the file's `tls_server_config` (`cert_file`,
`key_file`, `client_ca_file` with `client_auth_type: RequireAndVerifyClientCert`);
`_web_config` is the one reader of the file's text and refuses what this
endpoint does not implement rather than ignore it.

What a PEM certificate or private key looks like (`pem_problem`) is stated here
too, for those files and for the controller's P4Runtime TLS files, and so is
who may read a private key (`key_access_problem`: its owner only, as ssh
demands of an identity file), for every key the project reads; it stats the
key, nothing more. `check` judges text the caller reads; `verify`, the one
place here that touches files, reads them, applies `key_access_problem` to
the key in effect (a flag's or the web configuration file's) and makes the
server's TLS context (`server_context`) as the HTTPS server will, for both
endpoints (each turns the ModelError into its own error).
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
from typing import cast

import yaml

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


CERT_FLAG = MetricsTlsFlag(
    "--metrics-tls-cert",
    "metrics_tls_cert",
    "serve the metrics over HTTPS with this PEM certificate (with --metrics-tls-key)",
)
KEY_FLAG = MetricsTlsFlag(
    "--metrics-tls-key", "metrics_tls_key", "the PEM private key of --metrics-tls-cert"
)
CA_FLAG = MetricsTlsFlag(
    "--metrics-client-ca",
    "metrics_client_ca",
    "HTTPS: require a client certificate signed by this PEM CA (mutual TLS)",
)
WEB_CONFIG_FLAG = MetricsTlsFlag(
    "--web.config.file",
    "web_config_file",
    "TLS and basic auth of the metrics endpoint from this Prometheus web configuration "
    "file (exporter-toolkit format, as node_exporter reads; instead of the three "
    "--metrics-* file flags)",
)
METRICS_TLS_FLAGS: tuple[MetricsTlsFlag, ...] = (CERT_FLAG, KEY_FLAG, CA_FLAG, WEB_CONFIG_FLAG)


class ClientAuth(StrEnum):
    """The exporter-toolkit `client_auth_type` values served: the others (Go's
    RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven) let a client
    in with a certificate no CA verified, or none."""

    NONE = "NoClientCert"
    VERIFY = "RequireAndVerifyClientCert"


# exporter-toolkit `min_version` -> the TLS version; TLS10/TLS11 are refused.
TLS_VERSIONS: dict[str, ssl.TLSVersion] = {
    "TLS12": ssl.TLSVersion.TLSv1_2,
    "TLS13": ssl.TLSVersion.TLSv1_3,
}
DEFAULT_MIN_VERSION = "TLS12"  # exporter-toolkit's default

# A bcrypt hash as htpasswd -B and the bcrypt libraries write it: $2a$, $2b$ or $2y$,
# a two-digit cost 04..31, 22 characters of salt and 31 of hash.
BCRYPT_HASH = re.compile(r"\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}")

# exporter-toolkit keys this endpoint does not implement: refused by name rather
# than ignored, so a file never means less than it says.
_UNSUPPORTED_TOP = ("http_server_config", "rate_limit")
_TLS_KEYS = ("cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version")
_UNSUPPORTED_TLS = (
    "max_version",
    "cipher_suites",
    "curve_preferences",
    "prefer_server_cipher_suites",
    "client_allowed_sans",
)
_INLINE_TLS = {"cert": "cert_file", "key": "key_file", "client_ca": "client_ca_file"}


def _web_config(text: str, path: str) -> MetricsTls:
    """The settings of an exporter-toolkit web configuration file's text; relative
    file names are relative to the file's folder (as exporter-toolkit reads them).
    ModelError naming the file and the key of the first problem."""
    where = f"{WEB_CONFIG_FLAG.flag} {path}"
    try:
        data = cast(object, yaml.safe_load(text))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or "cannot parse it"
        raise ModelError(f"{where}: not YAML{at}: {problem}") from None
    if data is None:
        return MetricsTls(source=path)  # an empty file: plain HTTP, no auth
    top = _mapping(data, where, "the file")
    for key in top:
        if key in _UNSUPPORTED_TOP:
            raise ModelError(
                f"{where}: {key} is not supported here (only tls_server_config "
                "and basic_auth_users)"
            )
        if key not in ("tls_server_config", "basic_auth_users"):
            raise ModelError(
                f"{where}: unknown key {key!r} (expected tls_server_config, basic_auth_users)"
            )
    users = _users(top.get("basic_auth_users"), where)
    raw_tls = top.get("tls_server_config")
    tls = {} if raw_tls is None else _mapping(raw_tls, where, "tls_server_config")
    for key in tls:
        if key in _INLINE_TLS:
            raise ModelError(
                f"{where}: tls_server_config.{key} (inline PEM) is not supported: "
                f"give {_INLINE_TLS[key]}, a file"
            )
        if key in _UNSUPPORTED_TLS:
            raise ModelError(f"{where}: tls_server_config.{key} is not supported here")
        if key not in _TLS_KEYS:
            raise ModelError(
                f"{where}: unknown key tls_server_config.{key} (expected one of "
                f"{', '.join(_TLS_KEYS)})"
            )
    values = {k: _text(v, where, f"tls_server_config.{k}") for k, v in tls.items()}
    if not values:
        if users:
            raise ModelError(
                f"{where}: basic_auth_users without tls_server_config would send "
                "passwords in clear text: add tls_server_config"
            )
        return MetricsTls(source=path)
    for key in ("cert_file", "key_file"):
        if key not in values:
            raise ModelError(
                f"{where}: tls_server_config needs cert_file and key_file ({key} is missing)"
            )
    auth = values.get("client_auth_type", ClientAuth.NONE.value)
    if auth not in tuple(ClientAuth):
        raise ModelError(
            f"{where}: tls_server_config.client_auth_type {auth!r} is not "
            f"supported: {ClientAuth.NONE} or {ClientAuth.VERIFY}"
        )
    ca = values.get("client_ca_file")
    if auth == ClientAuth.VERIFY and ca is None:
        raise ModelError(
            f"{where}: tls_server_config.client_auth_type {auth} needs "
            "client_ca_file, the CA that signs the scrapers' certificates"
        )
    if auth == ClientAuth.NONE and ca is not None:
        raise ModelError(
            f"{where}: tls_server_config.client_ca_file needs client_auth_type {ClientAuth.VERIFY}"
        )
    version = values.get("min_version", DEFAULT_MIN_VERSION)
    if version not in TLS_VERSIONS:
        raise ModelError(
            f"{where}: tls_server_config.min_version {version!r} is not "
            f"supported: {' or '.join(TLS_VERSIONS)}"
        )
    folder = os.path.dirname(path)
    return MetricsTls(
        cert=os.path.join(folder, values["cert_file"]),
        key=os.path.join(folder, values["key_file"]),
        client_ca=None if ca is None else os.path.join(folder, ca),
        source=path,
        min_version=version,
        basic_auth=users,
    )


def _mapping(value: object, where: str, what: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise ModelError(f"{where}: {what} must be a mapping")
    out: dict[str, object] = {}
    for k, v in cast(dict[object, object], value).items():
        if not isinstance(k, str):
            raise ModelError(f"{where}: {what} has a key that is not text: {k!r}")
        out[k] = v
    return out


def _text(value: object, where: str, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ModelError(f"{where}: {key} must be non-empty text")
    return value


def _users(value: object, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    users: list[tuple[str, str]] = []
    for user, hashed in _mapping(value, where, "basic_auth_users").items():
        if not user or ":" in user:
            raise ModelError(
                f"{where}: basic_auth_users: user name {user!r} is empty or has "
                "a ':' (basic auth cannot carry it)"
            )
        if not isinstance(hashed, str) or not BCRYPT_HASH.fullmatch(hashed):
            raise ModelError(
                f"{where}: basic_auth_users.{user} is not a bcrypt hash (make "
                "one with: htpasswd -nBC 10 \"\" | tr -d ':\\n')"
            )
        users.append((user, hashed))
    return tuple(users)


@dataclass(frozen=True)
class MetricsTls:
    """A metrics endpoint's TLS files and basic-auth users; all None is plain HTTP.

    Set by the three file flags, or by `web_config` (--web.config.file), whose
    file `check` reads into the same fields (with `source`, the file, naming
    them in errors): a client CA always means client certificates are required
    and verified (RequireAndVerifyClientCert)."""

    cert: str | None = None
    key: str | None = None
    client_ca: str | None = None
    web_config: str | None = None  # the settings are to be read from this file (`check`)
    source: str | None = None  # the web configuration file they were read from
    min_version: str = DEFAULT_MIN_VERSION
    basic_auth: tuple[tuple[str, str], ...] = ()  # (user, bcrypt hash)

    @classmethod
    def from_args(cls, args: object) -> MetricsTls:
        """The settings of METRICS_TLS_FLAGS from a parsed argparse namespace."""
        cert, key, ca, web = (getattr(args, f.dest, None) for f in METRICS_TLS_FLAGS)
        return cls(
            cert=None if cert is None else str(cert),
            key=None if key is None else str(key),
            client_ca=None if ca is None else str(ca),
            web_config=None if web is None else str(web),
        )

    @property
    def enabled(self) -> bool:
        return self.cert is not None

    @property
    def scheme(self) -> str:
        """The URL scheme the endpoint serves."""
        return "https" if self.enabled else "http"

    def name(self, flag: MetricsTlsFlag) -> str:
        """How an error names one setting: the flag, or the file and key it came from."""
        if self.source is None:
            return flag.flag
        key = {CERT_FLAG: "cert_file", KEY_FLAG: "key_file", CA_FLAG: "client_ca_file"}[flag]
        return f"{WEB_CONFIG_FLAG.flag} {self.source}: tls_server_config.{key}"

    def check(self, read: Callable[[str, str], str]) -> MetricsTls:
        """Which flags go together (the web configuration file, read and judged, or
        the file flags), then each named file as PEM of its kind; the settings in
        effect. `read(name, path)` returns a file's text (and raises the caller's
        error if it cannot); ModelError names the flag or key and the file of the
        first problem."""
        cert, key, ca = (f.flag for f in (CERT_FLAG, KEY_FLAG, CA_FLAG))
        tls = self
        if self.web_config is not None:
            given = [
                f.flag
                for f, v in (
                    (CERT_FLAG, self.cert),
                    (KEY_FLAG, self.key),
                    (CA_FLAG, self.client_ca),
                )
                if v is not None
            ]
            if given:
                raise ModelError(
                    f"{WEB_CONFIG_FLAG.flag} and {given[0]}: give the TLS settings one way, "
                    "in the file or as flags"
                )
            text = read(WEB_CONFIG_FLAG.flag, self.web_config)
            tls = _web_config(text, self.web_config)
        if (tls.cert is None) != (tls.key is None):
            given, missing = (cert, key) if tls.key is None else (key, cert)
            raise ModelError(f"{given} needs {missing}: HTTPS takes a certificate and its key")
        if tls.client_ca is not None and tls.cert is None:
            raise ModelError(
                f"{ca} requires client certificates over HTTPS: give {cert} and {key} too"
            )
        for flag, path, kind in (
            (CERT_FLAG, tls.cert, Pem.CERT),
            (KEY_FLAG, tls.key, Pem.KEY),
            (CA_FLAG, tls.client_ca, Pem.CERT),
        ):
            if path is not None:
                problem = pem_problem(read(tls.name(flag), path), kind)
                if problem is not None:
                    raise ModelError(f"{tls.name(flag)} {path}: {problem}")
        return tls

    def verify(self) -> MetricsTls:
        """`check` on the files as they are, then the server's TLS context made as
        the endpoint will make it (`server_context`): a certificate and key that
        are not a pair are refused before anything is bound. The settings in
        effect; ModelError names the flag (or file and key) and the file."""

        def read(flag: str, path: str) -> str:
            try:
                return Path(path).read_text()
            except (OSError, UnicodeDecodeError) as err:
                reason = err.strerror if isinstance(err, OSError) else "not text"
                raise ModelError(f"{flag} {path}: cannot read it: {reason}") from None

        tls = self.check(read)
        if tls.key is not None:
            problem = key_access_problem(tls.key)
            if problem is not None:
                raise ModelError(f"{tls.name(KEY_FLAG)} {tls.key}: {problem}")
        tls.server_context()
        return tls

    def server_context(self) -> ssl.SSLContext | None:
        """The HTTPS server's TLS context (None: plain HTTP): the certificate and
        key, the lowest TLS version, and with a client CA a client certificate it
        signed required. ModelError when the files do not load."""
        if self.cert is None or self.key is None:
            return None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = TLS_VERSIONS[self.min_version]
        try:
            ctx.load_cert_chain(self.cert, self.key)
        except ssl.SSLError as err:
            raise ModelError(
                f"{self.name(CERT_FLAG)} {self.cert} and {self.name(KEY_FLAG)} {self.key}: "
                f"not a certificate and its key ({err.reason})"
            ) from None
        except OSError as err:
            raise ModelError(
                f"{self.name(CERT_FLAG)} {self.cert}: cannot read it: {err.strerror}"
            ) from None
        if self.client_ca is not None:
            try:
                ctx.load_verify_locations(cafile=self.client_ca)
            except (ssl.SSLError, OSError) as err:
                reason = err.reason if isinstance(err, ssl.SSLError) else err.strerror
                raise ModelError(
                    f"{self.name(CA_FLAG)} {self.client_ca}: not a usable CA ({reason})"
                ) from None
            ctx.verify_mode = ssl.CERT_REQUIRED
        return ctx
