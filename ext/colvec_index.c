/*
** colvec_index.c — the nearest-neighbour index of a segment's vector
** column, whatever its type: the table of index types and the one choice
** among them, what every type shares (the quantizer and its codes, the
** float32 vectors), the exact-scan type, writing at compaction, opening
** (cached in the segment handle's per-column slot) and searching. The
** HNSW type is in colvec_index_hnsw.c, rescoring (which every type calls)
** in colvec_rescore.c. See colvecInt.h.
*/
#include "colvecInt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Filtered searches with at most this many passing rows scan exactly. */
#define INDEX_EXACT_MAX_ROWS 20000

/*
** A filter passing at least 1 / INDEX_TWOHOP_SHARE of a segment's rows
** (and few enough to be scanned) is first searched through the graph with
** the two-hop expansion (colvec_hnsw.c:hnswTwoHop), which scores passing
** rows only; where the passing rows are sparse near the query (a filter
** anti-correlated with it) it starts from passing rows spread over the
** segment (colvec_index_hnsw.c:indexSeeds); when it reaches too few, the
** rows are scanned. Measured on Fashion-MNIST (60,000 rows): at 10 % the
** two-hop
** search scored ~440 codes per query instead of the scan's 6,000, at 5 %
** ~300; at 1 % two hops reach too few passing rows. Fewer than
** INDEX_TWOHOP_MIN_ROWS passing rows are scanned: the graph would score
** about as many.
*/
#define INDEX_TWOHOP_SHARE 20
#define INDEX_TWOHOP_MIN_ROWS 2048

/* Codes estimated per batch-kernel call by the scan on codes. */
#define INDEX_SCAN_BATCH 64

static const ColvecIndexMethods indexExactMethods;
static int indexColumnPending(ColvecSegHandle *h, const ColvecColumn *pCol,
                              int iCol);

/*
** The index types, in order of preference: a segment column is of the
** first type whose layout part it has (at write: the first whose part the
** layout gives it); the exact scan, which has none, comes last.
*/
static const ColvecIndexMethods *const aIndexType[] = {
    &colvecIndexHnswMethods, /* a graph (COLVEC_LAYOUT_GRAPH) */
    &indexExactMethods       /* no structure: every passing row is scored */
};

/*
** The index type of a segment column that has (or gets) the layout parts
** of mask mPart ((1 << COLVEC_LAYOUT_*) bits). The one place that chooses
** between a graph and an exact scan for a segment.
*/
static const ColvecIndexMethods *indexType(int mPart) {
  int i;
  for (i = 0; i < (int)(sizeof(aIndexType) / sizeof(aIndexType[0])) - 1; i++) {
    if (mPart & (1 << aIndexType[i]->ePart)) return aIndexType[i];
  }
  return &indexExactMethods;
}

/* Frees an opened index (NULL allowed); the destructor of its slot. */
static void indexFree(void *pArg) {
  ColvecSegIndex *p = (ColvecSegIndex *)pArg;
  if (p) {
    if (p->pState) p->pMethods->xFree(p->pState);
    colvecQuantFree(p->pQuant);
    sqlite3_free(p->pCodeOwned);
    sqlite3_free(p->pStateOwned);
    sqlite3_free(p->aExactRow);
    sqlite3_free(p->aExact);
    sqlite3_free(p);
  }
}

/* Frees the scratch buffers. */
void colvecIndexScratchFree(ColvecIndexScratch *p) {
  colvecHnswSearchFree(p->pSearch);
  colvecQuantQueryClear(&p->qq);
  sqlite3_free(p->aNode);
  sqlite3_free(p->aDist);
  sqlite3_free(p->apVec);
  sqlite3_free(p->pBuf);
  memset(p, 0, sizeof(*p));
}

/*
** Fills pB's list and bitmap of the rows kept exact from quantizer pQuant's
** outliers (nRow rows; the caller frees both arrays). Returns COLVEC_OK or
** COLVEC_NOMEM.
*/
static int indexExactRows(const ColvecQuant *pQuant, int64_t nRow,
                          ColvecIndexBuild *pB, uint32_t **paRow,
                          uint8_t **paBits) {
  int64_t n = 0, i;
  const int64_t *aOut = colvecQuantOutliers(pQuant, &n);
  *paRow = NULL;
  *paBits = NULL;
  if (n == 0) return COLVEC_OK;
  *paRow = sqlite3_malloc64(sizeof(uint32_t) * (sqlite3_uint64)n);
  *paBits = sqlite3_malloc64((sqlite3_uint64)(nRow + 7) / 8);
  if (*paRow == NULL || *paBits == NULL) return COLVEC_NOMEM;
  memset(*paBits, 0, (size_t)(nRow + 7) / 8);
  for (i = 0; i < n; i++) {
    (*paRow)[i] = (uint32_t)aOut[i];
    (*paBits)[aOut[i] >> 3] |= (uint8_t)(1 << (aOut[i] & 7));
  }
  pB->aExactRow = *paRow;
  pB->aExact = *paBits;
  pB->nExact = n;
  return COLVEC_OK;
}

