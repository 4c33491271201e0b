// p4-incast simulator: the senders (docs/algorithms.md §2) — Reno (the control),
// DCTCP and NewDCTCP — on ns-3 3.44's TcpSocketBase as the senders' socket
// changes it (tcp_sender_socket.h), and the exact CE echo of their receivers.
// tests/senders/test_senders_ns3.py checks them, one scripted trace at a time,
// against the papers' equations (tests/senders/sender_table.py).
//
// Reno (TcpRenoP4i): ns-3's TcpLinuxReno — ssthresh = max(cwnd/2, 2) on an ECE
// (RFC 3168, once per window), on a fast retransmit and on an RTO (a loss
// inside an episode: see below); cwnd = 1 after an RTO. Receiver: RFC 3168's
// echo (ECE latched until CWR).
//
// DCTCP (TcpDctcpLinux; RFC 8257, Linux tcp_dctcp.c >= 5.1): α starts at 1,
// g = 1/16; an observation window ends when the cumulative ACK reaches the
// SND.NXT recorded when it began (the first window ends at the first ACK,
// as Linux's, whose next_seq is the SND.NXT at connection set-up), α ← (1−g)α
// + g·F, F the fraction of the window's segments acknowledged by ECE ACKs. α
// is updated as Linux's dctcp_update_alpha, in in_ack_event (InAckEvent):
// before the ECE of the same ACK is acted on. The first ECE in Open/Disorder:
// ssthresh = max(cwnd − ⌊cwnd·α/2⌋, floor) segments (dctcp_ssthresh: floor 2;
// g_minCwndSegs below); a loss:
// see below.
//
// NewDCTCP (TcpNewDctcp; Sreekumari, Jung, Lee, "An early congestion feedback
// and rate adjustment schemes for many-to-one communication in cloud-based data
// center networks", Springer 2015, §4.2 eq. (3)-(4)): unmarked, NewReno (slow
// start, then +1 MSS per RTT). An ECN episode begins at the first ECE in
// Open/Disorder; its window is the data outstanding then: n = SND.NXT − SND.UNA
// before that ACK, high = SND.NXT. No cut there (ssthresh = cwnd0, and cwnd does
// not grow during the episode). When the cumulative ACK reaches high, with m the
// segments of the window acknowledged by ECE ACKs (from the first ECE ACK, itself
// included), A = n − m and ssthresh = cwnd = min(max(⌊cwnd0/2⌋, A, floor), cwnd0),
// floor = g_minCwndSegs (2, Linux's; 1 MSS as eq. (3) allows: min_cwnd_segs).
// The decision is taken in InAckEvent, before ns-3 looks at the ACK: when that
// ACK also passes ns-3's CWR point (SND.NXT at the first ECE, so any ACK past
// high) ReceivedAck leaves CWR and sets cwnd = ssthresh before the congestion
// ops see the ACK in PktsAcked; the decision is in place by then. Segments of
// the window are counted as the cumulative ACK covers them: SACKed data in the
// window means a loss in it, whose Recovery ends the ECN decision.
//
// Losses, for all three: entering Recovery from Open/Disorder, or an RTO
// outside an episode, ssthresh = max(cwnd/2, 2) (RFC 5681 eq. 4 over cwnd, as
// Linux's tcp_reno_ssthresh and dctcp_react_to_loss). A loss inside an episode
// — the sender in CWR after an ECE cut (it now enters Recovery from there:
// tcp_sender_socket.h), or an RTO during Recovery — is the same episode, whose
// one cut is the deeper of the two: ssthresh = min(ssthresh, max(cwnd0/2, 2)),
// cwnd0 the cwnd the episode began with (RFC 3168 §6.1.2: one reduction per
// window; RFC 8257 §3.5; the BPF senders' halve_on_loss over Linux's
// prior_cwnd). For NewDCTCP, whose ssthresh in an undecided episode is cwnd0,
// that is cwnd0/2 and the ECN decision is dropped.
//
// One cut per congestion episode, for all three: ns-3 3.44 (tcp-socket-base.cc)
// asks the congestion ops for ssthresh
//   - in EnterRecovery (fast retransmit), after CongestionStateSet(CA_RECOVERY)
//     and with m_congState already CA_RECOVERY;
//   - in EnterCwr, on an ECE ACK (SEG.ACK > SND.UNA) in any state but CA_CWR,
//     before m_congState changes, and hands the value to the recovery ops
//     (classic: cwnd = ssthresh; PRR: paced to it). The senders' socket only
//     lets it happen in Open/Disorder and on the ACK that ends a Recovery/Loss
//     (tcp_sender_socket.h);
//   - in ReTxTimeout, before CwndEvent(CA_EVENT_LOSS) and
//     CongestionStateSet(CA_LOSS) (an RTO cannot be told from an EnterCwr at
//     that call: SsThreshCall::Rto() corrects it in CA_EVENT_LOSS).
// An ECE in Recovery or Loss returns the current ssthresh: no second cut.
//
// The senders' socket (tcp_sender_socket.h TcpSenderSocket: Recovery from CWR,
// no CWR from Recovery/Loss, InAckEvent) is what every sending host of the
// model uses. On a plain TcpSocketBase (no InAckEvent) DCTCP and NewDCTCP fall
// back to counting in PktsAcked, one ACK late as described above.
//
// Senders using NewDCTCP run ns-3's classic recovery (cwnd = ssthresh at the
// episode's start, no per-ACK change until its end), not PRR: PRR's DoRecovery,
// which runs after PktsAcked on every ACK in CWR, would overwrite the cut taken
// at the window's end and shrink cwnd during the episode (scenario.h SenderCc).
//
// Receivers of DCTCP and NewDCTCP (ExactEcho): RFC 8257 §3.2 / Linux
// dctcp_ece_ack_update — ECE on exactly the ACKs of CE data: when the CE state
// of arriving data flips, a held (delayed) ACK goes out at once with the old
// state, and the segment that flipped it is acknowledged at once.
#ifndef P4INCAST_SIM_TCP_NEWDCTCP_H
#define P4INCAST_SIM_TCP_NEWDCTCP_H

