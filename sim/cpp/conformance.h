// p4-incast simulator: the PTF held-queue vectors on a real port (tests/sim).
//
// Two nodes joined by a slow point-to-point link (`rateBps`); the EcnQueue is
// the sender's device queue. A burst of n numbered ECT(0) frames is handed to
// the device at t = 0, faster than it drains: frame 1 finds the port idle and
// goes to the wire at once, the rest wait — what BMv2 does with the PTF burst.
// Returns the numbers of the frames that arrive CE, in arrival order.
#ifndef P4INCAST_SIM_CONFORMANCE_H
#define P4INCAST_SIM_CONFORMANCE_H

#include "ecn_queue.h"

#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <vector>

namespace p4i
{
using namespace ns3;

struct WireBurst
{
    std::vector<uint32_t> marked;  // frame numbers that arrived CE
    std::vector<uint32_t> order;   // arrival order of all frames
    std::vector<uint64_t> hist;    // the queue's depth histogram
    uint64_t ect = 0, markedCount = 0;
    double meanDepth = 0, endS = 0; // the queue's time-averaged depth from t = 0 to endS

    void Rx(Ptr<NetDevice>, Ptr<const Packet> p, uint16_t, const Address&, const Address&,
            NetDevice::PacketType)
    {
        Ptr<Packet> c = p->Copy();
        Ipv4Header ip;
        c->RemoveHeader(ip);
        order.push_back(ip.GetIdentification());
        if (ip.GetEcn() == Ipv4Header::ECN_CE)
        {
            marked.push_back(ip.GetIdentification());
        }
    }
};

inline WireBurst
HeldQueueOnWire(int mode, uint32_t k, uint32_t n, double rateBps = 1e6)
{
    WireBurst out;
    {
        NodeContainer nodes;
        nodes.Create(2);
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(rateBps))));
        p2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(25)));
        NetDeviceContainer d = p2p.Install(nodes);
        Ptr<EcnQueue> q = CreateObject<EcnQueue>();
        q->mode = mode;
        q->k = k;
        DynamicCast<PointToPointNetDevice>(d.Get(0))->SetQueue(q);
        nodes.Get(1)->RegisterProtocolHandler(MakeCallback(&WireBurst::Rx, &out), 0x0800, d.Get(1));
        Ptr<NetDevice> tx = d.Get(0);
        for (uint32_t i = 1; i <= n; i++)
        {
            Ptr<Packet> p = MakeTestFrame(i);
            PppHeader ppp;
            p->RemoveHeader(ppp); // the device adds its own
            tx->Send(p, tx->GetBroadcast(), 0x0800);
        }
        Simulator::Run();
        out.hist.assign(q->hist.begin(), q->hist.end());
        out.ect = q->ect;
        out.markedCount = q->marked;
        out.meanDepth = q->MeanDepth();
        out.endS = Simulator::Now().GetSeconds();
        Simulator::Destroy();
    }
    std::sort(out.marked.begin(), out.marked.end());
    return out;
}

} // namespace p4i

#endif // P4INCAST_SIM_CONFORMANCE_H
