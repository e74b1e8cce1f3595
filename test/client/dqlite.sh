#!/bin/bash
# dqlite.sh — a colvec table carried by dqlite (Raft replication of
# database pages): three dqlite-demo nodes on loopback, each in its own
# working directory, with colvec registered in each node process by a
# preloaded library (test/client/replica/dq_preload.c). Through the leader, with
# the dqlite shell: a table created without storage= is embedded (the
# database is not a file, so the default is embedded and storage=sidecar
# is refused); 3,000 rows loaded (segments with HNSW graphs); a filtered
# and an unfiltered KNN. Then the leader is killed with SIGKILL: the new
# leader answers both row for row as before and takes writes; the killed
# node is restarted and catches up; every node's database (fetched with
# the shell's .dump) passes integrity-check and gives the same rows and
# KNN answers; no node wrote a -colvec folder in its working directory.
#
# dqlite comes from Debian's libdqlite0 and go-dqlite packages
# (tool/install-deps.sh). The whole run is bounded (COLVEC_DQLITE_TIMEOUT
# seconds, 150 by default) and stops every node it started on exit.
# Environment: COLVEC_EXT (the extension), COLVEC_TESTDIR (scratch folder).
# Exit status: 0 passed, 1 failed, 77 skipped (packages missing; a failure
# under CI=true).
here=$(cd "$(dirname "$0")" && pwd) && top=$(cd "$here/../.." && pwd)
ext=${COLVEC_EXT:-$here/../../build/colvec.so}
work=${COLVEC_TESTDIR:-/tmp}/dqlite
prog=dqlite hint="tool/install-deps.sh (libdqlite0, go-dqlite)"
. "$top/tool/lib.sh" # missing: a skip, or a failure under CI=true

