/* SPDX-License-Identifier: Apache-2.0 */
/* rxwin: enforcement on the ACKs the receiver sends (docs/algorithms.md §3.3,
 * §3.7). A policy's W becomes the window field
 *
 *   field <- min(kernel's field, max(ceil(W / 2^ws), ceil((RE - ack) / 2^ws)))
 *
 * where ws is our window scale in effect and RE the right edge the flow's
 * previous ACK advertised, so the right edge never moves left: the window
 * shrinks by at most the newly acknowledged bytes. W / 2^ws is rounded up:
 * never offer less than W (rounding 2 MSS down to 1.8 at a large scale leaves
 * one segment waiting for a delayed ACK). The data path only ever lowers the
 * kernel's value. The one exception is RX_CLOSE_ALL (the rotation, on the ACK
 * that ends a flow's data): the sender has nothing beyond that ACK to send,
 * and an edge left open past it would let the flow's next response start
 * before its turn, inside a segment. The field is written, and ECE cleared,
 * with the TCP checksum fixed incrementally (RFC 1624, bpf_l4_csum_replace). */
#ifndef P4I_RXWIN_WRITE_H
#define P4I_RXWIN_WRITE_H

#include "rxwin_parse.h"

/* The field that enforces W on the ACK p of flow f whose field is now `field`;
 * zero: 0, or close the window (RX_CLOSE_EDGE, RX_CLOSE_ALL). W = 0 and not
 * zero: the field stays. */
static __always_inline __u32 enforce_field(struct flow *f, struct pkt *p, __u32 field, __u32 ws,
					   __u32 w, int zero)
{
	__u32 want;

	if (!w && !zero)
		return field;
	want = zero ? 0 : (w + (1U << ws) - 1) >> ws;
	if (f->re_valid && zero != RX_CLOSE_ALL) {
		__u32 d = f->last_re - p->ack;

		if ((__s32)d > 0) {
			__u32 minf = (d + (1U << ws) - 1) >> ws;

			if (want < minf)
				want = minf;
		}
	}
	return want < field ? want : field;
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

#endif
