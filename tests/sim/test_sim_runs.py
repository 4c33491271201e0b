"""End-to-end checks of the simulated model (issue 5, "Checks the model must pass").

Each asserts an observable outcome of a whole run: goodput against the framing
limit, RTO rounds and goodput under drop-tail incast, the DCTCP queue against
the closed form of docs/algorithms.md §5, and the run dict's shape (experiments/SCHEMA.md).
How each scheme fares is a result to report, not something asserted here.
"""

from __future__ import annotations

import math
from typing import Any

from p4incast.model import batching
from p4incast.model.scheme import App, Point, Scheme, Topology, Transport, base_rtt_s
from p4incast.sim import engine

LINK_BPS = 1e9
FRAMING = 1448 / 1538  # TCP payload per wire byte of a full packet (timestamps on)
RTT_S = 100e-6
WIRE_BITS = 1538 * 8


def scheme(name: str, ecn: str, k: int, cc: str, agent: str = "off") -> dict[str, Any]:
    return {"name": name, "ecn": ecn, "k": k, "cc": cc, "agent": agent, "batching": False}


DROPTAIL = scheme("droptail", "off", 0, "reno")


def run_point(d: dict[str, Any]) -> dict[str, Any]:
    """One run from a compact dict (scheme, n, repeat, seed, topology, app), as its record."""
    point = Point(
        Scheme(**d["scheme"]),
        d["n"],
        d.get("repeat", 0),
        Topology(**d.get("topology", {})),
        App(**d.get("app", {})),
        Transport(**d.get("transport", {})),
        seed=d.get("seed", 1),
    )
    return engine.run_point(point).record()


def _goodput(run: dict[str, Any]) -> float:
    rs = run["rounds"]
    return sum(r["goodput_bps"] for r in rs) / len(rs)


def _rto_ratio(run: dict[str, Any]) -> float:
    rs = run["rounds"]
    return sum(r["rto"] for r in rs) / len(rs)


def test_single_flow_reaches_the_framing_limit(p4i: Any) -> None:
    run = run_point({"scheme": DROPTAIL, "n": 1, "app": {"sru_bytes": 8 << 20, "rounds": 2}})
    assert run["status"] == "ok", run["error"]
    last = run["rounds"][-1]["goodput_bps"]
    assert last >= 0.90 * FRAMING * LINK_BPS, f"{last / 1e6:.1f} Mbit/s"
    assert last <= FRAMING * LINK_BPS * 1.001  # never above the wire's limit
    assert 0.09 < run["base_rtt_ms"] < 0.2  # 4 x 25 us + serialisation


def test_droptail_shows_incast(p4i: Any) -> None:
    """Marking off, 64 KB buffer, reno: from some N on every round waits for an RTO
    and goodput falls well below the one-server goodput."""
    runs = {
        n: run_point({"scheme": DROPTAIL, "n": n, "app": {"rounds": 10}, "seed": 1})
        for n in (1, 16)
    }
    for run in runs.values():
        assert run["status"] == "ok", run["error"]
    assert _rto_ratio(runs[1]) == 0.0
    assert _rto_ratio(runs[16]) >= 0.5
    assert _goodput(runs[16]) < 0.8 * _goodput(runs[1])
    port = runs[16]["switch"]["ports"]["1"]
    assert port["queue_drops"] > 0 and port["marked"] == 0
    assert all(r["timeouts"] > 0 for r in runs[16]["rounds"] if r["rto"])


