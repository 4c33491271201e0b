/* SPDX-License-Identifier: Apache-2.0 */
/* rxwin: RCC's ACK queue, seed 002 Alg. 2 (policy rcc with config.ackq_pkts
 * = Q; p4incast/policies/rcc.py AckQueue is the reference, docs/algorithms.md
 * "RCC"). A tc program cannot hold a packet, so it holds permission instead:
 * per flow, the right edge last released to it (rel); in flight of a flow =
 * rel − highest byte received (0 before a release, and while its latest
 * segment was shorter than its MSS); total = the sum over all flows.
 *
 * An ACK of a controlled flow (handshake and timestamps seen) with right
 * edge re = ack + (field << wscale), after the policy's clamp:
 * - no data from the flow yet: passes, counts nothing (the handshake); it
 *   still runs the loop below;
 * - else (Alg. 2 l.1–2) the flow's held ACK, if any, is taken out (its entry
 *   in p4i_ackq goes stale: a new ticket) and (ack, re) goes in at the tail;
 * - then (l.3–6) while total < Q · MSS (the head flow's MSS; tested before
 *   each send) the head leaves: a window update forged for the head's flow
 *   (rot_forge: its latest ack, window = held re − ack) from the pure ACK
 *   being sent, or, when the head is this ACK's own flow, this ACK with its
 *   full window. At most ACKQ_BURST heads a packet; the rest wait for the
 *   next ACK or userspace's rescue (rx_rescue, ACKQ_OP_RELEASE, every agent
 *   tick while something is held);
 * - an ACK still held after that leaves split (ours): its field lowered to
 *   (rel − ack) >> wscale, 0 when nothing was released beyond ack (the
 *   sender's persist timer is then the fallback); if it opens nothing beyond
 *   rel it leaves whole and nothing of it stays held.
 * Data arriving only recounts its flow (ackq_on_data): the ACK the kernel
 * sends for it runs the loop.
 *
 * Concurrency: the total is the sum of the flows' shares, kept by atomic
 * exchange and add (ackq_recount) whenever rel (egress) or hi_seq / last_len
 * (ingress) move. The loop runs under a try-lock (ackq_global.lock); an ACK
 * whose program finds it taken is queued without running it (safe for the
 * cap: it may hold an ACK the loop would have sent). Only the lock holder
 * pops. */
#ifndef P4I_RXWIN_ACKQ_H
#define P4I_RXWIN_ACKQ_H

#include "rxwin_forge.h"

#define ACKQ_BURST 4 /* heads released by one packet at most */
#define ACKQ_SKIP 4 /* entries looked at for the head, at most (stale ones are popped) */

/* What a flow counts in flight with right edge rel released to it: rel − the
 * highest byte received, 0 before any release and while its latest segment
 * was shorter than its MSS (idle: it emptied its send buffer). */
static __always_inline __s64 ackq_contrib(__u32 rel, __u32 rel_valid, __u32 hi, struct flow *f)
{
	__u32 d = rel - hi;

	if (!rel_valid || (f->last_len && f->last_len < f->mss))
		return 0;
	return (__s32)d > 0 ? (__s64)d : 0;
}

/* The flow's share of the total, recomputed after rel (egress) or hi_seq /
 * last_len (ingress) moved: exchanged, and the total moved by the difference,
 * so the total stays the sum of the shares whatever runs at once. Whoever
 * exchanges last then checks that neither side moved meanwhile (else it
 * computed from a half-updated flow) and recomputes. */
static __always_inline void ackq_recount(struct ackq_global *g, struct ackq_flow *a, struct flow *f)
{
	int i;

	for (i = 0; i < 3; i++) {
		__u32 rel = *(volatile __u32 *)&a->rel;
		__u32 hi = *(volatile __u32 *)&f->hi_seq;
		__s64 c = ackq_contrib(rel, a->rel_valid, hi, f);
		__s64 old = __sync_lock_test_and_set(&a->counted, c);

		if (c != old)
			__sync_fetch_and_add(&g->total, c - old);
		if (*(volatile __u32 *)&a->rel == rel && *(volatile __u32 *)&f->hi_seq == hi)
			break;
	}
	if (g->total > g->max_total)
		g->max_total = g->total;
}

