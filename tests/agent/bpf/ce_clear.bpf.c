// SPDX-License-Identifier: Apache-2.0
/* Test-only CE eraser (see ce_common.h). */
#include "ce_common.h"

SEC("tc")
int ce_clear(struct __sk_buff *skb)
{
	set_ecn(skb, 1 << 3, 2); /* CE -> ECT(0) */
	return -1;
}

char LICENSE[] SEC("license") = "GPL";
