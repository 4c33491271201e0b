#!/usr/bin/env bash
# make build: compile the P4 programs with p4c-bm2-ss, then the host agent's
# eBPF objects. A missing compiler disables only what needs it: one line says
# what and how to get it, and the build goes on.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python; [ -x "$PY" ] || PY=python3

compile() {  # compile SRC OUTDIR NAME
  local src=$1 out=$2 name=$3
  mkdir -p "$out"
  if [ "$out/$name.json" -nt "$src" ] && [ -z "$(find "$(dirname "$src")" p4src/shared -newer "$out/$name.json" -name '*.p4' 2>/dev/null)" ]; then
    echo "build: $out/$name.json is up to date"; return
  fi
  echo "build: p4c-bm2-ss $src -> $out/$name.json"
  "$P4C" --arch v1model --std p4-16 \
    --p4runtime-files "$out/$name.p4info.txtpb" \
    -o "$out/$name.json" "$src"
}

# The lookup's complaint goes to a file of our own (mktemp: a fixed /tmp name could
# be another user's symlink, which a root build would then write through).
err=$(mktemp -t p4incast-build.XXXXXX)
trap 'rm -f "$err"' EXIT
if P4C=$("$PY" -m p4incast.tools which p4c-bm2-ss 2>"$err"); then
  compile p4src/v1model/main.p4 build/v1model p4incast
  "$PY" scripts/gen_p4names.py  # controller/p4info_names.py from the p4info
  compile p4src/bench/minimal.p4 build/bench minimal
else
  echo "build: skipping P4 — $(cat "$err")"
fi

if [ -x scripts/build-agent.sh ]; then
  scripts/build-agent.sh
fi
