/*
** faultlib.c — the workload and checks of faultlib.h (see there).
**
** Steps are SQL text built once by faultLibInit() into static buffers, or
** special steps (KNN check, scan check, close + reopen) run by code. Every
** check prepares its statements with the connection's own SQLite and
** finalizes them before returning, so a check never leaves a statement
** open across a fault.
*/
#include "faultlib.h"

#include "colvec.h"
#include "colvecInt.h"
#include "colvec_os.h"
#include "testdir.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Kinds of step. */
#define FS_SQL 0    /* run zSql; a write when bWrite */
#define FS_KNN 1    /* faultKnnCheck() */
#define FS_SCAN 2   /* full and filtered scans of t against m */
#define FS_REOPEN 3 /* close and reopen the connection */
#define FS_BULK 4   /* zSql as a bulk load (FAULT_BULK_BYTES) */

/*
** Pending bytes an FS_BULK step's INSERTs write out at once (a few rows):
** its rows become segments that wait for the commit to be written again.
*/
#define FAULT_BULK_BYTES 1024

/* Room for the SQL of one generated step. */
#define FAULT_SQL_MAX 8192

/* One step of the workload. */
typedef struct FaultStep FaultStep;
struct FaultStep {
  const char *zName; /* short name for reports */
  int eKind;         /* FS_* */
  int bWrite;        /* changes the committed state when it succeeds */
  const char *zSql;  /* SQL of an FS_SQL step (step 0: a format, %s) */
};

/* Buffers of the generated steps. */
static char faultRowByRow[FAULT_SQL_MAX]; /* step "insert rows" */
static char faultCreate[1024];            /* step "create", access filled in */

/* The vector of row i as an SQL expression over the integer expression i. */
#define FAULT_VEC(I)                                                           \
  "colvec_from_json(printf('[%d,%d.5,%d,-%d]', (" I ") % 7, (" I ") % 3, "     \
  "(" I ") % 5, (" I ") % 11))"

/* The columns of row i of m, from a CTE s(i). */
#define FAULT_ROW                                                              \
  "i, " FAULT_VEC(                                                             \
      "i") ", CASE i % 3 WHEN 0 THEN 'b' ELSE 'a' END, "                       \
           "i * 3, CASE WHEN i % 4 = 0 THEN NULL ELSE i * 0.25 END"

/* Inserts rows A..B into m, then copies them into t. */
#define FAULT_LOAD(A, B)                                                       \
  "WITH RECURSIVE s(i) AS (SELECT " A " UNION ALL SELECT i + 1 FROM s "        \
  "WHERE i < " B ") INSERT INTO m(rowid, v, tag, n, x) SELECT " FAULT_ROW      \
  " FROM s;"                                                                   \
  "INSERT INTO t(rowid, v, tag, n, x) SELECT rowid, v, tag, n, x FROM m "      \
  "WHERE rowid BETWEEN " A " AND " B ";"

/* The same statement on t and on m (zSet and zWhere shared). */
#define FAULT_BOTH(VERB, REST) VERB " t " REST ";" VERB " m " REST ";"

