/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test-only CE marker and CE eraser (tests/agent/test_veth.py), loaded with tc.
 *
 * ce_mark   (sender's egress): an ECT(0)/ECT(1) IPv4 packet becomes CE with
 *           probability 1/32 (bpf_get_prandom_u32), standing in for a switch
 *           that marks at its queue.
 * ce_clear  (receiver's ingress, clsact, after the agent's TCX program): CE
 *           goes back to ECT(0), so the receiver's TCP never echoes ECE and the
 *           sender's own ECN reaction cannot be mistaken for the agent's clamp.
 *
 * Both fix the IPv4 header checksum with bpf_l3_csum_replace.
 */
#ifndef P4IA_CE_COMMON_H
#define P4IA_CE_COMMON_H
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ETH_HLEN 14

static __always_inline int set_ecn(struct __sk_buff *skb, __u8 from_mask, __u8 to)
{
	__u16 old_w, new_w;
	__u8 tos;

	if (skb->protocol != bpf_htons(0x0800))
		return -1;
	if (bpf_skb_load_bytes(skb, ETH_HLEN, &old_w, 2))
		return -1;
	tos = ((__u8 *)&old_w)[1];
	if (!(from_mask & (1 << (tos & 3))))
		return -1;
	new_w = old_w;
	((__u8 *)&new_w)[1] = (tos & ~3) | to;
	bpf_l3_csum_replace(skb, ETH_HLEN + 10, old_w, new_w, 2);
	bpf_skb_store_bytes(skb, ETH_HLEN, &new_w, 2, 0);
	return 0;
}

#endif
