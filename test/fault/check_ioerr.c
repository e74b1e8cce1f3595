/*
** check_ioerr.c — I/O fault injection at every file-system call of colvec.
**
** The module is linked statically with test/lib/faultlib.c (faultlib.h: the
** workload, a plain-table model receiving the same writes, and the
** checks). For each kind of fault (ioKinds[]: a call kind of the os layer,
** COLVEC_OSOP_*, an errno, a short write or not, the table's access mode)
** and each journal mode, a reference run counts the calls of every kind per
** workload step and records the state before each step. Then for N over
** those calls (ioPick(): in the short version the first call of each step
** that makes such calls, and the middle one of a step that makes many;
** persistent faults and WAL at every other step; ioPins[] always; every
** call in the full version), a forked child runs the workload with the
** N-th call of that kind failing, transient (only that call) or persistent
** (that call and every later one until the step ends), and stops at the
** step where the fault fired. Windows has no fork(): there (`make
** check-windows`, mingw-w64 + wine) the same run happens in this process,
** its report going through a temporary file.
** The child checks:
**   - a step that fails returns an I/O-family code (SQLITE_IOERR_*,
**     SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOMEM; others are notes, and
**     SQLITE_CORRUPT, SQLITE_INTERNAL and SQLITE_MISUSE failures) whose
**     message starts with "colvec: " (only colvec's calls fail, so every
**     such error comes from colvec), and only when a fault was injected;
**     a write that finds the disk full gives SQLITE_FULL, with a message
**     that says the disk is full and names the file;
**   - a step that succeeds although a fault fired is a note ("ignored":
**     cleanup of files nothing needs, closing a file only read);
**   - the fault fires at all (else the calls differ from the reference);
**   - with faults off, after ROLLBACK of any open transaction: t equals
**     the model, integrity-check passes, KNN agrees with a brute force (a
**     reader query works), and the state is the reference state before or
**     after the failing step (after it, when it succeeded);
**   - the remaining steps then run to the reference final state;
**   - one more write transaction leaves no orphan and no .tmp file in the
**     table folder;
**   - after close, sqlite3_memory_used() and the count of open file
**     descriptors are back to their values before the open.
** The parent reports a child killed by a signal or hanging (alarm) with the
** kind, N and the step. It prints per kind the fault points tried, the
** notes and the failures, and a total.
**
** Environment: COLVEC_IOERR_FULL=1 tries every N of every kind in both
** journal modes and both fault modes (`make check-ioerr`);
** COLVEC_IOERR_KIND=name runs one kind; COLVEC_IOERR_N=n (with a kind and
** CK_RUN_CASE=delete or wal) tries only N=n; COLVEC_IOERR_VERBOSE=1 prints
** every note; COLVEC_TEST_SCALE=n (emulated runs, test/lib/testscale.h) tries
** one in n of the short version's fault points (each kind's first, and the
** pins, still run).
*/
#include "colvec_os.h"
#include "../lib/faultlib.h"
#include "../lib/testsay.h"
#include "../lib/testscale.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#if defined(_WIN32)
#include <windows.h>
#else
#include <sys/wait.h>
#endif

#define IO_MAX_STEP 32   /* steps of the workload, at most */
#define IO_MID_MIN 16    /* a step with more calls also gets its middle one */
#define IO_MAX_REPORT 30 /* problem lines printed per case */
#define IO_MAX_N 100000  /* fault points per kind and mode, at most */

/* Under ASan every run is about ten times slower: the short version tries
** every sixth fault point (and the pins). */
#if defined(__SANITIZE_ADDRESS__)
#define IO_THIN 6
#else
#define IO_THIN 1
#endif

/* One kind of fault. */
typedef struct IoKind IoKind;
struct IoKind {
  const char *zName; /* for reports and COLVEC_IOERR_KIND */
  int eOp;           /* COLVEC_OSOP_* */
  int iErrno;        /* errno the call fails with */
  long nShort;       /* bytes a failing write writes first; -1: none */
  int eAccess;       /* FAULT_ACCESS_* of table t */
};

