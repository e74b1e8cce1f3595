#!/usr/bin/env tclsh
# callgraph.tcl — the file-level call graph of ext/, and a check that calls
# go one way: it fails when a file calls (or takes the address of) a
# function defined in a file that, directly or through others, calls it.
#
# Usage: tclsh tool/ci/callgraph.tcl ?-objects DIR? ?-dot? FILE.c ...
#
# The references come from cflow's cross reference of the sources as
# written, one file at a time (no preprocessing, so every platform's
# branch counts: POSIX and Win32, x86 and Arm) and, with -objects, from the undefined symbols of the
# compiled objects in DIR (nm), which adds the calls that macros expand to.
# A reference from file A to a function defined in file B (A != B) is an
# edge A -> B; a name defined in more than one file (static helpers that
# share a name) counts only from files that do not define it, and only
# when it has one definer among the files given.
#
# Prints every circle (strongly connected component of more than one
# file) and exits 1 when one is not in the allow-list below; with -dot,
# prints the graph in Graphviz form instead.

# Circles tolerated for now, each a sorted list of its files with a
# comment saying why and what removes it. None: calls go one way.
set allow {}

# Returns the text of running the command line $args, or exits with its
# error.
proc run {args} {
  if {[catch {exec {*}$args 2>/dev/null} out]} {
    if {$::errorCode ne "NONE"} {
      puts stderr "callgraph: $args failed: $out"
      exit 2
    }
  }
  return $out
}

set objdir ""
set dot 0
set files {}
for {set i 0} {$i < [llength $argv]} {incr i} {
  set a [lindex $argv $i]
  switch -- $a {
    -objects { incr i; set objdir [lindex $argv $i] }
    -dot { set dot 1 }
    default { lappend files $a }
  }
}
if {[llength $files] == 0} {
  puts stderr "usage: callgraph.tcl ?-objects DIR? ?-dot? FILE.c ..."
  exit 2
}

# def($name) = the files defining $name; refs = {file name} pairs.
array set def {}
set refs {}
set tails {}
foreach f $files { lappend tails [file tail $f] }
foreach f $files {
  # one file at a time: cflow keeps one definition of a name per run, and
  # the POSIX and Win32 files define the same names
  foreach line [split [run cflow --xref $f] \n] {
    if {[regexp {^(\S+) \* (\S+):\d+ } $line -> name where]} {
      set where [file tail $where]
      if {[lsearch -exact [lindex [array get def $name] 1] $where] < 0} {
        lappend def($name) $where
      }
    } elseif {[regexp {^(\S+)   (\S+):\d+$} $line -> name where]} {
      lappend refs [list [file tail $where] $name]
    }
  }
}

# The compiled objects: global definitions and undefined references.
if {$objdir ne ""} {
  foreach o [glob -nocomplain -directory $objdir *.o] {
    set src [file rootname [file tail $o]].c
    if {[lsearch -exact $tails $src] < 0} continue
    foreach line [split [run nm -P $o] \n] {
      lassign $line name kind
      if {$kind eq "U"} {
        lappend refs [list $src $name]
      } elseif {$name eq "sqlite3_api"} {
        # SQLite's API pointer (SQLITE_EXTENSION_INIT1 in colvec.c), which
        # every file's sqlite3_* calls go through: SQLite, not colvec
        continue
      } elseif {[string match {[TDBRV]} $kind]} {
        if {[lsearch -exact [lindex [array get def $name] 1] $src] < 0} {
          lappend def($name) $src
        }
      }
    }
  }
}

# edge($a,$b) = a name through which file $a uses file $b.
array set edge {}
foreach r $refs {
  lassign $r from name
  if {![info exists def($name)]} continue
  set d $def($name)
  if {[lsearch -exact $d $from] >= 0} continue
  if {[llength $d] != 1} continue
  set to [lindex $d 0]
  if {![info exists edge($from,$to)]} {
    set edge($from,$to) [list $name]
  } elseif {[lsearch -exact $edge($from,$to) $name] < 0} {
    lappend edge($from,$to) $name
  }
}
array set succ {}
foreach k [array names edge] {
  lassign [split $k ,] a b
  lappend succ($a) $b
}

if {$dot} {
  puts "digraph colvec {"
  foreach k [lsort [array names edge]] {
    lassign [split $k ,] a b
    puts "  \"$a\" -> \"$b\";"
  }
  puts "}"
  exit 0
}

# Tarjan's strongly connected components over the files.
set index 0
set stack {}
array set idx {}
array set low {}
array set on {}
set sccs {}
proc strong {v} {
  global index stack idx low on succ sccs
  set idx($v) $index; set low($v) $index; incr index
  lappend stack $v; set on($v) 1
  foreach w [lindex [array get succ $v] 1] {
    if {![info exists idx($w)]} {
      strong $w
      set low($v) [expr {min($low($v), $low($w))}]
    } elseif {[info exists on($w)]} {
      set low($v) [expr {min($low($v), $idx($w))}]
    }
  }
  if {$low($v) == $idx($v)} {
    set c {}
    while 1 {
      set w [lindex $stack end]; set stack [lrange $stack 0 end-1]
      unset on($w); lappend c $w
      if {$w eq $v} break
    }
    if {[llength $c] > 1} { lappend sccs [lsort $c] }
  }
}
foreach f [lsort $tails] {
  if {![info exists idx($f)]} { strong $f }
}

set bad 0
foreach c $sccs {
  set ok [expr {[lsearch -exact $allow $c] >= 0}]
  if {!$ok} { set bad 1 }
  puts "[expr {$ok ? "allowed circle" : "circle"}]: [join $c { }]"
  foreach a $c {
    foreach b $c {
      if {[info exists edge($a,$b)]} {
        puts "  $a -> $b ([join [lsort $edge($a,$b)] {, }])"
      }
    }
  }
}
if {$bad} { exit 1 }
puts "callgraph: [llength $tails] files, [array size edge] edges, no circle but the allowed ones"
