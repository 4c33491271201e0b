/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the struct_ops congestion controls p4i_dctcp and
 * p4i_newdctcp (vmlinux.h + libbpf headers only). */
#ifndef P4I_CC_H
#define P4I_CC_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define TCP_CONG_NEEDS_ECN_ 0x2 /* include/net/tcp.h TCP_CONG_NEEDS_ECN */
#define TCP_ECN_DEMAND_CWR_ 4   /* include/net/tcp.h TCP_ECN_DEMAND_CWR */
#define MIN_CWND 2U             /* the floor every Linux congestion control keeps */
#define P4I_STR_(x) #x
#define P4I_STR(x) P4I_STR_(x) /* a name as a string: the struct_ops .name */

/* Kernel functions the BPF TCP-CA kfunc set exports. */
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;

static __always_inline struct tcp_sock *tcp_sk_(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *icsk_(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline void *ca_priv(const struct sock *sk)
{
	return (void *)icsk_(sk)->icsk_ca_priv;
}

/* Written last by a congestion control's init: an op that finds its state
 * without it initializes that state itself before using it. Linux calls init
 * when the connection is established; on Linux 6.18 under CPU load a socket
 * was seen to take its first ECE with init's writes absent (alpha 0: no cut),
 * and the ops must not act on state nothing initialized. */
#define P4I_CA_READY 0x70346963U

static __always_inline __u32 ca_state(const struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD(icsk_(sk), icsk_ca_state);
}

static __always_inline int seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static __always_inline __u32 max_u32(__u32 a, __u32 b)
{
	return a > b ? a : b;
}

/* NewReno's response to a loss (RFC 5681 eq. 4 over cwnd, as Linux's
 * tcp_reno_ssthresh; RFC 8257 §3.5 for DCTCP): ssthresh = max(cwnd0/2, 2), for
 * cwnd0 = tp->prior_cwnd, the cwnd when the kernel began this reduction (it
 * sets it on entering CWR, Recovery from Open/Disorder, and Loss). A loss
 * found inside an ECN episode (entering Recovery, or a timeout, from CWR) is
 * the same episode: its one cut is the deeper of the two, min(ssthresh, that)
 * (RFC 3168 §6.1.2: one reduction per window of data). Called on entering
 * Recovery or Loss and on CA_EVENT_LOSS; a second call changes nothing. */
static __always_inline void halve_on_loss(struct sock *sk, __u32 *loss_cwnd)
{
	struct tcp_sock *tp = tcp_sk_(sk);
	__u32 half = max_u32(tp->prior_cwnd >> 1, MIN_CWND);

	*loss_cwnd = tp->prior_cwnd;
	if (half < tp->snd_ssthresh)
		tp->snd_ssthresh = half;
}

static __always_inline void demand_cwr(struct tcp_sock *tp, __u32 ce)
{
	if (ce)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR_;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR_;
}

/* Receiver side of DCTCP's exact CE echo (RFC 8257 §3.2; Alizadeh et al. 2010
 * §3.1; Linux dctcp_ece_ack_update): when the CE state of arriving data flips,
 * first ACK what arrived under the old state if that ACK is being delayed,
 * then ACK at once under the new one; ECE on every ACK while CE. */
static __always_inline void ce_echo_update(struct sock *sk, __u32 *ce_state, __u32 *prior_rcv_nxt,
					   __u32 now_ce)
{
	struct tcp_sock *tp = tcp_sk_(sk);
	struct inet_connection_sock *icsk = icsk_(sk);

	if (*ce_state != now_ce) {
		if (icsk->icsk_ack.pending & ICSK_ACK_TIMER) {
			demand_cwr(tp, *ce_state);
			bpf_tcp_send_ack(sk, *prior_rcv_nxt);
		}
		icsk->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	*prior_rcv_nxt = tp->rcv_nxt;
	*ce_state = now_ce;
	demand_cwr(tp, now_ce);
}

#endif
