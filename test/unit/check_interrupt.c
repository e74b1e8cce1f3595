/*
** check_interrupt.c — sqlite3_interrupt() during long colvec work.
**
** A COMMIT that writes a segment of 20,000 128-dimensional rows builds an
** HNSW graph for seconds. Another thread (or, where none can be started,
** a SIGALRM handler) calls sqlite3_interrupt() 200 ms into it; the COMMIT
** must fail with SQLITE_INTERRUPT soon after (asserted within 1 s, a
** generous bound for a busy 2-core machine; the measured latency is
** printed), SQLite rolls the transaction back, and the table is
** then exactly as of its last commit, passes 'integrity-check', and the
** next committed write removes the file the interrupted COMMIT left. The
** same for a build on two threads, for one interrupted from a signal
** handler (as the sqlite3 shell's Ctrl-C) and for an 'optimize' that
** merges segments. Requires env COLVEC_EXT (path of colvec.so); exits 77
** when it is unset.
*/
#include <sqlite3.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define INT_DIM 128       /* dimensions of the test vectors */
#define INT_ROWS 20000    /* rows of the segment being indexed */
#define INT_DELAY_MS 200  /* interrupt this long after the statement starts */
#define INT_BOUND_MS 1000 /* the statement must end this soon after it */

/* Milliseconds on the monotonic clock. */
static double intMillis(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The interrupting thread: waits, records the time, interrupts. */
typedef struct IntTimer IntTimer;
struct IntTimer {
  sqlite3 *db;  /* connection to interrupt */
  int nDelayMs; /* wait before interrupting */
  double rAt;   /* when sqlite3_interrupt() was called (intMillis) */
};

/* pthread entry of the interrupting thread. */
static void *intTimerMain(void *p) {
  IntTimer *t = (IntTimer *)p;
  struct timespec ts;
  ts.tv_sec = t->nDelayMs / 1000;
  ts.tv_nsec = (long)(t->nDelayMs % 1000) * 1000000L;
  nanosleep(&ts, NULL);
  t->rAt = intMillis();
  sqlite3_interrupt(t->db);
  return NULL;
}

/* The connection the SIGALRM handler interrupts. */
static sqlite3 *intAlarmDb;
/* When the SIGALRM handler called sqlite3_interrupt() (intMillis). */
static volatile double intAlarmAt;

/*
** SIGALRM handler: interrupts intAlarmDb, as the sqlite3 shell's SIGINT
** handler does (sqlite3_interrupt() only sets a flag; clock_gettime() is
** async-signal-safe).
*/
static void intAlarm(int iSig) {
  (void)iSig;
  intAlarmAt = intMillis();
  sqlite3_interrupt(intAlarmDb);
}

/*
** Runs zSql on db, interrupted by a SIGALRM INT_DELAY_MS into it: the way
** when no second thread can be started (qemu-user, see tool/ci/qemu-fork.c).
** Returns the statement's result code and its time of interruption.
*/
static int intRunAlarmed(sqlite3 *db, const char *zSql, double *prAt) {
  struct sigaction sa, saOld;
  struct itimerval it;
  int rc;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = intAlarm;
  sa.sa_flags = SA_RESTART; /* colvec's and SQLite's I/O goes on */
  sigemptyset(&sa.sa_mask);
  intAlarmDb = db;
  intAlarmAt = 0;
  ck_assert_int_eq(sigaction(SIGALRM, &sa, &saOld), 0);
  memset(&it, 0, sizeof(it));
  it.it_value.tv_sec = INT_DELAY_MS / 1000;
  it.it_value.tv_usec = (INT_DELAY_MS % 1000) * 1000;
  ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
  rc = sqlite3_exec(db, zSql, NULL, NULL, NULL);
  memset(&it, 0, sizeof(it));
  setitimer(ITIMER_REAL, &it, NULL);
  sigaction(SIGALRM, &saOld, NULL);
  *prAt = intAlarmAt;
  return rc;
}

/*
** Runs zSql on db while another thread interrupts it after INT_DELAY_MS,
** or a SIGALRM handler when bAlarm is set or no thread can be started
** (the output then says so). Returns the statement's result code;
** *prLatency is the time from the interrupt to the statement's end
** (negative when it ended before).
*/
static int intRunInterrupted(sqlite3 *db, const char *zSql, int bAlarm,
                             double *prLatency) {
  IntTimer t;
  pthread_t th;
  int rc;
  double rEnd;
  t.db = db;
  t.nDelayMs = INT_DELAY_MS;
  t.rAt = 0;
  if (!bAlarm && pthread_create(&th, NULL, intTimerMain, &t) != 0) {
    printf("no second thread (pthread_create failed): interrupting from a "
           "SIGALRM handler\n");
    bAlarm = 1;
  }
  if (bAlarm) {
    rc = intRunAlarmed(db, zSql, &t.rAt);
    *prLatency = t.rAt > 0 ? intMillis() - t.rAt : -1.0;
    return rc;
  }
  rc = sqlite3_exec(db, zSql, NULL, NULL, NULL);
  rEnd = intMillis();
  pthread_join(th, NULL);
  *prLatency = rEnd - t.rAt;
  return rc;
}

/* nftw callback: removes one entry. */
static int intRmEntry(const char *zPath, const struct stat *st, int eType,
                      struct FTW *f) {
  (void)st;
  (void)eType;
  (void)f;
  return remove(zPath);
}

/* Opens a fresh database in a new temporary folder (path in zDir). */
static sqlite3 *intOpen(char *zDir) {
  const char *zExt = getenv("COLVEC_EXT");
  const char *zTmp = getenv("COLVEC_TESTDIR");
  char zDb[400];
  char *zErr = NULL;
  sqlite3 *db = NULL;
  if (zTmp == NULL || zTmp[0] == 0) zTmp = "/tmp";
  snprintf(zDir, 300, "%s/colvec-int-XXXXXX", zTmp);
  ck_assert_msg(mkdtemp(zDir) != NULL, "mkdtemp: %s", strerror(errno));
  snprintf(zDb, sizeof(zDb), "%s/test.db", zDir);
  ck_assert_int_eq(sqlite3_open(zDb, &db), SQLITE_OK);
  sqlite3_enable_load_extension(db, 1);
  ck_assert_msg(sqlite3_load_extension(db, zExt, NULL, &zErr) == SQLITE_OK,
                "load %s: %s", zExt, zErr ? zErr : "?");
  sqlite3_exec(db, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
  return db;
}

/* Runs zSql, which must succeed. */
static void intExec(sqlite3 *db, const char *zSql) {
  char *zErr = NULL;
  int rc = sqlite3_exec(db, zSql, NULL, NULL, &zErr);
  ck_assert_msg(rc == SQLITE_OK, "%s: %s", zSql, zErr ? zErr : "?");
  sqlite3_free(zErr);
}

/* Returns the integer result of zSql (one row, one column). */
static long long intQueryInt(sqlite3 *db, const char *zSql) {
  sqlite3_stmt *pStmt = NULL;
  long long v;
  ck_assert_int_eq(sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_ROW);
  v = sqlite3_column_int64(pStmt, 0);
  sqlite3_finalize(pStmt);
  return v;
}

/*
** Inserts rows iFirst..iFirst+n-1 of table t (seeded random vectors) with
** one prepared statement, inside whatever transaction is open.
*/
static void intInsertRows(sqlite3 *db, int iFirst, int n) {
  sqlite3_stmt *pStmt = NULL;
  float aVec[INT_DIM];
  unsigned int seed = 12345u + (unsigned)iFirst;
  int i, d;
  ck_assert_int_eq(sqlite3_prepare_v2(db,
                                      "INSERT INTO t(rowid, e) VALUES (?, ?)",
                                      -1, &pStmt, NULL),
                   SQLITE_OK);
  for (i = 0; i < n; i++) {
    for (d = 0; d < INT_DIM; d++) {
      seed = seed * 1103515245u + 12345u;
      aVec[d] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    sqlite3_bind_int64(pStmt, 1, iFirst + i);
    sqlite3_bind_blob(pStmt, 2, aVec, sizeof(aVec), SQLITE_STATIC);
    ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_DONE);
    sqlite3_reset(pStmt);
  }
  sqlite3_finalize(pStmt);
}

/* Number of files in the table's segment folder. */
static int intCountFiles(const char *zDir) {
  char zSeg[400];
  DIR *d;
  struct dirent *e;
  int n = 0;
  snprintf(zSeg, sizeof(zSeg), "%s/test.db-colvec", zDir);
  d = opendir(zSeg);
  if (d == NULL) return 0;
  /* one folder per table; count the files inside it */
  while ((e = readdir(d)) != NULL) {
    char zSub[800];
    DIR *d2;
    struct dirent *e2;
    if (e->d_name[0] == '.') continue;
    snprintf(zSub, sizeof(zSub), "%s/%s", zSeg, e->d_name);
    d2 = opendir(zSub);
    if (d2 == NULL) continue;
    while ((e2 = readdir(d2)) != NULL) {
      if (e2->d_name[0] != '.') n++;
    }
    closedir(d2);
  }
  closedir(d);
  return n;
}

/*
** Checks that the table is as of its last commit (nRow rows, rowid sum
** nSum), passes integrity-check, and that one more committed write leaves
** exactly nFile files (the interrupted statement's file removed).
*/
static void intCheckCommitted(sqlite3 *db, const char *zDir, long long nRow,
                              long long nSum, int nFile) {
  ck_assert_int_eq(sqlite3_get_autocommit(db), 1);
  ck_assert_int_eq(intQueryInt(db, "SELECT count(*) FROM t"), nRow);
  ck_assert_int_eq(intQueryInt(db, "SELECT total(rowid) FROM t"), nSum);
  intExec(db, "INSERT INTO t(t) VALUES ('integrity-check')");
  intExec(db, "INSERT INTO t(rowid, e) SELECT -1, e FROM t LIMIT 1;"
              "DELETE FROM t WHERE rowid = -1");
  ck_assert_int_eq(intCountFiles(zDir), nFile);
}

/*
** A COMMIT writing one segment of INT_ROWS rows with an HNSW graph built
** on nThread threads, interrupted INT_DELAY_MS into it by another thread
** or, with bAlarm, by a signal handler.
*/
static void intCommitBuild(int nThread, int bAlarm) {
  char zDir[300], zSql[200];
  sqlite3 *db = intOpen(zDir);
  double rLatency;
  int rc;
  snprintf(zSql, sizeof(zSql),
           "CREATE VIRTUAL TABLE t USING colvec(e float[%d], "
           "delta_rows=1000, defer_rows=0, build_threads=%d)",
           INT_DIM, nThread);
  intExec(db, zSql);
  intInsertRows(db, 1, 10); /* the last committed state: 10 rows */
  intExec(db, "BEGIN");
  intInsertRows(db, 100, INT_ROWS);
  rc = intRunInterrupted(db, "COMMIT", bAlarm, &rLatency);
  printf("COMMIT building a %d x %d graph on %d thread(s)%s: rc %d, "
         "interrupt answered after %.1f ms\n",
         INT_ROWS, INT_DIM, nThread, bAlarm ? " (SIGALRM)" : "", rc, rLatency);
  ck_assert_int_eq(rc, SQLITE_INTERRUPT);
  ck_assert_msg(rLatency >= 0 && rLatency < INT_BOUND_MS,
                "answered after %.1f ms", rLatency);
  /* the 10 committed rows live in the delta: no segment file */
  intCheckCommitted(db, zDir, 10, 55, 0);
  ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
  nftw(zDir, intRmEntry, 16, FTW_DEPTH | FTW_PHYS);
}

START_TEST(test_commit_build_1) { intCommitBuild(1, 0); }
END_TEST

START_TEST(test_commit_build_2) { intCommitBuild(2, 0); }
END_TEST

/* The same, interrupted from a SIGALRM handler (as the shell's Ctrl-C). */
START_TEST(test_commit_build_alarm) { intCommitBuild(1, 1); }
END_TEST

/*
** An 'optimize' merging segments, interrupted while it builds the merged
** segment's graph.
*/
START_TEST(test_optimize_merge) {
  char zDir[300], zSql[200];
  sqlite3 *db = intOpen(zDir);
  double rLatency;
  int rc, i;
  long long n = 0;
  snprintf(zSql, sizeof(zSql),
           "CREATE VIRTUAL TABLE t USING colvec(e float[%d], "
           "delta_rows=1000, build_threads=1)",
           INT_DIM);
  intExec(db, zSql);
  /* three segments below the graph threshold (quick to write, and too few
  ** for an automatic merge); merged, they get a graph */
  for (i = 0; i < 3; i++) {
    intExec(db, "BEGIN");
    intInsertRows(db, (int)n + 1, 2000);
    intExec(db, "COMMIT");
    n += 2000;
  }
  ck_assert_int_eq(intCountFiles(zDir), 3);
  rc = intRunInterrupted(
      db, "BEGIN; INSERT INTO t(t) VALUES ('optimize'); COMMIT", 0, &rLatency);
  printf("optimize merging 3 x 2000 rows: rc %d, interrupt answered after "
         "%.1f ms\n",
         rc, rLatency);
  ck_assert_int_eq(rc, SQLITE_INTERRUPT);
  ck_assert_msg(rLatency >= 0 && rLatency < INT_BOUND_MS,
                "answered after %.1f ms", rLatency);
  if (!sqlite3_get_autocommit(db)) intExec(db, "ROLLBACK");
  intCheckCommitted(db, zDir, n, n * (n + 1) / 2, 3);
  ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
  nftw(zDir, intRmEntry, 16, FTW_DEPTH | FTW_PHYS);
}
END_TEST

/* Builds the suite. */
static Suite *intSuite(void) {
  Suite *s = suite_create("interrupt");
  TCase *tc = tcase_create("interrupt");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_commit_build_1);
  tcase_add_test(tc, test_commit_build_2);
  tcase_add_test(tc, test_commit_build_alarm);
  tcase_add_test(tc, test_optimize_merge);
  suite_add_tcase(s, tc);
  return s;
}

/* Runs the suite; exits 77 (skip) without COLVEC_EXT. */
int main(void) {
  SRunner *sr;
  int nFail;
  if (getenv("COLVEC_EXT") == NULL || getenv("COLVEC_EXT")[0] == 0) {
    fprintf(stderr, "check_interrupt: COLVEC_EXT is not set, skipping\n");
    return 77;
  }
  printf("SQLite %s\n", sqlite3_libversion());
  sr = srunner_create(intSuite());
  srunner_run_all(sr, CK_NORMAL);
  nFail = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nFail ? 1 : 0;
}
