"""agent/bpf/rxwin.h read into Python (p4incast/policies/rxwin_h.py) against what the
compilers make of the same header: every constant's value and every field's
name, order, offset, size and signedness, for the ctypes classes the agent
uses (agent/datapath.py). The host compiler gives values and offsets; the BPF
compiler's BTF gives each struct's complete field list."""

from __future__ import annotations

import ctypes
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, cast

import pytest

from p4incast.agent import datapath
from p4incast.policies.rxwin_h import HEADER, RXWIN, Header, HeaderError, read_header

# The kernel's __u8..__s64 (asm-generic/int-ll64.h): the same on the BPF target
# and on an LP64 host, so the one header compiles for both without kernel headers.
PRELUDE = """
typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
"""

Layout = dict[str, tuple[int, int, bool | None, int | None]]  # field: offset, size, signed, n


def _classes(h: Header = RXWIN) -> dict[str, type[ctypes.Structure]]:
    """The ctypes class of every struct of the header: the agent's own where it
    has one, else the reader's plain one."""
    return {n: datapath.STRUCTS.get(n) or h.structure(n) for n in h.structs}


def _signed(t: Any) -> bool | None:
    """Whether a ctypes scalar type is signed (None: a structure)."""
    if issubclass(t, ctypes.Structure):
        return None
    return t(-1).value < 0


def py_layout(cls: type[ctypes.Structure]) -> Layout:
    out: Layout = {}
    for name, t, *_ in cls._fields_:
        d = getattr(cls, name)
        n = getattr(t, "_length_", None)
        elem = cast("type[ctypes.Array[Any]]", t)._type_ if n is not None else t
        out[name] = (d.offset, d.size, _signed(elem), n)
    return out