/* The workload. Step 0's SQL is faultCreate, step 2's faultRowByRow. */
/* clang-format off */
static FaultStep faultSteps[] = {
    {"create", FS_SQL, 1, faultCreate},
    {"bulk load", FS_SQL, 1,
     "BEGIN;" FAULT_LOAD("1", "10") "SELECT count(*) FROM t;"
     FAULT_LOAD("11", "20") "SELECT count(*) FROM t;"
     FAULT_LOAD("21", "30") "SELECT count(*) FROM t;"
     FAULT_LOAD("31", "40") "COMMIT;"},
    {"insert rows", FS_SQL, 1, faultRowByRow},
    {"update vectors", FS_SQL, 1,
     "BEGIN;" FAULT_BOTH("UPDATE", "SET v = colvec_from_json(printf("
                                   "'[%d,-1,0.5,%d]', rowid % 5, rowid % 9)) "
                                   "WHERE rowid IN (3, 17, 33, 45, 52)")
     "COMMIT;"},
    {"update attributes", FS_SQL, 1,
     "BEGIN;" FAULT_BOTH("UPDATE", "SET tag = 'c', n = n * 2, x = NULL "
                                   "WHERE rowid % 5 = 1")
     FAULT_BOTH("UPDATE", "SET x = 7.5 WHERE rowid IN (4, 8, 55)")
     "COMMIT;"},
    {"delete", FS_SQL, 1,
     "BEGIN;" FAULT_BOTH("DELETE FROM", "WHERE rowid % 7 = 0") "COMMIT;"},
    {"rowid moves", FS_SQL, 1,
     "BEGIN;" FAULT_BOTH("UPDATE", "SET rowid = rowid + 1000 "
                                   "WHERE rowid IN (2, 41, 51)")
     "COMMIT;"},
    {"savepoints", FS_SQL, 1,
     "BEGIN;"
     "SAVEPOINT a;" FAULT_LOAD("200", "211")
     "SELECT count(*) FROM t WHERE n > 0;"
     "ROLLBACK TO a;" FAULT_LOAD("220", "224")
     "SAVEPOINT b;" FAULT_BOTH("DELETE FROM", "WHERE rowid = 220")
     "RELEASE b;"
     "RELEASE a;"
     "COMMIT;"},
    {"knn", FS_KNN, 0, NULL},
    {"optimize", FS_SQL, 1, "INSERT INTO t(t) VALUES('optimize');"},
    {"embed", FS_SQL, 1,
     "BEGIN;" FAULT_LOAD("250", "262") "INSERT INTO t(t) VALUES('embed');"
     "COMMIT;"},
    {"scan", FS_SCAN, 0, NULL},
    {"create t2", FS_SQL, 1,
     "CREATE VIRTUAL TABLE t2 USING colvec(w float[2], delta_rows=4, "
     "storage=embedded);"},
    {"fill t2", FS_SQL, 1,
     "BEGIN;"
     "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s "
     "WHERE i < 10) INSERT INTO t2(rowid, w) SELECT i, "
     "printf('[%d, 1]', i) FROM s;"
     "SELECT count(*) FROM t2;"
     "WITH RECURSIVE s(i) AS (SELECT 11 UNION ALL SELECT i + 1 FROM s "
     "WHERE i < 15) INSERT INTO t2(rowid, w) SELECT i, "
     "printf('[%d, 2]', i) FROM s;"
     "COMMIT;"},
    {"drop t2", FS_SQL, 1, "DROP TABLE t2;"},
    {"reopen", FS_REOPEN, 0, NULL},
    {"more writes", FS_SQL, 1,
     "BEGIN;" FAULT_LOAD("300", "315")
     FAULT_BOTH("DELETE FROM", "WHERE rowid IN (1, 5, 11, 23, 1002)")
     FAULT_BOTH("UPDATE", "SET v = colvec_from_json('[0.5,0.5,0.5,0.5]') "
                          "WHERE rowid IN (9, 302)")
     "COMMIT;"},
    {"bulk load out of memory", FS_BULK, 1,
     "BEGIN;" FAULT_LOAD("600", "639") "SELECT count(*) FROM t;"
     FAULT_LOAD("640", "669") "COMMIT;"},
    {"knn again", FS_KNN, 0, NULL},
    {"last write", FS_SQL, 1, "BEGIN;" FAULT_LOAD("400", "409") "COMMIT;"},
};
/* clang-format on */

/* Number of steps. */
#define FAULT_NSTEP ((int)(sizeof(faultSteps) / sizeof(faultSteps[0])))

/* Query vectors of faultKnnCheck(). */
static const char *const faultQueries[] = {"[1,1,1,-3]", "[3,0.5,2,-8]",
                                           "[0,0,0,0]", "[6,-1,0.5,4]"};

/* ------------------------------------------------------------ helpers */

/* Records failure rc with a printf-style message in p; returns rc. */
static int faultSetErr(FaultDb *p, int rc, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  vsnprintf(p->zErr, sizeof(p->zErr), zFmt, ap);
  va_end(ap);
  p->rcErr = rc;
  return rc;
}

/* Records the connection's current error (code and message); returns the
** extended code. */
static int faultDbErr(FaultDb *p) {
  int rc = p->db ? sqlite3_extended_errcode(p->db) : SQLITE_MISUSE;
  if (rc == SQLITE_OK) rc = SQLITE_ERROR;
  return faultSetErr(p, rc, "%s", p->db ? sqlite3_errmsg(p->db) : "closed");
}

/* Prepares zSql on p (one statement). Returns SQLITE_OK or the error. */
static int faultPrepare(FaultDb *p, const char *zSql, sqlite3_stmt **ppStmt) {
  *ppStmt = NULL;
  if (p->db == NULL) return faultSetErr(p, SQLITE_MISUSE, "not open");
  if (sqlite3_prepare_v2(p->db, zSql, -1, ppStmt, NULL) != SQLITE_OK) {
    return faultDbErr(p);
  }
  return SQLITE_OK;
}

/* Steps pStmt to its end, discarding rows; finalizes it. Returns SQLITE_OK
** or the error (recorded). */
static int faultStepAll(FaultDb *p, sqlite3_stmt *pStmt) {
  int rc;
  while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
  }
  if (rc != SQLITE_DONE) {
    faultDbErr(p);
    sqlite3_finalize(pStmt);
    return p->rcErr;
  }
  sqlite3_finalize(pStmt);
  return SQLITE_OK;
}

