// p4-incast simulator: one incast run — topology, hosts, incast application,
// counters (docs/algorithms.md "The problem", §6; experiments/SCHEMA.md).
//
// Topology (as topologies/incast.py builds it for BMv2):
//  - incast_star: N servers and the receiver on one ToR;
//  - leaf_spine: two leaves, `spines` spines, every leaf on every spine; the
//    receiver and even-numbered servers on leaf 0, odd servers (and the
//    background host) on leaf 1; ns-3 global routing (one path, no ECMP).
// Links: point-to-point, `linkBps`, `delayUs` one way, an inter-frame gap that
// makes a full 1500-byte IP packet take 1538 bytes of wire time (Ethernet
// header, FCS, preamble, IFG; and the 12 bytes of TCP timestamp option the
// model does not carry — timestamps are off so that RTT samples are exact, the
// segment size `segSize` is 1448 as with timestamps on, or a smaller
// transport.mss_bytes, whose packets carry the same gap). Every switch egress
// port has an EcnQueue with `bufferBytes`; ports facing the receiver (the receiver's leaf/
// ToR port, spine ports toward leaf 0) get the ECN mode and K, as on BMv2.
//
// Incast application (apps/incast.py): persistent TCP connections from the
// client (receiver) to each server; each round the client asks every server
// (at its batch offset, seed 003) for `size` bytes; a server answers with a
// 16-byte header and `size` bytes after a uniform [0, jitterUs] think time;
// the round ends when the last byte arrives, and the next round starts then.
// With perRoundConnections (app.connections: per-round) the client instead
// opens a new connection to every server at each round's start (at its batch
// offset): handshake, request, response, and the client closes it when the
// last byte has arrived (the server closes its end on the FIN); each round's
// first flight is then the initial window, and a flow's FCT includes the
// handshake. TIME_WAIT is 2·MSL = 2 ms (Linux: 60 s; a waiting socket costs
// nothing there, but ns-3 scans a host's endpoints linearly for every packet).
// timeouts = RTOs of the servers' sockets in the round (entries into CA_LOSS),
// retrans = segments sent again.
#ifndef P4INCAST_SIM_SCENARIO_H
#define P4INCAST_SIM_SCENARIO_H

