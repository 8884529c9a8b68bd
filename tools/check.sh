#!/usr/bin/env bash
# tools/check.sh — the whole test suite: installs what is missing (as root, with apt), builds every
# flavor and the sanitizer builds, runs every suite, and stops at the first failure. Each stage
# prints its wall time. Usage: ./tools/check.sh [--quick]   (from anywhere; build dirs go under
# ./build-check/). --quick, for everyday work: stage 1, then stage 6 with a short fuzz (200 seeds
# per scenario, 100 with --swarm); a few minutes once the build is there.
#
# Stages, in this order, failing fast:
#   1. build (real + sim + model flavors), then the real flavor's unit tests, examples and tools;
#   2. the real flavor under ThreadSanitizer;
#   3. the real flavor under AddressSanitizer + UndefinedBehaviorSanitizer, then the sim flavor
#      under both: the simulator's tests, the properties and a --swarm fuzz smoke;
#   4. consumers of the installed library (installed from stage 1's build): pkg-config, clang and
#      clang+ASan, a simulator of a user's own scenarios (command line, CMake, and clang+ASan),
#      g++ 12 refused (tools/consumer_check.sh);
#   5. the Relacy models (production primitives and their known-bad twins);
#   6. the simulator's tests, then a fuzz smoke: a fixed seed range per built-in scenario;
#   7. the rapidcheck properties over the simulator;
#   8. the mutation campaign at CI size: the mutants of tools/mutants/ci.list, each applied to a
#      copy of the tree and rebuilt, must each be killed by the simulator or the properties
#      (docs/mutation.md; meson test --suite mutation). The copy is built at the main build's
#      place, so its units come from ccache, compiled in stage 1;
#   9. the benchmark comparison end to end at tiny counts (tools/bench/compare.sh --strict: installs
#      the peers' packages, takes weft's programs from stage 1's build, builds the tokio,
#      async-executor and Asio peers and the I/O references, runs one round and checks that every
#      runtime printed every figure; never a time).
# (TSan runs on the real flavor only: the simulator's threads are fibers of one OS thread, with no
# race for it to see.)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  *) echo "check: unknown argument '$1' (usage: tools/check.sh [--quick])" >&2; exit 2 ;;
esac
out="$root/build-check"
jobs=${WEFT_JOBS:-$(nproc)}
fuzz_jobs=$(( jobs < 256 ? jobs : 256 ))  # weft-sim fuzz accepts --jobs in [1, 256]
if [ "$quick" = 1 ]; then
  fuzz_seeds=${WEFT_FUZZ_SEEDS:-200}
  swarm_seeds=${WEFT_SWARM_SEEDS:-100}
else
  fuzz_seeds=${WEFT_FUZZ_SEEDS:-2000}   # per scenario; the range [0, fuzz_seeds) is fixed for CI
  swarm_seeds=${WEFT_SWARM_SEEDS:-1000}  # per scenario, with --swarm fault mixes
fi
sanitizer_swarm_seeds=${WEFT_SANITIZER_SWARM_SEEDS:-300}  # per scenario, the sim under ASan+UBSan
mkdir -p "$out"
tally="$out/tally.txt"   # one "passed failed skipped" line per suites() call (meson test counts)
: > "$tally"

./tools/install-deps.sh
. ./tools/toolchain.sh

stage() {  # stage NAME COMMAND...
  local name=$1; shift
  local start=$SECONDS
  echo "=== stage: $name"
  if "$@"; then
    echo "=== stage: $name: ok ($((SECONDS - start)) s)"
  else
    echo "=== stage: $name: FAILED ($((SECONDS - start)) s)"
    exit 1
  fi
}

configure() {  # configure DIR [meson options...]
  local dir=$1; shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@" >/dev/null
  else
    meson setup "$dir" "$@" >/dev/null
  fi
}

