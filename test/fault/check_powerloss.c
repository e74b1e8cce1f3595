/*
** check_powerloss.c — power loss at every sync point of the colvec workload.
**
** kill -9 leaves the page cache behind; a power cut does not. Here a
** forked child runs the workload of test/lib/faultlib.c (a colvec table t and a
** plain model table m receiving the same writes in the same transactions:
** bulk loads crossing delta_rows and one whose pending rows outgrow
** memory, row-by-row inserts, updates, deletes,
** rowid moves, savepoints, optimize, KNN, a second table created, filled
** and dropped, a reopen), then a load, an 'optimize' and a write right
** after it (plExtraSteps: its cleanup deletes what the optimize dropped),
** under the simulation of test/fault/powerloss.c, which
** at sync point k (just before it, or just after it) puts every file back
** to what the fsyncs so far made durable and ends the child. After each
** acknowledged write step (one transaction each) the child sends the state
** hash (faultStateHash: the rows of m and the schema's names) through a
** pipe. The parent then opens the database with the real VFS and checks:
**
**   - PRAGMA integrity_check is "ok" and colvec's 'integrity-check' passes;
**   - t equals m (faultCompare), and KNN equals a brute force over m
**     (faultKnnCheck);
**   - the state is one a reference run went through after a whole write
**     step (so a transaction is all or nothing, t and m together), and not
**     older than the last acknowledged step where the mode promises it:
**     rollback journal with synchronous=EXTRA and WAL with FULL. With a
**     rollback journal and FULL the last acknowledged commit may be lost
**     (the delete of its journal is not synced: the journal comes back hot
**     and rolls it back), so one step back is allowed; WAL with NORMAL
**     promises no durability: consistency only;
**   - the next write commits, and then t's folder holds no file that the
**     manifest or the trash does not name (no orphan, no .tmp).
**
** A reference run counts the sync points and records the states. The
** default run tries both crash points of each of the first PL_DENSE sync
** points and of the last PL_TAIL (the extra steps), one of every nth in
** between, so that the suite stays short; env
** COLVEC_POWERLOSS_FULL=1 (make check-powerloss) tries every one, before
** and after; COLVEC_TEST_SCALE=n (emulated runs, test/lib/testscale.h) shrinks
** the dense parts and the points between them n times (at least 2, 2 and
** 1). A state that equals the one before it (optimize changes no
** row) cannot tell whether that step's commit survived; the content
** checks still run.
**
** The simulation, not the disk, decides what survives, so the databases go
** to a memory file system where fsync costs nothing: env
** COLVEC_POWERLOSS_DIR, else /dev/shm when it is a writable folder, else
** COLVEC_TESTDIR, TMPDIR or /tmp.
*/
#include <sqlite3.h>

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/faultlib.h"
#include "powerloss.h"
#include "../lib/testscale.h"

#define PL_DENSE 8      /* the short run tries every point up to here, */
#define PL_SHORT_MAX 6  /* about this many after it, per mode, */
#define PL_TAIL 6       /* and every one of the last PL_TAIL */
#define PL_MAX_STATE 64 /* states a run goes through, at most */

/* A journal mode and synchronous setting, and what it promises. */
typedef struct PlMode PlMode;
struct PlMode {
  const char *zName; /* for messages */
  int eJournal;      /* FAULT_JOURNAL_* */
  const char *zSync; /* PRAGMA synchronous */
  int nLag;          /* acknowledged steps allowed lost; -1 any */
};

/* The modes tried. */
static const PlMode aMode[] = {
    {"delete/extra", FAULT_JOURNAL_DELETE, "EXTRA", 0},
    {"delete/full", FAULT_JOURNAL_DELETE, "FULL", 1},
    {"wal/full", FAULT_JOURNAL_WAL, "FULL", 0},
    {"wal/normal", FAULT_JOURNAL_WAL, "NORMAL", -1},
};

