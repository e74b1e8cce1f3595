#!/bin/sh
# bench-setup.sh — installs what the benchmark suite needs, if missing:
#   Debian: libhnswlib-dev (native baseline), dataset-fashion-mnist,
#           gnuplot-nox (plots), libsqlite3-dev and zlib1g-dev (to build the
#           driver), g++ and pkg-config;
#   npm:    sqlite-vec + sqlite-vec-linux-x64 0.1.9 and
#           @1yefuwang1/vectorlite-linux-x64 0.2.0, under bench-data/npm
#           (git-ignored).
# Then writes bench-data/peers.env with the peers' shared-library paths:
#   SQLITE_VEC_SO=.../node_modules/sqlite-vec-linux-x64/vec0.so
#   VECTORLITE_SO=.../@1yefuwang1/vectorlite-linux-x64/src/vectorlite.so
#
# usage: tool/bench/bench-setup.sh [WORK_DIR]     (default: <repo>/bench-data)
# Safe to run again: installs only what is missing. Needs root for apt-get.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${1:-$ROOT/bench-data}
NPM_DIR=$WORK/npm
NM=$NPM_DIR/node_modules
SQLITE_VEC_SO=$NM/sqlite-vec-linux-x64/vec0.so
VECTORLITE_SO=$NM/@1yefuwang1/vectorlite-linux-x64/src/vectorlite.so

mkdir -p "$WORK"

# Debian packages: install the missing ones in one apt-get call.
missing=""
for pkg in libhnswlib-dev dataset-fashion-mnist gnuplot-nox libsqlite3-dev \
           zlib1g-dev g++ pkg-config; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
       grep -q "install ok installed"; then
    missing="$missing $pkg"
  fi
done
if [ -n "$missing" ]; then
  echo "bench-setup: apt-get install$missing" >&2
  apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
fi

# npm packages: prebuilt .so files of the peers.
if [ ! -f "$SQLITE_VEC_SO" ] || [ ! -f "$VECTORLITE_SO" ]; then
  command -v npm >/dev/null 2>&1 || {
    echo "bench-setup: npm is needed (apt-get install npm)" >&2
    exit 1
  }
  mkdir -p "$NPM_DIR"
  echo "bench-setup: npm install into $NPM_DIR" >&2
  npm install --no-audit --no-fund --prefix "$NPM_DIR" \
    sqlite-vec@0.1.9 sqlite-vec-linux-x64@0.1.9 \
    @1yefuwang1/vectorlite-linux-x64@0.2.0 >&2
fi
for so in "$SQLITE_VEC_SO" "$VECTORLITE_SO"; do
  [ -f "$so" ] || { echo "bench-setup: missing $so" >&2; exit 1; }
done

cat >"$WORK/peers.env" <<EOF
SQLITE_VEC_SO=$SQLITE_VEC_SO
VECTORLITE_SO=$VECTORLITE_SO
EOF
echo "bench-setup: ready ($WORK/peers.env)" >&2
