/*
** colvec_index.c — the approximate-nearest-neighbour index of a segment's
** vector column: writing it at compaction (quantizer, codes, HNSW graph),
** opening it, and searching it with oversampling and float32 rescoring.
** See colvecInt.h for the sections and the search policy.
*/
#include "colvecInt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An opened index of one vector column of one segment. */
struct ColvecSegIndex {
  ColvecQuant *pQuant;     /* quantizer, or NULL: traverse on float32 */
  const uint8_t *aCode;    /* codes, nCodeBytes per row */
  int nCodeBytes;          /* bytes per code */
  void *pCodeOwned;        /* access=file: codes read into memory */
  ColvecHnsw *pGraph;      /* HNSW graph, or NULL: exact scans only */
  void *pGraphOwned;       /* access=file: graph bytes read into memory */
  const uint8_t *aVecBase; /* float32 vectors in the mapping, or NULL */
  int bWarm;               /* last rescoring found the vectors resident */
};

/* Filtered searches with at most this many passing rows scan exactly. */
#define INDEX_EXACT_MAX_ROWS 20000

/* Candidates rescored per batch-kernel call. */
#define INDEX_RESCORE_BATCH 256

/* Smallest beam width of a search. */
#define INDEX_MIN_EF 64

/* Frees an opened index (NULL allowed); the destructor of its slot. */
static void indexFree(void *pArg) {
  ColvecSegIndex *p = (ColvecSegIndex *)pArg;
  if (p) {
    colvecQuantFree(p->pQuant);
    colvecHnswFree(p->pGraph);
    sqlite3_free(p->pCodeOwned);
    sqlite3_free(p->pGraphOwned);
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

/* Build context: the contiguous vectors of the new segment. */
typedef struct IndexBuild IndexBuild;
struct IndexBuild {
  const uint8_t *aVec;     /* nRow vectors of nByte bytes */
  int nByte;               /* bytes per vector */
  int nDim;                /* dimensions */
  ColvecElem eElem;        /* element type (float32, int8 or bit) */
  ColvecMetric eMetric;    /* metric */
  const ColvecKernels *pK; /* kernels */
};

/*
** Exact distance between nodes a and b while building (thread-safe). l2 on
** float32 is left squared: the graph only compares distances.
*/
static float indexBuildDist(void *pCtx, uint32_t a, uint32_t b) {
  const IndexBuild *p = (const IndexBuild *)pCtx;
  const uint8_t *x = p->aVec + (size_t)a * p->nByte;
  const uint8_t *y = p->aVec + (size_t)b * p->nByte;
  if (p->eElem == COLVEC_ELEM_F32 && p->eMetric == COLVEC_METRIC_L2) {
    return p->pK->xL2sqF32((const float *)x, (const float *)y, p->nDim);
  }
  if (p->eElem == COLVEC_ELEM_F32 && p->eMetric == COLVEC_METRIC_DOT) {
    return -p->pK->xDotF32((const float *)x, (const float *)y, p->nDim);
  }
  return (float)colvecDistance(p->pK, p->eMetric, p->eElem, x, y, p->nDim);
}

/* Build hint: prefetches every cache line of node iNode's vector. */
static void indexBuildPrefetch(void *pCtx, uint32_t iNode) {
  const IndexBuild *p = (const IndexBuild *)pCtx;
  const uint8_t *a = p->aVec + (size_t)iNode * p->nByte;
  int i;
  for (i = 0; i < p->nByte; i += 64)
    COLVEC_PREFETCH(a + i);
}

/* Appends one section of n bytes. */
static int indexSection(ColvecSegWriter *pW, uint32_t eKind, int iCol,
                        uint32_t nElem, const void *a, int64_t n) {
  int rc = colvecSegWriterBegin(pW, eKind, (uint32_t)iCol, nElem, 0);
  if (rc == COLVEC_OK && n > 0) rc = colvecSegWriterAppend(pW, a, n);
  if (rc == COLVEC_OK) rc = colvecSegWriterEnd(pW);
  return rc;
}

/* Writes the index sections of one column; see colvecInt.h. */
int colvecIndexWrite(ColvecSegWriter *pW, ColvecTick *pTick,
                     const ColvecConfig *pC, int iCol, const void *aVec,
                     int64_t nRow, const int64_t *aRowid, char **pzErr) {
  const ColvecColumn *pCol = &pC->aCol[iCol];
  ColvecQuant *pQuant = NULL;
  ColvecHnsw *pGraph = NULL;
  uint8_t *aBuf = NULL;
  int rc = COLVEC_OK;
  if (nRow == 0) return SQLITE_OK;
  if (pCol->eElem == COLVEC_ELEM_F32 && pCol->eQuant != COLVEC_QUANT_NONE) {
    const float *aF32 = (const float *)aVec;
    int64_t nCode, i;
    rc = colvecQuantTrainWith((ColvecQuantType)pCol->eQuant, pCol->eMetric,
                              pCol->nDim, aF32, nRow, pCol->nDim, &pTick->hook,
                              &pQuant);
    if (rc == COLVEC_OK) {
      int64_t nSer = colvecQuantSerializedBytes(pQuant);
      nCode = colvecQuantCodeBytes(pQuant);
      aBuf = sqlite3_malloc64(
          (sqlite3_uint64)(nSer > nCode * nRow ? nSer : nCode * nRow) + 8);
      if (aBuf == NULL) {
        rc = COLVEC_NOMEM;
      } else {
        colvecQuantSerialize(pQuant, aBuf);
        rc = indexSection(pW, COLVEC_SEG_QUANT, iCol, 0, aBuf, nSer);
      }
      /* encoded COLVEC_QUANT_TICK vectors at a time, asking in between */
      for (i = 0; rc == COLVEC_OK && i < nRow; i += COLVEC_QUANT_TICK) {
        int64_t n = nRow - i < COLVEC_QUANT_TICK ? nRow - i : COLVEC_QUANT_TICK;
        if (colvecTickStop(pTick)) {
          rc = COLVEC_INTERRUPT;
        } else {
          rc = colvecQuantEncodeBatch(pQuant, aF32 + i * pCol->nDim, n,
                                      pCol->nDim, aBuf + i * nCode);
        }
      }
      if (rc == COLVEC_OK) {
        rc = indexSection(pW, COLVEC_SEG_CODES, iCol, (uint32_t)nCode, aBuf,
                          nCode * nRow);
      }
    }
    sqlite3_free(aBuf);
    aBuf = NULL;
  }
  if (rc == COLVEC_OK && nRow >= COLVEC_INDEX_MIN_ROWS &&
      nRow <= COLVEC_INDEX_MAX_ROWS && !pCol->bNoIndex) {
    ColvecHnswConfig cfg;
    IndexBuild ctx;
    memset(&cfg, 0, sizeof(cfg));
    cfg.nM = pCol->nM;
    cfg.nEfC = pCol->nEfC;
    cfg.nBatch = COLVEC_HNSW_DEFAULT_BATCH;
    cfg.nThread = pC->nBuildThread;
    cfg.xPrefetch = indexBuildPrefetch;
    cfg.interrupt = pTick->hook;
    ctx.aVec = (const uint8_t *)aVec;
    ctx.nByte = pCol->nByte;
    ctx.nDim = pCol->nDim;
    ctx.eElem = pCol->eElem;
    ctx.eMetric = pCol->eMetric;
    ctx.pK = colvecKernelsBest();
    rc = colvecHnswBuild(&cfg, (uint32_t)nRow, NULL, (const uint64_t *)aRowid,
                         indexBuildDist, &ctx, &pGraph);
    if (rc == COLVEC_OK) {
      int64_t nSer = colvecHnswSerializedSize(pGraph);
      aBuf = sqlite3_malloc64((sqlite3_uint64)nSer + 8);
      if (aBuf == NULL) {
        rc = COLVEC_NOMEM;
      } else {
        rc = colvecHnswSerialize(pGraph, aBuf, (size_t)nSer);
      }
      if (rc == COLVEC_OK) {
        rc = indexSection(pW, COLVEC_SEG_GRAPH, iCol, 4, aBuf, nSer);
      }
    }
  }
  colvecQuantFree(pQuant);
  colvecHnswFree(pGraph);
  sqlite3_free(aBuf);
  if (rc == COLVEC_INTERRUPT) return colvecTickError(pzErr);
  if (rc != COLVEC_OK && *pzErr == NULL) {
    *pzErr = sqlite3_mprintf("colvec: building the index of %s failed (%s)",
                             pCol->zName,
                             rc == COLVEC_NOMEM ? "out of memory" : "error");
  }
  return rc == COLVEC_NOMEM ? SQLITE_NOMEM : rc;
}

/*
** Opens (once per segment and column) the index of column iCol of h.
** Returns SQLITE_OK with *pp set, or COLVEC_CORRUPT_VTAB / SQLITE_NOMEM.
*/
static int indexOpen(ColvecSegTable *pSegs, ColvecSegHandle *h, int iCol,
                     ColvecSegIndex **pp, char **pzErr) {
  const ColvecConfig *pC = pSegs->pConfig;
  const ColvecColumn *pCol = &pC->aCol[iCol];
  ColvecSegIndex *p;
  const uint8_t *a;
  int64_t n = 0;
  int rc = SQLITE_OK;
  if (h->aSlot == NULL) {
    size_t nSlot = sizeof(ColvecSegSlot) * (size_t)pC->nCol;
    h->aSlot = sqlite3_malloc64(nSlot);
    if (h->aSlot == NULL) return SQLITE_NOMEM;
    memset(h->aSlot, 0, nSlot);
  }
  if (h->aSlot[iCol].p) {
    *pp = (ColvecSegIndex *)h->aSlot[iCol].p;
    return SQLITE_OK;
  }
  p = sqlite3_malloc(sizeof(ColvecSegIndex));
  if (p == NULL) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->aVecBase = colvecSegVectorBase(h, pCol, iCol);
  a = (const uint8_t *)colvecSegSectionBytes(h, COLVEC_SEG_QUANT, iCol,
                                             &p->pCodeOwned, &n, pzErr);
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
      p->aCode = (const uint8_t *)colvecSegSectionBytes(
          h, COLVEC_SEG_CODES, iCol, &p->pCodeOwned, &n, pzErr);
      if (*pzErr) {
        rc = p->pCodeOwned ? SQLITE_IOERR : SQLITE_NOMEM; /* read or malloc */
      } else if (p->aCode == NULL || n != (int64_t)p->nCodeBytes * h->nRow) {
        rc = COLVEC_CORRUPT_VTAB;
      } else if (p->pCodeOwned == NULL) {
        /* the codes and the graph are the working set of every search:
        ** fault them in once now rather than a page at a time later */
        colvecOsAdvise(p->aCode, n, COLVEC_ADVICE_POPULATE);
      }
    }
  } else if (*pzErr) {
    rc = p->pCodeOwned ? SQLITE_IOERR : SQLITE_NOMEM; /* read or malloc */
  }
  if (rc == SQLITE_OK) {
    a = (const uint8_t *)colvecSegSectionBytes(h, COLVEC_SEG_GRAPH, iCol,
                                               &p->pGraphOwned, &n, pzErr);
    if (a && p->pGraphOwned == NULL) {
      colvecOsAdvise(a, n, COLVEC_ADVICE_POPULATE);
    }
    if (a) {
      int rcG = colvecHnswOpen(a, (size_t)n, COLVEC_HNSW_OPEN_LAZY, &p->pGraph);
      if (rcG == COLVEC_NOMEM) {
        rc = SQLITE_NOMEM;
      } else if (rcG != COLVEC_OK ||
                 colvecHnswNodeCount(p->pGraph) != (uint32_t)h->nRow) {
        rc = COLVEC_CORRUPT_VTAB;
      }
    } else if (*pzErr) {
      rc = p->pGraphOwned ? SQLITE_IOERR : SQLITE_NOMEM; /* read or malloc */
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
    return rc == SQLITE_IOERR ? rc : COLVEC_CORRUPT_VTAB;
  }
  h->aSlot[iCol].p = p;
  h->aSlot[iCol].xFree = indexFree;
  *pp = p;
  return SQLITE_OK;
}

/* Search context handed to the HNSW callbacks. */
typedef struct IndexQuery IndexQuery;
struct IndexQuery {
  const ColvecSegIndex *pIdx;  /* the index */
  const ColvecQuantQuery *pqq; /* prepared quantized query (pQuant set) */
  const uint8_t *aBits;        /* filter bitmap, or NULL */
  const void *pQuery;          /* float32 query */
  const ColvecColumn *pCol;    /* searched column */
  const ColvecKernels *pK;     /* kernels */
  ColvecSegHandle *h;          /* segment (float reads in access=file) */
  int iCol;                    /* column index */
  void *pBuf;                  /* access=file: one vector */
  int rcRead;                  /* first failed vector read, SQLITE_OK if none */
  char *zErrRead;              /* its message (owned) */
};

/* Query-to-node distance: on the codes, or on the float32 vector. */
static float indexQueryDist(void *pCtx, uint32_t iNode) {
  IndexQuery *p = (IndexQuery *)pCtx;
  const void *pVec;
  char *zErr = NULL;
  if (p->pIdx->pQuant) {
    return colvecQuantDistance(p->pqq, p->pIdx->aCode +
                                           (size_t)iNode * p->pIdx->nCodeBytes);
  }
  if (p->pIdx->aVecBase) {
    pVec = p->pIdx->aVecBase + (size_t)iNode * p->pCol->nByte;
  } else {
    int rc;
    pVec = colvecSegVector(p->h, p->pCol, p->iCol, iNode, p->pBuf, &zErr, &rc);
    if (pVec == NULL) {
      /* the search goes on; colvecIndexSearch reports the first failure */
      if (p->rcRead == SQLITE_OK) {
        p->rcRead = rc;
        p->zErrRead = zErr;
      } else {
        sqlite3_free(zErr);
      }
      return INFINITY;
    }
  }
  return (float)colvecDistance(p->pK, p->pCol->eMetric, p->pCol->eElem,
                               p->pQuery, pVec, p->pCol->nDim);
}

/*
** Distances to nNode nodes at once (ColvecHnswQuery.xDistBatch): on the
** codes, one estimator loop that prefetches ahead; on float32, indexQueryDist
** for each.
*/
static void indexQueryDistBatch(void *pCtx, const uint32_t *aNode, int nNode,
                                float *aOut) {
  IndexQuery *p = (IndexQuery *)pCtx;
  int i;
  if (p->pIdx->pQuant && nNode <= 2 * COLVEC_HNSW_MAX_M) {
    const uint8_t *apCode[2 * COLVEC_HNSW_MAX_M];
    for (i = 0; i < nNode; i++) {
      apCode[i] = p->pIdx->aCode + (size_t)aNode[i] * p->pIdx->nCodeBytes;
    }
    colvecQuantDistanceBatch(p->pqq, apCode, nNode, aOut);
    return;
  }
  for (i = 0; i < nNode; i++)
    aOut[i] = indexQueryDist(pCtx, aNode[i]);
}

/* Prefetches what indexQueryDist will read for iNode. */
static void indexPrefetch(void *pCtx, uint32_t iNode) {
  IndexQuery *p = (IndexQuery *)pCtx;
  const uint8_t *a;
  int n, i;
  if (p->pIdx->pQuant) {
    a = p->pIdx->aCode + (size_t)iNode * p->pIdx->nCodeBytes;
    n = p->pIdx->nCodeBytes;
  } else if (p->pIdx->aVecBase) {
    a = p->pIdx->aVecBase + (size_t)iNode * p->pCol->nByte;
    n = p->pCol->nByte;
  } else {
    return;
  }
  /* the first lines (the hardware prefetcher follows on) and the last one,
  ** where a code keeps its correction factors */
  for (i = 0; i < n && i < 4 * 64; i += 64)
    COLVEC_PREFETCH(a + i);
  COLVEC_PREFETCH(a + n - 1);
}

/* Filter: only rows set in the bitmap may be returned. */
static int indexAccept(void *pCtx, uint32_t iNode) {
  const IndexQuery *p = (const IndexQuery *)pCtx;
  return (p->aBits[iNode >> 3] >> (iNode & 7)) & 1;
}

/* qsort comparator for candidate node ids. */
static int indexNodeCmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/*
** Makes room in the scratch for nCand candidates and one vector of nByte
** bytes (access=file reads). Returns SQLITE_OK or SQLITE_NOMEM.
*/
static int indexReserve(ColvecIndexScratch *s, int nCand, int nByte) {
  if (s->pSearch == NULL && colvecHnswSearchNew(&s->pSearch) != COLVEC_OK) {
    return SQLITE_NOMEM;
  }
  if (nCand > s->nCand) {
    uint32_t *aNode =
        sqlite3_realloc64(s->aNode, sizeof(uint32_t) * (sqlite3_uint64)nCand);
    float *aDist;
    const void **apVec;
    if (aNode == NULL) return SQLITE_NOMEM;
    s->aNode = aNode;
    aDist = sqlite3_realloc64(s->aDist, sizeof(float) * (sqlite3_uint64)nCand);
    if (aDist == NULL) return SQLITE_NOMEM;
    s->aDist = aDist;
    apVec = sqlite3_realloc64((void *)s->apVec,
                              sizeof(void *) * (sqlite3_uint64)nCand);
    if (apVec == NULL) return SQLITE_NOMEM;
    s->apVec = apVec;
    s->nCand = nCand;
  }
  if (nByte > s->nBuf) {
    /* the scratch serves every vector column of the table: grow to the
    ** widest one searched so far */
    void *pBuf = sqlite3_realloc(s->pBuf, nByte);
    if (pBuf == NULL) return SQLITE_NOMEM;
    s->pBuf = pBuf;
    s->nBuf = nByte;
  }
  return SQLITE_OK;
}

/* Rescoring slower than this per vector means pages came from disk. */
#define INDEX_COLD_MICROS 20.0
/*
** Rescoring faster than this per vector means every page was resident
** (at most minor faults, which cost 1-3 us each on the test VM; a read
** from storage costs tens of microseconds or more).
*/
#define INDEX_WARM_MICROS 5.0

/*
** Distances of the nOut mapped candidates (s->apVec, in row order) to the
** query, several vectors per kernel call for l2 and dot, offered to pTopk.
*/
static void indexRescoreMapped(ColvecSegHandle *h, ColvecIndexScratch *s,
                               const ColvecKnnQuery *q,
                               const ColvecColumn *pCol, int nOut,
                               ColvecTopk *pTopk) {
  const ColvecKernels *pK = colvecKernelsBest();
  int i;
  if (pCol->eMetric == COLVEC_METRIC_L2 || pCol->eMetric == COLVEC_METRIC_DOT) {
    int bL2 = pCol->eMetric == COLVEC_METRIC_L2;
    for (i = 0; i < nOut; i += INDEX_RESCORE_BATCH) {
      int j,
          n = nOut - i < INDEX_RESCORE_BATCH ? nOut - i : INDEX_RESCORE_BATCH;
      float aOut[INDEX_RESCORE_BATCH];
      if (bL2) {
        pK->xL2sqBatchF32((const float *)q->pVec,
                          (const float *const *)&s->apVec[i], n, pCol->nDim,
                          aOut);
      } else {
        pK->xDotBatchF32((const float *)q->pVec,
                         (const float *const *)&s->apVec[i], n, pCol->nDim,
                         aOut);
      }
      for (j = 0; j < n; j++) {
        colvecTopkPush(pTopk, bL2 ? sqrt(aOut[j]) : -(double)aOut[j],
                       h->aRowid[s->aNode[i + j]], s->aNode[i + j]);
      }
    }
    return;
  }
  for (i = 0; i < nOut; i++) {
    if (i + 4 < nOut) {
      COLVEC_PREFETCH(s->apVec[i + 4]);
      COLVEC_PREFETCH((const uint8_t *)s->apVec[i + 4] + 64);
    }
    colvecTopkPush(pTopk,
                   colvecDistance(pK, pCol->eMetric, pCol->eElem, q->pVec,
                                  s->apVec[i], pCol->nDim),
                   h->aRowid[s->aNode[i]], s->aNode[i]);
  }
}

/*
** Offers to pTopk the exact distances of the nOut candidates s->aNode, one
** vector at a time through colvecSegVector (a mapped vector, or a read
** into s->pBuf). Returns SQLITE_OK, or an error with *pzErr set
** (SQLITE_IOERR_READ for a failed read, COLVEC_CORRUPT_VTAB).
*/
static int indexExactEach(ColvecSegHandle *h, ColvecIndexScratch *s,
                          const ColvecKnnQuery *q, const ColvecColumn *pCol,
                          int nOut, ColvecTopk *pTopk, char **pzErr) {
  const ColvecKernels *pK = colvecKernelsBest();
  int i;
  for (i = 0; i < nOut; i++) {
    int rc;
    const void *pVec =
        colvecSegVector(h, pCol, q->iCol, s->aNode[i], s->pBuf, pzErr, &rc);
    if (pVec == NULL) return rc;
    colvecTopkPush(pTopk,
                   colvecDistance(pK, pCol->eMetric, pCol->eElem, q->pVec, pVec,
                                  pCol->nDim),
                   h->aRowid[s->aNode[i]], s->aNode[i]);
  }
  return SQLITE_OK;
}

/*
** Rescores nOut candidates with their float32 vectors, in row order, and
** offers them to pTopk. When the file is mapped without prefault and the
** vectors may not be resident, every vector of the batch is asked for
** (one MADV_WILLNEED each) before any is read: measured ~5x faster on a
** cold cache than faulting them one by one. Once a batch shows the vectors
** resident the hints are skipped (each costs a system call), until a slow
** batch shows they are not. access=file reads each vector with pread.
*/
static int indexRescore(ColvecSegHandle *h, ColvecSegIndex *pIdx,
                        ColvecIndexScratch *s, const ColvecKnnQuery *q,
                        const ColvecColumn *pCol, int ePrefault, int nOut,
                        ColvecTopk *pTopk, char **pzErr) {
  int i;
  qsort(s->aNode, (size_t)nOut, sizeof(uint32_t), indexNodeCmp);
  if (pIdx->aVecBase) {
    int bHint = ePrefault == COLVEC_PREFAULT_NONE && !pIdx->bWarm;
    double tStart;
    for (i = 0; i < nOut; i++) {
      s->apVec[i] = pIdx->aVecBase + (size_t)s->aNode[i] * pCol->nByte;
    }
    if (bHint) {
      for (i = 0; i < nOut; i++) {
        colvecOsAdvise(s->apVec[i], pCol->nByte, COLVEC_ADVICE_WILLNEED);
      }
    }
    /* only the reads are timed: the hints' own system calls would make a
    ** resident batch look cold and keep the hints on for ever */
    tStart = colvecOsMicros();
    indexRescoreMapped(h, s, q, pCol, nOut, pTopk);
    if (nOut > 0 && ePrefault == COLVEC_PREFAULT_NONE) {
      double rPer = (colvecOsMicros() - tStart) / nOut;
      if (bHint && rPer < INDEX_WARM_MICROS) pIdx->bWarm = 1;
      if (!bHint && rPer > INDEX_COLD_MICROS) pIdx->bWarm = 0;
    }
    return SQLITE_OK;
  }
  return indexExactEach(h, s, q, pCol, nOut, pTopk, pzErr);
}

/*
** The exact path: offers to pTopk every live row of segment h that passes
** the filters (bitmap aBits; NULL: every row) with its exact distance to q.
** Vectors come from the index's cached base pointer when the segment is
** mapped, else are read one by one (access=file). Returns SQLITE_OK or an
** error with *pzErr set.
*/
static int indexExact(ColvecSegTable *pSegs, ColvecSegHandle *h,
                      const ColvecSegIndex *pIdx, const ColvecKnnQuery *q,
                      const uint8_t *aBits, ColvecTopk *pTopk, char **pzErr) {
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
      pVec = colvecSegVector(h, pCol, q->iCol, i, pBuf, pzErr, &rc);
      if (pVec == NULL) break;
    }
    colvecTopkPush(pTopk,
                   colvecDistance(pK, pCol->eMetric, pCol->eElem, q->pVec, pVec,
                                  pCol->nDim),
                   h->aRowid[i], i);
  }
  sqlite3_free(pBuf);
  return rc;
}

