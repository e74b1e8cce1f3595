# reader.tcl — child process of concurrency1.test: reads a database that
# test/sql/writer.tcl is changing, and checks what one read transaction sees.
#
#   tclsh reader.tcl DBPATH KIND SEED STOPFILE MIN_ITER HOLD_MS
#
# KIND is
#   query  read transactions that compare t with the model m row by row,
#          compare counts and a filtered scan, and check a KNN against a
#          brute force over m;
#   long   read transactions held open for HOLD_MS across the writer's
#          commits: the first view is checked against m, and every later
#          query in the same transaction must give the identical answer;
#   late   (WAL) a read transaction that starts on cnt, waits HOLD_MS and
#          only then reads t: equal to m, or the documented "too old,
#          retry" error.
# It repeats until STOPFILE exists and it has done MIN_ITER transactions,
# then prints "STAT <kind> txns <n> queries <n> busy <n> too_old <n>
# commits_spanned <n>" (commits the writer made while long and late
# transactions were open). Every other error or difference prints "FAIL ...".
# Allowed errors: SQLITE_BUSY ("database is locked", after the busy
# timeout) and the "too old, retry" error of a snapshot older than the
# retention window.

source [file join [file dirname [info script]] workload.tcl]
lassign $argv path kind seed stopFile minIter holdMs

wl_seed $seed
wl_open d $path
# In WAL mode a second connection reads the counter outside the read
# transaction (in rollback-journal mode no commit can happen while it is
# open, and a second reader would queue behind the waiting writer).
set bWal [expr {[d one {PRAGMA journal_mode}] eq "wal"}]
if {$bWal} { wl_open d2 $path }

# Commits the writer made since counter value $n0 (0 outside WAL mode).
proc spanned {n0} {
  if {!$::bWal} { return 0 }
  expr {[d2 one {SELECT n FROM cnt}] - $n0}
}
set stat [dict create txns 0 queries 0 busy 0 too_old 0 commits_spanned 0]
set nFail 0

# Records a failure (the first 5 are printed).
proc fail {msg} {
  incr ::nFail
  if {$::nFail <= 5} { puts "FAIL $::kind: $msg"; flush stdout }
}

# What a long reader compares across its transaction: t's rows, count, a
# filtered scan, a rowid lookup and a KNN.
proc view {q lo} {
  dict incr ::stat queries 5
  list [wl_rows d t] [d one {SELECT count(*) FROM t}] \
       [d eval {SELECT rowid FROM t WHERE a BETWEEN $lo AND $lo + 200 ORDER BY rowid}] \
       [d eval {SELECT quote(b) FROM t WHERE rowid = (SELECT min(id) FROM m)}] \
       [d eval {SELECT rowid, distance FROM t WHERE v MATCH @q AND k = 7}]
}

# One read transaction of this reader's kind.
proc one_txn {} {
  set q [wl_vector]
  set lo [expr {[wl_rand 1000] - 500}]
  d eval BEGIN
  switch $::kind {
    query {
      set diff [wl_compare d]
      if {$diff ne ""} { fail $diff }
      set nt [d one {SELECT count(*) FROM t}]
      set nm [d one {SELECT count(*) FROM m}]
      if {$nt != $nm} { fail "count(*) t $nt, m $nm" }
      set st [d eval {SELECT rowid FROM t WHERE a BETWEEN $lo AND $lo + 200 ORDER BY rowid}]
      set sm [d eval {SELECT id FROM m WHERE a BETWEEN $lo AND $lo + 200 ORDER BY id}]
      if {$st ne $sm} { fail "scan a BETWEEN $lo AND [expr {$lo + 200}]: t {$st}, m {$sm}" }
      set diff [wl_knn_check d $q]
      if {$diff ne ""} { fail $diff }
      dict incr ::stat queries 6
    }
    long {
      set n0 [d one {SELECT n FROM cnt}]
      set diff [wl_compare d]
      if {$diff ne ""} { fail $diff }
      dict incr ::stat queries 2
      set first [view $q $lo]
      set tEnd [expr {[clock milliseconds] + $::holdMs}]
      while {[clock milliseconds] < $tEnd} {
        after [expr {5 + [wl_rand 20]}]
        if {[view $q $lo] ne $first} {
          fail "a query in a read transaction gave another answer (counter $n0)"
          break
        }
      }
      if {[d one {SELECT n FROM cnt}] != $n0} { fail "counter changed in a read transaction" }
      # commits the writer made while this transaction held its snapshot
      dict incr ::stat commits_spanned [spanned $n0]
    }
    late {
      set n0 [d one {SELECT n FROM cnt}]
      after $::holdMs
      dict incr ::stat commits_spanned [spanned $n0]
      set diff [wl_compare d]
      if {$diff ne ""} { fail $diff }
      dict incr ::stat queries 2
    }
  }
  d eval COMMIT
}

# A "too old, retry" must be followed by a retry that works: after the
# stop file (the writers are done) the loop goes on until one transaction
# succeeded, for a bounded number of further tries.
set iter 0
set iAfterStop 0
while {$iter < $minIter || ![file exists $stopFile] ||
       ([dict get $stat txns] == 0 && [incr iAfterStop] <= 20)} {
  incr iter
  if {[catch one_txn msg]} {
    catch {d eval ROLLBACK}
    if {[string match "*database is locked*" $msg]} {
      dict incr stat busy
    } elseif {[string match "*the read transaction is too old, retry it*" $msg]} {
      dict incr stat too_old
    } else {
      fail "error: $msg"
    }
  } else {
    dict incr stat txns
  }
}
puts "STAT $kind $stat"
d close
