/* SPDX-License-Identifier: Apache-2.0 */
/* rxwin: RCC's ACK queue (policy rcc with config.ackq_pkts = Q;
 * p4incast/policies/rcc.py AckQueue is the reference, docs/algorithms.md "RCC").
 * A tc program cannot hold a packet, so it holds permission instead: per flow, the right edge last
 * released to it (rel); in flight of a flow = rel − highest byte received
 * (0 before a release, and while its latest segment was shorter than its
 * MSS); the total over all flows stays <= Q · MSS (each flow's own MSS).
 *
 * An ACK of a controlled flow (handshake and timestamps seen, not slow) with
 * right edge re = ack + (field << wscale), after the policy's clamp:
 * - no data from the flow yet: passes, counts nothing (the handshake);
 * - re not beyond rel: passes (opens nothing new), and supersedes the flow's
 *   held ACK;
 * - nothing held anywhere and the total after it <= cap: passes, rel = re;
 * - else it is split: it leaves now with its field lowered to
 *   (rel − ack) >> wscale (0 when nothing was released beyond ack: the
 *   sender's persist timer is then the fallback), and (ack, re) is held: the
 *   flow goes to the tail of p4i_ackq, or, already held, its entry takes the
 *   latest (ack, re) and keeps its place.
 * Releases are strictly FIFO while the head fits: a window update forged for
 * the head's flow (rot_forge: its latest ack, window = held re − ack) from
 * the pure ACK being sent, tried before the ACK is judged (data arrived
 * since the last ACK: the reference releases at the data) and after it; at
 * most ACKQ_BURST heads a packet. RCC's receiver ACKs every segment, so an
 * ACK follows each data arrival closely; userspace's rescue releases heads
 * through rx_rescue (ACKQ_OP_RELEASE) every agent tick when no ACK flows.
 * The head's own ACK releasing it sends the full window in the ACK instead.
 *
 * Concurrency: the total is the sum of the flows' shares, kept by atomic
 * exchange and add (ackq_recount) whenever rel (egress) or hi_seq / last_len
 * (ingress) move. Decisions that read the total and the queue (pass, release)
 * run under a try-lock (ackq_global.lock); an ACK whose program finds it
 * taken is split and held (safe for the cap; it may queue an ACK that would
 * have passed). Only the lock holder pops. */
#ifndef P4I_RXWIN_ACKQ_H
#define P4I_RXWIN_ACKQ_H

#include "rxwin_forge.h"

#define ACKQ_BURST 4 /* heads released by one packet at most */

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

/* Q segments of the flow's MSS, and less than one unit of its window scale
 * more: a window is offered in units of 2^wscale rounded up (never less than
 * W), so at wscale 11 a lone flow's 40 segments are 29 units = 59392 bytes,
 * above 57920, and without the unit it would never fit. */
static __always_inline __s64 ackq_cap(struct rx_config *cfg, struct flow *f)
{
	return (__s64)cfg->ackq_pkts * f->mss + (1 << (f->wscale & 15)) - 1;
}

/* The total if flow a's released right edge became re. */
static __always_inline __s64 ackq_total_after(struct ackq_global *g, struct ackq_flow *a,
					      struct flow *f, __u32 re)
{
	__u32 rel = a->rel;

	if (a->rel_valid && (__s32)(re - rel) <= 0)
		re = rel;
	return g->total - a->counted + ackq_contrib(re, 1, f->hi_seq, f);
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

/* Under the lock: the head of p4i_ackq if it fits (entries of flows that
 * ended or are no longer held are popped and skipped). Returns its entries
 * and held (ack << 32 | re), or 0 when the head must wait or none is left. */
static __always_inline struct ackq_flow *ackq_head(struct ackq_global *g, struct rx_config *cfg,
						   struct flow_key *k, struct flow **fp,
						   __u64 *held)
{
	int i;

	for (i = 0; i < 4; i++) {
		struct ackq_flow *a;
		struct flow *f;
		__u64 h;

		if (bpf_map_peek_elem(&p4i_ackq, k))
			return 0;
		a = bpf_map_lookup_elem(&p4i_ackq_flows, k);
		f = bpf_map_lookup_elem(&p4i_flows, k);
		if (!a || !f || a->state != ACKQ_HELD) {
			bpf_map_pop_elem(&p4i_ackq, k);
			continue;
		}
		h = a->held;
		if (ackq_total_after(g, a, f, (__u32)h) > ackq_cap(cfg, f))
			return 0;
		*fp = f;
		*held = h;
		return a;
	}
	return 0;
}

/* Under the lock: the head (k, held) leaves; rel moves to its right edge. An
 * ACK that replaced it meanwhile (a program that lost the lock) is held again. */
static __always_inline void ackq_commit(struct ackq_global *g, struct ackq_flow *a,
					struct flow *f, struct flow_key *k, __u64 held)
{
	bpf_map_pop_elem(&p4i_ackq, k);
	if (__sync_val_compare_and_swap(&a->state, ACKQ_HELD, ACKQ_NONE) == ACKQ_HELD)
		__sync_fetch_and_add(&g->held, -1);
	ackq_set_rel(g, a, f, (__u32)held);
	__sync_fetch_and_add(&g->releases, 1);
	if (a->held != held && (__s32)((__u32)a->held - a->rel) > 0 &&
	    __sync_val_compare_and_swap(&a->state, ACKQ_NONE, ACKQ_HELD) == ACKQ_NONE) {
		bpf_map_push_elem(&p4i_ackq, k, BPF_EXIST);
		__sync_fetch_and_add(&g->held, 1);
	}
}

/* Under the lock: release heads while they fit, each by a window update
 * forged from the pure ACK in skb. The head being cur's own flow (an ACK of
 * it being sent) is released by that ACK: *self_field is its window field
 * then. Returns how many left. */
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
		__u32 ack, field, ws;

