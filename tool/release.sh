#!/usr/bin/env bash
# release.sh — builds everything a release ships, from one source tree,
# into BUILDDIR/dist/release/, tests each binary where it can run here, and
# writes SHA256SUMS (`make release` runs it):
#   colvec-VERSION-linux-x86_64.so     the tested native build (BUILDDIR's
#                                      colvec.so: portable, SIMD kernels
#                                      chosen at run time, no -march=native)
#   colvec-VERSION-linux-aarch64.so    the cross build tool/ci/cross-check.sh
#                                      tests (BUILDDIR/cross-aarch64)
#   colvec-VERSION-windows-x86_64.dll  the amalgamation compiled by mingw-w64
#   colvec-VERSION-amalgamation.tar.gz colvec.c + colvec.h
#   colvec-VERSION.tar.gz              the source tarball (make dist)
#   colvec-VERSION-py3-none-*.whl      a Python wheel per binary
#   npm/colvec-VERSION.tgz and npm/colvec-PLATFORM-VERSION.tgz
#   SHA256SUMS                         of every file above
# Each binary runs test/client/pkg_load.c (loaded with sqlite3_load_extension, a
# KNN session over indexed segments): natively, under qemu-aarch64, and
# under wine. The Linux binaries' newest imported glibc symbol version is
# printed (the oldest glibc they run on; the wheels' tags carry it).
#
# Usage: tool/release.sh [-C BUILDDIR]   (default build/, configured)
# Environment: CI=true makes a missing cross compiler, qemu or wine a
# failure; elsewhere the run is skipped (exit 77).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
builddir=$top/build
if [ "${1:-}" = -C ]; then builddir=$(cd "$2" && pwd) || exit 1; fi
prog=release
hint="tool/install-deps.sh --cross=aarch64 mingw-w64 wine64"
. "$here/lib.sh"

for t in aarch64-linux-gnu-gcc qemu-aarch64 x86_64-w64-mingw32-gcc; do
  command -v "$t" >/dev/null 2>&1 || missing "$t not found"
done
[ -e /usr/lib/aarch64-linux-gnu/libsqlite3.so ] || missing "libsqlite3-dev:arm64 not installed"
version=$("$top/tool/version.sh" "$top") || exit 1
out=$builddir/dist/release
rm -rf "$out" && mkdir -p "$out/npm" || exit 1
work=$builddir/release-work
mkdir -p "$work" || exit 1
fail=0
# Records a failed step and says why.
failed() { say "FAILED: $*"; fail=1; }

# Native: the build folder's own (tested) binary, the amalgamation, the
# source tarball.
make -C "$builddir" -s all amalgamation >"$work/make.out" 2>&1 ||
  { tail -20 "$work/make.out"; say "build failed"; exit 1; }
cp "$builddir/colvec.so" "$out/colvec-$version-linux-x86_64.so"
mkdir -p "$work/colvec-$version-amalgamation"
cp "$builddir/colvec.c" "$builddir/colvec.h" "$work/colvec-$version-amalgamation/"
tar -czf "$out/colvec-$version-amalgamation.tar.gz" -C "$work" \
  "colvec-$version-amalgamation"
make -C "$builddir" -s dist >"$work/dist.out" 2>&1 ||
  { tail -20 "$work/dist.out"; say "make dist failed"; exit 1; }
cp "$builddir/colvec-$version.tar.gz" "$out/"

# aarch64: the autotools cross build, as tool/ci/cross-check.sh makes it.
cross=$builddir/cross-aarch64
mkdir -p "$cross"
if [ ! -f "$cross/Makefile" ] || [ "$top/configure" -nt "$cross/Makefile" ]; then
  (cd "$cross" && PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig \
    PKG_CONFIG_PATH= TCLSH=no "$top/configure" --host=aarch64-linux-gnu \
    --build="$(uname -m)-linux-gnu" CC=aarch64-linux-gnu-gcc CXX=false \
    --enable-werror >configure.out 2>&1) ||
    { tail -20 "$cross/configure.out"; say "aarch64 configure failed"; exit 1; }
fi
make -C "$cross" -j2 colvec.la all-local >"$work/make-aarch64.out" 2>&1 ||
  { tail -20 "$work/make-aarch64.out"; say "aarch64 build failed"; exit 1; }
cp "$cross/colvec.so" "$out/colvec-$version-linux-aarch64.so"