#include "ecn_queue.h"
#include "rx_agent.h"
#include "switch_budget.h"
#include "tcp_newdctcp.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace p4i
{
using namespace ns3;

// A run's settings. The first group is Python's to set: sim/engine.py
// (run_config, hosts_config) sets every one of those fields from p4incast.model
// and the agent's AgentConfig, so their defaults live in Python only and here
// they are zero (sim/atscale.py sets the ones the at-scale scenario reads). A
// run built by hand starts from run_config(Point) as well (tests/sim,
// scripts/round_windows.py). The second group is the model's own, with its
// defaults here; the engine leaves it alone. tests/sim/test_sim_model_port.py
// checks that the engine sets exactly the fields without a default here.
struct RunConfig
{
    // -- set by sim/engine.py ----------------------------------------------
    int n = 0;
    std::string topo; // incast_star | leaf_spine
    int spines = 0;
    bool background = false;
    double linkBps = 0;
    double delayUs = 0;
    uint64_t bufferBytes = 0;
    uint64_t sharedBufferBytes = 0; // > 0: one shared buffer per switch replaces bufferBytes
    double dtAlpha = 0;             // its dynamic-threshold alpha
    double rtoMinMs = 0;
    int ecnMode = 0;                // ECN_OFF | MARK_TAIL | MARK_FRONT
    uint32_t k = 0;
    std::string cc; // reno | cubic | bbr | dctcp | newdctcp
    int agent = 0;  // RxPolicy
    uint32_t agentInitSegs = 0; // the receiver agent's settings: p4incast/policies/config.py
    uint32_t agentMinSegs = 0;
    uint64_t agentMaxW = 0;
    uint64_t agentBudgetBytes = 0; // newdctcp-budget: B
    bool agentRotate = false;      // newdctcp-budget: windows below one segment in turns
    uint64_t agentAckCost = 0;     // rotation: the budget an acknowledgment due takes, bytes
    double agentTickS = 0;         // the agent's tick (rotation's stale holders, free slots)
    bool agentClearEce = false;    // clear ECE on the ACKs of controlled flows (§3.7)
    uint32_t agentSharePkts = 0;   // rcc: a new flow's window = its share of this Q
    uint64_t ackQueueBytes = 0;    // > 0: RCC's ACK queue, in-flight cap in bytes
    uint64_t sizeBytes = 0;        // per server per round
    int rounds = 0;
    std::vector<double> offsets; // seconds, per server (batching); empty = all at 0
    double jitterUs = 0;
    uint32_t seed = 0; // 0 counts as 1
    uint32_t run = 0;  // 0 counts as 1
    uint32_t segSize = 0;
    uint32_t gapBytes = 0; // wire bytes per packet beyond its own: wire.MODEL_GAP_BYTES
    uint32_t initCwnd = 0;
    uint32_t delAckCount = 0; // 1 = no delayed ACK
    double dctcpG = 0;        // DCTCP's gain g (ns3::TcpDctcp::DctcpShiftG)
    bool restartEachRound = false; // reno/dctcp/newdctcp: cwnd back to IW at each round
    uint32_t minCwndSegs = 0;      // dctcp/newdctcp: the window floor of an ECN cut, segments
    bool perRoundConnections = false; // app.connections: per-round (a new connection per round)
    double delAckTimeoutMs = 0;
    double synRtoMs = 0; // SYN retransmission timeout (ns-3 ConnTimeout)
    uint32_t dataRetries = 0; // retransmissions of a segment before the connection gives up
    bool sack = false;   // selective ACKs (transport.sack); off: NewReno recovery (SenderCc)
    uint32_t advWindowSegs = 0; // > 0: every receiver advertises at most this many segments
    double maxSimS = 0;  // give up after this much simulated time
    // the receiver's budget held by its ToR (switch_budget.h): B, 0 = off; the
    // segment of its shares; the flow table's slots; the epoch; the switch's tick
    uint64_t switchBudgetBytes = 0;
    uint32_t switchMss = 0;
    uint32_t switchFlowSlots = 0;
    uint32_t switchEpochTicks = 0;
    double switchTickS = 0;

    // -- the model's own -----------------------------------------------------
    // Receive buffer = the largest window a receiver offers. Bounds a long
    // flow's window (ns-3 has no TSQ: a sender's NIC queue would otherwise
    // grow with cwnd without limit).
    uint32_t rcvBufBytes = 256u << 10;
    double mslS = 0.001;      // TCP's maximum segment lifetime (TIME_WAIT = 2 MSL)
    double seriesBinUs = 100; // 0 = no depth series
    double startS = 0.005;    // first round, after the handshakes
    // Event queue: std::priority_queue on (time, uid) — the same event order as
    // the heap (results are identical), ~7-10% less CPU per run (sim/MODEL.md, Speed).
    std::string scheduler = "ns3::PriorityQueueScheduler";
};

struct RoundResult
{
    double start = 0, completion = 0;
    uint64_t bytes = 0;
    std::vector<double> fct;
    uint64_t timeouts = 0, retrans = 0;
    // the bottleneck queue over this round alone: drops, CE marks, the time-average
    // and the most packets waiting, and the enqueue-depth histogram
    uint64_t drops = 0, marked = 0;
    double meanDepth = 0;
    uint32_t maxDepth = 0;
    std::vector<uint64_t> hist;
};

struct Flow
{
    int idx = 0;
    Ptr<Socket> cli, srv;
    Ipv4Address srvAddr;
    uint64_t want = 0, got = 0, pending = 0, reqBytes = 0;
    double reqAt = 0, doneAt = 0;
    bool done = true, connected = false;
    uint32_t maxSeqEnd = 0;
    bool seqInit = false;
    uint64_t timeouts = 0, retrans = 0;
    double minRtt = 1e9, lastRtt = 0;
    uint32_t cwnd = 0, inflight = 0, rwnd = 0, congState = 0; // last traced values (debug)
};

// The flows ReadFlowChanges last reported (pkts > 0), ascending keys, with the
// counters reported: one per PolicyStepper.
struct FlowsSeen
{
    std::vector<uint64_t> keys;
    std::vector<uint64_t> bytes;
    std::vector<double> rtt;
    bool read = false;      // read once: the epochs below are the agent's then
    uint64_t flowEpoch = 0; // RxAgent::flowEpoch and g_rttEpoch at that read
    uint64_t rttEpoch = 0;
    bool unwritten = false; // a flow then had no window written (userW 0)
};

// What sim/engine.py PolicyStepper reads of an agent at an ICTCP step, in one
// call and into the caller's arrays (Python array.array: cppyy converts a
// std::vector element by element, ~150 ns an item, which at N = 1000 costs
// more than the simulation itself), of the flows that have sent data (pkts >
// 0), told only what moved since the previous call on `seen` (ICTCP's
// Ictcp.step_changes; `rtt` is RxAgent::srtt, 0 if unknown): the flows new,
// or whose bytes or RTT changed, or whose written window the agent dropped (a
// new connection on the key: userW 0), and with gone[i] = 1 those no longer
// reported, in ascending key order. Returns
// their number. The arrays need room for every flow of the agent and of
// `seen`: with less than that (`cap`) nothing is read and that room is
// returned, so the caller grows its arrays and calls again. `seen` is updated
// in place; rebuilt only when a flow came or went. When no flow came, went or
// received a packet and no RTT moved since the last read (the epochs), and
// every flow had a window then, nothing changed: no scan (most steps of a
// large incast, whose flows wait out their RTOs).
inline size_t
ReadFlowChanges(RxAgent& a,
                FlowsSeen& seen,
                uint64_t* keys,
                uint64_t* bytes,
                double* rtt,
                int32_t* gone,
                size_t cap)
{
    if (seen.read && !seen.unwritten && seen.flowEpoch == a.flowEpoch &&
        seen.rttEpoch == g_rttEpoch)
    {
        return 0;
    }
    size_t room = a.flows.size() + seen.keys.size();
    if (room > cap)
    {
        return room;
    }
    size_t n = 0;
    size_t i = 0;
    bool moved = false; // a flow came or went: `seen` is rebuilt
    seen.read = true;
    seen.flowEpoch = a.flowEpoch;
    seen.rttEpoch = g_rttEpoch;
    seen.unwritten = false;
    auto emit = [&](uint64_t k, uint64_t b, double r, int32_t g) {
        keys[n] = k;
        bytes[n] = b;
        rtt[n] = r;
        gone[n] = g;
        n++;
    };
    for (const auto& kv : a.flows)
    {
        const RxFlow& f = kv.second;
        if (!f.pkts)
        {
            continue;
        }
        uint64_t k = kv.first;
        for (; i < seen.keys.size() && seen.keys[i] < k; i++)
        {
            emit(seen.keys[i], 0, 0.0, 1);
            moved = true;
        }
        double r = a.srtt(k);
        seen.unwritten |= !f.userW;
        if (i < seen.keys.size() && seen.keys[i] == k)
        {
            if (seen.bytes[i] != f.bytes || seen.rtt[i] != r || !f.userW)
            {
                emit(k, f.bytes, r, 0);
                seen.bytes[i] = f.bytes;
                seen.rtt[i] = r;
            }
            i++;
        }
        else
        {
            emit(k, f.bytes, r, 0);
            moved = true;
        }
    }
    for (; i < seen.keys.size(); i++)
    {
        emit(seen.keys[i], 0, 0.0, 1);
        moved = true;
    }
    if (moved)
    {
        seen.keys.clear();
        seen.bytes.clear();
        seen.rtt.clear();
        for (const auto& kv : a.flows)
        {
            if (kv.second.pkts)
            {
                seen.keys.push_back(kv.first);
                seen.bytes.push_back(kv.second.bytes);
                seen.rtt.push_back(a.srtt(kv.first));
            }
        }
    }
    return n;
}

// The flows ReadRccChanges last reported (pkts > 0), ascending keys, with the
// values reported: one per PolicyStepper. next*: the table being built.
struct RccSeen
{
    std::vector<uint64_t> keys, pkts, ce, nextKeys, nextPkts, nextCe;
    std::vector<double> rtt, nextRtt;
    std::vector<int32_t> waits, nextWaits;
    std::vector<uint64_t> held; // keys with an ACK held, sorted (a scan's)
    bool read = false; // read once: the epochs below are the agent's then
    uint64_t flowEpoch = 0;
    uint64_t rttEpoch = 0;
    uint64_t waitsEpoch = 0;
    bool unwritten = false; // a flow then had no window written (userW 0)
};

// ReadFlowChanges for RCC (Rcc.step_changes), which reads besides packets, CE
// and the RTT whether the flow waits (RxAgent::Waits; 0 without the ACK
// queue): the flows new, or whose pkts, ce, RTT or waits changed,
// or whose written window the agent dropped (a new connection on the key:
// userW 0), and with gone[i] = 1 those no longer reported, in ascending key
// order. Returns their number. The arrays need room for every flow of the
// agent and of `seen`: with less than that (`cap`) nothing is read and that
// room is returned, so the caller grows its arrays and calls again. When no
// flow came, went or received a packet, no RTT moved and nothing Waits reads
// moved since the last read (RxAgent::flowEpoch, g_rttEpoch,
// RxAgent::waitsEpoch), and every flow had a window then, nothing changed: no
// scan. srtt is asked again only when g_rttEpoch moved, or of a new flow.
inline size_t
ReadRccChanges(RxAgent& a,
               RccSeen& seen,
               uint64_t* keys,
               uint64_t* pkts,
               uint64_t* ce,
               double* rtt,
               int32_t* waits,
               int32_t* gone,
               size_t cap)
{
    if (seen.read && !seen.unwritten && seen.flowEpoch == a.flowEpoch &&
        seen.rttEpoch == g_rttEpoch && seen.waitsEpoch == a.waitsEpoch)
    {
        return 0;
    }
    size_t room = a.flows.size() + seen.keys.size();
    if (room > cap)
    {
        return room;
    }
    bool rttMoved = !seen.read || seen.rttEpoch != g_rttEpoch;
    seen.read = true;
    seen.flowEpoch = a.flowEpoch;
    seen.rttEpoch = g_rttEpoch;
    seen.waitsEpoch = a.waitsEpoch;
    seen.unwritten = false;
    seen.held.clear();
    if (a.ackQueueCap > 0)
    {
        seen.held = a.HeldKeys();
        std::sort(seen.held.begin(), seen.held.end());
    }
    seen.nextKeys.clear();
    seen.nextPkts.clear();
    seen.nextCe.clear();
    seen.nextRtt.clear();
    seen.nextWaits.clear();
    size_t n = 0;
    size_t i = 0;
    auto emit = [&](uint64_t k, uint64_t p, uint64_t c, double r, int32_t w, int32_t g) {
        keys[n] = k;
        pkts[n] = p;
        ce[n] = c;
        rtt[n] = r;
        waits[n] = w;
        gone[n] = g;
        n++;
    };
    for (const auto& kv : a.flows)
    {
        const RxFlow& f = kv.second;
        if (!f.pkts)
        {
            continue;
        }
        uint64_t k = kv.first;
        for (; i < seen.keys.size() && seen.keys[i] < k; i++)
        {
            emit(seen.keys[i], 0, 0, 0.0, 0, 1);
        }
        // RxAgent::Waits, with the held keys looked up once per scan
        int32_t w = a.ackQueueCap > 0 && RxAgent::InFlight(f) > 0 &&
                    !std::binary_search(seen.held.begin(), seen.held.end(), k);
        seen.unwritten |= !f.userW;
        double r;
        if (i < seen.keys.size() && seen.keys[i] == k)
        {
            r = rttMoved ? a.srtt(k) : seen.rtt[i];
            if (seen.pkts[i] != f.pkts || seen.ce[i] != f.ce || seen.rtt[i] != r ||
                seen.waits[i] != w || !f.userW)
            {
                emit(k, f.pkts, f.ce, r, w, 0);
            }
            i++;
        }
        else
        {
            r = a.srtt(k);
            emit(k, f.pkts, f.ce, r, w, 0);
        }
        seen.nextKeys.push_back(k);
        seen.nextPkts.push_back(f.pkts);
        seen.nextCe.push_back(f.ce);
        seen.nextRtt.push_back(r);
        seen.nextWaits.push_back(w);
    }
    for (; i < seen.keys.size(); i++)
    {
        emit(seen.keys[i], 0, 0, 0.0, 0, 1);
    }
    seen.keys.swap(seen.nextKeys);
    seen.pkts.swap(seen.nextPkts);
    seen.ce.swap(seen.nextCe);
    seen.rtt.swap(seen.nextRtt);
    seen.waits.swap(seen.nextWaits);
    return n;
}

// The windows a policy step wrote, in one call (RxAgent::SetUserWindow each),
// from the caller's arrays of `n` items.
inline void
SetUserWindows(RxAgent& a, const uint64_t* keys, const uint64_t* w, size_t n)
{
    for (size_t i = 0; i < n; i++)
    {
        a.SetUserWindow(keys[i], w[i]);
    }
}

// ns-3 defaults for a run's TCP, ECN, event scheduler and random streams: one
// place for every scenario (the incast here, the at-scale fabric in atscale.h).
inline void
ApplyDefaults(const RunConfig& c)
{
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(c.segSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(c.initCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(c.delAckCount));
    Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(c.dctcpG));
    g_restartEachRound = c.restartEachRound;
    g_minCwndSegs = c.minCwndSegs;
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout",
                       TimeValue(MicroSeconds(c.delAckTimeoutMs * 1000)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(8u << 20));
    // A receiver's advertised window is its free receive buffer: a cap of
    // advWindowSegs segments is a buffer of that many (ns-2's Agent/TCP window_).
    Config::SetDefault("ns3::TcpSocket::RcvBufSize",
                       UintegerValue(c.advWindowSegs ? c.advWindowSegs * c.segSize
                                                     : c.rcvBufBytes));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(c.sack));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(MicroSeconds(c.synRtoMs * 1000)));
    // Linux's tcp_retries2 (sim/engine.py TCP_RETRIES2): ns-3's own 6 kills flows
    // that a deep incast times out 6 times in a row, and their round never ends.
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(c.dataRetries));
    Config::SetDefault("ns3::TcpSocketBase::MaxSegLifetime", DoubleValue(c.mslS));
    Config::SetDefault("ns3::TcpSocketBase::MinRto",
                       TimeValue(MicroSeconds(c.rtoMinMs * 1000)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(100)));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn",
                       EnumValue(c.ecnMode == ECN_OFF ? TcpSocketState::Off
                                                        : TcpSocketState::On));
    ObjectFactory sched;
    sched.SetTypeId(c.scheduler);
    Simulator::SetScheduler(sched);
    RngSeedManager::SetSeed(c.seed ? c.seed : 1);
    RngSeedManager::SetRun(c.run ? c.run : 1);
}

