# tester.tcl — colvec's SQL-level test harness.
#
# A small harness of our own that keeps the names of SQLite's test commands
# (do_execsql_test, do_catchsql_test, do_eqp_test, do_test, finish_test) and
# runs under stock tclsh8.6 with Debian's libsqlite3-tcl. Each script gets
# its own database file under $COLVEC_TESTDIR, named after the script, so
# `make -j check` can run scripts side by side.
#
# Environment: COLVEC_EXT (path of the built colvec.so, required),
# COLVEC_TESTDIR (scratch folder, default ./test/tmp) and COLVEC_TEST_SCALE
# (emulated runs: shorter loops, see test_scale).

package require sqlite3
# Line-buffered, so that the log of a suite that crashes ends at the last
# test that finished.
fconfigure stdout -buffering line

set ::testname [file rootname [file tail [info script]]]
if {[info exists ::argv0]} {
  set ::testname [file rootname [file tail $::argv0]]
}
if {![info exists ::env(COLVEC_EXT)]} {
  puts stderr "COLVEC_EXT must name the built extension (colvec.so)"
  exit 2
}
set ::colvec_ext $::env(COLVEC_EXT)
set ::testdir [expr {[info exists ::env(COLVEC_TESTDIR)] ?
                     $::env(COLVEC_TESTDIR) : [file join [pwd] test tmp]}]
file mkdir $::testdir
set ::nTest 0
set ::nFail 0
set ::failList {}

# Path of this script's database (or of a named variant).
proc test_db_path {{suffix ""}} {
  return [file join $::testdir "$::testname$suffix.db"]
}

# Deletes a database file and its journals and colvec sidecar folder.
proc forcedelete {path} {
  foreach f [list $path $path-journal $path-wal $path-shm $path-colvec] {
    file delete -force $f
  }
}

# Loads colvec into connection $db. Tcl can only load through SQL, and
# preparing that statement reads the schema before the module exists; the
# schema is then reset so that it is read again with colvec known (which
# marks the shadow tables read-only for defensive mode, as the sqlite3 shell
# and sqlite3_load_extension() callers get directly).
proc load_colvec {db} {
  $db enable_load_extension 1
  $db eval {SELECT load_extension($::colvec_ext)}
  $db eval {PRAGMA writable_schema = RESET}
}

# Opens connection $name on file $path (default: this script's database)
# with colvec loaded.
proc open_db {name {path ""}} {
  if {$path eq ""} { set path [test_db_path] }
  sqlite3 $name $path
  load_colvec $name
  return $name
}

# Closes db, deletes the script's database and opens a fresh "db".
proc reset_db {} {
  catch {db close}
  forcedelete [test_db_path]
  open_db db
}

# Closes and reopens "db" on the same file.
proc reopen_db {} {
  catch {db close}
  open_db db
}

# Records one result: $ok true means passed.
proc test_result {name ok {detail ""}} {
  incr ::nTest
  if {$ok} {
    puts "$name... Ok"
  } else {
    incr ::nFail
    lappend ::failList $name
    puts "$name... FAILED"
    if {$detail ne ""} { puts "  $detail" }
  }
}

# Compares result $got with $expected: lists compared element by element,
# reals compared to 1e-9 relative, everything else as strings.
proc result_matches {got expected} {
  if {[llength $got] != [llength $expected]} { return 0 }
  foreach g $got e $expected {
    if {$g eq $e} continue
    if {[string is double -strict $g] && [string is double -strict $e]} {
      set tol [expr {1e-9 * max(1.0, abs($e))}]
      if {abs($g - $e) <= $tol} continue
    }
    return 0
  }
  return 1
}

