#!/bin/bash
# amalg_app.sh — builds test/port/amalg_app.c the way an app developer would:
# the amalgamation colvec.c (from `make amalgamation`) compiled with
# -DSQLITE_CORE and nothing but C99 and warning flags, linked statically
# with SQLite's own amalgamation (sqlite3.c of the newest SQLite of
# tool/ci/sqlite-matrix.sh, fetched and cached by it), colvec registered with
# sqlite3_auto_extension(); then runs its KNN session on a file and on
# :memory:. Does it with $CC and, when installed, with clang and with
# musl-gcc (musl's C library instead of glibc, as Alpine and static builds
# use, linked fully static; not in sanitizer builds, whose runtime needs
# glibc), and checks
# that the object compiled from colvec.c defines no global symbol but the
# entry point.
#
# sqlite3.c is compiled once per compiler into the cache of
# tool/ci/sqlite-matrix.sh (about half a minute); later runs only compile
# colvec.c and the app.
#
# Environment: COLVEC_EXT (the built colvec.so; its folder is the build
# folder, which holds colvec.c), COLVEC_TESTDIR, CC, COLVEC_SAN_CFLAGS
# (sanitizer flags of the build, added to colvec.c's compile line), CI
# (true: a SQLite that cannot be fetched, or a missing clang, fails).
# Exit status: 0 passed, 1 failed, 77 skipped (SQLite not available
# outside CI).
set -uo pipefail

src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
src=$(cd "$src" && pwd)
prog=amalg_app top=$src hint="tool/ci/sqlite-matrix.sh (network access to the npm registry)"
. "$src/tool/lib.sh"
build=$(dirname "${COLVEC_EXT:?COLVEC_EXT must name the built colvec.so}")
tmp=${COLVEC_TESTDIR:-$build/test/tmp}/amalg_app
cc=${CC:-cc}
mkdir -p "$tmp"
# The compilers and nm run without the sanitizer runtime the test
# environment preloads for tclsh.
export LD_PRELOAD=

[ -s "$build/colvec.c" ] || { echo "FAIL: $build/colvec.c is missing (make amalgamation)"; exit 1; }

# The newest SQLite leg's sources (fetched from npm by sqlite-matrix.sh).
sqlite_newest_leg
ver=$(sqlite_header_version "$leg/src/sqlite3.h")
echo "SQLite $ver from $leg/src"

fail=0
warn="-std=c99 -Wall -Wextra -pedantic -Werror"
compilers=("$cc")
if command -v clang >/dev/null 2>&1; then
  [ "$(basename "$cc")" = clang ] || compilers+=(clang)
elif ci_strict; then
  echo "FAIL: clang is not installed (tool/install-deps.sh installs it)"
  fail=1
else
  echo "note: clang is not installed"
fi
if [ -n "${COLVEC_SAN_CFLAGS:-}" ]; then
  echo "note: musl-gcc is not tried in a sanitizer build"
elif command -v musl-gcc >/dev/null 2>&1; then
  compilers+=(musl-gcc)
elif ci_strict; then
  echo "FAIL: musl-gcc is not installed (tool/install-deps.sh installs musl-tools)"
  fail=1
else
  echo "note: musl-gcc is not installed (Debian: musl-tools)"
fi

for c in "${compilers[@]}"; do
  name=$(basename "$c")
  out=$tmp/$name
  mkdir -p "$out"
  # sqlite3.c, once per compiler and SQLite version, kept beside the leg
  # (which sqlite-matrix.sh may rebuild at any time)
  obj=$(dirname "$leg")/amalg-app-$ver-$name/sqlite3.o
  if [ ! -s "$obj" ] || [ "$obj" -ot "$leg/src/sqlite3.c" ]; then
    echo "compiling sqlite3.c $ver with $name (once)"
    mkdir -p "$(dirname "$obj")"
    "$c" -O1 -DSQLITE_THREADSAFE=1 -c "$leg/src/sqlite3.c" -o "$obj.$$.tmp" \
      >"$out/sqlite3.log" 2>&1 && mv "$obj.$$.tmp" "$obj" ||
      { echo "FAIL: $name: compiling sqlite3.c"; tail -20 "$out/sqlite3.log"; fail=1; continue; }
  fi
  # colvec.c with only -DSQLITE_CORE beside the warning flags: no warning
  # (-O1 with gcc, whose flow warnings need the optimizer; -O0 with clang,
  # whose do not, to keep the test short)
  opt=-O1
  [ "$name" = clang ] && opt=-O0
  # shellcheck disable=SC2086
  if ! "$c" $warn $opt ${COLVEC_SAN_CFLAGS:-} -DSQLITE_CORE -I"$leg/src" \
       -c "$build/colvec.c" -o "$out/colvec.o" >"$out/colvec.log" 2>&1; then
    echo "FAIL: $name: compiling colvec.c -DSQLITE_CORE:"; head -30 "$out/colvec.log"; fail=1; continue
  fi
  echo "ok $name: colvec.c -DSQLITE_CORE $warn: no warning"
  # its only global definition is the entry point
  globals=$(nm -g --defined-only "$out/colvec.o" | awk 'NF == 3 {print $3}' | sort | tr '\n' ' ')
  if [ "$globals" = "sqlite3_colvec_init " ]; then
    echo "ok $name: colvec.o defines one global symbol: sqlite3_colvec_init"
  else
    echo "FAIL: $name: global symbols of colvec.o: $globals"; fail=1
  fi
  # with musl, a fully static program (no shared library at all)
  static=
  [ "$name" = musl-gcc ] && static=-static
  # shellcheck disable=SC2086
  if ! "$c" $warn $opt ${COLVEC_SAN_CFLAGS:-} $static -I"$leg/src" -I"$build" \
       "$src/test/port/amalg_app.c" "$out/colvec.o" "$obj" -o "$out/app" \
       -lm -lpthread -ldl >"$out/app.log" 2>&1; then
    echo "FAIL: $name: building the app:"; head -30 "$out/app.log"; fail=1; continue
  fi
  rm -rf "$out/app.db" "$out/app.db-journal" "$out/app.db-wal" "$out/app.db-colvec"
  if "$out/app" "$out/app.db" "$ver" >"$out/app.out" 2>&1; then
    echo "ok $name: app session: $(tail -1 "$out/app.out")"
  else
    echo "FAIL: $name: app session:"; grep -v '^ok ' "$out/app.out" | head -30; fail=1
  fi
done
exit $fail