/*
** Writes the index sections of one column; see colvecInt.h. Everything is
** built in memory first (quantizer, codes, graph), the graph measures its
** recall, and only then are the parts written, in layout order: quantizer,
** codes and exact rows unless the codes fell below the floor, the graph
** unless the vectors did too, and the recall figures.
*/
int colvecIndexWrite(ColvecSegWriter *pW, ColvecTick *pTick,
                     const ColvecConfig *pC, int iCol, const void *aVec,
                     int64_t nRow, const int64_t *aRowid, int bDefer,
                     ColvecIndexJob *pJob, char **pzErr) {
  const ColvecColumn *pCol = &pC->aCol[iCol];
  int mPart = colvecLayoutIndexParts(pCol, nRow) &
              ~(bDefer ? 1 << COLVEC_LAYOUT_GRAPH : 0);
  ColvecQuant *pQuant = NULL;
  const ColvecIndexMethods *pType = indexType(mPart);
  ColvecIndexBuild b;
  uint8_t *aCode = NULL, *aSer = NULL, *aExactBits = NULL;
  uint32_t *aExactRow = NULL;
  int64_t nSer = 0, nCode = 0;
  int rc = COLVEC_OK, bCodes, bGraph;
  memset(&b, 0, sizeof(b));
  b.pJob = pJob;
  if (mPart & (1 << COLVEC_LAYOUT_QUANT)) {
    const float *aF32 = (const float *)aVec;
    /* a graph built in steps trained the same quantizer on these rows and
    ** encoded them at its first step: taken over, not made again */
    int bTaken = pCol->eQuant == COLVEC_QUANT_INT8 &&
                 colvecIndexHnswJobTake(pJob, aRowid, nRow, &pQuant, &aCode);
    if (!bTaken) {
      rc = colvecQuantTrainWith((ColvecQuantType)pCol->eQuant, pCol->eMetric,
                                pCol->nDim, aF32, nRow, pCol->nDim,
                                &pTick->hook, &pQuant);
    }
    if (rc == COLVEC_OK) {
      nSer = colvecQuantSerializedBytes(pQuant);
      nCode = colvecQuantCodeBytes(pQuant);
      aSer = sqlite3_malloc64((sqlite3_uint64)nSer + 8);
      if (!bTaken) aCode = sqlite3_malloc64((sqlite3_uint64)(nCode * nRow) + 8);
      if (aSer == NULL || aCode == NULL) {
        rc = COLVEC_NOMEM;
      } else {
        colvecQuantSerialize(pQuant, aSer);
      }
      if (rc == COLVEC_OK && !bTaken) {
        rc = colvecQuantEncodeWith(pQuant, aF32, nRow, pCol->nDim, &pTick->hook,
                                   aCode);
      }
    }
    if (rc == COLVEC_OK) {
      rc = indexExactRows(pQuant, nRow, &b, &aExactRow, &aExactBits);
    }
    b.pQuant = pQuant;
    b.aCode = aCode;
  }
  if (rc == COLVEC_OK && pType->xBuild) {
    rc = pType->xBuild(pTick, pC, iCol, aVec, nRow, aRowid, &b);
  }
  if (rc == COLVEC_OK && bDefer && pQuant &&
      (colvecLayoutIndexParts(pCol, nRow) & (1 << COLVEC_LAYOUT_GRAPH))) {
    /* the codes are scanned until the graph is built: kept only if that
    ** scan finds the rows a graph on them would have to */
    double r = 0.0;
    rc = colvecIndexHnswMeasureScan(pTick, pC, iCol, aVec, nRow, &b, &r);
    if (!(r >= COLVEC_RECALL_FLOOR)) b.recall.eUsed = COLVEC_RECALL_EXACT;
  }
  bCodes = pQuant && b.recall.eUsed == COLVEC_RECALL_CODES;
  bGraph = b.aPart && b.recall.eUsed != COLVEC_RECALL_EXACT;
  if (rc == COLVEC_OK && bCodes) {
    rc = colvecLayoutWritePart(pW, iCol, COLVEC_LAYOUT_QUANT, 0, aSer, nSer);
  }
  if (rc == COLVEC_OK && bCodes) {
    rc = colvecLayoutWritePart(pW, iCol, COLVEC_LAYOUT_CODES, (int)nCode, aCode,
                               nCode * nRow);
  }
  if (rc == COLVEC_OK && bCodes && b.nExact > 0) {
    uint8_t *a = (uint8_t *)aExactRow; /* rewritten little-endian in place */
    int64_t i;
    int j;
    for (i = 0; i < b.nExact; i++) {
      uint32_t u = aExactRow[i];
      for (j = 0; j < 4; j++)
        a[4 * i + j] = (uint8_t)(u >> (8 * j));
    }
    rc = colvecLayoutWritePart(pW, iCol, COLVEC_LAYOUT_EXACT, 4, a,
                               4 * b.nExact);
  }
  if (rc == COLVEC_OK && bGraph) {
    rc = colvecLayoutWritePart(pW, iCol, pType->ePart, 0, b.aPart, b.nPart);
  }
  if (rc == COLVEC_OK && b.aPart) {
    uint8_t aRec[COLVEC_RECALL_BYTES];
    colvecHnswRecallEncode(&b.recall, aRec);
    rc = colvecLayoutWritePart(pW, iCol, COLVEC_LAYOUT_RECALL, 0, aRec,
                               COLVEC_RECALL_BYTES);
  }
  colvecQuantFree(pQuant);
  sqlite3_free(aSer);
  sqlite3_free(aCode);
  sqlite3_free(aExactRow);
  sqlite3_free(aExactBits);
  sqlite3_free(b.aPart);
  if (rc == COLVEC_INTERRUPT) return colvecTickError(pzErr);
  /* a failed write keeps the writer's message (the file, the disk full),
  ** which the caller reports */
  if (rc != COLVEC_OK && rc != COLVEC_IOERR && *pzErr == NULL) {
    *pzErr = sqlite3_mprintf("colvec: building the index of %s failed (%s)",
                             pCol->zName,
                             rc == COLVEC_NOMEM ? "out of memory" : "error");
  }
  return rc == COLVEC_NOMEM ? SQLITE_NOMEM : rc;
}