# Every step below says `|| return 1`: stage() runs its command as an `if` condition, where bash
# ignores `set -e`, so a failing step would otherwise be passed over (a build that stopped on an
# error went on to run the tests of what had been built).
build() {  # build DIR [meson options...]
  local dir=$1; shift
  configure "$dir" "$@" || return 1
  ninja -C "$dir" -j "$jobs" || return 1
}

suites() {  # suites DIR SUITE...  (runs the named suites of a build; tallies meson's counts)
  local dir=$1; shift
  local args=()
  for s in "$@"; do args+=(--suite "$s"); done
  local log="$dir/check-suites.log" status=0
  meson test -C "$dir" --print-errorlogs --num-processes "$jobs" "${args[@]}" 2>&1 | tee "$log" || status=$?
  tally_from "$log"
  return "$status"
}

tally_from() {  # tally_from LOG: adds a meson test log's counts to the tally
  awk '/^Ok:/ {ok += $2} /^Expected Fail:/ {ok += $3} /^Fail:/ {fail += $2} /^Unexpected Pass:/ {fail += $3}
       /^Timeout:/ {fail += $2} /^Skipped:/ {skip += $2}
       END {printf "%d %d %d\n", ok, fail, skip}' "$1" >> "$tally"
}

present() {  # present DIR SUITE: true when the build defines tests in that suite
  # (The list is captured first: a `grep -q` in a pipe would stop reading early, and under
  # pipefail the writer's SIGPIPE would make a present suite look absent.)
  local listed
  listed=$(meson test -C "$1" --no-rebuild --list --suite "$2" 2>/dev/null) || return 1
  grep -q " / " <<<"$listed"
}

real_suites=(runtime io examples tools)

main_build_and_unit() {
  # Its install prefix is where stage 4 installs from it (tools/consumer_check.sh --from-build).
  # Optimised without debug information: it compiles a fifth faster, and a failing test names its
  # file and line itself (the sanitizer builds keep line tables, for their reports' stacks).
  build "$out/main" -Dflavors=real,sim,model --prefix "$out/consumer/prefix" -Doptimization=2 -Ddebug=false || return 1
  local s=("${real_suites[@]}")
  present "$out/main" bench && s+=(bench)
  suites "$out/main" "${s[@]}"
}

sanitizer_run() {  # sanitizer_run DIR SANITIZERS OPTIMIZATION
  # Line tables only: a sanitizer's report names file and line in each frame, and full debug
  # information would cost a fifth of the build. A unity build (each target's sources compiled a
  # few at a time as one unit) parses the shared headers once per group, not once per file: two
  # thirds of the build's time. Stage 1's build compiles every file on its own, so a file that
  # leans on another's includes still fails there.
  build "$1" -Dflavors=real -Db_sanitize="$2" -Db_lundef=false -Doptimization="$3" -Ddebug=false \
    -Dcpp_args=-gline-tables-only -Dunity=on || return 1
  suites "$1" "${real_suites[@]}"
}

# The sim flavor under ASan+UBSan: the simulator's tests, the properties and a --swarm fuzz smoke,
# whose injected task exceptions unwind on fiber stacks (the engine announces its switches to ASan,
# docs/simulator.md). Only the binaries these need: the known-bad variants and the examples run in
# the main build.
sim_sanitizer_run() {  # sim_sanitizer_run DIR
  local dir=$1 log="$1/check-suites.log" status=0
  configure "$dir" -Dflavors=sim -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 -Ddebug=false \
    -Dcpp_args=-gline-tables-only || return 1
  ninja -C "$dir" -j "$jobs" sim/weft-sim sim/tests/weft-sim-tests properties/weft-properties || return 1
  meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "$jobs" sim properties 2>&1 | tee "$log" || status=$?
  tally_from "$log"
  [ "$status" = 0 ] || return 1
  local cli="$dir/sim/weft-sim" s
  for s in $("$cli" list | awk '/^[^ ]/ {print $1}'); do
    "$cli" fuzz --scenario "$s" --seeds "$sanitizer_swarm_seeds" --start 0 --jobs "$fuzz_jobs" --swarm || return 1
  done
}

