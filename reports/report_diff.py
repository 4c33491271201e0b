"""The claim rows of a reproduce report, and what changed between two reports (pure).

REPORT.md (reports/reproduce.py) has one section per preset, headed
`## <preset>` (the preset's file stem) or `## <preset> (at scale)`, and in
it one claim table (verdicts.table, every scenario):

    | claim | paper | ours (95 % CI) | verdict |
    |---|---|---|---|
    | peak-dctcp (sru64k) | peak goodput, DCTCP ~945 Mbit/s | N=5: 884 [870, 899] | **holds** |

(the claim id, then its variant in parentheses when the preset has variants).
Reports written before the at-scale scenario shared it have, under
`## <preset> (at scale)` only, the at-scale runner's own table, read too:

    | claim | verdict | measured |
    |---|---|---|
    | rcc-drops-from-60: RCC starts to drop packets only from 60 % load | **diverges** | 10%: 0, … |

`parse_report` reads every row of such tables: (preset, claim id, variant,
ours, verdict). Nothing else is read: other tables (before/after tables of
the hand-kept reports in docs/reproduce/, per-N tables), the fenced summary
tables of the `###` variant sections, and tables under a header that is not
one preset name (one word) are ignored. The verdict is the verdict column's
text without its bold marks, as the report printed it ("holds", "diverges —
explained by newdctcp-connections (per-round-init_cwnd10)").

Comparing an earlier report with this one, per (preset, claim id, variant):

- **verdict changed**: the verdicts.py verdicts differ (the verdict column's
  text before " — ": holds, diverges, inconclusive, no data), or both rows
  carry a class of divergence (the first word after " — ": explained,
  unexplained) and the classes differ. A row without a class (an ablation's,
  or one written before reports classed divergences) is compared on its
  verdict only; which ablation explains a divergence is not compared.
- **figure moved**: from the `ours` texts. Each `N=<n>: mean [lo, hi]` or
  `N=<n>: mean` part (`N=<n> (k=<k>): …` too; what follows the number, such
  as "vs g 111", is not read) gives N → (mean, 95 % interval or none).
  (a) When both texts have N parts: moved when they do not name the same N
  (the claim now reports other N: a limit crossed at other N, a peak at
  another N), or when for some N in both the mean moved: with both
  intervals, the new mean lies outside the old interval AND the old mean
  outside the new one; when either has no interval, the means differ by
  more than 5 % of the old one (|new − old| > 0.05·|old|: from 0, any
  change). (b) When only one text has N parts (e.g. "every N in range <=
  0.06" and "N=40: 0.1 [0.05, 0.2]"): moved. (c) When neither has (orderings
  "mean over N: a 682, b 766", peaks "peak 936 Mbit/s; never below 50% of
  it", at-scale "10%: 0, 20%: 3"): every number of the text, in order (a
  number glued to a name, as the 20 of "newdctcp-k20", is part of the name):
  moved when the counts differ or some pair differs by more than 5 % of the
  earlier one — so a change of separators alone moves nothing.
- **new**: a claim of this report with no earlier row; **vanished**: an
  earlier row with none in this report, counted only for the presets this
  report covers (`scope`; a report of `--only` some presets says nothing of
  the others).

Earlier reports are read oldest first; a later report's row replaces an
earlier one for the same (preset, claim id, variant) (`merge`).

Why a claim changed comes from a YAML mapping (`load_why`, docs/reproduce/why.yaml):
`"<preset>/<claim-id>"` or, for one variant, `"<preset>/<claim-id>/<variant>"`
(it wins over the former) to one line of text. A changed or vanished claim
without an entry shows "why: not yet written"; nothing is made up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import yaml

from .verdicts import Verdict, row_label

CLAIM_HEADER = ("claim", "paper", "ours (95 % CI)", "verdict")
ATSCALE_HEADER = ("claim", "verdict", "measured")
ATSCALE_SUFFIX = " (at scale)"
RELATIVE = 0.05  # means without intervals "moved" beyond 5 % of the earlier one
NOT_WRITTEN = "why: not yet written"
SECTION = "## Changed since the last report"

Key = tuple[str, str, str]  # (preset, claim id, variant)

_NUM = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_N_PART = re.compile(
    rf"\bN=(\d+)(?:\s*\([^)]*\))?:\s*({_NUM})(?:\s*\[\s*({_NUM})\s*,\s*({_NUM})\s*\])?"
)
_NUMBER = re.compile(rf"(?<![\w.\-]){_NUM}(?![\w.])")
_PRESET = re.compile(r"[\w.+-]+")
_CLAIM_CELL = re.compile(r"(\S+)(?: \(([^()]*)\))?")
_HEADER = re.compile(r"(#{1,6})(?:\s+(.*?))?\s*#*\s*$")


class WhyError(ValueError):
    """A why file that is not a mapping of claim keys to one line of text."""


@dataclass(frozen=True)
class ClaimRow:
    """One claim's row of a report: ours and the verdict column as printed."""

    preset: str
    claim: str
    variant: str
    ours: str
    verdict: str
    source: str = ""  # the report it was read from ("" for the report being written)

    @property
    def key(self) -> Key:
        return self.preset, self.claim, self.variant

    @property
    def name(self) -> str:
        """`preset: claim (variant)`, as the lists of REPORT.md name a claim."""
        where = f" ({self.variant})" if self.variant else ""
        return f"{self.preset}: {self.claim}{where}"


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    return [c.strip() for c in body.split(" | ")]


