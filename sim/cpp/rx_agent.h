// p4-incast simulator: the receiver host agent — advertised-window control in
// the simulated receiver (docs/algorithms.md §3).
//
// Data path, the same as agent/bpf on a real host: every data packet arriving
// at the receiver's NIC is seen with its CE bit (Ingress), and every ACK the
// receiver sends passes the NIC queue where its window field is clamped
// (Egress, before the packet is queued):
//
//     field = min(kernel_field, max(ceil(W / 2^ws), ceil((RE - ack) / 2^ws)))
//
// RE = right edge of the previous ACK of the flow, so the right edge never
// moves left; ws = the receiver's own window scale when both SYNs carried it.
//
// With clearEce, Egress also clears ECE on the ACKs of controlled flows, so
// the policy's window is the only reduction a sender makes for CE (§3.7).
//
// Window W per flow:
//  - newdctcp-rx: a C++ port of agent/policies/newdctcp_rx.py (RxFlow.on_data,
//    next_window, ack_field), checked against it by tests/sim/test_rx_port.py.
//    Window of data = W new bytes; at its end with n packets, m CE:
//    m > 0: W = max(W/2, (n-m)·MSS, MSS), slow start over; else 2W in slow
//    start, W + MSS after; W <= max_w. Sender rule: NewDCTCP, Sreekumari et
//    al., Springer 2015.
//  - newdctcp-budget: the same W, capped by an even share of a receiver-wide
//    budget B: share = max(B / F, minSegs·MSS), F = flows whose handshake was
//    seen; W starts at initSegs·MSS; W <- min(W, share) in whole segments (at
//    least one) at each window end and on each ACK (newdctcp_rx.RxReference,
//    budget_share, budget_window). The BPF data path's zero-window copy of the
//    handshake's ACK is not modelled: ns-3's sender does not bound its segments
//    by the largest window offered (Linux's tcp_bound_to_half_wnd).
//  - ictcp / rcc: W comes from the shared Python policies
//    (agent/policies/ictcp.py, rcc.py), stepped every agent tick by
//    p4incast.sim.engine with the counters kept here (SetUserWindow).
// MSS is the model's segment size (1448; ns-3 sends no MSS option).
#ifndef P4INCAST_SIM_RX_AGENT_H
#define P4INCAST_SIM_RX_AGENT_H

#include "ecn_queue.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

namespace p4i
{
using namespace ns3;

enum RxPolicy
{
    RX_OFF = 0,
    RX_OBSERVE = 1,  // count, never clamp
    RX_NEWDCTCP = 2, // per-packet window rule here
    RX_USER = 3,     // window set from Python (ictcp, rcc)
    RX_BUDGET = 4    // newdctcp-rx capped by a share of budgetBytes
};

constexpr uint32_t MAX_WSCALE = 14;

struct RxFlow
{
    // handshake
    bool peerSyn = false, localSyn = false;
    int peerWs = -1, localWs = -1;
    uint32_t wscale = 0;
    // NewDCTCP-rx state (newdctcp_rx.RxFlow)
    uint32_t mss = 1448;
    uint64_t w = 0;
    bool marked = false;
    bool hiValid = false;
    uint32_t hiSeq = 0;
    uint64_t winBytes = 0;
    uint32_t winPkts = 0, winCe = 0;
    bool reValid = false;
    uint32_t lastRe = 0;
    // ACK queue: the right edge the sender has actually been sent
    bool relValid = false;
    uint32_t relRe = 0;
    uint32_t heldHere = 0; // ACKs of this flow in the ACK queue
    // cumulative counters (for ictcp / rcc and the report)
    uint64_t pkts = 0, ce = 0, bytes = 0;
    uint64_t userW = 0; // 0 = no clamp
    bool counted = false; // handshake seen: shares the budget
    uint64_t windows = 0;
    uint64_t clamped = 0; // ACKs whose field was lowered
};

// newdctcp_rx.next_window; floor = minSegs MSS (the agent's min_segs; 1 = the literal rule)
inline void
NextWindow(RxFlow& f, uint64_t n, uint64_t m, uint64_t maxW, uint32_t minSegs)
{
    uint64_t w = f.w;
    if (m > 0)
    {
        uint64_t floor = static_cast<uint64_t>(std::max<uint32_t>(minSegs, 1)) * f.mss;
        w = std::max({w / 2, (n - m) * static_cast<uint64_t>(f.mss), floor});
        f.marked = true;
    }
    else if (!f.marked)
    {
        w = 2 * w;
    }
    else
    {
        w = w + f.mss;
    }
    f.w = std::min(w, maxW);
}

inline int32_t
S32(uint32_t x)
{
    return static_cast<int32_t>(x);
}

class RxAgent : public EgressHook
{
  public:
    int policy = RX_OFF;
    uint32_t initSegs = 10;
    uint32_t minSegs = 2;
    uint64_t maxW = 4u << 20;
    uint32_t mss = 1448;
    uint64_t ifaceBytes = 0; // IP bytes received by the NIC
    std::map<uint64_t, RxFlow> flows;
    uint64_t budgetBytes = 0; // newdctcp-budget: B
    // Clear ECE on the ACKs of the flows the policy controls: its window is
    // the only cut (docs/algorithms.md §3.7; rxwin.bpf.c clear_ece).
    bool clearEce = false;
    uint64_t eceCleared = 0; // ACKs whose ECE was cleared
    uint32_t counted = 0;     // flows sharing it
    uint64_t closedFlows = 0, closedClamped = 0; // flows ended (FIN, RST, a new SYN) and their clamped ACKs