def test_dctcp_mark_tail_queue_within_the_closed_form(p4i: Any) -> None:
    """N long DCTCP flows, K = 20, mark-tail: while all N are active the queue stays
    near K + N, within K + N + ½·√(2N(C·RTT + K)) (Alizadeh et al.; §5)."""
    n, k = 16, 20
    run = run_point(
        {
            "scheme": scheme("mark-tail", "tail", k, "dctcp"),
            "n": n,
            "topology": {"buffer_bytes": 256 << 10},
            "app": {"sru_bytes": 2 << 20, "rounds": 1, "jitter_us": 0},
        }
    )
    assert run["status"] == "ok", run["error"]
    rnd = run["rounds"][0]
    start = run["depth_series"][0][0]
    first_done = min(rnd["fct_s"])  # FCTs count from the request, at round start
    series = run["depth_series"]
    t_req = start + 0.005  # the round starts 5 ms in (after the handshakes)
    steady = [d for t, d in series if t_req + 0.02 < t < t_req + first_done - 0.001]
    assert len(steady) > 50
    bdp = LINK_BPS * RTT_S / WIRE_BITS
    bound = k + n + 0.5 * math.sqrt(2 * n * (bdp + k))
    assert k <= max(steady) <= bound, (max(steady), bound)
    assert rnd["timeouts"] == 0
    assert run["switch"]["ports"]["1"]["marked"] > 0


def test_run_dict_has_the_contract_shape(p4i: Any) -> None:
    run = run_point(
        {
            "scheme": scheme("front+rx", "front", 20, "reno", agent="newdctcp-rx"),
            "n": 4,
            "repeat": 1,
            "seed": 3,
            "app": {"rounds": 3},
        }
    )
    assert run["status"] == "ok", run["error"]
    assert run["engine"] == "sim" and run["scheme"] == "front+rx"
    assert (run["n"], run["repeat"]) == (4, 1)
    assert [r["round"] for r in run["rounds"]] == [0, 1, 2]
    for r in run["rounds"]:
        assert r["bytes"] == 4 * 65536
        assert len(r["fct_s"]) == 4 and max(r["fct_s"]) <= r["completion_s"] + 1e-9
        assert r["goodput_bps"] == 8 * r["bytes"] / r["completion_s"]
        assert r["rto"] == (r["timeouts"] > 0)
    port = run["switch"]["ports"][run["switch"]["bottleneck_port"]]
    for key in ("marked", "ect", "ce_in", "ecn_drop", "queue_drops", "egress", "hist"):
        assert key in port
    assert sum(port["hist"].values()) == port["egress"]  # one count per packet, all left
    assert 0 < port["mean_depth"] <= port["peak"]  # a time average of the depth
    assert run["agent"]["clamped_acks"] > 0  # the receiver clamped windows


def test_the_queue_is_measured_whole_and_per_round(p4i: Any) -> None:
    """Issue 46 item 6: no histogram cap (the pipeline's stops at 127; the buffer bounds
    the simulator's), and each round's own queue record adds up to the run's."""
    buffer = 512 * 1024  # 346 full frames of 1514 B: room for a queue past 127
    run = run_point(
        {"scheme": DROPTAIL, "n": 32, "topology": {"buffer_bytes": buffer}, "app": {"rounds": 3}}
    )
    assert run["status"] == "ok", run["error"]
    port = run["switch"]["ports"][run["switch"]["bottleneck_port"]]
    deepest = max(int(b) for b in port["hist"])
    # 32 first flights of 10 segments meet at the port: far past the old last bucket
    assert 127 < deepest == port["peak"] - 1  # the depth a packet found, then it joined
    assert port["peak_bytes"] <= buffer
    total: dict[str, int] = {}
    for r in run["rounds"]:
        q = r["queue"]
        assert 0 <= q["mean_depth"] <= q["max_depth"] <= port["peak"]
        for b, c in q["hist"].items():
            total[b] = total.get(b, 0) + c
    assert all(c <= port["hist"][b] for b, c in total.items())  # rounds within the run
    assert sum(r["queue"]["drops"] for r in run["rounds"]) <= port["queue_drops"]
    assert max(r["queue"]["max_depth"] for r in run["rounds"]) == port["peak"]


def test_bad_point_fails_with_one_clear_error() -> None:
    """Checked before ns-3 is loaded, so this runs everywhere."""
    run = run_point(
        {
            "scheme": scheme("x", "sideways", 99, "vegas"),
            "n": 0,
            "topology": {"buffer_bytes": 100},
        }
    )
    assert run["status"] == "failed"
    for word in ("n must be", "ecn", "cc", "buffer_bytes"):
        assert word in run["error"]


