/*
** colvec_layout.c — what a segment file holds, column by column: the one
** file of colvec that names section kinds for columns. It decides which
** sections a column gets (the index-sections rule), writes a segment's
** data sections from rows in memory or in other segments, writes the index
** parts the index code hands it, resolves every column's sections once when
** a segment is opened into a per-column accessor (ColvecLayoutCol), and
** reads a cell — of a segment or of a batch — into one typed view that the
** SQL adapters return or bind. See colvecInt.h for the interface and
** colvec_segfile.h for the file format itself.
*/
#include "colvecInt.h"

#include <string.h>

/* Rows appended to a section per colvecSegfileWriterAppend call. */
#define LAYOUT_CHUNK 1024

/*
** Returns SQLITE_INTERRUPT (with *pzErr set) when row i of a long loop is
** one of every LAYOUT_CHUNK and the connection was interrupted, else
** SQLITE_OK.
*/
static int layoutTick(ColvecTick *pTick, int64_t i, char **pzErr) {
  if (i % LAYOUT_CHUNK == 0 && colvecTickStop(pTick)) {
    return colvecTickError(pzErr);
  }
  return SQLITE_OK;
}

/* The section kind of each index part, by COLVEC_LAYOUT_* number. */
static const uint32_t aPartKind[COLVEC_LAYOUT_NPART] = {
    COLVEC_SEG_QUANT,  /* COLVEC_LAYOUT_QUANT */
    COLVEC_SEG_CODES,  /* COLVEC_LAYOUT_CODES */
    COLVEC_SEG_GRAPH,  /* COLVEC_LAYOUT_GRAPH */
    COLVEC_SEG_EXACT,  /* COLVEC_LAYOUT_EXACT */
    COLVEC_SEG_RECALL, /* COLVEC_LAYOUT_RECALL */
};

/* Which index parts a column gets; see colvecInt.h. */
int colvecLayoutIndexParts(const ColvecColumn *pCol, int64_t nRow) {
  int mPart = 0;
  if (!pCol->bVector || nRow == 0) return 0;
  if (pCol->eElem == COLVEC_ELEM_F32 && pCol->eQuant != COLVEC_QUANT_NONE) {
    mPart |= (1 << COLVEC_LAYOUT_QUANT) | (1 << COLVEC_LAYOUT_CODES);
  }
  if (nRow >= COLVEC_INDEX_MIN_ROWS && nRow <= COLVEC_INDEX_MAX_ROWS &&
      !pCol->bNoIndex) {
    mPart |= 1 << COLVEC_LAYOUT_GRAPH;
  }
  return mPart;
}

/*************************************************************************
** Writing.
*/

/* Appends the rowid section; see colvecInt.h. */
int colvecLayoutWriteRowids(ColvecSegWriter *pW, const ColvecRowRef *aRow,
                            int64_t nRow) {
  int64_t aBuf[LAYOUT_CHUNK];
  int64_t i;
  int rc = colvecSegfileWriterBegin(pW, COLVEC_SEG_ROWIDS, 0, 8, 0);
  for (i = 0; rc == COLVEC_OK && i < nRow; i += LAYOUT_CHUNK) {
    int64_t j, n = nRow - i < LAYOUT_CHUNK ? nRow - i : LAYOUT_CHUNK;
    for (j = 0; j < n; j++)
      aBuf[j] = aRow[i + j].iRowid;
    rc = colvecSegfileWriterAppend(pW, aBuf, n * 8);
  }
  if (rc == COLVEC_OK) rc = colvecSegfileWriterEnd(pW);
  return rc;
}

/* Reads the cell of row r of its source (see colvecLayoutCell). */
static int layoutRowCell(const ColvecConfig *pC, const ColvecSource *aSrc,
                         const ColvecRowRef *r, int iCol, void *pBuf,
                         ColvecScalar *pV, char **pzErr) {
  return colvecLayoutCell(pC, &aSrc[r->iSrc], iCol, r->iRow, pBuf, pV, pzErr);
}

