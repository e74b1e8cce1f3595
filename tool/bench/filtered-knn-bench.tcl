# filtered-knn-bench.tcl — filtered KNN against the same query unfiltered,
# on Fashion-MNIST, in one run: recall@10 against the exact filtered
# answer, rows returned, p50/p99 latency and QPS for each filter shape.
#
# usage: tclsh tool/bench/filtered-knn-bench.tcl EXT [-n ROWS] [-queries Q]
#            [-db FILE] [-dir DATASET_DIR] [-options TABLE_OPTIONS]
#
# EXT is colvec.so (loaded through Tcl's sqlite3 package, as an app would).
# The table t(e float[784], label integer, a integer, p integer) holds the
# first ROWS (default 60000) training images of Fashion-MNIST (Debian's
# dataset-fashion-mnist, in DATASET_DIR, default
# /usr/share/datasets/fashion-mnist), pixels as floats 0..255, with label
# the image's class (10 values), a a seeded random integer 0..999 and p one
# 0..99. It is loaded once into FILE (default filtered-knn.db in the current
# directory; reused when it exists with the same rows and options) and
# optimized (one indexed segment at the defaults). Queries are the first Q
# (default 200) test images.
#
# Filters: none; a < 500, a < 100, a < 10, a < 1 (50 %, 10 %, 1 %, 0.1 % of
# the rows); p = 37 (1 %, equality on a 100-value column); a < 100 AND
# p < 50 (5 %, two filters); and label = (query's label + 5) % 10 — rows of
# another class than the query's, the hard, anti-correlated case (10 %: the
# query's nearest rows almost all fail it). The exact answer of each
# (query, filter) is a brute force in SQL over the same table
# (colvec_distance_l2, ORDER BY ... LIMIT 10). Each query is timed
# alone; the filters are interleaved per query so that a noisy machine
# slows them alike. Prints one markdown table.
package require sqlite3

set ext [lindex $argv 0]
if {$ext eq "" || [string match -* $ext]} {
  puts stderr "usage: tclsh filtered-knn-bench.tcl EXT \[-n ROWS\] \[-queries Q\] \[-db FILE\] \[-dir DIR\] \[-options OPTS\]"
  exit 2
}
array set opt {-n 60000 -queries 200 -db filtered-knn.db
               -dir /usr/share/datasets/fashion-mnist -options ""}
foreach {k v} [lrange $argv 1 end] {
  if {![info exists opt($k)]} { puts stderr "unknown option $k"; exit 2 }
  set opt($k) $v
}

# Reads an IDX file (gzip-compressed) and returns its payload bytes after
# the header of nDim dimensions.
proc idx_read {path nDim} {
  set fd [open $path rb]
  zlib push gunzip $fd
  set data [read $fd]
  close $fd
  return [string range $data [expr {4 + 4 * $nDim}] end]
}

# Returns image i of the raw 784-byte images in data as a float32 blob.
proc image_blob {data i} {
  binary scan [string range $data [expr {$i * 784}] [expr {$i * 784 + 783}]] cu* px
  return [binary format f* $px]
}