/* The kinds tried. */
static const IoKind ioKinds[] = {
    {"write-EIO", COLVEC_OSOP_WRITE, EIO, -1, FAULT_ACCESS_MMAP},
    {"write-ENOSPC-short", COLVEC_OSOP_WRITE, ENOSPC, 100, FAULT_ACCESS_MMAP},
    {"fsync-EIO", COLVEC_OSOP_SYNC, EIO, -1, FAULT_ACCESS_MMAP},
    {"dirsync-EIO", COLVEC_OSOP_SYNCDIR, EIO, -1, FAULT_ACCESS_MMAP},
    {"rename-EIO", COLVEC_OSOP_RENAME, EIO, -1, FAULT_ACCESS_MMAP},
    {"open-EIO", COLVEC_OSOP_OPEN, EIO, -1, FAULT_ACCESS_MMAP},
    {"open-EMFILE", COLVEC_OSOP_OPEN, EMFILE, -1, FAULT_ACCESS_FILE},
    {"mmap-ENOMEM", COLVEC_OSOP_MAP, ENOMEM, -1, FAULT_ACCESS_MMAP},
    {"read-EIO", COLVEC_OSOP_READ, EIO, -1, FAULT_ACCESS_FILE},
    {"size-EIO", COLVEC_OSOP_SIZE, EIO, -1, FAULT_ACCESS_FILE},
    {"unlink-EIO", COLVEC_OSOP_UNLINK, EIO, -1, FAULT_ACCESS_MMAP},
    {"mkdir-ENOSPC", COLVEC_OSOP_MKDIR, ENOSPC, -1, FAULT_ACCESS_MMAP},
    {"rmdir-EIO", COLVEC_OSOP_RMDIR, EIO, -1, FAULT_ACCESS_MMAP},
    {"listdir-EMFILE", COLVEC_OSOP_LISTDIR, EMFILE, -1, FAULT_ACCESS_MMAP},
    {"close-EIO", COLVEC_OSOP_CLOSE, EIO, -1, FAULT_ACCESS_MMAP},
};
#define IO_NKIND ((int)(sizeof(ioKinds) / sizeof(ioKinds[0])))

/* A fault point always tried by the short version (transient faults,
** rollback journal). */
typedef struct IoPin IoPin;
struct IoPin {
  const char *zKind; /* IoKind.zName */
  int iStep;         /* workload step */
  long iCall;        /* which call of that kind in the step, from 0 */
};

/*
** Fault points that found bugs (see doc/RELIABILITY.md): reads and opens
** of segments reported SQLITE_CORRUPT_VTAB (open-EIO, mmap-ENOMEM,
** close-EIO in the bulk load, read-EIO in a KNN); a failed read leaked its
** buffer on the next attempt (read-EIO in the rowid moves); cleanup
** dropped the trash rows of files it could not list, so integrity-check
** reported them (listdir-EMFILE after the row inserts and the last
** writes).
*/
static const IoPin ioPins[] = {
    {"open-EIO", 1, 2},       {"mmap-ENOMEM", 1, 0},     {"close-EIO", 1, 2},
    {"read-EIO", 8, 0},       {"read-EIO", 6, 0},        {"read-EIO", 6, 1},
    {"listdir-EMFILE", 2, 0}, {"listdir-EMFILE", 15, 0},
};

/* The reference run of one journal mode and access mode. */
typedef struct IoRef IoRef;
struct IoRef {
  int nStep;                                       /* steps of the workload */
  long aStart[IO_MAX_STEP + 1][COLVEC_OSOP_COUNT]; /* calls before step i */
  uint64_t aState[IO_MAX_STEP + 1];                /* state before step i */
};

/* Counters of one kind in one journal mode. */
typedef struct IoTally IoTally;
struct IoTally {
  int nRun;     /* fault points tried (child runs) */
  int nFail;    /* runs with a problem */
  int nIgnored; /* runs where every step succeeded although a fault fired */
  int nNote;    /* note lines */
  int nCrash;   /* children killed by a signal or exiting abnormally */
};

/* ------------------------------------------------------------ helpers */

/* Returns non-zero when env zName is set to something other than "0". */
static int ioEnv(const char *zName) {
  const char *z = getenv(zName);
  return z && z[0] && strcmp(z, "0") != 0;
}

