// SPDX-License-Identifier: Apache-2.0
/*
 * rxwin: the receiver-side host agent's data path (tc, ingress + egress).
 *
 * NewDCTCP-rx (docs/algorithms.md §3): the receiver sees every data packet and its
 * CE bit, and owns the advertised window, which caps any stock sender
 * (effective window = min(cwnd, rwnd)). Per flow it keeps a window W:
 *
 *   window of data  = W new bytes received (one W of new bytes, §3)
 *   n packets, m CE at the end of the window:
 *     m > 0:  W <- max(W/2, (n - m) * MSS), floor min_segs MSS (default 2);
 *             slow start ends
 *     m = 0:  W <- 2 W while no CE was ever seen (slow start), else W + MSS
 *
 * and enforces it on every ACK the receiver sends for the flow:
 *
 *   field <- min(kernel's field, max(ceil(W / 2^wscale), ceil((RE - ack) / 2^wscale)))
 *
 * where RE is the right edge advertised by the previous ACK, so the right edge
 * never moves left: the window shrinks by at most the newly acknowledged bytes.
 * The TCP checksum is fixed incrementally (RFC 1624, bpf_l4_csum_replace).
 *
 * Source of the rule: Sreekumari, Jung, Lee, "An early congestion feedback and
 * rate adjustment schemes for many-to-one communication in cloud-based data
 * center networks", Springer 2015 (NewDCTCP sender), moved to the receiver as
 * in ICTCP (Wu et al., IEEE/ACM ToN 21(2), 2013) and RCC (Xu et al., Computer
 * Networks 2017).
 *
 * Ingress learns, per 5-tuple: data packets, bytes, ECT and CE counts, the
 * highest sequence received, the peer's MSS / window-scale / timestamp
 * options; egress learns ours. The window scale in effect is ours when both
 * SYNs carried the option, else 0 (RFC 7323; values above 14 count as 14).
 * Flows whose handshake was not seen are measured but never rewritten: their
 * scale is unknown. RTT comes from TCP timestamps: the time from the first
 * ACK carrying a TSval to the first data packet echoing it; flows whose
 * minimum RTT exceeds config.rtt_limit_us are left alone.
 *
 * Policy comes from p4i_config: off (return at once), observe (measure and
 * compute W, rewrite nothing), newdctcp-rx (the rule above), user (W written
 * by the Python agent into p4i_wset: ICTCP, RCC; init_segs MSS until then),
 * newdctcp-budget (the rule above, W capped by a receiver-wide budget B:
 *
 *   share = max(B / F, min_segs * MSS),  F = flows whose handshake we saw
 *
 * so the windows of all F flows, idle ones included, add up to at most B
 * while the shares are above the floor; a flow starts at init_segs MSS
 * (newdctcp-budget runs with init_segs 2: a Linux sender never sends
 * segments larger than half the largest window it was offered), and W is
 * capped at every window end and on every ACK. The handshake's ACK of a
 * flow we opened goes out twice: a copy (bpf_clone_redirect) offering
 * init_segs MSS, so the sender's segments stay full-size, then the ACK with a
 * zero window, so the request opens the window at the share of that moment
 * (handshake_reopen; a peer that sends first waits for our first segment). p4i_budget counts F: +1 when a
 * handshake completes, -1 when that entry is deleted — here on FIN/RST, or
 * by userspace's idle sweep. Reference: agent/policies/newdctcp_rx.py).
 * FIN/RST delete the entry; the LRU map bounds memory; userspace deletes idle
 * entries.
 *
 * With config.clear_ece, egress also clears ECE on the ACKs of the flows it
 * controls (handshake seen, not slow): the policy's window is then the only
 * reduction a stock sender sees for CE (docs/algorithms.md §3.7). SYNs keep
 * their ECN flags, so ECN is still negotiated and data still carries ECT.
 *
 * Programs return TC_ACT_UNSPEC (= TCX_NEXT) so later tc programs still run.
 *
 * No locks: ingress and egress of one flow may run on two CPUs at once, so
 * after the handshake every field has one writer — flags, W and the window
 * counters belong to ingress; re_valid, last_re, ts_val, ts_ns to egress.
 * Statistics counters may lose an increment under such a race.
 *
 * With config.ackq_pkts (policy rcc), RCC's ACK queue (see "RCC's ACK queue"
 * below): egress splits the ACKs that must wait and forges the releases;
 * its total in flight is kept by atomic exchange and add from both
 * directions, its pass and release decisions under a try-lock.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "rxwin.h"

#define ETH_HLEN 14
#define ETH_P_IP 0x0800
#define IPPROTO_TCP_ 6
#define TC_ACT_UNSPEC_ (-1)

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10
#define TH_ECE 0x40

#ifndef P4I_MAX_FLOWS
#define P4I_MAX_FLOWS 16384
#endif

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rx_config);
} p4i_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, P4I_MAX_FLOWS);
	__type(key, struct flow_key);
	__type(value, struct flow);
} p4i_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, P4I_MAX_FLOWS);
	__type(key, struct flow_key);
	__type(value, __u32);
} p4i_wset SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} p4i_stats SEC(".maps");

/* newdctcp-budget: the number of flows sharing the budget (FL_COUNTED entries). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} p4i_budget SEC(".maps");

/* Rotation (newdctcp-budget with config.rotate): H and its counts, each flow's
 * state, the queue of waiting flows. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rot_global);
} p4i_rot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, P4I_MAX_FLOWS);
	__type(key, struct flow_key);
	__type(value, struct rot_flow);
} p4i_rot_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, P4I_MAX_FLOWS);
	__type(value, struct flow_key);
} p4i_rotq SEC(".maps");

/* RCC's ACK queue (config.ackq_pkts; see "RCC's ACK queue" below): each
 * flow's state, the FIFO of flows with an ACK held, the total in flight. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, P4I_MAX_FLOWS);
	__type(key, struct flow_key);
	__type(value, struct ackq_flow);
} p4i_ackq_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, P4I_MAX_FLOWS);
	__type(value, struct flow_key);
} p4i_ackq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ackq_global);
} p4i_ackq_g SEC(".maps");

/* The forged ACK is built here (too large for the stack beside the parser). */
struct rot_pseudo {
	__be32 saddr;
	__be32 daddr;
	__u8 zero;
	__u8 proto;
	__be16 len;
};

