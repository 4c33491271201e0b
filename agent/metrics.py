"""Prometheus endpoint of a running agent (`p4incast-agent run --metrics ADDR:PORT`).

Aggregate only, no per-flow label: the totals `p4incast-agent status` shows
(`runner.totals`), read from the live maps on every scrape by a custom
collector, and the policy as an info metric. Every global data-path stat
(datapath.ST_NAMES, per-CPU sums, cumulative since the agent attached) is a
counter `p4incast_agent_<stat>_total`. The sums over resident flows (packets,
bytes, CE) are gauges, as status reports them: they fall when idle flows are
swept. `p4incast_agent_ce_packets_total` is the monotonic CE count for
`rate()`: the collector adds each resident flow's CE increase since the last
scrape (a flow's CE after its last scrape is lost only if the kernel's LRU
evicts it before the next; idle flows are swept only after idle_timeout_s).

The listen address is bound before anything is attached (`serve`), so a bad
or taken address is one error line and nothing to undo. With
--metrics-tls-cert/--metrics-tls-key it serves HTTPS, and with
--metrics-client-ca only to clients with a certificate it signed; or as a
Prometheus web configuration file says (--web.config.file: TLS, client
certificates, basic auth). `check_tls` refuses unusable files first. The
server is the one the controller's exporter uses (`p4incast.metrics_server`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from p4incast import metrics_server
from p4incast.agent.datapath import FL_SLOW, ST_NAMES, Flow, RxWin
from p4incast.metrics_server import MetricsServer
from p4incast.model.errors import ModelError
from p4incast.model.tls import MetricsTls
from p4incast.policies.config import ConfigError

__all__ = ["PREFIX", "ST_HELP", "AgentCollector", "check_tls", "parse_listen", "serve"]

PREFIX = "p4incast_agent"

ST_HELP: dict[str, str] = {  # agent/bpf/rxwin.h ST_*
    "rx_pkts": "TCP packets seen on ingress",
    "tx_acks": "TCP ACKs seen on egress",
    "rewrites": "ACK window fields lowered to W",
    "flows_new": "flow entries created",
    "flows_end": "flow entries deleted on FIN/RST",
    "bad_opts": "malformed TCP option lists",
    "no_handshake": "ACKs not rewritten: the flow's handshake was not seen",
    "idle_reset": "flows whose window state was reset after idle",
    "hs_reopen": "newdctcp-budget: handshake ACKs sent as the initial window, then zero",
    "forge_fail": "bpf_clone_redirect failures (the ACK went out with the share)",
    "rot_grant": "rotation grants: a waiting flow's window opened by a forged update",
    "rot_release": "rotation releases: a flow's turn ended with a zero window",
    "rot_idle": "rotation: a flow gave its slot back after a short segment",
    "rot_defer": "rotation: a grant waited for a pure ACK to carry it",
    "ece_cleared": "ACKs whose ECE the agent cleared",
    "ackq_held": "rcc ACK queue: ACKs still held after the queue's loop",
    "ackq_replaced": "rcc ACK queue: held ACKs taken out by their flow's newer one, which waits",
    "ackq_superseded": "rcc ACK queue: held ACKs taken out by their flow's newer one, which left",
    "ackq_released": "rcc ACK queue: held ACKs released by a window update from rx_egress",
    "ackq_rescued": "rcc ACK queue: held ACKs released by userspace's rescue",
    "ackq_zero": "rcc ACK queue: split ACKs that went out with a zero window",
    "rtt_excluded": "flows found with a smallest RTT above rtt_limit_us: never rewritten",
}
assert set(ST_HELP) == set(ST_NAMES), "every data-path stat needs its help line"


def parse_listen(value: str) -> tuple[str, int]:
    """ADDR:PORT (IPv6 as [ADDR]:PORT) -> (addr, port); ConfigError if malformed."""
    host, sep, port = value.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--metrics {value!r}: expected ADDR:PORT, e.g. 127.0.0.1:9465")
    return host, int(port)


def check_tls(tls: MetricsTls) -> MetricsTls:
    """The --metrics-tls-* flags or --web.config.file and the files they name
    (`MetricsTls.verify`, shared with the controller's exporter); ConfigError
    naming the first problem. The settings in effect."""
    try:
        return tls.verify()
    except ModelError as err:
        raise ConfigError(str(err)) from None


def serve(collector: Collector, listen: str, tls: MetricsTls | None = None) -> MetricsServer:
    """Bind ADDR:PORT and serve `collector` alone (text format and OpenMetrics) from
    worker threads, over HTTPS and with basic auth as `tls` says (the settings in
    effect: `check_tls`'s); ConfigError when malformed or not bindable.
    `.shutdown()` stops it."""
    addr, port = parse_listen(listen)
    reg = CollectorRegistry(auto_describe=True)
    reg.register(collector)
    try:
        return metrics_server.serve(reg, addr, port, tls or MetricsTls())
    except OSError as err:
        raise ConfigError(f"--metrics {listen}: cannot listen: {err.strerror or err}") from None
    except ModelError as err:
        raise ConfigError(str(err)) from None


def totals(flows: dict[str, Flow], stats: dict[str, int]) -> dict[str, int]:
    """What `status` reports as an agent's totals: resident flows, their summed packets,
    bytes and CE, how many of them the RTT limit excludes (FL_SLOW), and every global
    stat."""
    return {
        "flows": len(flows),
        "pkts": sum(f.pkts for f in flows.values()),
        "bytes": sum(f.bytes for f in flows.values()),
        "ce": sum(f.ce for f in flows.values()),
        "rtt_excluded_flows": sum(1 for f in flows.values() if f.flags & FL_SLOW),
        **stats,
    }


class AgentCollector(Collector):
    """The agent's aggregate metrics; serves only the info metric until `attach`."""

    def __init__(self, iface: str, policy: str) -> None:
        self.iface = iface
        self.policy = policy
        self.attach_kind = "none"
        self.rx: RxWin | None = None
        self.lock = threading.Lock()
        self._ce_seen: dict[tuple[str, int], int] = {}  # (flow, first_ns) -> CE counted
        self._ce_total = 0

    def attach(self, rx: RxWin, kind: str) -> None:
        with self.lock:
            self.rx, self.attach_kind = rx, kind

    def detach(self) -> None:
        """Before the maps close: scrapes from now on serve the info metric only."""
        with self.lock:
            self.rx = None

    def describe(self) -> Iterator[Metric]:
        """Every family this collector serves (zeros): the served names."""
        return self._families(totals({}, dict.fromkeys(ST_NAMES, 0)), 0)

    def collect(self) -> Iterator[Metric]:
        with self.lock:
            if self.rx is None:
                return self._families(None, 0)
            flows, stats = self.rx.flows(), self.rx.stats()
            seen: dict[tuple[str, int], int] = {}
            for label, f in flows.items():
                key = (label, f.first_ns)
                before = self._ce_seen.get(key, 0)
                self._ce_total += f.ce - before if f.ce >= before else f.ce
                seen[key] = f.ce
            self._ce_seen = seen
            return self._families(totals(flows, stats), self._ce_total)

    def _families(self, tot: dict[str, int] | None, ce_total: int) -> Iterator[Metric]:
        iface = [self.iface]
        info = InfoMetricFamily(PREFIX, "the agent's policy and attachment", labels=["iface"])
        info.add_metric(iface, {"policy": self.policy, "attach": self.attach_kind})
        yield info
        if tot is None:
            return
        for key, metric, help_ in (
            ("flows", "flows", "flows resident in the agent's flow table"),
            ("pkts", "flow_packets", "packets of the resident flows (falls when flows go)"),
            ("bytes", "flow_bytes", "bytes of the resident flows (falls when flows go)"),
            ("ce", "flow_ce_packets", "CE packets of the resident flows (falls when flows go)"),
            (
                "rtt_excluded_flows",
                "rtt_excluded_flows",
                "resident flows whose smallest RTT is above rtt_limit_us (never rewritten)",
            ),
        ):
            g = GaugeMetricFamily(f"{PREFIX}_{metric}", help_, labels=["iface"])
            g.add_metric(iface, tot[key])
            yield g
        ce = CounterMetricFamily(
            f"{PREFIX}_ce_packets",
            "CE-marked packets received (monotonic, summed from the flows' counts)",
            labels=["iface"],
        )
        ce.add_metric(iface, ce_total)
        yield ce
        for name in ST_NAMES:
            c = CounterMetricFamily(f"{PREFIX}_{name}", ST_HELP[name], labels=["iface"])
            c.add_metric(iface, tot[name])
            yield c
