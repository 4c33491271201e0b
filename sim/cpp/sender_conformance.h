// p4-incast simulator: one scripted TCP flow for the sender conformance table
// (tests/senders/sender_table.py, tests/senders/ns3_lab.py).
//
// sender —(1 Gbit/s, 10 µs)— router —(1 Gbit/s, 10 µs)— receiver. Queues hold
// 10^6 packets (nothing is dropped but what the script drops). The sender has
// `segments` full segments in its buffer when the connection is up and sends
// nothing else; the receive buffer is far larger than the flow, so neither the
// application nor the receiver's window limits it. Initial window 10, SACK on,
// ECN on, no timestamps, minimum RTO 200 ms (Linux's); the receiver ACKs every
// segment, or every other one with a 40 ms delayed-ACK timer (Linux's
// TCP_DELACK_MAX) when `delayedAck`. Both ends run the CC `cc` (scenario.h
// CcType: reno → TcpRenoP4i, dctcp → TcpDctcpLinux, newdctcp → TcpNewDctcp),
// the sender with the recovery the incast model gives it (scenario.h SenderCc:
// classic for newdctcp, ns-3's default PRR otherwise) on the model's senders'
// socket (tcp_sender_socket.h TcpSenderSocket, scenario.h's CreateSenderSocket);
// the receiver's CC gives its echo (RFC 3168's for reno, the exact echo for
// dctcp/newdctcp).
//
// The router's egress queue toward the receiver runs the script: a data segment
// whose index (1-based, (seq − ISN − 1)/MSS + 1) is in `marks` leaves CE on its
// first transmission, one in `drops` is dropped on its first transmission;
// anything seen before (a retransmission) passes untouched.
//
// The probe reads the sender socket's trace sources only, never the CC:
//  - Rx fires in DoForwardUp before the ACK is processed (ReceivedAck), so
//    cwnd, ssthresh (CongestionWindow, SlowStartThreshold), SND.NXT
//    (HighestSequence: ns-3's m_nextTxSequence is rewound for retransmissions,
//    m_highTxMark is Linux's snd_nxt) and SND.UNA (the Tx buffer's head) are
//    the state before it;
//  - CongState fires when m_congState is assigned. ns-3 asks for ssthresh
//    before that in EnterCwr and ReTxTimeout (after it in EnterRecovery), so a
//    change into CWR, Recovery or Loss reports the ssthresh from before any
//    change made earlier in the same simulator event (and after the last state
//    change): the value before the reduction the change causes. cwnd is only
//    changed after. A change to Open or Disorder reports the ssthresh it is
//    made with (NewDCTCP decides on the ACK that leaves CWR, before it leaves).
#ifndef P4INCAST_SIM_SENDER_CONFORMANCE_H
#define P4INCAST_SIM_SENDER_CONFORMANCE_H

#include "scenario.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <set>
#include <string>
#include <vector>