struct rot_tcp {
	__be16 source;
	__be16 dest;
	__be32 seq;
	__be32 ack_seq;
	__u8 doff_res;
	__u8 flags;
	__be16 window;
	__u16 check;
	__be16 urg_ptr;
	__u8 opt[4];
	__be32 tsval;
	__be32 tsecr;
};

struct rot_scratch {
	struct rot_pseudo ph;
	struct rot_tcp tcp;
	__u8 save[ROT_FRAME_LEN + 2];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rot_scratch);
} p4i_scratch SEC(".maps");

struct tcp_hdr_raw {
	__be16 source;
	__be16 dest;
	__be32 seq;
	__be32 ack_seq;
	__u8 doff_res;
	__u8 flags;
	__be16 window;
	__sum16 check;
	__be16 urg_ptr;
};

struct tcp_opts {
	__u32 tsval;
	__u32 tsecr;
	__u16 mss;
	__u8 ws;
	__u8 has_mss;
	__u8 has_ws;
	__u8 has_ts;
	__u8 bad;
};

struct pkt {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u32 seq;
	__u32 ack;
	__u32 payload;
	__u32 tcp_off;
	__u16 window;
	__u8 flags;
	__u8 ecn;
	struct tcp_opts o;
};

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&p4i_stats, &idx);

	if (v)
		*v += 1;
}

/* TCP options, the way tcp_parse_options() reads them: EOL ends the list,
 * NOP is one byte, any other option needs a length byte >= 2 that fits in the
 * header. A bad length stops parsing; options read so far are kept. One
 * option per bpf_loop() step keeps the verifier's work independent of the
 * option layout. */
struct opt_walk {
	__u8 buf[64];
	__u32 i;
	__u32 optlen;
	struct tcp_opts o;
};

static __always_inline __u32 be32_at(const __u8 *b, __u32 i)
{
	return ((__u32)b[i & 63] << 24) | ((__u32)b[(i + 1) & 63] << 16) |
	       ((__u32)b[(i + 2) & 63] << 8) | b[(i + 3) & 63];
}

static long opt_step(__u64 index, void *ctx)
{
	struct opt_walk *w = ctx;
	__u32 i = w->i;
	__u8 kind, len;

	if (i >= w->optlen)
		return 1;
	kind = w->buf[i & 63];
	if (kind == 0)
		return 1;
	if (kind == 1) {
		w->i = i + 1;
		return 0;
	}
	if (i + 1 >= w->optlen) {
		w->o.bad = 1;
		return 1;
	}
	len = w->buf[(i + 1) & 63];
	if (len < 2 || i + len > w->optlen) {
		w->o.bad = 1;
		return 1;
	}
	if (kind == 2) {
		if (len == 4) {
			w->o.mss = ((__u16)w->buf[(i + 2) & 63] << 8) | w->buf[(i + 3) & 63];
			w->o.has_mss = 1;
		} else {
			w->o.bad = 1;
		}
	} else if (kind == 3) {
		if (len == 3) {
			w->o.ws = w->buf[(i + 2) & 63];
			w->o.has_ws = 1;
		} else {
			w->o.bad = 1;
		}
	} else if (kind == 8) {
		if (len == 10) {
			w->o.tsval = be32_at(w->buf, i + 2);
			w->o.tsecr = be32_at(w->buf, i + 6);
			w->o.has_ts = 1;
		} else {
			w->o.bad = 1;
		}
	}
	w->i = i + len;
	return 0;
}

