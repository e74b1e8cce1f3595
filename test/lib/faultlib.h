/*
** faultlib.h — a numbered colvec workload against a plain-table model, for
** fault-injection tests (check_ioerr.c) and power-loss tests.
**
** The test program links colvec statically: the module's sources are
** compiled into it with -DSQLITE_CORE, and faultLibInit() registers
** sqlite3_colvec_init with sqlite3_auto_extension(), so every connection
** has colvec (and the os-layer test hook, colvecOsSetHook(), reaches the
** module's file calls).
**
** A FaultDb is one database in a private folder of its own:
**
**   t  USING colvec(v float[4], tag text, n integer, x real, delta_rows=8
**                   [, access=file])
**   m  (rowid INTEGER PRIMARY KEY, v BLOB, tag TEXT, n INTEGER, x REAL)
**
** Every write step writes the same rows to t and to m inside one
** transaction (one statement in autocommit mode, or BEGIN ... COMMIT), so
** at any committed point, and after ROLLBACK of any failed step, t must
** equal m. Vectors are float32 BLOBs with coordinates that are multiples
** of 0.5, so distances are exact and KNN can be compared with a brute force
** over m. The steps (faultStepName() names them): CREATE; a bulk load of
** 40 rows (several segments: flush and compaction); row-by-row inserts;
** UPDATE of vectors; UPDATE of attributes; DELETE; rowid moves; savepoints
** (ROLLBACK TO over a flush); KNN with rescore and a filter; 'optimize'
** (merge); scans; CREATE, fill and DROP of a second colvec table t2 in
** autocommit mode (folder creation, orphan sweep, folder removal); close
** and reopen; more writes; a last KNN and a last write (its cleanup must
** leave no orphan file).
**
** Conventions: functions return an SQLite result code (extended when it
** comes from a statement); on failure p->zErr holds the message and
** p->rcErr the code. FAULT_WRONG (not an SQLite code) means a check found
** a wrong answer (message in p->zErr). Nothing here allocates through
** SQLite except SQLite itself, so sqlite3_memory_used() measures colvec
** and SQLite alone.
*/
#ifndef FAULTLIB_H
#define FAULTLIB_H

#include <sqlite3.h>
#include <stdint.h>

/* Journal modes of faultDbOpen(). */
#define FAULT_JOURNAL_DELETE 0 /* rollback journal, journal_mode=DELETE */
#define FAULT_JOURNAL_WAL 1    /* journal_mode=WAL */

/* Access modes of table t (faultDbOpen()). */
#define FAULT_ACCESS_MMAP 0 /* access=mmap (the default) */
#define FAULT_ACCESS_FILE 1 /* access=file: pread, no mappings */

/* Returned by a check that found a wrong answer (not an SQLite code). */
#define FAULT_WRONG 1000

typedef struct FaultDb FaultDb;

/* One test database: connection, files and the last error. */
struct FaultDb {
  sqlite3 *db;     /* open connection, or NULL between close and reopen */
  int eJournal;    /* FAULT_JOURNAL_* */
  int eAccess;     /* FAULT_ACCESS_* */
  char zDir[256];  /* private folder (testdir.h) holding every file */
  char zDb[320];   /* database file, zDir/test.db */
  int rcErr;       /* code of the last failure, SQLITE_OK if none */
  char zErr[1024]; /* message of the last failure, "" if none */
};

/* Registers colvec for every new connection (idempotent). Call first. */
void faultLibInit(void);

/*
** Creates a new private folder under zBase (NULL: $TMPDIR, else /dev/shm
** when writable, else /tmp; on Windows the temporary folder), opens
** zDir/test.db in it with journal mode
** eJournal, synchronous=FULL, and remembers eAccess for step 0's CREATE.
** Creates no table (step 0 does). Returns SQLITE_OK, or an error with
** p->zErr set (then nothing is left open; the folder may exist).
*/
int faultDbOpen(FaultDb *p, const char *zBase, int eJournal, int eAccess);

/* Opens p->zDb again after faultDbClose() (same pragmas). */
int faultDbReopen(FaultDb *p);

