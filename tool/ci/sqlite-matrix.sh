#!/usr/bin/env bash
# sqlite-matrix.sh — runs colvec's test suites against several SQLite
# libraries: the one the build was configured with (Debian 12: 3.40.1), the
# oldest SQLite colvec supports and the newest one the npm registry carries.
#
# Usage: tool/ci/sqlite-matrix.sh [-C BUILDDIR] [-j N] [LEG ...]
#        tool/ci/sqlite-matrix.sh --prepare LEG     (build only; prints its folder)
#        tool/ci/sqlite-matrix.sh --list            (the legs and their sources)
#        tool/ci/sqlite-matrix.sh --source LEG DIR  (unpack the leg's sqlite3.c,
#                                                 sqlite3.h into new DIR)
#
# LEG is one of
#   system  the SQLite found at configure time, with Debian's sqlite3 shell:
#           every suite (`make check`), result in BUILDDIR/test-suite.log
#   oldest    SQLite 3.38.2 (sqlite-autoconf-3380200 from npm's sqlite3@5.0.3)
#   previous  SQLite 3.53.2 (bundled by npm's better-sqlite3@12.11.1: what
#             Node programs on better-sqlite3 12 run)
#   newest    SQLite 3.54.1 (bundled by npm's better-sqlite3@13.2.0)
# (default: all four). better-sqlite3 ships no shell.c: those two legs
# compile the shell of sqlite3@6.0.1's sqlite-autoconf-3520000 against
# their own sqlite3.h. The oldest and newest legs run the suites whose
# result depends on the SQLite library (SQLITE_TESTS in Makefile.am: the Tcl
# suites, the shell test, check_filter and check_oom), each in BUILDDIR/
# test-suite-LEG.log. The colvec module is the same build on every leg: it
# calls SQLite only through the sqlite3_api table it is handed at load time.
#
# How a leg reaches its library: the source comes from an npm package
# (`npm pack`), is compiled with the compile-time options Debian's
# libsqlite3 has into LEGDIR/lib/libsqlite3.so.0 and LEGDIR/bin/sqlite3, and
# the tests run with LD_LIBRARY_PATH=LEGDIR/lib and PATH=LEGDIR/bin first:
# Debian's tclsh + libsqlite3-tcl and the check programs link
# libsqlite3.so.0 dynamically. COLVEC_SQLITE_VERSION tells the tests which
# version must be loaded (test/sql/tester.tcl and test/sql/matrix1.test fail when
# another one is).
#
# Environment:
#   COLVEC_SQLITE_CACHE  where fetched packages and built libraries are kept
#                        (default ${XDG_CACHE_HOME:-$HOME/.cache}/colvec-sqlite);
#                        a leg is rebuilt only when its recipe changes
#   CI                   "true": a leg whose SQLite cannot be fetched or
#                        built FAILS (exit 1); otherwise it is skipped (77)
#   CC, MAKE             compiler and make to use
#
#   CK_TIMEOUT_MULTIPLIER  Check's per-test time limit factor (default 4
#                        here: legs run back to back on a busy machine)
#
# Exit status: 0 when every leg passed, 77 when a leg was skipped and none
# failed, 1 otherwise.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
prog=sqlite-matrix hint="tool/install-deps.sh"
. "$here/../lib.sh" # ci_strict
builddir=$top/build
jobs=""
cache=${COLVEC_SQLITE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/colvec-sqlite}
cc=${CC:-cc}
make=${MAKE:-make}

