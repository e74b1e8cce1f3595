/*
** colvec_compact.c — writing segments: compaction of the delta and of bulk
** loads, size-tiered merges, and removal of files nothing needs any more.
** The commit protocol is described in colvecInt.h.
*/
#include "colvecInt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The SQLite code of a failed segment write whose errno is iErrno: a full
** disk (or quota) is SQLITE_FULL, anything else SQLITE_IOERR. */
static int compactIoRc(int iErrno) {
#ifdef EDQUOT
  if (iErrno == EDQUOT) return SQLITE_FULL;
#endif
  return iErrno == ENOSPC ? SQLITE_FULL : SQLITE_IOERR;
}

/* qsort comparator: ascending rowid. */
static int compactRowCmp(const void *a, const void *b) {
  int64_t x = ((const ColvecRowRef *)a)->iRowid;
  int64_t y = ((const ColvecRowRef *)b)->iRowid;
  return x < y ? -1 : x > y;
}

/*
** Collects the live rows of every source in rowid order into a new array
** (*paRow, sqlite3_free'd by the caller) of *pnRow entries. A rowid present
** twice is corruption.
*/
static int compactCollect(const ColvecSource *aSrc, int nSrc,
                          ColvecRowRef **paRow, int64_t *pnRow, char **pzErr) {
  int64_t nAll = 0, n = 0, i;
  ColvecRowRef *aRow;
  int s;
  for (s = 0; s < nSrc; s++) {
    nAll += aSrc[s].pBatch ? aSrc[s].pBatch->nRow - aSrc[s].iFirst
                           : aSrc[s].pSeg->nRow;
  }
  aRow = sqlite3_malloc64(sizeof(ColvecRowRef) * (sqlite3_uint64)(nAll + 1));
  if (aRow == NULL) return SQLITE_NOMEM;
  for (s = 0; s < nSrc; s++) {
    if (aSrc[s].pBatch) {
      const ColvecBatch *b = aSrc[s].pBatch;
      for (i = aSrc[s].iFirst; i < b->nRow; i++) {
        aRow[n].iRowid = b->aRowid[i];
        aRow[n].iSrc = s;
        aRow[n].iRow = i;
        n++;
      }
    } else {
      const ColvecSegHandle *h = aSrc[s].pSeg;
      for (i = 0; i < h->nRow; i++) {
        if (colvecSegmentIsDead(h, h->aRowid[i])) continue;
        aRow[n].iRowid = h->aRowid[i];
        aRow[n].iSrc = s;
        aRow[n].iRow = i;
        n++;
      }
    }
  }
  qsort(aRow, (size_t)n, sizeof(ColvecRowRef), compactRowCmp);
  for (i = 1; i < n; i++) {
    if (aRow[i].iRowid == aRow[i - 1].iRowid) {
      *pzErr = sqlite3_mprintf(
          "colvec: rowid %lld is stored twice (run integrity-check)",
          (long long)aRow[i].iRowid);
      sqlite3_free(aRow);
      return COLVEC_CORRUPT_VTAB;
    }
  }
  *paRow = aRow;
  *pnRow = n;
  return SQLITE_OK;
}

/*
** Appends the vectors of vector column iCol in row order (colvec_layout.c),
** then the column's index (colvec_index.c), built from a contiguous copy of
** the vectors when the layout gives the column index parts.
*/
static int compactWriteVectors(ColvecSegTable *pSegs, ColvecSegWriter *pW,
                               ColvecTick *pTick, const ColvecSource *aSrc,
                               const ColvecRowRef *aRow, int64_t nRow, int iCol,
                               int bDefer, ColvecIndexJob *pJob, void *pBuf,
                               char **pzErr) {
  const ColvecConfig *pC = pSegs->pConfig;
  const ColvecColumn *pCol = &pC->aCol[iCol];
  int bIndex = colvecLayoutIndexParts(pCol, nRow) != 0;
  uint8_t *aAll = NULL;
  int64_t *aRowid = NULL;
  int64_t i;
  int rc;
  if (bIndex) {
    aAll = sqlite3_malloc64((sqlite3_uint64)nRow * (sqlite3_uint64)pCol->nByte);
    aRowid = sqlite3_malloc64((sqlite3_uint64)nRow * 8);
    if (aAll == NULL || aRowid == NULL) {
      sqlite3_free(aAll);
      sqlite3_free(aRowid);
      return SQLITE_NOMEM;
    }
    for (i = 0; i < nRow; i++)
      aRowid[i] = aRow[i].iRowid;
  }
  rc = colvecLayoutWriteVectors(pC, pW, pTick, aSrc, aRow, nRow, iCol, pBuf,
                                aAll, pzErr);
  if (rc == COLVEC_OK && aAll) {
    rc = colvecIndexWrite(pW, pTick, pC, iCol, aAll, nRow, aRowid, bDefer, pJob,
                          pzErr);
  }
  sqlite3_free(aAll);
  sqlite3_free(aRowid);
  return rc;
}

/* Reads the header checksum of finished segment file zPath of store pStore
** into *pCksum. */
static int compactReadChecksum(const ColvecStore *pStore, const char *zPath,
                               uint64_t *pCksum, char **pzErr) {
  ColvecSeg *pSeg = NULL;
  ColvecErr err;
  int rc;
  err.zMsg[0] = 0;
  rc = colvecSegfileOpen(pStore, zPath, COLVEC_SEG_FILE, COLVEC_PREFAULT_NONE,
                         &pSeg, &err);
  if (rc != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("%s", err.zMsg);
    return rc == COLVEC_NOMEM ? SQLITE_NOMEM : SQLITE_IOERR;
  }
  *pCksum = colvecSegfileHeaderChecksum(pSeg);
  colvecSegfileClose(pSeg);
  return SQLITE_OK;
}

/* Switches a table between sidecar and embedded; see colvecInt.h. */
int colvecCompactConvert(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                         int bEmbed, char **pzErr) {
  int bNow = colvecStorageEmbedded(pStorage), rc = SQLITE_OK, i;
  const ColvecTableStore *pKeep = NULL;
  if (bNow < 0) return -bNow;
  if (bNow == bEmbed) return SQLITE_OK;
  if (pSegs->bNoDir) {
    /* its segments are in memory: a sidecar table would have no files */
    *pzErr = sqlite3_mprintf("colvec: table %s: cannot keep its segments "
                             "beside the database: %s is not a folder "
                             "(symbolic links are not followed)",
                             pSegs->pConfig->zName, pSegs->zDir);
    return SQLITE_CANTOPEN;
  }
  /* opens every live segment: while still embedded, a missing cache file
  ** is rebuilt before the bytes go */
  rc = colvecSegmentTableRefresh(pSegs, pzErr);
  if (rc == SQLITE_OK) rc = colvecStorageSetEmbedded(pStorage, bEmbed, pzErr);
  if (rc == SQLITE_OK) rc = colvecSegmentTableStore(pStorage, &pKeep);
  /* the new store keeps every live segment's bytes as it would a new one */
  for (i = 0; rc == SQLITE_OK && i < pSegs->nSeg; i++) {
    int64_t iSegid = pSegs->apSeg[i]->iSegid;
    char *zPath = colvecFolderSegPath(pSegs->zDir, iSegid, "");
    rc = zPath ? pKeep->xKeep(pSegs, iSegid, zPath, pzErr) : SQLITE_NOMEM;
    sqlite3_free(zPath);
  }
  colvecSegmentTableChanged(pSegs);
  return rc;
}

