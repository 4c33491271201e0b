"""The two engines an experiment runs on, and how one is chosen.

bmv2: Mininet hosts around BMv2 simple_switch_grpc (topologies/testbed.py) —
      real kernels' TCP, real P4 pipeline, BMv2 speeds (thousands of pkt/s).
sim:  the ns-3 model (p4incast.sim) at the papers' 1 Gbps / 25 µs scale.

Both return the same run dict (see results.py / the README's schema), so the
tables and plots are shared code.
"""

from __future__ import annotations

import sys
import time
import traceback
from pathlib import Path
from typing import Any

from p4incast import bmv2, tools

from .config import Experiment, Scheme

# Congestion-control names in experiment files -> candidates in the kernel, in
# order: the kernel's own module first, then the BPF struct_ops versions the
# host agent registers (`p4incast-agent cc load`).
KERNEL_CC = {
    "reno": ("reno",),
    "cubic": ("cubic",),
    "bbr": ("bbr",),
    "dctcp": ("dctcp", "p4i_dctcp"),
    "newdctcp": ("p4i_newdctcp",),
}


def bmv2_unavailable() -> str | None:
    """Why the BMv2 testbed cannot run here (None: it can)."""
    if not bmv2.have_root():
        return "the BMv2 testbed needs root (Mininet network namespaces)"
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        return "the BMv2 testbed needs Mininet (Debian package mininet; make setup installs it)"
    missing = tools.missing_reason("simple_switch_grpc", "simple_switch_CLI")
    if missing:
        return missing
    from p4incast.controller.config import Pipeline

    if not Pipeline.default().config.is_file():
        return "build/v1model/p4incast.json is not built (make build; needs p4c-bm2-ss)"
    return None


def sim_unavailable() -> str | None:
    """Why the ns-3 engine cannot run here (None: it can). Does not load ns-3."""
    from p4incast.sim import native

    ok, why = native.available()
    return None if ok else f"the simulator engine cannot run ({why})"


def resolve(requested: str) -> tuple[str, str]:
    """(engine, one line saying which engine and why). Raises RuntimeError if none can run."""
    if requested == "bmv2":
        why = bmv2_unavailable()
        if why:
            raise RuntimeError(f"engine bmv2 requested, but {why}")
        return "bmv2", f"engine: bmv2 (Mininet + {tools.fastest_simple_switch_grpc()[1]})"
    if requested == "sim":
        why = sim_unavailable()
        if why:
            raise RuntimeError(f"engine sim requested, but {why}")
        return "sim", "engine: sim (ns-3)"
    why_bmv2 = bmv2_unavailable()
    if why_bmv2 is None:
        return "bmv2", f"engine: bmv2 (Mininet + {tools.fastest_simple_switch_grpc()[1]})"
    why_sim = sim_unavailable()
    if why_sim is None:
        return "sim", f"engine: sim (ns-3), because {why_bmv2}"
    raise RuntimeError(
        f"no engine can run here: {why_bmv2}; and {why_sim}. "
        "Install BMv2 + p4c (see README, 'Getting BMv2 and p4c') and run as root, "
        "or install the simulator."
    )


def available_cc() -> set[str]:
    path = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    return set(path.read_text().split()) if path.exists() else set()


def kernel_cc(cc: str, have: set[str] | None = None) -> str:
    """The kernel name for scheme cc, or RuntimeError saying how to get it."""
    have = available_cc() if have is None else have
    for name in KERNEL_CC[cc]:
        if name in have:
            return name
    hint = (
        "load the BPF versions with `sudo .venv/bin/p4incast-agent cc load` (built by make build)"
        if cc in ("dctcp", "newdctcp")
        else f"modprobe tcp_{cc}"
    )
    raise RuntimeError(
        f"congestion control {cc} is not available in this kernel "
        f"(has: {', '.join(sorted(have)) or 'none'}); {hint}"
    )


def preflight(exp: Experiment, engine: str) -> list[str]:
    """Problems that would make every run of a scheme fail, found before anything runs."""
    if engine == "sim":
        from p4incast.sim import engine as sim_engine

        found: list[str] = []
        for scheme, n, repeat in exp.points():
            for err in sim_engine.check_point(sim_point(exp, scheme, n, repeat)):
                line = f"scheme {scheme.name}: {err}"
                if line not in found:
                    found.append(line)
        return found
    problems = []
    have = available_cc()
    # Schemes asking for DCTCP/NewDCTCP on a kernel without them: register the
    # host agent's BPF struct_ops versions (they stay until `cc unload`).
    bpf = sorted(
        {
            c
            for s in exp.schemes
            if not any(c in have for c in KERNEL_CC[s.cc])
            for c in KERNEL_CC[s.cc]
            if c.startswith("p4i_")
        }
    )
    if bpf:
        try:
            from p4incast.agent import cc

            cc.load(tuple(bpf))
            print(f"loaded the BPF congestion controls {', '.join(bpf)}", flush=True)
        except Exception as err:  # noqa: BLE001 — reported below as unavailable
            print(f"could not load the BPF congestion controls: {err}", flush=True)
        have = available_cc()
    for s in exp.schemes:
        try:
            kernel_cc(s.cc, have)
        except RuntimeError as err:
            problems.append(f"scheme {s.name}: {err}")
    n_max = max(exp.senders)
    if n_max > 64:
        problems.append(f"senders: {n_max} above 64, the BMv2 testbed's limit")
    return problems


