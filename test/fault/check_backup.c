/*
** check_backup.c — colvec_backup() when a file-system call fails.
**
** The module is linked statically (test/lib/faultlib.c registers it and
** counts, and fails, colvec's os-layer calls through colvecOsSetHook). A
** database built by faultlib's whole workload (several segments, merges,
** tombstones, delta rows; table t and its plain model m) is backed up
** once with the hook counting (the reference run); then every os-layer
** call the backup made fails in turn (EIO; writes also as ENOSPC after a
** short write), in rollback-journal and WAL mode, with access=mmap and
** access=file. Each backup either fails with a "colvec: " message and
** leaves nothing behind (no copy, no -journal or -wal of it, no -colvec
** folder), or succeeds (the failed call was not needed) with a copy whose
** t equals m, passes integrity-check and answers KNN like a brute force.
** The source is never changed (its state hash) and no descriptor leaks.
*/
#include "colvecInt.h"
#include "../lib/faultlib.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Non-zero when anything exists at zBase followed by zSuffix. */
static int bkExists(const char *zBase, const char *zSuffix) {
  char *z = sqlite3_mprintf("%s%s", zBase, zSuffix);
  int bExists;
  ck_assert_ptr_nonnull(z);
  bExists = colvecOsKind(z) != COLVEC_OS_NONE;
  sqlite3_free(z);
  return bExists;
}

/* Runs SELECT colvec_backup(zDest) on p; returns its result code and
** copies the message into zErr (n bytes). */
static int bkRun(FaultDb *p, const char *zDest, char *zErr, int n) {
  sqlite3_stmt *pStmt = NULL;
  int rc =
      sqlite3_prepare_v2(p->db, "SELECT colvec_backup(?)", -1, &pStmt, NULL);
  zErr[0] = 0;
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(pStmt, 1, zDest, -1, SQLITE_STATIC);
    rc = sqlite3_step(pStmt);
    if (rc == SQLITE_ROW) rc = SQLITE_OK;
  }
  if (rc != SQLITE_OK) snprintf(zErr, (size_t)n, "%s", sqlite3_errmsg(p->db));
  sqlite3_finalize(pStmt);
  return rc;
}

/* Checks copy zDest as a database of its own: t equals m, integrity-check,
** KNN; then deletes it (file and folder). */
static void bkCheckCopy(const char *zDest, int eJournal, int eAccess,
                        const char *zWhat) {
  FaultDb c;
  char zCmd[800];
  memset(&c, 0, sizeof(c));
  c.eJournal = eJournal;
  c.eAccess = eAccess;
  snprintf(c.zDb, sizeof(c.zDb), "%s", zDest);
  ck_assert_msg(faultDbReopen(&c) == SQLITE_OK, "%s: copy: %s", zWhat, c.zErr);
  ck_assert_msg(faultCompare(&c) == SQLITE_OK, "%s: copy: %s", zWhat, c.zErr);
  ck_assert_msg(faultIntegrity(&c) == SQLITE_OK, "%s: copy: %s", zWhat, c.zErr);
  ck_assert_msg(faultKnnCheck(&c) == SQLITE_OK, "%s: copy: %s", zWhat, c.zErr);
  ck_assert_int_eq(faultDbClose(&c), SQLITE_OK);
  snprintf(zCmd, sizeof(zCmd), "rm -rf '%s' '%s-colvec' '%s-wal' '%s-shm'",
           zDest, zDest, zDest, zDest);
  ck_assert_int_eq(system(zCmd), 0);
}