def test_leaf_spine_with_background_flow(p4i: Any) -> None:
    """Two leaves, two spines, a long background flow into the receiver: the rounds
    complete, and the bottleneck carries more than the incast bytes."""
    run = run_point(
        {
            "scheme": scheme("mark-front", "front", 20, "newdctcp"),
            "n": 6,
            "topology": {"kind": "leaf_spine", "spines": 2, "background": True},
            "app": {"rounds": 3},
        }
    )
    assert run["status"] == "ok", run["error"]
    incast_pkts = sum(r["bytes"] for r in run["rounds"]) / 1448
    port = run["switch"]["ports"]["1"]
    assert port["egress"] > 1.5 * incast_pkts  # the background flow shares the port
    assert any(r["timeouts"] == 0 for r in run["rounds"]) or port["marked"] > 0


def test_batching_staggers_requests(p4i: Any) -> None:
    """Seed-003 batching: servers asked in k batches T~ apart, so a round lasts at
    least T~·(k − 1) (model.batching.plan gives k and T~)."""
    n = 8
    sch = scheme("batching", "off", 0, "reno")
    sch["batching"] = True
    run = run_point({"scheme": sch, "n": n, "app": {"rounds": 2}})
    assert run["status"] == "ok", run["error"]
    plan = batching.plan(n, 65536, 65536, LINK_BPS, base_rtt_s(Topology()))
    assert plan.k > 1
    for r in run["rounds"]:
        assert r["completion_s"] >= plan.t_tilde * (plan.k - 1)