/*
** Loads the rows of column iCol of h that its codes leave out (the EXACT
** part, if any) into p->aExactRow and their bitmap p->aExact, checking
** that they ascend strictly below the row count. Returns SQLITE_OK,
** SQLITE_NOMEM, SQLITE_IOERR_READ (*pzErr set) or COLVEC_CORRUPT_VTAB.
*/
static int indexOpenExact(ColvecSegHandle *h, int iCol, ColvecSegIndex *p,
                          char **pzErr) {
  void *pOwned = NULL;
  int64_t n = 0, i;
  int rc = SQLITE_OK;
  const uint8_t *a = (const uint8_t *)colvecLayoutPart(
      h, iCol, COLVEC_LAYOUT_EXACT, &pOwned, &n, pzErr, &rc);
  if (a == NULL) {
    sqlite3_free(pOwned);
    return rc;
  }
  p->nExact = n / 4;
  p->aExactRow =
      sqlite3_malloc64(sizeof(uint32_t) * (sqlite3_uint64)(p->nExact + 1));
  p->aExact = sqlite3_malloc64((sqlite3_uint64)(h->nRow + 7) / 8 + 1);
  if (p->aExactRow == NULL || p->aExact == NULL) {
    rc = SQLITE_NOMEM;
  } else {
    memset(p->aExact, 0, (size_t)(h->nRow + 7) / 8 + 1);
    for (i = 0; i < p->nExact; i++) {
      const uint8_t *pU = a + 4 * i; /* little-endian */
      uint32_t u = (uint32_t)pU[0] | ((uint32_t)pU[1] << 8) |
                   ((uint32_t)pU[2] << 16) | ((uint32_t)pU[3] << 24);
      if ((int64_t)u >= h->nRow || (i > 0 && u <= p->aExactRow[i - 1])) {
        rc = COLVEC_CORRUPT_VTAB;
        break;
      }
      p->aExactRow[i] = u;
      p->aExact[u >> 3] |= (uint8_t)(1 << (u & 7));
    }
  }
  sqlite3_free(pOwned);
  return rc;
}