def _cc(compiler: str, src: str, out: Path, include: Path, *args: str) -> None:
    c = out.with_suffix(".c")
    c.write_text(src)
    r = subprocess.run(
        [compiler, *args, "-I", str(include), str(c), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, f"{compiler} failed on the header:\n{r.stderr}"


def host_compiler_view(
    tmp: Path, classes: dict[str, type[ctypes.Structure]], const: dict[str, int], header: Path
) -> tuple[dict[str, Layout], dict[str, int], dict[str, int]]:
    """What the host C compiler makes of `header`, asked about each field the
    Python classes name and each constant: ({struct: layout}, {struct: size},
    {constant: value})."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (cc): apt-get install gcc")
    lines = [PRELUDE, "#include <stddef.h>", "#include <stdio.h>", f'#include "{header.name}"']
    lines.append("#define MEMBER(s, f) (((struct s *)0)->f)")
    lines.append("int main(void) {")
    for s, cls in classes.items():
        lines.append(f'printf("size {s} %zu\\n", sizeof(struct {s}));')
        for f, t, *_ in cls._fields_:
            m = f"MEMBER({s}, {f})"
            n = getattr(t, "_length_", None)
            elem = f"{m}[0]" if n is not None else m
            sign = "-1" if issubclass(t, ctypes.Structure) else f"(int)((__typeof__({elem}))-1 < 0)"
            count = f"(long)(sizeof {m} / sizeof {elem})" if n is not None else "-1L"
            lines.append(
                f'printf("field {s} {f} %zu %zu %d %ld\\n", offsetof(struct {s}, {f}), '
                f"sizeof {m}, {sign}, {count});"
            )
    for k in const:
        lines.append(f'printf("const {k} %lld\\n", (long long)({k}));')
    lines += ["return 0;", "}"]
    exe = tmp / "layout"
    _cc(cc, "\n".join(lines), exe, header.parent, "-std=gnu11")
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    layouts: dict[str, Layout] = {s: {} for s in classes}
    sizes: dict[str, int] = {}
    values: dict[str, int] = {}
    for line in out.splitlines():
        kind, *rest = line.split()
        if kind == "size":
            sizes[rest[0]] = int(rest[1])
        elif kind == "field":
            s, f, off, size, sign, n = rest
            signed = None if sign == "-1" else sign == "1"
            layouts[s][f] = (int(off), int(size), signed, None if n == "-1" else int(n))
        else:
            values[rest[0]] = int(rest[1])
    return layouts, sizes, values


def test_constants_and_offsets_are_the_host_compilers(tmp_path: Path) -> None:
    """Every #define has the value C gives it; every field of every class sits
    where C puts it, with C's size, signedness and array length; every struct
    has C's size (a field the reader missed at the end would show there)."""
    classes = _classes()
    layouts, sizes, values = host_compiler_view(tmp_path, classes, RXWIN.const, HEADER)
    assert values == RXWIN.const
    for s, cls in classes.items():
        assert py_layout(cls) == layouts[s], f"struct {s}"
        assert ctypes.sizeof(cls) == sizes[s], f"sizeof(struct {s})"


def _btf_kind(types: dict[int, dict], tid: int) -> tuple[Any, ...]:
    """A BTF type as (kind, size, signed) for an integer, ("ARRAY", elem, n),
    ("STRUCT", name), typedefs and qualifiers followed."""
    t = types[tid]
    while t["kind"] in ("TYPEDEF", "CONST", "VOLATILE"):
        t = types[t["type_id"]]
    if t["kind"] == "INT":
        return ("INT", t["size"], t["encoding"] == "SIGNED")
    if t["kind"] == "ARRAY":
        return ("ARRAY", _btf_kind(types, t["type_id"]), t["nr_elems"])
    if t["kind"] == "STRUCT":
        return ("STRUCT", t["name"])
    return (t["kind"],)


def _py_kind(t: Any, names: dict[type, str]) -> tuple[Any, ...]:
    if hasattr(t, "_length_"):
        return ("ARRAY", _py_kind(t._type_, names), t._length_)
    if issubclass(t, ctypes.Structure):
        return ("STRUCT", names[t])
    return ("INT", ctypes.sizeof(t), _signed(t))


def test_fields_are_the_bpf_compilers(tmp_path: Path) -> None:
    """Each struct's complete field list as clang -target bpf lays it out (its
    BTF): the same names in the same order, offsets, types — a field the
    Python side lacks, has in another place or with another type fails here."""
    clang, bpftool = shutil.which("clang"), shutil.which("bpftool") or "/usr/sbin/bpftool"
    if clang is None or not Path(bpftool).exists():
        pytest.skip("needs clang and bpftool (apt-get install clang bpftool)")
    classes = _classes()
    src = PRELUDE + f'#include "{HEADER.name}"\n'
    src += "".join(f"struct {s} v_{s};\n" for s in classes)  # globals: BTF for every struct
    obj = tmp_path / "layout.o"
    _cc(clang, src, obj, HEADER.parent, "-target", "bpf", "-g", "-O2", "-c")
    r = subprocess.run(
        [bpftool, "-j", "btf", "dump", "file", str(obj)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    types = {t["id"]: t for t in json.loads(r.stdout)["types"]}
    btf = {t["name"]: t for t in types.values() if t["kind"] == "STRUCT"}
    names = {cls: s for s, cls in classes.items()}
    for s, cls in classes.items():
        want = [
            (m["name"], m["bits_offset"] // 8, _btf_kind(types, m["type_id"]))
            for m in btf[s]["members"]
        ]
        have = [(f, getattr(cls, f).offset, _py_kind(t, names)) for f, t, *_ in cls._fields_]
        assert have == want, f"struct {s}"
        assert ctypes.sizeof(cls) == btf[s]["size"], f"sizeof(struct {s})"


def test_a_swap_of_equal_size_fields_is_caught(tmp_path: Path) -> None:
    """The check above compares field by field, not sizes: two u32 fields
    swapped in the header, with the Python side as it is, fail it."""
    h = HEADER.read_text()
    a, b = "\t__u32 rtt_limit_us;", "\t__u32 ifindex;"
    assert a in h and b in h
    copy = tmp_path / "hdr" / HEADER.name
    copy.parent.mkdir()
    for inc in HEADER.parent.glob("*.h"):
        (copy.parent / inc.name).write_text(inc.read_text())
    copy.write_text(h.replace(a, "\x00").replace(b, a).replace("\x00", b))
    layouts, _, _ = host_compiler_view(tmp_path, {"rx_config": datapath.RxConfig}, {}, copy)
    assert py_layout(datapath.RxConfig) != layouts["rx_config"]
    swapped = read_header(copy)  # read again, the Python side follows
    assert py_layout(swapped.structure("rx_config")) == layouts["rx_config"]


def test_stat_names_follow_the_st_constants() -> None:
    st = {k: v for k, v in RXWIN.prefixed("ST_").items() if k != "ST_MAX"}
    assert len(datapath.ST_NAMES) == RXWIN.ST_MAX == len(st)
    assert datapath.ST_NAMES[RXWIN.ST_REWRITES] == "rewrites"
    assert datapath.ST_NAMES[RXWIN.ST_NO_HANDSHAKE] == "no_handshake"
    assert datapath.ST_NAMES[RXWIN.ST_ACKQ_ZERO] == "ackq_zero"


def test_a_renamed_field_cannot_be_written_silently() -> None:
    """The classes have no instance dict: a field name the header no longer
    has raises instead of landing in a Python attribute the kernel never sees."""
    with pytest.raises(AttributeError):
        datapath.RxConfig().init_seg = 3  # no such field: init_segs


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("struct s { __u32 a : 3; };", "cannot read field"),
        ("struct s { union { __u32 a; __u64 b; } u; };", "expected `struct NAME"),
        ("struct s { int a; };", "type int is not read"),
        ("struct s { __u32 a; } __attribute__((packed));", "expected `struct NAME"),
        ("struct s { struct t a; };", "struct t not defined above"),
        ("#define F(x) ((x) + 1)", "only object-like"),
        ('#define S "text"', "integer expression"),
        ("#define D (7 / 2)", "not an integer expression"),
        ("#ifdef X\n#endif", "#ifdef is not read"),
        ("#define A 1\n#define A 2", "defined again"),
        ("typedef __u32 my_t;", "expected `struct NAME"),
    ],
)
def test_the_reader_refuses_what_it_does_not_take(tmp_path: Path, text: str, what: str) -> None:
    """C the reader cannot lay out like the compiler is refused, with the line,
    never read approximately."""
    p = tmp_path / "h.h"
    p.write_text("/* a header */\n" + text + "\n")
    with pytest.raises(HeaderError, match=what) as e:
        read_header(p)
    assert "h.h:" in str(e.value)


def test_the_reader_takes_the_headers_c(tmp_path: Path) -> None:
    (tmp_path / "inc.h").write_text("#define BASE 0x10U /* sixteen */\n")
    p = tmp_path / "h.h"
    p.write_text(
        '#ifndef H\n#define H\n#include "inc.h"\n#include <linux/types.h>\n'
        "#define N (BASE << 1 | 1) // 33\n#define M 010\n"
        "struct k { __u16 a; __u8 b[N]; };\n"
        "struct s {\n\t__u8 c; /* one\n\t * two */\n\tstruct k key;\n\t__s64 d;\n};\n#endif\n"
    )
    h = read_header(p)
    assert (h.BASE, h.N, h.M) == (16, 33, 8)
    s = h.structure("s")
    assert [f for f, *_ in s._fields_] == ["c", "key", "d"]
    assert (s.key.offset, s.d.offset, ctypes.sizeof(s)) == (2, 40, 48)
