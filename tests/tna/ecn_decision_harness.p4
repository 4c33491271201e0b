// Test harness: runs p4src/shared/ecn_decision.p4 (load_ecn_inputs, then
// EcnDecision on an IPv4 or IPv6 header) on BMv2 with its inputs taken from a
// probe header and its outputs written back into it, so
// tests/tna/test_ecn_decision_bmv2.py can compare the compiled decision with
// the rule it implements (docs/algorithms.md §1) over many input combinations.
#include <core.p4>
#define V1MODEL_VERSION 20200408  // counter<I>, as p4src/v1model/main.p4
#include <v1model.p4>

#define PORT_COUNTER(size) counter<port_t>(size, CounterType.packets_and_bytes)
// Record which action the decision ran, in meta.local.ecn_verdict.
#define ECN_DECISION_TRACE
#define LOCAL_METADATA_TARGET_FIELDS bit<8> ecn_verdict;
#include "../../p4src/shared/defines.p4"
#include "../../p4src/shared/sizes.p4"
#include "../../p4src/shared/headers.p4"
#include "../../p4src/shared/ecn_decision.p4"

// 16 bytes, every field right-aligned in whole bytes.
header probe_t {
    bit<6>     pad0;
    ecn_mode_t mode;
    bit<5>     pad1;
    qdepth_t   k;
    bit<5>     pad2;
    qdepth_t   drop_k;
    bit<5>     pad3;
    qdepth_t   enq_depth;
    bit<5>     pad4;
    qdepth_t   deq_depth;
    bit<6>     pad5;
    ecn_t      ecn_in;
    bit<6>     pad6;
    ecn_t      ecn_out;
    bit<2>     pad7;
    bit<1>     is_ipv6;    // run the decision on an IPv6 header (else IPv4)
    bit<1>     ect;
    bit<1>     ce_in;
    bit<1>     marked;
    bit<1>     not_ect_over_k;
    bit<1>     drop;
}

struct probe_headers_t {
    probe_t   probe;
    headers_t ip;      // the header the decision marks; never parsed or emitted
}

struct probe_meta_t {
    local_metadata_t local;
}

parser ProbeParser(packet_in pkt, out probe_headers_t hdr, inout probe_meta_t meta,
                   inout standard_metadata_t std_meta) {
    state start {
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control ProbeVerify(inout probe_headers_t hdr, inout probe_meta_t meta) {
    apply { }
}

control ProbeIngress(inout probe_headers_t hdr, inout probe_meta_t meta,
                     inout standard_metadata_t std_meta) {
    EcnDecision() decide;

    apply {
        // What the pipeline's parser does: copy the codepoint into meta.
        if (hdr.probe.is_ipv6 == 1) {
            hdr.ip.ipv6.setValid();
            hdr.ip.ipv6.ecn = hdr.probe.ecn_in;
        } else {
            hdr.ip.ipv4.setValid();
            hdr.ip.ipv4.ecn = hdr.probe.ecn_in;
        }
        meta.local.ecn = hdr.probe.ecn_in;
        meta.local.drop = false;
        // What the port's ecn_policy entry does, then the decision.
        load_ecn_inputs(meta.local, hdr.probe.mode, hdr.probe.k, hdr.probe.drop_k,
                        hdr.probe.enq_depth, hdr.probe.deq_depth);
        decide.apply(hdr.ip, meta.local, 1, hdr.probe.enq_depth);
        if (hdr.probe.is_ipv6 == 1) {
            hdr.probe.ecn_out = hdr.ip.ipv6.ecn;
        } else {
            hdr.probe.ecn_out = hdr.ip.ipv4.ecn;
        }
        bit<8> v = meta.local.ecn_verdict;
        hdr.probe.ect = (v & ECN_VERDICT_ECT) != 0 ? 1w1 : 1w0;
        hdr.probe.ce_in = (v & ECN_VERDICT_CE_IN) != 0 ? 1w1 : 1w0;
        hdr.probe.marked = (v & ECN_VERDICT_MARKED) != 0 ? 1w1 : 1w0;
        hdr.probe.not_ect_over_k = (v & ECN_VERDICT_NOT_ECT_OVER_K) != 0 ? 1w1 : 1w0;
        // The drop the pipeline acts on, checked against the verdict flag.
        hdr.probe.drop = meta.local.drop ? 1w1 : 1w0;
        if (meta.local.drop != ((v & ECN_VERDICT_DROP) != 0)) {
            hdr.probe.pad7 = 2w0b11;  // flags disagree: the test fails on it
        }
        std_meta.egress_spec = 1;
    }
}

control ProbeEgress(inout probe_headers_t hdr, inout probe_meta_t meta,
                    inout standard_metadata_t std_meta) {
    apply { }
}

control ProbeCompute(inout probe_headers_t hdr, inout probe_meta_t meta) {
    apply { }
}

control ProbeDeparser(packet_out pkt, in probe_headers_t hdr) {
    apply {
        pkt.emit(hdr.probe);
    }
}

V1Switch(ProbeParser(), ProbeVerify(), ProbeIngress(), ProbeEgress(), ProbeCompute(),
         ProbeDeparser()) main;
