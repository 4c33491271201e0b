// SPDX-License-Identifier: GPL-2.0
/*
 * p4i_newdctcp: the NewDCTCP sender as a BPF struct_ops congestion control,
 * chosen per socket with TCP_CONGESTION "p4i_newdctcp".
 *
 * Sreekumari, Jung, Lee, "An early congestion feedback and rate adjustment
 * schemes for many-to-one communication in cloud-based data center networks",
 * Springer 2015, §4.2 eq. (3)-(4); docs/algorithms.md §2.2:
 *
 *   unmarked: NewReno (slow start, then + 1 MSS per RTT; a loss halves)
 *   a marked window of data: cwnd <- max(cwnd / 2, A) segments,
 *       A = the segments of that window acknowledged without ECE
 *
 * The window is the data outstanding when its first ECE arrives (SND.NXT then:
 * the kernel's CWR point, high_seq). The kernel enters CWR there and asks for
 * ssthresh; we answer cwnd (no cut yet: A is not known) and the window does not
 * grow. When SND.UNA reaches the end of that window both counts are known and
 * ssthresh is set to max(cwnd0/2, A), within [2, cwnd0]; the next ACK, past
 * high_seq, ends CWR and the kernel sets cwnd = ssthresh. An ECE after that
 * starts the next window's decision: one cut per marked window. A loss
 * (entering Recovery, a timeout) halves as NewReno and ends the ECN decision:
 * one cut per congestion episode. As a receiver it echoes CE exactly.
 */
#include "p4i_cc.h"

/* The name it registers under (TCP_CONGESTION) and its .struct_ops map's:
 * tests/senders/bpf builds a copy under a name of its own. */
#ifndef P4I_CC_NAME
#define P4I_CC_NAME p4i_newdctcp
#endif

char LICENSE[] SEC("license") = "GPL";

struct p4i_newdctcp {
	/* after the last ACK, and before the one being processed (prior_*) */
	__u32 last_una, prior_una;
	__u32 last_ce, prior_ce;
	/* the marked window whose decision is pending (open != 0) */
	__u32 open;
	__u32 high;   /* SND.NXT at its first ECE */
	__u32 pkts;   /* n: segments outstanding then */
	__u32 ce0;    /* tp->delivered_ce before its first ECE ACK */
	__u32 cwnd0;  /* cwnd at its first ECE */
	__u32 loss_cwnd;
	__u32 ce_state; /* receiver: CE state of the last data segment */
	__u32 prior_rcv_nxt;
	__u32 ready;    /* P4I_CA_READY once initialized */
};

static __always_inline void reset(struct sock *sk, struct p4i_newdctcp *ca)
{
	struct tcp_sock *tp = tcp_sk_(sk);

	ca->last_una = ca->prior_una = tp->snd_una;
	ca->last_ce = ca->prior_ce = tp->delivered_ce;
	ca->open = 0;
	ca->loss_cwnd = 0;
	ca->ce_state = 0;
	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->ready = P4I_CA_READY;
}

/* This socket's state, initialized if init has not run (P4I_CA_READY). */
static __always_inline struct p4i_newdctcp *state(struct sock *sk)
{
	struct p4i_newdctcp *ca = ca_priv(sk);

	if (ca->ready != P4I_CA_READY)
		reset(sk, ca);
	return ca;
}

SEC("struct_ops")
void BPF_PROG(p4i_newdctcp_init, struct sock *sk)
{
	reset(sk, ca_priv(sk));
}

SEC("struct_ops")
void BPF_PROG(p4i_newdctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_sk_(sk);
	struct p4i_newdctcp *ca = state(sk);

	ca->prior_una = ca->last_una;
	ca->prior_ce = ca->last_ce;
	ca->last_una = tp->snd_una;
	ca->last_ce = tp->delivered_ce;
	if (ca->open && !seq_before(tp->snd_una, ca->high)) {
		__u32 m = tp->delivered_ce - ca->ce0;
		__u32 a = ca->pkts > m ? ca->pkts - m : 0;
		__u32 w = max_u32(max_u32(ca->cwnd0 >> 1, a), MIN_CWND);

		ca->open = 0;
		if (ca_state(sk) == TCP_CA_CWR)
			tp->snd_ssthresh = w < ca->cwnd0 ? w : ca->cwnd0;
	}
}

/* The kernel asks on entering CWR (an ECE), Recovery and Loss; for the last
 * two set_state / cwnd_event replace the answer with the loss response. */
SEC("struct_ops")
__u32 BPF_PROG(p4i_newdctcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk_(sk);
	struct p4i_newdctcp *ca = state(sk);
	__u32 mss = tp->mss_cache ? tp->mss_cache : 536;

	ca->open = 1;
	ca->high = tp->snd_nxt;
	ca->pkts = (tp->snd_nxt - ca->prior_una + mss - 1) / mss;
	ca->ce0 = ca->prior_ce;
	ca->cwnd0 = tp->snd_cwnd;
	ca->loss_cwnd = tp->snd_cwnd;
	return max_u32(tp->snd_cwnd, MIN_CWND);
}

static __always_inline void on_loss(struct sock *sk, struct p4i_newdctcp *ca)
{
	ca->open = 0;
	halve_on_loss(sk, &ca->loss_cwnd);
}

SEC("struct_ops")
void BPF_PROG(p4i_newdctcp_set_state, struct sock *sk, __u8 new_state)
{
	struct p4i_newdctcp *ca = state(sk);

	if (new_state == TCP_CA_Recovery || new_state == TCP_CA_Loss)
		on_loss(sk, ca);
}

SEC("struct_ops")
void BPF_PROG(p4i_newdctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(p4i_newdctcp_undo_cwnd, struct sock *sk)
{
	struct p4i_newdctcp *ca = state(sk);

	return max_u32(tcp_sk_(sk)->snd_cwnd, ca->loss_cwnd);
}

SEC("struct_ops")
void BPF_PROG(p4i_newdctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct p4i_newdctcp *ca = state(sk);

	if (ev == CA_EVENT_ECN_IS_CE || ev == CA_EVENT_ECN_NO_CE)
		ce_echo_update(sk, &ca->ce_state, &ca->prior_rcv_nxt, ev == CA_EVENT_ECN_IS_CE);
	else if (ev == CA_EVENT_LOSS)
		on_loss(sk, ca);
}

SEC(".struct_ops")
struct tcp_congestion_ops P4I_CC_NAME = {
	.init = (void *)p4i_newdctcp_init,
	.in_ack_event = (void *)p4i_newdctcp_in_ack_event,
	.ssthresh = (void *)p4i_newdctcp_ssthresh,
	.set_state = (void *)p4i_newdctcp_set_state,
	.cong_avoid = (void *)p4i_newdctcp_cong_avoid,
	.undo_cwnd = (void *)p4i_newdctcp_undo_cwnd,
	.cwnd_event = (void *)p4i_newdctcp_cwnd_event,
	.flags = TCP_CONG_NEEDS_ECN_,
	.name = P4I_STR(P4I_CC_NAME),
};
