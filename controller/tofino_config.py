"""Tofino device configs: a bf-p4c build packed the way a Tofino's P4Runtime server
takes it as `ForwardingPipelineConfig.p4_device_config`.

A Tofino pipeline is three compiler outputs (`tofino.bin`, the binary; `context.json`,
the driver's table layout; `bf-rt.json`, the BF Runtime schema), and neither P4Runtime
server a Tofino runs accepts any of them bare. Each wants its own container:

- **Stratum** (`stratum_bfrt`): a serialized protobuf `BfPipelineConfig`
  (stratum/hal/lib/barefoot/bf.proto, package `stratum.hal.barefoot`; Stratum's
  bf_pipeline_utils.cc parses p4_device_config as exactly this message). Field numbers
  are in `STRATUM_FIELDS` below; the descriptor is built in code, not generated from
  Stratum's .proto. One profile, named after the P4 `Pipeline` instance, on pipes
  0..3 (what bf-p4c's .conf and Stratum's bf_pipeline_builder give a one-pipeline
  program; the SDE trims the scope to the pipes a chip has).
- **bf_switchd's own server** (PI `targets/bf`, libbfpi: `_pi_update_device_start` in
  the SDE's bf-drivers src/pi/pi_imp.c reads the bytes PI's frontend hands it):
  length-prefixed parts, each `[u32 length, little-endian][bytes]`:

      5 parts (default):  program name | tofino.bin | context.json | pipe name | bf-rt.json
      3 parts:            program name | tofino.bin | context.json

  The 3-part form is PI's original layout (Stratum's BfPipelineConfigToPiConfig writes
  it too). Newer SDEs read a 4th length: non-zero means a pipe name and bf-rt.json
  follow, and BF Runtime is then set up for the program. The reader checked never
  looks at the total size: an old SDE stops after three parts (trailing bytes are
  ignored) and a new one reads past the end of a 3-part config. So 5 parts is the
  default, and 3 stays reachable (`bf_switchd_parts: 3`) for a server that wants
  exactly PI's layout. Names are at most 100 bytes (`_PI_UPDATE_MAX_NAME_SIZE`).

Pure apart from reading a build directory and writing packed files; raises
ControllerError only.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

from .errors import ControllerError

RUNTIMES = ("stratum", "bf-switchd")  # switch.runtime / --tofino-runtime
DEFAULT_RUNTIME = "stratum"
BF_SWITCHD_PARTS = (5, 3)  # switch.bf_switchd_parts / --bf-switchd-parts; first = default

# bf-p4c's outputs, as scripts/build-tna.sh leaves them at the top of the build dir.
BINARY = "tofino.bin"
CONTEXT = "context.json"
BFRT = "bf-rt.json"
P4INFO = "p4incast.p4info.txtpb"
PARTS = (BINARY, CONTEXT, BFRT)  # what the device config is packed from

# Packed files `make build-tna` writes beside them (`pack-tna`).
STRATUM_FILE = "device_config.stratum.pb"
BF_SWITCHD_FILE = "device_config.bf-switchd.bin"

PIPE_NAME = "pipe"  # `Pipeline(...) pipe;` in p4src/tna/main.p4 (bf-p4c's pipe directory)
PIPE_SCOPE = (0, 1, 2, 3)  # every pipe of a Tofino 1 (bf-p4c .conf's pipe_scope)
PROGRAM_NAME = "p4incast"  # when context.json names no program
NAME_MAX = 100  # PI bf: _PI_UPDATE_MAX_NAME_SIZE, longest program / pipe name

# stratum/hal/lib/barefoot/bf.proto, proto3, package stratum.hal.barefoot:
#   message BfPipelineConfig {
#     message Profile { string profile_name = 1; bytes context = 2; bytes binary = 3;
#                       repeated uint32 pipe_scope = 4; }
#     string p4_name = 1; bytes bfruntime_info = 2; repeated Profile profiles = 3; }
_F = descriptor_pb2.FieldDescriptorProto
STRATUM_PACKAGE = "stratum.hal.barefoot"
STRATUM_FIELDS: dict[str, tuple[tuple[str, int, int, int], ...]] = {
    # message: (field name, number, type, label)
    "BfPipelineConfig": (
        ("p4_name", 1, _F.TYPE_STRING, _F.LABEL_OPTIONAL),
        ("bfruntime_info", 2, _F.TYPE_BYTES, _F.LABEL_OPTIONAL),
        ("profiles", 3, _F.TYPE_MESSAGE, _F.LABEL_REPEATED),
    ),
    "BfPipelineConfig.Profile": (
        ("profile_name", 1, _F.TYPE_STRING, _F.LABEL_OPTIONAL),
        ("context", 2, _F.TYPE_BYTES, _F.LABEL_OPTIONAL),
        ("binary", 3, _F.TYPE_BYTES, _F.LABEL_OPTIONAL),
        ("pipe_scope", 4, _F.TYPE_UINT32, _F.LABEL_REPEATED),
    ),
}


def _add_fields(msg: descriptor_pb2.DescriptorProto, name: str) -> None:
    for fname, number, ftype, label in STRATUM_FIELDS[name]:
        f = msg.field.add(name=fname, number=number, type=ftype, label=label)
        if ftype == _F.TYPE_MESSAGE:
            f.type_name = f".{STRATUM_PACKAGE}.BfPipelineConfig.Profile"


def _stratum_message_class() -> Any:
    """BfPipelineConfig's class, from a descriptor built here (a private pool)."""
    fdp = descriptor_pb2.FileDescriptorProto(
        name="p4incast/stratum_bf.proto", package=STRATUM_PACKAGE, syntax="proto3"
    )
    top = fdp.message_type.add(name="BfPipelineConfig")
    _add_fields(top, "BfPipelineConfig")
    _add_fields(top.nested_type.add(name="Profile"), "BfPipelineConfig.Profile")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    desc = pool.FindMessageTypeByName(f"{STRATUM_PACKAGE}.BfPipelineConfig")
    return message_factory.GetMessageClass(desc)


