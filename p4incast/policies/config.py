"""The receiver policies' tunables: `AgentConfig`, each tunable field with its
default, bounds and a one-line description (`tunables()`). The host agent
loads a JSON/YAML file into it (command-line flags only override); the
simulator's receiver runs its defaults, so both engines run the same policy."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from p4incast.model.scheme import (
    AGENT_POLICIES,
    BUDGET_AGENT,
    BUDGET_INIT_SEGS,
    RCC_RTO_R_MS,
    RX_CUT_AGENTS,
    RX_MIN_SEGS,
)
from p4incast.policies.ictcp import IctcpParams
from p4incast.policies.rxwin_h import RXWIN

__all__ = [
    "POLICY_MODES",
    "AgentConfig",
    "ConfigError",
    "Tunable",
    "data_path_rtt_limit_us",
    "start_segs",
    "tunables",
]

POLICY_NAMES = AGENT_POLICIES

# How the receiver's data path runs each policy (rx_config.policy, the
# RX_POLICY_* of agent/bpf/rx_policy.h; the simulator's receiver takes the
# same codes): ictcp and rcc are "user" policies, their W written by userspace.
POLICY_MODES: dict[str, int] = {
    "off": RXWIN.RX_POLICY_OFF,
    "observe": RXWIN.RX_POLICY_OBSERVE,
    "newdctcp-rx": RXWIN.RX_POLICY_NEWDCTCP,
    "ictcp": RXWIN.RX_POLICY_USER,
    "rcc": RXWIN.RX_POLICY_USER,
    BUDGET_AGENT: RXWIN.RX_POLICY_BUDGET,
}
assert set(POLICY_MODES) == set(POLICY_NAMES), "every agent policy needs a data-path mode"


class ConfigError(ValueError):
    """A configuration value a user supplied is unusable."""


def start_segs(policy: str, init_segs: int) -> int:
    """W of a new flow, MSS: ICTCP's own, else `init_segs` (the agent and the
    simulator's receiver both start flows here). newdctcp-budget: what the
    handshake's copy offers; its W itself starts at B, capped at the share
    (docs/algorithms.md §3.6)."""
    if policy == "ictcp":
        return IctcpParams.init_segs
    # rcc: the floor of a new flow's share of Q (agent/bpf/rxwin_rules.h q_share):
    # never a handshake offering one segment, which halves the sender's segments
    return BUDGET_INIT_SEGS if policy in (BUDGET_AGENT, "rcc") else init_segs


# rx_config.rtt_limit_us (a __u32) that no minimum RTT exceeds
NO_RTT_LIMIT_US = 0xFFFFFFFF


def data_path_rtt_limit_us(policy: str, rtt_limit_us: int) -> int:
    """rx_config.rtt_limit_us for `policy`: flows whose minimum RTT is above it
    are left alone. rcc: none (seed 002 controls every flow of the NIC, §4.1)."""
    return NO_RTT_LIMIT_US if policy == "rcc" else rtt_limit_us


def _tunable(default: float, lo: float, hi: float, desc: str) -> Any:
    """A tunable field: its default, its bounds [lo, hi], one line of description."""
    return field(default=default, metadata={"bounds": (lo, hi), "desc": desc})


class Tunable(NamedTuple):
    name: str
    default: float
    lo: float
    hi: float
    desc: str


@dataclass(frozen=True)
class AgentConfig:
    iface: str = ""
    policy: str = "newdctcp-rx"
    attach: str = "tcx"  # tcx | clsact
    init_segs: int = _tunable(10, 1, 1000, "W of a new flow, in MSS")
    min_segs: int = _tunable(
        RX_MIN_SEGS, 1, 1000, "W floor, in MSS (1: literal rule; 1 segment waits for delayed ACKs)"
    )
    max_w: int = _tunable(4 << 20, 4096, 1 << 30, "largest W, bytes")
    rtt_limit_us: int = _tunable(
        RXWIN.RX_RTT_LIMIT_US,
        1,
        10_000_000,
        "flows whose min RTT is larger are left alone (not rcc), us",
    )
    idle_reset_s: float = _tunable(
        RXWIN.RX_IDLE_RESET_MS / 1000,
        0.001,
        3600,
        "idle longer than this: W restarts (newdctcp-rx: no packet, in BPF; "
        "ictcp: no data, slow start again from 2 MSS), s",
    )
    idle_timeout_s: float = _tunable(30.0, 0.01, 86400, "idle longer than this: entry deleted, s")
    max_flows: int = _tunable(16384, 16, 1 << 20, "flow table size (LRU), entries")
    interval_ms: float = _tunable(
        5.0, 0.2, 1000, "userspace tick for ictcp/rcc and housekeeping, ms"
    )
    # its default is an int: file and flag values are read as whole Mbit/s
    capacity_mbps: float = _tunable(
        0, 0, 400_000, "ICTCP interface capacity C, Mbit/s (0: from sysfs)"
    )
    queue_maxsize: int = _tunable(40, 1, 100_000, "RCC queue_maxsize, packets")
    ack_queue: int = _tunable(
        1,
        0,
        1,
        "rcc: 1 = RCC's ACK queue in the data path, at most queue_maxsize packets "
        "in flight (0: the window assignment alone, ablation)",
    )
    # a float default: file and flag values are read as ms with a fraction
    rcc_rto_r_ms: float = _tunable(
        RCC_RTO_R_MS,
        0,
        600_000,
        "rcc: the receiver timer RTO^r (RCC Algorithm 3), first value, ms; runs with "
        "the ACK queue (0: none, ablation)",
    )
    budget_bytes: int = _tunable(
        0,
        0,
        1 << 31,
        "newdctcp-budget: sum of all flows' windows, bytes (what the bottleneck's queue holds)",
    )
    rotate: int = _tunable(
        0, 0, 1, "newdctcp-budget: 1 = windows below one segment, flows take turns"
    )
    ack_cost: int = _tunable(
        0,
        0,
        1 << 16,
        "rotate: bytes of budget_bytes one acknowledgment of our data takes while it "
        "is due (a pure ACK's share of the bottleneck's queue; 0: none)",
    )
    sender_ecn: int = _tunable(
        0,
        0,
        1,
        "1 = leave ECE on our ACKs: the sender cuts on ECN too (ablation; "
        "0 = the policy's window is the only cut)",
    )

    def validated(self) -> AgentConfig:
        if self.policy not in POLICY_NAMES:
            raise ConfigError(f"policy {self.policy!r}: one of {', '.join(POLICY_NAMES)}")
        if self.attach not in ("tcx", "clsact"):
            raise ConfigError(f"attach {self.attach!r}: tcx or clsact")
        for t in tunables():
            v = getattr(self, t.name)
            if not t.lo <= v <= t.hi:
                raise ConfigError(f"{t.name}={v} out of range [{t.lo}, {t.hi}] ({t.desc})")
        if self.policy == BUDGET_AGENT and not self.budget_bytes:
            raise ConfigError(
                f"policy {BUDGET_AGENT} needs budget_bytes (--budget-bytes): what the "
                "bottleneck's queue holds, in bytes"
            )
        if self.rotate and self.policy != BUDGET_AGENT:
            raise ConfigError(f"rotate={self.rotate}: only policy {BUDGET_AGENT} rotates windows")
        if self.sender_ecn and self.policy not in RX_CUT_AGENTS:
            raise ConfigError(
                f"sender_ecn={self.sender_ecn}: policy {self.policy} never clears ECE "
                f"(only {', '.join(RX_CUT_AGENTS)} do)"
            )
        return self

    @classmethod
    def load(cls, path: Path) -> AgentConfig:
        try:
            text = path.read_text()
        except OSError as e:
            raise ConfigError(f"cannot read {path}: {e.strerror}") from None
        is_yaml = path.suffix in (".yaml", ".yml")
        data: Any = yaml.safe_load(text) if is_yaml else json.loads(text)
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of tunables")
        return cls().override(**data)

    def override(self, **kw: Any) -> AgentConfig:
        known = {f.name: f.type for f in fields(self)}
        clean: dict[str, Any] = {}
        for k, v in kw.items():
            k = k.replace("-", "_")
            if k not in known:
                raise ConfigError(f"unknown tunable {k!r}; known: {', '.join(known)}")
            if v is not None:
                default = getattr(AgentConfig, k)
                try:
                    clean[k] = type(default)(v)
                except (TypeError, ValueError):
                    raise ConfigError(f"{k}={v!r}: expected {type(default).__name__}") from None
        return replace(self, **clean)


def tunables() -> tuple[Tunable, ...]:
    """AgentConfig's tunables in field order: name, default, bounds, description."""
    return tuple(
        Tunable._make((f.name, f.default, *f.metadata["bounds"], f.metadata["desc"]))
        for f in fields(AgentConfig)
        if "bounds" in f.metadata
    )
