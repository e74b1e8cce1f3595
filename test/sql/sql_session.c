/*
** sql_session.c — one SQL session on a colvec table, every result checked,
** on any platform: the module linked statically (-DSQLITE_CORE) and
** registered with sqlite3_auto_extension(). `make check` runs it against
** the system SQLite; `make check-windows` cross-compiles it with SQLite's
** amalgamation and runs it under wine, `make check-wasm` compiles it to
** WebAssembly with emscripten and runs it under node.
**
** The session, in a database whose name is not ASCII (UTF-8 → UTF-16 on
** Windows): create, bulk and row inserts (segments with and without a
** graph, a delta), KNN against a brute force over a plain model table,
** filtered KNN, delete, update, optimize, integrity-check (the command and
** PRAGMA integrity_check), close and reopen, DROP; a table with
** access=file (segments read, never mapped); a table of an in-memory
** database (segments in memory folders); and the deferred
** delete: while a second connection maps the segments an optimize dropped,
** commits succeed, and on Windows the files stay (named by trash rows, so
** integrity-check passes) until nothing maps them, when the next commit
** deletes them. Prints "sql_session: ok" and exits 0, or prints the first
** failure (file:line and what) and exits 1.
**
** Usage: sql_session [FOLDER]   (default: $COLVEC_TESTDIR, else ".")
*/
#include "colvec.h"
#include "colvec_os.h"
#include "sqlite3.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Vector dimensions, rows of the bulk load, and delta_rows of the table. */
#define S_DIM 8
#define S_BULK 2500
#define S_DELTA 300

/* Ends the program with a message naming the failing line. */
#define S_FAIL(...)                                                            \
  do {                                                                         \
    fprintf(stderr, "sql_session: %s:%d: ", __FILE__, __LINE__);               \
    fprintf(stderr, __VA_ARGS__);                                              \
    fputc('\n', stderr);                                                       \
    exit(1);                                                                   \
  } while (0)

/* Fails unless X is true. */
#define S_CHECK(X)                                                             \
  do {                                                                         \
    if (!(X)) S_FAIL("check failed: %s", #X);                                  \
  } while (0)

/* Fails unless integers X and Y are equal, printing both. */
#define S_EQ(X, Y)                                                             \
  do {                                                                         \
    long long sX = (long long)(X), sY = (long long)(Y);                        \
    if (sX != sY) S_FAIL("%s == %lld, %s == %lld", #X, sX, #Y, sY);            \
  } while (0)

/* Runs zSql (one or more statements) on db; fails on any error. */
static void sExec(sqlite3 *db, const char *zSql, int iLine) {
  char *zErr = NULL;
  if (sqlite3_exec(db, zSql, NULL, NULL, &zErr) != SQLITE_OK) {
    fprintf(stderr, "sql_session: line %d: %s: %s\n", iLine, zSql, zErr);
    exit(1);
  }
}
#define S_EXEC(db, zSql) sExec(db, zSql, __LINE__)

/* Returns column 0 of the first row of zSql as an integer (0 if none). */
static long long sInt(sqlite3 *db, const char *zSql, int iLine) {
  sqlite3_stmt *pStmt = NULL;
  long long v = 0;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(pStmt);
    if (rc == SQLITE_ROW) v = sqlite3_column_int64(pStmt, 0);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE)
      rc = sqlite3_finalize(pStmt);
    else
      sqlite3_finalize(pStmt);
  }
  if (rc != SQLITE_OK) {
    fprintf(stderr, "sql_session: line %d: %s: %s\n", iLine, zSql,
            sqlite3_errmsg(db));
    exit(1);
  }
  return v;
}
#define S_INT(db, zSql) sInt(db, zSql, __LINE__)

/* Returns column 0 of the first row of zSql as text (static buffer). */
static const char *sText(sqlite3 *db, const char *zSql, int iLine) {
  static char zBuf[1024];
  sqlite3_stmt *pStmt = NULL;
  zBuf[0] = 0;
  if (sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) != SQLITE_OK) {
    fprintf(stderr, "sql_session: line %d: %s: %s\n", iLine, zSql,
            sqlite3_errmsg(db));
    exit(1);
  }
  if (sqlite3_step(pStmt) == SQLITE_ROW && sqlite3_column_text(pStmt, 0)) {
    snprintf(zBuf, sizeof(zBuf), "%s", sqlite3_column_text(pStmt, 0));
  }
  if (sqlite3_finalize(pStmt) != SQLITE_OK) {
    fprintf(stderr, "sql_session: line %d: %s: %s\n", iLine, zSql,
            sqlite3_errmsg(db));
    exit(1);
  }
  return zBuf;
}
#define S_TEXT(db, zSql) sText(db, zSql, __LINE__)