def _unbold(text: str) -> str:
    text = text.strip()
    if text.startswith("**") and text.endswith("**") and len(text) >= 4:
        text = text[2:-2]
    return text.strip()


def _section_preset(header: str) -> tuple[str | None, bool]:
    """(preset, at scale) of a `## ` header's text; preset None when it names none."""
    text = header.strip()
    at_scale = text.endswith(ATSCALE_SUFFIX)
    if at_scale:
        text = text[: -len(ATSCALE_SUFFIX)].strip()
    return (text if _PRESET.fullmatch(text) else None), at_scale


def _incast_row(cells: list[str], preset: str, source: str) -> ClaimRow | None:
    if len(cells) < 4:
        return None
    m = _CLAIM_CELL.fullmatch(cells[0])
    if not m:
        return None
    return ClaimRow(preset, m.group(1), m.group(2) or "", cells[-2], _unbold(cells[-1]), source)


def _atscale_row(cells: list[str], preset: str, source: str) -> ClaimRow | None:
    if len(cells) < 3 or ": " not in cells[0]:
        return None
    claim = cells[0].split(": ", 1)[0].strip()
    if not claim or " " in claim:
        return None
    return ClaimRow(preset, claim, "", " | ".join(cells[2:]), _unbold(cells[1]), source)


def parse_report(text: str, source: str = "") -> list[ClaimRow]:
    """Every claim row of a report's claim tables, in order (see the module docstring)."""
    rows: list[ClaimRow] = []
    preset: str | None = None
    at_scale = False
    fenced = False
    kind: str | None = None  # the claim table being read: "incast", "atscale", or None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced, kind = not fenced, None
            continue
        if fenced:
            continue
        header = _HEADER.match(stripped)
        if header:
            kind = None
            level = len(header.group(1))
            if level <= 2:
                title = header.group(2) or ""
                preset, at_scale = _section_preset(title) if level == 2 else (None, False)
            continue
        if not stripped.startswith("|"):
            kind = None
            continue
        if kind is None:
            head = tuple(c.lower() for c in _cells(stripped))
            rule = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if preset is None or not re.fullmatch(r"\|?(\s*:?-+:?\s*\|)+\s*:?-*:?\s*", rule):
                kind = "other"
            elif head == tuple(h.lower() for h in CLAIM_HEADER):
                kind = "incast"
            elif head == ATSCALE_HEADER and at_scale:
                kind = "atscale"
            else:
                kind = "other"
            continue
        if kind == "other" or set(stripped) <= set("|-: "):
            continue
        cells = _cells(stripped)
        assert preset is not None
        row = (
            _incast_row(cells, preset, source)
            if kind == "incast"
            else _atscale_row(cells, preset, source)
        )
        if row is not None:
            rows.append(row)
    return rows


def merge(reports: Iterable[Iterable[ClaimRow]]) -> dict[Key, ClaimRow]:
    """The rows of several reports, oldest first: a later row replaces an earlier
    one of the same (preset, claim id, variant)."""
    out: dict[Key, ClaimRow] = {}
    for rows in reports:
        for row in rows:
            out.pop(row.key, None)  # keep the order of the latest appearance
            out[row.key] = row
    return out


