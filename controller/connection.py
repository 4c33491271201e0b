"""P4Runtime connection to one switch (finsy), with the failures a user can cause
turned into one clear ControllerError each."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import finsy as fy
from finsy import p4entity

from . import tls, tofino_config
from .addresses import host_of, is_loopback
from .config import Pipeline, SwitchSettings
from .errors import ControllerError

CONNECT_TIMEOUT_S = 10.0

_E = TypeVar("_E", bound=p4entity.P4Entity)


class EntityReader(Protocol):
    """Reads entities the way finsy's Switch.read does (export's ReadOnlySwitch)."""

    def read(self, entities: _E | Iterable[_E]) -> AsyncIterator[_E]: ...


def read_entities(sw: fy.Switch | EntityReader, entities: _E | Iterable[_E]) -> AsyncIterator[_E]:
    """`sw.read(entities)`, typed: finsy declares Switch.read's overloads `async def`
    with no `yield`, so a type checker takes the call for a coroutine, while it
    returns an async generator."""
    return cast("AsyncIterator[_E]", sw.read(entities))


def device_config(settings: SwitchSettings, pipeline: Pipeline) -> Path | bytes:
    """The p4_device_config to push: BMv2's JSON file as is, or a Tofino build packed
    for the switch's runtime (switch.runtime). A target that packs a build never gets
    a bare file: without pipeline.build_dir it is refused."""
    packs = settings.target_profile.packs_build_dir
    if pipeline.build_dir is not None and packs:
        build = tofino_config.read_build(pipeline.build_dir)
        return tofino_config.pack(build, settings.tofino_runtime, settings.bf_switchd_parts)
    if packs:
        raise ControllerError(
            f"target {settings.target} pushes a packed build: name bf-p4c's output "
            "directory (--tna-build DIR / pipeline.build_dir), not a device file"
        )
    if pipeline.build_dir is not None or pipeline.config is None:
        raise ControllerError(
            f"target {settings.target} pushes pipeline.config (--p4-config) as is, "
            "not a build directory"
        )
    return pipeline.config


def options(
    settings: SwitchSettings,
    pipeline: Pipeline | None,
    *,
    push: bool,
    force: bool = False,
    **extra: Any,
) -> fy.SwitchOptions:
    """finsy options: with `push`, the pipeline files are authoritative and installed
    (the device config read, and packed for a Tofino, here: before any connection)."""
    kwargs: dict[str, Any] = {
        "device_id": settings.device_id,
        "initial_election_id": settings.election_id,
        "channel_credentials": tls.credentials(settings.tls),
        **extra,
    }
    if push:
        assert pipeline is not None
        pipeline.check(need_config=True)
        blob = device_config(settings, pipeline)
        kwargs.update(p4info=pipeline.p4info, p4blob=blob, p4force=force)
    return fy.SwitchOptions(**kwargs)


async def check_handshake(settings: SwitchSettings) -> None:
    """Refuse plaintext to a switch that is not on loopback unless asked for
    (`tls.check_transport`), before any packet; then, with its cause, a switch that
    gRPC would fail to shake hands with (`tls.probe`: TLS against plaintext or the
    reverse, an unknown CA, a name mismatch, a client certificate missing or
    refused). Every P4Runtime connection passes here first. Nothing is written."""
    tls.check_transport(settings.address, settings.tls, settings.plaintext)
    problem = await asyncio.to_thread(tls.probe, settings.address, settings.tls)
    if problem is not None:
        raise ControllerError(problem)


def _explain(err: BaseException, settings: SwitchSettings) -> str:
    text = str(err)
    address, device_id = settings.address, settings.device_id
    if isinstance(err, TimeoutError):
        return f"switch at {address} did not answer within {CONNECT_TIMEOUT_S:.0f} s"
    if "UNAVAILABLE" in text or "failed to connect" in text.lower():
        local = is_loopback(host_of(address))  # /proc shows this host's ports
        clash = settings.target_profile.local_port_clash(settings.thrift_port) if local else None
        if clash:
            return f"cannot reach the switch's P4Runtime server at {address}: {clash}"
        return (
            f"cannot reach the switch's P4Runtime server at {address} "
            "(is simple_switch_grpc running, with --grpc-server-addr on that address?)"
        )
    if "assign device" in text or "NOT_FOUND" in text and "device" in text.lower():
        return (
            f"the switch at {address} has no device id {device_id}; "
            "pass the id simple_switch_grpc was started with (--device-id)"
        )
    if isinstance(err, fy.P4ClientError):
        return refused(err, address)
    first = text.strip().splitlines()[0] if text.strip() else type(err).__name__
    return f"P4Runtime error from {address}: {first}"


def refused(err: fy.P4ClientError, address: str) -> str:
    """One line for a P4Runtime error: its code and message and, for a write, the
    first update the switch refused (its index, code and message)."""
    line = f"the switch at {address} refused the P4Runtime request: {err.code.name}"
    if err.message:
        line += f" ({err.message})"
    for index, detail in sorted(err.details.items())[:1]:
        more = f", and {len(err.details) - 1} more" if len(err.details) > 1 else ""
        line += f"; update {index}: {detail.canonical_code.name} ({detail.message}){more}"
    return " ".join(line.split())


@asynccontextmanager
async def connect(
    settings: SwitchSettings, pipeline: Pipeline | None, *, push: bool = False, force: bool = False
) -> AsyncGenerator[fy.Switch, None]:
    """Connect as primary. With `push`, install the pipeline (unless the same one
    runs already, or `force`); without, require that the switch runs a pipeline
    and exactly the one whose p4info is given (when given); with neither push nor
    pipeline, only be primary (what a thrift write needs). A P4Runtime error in
    the block (a write the switch refused) becomes one ControllerError."""
    await check_handshake(settings)
    sw = fy.Switch(
        "p4incast", settings.address, options(settings, pipeline, push=push, force=force)
    )
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT_S):
            await sw.__aenter__()
    except (fy.P4ClientError, TimeoutError, OSError) as err:
        raise ControllerError(_explain(err, settings)) from None
    try:
        require_primary(sw, settings)
        if not push and pipeline is not None:
            _check_pipeline(sw, pipeline)
        yield sw
    except fy.P4ClientError as err:
        raise ControllerError(refused(err, settings.address)) from None
    finally:
        await sw.__aexit__(None, None, None)


def require_primary(sw: fy.Switch, settings: SwitchSettings) -> None:
    """Refuse to go on unless `sw` is the primary controller of the switch."""
    if not sw.is_primary:
        raise ControllerError(
            f"another controller is primary on {settings.address} (election id "
            f"{sw.primary_id}); use an election id above it (--election-id)"
        )


def _check_pipeline(sw: fy.Switch, pipeline: Pipeline | None) -> None:
    if not sw.p4info.exists:
        raise ControllerError(
            f"the switch at {sw.address} runs no pipeline yet; run `p4incast-ctl push` "
            "or `p4incast-ctl apply CONFIG` first"
        )
    if pipeline is None or not pipeline.p4info.is_file():
        return
    local = fy.P4Schema(pipeline.p4info)
    if not local.has_p4info(sw.p4info.p4info):
        raise ControllerError(
            f"the pipeline running on {sw.address} ({sw.p4info.name or 'unnamed'}) does not "
            f"match {pipeline.p4info}; push it again (`p4incast-ctl push --force`) or pass "
            "the p4info it was built with"
        )


def quiet_finsy(verbose: bool) -> None:
    """finsy logs reconnect chatter at INFO/WARNING; keep a program's output its own.

    Only finsy's logger level is set here; handlers and the root level are the
    program's (`__main__` configures them for p4incast-ctl).
    """
    logging.getLogger("finsy").setLevel(logging.NOTSET if verbose else logging.CRITICAL)
