# ls_writer.tcl — the writer of test/client/litestream.sh: commits to a WAL
# database's storage=embedded colvec table in a loop until it is killed.
#
#   tclsh ls_writer.tcl DBPATH EXTENSION
#
# Each transaction inserts 50 new rows (8-d vectors, a category) and updates
# and deletes a few older ones, with delta_rows small enough that commits
# write segments (whose bytes the database holds). Prints "C <n>" after
# each COMMIT returns.
package require sqlite3
lassign $argv path ext
sqlite3 db $path
db enable_load_extension 1
db eval {SELECT load_extension($ext)}
db eval {PRAGMA writable_schema = RESET}
db timeout 5000
db eval {PRAGMA journal_mode = WAL}
db eval {
  CREATE VIRTUAL TABLE IF NOT EXISTS t USING colvec(
    e float[8], c integer, storage=embedded, delta_rows=200)
}
expr {srand(20261204)}
# Carries on after the rows of an earlier run.
set n [db one {SELECT coalesce(max(rowid), 0) / 50 FROM t}]
while 1 {
  db transaction {
    for {set i 0} {$i < 50} {incr i} {
      set id [expr {$n * 50 + $i + 1}]
      set v {}
      for {set d 0} {$d < 8} {incr d} { lappend v [format %.4f [expr {rand()}]] }
      db eval "INSERT INTO t(rowid, e, c) VALUES ($id, '\[[join $v ,]\]', [expr {$id % 7}])"
    }
    if {$n > 2} {
      set old [expr {$n * 17 % ($n * 50) + 1}]
      db eval {UPDATE t SET c = 99 WHERE rowid = $old}
      db eval {DELETE FROM t WHERE rowid = $old + 1}
    }
  }
  incr n
  puts "C $n"
  flush stdout
}
