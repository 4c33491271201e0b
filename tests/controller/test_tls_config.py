"""TLS settings refused before any connection: switch.tls and --tls-* with files
missing, partial or not PEM, and the metrics endpoint's --metrics-tls-* flags;
each one line on stderr and exit code 2 (no switch needed: the address points
nowhere, so anything past validation would fail differently)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from ctlrun import ctl
from pki import Pki, make_pki, missing_reason

from p4incast.controller import config
from p4incast.controller.errors import ControllerError
from p4incast.controller.tls import TlsSettings

pytestmark = pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or "")
NOWHERE = "127.0.0.1:1"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def one_line_exit_2(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc
    assert len(proc.stderr.strip().splitlines()) == 1 and not proc.stdout, proc
    assert proc.stderr.startswith("p4incast-ctl: error: "), proc.stderr
    return proc.stderr


def parse_tls(tls: dict[str, object], base: Path | None = None) -> config.Config:
    return config.parse({"switch": {"address": NOWHERE, "tls": tls}}, "t.yaml", base=base)


def test_tls_combinations_accepted(pki: Pki) -> None:
    assert config.parse({"switch": {}}).switch.tls is None  # plaintext by default
    server_auth = parse_tls({"ca": str(pki.ca_crt)}).switch.tls
    assert server_auth == TlsSettings(ca=pki.ca_crt)
    assert server_auth is not None and not server_auth.mutual
    mutual = parse_tls(
        {
            "ca": str(pki.ca_crt),
            "cert": str(pki.client_crt),
            "key": str(pki.client_key),
            "server_name": "localhost",
        }
    ).switch.tls
    assert mutual is not None and mutual.mutual and mutual.server_name == "localhost"


def test_relative_tls_files_are_relative_to_the_config(pki: Pki) -> None:
    path = pki.dir / "switch.yaml"
    path.write_text(yaml.safe_dump({"switch": {"tls": {"ca": "ca.crt"}}}))
    cfg = config.load(path)
    assert cfg.switch.tls == TlsSettings(ca=pki.dir / "ca.crt")


@pytest.mark.parametrize(
    ("tls", "message"),
    [
        ({"cert": "client.crt", "key": "client.key"}, "switch.tls.cert (--tls-cert) needs "
         "switch.tls.ca (--tls-ca)"),
        ({"server_name": "localhost"}, "switch.tls.server_name (--tls-server-name) needs "
         "switch.tls.ca"),
        ({"ca": "ca.crt", "cert": "client.crt"}, "switch.tls.cert (--tls-cert) needs "
         "switch.tls.key (--tls-key)"),
        ({"ca": "ca.crt", "key": "client.key"}, "switch.tls.key (--tls-key) needs "
         "switch.tls.cert (--tls-cert)"),
        ({"ca": "missing.crt"}, "switch.tls.ca (--tls-ca) {dir}/missing.crt: no such file"),
        ({"ca": "client.key"}, "holds no PEM certificate (found: PRIVATE KEY)"),
        ({"ca": "ca.crt", "cert": "client.crt", "key": "client.crt"},
         "switch.tls.key (--tls-key) {dir}/client.crt: holds no PEM private key"),
        ({"ca": "junk.pem"}, "switch.tls.ca (--tls-ca) {dir}/junk.pem: not a PEM file"),
        ({"ca": "bad64.pem"}, "its PEM certificate is not valid base64"),
        ({"ca": "ca.crt", "cert": "client.crt", "key": "server.key"},
         "not a certificate and its key (KEY_VALUES_MISMATCH)"),
        ({"ca": "ca.crt", "port": 1}, "switch.tls: unknown key 'port'"),
        ({"ca": 7}, "switch.tls.ca (--tls-ca): expected text, got 7"),
        ({"ca": "ca.crt", "server_name": " "}, "switch.tls.server_name (--tls-server-name) "
         "is empty"),
        # a `tls:` key that names no CA is not plaintext by accident: refused
        (None, "switch.tls names no CA: give switch.tls.ca (--tls-ca), the CA that signed "
         "the switch's certificate, or leave switch.tls out (plaintext: loopback, or "
         "switch.plaintext: true (--plaintext))"),
        ({}, "switch.tls names no CA"),
        ({"ca": None}, "switch.tls names no CA"),
    ],
)  # fmt: skip
def test_bad_tls_settings_refused_in_one_line(
    pki: Pki, tls: dict[str, object] | None, message: str
) -> None:
    (pki.dir / "junk.pem").write_text("ca.crt, see the wiki\n")
    (pki.dir / "bad64.pem").write_text(
        "-----BEGIN CERTIFICATE-----\nnot*base64\n-----END CERTIFICATE-----\n"
    )
    path = pki.dir / "bad.yaml"
    path.write_text(yaml.safe_dump({"switch": {"address": NOWHERE, "tls": tls}}))
    with pytest.raises(ControllerError) as err:
        config.load(path)
    assert message.format(dir=pki.dir) in str(err.value)
    assert str(err.value).startswith(f"{path}: ")
    # the same refusal from the command line, before any connection
    err_line = one_line_exit_2(ctl("apply", str(path)))
    assert message.format(dir=pki.dir) in err_line


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--tls-cert", "{dir}/client.crt"), "command line: switch.tls.cert (--tls-cert) "
         "needs switch.tls.ca (--tls-ca)"),
        (("--tls-ca", "{dir}/ca.crt", "--tls-key", "{dir}/client.key"),
         "switch.tls.key (--tls-key) needs switch.tls.cert (--tls-cert)"),
        (("--tls-ca", "{dir}/nope.crt"), "switch.tls.ca (--tls-ca) {dir}/nope.crt: no such file"),
        (("--tls-ca", "{dir}/ca.key"), "holds no PEM certificate"),
    ],
)  # fmt: skip
def test_bad_tls_flags_refused_for_every_command(
    pki: Pki, flags: tuple[str, ...], message: str
) -> None:
    args = [f.format(dir=pki.dir) for f in flags]
    for cmd in (["push"], ["stats"], ["set-ecn", "--port", "1", "--mode", "off"], ["export"]):
        line = one_line_exit_2(ctl("--address", NOWHERE, *args, *cmd))
        assert message.format(dir=pki.dir) in line, (cmd, line)


def test_tls_flags_complete_the_config_file(pki: Pki) -> None:
    """--tls-cert/--tls-key on top of a config that names the CA: a valid whole,
    validated before connecting (here: nothing listens, gRPC's own error)."""
    path = pki.dir / "ca-only.yaml"
    path.write_text(yaml.safe_dump({"switch": {"address": NOWHERE, "tls": {"ca": "ca.crt"}}}))
    line = one_line_exit_2(
        ctl(
            "--config", str(path), "--tls-cert", str(pki.client_crt),
            "--tls-key", str(pki.client_key), "stats",
        )
    )  # fmt: skip
    assert "cannot reach the switch's P4Runtime server" in line
    line = one_line_exit_2(ctl("--config", str(path), "--tls-cert", str(pki.client_crt), "stats"))
    assert "switch.tls.cert (--tls-cert) needs switch.tls.key (--tls-key)" in line


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--metrics-tls-cert", "{dir}/server.crt"), "--metrics-tls-cert needs --metrics-tls-key"),
        (("--metrics-tls-key", "{dir}/server.key"), "--metrics-tls-key needs --metrics-tls-cert"),
        (("--metrics-client-ca", "{dir}/ca.crt"), "--metrics-client-ca requires client "
         "certificates over HTTPS: give --metrics-tls-cert and --metrics-tls-key too"),
        (("--metrics-tls-cert", "{dir}/gone.crt", "--metrics-tls-key", "{dir}/server.key"),
         "--metrics-tls-cert {dir}/gone.crt: cannot read it: No such file or directory"),
        (("--metrics-tls-cert", "{dir}/server.key", "--metrics-tls-key", "{dir}/server.key"),
         "--metrics-tls-cert {dir}/server.key: holds no PEM certificate"),
        (("--metrics-tls-cert", "{dir}/server.crt", "--metrics-tls-key", "{dir}/client.key"),
         "not a certificate and its key (KEY_VALUES_MISMATCH)"),
        (("--metrics-tls-cert", "{dir}/server.crt", "--metrics-tls-key", "{dir}/server.key",
          "--metrics-client-ca", "{dir}/client.key"),
         "--metrics-client-ca {dir}/client.key: holds no PEM certificate"),
    ],
)  # fmt: skip
def test_bad_metrics_tls_flags_refused(pki: Pki, flags: tuple[str, ...], message: str) -> None:
    args = [f.format(dir=pki.dir) for f in flags]
    line = one_line_exit_2(
        ctl("--address", NOWHERE, "export", "--listen", "127.0.0.1:19464", *args)
    )
    assert message.format(dir=pki.dir) in line, line


