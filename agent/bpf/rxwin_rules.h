/* SPDX-License-Identifier: Apache-2.0 */
/* rxwin: the window rules, arithmetic on one flow's entry. Python's reference
 * of each is named beside it (agent/policies/). */
#ifndef P4I_RXWIN_RULES_H
#define P4I_RXWIN_RULES_H

#include "rxwin_maps.h"

/* A new window of data starts (after a window end, a handshake, idle). */
static __always_inline void window_restart(struct flow *f)
{
	f->win_bytes = 0;
	f->win_pkts = 0;
	f->win_ce = 0;
}

/* End of one window of data, NewDCTCP-rx (docs/algorithms.md §3.2;
 * newdctcp_rx.next_window): W new bytes arrived, n packets, m of them CE.
 *
 *   m > 0:  W <- max(W/2, (n - m) * MSS), at least min_segs MSS (default 2);
 *           slow start is over for good
 *   m = 0:  W <- 2 W while no CE was ever seen (slow start), else W + MSS
 *   W <= max_w
 *
 * Source: Sreekumari, Jung, Lee, "An early congestion feedback and rate
 * adjustment schemes for many-to-one communication in cloud-based data center
 * networks", Springer 2015 (the sender's rule), moved to the receiver as in
 * ICTCP (Wu et al., IEEE/ACM ToN 21(2), 2013) and RCC (Xu et al., Computer
 * Networks 2017). Returns the new W; the caller stores it and restarts the
 * window. */
static __always_inline __u64 window_end(struct flow *f, struct rx_config *cfg)
{
	__u64 w = f->w;
	__u32 n = f->win_pkts, m = f->win_ce;
	__u64 floor = (__u64)cfg->min_segs * f->mss;

	f->windows++;
	if (m) {
		__u64 a = (__u64)(n - m) * f->mss;

		f->marked_windows++;
		f->flags |= FL_MARKED;
		w = w / 2;
		if (a > w)
			w = a;
		if (w < floor)
			w = floor;
	} else if (!(f->flags & FL_MARKED)) {
		w = w * 2;
	} else {
		w = w + f->mss;
	}
	if (w > cfg->max_w)
		w = cfg->max_w;
	return w;
}

/* newdctcp-budget: a flow's share of the budget B over the F flows counted,
 * bytes: max(B / F, min_segs * MSS) (budget.budget_share). */
static __always_inline __u64 budget_share(struct rx_config *cfg, __u32 mss)
{
	__u64 share = cfg->budget_bytes / counted_flows();
	__u64 floor = (__u64)cfg->min_segs * mss;

	return share < floor ? floor : share;
}

/* newdctcp-budget's W: min(W, share) in whole segments, at least one
 * (budget.budget_window: a window that ends inside a segment gets the rest of
 * it sent as a runt). */
static __always_inline __u64 budget_cap(struct rx_config *cfg, __u64 w, __u32 mss)
{
	__u64 share = budget_share(cfg, mss);

	if (w > share)
		w = share;
	if (!mss)
		return w;
	w = w / mss * mss;
	return w < mss ? mss : w;
}

/* W of a new flow, or of one restarting after idle, bytes: init_segs MSS;
 * newdctcp-budget's, B itself, which budget_cap brings down to the share
 * wherever W is used (on every ACK and data packet), so a flow's first window
 * is its share at the moment our request opens it (§3.6; budget.py
 * RxReference._new). */
static __always_inline __u32 start_w(struct rx_config *cfg, __u32 mss)
{
	if (cfg->policy == RX_POLICY_BUDGET && cfg->budget_bytes)
		return cfg->budget_bytes;
	return cfg->init_segs * mss;
}

/* rcc: a flow's equal share of Q packets over the F flows counted, bytes:
 * max(Q / F, floor) segments (rcc.equal_share), floor = init_segs (2): a
 * Linux sender never sends a segment larger than half the largest window it
 * was offered (tcp_bound_to_half_wnd), so a handshake offering 1 segment
 * would halve every segment of the connection. */
static __always_inline __u64 q_share(__u32 q, __u32 floor, __u32 mss)
{
	__u64 pk = q / counted_flows();

	return (pk > floor ? pk : floor) * (__u64)mss;
}

#endif