/* Tier of a segment of nRow rows: floor(log4(nRow / delta_rows)). */
static int compactTier(const ColvecConfig *pC, int64_t nRow) {
  int iTier = 0;
  int64_t n = pC->nDeltaRows * 4;
  while (nRow >= n && iTier < 30) {
    iTier++;
    n *= 4;
  }
  return iTier;
}

/*
** Largest number of bytes one buffer of a segment write may need (the
** copy of a vector column's rows, the serialized graph): under SQLite's
** limit on one allocation (sqlite3_malloc64 refuses 0x7fffff00 bytes and
** more), with room to spare. Lowered by debug builds' SQL function
** colvec_test_segment_bytes() to test the limit with small tables.
*/
#define COMPACT_MAX_BYTES (((int64_t)1 << 31) - ((int64_t)1 << 24))
static int64_t compactMaxBytes = COMPACT_MAX_BYTES;

/* Sets the largest buffer of a segment write; see colvecInt.h. */
void colvecCompactSetMaxBytes(int64_t n) {
  compactMaxBytes = n > 0 ? n : COMPACT_MAX_BYTES;
}

/*
** Most rows one segment of the table may hold: compactMaxBytes over the
** largest per-row share of a write buffer (a vector column's bytes, a
** node's level-0 links in the serialized graph, the row references). A
** table whose segment files are kept in memory (the memory store: each
** file is one allocation) counts a row's share of the whole file instead:
** its rowid, per vector column the vector, a code (at most as large),
** the level-0 links and a bound on the upper levels' share, and 16 bytes
** per attribute (longer text or blob values can still pass the limit:
** the write then fails with SQLITE_NOMEM).
*/
static int64_t compactMaxRows(const ColvecSegTable *pSegs) {
  const ColvecConfig *pC = pSegs->pConfig;
  int bWhole = pSegs->pStore == &colvecStoreMem;
  int64_t nPer = bWhole ? 8 : 32, n;
  int i;
  for (i = 0; i < pC->nCol; i++) {
    const ColvecColumn *pCol = &pC->aCol[i];
    int64_t nLinks = 4 * (2 * (int64_t)pCol->nM + 2);
    if (bWhole) {
      nPer += pCol->bVector
                  ? 2 * (int64_t)pCol->nByte + nLinks + 4 * (pCol->nM + 1)
                  : 16;
      continue;
    }
    if (!pCol->bVector) continue;
    if (pCol->nByte > nPer) nPer = pCol->nByte;
    if (nLinks > nPer) nPer = nLinks;
  }
  n = compactMaxBytes / nPer;
  return n > 0 ? n : 1;
}

/*
** Sets *piGen to the generation of the current write transaction and
** *piSegid to the table's next_segid, both checked against the manifest and
** the trash (colvecStorageCounters) before any file is written. The
** first compaction of a transaction bumps the table's recorded generation and
** remembers the new value and next_segid in pStorage (reset by the table at
** every transaction boundary); later ones reuse them. A ROLLBACK TO that
** undid the bump shows as a generation that differs again, and bumps anew.
** Returns SQLITE_OK or an error with *pzErr set (COLVEC_CORRUPT_VTAB for
** damaged counters).
*/
static int compactTxnGen(ColvecStorage *pStorage, sqlite3_int64 *piGen,
                         sqlite3_int64 *piSegid, char **pzErr) {
  sqlite3_int64 iGen = 0;
  int rc = colvecStorageCounters(pStorage, piSegid, &iGen, pzErr);
  if (rc == SQLITE_OK && iGen != pStorage->iTxnGen) {
    if (pStorage->iTxnGen < 0) pStorage->iTxnSegid = *piSegid;
    rc = colvecStorageConfigSet(pStorage, "generation", iGen + 1);
    if (rc == SQLITE_OK) pStorage->iTxnGen = iGen + 1;
  }
  *piGen = pStorage->iTxnGen;
  return rc;
}

/* The graphs of one pending segment built in steps; see colvecInt.h. */
struct ColvecCompactJob {
  int64_t iSegid;         /* the segment */
  uint64_t cksum;         /* its header checksum (a segid a rolled-back
                          ** transaction used may come back with other
                          ** rows) */
  int64_t nTomb;          /* its tombstones when the job began */
  int64_t nRow;           /* its live rows then: the graphs' nodes */
  int nCol;               /* entries of apCol: the table's columns */
  ColvecIndexJob **apCol; /* per column: its graph's build, or NULL */
};

/* Frees a job; see colvecInt.h. */
void colvecCompactJobFree(ColvecCompactJob *p) {
  int i;
  if (p == NULL) return;
  for (i = 0; i < p->nCol; i++)
    colvecIndexHnswJobFree(p->apCol[i]);
  sqlite3_free(p->apCol);
  sqlite3_free(p);
}

/*
** Partition keys. A write to a table with a partition key puts every
** partition holding at least max(COMPACT_SPLIT_ROWS, rows written /
** COMPACT_SPLIT_MAX) of the rows into a segment of its own (equal pieces
** when it is over the cap), and the other rows into one more. A KNN with
** part = ? then searches that segment's graph alone, as it would a table
** of the partition's rows, and finds that the other segments hold none of
** its rows through their value orders (colvec_scan.c); small partitions
** stay together, scanned exactly. Such single-partition segments take no
** part in tier merges, which would mix them again; optimize rewrites every
** segment (and splits anew) unless the layout is settled
** (compactSettled).
*/
#define COMPACT_SPLIT_ROWS 10000
#define COMPACT_SPLIT_MAX 32

/* Returns the index of the table's partition key column, or -1. */
static int compactPartCol(const ColvecConfig *pC) {
  int i;
  for (i = 0; i < pC->nCol; i++) {
    if (pC->aCol[i].bPartition) return i;
  }
  return -1;
}

/*
** Fewest rows a segment holding one partition has: COMPACT_SPLIT_ROWS, or
** half the cap when that is less (a partition over the cap is written as
** equal pieces, each over half of it: compactWritePieces).
*/
static int64_t compactSingleMin(const ColvecSegTable *pSegs) {
  int64_t nHalf = compactMaxRows(pSegs) / 2;
  return nHalf < COMPACT_SPLIT_ROWS ? nHalf : COMPACT_SPLIT_ROWS;
}