/* Appends the sections of one attribute column; see colvecInt.h. */
int colvecLayoutWriteAttr(const ColvecConfig *pC, ColvecSegWriter *pW,
                          ColvecTick *pTick, const ColvecSource *aSrc,
                          const ColvecRowRef *aRow, int64_t nRow, int iCol,
                          char **pzErr) {
  const ColvecColumn *pCol = &pC->aCol[iCol];
  int bFixed =
      pCol->eAttr == COLVEC_ATTR_INTEGER || pCol->eAttr == COLVEC_ATTR_REAL;
  int64_t i, nNull = 0;
  int rc = SQLITE_OK;
  int pass;
  ColvecScalar v;
  memset(&v, 0, sizeof(v));
  /* pass 0: NULL bitmap (written only when a NULL exists) */
  for (i = 0; rc == SQLITE_OK && i < nRow; i++) {
    rc = layoutTick(pTick, i, pzErr);
    if (rc == SQLITE_OK)
      rc = layoutRowCell(pC, aSrc, &aRow[i], iCol, NULL, &v, pzErr);
    nNull += v.eType == COLVEC_TYPE_NULL;
  }
  if (rc != SQLITE_OK) return rc;
  if (nNull > 0) {
    uint8_t aBits[LAYOUT_CHUNK / 8];
    rc = colvecSegfileWriterBegin(pW, COLVEC_SEG_NULLBITMAP, (uint32_t)iCol, 0,
                                  0);
    for (i = 0; rc == COLVEC_OK && i < nRow; i += LAYOUT_CHUNK) {
      int64_t j, n = nRow - i < LAYOUT_CHUNK ? nRow - i : LAYOUT_CHUNK;
      memset(aBits, 0, sizeof(aBits));
      for (j = 0; j < n && rc == SQLITE_OK; j++) {
        rc = layoutRowCell(pC, aSrc, &aRow[i + j], iCol, NULL, &v, pzErr);
        if (v.eType == COLVEC_TYPE_NULL) {
          aBits[j >> 3] |= (uint8_t)(1 << (j & 7));
        }
      }
      if (rc == SQLITE_OK)
        rc = colvecSegfileWriterAppend(pW, aBits, (n + 7) / 8);
    }
    if (rc == COLVEC_OK) rc = colvecSegfileWriterEnd(pW);
    if (rc != SQLITE_OK) return rc;
  }
  if (bFixed) {
    int bReal = pCol->eAttr == COLVEC_ATTR_REAL;
    rc = colvecSegfileWriterBegin(pW, COLVEC_SEG_ATTR_FIXED, (uint32_t)iCol, 8,
                                  bReal ? COLVEC_SEGF_REAL : 0);
    for (i = 0; rc == COLVEC_OK && i < nRow; i++) {
      rc = layoutTick(pTick, i, pzErr);
      if (rc == SQLITE_OK)
        rc = layoutRowCell(pC, aSrc, &aRow[i], iCol, NULL, &v, pzErr);
      if (rc == SQLITE_OK) {
        if (v.eType == COLVEC_TYPE_NULL) {
          v.i = 0;
          v.r = 0.0;
        }
        rc = colvecSegfileWriterAppend(
            pW, bReal ? (const void *)&v.r : (const void *)&v.i, 8);
      }
    }
    return rc == COLVEC_OK ? colvecSegfileWriterEnd(pW) : rc;
  }
  /* pass 1: offsets, pass 2: bytes */
  for (pass = 1; pass <= 2 && rc == SQLITE_OK; pass++) {
    int64_t iOff = 0;
    rc = colvecSegfileWriterBegin(
        pW, pass == 1 ? COLVEC_SEG_ATTR_VAROFFSETS : COLVEC_SEG_ATTR_VARBYTES,
        (uint32_t)iCol, pass == 1 ? 8 : 0, 0);
    if (pass == 1 && rc == COLVEC_OK)
      rc = colvecSegfileWriterAppend(pW, &iOff, 8);
    for (i = 0; rc == COLVEC_OK && i < nRow; i++) {
      rc = layoutTick(pTick, i, pzErr);
      if (rc == SQLITE_OK)
        rc = layoutRowCell(pC, aSrc, &aRow[i], iCol, NULL, &v, pzErr);
      if (rc != SQLITE_OK) break;
      if (v.eType == COLVEC_TYPE_NULL) v.n = 0;
      if (pass == 1) {
        iOff += v.n;
        rc = colvecSegfileWriterAppend(pW, &iOff, 8);
      } else if (v.n > 0) {
        rc = colvecSegfileWriterAppend(pW, v.z, v.n);
      }
    }
    if (rc == COLVEC_OK) rc = colvecSegfileWriterEnd(pW);
  }
  return rc;
}

