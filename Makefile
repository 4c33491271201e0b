# p4-incast — the Makefile only dispatches; the logic lives in scripts/ and Python.
PY      := .venv/bin/python
PYTEST  := .venv/bin/pytest

.PHONY: setup build build-tna test ptf bench run sweep sim reproduce lint typecheck clean

setup:            ## Debian packages + .venv + Python deps; reports p4c/BMv2/PI
	scripts/setup.sh

build:            ## p4c -> build/v1model/p4incast.{json,p4info.txtpb}; eBPF objects -> build/agent/
	scripts/build.sh

build-tna:        ## Tofino p4c -> build/tna/ (tofino.bin, context.json, bf-rt.json, p4info) + resource summary; skips without it
	scripts/build-tna.sh

test: build       ## unit tests everywhere; controller + PTF on BMv2 where installed (skips say why)
	$(PYTEST) -q

ptf: build        ## only the PTF suite on simple_switch_grpc over veth pairs (root)
	scripts/run-ptf.sh

bench: build      ## benchmarks; each prints its figures and ratios
	scripts/bench.sh

run: build       ## the default comparison (experiments/default.yaml): BMv2 testbed, or the simulator without BMv2/root; RUN_ARGS: p4incast-run flags
	$(PY) -m p4incast.reports.run_cli experiments/default.yaml $(RUN_ARGS)

sweep: build     ## the larger sweep (experiments/sweep.yaml): leaf-spine, background flow, every receiver policy
	$(PY) -m p4incast.reports.run_cli experiments/sweep.yaml

sim:              ## the paper-scale comparison on the ns-3 model (experiments/sim.yaml), whatever is installed
	$(PY) -m p4incast.reports.run_cli experiments/sim.yaml --engine sim

reproduce:        ## every paper preset + ablation on the simulator -> results/reproduce-*/REPORT.md
	$(PY) -m p4incast.reports.reproduce

lint:             ## ruff lint (RUF100: a stale noqa fails) + format check
	.venv/bin/ruff check . && .venv/bin/ruff format --check .

typecheck:        ## pyright ([tool.pyright]): strict on p4incast/model/ and controller/, basic elsewhere
	$(PY) scripts/typecheck.py

clean:            ## remove build/ and results/
	rm -rf build results .pytest_cache
