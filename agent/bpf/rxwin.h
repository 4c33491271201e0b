/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between rxwin.bpf.c and the Python agent, which reads this file
 * (p4incast/policies/rxwin_h.py): each #define becomes a Python constant, each
 * struct a ctypes structure. Keep to what that reader takes: integer #defines, structs
 * of __u8..__u64/__s8..__s64, nested structs and arrays of them.
 * All fields are host order unless named *_be. */
#ifndef P4I_RXWIN_H
#define P4I_RXWIN_H

/* Policies (rx_config.policy): RX_POLICY_*, also read by the simulator */
#include "rx_policy.h"
/* RX_DEFAULT_MSS, RX_MIN_MSS, RX_MAX_WSCALE, also read by the simulator */
#include "rx_tcp.h"

/* Defaults of rx_config, one definition for the data path, the agent's
 * tunables (p4incast/policies/config.py) and the userspace policies
 * (p4incast/policies/ictcp.py). */
#define RX_RTT_LIMIT_US 2000   /* a flow whose min RTT is larger than this is not a
				* datacenter flow (ICTCP seed 000 §IV-D): never rewritten */
#define RX_IDLE_RESET_MS 1000  /* idle longer than this: the window restarts (one RTO
				* floor of RFC 6298, after which TCP itself restarts) */

/* Flow flags (flow.flags). */
#define FL_PEER_SYN (1U << 0)   /* peer's SYN or SYN-ACK seen (ingress) */
#define FL_LOCAL_SYN (1U << 1)  /* our SYN or SYN-ACK seen (egress) */
#define FL_PEER_WS (1U << 2)    /* peer sent a window-scale option */
#define FL_LOCAL_WS (1U << 3)   /* we sent a window-scale option */
#define FL_PEER_TS (1U << 4)
#define FL_LOCAL_TS (1U << 5)
#define FL_MARKED (1U << 6)     /* first CE seen: slow start is over */
#define FL_COUNTED (1U << 7)   /* handshake complete: counted in p4i_budget (budget's flows) */
/* bit 8: unused (re_valid, ts_echoed are separate fields: one writer each) */
#define FL_SEQ_VALID (1U << 9)  /* hi_seq initialised */
#define FL_SLOW (1U << 10)      /* min RTT above the limit: never rewritten */
#define FL_HS (FL_PEER_SYN | FL_LOCAL_SYN)

/* Global counters (p4i_stats index). */
#define ST_RX_PKTS 0     /* TCP packets seen on ingress */
#define ST_TX_ACKS 1     /* TCP ACKs seen on egress */
#define ST_REWRITES 2    /* window fields lowered */
#define ST_FLOWS_NEW 3   /* entries created */
#define ST_FLOWS_END 4   /* entries deleted on FIN/RST */
#define ST_BAD_OPTS 5    /* malformed TCP option lists */
#define ST_NO_HANDSHAKE 6 /* ACKs not rewritten: handshake not seen */
#define ST_IDLE_RESET 7  /* window state reset after idle */
#define ST_HS_REOPEN 8   /* newdctcp-budget: handshake ACK sent as init window, then zero */
#define ST_FORGE_FAIL 9  /* bpf_clone_redirect failed (the ACK went out with the share) */
#define ST_ROT_GRANT 10  /* rotation: a waiting flow's window opened by a forged update */
#define ST_ROT_RELEASE 11 /* rotation: a flow's turn ended with a zero window */
#define ST_ROT_IDLE 12   /* rotation: a flow gave its slot back after a short segment */
#define ST_ROT_DEFER 13  /* rotation: a grant waited for a pure ACK to carry it */
#define ST_ECE_CLEARED 14 /* ACKs whose ECE we cleared (config.clear_ece) */
#define ST_ACKQ_HELD 15     /* rcc ACK queue: an ACK still held after the queue's loop */
#define ST_ACKQ_REPLACED 16 /* rcc ACK queue: a held ACK taken out by its flow's newer one, which waits */
#define ST_ACKQ_SUPERSEDED 17 /* rcc ACK queue: a held ACK taken out by its flow's newer one, which left */
#define ST_ACKQ_RELEASED 18 /* rcc ACK queue: a held ACK released by a window update from rx_egress */
#define ST_ACKQ_RESCUED 19  /* rcc ACK queue: a held ACK released by userspace's rescue */
#define ST_ACKQ_ZERO 20     /* rcc ACK queue: split ACKs that went out with a zero window */
#define ST_RTT_EXCLUDED 21  /* flows whose min RTT was found above rtt_limit_us (FL_SLOW set) */
#define ST_MAX 22