/*
** Returns 1 when segment h holds one partition: at least
** compactSingleMin rows, all with the same (non-NULL) partition key; 0
** otherwise, also when the column cannot be read (the merge that reads it
** next reports that).
*/
static int compactSinglePart(ColvecSegTable *pSegs, ColvecSegHandle *h) {
  const ColvecConfig *pC = pSegs->pConfig;
  const ColvecColumnView *pView = NULL;
  ColvecScalar first, v;
  char *zErr = NULL;
  int iCol = compactPartCol(pC), rc;
  int64_t i;
  if (iCol < 0 || h->nRow < compactSingleMin(pSegs)) return 0;
  rc = colvecLayoutView(pC, h, iCol, &pView, &zErr);
  sqlite3_free(zErr);
  if (rc != SQLITE_OK || pView->aNull) return 0;
  if (colvecFilterRowValue(pView, 0, &first) != COLVEC_OK) return 0;
  for (i = 1; i < h->nRow; i++) {
    if (colvecFilterRowValue(pView, i, &v) != COLVEC_OK ||
        colvecFilterCompare(&v, &first) != 0) {
      return 0;
    }
  }
  return 1;
}

/*
** Returns 1 when the first partition keys of segments a and b (each
** holding one partition) are equal, or cannot be read; else 0.
*/
static int compactSamePart(const ColvecConfig *pC, int iCol, ColvecSegHandle *a,
                           ColvecSegHandle *b) {
  const ColvecColumnView *pA = NULL, *pB = NULL;
  ColvecScalar x, y;
  char *zErr = NULL;
  int bSame = colvecLayoutView(pC, a, iCol, &pA, &zErr) != SQLITE_OK ||
              colvecLayoutView(pC, b, iCol, &pB, &zErr) != SQLITE_OK ||
              colvecFilterRowValue(pA, 0, &x) != COLVEC_OK ||
              colvecFilterRowValue(pB, 0, &y) != COLVEC_OK ||
              colvecFilterCompare(&x, &y) == 0;
  sqlite3_free(zErr);
  return bSame;
}

/* Fewest segments of at most nMax rows that hold nRow rows. */
static int64_t compactPieces(int64_t nRow, int64_t nMax) {
  return (nRow + nMax - 1) / nMax;
}

/*
** Returns 1 when optimize has nothing to do: no segment has tombstones or
** a deferred graph, and the segments are as few as compactMaxRows allows
** (one when the rows fit one), or, with a partition key, as few as it
** allows for the rows shared by the small partitions and for each
** partition kept apart. Else 0.
*/
static int compactSettled(ColvecSegTable *pSegs) {
  const ColvecConfig *pC = pSegs->pConfig;
  int i, j, nShared = 0, bSettled = 1, iCol = compactPartCol(pC);
  int64_t nMax = compactMaxRows(pSegs), nSharedRow = 0;
  char *aSingle; /* per segment: 1 holds one partition, 2 counted */
  for (i = 0; i < pSegs->nSeg; i++) {
    ColvecSegHandle *h = pSegs->apSeg[i];
    if (h->nTomb > 0 || colvecIndexPending(h, pC)) return 0;
  }
  if (pSegs->nSeg <= 1) return 1;
  if (iCol < 0) {
    int64_t nLive = 0;
    for (i = 0; i < pSegs->nSeg; i++) {
      nLive += pSegs->apSeg[i]->nRow;
    }
    return pSegs->nSeg <= compactPieces(nLive, nMax);
  }
  aSingle = sqlite3_malloc64((sqlite3_uint64)pSegs->nSeg);
  if (aSingle == NULL) return 0; /* the rewrite reports the lack */
  for (i = 0; i < pSegs->nSeg; i++) {
    aSingle[i] = (char)compactSinglePart(pSegs, pSegs->apSeg[i]);
    if (!aSingle[i]) {
      nShared++;
      nSharedRow += pSegs->apSeg[i]->nRow;
    }
  }
  if (nShared > compactPieces(nSharedRow, nMax)) bSettled = 0;
  for (i = 0; bSettled && i < pSegs->nSeg; i++) {
    int64_t nPart = 1, nPartRow = pSegs->apSeg[i]->nRow;
    if (aSingle[i] != 1) continue;
    for (j = i + 1; j < pSegs->nSeg; j++) {
      if (aSingle[j] == 1 &&
          compactSamePart(pC, iCol, pSegs->apSeg[i], pSegs->apSeg[j])) {
        aSingle[j] = 2;
        nPart++;
        nPartRow += pSegs->apSeg[j]->nRow;
      }
    }
    if (nPart > compactPieces(nPartRow, nMax)) bSettled = 0;
  }
  sqlite3_free(aSingle);
  return bSettled;
}

/*
** Reads the partition key (column iCol) of the nRow rows of aRow into *pView,
** whose arrays are new (compactPartViewFree): int64 values or text bytes,
** and a NULL bitmap. Returns SQLITE_OK or an error with *pzErr set.
*/
static int compactPartView(const ColvecConfig *pC, const ColvecSource *aSrc,
                           const ColvecRowRef *aRow, int64_t nRow, int iCol,
                           ColvecColumnView *pView, char **pzErr) {
  int bInt = pC->aCol[iCol].eAttr == COLVEC_ATTR_INTEGER;
  int64_t i, nByte = 0;
  int rc = SQLITE_OK;
  uint8_t *aNull;
  memset(pView, 0, sizeof(*pView));
  pView->nRow = nRow;
  pView->eStore = bInt ? COLVEC_STORE_INT64 : COLVEC_STORE_TEXT;
  aNull = colvecMallocZero(&rc, (nRow + 7) / 8 + 1);
  pView->aNull = aNull;
  if (bInt) {
    pView->aInt = colvecMallocZero(&rc, (nRow + 1) * 8);
  } else {
    pView->aOff = colvecMallocZero(&rc, (nRow + 1) * 8);
  }
  /* two passes for text: the bytes' total, then the bytes */
  for (i = 0; rc == SQLITE_OK && i < nRow; i++) {
    ColvecScalar v;
    rc = colvecLayoutCell(pC, &aSrc[aRow[i].iSrc], iCol, aRow[i].iRow, NULL, &v,
                          pzErr);
    if (rc != SQLITE_OK) break;
    if (v.eType == COLVEC_TYPE_NULL) {
      aNull[i >> 3] |= (uint8_t)(1u << (i & 7));
    } else if (bInt) {
      ((int64_t *)pView->aInt)[i] = v.eType == COLVEC_TYPE_INTEGER ? v.i : 0;
    } else {
      nByte += v.n;
    }
    if (!bInt) ((int64_t *)pView->aOff)[i + 1] = nByte;
  }
  if (rc == SQLITE_OK && !bInt) {
    uint8_t *aByte = colvecMallocZero(&rc, nByte + 1);
    pView->aByte = aByte;
    pView->nByte = nByte;
    for (i = 0; rc == SQLITE_OK && i < nRow; i++) {
      ColvecScalar v;
      rc = colvecLayoutCell(pC, &aSrc[aRow[i].iSrc], iCol, aRow[i].iRow, NULL,
                            &v, pzErr);
      if (rc == SQLITE_OK && v.eType != COLVEC_TYPE_NULL && v.n > 0) {
        memcpy(aByte + pView->aOff[i], v.z, (size_t)v.n);
      }
    }
  }
  return rc;
}

