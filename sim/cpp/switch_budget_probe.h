// p4-incast simulator: the switch budget's scripted packets (tests/sim).
//
// Builds the receiver's SYNs and ACKs as ns-3 headers (IPv4 + TCP, the window
// scale as a TCP option) and passes them through the model switch's path,
// SwitchBudget::Ipv4, at a given time; returns the window field that leaves,
// and keeps every packet that leaves for it (the packet, then the handshake's
// zero-window copy if there is one) in `sent`. IPv6 goes to
// SwitchBudget::Handle with its 16-byte addresses (the model's network is IPv4
// only).
#ifndef P4INCAST_SIM_SWITCH_BUDGET_PROBE_H
#define P4INCAST_SIM_SWITCH_BUDGET_PROBE_H

#include "switch_budget.h"

#include <sstream>
#include <string>
#include <vector>

namespace p4i
{
using namespace ns3;

// One packet as the switch forwarded it: the TCP fields the rule could touch.
struct SwitchBudgetSent
{
    uint16_t window = 0;
    uint8_t flags = 0;
    uint16_t srcPort = 0, dstPort = 0;
    uint32_t seq = 0, ack = 0;
    uint32_t payload = 0; // bytes after the TCP header
    std::string src, dst; // IPv4 addresses; empty for Send6
};

struct SwitchBudgetProbe
{
    SwitchBudget sw;
    std::vector<SwitchBudgetSent> sent; // what the last Send4/Send6 forwarded, in order

    // One TCP packet from `rx`:`rxPort` to `peer`:`peerPort` with `flags`
    // (TcpHeader's bits), `window`, a window-scale option of `ws` (-1: none;
    // SYNs only) and `payload` bytes; returns its window as forwarded.
    uint16_t Send4(const std::string& rx,
                   const std::string& peer,
                   uint16_t rxPort,
                   uint16_t peerPort,
                   uint8_t flags,
                   uint16_t window,
                   int ws,
                   uint32_t payload,
                   double now)
    {
        Ptr<Packet> p = Create<Packet>(payload);
        TcpHeader t;
        t.SetSourcePort(rxPort);
        t.SetDestinationPort(peerPort);
        t.SetFlags(flags);
        t.SetSequenceNumber(SequenceNumber32(1001));
        t.SetAckNumber(SequenceNumber32(7001));
        t.SetWindowSize(window);
        if (ws >= 0)
        {
            Ptr<TcpOptionWinScale> o = CreateObject<TcpOptionWinScale>();
            o->SetScale(static_cast<uint8_t>(ws));
            t.AppendOption(o);
        }
        p->AddHeader(t);
        Ipv4Header ip;
        ip.SetSource(Ipv4Address(rx.c_str()));
        ip.SetDestination(Ipv4Address(peer.c_str()));
        ip.SetProtocol(6);
        ip.SetTtl(64);
        ip.SetPayloadSize(p->GetSize());
        p->AddHeader(ip);
        Ptr<const Packet> zero;
        Ptr<const Packet> out = sw.Ipv4(p, now, zero);
        sent.clear();
        Keep(out);
        if (zero)
        {
            Keep(zero);
        }
        return sent.front().window;
    }

    // The same through Handle() with IPv6 addresses (16 bytes each, big-endian),
    // no payload; `sent` holds the window (and the copy's: 0) alone.
    uint16_t Send6(const std::string& rx,
                   const std::string& peer,
                   uint16_t rxPort,
                   uint16_t peerPort,
                   uint8_t flags,
                   uint16_t window,
                   int ws,
                   double now)
    {
        std::array<uint8_t, 16> a{}, b{};
        Ipv6Address(rx.c_str()).Serialize(a.data());
        Ipv6Address(peer.c_str()).Serialize(b.data());
        bool zero = false;
        sw.Handle(a, b, rxPort, peerPort, flags, ws, 0, window, now, zero);
        sent.clear();
        sent.push_back(SwitchBudgetSent{});
        sent.back().window = window;
        if (zero)
        {
            sent.push_back(SwitchBudgetSent{}); // window 0
        }
        return window;
    }

  private:
    void Keep(Ptr<const Packet> p)
    {
        Ptr<Packet> c = p->Copy();
        Ipv4Header ip;
        TcpHeader t;
        c->RemoveHeader(ip);
        c->RemoveHeader(t);
        SwitchBudgetSent s;
        s.window = t.GetWindowSize();
        s.flags = t.GetFlags();
        s.srcPort = t.GetSourcePort();
        s.dstPort = t.GetDestinationPort();
        s.seq = t.GetSequenceNumber().GetValue();
        s.ack = t.GetAckNumber().GetValue();
        s.payload = c->GetSize();
        std::ostringstream a, b;
        ip.GetSource().Print(a);
        ip.GetDestination().Print(b);
        s.src = a.str();
        s.dst = b.str();
        sent.push_back(s);
    }
};

} // namespace p4i

#endif // P4INCAST_SIM_SWITCH_BUDGET_PROBE_H
