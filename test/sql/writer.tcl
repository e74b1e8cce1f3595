# writer.tcl — child process of crash1.test and concurrency1.test: runs
# the seeded write workload of workload.tcl on a database's t and m.
#
#   tclsh writer.tcl DBPATH SEED [SECONDS MIN_COMMITS [immediate]]
#
# Prints "ready" once the database is open, then "C <n>" after every COMMIT
# returns (n = the counter that transaction committed), flushed at once, so
# the parent knows which commits were acknowledged. Without SECONDS it runs
# until it is killed; with SECONDS it stops after that many seconds and at
# least MIN_COMMITS commits and prints
# "STAT writer commits <n> busy <retries>".
# "immediate" starts every transaction with BEGIN IMMEDIATE (for several
# writers at once). Any error prints "FAIL <message>" and exits 1. The
# extension comes from env COLVEC_EXT.

source [file join [file dirname [info script]] workload.tcl]
lassign $argv path seed seconds minCommits begin
if {$begin eq "immediate"} { set ::wl_begin "BEGIN IMMEDIATE" }

wl_seed $seed
if {[catch {wl_open d $path} msg]} {
  puts "FAIL open: $msg"
  exit 1
}
puts ready
flush stdout

set nCommit 0
set tEnd [expr {$seconds eq "" ? 0 : [clock milliseconds] + int($seconds * 1000)}]
while {$seconds eq "" || [clock milliseconds] < $tEnd || $nCommit < $minCommits} {
  if {[catch {wl_txn d} n]} {
    puts "FAIL commit [expr {$nCommit + 1}]: $n"
    exit 1
  }
  incr nCommit
  puts "C $n"
  flush stdout
}
puts "STAT writer commits $nCommit busy $::wl_busy"
d close
