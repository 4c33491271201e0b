// SPDX-License-Identifier: GPL-2.0
/*
 * p4i_dctcp: DCTCP as a BPF struct_ops congestion control, for kernels
 * without the dctcp module. Chosen per socket with TCP_CONGESTION "p4i_dctcp".
 *
 * Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; docs/algorithms.md §2:
 *
 *   per window of data (one cwnd of bytes, snd_una passing next_seq):
 *       F = bytes acknowledged with ECE / bytes acknowledged
 *       alpha <- (1 - g) alpha + g F,   g = 1/16
 *   on a marked window (the kernel enters CWR once per window on ECE):
 *       cwnd <- cwnd (1 - alpha / 2),   at least 2 segments
 *   otherwise: Reno (slow start, then + 1 MSS per RTT)
 *
 * alpha is kept scaled by 1024 and starts at 1 (the first mark halves, as
 * tcp_dctcp.c does). As a receiver it echoes CE exactly: an immediate ACK
 * whenever the CE state of arriving data changes. Written from the algorithm;
 * the struct_ops plumbing follows the BPF selftests' conventions.
 */
#include "p4i_cc.h"

char LICENSE[] SEC("license") = "GPL";

#define ALPHA_ONE 1024U
#define SHIFT_G 4

struct p4i_dctcp {
	__u32 next_seq;      /* end of the current window of data */
	__u32 prior_snd_una;
	__u32 acked_total;   /* bytes acked this window */
	__u32 acked_ece;     /* of which with ECE */
	__u32 alpha;         /* x1024 */
	__u32 loss_cwnd;
	__u32 ce_state;      /* receiver: last CE state */
	__u32 prior_rcv_nxt;
};

static __always_inline void new_window(struct tcp_sock *tp, struct p4i_dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->acked_total = 0;
	ca->acked_ece = 0;
}

SEC("struct_ops")
void BPF_PROG(p4i_dctcp_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk_(sk);
	struct p4i_dctcp *ca = ca_priv(sk);

	ca->prior_snd_una = tp->snd_una;
	ca->alpha = ALPHA_ONE;
	ca->loss_cwnd = 0;
	ca->ce_state = 0;
	ca->prior_rcv_nxt = tp->rcv_nxt;
	new_window(tp, ca);
}

SEC("struct_ops")
void BPF_PROG(p4i_dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_sk_(sk);
	struct p4i_dctcp *ca = ca_priv(sk);
	__u32 acked = tp->snd_una - ca->prior_snd_una;

	/* A duplicate ACK (no window update) stands for one segment. */
	if (acked == 0 && !(flags & CA_ACK_WIN_UPDATE))
		acked = tp->mss_cache;
	if (acked) {
		ca->acked_total += acked;
		ca->prior_snd_una = tp->snd_una;
		if (flags & CA_ACK_ECE)
			ca->acked_ece += acked;
	}
	if (!seq_before(tp->snd_una, ca->next_seq)) {
		__u32 alpha = ca->alpha - (ca->alpha >> SHIFT_G);

		if (ca->acked_ece) {
			__u64 f = ((__u64)ca->acked_ece << (10 - SHIFT_G)) /
				  (ca->acked_total ? ca->acked_total : 1);

			alpha += f;
			if (alpha > ALPHA_ONE)
				alpha = ALPHA_ONE;
		}
		ca->alpha = alpha;
		new_window(tp, ca);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(p4i_dctcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk_(sk);
	struct p4i_dctcp *ca = ca_priv(sk);
	__u32 cwnd = tp->snd_cwnd;
	__u32 cut = (__u32)(((__u64)cwnd * ca->alpha) >> 11); /* cwnd alpha / 2 */

	ca->loss_cwnd = cwnd;
	return cwnd - cut > 2 ? cwnd - cut : 2;
}

SEC("struct_ops")
void BPF_PROG(p4i_dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(p4i_dctcp_undo_cwnd, struct sock *sk)
{
	struct p4i_dctcp *ca = ca_priv(sk);
	__u32 cwnd = tcp_sk_(sk)->snd_cwnd;

	return cwnd > ca->loss_cwnd ? cwnd : ca->loss_cwnd;
}

SEC("struct_ops")
void BPF_PROG(p4i_dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct p4i_dctcp *ca = ca_priv(sk);

	if (ev == CA_EVENT_ECN_IS_CE || ev == CA_EVENT_ECN_NO_CE)
		ce_echo_update(sk, &ca->ce_state, &ca->prior_rcv_nxt, ev == CA_EVENT_ECN_IS_CE);
}

SEC(".struct_ops")
struct tcp_congestion_ops p4i_dctcp = {
	.init = (void *)p4i_dctcp_init,
	.in_ack_event = (void *)p4i_dctcp_in_ack_event,
	.ssthresh = (void *)p4i_dctcp_ssthresh,
	.cong_avoid = (void *)p4i_dctcp_cong_avoid,
	.undo_cwnd = (void *)p4i_dctcp_undo_cwnd,
	.cwnd_event = (void *)p4i_dctcp_cwnd_event,
	.flags = TCP_CONG_NEEDS_ECN_,
	.name = "p4i_dctcp",
};