/* Frees the arrays compactPartView made. */
static void compactPartViewFree(ColvecColumnView *pView) {
  colvecFree((void *)pView->aNull);
  colvecFree((void *)pView->aInt);
  colvecFree((void *)pView->aOff);
  colvecFree((void *)pView->aByte);
  memset(pView, 0, sizeof(*pView));
}

/*
** Decides how the nRow rows of aRow are written (see "Partition keys"):
** sets *pnGroup to the number of segments, and when it is more than one,
** *paGroup to a new array (sqlite3_free) giving each row's segment: 0 for
** the shared one, 1.. for a partition of its own. Returns SQLITE_OK or an
** error with *pzErr set.
*/
static int compactSplit(const ColvecConfig *pC, const ColvecSource *aSrc,
                        const ColvecRowRef *aRow, int64_t nRow, int **paGroup,
                        int *pnGroup, char **pzErr) {
  ColvecColumnView view;
  ColvecOrder order;
  int64_t nMin = nRow / COMPACT_SPLIT_MAX, i = 0;
  int iCol = compactPartCol(pC), nGroup = 1, rc, *aGroup = NULL;
  *paGroup = NULL;
  *pnGroup = 1;
  if (nMin < COMPACT_SPLIT_ROWS) nMin = COMPACT_SPLIT_ROWS;
  if (iCol < 0 || nRow < nMin) return SQLITE_OK;
  memset(&order, 0, sizeof(order));
  rc = compactPartView(pC, aSrc, aRow, nRow, iCol, &view, pzErr);
  if (rc == SQLITE_OK) {
    int rcO = colvecOrderBuild(&view, &order);
    if (rcO == COLVEC_NOMEM) {
      rc = SQLITE_NOMEM;
    } else if (rcO != COLVEC_OK) {
      *pzErr = sqlite3_mprintf("colvec: table %s: cannot order the values "
                               "of partition key %s",
                               pC->zName, pC->aCol[iCol].zName);
      rc = SQLITE_ERROR;
    }
  }
  if (rc == SQLITE_OK)
    aGroup = colvecMallocZero(&rc, nRow * (int64_t)sizeof(int));
  while (rc == SQLITE_OK && i < order.nValue) {
    ColvecScalar a, b;
    int64_t j = i + 1, k;
    colvecFilterRowValue(&view, order.aRow[i], &a);
    for (; j < order.nValue; j++) {
      colvecFilterRowValue(&view, order.aRow[j], &b);
      if (colvecFilterCompare(&a, &b) != 0) break;
    }
    if (j - i >= nMin) {
      for (k = i; k < j; k++)
        aGroup[order.aRow[k]] = nGroup;
      nGroup++;
    }
    i = j;
  }
  colvecOrderFree(&order);
  compactPartViewFree(&view);
  if (rc == SQLITE_OK && nGroup > 1) {
    *paGroup = aGroup;
    *pnGroup = nGroup;
  } else {
    colvecFree(aGroup);
  }
  return rc;
}

/*
** Writes the live rows of aSrc[0..nSrc-1] as a segment (colvecCompactWrite),
** with the graphs of pJob (NULL: none) where they hold exactly those rows.
*/
static int compactWriteWith(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                            const ColvecSource *aSrc, int nSrc, int bDefer,
                            ColvecCompactJob *pJob, char **pzErr);

/* Writes a segment from sources; see colvecInt.h. */
int colvecCompactWrite(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                       const ColvecSource *aSrc, int nSrc, int bDefer,
                       char **pzErr) {
  return compactWriteWith(pSegs, pStorage, aSrc, nSrc, bDefer, NULL, pzErr);
}