def test_plaintext_and_tls_together_refused(pki: Pki) -> None:
    """switch.plaintext is a yes/no, and never beside switch.tls: in the YAML, and
    from the flags (--plaintext on a config that names a CA, or the reverse)."""
    both = "switch.plaintext (--plaintext) and switch.tls (--tls-*) together: P4Runtime is "
    with pytest.raises(ControllerError, match=r"t\.yaml: switch\.plaintext \(--plaintext\) and"):
        config.parse(
            {"switch": {"address": NOWHERE, "plaintext": True, "tls": {"ca": str(pki.ca_crt)}}},
            "t.yaml",
        )
    with pytest.raises(
        ControllerError, match="switch.plaintext: expected true or false, got 'yes'"
    ):
        config.parse({"switch": {"plaintext": "yes"}}, "t.yaml")
    path = pki.dir / "tls.yaml"
    path.write_text(yaml.safe_dump({"switch": {"address": NOWHERE, "tls": {"ca": "ca.crt"}}}))
    line = one_line_exit_2(ctl("--config", str(path), "--plaintext", "stats"))
    assert f"command line: {both}" in line, line
    line = one_line_exit_2(
        ctl("--address", NOWHERE, "--plaintext", "--tls-ca", str(pki.ca_crt), "stats")
    )
    assert both in line, line