/* Appends the vectors of one vector column; see colvecInt.h. */
int colvecLayoutWriteVectors(const ColvecConfig *pC, ColvecSegWriter *pW,
                             ColvecTick *pTick, const ColvecSource *aSrc,
                             const ColvecRowRef *aRow, int64_t nRow, int iCol,
                             void *pBuf, uint8_t *aAll, char **pzErr) {
  const ColvecColumn *pCol = &pC->aCol[iCol];
  int64_t i;
  int rc = colvecSegfileWriterBegin(pW, COLVEC_SEG_VECTORS, (uint32_t)iCol,
                                    (uint32_t)pCol->nByte, 0);
  for (i = 0; rc == COLVEC_OK && i < nRow; i++) {
    ColvecScalar v;
    rc = layoutTick(pTick, i, pzErr);
    if (rc == SQLITE_OK)
      rc = layoutRowCell(pC, aSrc, &aRow[i], iCol, pBuf, &v, pzErr);
    if (rc != SQLITE_OK) break;
    if (aAll) memcpy(aAll + i * pCol->nByte, v.z, (size_t)pCol->nByte);
    rc = colvecSegfileWriterAppend(pW, v.z, pCol->nByte);
  }
  if (rc == COLVEC_OK) rc = colvecSegfileWriterEnd(pW);
  return rc;
}

/* Appends one index part of a column; see colvecInt.h. */
int colvecLayoutWritePart(ColvecSegWriter *pW, int iCol, int ePart, int nStride,
                          const void *a, int64_t n) {
  /* the element sizes version 1 writes: codes their stride, the graph and
  ** the exact rows 4 */
  uint32_t nElem =
      ePart == COLVEC_LAYOUT_CODES ? (uint32_t)nStride
      : ePart == COLVEC_LAYOUT_GRAPH || ePart == COLVEC_LAYOUT_EXACT ? 4
                                                                     : 0;
  int rc =
      colvecSegfileWriterBegin(pW, aPartKind[ePart], (uint32_t)iCol, nElem, 0);
  if (rc == COLVEC_OK && n > 0) rc = colvecSegfileWriterAppend(pW, a, n);
  if (rc == COLVEC_OK) rc = colvecSegfileWriterEnd(pW);
  return rc;
}

/*************************************************************************
** Opening: every column's sections resolved once.
*/

/*
** Returns the bytes of section pSec of h (NULL: a missing section, which
** returns NULL with *pnByte 0 and *pRc unchanged): a pointer into the
** mapping, or (access=file) a buffer read into *ppOwned (caller frees).
** An error returns NULL with *pRc set: SQLITE_NOMEM when the buffer could
** not be allocated, else what the read's failure means (colvecReadRc:
** SQLITE_NOMEM, SQLITE_IOERR_READ or COLVEC_CORRUPT_VTAB) with the
** reader's message in *pzErr.
*/
static const void *layoutBytes(ColvecSegHandle *h, const ColvecSegSection *pSec,
                               void **ppOwned, int64_t *pnByte, char **pzErr,
                               int *pRc) {
  ColvecErr err;
  const void *a;
  int rc;
  err.zMsg[0] = 0;
  err.iErrno = 0;
  *pnByte = 0;
  if (pSec == NULL) return NULL;
  *pnByte = pSec->nByte;
  a = colvecSegfileData(h->pSeg, pSec);
  if (a) return a;
  *ppOwned = sqlite3_malloc64((sqlite3_uint64)pSec->nByte + 8);
  if (*ppOwned == NULL) {
    *pRc = SQLITE_NOMEM;
    return NULL;
  }
  rc = colvecSegfileRead(h->pSeg, pSec, 0, *ppOwned, pSec->nByte, &err);
  if (rc != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("%s", err.zMsg);
    *pRc = colvecReadRc(rc, err.iErrno);
    return NULL;
  }
  return *ppOwned;
}

