"""The handshake ACK's zero-window copy: its constants and parser in the P4 sources.

No Tofino compiler runs here, so what can be read off the sources is checked
(docs/tofino.md, "The handshake's ACK, twice"): the multicast group base and
the copy's replication id are defined once and are the controller's, the
groups fit a multicast group id, the scale register's "opened by the
receiver" bit sits above every scale, the egress parser tells the copy by
its egress_rid, and nothing but the packet's own headers is emitted (no
mirror, no bridged byte).
"""

from __future__ import annotations

import re
from pathlib import Path

from p4incast.model import switch_budget

REPO = Path(__file__).resolve().parents[2]
P4SRC = REPO / "p4src"
TNA_MAIN = P4SRC / "tna/main.p4"

TOFINO1_PORT_BITS = 9
MULTICAST_GROUP_ID_BITS = 16  # tna.p4's MulticastGroupId_t; group 0 is no group


def _value(text: str) -> int:
    """A P4 integer literal: 256, 0x10, 8w0x10."""
    return int(re.sub(r"^\d+[ws]", "", text.strip()), 0)


def _definitions(name: str) -> list[tuple[str, int]]:
    """Every `#define NAME v` and `const T NAME = v;` under p4src, as (file, value)."""
    out: list[tuple[str, int]] = []
    for path in sorted(P4SRC.rglob("*.p4")):
        text = path.read_text()
        rel = str(path.relative_to(REPO))
        for m in re.finditer(rf"^\s*#define\s+{name}\s+(\S+)", text, re.M):
            out.append((rel, _value(m.group(1))))
        for m in re.finditer(rf"^\s*const\s+[^=;]*\b{name}\s*=\s*([^;]+);", text, re.M):
            out.append((rel, _value(m.group(1))))
    return out


def _block(text: str, header: str) -> str:
    """The body of the control or parser that starts with `header`, to its closing brace."""
    start = text.index(header)
    depth = 0
    for i in range(text.index("{", start), len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start : i + 1]
    raise AssertionError(f"unbalanced braces after {header}")


def test_group_base_and_rid_are_the_controllers_and_fit() -> None:
    base_defs = _definitions("ZERO_COPY_GROUP_BASE")
    rid_defs = _definitions("ZERO_COPY_RID")
    assert [f for f, _ in base_defs] == ["p4src/shared/sizes.p4"], base_defs
    assert [f for f, _ in rid_defs] == ["p4src/shared/sizes.p4"], rid_defs
    # The groups (base + port) and the replica the controller writes are the
    # pipeline's.
    ((_f, base),) = base_defs
    ((_f, rid),) = rid_defs
    assert base == switch_budget.ZERO_COPY_GROUP_BASE
    assert rid == switch_budget.ZERO_COPY_RID
    assert base >= 1
    assert base + (1 << TOFINO1_PORT_BITS) - 1 < 1 << MULTICAST_GROUP_ID_BITS
    # A unicast packet and the group's first replica have egress_rid 0.
    assert rid != 0
    # Nothing of the mirror is left under p4src.
    assert _definitions("ZERO_COPY_SESSION_BASE") == []


def test_opened_bit_sits_above_every_scale() -> None:
    opened = _definitions("RX_OPENED_BY_RX")
    assert [v for _, v in opened] == [0x10], opened
    # Bits 3:0 hold the scale: every known one (0..14) and the unknown one
    # (15 in bits 3:0, whether RX_SCALE_UNKNOWN is 0xff or 0x0f) fit below it.
    (unknown,) = {v for _, v in _definitions("RX_SCALE_UNKNOWN")}
    (wscale_max,) = {v for _, v in _definitions("TCP_WSCALE_MAX")}
    assert unknown & 0x0F == 0x0F
    assert wscale_max < 0x0F


def test_ingress_sends_the_copy_by_the_ports_group() -> None:
    text = TNA_MAIN.read_text()
    ingress = _block(text, "control P4IncastIngress(")
    # The group is set where zero_copy is, and the unicast port elsewhere only.
    m = re.search(
        r"else if \(hdr\.budget\.isValid\(\) && hdr\.budget\.zero_copy == 1\) \{"
        r"(?P<mcast>.*?)\} else \{(?P<ucast>.*?)\}",
        ingress,
        re.S,
    )
    assert m, "no multicast branch on hdr.budget.zero_copy in P4IncastIngress"
    assert re.search(
        r"ig_tm_md\.mcast_grp_a\s*=\s*ZERO_COPY_GROUP_BASE\s*\+\s*"
        r"\((?:MulticastGroupId_t|bit<16>)\)egress_port;",
        m.group("mcast"),
    )
    assert "ucast_egress_port" not in m.group("mcast")
    assert "ig_tm_md.ucast_egress_port = egress_port;" in m.group("ucast")
    assert len(re.findall(r"ig_tm_md\.mcast_grp_a\s*=", text)) == 1


def test_egress_tells_the_copy_by_its_rid_and_emits_no_extra_header() -> None:
    text = TNA_MAIN.read_text()
    for gone in ("Mirror", "mirror_type", "bridge_h", "zero_copy_mirror_h", "pkt_type_t"):
        assert not re.search(rf"\b{gone}\b", text), gone

    egress_parser = _block(text, "parser P4IncastEgressParser(")
    start = _block(egress_parser, "state start")
    m = re.search(r"transition select\(eg_intr_md\.egress_rid\)\s*\{(.*?)\}", start, re.S)
    assert m, start
    arms = dict(re.findall(r"(\w+)\s*:\s*(\w+);", m.group(1)))
    assert arms == {"ZERO_COPY_RID": arms["ZERO_COPY_RID"], "default": "parse_ethernet"}, arms
    # The copy's states set zero_copy and reach TCP with the residual.
    copy_state = _block(egress_parser, f"state {arms['ZERO_COPY_RID']}")
    assert "md.zero_copy = 1;" in copy_state
    assert "pkt.extract(hdr.tcp);" in _block(egress_parser, "state zero_copy_tcp")
    assert "md.zero_copy = 1" not in _block(egress_parser, "state parse_ethernet")

    egress = _block(text, "control P4IncastEgress(")
    assert re.search(r"if \(md\.zero_copy == 1\) \{\s*hdr\.tcp\.window = 0;", egress)

    # The ingress deparser emits the packet's headers only, Ethernet first;
    # the egress deparser the same, and fixes the copy's checksum.
    ingress_deparser = _block(text, "control P4IncastIngressDeparser(")
    emits = re.findall(r"pkt\.emit\(([\w.]+)\);", ingress_deparser)
    assert emits and emits[0] == "hdr.ethernet" and all(e.startswith("hdr.") for e in emits), emits
    egress_deparser = _block(text, "control P4IncastEgressDeparser(")
    emits = re.findall(r"pkt\.emit\(([\w.]+)\);", egress_deparser)
    assert emits == ["hdr.ethernet", "hdr.ipv4", "hdr.ipv4_options", "hdr.ipv6", "hdr.tcp"], emits
    assert re.search(
        r"if \(md\.zero_copy == 1\) \{\s*hdr\.tcp\.checksum = tcp_checksum\.update\("
        r"\{hdr\.tcp\.window, md\.tcp_residual\}\);",
        egress_deparser,
    )
