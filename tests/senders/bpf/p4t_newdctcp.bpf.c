// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only: agent/bpf/p4i_newdctcp.bpf.c, unchanged, registered as "p4t_newdctcp".
 * TCP_CONGESTION names are global to the host: "p4i_newdctcp" is whichever
 * registration holds it (another worktree's build; the agent, the testbed and
 * the agent tests load and unload it), so the kernel lab registers and removes
 * this copy of its own (tests/senders/kernel_lab.py).
 */
#define P4I_CC_NAME p4t_newdctcp
#include "p4i_newdctcp.bpf.c"
