#!/usr/bin/env bash
# check-windows.sh — `make check-windows`: cross-compiles colvec for 64-bit
# Windows with mingw-w64 and runs its tests under wine.
#
# Usage: tool/ci/check-windows.sh [-C BUILDDIR] [PROGRAM ...]
#        (PROGRAM: run only these, e.g. sql_session check_segment)
#
# What it builds, into BUILDDIR/windows/ (x86_64-w64-mingw32-gcc, -Werror,
# statically linked .exe files):
#   - the SQLite-free Check suites (check_distance, check_vector,
#     check_plan, check_topk, check_segment, check_quant, check_hnsw,
#     check_limits) against test/port/wincheck/check.h, a header that implements
#     the part of Check's API they use (Debian has no Check for mingw);
#   - check_filter, check_ioerr (with test/lib/faultlib.c; its fault points run
#     one after another in one process, as Windows has no fork()) and
#     test/sql/sql_session.c with SQLite's amalgamation and the colvec module
#     compiled in (-DSQLITE_CORE). The amalgamation is the one of
#     tool/ci/sqlite-matrix.sh's "newest" leg (its npm package, cached in
#     ~/.cache/colvec-sqlite/npm), unpacked into BUILDDIR/windows/sqlite.
# Each program then runs under wine (WINEDEBUG=-all, a private WINEPREFIX in
# BUILDDIR/windows/wineprefix, created on the first run). Check suites that
# need a process per case or a second process (check_oom, check_interrupt,
# check_powerloss) and the Tcl suites are not run on Windows.
#
# Writes BUILDDIR/test-suite-windows.log (automake's summary lines) and
# prints one PASS/FAIL line per program. Exit status 0 when all passed, 1
# on a failure, 77 when mingw-w64, wine or the amalgamation is missing
# (1 under CI=true: tool/install-deps.sh installs them).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=$top/build
only=()
while [ $# -gt 0 ]; do
  case $1 in
    -C) builddir=$(cd "$2" && pwd) || exit 1; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
    -*) echo "check-windows: unknown option $1" >&2; exit 2 ;;
    *) only+=("$1"); shift ;;
  esac
done
out=$builddir/windows
log=$builddir/test-suite-windows.log
cc=${MINGW_CC:-x86_64-w64-mingw32-gcc}

prog=check-windows
hint="tool/install-deps.sh mingw-w64 wine64"
. "$here/../lib.sh"

command -v "$cc" >/dev/null 2>&1 || missing "$cc not found (Debian package mingw-w64)"
sqlitesrc=$out/sqlite
sqlite_source "$sqlitesrc"

# The sources, from the Makefile (what the Linux build compiles).
build_sources "$builddir"

mkdir -p "$out/obj" "$out/tmp" || exit 1
cflags="-std=c99 -O2 -Wall -Wextra -Werror -I$top/include -I$top/ext"
t0=$(date +%s)

# Compiles C file $1 to object $2 with extra flags $3.. when $2 is older.
compile() {
  local src=$1 obj=$2; shift 2
  if object_stale "$src" "$obj"; then
    # shellcheck disable=SC2086
    "$cc" $cflags "$@" -c "$src" -o "$obj" || { say "compiling $src failed"; return 1; }
  fi
}

coreobj=()
for f in $core; do
  case $f in *.c) ;; *) continue ;; esac
  o=$out/obj/$(basename "$f" .c).o
  compile "$top/$f" "$o" || exit 1
  coreobj+=("$o")
done
modobj=()
for f in $module; do
  case $f in *.c) ;; *) continue ;; esac
  o=$out/obj/mod_$(basename "$f" .c).o
  compile "$top/$f" "$o" -DSQLITE_CORE -I"$sqlitesrc" || exit 1
  modobj+=("$o")
done
if [ ! -f "$out/obj/sqlite3.o" ] || [ "$sqlitesrc/sqlite3.c" -nt "$out/obj/sqlite3.o" ]; then
  say "compiling SQLite $(sqlite_header_version "$sqlitesrc/sqlite3.h") for Windows (once)"
  "$cc" -O1 -w -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_MATH_FUNCTIONS \
    -DSQLITE_OMIT_LOAD_EXTENSION -c "$sqlitesrc/sqlite3.c" -o "$out/obj/sqlite3.o" \
    || { say "compiling sqlite3.c failed"; exit 1; }
fi

progs=()
for t in check_distance check_vector check_plan check_topk check_segment \
         check_quant check_hnsw check_limits; do
  # shellcheck disable=SC2086
  "$cc" $cflags -I"$top/test/port/wincheck" -static -o "$out/$t.exe" \
    "$top/test/unit/$t.c" "${coreobj[@]}" -lm || { say "building $t failed"; exit 1; }
  progs+=("$t")
done
for t in unit/check_filter sql/sql_session fault/check_ioerr; do
  extra=()
  [ "$t" = fault/check_ioerr ] && extra=("$top/test/lib/faultlib.c")
  # shellcheck disable=SC2086
  "$cc" $cflags -I"$top/test/port/wincheck" -I"$sqlitesrc" -DSQLITE_CORE -static \
    -o "$out/${t#*/}.exe" "$top/test/$t.c" "${extra[@]}" "${modobj[@]}" \
    "${coreobj[@]}" "$out/obj/sqlite3.o" -lm -lpthread ||
    { say "building $t failed"; exit 1; }
  progs+=("${t#*/}")
done
t1=$(date +%s)
echo "check-windows: built ${#progs[@]} programs in $((t1 - t0)) s"

t1=$(date +%s)
wine_setup "$out/wineprefix"
t2=$(date +%s)
[ $((t2 - t1)) -lt 5 ] || echo "check-windows: wine prefix ready in $((t2 - t1)) s"
t1=$t2

[ ${#only[@]} -eq 0 ] || progs=("${only[@]}")
pass=0; fail=0
for t in "${progs[@]}"; do
  ts=$(date +%s)
  (cd "$out/tmp" && "$wine" "$out/$t.exe") >"$out/$t.log" 2>&1
  rc=$?
  te=$(date +%s)
  if [ $rc -eq 0 ]; then
    echo "PASS: windows/$t ($((te - ts)) s)"; pass=$((pass + 1))
  else
    echo "FAIL: windows/$t (exit $rc)"; fail=$((fail + 1))
    tail -30 "$out/$t.log"
  fi
done
wineserver_bin=$(dirname "$wine")/wineserver
[ -x "$wineserver_bin" ] && "$wineserver_bin" -w 2>/dev/null
echo "check-windows: ran ${#progs[@]} programs under wine in $(($(date +%s) - t1)) s"

suite_log "$log" "$pass" "$fail"
[ $fail -eq 0 ]
