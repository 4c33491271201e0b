"""No script names a fixed file in /tmp.

`make build`, `make setup` and the CI run as root. A fixed name in a
world-writable directory (/tmp/p4incast-build.err was one) can be created
first by another local user, as a file they read or a link to a file root
then overwrites; the scripts take their temporary files from mktemp. This reads
every shell script, the Makefile and .ci/run, outside comments, for a path
under /tmp or /var/tmp that is not mktemp's template.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXED_TMP = re.compile(r"(?<![\w$])/(?:var/)?tmp/[\w.${}-]+")


def scripts() -> list[Path]:
    found = sorted(REPO.glob("scripts/*.sh")) + [REPO / "Makefile", REPO / ".ci/run"]
    found += sorted(REPO.glob("ptf-tests/**/*.sh"))
    return [p for p in found if p.is_file()]


def fixed_tmp_names(text: str) -> list[str]:
    hits = []
    for line in text.splitlines():
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        hits += [m.group(0) for m in FIXED_TMP.finditer(code)]
    return hits


def test_the_pattern_catches_what_it_is_for() -> None:
    assert fixed_tmp_names("x 2>/tmp/p4incast-build.err; cat /tmp/p4incast-build.err") == [
        "/tmp/p4incast-build.err",
        "/tmp/p4incast-build.err",
    ]
    assert fixed_tmp_names("f=/var/tmp/out.$$") == ["/var/tmp/out.$$"]
    assert fixed_tmp_names("err=$(mktemp -t p4incast-build.XXXXXX)  # not /tmp/x") == []


def test_no_script_uses_a_fixed_tmp_name() -> None:
    assert scripts()
    for path in scripts():
        assert fixed_tmp_names(path.read_text()) == [], path
