// SPDX-License-Identifier: Apache-2.0
/*
 * rxwin: the receiver-side host agent's data path (tc, ingress + egress),
 * docs/algorithms.md §3.
 *
 * The receiver sees every data packet and its CE bit, and owns the advertised
 * window, which caps any stock sender (effective window = min(cwnd, rwnd)).
 * Ingress measures each flow (rxwin_flow.h) and runs its policy's window
 * rule; egress enforces the policy's window W on every ACK the receiver sends
 * for the flow (rxwin_write.h). Flows whose handshake was not seen are
 * measured but never rewritten: their scale is unknown.
 *
 * Each policy (rx_config.policy, rxwin.h RX_POLICY_*) is a set of hooks,
 * dispatched on the policy code (rxwin_hooks.h):
 *
 *   off              the programs return at once
 *   observe          measure and compute NewDCTCP-rx's W, rewrite nothing
 *   newdctcp-rx      NewDCTCP-rx's W (rxwin_rules.h window_end), enforced
 *   newdctcp-budget  the same W within an even share of a receiver-wide
 *                    budget; below one segment a flow, the rotation
 *                    (rxwin_rotation.h)
 *   user             ictcp, rcc: W written by the Python agent into p4i_wset;
 *                    rcc's ACK queue (rxwin_ackq.h)
 *
 * With config.clear_ece, egress also clears ECE on the ACKs of the flows a
 * policy controls (handshake seen, not slow): the policy's window is then the
 * only reduction a stock sender sees for CE (§3.7). SYNs keep their ECN
 * flags, so ECN is still negotiated and data still carries ECT.
 *
 * Fail-open: programs return TC_ACT_UNSPEC (= TCX_NEXT) so later tc programs
 * still run, and change only the window field and ECE of ACKs (plus the
 * copies they send, marked RX_CLONE_MARK, which pass untouched).
 *
 * Files: rxwin.h (layouts and constants shared with the Python agent),
 * rxwin_maps.h (maps), rxwin_parse.h (frames), rxwin_write.h (the field an
 * ACK carries, checksums), rxwin_forge.h (forged window updates),
 * rxwin_rules.h (window rules), rxwin_flow.h (the flow table),
 * rxwin_hooks.h (the policies' hooks and their dispatch), rxwin_rotation.h,
 * rxwin_ackq.h. Reference in Python: agent/policies/ (reference.py
 * RxReference runs the same hooks).
 */
#include "rxwin_ackq.h"
#include "rxwin_flow.h"
#include "rxwin_hooks.h"
#include "rxwin_maps.h"
#include "rxwin_parse.h"
#include "rxwin_rotation.h"
#include "rxwin_write.h"

SEC("tc")
int rx_ingress(struct __sk_buff *skb)
{
	struct rx_config *cfg = get_config();
	struct flow_key key;
	struct pkt p = {};
	struct flow *f;
	__u64 now;

	if (!cfg || cfg->policy == RX_POLICY_OFF)
		return TC_ACT_UNSPEC_;
	if (parse(skb, &p))
		return TC_ACT_UNSPEC_;
	stat_inc(ST_RX_PKTS);
	key.raddr_be = p.saddr;
	key.laddr_be = p.daddr;
	key.rport_be = p.sport;
	key.lport_be = p.dport;

	if (p.flags & (TH_RST | TH_FIN)) {
		end_flow(&key);
		return TC_ACT_UNSPEC_;
	}
	now = bpf_ktime_get_ns();
	f = bpf_map_lookup_elem(&p4i_flows, &key);
	if (p.flags & TH_SYN) {
		/* The peer's SYN opens a new flow; its SYN-ACK answers ours. */
		if (!(p.flags & TH_ACK) || !f)
			f = new_flow(&key, now, cfg);
		if (f)
			peer_syn(f, &p, cfg);
		return TC_ACT_UNSPEC_;
	}
	if (!f) {
		if (p.payload == 0)
			return TC_ACT_UNSPEC_;
		f = new_flow(&key, now, cfg); /* mid-stream: measured, never rewritten */
		if (!f)
			return TC_ACT_UNSPEC_;
	}
	idle_restart(f, cfg, now);
	rtt_sample(f, &p, cfg, now);
	if (cfg->policy == RX_POLICY_BUDGET && cfg->rotate && (p.flags & TH_ACK))
		rot_acked(&key, p.ack);
	if (p.payload) {
		struct rx_data d = {
			.cfg = cfg,
			.f = f,
			.key = &key,
			.segs = skb->gso_segs ? skb->gso_segs : 1,
			.ce = p.ecn == 3,
		};

		d.nb = count_data(f, &p, d.segs);
		policy_on_data(&d);
	}
	return TC_ACT_UNSPEC_;
}