# Compile-time options of Debian 12's libsqlite3 (`PRAGMA compile_options`),
# so a leg differs from the system library only in its version.
defines="-DSQLITE_ENABLE_COLUMN_METADATA -DSQLITE_ENABLE_DBSTAT_VTAB
 -DSQLITE_ENABLE_FTS3 -DSQLITE_ENABLE_FTS3_PARENTHESIS
 -DSQLITE_ENABLE_FTS3_TOKENIZER -DSQLITE_ENABLE_FTS4 -DSQLITE_ENABLE_FTS5
 -DSQLITE_ENABLE_JSON1 -DSQLITE_ENABLE_LOAD_EXTENSION
 -DSQLITE_ENABLE_MATH_FUNCTIONS -DSQLITE_ENABLE_PREUPDATE_HOOK
 -DSQLITE_ENABLE_RTREE -DSQLITE_ENABLE_SESSION -DSQLITE_ENABLE_STMTVTAB
 -DSQLITE_ENABLE_UNLOCK_NOTIFY -DSQLITE_ENABLE_UPDATE_DELETE_LIMIT
 -DSQLITE_LIKE_DOESNT_MATCH_BLOBS -DSQLITE_MAX_SCHEMA_RETRY=25
 -DSQLITE_MAX_VARIABLE_NUMBER=250000 -DSQLITE_OMIT_LOOKASIDE
 -DSQLITE_SECURE_DELETE -DSQLITE_SOUNDEX -DSQLITE_TEMP_STORE=1
 -DSQLITE_THREADSAFE=1 -DSQLITE_USE_URI=1 -DSQLITE_DEFAULT_FILE_FORMAT=4
 -DSQLITE_DEFAULT_RECURSIVE_TRIGGERS=1 -DSQLITE_MAX_DEFAULT_PAGE_SIZE=32768
 -DSQLITE_DEFAULT_JOURNAL_SIZE_LIMIT=-1 -DSQLITE_MAX_MMAP_SIZE=0x7fff0000
 -DSQLITE_MAX_EXPR_DEPTH=1000 -DSQLITE_MAX_COLUMN=2000
 -DHAVE_USLEEP=1 -DHAVE_FDATASYNC=1 -DHAVE_LOCALTIME_R=1 -DHAVE_GMTIME_R=1
 -DHAVE_ISNAN=1 -DHAVE_STRCHRNUL=1"
cflags="-O2 -g0 -fPIC"

# Sets leg_version, leg_lib (npm package spec and path of its sources) and
# leg_shell (the same for shell.c) for leg $1; returns 1 for an unknown leg.
#   a path ending in .tar.gz names an SQLite autoconf tarball inside the
#   package; otherwise it is the folder holding sqlite3.c / sqlite3.h.
leg_spec() {
  case $1 in
    oldest)
      leg_version=3.38.2
      leg_lib="sqlite3@5.0.3 package/deps/sqlite-autoconf-3380200.tar.gz"
      leg_shell="$leg_lib" ;;
    previous)
      leg_version=3.53.2
      leg_lib="better-sqlite3@12.11.1 package/deps/sqlite3"
      leg_shell="sqlite3@6.0.1 package/deps/sqlite-autoconf-3520000.tar.gz" ;;
    newest)
      leg_version=3.54.1
      leg_lib="better-sqlite3@13.2.0 package/deps/sqlite3"
      leg_shell="sqlite3@6.0.1 package/deps/sqlite-autoconf-3520000.tar.gz" ;;
    *) return 1 ;;
  esac
}

# Prints a message on stderr.
say() { echo "sqlite-matrix: $*" >&2; }