/* See faultlib.h. */
int faultHasTable(FaultDb *p, const char *zName) {
  sqlite3_stmt *pStmt;
  int bHas = 0;
  if (faultPrepare(p, "SELECT 1 FROM sqlite_schema WHERE name = ?1", &pStmt) !=
      SQLITE_OK) {
    return 0;
  }
  sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
  bHas = sqlite3_step(pStmt) == SQLITE_ROW;
  sqlite3_finalize(pStmt);
  return bHas;
}

/* Returns non-zero when column i of a and of b hold the same value: the
** same type and the same bytes (integers and reals by value). */
static int faultSameValue(sqlite3_stmt *a, sqlite3_stmt *b, int i) {
  int e = sqlite3_column_type(a, i);
  if (e != sqlite3_column_type(b, i)) return 0;
  switch (e) {
  case SQLITE_INTEGER:
    return sqlite3_column_int64(a, i) == sqlite3_column_int64(b, i);
  case SQLITE_FLOAT:
    return sqlite3_column_double(a, i) == sqlite3_column_double(b, i);
  case SQLITE_NULL:
    return 1;
  default: {
    int n = sqlite3_column_bytes(a, i);
    const void *pA = e == SQLITE_TEXT ? (const void *)sqlite3_column_text(a, i)
                                      : sqlite3_column_blob(a, i);
    const void *pB = e == SQLITE_TEXT ? (const void *)sqlite3_column_text(b, i)
                                      : sqlite3_column_blob(b, i);
    if (n != sqlite3_column_bytes(b, i)) return 0;
    return n == 0 || memcmp(pA, pB, (size_t)n) == 0;
  }
  }
}

/*
** Runs zA and zB (one statement each, same columns) and compares their
** rows in order (first column shown as the row's key in messages). Returns
** SQLITE_OK, FAULT_WRONG or the error of a statement.
*/
static int faultSameRows(FaultDb *p, const char *zA, const char *zB) {
  sqlite3_stmt *a = NULL, *b = NULL;
  int rc = faultPrepare(p, zA, &a);
  int iRow = 0;
  if (rc == SQLITE_OK) rc = faultPrepare(p, zB, &b);
  while (rc == SQLITE_OK) {
    int rcA = sqlite3_step(a);
    int rcB;
    if (rcA != SQLITE_ROW && rcA != SQLITE_DONE) {
      rc = faultDbErr(p);
      break;
    }
    rcB = sqlite3_step(b);
    if (rcB != SQLITE_ROW && rcB != SQLITE_DONE) {
      rc = faultDbErr(p);
      break;
    }
    if (rcA != rcB) {
      rc = faultSetErr(p, FAULT_WRONG, "%s: %s rows than %s (after %d)", zA,
                       rcA == SQLITE_ROW ? "more" : "fewer", zB, iRow);
      break;
    }
    if (rcA == SQLITE_DONE) break;
    {
      int i, nCol = sqlite3_column_count(a);
      for (i = 0; i < nCol; i++) {
        if (!faultSameValue(a, b, i)) {
          rc = faultSetErr(
              p, FAULT_WRONG, "%s: row %d (key %lld) column %d differs from %s",
              zA, iRow, (long long)sqlite3_column_int64(a, 0), i, zB);
          break;
        }
      }
    }
    iRow++;
  }
  sqlite3_finalize(a);
  sqlite3_finalize(b);
  return rc;
}

/* ----------------------------------------------------------- database */

/* Builds the generated steps (once). */
static void faultBuildSteps(void) {
  char *z = faultRowByRow;
  char *zEnd = faultRowByRow + sizeof(faultRowByRow);
  int i;
  z += snprintf(z, (size_t)(zEnd - z), "BEGIN;");
  for (i = 50; i < 62; i++) {
    /* t gets JSON text, m the same vector as a BLOB */
    char zVec[64];
    snprintf(zVec, sizeof(zVec), "[%d,%d.5,-%d,%d]", i % 4, i % 6, i % 3,
             i % 8);
    z += snprintf(z, (size_t)(zEnd - z),
                  "INSERT INTO t(rowid, v, tag, n, x) VALUES(%d, '%s', '%s', "
                  "%d, %d.5);"
                  "INSERT INTO m(rowid, v, tag, n, x) VALUES(%d, "
                  "colvec_from_json('%s'), '%s', %d, %d.5);",
                  i, zVec, i % 2 ? "a" : "b", i * 3, i, i, zVec,
                  i % 2 ? "a" : "b", i * 3, i);
  }
  snprintf(z, (size_t)(zEnd - z), "COMMIT;");
}

/* Registers colvec for every new connection (idempotent). */
void faultLibInit(void) {
  static int bDone = 0;
  if (bDone) return;
  bDone = 1;
  faultBuildSteps();
  sqlite3_auto_extension((void (*)(void))sqlite3_colvec_init);
}