    // newdctcp_rx.budget_share
    uint64_t Share(uint32_t fmss) const
    {
        uint64_t floor = static_cast<uint64_t>(minSegs) * fmss;
        return std::max<uint64_t>(budgetBytes / std::max<uint32_t>(counted, 1), floor);
    }

    // newdctcp_rx.budget_window: whole segments, at least one
    uint64_t Cap(uint64_t w, uint32_t fmss) const
    {
        if (policy != RX_BUDGET)
        {
            return w;
        }
        w = std::min(w, Share(fmss)) / fmss * fmss;
        return std::max<uint64_t>(w, fmss);
    }

    void Erase(uint64_t key)
    {
        auto it = flows.find(key);
        if (it != flows.end())
        {
            counted -= it->second.counted;
            closedFlows++;
            closedClamped += it->second.clamped;
            flows.erase(it);
        }
    }

    // -- RCC's ACK queue (Xu et al. 2017): an ACK that would let the flows'
    // windows in flight add up to more than ackQueueCap bytes waits here, and
    // goes out, in order per flow, as soon as arriving data makes room — or
    // after ackHoldMaxS, so a flow that has stopped sending (whose unused window
    // still counts) cannot hold the others forever. In flight per flow = the
    // right edge last sent to it minus the highest byte received. 0 = off.
    uint64_t ackQueueCap = 0;
    double ackHoldMaxS = 1e-3;
    Ptr<NetDevice> nic; // the receiver's NIC: held ACKs are sent through it
    uint64_t held = 0, released = 0, releasedByTimer = 0; // ACKs
    uint64_t maxInFlight = 0; // largest total in flight the agent allowed, bytes
    uint32_t maxHeld = 0;     // most ACKs in the queue at once

    // A flow is its connection, as the BPF data path's flow_key: the peer's address
    // and port and our port (the receiver has one address). A new connection from
    // the same server (app.connections: per-round) is a new flow.
    static uint64_t Key(Ipv4Address peer, uint16_t peerPort, uint16_t localPort)
    {
        return (static_cast<uint64_t>(peer.Get()) << 32) |
               (static_cast<uint64_t>(peerPort) << 16) | localPort;
    }

    static uint32_t KeyPeer(uint64_t key)
    {
        return static_cast<uint32_t>(key >> 32);
    }

    RxFlow& New(uint64_t key)
    {
        Erase(key); // a new SYN on a key replaces that flow
        RxFlow& f = flows[key];
        f = RxFlow();
        f.mss = mss;
        f.w = static_cast<uint64_t>(initSegs) * mss;
        return f;
    }

    void FinishHandshake(RxFlow& f)
    {
        if (!(f.peerSyn && f.localSyn))
        {
            return;
        }
        f.wscale = (f.peerWs >= 0 && f.localWs >= 0) ? f.localWs : 0;
        if (!f.counted)
        {
            f.counted = true;
            counted++;
        }
        f.w = static_cast<uint64_t>(initSegs) * f.mss;
        f.marked = false;
        f.winBytes = f.winPkts = f.winCe = 0;
    }

    static int WsOption(const TcpHeader& h)
    {
        if (!h.HasOption(TcpOption::WINSCALE))
        {
            return -1;
        }
        Ptr<const TcpOptionWinScale> o =
            DynamicCast<const TcpOptionWinScale>(h.GetOption(TcpOption::WINSCALE));
        return std::min<uint32_t>(o->GetScale(), MAX_WSCALE);
    }

