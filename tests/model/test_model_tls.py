"""The metrics endpoints' TLS rule and what a PEM certificate or key is
(p4incast.model.tls), on text alone: the model reads no file."""

from __future__ import annotations

import re

import pytest

from p4incast.model.errors import ModelError
from p4incast.model.tls import METRICS_TLS_FLAGS, MetricsTls, Pem, pem_problem

CERT = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49\n-----END PRIVATE KEY-----\n"
EC_KEY = KEY.replace("PRIVATE KEY", "EC PRIVATE KEY")


def test_pem_kinds() -> None:
    assert pem_problem(CERT, Pem.CERT) is None
    assert pem_problem(CERT + CERT, Pem.CERT) is None  # a chain
    assert pem_problem(KEY, Pem.KEY) is None and pem_problem(EC_KEY, Pem.KEY) is None
    assert pem_problem(KEY, Pem.CERT) == "holds no PEM certificate (found: PRIVATE KEY)"
    assert pem_problem("hello", Pem.KEY) == "not a PEM file (no -----BEGIN PRIVATE KEY----- block)"
    encrypted = KEY.replace("PRIVATE KEY", "ENCRYPTED PRIVATE KEY")
    assert (
        pem_problem(encrypted, Pem.KEY) == "holds no PEM private key (found: ENCRYPTED PRIVATE KEY)"
    )
    assert pem_problem(CERT.replace("MIIB", "MI*B"), Pem.CERT) == (
        "its PEM certificate is not valid base64"
    )


FILES = {"c.pem": CERT, "k.pem": KEY, "ca.pem": CERT}


@pytest.mark.parametrize(
    ("tls", "message"),
    [
        (MetricsTls(cert="c.pem"), "--metrics-tls-cert needs --metrics-tls-key"),
        (MetricsTls(key="k.pem"), "--metrics-tls-key needs --metrics-tls-cert"),
        (MetricsTls(client_ca="ca.pem"), "--metrics-client-ca requires client certificates"),
        (MetricsTls(cert="k.pem", key="k.pem"), "--metrics-tls-cert k.pem: holds no PEM cert"),
        (MetricsTls(cert="c.pem", key="c.pem"), "--metrics-tls-key c.pem: holds no PEM private"),
    ],
)
def test_metrics_tls_refused(tls: MetricsTls, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        tls.check(lambda _flag, path: FILES[path])


def test_metrics_tls_accepted_and_flags() -> None:
    read = lambda _flag, path: FILES[path]  # noqa: E731
    MetricsTls().check(read)
    MetricsTls(cert="c.pem", key="k.pem").check(read)
    MetricsTls(cert="c.pem", key="k.pem", client_ca="ca.pem").check(read)
    assert MetricsTls().scheme == "http" and MetricsTls("c.pem", "k.pem").scheme == "https"
    assert [f.flag for f in METRICS_TLS_FLAGS] == [
        "--metrics-tls-cert",
        "--metrics-tls-key",
        "--metrics-client-ca",
        "--web.config.file",
    ]


HASH = "$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"  # htpasswd -nBC 10
WEB = {
    "/etc/p4/web.yml": "",
    "/etc/p4/c.pem": CERT,
    "/etc/p4/k.pem": KEY,
    "/etc/p4/ca.pem": CERT,
    "/abs/c.pem": CERT,
}


def web(text: str) -> MetricsTls:
    """The settings a web configuration file holding `text` gives (exporter-toolkit
    format, docs/web-configuration.md of prometheus/exporter-toolkit)."""
    files = {**WEB, "/etc/p4/web.yml": text}
    return MetricsTls(web_config="/etc/p4/web.yml").check(lambda _name, path: files[path])


def test_web_config_is_the_flags_long_form() -> None:
    assert web("") == MetricsTls(source="/etc/p4/web.yml")  # plain HTTP, as toolkit
    # relative file names are relative to the file's folder, as exporter-toolkit's are
    tls = web("tls_server_config: {cert_file: c.pem, key_file: k.pem}")
    assert (tls.cert, tls.key, tls.client_ca, tls.min_version) == (
        "/etc/p4/c.pem",
        "/etc/p4/k.pem",
        None,
        "TLS12",
    )
    assert tls.scheme == "https" and tls.basic_auth == ()
    assert tls.check(lambda _name, path: WEB[path]) == tls  # read once: checked again as is
    tls = web(
        "tls_server_config:\n  cert_file: /abs/c.pem\n  key_file: k.pem\n"
        "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n"
        "  min_version: TLS13\n"
        f"basic_auth_users:\n  alice: {HASH}\n"
    )
    assert (tls.cert, tls.client_ca, tls.min_version) == ("/abs/c.pem", "/etc/p4/ca.pem", "TLS13")
    assert tls.basic_auth == (("alice", HASH),)


TLS_OK = "tls_server_config: {cert_file: c.pem, key_file: k.pem"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tls_server_config: [", "not YAML at line 1"),
        ("- a\n", "the file must be a mapping"),
        ("tls_config: {}", "unknown key 'tls_config' (expected tls_server_config, basic_"),
        ("rate_limit: {interval: 1s}", "rate_limit is not supported here"),
        ("tls_server_config: {cert_file: c.pem}", "needs cert_file and key_file (key_file is"),
        (TLS_OK + ", cert: x}", "tls_server_config.cert (inline PEM) is not supported: give"),
        (TLS_OK + ", cipher_suites: []}", "tls_server_config.cipher_suites is not supported here"),
        (TLS_OK + ", certfile: c.pem}", "unknown key tls_server_config.certfile"),
        (TLS_OK + ", key_file: ''}", "tls_server_config.key_file must be non-empty text"),
        (TLS_OK + ", client_auth_type: RequireAnyClientCert}",
         "client_auth_type 'RequireAnyClientCert' is not supported: NoClientCert or "
         "RequireAndVerifyClientCert"),
        (TLS_OK + ", client_auth_type: RequireAndVerifyClientCert}",
         "client_auth_type RequireAndVerifyClientCert needs client_ca_file"),
        (TLS_OK + ", client_ca_file: ca.pem}",
         "client_ca_file needs client_auth_type RequireAndVerifyClientCert"),
        (TLS_OK + ", min_version: TLS11}", "min_version 'TLS11' is not supported: TLS12 or TLS13"),
        (f"basic_auth_users: {{alice: {HASH}}}",
         "basic_auth_users without tls_server_config would send passwords in clear text"),
        (TLS_OK + "}\nbasic_auth_users: {alice: x}", "basic_auth_users.alice is not a bcrypt hash"),
        (TLS_OK + f"}}\nbasic_auth_users: {{'a:b': {HASH}}}", "user name 'a:b' is empty or"),
        ("tls_server_config: {cert_file: k.pem, key_file: k.pem}",
         "--web.config.file /etc/p4/web.yml: tls_server_config.cert_file /etc/p4/k.pem: holds no "
         "PEM certificate"),
    ],
)  # fmt: skip
def test_web_config_refused(text: str, message: str) -> None:
    files = {**WEB, "/etc/p4/web.yml": text}
    with pytest.raises(ModelError, match=re.escape(message)) as err:
        MetricsTls(web_config="/etc/p4/web.yml").check(lambda _name, path: files[path])
    assert str(err.value).startswith("--web.config.file /etc/p4/web.yml: ")
    assert "\n" not in str(err.value)


def test_web_config_not_with_the_file_flags() -> None:
    with pytest.raises(ModelError, match="--web.config.file and --metrics-tls-cert: give the TLS"):
        MetricsTls(cert="c.pem", key="k.pem", web_config="w.yml").check(lambda _n, _p: "")
