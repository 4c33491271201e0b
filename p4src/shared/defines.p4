// p4-incast: target-independent types and constants (core.p4 only).
//
// Every unit is stated next to the value. Queue depth is in the target's own
// unit: packets on BMv2 (v1model), 80-byte cells on Tofino 1 (TNA); the
// controller converts what the user gives (packets or bytes) before it writes
// a threshold.
#ifndef P4INCAST_DEFINES_P4
#define P4INCAST_DEFINES_P4

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<128> ipv6_addr_t;
typedef bit<9>  port_t;         // egress/ingress port number (both targets)
typedef bit<19> qdepth_t;       // queue depth, target unit (packets | cells)
typedef bit<2>  ecn_t;          // ECN codepoint, RFC 3168
typedef bit<2>  ecn_mode_t;     // per-port marking mode, set by the controller
typedef bit<32> counter_index_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_IPV6 = 0x86dd;
const bit<8>  IP_PROTO_TCP   = 6;
const bit<8>  IP_PROTO_UDP   = 17;

// ECN codepoints (low two bits of IPv4 TOS / IPv6 traffic class).
const ecn_t ECN_NOT_ECT = 2w0b00;
const ecn_t ECN_ECT1    = 2w0b01;
const ecn_t ECN_ECT0    = 2w0b10;
const ecn_t ECN_CE      = 2w0b11;

// Marking modes (docs/algorithms.md §1). Any other value behaves as OFF.
const ecn_mode_t ECN_MODE_OFF        = 0;  // never mark
const ecn_mode_t ECN_MODE_MARK_TAIL  = 1;  // DCTCP: depth seen at enqueue >= K
const ecn_mode_t ECN_MODE_MARK_FRONT = 2;  // NewDCTCP: depth left at dequeue >= K

// Why ingress dropped a packet: the index into ingress_drop_stats.
const counter_index_t DROP_ROUTE_MISS   = 0;  // no IPv4/IPv6 route matched
const counter_index_t DROP_NOT_IP       = 1;  // neither IPv4 nor IPv6
const counter_index_t DROP_PARSER_ERROR = 2;  // truncated or malformed headers
const counter_index_t DROP_BAD_CHECKSUM = 3;  // IPv4 header checksum wrong
const counter_index_t DROP_TTL_EXPIRED  = 4;  // IPv4 TTL / IPv6 hop limit <= 1
const counter_index_t DROP_REASONS      = 5;

// TCP (RFC 9293 §3.1) and its window-scale option (RFC 7323 §2).
const bit<8> TCP_FLAG_FIN  = 0x01;
const bit<8> TCP_FLAG_SYN  = 0x02;
const bit<8> TCP_FLAG_RST  = 0x04;
const bit<8> TCP_FLAG_ACK  = 0x10;
const bit<8> TCP_OPT_EOL   = 0;
const bit<8> TCP_OPT_NOP   = 1;
const bit<8> TCP_OPT_WSCALE = 3;
const bit<8> TCP_WSCALE_MAX = 14;       // a larger shift counts as 14 (RFC 7323 §2.3)
// A flow's scale as the flow table keeps it: bits 3:0 the shift (0..14) or
// RX_SCALE_UNKNOWN, bit 4 RX_OPENED_BY_RX (the receiver opened the flow: its
// SYN had no ACK; docs/algorithms.md §8, "The handshake's ACK, twice").
const bit<8> RX_SCALE_UNKNOWN = 0x0f;   // the switch did not read the flow's scale
const bit<8> RX_OPENED_BY_RX = 0x10;

#endif  // P4INCAST_DEFINES_P4
