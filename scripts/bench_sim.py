"""Benchmark: simulated seconds per wall-clock second of the ns-3 engine (target > 1).

Incast at N = 100 servers (default), 1 Gbps links, 25 µs per link, 64 KB
buffer, SRU 64 KB per server, 20 barrier rounds, for a few schemes. The
bottleneck is busy for most of the run, so this is close to the engine's
slowest case (idle RTO waits cost no wall time). Prints, per scheme, the
simulated seconds, the wall seconds, their ratio, the packets through the
bottleneck per wall second, the CPU seconds this process used and the CPU
microseconds per bottleneck packet (the machine may be shared: wall time then
includes other people's work; CPU time much less so). Also prints how long
loading ns-3 and compiling the model took (once per process).

Then the floor (skip with --no-floor): ns-3's own TCP over ONE point-to-point
link, no project code at all (BulkSend -> PacketSink, the model's TCP settings,
1 Gbps, 25 us), in CPU microseconds per delivered packet and simulated seconds
per CPU second. A model with a switch between sender and receiver does at least
that work per packet, so the floor bounds what this ns-3 build can reach on
this machine (sim/MODEL.md, "Speed").

    .venv/bin/python scripts/bench_sim.py [--n 100] [--rounds 20] [--schemes a,b] [--no-floor]

Needs ns-3 (pip install ns3); prints why when it cannot run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from p4incast.engines.sim import ENGINE
from p4incast.model.scheme import App, Point, Scheme
from p4incast.sim import engine, native

SCHEMES = {
    "droptail": {"ecn": "off", "k": 0, "cc": "reno", "agent": "off"},
    "mark-tail": {"ecn": "tail", "k": 20, "cc": "dctcp", "agent": "off"},
    "mark-front": {"ecn": "front", "k": 20, "cc": "newdctcp", "agent": "off"},
    "front+rx": {"ecn": "front", "k": 20, "cc": "reno", "agent": "newdctcp-rx"},
    "ictcp": {"ecn": "off", "k": 0, "cc": "reno", "agent": "ictcp"},
    "rcc": {"ecn": "front", "k": 20, "cc": "reno", "agent": "rcc"},
    "batching": {"ecn": "off", "k": 0, "cc": "reno", "agent": "off", "batching": True},
}


# ns-3 alone: one sender, one link, one receiver; the model's TCP settings.
FLOOR_CPP = r"""
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

namespace p4i_floor
{
using namespace ns3;

// Simulates `simS` seconds of a bulk TCP transfer; returns the bytes delivered.
inline uint64_t
Run(double simS)
{
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(8u << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(256u << 10));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    ObjectFactory sched;
    sched.SetTypeId("ns3::PriorityQueueScheduler");
    Simulator::SetScheduler(sched);
    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    p2p.SetDeviceAttribute("InterframeGap", TimeValue(NanoSeconds(384)));
    p2p.SetChannelAttribute("Delay", StringValue("25us"));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1000p")); // no loss
    NetDeviceContainer devs = p2p.Install(nodes);
    InternetStackHelper stack;
    stack.Install(nodes);
    for (uint32_t i = 0; i < 2; i++)
    {
        nodes.Get(i)->GetObject<TcpL4Protocol>()->SetAttribute(
            "SocketType", TypeIdValue(TcpLinuxReno::GetTypeId()));
    }
    Ipv4AddressHelper addr("10.9.0.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addr.Assign(devs);
    TrafficControlHelper().Uninstall(devs); // no queue disc (Assign adds one), as in the model
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
    ApplicationContainer rx = sink.Install(nodes.Get(1));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(1), 9));
    bulk.SetAttribute("SendSize", UintegerValue(65536));
    bulk.Install(nodes.Get(0));
    Simulator::Stop(Seconds(simS));
    Simulator::Run();
    uint64_t bytes = DynamicCast<PacketSink>(rx.Get(0))->GetTotalRx();
    Simulator::Destroy();
    return bytes;
}
} // namespace p4i_floor
"""


def floor(sim_s: float = 0.3) -> tuple[float, float]:
    """(CPU microseconds per delivered packet, simulated seconds per CPU second) of ns-3's
    own TCP over one point-to-point link, no project code."""
    import cppyy

    if not hasattr(cppyy.gbl, "p4i_floor"):
        cppyy.cppdef(FLOOR_CPP)
    cppyy.gbl.p4i_floor.Run(0.01)  # compiles the rest lazily
    cpu0 = time.process_time()
    nbytes = int(cppyy.gbl.p4i_floor.Run(sim_s))
    cpu = time.process_time() - cpu0
    return cpu / (nbytes / 1448) * 1e6, sim_s / cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--n", type=int, default=100, help="servers (default 100)")
    ap.add_argument("--rounds", type=int, default=20, help="barrier rounds (default 20)")
    ap.add_argument("--sru", type=int, default=65536, help="bytes per server per round")
    ap.add_argument(
        "--schemes",
        default="droptail,mark-front",
        help=f"comma-separated, from {','.join(SCHEMES)} (default droptail,mark-front)",
    )
    ap.add_argument("--no-floor", action="store_true", help="skip the ns-3-only floor")
    args = ap.parse_args()
    names = [s for s in args.schemes.split(",") if s]
    bad = [s for s in names if s not in SCHEMES]
    if bad:
        print(f"bench_sim: unknown scheme(s) {', '.join(bad)}; choose from {', '.join(SCHEMES)}")
        return 2
    ok, why = native.available()
    if not ok:
        print(f"bench_sim: cannot run: {why}")
        return 0
    t = time.monotonic()
    ENGINE.worker_init()  # engine.init_worker(), cling's start-up notes kept off the terminal
    print(
        f"sim: ns-3 import + model compile + warm-up run: {time.monotonic() - t:.1f} s "
        "(once per process)"
    )
    print(f"sim: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    ratios = []
    for name in names:
        sch = Scheme(name, **SCHEMES[name])
        point = Point(sch, args.n, app=App(args.sru, rounds=args.rounds))
        cpu0 = time.process_time()
        run = engine.run_point(point).record()
        cpu = time.process_time() - cpu0
        if run["status"] != "ok":
            print(f"sim N={args.n} {name}: FAILED: {run['error']}")
            return 1
        sim_s, wall = run["sim_s"], run["wall_s"]
        pkts = run["switch"]["ports"][engine.BOTTLENECK_PORT]["egress"]
        ratio = sim_s / wall
        ratios.append(ratio)
        rto = sum(r["rto"] for r in run["rounds"])
        print(
            f"sim N={args.n} {name:10s}: {sim_s:.3f} simulated s in {wall:.2f} s wall "
            f"({cpu:.2f} s CPU) -> {ratio:.3f} sim-s per wall-s, {sim_s / cpu:.3f} per CPU-s; "
            f"{pkts / wall:,.0f} bottleneck packets per wall-s, {cpu / pkts * 1e6:.1f} us CPU "
            f"per bottleneck packet; {rto}/{args.rounds} RTO rounds"
        )
    print(
        f"sim: simulated seconds per wall-clock second at N={args.n}, 1 Gbps: "
        f"{min(ratios):.3f} (slowest scheme), target > 1"
    )
    if not args.no_floor:
        us, per_cpu = floor()
        print(
            f"sim: floor, ns-3 alone (one 1 Gbps link, bulk TCP, no project code): "
            f"{us:.1f} us CPU per packet -> {per_cpu:.3f} sim-s per CPU-s with the link busy"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
