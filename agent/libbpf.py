"""Thin ctypes layer over libbpf.so.1's public API (Debian package libbpf1).

Only what the agent needs: open/load an object, find programs and maps, map
element calls, tc attachment (TCX links owned by this process, or a clsact
hook with an explicit cleanup path), BPF_PROG_TEST_RUN, struct_ops
registration. Every bpf() call goes through libbpf; there are no raw
syscalls here. Struct layouts follow /usr/include/bpf/{bpf,libbpf}.h of
libbpf 1.1 (each starts with its own size, so newer libbpf accepts them).

Every object is opened through `open_object`, which first checks that the
object and its directory can be changed by nobody but root or the running
user (`open_trusted`): the agent runs as root, and whoever can write an object
it loads runs code in the kernel (a struct_ops congestion control stays
registered system-wide). libbpf then reads the very file that was checked.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import stat
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["BpfError", "Lib", "UntrustedObject", "lib", "open_trusted"]

_K = TypeVar("_K", bound=ctypes.Structure)  # a map's key type
_V = TypeVar("_V", bound="ctypes.Structure | ctypes._SimpleCData[Any]")  # its value type

BPF_TCX_INGRESS = 46
BPF_TCX_EGRESS = 47
BPF_TC_INGRESS = 1
BPF_TC_EGRESS = 2
BPF_ANY = 0
BPF_EXIST = 2
# The kernel's own ENOTSUPP (include/linux/errno.h), which bpf_map_lookup_batch()
# returns on kernels without it; Python's errno module has no such name.
ENOTSUPP = 524


class BpfError(RuntimeError):
    """A libbpf call failed; `errno` holds the positive error number."""

    def __init__(self, what: str, err: int) -> None:
        self.errno = abs(err)
        super().__init__(f"{what}: {os.strerror(self.errno)} (errno {self.errno})")


class UntrustedObject(PermissionError):
    """A BPF object, or its directory, that someone but root (or the running
    user) could have written; the message names the file and the fix."""


# Mode bits that let group or others change a file, or a directory's entries.
_WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH


def _untrusted(st: os.stat_result, path: Path) -> str | None:
    """Why `st` (of `path`) is not trusted, or None."""
    if st.st_uid not in (0, os.geteuid()):
        return f"owned by uid {st.st_uid}, not root"
    mode = stat.S_IMODE(st.st_mode)
    if mode & _WRITABLE_BY_OTHERS:
        return f"writable by group or others (mode {mode:04o})"
    return None


def _refuse(path: Path, why: str) -> UntrustedObject:
    return UntrustedObject(
        f"refusing to load BPF from {path}: {why}; whoever can change it runs code in "
        f"the kernel as root. Fix: chown root: {path} && chmod go-w {path}"
    )


def open_trusted(path: Path) -> int:
    """An O_RDONLY descriptor of the BPF object `path`, once the object (a regular
    file, not a symbolic link) and its directory are each owned by root or the
    running user and writable by no one else; UntrustedObject otherwise. The file
    is opened from the directory checked, and checked as opened, so neither can
    be swapped between check and load."""
    path = Path(path)
    folder = path.parent
    dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        why = _untrusted(os.fstat(dfd), folder)
        if why is not None:
            raise _refuse(folder, why)
        try:
            fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise _refuse(path, "a symbolic link") from None
            raise
    finally:
        os.close(dfd)
    st = os.fstat(fd)
    why = _untrusted(st, path) if stat.S_ISREG(st.st_mode) else "not a regular file"
    if why is not None:
        os.close(fd)
        raise _refuse(path, why)
    return fd


class OpenOpts(ctypes.Structure):
    """The leading fields of struct bpf_object_open_opts."""

    _fields_ = [("sz", ctypes.c_size_t), ("object_name", ctypes.c_char_p)]


class TestRunOpts(ctypes.Structure):
    _fields_ = [
        ("sz", ctypes.c_size_t),
        ("data_in", ctypes.c_void_p),
        ("data_out", ctypes.c_void_p),
        ("data_size_in", ctypes.c_uint32),
        ("data_size_out", ctypes.c_uint32),
        ("ctx_in", ctypes.c_void_p),
        ("ctx_out", ctypes.c_void_p),
        ("ctx_size_in", ctypes.c_uint32),
        ("ctx_size_out", ctypes.c_uint32),
        ("retval", ctypes.c_uint32),
        ("repeat", ctypes.c_int),
        ("duration", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("cpu", ctypes.c_uint32),
        ("batch_size", ctypes.c_uint32),
    ]


class TcHook(ctypes.Structure):
    _fields_ = [
        ("sz", ctypes.c_size_t),
        ("ifindex", ctypes.c_int),
        ("attach_point", ctypes.c_int),
        ("parent", ctypes.c_uint32),
    ]


class TcOpts(ctypes.Structure):
    _fields_ = [
        ("sz", ctypes.c_size_t),
        ("prog_fd", ctypes.c_int),
        ("flags", ctypes.c_uint32),
        ("prog_id", ctypes.c_uint32),
        ("handle", ctypes.c_uint32),
        ("priority", ctypes.c_uint32),
    ]


class MapInfo(ctypes.Structure):
    """The leading fields of struct bpf_map_info (the kernel fills what fits)."""

    _fields_ = [
        ("type", ctypes.c_uint32),
        ("id", ctypes.c_uint32),
        ("key_size", ctypes.c_uint32),
        ("value_size", ctypes.c_uint32),
        ("max_entries", ctypes.c_uint32),
        ("map_flags", ctypes.c_uint32),
        ("name", ctypes.c_char * 16),
    ]


_P = ctypes.c_void_p
_I = ctypes.c_int
_U32 = ctypes.c_uint32

# ring_buffer_sample_fn: (ctx, data, size) -> 0 to go on
RING_SAMPLE = ctypes.CFUNCTYPE(_I, _P, _P, ctypes.c_size_t)

_PROTOS: dict[str, tuple[object, list[object]]] = {
    "ring_buffer__new": (_P, [_I, RING_SAMPLE, _P, _P]),
    "ring_buffer__consume": (_I, [_P]),
    "ring_buffer__free": (None, [_P]),
    "bpf_object__open_file": (_P, [ctypes.c_char_p, _P]),
    "bpf_object__load": (_I, [_P]),
    "bpf_object__close": (None, [_P]),
    "bpf_object__find_program_by_name": (_P, [_P, ctypes.c_char_p]),
    "bpf_object__find_map_by_name": (_P, [_P, ctypes.c_char_p]),
    "bpf_program__fd": (_I, [_P]),
    "bpf_program__set_autoload": (_I, [_P, ctypes.c_bool]),
    "bpf_map__fd": (_I, [_P]),
    "bpf_map__set_max_entries": (_I, [_P, _U32]),
    "bpf_map__value_size": (_U32, [_P]),
    "bpf_map_update_elem": (_I, [_I, _P, _P, ctypes.c_uint64]),
    "bpf_map_lookup_elem": (_I, [_I, _P, _P]),
    "bpf_map_delete_elem": (_I, [_I, _P]),
    "bpf_map_lookup_and_delete_elem": (_I, [_I, _P, _P]),
    "bpf_map_get_next_key": (_I, [_I, _P, _P]),
    "bpf_map_lookup_batch": (_I, [_I, _P, _P, _P, _P, ctypes.POINTER(_U32), _P]),
    "bpf_map_get_next_id": (_I, [_U32, ctypes.POINTER(_U32)]),
    "bpf_map_get_fd_by_id": (_I, [_U32]),
    "bpf_obj_get_info_by_fd": (_I, [_I, _P, ctypes.POINTER(_U32)]),
    "bpf_link_create": (_I, [_I, _I, ctypes.c_int, _P]),
    "bpf_tc_hook_create": (_I, [ctypes.POINTER(TcHook)]),
    "bpf_tc_hook_destroy": (_I, [ctypes.POINTER(TcHook)]),
    "bpf_tc_attach": (_I, [ctypes.POINTER(TcHook), ctypes.POINTER(TcOpts)]),
    "bpf_tc_detach": (_I, [ctypes.POINTER(TcHook), ctypes.POINTER(TcOpts)]),
    "bpf_prog_test_run_opts": (_I, [_I, ctypes.POINTER(TestRunOpts)]),
    "bpf_map__attach_struct_ops": (_P, [_P]),
    "bpf_link__destroy": (_I, [_P]),
    "libbpf_num_possible_cpus": (_I, []),
    "libbpf_get_error": (ctypes.c_long, [_P]),
}


class Lib:
    """libbpf.so.1 with typed prototypes; raises BpfError on failure."""

    def __init__(self) -> None:
        name = ctypes.util.find_library("bpf") or "libbpf.so.1"
        try:
            self.c = ctypes.CDLL(name, use_errno=True)
        except OSError:
            try:
                self.c = ctypes.CDLL("libbpf.so.1", use_errno=True)
            except OSError as e:
                msg = "libbpf.so.1 not found (apt-get install libbpf1)"
                raise BpfError(msg, errno.ENOENT) from e
        for fn, (res, args) in _PROTOS.items():
            f = getattr(self.c, fn)
            f.restype = res
            f.argtypes = args

    # -- objects -----------------------------------------------------------------
    def open_object(self, path: Path) -> int:
        """Open the object at `path` once `open_trusted` accepts it. libbpf reads
        the descriptor checked (/proc/self/fd/N), under the name it would give
        `path` itself (its file name up to the first dot)."""
        fd = open_trusted(path)
        try:
            opts = OpenOpts(ctypes.sizeof(OpenOpts), Path(path).name.split(".")[0].encode())
            obj = self.c.bpf_object__open_file(f"/proc/self/fd/{fd}".encode(), ctypes.byref(opts))
        finally:
            os.close(fd)
        if not obj:
            raise BpfError(f"open {path}", ctypes.get_errno() or errno.EINVAL)
        return obj

    def load_object(self, obj: int, what: str) -> None:
        rc = self.c.bpf_object__load(obj)
        if rc:
            raise BpfError(f"load {what} (verifier log above)", rc)

    def program(self, obj: int, name: str) -> int:
        p = self.c.bpf_object__find_program_by_name(obj, name.encode())
        if not p:
            raise BpfError(f"program {name}", errno.ENOENT)
        return p

    def map(self, obj: int, name: str) -> int:
        m = self.c.bpf_object__find_map_by_name(obj, name.encode())
        if not m:
            raise BpfError(f"map {name}", errno.ENOENT)
        return m

    # -- maps --------------------------------------------------------------------
    def update(self, fd: int, key: ctypes._CData, value: ctypes._CData, flags: int = 0) -> None:
        rc = self.c.bpf_map_update_elem(fd, ctypes.byref(key), ctypes.byref(value), flags)
        if rc:
            raise BpfError("bpf_map_update_elem", rc)

    def lookup(self, fd: int, key: ctypes._CData, value: ctypes._CData) -> bool:
        rc = self.c.bpf_map_lookup_elem(fd, ctypes.byref(key), ctypes.byref(value))
        if rc == -errno.ENOENT:
            return False
        if rc:
            raise BpfError("bpf_map_lookup_elem", rc)
        return True

    def delete(self, fd: int, key: ctypes._CData) -> bool:
        rc = self.c.bpf_map_delete_elem(fd, ctypes.byref(key))
        return rc == 0

    def pop(self, fd: int, value: ctypes._CData) -> bool:
        """The head of a queue map into `value`; False when it is empty."""
        rc = self.c.bpf_map_lookup_and_delete_elem(fd, None, ctypes.byref(value))
        if rc == -errno.ENOENT:
            return False
        if rc:
            raise BpfError("bpf_map_lookup_and_delete_elem", rc)
        return True

    def push(self, fd: int, value: ctypes._CData) -> None:
        """`value` onto a queue map's tail (the oldest goes when it is full)."""
        rc = self.c.bpf_map_update_elem(fd, None, ctypes.byref(value), BPF_EXIST)
        if rc:
            raise BpfError("bpf_map_update_elem (push)", rc)

    def keys(self, fd: int, key_type: type[_K]) -> list[_K]:
        out: list[_K] = []
        cur = None
        while True:
            nxt = key_type()
            rc = self.c.bpf_map_get_next_key(
                fd, ctypes.byref(cur) if cur is not None else None, ctypes.byref(nxt)
            )
            if rc:
                break
            out.append(nxt)
            cur = nxt
        return out

    def dump(
        self,
        fd: int,
        key_type: type[_K],
        value_type: type[_V],
        chunk: int = 256,
    ) -> list[tuple[_K, _V]]:
        """Every (key, value) of a hash map, `chunk` per bpf_map_lookup_batch() call."""
        out: list[tuple[_K, _V]] = []
        keys = (key_type * chunk)()
        vals = (value_type * chunk)()
        tok_in, tok_out = ctypes.create_string_buffer(16), ctypes.create_string_buffer(16)
        first = True
        while True:
            n = _U32(chunk)
            rc = self.c.bpf_map_lookup_batch(
                fd, None if first else tok_in, tok_out, keys, vals, ctypes.byref(n), None
            )
            if rc and rc != -errno.ENOENT:
                if first and rc in (-errno.EINVAL, -ENOTSUPP, -errno.EOPNOTSUPP):
                    return self._dump_slow(fd, key_type, value_type)
                raise BpfError("bpf_map_lookup_batch", rc)
            for i in range(n.value):
                out.append(
                    (
                        key_type.from_buffer_copy(keys, i * ctypes.sizeof(key_type)),
                        value_type.from_buffer_copy(vals, i * ctypes.sizeof(value_type)),
                    )
                )
            if rc == -errno.ENOENT:
                return out
            tok_in, tok_out = tok_out, tok_in
            first = False

    def _dump_slow(self, fd: int, key_type: type[_K], value_type: type[_V]) -> list[tuple[_K, _V]]:
        out: list[tuple[_K, _V]] = []
        for k in self.keys(fd, key_type):
            v = value_type()
            if self.lookup(fd, k, v):
                out.append((k, v))
        return out

    def maps_named(self, name: str) -> list[tuple[int, MapInfo]]:
        """Open every loaded map called `name`: [(fd, info)]; the caller closes the fds."""
        found: list[tuple[int, MapInfo]] = []
        cur = _U32(0)
        while self.c.bpf_map_get_next_id(cur.value, ctypes.byref(cur)) == 0:
            fd = self.c.bpf_map_get_fd_by_id(cur.value)
            if fd < 0:
                continue
            info = MapInfo()
            ln = _U32(ctypes.sizeof(info))
            if self.c.bpf_obj_get_info_by_fd(fd, ctypes.byref(info), ctypes.byref(ln)) == 0 and (
                info.name.decode(errors="replace") == name
            ):
                found.append((fd, info))
            else:
                os.close(fd)
        return found

    def num_cpus(self) -> int:
        n = self.c.libbpf_num_possible_cpus()
        if n <= 0:
            raise BpfError("libbpf_num_possible_cpus", n)
        return n

    # -- attachment ---------------------------------------------------------------
    def tcx_link(self, prog_fd: int, ifindex: int, egress: bool) -> int:
        """A TCX link: detached by the kernel when its fd closes (process exit, crash)."""
        kind = BPF_TCX_EGRESS if egress else BPF_TCX_INGRESS
        fd = self.c.bpf_link_create(prog_fd, ifindex, kind, None)
        if fd < 0:
            raise BpfError("bpf_link_create(tcx)", fd)
        return fd

    def tc_hook(self, ifindex: int, egress: bool) -> TcHook:
        h = TcHook()
        h.sz = ctypes.sizeof(TcHook)
        h.ifindex = ifindex
        h.attach_point = BPF_TC_EGRESS if egress else BPF_TC_INGRESS
        return h

    def test_run(self, prog_fd: int, data: bytes, repeat: int = 1) -> tuple[int, bytes, int]:
        """BPF_PROG_TEST_RUN: (retval, packet after the program, ns per run)."""
        inbuf = ctypes.create_string_buffer(data, len(data))
        outbuf = ctypes.create_string_buffer(len(data) + 256)
        o = TestRunOpts()
        o.sz = ctypes.sizeof(TestRunOpts)
        o.data_in = ctypes.cast(inbuf, ctypes.c_void_p)
        o.data_size_in = len(data)
        o.data_out = ctypes.cast(outbuf, ctypes.c_void_p)
        o.data_size_out = len(outbuf)
        o.repeat = repeat
        rc = self.c.bpf_prog_test_run_opts(prog_fd, ctypes.byref(o))
        if rc:
            raise BpfError("bpf_prog_test_run_opts", rc)
        return ctypes.c_int32(o.retval).value, outbuf.raw[: o.data_size_out], o.duration

    def ring(self, map_fd: int) -> Ring:
        """A reader of the BPF ring buffer `map_fd` (BPF_MAP_TYPE_RINGBUF)."""
        return Ring(self, map_fd)


class Ring:
    """libbpf's ring_buffer over one map; `take()` returns every record
    written since the last call (each as bytes), without blocking."""

    def __init__(self, lb: Lib, map_fd: int) -> None:
        self.lib = lb
        self.got: list[bytes] = []

        def on_sample(_ctx: int | None, data: int | None, size: int) -> int:
            self.got.append(ctypes.string_at(data or 0, size))
            return 0

        self._cb = RING_SAMPLE(on_sample)  # kept: libbpf calls it until free
        self.rb = lb.c.ring_buffer__new(map_fd, self._cb, None, None)
        if not self.rb:
            raise BpfError("ring_buffer__new", ctypes.get_errno() or errno.EINVAL)

    def take(self) -> list[bytes]:
        n = self.lib.c.ring_buffer__consume(self.rb)
        if n < 0:
            raise BpfError("ring_buffer__consume", n)
        out, self.got = self.got, []
        return out

    def close(self) -> None:
        if self.rb:
            self.lib.c.ring_buffer__free(self.rb)
            self.rb = None


_LIB: Lib | None = None


def lib() -> Lib:
    """The process-wide libbpf handle (loaded on first use)."""
    global _LIB
    if _LIB is None:
        _LIB = Lib()
    return _LIB
