/*
** check_limits.c — the limits that test/sql/limits1.test cannot reach through
** SQL in reasonable time or memory, tested on the SQLite-free functions that
** enforce them:
**   - rows per segment file: colvecSegfileWriterFinish() writes a segment of
**     2^59 - 1 rows (INT64_MAX / 16, so that every 64-bit offset within it
**     fits) and colvecSegfileOpen(&colvecStoreFile, ) reads that row count
** back; one more is
**     refused with COLVEC_RANGE and leaves no file;
**   - HNSW build parameters: m 2..128, ef_construction 1..4096, threads
**     1..64 build a graph at both ends; one past either end is COLVEC_RANGE;
**   - quantizer dimensions: 1..COLVEC_MAX_DIM (65536) train; 0 and 65537
**     are COLVEC_RANGE.
*/
#include "colvec_core.h"
#include "colvec_hnsw.h"
#include "colvec_os.h"
#include "colvec_quant.h"
#include "colvec_segfile.h"
#include "../lib/testdir.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest row count a segment file may declare (INT64_MAX / 16). */
#define T_SEG_MAX_ROWS ((uint64_t)INT64_MAX / 16)

/* The private folder of this run, from testTempDir(). */
static char tDir[512];

/* Returns tDir/zName in a static buffer (one path at a time). */
static const char *tPath(const char *zName) {
  static char zPath[640];
  snprintf(zPath, sizeof(zPath), "%s/%s", tDir, zName);
  return zPath;
}

/* Returns 1 when file zName exists in tDir. */
static int tExists(const char *zName) { return colvecOsExists(tPath(zName)); }

/* ------------------------------------------------------- rows per segment */

