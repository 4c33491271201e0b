// SPDX-License-Identifier: GPL-2.0
/*
 * p4i_newdctcp: the NewDCTCP sender as a BPF struct_ops congestion control,
 * chosen per socket with TCP_CONGESTION "p4i_newdctcp".
 *
 * Sreekumari, Jung, Lee, "An early congestion feedback and rate adjustment
 * schemes for many-to-one communication in cloud-based data center networks",
 * Springer 2015; docs/algorithms.md §2:
 *
 *   unmarked ACK: NewReno (slow start, then + 1 MSS per RTT)
 *   marked ACK, once per window (the kernel enters CWR once per window):
 *       cwnd <- max(cwnd / 2, A)   segments,
 *       A = packets sent in the last window - marked ACKs in it
 *   cwnd of 1 segment: RFC 3168, no further reduction this RTT.
 *
 * "The last window" is the flight that was outstanding when the current window
 * of data began (snd_nxt - snd_una at that moment, in segments); marked ACKs
 * are the ACKs with ECE counted since then, this one included (in_ack_event
 * runs before the kernel asks for ssthresh). The result is at least 2
 * segments, the floor every Linux congestion control keeps, except that a
 * cwnd of 1 stays 1. As a receiver it echoes CE exactly, like DCTCP.
 */
#include "p4i_cc.h"

char LICENSE[] SEC("license") = "GPL";

struct p4i_newdctcp {
	__u32 next_seq;      /* end of the current window of data */
	__u32 win_pkts;      /* packets outstanding when this window began */
	__u32 marked_acks;   /* ACKs with ECE in this window */
	__u32 loss_cwnd;
	__u32 ce_state;
	__u32 prior_rcv_nxt;
};

static __always_inline void new_window(struct tcp_sock *tp, struct p4i_newdctcp *ca)
{
	__u32 mss = tp->mss_cache ? tp->mss_cache : 536;

	ca->win_pkts = (tp->snd_nxt - tp->snd_una + mss - 1) / mss;
	if (ca->win_pkts < tp->snd_cwnd)
		ca->win_pkts = tp->snd_cwnd; /* a window is at least cwnd packets */
	ca->next_seq = tp->snd_nxt;
	ca->marked_acks = 0;
}

SEC("struct_ops")
void BPF_PROG(p4i_newdctcp_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk_(sk);
	struct p4i_newdctcp *ca = ca_priv(sk);

	ca->loss_cwnd = 0;
	ca->ce_state = 0;
	ca->prior_rcv_nxt = tp->rcv_nxt;
	new_window(tp, ca);
}

SEC("struct_ops")
void BPF_PROG(p4i_newdctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_sk_(sk);
	struct p4i_newdctcp *ca = ca_priv(sk);

	if (!seq_before(tp->snd_una, ca->next_seq))
		new_window(tp, ca);
	if (flags & CA_ACK_ECE)
		ca->marked_acks++;
}

SEC("struct_ops")
__u32 BPF_PROG(p4i_newdctcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk_(sk);
	struct p4i_newdctcp *ca = ca_priv(sk);
	__u32 cwnd = tp->snd_cwnd;
	__u32 half = cwnd >> 1;
	__u32 a = ca->win_pkts > ca->marked_acks ? ca->win_pkts - ca->marked_acks : 0;
	__u32 w = a > half ? a : half;

	ca->loss_cwnd = cwnd;
	if (cwnd <= 1)
		return 1;
	if (w > cwnd)
		w = cwnd; /* a reduction never grows the window */
	return w > 2 ? w : 2;
}

SEC("struct_ops")
void BPF_PROG(p4i_newdctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(p4i_newdctcp_undo_cwnd, struct sock *sk)
{
	struct p4i_newdctcp *ca = ca_priv(sk);
	__u32 cwnd = tcp_sk_(sk)->snd_cwnd;

	return cwnd > ca->loss_cwnd ? cwnd : ca->loss_cwnd;
}

SEC("struct_ops")
void BPF_PROG(p4i_newdctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct p4i_newdctcp *ca = ca_priv(sk);

	if (ev == CA_EVENT_ECN_IS_CE || ev == CA_EVENT_ECN_NO_CE)
		ce_echo_update(sk, &ca->ce_state, &ca->prior_rcv_nxt, ev == CA_EVENT_ECN_IS_CE);
}

SEC(".struct_ops")
struct tcp_congestion_ops p4i_newdctcp = {
	.init = (void *)p4i_newdctcp_init,
	.in_ack_event = (void *)p4i_newdctcp_in_ack_event,
	.ssthresh = (void *)p4i_newdctcp_ssthresh,
	.cong_avoid = (void *)p4i_newdctcp_cong_avoid,
	.undo_cwnd = (void *)p4i_newdctcp_undo_cwnd,
	.cwnd_event = (void *)p4i_newdctcp_cwnd_event,
	.flags = TCP_CONG_NEEDS_ECN_,
	.name = "p4i_newdctcp",
};
