/* SPDX-License-Identifier: Apache-2.0 */
/* rxwin: each policy's hooks, and the dispatch on the policy code
 * (rx_config.policy, rxwin.h RX_POLICY_*) that the programs in rxwin.bpf.c
 * call:
 *
 *   on_data  a data packet of a flow, after rxwin_flow.h counted it (ingress)
 *   on_ack   an ACK of a flow the policy controls: the window field it
 *            leaves with (egress)
 *   on_pass  a packet leaving that is no ACK of a known flow (egress)
 *
 *   policy           on_data                    on_ack                   on_pass
 *   observe          newdctcp_on_data           (never called)           -
 *   newdctcp-rx      newdctcp_on_data           newdctcp_on_ack          -
 *   newdctcp-budget  budget_on_data             budget_on_ack            budget_on_pass
 *   user             user_on_data               user_on_ack              -
 *
 * A code not listed runs as observe.
 * Python's reference dispatches the same way (agent/policies/reference.py). */
#ifndef P4I_RXWIN_HOOKS_H
#define P4I_RXWIN_HOOKS_H

#include "rxwin_ackq.h"
#include "rxwin_flow.h"
#include "rxwin_forge.h"
#include "rxwin_maps.h"
#include "rxwin_parse.h"
#include "rxwin_rotation.h"
#include "rxwin_rules.h"
#include "rxwin_write.h"

/* What a policy's hooks see of a data packet (ingress), after rxwin_flow.h
 * counted it. */
struct rx_data {
	struct rx_config *cfg;
	struct flow *f;
	struct flow_key *key;
	__u32 nb;   /* new bytes it brought */
	__u32 segs; /* segments it counts as */
	int ce;
};

/* What a policy's hooks see of an ACK of a flow it controls (egress). */
struct rx_ack {
	struct __sk_buff *skb;
	struct rx_config *cfg;
	struct flow *f;
	struct flow_key *key;
	struct pkt *p;
	__u32 ws;    /* our window scale in effect */
	__u32 field; /* the window field in the packet now (the kernel's, unless a hook wrote it) */
};

/* ---- newdctcp-rx (observe computes the same W) ---- */

static __always_inline void newdctcp_on_data(struct rx_data *d)
{
	struct flow *f = d->f;

	if (f->win_bytes >= f->w) {
		f->w = window_end(f, d->cfg);
		window_restart(f);
	}
}

static __always_inline __u32 newdctcp_on_ack(struct rx_ack *a)
{
	return enforce_field(a->f, a->p, a->field, a->ws, a->f->w, 0);
}

/* ---- newdctcp-budget (§3.6): W within a share of the budget B ----
 *
 *   share = max(B / F, min_segs * MSS),  F = flows whose handshake we saw
 *
 * so the windows of all F flows, idle ones included, add up to at most B
 * while the shares are above the floor. A flow starts at B (start_w), and W
 * is capped at the share on every data packet, at every window end and on
 * every ACK, in whole segments: its first window is its share when our
 * request opens it. The handshake's copy offers init_segs MSS (2: a Linux
 * sender never sends segments larger than half the largest window it was
 * offered). */

static __always_inline void budget_on_data(struct rx_data *d)
{
	struct rx_config *cfg = d->cfg;
	struct flow *f = d->f;

	f->w = budget_cap(cfg, f->w, f->mss);
	if (cfg->rotate && (f->flags & FL_COUNTED) && !(f->flags & FL_SLOW))
		rot_on_data(cfg, f, d->nb, d->segs, d->ce);
	if (f->win_bytes >= f->w) {
		f->w = budget_cap(cfg, window_end(f, cfg), f->mss);
		window_restart(f);
	}
}

/* The handshake's ACK of a flow we opened: a copy offering the initial window
 * w0 goes out first (the sender takes half the largest window it was offered
 * as the bound on its segment size, tcp_bound_to_half_wnd: offered 1.1 MSS it
 * would send 0.55-MSS segments), then this ACK with a zero window (accepted
 * at the same sequence number, tcp_may_update_window; the sender, with
 * nothing to send, does nothing), so our first data segment, the request,
 * opens the window at the share of that moment — a smaller non-zero window at
 * the same sequence number would be ignored, and the flows opened while the
 * share was still >= w0 would all send w0 at once. A peer that sends first
 * waits for our first segment. Returns the field now in the ACK: 0, or w0
 * (scaled) when the copy could not be sent. */
static __always_inline __u32 handshake_reopen(struct __sk_buff *skb, struct pkt *p, __u32 w0,
					       __u32 ws)
{
	__u32 open = (w0 + (1U << ws) - 1) >> ws;
	__u32 mark = skb->mark;
	long err;

	if (open > p->window)
		open = p->window;
	set_field(skb, p, p->window, open);
	skb->mark = RX_CLONE_MARK;
	err = bpf_clone_redirect(skb, skb->ifindex, 0);
	skb->mark = mark;
	if (err) {
		stat_inc(ST_FORGE_FAIL);
		return open;
	}
	stat_inc(ST_HS_REOPEN);
	set_field(skb, p, open, 0);
	return 0;
}

