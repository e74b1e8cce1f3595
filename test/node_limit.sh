#!/bin/bash
# node_limit.sh — runs test/node/limit.test.mjs (KNN through
# `ORDER BY distance LIMIT n`, which needs SQLite >= 3.41) on the SQLite
# bundled with better-sqlite3; `node_limit.sh other.test.mjs` runs another
# script of test/node/ the same way (test/node_values.sh does).
#
# Environment: COLVEC_EXT (the extension, default ../build/colvec.so next to
# this folder), COLVEC_TESTDIR (scratch folder, default /tmp): better-sqlite3
# is installed into $COLVEC_TESTDIR/colvec-node, never into the source tree,
# and reused when already there.
# Exit status: node's; 77 (automake SKIP) without node/npm or when the
# install fails (e.g. no network; a failure under CI=true); 99 (hard error)
# without the extension.

here=$(cd "$(dirname "$0")" && pwd)
ext=${COLVEC_EXT:-$here/../build/colvec.so}
dir=${COLVEC_TESTDIR:-/tmp}/colvec-node

skip() {
  echo "SKIP: $*"
  exit 77
}

# Under CI=true (or 1) npm's registry is reachable, so an install that fails
# is a failure; elsewhere it is a skip.
fail_or_skip() {
  case ${CI:-} in
    true | 1) echo "FAIL: $*"; [ -f "$dir/npm-install.log" ] && tail -20 "$dir/npm-install.log"; exit 1 ;;
  esac
  skip "$@"
}

command -v node >/dev/null 2>&1 || skip "node not found"
command -v npm >/dev/null 2>&1 || skip "npm not found"
[ -f "$ext" ] || { echo "ERROR: extension $ext not found (set COLVEC_EXT)"; exit 99; }
case $ext in /*) ;; *) ext=$(cd "$(dirname "$ext")" && pwd)/$(basename "$ext") ;; esac

# The extension may be built with ASan, which then comes through LD_PRELOAD;
# npm and node-gyp must not run under it.
loaded() {
  NODE_PATH="$dir/node_modules" LD_PRELOAD= \
    node -e "new (require('better-sqlite3'))(':memory:').close()" >/dev/null 2>&1
}
# node_limit.sh and node_values.sh run in parallel under `make -j`: the
# install is done under a lock so that one never sees the other's half-made
# node_modules (npm removes it again when an install fails).
install() {
  loaded && return 0
  echo "installing better-sqlite3@12 into $dir"
  LD_PRELOAD= npm install --prefix "$dir" --no-audit --no-fund \
    better-sqlite3@12 >"$dir/npm-install.log" 2>&1 || return 1
  loaded || return 2
}
mkdir -p "$dir" || skip "cannot create $dir"
exec 9>"$dir.lock"
flock 9
install
rc=$?
flock -u 9
case $rc in
  0) ;;
  1) fail_or_skip "npm install better-sqlite3@12 failed (no network?), see $dir/npm-install.log" ;;
  *) fail_or_skip "better-sqlite3 installed but does not load, see $dir/npm-install.log" ;;
esac

export NODE_PATH="$dir/node_modules"
export COLVEC_EXT="$ext"
export COLVEC_TESTDIR="${COLVEC_TESTDIR:-/tmp}"
node --test "$here/node/${1:-limit.test.mjs}"
exit $?