/*
** Runs the workload once with no fault and records the reference: calls of
** every kind before each step, state before each step. Fails the test when
** a step or a check fails.
*/
static void ioReference(IoRef *pRef, int eJournal, int eAccess) {
  FaultDb f;
  int i, rc, op;
  memset(pRef, 0, sizeof(*pRef));
  pRef->nStep = faultStepCount();
  ck_assert_int_le(pRef->nStep, IO_MAX_STEP);
  rc = faultDbOpen(&f, NULL, eJournal, eAccess);
  ck_assert_msg(rc == SQLITE_OK, "open: %s", f.zErr);
  faultInjectStart(0, -1, 0, 0, -1);
  for (i = 0; i <= pRef->nStep; i++) {
    for (op = 0; op < COLVEC_OSOP_COUNT; op++) {
      pRef->aStart[i][op] = faultInjectCount(op);
    }
    pRef->aState[i] = faultStateHash(&f, &rc);
    ck_assert_msg(rc == SQLITE_OK, "state before step %d: %s", i, f.zErr);
    if (i == pRef->nStep) break;
    rc = faultStepRun(&f, i);
    ck_assert_msg(rc == SQLITE_OK, "reference step %d (%s): rc=%d %s", i,
                  faultStepName(i), rc, f.zErr);
  }
  /* checks read t: only after the counting, which the children repeat */
  faultInjectStop();
  rc = faultCompare(&f);
  ck_assert_msg(rc == SQLITE_OK, "reference: t differs from m: %s", f.zErr);
  rc = faultIntegrity(&f);
  ck_assert_msg(rc == SQLITE_OK, "reference integrity-check: %s", f.zErr);
  ck_assert_int_eq(faultDbClose(&f), SQLITE_OK);
  faultDbRemove(&f);
}

/* Returns non-zero when extended code rc is an acceptable answer to an
** injected I/O fault. */
static int ioCodeOk(int rc) {
  switch (rc & 0xff) {
  case SQLITE_IOERR:
  case SQLITE_FULL:
  case SQLITE_CANTOPEN:
  case SQLITE_NOMEM:
    return 1;
  }
  return 0;
}

/* Returns non-zero when extended code rc must never answer an I/O fault. */
static int ioCodeBad(int rc) {
  return rc == FAULT_WRONG || (rc & 0xff) == SQLITE_CORRUPT ||
         (rc & 0xff) == SQLITE_INTERNAL || (rc & 0xff) == SQLITE_MISUSE;
}

/* The no-op write transaction after recovery: its cleanup must remove
** every file nothing names. */
#define IO_CLEANUP_SQL                                                         \
  "BEGIN; DELETE FROM t WHERE rowid = -1; DELETE FROM m WHERE "                \
  "rowid = -1; COMMIT;"

