"""Typed builders for the pipeline's table entries (finsy objects, keyword-only).

Each builder is pure and spells its table, action and parameters through
`p4names`, so an entry built here encodes against the p4info of either target.
"""

from __future__ import annotations

import finsy as fy

from . import p4names
from .config import EcnPolicy, Route
from .targets import Target


def route(*, prefix: str, port: int, smac: str, dmac: str) -> fy.P4TableEntry:
    """routes_v4 / routes_v6 entry: prefix -> route(port, smac, dmac)."""
    v6 = ":" in prefix
    return fy.P4TableEntry(
        p4names.ROUTES_V6 if v6 else p4names.ROUTES_V4,
        match=fy.Match({p4names.DST_ADDR: prefix}),
        action=fy.Action(
            p4names.ROUTE_V6 if v6 else p4names.ROUTE, port=port, smac=smac, dmac=dmac
        ),
    )


def route_from_config(r: Route, smac: str) -> fy.P4TableEntry:
    """A config route; smac is the MAC of the port it leaves by."""
    return route(prefix=r.prefix, port=r.port, smac=smac, dmac=r.dmac)


def ecn_policy_key(*, port: int) -> fy.P4TableEntry:
    """ecn_policy entry with only its match: to read (or delete) one port's policy."""
    return fy.P4TableEntry(p4names.ECN_POLICY, match=fy.Match({p4names.PORT_KEY: port}))


def ecn_policy(*, port: int, policy: EcnPolicy, target: Target) -> fy.P4TableEntry:
    """ecn_policy entry: egress port -> set_ecn_policy(mode, k, drop_k) in depth units."""
    mode, k, drop_k = policy.encoded(target)
    return fy.P4TableEntry(
        p4names.ECN_POLICY,
        match=fy.Match({p4names.PORT_KEY: port}),
        action=fy.Action(p4names.SET_ECN_POLICY, mode=mode, k=k, drop_k=drop_k),
    )


def rx_budget(*, port: int, floor_bytes: int, epoch_ticks: int) -> fy.P4TableEntry:
    """rx_budget entry: the receiver's port -> set_rx_budget(floor, epoch) (algorithms.md §8)."""
    return fy.P4TableEntry(
        p4names.RX_BUDGET,
        match=fy.Match({p4names.PORT_KEY: port}),
        action=fy.Action(p4names.SET_RX_BUDGET, floor_bytes=floor_bytes, epoch_ticks=epoch_ticks),
    )


def budget_share(*, port: int, flows: int, share_bytes: int) -> fy.P4TableEntry:
    """budget_share entry: (port, N active flows) -> set_share(share_bytes)."""
    return fy.P4TableEntry(
        p4names.BUDGET_SHARE,
        match=fy.Match({p4names.PORT_KEY: port, p4names.FLOWS_KEY: flows}),
        action=fy.Action(p4names.SET_SHARE, share_bytes=share_bytes),
    )
