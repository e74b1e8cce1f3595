# lib.sh — shell functions shared by the scripts that build colvec for
# another platform or against another SQLite (tool/ci/check-windows.sh,
# tool/ci/check-wasm.sh, tool/ci/cross-check.sh, test/port/amalg_app.sh,
# test/port/threadsafe0.sh, the node tests). Sourced, not
# run: `. "$top/tool/lib.sh"`.
#
# The sourcing script sets, before calling anything here:
#   prog   the name its messages start with ("check-windows")
#   hint   what installs a missing tool ("tool/install-deps.sh --wasm")
#   top    the source tree (for object_stale and the SQLite helpers)
#
# The skip-or-fail rule of every test script: a missing tool or package is
# a skip (exit 77) on a developer's machine and a failure (exit 1) under
# CI (CI=true or 1: ci_strict), where tool/install-deps.sh has installed
# everything.

# Prints a message on stderr, prefixed with the script's name.
say() { echo "$prog: $*" >&2; }

# Succeeds under CI (CI=true or CI=1, as CI services set it), where
# tool/install-deps.sh has installed everything: what is missing is then a
# failure, not a skip.
ci_strict() {
  case ${CI:-} in
    true | 1) return 0 ;;
  esac
  return 1
}

# Ends the script because $1 is missing: FAIL (exit 1) under CI
# (ci_strict), showing the end of log file $2 when given and present; else
# SKIP (exit 77, automake's skip status).
missing() {
  if ci_strict; then
    echo "FAIL: $prog: $1 ($hint installs it)"
    if [ -n "${2:-}" ] && [ -f "$2" ]; then tail -20 "$2"; fi
    exit 1
  fi
  echo "SKIP: $prog: $1 ($hint installs it; CI=true makes this a failure)"
  exit 77
}

# Sets `node_modules` to a node_modules folder that holds better-sqlite3@12
# built for this node, installing it the first time into the cache
# (COLVEC_NODE_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/colvec-node,
# one folder per node module ABI). Its install compiles SQLite (a minute or
# more), so every build folder and test shares one; the install runs under
# a lock (the node tests run in parallel under make -j) and never under the
# caller's LD_PRELOAD (ASan). Returns 1 when npm install fails (its log is
# $node_modules/../npm-install.log), 2 when the installed module does not
# load.
node_better_sqlite3() {
  local cache=${COLVEC_NODE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/colvec-node}
  local abi dir rc=0
  abi=$(LD_PRELOAD= node -p process.versions.modules 2>/dev/null) || return 2
  dir=$cache/better-sqlite3-12-abi$abi
  node_modules=$dir/node_modules
  mkdir -p "$dir" || return 1
  exec 9>"$dir.lock"
  flock 9
  if ! node_better_sqlite3_loads; then
    echo "installing better-sqlite3@12 into $dir"
    if ! LD_PRELOAD= npm install --prefix "$dir" --no-audit --no-fund \
      better-sqlite3@12 >"$dir/npm-install.log" 2>&1; then
      rc=1
    elif ! node_better_sqlite3_loads; then
      rc=2
    fi
  fi
  flock -u 9
  exec 9>&-
  return $rc
}

# True when better-sqlite3 in $node_modules opens a database.
node_better_sqlite3_loads() {
  NODE_PATH="$node_modules" LD_PRELOAD= \
    node -e "new (require('better-sqlite3'))(':memory:').close()" >/dev/null 2>&1
}

# Puts the newest SQLite amalgamation (sqlite3.c, sqlite3.h of the newest
# leg of tool/ci/sqlite-matrix.sh) in folder $1, unless it is there already.
# Ends the script through `missing` when it cannot be fetched.
sqlite_source() {
  local dir=$1
  if [ ! -f "$dir/sqlite3.c" ]; then
    rm -rf "$dir"
    mkdir -p "$(dirname "$dir")"
    "$top/tool/ci/sqlite-matrix.sh" --source newest "$dir" ||
      missing "SQLite amalgamation (tool/ci/sqlite-matrix.sh --source newest failed)"
  fi
  [ -f "$dir/sqlite3.c" ] || missing "no sqlite3.c in $dir"
}

# Sets `leg` to the folder of the newest SQLite leg, built by
# tool/ci/sqlite-matrix.sh (--prepare; with the default compiler, as CC is
# part of a leg's recipe). Ends the script through `missing` when it cannot
# be fetched or built.
sqlite_newest_leg() {
  leg=$(env -u CC "$top/tool/ci/sqlite-matrix.sh" --prepare newest) ||
    missing "the newest SQLite could not be fetched or built"
}