static __always_inline __u32 budget_on_ack(struct rx_ack *a)
{
	struct rx_config *cfg = a->cfg;
	struct flow *f = a->f;
	/* Rotation needs timestamps: a forged update repeats them. */
	int rot = cfg->rotate && (f->flags & FL_PEER_TS) && (f->flags & FL_LOCAL_TS);
	struct rot_flow *r = rot ? rot_note(a->skb, a->key, a->p) : 0;
	/* The share may have shrunk since W was set: a flow arrived. */
	__u32 w = budget_cap(cfg, f->w, f->mss);
	int zero = 0;

	if (r && a->p->payload)
		rot_sent(r); /* a request: the flow owes its acknowledgment */
	if (!f->re_valid && !f->pkts && !a->p->payload) {
		a->field = handshake_reopen(a->skb, a->p, cfg->init_segs * f->mss, a->ws);
		return a->field;
	}
	if (r)
		w = rotate_ack(a->skb, cfg, f, r, a->key, a->p, w, &zero);
	return enforce_field(f, a->p, a->field, a->ws, w, zero);
}

/* A packet that is no ACK of a known flow: with flows waiting and a slot free,
 * it carries a grant if it can (our FIN, our ACK of a peer's FIN). */
static __always_inline void budget_on_pass(struct __sk_buff *skb, struct rx_config *cfg)
{
	if (cfg->rotate)
		rot_fill(skb, cfg);
}

/* ---- user: ictcp and rcc, W written by agent/runner.py into p4i_wset ---- */

static __always_inline void user_on_data(struct rx_data *d)
{
	/* NewDCTCP-rx's W is measured (`status` shows it until userspace writes
	 * one), never enforced. */
	newdctcp_on_data(d);
	if (d->cfg->ackq_pkts)
		ackq_on_data(d->key, d->f);
}

static __always_inline __u32 user_on_ack(struct rx_ack *a)
{
	struct rx_config *cfg = a->cfg;
	struct flow *f = a->f;
	__u32 *u = bpf_map_lookup_elem(&p4i_wset, a->key);
	__u32 w, newf;
	int aq;

	/* Until userspace has written a W: rcc's share of Q as its assignment
	 * gives it (RCC assigns at a flow's arrival), else the initial window. */
	w = u ? *u
	      : cfg->share_pkts ? q_share(cfg->share_pkts, cfg->init_segs, f->mss)
				: cfg->init_segs * f->mss;
	/* rcc's ACK queue; a release is forged with timestamps */
	aq = cfg->ackq_pkts && (f->flags & FL_PEER_TS) && (f->flags & FL_LOCAL_TS) &&
	     rot_note(a->skb, a->key, a->p);
	newf = enforce_field(f, a->p, a->field, a->ws, w, 0);
	return aq ? ackq_ack(a->skb, cfg, f, a->key, a->p, newf, a->ws) : newf;
}

/* ---- dispatch on rx_config.policy ---- */

/* A data packet of a flow, counted (ingress). */
static __always_inline void policy_on_data(struct rx_data *d)
{
	switch (d->cfg->policy) {
	case RX_POLICY_BUDGET:
		budget_on_data(d);
		break;
	case RX_POLICY_USER:
		user_on_data(d);
		break;
	case RX_POLICY_NEWDCTCP:
	case RX_POLICY_OBSERVE:
	default:
		newdctcp_on_data(d);
		break;
	}
}

/* Whether the policy sets the windows of the flows it controls (handshake
 * seen, min RTT within the limit): only then does egress call policy_on_ack
 * (and clear ECE). */
static __always_inline int policy_sets_window(__u32 policy)
{
	switch (policy) {
	case RX_POLICY_NEWDCTCP:
	case RX_POLICY_BUDGET:
	case RX_POLICY_USER:
		return 1;
	default:
		return 0;
	}
}

/* An ACK of a flow the policy controls: the window field it leaves with. */
static __always_inline __u32 policy_on_ack(struct rx_ack *a)
{
	switch (a->cfg->policy) {
	case RX_POLICY_BUDGET:
		return budget_on_ack(a);
	case RX_POLICY_USER:
		return user_on_ack(a);
	case RX_POLICY_NEWDCTCP:
	default:
		return newdctcp_on_ack(a);
	}
}

/* A packet leaving that is no ACK of a known flow, or our FIN/RST after its
 * flow ended. */
static __always_inline void policy_on_pass(struct __sk_buff *skb, struct rx_config *cfg)
{
	switch (cfg->policy) {
	case RX_POLICY_BUDGET:
		budget_on_pass(skb, cfg);
		break;
	case RX_POLICY_USER:
		if (cfg->ackq_pkts)
			ackq_pass(skb); /* rcc: every ACK runs the queue's loop */
		break;
	default:
		break;
	}
}

#endif