BfPipelineConfig = _stratum_message_class()


@dataclass(frozen=True)
class TofinoBuild:
    """One program's compiler outputs, as packed into (or read back from) a device config.

    `bfrt` and `pipe_name` are empty when a 3-part bf-switchd config carried none.
    """

    p4_name: str
    binary: bytes  # tofino.bin
    context: bytes  # context.json
    bfrt: bytes  # bf-rt.json
    pipe_name: str = PIPE_NAME
    pipe_scope: tuple[int, ...] = PIPE_SCOPE


def missing_part(build_dir: Path) -> str | None:
    """The first of tofino.bin, context.json, bf-rt.json that `build_dir` lacks."""
    return next((p for p in PARTS if not (build_dir / p).is_file()), None)


def lacks(build_dir: Path, part: str) -> str:
    """The one-line refusal for a build directory without `part`."""
    return (
        f"TNA build {build_dir} has no {part}: run `make build-tna` (needs the Tofino p4c) "
        "or point --tna-build / pipeline.build_dir at bf-p4c's output directory"
    )


def program_name(context: bytes) -> str:
    """context.json's `program_name` (bf-p4c writes e.g. "main.p4"; the suffix goes),
    or PROGRAM_NAME when it has none."""
    try:
        name = json.loads(context).get("program_name")
    except (ValueError, AttributeError):
        name = None
    if not isinstance(name, str) or not name.strip():
        return PROGRAM_NAME
    return name.strip().removesuffix(".p4")


def read_build(build_dir: Path) -> TofinoBuild:
    """tofino.bin, context.json and bf-rt.json of a bf-p4c build (ControllerError naming
    the first one missing)."""
    part = missing_part(build_dir)
    if part is not None:
        raise ControllerError(lacks(build_dir, part))
    try:
        binary, context, bfrt = ((build_dir / p).read_bytes() for p in PARTS)
    except OSError as err:
        raise ControllerError(f"cannot read TNA build {build_dir}: {err.strerror}") from None
    return TofinoBuild(program_name(context), binary, context, bfrt)


def pack_stratum(build: TofinoBuild) -> bytes:
    """A serialized BfPipelineConfig with one profile (Stratum's p4_device_config)."""
    msg = BfPipelineConfig(p4_name=build.p4_name, bfruntime_info=build.bfrt)
    msg.profiles.add(
        profile_name=build.pipe_name,
        context=build.context,
        binary=build.binary,
        pipe_scope=list(build.pipe_scope),
    )
    return msg.SerializeToString(deterministic=True)


