#!/usr/bin/env bash
# Installs the symtrace build in $1 into a temporary directory, checks the installed shared
# library (a versioned SONAME, the .so links), then compiles $2 with nothing but
#   g++ consumer.cpp $(pkg-config --cflags --libs symtrace) -o consumer
# and runs it: symtrace.pc must carry every flag a program needs (the C++ standard, fmt's and
# Boost's headers), with no build system in between.
set -euo pipefail
builddir=$1
program=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "compile_with_pkg_config.sh: $*"; exit 1; }

meson install -C "$builddir" --no-rebuild --destdir "$tmp/root" --quiet
option() {  # the value of a meson option of the symtrace build
  meson introspect "$builddir" --buildoptions |
    python3 -c "import json, sys; print(next(o['value'] for o in json.load(sys.stdin) if o['name'] == '$1'))"
}
prefix=$(option prefix)
libdir=$(option libdir)
[[ $libdir == /* ]] || libdir="$prefix/$libdir"
lib="$tmp/root$libdir"

# The library: libsymtrace.so.X.Y.Z with SONAME libsymtrace.so.X, and the two links to it.
soname=$(readelf -d "$lib/libsymtrace.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname =~ ^libsymtrace\.so\.[0-9]+$ ]] ||
  fail "the installed libsymtrace.so has SONAME '${soname:-(none)}', not libsymtrace.so.<version>"
[[ -L "$lib/libsymtrace.so" && -L "$lib/$soname" ]] ||
  fail "$libdir/libsymtrace.so and $libdir/$soname should be symbolic links; the install has: $(ls "$lib" | tr '\n' ' ')"
real=$(readlink -f "$lib/libsymtrace.so")
[[ $(basename "$real") =~ ^$soname\.[0-9]+\.[0-9]+$ && $(readlink -f "$lib/$soname") == "$real" ]] ||
  fail "libsymtrace.so and $soname should both lead to $soname.<minor>.<patch>, not $real"
echo "installed: $(basename "$real"), SONAME $soname"

export PKG_CONFIG_PATH="$lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$tmp/root"   # the .pc file names the final prefix
pkg-config --exists symtrace ||
  fail "pkg-config cannot find symtrace.pc under $PKG_CONFIG_PATH: did the install put it elsewhere?"
flags=$(pkg-config --cflags --libs symtrace)
echo "pkg-config symtrace: $flags"

# A sanitized symtrace needs a sanitized program, as a user's sanitized build would be.
sanitize=$(option b_sanitize)
extra=()
[[ $sanitize == none ]] || extra=("-fsanitize=$sanitize")
# shellcheck disable=SC2086  # the flags are words, as in the one-line build it stands for
g++ "${extra[@]}" "$program" $flags -o "$tmp/consumer" > "$tmp/build.log" 2>&1 ||
  { head -40 "$tmp/build.log"; fail "g++ $(basename "$program") \$(pkg-config --cflags --libs symtrace) failed"; }
LD_LIBRARY_PATH="$lib" "$tmp/consumer"
