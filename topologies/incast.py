"""Incast topologies for Mininet on BMv2, and each switch's ports and routes
(`switch_plans`, which the engine turns into the controller's config).

    incast_star  N senders and one receiver under one ToR.
    leaf_spine   two leaves, one or two spines; senders spread over both
                 leaves, the receiver (and an optional background sender) on leaf 1.

Hosts are 10.0.0.x/8 with static ARP; every switch routes /32 host routes
(next-hop MAC rewrite). The bottleneck is the BMv2 egress queue toward the
receiver: its drain rate (`queue_rate_pps`) is set below what BMv2 can forward
on this machine and its depth (`queue_pkts`) is shallow; host links are
htb-shaped above the bottleneck so the queue builds in the switch, not in a
host qdisc. This kernel has no netem, so links add no delay: the base RTT is
what BMv2 and the veths take (docs/testbed.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mininet.topo import Topo

RECEIVER = "r"
BACKGROUND = "bg"


def host_ip(index: int) -> str:
    """10.0.0.x for host index x (1 = receiver)."""
    return f"10.0.{index // 250}.{index % 250 + 1}"


def host_mac(index: int) -> str:
    """Locally administered unicast MAC for host index x (never all-zero)."""
    return f"02:00:00:00:{index // 256:02x}:{index % 256:02x}"


def port_mac(switch_no: int, port: int) -> str:
    return f"00:aa:{switch_no:02x}:00:{port // 256:02x}:{port % 256:02x}"


@dataclass(frozen=True)
class LinkShape:
    """Host link shaping (htb) and the bottleneck queue, all tunable per run."""

    host_mbps: float = 100.0  # htb rate of every host link, Mbit/s
    queue_pkts: int = 64  # BMv2 egress queue depth toward the receiver, packets
    queue_rate_pps: int | None = 2000  # its drain rate, packets/s (None: BMv2's own speed)


class IncastStar(Topo):
    """N senders (h1..hN) and a receiver r under one ToR s1.

    Ports: r on 1, sender i on i + 1, optional background sender on N + 2.
    """

    def build(
        self, n: int = 4, host_mbps: float = 100.0, background: bool = False, **_unused: Any
    ) -> None:
        if not 1 <= n <= 64:
            raise ValueError(f"incast_star: n={n} outside 1..64")
        s1 = self.addSwitch("s1")
        link = {"bw": host_mbps}
        self.addHost(RECEIVER, ip=host_ip(0) + "/8", mac=host_mac(0))
        self.addLink(RECEIVER, s1, port2=1, **link)
        for i in range(1, n + 1):
            h = self.addHost(f"h{i}", ip=host_ip(i) + "/8", mac=host_mac(i))
            self.addLink(h, s1, port2=i + 1, **link)
        if background:
            self.addHost(BACKGROUND, ip=host_ip(n + 1) + "/8", mac=host_mac(n + 1))
            self.addLink(BACKGROUND, s1, port2=n + 2, **link)


class LeafSpine(Topo):
    """Two leaves (s1, s2) and one or two spines (s3, s4).

    Leaf ports: 1..2 uplinks to spines; hosts from 3. The receiver (and the
    background sender) sit on leaf s1; senders alternate s2, s1, s2, ...
    """

    def build(
        self,
        n: int = 4,
        spines: int = 2,
        host_mbps: float = 100.0,
        background: bool = False,
        **_unused: Any,
    ) -> None:
        if not 1 <= n <= 64 or spines not in (1, 2):
            raise ValueError(f"leaf_spine: n={n} (1..64), spines={spines} (1 or 2)")
        leaves = [self.addSwitch("s1"), self.addSwitch("s2")]
        spine_sw = [self.addSwitch(f"s{3 + j}") for j in range(spines)]
        link = {"bw": host_mbps}
        for j, sp in enumerate(spine_sw):
            for li, leaf in enumerate(leaves):
                self.addLink(leaf, sp, port1=1 + j, port2=1 + li, **link)
        next_port = {leaves[0]: 3, leaves[1]: 3}

        def attach(name: str, index: int, leaf: str) -> None:
            self.addHost(name, ip=host_ip(index) + "/8", mac=host_mac(index))
            self.addLink(name, leaf, port2=next_port[leaf], **link)
            next_port[leaf] += 1

        attach(RECEIVER, 0, leaves[0])
        for i in range(1, n + 1):
            attach(f"h{i}", i, leaves[1] if i % 2 else leaves[0])
        if background:
            attach(BACKGROUND, n + 1, leaves[1])


topos = {"incast_star": IncastStar, "leaf_spine": LeafSpine}


@dataclass(frozen=True)
class PortPlan:
    """One switch port: its MAC, and on the way to the receiver its queue."""

    port: int
    mac: str
    toward_receiver: bool  # the scheme's ECN policy applies here
    queue_depth: int | None  # packets; None: BMv2's default
    queue_rate: int | None  # packets/s; None: BMv2's own speed


@dataclass(frozen=True)
class HostRoute:
    """A host's /32: out of `port`, to next-hop MAC `dmac`."""

    prefix: str
    port: int
    dmac: str