# Runs Tcl script $script and compares its result with $expected.
proc do_test {name script expected} {
  if {[catch {uplevel #0 $script} got]} {
    test_result $name 0 "error: $got"
    return
  }
  test_result $name [result_matches $got $expected] \
      "expected: \[$expected\]\n  got:      \[$got\]"
}

# Runs SQL on "db" (or -db NAME) and compares the flat result list.
proc do_execsql_test {name args} {
  set dbh db
  if {[lindex $args 0] eq "-db"} {
    set dbh [lindex $args 1]
    set args [lrange $args 2 end]
  }
  lassign $args sql expected
  do_test $name [list $dbh eval $sql] $expected
}

# Runs SQL expecting {1 message} or {0 result}.
proc do_catchsql_test {name args} {
  set dbh db
  if {[lindex $args 0] eq "-db"} {
    set dbh [lindex $args 1]
    set args [lrange $args 2 end]
  }
  lassign $args sql expected
  set rc [catch {uplevel #0 [list $dbh eval $sql]} res]
  test_result $name [result_matches [list $rc $res] $expected] \
      "expected: \[$expected\]\n  got:      \[[list $rc $res]\]"
}

# Runs EXPLAIN QUERY PLAN and compares the detail lines (joined by
# newlines, SQLite's style) with $expected, ignoring surrounding space.
proc do_eqp_test {name sql expected} {
  set lines {}
  db eval "EXPLAIN QUERY PLAN $sql" {
    lappend lines $detail
  }
  set got [join $lines "\n"]
  test_result $name [expr {[string trim $got] eq [string trim $expected]}] \
      "expected: \[$expected\]\n  got:      \[$got\]"
}

# Path of colvec table $tbl's segment folder: <db>-colvec/ and the folder
# name its T_config records (an id chosen at CREATE, not the table name).
proc table_dir {tbl {dbh db} {path ""}} {
  if {$path eq ""} { set path [test_db_path] }
  set folder [$dbh one "SELECT value FROM \"${tbl}_config\" WHERE key = 'folder'"]
  return $path-colvec/$folder
}

# Returns the float32 BLOB for Tcl list $values (little-endian).
proc vec_blob {values} {
  return [binary format r* $values]
}

# Returns the list of floats stored in float32 BLOB $blob.
proc blob_vec {blob} {
  binary scan $blob r* values
  return $values
}

# Returns loop count $n divided by env COLVEC_TEST_SCALE, but at least $min
# (and at most $n): tool/ci/cross-check.sh sets COLVEC_TEST_SCALE when the
# suites run under qemu-user (see test/lib/testscale.h). Unset: $n.
proc test_scale {n {min 1}} {
  set scale 1
  if {[info exists ::env(COLVEC_TEST_SCALE)] &&
      [string is integer -strict $::env(COLVEC_TEST_SCALE)] &&
      $::env(COLVEC_TEST_SCALE) > 1} {
    set scale [expr {min($::env(COLVEC_TEST_SCALE), 1000)}]
  }
  return [expr {min($n, max($min, $n / $scale))}]
}

# Makes folder $dir read-only, or writable again ($on 0): chmod for a user,
# the immutable attribute for root (whom permissions do not stop; chattr is
# e2fsprogs', which tool/install-deps.sh installs). The test checks that a
# write into it really fails.
proc set_readonly {dir on} {
  if {[exec id -u] ne "0"} {
    file attributes $dir -permissions [expr {$on ? 0555 : 0755}]
  } else {
    exec chattr [expr {$on ? "+i" : "-i"}] $dir
  }
}

# Returns 1 when the sqlite3 shell on PATH can load the built module; 0
# when there is none, or when env COLVEC_HOST_SHELL is 0 (tool/ci/cross-check.sh:
# the module is built for another CPU than the shell's).
proc host_shell {} {
  if {[info exists ::env(COLVEC_HOST_SHELL)] && $::env(COLVEC_HOST_SHELL) eq "0"} {
    return 0
  }
  expr {[auto_execok sqlite3] ne ""}
}

# Returns the path of the colvec-inspect program: env COLVEC_INSPECT when
# set (tool/ci/cross-check.sh: a host script that runs the target's program
# under qemu), else tool/colvec-inspect next to the built extension.
proc inspect_path {} {
  if {[info exists ::env(COLVEC_INSPECT)] && $::env(COLVEC_INSPECT) ne ""} {
    return $::env(COLVEC_INSPECT)
  }
  return [file join [file dirname $::colvec_ext] tool colvec-inspect]
}

# The source tree (this file's folder's parent): tool/ scripts are run
# from there.
set ::srcdir [file dirname [file dirname [file dirname [file normalize [info script]]]]]

# Returns the path of sqlite-vec's vec0.so (env COLVEC_VEC0 when set, else
# fetched once by tool/ci/fetch-vec0.sh), for the compatibility suites. When it
# cannot be had the suite ends: a skip, or a failure under CI=true (where
# tool/install-deps.sh has installed npm) unless this CPU has no sqlite-vec
# package at all (cross runs under qemu), which stays a skip.
proc vec0_path {} {
  if {[info exists ::env(COLVEC_VEC0)] && $::env(COLVEC_VEC0) ne ""} {
    return $::env(COLVEC_VEC0)
  }
  set script [file join $::srcdir tool ci fetch-vec0.sh]
  if {[catch {exec bash $script 2>@1} out opts]} {
    set code [lindex [dict get $opts -errorcode] end]
    if {$code ne "2" && [info exists ::env(CI)] && $::env(CI) eq "true"} {
      puts "FAILED: sqlite-vec's vec0.so could not be fetched: $out"
      exit 1
    }
    skip_test "sqlite-vec's vec0.so is not available: $out"
  }
  return [lindex [split [string trim $out] "\n"] end]
}

# Opens connection $name on database file $path with sqlite-vec's vec0.so
# loaded (and not colvec): the reference the compatibility suites compare
# colvec with. Skips the suite (see vec0_path) when vec0.so cannot be had or
# cannot load into this SQLite.
proc open_vec0_db {name path} {
  set so [vec0_path]
  sqlite3 $name $path
  $name enable_load_extension 1
  if {[catch {$name eval {SELECT load_extension($so)}} err]} {
    catch {$name close}
    skip_test "sqlite-vec's vec0.so does not load here: $err"
  }
  return $name
}

# Runs SQL $sql on both sides of a compatibility suite: on connection
# $::compat_vec0 (sqlite-vec) as written, and on "db" (colvec) with the
# only change a user makes, the module name in USING vec0(...). Returns
# {rcVec0 resultVec0 rcColvec resultColvec}.
proc compat_run {sql} {
  set rc1 [catch {uplevel #0 [list $::compat_vec0 eval $sql]} r1]
  regsub -all -nocase {using\s+vec0\s*\(} $sql {USING colvec(} sql2
  set rc2 [catch {uplevel #0 [list db eval $sql2]} r2]
  return [list $rc1 $r1 $rc2 $r2]
}

# Compares two results of compat_run: equal when both failed (the messages
# differ by design: colvec's start with "colvec: ") or both returned the
# same values: byte for byte, or with reals within relative tolerance $tol
# when it is not 0.
proc compat_equal {res tol} {
  lassign $res rc1 r1 rc2 r2
  if {$rc1 || $rc2} { return [expr {$rc1 && $rc2}] }
  if {[llength $r1] != [llength $r2]} { return 0 }
  foreach a $r1 b $r2 {
    if {$a eq $b} continue
    if {$tol != 0 && [string is double -strict $a] &&
        [string is double -strict $b] &&
        abs($a - $b) <= $tol * max(1.0, abs($a))} continue
    return 0
  }
  return 1
}

# do_compat_test NAME SQL ?-tol REL? ?-differs ID?
# Runs SQL on sqlite-vec and on colvec (compat_run) and passes when both
# give the same result (compat_equal), or both fail. With -differs ID the
# results must differ, and README.md must list the difference, marked
# "(compat: ID)" in "Coming from sqlite-vec": what the suite allows to
# differ is exactly what README lists.
proc do_compat_test {name sql args} {
  set tol 0
  set differs ""
  foreach {opt val} $args {
    switch -- $opt {
      -tol { set tol $val }
      -differs { set differs $val }
      default { error "do_compat_test: unknown option $opt" }
    }
  }
  set res [compat_run $sql]
  set same [compat_equal $res $tol]
  set detail "sqlite-vec: [lrange $res 0 1]\n  colvec:     [lrange $res 2 3]"
  if {$differs eq ""} {
    test_result $name $same $detail
    return
  }
  set fd [open [file join $::srcdir README.md]]
  set readme [read $fd]
  close $fd
  if {[string first "(compat: $differs)" $readme] < 0} {
    test_result $name 0 "README.md lists no difference (compat: $differs)"
    return
  }
  test_result $name [expr {!$same}] \
      "listed as different (compat: $differs), but the results are equal"
}

# Exits 77 (automake SKIP) with a reason.
proc skip_test {reason} {
  puts "SKIP: $reason"
  exit 77
}

# Prints the summary line and exits non-zero when a test failed.
proc finish_test {} {
  catch {db close}
  puts "$::nFail errors out of $::nTest tests"
  if {$::nFail > 0} {
    puts "Failures: $::failList"
    exit 1
  }
  if {$::nTest == 0} {
    puts "no tests were run"
    exit 1
  }
  exit 0
}

reset_db

# tool/ci/sqlite-matrix.sh runs the suites on several SQLite libraries and sets
# COLVEC_SQLITE_VERSION to the one each run must be on: a suite that ran on
# another library must not pass as a run on that one.
set ::sqlite_version [db one {SELECT sqlite_version()}]
puts "SQLite $::sqlite_version"
if {[info exists ::env(COLVEC_SQLITE_VERSION)] &&
    $::env(COLVEC_SQLITE_VERSION) ne "" &&
    $::env(COLVEC_SQLITE_VERSION) ne $::sqlite_version} {
  puts "FAILED: this run is on SQLite $::sqlite_version, not\
        $::env(COLVEC_SQLITE_VERSION) (COLVEC_SQLITE_VERSION)"
  exit 1
}
