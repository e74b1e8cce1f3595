#!/bin/sh
# version.sh — prints colvec's version, read from its one source,
# include/colvec.h (COLVEC_VERSION). configure.ac, the amalgamation, the
# Python wheel and the npm packages all take it from here. Exits 1 when
# COLVEC_VERSION_NUMBER (MAJOR*1000000+MINOR*1000+PATCH, beside it) does not
# match the string.
# Usage: tool/version.sh [SRCDIR]
top=${1:-$(dirname "$0")/..}
h=$top/include/colvec.h
v=$(sed -n 's/^#define COLVEC_VERSION "\(.*\)"$/\1/p' "$h")
n=$(sed -n 's/^#define COLVEC_VERSION_NUMBER \([0-9]*\)$/\1/p' "$h")
case $v in
  [0-9]*.[0-9]*.[0-9]*) ;;
  *) echo "version.sh: no MAJOR.MINOR.PATCH COLVEC_VERSION in $h" >&2; exit 1 ;;
esac
want=$(echo "$v" | awk -F. '{ printf "%d", $1 * 1000000 + $2 * 1000 + $3 }')
if [ "$n" != "$want" ]; then
  echo "version.sh: COLVEC_VERSION_NUMBER is $n, but COLVEC_VERSION $v means $want" >&2
  exit 1
fi
printf '%s\n' "$v"
