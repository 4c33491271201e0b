"""A real Prometheus scrapes both metrics endpoints, each served with one web
configuration file (TLS 1.3 at least, client certificates required and
verified, a basic-auth user): the scrape config is made from that file's
settings (`tls_config`: the CA of its server certificate, a client certificate
its `client_ca_file` signed, its `min_version`; `basic_auth`: its user),
`promtool check config` accepts it, and Prometheus reports both targets `up`
through its HTTP API. Prometheus runs on loopback with a temporary storage
folder, for at most PROMETHEUS_WAIT_S, and is stopped at the end.

The exporter is `p4incast-ctl export` (the switch unreachable: it serves
`p4incast_switch_up 0`); the agent's endpoint is served in this process before
anything is attached, as a starting agent's is.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from metrics_clients import REFUSED, bcrypt_hash, client_context, scrape
from pki import Pki, make_pki, missing_reason

from p4incast.agent.metrics import AgentCollector, check_tls
from p4incast.agent.metrics import serve as agent_serve
from p4incast.experiments.ray_local import free_port
from p4incast.model.tls import MetricsTls

PROMETHEUS, PROMTOOL = shutil.which("prometheus"), shutil.which("promtool")
PROMETHEUS_WAIT_S = 60.0
USER, PASSWORD = "prometheus", "scrape-pw"
pytestmark = [
    pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or ""),
    pytest.mark.skipif(
        PROMETHEUS is None or PROMTOOL is None,
        reason="prometheus/promtool not found (make setup installs them: Debian's prometheus)",
    ),
]


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def web_config(pki: Pki) -> dict[str, object]:
    """The endpoints' web configuration (file names relative to the PKI folder)."""
    doc: dict[str, object] = {
        "tls_server_config": {
            "cert_file": "server.crt",
            "key_file": "server.key",
            "client_auth_type": "RequireAndVerifyClientCert",
            "client_ca_file": "ca.crt",
            "min_version": "TLS13",
        },
        "basic_auth_users": {USER: bcrypt_hash(PASSWORD)},
    }
    (pki.dir / "web.yml").write_text(yaml.safe_dump(doc))
    return doc


def scrape_config(web: dict[str, object], pki: Pki, targets: dict[str, str]) -> dict[str, object]:
    """Prometheus's scrape config for endpoints served with `web`: the CA that
    signed its server certificate, a client certificate of the CA its
    client_ca_file names, its lowest TLS version, one of its users."""
    server = web["tls_server_config"]
    assert isinstance(server, dict)
    assert server["client_ca_file"] == "ca.crt"  # which signed client.crt (pki.py)
    (pki.dir / "password").write_text(PASSWORD)
    tls_config = {
        "ca_file": str(pki.ca_crt),  # signed server.crt
        "cert_file": str(pki.client_crt),
        "key_file": str(pki.client_key),
        "min_version": server["min_version"],
    }
    return {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
        "scrape_configs": [
            {
                "job_name": job,
                "scheme": "https",
                "tls_config": tls_config,
                "basic_auth": {"username": USER, "password_file": str(pki.dir / "password")},
                "static_configs": [{"targets": [target]}],
            }
            for job, target in targets.items()
        ],
    }


@pytest.fixture
def exporter(pki: Pki, web_config: dict[str, object]) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "p4incast.controller", "--address", "127.0.0.1:1", "export",
         "--listen", f"127.0.0.1:{port}", "--interval", "0.5",
         "--web.config.file", str(pki.dir / "web.yml")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    ctx = client_context(pki.ca_crt, pki.client_crt, pki.client_key)
    try:
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None, proc.communicate()
            try:
                if scrape(f"https://127.0.0.1:{port}/metrics", ctx, (USER, PASSWORD)).status == 200:
                    break
            except REFUSED:
                pass
            assert time.monotonic() < deadline, "the exporter never answered"
            time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def targets_health(api: str) -> dict[str, str]:
    with urllib.request.urlopen(f"{api}/api/v1/targets", timeout=2) as reply:
        data = json.load(reply)
    return {
        t["labels"]["job"]: f"{t['health']} {t['lastError']}".strip()
        for t in data["data"]["activeTargets"]
    }


def test_prometheus_scrapes_both_endpoints_with_the_web_config(
    pki: Pki, web_config: dict[str, object], exporter: str, tmp_path: Path
) -> None:
    assert PROMETHEUS is not None and PROMTOOL is not None
    tls = check_tls(MetricsTls(web_config=str(pki.dir / "web.yml")))
    agent_port = free_port()
    agent = agent_serve(AgentCollector("lo", "observe"), f"127.0.0.1:{agent_port}", tls)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        yaml.safe_dump(
            scrape_config(
                web_config,
                pki,
                {"p4incast-switch": exporter, "p4incast-agent": f"127.0.0.1:{agent_port}"},
            )
        )
    )
    check = subprocess.run(
        [PROMTOOL, "check", "config", str(config)], capture_output=True, text=True, timeout=30
    )
    assert check.returncode == 0 and "SUCCESS" in check.stdout + check.stderr, check
    web_port = free_port()
    prom = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{web_port}", "--log.level=warn"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    health: dict[str, str] = {}
    try:
        deadline = time.monotonic() + PROMETHEUS_WAIT_S
        while time.monotonic() < deadline:
            assert prom.poll() is None, prom.communicate()
            try:
                health = targets_health(f"http://127.0.0.1:{web_port}")
            except OSError:
                health = {}
            if health == {"p4incast-switch": "up", "p4incast-agent": "up"}:
                break
            time.sleep(0.5)
        assert health == {"p4incast-switch": "up", "p4incast-agent": "up"}, health
    finally:
        prom.terminate()
        try:
            prom.wait(timeout=20)
        except subprocess.TimeoutExpired:
            prom.kill()
            prom.wait()
        agent.shutdown()