/* The flow leaves the ACK queue (FIN/RST, a new SYN, userspace's sweep): it
 * counts nothing; a queue entry left behind is skipped when popped. */
static __always_inline void ackq_end(struct flow_key *key)
{
	struct ackq_flow *a = bpf_map_lookup_elem(&p4i_ackq_flows, key);
	struct ackq_global *g = ackq_global();
	__s64 old;

	if (!a || !g)
		return;
	old = __sync_lock_test_and_set(&a->counted, 0);
	if (old)
		__sync_fetch_and_add(&g->total, -old);
	if (__sync_val_compare_and_swap(&a->state, ACKQ_HELD, ACKQ_NONE) == ACKQ_HELD)
		__sync_fetch_and_add(&g->held, -1);
	bpf_map_delete_elem(&p4i_ackq_flows, key);
}

/* Data arrived (ingress): the flow's share of the total shrinks. */
static __always_inline void ackq_on_data(struct flow_key *key, struct flow *f)
{
	struct ackq_flow *a = bpf_map_lookup_elem(&p4i_ackq_flows, key);
	struct ackq_global *g = ackq_global();

	if (a && g)
		ackq_recount(g, a, f);
}

/* Q segments of the MSS of the flow at the head. */
static __always_inline __s64 ackq_cap(struct rx_config *cfg, struct flow *f)
{
	return (__s64)cfg->ackq_pkts * f->mss;
}

static __always_inline void ackq_set_rel(struct ackq_global *g, struct ackq_flow *a,
					 struct flow *f, __u32 re)
{
	if (!a->rel_valid || (__s32)(re - a->rel) > 0) {
		a->rel = re;
		a->rel_valid = 1;
	}
	ackq_recount(g, a, f);
}

/* Under the lock: the head of p4i_ackq if the total is below the cap (Alg. 2
 * l.3; stale entries, of flows that ended, are no longer held or were queued
 * again, are popped and skipped). Returns its entries, held (ack << 32 | re)
 * and its ticket, or 0 when the head must wait or none is left. */
static __always_inline struct ackq_flow *ackq_head(struct ackq_global *g, struct rx_config *cfg,
						   struct flow_key *k, struct flow **fp,
						   __u64 *held, __u32 *ticket)
{
	int i;

	for (i = 0; i < ACKQ_SKIP; i++) {
		struct ackq_entry e;
		struct ackq_flow *a;
		struct flow *f;

		if (bpf_map_peek_elem(&p4i_ackq, &e))
			return 0;
		a = bpf_map_lookup_elem(&p4i_ackq_flows, &e.key);
		f = bpf_map_lookup_elem(&p4i_flows, &e.key);
		if (!a || !f || a->state != ACKQ_HELD || a->ticket != e.ticket) {
			bpf_map_pop_elem(&p4i_ackq, &e);
			continue;
		}
		if (g->total >= ackq_cap(cfg, f))
			return 0;
		*k = e.key;
		*fp = f;
		*held = a->held;
		*ticket = e.ticket;
		return a;
	}
	return 0;
}

/* Under the lock: the head (k, held, ticket) leaves; rel moves to its right
 * edge. If its flow queued a newer ACK meanwhile (a program that lost the
 * lock), that one stays held. */
static __always_inline void ackq_commit(struct ackq_global *g, struct ackq_flow *a,
					struct flow *f, __u64 held, __u32 ticket)
{
	struct ackq_entry e;

