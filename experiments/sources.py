"""Where each setting of a paper preset comes from: its `paper.sources` map,
one entry per parameter (checked when the preset loads, config.expand and
atscale.parse; resolved for REPORT.md's settings table, reports/reproduce.py).

A preset's parameters, as a settings table names them (`parameters`):

    engine, senders, repeats              top-level settings (incast)
    loads (or arrival_means_us), repeats  top-level settings (at scale)
    topology.<key> app.<key> transport.<key>   each key a section sets (incast;
    fabric.<key> traffic.<key> transport.<key>   at scale); a key a variant
                                          sweeps is the variant's, not the section's
    variants.<section.key>                each swept key (its list of values)
    schemes.<name>                        each scheme (its ecn, k, cc, agent, ...)

`sources` may also name a key the preset leaves at its default when that
default matters (`topology.buffer_bytes`, `app.connections`, `repeats`).

Each value is text, one of:

    "§V ¶1; Fig. 7 caption — own-words note"     the paper's place
    "not stated (searched: §V, §VII) — why this value; ablation: ablations/x.yaml"
    "ablation: what reading of the paper this tests"   an ablation's swept key
    "as <preset-stem>"                    the same source as that paper preset's
                                          (experiments/papers/<stem>.yaml) entry
                                          for this key, followed one level (`resolve`)

The map is the last key of `paper:`, e.g.

    paper:
      ...
      sources:
        topology.delay_us: "§5.1.2 — 25 µs per link"
        transport.init_cwnd: "not stated (searched: §4.2, §5.1.2) — Linux's IW10;
          ablation: ablations/newdctcp-init-cwnd.yaml"
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

import yaml

from p4incast.model.atscale import ATSCALE_SCENARIO, Fabric, Traffic
from p4incast.model.scheme import INCAST_SCENARIO, App, Topology, Transport

# per scenario: its top-level settings (with their defaults) and its sections
TOP = {
    INCAST_SCENARIO: {"engine": "auto", "senders": None, "repeats": 1},
    ATSCALE_SCENARIO: {"loads": None, "arrival_means_us": None, "repeats": 1},
}
SECTIONS: dict[str, dict[str, type]] = {
    INCAST_SCENARIO: {"topology": Topology, "app": App, "transport": Transport},
    ATSCALE_SCENARIO: {"fabric": Fabric, "traffic": Traffic, "transport": Transport},
}
AS = re.compile(r"as ([A-Za-z0-9_.-]+)")  # "as <preset-stem>"
PAPERS = Path(__file__).resolve().parent / "papers"


class SourceError(ValueError):
    """A preset's `paper.sources` that names no parameter, or an `as` that resolves to nothing."""


def _scenario(raw: Mapping[str, Any]) -> str:
    name = raw.get("scenario", INCAST_SCENARIO)
    if name not in TOP:
        raise SourceError(f"scenario {name!r}: no parameters known ({', '.join(TOP)})")
    return str(name)