def test_newdctcp_mark_front_holds_the_queue_near_k(p4i: Any) -> None:
    """N long NewDCTCP flows, mark-front K = 20: the sender's window-end cut keeps the
    queue near K (a sender that never cut would sit at the buffer)."""
    n, k = 16, 20
    run = run_point(
        {
            "scheme": scheme("mark-front", "front", k, "newdctcp"),
            "n": n,
            "topology": {"buffer_bytes": 256 << 10},
            "app": {"sru_bytes": 2 << 20, "rounds": 1, "jitter_us": 0},
        }
    )
    assert run["status"] == "ok", run["error"]
    rnd = run["rounds"][0]
    t_req = run["depth_series"][0][0] + 0.005
    steady = sorted(
        d for t, d in run["depth_series"] if t_req + 0.02 < t < t_req + min(rnd["fct_s"]) - 0.001
    )
    assert len(steady) > 50
    median = steady[len(steady) // 2]
    assert k - 5 <= median <= k + n, median
    assert rnd["timeouts"] == 0


def test_runs_are_reproducible_and_repeats_differ(p4i: Any) -> None:
    """Same (seed, repeat): the same rounds, whatever ran before in the process;
    another repeat: other server think times, so other rounds."""

    def rounds(repeat: int) -> list[float]:
        run = run_point(
            {
                "scheme": scheme("mark-tail", "tail", 20, "dctcp"),
                "n": 8,
                "repeat": repeat,
                "seed": 7,
                "app": {"rounds": 4},
            }
        )
        assert run["status"] == "ok", run["error"]
        return [r["completion_s"] for r in run["rounds"]]

    first = rounds(0)
    other = rounds(1)
    assert rounds(0) == first
    assert other != first


def test_event_scheduler_does_not_change_the_run(p4i: Any) -> None:
    """The model's event queue (RunConfig.scheduler, chosen for speed) orders events
    exactly as ns-3's HeapScheduler: same rounds, counters and depth series."""

    def outcome(scheduler: str, ecn: str, cc: str) -> tuple[Any, ...]:
        c = engine.run_config(Point(Scheme("sched", ecn, 8, cc), 16, app=App(rounds=3)))
        if scheduler:
            c.scheduler = scheduler
        sc = p4i.Scenario(c)
        try:
            sc.Setup()
            assert sc.Advance(c.maxSimS) and not str(sc.error), str(sc.error)
            sc.Collect()
            q = sc.bottleneck
            return (
                [(r.completion, r.timeouts, r.retrans) for r in sc.results],
                (q.marked, q.drops, q.egress, list(q.hist), list(q.seriesD)),
            )
        finally:
            p4i.Scenario.Teardown()

    for ecn, cc in (("off", "reno"), ("front", "newdctcp")):  # drop-tail (RTOs), mark-front
        assert outcome("", ecn, cc) == outcome("ns3::HeapScheduler", ecn, cc)


def test_shared_buffer_holds_a_port_at_the_dynamic_threshold(p4i: Any) -> None:
    """Drop-tail incast into a 400 KB shared buffer, alpha = 1: the receiver's port
    never holds more than alpha/(1+alpha) of it (plus one frame), and it does fill
    to near that share (the threshold, not the capacity, is what drops)."""
    shared = 400_000
    run = run_point(
        {
            "scheme": DROPTAIL,
            "n": 48,
            "topology": {"shared_buffer_bytes": shared, "dt_alpha": 1.0},
            "app": {"sru_bytes": 64 << 10, "rounds": 3},
        }
    )
    assert run["status"] == "ok", run["error"]
    port = run["switch"]["ports"]["1"]
    # admitted while its bytes after the packet <= alpha * free space before it:
    # the fixed point alpha/(1+alpha)·B, overshot by less than one frame
    assert port["peak_bytes"] <= shared / 2 + 1514, port["peak_bytes"]
    assert port["peak_bytes"] >= 0.9 * shared / 2, port["peak_bytes"]
    assert port["queue_drops"] > 0


def test_receiver_policies_run_every_base_rtt(p4i: Any) -> None:
    """ICTCP and RCC are stepped on the simulator's clock once per base RTT (their
    own timescale: ICTCP adjusts a flow every 2·RTT, RCC once per RTT), so a
    policy acts within one RTT of what triggers it; policy_tick_us overrides."""
    for agent in ("ictcp", "rcc"):
        run = run_point(
            {"scheme": scheme(agent, "tail", 20, "reno", agent=agent), "n": 8, "app": {"rounds": 3}}
        )
        assert run["status"] == "ok", run["error"]
        rtt = base_rtt_s(Topology())
        assert run["policy"]["tick_s"] == rtt
        assert run["policy"]["steps"] >= 0.99 * run["sim_s"] / rtt - 1
    slow = run_point(
        {
            "scheme": scheme("ictcp", "off", 0, "reno", agent="ictcp"),
            "n": 8,
            "app": {"rounds": 3},
            "transport": {"policy_tick_us": 5000},
        }
    )
    assert slow["policy"]["tick_s"] == 5e-3


def test_rcc_ack_queue_holds_acks_and_loses_none(p4i: Any) -> None:
    """RCC's ACK queue (seed 002 Alg. 2): with 40 senders of 1-packet windows
    against queue_maxsize 40, ACKs are held; every ACK that waited is sent,
    taken out by a newer ACK of its flow (Alg. 2 l.1), or still waiting when
    the run ends: none is lost; the windows in flight pass Q packets by one
    flow's window at most (the loop tests before each send); every round
    completes. Off, nothing is held."""
    sch = scheme("rcc", "tail", 40, "reno", agent="rcc")
    topo = {"delay_us": 40, "buffer_bytes": 121120, "queue_pkts": 80}
    on = run_point(
        {
            "scheme": sch,
            "n": 40,
            "topology": topo,
            "app": {"sru_bytes": 32768, "rounds": 3},
            "transport": {"init_cwnd": 1, "delayed_ack": False},
        }
    )
    assert on["status"] == "ok", on["error"]
    q = on["agent"]["ack_queue"]
    assert q["held"] > 0 and q["max_held"] > 0
    assert q["held"] == q["released"] + q["replaced"] + q["superseded"] + q["still_held"]
    assert q["cap_bytes"] == 40 * 1448
    assert 0 < q["max_in_flight_bytes"] <= 2 * q["cap_bytes"]
    assert len(on["rounds"]) == 3
    off = run_point(
        {
            "scheme": sch,
            "n": 40,
            "topology": topo,
            "app": {"sru_bytes": 32768, "rounds": 3},
            "transport": {"init_cwnd": 1, "delayed_ack": False, "ack_queue": False},
        }
    )
    assert off["status"] == "ok" and "ack_queue" not in off["agent"]


def test_restart_each_round_starts_rounds_from_the_initial_window(p4i: Any) -> None:
    """Rounds over persistent connections start with the windows the last round
    ended with; restart_each_round puts every sender back to init_cwnd (2 here),
    so 16 NewDCTCP senders' first flights (32 packets) fit the 43-frame buffer,
    where the windows they carried over do not."""
    base = {"scheme": scheme("newdctcp", "front", 20, "newdctcp"), "n": 16, "app": {"rounds": 8}}
    carried = run_point({**base, "transport": {"init_cwnd": 2}})
    fresh = run_point({**base, "transport": {"init_cwnd": 2, "restart_each_round": True}})
    assert carried["switch"]["ports"]["1"]["queue_drops"] > 0
    assert fresh["switch"]["ports"]["1"]["queue_drops"] == 0
    assert not any(r["rto"] for r in fresh["rounds"])


def test_per_round_connections_start_each_round_from_the_initial_window(p4i: Any) -> None:
    """app.connections: per-round opens a new connection every round: each round
    pays a handshake (one RTT of small frames) and its first flight is the initial
    window again, so one flow's rounds all take as long as a persistent
    connection's first round plus that RTT; persistent rounds after the first
    start with the window the last round grew, and are faster."""
    base = {
        "scheme": scheme("reno", "off", 0, "reno"),
        "n": 1,
        "app": {"rounds": 4, "jitter_us": 0.0},
        "transport": {"init_cwnd": 2},
    }
    kept = run_point(base)
    fresh = run_point({**base, "app": {**base["app"], "connections": "per-round"}})
    assert kept["status"] == fresh["status"] == "ok"
    kept_fct = [r["fct_s"][0] for r in kept["rounds"]]
    fresh_fct = [r["fct_s"][0] for r in fresh["rounds"]]
    assert all(f < kept_fct[0] * 0.9 for f in kept_fct[1:]), kept_fct
    assert max(fresh_fct) - min(fresh_fct) < 0.01 * min(fresh_fct), fresh_fct  # last FIN's µs
    handshake = fresh_fct[0] - kept_fct[0]
    assert 4 * 25e-6 <= handshake <= base_rtt_s(Topology()), handshake


def test_per_round_connections_are_new_flows_to_the_receiver_agent(p4i: Any) -> None:
    """New connections each round start from IW 2: 10 NewDCTCP senders' first
    flights fit the 64 KB buffer. The receiver agent sees every connection as a
    new flow (N x rounds of them). A per-round run does not change a persistent
    run that follows it in the same process. The senders keep their own ECN
    cut (sender_ecn): the receiver's rule alone drops here (rcc-sender-ecn in
    docs/reproduce/REPORT.md), which is not what this test is about."""
    base = {
        "scheme": {
            **scheme("newdctcp-rx", "front", 20, "newdctcp", "newdctcp-rx"),
            "sender_ecn": True,
        },
        "n": 10,
        "app": {"rounds": 6},
        "transport": {"init_cwnd": 2},
    }
    kept = run_point(base)
    fresh = run_point({**base, "app": {"rounds": 6, "connections": "per-round"}})
    again = run_point(base)
    assert kept["status"] == fresh["status"] == "ok"
    assert (kept["agent"]["flows"], fresh["agent"]["flows"]) == (10, 60)
    assert fresh["switch"]["ports"]["1"]["queue_drops"] == 0
    assert not any(r["rto"] for r in fresh["rounds"])
    for key in ("rounds", "switch", "agent", "depth_series"):
        assert again[key] == kept[key], key


def test_per_round_connections_close_in_order_through_rccs_ack_queue(p4i: Any) -> None:
    """RCC's ACK queue holds ACKs; a connection closed each round sends its FIN
    behind them (a FIN that overtook held ACKs crashed ns-3 in this very run)."""
    run = run_point(
        {
            "scheme": scheme("rcc", "off", 0, "reno", "rcc"),
            "n": 40,
            "app": {"sru_bytes": 16384, "rounds": 20, "connections": "per-round"},
            "transport": {"init_cwnd": 1},
        }
    )
    assert run["status"] == "ok", run["error"]
    assert len(run["rounds"]) == 20 and run["agent"]["flows"] == 40 * 20
    assert run["agent"]["ack_queue"]["held"] > 0


def test_a_smaller_segment_is_sent_framed_and_buffered_as_its_own_size(p4i: Any) -> None:
    """transport.mss_bytes: 1000 (seed 003's ns-2 payloads): a long flow's goodput
    is capped at 1000 of every 1090 wire bytes (not 1448 / 1538), and an
    overflowing 32 KB buffer holds 30 frames of 1066 B (not 21 of 1514)."""
    t = {"mss_bytes": 1000}
    one = run_point({"scheme": DROPTAIL, "n": 1, "app": {"sru_bytes": 4 << 20, "rounds": 2},
                     "transport": t})  # fmt: skip
    assert one["status"] == "ok", one["error"]
    last = one["rounds"][-1]["goodput_bps"]
    assert 0.9 * 1000 / 1090 * LINK_BPS <= last <= 1000 / 1090 * LINK_BPS * 1.001, last
    # 63 984 B + the server's 16-B header: 64 full segments, so every queued frame is full
    burst = run_point({"scheme": DROPTAIL, "n": 16, "topology": {"buffer_bytes": 32768},
                       "app": {"sru_bytes": 63984, "rounds": 2}, "transport": t})  # fmt: skip
    port = burst["switch"]["ports"]["1"]
    assert port["queue_drops"] > 0
    assert port["peak_bytes"] == 30 * 1066, port["peak_bytes"]


def test_advertised_window_caps_a_single_flow(p4i: Any) -> None:
    """transport.adv_window_segs = W holds one flow to W segments per RTT (ns-2's
    Agent/TCP window_): with W = 2 of 1448 B over the default star (4 × 25 µs of
    propagation, and per packet's RTT a 1538-B frame and an ACK frame on 2 links
    each way, base_rtt_s) at most 2 × 1448 × 8 bit per base RTT, ~185 Mbit/s,
    far below the ~941 Mbit/s the same flow reaches uncapped."""
    topo = Topology()
    cap_bps = 2 * 1448 * 8 / base_rtt_s(topo)
    run = run_point(
        {
            "scheme": DROPTAIL,
            "n": 1,
            "app": {"sru_bytes": 1 << 20, "rounds": 2},
            "transport": {"adv_window_segs": 2},
        }
    )
    assert run["status"] == "ok", run["error"]
    last = run["rounds"][-1]["goodput_bps"]
    assert 0.8 * cap_bps <= last <= cap_bps * 1.001, f"{last / 1e6:.1f} Mbit/s"


def test_newreno_without_sack_recovers_incast_losses(p4i: Any) -> None:
    """transport.sack = false: the senders negotiate no SACK and recover as NewReno;
    a drop-tail incast that loses packets (16 × 64 KB into 64 KB of buffer) still
    delivers every byte of every round, with losses repaired by retransmission."""
    run = run_point(
        {
            "scheme": DROPTAIL,
            "n": 16,
            "app": {"sru_bytes": 65536, "rounds": 3},
            "transport": {"sack": False},
        }
    )
    assert run["status"] == "ok", run["error"]
    assert all(r["bytes"] == 16 * 65536 for r in run["rounds"])
    assert sum(r["retrans"] for r in run["rounds"]) > 0
