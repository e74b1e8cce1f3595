#!/usr/bin/env bash
# check-wasm.sh — `make check-wasm`: compiles SQLite and colvec to
# WebAssembly with emscripten and runs SQL sessions under node.
#
# Usage: tool/ci/check-wasm.sh [-C BUILDDIR]
#
# What it builds, into BUILDDIR/wasm/ (emcc -O2, -Werror for colvec, no
# threads: -DCOLVEC_OMIT_THREADS and -DSQLITE_THREADSAFE=0,
# -sALLOW_MEMORY_GROWTH):
#   - sql_session: test/sql/sql_session.c with the colvec sources (the lists
#     of the Makefile, compiled with -DSQLITE_CORE) and SQLite's
#     amalgamation, linked twice:
#       sql_session-rawfs.js  -sNODERAWFS: the program sees node's file
#         system; the database and its segment folder are real files in
#         BUILDDIR/wasm/tmp. mmap() is emscripten's emulation: it reads
#         the mapped range into the wasm heap (a private copy: nothing is
#         shared with the page cache or with another process).
#       sql_session-memfs.js  the default MEMFS: a file system kept in the
#         wasm heap for the life of the process (what a browser build gets);
#         the session runs in its /tmp, and mmap() is the same emulation.
#   - amalg_app-rawfs.js: test/port/amalg_app.c with the amalgamation colvec.c
#     (`make amalgamation`, compiled with -DSQLITE_CORE -pedantic -Werror
#     and the thread flags above),
#     the way an app embeds colvec; its session runs on a real file and on
#     :memory: (segments in memory folders).
# SQLite's amalgamation is the one of tool/ci/sqlite-matrix.sh's "newest" leg
# (its npm package, cached in ~/.cache/colvec-sqlite/npm), unpacked into
# BUILDDIR/wasm/sqlite and compiled once. Each program then runs under node.
#
# Debian's emscripten runs its JavaScript optimizer with node and needs
# Debian's node-acorn: NODE_PATH gets /usr/share/nodejs, which a node that
# did not come from Debian does not search. The programs are linked with
# -sWASM_ASYNC_COMPILATION=0: emscripten 3.1.6 otherwise loads the .wasm
# with fetch(), which node 18 and later define but cannot use on a path.
#
# Environment: EMCC (the compiler, default emcc), CI (true: a missing tool
# or amalgamation fails).
#
# Writes BUILDDIR/test-suite-wasm.log (automake's summary lines) and prints
# one PASS/FAIL line per program. Exit status 0 when all passed, 1 on a
# failure, 77 when emscripten, node or the amalgamation is missing (1 under
# CI=true: tool/install-deps.sh --wasm installs them).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=$top/build
while [ $# -gt 0 ]; do
  case $1 in
    -C) builddir=$(cd "$2" && pwd) || exit 1; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "check-wasm: unknown argument $1" >&2; exit 2 ;;
  esac
done
out=$builddir/wasm
log=$builddir/test-suite-wasm.log
emcc=${EMCC:-emcc}

prog=check-wasm
hint="tool/install-deps.sh --wasm"
. "$here/../lib.sh"

command -v "$emcc" >/dev/null 2>&1 || missing "$emcc not found (Debian package emscripten)"
command -v node >/dev/null 2>&1 || missing "node not found"
[ -d /usr/share/nodejs/acorn ] && export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}

# The sources, from the Makefile (what the Linux build compiles), and the
# amalgamation colvec.c.
build_sources "$builddir"
wasm_objects "$builddir" || exit 1
sqlitesrc=$wasm_sqlite

mkdir -p "$out/obj" "$out/tmp" || exit 1
echo "check-wasm: $("$emcc" --version 2>/dev/null | sed -n 1p), node $(node --version)"
# (_GNU_SOURCE as configure's build: clock_gettime, madvise; colvec gets
# SQLite's SQLITE_THREADSAFE=0, which has no sqlite3_mutex_*() functions)
cflags="-std=c99 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -DCOLVEC_OMIT_THREADS"
cflags="$cflags -DSQLITE_THREADSAFE=0"
cflags="$cflags -I$top/include -I$top/ext"
ldflags="-O2 -sALLOW_MEMORY_GROWTH=1 -sENVIRONMENT=node -sEXIT_RUNTIME=1"
ldflags="$ldflags -sWASM_ASYNC_COMPILATION=0"
t0=$(date +%s)