/*
** Child side of one run: the workload with call N of pKind's kind failing
** (bPersist: and every later one until the step ends). Reports on fd:
** "D folder", "S where" before each phase, "E message" per problem,
** "N message" per note, "I" when a fault was ignored, "F nFired" at the end.
*/
static void ioChild(const IoKind *pKind, const IoRef *pRef, int eJournal,
                    long N, int bPersist, int fd) {
  FaultDb f;
  sqlite3_int64 nMem0 = sqlite3_memory_used();
  int nFd0 = faultFdCount();
  int i, rc, iFail = -1, iStop = -1, rcFail = SQLITE_OK, nFired = 0, iResume,
             nOrphan, nTmp;
  char zFail[1024] = "";
  uint64_t h;

#if !defined(_WIN32)
  alarm(120);
#endif
  rc = faultDbOpen(&f, NULL, eJournal, pKind->eAccess);
  if (rc != SQLITE_OK) {
    testSay(fd, "E cannot open the database: %s", f.zErr);
    return;
  }
  testSay(fd, "D %s", f.zDir); /* the parent removes it if we crash */
  faultInjectStart(pKind->eOp, N, pKind->iErrno, bPersist, pKind->nShort);
  /* Run steps until one fails or the fault fires (the step ends first). */
  for (i = 0; i < pRef->nStep && iFail < 0 && nFired == 0; i++) {
    testSay(fd, "S %d", i);
    rc = faultStepRun(&f, i);
    nFired = faultInjectFired();
    if (rc != SQLITE_OK) {
      iFail = i;
      rcFail = rc;
      snprintf(zFail, sizeof(zFail), "%s", f.zErr);
    } else if (nFired > 0) {
      iStop = i;
      testSay(fd, "I");
      testSay(fd, "N N=%ld step %d (%s) succeeded although the fault fired", N,
              i, faultStepName(i));
    }
  }
  nFired = faultInjectStop();
  if (nFired == 0) {
    /* the reference run made call N: the sequence of calls changed */
    testSay(fd, "E N=%ld the fault never fired (the reference made %ld calls)",
            N, pRef->aStart[pRef->nStep][pKind->eOp]);
  }
  if (iFail >= 0) {
    iStop = iFail;
    if (nFired == 0) {
      testSay(fd,
              "E N=%ld step %d (%s) failed without an injected fault: "
              "rc=%d %s",
              N, iFail, faultStepName(iFail), rcFail, zFail);
    } else if (ioCodeBad(rcFail)) {
      testSay(fd, "E N=%ld step %d (%s) failed with rc=%d: %s", N, iFail,
              faultStepName(iFail), rcFail, zFail);
    } else if (pKind->eOp == COLVEC_OSOP_WRITE && pKind->iErrno == ENOSPC &&
               (rcFail & 0xff) != SQLITE_FULL) {
      testSay(fd,
              "E N=%ld step %d (%s): a full disk gave rc=%d, not "
              "SQLITE_FULL: %s",
              N, iFail, faultStepName(iFail), rcFail, zFail);
    } else if (pKind->eOp == COLVEC_OSOP_WRITE && pKind->iErrno == ENOSPC &&
               (strstr(zFail, "the disk is full") == NULL ||
                strstr(zFail, ".seg") == NULL)) {
      testSay(fd,
              "E N=%ld step %d (%s): a full disk's message does not say "
              "so or does not name the file: %s",
              N, iFail, faultStepName(iFail), zFail);
    } else if (!ioCodeOk(rcFail)) {
      testSay(fd, "N N=%ld step %d (%s) failed with rc=%d, not an I/O code: %s",
              N, iFail, faultStepName(iFail), rcFail, zFail);
    }
    if (nFired > 0 && strncmp(zFail, "colvec: ", 8) != 0) {
      testSay(fd,
              "E N=%ld step %d (%s) rc=%d: message without \"colvec: \": "
              "%s",
              N, iFail, faultStepName(iFail), rcFail, zFail);
    }
  }

  /* Faults off: roll back, check, resume. */
  testSay(fd, "S check");
  if (f.db == NULL && faultDbReopen(&f) != SQLITE_OK) {
    testSay(fd, "E N=%ld cannot reopen: %s", N, f.zErr);
    return;
  }
  if (faultRollback(&f) != SQLITE_OK) {
    testSay(fd, "E N=%ld ROLLBACK after step %d: %s", N, iStop, f.zErr);
  }
  if (faultCompare(&f) != SQLITE_OK) {
    testSay(fd, "E N=%ld after step %d: t differs from the model: %s", N, iStop,
            f.zErr);
  }
  if (faultHasTable(&f, "t") && faultIntegrity(&f) != SQLITE_OK) {
    testSay(fd, "E N=%ld after step %d: integrity-check: %s", N, iStop, f.zErr);
  }
  if (faultHasTable(&f, "t") && faultKnnCheck(&f) != SQLITE_OK) {
    testSay(fd, "E N=%ld after step %d: KNN: %s", N, iStop, f.zErr);
  }
  h = faultStateHash(&f, &rc);
  iResume = pRef->nStep;
  if (rc != SQLITE_OK) {
    testSay(fd, "E N=%ld after step %d: cannot read the state: %s", N, iStop,
            f.zErr);
  } else if (iStop < 0) {
    /* no fault fired: the run must be the reference */
    if (h != pRef->aState[pRef->nStep]) {
      testSay(fd, "E N=%ld no fault fired but the final state differs", N);
    }
  } else if (h == pRef->aState[iStop + 1]) {
    iResume = iStop + 1;
  } else if (iFail >= 0 && h == pRef->aState[iStop]) {
    iResume = iStop;
  } else {
    testSay(fd, "E N=%ld step %d (%s): the state is not the one %s it", N,
            iStop, faultStepName(iStop),
            iFail >= 0 ? "before nor the one after" : "after");
  }
  for (i = iResume; i < pRef->nStep; i++) {
    testSay(fd, "S resume %d", i);
    rc = faultStepRun(&f, i);
    if (rc != SQLITE_OK) {
      testSay(fd, "E N=%ld resume after step %d: step %d (%s) rc=%d %s", N,
              iStop, i, faultStepName(i), rc, f.zErr);
      break;
    }
    if (i == pRef->nStep - 1) {
      h = faultStateHash(&f, &rc);
      if (rc != SQLITE_OK || h != pRef->aState[pRef->nStep]) {
        testSay(fd, "E N=%ld resume after step %d: the final state differs", N,
                iStop);
      }
    }
  }
  testSay(fd, "S cleanup");
  if (faultCompare(&f) != SQLITE_OK) {
    testSay(fd, "E N=%ld at the end: t differs from the model: %s", N, f.zErr);
  }
  if (faultIntegrity(&f) != SQLITE_OK) {
    testSay(fd, "E N=%ld at the end: integrity-check: %s", N, f.zErr);
  }
  if (faultExec(&f, IO_CLEANUP_SQL) != SQLITE_OK) {
    testSay(fd, "E N=%ld the write after recovery failed: %s", N, f.zErr);
  } else if (faultOrphans(&f, &nOrphan, &nTmp) != SQLITE_OK) {
    testSay(fd, "E N=%ld cannot list the table folder: %s", N, f.zErr);
  } else if (nOrphan || nTmp) {
    testSay(fd,
            "E N=%ld (failing step %d) after a later write: %d orphan "
            "segment files, %d temporary files",
            N, iStop, nOrphan, nTmp);
  }
  rc = faultDbClose(&f);
  if (rc != SQLITE_OK) {
    testSay(fd, "E N=%ld sqlite3_close rc=%d %s", N, rc, f.zErr);
  } else {
    if (sqlite3_memory_used() != nMem0) {
      testSay(fd,
              "E N=%ld leak: %lld bytes still allocated after close "
              "(failing step %d)",
              N, (long long)(sqlite3_memory_used() - nMem0), iStop);
    }
    if (faultFdCount() != nFd0) {
      testSay(fd,
              "E N=%ld leak: %d file descriptors open after close, %d "
              "before (failing step %d)",
              N, faultFdCount(), nFd0, iStop);
    }
  }
  faultDbRemove(&f);
  testSay(fd, "F %d", nFired);
}

