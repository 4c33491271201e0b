/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the struct_ops congestion controls p4i_dctcp and
 * p4i_newdctcp (vmlinux.h + libbpf headers only). */
#ifndef P4I_CC_H
#define P4I_CC_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define TCP_CONG_NEEDS_ECN_ 0x2 /* include/net/tcp.h TCP_CONG_NEEDS_ECN */
#define TCP_ECN_DEMAND_CWR_ 4   /* include/net/tcp.h TCP_ECN_DEMAND_CWR */

/* Kernel functions the BPF TCP-CA kfunc set exports. */
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

static __always_inline struct tcp_sock *tcp_sk_(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline void *ca_priv(const struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline int seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

/* Receiver side of DCTCP's exact CE echo (Alizadeh et al. 2010, §3.1): when
 * the CE state of arriving data flips, ACK at once what arrived under the old
 * state, then echo the new one (ECE on every ACK while CE). */
static __always_inline void ce_echo_update(struct sock *sk, __u32 *ce_state, __u32 *prior_rcv_nxt,
					   __u32 now_ce)
{
	struct tcp_sock *tp = tcp_sk_(sk);

	if (*ce_state != now_ce) {
		/* The delayed-ACK timer pending: ACK the old state first. */
		if (((struct inet_connection_sock *)sk)->icsk_ack.pending & 1) {
			if (*ce_state)
				tp->ecn_flags |= TCP_ECN_DEMAND_CWR_;
			else
				tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR_;
			bpf_tcp_send_ack(sk, *prior_rcv_nxt);
		}
		if (now_ce)
			tp->ecn_flags |= TCP_ECN_DEMAND_CWR_;
		else
			tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR_;
		*ce_state = now_ce;
	}
	*prior_rcv_nxt = tp->rcv_nxt;
}

#endif
