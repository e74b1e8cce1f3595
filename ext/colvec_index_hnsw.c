/*
** colvec_index_hnsw.c — the HNSW index type (colvecIndexHnswMethods): a
** graph over a segment's rows, built from float32 distances at compaction
** and stored as the column's COLVEC_LAYOUT_GRAPH part; searched on the
** quantized codes (or on the stored vectors) with oversampling, then
** rescored (colvec_index.c). See colvecInt.h for the index types.
*/
#include "colvecInt.h"

#include <math.h>
#include <string.h>

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

/*
** xBuild: builds the graph of the nRow vectors at aVec (rowids aRowid) and
** hands its serialized bytes to the layout. Returns COLVEC_OK or an error.
*/
static int hnswBuild(ColvecSegWriter *pW, ColvecTick *pTick,
                     const ColvecConfig *pC, int iCol, const void *aVec,
                     int64_t nRow, const int64_t *aRowid) {
  const ColvecColumn *pCol = &pC->aCol[iCol];
  ColvecHnsw *pGraph = NULL;
  uint8_t *aBuf = NULL;
  ColvecHnswConfig cfg;
  IndexBuild ctx;
  int rc;
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
      rc = colvecLayoutWritePart(pW, iCol, COLVEC_LAYOUT_GRAPH, 0, aBuf, nSer);
    }
  }
  colvecHnswFree(pGraph);
  sqlite3_free(aBuf);
  return rc;
}

/*
** xOpen: opens the graph (n bytes at a) of a segment of nRow rows into
** *ppState. Returns COLVEC_OK, COLVEC_NOMEM or COLVEC_CORRUPT.
*/
static int hnswOpen(const void *a, int64_t n, int64_t nRow, void **ppState) {
  ColvecHnsw *pGraph = NULL;
  int rc = colvecHnswOpen(a, (size_t)n, COLVEC_HNSW_OPEN_LAZY, &pGraph);
  if (rc == COLVEC_OK && colvecHnswNodeCount(pGraph) != (uint32_t)nRow) {
    rc = COLVEC_CORRUPT;
  }
  if (rc != COLVEC_OK) {
    colvecHnswFree(pGraph);
    return rc == COLVEC_NOMEM ? COLVEC_NOMEM : COLVEC_CORRUPT;
  }
  *ppState = pGraph;
  return COLVEC_OK;
}

/* xFree: frees the opened graph. */
static void hnswFree(void *pState) { colvecHnswFree((ColvecHnsw *)pState); }

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
    pVec =
        colvecLayoutVector(p->h, p->pCol, p->iCol, iNode, p->pBuf, &zErr, &rc);
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

/*
** xSearch: searches the graph for q->k * oversampling candidates among
** the bitmap's rows (aBits; NULL: every row), then offers them to pTopk
** with exact distances (rescoring) or the codes' estimates.
*/
static int hnswSearch(ColvecSegTable *pSegs, ColvecSegHandle *h,
                      ColvecSegIndex *pIdx, ColvecIndexScratch *s,
                      const ColvecKnnQuery *q, const uint8_t *aBits,
                      ColvecTopk *pTopk, char **pzErr) {
  const ColvecConfig *pC = pSegs->pConfig;
  const ColvecColumn *pCol = &pC->aCol[q->iCol];
  ColvecHnsw *pGraph = (ColvecHnsw *)pIdx->pState;
  ColvecHnswQuery hq;
  IndexQuery ctx;
  int64_t nWant;
  int nEf, nOut = 0, rc;

  nWant = (int64_t)ceil(q->k * q->rOversample);
  if (nWant < q->k) nWant = q->k;
  if (nWant > h->nRow) nWant = h->nRow;
  nEf = q->ef > 0 ? q->ef : COLVEC_INDEX_MIN_EF;
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
  rc = colvecHnswSearch(pGraph, &hq, nEf, (int)nWant, s->pSearch, s->aNode,
                        s->aDist, &nOut);
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
  return colvecIndexFinish(h, pIdx, s, q, pCol, pC->ePrefault, nOut, pTopk,
                           pzErr);
}

/* The HNSW index type. */
const ColvecIndexMethods colvecIndexHnswMethods = {
    "hnsw",              /* zName */
    COLVEC_LAYOUT_GRAPH, /* ePart */
    hnswBuild,           /* xBuild */
    hnswOpen,            /* xOpen */
    hnswSearch,          /* xSearch */
    hnswFree             /* xFree */
};