inline TypeId
CcType(const std::string& cc)
{
    if (cc == "dctcp")
    {
        return TcpDctcpLinux::GetTypeId();
    }
    if (cc == "newdctcp")
    {
        return TcpNewDctcp::GetTypeId();
    }
    if (cc == "cubic")
    {
        return TcpCubic::GetTypeId();
    }
    if (cc == "bbr")
    {
        return TcpBbr::GetTypeId();
    }
    return TcpRenoP4i::GetTypeId();
}

// A sending host's TCP runs `cc`, on sockets made by CreateSenderSocket
// (tcp_sender_socket.h: the senders' TcpSocketBase, as the conformance lab's).
// `sack` false: NewReno's recovery (RFC 6582) for every cc — ns-3's classic
// recovery (cwnd = ssthresh, inflated by the duplicate ACKs), whose partial
// ACKs TcpSocketBase answers by retransmitting the next hole.
inline void
SenderCc(Ptr<Node> host, const std::string& cc, bool sack = true)
{
    Ptr<TcpL4Protocol> l4 = host->GetObject<TcpL4Protocol>();
    l4->SetAttribute("SocketType", TypeIdValue(CcType(cc)));
    if (cc == "newdctcp" || !sack)
    {
        // ns-3's PRR spreads a CWR episode's cut over the RTT from the
        // ssthresh set at its start, and sets cwnd on every ACK after the
        // congestion ops have seen it; NewDCTCP cuts at the window's end, so
        // CWR (and loss recovery) use classic recovery: cwnd = ssthresh
        // (tcp_newdctcp.h).
        l4->SetAttribute("RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
    }
}

// A receiving host echoes CE exactly (DCTCP's receiver) when its senders run
// dctcp/newdctcp, the RFC 3168 way otherwise.
inline void
ReceiverCc(Ptr<Node> host, const std::string& cc)
{
    bool exactEcho = cc == "dctcp" || cc == "newdctcp";
    host->GetObject<TcpL4Protocol>()->SetAttribute(
        "SocketType",
        TypeIdValue(exactEcho ? TcpDctcpLinux::GetTypeId() : TcpLinuxReno::GetTypeId()));
}

// The receiver agent of a receiving host, from the run's settings, on its NIC
// `nic` (whose queue `q` passes every ACK through the agent's Egress).
inline void
AttachAgent(RxAgent& a, const RunConfig& c, Ptr<PointToPointNetDevice> nic, Ptr<EcnQueue> q)
{
    a.policy = c.agent;
    a.mss = c.segSize;
    a.initSegs = c.agentInitSegs;
    a.minSegs = c.agentMinSegs;
    a.maxW = c.agentMaxW;
    a.budgetBytes = c.agentBudgetBytes;
    a.clearEce = c.agentClearEce;
    a.sharePkts = c.agentSharePkts;
    a.ackQueueCap = c.ackQueueBytes;
    a.rotate = c.agentRotate;
    a.rot.budget = c.agentBudgetBytes;
    a.rot.ackCost = c.agentAckCost;
    a.tickS = c.agentTickS;
    a.nic = nic;
    if (c.agent != RX_OFF)
    {
        q->hook = &a;
        nic->TraceConnectWithoutContext("MacRx", MakeCallback(&RxAgent::Ingress, &a));
    }
    if (a.Rotating() && a.tickS > 0)
    {
        Simulator::Schedule(Seconds(a.tickS), &RxAgent::RotTick, &a);
    }
}

// A point-to-point link a-b of `bps` and `delayUs` one way; returns (a's, b's)
// device. Wire time of a full packet = 1538 bytes: 1490 queued (PPP 2 + IP 20 +
// TCP 20 + 1448) + a `gapBytes` (48) gap (Ethernet's 38 bytes of framing, 12 of
// TCP timestamps); a segment of another size carries the same 48.
inline std::pair<Ptr<PointToPointNetDevice>, Ptr<PointToPointNetDevice>>
P2pLink(Ptr<Node> a, Ptr<Node> b, double bps, double delayUs, uint32_t gapBytes)
{
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(bps))));
    double gapS = static_cast<double>(gapBytes) * 8 / bps;
    p2p.SetDeviceAttribute("InterframeGap", TimeValue(NanoSeconds(std::llround(gapS * 1e9))));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(std::llround(delayUs * 1000))));
    NetDeviceContainer d = p2p.Install(a, b);
    return {DynamicCast<PointToPointNetDevice>(d.Get(0)), DynamicCast<PointToPointNetDevice>(d.Get(1))};
}

