"""Switch addresses: HOST:PORT, and whether a host is this machine's loopback.

Loopback decides two things (docs/security.md): P4Runtime may be plaintext
without `--plaintext` only to a loopback address, and BMv2's thrift runtime
(unauthenticated) is found on the P4Runtime address's host only when that
host is loopback. A loopback host is an IP literal in 127.0.0.0/8 or ::1 (or
::ffff:127.x), or the name `localhost` when every address it resolves to is
one; any other name is not loopback, whatever it resolves to today.
"""

from __future__ import annotations

import ipaddress
import socket

LOCALHOST = "localhost"


def host_port(address: str) -> tuple[str, int]:
    """'HOST:PORT' or '[V6]:PORT' -> (host without brackets, port)."""
    host, _sep, port = address.rpartition(":")
    return host.removeprefix("[").removesuffix("]"), int(port)


def host_of(address: str) -> str:
    """The host part of 'HOST:PORT' (brackets of an IPv6 literal removed)."""
    return address.rpartition(":")[0].removeprefix("[").removesuffix("]")


def _loopback_ip(text: str) -> bool | None:
    """True/False for an IP literal, None for anything else (a name)."""
    try:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine's loopback (see the module's rule)."""
    literal = _loopback_ip(host)
    if literal is not None:
        return literal
    if host.lower().rstrip(".") != LOCALHOST:
        return False
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    return bool(found) and all(_loopback_ip(str(sa[0])) for *_, sa in found)


def bracketed(host: str) -> str:
    """A host as it goes before ':PORT' (an IPv6 literal in brackets)."""
    return f"[{host}]" if ":" in host else host
