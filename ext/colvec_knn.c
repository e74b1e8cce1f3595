/*
** colvec_knn.c — exact K-nearest-neighbour search over the delta.
**
** Reads the searched vector column of every delta row that passes the
** plan's filters (the filters run inside SQLite, on the shadow table,
** except IN lists too long to bind, which are searched here) and keeps
** the k best in a bounded heap. This is the exact baseline every
** index is measured against, and what answers for rows not yet compacted.
*/
#include "colvecInt.h"

#include <string.h>

/* Searches the delta exactly; see colvecInt.h. */
int colvecKnnExact(ColvecStorage *pStorage, const ColvecKnnQuery *q,
                   const ColvecPlan *pPlan, sqlite3_value **argv,
                   ColvecTopk *pTopk, int64_t *pnPass, char **pzErr) {
  const ColvecColumn *pCol = &pStorage->pConfig->aCol[q->iCol];
  const ColvecKernels *pK = colvecKernelsBest();
  sqlite3_stmt *pStmt = NULL;
  int mUsed = q->iCol < COLVEC_PLAN_USED_HIGH ? (1 << q->iCol)
                                              : (1 << COLVEC_PLAN_USED_HIGH);
  ColvecScanIn aIn[COLVEC_PLAN_MAX_ARG]; /* IN lists left out of the SQL */
  int nIn = 0, i, rc = SQLITE_OK;
  /* Blobs handed out by SQLite need not be aligned for float loads: a
  ** misaligned one is copied here first (one buffer per query). */
  void *pAligned = NULL;
  *pnPass = 0;
  for (i = 0; rc == SQLITE_OK && i < pPlan->nArg; i++) {
    if (pPlan->aArg[i].eOp != COLVEC_OP_IN ||
        colvecStorageInBound(pStorage, pPlan, argv, i)) {
      continue;
    }
    rc = colvecScanInOpen(pStorage->db, pStorage->pConfig, pPlan->aArg[i].iCol,
                          argv[i], &aIn[nIn++]);
    if (aIn[nIn - 1].iCol != COLVEC_PLAN_ROWID) {
      mUsed |= aIn[nIn - 1].iCol < COLVEC_PLAN_USED_HIGH
                   ? (1 << aIn[nIn - 1].iCol)
                   : (1 << COLVEC_PLAN_USED_HIGH);
    }
  }
  if (rc == SQLITE_OK) {
    rc = colvecStorageSelect(pStorage, mUsed, pPlan, argv, 0, &pStmt, pzErr);
  }
  if (rc == SQLITE_OK) {
    pAligned = sqlite3_malloc64((sqlite3_uint64)pCol->nByte + 8);
    if (pAligned == NULL) rc = SQLITE_NOMEM;
  }
  while (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW) {
    sqlite3_int64 iRowid = sqlite3_column_int64(pStmt, 0);
    const void *pVec;
    int nVec;
    int bPass = 1;
    for (i = 0; bPass == 1 && i < nIn; i++) {
      const ColvecScanIn *pIn = &aIn[i];
      int iField = pIn->iCol == COLVEC_PLAN_ROWID ? 0 : 1 + pIn->iCol;
      bPass = colvecScanInTest(pIn, sqlite3_column_value(pStmt, iField));
    }
    if (bPass < 0) {
      rc = SQLITE_NOMEM;
      break;
    }
    if (!bPass) continue; /* not in a list */
    pVec = sqlite3_column_blob(pStmt, 1 + q->iCol);
    nVec = sqlite3_column_bytes(pStmt, 1 + q->iCol);
    if (pVec == NULL || nVec != pCol->nByte) {
      *pzErr = sqlite3_mprintf(
          "colvec: table %s row %lld: %s holds %d bytes, expected %d "
          "(run integrity-check)",
          pStorage->pConfig->zName, iRowid, pCol->zName, nVec, pCol->nByte);
      rc = COLVEC_CORRUPT_VTAB;
      break;
    }
    if (((uintptr_t)pVec & 3) != 0) {
      memcpy(pAligned, pVec, (size_t)nVec);
      pVec = pAligned;
    }
    (*pnPass)++;
    colvecTopkPush(pTopk,
                   colvecDistance(pK, pCol->eMetric, pCol->eElem, q->pVec, pVec,
                                  pCol->nDim),
                   iRowid, -1);
  }
  if (pStmt) {
    int rc2 = colvecStorageSelectDone(pStorage, pStmt);
    if (rc == SQLITE_OK && rc2 != SQLITE_OK) {
      rc = rc2;
      *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(pStorage->db));
    }
  }
  sqlite3_free(pAligned);
  for (i = 0; i < nIn; i++)
    colvecScanInClose(&aIn[i]);
  return rc;
}
