#!/usr/bin/env bash
# tools/bench/compare.sh — weft side by side with tokio, smol's async-executor and Boost.Asio.
#
#   tools/bench/compare.sh [--rounds N] [--scale F] [--no-install] [--build-dir DIR] [--strict]
#
# 1. installs what it needs from Debian (as root; otherwise it only reports what is missing);
# 2. builds weft (release, `real` flavor, plus the `sim` flavor for the simulator's throughput) in build-bench/, the Rust peers offline from Debian's
#    packaged crates (tools/bench/peers/{tokio,smol}/.cargo/config.toml), the Asio peer with g++
#    (weft itself with the compiler tools/toolchain.sh picks);
# 3. runs every scenario for every runtime interleaved — per round, per scenario, each runtime in
#    turn, the order rotated each round — so slow drifts of a shared machine hit all alike;
# 4. prints the machine, then a table of medians and weft/peer ratios (summarize.py).
# Bounded: each program run has a 120 s timeout and no new round starts when the previous one
# would not fit in the 15-minute budget (builds included). Raw lines and the table are kept in
# build-bench/compare/ (or DIR/compare/ with --build-dir).
# --strict (the test suite's smoke run, tools/check.sh): exit non-zero when any program fails, times
# out, or a runtime's lines lack a figure or are malformed (check_output.py's shape rules), instead
# of reporting what there is.
set -euo pipefail

# 9 rounds: one figure (cpu_2w) loses ~25 % in about one run of ten of every runtime, when the
# kernel puts both worker threads on one CPU for a few ticks (docs/benchmarks.md); a median over 9
# rounds holds against up to 4 such runs.
rounds=9
scale=1
install=1
strict=0
build_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --no-install) install=0; shift ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --strict) strict=1; shift ;;
    *) echo "usage: $0 [--rounds N] [--scale F] [--no-install] [--build-dir DIR] [--strict]" >&2; exit 2 ;;
  esac
done

budget_s=870  # 14.5 minutes
start_s=$(date +%s)
root=$(cd "$(dirname "$0")/../.." && pwd)
bench="$root/tools/bench"
build="${build_dir:-$root/build-bench}"
mkdir -p "$build"
build=$(cd "$build" && pwd)
out="$build/compare"
log() { printf 'compare: [%4ds] %s\n' "$(( $(date +%s) - start_s ))" "$*" >&2; }

# ---- 1. dependencies -------------------------------------------------------------------------
# weft's own build dependencies come from the one list the test suite uses (tools/install-deps.sh),
# so that the `sim` flavor built here for weft-bench-sim (Boost.Fiber, CLI11) builds on a fresh
# machine without a second list to keep in step; plus the peers' packages.
peer_packages=(python3 libboost-dev cargo rustc
               librust-tokio-dev librust-async-executor-dev librust-async-io-dev librust-async-channel-dev
               librust-futures-lite-dev)
if [ "$install" = 1 ]; then
  log "checking packages (tools/install-deps.sh)"
  "$root/tools/install-deps.sh" "${peer_packages[@]}" >&2  # stdout is the table
fi

. "$root/tools/toolchain.sh"

# ---- 2. builds -------------------------------------------------------------------------------
log "building weft (release, real flavor)"
meson_opts=(--buildtype=release -Dflavors=real,sim -Dtests=false -Dexamples=false)
if [ -d "$build/meson-info" ]; then
  meson setup --reconfigure "$build" "$root" "${meson_opts[@]}" >/dev/null
else
  meson setup "$build" "$root" "${meson_opts[@]}" >/dev/null
fi
ninja -C "$build" -j2 tools/bench/weft-bench-scenarios tools/bench/weft-bench-sim >/dev/null

log "building the tokio and async-executor peers (cargo, offline, Debian's crates)"
for peer in tokio smol; do
  (cd "$bench/peers/$peer" && cargo build --release --offline -j 2 --quiet)
done

log "building the Asio peer"
mkdir -p "$build/peers"
g++ -std=c++20 -O3 -DNDEBUG -pthread "$bench/peers/asio/asio_scenarios.cpp" -o "$build/peers/weft-bench-asio"

declare -A program=(
  [weft]="$build/tools/bench/weft-bench-scenarios"
  [tokio]="$bench/peers/tokio/target/release/weft-bench-tokio"
  [async-executor]="$bench/peers/smol/target/release/weft-bench-smol"
  [asio]="$build/peers/weft-bench-asio"
)
runtimes=(weft tokio async-executor asio)
scenarios=(spawn_join_1 spawn_join_1024 yield_storm ping_pong timers_100k cpu_scaling task_memory)

# ---- 3. interleaved runs ---------------------------------------------------------------------
mkdir -p "$out"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw="$out/raw-$stamp.txt"
: >"$raw"
round_s=0
failures=0
for ((r = 0; r < rounds; r++)); do
  now=$(( $(date +%s) - start_s ))
  if [ "$r" -gt 0 ] && [ $(( now + round_s + round_s / 4 )) -gt "$budget_s" ]; then
    log "stopping after $r rounds: another would exceed the ${budget_s}s budget"
    break
  fi
  round_start=$(date +%s)
  log "round $((r + 1))/$rounds"
  for s in "${scenarios[@]}"; do
    for ((k = 0; k < ${#runtimes[@]}; k++)); do
      rt=${runtimes[$(( (k + r) % ${#runtimes[@]} ))]}
      if ! timeout 120 "${program[$rt]}" --scenario "$s" --scale "$scale" >>"$raw" 2>>"$out/stderr-$stamp.txt"; then
        log "$rt $s failed or timed out (see $out/stderr-$stamp.txt)"
        failures=$((failures + 1))
      fi
    done
  done
  # The simulator's throughput: weft only, no peer has one; 2,000 seeds of
  # shutdown_race at 4 workers x 100 tasks, one job.
  if ! timeout 120 "$build/tools/bench/weft-bench-sim" --seeds 2000 >>"$raw" 2>>"$out/stderr-$stamp.txt"; then
    log "weft-bench-sim failed or timed out (see $out/stderr-$stamp.txt)"
    failures=$((failures + 1))
  fi
  round_s=$(( $(date +%s) - round_start ))
done

# ---- 4. report -------------------------------------------------------------------------------
{
  echo "## Machine"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- nproc: $(nproc); CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  echo "- kernel: $(uname -sr); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- compilers: weft $(${CXX#ccache } --version | head -1), Asio peer $(g++ --version | head -1); $(rustc --version); $(cargo --version)"
  echo "- crates: tokio 1.24.2, async-executor 1.5.0, async-io 1.11.0 (Debian); Boost $(sed -n 's/^#define BOOST_LIB_VERSION "\(.*\)"/\1/p' /usr/include/boost/version.hpp)"
  echo "- scale: $scale; wall time of this comparison: $(( $(date +%s) - start_s )) s"
  echo
  echo "## Results"
  echo
  python3 "$bench/summarize.py" "$raw"
} | tee "$out/table-$stamp.md"
log "raw lines: $raw"

if [ "$strict" = 1 ]; then
  if [ "$failures" -ne 0 ]; then
    log "strict: $failures program runs failed or timed out"
    exit 1
  fi
  python3 "$bench/check_output.py" --raw "$raw" --runtimes "${runtimes[*]}" --sim-runtime weft-sim
  log "strict: every runtime printed every figure, well formed"
fi
