"""The metrics endpoints' TLS rule and what a PEM certificate or key is
(p4incast.model.tls), on text alone: the model reads no file."""

from __future__ import annotations

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