		a = ackq_head(g, cfg, &k, &f, &held);
		if (!a || !f)
			return n;
		ack = held >> 32;
		ws = f->wscale & 15;
		field = ((__u32)held - ack) >> ws;
		if (cur && self_field && k.raddr_be == cur->raddr_be && k.laddr_be == cur->laddr_be &&
		    k.rport_be == cur->rport_be && k.lport_be == cur->lport_be) {
			*self_field = field;
		} else {
			r = bpf_map_lookup_elem(&p4i_rot_flows, &k);
			if (!r || !r->has_hdr || skb->len != ROT_FRAME_LEN)
				return n; /* the next pure ACK or the rescue carries it */
			if (rot_forge(skb, r, &k, ack, field)) {
				stat_inc(ST_FORGE_FAIL);
				return n;
			}
		}
		ackq_commit(g, a, f, &k, held);
		stat_inc(ST_ACKQ_RELEASED);
		n++;
	}
	return n;
}

/* An ACK of a controlled rcc flow whose field is now newf: returns the field
 * it leaves with (the rules above). */
static __always_inline __u32 ackq_ack(struct __sk_buff *skb, struct rx_config *cfg,
				      struct flow *f, struct flow_key *key, struct pkt *p,
				      __u32 newf, __u32 ws)
{
	struct ackq_global *g = ackq_global();
	struct ackq_flow *a;
	__u32 re, self = 0xffffffff;
	int locked;

	if (!g)
		return newf;
	locked = __sync_val_compare_and_swap(&g->lock, 0, 1) == 0;
	if (locked)
		ackq_release(skb, 0, 0); /* what data freed since the last ACK */
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
	re = p->ack + (newf << ws);
	if (a->rel_valid && (__s32)(re - a->rel) <= 0) {
		/* opens nothing new: passes, supersedes the flow's held ACK */
		if (__sync_val_compare_and_swap(&a->state, ACKQ_HELD, ACKQ_NONE) == ACKQ_HELD) {
			__sync_fetch_and_add(&g->held, -1);
			stat_inc(ST_ACKQ_SUPERSEDED);
		}
		goto out;
	}
	if (locked && a->state != ACKQ_HELD && g->held <= 0 &&
	    ackq_total_after(g, a, f, re) <= ackq_cap(cfg, f)) {
		ackq_set_rel(g, a, f, re);
		goto out;
	}
	/* held: its latest (ack, re), in place if it already waits */
	a->held = (__u64)p->ack << 32 | re;
	if (__sync_val_compare_and_swap(&a->state, ACKQ_NONE, ACKQ_HELD) == ACKQ_NONE) {
		bpf_map_push_elem(&p4i_ackq, key, BPF_EXIST);
		__sync_fetch_and_add(&g->held, 1);
		stat_inc(ST_ACKQ_HELD);
	} else {
		stat_inc(ST_ACKQ_REPLACED);
	}
	/* the split: now only what opens nothing new */
	if (a->rel_valid && (__s32)(a->rel - p->ack) > 0)
		newf = (a->rel - p->ack) >> ws;
	else
		newf = 0;
	if (!newf)
		stat_inc(ST_ACKQ_ZERO);
out:
	if (locked) {
		ackq_release(skb, key, &self); /* the queue is tried whenever an ACK is queued */
		__sync_val_compare_and_swap(&g->lock, 1, 0);
		if (self != 0xffffffff)
			newf = self; /* its own held ACK was released: this ACK carries it */
	}
	return newf;
}

/* rcc's ACK queue, userspace's side (runner.py AckqRescuer), through
 * rx_rescue: RELEASE pops the head if it fits and writes back the key, ack
 * and window field of the update userspace then sends (returns 1; 0 when
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
	__u32 ack;
	int rc = 0;

	if (!cfg || !g || bpf_skb_load_bytes(skb, ROT_OP_OFF, &op, sizeof(op)))
		return -1;
	if (code == ACKQ_OP_END) {
		ackq_end(&op.key);
		return 1;
	}
	if (__sync_val_compare_and_swap(&g->lock, 0, 1) != 0)
		return 2;
	a = ackq_head(g, cfg, &op.key, &f, &held);
	if (a && f) {
		r = bpf_map_lookup_elem(&p4i_rot_flows, &op.key);
		if (r && r->has_hdr) {
			ack = held >> 32;
			op.ack = ack;
			op.field = ((__u32)held - ack) >> (f->wscale & 15);
			ackq_commit(g, a, f, &op.key, held);
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
