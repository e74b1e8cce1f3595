#!/usr/bin/env bash
# fetch-vec0.sh — prints the path of sqlite-vec's loadable extension
# (vec0.so of the npm package sqlite-vec-linux-x64), fetched once into a
# cache. The compatibility suites (test/sql/vec*.test) run the same statements
# on it and on colvec and compare the results.
#
# Usage: tool/ci/fetch-vec0.sh            (prints the path of vec0.so)
#
# Environment:
#   COLVEC_VEC0_VERSION  the sqlite-vec release (default 0.1.9, the one the
#                        suites' expectations were written against)
#   COLVEC_VEC0_CACHE    where it is kept (default
#                        ${XDG_CACHE_HOME:-$HOME/.cache}/colvec-vec0)
# Exits 1 with a message on stderr when npm cannot get it, and 2 on a CPU
# or system sqlite-vec ships no such package for here.
set -uo pipefail
version=${COLVEC_VEC0_VERSION:-0.1.9}
cache=${COLVEC_VEC0_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/colvec-vec0}
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=sqlite-vec-linux-x64 ;;
  Linux-aarch64) pkg=sqlite-vec-linux-arm64 ;;
  *) echo "fetch-vec0: no sqlite-vec package for $(uname -s) $(uname -m)" >&2; exit 2 ;;
esac
dir="$cache/$pkg-$version"
if [ ! -s "$dir/vec0.so" ]; then
  command -v npm >/dev/null 2>&1 ||
    { echo "fetch-vec0: npm not found (tool/install-deps.sh installs it)" >&2; exit 1; }
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" || exit 1
  (cd "$dir.tmp" && LD_PRELOAD= npm pack --loglevel=error "$pkg@$version" >npm-pack.log 2>&1) ||
    { echo "fetch-vec0: npm pack $pkg@$version failed:" >&2; tail -5 "$dir.tmp/npm-pack.log" >&2; exit 1; }
  tar -xzf "$dir.tmp/$pkg-$version.tgz" -C "$dir.tmp" package/vec0.so ||
    { echo "fetch-vec0: $pkg@$version has no vec0.so" >&2; exit 1; }
  rm -rf "$dir" && mkdir -p "$dir" && mv "$dir.tmp/package/vec0.so" "$dir/vec0.so" &&
    rm -rf "$dir.tmp" || exit 1
fi
echo "$dir/vec0.so"