/* Fills a[S_DIM] with the vector of row i (deterministic). */
static void sVector(long long i, float *a) {
  int j;
  for (j = 0; j < S_DIM; j++)
    a[j] = (float)sin((double)i * 0.37 + (double)j * 1.3 + (double)(i % 13));
}

/* Opens zPath; fails on error. */
static sqlite3 *sOpen(const char *zPath) {
  sqlite3 *db = NULL;
  if (sqlite3_open(zPath, &db) != SQLITE_OK) {
    S_FAIL("cannot open %s: %s", zPath, db ? sqlite3_errmsg(db) : "no memory");
  }
  sqlite3_busy_timeout(db, 5000);
  return db;
}

/*
** Inserts rows [iFirst, iLast] into docs and into the model table, in the
** current transaction (or one per row in autocommit mode).
*/
static void sInsert(sqlite3 *db, long long iFirst, long long iLast) {
  sqlite3_stmt *pT = NULL, *pM = NULL;
  long long i;
  float a[S_DIM];
  S_EQ(sqlite3_prepare_v2(db,
                          "INSERT INTO docs(rowid, emb, cat, n) "
                          "VALUES (?1, ?2, ?3, ?1)",
                          -1, &pT, NULL),
       SQLITE_OK);
  S_EQ(sqlite3_prepare_v2(db,
                          "INSERT INTO model(id, emb, cat) VALUES (?1, ?2, ?3)",
                          -1, &pM, NULL),
       SQLITE_OK);
  for (i = iFirst; i <= iLast; i++) {
    const char *zCat = (i % 3) == 0 ? "a" : "b";
    sVector(i, a);
    sqlite3_bind_int64(pT, 1, i);
    sqlite3_bind_blob(pT, 2, a, (int)sizeof(a), SQLITE_TRANSIENT);
    sqlite3_bind_text(pT, 3, zCat, -1, SQLITE_STATIC);
    sqlite3_bind_int64(pM, 1, i);
    sqlite3_bind_blob(pM, 2, a, (int)sizeof(a), SQLITE_TRANSIENT);
    sqlite3_bind_text(pM, 3, zCat, -1, SQLITE_STATIC);
    if (sqlite3_step(pT) != SQLITE_DONE)
      S_FAIL("insert: %s", sqlite3_errmsg(db));
    if (sqlite3_step(pM) != SQLITE_DONE)
      S_FAIL("model: %s", sqlite3_errmsg(db));
    sqlite3_reset(pT);
    sqlite3_reset(pM);
  }
  sqlite3_finalize(pT);
  sqlite3_finalize(pM);
}

/*
** Runs a k=10 KNN for the vector of row iQuery (with the filter cat='a'
** when bFilter) on docs and an exact search on the model table. Checks that
** every hit exists in the model (and passes the filter), that distances
** ascend, that the first hit is the exact nearest, and that at least 9 of
** the 10 exact neighbours were found. The hits' rowids go to aHit[10].
*/
static void sKnn(sqlite3 *db, long long iQuery, int bFilter, long long *aHit) {
  sqlite3_stmt *pT = NULL, *pM = NULL;
  float a[S_DIM];
  long long aExact[10];
  double rPrev = -1.0;
  int n = 0, nExact = 0, i, j, nFound = 0;
  char zSql[256];
  sVector(iQuery, a);
  snprintf(zSql, sizeof(zSql),
           "SELECT rowid, distance, cat FROM docs WHERE emb MATCH ?1 "
           "AND k = 10%s",
           bFilter ? " AND cat = 'a'" : "");
  S_EQ(sqlite3_prepare_v2(db, zSql, -1, &pT, NULL), SQLITE_OK);
  snprintf(zSql, sizeof(zSql),
           "SELECT id FROM model%s ORDER BY colvec_distance_l2(emb, ?1), id "
           "LIMIT 10",
           bFilter ? " WHERE cat = 'a'" : "");
  S_EQ(sqlite3_prepare_v2(db, zSql, -1, &pM, NULL), SQLITE_OK);
  sqlite3_bind_blob(pT, 1, a, (int)sizeof(a), SQLITE_TRANSIENT);
  sqlite3_bind_blob(pM, 1, a, (int)sizeof(a), SQLITE_TRANSIENT);
  while (sqlite3_step(pT) == SQLITE_ROW) {
    double r = sqlite3_column_double(pT, 1);
    S_CHECK(n < 10);
    aHit[n++] = sqlite3_column_int64(pT, 0);
    S_CHECK(r >= rPrev);
    rPrev = r;
    if (bFilter)
      S_CHECK(strcmp((const char *)sqlite3_column_text(pT, 2), "a") == 0);
  }
  if (sqlite3_finalize(pT) != SQLITE_OK) S_FAIL("knn: %s", sqlite3_errmsg(db));
  while (sqlite3_step(pM) == SQLITE_ROW) {
    aExact[nExact++] = sqlite3_column_int64(pM, 0);
  }
  S_EQ(sqlite3_finalize(pM), SQLITE_OK);
  S_EQ(n, 10);
  S_EQ(nExact, 10);
  for (i = 0; i < n; i++) {
    for (j = 0; j < nExact; j++)
      nFound += aHit[i] == aExact[j];
  }
  if (nFound < 9 || aHit[0] != aExact[0]) {
    S_FAIL("knn of row %lld%s: %d of 10 exact neighbours, first %lld (exact "
           "%lld)",
           iQuery, bFilter ? " (cat='a')" : "", nFound, aHit[0], aExact[0]);
  }
}