/* Sets the pragmas of p's journal mode on the open connection. */
static int faultPragmas(FaultDb *p) {
  int rc = faultExec(p, p->eJournal == FAULT_JOURNAL_WAL
                            ? "PRAGMA journal_mode=WAL"
                            : "PRAGMA journal_mode=DELETE");
  if (rc == SQLITE_OK) rc = faultExec(p, "PRAGMA synchronous=FULL");
  return rc;
}

/* Opens p->zDb (the file must exist or is created); sets the pragmas. */
static int faultConnect(FaultDb *p) {
  int rc = sqlite3_open_v2(p->zDb, &p->db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc != SQLITE_OK) {
    faultSetErr(p, rc, "open %s: %s", p->zDb,
                p->db ? sqlite3_errmsg(p->db) : "?");
    sqlite3_close(p->db);
    p->db = NULL;
    return rc;
  }
  rc = faultPragmas(p);
  if (rc != SQLITE_OK) {
    sqlite3_close_v2(p->db);
    p->db = NULL;
  }
  return rc;
}

/* See faultlib.h. */
int faultDbOpen(FaultDb *p, const char *zBase, int eJournal, int eAccess) {
  memset(p, 0, sizeof(*p));
  p->eJournal = eJournal;
  p->eAccess = eAccess;
  faultLibInit();
  snprintf(faultCreate, sizeof(faultCreate),
           "BEGIN;"
           "CREATE VIRTUAL TABLE t USING colvec(v float[4], tag text, "
           "n integer, x real, delta_rows=8%s);"
           "CREATE TABLE m(rowid INTEGER PRIMARY KEY, v BLOB, tag TEXT, "
           "n INTEGER, x REAL);"
           "COMMIT;",
           eAccess == FAULT_ACCESS_FILE ? ", access=file" : "");
#if !defined(_WIN32)
  if (zBase == NULL && getenv("TMPDIR") == NULL &&
      access("/dev/shm", W_OK) == 0) {
    zBase = "/dev/shm"; /* tmpfs keeps the many small runs off the disk */
  }
#endif
  if (testTempDirIn(zBase, "colvec-fault", p->zDir, sizeof(p->zDir)) != 0) {
    return faultSetErr(p, SQLITE_CANTOPEN, "cannot make a folder under %s: %s",
                       zBase ? zBase : "the temporary folder", strerror(errno));
  }
  snprintf(p->zDb, sizeof(p->zDb), "%s/test.db", p->zDir);
  return faultConnect(p);
}

/* See faultlib.h. */
int faultDbReopen(FaultDb *p) {
  if (p->db) return faultSetErr(p, SQLITE_MISUSE, "reopen: still open");
  return faultConnect(p);
}

/* See faultlib.h. */
int faultDbClose(FaultDb *p) {
  int rc = SQLITE_OK;
  if (p->db) {
    rc = sqlite3_close(p->db);
    if (rc != SQLITE_OK) {
      faultDbErr(p);
      sqlite3_close_v2(p->db);
    }
    p->db = NULL;
  }
  return rc;
}

/*
** Removes zPath: a file, or a folder with everything in it (nDepth levels
** at most). A symbolic link is removed, never followed.
*/
static void faultRmTree(const char *zPath, int nDepth) {
  struct stat st;
  DIR *pDir;
  struct dirent *pEnt;
#if defined(_WIN32)
  if (stat(zPath, &st) != 0) return;
#else
  if (lstat(zPath, &st) != 0) return;
#endif
  if (!S_ISDIR(st.st_mode)) {
    remove(zPath);
    return;
  }
  if (nDepth > 0 && (pDir = opendir(zPath)) != NULL) {
    while ((pEnt = readdir(pDir)) != NULL) {
      char zSub[512];
      int n;
      if (strcmp(pEnt->d_name, ".") == 0 || strcmp(pEnt->d_name, "..") == 0) {
        continue;
      }
      n = snprintf(zSub, sizeof(zSub), "%s/%s", zPath, pEnt->d_name);
      if (n > 0 && (size_t)n < sizeof(zSub)) faultRmTree(zSub, nDepth - 1);
    }
    closedir(pDir);
  }
  rmdir(zPath);
}

/* See faultlib.h. */
void faultDbRemove(FaultDb *p) {
  if (p->zDir[0]) faultRmTree(p->zDir, 8);
}

/* -------------------------------------------------------------- steps */

/* See faultlib.h. */
int faultStepCount(void) { return FAULT_NSTEP; }

/* See faultlib.h. */
const char *faultStepName(int iStep) {
  return iStep >= 0 && iStep < FAULT_NSTEP ? faultSteps[iStep].zName : "?";
}

/* See faultlib.h. */
int faultStepIsWrite(int iStep) {
  return iStep >= 0 && iStep < FAULT_NSTEP && faultSteps[iStep].bWrite;
}

