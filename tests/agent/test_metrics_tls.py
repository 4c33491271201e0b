"""The agent's metrics endpoint over HTTPS: `serve` with the --metrics-tls-*
files answers a scrape that trusts the CA (and presents a client certificate
when one is required), and refuses a plaintext scrape and a client without a
certificate. Bad flag combinations and files are one line and exit 2 before
anything is attached. No root: the collector is served before it is attached
(its info metric), which is what a scrape of a starting agent sees.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "controller"))  # pki.py
from pki import Pki, make_pki, missing_reason

from p4incast.agent.metrics import AgentCollector, check_tls, serve
from p4incast.model.tls import MetricsTls
from p4incast.policies.config import ConfigError

pytestmark = pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or "")
REFUSED = (urllib.error.URLError, ConnectionError, ssl.SSLError)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url: str, ctx: ssl.SSLContext | None) -> str:
    with urllib.request.urlopen(url, timeout=5, context=ctx) as reply:
        return reply.read().decode()


def context(pki: Pki, cert: bool) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki.ca_crt))
    if cert:
        ctx.load_cert_chain(str(pki.client_crt), str(pki.client_key))
    return ctx


@pytest.fixture
def endpoint(pki: Pki, request: pytest.FixtureRequest) -> Iterator[str]:
    """An agent endpoint over HTTPS; with param True it requires client certificates."""
    tls = MetricsTls(
        cert=str(pki.server_crt),
        key=str(pki.server_key),
        client_ca=str(pki.ca_crt) if request.param else None,
    )
    check_tls(tls)
    port = free_port()
    server = serve(AgentCollector("lo", "observe"), f"127.0.0.1:{port}", tls)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.shutdown()


@pytest.mark.parametrize("endpoint", [False], indirect=True)
def test_https_scrape_with_the_ca(endpoint: str, pki: Pki) -> None:
    text = scrape(f"https://{endpoint}/metrics", context(pki, cert=False))
    assert 'p4incast_agent_info{attach="none",iface="lo",policy="observe"} 1.0' in text
    with pytest.raises(REFUSED):
        scrape(f"http://{endpoint}/metrics", None)  # plaintext
    with pytest.raises(REFUSED):  # a scraper that does not trust the CA
        scrape(f"https://{endpoint}/metrics", ssl.create_default_context(cafile=str(pki.ca2_crt)))


@pytest.mark.parametrize("endpoint", [True], indirect=True)
def test_client_certificate_required(endpoint: str, pki: Pki) -> None:
    text = scrape(f"https://{endpoint}/metrics", context(pki, cert=True))
    assert "p4incast_agent_info" in text
    with pytest.raises(REFUSED):
        scrape(f"https://{endpoint}/metrics", context(pki, cert=False))
    with pytest.raises(REFUSED):
        scrape(f"http://{endpoint}/metrics", None)


def test_check_tls_refuses_what_would_not_serve(pki: Pki) -> None:
    check_tls(MetricsTls())  # plain HTTP
    for tls, message in (
        (MetricsTls(cert=str(pki.server_crt)), "--metrics-tls-cert needs --metrics-tls-key"),
        (MetricsTls(cert=str(pki.server_crt), key=str(pki.client_key)), "KEY_VALUES_MISMATCH"),
        (MetricsTls(cert=str(pki.server_key), key=str(pki.server_key)), "no PEM certificate"),
    ):
        with pytest.raises(ConfigError, match=message):
            check_tls(tls)


def agent(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "p4incast.agent", "run", "--iface", "lo", "--policy", "observe",
         *args],
        capture_output=True,
        text=True,
        timeout=30,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--metrics-tls-cert", "{dir}/server.crt"),
         "--metrics-tls-cert, --metrics-tls-key, --metrics-client-ca, --web.config.file need "
         "--metrics"),
        (("--metrics", "127.0.0.1:19465", "--metrics-tls-key", "{dir}/server.key"),
         "--metrics-tls-key needs --metrics-tls-cert: HTTPS takes a certificate and its key"),
        (("--metrics", "127.0.0.1:19465", "--metrics-client-ca", "{dir}/ca.crt"),
         "--metrics-client-ca requires client certificates over HTTPS: give "
         "--metrics-tls-cert and --metrics-tls-key too"),
        (("--metrics", "127.0.0.1:19465", "--metrics-tls-cert", "{dir}/none.crt",
          "--metrics-tls-key", "{dir}/server.key"),
         "--metrics-tls-cert {dir}/none.crt: cannot read it: No such file or directory"),
    ],
)  # fmt: skip
def test_bad_tls_flags_one_line_nothing_attached(
    pki: Pki, args: tuple[str, ...], message: str
) -> None:
    proc = agent(*(a.format(dir=pki.dir) for a in args))
    assert proc.returncode == 2 and not proc.stdout, proc
    assert proc.stderr == f"p4incast-agent: {message.format(dir=pki.dir)}\n", proc.stderr