/*
** Writes the nRow rows of aRow (rowid order; from aSrc) as one new
** segment of the current write transaction (compactTxnGen) and adds it to
** the manifest, with the graphs of pJob (NULL: none) where they hold
** exactly those rows. Returns SQLITE_OK or an error with *pzErr set; a
** file written by a failed call is removed again.
*/
static int compactWriteRows(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                            const ColvecSource *aSrc, const ColvecRowRef *aRow,
                            int64_t nRow, int bDefer, ColvecCompactJob *pJob,
                            char **pzErr) {
  const ColvecConfig *pC = pSegs->pConfig;
  sqlite3_int64 iSegid = 0, iGen = 0;
  ColvecSegWriter *pW = NULL;
  const ColvecTableStore *pKeep = NULL;
  char *zTmp = NULL, *zPath = NULL;
  void *pBuf = NULL;
  uint64_t cksum = 0;
  ColvecErr err;
  ColvecTick tick;
  int rc, i, bFileDone = 0;
  int64_t nMaxByte = 8;

  err.zMsg[0] = 0;
  colvecTickInit(&tick, pStorage->db);
  rc = compactTxnGen(pStorage, &iGen, &iSegid, pzErr);
  if (rc != SQLITE_OK) return rc;
  for (i = 0; i < pC->nCol; i++) {
    if (pC->aCol[i].nByte > nMaxByte) nMaxByte = pC->aCol[i].nByte;
  }
  pBuf = sqlite3_malloc64((sqlite3_uint64)nMaxByte);
  zTmp = colvecFolderSegPath(pSegs->zDir, iSegid, ".tmp");
  zPath = colvecFolderSegPath(pSegs->zDir, iSegid, "");
  if (pBuf == NULL || zTmp == NULL || zPath == NULL) rc = SQLITE_NOMEM;
  if (rc == SQLITE_OK && pSegs->bNoDir) {
    /* a file or a link where the folder should be: never written through */
    *pzErr = sqlite3_mprintf("colvec: table %s: cannot write a segment: "
                             "%s is not a folder (symbolic links are not "
                             "followed)",
                             pC->zName, pSegs->zDir);
    rc = SQLITE_CANTOPEN;
  }
  if (rc == SQLITE_OK) {
    int rcDir = pSegs->pStore->xMkdirUp(pSegs->zDir, 1, &err);
    if (rcDir != COLVEC_OK) {
      *pzErr = sqlite3_mprintf("%s", err.zMsg);
      rc = colvecFileRc(rcDir, SQLITE_CANTOPEN);
    }
  }
  if (rc == SQLITE_OK) {
    /* iSegid lies above every segid a row names (compactTxnGen): a file
    ** there is an orphan of a crashed or rolled-back writer, which
    ** cleanup would delete. It is removed first (a missing one is fine,
    ** and no existence test runs first: one that fails for lack of
    ** memory would say "none"), so the rename below never has to
    ** replace a file. */
    int rcUnlink = pSegs->pStore->xUnlink(zPath, &err);
    if (rcUnlink != COLVEC_OK) {
      *pzErr = sqlite3_mprintf("%s", err.zMsg);
      rc = colvecFileRc(rcUnlink, compactIoRc(err.iErrno));
    }
  }
  if (rc == SQLITE_OK) {
    rc = colvecSegfileWriterOpen(pSegs->pStore, zTmp,
                                 colvecConfigFingerprint(pC), &pW, &err);
    if (rc != COLVEC_OK) {
      *pzErr = sqlite3_mprintf("%s", err.zMsg);
      if (rc != COLVEC_NOMEM) rc = compactIoRc(err.iErrno);
    }
  }
  if (rc == SQLITE_OK) rc = colvecLayoutWriteRowids(pW, aRow, nRow);
  for (i = 0; rc == SQLITE_OK && i < pC->nCol; i++) {
    if (pC->aCol[i].bVector) {
      rc = compactWriteVectors(pSegs, pW, &tick, aSrc, aRow, nRow, i, bDefer,
                               pJob ? pJob->apCol[i] : NULL, pBuf, pzErr);
    } else {
      rc = colvecLayoutWriteAttr(pC, pW, &tick, aSrc, aRow, nRow, i, pzErr);
    }
  }
  if (pW) {
    if (rc == SQLITE_OK) {
      rc = colvecSegfileWriterFinish(pW, (uint64_t)nRow, &err);
      if (rc != COLVEC_OK) {
        *pzErr = sqlite3_mprintf("%s", err.zMsg);
        if (rc != COLVEC_NOMEM) rc = compactIoRc(err.iErrno);
      } else {
        bFileDone = 1;
      }
    } else {
      if (*pzErr == NULL) {
        *pzErr = sqlite3_mprintf("%s", colvecSegfileWriterErrmsg(pW));
      }
      if (rc == COLVEC_IOERR) rc = compactIoRc(colvecSegfileWriterErrno(pW));
      colvecSegfileWriterAbort(pW);
    }
  }
  if (rc == SQLITE_OK)
    rc = compactReadChecksum(pSegs->pStore, zPath, &cksum, pzErr);
  if (rc == SQLITE_OK) rc = colvecSegmentTableStore(pStorage, &pKeep);
  if (rc == SQLITE_OK) rc = pKeep->xKeep(pSegs, iSegid, zPath, pzErr);
  if (rc == SQLITE_OK) {
    rc = colvecStorageManifestAdd(pStorage, iSegid, nRow, cksum,
                                  compactTier(pC, nRow), pzErr);
  }
  if (rc == SQLITE_OK) {
    rc = colvecStorageConfigSet(pStorage, "next_segid", iSegid + 1);
  }
  if (rc != SQLITE_OK && bFileDone) {
    pSegs->pStore->xUnlink(zPath, NULL); /* no committed manifest names it */
  }
  sqlite3_free(pBuf);
  sqlite3_free(zTmp);
  sqlite3_free(zPath);
  return rc;
}

/*
** Writes the nRow rows of aRow (rowid order) as segments of at most
** compactMaxRows rows each, as few as that allows and of equal size, in
** rowid order (compactWriteRows; pJob only when they fit one). Returns
** SQLITE_OK or an error with *pzErr set.
*/
static int compactWritePieces(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                              const ColvecSource *aSrc,
                              const ColvecRowRef *aRow, int64_t nRow,
                              int bDefer, ColvecCompactJob *pJob,
                              char **pzErr) {
  int64_t nMax = compactMaxRows(pSegs), nPiece, i;
  int rc = SQLITE_OK;
  if (nRow <= nMax) {
    return compactWriteRows(pSegs, pStorage, aSrc, aRow, nRow, bDefer, pJob,
                            pzErr);
  }
  /* as few pieces as the cap allows, of equal size (within a row): each
  ** holds over half the cap, so a partition's pieces are each recognized
  ** as holding one partition (compactSinglePart) */
  nPiece = compactPieces(nRow, nMax);
  for (i = 0; rc == SQLITE_OK && i < nPiece; i++) {
    int64_t iFirst = nRow * i / nPiece, iEnd = nRow * (i + 1) / nPiece;
    rc = compactWriteRows(pSegs, pStorage, aSrc, aRow + iFirst, iEnd - iFirst,
                          bDefer, NULL, pzErr);
  }
  return rc;
}

static int compactWriteWith(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                            const ColvecSource *aSrc, int nSrc, int bDefer,
                            ColvecCompactJob *pJob, char **pzErr) {
  ColvecRowRef *aRow = NULL, *aSub = NULL;
  int64_t nRow = 0;
  sqlite3_int64 iSegid = 0, iGen = 0;
  int *aGroup = NULL; /* each row's segment when partitions are split */
  int rc, i, nGroup = 1;

  rc = compactCollect(aSrc, nSrc, &aRow, &nRow, pzErr);
  if (rc == SQLITE_OK) rc = compactTxnGen(pStorage, &iGen, &iSegid, pzErr);
  if (rc == SQLITE_OK && pJob == NULL) {
    rc =
        compactSplit(pSegs->pConfig, aSrc, aRow, nRow, &aGroup, &nGroup, pzErr);
  }
  if (rc == SQLITE_OK && nGroup == 1 && nRow > 0) {
    rc = compactWritePieces(pSegs, pStorage, aSrc, aRow, nRow, bDefer, pJob,
                            pzErr);
  } else if (rc == SQLITE_OK && nGroup > 1) {
    /* the shared segment first, then one per partition, each in rowid
    ** order */
    aSub = sqlite3_malloc64(sizeof(ColvecRowRef) * (sqlite3_uint64)nRow);
    if (aSub == NULL) rc = SQLITE_NOMEM;
    for (i = 0; rc == SQLITE_OK && i < nGroup; i++) {
      int64_t j, nSub = 0;
      for (j = 0; j < nRow; j++) {
        if (aGroup[j] == i) aSub[nSub++] = aRow[j];
      }
      if (nSub > 0) {
        rc = compactWritePieces(pSegs, pStorage, aSrc, aSub, nSub, bDefer, NULL,
                                pzErr);
      }
    }
  }
  for (i = 0; rc == SQLITE_OK && i < nSrc; i++) {
    int64_t iDrop = aSrc[i].pSeg ? aSrc[i].pSeg->iSegid : 0;
    if (aSrc[i].pSeg == NULL) continue;
    rc = colvecStorageManifestDrop(
        pStorage, iDrop,
        /* created in this transaction: no committed state names it */
        iDrop >= pStorage->iTxnSegid ? -iGen : iGen, pzErr);
  }
  colvecSegmentTableChanged(pSegs);
  sqlite3_free(aRow);
  sqlite3_free(aSub);
  colvecFree(aGroup);
  return rc;
}

