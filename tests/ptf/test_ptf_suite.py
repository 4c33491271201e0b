"""The PTF suite on real BMv2, one pytest item per PTF test.

The whole suite runs once (ptf-tests/run/bmv2/run.py, JUnit XML out); each
item then asserts its own PTF test passed and shows PTF's failure text if not.
Skipped, with the reason, where root, BMv2 or the compiled pipeline is missing.
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PTF_TESTS = REPO / "ptf-tests" / "tests"


def ptf_test_names() -> list[str]:
    names = []
    for path in sorted(PTF_TESTS.glob("*.py")):
        for cls in re.findall(r"^class (\w+Test)\(", path.read_text(), re.M):
            names.append(f"{path.stem}.{cls}")
    return names


@pytest.fixture(scope="session")
def ptf_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | None]:
    out = tmp_path_factory.mktemp("ptf-xunit")
    proc = subprocess.run(
        [sys.executable, str(REPO / "ptf-tests/run/bmv2/run.py"), "--xunit-dir", str(out)],
        capture_output=True,
        text=True,
        timeout=1500,
    )
    if proc.returncode == 77:
        pytest.skip(proc.stdout.strip().splitlines()[-1])
    results: dict[str, str | None] = {}
    for xml in out.glob("*.xml"):
        for case in ET.parse(xml).getroot().iter("testcase"):
            # xmlrunner: classname "module.Class", name "runTest"
            name = str(case.get("classname"))
            if case.get("name") not in (None, "runTest"):
                name += f".{case.get('name')}"
            bad = case.find("failure")
            if bad is None:
                bad = case.find("error")
            results[name] = None if bad is None else (bad.get("message") or "") + (bad.text or "")
    if not results:
        pytest.fail(f"PTF produced no results (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return results


@pytest.mark.bmv2
@pytest.mark.root
@pytest.mark.parametrize("name", ptf_test_names())
def test_ptf(name: str, ptf_results: dict[str, str | None]) -> None:
    assert name in ptf_results, f"{name} did not run (PTF results: {sorted(ptf_results)})"
    failure = ptf_results[name]
    assert failure is None, failure
