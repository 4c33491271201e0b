// SPDX-License-Identifier: Apache-2.0
/*
 * Test-only CE marker (sender's egress, before the htb bottleneck).
 *
 * Two modes, chosen by ce_cfg (all zero when tc loads the object):
 * - random: an ECT packet becomes CE with probability 1/32;
 * - virtual queue: a byte counter drained at the bottleneck rate stands in
 *   for the htb backlog behind this hook, and ECT packets arriving while it
 *   holds >= k_bytes become CE (DCTCP's mark-tail at threshold K).
 * Races between CPUs on the virtual queue are tolerated: it is a test load.
 */
#include "ce_common.h"

struct ce_cfg {
	__u64 rate_Bps; /* 0: random 1/32 */
	__u64 k_bytes;
};

struct vq {
	__u64 backlog;
	__u64 last_ns;
	__u64 marked;
	__u64 seen;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ce_cfg);
} ce_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vq);
} ce_vq SEC(".maps");

SEC("tc")
int ce_mark(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct ce_cfg *c = bpf_map_lookup_elem(&ce_cfg, &zero);
	struct vq *q = bpf_map_lookup_elem(&ce_vq, &zero);
	__u64 now, drained;
	int mark;

	if (!c || !q)
		return -1;
	if (!c->rate_Bps) {
		mark = (bpf_get_prandom_u32() & 31) == 0;
	} else {
		now = bpf_ktime_get_ns();
		drained = (now - q->last_ns) * c->rate_Bps / 1000000000ULL;
		q->backlog = q->backlog > drained ? q->backlog - drained : 0;
		q->last_ns = now;
		mark = q->backlog >= c->k_bytes;
		q->backlog += skb->len;
	}
	q->seen++;
	if (mark && set_ecn(skb, (1 << 1) | (1 << 2), 3) == 0) /* ECT(1), ECT(0) -> CE */
		q->marked++;
	return -1;
}

char LICENSE[] SEC("license") = "GPL";
