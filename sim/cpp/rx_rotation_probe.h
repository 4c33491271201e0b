// p4-incast simulator: drive the receiver's rotation packet by packet
// (tests/sim/test_sim_rotation.py replays tests/agent/rotation_scenarios.py).
//
// Flows are numbered (ProbeFlows); flow i is a connection we opened, with
// window scale `ws` on both sides and the peer's ISN 0 (its k-th full segment
// ends at 1 + k·MSS). Every packet goes
// through the same RxAgent::Ingress / Egress the scenarios run; what the
// rotation grants is read back as the flows it sent a window update to.
#ifndef P4INCAST_SIM_RX_ROTATION_PROBE_H
#define P4INCAST_SIM_RX_ROTATION_PROBE_H

#include "rx_agent.h"

#include <vector>

namespace p4i
{

class RxRotationProbe : public ProbeFlows
{
  public:
    RxAgent agent;

    RxRotationProbe(uint64_t budget, uint32_t initSegs, uint32_t minSegs, uint32_t mss,
                    uint32_t ws)
        : m_ws(ws)
    {
        agent.policy = RX_BUDGET;
        agent.rotate = true;
        agent.rot.budget = budget;
        agent.budgetBytes = budget;
        agent.initSegs = initSegs;
        agent.minSegs = minSegs;
        agent.mss = mss;
        agent.maxW = 4u << 20;
    }

    // Our SYN, its SYN-ACK, our ACK: the handshake of flow i. Returns the
    // handshake ACK's window field.
    uint32_t Open(uint32_t i)
    {
        Flow& f = m_flows[i];
        f.ourNext = 1;
        f.rcv = 1;
        Egress(Frame(i, false, 0, 0, TcpHeader::SYN, 65535, 0, m_ws));
        agent.Ingress(Frame(i, true, 0, 1, TcpHeader::SYN | TcpHeader::ACK, 65535, 0, m_ws));
        return Egress(Frame(i, false, f.ourNext, f.rcv, TcpHeader::ACK, Kernel(), 0));
    }

    // We send flow i `size` bytes (a request) acknowledging all it sent; the
    // window field it carries.
    uint32_t Request(uint32_t i, uint32_t size)
    {
        Flow& f = m_flows[i];
        uint32_t w =
            Egress(Frame(i, false, f.ourNext, f.rcv, TcpHeader::ACK | TcpHeader::PSH, Kernel(), size));
        f.ourNext += size;
        return w;
    }

    // Flow i sends `size` bytes, CE-marked or not.
    void Data(uint32_t i, uint32_t size, bool ce)
    {
        Flow& f = m_flows[i];
        agent.Ingress(Frame(i, true, f.rcv, f.ourNext, TcpHeader::ACK, 65535, size, -1,
                            ce ? Ipv4Header::ECN_CE : Ipv4Header::ECN_ECT0));
        f.rcv += size;
    }

    // Our pure ACK of everything flow i sent; its window field.
    uint32_t Ack(uint32_t i)
    {
        Flow& f = m_flows[i];
        return Egress(Frame(i, false, f.ourNext, f.rcv, TcpHeader::ACK, Kernel(), 0));
    }

    // Flow i's FIN.
    void PeerFin(uint32_t i)
    {
        Flow& f = m_flows[i];
        agent.Ingress(Frame(i, true, f.rcv, f.ourNext, TcpHeader::FIN | TcpHeader::ACK, 65535, 0));
    }

    // The agent's tick at `now` (s), every flow's smoothed RTT `srtt` (s).
    void Tick(double now, double tickS, double srtt)
    {
        agent.rot.Tick(now, tickS, agent.counted, agent.mss, [srtt](uint64_t) { return srtt; });
    }

    // Flows granted a window update since the last call, in order; each
    // update's window field in `grantFields`.
    std::vector<uint32_t> Granted()
    {
        std::vector<uint32_t> out;
        grantFields.clear();
        for (uint64_t k : agent.rot.granted)
        {
            out.push_back(FlowOf(k));
            grantFields.push_back(Tcp(agent.GrantPacket(k)).GetWindowSize());
        }
        agent.rot.granted.clear();
        return out;
    }

    std::vector<uint32_t> grantFields;

    // 0 idle, 1 holds a slot, 2 waits (-1: no entry)
    int State(uint32_t i) const
    {
        auto it = agent.rot.entries.find(KeyOf(i));
        return it == agent.rot.entries.end() ? -1 : it->second.state;
    }

    int64_t H() const
    {
        return agent.rot.Slots(agent.counted, agent.mss);
    }

    // waiting flows, head first, without the entries of flows that left
    std::vector<uint32_t> Queue() const
    {
        std::vector<uint32_t> out;
        for (uint64_t k : agent.rot.queue)
        {
            auto it = agent.rot.entries.find(k);
            if (it != agent.rot.entries.end() && it->second.state == ROT_STATE_WAIT)
            {
                out.push_back(FlowOf(k));
            }
        }
        return out;
    }

  private:
    struct Flow
    {
        uint32_t ourNext = 1, rcv = 1;
    };

    uint32_t m_ws;
    std::map<uint32_t, Flow> m_flows;

    // the kernel's own window field: the receive buffer, far above any W here
    uint16_t Kernel() const
    {
        return static_cast<uint16_t>(std::min<uint32_t>((256u << 10) >> m_ws, 65535));
    }

    uint32_t Egress(Ptr<Packet> p)
    {
        agent.Egress(p);
        return Tcp(p).GetWindowSize();
    }
};

} // namespace p4i

#endif
