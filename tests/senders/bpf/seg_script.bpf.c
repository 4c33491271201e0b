// SPDX-License-Identifier: Apache-2.0
/*
 * Test-only: the path of the sender conformance suite (tests/senders).
 * A tc program on the router's egress toward the receiver that, for the one
 * TCP flow to `p4s_cfg.dport`, CE-marks or drops chosen data segments by
 * their number (1-based, in sequence order: (seq - ISN - 1) / MSS + 1), on
 * their first transmission only; a retransmission passes untouched. The ISN
 * is learned from the SYN. p4s_script[i]: bit 0 mark, bit 1 drop; p4s_seen[i]
 * counts the transmissions of segment i that passed this hook, and
 * p4s_seen[0] (no segment has number 0) the packets that carried more than
 * one MSS: segments merged on the way, which the script cannot address.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ETH_HLEN 14
#define MAX_SEGS 4096
#define SCRIPT_MARK 1
#define SCRIPT_DROP 2
#define TC_ACT_OK 0
#define TC_ACT_SHOT 2

struct p4s_cfg {
	__u32 dport; /* host order */
	__u32 mss;
	__u32 isn;
	__u32 have_isn;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct p4s_cfg);
} p4s_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SEGS);
	__type(key, __u32);
	__type(value, __u32);
} p4s_script SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SEGS);
	__type(key, __u32);
	__type(value, __u32);
} p4s_seen SEC(".maps");

SEC("tc")
int seg_script(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct iphdr *ip = data + ETH_HLEN;
	struct tcphdr *th;
	struct p4s_cfg *c;
	__u32 zero = 0, idx, off, *act, *seen, paylen;

	if ((void *)(ip + 1) > end || skb->protocol != bpf_htons(0x0800) || ip->protocol != 6 ||
	    ip->ihl != 5)
		return TC_ACT_OK;
	th = (void *)(ip + 1);
	if ((void *)(th + 1) > end)
		return TC_ACT_OK;
	c = bpf_map_lookup_elem(&p4s_cfg, &zero);
	if (!c || bpf_ntohs(th->dest) != c->dport)
		return TC_ACT_OK;
	if (th->syn) {
		c->isn = bpf_ntohl(th->seq);
		c->have_isn = 1;
		return TC_ACT_OK;
	}
	paylen = bpf_ntohs(ip->tot_len) - 20 - th->doff * 4;
	if (!c->have_isn || !c->mss || paylen == 0)
		return TC_ACT_OK;
	if (paylen > c->mss) {
		seen = bpf_map_lookup_elem(&p4s_seen, &zero);
		if (seen)
			__sync_fetch_and_add(seen, 1);
	}
	off = bpf_ntohl(th->seq) - c->isn - 1;
	idx = off / c->mss + 1;
	if (idx >= MAX_SEGS)
		return TC_ACT_OK;
	seen = bpf_map_lookup_elem(&p4s_seen, &idx);
	act = bpf_map_lookup_elem(&p4s_script, &idx);
	if (!seen || !act)
		return TC_ACT_OK;
	if (__sync_fetch_and_add(seen, 1) != 0)
		return TC_ACT_OK; /* a retransmission */
	if (*act & SCRIPT_DROP)
		return TC_ACT_SHOT;
	if ((*act & SCRIPT_MARK) && (ip->tos & 3)) {
		__u16 old_w, new_w;

		if (bpf_skb_load_bytes(skb, ETH_HLEN, &old_w, 2))
			return TC_ACT_OK;
		new_w = old_w;
		((__u8 *)&new_w)[1] |= 3; /* ECT(0)/ECT(1) -> CE */
		bpf_l3_csum_replace(skb, ETH_HLEN + 10, old_w, new_w, 2);
		bpf_skb_store_bytes(skb, ETH_HLEN, &new_w, 2, 0);
	}
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
