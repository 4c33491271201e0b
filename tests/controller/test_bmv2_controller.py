"""p4incast-ctl against a real simple_switch_grpc: apply, live changes, bad
input refused with nothing written, and recovery from a switch restart."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import finsy as fy
import pytest
import yaml
from ctlrun import bmv2_unavailable, ctl, ctl_ok

from p4incast import bmv2
from p4incast.controller import app
from p4incast.controller.config import Pipeline, SwitchSettings

REPO = Path(__file__).resolve().parents[2]
PIPELINE = Pipeline.default()
GRPC, THRIFT = 50071, 9391
VETH = {1: ("p4c1s", "p4c1h"), 2: ("p4c2s", "p4c2h")}
WHY_NOT = bmv2_unavailable(root=True)

pytestmark = [
    pytest.mark.bmv2,
    pytest.mark.root,
    pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or ""),
]


def config_dict(mode: str = "tail", k: int = 1, rate: int = 50) -> dict:
    return {
        "switch": {"address": f"127.0.0.1:{GRPC}", "device_id": 0, "thrift_port": THRIFT},
        "pipeline": {"p4info": str(PIPELINE.p4info), "config": str(PIPELINE.config)},
        "ports": {
            1: {"mac": "00:aa:00:00:00:01"},
            2: {
                "mac": "00:aa:00:00:00:02",
                "queue_depth": 64,
                "queue_rate": rate,
                "ecn": {"mode": mode, "k": k},
            },
        },
        "routes": [
            {"prefix": "10.0.1.0/24", "port": 1, "dmac": "00:bb:00:00:00:01"},
            {"prefix": "10.0.2.0/24", "port": 2, "dmac": "00:bb:00:00:00:02"},
            {"prefix": "2001:db8:2::/48", "port": 2, "dmac": "00:bb:00:00:00:02"},
        ],
    }


def new_switch(tmp: Path) -> bmv2.Bmv2Switch:
    return bmv2.Bmv2Switch(
        ports={p: s for p, (s, _h) in VETH.items()},
        grpc_port=GRPC,
        thrift_port=THRIFT,
        log_file=tmp / "switch.log",
    )


@pytest.fixture
def switch(tmp_path: Path) -> Iterator[bmv2.Bmv2Switch]:
    for s, h in VETH.values():
        bmv2.make_veth(s, h)
    sw = new_switch(tmp_path).start()
    try:
        yield sw
    finally:
        sw.stop()
        for s, _h in VETH.values():
            bmv2.del_veth(s)


@pytest.fixture
def cfg_file(tmp_path: Path) -> Path:
    path = tmp_path / "switch.yaml"
    path.write_text(yaml.safe_dump(config_dict()))
    return path


def read_tables() -> dict[str, list[str]]:
    settings = SwitchSettings(address=f"127.0.0.1:{GRPC}", thrift_port=THRIFT)

    async def _read() -> dict[str, list[str]]:
        from p4incast.controller.connection import connect

        async with connect(settings, PIPELINE) as sw:
            found = await app.read_entries(sw)
            out: dict[str, list[str]] = {}
            for e in found:
                out.setdefault(e.table_id.split(".")[-1], []).append(
                    f"{e.match_str(sw.p4info)} -> {e.action_str(sw.p4info)}"
                )
            return out

    return asyncio.run(_read())


def burst_marks(count: int = 4) -> list[tuple[int, int]]:
    """Send `count` numbered ECT(0) packets into port 1 at once; return (ip id, ecn)
    of what leaves port 2, in order."""
    from scapy.config import conf
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.sendrecv import AsyncSniffer, sendp

    conf.ifaces.reload()  # scapy caches interface indexes; each test makes new pairs
    sniffer = AsyncSniffer(iface=VETH[2][1], filter="udp and dst port 5001", store=True)
    sniffer.start()
    time.sleep(0.3)
    pkts = [
        Ether(src="00:bb:00:00:00:01", dst="00:aa:00:00:00:01")
        / IP(src="10.0.1.1", dst="10.0.2.2", tos=0b10, id=i)
        / UDP(dport=5001)
        / (b"x" * 30)
        for i in range(1, count + 1)
    ]
    sendp(pkts, iface=VETH[1][1], verbose=False)
    deadline = time.monotonic() + count / 50 + 3
    while time.monotonic() < deadline and len(sniffer.results or []) < count:
        time.sleep(0.1)
    got = sniffer.stop() or []
    return [(p[IP].id, p[IP].tos & 3) for p in got if IP in p]


def assert_tail_k1_marks(got: list[tuple[int, int]]) -> None:
    """What mark-tail K=1 at 50 pkt/s does to a burst of 4: all arrive in order,
    packet 1 (idle queue, depth 0) unmarked, packets 3 and 4 (depth >= 1) CE.
    Packet 2 saw depth 0 if BMv2's egress thread had already taken packet 1 out
    (the usual case) and 1 if not (a loaded machine): either is correct."""
    assert [i for i, _ in got] == [1, 2, 3, 4], got
    assert got[0] == (1, 2) and got[2:] == [(3, 3), (4, 3)], got


def test_apply_writes_routes_ecn_and_queues(switch: bmv2.Bmv2Switch, cfg_file: Path) -> None:
    out = ctl_ok("apply", str(cfg_file))
    assert "3 routes, 2 ports" in out.stdout
    tables = read_tables()
    assert len(tables["routes_v4"]) == 2
    assert len(tables["routes_v6"]) == 1
    (policy,) = tables["ecn_policy"]
    assert "mode=0x1" in policy and "k=0x1" in policy, policy
    # Marking works end to end with the queue rate the config set (50 pps):
    # mark-tail K=1 marks packets whose enqueue depth >= 1, i.e. 3 and 4.
    assert_tail_k1_marks(burst_marks(4))
    # Re-applying the same config writes nothing.
    assert "0 updates" in ctl_ok("apply", str(cfg_file)).stdout


def test_set_ecn_live_and_stats_json(switch: bmv2.Bmv2Switch, cfg_file: Path) -> None:
    ctl_ok("apply", str(cfg_file))
    out = ctl_ok("--config", str(cfg_file), "set-ecn", "--port", "2", "--mode", "front", "--k", "2")
    assert "mark-front at K=2 packets" in out.stdout
    # front, K=2, 4 held packets: packet 2 leaves 2 behind (marked), 3 and 4
    # fewer. Packet 1 usually leaves an idle queue at once (0 behind), but on a
    # loaded machine BMv2 may dequeue it after the others arrived (then marked).
    got = burst_marks(4)
    assert [i for i, _ in got] == [1, 2, 3, 4] and got[1:] == [(2, 3), (3, 2), (4, 2)], got
    snap = json.loads(ctl_ok("--config", str(cfg_file), "stats", "--json").stdout)
    port2 = snap["ports"]["2"]
    marked = sum(ecn == 3 for _, ecn in got)
    assert port2["routed"] == 4 and port2["ect"] == 4 and port2["marked"] == marked
    assert port2["depth"]["packets"] == 4 and port2["depth"]["max"] in (2, 3)
    out = ctl_ok("--config", str(cfg_file), "set-ecn", "--port", "2", "--mode", "off")
    assert "ECN off" in out.stdout
    assert burst_marks(4) == [(i, 2) for i in range(1, 5)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("set-ecn", "--port", "7", "--mode", "tail", "--k", "5"), "port 7 is not in the config"),
        (("set-ecn", "--port", "2", "--mode", "tail", "--k", "64"), "not below the queue (64"),
        (("set-ecn", "--port", "2", "--mode", "tail", "--k", "0"), "outside what v1model"),
    ],
)
def test_bad_live_change_refused_and_nothing_written(
    switch: bmv2.Bmv2Switch, cfg_file: Path, args: tuple[str, ...], message: str
) -> None:
    ctl_ok("apply", str(cfg_file))
    before = read_tables()
    proc = ctl("--config", str(cfg_file), *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert read_tables() == before


def test_unknown_port_on_switch_refused(switch: bmv2.Bmv2Switch, cfg_file: Path) -> None:
    ctl_ok("apply", str(cfg_file))
    proc = ctl(
        "--address",
        f"127.0.0.1:{GRPC}",
        "--thrift-port",
        str(THRIFT),
        "set-ecn",
        "--port",
        "9",
        "--mode",
        "tail",
        "--k",
        "5",
    )
    assert proc.returncode == 2 and "port 9 does not exist on the switch" in proc.stderr


def test_half_bad_config_writes_nothing(switch: bmv2.Bmv2Switch, tmp_path: Path) -> None:
    data = config_dict()
    data["routes"].append({"prefix": "10.0.3.0/24", "port": 5, "dmac": "00:bb:00:00:00:05"})
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    proc = ctl("apply", str(path))
    assert proc.returncode == 2 and "port 5 is not declared" in proc.stderr
    settings = SwitchSettings(address=f"127.0.0.1:{GRPC}", thrift_port=THRIFT)
    proc = ctl("--address", settings.address, "stats")
    assert "runs no pipeline yet" in proc.stderr  # not even the pipeline was pushed


def test_mismatched_p4info_and_unreachable_switch(switch: bmv2.Bmv2Switch, cfg_file: Path) -> None:
    ctl_ok("apply", str(cfg_file))
    other = REPO / "build" / "bench" / "minimal.p4info.txtpb"
    if other.is_file():
        proc = ctl("--address", f"127.0.0.1:{GRPC}", "--p4info", str(other), "stats")
        assert proc.returncode == 2 and "does not match" in proc.stderr, proc.stderr
    proc = ctl("--address", "127.0.0.1:1", "stats")
    assert proc.returncode == 2 and "cannot reach" in proc.stderr, proc.stderr


def test_keep_recovers_after_switch_restart(
    switch: bmv2.Bmv2Switch, cfg_file: Path, tmp_path: Path
) -> None:
    keeper = subprocess.Popen(
        [sys.executable, "-m", "p4incast.controller", "apply", str(cfg_file), "--keep"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert _wait_line(keeper, "ready", 20)
        assert_tail_k1_marks(burst_marks(4))
        switch.kill()  # crash: pipeline, entries and queue settings are gone
        switch.start()
        assert _wait_line(keeper, "ready", 30), "controller did not re-apply after restart"
        assert_tail_k1_marks(burst_marks(4))  # routes, ECN policy and queue rate are back
    finally:
        keeper.terminate()
        keeper.wait(timeout=10)


def _wait_line(proc: subprocess.Popen[str], word: str, timeout: float) -> bool:
    import selectors

    sel = selectors.DefaultSelector()
    assert proc.stdout is not None
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sel.select(timeout=0.5):
            line = proc.stdout.readline()
            if word in line:
                return True
    return False


def test_apply_yaml_with_bare_off_mode(switch: bmv2.Bmv2Switch, tmp_path: Path) -> None:
    # `mode: off` unquoted is YAML's false; apply takes it as ECN off (no entry).
    text = yaml.safe_dump(config_dict()).replace("mode: tail", "mode: off")
    assert "mode: off" in text and "'off'" not in text
    path = tmp_path / "off.yaml"
    path.write_text(text)
    out = ctl_ok("apply", str(path))
    assert "3 routes, 2 ports; 5 updates" in out.stdout, out.stdout
    assert "ecn_policy" not in read_tables()


def read_budget() -> list[str]:
    """The switch's rx_budget and budget_share entries, as match -> action text, sorted."""
    settings = SwitchSettings(address=f"127.0.0.1:{GRPC}", thrift_port=THRIFT)

    async def _read() -> list[str]:
        from p4incast.controller import budget
        from p4incast.controller.connection import connect

        async with connect(settings, PIPELINE) as sw:
            return sorted(
                f"{e.table_id.split('.')[-1]} {e.match_str(sw.p4info)} -> {e.action_str(sw.p4info)}"
                for e in await budget.current(sw, None)
            )

    return asyncio.run(_read())


