/* SPDX-License-Identifier: Apache-2.0 */
/* rxwin: the flow table and what every policy measures (docs/algorithms.md
 * §3.3 "Handshake bookkeeping", §3.4).
 *
 * Ingress learns, per 4-tuple: data packets, bytes, ECT and CE counts, the
 * highest sequence received, the peer's MSS / window-scale / timestamp
 * options; egress learns ours. The window scale in effect is ours when both
 * SYNs carried the option, else 0 (RFC 7323; values above RX_MAX_WSCALE count
 * as it). MSS = the smaller of the MSS options seen (RX_DEFAULT_MSS if none, at
 * least RX_MIN_MSS; rx_tcp.h), minus 12 when both SYNs carried timestamps.
 * RTT comes from TCP timestamps: the time from the first ACK carrying a TSval
 * to the first data packet echoing it; flows whose minimum RTT exceeds
 * config.rtt_limit_us are marked FL_SLOW and never rewritten. A flow idle for
 * config.idle_ns restarts its window.
 *
 * FIN/RST delete the entry; the LRU map bounds memory; userspace deletes idle
 * entries. Under a user policy (ictcp, rcc) a new entry's key goes to
 * userspace at once through the p4i_newflows ring. p4i_budget counts the flows whose handshake completed: +1 then,
 * -1 when that entry is deleted — here on FIN/RST or a new SYN on its key,
 * or by userspace's idle sweep.
 *
 * No locks: ingress and egress of one flow may run on two CPUs at once, so
 * after the handshake every field has one writer — flags, W and the window
 * counters belong to ingress; re_valid, last_re, ts_val, ts_ns to egress. */
#ifndef P4I_RXWIN_FLOW_H
#define P4I_RXWIN_FLOW_H

#include "rxwin_ackq.h"
#include "rxwin_parse.h"
#include "rxwin_rotation.h"
#include "rxwin_rules.h"

/* Delete the entry (FIN/RST); a counted flow stops sharing the budget. */
static __always_inline void end_flow(struct flow_key *key)
{
	struct flow *old = bpf_map_lookup_elem(&p4i_flows, key);
	__u32 flags = old ? old->flags : 0;

	if (bpf_map_delete_elem(&p4i_flows, key) == 0) {
		stat_inc(ST_FLOWS_END);
		if (flags & FL_COUNTED)
			budget_add(-1);
	}
	bpf_map_delete_elem(&p4i_wset, key);
	rot_end(key);
	ackq_end(key);
}

static __always_inline struct flow *new_flow(struct flow_key *key, __u64 now,
					    struct rx_config *cfg)
{
	struct flow f = {};
	struct flow *old = bpf_map_lookup_elem(&p4i_flows, key);

	if (old && (old->flags & FL_COUNTED))
		budget_add(-1); /* a new SYN on a counted key replaces that flow */
	rot_end(key);
	ackq_end(key);

	f.first_ns = now;
	f.last_ns = now;
	f.mss = RX_DEFAULT_MSS;
	f.w = start_w(cfg, RX_DEFAULT_MSS);
	if (bpf_map_update_elem(&p4i_flows, key, &f, BPF_ANY))
		return 0;
	bpf_map_delete_elem(&p4i_wset, key);
	stat_inc(ST_FLOWS_NEW);
	if (cfg->policy == RX_POLICY_USER)
		bpf_ringbuf_output(&p4i_newflows, key, sizeof(*key), 0);
	return bpf_map_lookup_elem(&p4i_flows, key);
}

/* Both SYNs seen: scale in effect, MSS, initial W. */
static __always_inline void finish_handshake(struct flow *f, struct rx_config *cfg)
{
	__u32 mss = 0xffff;

	if ((f->flags & FL_HS) != FL_HS)
		return;
	f->wscale = (f->flags & FL_PEER_WS) && (f->flags & FL_LOCAL_WS) ? f->local_ws : 0;
	if (f->local_mss)
		mss = f->local_mss;
	if (f->peer_mss && f->peer_mss < mss)
		mss = f->peer_mss;
	if (mss == 0xffff)
		mss = RX_DEFAULT_MSS;
	if (mss < RX_MIN_MSS)
		mss = RX_MIN_MSS;
	if ((f->flags & FL_PEER_TS) && (f->flags & FL_LOCAL_TS))
		mss -= 12;
	f->mss = mss;
	if (!(f->flags & FL_COUNTED)) {
		f->flags |= FL_COUNTED;
		budget_add(1);
	}
	f->w = start_w(cfg, mss);
	f->flags &= ~FL_MARKED;
	window_restart(f);
}

/* A SYN's options into one side's fields: which side is named by its flags
 * (FL_PEER_* or FL_LOCAL_*) and its window-scale and MSS fields. */
