/*
** check_powerloss.c — power loss at every sync point of a colvec workload.
**
** kill -9 leaves the page cache behind; a power cut does not. Here a
** forked child runs a workload on a colvec table and on a plain model table
** receiving the same writes in the same transactions, under the simulation
** of test/powerloss.c, which at sync point k (just before it, or just
** after it) puts every file back to what the fsyncs so far made durable
** and ends the child. Each acknowledged COMMIT reaches the parent through a
** pipe. The parent then opens the database with the real VFS and checks:
**
**   - PRAGMA integrity_check is "ok" and colvec's 'integrity-check' passes;
**   - the colvec table equals the model (same transactions, so a commit is
**     all or nothing for both);
**   - the number of committed transactions (a counter row bumped by each)
**     is at least the last acknowledged one where the mode promises it
**     (rollback journal with synchronous=EXTRA, WAL with FULL); with a
**     rollback journal and FULL the last acknowledged commit may roll back
**     (its journal's delete was not synced: it comes back hot), so at
**     least the one before; WAL with NORMAL promises nothing: consistency
**     only;
**   - KNN answers and equals a brute force over the model;
**   - the next write commits, and the table's folder then holds no file
**     that the manifest or the trash does not name (no orphans, no .tmp).
**
** A reference run counts the sync points. The default run tries both
** crash points of each of the first PL_DENSE sync points, then one of
** every nth, so that the suite stays short; env COLVEC_POWERLOSS_FULL=1 (make
** check-powerloss) tries every one, before and after.
**
** The simulation, not the disk, decides what survives, so the databases go
** to a memory file system where fsync costs nothing: env
** COLVEC_POWERLOSS_DIR, else /dev/shm when it is a writable folder, else
** COLVEC_TESTDIR, TMPDIR or /tmp.
*/
#include <sqlite3.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "colvec.h"
#include "powerloss.h"

#define PL_DENSE 20     /* the short run tries every point up to here */
#define PL_SHORT_MAX 20 /* ... and about this many after it, per mode */
#define PL_STEPS 14    /* transactions of the workload after its setup */

/* A journal mode and synchronous setting, and what it promises. */
typedef struct PlMode PlMode;
struct PlMode {
  const char *zName;    /* for messages */
  const char *zJournal; /* PRAGMA journal_mode */
  const char *zSync;    /* PRAGMA synchronous */
  int nLag;             /* commits acknowledged but allowed lost; -1 any */
};

/* The modes tried. */
static const PlMode aMode[] = {
    {"delete/extra", "delete", "extra", 0},
    {"delete/full", "delete", "full", 1},
    {"wal/full", "wal", "full", 0},
    {"wal/normal", "wal", "normal", -1},
};

/* Figures of one mode, printed at the end. */
typedef struct PlTally PlTally;
struct PlTally {
  int nSyncPoint; /* sync points of the reference run */
  int nTried;     /* crash points tried */
  int nReached;   /* ... of which the child crashed at */
  int nLost;      /* ... after which an acknowledged commit was missing */
  int nFail;      /* ... after which a check failed */
};

/* Messages of the child on the pipe. */
#define PLMSG_COMMIT 1 /* v: the transaction number acknowledged */
#define PLMSG_SYNCS 2  /* v: sync points of a run that did not crash */

/* A message from the child. */
typedef struct PlMsg PlMsg;
struct PlMsg {
  int eKind; /* PLMSG_* */
  int v;     /* its value */
};

/* Folder of the test databases (made at startup). */
static char zTestDir[512];

/*************************************************************************
** Helpers.
*/

/* Removes one entry of a tree (nftw callback). */
static int plRmEntry(const char *zPath, const struct stat *pSt, int eFlag,
                     struct FTW *pFtw) {
  (void)pSt;
  (void)eFlag;
  (void)pFtw;
  remove(zPath);
  return 0;
}