/* Every failing call of one backup, for one journal and access mode. */
static void bkFaults(int eJournal, int eAccess) {
  FaultDb x;
  char zDest[400], zErr[1024], zWhat[200];
  long aRef[COLVEC_OSOP_COUNT];
  int i, eOp, rcHash = SQLITE_OK, nFd0;
  uint64_t hash0;
  long nFail = 0, nOk = 0;
  faultLibInit();
  ck_assert_msg(faultDbOpen(&x, NULL, eJournal, eAccess) == SQLITE_OK, "%s",
                x.zErr);
  for (i = 0; i < faultStepCount(); i++) {
    ck_assert_msg(faultStepRun(&x, i) == SQLITE_OK, "step %s: %s",
                  faultStepName(i), x.zErr);
  }
  hash0 = faultStateHash(&x, &rcHash);
  ck_assert_int_eq(rcHash, SQLITE_OK);
  snprintf(zDest, sizeof(zDest), "%s/copy.db", x.zDir);

  /* reference run: the calls a backup makes */
  faultInjectStart(0, -1, 0, 0, -1);
  ck_assert_msg(bkRun(&x, zDest, zErr, sizeof(zErr)) == SQLITE_OK, "%s", zErr);
  faultInjectStop();
  for (eOp = 1; eOp < COLVEC_OSOP_COUNT; eOp++)
    aRef[eOp] = faultInjectCount(eOp);
  ck_assert_msg(aRef[COLVEC_OSOP_WRITE] > 0 && aRef[COLVEC_OSOP_RENAME] > 0,
                "the backup wrote no segment");
  bkCheckCopy(zDest, eJournal, eAccess, "reference");
  nFd0 = faultFdCount();

  for (eOp = 1; eOp < COLVEC_OSOP_COUNT; eOp++) {
    int iVariant;
    for (iVariant = 0; iVariant < (eOp == COLVEC_OSOP_WRITE ? 2 : 1);
         iVariant++) {
      long iNth;
      for (iNth = 0; iNth < aRef[eOp]; iNth++) {
        int rc, nFired;
        snprintf(zWhat, sizeof(zWhat), "%s #%ld%s (%s, %s)", faultOpName(eOp),
                 iNth, iVariant ? " ENOSPC short" : "",
                 eJournal == FAULT_JOURNAL_WAL ? "wal" : "delete",
                 eAccess == FAULT_ACCESS_FILE ? "access=file" : "mmap");
        faultInjectStart(eOp, iNth, iVariant ? ENOSPC : EIO, 0,
                         iVariant ? 100 : -1);
        rc = bkRun(&x, zDest, zErr, sizeof(zErr));
        nFired = faultInjectStop();
        if (rc != SQLITE_OK) {
          nFail++;
          ck_assert_msg(nFired > 0, "%s: failed with no fault: %s", zWhat,
                        zErr);
          ck_assert_msg(strncmp(zErr, "colvec: ", 8) == 0, "%s: message %s",
                        zWhat, zErr);
          ck_assert_msg(
              !bkExists(zDest, "") && !bkExists(zDest, "-journal") &&
                  !bkExists(zDest, "-wal") && !bkExists(zDest, "-colvec"),
              "%s: a failed backup left files behind (%s)", zWhat, zErr);
        } else {
          nOk++;
          bkCheckCopy(zDest, eJournal, eAccess, zWhat);
        }
        ck_assert_msg(faultStateHash(&x, &rcHash) == hash0 &&
                          rcHash == SQLITE_OK,
                      "%s: the source changed", zWhat);
        if (nFd0 >= 0) {
          ck_assert_msg(faultFdCount() == nFd0, "%s: %d descriptors, was %d",
                        zWhat, faultFdCount(), nFd0);
        }
      }
    }
  }
  printf("backup faults (%s, %s): %ld calls failed in turn: %ld backups "
         "failed cleanly, %ld succeeded with a correct copy\n",
         eJournal == FAULT_JOURNAL_WAL ? "wal" : "delete",
         eAccess == FAULT_ACCESS_FILE ? "access=file" : "mmap", nFail + nOk,
         nFail, nOk);
  ck_assert_msg(nFail > 0, "no injected fault made a backup fail");
  faultDbClose(&x);
  faultDbRemove(&x);
}

/* Rollback journal, mapped segments. */
START_TEST(test_delete_mmap) {
  bkFaults(FAULT_JOURNAL_DELETE, FAULT_ACCESS_MMAP);
}
END_TEST

/* WAL, mapped segments. */
START_TEST(test_wal_mmap) { bkFaults(FAULT_JOURNAL_WAL, FAULT_ACCESS_MMAP); }
END_TEST

/* WAL, segments read with pread (reads can fail too). */
START_TEST(test_wal_file) { bkFaults(FAULT_JOURNAL_WAL, FAULT_ACCESS_FILE); }
END_TEST

/* Runs the suite. */
int main(void) {
  Suite *s = suite_create("backup");
  TCase *tc = tcase_create("backup");
  SRunner *sr;
  int nFailed;
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_delete_mmap);
  tcase_add_test(tc, test_wal_mmap);
  tcase_add_test(tc, test_wal_file);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  nFailed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nFailed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