/* Figures of one mode, printed at the end. */
typedef struct PlTally PlTally;
struct PlTally {
  int nSyncPoint; /* sync points of the reference run */
  int nTried;     /* crash points tried */
  int nReached;   /* ... of which the child crashed at */
  int nLost;      /* ... after which an acknowledged step was missing */
  int nFail;      /* ... after which a check failed */
};

/* Messages of the child on the pipe. */
#define PLMSG_DIR 1   /* z: the database's folder */
#define PLMSG_STATE 2 /* h: the state after an acknowledged write step */
#define PLMSG_SYNCS 3 /* v: sync points of a run that did not crash */

/* A message from the child. */
typedef struct PlMsg PlMsg;
struct PlMsg {
  int eKind;   /* PLMSG_* */
  int v;       /* SYNCS: its value */
  uint64_t h;  /* STATE: faultStateHash() */
  char z[256]; /* DIR: the path */
};

/* The states of a run, in order: the empty database, then one per
** acknowledged write step. */
typedef struct PlStates PlStates;
struct PlStates {
  int n;                        /* states recorded */
  uint64_t aHash[PL_MAX_STATE]; /* their hashes */
};

/* Folder of the test databases (made at startup). */
static char zTestDir[512];

/* The states of the reference run of the current mode. */
static PlStates refStates;

/*************************************************************************
** The child.
*/

/* Sends one message to the parent; ends the child if the pipe is broken. */
static void plSend(int fd, const PlMsg *pMsg) {
  if (write(fd, pMsg, sizeof(*pMsg)) != (ssize_t)sizeof(*pMsg)) _exit(3);
}

/* Sets PRAGMA synchronous of mode pMode on p (after every open). */
static int plSyncPragma(FaultDb *p, const PlMode *pMode) {
  char zSql[64];
  snprintf(zSql, sizeof(zSql), "PRAGMA synchronous=%s", pMode->zSync);
  return faultExec(p, zSql);
}

/* Sends the state of p; ends the child on error. */
static void plSendState(int fd, FaultDb *p) {
  PlMsg msg;
  int rc = SQLITE_OK;
  memset(&msg, 0, sizeof(msg));
  msg.eKind = PLMSG_STATE;
  msg.h = faultStateHash(p, &rc);
  if (rc != SQLITE_OK) _exit(2);
  plSend(fd, &msg);
}

/*
** Inserts rows iLo..iHi into m and the same into t, in one transaction.
** Returns an SQLite code.
*/
static int plLoad(FaultDb *p, int iLo, int iHi) {
  char zSql[768];
  snprintf(zSql, sizeof(zSql),
           "BEGIN;"
           "WITH RECURSIVE s(i) AS (SELECT %d UNION ALL SELECT i + 1 FROM s "
           "WHERE i < %d) INSERT INTO m(rowid, v, tag, n, x) SELECT i, "
           "colvec_from_json(printf('[%%d,1,-1,%%d]', i %% 5, i %% 3)), 'a', "
           "i, NULL FROM s;"
           "INSERT INTO t(rowid, v, tag, n, x) SELECT rowid, v, tag, n, x "
           "FROM m WHERE rowid BETWEEN %d AND %d;"
           "COMMIT;",
           iLo, iHi, iLo, iHi);
  return faultExec(p, zSql);
}

/*
** Runs the steps this suite adds after faultlib's workload: a load that
** writes segments, an 'optimize' that drops them, and a write right after
** it, whose cleanup deletes the dropped files (in rollback-journal mode)
** while the commit of the 'optimize' is the last one. Sends the state after
** each. Returns an SQLite code.
*/
static int plExtraSteps(FaultDb *p, int fd) {
  int rc = plLoad(p, 500, 519);
  if (rc == SQLITE_OK) plSendState(fd, p);
  if (rc == SQLITE_OK) rc = faultExec(p, "INSERT INTO t(t) VALUES('optimize')");
  if (rc == SQLITE_OK) plSendState(fd, p);
  if (rc == SQLITE_OK) rc = plLoad(p, 520, 529);
  if (rc == SQLITE_OK) plSendState(fd, p);
  return rc;
}

