// Test harness: runs p4src/shared/ecn_decision.p4 on BMv2 with its inputs
// taken from a probe header and its outputs written back into it, so
// tests/tna/test_ecn_decision_bmv2.py can compare the compiled decision with
// the rule it implements (ALGORITHMS.md §1) over many input combinations.
#include <core.p4>
#include <v1model.p4>

#include "../../p4src/shared/defines.p4"
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
    bit<3>     pad7;
    bit<1>     ect;
    bit<1>     ce_in;
    bit<1>     marked;
    bit<1>     not_ect_over_k;
    bit<1>     drop;
}

struct probe_headers_t {
    probe_t probe;
}

struct probe_meta_t {}

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
        ecn_t ecn = hdr.probe.ecn_in;
        ecn_verdict_t v;
        decide.apply(hdr.probe.mode, hdr.probe.k, hdr.probe.drop_k,
                     hdr.probe.enq_depth, hdr.probe.deq_depth, ecn, v);
        hdr.probe.ecn_out = ecn;
        hdr.probe.ect = v.ect ? 1w1 : 1w0;
        hdr.probe.ce_in = v.ce_in ? 1w1 : 1w0;
        hdr.probe.marked = v.marked ? 1w1 : 1w0;
        hdr.probe.not_ect_over_k = v.not_ect_over_k ? 1w1 : 1w0;
        hdr.probe.drop = v.drop ? 1w1 : 1w0;
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