/* See faultlib.h. */
int faultExec(FaultDb *p, const char *zSql) {
  const char *zTail = zSql;
  p->rcErr = SQLITE_OK;
  p->zErr[0] = 0;
  if (p->db == NULL) return faultSetErr(p, SQLITE_MISUSE, "not open");
  while (zTail && zTail[0]) {
    sqlite3_stmt *pStmt = NULL;
    if (sqlite3_prepare_v2(p->db, zTail, -1, &pStmt, &zTail) != SQLITE_OK) {
      return faultDbErr(p);
    }
    if (pStmt == NULL) continue; /* whitespace or comment */
    if (faultStepAll(p, pStmt) != SQLITE_OK) return p->rcErr;
  }
  return SQLITE_OK;
}

/* See faultlib.h. */
int faultRollback(FaultDb *p) {
  if (p->db == NULL || sqlite3_get_autocommit(p->db)) return SQLITE_OK;
  return faultExec(p, "ROLLBACK");
}

/* Compares full and filtered scans of t with the same queries on m. */
static int faultScanCheck(FaultDb *p) {
  static const char *const azWhere[] = {
      "", "WHERE tag = 'a' AND n > 20", "WHERE x IS NULL",
      "WHERE rowid BETWEEN 10 AND 60 AND tag IN ('b', 'c')"};
  int i, rc = SQLITE_OK;
  for (i = 0; rc == SQLITE_OK && i < (int)(sizeof(azWhere) / sizeof(*azWhere));
       i++) {
    char zA[256], zB[256];
    snprintf(zA, sizeof(zA),
             "SELECT rowid, v, tag, n, x FROM t %s ORDER BY rowid", azWhere[i]);
    snprintf(zB, sizeof(zB),
             "SELECT rowid, v, tag, n, x FROM m %s ORDER BY rowid", azWhere[i]);
    rc = faultSameRows(p, zA, zB);
  }
  return rc;
}

/* See faultlib.h. */
int faultStepRun(FaultDb *p, int iStep) {
  const FaultStep *pStep;
  p->rcErr = SQLITE_OK;
  p->zErr[0] = 0;
  if (iStep < 0 || iStep >= FAULT_NSTEP) {
    return faultSetErr(p, SQLITE_MISUSE, "no step %d", iStep);
  }
  pStep = &faultSteps[iStep];
  switch (pStep->eKind) {
  case FS_KNN:
    return faultKnnCheck(p);
  case FS_SCAN:
    return faultScanCheck(p);
  case FS_REOPEN: {
    int rc = faultDbClose(p);
    if (rc != SQLITE_OK) return rc;
    rc = faultDbReopen(p);
    /* the first read of t after the reopen opens its segments */
    if (rc == SQLITE_OK) rc = faultExec(p, "SELECT count(*) FROM t");
    return rc;
  }
  case FS_BULK: {
    int rc;
    colvecWriteSetPendingBytes(FAULT_BULK_BYTES);
    rc = faultExec(p, pStep->zSql);
    colvecWriteSetPendingBytes(0);
    return rc;
  }
  default:
    return faultExec(p, pStep->zSql);
  }
}

/* ------------------------------------------------------------- checks */

/* See faultlib.h. */
int faultCompare(FaultDb *p) {
  int bT, bM;
  p->rcErr = SQLITE_OK;
  p->zErr[0] = 0;
  bT = faultHasTable(p, "t");
  bM = faultHasTable(p, "m");
  if (bT != bM) {
    return faultSetErr(p, FAULT_WRONG, "t %s, m %s", bT ? "exists" : "missing",
                       bM ? "exists" : "missing");
  }
  if (!bT) return SQLITE_OK;
  return faultSameRows(p, "SELECT rowid, v, tag, n, x FROM t ORDER BY rowid",
                       "SELECT rowid, v, tag, n, x FROM m ORDER BY rowid");
}

/* See faultlib.h. */
int faultIntegrity(FaultDb *p) {
  return faultExec(p, "INSERT INTO t(t) VALUES('integrity-check')");
}