/*
** Opens (once per segment and column) the index of column iCol of h.
** Returns SQLITE_OK with *pp set, or COLVEC_CORRUPT_VTAB, SQLITE_NOMEM or
** SQLITE_IOERR_READ (a failed read, access=file).
*/
static int indexOpen(ColvecSegTable *pSegs, ColvecSegHandle *h, int iCol,
                     ColvecSegIndex **pp, char **pzErr) {
  const ColvecConfig *pC = pSegs->pConfig;
  const ColvecColumn *pCol = &pC->aCol[iCol];
  ColvecSegIndex *p;
  const uint8_t *a;
  int64_t n = 0;
  int rc = SQLITE_OK;
  ColvecSegSlot *pSlot = colvecSegmentSlot(h, pC, iCol);
  if (pSlot == NULL) return SQLITE_NOMEM;
  if (pSlot->p) {
    *pp = (ColvecSegIndex *)pSlot->p;
    return SQLITE_OK;
  }
  p = sqlite3_malloc(sizeof(ColvecSegIndex));
  if (p == NULL) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->aVecBase = h->aCol[iCol].aVec;
  a = (const uint8_t *)colvecLayoutPart(h, iCol, COLVEC_LAYOUT_QUANT,
                                        &p->pCodeOwned, &n, pzErr, &rc);
  if (a) {
    void *pTmp = p->pCodeOwned;
    int rcQ = colvecQuantDeserialize(a, n, &p->pQuant);
    p->pCodeOwned = NULL;
    if (rcQ == COLVEC_NOMEM) {
      rc = SQLITE_NOMEM;
    } else if (rcQ != COLVEC_OK || colvecQuantDim(p->pQuant) != pCol->nDim) {
      rc = COLVEC_CORRUPT_VTAB;
    }
    sqlite3_free(pTmp);
    if (rc == SQLITE_OK) {
      p->nCodeBytes = colvecQuantCodeBytes(p->pQuant);
      p->aCode = (const uint8_t *)colvecLayoutPart(
          h, iCol, COLVEC_LAYOUT_CODES, &p->pCodeOwned, &n, pzErr, &rc);
      if (rc != SQLITE_OK) {
        /* the read's or the allocation's error, as it is */
      } else if (p->aCode == NULL || n != (int64_t)p->nCodeBytes * h->nRow) {
        rc = COLVEC_CORRUPT_VTAB;
      } else if (p->pCodeOwned == NULL) {
        /* the codes and the graph are the working set of every search:
        ** fault them in once now rather than a page at a time later */
        colvecOsAdvise(p->aCode, n, COLVEC_ADVICE_POPULATE);
      }
    }
  }
  if (rc == SQLITE_OK && p->pQuant) {
    rc = indexOpenExact(h, iCol, p, pzErr);
  }
  p->pMethods = indexType(colvecLayoutPartMask(h, iCol));
  if (rc == SQLITE_OK && p->pMethods->xOpen) {
    a = (const uint8_t *)colvecLayoutPart(h, iCol, p->pMethods->ePart,
                                          &p->pStateOwned, &n, pzErr, &rc);
    if (a && p->pStateOwned == NULL) {
      colvecOsAdvise(a, n, COLVEC_ADVICE_POPULATE);
    }
    if (a) {
      int rcT = p->pMethods->xOpen(a, n, h->nRow, &p->pState);
      if (rcT == COLVEC_NOMEM) {
        rc = SQLITE_NOMEM;
      } else if (rcT != COLVEC_OK) {
        rc = COLVEC_CORRUPT_VTAB;
      }
    } else if (rc == SQLITE_OK) {
      p->pMethods = &indexExactMethods; /* unreachable: the part is there */
    }
  }
  if (rc == SQLITE_NOMEM) {
    indexFree(p);
    return SQLITE_NOMEM;
  }
  if (rc != SQLITE_OK) {
    if (*pzErr == NULL) {
      *pzErr = sqlite3_mprintf(
          "colvec: segment %lld of table %s has a damaged index for %s",
          (long long)h->iSegid, pC->zName, pCol->zName);
    }
    indexFree(p);
    return (rc & 0xff) == SQLITE_IOERR ? rc : COLVEC_CORRUPT_VTAB;
  }
  pSlot->p = p;
  pSlot->xFree = indexFree;
  *pp = p;
  return SQLITE_OK;
}

/*
** The exact path: offers to pTopk every live row of segment h that passes
** the filters (bitmap aBits; NULL: every row) with its exact distance to q.
** Vectors come from the index's cached base pointer when the segment is
** mapped, else are read one by one (access=file). Returns SQLITE_OK or an
** error with *pzErr set.
*/
static int indexExact(ColvecSegTable *pSegs, ColvecSegHandle *h,
                      ColvecSegIndex *pIdx, ColvecIndexScratch *s,
                      const ColvecKnnQuery *q, const uint8_t *aBits,
                      ColvecTopk *pTopk, char **pzErr) {
  const ColvecColumn *pCol = &pSegs->pConfig->aCol[q->iCol];
  const ColvecKernels *pK = colvecKernelsBest();
  const uint8_t *aBase = pIdx->aVecBase;
  void *pBuf = NULL;
  int64_t i, nSeen = 0;
  int rc = SQLITE_OK;
  ColvecTick tick;
  colvecTickInit(&tick, pSegs->db);
  if (aBase == NULL) {
    pBuf = sqlite3_malloc(pCol->nByte);
    if (pBuf == NULL) return SQLITE_NOMEM;
  }
  for (i = aBits ? colvecBitmapNext(aBits, 0, h->nRow) : 0; i < h->nRow;
       i = aBits ? colvecBitmapNext(aBits, i + 1, h->nRow) : i + 1) {
    const void *pVec;
    /* asks about interrupts every 1024 rows */
    if ((nSeen++ & 1023) == 0 && colvecTickStop(&tick)) {
      rc = colvecTickError(pzErr);
      break;
    }
    if (aBase) {
      pVec = aBase + (size_t)i * (size_t)pCol->nByte;
    } else {
      pVec = colvecLayoutVector(h, pCol, q->iCol, i, pBuf, pzErr, &rc);
      if (pVec == NULL) break;
    }
    colvecTopkPush(pTopk,
                   colvecDistance(pK, pCol->eMetric, pCol->eElem, q->pVec, pVec,
                                  pCol->nDim),
                   h->aRowid[i], i);
  }
  s->stat.zWay = "scan vectors";
  s->stat.nVisit += nSeen;
  sqlite3_free(pBuf);
  return rc;
}