static __always_inline void syn_options(struct flow *f, struct pkt *p, __u32 fl_syn, __u32 fl_ws,
					__u32 fl_ts, __u8 *ws, __u16 *mss)
{
	f->flags |= fl_syn;
	if (p->o.has_ws) {
		f->flags |= fl_ws;
		*ws = p->o.ws > RX_MAX_WSCALE ? RX_MAX_WSCALE : p->o.ws;
	}
	if (p->o.has_mss)
		*mss = p->o.mss;
	if (p->o.has_ts)
		f->flags |= fl_ts;
}

/* The peer's SYN or SYN-ACK (ingress): its options, the sequence it starts at. */
static __always_inline void peer_syn(struct flow *f, struct pkt *p, struct rx_config *cfg)
{
	syn_options(f, p, FL_PEER_SYN, FL_PEER_WS, FL_PEER_TS, &f->peer_ws, &f->peer_mss);
	f->hi_seq = p->seq + 1;
	f->flags |= FL_SEQ_VALID;
	finish_handshake(f, cfg);
}

/* Our SYN or SYN-ACK (egress): our options. Its window is never rewritten. */
static __always_inline void local_syn(struct flow *f, struct pkt *p, struct rx_config *cfg)
{
	syn_options(f, p, FL_LOCAL_SYN, FL_LOCAL_WS, FL_LOCAL_TS, &f->local_ws, &f->local_mss);
	finish_handshake(f, cfg);
}

/* A packet of the flow arrived (ingress) at `now`: after idle, the window
 * restarts, as TCP restarts after idle. */
static __always_inline void idle_restart(struct flow *f, struct rx_config *cfg, __u64 now)
{
	if (now - f->last_ns > cfg->idle_ns) {
		f->w = start_w(cfg, f->mss);
		f->flags &= ~FL_MARKED;
		window_restart(f);
		stat_inc(ST_IDLE_RESET);
	}
	f->last_ns = now;
}

/* Egress: our TSval, and when it first went out. */
static __always_inline void ts_sent(struct flow *f, struct pkt *p, __u64 now)
{
	if (p->o.has_ts && p->o.tsval != f->ts_val) {
		f->ts_ns = now; /* before ts_val: ingress may read them meanwhile */
		asm volatile("" ::: "memory");
		f->ts_val = p->o.tsval;
		/* Awaiting its echo while ts_val != ts_echoed (ingress writes that). */
	}
}

/* Ingress: the first packet echoing our TSval gives an RTT sample; smoothed
 * (srtt <- (7 srtt + sample) / 8) and minimum. */
static __always_inline void rtt_sample(struct flow *f, struct pkt *p, struct rx_config *cfg,
				       __u64 now)
{
	if (p->o.has_ts && f->ts_val != f->ts_echoed && p->o.tsecr == f->ts_val) {
		__u32 s = (now - f->ts_ns) / 1000;

		f->srtt_us = f->srtt_us ? (7 * (__u64)f->srtt_us + s) / 8 : s;
		if (!f->rtt_min_us || s < f->rtt_min_us)
			f->rtt_min_us = s;
		if (f->rtt_min_us > cfg->rtt_limit_us) {
			/* The minimum only falls, so a flow is excluded at most once
			 * (its first sample), unless a new SYN replaced it. */
			if (!(f->flags & FL_SLOW))
				stat_inc(ST_RTT_EXCLUDED);
			f->flags |= FL_SLOW;
		} else {
			f->flags &= ~FL_SLOW;
		}
		f->ts_echoed = f->ts_val;
	}
}

/* One data packet of `segs` segments (a GRO/LRO aggregate counts as the
 * segments it was made of; GRO never merges segments whose ECN bits differ)
 * into the flow's counters and its window of data. Returns the new bytes it
 * brought. */
static __always_inline __u32 count_data(struct flow *f, struct pkt *p, __u32 segs)
{
	__u32 end = p->seq + p->payload, nb = 0;

	f->pkts += segs;
	f->bytes += p->payload;
	f->last_len = p->payload / segs;
	if (p->ecn == 3)
		f->ce += segs;
	else if (p->ecn)
		f->ect += segs;
	if (!(f->flags & FL_SEQ_VALID)) {
		f->hi_seq = p->seq;
		f->flags |= FL_SEQ_VALID;
	}
	if ((__s32)(end - f->hi_seq) > 0) {
		nb = end - f->hi_seq;
		f->hi_seq = end;
	} else {
		f->retrans++;
	}
	f->win_pkts += segs;
	if (p->ecn == 3)
		f->win_ce += segs;
	f->win_bytes += nb;
	return nb;
}

#endif
