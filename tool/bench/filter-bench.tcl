# filter-bench.tcl — recall and latency of filtered KNN (rowid <= limit,
# pushed into the search) on an indexed table against the same rows in an
# exact (index=none quantize=none) table, through Tcl's sqlite3 package.
#
# usage: tclsh tool/bench/filter-bench.tcl EXT INDEXED_DB EXACT_DB [LIMITS]
# EXT is colvec.so; both databases hold table t(embedding ...) with the
# same rows (colvec-bench's m1-default and m1-exact loads, for example);
# LIMITS is a Tcl list of rowid bounds (default {20000 60000 100000
# 300000}). 50 queries are stored vectors of random rows; k = 10, at the
# default ef and at ef = 200. Prints recall@10, rows returned per query
# (always 10 when the filter leaves enough) and ms per query.
package require sqlite3

lassign $argv ext zIndexed zExact limits
if {$zExact eq ""} {
  puts stderr "usage: tclsh filter-bench.tcl EXT INDEXED_DB EXACT_DB \[LIMITS\]"
  exit 2
}
if {$limits eq ""} { set limits {20000 60000 100000 300000} }
sqlite3 db $zIndexed
sqlite3 dx $zExact
foreach d {db dx} {
  $d enable_load_extension 1
  $d eval { SELECT load_extension($ext) }
}
set nrow [db one { SELECT max(rowid) FROM t }]
expr {srand(11)}
set qs {}
for {set i 0} {$i < 50} {incr i} {
  set r [expr {1 + int(rand() * $nrow)}]
  lappend qs [db one { SELECT embedding FROM t WHERE rowid = $r }]
}
foreach lim $limits {
  foreach extra {"" "AND ef = 200"} {
    set sql "SELECT rowid FROM t WHERE embedding MATCH \$q AND k = 10 AND rowid <= $lim"
    set nGot 0
    set t0 [clock microseconds]
    foreach q $qs { incr nGot [llength [db eval "$sql $extra"]] }
    set ms [expr {([clock microseconds] - $t0) / 1e3 / [llength $qs]}]
    set hit 0
    foreach q $qs {
      set truth [dx eval $sql]
      foreach r [db eval "$sql $extra"] { if {$r in $truth} { incr hit } }
    }
    puts [format "rowid <= %-8d (%4.1f%% of rows) %-13s recall@10 %.3f  rows/query %.1f  %.2f ms/query" \
            $lim [expr {100.0 * $lim / $nrow}] [expr {$extra eq "" ? "default ef" : "ef 200"}] \
            [expr {double($hit) / (10 * [llength $qs])}] \
            [expr {double($nGot) / [llength $qs]}] $ms]
  }
}
