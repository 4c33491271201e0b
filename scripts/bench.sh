#!/usr/bin/env bash
# make bench: run every scripts/bench_*.py; each prints its own figures and ratios.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
for b in scripts/bench_*.py; do
  echo "== $b"
  .venv/bin/python "$b" || status=1
done
exit $status
