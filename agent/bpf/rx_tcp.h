/* SPDX-License-Identifier: Apache-2.0 */
/* The TCP limits the receiver's data path applies to what a handshake carries.
 * Read by rxwin.bpf.c (through rxwin.h), by the Python agent and its reference
 * (p4incast/policies/rxwin_h.py; agent/policies/newdctcp_rx.py) and by the
 * simulator's receiver (sim/cpp/rx_agent.h). Plain #defines only: C, C++ and the Python
 * reader all take them. */
#ifndef P4I_RX_TCP_H
#define P4I_RX_TCP_H

#define RX_DEFAULT_MSS 536 /* MSS when neither SYN carried the option (RFC 9293) */
#define RX_MIN_MSS 88      /* a smaller MSS option counts as this */
#define RX_MAX_WSCALE 14   /* a larger window-scale option counts as this (RFC 7323) */

#endif