/* Searches one segment; see colvecInt.h. */
int colvecIndexSearch(ColvecSegTable *pSegs, ColvecSegHandle *h,
                      ColvecIndexScratch *s, const ColvecKnnQuery *q,
                      const uint8_t *aBits, int64_t nPass, ColvecTopk *pTopk,
                      char **pzErr) {
  const ColvecConfig *pC = pSegs->pConfig;
  const ColvecColumn *pCol = &pC->aCol[q->iCol];
  ColvecSegIndex *pIdx = NULL;
  ColvecHnswQuery hq;
  IndexQuery ctx;
  int64_t nWant;
  int nEf, nOut = 0, rc;

  if (nPass == 0) return SQLITE_OK;
  rc = indexOpen(pSegs, h, q->iCol, &pIdx, pzErr);
  if (rc != SQLITE_OK) return rc;
  if (pIdx->pGraph == NULL ||
      (aBits && (nPass <= INDEX_EXACT_MAX_ROWS || nPass * 20 < h->nRow))) {
    return indexExact(pSegs, h, pIdx, q, aBits, pTopk, pzErr);
  }
  nWant = (int64_t)ceil(q->k * q->rOversample);
  if (nWant < q->k) nWant = q->k;
  if (nWant > h->nRow) nWant = h->nRow;
  nEf = q->ef > 0 ? q->ef : INDEX_MIN_EF;
  if (nEf < nWant) nEf = (int)nWant;
  rc = indexReserve(s, nEf, pCol->nByte);
  if (rc == SQLITE_OK && colvecHnswSearchReserve(s->pSearch, (uint32_t)h->nRow,
                                                 nEf) != COLVEC_OK) {
    rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_OK && pIdx->pQuant &&
      colvecQuantQueryPrepare(pIdx->pQuant, (const float *)q->pVec, &s->qq) !=
          COLVEC_OK) {
    rc = SQLITE_NOMEM;
  }
  if (rc != SQLITE_OK) return rc;
  memset(&ctx, 0, sizeof(ctx));
  ctx.pIdx = pIdx;
  ctx.pqq = &s->qq;
  ctx.aBits = aBits;
  ctx.pQuery = q->pVec;
  ctx.pCol = pCol;
  ctx.pK = colvecKernelsBest();
  ctx.h = h;
  ctx.iCol = q->iCol;
  ctx.pBuf = s->pBuf;
  hq.xDist = indexQueryDist;
  hq.xDistBatch = pIdx->pQuant ? indexQueryDistBatch : NULL;
  hq.xPrefetch = indexPrefetch;
  hq.xAccept = aBits ? indexAccept : NULL;
  hq.pCtx = &ctx;
  rc = colvecHnswSearch(pIdx->pGraph, &hq, nEf, (int)nWant, s->pSearch,
                        s->aNode, s->aDist, &nOut);
  if (ctx.rcRead != SQLITE_OK) {
    /* a vector could not be read: the results would be wrong */
    *pzErr = ctx.zErrRead;
    return ctx.rcRead;
  }
  if (rc != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("colvec: segment %lld of table %s: damaged graph",
                             (long long)h->iSegid, pC->zName);
    return rc == COLVEC_NOMEM ? SQLITE_NOMEM : COLVEC_CORRUPT_VTAB;
  }
  if (pIdx->pQuant == NULL) {
    /* traversed on the stored vectors: exact distances, which the search
    ** kept in float; the results' are recomputed as an exact scan reports
    ** them (double), so both kinds of segment rank alike */
    return indexExactEach(h, s, q, pCol, nOut, pTopk, pzErr);
  }
  if (!q->bRescore) {
    /* the codes' estimates as they are */
    int i;
    for (i = 0; i < nOut; i++) {
      colvecTopkPush(pTopk, s->aDist[i], h->aRowid[s->aNode[i]], s->aNode[i]);
    }
    return SQLITE_OK;
  }
  return indexRescore(h, pIdx, s, q, pCol, pC->ePrefault, nOut, pTopk, pzErr);
}