/*
** One KNN comparison: query zQ, k, filter tag = 'a' when bFilter. Returns
** SQLITE_OK, FAULT_WRONG or a statement's error.
*/
static int faultKnnOne(FaultDb *p, const char *zQ, int k, int bFilter) {
  char zKnn[256], zBrute[256], zRow[256];
  sqlite3_stmt *pKnn = NULL, *pBrute = NULL, *pRow = NULL;
  const char *zWhere = bFilter ? " AND tag = 'a'" : "";
  double dPrev = -1.0;
  int rc, n = 0;
  snprintf(zKnn, sizeof(zKnn),
           "SELECT rowid, distance FROM t WHERE v MATCH ?1 AND k = ?2 AND "
           "rescore = 1%s",
           zWhere);
  snprintf(zBrute, sizeof(zBrute),
           "SELECT colvec_distance_l2(v, ?1) AS d FROM m WHERE 1%s "
           "ORDER BY d LIMIT ?2",
           zWhere);
  snprintf(zRow, sizeof(zRow),
           "SELECT colvec_distance_l2(v, ?1) FROM m WHERE rowid = ?2%s",
           zWhere);
  rc = faultPrepare(p, zKnn, &pKnn);
  if (rc == SQLITE_OK) rc = faultPrepare(p, zBrute, &pBrute);
  if (rc == SQLITE_OK) rc = faultPrepare(p, zRow, &pRow);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(pKnn, 1, zQ, -1, SQLITE_STATIC);
    sqlite3_bind_int(pKnn, 2, k);
    sqlite3_bind_text(pBrute, 1, zQ, -1, SQLITE_STATIC);
    sqlite3_bind_int(pBrute, 2, k);
    sqlite3_bind_text(pRow, 1, zQ, -1, SQLITE_STATIC);
  }
  while (rc == SQLITE_OK) {
    int rcK = sqlite3_step(pKnn), rcB;
    double d, dB, dR;
    sqlite3_int64 iRowid;
    if (rcK != SQLITE_ROW && rcK != SQLITE_DONE) {
      rc = faultDbErr(p);
      break;
    }
    rcB = sqlite3_step(pBrute);
    if (rcB != SQLITE_ROW && rcB != SQLITE_DONE) {
      rc = faultDbErr(p);
      break;
    }
    if (rcK != rcB) {
      rc = faultSetErr(p, FAULT_WRONG, "KNN %s k=%d%s: %d rows, brute force %s",
                       zQ, k, zWhere, n + (rcK == SQLITE_ROW),
                       rcB == SQLITE_ROW ? "more" : "fewer");
      break;
    }
    if (rcK == SQLITE_DONE) break;
    iRowid = sqlite3_column_int64(pKnn, 0);
    d = sqlite3_column_double(pKnn, 1);
    dB = sqlite3_column_double(pBrute, 0);
    if (fabs(d - dB) > 1e-6 * (1.0 + dB) || d < dPrev) {
      rc = faultSetErr(p, FAULT_WRONG,
                       "KNN %s k=%d%s: result %d (rowid %lld) at %.9g, brute "
                       "force %.9g, previous %.9g",
                       zQ, k, zWhere, n, (long long)iRowid, d, dB, dPrev);
      break;
    }
    sqlite3_reset(pRow);
    sqlite3_bind_int64(pRow, 2, iRowid);
    if (sqlite3_step(pRow) != SQLITE_ROW) {
      rc = sqlite3_errcode(p->db) == SQLITE_OK ||
                   sqlite3_errcode(p->db) == SQLITE_DONE
               ? faultSetErr(p, FAULT_WRONG,
                             "KNN %s k=%d%s: rowid %lld is not a row of m "
                             "passing the filter",
                             zQ, k, zWhere, (long long)iRowid)
               : faultDbErr(p);
      break;
    }
    dR = sqlite3_column_double(pRow, 0);
    if (fabs(d - dR) > 1e-6 * (1.0 + dR)) {
      rc =
          faultSetErr(p, FAULT_WRONG,
                      "KNN %s k=%d%s: rowid %lld at %.9g, its distance is %.9g",
                      zQ, k, zWhere, (long long)iRowid, d, dR);
      break;
    }
    dPrev = d;
    n++;
  }
  sqlite3_finalize(pKnn);
  sqlite3_finalize(pBrute);
  sqlite3_finalize(pRow);
  return rc;
}

/* See faultlib.h. */
int faultKnnCheck(FaultDb *p) {
  int i, rc = SQLITE_OK;
  p->rcErr = SQLITE_OK;
  p->zErr[0] = 0;
  for (i = 0; rc == SQLITE_OK &&
              i < (int)(sizeof(faultQueries) / sizeof(faultQueries[0]));
       i++) {
    rc = faultKnnOne(p, faultQueries[i], i % 2 ? 20 : 5, i % 2 == 0);
  }
  return rc;
}

