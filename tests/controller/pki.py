"""Certificates for the TLS tests, made at run time with the `openssl` CLI
(Debian's `openssl`; nothing generated is kept in the repository).

`make_pki(dir)` writes, as PEM (EC P-256 keys, valid for one day):

    ca.crt ca.key          the test CA
    server.crt server.key  signed by ca; SAN IP:127.0.0.1, DNS:localhost; serverAuth
    client.crt client.key  signed by ca; clientAuth (the controller's, the scraper's)
    ca2.crt ca2.key        a second, unrelated CA
    other.crt other.key    signed by ca2; SAN IP:127.0.0.1, DNS:localhost; both uses
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


def missing_reason() -> str | None:
    """Why certificates cannot be made here, or None."""
    return None if shutil.which("openssl") else "needs the openssl CLI (apt-get install openssl)"


@dataclass(frozen=True)
class Pki:
    dir: Path

    def __getattr__(self, name: str) -> Path:
        """pki.ca_crt -> dir/ca.crt, pki.client_key -> dir/client.key, ..."""
        stem, _, ext = name.rpartition("_")
        if not stem or ext not in ("crt", "key"):
            raise AttributeError(name)
        return self.dir / f"{stem}.{ext}"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _key_and_csr(name: str, cwd: Path) -> None:
    _openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}",
        cwd=cwd,
    )  # fmt: skip


def _ca(name: str, cwd: Path) -> None:
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "1", "-subj", f"/CN={name}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=cwd,
    )  # fmt: skip


def _leaf(name: str, ca: str, ext: str, cwd: Path) -> None:
    _key_and_csr(name, cwd)
    (cwd / f"{name}.ext").write_text(f"basicConstraints=CA:FALSE\n{ext}\n")
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
        "-CAcreateserial", "-out", f"{name}.crt", "-days", "1", "-extfile", f"{name}.ext",
        cwd=cwd,
    )  # fmt: skip


def make_pki(where: Path) -> Pki:
    where.mkdir(parents=True, exist_ok=True)
    server_ext = "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth"
    _ca("ca", where)
    _ca("ca2", where)
    _leaf("server", "ca", server_ext, where)
    _leaf("client", "ca", "subjectAltName=DNS:p4incast-ctl\nextendedKeyUsage=clientAuth", where)
    _leaf("other", "ca2", server_ext + ",clientAuth", where)
    return Pki(where)
