#!/usr/bin/env bash
# tools/install-deps.sh [PACKAGE...] — installs weft's build and test dependencies from Debian when
# missing, and any further packages named (tools/bench/compare.sh adds the benchmark peers').
# Needs root to install; without root it only reports what is missing.
set -euo pipefail
# ccache: stages that compile a unit stage 1 already compiled (the mutation campaign's copy of the
# tree, say) take it from the cache (tools/toolchain.sh).
packages=(meson ninja-build ccache clang g++ pkg-config libgtest-dev liburing-dev libboost-fiber-dev
          librapidcheck-dev relacy-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libfmt-dev cmake "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages (run as root to install): ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
