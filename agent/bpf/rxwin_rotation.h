/* SPDX-License-Identifier: Apache-2.0 */
/* rxwin: newdctcp-budget's rotation (config.rotate; docs/algorithms.md §3.6,
 * "Rotation"): windows below one segment, taken in turns.
 *
 * At most H flows hold an open window (a slot); the others wait in p4i_rotq
 * with a zero window. H follows NewDCTCP's rule over the receiver's window of
 * data (rot_on_data, ingress). A holder's turn ends with the ACK of new data
 * that leaves less than a segment of the window it was offered; while flows
 * wait, that ACK closes its window and the slot passes to the head of the
 * queue (rotate_ack, egress) through a forged window update (rot_grant,
 * rxwin_forge.h). The ACK that newly acknowledges a short segment (the end of
 * what the flow had to send) makes it idle, its window closed completely.
 * Userspace's half (agent/rotation.py) takes back the slots of holders with
 * nothing to send and grants free slots itself, through rx_rescue
 * (rot_rescue). Every change of a flow's state is a compare-and-swap on it,
 * the counters change only by atomic adds. Python's reference:
 * agent/policies/budget.py (Rotation). */
#ifndef P4I_RXWIN_ROTATION_H
#define P4I_RXWIN_ROTATION_H

#include "rxwin_forge.h"

/* H's ceiling: one slot per flow sharing the budget, and no more whole
 * segments than the budget holds beside `due` acknowledgments (each flow we
 * sent data to owes one, a packet in the bottleneck's queue that takes
 * ack_cost bytes of the budget until it arrives). */
static __always_inline __s64 rot_cap_due(struct rx_config *cfg, __u32 mss, __s64 flows, __s64 due)
{
	__u64 owed = due > 0 ? (__u64)due * cfg->ack_cost : 0;
	__u64 room = cfg->budget_bytes > owed ? cfg->budget_bytes - owed : 0;
	__s64 segs = mss ? (__s64)(room / mss) : 1;

	if (segs < 1)
		segs = 1;
	return flows < segs ? flows : segs;
}

/* The ceiling now, with the acknowledgments due at this moment. */
static __always_inline __s64 rot_cap(struct rot_global *g, struct rx_config *cfg, __u32 mss)
{
	return rot_cap_due(cfg, mss, (__s64)counted_flows(), g->due);
}

/* H now: the controller's value within [1, ceiling]. Until its first window
 * of data ends, H is the start: the ceiling with every flow's acknowledgment
 * counted as due, min(F, (B - F x ack_cost) / MSS) (§3.6, "H's start"). */
static __always_inline __s64 rot_slots(struct rot_global *g, struct rx_config *cfg, __u32 mss)
{
	__s64 flows = (__s64)counted_flows();
	__s64 h = g->slots;
	__s64 cap;

	if (h <= 0)
		return rot_cap_due(cfg, mss, flows, g->due > flows ? g->due : flows);
	cap = rot_cap_due(cfg, mss, flows, g->due);
	return h > cap ? cap : h;
}

/* One data packet, the rotation's side (ingress): H follows NewDCTCP's rule
 * over the receiver's window of data — H segments of new bytes from all
 * flows — cut to max(H/2, n - m) when a flow already at one segment saw CE
 * (a flow above it takes the cut in its own W), else H + 1; within
 * [1, ceiling]. The counters are plain adds: two CPUs may lose a count. */
static __always_inline void rot_on_data(struct rx_config *cfg, struct flow *f, __u32 nb,
					__u32 segs, int ce)
{
	struct rot_global *g = rot_global();
	__u64 h, n, m, cap;

	if (!g)
		return;
	g->win_bytes += nb;
	g->win_pkts += segs;
	if (ce) {
		g->win_ce += segs;
		if (f->w <= f->mss)
			g->win_floor_ce += segs;
	}
	h = rot_slots(g, cfg, f->mss);
	if (g->win_bytes < (__u64)h * f->mss)
		return;
	n = g->win_pkts;
	m = g->win_ce < n ? g->win_ce : n;
	if (g->win_floor_ce) {
		h = h / 2 > n - m ? h / 2 : n - m;
		g->cuts++;
	} else {
		h += 1;
	}
	cap = rot_cap(g, cfg, f->mss);
	if (h > cap)
		h = cap;
	g->slots = h < 1 ? 1 : (__s64)h;
	g->win_bytes = 0;
	g->win_pkts = 0;
	g->win_ce = 0;
	g->win_floor_ce = 0;
	g->windows++;
}

