// p4-incast simulator: RCC's at-scale scenario (Xu et al. 2017, §6.2) — a
// two-tier fabric of `tors` ToRs × `hostsPerTor` hosts on one root switch,
// short flows and background flows to a few aggregators
// (p4incast/model/atscale.py plans the flows; p4incast/sim/atscale.py runs it).
//
// Links: hosts <-> ToR at tcp.linkBps, ToR <-> root at uplinkBps, tcp.delayUs
// one way each, the same 1538-byte wire time per full packet as the incast
// scenario (P2pLink). Every switch egress port has an EcnQueue of
// tcp.bufferBytes with the scheme's ECN mode and K (a queue builds wherever
// the traffic meets; marking where it builds is what DCTCP deploys).
// Switches forward on the destination address like scenario.h's: host h has
// 10.1.0.0 + h + 1; a ToR sends its own hosts down and the rest up, the root
// sends to the host's ToR. O(1) per packet.
//
// Flows: flow i connects from host src[i] to dst[i]'s listening port at
// start[i] (handshake included in its FCT, as an application sees it), sends
// bytes[i] and closes; the sink reads until it has them all. Aggregators run
// the receiver agent (RxAgent on their NIC), with the scheme's policy; every
// other host sends with tcp.cc. The run ends when every short flow is done,
// or at tcp.maxSimS (then the unfinished flows are reported as such).
#ifndef P4INCAST_SIM_ATSCALE_H
#define P4INCAST_SIM_ATSCALE_H

#include "scenario.h"

namespace p4i
{
using namespace ns3;

struct AtScaleConfig
{
    RunConfig tcp; // TCP, ECN, agent, host link and buffer: the incast scenario's fields
    int tors = 40;
    int hostsPerTor = 25;
    double uplinkBps = 25e9;
    std::vector<int> aggregators; // host indices
    std::vector<int> src, dst;
    std::vector<double> start;    // s
    std::vector<double> bytes;    // per flow (doubles: exact below 2^53)
    std::vector<int> isLong;      // background flows: throughput, not FCT
    double windowEndS = 0;        // long-flow throughput is measured up to here
};

struct AsFlow
{
    int src = 0, dst = 0;
    double start = 0;
    uint64_t bytes = 0, got = 0, pending = 0;
    bool isLong = false;
    double done = -1; // s; -1 = unfinished
    uint64_t gotAtWindowEnd = 0;
    uint64_t timeouts = 0;
    double lastRtt = 0;
    Ptr<Socket> tx, rx;
};

class AtScale
{
  public:
    AtScaleConfig cfg;
    std::string error;
    std::vector<AsFlow> flows;
    std::vector<std::unique_ptr<RxAgent>> agents; // per aggregator
    NodeContainer hosts, tors, root;
    std::vector<Ptr<EcnQueue>> torQ, rootQ; // switch egress queues
    std::vector<Ptr<EcnQueue>> aggDownQ;    // per aggregator: its ToR's port toward it
    int shortLeft = 0;
    static constexpr uint16_t PORT = 5001;

    explicit AtScale(const AtScaleConfig& c)
        : cfg(c)
    {
    }

    static Ipv4Address HostIp(int h)
    {
        return Ipv4Address((10u << 24) | (1u << 16) | static_cast<uint32_t>(h + 1));
    }

    int HostOf(uint32_t addr) const
    {
        return static_cast<int>(addr - HostIp(0).Get());
    }

    RxAgent& Agent(int i)
    {
        return *agents.at(i);
    }

    int Aggregators() const
    {
        return static_cast<int>(agents.size());
    }

    // -- fabric ---------------------------------------------------------------
    std::vector<std::vector<Ptr<NetDevice>>> torDown; // per ToR, per local host
    std::vector<Ptr<NetDevice>> torUp, rootDown;      // per ToR
    uint32_t m_firstTor = 0, m_root = 0;

    Ptr<EcnQueue> Attach(Ptr<PointToPointNetDevice> dev, bool isSwitch)
    {
        Ptr<EcnQueue> q = CreateObject<EcnQueue>();
        q->bufferBytes = isSwitch ? cfg.tcp.bufferBytes : 0;
        if (isSwitch)
        {
            q->mode = cfg.tcp.ecnMode;
            q->k = cfg.tcp.k;
        }
        dev->SetQueue(q);
        return q;
    }

