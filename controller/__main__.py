"""p4incast-ctl: program and read the p4-incast pipeline over P4Runtime.

    p4incast-ctl push [--force]
    p4incast-ctl apply CONFIG [--keep]
    p4incast-ctl set-ecn --port P --mode front|tail|off [--k K] [--drop-k D]
    p4incast-ctl set-queue --port P [--depth PKTS] [--rate PPS]
    p4incast-ctl set-budget PORT --bytes B [--mss M] [--epoch-ticks T] | --off
    p4incast-ctl stats [--json] [--watch SECONDS] [--ports 1,2]
    p4incast-ctl export [--listen ADDR:PORT] [--interval S] [--name NAME] [--ports 1,2]
    p4incast-ctl pack-tna [BUILD_DIR]    (no switch: write the packed Tofino configs)

Switch flags (--address, --device-id, --election-id, --thrift-port, --thrift-address,
--target, --tofino-runtime, --bf-switchd-parts, --tls-*, --plaintext, --p4info,
--p4-config, --tna-build) override the config's `switch:`/`pipeline:` sections. On
--target tna the device config is packed from the bf-p4c build directory (--tna-build)
for --tofino-runtime.
export serves HTTPS with --metrics-tls-cert/--metrics-tls-key [--metrics-client-ca], or
HTTPS and basic auth as a Prometheus web configuration file says (--web.config.file).

This is the only module of the controller that parses arguments, prints,
configures logging or exits: every other one returns results and raises
ControllerError, which ends here as one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import sys
import time
from pathlib import Path

from p4incast.model.ecn import EcnMode
from p4incast.model.errors import ModelError
from p4incast.model.switch_budget import DEFAULT_EPOCH_TICKS
from p4incast.model.tls import METRICS_TLS_FLAGS, MetricsTls
from p4incast.model.wire import MSS_BYTES

from . import app, config, export, stats, tls, tofino_config
from .config import Config, EcnPolicy, Pipeline, PortBudget, SwitchSettings
from .connection import connect, quiet_finsy
from .errors import ControllerError
from .targets import TARGETS


def _ecn_mode(value: str) -> EcnMode:
    """--mode through the model's parser (the same one the YAML's `ecn.mode` goes through)."""
    try:
        return EcnMode.parse(value, "--mode")
    except ModelError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--mode: ")) from None


def _parser() -> argparse.ArgumentParser:
    """Global switch flags, then one subcommand per operation of `app`."""
    p = argparse.ArgumentParser(prog="p4incast-ctl", description=(__doc__ or "").split("\n")[0])
    p.add_argument("--address", help="P4Runtime address (default 127.0.0.1:9559)")
    p.add_argument("--device-id", type=int, help="P4Runtime device id (default 0)")
    p.add_argument("--election-id", type=int, help="election id, up to 2^128-1 (default 10)")
    p.add_argument("--thrift-port", type=int, help="BMv2 thrift port (default 9090)")
    p.add_argument(
        "--thrift-address",
        metavar="HOST",
        help="BMv2 thrift runtime's host (default: --address's host if loopback; a remote "
        "switch's queue settings need it)",
    )
    p.add_argument("--target", choices=list(TARGETS), help="target (default v1model)")
    p.add_argument("--p4info", type=Path, help="p4info file (default build/<target>/...)")
    p.add_argument("--p4-config", type=Path, help="compiled device config (BMv2 JSON)")
    p.add_argument(
        "--tna-build",
        type=Path,
        metavar="DIR",
        help="tna: bf-p4c output dir, tofino.bin + context.json + bf-rt.json + p4info "
        "(default build/tna)",
    )
    p.add_argument(
        "--tofino-runtime",
        choices=tofino_config.RUNTIMES,
        help="tna: the switch's P4Runtime server, which sets the device-config format "
        "(default stratum)",
    )
    p.add_argument(
        "--bf-switchd-parts",
        type=int,
        choices=tofino_config.BF_SWITCHD_PARTS,
        help="bf-switchd: 5 parts (with pipe name and bf-rt.json; default) or PI's 3",
    )
    p.add_argument(
        "--tls-ca",
        type=Path,
        metavar="FILE",
        help="P4Runtime over TLS: the PEM CA that signed the switch's certificate",
    )
    p.add_argument(
        "--tls-cert",
        type=Path,
        metavar="FILE",
        help="mutual TLS: this client's PEM certificate (with --tls-key, --tls-ca)",
    )
    p.add_argument("--tls-key", type=Path, metavar="FILE", help="the PEM key of --tls-cert")
    p.add_argument(
        "--tls-server-name",
        metavar="NAME",
        help="the name to check in the switch's certificate (default: --address's host)",
    )
    p.add_argument(
        "--plaintext",
        action="store_true",
        default=None,
        help="plaintext P4Runtime to a switch that is not on loopback (refused without it)",
    )
    p.add_argument("--config", type=Path, help="YAML config for ports/defaults")
    p.add_argument("-v", "--verbose", action="store_true", help="log P4Runtime activity")
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("push", help="install the compiled pipeline")
    s.add_argument("--force", action="store_true", help="push even if the same one runs")

    s = sub.add_parser(
        "apply", help="bring the switch to a YAML config (pipeline, routes, ECN, queues)"
    )
    s.add_argument("apply_config", type=Path, metavar="CONFIG")
    s.add_argument(
        "--keep",
        action="store_true",
        help="stay connected; re-push and re-apply after a switch restart",
    )

    s = sub.add_parser("set-ecn", help="change one port's ECN policy live")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--mode", required=True, type=_ecn_mode, choices=list(EcnMode))
    s.add_argument("--k", type=int, default=0, help="threshold (packets on v1model, bytes on tna)")
    s.add_argument("--drop-k", type=int, default=0, help="drop Not-ECT at/above (0: never)")

    s = sub.add_parser(
        "set-budget",
        help="hold a receiver's ACKs on PORT to its budget in the switch, live (algorithms.md §8)",
    )
    s.add_argument("budget_port", type=int, metavar="PORT", help="the receiver's switch port")
    onoff = s.add_mutually_exclusive_group(required=True)
    onoff.add_argument("--bytes", type=int, help="the port's budget B, bytes")
    onoff.add_argument("--off", action="store_true", help="turn the port's budget off")
    s.add_argument("--mss", type=int, help=f"segment size of the shares (default {MSS_BYTES})")
    s.add_argument(
        "--epoch-ticks",
        type=int,
        help=f"epoch, a power of two of ~1 ms ticks (default {DEFAULT_EPOCH_TICKS})",
    )

    s = sub.add_parser(
        "set-queue", help="BMv2 egress queue depth (packets) / rate (packets/s); not on tna"
    )
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--depth", type=int)
    s.add_argument("--rate", type=int)

    s = sub.add_parser(
        "pack-tna", help="write both packed Tofino device configs beside a bf-p4c build"
    )
    s.add_argument("build_dir", type=Path, nargs="?", metavar="BUILD_DIR")

    s = sub.add_parser("stats", help="counters and queue-depth percentiles per port")
    s.add_argument("--json", action="store_true")
    s.add_argument("--watch", type=float, metavar="SECONDS", help="repeat every SECONDS")
    s.add_argument("--ports", help="comma-separated ports to show (default: ports with traffic)")

    s = sub.add_parser(
        "export",
        help="serve the counters and depth histogram as Prometheus metrics (read-only: "
        "no arbitration, never primary)",
    )
    s.add_argument(
        "--listen",
        default=export.DEFAULT_LISTEN,
        metavar="ADDR:PORT",
        help=f"where to serve /metrics (default {export.DEFAULT_LISTEN})",
    )
    s.add_argument(
        "--interval",
        type=float,
        default=export.DEFAULT_INTERVAL_S,
        metavar="S",
        help=f"seconds between reads of the switch (default {export.DEFAULT_INTERVAL_S:g})",
    )
    s.add_argument("--name", help="the metrics' switch label (default: the switch address)")
    s.add_argument("--ports", help="comma-separated ports to export (default: ports with traffic)")
    for f in METRICS_TLS_FLAGS:
        s.add_argument(f.flag, dest=f.dest, metavar="FILE", help=f.help)
    return p


def _settings(args: argparse.Namespace, base: Config | None) -> tuple[SwitchSettings, Pipeline]:
    """The config's switch and pipeline (or the defaults) with the flags given on top,
    validated like the YAML's."""
    sw = base.switch if base else SwitchSettings()
    over = {
        k: v
        for k, v in (
            ("address", args.address),
            ("device_id", args.device_id),
            ("election_id", args.election_id),
            ("thrift_port", args.thrift_port),
            ("thrift_address", args.thrift_address),
            ("plaintext", args.plaintext),
            ("target", args.target),
            ("runtime", args.tofino_runtime),
            ("bf_switchd_parts", args.bf_switchd_parts),
        )
        if v is not None
    }
    given_tls = {
        k: v
        for k, v in (
            ("ca", args.tls_ca),
            ("cert", args.tls_cert),
            ("key", args.tls_key),
            ("server_name", args.tls_server_name),
        )
        if v is not None
    }
    if given_tls:
        over["tls"] = {**(dataclasses.asdict(sw.tls) if sw.tls else {}), **given_tls}
    if over:
        # unset (None) fields stay unset: a `tls: null` would be an empty switch.tls
        base_sw = {k: v for k, v in dataclasses.asdict(sw).items() if v is not None}
        sw = config.parse({"switch": {**base_sw, **over}}, "command line").switch
    same = base is not None and base.switch.target == sw.target
    pl = base.pipeline if base is not None and same else Pipeline.default(sw.target)
    if sw.target_profile.packs_build_dir:
        if args.p4_config:
            raise ControllerError(
                f"--p4-config is BMv2's JSON; target {sw.target} is pushed from bf-p4c's "
                "build directory, packed for --tofino-runtime: use --tna-build DIR"
            )
        if args.tna_build or args.p4info:
            build = args.tna_build or pl.build_dir
            assert build is not None
            p4info = args.p4info or (build / tofino_config.P4INFO if args.tna_build else pl.p4info)
            pl = Pipeline(p4info=p4info, build_dir=build)
    else:
        if args.tna_build:
            raise ControllerError(f"--tna-build is for --target tna; {sw.target} takes --p4-config")
        if args.p4info or args.p4_config:
            pl = Pipeline(p4info=args.p4info or pl.p4info, config=args.p4_config or pl.config)
    return sw, pl