def read_groups() -> dict[int, str]:
    """The switch's multicast groups: id -> its replicas as text."""
    settings = SwitchSettings(address=f"127.0.0.1:{GRPC}", thrift_port=THRIFT)

    async def _read() -> dict[int, str]:
        from p4incast.controller.connection import connect, read_entities

        async with connect(settings, PIPELINE) as sw:
            return {
                g.multicast_group_id: g.replicas_str()
                async for g in read_entities(sw, fy.P4MulticastGroupEntry())
            }

    return asyncio.run(_read())


def test_budget_from_yaml_and_live(switch: bmv2.Bmv2Switch, tmp_path: Path) -> None:
    """docs/algorithms.md §8: B = 8 x 1448 = 11584 on port 2 gives the floor
    (1448 = 0x5a8) and shares for N = 1..4 (B / (2 MSS) = 4): 11584 (0x2d40),
    5792 (0x16a0), 2896 (0xb50), 2896; set-budget --bytes 5792 leaves N = 1, 2:
    5792, 2896; --off removes them all."""
    data = config_dict()
    data["ports"][2]["budget"] = {"bytes": 11584}
    path = tmp_path / "budget.yaml"
    path.write_text(yaml.safe_dump(data))
    ctl_ok("apply", str(path))
    got = read_budget()
    shares = [line for line in got if line.startswith("budget_share")]
    assert [s.split("-> ")[1] for s in shares] == [
        "set_share(share_bytes=0x2d40)",
        "set_share(share_bytes=0x16a0)",
        "set_share(share_bytes=0xb50)",
        "set_share(share_bytes=0xb50)",
    ], got
    (rx,) = [line for line in got if line.startswith("rx_budget")]
    assert "floor_bytes=0x5a8" in rx and "epoch_ticks=0x20000" in rx, rx
    # each port's group for the handshake's ACK and its zero-window copy:
    # 1 + port -> port, replicas 0 and 1 (§8)
    assert read_groups() == {1 + p: f"{p} {p}#1" for p in data["ports"]}
    assert "0 updates" in ctl_ok("apply", str(path)).stdout
    out = ctl_ok("--config", str(path), "set-budget", "2", "--bytes", "5792")
    assert "port 2: budget 5792 bytes" in out.stdout
    got = read_budget()
    assert [s.split("-> ")[1] for s in got if s.startswith("budget_share")] == [
        "set_share(share_bytes=0x16a0)",
        "set_share(share_bytes=0xb50)",
    ], got
    assert "budget off" in ctl_ok("--config", str(path), "set-budget", "2", "--off").stdout
    assert read_budget() == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("set-budget", "7", "--bytes", "11584"), "port 7 is not in the config"),
        (("set-budget", "2", "--bytes", "1000"), "below one segment (1448 bytes)"),
        (("set-budget", "2", "--bytes", "11584", "--epoch-ticks", "100"), "a power of two"),
    ],
)
def test_bad_budget_refused_and_nothing_written(
    switch: bmv2.Bmv2Switch, cfg_file: Path, args: tuple[str, ...], message: str
) -> None:
    ctl_ok("apply", str(cfg_file))
    ctl_ok("--config", str(cfg_file), "set-budget", "2", "--bytes", "11584")
    before = read_budget()
    proc = ctl("--config", str(cfg_file), *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert read_budget() == before