    // newdctcp_rx.RxFlow.on_data
    void OnData(RxFlow& f, uint32_t seq, uint32_t payload, bool ce)
    {
        uint32_t end = seq + payload;
        f.pkts++;
        f.ce += ce;
        if (!f.hiValid)
        {
            f.hiSeq = seq;
            f.hiValid = true;
        }
        uint64_t nb = 0;
        if (S32(end - f.hiSeq) > 0)
        {
            nb = end - f.hiSeq;
            f.hiSeq = end;
        }
        f.bytes += nb;
        f.winPkts++;
        f.winCe += ce;
        f.winBytes += nb;
        if (f.winBytes >= f.w)
        {
            NextWindow(f, f.winPkts, f.winCe, maxW, minSegs);
            f.w = Cap(f.w, f.mss);
            f.winBytes = f.winPkts = f.winCe = 0;
            f.windows++;
        }
    }

    // newdctcp_rx.RxFlow.ack_field
    static uint32_t AckField(RxFlow& f, uint32_t ack, uint32_t kernelField, uint64_t w)
    {
        uint32_t ws = f.wscale;
        uint32_t out = kernelField;
        if (w)
        {
            uint64_t want = (w + (1u << ws) - 1) >> ws; // W / 2^ws rounded up
            if (f.reValid)
            {
                uint32_t d = f.lastRe - ack;
                if (S32(d) > 0)
                {
                    want = std::max<uint64_t>(want, (static_cast<uint64_t>(d) + (1u << ws) - 1) >> ws);
                }
            }
            out = static_cast<uint32_t>(std::min<uint64_t>(kernelField, want));
        }
        f.lastRe = ack + (out << ws);
        f.reValid = true;
        return out;
    }

    // Receiver NIC, MacRx: PPP | IPv4 | TCP | payload.
    void Ingress(Ptr<const Packet> packet)
    {
        if (policy == RX_OFF)
        {
            return;
        }
        Ptr<Packet> p = packet->Copy();
        PppHeader ppp;
        p->RemoveHeader(ppp);
        if (ppp.GetProtocol() != PPP_IPV4)
        {
            return;
        }
        Ipv4Header ip;
        p->RemoveHeader(ip);
        ifaceBytes += ip.GetPayloadSize() + ip.GetSerializedSize();
        if (ip.GetProtocol() != 6)
        {
            return;
        }
        TcpHeader tcp;
        p->RemoveHeader(tcp);
        uint32_t payload = p->GetSize();
        uint64_t key = Key(ip.GetSource(), tcp.GetSourcePort(), tcp.GetDestinationPort());
        uint8_t flags = tcp.GetFlags();
        if (flags & (TcpHeader::RST | TcpHeader::FIN))
        {
            Erase(key);
            return;
        }
        auto it = flows.find(key);
        if (flags & TcpHeader::SYN)
        {
            RxFlow* f = (it == flows.end() || !(flags & TcpHeader::ACK)) ? &New(key) : &it->second;
            f->peerSyn = true;
            f->peerWs = WsOption(tcp);
            f->hiSeq = tcp.GetSequenceNumber().GetValue() + 1;
            f->hiValid = true;
            FinishHandshake(*f);
            return;
        }
        if (it == flows.end())
        {
            if (payload == 0)
            {
                return;
            }
            New(key);
            it = flows.find(key);
        }
        if (payload)
        {
            OnData(it->second,
                   tcp.GetSequenceNumber().GetValue(),
                   payload,
                   ip.GetEcn() == Ipv4Header::ECN_CE);
            if (!m_queue.empty())
            {
                Release(false); // data arrived: in flight went down
            }
        }
    }

    // Bytes the sender of f may still have in flight: right edge sent - received.
    static uint64_t InFlight(const RxFlow& f)
    {
        if (!f.relValid || !f.hiValid || S32(f.relRe - f.hiSeq) <= 0)
        {
            return 0;
        }
        return f.relRe - f.hiSeq;
    }

    uint64_t TotalInFlight() const
    {
        uint64_t t = 0;
        for (const auto& kv : flows)
        {
            t += InFlight(kv.second);
        }
        return t;
    }

    // Total in flight if an ACK with right edge re went out to f.
    uint64_t TotalAfter(const RxFlow& f, uint32_t re) const
    {
        RxFlow g = f;
        if (!g.relValid || S32(re - g.relRe) > 0)
        {
            g.relRe = re;
            g.relValid = true;
        }
        return TotalInFlight() - InFlight(f) + InFlight(g);
    }

    void Sent(RxFlow& f, uint32_t re)
    {
        if (!f.relValid || S32(re - f.relRe) > 0)
        {
            f.relRe = re;
            f.relValid = true;
        }
        maxInFlight = std::max(maxInFlight, TotalInFlight());
    }

