"""Tofino device configs: the two packed formats byte for byte, and `p4incast-ctl
--target tna push/apply` end to end against a real gRPC P4Runtime server that records
what it is sent (no Tofino, no compiler: the build's files are written here).

The expected bytes are written out by hand from the format definitions:
- bf_switchd (PI targets/bf `_pi_update_device_start`): `[u32 length, little-endian]
  [bytes]` per part; program name, tofino.bin, context.json, then pipe name and
  bf-rt.json in the 5-part form;
- Stratum's BfPipelineConfig (stratum/hal/lib/barefoot/bf.proto): protobuf wire
  format, tag = field number << 3 | wire type (2: length-delimited).
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
import yaml
from ctlrun import ctl
from finsy import pbutil
from finsy.proto import p4i, p4r, p4r_grpc

from p4incast.controller import config, connection, tofino_config
from p4incast.controller.config import Pipeline
from p4incast.controller.errors import ControllerError
from p4incast.controller.tofino_config import TofinoBuild

REPO = Path(__file__).resolve().parents[2]
V1MODEL_P4INFO = Pipeline.default().p4info  # the same P4Runtime names as tna's (tests/tna)

BINARY = bytes(range(256)) * 3 + b"\x00\xff"  # not text: every byte value, NULs included
CONTEXT = b'{"program_name": "main.p4", "tables": []}'
BFRT = b'{"schema_version": "1.0.0", "tables": []}'
SMALL_P4INFO = 'pkg_info { arch: "tna" }\n'


def make_build(tmp: Path, p4info: str | Path = SMALL_P4INFO) -> Path:
    """A bf-p4c build directory as scripts/build-tna.sh leaves it."""
    build = tmp / "tna"
    build.mkdir()
    (build / "tofino.bin").write_bytes(BINARY)
    (build / "context.json").write_bytes(CONTEXT)
    (build / "bf-rt.json").write_bytes(BFRT)
    if isinstance(p4info, Path):
        shutil.copy(p4info, build / tofino_config.P4INFO)
    else:
        (build / tofino_config.P4INFO).write_text(p4info)
    return build


EXPECTED = TofinoBuild(p4_name="main", binary=BINARY, context=CONTEXT, bfrt=BFRT)


def u32le(n: int) -> bytes:
    return bytes([n & 0xFF, (n >> 8) & 0xFF, (n >> 16) & 0xFF, (n >> 24) & 0xFF])


# -- the formats -------------------------------------------------------------------


def test_bf_switchd_five_parts_byte_layout() -> None:
    small = TofinoBuild(p4_name="p4incast", binary=b"BIN", context=b"{}", bfrt=b'{"t":1}')
    want = (
        b"\x08\x00\x00\x00" + b"p4incast"
        + b"\x03\x00\x00\x00" + b"BIN"
        + b"\x02\x00\x00\x00" + b"{}"
        + b"\x04\x00\x00\x00" + b"pipe"
        + b"\x07\x00\x00\x00" + b'{"t":1}'
    )  # fmt: skip
    assert tofino_config.pack_bf_switchd(small) == want
    assert tofino_config.pack_bf_switchd(small, 5) == want


def test_bf_switchd_three_parts_byte_layout() -> None:
    small = TofinoBuild(p4_name="p4incast", binary=b"BIN", context=b"{}", bfrt=b'{"t":1}')
    want = b"\x08\x00\x00\x00p4incast\x03\x00\x00\x00BIN\x02\x00\x00\x00{}"
    assert tofino_config.pack_bf_switchd(small, 3) == want


def test_bf_switchd_lengths_are_little_endian_beyond_one_byte() -> None:
    # 0x0302 = 770 bytes of binary: the length's low byte first.
    packed = tofino_config.pack_bf_switchd(EXPECTED)
    assert packed[:4] == b"\x04\x00\x00\x00" and packed[4:8] == b"main"
    assert packed[8:12] == b"\x02\x03\x00\x00" == u32le(len(BINARY))
    assert packed[12 : 12 + len(BINARY)] == BINARY


def test_stratum_wire_bytes() -> None:
    small = TofinoBuild(p4_name="p4incast", binary=b"BIN", context=b"{}", bfrt=b'{"t":1}')
    profile = (
        b"\x0a\x04pipe"  # 1 profile_name
        + b"\x12\x02{}"  # 2 context
        + b"\x1a\x03BIN"  # 3 binary
        + b"\x22\x04\x00\x01\x02\x03"  # 4 pipe_scope, packed uint32 (proto3)
    )
    want = (
        b"\x0a\x08p4incast"  # 1 p4_name
        + b"\x12\x07" + b'{"t":1}'  # 2 bfruntime_info
        + b"\x1a" + bytes([len(profile)]) + profile  # 3 profiles
    )  # fmt: skip
    assert tofino_config.pack_stratum(small) == want


@pytest.mark.parametrize("parts", [5, 3])
def test_bf_switchd_round_trip_from_files(tmp_path: Path, parts: int) -> None:
    build = tofino_config.read_build(make_build(tmp_path))
    assert build == EXPECTED
    back = tofino_config.unpack_bf_switchd(tofino_config.pack_bf_switchd(build, parts))
    assert (back.p4_name, back.binary, back.context) == ("main", BINARY, CONTEXT)
    assert (back.pipe_name, back.bfrt) == (("pipe", BFRT) if parts == 5 else ("", b""))


def test_stratum_round_trip_from_files(tmp_path: Path) -> None:
    build = tofino_config.read_build(make_build(tmp_path))
    assert tofino_config.unpack_stratum(tofino_config.pack_stratum(build)) == EXPECTED


def test_program_name_comes_from_context_json() -> None:
    assert tofino_config.program_name(b'{"program_name": "main.p4"}') == "main"
    assert tofino_config.program_name(b'{"tables": []}') == tofino_config.PROGRAM_NAME
    assert tofino_config.program_name(b"not json") == tofino_config.PROGRAM_NAME


def test_pipe_name_is_the_programs_pipeline_instance() -> None:
    main = (REPO / "p4src/tna/main.p4").read_text()
    assert f") {tofino_config.PIPE_NAME};" in main
    assert f"Switch({tofino_config.PIPE_NAME})" in main


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x08\x00\x00", "truncated length at byte 0"),
        (b"\x08\x00\x00\x00p4", "part 1 says 8 bytes, 2 remain"),
        (b"\x01\x00\x00\x00a" * 4, "has 4 parts, expected 5 or 3"),
        (b"\x01\x00\x00\x00a" * 3 + b"\x00", "truncated length at byte 15"),
    ],
)
def test_bf_switchd_unpack_refuses_malformed(data: bytes, message: str) -> None:
    with pytest.raises(ControllerError, match=message):
        tofino_config.unpack_bf_switchd(data)


def test_names_longer_than_pi_allows_are_refused() -> None:
    long = TofinoBuild(p4_name="x" * 101, binary=b"", context=b"", bfrt=b"")
    with pytest.raises(ControllerError, match=r"program name 'x+' must be 1\.\.100 bytes"):
        tofino_config.pack_bf_switchd(long)
    with pytest.raises(ControllerError, match="runtime 'pi' is not one of stratum, bf-switchd"):
        tofino_config.pack(EXPECTED, "pi")


def test_read_build_names_the_missing_part(tmp_path: Path) -> None:
    build = make_build(tmp_path)
    (build / "bf-rt.json").unlink()
    with pytest.raises(ControllerError, match=r"TNA build .* has no bf-rt.json: run `make"):
        tofino_config.read_build(build)


def test_write_packed_beside_the_build(tmp_path: Path) -> None:
    build = make_build(tmp_path)
    written = tofino_config.write_packed(build)
    assert [p.name for p in written] == ["device_config.stratum.pb", "device_config.bf-switchd.bin"]
    assert tofino_config.unpack_stratum(written[0].read_bytes()) == EXPECTED
    assert tofino_config.unpack_bf_switchd(written[1].read_bytes()).bfrt == BFRT


# -- the config surface ------------------------------------------------------------


def test_tna_defaults_to_stratum_and_the_build_dir() -> None:
    cfg = config.parse({"switch": {"target": "tna"}})
    assert cfg.switch.runtime is None and cfg.switch.tofino_runtime == "stratum"
    assert cfg.switch.bf_switchd_parts == 5
    assert cfg.pipeline.build_dir == REPO / "build/tna" and cfg.pipeline.config is None
    assert cfg.pipeline.p4info == REPO / "build/tna" / tofino_config.P4INFO
    cfg = config.parse({"switch": {"target": "tna"}, "pipeline": {"build_dir": "/b"}})
    assert cfg.pipeline.p4info == Path("/b") / tofino_config.P4INFO


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"switch": {"runtime": "stratum"}}, "switch.runtime is for target tna"),
        ({"switch": {"target": "tna", "runtime": "pi"}}, "'pi' is not one of stratum, bf-switchd"),
        ({"switch": {"target": "tna", "bf_switchd_parts": 4}}, "4 is not one of 5, 3"),
        (
            {"switch": {"target": "tna"}, "pipeline": {"config": "tofino.bin"}},
            "pipeline.config is not used on tna: its device config is packed from "
            "pipeline.build_dir",
        ),
        ({"pipeline": {"build_dir": "build/tna"}}, "pipeline.build_dir is for target tna"),
    ],
)
def test_runtime_and_pipeline_keys_refused(data: dict, message: str) -> None:
    with pytest.raises(ControllerError, match=message):
        config.parse(data)


def test_load_resolves_build_dir_relative_to_the_config(tmp_path: Path) -> None:
    path = tmp_path / "sw.yaml"
    path.write_text("switch: {target: tna, runtime: bf-switchd}\npipeline: {build_dir: out}\n")
    cfg = config.load(path)
    assert cfg.pipeline.build_dir == tmp_path / "out"
    assert cfg.pipeline.p4info == tmp_path / "out" / tofino_config.P4INFO


# -- a recording P4Runtime server --------------------------------------------------


@dataclass
class RecordingP4Runtime(p4r_grpc.P4RuntimeServicer):
    """The RPCs finsy's Switch makes on connect and push (StreamChannel arbitration,
    Capabilities, Get/SetForwardingPipelineConfig) and apply's Read/Write. Every call
    is logged; the pipeline set is kept, so Get reports its cookie afterwards."""

    calls: list[str] = field(default_factory=list)
    set_requests: list[p4r.SetForwardingPipelineConfigRequest] = field(default_factory=list)
    writes: list[p4r.WriteRequest] = field(default_factory=list)
    pipeline: p4r.ForwardingPipelineConfig | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _log(self, name: str) -> None:
        with self.lock:
            self.calls.append(name)

    def StreamChannel(self, request_iterator, context):
        self._log("StreamChannel")
        for request in request_iterator:
            if request.WhichOneof("update") == "arbitration":
                update = p4r.MasterArbitrationUpdate()
                update.CopyFrom(request.arbitration)
                update.status.code = grpc.StatusCode.OK.value[0]  # this client is primary
                yield p4r.StreamMessageResponse(arbitration=update)

    def Capabilities(self, request, context):
        self._log("Capabilities")
        return p4r.CapabilitiesResponse(p4runtime_api_version="1.3.0")

    def GetForwardingPipelineConfig(self, request, context):
        self._log("GetForwardingPipelineConfig")
        reply = p4r.GetForwardingPipelineConfigResponse()
        if self.pipeline is not None:
            reply.config.cookie.CopyFrom(self.pipeline.cookie)
            kind = p4r.GetForwardingPipelineConfigRequest.ResponseType
            if request.response_type in (kind.ALL, kind.P4INFO_AND_COOKIE):
                reply.config.p4info.CopyFrom(self.pipeline.p4info)
        return reply

    def SetForwardingPipelineConfig(self, request, context):
        self._log("SetForwardingPipelineConfig")
        with self.lock:
            self.set_requests.append(request)
            self.pipeline = request.config
        return p4r.SetForwardingPipelineConfigResponse()

    def Write(self, request, context):
        self._log("Write")
        with self.lock:
            self.writes.append(request)
        return p4r.WriteResponse()

    def Read(self, request, context):
        self._log("Read")
        yield from ()  # an empty switch: no entries


@pytest.fixture()
def server() -> Iterator[tuple[RecordingP4Runtime, str]]:
    servicer = RecordingP4Runtime()
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    p4r_grpc.add_P4RuntimeServicer_to_server(servicer, srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    try:
        yield servicer, f"127.0.0.1:{port}"
    finally:
        srv.stop(0)


def ctl_in_repo(*args: str) -> subprocess.CompletedProcess[str]:
    return ctl(*args, timeout=120, cwd=REPO)


def decoded(runtime: str, data: bytes) -> TofinoBuild:
    if runtime == "stratum":
        return tofino_config.unpack_stratum(data)
    return tofino_config.unpack_bf_switchd(data)


RUNTIMES = [("stratum", None), ("bf-switchd", 5), ("bf-switchd", 3)]


def want(runtime: str, parts: int | None) -> TofinoBuild:
    """What the recorded device config decodes to (bf-switchd carries no pipe scope;
    its 3-part form no pipe name or bf-rt.json)."""
    if runtime == "stratum":
        return EXPECTED
    if parts == 3:
        return TofinoBuild("main", BINARY, CONTEXT, b"", "", ())
    return TofinoBuild("main", BINARY, CONTEXT, BFRT, "pipe", ())


@pytest.mark.parametrize(("runtime", "parts"), RUNTIMES)
def test_push_sends_the_packed_build(
    tmp_path: Path, server: tuple[RecordingP4Runtime, str], runtime: str, parts: int | None
) -> None:
    rec, address = server
    build = make_build(tmp_path)
    flags = ["--target", "tna", "--address", address, "--tna-build", str(build)]
    flags += ["--tofino-runtime", runtime]
    if parts:
        flags += ["--bf-switchd-parts", str(parts)]
    proc = ctl_in_repo(*flags, "push")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"pipeline {build} (packed for {runtime}) installed on {address}"
    assert len(rec.set_requests) == 1
    sent = rec.set_requests[0].config
    assert sent.p4_device_config != BINARY
    assert decoded(runtime, sent.p4_device_config) == want(runtime, parts)
    assert sent.p4info == pbutil.from_text(SMALL_P4INFO, p4i.P4Info)
    # The same pipeline again: finsy sees its cookie and pushes nothing.
    proc = ctl_in_repo(*flags, "push")
    assert proc.returncode == 0, proc.stderr
    assert len(rec.set_requests) == 1


@pytest.mark.skipif(not V1MODEL_P4INFO.is_file(), reason=f"{V1MODEL_P4INFO} not built")
@pytest.mark.parametrize(("runtime", "parts"), RUNTIMES)
def test_apply_pushes_the_packed_build_then_writes(
    tmp_path: Path, server: tuple[RecordingP4Runtime, str], runtime: str, parts: int | None
) -> None:
    rec, address = server
    make_build(tmp_path, V1MODEL_P4INFO)
    switch: dict = {"address": address, "target": "tna", "runtime": runtime}
    if parts:
        switch["bf_switchd_parts"] = parts
    cfg = tmp_path / "switch.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "switch": switch,
                "pipeline": {"build_dir": "tna"},  # relative to the config file
                "ports": {
                    1: {"mac": "00:aa:00:00:00:01"},
                    2: {"mac": "00:aa:00:00:00:02", "ecn": {"mode": "front", "k": 8000}},
                },
                "routes": [{"prefix": "10.0.2.0/24", "port": 2, "dmac": "00:bb:00:00:00:02"}],
            }
        )
    )
    proc = ctl_in_repo("apply", str(cfg))
    assert proc.returncode == 0, proc.stderr
    assert f"updates written to {address}" in proc.stdout
    assert len(rec.set_requests) == 1
    sent = rec.set_requests[0].config
    assert decoded(runtime, sent.p4_device_config) == want(runtime, parts)
    assert sent.p4info == pbutil.from_text(V1MODEL_P4INFO.read_text(), p4i.P4Info)
    assert rec.calls.index("SetForwardingPipelineConfig") < rec.calls.index("Write")
    assert len(rec.writes) == 1 and len(rec.writes[0].updates) > 0


@pytest.mark.parametrize("part", ["tofino.bin", "context.json", "bf-rt.json", tofino_config.P4INFO])
@pytest.mark.parametrize("cmd", ["push", "apply"])
def test_missing_part_refused_before_any_rpc(
    tmp_path: Path, server: tuple[RecordingP4Runtime, str], part: str, cmd: str
) -> None:
    rec, address = server
    build = make_build(tmp_path)
    (build / part).unlink()
    if cmd == "push":
        args = ["--target", "tna", "--address", address, "--tna-build", str(build), "push"]
    else:
        cfg = tmp_path / "switch.yaml"
        cfg.write_text(
            f"switch: {{address: '{address}', target: tna}}\npipeline: {{build_dir: tna}}\n"
        )
        args = ["apply", str(cfg)]
    proc = ctl_in_repo(*args)
    assert proc.returncode == 2, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("p4incast-ctl: error: TNA build ")
    assert f"has no {part}:" in lines[0]
    assert rec.calls == []


def test_p4_config_refused_on_tna_before_any_rpc(
    tmp_path: Path, server: tuple[RecordingP4Runtime, str]
) -> None:
    rec, address = server
    build = make_build(tmp_path)
    proc = ctl_in_repo(
        "--target", "tna", "--address", address, "--p4-config", str(build / "tofino.bin"), "push"
    )
    assert proc.returncode == 2, proc
    assert proc.stderr.strip().splitlines() == [
        "p4incast-ctl: error: --p4-config is BMv2's JSON; target tna is pushed from bf-p4c's "
        "build directory, packed for --tofino-runtime: use --tna-build DIR"
    ]
    proc = ctl_in_repo("--tna-build", str(build), "push")
    assert proc.returncode == 2
    assert "--tna-build is for --target tna; v1model takes --p4-config" in proc.stderr
    assert rec.calls == []


def test_pack_tna_writes_both_configs(tmp_path: Path) -> None:
    build = make_build(tmp_path)
    proc = ctl_in_repo("--bf-switchd-parts", "3", "pack-tna", str(build))
    assert proc.returncode == 0, proc.stderr
    assert [line.split(" (")[0] for line in proc.stdout.splitlines()] == [
        str(build / "device_config.stratum.pb"),
        str(build / "device_config.bf-switchd.bin"),
    ]
    assert tofino_config.unpack_stratum((build / "device_config.stratum.pb").read_bytes()) == (
        EXPECTED
    )
    three = tofino_config.unpack_bf_switchd((build / "device_config.bf-switchd.bin").read_bytes())
    assert (three.binary, three.context, three.bfrt) == (BINARY, CONTEXT, b"")


def test_no_bare_file_is_ever_pushed_to_tna(tmp_path: Path) -> None:
    # A Pipeline built in code (not through the YAML or the flags) naming tofino.bin as
    # its device config is refused before a connection; the packed build is what goes.
    build = make_build(tmp_path)
    tna = config.SwitchSettings(target="tna", runtime="bf-switchd")
    bare = Pipeline(p4info=build / tofino_config.P4INFO, config=build / "tofino.bin")
    with pytest.raises(ControllerError, match="target tna pushes a packed build"):
        connection.options(tna, bare, push=True)
    packed = Pipeline(p4info=build / tofino_config.P4INFO, build_dir=build)
    opts = connection.options(tna, packed, push=True)
    assert opts.p4blob == tofino_config.pack_bf_switchd(EXPECTED)
    v1 = config.SwitchSettings()
    with pytest.raises(ControllerError, match="target v1model pushes pipeline.config"):
        connection.options(v1, packed, push=True)