/* Returns the path of docs' segment folder (sqlite3_free it). */
static char *sFolder(sqlite3 *db) {
  const char *zFile = sqlite3_db_filename(db, "main");
  char *zId = sqlite3_mprintf(
      "%s", S_TEXT(db, "SELECT value FROM docs_config WHERE key = 'folder'"));
  char *z = sqlite3_mprintf("%s-colvec" COLVEC_OS_SEP "%s", zFile, zId);
  sqlite3_free(zId);
  S_CHECK(z != NULL);
  return z;
}

/* Number of *.seg files in folder zDir. */
static int sSegFiles(const char *zDir) {
  char **az = NULL;
  int n = 0;
  ColvecErr err;
  if (colvecOsListDir(zDir, ".seg", &az, &n, &err) != COLVEC_OK) {
    S_FAIL("%s", err.zMsg);
  }
  colvecOsListFree(az, n);
  return n;
}

/* The checks of integrity: the colvec command and PRAGMA integrity_check. */
static void sIntegrity(sqlite3 *db) {
  S_EXEC(db, "INSERT INTO docs(docs) VALUES ('integrity-check')");
  S_CHECK(strcmp(S_TEXT(db, "PRAGMA integrity_check"), "ok") == 0);
}

/* The session on a file database in folder zDir; see the file comment. */
static void sFileSession(const char *zDir) {
  /* "séance-ü.db": not ASCII, so paths go through UTF-8 → UTF-16 */
  char *zDb = sqlite3_mprintf("%s" COLVEC_OS_SEP "s\xc3\xa9"
                              "ance-\xc3\xbc.db",
                              zDir);
  sqlite3 *db, *db2;
  char *zSeg, *zRoot;
  long long aBefore[10], aAfter[10];
  int i, nFiles, nOld;

  /* a fresh database: remove what an earlier run left */
  zRoot = sqlite3_mprintf("%s-colvec", zDb);
  colvecOsRemoveTree(zRoot, NULL);
  colvecOsUnlink(zDb, NULL);

  db = sOpen(zDb);
  S_EXEC(db, "CREATE TABLE model(id INTEGER PRIMARY KEY, emb BLOB, cat TEXT)");
  S_EXEC(db, "CREATE VIRTUAL TABLE docs USING colvec(emb float[8], cat text, "
             "n integer, delta_rows=300)");
  zSeg = sFolder(db);
  S_EQ(colvecOsKind(zSeg), COLVEC_OS_DIR);

  /* a bulk load (one segment with a graph), a second transaction over
  ** delta_rows (a segment without one), rows in autocommit (the delta) */
  S_EXEC(db, "BEGIN");
  sInsert(db, 1, S_BULK);
  S_EXEC(db, "COMMIT");
  S_EXEC(db, "BEGIN");
  sInsert(db, S_BULK + 1, S_BULK + 400);
  S_EXEC(db, "COMMIT");
  sInsert(db, S_BULK + 401, S_BULK + 420);
  S_EQ(S_INT(db, "SELECT count(*) FROM docs"), S_BULK + 420);
  S_EQ(S_INT(db, "SELECT count(*) FROM docs_manifest"), 2);
  S_EQ(sSegFiles(zSeg), 2);
  S_CHECK(S_INT(db, "SELECT count(*) FROM docs_delta") > 0);
  for (i = 0; i < 8; i++)
    sKnn(db, 1 + i * 311, i & 1, aBefore);

  /* a ROLLBACK changes nothing */
  S_EXEC(db, "BEGIN");
  S_EXEC(db, "DELETE FROM docs WHERE rowid <= 1000");
  S_EXEC(db, "ROLLBACK");
  S_EQ(S_INT(db, "SELECT count(*) FROM docs"), S_BULK + 420);

  /* a segment written and read (so mapped) inside a transaction that rolls
  ** back is an orphan; the next transaction writes a segment of the same
  ** number over it (on Windows: a rename over a file that may be mapped) */
  S_EXEC(db, "BEGIN");
  sInsert(db, 100001, 100400);
  S_EQ(S_INT(db, "SELECT count(*) FROM docs"), S_BULK + 820);
  sKnn(db, 100005, 0, aAfter);
  S_EXEC(db, "ROLLBACK");
  S_EXEC(db, "BEGIN");
  sInsert(db, 100001, 100400);
  S_EXEC(db, "DELETE FROM model WHERE id > 100000");
  S_EXEC(db, "DELETE FROM docs WHERE rowid > 100000");
  S_EXEC(db, "COMMIT");
  S_EQ(S_INT(db, "SELECT count(*) FROM docs"), S_BULK + 420);
  S_EQ(S_INT(db, "SELECT count(*) FROM docs_manifest"), 3);

  /* delete and update, in the table and the model */
  S_EXEC(db, "BEGIN");
  S_EXEC(db, "DELETE FROM docs WHERE rowid % 7 = 0");
  S_EXEC(db, "DELETE FROM model WHERE id % 7 = 0");
  S_EXEC(db, "UPDATE docs SET cat = 'a' WHERE rowid % 10 = 1");
  S_EXEC(db, "UPDATE model SET cat = 'a' WHERE id % 10 = 1");
  S_EXEC(db, "COMMIT");
  S_EQ(S_INT(db, "SELECT count(*) FROM docs"),
       S_INT(db, "SELECT count(*) FROM model"));
  S_EQ(S_INT(db, "SELECT count(*) FROM docs WHERE cat = 'a'"),
       S_INT(db, "SELECT count(*) FROM model WHERE cat = 'a'"));
  for (i = 0; i < 8; i++)
    sKnn(db, 2 + i * 301, i & 1, aBefore);
  sIntegrity(db);

  /* a second connection maps every segment (a KNN), then stays open */
  db2 = sOpen(zDb);
  sKnn(db2, 5, 0, aAfter);

  /* optimize: one segment; those it replaced are dropped, and the next
  ** commit's cleanup would delete them */
  nOld = (int)S_INT(db, "SELECT count(*) FROM docs_manifest");
  S_EXEC(db, "INSERT INTO docs(docs) VALUES ('optimize')");
  S_EQ(S_INT(db, "SELECT count(*) FROM docs_manifest"), 1);
  sInsert(db, S_BULK + 421, S_BULK + 421);
  sInsert(db, S_BULK + 422, S_BULK + 422);
  nFiles = sSegFiles(zSeg);
#if defined(_WIN32)
  /* db2 maps them: Windows refuses the deletes, the commits succeed and
  ** the trash rows keep the files named */
  S_EQ(nFiles, nOld + 1);
  S_CHECK(S_INT(db, "SELECT count(*) FROM docs_trash") > 0);
#else
  /* POSIX deletes a mapped file; the mapping stays valid */
  (void)nOld;
  S_EQ(nFiles, 1);
#endif
  sIntegrity(db);
  sKnn(db2, 6, 0, aAfter); /* db2 reads the new snapshot */
  sqlite3_close(db2);

  /* nothing maps the old files any more: the next commit deletes them */
  S_EQ(S_INT(db, "SELECT count(*) FROM docs"),
       S_INT(db, "SELECT count(*) FROM model"));
  sInsert(db, S_BULK + 423, S_BULK + 423);
  S_EQ(sSegFiles(zSeg), 1);
  S_EQ(S_INT(db, "SELECT count(*) FROM docs_trash"), 0);
  sIntegrity(db);

  /* close and reopen: the same answers */
  sKnn(db, 77, 0, aBefore);
  S_EQ(sqlite3_close(db), SQLITE_OK);
  db = sOpen(zDb);
  sKnn(db, 77, 0, aAfter);
  for (i = 0; i < 10; i++)
    S_EQ(aBefore[i], aAfter[i]);
  S_EQ(S_INT(db, "SELECT count(*) FROM docs"),
       S_INT(db, "SELECT count(*) FROM model"));
  sIntegrity(db);

  /* DROP in autocommit mode removes the table's folder */
  S_EXEC(db, "DROP TABLE docs");
  S_EQ(colvecOsKind(zSeg), COLVEC_OS_NONE);
  S_EQ(sqlite3_close(db), SQLITE_OK);

  colvecOsRemoveTree(zRoot, NULL);
  colvecOsUnlink(zDb, NULL);
  sqlite3_free(zRoot);
  sqlite3_free(zSeg);
  sqlite3_free(zDb);
}