class Scenario
{
  public:
    RunConfig cfg;
    std::vector<RoundResult> results;
    std::string error;
    bool finished = false;
    double baseRtt = 0; // seconds, smallest RTT sample of any server
    std::vector<std::unique_ptr<Flow>> flows;
    Ptr<EcnQueue> bottleneck;
    std::vector<Ptr<EcnQueue>> hotQueues;
    RxAgent agent;
    SwitchBudget switchBudget;   // on the ToR's port toward the receiver
    Ptr<NetDevice> receiverPort; // that port: the receiver's packets enter by it
    uint64_t bgBytes = 0;
    bool debug = false;

    explicit Scenario(const RunConfig& c)
        : cfg(c)
    {
    }

    void Defaults()
    {
        ApplyDefaults(cfg);
    }

    // -- topology ------------------------------------------------------------
    // Switches are not IP routers: each is a node whose ports hand IPv4 packets
    // to a host-route table (destination address -> egress port), like the
    // P4 pipeline's IngressForwarding. No TTL, no checksum; the per-packet cost
    // stays O(1) however many ports a switch has.
    NodeContainer hosts; // 0 = receiver, 1..n = servers, n+1 = background
    NodeContainer switches;
    std::vector<Ptr<PointToPointNetDevice>> hostDev; // per host, its NIC
    std::vector<Ptr<EcnQueue>> hostQ;
    std::vector<int> hostLeaf;
    std::vector<std::map<uint32_t, Ptr<NetDevice>>> fib; // per switch
    std::vector<std::vector<Ptr<NetDevice>>> uplinks;    // per leaf, per spine