/* Removes zPath and everything under it, if it exists. */
static void plRmTree(const char *zPath) {
  nftw(zPath, plRmEntry, 16, FTW_DEPTH | FTW_PHYS);
}

/*
** Runs the SQL zTpl on the colvec table and then on the model: each "@T"
** in it becomes "t", then "m". Returns an SQLite code; *pzErr (if given)
** receives the message of a failure, to sqlite3_free().
*/
static int plBoth(sqlite3 *db, const char *zTpl, char **pzErr) {
  static const char *azTab[2] = {"t", "m"};
  int i, rc = SQLITE_OK;
  for (i = 0; i < 2 && rc == SQLITE_OK; i++) {
    size_t n = strlen(zTpl), j, o = 0;
    char *zSql = malloc(n + 1);
    if (zSql == NULL) return SQLITE_NOMEM;
    for (j = 0; j < n; j++) {
      if (zTpl[j] == '@' && zTpl[j + 1] == 'T') {
        zSql[o++] = azTab[i][0];
        j++;
      } else {
        zSql[o++] = zTpl[j];
      }
    }
    zSql[o] = 0;
    rc = sqlite3_exec(db, zSql, NULL, NULL, pzErr);
    free(zSql);
  }
  return rc;
}

/* A deterministic generator (xorshift64*) for the workload's vectors. */
static unsigned long long plRand(unsigned long long *pState) {
  unsigned long long x = *pState;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *pState = x;
  return x * 2685821657736338717ULL;
}

