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
//    next_window, ack_field), checked against it by tests/sim/test_sim_rx_port.py.
//    Window of data = W new bytes; at its end with n packets, m CE:
//    m > 0: W = max(W/2, (n-m)·MSS, MSS), slow start over; else 2W in slow
//    start, W + MSS after; W <= max_w. Sender rule: NewDCTCP, Sreekumari et
//    al., Springer 2015.
//  - newdctcp-budget: the same W, capped by an even share of a receiver-wide
//    budget B: share = max(B / F, minSegs·MSS), F = flows whose handshake was
//    seen; W starts at B (StartW); W <- min(W, share) in whole segments (at
//    least one) on each data packet, at each window end and on each ACK, so
//    a flow's first window is its share when the request opens it
//    (reference.RxReference;
//    agent/policies/budget.py budget_share, budget_window). The handshake's
//    ACK of a flow we opened goes out with a zero window, so the request
//    opens the window at the share of that moment; the BPF data path's copy
//    offering initSegs MSS ahead of it is not modelled: ns-3's sender
//    does not bound its segments by the largest window offered (Linux's
//    tcp_bound_to_half_wnd).
//  - ictcp / rcc: W comes from the shared Python policies
//    (p4incast/policies/ictcp.py, rcc.py), stepped every agent tick by
//    p4incast.sim.engine with the counters kept here (SetUserWindow).
//
// newdctcp-budget with rotate: windows below one segment taken in turns
// (sim/cpp/rx_rotation.h; docs/algorithms.md §3.6), driven from Ingress,
// Egress and a tick the scenario schedules (RotTick).
//
// rcc also has the paper's ACK queue (ackQueueCap > 0), seed 002 Alg. 2 to the
// rules of p4incast/policies/rcc.py AckQueue (the reference; conformance:
// tests/agent/rcc_scenarios.py through RccAckQueueProbe below), and sends
// the receiver timer's ACK (Alg. 3 l.7, TimerAck) when the Python policy's
// RxTimer fires.
// MSS is the model's segment size (1448; ns-3 sends no MSS option).
#ifndef P4INCAST_SIM_RX_AGENT_H
#define P4INCAST_SIM_RX_AGENT_H

