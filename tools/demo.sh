#!/usr/bin/env bash
# tools/demo.sh — the first command to run: installs what is missing (as root, with apt), builds a
# release build in ./build-demo and runs the demos, stopping at the first failure.
#
# Usage: ./tools/demo.sh [arguments for weft-demo, e.g. --producers 8 --items 1000]
#
# Each demo is one function listed in `demos` below; later stages (the simulator's fuzz campaign)
# are added the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-demo
jobs=${WEFT_JOBS:-$(nproc)}

# 1. Packages. As root, install-deps.sh installs what is missing; otherwise it only lists it, and
#    the demo goes on (it needs only meson, ninja and g++).
if ! ./tools/install-deps.sh; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "demo: installing packages failed" >&2
    exit 1
  fi
  echo "demo: going on without them; the demo itself needs only meson, ninja-build and g++" >&2
fi

# 2. Configure (once) and build.
if [ -f "$build/build.ninja" ]; then
  meson configure "$build" -Dbuildtype=release -Dtests=false
else
  meson setup "$build" -Dbuildtype=release -Dtests=false
fi
ninja -C "$build" -j "$jobs"

# 3. Demos.
demo_event_loop() {  # the event loop doing real work for several producer threads
  "$build/tools/weft-demo" "$@"
}

demos=(demo_event_loop)
for demo in "${demos[@]}"; do
  echo "=== $demo"
  "$demo" "$@"
done
echo "demo: done"