/* A segment declaring the largest row count is written and read back. */
START_TEST(test_seg_rows_at_limit) {
  ColvecSegWriter *w = NULL;
  ColvecSeg *pSeg = NULL;
  ColvecErr err;
  memset(&err, 0, sizeof(err));
  ck_assert_int_eq(colvecSegfileWriterOpen(&colvecStoreFile,
                                           tPath("max.seg.tmp"), 7, &w, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileWriterFinish(w, T_SEG_MAX_ROWS, &err),
                   COLVEC_OK);
  ck_assert(tExists("max.seg"));
  ck_assert_int_eq(colvecSegfileOpen(&colvecStoreFile, tPath("max.seg"),
                                     COLVEC_SEG_FILE, 0, &pSeg, &err),
                   COLVEC_OK);
  ck_assert_uint_eq(colvecSegfileRowCount(pSeg), T_SEG_MAX_ROWS);
  colvecSegfileClose(pSeg);
  colvecOsUnlink(tPath("max.seg"), NULL);
}
END_TEST

/* One row more is refused by the writer, which leaves no file. */
START_TEST(test_seg_rows_past_limit) {
  ColvecSegWriter *w = NULL;
  ColvecErr err;
  memset(&err, 0, sizeof(err));
  ck_assert_int_eq(colvecSegfileWriterOpen(&colvecStoreFile,
                                           tPath("big.seg.tmp"), 7, &w, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileWriterFinish(w, T_SEG_MAX_ROWS + 1, &err),
                   COLVEC_RANGE);
  ck_assert_msg(strstr(err.zMsg, "row count 576460752303423488 too large"),
                "message: %s", err.zMsg);
  ck_assert(!tExists("big.seg"));
  ck_assert(!tExists("big.seg.tmp"));
}
END_TEST

/* ------------------------------------------------------------- HNSW build */

/* Points on a line: the distance of nodes a and b is |a - b|. */
static float tLineDist(void *pCtx, uint32_t a, uint32_t b) {
  (void)pCtx;
  return a > b ? (float)(a - b) : (float)(b - a);
}

/* Builds a 300-node graph with m, ef_construction and threads; returns the
** code (on success the graph must hold every node; on error none is set). */
static int tBuild(int nM, int nEfC, int nThread) {
  ColvecHnswConfig cfg;
  ColvecHnsw *pG = NULL;
  int rc;
  memset(&cfg, 0, sizeof(cfg));
  cfg.nM = nM;
  cfg.nEfC = nEfC;
  cfg.nThread = nThread;
  rc = colvecHnswBuild(&cfg, 300, NULL, NULL, tLineDist, NULL, &pG);
  if (rc == COLVEC_OK) {
    ck_assert_ptr_nonnull(pG);
    ck_assert_uint_eq(colvecHnswNodeCount(pG), 300);
    colvecHnswFree(pG);
  } else {
    ck_assert_ptr_null(pG);
  }
  return rc;
}

/* Every build parameter at both ends of its range, and one past. */
START_TEST(test_hnsw_params) {
  ck_assert_int_eq(tBuild(2, 1, 1), COLVEC_OK);
  ck_assert_int_eq(
      tBuild(COLVEC_HNSW_MAX_M, COLVEC_HNSW_MAX_EFC, COLVEC_HNSW_MAX_THREAD),
      COLVEC_OK);
  ck_assert_int_eq(COLVEC_HNSW_MAX_M, 128);
  ck_assert_int_eq(COLVEC_HNSW_MAX_EFC, 4096);
  ck_assert_int_eq(COLVEC_HNSW_MAX_THREAD, 64);
  ck_assert_int_eq(tBuild(1, 10, 1), COLVEC_RANGE);
  ck_assert_int_eq(tBuild(COLVEC_HNSW_MAX_M + 1, 10, 1), COLVEC_RANGE);
  ck_assert_int_eq(tBuild(16, -1, 1), COLVEC_RANGE);
  ck_assert_int_eq(tBuild(16, COLVEC_HNSW_MAX_EFC + 1, 1), COLVEC_RANGE);
  ck_assert_int_eq(tBuild(16, 10, COLVEC_HNSW_MAX_THREAD + 1), COLVEC_RANGE);
}
END_TEST

/* ------------------------------------------------------- quantizer input */

/* Trains an int8 quantizer on two vectors of nDim; returns the code. */
static int tTrain(int nDim) {
  ColvecQuant *pQ = NULL;
  float *a = calloc(2 * (size_t)(nDim > 0 ? nDim : 1), sizeof(float));
  int rc, i;
  ck_assert_ptr_nonnull(a);
  for (i = 0; i < nDim; i++) {
    a[i] = (float)(i % 7);
    a[nDim + i] = -(float)(i % 5);
  }
  rc = colvecQuantTrain(COLVEC_QUANT_INT8, COLVEC_METRIC_L2, nDim, a, 2,
                        nDim > 0 ? nDim : 1, &pQ);
  if (rc == COLVEC_OK) {
    ck_assert_ptr_nonnull(pQ);
    colvecQuantFree(pQ);
  }
  free(a);
  return rc;
}

/* Dimensions 1 and 65536 train; 0 and 65537 are refused. */
START_TEST(test_quant_dims) {
  ck_assert_int_eq(COLVEC_MAX_DIM, 65536);
  ck_assert_int_eq(tTrain(1), COLVEC_OK);
  ck_assert_int_eq(tTrain(COLVEC_MAX_DIM), COLVEC_OK);
  ck_assert_int_eq(tTrain(0), COLVEC_RANGE);
  ck_assert_int_eq(tTrain(COLVEC_MAX_DIM + 1), COLVEC_RANGE);
}
END_TEST

/* ---------------------------------------------------------------- suite */

/* Builds the suite. */
static Suite *limitsSuite(void) {
  Suite *s = suite_create("limits");
  TCase *tc = tcase_create("limits");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_seg_rows_at_limit);
  tcase_add_test(tc, test_seg_rows_past_limit);
  tcase_add_test(tc, test_hnsw_params);
  tcase_add_test(tc, test_quant_dims);
  suite_add_tcase(s, tc);
  return s;
}

/* Creates the private folder, runs the suite, removes the folder. */
int main(void) {
  SRunner *sr;
  int nFail;
  if (testTempDir(tDir, sizeof(tDir)) != 0) {
    fprintf(stderr, "cannot create a temporary folder\n");
    return 1;
  }
  sr = srunner_create(limitsSuite());
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  nFail = srunner_ntests_failed(sr);
  srunner_free(sr);
  colvecOsRmdir(tDir, NULL);
  return nFail ? 1 : 0;
}
