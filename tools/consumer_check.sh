#!/usr/bin/env bash
# tools/consumer_check.sh OUT_DIR [--from-build DIR] — builds against weft the way a user does:
# installs the real and sim flavors into OUT_DIR/prefix (built in OUT_DIR/build, or installed from
# the existing build DIR, which must have been configured with --prefix OUT_DIR/prefix and the
# real and sim flavors: check.sh's main build is, so this stage compiles nothing of weft twice),
# then, outside the source tree and with nothing but pkg-config:
#   * compiles tests/consumer/temporary_leaf_consumer.cpp (`pkg-config weft`) and runs it, with
#     clang and with clang + ASan;
#   * builds a simulator of the user's own scenarios (docs/examples/sim_user_scenario.cpp and
#     tests/consumer/sim/racy_counter.cpp, `pkg-config weft-sim-main`) once with clang++ on the
#     command line and once with CMake (pkg_check_modules); each fuzzes the sound scenario, finds
#     the planted bug of the racy one, replays the failing seed it printed and the record it saved;
#     and fuzzes tests/consumer/sim/short_store.cpp, whose bug sits behind a buggify site: found
#     only with the `buggify` fault kind on, and its probe listed as never reached with it off;
#     and fuzzes tests/consumer/sim/two_hosts.cpp, a service on two simulated hosts; then the same
#     scenarios built with clang + ASan+UBSan against the installed simulator, and a --swarm fuzz;
#   * builds a GoogleTest suite of WEFT_SIM_TESTs (tests/consumer/sim/sim_tests.cpp): the racy
#     test must fail with a reproduction line, and running that line must fail at that seed alone;
#   * checks that a simulator binary with no scenario linked in refuses to run, naming the cause.
# With a g++ older than 13 the compile must stop at weft's one-line refusal, and the configure
# probe must report the co_await defect for that g++ (so the probe is shown able to fail).
# Prints one "consumer: ..." line per check; exits non-zero at the first failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: consumer_check.sh OUT_DIR [--from-build DIR]"
out=${1:?$usage}
from_build=""
case "${2:-}" in
  "") ;;
  --from-build) from_build=${3:?$usage} ;;
  *) echo "consumer: unknown argument '$2' ($usage)" >&2; exit 2 ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
. "$root/tools/toolchain.sh"

fail() { echo "consumer: FAILED: $*" >&2; exit 1; }

