// SPDX-License-Identifier: GPL-2.0
/*
 * p4i_dctcp: DCTCP as a BPF struct_ops congestion control, for kernels
 * without the dctcp module. Chosen per socket with TCP_CONGESTION "p4i_dctcp".
 *
 * Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; RFC 8257;
 * docs/algorithms.md §2.1. The rule is Linux's tcp_dctcp.c (>= 5.1):
 *
 *   per observation window (it ends when SND.UNA reaches the SND.NXT recorded
 *   when it began):  F = segments delivered with ECE / segments delivered,
 *                    alpha <- (1 - g) alpha + g F,   g = 1/16
 *   first ECE of a window (the kernel enters CWR):  ssthresh = cwnd (1 - alpha/2)
 *   loss (entering Recovery, or a timeout):          ssthresh = cwnd / 2
 *   both at least 2 segments; otherwise Reno (slow start, + 1 MSS per RTT).
 *   A loss inside the window an ECE already cut is the same episode: its one
 *   cut is the deeper of the two (p4i_cc.h halve_on_loss), where Linux would
 *   halve the cwnd the first cut left.
 *
 * alpha is kept scaled by 1024 and starts at 1 (the first marked window
 * halves). As a receiver it echoes CE exactly (p4i_cc.h ce_echo_update).
 */
#include "p4i_cc.h"

/* The name it registers under (TCP_CONGESTION) and its .struct_ops map's:
 * tests/senders/bpf builds a copy under a name of its own. */
#ifndef P4I_CC_NAME
#define P4I_CC_NAME p4i_dctcp
#endif

char LICENSE[] SEC("license") = "GPL";

#define ALPHA_ONE 1024U
#define SHIFT_G 4

struct p4i_dctcp {
	__u32 next_seq;         /* end of the current observation window */
	__u32 old_delivered;    /* tp->delivered when it began */
	__u32 old_delivered_ce; /* tp->delivered_ce when it began */
	__u32 alpha;            /* x1024 */
	__u32 loss_cwnd;
	__u32 ce_state;         /* receiver: CE state of the last data segment */
	__u32 prior_rcv_nxt;
	__u32 ready;            /* P4I_CA_READY once initialized */
};

static __always_inline void new_window(struct tcp_sock *tp, struct p4i_dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

static __always_inline void reset(struct sock *sk, struct p4i_dctcp *ca)
{
	struct tcp_sock *tp = tcp_sk_(sk);

	ca->alpha = ALPHA_ONE;
	ca->loss_cwnd = 0;
	ca->ce_state = 0;
	ca->prior_rcv_nxt = tp->rcv_nxt;
	new_window(tp, ca);
	ca->ready = P4I_CA_READY;
}

/* This socket's state, initialized if init has not run (P4I_CA_READY). */
static __always_inline struct p4i_dctcp *state(struct sock *sk)
{
	struct p4i_dctcp *ca = ca_priv(sk);

	if (ca->ready != P4I_CA_READY)
		reset(sk, ca);
	return ca;
}

SEC("struct_ops")
void BPF_PROG(p4i_dctcp_init, struct sock *sk)
{
	reset(sk, ca_priv(sk));
}

SEC("struct_ops")
void BPF_PROG(p4i_dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_sk_(sk);
	struct p4i_dctcp *ca = state(sk);

	if (!seq_before(tp->snd_una, ca->next_seq)) {
		__u32 delivered = tp->delivered - ca->old_delivered;
		__u32 ce = tp->delivered_ce - ca->old_delivered_ce;
		__u32 alpha = ca->alpha;
		__u32 decay = alpha >> SHIFT_G;

		alpha -= decay ? decay : alpha; /* min_not_zero(alpha, alpha >> g) */
		if (ce) {
			alpha += (ce << (10 - SHIFT_G)) / (delivered ? delivered : 1);
			if (alpha > ALPHA_ONE)
				alpha = ALPHA_ONE;
		}
		ca->alpha = alpha;
		new_window(tp, ca);
	}
}

/* The kernel asks on entering CWR (an ECE), Recovery and Loss; the last two
 * are overridden with the loss response below, as tcp_dctcp.c does. */
SEC("struct_ops")
__u32 BPF_PROG(p4i_dctcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk_(sk);
	struct p4i_dctcp *ca = state(sk);
	__u32 cwnd = tp->snd_cwnd;

	ca->loss_cwnd = cwnd;
	return max_u32(cwnd - (__u32)(((__u64)cwnd * ca->alpha) >> 11), MIN_CWND);
}

SEC("struct_ops")
void BPF_PROG(p4i_dctcp_set_state, struct sock *sk, __u8 new_state)
{
	struct p4i_dctcp *ca = state(sk);

	if (new_state == TCP_CA_Recovery || new_state == TCP_CA_Loss)
		halve_on_loss(sk, &ca->loss_cwnd);
}

SEC("struct_ops")
void BPF_PROG(p4i_dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(p4i_dctcp_undo_cwnd, struct sock *sk)
{
	struct p4i_dctcp *ca = state(sk);

	return max_u32(tcp_sk_(sk)->snd_cwnd, ca->loss_cwnd);
}

SEC("struct_ops")
void BPF_PROG(p4i_dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct p4i_dctcp *ca = state(sk);

	if (ev == CA_EVENT_ECN_IS_CE || ev == CA_EVENT_ECN_NO_CE)
		ce_echo_update(sk, &ca->ce_state, &ca->prior_rcv_nxt, ev == CA_EVENT_ECN_IS_CE);
	else if (ev == CA_EVENT_LOSS)
		halve_on_loss(sk, &ca->loss_cwnd);
}

SEC(".struct_ops")
struct tcp_congestion_ops P4I_CC_NAME = {
	.init = (void *)p4i_dctcp_init,
	.in_ack_event = (void *)p4i_dctcp_in_ack_event,
	.ssthresh = (void *)p4i_dctcp_ssthresh,
	.set_state = (void *)p4i_dctcp_set_state,
	.cong_avoid = (void *)p4i_dctcp_cong_avoid,
	.undo_cwnd = (void *)p4i_dctcp_undo_cwnd,
	.cwnd_event = (void *)p4i_dctcp_cwnd_event,
	.flags = TCP_CONG_NEEDS_ECN_,
	.name = P4I_STR(P4I_CC_NAME),
};