/* Adds the bytes of column i of pStmt (with its type) to FNV-1a hash *pH. */
static void faultHashValue(uint64_t *pH, sqlite3_stmt *pStmt, int i) {
  int e = sqlite3_column_type(pStmt, i);
  const unsigned char *a = NULL;
  unsigned char aNum[8];
  int n = 0, j;
  if (e == SQLITE_INTEGER) {
    sqlite3_int64 v = sqlite3_column_int64(pStmt, i);
    memcpy(aNum, &v, 8);
    a = aNum;
    n = 8;
  } else if (e == SQLITE_FLOAT) {
    double v = sqlite3_column_double(pStmt, i);
    memcpy(aNum, &v, 8);
    a = aNum;
    n = 8;
  } else if (e == SQLITE_TEXT) {
    a = sqlite3_column_text(pStmt, i);
    n = sqlite3_column_bytes(pStmt, i);
  } else if (e == SQLITE_BLOB) {
    a = sqlite3_column_blob(pStmt, i);
    n = sqlite3_column_bytes(pStmt, i);
  }
  *pH = (*pH ^ (uint64_t)e) * 0x100000001b3ULL;
  for (j = 0; j < n; j++)
    *pH = (*pH ^ a[j]) * 0x100000001b3ULL;
  *pH = (*pH ^ 0xff) * 0x100000001b3ULL;
}

/* Adds every row of zSql to hash *pH. Returns SQLITE_OK or the error. */
static int faultHashQuery(FaultDb *p, const char *zSql, uint64_t *pH) {
  sqlite3_stmt *pStmt;
  int rc = faultPrepare(p, zSql, &pStmt);
  if (rc != SQLITE_OK) return rc;
  while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
    int i, nCol = sqlite3_column_count(pStmt);
    for (i = 0; i < nCol; i++)
      faultHashValue(pH, pStmt, i);
  }
  if (rc != SQLITE_DONE) {
    faultDbErr(p);
    sqlite3_finalize(pStmt);
    return p->rcErr;
  }
  sqlite3_finalize(pStmt);
  return SQLITE_OK;
}

/* See faultlib.h. */
uint64_t faultStateHash(FaultDb *p, int *pRc) {
  uint64_t h = 0xcbf29ce484222325ULL;
  int rc;
  p->rcErr = SQLITE_OK;
  p->zErr[0] = 0;
  rc = faultHashQuery(p, "SELECT name FROM sqlite_schema ORDER BY name", &h);
  if (rc == SQLITE_OK && faultHasTable(p, "m")) {
    rc = faultHashQuery(p, "SELECT rowid, v, tag, n, x FROM m ORDER BY rowid",
                        &h);
  }
  *pRc = rc;
  return rc == SQLITE_OK ? h : 0;
}

/* See faultlib.h. */
int faultOrphans(FaultDb *p, int *pnOrphan, int *pnTmp) {
  sqlite3_stmt *pStmt = NULL;
  char zFolder[600];
  DIR *pDir;
  struct dirent *pEnt;
  int rc, nOrphan = 0, nTmp = 0;
  if (pnOrphan) *pnOrphan = 0;
  if (pnTmp) *pnTmp = 0;
  if (!faultHasTable(p, "t_config")) return SQLITE_OK;
  rc = faultPrepare(p, "SELECT value FROM t_config WHERE key = 'folder'",
                    &pStmt);
  if (rc != SQLITE_OK) return rc;
  if (sqlite3_step(pStmt) != SQLITE_ROW) {
    sqlite3_finalize(pStmt);
    return faultSetErr(p, FAULT_WRONG, "t_config has no folder");
  }
  snprintf(zFolder, sizeof(zFolder), "%s-colvec/%s", p->zDb,
           (const char *)sqlite3_column_text(pStmt, 0));
  sqlite3_finalize(pStmt);
  rc = faultPrepare(p,
                    "SELECT 1 FROM t_manifest WHERE segid = ?1 "
                    "UNION ALL SELECT 1 FROM t_trash WHERE segid = ?1",
                    &pStmt);
  if (rc != SQLITE_OK) return rc;
  pDir = opendir(zFolder);
  if (pDir == NULL) {
    sqlite3_finalize(pStmt);
    return SQLITE_OK;
  }
  while ((pEnt = readdir(pDir)) != NULL) {
    const char *z = pEnt->d_name;
    size_t n = strlen(z);
    char *zEnd = NULL;
    long long iSeg;
    if (n > 4 && strcmp(z + n - 4, ".tmp") == 0) {
      nTmp++;
      continue;
    }
    if (n < 5 || strcmp(z + n - 4, ".seg") != 0) continue;
    iSeg = strtoll(z, &zEnd, 10);
    if (zEnd != z + n - 4) continue;
    sqlite3_reset(pStmt);
    sqlite3_bind_int64(pStmt, 1, iSeg);
    if (sqlite3_step(pStmt) != SQLITE_ROW) {
      if (sqlite3_errcode(p->db) != SQLITE_DONE &&
          sqlite3_errcode(p->db) != SQLITE_OK) {
        rc = faultDbErr(p);
        break;
      }
      nOrphan++;
    }
  }
  closedir(pDir);
  sqlite3_finalize(pStmt);
  if (pnOrphan) *pnOrphan = nOrphan;
  if (pnTmp) *pnTmp = nTmp;
  return rc;
}

