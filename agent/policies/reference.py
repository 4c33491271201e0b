"""The receiver's whole data path in Python: frames in, advertised windows out.

Reference of agent/bpf/rxwin.bpf.c and rxwin_hooks.h, hook for hook: the
same flow table (newdctcp_rx.RxFlow), the same dispatch on the policy, and
each policy's rule where its module keeps it — newdctcp-rx (newdctcp_rx),
newdctcp-budget and its rotation (budget), and the window the Python
policies ictcp and rcc write (ictcp.py, rcc.py; here `user_w`, and rcc's
share of Q until then). The conformance tests (tests/agent) drive one packet
trace through the BPF programs (BPF_PROG_TEST_RUN) and through RxReference
and compare every window field, copy and forged frame exactly. RCC's ACK
queue has its own reference, rcc.AckQueue.
"""

from __future__ import annotations

from functools import partial

from p4incast.agent.policies.budget import (
    BUDGET_POLICY,
    Rotation,
    budget_share,
    budget_window,
)
from p4incast.agent.policies.frames import ACK, FIN, RST, SYN, Frame, parse_frame, u32
from p4incast.agent.policies.newdctcp_rx import RxFlow
from p4incast.policies.config import AgentConfig
from p4incast.policies.rcc import equal_share

__all__ = ["RxReference"]

Key = tuple[str, int, str, int]