def _failed(scheme: Scheme, n: int, repeat: int, engine: str, err: str, t0: float) -> dict:
    return {
        "scheme": scheme.name,
        "n": n,
        "repeat": repeat,
        "engine": engine,
        "status": "failed",
        "error": err,
        "wall_s": time.monotonic() - t0,
        "base_rtt_ms": None,
        "rounds": [],
        "switch": {},
    }


def run_bmv2(exp: Experiment, scheme: Scheme, n: int, repeat: int, log_dir: Path) -> dict:
    """One (scheme, N, repeat) on a fresh Mininet network; never raises."""
    from p4incast.controller.config import EcnPolicy
    from p4incast.topologies.incast import LinkShape
    from p4incast.topologies.testbed import TestbedRun, run

    t0 = time.monotonic()
    try:
        spec = TestbedRun(
            topology=exp.topology.kind,
            n=n,
            spines=exp.topology.spines,
            sru_bytes=exp.app.sru_bytes,
            mode=exp.app.mode,
            rounds=exp.app.rounds,
            ecn=EcnPolicy(scheme.ecn, scheme.k),
            cc=kernel_cc(scheme.cc),
            agent=scheme.agent,
            batching=scheme.batching,
            background=exp.topology.background,
            rto_min_ms=exp.topology.rto_min_ms,
            shape=LinkShape(
                host_mbps=exp.topology.host_mbps,
                queue_pkts=exp.topology.queue_pkts,
                queue_rate_pps=exp.topology.bottleneck_pps,
            ),
        )
        res = run(spec, log_dir)
    except Exception as err:  # noqa: BLE001 — one failed run must not stop the sweep
        (log_dir / "error.txt").write_text(traceback.format_exc())
        return _failed(scheme, n, repeat, "bmv2", f"{type(err).__name__}: {err}", t0)
    return {
        "scheme": scheme.name,
        "n": n,
        "repeat": repeat,
        "engine": "bmv2",
        "status": "ok",
        "error": None,
        "wall_s": time.monotonic() - t0,
        "base_rtt_ms": res.base_rtt_ms,
        "rounds": res.rounds,
        "switch": res.switch,
        "batch": res.batch,
    }


def sim_point(exp: Experiment, scheme: Scheme, n: int, repeat: int) -> dict[str, Any]:
    """The ns-3 engine's input for one (scheme, N, repeat)."""
    from dataclasses import asdict

    return {
        "scheme": asdict(scheme),
        "n": n,
        "repeat": repeat,
        "seed": 1 + repeat,
        "topology": asdict(exp.topology),
        "app": asdict(exp.app),
    }


def sim_worker_init() -> None:
    """Pool initializer: load ns-3 and compile the model once per worker process.

    cling prints harmless "Failed to materialize symbols" notes on stderr while
    it compiles ns-3's static initialisers; they are kept out of the user's
    terminal and shown only if loading fails.
    """
    import os
    import tempfile

    from p4incast.sim import engine

    with tempfile.TemporaryFile() as notes:
        saved = os.dup(2)
        os.dup2(notes.fileno(), 2)
        try:
            engine.init_worker()
        except BaseException:
            os.dup2(saved, 2)
            notes.seek(0)
            sys.stderr.write(notes.read().decode(errors="replace")[-4000:])
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def run_sim(exp: Experiment, scheme: Scheme, n: int, repeat: int) -> dict:
    """One point on the ns-3 model, in a worker that ran sim_worker_init; never raises."""
    t0 = time.monotonic()
    try:
        from p4incast.sim import engine

        run = engine.run_point(sim_point(exp, scheme, n, repeat))
    except Exception as err:  # noqa: BLE001 — one failed run must not stop the sweep
        return _failed(scheme, n, repeat, "sim", f"{type(err).__name__}: {err}", t0)
    run.setdefault("wall_s", time.monotonic() - t0)
    run.update(scheme=scheme.name, n=n, repeat=repeat, engine="sim")
    return run
