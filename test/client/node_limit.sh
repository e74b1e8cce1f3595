#!/bin/bash
# node_limit.sh — runs test/client/node/limit.test.mjs (KNN through
# `ORDER BY distance LIMIT n`, which needs SQLite >= 3.41) on the SQLite
# bundled with better-sqlite3; `node_limit.sh other.test.mjs` runs another
# script of test/client/node/ the same way (test/client/node_values.sh does).
#
# Environment: COLVEC_EXT (the extension, default ../build/colvec.so next to
# this folder), COLVEC_TESTDIR (scratch folder, default /tmp),
# COLVEC_NODE_CACHE: better-sqlite3 is installed once into the cache
# (tool/lib.sh, node_better_sqlite3), never into the source tree.
# Exit status: node's; 77 (automake SKIP) without node/npm or when the
# install fails (e.g. no network; a failure under CI, tool/lib.sh's
# missing); 99 (hard error) without the extension.

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ext=${COLVEC_EXT:-$here/../../build/colvec.so}
prog=node_limit hint="tool/install-deps.sh"
. "$top/tool/lib.sh"

command -v node >/dev/null 2>&1 || missing "node not found"
command -v npm >/dev/null 2>&1 || missing "npm not found"
[ -f "$ext" ] || { echo "ERROR: extension $ext not found (set COLVEC_EXT)"; exit 99; }
case $ext in /*) ;; *) ext=$(cd "$(dirname "$ext")" && pwd)/$(basename "$ext") ;; esac

node_better_sqlite3
case $? in
  0) ;;
  1) missing "npm install better-sqlite3@12 failed (no network?), see $node_modules/../npm-install.log" "$node_modules/../npm-install.log" ;;
  *) missing "better-sqlite3 installed but does not load, see $node_modules/../npm-install.log" "$node_modules/../npm-install.log" ;;
esac

export NODE_PATH="$node_modules"
export COLVEC_EXT="$ext"
export COLVEC_TESTDIR="${COLVEC_TESTDIR:-/tmp}"
node --test "$here/node/${1:-limit.test.mjs}"
exit $?
