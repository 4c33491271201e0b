"""Seed-003 batch scheduling: the worked examples of docs/algorithms.md §4 and §5."""

import math
from collections.abc import Callable

import pytest

from p4incast.model import batching

KIB64 = 64 * 1024


def test_wnd_max_worked_examples() -> None:
    assert batching.wnd_max(9) == 5  # the paper's walk-through
    assert batching.slow_start_windows(15) == (8, 0)
    assert batching.wnd_max(15) == 8
    assert batching.slow_start_windows(21) == (8, 6)
    assert batching.wnd_max(21) == 13


def test_wnd_max_small_and_third_branch() -> None:
    assert batching.wnd_max(1) == 1  # one packet, one window
    assert batching.wnd_max(2) == 1  # windows 1, then 1 left: wnd_A=1 >= wnd_B=1 -> 1
    # S_SRU = 12: m = 2, wnd_A = 4, wnd_B = 12 - 7 = 5 > wnd_A -> 2 * 4 - 1
    assert batching.slow_start_windows(12) == (4, 5)
    assert batching.wnd_max(12) == 7


def test_first_window_of_w0_packets_worked_examples() -> None:
    # docs/algorithms.md §4, "The initial window actually used": windows w0, 2 w0, ...
    # S_SRU = 23 (a 32 KB SRU), w0 = 10: one full window of 10, then 13 left;
    # wnd_B = 13 > wnd_A = 10 -> 2 * 10 - 1 = 19; two round trips (10 + 20 >= 23)
    assert batching.slow_start_windows(23, 10) == (10, 13)
    assert batching.wnd_max(23, 10) == 19
    assert batching.slow_start_rounds(23, 10) == 2
    # S_SRU = 15, w0 = 10: wnd_A = 10 >= wnd_B = 5 -> 10 + 5 - 1 = 14
    assert batching.wnd_max(15, 10) == 14
    # S_SRU = 46, w0 = 10: windows 10, 20 (30 sent), 16 left < 20 -> 20 + 16 - 1 = 35
    assert batching.slow_start_windows(46, 10) == (20, 16)
    assert batching.wnd_max(46, 10) == 35
    assert batching.slow_start_rounds(46, 10) == 3
    # an SRU that fits the first window is one window, one round trip
    assert batching.slow_start_windows(6, 10) == (6, 0)
    assert batching.wnd_max(6, 10) == 6
    assert batching.slow_start_rounds(6, 10) == 1
    # w0 = 1 is the paper's: ceil(log2(S_SRU + 1)) round trips
    assert [batching.slow_start_rounds(s) for s in (1, 2, 3, 9, 15, 21)] == [1, 2, 2, 4, 4, 5]


def test_plan_uses_the_first_window_it_is_given() -> None:
    # SRU 32 KB = 23 segments into a 32 KB buffer: from 1 packet wnd_max = 15
    # (windows 1, 2, 4, 8; wnd_B = 8 <= 8 -> 8 + 8 - 1), n = floor(32768 / 22500) = 1;
    # from 10 packets wnd_max = 19 and 2 round trips instead of 5 in T
    one = batching.plan(4, 32768, 32768, 1e9, 100e-6)
    ten = batching.plan(4, 32768, 32768, 1e9, 100e-6, init_segs=10)
    assert (one.init_segs, one.wnd_max, one.n) == (1, 15, 1)
    assert (ten.init_segs, ten.wnd_max, ten.n) == (10, 19, 1)
    per_round = 100e-6 + 8 * 32768 / 1e9
    assert math.isclose(one.T - ten.T, 3 * per_round, rel_tol=1e-9)


def test_batch_size_and_batches() -> None:
    assert batching.batch_size(KIB64, 1500, 21) == 3
    assert batching.batches(32, 3) == 11
    assert batching.batches(3, 3) == 1
    assert batching.batches(1, 3) == 1


def test_batch_size_is_one_when_one_flow_overflows() -> None:
    # 45 packets: m = 4, wnd_A = 16, wnd_B = 14 -> wnd_max = 29 frames, more than 10 KB
    assert batching.wnd_max(45) == 29
    assert batching.batch_size(10_000, 1500, 45) == 1
    s = batching.plan(4, 45 * 1448, 10_000, 1e9, 100e-6)
    assert s.n == 1 and s.k == 4 and s.overflows
    assert not batching.plan(4, 21 * 1448, KIB64, 1e9, 100e-6).overflows


def test_round_time_stagger_and_offsets() -> None:
    # n = 3 flows of 21 packets: 3 * 1540 B * 21 * 8 / 1 Gbit/s = 776.16 µs of
    # data and ACKs, then 5 slow-start rounds of R + B/C = 624.288 µs
    t = batching.round_time_T(1500, 40, 21, 1e9, 100e-6, KIB64, n=3)
    assert t == pytest.approx(3897.6e-6, abs=1e-12)
    one = batching.round_time_T(1500, 40, 21, 1e9, 100e-6, KIB64, n=1)
    assert t - one == pytest.approx(2 * 258.72e-6, abs=1e-12)
    assert batching.stagger(t) == pytest.approx(4e-3)
    assert batching.stagger(t, 20e-6, 0) == pytest.approx(3917.6e-6)
    # exactly on the grid stays there despite float rounding
    assert batching.stagger(2.98e-3, 20e-6, 1e-3) == pytest.approx(3e-3)
    offs = batching.start_offsets(7, 3, 4e-3)
    assert offs == pytest.approx([0, 4e-3, 8e-3, 0, 4e-3, 8e-3, 0])