sim_run() {
  suites "$out/main" sim || return 1
  local cli="$out/main/sim/weft-sim"
  local scenarios
  scenarios=$("$cli" list | awk '/^[^ ]/ {print $1}')  # knob lines are indented
  for s in $scenarios; do
    "$cli" fuzz --scenario "$s" --seeds "$fuzz_seeds" --start 0 --jobs "$fuzz_jobs" || return 1
    # Swarm: each seed picks its own fault mix (injected task exceptions, stop requests, ...).
    "$cli" fuzz --scenario "$s" --seeds "$swarm_seeds" --start 0 --jobs "$fuzz_jobs" --swarm || return 1
  done
}

# The consumer stage counts as one test in the closing line (it is not a meson test).
consumer_stage() {
  if "$root/tools/consumer_check.sh" "$out/consumer" --from-build "$out/main"; then
    echo "1 0 0" >> "$tally"
  else
    echo "0 1 0" >> "$tally"
    return 1
  fi
}

stage "build + real unit tests" main_build_and_unit
if [ "$quick" = 0 ]; then
  stage "real: TSan" env TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    bash -c "set -euo pipefail; $(declare -f configure build suites tally_from sanitizer_run); jobs=$jobs; tally=$tally; real_suites=(${real_suites[*]}); sanitizer_run '$out/tsan' thread 2"
  stage "real: ASan+UBSan" env ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    bash -c "set -euo pipefail; $(declare -f configure build suites tally_from sanitizer_run); jobs=$jobs; tally=$tally; real_suites=(${real_suites[*]}); sanitizer_run '$out/asan' address,undefined 0"
  stage "sim: ASan+UBSan (tests, properties, $sanitizer_swarm_seeds --swarm seeds per scenario)" \
    env ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    bash -c "set -euo pipefail; $(declare -f configure tally_from sim_sanitizer_run); jobs=$jobs; tally=$tally; fuzz_jobs=$fuzz_jobs; sanitizer_swarm_seeds=$sanitizer_swarm_seeds; sim_sanitizer_run '$out/sim-asan'"
  stage "consumer: the installed library through pkg-config" consumer_stage
  stage "models (Relacy)" suites "$out/main" models
fi
stage "sim: tests + fuzz smoke ($fuzz_seeds seeds per scenario, $swarm_seeds with --swarm)" sim_run
if [ "$quick" = 0 ]; then
  if present "$out/main" properties; then
    stage "properties (rapidcheck over the sim)" suites "$out/main" properties
  else
    echo "=== stage: properties: SKIPPED (no properties suite in this build)"
  fi
  if present "$out/main" mutation; then
    stage "mutation: CI-size campaign (tools/mutants/ci.list)" suites "$out/main" mutation
  else
    echo "=== stage: mutation: SKIPPED (no mutation suite in this build)"
  fi
fi

# Stage 9 counts as one test in the closing line (it is not a meson test).
bench_compare_smoke() {
  if "$root/tools/bench/compare.sh" --rounds 1 --scale 0.002 --strict --build-dir "$out/bench" --weft-build "$out/main"; then
    echo "1 0 0" >> "$tally"
  else
    echo "0 1 0" >> "$tally"
    return 1
  fi
}
if [ "$quick" = 0 ]; then
  stage "bench: compare.sh smoke (weft and the peers, tiny counts)" bench_compare_smoke
fi

# The closing line counts meson tests (each gtest/rapidcheck binary, example, model, twin and
# tool check is one test) and stages 4 and 9 as one each; the fuzz smoke is not counted here, its
# own lines above report it.
read -r passed failed skipped < <(awk '{p += $1; f += $2; s += $3} END {print p+0, f+0, s+0}' "$tally")
echo "check: $passed passed, $failed failed, $skipped skipped"
if [ "$failed" -ne 0 ]; then
  echo "check: FAILED ($failed failing meson tests)"  # a stage must never hide one, but be sure
  exit 1
fi
echo "check: all stages passed"
