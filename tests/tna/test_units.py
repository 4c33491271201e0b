"""K bytes -> Tofino cells, BMv2 packets unchanged, and the bit<19> bounds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from p4incast.controller import units
from p4incast.controller.errors import ControllerError

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("k_bytes", "cells"),
    [
        (1, 1),  # any non-zero K needs at least one cell
        (79, 1),
        (80, 1),  # exactly one cell
        (81, 2),  # rounds up: never marks below K bytes
        (1500, 19),  # one full-size packet = 18.75 cells -> 19
        (30_000, 375),
        (100_000, 1250),
        (100_001, 1251),
    ],
)
def test_bytes_to_cells_rounds_up(k_bytes: int, cells: int) -> None:
    assert units.bytes_to_cells(k_bytes) == cells
    assert units.TOFINO1.threshold(k_bytes) == cells
    # The converted threshold covers the request and overshoots by less than a cell.
    assert cells * 80 >= k_bytes > (cells - 1) * 80


def test_tofino1_upper_bound_is_the_19_bit_field() -> None:
    assert units.QDEPTH_MAX == 524_287
    top = 524_287 * 80
    assert units.TOFINO1.user_max == top == 41_942_960
    assert units.bytes_to_cells(top) == 524_287
    assert units.bytes_to_cells(top - 79) == 524_287
    with pytest.raises(units.DepthUnitError, match=r"1\.\.41942960 bytes"):
        units.bytes_to_cells(top + 1)  # would need 524288 cells: 2**19 does not fit


@pytest.mark.parametrize("bad", [0, -80, 1.5, "80", None, True])
def test_refuses_what_is_not_a_threshold(bad: object) -> None:
    with pytest.raises(units.DepthUnitError):
        units.TOFINO1.threshold(bad)


def test_error_is_a_controller_error_with_the_fix() -> None:
    with pytest.raises(ControllerError) as err:
        units.TOFINO1.threshold(50_000_000, "K")
    msg = str(err.value)
    assert "K=50000000 bytes" in msg and "use 1..41942960 bytes" in msg and "80-byte" in msg
    assert isinstance(err.value, ValueError)


def test_drop_threshold_may_be_zero() -> None:
    assert units.TOFINO1.threshold(0, "drop_k", allow_zero=True) == 0
    assert units.TOFINO1.threshold(200_000, "drop_k", allow_zero=True) == 2500
    with pytest.raises(units.DepthUnitError, match="drop_k"):
        units.TOFINO1.threshold(-1, "drop_k", allow_zero=True)


def test_bmv2_packets_pass_unchanged() -> None:
    bmv2 = units.for_target("v1model")
    assert bmv2 is units.BMV2
    assert (bmv2.user_unit, bmv2.depth_unit) == ("packets", "packets")
    for k in (1, 20, 65, 524_287):
        assert bmv2.threshold(k) == k
    with pytest.raises(units.DepthUnitError, match=r"use 1\.\.524287 packets"):
        bmv2.threshold(524_288)
    with pytest.raises(units.DepthUnitError):
        bmv2.threshold(0)


def test_cell_size_is_per_chip() -> None:
    assert units.for_target("tna") is units.TOFINO1
    t2 = units.for_target("tna", chip="tofino2")
    assert t2.cell_bytes == 176
    assert t2.threshold(1500) == 9  # 8.52 cells -> 9
    assert t2.user_max == 524_287 * 176
    assert units.bytes_to_cells(1500, cell_bytes=176) == 9
    with pytest.raises(ValueError):
        units.bytes_to_cells(1500, cell_bytes=0)
    with pytest.raises(units.DepthUnitError, match="tofino2"):
        units.for_target("v1model", chip="tofino2")
    with pytest.raises(units.DepthUnitError, match="unknown target"):
        units.for_target("psa")


def test_histogram_buckets_match_the_pipeline() -> None:
    # One packet per bucket on BMv2; 16 cells (1280 bytes) per bucket on Tofino 1.
    assert units.BMV2.bucket_range(5, 128) == (5, 5)
    assert units.BMV2.bucket_range(127, 128) == (127, None)
    assert units.TOFINO1.bucket_range(0, 128) == (0, 15)
    assert units.TOFINO1.bucket_range(1, 128) == (16, 31)
    assert units.TOFINO1.bucket_range(127, 128) == (127 * 16, None)
    assert units.TOFINO1.to_user(16) == 1280
    with pytest.raises(ValueError):
        units.TOFINO1.bucket_range(128, 128)
    # The shift is stated once in the P4 wrapper; keep the two in step.
    text = (REPO / "p4src/tna/main.p4").read_text()
    shift = re.search(r"#define HIST_DEPTH_SHIFT (\d+)", text)
    assert shift and int(shift.group(1)) == units.HIST_DEPTH_SHIFT_TNA


def test_field_width_matches_the_p4_sources() -> None:
    defines = (REPO / "p4src/shared/defines.p4").read_text()
    width = re.search(r"typedef bit<(\d+)>\s+qdepth_t", defines)
    assert width and width.group(1) == str(units.QDEPTH_BITS)


def test_ctl_target_tna_takes_k_in_bytes_and_refuses_what_does_not_fit() -> None:
    # Validation happens before any connection, so no switch is needed: an
    # out-of-range K is one error naming the byte range, exit code 2.
    import subprocess
    import sys

    for k in ("0", "50000000"):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "p4incast.controller",
                "--target",
                "tna",
                "set-ecn",
                "--port",
                "1",
                "--mode",
                "tail",
                "--k",
                k,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
        )
        assert proc.returncode == 2, proc
        assert "use 1..41942960 bytes (80-byte cells" in proc.stderr
        assert proc.stderr.count("error") == 1