# -- what moved -------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """One figure: its mean and its 95 % interval when the text gives one."""

    mean: float
    lo: float | None = None
    hi: float | None = None

    @property
    def has_interval(self) -> bool:
        return self.lo is not None and self.hi is not None


@dataclass(frozen=True)
class Figure:
    """An `ours` text read as numbers: per N when it has N parts, else every number."""

    parts: dict[int, Value] = field(default_factory=dict)
    numbers: tuple[float, ...] = ()


def parse_figure(ours: str) -> Figure:
    parts: dict[int, Value] = {}
    for m in _N_PART.finditer(ours):
        lo, hi = m.group(3), m.group(4)
        parts[int(m.group(1))] = Value(
            float(m.group(2)), None if lo is None else float(lo), None if hi is None else float(hi)
        )
    if parts:
        return Figure(parts=parts)
    return Figure(numbers=tuple(float(x) for x in _NUMBER.findall(ours)))


def relative_moved(before: float, now: float, limit: float = RELATIVE) -> bool:
    """|now − before| > limit·|before| (from 0: any change)."""
    return abs(now - before) > limit * abs(before)


def value_moved(before: Value, now: Value) -> bool:
    """Both intervals: each mean outside the other's interval. Else: > 5 % apart."""
    if before.has_interval and now.has_interval:
        assert before.lo is not None and before.hi is not None
        assert now.lo is not None and now.hi is not None
        return not (before.lo <= now.mean <= before.hi) and not (now.lo <= before.mean <= now.hi)
    return relative_moved(before.mean, now.mean)


def figure_moved(before: str, now: str) -> bool:
    """Whether the `ours` figure moved between two texts (module docstring, rules a–c)."""
    b, n = parse_figure(before), parse_figure(now)
    if b.parts and n.parts:
        if set(b.parts) != set(n.parts):
            return True
        return any(value_moved(b.parts[k], n.parts[k]) for k in b.parts)
    if b.parts or n.parts:
        return True
    if len(b.numbers) != len(n.numbers):
        return True
    return any(relative_moved(x, y) for x, y in zip(b.numbers, n.numbers, strict=True))


def _verdict_parts(text: str) -> tuple[str, str | None]:
    """("diverges", "explained") from "diverges — explained by …"; class None without one."""
    base, sep, rest = text.partition(" — ")
    words = rest.split()
    return base.strip(), (words[0].strip("(),;") if sep and words else None)


def verdict_changed(before: str, now: str) -> bool:
    """The verdicts.py verdicts differ, or both rows class the divergence and differently."""
    (bv, bc), (nv, nc) = _verdict_parts(before), _verdict_parts(now)
    return bv != nv or (bc is not None and nc is not None and bc != nc)


@dataclass(frozen=True)
class Change:
    before: ClaimRow
    now: ClaimRow
    verdict: bool  # the verdict changed
    figure: bool  # the figure moved


@dataclass(frozen=True)
class Diff:
    changed: list[Change]
    new: list[ClaimRow]
    vanished: list[ClaimRow]
    out_of_scope: int  # earlier rows of presets this report does not cover


def diff(
    before: Mapping[Key, ClaimRow], now: Sequence[ClaimRow], scope: Iterable[str] | None = None
) -> Diff:
    """This report's rows against the earlier ones (`merge`). `scope`: the presets this
    report covers (None: every preset, so a preset no longer run has vanished claims).
    Changed claims: verdict changes first, then moved figures, each in report order."""
    covered = None if scope is None else set(scope)
    changed, new = [], []
    seen: set[Key] = set()
    for row in now:
        seen.add(row.key)
        old = before.get(row.key)
        if old is None:
            new.append(row)
            continue
        v, f = verdict_changed(old.verdict, row.verdict), figure_moved(old.ours, row.ours)
        if v or f:
            changed.append(Change(old, row, v, f))
    changed.sort(key=lambda c: not c.verdict)  # stable: report order within each group
    vanished, out = [], 0
    for key, row in before.items():
        if key in seen:
            continue
        if covered is None or row.preset in covered:
            vanished.append(row)
        else:
            out += 1
    return Diff(changed, new, vanished, out)


# -- why ------------------------------------------------------------------------------


