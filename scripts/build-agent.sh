#!/usr/bin/env bash
# Build the host agent's eBPF objects: agent/bpf/*.bpf.c -> build/agent/*.bpf.o,
# compiled with clang -target bpf against a vmlinux.h that bpftool dumps from
# this kernel's BTF (build/agent/vmlinux.h; never committed).
# Missing clang/bpftool/BTF: one line says what to install, exit 0 (scripts/build.sh
# must not fail because of the agent).
# The objects are written writable by their owner only: the agent (root) refuses
# an object or build/agent/ that group or others could change (agent/libbpf.py).
set -euo pipefail
umask 022
cd "$(dirname "$0")/.."
SRC=agent/bpf
OUT=build/agent
BTF=/sys/kernel/btf/vmlinux

need() {  # need TOOL DEBIAN_PACKAGE
  if ! command -v "$1" >/dev/null 2>&1 && ! [ -x "/usr/sbin/$1" ]; then
    echo "build-agent: skipping eBPF objects — $1 not found (apt-get install $2)"
    exit 0
  fi
}
need clang clang
need bpftool bpftool
BPFTOOL=$(command -v bpftool || echo /usr/sbin/bpftool)
if [ ! -r "$BTF" ]; then
  echo "build-agent: skipping eBPF objects — kernel has no BTF ($BTF); need CONFIG_DEBUG_INFO_BTF=y"
  exit 0
fi
if [ ! -r /usr/include/bpf/bpf_helpers.h ]; then
  echo "build-agent: skipping eBPF objects — libbpf headers not found (apt-get install libbpf-dev)"
  exit 0
fi

mkdir -p "$OUT"
if [ ! -s "$OUT/vmlinux.h" ] || [ "$BTF" -nt "$OUT/vmlinux.h" ]; then
  "$BPFTOOL" btf dump file "$BTF" format c > "$OUT/vmlinux.h.tmp"
  mv "$OUT/vmlinux.h.tmp" "$OUT/vmlinux.h"
fi

built=()
for src in "$SRC"/*.bpf.c tests/*/bpf/*.bpf.c; do
  [ -e "$src" ] || continue
  obj="$OUT/$(basename "${src%.c}").o"
  # a test's object may include an agent source whole (tests/senders/bpf/p4t_*)
  deps=(-name '*.h')
  [ "$(dirname "$src")" = "$SRC" ] || deps=(\( -name '*.h' -o -name '*.bpf.c' \))
  if [ "$obj" -nt "$src" ] && [ "$obj" -nt "$OUT/vmlinux.h" ] &&
     [ -z "$(find "$SRC" "$(dirname "$src")" "${deps[@]}" -newer "$obj" 2>/dev/null)" ]; then
    continue
  fi
  # -mcpu=v3: the rotation's compare-and-swap (BPF_ATOMIC, kernel >= 5.12)
  clang -target bpf -mcpu=v3 -g -O2 -Wall -Werror -D__TARGET_ARCH_x86 \
    -I "$OUT" -I "$SRC" -c "$src" -o "$obj"
  built+=("$obj")
done
echo "build-agent: eBPF objects in $OUT/ (rebuilt: ${#built[@]})"