static __always_inline void parse_opts(struct __sk_buff *skb, __u32 off, __u32 optlen,
				       struct tcp_opts *o)
{
	struct opt_walk w = {};

	if (optlen == 0)
		return;
	if (optlen > 40 || bpf_skb_load_bytes(skb, off, w.buf, optlen)) {
		o->bad = 1;
		return;
	}
	w.optlen = optlen;
	bpf_loop(40, opt_step, &w, 0);
	*o = w.o;
}

/* Ethernet + IPv4 (no fragments) + TCP, else -1. */
static __always_inline int parse(struct __sk_buff *skb, struct pkt *p)
{
	struct iphdr iph;
	struct tcp_hdr_raw th;
	__u32 ihl, doff, tot;

	if (skb->protocol != bpf_htons(ETH_P_IP))
		return -1;
	if (bpf_skb_load_bytes(skb, ETH_HLEN, &iph, sizeof(iph)))
		return -1;
	if (iph.version != 4 || iph.protocol != IPPROTO_TCP_)
		return -1;
	if (iph.frag_off & bpf_htons(0x3fff))
		return -1;
	ihl = iph.ihl * 4;
	if (ihl < 20)
		return -1;
	p->tcp_off = ETH_HLEN + ihl;
	if (bpf_skb_load_bytes(skb, p->tcp_off, &th, sizeof(th)))
		return -1;
	doff = (th.doff_res >> 4) * 4;
	tot = bpf_ntohs(iph.tot_len);
	if (doff < 20 || tot < ihl + doff)
		return -1;
	p->saddr = iph.saddr;
	p->daddr = iph.daddr;
	p->sport = th.source;
	p->dport = th.dest;
	p->seq = bpf_ntohl(th.seq);
	p->ack = bpf_ntohl(th.ack_seq);
	p->window = bpf_ntohs(th.window);
	p->flags = th.flags;
	p->ecn = iph.tos & 3;
	p->payload = tot - ihl - doff;
	parse_opts(skb, p->tcp_off + 20, doff - 20, &p->o);
	if (p->o.bad)
		stat_inc(ST_BAD_OPTS);
	return 0;
}

static __always_inline void budget_add(__s64 d)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&p4i_budget, &zero);

	if (n)
		__sync_fetch_and_add(n, d);
}

static __always_inline struct rot_global *rot_global(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&p4i_rot, &zero);
}

/* H's ceiling: one slot per flow sharing the budget, and no more whole
 * segments than the budget holds. */
static __always_inline __s64 rot_cap(struct rx_config *cfg, __u32 mss)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&p4i_budget, &zero);
	__s64 flows = n && (__s64)*n > 0 ? (__s64)*n : 1;
	__s64 segs = mss ? cfg->budget_bytes / mss : 1;

	if (segs < 1)
		segs = 1;
	return flows < segs ? flows : segs;
}

/* H now: the controller's value within [1, ceiling]; the ceiling until set. */
static __always_inline __s64 rot_slots(struct rot_global *g, struct rx_config *cfg, __u32 mss)
{
	__s64 cap = rot_cap(cfg, mss);
	__s64 h = g->slots;

	return h <= 0 || h > cap ? cap : h;
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
	cap = rot_cap(cfg, f->mss);
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
	if (g && r->state == ROT_HOLD)
		__sync_fetch_and_add(&g->open, -1);
	else if (g && r->state == ROT_WAIT)
		__sync_fetch_and_add(&g->waiting, -1);
	bpf_map_delete_elem(&p4i_rot_flows, key);
}

/* rcc: a flow's equal share of Q packets over the F flows counted, bytes:
 * max(Q / F, floor) segments (agent/policies/rcc.py equal_share), floor =
 * init_segs (2): a Linux sender never sends a segment larger than half the
 * largest window it was offered (tcp_bound_to_half_wnd), so a handshake
 * offering 1 segment would halve every segment of the connection. */
static __always_inline __u64 q_share(__u32 q, __u32 floor, __u32 mss)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&p4i_budget, &zero);
	__u64 cnt = n && (__s64)*n > 0 ? *n : 1;
	__u64 pk = q / cnt;

	return (pk > floor ? pk : floor) * (__u64)mss;
}

/* newdctcp-budget: this flow's share of the budget, bytes. */
static __always_inline __u64 budget_share(struct rx_config *cfg, __u32 mss)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&p4i_budget, &zero);
	__u64 cnt = n && (__s64)*n > 0 ? *n : 1;
	__u64 share = cfg->budget_bytes / cnt;
	__u64 floor = (__u64)cfg->min_segs * mss;

	return share < floor ? floor : share;
}

