// p4-incast simulator: the egress queue of a switch port, with the P4 pipeline's
// ECN marking decision (p4src/shared/ecn_decision.p4, docs/algorithms.md §1).
//
// Mark-tail — DCTCP (Alizadeh et al., SIGCOMM 2010): an ECT packet that ARRIVES
// while >= K packets are waiting is marked (v1model enq_qdepth >= K).
// Mark-front — NewDCTCP (Sreekumari, Jung, Lee, Springer 2015; Liu & Jain,
// Computer Networks 35(2-3), 2001): an ECT packet that LEAVES the head while it
// leaves >= K packets waiting behind it is marked (v1model deq_qdepth >= K).
// Only ECT(0)/ECT(1) become CE; CE stays CE (counted ce_in); Not-ECT is never
// marked. Depth counts packets waiting, not the one on the wire — BMv2's
// semantics, so a burst into an idle port sees depths 0, 0, 1, 2, ... (packet 1
// goes straight to the wire) exactly like the PTF held-queue vectors.
//
// The queue is the point-to-point device's own transmit queue (no traffic-
// control queue disc in front), so "dequeued" means "starts serialisation".
// Admission is drop-tail on a byte buffer counted in Ethernet frame bytes
// (IP length + 14; the model carries 12 bytes of TCP timestamp option as
// frame padding, see scenario.h). Histogram: one count per admitted packet at
// its enqueue depth, one bucket per depth with no cap (it grows to the deepest
// depth seen, which the buffer bounds; the pipeline's queue_depth_stats stops
// at 127). Time-averaged depth: the integral of packets waiting over simulated
// time from StartMean to MeanDepth (experiments/metrics.py qdepth_mean); Area
// and roundPeak let a scenario take both per round.
#ifndef P4INCAST_SIM_ECN_QUEUE_H
#define P4INCAST_SIM_ECN_QUEUE_H

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace p4i
{
using namespace ns3;

enum EcnMode
{
    ECN_OFF = 0,
    MARK_TAIL = 1,
    MARK_FRONT = 2
};

constexpr uint32_t HIST_BUCKETS = 128; // initial buckets (controller/p4names.py HIST_BUCKETS)
constexpr uint16_t PPP_IPV4 = 0x0021;

// A hook that sees (and may rewrite) every packet a host sends: the receiver
// agent's ACK window clamp lives behind it (rx_agent.h).
class EgressHook
{
  public:
    virtual ~EgressHook() = default;
    // Sees (and may rewrite) a packet before it is queued; false = the hook kept
    // it (an ACK queue) and will send it later itself.
    virtual bool Egress(Ptr<Packet> p) = 0;
};

// ECN codepoint of a PPP/IPv4 frame as queued by PointToPointNetDevice; -1 if not IPv4.
inline int
FrameEcn(Ptr<const Packet> p)
{
    uint8_t b[4];
    if (p->CopyData(b, 4) < 4)
    {
        return -1;
    }
    if (((b[0] << 8) | b[1]) != PPP_IPV4)
    {
        return -1;
    }
    return b[3] & 3;
}

inline void
FrameSetCe(Ptr<Packet> p)
{
    PppHeader ppp;
    Ipv4Header ip;
    p->RemoveHeader(ppp);
    p->RemoveHeader(ip);
    ip.SetEcn(Ipv4Header::ECN_CE);
    p->AddHeader(ip);
    p->AddHeader(ppp);
}

class EcnQueue : public Queue<Packet>
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("p4i::EcnQueue")
                                .SetParent<Queue<Packet>>()
                                .SetGroupName("P4incast")
                                .AddConstructor<EcnQueue>();
        return tid;
    }

    // A switch's shared packet buffer with dynamic thresholds (Choudhury & Hahne,
    // "Dynamic queue length thresholds for shared-memory packet switches",
    // IEEE/ACM ToN 6(2), 1998): a port may hold at most alpha * (capacity - used)
    // bytes, `used` counting every port of the switch.
    struct SharedBuffer
    {
        uint64_t capacity = 0;
        uint64_t used = 0;
        double alpha = 1.0;
    };

    EcnQueue()
        : hist(HIST_BUCKETS, 0)
    {
        SetMaxSize(QueueSize("4294967295p"));
    }

    // -- configuration (set before the simulation runs)
    int mode = ECN_OFF;
    uint32_t k = 0;            // packets
    uint64_t bufferBytes = 0;  // frame bytes; 0 = unlimited
    SharedBuffer* shared = nullptr; // set: the switch's shared buffer replaces bufferBytes
    int32_t frameExtra = 24;   // frame bytes = queued size (PPP+IP) + frameExtra
    double seriesBinS = 0.0;   // > 0: keep the max depth per bin of this many seconds
    EgressHook* hook = nullptr; // host NIC only

    // -- counters (the pipeline's ecn_stats / queue_depth_stats)
    uint64_t marked = 0, ect = 0, ceIn = 0, notEct = 0, drops = 0, egress = 0, admitted = 0;
    uint64_t bytes = 0;  // frame bytes waiting now
    uint32_t peak = 0;   // most packets ever waiting
    uint32_t roundPeak = 0; // most packets waiting since the scenario last reset it
    uint64_t peakBytes = 0; // most frame bytes ever waiting
    std::vector<uint64_t> hist;
    std::vector<double> seriesT;
    std::vector<uint32_t> seriesD;

    void ResetCounters()
    {
        marked = ect = ceIn = notEct = drops = egress = admitted = 0;
        peak = roundPeak = 0;
        peakBytes = 0;
        hist.assign(HIST_BUCKETS, 0);
        seriesT.clear();
        seriesD.clear();
        m_bin = -1;
        StartMean();
    }

    // Start the time average of the depth now (ResetCounters does too).
    void StartMean()
    {
        m_areaT0 = m_areaT = Simulator::Now().GetSeconds();
        m_area = 0.0;
    }

    // Packets waiting integrated over simulated time since StartMean (packet-seconds).
    double Area()
    {
        Integrate();
        return m_area;
    }

    // Packets waiting, averaged over simulated time since StartMean; 0 over no time.
    double MeanDepth()
    {
        Integrate();
        double span = m_areaT - m_areaT0;
        return span > 0 ? m_area / span : 0.0;
    }

    bool Enqueue(Ptr<Packet> p) override
    {
        if (hook && !hook->Egress(p))
        {
            // Held by the hook (RCC's ACK queue), which sends it later itself. Not
            // queued, so report false: PointToPointNetDevice::Send dequeues right
            // after a true Enqueue. Nothing counts it as a drop (no drop counter
            // here, and the model traces no MacTxDrop).
            return false;
        }
        uint32_t depth = GetNPackets();
        uint64_t fb = p->GetSize() + frameExtra;
        bool full = bufferBytes && bytes + fb > bufferBytes;
        if (shared)
        {
            double room = static_cast<double>(shared->capacity - shared->used);
            full = shared->used + fb > shared->capacity ||
                   static_cast<double>(bytes + fb) > shared->alpha * room;
        }
        if (full)
        {
            drops++;
            DropBeforeEnqueue(p);
            return false;
        }
        int ecn = FrameEcn(p);
        if (ecn == Ipv4Header::ECN_CE)
        {
            ceIn++;
        }
        else if (ecn == Ipv4Header::ECN_ECT0 || ecn == Ipv4Header::ECN_ECT1)
        {
            ect++;
            if (mode == MARK_TAIL && depth >= k)
            {
                FrameSetCe(p);
                marked++;
            }
        }
        else if (ecn == Ipv4Header::ECN_NotECT)
        {
            notEct++;
        }
        Integrate();
        if (!DoEnqueue(GetContainer().end(), p))
        {
            drops++;
            return false;
        }
        admitted++;
        bytes += fb;
        peakBytes = std::max(peakBytes, bytes);
        if (shared)
        {
            shared->used += fb;
        }
        if (depth >= hist.size())
        {
            hist.resize(depth + 1, 0);
        }
        hist[depth]++;
        uint32_t now = GetNPackets();
        peak = std::max(peak, now);
        roundPeak = std::max(roundPeak, now);
        Sample(now);
        return true;
    }

    Ptr<Packet> Dequeue() override
    {
        Integrate();
        Ptr<Packet> p = DoDequeue(GetContainer().begin());
        if (!p)
        {
            return p;
        }
        Release(p);
        egress++;
        if (mode == MARK_FRONT && GetNPackets() >= k)
        {
            int ecn = FrameEcn(p);
            if (ecn == Ipv4Header::ECN_ECT0 || ecn == Ipv4Header::ECN_ECT1)
            {
                FrameSetCe(p);
                marked++;
            }
        }
        Sample(GetNPackets());
        return p;
    }

    Ptr<Packet> Remove() override
    {
        Integrate();
        Ptr<Packet> p = DoRemove(GetContainer().begin());
        if (p)
        {
            Release(p);
        }
        return p;
    }

    Ptr<const Packet> Peek() const override
    {
        return DoPeek(GetContainer().begin());
    }

    // The last open bin of the depth series, flushed at the end of a run.
    void FlushSeries()
    {
        if (m_bin >= 0)
        {
            seriesT.push_back(m_bin * seriesBinS);
            seriesD.push_back(m_binMax);
            m_bin = -1;
        }
    }

  private:
    void Release(Ptr<const Packet> p)
    {
        uint64_t fb = p->GetSize() + frameExtra;
        bytes -= fb;
        if (shared)
        {
            shared->used -= fb;
        }
    }

    // Adds the depth held since the last change to the area (called before a change).
    void Integrate()
    {
        double now = Simulator::Now().GetSeconds();
        m_area += GetNPackets() * (now - m_areaT);
        m_areaT = now;
    }

    void Sample(uint32_t depth)
    {
        if (seriesBinS <= 0)
        {
            return;
        }
        int64_t bin = static_cast<int64_t>(Simulator::Now().GetSeconds() / seriesBinS);
        if (bin != m_bin)
        {
            FlushSeries();
            m_bin = bin;
            m_binMax = depth;
        }
        else
        {
            m_binMax = std::max(m_binMax, depth);
        }
    }

    int64_t m_bin = -1;
    uint32_t m_binMax = 0;
    double m_area = 0.0, m_areaT = 0.0, m_areaT0 = 0.0; // packet-seconds; its span
};