/* The exact-scan index type: nothing built, nothing opened. */
static const ColvecIndexMethods indexExactMethods = {
    "exact",    /* zName */
    -1,         /* ePart: none */
    NULL,       /* xBuild */
    NULL,       /* xOpen */
    indexExact, /* xSearch */
    NULL        /* xFree */
};

/*
** Bits 64 x iWord .. 64 x iWord + 63 of bitmap aBits (bit i of byte i / 8
** = row 8 x (i / 8) + i % 8) as one word, row 64 x iWord in bit 0; every
** row when aBits is NULL; rows at or past nRow clear.
*/
static uint64_t indexBits64(const uint8_t *aBits, int64_t iWord, int64_t nRow) {
  int64_t iRow = iWord * 64, iByte, nByte = (nRow + 7) / 8;
  uint64_t m = 0;
  int j;
  if (aBits == NULL) {
    m = ~(uint64_t)0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  } else if (iRow / 8 + 8 <= nByte) {
    memcpy(&m, aBits + iRow / 8, 8); /* one load */
#endif
  } else {
    for (j = 0, iByte = iRow / 8; j < 8 && iByte < nByte; j++, iByte++) {
      m |= (uint64_t)aBits[iByte] << (8 * j);
    }
  }
  if (nRow - iRow < 64) m &= ((uint64_t)1 << (nRow - iRow)) - 1;
  return m;
}

/*
** Reads into aW the bit words iWord .. iWord + 7 of the passing rows
** (bitmap aBits of nRow rows; every row when NULL) as indexBits64 gives
** them, words past the last as 0. Returns whether any is non-zero. A block
** wholly inside the bitmap is one 64-byte load on little-endian CPUs:
** where a filter passes few rows, most blocks are empty and the scan
** costs about a load per 512 rows.
*/
static int indexBlock(const uint8_t *aBits, int64_t iWord, int64_t nRow,
                      uint64_t *aW) {
  uint64_t w = 0;
  int j;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (aBits && (iWord + 8) * 64 <= nRow) {
    memcpy(aW, aBits + iWord * 8, 8 * sizeof(uint64_t));
    for (j = 0; j < 8; j++)
      w |= aW[j];
    return w != 0;
  }
#endif
  for (j = 0; j < 8; j++) {
    aW[j] = (iWord + j) * 64 < nRow ? indexBits64(aBits, iWord + j, nRow) : 0;
    w |= aW[j];
  }
  return w != 0;
}

/* The index of the lowest set bit of m (not 0). */
static int indexLowBit(uint64_t m) {
  uint32_t lo = (uint32_t)m;
  return lo ? COLVEC_CTZ32(lo) : 32 + COLVEC_CTZ32((uint32_t)(m >> 32));
}

/*
** Adds the estimates of the nCode codes apCode (rows aRow of a segment) to
** the candidates pCand; aEst holds nCode floats of scratch. A candidate's
** row stands in for its rowid, which orders equal estimates the same way
** (a segment's rows are in rowid order) without reading the rowid of
** every passing row: a cache miss each when the rows are scattered.
*/
static void indexScanBatch(const ColvecQuantQuery *pqq,
                           const uint8_t *const *apCode, const uint32_t *aRow,
                           int nCode, float *aEst, ColvecTopk *pCand) {
  int j;
  colvecQuantScanBatch(pqq, apCode, nCode, aEst);
  for (j = 0; j < nCode; j++) {
    colvecTopkPush(pCand, aEst[j], aRow[j], aRow[j]);
  }
}