namespace p4i
{
using namespace ns3;

struct SenderEvent
{
    int kind = 0; // 0: an ACK, 1: a congestion-state change
    int64_t ack = 0; // segments cumulatively acknowledged (ACKs)
    bool ece = false;
    int state = 0; // new TcpCongState_t (= Linux tcp_ca_state) (state changes)
    int64_t una = 0, nxt = 0, cwnd = 0, ssthresh = 0; // segments
    double tUs = 0;
};

struct SenderRun
{
    std::vector<SenderEvent> events;
    int64_t finalCwnd = 0, finalSsthresh = 0, acked = 0;
    bool complete = false; // every segment acknowledged
    uint64_t marked = 0, dropped = 0; // by the script
};

// The router's egress queue toward the receiver, with the script.
class ScriptQueue : public DropTailQueue<Packet>
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("p4i::ScriptQueue")
                                .SetParent<DropTailQueue<Packet>>()
                                .SetGroupName("P4incast")
                                .AddConstructor<ScriptQueue>();
        return tid;
    }

    bool Enqueue(Ptr<Packet> p) override
    {
        Ptr<Packet> c = p->Copy();
        PppHeader ppp;
        Ipv4Header ip;
        TcpHeader tcp;
        c->RemoveHeader(ppp);
        c->RemoveHeader(ip);
        c->RemoveHeader(tcp);
        if (tcp.GetFlags() & TcpHeader::SYN)
        {
            isn = tcp.GetSequenceNumber();
            haveIsn = true;
        }
        else if (haveIsn && c->GetSize() > 0)
        {
            int64_t idx = (tcp.GetSequenceNumber() - isn - 1) / static_cast<int64_t>(mss) + 1;
            if (seen.insert(idx).second)
            {
                if (drops.count(idx))
                {
                    dropped++;
                    return false;
                }
                if (marks.count(idx))
                {
                    NS_ABORT_MSG_IF(ip.GetEcn() == Ipv4Header::ECN_NotECT,
                                    "segment " << idx << " to mark is not ECT");
                    FrameSetCe(p);
                    marked++;
                }
            }
        }
        return DropTailQueue<Packet>::Enqueue(p);
    }

    std::set<int64_t> marks, drops, seen;
    uint32_t mss = 1448;
    SequenceNumber32 isn{0};
    bool haveIsn = false;
    uint64_t marked = 0, dropped = 0;
};

class SenderProbe
{
  public:
    static constexpr int64_t INFINITE = int64_t(1) << 30; // sender_table.INFINITE

    Ptr<Socket> snd, rcv;
    uint32_t mss = 1448;
    uint64_t bytes = 0;
    SequenceNumber32 isn{0};
    bool haveIsn = false;
    uint32_t cwnd = 0, ss = UINT32_MAX;
    SequenceNumber32 high{0};
    bool ssDirty = false;
    uint64_t ssEvent = 0;
    uint32_t ssOld = 0;
    SenderRun out;

    int64_t Seg(SequenceNumber32 s) const
    {
        return haveIsn ? (s - isn - 1) / static_cast<int64_t>(mss) : 0;
    }

    int64_t Segs(uint32_t b) const
    {
        return b >= (1u << 30) ? INFINITE : b / mss;
    }

    SequenceNumber32 Una() const
    {
        return DynamicCast<TcpSocketBase>(snd)->GetTxBuffer()->HeadSequence();
    }

    void OnTx(Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        if ((h.GetFlags() & TcpHeader::SYN) && !haveIsn)
        {
            isn = h.GetSequenceNumber();
            haveIsn = true;
        }
    }

    void OnRx(Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        if (!haveIsn || (h.GetFlags() & TcpHeader::SYN) || !(h.GetFlags() & TcpHeader::ACK))
        {
            return;
        }
        SequenceNumber32 una = Una();
        if (h.GetAckNumber() < una || h.GetAckNumber() > high)
        {
            return; // ignored by the socket (tcp-socket-base.cc ProcessEstablished)
        }
        SenderEvent e;
        e.kind = 0;
        e.ack = Seg(h.GetAckNumber());
        e.ece = h.GetFlags() & TcpHeader::ECE;
        e.una = Seg(una);
        e.nxt = Seg(high);
        e.cwnd = cwnd / mss;
        e.ssthresh = Segs(ss);
        e.tUs = Simulator::Now().GetSeconds() * 1e6;
        out.events.push_back(e);
    }