#include "tcp_sender_socket.h"

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

// The smallest window an ECN cut of DCTCP or NewDCTCP leaves, in segments
// (transport.min_cwnd_segs, set for every run by scenario.h ApplyDefaults and by
// sender_conformance.h): 2 is Linux's floor, 1 the MSS NewDCTCP's eq. (3)
// allows. A loss halves to at least 2 segments whatever it is (HalfCwnd).
inline uint32_t g_minCwndSegs = 0;

// max(cwnd / 2, 2 segments): NewReno's halving (RFC 5681 eq. 4 over cwnd, as
// Linux's tcp_reno_ssthresh and dctcp_react_to_loss).
inline uint32_t
HalfCwnd(Ptr<const TcpSocketState> tcb)
{
    return std::max<uint32_t>(2 * tcb->m_segmentSize, tcb->m_cWnd / 2);
}

// What ns-3 is asking for when it calls GetSsThresh (see the top of the file),
// and the loss response, which depends on the episode the loss falls in.
class SsThreshCall
{
  public:
    enum Kind
    {
        ECN_CUT,    // the first ECE in Open/Disorder (or an RTO: Rto() corrects)
        ECN_NO_CUT, // an ECE in Recovery/Loss (or an RTO: Rto() corrects)
        LOSS,       // a fast retransmit or an RTO: answer Loss()
    };

    // From the congestion ops' CongestionStateSet (m_congState is still the old state).
    void StateSet(Ptr<const TcpSocketState> tcb, TcpSocketState::TcpCongState_t newState)
    {
        if (newState == TcpSocketState::CA_RECOVERY)
        {
            m_recoveryEvent = Simulator::GetEventCount();
            m_recoveryFrom = tcb->m_congState.Get();
        }
    }

    // From InAckEvent: an ACK is being processed (on the senders' socket).
    void OnAck()
    {
        m_ackEvent = Simulator::GetEventCount();
        m_observed = true;
    }

