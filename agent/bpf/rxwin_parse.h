/* SPDX-License-Identifier: Apache-2.0 */
/* rxwin: parsing a frame. Ethernet + IPv4 (no fragments) + TCP, with the TCP
 * options the data path needs (MSS, window scale, timestamps), read the way
 * Linux's tcp_parse_options() reads them. Python's reference of the same
 * parser: agent/policies/frames.py (parse_frame, parse_options). */
#ifndef P4I_RXWIN_PARSE_H
#define P4I_RXWIN_PARSE_H

#include "rxwin_maps.h"

#define ETH_HLEN 14
#define ETH_P_IP 0x0800
#define IPPROTO_TCP_ 6
#define TC_ACT_UNSPEC_ (-1)

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10
#define TH_ECE 0x40

struct tcp_hdr_raw {
	__be16 source;
	__be16 dest;
	__be32 seq;
	__be32 ack_seq;
	__u8 doff_res;
	__u8 flags;
	__be16 window;
	__sum16 check;
	__be16 urg_ptr;
};

struct tcp_opts {
	__u32 tsval;
	__u32 tsecr;
	__u16 mss;
	__u8 ws;
	__u8 has_mss;
	__u8 has_ws;
	__u8 has_ts;
	__u8 bad;
};

/* One parsed frame; addresses and ports in network order, the rest host. */
struct pkt {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u32 seq;
	__u32 ack;
	__u32 payload;
	__u32 tcp_off; /* offset of the TCP header in the frame */
	__u16 window;
	__u8 flags;
	__u8 ecn;
	struct tcp_opts o;
};

/* TCP options, the way tcp_parse_options() reads them: EOL ends the list,
 * NOP is one byte, any other option needs a length byte >= 2 that fits in the
 * header. A bad length stops parsing; options read so far are kept. One
 * option per bpf_loop() step keeps the verifier's work independent of the
 * option layout. */
struct opt_walk {
	__u8 buf[64];
	__u32 i;
	__u32 optlen;
	struct tcp_opts o;
};

static __always_inline __u32 be32_at(const __u8 *b, __u32 i)
{
	return ((__u32)b[i & 63] << 24) | ((__u32)b[(i + 1) & 63] << 16) |
	       ((__u32)b[(i + 2) & 63] << 8) | b[(i + 3) & 63];
}

static long opt_step(__u64 index, void *ctx)
{
	struct opt_walk *w = ctx;
	__u32 i = w->i;
	__u8 kind, len;

	if (i >= w->optlen)
		return 1;
	kind = w->buf[i & 63];
	if (kind == 0)
		return 1;
	if (kind == 1) {
		w->i = i + 1;
		return 0;
	}
	if (i + 1 >= w->optlen) {
		w->o.bad = 1;
		return 1;
	}
	len = w->buf[(i + 1) & 63];
	if (len < 2 || i + len > w->optlen) {
		w->o.bad = 1;
		return 1;
	}
	if (kind == 2) {
		if (len == 4) {
			w->o.mss = ((__u16)w->buf[(i + 2) & 63] << 8) | w->buf[(i + 3) & 63];
			w->o.has_mss = 1;
		} else {
			w->o.bad = 1;
		}
	} else if (kind == 3) {
		if (len == 3) {
			w->o.ws = w->buf[(i + 2) & 63];
			w->o.has_ws = 1;
		} else {
			w->o.bad = 1;
		}
	} else if (kind == 8) {
		if (len == 10) {
			w->o.tsval = be32_at(w->buf, i + 2);
			w->o.tsecr = be32_at(w->buf, i + 6);
			w->o.has_ts = 1;
		} else {
			w->o.bad = 1;
		}
	}
	w->i = i + len;
	return 0;
}

static __always_inline void parse_opts(struct __sk_buff *skb, __u32 off, __u32 optlen,
				       struct tcp_opts *o)
{
	struct opt_walk w = {};

	if (optlen == 0)
		return;
	if (optlen > 40 || bpf_skb_load_bytes(skb, off, w.buf, optlen)) {
		o->bad = 1;
		return;
	}
	w.optlen = optlen;
	bpf_loop(40, opt_step, &w, 0);
	*o = w.o;
}

/* Ethernet + IPv4 (no fragments) + TCP, else -1. */
static __always_inline int parse(struct __sk_buff *skb, struct pkt *p)
{
	struct iphdr iph;
	struct tcp_hdr_raw th;
	__u32 ihl, doff, tot;

	if (skb->protocol != bpf_htons(ETH_P_IP))
		return -1;
	if (bpf_skb_load_bytes(skb, ETH_HLEN, &iph, sizeof(iph)))
		return -1;
	if (iph.version != 4 || iph.protocol != IPPROTO_TCP_)
		return -1;
	if (iph.frag_off & bpf_htons(0x3fff))
		return -1;
	ihl = iph.ihl * 4;
	if (ihl < 20)
		return -1;
	p->tcp_off = ETH_HLEN + ihl;
	if (bpf_skb_load_bytes(skb, p->tcp_off, &th, sizeof(th)))
		return -1;
	doff = (th.doff_res >> 4) * 4;
	tot = bpf_ntohs(iph.tot_len);
	if (doff < 20 || tot < ihl + doff)
		return -1;
	p->saddr = iph.saddr;
	p->daddr = iph.daddr;
	p->sport = th.source;
	p->dport = th.dest;
	p->seq = bpf_ntohl(th.seq);
	p->ack = bpf_ntohl(th.ack_seq);
	p->window = bpf_ntohs(th.window);
	p->flags = th.flags;
	p->ecn = iph.tos & 3;
	p->payload = tot - ihl - doff;
	parse_opts(skb, p->tcp_off + 20, doff - 20, &p->o);
	if (p->o.bad)
		stat_inc(ST_BAD_OPTS);
	return 0;
}

#endif
