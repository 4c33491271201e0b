"""PTF base test for p4-incast: a P4Runtime session (the controller's own finsy
layer), entry helpers, BMv2 queue control and packet collection.

Test parameters (ptf --test-params) come from scripts/run-ptf.sh:
grpc_addr, device_id, thrift_port, p4info, p4config.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar, cast

import finsy as fy
import ptf
from ptf import testutils
from ptf.base_tests import BaseTest
from ptf.dataplane import DataPlane

from p4incast.controller import connection, entries, stats
from p4incast.controller.config import EcnPolicy, Pipeline, SwitchSettings
from p4incast.controller.targets import V1MODEL
from p4incast.controller.targets import bmv2 as bmv2_target

T = TypeVar("T")

# Switch ports used by the suite; PTF port N is wired to switch port N.
PORTS = (1, 2, 3, 4)
UNSHAPED_PPS = 1_000_000  # "no shaping" for a BMv2 egress queue


def port_mac(port: int) -> str:
    return f"00:aa:00:00:00:{port:02x}"


def host_mac(port: int) -> str:
    return f"00:bb:00:00:00:{port:02x}"


class SwitchSession:
    """One P4Runtime connection, driven from PTF's synchronous tests through an
    event loop in a background thread."""

    def __init__(self, settings: SwitchSettings, pipeline: Pipeline) -> None:
        self.settings = settings
        self.pipeline = pipeline
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self._cm = connection.connect(settings, pipeline)
        self.switch: fy.Switch = self.run(self._cm.__aenter__())

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        try:
            self.run(self._cm.__aexit__(None, None, None))
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=5)

    # -- writes -------------------------------------------------------------
    def write(self, updates: list[Any]) -> None:
        self.run(self.switch.write(updates))

    def clear(self) -> None:
        """Remove every table entry (the const default actions stay)."""
        self.run(self.switch.delete_all())

    def add_route(self, prefix: str, port: int) -> None:
        self.write(
            [+entries.route(prefix=prefix, port=port, smac=port_mac(port), dmac=host_mac(port))]
        )

    def set_ecn(
        self, port: int, mode: str, k: int = 0, drop_k: int = 0, *, modify: bool = False
    ) -> None:
        """Install (or modify) a port's policy, bypassing config checks so tests
        can reach every value the pipeline accepts."""
        entry = entries.ecn_policy(port=port, policy=EcnPolicy(mode, k, drop_k), target=V1MODEL)
        self.write([~entry if modify else +entry])

    # -- reads --------------------------------------------------------------
    def stats(self) -> stats.Snapshot:
        return self.run(stats.read(self.switch))

    def routes(self) -> list[fy.P4TableEntry]:
        async def _read() -> list[fy.P4TableEntry]:
            return [
                e async for e in connection.read_entities(self.switch, fy.P4TableEntry("routes_v4"))
            ]

        return self.run(_read())


class P4IncastTest(BaseTest):
    """Base for every test: switch session up, tables empty, queues unshaped."""

    def setUp(self) -> None:
        BaseTest.setUp(self)
        self.dataplane = cast(DataPlane, ptf.dataplane_instance)  # PTF sets it before tests run
        self.dataplane.flush()
        params = testutils.test_params_get()
        self.settings = SwitchSettings(
            address=params.get("grpc_addr", "127.0.0.1:9559"),
            device_id=int(params.get("device_id", 0)),
            thrift_port=int(params.get("thrift_port", 9090)),
        )
        self.pipeline = Pipeline(p4info=Path(params["p4info"]), config=Path(params["p4config"]))
        self.sw = SwitchSession(self.settings, self.pipeline)
        self.sw.clear()
        self.shaped: set[int] = set()

    def tearDown(self) -> None:
        try:
            self.sw.clear()
            for port in self.shaped:
                self.set_queue(port, rate=UNSHAPED_PPS)
        finally:
            self.sw.close()
            BaseTest.tearDown(self)

    # -- BMv2 queues (thrift) -------------------------------------------------
    def set_queue(self, port: int, *, rate: int | None = None, depth: int | None = None) -> None:
        bmv2_target.run_cli(
            bmv2_target.queue_commands(port, depth=depth, rate=rate),
            self.settings.queue_thrift(f"port {port}"),
        )
        if rate is not None and rate < UNSHAPED_PPS:
            self.shaped.add(port)

    # -- packets ----------------------------------------------------------------
    def send(self, port: int, pkt: Any) -> None:
        testutils.send_packet(self, port, pkt)

    def send_burst(self, port: int, pkts: list[Any]) -> None:
        """Send frames back to back: serialised first, then one tight loop, so a
        held queue sees the whole burst arrive within a few milliseconds."""
        frames = [bytes(p) for p in pkts]
        for frame in frames:
            self.dataplane.send(0, port, frame)

    def collect(self, port: int, count: int, timeout: float) -> list[bytes]:
        """Every frame that leaves `port` until `count` arrived or `timeout` passed."""
        got: list[bytes] = []
        deadline = time.monotonic() + timeout
        while len(got) < count and time.monotonic() < deadline:
            res = testutils.dp_poll(
                self,
                device_number=0,
                port_number=port,
                timeout=max(0.05, deadline - time.monotonic()),
            )
            if isinstance(res, self.dataplane.PollSuccess):
                got.append(bytes(res.packet))
        return got

    def drain(self, port: int, quiet: float = 0.5) -> list[bytes]:
        """Frames that keep arriving on `port` until it has been quiet for `quiet` s."""
        got: list[bytes] = []
        while True:
            res = testutils.dp_poll(self, device_number=0, port_number=port, timeout=quiet)
            if not isinstance(res, self.dataplane.PollSuccess):
                return got
            got.append(bytes(res.packet))


def autocleanup(test: Callable[..., None]) -> Callable[..., None]:
    """Mark a runTest whose entries and shaping tearDown removes (documentation
    for the reader: P4IncastTest.tearDown always cleans up)."""

    @functools.wraps(test)
    def wrapper(self: P4IncastTest, *args: Any, **kwargs: Any) -> None:
        try:
            test(self, *args, **kwargs)
        finally:
            self.sw.clear()

    return wrapper