/*
** The exact path of a segment with codes: the codes' estimate of the
** distance of every row of h that passes the filters (aBits; NULL: every
** row, a segment whose graph is deferred), the nWant =
** k x oversampling best kept as candidates (the same estimates and count
** as a graph search's), the rows the codes leave out added with their
** exact distances, then rescored into pTopk as a graph's candidates are.
** It reads a code per passing row instead of a float32 vector (a quarter
** of the bytes for int8 codes, a thirty-second for bit) and nWant vectors.
** Returns SQLITE_OK or an error with *pzErr set.
*/
static int indexScanCodes(ColvecSegTable *pSegs, ColvecSegHandle *h,
                          ColvecSegIndex *pIdx, ColvecIndexScratch *s,
                          const ColvecKnnQuery *q, const uint8_t *aBits,
                          ColvecTopk *pTopk, char **pzErr) {
  const ColvecConfig *pC = pSegs->pConfig;
  const ColvecColumn *pCol = &pC->aCol[q->iCol];
  const uint8_t *apCode[INDEX_SCAN_BATCH];
  uint32_t aRow[INDEX_SCAN_BATCH];
  float aEst[INDEX_SCAN_BATCH];
  ColvecTopk cand;
  ColvecTick tick;
  int64_t nWant = (int64_t)ceil(q->k * q->rOversample), i, nSeen = 0;
  int64_t iBlock, iWord, nWord = (h->nRow + 63) / 64, nTick = 0;
  int n = 0, nOut = 0, j, rc;
  if (nWant < q->k) nWant = q->k;
  if (nWant > h->nRow) nWant = h->nRow;
  memset(&cand, 0, sizeof(cand));
  rc = colvecRescoreReserve(s, (int)(nWant + pIdx->nExact), pCol->nByte);
  if (rc == SQLITE_OK &&
      (colvecQuantQueryPrepare(pIdx->pQuant, (const float *)q->pVec, &s->qq) !=
           COLVEC_OK ||
       colvecQuantQueryPrepareScan(&s->qq) != COLVEC_OK ||
       colvecTopkInit(&cand, (int)nWant) != COLVEC_OK)) {
    rc = SQLITE_NOMEM;
  }
  colvecTickInit(&tick, pSegs->db);
  /* the passing rows 512 at a time, by their bits (no call per row) */
  for (iBlock = 0; rc == SQLITE_OK && iBlock < nWord; iBlock += 8) {
    uint64_t aW[8];
    if (!indexBlock(aBits, iBlock, h->nRow, aW)) continue;
    /* asks about interrupts every 1024 rows */
    if (nSeen >= nTick) {
      nTick = nSeen + 1024;
      if (colvecTickStop(&tick)) {
        rc = colvecTickError(pzErr);
        break;
      }
    }
    for (iWord = iBlock; iWord < iBlock + 8; iWord++) {
      uint64_t m = aW[iWord - iBlock];
      if (m == 0) continue;
      nSeen += COLVEC_POPCOUNT64(m);
      if (pIdx->aExact) m &= ~indexBits64(pIdx->aExact, iWord, h->nRow);
      while (m) {
        i = iWord * 64 + indexLowBit(m);
        m &= m - 1;
        apCode[n] = pIdx->aCode + (size_t)i * (size_t)pIdx->nCodeBytes;
        aRow[n++] = (uint32_t)i;
        if (n == INDEX_SCAN_BATCH) {
          indexScanBatch(&s->qq, apCode, aRow, n, aEst, &cand);
          n = 0;
        }
      }
    }
  }
  if (rc == SQLITE_OK && n > 0) {
    indexScanBatch(&s->qq, apCode, aRow, n, aEst, &cand);
  }
  for (j = 0; rc == SQLITE_OK && j < cand.nHit; j++) {
    s->aNode[nOut] = (uint32_t)cand.aHit[j].iRow;
    s->aDist[nOut++] = (float)cand.aHit[j].rDist;
  }
  colvecTopkFree(&cand);
  s->stat.zWay = "scan codes";
  s->stat.nVisit += nSeen;
  /* the rows the codes leave out, with their exact distances */
  for (i = 0; rc == SQLITE_OK && i < pIdx->nExact; i++) {
    uint32_t iRow = pIdx->aExactRow[i];
    const void *pVec;
    if (aBits && !((aBits[iRow >> 3] >> (iRow & 7)) & 1)) continue;
    if (pIdx->aVecBase) {
      pVec = pIdx->aVecBase + (size_t)iRow * (size_t)pCol->nByte;
    } else {
      pVec = colvecLayoutVector(h, pCol, q->iCol, iRow, s->pBuf, pzErr, &rc);
      if (pVec == NULL) break;
    }
    s->aNode[nOut] = iRow;
    s->aDist[nOut++] =
        (float)colvecDistance(colvecKernelsBest(), pCol->eMetric, pCol->eElem,
                              q->pVec, pVec, pCol->nDim);
  }
  if (rc != SQLITE_OK) return rc;
  return colvecRescoreFinish(h, pIdx, s, q, pCol, pC->ePrefault, nOut, pTopk,
                             pzErr);
}

/* The scan on codes: chosen per search (colvecIndexSearch), never stored. */
static const ColvecIndexMethods indexCodesMethods = {
    "codes",        /* zName */
    -1,             /* ePart: none */
    NULL,           /* xBuild */
    NULL,           /* xOpen */
    indexScanCodes, /* xSearch */
    NULL            /* xFree */
};

