# workload.tcl — the seeded write workload and the checks shared by the
# crash loop (crash1.test, tool/crash-loop) and the concurrency suite
# (concurrency1.test), and by the child processes they start
# (test/sql/writer.tcl, test/sql/reader.tcl).
#
# The database holds a colvec table t with a small delta_rows, so that
# flushes, compactions and merges are frequent, a plain model table m that
# every transaction changes exactly as it changes t, and a plain table cnt
# whose one row counts committed write transactions. Every write goes to t
# and to m in the same transaction; a check compares the two row by row
# (rowid, quote() of every attribute, hex() of the vector bytes).
#
# This file does not source tester.tcl (whose last step opens and resets
# the suite's database): child processes source it as it is.

package require sqlite3

# ------------------------------------------------ seeded generator
# A linear congruential generator: the same seed gives the same workload.

# Seeds the generator.
proc wl_seed {seed} {
  set ::wl_state [expr {($seed * 2654435761 + 12345) % 2147483648}]
}

wl_seed 1

# Returns a pseudo-random integer in 0..n-1.
proc wl_rand {n} {
  set ::wl_state [expr {($::wl_state * 1103515245 + 12345) % 2147483648}]
  return [expr {($::wl_state >> 8) % $n}]
}

# Returns a float32 vector of dimension 4 as a BLOB; every element is a
# multiple of 1/4 in -16..16, so it is exact in float32 and in JSON.
proc wl_vector {} {
  set l {}
  for {set i 0} {$i < 4} {incr i} {
    lappend l [expr {([wl_rand 129] - 64) / 4.0}]
  }
  return [binary format r* $l]
}

# ------------------------------------------------ schema

# Creates t, m and cnt on connection $dbh (fresh database) in journal mode
# $mode (delete or wal), with delta_rows $deltaRows. Env COLVEC_WL_OPTIONS
# adds table options, comma-separated (e.g. "access=file, prefault=none").
proc wl_create {dbh mode deltaRows} {
  set opts ""
  if {[info exists ::env(COLVEC_WL_OPTIONS)] && $::env(COLVEC_WL_OPTIONS) ne ""} {
    set opts ", $::env(COLVEC_WL_OPTIONS)"
  }
  $dbh eval "PRAGMA journal_mode = $mode"
  $dbh eval "
    CREATE VIRTUAL TABLE t USING colvec(v float\[4\], a integer, b text,
                                        c real, delta_rows=$deltaRows$opts);
    CREATE TABLE m(id INTEGER PRIMARY KEY, v BLOB, a INTEGER, b TEXT, c REAL);
    CREATE TABLE cnt(n INTEGER);
    INSERT INTO cnt VALUES(0);
  "
}

# Opens connection $name on $path with colvec loaded (from env COLVEC_EXT)
# and a busy timeout of $timeout ms, set first: loading reads the schema,
# which waits for a rollback-journal writer's commit like any read.
proc wl_open {name path {timeout 10000}} {
  sqlite3 $name $path
  $name timeout $timeout
  $name enable_load_extension 1
  $name eval {SELECT load_extension($::env(COLVEC_EXT))}
  $name eval {PRAGMA writable_schema = RESET}
  return $name
}

# ------------------------------------------------ write transactions

# Returns a random live rowid of the model, or "" when it is empty.
proc wl_pick {dbh} {
  set n [$dbh one {SELECT count(*) FROM m}]
  if {$n == 0} { return "" }
  set off [wl_rand $n]
  return [$dbh one {SELECT id FROM m ORDER BY id LIMIT 1 OFFSET $off}]
}

# Returns a rowid no row has: above the largest, or a gap below it.
proc wl_free_rowid {dbh} {
  set max [$dbh one {SELECT coalesce(max(id), 0) FROM m}]
  if {[wl_rand 3] == 0} {
    set id [expr {1 + [wl_rand [expr {$max + 1}]]}]
    if {![$dbh exists {SELECT 1 FROM m WHERE id = $id}]} { return $id }
  }
  return [expr {$max + 1 + [wl_rand 4]}]
}

# Random attribute values: a integer or NULL, b text or NULL, c real.
proc wl_attrs {} {
  set a [expr {[wl_rand 8] == 0 ? "" : [wl_rand 1000] - 500}]
  set b [expr {[wl_rand 8] == 0 ? "" : "b[wl_rand 40]"}]
  set c [expr {[wl_rand 64] / 8.0}]
  return [list $a $b $c]
}