// -- held-queue conformance helpers (tests/sim): numbered ECT(0) frames as the
// point-to-point device queues them, and their ECN on the way out.
inline Ptr<Packet>
MakeTestFrame(uint32_t number, uint8_t ecn = Ipv4Header::ECN_ECT0)
{
    Ptr<Packet> p = Create<Packet>(100);
    Ipv4Header ip;
    ip.SetSource(Ipv4Address("10.0.1.1"));
    ip.SetDestination(Ipv4Address("10.0.2.1"));
    ip.SetProtocol(17);
    ip.SetPayloadSize(100);
    ip.SetIdentification(static_cast<uint16_t>(number));
    ip.SetEcn(static_cast<Ipv4Header::EcnType>(ecn));
    p->AddHeader(ip);
    PppHeader ppp;
    ppp.SetProtocol(PPP_IPV4);
    p->AddHeader(ppp);
    return p;
}

inline uint32_t
TestFrameNumber(Ptr<const Packet> p)
{
    Ptr<Packet> c = p->Copy();
    PppHeader ppp;
    Ipv4Header ip;
    c->RemoveHeader(ppp);
    c->RemoveHeader(ip);
    return ip.GetIdentification();
}

inline Ptr<EcnQueue>
NewEcnQueue(int mode, uint32_t k, uint64_t bufferBytes)
{
    Ptr<EcnQueue> q = CreateObject<EcnQueue>();
    q->mode = mode;
    q->k = k;
    q->bufferBytes = bufferBytes;
    return q;
}

// Numbers (1-based) of the marked packets of a 2K-style burst of n frames into
// an idle queue. early = how many packets leave before the rest arrive: 0 is the
// ideal pause (all n queued, then drained), 1 is the port's own behaviour and
// BMv2's (packet 1 goes to the wire at once, the rest are held).
inline std::vector<uint32_t>
HeldQueueMarks(int mode, uint32_t k, uint32_t n, uint32_t early)
{
    Ptr<EcnQueue> q = CreateObject<EcnQueue>();
    q->mode = mode;
    q->k = k;
    std::vector<uint32_t> out;
    auto take = [&out](Ptr<Packet> p) {
        if (FrameEcn(p) == Ipv4Header::ECN_CE)
        {
            out.push_back(TestFrameNumber(p));
        }
    };
    for (uint32_t i = 1; i <= n; i++)
    {
        q->Enqueue(MakeTestFrame(i));
        if (i <= early)
        {
            take(q->Dequeue());
        }
    }
    while (Ptr<Packet> p = q->Dequeue())
    {
        take(p);
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace p4i

#endif // P4INCAST_SIM_ECN_QUEUE_H