/*
** A graph search of segment h for the k nearest rows in q->range. The
** search without bounds rescores nWant = ceil(k x oversampling) candidates
** from a beam of ef and keeps the k best; here the candidates out of range
** (nearer than a lower bound: the pages already read) do not count, so the
** search is repeated with 4 times the candidates and beam until as many
** candidates as that beam (max(ef, nWant)) fell in range, or a candidate lay
** beyond the upper bound (a wider search
** finds only rows out of range), and once it would reach half the nPass
** rows, they are scanned exactly instead. Each pass fills a top-k of its
** own; the last one's rows are offered to pTopk. Returns SQLITE_OK or an
** error with *pzErr set.
*/
static int indexSearchRange(ColvecSegTable *pSegs, ColvecSegHandle *h,
                            ColvecSegIndex *pIdx, ColvecIndexScratch *s,
                            const ColvecKnnQuery *q, const uint8_t *aBits,
                            int64_t nPass, ColvecTopk *pTopk, char **pzErr) {
  ColvecKnnQuery qr = *q;
  ColvecTopk mine;
  int64_t nWant = (int64_t)ceil(q->k * q->rOversample), nNeed;
  int rc = SQLITE_OK, i;
  if (colvecTopkInit(&mine, q->k) != COLVEC_OK) return SQLITE_NOMEM;
  if (nWant < q->k) nWant = q->k;
  nNeed = q->ef > 0 ? q->ef : colvecHnswDefaultEf(h->nRow);
  if (nNeed < nWant) nNeed = nWant;
  for (;;) {
    const ColvecIndexMethods *pType = pIdx->pMethods;
    int bExact = 2 * nWant >= nPass;
    if (bExact) pType = &indexExactMethods;
    mine.nHit = 0;
    mine.iSrc = pTopk->iSrc;
    colvecTopkSetRange(&mine, &q->range);
    rc = pType->xSearch(pSegs, h, pIdx, s, &qr, aBits, &mine, pzErr);
    if (rc != SQLITE_OK || bExact || mine.nOfferIn >= nNeed) break;
    if (!colvecTopkInRange(&q->range, mine.rOfferMax) &&
        mine.rOfferMax > q->range.rLo) {
      break; /* candidates went past the upper bound */
    }
    nWant *= 4;
    qr.rOversample = (double)nWant / q->k;
    qr.ef = nWant > (int64_t)qr.ef ? (int)nWant : qr.ef;
  }
  for (i = 0; rc == SQLITE_OK && i < mine.nHit; i++) {
    colvecTopkPush(pTopk, mine.aHit[i].rDist, mine.aHit[i].iRowid,
                   mine.aHit[i].iRow);
  }
  colvecTopkFree(&mine);
  return rc;
}

/* Searches one segment; see colvecInt.h. */
int colvecIndexSearch(ColvecSegTable *pSegs, ColvecSegHandle *h,
                      ColvecIndexScratch *s, const ColvecKnnQuery *q,
                      const uint8_t *aBits, int64_t nPass, ColvecTopk *pTopk,
                      char **pzErr) {
  const ColvecIndexMethods *pType;
  ColvecSegIndex *pIdx = NULL;
  int rc;
  if (nPass == 0) return SQLITE_OK;
  rc = indexOpen(pSegs, h, q->iCol, &pIdx, pzErr);
  if (rc != SQLITE_OK) return rc;
  /* a selective filter scans its rows exactly, whatever the type: on the
  ** codes when the segment has them and they are fewer than the rows
  ** would be vectors to read anyway (a distance range needs every row's
  ** exact distance: the vectors) */
  pType = pIdx->pMethods;
  if (pType == &indexExactMethods && pIdx->aCode && !q->bRange &&
      nPass > 2 * (int64_t)ceil(q->k * q->rOversample) &&
      indexColumnPending(h, &pSegs->pConfig->aCol[q->iCol], q->iCol)) {
    /* a deferred graph: the codes are scanned meanwhile */
    pType = &indexCodesMethods;
  } else if (aBits && (nPass <= INDEX_EXACT_MAX_ROWS || nPass * 20 < h->nRow)) {
    int64_t nWant = (int64_t)ceil(q->k * q->rOversample);
    if (pType == &colvecIndexHnswMethods && !q->bRange &&
        nPass * INDEX_TWOHOP_SHARE >= h->nRow &&
        nPass >= INDEX_TWOHOP_MIN_ROWS) {
      /* the graph, two hops through failing rows, unless the passing rows
      ** are sparse near the query */
      s->bTwoHop = 1;
      s->rPass = (double)nPass / (double)h->nRow;
      s->bGaveUp = 0;
      rc = pType->xSearch(pSegs, h, pIdx, s, q, aBits, pTopk, pzErr);
      s->bTwoHop = 0;
      if (rc != SQLITE_OK || !s->bGaveUp) return rc;
    }
    pType = &indexExactMethods;
    if (pIdx->pQuant && pIdx->aCode && !q->bRange && nPass > 2 * nWant) {
      pType = &indexCodesMethods;
    }
  }
  if (q->bRange && pType != &indexExactMethods) {
    return indexSearchRange(pSegs, h, pIdx, s, q, aBits, nPass, pTopk, pzErr);
  }
  return pType->xSearch(pSegs, h, pIdx, s, q, aBits, pTopk, pzErr);
}

/*************************************************************************
** Describing a segment's index (colvec_segments(), integrity-check).
*/