    void TorRx(Ptr<NetDevice> dev, Ptr<const Packet> p, uint16_t proto, const Address&, const Address&,
               NetDevice::PacketType)
    {
        int h = Dest(p);
        if (h < 0)
        {
            return;
        }
        int t = static_cast<int>(dev->GetNode()->GetId() - m_firstTor);
        Ptr<NetDevice> out = h / cfg.hostsPerTor == t ? torDown[t][h % cfg.hostsPerTor] : torUp[t];
        out->Send(p->Copy(), out->GetBroadcast(), proto);
    }

    void RootRx(Ptr<NetDevice>, Ptr<const Packet> p, uint16_t proto, const Address&, const Address&,
                NetDevice::PacketType)
    {
        int h = Dest(p);
        if (h < 0)
        {
            return;
        }
        Ptr<NetDevice> out = rootDown[h / cfg.hostsPerTor];
        out->Send(p->Copy(), out->GetBroadcast(), proto);
    }

    int Dest(Ptr<const Packet> p) const
    {
        uint8_t b[20];
        if (p->CopyData(b, 20) < 20)
        {
            return -1;
        }
        uint32_t dst = (uint32_t(b[16]) << 24) | (uint32_t(b[17]) << 16) | (uint32_t(b[18]) << 8) | b[19];
        int h = HostOf(dst);
        return (h >= 0 && h < cfg.tors * cfg.hostsPerTor) ? h : -1;
    }

    void Build()
    {
        const RunConfig& c = cfg.tcp;
        int nHosts = cfg.tors * cfg.hostsPerTor;
        hosts.Create(nHosts);
        tors.Create(cfg.tors);
        root.Create(1);
        m_firstTor = tors.Get(0)->GetId();
        InternetStackHelper stack;
        stack.Install(hosts);
        torDown.assign(cfg.tors, std::vector<Ptr<NetDevice>>(cfg.hostsPerTor));
        torUp.resize(cfg.tors);
        rootDown.resize(cfg.tors);
        std::vector<Ptr<PointToPointNetDevice>> nic(nHosts);
        for (int h = 0; h < nHosts; h++)
        {
            int t = h / cfg.hostsPerTor;
            auto d = P2pLink(hosts.Get(h), tors.Get(t), c.linkBps, c.delayUs, c.gapBytes);
            nic[h] = d.first;
            Attach(d.first, false);
            torQ.push_back(Attach(d.second, true));
            torDown[t][h % cfg.hostsPerTor] = d.second;
            Ptr<Ipv4> ip = hosts.Get(h)->GetObject<Ipv4>();
            int32_t i = ip->AddInterface(d.first);
            ip->AddAddress(i, Ipv4InterfaceAddress(HostIp(h), Ipv4Mask("255.0.0.0")));
            ip->SetUp(i);
        }
        for (int t = 0; t < cfg.tors; t++)
        {
            auto d = P2pLink(tors.Get(t), root.Get(0), cfg.uplinkBps, c.delayUs, c.gapBytes);
            torQ.push_back(Attach(d.first, true));
            rootQ.push_back(Attach(d.second, true));
            torUp[t] = d.first;
            rootDown[t] = d.second;
        }
        // one handler per switch for all its ports (see Scenario::Build)
        for (int t = 0; t < cfg.tors; t++)
        {
            tors.Get(t)->RegisterProtocolHandler(MakeCallback(&AtScale::TorRx, this), 0x0800, nullptr);
        }
        root.Get(0)->RegisterProtocolHandler(MakeCallback(&AtScale::RootRx, this), 0x0800, nullptr);
        // senders run the scheme's cc; aggregators receive (exact CE echo for DCTCP-likes)
        std::vector<bool> isAgg(nHosts, false);
        for (int a : cfg.aggregators)
        {
            isAgg.at(a) = true;
        }
        for (int h = 0; h < nHosts; h++)
        {
            if (isAgg[h])
            {
                ReceiverCc(hosts.Get(h), c.cc);
            }
            else
            {
                SenderCc(hosts.Get(h), c.cc, c.sack);
            }
        }
        for (int a : cfg.aggregators)
        {
            auto ag = std::make_unique<RxAgent>();
            AttachAgent(*ag, c, nic[a], DynamicCast<EcnQueue>(nic[a]->GetQueue()));
            ag->srtt = [this](uint64_t key) { return FlowRtt(key); };
            aggDownQ.push_back(DynamicCast<EcnQueue>(
                DynamicCast<PointToPointNetDevice>(torDown[a / cfg.hostsPerTor][a % cfg.hostsPerTor])
                    ->GetQueue()));
            agents.push_back(std::move(ag));
        }
    }