/* Merges segments by tier; see colvecInt.h. */
int colvecCompactMerge(ColvecSegTable *pSegs, ColvecStorage *pStorage, int bAll,
                       char **pzErr) {
  const ColvecConfig *pC = pSegs->pConfig;
  int rc = SQLITE_OK;
  int nLoop;
  for (nLoop = 0; rc == SQLITE_OK && nLoop < 64; nLoop++) {
    ColvecSource *aSrc;
    char *aSingle = NULL; /* per segment: it holds one partition */
    int64_t nMaxRows = compactMaxRows(pSegs); /* four of them fit one */
    int nSrc = 0, i, iTier, iPick = -1;
    rc = colvecSegmentTableRefresh(pSegs, pzErr);
    if (rc != SQLITE_OK || pSegs->nSeg == 0) break;
    aSrc = sqlite3_malloc64(sizeof(ColvecSource) * (sqlite3_uint64)pSegs->nSeg);
    if (aSrc == NULL) return SQLITE_NOMEM;
    if (bAll) {
      if (!compactSettled(pSegs)) {
        for (i = 0; i < pSegs->nSeg; i++) {
          aSrc[nSrc].pBatch = NULL;
          aSrc[nSrc].iFirst = 0;
          aSrc[nSrc++].pSeg = pSegs->apSeg[i];
        }
      }
    } else {
      /* a segment that is mostly tombstones is rewritten alone */
      for (i = 0; i < pSegs->nSeg && nSrc == 0; i++) {
        ColvecSegHandle *h = pSegs->apSeg[i];
        if (h->nTomb * 2 > h->nRow) {
          aSrc[0].pBatch = NULL;
          aSrc[0].iFirst = 0;
          aSrc[0].pSeg = h;
          nSrc = 1;
        }
      }
      /* a segment of one partition keeps it apart (see "Partition keys") */
      if (compactPartCol(pC) >= 0) {
        aSingle = sqlite3_malloc64((sqlite3_uint64)pSegs->nSeg);
        if (aSingle == NULL) rc = SQLITE_NOMEM;
        for (i = 0; aSingle && i < pSegs->nSeg; i++) {
          aSingle[i] = (char)compactSinglePart(pSegs, pSegs->apSeg[i]);
        }
      }
      for (iTier = 0; rc == SQLITE_OK && iTier <= 30 && nSrc == 0; iTier++) {
        int nInTier = 0;
        for (i = 0; i < pSegs->nSeg; i++) {
          if (compactTier(pC, pSegs->apSeg[i]->nRow) == iTier &&
              !(aSingle && aSingle[i]) &&
              pSegs->apSeg[i]->nRow <= nMaxRows / 4) {
            nInTier++;
          }
        }
        if (nInTier >= 4) iPick = iTier;
        if (iPick >= 0) {
          for (i = 0; i < pSegs->nSeg; i++) {
            if (compactTier(pC, pSegs->apSeg[i]->nRow) == iPick &&
                !(aSingle && aSingle[i]) &&
                pSegs->apSeg[i]->nRow <= nMaxRows / 4) {
              aSrc[nSrc].pBatch = NULL;
              aSrc[nSrc].iFirst = 0;
              aSrc[nSrc++].pSeg = pSegs->apSeg[i];
            }
          }
        }
      }
    }
    if (rc == SQLITE_OK && nSrc > 0) {
      rc = colvecCompactWrite(pSegs, pStorage, aSrc, nSrc, 0, pzErr);
    }
    sqlite3_free(aSingle);
    sqlite3_free(aSrc);
    if (nSrc == 0 || bAll) break;
  }
  return rc;
}

/* Live rows of segments whose graph is deferred; see colvecInt.h. */
int64_t colvecCompactDeferredRows(ColvecSegTable *pSegs) {
  int64_t n = 0;
  int i;
  for (i = 0; i < pSegs->nSeg; i++) {
    ColvecSegHandle *h = pSegs->apSeg[i];
    if (colvecIndexPending(h, pSegs->pConfig)) n += h->nRow - h->nTomb;
  }
  return n;
}

/*
** Starts *ppJob for pending segment h: copies the vectors of its live rows
** out, per vector column whose graph it lacks, and starts their builds.
** Returns SQLITE_OK or an error with *pzErr set.
*/
static int compactJobStart(ColvecSegTable *pSegs, ColvecSegHandle *h,
                           ColvecCompactJob **ppJob, char **pzErr) {
  const ColvecConfig *pC = pSegs->pConfig;
  ColvecSource src;
  ColvecRowRef *aRow = NULL;
  ColvecCompactJob *p;
  void *pBuf = NULL;
  int64_t nRow = 0, i;
  int iCol, rc;
  *ppJob = NULL;
  src.pBatch = NULL;
  src.iFirst = 0;
  src.pSeg = h;
  rc = compactCollect(&src, 1, &aRow, &nRow, pzErr);
  if (rc != SQLITE_OK) return rc;
  p = sqlite3_malloc(sizeof(*p));
  if (p) {
    memset(p, 0, sizeof(*p));
    p->apCol = sqlite3_malloc64(sizeof(ColvecIndexJob *) * (size_t)pC->nCol);
    if (p->apCol) memset(p->apCol, 0, sizeof(ColvecIndexJob *) * pC->nCol);
    p->nCol = p->apCol ? pC->nCol : 0;
  }
  if (p == NULL || p->apCol == NULL) rc = SQLITE_NOMEM;
  if (rc == SQLITE_OK) {
    p->iSegid = h->iSegid;
    p->cksum = h->cksum;
    p->nTomb = h->nTomb;
    p->nRow = nRow;
  }
  for (iCol = 0; rc == SQLITE_OK && iCol < pC->nCol; iCol++) {
    const ColvecColumn *pCol = &pC->aCol[iCol];
    uint8_t *aVec;
    int64_t *aRowid;
    if (!(colvecLayoutIndexParts(pCol, nRow) & (1 << COLVEC_LAYOUT_GRAPH)) ||
        (colvecLayoutPartMask(h, iCol) & (1 << COLVEC_LAYOUT_GRAPH))) {
      continue;
    }
    aVec = sqlite3_malloc64((sqlite3_uint64)nRow * (sqlite3_uint64)pCol->nByte);
    aRowid = sqlite3_malloc64((sqlite3_uint64)nRow * 8 + 8);
    sqlite3_free(pBuf);
    pBuf = sqlite3_malloc64((sqlite3_uint64)pCol->nByte + 8);
    if (aVec == NULL || aRowid == NULL || pBuf == NULL) {
      sqlite3_free(aVec);
      sqlite3_free(aRowid);
      rc = SQLITE_NOMEM;
      break;
    }
    for (i = 0; rc == SQLITE_OK && i < nRow; i++) {
      const void *pVec =
          colvecLayoutVector(h, pCol, iCol, aRow[i].iRow, pBuf, pzErr, &rc);
      if (pVec) memcpy(aVec + (size_t)i * pCol->nByte, pVec, pCol->nByte);
      aRowid[i] = aRow[i].iRowid;
    }
    if (rc != SQLITE_OK) {
      sqlite3_free(aVec);
      sqlite3_free(aRowid);
      break;
    }
    rc = colvecIndexHnswJobNew(pC, iCol, aVec, aRowid, nRow, &p->apCol[iCol]);
    if (rc == COLVEC_NOMEM) rc = SQLITE_NOMEM;
  }
  sqlite3_free(pBuf);
  sqlite3_free(aRow);
  if (rc != SQLITE_OK) {
    colvecCompactJobFree(p);
    return rc;
  }
  *ppJob = p;
  return SQLITE_OK;
}

