# partition-bench.tcl — KNN inside one partition of a multi-tenant table
# against the same query on a table holding only that partition's rows,
# and the load of the partitioned table against the same rows without a
# partition key, in one run.
#
# usage: tclsh tool/bench/partition-bench.tcl EXT [-small N] [-small-rows R]
#            [-large N] [-large-rows R] [-dim D] [-queries Q] [-sample S]
#            [-work DIR] [-options TABLE_OPTIONS] [-reuse 1]
#
# EXT is colvec.so (loaded through Tcl's sqlite3 package, as an app would).
# Rows are seeded synthetic vectors (D dimensions, default 64): 200
# clusters, a row its cluster's center plus uniform noise. Partition p of
# the N small ones (default 1,000) holds R rows (default 300), each of the
# large ones (default 10) R rows (default 30,000); rows of all partitions
# are inserted interleaved, in one transaction, into part.db's
# t(e float[D], part integer partition key), then optimized; the same rows
# go into flat.db's t(e float[D]) (no partition key). Both loads are timed.
# For S (default 5) small and S large partitions, their rows are also put
# in a table of their own (one.db), optimized. Each query (Q per sampled
# partition, default 40, rows of the partition's clusters) runs on t with
# part = ? and on the partition's own table, interleaved (the two taking
# turns at going first), after a warm-up of 3 queries per partition (the
# first query of a partition, and the one that builds the column's value
# order, are reported apart). Recall@10 is against an exact scan of the
# partition's own table, made before the timed queries. Prints markdown.
# -reuse 1 queries the databases a previous run with the same options left
# in DIR (another build, say) without loading them again.
package require sqlite3

set ext [lindex $argv 0]
if {$ext eq "" || [string match -* $ext]} {
  puts stderr "usage: tclsh partition-bench.tcl EXT \[-small N\] \[-small-rows R\] \[-large N\] \[-large-rows R\] \[-dim D\] \[-queries Q\] \[-sample S\] \[-work DIR\] \[-options OPTS\]"
  exit 2
}
array set opt {-small 1000 -small-rows 300 -large 10 -large-rows 30000
               -dim 64 -queries 40 -sample 5 -work partition-bench -options ""
               -reuse 0}
foreach {k v} [lrange $argv 1 end] {
  if {![info exists opt($k)]} { puts stderr "unknown option $k"; exit 2 }
  set opt($k) $v
}
file mkdir $opt(-work)
set dim $opt(-dim)

# Opens database file $name in the work folder as command $cmd, fresh.
proc open_fresh {cmd name} {
  set path [file join $::opt(-work) $name]
  foreach f [glob -nocomplain $path $path-* $path.colvec] {
    file delete -force $f
  }
  sqlite3 $cmd $path
  $cmd enable_load_extension 1
  $cmd eval { SELECT load_extension($::ext) }
}

# Cluster centers, and a row of cluster c as a float32 blob.
expr {srand(2626)}
set centers {}
for {set c 0} {$c < 200} {incr c} {
  set v {}
  for {set d 0} {$d < $dim} {incr d} { lappend v [expr {rand()}] }
  lappend centers $v
}
proc row_blob {c} {
  set v {}
  foreach x [lindex $::centers $c] { lappend v [expr {$x + 0.4 * (rand() - 0.5)}] }
  return [binary format f* $v]
}

# Partitions: 0..large-1 large, then the small ones; each draws its rows
# from 3 clusters of its own choosing. The insertion order interleaves
# them: a list of partition ids, shuffled.
set nPart [expr {$opt(-large) + $opt(-small)}]
set order {}
for {set p 0} {$p < $nPart} {incr p} {
  set n [expr {$p < $opt(-large) ? $opt(-large-rows) : $opt(-small-rows)}]
  set clusters($p) [list [expr {int(rand() * 200)}] [expr {int(rand() * 200)}] \
                      [expr {int(rand() * 200)}]]
  for {set i 0} {$i < $n} {incr i} { lappend order $p }
}
for {set i [expr {[llength $order] - 1}]} {$i > 0} {incr i -1} {
  set j [expr {int(rand() * ($i + 1))}]
  set x [lindex $order $i]
  lset order $i [lindex $order $j]
  lset order $j $x
}
set nRow [llength $order]
puts stderr "generating $nRow rows of $dim dimensions ..."
set rows {}
foreach p $order {
  lappend rows [row_blob [lindex $clusters($p) [expr {int(rand() * 3)}]]]
}

# Loads every row into db's table t (with the partition key when bPart);
# returns the seconds of the load and of the optimize.
proc load {db bPart} {
  if {$bPart} {
    $db eval "CREATE VIRTUAL TABLE t USING colvec(e float\[$::dim\],
                part integer partition key $::opt(-options))"
  } else {
    $db eval "CREATE VIRTUAL TABLE t USING colvec(e float\[$::dim\]
                $::opt(-options))"
  }
  set t0 [clock milliseconds]
  $db transaction {
    foreach p $::order e $::rows {
      if {$bPart} {
        $db eval { INSERT INTO t(e, part) VALUES ($e, $p) }
      } else {
        $db eval { INSERT INTO t(e) VALUES ($e) }
      }
    }
  }
  set t1 [clock milliseconds]
  $db eval { INSERT INTO t(t) VALUES ('optimize') }
  set t2 [clock milliseconds]
  list [format %.1f [expr {($t1 - $t0) / 1000.0}]] \
       [format %.1f [expr {($t2 - $t1) / 1000.0}]]
}