    Kind Classify(Ptr<const TcpSocketState> tcb)
    {
        m_callEvent = Simulator::GetEventCount();
        auto state = tcb->m_congState.Get();
        if (state == TcpSocketState::CA_RECOVERY && m_recoveryEvent == m_callEvent)
        {
            return LOSS; // EnterRecovery
        }
        if (m_observed && m_ackEvent != m_callEvent)
        {
            return LOSS; // not while an ACK is processed: an RTO
        }
        if (tcb->m_ecnState == TcpSocketState::ECN_ECE_RCVD && state != TcpSocketState::CA_CWR)
        {
            if (state == TcpSocketState::CA_RECOVERY && !tcb->m_isRetransDataAcked)
            {
                // An ECE on the ACK that ends the recovery (SEG.ACK >= the recovery
                // point: ns-3 sets m_isRetransDataAcked only for a partial ACK, which
                // in Recovery covers a retransmission; the senders' socket keeps the
                // other ECEs of a Recovery from EnterCwr). Linux leaves Recovery on
                // that ACK before it looks at the ECE (tcp_fastretrans_alert, then
                // tcp_try_to_open → tcp_enter_cwr): a new window's reduction, from
                // Open. ns-3 checks the ECE first (ReceivedAck) and would pass from
                // Recovery to CWR; end the recovery here as ns-3 would on this ACK.
                auto t = const_cast<TcpSocketState*>(PeekPointer(tcb));
                t->m_cWnd = t->m_ssThresh.Get();
                t->m_congState = TcpSocketState::CA_OPEN;
                state = TcpSocketState::CA_OPEN;
            }
            if (state == TcpSocketState::CA_OPEN || state == TcpSocketState::CA_DISORDER)
            {
                Begin(tcb); // an ECN episode
                return ECN_CUT;
            }
            m_cwnd0 = 0; // CWR with no cut of its own: a loss in it is a new episode
            return ECN_NO_CUT;
        }
        return LOSS; // an RTO
    }

    // The loss response (see the top of the file): inside an episode — CWR
    // after an ECE cut, Recovery — min(ssthresh, max(cwnd0/2, 2)); otherwise
    // max(cwnd/2, 2), and a new episode begins with this cwnd.
    uint32_t Loss(Ptr<const TcpSocketState> tcb)
    {
        auto state = tcb->m_congState.Get();
        if (state == TcpSocketState::CA_RECOVERY && m_recoveryEvent == Simulator::GetEventCount())
        {
            state = m_recoveryFrom; // EnterRecovery has already set CA_RECOVERY
        }
        bool inEpisode = state == TcpSocketState::CA_CWR || state == TcpSocketState::CA_RECOVERY;
        if (inEpisode && m_cwnd0 > 0)
        {
            uint32_t half = std::max<uint32_t>(2 * tcb->m_segmentSize, m_cwnd0 / 2);
            return std::min<uint32_t>(tcb->m_ssThresh, half);
        }
        Begin(tcb);
        return HalfCwnd(tcb);
    }

    // From CwndEvent(CA_EVENT_LOSS), which only ReTxTimeout raises: true when
    // ns-3 asked for ssthresh in this same event (it does not when the RTO
    // repeats in Loss with the head already retransmitted).
    bool Rto() const
    {
        return m_callEvent == Simulator::GetEventCount();
    }

  private:
    void Begin(Ptr<const TcpSocketState> tcb)
    {
        m_cwnd0 = tcb->m_cWnd;
    }

    uint64_t m_recoveryEvent = UINT64_MAX;
    TcpSocketState::TcpCongState_t m_recoveryFrom = TcpSocketState::CA_OPEN;
    uint64_t m_callEvent = UINT64_MAX;
    uint64_t m_ackEvent = UINT64_MAX;
    bool m_observed = false; // OnAck is called (the senders' socket)
    uint32_t m_cwnd0 = 0; // cwnd when the current episode began (0: none to keep)
};

// The exact CE echo of a DCTCP receiver (RFC 8257 §3.2; Linux ≥ 5.1
// dctcp_ece_ack_update), in place of ns-3 3.44's TcpDctcp::CeState0to1/1to0,
// which (1) send the held ACK for the rcv_nxt saved *before* the previous
// segment — a duplicate ACK that leaves the held segment to be acknowledged
// together with the one of the other CE state — (2) do not acknowledge the
// segment that flipped the state at once, and (3) take an ACK sent by the
// delayed-ACK timer for one still held.
//
// ns-3 calls CwndEvent(ECN_IS_CE / ECN_NO_CE) for every ECT segment before it is
// processed, then (in ReceivedData, after the data is queued) NON_DELAYED_ACK
// when it acknowledges at once or DELAYED_ACK when it holds the ACK; the
// delayed-ACK timer raises DELAYED_ACK too, just before it sends the held ACK.
class ExactEcho
{
  public:
    // true when the event was the echo's
    bool Event(Ptr<TcpSocketState> tcb, TcpSocketState::TcpCAEvent_t event)
    {
        switch (event)
        {
        case TcpSocketState::CA_EVENT_ECN_IS_CE:
        case TcpSocketState::CA_EVENT_ECN_NO_CE: {
            bool ce = event == TcpSocketState::CA_EVENT_ECN_IS_CE;
            m_flip = ce != m_ce;
            if (m_flip && m_held)
            {
                // the held ACK, with the CE state of the data it covers (all that
                // is in order so far: this segment is not queued yet)
                tcb->m_sendEmptyPacketCallback(Flags(m_ce));
                m_held = false;
            }
            m_ce = ce;
            m_segment = true;
            if (ce)
            {
                tcb->m_ecnState = TcpSocketState::ECN_CE_RCVD;
            }
            else if (tcb->m_ecnState == TcpSocketState::ECN_CE_RCVD ||
                     tcb->m_ecnState == TcpSocketState::ECN_SENDING_ECE)
            {
                tcb->m_ecnState = TcpSocketState::ECN_IDLE;
            }
            return true;
        }
        case TcpSocketState::CA_EVENT_DELAYED_ACK:
            if (m_segment)
            {
                m_held = true; // this segment's ACK is held
                if (m_flip)
                {
                    // acknowledge it at once (Linux: ICSK_ACK_NOW), once ns-3 has
                    // finished with it (it arms the delayed-ACK timer after this
                    // event; the ACK cancels it)
                    Simulator::ScheduleNow(&ExactEcho::AckNow, this, tcb);
                }
            }
            else
            {
                m_held = false; // the timer: ns-3 sends the held ACK now
            }
            m_segment = m_flip = false;
            return true;
        case TcpSocketState::CA_EVENT_NON_DELAYED_ACK:
            m_held = false;
            m_segment = m_flip = false;
            return true;
        default:
            return false;
        }
    }

