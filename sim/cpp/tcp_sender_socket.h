// p4-incast simulator: the senders' socket — ns-3 3.44's TcpSocketBase with
// three departures from it, each where Linux (tcp_input.c) does otherwise and
// the senders' rules (docs/algorithms.md §2) depend on it. Every sending host
// of the model (scenario.h CreateSenderSocket) and the sender of the
// conformance lab (sender_conformance.h) use it; receivers keep TcpSocketBase.
//
// 1. Loss inside an ECN episode. ns-3's DupAck() counts dup ACKs in CA_CWR
//    but only enters Recovery from Open/Disorder, so a loss found in CWR was
//    repaired without a loss response (or waited for the RTO). Linux's
//    tcp_fastretrans_alert enters Recovery from CWR (tcp_enter_recovery, the
//    CWR episode's reduction carried on). Here, after ns-3 has processed a
//    duplicate ACK in CWR, the test ns-3 applies in Disorder (RFC 6675 §5:
//    DupAcks >= DupThresh with the recovery point passed, or IsLost(HighACK+1))
//    is applied too, and EnterRecovery() runs as it would from Disorder (new
//    recovery point, fast retransmit, GetSsThresh after CA_RECOVERY is set).
//    The congestion ops answer that call with the episode's one cut
//    (tcp_newdctcp.h SsThreshCall::Loss).
//
// 2. ECE during Recovery/Loss. ns-3 calls EnterCwr on any new ECE outside CWR,
//    taking the socket from Recovery/Loss to CWR (and, with 1., back to
//    Recovery, retransmitting the head again). Linux's tcp_enter_cwr acts only
//    in Open/Disorder. Here an ECE ACK that does not end the recovery (SEG.ACK
//    below the recovery point) is recorded as ns-3 would record it
//    (m_ecnEchoSeq, ECN_ECE_RCVD) without EnterCwr; the ACK that ends it still
//    reaches EnterCwr (Linux leaves Recovery on that ACK, then enters CWR).
//
// 3. The congestion ops see each ACK first (Linux's in_ack_event, which runs
//    before tcp_fastretrans_alert): ns-3 leaves CWR in ReceivedAck and asks
//    for ssthresh in EnterCwr before PktsAcked tells the ops about the ACK, so
//    DCTCP's α (whose observation window may end on this ACK) and NewDCTCP's
//    end-of-window decision came one ACK late. Ops that implement
//    TcpAckObserver get InAckEvent(SND.UNA before, SEG.ACK, ECE) before ns-3
//    processes the ACK.
//
// 4. No retransmission timeout with nothing in flight. ns-3 re-arms the
//    retransmission timer on every new ACK, even one that acknowledges all
//    that was sent, and when it fires with data waiting behind a closed
//    window it enters Loss (cwnd 1, ssthresh halved) and sends the head of
//    its buffer past the window. Linux arms the timer only while segments
//    are out (tcp_rearm_rto clears it when packets_out is 0) and waits on a
//    zero window with its probe timer (tcp_check_probe_timer), which sends no
//    data and leaves cwnd alone. The receiver's rotation (docs/algorithms.md
//    §3.6) closes windows for longer than the minimum RTO at large N: a
//    timer that fires here with nothing outstanding does nothing (ns-3's
//    persist timer still probes the window, after its own 6 s), and the
//    first segment sent after such a pause starts a fresh timer, as Linux
//    re-arms it when packets_out leaves 0 (tcp_event_new_data_sent): ns-3
//    would keep the one armed by the last ACK, which then fires while that
//    segment is still on its way.
#ifndef P4INCAST_SIM_TCP_SENDER_SOCKET_H
#define P4INCAST_SIM_TCP_SENDER_SOCKET_H

#include "ns3/core-module.h"
#include "ns3/internet-module.h"

namespace ns3
{

// Implemented by congestion ops that want Linux's in_ack_event (3. above).
class TcpAckObserver
{
  public:
    virtual ~TcpAckObserver() = default;
    // una: SND.UNA before the ACK; ack: its SEG.ACK (>= una); ece: its ECE flag
    virtual void InAckEvent(Ptr<TcpSocketState> tcb,
                            SequenceNumber32 una,
                            SequenceNumber32 ack,
                            bool ece) = 0;
};

class TcpSenderSocket : public TcpSocketBase
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpSenderSocket")
                                .SetParent<TcpSocketBase>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpSenderSocket>();
        return tid;
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    TcpSenderSocket() = default;

    TcpSenderSocket(const TcpSenderSocket& o)
        : TcpSocketBase(o)
    {
    }

    uint64_t idleTimeouts = 0; // 4.: timeouts that found nothing in flight

    // The window the peer offers as this socket took it (ns-3's m_rWnd, bytes;
    // protected there): what the receiver's ACKs left it (tests/sim).
    uint32_t PeerWindow() const
    {
        return m_rWnd.Get();
    }

