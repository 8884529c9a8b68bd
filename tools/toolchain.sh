# tools/toolchain.sh — sourced by the build scripts: picks the compiler weft builds with.
#
# clang by default: g++ 12, Debian 12's g++, destroys co_await temporaries twice, and weft refuses it
# (docs/decisions.md, "Compilers"). CC/CXX from the environment win. ccache wraps the compiler
# where it is installed, so rebuilding the same sources in several build dirs costs one compile.
: "${CXX:=clang++}"
: "${CC:=clang}"
if command -v ccache >/dev/null 2>&1 && [[ $CXX != ccache* ]]; then
  CXX="ccache $CXX"
  CC="ccache $CC"
fi
export CC CXX