/* Removes folder zDir with everything in it (a crashed child's). */
static void ioRemoveDir(const char *zDir) {
  FaultDb f;
  memset(&f, 0, sizeof(f));
  snprintf(f.zDir, sizeof(f.zDir), "%s", zDir);
  faultDbRemove(&f);
}

/* Reads fd to its end; returns the bytes as a NUL-terminated string
** (malloc), or NULL when nothing was read. */
static char *ioReadAll(int fd) {
  char *zIn = NULL;
  size_t nIn = 0;
  char aBuf[4096];
  ssize_t n;
  while ((n = read(fd, aBuf, sizeof(aBuf))) > 0) {
    char *zNew = realloc(zIn, nIn + (size_t)n + 1);
    ck_assert_msg(zNew != NULL, "out of memory reading a run's report");
    zIn = zNew;
    memcpy(zIn + nIn, aBuf, (size_t)n);
    nIn += (size_t)n;
    zIn[nIn] = 0;
  }
  return zIn;
}

/*
** Runs ioChild() for one fault point and returns its lines (malloc, or
** NULL). POSIX: in a forked child, through a pipe; zCrash (nCrash bytes)
** receives "" or how the child ended abnormally. Windows has no fork():
** the run happens in this process (a crash ends the whole suite), its
** lines going through a temporary file; zCrash is always "".
*/
static char *ioCollect(const IoKind *pKind, const IoRef *pRef, int eJournal,
                       long N, int bPersist, char *zCrash, size_t nCrash) {
  char *zIn;
#if defined(_WIN32)
  char zPath[MAX_PATH + 64];
  DWORD nTmp = GetTempPathA(MAX_PATH, zPath);
  int fd;
  ck_assert(nTmp > 0 && nTmp < MAX_PATH);
  snprintf(zPath + nTmp, sizeof(zPath) - nTmp, "colvec-ioerr-%lu.txt",
           (unsigned long)GetCurrentProcessId());
  fd = open(zPath, O_RDWR | O_CREAT | O_TRUNC | O_BINARY, 0600);
  ck_assert_msg(fd >= 0, "cannot create %s", zPath);
  ioChild(pKind, pRef, eJournal, N, bPersist, fd);
  lseek(fd, 0, SEEK_SET);
  zIn = ioReadAll(fd);
  close(fd);
  unlink(zPath);
  zCrash[0] = 0;
  (void)nCrash;
#else
  int aFd[2], st = 0;
  pid_t pid;
  ck_assert_int_eq(pipe(aFd), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(aFd[0]);
    ioChild(pKind, pRef, eJournal, N, bPersist, aFd[1]);
    _exit(0);
  }
  close(aFd[1]);
  zIn = ioReadAll(aFd[0]);
  close(aFd[0]);
  waitpid(pid, &st, 0);
  zCrash[0] = 0;
  if (WIFSIGNALED(st)) {
    snprintf(zCrash, nCrash, "killed by signal %d", WTERMSIG(st));
  } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
    snprintf(zCrash, nCrash, "exited with %d", WEXITSTATUS(st));
  }