@dataclass(frozen=True)
class SwitchPlan:
    """One switch of a started network: how to reach it, its ports, its routes.
    The engine turns it into the controller's config (with the ECN policy)."""

    address: str  # P4Runtime gRPC
    device_id: int
    thrift_port: int
    ports: tuple[PortPlan, ...]
    routes: tuple[HostRoute, ...]


def switch_plans(net: Any, *, shape: LinkShape) -> dict[str, SwitchPlan]:
    """Ports and routes per switch of a started Mininet `net` (Bmv2GrpcSwitch nodes).

    Host routes everywhere: a switch sends a host's /32 to the port toward it
    (direct, or up to a spine chosen by host index, or down from a spine).
    The ECN policy and the shallow queue apply to every port on the way to the
    receiver (on leaf-spine also the spine ports toward leaf 1); the drain rate
    only to the last hop, the receiver's ToR port: that is the one bottleneck,
    the fabric runs at BMv2's own speed.
    """
    receiver = net.get(RECEIVER)
    plans: dict[str, SwitchPlan] = {}
    for sw_no, sw in enumerate(net.switches, start=1):
        ports: list[PortPlan] = []
        toward_receiver = _port_toward(net, sw, receiver)
        for intf in sw.intfList():
            if intf.name == "lo":
                continue
            port = sw.ports[intf]
            hot = port == toward_receiver
            last_hop = hot and _peer_on(sw, port).node is receiver
            ports.append(
                PortPlan(
                    port=port,
                    mac=port_mac(sw_no, port),
                    toward_receiver=hot,
                    queue_depth=shape.queue_pkts if hot else None,
                    queue_rate=shape.queue_rate_pps if last_hop else None,
                )
            )
        routes: list[HostRoute] = []
        for host in net.hosts:
            port = _port_toward(net, sw, host)
            peer = _peer_on(sw, port)
            routes.append(HostRoute(prefix=f"{host.IP()}/32", port=port, dmac=peer.MAC()))
        plans[sw.name] = SwitchPlan(
            address=sw.grpc_addr,
            device_id=sw.device_id,
            thrift_port=sw.thrift_port,
            ports=tuple(ports),
            routes=tuple(routes),
        )
    return plans


def _peer_on(sw: Any, port: int) -> Any:
    """The interface at the other end of switch port `port`."""
    intf = next(i for i in sw.intfList() if i.name != "lo" and sw.ports[i] == port)
    link = intf.link
    return link.intf2 if link.intf1 is intf else link.intf1


def _neighbours(sw: Any) -> dict[int, Any]:
    """Switch port -> the node at its other end."""
    return {sw.ports[i]: _peer_on(sw, sw.ports[i]).node for i in sw.intfList() if i.name != "lo"}


def _hops_to(net: Any, host: Any) -> dict[Any, int]:
    """Hop count from every node to `host`, over the network's links (BFS)."""
    dist = {host: 0}
    frontier = [host]
    while frontier:
        nxt = []
        for node in frontier:
            for intf in node.intfList():
                if intf.link is None:
                    continue
                peer = intf.link.intf2.node if intf.link.intf1 is intf else intf.link.intf1.node
                if peer not in dist:
                    dist[peer] = dist[node] + 1
                    nxt.append(peer)
        frontier = nxt
    return dist


def _port_toward(net: Any, sw: Any, host: Any) -> int:
    """Switch port on a shortest path from `sw` toward `host`, derived from the graph.

    Among equal-cost next hops (leaf-spine uplinks) the host's last address
    byte picks one, so each host's traffic stays on one path (ECMP by host)."""
    dist = _hops_to(net, host)
    here = dist[sw]
    best = sorted(p for p, peer in _neighbours(sw).items() if dist.get(peer, here) == here - 1)
    if not best:
        raise ValueError(f"{sw.name} has no path to {host.name}")
    return best[int(host.IP().split(".")[-1]) % len(best)]


def receiver_switch(net: Any) -> Any:
    """The switch the receiver hangs off (its ToR): where the incast bottleneck is."""
    link = net.get(RECEIVER).intf().link
    return link.intf2.node if link.intf1.node.name == RECEIVER else link.intf1.node
