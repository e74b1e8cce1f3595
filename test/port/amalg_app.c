/*
** amalg_app.c — a small app built from the amalgamation (colvec.c,
** compiled with -DSQLITE_CORE) and SQLite's own amalgamation, as an app
** developer would (test/port/amalg_app.sh builds and runs it).
**
** Usage: amalg_app DBPATH SQLITE_VERSION
**
** colvec is registered once with sqlite3_auto_extension(); then, on the
** file DBPATH and on ":memory:", a KNN session: 500 rows of 8 dimensions
** (delta_rows=100, so the commit writes them to a segment file), 10
** queries whose answers are compared with a brute-force search, the same
** after a DELETE, an integrity-check, and (file only) after reopening.
** Prints one line per check and "N checks, N failed"; exit status 0 when
** all passed.
*/
#include "colvec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../lib/testcheck.h"

#define APP_DIM 8    /* dimensions of the vectors */
#define APP_ROWS 500 /* rows inserted */
#define APP_K 10     /* neighbours asked for */

/* Runs sql on db; returns SQLITE_OK or prints the error. */
static int appExec(sqlite3 *db, const char *zSql) {
  char *zErr = NULL;
  int rc = sqlite3_exec(db, zSql, NULL, NULL, &zErr);
  if (rc != SQLITE_OK) printf("error: %s: %s\n", zSql, zErr ? zErr : "?");
  sqlite3_free(zErr);
  return rc;
}

/* Squared L2 distance of two vectors. */
static double appL2sq(const float *a, const float *b) {
  double s = 0;
  int i;
  for (i = 0; i < APP_DIM; i++)
    s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
  return s;
}

/*
** The APP_K nearest live rows (abLive) to q by brute force, into aOut
** (rowids, ties to the lower rowid).
*/
static void appRefKnn(float (*aVec)[APP_DIM], const int *abLive, const float *q,
                      sqlite3_int64 *aOut) {
  double aBest[APP_K];
  int n = 0, i, j;
  for (i = 0; i < APP_ROWS; i++) {
    double d;
    if (!abLive[i]) continue;
    d = appL2sq(aVec[i], q);
    for (j = n; j > 0 && aBest[j - 1] > d; j--) {
      if (j < APP_K) {
        aBest[j] = aBest[j - 1];
        aOut[j] = aOut[j - 1];
      }
    }
    if (j < APP_K) {
      aBest[j] = d;
      aOut[j] = i + 1;
      if (n < APP_K) n++;
    }
  }
}

/*
** Runs the queries on table t of db and compares rowids and distances with
** the brute force; test names start with zWhat.
*/
static void appQueries(sqlite3 *db, float (*aVec)[APP_DIM], const int *abLive,
                       const char *zWhat) {
  unsigned int seed = 4242;
  sqlite3_stmt *pStmt = NULL;
  int iq, rc;
  char zName[100];
  rc = sqlite3_prepare_v2(db,
                          "SELECT rowid, distance FROM t WHERE e MATCH ?1 "
                          "AND k = 10",
                          -1, &pStmt, NULL);
  snprintf(zName, sizeof(zName), "%s.prepare", zWhat);
  testCheck(rc == SQLITE_OK, zName, sqlite3_errmsg(db));
  if (rc != SQLITE_OK) return;
  for (iq = 0; iq < 10; iq++) {
    float q[APP_DIM];
    sqlite3_int64 aRef[APP_K];
    int i, n = 0, bOk = 1;
    char zDetail[200] = "";
    for (i = 0; i < APP_DIM; i++)
      q[i] = testRand(&seed);
    appRefKnn(aVec, abLive, q, aRef);
    sqlite3_bind_blob(pStmt, 1, q, (int)sizeof(q), SQLITE_TRANSIENT);
    while (sqlite3_step(pStmt) == SQLITE_ROW) {
      sqlite3_int64 iRow = sqlite3_column_int64(pStmt, 0);
      double d = sqlite3_column_double(pStmt, 1);
      double dRef = n < APP_K ? sqrt(appL2sq(aVec[aRef[n] - 1], q)) : -1;
      if (n >= APP_K || iRow != aRef[n] || fabs(d - dRef) > 1e-5) {
        if (bOk) {
          snprintf(zDetail, sizeof(zDetail),
                   "result %d: rowid %lld distance %g, expected %lld %g", n,
                   (long long)iRow, d, n < APP_K ? (long long)aRef[n] : -1LL,
                   dRef);
        }
        bOk = 0;
      }
      n++;
    }
    rc = sqlite3_reset(pStmt);
    if (rc != SQLITE_OK) {
      snprintf(zDetail, sizeof(zDetail), "%s", sqlite3_errmsg(db));
      bOk = 0;
    } else if (n != APP_K && bOk) {
      snprintf(zDetail, sizeof(zDetail), "%d rows, expected %d", n, APP_K);
      bOk = 0;
    }
    snprintf(zName, sizeof(zName), "%s.q%d", zWhat, iq);
    testCheck(bOk, zName, zDetail);
  }
  sqlite3_finalize(pStmt);
}