#endif
  return zIn;
}

/*
** Parent side of one run: runs the child (ioCollect), prints problems
** (and notes when verbose) to stderr, counts them in *pT.
*/
static void ioRun(const IoKind *pKind, const IoRef *pRef, int eJournal, long N,
                  int bPersist, IoTally *pT) {
  int bProblem = 0;
  char zLast[64] = "(start)", zDir[256] = "", zCrash[64];
  const char *zMode = bPersist ? "persistent" : "transient";
  const char *zJournal = eJournal == FAULT_JOURNAL_WAL ? "wal" : "delete";
  char *zIn =
      ioCollect(pKind, pRef, eJournal, N, bPersist, zCrash, sizeof(zCrash));
  pT->nRun++;
  if (zIn) {
    char *zLine = zIn, *zEnd;
    for (; *zLine; zLine = zEnd + 1) {
      zEnd = strchr(zLine, '\n');
      if (zEnd == NULL) break;
      *zEnd = 0;
      if (zLine[0] == 'S') {
        snprintf(zLast, sizeof(zLast), "%s", zLine + 2);
      } else if (zLine[0] == 'D') {
        snprintf(zDir, sizeof(zDir), "%s", zLine + 2);
      } else if (zLine[0] == 'I') {
        pT->nIgnored++;
      } else if (zLine[0] == 'E') {
        if (pT->nFail < IO_MAX_REPORT) {
          fprintf(stderr, "%s %s %s PROBLEM: %s\n", pKind->zName, zJournal,
                  zMode, zLine + 2);
        }
        bProblem = 1;
      } else if (zLine[0] == 'N') {
        if (ioEnv("COLVEC_IOERR_VERBOSE")) {
          fprintf(stderr, "%s %s %s note: %s\n", pKind->zName, zJournal, zMode,
                  zLine + 2);
        }
        pT->nNote++;
      }
    }
  }
  free(zIn);
  if (zDir[0] && access(zDir, F_OK) == 0) ioRemoveDir(zDir);
  if (zCrash[0]) {
    pT->nCrash++;
    bProblem = 1;
    fprintf(stderr, "%s %s %s PROBLEM: N=%ld child %s during %s\n",
            pKind->zName, zJournal, zMode, N, zCrash, zLast);
  }
  if (bProblem) pT->nFail++;
}

/*
** Fills aN with the N values to try for call kind eOp (indexes into the
** whole run's calls of that kind) and returns their count. With bFull,
** every call. Else, for every step that makes calls of that kind, its
** first call and, when it makes more than IO_MID_MIN, the middle one;
** with bSparse, only the first call of every other step (the steps of
** parity iPhase).
** aN has room for nMax values.
*/
static int ioPick(const IoRef *pRef, int eOp, int bFull, int bSparse,
                  int iPhase, long *aN, int nMax) {
  int bMid = !bSparse;
  int i, nN = 0, iSeen = 0;
  for (i = 0; i < pRef->nStep; i++) {
    long iFirst = pRef->aStart[i][eOp], iEnd = pRef->aStart[i + 1][eOp];
    long j;
    if (iEnd == iFirst) continue;
    if (bFull) {
      for (j = iFirst; j < iEnd && nN < nMax; j++)
        aN[nN++] = j;
      continue;
    }
    if (bSparse && (iSeen++ & 1) != iPhase) continue;
    if (nN < nMax) aN[nN++] = iFirst;
    if (bMid && iEnd - iFirst > IO_MID_MIN && nN < nMax) {
      aN[nN++] = iFirst + (iEnd - iFirst) / 2;
    }
  }
  return nN;
}

