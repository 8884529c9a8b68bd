#!/usr/bin/env bash
# tools/check.sh — the whole test suite: installs what is missing (as root, with apt), builds every
# flavor and sanitizer build, runs every suite, and stops at the first failure. Each stage prints
# its wall time. Usage: ./tools/check.sh   (from anywhere; build dirs go under ./build-check/)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out="$root/build-check"
jobs=${WEFT_JOBS:-$(nproc)}

./tools/install-deps.sh

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

build_and_test() {  # build_and_test DIR [meson options...]
  local dir=$1; shift
  configure "$dir" "$@"
  ninja -C "$dir" -j "$jobs"
  meson test -C "$dir" --print-errorlogs --num-processes "$jobs"
}

# 1. real flavor, release-ish build with assertions on.
stage "real: unit tests" build_and_test "$out/real"
# 2. ThreadSanitizer (real flavor only: fiber stack switching without sanitizer annotations
#    confuses TSan and ASan; the sim flavor is covered by stage 1).
stage "real: TSan" env TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  bash -c "$(declare -f configure build_and_test); jobs=$jobs; build_and_test '$out/tsan' -Dflavors=real -Db_sanitize=thread -Dbuildtype=debugoptimized -Dexamples=true"
# 3. AddressSanitizer + UndefinedBehaviorSanitizer.
stage "real: ASan+UBSan" env ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
  bash -c "$(declare -f configure build_and_test); jobs=$jobs; build_and_test '$out/asan' -Dflavors=real -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug"

echo "check: all stages passed"