def test_plan_worked_example() -> None:
    s = batching.plan(32, 21 * 1448, KIB64, 1e9, 100e-6, frame_bytes=1500)
    assert (s.s_sru_pkts, s.wnd_max, s.n, s.k) == (21, 13, 3, 11)
    assert math.isclose(s.T, 3897.6e-6, rel_tol=0, abs_tol=1e-12)
    assert s.t_tilde == pytest.approx(4e-3)
    assert s.stagger_us == pytest.approx(4000)
    assert s.batched
    assert len(s.offsets) == 32 and max(s.offsets) == pytest.approx(40e-3)
    # server i (1-based) at T~ * ((i-1) mod k): servers 1, 12, 23 together
    assert s.offsets[0] == s.offsets[11] == s.offsets[22] == 0
    assert s.offsets[10] == pytest.approx(40e-3)
    # g = S / (T~ (k-1) + T + d_max), S = 32 * SRU bytes
    span = 4e-3 * 10 + 3897.6e-6 + 20e-6
    assert s.goodput_bound_bps == pytest.approx(8 * 32 * 21 * 1448 / span)


def test_plan_unbatched_when_everyone_fits() -> None:
    s = batching.plan(2, 21 * 1448, KIB64, 1e9, 100e-6)
    assert s.k == 1 and not s.batched and s.offsets == (0.0, 0.0)


def test_sru_packets_rounds_up() -> None:
    assert batching.sru_packets(1448) == 1
    assert batching.sru_packets(1449) == 2
    assert batching.sru_packets(65536) == 46


@pytest.mark.parametrize(
    "call",
    [
        lambda: batching.wnd_max(0),
        lambda: batching.wnd_max(9, 0),
        lambda: batching.slow_start_rounds(9, 0),
        lambda: batching.batch_size(0, 1500, 9),
        lambda: batching.batches(0, 3),
        lambda: batching.round_time_T(1500, 40, 21, 0, 100e-6, KIB64, n=1),
        lambda: batching.round_time_T(1500, 40, 21, 1e9, -1, KIB64, n=1),
        lambda: batching.round_time_T(1500, 40, 21, 1e9, 100e-6, KIB64, n=0),
        lambda: batching.stagger(math.nan),
        lambda: batching.start_offsets(4, 0, 1e-3),
        lambda: batching.plan(0, 65536, KIB64, 1e9, 100e-6),
        lambda: batching.plan(4, 65536, KIB64, 1e9, 100e-6, mss=0),
    ],
)
def test_bad_inputs_raise_value_error(call: Callable[[], object]) -> None:
    with pytest.raises(ValueError, match="batching: .* must be"):
        call()


def test_ictcp_buffer_bound() -> None:
    assert batching.ictcp_buffer_bytes(47, 2, 100e-6, 1e9) == pytest.approx(128_500)
    assert batching.ictcp_buffer_bytes(1, 2, 100e-6, 1e9) == 0  # BDP absorbs it


# The paper's own setting (seed 003 §V): C = 1 Gbit/s, R = 100 µs, B = 32 KB,
# d_max = 20 µs, Δt = 1 ms; ns-2 packets of 1000 B of data, 1040 B with their
# headers, and 40-B ACKs (not stated: the paper's n and wnd_max below need them).
PAPER = {"buffer_bytes": 32 * 1024, "link_bps": 1e9, "rtt_s": 100e-6}
NS2 = {"mss": 1000, "frame_bytes": 1040, "ack_bytes": 40}


def paper_plan(n_servers: int, sru_bytes: int) -> batching.Schedule:
    return batching.plan(n_servers, sru_bytes, **PAPER, **NS2)


def test_the_papers_batch_sizes() -> None:
    # seed 003 §V-A: a 10 KB SRU (10 packets) peaks at wnd_max = 6, so n = 5
    # servers answer at once: 32768 // (1040 * 6) = 5
    s = paper_plan(16, 10_000)
    assert (s.s_sru_pkts, s.wnd_max, s.n) == (10, 6, 5)
    # §V-C (Fig. 8): a 1 MB block over 25 servers is a 40-packet SRU, wnd_max
    # 24 (windows 1..16, then 9 left: 16 + 9 - 1); over 100 servers 10 packets, 6
    assert batching.wnd_max(batching.sru_packets(10**6 // 25, 1000)) == 24
    assert batching.wnd_max(batching.sru_packets(10**6 // 100, 1000)) == 6


@pytest.mark.parametrize(
    ("n_servers", "sru_bytes", "paper_mbps"),
    [
        (15, 10_000, 203),  # §V-A, Fig. 6: 203 Mbit/s at 15 servers ...
        (16, 10_000, 162),  # ... and 162 at 16 (one more batch, k 3 -> 4)
        (499, -(-(10**6) // 499), 119),  # §V-B, Fig. 7 (1 MB / N): 119 at 499 ...
        (500, 10**6 // 500, 241),  # ... 241 at 500 (S_SRU 3 -> 2, n 15 -> 31)
    ],
)
def test_the_closed_form_gives_the_papers_goodputs(
    n_servers: int, sru_bytes: int, paper_mbps: int
) -> None:
    """T's transmission term is the batch's, n (S_f + S_ACK) S_SRU / C: with it
    the closed form gives 203.4, 162.0, 119.2 and 240.4 Mbit/s, the paper's
    whole numbers within one unit; the term of one flow, as Eq. (16) prints
    it, gives 216.0, 169.4, 236.9 and 477.3 (T~ 2 ms at N = 499 and 500
    needs the n: 15 x 25.92 µs + 724.288 µs = 1113.1 µs > 1 ms - d_max)."""
    g = paper_plan(n_servers, sru_bytes).goodput_bound_bps / 1e6
    assert abs(g - paper_mbps) < 1.0, g