/* Resolves a segment's sections; see colvecInt.h. */
int colvecLayoutOpen(const ColvecConfig *pC, ColvecSegHandle *h,
                     const char *zPath, char **pzErr) {
  const ColvecSegSection *pSec =
      colvecSegfileFind(h->pSeg, COLVEC_SEG_ROWIDS, 0);
  int i, k;
  h->aCol =
      sqlite3_malloc64(sizeof(ColvecLayoutCol) * (sqlite3_uint64)pC->nCol);
  if (h->aCol == NULL) return SQLITE_NOMEM;
  memset(h->aCol, 0, sizeof(ColvecLayoutCol) * (size_t)pC->nCol);
  if (pSec == NULL || pSec->nByte != h->nRow * 8) {
    *pzErr = sqlite3_mprintf("colvec: segment %s has no valid rowids", zPath);
    return COLVEC_CORRUPT_VTAB;
  }
  if (h->nRow > 0) {
    void *pOwned = NULL;
    int64_t nByte;
    int rc = SQLITE_OK;
    h->aRowid =
        (const int64_t *)layoutBytes(h, pSec, &pOwned, &nByte, pzErr, &rc);
    h->aRowidOwned = (int64_t *)pOwned;
    if (h->aRowid == NULL) return rc;
  }
  for (i = 0; i < pC->nCol; i++) {
    const ColvecColumn *pCol = &pC->aCol[i];
    ColvecLayoutCol *pL = &h->aCol[i];
    uint32_t iCol = (uint32_t)i;
    if (pCol->bVector) {
      pSec = colvecSegfileFind(h->pSeg, COLVEC_SEG_VECTORS, iCol);
      if (pSec && pSec->nByte == h->nRow * pCol->nByte) {
        pL->pMain = pSec;
        pL->aVec = (const uint8_t *)colvecSegfileData(h->pSeg, pSec);
      }
      for (k = 0; k < COLVEC_LAYOUT_NPART; k++) {
        pL->apPart[k] = colvecSegfileFind(h->pSeg, aPartKind[k], iCol);
      }
    } else {
      int bVar =
          pCol->eAttr == COLVEC_ATTR_TEXT || pCol->eAttr == COLVEC_ATTR_BLOB;
      pL->pMain = colvecSegfileFind(
          h->pSeg, bVar ? COLVEC_SEG_ATTR_VAROFFSETS : COLVEC_SEG_ATTR_FIXED,
          iCol);
      if (bVar)
        pL->pBytes = colvecSegfileFind(h->pSeg, COLVEC_SEG_ATTR_VARBYTES, iCol);
      pL->pNull = colvecSegfileFind(h->pSeg, COLVEC_SEG_NULLBITMAP, iCol);
    }
  }
  return SQLITE_OK;
}

/* Frees what colvecLayoutOpen resolved; see colvecInt.h. */
void colvecLayoutClose(const ColvecConfig *pC, ColvecSegHandle *h) {
  if (h->aCol) {
    int i, k;
    for (i = 0; i < pC->nCol; i++) {
      for (k = 0; k < 3; k++)
        sqlite3_free(h->aCol[i].apOwned[k]);
    }
    sqlite3_free(h->aCol);
    h->aCol = NULL;
  }
  sqlite3_free(h->aRowidOwned);
  h->aRowidOwned = NULL;
}

