// p4-incast simulator: the receiver's budget held by the ToR (docs/algorithms.md
// §8), the rule of p4src/shared/rx_budget.p4 and the v1model flow table
// (p4src/v1model/main.p4 RxBudgetFlows) on the model's switch.
//
// Every packet that enters the ToR from the receiver's port passes here before
// it is forwarded (Scenario::SwitchRx). As in the pipeline:
//  - a flow is (receiver address, peer address, receiver port, peer port); its
//    slot in a table of `slots` (FLOW_SLOTS) is the low bits of the CRC-32 of
//    those 36 bytes (addresses as 16 bytes, IPv4 zero-extended), its
//    signature the CRC with the low bit set (0: an empty slot);
//  - time runs in ticks of `tickS` (BMv2's 1.024 ms), epochs of `epochTicks`
//    ticks; the epoch's number is the tick with its low bits all ones;
//  - a slot holding the flow's signature is the flow's (a SYN sets its scale
//    again); an empty slot, or one whose flow was last seen two epochs ago or
//    earlier, is taken (a SYN with its scale, any other packet with the scale
//    unknown); a slot of another live flow leaves the packet untracked:
//    forwarded unchanged, not counted;
//  - N = the flows of the previous epoch + those of this one not seen in it,
//    each flow counted at its first packet of an epoch;
//  - an ACK (ACK set, neither SYN nor RST) of a flow of known scale s has its
//    window lowered to min(w, ceil(share / 2^s), 65535), share =
//    max(floor(B / (N MSS)), 1) MSS; never raised.
// The model's switches compute no checksum (sim/MODEL.md), so the rewrite
// changes the window field alone; the pipeline's RFC 1624 update is checked on
// BMv2 (ptf-tests/tests/rx_budget.py).
#ifndef P4INCAST_SIM_SWITCH_BUDGET_H
#define P4INCAST_SIM_SWITCH_BUDGET_H