/*
** The child: runs the workload in a new folder under zBase under the
** simulation, crashing at sync point iSync (0: never), reporting each
** acknowledged write step on fd. Never returns: _exit(PL_EXIT_CRASH) from
** the crash, 0 when the workload ended first, 1 to 3 when it failed.
*/
static void plChild(const char *zBase, const PlMode *pMode, int iSync,
                    int eWhen, int fd) {
  FaultDb f;
  PlMsg msg;
  int i;
  if (plInstall() != SQLITE_OK) _exit(1);
  plCrashAt(iSync, eWhen);
  if (faultDbOpen(&f, zBase, pMode->eJournal, FAULT_ACCESS_MMAP) != SQLITE_OK) {
    _exit(1);
  }
  memset(&msg, 0, sizeof(msg));
  msg.eKind = PLMSG_DIR;
  snprintf(msg.z, sizeof(msg.z), "%s", f.zDir);
  plSend(fd, &msg);
  if (plSyncPragma(&f, pMode) != SQLITE_OK) _exit(1);
  plSendState(fd, &f);
  for (i = 0; i < faultStepCount(); i++) {
    if (faultStepRun(&f, i) != SQLITE_OK) {
      fprintf(stderr, "step %d (%s): %s\n", i, faultStepName(i), f.zErr);
      _exit(2);
    }
    if (plSyncPragma(&f, pMode) != SQLITE_OK) _exit(1); /* after a reopen */
    if (faultStepIsWrite(i)) plSendState(fd, &f);
  }
  if (plExtraSteps(&f, fd) != SQLITE_OK) {
    fprintf(stderr, "extra steps: %s\n", f.zErr);
    _exit(2);
  }
  faultDbClose(&f);
  memset(&msg, 0, sizeof(msg));
  msg.eKind = PLMSG_SYNCS;
  msg.v = plSyncCount();
  plSend(fd, &msg);
  _exit(0);
}

/*************************************************************************
** The checks after a crash.
*/

/*
** Runs the next write after a crash on p, whose state is reference state
** iState: the CREATE step first if the table does not exist yet, then ten
** new rows into t and m in one transaction. Returns an SQLite code.
*/
static int plNextWrite(FaultDb *p, int iState) {
  int rc = SQLITE_OK;
  if (iState == 0) rc = faultStepRun(p, 0); /* nothing committed: CREATE */
  if (rc == SQLITE_OK) rc = plLoad(p, 900, 909);
  return rc;
}

