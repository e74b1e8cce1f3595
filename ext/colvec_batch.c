/*
** colvec_batch.c — rows held in memory, column by column: the pending rows
** of a bulk insert (written to a segment at commit) and the rows a
** compaction is about to write. See colvecInt.h for the interface.
*/
#include "colvecInt.h"

#include <string.h>

/* Frees everything the batch holds. */
void colvecBatchFree(ColvecBatch *p) {
  if (p->aCol) {
    int i;
    for (i = 0; i < p->pConfig->nCol; i++) {
      ColvecBatchCol *pCol = &p->aCol[i];
      sqlite3_free(pCol->aNull);
      sqlite3_free(pCol->aInt);
      sqlite3_free(pCol->aReal);
      sqlite3_free(pCol->aOff);
      sqlite3_free(pCol->aByte);
      sqlite3_free(pCol->aVec);
    }
  }
  sqlite3_free(p->aCol);
  sqlite3_free(p->aRowid);
  sqlite3_free(p->aHash);
  colvecBatchInit(p, p->pConfig);
}

/* Initialises an empty batch. */
void colvecBatchInit(ColvecBatch *p, const ColvecConfig *pConfig) {
  memset(p, 0, sizeof(*p));
  p->pConfig = pConfig;
}

/* Hash slot sequence start for rowid iRowid in a table of nHash slots. */
static int64_t batchHashSlot(int64_t iRowid, int64_t nHash) {
  uint64_t h = (uint64_t)iRowid * 0x9E3779B97F4A7C15ull;
  return (int64_t)((h ^ (h >> 29)) & (uint64_t)(nHash - 1));
}

/*
** Inserts row index iRow into the rowid set (which has room). A rowid held
** by an earlier row now maps to iRow: the set answers with the latest.
*/
static void batchHashInsert(ColvecBatch *p, int64_t iRow) {
  int64_t i = batchHashSlot(p->aRowid[iRow], p->nHash);
  while (p->aHash[i] && p->aRowid[p->aHash[i] - 1] != p->aRowid[iRow]) {
    i = (i + 1) & (p->nHash - 1);
  }
  p->aHash[i] = iRow + 1;
}

/*
** Rebuilds the rowid set with room for at least nWant rows at half load.
** Returns SQLITE_OK or SQLITE_NOMEM (the old set is kept).
*/
static int batchHashRebuild(ColvecBatch *p, int64_t nWant) {
  int64_t nHash = 64, i;
  int64_t *aHash;
  while (nHash < nWant * 2)
    nHash *= 2;
  aHash = sqlite3_malloc64(sizeof(int64_t) * (sqlite3_uint64)nHash);
  if (aHash == NULL) return SQLITE_NOMEM;
  memset(aHash, 0, sizeof(int64_t) * (size_t)nHash);
  sqlite3_free(p->aHash);
  p->aHash = aHash;
  p->nHash = nHash;
  for (i = 0; i < p->nRow; i++)
    batchHashInsert(p, i);
  return SQLITE_OK;
}

/* Returns the index of the latest row with rowid iRowid, or -1. */
int64_t colvecBatchFind(const ColvecBatch *p, int64_t iRowid) {
  int64_t i;
  if (p->nHash == 0) return -1;
  for (i = batchHashSlot(iRowid, p->nHash); p->aHash[i];
       i = (i + 1) & (p->nHash - 1)) {
    if (p->aRowid[p->aHash[i] - 1] == iRowid) return p->aHash[i] - 1;
  }
  return -1;
}

/* Largest rowid of rows iFirst.., or INT64_MIN when there are none. */
int64_t colvecBatchMaxRowid(const ColvecBatch *p, int64_t iFirst) {
  int64_t iMax = INT64_MIN, i;
  for (i = iFirst; i < p->nRow; i++) {
    if (p->aRowid[i] > iMax) iMax = p->aRowid[i];
  }
  return iMax;
}

/* Resizes *pp to n elements of size sz. Returns 0 or 1 on OOM. */
static int batchGrow(void **pp, int64_t n, size_t sz) {
  void *pNew = sqlite3_realloc64(*pp, (sqlite3_uint64)n * sz);
  if (pNew == NULL) return 1;
  *pp = pNew;
  return 0;
}

/*
** Makes room for one more row in every array. Returns SQLITE_OK or
** SQLITE_NOMEM (arrays that grew stay grown; nothing is lost).
*/
static int batchReserve(ColvecBatch *p) {
  const ColvecConfig *pC = p->pConfig;
  int64_t nNew;
  int i, bErr = 0;
  if (p->aCol == NULL) {
    p->aCol =
        sqlite3_malloc64(sizeof(ColvecBatchCol) * (sqlite3_uint64)pC->nCol);
    if (p->aCol == NULL) return SQLITE_NOMEM;
    memset(p->aCol, 0, sizeof(ColvecBatchCol) * (size_t)pC->nCol);
  }
  if (p->nRow < p->nAlloc) return SQLITE_OK;
  nNew = p->nAlloc ? p->nAlloc * 2 : 256;
  bErr |= batchGrow((void **)&p->aRowid, nNew, sizeof(int64_t));
  for (i = 0; i < pC->nCol && !bErr; i++) {
    const ColvecColumn *pDef = &pC->aCol[i];
    ColvecBatchCol *pCol = &p->aCol[i];
    if (pDef->bVector) {
      bErr |= batchGrow((void **)&pCol->aVec, nNew, (size_t)pDef->nByte);
      continue;
    }
    bErr |= batchGrow((void **)&pCol->aNull, nNew, 1);
    switch (pDef->eAttr) {
    case COLVEC_ATTR_INTEGER:
      bErr |= batchGrow((void **)&pCol->aInt, nNew, sizeof(int64_t));
      break;
    case COLVEC_ATTR_REAL:
      bErr |= batchGrow((void **)&pCol->aReal, nNew, sizeof(double));
      break;
    default:
      bErr |= batchGrow((void **)&pCol->aOff, nNew + 1, sizeof(int64_t));
      if (!bErr && p->nAlloc == 0) pCol->aOff[0] = 0;
      break;
    }
  }
  if (bErr) return SQLITE_NOMEM;
  p->nAlloc = nNew;
  return SQLITE_OK;
}