build="$out/build" prefix="$out/prefix"
if [ -n "$from_build" ]; then
  [ -f "$from_build/build.ninja" ] || fail "--from-build $from_build: not a configured build directory"
  build=$(cd "$from_build" && pwd)
  configured_prefix=$(meson introspect --buildoptions "$build" |
    python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
  [ "$configured_prefix" = "$prefix" ] || fail "--from-build $build: its prefix is $configured_prefix, not $prefix"
elif [ -f "$build/build.ninja" ]; then
  meson setup --reconfigure "$build" "$root" --prefix "$prefix" -Dflavors=real,sim -Dtests=false -Dexamples=false >/dev/null
  ninja -C "$build" >/dev/null
else
  meson setup "$build" "$root" --prefix "$prefix" -Dflavors=real,sim -Dtests=false -Dexamples=false >/dev/null
  ninja -C "$build" >/dev/null
fi
rm -rf "$prefix"
meson install -C "$build" --no-rebuild --quiet >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib/$(gcc -print-multiarch 2>/dev/null || true)/pkgconfig"
pkg-config --exists weft || fail "pkg-config does not find weft in $prefix"
read -r -a cflags <<<"$(pkg-config --cflags weft)"
read -r -a libs <<<"$(pkg-config --libs weft)"
src="$root/tests/consumer/temporary_leaf_consumer.cpp"

consume() {  # consume NAME COMPILER [FLAGS...]: compile the consumer and run it
  local name=$1 compiler=$2; shift 2
  "$compiler" "$@" "${cflags[@]}" "$src" -o "$out/$name" "${libs[@]}" || fail "$name: does not compile"
  "$out/$name" >"$out/$name.log" 2>&1 || { cat "$out/$name.log" >&2; fail "$name: wrong result"; }
  echo "consumer: $name: builds from the installed files and releases every temporary once"
}
consume clang clang++
consume clang-asan clang++ -fsanitize=address,undefined -fno-sanitize-recover=all -g

# ---- the sim flavor: a user's own scenarios -------------------------------------------------
pkg-config --exists weft-sim-main || fail "pkg-config does not find weft-sim-main in $prefix"
work="$out/sim-consumer"  # an empty directory holding only the user's sources
rm -rf "$work"
mkdir -p "$work"
cp "$root/docs/examples/sim_user_scenario.cpp" "$root/tests/consumer/sim/"{racy_counter.cpp,short_store.cpp,two_hosts.cpp,increments.hpp} \
   "$root/tests/consumer/sim/"{sim_tests.cpp,no_scenario.cpp,CMakeLists.txt} "$work/"
read -r -a sim_cflags <<<"$(pkg-config --cflags weft-sim-main)"
read -r -a sim_libs <<<"$(pkg-config --libs weft-sim-main)"

# simulate NAME BINARY: the sound scenario passes, the planted bug is found, its replay fails again,
# and so does the replay record fuzz saved.
simulate() {
  local name=$1 bin=$2 log="$work/$1.log" record="$work/$1.record.json" replay status=0
  "$bin" list >"$log" 2>&1 || { cat "$log" >&2; fail "$name: list failed"; }
  grep -q "counter_handoff" "$log" && grep -q "racy_counter" "$log" || { cat "$log" >&2; fail "$name: list lacks a scenario"; }
  "$bin" fuzz --scenario counter_handoff --seeds 100 >"$log" 2>&1 || { cat "$log" >&2; fail "$name: counter_handoff failed"; }
  "$bin" fuzz --scenario racy_counter --seeds 200 --max-failures 1 --save "$record" >"$log" 2>&1 || status=$?
  [ "$status" = 1 ] || { cat "$log" >&2; fail "$name: the planted bug was not found (status $status)"; }
  replay=$(sed -n 's/^ *replay: //p' "$log" | head -n1)
  [ -n "$replay" ] || { cat "$log" >&2; fail "$name: fuzz printed no replay command"; }
  status=0
  (cd "$work" && eval "$replay") >"$log.replay" 2>&1 || status=$?
  [ "$status" = 1 ] && grep -q "outcome: fail" "$log.replay" || { cat "$log.replay" >&2; fail "$name: '$replay' did not fail again"; }
  status=0
  "$bin" replay "$record" >"$log.record" 2>&1 || status=$?
  [ "$status" = 1 ] && grep -q "^record: reproduced" "$log.record" \
    || { cat "$log.record" >&2; fail "$name: the record fuzz saved did not replay the failure"; }
  echo "consumer: $name: fuzzes the user's scenarios, finds the planted bug, replays it and its record ($(grep -m1 '^fail:' "$log"))"
  # The user's fault site: quiet (and its probe never reached) unless the buggify kind is on.
  "$bin" fuzz --scenario short_store --seeds 200 >"$log" 2>&1 || { cat "$log" >&2; fail "$name: short_store failed with buggify off"; }
  grep -q "^probes: 1 of 2 reached: short_store.started (200 runs, 200 hits); never reached: short_store.partial_write_taken$" "$log" \
    || { cat "$log" >&2; fail "$name: short_store's probe line is not as expected"; }
  status=0
  "$bin" fuzz --scenario short_store --seeds 200 --fault buggify=0.5 >"$log" 2>&1 || status=$?
  [ "$status" = 1 ] && grep -q "stored short" "$log" || { cat "$log" >&2; fail "$name: buggify did not expose the short write (status $status)"; }
  echo "consumer: $name: a buggify site exposes the user's bug only when on; probes list what no run reached"
  "$bin" fuzz --scenario two_hosts --seeds 100 >"$log" 2>&1 || { cat "$log" >&2; fail "$name: two_hosts failed"; }
  echo "consumer: $name: a service on two simulated hosts talks across a partitioned and repaired link"
}
clang++ "${sim_cflags[@]}" "$work/sim_user_scenario.cpp" "$work/racy_counter.cpp" "$work/short_store.cpp" "$work/two_hosts.cpp" \
  -o "$work/my-sim" "${sim_libs[@]}" \
  || fail "sim-clang: does not compile"
simulate sim-clang "$work/my-sim"

# The same scenarios built with ASan+UBSan against the installed (uninstrumented) simulator. The
# engine announces its fiber switches to ASan's runtime, so exceptions thrown on the simulated
# threads unwind cleanly: with --swarm, injected task exceptions make some producers of
# counter_handoff end without a value (the scenario says so and fails those seeds), and ASan and
# UBSan must report nothing (exit code 86 if they do). Failing seeds abandon their threads, hence
# no leak check.
clang++ -fsanitize=address,undefined -fno-sanitize-recover=all -g "${sim_cflags[@]}" "$work/sim_user_scenario.cpp" \
  "$work/racy_counter.cpp" "$work/short_store.cpp" "$work/two_hosts.cpp" -o "$work/my-sim-asan" "${sim_libs[@]}" \
  || fail "sim-clang-asan: does not compile"
export ASAN_OPTIONS=detect_leaks=0:exitcode=86 UBSAN_OPTIONS=exitcode=86
simulate sim-clang-asan "$work/my-sim-asan"
swarm_log="$work/sim-clang-asan.swarm.log"
status=0
"$work/my-sim-asan" fuzz --scenario counter_handoff --seeds 200 --swarm >"$swarm_log" 2>&1 || status=$?
unset ASAN_OPTIONS UBSAN_OPTIONS
[ "$status" = 1 ] && grep -q "^fuzz: 200 seeds, " "$swarm_log" && grep -q "did not finish with a value" "$swarm_log" \
  && ! grep -q "AddressSanitizer\|runtime error" "$swarm_log" \
  || { cat "$swarm_log" >&2; fail "sim-clang-asan: --swarm (status $status, want 1 with injected exceptions, no report)"; }
echo "consumer: sim-clang-asan: the user's scenarios run under ASan+UBSan; $(sed -n 's/^fuzz: 200 seeds, \([0-9]*\) failures.*/\1/p' "$swarm_log") of 200 --swarm seeds fail under injected faults (task exceptions among them), nothing reported"

if command -v cmake >/dev/null; then
  cmake -S "$work" -B "$work/cmake-build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ >"$work/cmake.log" 2>&1 \
    || { cat "$work/cmake.log" >&2; fail "sim-cmake: configure failed"; }
  cmake --build "$work/cmake-build" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log" >&2; fail "sim-cmake: build failed"; }
  simulate sim-cmake "$work/cmake-build/my-sim"
else
  echo "consumer: cmake not installed; the CMake consumer is not checked (skipped)"
fi

# A GoogleTest suite with WEFT_SIM_TEST: the sound test passes, the racy one fails with a
# reproduction line, and that line reruns exactly the failing seed.
if pkg-config --exists gtest_main; then
  read -r -a gtest_flags <<<"$(pkg-config --cflags --libs weft-sim gtest_main)"
  clang++ "$work/sim_tests.cpp" -o "$work/my_tests" "${gtest_flags[@]}" || fail "sim-gtest: does not compile"
  "$work/my_tests" --gtest_filter=counter.fetch_add_never_loses >"$work/gtest.log" 2>&1 \
    || { cat "$work/gtest.log" >&2; fail "sim-gtest: the sound test failed"; }
  status=0
  (cd "$work" && ./my_tests --gtest_filter=counter.split_increment_loses) >"$work/gtest.log" 2>&1 || status=$?
  line=$(sed -n 's/^reproduce: //p' "$work/gtest.log" | head -n1)
  [ "$status" = 1 ] && [[ $line == "WEFT_SIM_SEED="* ]] || { cat "$work/gtest.log" >&2; fail "sim-gtest: no failure with a reproduction"; }
  seed=${line#WEFT_SIM_SEED=}
  seed=${seed%% *}
  status=0
  (cd "$work" && eval "$line") >"$work/gtest-replay.log" 2>&1 || status=$?
  [ "$status" = 1 ] && grep -q "failed at seed $seed (after 1 seeds)" "$work/gtest-replay.log" \
    || { cat "$work/gtest-replay.log" >&2; fail "sim-gtest: '$line' did not rerun seed $seed alone"; }
  echo "consumer: sim-gtest: WEFT_SIM_TEST finds the planted bug; '$line' reruns seed $seed alone"
else
  echo "consumer: GoogleTest has no pkg-config file here; the WEFT_SIM_TEST consumer is not checked (skipped)"
fi

clang++ "${sim_cflags[@]}" "$work/no_scenario.cpp" -o "$work/empty-sim" "${sim_libs[@]}" || fail "sim-empty: does not compile"
status=0
"$work/empty-sim" list >"$work/empty.log" 2>&1 || status=$?
[ "$status" = 4 ] && grep -q "registers no scenario" "$work/empty.log" \
  || { cat "$work/empty.log" >&2; fail "sim-empty: a binary without scenarios did not refuse (status $status)"; }
echo "consumer: sim-empty: a binary without scenarios refuses: $(head -n1 "$work/empty.log")"

if command -v g++ >/dev/null && [ "$(g++ -dumpversion | cut -d. -f1)" -lt 13 ]; then
  if g++ "${cflags[@]}" -c "$src" -o "$out/gxx.o" 2>"$out/gxx.log"; then
    fail "g++ $(g++ -dumpversion) compiled weft's headers; they must refuse it"
  fi
  first=$(grep -m1 "error" "$out/gxx.log" || true)
  [[ $first == *"weft refuses g++ < 13"* ]] || { cat "$out/gxx.log" >&2; fail "g++: the first error is not weft's refusal"; }
  echo "consumer: g++ $(g++ -dumpversion): refused by weft/compiler_support.hpp, first error: ${first##*error: }"
  g++ -std=c++20 "$root/tools/probes/coroutine_temporaries.cpp" -o "$out/probe-gxx"
  if "$out/probe-gxx" >"$out/probe-gxx.log"; then fail "the coroutine probe passes g++ $(g++ -dumpversion)"; fi
  echo "consumer: g++ $(g++ -dumpversion): the configure probe reports the defect ($(head -n1 "$out/probe-gxx.log"))"
else
  echo "consumer: g++ < 13 not installed; its refusal is not checked (skipped)"
fi