static __always_inline __u64 budget_cap(struct rx_config *cfg, __u64 w, __u32 mss)
{
	__u64 share;

	if (cfg->policy != RX_POLICY_BUDGET)
		return w;
	share = budget_share(cfg, mss);
	if (w > share)
		w = share;
	/* whole segments, at least one (newdctcp_rx.budget_window: a window that
	 * ends inside a segment gets the rest of it sent as a runt) */
	if (!mss)
		return w;
	w = w / mss * mss;
	return w < mss ? mss : w;
}

static __always_inline struct ackq_global *ackq_global(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&p4i_ackq_g, &zero);
}

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
	f.w = cfg->init_segs * RX_DEFAULT_MSS;
	if (bpf_map_update_elem(&p4i_flows, key, &f, BPF_ANY))
		return 0;
	bpf_map_delete_elem(&p4i_wset, key);
	stat_inc(ST_FLOWS_NEW);
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
	if (mss < 88)
		mss = 88;
	if ((f->flags & FL_PEER_TS) && (f->flags & FL_LOCAL_TS))
		mss -= 12;
	f->mss = mss;
	if (!(f->flags & FL_COUNTED)) {
		f->flags |= FL_COUNTED;
		budget_add(1);
	}
	f->w = (__u64)cfg->init_segs * mss;
	f->flags &= ~FL_MARKED;
	f->win_bytes = 0;
	f->win_pkts = 0;
	f->win_ce = 0;
}

/* End of one window of data: the NewDCTCP-rx rule. */
static __always_inline void window_end(struct flow *f, struct rx_config *cfg)
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
	f->w = budget_cap(cfg, w, f->mss);
	f->win_bytes = 0;
	f->win_pkts = 0;
	f->win_ce = 0;
}

static __always_inline struct rx_config *get_config(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&p4i_config, &zero);
}

SEC("tc")
int rx_ingress(struct __sk_buff *skb)
{
	struct rx_config *cfg = get_config();
	struct flow_key key;
	struct pkt p = {};
	struct flow *f;
	__u64 now;

	if (!cfg || cfg->policy == RX_POLICY_OFF)
		return TC_ACT_UNSPEC_;
	if (parse(skb, &p))
		return TC_ACT_UNSPEC_;
	stat_inc(ST_RX_PKTS);
	key.raddr_be = p.saddr;
	key.laddr_be = p.daddr;
	key.rport_be = p.sport;
	key.lport_be = p.dport;

	if (p.flags & (TH_RST | TH_FIN)) {
		end_flow(&key);
		return TC_ACT_UNSPEC_;
	}
	now = bpf_ktime_get_ns();
	f = bpf_map_lookup_elem(&p4i_flows, &key);
	if (p.flags & TH_SYN) {
		/* The peer's SYN opens a new flow; its SYN-ACK answers ours. */
		if (!(p.flags & TH_ACK) || !f)
			f = new_flow(&key, now, cfg);
		if (!f)
			return TC_ACT_UNSPEC_;
		f->flags |= FL_PEER_SYN;
		if (p.o.has_ws) {
			f->flags |= FL_PEER_WS;
			f->peer_ws = p.o.ws > RX_MAX_WSCALE ? RX_MAX_WSCALE : p.o.ws;
		}
		if (p.o.has_mss)
			f->peer_mss = p.o.mss;
		if (p.o.has_ts)
			f->flags |= FL_PEER_TS;
		f->hi_seq = p.seq + 1;
		f->flags |= FL_SEQ_VALID;
		finish_handshake(f, cfg);
		return TC_ACT_UNSPEC_;
	}
	if (!f) {
		if (p.payload == 0)
			return TC_ACT_UNSPEC_;
		f = new_flow(&key, now, cfg); /* mid-stream: measured, never rewritten */
		if (!f)
			return TC_ACT_UNSPEC_;
	}
	if (now - f->last_ns > cfg->idle_ns) {
		/* Idle: restart the window like TCP restarts after idle. */
		f->w = (__u64)cfg->init_segs * f->mss;
		f->flags &= ~FL_MARKED;
		f->win_bytes = 0;
		f->win_pkts = 0;
		f->win_ce = 0;
		stat_inc(ST_IDLE_RESET);
	}
	f->last_ns = now;

	if (p.o.has_ts && f->ts_val != f->ts_echoed && p.o.tsecr == f->ts_val) {
		__u32 s = (now - f->ts_ns) / 1000;

		f->srtt_us = f->srtt_us ? (7 * (__u64)f->srtt_us + s) / 8 : s;
		if (!f->rtt_min_us || s < f->rtt_min_us)
			f->rtt_min_us = s;
		if (f->rtt_min_us > cfg->rtt_limit_us)
			f->flags |= FL_SLOW;
		else
			f->flags &= ~FL_SLOW;
		f->ts_echoed = f->ts_val;
	}

	if (p.payload) {
		/* A GRO/LRO aggregate counts as the segments it was made of (GRO
		 * never merges segments whose ECN bits differ). */
		__u32 end = p.seq + p.payload, nb = 0, segs = skb->gso_segs ? skb->gso_segs : 1;

		f->pkts += segs;
		f->bytes += p.payload;
		f->last_len = p.payload / segs;
		if (p.ecn == 3)
			f->ce += segs;
		else if (p.ecn)
			f->ect += segs;
		if (!(f->flags & FL_SEQ_VALID)) {
			f->hi_seq = p.seq;
			f->flags |= FL_SEQ_VALID;
		}
		if ((__s32)(end - f->hi_seq) > 0) {
			nb = end - f->hi_seq;
			f->hi_seq = end;
		} else {
			f->retrans++;
		}
		f->win_pkts += segs;
		if (p.ecn == 3)
			f->win_ce += segs;
		f->win_bytes += nb;
		if (cfg->policy == RX_POLICY_BUDGET && cfg->rotate && (f->flags & FL_COUNTED) &&
		    !(f->flags & FL_SLOW))
			rot_on_data(cfg, f, nb, segs, p.ecn == 3);
		if (f->win_bytes >= f->w)
			window_end(f, cfg);
		if (cfg->ackq_pkts) {
			struct ackq_flow *a = bpf_map_lookup_elem(&p4i_ackq_flows, &key);
			struct ackq_global *g = ackq_global();

			if (a && g)
				ackq_recount(g, a, f); /* data arrived: its share shrinks */
		}
	}
	return TC_ACT_UNSPEC_;
}

