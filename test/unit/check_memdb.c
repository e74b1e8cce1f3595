/*
** check_memdb.c — databases without a file keep colvec's segments in
** memory (the memory store, colvec_store_mem.c), and touch no file.
**
** The module is linked statically (with test/lib/faultlib.c for its
** registration and its counting os-layer hook, colvecOsSetHook), so every
** file-system call of colvec is seen. Tests:
**   - memfs: the memory store's methods (colvec_store.h):
**     create, write (with a gap), read, size, rename over a file, unlink
**     while open and mapped (the bytes stay readable), listing (sorted,
**     by suffix), mkdir -p, rmdir of a folder that is not empty, remove
**     tree, the errors of a missing file or folder, of writing a file opened
**     read-only and of writing a mapped one; no call reaches the hook;
**   - workload (mmap and access=file): a ":memory:" database, a colvec
**     table t and a plain model m written in the same transactions: a bulk
**     load of 2,500 rows (a segment with an HNSW graph), inserts crossing
**     delta_rows (compactions, merges), updates, deletes, a transaction
**     that compacts and rolls back, a savepoint rolled back over a flush,
**     optimize, DROP and CREATE; after every step t equals m, KNN equals a
**     brute force over m, integrity-check passes and the table's memory
**     folder holds exactly the segments T_manifest and T_trash name (no
**     .tmp); no call reaches the hook (no file is opened, created, synced,
**     renamed, listed or removed); after close sqlite3_memory_used() is
**     back to its value before the open and the memory tree is empty;
**   - vfs_kind: the database decides a new table's storage. A VFS whose
**     names are not paths (a copy of memdb under another name, as
**     replicated engines' VFSes are: the database "demo" is no file
**     "demo") gets embedded tables by default, refuses storage=sidecar
**     with a message saying why, and nothing appears in the current
**     folder; a shim VFS over unix (another name, real files) is a file
**     database: sidecar by default, its folder beside the database.
*/
#include "colvecInt.h"
#include "../lib/faultlib.h"
#include "../lib/testdir.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Returns the number of os-layer calls the counting hook saw. */
static long memCalls(void) {
  long n = 0;
  int i;
  for (i = 1; i < COLVEC_OSOP_COUNT; i++)
    n += faultInjectCount(i);
  return n;
}

/* Returns the number of entries of memory folder zDir (-1: cannot list). */
static int memCount(const char *zDir) {
  char **az = NULL;
  int n = 0;
  if (colvecStoreMem.xListDir(zDir, NULL, &az, &n, NULL) != COLVEC_OK)
    return -1;
  colvecOsListFree(az, n);
  return n;
}