# Fetches npm package $1 (name@version) into the cache, once; prints the
# path of its tarball. Returns non-zero when npm cannot get it.
fetch() {
  local spec=$1 dir="$cache/npm" name
  name="${spec%@*}-${spec##*@}.tgz"
  name=${name#@}
  name=${name//\//-}
  if [ ! -s "$dir/$name" ]; then
    command -v npm >/dev/null 2>&1 || { say "npm not found (tool/install-deps.sh installs it)"; return 1; }
    mkdir -p "$dir" || return 1
    say "fetching $spec from the npm registry"
    (cd "$dir" && LD_PRELOAD= npm pack --loglevel=error "$spec" >npm-pack.log 2>&1) \
      || { say "npm pack $spec failed:"; tail -5 "$dir/npm-pack.log" >&2; rm -f "$dir/$name"; return 1; }
    [ -s "$dir/$name" ] || { say "npm pack $spec made no $name"; return 1; }
  fi
  echo "$dir/$name"
}

# Unpacks the SQLite sources named by "$1" (spec and path, as in leg_spec)
# into folder $2, which then holds sqlite3.c, sqlite3.h and (for an autoconf
# tarball) shell.c.
unpack() {
  local spec=${1%% *} path=${1#* } out=$2 tgz
  tgz=$(fetch "$spec") || return 1
  rm -rf "$out.tmp" && mkdir -p "$out.tmp" || return 1
  tar -xzf "$tgz" -C "$out.tmp" "$path" || { say "$spec has no $path"; return 1; }
  case $path in
    *.tar.gz)
      tar -xzf "$out.tmp/$path" -C "$out.tmp" || return 1
      mv "$out.tmp/$(basename "$path" .tar.gz)" "$out" ;;
    *) mv "$out.tmp/$path" "$out" ;;
  esac
  rm -rf "$out.tmp"
}

# Builds leg $1 into the cache when its recipe changed; prints its folder.
prepare() {
  local leg=$1 dir recipe got
  leg_spec "$leg" || { say "unknown leg '$leg' (system, oldest, previous, newest)"; return 2; }
  dir="$cache/$leg-$leg_version"
  recipe="$leg_version|$leg_lib|$leg_shell|$cc|$cflags|$(echo $defines)"
  if [ -f "$dir/recipe" ] && [ "$(cat "$dir/recipe")" = "$recipe" ] &&
     [ -x "$dir/bin/sqlite3" ] && [ -f "$dir/lib/libsqlite3.so.0" ]; then
    echo "$dir"; return 0
  fi
  say "building SQLite $leg_version for the '$leg' leg in $dir"
  rm -rf "$dir" && mkdir -p "$dir/lib" "$dir/bin" || return 1
  unpack "$leg_lib" "$dir/src" || return 1
  if [ "$leg_shell" != "$leg_lib" ]; then
    # shell.c next to this leg's sqlite3.h: `#include "sqlite3.h"` looks
    # in the including file's folder first
    unpack "$leg_shell" "$dir/shellsrc" || return 1
    cp "$dir/shellsrc/shell.c" "$dir/src/shell.c" || return 1
    rm -rf "$dir/shellsrc"
  fi
  got=$(sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' "$dir/src/sqlite3.h")
  [ "$got" = "$leg_version" ] || { say "${leg_lib%% *} holds SQLite $got, not $leg_version"; return 1; }
  # shellcheck disable=SC2086
  $cc $cflags $defines -shared -Wl,-soname,libsqlite3.so.0 \
      -o "$dir/lib/libsqlite3.so.0" "$dir/src/sqlite3.c" -lm -ldl -lpthread \
      >"$dir/build.log" 2>&1 || { say "compiling sqlite3.c failed:"; tail -20 "$dir/build.log" >&2; return 1; }
  # the shell is compiled against this leg's sqlite3.h: it refuses to run on
  # a library whose source id differs from its header's
  # shellcheck disable=SC2086
  $cc -O1 -g0 $defines -o "$dir/bin/sqlite3" "$dir/src/shell.c" \
      "$dir/lib/libsqlite3.so.0" -Wl,-rpath,'$ORIGIN/../lib' -lm -ldl -lpthread \
      >>"$dir/build.log" 2>&1 || { say "compiling shell.c failed:"; tail -20 "$dir/build.log" >&2; return 1; }
  got=$(LD_PRELOAD= LD_LIBRARY_PATH="$dir/lib" "$dir/bin/sqlite3" :memory: 'SELECT sqlite_version()' 2>&1)
  [ "$got" = "$leg_version" ] || { say "the built shell reports '$got', not $leg_version"; return 1; }
  echo "$recipe" >"$dir/recipe"
  echo "$dir"
}

# Runs "$@" holding the cache's lock: the tests that need the newest leg
# (amalg_app, threadsafe0, ...) run in parallel under make -j, and on a
# fresh machine each would otherwise fetch and build it into the same
# folder at once. Not nested: prepare and unpack are called under it only
# from the command line and run_leg.
cache_locked() {
  mkdir -p "$cache" || return 1
  (
    flock 8 || exit 1
    "$@"
  ) 8>"$cache/.lock"
}

# Prints one line per leg: name, version and sources.
list_legs() {
  local leg
  echo "system $(pkg-config --modversion sqlite3 2>/dev/null || echo '?') (the library configure found, Debian's sqlite3 shell)"
  for leg in oldest previous newest; do
    leg_spec $leg
    echo "$leg $leg_version (library: npm ${leg_lib%% *}; shell.c: npm ${leg_shell%% *})"
  done
}

# Prints the PASS/FAIL lines of a leg's check output $1 and the end of the
# log of each failed test in builddir.
report() {
  local out=$1 t
  grep -E '^(PASS|FAIL|SKIP|ERROR|XPASS):' "$out"
  for t in $(grep -E '^(FAIL|ERROR):' "$out" | awk '{print $2}'); do
    echo "---- $builddir/${t%.test}.log"
    tail -40 "$builddir/${t%.test}.log"
  done
}

# Runs leg $1's suites in builddir. Returns 0 (passed), 77 (skipped) or 1.
run_leg() {
  local leg=$1 dir log out tests ver rc
  if [ "$leg" = system ]; then
    ver=$(pkg-config --modversion sqlite3 2>/dev/null) || ver=""
    log=test-suite.log
    out="$builddir/check-system.out"
    echo "== SQLite $ver (system)"
    rm -f "$builddir/$log"
    COLVEC_SQLITE_VERSION=$ver "$make" -C "$builddir" $jobs check >"$out" 2>&1
  else
    log=test-suite-$leg.log
    out="$builddir/check-$leg.out"
    rm -f "$builddir/$log"
    if ! dir=$(cache_locked prepare "$leg"); then
      if ci_strict; then
        echo "FAIL: SQLite leg '$leg' could not be fetched or built (see above)"
        return 1
      fi
      echo "SKIP: SQLite leg '$leg' could not be fetched or built (see above); CI=true makes this a failure"
      return 77
    fi
    leg_spec "$leg"
    ver=$leg_version
    echo "== SQLite $ver ($leg)"
    tests=$("$make" -s -C "$builddir" print-sqlite-tests) || return 1
    LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      PATH="$dir/bin:$PATH" COLVEC_SQLITE_VERSION=$ver \
      "$make" -C "$builddir" $jobs check TESTS="$tests" TEST_SUITE_LOG="$log" \
      >"$out" 2>&1
  fi
  rc=$?
  report "$out"
  [ -f "$builddir/$log" ] || { echo "FAIL: no $builddir/$log (see $out)"; tail -30 "$out"; return 1; }
  return $((rc == 0 ? 0 : 1))
}

legs=()
while [ $# -gt 0 ]; do
  case $1 in
    -C) builddir=$(cd "$2" && pwd) || exit 1; shift 2 ;;
    -j) jobs="-j$2"; shift 2 ;;
    -j*) jobs=$1; shift ;;
    --prepare) cache_locked prepare "$2"; exit $? ;;
    --list) list_legs; exit 0 ;;
    --source) leg_spec "$2" || { say "unknown leg '$2'"; exit 2; }
              cache_locked unpack "$leg_lib" "$3"; exit $? ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
    *) legs+=("$1"); shift ;;
  esac
done
[ ${#legs[@]} -gt 0 ] || legs=(system oldest previous newest)
[ -f "$builddir/Makefile" ] || { say "no Makefile in $builddir (configure first, or use -C)"; exit 1; }

export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-4}
status=0
for leg in "${legs[@]}"; do
  run_leg "$leg"
  rc=$?
  if [ $rc -eq 1 ]; then status=1; elif [ $rc -eq 77 ] && [ $status -eq 0 ]; then status=77; fi
done
exit $status