    std::vector<EcnQueue::SharedBuffer> pools; // per switch, when cfg.sharedBufferBytes > 0

    // The egress queue of `dev`; sw = the switch it belongs to, -1 for a host NIC.
    Ptr<EcnQueue> Attach(Ptr<PointToPointNetDevice> dev, int sw)
    {
        Ptr<EcnQueue> q = CreateObject<EcnQueue>();
        q->bufferBytes = sw >= 0 ? cfg.bufferBytes : 0;
        if (sw >= 0 && cfg.sharedBufferBytes)
        {
            q->shared = &pools.at(sw);
        }
        dev->SetQueue(q);
        return q;
    }

    // Link a-b; returns the two devices (a's, b's).
    std::pair<Ptr<PointToPointNetDevice>, Ptr<PointToPointNetDevice>> Link(Ptr<Node> a, Ptr<Node> b)
    {
        return P2pLink(a, b, cfg.linkBps, cfg.delayUs, cfg.gapBytes);
    }

    static Ipv4Address HostIp(int h)
    {
        return Ipv4Address((10u << 24) | (1u << 16) | static_cast<uint32_t>(h + 1));
    }

    Ipv4Address HostAddr(int h)
    {
        return HostIp(h);
    }

    void SwitchRx(Ptr<NetDevice> dev,
                  Ptr<const Packet> p,
                  uint16_t proto,
                  const Address&,
                  const Address&,
                  NetDevice::PacketType)
    {
        uint8_t b[20];
        if (p->CopyData(b, 20) < 20)
        {
            return;
        }
        uint32_t dst = (uint32_t(b[16]) << 24) | (uint32_t(b[17]) << 16) | (uint32_t(b[18]) << 8) | b[19];
        auto& table = fib[dev->GetNode()->GetId() - m_firstSwitchId];
        auto it = table.find(dst);
        if (it == table.end())
        {
            return;
        }
        Ptr<const Packet> zeroCopy;
        if (dev == receiverPort && switchBudget.On())
        {
            p = switchBudget.Ipv4(p, Simulator::Now().GetSeconds(), zeroCopy);
        }
        it->second->Send(p->Copy(), it->second->GetBroadcast(), proto);
        if (zeroCopy)
        {
            // the handshake's ACK again with window 0 (switch_budget.h): queued
            // behind the original on its port, so it leaves after it
            it->second->Send(zeroCopy->Copy(), it->second->GetBroadcast(), proto);
        }
    }

    uint32_t m_firstSwitchId = 0;

    void Build()
    {
        int nHosts = cfg.n + 1 + (cfg.background ? 1 : 0);
        bool star = cfg.topo != "leaf_spine";
        int nLeaves = star ? 1 : 2;
        int nSpines = star ? 0 : std::max(1, cfg.spines);
        hosts.Create(nHosts);
        switches.Create(nLeaves + nSpines);
        m_firstSwitchId = switches.Get(0)->GetId();
        fib.assign(nLeaves + nSpines, {});
        pools.assign(nLeaves + nSpines, {cfg.sharedBufferBytes, 0, cfg.dtAlpha});
        uplinks.assign(nLeaves, std::vector<Ptr<NetDevice>>(nSpines));
        InternetStackHelper stack;
        stack.Install(hosts);
        hostDev.resize(nHosts);
        hostQ.resize(nHosts);
        hostLeaf.resize(nHosts);
        // hosts, receiver first (its leaf port is port 1 there, the bottleneck)
        for (int h = 0; h < nHosts; h++)
        {
            int leaf = 0;
            if (!star)
            {
                leaf = (h == 0) ? 0 : (h == cfg.n + 1 ? 1 : (h % 2 ? 1 : 0));
            }
            hostLeaf[h] = leaf;
            auto d = Link(hosts.Get(h), switches.Get(leaf));
            hostDev[h] = d.first;
            hostQ[h] = Attach(d.first, -1);
            Ptr<EcnQueue> down = Attach(d.second, leaf);
            fib[leaf][HostIp(h).Get()] = d.second;
            if (h == 0)
            {
                bottleneck = down;
                hotQueues.push_back(down);
                receiverPort = d.second;
            }
            Ptr<Ipv4> ip = hosts.Get(h)->GetObject<Ipv4>();
            int32_t i = ip->AddInterface(d.first);
            ip->AddAddress(i, Ipv4InterfaceAddress(HostIp(h), Ipv4Mask("255.0.0.0")));
            ip->SetUp(i);
        }
        for (int s = 0; s < nSpines; s++)
        {
            for (int l = 0; l < nLeaves; l++)
            {
                auto d = Link(switches.Get(l), switches.Get(nLeaves + s));
                Attach(d.first, l);
                Ptr<EcnQueue> down = Attach(d.second, nLeaves + s);
                uplinks[l][s] = d.first;
                for (int h = 0; h < nHosts; h++)
                {
                    if (hostLeaf[h] == l)
                    {
                        fib[nLeaves + s][HostIp(h).Get()] = d.second;
                    }
                }
                if (l == 0)
                {
                    hotQueues.push_back(down); // spine port toward the receiver's leaf
                }
            }
        }
        // leaves: hosts elsewhere go up to the spine chosen by the host's index
        for (int l = 0; l < nLeaves && nSpines > 0; l++)
        {
            for (int h = 0; h < nHosts; h++)
            {
                if (hostLeaf[h] != l)
                {
                    fib[l][HostIp(h).Get()] = uplinks[l][h % nSpines];
                }
            }
        }
        // One handler for all of a switch's ports (null device = every device):
        // Node::ReceiveFromDevice walks its handler list for every packet, so one
        // entry per port would make that walk O(ports).
        for (uint32_t sw = 0; sw < switches.GetN(); sw++)
        {
            switches.Get(sw)->RegisterProtocolHandler(MakeCallback(&Scenario::SwitchRx, this),
                                                      0x0800,
                                                      nullptr);
        }
        for (auto& q : hotQueues)
        {
            q->mode = cfg.ecnMode;
            q->k = cfg.k;
        }
        bottleneck->seriesBinS = cfg.seriesBinUs * 1e-6;
        switchBudget.budgetBytes = cfg.switchBudgetBytes;
        switchBudget.mss = cfg.switchMss;
        switchBudget.slots = cfg.switchFlowSlots;
        switchBudget.epochTicks = cfg.switchEpochTicks;
        switchBudget.tickS = cfg.switchTickS;
        // receiver agent on the receiver's NIC
        AttachAgent(agent, cfg, hostDev[0], hostQ[0]);
        agent.srtt = [this](uint64_t key) { return FlowRtt(key); };
        // congestion control: servers and background host use cc; the receiver
        // echoes CE as the senders' scheme needs (ReceiverCc)
        for (int h = 1; h < nHosts; h++)
        {
            SenderCc(hosts.Get(h), cfg.cc, cfg.sack);
        }
        ReceiverCc(hosts.Get(0), cfg.cc);
    }