  private:
    static uint8_t Flags(bool ce)
    {
        return TcpHeader::ACK | (ce ? TcpHeader::ECE : 0);
    }

    void AckNow(Ptr<TcpSocketState> tcb)
    {
        if (m_held)
        {
            tcb->m_sendEmptyPacketCallback(Flags(m_ce));
            m_held = false;
        }
    }

    bool m_ce = false;      // CE state of the last data segment
    bool m_held = false;    // an ACK is held (delayed) for data received
    bool m_segment = false; // an ECT segment is being processed
    bool m_flip = false;    // ... and it flipped the CE state
};

// ns-3's TcpLinuxReno with one cut per episode and the restart switch above.
class TcpRenoP4i : public TcpLinuxReno, public TcpAckObserver
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

    void InAckEvent(Ptr<TcpSocketState>, SequenceNumber32, SequenceNumber32, bool) override
    {
        m_call.OnAck();
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        switch (m_call.Classify(tcb))
        {
        case SsThreshCall::ECN_CUT:
            return HalfCwnd(tcb); // RFC 3168 §6.1.2
        case SsThreshCall::ECN_NO_CUT:
            return tcb->m_ssThresh;
        default:
            return m_call.Loss(tcb);
        }
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        m_call.StateSet(tcb, newState);
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        if (event == TcpSocketState::CA_EVENT_LOSS && m_call.Rto())
        {
            tcb->m_ssThresh = m_call.Loss(tcb); // cwnd is still the one before the RTO
        }
        TcpLinuxReno::CwndEvent(tcb, event);
        RestartOnTxStart(tcb, event);
    }

  private:
    SsThreshCall m_call;
};