/* Set the window field of the ACK in skb from `from` to `to`, checksum fixed. */
static __always_inline void set_field(struct __sk_buff *skb, struct pkt *p, __u32 from, __u32 to)
{
	__be16 old_be = bpf_htons(from), new_be = bpf_htons(to);

	bpf_l4_csum_replace(skb, p->tcp_off + 16, old_be, new_be, 2);
	bpf_skb_store_bytes(skb, p->tcp_off + 14, &new_be, 2, 0);
}

/* Clear ECE in the ACK in skb, checksum fixed: the policy's window is the only
 * cut, so the sender must not also halve on the CE marks we saw (§3.7). */
static __always_inline void clear_ece(struct __sk_buff *skb, struct pkt *p)
{
	__u8 w[2]; /* data offset and flags: one 16-bit word of the checksum */
	__be16 old_be, new_be;

	if (bpf_skb_load_bytes(skb, p->tcp_off + 12, w, 2))
		return;
	__builtin_memcpy(&old_be, w, 2);
	w[1] &= ~TH_ECE;
	__builtin_memcpy(&new_be, w, 2);
	bpf_l4_csum_replace(skb, p->tcp_off + 16, old_be, new_be, 2);
	bpf_skb_store_bytes(skb, p->tcp_off + 12, w, 2, 0);
	p->flags = w[1];
	stat_inc(ST_ECE_CLEARED);
}

/* newdctcp-budget, the handshake's ACK of a flow we opened: a copy offering
 * the initial window w0 goes out first (the sender takes half the largest
 * window it was offered as the bound on its segment size,
 * tcp_bound_to_half_wnd: offered 1.1 MSS it would send 0.55-MSS segments),
 * then this ACK with a zero window (accepted at the same sequence number,
 * tcp_may_update_window; the sender, with nothing to send, does nothing), so
 * our first data segment, the request, opens the window at the share of that
 * moment — a smaller non-zero window at the same sequence number would be
 * ignored, and the flows opened while the share was still >= w0 would all
 * send w0 at once. Returns the field now in the ACK: 0, or w0 (scaled) when
 * the copy could not be sent. */
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

static __always_inline __u16 csum_fold16(__s64 c)
{
	__u64 x = (__u32)c;

	x = (x & 0xffff) + (x >> 16);
	x = (x & 0xffff) + (x >> 16);
	return (__u16)x;
}

/* Turn the pure ACK in skb (ROT_FRAME_LEN bytes) into flow bk's window update
 * offering `field`, send that copy, and put the ACK back as it was. The copy
 * is bk's last pure ACK as the sender saw it — its Ethernet and IP headers, our
 * next sequence number, its ack and timestamps — with the window changed: a
 * Linux sender takes it (same ack and sequence number, larger window:
 * tcp_may_update_window) and sends. The TCP checksum is computed whole; when
 * the stack left it to the device (CHECKSUM_PARTIAL: the field holds the
 * pseudo-header's sum, as in the ACK being sent), the copy's field is its
 * pseudo-header sum too. Returns 0 when the copy went out. */