def parameters(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A preset's parameters (its raw YAML mapping), in file order: name -> the
    value the file sets (a variant: its list; a scheme: its settings but its name)."""
    scenario = _scenario(raw)
    variants = raw.get("variants") or {}
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key in TOP[scenario]:
            out[key] = value
        elif key in SECTIONS[scenario] and isinstance(value, Mapping):
            for name, v in value.items():
                if f"{key}.{name}" not in variants:
                    out[f"{key}.{name}"] = v
        elif key == "variants" and isinstance(value, Mapping):
            for name, v in value.items():
                out[f"variants.{name}"] = v
        elif key == "schemes" and isinstance(value, list):
            for s in value:
                if isinstance(s, Mapping) and "name" in s:
                    out[f"schemes.{s['name']}"] = {
                        k: _word(v) if k == "ecn" else v for k, v in s.items() if k != "name"
                    }
    return out


def _word(value: Any) -> Any:
    """YAML reads a scheme's `ecn: off` as false: the word the file wrote."""
    return {False: "off", True: "on"}.get(value, value) if isinstance(value, bool) else value


def default(raw: Mapping[str, Any], key: str) -> tuple[bool, Any]:
    """(True, its default) when `key` is a setting of the preset's scenario that
    the file leaves out (a top-level key or a section's field); else (False, None)."""
    scenario = _scenario(raw)
    if key in TOP[scenario]:
        return True, TOP[scenario][key]
    section, _, name = key.partition(".")
    cls = SECTIONS[scenario].get(section)
    for f in fields(cls) if cls else ():
        if f.name == name:
            value = f.default if f.default is not MISSING else None
            if f.default_factory is not MISSING:
                value = f.default_factory()
            return True, value
    return False, None


def sources(raw: Mapping[str, Any]) -> dict[str, str]:
    """The preset's `paper.sources` as written ({} without one), its shape checked:
    parameter name -> non-empty text."""
    paper = raw.get("paper") or {}
    got = paper.get("sources") if isinstance(paper, Mapping) else None
    if got is None:
        return {}
    if not isinstance(got, Mapping):
        raise SourceError("paper.sources: expected a mapping of parameter -> where it comes from")
    for key, text in got.items():
        if not isinstance(text, str) or not text.strip():
            raise SourceError(f"paper.sources.{key}: expected non-empty text (the paper's place)")
    return {str(k): v for k, v in got.items()}


def check(raw: Mapping[str, Any], present: bool = True) -> dict[str, str]:
    """The preset's sources, every key naming a parameter of the file or a
    setting it leaves at its default (SourceError naming the first that does not).
    present=False (a preset as it loads, whose schemes or variants a caller may
    have narrowed): a `schemes.<name>` or `variants.<key>` need only be well formed."""
    have = parameters(raw)
    got = sources(raw)
    for key in got:
        kind, _, rest = key.partition(".")
        formed = (kind == "schemes" and rest) or (kind == "variants" and default(raw, rest)[0])
        if key not in have and not default(raw, key)[0] and (present or not formed):
            raise SourceError(
                f"paper.sources.{key}: names no parameter of this preset "
                f"(its parameters: {', '.join(have)})"
            )
    return got


def read(path: Path) -> dict[str, Any]:
    """A preset file's YAML mapping (SourceError naming the file when it is not one)."""
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise SourceError(f"{path}: cannot read ({err})") from None
    if not isinstance(raw, dict):
        raise SourceError(f"{path}: expected a YAML mapping")
    return raw


def resolve(raw: Mapping[str, Any], papers: Path = PAPERS) -> dict[str, str]:
    """The preset's sources with each "as <stem>" replaced by that paper preset's
    (`papers`/<stem>.yaml) source for the same key, followed one level. SourceError
    when that preset is missing, lacks the key, or itself says "as"."""
    out = {}
    for key, text in check(raw).items():
        m = AS.fullmatch(text.strip())
        if m:
            stem = m.group(1)
            path = Path(papers) / f"{stem}.yaml"
            if not path.is_file():
                raise SourceError(f"paper.sources.{key}: {text!r}: no preset {path}")
            theirs = sources(read(path)).get(key)
            if theirs is None:
                raise SourceError(f"paper.sources.{key}: {text!r}: {stem} has no source for {key}")
            if AS.fullmatch(theirs.strip()):
                raise SourceError(
                    f"paper.sources.{key}: {text!r}: {stem} says {theirs!r} (one level only)"
                )
            text = f"{theirs} (as {stem})"
        out[key] = text
    return out


def unsourced(raw: Mapping[str, Any], papers: Path = PAPERS) -> list[str]:
    """The preset's parameters without a source."""
    got = resolve(raw, papers)
    return [key for key in parameters(raw) if key not in got]


def show(value: Any) -> str:
    """A setting as the YAML writes it: true, [1, 2], ecn: off, k: 20."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {show(v)}" for k, v in value.items())
    return "null" if value is None else str(value)


def table(raw: Mapping[str, Any], papers: Path = PAPERS) -> list[str]:
    """A markdown table, one row per parameter: its value as the preset sets it
    (a default it names: "default: <value>") and its resolved source."""
    got = resolve(raw, papers)
    rows = [(k, show(v)) for k, v in parameters(raw).items()]
    for k in got:
        if k not in dict(rows):
            section, _, name = k.partition(".")
            sets = raw.get(section)
            if isinstance(sets, Mapping) and name in sets:  # a variant replaces it
                rows.append((k, f"{show(sets[name])} (replaced by variants.{k})"))
            else:
                rows.append((k, f"default: {show(default(raw, k)[1])}"))

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    return [
        "| parameter | value | source |",
        "|---|---|---|",
        *(f"| {k} | {cell(v)} | {cell(got.get(k, '(no source given)'))} |" for k, v in rows),
    ]


# An ablation's paper preset: "ablation of <stem>.yaml" in its paper.cite.
ABLATION_OF = re.compile(r"ablation of ([A-Za-z0-9_.-]+)\.yaml")
# A source that says the paper does not give the value (the form above).
NOT_STATED = re.compile(r"\s*(not stated|not in the paper)", re.IGNORECASE)
PAPERS_SETTING = "(paper's setting)"


def _reason(text: str) -> str:
    """The why of a "not stated (...) — why; ablation: ..." source, its first clause."""
    why = text.split(" — ", 1)[1] if " — " in text else NOT_STATED.sub("", text, count=1)
    why = re.split(r";\s*ablation|\.\s*Ablation|; ablations?/", why)[0]
    return why.split("; ")[0].strip(" .;:") or "not stated in the paper"


def baseline_label(raw: Mapping[str, Any], claim: Mapping[str, Any], papers: Path = PAPERS) -> str:
    """How REPORT.md names an ablation's baseline row: "(paper's setting)" when the
    paper preset it ablates sources that setting in the paper, else "(our choice:
    REASON)" with the reason its source gives. The setting is `paper.baseline`'s
    keys, or for a claim marked `baseline: true` the schemes it names."""
    paper = raw.get("paper") or {}
    m = ABLATION_OF.search(str(paper.get("cite", "")))
    if not m or not (Path(papers) / f"{m.group(1)}.yaml").is_file():
        return "(our choice: the preset's own setting, no paper preset named)"
    parent = read(Path(papers) / f"{m.group(1)}.yaml")
    theirs = resolve(parent, papers)
    keys = list((paper.get("baseline") or {}).keys())
    if not keys:
        names = claim.get("schemes") or [claim.get("scheme")]
        keys = [f"schemes.{n}" for n in names if n]
    reasons = []
    for key in keys:
        text = theirs.get(key) or theirs.get(f"variants.{key}")
        if text is None:
            reasons.append(f"{key}: {m.group(1)} gives no source")
        elif NOT_STATED.match(text):
            reasons.append(f"{key}: {_reason(text)}")
    return f"(our choice: {'; '.join(reasons)})" if reasons else PAPERS_SETTING