/*
** Whether the graph of column iCol (pCol) of h was deferred: the column
** should have a graph by its rows and definition, and has neither a graph
** nor a measured recall (a fallback that left the graph out keeps the
** latter). The one test of it (colvecIndexPending, the search, the
** description).
*/
static int indexColumnPending(ColvecSegHandle *h, const ColvecColumn *pCol,
                              int iCol) {
  int mWant = colvecLayoutIndexParts(pCol, h->nRow);
  int mHas = colvecLayoutPartMask(h, iCol);
  return (mWant & (1 << COLVEC_LAYOUT_GRAPH)) &&
         !(mHas & ((1 << COLVEC_LAYOUT_GRAPH) | (1 << COLVEC_LAYOUT_RECALL)));
}

/* Whether a graph of h was deferred; see colvecInt.h. */
int colvecIndexPending(ColvecSegHandle *h, const ColvecConfig *pC) {
  int iCol;
  for (iCol = 0; iCol < pC->nCol; iCol++) {
    if (indexColumnPending(h, &pC->aCol[iCol], iCol)) return 1;
  }
  return 0;
}

/*
** Returns the reason the RECALL record *pR of a vector column of nRow rows
** cannot be what colvecIndexWrite stored, given the parts kept (bCodes,
** bGraph) and whether the column is quantized (bQuant); NULL when it can.
*/
static const char *indexRecallWrong(const ColvecHnswRecall *pR, int64_t nRow,
                                    int bQuant, int bCodes, int bGraph) {
  int bCodesOk = pR->rCodes >= COLVEC_RECALL_FLOOR;
  int bVecOk = pR->rVectors >= COLVEC_RECALL_FLOOR;
  if (pR->nQuery !=
          (nRow < COLVEC_RECALL_QUERIES ? nRow : COLVEC_RECALL_QUERIES) ||
      pR->k != (nRow < COLVEC_RECALL_K ? nRow : COLVEC_RECALL_K)) {
    return "its query count does not match the rows";
  }
  if (!bQuant && pR->rCodes >= 0.0) {
    return "it measures codes the column does not have";
  }
  switch (pR->eUsed) {
  case COLVEC_RECALL_CODES:
    if (!bQuant || !bCodes || !bGraph) return "it names parts that are missing";
    if (!bCodesOk || pR->rVectors >= 0.0) {
      return "its figures do not match the codes being kept";
    }
    break;
  case COLVEC_RECALL_VECTORS:
    if (bCodes || !bGraph) return "it does not match the parts kept";
    if (bCodesOk || !bVecOk) {
      return "its figures do not match the codes being left out";
    }
    break;
  default: /* COLVEC_RECALL_EXACT */
    if (bCodes || bGraph) return "it does not match the parts kept";
    if (bCodesOk || bVecOk || pR->rVectors < 0.0) {
      return "its figures do not match the graph being left out";
    }
    break;
  }
  return NULL;
}

/* Describes a segment column's index; see colvecInt.h. */
int colvecIndexDescribe(ColvecSegHandle *h, const ColvecConfig *pC, int iCol,
                        ColvecIndexInfo *p, char **pzErr) {
  const ColvecColumn *pCol = &pC->aCol[iCol];
  int mHas = colvecLayoutPartMask(h, iCol);
  int mWant = colvecLayoutIndexParts(pCol, h->nRow);
  int bQuant = (mWant & (1 << COLVEC_LAYOUT_CODES)) != 0;
  const char *zWhy = NULL;
  void *pOwned = NULL;
  int64_t n = 0;
  const uint8_t *a;
  int rc = SQLITE_OK;
  memset(p, 0, sizeof(*p));
  p->bCodes = (mHas & (1 << COLVEC_LAYOUT_CODES)) != 0;
  p->bGraph = (mHas & (1 << COLVEC_LAYOUT_GRAPH)) != 0;
  p->eSearch = !p->bGraph  ? COLVEC_RECALL_EXACT
               : p->bCodes ? COLVEC_RECALL_CODES
                           : COLVEC_RECALL_VECTORS;
  a = (const uint8_t *)colvecLayoutPart(h, iCol, COLVEC_LAYOUT_RECALL, &pOwned,
                                        &n, pzErr, &rc);
  if (a == NULL) {
    sqlite3_free(pOwned);
    p->bPending = rc == SQLITE_OK && indexColumnPending(h, pCol, iCol);
    return rc;
  }
  if (colvecHnswRecallDecode(a, n, &p->recall) != COLVEC_OK) {
    zWhy = "it cannot be decoded";
  } else {
    zWhy = indexRecallWrong(&p->recall, h->nRow, bQuant, p->bCodes, p->bGraph);
  }
  sqlite3_free(pOwned);
  if (zWhy) {
    *pzErr = sqlite3_mprintf("colvec: segment %lld: the measured recall of "
                             "%s is damaged: %s",
                             (long long)h->iSegid, pCol->zName, zWhy);
    return *pzErr ? COLVEC_CORRUPT_VTAB : SQLITE_NOMEM;
  }
  p->bMeasured = 1;
  p->bFallback = (bQuant && !p->bCodes) ||
                 ((mWant & (1 << COLVEC_LAYOUT_GRAPH)) && !p->bGraph);
  return SQLITE_OK;
}