    // -- application ----------------------------------------------------------
    static constexpr uint16_t PORT = 5001;
    static constexpr uint16_t BG_PORT = 5002;
    static constexpr uint32_t REQ = 12, RESP_HDR = 16;
    Ptr<UniformRandomVariable> jitter;
    int round = -1;
    int remaining = 0;
    int connected = 0;
    uint64_t roundTimeouts0 = 0, roundRetrans0 = 0, roundDrops0 = 0, roundMarked0 = 0;
    double roundArea0 = 0;
    std::vector<uint64_t> roundHist0;
    Ptr<Socket> bgSock;
    std::vector<Ptr<Socket>> keep; // listening and accepted sockets

    uint64_t TotalTimeouts() const
    {
        uint64_t t = 0;
        for (auto& f : flows)
        {
            t += f->timeouts;
        }
        return t;
    }

    uint64_t TotalRetrans() const
    {
        uint64_t t = 0;
        for (auto& f : flows)
        {
            t += f->retrans;
        }
        return t;
    }

    static void OnCongState(Flow* f,
                            TcpSocketState::TcpCongState_t from,
                            TcpSocketState::TcpCongState_t to)
    {
        f->congState = to;
        if (to == TcpSocketState::CA_LOSS && from != TcpSocketState::CA_LOSS)
        {
            f->timeouts++;
        }
    }

    static void OnTx(Flow* f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        uint32_t len = p->GetSize();
        if (len == 0)
        {
            return;
        }
        uint32_t end = h.GetSequenceNumber().GetValue() + len;
        if (f->seqInit && static_cast<int32_t>(end - f->maxSeqEnd) <= 0)
        {
            f->retrans++;
        }
        else
        {
            f->maxSeqEnd = end;
            f->seqInit = true;
        }
    }

    static void OnRtt(Flow* f, Time, Time rtt)
    {
        double s = rtt.GetSeconds();
        if (s > 0)
        {
            f->lastRtt = s;
            g_rttEpoch++;
            f->minRtt = std::min(f->minRtt, s);
        }
    }

    static void OnCwnd(Flow* f, uint32_t, uint32_t v)
    {
        f->cwnd = v;
    }

    static void OnInflight(Flow* f, uint32_t, uint32_t v)
    {
        f->inflight = v;
    }

    static void OnRwnd(Flow* f, uint32_t, uint32_t v)
    {
        f->rwnd = v;
    }

    static void ServerPush(Flow* f)
    {
        while (f->pending > 0)
        {
            uint32_t room = f->srv->GetTxAvailable();
            if (room == 0)
            {
                return;
            }
            uint32_t n = static_cast<uint32_t>(std::min<uint64_t>({f->pending, room, 1u << 20}));
            int sent = f->srv->Send(Create<Packet>(n));
            if (sent <= 0)
            {
                return;
            }
            f->pending -= sent;
        }
    }

    static void ServerSendCb(Flow* f, Ptr<Socket>, uint32_t)
    {
        ServerPush(f);
    }

    static void ServerStart(Flow* f, uint64_t bytes)
    {
        f->pending += bytes;
        ServerPush(f);
    }

    // Server side: a request (12 bytes) arrived -> answer after the think time.
    void ServerRecv(Flow* f, Ptr<Socket> s)
    {
        while (Ptr<Packet> p = s->Recv())
        {
            f->reqBytes += p->GetSize();
        }
        while (f->reqBytes >= REQ)
        {
            f->reqBytes -= REQ;
            double d = cfg.jitterUs > 0 ? jitter->GetValue(0, cfg.jitterUs) : 0;
            Simulator::Schedule(MicroSeconds(d), &Scenario::ServerStart, f, RESP_HDR + Size());
        }
    }

    uint64_t Size() const
    {
        return cfg.sizeBytes;
    }

    bool Accept(Ptr<Socket>, const Address&)
    {
        return true;
    }