/* Appends one row; see colvecInt.h. */
int colvecBatchAppend(ColvecBatch *p, int64_t iRowid, const ColvecCell *aCell) {
  const ColvecConfig *pC = p->pConfig;
  int64_t iRow = p->nRow;
  int i, rc;
  rc = batchReserve(p);
  if (rc == SQLITE_OK && (iRow + 1) * 2 > p->nHash) {
    rc = batchHashRebuild(p, (iRow + 1) * 2);
  }
  /* variable-length bytes first: the only step that can fail midway */
  for (i = 0; rc == SQLITE_OK && i < pC->nCol; i++) {
    const ColvecColumn *pDef = &pC->aCol[i];
    ColvecBatchCol *pCol = &p->aCol[i];
    if (!pDef->bVector &&
        (pDef->eAttr == COLVEC_ATTR_TEXT || pDef->eAttr == COLVEC_ATTR_BLOB)) {
      sqlite3_value *pVal = aCell[i].pVal;
      int n = 0;
      const void *z = NULL;
      if (pVal && sqlite3_value_type(pVal) != SQLITE_NULL) {
        z = pDef->eAttr == COLVEC_ATTR_TEXT
                ? (const void *)sqlite3_value_text(pVal)
                : sqlite3_value_blob(pVal);
        n = sqlite3_value_bytes(pVal);
        if (z == NULL && n > 0) {
          rc = SQLITE_NOMEM; /* the text conversion ran out of memory */
          break;
        }
      }
      if (pCol->aOff[iRow] + n > pCol->nByteAlloc) {
        int64_t nNew = pCol->nByteAlloc ? pCol->nByteAlloc * 2 : 4096;
        while (nNew < pCol->aOff[iRow] + n)
          nNew *= 2;
        if (batchGrow((void **)&pCol->aByte, nNew, 1)) {
          rc = SQLITE_NOMEM;
          break;
        }
        pCol->nByteAlloc = nNew;
      }
      if (n > 0) memcpy(&pCol->aByte[pCol->aOff[iRow]], z, (size_t)n);
      pCol->aOff[iRow + 1] = pCol->aOff[iRow] + n;
      p->nByte += n;
    }
  }
  if (rc != SQLITE_OK) return rc;
  for (i = 0; i < pC->nCol; i++) {
    const ColvecColumn *pDef = &pC->aCol[i];
    ColvecBatchCol *pCol = &p->aCol[i];
    sqlite3_value *pVal = aCell[i].pVal;
    if (pDef->bVector) {
      memcpy(&pCol->aVec[iRow * pDef->nByte], aCell[i].pBlob,
             (size_t)pDef->nByte);
      p->nByte += pDef->nByte;
      continue;
    }
    pCol->aNull[iRow] = pVal == NULL || sqlite3_value_type(pVal) == SQLITE_NULL;
    /* checked numbers come converted (eNum); delta rows are typed already */
    if (pDef->eAttr == COLVEC_ATTR_INTEGER) {
      pCol->aInt[iRow] = pCol->aNull[iRow] ? 0
                         : aCell[i].eNum == COLVEC_NUM_INTEGER
                             ? aCell[i].iNum
                             : sqlite3_value_int64(pVal);
    } else if (pDef->eAttr == COLVEC_ATTR_REAL) {
      pCol->aReal[iRow] = pCol->aNull[iRow] ? 0.0
                          : aCell[i].eNum == COLVEC_NUM_REAL
                              ? aCell[i].rNum
                              : sqlite3_value_double(pVal);
    }
    p->nByte += 9;
  }
  p->aRowid[iRow] = iRowid;
  p->nRow = iRow + 1;
  batchHashInsert(p, iRow);
  return SQLITE_OK;
}

/*
** Drops rows nRow and later, and rebuilds the rowid set. The byte count
** shrinks in proportion (it is an estimate for the flush policy).
*/
void colvecBatchTruncate(ColvecBatch *p, int64_t nRow) {
  if (nRow >= p->nRow) return;
  p->nByte = nRow == 0 ? 0 : (int64_t)((double)p->nByte * nRow / p->nRow);
  p->nRow = nRow;
  if (p->aHash) {
    memset(p->aHash, 0, sizeof(int64_t) * (size_t)p->nHash);
    for (nRow = 0; nRow < p->nRow; nRow++)
      batchHashInsert(p, nRow);
  }
}