/*
** Loads the view of attribute column iCol of h (colvecLayoutView when it
** is not loaded yet). Returns SQLITE_OK with *ppView set, or an error with
** *pzErr set (SQLITE_NOMEM may leave it unset).
*/
static int layoutViewLoad(const ColvecConfig *pC, ColvecSegHandle *h, int iCol,
                          const ColvecColumnView **ppView, char **pzErr) {
  ColvecLayoutCol *pL = &h->aCol[iCol];
  const ColvecColumn *pCol;
  ColvecColumnView *pView;
  void **apOwned;
  int64_t nByte = 0, nNull = 0;
  int rc = SQLITE_OK;
  pCol = &pC->aCol[iCol];
  pView = &pL->view;
  apOwned = pL->apOwned;
  /* buffers left by an earlier attempt that failed (a read error) */
  sqlite3_free(apOwned[0]);
  sqlite3_free(apOwned[1]);
  sqlite3_free(apOwned[2]);
  apOwned[0] = apOwned[1] = apOwned[2] = NULL;
  memset(pView, 0, sizeof(*pView));
  pView->nRow = h->nRow;
  pView->aNull = layoutBytes(h, pL->pNull, &apOwned[2], &nNull, pzErr, &rc);
  if (rc != SQLITE_OK) return rc;
  switch (pCol->eAttr) {
  case COLVEC_ATTR_INTEGER:
  case COLVEC_ATTR_REAL:
    pView->eStore = pCol->eAttr == COLVEC_ATTR_INTEGER ? COLVEC_STORE_INT64
                                                       : COLVEC_STORE_DOUBLE;
    pView->aInt = layoutBytes(h, pL->pMain, &apOwned[0], &nByte, pzErr, &rc);
    if (rc != SQLITE_OK) return rc;
    if (pView->aInt == NULL && h->nRow > 0) goto corrupt;
    if (nByte != h->nRow * 8) goto corrupt;
    if (pCol->eAttr == COLVEC_ATTR_REAL) {
      pView->aReal = (const double *)pView->aInt;
      pView->aInt = NULL;
    }
    break;
  default:
    pView->eStore =
        pCol->eAttr == COLVEC_ATTR_TEXT ? COLVEC_STORE_TEXT : COLVEC_STORE_BLOB;
    pView->aOff = layoutBytes(h, pL->pMain, &apOwned[0], &nByte, pzErr, &rc);
    if (rc != SQLITE_OK) return rc;
    if (pView->aOff == NULL) goto corrupt;
    nByte = 0;
    pView->aByte = layoutBytes(h, pL->pBytes, &apOwned[1], &nByte, pzErr, &rc);
    if (rc != SQLITE_OK) return rc;
    pView->nByte = nByte;
    if (pView->aOff[h->nRow] > nByte || pView->aOff[0] != 0) goto corrupt;
    {
      /* every reader indexes aByte with these: check them all once */
      int64_t i;
      for (i = 0; i < h->nRow; i++) {
        if (pView->aOff[i + 1] < pView->aOff[i]) goto corrupt;
      }
    }
    break;
  }
  pL->bView = 1;
  *ppView = pView;
  return SQLITE_OK;
corrupt:
  if (*pzErr == NULL) {
    *pzErr = sqlite3_mprintf(
        "colvec: segment %lld of table %s lacks a valid section for column %s",
        (long long)h->iSegid, pC->zName, pCol->zName);
  }
  return COLVEC_CORRUPT_VTAB;
}

/* The view of attribute column iCol of h, loaded on first use. */
static inline int layoutView(const ColvecConfig *pC, ColvecSegHandle *h,
                             int iCol, const ColvecColumnView **ppView,
                             char **pzErr) {
  ColvecLayoutCol *pL = &h->aCol[iCol];
  if (pL->bView) {
    *ppView = &pL->view;
    return SQLITE_OK;
  }
  return layoutViewLoad(pC, h, iCol, ppView, pzErr);
}

/* Makes the view of attribute column iCol available; see colvecInt.h. */
int colvecLayoutView(const ColvecConfig *pC, ColvecSegHandle *h, int iCol,
                     const ColvecColumnView **ppView, char **pzErr) {
  return layoutView(pC, h, iCol, ppView, pzErr);
}

/* Returns a pointer to one vector; see colvecInt.h. */
const void *colvecLayoutVector(ColvecSegHandle *h, const ColvecColumn *pCol,
                               int iCol, int64_t iRow, void *pBuf, char **pzErr,
                               int *pRc) {
  const ColvecLayoutCol *pL = &h->aCol[iCol];
  ColvecErr err;
  int rc;
  if (pL->aVec) return pL->aVec + iRow * pCol->nByte;
  if (pL->pMain == NULL) {
    *pzErr = sqlite3_mprintf("colvec: segment %lld lacks vectors for %s",
                             (long long)h->iSegid, pCol->zName);
    *pRc = COLVEC_CORRUPT_VTAB;
    return NULL;
  }
  err.zMsg[0] = 0;
  err.iErrno = 0;
  rc = colvecSegfileRead(h->pSeg, pL->pMain, iRow * pCol->nByte, pBuf,
                         pCol->nByte, &err);
  if (rc != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("%s", err.zMsg);
    *pRc = colvecReadRc(rc, err.iErrno);
    return NULL;
  }
  return pBuf;
}