/* Closes the connection (sqlite3_close) and returns its result code;
** p->db is NULL afterwards even when the close failed (the handle is then
** closed with sqlite3_close_v2 so that nothing stays open). */
int faultDbClose(FaultDb *p);

/* Deletes p->zDir and everything in it (call after faultDbClose()). */
void faultDbRemove(FaultDb *p);

/* Number of steps of the workload, and the name of step i (for reports). */
int faultStepCount(void);
const char *faultStepName(int iStep);

/* Non-zero when step i writes (changes the committed state when it
** succeeds); zero for read-only steps (KNN, scans). */
int faultStepIsWrite(int iStep);

/*
** Runs step iStep on p. Returns SQLITE_OK, the extended code of the first
** failing statement (the rest of the step is skipped; a transaction the
** step began may still be open: call faultRollback()), or FAULT_WRONG when
** a read step returned a wrong answer (KNN or scan different from the
** model). A read step compares its answers itself.
*/
int faultStepRun(FaultDb *p, int iStep);

/* Runs SQL (one or more statements) and discards rows. */
int faultExec(FaultDb *p, const char *zSql);

/* Non-zero when table zName exists in p's schema (0 also on error). */
int faultHasTable(FaultDb *p, const char *zName);

/* ROLLBACK when a transaction is open; SQLITE_OK when none is. */
int faultRollback(FaultDb *p);

/*
** Compares t with m: same rowids, and per row the same value of every
** column (type and bytes; vectors byte for byte). Returns SQLITE_OK,
** FAULT_WRONG (first difference in p->zErr) or the error of a query. When
** t does not exist yet (before step 0), m must not either.
*/
int faultCompare(FaultDb *p);

/* Runs INSERT INTO t(t) VALUES('integrity-check'). */
int faultIntegrity(FaultDb *p);

/*
** Runs several KNN queries on t (k = 5 and 20, rescore=1, with and without
** the filter tag = 'a') and compares each with a brute force over m: the
** same distances in ascending order, each returned rowid a row of m that
** passes the filter at that distance. Returns SQLITE_OK, FAULT_WRONG or
** the error of a query.
*/
int faultKnnCheck(FaultDb *p);

/*
** Returns a hash of the committed state as this connection sees it: the
** rows of m and the names of the tables in sqlite_schema. Equal hashes
** mean equal states. *pRc receives the result code (0 returned on error).
*/
uint64_t faultStateHash(FaultDb *p, int *pRc);

/*
** Counts the files of t's folder that no T_manifest or T_trash row names
** (*pnOrphan: NNNNNN.seg files) and the temporaries (*pnTmp: *.tmp).
** Either pointer may be NULL. Returns SQLITE_OK (both 0 when t or its
** folder does not exist) or an error.
*/
int faultOrphans(FaultDb *p, int *pnOrphan, int *pnTmp);

/* Number of open file descriptors of this process (/proc/self/fd; on
** Windows its open handles), or -1 where neither can be counted. */
int faultFdCount(void);

/*************************************************************************
** Fault injection through colvecOsSetHook().
**
** faultInjectStart() installs a hook that counts every os-layer call by
** kind (COLVEC_OSOP_*) from 0 and makes the call of kind eOp with index
** iNth (0-based, counted from this start) fail with errno iErrno; with
** bPersist, that call and every later call of that kind fail until
** faultInjectStop(). With nShort >= 0 and eOp == COLVEC_OSOP_WRITE, a
** failing write first writes min(nShort, n - 1) bytes (a short write). iNth
** < 0 injects nothing (counting only: the reference run).
** faultInjectStop() removes the hook and returns how many calls failed;
** faultInjectFired() returns that count without removing the hook.
** faultInjectCount(eOp) is the number of calls of kind eOp seen since the
** start (also after the stop).
*/
void faultInjectStart(int eOp, long iNth, int iErrno, int bPersist,
                      long nShort);
int faultInjectStop(void);
int faultInjectFired(void);
long faultInjectCount(int eOp);

/* Name of an os-layer call kind ("write", "fsync", ...). */
const char *faultOpName(int eOp);

#endif /* FAULTLIB_H */