# Prints the version of the SQLite whose sqlite3.h is $1.
sqlite_header_version() {
  sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' "$1"
}

# Sets `core` and `module` to the source lists the Linux build of build
# folder $1 compiles (its Makefile's print-core-sources and
# print-module-sources). Ends the script when there is no Makefile.
build_sources() {
  [ -f "$1/Makefile" ] || { say "no Makefile in $1 (configure first, or use -C)"; exit 1; }
  core=$(make -s -C "$1" print-core-sources) || exit 1
  module=$(make -s -C "$1" print-module-sources) || exit 1
}

# True when object $2 must be compiled again from C file $1: it does not
# exist, or it is older than $1 or than the newest header of ext/ and
# include/.
object_stale() {
  local newest
  newest=$(ls -t "$top"/ext/*.h "$top"/include/*.h | head -1)
  [ ! -f "$2" ] || [ "$1" -nt "$2" ] || [ "$newest" -nt "$2" ]
}

# Writes the summary of an automake test-suite.log to file $1 for $2
# passed and $3 failed programs (tool/run-tests.sh counts it like make
# check's).
suite_log() {
  {
    echo "# TOTAL: $(($2 + $3))"
    echo "# PASS:  $2"
    echo "# SKIP:  0"
    echo "# XFAIL: 0"
    echo "# FAIL:  $3"
    echo "# XPASS: 0"
    echo "# ERROR: 0"
  } >"$1"
}

# Sets `wine` to the wine program (wine64 first) and exports a private
# WINEPREFIX in folder $1 (created on first use: slow), quiet. Ends the
# script through `missing` when wine is not installed.
wine_setup() {
  local w
  wine=""
  for w in wine64 wine /usr/lib/wine/wine64; do
    if command -v "$w" >/dev/null 2>&1; then wine=$(command -v "$w"); break; fi
  done
  [ -n "$wine" ] || missing "wine not found (Debian package wine64)"
  export WINEPREFIX=$1 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  if [ ! -d "$WINEPREFIX" ]; then
    say "creating the wine prefix $WINEPREFIX (once; slow)"
    mkdir -p "$(dirname "$WINEPREFIX")"
    "$wine" wineboot --init >"$WINEPREFIX.log" 2>&1 ||
      { say "wineboot failed"; tail -20 "$WINEPREFIX.log" >&2; exit 1; }
  fi
}

# Compiles, for WebAssembly with $emcc, SQLite's amalgamation and colvec's
# (`make amalgamation` in build folder $1), into $1/wasm/obj, each only when
# its source is newer, and sets wasm_sqlite (the SQLite source folder),
# wasm_sqlite_obj and wasm_colvec_obj. No threads (SQLITE_THREADSAFE=0,
# COLVEC_OMIT_THREADS); colvec's with -pedantic -Werror, as an app compiles
# it. Returns non-zero on a failure (said on stderr).
wasm_objects() {
  local obj=$1/wasm/obj
  wasm_sqlite=$1/wasm/sqlite
  wasm_sqlite_obj=$obj/sqlite3.o
  wasm_colvec_obj=$obj/amalg_colvec.o
  sqlite_source "$wasm_sqlite"
  make -s -C "$1" amalgamation || { say "make amalgamation failed"; return 1; }
  mkdir -p "$obj" || return 1
  if [ ! -f "$wasm_sqlite_obj" ] || [ "$wasm_sqlite/sqlite3.c" -nt "$wasm_sqlite_obj" ]; then
    say "compiling SQLite $(sqlite_header_version "$wasm_sqlite/sqlite3.h") to wasm (once; a few minutes)"
    nice -n 10 "$emcc" -O2 -w -DSQLITE_THREADSAFE=0 -DSQLITE_ENABLE_MATH_FUNCTIONS \
      -DSQLITE_OMIT_LOAD_EXTENSION -c "$wasm_sqlite/sqlite3.c" -o "$wasm_sqlite_obj.tmp" &&
      mv "$wasm_sqlite_obj.tmp" "$wasm_sqlite_obj" || { say "compiling sqlite3.c failed"; return 1; }
  fi
  if [ ! -f "$wasm_colvec_obj" ] || [ "$1/colvec.c" -nt "$wasm_colvec_obj" ]; then
    nice -n 10 "$emcc" -std=c99 -O2 -Wall -Wextra -pedantic -Werror -I"$wasm_sqlite" \
      -DSQLITE_CORE -DSQLITE_THREADSAFE=0 -DCOLVEC_OMIT_THREADS \
      -c "$1/colvec.c" -o "$wasm_colvec_obj" || { say "compiling colvec.c failed"; return 1; }
  fi
}

