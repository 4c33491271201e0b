// p4-incast simulator: newdctcp-budget's rotation (docs/algorithms.md §3.6,
// "Rotation"): windows below one segment, taken in turns.
//
// The rule, as the host agent runs it (agent/bpf/rxwin_rotation.h and
// agent/rotation.py):
//
//   At most H flows hold a slot (an open window of one segment a turn while
//   others wait); the others wait in a FIFO queue with a zero window.
//   H follows NewDCTCP's rule over the receiver's window of data, H segments
//   of new bytes from all flows: max(H/2, n - m) when a flow already at one
//   segment saw CE, else H + 1; 1 <= H <= min(F, (B - D·c) / MSS); D = flows
//   that owe us an acknowledgment of data we sent them (from our packet with
//   data until one of theirs acknowledges all of it), c = ackCost, what one
//   takes of B. Until the first window of data ends H is its start,
//   min(F, (B - F·c) / MSS): every flow's acknowledgment counted as due.
//   IDLE -> HOLD on our next packet to it when a slot is free and no one
//   waits, else WAIT (tail of the queue, zero window).
//   HOLD: the turn ends with the ACK of new data that leaves less than a
//   segment of the window offered (an ACK at the same ack leaves a grant's
//   window, which the edge of our last ACK does not count). Then the slot
//   goes back if H shrank (more holders than H), or passes to the queue's
//   head if flows wait and none is free (the holder joins the tail; the
//   grant goes out first; a holder whose grant cannot go out keeps its
//   slot). While flows wait a holder is offered one segment.
//   The ACK that newly acknowledges a segment shorter than the MSS (a
//   response's last) makes the flow IDLE with its window closed completely:
//   a holder gives its slot back, a waiting flow leaves the queue.
//   A free slot goes to the queue's head with the next packet that leaves.
//   Every agent tick while flows wait: holders idle for 4 smoothed RTTs (and
//   at least 2 ticks) lose their slot; free slots go to the queue's head.
//
// This class is the rule's state and decisions only; the receiver
// (rx_agent.h RxAgent) feeds it packets and sends the window updates it
// grants (a copy of the flow's latest ACK offering one segment). Where the
// model differs from the host agent, and why:
//  - every flow rotates: the model runs without TCP timestamps, which the
//    kernel path needs only to repeat them in a forged update (PAWS);
//  - any packet that leaves may carry a grant (the host's grant is a copy of
//    a 66-byte pure ACK, so only such an ACK carries one);
//  - a grant skips every entry of a flow that no longer waits (the BPF
//    program looks at 4 entries at most, a verifier bound);
//  - the stale test's smoothed RTT is the sender's latest RTT sample (the
//    agent measures it with timestamps);
//  - there are no races, so no counter repair (agent/rotation.py _recount).
#ifndef P4INCAST_SIM_RX_ROTATION_H
#define P4INCAST_SIM_RX_ROTATION_H