    // Send every held ACK that fits (per flow in order), and, when the timer
    // asks, every ACK held longer than ackHoldMaxS.
    void Release(bool timer)
    {
        std::vector<uint64_t> blocked; // flows with an earlier ACK still held
        for (auto it = m_queue.begin(); it != m_queue.end();)
        {
            Held& h = *it;
            if (std::find(blocked.begin(), blocked.end(), h.key) != blocked.end())
            {
                ++it;
                continue;
            }
            auto fl = flows.find(h.key);
            bool late = timer && Simulator::Now() - h.since >= Seconds(ackHoldMaxS);
            bool fits = h.fin || fl == flows.end() || TotalAfter(fl->second, h.re) <= ackQueueCap;
            if (!fits && !late)
            {
                blocked.push_back(h.key);
                ++it;
                continue;
            }
            if (fl != flows.end() && h.fin)
            {
                Erase(h.key); // the flow's FIN, after all its held ACKs
            }
            else if (fl != flows.end())
            {
                Sent(fl->second, h.re);
                fl->second.heldHere--;
            }
            released++;
            releasedByTimer += late && !fits;
            Ptr<Packet> p = h.packet;
            it = m_queue.erase(it);
            PppHeader ppp;
            p->RemoveHeader(ppp);
            m_resending = true;
            nic->Send(p, nic->GetBroadcast(), 0x0800);
            m_resending = false;
        }
    }

    void ReleaseTimer()
    {
        m_timer = false;
        Release(true);
        if (!m_queue.empty())
        {
            ArmTimer();
        }
    }

    void ArmTimer()
    {
        if (!m_timer)
        {
            m_timer = true;
            Simulator::Schedule(Seconds(ackHoldMaxS), &RxAgent::ReleaseTimer, this);
        }
    }

    size_t QueueLength() const
    {
        return m_queue.size();
    }

    // Receiver NIC queue, before enqueue: clamp the window field of our ACKs;
    // with the ACK queue on, keep an ACK that would overfill the path (false).
    bool Egress(Ptr<Packet> p) override
    {
        if (policy == RX_OFF || m_resending)
        {
            return true;
        }
        uint8_t b[12];
        if (p->CopyData(b, 12) < 12 || ((b[0] << 8) | b[1]) != PPP_IPV4 || b[11] != 6)
        {
            return true;
        }
        bool keep = false;
        PppHeader ppp;
        Ipv4Header ip;
        TcpHeader tcp;
        p->RemoveHeader(ppp);
        p->RemoveHeader(ip);
        p->RemoveHeader(tcp);
        uint64_t key = Key(ip.GetDestination(), tcp.GetDestinationPort(), tcp.GetSourcePort());
        uint8_t flags = tcp.GetFlags();
        auto it = flows.find(key);
        if (flags & (TcpHeader::RST | TcpHeader::FIN))
        {
            if (!(flags & TcpHeader::RST) && it != flows.end() && it->second.heldHere > 0)
            {
                // the ACK queue keeps each flow in order: its FIN waits behind its held
                // ACKs (app.connections: per-round closes connections); the flow ends
                // when the FIN leaves
                keep = true;
                it->second.heldHere++;
                m_pendingKey = key;
                m_pendingRe = 0;
                m_pendingFin = true;
            }
            else
            {
                Erase(key);
            }
        }
        else if (flags & TcpHeader::SYN)
        {
            RxFlow* f = (it == flows.end() || !(flags & TcpHeader::ACK)) ? &New(key) : &it->second;
            f->localSyn = true;
            f->localWs = WsOption(tcp);
            FinishHandshake(*f);
        }
        else if (it != flows.end() && (flags & TcpHeader::ACK) && policy != RX_OBSERVE)
        {
            RxFlow& f = it->second;
            bool shook = f.peerSyn && f.localSyn;
            if (clearEce && shook && (flags & TcpHeader::ECE))
            {
                tcp.SetFlags(flags & ~TcpHeader::ECE);
                eceCleared++;
            }
            // ictcp / rcc: until the policy writes a window, init_segs·MSS, as the
            // BPF data path does (agent/bpf/rxwin.bpf.c)
            uint64_t unset = static_cast<uint64_t>(initSegs) * f.mss;
            uint64_t w = policy == RX_NEWDCTCP ? f.w
                         : policy == RX_BUDGET ? Cap(f.w, f.mss)
                                               : (f.userW ? f.userW : unset);
            uint32_t kernel = tcp.GetWindowSize();
            uint32_t field = AckField(f, tcp.GetAckNumber().GetValue(), kernel, shook ? w : 0);
            if (field != kernel)
            {
                tcp.SetWindowSize(static_cast<uint16_t>(field));
                f.clamped++;
            }
            if (ackQueueCap && shook)
            {
                uint32_t re = tcp.GetAckNumber().GetValue() + (field << f.wscale);
                keep = f.heldHere > 0 || TotalAfter(f, re) > ackQueueCap;
                if (keep)
                {
                    f.heldHere++;
                    m_pendingKey = key;
                    m_pendingRe = re;
                }
                else
                {
                    Sent(f, re);
                }
            }
        }
        p->AddHeader(tcp);
        p->AddHeader(ip);
        p->AddHeader(ppp);
        if (keep)
        {
            m_queue.push_back({m_pendingKey, m_pendingRe, p, Simulator::Now(), m_pendingFin});
            m_pendingFin = false;
            held++;
            maxHeld = std::max<uint32_t>(maxHeld, m_queue.size());
            ArmTimer();
            return false;
        }
        return true;
    }

