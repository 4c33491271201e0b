"""A private key that group or others may access is refused, as ssh refuses one.

Every private key the project reads passes `key_access_problem`
(p4incast/model/tls.py): the controller's P4Runtime client key (switch.tls.key,
--tls-key) when the config is checked and again when the channel's credentials
are read, and the key of both metrics endpoints (`p4incast-ctl export
--metrics-tls-key`, `p4incast-agent run --metrics-tls-key`). The refusal is one
line naming the file and `chmod 600`; the same key at mode 0600 is accepted.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pki import Pki, make_pki, missing_reason

from p4incast.controller import config, tls
from p4incast.controller.errors import ControllerError
from p4incast.model.tls import MetricsTls

pytestmark = pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or "")
NOWHERE = "127.0.0.1:1"
OPEN_MODES = (0o640, 0o604, 0o620, 0o660, 0o644)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def copy_key(pki: Pki, src: Path, mode: int) -> Path:
    key = pki.dir / f"{src.stem}-{mode:o}.key"
    shutil.copy(src, key)
    key.chmod(mode)
    return key


def refusal(key: Path, mode: int) -> str:
    return (
        f"{key}: private key accessible by group or others (mode {mode:04o}); refused as "
        f"ssh refuses such a key: chmod 600 {key}"
    )


def one_line_exit_2(args: list[str], prog: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", prog, *args], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 2 and not proc.stdout, proc
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    return proc.stderr


def test_the_keys_openssl_writes_are_owner_only(pki: Pki) -> None:
    """The baseline every case below departs from: 0600 passes."""
    assert pki.client_key.stat().st_mode & 0o777 == 0o600
    cfg = config.parse(
        {"switch": {"address": NOWHERE, "tls": {
            "ca": str(pki.ca_crt), "cert": str(pki.client_crt), "key": str(pki.client_key)}}},
        "t.yaml",
    )  # fmt: skip
    assert cfg.switch.tls is not None and cfg.switch.tls.key == pki.client_key
    assert tls.credentials(cfg.switch.tls) is not None
    MetricsTls(str(pki.server_crt), str(pki.server_key)).verify()


@pytest.mark.parametrize("mode", OPEN_MODES)
def test_switch_client_key_refused_in_the_config(pki: Pki, mode: int) -> None:
    key = copy_key(pki, pki.client_key, mode)
    path = pki.dir / f"switch-{mode:o}.yaml"
    path.write_text(yaml.safe_dump({"switch": {"address": NOWHERE, "tls": {
        "ca": "ca.crt", "cert": "client.crt", "key": key.name}}}))  # fmt: skip
    with pytest.raises(ControllerError) as err:
        config.load(path)
    assert str(err.value) == f"{path}: switch.tls.key (--tls-key) {refusal(key, mode)}"


def test_switch_client_key_refused_for_every_command(pki: Pki) -> None:
    key = copy_key(pki, pki.client_key, 0o640)
    flags = ["--tls-ca", str(pki.ca_crt), "--tls-cert", str(pki.client_crt), "--tls-key", str(key)]
    for cmd in (["push"], ["stats"], ["set-ecn", "--port", "1", "--mode", "off"], ["export"]):
        line = one_line_exit_2(["--address", NOWHERE, *flags, *cmd], "p4incast.controller")
        assert line.startswith("p4incast-ctl: error: "), line
        assert line.rstrip().endswith(f"switch.tls.key (--tls-key) {refusal(key, 0o640)}"), line


def test_credentials_recheck_the_key_when_they_read_it(pki: Pki) -> None:
    """A key made readable after the config was checked is still not sent to gRPC."""
    key = copy_key(pki, pki.client_key, 0o600)
    settings = tls.TlsSettings(ca=pki.ca_crt, cert=pki.client_crt, key=key)
    tls.check(settings, "t")
    key.chmod(0o644)
    with pytest.raises(ControllerError) as err:
        tls.credentials(settings)
    assert str(err.value) == f"switch.tls.key (--tls-key) {refusal(key, 0o644)}"


@pytest.mark.parametrize("mode", OPEN_MODES)
def test_exporter_metrics_key_refused(pki: Pki, mode: int) -> None:
    key = copy_key(pki, pki.server_key, mode)
    line = one_line_exit_2(
        ["--address", NOWHERE, "export", "--listen", "127.0.0.1:19464",
         "--metrics-tls-cert", str(pki.server_crt), "--metrics-tls-key", str(key)],
        "p4incast.controller",
    )  # fmt: skip
    assert line == f"p4incast-ctl: error: --metrics-tls-key {refusal(key, mode)}\n", line


def test_agent_metrics_key_refused(pki: Pki) -> None:
    key = copy_key(pki, pki.server_key, 0o644)
    line = one_line_exit_2(
        ["run", "--iface", "lo", "--policy", "observe", "--metrics", "127.0.0.1:19465",
         "--metrics-tls-cert", str(pki.server_crt), "--metrics-tls-key", str(key)],
        "p4incast.agent",
    )  # fmt: skip
    assert line == f"p4incast-agent: --metrics-tls-key {refusal(key, 0o644)}\n", line


def test_web_config_key_file_refused(pki: Pki, tmp_path: Path) -> None:
    """The key a `--web.config.file` names passes the same rule as the flag's."""
    key = copy_key(pki, pki.server_key, 0o640)
    web = tmp_path / "web.yml"
    web.write_text(
        yaml.safe_dump(
            {"tls_server_config": {"cert_file": str(pki.server_crt), "key_file": str(key)}}
        )
    )
    line = one_line_exit_2(
        ["--address", NOWHERE, "export", "--listen", "127.0.0.1:19464",
         "--web.config.file", str(web)],
        "p4incast.controller",
    )  # fmt: skip
    assert line == (
        f"p4incast-ctl: error: --web.config.file {web}: tls_server_config.key_file "
        f"{refusal(key, 0o640)}\n"
    ), line
