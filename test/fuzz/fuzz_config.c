/*
** fuzz_config.c — libFuzzer target: CREATE VIRTUAL TABLE argument parsing
** (colvec_config.c) and the declared schema, through SQLite.
**
** The module is linked statically (-DSQLITE_CORE) with the system SQLite
** and registered on each fresh :memory: connection. The input is the text
** between the parentheses of `CREATE VIRTUAL TABLE t USING colvec(...)`.
** When CREATE succeeds the table is used a little (schema, a scan, a KNN
** query on its first vector column with a zero vector, integrity-check),
** then dropped.
**
** Invariants beyond "no crash, no leak, no sanitizer report": an error
** raised by the module says "colvec: ..." (never SQLite's generic
** "vtable constructor failed"), and a table that was created can be
** queried, checked and dropped without error.
*/
#include "colvec.h"
#include <sqlite3.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Aborts with a message: an invariant was broken. */
#define FZ_CHECK(c, zMsg)                                                      \
  do {                                                                         \
    if (!(c)) {                                                                \
      fprintf(stderr, "fuzz_config: invariant failed: %s (line %d): %s\n", #c, \
              __LINE__, (zMsg) ? (zMsg) : "");                                 \
      abort();                                                                 \
    }                                                                          \
  } while (0)

/* Sets a private TMPDIR once (segment folders of :memory: tables). */
static void fzSetup(void) {
  static int bDone = 0;
  if (!bDone) {
    char zDir[] = "/tmp/colvec-fuzz-config-XXXXXX";
    if (mkdtemp(zDir)) setenv("TMPDIR", zDir, 1);
    bDone = 1;
  }
}

/* Runs zSql; returns the result code (rows are discarded). */
static int fzExec(sqlite3 *db, const char *zSql) {
  return sqlite3_exec(db, zSql, NULL, NULL, NULL);
}

/* Callback of PRAGMA table_info: remembers the first vector column. */
static int fzFirstVector(void *pCtx, int nCol, char **azVal, char **azName) {
  char *zName = (char *)pCtx;
  (void)azName;
  if (nCol >= 3 && zName[0] == 0 && azVal[2] && azVal[1] &&
      (strstr(azVal[2], "[") != NULL)) {
    snprintf(zName, 256, "%s", azVal[1]);
  }
  return 0;
}

/*
** Is zMsg a message that SQLite's parser (not the module) produces? Those
** are the only errors allowed to lack the "colvec: " prefix.
*/
static int fzSqliteMessage(const char *zMsg) {
  static const char *const azOk[] = {
      "syntax error", "unrecognized token",    "incomplete input",
      "near \"",      "parser stack overflow", "string or blob too big"};
  int i;
  for (i = 0; i < (int)(sizeof(azOk) / sizeof(azOk[0])); i++) {
    if (strstr(zMsg, azOk[i])) return 1;
  }
  return 0;
}

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData) {
  sqlite3 *db = NULL;
  char *zSql, *zErr = NULL;
  int rc;
  if (nData > 4096 || memchr(aData, 0, nData)) return 0;
  fzSetup();
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) abort();
  rc = sqlite3_colvec_init(db, &zErr, NULL);
  FZ_CHECK(rc == SQLITE_OK, zErr);
  zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE t USING colvec(%.*s)",
                         (int)nData, (const char *)aData);
  FZ_CHECK(zSql != NULL, "out of memory");
  rc = sqlite3_exec(db, zSql, NULL, NULL, &zErr);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) {
    FZ_CHECK(zErr != NULL, "no message");
    FZ_CHECK(strncmp(zErr, "colvec: ", 8) == 0 || fzSqliteMessage(zErr), zErr);
    sqlite3_free(zErr);
    zErr = NULL;
  } else {
    char zVec[256];
    zVec[0] = 0;
    rc = sqlite3_exec(db, "PRAGMA table_info(t)", fzFirstVector, zVec, &zErr);
    if (rc == SQLITE_OK) rc = fzExec(db, "SELECT * FROM t");
    if (rc == SQLITE_OK) {
      rc = fzExec(db, "INSERT INTO t(t) VALUES('integrity-check')");
    }
    /* table_info shows the declared type: KNN with a zero query of the
    ** right size is built from it by the module's own JSON parser */
    if (rc == SQLITE_OK && zVec[0]) {
      char *zQ =
          sqlite3_mprintf("SELECT rowid, distance FROM t WHERE \"%w\" MATCH "
                          "(SELECT json_group_array(0) FROM (SELECT 1))"
                          " AND k = 3",
                          zVec);
      /* a wrong-sized query is an error with a message, not a crash */
      if (zQ) sqlite3_exec(db, zQ, NULL, NULL, NULL);
      sqlite3_free(zQ);
    }
    FZ_CHECK(rc == SQLITE_OK, zErr ? zErr : sqlite3_errmsg(db));
    sqlite3_free(zErr);
    zErr = NULL;
    rc = sqlite3_exec(db, "DROP TABLE t", NULL, NULL, &zErr);
    FZ_CHECK(rc == SQLITE_OK, zErr);
  }
  rc = sqlite3_close(db);
  FZ_CHECK(rc == SQLITE_OK, "close");
  return 0;
}
