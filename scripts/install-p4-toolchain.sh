#!/usr/bin/env bash
# Install the open-source P4 toolchain (p4c with the BMv2 and p4test back ends,
# BMv2 simple_switch_grpc configured --with-pi --with-thrift, PI) — none of it
# is in Debian or PyPI. `make setup` calls this when p4c-bm2-ss or
# simple_switch_grpc is missing, or when a BMv2 performance bundle is given
# and not installed. Ways, tried in order; the script says which it used:
#
#   1. a binary bundle: --bundle FILE or $P4INCAST_TOOLCHAIN_BUNDLE, a
#      tarball (.tar.zst) holding usr/local/..., with MANIFEST.txt beside it
#      (its sha256 and the Debian runtime packages it needs). The sha256 is
#      checked before anything is installed; then the runtime packages, the
#      unpack under PREFIX (default /), ldconfig, and a check that each tool runs.
#      Optionally also the BMv2 performance build (--perf-bundle FILE or
#      $P4INCAST_BMV2_PERF_BUNDLE; it unpacks to PREFIX/opt/bmv2-perf).
#   2. Ubuntu 20.04/22.04/24.04: p4lang's packages from the home:p4lang project.
#   3. otherwise: one message naming both ways; exit 0 (the P4 tests skip).
#
# Without root nothing changes: the script prints what it would do.
# Exit codes: 0 installed / nothing to do / no way here; 2 bad input (bundle
# missing, sha256 mismatch, manifest unreadable) or an install step failed.
#
# Options (for tests and for users who want the tools elsewhere):
#   --prefix DIR        unpack under DIR instead of / (no ldconfig; the check
#                       runs the tools with DIR's libraries on LD_LIBRARY_PATH)
#   --os-release FILE   read the OS from FILE instead of /etc/os-release
#   --no-apt            do not install the runtime packages (they are checked)
set -euo pipefail

BUNDLE=${P4INCAST_TOOLCHAIN_BUNDLE:-}
PERF_BUNDLE=${P4INCAST_BMV2_PERF_BUNDLE:-}
PREFIX=/
OS_RELEASE=/etc/os-release
APT=1
say() { echo "install-p4-toolchain: $*"; }
fail() {
  echo "install-p4-toolchain: error: $*" >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) BUNDLE=${2:?--bundle needs a file}; shift 2 ;;
    --perf-bundle) PERF_BUNDLE=${2:?--perf-bundle needs a file}; shift 2 ;;
    --prefix) PREFIX=${2:?--prefix needs a directory}; shift 2 ;;
    --os-release) OS_RELEASE=${2:?--os-release needs a file}; shift 2 ;;
    --no-apt) APT=0; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown argument '$1' (see --help)" ;;
  esac
done

HOW_TO="get the toolchain one of two ways: (a) a binary bundle for Debian 12 amd64 with its MANIFEST.txt: P4INCAST_TOOLCHAIN_BUNDLE=/path/p4-toolchain-debian12-amd64.tar.zst make setup; (b) on Ubuntu 20.04/22.04/24.04, p4lang's packages p4lang-p4c p4lang-bmv2 p4lang-pi (home:p4lang on build.opensuse.org), which make setup adds when run as root there. Or build p4lang/PI, behavioral-model (--with-pi --with-thrift) and p4c from source (README, 'The P4 toolchain')"

# manifest_field BUNDLE FIELD: the first "FIELD: value" after the manifest's
# "bundle: <name of BUNDLE>" line.
manifest_field() {
  awk -v name="$(basename "$1")" -v field="$2" '
    $1 == "bundle:" { inside = ($2 == name) }
    inside && $1 == field":" { print $2; exit }' "$(dirname "$1")/MANIFEST.txt"
}

# The Debian packages the bundle's binaries load: the manifest's one
# unindented "apt-get install -y --no-install-recommends ..." line.
manifest_packages() {
  awk '/^apt-get install -y --no-install-recommends / { for (i = 5; i <= NF; i++) print $i; exit }' \
    "$(dirname "$1")/MANIFEST.txt"
}

check_bundle() {  # BUNDLE: exists, has a manifest entry, sha256 matches. Nothing installed yet.
  local b=$1 want got
  [ -f "$b" ] || fail "bundle $b does not exist (named by P4INCAST_TOOLCHAIN_BUNDLE, P4INCAST_BMV2_PERF_BUNDLE or an option)"
  [ -f "$(dirname "$b")/MANIFEST.txt" ] || fail "no MANIFEST.txt beside $b: it carries the sha256 and the runtime packages"
  want=$(manifest_field "$b" sha256)
  [ -n "$want" ] || fail "$(dirname "$b")/MANIFEST.txt has no 'bundle: $(basename "$b")' entry with a sha256"
  got=$(sha256sum "$b" | cut -d' ' -f1)
  [ "$got" = "$want" ] || fail "sha256 of $b is $got, the manifest says $want: refusing to install (nothing was changed)"
  say "sha256 of $(basename "$b") matches the manifest"
}