def load_why(text: str, where: str = "--why") -> dict[str, str]:
    """The why file's YAML text as {key: one line}; WhyError naming the fix when it is not
    a mapping of text to text (an empty file is an empty mapping)."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise WhyError(f"{where}: not valid YAML ({err})") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise WhyError(f'{where}: expected a mapping of "<preset>/<claim-id>" to one line of text')
    out = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not isinstance(value, str) or not value.strip():
            raise WhyError(f"{where}: {key!r}: expected text for a key and one line of text")
        out[key.strip()] = " ".join(value.split())
    return out


def why_of(why: Mapping[str, str], *keys: str) -> str | None:
    """The first of `keys` (most specific first) that `why` has, or None."""
    return next((why[k] for k in keys if k in why), None)


def claim_keys(row: ClaimRow) -> tuple[str, ...]:
    """The why keys of a claim, most specific first."""
    base = f"{row.preset}/{row.claim}"
    return (f"{base}/{row.variant}", base) if row.variant else (base,)


def unused_why(why: Mapping[str, str], d: Diff) -> list[str]:
    """Keys of `why` that match no claim listed in `d` (stale entries)."""
    rows = [c.now for c in d.changed] + d.new + d.vanished
    used = {k for r in rows for k in claim_keys(r)}
    return [k for k in why if k not in used]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _short(source: str) -> str:
    return source.rsplit("/", 1)[-1] or source


def changed_section(
    d: Diff,
    why: Mapping[str, str],
    sources: Sequence[tuple[str, int]],
) -> list[str]:
    """REPORT.md's "Changed since the last report": one table row per changed claim,
    then the new and the vanished claims. `sources`: (earlier report, its claim rows)
    oldest first."""
    listed = ", ".join(f"`{s}` ({n} claim rows)" for s, n in sources)
    lines = [
        SECTION,
        "",
        f"Against {listed}, oldest first; a later file's row replaces an earlier one.",
        "A verdict changed when the verdicts.py verdict or the class of a divergence differs;",
        "a figure moved when for some N in both, each mean lies outside the other's 95 %",
        "interval (without intervals: more than 5 % apart), or the N reported differ",
        "(the exact rules: reports/report_diff.py). Why: --why (docs/reproduce/why.yaml).",
        "",
    ]
    n_verdict = sum(1 for c in d.changed if c.verdict)
    lines.append(
        f"{len(d.changed)} claims changed ({n_verdict} verdicts, "
        f"{len(d.changed) - n_verdict} figures only); {len(d.new)} new; "
        f"{len(d.vanished)} vanished."
        + (
            f" {d.out_of_scope} earlier rows of presets not in this report were not compared."
            if d.out_of_scope
            else ""
        )
    )
    lines.append("")
    if d.changed:
        lines += ["| claim | before | now | why |", "|---|---|---|---|"]
        for c in d.changed:
            what = "verdict changed" if c.verdict else "figure moved"
            text = why_of(why, *claim_keys(c.now)) or NOT_WRITTEN
            lines.append(
                f"| {_cell(c.now.name)}; {what} "
                f"| {_cell(c.before.ours)} — **{_cell(c.before.verdict)}** "
                f"({_cell(_short(c.before.source))}) "
                f"| {_cell(c.now.ours)} — **{_cell(c.now.verdict)}** | {_cell(text)} |"
            )
        lines.append("")
    if d.new:
        lines += ["New claims (no earlier row):", ""]
        for r in d.new:
            text = why_of(why, *claim_keys(r))
            lines.append(f"- {r.name}: {r.ours} — **{r.verdict}**" + (f" — {text}" if text else ""))
        lines.append("")
    if d.vanished:
        lines += ["Vanished claims (an earlier row, none now):", ""]
        for r in d.vanished:
            text = why_of(why, *claim_keys(r)) or NOT_WRITTEN
            lines.append(
                f"- {r.name}: last {r.ours} — **{r.verdict}** ({_short(r.source)}) — {text}"
            )
        lines.append("")
    return lines


def rows_of(verdicts: Iterable[tuple[str, Verdict, str]]) -> list[ClaimRow]:
    """ClaimRows of this report from (preset, verdicts.Verdict, verdict column text)."""
    out = []
    for preset, v, label in verdicts:
        c = v.claim
        out.append(ClaimRow(preset, str(c["id"]), row_label(c), str(v.ours), label))
    return out