/*
** Checks the database in folder zDir after a crash whose child had
** acknowledged the states pAcked. Returns NULL or a new message
** (sqlite3_free); sets *pbLost when an acknowledged state is missing.
*/
static char *plCheck(const char *zDir, const PlMode *pMode,
                     const PlStates *pAcked, int *pbLost) {
  FaultDb f;
  char *zErr = NULL;
  uint64_t h;
  int rc, i, iState = -1, nOrphan = 0, nTmp = 0;
  *pbLost = 0;
  memset(&f, 0, sizeof(f));
  f.eJournal = pMode->eJournal;
  f.eAccess = FAULT_ACCESS_MMAP;
  snprintf(f.zDir, sizeof(f.zDir), "%s", zDir);
  snprintf(f.zDb, sizeof(f.zDb), "%s/test.db", zDir);
  rc = faultDbReopen(&f);
  if (rc == SQLITE_OK) {
    sqlite3_stmt *pStmt = NULL;
    rc = sqlite3_prepare_v2(f.db, "PRAGMA integrity_check", -1, &pStmt, NULL);
    if (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW &&
        strcmp((const char *)sqlite3_column_text(pStmt, 0), "ok") != 0) {
      zErr =
          sqlite3_mprintf("integrity_check: %s", sqlite3_column_text(pStmt, 0));
    }
    sqlite3_finalize(pStmt);
  }
  if (rc == SQLITE_OK && zErr == NULL) {
    h = faultStateHash(&f, &rc);
    /* the latest reference state it equals (steps that change no row of
    ** m leave equal states behind them) */
    for (i = 0; rc == SQLITE_OK && i < refStates.n; i++) {
      if (refStates.aHash[i] == h) iState = i;
    }
    if (rc == SQLITE_OK && iState < 0) {
      zErr = sqlite3_mprintf("the state is none the workload committed "
                             "(%d acknowledged)",
                             pAcked->n - 1);
    } else if (rc == SQLITE_OK && iState < pAcked->n - 1) {
      *pbLost = 1;
      if (pMode->nLag >= 0 && iState < pAcked->n - 1 - pMode->nLag) {
        zErr = sqlite3_mprintf("state %d was acknowledged, the database is "
                               "at state %d",
                               pAcked->n - 1, iState);
      }
    }
  }
  if (rc == SQLITE_OK && zErr == NULL && iState > 0) {
    rc = faultIntegrity(&f);
    if (rc == SQLITE_OK) rc = faultCompare(&f);
    if (rc == SQLITE_OK) rc = faultKnnCheck(&f);
  }
  if (rc == SQLITE_OK && zErr == NULL) {
    rc = plNextWrite(&f, iState);
    if (rc == SQLITE_OK) rc = faultCompare(&f);
    if (rc == SQLITE_OK) rc = faultIntegrity(&f);
    if (rc == SQLITE_OK) rc = faultOrphans(&f, &nOrphan, &nTmp);
    if (rc == SQLITE_OK && (nOrphan || nTmp)) {
      zErr = sqlite3_mprintf("after the next write: %d orphan files, %d .tmp",
                             nOrphan, nTmp);
    }
  }
  if (rc != SQLITE_OK && zErr == NULL) {
    zErr = sqlite3_mprintf("(state %d, %d acknowledged) %s", iState,
                           pAcked->n - 1, f.zErr);
  }
  faultDbClose(&f);
  return zErr;
}

/*
** Runs the workload in a child crashing at sync point iSync (0: never) and
** checks the result in the parent (the reference run: iSync 0, pStates
** receives the states). Returns NULL or a new message; *pbReached says the
** child crashed, *pbLost that an acknowledged step was missing, *pnSync
** (if given) the sync points of a run that did not crash.
*/
static char *plRun(const PlMode *pMode, int iSync, int eWhen, int *pbReached,
                   int *pbLost, int *pnSync, PlStates *pStates) {
  char zBase[600], zDir[256];
  int aPipe[2], iStatus = 0;
  pid_t pid;
  PlMsg msg;
  PlStates acked;
  char *zErr = NULL;
  acked.n = 0;
  zDir[0] = 0;
  *pbReached = *pbLost = 0;
  snprintf(zBase, sizeof(zBase), "%s/run", zTestDir);
  if (mkdir(zBase, 0755) != 0 && errno != EEXIST) {
    return sqlite3_mprintf("mkdir %s", zBase);
  }
  if (pipe(aPipe) != 0) return sqlite3_mprintf("pipe");
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid < 0) return sqlite3_mprintf("fork");
  if (pid == 0) {
    close(aPipe[0]);
    plChild(zBase, pMode, iSync, eWhen, aPipe[1]);
  }
  close(aPipe[1]);
  while (read(aPipe[0], &msg, sizeof(msg)) == (ssize_t)sizeof(msg)) {
    if (msg.eKind == PLMSG_DIR) snprintf(zDir, sizeof(zDir), "%s", msg.z);
    if (msg.eKind == PLMSG_STATE && acked.n < PL_MAX_STATE) {
      acked.aHash[acked.n++] = msg.h;
    }
    if (msg.eKind == PLMSG_SYNCS && pnSync) *pnSync = msg.v;
  }
  close(aPipe[0]);
  waitpid(pid, &iStatus, 0);
  *pbReached = WIFEXITED(iStatus) && WEXITSTATUS(iStatus) == PL_EXIT_CRASH;
  if (pStates) *pStates = acked;
  if (zDir[0] == 0) {
    /* crashed before the folder was reported: nothing was committed */
    if (!*pbReached) zErr = sqlite3_mprintf("the child reported no folder");
  } else if (!(WIFEXITED(iStatus) &&
               (WEXITSTATUS(iStatus) == 0 || *pbReached))) {
    zErr = sqlite3_mprintf("the child failed (status 0x%x) after state %d",
                           iStatus, acked.n - 1);
  } else {
    zErr = plCheck(zDir, pMode, &acked, pbLost);
  }
  {
    FaultDb f;
    memset(&f, 0, sizeof(f));
    snprintf(f.zDir, sizeof(f.zDir), "%s", zDir);
    faultDbRemove(&f);
  }
  return zErr;
}

