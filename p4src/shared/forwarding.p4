// p4-incast: IPv4/IPv6 LPM routing with next-hop MAC rewrite.
//
// The target wrapper must define PORT_COUNTER(size) and INDEX_COUNTER(size)
// (see ecn_marker.p4) and DROP_PORT, the egress port value that makes the
// target drop a packet (v1model: 511, simple_switch's drop port; a target that
// drops by other means reads meta.drop and may define any value), and tell
// this control whether the parser and the IPv4 checksum check passed.
#ifndef P4INCAST_FORWARDING_P4
#define P4INCAST_FORWARDING_P4

#include "defines.p4"
#include "sizes.p4"
#include "headers.p4"

// IngressForwarding: drops malformed packets (parser error, bad IPv4 header
// checksum, TTL/hop limit expired) and non-IP frames, looks up the destination
// in routes_v4 / routes_v6, rewrites both MACs, decrements TTL / hop limit,
// and counts drops by reason and routed packets by egress port. Every route
// comes from the controller; a miss drops. Runs first in ingress.
control IngressForwarding(inout headers_t        hdr,
                          inout local_metadata_t meta,
                          in    bool             parser_ok,
                          in    bool             checksum_ok,
                          out   port_t           egress_port) {
    INDEX_COUNTER(DROP_REASONS) ingress_drop_stats;    // index: DROP_*
    PORT_COUNTER(PORT_STATS_SIZE) routed_stats;       // index: egress port

    // Every path through this control runs exactly one of the actions below,
    // and counts once; the drops set meta.drop, which the target's parser
    // starts at false (v1model zeroes metadata): on BMv2 every table, condition
    // and block of statements between them costs about the same per packet,
    // so the common case (valid IPv4/IPv6, route hit) is one condition and
    // one table (`make bench` measures it against a minimal router).

    action drop_packet(counter_index_t reason) {
        meta.drop = true;
        egress_port = DROP_PORT;
        ingress_drop_stats.count(reason);
    }

    // The miss counts in apply, not here: Tofino wants every action of a
    // table to address an indirect counter the same way, and route addresses
    // routed_stats by port.
    action route_miss() {
        meta.drop = true;
        egress_port = DROP_PORT;
    }

    // port: egress port; smac: this port's MAC; dmac: next hop's MAC.
    action route(port_t port, mac_addr_t smac, mac_addr_t dmac) {
        egress_port = port;
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        routed_stats.count(port);
    }

    // The same for IPv6 (hop limit instead of TTL). A separate action so that
    // no action writes a header that is not valid.
    action route_v6(port_t port, mac_addr_t smac, mac_addr_t dmac) {
        egress_port = port;
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
        routed_stats.count(port);
    }

    table routes_v4 {
        key = {
            hdr.ipv4.dst_addr : lpm @name("dst_addr");
        }
        actions = {
            route;
            @defaultonly route_miss;
        }
        const default_action = route_miss();
        size = ROUTES_V4_SIZE;
    }

    table routes_v6 {
        key = {
            hdr.ipv6.dst_addr : lpm @name("dst_addr");
        }
        actions = {
            route_v6;
            @defaultonly route_miss;
        }
        const default_action = route_miss();
        size = ROUTES_V6_SIZE;
    }

    apply {
        if (parser_ok && checksum_ok && hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
            if (!routes_v4.apply().hit) {
                ingress_drop_stats.count(DROP_ROUTE_MISS);
            }
        } else if (parser_ok && hdr.ipv6.isValid() && hdr.ipv6.hop_limit > 1) {
            if (!routes_v6.apply().hit) {
                ingress_drop_stats.count(DROP_ROUTE_MISS);
            }
        } else if (!parser_ok) {
            drop_packet(DROP_PARSER_ERROR);
        } else if (hdr.ipv4.isValid() && !checksum_ok) {
            drop_packet(DROP_BAD_CHECKSUM);
        } else if (hdr.ipv4.isValid() || hdr.ipv6.isValid()) {
            drop_packet(DROP_TTL_EXPIRED);
        } else {
            drop_packet(DROP_NOT_IP);
        }
    }
}

#endif  // P4INCAST_FORWARDING_P4