    void OnState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t to)
    {
        // a change into CWR/Loss reports the ssthresh before the cut it causes;
        // a change to Open/Disorder the ssthresh it is made with
        bool entering = to == TcpSocketState::CA_CWR || to == TcpSocketState::CA_RECOVERY ||
                        to == TcpSocketState::CA_LOSS;
        bool sameEvent = entering && ssDirty && ssEvent == Simulator::GetEventCount();
        SenderEvent e;
        e.kind = 1;
        e.state = static_cast<int>(to);
        e.cwnd = cwnd / mss;
        e.ssthresh = Segs(sameEvent ? ssOld : ss);
        e.una = Seg(Una());
        e.nxt = Seg(high);
        e.tUs = Simulator::Now().GetSeconds() * 1e6;
        out.events.push_back(e);
        ssDirty = false;
    }

    void OnCwnd(uint32_t, uint32_t v)
    {
        cwnd = v;
    }

    void OnSs(uint32_t old, uint32_t v)
    {
        uint64_t now = Simulator::GetEventCount();
        if (!ssDirty || ssEvent != now)
        {
            ssDirty = true;
            ssEvent = now;
            ssOld = old;
        }
        ss = v;
    }

    void OnHigh(SequenceNumber32, SequenceNumber32 v)
    {
        high = v;
    }

    void Connected(Ptr<Socket> s)
    {
        s->Send(Create<Packet>(bytes));
    }

    void ConnectFailed(Ptr<Socket>)
    {
    }

    void Drain(Ptr<Socket> s)
    {
        while (s->Recv())
        {
        }
    }

    void Accept(Ptr<Socket> s, const Address&)
    {
        s->SetRecvCallback(MakeCallback(&SenderProbe::Drain, this));
    }
};

inline void
ScriptSocket(Ptr<Socket> s, uint32_t mss, bool delayedAck)
{
    s->SetAttribute("SegmentSize", UintegerValue(mss));
    s->SetAttribute("InitialCwnd", UintegerValue(10));
    s->SetAttribute("InitialSlowStartThreshold", UintegerValue(UINT32_MAX));
    s->SetAttribute("DelAckCount", UintegerValue(delayedAck ? 2 : 1));
    s->SetAttribute("DelAckTimeout", TimeValue(MilliSeconds(40)));
    s->SetAttribute("SndBufSize", UintegerValue(64u << 20));
    s->SetAttribute("RcvBufSize", UintegerValue(64u << 20));
    s->SetAttribute("TcpNoDelay", BooleanValue(true));
    s->SetAttribute("Sack", BooleanValue(true));
    s->SetAttribute("WindowScaling", BooleanValue(true));
    s->SetAttribute("Timestamp", BooleanValue(false));
    s->SetAttribute("UseEcn", EnumValue(TcpSocketState::On));
    s->SetAttribute("MinRto", TimeValue(MilliSeconds(200)));
    s->SetAttribute("ClockGranularity", TimeValue(MilliSeconds(1)));
}

// The router: what comes from one side leaves on the other.
struct Forward
{
    Ptr<NetDevice> toReceiver, toSender;

    void Rx(Ptr<NetDevice> in,
            Ptr<const Packet> p,
            uint16_t proto,
            const Address&,
            const Address&,
            NetDevice::PacketType)
    {
        Ptr<NetDevice> out = in == toSender ? toReceiver : toSender;
        out->Send(p->Copy(), out->GetBroadcast(), proto);
    }
};

inline void
HostAddress(Ptr<Node> node, Ptr<NetDevice> dev, Ipv4Address addr)
{
    Ptr<Ipv4> ip = node->GetObject<Ipv4>();
    int32_t i = ip->AddInterface(dev);
    ip->AddAddress(i, Ipv4InterfaceAddress(addr, Ipv4Mask("255.0.0.0")));
    ip->SetUp(i);
}

inline Ptr<Queue<Packet>>
BigQueue()
{
    Ptr<DropTailQueue<Packet>> q = CreateObject<DropTailQueue<Packet>>();
    q->SetMaxSize(QueueSize("1000000p"));
    return q;
}