/*************************************************************************
** The suite.
*/

/* Runs every chosen crash point of mode pMode; fills *pT. */
static void plMode(const PlMode *pMode, PlTally *pT) {
  int bFull = getenv("COLVEC_POWERLOSS_FULL") != NULL &&
              atoi(getenv("COLVEC_POWERLOSS_FULL")) != 0;
  int bReached = 0, bLost = 0, nSync = -1, k, eWhen, nStride = 1;
  int nDense = testScaled(PL_DENSE, 2), nTail = testScaled(PL_TAIL, 2);
  int nShort = testScaled(PL_SHORT_MAX, 1);
  char *zErr;
  memset(pT, 0, sizeof(*pT));
  refStates.n = 0;
  zErr = plRun(pMode, 0, PL_BEFORE, &bReached, &bLost, &nSync, &refStates);
  ck_assert_msg(zErr == NULL, "%s reference run: %s", pMode->zName,
                zErr ? zErr : "");
  ck_assert_msg(!bReached && !bLost && nSync > 0 && refStates.n > 1,
                "%s reference run", pMode->zName);
  pT->nSyncPoint = nSync;
  if (!bFull && nSync > nDense + nTail) {
    nStride = (nSync - nDense - nTail) / nShort + 1;
  }
  for (k = 1; k <= nSync; k++) {
    int bDense = k <= nDense || k > nSync - nTail || nStride == 1;
    if (!bDense && (k - nDense) % nStride != 0) continue;
    for (eWhen = PL_BEFORE; eWhen <= PL_AFTER; eWhen++) {
      /* between the dense parts the short run alternates before and after */
      if (!bDense && eWhen != (k / nStride) % 2) continue;
      zErr = plRun(pMode, k, eWhen, &bReached, &bLost, NULL, NULL);
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
         "%d lost the last acknowledged step, %d failures\n",
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

/* Removes one entry of a tree (nftw callback). */
static int plRmEntry(const char *zPath, const struct stat *pSt, int eFlag,
                     struct FTW *pFtw) {
  (void)pSt;
  (void)eFlag;
  (void)pFtw;
  remove(zPath);
  return 0;
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
  snprintf(zTestDir, sizeof(zTestDir), "%s/colvec-powerloss-%d", zBase,
           (int)getpid());
  if (mkdir(zTestDir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "cannot make %s\n", zTestDir);
    return 1;
  }
  printf("powerloss on SQLite %s\n", sqlite3_libversion());
  faultLibInit();
  {
    /* faultDbOpen() also prepares the CREATE step that plNextWrite() may
    ** run in this process: open and remove one database */
    FaultDb f;
    if (faultDbOpen(&f, zTestDir, FAULT_JOURNAL_DELETE, FAULT_ACCESS_MMAP) !=
        SQLITE_OK) {
      fprintf(stderr, "%s\n", f.zErr);
      return 1;
    }
    faultDbClose(&f);
    faultDbRemove(&f);
  }
  sr = srunner_create(plSuite());
  srunner_run_all(sr, CK_NORMAL);
  nFail = srunner_ntests_failed(sr);
  srunner_free(sr);
  nftw(zTestDir, plRmEntry, 16, FTW_DEPTH | FTW_PHYS);
  return nFail == 0 ? 0 : 1;
}