// DCTCP as Linux (see the top of the file). α is kept here (ns-3's TcpDctcp
// begins its first observation window at the first ACK instead of ending it
// there, one α update late, and counts a dup ACK as a segment acknowledged).
class TcpDctcpLinux : public TcpDctcp, public TcpAckObserver
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
        : TcpDctcp(o),
          m_alpha(o.m_alpha)
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

    void Init(Ptr<TcpSocketState> tcb) override
    {
        TcpDctcp::Init(tcb);
        // ns-3's TcpDctcp lets cwnd grow while the sender is not cwnd-limited;
        // Linux's tcp_reno_cong_avoid (dctcp's) does not (tcp_is_cwnd_limited)
        SetSuppressIncreaseIfCwndLimited(true);
        // DctcpAlphaOnInit has no getter: its default (Config::SetDefault's)
        TypeId::AttributeInformation info;
        if (GetInstanceTypeId().LookupAttributeByName("DctcpAlphaOnInit", &info))
        {
            m_alpha = DynamicCast<const DoubleValue>(info.initialValue)->Get();
        }
    }

    // Linux's dctcp_update_alpha (in_ack_event): before ns-3 acts on the ACK.
    void InAckEvent(Ptr<TcpSocketState> tcb,
                    SequenceNumber32,
                    SequenceNumber32 ack,
                    bool ece) override
    {
        m_call.OnAck();
        m_observed = true;
        if (m_started)
        {
            Observe(tcb, ack, ece);
        }
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        switch (m_call.Classify(tcb))
        {
        case SsThreshCall::ECN_CUT: {
            // dctcp_ssthresh: cwnd − ⌊cwnd·α/2⌋ segments, at least the floor
            // (Linux's 2; transport.min_cwnd_segs)
            uint32_t w = tcb->m_cWnd / tcb->m_segmentSize;
            auto cut = w - static_cast<uint32_t>(w * m_alpha / 2.0);
            return std::max<uint32_t>(g_minCwndSegs, cut) * tcb->m_segmentSize;
        }
        case SsThreshCall::ECN_NO_CUT:
            return tcb->m_ssThresh;
        default:
            return m_call.Loss(tcb);
        }
    }

    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override
    {
        if (m_observed)
        {
            return; // counted in InAckEvent
        }
        // a plain TcpSocketBase: count here, after ns-3 has acted on the ACK
        SequenceNumber32 ack = tcb->m_lastAckedSeq;
        if (!m_started)
        {
            Start(ack - segmentsAcked * tcb->m_segmentSize);
        }
        Observe(tcb, ack, tcb->m_ecnState == TcpSocketState::ECN_ECE_RCVD);
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        m_call.StateSet(tcb, newState);
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        if (m_echo.Event(tcb, event))
        {
            return;
        }
        if (event == TcpSocketState::CA_EVENT_TX_START && !m_started)
        {
            Start(tcb->m_nextTxSequence); // the first data: SND.UNA = SND.NXT
        }
        if (event == TcpSocketState::CA_EVENT_LOSS && m_call.Rto())
        {
            tcb->m_ssThresh = m_call.Loss(tcb);
        }
        TcpDctcp::CwndEvent(tcb, event);
        RestartOnTxStart(tcb, event);
    }

    double Alpha() const
    {
        return m_alpha;
    }

  private:
    // The observation window open when data starts ends at its first ACK.
    void Start(SequenceNumber32 una)
    {
        m_started = true;
        m_prevAck = una;
        m_end = una;
    }

    // One ACK: the bytes it acknowledges cumulatively, with its ECE; the
    // window ends when it reaches m_end (RFC 8257 §3.3).
    void Observe(Ptr<TcpSocketState> tcb, SequenceNumber32 ack, bool ece)
    {
        if (ack > m_prevAck)
        {
            uint32_t acked = ack - m_prevAck;
            m_prevAck = ack;
            m_acked += acked;
            if (ece)
            {
                m_ece += acked;
            }
        }
        if (ack >= m_end && m_acked > 0)
        {
            DoubleValue g;
            GetAttribute("DctcpShiftG", g);
            m_alpha = (1 - g.Get()) * m_alpha + g.Get() * static_cast<double>(m_ece) / m_acked;
            m_end = tcb->m_highTxMark; // SND.NXT before this ACK sends anything
            m_acked = m_ece = 0;
        }
    }

    double m_alpha = 1.0;
    bool m_started = false;
    bool m_observed = false; // InAckEvent is called (the senders' socket)
    SequenceNumber32 m_prevAck{0};
    SequenceNumber32 m_end{0};
    uint64_t m_acked = 0; // bytes cumulatively acknowledged in the window
    uint64_t m_ece = 0;   // ... by ECE ACKs
    SsThreshCall m_call;
    ExactEcho m_echo;
};