[ "$(uname -s)" = Linux ] || { echo "SKIP: dqlite runs on Linux only"; exit 77; }
command -v dqlite-demo >/dev/null 2>&1 || missing "dqlite-demo not found (go-dqlite)"
command -v dqlite >/dev/null 2>&1 || missing "the dqlite shell not found (go-dqlite)"
command -v tclsh >/dev/null 2>&1 || missing "tclsh not found"
command -v cc >/dev/null 2>&1 || missing "no C compiler (cc)"
[ -f "$ext" ] || { echo "ERROR: extension $ext not found (set COLVEC_EXT)"; exit 99; }
case $ext in /*) ;; *) ext=$PWD/$ext ;; esac

# The bound: the script runs again under timeout, whose TERM runs the trap.
if [ -z "${COLVEC_DQLITE_INNER:-}" ]; then
  COLVEC_DQLITE_INNER=1 exec timeout -s TERM "${COLVEC_DQLITE_TIMEOUT:-150}" \
    "$0" "$@"
fi

preload=${LD_PRELOAD:-} # a sanitizer runtime, kept for the node processes
unset LD_PRELOAD
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1

declare -a pid addr
stop_nodes() {
  local i
  for i in 1 2 3; do
    [ -n "${pid[$i]:-}" ] && kill -9 "${pid[$i]}" 2>/dev/null && wait "${pid[$i]}" 2>/dev/null
    pid[$i]=""
  done
}
trap 'stop_nodes' EXIT
trap 'echo "FAIL: timed out"; exit 1' TERM INT
fail() {
  echo "FAIL: $*"
  for f in "$work"/n?.log; do echo "--- $f"; tail -5 "$f"; done
  exit 1
}

cc -shared -fPIC -o dq_preload.so "$here/replica/dq_preload.c" -ldl -lpthread \
  -lsqlite3 >cc.log 2>&1 || { cat cc.log; fail "cannot build the preload library"; }

# Loopback ports of this run: node i replicates on $port+i, serves its demo
# API on $port+10+i.
port=$((20000 + ($$ % 2000) * 20))
for i in 1 2 3; do addr[$i]=127.0.0.1:$((port + i)); done
servers=${addr[1]},${addr[2]},${addr[3]}

# Starts node $1 (joining node 1 unless it is node 1) in its own folder.
start_node() {
  local i=$1 join=()
  [ "$i" = 1 ] || join=(--join "${addr[1]}")
  mkdir -p "$work/n$i"
  (cd "$work/n$i" &&
    LD_PRELOAD="${preload:+$preload:}$work/dq_preload.so" COLVEC_EXT="$ext" \
    exec dqlite-demo --api "127.0.0.1:$((port + 10 + i))" --db "${addr[$i]}" \
      --dir "$work/n$i/data" "${join[@]}" >>"$work/n$i.log" 2>&1) &
  pid[$i]=$!
}

# Runs SQL (or a dot-command) $1 on database "vec" through the leader.
q() { timeout 20 dqlite -s "$servers" vec "$1" 2>&1; }

# Waits until the cluster has a leader other than $1; prints its address.
leader() {
  local l
  for _ in $(seq 150); do
    l=$(timeout 5 dqlite -s "$servers" vec .leader 2>/dev/null | tail -1)
    case $l in 127.0.0.1:*) [ "$l" != "${1:-}" ] && { echo "$l"; return 0; } ;; esac
    sleep 0.2
  done
  return 1
}

# Fetches node $1's database into folder $2 and prints dq_check.tcl's
# report on it.
node_state() {
  rm -rf "$2" && mkdir -p "$2" &&
    (cd "$2" && timeout 20 dqlite -s "$servers" vec ".dump ${addr[$1]} vec" >/dev/null 2>&1) &&
    [ -f "$2/vec" ] &&
    LD_PRELOAD=$preload tclsh "$here/replica/dq_check.tcl" "$2/vec" "$ext" 2>&1
}

start_node 1
sleep 1
start_node 2
start_node 3
lead=$(leader) || fail "no leader elected"
for _ in $(seq 100); do
  [ "$(q .cluster | grep -c voter)" = 3 ] && break
  sleep 0.2
done
[ "$(q .cluster | grep -c voter)" = 3 ] || fail "three voters expected: $(q .cluster)"
echo "leader $lead"

# storage: embedded by default, sidecar refused
out=$(q "CREATE VIRTUAL TABLE t USING colvec(e float[8], cat text, n integer, delta_rows=500)") ||
  fail "CREATE: $out"
[ "$(q "SELECT count(*) FROM sqlite_schema WHERE name = 't_segdata'")" = 1 ] ||
  fail "the table is not embedded by default"
out=$(q "CREATE VIRTUAL TABLE s USING colvec(e float[8], storage=sidecar)")
case $out in
  *"colvec: storage=sidecar is not possible for table s"*"write storage=embedded"*) ;;
  *) fail "storage=sidecar was not refused: $out" ;;
esac

# 3,000 rows in three transactions (each compacts), then optimize
for b in 0 1 2; do
  out=$(q "WITH RECURSIVE c(i) AS (SELECT $((b * 1000 + 1)) UNION ALL SELECT i + 1 FROM c
            WHERE i < $((b * 1000 + 1000)))
          INSERT INTO t(rowid, e, cat, n)
          SELECT i, '[' || (i * 7 % 101) || ',' || (i * 13 % 97) || ',' || (i * 17 % 89) || ','
                 || (i * 19 % 83) || ',' || (i * 23 % 79) || ',' || (i * 29 % 73) || ','
                 || (i * 31 % 71) || ',' || (i * 37 % 67) || ']', 'c' || (i % 5), i % 7
          FROM c") || fail "load $b: $out"
done
out=$(q "INSERT INTO t(t) VALUES('optimize')") || fail "optimize: $out"
[ "$(q "SELECT count(*) FROM t")" = 3000 ] || fail "3000 rows expected: $(q "SELECT count(*) FROM t")"
knn1="SELECT rowid, cat, distance FROM t WHERE e MATCH '[50,50,50,50,50,50,50,50]' AND k = 10 AND cat = 'c3' AND n >= 2"
knn2="SELECT rowid, distance FROM t WHERE e MATCH '[10,90,20,80,30,70,40,60]' AND k = 20"
a1=$(q "$knn1") && a2=$(q "$knn2") || fail "KNN on the leader: $a1 $a2"
[ "$(echo "$a1" | wc -l)" = 10 ] && [ "$(echo "$a2" | wc -l)" = 20 ] ||
  fail "KNN row counts: $a1 / $a2"
out=$(q "INSERT INTO t(t) VALUES('integrity-check')") || fail "integrity-check: $out"

# the leader dies
for i in 1 2 3; do [ "${addr[$i]}" = "$lead" ] && dead=$i; done
kill -9 "${pid[$dead]}" && wait "${pid[$dead]}" 2>/dev/null
pid[$dead]=""
lead2=$(leader "$lead") || fail "no new leader after killing $lead"
echo "killed node $dead ($lead), new leader $lead2"
b1=$(q "$knn1") && b2=$(q "$knn2") || fail "KNN on the new leader: $b1 $b2"
[ "$a1" = "$b1" ] || fail "filtered KNN differs on the new leader: $a1 / $b1"
[ "$a2" = "$b2" ] || fail "KNN differs on the new leader: $a2 / $b2"
out=$(q "INSERT INTO t(rowid, e, cat, n) VALUES (3001, '[50,50,50,50,50,50,50,51]', 'c3', 6)") &&
  out=$(q "DELETE FROM t WHERE rowid <= 40") &&
  out=$(q "UPDATE t SET n = 2 WHERE rowid BETWEEN 41 AND 60") ||
  fail "writes on the new leader: $out"
c1=$(q "$knn1") || fail "KNN after the writes: $c1"
echo "$c1" | head -1 | grep -q '^3001|c3|' || fail "the new row is not the nearest: $c1"
[ "$(q "SELECT count(*) FROM t")" = 2961 ] || fail "2961 rows expected"

# the killed node comes back and catches up; every node agrees
start_node "$dead"
ref=$(node_state "$(for i in 1 2 3; do [ "${addr[$i]}" = "$lead2" ] && echo $i; done)" "$work/dump-leader") ||
  fail "the new leader's database: $ref"
echo "$ref" | grep -q '^rows 2961 ' || fail "the new leader's dump: $ref"
for _ in $(seq 60); do
  got=$(node_state "$dead" "$work/dump-$dead") && [ "$got" = "$ref" ] && break
  sleep 0.5
done
[ "$got" = "$ref" ] || fail "the restarted node did not catch up: $got / $ref"
# a follower applies the last committed writes once the leader tells it
# they are committed: each node gets the time the restarted one had
for i in 1 2 3; do
  for _ in $(seq 60); do
    got=$(node_state "$i" "$work/dump-$i") && [ "$got" = "$ref" ] && break
    sleep 0.5
  done
  [ "$got" = "$ref" ] || fail "node $i differs: $got / $ref"
  found=$(find "$work/n$i" -name '*-colvec')
  [ -z "$found" ] || fail "node $i wrote $found"
done
echo "$ref" | sed 's/^/  /' | cut -c1-100
echo "PASS: dqlite: failover, writes, catch-up and integrity on 3 nodes"
exit 0
