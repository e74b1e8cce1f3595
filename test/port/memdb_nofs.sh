#!/bin/bash
# memdb_nofs.sh — tables of databases without a file need no file system:
# runs test/sql/memdb1.test and test/unit/check_memdb with TMPDIR unset and /tmp
# read-only (a read-only bind mount of it in a private mount namespace,
# `unshare -m`: as root, permissions alone would not stop a write; only
# this suite's own folder stays writable when it lies under /tmp), under
# `strace -f`, and then fails when the trace shows colvec
# creating, renaming or removing anything, or naming a "-colvec" path,
# outside the one file database memdb1.test uses on purpose
# (memdb1.db, its journal and its folder, in $COLVEC_TESTDIR/nofs: not the
# files of the memdb1.test that make check runs beside it). That file
# table's segment writes are in the trace too: they show it records
# colvec's file calls.
#
# Environment: COLVEC_EXT and COLVEC_TESTDIR as for the Tcl suites (set by
# make check), TCLSH (default tclsh), CHECK_MEMDB (default
# test/unit/check_memdb in the current folder; skipped when not built). Also
# runs a session in the sqlite3 shell and one in /usr/bin/python3.
# Exit status: 0 when clean; 1 on a failure; 77 (automake SKIP) without
# strace or when unshare is refused (no privilege), except under CI,
# where both are failures (tool/install-deps.sh installs strace).

here=$(cd "$(dirname "$0")" && pwd)
prog=memdb_nofs hint="tool/install-deps.sh"
. "$here/../../tool/lib.sh" # ci_strict
tclsh=${TCLSH:-tclsh}
testdir=${COLVEC_TESTDIR:-$PWD/test/tmp}/nofs
check=${CHECK_MEMDB:-$PWD/test/unit/check_memdb}

skip() {
  if ci_strict; then
    echo "FAIL: $* (CI: required)"
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

# The runs, inside the namespace: /tmp read-only, TMPDIR unset: the Tcl
# suite, the Check suite, a session in the sqlite3 shell and one in
# Python's sqlite3 module (Debian's /usr/bin/python3, which can load
# extensions), each on ":memory:". The trace goes to $testdir (not /tmp).
py=/usr/bin/python3
[ -x "$py" ] || skip "$py not found"
inner=$testdir/memdb_nofs.inner
cat >"$inner" <<EOF
set -e
# /tmp read-only: a read-only bind of itself. When this suite's own
# folder is under /tmp (a build folder there), that one folder is bound
# writable again; everything else under /tmp stays read-only.
mount --bind /tmp /tmp
mount -o remount,bind,ro /tmp
case "$testdir" in
  /tmp/*)
    mount --bind "$testdir" "$testdir"
    mount -o remount,bind,rw "$testdir"
    ;;
esac
if touch /tmp/colvec-probe-\$\$ 2>/dev/null; then
  echo "FAIL: /tmp is still writable"; exit 1
fi
unset TMPDIR
COLVEC_TESTDIR="$testdir" "$tclsh" "$here/../sql/memdb1.test"
if [ -x "$check" ]; then
  # Check itself needs a file for its messages: in \$COLVEC_TESTDIR (TEMP)
  CK_FORK=no CK_RUN_CASE=memdb TEMP="$testdir" "$check"
else
  echo "note: $check is not built; only memdb1.test ran"
fi
out=\$(sqlite3 :memory: ".load ${COLVEC_EXT%.so}" \
  "CREATE VIRTUAL TABLE t USING colvec(e float[2], delta_rows=4)" \
  "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i<50) INSERT INTO t(rowid, e) SELECT i, json_array(i, i) FROM s" \
  "INSERT INTO t(t) VALUES('optimize')" \
  "SELECT count(*) FROM t_manifest" \
  "SELECT rowid FROM t WHERE e MATCH '[7,7]' AND k = 2")
[ "\$(echo \$out)" = "1 7 6" ] || { echo "FAIL: shell session: \$out"; exit 1; }
echo "shell session: ok"
"$py" - <<'PY'
import os, sqlite3
c = sqlite3.connect(":memory:")
c.enable_load_extension(True)
c.load_extension(os.environ["COLVEC_EXT"])
c.execute("CREATE VIRTUAL TABLE t USING colvec(e float[3], delta_rows=8)")
with c:
    c.executemany("INSERT INTO t(rowid, e) VALUES (?, ?)",
                  [(i, "[%d,%d,%d]" % (i, i % 7, 1)) for i in range(1, 201)])
c.execute("BEGIN")
c.executemany("INSERT INTO t(rowid, e) VALUES (?, '[0,0,0]')",
              [(i,) for i in range(1000, 1100)])
c.execute("ROLLBACK")
c.execute("INSERT INTO t(t) VALUES('integrity-check')")
got = [r[0] for r in c.execute(
    "SELECT rowid FROM t WHERE e MATCH '[100,2,1]' AND k = 3")]
assert got == [100, 99, 101], got
assert c.execute("SELECT count(*) FROM t").fetchone()[0] == 200
c.close()
print("python session: ok")
PY
EOF
strace -f -qq -o "$trace" -e trace=%file \
  unshare -m --propagation private bash "$inner"
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: the suites failed (exit $rc) with /tmp read-only, TMPDIR unset"
  exit 1
fi

# The processes of mount(8) that set up the namespace: their own calls
# are not colvec's (on a machine where it never ran, mount creates
# /run/mount for its table of mounts). Their pids, from their execve.
mountpids=$(sed -n -E 's|^([0-9]+) +execve\("[^"]*/mount".*|\1|p' "$trace")

# What changed the file system, or named a "-colvec" path, outside
# memdb1.db* (and Check's own message file, and the folder memdb1.test
# makes its current folder, in $testdir), by any process but mount:
# creates (O_CREAT), mkdir, rename, unlink, rmdir.
bad=$(grep -E 'O_CREAT|mkdir|rename|unlink|rmdir|-colvec' "$trace" |
  awk -v pids=" $(echo $mountpids) " 'index(pids, " " $1 " ") == 0' |
  grep -v -- '= -1 E' |
  grep -v -F "$testdir/memdb1.db" |
  grep -v -E "\"$testdir/check_[^/\"]*\"" |
  grep -v -F "\"$testdir/memdb1-cwd\"" |
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
rm -f "$trace" "$inner"
exit 0
