#!/usr/bin/env bash
# dist-check.sh — the release tarball is complete and builds: `make dist`
# in build folder BUILDDIR, then
#  1. every file git tracks (but .ci/ and .gitignore) is in the tarball;
#  2. from a clean unpack: ./configure --enable-werror && make, then
#     `make check` on a few suites that need the files a tarball must
#     carry (the Tcl harness, the amalgamation generator and its tests,
#     a Check suite), and `make amalgamation`.
# A shorter `make distcheck` (which runs every suite, for minutes).
#
# Usage: tool/ci/dist-check.sh [BUILDDIR]   (default: build)
# Exit status: 0 passed, 1 failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
top=$(pwd)
build=$(cd "${1:-build}" && pwd) || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -gt 2 ] && jobs=2

make -C "$build" dist >"$build/dist.out" 2>&1 || { tail -20 "$build/dist.out"; echo "FAIL: make dist"; exit 1; }
tarball=$(ls -t "$build"/colvec-*.tar.gz | head -1)
echo "made $(basename "$tarball") ($(du -k "$tarball" | cut -f1) KB)"
name=$(basename "$tarball" .tar.gz)
work=$(mktemp -d "${TMPDIR:-/tmp}/colvec-dist.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work" || { echo "FAIL: unpacking"; exit 1; }

fail=0
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
  missing=$(git -C "$top" ls-files | grep -v '^\.ci/\|^\.gitignore$' |
    while read -r f; do [ -e "$work/$name/$f" ] || echo "$f"; done)
  if [ -n "$missing" ]; then
    echo "FAIL: files missing from the tarball (add them to EXTRA_DIST):"
    echo "$missing" | sed 's/^/  /'
    fail=1
  else
    echo "ok: every tracked file is in the tarball"
  fi
fi

cd "$work/$name" || exit 1
if ! ./configure --enable-werror >configure.out 2>&1; then
  tail -20 configure.out; echo "FAIL: ./configure from the tarball"; exit 1
fi
if ! make -j"$jobs" >make.out 2>&1; then
  tail -30 make.out; echo "FAIL: make from the tarball"; exit 1
fi
echo "ok: ./configure --enable-werror && make"
tests="test/sql/load1.test test/sql/knn1.test test/sql/amalg1.test test/port/symbols.sh test/port/storage_sql.sh"
grep -q '^HAVE_CHECK_TRUE *= *$' Makefile && tests="$tests test/unit/check_distance"
if make -j"$jobs" check TESTS="$tests" >check.out 2>&1; then
  grep -E '^(PASS|SKIP):' check.out
  echo "ok: make check ($tests)"
else
  grep -E '^(PASS|FAIL|SKIP|ERROR):' check.out; tail -20 test-suite.log
  echo "FAIL: make check from the tarball"; fail=1
fi
if make amalgamation >amalg.out 2>&1 && [ -s colvec.c ] && [ -s colvec.h ]; then
  echo "ok: make amalgamation"
else
  tail -10 amalg.out; echo "FAIL: make amalgamation from the tarball"; fail=1
fi
exit $fail