/* Rotation states (rot_flow.state). */
#define ROT_IDLE 0 /* holds no slot, waits for none; takes one at its next ACK */
#define ROT_HOLD 1 /* holds a slot: its window is open */
#define ROT_WAIT 2 /* in p4i_rotq with a zero window */

/* The frame a grant is forged as: Ethernet + IPv4 (no options) + TCP with
 * NOP NOP TS, no payload — Linux's pure ACK with timestamps. */
#define ROT_HDR_LEN 34
#define ROT_FRAME_LEN 66

/* The rescue's state changes (agent/rotation.py), made by rx_rescue through
 * BPF_PROG_TEST_RUN on a frame of ROT_OP_OFF zero bytes and a struct rot_op,
 * so that a change racing the data path's on another CPU is not lost. */
#define ROT_OP_GRANT 1   /* a waiting flow takes a slot (its update is sent after) */
#define ROT_OP_COUNT 2   /* count holders and waiting flows in p4i_rot_flows */
#define ROT_OP_ADJUST 3  /* add `open` and `waiting` to the counters */
#define ROT_OP_SCAN 4    /* take back every stale holder's slot, then COUNT */
#define ROT_OP_OFF 14

/* skb->mark of the copies rx_egress sends itself (bpf_clone_redirect): it lets
 * them pass untouched when they cross the program again. */
#define RX_CLONE_MARK 0x50344943U /* "P4IC" */

struct rx_config {
	__u32 policy;
	__u32 init_segs;    /* W at flow start, in MSS */
	__u32 max_w;        /* W cap, bytes */
	__u32 rtt_limit_us; /* flows whose min RTT is larger than this are left alone */
	__u32 ifindex;      /* interface the agent attached to (for `status`) */
	__u32 min_segs;     /* W floor, in MSS (2: one segment alone waits for a delayed ACK) */
	__u64 idle_ns;      /* idle longer than this: W restarts from init_segs */
	__u32 budget_bytes; /* newdctcp-budget: the sum of all flows' W stays within this */
	__u32 rotate;       /* newdctcp-budget: 1 = windows below one segment by rotation */
	__u32 clear_ece;    /* 1 = clear ECE on the ACKs of controlled flows: the policy's
			     * window is the only cut (docs/algorithms.md §3.7) */
	__u32 ackq_pkts;    /* rcc: RCC's ACK queue with Q = ackq_pkts packets of each
			     * flow's MSS in flight at most (0: off) */
	__u32 share_pkts;   /* rcc: until userspace writes a W, a flow's window is its
			     * share of Q = share_pkts packets, max(Q / F, init_segs) MSS
			     * with F the flows counted in p4i_budget (0: init_segs MSS) */
	__u32 ack_cost;     /* rotate: bytes of budget_bytes one acknowledgment due
			     * takes (a pure ACK's share of the bottleneck's queue) */
};

struct flow_key {
	__u32 raddr_be; /* remote (data sender) IPv4 */
	__u32 laddr_be; /* local (receiver) IPv4 */
	__u16 rport_be;
	__u16 lport_be;
};

struct flow {
	__u64 first_ns;
	__u64 last_ns;
	__u64 pkts;    /* data packets received (payload > 0) */
	__u64 bytes;   /* payload bytes received */
	__u64 ect;     /* data packets with ECT(0)/ECT(1) */
	__u64 ce;      /* data packets with CE */
	__u64 acks;    /* ACKs we sent */
	__u64 rewrites;
	__u64 ts_ns;   /* when ts_val first went out */
	__u32 flags;
	__u32 hi_seq;  /* highest sequence end received */
	__u32 mss;
	__u32 w;       /* window W, bytes */
	__u32 win_bytes; /* new bytes in the current window of data */
	__u32 win_pkts;  /* n */
	__u32 win_ce;    /* m */
	__u32 windows;
	__u32 marked_windows;
	__u32 last_ack;
	__u32 last_re;   /* right edge we advertised: ack + (field << wscale) */
	__u32 last_field;
	__u32 ts_val;    /* our TSval awaiting its echo */
	__u32 srtt_us;
	__u32 rtt_min_us;
	__u32 retrans;   /* data packets that carried no new bytes */
	__u32 ts_echoed; /* the last ts_val whose echo gave an RTT sample (ingress) */
	__u16 peer_mss;
	__u16 local_mss;
	__u8 wscale;     /* our receive window scale in effect (0 if not negotiated) */
	__u8 local_ws;
	__u8 peer_ws;
	__u8 re_valid;   /* last_re holds the right edge we advertised (egress) */
	__u32 last_len;  /* payload of the last data packet (ingress) */
};

