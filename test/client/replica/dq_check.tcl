# dq_check.tcl — opens a database one dqlite node dumped (test/client/dqlite.sh)
# with colvec loaded, runs integrity-check on table t (an error exits
# non-zero) and prints what the nodes must agree on: the row count, sums
# over the rows, and a filtered and an unfiltered KNN.
# Usage: tclsh dq_check.tcl DB EXTENSION
package require sqlite3
sqlite3 db [lindex $argv 0]
db enable_load_extension 1
set ext [lindex $argv 1]
db eval {SELECT load_extension($ext); PRAGMA writable_schema = RESET;
         INSERT INTO t(t) VALUES('integrity-check')}
puts "integrity ok"
puts "rows [db eval {SELECT count(*), sum(rowid), sum(n) FROM t}]"
puts "knn1 [db eval {SELECT rowid, cat, distance FROM t
                     WHERE e MATCH '[50,50,50,50,50,50,50,50]' AND k = 10
                       AND cat = 'c3' AND n >= 2}]"
puts "knn2 [db eval {SELECT rowid, distance FROM t
                     WHERE e MATCH '[10,90,20,80,30,70,40,60]' AND k = 20}]"
db close
