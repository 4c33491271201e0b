// p4-incast simulator: the NewDCTCP sender (docs/algorithms.md §2).
//
// NewDCTCP — Sreekumari, Jung, Lee, "An early congestion feedback and rate
// adjustment schemes for many-to-one communication in cloud-based data center
// networks", Springer 2015.
//
//   unmarked ACKs: NewReno (Linux reno: slow start, then +1 MSS per window);
//   a window of data with n segments acknowledged, m of them by ECE ACKs:
//       m > 0:  cwnd <- max(cwnd / 2, (n - m) · MSS)   (once per window)
//   cwnd never goes below 1 MSS, and at 1 MSS it is not reduced further
//   (RFC 3168).
//
// The window is DCTCP's observation window (ns-3 TcpDctcp, Alizadeh et al.):
// it ends when the ACKs pass the SND.NXT recorded at its start; the decision
// is taken there because only then are n and m known (taken at the first ECE,
// n - m would be "all of the window but one"). Segments, not ACKs, are counted,
// so delayed ACKs do not change n or m. This is the same rule the receiver-side
// NewDCTCP-rx applies to its own window (agent/policies/newdctcp_rx.py).
//
// Receiver side: inherited from ns-3's TcpDctcp — the exact CE echo of
// RFC 8257 (ECE on exactly the ACKs of CE data; an immediate ACK whenever the
// CE state flips), which is what lets the sender count marked segments.
// ns-3 enters CWR on the first ECE of a window; NewDCTCP does not cut there:
// ssthresh for that CWR episode is min(cwnd, the last cut), and the cut itself
// (cwnd and ssthresh) happens at window end. Senders using it run ns-3's
// classic recovery (cwnd = ssthresh), not PRR: PRR paces a CWR episode toward
// the ssthresh set at its start and would undo a cut made inside the episode
// (scenario.h sets RecoveryType).
// Losses (fast retransmit, RTO) halve as NewReno does.
#ifndef P4INCAST_SIM_TCP_NEWDCTCP_H
#define P4INCAST_SIM_TCP_NEWDCTCP_H

#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include <algorithm>
#include <cstdint>

namespace ns3
{

// Ablation switch (transport.restart_each_round): on every first transmit with
// nothing in flight — a round's first flight over a persistent connection —
// cwnd restarts from the initial window and ssthresh keeps 3/4 of the old
// cwnd (RFC 5681 §4.1's restart window, applied whatever the idle time), as
// if each round opened a new connection. Off (the default) cwnd carries over,
// as Linux does for idle periods shorter than the RTO.
inline bool g_restartEachRound = false;

// transport.newdctcp_cut: "first-ece" makes TcpNewDctcp take its cut as the
// testbed's BPF sender (agent/bpf/p4i_newdctcp.bpf.c) does: whenever ns-3 asks
// for ssthresh (the first ECE of a window, a fast retransmit, an RTO), with
// w = max(cwnd/2, A), A = the packets outstanding when the window began (at
// least cwnd) minus the ECE ACKs of the window so far, this one included;
// w limited to [2, cwnd] segments (a cwnd of 1 stays 1), and no cut at the
// window's end. Off ("window-end", the default): the rule described above.
inline bool g_newdctcpFirstEce = false;

inline void
RestartOnTxStart(Ptr<TcpSocketState> tcb, TcpSocketState::TcpCAEvent_t event)
{
    if (g_restartEachRound && event == TcpSocketState::CA_EVENT_TX_START)
    {
        uint32_t iw = tcb->m_initialCWnd * tcb->m_segmentSize;
        if (tcb->m_cWnd > iw)
        {
            tcb->m_ssThresh = std::max<uint32_t>(tcb->m_ssThresh, 3 * (tcb->m_cWnd / 4));
            tcb->m_cWnd = iw;
        }
    }
}

// ns-3's TcpLinuxReno with the restart switch above (identical when it is off).
class TcpRenoP4i : public TcpLinuxReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpRenoP4i")
                                .SetParent<TcpLinuxReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpRenoP4i>();
        return tid;
    }

    TcpRenoP4i() = default;

    TcpRenoP4i(const TcpRenoP4i& o)
        : TcpLinuxReno(o)
    {
    }

    std::string GetName() const override
    {
        return "TcpRenoP4i";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpRenoP4i>(this);
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        TcpLinuxReno::CwndEvent(tcb, event);
        RestartOnTxStart(tcb, event);
    }
};

