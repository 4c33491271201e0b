/* SPDX-License-Identifier: Apache-2.0 */
/* rxwin: forged window updates. A tc program cannot send a packet of its own;
 * it can turn the pure ACK it is sending into another flow's window update,
 * send that copy (bpf_clone_redirect) and put the ACK back. The rotation's
 * grants (rxwin_rotation.h) and rcc's ACK-queue releases (rxwin_ackq.h) go
 * out this way. rot_note keeps, from each ACK of a flow, what its update
 * repeats; rot_forge builds and sends it. Python's reference of the frame:
 * agent/policies/budget.py forged_update. */
#ifndef P4I_RXWIN_FORGE_H
#define P4I_RXWIN_FORGE_H

#include "rxwin_parse.h"

/* The forged ACK is built here (too large for the stack beside the parser). */
struct rot_pseudo {
	__be32 saddr;
	__be32 daddr;
	__u8 zero;
	__u8 proto;
	__be16 len;
};

/* The TCP header (rxwin_parse.h) and the timestamp option a forged update repeats. */
struct rot_tcp {
	struct tcp_hdr_raw th;
	__u8 opt[4];
	__be32 tsval;
	__be32 tsecr;
};

struct rot_scratch {
	struct rot_pseudo ph;
	struct rot_tcp tcp;
	__u8 save[ROT_FRAME_LEN + 2];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rot_scratch);
} p4i_scratch SEC(".maps");

static __always_inline __u16 csum_fold16(__s64 c)
{
	__u64 x = (__u32)c;

	x = (x & 0xffff) + (x >> 16);
	x = (x & 0xffff) + (x >> 16);
	return (__u16)x;
}

/* What a forged window update for this flow needs, from each of its ACKs (the
 * handshake's included: a flow may wait from its first request on): our next
 * sequence number, its ack, its timestamps, and the Ethernet + IPv4 header of
 * a 66-byte pure ACK with timestamps (the only frame a grant is forged as). */
static __always_inline struct rot_flow *rot_note(struct __sk_buff *skb, struct flow_key *key,
						 struct pkt *p)
{
	struct rot_flow *r = bpf_map_lookup_elem(&p4i_rot_flows, key);

	if (!r) {
		struct rot_flow nr = {};

		bpf_map_update_elem(&p4i_rot_flows, key, &nr, BPF_NOEXIST);
		r = bpf_map_lookup_elem(&p4i_rot_flows, key);
		if (!r)
			return 0;
	}
	r->seq_next = p->seq + p->payload;
	r->advanced = p->ack != r->ack;
	r->ack = p->ack;
	if (p->o.has_ts) {
		r->tsval = p->o.tsval;
		r->tsecr = p->o.tsecr;
	}
	if (skb->len == ROT_FRAME_LEN && p->tcp_off == ROT_HDR_LEN && !p->payload && p->o.has_ts) {
		__u32 opt = 0;

		if (!bpf_skb_load_bytes(skb, ROT_HDR_LEN + 20, &opt, 4) &&
		    opt == bpf_htonl(0x0101080a) &&
		    !bpf_skb_load_bytes(skb, 0, r->hdr, ROT_HDR_LEN))
			r->has_hdr = 1;
	}
	return r;
}

/* Turn the pure ACK in skb (ROT_FRAME_LEN bytes) into flow bk's window update
 * offering `field`, send that copy, and put the ACK back as it was. The copy
 * is bk's last pure ACK as the sender saw it — its Ethernet and IP headers, our
 * next sequence number, its ack and timestamps — with the window changed: a
 * Linux sender takes it (same ack and sequence number, larger window:
 * tcp_may_update_window) and sends. The TCP checksum is computed whole; when
 * the stack left it to the device (CHECKSUM_PARTIAL: the field holds the
 * pseudo-header's sum, as in the ACK being sent), the copy's field is its
 * pseudo-header sum too. Returns 0 when the copy went out. */
static __always_inline int rot_forge(struct __sk_buff *skb, struct rot_flow *br,
				     struct flow_key *bk, __u32 ack, __u16 field)
{
	__u32 zero = 0;
	struct rot_scratch *sc = bpf_map_lookup_elem(&p4i_scratch, &zero);
	__u16 check_now;
	__s64 c;
	int partial;
	__u32 mark = skb->mark;
	long err;

	if (!sc)
		return -1;
	if (bpf_skb_load_bytes(skb, 0, sc->save, ROT_FRAME_LEN))
		return -1;
	/* Is the ACK being sent CHECKSUM_PARTIAL? Its field is then its own
	 * pseudo-header sum (a full checksum equal to that: 1 in 65535). */
	__builtin_memcpy(&sc->ph.saddr, &sc->save[ETH_HLEN + 12], 4);
	__builtin_memcpy(&sc->ph.daddr, &sc->save[ETH_HLEN + 16], 4);
	sc->ph.zero = 0;
	sc->ph.proto = IPPROTO_TCP_;
	sc->ph.len = bpf_htons(ROT_FRAME_LEN - ROT_HDR_LEN);
	c = bpf_csum_diff(0, 0, (__be32 *)&sc->ph, sizeof(sc->ph), 0);
	if (c < 0)
		return -1;
	__builtin_memcpy(&check_now, &sc->save[ROT_HDR_LEN + 16], 2);
	partial = check_now == csum_fold16(c);

	sc->ph.saddr = bk->laddr_be;
	sc->ph.daddr = bk->raddr_be;
	sc->tcp.th.source = bk->lport_be;
	sc->tcp.th.dest = bk->rport_be;
	sc->tcp.th.seq = bpf_htonl(br->seq_next);
	sc->tcp.th.ack_seq = bpf_htonl(ack);
	sc->tcp.th.doff_res = (ROT_FRAME_LEN - ROT_HDR_LEN) / 4 << 4;
	sc->tcp.th.flags = TH_ACK;
	sc->tcp.th.window = bpf_htons(field);
	sc->tcp.th.check = 0;
	sc->tcp.th.urg_ptr = 0;
	sc->tcp.opt[0] = 1;
	sc->tcp.opt[1] = 1;
	sc->tcp.opt[2] = 8;
	sc->tcp.opt[3] = 10;
	sc->tcp.tsval = bpf_htonl(br->tsval);
	sc->tcp.tsecr = bpf_htonl(br->tsecr);
	c = bpf_csum_diff(0, 0, (__be32 *)&sc->ph, sizeof(sc->ph), 0);
	if (c < 0)
		return -1;
	if (partial) {
		sc->tcp.th.check = csum_fold16(c);
	} else {
		c = bpf_csum_diff(0, 0, (__be32 *)&sc->tcp, sizeof(sc->tcp), (__u32)c);
		if (c < 0)
			return -1;
		sc->tcp.th.check = (__u16)~csum_fold16(c);
	}
	if (bpf_skb_store_bytes(skb, 0, br->hdr, ROT_HDR_LEN, 0) ||
	    bpf_skb_store_bytes(skb, ROT_HDR_LEN, &sc->tcp, sizeof(sc->tcp), 0))
		err = -1;
	else {
		skb->mark = RX_CLONE_MARK;
		err = bpf_clone_redirect(skb, skb->ifindex, 0);
		skb->mark = mark;
	}
	if (bpf_skb_store_bytes(skb, 0, sc->save, ROT_FRAME_LEN, 0))
		return -1;
	return err ? -1 : 0;
}

#endif
