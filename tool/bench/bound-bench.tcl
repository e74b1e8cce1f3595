# bound-bench.tcl — latency and recall of KNN queries with `distance`
# bounds on a loaded colvec table `t` (column `embedding`, l2), against a
# brute force (a full scan with colvec_distance_l2), for 50 queries taken
# from the table's own rows: no bound, `distance >` the 10th, 100th and
# 1,000th nearest distance (k = 10, a page deep in the ranking), and
# `distance <` a threshold holding 5 rows (k = 50).
#
# Usage: tclsh tool/bench/bound-bench.tcl COLVEC.so DATABASE
# (DATABASE: e.g. the one `colvec-bench --phase path` names.)
package require sqlite3
lassign $argv so path
sqlite3 db $path
db enable_load_extension 1
db eval {SELECT load_extension($so)}
expr {srand(7)}
set n [db one {SELECT max(rowid) FROM t}]
set qs {}
for {set i 0} {$i < 50} {incr i} {
  set r [expr {1 + int(rand() * $n)}]
  lappend qs [db one {SELECT embedding FROM t WHERE rowid = $r}]
}
# truth: rowid, distance of the 1,010 nearest rows of each query
set truth {}
foreach q $qs {
  lappend truth [db eval {SELECT rowid, colvec_distance_l2(embedding, $q) d FROM t ORDER BY d, rowid LIMIT 1010}]
}
# A bound midway between the (j+1)-th and (j+2)-th distances of truth $t.
proc mid {t j} { expr {([lindex $t [expr {2*$j+1}]] + [lindex $t [expr {2*$j+3}]]) / 2.0} }
# Rowids of truth $t from position a to b - 1.
proc ids {t a b} { set o {}; foreach {r d} [lrange $t [expr {2*$a}] [expr {2*$b-1}]] { lappend o $r }; return $o }
# Times $sql over every query ($b from script boundof, per query and its
# truth $t) and prints ms per query and recall against script wantof.
proc run {name sql boundof wantof} {
  global qs truth
  set res {}
  set t0 [clock microseconds]
  foreach q $qs t $truth {
    set b [eval $boundof]
    lappend res [db eval $sql]
  }
  set dt [expr {([clock microseconds] - $t0) / 1000.0 / [llength $qs]}]
  set hit 0; set tot 0
  foreach r $res t $truth {
    set w [eval $wantof]
    foreach x $r { if {$x in $w} { incr hit } }
    incr tot [llength $w]
  }
  puts [format "%-40s %7.3f ms/query  recall %.4f" $name $dt [expr {double($hit)/$tot}]]
}
run "k=10, no bound" {SELECT rowid FROM t WHERE embedding MATCH $q AND k = 10} {expr 0} {ids $t 0 10}
foreach depth {10 100 1000} {
  run "k=10, distance > ${depth}th nearest" {SELECT rowid FROM t WHERE embedding MATCH $q AND k = 10 AND distance > $b} "mid \$t [expr {$depth - 1}]" "ids \$t $depth [expr {$depth + 10}]"
}
run "k=50, distance < 5th..6th nearest" {SELECT rowid FROM t WHERE embedding MATCH $q AND k = 50 AND distance < $b} {mid $t 4} {ids $t 0 5}