sqlite3 db $opt(-db)
db enable_load_extension 1
db eval { SELECT load_extension($ext) }
set want "n=$opt(-n) options=$opt(-options)"
set have ""
catch { set have [db one { SELECT v FROM bench_meta WHERE k = 'load' }] }
if {$have ne $want} {
  puts stderr "loading $opt(-n) rows into $opt(-db) ..."
  set images [idx_read [file join $opt(-dir) train-images-idx3-ubyte.gz] 3]
  set labels [idx_read [file join $opt(-dir) train-labels-idx1-ubyte.gz] 1]
  db eval {
    DROP TABLE IF EXISTS t;
    DROP TABLE IF EXISTS bench_meta;
    CREATE TABLE bench_meta(k TEXT PRIMARY KEY, v);
  }
  db eval "CREATE VIRTUAL TABLE t USING colvec(e float\[784\], label integer,
           a integer, p integer $opt(-options))"
  expr {srand(25)}
  set t0 [clock milliseconds]
  db transaction {
    for {set i 0} {$i < $opt(-n)} {incr i} {
      set e [image_blob $images $i]
      binary scan [string index $labels $i] cu label
      set a [expr {int(rand() * 1000)}]
      set p [expr {int(rand() * 100)}]
      db eval { INSERT INTO t(rowid, e, label, a, p) VALUES ($i + 1, $e, $label, $a, $p) }
    }
  }
  db eval { INSERT INTO t(t) VALUES ('optimize') }
  puts stderr "loaded and optimized in [expr {([clock milliseconds] - $t0) / 1000.0}] s"
  db eval { INSERT INTO bench_meta VALUES ('load', $want) }
}

set timages [idx_read [file join $opt(-dir) t10k-images-idx3-ubyte.gz] 3]
set tlabels [idx_read [file join $opt(-dir) t10k-labels-idx1-ubyte.gz] 1]
set queries {}
for {set i 0} {$i < $opt(-queries)} {incr i} {
  binary scan [string index $tlabels $i] cu label
  lappend queries [list [image_blob $timages $i] $label]
}

# name, WHERE text (:ql is the query's label)
set filters {
  {none {}}
  {{a < 500 (50 %)} {AND a < 500}}
  {{a < 100 (10 %)} {AND a < 100}}
  {{a < 10 (1 %)} {AND a < 10}}
  {{a < 1 (0.1 %)} {AND a < 1}}
  {{p = 37 (1 %)} {AND p = 37}}
  {{a < 100 AND p < 50 (5 %)} {AND a < 100 AND p < 50}}
  {{label = other class (10 %, anti-correlated)} {AND label = ($ql + 5) % 10}}
}

foreach f $filters {
  lassign $f name where
  set lat($name) {}
  set hit($name) 0
  set rows($name) 0
  set pass($name) 0
}
set qi 0
foreach qq $queries {
  lassign $qq q ql
  incr qi
  foreach f $filters {
    lassign $f name where
    set t0 [clock microseconds]
    set got [db eval "SELECT rowid FROM t WHERE e MATCH \$q AND k = 10 $where"]
    lappend lat($name) [expr {[clock microseconds] - $t0}]
    set truth [db eval "SELECT rowid FROM t WHERE 1 $where
                        ORDER BY colvec_distance_l2(e, \$q) LIMIT 10"]
    incr rows($name) [llength $got]
    incr pass($name) [llength $truth]
    foreach r $got { if {$r in $truth} { incr hit($name) } }
  }
}

# Returns the q-quantile (0..1) of a list of numbers.
proc quantile {l q} {
  set s [lsort -real $l]
  return [lindex $s [expr {min([llength $s] - 1, int($q * [llength $s]))}]]
}

set base [quantile $lat(none) 0.5]
puts "| filter | recall@10 | rows/query (exact) | p50 ms | p99 ms | QPS | p50 vs unfiltered |"
puts "|---|---:|---:|---:|---:|---:|---:|"
foreach f $filters {
  set name [lindex $f 0]
  set n [llength $lat($name)]
  set p50 [quantile $lat($name) 0.5]
  set sum 0
  foreach v $lat($name) { set sum [expr {$sum + $v}] }
  puts [format "| %s | %.3f | %.1f (%.1f) | %.3f | %.3f | %.0f | %.2fx |" $name \
          [expr {$pass($name) ? double($hit($name)) / $pass($name) : 1.0}] \
          [expr {double($rows($name)) / $n}] [expr {double($pass($name)) / $n}] \
          [expr {$p50 / 1000.0}] [expr {[quantile $lat($name) 0.99] / 1000.0}] \
          [expr {$sum ? 1e6 * $n / $sum : 0}] [expr {double($p50) / $base}]]
}
db close