// RX_CLOSE_EDGE, RX_CLOSE_ALL: how an ACK closes a window, as the data path's
#include "../../agent/bpf/rx_policy.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace p4i
{

// agent/bpf/rxwin.h ROT_IDLE, ROT_HOLD, ROT_WAIT (the trace's codes)
enum RotState
{
    ROT_STATE_IDLE = 0,
    ROT_STATE_HOLD = 1,
    ROT_STATE_WAIT = 2
};

struct RotEntry
{
    int state = ROT_STATE_IDLE;
    double since = 0;    // when it took its slot (s)
    double lastData = 0; // its latest data packet (s)
    bool due = false;    // our data to it is not acknowledged yet
};

class RxRotation
{
  public:
    // agent/rotation.py STALE_RTTS, STALE_TICKS, SCAN_TICKS
    static constexpr int STALE_RTTS = 4;
    static constexpr int STALE_TICKS = 2;
    static constexpr int SCAN_TICKS = 20;

    uint64_t budget = 0; // B, bytes
    uint64_t ackCost = 0; // what one acknowledgment due takes of B, bytes
    int64_t due = 0;      // flows whose acknowledgment of our data is due
    int64_t h = 0;       // H; <= 0: not set yet (the ceiling)
    std::map<uint64_t, RotEntry> entries;
    std::deque<uint64_t> queue; // waiting flows, head first (stale entries skipped)
    int64_t open = 0, waiting = 0;
    // the receiver's window of data
    uint64_t winBytes = 0, winPkts = 0, winCe = 0, winFloorCe = 0;
    // counters (the agent's stats)
    uint64_t grants = 0, released = 0, idled = 0, cuts = 0, windows = 0;
    uint64_t reclaimed = 0, tickGrants = 0, ticks = 0;
    // grants made and not yet sent, in order: the receiver sends each as a
    // window update of one segment
    std::vector<uint64_t> granted;

    // H's ceiling with `owed` acknowledgments due: min(F, (B - owed·c) / MSS), at least 1.
    int64_t CeilingDue(uint32_t flows, uint32_t mss, int64_t owed) const
    {
        int64_t room = static_cast<int64_t>(budget) - owed * static_cast<int64_t>(ackCost);
        int64_t segs = std::max<int64_t>(mss ? room / static_cast<int64_t>(mss) : 1, 1);
        return std::min<int64_t>(std::max<uint32_t>(flows, 1), segs);
    }

    int64_t Ceiling(uint32_t flows, uint32_t mss) const
    {
        return CeilingDue(flows, mss, due);
    }

    // H now: the controller's value within [1, ceiling]; until its first
    // window of data ends, the start: the ceiling with every flow's
    // acknowledgment counted as due (§3.6, "H's start").
    int64_t Slots(uint32_t flows, uint32_t mss) const
    {
        if (h <= 0)
        {
            return CeilingDue(flows, mss, std::max<int64_t>(due, flows));
        }
        return std::min(h, Ceiling(flows, mss));
    }

    // One data packet of a flow that shares the budget, before the flow's own
    // window end; wBefore: its W before this packet.
    void OnData(uint64_t key, uint32_t flows, uint32_t mss, uint64_t nb, bool ce, uint64_t wBefore,
                double now)
    {
        auto it = entries.find(key);
        if (it != entries.end())
        {
            it->second.lastData = now;
        }
        winBytes += nb;
        winPkts++;
        winCe += ce;
        winFloorCe += ce && wBefore <= mss;
        int64_t cur = Slots(flows, mss);
        if (winBytes < static_cast<uint64_t>(cur) * mss)
        {
            return;
        }
        uint64_t m = std::min(winCe, winPkts);
        int64_t next;
        if (winFloorCe)
        {
            next = std::max<int64_t>(cur / 2, static_cast<int64_t>(winPkts - m));
            cuts++;
        }
        else
        {
            next = cur + 1;
        }
        h = std::max<int64_t>(1, std::min(next, Ceiling(flows, mss)));
        winBytes = winPkts = winCe = winFloorCe = 0;
        windows++;
    }

    // We sent the flow data (a request): its acknowledgment is due.
    void Sent(uint64_t key)
    {
        RotEntry& r = entries[key];
        if (!r.due)
        {
            r.due = true;
            due++;
        }
    }

    // A packet of the flow acknowledged all we sent it.
    void Acked(uint64_t key)
    {
        auto it = entries.find(key);
        if (it != entries.end() && it->second.due)
        {
            it->second.due = false;
            due--;
        }
    }

    // The flow ended: its slot or its place in the queue is counted out.
    void End(uint64_t key)
    {
        auto it = entries.find(key);
        if (it == entries.end())
        {
            return;
        }
        if (it->second.due)
        {
            due--;
        }
        if (it->second.state == ROT_STATE_HOLD)
        {
            open--;
        }
        else if (it->second.state == ROT_STATE_WAIT)
        {
            waiting--;
        }
        entries.erase(it);
    }

    // The queue's head takes a slot; true when a flow got one.
    bool Grant(double now)
    {
        while (!queue.empty())
        {
            uint64_t k = queue.front();
            queue.pop_front();
            auto it = entries.find(k);
            if (it == entries.end() || it->second.state != ROT_STATE_WAIT)
            {
                continue; // a flow that ended or left the queue
            }
            it->second.state = ROT_STATE_HOLD;
            it->second.since = now;
            waiting--;
            open++;
            grants++;
            granted.push_back(k);
            return true;
        }
        return false;
    }

    // A packet leaves: a free slot goes to the queue's head.
    void Fill(uint32_t flows, uint32_t mss, double now)
    {
        if (waiting > 0 && open < Slots(flows, mss))
        {
            Grant(now);
        }
    }

    // One ACK of flow `key` with w the window newdctcp-budget gives it; runt:
    // it newly acknowledges a segment shorter than the MSS, the flow's
    // latest; measured: it acknowledges new data and the flow was offered a
    // window by an ACK before; left: what that window leaves beyond this ACK
    // (right edge - ack). Returns (W to enforce, 0 or how to close the
    // window: RX_CLOSE_EDGE, or RX_CLOSE_ALL when the ACK ends the flow's
    // data: nothing of its window is left for it, and what stayed open would
    // let its next response out before its turn).
    std::pair<uint64_t, int> OnAck(uint64_t key, uint32_t flows, uint32_t mss, bool runt,
                                    bool measured, int64_t left, uint64_t w, double now)
    {
        RotEntry& r = entries[key];
        int64_t cur = Slots(flows, mss);
        bool zero = false, toWait = false;
        if (runt && r.state != ROT_STATE_HOLD)
        {
            // its data ended while it held no slot: it stays out of the queue
            if (r.state == ROT_STATE_WAIT)
            {
                r.state = ROT_STATE_IDLE;
                waiting--;
            }
            idled++;
            zero = true;
        }
        else if (r.state == ROT_STATE_IDLE)
        {
            if (open < cur && waiting <= 0)
            {
                r.state = ROT_STATE_HOLD;
                r.since = now;
                open++;
            }
            else
            {
                r.state = ROT_STATE_WAIT;
                toWait = zero = true;
            }
        }
        else if (r.state == ROT_STATE_HOLD)
        {
            bool end = runt || (measured && left < static_cast<int64_t>(mss));
            bool release = false;
            if (end)
            {
                if (open > cur || runt)
                {
                    release = true;
                }
                else if (waiting > 0 && open >= cur)
                {
                    release = Grant(now); // hand the slot on, or keep it
                }
            }
            if (release)
            {
                open--;
                zero = true;
                released++;
                if (runt)
                {
                    r.state = ROT_STATE_IDLE;
                    idled++;
                }
                else
                {
                    r.state = ROT_STATE_WAIT;
                    toWait = true;
                }
            }
            else if (waiting > 0 && w > mss)
            {
                w = mss; // one segment a turn while flows wait
            }
        }
        else
        {
            zero = true;
        }
        if (waiting > 0 && open < cur)
        {
            Grant(now);
        }
        if (toWait)
        {
            queue.push_back(key);
            waiting++;
        }
        return {w, runt ? RX_CLOSE_ALL : zero ? RX_CLOSE_EDGE : 0};
    }

    // One agent tick (agent/rotation.py Rescuer.step): while flows wait, take
    // back the slots of holders idle longer than max(STALE_RTTS smoothed RTTs,
    // STALE_TICKS ticks) — looked for every STALE_TICKS ticks while no grant
    // was made since the last tick, else every SCAN_TICKS — then give the
    // free slots to the queue's head. srtt(key): the flow's smoothed RTT (s).
    void Tick(double now, double tickS, uint32_t flows, uint32_t mss,
              const std::function<double(uint64_t)>& srtt)
    {
        ticks++;
        if (waiting <= 0)
        {
            return;
        }
        int period = grants == m_seenGrants ? STALE_TICKS : SCAN_TICKS;
        m_seenGrants = grants;
        if (now >= m_scannedAt + period * tickS - 1e-12)
        {
            m_scannedAt = now;
            for (auto& kv : entries)
            {
                RotEntry& r = kv.second;
                if (r.state != ROT_STATE_HOLD)
                {
                    continue;
                }
                double idle = now - std::max(r.since, r.lastData);
                double lim = std::max(STALE_RTTS * srtt(kv.first), STALE_TICKS * tickS);
                if (idle > lim)
                {
                    r.state = ROT_STATE_IDLE;
                    open--;
                    reclaimed++;
                }
            }
        }
        int64_t cur = Slots(flows, mss);
        while (open < cur && waiting > 0 && Grant(now))
        {
            tickGrants++;
        }
    }

  private:
    uint64_t m_seenGrants = UINT64_MAX; // grants at the last tick
    double m_scannedAt = -1e300;        // when the last scan ran
};

} // namespace p4i

#endif
