/* SPDX-License-Identifier: Apache-2.0 */
/* rxwin's maps and the small accessors every part of the data path uses.
 * Included by rxwin.bpf.c only (through the other rxwin_*.h): BPF needs the
 * three programs and their maps in one object. The value layouts are in
 * rxwin.h, which the Python agent reads too. */
#ifndef P4I_RXWIN_MAPS_H
#define P4I_RXWIN_MAPS_H

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "rxwin.h"

#ifndef P4I_MAX_FLOWS
#define P4I_MAX_FLOWS 16384
#endif

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rx_config);
} p4i_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, P4I_MAX_FLOWS);
	__type(key, struct flow_key);
	__type(value, struct flow);
} p4i_flows SEC(".maps");

/* ictcp, rcc: the key of every flow new_flow creates, so that userspace
 * controls it from its next tick instead of finding it in a table scan. A
 * key that finds the ring full is lost; userspace's slower scan finds that
 * flow. 64 KiB: 4096 records of 16 bytes (8 of header, 12 of key, padded). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} p4i_newflows SEC(".maps");

/* ictcp, rcc: the W userspace computed for a flow, bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, P4I_MAX_FLOWS);
	__type(key, struct flow_key);
	__type(value, __u32);
} p4i_wset SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} p4i_stats SEC(".maps");

/* The flows whose handshake was seen (FL_COUNTED entries): newdctcp-budget's
 * F, the rotation's ceiling, rcc's share of Q. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} p4i_budget SEC(".maps");

/* Rotation (newdctcp-budget with config.rotate): H and its counts, each flow's
 * state, the queue of waiting flows. p4i_rot_flows also keeps, for every flow
 * a window update may be forged for (rotation and rcc's ACK queue), what the
 * update repeats of its last pure ACK (rxwin_forge.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rot_global);
} p4i_rot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, P4I_MAX_FLOWS);
	__type(key, struct flow_key);
	__type(value, struct rot_flow);
} p4i_rot_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, P4I_MAX_FLOWS);
	__type(value, struct flow_key);
} p4i_rotq SEC(".maps");

/* RCC's ACK queue (config.ackq_pkts; rxwin_ackq.h): each flow's state, the
 * FIFO of held ACKs (flow and ticket), the total in flight. */
struct ackq_entry {
	struct flow_key key;
	__u32 ticket; /* its flow's ticket when queued: stale once that moved on */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, P4I_MAX_FLOWS);
	__type(key, struct flow_key);
	__type(value, struct ackq_flow);
} p4i_ackq_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, P4I_MAX_FLOWS * ACKQ_ENTRIES_PER_FLOW);
	__type(value, struct ackq_entry);
} p4i_ackq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ackq_global);
} p4i_ackq_g SEC(".maps");

static __always_inline struct rx_config *get_config(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&p4i_config, &zero);
}

/* Statistics counters may lose an increment when two CPUs race on one. */
static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&p4i_stats, &idx);

	if (v)
		*v += 1;
}

/* The count of flows whose handshake was seen moves by d. */
static __always_inline void budget_add(__s64 d)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&p4i_budget, &zero);

	if (n)
		__sync_fetch_and_add(n, d);
}

/* The flows whose handshake was seen, at least 1. */
static __always_inline __u64 counted_flows(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&p4i_budget, &zero);

	return n && (__s64)*n > 0 ? *n : 1;
}

static __always_inline struct rot_global *rot_global(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&p4i_rot, &zero);
}

static __always_inline struct ackq_global *ackq_global(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&p4i_ackq_g, &zero);
}

#endif