/* Writes a JSON vector of 4 random components in [-1, 1) into zOut. */
static void plVec(unsigned long long *pState, char *zOut, size_t nOut) {
  double a[4];
  int i;
  for (i = 0; i < 4; i++) {
    a[i] = (double)(plRand(pState) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
  }
  snprintf(zOut, nOut, "[%.6f,%.6f,%.6f,%.6f]", a[0], a[1], a[2], a[3]);
}

/* Returns the single integer of the query zSql, or -1 on error. */
static sqlite3_int64 plInt(sqlite3 *db, const char *zSql) {
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
** Returns the text of the single value of the query zSql in a new
** sqlite3_malloc'ed string ("" for NULL), or NULL with the error message
** in a new string in *pzErr.
*/
static char *plText(sqlite3 *db, const char *zSql, char **pzErr) {
  sqlite3_stmt *pStmt = NULL;
  char *z = NULL;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(pStmt);
  if (rc == SQLITE_ROW) {
    const char *zVal = (const char *)sqlite3_column_text(pStmt, 0);
    z = sqlite3_mprintf("%s", zVal ? zVal : "");
  } else {
    *pzErr = sqlite3_mprintf("%s: %s", zSql, sqlite3_errmsg(db));
  }
  sqlite3_finalize(pStmt);
  return z;
}

/*************************************************************************
** The workload.
*/

/*
** Opens the database of the workload in zDir in mode pMode. Returns the
** handle or NULL.
*/
static sqlite3 *plOpenDb(const char *zDir, const PlMode *pMode) {
  sqlite3 *db = NULL;
  char *zPath = sqlite3_mprintf("%s/pl.db", zDir);
  char *zSql = sqlite3_mprintf("PRAGMA journal_mode=%s; PRAGMA synchronous=%s",
                               pMode->zJournal, pMode->zSync);
  if (sqlite3_open(zPath, &db) != SQLITE_OK ||
      sqlite3_exec(db, zSql, NULL, NULL, NULL) != SQLITE_OK) {
    sqlite3_close(db);
    db = NULL;
  }
  sqlite3_free(zPath);
  sqlite3_free(zSql);
  return db;
}

/* Creates the counter, the colvec table and its model in one transaction. */
static int plSetup(sqlite3 *db) {
  return sqlite3_exec(
      db,
      "BEGIN;"
      "CREATE TABLE c(n INTEGER);"
      "INSERT INTO c VALUES(0);"
      "CREATE VIRTUAL TABLE t USING colvec(e float[4], tag text, n integer,"
      " delta_rows=8);"
      "CREATE TABLE m(e BLOB, tag TEXT, n INTEGER);"
      "COMMIT",
      NULL, NULL, NULL);
}

/*
** Inserts nRow rows with random vectors into both tables, one statement
** each, rowids from iFirst.
*/
static int plInsert(sqlite3 *db, unsigned long long *pState, int iFirst,
                    int nRow) {
  int i, rc = SQLITE_OK;
  for (i = 0; i < nRow && rc == SQLITE_OK; i++) {
    char zVec[128];
    char *zSql;
    plVec(pState, zVec, sizeof(zVec));
    zSql = sqlite3_mprintf(
        "INSERT INTO @T(rowid, e, tag, n) VALUES(%d, colvec_from_json(%Q),"
        " 'r%d', %d)",
        iFirst + i, zVec, iFirst + i, (iFirst + i) % 7);
    rc = zSql ? plBoth(db, zSql, NULL) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  return rc;
}

/*
** Runs transaction iStep (1..PL_STEPS) of the workload: bulk loads that
** cross delta_rows, row-by-row inserts, updates of vectors and attributes,
** deletes, rowid moves, a savepoint rolled back, optimize, a KNN query;
** each bumps the counter. Returns an SQLite code.
*/
static int plStep(sqlite3 *db, int iStep) {
  unsigned long long s = 0x9E3779B97F4A7C15ULL * (unsigned)(iStep + 1);
  char zVec[128];
  char *zSql = NULL;
  int rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
  int iBase = iStep * 100;
  plVec(&s, zVec, sizeof(zVec));
  if (rc != SQLITE_OK) return rc;
  switch (iStep % 7) {
  case 1: /* bulk load crossing delta_rows twice */
    rc = plInsert(db, &s, iBase, 20);
    break;
  case 2: /* row-by-row inserts, then a vector and an attribute update */
    rc = plInsert(db, &s, iBase, 3);
    zSql = sqlite3_mprintf(
        "UPDATE @T SET e=colvec_from_json(%Q), tag=NULL WHERE rowid=(SELECT "
        "rowid FROM m ORDER BY rowid LIMIT 1 OFFSET %d)",
        zVec, iStep % 5);
    break;
  case 3: /* deletes */
    zSql = sqlite3_mprintf("DELETE FROM @T WHERE rowid IN (SELECT rowid FROM m"
                           " ORDER BY rowid LIMIT 3 OFFSET %d)",
                           iStep % 4);
    break;
  case 4: /* a rowid move */
    zSql = sqlite3_mprintf("UPDATE @T SET rowid=rowid+100000 WHERE rowid="
                           "(SELECT rowid FROM m ORDER BY rowid LIMIT 1 OFFSET "
                           "%d)",
                           iStep % 6);
    break;
  case 5: /* a savepoint rolled back across a flush, then kept rows */
    rc = sqlite3_exec(db, "SAVEPOINT s", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = plInsert(db, &s, iBase, 12);
    if (rc == SQLITE_OK) {
      rc = sqlite3_exec(db, "ROLLBACK TO s", NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) rc = plInsert(db, &s, iBase + 50, 4);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "RELEASE s", NULL, NULL, NULL);
    break;
  case 6: /* optimize: merge the segments */
    rc = plInsert(db, &s, iBase, 9);
    if (rc == SQLITE_OK) {
      rc = sqlite3_exec(db, "INSERT INTO t(t) VALUES('optimize')", NULL, NULL,
                        NULL);
    }
    break;
  default: /* a KNN query in the transaction, and one insert */
    rc = plInsert(db, &s, iBase, 1);
    if (rc == SQLITE_OK) {
      char *zKnn = sqlite3_mprintf(
          "SELECT count(*) FROM t WHERE e MATCH colvec_from_json(%Q) AND k=3",
          zVec);
      if (plInt(db, zKnn) < 0) rc = SQLITE_ERROR;
      sqlite3_free(zKnn);
    }
    break;
  }
  if (rc == SQLITE_OK && zSql) rc = plBoth(db, zSql, NULL);
  sqlite3_free(zSql);
  if (rc == SQLITE_OK) {
    zSql = sqlite3_mprintf("UPDATE c SET n=%d", iStep);
    rc = sqlite3_exec(db, zSql, NULL, NULL, NULL);
    sqlite3_free(zSql);
  }
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  if (rc != SQLITE_OK) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

/* Sends one message to the parent; ends the child if the pipe is broken. */
static void plSend(int fd, int eKind, int v) {
  PlMsg msg;
  msg.eKind = eKind;
  msg.v = v;
  if (write(fd, &msg, sizeof(msg)) != (ssize_t)sizeof(msg)) _exit(3);
}

/*
** The child: runs the workload in zDir under the simulation, crashing at
** sync point iSync (0: never), reporting each acknowledged commit on fd.
** Never returns: _exit(PL_EXIT_CRASH) from the crash, 0 when the workload
** ended first, 1 or 2 when it failed.
*/
static void plChild(const char *zDir, const PlMode *pMode, int iSync,
                    int eWhen, int fd) {
  sqlite3 *db;
  int i;
  if (plInstall() != SQLITE_OK) _exit(1);
  plCrashAt(iSync, eWhen);
  db = plOpenDb(zDir, pMode);
  if (db == NULL || plSetup(db) != SQLITE_OK) _exit(1);
  plSend(fd, PLMSG_COMMIT, 0);
  for (i = 1; i <= PL_STEPS; i++) {
    if (plStep(db, i) != SQLITE_OK) {
      fprintf(stderr, "step %d: %s\n", i, sqlite3_errmsg(db));
      _exit(2);
    }
    plSend(fd, PLMSG_COMMIT, i);
  }
  sqlite3_close(db);
  plSend(fd, PLMSG_SYNCS, plSyncCount());
  _exit(0);
}

/*************************************************************************
** The checks after a crash.
*/

/*
** Returns NULL when the files in the folder of table t name only segments
** the manifest or the trash names (no orphan, no .tmp file), else a new
** message.
*/
static char *plOrphans(sqlite3 *db, const char *zDir) {
  char *zErr = NULL, *zFolder = NULL, *zPath = NULL;
  DIR *pDir;
  struct dirent *pEnt;
  zFolder = plText(db, "SELECT value FROM t_config WHERE key='folder'", &zErr);
  if (zFolder == NULL) return zErr;
  zPath = sqlite3_mprintf("%s/pl.db-colvec/%s", zDir, zFolder);
  pDir = opendir(zPath);
  while (zErr == NULL && pDir && (pEnt = readdir(pDir)) != NULL) {
    char *zSql;
    long long iSegid = 0;
    int nUsed = 0;
    if (pEnt->d_name[0] == '.') continue;
    if (strstr(pEnt->d_name, ".tmp")) {
      zErr = sqlite3_mprintf("a .tmp file is left: %s", pEnt->d_name);
      break;
    }
    if (sscanf(pEnt->d_name, "%lld.seg%n", &iSegid, &nUsed) != 1 ||
        pEnt->d_name[nUsed] != 0) {
      continue;
    }
    zSql = sqlite3_mprintf("SELECT count(*) FROM (SELECT segid FROM t_manifest"
                           " UNION SELECT segid FROM t_trash) WHERE segid=%lld",
                           iSegid);
    if (plInt(db, zSql) != 1) {
      zErr = sqlite3_mprintf("orphan segment file %s", pEnt->d_name);
    }
    sqlite3_free(zSql);
  }
  if (pDir) closedir(pDir);
  sqlite3_free(zPath);
  sqlite3_free(zFolder);
  return zErr;
}

/*
** Returns NULL when the colvec table equals the model and KNN over it
** equals a brute force over the model, else a new message.
*/
static char *plCompare(sqlite3 *db) {
  static const char *zDump =
      "SELECT count(*) || ';' || ifnull(group_concat(x, ','), '') FROM "
      "(SELECT rowid || ':' || hex(e) || ':' || quote(tag) || ':' || quote(n)"
      " AS x FROM %s ORDER BY rowid)";
  char *zErr = NULL, *zT, *zM, *zSql;
  unsigned long long s = 12345;
  int i;
  zSql = sqlite3_mprintf(zDump, "t");
  zT = plText(db, zSql, &zErr);
  sqlite3_free(zSql);
  zSql = sqlite3_mprintf(zDump, "m");
  zM = zT ? plText(db, zSql, &zErr) : NULL;
  sqlite3_free(zSql);
  if (zT && zM && strcmp(zT, zM) != 0) {
    zErr = sqlite3_mprintf("t differs from the model: t has %.20s..., m %.20s...",
                           zT, zM);
  }
  sqlite3_free(zT);
  sqlite3_free(zM);
  for (i = 0; zErr == NULL && i < 3; i++) {
    char zVec[128];
    char *zKnn, *zBrute;
    plVec(&s, zVec, sizeof(zVec));
    zSql = sqlite3_mprintf(
        "SELECT ifnull(group_concat(rowid), '') FROM (SELECT rowid FROM t "
        "WHERE e MATCH colvec_from_json(%Q) AND k=5)",
        zVec);
    zKnn = plText(db, zSql, &zErr);
    sqlite3_free(zSql);
    zSql = sqlite3_mprintf(
        "SELECT ifnull(group_concat(rowid), '') FROM (SELECT rowid FROM m "
        "ORDER BY colvec_distance_l2(e, colvec_from_json(%Q)), rowid LIMIT 5)",
        zVec);
    zBrute = zKnn ? plText(db, zSql, &zErr) : NULL;
    sqlite3_free(zSql);
    if (zKnn && zBrute && strcmp(zKnn, zBrute) != 0) {
      zErr = sqlite3_mprintf("KNN %s, brute force %s", zKnn, zBrute);
    }
    sqlite3_free(zKnn);
    sqlite3_free(zBrute);
  }
  return zErr;
}

/*
** Checks the database in zDir after a crash whose child acknowledged the
** commits up to iAcked (-1: none). Returns NULL or a new message; sets
** *pbLost when an acknowledged commit is missing (allowed by pMode).
*/
static char *plCheck(const char *zDir, const PlMode *pMode, int iAcked,
                     int *pbLost) {
  sqlite3 *db = NULL;
  char *zErr = NULL, *zPath = sqlite3_mprintf("%s/pl.db", zDir);
  sqlite3_int64 n;
  *pbLost = 0;
  if (sqlite3_open(zPath, &db) != SQLITE_OK) {
    zErr = sqlite3_mprintf("open: %s", sqlite3_errmsg(db));
  }
  sqlite3_free(zPath);
  if (zErr == NULL) {
    char *z = plText(db, "PRAGMA integrity_check", &zErr);
    if (z && strcmp(z, "ok") != 0) {
      zErr = sqlite3_mprintf("integrity_check: %s", z);
    }
    sqlite3_free(z);
  }
  if (zErr == NULL && plInt(db, "SELECT count(*) FROM sqlite_schema WHERE "
                                "name='c'") == 0) {
    /* the setup never committed: it must not have been acknowledged */
    if (pMode->nLag >= 0 && iAcked - pMode->nLag >= 0) {
      zErr = sqlite3_mprintf("the acknowledged setup is gone");
    } else {
      char *zSql = sqlite3_mprintf("PRAGMA journal_mode=%s", pMode->zJournal);
      if (sqlite3_exec(db, zSql, NULL, NULL, NULL) != SQLITE_OK ||
          plSetup(db) != SQLITE_OK) {
        zErr = sqlite3_mprintf("setup after the crash: %s",
                               sqlite3_errmsg(db));
      }
      sqlite3_free(zSql);
    }
  }
  if (zErr == NULL) {
    n = plInt(db, "SELECT n FROM c");
    if (n < 0) {
      zErr = sqlite3_mprintf("no counter: %s", sqlite3_errmsg(db));
    } else if (n < iAcked) {
      /* a lost setup (above) is not counted: the mode allows any loss */
      *pbLost = 1;
      if (pMode->nLag >= 0 && n < iAcked - pMode->nLag) {
        zErr = sqlite3_mprintf("commit %d was acknowledged, the database has "
                               "%lld",
                               iAcked, (long long)n);
      }
    }
  }
  if (zErr == NULL &&
      sqlite3_exec(db, "INSERT INTO t(t) VALUES('integrity-check')", NULL,
                   NULL, &zErr) != SQLITE_OK && zErr == NULL) {
    zErr = sqlite3_mprintf("integrity-check failed");
  }
  if (zErr == NULL) zErr = plCompare(db);
  if (zErr == NULL) {
    /* the next write commits (and removes what the crash left) */
    unsigned long long s = 777;
    int rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = plInsert(db, &s, 900000, 10);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "UPDATE c SET n=n+1", 0, 0, 0);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
      zErr = sqlite3_mprintf("the next write failed: %s", sqlite3_errmsg(db));
    }
  }
  if (zErr == NULL) zErr = plCompare(db);
  if (zErr == NULL) zErr = plOrphans(db, zDir);
  sqlite3_close(db);
  return zErr;
}

/*
** Runs the workload in a child crashing at sync point iSync (0: never)
** and checks the result in the parent. Returns NULL or a new message;
** *pbReached says the child crashed, *pbLost that an acknowledged commit
** was missing, *pnSync (if given) the sync points of a run that did not
** crash.
*/
static char *plRun(const PlMode *pMode, int iSync, int eWhen, int *pbReached,
                   int *pbLost, int *pnSync) {
  char zDir[600];
  int aPipe[2], iStatus = 0, iAcked = -1;
  pid_t pid;
  PlMsg msg;
  snprintf(zDir, sizeof(zDir), "%s/run", zTestDir);
  plRmTree(zDir);
  if (mkdir(zDir, 0755) != 0) return sqlite3_mprintf("mkdir %s", zDir);
  if (pipe(aPipe) != 0) return sqlite3_mprintf("pipe");
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid < 0) return sqlite3_mprintf("fork");
  if (pid == 0) {
    close(aPipe[0]);
    plChild(zDir, pMode, iSync, eWhen, aPipe[1]);
  }
  close(aPipe[1]);
  while (read(aPipe[0], &msg, sizeof(msg)) == (ssize_t)sizeof(msg)) {
    if (msg.eKind == PLMSG_COMMIT) iAcked = msg.v;
    if (msg.eKind == PLMSG_SYNCS && pnSync) *pnSync = msg.v;
  }
  close(aPipe[0]);
  waitpid(pid, &iStatus, 0);
  *pbReached = WIFEXITED(iStatus) && WEXITSTATUS(iStatus) == PL_EXIT_CRASH;
  *pbLost = 0;
  if (!(WIFEXITED(iStatus) && (WEXITSTATUS(iStatus) == 0 || *pbReached))) {
    return sqlite3_mprintf("the child failed (status 0x%x) after commit %d",
                           iStatus, iAcked);
  }
  return plCheck(zDir, pMode, iAcked, pbLost);
}

/*************************************************************************
** The suite.
*/

/* Runs every chosen crash point of mode pMode; fills *pT. */
static void plMode(const PlMode *pMode, PlTally *pT) {
  int bFull = getenv("COLVEC_POWERLOSS_FULL") != NULL &&
              atoi(getenv("COLVEC_POWERLOSS_FULL")) != 0;
  int bReached = 0, bLost = 0, nSync = -1, k, eWhen, nStride = 1;
  char *zErr = plRun(pMode, 0, PL_BEFORE, &bReached, &bLost, &nSync);
  memset(pT, 0, sizeof(*pT));
  ck_assert_msg(zErr == NULL, "%s reference run: %s", pMode->zName,
                zErr ? zErr : "");
  ck_assert_msg(!bReached && !bLost && nSync > 0, "%s reference run",
                pMode->zName);
  pT->nSyncPoint = nSync;
  if (!bFull && nSync > PL_DENSE) {
    nStride = (nSync - PL_DENSE) / PL_SHORT_MAX + 1;
  }
  for (k = 1; k <= nSync; k += (k < PL_DENSE ? 1 : nStride)) {
    for (eWhen = PL_BEFORE; eWhen <= PL_AFTER; eWhen++) {
      /* past the dense part, the short run alternates before and after */
      if (nStride > 1 && k > PL_DENSE && eWhen != (k / nStride) % 2) continue;
      zErr = plRun(pMode, k, eWhen, &bReached, &bLost, NULL);
      pT->nTried++;
      pT->nReached += bReached;
      pT->nLost += bLost;
      if (zErr) {
        pT->nFail++;
        fprintf(stderr, "%s: crash %s sync point %d: %s\n", pMode->zName,
                eWhen == PL_BEFORE ? "before" : "after", k, zErr);
        sqlite3_free(zErr);
      }
    }
  }
  printf("powerloss %s: %d sync points, %d crash points tried (%d reached), "
         "%d lost the last acknowledged commit, %d failures\n",
         pMode->zName, pT->nSyncPoint, pT->nTried, pT->nReached, pT->nLost,
         pT->nFail);
  fflush(stdout);
}

/* One test per mode: no crash point may fail a check. */
START_TEST(test_powerloss) {
  PlTally t;
  plMode(&aMode[_i], &t);
  ck_assert_int_eq(t.nFail, 0);
  ck_assert_int_eq(t.nReached, t.nTried);
  if (aMode[_i].nLag == 0) ck_assert_int_eq(t.nLost, 0);
}
END_TEST

/* The suite: one test per mode. */
static Suite *plSuite(void) {
  Suite *s = suite_create("powerloss");
  TCase *tc = tcase_create("powerloss");
  tcase_set_timeout(tc, 3600); /* the full run under ASan */
  tcase_add_loop_test(tc, test_powerloss, 0,
                      (int)(sizeof(aMode) / sizeof(aMode[0])));
  suite_add_tcase(s, tc);
  return s;
}

/* Makes the test folder, registers colvec, runs the suite. */
int main(void) {
  const char *zBase = getenv("COLVEC_POWERLOSS_DIR");
  SRunner *sr;
  int nFail;
  if ((zBase == NULL || zBase[0] == 0) && access("/dev/shm", W_OK) == 0) {
    zBase = "/dev/shm";
  }
  if (zBase == NULL || zBase[0] == 0) zBase = getenv("COLVEC_TESTDIR");
  if (zBase == NULL || zBase[0] == 0) zBase = getenv("TMPDIR");
  if (zBase == NULL || zBase[0] == 0) zBase = "/tmp";
  snprintf(zTestDir, sizeof(zTestDir), "%s/powerloss-%d", zBase,
           (int)getpid());
  mkdir(zBase, 0755);
  if (mkdir(zTestDir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "cannot make %s\n", zTestDir);
    return 1;
  }
  sqlite3_auto_extension((void (*)(void))sqlite3_colvec_init);
  sr = srunner_create(plSuite());
  srunner_run_all(sr, CK_NORMAL);
  nFail = srunner_ntests_failed(sr);
  srunner_free(sr);
  plRmTree(zTestDir);
  return nFail == 0 ? 0 : 1;
}
