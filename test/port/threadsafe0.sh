#!/bin/bash
# threadsafe0.sh — colvec with a SQLite built with SQLITE_THREADSAFE=0 (no
# mutexes: SQLite's own WebAssembly build and many embedded builds). Such a
# SQLite defines no sqlite3_mutex_*() functions, and the API table it hands
# a loaded extension holds NULL in their place.
#
#   - loadable: the newest SQLite's shell, compiled with
#     -DSQLITE_THREADSAFE=0, loads the built colvec.so ($COLVEC_EXT) and runs
#     a KNN on a file database (a colvec.so that called the mutex functions
#     crashed on load);
#   - static: the amalgamation colvec.c compiled with -DSQLITE_CORE
#     -DSQLITE_THREADSAFE=0 links with that SQLite (an undefined
#     sqlite3_mutex_alloc before) and runs test/port/amalg_app.c's session.
#
# sqlite3.c and shell.c are compiled once (-O0, about half a minute) into
# the cache of tool/ci/sqlite-matrix.sh; later runs only compile colvec.c and
# the app.
#
# Environment: COLVEC_EXT (the built colvec.so; its folder is the build
# folder, which holds colvec.c), COLVEC_TESTDIR, CC, COLVEC_SAN_CFLAGS, CI
# (true: a SQLite that cannot be fetched fails).
# Exit status: 0 passed, 1 failed, 77 skipped (SQLite not available
# outside CI).
set -uo pipefail

src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
src=$(cd "$src" && pwd)
prog=threadsafe0 top=$src hint="tool/ci/sqlite-matrix.sh (network access to the npm registry)"
. "$src/tool/lib.sh"
ext=${COLVEC_EXT:?COLVEC_EXT must name the built colvec.so}
build=$(dirname "$ext")
tmp=${COLVEC_TESTDIR:-$build/test/tmp}/threadsafe0
cc=${CC:-cc}
mkdir -p "$tmp"
# The compilers run without the sanitizer runtime the test environment
# preloads (the shell that loads a sanitized colvec.so keeps it).
preload=${LD_PRELOAD:-}
export LD_PRELOAD=

[ -s "$build/colvec.c" ] || { echo "FAIL: $build/colvec.c is missing (make amalgamation)"; exit 1; }
sqlite_newest_leg
ver=$(sqlite_header_version "$leg/src/sqlite3.h")

# sqlite3.o and the shell, once per SQLite version, beside the leg
cache=$(dirname "$leg")/threadsafe0-$ver-$(basename "$cc")
if [ ! -x "$cache/sqlite3" ] || [ "$cache/sqlite3" -ot "$leg/src/sqlite3.c" ]; then
  echo "compiling SQLite $ver with SQLITE_THREADSAFE=0 (once)"
  mkdir -p "$cache"
  "$cc" -O0 -DSQLITE_THREADSAFE=0 -c "$leg/src/sqlite3.c" -o "$cache/sqlite3.o" \
    >"$tmp/sqlite3.log" 2>&1 &&
    "$cc" -O0 -DSQLITE_THREADSAFE=0 -I"$leg/src" "$leg/src/shell.c" \
      "$cache/sqlite3.o" -o "$cache/sqlite3.$$.tmp" -lm -ldl >>"$tmp/sqlite3.log" 2>&1 &&
    mv "$cache/sqlite3.$$.tmp" "$cache/sqlite3" ||
    { echo "FAIL: compiling SQLite with SQLITE_THREADSAFE=0"; tail -20 "$tmp/sqlite3.log"; exit 1; }
fi

fail=0
# loadable: the shell's SQLite says THREADSAFE=0; the KNN answers rowid 2
# nearest, then 1; the commit wrote one segment
db=$tmp/load.db
rm -rf "$db" "$db-colvec"
got=$(LD_PRELOAD=$preload "$cache/sqlite3" "$db" <<EOF 2>&1
.load $ext
SELECT sqlite_compileoption_used('THREADSAFE=0');
CREATE VIRTUAL TABLE t USING colvec(e float[2], delta_rows=2);
INSERT INTO t(rowid, e) VALUES (1, '[0,0]'), (2, '[1,1]'), (3, '[5,5]');
SELECT group_concat(rowid, ',') FROM (SELECT rowid FROM t WHERE e MATCH '[0.9,0.9]' AND k = 2);
SELECT count(*) FROM t_manifest;
EOF
)
rc=$?
want=$(printf '1\n2,1\n1')
if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
  echo "ok loadable: colvec.so in SQLite $ver built with SQLITE_THREADSAFE=0: KNN 2,1 over a segment"
else
  echo "FAIL loadable: exit $rc, output:"; echo "$got" | head -20; fail=1
fi

# static: colvec.c with -DSQLITE_THREADSAFE=0 and the app's session
# shellcheck disable=SC2086
if "$cc" -std=c99 -Wall -Wextra -pedantic -Werror -O0 ${COLVEC_SAN_CFLAGS:-} \
     -DSQLITE_CORE -DSQLITE_THREADSAFE=0 -I"$leg/src" -I"$build" \
     "$build/colvec.c" "$src/test/port/amalg_app.c" "$cache/sqlite3.o" \
     -o "$tmp/app" -lm -lpthread -ldl >"$tmp/app.log" 2>&1; then
  rm -rf "$tmp/app.db" "$tmp/app.db-journal" "$tmp/app.db-wal" "$tmp/app.db-colvec"
  if "$tmp/app" "$tmp/app.db" "$ver" >"$tmp/app.out" 2>&1; then
    echo "ok static: colvec.c -DSQLITE_THREADSAFE=0 linked with that SQLite: $(tail -1 "$tmp/app.out")"
  else
    echo "FAIL static: app session:"; grep -v '^ok ' "$tmp/app.out" | head -20; fail=1
  fi
else
  echo "FAIL static: building the app with -DSQLITE_THREADSAFE=0:"; head -20 "$tmp/app.log"; fail=1
fi
exit $fail
