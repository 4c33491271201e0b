"""Register / unregister the struct_ops congestion controls p4i_dctcp, p4i_newdctcp.

Registration uses libbpf's bpf_map__attach_struct_ops() on the object's
.struct_ops map. libbpf 1.1 registers through a map update (no BPF link):
the kernel keeps the congestion control after this process exits, and it
stays selectable with TCP_CONGESTION until `unload` deletes the map element
(sockets already using it keep it until they close).
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from p4incast.agent.datapath import default_bpf_dir
from p4incast.agent.libbpf import BpfError, lib

__all__ = ["CC_NAMES", "available", "built", "load", "unload"]

CC_NAMES = ("p4i_dctcp", "p4i_newdctcp")
_AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def available() -> list[str]:
    """Congestion controls the kernel offers right now."""
    try:
        return _AVAILABLE.read_text().split()
    except OSError:
        return []


def _object(name: str, bpf_dir: Path | None) -> Path:
    return (bpf_dir or default_bpf_dir()) / f"{name}.bpf.o"


def built(names: tuple[str, ...] = CC_NAMES, bpf_dir: Path | None = None) -> list[str]:
    """The named CCs whose objects are built, i.e. `load` can register them."""
    return [name for name in names if name in CC_NAMES and _object(name, bpf_dir).exists()]


def load(names: tuple[str, ...] = CC_NAMES, bpf_dir: Path | None = None) -> list[str]:
    """Register each named CC not yet registered; returns the ones registered now."""
    lb = lib()
    done: list[str] = []
    have = available()
    for name in names:
        if name not in CC_NAMES:
            raise ValueError(f"unknown congestion control {name!r}; one of {', '.join(CC_NAMES)}")
        if name in have:
            continue
        path = _object(name, bpf_dir)
        if not path.exists():
            raise FileNotFoundError(f"{path} not built: run scripts/build-agent.sh (make build)")
        obj = lb.open_object(path)
        lb.load_object(obj, str(path))
        link = lb.c.bpf_map__attach_struct_ops(lb.map(obj, name))
        err = lb.c.libbpf_get_error(link) if link else -ctypes.get_errno()
        if not link or err:
            raise BpfError(f"register {name}", int(err) or 22)
        # Deliberately not destroyed: destroying the link would unregister the CC.
        done.append(name)
    return done


def unload(names: tuple[str, ...] = CC_NAMES) -> list[str]:
    """Unregister: delete element 0 of every struct_ops map called `name`."""
    lb = lib()
    gone: list[str] = []
    for name in names:
        for fd, _info in lb.maps_named(name):
            try:
                if lb.delete(fd, ctypes.c_uint32(0)):
                    gone.append(name)
            finally:
                os.close(fd)
    return gone