# Compiles C file $1 to object $2 with flags $3.. when $2 is older than $1
# or than the newest header.
compile() {
  local src=$1 obj=$2; shift 2
  if object_stale "$src" "$obj"; then
    nice -n 10 "$emcc" "$@" -c "$src" -o "$obj" ||
      { say "compiling $src failed"; return 1; }
  fi
}

# Links program $1 with flags $2.. (objects included) when an object is
# newer than it or it does not exist.
link() {
  local prog=$1 a; shift
  for a in "$@"; do
    case $a in *.o) [ "$a" -nt "$prog" ] && rm -f "$prog" ;; esac
  done
  [ -f "$prog" ] && return 0
  nice -n 10 "$emcc" "$@" -o "$prog" || { say "linking $prog failed"; return 1; }
}

objs=()
for f in $core; do
  case $f in *.c) ;; *) continue ;; esac
  o=$out/obj/$(basename "$f" .c).o
  # shellcheck disable=SC2086
  compile "$top/$f" "$o" $cflags || exit 1
  objs+=("$o")
done
for f in $module; do
  case $f in *.c) ;; *) continue ;; esac
  o=$out/obj/mod_$(basename "$f" .c).o
  # shellcheck disable=SC2086
  compile "$top/$f" "$o" $cflags -DSQLITE_CORE -I"$sqlitesrc" || exit 1
  objs+=("$o")
done
# shellcheck disable=SC2086
compile "$top/test/sql/sql_session.c" "$out/obj/sql_session.o" $cflags -I"$sqlitesrc" || exit 1
# the amalgamation as an app compiles it: its own feature macros, -pedantic
amalg="-std=c99 -O2 -Wall -Wextra -pedantic -Werror -I$sqlitesrc"
# shellcheck disable=SC2086
compile "$top/test/port/amalg_app.c" "$out/obj/amalg_app.o" $amalg -I"$builddir" || exit 1
# shellcheck disable=SC2086
link "$out/sql_session-rawfs.js" $ldflags -sNODERAWFS=1 \
  "$out/obj/sql_session.o" "${objs[@]}" "$out/obj/sqlite3.o" -lm || exit 1
# shellcheck disable=SC2086
link "$out/sql_session-memfs.js" $ldflags \
  "$out/obj/sql_session.o" "${objs[@]}" "$out/obj/sqlite3.o" -lm || exit 1
# shellcheck disable=SC2086
link "$out/amalg_app-rawfs.js" $ldflags -sNODERAWFS=1 \
  "$out/obj/amalg_app.o" "$out/obj/amalg_colvec.o" "$out/obj/sqlite3.o" -lm || exit 1
t1=$(date +%s)
echo "check-wasm: built 3 programs in $((t1 - t0)) s"

ver=$(sqlite_header_version "$sqlitesrc/sqlite3.h")
rm -rf "$out/tmp" && mkdir -p "$out/tmp" || exit 1
pass=0; fail=0
# Runs program $1 (a .js in $out) with arguments $2..; one PASS/FAIL line.
run() {
  local t=$1 ts te rc; shift
  ts=$(date +%s)
  (cd "$out/tmp" && node "$out/$t.js" "$@") >"$out/$t.log" 2>&1
  rc=$?
  te=$(date +%s)
  if [ $rc -eq 0 ]; then
    echo "PASS: wasm/$t ($((te - ts)) s): $(tail -1 "$out/$t.log")"; pass=$((pass + 1))
  else
    echo "FAIL: wasm/$t (exit $rc)"; fail=$((fail + 1))
    tail -30 "$out/$t.log"
  fi
}
run sql_session-rawfs "$out/tmp"
run sql_session-memfs /tmp
run amalg_app-rawfs "$out/tmp/app.db" "$ver"
echo "check-wasm: ran 3 programs under node in $(($(date +%s) - t1)) s"

suite_log "$log" "$pass" "$fail"
[ $fail -eq 0 ]