/* The flow's rotation entry goes: the slot it held or its place in the queue
 * is counted out (a queue entry left behind is skipped when popped). */
static __always_inline void rot_end(struct flow_key *key)
{
	struct rot_flow *r = bpf_map_lookup_elem(&p4i_rot_flows, key);
	struct rot_global *g = rot_global();

	if (!r)
		return;
	if (g && r->due)
		__sync_fetch_and_add(&g->due, -1);
	if (g && r->state == ROT_HOLD)
		__sync_fetch_and_add(&g->open, -1);
	else if (g && r->state == ROT_WAIT)
		__sync_fetch_and_add(&g->waiting, -1);
	bpf_map_delete_elem(&p4i_rot_flows, key);
}

/* We sent the flow data (our request): its acknowledgment is due. */
static __always_inline void rot_sent(struct rot_flow *r)
{
	struct rot_global *g = rot_global();

	if (g && __sync_val_compare_and_swap(&r->due, 0, 1) == 0)
		__sync_fetch_and_add(&g->due, 1);
}

/* A packet of the flow (ingress) that acknowledges all we sent it pays its
 * acknowledgment due. */
static __always_inline void rot_acked(struct flow_key *key, __u32 ack)
{
	struct rot_flow *r = bpf_map_lookup_elem(&p4i_rot_flows, key);
	struct rot_global *g;

	if (!r || !r->due || (__s32)(ack - r->seq_next) < 0)
		return;
	g = rot_global();
	if (g && __sync_val_compare_and_swap(&r->due, 1, 0) == 1)
		__sync_fetch_and_add(&g->due, -1);
}

/* A waiting flow takes a slot: the head of p4i_rotq gets a one-segment window
 * through a copy of the pure ACK in skb (rot_forge). Entries of flows that
 * ended or left the queue are skipped. A flow that cannot be forged yet goes
 * back to the tail. Returns 0 when a flow got its window. */
static __always_inline int rot_grant(struct __sk_buff *skb, struct rot_global *g)
{
	struct flow_key bk;
	int i;

	if (skb->len != ROT_FRAME_LEN) {
		stat_inc(ST_ROT_DEFER); /* the next pure ACK carries it */
		return -1;
	}
	for (i = 0; i < 4; i++) {
		struct rot_flow *br;
		struct flow *bf;
		__u32 w, ws;

		if (bpf_map_pop_elem(&p4i_rotq, &bk))
			return -1;
		br = bpf_map_lookup_elem(&p4i_rot_flows, &bk);
		if (!br || br->state != ROT_WAIT)
			continue;
		bf = bpf_map_lookup_elem(&p4i_flows, &bk);
		if (!bf || !br->has_hdr) {
			bpf_map_push_elem(&p4i_rotq, &bk, BPF_EXIST);
			return -1;
		}
		/* The slot first, then the update: the segment it lets out may be
		 * acknowledged on another CPU at once, and must find the flow a
		 * holder. The rescue may take the same flow (a duplicate entry). */
		if (__sync_val_compare_and_swap(&br->state, ROT_WAIT, ROT_HOLD) != ROT_WAIT)
			continue;
		br->since = bpf_ktime_get_ns();
		ws = bf->wscale & 15;
		w = bf->mss; /* one segment a turn */
		if (rot_forge(skb, br, &bk, br->ack, (w + (1U << ws) - 1) >> ws)) {
			stat_inc(ST_FORGE_FAIL);
			__sync_val_compare_and_swap(&br->state, ROT_HOLD, ROT_WAIT);
			bpf_map_push_elem(&p4i_rotq, &bk, BPF_EXIST);
			return -1;
		}
		__sync_fetch_and_add(&g->waiting, -1);
		__sync_fetch_and_add(&g->open, 1);
		__sync_fetch_and_add(&g->grants, 1);
		stat_inc(ST_ROT_GRANT);
		return 0;
	}
	return -1;
}

/* Flows wait while a slot is free (a holder ended, H grew): the packet in skb
 * carries the grant if it can. */
static __always_inline void rot_fill(struct __sk_buff *skb, struct rx_config *cfg)
{
	struct rot_global *g = rot_global();

	if (g && g->waiting > 0 && g->open < rot_slots(g, cfg, g->mss ?: RX_DEFAULT_MSS))
		rot_grant(skb, g);
}