/*
** Returns the segment of pSegs that job p builds the graphs of when it is
** still live and unchanged (no row of it deleted since the job began),
** else NULL.
*/
static ColvecSegHandle *compactJobSegment(ColvecSegTable *pSegs,
                                          const ColvecCompactJob *p) {
  int i;
  for (i = 0; i < pSegs->nSeg; i++) {
    ColvecSegHandle *h = pSegs->apSeg[i];
    if (h->iSegid == p->iSegid) {
      return h->cksum == p->cksum && h->nTomb == p->nTomb ? h : NULL;
    }
  }
  return NULL;
}

/* Builds deferred graphs; see colvecInt.h. */
int colvecCompactIndex(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                       int64_t nBudget, ColvecCompactJob **ppJob,
                       char **pzErr) {
  ColvecTick tick;
  int rc = SQLITE_OK;
  colvecTickInit(&tick, pStorage->db);
  while (rc == SQLITE_OK && nBudget > 0) {
    ColvecSegHandle *h = NULL;
    ColvecSource *aSrc;
    int64_t nTaken = 0, nBefore, nAfter;
    int nSrc = 0, i;
    rc = colvecSegmentTableRefresh(pSegs, pzErr);
    if (rc != SQLITE_OK) break;
    if (*ppJob && (h = compactJobSegment(pSegs, *ppJob)) == NULL) {
      /* merged, rewritten or deleted from meanwhile: start again */
      colvecCompactJobFree(*ppJob);
      *ppJob = NULL;
    }
    if (*ppJob == NULL) {
      aSrc = sqlite3_malloc64(sizeof(ColvecSource) *
                              (sqlite3_uint64)(pSegs->nSeg + 1));
      if (aSrc == NULL) return SQLITE_NOMEM;
      /* the oldest first, as many as the budget holds whole */
      for (i = 0; i < pSegs->nSeg; i++) {
        ColvecSegHandle *hi = pSegs->apSeg[i];
        int64_t nLive = hi->nRow - hi->nTomb;
        if (!colvecIndexPending(hi, pSegs->pConfig)) continue;
        if (nTaken + nLive > nBudget) {
          if (nSrc == 0) h = hi; /* the oldest is too big: in steps */
          break;
        }
        aSrc[nSrc].pBatch = NULL;
        aSrc[nSrc].iFirst = 0;
        aSrc[nSrc++].pSeg = hi;
        nTaken += nLive;
      }
      if (nSrc > 0) {
        rc = colvecCompactWrite(pSegs, pStorage, aSrc, nSrc, 0, pzErr);
        nBudget -= nTaken;
      }
      sqlite3_free(aSrc);
      if (nSrc > 0) continue;
      if (h == NULL) break; /* nothing pending */
      rc = compactJobStart(pSegs, h, ppJob, pzErr);
      if (rc != SQLITE_OK) break;
    }
    /* a step of the job: nBudget more rows into every column's graph
    ** (they move together: the same rows, the same batches) */
    nBefore = -1;
    nAfter = (*ppJob)->nRow;
    for (i = 0; rc == SQLITE_OK && i < (*ppJob)->nCol; i++) {
      ColvecIndexJob *pCol = (*ppJob)->apCol[i];
      if (pCol == NULL) continue;
      if (nBefore < 0) nBefore = colvecIndexHnswJobCount(pCol);
      rc = colvecIndexHnswJobStep(pCol, nBudget, &tick);
      if (rc == COLVEC_INTERRUPT) {
        rc = colvecTickError(pzErr);
      } else if (rc == COLVEC_NOMEM) {
        rc = SQLITE_NOMEM;
      } else if (rc != COLVEC_OK) {
        *pzErr = sqlite3_mprintf("colvec: building a graph failed");
        rc = SQLITE_ERROR;
      }
      if (rc == SQLITE_OK) nAfter = colvecIndexHnswJobCount(pCol);
    }
    if (rc != SQLITE_OK) {
      colvecCompactJobFree(*ppJob);
      *ppJob = NULL;
      break;
    }
    nBudget -= nBefore < 0 ? 0 : nAfter - nBefore;
    /* the rewrite reads every row of the segment and measures the new
    ** graph's recall: it counts as the segment's rows against the budget,
    ** and after a step that completed the graph it waits for the next
    ** command unless what is left of the budget covers it, so that a
    ** paced step either builds or rewrites */
    if (nAfter == (*ppJob)->nRow &&
        (nBefore == nAfter || nBefore < 0 || nBudget >= (*ppJob)->nRow)) {
      ColvecSource src;
      src.pBatch = NULL;
      src.iFirst = 0;
      src.pSeg = h;
      nBudget -= (*ppJob)->nRow;
      rc = compactWriteWith(pSegs, pStorage, &src, 1, 0, *ppJob, pzErr);
      colvecCompactJobFree(*ppJob);
      *ppJob = NULL;
    } else {
      break;
    }
  }
  return rc;
}

