// p4-incast simulator: the receiver's budget held by the ToR (docs/algorithms.md
// §8), the rule of p4src/shared/rx_budget.p4 and the v1model flow table
// (p4src/v1model/main.p4 RxBudgetFlows) on the model's switch.
//
// Every packet that enters the ToR from the receiver's port passes here before
// it is forwarded (Scenario::SwitchRx). As in the pipeline:
//  - a flow is (receiver address, peer address, receiver port, peer port); the
//    CRC-32 of those 36 bytes (addresses as 16 bytes, IPv4 zero-extended)
//    gives it a slot in each of two ways of `slots` (FLOW_SLOTS) each, way 0's
//    its low bits and way 1's the bits above them, and its signature, the CRC
//    with the low bit set (0: an empty slot). Way 0 is the flow's if it holds
//    its signature or, for a SYN, no counted flow; else way 1 is tried the same
//    way (the order of TNA's stages);
//  - time runs in ticks of `tickS` (BMv2's 1.024 ms), epochs of `epochTicks`
//    ticks; the epoch's number is the tick with its low bits all ones;
//  - a SYN opens its flow: its own slot (its scale read again), or a slot of
//    no counted flow (empty, opened and not yet counted, or last seen two
//    epochs ago or earlier), with epoch 0; the flow counts from its next
//    packet (the handshake's end), and again after it aged out; a FIN or
//    RST empties the flow's slot. A packet of a flow without its slot (a
//    collision, the table full, no SYN seen, closed) is untracked:
//    forwarded unchanged, not counted;
//  - N = cur + prev: the counted flows last seen in this epoch and in the one
//    before, kept exact: a flow moves to cur at its first packet of an epoch
//    (out of prev if it was there), leaves its count at its FIN, RST or SYN, and
//    the flows of prev age out when the next epoch begins;
//  - an ACK (ACK set, none of SYN, FIN, RST) of a flow of known scale s has its
//    window lowered to min(w, ceil(share / 2^s), 65535), share =
//    max(floor(B / (N MSS)), 1) MSS; never raised. The ACK that counts a flow
//    (its slot's epoch was 0: the handshake's end) offers two segments
//    instead (§8, "The handshake's ACK");
//  - that ACK, if it carries no payload and the flow is one the receiver
//    opened (the SYN that opened the slot had ACK clear; a SYN-ACK means the
//    receiver accepted), leaves twice toward the peer: the two-segment ACK,
//    then a copy of it with window 0, so that the peer, which may take a
//    smaller window from the request that follows (same sequence and
//    acknowledgment numbers) only if it is 0 (Linux tcp_may_update_window),
//    takes the request's share from 0 (ns-3's sender takes that share with
//    or without the copy: sim/MODEL.md). The copy counts in no counter.
// The model's switches compute no checksum (sim/MODEL.md), so the rewrite
// changes the window field alone (the copy's as well); the pipeline's RFC 1624
// update is checked on BMv2 (ptf-tests/tests/rx_budget.py).
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
    uint32_t slots = 0;       // FLOW_SLOTS a way (two ways), a power of two
    uint32_t epochTicks = 0;  // a power of two >= 4
    double tickS = 0;         // one tick of the switch's clock

    // -- counters (the pipeline's budget_*_stats of the port) ---------------
    uint64_t acks = 0;         // ACKs held to the share
    uint64_t rewritten = 0;    // of those, the window lowered
    uint64_t unknownScale = 0; // ACKs of flows whose scale was not read
    uint64_t untracked = 0;    // packets of flows not open in a slot (fail-open)
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
    // window-scale option (-1: none, -2: options not walkable); payload: its TCP
    // payload, bytes; window: the header's field, lowered in place. Returns
    // whether it was rewritten; zeroCopy: whether a copy of it (as forwarded)
    // with window 0 leaves after it, on the same port.
    bool Handle(const std::array<uint8_t, 16>& rx,
                const std::array<uint8_t, 16>& peer,
                uint16_t rxPort,
                uint16_t peerPort,
                uint8_t flags,
                int ws,
                uint32_t payload,
                uint16_t& window,
                double now,
                bool& zeroCopy)
    {
        zeroCopy = false;
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
        uint32_t slot1 = slots + ((sig >> SlotBits()) & (slots - 1));
        sig |= 1;
        uint32_t ticks = static_cast<uint32_t>(static_cast<uint64_t>(now / tickS));
        uint32_t epoch = ticks | (epochTicks - 1);
        uint32_t epochPrev = epoch - epochTicks; // bit<32> arithmetic, as the P4
        uint32_t old = 2 * epochTicks;
        uint32_t epochOld = epoch > old ? epoch - old : 0; // |-|: saturating
        uint8_t synScale = ws == -2 ? SW_SCALE_UNKNOWN
                           : ws < 0 ? 0
                                    : static_cast<uint8_t>(std::min(ws, SW_MAX_WSCALE));
        bool closing = flags & (TcpHeader::FIN | TcpHeader::RST);
        // Way 0 first: the flow's if it holds its signature, or for a SYN if
        // it holds no counted flow; else way 1.
        if (sig_[slot] != sig && (closing || !syn || epoch_[slot] > epochOld))
        {
            slot = slot1;
        }
        // The slot is the flow's if it holds its signature; its epoch is the
        // one the flow was last seen in (counted if this one or the one
        // before), or 0 (opened by a SYN, not yet counted).
        bool own = sig_[slot] == sig;
        uint32_t seen = epoch_[slot]; // where the flow was counted before this packet
        if (closing)
        {
            if (!own)
            {
                untracked++;
                return false;
            }
            sig_[slot] = 0; // closed: the slot empties
            epoch_[slot] = 0;
        }
        else if (syn)
        {
            if (own)
            {
                scale_[slot] = synScale;
                openedByRx_[slot] = !(flags & TcpHeader::ACK);
            }
            else if (epoch_[slot] <= epochOld)
            {
                sig_[slot] = sig;
                scale_[slot] = synScale;
                openedByRx_[slot] = !(flags & TcpHeader::ACK);
                seen = 0;
            }
            else
            {
                untracked++;
                return false;
            }
            epoch_[slot] = 0; // open, counted from its next packet
        }
        else if (own)
        {
            epoch_[slot] = epoch;
        }
        else
        {
            untracked++;
            return false;
        }
        uint8_t scale = scale_[slot];
        if (portEpoch_ != epoch)
        {
            prev_ = portEpoch_ == epochPrev ? cur_ : 0;
            cur_ = 0;
            portEpoch_ = epoch;
        }
        if (closing || syn)
        {
            // A FIN or RST leaves the count, and so does a SYN (a new
            // handshake, counted from the flow's next packet).
            if (seen == epoch)
            {
                cur_--;
            }
            else if (seen == epochPrev)
            {
                prev_--;
            }
            return false;
        }
        if (seen != epoch)
        {
            cur_++;
            flowEpochs++;
            if (seen == epochPrev)
            {
                prev_--;
            }
        }
        if ((flags & (TcpHeader::SYN | TcpHeader::ACK)) != TcpHeader::ACK)
        {
            return false;
        }
        if (scale == SW_SCALE_UNKNOWN)
        {
            unknownScale++;
            return false;
        }
        uint32_t n = static_cast<uint16_t>(cur_ + prev_); // the pipeline's 16-bit N
        lastN = n;
        // The ACK that ends the handshake (its slot opened, not yet counted)
        // offers two segments; without payload, of a flow the receiver opened,
        // it is followed by its zero-window copy.
        bool fresh = seen == 0;
        uint64_t share = fresh ? 2 * uint64_t(mss) : Share(n);
        uint64_t units = (share + (uint64_t(1) << scale) - 1) >> scale;
        uint16_t w = static_cast<uint16_t>(std::min<uint64_t>(units, 0xffff));
        acks++;
        zeroCopy = fresh && payload == 0 && openedByRx_[slot];
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
    // packet to forward (`p` itself unless it was rewritten); zeroCopy: the
    // packet to forward right after it on the same port (the handshake's ACK
    // with window 0), or null.
    Ptr<const Packet> Ipv4(Ptr<const Packet> p, double now, Ptr<const Packet>& zeroCopy)
    {
        zeroCopy = nullptr;
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
        bool copy = false;
        bool rewritten = Handle(rx,
                                peer,
                                tcp.GetSourcePort(),
                                tcp.GetDestinationPort(),
                                tcp.GetFlags(),
                                ws,
                                c->GetSize(), // the TCP payload: IP's total length less both headers
                                window,
                                now,
                                copy);
        if (copy)
        {
            Ptr<Packet> z = c->Copy(); // the payload (none) and the packet's tags
            TcpHeader zt = tcp;
            zt.SetWindowSize(0);
            z->AddHeader(zt);
            z->AddHeader(ip);
            zeroCopy = z;
        }
        if (!rewritten)
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
    // Whether the SYN that opened the slot had ACK clear (the receiver
    // connected, not accepted): the P4 keeps it in bit 4 of the flow's scale
    // register (RX_OPENED_BY_RX, budget_flow_scale; its bits 3:0 the scale),
    // here beside the scale.
    std::vector<uint8_t> openedByRx_;
    uint32_t portEpoch_ = 0, cur_ = 0, prev_ = 0;

    void Init()
    {
        if (sig_.size() != 2 * slots) // two ways
        {
            sig_.assign(2 * slots, 0);
            epoch_.assign(2 * slots, 0);
            scale_.assign(2 * slots, 0);
            openedByRx_.assign(2 * slots, 0);
        }
    }

    uint32_t SlotBits() const
    {
        uint32_t bits = 0;
        while ((1u << bits) < slots)
        {
            bits++;
        }
        return bits;
    }
};

} // namespace p4i

#endif // P4INCAST_SIM_SWITCH_BUDGET_H