#include "ns3/internet-module.h"
#include "ns3/network-module.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace p4i
{
using namespace ns3;

constexpr uint8_t SW_SCALE_UNKNOWN = 0xff; // the flow table's "scale not read"
constexpr int SW_MAX_WSCALE = 14;          // RFC 7323 §2.3: a larger shift counts as 14

inline uint32_t
Crc32(const uint8_t* data, size_t len)
{
    // zlib's CRC-32 (reflected 0xEDB88320, initial and final XOR all ones):
    // BMv2's crc32 hash of the same bytes.
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < len; i++)
    {
        crc ^= data[i];
        for (int b = 0; b < 8; b++)
        {
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}

class SwitchBudget
{
  public:
    // -- settings (sim/engine.py; zero budget: off) --------------------------
    uint64_t budgetBytes = 0; // B
    uint32_t mss = 0;         // the segment the shares are whole numbers of
    uint32_t slots = 0;       // FLOW_SLOTS, a power of two
    uint32_t epochTicks = 0;  // a power of two >= 4
    double tickS = 0;         // one tick of the switch's clock

    // -- counters (the pipeline's budget_*_stats of the port) ---------------
    uint64_t acks = 0;         // ACKs held to the share
    uint64_t rewritten = 0;    // of those, the window lowered
    uint64_t unknownScale = 0; // ACKs of flows whose scale was not read
    uint64_t untracked = 0;    // packets of flows without a slot (fail-open)
    uint64_t flowEpochs = 0;   // flows counted, once per epoch each
    uint32_t lastN = 0;        // N of the last ACK held to the share

    bool On() const
    {
        return budgetBytes > 0;
    }

    // The share of N flows: the port's floor (one segment) for N = 0, as the
    // budget_share table's default action.
    uint64_t Share(uint32_t n) const
    {
        if (n == 0)
        {
            return mss;
        }
        return std::max<uint64_t>(budgetBytes / (uint64_t(n) * mss), 1) * mss;
    }

    // One packet from the receiver. rx/peer: 16-byte addresses; ws: the SYN's
    // window-scale option (-1: none, -2: options not walkable); window: the
    // header's field, lowered in place. Returns whether it was rewritten.
    bool Handle(const std::array<uint8_t, 16>& rx,
                const std::array<uint8_t, 16>& peer,
                uint16_t rxPort,
                uint16_t peerPort,
                uint8_t flags,
                int ws,
                uint16_t& window,
                double now)
    {
        if (!On())
        {
            return false;
        }
        Init();
        bool syn = flags & TcpHeader::SYN;
        uint8_t key[36];
        std::copy(rx.begin(), rx.end(), key);
        std::copy(peer.begin(), peer.end(), key + 16);
        key[32] = rxPort >> 8;
        key[33] = rxPort & 0xff;
        key[34] = peerPort >> 8;
        key[35] = peerPort & 0xff;
        uint32_t sig = Crc32(key, sizeof key);
        uint32_t slot = sig & (slots - 1);
        sig |= 1;
        uint32_t ticks = static_cast<uint32_t>(static_cast<uint64_t>(now / tickS));
        uint32_t epoch = ticks | (epochTicks - 1);
        uint32_t epochPrev = epoch - epochTicks; // bit<32> arithmetic, as the P4
        uint32_t old = 2 * epochTicks;
        uint32_t epochOld = epoch > old ? epoch - old : 0; // |-|: saturating
        uint8_t synScale = ws == -2 ? SW_SCALE_UNKNOWN
                           : ws < 0 ? 0
                                    : static_cast<uint8_t>(std::min(ws, SW_MAX_WSCALE));
        uint8_t scale;
        if (sig_[slot] == sig)
        {
            if (syn)
            {
                scale_[slot] = synScale;
            }
            scale = scale_[slot];
        }
        else if (epoch_[slot] <= epochOld)
        {
            sig_[slot] = sig;
            scale = syn ? synScale : SW_SCALE_UNKNOWN;
            scale_[slot] = scale;
        }
        else
        {
            untracked++;
            return false;
        }
        if (portEpoch_ != epoch)
        {
            prev_ = portEpoch_ == epochPrev ? cur_ : 0;
            cur_ = joined_ = 0;
            portEpoch_ = epoch;
        }
        uint32_t seen = epoch_[slot];
        if (seen != epoch)
        {
            epoch_[slot] = epoch;
            cur_++;
            flowEpochs++;
            if (seen != epochPrev)
            {
                joined_++;
            }
        }
        if ((flags & (TcpHeader::SYN | TcpHeader::RST | TcpHeader::ACK)) != TcpHeader::ACK)
        {
            return false;
        }
        if (scale == SW_SCALE_UNKNOWN)
        {
            unknownScale++;
            return false;
        }
        uint32_t n = static_cast<uint16_t>(prev_ + joined_); // the pipeline's 16-bit N
        lastN = n;
        uint64_t share = Share(n);
        uint64_t units = (share + (uint64_t(1) << scale) - 1) >> scale;
        uint16_t w = static_cast<uint16_t>(std::min<uint64_t>(units, 0xffff));
        acks++;
        if (window > w)
        {
            window = w;
            rewritten++;
            return true;
        }
        return false;
    }

    // An IPv4 packet (no link header) from the receiver, as the switch gets it:
    // TCP goes through Handle(); a lowered window is written back. Returns the
    // packet to forward (`p` itself unless it was rewritten).
    Ptr<const Packet> Ipv4(Ptr<const Packet> p, double now)
    {
        uint8_t b[20];
        if (!On() || p->CopyData(b, 20) < 20 || b[9] != 6)
        {
            return p;
        }
        Ptr<Packet> c = p->Copy();
        Ipv4Header ip;
        TcpHeader tcp;
        c->RemoveHeader(ip);
        c->RemoveHeader(tcp);
        std::array<uint8_t, 16> rx{}, peer{};
        ip.GetSource().Serialize(rx.data() + 12);
        ip.GetDestination().Serialize(peer.data() + 12);
        int ws = -1;
        if ((tcp.GetFlags() & TcpHeader::SYN) && tcp.HasOption(TcpOption::WINSCALE))
        {
            ws = DynamicCast<const TcpOptionWinScale>(tcp.GetOption(TcpOption::WINSCALE))
                     ->GetScale();
        }
        uint16_t window = tcp.GetWindowSize();
        if (!Handle(rx,
                    peer,
                    tcp.GetSourcePort(),
                    tcp.GetDestinationPort(),
                    tcp.GetFlags(),
                    ws,
                    window,
                    now))
        {
            return p;
        }
        tcp.SetWindowSize(window);
        c->AddHeader(tcp);
        c->AddHeader(ip);
        return c;
    }

  private:
    std::vector<uint32_t> sig_, epoch_;
    std::vector<uint8_t> scale_;
    uint32_t portEpoch_ = 0, cur_ = 0, prev_ = 0, joined_ = 0;

    void Init()
    {
        if (sig_.size() != slots)
        {
            sig_.assign(slots, 0);
            epoch_.assign(slots, 0);
            scale_.assign(slots, 0);
        }
    }
};

} // namespace p4i

#endif // P4INCAST_SIM_SWITCH_BUDGET_H