/* Bytes of one index part of a column; see colvecInt.h. */
const void *colvecLayoutPart(ColvecSegHandle *h, int iCol, int ePart,
                             void **ppOwned, int64_t *pnByte, char **pzErr,
                             int *pRc) {
  return layoutBytes(h, h->aCol[iCol].apPart[ePart], ppOwned, pnByte, pzErr,
                     pRc);
}

/* The index parts a segment column has; see colvecInt.h. */
int colvecLayoutPartMask(const ColvecSegHandle *h, int iCol) {
  int k, mPart = 0;
  for (k = 0; k < COLVEC_LAYOUT_NPART; k++) {
    if (h->aCol[iCol].apPart[k]) mPart |= 1 << k;
  }
  return mPart;
}

/*************************************************************************
** Cells: the one reader, and its SQL adapters.
*/

/*
** The segment half of the cell reader: attribute column iCol (described by
** pCol) of row iRow of h into *pOut. Returns SQLITE_OK or an error with
** *pzErr set.
*/
static inline int layoutSegCell(const ColvecConfig *pC, ColvecSegHandle *h,
                                const ColvecColumn *pCol, int iCol,
                                int64_t iRow, ColvecScalar *pOut,
                                char **pzErr) {
  const ColvecColumnView *v;
  int rc = layoutView(pC, h, iCol, &v, pzErr);
  if (rc != SQLITE_OK) return rc;
  if (colvecFilterRowValue(v, iRow, pOut) != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("colvec: segment %lld of table %s: bad "
                             "offsets in column %s",
                             (long long)h->iSegid, pC->zName, pCol->zName);
    return COLVEC_CORRUPT_VTAB;
  }
  return SQLITE_OK;
}

/* Reads one cell; see colvecInt.h. */
int colvecLayoutCell(const ColvecConfig *pC, const ColvecSource *pSrc, int iCol,
                     int64_t iRow, void *pBuf, ColvecScalar *pOut,
                     char **pzErr) {
  const ColvecColumn *pCol = &pC->aCol[iCol];
  const ColvecBatchCol *c;
  if (pCol->bVector) {
    pOut->eType = COLVEC_TYPE_BLOB;
    pOut->n = pCol->nByte;
    if (pSrc->pBatch) {
      pOut->z = &pSrc->pBatch->aCol[iCol].aVec[iRow * pCol->nByte];
    } else {
      int rc = SQLITE_OK;
      pOut->z =
          colvecLayoutVector(pSrc->pSeg, pCol, iCol, iRow, pBuf, pzErr, &rc);
      if (pOut->z == NULL) return rc;
    }
    return SQLITE_OK;
  }
  if (pSrc->pBatch == NULL) {
    return layoutSegCell(pC, pSrc->pSeg, pCol, iCol, iRow, pOut, pzErr);
  }
  c = &pSrc->pBatch->aCol[iCol];
  if (c->aNull[iRow]) {
    pOut->eType = COLVEC_TYPE_NULL;
    return SQLITE_OK;
  }
  switch (pCol->eAttr) {
  case COLVEC_ATTR_INTEGER:
    pOut->eType = COLVEC_TYPE_INTEGER;
    pOut->i = c->aInt[iRow];
    break;
  case COLVEC_ATTR_REAL:
    pOut->eType = COLVEC_TYPE_FLOAT;
    pOut->r = c->aReal[iRow];
    break;
  default:
    pOut->eType =
        pCol->eAttr == COLVEC_ATTR_TEXT ? COLVEC_TYPE_TEXT : COLVEC_TYPE_BLOB;
    pOut->z = c->aByte ? c->aByte + c->aOff[iRow] : NULL;
    pOut->n = (int)(c->aOff[iRow + 1] - c->aOff[iRow]);
    break;
  }
  return SQLITE_OK;
}