# One operation on t and m, chosen at random; $nrow is the model's row
# count, which steers inserts against deletes so the table stays small.
# Returns the operation's name.
proc wl_op {dbh nrow} {
  set r [wl_rand 100]
  if {$nrow > 400 && $r < 40} { set r [expr {60 + $r / 2}] }
  if {$r < 12} {
    # bulk load from a recursive CTE: vectors as JSON into t, through
    # colvec_from_json into m (two independent conversions)
    set n [expr {5 + [wl_rand 40]}]
    set base [expr {[$dbh one {SELECT coalesce(max(id), 0) FROM m}] + 1 + [wl_rand 3]}]
    set salt [wl_rand 1000]
    set cte {WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s
             WHERE i < $n - 1)}
    set vec {printf('[%d,%d,%d,%d]', (i * 37 + $salt) % 33 - 16,
                    (i * 53 + $salt) % 29 - 14, (i * 11 + $salt) % 31 - 15,
                    (i + $salt) % 7 - 3)}
    set attrs {CASE WHEN i % 9 = 4 THEN NULL ELSE (i * 7 + $salt) % 1000 END,
      CASE WHEN i % 11 = 5 THEN NULL ELSE 'bulk' || (i % 13) END,
      (i % 17) * 0.5}
    $dbh eval "$cte INSERT INTO t(rowid, v, a, b, c)
               SELECT \$base + i, $vec, $attrs FROM s"
    $dbh eval "$cte INSERT INTO m(id, v, a, b, c)
               SELECT \$base + i, colvec_from_json($vec), $attrs FROM s"
    return bulk
  } elseif {$r < 40} {
    # row by row inserts, vectors bound as BLOBs
    for {set j [wl_rand 5]} {$j >= 0} {incr j -1} {
      set id [wl_free_rowid $dbh]
      set v [wl_vector]
      lassign [wl_attrs] a b c
      $dbh eval {INSERT INTO t(rowid, v, a, b, c)
                 VALUES ($id, @v, nullif($a, ''), nullif($b, ''), $c)}
      $dbh eval {INSERT INTO m(id, v, a, b, c)
                 VALUES ($id, @v, nullif($a, ''), nullif($b, ''), $c)}
    }
    return insert
  } elseif {$r < 50} {
    # new vector of one row
    set id [wl_pick $dbh]
    if {$id eq ""} { return none }
    set v [wl_vector]
    $dbh eval {UPDATE t SET v = @v WHERE rowid = $id}
    $dbh eval {UPDATE m SET v = @v WHERE id = $id}
    return update-vector
  } elseif {$r < 60} {
    # attributes of a rowid range (the range filter goes through colvec)
    set id [wl_pick $dbh]
    if {$id eq ""} { return none }
    set hi [expr {$id + [wl_rand 20]}]
    set d [wl_rand 50]
    $dbh eval {UPDATE t SET a = coalesce(a, 0) + $d, b = 'u' || $d,
                              c = c + 0.25 WHERE rowid BETWEEN $id AND $hi}
    $dbh eval {UPDATE m SET a = coalesce(a, 0) + $d, b = 'u' || $d,
                              c = c + 0.25 WHERE id BETWEEN $id AND $hi}
    return update-attrs
  } elseif {$r < 75} {
    # delete one row or a range
    set id [wl_pick $dbh]
    if {$id eq ""} { return none }
    set hi [expr {$id + ([wl_rand 2] ? 0 : [wl_rand 30])}]
    $dbh eval {DELETE FROM t WHERE rowid BETWEEN $id AND $hi}
    $dbh eval {DELETE FROM m WHERE id BETWEEN $id AND $hi}
    return delete
  } elseif {$r < 85} {
    # rowid move
    set id [wl_pick $dbh]
    if {$id eq ""} { return none }
    set to [wl_free_rowid $dbh]
    $dbh eval {UPDATE t SET rowid = $to WHERE rowid = $id}
    $dbh eval {UPDATE m SET id = $to WHERE id = $id}
    return move
  } elseif {$r < 95} {
    # a savepoint around one or two operations, rolled back half the time
    $dbh eval {SAVEPOINT wl}
    wl_op $dbh $nrow
    if {[wl_rand 2]} { wl_op $dbh $nrow }
    if {[wl_rand 2]} {
      $dbh eval {ROLLBACK TO wl}
      $dbh eval {RELEASE wl}
      return savepoint-rollback
    }
    $dbh eval {RELEASE wl}
    return savepoint-release
  } else {
    $dbh eval {INSERT INTO t(t) VALUES('optimize')}
    return optimize
  }
}