/* One ACK of flow f (entry r) with w the window newdctcp-budget gives it: an
 * idle flow takes a free slot or joins the queue; a holder's turn ends, the
 * slot going back (H shrank, a short segment) or passing to the queue's head;
 * while flows wait, a holder is offered one segment. Sets *zero when this ACK
 * must close the window (RX_CLOSE_EDGE, or RX_CLOSE_ALL when it ends the
 * flow's data); returns the W to enforce otherwise. */
static __always_inline __u32 rotate_ack(struct __sk_buff *skb, struct rx_config *cfg,
					struct flow *f, struct rot_flow *r, struct flow_key *key,
					struct pkt *p, __u32 w, int *zero)
{
	struct rot_global *g = rot_global();
	/* this ACK newly acknowledges a short segment, the flow's latest: what it
	 * had to send has ended (a later ACK at the same ack, or our next
	 * request, is not this) */
	int runt = f->last_len && f->last_len < f->mss && p->ack == f->hi_seq && r->advanced;
	int to_wait = 0;
	__s64 h;

	if (!g)
		return w;
	g->mss = f->mss;
	h = rot_slots(g, cfg, f->mss);
	if (runt && r->state != ROT_HOLD) {
		/* its data ended while it held no slot: it stays out of the queue
		 * (a waiting flow leaves it; its entry there is skipped) */
		if (__sync_val_compare_and_swap(&r->state, ROT_WAIT, ROT_IDLE) == ROT_WAIT)
			__sync_fetch_and_add(&g->waiting, -1);
		stat_inc(ST_ROT_IDLE);
		*zero = RX_CLOSE_EDGE;
	} else if (r->state == ROT_IDLE) {
		if (g->open < h && g->waiting <= 0) {
			r->state = ROT_HOLD;
			r->since = bpf_ktime_get_ns();
			__sync_fetch_and_add(&g->open, 1);
		} else {
			r->state = ROT_WAIT;
			to_wait = 1;
			*zero = RX_CLOSE_EDGE;
		}
	} else if (r->state == ROT_HOLD) {
		/* less than a segment left to send (at window scale s the window
		 * is a multiple of 2^s, so one segment is offered as a bit more),
		 * told by an ACK of new data: an ACK at the same ack (the kernel's
		 * window update, our request) leaves the window a grant offered,
		 * which the edge of our last ACK does not count */
		int end = runt || (r->advanced && f->re_valid &&
				   (__s32)(f->last_re - p->ack) < (__s32)f->mss);

		int release = 0;

		/* The slot goes back when H shrank or the flow sent a short
		 * segment (the end of what it had: a slot must not sit with a flow
		 * that has nothing to send); otherwise it passes to a waiting flow
		 * when none is free, and only once that flow's grant went out (a
		 * holder that cannot hand it on keeps it: no flow may be left
		 * waiting with no window open anywhere). A free slot goes to the
		 * queue's head below. */
		if (end) {
			if (g->open > h || runt)
				release = 1;
			else if (g->waiting > 0 && g->open >= h)
				release = !rot_grant(skb, g);
		}
		if (release) {
			__u32 next = runt ? ROT_IDLE : ROT_WAIT;

			*zero = RX_CLOSE_EDGE;
			stat_inc(ST_ROT_RELEASE);
			if (runt)
				stat_inc(ST_ROT_IDLE);
			if (__sync_val_compare_and_swap(&r->state, ROT_HOLD, next) == ROT_HOLD) {
				__sync_fetch_and_add(&g->open, -1);
				to_wait = !runt;
			} else if (!runt) {
				/* The rescue took the slot back meanwhile (and counted
				 * it out): the flow is idle, and this ACK closes its
				 * window, so it waits. */
				to_wait = __sync_val_compare_and_swap(&r->state, ROT_IDLE, ROT_WAIT) ==
					  ROT_IDLE;
			}
		} else if (g->waiting > 0 && w > f->mss) {
			w = f->mss; /* one segment a turn while flows wait */
		}
	} else {
		*zero = RX_CLOSE_EDGE;
	}
	/* the flow's data ended: nothing of its window is left for it to use,
	 * and what stayed open would let its next response out before its turn
	 * (an edge inside a segment: a short segment mid-stream) */
	if (runt)
		*zero = RX_CLOSE_ALL;
	if (g->waiting > 0 && g->open < h)
		rot_grant(skb, g);
	if (to_wait) {
		bpf_map_push_elem(&p4i_rotq, key, BPF_EXIST);
		__sync_fetch_and_add(&g->waiting, 1);
	}
	return w;
}