/*
** A table with access=file (segments read with pread into buffers, never
** mapped) on a file database in folder zDir: KNN before and after a delete,
** the same answers after reopening, integrity-check, DROP.
*/
static void sAccessFileSession(const char *zDir) {
  char *zDb = sqlite3_mprintf("%s" COLVEC_OS_SEP "access-file.db", zDir);
  char *zRoot = sqlite3_mprintf("%s-colvec", zDb);
  sqlite3 *db;
  char *zSeg;
  long long aBefore[10], aAfter[10];
  int i;

  colvecOsRemoveTree(zRoot, NULL);
  colvecOsUnlink(zDb, NULL);
  db = sOpen(zDb);
  S_EXEC(db, "CREATE TABLE model(id INTEGER PRIMARY KEY, emb BLOB, cat TEXT)");
  S_EXEC(db, "CREATE VIRTUAL TABLE docs USING colvec(emb float[8], cat text, "
             "n integer, delta_rows=100, access=file)");
  zSeg = sFolder(db);
  S_EXEC(db, "BEGIN");
  sInsert(db, 1, 900);
  S_EXEC(db, "COMMIT");
  S_CHECK(sSegFiles(zSeg) >= 1);
  for (i = 0; i < 4; i++)
    sKnn(db, 3 + i * 211, i & 1, aBefore);
  S_EXEC(db, "BEGIN");
  S_EXEC(db, "DELETE FROM docs WHERE rowid % 5 = 0");
  S_EXEC(db, "DELETE FROM model WHERE id % 5 = 0");
  S_EXEC(db, "COMMIT");
  sKnn(db, 44, 0, aBefore);
  sIntegrity(db);
  S_EQ(sqlite3_close(db), SQLITE_OK);
  db = sOpen(zDb);
  sKnn(db, 44, 0, aAfter);
  for (i = 0; i < 10; i++)
    S_EQ(aBefore[i], aAfter[i]);
  S_EXEC(db, "DROP TABLE docs");
  S_EQ(colvecOsKind(zSeg), COLVEC_OS_NONE);
  S_EQ(sqlite3_close(db), SQLITE_OK);
  colvecOsRemoveTree(zRoot, NULL);
  colvecOsUnlink(zDb, NULL);
  sqlite3_free(zSeg);
  sqlite3_free(zRoot);
  sqlite3_free(zDb);
}

