#!/usr/bin/env bash
# make build-tna: compile p4src/tna/main.p4 for Tofino 1 with p4c's open Tofino
# backend -> build/tna/ (tofino.bin, context.json, bf-rt.json, p4incast.p4info.txtpb),
# then print the compile time and the resource summary (stages, tables, SRAM/TCAM),
# and pack the device configs the Tofino P4Runtime servers take beside them
# (`p4incast-ctl pack-tna`, controller/tofino_config.py): device_config.stratum.pb
# (Stratum's BfPipelineConfig) and device_config.bf-switchd.bin (bf_switchd's
# length-prefixed parts). `p4incast-ctl --target tna push` packs the same in memory.
#
# The compiler is not a Debian or PyPI package: it is p4c built with
# -DENABLE_TOFINO=ON (p4c >= v1.2.4.17). It is looked for as $P4C_TOFINO, then
# /opt/p4c-tofino/bin, then on PATH (a `bf-p4c`, or a `p4c` driver that sits
# next to `p4c-barefoot` — the BMv2-only p4c in /usr/local is never taken).
# Absent: one line says how to get it, and the script exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python; [ -x "$PY" ] || PY=python3
SRC=p4src/tna/main.p4
OUT=${TNA_OUT:-build/tna}  # tests compile into a temporary directory
NAME=p4incast

find_tofino_p4c() {
  local c d
  if [ -n "${P4C_TOFINO:-}" ]; then
    [ -x "$P4C_TOFINO" ] && { echo "$P4C_TOFINO"; return 0; }
    echo "build-tna: P4C_TOFINO=$P4C_TOFINO is not an executable" >&2; return 1
  fi
  for d in /opt/p4c-tofino/bin $(echo "${PATH}" | tr ':' ' '); do
    [ -d "$d" ] || continue
    [ -x "$d/bf-p4c" ] && [ -x "$d/p4c-barefoot" ] && { echo "$d/bf-p4c"; return 0; }
    [ -x "$d/p4c" ] && [ -x "$d/p4c-barefoot" ] && { echo "$d/p4c"; return 0; }
  done
  c=$(command -v bf-p4c 2>/dev/null) && { echo "$c"; return 0; }
  return 1
}

if ! P4C=$(find_tofino_p4c); then
  echo "build-tna: skipped — no Tofino p4c (p4c built with -DENABLE_TOFINO=ON, e.g. commit 17ade03c, installed in /opt/p4c-tofino; or set P4C_TOFINO=/path/to/bf-p4c)"
  exit 0
fi

mkdir -p "$OUT"
echo "build-tna: $P4C $SRC -> $OUT/"
start=$(date +%s.%N)
set +e
"$P4C" --target tofino --arch tna --std p4-16 -Xp4c="--verbose -Ttable_summary:1" \
  -o "$OUT" \
  --bf-rt-schema "$OUT/bf-rt.json" \
  --p4runtime-files "$OUT/$NAME.p4info.txtpb" \
  --p4runtime-force-std-externs \
  "$SRC" 2>&1 | tee "$OUT/compile.log"
rc=${PIPESTATUS[0]}
set -e
end=$(date +%s.%N)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
if [ "$rc" -ne 0 ]; then
  echo "build-tna: FAILED after ${secs} s (exit $rc); full log in $OUT/compile.log" >&2
  exit "$rc"
fi

# The driver writes the pipe's files under $OUT/pipe/; keep copies at the top.
for f in tofino.bin context.json; do
  p=$(find "$OUT" -path "$OUT/$f" -prune -o -name "$f" -print | head -n1)
  [ -n "$p" ] && cp -f "$p" "$OUT/$f"
done
echo "$secs" > "$OUT/compile_seconds"

"$PY" - "$OUT" "$secs" <<'PYEOF'
"""Print the compile time and a resource summary from the compiler's outputs."""
import json
import re
import sys
from pathlib import Path

out, secs = Path(sys.argv[1]), sys.argv[2]
print(f"build-tna: compiled in {secs} s")
for f in ("tofino.bin", "context.json", "bf-rt.json", "p4incast.p4info.txtpb"):
    p = out / f
    print(f"  {f:24s} {'%d bytes' % p.stat().st_size if p.is_file() else 'MISSING'}")


def first(name):
    return next(iter(sorted(out.rglob(name))), None)


summary = first("table_summary.log")
if summary:
    for line in summary.read_text(errors="replace").splitlines():
        if re.search(r"Number of stages|Critical path length", line):
            print("  " + line.strip())

res_file = first("resources.json")
if res_file:
    mau = json.loads(res_file.read_text())["resources"]["mau"]
    used = [s for s in mau["mau_stages"] if s.get("logical_tables", {}).get("ids")]
    tables = sorted({t["table_name"] for s in used for t in s["logical_tables"]["ids"]})
    srams = sum(len(s.get("rams", {}).get("srams", [])) for s in mau["mau_stages"])
    tcams = sum(len(s.get("tcams", {}).get("tcams", [])) for s in mau["mau_stages"])
    n = mau.get("nStages", len(mau["mau_stages"]))
    s0 = mau["mau_stages"][0] if mau["mau_stages"] else {}
    sram_per = s0.get("rams", {}).get("nRows", 0) * s0.get("rams", {}).get("nColumns", 0)
    tcam_per = s0.get("tcams", {}).get("nRows", 0) * s0.get("tcams", {}).get("nColumns", 0)
    last = max((s["stage_number"] for s in used), default=-1)
    print(f"  MAU stages used: {last + 1} of {n}")
    print(f"  logical tables: {len(tables)}")
    print(f"  SRAM blocks: {srams} of {sram_per * n}   TCAM blocks: {tcams} of {tcam_per * n}")
else:
    ctx = out / "context.json"
    if ctx.is_file():
        tabs = json.loads(ctx.read_text()).get("tables", [])
        kinds = {}
        for t in tabs:
            kinds[t.get("table_type", "?")] = kinds.get(t.get("table_type", "?"), 0) + 1
        print("  context.json tables: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
        units = {}

        def walk(o):
            if isinstance(o, dict):
                if "memory_type" in o and "memory_units_and_vpns" in o:
                    n = sum(len(m.get("memory_units", [])) for m in o["memory_units_and_vpns"])
                    units[o["memory_type"]] = units.get(o["memory_type"], 0) + n
                for v in o.values():
                    walk(v)
            elif isinstance(o, list):
                for v in o:
                    walk(v)

        walk(tabs)
        print(f"  memory units: SRAM {units.get('sram', 0)}, TCAM {units.get('tcam', 0)} (of 80 SRAM, 24 TCAM per stage on Tofino 1)")
    mau_log = first("mau.resources.log")
    if mau_log:
        print(f"  (no resources.json; per-stage SRAM/TCAM table in {mau_log})")
        for line in mau_log.read_text(errors="replace").splitlines():
            if re.search(r"^\|?\s*(Stage|Totals|Total|Average)\b", line):
                print("  " + line.rstrip())
PYEOF

# Needs the project's venv (protobuf); a failure here fails the build.
"$PY" -m p4incast.controller pack-tna "$OUT" | sed 's/^/build-tna: packed /'
