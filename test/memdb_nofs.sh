#!/bin/bash
# memdb_nofs.sh — tables of databases without a file need no file system:
# runs test/memdb1.test and test/check_memdb with TMPDIR unset and /tmp
# read-only (a read-only tmpfs mounted over it in a private mount
# namespace, `unshare -m`: as root, permissions alone would not stop a
# write), under `strace -f`, and then fails when the trace shows colvec
# creating, renaming or removing anything, or naming a "-colvec" path,
# outside the one file database memdb1.test uses on purpose
# (memdb1.db, its journal and its folder, in $COLVEC_TESTDIR/nofs: not the
# files of the memdb1.test that make check runs beside it). That file
# table's segment writes are in the trace too: they show it records
# colvec's file calls.
#
# Environment: COLVEC_EXT and COLVEC_TESTDIR as for the Tcl suites (set by
# make check), TCLSH (default tclsh), CHECK_MEMDB (default
# test/check_memdb in the current folder; skipped when not built).
# Exit status: 0 when clean; 1 on a failure; 77 (automake SKIP) without
# strace or when unshare is refused (no privilege), except under CI=true,
# where both are failures (tool/install-deps.sh installs strace).

here=$(cd "$(dirname "$0")" && pwd)
tclsh=${TCLSH:-tclsh}
testdir=${COLVEC_TESTDIR:-$PWD/test/tmp}/nofs
check=${CHECK_MEMDB:-$PWD/test/check_memdb}

skip() {
  if [ "${CI:-}" = true ]; then
    echo "FAIL: $* (CI=true: required)"
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}

[ -n "${COLVEC_EXT:-}" ] || { echo "ERROR: COLVEC_EXT is not set"; exit 99; }
command -v strace >/dev/null 2>&1 || skip "strace not found"
unshare -m --propagation private true 2>/dev/null ||
  skip "unshare -m is refused here (needs root or user namespaces)"

mkdir -p "$testdir"
trace=$testdir/memdb_nofs.trace
rm -rf "$trace" "$testdir"/memdb1.db*

# The runs, inside the namespace: /tmp read-only, TMPDIR unset. The
# trace goes to $testdir (not under /tmp).
inner='
  set -e
  mount -t tmpfs -o ro,size=1m tmpfs /tmp
  if touch /tmp/colvec-probe 2>/dev/null; then
    echo "FAIL: /tmp is still writable"; exit 1
  fi
  unset TMPDIR
  COLVEC_TESTDIR="'"$testdir"'" '"$tclsh"' "'"$here"'/memdb1.test"
  if [ -x "'"$check"'" ]; then
    # Check itself needs a file for its messages: in $testdir (TEMP)
    CK_FORK=no TEMP="'"$testdir"'" "'"$check"'"
  else
    echo "note: '"$check"' is not built; only memdb1.test ran"
  fi
'
strace -f -qq -o "$trace" -e trace=%file \
  unshare -m --propagation private bash -c "$inner"
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: the suites failed (exit $rc) with /tmp read-only, TMPDIR unset"
  exit 1
fi

# What changed the file system, or named a "-colvec" path, outside
# memdb1.db* (and Check's own message file, in $testdir): creates
# (O_CREAT), mkdir, rename, unlink, rmdir.
bad=$(grep -E 'O_CREAT|mkdir|rename|unlink|rmdir|-colvec' "$trace" |
  grep -v -- '= -1 E' |
  grep -v -F "$testdir/memdb1.db" |
  grep -v -E "\"$testdir/check_[^/\"]*\"" |
  grep -v -E '"/(proc|sys|dev)/' |
  grep -v -E 'mount\(|umount')
n=$(grep -c . "$trace")
if [ -n "$bad" ]; then
  echo "FAIL: file-system changes outside $testdir/memdb1.db*:"
  echo "$bad" | head -20
  exit 1
fi
echo "ok: $n traced file-system calls, none created, renamed or removed a"
echo "    file outside $testdir/memdb1.db* or named a -colvec path"
rm -f "$trace"
exit 0
