"""Mutual TLS to a real simple_switch_grpc (`--grpc-server-ssl
--grpc-server-with-client-auth`), certificates made by the test (pki.py).

With the right files, push, apply, set-ecn and a scrape of the exporter (itself
over HTTPS with a client certificate) succeed. Plaintext, no client
certificate, a client certificate of another CA, the wrong CA and the wrong
server name are each refused with the one line that names the cause and the
setting that fixes it, exit code 2, and the switch's tables read back
unchanged. TLS against a plaintext switch is refused the same way.

No veth pairs and no root: the switch runs without interfaces, and nothing
here sends packets.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from ctlrun import bmv2_unavailable, ctl
from pki import Pki, make_pki, missing_reason
from prometheus_client.parser import text_string_to_metric_families

from p4incast import bmv2
from p4incast.controller import app
from p4incast.controller.config import Pipeline, SwitchSettings
from p4incast.controller.connection import connect
from p4incast.controller.tls import TlsSettings
from p4incast.experiments.ray_local import free_port

PIPELINE = Pipeline.default()
GRPC, THRIFT = 50081, 9401  # the switch with mutual TLS
PLAIN_GRPC, PLAIN_THRIFT = 50082, 9402  # a plaintext one


WHY_NOT = bmv2_unavailable(root=False, also=missing_reason())

pytestmark = [pytest.mark.bmv2, pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")]


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def switch(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[bmv2.Bmv2Switch]:
    logs = tmp_path_factory.mktemp("switch")
    sw = bmv2.Bmv2Switch(
        ports={},
        grpc_port=GRPC,
        thrift_port=THRIFT,
        log_file=logs / "switch.log",
        grpc_args=[
            "--grpc-server-ssl",
            "--grpc-server-cacert", str(pki.ca_crt),
            "--grpc-server-cert", str(pki.server_crt),
            "--grpc-server-key", str(pki.server_key),
            "--grpc-server-with-client-auth",
        ],
    )  # fmt: skip
    with sw:
        yield sw


@pytest.fixture(scope="module")
def plain_switch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[bmv2.Bmv2Switch]:
    logs = tmp_path_factory.mktemp("plain")
    with bmv2.Bmv2Switch(
        ports={}, grpc_port=PLAIN_GRPC, thrift_port=PLAIN_THRIFT, log_file=logs / "switch.log"
    ) as sw:
        yield sw


def tls_dict(pki: Pki, **over: str | None) -> dict[str, str]:
    base: dict[str, str | None] = {
        "ca": str(pki.ca_crt),
        "cert": str(pki.client_crt),
        "key": str(pki.client_key),
    }
    base.update(over)
    return {k: v for k, v in base.items() if v is not None}


def write_config(path: Path, tls: dict[str, str] | None, k: int = 5, grpc: int = GRPC) -> Path:
    switch: dict[str, object] = {"address": f"127.0.0.1:{grpc}", "thrift_port": THRIFT}
    if tls is not None:
        switch["tls"] = tls
    path.write_text(
        yaml.safe_dump(
            {
                "switch": switch,
                "pipeline": {"p4info": str(PIPELINE.p4info), "config": str(PIPELINE.config)},
                "ports": {
                    1: {"mac": "00:aa:00:00:00:01"},
                    2: {"mac": "00:aa:00:00:00:02", "ecn": {"mode": "tail", "k": k}},
                },
                "routes": [{"prefix": "10.0.2.0/24", "port": 2, "dmac": "00:bb:00:00:00:02"}],
            }
        )
    )
    return path


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def read_tables(pki: Pki) -> dict[str, list[str]]:
    """Every managed table entry, read over mutual TLS."""
    settings = SwitchSettings(
        address=f"127.0.0.1:{GRPC}",
        thrift_port=THRIFT,
        tls=TlsSettings(ca=pki.ca_crt, cert=pki.client_crt, key=pki.client_key),
    )

    async def _read() -> dict[str, list[str]]:
        async with connect(settings, PIPELINE) as sw:
            out: dict[str, list[str]] = {}
            for e in await app.read_entries(sw):
                out.setdefault(e.table_id.split(".")[-1], []).append(
                    f"{e.match_str(sw.p4info)} -> {e.action_str(sw.p4info)}"
                )
            return out

    return asyncio.run(_read())


def scrape(url: str, ctx: ssl.SSLContext | None, timeout: float = 5) -> str:
    with urllib.request.urlopen(url, timeout=timeout, context=ctx) as reply:
        return reply.read().decode()


def client_context(pki: Pki, cert: bool = True) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki.ca_crt))
    if cert:
        ctx.load_cert_chain(str(pki.client_crt), str(pki.client_key))
    return ctx


def test_mutual_tls_push_apply_set_ecn_and_export(
    switch: bmv2.Bmv2Switch, pki: Pki, tmp_path: Path
) -> None:
    good = tls_dict(pki)
    flags = ["--tls-ca", good["ca"], "--tls-cert", good["cert"], "--tls-key", good["key"]]
    address = ["--address", f"127.0.0.1:{GRPC}", "--thrift-port", str(THRIFT)]
    assert "installed on" in ok(ctl(*address, *flags, "push"))
    cfg = write_config(tmp_path / "switch.yaml", good)
    assert "1 routes, 2 ports" in ok(ctl("apply", str(cfg)))
    tables = read_tables(pki)
    assert len(tables["routes_v4"]) == 1 and "k=0x5" in tables["ecn_policy"][0], tables
    # --tls-server-name: checked against the certificate's DNS name instead of the IP
    out = ok(
        ctl(
            "--config", str(cfg), "--tls-server-name", "localhost",
            "set-ecn", "--port", "2", "--mode", "front", "--k", "7",
        )
    )  # fmt: skip
    assert "mark-front at K=7 packets" in out
    assert "k=0x7" in read_tables(pki)["ecn_policy"][0]
    keeper = subprocess.Popen(
        [sys.executable, "-m", "p4incast.controller", "apply", str(cfg), "--keep"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert keeper.stdout is not None
        assert "ready: 1 updates written" in keeper.stdout.readline()  # K back to 5
    finally:
        keeper.terminate()
        keeper.wait(timeout=10)

    # the exporter: mutual TLS to the switch, HTTPS with client certificates to Prometheus
    port = free_port()
    exporter = subprocess.Popen(
        [
            sys.executable, "-m", "p4incast.controller", "--config", str(cfg), "export",
            "--listen", f"127.0.0.1:{port}", "--interval", "0.3",
            "--metrics-tls-cert", str(pki.server_crt), "--metrics-tls-key", str(pki.server_key),
            "--metrics-client-ca", str(pki.ca_crt),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert exporter.stdout is not None
        assert f"on https://127.0.0.1:{port}/metrics" in exporter.stdout.readline()
        url = f"https://127.0.0.1:{port}/metrics"
        up = None
        deadline = time.monotonic() + 20
        while up != 1.0 and time.monotonic() < deadline:
            text = scrape(url, client_context(pki))
            samples = {
                s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples
            }
            up = samples.get("p4incast_switch_up")
            time.sleep(0.3)
        assert up == 1.0, "the exporter never read the switch over mutual TLS"
        with pytest.raises((urllib.error.URLError, ConnectionError, ssl.SSLError)):
            scrape(f"http://127.0.0.1:{port}/metrics", None)  # plaintext
        with pytest.raises((urllib.error.URLError, ConnectionError, ssl.SSLError)):
            scrape(url, client_context(pki, cert=False))  # no client certificate
    finally:
        exporter.terminate()
        exporter.wait(timeout=10)


CASES = {
    "plaintext": (
        None,
        "the switch at 127.0.0.1:{grpc} speaks TLS and this client plaintext: give "
        "switch.tls.ca (--tls-ca), and switch.tls.cert (--tls-cert) and switch.tls.key "
        "(--tls-key) if the switch requires client certificates",
    ),
    "no client certificate": (
        {"cert": None, "key": None},
        "the switch at 127.0.0.1:{grpc} requires a client certificate (connection closed "
        "after the handshake): give switch.tls.cert (--tls-cert) and switch.tls.key (--tls-key)",
    ),
    "client certificate of another CA": (
        {"cert": "other_crt", "key": "other_key"},
        "the switch at 127.0.0.1:{grpc} refused the client certificate switch.tls.cert "
        "(--tls-cert) {other_crt} (connection closed after the handshake): give one signed by "
        "a CA the switch trusts",
    ),
    "wrong CA": (
        {"ca": "ca2_crt"},
        "the switch at 127.0.0.1:{grpc} has a certificate that switch.tls.ca (--tls-ca) "
        "{ca2_crt} does not verify (self-signed certificate in certificate chain): give the "
        "CA that signed it",
    ),
    "wrong server name": (
        {"server_name": "switch.example"},
        "the switch at 127.0.0.1:{grpc} has a certificate that is not valid for "
        "'switch.example': give switch.tls.server_name (--tls-server-name) a name it carries",
    ),
}


def _resolve(pki: Pki, over: dict[str, str | None] | None) -> dict[str, str] | None:
    if over is None:
        return None
    files = {k: (str(getattr(pki, v)) if v and v.endswith(("_crt", "_key")) else v) for k, v in
             over.items()}  # fmt: skip
    return tls_dict(pki, **files)


@pytest.mark.parametrize("case", list(CASES))
def test_refused_in_one_line_with_the_switch_unchanged(
    switch: bmv2.Bmv2Switch, pki: Pki, tmp_path: Path, case: str
) -> None:
    ok(ctl("apply", str(write_config(tmp_path / "good.yaml", tls_dict(pki)))))
    before = read_tables(pki)
    over, message = CASES[case]
    line = message.format(grpc=GRPC, other_crt=pki.other_crt, ca2_crt=pki.ca2_crt)
    cfg = write_config(tmp_path / "bad.yaml", _resolve(pki, over), k=9)
    started = time.monotonic()
    for args in (
        ("apply", str(cfg)),
        ("apply", str(cfg), "--keep"),
        ("--config", str(cfg), "set-ecn", "--port", "2", "--mode", "front", "--k", "3"),
        ("--config", str(cfg), "push", "--force"),
        ("--config", str(cfg), "export", "--listen", f"127.0.0.1:{free_port()}"),
    ):
        proc = ctl(*args)
        assert proc.returncode == 2, (args, proc)
        assert proc.stderr == f"p4incast-ctl: error: {line}\n", (args, proc.stderr)
        assert not proc.stdout
    assert time.monotonic() - started < 30  # told at once, not after gRPC's timeouts
    assert read_tables(pki) == before


def test_tls_against_a_plaintext_switch_refused(
    plain_switch: bmv2.Bmv2Switch, pki: Pki, tmp_path: Path
) -> None:
    cfg = write_config(tmp_path / "tls.yaml", tls_dict(pki), grpc=PLAIN_GRPC)
    proc = ctl("apply", str(cfg))
    assert proc.returncode == 2 and not proc.stdout
    assert proc.stderr == (
        f"p4incast-ctl: error: the switch at 127.0.0.1:{PLAIN_GRPC} does not speak TLS "
        "(plaintext P4Runtime): leave out switch.tls.ca (--tls-ca) and the other TLS "
        "settings, or start the switch with TLS\n"
    )
    plain = ["--address", f"127.0.0.1:{PLAIN_GRPC}", "--thrift-port", str(PLAIN_THRIFT)]
    assert "runs no pipeline yet" in ctl(*plain, "stats").stderr  # nothing was pushed
    assert "installed on" in ok(ctl(*plain, "push"))  # and plaintext is still fine


MITM_GRPC, MITM_THRIFT = 50083, 9403  # a switch whose certificate another CA signed


def test_precheck_trusts_only_the_configured_ca(pki: Pki, tmp_path: Path) -> None:
    """A man in the middle whose certificate a CA in the system's bundle signed
    (here: ca2, made the system's bundle through SSL_CERT_FILE, which OpenSSL's
    default paths read) is named as such at once, as gRPC, which trusts
    --tls-ca alone, would refuse it: not "cannot reach the switch" after gRPC's
    timeout, as when the pre-check also trusted the system's bundle."""
    with bmv2.Bmv2Switch(
        ports={},
        grpc_port=MITM_GRPC,
        thrift_port=MITM_THRIFT,
        log_file=tmp_path / "switch.log",
        grpc_args=[
            "--grpc-server-ssl",
            "--grpc-server-cert", str(pki.other_crt),
            "--grpc-server-key", str(pki.other_key),
        ],
    ):  # fmt: skip
        cfg = write_config(tmp_path / "switch.yaml", {"ca": str(pki.ca_crt)}, grpc=MITM_GRPC)
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "p4incast.controller", "apply", str(cfg)],
            capture_output=True,
            text=True,
            timeout=90,
            env={**os.environ, "SSL_CERT_FILE": str(pki.ca2_crt)},
        )
        assert proc.returncode == 2 and not proc.stdout, proc
        assert proc.stderr == (
            f"p4incast-ctl: error: the switch at 127.0.0.1:{MITM_GRPC} has a certificate "
            f"that switch.tls.ca (--tls-ca) {pki.ca_crt} does not verify (unable to get "
            "local issuer certificate): give the CA that signed it\n"
        )
        assert time.monotonic() - started < 8  # at once, not after gRPC's 10 s timeout
