"""Agent tunables: defaults, bounds, one line each. A JSON/YAML file loads into
`AgentConfig`; command-line flags only override."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import yaml

from p4incast.agent.policies.ictcp import IctcpParams
from p4incast.model.scheme import (
    AGENT_POLICIES,
    BUDGET_AGENT,
    BUDGET_INIT_SEGS,
    RX_CUT_AGENTS,
    RX_MIN_SEGS,
)

__all__ = ["AgentConfig", "ConfigError", "TUNABLES", "start_segs"]

POLICY_NAMES = AGENT_POLICIES


class ConfigError(ValueError):
    """A configuration value a user supplied is unusable."""


# name: (default, min, max, description)
TUNABLES: dict[str, tuple[float, float, float, str]] = {
    "init_segs": (10, 1, 1000, "W of a new flow, in MSS"),
    "min_segs": (
        RX_MIN_SEGS,
        1,
        1000,
        "W floor, in MSS (1: literal rule; 1 segment waits for delayed ACKs)",
    ),
    "max_w": (4 << 20, 4096, 1 << 30, "largest W, bytes"),
    "rtt_limit_us": (2000, 1, 10_000_000, "flows with min RTT above this are left alone, us"),
    "idle_reset_s": (1.0, 0.001, 3600, "idle longer than this: W restarts (in BPF), s"),
    "idle_timeout_s": (30.0, 0.01, 86400, "idle longer than this: entry deleted, s"),
    "max_flows": (16384, 16, 1 << 20, "flow table size (LRU), entries"),
    "interval_ms": (5.0, 0.2, 1000, "userspace tick for ictcp/rcc and housekeeping, ms"),
    "capacity_mbps": (0, 0, 400_000, "ICTCP interface capacity C, Mbit/s (0: from sysfs)"),
    "queue_maxsize": (40, 1, 100_000, "RCC queue_maxsize, packets"),
    "ack_queue": (
        1,
        0,
        1,
        "rcc: 1 = RCC's ACK queue in the data path, at most queue_maxsize packets "
        "in flight (0: the window assignment alone, ablation)",
    ),
    "budget_bytes": (
        0,
        0,
        1 << 31,
        "newdctcp-budget: sum of all flows' windows, bytes (queue + bandwidth-delay product)",
    ),
    "rotate": (0, 0, 1, "newdctcp-budget: 1 = windows below one segment, flows take turns"),
    "sender_ecn": (
        0,
        0,
        1,
        "1 = leave ECE on our ACKs: the sender cuts on ECN too (ablation; "
        "0 = the policy's window is the only cut)",
    ),
}


def start_segs(policy: str, init_segs: int) -> int:
    """W of a new flow, MSS: ICTCP's and newdctcp-budget's own, else `init_segs`
    (the agent and the simulator's receiver both start flows here)."""
    if policy == "ictcp":
        return IctcpParams.init_segs
    # rcc: the floor of a new flow's share of Q (rxwin.bpf.c q_share): never a
    # handshake offering one segment, which halves the sender's segments
    return BUDGET_INIT_SEGS if policy in (BUDGET_AGENT, "rcc") else init_segs


@dataclass(frozen=True)
class AgentConfig:
    iface: str = ""
    policy: str = "newdctcp-rx"
    attach: str = "tcx"  # tcx | clsact
    init_segs: int = 10
    min_segs: int = 2
    max_w: int = 4 << 20
    rtt_limit_us: int = 2000
    idle_reset_s: float = 1.0
    idle_timeout_s: float = 30.0
    max_flows: int = 16384
    interval_ms: float = 5.0
    capacity_mbps: float = 0
    queue_maxsize: int = 40
    ack_queue: int = 1
    budget_bytes: int = 0
    rotate: int = 0
    sender_ecn: int = 0

    def validated(self) -> AgentConfig:
        if self.policy not in POLICY_NAMES:
            raise ConfigError(f"policy {self.policy!r}: one of {', '.join(POLICY_NAMES)}")
        if self.attach not in ("tcx", "clsact"):
            raise ConfigError(f"attach {self.attach!r}: tcx or clsact")
        for name, (_d, lo, hi, desc) in TUNABLES.items():
            v = getattr(self, name)
            if not lo <= v <= hi:
                raise ConfigError(f"{name}={v} out of range [{lo}, {hi}] ({desc})")
        if self.policy == BUDGET_AGENT and not self.budget_bytes:
            raise ConfigError(
                f"policy {BUDGET_AGENT} needs budget_bytes (--budget-bytes): what the "
                "bottleneck holds, queue + bandwidth-delay product, in bytes"
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