// One scripted flow: `segments` segments from sender to receiver under `cc`;
// `minCwndSegs`: DCTCP's and NewDCTCP's ECN-cut floor (transport.min_cwnd_segs).
inline SenderRun
RunSenderScript(const std::string& cc,
                uint32_t segments,
                const std::vector<int>& marks,
                const std::vector<int>& drops,
                bool delayedAck,
                uint32_t minCwndSegs)
{
    const uint32_t mss = 1448;
    bool restart = g_restartEachRound;
    g_restartEachRound = false;
    uint32_t floor = g_minCwndSegs;
    g_minCwndSegs = minCwndSegs; // the ECN cut's floor (transport.min_cwnd_segs)
    // DCTCP's g and initial α (read by TcpDctcpLinux::Init when a socket is made)
    Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(1.0 / 16));
    Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(1.0));

    SenderProbe probe;
    probe.mss = mss;
    probe.bytes = static_cast<uint64_t>(segments) * mss;
    Ptr<ScriptQueue> script = CreateObject<ScriptQueue>();
    Forward fwd;
    {
        NodeContainer nodes;
        nodes.Create(3); // sender, router, receiver
        Ptr<Node> sender = nodes.Get(0);
        Ptr<Node> router = nodes.Get(1);
        Ptr<Node> receiver = nodes.Get(2);
        InternetStackHelper stack;
        stack.Install(sender);
        stack.Install(receiver);
        auto a = P2pLink(sender, router, 1e9, 10, 0);
        auto b = P2pLink(router, receiver, 1e9, 10, 0);
        a.first->SetQueue(BigQueue());
        a.second->SetQueue(BigQueue());
        b.second->SetQueue(BigQueue());
        script->SetMaxSize(QueueSize("1000000p"));
        script->mss = mss;
        script->marks.insert(marks.begin(), marks.end());
        script->drops.insert(drops.begin(), drops.end());
        b.first->SetQueue(script);
        fwd.toReceiver = b.first;
        fwd.toSender = a.second;
        router->RegisterProtocolHandler(MakeCallback(&Forward::Rx, &fwd), 0x0800, nullptr);
        Ipv4Address sndIp("10.0.0.2");
        Ipv4Address rcvIp("10.0.0.1");
        HostAddress(sender, a.first, sndIp);
        HostAddress(receiver, b.second, rcvIp);
        SenderCc(sender, cc);
        receiver->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", TypeIdValue(CcType(cc)));

        Ptr<Socket> listener = Socket::CreateSocket(receiver, TcpSocketFactory::GetTypeId());
        ScriptSocket(listener, mss, delayedAck);
        listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), 5001));
        listener->Listen();
        listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                    MakeCallback(&SenderProbe::Accept, &probe));

        Ptr<Socket> s = CreateSenderSocket(sender); // the model's senders' socket (scenario.h)
        ScriptSocket(s, mss, delayedAck);
        probe.snd = s;
        probe.cwnd = 10 * mss;
        s->TraceConnectWithoutContext("Tx", MakeCallback(&SenderProbe::OnTx, &probe));
        s->TraceConnectWithoutContext("Rx", MakeCallback(&SenderProbe::OnRx, &probe));
        s->TraceConnectWithoutContext("CongState", MakeCallback(&SenderProbe::OnState, &probe));
        s->TraceConnectWithoutContext("CongestionWindow",
                                      MakeCallback(&SenderProbe::OnCwnd, &probe));
        s->TraceConnectWithoutContext("SlowStartThreshold",
                                      MakeCallback(&SenderProbe::OnSs, &probe));
        s->TraceConnectWithoutContext("HighestSequence",
                                      MakeCallback(&SenderProbe::OnHigh, &probe));
        s->SetConnectCallback(MakeCallback(&SenderProbe::Connected, &probe),
                              MakeCallback(&SenderProbe::ConnectFailed, &probe));
        s->Bind();
        s->Connect(InetSocketAddress(rcvIp, 5001));

        Simulator::Stop(Seconds(60));
        Simulator::Run();
        SenderRun& r = probe.out;
        r.finalCwnd = probe.cwnd / mss;
        r.finalSsthresh = probe.Segs(probe.ss);
        r.acked = probe.Seg(probe.Una());
        r.complete = r.acked == static_cast<int64_t>(segments);
        r.marked = script->marked;
        r.dropped = script->dropped;
        probe.snd = nullptr;
        Simulator::Destroy();
    }
    g_restartEachRound = restart;
    g_minCwndSegs = floor;
    return probe.out;
}

} // namespace p4i

#endif // P4INCAST_SIM_SENDER_CONFORMANCE_H
