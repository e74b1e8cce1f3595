#!/usr/bin/env bash
# demo.sh — builds colvec if needed and runs tool/demo.sql in the sqlite3
# shell against a temporary database: CREATE, INSERT, KNN with and without
# filters, scans, a rolled-back transaction, 'optimize', 'integrity-check'
# and a few refused inputs.
#
# Installs missing Debian packages (tool/install-deps.sh), then builds out
# of tree in build/ (autoreconf and configure only when build/Makefile is
# missing). The database and its sidecar folder are removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

tool/install-deps.sh

if [ ! -f build/Makefile ]; then
  # an in-tree configure would make the out-of-tree one refuse to run
  if [ -f config.status ]; then
    echo "note: removing the in-tree build (make distclean) to build in build/" >&2
    make distclean >/dev/null 2>&1 || true
  fi
  echo "== building colvec in build/ (autoreconf, configure, make)" >&2
  autoreconf -fi >/dev/null 2>&1
  mkdir -p build
  (cd build && "$top/configure" >configure.out 2>&1) \
    || { cat build/configure.out >&2; exit 1; }
fi
make -C build -j"$(nproc 2>/dev/null || echo 2)" >build/make.out 2>&1 \
  || { tail -40 build/make.out >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/colvec-demo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "== sqlite3 $(sqlite3 -version | cut -d' ' -f1), database $tmp/demo.db"
# stdbuf keeps the shell's results and its error messages in order; the
# shell exits 1 because the last part of the demo shows refused input
stdbuf -oL -eL sqlite3 "$tmp/demo.db" -cmd ".load $top/build/colvec" \
  <tool/demo.sql 2>&1 || true
echo
echo "== the sidecar folder beside the database:"
(cd "$tmp" && find demo.db-colvec -type f | sort)