static __always_inline int rot_forge(struct __sk_buff *skb, struct rot_flow *br,
				     struct flow_key *bk, __u32 ack, __u16 field)
{
	__u32 zero = 0;
	struct rot_scratch *sc = bpf_map_lookup_elem(&p4i_scratch, &zero);
	__u16 check_now;
	__s64 c;
	int partial;
	__u32 mark = skb->mark;
	long err;

	if (!sc)
		return -1;
	if (bpf_skb_load_bytes(skb, 0, sc->save, ROT_FRAME_LEN))
		return -1;
	/* Is the ACK being sent CHECKSUM_PARTIAL? Its field is then its own
	 * pseudo-header sum (a full checksum equal to that: 1 in 65535). */
	__builtin_memcpy(&sc->ph.saddr, &sc->save[ETH_HLEN + 12], 4);
	__builtin_memcpy(&sc->ph.daddr, &sc->save[ETH_HLEN + 16], 4);
	sc->ph.zero = 0;
	sc->ph.proto = IPPROTO_TCP_;
	sc->ph.len = bpf_htons(ROT_FRAME_LEN - ROT_HDR_LEN);
	c = bpf_csum_diff(0, 0, (__be32 *)&sc->ph, sizeof(sc->ph), 0);
	if (c < 0)
		return -1;
	__builtin_memcpy(&check_now, &sc->save[ROT_HDR_LEN + 16], 2);
	partial = check_now == csum_fold16(c);

	sc->ph.saddr = bk->laddr_be;
	sc->ph.daddr = bk->raddr_be;
	sc->tcp.source = bk->lport_be;
	sc->tcp.dest = bk->rport_be;
	sc->tcp.seq = bpf_htonl(br->seq_next);
	sc->tcp.ack_seq = bpf_htonl(ack);
	sc->tcp.doff_res = (ROT_FRAME_LEN - ROT_HDR_LEN) / 4 << 4;
	sc->tcp.flags = TH_ACK;
	sc->tcp.window = bpf_htons(field);
	sc->tcp.check = 0;
	sc->tcp.urg_ptr = 0;
	sc->tcp.opt[0] = 1;
	sc->tcp.opt[1] = 1;
	sc->tcp.opt[2] = 8;
	sc->tcp.opt[3] = 10;
	sc->tcp.tsval = bpf_htonl(br->tsval);
	sc->tcp.tsecr = bpf_htonl(br->tsecr);
	c = bpf_csum_diff(0, 0, (__be32 *)&sc->ph, sizeof(sc->ph), 0);
	if (c < 0)
		return -1;
	if (partial) {
		sc->tcp.check = csum_fold16(c);
	} else {
		c = bpf_csum_diff(0, 0, (__be32 *)&sc->tcp, sizeof(sc->tcp), (__u32)c);
		if (c < 0)
			return -1;
		sc->tcp.check = (__u16)~csum_fold16(c);
	}
	if (bpf_skb_store_bytes(skb, 0, br->hdr, ROT_HDR_LEN, 0) ||
	    bpf_skb_store_bytes(skb, ROT_HDR_LEN, &sc->tcp, sizeof(sc->tcp), 0))
		err = -1;
	else {
		skb->mark = RX_CLONE_MARK;
		err = bpf_clone_redirect(skb, skb->ifindex, 0);
		skb->mark = mark;
	}
	if (bpf_skb_store_bytes(skb, 0, sc->save, ROT_FRAME_LEN, 0))
		return -1;
	return err ? -1 : 0;
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

/* newdctcp-budget with rotation (docs/algorithms.md §3.6): at most H flows
 * (rot_on_data) hold an open window; the
 * others wait in p4i_rotq with a zero window. A holder's turn ends with the
 * ACK that leaves less than a segment of the window it was offered (or acknowledges a short
 * segment: the end of what it had to send); while flows wait, that ACK closes
 * its window and the slot passes to the head of the queue. Sets *zero when
 * this ACK must close the window; returns the W to enforce otherwise. */
/* What a forged window update for this flow needs, from each of its ACKs (the
 * handshake's included: a flow may wait from its first request on). */
static __always_inline struct rot_flow *rot_note(struct __sk_buff *skb, struct flow_key *key,
						 struct pkt *p)
{
	struct rot_flow *r = bpf_map_lookup_elem(&p4i_rot_flows, key);