class RxReference:
    """The whole data path in Python: feed frames in order, get egress windows back."""

    def __init__(
        self,
        policy: str = "newdctcp-rx",
        init_segs: int = AgentConfig.init_segs,
        max_w: int = AgentConfig.max_w,
        min_segs: int = AgentConfig.min_segs,
        budget: int = 0,
        rotate: int = 0,
        share_pkts: int = 0,
        ack_cost: int = 0,
    ) -> None:
        self.policy = policy
        self.share_pkts = share_pkts  # rcc: Q, a new flow's window is its share
        self.budget = budget
        self.rotate = rotate if policy == BUDGET_POLICY else 0
        self.init_segs = init_segs
        self.max_w = max_w
        self.min_segs = min_segs
        self.flows: dict[Key, RxFlow] = {}
        self.user_w: dict[Key, int] = {}  # ictcp, rcc: the W userspace wrote
        self.rotation = Rotation(budget, self.flows, ack_cost)
        # (flow, window field) of each copy the data path sends ahead of an ACK
        self.copies: list[tuple[Key, int]] = []

    def counted(self) -> int:
        """F: the flows whose handshake was seen."""
        return sum(1 for f in self.flows.values() if f.counted)

    def share(self, mss: int) -> int:
        """newdctcp-budget: a flow's share of the budget now."""
        return budget_share(self.budget, self.counted(), mss, self.min_segs)

    # -- the flow table ------------------------------------------------------------
    def _new(self, key: Key) -> RxFlow:
        self._end(key)
        # newdctcp-budget: W starts at B, the share's cap brings it down
        start = self.budget if self.policy == BUDGET_POLICY else 0
        f = RxFlow(self.init_segs, self.max_w, self.min_segs, start_w=start)
        self.flows[key] = f
        return f

    def _end(self, key: Key) -> None:
        self.flows.pop(key, None)
        self.user_w.pop(key, None)
        self.rotation.end(key)

    # -- newdctcp-rx (observe computes the same W) -------------------------------------
    def _newdctcp_ack(self, f: RxFlow, p: Frame) -> int:
        return f.ack_field(p.ack, p.window, f.w)

    # -- newdctcp-budget -----------------------------------------------------------
    def _budget_data(self, f: RxFlow, p: Frame) -> None:
        cap = partial(budget_window, share=self.share(f.mss), mss=f.mss)
        f.w = cap(f.w)  # within the share on every data packet too
        w_before = f.w
        nb = f.on_data(p.seq, p.payload, p.ecn == 3, cap)
        if self.rotate and f.counted:
            self.rotation.on_data(f, nb, p.ecn == 3, w_before)

    def _budget_ack(self, key: Key, f: RxFlow, p: Frame, b: bytes) -> int:
        rot = self.rotate and f.peer_ts and f.local_ts  # a forged update repeats them
        r = self.rotation.note(key, p, b) if rot else None
        w = budget_window(f.w, self.share(f.mss), f.mss)
        if f.last_re is None and not f.pkts and not p.payload:
            # the handshake's ACK of a flow we opened: a copy offering
            # init_segs MSS first, then this ACK with a zero window
            self.copies.append((key, f.ack_field(p.ack, p.window, self.init_segs * f.mss)))
            return f.ack_field(p.ack, 0, None)
        if r is not None:
            w, zero = self.rotation.on_ack(key, r, f, p, b, w)
            return f.ack_field(p.ack, p.window, w, zero)
        return f.ack_field(p.ack, p.window, w)

    def _budget_pass(self, b: bytes) -> None:
        if self.rotate:
            self.rotation.fill(len(b))

    # -- ictcp, rcc: the window userspace writes -----------------------------------------
    def _user_ack(self, key: Key, f: RxFlow, p: Frame) -> int:
        """userspace's W; until it writes one, rcc's share of Q (share_pkts) as
        its assignment gives it, or the initial window."""
        unset = (
            max(equal_share(self.share_pkts, self.counted()), self.init_segs) * f.mss
            if self.share_pkts
            else self.init_segs * f.mss
        )
        return f.ack_field(p.ack, p.window, self.user_w.get(key, unset))

    # -- dispatch on the policy ------------------------------------------------------
    def _on_data(self, f: RxFlow, p: Frame) -> None:
        if self.policy == BUDGET_POLICY:
            self._budget_data(f, p)
        else:  # newdctcp-rx, observe, ictcp, rcc: NewDCTCP-rx's W
            f.on_data(p.seq, p.payload, p.ecn == 3)

    def _on_ack(self, key: Key, f: RxFlow, p: Frame, b: bytes) -> int:
        if self.policy == "observe":
            return f.ack_field(p.ack, p.window, None)
        if self.policy == "newdctcp-rx":
            return self._newdctcp_ack(f, p)
        if self.policy == BUDGET_POLICY:
            return self._budget_ack(key, f, p, b)
        return self._user_ack(key, f, p)  # ictcp, rcc

    def _on_pass(self, b: bytes) -> None:
        if self.policy == BUDGET_POLICY:
            self._budget_pass(b)

    # -- the two directions -----------------------------------------------------------
    def ingress(self, b: bytes) -> None:
        p = parse_frame(b)
        if p is None or self.policy == "off":
            return
        key = p.key_in()
        if p.flags & (RST | FIN):
            self._end(key)
            return
        f = self.flows.get(key)
        if p.flags & SYN:
            if not p.flags & ACK or f is None:
                f = self._new(key)
            f.note_syn("peer", p.opts)
            f.hi_seq = u32(p.seq + 1)
            f.finish_handshake()
            return
        if f is None:
            if p.payload == 0:
                return
            f = self._new(key)
        if self.rotate and p.flags & ACK:
            self.rotation.acked(key, p.ack)
        if p.payload:
            self._on_data(f, p)

    def egress(self, b: bytes) -> int | None:
        """Window field the data path would send (None: frame not an ACK of a flow)."""
        p = parse_frame(b)
        if p is None or self.policy == "off":
            return None
        key = p.key_out()
        if p.flags & (RST | FIN):
            self._end(key)
            self._on_pass(b)
            return None
        f = self.flows.get(key)
        if p.flags & SYN:
            if not p.flags & ACK or f is None:
                f = self._new(key)
            f.note_syn("local", p.opts)
            f.finish_handshake()
            return None
        if f is None or not p.flags & ACK:
            self._on_pass(b)
            return None
        if not f.handshake:
            return f.ack_field(p.ack, p.window, None)
        return self._on_ack(key, f, p, b)
