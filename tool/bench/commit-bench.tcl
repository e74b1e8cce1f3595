# commit-bench.tcl — a bulk load in one transaction, then queries, as a new
# user runs them: how long the INSERTs and the COMMIT take, recall@10 and
# p50 latency of KNN queries right after the COMMIT, how long the 'index'
# command takes, and the queries again after it. Each table option set is
# run in the same process on the same data, so the figures compare.
#
# usage: tclsh tool/bench/commit-bench.tcl EXT [-n ROWS] [-dim D] [-queries Q]
#            [-dir DIR] [-step N] [-configs {{OPTIONS STEP} ...}] [-trace 1]
#
# EXT is colvec.so (loaded through Tcl's sqlite3 package, as an app would).
# The data: ROWS (default 10000) seeded float32 vectors of D (default 384)
# dimensions around 100 random centres (normal, sd 1 around centres of sd
# 1), the first ROWS of them loaded; queries are Q (default 100) further
# points of the same mixture. Each configuration is a string of table
# options and the budget of the 'index' commands run after the queries (0:
# one 'index' that builds everything; N: 'index=N' until no segment is
# pending, timing each step). The default configurations: the defaults
# with one 'index', the defaults with 'index=STEP' (-step, default 500),
# and "defer_rows=0", which builds the graph inside the COMMIT as colvec
# did before deferred graphs. The exact answers are a brute force in SQL
# (colvec_distance_l2). Prints one markdown table; with -trace 1, then
# each configuration's step times in order (seconds), the last two being
# the step that completes the graph and the one that rewrites its segment.
package require sqlite3

set ext [lindex $argv 0]
if {$ext eq "" || [string match -* $ext]} {
  puts stderr "usage: tclsh commit-bench.tcl EXT \[-n ROWS\] \[-dim D\] \[-queries Q\] \[-dir DIR\] \[-configs LIST\] \[-trace 1\]"
  exit 2
}
array set opt [list -n 10000 -dim 384 -queries 100 -dir . -step 500 \
                 -configs {} -trace 0]
foreach {k v} [lrange $argv 1 end] {
  if {![info exists opt($k)]} { puts stderr "unknown option $k"; exit 2 }
  set opt($k) $v
}
if {$opt(-configs) eq ""} {
  set opt(-configs) [list {"" 0} [list "" $opt(-step)] {defer_rows=0 0}]
}
set n $opt(-n)
set dim $opt(-dim)
set nq $opt(-queries)

# Standard normal deviate (Box-Muller) from Tcl's seeded rand().
proc gauss {} {
  set u [expr {rand()}]
  if {$u < 1e-12} { set u 1e-12 }
  expr {sqrt(-2.0 * log($u)) * cos(6.283185307179586 * rand())}
}

expr {srand(26)}
set centres {}
for {set c 0} {$c < 100} {incr c} {
  set v {}
  for {set d 0} {$d < $dim} {incr d} { lappend v [gauss] }
  lappend centres $v
}
# A point of the mixture, as a float32 blob.
proc point {} {
  global centres
  set v {}
  foreach x [lindex $centres [expr {int(rand() * 100)}]] {
    lappend v [expr {$x + [gauss]}]
  }
  binary format f* $v
}

# The data and the queries live in a plain table of their own database.
set src [file join $opt(-dir) commit-bench-src.db]
file delete -force $src
sqlite3 src $src
src enable_load_extension 1
src eval {SELECT load_extension($ext)}
src eval {CREATE TABLE data(id INTEGER PRIMARY KEY, e BLOB)}
src transaction {
  for {set i 1} {$i <= $n} {incr i} {
    set b [point]
    src eval {INSERT INTO data VALUES ($i, $b)}
  }
}
set queries {}
for {set i 0} {$i < $nq} {incr i} { lappend queries [point] }
set truth {}
foreach q $queries {
  lappend truth [src eval {SELECT id FROM data
                            ORDER BY colvec_distance_l2(e, $q) LIMIT 10}]
}
src close

# Seconds since t0 (clock microseconds).
proc since {t0} { expr {([clock microseconds] - $t0) / 1e6} }

# Runs every query on db's table t; returns {recall p50_ms}.
proc run_queries {} {
  global queries truth
  set hit 0
  set times {}
  foreach q $queries want $truth {
    set t0 [clock microseconds]
    set got [db eval {SELECT rowid FROM t WHERE e MATCH $q AND k = 10}]
    lappend times [expr {([clock microseconds] - $t0) / 1000.0}]
    foreach r $got { if {$r in $want} { incr hit } }
  }
  set times [lsort -real $times]
  list [expr {double($hit) / (10 * [llength $queries])}] \
    [lindex $times [expr {[llength $times] / 2}]]
}

puts "$n x $dim, one transaction, $nq queries (k = 10)\n"
puts "| options | INSERTs | COMMIT | after COMMIT: search, recall@10, p50 | indexing: command, steps, median / max step, total | after it: recall@10, p50 |"
puts "|---|---:|---:|---|---|---|"
foreach cfgstep $opt(-configs) {
  lassign $cfgstep cfg step
  set path [file join $opt(-dir) commit-bench.db]
  foreach f [list $path $path-journal $path-wal $path-colvec] {
    file delete -force $f
  }
  sqlite3 db $path
  db enable_load_extension 1
  db eval {SELECT load_extension($ext)}
  db eval "ATTACH '$src' AS src"
  set opts [expr {$cfg eq "" ? "" : ", $cfg"}]
  db eval "CREATE VIRTUAL TABLE t USING colvec(e float\[$dim\]$opts)"
  db eval BEGIN
  set t0 [clock microseconds]
  db eval {INSERT INTO t(rowid, e) SELECT id, e FROM src.data}
  set tIns [since $t0]
  set t0 [clock microseconds]
  db eval COMMIT
  set tCommit [since $t0]
  set way [db one {SELECT group_concat(search) FROM colvec_segments('t')
                     WHERE segid IS NOT NULL}]
  lassign [run_queries] r1 p1
  set cmd [expr {$step > 0 ? "index=$step" : "index"}]
  set steps {}
  while {[db one {SELECT count(*) FROM colvec_segments('t')
                   WHERE indexed = 'pending'}] > 0 || $steps eq ""} {
    set t0 [clock microseconds]
    if {[catch {db eval {INSERT INTO t(t) VALUES ($cmd)}} msg]} {
      # a build before the index command (every graph built in COMMIT)
      if {![string match "*unknown command*" $msg]} { error $msg }
      set cmd "none"
    }
    lappend steps [since $t0]
    if {$cmd eq "none"} break
  }
  set total [tcl::mathop::+ {*}$steps]
  set sorted [lsort -real $steps]
  lassign [run_queries] r2 p2
  db close
  puts [format "| %s | %.2f s | %.2f s | %s, %.3f, %.2f ms | '%s': %d, %.3f / %.3f s, %.2f s | %.3f, %.2f ms |" \
          [expr {$cfg eq "" ? "defaults" : $cfg}] $tIns $tCommit $way $r1 $p1 \
          $cmd [llength $steps] [lindex $sorted [expr {[llength $sorted] / 2}]] \
          [lindex $sorted end] $total $r2 $p2]
  if {$opt(-trace)} {
    lappend trace "steps of '$cmd' ([expr {$cfg eq "" ? "defaults" : $cfg}]):"
    lappend trace [join [lmap t $steps { format %.3f $t }] " "]
  }
}
if {[info exists trace]} { puts [join $trace \n] }
file delete -force $src