/* Returns the single integer of query zSql on db (-1 on error). */
static sqlite3_int64 appInt(sqlite3 *db, const char *zSql) {
  sqlite3_stmt *pStmt = NULL;
  sqlite3_int64 v = -1;
  if (sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) == SQLITE_OK &&
      sqlite3_step(pStmt) == SQLITE_ROW) {
    v = sqlite3_column_int64(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  return v;
}

/*
** The session on database zPath (a file, or ":memory:"): creates, fills
** and queries table t; reopens a file database and queries again.
*/
static void appSession(const char *zPath, const char *zWhat) {
  static float aVec[APP_ROWS][APP_DIM];
  static int abLive[APP_ROWS];
  sqlite3 *db = NULL;
  sqlite3_stmt *pIns = NULL;
  unsigned int seed = 7;
  int i, j, rc;
  char zName[100];
  int bFile = strcmp(zPath, ":memory:") != 0;

  for (i = 0; i < APP_ROWS; i++) {
    abLive[i] = 1;
    for (j = 0; j < APP_DIM; j++)
      aVec[i][j] = testRand(&seed);
  }
  rc = sqlite3_open(zPath, &db);
  snprintf(zName, sizeof(zName), "%s.open", zWhat);
  testCheck(rc == SQLITE_OK, zName, sqlite3_errmsg(db));
  snprintf(zName, sizeof(zName), "%s.version", zWhat);
  {
    sqlite3_stmt *p = NULL;
    int bOk =
        sqlite3_prepare_v2(db, "SELECT colvec_version()", -1, &p, NULL) ==
            SQLITE_OK &&
        sqlite3_step(p) == SQLITE_ROW &&
        strcmp((const char *)sqlite3_column_text(p, 0), COLVEC_VERSION) == 0;
    sqlite3_finalize(p);
    testCheck(bOk, zName, "colvec_version() is not COLVEC_VERSION");
  }
  rc = appExec(db, "CREATE VIRTUAL TABLE t USING colvec(e float[8], "
                   "tag text, delta_rows=100)");
  if (rc == SQLITE_OK) rc = appExec(db, "BEGIN");
  if (rc == SQLITE_OK) {
    rc = sqlite3_prepare_v2(db,
                            "INSERT INTO t(rowid, e, tag) VALUES (?1, ?2, "
                            "'r' || ?1)",
                            -1, &pIns, NULL);
  }
  for (i = 0; rc == SQLITE_OK && i < APP_ROWS; i++) {
    sqlite3_bind_int(pIns, 1, i + 1);
    sqlite3_bind_blob(pIns, 2, aVec[i], (int)sizeof(aVec[i]), SQLITE_STATIC);
    if (sqlite3_step(pIns) != SQLITE_DONE) rc = SQLITE_ERROR;
    if (sqlite3_reset(pIns) != SQLITE_OK) rc = SQLITE_ERROR;
  }
  sqlite3_finalize(pIns);
  if (rc == SQLITE_OK) rc = appExec(db, "COMMIT");
  snprintf(zName, sizeof(zName), "%s.insert", zWhat);
  testCheck(rc == SQLITE_OK, zName, sqlite3_errmsg(db));
  snprintf(zName, sizeof(zName), "%s.segments", zWhat);
  testCheck(appInt(db, "SELECT count(*) FROM t_manifest") >= 1, zName,
            "expected the rows to be in a segment");
  appQueries(db, aVec, abLive, zWhat);

  for (i = 0; i < APP_ROWS; i += 3)
    abLive[i] = 0;
  rc = appExec(db, "DELETE FROM t WHERE rowid % 3 = 1");
  if (rc == SQLITE_OK) {
    rc = appExec(db, "INSERT INTO t(t) VALUES ('integrity-check')");
  }
  snprintf(zName, sizeof(zName), "%s.delete", zWhat);
  testCheck(rc == SQLITE_OK && appInt(db, "SELECT count(*) FROM t") == 333,
            zName, sqlite3_errmsg(db));
  snprintf(zName, sizeof(zName), "%s.after-delete", zWhat);
  appQueries(db, aVec, abLive, zName);

  if (bFile) {
    sqlite3_close(db);
    db = NULL;
    rc = sqlite3_open(zPath, &db);
    snprintf(zName, sizeof(zName), "%s.reopened", zWhat);
    appQueries(db, aVec, abLive, zName);
  }
  snprintf(zName, sizeof(zName), "%s.close", zWhat);
  testCheck(sqlite3_close(db) == SQLITE_OK, zName, "sqlite3_close failed");
}

int main(int argc, char **argv) {
  int rc;
  if (argc != 3) {
    fprintf(stderr, "usage: %s DBPATH SQLITE_VERSION\n", argv[0]);
    return 2;
  }
  testCheck(strcmp(sqlite3_libversion(), argv[2]) == 0, "sqlite-version",
            sqlite3_libversion());
  rc = sqlite3_auto_extension((void (*)(void))sqlite3_colvec_init);
  testCheck(rc == SQLITE_OK, "auto-extension", sqlite3_errstr(rc));
  remove(argv[1]);
  appSession(argv[1], "file");
  appSession(":memory:", "memory");
  printf("%d checks, %d failed\n", nCheck, nFail);
  return nFail == 0 && nCheck > 0 ? 0 : 1;
}