runtime_packages() {  # BUNDLE: install (or, with --no-apt, check) the packages the manifest lists.
  local pkgs=() missing=() p
  mapfile -t pkgs < <(manifest_packages "$1")
  [ ${#pkgs[@]} -gt 0 ] || fail "$(dirname "$1")/MANIFEST.txt lists no runtime packages (the 'apt-get install -y --no-install-recommends' line)"
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && { say "runtime packages: all ${#pkgs[@]} installed"; return; }
  [ "$APT" = 1 ] || fail "runtime packages missing and --no-apt given: ${missing[*]}"
  say "installing runtime packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || fail "apt-get install ${missing[*]} failed"
}

unpack() {  # BUNDLE into PREFIX (zstd from the runtime packages)
  mkdir -p "$PREFIX"
  zstd -dc "$1" | tar -C "$PREFIX" -x || fail "unpacking $1 into $PREFIX failed"
  say "unpacked $(basename "$1") into $PREFIX"
}

# check_runs DESC CMD...: the tool starts and answers (--version / --help exit 0).
check_runs() {
  local desc=$1 out
  shift
  if ! out=$("$@" 2>&1); then
    fail "$desc does not run after the install: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
  fi
  say "runs: $desc"
}

install_bundle() {
  local root=${PREFIX%/} lib=
  if [ -z "$BUNDLE" ] && [ ! -x "$root/usr/local/bin/simple_switch_grpc" ]; then
    fail "the BMv2 performance bundle needs the main toolchain under $root/usr/local first (PI's libraries): give P4INCAST_TOOLCHAIN_BUNDLE too"
  fi
  runtime_packages "${BUNDLE:-$PERF_BUNDLE}"
  [ -z "$BUNDLE" ] || unpack "$BUNDLE"
  [ -z "$PERF_BUNDLE" ] || { rm -rf "$root/opt/bmv2-perf"; unpack "$PERF_BUNDLE"; }
  if [ "$PREFIX" = / ]; then ldconfig; else lib=$root/usr/local/lib; fi
  if [ -n "$BUNDLE" ]; then
    check_runs "p4c-bm2-ss --version" env LD_LIBRARY_PATH="$lib" "$root/usr/local/bin/p4c-bm2-ss" --version
    check_runs "p4test --version" env LD_LIBRARY_PATH="$lib" "$root/usr/local/bin/p4test" --version
    check_runs "simple_switch_grpc --help" env LD_LIBRARY_PATH="$lib" "$root/usr/local/bin/simple_switch_grpc" --help
    if [ -f "$root/usr/local/share/p4c/tna-include/tna.p4" ]; then
      say "TNA include files: $root/usr/local/share/p4c/tna-include"
    fi
  fi
  if [ -n "$PERF_BUNDLE" ]; then
    check_runs "BMv2 performance build: /opt/bmv2-perf/bin/simple_switch_grpc --help" \
      env LD_LIBRARY_PATH="${lib:+$root/opt/bmv2-perf/lib:$lib}" "$root/opt/bmv2-perf/bin/simple_switch_grpc" --help
  fi
  say "done: installed from ${BUNDLE:+$(basename "$BUNDLE") }${PERF_BUNDLE:+$(basename "$PERF_BUNDLE")}"
}

# Ubuntu: p4lang's packages, as p4lang's p4c README documents them. Not
# exercised by our CI (Debian), so it stays this short.
install_ubuntu() {
  local ver=$1 repo
  repo="https://download.opensuse.org/repositories/home:/p4lang/xUbuntu_${ver}"
  say "Ubuntu $ver: installing p4lang-p4c p4lang-bmv2 p4lang-pi from home:p4lang"
  apt-get update -qq && apt-get install -y -qq curl gnupg >/dev/null
  echo "deb $repo/ /" >/etc/apt/sources.list.d/home:p4lang.list
  curl -fsSL "$repo/Release.key" | gpg --dearmor >/etc/apt/trusted.gpg.d/home_p4lang.gpg
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq p4lang-p4c p4lang-bmv2 p4lang-pi >/dev/null \
    || fail "apt-get install p4lang-p4c p4lang-bmv2 p4lang-pi failed"
  say "done: installed p4lang's Ubuntu packages"
}

os_field() { (. "$OS_RELEASE" 2>/dev/null && eval "echo \"\${$1:-}\""); }
OS_ID=$(os_field ID)
OS_VER=$(os_field VERSION_ID)

if [ -n "$BUNDLE$PERF_BUNDLE" ]; then
  way="${BUNDLE:+$BUNDLE }${PERF_BUNDLE:+$PERF_BUNDLE }into $PREFIX"
elif [ "$OS_ID" = ubuntu ] && [[ "$OS_VER" =~ ^(20\.04|22\.04|24\.04)$ ]]; then
  way="p4lang's Ubuntu $OS_VER packages"
else
  say "no way to install here (no bundle given; OS '${OS_ID:-unknown} ${OS_VER}' is not Ubuntu 20.04/22.04/24.04): $HOW_TO. The P4 tests will skip."
  exit 0
fi

if [ -n "$BUNDLE$PERF_BUNDLE" ]; then  # a bad bundle is reported even without root
  [ -z "$BUNDLE" ] || check_bundle "$BUNDLE"
  [ -z "$PERF_BUNDLE" ] || check_bundle "$PERF_BUNDLE"
fi
if [ "$(id -u)" != 0 ]; then
  say "not root: changed nothing; as root it would install from $way"
  exit 0
fi

if [ -n "$BUNDLE$PERF_BUNDLE" ]; then
  install_bundle
else
  install_ubuntu "$OS_VER"
fi
