#!/usr/bin/env bash
# tools/bench/compare.sh — weft side by side with tokio, smol's async-executor and Boost.Asio
# (the I/O scenarios also with a raw liburing server and a plain pread loop, the machine's own).
#
#   tools/bench/compare.sh [--rounds N] [--scale F] [--no-install] [--build-dir DIR] [--strict] [--only pool]
#                          [--weft-build DIR]
#
# 1. installs what it needs from Debian (as root; otherwise it only reports what is missing);
# 2. builds weft (release, `real` flavor, plus the `sim` flavor for the simulator's throughput) in build-bench/, the Rust peers offline from Debian's
#    packaged crates (tools/bench/peers/{tokio,smol}/.cargo/config.toml), the Asio peer, the raw
#    liburing echo server and the pread loop with g++ (weft itself with the compiler
#    tools/toolchain.sh picks);
# 3. runs every scenario for every runtime interleaved — per round, per scenario, each runtime in
#    turn, the order rotated each round — so slow drifts of a shared machine hit all alike; the
#    I/O scenarios the same way: tcp_echo starts each echo server on a free port, drives it with
#    the one load client (weft-echo-client) and stops it; file_read reads one page-cached file;
#    The stealing pool's scenarios run for weft, tokio and async-executor only (Asio has no such pool).
# 4. prints the machine, then a table of medians and weft/peer ratios (summarize.py).
# --only pool: only the stealing pool's scenarios (weft, tokio, async-executor), nothing else.
# --weft-build DIR: weft's programs come from the configured meson build DIR, whatever its build
# type, instead of a release build of compare.sh's own (the test suite's smoke run uses its main
# build, which has them compiled already; figures from such a build are not weft's release figures).
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
weft_build=""
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --no-install) install=0; shift ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --weft-build) weft_build="$2"; shift 2 ;;
    --strict) strict=1; shift ;;
    --only)
      only="$2"
      if [ "$only" != pool ]; then echo "$0: --only: '$only' is not a known selection (accepted: pool)" >&2; exit 2; fi
      shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--scale F] [--no-install] [--build-dir DIR] [--strict] [--only pool] [--weft-build DIR]" >&2; exit 2 ;;
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
if [ -n "$weft_build" ]; then
  [ -f "$weft_build/build.ninja" ] || { echo "$0: --weft-build $weft_build: not a configured meson build" >&2; exit 2; }
  wb=$(cd "$weft_build" && pwd)
else
  wb="$build"
fi
log() { printf 'compare: [%4ds] %s\n' "$(( $(date +%s) - start_s ))" "$*" >&2; }

# ---- 1. dependencies -------------------------------------------------------------------------
# weft's own build dependencies come from the one list the test suite uses (tools/install-deps.sh),
# so that the `sim` flavor built here for weft-bench-sim (Boost.Fiber, CLI11) builds on a fresh
# machine without a second list to keep in step; plus the peers' packages.
peer_packages=(python3 libboost-dev liburing-dev cargo rustc
               librust-tokio-dev librust-async-executor-dev librust-async-io-dev librust-async-channel-dev
               librust-futures-lite-dev)
if [ "$install" = 1 ]; then
  log "checking packages (tools/install-deps.sh)"
  "$root/tools/install-deps.sh" "${peer_packages[@]}" >&2  # stdout is the table
fi

. "$root/tools/toolchain.sh"

# ---- 2. builds -------------------------------------------------------------------------------
if [ -n "$weft_build" ]; then
  log "building weft's programs in $wb"
else
  log "building weft (release, real flavor)"
  meson_opts=(--buildtype=release -Dflavors=real,sim -Dtests=false -Dexamples=false)
  if [ -d "$build/meson-info" ]; then
    meson setup --reconfigure "$build" "$root" "${meson_opts[@]}" >/dev/null
  else
    meson setup "$build" "$root" "${meson_opts[@]}" >/dev/null
  fi
fi
# weft's I/O programs exist once the runtime has its socket and file API (tools/bench/meson.build);
# until then tcp_echo and file_read run without weft.
weft_io_targets=()
for t in tools/bench/weft-echo-server tools/bench/weft-bench-file-read; do
  if ninja -C "$wb" -t targets all 2>/dev/null | grep -q "^$t:"; then weft_io_targets+=("$t"); fi
done
if [ "$only" = pool ]; then
  ninja -C "$wb" -j2 tools/bench/weft-bench-scenarios >/dev/null