#include "ecn_queue.h"
#include "rx_rotation.h"
// RX_POLICY_*: the host agent's data-path modes, which this receiver ports
#include "../../agent/bpf/rx_policy.h"
// RX_MAX_WSCALE: the data path's TCP limits
#include "../../agent/bpf/rx_tcp.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace p4i
{
using namespace ns3;

// How the receiver runs each agent policy (sim/engine.py AGENT_CODES).
enum RxPolicy
{
    RX_OFF = RX_POLICY_OFF,
    RX_OBSERVE = RX_POLICY_OBSERVE,   // count, never clamp
    RX_NEWDCTCP = RX_POLICY_NEWDCTCP, // per-packet window rule here
    RX_USER = RX_POLICY_USER,         // window set from Python (ictcp, rcc)
    RX_BUDGET = RX_POLICY_BUDGET      // newdctcp-rx capped by a share of budgetBytes
};

// Bumped whenever a value RxAgent::srtt returns may change (a sender's RTT
// sample, a flow found by a new address), by every scenario that sets srtt.
inline uint64_t g_rttEpoch = 0;

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
    bool idle = false; // latest data segment shorter than MSS: counts 0 in flight
    // rotation: what a window update for the flow repeats (its latest ACK's)
    bool acked = false;
    uint32_t ackSeq = 0, ackNo = 0; // our next sequence number, its ack
    uint32_t localAddr = 0;
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
    // Bumped whenever a flow comes or goes or its pkts or bytes change: with
    // g_rttEpoch, scenario.h ReadFlowChanges knows when nothing it reads moved.
    uint64_t flowEpoch = 0;
    // Bumped whenever what Waits reads may change beyond that: the ACK queue's
    // entries, a right edge released, the sequence a SYN starts (ReadRccChanges).
    uint64_t waitsEpoch = 0;
    uint64_t budgetBytes = 0; // newdctcp-budget: B
    // Clear ECE on the ACKs of the flows the policy controls: its window is
    // the only cut (docs/algorithms.md §3.7; agent/bpf/rxwin_write.h clear_ece).
    bool clearEce = false;
    // rcc: a new flow's window before the policy's first step is its share of
    // Q = sharePkts packets, max(Q / flows, initSegs) MSS (0: initSegs MSS)
    uint32_t sharePkts = 0;
    uint64_t eceCleared = 0; // ACKs whose ECE was cleared
    uint32_t counted = 0;     // flows sharing it
    uint64_t closedFlows = 0, closedClamped = 0; // flows ended (FIN, RST, a new SYN) and their clamped ACKs
    // newdctcp-budget's rotation (rotate): its state, the agent's tick (s),
    // and each flow's smoothed RTT for the stale test (s; the scenario's)
    bool rotate = false;
    RxRotation rot;
    double tickS = 0;
    std::function<double(uint64_t)> srtt = [](uint64_t) { return 0.0; };

    // agent/policies/budget.py budget_share
    uint64_t Share(uint32_t fmss) const
    {
        uint64_t floor = static_cast<uint64_t>(minSegs) * fmss;
        return std::max<uint64_t>(budgetBytes / std::max<uint32_t>(counted, 1), floor);
    }

    // W of a new flow (agent/bpf/rxwin_rules.h start_w): initSegs MSS;
    // newdctcp-budget's, B, which Cap brings down to the share where W is used
    uint64_t StartW(uint32_t fmss) const
    {
        if (policy == RX_BUDGET && budgetBytes)
        {
            return budgetBytes;
        }
        return static_cast<uint64_t>(initSegs) * fmss;
    }

    // agent/policies/budget.py budget_window: whole segments, at least one
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
            flowEpoch++;
            rot.End(key);
            counted -= it->second.counted;
            m_lastAck.erase(key);
            closedFlows++;
            closedClamped += it->second.clamped;
            flows.erase(it);
        }
    }

    // -- RCC's ACK queue [seed 002 Alg. 2], the rules of p4incast/policies/rcc.py
    // AckQueue. Every ACK we send of a flow data has arrived from: the flow's
    // held entry is taken out (l.1), the ACK goes in at the tail (l.2: no
    // priorities, FIFO), and while the total in flight is below ackQueueCap
    // bytes (Q·MSS) the head is sent and counted (l.3–5: tested before each
    // send). Data arriving only lowers the count; the ACK it makes us send
    // runs the loop. In flight per flow = the right edge last released to it −
    // the highest byte received; 0 while the flow's latest segment is shorter
    // than its MSS (it has emptied its send buffer: ours, for rounds over
    // persistent connections). An ACK still held after the loop sends at once
    // its part that opens nothing new, all of it if it opens nothing new (ours:
    // senders with a cwnd below their window must get their ACKs). A pure ACK
    // before the flow's first data (the handshake) passes uncounted and runs
    // the loop. Our FIN, and anything sent on the flow after it, trails the
    // flow's held entry; so does what follows a held packet carrying data (a
    // request, never taken out). Whatever leaves the queue goes out after the
    // packet being handled, in order (Flush). 0 = off.
    uint64_t ackQueueCap = 0;
    bool split = true; // the split ACKs above (false: the paper's rule alone, a test's)
    Ptr<NetDevice> nic; // the receiver's NIC: held ACKs are sent through it
    std::vector<Ptr<Packet>>* sink = nullptr; // RccAckQueueProbe: released packets
    uint64_t held = 0, released = 0; // ACKs that waited after their loop; of those, sent
    uint64_t replaced = 0;   // waiting ACKs taken out by their flow's newer one, which waits
    uint64_t superseded = 0; // waiting ACKs taken out by their flow's newer one, which left
    uint64_t splitAcks = 0;  // waiting ACKs whose no-new-window part left at once
    uint64_t timerAcks = 0;  // ACKs sent by the receiver's timer (Alg. 3 l.7)
    uint64_t maxInFlight = 0; // largest total in flight after an ACK that opened window, bytes
    uint32_t maxHeld = 0;     // most entries in the queue at once

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
        flowEpoch++;
        RxFlow& f = flows[key];
        f = RxFlow();
        f.mss = mss;
        f.w = StartW(mss);
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
        f.w = StartW(f.mss);
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
        return std::min<uint32_t>(o->GetScale(), RX_MAX_WSCALE);
    }

    // newdctcp_rx.RxFlow.on_data (newdctcp-budget: W within the share first)
    void OnData(RxFlow& f, uint32_t seq, uint32_t payload, bool ce)
    {
        f.w = Cap(f.w, f.mss);
        uint32_t end = seq + payload;
        flowEpoch++;
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

    // newdctcp_rx.RxFlow.ack_field; zero: 0, or close the window (rotation:
    // RX_CLOSE_EDGE as far as the right edge lets it, RX_CLOSE_ALL completely)
    static uint32_t AckField(RxFlow& f, uint32_t ack, uint32_t kernelField, uint64_t w,
                             int zero = 0)
    {
        uint32_t ws = f.wscale;
        uint32_t out = kernelField;
        if (w || zero)
        {
            // zero: close the window, as far as the right edge lets it
            uint64_t want = zero ? 0 : (w + (1u << ws) - 1) >> ws; // W / 2^ws rounded up
            if (f.reValid && zero != RX_CLOSE_ALL)
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
            Erase(key); // the flow ends: it counts nothing in flight
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
            waitsEpoch++;
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
        if (Rotating() && f_acks(it->second, tcp))
        {
            rot.Acked(key);
        }
        if (payload)
        {
            RxFlow& f = it->second;
            uint64_t wBefore = Cap(f.w, f.mss), bytesBefore = f.bytes;
            bool ce = ip.GetEcn() == Ipv4Header::ECN_CE;
            OnData(f, tcp.GetSequenceNumber().GetValue(), payload, ce);
            if (Rotating() && f.counted)
            {
                rot.OnData(key, counted, f.mss, f.bytes - bytesBefore, ce, wBefore,
                           Simulator::Now().GetSeconds());
            }
            // a segment shorter than MSS: the sender's buffer is empty (ACK
            // queue: the ACK this data makes us send runs the queue, Egress);
            // its ACK ends the flow's turn (rotation)
            f.idle = payload < f.mss;
        }
    }

    // A packet of the flow that acknowledges everything we sent it (rotation).
    static bool f_acks(const RxFlow& f, const TcpHeader& tcp)
    {
        return f.acked && (tcp.GetFlags() & TcpHeader::ACK) &&
               S32(tcp.GetAckNumber().GetValue() - f.ackSeq) >= 0;
    }

    // Bytes the sender of f may still have in flight: right edge sent - received.
    static uint64_t InFlight(const RxFlow& f)
    {
        if (!f.relValid || !f.hiValid || f.idle || S32(f.relRe - f.hiSeq) <= 0)
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

    static bool Opens(const RxFlow& f, uint32_t re)
    {
        return !f.relValid || S32(re - f.relRe) > 0;
    }

    void Sent(RxFlow& f, uint32_t re)
    {
        if (Opens(f, re))
        {
            waitsEpoch++;
            f.relRe = re;
            f.relValid = true;
            maxInFlight = std::max(maxInFlight, TotalInFlight());
        }
    }

    // Alg. 2 l.3–6: while the total in flight is below the cap, the head is
    // sent (queued for Flush) and its right edge counted.
    void Release()
    {
        while (!m_queue.empty() && TotalInFlight() < ackQueueCap)
        {
            Held h = m_queue.front();
            m_queue.pop_front();
            waitsEpoch++;
            auto fl = flows.find(h.key);
            if (fl != flows.end())
            {
                Sent(fl->second, h.re);
            }
            if (h.waited)
            {
                released++;
            }
            m_pending.push_back(h.packet);
            for (const auto& t : h.after)
            {
                m_pending.push_back(t.first);
                if (t.second)
                {
                    Erase(h.key); // the flow ends when its FIN leaves
                }
            }
        }
    }

    // Send what left the queue once the packet being handled has gone (Egress
    // cannot send from inside the NIC queue's Enqueue). Without a NIC (the
    // probe) the caller runs Kicked() itself.
    void Kick()
    {
        if (m_kick || m_pending.empty())
        {
            return;
        }
        m_kick = true;
        if (nic)
        {
            Simulator::ScheduleNow(&RxAgent::Kicked, this);
        }
    }

    void Kicked()
    {
        m_kick = false;
        std::vector<Ptr<Packet>> out;
        out.swap(m_pending);
        for (const auto& p : out)
        {
            Emit(p);
        }
    }

    // For the receiver's timer (Alg. 3): the flow expects data (counts something
    // in flight) and has no ACK held.
    bool Waits(uint64_t key)
    {
        auto it = flows.find(key);
        return it != flows.end() && InFlight(it->second) > 0 && !FindHeld(key);
    }

    // Frame p (PPP | IPv4 | TCP ...) with its TCP header changed by edit.
    template <class Edit>
    static void EditTcp(Ptr<Packet> p, Edit edit)
    {
        PppHeader ppp;
        Ipv4Header ip;
        TcpHeader tcp;
        p->RemoveHeader(ppp);
        p->RemoveHeader(ip);
        p->RemoveHeader(tcp);
        edit(tcp);
        p->AddHeader(tcp);
        p->AddHeader(ip);
        p->AddHeader(ppp);
    }

    // Alg. 3 l.7: the receiver's timer fired for the flow; its latest ACK goes
    // out again with PSH, through the clamp (the policy's new window) and the
    // queue like any ACK. PSH means nothing to a stock sender.
    void TimerAck(uint64_t key)
    {
        auto it = m_lastAck.find(key);
        if (it == m_lastAck.end() || flows.find(key) == flows.end())
        {
            return;
        }
        Ptr<Packet> p = it->second->Copy();
        EditTcp(p, [](TcpHeader& tcp) { tcp.SetFlags(tcp.GetFlags() | TcpHeader::PSH); });
        timerAcks++;
        if (Egress(p))
        {
            Emit(p);
        }
        if (!nic && m_kick)
        {
            Kicked(); // the probe: no simulator to run it
        }
    }

    bool KickPending() const
    {
        return m_kick;
    }

    size_t QueueLength() const
    {
        return m_queue.size();
    }

    // Keys of the flows with an entry held, head first.
    std::vector<uint64_t> HeldKeys() const
    {
        std::vector<uint64_t> out;
        for (const auto& h : m_queue)
        {
            out.push_back(h.key);
        }
        return out;
    }

    // Receiver NIC queue, before enqueue: clamp the window field of our ACKs;
    // with the ACK queue on, an ACK goes through it (false: it left the NIC
    // queue's hands; it is sent, now or later, by Flush).
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
        Ptr<Packet> orig = ackQueueCap ? p->Copy() : nullptr; // the timer's ACK, as sent
        PppHeader ppp;
        Ipv4Header ip;
        TcpHeader tcp;
        p->RemoveHeader(ppp);
        p->RemoveHeader(ip);
        p->RemoveHeader(tcp);
        bool data = p->GetSize() > 0;
        uint64_t key = Key(ip.GetDestination(), tcp.GetDestinationPort(), tcp.GetSourcePort());
        uint8_t flags = tcp.GetFlags();
        auto it = flows.find(key);
        Held* h = ackQueueCap ? FindHeld(key) : nullptr;
        enum
        {
            PASS,  // leaves now; the loop runs
            QUEUE, // Alg. 2: its flow's entry taken out, it goes in at the tail
            TRAIL  // behind the flow's entry, in order
        } act = PASS;
        bool fin = false;
        bool passing = it == flows.end(); // no ACK of a known flow: may carry a grant
        uint32_t re = 0, ackNo = 0;
        if (flags & (TcpHeader::RST | TcpHeader::FIN))
        {
            if (!(flags & TcpHeader::RST) && h)
            {
                // our FIN waits behind the flow's held ACK (app.connections:
                // per-round closes connections); the flow ends when it leaves
                act = TRAIL;
                fin = true;
            }
            else
            {
                Erase(key); // the flow ends: in flight went down
            }
            passing = true;
        }
        else if (flags & TcpHeader::SYN)
        {
            RxFlow* f = (it == flows.end() || !(flags & TcpHeader::ACK)) ? &New(key) : &it->second;
            f->localSyn = true;
            f->localWs = WsOption(tcp);
            FinishHandshake(*f);
            passing = true;
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
            // ictcp / rcc: until the policy writes a window, rcc's share of Q
            // (sharePkts; rcc.equal_share) or init_segs·MSS, as the BPF data
            // path does (agent/bpf/rxwin_hooks.h)
            uint64_t unset =
                sharePkts ? static_cast<uint64_t>(std::max<uint32_t>(initSegs, sharePkts / std::max<uint32_t>(counted, 1))) * f.mss
                          : static_cast<uint64_t>(initSegs) * f.mss;
            uint64_t w = policy == RX_NEWDCTCP ? f.w
                         : policy == RX_BUDGET ? Cap(f.w, f.mss)
                                               : (f.userW ? f.userW : unset);
            uint32_t kernel = tcp.GetWindowSize();
            ackNo = tcp.GetAckNumber().GetValue();
            // the handshake's ACK of a flow we opened (no data either way yet)
            bool handshake = !f.reValid && !f.pkts && !data;
            // newdctcp-budget closes it: our first segment, the request, opens
            // the window at the share of that moment (agent/bpf/rxwin_hooks.h
            // handshake_reopen)
            int zero = policy == RX_BUDGET && shook && handshake ? RX_CLOSE_EDGE : 0;
            if (Rotating() && shook)
            {
                bool advanced = ackNo != f.ackNo; // more acknowledged than our last packet
                f.acked = true;
                f.ackSeq = tcp.GetSequenceNumber().GetValue() + p->GetSize();
                if (data)
                {
                    rot.Sent(key); // a request: its acknowledgment is due
                }
                f.ackNo = ackNo;
                f.localAddr = ip.GetSource().Get();
                if (!handshake)
                {
                    bool runt = f.idle && ackNo == f.hiSeq && advanced;
                    int64_t left = f.reValid ? S32(f.lastRe - ackNo) : 0;
                    auto wz = rot.OnAck(key, counted, f.mss, runt, advanced && f.reValid, left,
                                        w, Simulator::Now().GetSeconds());
                    w = wz.first;
                    zero = wz.second;
                }
            }
            uint32_t field = AckField(f, ackNo, kernel, shook ? w : 0, zero);
            if (field != kernel)
            {
                tcp.SetWindowSize(static_cast<uint16_t>(field));
                f.clamped++;
            }
            re = ackNo + (field << f.wscale);
            if (h && h->closed)
            {
                act = TRAIL;
            }
            else if (h || (ackQueueCap && shook && (data || f.pkts > 0)))
            {
                // (a pure ACK before the flow's first data completes the
                // handshake: it passes and counts nothing, as a SYN-ACK)
                act = QUEUE;
                if (!data)
                {
                    m_lastAck[key] = orig;
                }
            }
        }
        else if (h && (flags & TcpHeader::ACK))
        {
            act = h->closed ? TRAIL : QUEUE; // its flow has ended: Alg. 2 all the same
        }
        p->AddHeader(tcp);
        p->AddHeader(ip);
        p->AddHeader(ppp);
        if (Rotating())
        {
            if (passing)
            {
                rot.Fill(counted, mss, Simulator::Now().GetSeconds());
            }
            SendGrants();
        }
        if (act == PASS)
        {
            if (ackQueueCap)
            {
                Release(); // every ACK runs the loop (Alg. 2 l.3)
                Kick();
            }
            return true;
        }
        if (act == TRAIL)
        {
            h->after.emplace_back(p, fin);
            if (!h->fin && !fin && it != flows.end())
            {
                h->re = std::max(h->re, re, Seq); // a request ahead of it: checked as one
            }
            h->fin = h->fin || fin;
            h->closed = true;
            Release();
            Kick();
            return false;
        }
        bool erased = h != nullptr;
        if (h)
        {
            Drop(h); // Alg. 2 l.1
        }
        m_queue.push_back({key, re, p, data, {}, false, false}); // l.2: the tail
        waitsEpoch++;
        Release();                                               // l.3–6
        // the new entry is the tail: it waits if anything is left
        bool waits = !m_queue.empty();
        if (waits && split && it != flows.end())
        {
            RxFlow& f = it->second;
            if (!Opens(f, re))
            {
                // opens nothing new: all of it leaves, nothing is held (ours)
                m_queue.pop_back();
                waitsEpoch++;
                m_pending.push_back(p);
                waits = false;
            }
            else if (!data && f.relValid && S32(f.relRe - ackNo) > 0 &&
                     ((f.relRe - ackNo) >> f.wscale) > 0)
            {
                // ours: its part up to the right edge already released leaves now
                Ptr<Packet> c = p->Copy();
                auto released = static_cast<uint16_t>((f.relRe - ackNo) >> f.wscale);
                EditTcp(c, [released](TcpHeader& tcp) { tcp.SetWindowSize(released); });
                m_pending.push_back(c);
                splitAcks++;
            }
        }
        if (erased)
        {
            (waits ? replaced : superseded)++;
        }
        if (waits)
        {
            m_queue.back().waited = true;
            held++;
            maxHeld = std::max<uint32_t>(maxHeld, m_queue.size());
        }
        Kick();
        return false;
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

    // -- rotation (rx_rotation.h)
    bool Rotating() const
    {
        return rotate && policy == RX_BUDGET;
    }

    // The window update a grant sends to flow `key`: a pure ACK as its latest
    // one (our next sequence number, its ack) offering one segment.
    Ptr<Packet> GrantPacket(uint64_t key) const
    {
        auto it = flows.find(key);
        if (it == flows.end() || !it->second.acked)
        {
            return nullptr;
        }
        const RxFlow& f = it->second;
        TcpHeader t;
        t.SetSourcePort(static_cast<uint16_t>(key & 0xffff));
        t.SetDestinationPort(static_cast<uint16_t>((key >> 16) & 0xffff));
        t.SetSequenceNumber(SequenceNumber32(f.ackSeq));
        t.SetAckNumber(SequenceNumber32(f.ackNo));
        t.SetFlags(TcpHeader::ACK);
        t.SetWindowSize(static_cast<uint16_t>((f.mss + (1u << f.wscale) - 1) >> f.wscale));
        Ptr<Packet> p = Create<Packet>();
        p->AddHeader(t);
        Ipv4Header ip;
        ip.SetSource(Ipv4Address(f.localAddr));
        ip.SetDestination(Ipv4Address(KeyPeer(key)));
        ip.SetProtocol(6);
        ip.SetTtl(64);
        ip.SetPayloadSize(t.GetSerializedSize());
        p->AddHeader(ip);
        PppHeader ppp;
        ppp.SetProtocol(PPP_IPV4);
        p->AddHeader(ppp);
        return p;
    }

    // Send the window updates of the grants made: after the packet being
    // handled, as the host's copy goes out beside the ACK that carries it
    // (Egress cannot send from inside the NIC queue's Enqueue).
    void SendGrants()
    {
        if (rot.granted.empty() || m_grantsPending || !nic)
        {
            return; // without a NIC (RxRotationProbe) the caller reads rot.granted
        }
        m_grantsPending = true;
        Simulator::ScheduleNow(&RxAgent::GrantsDue, this);
    }

    void GrantsDue()
    {
        m_grantsPending = false;
        std::vector<uint64_t> due;
        due.swap(rot.granted);
        for (uint64_t k : due)
        {
            Ptr<Packet> p = GrantPacket(k);
            if (p)
            {
                Emit(p);
            }
        }
    }

    bool GrantsPending() const
    {
        return m_grantsPending;
    }

    // One agent tick (agent/rotation.py Rescuer.step), every tickS.
    void RotTick()
    {
        if (!Rotating())
        {
            return;
        }
        rot.Tick(Simulator::Now().GetSeconds(), tickS, counted, mss, srtt);
        SendGrants();
        Simulator::Schedule(Seconds(tickS), &RxAgent::RotTick, this);
    }

  private:
    struct Held
    {
        uint64_t key;
        uint32_t re;        // right edge the entry opens (its latest ACK's)
        Ptr<Packet> packet; // the flow's latest ACK
        bool closed;        // carries data or has our FIN behind it: never taken out
        std::vector<std::pair<Ptr<Packet>, bool>> after; // sent right after it; true = our FIN
        bool fin;
        bool waited; // still queued after its own loop (counted in held)
    };

    static bool Seq(uint32_t a, uint32_t b)
    {
        return S32(a - b) < 0;
    }

    void Drop(Held* h)
    {
        for (auto it = m_queue.begin(); it != m_queue.end(); ++it)
        {
            if (&*it == h)
            {
                m_queue.erase(it);
                waitsEpoch++;
                return;
            }
        }
    }

    Held* FindHeld(uint64_t key)
    {
        for (auto& h : m_queue)
        {
            if (h.key == key)
            {
                return &h;
            }
        }
        return nullptr;
    }

    void Emit(Ptr<Packet> p)
    {
        if (sink)
        {
            sink->push_back(p->Copy());
        }
        if (nic)
        {
            PppHeader ppp;
            p->RemoveHeader(ppp);
            m_resending = true;
            nic->Send(p, nic->GetBroadcast(), 0x0800);
            m_resending = false;
        }
    }

    std::deque<Held> m_queue;
    bool m_grantsPending = false;
    std::vector<Ptr<Packet>> m_pending;          // left the queue, not sent yet (Kick)
    std::map<uint64_t, Ptr<Packet>> m_lastAck;   // each flow's latest pure ACK (TimerAck)
    bool m_resending = false;
    bool m_kick = false;
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

// The probes' flows: flow i is the connection between peer 10.1.0.i, port
// 10000 + i, and us, 10.0.0.1 port 5001. Frame builds one of its packets:
// PPP | IPv4 | TCP | payload, fromPeer its to us, else ours to it; wscale >= 0
// adds that window-scale option (a SYN's), ecn is the IP header's.
struct ProbeFlows
{
    static Ipv4Address Peer(uint32_t i)
    {
        return Ipv4Address(0x0a010000u + i);
    }

    static uint64_t KeyOf(uint32_t i)
    {
        return RxAgent::Key(Peer(i), static_cast<uint16_t>(10000 + i), 5001);
    }

    static uint32_t FlowOf(uint64_t key)
    {
        return static_cast<uint16_t>(key >> 16) - 10000;
    }

    // The TCP header of frame p (PPP | IPv4 | TCP ...), p left as it is.
    static TcpHeader Tcp(Ptr<const Packet> p)
    {
        Ptr<Packet> q = p->Copy();
        PppHeader ppp;
        Ipv4Header ip;
        TcpHeader tcp;
        q->RemoveHeader(ppp);
        q->RemoveHeader(ip);
        q->RemoveHeader(tcp);
        return tcp;
    }

    static Ptr<Packet> Frame(uint32_t i, bool fromPeer, uint32_t seq, uint32_t ackNo,
                             uint8_t flags, uint32_t window, uint32_t payload, int wscale = -1,
                             Ipv4Header::EcnType ecn = Ipv4Header::ECN_NotECT)
    {
        Ptr<Packet> p = Create<Packet>(payload);
        TcpHeader tcp;
        uint16_t peerPort = static_cast<uint16_t>(10000 + i);
        tcp.SetSourcePort(fromPeer ? peerPort : 5001);
        tcp.SetDestinationPort(fromPeer ? 5001 : peerPort);
        tcp.SetSequenceNumber(SequenceNumber32(seq));
        tcp.SetAckNumber(SequenceNumber32(ackNo));
        tcp.SetFlags(flags);
        tcp.SetWindowSize(static_cast<uint16_t>(window));
        if (wscale >= 0)
        {
            Ptr<TcpOptionWinScale> o = CreateObject<TcpOptionWinScale>();
            o->SetScale(static_cast<uint8_t>(wscale));
            tcp.AppendOption(o);
        }
        p->AddHeader(tcp);
        Ipv4Header ip;
        Ipv4Address local("10.0.0.1");
        ip.SetSource(fromPeer ? Peer(i) : local);
        ip.SetDestination(fromPeer ? local : Peer(i));
        ip.SetProtocol(6);
        ip.SetPayloadSize(p->GetSize());
        ip.SetTtl(64);
        ip.SetEcn(ecn);
        p->AddHeader(ip);
        PppHeader ppp;
        ppp.SetProtocol(PPP_IPV4);
        p->AddHeader(ppp);
        return p;
    }
};

// Drive RCC's ACK queue directly (tests/sim/test_rcc_ack_queue_model.py): real
// frames through Ingress and Egress, no network. Flow i is the connection from
// 10.1.0.i:(10000 + i) to our port 5001; its handshake (no window scale) is done
// on its first data or ACK, and its window is left to the ACKs given (W unclamped).
// Each call leaves in `key/ack/win/fin` what the receiver sent, in order.
class RccAckQueueProbe : public ProbeFlows
{
  public:
    RxAgent agent;
    std::vector<uint32_t> flow, ack, win, fin, psh;

    RccAckQueueProbe(uint32_t queueMaxsize, uint32_t mss, bool split = true)
    {
        agent.policy = RX_USER;
        agent.mss = mss;
        agent.ackQueueCap = static_cast<uint64_t>(queueMaxsize) * mss;
        agent.split = split;
        agent.sink = &m_out;
    }

    // A segment [seqEnd - payload, seqEnd) from flow i; fin: with the peer's FIN.
    void Data(uint32_t i, uint32_t seqEnd, uint32_t payload, bool withFin)
    {
        Begin();
        uint32_t seq = seqEnd - payload;
        if (!withFin && agent.flows.find(KeyOf(i)) == agent.flows.end())
        {
            Open(i, seq - 1);
        }
        uint8_t flags = TcpHeader::ACK | (withFin ? TcpHeader::FIN : 0);
        agent.Ingress(Frame(i, true, seq, 0, flags, 0, payload));
        End();
    }

    // We send flow i an ACK: ack number, window in bytes (< 65536). A flow not
    // seen yet is opened first (handshake done, no data: ack = its ISN + 1).
    void Ack(uint32_t i, uint32_t ackNo, uint32_t window)
    {
        if (agent.flows.find(KeyOf(i)) == agent.flows.end())
        {
            Open(i, ackNo - 1);
        }
        Send(Frame(i, false, 0, ackNo, TcpHeader::ACK, window, 0));
    }

    // We send flow i our FIN.
    void Fin(uint32_t i)
    {
        Send(Frame(i, false, 0, 0, TcpHeader::FIN | TcpHeader::ACK, 0, 0));
    }

    // The receiver's timer fired for flow i with window w bytes (Alg. 3).
    void Timer(uint32_t i, uint64_t w)
    {
        Begin();
        agent.SetUserWindow(KeyOf(i), w);
        agent.TimerAck(KeyOf(i));
        End();
    }

    bool Waits(uint32_t i)
    {
        return agent.Waits(KeyOf(i));
    }

    std::vector<uint32_t> Held() const
    {
        std::vector<uint32_t> out;
        for (uint64_t k : agent.HeldKeys())
        {
            out.push_back(FlowOf(k));
        }
        return out;
    }

    uint64_t InFlight(uint32_t i) const
    {
        auto it = agent.flows.find(KeyOf(i));
        return it == agent.flows.end() ? 0 : RxAgent::InFlight(it->second);
    }

    uint64_t Total() const
    {
        return agent.TotalInFlight();
    }

  private:
    std::vector<Ptr<Packet>> m_out;

    // The scenarios' flows are open before their steps: the handshake's SYN-ACK
    // is not one of the table's ACKs, so it does not run the queue here.
    void Open(uint32_t i, uint32_t isn)
    {
        uint64_t cap = agent.ackQueueCap;
        agent.ackQueueCap = 0;
        agent.Ingress(Frame(i, true, isn, 0, TcpHeader::SYN, 0, 0));
        agent.Egress(Frame(i, false, 0, isn + 1, TcpHeader::SYN | TcpHeader::ACK, 65535, 0));
        agent.ackQueueCap = cap;
        agent.SetUserWindow(KeyOf(i), 1ull << 40); // the ACK's own window stands
    }

    void Send(Ptr<Packet> p)
    {
        Begin();
        if (agent.Egress(p))
        {
            m_out.push_back(p);
        }
        if (agent.KickPending())
        {
            agent.Kicked();
        }
        End();
    }

    void Begin()
    {
        m_out.clear();
        flow.clear();
        ack.clear();
        win.clear();
        fin.clear();
        psh.clear();
    }

    void End()
    {
        for (const auto& q : m_out)
        {
            Ptr<Packet> p = q->Copy();
            PppHeader ppp;
            Ipv4Header ip;
            TcpHeader tcp;
            p->RemoveHeader(ppp);
            p->RemoveHeader(ip);
            p->RemoveHeader(tcp);
            flow.push_back(FlowOf(RxAgent::Key(ip.GetDestination(), tcp.GetDestinationPort(),
                                               tcp.GetSourcePort())));
            ack.push_back(tcp.GetAckNumber().GetValue());
            win.push_back(tcp.GetWindowSize());
            fin.push_back((tcp.GetFlags() & TcpHeader::FIN) ? 1 : 0);
            psh.push_back((tcp.GetFlags() & TcpHeader::PSH) ? 1 : 0);
        }
    }
};

} // namespace p4i

#endif // P4INCAST_SIM_RX_AGENT_H
