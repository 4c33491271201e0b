"""The exporter's metrics endpoint (`p4incast-ctl export`, a real process; the
switch unreachable, so it serves `p4incast_switch_up 0`) with a Prometheus web
configuration file (--web.config.file): scrapes answer within a second while
idle TCP connections and unfinished TLS handshakes are held open, and those
are closed after the handshake deadline; basic auth and client certificates
accepted and refused; TLS 1.3 as the lowest version; a full worker pool closes
new connections and recovers; bad files refused in one line, exit 2.
Real sockets, real TLS, loopback only (docs/operations.md, "Metrics over HTTPS").
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from metrics_clients import (
    REFUSED,
    bcrypt_hash,
    client_context,
    closed_by_server,
    hostile,
    idle,
    scrape,
)
from pki import Pki, make_pki, missing_reason
from prometheus_client import CollectorRegistry

from p4incast.controller import units
from p4incast.controller.export import SwitchCollector, registry_for
from p4incast.experiments.ray_local import free_port
from p4incast.metrics_server import HANDSHAKE_TIMEOUT_S, MetricsServer
from p4incast.model.tls import MetricsTls

pytestmark = pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or "")
NOWHERE = "127.0.0.1:1"
USER, PASSWORD = "prometheus", "s3cret scrape"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def write_web_config(path: Path, pki: Pki, *, client_certs: bool, users: bool, **tls: str) -> Path:
    """A web configuration file in the folder of the PKI, with relative file names."""
    server: dict[str, str] = {"cert_file": "server.crt", "key_file": "server.key", **tls}
    if client_certs:
        server |= {"client_auth_type": "RequireAndVerifyClientCert", "client_ca_file": "ca.crt"}
    doc: dict[str, object] = {"tls_server_config": server}
    if users:
        doc["basic_auth_users"] = {USER: bcrypt_hash(PASSWORD)}
    path.write_text(yaml.safe_dump(doc))
    return path


def ctl(*args: str) -> list[str]:
    return [sys.executable, "-m", "p4incast.controller", "--address", NOWHERE, *args]


@pytest.fixture
def exporter(pki: Pki, request: pytest.FixtureRequest) -> Iterator[str]:
    """`p4incast-ctl export --web.config.file` with the file the test's param names
    ("mtls": client certificates; "auth": basic auth too; "tls13"); its base URL."""
    kind = request.param
    extra = {"min_version": "TLS13"} if kind == "tls13" else {}
    web = write_web_config(
        pki.dir / f"web-{kind}.yml",
        pki,
        client_certs=kind in ("mtls", "auth"),
        users=kind == "auth",
        **extra,
    )
    port = free_port()
    proc = subprocess.Popen(
        ctl("export", "--listen", f"127.0.0.1:{port}", "--interval", "0.5",
            "--web.config.file", str(web)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    url = f"https://127.0.0.1:{port}/metrics"
    ctx = client_context(pki.ca_crt, pki.client_crt, pki.client_key)
    auth = (USER, PASSWORD) if kind == "auth" else None
    try:
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None, proc.communicate()
            try:
                if scrape(url, ctx, auth).status == 200:
                    break
            except REFUSED:
                pass
            assert time.monotonic() < deadline, "the exporter never answered"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("exporter", ["mtls"], indirect=True)
def test_held_connections_never_stall_a_scrape(exporter: str, pki: Pki) -> None:
    """Issue 44 item 1: one `nc HOST 9464` froze every scrape. Six idle connections
    and six unfinished handshakes held open: five scrapes each answer within 1 s,
    and the server closes every held connection by the handshake deadline."""
    port = int(exporter.split(":")[2].split("/")[0])
    ctx = client_context(pki.ca_crt, pki.client_crt, pki.client_key)
    with hostile(port, idle_n=6, half_n=6) as held:
        time.sleep(0.3)  # every held connection accepted and waiting in a worker
        for _ in range(5):
            got = scrape(exporter, ctx, timeout=5)
            assert got.status == 200 and "p4incast_switch_up" in got.text
            assert got.seconds < 1.0, got.seconds
        closed = [closed_by_server(s, HANDSHAKE_TIMEOUT_S + 2) for s in held]
        assert all(t is not None for t in closed), closed


@pytest.mark.parametrize("exporter", ["mtls"], indirect=True)
def test_client_certificate_required_and_verified(exporter: str, pki: Pki) -> None:
    assert (
        scrape(exporter, client_context(pki.ca_crt, pki.client_crt, pki.client_key)).status == 200
    )
    for ctx in (
        client_context(pki.ca_crt),  # no certificate
        client_context(pki.ca_crt, pki.other_crt, pki.other_key),  # signed by another CA
    ):
        with pytest.raises(REFUSED):
            scrape(exporter, ctx)
    with pytest.raises(REFUSED):
        scrape(exporter.replace("https", "http"))  # plaintext


@pytest.mark.parametrize("exporter", ["auth"], indirect=True)
def test_basic_auth_accepted_and_refused(exporter: str, pki: Pki) -> None:
    ctx = client_context(pki.ca_crt, pki.client_crt, pki.client_key)
    assert scrape(exporter, ctx, (USER, PASSWORD)).status == 200
    for auth in (None, (USER, "wrong"), ("mallory", PASSWORD), (USER, PASSWORD + "x" * 80)):
        got = scrape(exporter, ctx, auth)
        assert got.status == 401 and "p4incast_switch" not in got.text, (auth, got)
    assert scrape(exporter, ctx, (USER, PASSWORD)).status == 200  # the cached path


@pytest.mark.parametrize("exporter", ["tls13"], indirect=True)
def test_min_version_tls13(exporter: str, pki: Pki) -> None:
    ctx = client_context(pki.ca_crt)
    assert scrape(exporter, ctx).status == 200
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    with pytest.raises(REFUSED):
        scrape(exporter, ctx)


def test_full_pool_closes_new_connections_and_recovers(pki: Pki) -> None:
    """Every worker held by an idle client: a new connection is closed at once (not
    queued), and scrapes answer again once the held ones pass their deadline. A
    client that finishes its handshake and then dribbles its request is closed at
    the request deadline."""
    tls = MetricsTls(cert=str(pki.server_crt), key=str(pki.server_key)).verify()
    reg = registry_for(SwitchCollector("s1", units.BMV2, "bmv2"))
    server = MetricsServer(
        reg, "127.0.0.1", 0, tls, workers=3, handshake_timeout=1.0, request_timeout=1.0
    ).start()
    url = f"https://127.0.0.1:{server.port}/metrics"
    ctx = client_context(pki.ca_crt)
    try:
        held = [idle(server.port) for _ in range(3)]
        time.sleep(0.3)
        extra = idle(server.port)
        assert (closed_by_server(extra, 0.5) or 9) < 0.5
        with pytest.raises(REFUSED):
            scrape(url, ctx)
        assert server.refused >= 2
        assert all(closed_by_server(s, 2.0) is not None for s in held)
        assert scrape(url, ctx).status == 200
        with socket.create_connection(("127.0.0.1", server.port)) as raw:
            slow = ctx.wrap_socket(raw, server_hostname="localhost")
            slow.sendall(b"GET /metrics HTTP/1.1\r\n")  # and never the rest
            t0 = time.monotonic()
            assert slow.recv(100) == b""
            assert 0.8 < time.monotonic() - t0 < 2.0
        for s in [*held, extra]:
            s.close()
    finally:
        server.shutdown()


def test_only_metrics_path_and_get(pki: Pki) -> None:
    reg = CollectorRegistry()
    server = MetricsServer(reg, "127.0.0.1", 0, MetricsTls()).start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        assert scrape(base + "/metrics").status == 200
        assert scrape(base + "/").status == 404
    finally:
        server.shutdown()


@pytest.mark.parametrize(
    ("text", "flags", "message"),
    [
        ("tls_server_config: {cert_file: server.crt}", (),
         "{web}: tls_server_config needs cert_file and key_file (key_file is missing)"),
        ("tls_server_config: {cert_file: server.crt, key_file: server.key, "
         "client_auth_type: VerifyClientCertIfGiven, client_ca_file: ca.crt}", (),
         "{web}: tls_server_config.client_auth_type 'VerifyClientCertIfGiven' is not supported"),
        ("tls_server_config: {cert_file: server.crt, key_file: client.key}", (),
         "{web}: tls_server_config.cert_file {dir}/server.crt and {web}: "
         "tls_server_config.key_file {dir}/client.key: not a certificate and its key"),
        ("tls_server_config: {cert_file: gone.crt, key_file: server.key}", (),
         "{web}: tls_server_config.cert_file {dir}/gone.crt: cannot read it: No such file"),
        ("basic_auth_users: {prometheus: plaintext}", (),
         "{web}: basic_auth_users.prometheus is not a bcrypt hash"),
        ("", ("--metrics-tls-cert", "{dir}/server.crt", "--metrics-tls-key", "{dir}/server.key"),
         "--web.config.file and --metrics-tls-cert: give the TLS settings one way"),
    ],
)  # fmt: skip
def test_bad_web_config_one_line_exit_2(
    pki: Pki, text: str, flags: tuple[str, ...], message: str
) -> None:
    web = pki.dir / "bad-web.yml"
    web.write_text(text)
    args = [f.format(dir=pki.dir) for f in flags]
    proc = subprocess.run(
        ctl("export", "--listen", "127.0.0.1:19464", "--web.config.file", str(web), *args),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and not proc.stdout, proc
    want = message.format(web=f"--web.config.file {web}", dir=pki.dir)
    assert proc.stderr.startswith(f"p4incast-ctl: error: {want}"), proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr


def test_server_given_an_unread_web_config_reads_it(pki: Pki) -> None:
    """A caller that hands the server `--web.config.file` unchecked still gets what
    the file says (HTTPS, client certificates), never plain HTTP by omission."""
    web = write_web_config(pki.dir / "unread.yml", pki, client_certs=True, users=False)
    server = MetricsServer(CollectorRegistry(), "127.0.0.1", 0, MetricsTls(web_config=str(web)))
    server.start()
    try:
        url = f"https://127.0.0.1:{server.port}/metrics"
        assert scrape(url, client_context(pki.ca_crt, pki.client_crt, pki.client_key)).status == 200
        with pytest.raises(REFUSED):
            scrape(url, client_context(pki.ca_crt))
        with pytest.raises(REFUSED):
            scrape(url.replace("https", "http"))
    finally:
        server.shutdown()