/* The memory folders, through the methods of colvecStoreMem. */
START_TEST(test_memfs) {
  const char *zDir = COLVEC_STORE_MEM_ROOT "/check/a/b";
  ColvecFile *pF = NULL, *pR = NULL;
  ColvecMap *pMap = NULL;
  ColvecErr err;
  char **az = NULL;
  int n = 0;
  int64_t nByte = 0;
  uint8_t aBuf[16];
  faultLibInit();
  faultInjectStart(0, -1, 0, 0, -1);
  /* the os layer (the file store) knows nothing of the memory tree */
  ck_assert_int_eq(colvecStoreFile.xKind(COLVEC_STORE_MEM_ROOT "/check"),
                   COLVEC_OS_NONE);
  ck_assert_int_eq(colvecStoreMem.xKind(COLVEC_STORE_MEM_ROOT), COLVEC_OS_DIR);
  /* a file needs its folder */
  ck_assert_int_eq(colvecStoreMem.xOpen(
                       COLVEC_STORE_MEM_ROOT "/check/a/b/f",
                       COLVEC_OPEN_READWRITE | COLVEC_OPEN_CREATE, &pF, &err),
                   COLVEC_IOERR);
  ck_assert_int_eq(err.iErrno, ENOENT);
  ck_assert_int_eq(colvecStoreMem.xMkdirUp(zDir, 0, &err), COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xMkdirUp(zDir, 0, &err), COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xMkdir(zDir, &err), COLVEC_ERROR);
  ck_assert_int_eq(colvecStoreMem.xKind(zDir), COLVEC_OS_DIR);
  /* write with a gap, read back, size */
  ck_assert_int_eq(
      colvecStoreMem.xOpen(COLVEC_STORE_MEM_ROOT "/check/a/b/1.seg.tmp",
                           COLVEC_OPEN_READWRITE | COLVEC_OPEN_CREATE |
                               COLVEC_OPEN_EXCLUSIVE,
                           &pF, &err),
      COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xWrite(pF, "abcd", 4, 8, &err), COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xWrite(pF, "xy", 2, 0, &err), COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xSync(pF, &err), COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xFileStat(pF, &nByte, NULL, &err), COLVEC_OK);
  ck_assert_int_eq(nByte, 12);
  ck_assert_int_eq(colvecStoreMem.xRead(pF, aBuf, 12, 0, &err), COLVEC_OK);
  ck_assert(memcmp(aBuf, "xy\0\0\0\0\0\0abcd", 12) == 0);
  ck_assert_int_eq(colvecStoreMem.xRead(pF, aBuf, 2, 11, &err), COLVEC_IOERR);
  ck_assert_int_eq(colvecStoreMem.xClose(pF, &err), COLVEC_OK);
  /* exclusive create of an existing file */
  ck_assert_int_eq(
      colvecStoreMem.xOpen(COLVEC_STORE_MEM_ROOT "/check/a/b/1.seg.tmp",
                           COLVEC_OPEN_READWRITE | COLVEC_OPEN_CREATE |
                               COLVEC_OPEN_EXCLUSIVE,
                           &pF, &err),
      COLVEC_IOERR);
  ck_assert_int_eq(err.iErrno, EEXIST);
  /* rename over an existing file; its old bytes go */
  ck_assert_int_eq(colvecStoreMem.xOpen(
                       COLVEC_STORE_MEM_ROOT "/check/a/b/1.seg",
                       COLVEC_OPEN_READWRITE | COLVEC_OPEN_CREATE, &pF, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xClose(pF, &err), COLVEC_OK);
  ck_assert_int_eq(
      colvecStoreMem.xRename(COLVEC_STORE_MEM_ROOT "/check/a/b/1.seg.tmp",
                             COLVEC_STORE_MEM_ROOT "/check/a/b/1.seg", &err),
      COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xSyncParent(
                       COLVEC_STORE_MEM_ROOT "/check/a/b/1.seg", &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xSyncDir(zDir, &err), COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xListDir(zDir, NULL, &az, &n, &err),
                   COLVEC_OK);
  ck_assert_int_eq(n, 1);
  ck_assert_str_eq(az[0], "1.seg");
  colvecOsListFree(az, n);
  /* a mapping is the bytes; unlink keeps them while open and mapped */
  ck_assert_int_eq(colvecStoreMem.xOpen(COLVEC_STORE_MEM_ROOT
                                        "/check/a/b/1.seg",
                                        COLVEC_OPEN_READONLY, &pR, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xWrite(pR, "z", 1, 0, &err), COLVEC_IOERR);
  ck_assert_int_eq(err.iErrno, EBADF);
  ck_assert_int_eq(
      colvecStoreMem.xMapOpen(pR, 12, COLVEC_PREFAULT_POPULATE, &pMap, &err),
      COLVEC_OK);
  ck_assert(((uintptr_t)pMap->a) % 64 == 0);
  ck_assert_int_eq(
      colvecStoreMem.xMapAdvise(pMap, 0, 12, COLVEC_ADVICE_RANDOM, &err),
      COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xClose(pR, &err), COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xOpen(COLVEC_STORE_MEM_ROOT
                                        "/check/a/b/1.seg",
                                        COLVEC_OPEN_READWRITE, &pF, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xWrite(pF, "z", 1, 0, &err), COLVEC_IOERR);
  ck_assert_int_eq(err.iErrno, EBUSY); /* mapped: not written */
  ck_assert_int_eq(colvecStoreMem.xClose(pF, &err), COLVEC_OK);
  ck_assert_int_eq(
      colvecStoreMem.xUnlink(COLVEC_STORE_MEM_ROOT "/check/a/b/1.seg", &err),
      COLVEC_OK);
  ck_assert_int_eq(
      colvecStoreMem.xUnlink(COLVEC_STORE_MEM_ROOT "/check/a/b/1.seg", &err),
      COLVEC_OK); /* gone already: fine */
  ck_assert_int_eq(
      colvecStoreMem.xKind(COLVEC_STORE_MEM_ROOT "/check/a/b/1.seg"),
      COLVEC_OS_NONE);
  ck_assert(memcmp(pMap->a + 8, "abcd", 4) == 0);
  colvecStoreMem.xMapClose(pMap);
  ck_assert_int_eq(colvecStoreMem.xOpen(COLVEC_STORE_MEM_ROOT
                                        "/check/a/b/1.seg",
                                        COLVEC_OPEN_READONLY, &pR, &err),
                   COLVEC_IOERR);
  ck_assert_int_eq(err.iErrno, ENOENT);
  /* listing by suffix, sorted; rmdir refuses a folder that is not empty */
  {
    const char *azName[] = {"3.seg", "1.seg.tmp", "2.seg", "x"};
    int i;
    for (i = 0; i < 4; i++) {
      char zPath[128];
      snprintf(zPath, sizeof(zPath), "%s\\%s", zDir, azName[i]);
      ck_assert_int_eq(
          colvecStoreMem.xOpen(
              zPath, COLVEC_OPEN_READWRITE | COLVEC_OPEN_CREATE, &pF, &err),
          COLVEC_OK);
      ck_assert_int_eq(colvecStoreMem.xClose(pF, &err), COLVEC_OK);
    }
  }
  ck_assert_int_eq(colvecStoreMem.xListDir(zDir, ".seg", &az, &n, &err),
                   COLVEC_OK);
  ck_assert_int_eq(n, 2);
  ck_assert_str_eq(az[0], "2.seg");
  ck_assert_str_eq(az[1], "3.seg");
  colvecOsListFree(az, n);
  ck_assert_int_eq(memCount(COLVEC_STORE_MEM_ROOT "/check/a"), 1);
  ck_assert_int_eq(colvecStoreMem.xRmdir(zDir, &err), COLVEC_IOERR);
  ck_assert_int_eq(err.iErrno, ENOTEMPTY);
  ck_assert_int_eq(colvecStoreMem.xListDir(COLVEC_STORE_MEM_ROOT "/check/none",
                                           NULL, &az, &n, &err),
                   COLVEC_IOERR);
  ck_assert_int_eq(err.iErrno, ENOENT);
  ck_assert_int_eq(
      colvecStoreMem.xRemoveTree(COLVEC_STORE_MEM_ROOT "/check", &err),
      COLVEC_OK);
  ck_assert_int_eq(colvecStoreMem.xKind(zDir), COLVEC_OS_NONE);
  ck_assert_int_eq(memCount(COLVEC_STORE_MEM_ROOT), 0);
  ck_assert_int_eq(memCalls(), 0);
  /* the hook does count a call that goes to the file system */
  colvecStoreFile.xUnlink("/nonexistent-colvec-check/x", NULL);
  faultInjectStop();
  ck_assert_int_eq(memCalls(), 1);
}
END_TEST

/* The connection of the workload and where its failures are reported. */
typedef struct MemDb MemDb;
struct MemDb {
  sqlite3 *db; /* ":memory:" connection */
  int eAccess; /* FAULT_ACCESS_* of table t */
  int iStep;   /* step being run, for messages */
};

/* Runs zSql on p (all statements), failing the test on an error. */
static void memExec(MemDb *p, const char *zSql) {
  char *zErr = NULL;
  int rc = sqlite3_exec(p->db, zSql, NULL, NULL, &zErr);
  ck_assert_msg(rc == SQLITE_OK, "step %d: %s: %s", p->iStep, zSql,
                zErr ? zErr : "?");
  sqlite3_free(zErr);
}

/* Returns the first column of the first row of zSql as an integer. */
static sqlite3_int64 memInt(MemDb *p, const char *zSql) {
  sqlite3_stmt *pStmt = NULL;
  sqlite3_int64 v = 0;
  int rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, NULL);
  ck_assert_msg(rc == SQLITE_OK, "step %d: %s: %s", p->iStep, zSql,
                sqlite3_errmsg(p->db));
  rc = sqlite3_step(pStmt);
  ck_assert_msg(rc == SQLITE_ROW, "step %d: %s: %s", p->iStep, zSql,
                sqlite3_errmsg(p->db));
  v = sqlite3_column_int64(pStmt, 0);
  sqlite3_finalize(pStmt);
  return v;
}

/*
** The checks after every step: t equals m (rowid, vector bytes and every
** attribute), a KNN equals a brute force over m, integrity-check passes,
** and t's memory folder holds exactly the files T_manifest and T_trash
** name.
*/
static void memCheck(MemDb *p) {
  char *zFile, *zDir;
  char zFolder[64];
  char **az = NULL;
  int n = 0, i;
  sqlite3_stmt *pStmt = NULL;
  ck_assert_msg(memInt(p, "SELECT count(*) FROM ("
                          "SELECT rowid, v, n, s FROM t EXCEPT "
                          "SELECT id, v, n, s FROM m)") == 0 &&
                    memInt(p, "SELECT count(*) FROM ("
                              "SELECT id, v, n, s FROM m EXCEPT "
                              "SELECT rowid, v, n, s FROM t)") == 0,
                "step %d: t differs from the model", p->iStep);
  ck_assert_msg(
      memInt(p, "SELECT count(*) FROM ("
                "SELECT rowid, distance FROM t WHERE v MATCH "
                "colvec_from_json('[3,1,4,1]') AND k = 10 EXCEPT "
                "SELECT * FROM (SELECT id, colvec_distance_l2(v, "
                "colvec_from_json('[3,1,4,1]')) AS d FROM m ORDER BY d, id "
                "LIMIT 10))") == 0,
      "step %d: KNN differs from a brute force", p->iStep);
  memExec(p, "INSERT INTO t(t) VALUES('integrity-check')");
  ck_assert_int_eq(sqlite3_prepare_v2(
                       p->db, "SELECT value FROM t_config WHERE key = 'folder'",
                       -1, &pStmt, NULL),
                   SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_ROW);
  snprintf(zFolder, sizeof(zFolder), "%s",
           (const char *)sqlite3_column_text(pStmt, 0));
  sqlite3_finalize(pStmt);
  zFile = colvecFolderDbFile(p->db, "main");
  ck_assert(zFile != NULL);
  ck_assert(colvecFolderDbStore(p->db, "main") == &colvecStoreMem);
  zDir = colvecFolderPath(zFile, zFolder);
  ck_assert(zDir != NULL);
  ck_assert_int_eq(colvecStoreMem.xListDir(zDir, NULL, &az, &n, NULL),
                   COLVEC_OK);
  for (i = 0; i < n; i++) {
    char zSql[200];
    ck_assert_msg(strstr(az[i], ".tmp") == NULL, "step %d: %s left", p->iStep,
                  az[i]);
    snprintf(zSql, sizeof(zSql),
             "SELECT count(*) FROM (SELECT segid FROM t_manifest UNION "
             "SELECT segid FROM t_trash) WHERE printf('%%06d.seg', segid) "
             "= '%s'",
             az[i]);
    ck_assert_msg(memInt(p, zSql) == 1, "step %d: %s is named by no row",
                  p->iStep, az[i]);
  }
  ck_assert_int_eq(n, (int)memInt(p, "SELECT count(*) FROM (SELECT segid "
                                     "FROM t_manifest UNION SELECT segid "
                                     "FROM t_trash)"));
  colvecOsListFree(az, n);
  sqlite3_free(zDir);
  sqlite3_free(zFile);
}

/* The workload's steps: SQL run on t and on m alike in one transaction,
** with $T standing for the table and $K for its key (rowid, id). */
static const char *const azMemStep[] = {
    /* a bulk load: one segment of 2,500 rows with a graph */
    "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE "
    "i < 2500) INSERT INTO $T($K, v, n, s) SELECT i, colvec_from_json(printf("
    "'[%d,%d,%d,%d]', i % 17, i % 13, i % 11, i % 7)), i % 10, 's' || i "
    "FROM s",
    /* row inserts crossing delta_rows (compactions, then a merge) */
    "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE "
    "i < 9) INSERT INTO $T($K, v, n, s) SELECT 3000 + i, colvec_from_json("
    "printf('[%d,1,2,3]', i)), NULL, NULL FROM s",
    "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE "
    "i < 9) INSERT INTO $T($K, v, n, s) SELECT 3100 + i, colvec_from_json("
    "printf('[%d,2,2,3]', i)), i, 'r' FROM s",
    "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE "
    "i < 9) INSERT INTO $T($K, v, n, s) SELECT 3200 + i, colvec_from_json("
    "printf('[%d,3,2,3]', i)), i, 'q' FROM s",
    "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE "
    "i < 9) INSERT INTO $T($K, v, n, s) SELECT 3300 + i, colvec_from_json("
    "printf('[%d,4,2,3]', i)), i, 'p' FROM s",
    /* vector updates (the big segment, a small one), attribute updates */
    "UPDATE $T SET v = colvec_from_json('[3,1,4,2]') WHERE $K IN (5, 3105)",
    "UPDATE $T SET n = n + 1, s = 'u' WHERE $K BETWEEN 3201 AND 3205",
    /* deletes, a rowid move */
    "DELETE FROM $T WHERE $K % 3 = 0 AND $K < 1500",
    "UPDATE $T SET $K = 5000 WHERE $K = 3301",
};

/* Returns zIn with $T replaced by zTbl and $K by zKey (sqlite3_malloc'd). */
static char *memSubst(const char *zIn, const char *zTbl, const char *zKey) {
  char *zOut = sqlite3_mprintf("");
  const char *z;
  for (z = zIn; zOut && *z; z++) {
    if (z[0] == '$' && (z[1] == 'T' || z[1] == 'K')) {
      zOut = sqlite3_mprintf("%z%s", zOut, z[1] == 'T' ? zTbl : zKey);
      z++;
    } else {
      zOut = sqlite3_mprintf("%z%c", zOut, z[0]);
    }
  }
  ck_assert(zOut != NULL);
  return zOut;
}

/* Runs step i of azMemStep on t and on m in one transaction. */
static void memStep(MemDb *p, int i) {
  char *zT = memSubst(azMemStep[i], "t", "rowid");
  char *zM = memSubst(azMemStep[i], "m", "id");
  memExec(p, "BEGIN");
  memExec(p, zT);
  memExec(p, zM);
  memExec(p, "COMMIT");
  sqlite3_free(zT);
  sqlite3_free(zM);
}

/*
** The workload on a ":memory:" database with table t in access mode
** eAccess (FAULT_ACCESS_*); see the comment at the top.
*/
static void memWorkload(int eAccess) {
  MemDb x;
  sqlite3_int64 nMem0, nSeg0;
  int i;
  char *zRoot;
  faultLibInit();
  memset(&x, 0, sizeof(x));
  x.eAccess = eAccess;
  faultInjectStart(0, -1, 0, 0, -1);
  nMem0 = sqlite3_memory_used();
  ck_assert_int_eq(sqlite3_open(":memory:", &x.db), SQLITE_OK);
  memExec(&x, eAccess == FAULT_ACCESS_FILE
                  ? "CREATE VIRTUAL TABLE t USING colvec(v float[4], "
                    "n integer, s text, delta_rows=8, access=file)"
                  : "CREATE VIRTUAL TABLE t USING colvec(v float[4], "
                    "n integer, s text, delta_rows=8)");
  memExec(&x, "CREATE TABLE m(id INTEGER PRIMARY KEY, v BLOB, n INTEGER, "
              "s TEXT)");
  for (i = 0; i < (int)(sizeof(azMemStep) / sizeof(azMemStep[0])); i++) {
    x.iStep = i;
    memStep(&x, i);
    memCheck(&x);
  }
  ck_assert(memInt(&x, "SELECT count(*) FROM t_manifest") > 1);
  /* a transaction that compacts and merges, rolled back: its segments go
  ** with the next write's cleanup */
  x.iStep = 100;
  nSeg0 = memInt(&x, "SELECT value FROM t_config WHERE key = 'next_segid'");
  memExec(&x, "BEGIN");
  memExec(&x, "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM "
              "s WHERE i < 40) INSERT INTO t(rowid, v) SELECT 7000 + i, "
              "colvec_from_json('[1,1,1,1]') FROM s");
  memExec(&x, "INSERT INTO t(t) VALUES('optimize')");
  ck_assert(memInt(&x, "SELECT value FROM t_config WHERE key = "
                       "'next_segid'") > nSeg0);
  memExec(&x, "ROLLBACK");
  ck_assert_int_eq(
      memInt(&x, "SELECT value FROM t_config WHERE key = 'next_segid'"), nSeg0);
  /* a savepoint rolled back over a flush */
  memExec(&x, "BEGIN");
  memExec(&x, "SAVEPOINT a");
  memExec(&x, "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM "
              "s WHERE i < 20) INSERT INTO t(rowid, v) SELECT 8000 + i, "
              "colvec_from_json('[2,2,2,2]') FROM s");
  memExec(&x, "SELECT count(*) FROM t WHERE rowid > 8000");
  memExec(&x, "ROLLBACK TO a");
  memExec(&x, "RELEASE a");
  memExec(&x, "INSERT INTO t(rowid, v, n, s) VALUES (9000, "
              "colvec_from_json('[0,0,0,0]'), 1, 'z')");
  memExec(&x, "INSERT INTO m(id, v, n, s) VALUES (9000, "
              "colvec_from_json('[0,0,0,0]'), 1, 'z')");
  memExec(&x, "COMMIT");
  memCheck(&x);
  /* optimize: one segment */
  x.iStep = 101;
  memExec(&x, "INSERT INTO t(t) VALUES('optimize')");
  memExec(&x, "INSERT INTO t(rowid, v) VALUES (9001, "
              "colvec_from_json('[0,0,0,1]'))");
  memExec(&x, "INSERT INTO m(id, v) VALUES (9001, "
              "colvec_from_json('[0,0,0,1]'))");
  memCheck(&x);
  ck_assert_int_eq(memInt(&x, "SELECT count(*) FROM t_manifest"), 1);
  /* DROP removes the folder; a new table gets a new one */
  x.iStep = 102;
  zRoot = colvecFolderDbFile(x.db, "main");
  ck_assert(zRoot != NULL);
  zRoot = sqlite3_mprintf("%z-colvec", zRoot);
  ck_assert_int_eq(memCount(zRoot), 1);
  memExec(&x, "DROP TABLE t");
  ck_assert_int_eq(memCount(zRoot), 0);
  memExec(&x, "CREATE VIRTUAL TABLE t USING colvec(v float[4], n integer, "
              "s text, delta_rows=8)");
  memExec(&x, "DELETE FROM m");
  memStep(&x, 1);
  memCheck(&x);
  ck_assert_int_eq(memCount(zRoot), 1);
  sqlite3_free(zRoot);
  ck_assert_int_eq(sqlite3_close(x.db), SQLITE_OK);
  faultInjectStop();
  ck_assert_msg(memCalls() == 0, "%ld os-layer calls reached the file system",
                memCalls());
  ck_assert_int_eq(memCount(COLVEC_STORE_MEM_ROOT), 0);
  ck_assert_msg(sqlite3_memory_used() == nMem0, "%lld bytes not freed",
                (long long)(sqlite3_memory_used() - nMem0));
}

/* The workload with access=mmap (the default). */
START_TEST(test_workload_mmap) { memWorkload(FAULT_ACCESS_MMAP); }
END_TEST

/* The workload with access=file. */
START_TEST(test_workload_file) { memWorkload(FAULT_ACCESS_FILE); }
END_TEST

/* Registers zName as a copy of VFS zBase (a VFS that behaves as zBase
** under another name) and returns it. */
static sqlite3_vfs *memVfsCopy(const char *zBase, const char *zName,
                               sqlite3_vfs *pCopy) {
  sqlite3_vfs *pBase = sqlite3_vfs_find(zBase);
  ck_assert_ptr_nonnull(pBase);
  *pCopy = *pBase;
  pCopy->zName = zName;
  pCopy->pNext = NULL;
  ck_assert_int_eq(sqlite3_vfs_register(pCopy, 0), SQLITE_OK);
  return pCopy;
}

/* Runs zSql on db and returns its error message (sqlite3_malloc'd), or
** NULL when it succeeded. */
static char *memTry(sqlite3 *db, const char *zSql) {
  char *zErr = NULL;
  if (sqlite3_exec(db, zSql, NULL, NULL, &zErr) == SQLITE_OK) return NULL;
  return zErr ? zErr : sqlite3_mprintf("?");
}

/* Creates table zTbl (options zOpt) on x and fills it through two
** compactions; returns whether it keeps its bytes in the database. */
static int memFillKind(MemDb *x, const char *zTbl, const char *zOpt) {
  char *zSql;
  sqlite3_int64 n;
  int i;
  zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE %s USING colvec(v float[4], "
                         "delta_rows=2%s)",
                         zTbl, zOpt);
  memExec(x, zSql);
  sqlite3_free(zSql);
  for (i = 1; i <= 6; i++) {
    zSql = sqlite3_mprintf("INSERT INTO %s(rowid, v) VALUES(%d, "
                           "'[%d,1,1,1]')",
                           zTbl, i, i);
    memExec(x, zSql);
    sqlite3_free(zSql);
  }
  zSql = sqlite3_mprintf("SELECT rowid FROM %s WHERE v MATCH '[4,1,1,1]' "
                         "AND k = 1",
                         zTbl);
  ck_assert_int_eq(memInt(x, zSql), 4);
  sqlite3_free(zSql);
  zSql = sqlite3_mprintf("SELECT count(*) FROM sqlite_schema WHERE name = "
                         "'%s_segdata'",
                         zTbl);
  n = memInt(x, zSql);
  sqlite3_free(zSql);
  return (int)n;
}

/* Storage chosen by the database's VFS. */
START_TEST(test_vfs_kind) {
  static sqlite3_vfs nopath, shim;
  char zDir[512], zOld[1024], *zPath, *zErr;
  struct stat st;
  MemDb x;
  faultLibInit();
  memVfsCopy("memdb", "colvec-nopath", &nopath);
  memVfsCopy("unix", "colvec-shim", &shim);
  ck_assert_int_eq(testTempDirIn(NULL, "colvec-vfskind", zDir, sizeof(zDir)),
                   0);
  ck_assert_ptr_nonnull(getcwd(zOld, sizeof(zOld)));
  ck_assert_int_eq(chdir(zDir), 0);
  memset(&x, 0, sizeof(x));

  /* a VFS whose names are not paths: "demo" */
  ck_assert_int_eq(sqlite3_open_v2("demo", &x.db,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                   "colvec-nopath"),
                   SQLITE_OK);
  ck_assert_int_eq(memFillKind(&x, "t", ""), 1);
  zErr = memTry(x.db, "CREATE VIRTUAL TABLE s USING colvec(v float[4], "
                      "storage=sidecar)");
  ck_assert_ptr_nonnull(zErr);
  ck_assert_msg(strstr(zErr,
                       "colvec: storage=sidecar is not possible for "
                       "table s: database main is not a file on this "
                       "machine's file system (VFS colvec-nopath)") == zErr,
                "%s", zErr);
  sqlite3_free(zErr);
  ck_assert_int_eq(memFillKind(&x, "e", ", storage=embedded"), 1);
  memExec(&x, "INSERT INTO t(t) VALUES('integrity-check')");
  memExec(&x, "DROP TABLE t");
  ck_assert_int_eq(sqlite3_close(x.db), SQLITE_OK);
  ck_assert_int_ne(stat("demo-colvec", &st), 0);
  ck_assert_int_ne(stat("demo", &st), 0);

  /* the same VFS with an absolute name that is no file */
  ck_assert_int_eq(sqlite3_open_v2("/colvec-check-memdb-nopath", &x.db,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                   "colvec-nopath"),
                   SQLITE_OK);
  ck_assert_int_eq(memFillKind(&x, "t", ""), 1);
  ck_assert_int_eq(sqlite3_close(x.db), SQLITE_OK);
  ck_assert_int_ne(stat("/colvec-check-memdb-nopath-colvec", &st), 0);

  /* a shim over unix: real files, so a file database */
  zPath = sqlite3_mprintf("%s/shim.db", zDir);
  ck_assert_int_eq(sqlite3_open_v2(zPath, &x.db,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                   "colvec-shim"),
                   SQLITE_OK);
  ck_assert_int_eq(memFillKind(&x, "t", ""), 0);
  ck_assert_int_eq(memFillKind(&x, "s", ", storage=sidecar"), 0);
  sqlite3_free(zPath);
  zPath = sqlite3_mprintf("%s/shim.db-colvec", zDir);
  ck_assert_int_eq(stat(zPath, &st), 0);
  ck_assert(S_ISDIR(st.st_mode));
  memExec(&x, "DROP TABLE t; DROP TABLE s");
  ck_assert_int_eq(sqlite3_close(x.db), SQLITE_OK);
  rmdir(zPath);
  sqlite3_free(zPath);
  zPath = sqlite3_mprintf("%s/shim.db", zDir);
  unlink(zPath);
  sqlite3_free(zPath);

  ck_assert_int_eq(chdir(zOld), 0);
  ck_assert_int_eq(rmdir(zDir), 0);
  sqlite3_vfs_unregister(&nopath);
  sqlite3_vfs_unregister(&shim);
}
END_TEST

/* Runs the suite. */
int main(void) {
  Suite *s = suite_create("memdb");
  TCase *tc = tcase_create("memdb");
  SRunner *sr;
  int nFailed;
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_memfs);
  tcase_add_test(tc, test_workload_mmap);
  tcase_add_test(tc, test_workload_file);
  suite_add_tcase(s, tc);
  /* its own case: it writes files (test/port/memdb_nofs.sh runs only "memdb")
   */
  tc = tcase_create("vfskind");
  tcase_add_test(tc, test_vfs_kind);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  nFailed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nFailed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
