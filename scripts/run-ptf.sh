#!/usr/bin/env bash
# make ptf: the PTF suite on BMv2 over veth pairs (root). Extra args: test names.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python ptf-tests/run/bmv2/run.py "$@"
