"""The agent's metrics endpoint over HTTPS: `serve` with the --metrics-tls-*
files answers a scrape that trusts the CA (and presents a client certificate
when one is required), and refuses a plaintext scrape and a client without a
certificate; with a web configuration file (--web.config.file) it answers
within a second while idle connections and unfinished handshakes are held
open, and checks basic auth. Bad flag combinations and files are one line and
exit 2 before anything is attached. No root: the collector is served before it
is attached (its info metric), which is what a scrape of a starting agent sees.
"""

from __future__ import annotations

import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "controller"))  # pki.py
from metrics_clients import bcrypt_hash, client_context, closed_by_server, hostile
from metrics_clients import scrape as timed_scrape
from pki import Pki, make_pki, missing_reason

from p4incast.agent.metrics import AgentCollector, check_tls, serve
from p4incast.experiments.ray_local import free_port
from p4incast.metrics_server import HANDSHAKE_TIMEOUT_S
from p4incast.model.tls import MetricsTls
from p4incast.policies.config import ConfigError

pytestmark = pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or "")
REFUSED = (urllib.error.URLError, ConnectionError, ssl.SSLError)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


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


def test_web_config_held_connections_and_basic_auth(pki: Pki) -> None:
    """Issue 44 item 1 on the agent's endpoint: six idle connections and six
    unfinished handshakes held open, scrapes (client certificate and basic auth,
    as the web configuration file says) still answer within 1 s; the held ones
    are closed by the handshake deadline; a wrong password is 401."""
    web = pki.dir / "agent-web.yml"
    web.write_text(
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
        "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n"
        f"basic_auth_users:\n  prometheus: '{bcrypt_hash('pw')}'\n"
    )
    tls = check_tls(MetricsTls(web_config=str(web)))
    port = free_port()
    server = serve(AgentCollector("lo", "observe"), f"127.0.0.1:{port}", tls)
    url = f"https://127.0.0.1:{port}/metrics"
    ctx = client_context(pki.ca_crt, pki.client_crt, pki.client_key)
    try:
        assert timed_scrape(url, ctx, ("prometheus", "pw")).status == 200
        with hostile(port, idle_n=6, half_n=6) as held:
            time.sleep(0.3)
            for _ in range(5):
                got = timed_scrape(url, ctx, ("prometheus", "pw"))
                assert got.status == 200 and "p4incast_agent_info" in got.text
                assert got.seconds < 1.0, got.seconds
            assert timed_scrape(url, ctx, ("prometheus", "wrong")).status == 401
            assert all(closed_by_server(s, HANDSHAKE_TIMEOUT_S + 2) is not None for s in held)
        with pytest.raises(REFUSED):
            scrape(url, context(pki, cert=False))
    finally:
        server.shutdown()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tls_server_config: {cert_file: server.crt, key_file: server.key, "
         "client_auth_type: RequireAndVerifyClientCert}",
         "tls_server_config.client_auth_type RequireAndVerifyClientCert needs client_ca_file"),
        ("tls_server_config: {cert_file: server.crt, key_file: server.key, min_version: TLS10}",
         "tls_server_config.min_version 'TLS10' is not supported: TLS12 or TLS13"),
        ("http_server_config: {http2: false}", "http_server_config is not supported here"),
    ],
)  # fmt: skip
def test_bad_web_config_one_line_nothing_attached(pki: Pki, text: str, message: str) -> None:
    web = pki.dir / "agent-bad-web.yml"
    web.write_text(text)
    proc = agent("--metrics", "127.0.0.1:19465", "--web.config.file", str(web))
    assert proc.returncode == 2 and not proc.stdout, proc
    assert proc.stderr.startswith(f"p4incast-agent: --web.config.file {web}: {message}"), proc
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