    // -- flows ----------------------------------------------------------------
    std::map<uint64_t, int> m_byPeer;  // (sender address, port) -> flow, for the sink's accept
    std::map<Socket*, int> m_bySocket; // either end -> flow
    std::vector<Ptr<Socket>> m_listen;

    static uint64_t PeerKey(uint32_t addr, uint16_t port)
    {
        return (static_cast<uint64_t>(addr) << 16) | port;
    }

    // RTT of the flow a receiver agent knows by `key` (RxAgent::Key); 0 if unknown
    double FlowRtt(uint64_t key) const
    {
        auto it = m_byPeer.find(PeerKey(RxAgent::KeyPeer(key), static_cast<uint16_t>(key >> 16)));
        return it == m_byPeer.end() ? 0 : flows[it->second].lastRtt;
    }

    static void OnCongState(AsFlow* f, TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to)
    {
        if (to == TcpSocketState::CA_LOSS && from != TcpSocketState::CA_LOSS)
        {
            f->timeouts++;
        }
    }

    static void OnRtt(AsFlow* f, Time, Time rtt)
    {
        if (rtt.GetSeconds() > 0)
        {
            f->lastRtt = rtt.GetSeconds();
            g_rttEpoch++;
        }
    }

    void Push(Ptr<Socket> s, uint32_t)
    {
        auto it = m_bySocket.find(PeekPointer(s));
        if (it == m_bySocket.end())
        {
            return;
        }
        AsFlow& f = flows[it->second];
        while (f.pending > 0)
        {
            uint32_t room = s->GetTxAvailable();
            if (room == 0)
            {
                return;
            }
            uint32_t n = static_cast<uint32_t>(std::min<uint64_t>({f.pending, room, 1u << 20}));
            int sent = s->Send(Create<Packet>(n));
            if (sent <= 0)
            {
                return;
            }
            f.pending -= sent;
        }
        m_bySocket.erase(PeekPointer(s));
        s->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
        s->Close(); // FIN after the data
    }

    void Connected(Ptr<Socket> s)
    {
        Push(s, 0);
    }

    void ConnectFailed(Ptr<Socket> s)
    {
        auto it = m_bySocket.find(PeekPointer(s));
        if (it != m_bySocket.end())
        {
            error = "flow " + std::to_string(it->second) + ": connection failed";
        }
    }