  protected:
    void ReTxTimeout() override
    {
        if (m_state.Get() == TcpSocket::ESTABLISHED && m_txBuffer->Size() > 0 &&
            m_txBuffer->HeadSequence() >= m_tcb->m_highTxMark)
        {
            idleTimeouts++; // 4.: nothing is out to be lost
            return;
        }
        TcpSocketBase::ReTxTimeout();
    }

    uint32_t SendDataPacket(SequenceNumber32 seq, uint32_t maxSize, bool withAck) override
    {
        if (m_txBuffer->HeadSequence() >= m_tcb->m_highTxMark && m_retxEvent.IsPending())
        {
            m_retxEvent.Cancel(); // 4.: nothing was out; ns-3 arms a fresh timer below
        }
        return TcpSocketBase::SendDataPacket(seq, maxSize, withAck);
    }

    Ptr<TcpSocketBase> Fork() override
    {
        return CopyObject<TcpSenderSocket>(this); // a listener's connections are senders too
    }

    void ReceivedAck(Ptr<Packet> packet, const TcpHeader& h) override
    {
        SequenceNumber32 ack = h.GetAckNumber();
        SequenceNumber32 una = m_txBuffer->HeadSequence();
        bool ece = (h.GetFlags() & TcpHeader::ECE) &&
                   m_tcb->m_ecnState != TcpSocketState::ECN_DISABLED;
        if (ack >= una) // not a stale ACK (ns-3 ignores those)
        {
            if (auto obs = dynamic_cast<TcpAckObserver*>(PeekPointer(m_congestionControl)))
            {
                obs->InAckEvent(m_tcb, una, ack, ece); // 3.
            }
        }
        auto state = m_tcb->m_congState.Get();
        if (ece && ack > una && ack < m_recover && m_ecnEchoSeq.Get() < ack &&
            (state == TcpSocketState::CA_RECOVERY || state == TcpSocketState::CA_LOSS))
        {
            // 2.: what ReceivedAck records for a valid ECE, without EnterCwr
            m_ecnEchoSeq = ack;
            m_tcb->m_ecnState = TcpSocketState::ECN_ECE_RCVD;
        }
        TcpSocketBase::ReceivedAck(packet, h);
    }

    void ProcessAck(const SequenceNumber32& ackNumber,
                    bool scoreboardUpdated,
                    uint32_t currentDelivered,
                    const SequenceNumber32& oldHeadSequence,
                    bool receivedData) override
    {
        bool cwr = m_tcb->m_congState == TcpSocketState::CA_CWR;
        TcpSocketBase::ProcessAck(ackNumber,
                                  scoreboardUpdated,
                                  currentDelivered,
                                  oldHeadSequence,
                                  receivedData);
        // 1.: ns-3's own duplicate-ACK test (ProcessAck) and Disorder's step to
        // Recovery (DupAck; >= since the count kept rising in CWR)
        bool isDupack = m_sackEnabled ? scoreboardUpdated
                                      : (ackNumber == oldHeadSequence &&
                                         ackNumber < m_tcb->m_highTxMark && !receivedData);
        bool recoveryPointPassed = m_highRxAckMark >= m_recover || !m_recoverActive;
        if (cwr && isDupack && m_tcb->m_congState == TcpSocketState::CA_CWR &&
            ((m_dupAckCount >= m_retxThresh && recoveryPointPassed) ||
             m_txBuffer->IsLost(m_highRxAckMark)))
        {
            EnterRecovery(currentDelivered);
        }
    }
};

// A socket of TcpSenderSocket on `node`, set up as TcpL4Protocol::CreateSocket
// sets up its TcpSocketBase: the node's congestion ops (SocketType), recovery
// (RecoveryType) and RTT estimator (RttEstimatorType).
inline Ptr<Socket>
CreateSenderSocket(Ptr<Node> node)
{
    Ptr<TcpL4Protocol> l4 = node->GetObject<TcpL4Protocol>();
    TypeIdValue cc;
    TypeIdValue recovery;
    TypeIdValue rtt;
    l4->GetAttribute("SocketType", cc);
    l4->GetAttribute("RecoveryType", recovery);
    l4->GetAttribute("RttEstimatorType", rtt);
    ObjectFactory f;
    Ptr<TcpSenderSocket> s = CreateObject<TcpSenderSocket>();
    s->SetNode(node);
    s->SetTcp(l4);
    f.SetTypeId(rtt.Get());
    s->SetRtt(f.Create<RttEstimator>());
    f.SetTypeId(cc.Get());
    s->SetCongestionControlAlgorithm(f.Create<TcpCongestionOps>());
    f.SetTypeId(recovery.Get());
    s->SetRecoveryAlgorithm(f.Create<TcpRecoveryOps>());
    l4->AddSocket(s);
    return s;
}

} // namespace ns3

#endif // P4INCAST_SIM_TCP_SENDER_SOCKET_H
