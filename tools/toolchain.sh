# tools/toolchain.sh — sourced by the build scripts: picks the compiler weft builds with.
#
# clang by default: g++ 12, Debian 12's g++, destroys co_await temporaries twice, and weft refuses it
# (docs/decisions.md, "Compilers"). CC/CXX from the environment win. ccache wraps the compiler
# where it is installed, so a compile repeated with the same flags in another build dir is free;
# paths are hashed relative to the checkout, so a fresh clone reuses the cache too.
: "${CXX:=clang++}"
: "${CC:=clang}"
if command -v ccache >/dev/null 2>&1 && [[ $CXX != ccache* ]]; then
  CXX="ccache $CXX"
  CC="ccache $CC"
  CCACHE_BASEDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  export CCACHE_BASEDIR CCACHE_NOHASHDIR=true
fi
export CC CXX
