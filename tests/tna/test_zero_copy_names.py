"""The handshake ACK's zero-window copy: its constants and headers in the P4 sources.

No Tofino compiler runs here, so what can be read off the sources is checked
(docs/tofino.md, "The handshake's ACK, twice"): the mirror session base and
the scale register's "opened by the receiver" bit are defined once, the
session base is the controller's, the sessions fit Tofino 1's, and the copy's
one-byte headers are told apart and never reach the wire.
"""

from __future__ import annotations

import re
from pathlib import Path

from p4incast.model import switch_budget

REPO = Path(__file__).resolve().parents[2]
P4SRC = REPO / "p4src"
TNA_MAIN = P4SRC / "tna/main.p4"

TOFINO1_PORT_BITS = 9
TOFINO1_LAST_NORMAL_SESSION = 1015  # 1016..1023: coalescing sessions


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


def test_session_base_is_the_controllers_within_tofino1_sessions() -> None:
    defs = _definitions("ZERO_COPY_SESSION_BASE")
    assert [f for f, _ in defs] == ["p4src/shared/sizes.p4"], defs
    # The sessions (base + port) the controller installs are the pipeline's.
    ((_f, base),) = defs
    assert base == switch_budget.ZERO_COPY_SESSION_BASE
    assert base >= 1
    assert base + (1 << TOFINO1_PORT_BITS) - 1 <= TOFINO1_LAST_NORMAL_SESSION


def test_opened_bit_sits_above_every_scale() -> None:
    opened = _definitions("RX_OPENED_BY_RX")
    assert [v for _, v in opened] == [0x10], opened
    # Bits 3:0 hold the scale: every known one (0..14) and the unknown one
    # (15 in bits 3:0, whether RX_SCALE_UNKNOWN is 0xff or 0x0f) fit below it.
    (unknown,) = {v for _, v in _definitions("RX_SCALE_UNKNOWN")}
    (wscale_max,) = {v for _, v in _definitions("TCP_WSCALE_MAX")}
    assert unknown & 0x0F == 0x0F
    assert wscale_max < 0x0F


def test_copy_headers_are_told_apart_and_stay_off_the_wire() -> None:
    text = TNA_MAIN.read_text()
    types = dict(re.findall(r"const pkt_type_t (PKT_TYPE_\w+)\s*=\s*(\w+);", text))
    assert set(types) == {"PKT_TYPE_NORMAL", "PKT_TYPE_ZERO_COPY"}
    assert _value(types["PKT_TYPE_NORMAL"]) != _value(types["PKT_TYPE_ZERO_COPY"])

    ingress_deparser = _block(text, "control P4IncastIngressDeparser(")
    assert "Mirror() zero_copy_mirror;" in ingress_deparser
    assert "zero_copy_mirror.emit<zero_copy_mirror_h>(md.zero_copy_session," in ingress_deparser
    # bridge_h goes first, before the packet's own headers.
    emits = re.findall(r"pkt\.emit\(([\w.]+)\);", ingress_deparser)
    assert emits[:2] == ["md.bridge", "hdr.ethernet"], emits

    egress_parser = _block(text, "parser P4IncastEgressParser(")
    assert re.search(r"PKT_TYPE_ZERO_COPY:\s*parse_zero_copy;", egress_parser)
    egress_deparser = _block(text, "control P4IncastEgressDeparser(")
    emits = re.findall(r"pkt\.emit\(([\w.]+)\);", egress_deparser)
    assert emits[0] == "hdr.ethernet" and not any("bridge" in e or "mirror" in e for e in emits)
