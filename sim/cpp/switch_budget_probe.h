// p4-incast simulator: the switch budget's scripted packets (tests/sim).
//
// Builds the receiver's SYNs and ACKs as ns-3 headers (IPv4 + TCP, the window
// scale as a TCP option) and passes them through the model switch's path,
// SwitchBudget::Ipv4, at a given time; returns the window field that leaves.
// IPv6 goes to SwitchBudget::Handle with its 16-byte addresses (the model's
// network is IPv4 only).
#ifndef P4INCAST_SIM_SWITCH_BUDGET_PROBE_H
#define P4INCAST_SIM_SWITCH_BUDGET_PROBE_H

#include "switch_budget.h"

#include <string>

namespace p4i
{
using namespace ns3;

struct SwitchBudgetProbe
{
    SwitchBudget sw;

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
        Ptr<const Packet> out = sw.Ipv4(p, now);
        Ptr<Packet> c = out->Copy();
        Ipv4Header ip2;
        TcpHeader t2;
        c->RemoveHeader(ip2);
        c->RemoveHeader(t2);
        return t2.GetWindowSize();
    }

    // The same through Handle() with IPv6 addresses (16 bytes each, big-endian).
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
        sw.Handle(a, b, rxPort, peerPort, flags, ws, window, now);
        return window;
    }
};

} // namespace p4i

#endif // P4INCAST_SIM_SWITCH_BUDGET_PROBE_H