# Windows x64: the amalgamation as a DLL (exports sqlite3_colvec_init only;
# libgcc linked in, so it needs nothing but the system's DLLs).
sqlite_source "$work/sqlite"
x86_64-w64-mingw32-gcc -std=c99 -O2 -Wall -Wextra -Werror -shared -static-libgcc \
  -I"$work/sqlite" -o "$out/colvec-$version-windows-x86_64.dll" "$builddir/colvec.c" ||
  { say "the Windows DLL did not build"; exit 1; }

# Tests: test/client/pkg_load.c on each binary, where it runs.
cc -O1 -Wall -Wextra -Werror -o "$work/pkg_load" "$top/test/client/pkg_load.c" -lsqlite3 ||
  { say "pkg_load did not build"; exit 1; }
"$work/pkg_load" "$out/colvec-$version-linux-x86_64.so" "$version" >"$work/x86_64.log" 2>&1 ||
  { cat "$work/x86_64.log"; failed "the x86-64 binary"; }
echo "$(tail -1 "$work/x86_64.log"): linux-x86_64 (native)"
aarch64-linux-gnu-gcc -O1 -Wall -Wextra -Werror -I"$work/sqlite" \
  -o "$work/pkg_load-aarch64" "$top/test/client/pkg_load.c" \
  -L/usr/lib/aarch64-linux-gnu -lsqlite3 || { say "pkg_load for aarch64 did not build"; exit 1; }
qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/lib/aarch64-linux-gnu \
  "$work/pkg_load-aarch64" "$out/colvec-$version-linux-aarch64.so" "$version" \
  >"$work/aarch64.log" 2>&1 || { cat "$work/aarch64.log"; failed "the aarch64 binary"; }
echo "$(tail -1 "$work/aarch64.log"): linux-aarch64 (qemu-aarch64)"
if [ ! -f "$work/obj-sqlite3.o" ] || [ "$work/sqlite/sqlite3.c" -nt "$work/obj-sqlite3.o" ]; then
  x86_64-w64-mingw32-gcc -O1 -w -DSQLITE_THREADSAFE=1 -c "$work/sqlite/sqlite3.c" \
    -o "$work/obj-sqlite3.o" || { say "sqlite3.c did not build for Windows"; exit 1; }
fi
x86_64-w64-mingw32-gcc -O1 -Wall -Wextra -Werror -I"$work/sqlite" -static \
  -o "$work/pkg_load.exe" "$top/test/client/pkg_load.c" "$work/obj-sqlite3.o" ||
  { say "pkg_load.exe did not build"; exit 1; }
wine_setup "$builddir/windows/wineprefix"
(cd "$work" && "$wine" "$work/pkg_load.exe" \
  "$out/colvec-$version-windows-x86_64.dll" "$version") >"$work/windows.log" 2>&1 ||
  { cat "$work/windows.log"; failed "the Windows binary"; }
echo "$(tail -1 "$work/windows.log" | tr -d '\r'): windows-x86_64 (wine)"

# The oldest glibc each Linux binary runs on: its newest GLIBC_ symbol version.
for a in x86_64 aarch64; do
  g=$(readelf -V -W "$out/colvec-$version-linux-$a.so" | grep -o 'GLIBC_[0-9][0-9.]*' |
    sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n | tail -1)
  echo "linux-$a: needs glibc $g or later"
done

# Packages of those binaries.
for a in x86_64 aarch64; do
  "$top/tool/pkg/mkwheel.sh" "$out/colvec-$version-linux-$a.so" "$out" >/dev/null ||
    failed "the $a wheel"
done
"$top/tool/pkg/mkwheel.sh" "$out/colvec-$version-windows-x86_64.dll" "$out" >/dev/null ||
  failed "the Windows wheel"
"$top/tool/pkg/mknpm.sh" "$out/npm" \
  "linux-x64=$out/colvec-$version-linux-x86_64.so" \
  "linux-arm64=$out/colvec-$version-linux-aarch64.so" \
  "windows-x64=$out/colvec-$version-windows-x86_64.dll" >/dev/null || failed "the npm packages"

(cd "$out" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort |
  xargs sha256sum >SHA256SUMS) || failed "SHA256SUMS"
echo "release $version in $out:"
(cd "$out" && find . -type f | sed 's|^\./|  |' | sort)
[ $fail -eq 0 ]