class TcpNewDctcp : public TcpDctcp, public TcpAckObserver
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
        : TcpDctcp(o)
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

    void Init(Ptr<TcpSocketState> tcb) override
    {
        TcpDctcp::Init(tcb);
        SetSuppressIncreaseIfCwndLimited(true); // NewReno growth as Linux's (TcpDctcpLinux)
    }

    // Before ns-3 acts on the ACK: it counts toward the window, and when it
    // reaches high the decision is taken before ReceivedAck can leave CWR.
    void InAckEvent(Ptr<TcpSocketState> tcb,
                    SequenceNumber32 una,
                    SequenceNumber32 ack,
                    bool ece) override
    {
        m_call.OnAck();
        m_observed = true;
        m_ackUna = una;
        m_ack = ack;
        m_ackEce = ece;
        if (m_episode)
        {
            Count(ack, ece);
            if (ack >= m_high)
            {
                Apply(tcb, Decide(tcb));
            }
        }
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        switch (m_call.Classify(tcb))
        {
        case SsThreshCall::ECN_CUT:
            // An ECN episode begins, on the ACK being processed. On the senders'
            // socket InAckEvent has seen it (SND.UNA before it: m_ackUna) and it
            // is counted here; otherwise m_lastAckedSeq is still SND.UNA before
            // it, and PktsAcked counts it.
            m_episode = true;
            m_cwnd0 = tcb->m_cWnd;
            m_una0 = m_observed ? m_ackUna : tcb->m_lastAckedSeq;
            m_high = tcb->m_highTxMark;
            m_prevAck = m_una0;
            m_marked = 0;
            if (m_observed)
            {
                Count(m_ack, m_ackEce);
                if (m_ack >= m_high)
                {
                    uint32_t w = Decide(tcb); // the whole window acknowledged at once
                    return w;                 // EnterCwr: ssthresh; classic recovery: cwnd
                }
            }
            return m_cwnd0; // no cut here
        case SsThreshCall::ECN_NO_CUT:
            return tcb->m_ssThresh;
        default:
            m_episode = false; // a loss: its response is the episode's one cut
            return m_call.Loss(tcb);
        }
    }

    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override
    {
        if (!m_episode || m_observed)
        {
            return; // on the senders' socket: counted in InAckEvent
        }
        SequenceNumber32 ack = tcb->m_lastAckedSeq;
        Count(ack, tcb->m_ecnState == TcpSocketState::ECN_ECE_RCVD);
        if (ack >= m_high)
        {
            Apply(tcb, Decide(tcb));
        }
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        if (m_decidedEvent == Simulator::GetEventCount())
        {
            return; // the ACK that ended the episode (ns-3 left CWR on it) does not grow cwnd
        }
        TcpDctcp::IncreaseWindow(tcb, segmentsAcked);
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        m_call.StateSet(tcb, newState);
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        if (m_echo.Event(tcb, event))
        {
            return;
        }
        if (event == TcpSocketState::CA_EVENT_LOSS && m_call.Rto())
        {
            m_episode = false;
            tcb->m_ssThresh = m_call.Loss(tcb); // cwnd is still the one before the RTO
        }
        TcpDctcp::CwndEvent(tcb, event);
        RestartOnTxStart(tcb, event);
    }

    uint64_t cuts = 0; // ECN episodes decided

  private:
    // The segments of the window (up to high) this ACK acknowledges cumulatively.
    void Count(SequenceNumber32 ack, bool ece)
    {
        SequenceNumber32 upto = std::min(ack, m_high);
        if (upto > m_prevAck)
        {
            if (ece)
            {
                m_marked += upto - m_prevAck;
            }
            m_prevAck = upto;
        }
    }

    // Seed 004 eq. (3)-(4): cwnd = max(cwnd0 / 2, A), A = n − m unmarked
    // segments of the window; at least the floor (g_minCwndSegs: Linux's 2, or
    // the 1 MSS eq. (3) allows), never above cwnd0. Ends the episode; returns
    // the new ssthresh (bytes).
    uint32_t Decide(Ptr<const TcpSocketState> tcb)
    {
        uint32_t mss = tcb->m_segmentSize;
        uint32_t n = (static_cast<uint32_t>(m_high - m_una0) + mss - 1) / mss;
        uint32_t m = (m_marked + mss - 1) / mss;
        uint32_t a = n > m ? n - m : 0;
        uint32_t w0 = m_cwnd0 / mss;
        uint32_t w = std::min(std::max({w0 / 2, a, g_minCwndSegs}), w0);
        m_episode = false;
        m_decidedEvent = Simulator::GetEventCount();
        cuts++;
        return w * mss;
    }

    static void Apply(Ptr<TcpSocketState> tcb, uint32_t ssthresh)
    {
        tcb->m_ssThresh = ssthresh;
        tcb->m_cWnd = ssthresh;
    }

    bool m_episode = false;
    bool m_observed = false; // InAckEvent is called (the senders' socket)
    uint32_t m_cwnd0 = 0;
    SequenceNumber32 m_una0{0};
    SequenceNumber32 m_high{0};
    SequenceNumber32 m_prevAck{0};
    uint32_t m_marked = 0; // bytes of the window acknowledged by ECE ACKs
    SequenceNumber32 m_ackUna{0}, m_ack{0}; // the ACK InAckEvent saw last
    bool m_ackEce = false;
    uint64_t m_decidedEvent = UINT64_MAX;
    SsThreshCall m_call;
    ExactEcho m_echo;
};

} // namespace ns3

#endif // P4INCAST_SIM_TCP_NEWDCTCP_H