/* ---- userspace's half, through rx_rescue ---- */

struct rot_scan {
	__s64 open;
	__s64 waiting;
	__u64 now; /* 0: take nothing back, only count */
	__u64 min_idle_ns;
	__u64 stale_rtts;
	__u32 reclaimed;
};

/* agent/rotation.py stale(): idle since it took its slot or since its last
 * data for more than max(stale_rtts smoothed RTTs, min_idle_ns); a holder
 * whose flow entry is gone is stale too. */
static long rot_scan_one(struct bpf_map *map, struct flow_key *key, struct rot_flow *r,
			 struct rot_scan *s)
{
	if (r->state == ROT_HOLD) {
		struct flow *f = bpf_map_lookup_elem(&p4i_flows, key);
		__u64 last = f && f->last_ns > r->since ? f->last_ns : r->since;
		__u64 idle = s->now > last ? s->now - last : 0;
		__u64 lim = f ? s->stale_rtts * f->srtt_us * 1000 : 0;

		if (lim < s->min_idle_ns)
			lim = s->min_idle_ns;
		if (s->now && (!f || idle > lim) &&
		    __sync_val_compare_and_swap(&r->state, ROT_HOLD, ROT_IDLE) == ROT_HOLD) {
			struct rot_global *g = rot_global();

			if (g)
				__sync_fetch_and_add(&g->open, -1);
			s->reclaimed++;
			return 0;
		}
		s->open++;
	} else if (r->state == ROT_WAIT) {
		s->waiting++;
	}
	return 0;
}

/* The rescue's state changes (agent/rotation.py) on the struct rot_op after
 * ROT_OP_OFF zero bytes: SCAN takes back stale holders' slots and counts,
 * GRANT gives a waiting flow a slot (its update is sent after), COUNT counts,
 * ADJUST adds to the counters. Made here by compare-and-swap: a rescue that
 * read a holder as idle while its segment was being acknowledged, or that
 * granted a flow while its ACK was on its way, would otherwise overwrite the
 * data path's change and leave a flow with a closed window that no grant
 * reaches (it then waits for its sender's zero-window probe, one min RTO).
 * GRANT returns 1 when the flow was waiting. The counts are repaired by
 * adding to them, never by writing them: a count written from a table that
 * changed while it was read would undo the data path's concurrent adds. */
static __always_inline int rot_rescue(struct __sk_buff *skb)
{
	struct rot_global *g = rot_global();
	struct rot_flow *r;
	struct rot_op op;

	if (!g || bpf_skb_load_bytes(skb, ROT_OP_OFF, &op, sizeof(op)))
		return -1;
	if (op.op == ROT_OP_COUNT || op.op == ROT_OP_SCAN) {
		struct rot_scan sc = {
			.now = op.op == ROT_OP_SCAN ? op.since : 0,
			.min_idle_ns = op.min_idle_ns,
			.stale_rtts = op.stale_rtts,
		};

		bpf_for_each_map_elem(&p4i_rot_flows, rot_scan_one, &sc, 0);
		op.open = sc.open;
		op.waiting = sc.waiting;
		op.reclaimed = sc.reclaimed;
		return bpf_skb_store_bytes(skb, ROT_OP_OFF, &op, sizeof(op), 0) ? -1 : 1;
	}
	if (op.op == ROT_OP_ADJUST) {
		__sync_fetch_and_add(&g->open, op.open);
		__sync_fetch_and_add(&g->waiting, op.waiting);
		return 1;
	}
	r = bpf_map_lookup_elem(&p4i_rot_flows, &op.key);
	if (!r)
		return 0;
	if (op.op == ROT_OP_GRANT) {
		if (__sync_val_compare_and_swap(&r->state, ROT_WAIT, ROT_HOLD) != ROT_WAIT)
			return 0;
		r->since = bpf_ktime_get_ns();
		__sync_fetch_and_add(&g->waiting, -1);
		__sync_fetch_and_add(&g->open, 1);
		__sync_fetch_and_add(&g->grants, 1);
		return 1;
	}
	return -1;
}

#endif