/* A table of an in-memory database: segments in memory folders. */
static void sMemorySession(void) {
  sqlite3 *db = sOpen(":memory:");
  long long aHit[10];
  S_EXEC(db, "CREATE TABLE model(id INTEGER PRIMARY KEY, emb BLOB, cat TEXT)");
  S_EXEC(db, "CREATE VIRTUAL TABLE docs USING colvec(emb float[8], cat text, "
             "n integer, delta_rows=100)");
  S_EXEC(db, "BEGIN");
  sInsert(db, 1, 700);
  S_EXEC(db, "COMMIT");
  S_CHECK(S_INT(db, "SELECT count(*) FROM docs_manifest") >= 1);
  sKnn(db, 9, 0, aHit);
  sKnn(db, 10, 1, aHit);
  S_EXEC(db, "INSERT INTO docs(docs) VALUES ('optimize')");
  sIntegrity(db);
  S_EXEC(db, "DROP TABLE docs");
  S_EQ(sqlite3_close(db), SQLITE_OK);
}

/* Runs both sessions; exit status 0 when every check passed. */
int main(int argc, char **argv) {
  const char *zDir = argc > 1 ? argv[1] : getenv("COLVEC_TESTDIR");
  if (zDir == NULL || zDir[0] == 0) zDir = ".";
  if (sqlite3_auto_extension((void (*)(void))sqlite3_colvec_init) !=
      SQLITE_OK) {
    S_FAIL("sqlite3_auto_extension failed");
  }
  sFileSession(zDir);
  sAccessFileSession(zDir);
  sMemorySession();
  printf("sql_session: ok (SQLite %s, %s)\n", sqlite3_libversion(),
#if defined(_WIN32)
         "Windows"
#elif defined(__EMSCRIPTEN__)
         "WebAssembly (emscripten)"
#else
         "POSIX"
#endif
  );
  return 0;
}