# One write transaction: 1 to 3 operations and the counter bump, then
# COMMIT. A BEGIN IMMEDIATE or a COMMIT that fails with SQLITE_BUSY (other
# writers, or rollback-journal readers holding the commit off, past the
# busy timeout) is retried; so is the whole transaction when a statement
# inside it does (a deferred transaction that must give up its snapshot,
# as SQLite asks of applications: roll back, then start again). Any other
# error is raised, and so is the 100th SQLITE_BUSY of one transaction's
# statements. The count of retries is added to ::wl_busy. Returns the
# counter value committed.
proc wl_txn {dbh} {
  set nTry 0
  while {1} {
    while {[catch {$dbh eval $::wl_begin} msg]} {
      if {![string match "*database is locked*" $msg]} { error $msg }
      incr ::wl_busy
    }
    if {![catch {
      set nrow [$dbh one {SELECT count(*) FROM m}]
      for {set j [wl_rand 3]} {$j >= 0} {incr j -1} {
        wl_op $dbh $nrow
      }
      $dbh eval {UPDATE cnt SET n = n + 1}
      set n [$dbh one {SELECT n FROM cnt}]
    } msg]} {
      break
    }
    catch {$dbh eval ROLLBACK}
    if {![string match "*database is locked*" $msg] || [incr nTry] >= 100} {
      error $msg
    }
    incr ::wl_busy
  }
  while {[catch {$dbh eval COMMIT} msg]} {
    if {![string match "*database is locked*" $msg]} {
      catch {$dbh eval ROLLBACK}
      error $msg
    }
    incr ::wl_busy
  }
  return $n
}
set ::wl_busy 0
# How wl_txn begins its transaction: BEGIN (deferred), or BEGIN IMMEDIATE
# when several writers run (a deferred transaction that reads first cannot
# become a write transaction once another writer has committed, in WAL
# mode).
set ::wl_begin BEGIN

# ------------------------------------------------ checks

# The rows of table $tbl (t or m) as a flat list: rowid, hex of the vector
# bytes, quote() of each attribute, in rowid order.
proc wl_rows {dbh tbl} {
  set key [expr {$tbl eq "m" ? "id" : "rowid"}]
  $dbh eval "SELECT $key, hex(v), quote(a), quote(b), quote(c) FROM $tbl ORDER BY $key"
}

# Returns "" when t equals m row for row, else a description of the first
# difference.
proc wl_compare {dbh} {
  set rt [wl_rows $dbh t]
  set rm [wl_rows $dbh m]
  if {$rt eq $rm} { return "" }
  set nt [expr {[llength $rt] / 5}]
  set nm [expr {[llength $rm] / 5}]
  for {set i 0} {$i < min($nt, $nm)} {incr i} {
    set a [lrange $rt [expr {5 * $i}] [expr {5 * $i + 4}]]
    set b [lrange $rm [expr {5 * $i}] [expr {5 * $i + 4}]]
    if {$a ne $b} { return "t has {$a} where the model has {$b} ($nt/$nm rows)" }
  }
  return "t has $nt rows, the model $nm"
}

# Returns "" when a KNN query (k = 10, query vector $q as a BLOB) on t
# returns the k smallest distances of a brute force over m, each the exact
# distance of its row; else a description.
proc wl_knn_check {dbh q} {
  set got [$dbh eval {SELECT rowid, distance FROM t WHERE v MATCH @q AND k = 10}]
  set ref [$dbh eval {SELECT id, colvec_distance_l2(v, @q) AS d FROM m
                      ORDER BY d, id LIMIT 10}]
  if {[llength $got] != [llength $ref]} {
    return "KNN returned [expr {[llength $got] / 2}] rows, brute force [expr {[llength $ref] / 2}]"
  }
  foreach {id d} $got {r rd} $ref {
    if {abs($d - $rd) > 1e-4 * max(1.0, abs($rd))} {
      return "KNN distances {$got}, brute force {$ref}"
    }
    set exact [$dbh one {SELECT colvec_distance_l2(v, @q) FROM m WHERE id = $id}]
    if {$exact eq "" || abs($d - $exact) > 1e-4 * max(1.0, abs($exact))} {
      return "KNN row $id at distance $d, its model row is at {$exact}"
    }
  }
  return ""
}

# Files in t's folder (database $path) that neither t_manifest nor t_trash
# names, and every *.tmp file: what the cleanup of a committed write must
# have removed.
proc wl_stray_files {dbh path} {
  set folder [$dbh one {SELECT value FROM t_config WHERE key = 'folder'}]
  set known {}
  $dbh eval {SELECT segid FROM t_manifest UNION SELECT segid FROM t_trash} {
    lappend known [format %06d.seg $segid]
  }
  set out {}
  foreach f [glob -nocomplain -tails -directory $path-colvec/$folder *] {
    if {$f ni $known} { lappend out $f }
  }
  return [lsort $out]
}

# Rows of t_trash that the cleanup of the last committed write should have
# dropped (and their files deleted): a generation g (or -g) older than the
# retention window, g < G - keep, with G the table's generation and keep
# 16 in WAL mode, 0 in rollback-journal mode (doc/ARCHITECTURE.md, "Commit
# protocol"). Returns them as a flat list of segid and generation.
proc wl_old_trash {dbh} {
  set g [$dbh one {SELECT value FROM t_config WHERE key = 'generation'}]
  set keep [expr {[$dbh one {PRAGMA journal_mode}] eq "wal" ? 16 : 0}]
  $dbh eval {SELECT segid, generation FROM t_trash
             WHERE abs(generation) < $g - $keep ORDER BY segid}
}