    void Accepted(Ptr<Socket> s, const Address& from)
    {
        Ipv4Address peer = InetSocketAddress::ConvertFrom(from).GetIpv4();
        keep.push_back(s);
        Address local;
        s->GetSockName(local);
        uint16_t port = InetSocketAddress::ConvertFrom(local).GetPort();
        if (port == BG_PORT)
        {
            s->SetRecvCallback(MakeCallback(&Scenario::SinkRecv, this));
            return;
        }
        // a server's end of a client connection: find the flow by the client address
        Address me;
        s->GetSockName(me);
        Ipv4Address mine = InetSocketAddress::ConvertFrom(me).GetIpv4();
        for (auto& f : flows)
        {
            if (f->srvAddr == mine && !f->srv)
            {
                f->srv = s;
                Flow* fp = f.get();
                s->SetRecvCallback(MakeCallback(&Scenario::ServerRecvCb, this));
                m_bySocket[PeekPointer(s)] = fp;
                s->SetSendCallback(MakeBoundCallback(&Scenario::ServerSendCb, fp));
                s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&Scenario::OnCongState, fp));
                s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&Scenario::OnTx, fp));
                s->TraceConnectWithoutContext("RTT", MakeBoundCallback(&Scenario::OnRtt, fp));
                if (debug)
                {
                    s->TraceConnectWithoutContext("CongestionWindow",
                                                  MakeBoundCallback(&Scenario::OnCwnd, fp));
                    s->TraceConnectWithoutContext("BytesInFlight",
                                                  MakeBoundCallback(&Scenario::OnInflight, fp));
                    s->TraceConnectWithoutContext("RWND", MakeBoundCallback(&Scenario::OnRwnd, fp));
                }
                if (cfg.perRoundConnections)
                {
                    s->SetCloseCallbacks(MakeCallback(&Scenario::ServerPeerClosed, this),
                                         MakeCallback(&Scenario::ServerPeerClosed, this));
                }
                (void)peer;
                return;
            }
        }
    }

    std::map<Socket*, Flow*> m_bySocket;

    // A server's end of a per-round connection: the client has read the response
    // and closed (FIN) or the connection broke; the server closes its end.
    void ServerPeerClosed(Ptr<Socket> s)
    {
        m_bySocket.erase(PeekPointer(s));
        s->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
        s->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
        s->Close();
    }

    void ServerRecvCb(Ptr<Socket> s)
    {
        auto it = m_bySocket.find(PeekPointer(s));
        if (it != m_bySocket.end())
        {
            ServerRecv(it->second, s);
        }
    }

    void SinkRecv(Ptr<Socket> s)
    {
        while (Ptr<Packet> p = s->Recv())
        {
            bgBytes += p->GetSize();
        }
    }

    void ClientConnected(Ptr<Socket> s)
    {
        auto it = m_bySocket.find(PeekPointer(s));
        if (it == m_bySocket.end() || it->second->connected)
        {
            return;
        }
        it->second->connected = true;
        if (cfg.perRoundConnections)
        {
            s->Send(Create<Packet>(REQ)); // this round's request; reqAt = when it connected
            return;
        }
        connected++;
        if (connected == cfg.n)
        {
            double at = std::max(0.0, cfg.startS - Simulator::Now().GetSeconds());
            Simulator::Schedule(Seconds(at), &Scenario::StartRound, this);
        }
    }

    void ClientFailed(Ptr<Socket>)
    {
        error = "a client connection failed";
        Simulator::Stop();
    }

    void ClientRecv(Ptr<Socket> s)
    {
        auto it = m_bySocket.find(PeekPointer(s));
        if (it == m_bySocket.end())
        {
            return;
        }
        Flow* f = it->second;
        while (Ptr<Packet> p = s->Recv())
        {
            f->got += p->GetSize();
        }
        if (!f->done && f->got >= f->want)
        {
            f->done = true;
            f->doneAt = Simulator::Now().GetSeconds();
            if (cfg.perRoundConnections)
            {
                s->Close(); // the response is complete: this round's connection ends
            }
            if (--remaining == 0)
            {
                FinishRound();
            }
        }
    }

    void Ask(Flow* f)
    {
        f->reqAt = Simulator::Now().GetSeconds();
        f->cli->Send(Create<Packet>(REQ));
    }

    double roundStart = 0;

    // Per-round connections: a new client socket to f's server; the request goes
    // out when it connects (ClientConnected). The last round's sockets close themselves.
    void Open(Flow* f)
    {
        if (f->cli)
        {
            m_bySocket.erase(PeekPointer(f->cli));
        }
        if (f->srv)
        {
            m_bySocket.erase(PeekPointer(f->srv));
            f->srv = nullptr; // the next accepted socket of this server is the new one
        }
        f->connected = false;
        f->seqInit = false; // a new connection's sequence space
        f->reqBytes = 0;
        f->reqAt = Simulator::Now().GetSeconds();
        Ptr<Socket> c = Socket::CreateSocket(hosts.Get(0), TcpSocketFactory::GetTypeId());
        c->Bind();
        keep.push_back(c);
        f->cli = c;
        m_bySocket[PeekPointer(c)] = f;
        c->SetConnectCallback(MakeCallback(&Scenario::ClientConnected, this),
                              MakeCallback(&Scenario::ClientFailed, this));
        c->SetRecvCallback(MakeCallback(&Scenario::ClientRecv, this));
        c->Connect(InetSocketAddress(f->srvAddr, PORT));
    }

    void StartRound()
    {
        round++;
        roundStart = Simulator::Now().GetSeconds();
        if (round == 0)
        {
            bottleneck->StartMean(); // the mean depth covers the rounds, not the set-up
        }
        roundTimeouts0 = TotalTimeouts();
        roundRetrans0 = TotalRetrans();
        roundDrops0 = bottleneck->drops;
        roundMarked0 = bottleneck->marked;
        roundArea0 = bottleneck->Area();
        roundHist0 = bottleneck->hist;
        bottleneck->roundPeak = bottleneck->GetNPackets();
        remaining = cfg.n;
        for (auto& f : flows)
        {
            f->done = false;
            f->want = f->got + RESP_HDR + Size();
            double off = f->idx < static_cast<int>(cfg.offsets.size()) ? cfg.offsets[f->idx] : 0;
            if (cfg.perRoundConnections)
            {
                f->reqAt = roundStart + off;
                Simulator::Schedule(Seconds(off), &Scenario::Open, this, f.get());
            }
            else if (off > 0)
            {
                f->reqAt = roundStart + off;
                Simulator::Schedule(Seconds(off), &Scenario::Ask, this, f.get());
            }
            else
            {
                Ask(f.get());
            }
        }
    }

    void FinishRound()
    {
        RoundResult r;
        double now = Simulator::Now().GetSeconds();
        r.start = roundStart;
        r.completion = now - roundStart;
        r.bytes = static_cast<uint64_t>(cfg.n) * Size();
        for (auto& f : flows)
        {
            r.fct.push_back(f->doneAt - f->reqAt);
        }
        r.timeouts = TotalTimeouts() - roundTimeouts0;
        r.retrans = TotalRetrans() - roundRetrans0;
        r.drops = bottleneck->drops - roundDrops0;
        r.marked = bottleneck->marked - roundMarked0;
        r.meanDepth = r.completion > 0 ? (bottleneck->Area() - roundArea0) / r.completion : 0.0;
        r.maxDepth = bottleneck->roundPeak;
        r.hist = bottleneck->hist;
        for (size_t b = 0; b < roundHist0.size(); b++)
        {
            r.hist[b] -= roundHist0[b];
        }
        results.push_back(r);
        if (static_cast<int>(results.size()) >= cfg.rounds)
        {
            finished = true;
            Simulator::Stop();
            return;
        }
        Simulator::ScheduleNow(&Scenario::StartRound, this);
    }

    static void BgPush(Ptr<Socket> s, uint32_t)
    {
        while (s->GetTxAvailable() >= 65536)
        {
            if (s->Send(Create<Packet>(65536)) <= 0)
            {
                return;
            }
        }
    }

    static void BgConnected(Ptr<Socket> s)
    {
        BgPush(s, 0);
    }

    static void BgFailed(Ptr<Socket>)
    {
    }

    void Apps()
    {
        jitter = CreateObject<UniformRandomVariable>();
        jitter->SetStream(1); // fixed: a run does not depend on earlier runs in the process
        Ipv4Address rx = HostAddr(0);
        // receiver: background sink
        Ptr<Socket> sink = Socket::CreateSocket(hosts.Get(0), TcpSocketFactory::GetTypeId());
        sink->Bind(InetSocketAddress(Ipv4Address::GetAny(), BG_PORT));
        sink->Listen();
        sink->SetAcceptCallback(MakeCallback(&Scenario::Accept, this),
                                MakeCallback(&Scenario::Accepted, this));
        keep.push_back(sink);
        for (int i = 0; i < cfg.n; i++)
        {
            auto f = std::make_unique<Flow>();
            f->idx = i;
            f->srvAddr = HostAddr(i + 1);
            m_byPeer[f->srvAddr.Get()] = f.get();
            g_rttEpoch++;
            Ptr<Socket> l = CreateSenderSocket(hosts.Get(i + 1)); // its connections send
            l->Bind(InetSocketAddress(Ipv4Address::GetAny(), PORT));
            l->Listen();
            l->SetAcceptCallback(MakeCallback(&Scenario::Accept, this),
                                 MakeCallback(&Scenario::Accepted, this));
            keep.push_back(l);
            if (cfg.perRoundConnections)
            {
                flows.push_back(std::move(f)); // connects at each round's start (Open)
                continue;
            }
            Ptr<Socket> c = Socket::CreateSocket(hosts.Get(0), TcpSocketFactory::GetTypeId());
            c->Bind();
            f->cli = c;
            m_bySocket[PeekPointer(c)] = f.get();
            c->SetConnectCallback(MakeCallback(&Scenario::ClientConnected, this),
                                  MakeCallback(&Scenario::ClientFailed, this));
            c->SetRecvCallback(MakeCallback(&Scenario::ClientRecv, this));
            // stagger the handshakes by 1 us so that SYNs do not collide
            Simulator::Schedule(MicroSeconds(i),
                                &Scenario::DoConnect,
                                c,
                                InetSocketAddress(f->srvAddr, PORT));
            flows.push_back(std::move(f));
        }
        if (cfg.perRoundConnections)
        {
            Simulator::Schedule(Seconds(cfg.startS), &Scenario::StartRound, this);
        }
        if (cfg.background)
        {
            bgSock = CreateSenderSocket(hosts.Get(cfg.n + 1));
            bgSock->Bind();
            bgSock->SetConnectCallback(MakeCallback(&Scenario::BgConnected),
                                       MakeCallback(&Scenario::BgFailed));
            bgSock->SetSendCallback(MakeCallback(&Scenario::BgPush));
            Simulator::Schedule(MicroSeconds(cfg.n + 1),
                                &Scenario::DoConnect,
                                bgSock,
                                InetSocketAddress(rx, BG_PORT));
        }
    }

    static void DoConnect(Ptr<Socket> s, InetSocketAddress to)
    {
        s->Connect(to);
    }

    // -- run ------------------------------------------------------------------
    void Setup()
    {
        Defaults();
        Build();
        Apps();
    }

    // Run until the rounds are done, `until` (simulated seconds), or maxSimS.
    // Returns true when the run is over (finished, failed, or out of time).
    bool Advance(double until)
    {
        double stop = std::min(until, cfg.maxSimS);
        double now = Simulator::Now().GetSeconds();
        if (stop > now)
        {
            Simulator::Stop(Seconds(stop - now));
            Simulator::Run();
        }
        if (finished || !error.empty())
        {
            return true;
        }
        if (Simulator::Now().GetSeconds() >= cfg.maxSimS - 1e-12)
        {
            error = "round " + std::to_string(results.size()) + " did not finish within " +
                    std::to_string(cfg.maxSimS) + " simulated seconds";
            return true;
        }
        return false;
    }

    // RTT of the flow whose receiver-side key is `key` (the sender's latest sample;
    // stands in for the agent's timestamp-based estimate), 0 if unknown.
    double FlowRtt(uint64_t key) const
    {
        auto it = m_byPeer.find(RxAgent::KeyPeer(key));
        return it == m_byPeer.end() ? 0 : it->second->lastRtt;
    }

    // Server address -> its flow: FlowRtt runs for every flow at every policy
    // step and rotation scan, so a lookup costs O(1), not O(N).
    std::unordered_map<uint32_t, Flow*> m_byPeer;

    // NewDCTCP windows that ended marked, per server (debug / tests); -1 if not NewDCTCP.
    std::vector<int64_t> NewDctcpCuts() const
    {
        std::vector<int64_t> out;
        for (auto& f : flows)
        {
            PointerValue pv;
            int64_t v = -1;
            if (f->srv)
            {
                f->srv->GetAttribute("CongestionOps", pv);
                Ptr<TcpNewDctcp> cc = DynamicCast<TcpNewDctcp>(pv.GetObject());
                if (cc)
                {
                    v = static_cast<int64_t>(cc->cuts);
                }
            }
            out.push_back(v);
        }
        return out;
    }

    double Now() const
    {
        return Simulator::Now().GetSeconds();
    }

    // The window each server's socket holds from the receiver's ACKs
    // (TcpSenderSocket::PeerWindow, bytes), in flow order; 0 for a flow
    // without a server socket yet.
    std::vector<uint32_t> ServerWindows() const
    {
        std::vector<uint32_t> out;
        for (auto& f : flows)
        {
            Ptr<TcpSenderSocket> s = f->srv ? DynamicCast<TcpSenderSocket>(f->srv) : nullptr;
            out.push_back(s ? s->PeerWindow() : 0);
        }
        return out;
    }

    void Collect()
    {
        bottleneck->FlushSeries();
        double m = 1e9;
        for (auto& f : flows)
        {
            m = std::min(m, f->minRtt);
        }
        baseRtt = m < 1e9 ? m : 0;
    }

    static void Teardown()
    {
        Simulator::Destroy();
    }
};

} // namespace p4i

#endif // P4INCAST_SIM_SCENARIO_H
