#!/usr/bin/env bash
# tools/consumer_check.sh OUT_DIR — builds against weft the way a user does: installs the real
# flavor into OUT_DIR/prefix, then compiles tests/consumer/temporary_leaf_consumer.cpp with nothing
# but `pkg-config --cflags --libs weft` and runs it, with clang and with clang + ASan. With a
# g++ older than 13 the same compile must stop at weft's one-line refusal, and the configure
# probe must report the co_await defect for that g++ (so the probe is shown able to fail).
# Prints one "consumer: ..." line per check; exits non-zero at the first failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: consumer_check.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
. "$root/tools/toolchain.sh"

fail() { echo "consumer: FAILED: $*" >&2; exit 1; }

build="$out/build" prefix="$out/prefix"
if [ -f "$build/build.ninja" ]; then
  meson setup --reconfigure "$build" "$root" --prefix "$prefix" -Dflavors=real -Dtests=false -Dexamples=false >/dev/null
else
  meson setup "$build" "$root" --prefix "$prefix" -Dflavors=real -Dtests=false -Dexamples=false >/dev/null
fi
ninja -C "$build" >/dev/null
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
