"""agent/bpf/rxwin.h as Python: its integer constants and its structs as ctypes
layouts, read from the header when this module is first imported (`RXWIN`).

The header is the one definition the BPF programs (rxwin.bpf.c), the Python
agent and the simulator's receiver (sim/cpp/rx_agent.h includes its
rx_policy.h) share; nothing of it is re-typed in Python. The reader takes the
plain C the header is written in and refuses anything else, naming the line:

- ``#define NAME EXPR`` with EXPR an integer expression: decimal, octal or hex
  literals (U/L suffixes allowed), names defined above, ``( ) + - * << >> & | ^``;
- ``#include "file.h"``: a header next to this one, read in place
  (``#include <...>`` declares types only and is skipped);
- ``struct NAME { FIELD; ... };`` whose fields are ``__u8``..``__u64``,
  ``__s8``..``__s64``, ``struct OTHER`` (defined above) and one-dimensional
  arrays of these;
- comments and the include guard (``#ifndef``/``#endif``).

ctypes lays each structure out by the C rules of this platform (natural
alignment), which for these types are the BPF target's too.
tests/agent/test_rxwin_h.py checks every constant and every field's offset
and size against the host compiler, and the field lists against the BTF the
BPF compiler emits.
"""

from __future__ import annotations

import ast
import ctypes
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["HEADER", "RXWIN", "CField", "CStruct", "Header", "HeaderError", "read_header"]

HEADER = Path(__file__).resolve().parents[2] / "agent" / "bpf" / "rxwin.h"  # of this checkout

SCALARS: dict[str, Any] = {
    "__u8": ctypes.c_uint8,
    "__u16": ctypes.c_uint16,
    "__u32": ctypes.c_uint32,
    "__u64": ctypes.c_uint64,
    "__s8": ctypes.c_int8,
    "__s16": ctypes.c_int16,
    "__s32": ctypes.c_int32,
    "__s64": ctypes.c_int64,
}


class HeaderError(ValueError):
    """The header holds C this reader does not take (the message names the line)."""


@dataclass(frozen=True)
class CField:
    name: str
    ctype: str  # a SCALARS key, or "struct NAME"
    length: int | None = None  # array elements; None: not an array


@dataclass(frozen=True)
class CStruct:
    name: str
    fields: tuple[CField, ...]


class Header:
    """A read header: `const` (every valued #define, in order), `structs`; a
    constant is also an attribute (``RXWIN.RX_POLICY_USER``)."""

    def __init__(self, path: Path, const: dict[str, int], structs: dict[str, CStruct]) -> None:
        self.path = path
        self.const = const
        self.structs = structs
        self._classes: dict[str, type[ctypes.Structure]] = {}

    def __getattr__(self, name: str) -> int:
        const = self.__dict__.get("const", {})
        if name in const:
            return const[name]
        raise AttributeError(f"{self.__dict__.get('path', 'header')}: no #define {name}")

    def prefixed(self, prefix: str) -> dict[str, int]:
        """The constants whose names start with `prefix`, in header order."""
        return {k: v for k, v in self.const.items() if k.startswith(prefix)}

    def fields(self, struct: str, **nested: type[ctypes.Structure]) -> list[tuple[str, Any]]:
        """`_fields_` of a ctypes.Structure laid out as ``struct <struct>``. A
        field of type ``struct X`` gets the class passed as ``X=``, else
        `structure("X")`."""
        s = self.struct(struct)
        used = {f.ctype.split()[1] for f in s.fields if f.ctype.startswith("struct ")}
        if set(nested) - used:
            extra = ", ".join(sorted(set(nested) - used))
            raise HeaderError(f"struct {struct} has no field of type struct {extra}")
        out: list[tuple[str, Any]] = []
        for f in s.fields:
            if f.ctype.startswith("struct "):
                inner = f.ctype.split()[1]
                t: Any = nested.get(inner) or self.structure(inner)
            else:
                t = SCALARS[f.ctype]
            out.append((f.name, t if f.length is None else t * f.length))
        return out

    def struct(self, name: str) -> CStruct:
        try:
            return self.structs[name]
        except KeyError:
            raise HeaderError(f"{self.path}: no struct {name}") from None

    def structure(self, name: str) -> type[ctypes.Structure]:
        """A plain ctypes class for ``struct <name>`` (one per name)."""
        if name not in self._classes:
            self._classes[name] = type(
                name, (ctypes.Structure,), {"__slots__": (), "_fields_": self.fields(name)}
            )
        return self._classes[name]


def read_header(path: Path = HEADER) -> Header:
    """Read `path` (and the headers it includes) into a Header."""
    const: dict[str, int] = {}
    structs: dict[str, CStruct] = {}
    _read(path, const, structs, set())
    return Header(path, const, structs)


_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_DIRECTIVE = re.compile(r"#\s*(\w+)\s*(.*)")
_DEFINE = re.compile(r"(\w+)(\(?)\s*(.*)")
_STRUCT = re.compile(r"struct\s+(\w+)\s*\{([^{}]*)\}\s*;")
_FIELD = re.compile(r"(struct\s+\w+|\w+)\s+(\w+)\s*(?:\[\s*(\w+)\s*\])?")
_LITERAL = re.compile(r"\b(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*\b")