	bpf_map_pop_elem(&p4i_ackq, &e);
	if (*(volatile __u32 *)&a->ticket == ticket &&
	    __sync_val_compare_and_swap(&a->state, ACKQ_HELD, ACKQ_NONE) == ACKQ_HELD)
		__sync_fetch_and_add(&g->held, -1);
	ackq_set_rel(g, a, f, (__u32)held);
	__sync_fetch_and_add(&g->releases, 1);
}

/* Under the lock: release heads while the total is below the cap, each by a
 * window update forged from the pure ACK in skb. The head being cur's own
 * flow (an ACK of it being sent) is released by that ACK: *self_field is its
 * window field then. Returns how many left. */
static __noinline int ackq_release(struct __sk_buff *skb, struct flow_key *cur,
				   __u32 *self_field)
{
	struct rx_config *cfg = get_config();
	struct ackq_global *g = ackq_global();
	int i, n = 0;

	if (!cfg || !g)
		return 0;
	for (i = 0; i < ACKQ_BURST; i++) {
		struct flow_key k;
		struct ackq_flow *a;
		struct rot_flow *r;
		struct flow *f = 0;
		__u64 held = 0;
		__u32 ack, field, ws, ticket = 0;
		int own = 0;

		a = ackq_head(g, cfg, &k, &f, &held, &ticket);
		if (!a || !f)
			return n;
		ack = held >> 32;
		ws = f->wscale & 15;
		field = ((__u32)held - ack) >> ws;
		if (cur && self_field && k.raddr_be == cur->raddr_be && k.laddr_be == cur->laddr_be &&
		    k.rport_be == cur->rport_be && k.lport_be == cur->lport_be) {
			*self_field = field; /* the ACK being sent: it never waited */
			own = 1;
		} else {
			r = bpf_map_lookup_elem(&p4i_rot_flows, &k);
			if (!r || !r->has_hdr || skb->len != ROT_FRAME_LEN)
				return n; /* the next pure ACK or the rescue carries it */
			if (rot_forge(skb, r, &k, ack, field)) {
				stat_inc(ST_FORGE_FAIL);
				return n;
			}
		}
		ackq_commit(g, a, f, held, ticket);
		if (!own)
			stat_inc(ST_ACKQ_RELEASED); /* an ACK that waited */
		n++;
	}
	return n;
}

/* An ACK of no flow the queue knows (our FIN, our ACK of the peer's FIN: the
 * flow has ended) leaves as it is and runs the loop (Alg. 2 l.3–6). */
static __always_inline void ackq_pass(struct __sk_buff *skb)
{
	struct ackq_global *g = ackq_global();

	if (!g || __sync_val_compare_and_swap(&g->lock, 0, 1) != 0)
		return;
	ackq_release(skb, 0, 0);
	__sync_val_compare_and_swap(&g->lock, 1, 0);
}

/* An ACK of a controlled rcc flow whose field is now newf: returns the field
 * it leaves with (the rules above). Counts: held, an ACK still held after the
 * loop; replaced, one of those that took its flow's held ACK out; superseded,
 * a held ACK taken out by its flow's newer one that left; zero, a held ACK
 * that left with a zero window. */
