#!/usr/bin/env bash
# valgrind-tcl.sh — runs one Tcl suite with tclsh under valgrind: the test
# log compiler of `make check-valgrind` (see Makefile.am).
#
# Usage: tool/ci/valgrind-tcl.sh TCLSH SUITE.test
#
# memcheck reports reads of uninitialized memory, invalid reads and writes
# and bad frees in tclsh, SQLite and colvec; any report fails the suite
# (exit 1). Child processes that the suites start (tclsh children of
# corrupt1/load1, the sqlite3 shell) run under valgrind too. Leaks are not
# reported: Tcl and SQLite keep memory until exit by design.
# tool/ci/valgrind.supp suppresses only noise of tclsh and libc themselves,
# never a frame of colvec.
#
# Exit status: the suite's; 1 on a valgrind report; 77 (SKIP) without
# valgrind, or with a sanitizer runtime preloaded (an ASan build: valgrind
# and ASan cannot run together, use a release build).
here=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null 2>&1 || { echo "SKIP: valgrind not found"; exit 77; }
case ${LD_PRELOAD:-} in
  *asan*|*ubsan*) echo "SKIP: sanitizer runtime preloaded; run check-valgrind in a build without --enable-sanitizers"; exit 77 ;;
esac
exec valgrind -q --error-exitcode=1 --leak-check=no --num-callers=40 \
  --track-origins=yes --trace-children=yes \
  --trace-children-skip='*/ldd,*/realpath,*/rm,*/sh,*/bash,*/cp,*/ld-linux*' \
  --suppressions="$here/valgrind.supp" "$@"
