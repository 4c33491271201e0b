"""docs/security.md names, for each mitigation, the test that shows it: every
test it names exists. `dir/test_x.py` is a file under tests/, `dir/test_x.py::name`
a test function in it, and a bare `::name` a function of the file named last."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "security.md"
FILE_REF = re.compile(r"^(?:tests/)?([\w/]+/test_\w+\.py)(?:::(\w+))?$")
FUNC_REF = re.compile(r"^::(\w+)$")


def references(text: str) -> list[tuple[str, str | None]]:
    refs: list[tuple[str, str | None]] = []
    current = None
    for token in re.findall(r"`([^`\n]+)`", text):
        if m := FILE_REF.match(token):
            current = m.group(1)
            refs.append((current, m.group(2)))
        elif (m := FUNC_REF.match(token)) and current is not None:
            refs.append((current, m.group(1)))
    return refs


def test_every_test_the_threat_model_names_exists() -> None:
    refs = references(DOC.read_text())
    assert len({f for f, _ in refs}) >= 10, refs  # the mitigation table was read
    for file, func in refs:
        path = REPO / "tests" / file
        assert path.is_file(), f"docs/security.md names {file}, which does not exist"
        if func is not None:
            assert re.search(rf"^(async )?def {func}\(", path.read_text(), re.M), (
                f"docs/security.md names {file}::{func}, which does not exist"
            )
