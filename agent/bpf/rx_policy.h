/* SPDX-License-Identifier: Apache-2.0 */
/* The receiver's data-path modes (rx_config.policy): how the data path runs
 * each agent policy. Read by rxwin.bpf.c (through rxwin.h), by the Python
 * agent and simulator (p4incast/policies/rxwin_h.py; p4incast/policies/
 * config.py POLICY_MODES names the policy of each) and by the simulator's receiver, a port of this data path
 * (sim/cpp/rx_agent.h RxPolicy). Plain #defines only: C, C++ and the Python
 * reader all take them. */
#ifndef P4I_RX_POLICY_H
#define P4I_RX_POLICY_H

#define RX_POLICY_OFF 0      /* programs return at once, touch nothing */
#define RX_POLICY_OBSERVE 1  /* measure, compute W, rewrite nothing */
#define RX_POLICY_NEWDCTCP 2 /* W from the in-kernel NewDCTCP-rx rule */
#define RX_POLICY_USER 3     /* W written by userspace into p4i_wset (ICTCP, RCC) */
#define RX_POLICY_BUDGET 4   /* NewDCTCP-rx's W, capped by an even share of config.budget_bytes */

/* How an ACK closes a flow's window (the rotation's; enforce_field's zero) */
#define RX_CLOSE_EDGE 1 /* as far as the right edge the flow was offered lets it */
#define RX_CLOSE_ALL 2  /* completely: the flow's data ended, nothing is left to send */

#endif
