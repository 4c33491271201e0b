#!/usr/bin/env bash
# make setup: Debian packages, the project venv (.venv) and Python deps, then a
# report of the P4 tools that no registry serves (p4c, BMv2 simple_switch_grpc).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages, one group per use. Keep each list short and say why.
APT_PKGS=(
  python3-venv python3-dev            # the project venv
  iproute2 ethtool tcpdump iperf3 iputils-ping  # veth pairs, namespaces, traffic, base RTT
  tcpreplay valgrind                  # make bench: line-rate replay into BMv2; instructions per packet
  mininet                             # the incast testbed (LinuxBridge hosts + BMv2 switch)
  nftables                            # the testbed fences its switches' thrift/gRPC ports to this host
  ns2                                 # ns-2 2.35, the reference engine for seed 003 (engines/ns2.py)
  python3-thrift                      # simple_switch_CLI (system python) talks thrift to BMv2
  clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev make gcc pkg-config  # host agent (eBPF)
)
# Installed for their programs only: promtool (the alert rules' tests) and
# prometheus (the metrics endpoints' scrape test) come in Debian's prometheus.
# Without its Recommends (node_exporter, a service serving the host's metrics
# on every address), and its own service is stopped when setup installed it: it
# would listen on :9090, BMv2's default thrift port (docs/operations.md).
APT_PROGRAMS_ONLY=(prometheus)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=() programs=()
  for p in "${APT_PKGS[@]}"; do installed "$p" || missing+=("$p"); done
  for p in "${APT_PROGRAMS_ONLY[@]}"; do installed "$p" || programs+=("$p"); done
  if [ $((${#missing[@]} + ${#programs[@]})) -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]} ${programs[*]}"
    apt-get update -qq
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  if [ ${#programs[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${programs[@]}" >/dev/null
    if [ -d /run/systemd/system ]; then
      for p in "${programs[@]}"; do
        if systemctl disable --now "$p.service" >/dev/null 2>&1; then
          echo "setup: stopped and disabled the $p service (setup needs its programs only)"
        fi
      done
    fi
  fi
else
  echo "setup: not root or no apt-get; skipping Debian packages" \
    "(${APT_PKGS[*]} ${APT_PROGRAMS_ONLY[*]})"
fi

# The P4 toolchain (p4c, BMv2, PI): no registry has it. Install it when a tool is
# missing, or when a BMv2 performance bundle is named and not yet installed
# (scripts/install-p4-toolchain.sh says which way it took, or why none).
have_p4() { command -v p4c-bm2-ss >/dev/null && command -v simple_switch_grpc >/dev/null; }
tc_env=()
have_p4 || tc_env+=("P4INCAST_TOOLCHAIN_BUNDLE=${P4INCAST_TOOLCHAIN_BUNDLE:-}")
if [ -n "${P4INCAST_BMV2_PERF_BUNDLE:-}" ] && [ ! -x /opt/bmv2-perf/bin/simple_switch_grpc ]; then
  tc_env+=("P4INCAST_BMV2_PERF_BUNDLE=$P4INCAST_BMV2_PERF_BUNDLE")
fi
if [ ${#tc_env[@]} -gt 0 ]; then
  # Only the parts that are missing: an installed toolchain is not reinstalled.
  env -u P4INCAST_TOOLCHAIN_BUNDLE -u P4INCAST_BMV2_PERF_BUNDLE "${tc_env[@]}" \
    scripts/install-p4-toolchain.sh
fi

# Debian's interpreter, so the venv sees Debian's Mininet (not a pyenv/conda python)
PY=${PYTHON:-/usr/bin/python3}
# --system-site-packages: Mininet comes from Debian, not PyPI
[ -x .venv/bin/python ] || "$PY" -m venv --system-site-packages .venv
.venv/bin/pip install -q --upgrade pip
# ns-3 (the simulator engine) is ~500 MB and takes a few minutes the first time;
# Ray (sweeps on a cluster: p4incast-run --cluster) another ~300 MB.
.venv/bin/pip install -q -e '.[dev,sim,cluster]'

echo "setup: external P4 tools (not in any registry):"
.venv/bin/python -m p4incast.tools