/* See faultlib.h. */
int faultFdCount(void) {
#if defined(_WIN32)
  /* GetProcessHandleCount() answers 0 under wine: then count the handle
  ** values below 4096 that are open (wine, like Windows, hands out the
  ** lowest free ones first; a test process has a few dozen). */
  DWORD n = 0, flags;
  ULONG_PTR h;
  if (GetProcessHandleCount(GetCurrentProcess(), &n) && n > 0) return (int)n;
  for (h = 4; h < 4096; h += 4) {
    if (GetHandleInformation((HANDLE)h, &flags)) n++;
  }
  return (int)n;
#else
  DIR *pDir = opendir("/proc/self/fd");
  struct dirent *pEnt;
  int n = 0;
  if (pDir == NULL) return -1;
  while ((pEnt = readdir(pDir)) != NULL) {
    if (pEnt->d_name[0] != '.') n++;
  }
  closedir(pDir);
  return n - 1; /* the listing's own descriptor */
#endif
}

/* ---------------------------------------------------- fault injection */

/* State of the injection hook. */
static struct {
  pthread_mutex_t mutex;          /* calls may come from build threads */
  int eOp;                        /* kind of call to fail */
  long iNth;                      /* index of the first call to fail, -1 */
  int iErrno;                     /* errno of a failed call */
  int bPersist;                   /* keep failing after the first */
  long nShort;                    /* bytes a failing write writes, -1 none */
  int nFired;                     /* calls failed so far */
  long aCount[COLVEC_OSOP_COUNT]; /* calls seen per kind */
} faultInj = {PTHREAD_MUTEX_INITIALIZER, 0, -1, 0, 0, -1, 0, {0}};

/* xBefore of the hook: counts the call and fails it when chosen. */
static int faultInjBefore(void *pArg, int eOp, const char *zPath,
                          const char *zPath2, int64_t iArg, int64_t *pn) {
  int iFault = 0;
  long i;
  (void)pArg;
  (void)zPath;
  (void)zPath2;
  (void)iArg;
  if (eOp <= 0 || eOp >= COLVEC_OSOP_COUNT) return 0;
  pthread_mutex_lock(&faultInj.mutex);
  i = faultInj.aCount[eOp]++;
  if (eOp == faultInj.eOp && faultInj.iNth >= 0 &&
      (i == faultInj.iNth || (faultInj.bPersist && i > faultInj.iNth))) {
    iFault = faultInj.iErrno;
    faultInj.nFired++;
    if (eOp == COLVEC_OSOP_WRITE && faultInj.nShort >= 0 && pn && *pn > 0) {
      *pn = faultInj.nShort < *pn ? faultInj.nShort : *pn - 1;
    }
  }
  pthread_mutex_unlock(&faultInj.mutex);
  return iFault;
}

/* The hook installed by faultInjectStart(). */
static const ColvecOsHook faultInjHook = {faultInjBefore, NULL, NULL};

/* See faultlib.h. */
void faultInjectStart(int eOp, long iNth, int iErrno, int bPersist,
                      long nShort) {
  pthread_mutex_lock(&faultInj.mutex);
  faultInj.eOp = eOp;
  faultInj.iNth = iNth;
  faultInj.iErrno = iErrno;
  faultInj.bPersist = bPersist;
  faultInj.nShort = nShort;
  faultInj.nFired = 0;
  memset(faultInj.aCount, 0, sizeof(faultInj.aCount));
  pthread_mutex_unlock(&faultInj.mutex);
  colvecOsSetHook(&faultInjHook);
}

/* See faultlib.h. */
int faultInjectStop(void) {
  int n;
  colvecOsSetHook(NULL);
  pthread_mutex_lock(&faultInj.mutex);
  n = faultInj.nFired;
  pthread_mutex_unlock(&faultInj.mutex);
  return n;
}

/* See faultlib.h. */
int faultInjectFired(void) {
  int n;
  pthread_mutex_lock(&faultInj.mutex);
  n = faultInj.nFired;
  pthread_mutex_unlock(&faultInj.mutex);
  return n;
}

/* See faultlib.h. */
long faultInjectCount(int eOp) {
  long n;
  if (eOp <= 0 || eOp >= COLVEC_OSOP_COUNT) return 0;
  pthread_mutex_lock(&faultInj.mutex);
  n = faultInj.aCount[eOp];
  pthread_mutex_unlock(&faultInj.mutex);
  return n;
}

/* See faultlib.h. */
const char *faultOpName(int eOp) {
  static const char *const azName[COLVEC_OSOP_COUNT] = {
      "?",       "open",   "close",  "read",  "write", "fsync",   "size",
      "dirsync", "rename", "unlink", "mkdir", "rmdir", "listdir", "mmap"};
  return eOp > 0 && eOp < COLVEC_OSOP_COUNT ? azName[eOp] : "?";
}