def unpack_stratum(data: bytes) -> TofinoBuild:
    """The one-profile BfPipelineConfig in `data` (ControllerError if it is not one)."""
    msg = BfPipelineConfig()
    try:
        msg.ParseFromString(data)
    except DecodeError as err:
        raise ControllerError(f"not a Stratum BfPipelineConfig: {err}") from None
    if len(msg.profiles) != 1:
        raise ControllerError(f"BfPipelineConfig has {len(msg.profiles)} profiles, expected 1")
    prof = msg.profiles[0]
    return TofinoBuild(
        msg.p4_name,
        prof.binary,
        prof.context,
        msg.bfruntime_info,
        prof.profile_name,
        tuple(prof.pipe_scope),
    )


def _name(value: str, what: str) -> bytes:
    raw = value.encode()
    if not 1 <= len(raw) <= NAME_MAX:
        raise ControllerError(f"{what} {value!r} must be 1..{NAME_MAX} bytes for bf_switchd")
    return raw


def _chunk(data: bytes) -> bytes:
    if len(data) >= 1 << 32:
        raise ControllerError("a device-config part of 4 GiB or more cannot be length-prefixed")
    return struct.pack("<I", len(data)) + data


def pack_bf_switchd(build: TofinoBuild, parts: int = BF_SWITCHD_PARTS[0]) -> bytes:
    """bf_switchd's device config: 5 parts (with pipe name and bf-rt.json) or PI's 3."""
    if parts not in BF_SWITCHD_PARTS:
        raise ControllerError(f"bf_switchd_parts {parts!r} is not one of 5, 3")
    out = _chunk(_name(build.p4_name, "program name"))
    out += _chunk(build.binary) + _chunk(build.context)
    if parts == 5:
        out += _chunk(_name(build.pipe_name, "pipe name")) + _chunk(build.bfrt)
    return out


def unpack_bf_switchd(data: bytes) -> TofinoBuild:
    """The 3- or 5-part config in `data`, read to its last byte (ControllerError on
    a truncated config, trailing bytes or any other number of parts)."""
    chunks: list[bytes] = []
    at = 0
    while at < len(data):
        if at + 4 > len(data):
            raise ControllerError(f"bf_switchd config: truncated length at byte {at}")
        (size,) = struct.unpack_from("<I", data, at)
        at += 4
        if at + size > len(data):
            raise ControllerError(
                f"bf_switchd config: part {len(chunks) + 1} says {size} bytes, "
                f"{len(data) - at} remain"
            )
        chunks.append(data[at : at + size])
        at += size
    if len(chunks) not in BF_SWITCHD_PARTS:
        raise ControllerError(f"bf_switchd config has {len(chunks)} parts, expected 5 or 3")
    name, binary, context = chunks[:3]
    pipe, bfrt = chunks[3:] if len(chunks) == 5 else (b"", b"")
    return TofinoBuild(name.decode(), binary, context, bfrt, pipe.decode(), ())


def pack(build: TofinoBuild, runtime: str, bf_switchd_parts: int = BF_SWITCHD_PARTS[0]) -> bytes:
    """The device config `runtime` (stratum | bf-switchd) takes."""
    if runtime == "stratum":
        return pack_stratum(build)
    if runtime == "bf-switchd":
        return pack_bf_switchd(build, bf_switchd_parts)
    raise ControllerError(f"runtime {runtime!r} is not one of {', '.join(RUNTIMES)}")


def write_packed(build_dir: Path, bf_switchd_parts: int = BF_SWITCHD_PARTS[0]) -> list[Path]:
    """Both packed configs beside the build's files; returns the paths written."""
    build = read_build(build_dir)
    written: list[Path] = []
    for name, data in (
        (STRATUM_FILE, pack_stratum(build)),
        (BF_SWITCHD_FILE, pack_bf_switchd(build, bf_switchd_parts)),
    ):
        path = build_dir / name
        try:
            path.write_bytes(data)
        except OSError as err:
            raise ControllerError(f"cannot write {path}: {err.strerror}") from None
        written.append(path)
    return written