def _pack_tna(args: argparse.Namespace, base: Config | None) -> None:
    """pack-tna: both device configs beside the build (what `make build-tna` runs)."""
    build = args.build_dir or args.tna_build or Pipeline.default("tna").build_dir
    assert build is not None  # a TNA pipeline always has a build_dir
    parts = args.bf_switchd_parts or (
        base.switch.bf_switchd_parts if base else tofino_config.BF_SWITCHD_PARTS[0]
    )
    for path in tofino_config.write_packed(build, parts):
        print(f"{path} ({path.stat().st_size} bytes)")


async def _stats(
    sw_settings: SwitchSettings, pl: Pipeline, args: argparse.Namespace, ports: list[int] | None
) -> None:
    """Print the counters once, or every --watch seconds until interrupted."""
    async with connect(sw_settings, pl) as sw:
        known: list[int] = []
        while True:
            snap = await stats.read(sw, ports, known)
            known = list(snap.ports)
            if args.json:
                print(json.dumps({"time": time.time(), **snap.as_dict()}), flush=True)
            else:
                print(stats.table(snap), flush=True)
            if not args.watch:
                return
            await asyncio.sleep(args.watch)
            if not args.json:
                print()


def _configure_logging(verbose: bool) -> None:
    """Our log lines on stderr (the controller's warnings always, e.g. `apply --keep`
    losing primary); finsy's reconnect chatter only with --verbose."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.ERROR,
        format="%(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger(app.LOG.name).setLevel(logging.INFO if verbose else logging.WARNING)
    quiet_finsy(verbose)


def _say(line: str) -> None:
    """One event of `apply --keep`, flushed at once (its reader may be a pipe)."""
    print(line, flush=True)


def run(argv: list[str] | None = None) -> int:
    """Run one command; ControllerError for anything the user can fix."""
    args = _parser().parse_args(argv)
    _configure_logging(args.verbose)
    base = None
    if args.cmd == "apply":
        base = config.load(args.apply_config)
    elif args.config:
        base = config.load(args.config)
    if args.cmd == "pack-tna":
        _pack_tna(args, base)
        return 0
    sw, pl = _settings(args, base)

    if args.cmd == "push":
        asyncio.run(app.push(sw, pl, force=args.force))
        packed = f" (packed for {sw.tofino_runtime})" if pl.build_dir is not None else ""
        print(f"pipeline {pl.label}{packed} installed on {sw.address}")
    elif args.cmd == "apply":
        assert base is not None
        cfg = Config(sw, pl, base.ports, base.routes)
        if args.keep:
            with contextlib.suppress(KeyboardInterrupt):
                asyncio.run(app.keep(cfg, on_event=_say))
        else:
            count = asyncio.run(app.apply(cfg))
            print(
                f"{args.apply_config}: {len(cfg.routes)} routes, {len(cfg.ports)} ports; "
                f"{count} updates written to {sw.address}"
            )
    elif args.cmd == "set-ecn":
        depth = base.ports[args.port].queue_depth if base and args.port in base.ports else None
        known = sorted(base.ports) if base else None
        policy = EcnPolicy(mode=args.mode, k=args.k, drop_k=args.drop_k)
        print(
            asyncio.run(
                app.set_ecn(
                    sw, pl, port=args.port, policy=policy, queue_depth=depth, known_ports=known
                )
            )
        )
    elif args.cmd == "set-budget":
        print(asyncio.run(_set_budget(sw, pl, args, base)))
    elif args.cmd == "set-queue":
        if args.depth is None and args.rate is None:
            raise ControllerError("set-queue needs --depth and/or --rate")
        print(asyncio.run(app.set_queue(sw, port=args.port, depth=args.depth, rate=args.rate)))
    elif args.cmd == "stats":
        ports = _ports(args.ports)
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_stats(sw, pl, args, ports))
    elif args.cmd == "export":
        ports = _ports(args.ports)
        export.parse_listen(args.listen)  # malformed: refused before anything starts
        metrics_tls = tls.check_metrics(MetricsTls.from_args(args))
        logging.getLogger(export.LOG.name).setLevel(logging.INFO)  # up/down changes

        def listening(where: str) -> None:
            _say(f"serving {sw.address}'s counters on {metrics_tls.scheme}://{where}/metrics")

        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(
                export.export(
                    sw,
                    listen=args.listen,
                    interval=args.interval,
                    name=args.name,
                    ports=ports,
                    metrics_tls=metrics_tls,
                    on_listen=listening,
                )
            )
    return 0


async def _set_budget(
    sw: SwitchSettings, pl: Pipeline, args: argparse.Namespace, base: Config | None
) -> str:
    """set-budget: the flags as a PortBudget (None for --off), then app.set_budget."""
    budget = None
    if not args.off:
        budget = PortBudget(
            bytes=args.bytes,
            mss=MSS_BYTES if args.mss is None else args.mss,
            epoch_ticks=DEFAULT_EPOCH_TICKS if args.epoch_ticks is None else args.epoch_ticks,
        )
    elif args.mss is not None or args.epoch_ticks is not None:
        raise ControllerError("set-budget --off takes no --mss or --epoch-ticks")
    known = sorted(base.ports) if base else None
    return await app.set_budget(sw, pl, port=args.budget_port, budget=budget, known_ports=known)


def _ports(text: str | None) -> list[int] | None:
    """--ports 1,2,3 -> [1, 2, 3]; None when not given."""
    if not text:
        return None
    try:
        return [config.check_port_number(int(p), "--ports") for p in text.split(",")]
    except ValueError:
        raise ControllerError(f"--ports {text!r}: expected e.g. 1,2,3") from None


def main(argv: list[str] | None = None) -> int:
    """Entry point of `p4incast-ctl`: exit code 0, or 2 with one line on stderr."""
    try:
        return run(argv)
    except ControllerError as err:
        print(f"p4incast-ctl: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
