#!/usr/bin/env bash
# Installs the symtrace build in $1 into a temporary directory, then configures, builds and
# runs the consumer project in $2 against that installation, found through pkg-config: what a
# user's project does after `meson install`.
set -euo pipefail
builddir=$1
source=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

meson install -C "$builddir" --no-rebuild --destdir "$tmp/root" --quiet
option() {  # the value of a meson option of the symtrace build
  meson introspect "$builddir" --buildoptions |
    python3 -c "import json, sys; print(next(o['value'] for o in json.load(sys.stdin) if o['name'] == '$1'))"
}
prefix=$(option prefix)
libdir=$(option libdir)
[[ $libdir == /* ]] || libdir="$prefix/$libdir"
export PKG_CONFIG_PATH="$tmp/root$libdir/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$tmp/root"   # the .pc file names the final prefix
pkg-config --exists symtrace ||
  { echo "build_and_run.sh: pkg-config cannot find symtrace.pc under $PKG_CONFIG_PATH: did the install put it elsewhere?"; exit 1; }
echo "pkg-config symtrace: $(pkg-config --cflags --libs symtrace)"

# A sanitized symtrace needs a sanitized program.
sanitize=$(option b_sanitize)
setup=(meson setup "$tmp/build" "$source")
[[ $sanitize == none ]] || setup+=("-Db_sanitize=$sanitize" -Db_lundef=false)
"${setup[@]}" > "$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; exit 1; }
ninja -C "$tmp/build" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
LD_LIBRARY_PATH="$tmp/root$libdir" "$tmp/build/consumer"