/* Sets the SQL result to cell *pV (colvecCellResult, inlined here). */
static inline void layoutResult(sqlite3_context *pCtx, const ColvecScalar *pV) {
  switch (pV->eType) {
  case COLVEC_TYPE_INTEGER:
    sqlite3_result_int64(pCtx, pV->i);
    break;
  case COLVEC_TYPE_FLOAT:
    sqlite3_result_double(pCtx, pV->r);
    break;
  case COLVEC_TYPE_TEXT:
    sqlite3_result_text(pCtx, pV->n > 0 ? (const char *)pV->z : "", pV->n,
                        pV->n > 0 ? SQLITE_TRANSIENT : SQLITE_STATIC);
    break;
  case COLVEC_TYPE_BLOB:
    if (pV->n > 0) {
      sqlite3_result_blob(pCtx, pV->z, pV->n, SQLITE_TRANSIENT);
    } else {
      sqlite3_result_zeroblob(pCtx, 0);
    }
    break;
  default:
    sqlite3_result_null(pCtx);
    break;
  }
}

/* Sets the SQL result to a cell; see colvecInt.h. */
void colvecCellResult(sqlite3_context *pCtx, const ColvecScalar *pV) {
  layoutResult(pCtx, pV);
}

/* Binds a cell to a statement parameter; see colvecInt.h. */
int colvecCellBind(sqlite3_stmt *pStmt, int iBind, const ColvecScalar *pV,
                   void (*xDel)(void *)) {
  switch (pV->eType) {
  case COLVEC_TYPE_INTEGER:
    return sqlite3_bind_int64(pStmt, iBind, pV->i);
  case COLVEC_TYPE_FLOAT:
    return sqlite3_bind_double(pStmt, iBind, pV->r);
  case COLVEC_TYPE_TEXT:
    return sqlite3_bind_text(pStmt, iBind, pV->n > 0 ? (const char *)pV->z : "",
                             pV->n, pV->n > 0 ? xDel : SQLITE_STATIC);
  case COLVEC_TYPE_BLOB:
    return sqlite3_bind_blob(pStmt, iBind,
                             pV->n > 0 ? (const void *)pV->z : (const void *)"",
                             pV->n, pV->n > 0 ? xDel : SQLITE_STATIC);
  default:
    return sqlite3_bind_null(pStmt, iBind);
  }
}

/* Sets the SQL result to one cell of a segment; see colvecInt.h. */
int colvecLayoutResult(const ColvecConfig *pC, ColvecSegHandle *h, int iCol,
                       int64_t iRow, sqlite3_context *pCtx, char **pzErr) {
  const ColvecColumn *pCol = &pC->aCol[iCol];
  ColvecScalar v;
  int rc;
  if (pCol->bVector) {
    ColvecSource src;
    void *pBuf = NULL;
    if (h->aCol[iCol].aVec == NULL) {
      pBuf = sqlite3_malloc(pCol->nByte);
      if (pBuf == NULL) return SQLITE_NOMEM;
    }
    src.pBatch = NULL;
    src.iFirst = 0;
    src.pSeg = h;
    rc = colvecLayoutCell(pC, &src, iCol, iRow, pBuf, &v, pzErr);
    if (rc == SQLITE_OK) layoutResult(pCtx, &v);
    sqlite3_free(pBuf);
    return rc;
  }
  rc = layoutSegCell(pC, h, pCol, iCol, iRow, &v, pzErr);
  if (rc == SQLITE_OK) layoutResult(pCtx, &v);
  return rc;
}

/* Binds one cell of a source to a statement parameter; see colvecInt.h. */
int colvecLayoutBind(const ColvecConfig *pC, const ColvecSource *pSrc,
                     int64_t iRow, int iCol, sqlite3_stmt *pStmt, int iBind,
                     char **pzErr) {
  const ColvecColumn *pCol = &pC->aCol[iCol];
  ColvecScalar v;
  void *pBuf = NULL;
  int rc;
  if (pCol->bVector && pSrc->pSeg && pSrc->pSeg->aCol[iCol].aVec == NULL) {
    pBuf = sqlite3_malloc(pCol->nByte);
    if (pBuf == NULL) return SQLITE_NOMEM;
  }
  rc = colvecLayoutCell(pC, pSrc, iCol, iRow, pBuf, &v, pzErr);
  /* a batch outlives the statement's step; a segment's bytes may be in
  ** pBuf, freed below */
  if (rc == SQLITE_OK) {
    rc = colvecCellBind(pStmt, iBind, &v,
                        pSrc->pBatch ? SQLITE_STATIC : SQLITE_TRANSIENT);
  }
  sqlite3_free(pBuf);
  return rc;
}
