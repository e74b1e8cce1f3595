/*
** pkg_load.c — loads a packaged colvec binary into SQLite the way an
** application does (sqlite3_load_extension) and runs a KNN session with it.
** tool/release.sh builds it for each CPU and system it packages a binary
** for and runs it there: natively, under qemu-aarch64, and under wine.
**
** Usage: pkg_load EXTENSION VERSION
**   EXTENSION  the path of the binary (colvec.so, colvec.dll)
**   VERSION    what colvec_version() must return
**
** In ":memory:": 3,000 rows of 8 dimensions in one transaction with
** delta_rows=1000 (so they go to segments, indexed from 2,048 rows on),
** each of 20 stored vectors must be its own nearest neighbour, a filtered
** KNN must return only rows that pass, and integrity-check must pass.
** Prints "ok NAME" or "FAIL NAME: ..." per check and "N checks, N failed";
** exit status 0 when all passed.
*/
#include <sqlite3.h>

#include <stdio.h>
#include <string.h>

#include "../lib/testcheck.h"

#define LOAD_DIM 8     /* dimensions of the vectors */
#define LOAD_ROWS 3000 /* rows inserted */

/* Runs SQL z that returns one value; returns it as an integer (0 when the
** statement fails or returns nothing), and its text in zOut (nOut bytes). */
static long long loadOne(sqlite3 *db, const char *z, char *zOut, int nOut) {
  sqlite3_stmt *p = 0;
  long long v = 0;
  if (zOut) zOut[0] = 0;
  if (sqlite3_prepare_v2(db, z, -1, &p, 0) == SQLITE_OK &&
      sqlite3_step(p) == SQLITE_ROW) {
    v = sqlite3_column_int64(p, 0);
    if (zOut && sqlite3_column_text(p, 0)) {
      snprintf(zOut, (size_t)nOut, "%s", sqlite3_column_text(p, 0));
    }
  } else if (zOut) {
    snprintf(zOut, (size_t)nOut, "%s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(p);
  return v;
}

/* Loads argv[1] into a new in-memory database and runs the checks. */
int main(int argc, char **argv) {
  sqlite3 *db = 0;
  sqlite3_stmt *pIns = 0;
  char *zErr = 0;
  char zBuf[512];
  unsigned seed = 20261204u;
  float aVec[LOAD_DIM];
  int i, d, rc, nSelf = 0, nBad = 0;
  if (argc != 3) {
    fprintf(stderr, "usage: %s EXTENSION VERSION\n", argv[0]);
    return 2;
  }
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) return 1;
  sqlite3_enable_load_extension(db, 1);
  rc = sqlite3_load_extension(db, argv[1], 0, &zErr);
  testCheck(rc == SQLITE_OK, "load", zErr);
  sqlite3_free(zErr);
  if (rc != SQLITE_OK) goto done;
  loadOne(db, "SELECT colvec_version()", zBuf, sizeof(zBuf));
  testCheck(strcmp(zBuf, argv[2]) == 0, "colvec_version", zBuf);

  rc = sqlite3_exec(db,
                    "CREATE VIRTUAL TABLE t USING colvec(e float[8], c integer,"
                    " delta_rows=1000); BEGIN",
                    0, 0, &zErr);
  testCheck(rc == SQLITE_OK, "create", zErr);
  sqlite3_free(zErr);
  zErr = 0;
  sqlite3_prepare_v2(db, "INSERT INTO t(rowid, e, c) VALUES (?, ?, ?)", -1,
                     &pIns, 0);
  for (i = 1; i <= LOAD_ROWS && pIns; i++) {
    for (d = 0; d < LOAD_DIM; d++)
      aVec[d] = testRand(&seed);
    sqlite3_bind_int(pIns, 1, i);
    sqlite3_bind_blob(pIns, 2, aVec, (int)sizeof(aVec), SQLITE_TRANSIENT);
    sqlite3_bind_int(pIns, 3, i % 10);
    if (sqlite3_step(pIns) != SQLITE_DONE) break;
    sqlite3_reset(pIns);
  }
  sqlite3_finalize(pIns);
  testCheck(i > LOAD_ROWS, "insert", sqlite3_errmsg(db));
  rc = sqlite3_exec(db, "COMMIT", 0, 0, &zErr);
  testCheck(rc == SQLITE_OK, "commit", zErr);
  sqlite3_free(zErr);

  for (i = 1; i <= LOAD_ROWS; i += LOAD_ROWS / 20) {
    snprintf(zBuf, sizeof(zBuf),
             "SELECT rowid FROM t WHERE e MATCH (SELECT e FROM t"
             " WHERE rowid = %d) AND k = 1",
             i);
    if (loadOne(db, zBuf, 0, 0) == i) nSelf++;
  }
  snprintf(zBuf, sizeof(zBuf), "%d of 20 found themselves", nSelf);
  testCheck(nSelf == 20, "knn-self", zBuf);
  nBad = (int)loadOne(db,
                      "SELECT count(*) FROM (SELECT c FROM t WHERE e MATCH"
                      " (SELECT e FROM t WHERE rowid = 7) AND k = 10"
                      " AND c = 3) WHERE c != 3",
                      0, 0) +
         (int)loadOne(db,
                      "SELECT 10 - count(*) FROM t WHERE e MATCH (SELECT e"
                      " FROM t WHERE rowid = 7) AND k = 10 AND c = 3",
                      0, 0);
  testCheck(nBad == 0, "knn-filter", "wrong row count");
  rc = sqlite3_exec(db, "INSERT INTO t(t) VALUES ('integrity-check')", 0, 0,
                    &zErr);
  testCheck(rc == SQLITE_OK, "integrity-check", zErr);
  sqlite3_free(zErr);
done:
  sqlite3_close(db);
  printf("%d checks, %d failed\n", nCheck, nFail);
  return nFail ? 1 : 0;
}