    void Start(int i)
    {
        AsFlow& f = flows[i];
        Ptr<Socket> s = CreateSenderSocket(hosts.Get(f.src));
        s->Bind();
        Address me;
        s->GetSockName(me);
        uint16_t port = InetSocketAddress::ConvertFrom(me).GetPort();
        m_byPeer[PeerKey(HostIp(f.src).Get(), port)] = i;
        g_rttEpoch++;
        m_bySocket[PeekPointer(s)] = i;
        f.tx = s;
        f.pending = f.bytes;
        s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&AtScale::OnCongState, &f));
        s->TraceConnectWithoutContext("RTT", MakeBoundCallback(&AtScale::OnRtt, &f));
        s->SetConnectCallback(MakeCallback(&AtScale::Connected, this), MakeCallback(&AtScale::ConnectFailed, this));
        s->SetSendCallback(MakeCallback(&AtScale::Push, this));
        s->Connect(InetSocketAddress(HostIp(f.dst), PORT));
    }

    bool Accept(Ptr<Socket>, const Address&)
    {
        return true;
    }

    void Accepted(Ptr<Socket> s, const Address& from)
    {
        InetSocketAddress a = InetSocketAddress::ConvertFrom(from);
        auto it = m_byPeer.find(PeerKey(a.GetIpv4().Get(), a.GetPort()));
        if (it == m_byPeer.end())
        {
            return;
        }
        flows[it->second].rx = s;
        m_bySocket[PeekPointer(s)] = it->second;
        s->SetRecvCallback(MakeCallback(&AtScale::Recv, this));
        s->SetCloseCallbacks(MakeCallback(&AtScale::PeerClosed, this), MakeCallback(&AtScale::PeerClosed, this));
    }

    void Recv(Ptr<Socket> s)
    {
        auto it = m_bySocket.find(PeekPointer(s));
        if (it == m_bySocket.end())
        {
            return;
        }
        AsFlow& f = flows[it->second];
        while (Ptr<Packet> p = s->Recv())
        {
            f.got += p->GetSize();
        }
        if (f.done < 0 && f.got >= f.bytes)
        {
            f.done = Simulator::Now().GetSeconds();
            if (f.done <= cfg.windowEndS)
            {
                f.gotAtWindowEnd = f.got;
            }
            if (!f.isLong && --shortLeft == 0)
            {
                Simulator::Stop();
            }
        }
    }

    void PeerClosed(Ptr<Socket> s)
    {
        m_bySocket.erase(PeekPointer(s));
        s->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
        s->Close();
    }

    void WindowEnd()
    {
        for (auto& f : flows)
        {
            if (f.isLong && f.done < 0)
            {
                f.gotAtWindowEnd = f.got;
            }
        }
    }

    void Apps()
    {
        size_t n = cfg.src.size();
        if (cfg.dst.size() != n || cfg.start.size() != n || cfg.bytes.size() != n || cfg.isLong.size() != n)
        {
            error = "flow lists differ in length";
            return;
        }
        for (int a : cfg.aggregators)
        {
            Ptr<Socket> l = Socket::CreateSocket(hosts.Get(a), TcpSocketFactory::GetTypeId());
            l->Bind(InetSocketAddress(Ipv4Address::GetAny(), PORT));
            l->Listen();
            l->SetAcceptCallback(MakeCallback(&AtScale::Accept, this), MakeCallback(&AtScale::Accepted, this));
            m_listen.push_back(l);
        }
        flows.resize(n);
        for (size_t i = 0; i < n; i++)
        {
            AsFlow& f = flows[i];
            f.src = cfg.src[i];
            f.dst = cfg.dst[i];
            f.start = cfg.start[i];
            f.bytes = static_cast<uint64_t>(cfg.bytes[i]);
            f.isLong = cfg.isLong[i] != 0;
            shortLeft += f.isLong ? 0 : 1;
            Simulator::Schedule(Seconds(f.start), &AtScale::Start, this, static_cast<int>(i));
        }
        Simulator::Schedule(Seconds(cfg.windowEndS), &AtScale::WindowEnd, this);
    }

    // -- run ------------------------------------------------------------------
    void Setup()
    {
        ApplyDefaults(cfg.tcp);
        Build();
        Apps();
    }

    // Run until every short flow is done, `until` (simulated seconds) or maxSimS;
    // true when the run is over.
    bool Advance(double until)
    {
        if (!error.empty())
        {
            return true;
        }
        double stop = std::min(until, cfg.tcp.maxSimS);
        double now = Simulator::Now().GetSeconds();
        if (stop > now && shortLeft > 0)
        {
            Simulator::Stop(Seconds(stop - now));
            Simulator::Run();
        }
        return shortLeft == 0 || !error.empty() || Simulator::Now().GetSeconds() >= cfg.tcp.maxSimS - 1e-12;
    }

    double Now() const
    {
        return Simulator::Now().GetSeconds();
    }

    static uint64_t Drops(const std::vector<Ptr<EcnQueue>>& qs)
    {
        uint64_t d = 0;
        for (auto& q : qs)
        {
            d += q->drops;
        }
        return d;
    }

    static uint64_t Marks(const std::vector<Ptr<EcnQueue>>& qs)
    {
        uint64_t m = 0;
        for (auto& q : qs)
        {
            m += q->marked;
        }
        return m;
    }

    uint64_t TorDrops() const
    {
        return Drops(torQ);
    }

    uint64_t RootDrops() const
    {
        return Drops(rootQ);
    }

    uint64_t AggregatorPortDrops() const
    {
        return Drops(aggDownQ);
    }

    uint64_t TorMarks() const
    {
        return Marks(torQ);
    }

    uint64_t RootMarks() const
    {
        return Marks(rootQ);
    }

    static void Teardown()
    {
        Simulator::Destroy();
    }
};

} // namespace p4i

#endif // P4INCAST_SIM_ATSCALE_H