def _read(path: Path, const: dict[str, int], structs: dict[str, CStruct], seen: set[Path]) -> None:
    path = path.resolve()
    if path in seen:  # what an include guard does
        return
    seen.add(path)
    try:
        raw = path.read_text()
    except OSError as e:
        raise HeaderError(f"cannot read {path}: {e.strerror}") from None
    # comments become blanks with their newlines kept, so line numbers hold
    text = _COMMENT.sub(lambda m: " " + "\n" * m.group().count("\n"), raw)
    body: list[str] = []  # the lines that are not directives (blank where they were)
    for no, line in enumerate(text.split("\n"), 1):
        where = f"{path.name}:{no}"
        s = line.strip()
        body.append("" if s.startswith("#") else line)
        if not s.startswith("#"):
            continue
        if s.endswith("\\"):
            raise HeaderError(f"{where}: a directive continued on the next line is not read")
        m = _DIRECTIVE.fullmatch(s)
        kind, rest = (m.group(1), m.group(2).strip()) if m else ("", "")
        if kind in ("ifndef", "endif", "pragma"):
            continue
        if kind == "include":
            if rest.startswith('"') and rest.endswith('"'):
                _read(path.parent / rest[1:-1], const, structs, seen)
            elif not rest.startswith("<"):
                raise HeaderError(f"{where}: cannot read #include {rest}")
            continue
        if kind != "define":
            raise HeaderError(f"{where}: #{kind or s} is not read (only #define, #include)")
        d = _DEFINE.fullmatch(rest)
        if d is None or d.group(2):
            raise HeaderError(f"{where}: only object-like #define NAME VALUE is read")
        if d.group(3):
            v = _eval(d.group(3), const, where)
            if const.get(d.group(1), v) != v:
                raise HeaderError(f"{where}: {d.group(1)} defined again with another value")
            const[d.group(1)] = v
    _structs("\n".join(body), path.name, const, structs)


def _structs(body: str, fname: str, const: dict[str, int], structs: dict[str, CStruct]) -> None:
    pos = 0
    while True:
        while pos < len(body) and body[pos].isspace():
            pos += 1
        if pos == len(body):
            return
        where = f"{fname}:{body.count(chr(10), 0, pos) + 1}"
        m = _STRUCT.match(body, pos)
        if m is None:
            found = body[pos : pos + 40].split("\n")[0]
            raise HeaderError(f"{where}: expected `struct NAME {{ FIELDS }};`, found {found!r}")
        name, decls = m.group(1), m.group(2)
        if name in structs:
            raise HeaderError(f"{where}: struct {name} defined twice")
        fields: list[CField] = []
        for decl in decls.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            fields.append(_field(decl, name, where, const, structs))
        structs[name] = CStruct(name, tuple(fields))
        pos = m.end()


def _field(
    decl: str, struct: str, where: str, const: dict[str, int], structs: dict[str, CStruct]
) -> CField:
    f = _FIELD.fullmatch(decl)
    if f is None:
        raise HeaderError(f"{where}: struct {struct}: cannot read field `{decl}`")
    ctype, name, length = f.group(1), f.group(2), f.group(3)
    if ctype.startswith("struct "):
        inner = ctype.split()[1]
        if inner not in structs:
            raise HeaderError(f"{where}: struct {struct}.{name}: struct {inner} not defined above")
        ctype = f"struct {inner}"
    elif ctype not in SCALARS:
        raise HeaderError(
            f"{where}: struct {struct}.{name}: type {ctype} is not read "
            f"(one of {', '.join(SCALARS)}, struct NAME)"
        )
    n = None if length is None else _eval(length, const, where)
    if n is not None and n <= 0:
        raise HeaderError(f"{where}: struct {struct}.{name}: array length {n}")
    return CField(name, ctype, n)


_BINOPS: dict[type, Any] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b,
}


def _c_int(lit: str) -> int:
    if lit[:2] in ("0x", "0X"):
        return int(lit, 16)
    return int(lit, 8) if len(lit) > 1 and lit[0] == "0" else int(lit)


def _eval(expr: str, const: dict[str, int], where: str) -> int:
    """An integer constant expression of the header, by C's rules for the
    operators it takes (all of which agree with Python's on these values)."""
    try:
        tree = ast.parse(_LITERAL.sub(lambda m: str(_c_int(m.group(1))), expr), mode="eval")
    except (SyntaxError, ValueError):
        tree = None

    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return n.value
        if isinstance(n, ast.Name) and n.id in const:
            return const[n.id]
        if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
            return _BINOPS[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        raise HeaderError(
            f"{where}: `{expr}` is not an integer expression of literals, names "
            "defined above and ( ) + - * << >> & | ^"
        )

    if tree is None:
        raise HeaderError(f"{where}: cannot read `{expr}` as an integer expression")
    return ev(tree.body)


RXWIN = read_header()