	if (!r) {
		struct rot_flow nr = {};

		bpf_map_update_elem(&p4i_rot_flows, key, &nr, BPF_NOEXIST);
		r = bpf_map_lookup_elem(&p4i_rot_flows, key);
		if (!r)
			return 0;
	}
	r->seq_next = p->seq + p->payload;
	r->ack = p->ack;
	if (p->o.has_ts) {
		r->tsval = p->o.tsval;
		r->tsecr = p->o.tsecr;
	}
	if (skb->len == ROT_FRAME_LEN && p->tcp_off == ROT_HDR_LEN && !p->payload && p->o.has_ts) {
		__u32 opt = 0;

		if (!bpf_skb_load_bytes(skb, ROT_HDR_LEN + 20, &opt, 4) &&
		    opt == bpf_htonl(0x0101080a) &&
		    !bpf_skb_load_bytes(skb, 0, r->hdr, ROT_HDR_LEN))
			r->has_hdr = 1;
	}
	return r;
}

static __always_inline __u32 rotate_ack(struct __sk_buff *skb, struct rx_config *cfg,
					struct flow *f, struct rot_flow *r, struct flow_key *key,
					struct pkt *p, __u32 w, int *zero)
{
	struct rot_global *g = rot_global();
	int to_wait = 0;
	__s64 h;

	if (!g)
		return w;
	g->mss = f->mss;
	h = rot_slots(g, cfg, f->mss);
	if (r->state == ROT_IDLE) {
		if (g->open < h && g->waiting <= 0) {
			r->state = ROT_HOLD;
			r->since = bpf_ktime_get_ns();
			__sync_fetch_and_add(&g->open, 1);
		} else {
			r->state = ROT_WAIT;
			to_wait = 1;
			*zero = 1;
		}
	} else if (r->state == ROT_HOLD) {
		int runt = f->last_len && f->last_len < f->mss && p->ack == f->hi_seq;
		/* less than a segment left to send: at window scale s the window
		 * is a multiple of 2^s, so one segment is offered as a bit more */
		int end = runt || (f->re_valid && (__s32)(f->last_re - p->ack) < (__s32)f->mss);

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

			*zero = 1;
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
		*zero = 1;
	}
	if (g->waiting > 0 && g->open < h)
		rot_grant(skb, g);
	if (to_wait) {
		bpf_map_push_elem(&p4i_rotq, key, BPF_EXIST);
		__sync_fetch_and_add(&g->waiting, 1);
	}
	return w;
}

/* RCC's ACK queue (config.ackq_pkts = Q; agent/policies/rcc.py AckQueue is
 * the reference, docs/algorithms.md "RCC"). A tc program cannot hold a
 * packet, so it holds permission instead: per flow, the right edge last
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
#define ACKQ_BURST 4

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

SEC("tc")
int rx_egress(struct __sk_buff *skb)
{
	struct rx_config *cfg = get_config();
	struct flow_key key;
	struct pkt p = {};
	struct flow *f;
	__u32 field, newf, ws;
	int aq = 0;
	__u64 now;

	if (!cfg || cfg->policy == RX_POLICY_OFF || skb->mark == RX_CLONE_MARK)
		return TC_ACT_UNSPEC_;
	if (parse(skb, &p))
		return TC_ACT_UNSPEC_;
	key.raddr_be = p.daddr;
	key.laddr_be = p.saddr;
	key.rport_be = p.dport;
	key.lport_be = p.sport;

	if (p.flags & (TH_RST | TH_FIN)) {
		end_flow(&key);
		if (cfg->policy == RX_POLICY_BUDGET && cfg->rotate)
			rot_fill(skb, cfg); /* the slot it held, if any */
		return TC_ACT_UNSPEC_;
	}
	now = bpf_ktime_get_ns();
	f = bpf_map_lookup_elem(&p4i_flows, &key);
	if (p.flags & TH_SYN) {
		/* Our SYN opens a flow (we connect, as the incast client does);
		 * our SYN-ACK answers the peer's. SYN windows are never scaled
		 * and never rewritten. */
		if (!(p.flags & TH_ACK) || !f)
			f = new_flow(&key, now, cfg);
		if (!f)
			return TC_ACT_UNSPEC_;
		f->flags |= FL_LOCAL_SYN;
		if (p.o.has_ws) {
			f->flags |= FL_LOCAL_WS;
			f->local_ws = p.o.ws > RX_MAX_WSCALE ? RX_MAX_WSCALE : p.o.ws;
		}
		if (p.o.has_mss)
			f->local_mss = p.o.mss;
		if (p.o.has_ts)
			f->flags |= FL_LOCAL_TS;
		finish_handshake(f, cfg);
		return TC_ACT_UNSPEC_;
	}
	if (!f || !(p.flags & TH_ACK)) {
		if (cfg->policy == RX_POLICY_BUDGET && cfg->rotate)
			rot_fill(skb, cfg); /* e.g. our ACK of a peer's FIN */
		return TC_ACT_UNSPEC_;
	}
	stat_inc(ST_TX_ACKS);
	f->acks++;
	if (p.o.has_ts && p.o.tsval != f->ts_val) {
		f->ts_ns = now; /* before ts_val: ingress may read them meanwhile */
		asm volatile("" ::: "memory");
		f->ts_val = p.o.tsval;
		/* Awaiting its echo while ts_val != ts_echoed (ingress writes that). */
	}

	ws = f->wscale & 15;
	field = p.window;
	newf = field;
	if ((f->flags & FL_HS) != FL_HS) {
		stat_inc(ST_NO_HS);
	} else if (cfg->policy >= RX_POLICY_NEWDCTCP && !(f->flags & FL_SLOW)) {
		__u32 w = 0;
		int zero = 0;

		if (cfg->clear_ece && (p.flags & TH_ECE))
			clear_ece(skb, &p); /* before any copy of this ACK is sent */
		if (cfg->policy == RX_POLICY_NEWDCTCP) {
			w = f->w;
		} else if (cfg->policy == RX_POLICY_BUDGET) {
			/* Rotation needs timestamps: a forged update repeats them. */
			int rot = cfg->rotate && (f->flags & FL_PEER_TS) && (f->flags & FL_LOCAL_TS);
			struct rot_flow *r = rot ? rot_note(skb, &key, &p) : 0;

			/* The share may have shrunk since W was set: a flow arrived. */
			w = budget_cap(cfg, f->w, f->mss);
			if (!f->re_valid && !f->pkts && !p.payload) {
				/* The handshake's ACK of a flow we opened (see the header). */
				field = handshake_reopen(skb, &p, f->w, ws);
				newf = field;
				w = 0;
			} else if (r) {
				w = rotate_ack(skb, cfg, f, r, &key, &p, w, &zero);
			}
		} else {
			__u32 *u = bpf_map_lookup_elem(&p4i_wset, &key);

			/* Until userspace has written a W: rcc's share of Q as
			 * its assignment gives it (RCC assigns at a flow's
			 * arrival), else the initial window. */
			w = u ? *u
			      : cfg->share_pkts ? q_share(cfg->share_pkts, cfg->init_segs, f->mss)
						: cfg->init_segs * f->mss;
			/* rcc's ACK queue; a release is forged with timestamps */
			aq = cfg->ackq_pkts && (f->flags & FL_PEER_TS) && (f->flags & FL_LOCAL_TS) &&
			     rot_note(skb, &key, &p);
		}
		if (w || zero) {
			/* Rounded up: never offer less than W (rounding 2 MSS down to
			 * 1.8 at a large scale leaves one segment waiting for a
			 * delayed ACK). */
			__u32 want = zero ? 0 : (w + (1U << ws) - 1) >> ws;
			if (f->re_valid) {
				__u32 d = f->last_re - p.ack;

				if ((__s32)d > 0) {
					__u32 minf = (d + (1U << ws) - 1) >> ws;

					if (want < minf)
						want = minf;
				}
			}
			if (want < field)
				newf = want;
		}
		if (aq)
			newf = ackq_ack(skb, cfg, f, &key, &p, newf, ws);
	}
	if (newf != field) {
		set_field(skb, &p, field, newf);
		f->rewrites++;
		stat_inc(ST_REWRITES);
	}
	f->last_ack = p.ack;
	f->last_field = newf;
	f->last_re = p.ack + (newf << ws);
	f->re_valid = 1;
	return TC_ACT_UNSPEC_;
}

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