    // -- for the Python policies (ictcp, rcc)
    std::vector<uint64_t> Keys() const
    {
        std::vector<uint64_t> out;
        for (const auto& kv : flows)
        {
            out.push_back(kv.first);
        }
        return out;
    }

    void SetUserWindow(uint64_t key, uint64_t w)
    {
        auto it = flows.find(key);
        if (it != flows.end())
        {
            it->second.userW = w;
        }
    }

  private:
    struct Held
    {
        uint64_t key;
        uint32_t re;
        Ptr<Packet> packet;
        Time since;
        bool fin = false; // a FIN held behind its flow's ACKs
    };

    std::deque<Held> m_queue;
    bool m_resending = false;
    bool m_timer = false;
    uint64_t m_pendingKey = 0;
    uint32_t m_pendingRe = 0;
    bool m_pendingFin = false;
};

// Drive the port directly (tests/sim/test_rx_port.py): one flow, handshake done,
// window scale ws, then data packets (seq, payload, ce) and ACKs (ack, kernel field).
class RxPortProbe
{
  public:
    RxAgent agent;
    RxFlow* f = nullptr;

    RxPortProbe(uint32_t initSegs, uint32_t minSegs, uint64_t maxW, uint32_t mss, uint32_t ws,
                uint32_t isn)
    {
        agent.policy = RX_NEWDCTCP;
        agent.initSegs = initSegs;
        agent.minSegs = minSegs;
        agent.maxW = maxW;
        agent.mss = mss;
        f = &agent.New(1);
        f->peerSyn = f->localSyn = true;
        f->peerWs = f->localWs = static_cast<int>(ws);
        f->hiSeq = isn + 1;
        f->hiValid = true;
        agent.FinishHandshake(*f);
    }

    uint64_t Data(uint32_t seq, uint32_t payload, bool ce)
    {
        agent.OnData(*f, seq, payload, ce);
        return f->w;
    }

    uint32_t Ack(uint32_t ack, uint32_t kernelField)
    {
        return RxAgent::AckField(*f, ack, kernelField, f->w);
    }
};

// Drive newdctcp-budget directly (tests/sim/test_rx_port.py): flows by key,
// each opened with its handshake done, data and ACKs per flow, flows closed.
class RxBudgetProbe
{
  public:
    RxAgent agent;

    RxBudgetProbe(uint32_t initSegs, uint32_t minSegs, uint64_t maxW, uint32_t mss,
                  uint64_t budget)
    {
        agent.policy = RX_BUDGET;
        agent.initSegs = initSegs;
        agent.minSegs = minSegs;
        agent.maxW = maxW;
        agent.mss = mss;
        agent.budgetBytes = budget;
    }

    uint64_t Open(uint64_t key, uint32_t ws, uint32_t isn)
    {
        RxFlow& f = agent.New(key);
        f.peerSyn = f.localSyn = true;
        f.peerWs = f.localWs = static_cast<int>(ws);
        f.hiSeq = isn + 1;
        f.hiValid = true;
        agent.FinishHandshake(f);
        return f.w;
    }

    uint64_t Data(uint64_t key, uint32_t seq, uint32_t payload, bool ce)
    {
        RxFlow& f = agent.flows.at(key);
        agent.OnData(f, seq, payload, ce);
        return f.w;
    }

    uint32_t Ack(uint64_t key, uint32_t ack, uint32_t kernelField)
    {
        RxFlow& f = agent.flows.at(key);
        return RxAgent::AckField(f, ack, kernelField, agent.Cap(f.w, f.mss));
    }

    void Close(uint64_t key)
    {
        agent.Erase(key);
    }
};

} // namespace p4i

#endif // P4INCAST_SIM_RX_AGENT_H