class TcpNewDctcp : public TcpDctcp
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpNewDctcp")
                                .SetParent<TcpDctcp>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpNewDctcp>();
        return tid;
    }

    TcpNewDctcp()
        : TcpDctcp()
    {
    }

    TcpNewDctcp(const TcpNewDctcp& o)
        : TcpDctcp(o),
          m_nextSeq(o.m_nextSeq),
          m_started(o.m_started),
          m_acked(o.m_acked),
          m_marked(o.m_marked),
          m_cap(o.m_cap)
    {
    }

    std::string GetName() const override
    {
        return "TcpNewDctcp";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpNewDctcp>(this);
    }

    // Called on loss (fast retransmit, RTO) and on the first ECE of a window.
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        if (g_newdctcpFirstEce)
        {
            return FirstEceSsThresh(tcb);
        }
        uint32_t cwnd = tcb->m_cWnd;
        m_ssCallAt = Simulator::Now();
        m_ssCallCwnd = cwnd;
        m_ssCallEce = tcb->m_ecnState == TcpSocketState::ECN_ECE_RCVD &&
                      tcb->m_congState == TcpSocketState::CA_OPEN;
        if (m_ssCallEce)
        {
            // ECN: no cut here (NewDCTCP decides at the end of the window), but
            // never more than the last cut allowed: ns-3's CWR state (PRR) then
            // drains what is in flight down to it.
            return std::max(std::min(cwnd, m_cap), 2 * tcb->m_segmentSize);
        }
        return std::max(2 * tcb->m_segmentSize, cwnd / 2);
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_LOSS && m_ssCallEce && m_ssCallAt == Simulator::Now())
        {
            // an RTO that happened to see ECE_RCVD: a loss, halve
            tcb->m_ssThresh = std::max(2 * tcb->m_segmentSize, m_ssCallCwnd / 2);
        }
    }

    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override
    {
        if (g_newdctcpFirstEce)
        {
            FirstEceAcked(tcb);
            return;
        }
        if (!m_started)
        {
            m_nextSeq = tcb->m_nextTxSequence;
            m_started = true;
        }
        m_acked += segmentsAcked;
        if (tcb->m_ecnState == TcpSocketState::ECN_ECE_RCVD)
        {
            m_marked += segmentsAcked;
        }
        if (tcb->m_lastAckedSeq >= m_nextSeq)
        {
            if (m_marked > 0)
            {
                Cut(tcb);
            }
            else
            {
                m_cap = UINT32_MAX; // an unmarked window: NewReno growth again
            }
            m_nextSeq = tcb->m_nextTxSequence;
            m_acked = 0;
            m_marked = 0;
        }
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        TcpDctcp::CwndEvent(tcb, event);
        RestartOnTxStart(tcb, event);
    }

    uint64_t cuts = 0; // windows that ended marked

  private:
    // -- "first-ece" (g_newdctcpFirstEce): p4i_newdctcp's bookkeeping, per ACK --
    void NewWindow(Ptr<const TcpSocketState> tcb)
    {
        uint32_t mss = tcb->m_segmentSize;
        uint32_t out = tcb->m_nextTxSequence - tcb->m_lastAckedSeq;
        m_winPkts = std::max((out + mss - 1) / mss, tcb->m_cWnd.Get() / mss);
        m_nextSeq = tcb->m_nextTxSequence;
        m_markedAcks = 0;
        m_started = true;
    }

    // in_ack_event: a new window once the ACKs pass its end; count ECE ACKs. ns-3
    // asks for ssthresh on an ECE before this ACK is counted here, so that ACK is
    // added there (FirstEceSsThresh), as the BPF counts it before its ssthresh.
    void FirstEceAcked(Ptr<const TcpSocketState> tcb)
    {
        if (!m_started || tcb->m_lastAckedSeq >= m_nextSeq)
        {
            NewWindow(tcb);
        }
        if (tcb->m_ecnState == TcpSocketState::ECN_ECE_RCVD)
        {
            m_markedAcks++;
        }
    }

    uint32_t FirstEceSsThresh(Ptr<const TcpSocketState> tcb)
    {
        if (!m_started)
        {
            NewWindow(tcb);
        }
        uint32_t mss = tcb->m_segmentSize;
        uint32_t cwnd = tcb->m_cWnd / mss;
        uint32_t marked = m_markedAcks + (tcb->m_ecnState == TcpSocketState::ECN_ECE_RCVD ? 1 : 0);
        uint32_t a = m_winPkts > marked ? m_winPkts - marked : 0;
        uint32_t w = std::min(std::max(a, cwnd / 2), cwnd);
        if (cwnd <= 1)
        {
            return mss;
        }
        return std::max(w, 2u) * mss;
    }

    uint32_t m_winPkts = 0;
    uint32_t m_markedAcks = 0;

    void Cut(Ptr<TcpSocketState> tcb)
    {
        cuts++;
        uint32_t mss = tcb->m_segmentSize;
        uint32_t cwnd = tcb->m_cWnd;
        uint32_t unmarked = m_acked > m_marked ? m_acked - m_marked : 0;
        if (cwnd > mss)
        {
            uint32_t next = std::max({cwnd / 2, unmarked * mss, mss});
            if (next < cwnd)
            {
                tcb->m_cWnd = next;
            }
            m_cap = next;
        }
        tcb->m_ssThresh = std::max(std::min(cwnd, m_cap), 2 * mss); // slow start is over
    }

    SequenceNumber32 m_nextSeq{0};
    bool m_started = false;
    uint32_t m_acked = 0;
    uint32_t m_marked = 0;
    Time m_ssCallAt{Seconds(-1)};
    uint32_t m_ssCallCwnd = 0;
    bool m_ssCallEce = false;
    uint32_t m_cap = UINT32_MAX; // cwnd allowed by the last marked window
};

// ns-3's TcpDctcp with Linux's floor on the cut: ssthresh >= 2 segments
// (tcp_dctcp.c dctcp_ssthresh). Without it a small window is cut below one
// segment, the sender cannot send a full segment, nothing is in flight, no
// timer runs, and the flow stalls for good.
class TcpDctcpLinux : public TcpDctcp
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpDctcpLinux")
                                .SetParent<TcpDctcp>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpDctcpLinux>();
        return tid;
    }

    TcpDctcpLinux()
        : TcpDctcp()
    {
    }

    TcpDctcpLinux(const TcpDctcpLinux& o)
        : TcpDctcp(o)
    {
    }

    std::string GetName() const override
    {
        return "TcpDctcpLinux";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpDctcpLinux>(this);
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        return std::max(2 * tcb->m_segmentSize, TcpDctcp::GetSsThresh(tcb, bytesInFlight));
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        TcpDctcp::CwndEvent(tcb, event);
        RestartOnTxStart(tcb, event);
    }
};

} // namespace ns3

#endif // P4INCAST_SIM_TCP_NEWDCTCP_H