/*
** Runs every kind (or the one COLVEC_IOERR_KIND names) in journal mode
** eJournal, transient and persistent, and fails the test on any problem.
*/
static void ioLoop(int eJournal) {
  static IoRef aRef[2]; /* reference per access mode */
  static long aN[IO_MAX_N];
  int bFull = ioEnv("COLVEC_IOERR_FULL");
  const char *zKind = getenv("COLVEC_IOERR_KIND");
  const char *zN = getenv("COLVEC_IOERR_N");
  const char *zJournal = eJournal == FAULT_JOURNAL_WAL ? "wal" : "delete";
  int iKind, nFail = 0, nRun = 0, nThin = IO_THIN * testScale();
  time_t t0 = time(NULL);
  faultLibInit();
  ioReference(&aRef[FAULT_ACCESS_MMAP], eJournal, FAULT_ACCESS_MMAP);
  ioReference(&aRef[FAULT_ACCESS_FILE], eJournal, FAULT_ACCESS_FILE);
  for (iKind = 0; iKind < IO_NKIND; iKind++) {
    const IoKind *pKind = &ioKinds[iKind];
    const IoRef *pRef = &aRef[pKind->eAccess];
    IoTally t;
    int nN, i, bPersist;
    if (zKind && strcmp(zKind, pKind->zName) != 0) continue;
    /* the workload must reach every kind of call */
    ck_assert_msg(pRef->aStart[pRef->nStep][pKind->eOp] > 0,
                  "the workload makes no %s call", faultOpName(pKind->eOp));
    memset(&t, 0, sizeof(t));
    for (bPersist = 0; bPersist <= 1; bPersist++) {
      if (zN) {
        aN[0] = atol(zN);
        nN = 1;
      } else if (bFull) {
        nN = ioPick(pRef, pKind->eOp, 1, 0, 0, aN, IO_MAX_N);
      } else if (eJournal == FAULT_JOURNAL_WAL) {
        /* short version, WAL: transient faults, every other step */
        if (bPersist) break;
        nN = ioPick(pRef, pKind->eOp, 0, 1, 1, aN, IO_MAX_N);
      } else {
        /* short version, rollback journal: transient faults at every
        ** step, persistent ones at every other step */
        nN = ioPick(pRef, pKind->eOp, 0, bPersist, 0, aN, IO_MAX_N);
      }
      for (i = 0; i < nN; i += bFull || zN ? 1 : nThin) {
        ioRun(pKind, pRef, eJournal, aN[i], bPersist, &t);
      }
      if (!bFull && !zN && !bPersist && eJournal == FAULT_JOURNAL_DELETE) {
        /* the pins (transient, rollback journal), unless tried already */
        int iPin, j;
        for (iPin = 0; iPin < (int)(sizeof(ioPins) / sizeof(ioPins[0]));
             iPin++) {
          long iPinN;
          if (strcmp(ioPins[iPin].zKind, pKind->zName) != 0) continue;
          iPinN =
              pRef->aStart[ioPins[iPin].iStep][pKind->eOp] + ioPins[iPin].iCall;
          if (iPinN >= pRef->aStart[ioPins[iPin].iStep + 1][pKind->eOp]) {
            continue; /* the step makes fewer calls in this mode */
          }
          for (j = 0; j < nN && aN[j] != iPinN; j += nThin) {
          }
          if (j >= nN) ioRun(pKind, pRef, eJournal, iPinN, bPersist, &t);
        }
      }
    }
    fprintf(stderr,
            "%-20s %-6s %4ld calls, %4d fault points tried, %3d ignored, "
            "%3d notes, %d failures (%d crashes)\n",
            pKind->zName, zJournal, pRef->aStart[pRef->nStep][pKind->eOp],
            t.nRun, t.nIgnored, t.nNote, t.nFail, t.nCrash);
    nRun += t.nRun;
    nFail += t.nFail;
  }
  fprintf(stderr,
          "check_ioerr %s%s (SQLite %s): %d fault points tried, %d "
          "failures (%ld s)\n",
          zJournal, bFull ? " (full)" : "", sqlite3_libversion(), nRun, nFail,
          (long)(time(NULL) - t0));
  ck_assert_msg(nFail == 0, "%s: %d of %d fault points failed, see stderr",
                zJournal, nFail, nRun);
}

/* ---------------------------------------------------------------- tests */

/* Every kind with journal_mode=DELETE. */
START_TEST(test_ioerr_delete) { ioLoop(FAULT_JOURNAL_DELETE); }
END_TEST

/* Every kind with journal_mode=WAL. */
START_TEST(test_ioerr_wal) { ioLoop(FAULT_JOURNAL_WAL); }
END_TEST