static __always_inline __u32 ackq_ack(struct __sk_buff *skb, struct rx_config *cfg,
				      struct flow *f, struct flow_key *key, struct pkt *p,
				      __u32 newf, __u32 ws)
{
	struct ackq_global *g = ackq_global();
	struct ackq_flow *a = 0;
	struct ackq_entry e = {};
	__u32 re = 0, self = 0xffffffff, was = ACKQ_NONE;
	int locked;

	if (!g)
		return newf;
	locked = __sync_val_compare_and_swap(&g->lock, 0, 1) == 0;
	if (!f->pkts)
		goto out; /* no data from it yet: the handshake passes, counts nothing */
	a = bpf_map_lookup_elem(&p4i_ackq_flows, key);
	if (!a) {
		struct ackq_flow na = {};

		bpf_map_update_elem(&p4i_ackq_flows, key, &na, BPF_NOEXIST);
		a = bpf_map_lookup_elem(&p4i_ackq_flows, key);
		if (!a)
			goto out;
	}
	/* Alg. 2 l.1–2: the flow's held ACK out (its entry goes stale), this one in
	 * at the tail */
	re = p->ack + (newf << ws);
	a->held = (__u64)p->ack << 32 | re;
	e.key = *key;
	e.ticket = __sync_fetch_and_add(&a->ticket, 1) + 1;
	bpf_map_push_elem(&p4i_ackq, &e, BPF_EXIST);
	was = __sync_val_compare_and_swap(&a->state, ACKQ_NONE, ACKQ_HELD);
	if (was == ACKQ_NONE)
		__sync_fetch_and_add(&g->held, 1);
out:
	if (locked) {
		ackq_release(skb, key, &self); /* l.3–6: every ACK runs the loop */
		__sync_val_compare_and_swap(&g->lock, 1, 0);
	}
	if (!a)
		return newf;
	if (self != 0xffffffff) {
		/* its own entry was released by the loop: this ACK carries it */
		if (was == ACKQ_HELD)
			stat_inc(ST_ACKQ_SUPERSEDED);
		return self;
	}
	/* still held: ours, the split */
	if (a->rel_valid && (__s32)(re - a->rel) <= 0) {
		/* opens nothing new: it leaves whole, nothing of it is held */
		if (__sync_val_compare_and_swap(&a->state, ACKQ_HELD, ACKQ_NONE) == ACKQ_HELD)
			__sync_fetch_and_add(&g->held, -1);
		if (was == ACKQ_HELD)
			stat_inc(ST_ACKQ_SUPERSEDED);
		return newf;
	}
	stat_inc(ST_ACKQ_HELD);
	if (was == ACKQ_HELD)
		stat_inc(ST_ACKQ_REPLACED);
	if (a->rel_valid && (__s32)(a->rel - p->ack) > 0)
		newf = (a->rel - p->ack) >> ws;
	else
		newf = 0;
	if (!newf)
		stat_inc(ST_ACKQ_ZERO);
	return newf;
}

/* rcc's ACK queue, userspace's side (runner.py AckqRescuer), through
 * rx_rescue: RELEASE pops the head if the total is below the cap and writes
 * back the key, ack and window field of the update userspace then sends
 * (returns 1; 0 when
 * the head waits or none is held; 2 when the data path holds the lock: try
 * again next tick). END counts out a flow userspace's sweep deletes. */
static __noinline int ackq_rescue(struct __sk_buff *skb, __u32 code)
{
	struct rx_config *cfg = get_config();
	struct ackq_global *g = ackq_global();
	struct ackq_flow *a;
	struct rot_flow *r;
	struct flow *f = 0;
	struct ackq_op op;
	__u64 held = 0;
	__u32 ack, ticket = 0;
	int rc = 0;

	if (!cfg || !g || bpf_skb_load_bytes(skb, ROT_OP_OFF, &op, sizeof(op)))
		return -1;
	if (code == ACKQ_OP_END) {
		ackq_end(&op.key);
		return 1;
	}
	if (__sync_val_compare_and_swap(&g->lock, 0, 1) != 0)
		return 2;
	a = ackq_head(g, cfg, &op.key, &f, &held, &ticket);
	if (a && f) {
		r = bpf_map_lookup_elem(&p4i_rot_flows, &op.key);
		if (r && r->has_hdr) {
			ack = held >> 32;
			op.ack = ack;
			op.field = ((__u32)held - ack) >> (f->wscale & 15);
			ackq_commit(g, a, f, held, ticket);
			stat_inc(ST_ACKQ_RESCUED);
			rc = 1;
		}
	}
	__sync_val_compare_and_swap(&g->lock, 1, 0);
	if (rc && bpf_skb_store_bytes(skb, ROT_OP_OFF, &op, sizeof(op), 0))
		return -1;
	return rc;
}

#endif