else
  ninja -C "$wb" -j2 tools/bench/weft-bench-scenarios tools/bench/weft-bench-sim tools/bench/weft-echo-client \
    "${weft_io_targets[@]}" >/dev/null
fi

log "building the tokio and async-executor peers (cargo, offline, Debian's crates)"
for peer in tokio smol; do
  (cd "$bench/peers/$peer" && cargo build --release --offline -j 2 --quiet)
done

if [ "$only" != pool ]; then
  log "building the Asio peer"
  mkdir -p "$build/peers"
  g++ -std=c++20 -O3 -DNDEBUG -pthread "$bench/peers/asio/asio_scenarios.cpp" -o "$build/peers/weft-bench-asio"
  g++ -std=c++20 -O3 -DNDEBUG -pthread "$bench/peers/asio/asio_echo.cpp" -o "$build/peers/weft-echo-asio"
  log "building the I/O references (raw liburing echo server, pread loop)"
  g++ -std=c++20 -O3 -DNDEBUG -pthread "$bench/peers/liburing/uring_echo.cpp" -o "$build/peers/weft-echo-liburing" -luring
  g++ -std=c++20 -O3 -DNDEBUG "$bench/peers/pread/pread_file_read.cpp" -o "$build/peers/weft-file-read-pread"
fi

declare -A program=(
  [weft]="$wb/tools/bench/weft-bench-scenarios"
  [tokio]="$bench/peers/tokio/target/release/weft-bench-tokio"
  [async-executor]="$bench/peers/smol/target/release/weft-bench-smol"
  [asio]="$build/peers/weft-bench-asio"
)
runtimes=(weft tokio async-executor asio)
scenarios=(spawn_join_1 spawn_join_1024 yield_storm ping_pong timers_100k timeout_churn cpu_scaling task_memory)
# The stealing pool's scenarios: weft's stealing_pool against tokio's multi-thread runtime and
# async-executor (2 workers each).
pool_runtimes=(weft tokio async-executor)
pool_scenarios=(pool_spawn_join_1024 pool_yield_storm pool_nested_spawn steal_imbalance external_producers
                priority_latency)

# tcp_echo: every server driven by the same client; the loads as figure:connections:bytes.
client="$wb/tools/bench/weft-echo-client"
declare -A echo_server=(
  [weft]="$wb/tools/bench/weft-echo-server"
  [tokio]="$bench/peers/tokio/target/release/weft-echo-tokio"
  [async-executor]="$bench/peers/smol/target/release/weft-echo-smol"
  [asio]="$build/peers/weft-echo-asio"
  [liburing]="$build/peers/weft-echo-liburing"
)
echo_runtimes=(tokio async-executor asio liburing)
echo_loads=(tcp_echo_64:32:64 tcp_echo_4k:256:4096)
echo_threads=2  # server threads, as the scenarios' 2 workers
# 3 s per load and server, scaled like every count; at least 0.05 s, so that even the test suite's
# tiny run has round trips in its window.
echo_seconds=$(python3 -c "import sys; print('%.3f' % max(0.05, 3 * float(sys.argv[1])))" "$scale")
# file_read: a file of 256 MiB (scaled, whole 4 KiB blocks, at least one) read by each reader.
declare -A file_reader=(
  [weft]="$wb/tools/bench/weft-bench-file-read"
  [pread]="$build/peers/weft-file-read-pread"
)
file_runtimes=(pread)
file_bytes=$(python3 -c "import sys; print(max(1, round(256 * 2**20 // 4096 * float(sys.argv[1]))) * 4096)" "$scale")
# weft joins each I/O scenario whose program it has.
if [[ " ${weft_io_targets[*]} " == *" tools/bench/weft-echo-server "* ]]; then
  echo_runtimes=(weft "${echo_runtimes[@]}")
else
  log "weft-echo-server is not built (the runtime has no socket API yet): tcp_echo runs without weft"
fi
if [[ " ${weft_io_targets[*]} " == *" tools/bench/weft-bench-file-read "* ]]; then
  file_runtimes=(weft "${file_runtimes[@]}")
