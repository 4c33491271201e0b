"""A real Ray cluster of node processes on this machine (`LocalRayCluster`), for
the tests and the benchmark: a head and extra nodes started by `ray start`,
each in a session of its own, on 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from .executors import ClusterError
from .ray_pool import HEAD_ENV

# --- a Ray cluster of node processes on this machine (tests, the benchmark) ---------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalRayCluster:
    """A real Ray cluster on this machine: a head and extra nodes, each started by
    `ray start` in a session of its own, and stopped by those sessions' processes
    (not `ray stop`, which stops every Ray on the machine, other people's too).

        with LocalRayCluster(tmp) as c:
            c.start_head(cpus=1)
            node2 = c.add_node(cpus=1, resources={"node2": 1})
            ... --cluster c.client_address ...; c.workers(node2) ...

    `niceness`: the nice value of the nodes' worker processes (Ray's default
    renices them to 15; 0 gives them the priority a local pool has, for the
    benchmark on a shared machine).
    """

    def __init__(
        self, temp_dir: Path, *, ray_bin: Path | None = None, niceness: int | None = None
    ) -> None:
        self.temp_dir = Path(temp_dir)
        self.ray_bin = ray_bin or Path(sys.executable).with_name("ray")
        self.env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", **HEAD_ENV}
        if niceness is not None:
            self.env["RAY_worker_niceness"] = str(niceness)
        self.sessions: list[int] = []  # session ids: one per `ray start`
        self.gcs_address = ""
        self.client_address = ""

    def _start(self, args: list[str]) -> int:
        """`ray start ARGS` in a new session; returns the session id its daemons keep."""
        proc = subprocess.Popen(
            [str(self.ray_bin), "start", "--disable-usage-stats", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env=self.env,
        )
        self.sessions.append(proc.pid)  # session leader: its pid is the session id
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            tail = " ".join(out.split())[-600:]
            raise ClusterError(f"ray start {' '.join(args)} failed: {tail}")
        return proc.pid

    def start_head(self, cpus: int, resources: Mapping[str, float] | None = None) -> str:
        """Start the head; returns its GCS address (HOST:PORT)."""
        port, client = free_port(), free_port()
        self.temp_dir.mkdir(parents=True, exist_ok=True)
        args = [
            "--head",
            f"--num-cpus={cpus}",
            f"--port={port}",
            f"--ray-client-server-port={client}",
            f"--temp-dir={self.temp_dir}",
            "--include-dashboard=false",
            "--node-ip-address=127.0.0.1",
        ]
        if resources:
            args.append(f"--resources={_json(resources)}")
        self._start(args)
        self.gcs_address = f"127.0.0.1:{port}"
        self.client_address = f"ray://127.0.0.1:{client}"
        # `ray start` returns before the Ray Client server listens.
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", client), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise ClusterError(
                        f"the Ray Client server never listened on {client}"
                    ) from None
                time.sleep(0.2)
        return self.gcs_address

    def add_node(self, cpus: int, resources: Mapping[str, float] | None = None) -> int:
        """Start one more node; returns its session id (see `pids`)."""
        args = [f"--address={self.gcs_address}", f"--num-cpus={cpus}"]
        args.append("--node-ip-address=127.0.0.1")
        if resources:
            args.append(f"--resources={_json(resources)}")
        return self._start(args)

    def pids(self, session: int) -> list[int]:
        """Every live process a `ray start` left behind (workers included)."""
        return [pid for pid, sid in _processes() if sid == session]

    def workers(self, session: int, *, running: bool = False) -> list[int]:
        """The p4incast point workers (`PointWorker` actors) of one node; with
        `running`, only those running a point now (Ray titles them by method)."""
        title = "ray::PointWorker.run" if running else "ray::PointWorker"
        return [pid for pid in self.pids(session) if _cmdline(pid).startswith(title)]

    def cpu_s(self, *, daemons: bool = False) -> dict[int, float]:
        """CPU seconds used so far by each live process of the cluster; `daemons`:
        only Ray's own (GCS, raylets, agents, the client server), not its Python
        workers (`ray::` titles: a prestarted idle worker may become a point
        worker). Subtract two readings pid by pid (`cpu_used`)."""
        pids = [p for s in self.sessions for p in self.pids(s)]
        if daemons:
            pids = [p for p in pids if not _is_worker(_cmdline(p))]
        return cpu_s(pids)

    def stop(self) -> None:
        """SIGTERM every process of the cluster's sessions, SIGKILL what is left after 5 s."""
        for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
            for pid in [p for s in self.sessions for p in self.pids(s)]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and any(self.pids(s) for s in self.sessions):
                time.sleep(0.2)
        self.sessions.clear()

    def __enter__(self) -> LocalRayCluster:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


_RAY_AGENTS = ("ray::DashboardAgent", "ray::RuntimeEnvAgent")  # daemons with a ray:: title


def _is_worker(title: str) -> bool:
    return title.startswith("ray::") and not title.startswith(_RAY_AGENTS)


def cpu_s(pids: list[int]) -> dict[int, float]:
    """CPU seconds (user + system) each of these live processes has used so far."""
    out = {}
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # ... utime stime (fields 14, 15)
        out[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


def cpu_used(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds between two readings: processes born since count in full, processes
    gone since (their last seconds unread) not at all."""
    return sum(t - before.get(pid, 0.0) for pid, t in after.items())


def _json(resources: Mapping[str, float]) -> str:
    return json.dumps(dict(resources))


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:  # gone meanwhile
        return ""


def _processes() -> list[tuple[int, int]]:
    """(pid, session id) of every live (not zombie) process, from /proc/PID/stat."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # state ppid pgrp session ...
        if fields[0] not in ("Z", "X"):
            out.append((int(name), int(fields[3])))
    return out