/*
** A full disk while a segment large enough to be written in several pieces
** is written, at each write call in turn (and every later one): vectors,
** then the index (quantized codes, graph), then the file's end. The
** statement fails with SQLITE_FULL and a message that says the disk is
** full and names the segment file, wherever the write was (the index build
** once replaced it with "building the index of e failed (error)"); the
** table is unchanged and integrity-check passes.
*/
START_TEST(test_ioerr_full_index) {
  enum { N_ROW = 4000, N_DIM = 128 };
  float *aVec = malloc(sizeof(float) * N_DIM);
  long N;
  int nIndex = 0; /* failures after the vectors were written */
  ck_assert_ptr_nonnull(aVec);
  for (N = 0;; N++) {
    FaultDb f;
    sqlite3_stmt *pStmt = NULL;
    int rc, i, j, nFired;
    char zMsg[1024];
    ck_assert_int_eq(
        faultDbOpen(&f, NULL, FAULT_JOURNAL_DELETE, FAULT_ACCESS_MMAP),
        SQLITE_OK);
    ck_assert_int_eq(faultExec(&f, "CREATE VIRTUAL TABLE big USING colvec("
                                   "e float[128], delta_rows=100)"),
                     SQLITE_OK);
    ck_assert_int_eq(faultExec(&f, "BEGIN"), SQLITE_OK);
    ck_assert_int_eq(
        sqlite3_prepare_v2(f.db, "INSERT INTO big(rowid, e) VALUES (?, ?)", -1,
                           &pStmt, NULL),
        SQLITE_OK);
    for (i = 0; i < N_ROW; i++) {
      for (j = 0; j < N_DIM; j++)
        aVec[j] = (float)((i * 31 + j * 17) % 101) * 0.25f;
      sqlite3_bind_int(pStmt, 1, i + 1);
      sqlite3_bind_blob(pStmt, 2, aVec, (int)sizeof(float) * N_DIM,
                        SQLITE_TRANSIENT);
      ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_DONE);
      sqlite3_reset(pStmt);
    }
    sqlite3_finalize(pStmt);
    faultInjectStart(COLVEC_OSOP_WRITE, N, ENOSPC, 1, 100);
    rc = sqlite3_exec(f.db, "COMMIT", NULL, NULL, NULL);
    snprintf(zMsg, sizeof(zMsg), "%s", sqlite3_errmsg(f.db));
    nFired = faultInjectStop();
    if (nFired == 0) {
      ck_assert_int_eq(rc, SQLITE_OK);
      faultDbClose(&f);
      faultDbRemove(&f);
      break;
    }
    ck_assert_msg(rc == SQLITE_FULL, "N=%ld: rc=%d %s", N, rc, zMsg);
    ck_assert_msg(strncmp(zMsg, "colvec: ", 8) == 0 &&
                      strstr(zMsg, "the disk is full") &&
                      strstr(zMsg, "000001.seg"),
                  "N=%ld: %s", N, zMsg);
    if (N >= 2) nIndex++;
    sqlite3_exec(f.db, "ROLLBACK", NULL, NULL, NULL);
    ck_assert_int_eq(faultExec(&f, "SELECT 1 FROM big"), SQLITE_OK);
    ck_assert_int_eq(faultExec(&f, "INSERT INTO big(big) "
                                   "VALUES ('integrity-check')"),
                     SQLITE_OK);
    faultDbClose(&f);
    faultDbRemove(&f);
  }
  ck_assert_int_ge(N, 3); /* vectors in two pieces, then the index */
  ck_assert_int_ge(nIndex, 1);
  free(aVec);
}
END_TEST

/* Adds test tf to suite s as its own test case zName (CK_RUN_CASE). */
static void ioAddCase(Suite *s, const char *zName, const TTest *tf) {
  TCase *tc = tcase_create(zName);
  tcase_set_timeout(tc, 3600); /* the full version; ASan on a busy machine */
  tcase_add_test(tc, tf);
  suite_add_tcase(s, tc);
}

/* Runs the suite (fork mode: a crash of the harness is one failure). */
int main(void) {
  Suite *s = suite_create("ioerr");
  SRunner *sr;
  int nFailed;
  ioAddCase(s, "delete", test_ioerr_delete);
  ioAddCase(s, "wal", test_ioerr_wal);
  ioAddCase(s, "full", test_ioerr_full_index);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  nFailed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nFailed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
