#!/usr/bin/env bash
# tools/demo.sh — the first command to run: installs what is missing (as root, with apt), builds a
# release build in ./build-demo (the real and sim flavors), then
#
#   act 1  the deterministic simulator: a fuzz campaign of `shutdown_race` (submissions racing
#          request_stop/stop; `wake_storm` while shutdown_race is not built in) over thousands of
#          seeds with swarm fault mixes and a progress bar, then the replay of one seed written as
#          a Chrome trace you can open in Perfetto;
#   act 2  the event loop doing real work for several producer threads (weft-demo), briefly;
#   act 3  the runtime of pinned workers spreading CPU and blocking work (weft-runtime-demo).
#
# Usage: ./tools/demo.sh [arguments for weft-demo, e.g. --producers 8 --items 1000]
# Environment: WEFT_JOBS (build and fuzz parallelism, default nproc), WEFT_DEMO_SEEDS (seeds in
# the campaign, default 20000), WEFT_DEMO_SCENARIO (force a scenario).
#
# After the build it takes well under two minutes (the campaign is bounded by its seed count).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-demo
jobs=${WEFT_JOBS:-$(nproc)}
fuzz_jobs=$(( jobs < 256 ? jobs : 256 ))  # weft-sim fuzz accepts --jobs in [1, 256]
seeds=${WEFT_DEMO_SEEDS:-20000}

# 1. Packages. As root, install-deps.sh installs what is missing; otherwise it only lists it, and
#    the demo goes on (it needs meson, ninja-build, clang, libboost-fiber-dev and libcli11-dev).
if ! ./tools/install-deps.sh; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "demo: installing packages failed" >&2
    exit 1
  fi
  echo "demo: going on without them; the demo needs meson, ninja-build, clang, libboost-fiber-dev, libcli11-dev" >&2
fi

. ./tools/toolchain.sh

# 2. Configure (once) and build only what the demo runs.
settings=(-Dbuildtype=release -Dtests=false -Dexamples=false -Dflavors=real,sim)
if [ -f "$build/build.ninja" ]; then
  meson configure "$build" "${settings[@]}"
else
  meson setup "$build" "${settings[@]}"
fi
ninja -C "$build" -j "$jobs" sim/weft-sim tools/weft-demo tools/weft-runtime-demo

sim="$build/sim/weft-sim"

# 3. Act 1: the simulator.
demo_simulator() {
  echo "--- scenarios built into weft-sim:"
  "$sim" list
  local scenario=${WEFT_DEMO_SCENARIO:-}
  if [ -z "$scenario" ]; then
    if "$sim" list | grep -q '^shutdown_race '; then scenario=shutdown_race; else scenario=wake_storm; fi
  fi

  echo
  echo "--- fuzz: $seeds seeds of $scenario, each seed its own schedule and fault mix (--swarm)"
  local log="$build/demo-fuzz.log" status=0
  # The progress bar goes to the terminal (stderr); the report is kept to pick a seed below.
  "$sim" fuzz --scenario "$scenario" --seeds "$seeds" --jobs "$fuzz_jobs" --swarm --shrink | tee "$log" || status=$?

  # The seed to replay: the first failure if the campaign found one, else a seed of the campaign.
  local replay_args
  replay_args=$(sed -n 's/^replay: [^ ]* replay //p' "$log" | head -n 1)  # the shrunk failure
  if [ -z "$replay_args" ]; then
    replay_args="--scenario $scenario --seed 7 --swarm"
  fi

  echo
  echo "--- replay: $replay_args"
  local chrome="$build/sim-trace.json" text="$build/sim-trace.txt"
  # shellcheck disable=SC2086  # replay_args is a list of flags
  "$sim" replay $replay_args --check-determinism --trace "$text" --chrome-trace "$chrome" || true
  echo
  echo "demo: the replay's trace: $(pwd)/$chrome ($(wc -l < "$text") events; as text: $(pwd)/$text)"
  echo "demo: open it in Perfetto (https://ui.perfetto.dev → Open trace file) or chrome://tracing → Load:"
  echo "      one lane per simulated thread; slices are runs between scheduling points and task polls"
  echo "      ('poll task N', with arrows from the wakes that queued them); instant events mark spawns,"
  echo "      blocks, wakes, task state changes, injected faults and notes (ts = position in the trace)."
  echo "demo: the same command prints the same trace-hash on every run and machine."
  if [ "$status" -ne 0 ]; then
    echo "demo: the campaign found failures (above, with their replay commands)" >&2
    return "$status"
  fi
}

# 4. Act 2: the event loop doing real work for several producer threads.
demo_event_loop() {
  "$build/tools/weft-demo" "$@"
}

# 5. Act 3: the runtime of pinned workers across its workers.
demo_runtime() {
  "$build/tools/weft-runtime-demo"
}

demos=(demo_simulator demo_event_loop demo_runtime)
for demo in "${demos[@]}"; do
  echo "=== $demo"
  "$demo" "$@"
done
echo "demo: done"
