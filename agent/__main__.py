"""p4incast-agent: the receiver-side host agent (NewDCTCP-rx, ICTCP, RCC).

    p4incast-agent run --iface IF --policy newdctcp-rx|ictcp|rcc|observe|off [--metrics ADDR:PORT
                       [--metrics-tls-cert FILE --metrics-tls-key FILE [--metrics-client-ca FILE]
                        | --web.config.file FILE]]
    p4incast-agent status [--json]
    p4incast-agent cc load|unload|list
    p4incast-agent detach --iface IF      (clsact mode only, after a SIGKILL)

Start `run` before the connections open: the window scale is learned from the
handshake, and flows whose handshake was not seen are measured, not clamped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sys
from pathlib import Path

from p4incast.agent import cc
from p4incast.agent.datapath import detach_clsact
from p4incast.agent.libbpf import BpfError, lib
from p4incast.agent.metrics import AgentCollector, check_tls, parse_listen, serve
from p4incast.agent.runner import run, status
from p4incast.model.tls import METRICS_TLS_FLAGS, MetricsTls
from p4incast.policies.config import POLICY_NAMES, AgentConfig, ConfigError, tunables


def _die(msg: str, code: int = 2) -> int:
    print(f"p4incast-agent: {msg}", file=sys.stderr)
    return code


def _need_root() -> None:
    if os.geteuid() != 0:
        raise PermissionError("needs root (CAP_BPF and CAP_NET_ADMIN): run it with sudo")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="p4incast-agent", description=(__doc__ or "").split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="attach to an interface and enforce a policy until a signal")
    r.add_argument("--iface", required=True)
    r.add_argument("--policy", choices=POLICY_NAMES)
    r.add_argument("--attach", choices=("tcx", "clsact"), help="tcx (default): fail-open on crash")
    r.add_argument("--config", type=Path, help="JSON/YAML file of tunables; flags override")
    r.add_argument("--ready-file", type=Path, help=argparse.SUPPRESS)
    r.add_argument(
        "--trace",
        type=Path,
        metavar="FILE",
        help="rotate=1: write the rotation's state every tick to FILE (JSON lines)",
    )
    r.add_argument(
        "--metrics",
        metavar="ADDR:PORT",
        help="serve the aggregate totals as Prometheus metrics on ADDR:PORT (e.g. "
        "127.0.0.1:9465); bound before anything is attached",
    )
    for f in METRICS_TLS_FLAGS:
        r.add_argument(f.flag, dest=f.dest, metavar="FILE", help=f.help)
    for t in tunables():
        r.add_argument(
            f"--{t.name.replace('_', '-')}",
            type=type(t.default),
            help=f"{t.desc} (default {t.default}, {t.lo}..{t.hi})",
        )
    s = sub.add_parser("status", help="per-flow W, packets, CE, RTT of running agents; totals")
    s.add_argument("--json", action="store_true")
    c = sub.add_parser("cc", help="struct_ops congestion controls p4i_dctcp, p4i_newdctcp")
    c.add_argument("action", choices=("load", "unload", "list"))
    d = sub.add_parser("detach", help="remove clsact filters a killed agent left behind")
    d.add_argument("--iface", required=True)
    return ap


def _cmd_run(a: argparse.Namespace) -> int:
    cfg = AgentConfig.load(a.config) if a.config else AgentConfig()
    over = {k: getattr(a, k) for k in ("iface", "policy", "attach", *(t.name for t in tunables()))}
    cfg = cfg.override(**over).validated()
    tls = MetricsTls.from_args(a)
    if a.metrics:
        parse_listen(a.metrics)
    elif tls != MetricsTls():
        raise ConfigError(
            "--metrics-tls-cert, --metrics-tls-key, --metrics-client-ca, --web.config.file "
            "need --metrics"
        )
    tls = check_tls(tls)
    _need_root()
    if not a.metrics:
        return run(cfg, ready=a.ready_file, trace=a.trace)
    collector = AgentCollector(cfg.iface, cfg.policy)
    server = serve(collector, a.metrics, tls)  # bound (or refused) before anything is attached
    try:
        return run(cfg, ready=a.ready_file, trace=a.trace, metrics=collector)
    finally:
        server.shutdown()


def w_of(f: dict) -> int:
    """The W being enforced: userspace's (ictcp, rcc) if written, else the BPF rule's."""
    return f["w_user"] if f.get("w_user") is not None else f["w"]


def _fmt_status(agents: list[dict]) -> str:
    if not agents:
        return "no running p4incast-agent"
    lines = []
    for ag in agents:
        t = ag["totals"]
        lines.append(
            f"{ag['iface']} policy={ag['policy']} attach={ag['attach']} pid={ag['pid']}  "
            f"flows={t['flows']} pkts={t['pkts']} bytes={t['bytes']} ce={t['ce']} "
            f"rewrites={t['rewrites']} rtt_excluded={t['rtt_excluded_flows']} "
            f"acks={t['tx_acks']} bad_opts={t['bad_opts']}"
        )
        lines.append(
            f"  {'flow':<44} {'W':>9} {'ws':>2} {'mss':>5} {'pkts':>9} {'CE':>7} "
            f"{'rtt_min':>8} {'srtt':>8}  notes"
        )
        for f in ag["flows"]:
            notes = []
            if not f["handshake"]:
                notes.append("no-handshake")
            if f["rtt_excluded"]:
                notes.append("rtt>limit")
            if f["slow_start"]:
                notes.append("slow-start")
            lines.append(
                f"  {f['flow']:<44} {w_of(f):>9} {f['wscale']:>2} {f['mss']:>5} {f['pkts']:>9} "
                f"{f['ce']:>7} {f['rtt_min_us']:>6}us {f['srtt_us']:>6}us  {','.join(notes)}"
            )
    return "\n".join(lines)


def _cmd_status(a: argparse.Namespace) -> int:
    _need_root()
    agents = status()
    print(json.dumps(agents, indent=1) if a.json else _fmt_status(agents))
    return 0


def _cmd_cc(a: argparse.Namespace) -> int:
    if a.action == "list":
        have = cc.available()
        for n in cc.CC_NAMES:
            print(f"{n}: {'registered' if n in have else 'not registered'}")
        return 0
    _need_root()
    if a.action == "load":
        new = cc.load()
        have = cc.available()
        print(
            f"registered: {', '.join(n for n in cc.CC_NAMES if n in have)}"
            f" ({'new: ' + ', '.join(new) if new else 'already there'}); "
            "choose per socket with TCP_CONGESTION"
        )
    else:
        gone = cc.unload()
        print(f"unregistered: {', '.join(gone) or 'none were registered'}")
    return 0


def _cmd_detach(a: argparse.Namespace) -> int:
    _need_root()
    try:
        ifindex = socket.if_nametoindex(a.iface)
    except OSError:
        raise ConfigError(f"no interface {a.iface!r} in this network namespace") from None
    n = detach_clsact(lib(), ifindex)
    print(f"removed {n} p4incast-agent clsact filter(s) from {a.iface}")
    return 0


def main(argv: list[str] | None = None) -> int:
    a = _parser().parse_args(argv)
    try:
        return {"run": _cmd_run, "status": _cmd_status, "cc": _cmd_cc, "detach": _cmd_detach}[
            a.cmd
        ](a)
    except PermissionError as e:
        return _die(str(e))
    except ConfigError as e:
        return _die(str(e))
    except FileNotFoundError as e:
        hint = "" if shutil.which("clang") else " (apt-get install clang bpftool libbpf-dev)"
        return _die(f"{e}{hint}")
    except BpfError as e:
        return _die(str(e), 1)


if __name__ == "__main__":
    sys.exit(main())
