# statement-bench.tcl — the cost of colvec's shadow-table statements, for a
# before/after comparison of two builds (run each a few times, interleaved).
# Not a test: it asserts nothing and is not part of `make check`.
#
# usage: tclsh tool/bench/statement-bench.tcl EXT DBPATH [NKNN]
#   EXT     the colvec.so to load
#   DBPATH  a scratch database (deleted first, with its -colvec folder)
#   NKNN    KNN queries to run (default 2000)
#
# Three phases on one table (float[32] + an integer column, delta_rows=2000,
# WAL, synchronous=OFF, seeded data):
#   insert  4000 single-row autocommit INSERTs: each commit writes the delta
#           (cached INSERT), reads the config, asks the journal mode and
#           prunes the trash; the 2001st writes a segment
#   delete  500 single-row autocommit DELETEs of segment rows (tombstones)
#   knn     NKNN queries, k = 10, half of them filtered (tag = 3)
# Prints one line: wall and CPU milliseconds (utime + stime of this process,
# 10 ms resolution) of each phase, and the number of KNN rows returned.
package require sqlite3
lassign $argv ext path nKnn
if {$ext eq "" || $path eq ""} {
  puts stderr "usage: tclsh statement-bench.tcl EXT DBPATH \[NKNN\]"
  exit 2
}
if {$nKnn eq ""} { set nKnn 2000 }
foreach f [list $path $path-wal $path-shm $path-journal $path-colvec] {
  file delete -force $f
}
sqlite3 db $path
db enable_load_extension 1
db eval { SELECT load_extension($ext) }
db eval { PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF }
db eval {
  CREATE VIRTUAL TABLE v USING colvec(e float[32], tag integer, delta_rows=2000)
}
expr {srand(7)}

# CPU milliseconds used by this process so far.
proc cpu {} {
  set f [open /proc/self/stat]
  set l [read $f]
  close $f
  set l [string range $l [expr {[string last ")" $l] + 2}] end]
  return [expr {([lindex $l 11] + [lindex $l 12]) * 10}]
}

# A random vector as JSON.
proc vec {} {
  set l {}
  for {set i 0} {$i < 32} {incr i} { lappend l [format %.4f [expr {rand()}]] }
  return "\[[join $l ,]\]"
}

set t0 [clock microseconds]; set c0 [cpu]
for {set i 1} {$i <= 4000} {incr i} {
  set e [vec]
  db eval { INSERT INTO v(rowid, e, tag) VALUES($i, $e, $i % 10) }
}
set tIns [expr {([clock microseconds] - $t0) / 1000.0}]
set cIns [expr {[cpu] - $c0}]

set t0 [clock microseconds]; set c0 [cpu]
for {set i 1} {$i <= 1000} {incr i 2} {
  db eval { DELETE FROM v WHERE rowid = $i }
}
set tDel [expr {([clock microseconds] - $t0) / 1000.0}]
set cDel [expr {[cpu] - $c0}]

set qs {}
for {set i 0} {$i < 50} {incr i} { lappend qs [vec] }
set t0 [clock microseconds]; set c0 [cpu]
set n 0
for {set i 0} {$i < $nKnn} {incr i} {
  set q [lindex $qs [expr {$i % 50}]]
  if {$i % 2} {
    db eval { SELECT rowid FROM v WHERE e MATCH $q AND k = 10 } { incr n }
  } else {
    db eval {
      SELECT rowid FROM v WHERE e MATCH $q AND k = 10 AND tag = 3
    } { incr n }
  }
}
set tKnn [expr {([clock microseconds] - $t0) / 1000.0}]
set cKnn [expr {[cpu] - $c0}]

puts [format "wall ms: insert %5.0f delete %4.0f knn %5.0f   cpu ms: insert %5d delete %4d knn %5d   knn rows %d" \
  $tIns $tDel $tKnn $cIns $cDel $cKnn $n]
db close