else
  log "weft-bench-file-read is not built (the runtime has no file API yet): file_read runs without weft"
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts echo server $1 on a free port, waits until it answers (10 s at most), runs the client with
# load $2 (figure:connections:bytes), stops the server. Non-zero when any step fails.
run_echo() {
  local rt=$1 figure connections bytes port pid i status=0
  IFS=: read -r figure connections bytes <<<"$2"
  port=$(free_port)
  "${echo_server[$rt]}" --port "$port" --threads "$echo_threads" 2>>"$err" &
  pid=$!
  for ((i = 0; i < 200; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$rt echo server exited before listening" >>"$err"
      wait "$pid" || true
      return 1
    fi
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
  done
  timeout 120 "$client" --port "$port" --server-pid "$pid" --connections "$connections" --size "$bytes" \
    --seconds "$echo_seconds" --runtime "$rt" --figure "$figure" >>"$raw" 2>>"$err" || status=1
  kill "$pid" 2>/dev/null || status=1
  wait "$pid" 2>/dev/null || true  # killed by SIGTERM: status 143
  return "$status"
}

# Runs scenario $1 once for each runtime named after it, the order rotated by the round number $r.
run_scenario() {
  local s=$1 k rt
  shift
  local rts=("$@")
  for ((k = 0; k < ${#rts[@]}; k++)); do
    rt=${rts[$(( (k + r) % ${#rts[@]} ))]}
    if ! timeout 120 "${program[$rt]}" --scenario "$s" --scale "$scale" >>"$raw" 2>>"$err"; then
      log "$rt $s failed or timed out (see $err)"
      failures=$((failures + 1))
    fi
  done
}

# ---- 3. interleaved runs ---------------------------------------------------------------------
mkdir -p "$out"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw="$out/raw-$stamp.txt"
err="$out/stderr-$stamp.txt"
: >"$raw"
file="$out/file_read.bin"
trap 'rm -f "$file"' EXIT
if [ "$only" != pool ]; then
  head -c "$file_bytes" /dev/urandom >"$file"
  cat "$file" >/dev/null  # into the page cache: file_read measures cached reads
fi
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
  for s in "${pool_scenarios[@]}"; do run_scenario "$s" "${pool_runtimes[@]}"; done
  if [ "$only" = pool ]; then
    round_s=$(( $(date +%s) - round_start ))
    continue
  fi
  for s in "${scenarios[@]}"; do run_scenario "$s" "${runtimes[@]}"; done
  for load in "${echo_loads[@]}"; do
    for ((k = 0; k < ${#echo_runtimes[@]}; k++)); do
      rt=${echo_runtimes[$(( (k + r) % ${#echo_runtimes[@]} ))]}
      if ! run_echo "$rt" "$load"; then
        log "$rt tcp_echo ${load%%:*} failed (see $err)"
        failures=$((failures + 1))
      fi
    done
  done
  for ((k = 0; k < ${#file_runtimes[@]}; k++)); do
    rt=${file_runtimes[$(( (k + r) % ${#file_runtimes[@]} ))]}
    if ! timeout 120 "${file_reader[$rt]}" --path "$file" >>"$raw" 2>>"$err"; then
      log "$rt file_read failed or timed out (see $err)"
      failures=$((failures + 1))
    fi
  done
  # The simulator's throughput: weft only, no peer has one; 2,000 seeds of
  # shutdown_race at 4 workers x 100 tasks, one job.
  if ! timeout 120 "$wb/tools/bench/weft-bench-sim" --seeds 2000 >>"$raw" 2>>"$err"; then
    log "weft-bench-sim failed or timed out (see $err)"
    failures=$((failures + 1))
  fi
  # And a simulated world: 2,000 seeds of kv_crash_recovery with 3 hosts.
  if ! timeout 120 "$wb/tools/bench/weft-bench-sim" --world --seeds 2000 >>"$raw" 2>>"$err"; then
    log "weft-bench-sim --world failed or timed out (see $err)"
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
  echo "- crates: tokio 1.24.2, async-executor 1.5.0, async-io 1.11.0 (Debian); Boost $(sed -n 's/^#define BOOST_LIB_VERSION "\(.*\)"/\1/p' /usr/include/boost/version.hpp); liburing $(dpkg-query -W -f='${Version}' liburing-dev 2>/dev/null)"
  echo "- I/O: tcp_echo ${echo_seconds} s per load and server (${echo_threads} server threads), file_read of $file_bytes bytes"
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
  if [ "$only" = pool ]; then
    python3 "$bench/check_output.py" --raw "$raw" --runtimes "" --pool-runtimes "${pool_runtimes[*]}"
  else
    python3 "$bench/check_output.py" --raw "$raw" --runtimes "${runtimes[*]}" --sim-runtime weft-sim \
      --io-runtimes "${echo_runtimes[*]}" --file-runtimes "${file_runtimes[*]}" --pool-runtimes "${pool_runtimes[*]}"
  fi
  log "strict: every runtime printed every figure, well formed"
fi