/*
** Makes the transactions committed so far durable, before cleanup deletes
** a file that one of them dropped. SQLite does not promise it in every
** mode: in DELETE journal mode with synchronous=FULL the delete of the
** journal is not synced, so after a power cut the journal can come back
** hot and roll the last commit back, to a state whose manifest still names
** the file; in WAL mode with synchronous=NORMAL the WAL is synced only at
** checkpoints. So in WAL mode the WAL is synced (through
** SQLITE_FCNTL_JOURNAL_POINTER), otherwise the database's folder, which
** holds the journal. Returns SQLITE_OK or an error code. A database
** without a file has nothing to sync (its store is not durable).
*/
static int compactSyncCommitted(ColvecStorage *pStorage) {
  const ColvecConfig *pC = pStorage->pConfig;
  const ColvecStore *pStore = colvecFolderDbStore(pStorage->db, pC->zDb);
  char *zFile = colvecFolderDbFile(pStorage->db, pC->zDb);
  int rc = SQLITE_OK;
  if (zFile == NULL) return SQLITE_NOMEM;
  if (!pStore->bDurable) {
    /* nothing to make durable */
  } else if (colvecStorageIsWal(pStorage)) {
    sqlite3_file *pWal = NULL;
    if (sqlite3_file_control(pStorage->db, pC->zDb,
                             SQLITE_FCNTL_JOURNAL_POINTER,
                             &pWal) == SQLITE_OK &&
        pWal && pWal->pMethods) {
      rc = pWal->pMethods->xSync(pWal, SQLITE_SYNC_NORMAL);
    }
  } else if (pStore->xSyncParent(zFile, NULL) != COLVEC_OK) {
    rc = SQLITE_IOERR;
  }
  sqlite3_free(zFile);
  return rc;
}

/*
** Deletes files nothing needs; see colvecInt.h.
**
** iGen is the generation of the current write transaction (the one it has,
** or would get by compacting). A trash row of generation g >= 0 was dropped
** by the committed transaction g < iGen: rollback-journal readers block a
** commit, so none can hold a snapshot older than the last commit and the
** file goes now (g <= iGen - 1); a WAL reader may, so the file stays while
** g > iGen - 1 - COLVEC_WAL_KEEP. A row of generation -g was created and
** dropped inside transaction g: kept only while g is the current one and
** a ROLLBACK TO could name it again, which bCommit says it cannot (no
** generation is 0, so iLive 0 keeps none of them; whether the transaction
** then commits or rolls back, no state names the file). What the current
** transaction dropped
** is kept: it may still roll back. Before the first file is deleted the
** commits so far are made durable (compactSyncCommitted); after the last
** one the folder is fsynced before the trash rows go, so that no power cut
** brings back a file that no committed row names. When one of those syncs
** or an unlink fails, the trash rows stay and a later cleanup tries again.
*/
int colvecCompactCleanup(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                         int bCommit, char **pzErr) {
  char **azName = NULL;
  int nName = 0, i, rc = SQLITE_OK, bKeepTrash = 0, nUnlink = 0;
  int bSynced = 0; /* earlier commits made durable: 1, failed: -1 */
  sqlite3_int64 iGen = pStorage->iTxnGen, iKeep, iLive;
  ColvecErr err;
  if (iGen < 0) {
    /* damaged counters delete nothing */
    rc = colvecStorageCounters(pStorage, NULL, &iGen, pzErr);
    if (rc != SQLITE_OK) return rc;
    iGen++;
  }
  iKeep = iGen - 1 - (colvecStorageIsWal(pStorage) ? COLVEC_WAL_KEEP : 0);
  iLive = bCommit ? 0 : iGen; /* whose created-and-dropped files stay */
  err.iErrno = 0;
  if (pSegs->bNoDir) {
    /* a file or a link where the folder should be: nothing is deleted
    ** through it, and the trash rows stay */
    bKeepTrash = 1;
  } else if (pSegs->pStore->xListDir(pSegs->zDir, NULL, &azName, &nName,
                                     &err) != COLVEC_OK) {
    /* no folder: no file to delete, but trash rows to drop; a folder that
    ** cannot be listed keeps them, so that a later cleanup deletes their
    ** files (a file no row names would be reported by integrity-check) */
    nName = 0;
    if (err.iErrno != ENOENT) bKeepTrash = 1;
  }
  for (i = 0; rc == SQLITE_OK && i < nName; i++) {
    int64_t iSegid;
    int bNeeded;
    if (!colvecFolderParseName(azName[i], &iSegid)) continue;
    bNeeded = colvecStorageSegNeeded(pStorage, iSegid, iKeep, iLive, 0);
    if (bNeeded < 0) {
      rc = -bNeeded;
    } else if (!bNeeded) {
      char *zPath =
          sqlite3_mprintf("%s" COLVEC_OS_SEP "%s", pSegs->zDir, azName[i]);
      if (zPath == NULL) {
        rc = SQLITE_NOMEM;
      } else {
        /* the commits that dropped the file first become durable (else
        ** nothing is deleted); failing is harmless: the trash rows stay,
        ** a later cleanup tries again */
        if (bSynced == 0) {
          bSynced = compactSyncCommitted(pStorage) == SQLITE_OK ? 1 : -1;
        }
        if (bSynced < 0 || pSegs->pStore->xUnlink(zPath, NULL) != COLVEC_OK) {
          bKeepTrash = 1;
        } else {
          nUnlink++;
        }
        sqlite3_free(zPath);
      }
    }
  }
  colvecOsListFree(azName, nName);
  if (rc == SQLITE_OK && nUnlink > 0 &&
      pSegs->pStore->xSyncDir(pSegs->zDir, NULL) != COLVEC_OK) {
    /* the unlinks must be durable before the commit that forgets the
    ** files: after a power cut a file no row names must not come back */
    bKeepTrash = 1;
  }
  if (rc == SQLITE_OK && !bKeepTrash) {
    rc = colvecStorageTrashPrune(pStorage, iKeep, iLive, pzErr);
  }
  return rc;
}

/* Checks that every older segment file is named; see colvecInt.h. */
int colvecCompactCheckFiles(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                            int bCountersOnly, char **pzErr) {
  char **azName = NULL;
  int nName = 0, i, rc;
  sqlite3_int64 iNext = 0;
  rc = colvecStorageCounters(pStorage, &iNext, NULL, pzErr);
  if (rc != SQLITE_OK) {
    if (rc == COLVEC_CORRUPT_VTAB) {
      char *zMsg = sqlite3_mprintf("colvec: integrity-check: %s",
                                   *pzErr ? *pzErr + 8 : "");
      sqlite3_free(*pzErr);
      *pzErr = zMsg;
    }
    return rc;
  }
  if (bCountersOnly || pSegs->bNoDir) return SQLITE_OK;
  if (pSegs->pStore->xListDir(pSegs->zDir, ".seg", &azName, &nName, NULL) !=
      COLVEC_OK) {
    return SQLITE_OK; /* no folder: missing files are found by opening */
  }
  for (i = 0; rc == SQLITE_OK && i < nName; i++) {
    int64_t iSegid;
    if (!colvecFolderParseName(azName[i], &iSegid) || iSegid >= iNext) continue;
    rc = colvecStorageSegNamed(pStorage, iSegid, azName[i], pzErr);
  }
  colvecOsListFree(azName, nName);
  return rc;
}