SEC("tc")
int rx_egress(struct __sk_buff *skb)
{
	struct rx_config *cfg = get_config();
	struct flow_key key;
	struct pkt p = {};
	struct flow *f;
	__u32 field, newf, ws;
	__u64 now;

	if (!cfg || cfg->policy == RX_POLICY_OFF || skb->mark == RX_CLONE_MARK)
		return TC_ACT_UNSPEC_;
	if (parse(skb, &p))
		return TC_ACT_UNSPEC_;
	key.raddr_be = p.daddr;
	key.laddr_be = p.saddr;
	key.rport_be = p.dport;
	key.lport_be = p.sport;

	if (p.flags & (TH_RST | TH_FIN)) {
		end_flow(&key);
		policy_on_pass(skb, cfg); /* the slot it held, if any */
		return TC_ACT_UNSPEC_;
	}
	now = bpf_ktime_get_ns();
	f = bpf_map_lookup_elem(&p4i_flows, &key);
	if (p.flags & TH_SYN) {
		/* Our SYN opens a flow (we connect, as the incast client does);
		 * our SYN-ACK answers the peer's. */
		if (!(p.flags & TH_ACK) || !f)
			f = new_flow(&key, now, cfg);
		if (f)
			local_syn(f, &p, cfg);
		return TC_ACT_UNSPEC_;
	}
	if (!f || !(p.flags & TH_ACK)) {
		policy_on_pass(skb, cfg); /* e.g. our ACK of a peer's FIN */
		return TC_ACT_UNSPEC_;
	}
	stat_inc(ST_TX_ACKS);
	f->acks++;
	ts_sent(f, &p, now);

	ws = f->wscale & 15;
	field = p.window;
	newf = field;
	if ((f->flags & FL_HS) != FL_HS) {
		stat_inc(ST_NO_HANDSHAKE);
	} else if (policy_sets_window(cfg->policy) && !(f->flags & FL_SLOW)) {
		struct rx_ack a = {
			.skb = skb,
			.cfg = cfg,
			.f = f,
			.key = &key,
			.p = &p,
			.ws = ws,
			.field = field,
		};

		if (cfg->clear_ece && (p.flags & TH_ECE))
			clear_ece(skb, &p); /* before any copy of this ACK is sent */
		newf = policy_on_ack(&a);
		field = a.field;
	}
	if (newf != field) {
		set_field(skb, &p, field, newf);
		f->rewrites++;
		stat_inc(ST_REWRITES);
	}
	f->last_ack = p.ack;
	f->last_field = newf;
	f->last_re = p.ack + (newf << ws);
	f->re_valid = 1;
	return TC_ACT_UNSPEC_;
}

/* Userspace's rescue (agent/rotation.py, agent/runner.py AckqRescuer), run by
 * BPF_PROG_TEST_RUN on ROT_OP_OFF zero bytes and a struct rot_op or ackq_op;
 * both carry their op code after the 12-byte flow key. */
SEC("tc")
int rx_rescue(struct __sk_buff *skb)
{
	__u32 code;

	if (bpf_skb_load_bytes(skb, ROT_OP_OFF + 12, &code, 4))
		return -1;
	if (code == ACKQ_OP_RELEASE || code == ACKQ_OP_END)
		return ackq_rescue(skb, code);
	return rot_rescue(skb);
}

char LICENSE[] SEC("license") = "GPL";
