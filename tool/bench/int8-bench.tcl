# int8-bench.tcl — indexed vs exact KNN on an int8[N] or bit[N] column,
# through Tcl's sqlite3 package (doc/BENCHMARKS.md, "int8 and bit columns").
#
# usage: tclsh tool/bench/int8-bench.tcl EXT [--type int8|bit] [--dim N] [--n ROWS]
#                                      [--queries Q] [--db PATH]
# EXT is the path of colvec.so. Loads the same seeded clustered rows (32
# clusters) into two tables, the default (HNSW graph on the stored
# vectors) and index=none (exact), then times Q queries (k = 10) on each,
# alternating twice, and prints QPS and recall@10 of the indexed table
# against the exact one (a result counts when it is no farther than the
# exact 10th: bit distances tie often).
package require sqlite3

array set opt {--type int8 --dim 128 --n 50000 --queries 200 --db /tmp/int8-bench.db}
set ext [lindex $argv 0]
foreach {k v} [lrange $argv 1 end] {
  if {![info exists opt($k)]} { puts stderr "int8-bench: unknown option $k"; exit 2 }
  set opt($k) $v
}
set dim $opt(--dim)
set type $opt(--type)
if {$type ni {int8 bit}} { puts stderr "int8-bench: --type int8 or bit"; exit 2 }

foreach f [glob -nocomplain $opt(--db) $opt(--db)-*] { file delete -force $f }
sqlite3 db $opt(--db)
db enable_load_extension 1
db eval { SELECT load_extension($ext) }

# Seeded cluster centres: int8 values, or bit probabilities.
expr {srand(7)}
set centres {}
for {set c 0} {$c < 32} {incr c} {
  set v {}
  for {set d 0} {$d < $dim} {incr d} { lappend v [expr {int(rand() * 160) - 80}] }
  lappend centres $v
}
# A row near a random centre, as the column's BLOB.
proc sample {} {
  global centres type
  set c [lindex $centres [expr {int(rand() * [llength $centres])}]]
  if {$type eq "int8"} {
    return [binary format c* [lmap x $c {
      expr {max(-128, min(127, $x + int(rand() * 61) - 30))}
    }]]
  }
  # bit: each bit set with a probability that follows the centre
  return [binary format b* [join [lmap x $c {
    expr {rand() * 160 < $x + 80 ? 1 : 0}
  }] ""]]
}

set col "e $type\[$dim\]"
db eval "CREATE VIRTUAL TABLE ti USING colvec($col)"
db eval "CREATE VIRTUAL TABLE tx USING colvec($col index=none)"
set t0 [clock milliseconds]
db transaction {
  for {set i 1} {$i <= $opt(--n)} {incr i} {
    set b [sample]
    db eval { INSERT INTO ti(rowid, e) VALUES ($i, $b) }
  }
}
set t1 [clock milliseconds]
db transaction { db eval { INSERT INTO tx(rowid, e) SELECT rowid, e FROM ti } }
puts [format "load: indexed %.1f s (with row generation in Tcl), exact %.1f s" \
        [expr {($t1 - $t0) / 1e3}] [expr {([clock milliseconds] - $t1) / 1e3}]]

set qs {}
for {set i 0} {$i < $opt(--queries)} {incr i} { lappend qs [sample] }
foreach t {tx ti tx ti} {
  set res($t) {}
  set t0 [clock microseconds]
  foreach q $qs {
    lappend res($t) [db eval "SELECT distance FROM $t WHERE e MATCH \$q AND k = 10"]
  }
  set dt [expr {([clock microseconds] - $t0) / 1e6}]
  puts [format "%s: %.1f QPS" [expr {$t eq "ti" ? "indexed" : "exact  "}] \
          [expr {[llength $qs] / $dt}]]
}
set hit 0
foreach a $res(tx) b $res(ti) {
  set kth [lindex $a end]
  foreach d $b { if {$d <= $kth + 1e-9} { incr hit } }
}
puts [format "recall@10 %.4f (%s\[%d\], %d rows, %d queries)" \
        [expr {$hit / (10.0 * [llength $qs])}] $type $dim $opt(--n) [llength $qs]]
db close
