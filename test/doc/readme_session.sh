#!/bin/bash
# readme_session.sh — README's "A first session", run as written: the
# `sqlite>` and `...>` lines of its transcript go to the sqlite3 shell (with
# `.load ./build/colvec` pointed at the built extension), and what the
# shell prints must be the transcript's other lines (trailing spaces
# ignored).
# Environment: COLVEC_EXT (the extension), COLVEC_TESTDIR (scratch folder).
here=$(cd "$(dirname "$0")" && pwd)
ext=${COLVEC_EXT:-$here/../../build/colvec.so}
work=${COLVEC_TESTDIR:-/tmp}/readme_session
command -v sqlite3 >/dev/null 2>&1 || { echo "SKIP: no sqlite3 shell"; exit 77; }
[ "${COLVEC_HOST_SHELL:-1}" = 0 ] && { echo "SKIP: the host shell cannot load this build"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
sed -n '/^## A first session/,/^## /p' "$here/../../README.md" |
  sed -n '/^```$/,/^```$/p' | sed '1d;$d' >transcript
[ -s transcript ] || { echo "FAIL: README.md has no first-session transcript"; exit 1; }
grep -E '^(sqlite>|   \.\.\.>) ' transcript |
  sed -E 's/^(sqlite>|   \.\.\.>) //' |
  sed "s|^\.load \./build/colvec\$|.load ${ext%.so}|" >input.sql
grep -vE '^(sqlite>|   \.\.\.>) |^\$ ' transcript >expected
sqlite3 app.db <input.sql 2>&1 | sed 's/ *$//' >got
if diff -u expected got; then
  echo "PASS: README's first session ($(wc -l <input.sql) lines of input)"
else
  echo "FAIL: README's first session printed something else"
  exit 1
fi
