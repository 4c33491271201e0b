"""Why a scheme loses rounds: the windows its senders carry from one round into the next.

Connections persist across rounds, so a round's first flight is the sum of the
congestion windows the senders ended the previous round with. When that sum is
above what the bottleneck holds (buffer + what is on the wire), the round
starts with drops, and a flow that loses its last segments waits for an RTO.
This prints, per scheme, every round's starting Σcwnd (packets), the drops
since the previous round and the RTOs, on the simulator.

    .venv/bin/python scripts/round_windows.py [--n 10] [--rounds 12] [--buffer 65536]

Measured (N = 10, SRU 64 KB, 64 KB buffer = 43 frames, K = 20, g = 0.15): DCTCP
starts its rounds with Σcwnd ≈ 43–73 packets, NewDCTCP with ≈ 65–96 — its cut,
max(cwnd/2, (n − m)·MSS), leaves large windows when few packets of a window
are marked — and NewDCTCP loses rounds to RTOs that DCTCP does not.
"""

from __future__ import annotations

import argparse

from p4incast.model.ecn import EcnMode
from p4incast.model.scheme import App, Point, Scheme, Topology, Transport
from p4incast.model.wire import MSS_BYTES
from p4incast.sim import engine, native

SCHEMES = {"dctcp": EcnMode.TAIL, "newdctcp": EcnMode.FRONT}
STEP_S = 20e-6  # how finely the run is sampled for round ends


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--buffer", type=int, default=65536, help="bytes")
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--g", type=float, default=0.15, help="DCTCP's gain")
    args = ap.parse_args()
    ok, why = native.available()
    if not ok:
        print(f"round_windows: cannot run: {why}")
        return 0
    p4i = native.load()
    for cc, mode in SCHEMES.items():
        point = Point(
            Scheme(cc, mode.value, args.k, cc),
            args.n,
            topology=Topology(buffer_bytes=args.buffer),
            app=App(rounds=args.rounds),
            transport=Transport(dctcp_g=args.g),
        )
        c = engine.run_config(point)
        sc = p4i.Scenario(c)
        sc.debug = True  # the servers' cwnd traces
        try:
            sc.Setup()
            t, seen, drops, rows = 0.0, 0, 0, []
            while not sc.Advance(t := t + STEP_S):
                if len(sc.results) > seen:  # a round ended: these windows start the next
                    seen = len(sc.results)
                    cwnd = sum(int(f.cwnd) for f in sc.flows) // MSS_BYTES
                    rows.append((seen, cwnd, int(sc.bottleneck.drops) - drops))
                    drops = int(sc.bottleneck.drops)
            sc.Collect()
            rtos = [int(r.timeouts) for r in sc.results]
        finally:
            p4i.Scenario.Teardown()
        print(f"{cc}: N={args.n}, buffer {args.buffer} B, K={args.k}")
        print("  round  Σcwnd at its start (pkts)  drops in the round before  RTOs")
        for (rnd, cwnd, d), rto in zip(rows, rtos[1:], strict=False):
            print(f"  {rnd:5d}  {cwnd:25d}  {d:25d}  {rto:4d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