/* The rescue's state changes (agent/rotation.py), run by BPF_PROG_TEST_RUN on
 * ROT_OP_OFF zero bytes and a struct rot_op: SCAN takes back stale holders'
 * slots and counts, GRANT gives a waiting flow a slot (its update is sent
 * after), COUNT counts, ADJUST adds to the counters. Made here by
 * compare-and-swap: a rescue that read a holder as idle while its segment was
 * being acknowledged, or that granted a flow while its ACK was on its way,
 * would otherwise overwrite the data path's change and leave a flow with a
 * closed window that no grant reaches (it then waits for its sender's
 * zero-window probe, one min RTO). GRANT returns 1 when the flow was waiting.
 * The counts are repaired by adding to them, never by writing them: a count
 * written from a table that changed while it was read would undo the data
 * path's concurrent adds. */
SEC("tc")
int rx_rescue(struct __sk_buff *skb)
{
	struct rot_global *g = rot_global();
	struct rot_flow *r;
	struct rot_op op;

	__u32 code;

	if (bpf_skb_load_bytes(skb, ROT_OP_OFF + 12, &code, 4))
		return -1;
	if (code == ACKQ_OP_RELEASE || code == ACKQ_OP_END)
		return ackq_rescue(skb, code);
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

char LICENSE[] SEC("license") = "GPL";