# Opens database $name of a previous run as command $cmd.
proc open_kept {cmd name} {
  sqlite3 $cmd [file join $::opt(-work) $name]
  $cmd enable_load_extension 1
  $cmd eval { SELECT load_extension($::ext) }
}

if {$opt(-reuse)} {
  set loadFlat {- -}
  set loadPart {- -}
  open_kept db part.db
  open_kept one one.db
} else {
  open_fresh flat flat.db
  puts stderr "loading without a partition key ..."
  set loadFlat [load flat 0]
  flat close
  open_fresh db part.db
  puts stderr "loading with a partition key ..."
  set loadPart [load db 1]
  open_fresh one one.db
}

# The sampled partitions, each copied into a table of its own.
set sample {}
for {set i 0} {$i < $opt(-sample)} {incr i} {
  lappend sample [expr {$i * $opt(-large) / $opt(-sample)}]
  lappend sample [expr {$opt(-large) + $i * $opt(-small) / $opt(-sample)}]
}
puts stderr "copying [llength $sample] partitions into tables of their own ..."
foreach p $sample {
  if {$opt(-reuse)} break
  one eval "CREATE VIRTUAL TABLE p$p USING colvec(e float\[$dim\]
              $opt(-options))"
  set t0 [clock milliseconds]
  one transaction {
    db eval { SELECT e FROM t WHERE part = $p } {
      one eval "INSERT INTO p$p (e) VALUES (\$e)"
    }
  }
  one eval "INSERT INTO p$p (p$p) VALUES ('optimize')"
}

# Returns the q-quantile (0..1) of a list of numbers.
proc quantile {l q} {
  set s [lsort -real $l]
  return [lindex $s [expr {min([llength $s] - 1, int($q * [llength $s]))}]]
}

# Times one KNN on db with $sql, which reads the query vector as $q:
# {microseconds rows}.
proc knn {db sql q} {
  set t0 [clock microseconds]
  set got [$db eval $sql]
  list [expr {[clock microseconds] - $t0}] $got
}

foreach p $sample {
  set kind [expr {$p < $opt(-large) ? "large" : "small"}]
  set first($p) {}
  for {set i 0} {$i < 3} {incr i} {
    set q [row_blob [lindex $clusters($p) $i]]
    lappend first($p) [lindex [knn db "SELECT rowid FROM t WHERE e MATCH \$q
                          AND k = 10 AND part = $p" $q] 0]
    knn one "SELECT rowid FROM p$p WHERE e MATCH \$q AND k = 10" $q
  }
  # the queries and their exact answers first: a scan of the partition's
  # rows between timed queries would leave its own table's rows in the
  # caches and t's out
  for {set i 0} {$i < $opt(-queries)} {incr i} {
    set q [row_blob [lindex $clusters($p) [expr {$i % 3}]]]
    set query($i) $q
    set truth($i) [one eval "SELECT e FROM p$p
                               ORDER BY colvec_distance_l2(e, \$q) LIMIT 10"]
  }
  for {set i 0} {$i < $opt(-queries)} {incr i} {
    set q $query($i)
    # the two sides take turns at going first
    foreach side [expr {$i % 2 ? {one part} : {part one}}] {
      if {$side eq "part"} {
        lassign [knn db "SELECT e FROM t WHERE e MATCH \$q AND k = 10
                           AND part = $p" $q] us got
      } else {
        lassign [knn one "SELECT e FROM p$p WHERE e MATCH \$q AND k = 10" \
                     $q] us got
      }
      lappend lat($kind,$side) $us
      foreach e $got {
        if {$e in $truth($i)} { incr hit($kind,$side) }
      }
    }
    incr tot($kind) [llength $truth($i)]
  }
}

set nSeg [db one { SELECT count(*) FROM t_manifest }]
puts "$nRow rows of $dim dimensions: $opt(-large) partitions of\
      $opt(-large-rows) rows and $opt(-small) of $opt(-small-rows),\
      interleaved; $nSeg segment(s) after optimize\n"
puts "| load | insert s | optimize s |"
puts "|---|---:|---:|"
puts "| without a partition key | [join $loadFlat { | }] |"
puts "| with part integer partition key | [join $loadPart { | }] |"
puts ""
puts "| partition | recall@10 in t / alone | p50 ms in t | p50 ms alone | ratio | p99 ms in t / alone |"
puts "|---|---:|---:|---:|---:|---:|"
foreach kind {small large} {
  set rows [expr {$kind eq "small" ? $opt(-small-rows) : $opt(-large-rows)}]
  set a [quantile $lat($kind,part) 0.5]
  set b [quantile $lat($kind,one) 0.5]
  puts [format "| %s (%d rows) | %.3f / %.3f | %.3f | %.3f | %.2fx | %.3f / %.3f |" \
          $kind $rows [expr {double($hit($kind,part)) / $tot($kind)}] \
          [expr {double($hit($kind,one)) / $tot($kind)}] \
          [expr {$a / 1000.0}] [expr {$b / 1000.0}] [expr {double($a) / $b}] \
          [expr {[quantile $lat($kind,part) 0.99] / 1000.0}] \
          [expr {[quantile $lat($kind,one) 0.99] / 1000.0}]]
}
puts ""
puts "First three queries of each sampled partition in t (ms; the column's"
puts "value order is built on a segment's third filtered query):"
foreach p $sample {
  set l {}
  foreach us $first($p) { lappend l [format %.2f [expr {$us / 1000.0}]] }
  puts "- partition $p: [join $l {, }]"
}
db close
one close