/* Rotation, per flow; egress writes it (end_flow may delete it). */
struct rot_flow {
	__u32 state;
	__u32 seq_next; /* our next sequence number, from our last packet */
	__u32 ack;      /* the ack of our last packet */
	__u32 tsval;
	__u32 tsecr;
	__u32 has_hdr;  /* hdr holds the Ethernet + IPv4 header of one of our pure ACKs */
	__u8 hdr[36];   /* ROT_HDR_LEN used */
	__u32 advanced; /* our last packet acknowledged more than the one before it */
	__u64 since;    /* when it took its slot (bpf_ktime; userspace's stale check) */
	__u32 due;      /* 1: we sent it data that no packet of its acknowledged yet */
};

struct rot_op {
	struct flow_key key;
	__u32 op;
	__u64 since;   /* SCAN: now (bpf_ktime_get_ns' clock) */
	__s64 open;    /* COUNT, SCAN: written back into the frame; ADJUST: added */
	__s64 waiting;
	__u64 min_idle_ns; /* SCAN: a holder idle this long, and */
	__u32 stale_rtts;  /* this many of its smoothed RTTs, is stale */
	__u32 reclaimed;   /* SCAN: slots taken back (written back) */
};

/* Rotation, receiver-wide (p4i_rot[0]). open and waiting change by atomic
 * adds (egress, any flow); the window of data belongs to ingress. */
struct rot_global {
	__s64 slots;    /* H: flows that may hold a window at once (0: not yet set) */
	__s64 open;     /* flows in ROT_HOLD */
	__s64 waiting;  /* flows in ROT_WAIT */
	__u64 win_bytes; /* the receiver's window of data: new bytes, */
	__u64 win_pkts;  /* packets, */
	__u64 win_ce;    /* CE packets, */
	__u64 win_floor_ce; /* CE packets of flows whose W is one segment */
	__u64 windows;   /* windows of data ended */
	__u64 cuts;      /* of them, cuts of H */
	__u64 mss;       /* the MSS of the last flow that sent an ACK (rot_fill) */
	__u64 grants;    /* slots passed on (BPF and userspace's rescue) */
	__s64 due;       /* flows whose acknowledgment of our data is due */
};

/* RCC's ACK queue (config.ackq_pkts), per flow (p4i_ackq_flows). */
#define ACKQ_NONE 0 /* nothing held */
#define ACKQ_HELD 1 /* in p4i_ackq with its latest (ack, right edge) in `held` */
/* p4i_ackq's entries per flow of the table: an ACK that takes its flow's held
 * one out leaves that entry behind (skipped when it reaches the head). */
#define ACKQ_ENTRIES_PER_FLOW 4

struct ackq_flow {
	__u64 held;    /* ack << 32 | right edge of its latest held ACK (one 64-bit store) */
	__s64 counted; /* bytes it counts in ackq_global.total now */
	__u32 rel;     /* right edge last released to it */
	__u32 rel_valid;
	__u32 state;   /* ACKQ_NONE / ACKQ_HELD */
	__u32 ticket;  /* of its entry in p4i_ackq; an entry with another is stale */
};


/* p4i_ackq_g[0]. total = the sum of the flows' `counted` (changed by atomic
 * adds only); lock: 1 while one program decides what passes and what is
 * released (a try-lock: the loser holds its ACK or releases nothing). */
struct ackq_global {
	__s64 total;     /* bytes in flight the data path allowed, all flows */
	__s64 max_total; /* the largest total after a pass or a release */
	__s64 held;      /* flows in ACKQ_HELD */
	__u32 lock;
	__u32 pad;
	__u64 releases;  /* held ACKs released (data path and rescue) */
};

/* The rescue's ACK-queue ops through rx_rescue (struct ackq_op after
 * ROT_OP_OFF zero bytes). */
#define ACKQ_OP_RELEASE 10 /* release the head if the total is below the cap: key, ack, field written back */
#define ACKQ_OP_END 11     /* the flow is gone (userspace's idle sweep): count it out */

struct ackq_op {
	struct flow_key key;
	__u32 op;
	__u32 ack;
	__u32 field; /* window field of the update to send */
	__u32 pad;
};

#endif
