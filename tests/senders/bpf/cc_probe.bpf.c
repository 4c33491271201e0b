// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only: the probe of the sender conformance suite (tests/senders),
 * independent of the congestion control under test. Two BTF tracepoints of
 * the kernel's TCP stack, for the sockets whose remote port is p4p_cfg.dport
 * (the senders):
 *   tcp_probe          (tcp_rcv_established, before the segment is processed):
 *                      the ACK's number and flags, and the sender's state
 *                      before it: SND.UNA, SND.NXT, cwnd, ssthresh;
 *   tcp_cong_state_set (tcp_set_ca_state, before the new state is stored):
 *                      the new congestion state with the same fields, and
 *                      prior_cwnd (the cwnd the kernel's reduction began with:
 *                      on a timeout cwnd is already 1 here).
 * Records go into p4p_log in order (p4p_cfg.count is the next free slot).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define MAX_RECS 65536

struct p4p_cfg {
	__u32 dport; /* host order */
	__u32 count;
};

struct p4p_rec {
	__u64 t_ns;
	__u32 kind; /* 0 ACK, 1 congestion state */
	__u32 state;
	__u32 ack_seq;
	__u32 flags; /* TCP flags byte of the ACK */
	__u32 snd_una;
	__u32 snd_nxt;
	__u32 cwnd;
	__u32 ssthresh;
	__u32 mss;
	__u32 snd_wnd;
	__u32 prior_cwnd;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct p4p_cfg);
} p4p_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_RECS);
	__type(key, __u32);
	__type(value, struct p4p_rec);
} p4p_log SEC(".maps");

static __always_inline struct p4p_rec *slot(struct sock *sk)
{
	__u32 zero = 0, i;
	struct p4p_cfg *c = bpf_map_lookup_elem(&p4p_cfg, &zero);

	if (!c || !c->dport || bpf_ntohs(sk->__sk_common.skc_dport) != c->dport)
		return 0;
	i = __sync_fetch_and_add(&c->count, 1);
	return bpf_map_lookup_elem(&p4p_log, &i);
}

static __always_inline void fill(struct p4p_rec *r, struct sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	if (!tp)
		return;
	r->t_ns = bpf_ktime_get_ns();
	r->snd_una = tp->snd_una;
	r->snd_nxt = tp->snd_nxt;
	r->cwnd = tp->snd_cwnd;
	r->ssthresh = tp->snd_ssthresh;
	r->mss = tp->mss_cache;
	r->snd_wnd = tp->snd_wnd;
	r->prior_cwnd = tp->prior_cwnd;
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(p4p_ack, struct sock *sk, struct sk_buff *skb)
{
	struct p4p_rec *r = slot(sk);
	struct tcphdr th;

	if (!r)
		return 0;
	fill(r, sk);
	r->kind = 0;
	r->state = BPF_CORE_READ_BITFIELD_PROBED((struct inet_connection_sock *)sk, icsk_ca_state);
	if (bpf_probe_read_kernel(&th, sizeof(th), skb->data) == 0) {
		r->ack_seq = bpf_ntohl(th.ack_seq);
		r->flags = ((__u8 *)&th)[13];
	}
	return 0;
}

SEC("tp_btf/tcp_cong_state_set")
int BPF_PROG(p4p_state, struct sock *sk, __u8 ca_state)
{
	struct p4p_rec *r = slot(sk);

	if (!r)
		return 0;
	fill(r, sk);
	r->kind = 1;
	r->state = ca_state;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
