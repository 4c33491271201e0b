// SPDX-License-Identifier: Apache-2.0
/* Test-only CE marker (see ce_common.h). */
#include "ce_common.h"

SEC("tc")
int ce_mark(struct __sk_buff *skb)
{
	if ((bpf_get_prandom_u32() & 31) == 0)
		set_ecn(skb, (1 << 1) | (1 << 2), 3); /* ECT(1), ECT(0) -> CE */
	return -1;
}

char LICENSE[] SEC("license") = "GPL";
