/*
** colvec_index_hnsw.c — the HNSW index type (colvecIndexHnswMethods): a
** graph over a segment's rows, built at compaction and stored as the
** column's COLVEC_LAYOUT_GRAPH part; searched on the quantized codes (or
** on the stored vectors) with oversampling, then rescored
** (colvec_index.c). See colvecInt.h for the index types.
**
** The build chooses every link on exact float32 distances. A float32
** column with int8 codes (the default) runs the build's beam searches on
** those codes instead (indexEstimate: the inserted row's vector as the
** query, the integer estimator of a scan, the same integers on every CPU)
** and rescores the candidates they find: the searches read a quarter of
** the bytes. Other columns search on the float32 vectors.
*/
#include "colvecInt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
** Build context: the contiguous vectors of the new segment and, when the
** column's codes are int8, the codes the build's beam searches run on.
*/
typedef struct IndexBuild IndexBuild;
struct IndexBuild {
  const uint8_t *aVec;       /* nRow vectors of nByte bytes */
  int nByte;                 /* bytes per vector */
  int nDim;                  /* dimensions */
  ColvecElem eElem;          /* element type (float32, int8 or bit) */
  ColvecMetric eMetric;      /* metric */
  const ColvecKernels *pK;   /* kernels */
  const ColvecQuant *pQuant; /* int8 quantizer of the codes, or NULL */
  const uint8_t *aCode;      /* its codes, one per row (with pQuant) */
  int nCodeBytes;            /* bytes per code */
};

/* A graph of one segment column built in steps; see colvecInt.h. */
struct ColvecIndexJob {
  IndexBuild ctx;              /* the vectors and metric (ctx.aVec owned) */
  int64_t *aRowid;             /* the rows' rowids (owned) */
  ColvecHnswBuilder *pBuilder; /* the build */
  ColvecQuant *pQuant;         /* the int8 quantizer ctx uses (owned) */
  uint8_t *aCode;              /* its codes (owned) */
  int64_t nRow;                /* rows of the job */
  int bCodes;                  /* the build searches on codes that the
                               ** first Step makes (pQuant, aCode) */
  float aKth[COLVEC_RECALL_QUERIES]; /* the recall measurement's truth: each
                                      ** sample query's k-th exact distance */
  int nKth;                          /* aKth entries computed so far (Steps) */
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

/* One build worker's estimate (ColvecHnswEstimate): a prepared query. */
typedef struct IndexEst IndexEst;
struct IndexEst {
  const IndexBuild *pB; /* the build's vectors and codes */
  ColvecQuantQuery qq;  /* the inserted node's vector, prepared */
};

/* ColvecHnswEstimate.xNew: an unprepared query on the build's codes. */
static int indexEstNew(void *pCtx, void **ppState) {
  IndexEst *p = (IndexEst *)sqlite3_malloc(sizeof(*p));
  *ppState = p;
  if (p == NULL) return COLVEC_NOMEM;
  memset(p, 0, sizeof(*p));
  p->pB = (const IndexBuild *)pCtx;
  return COLVEC_OK;
}

/*
** ColvecHnswEstimate.xPrepare: node iNode's vector as the query, with the
** integer estimator of a scan (the same integers on every CPU).
*/
static int indexEstPrepare(void *pState, uint32_t iNode) {
  IndexEst *p = (IndexEst *)pState;
  const float *pVec =
      (const float *)(p->pB->aVec + (size_t)iNode * p->pB->nByte);
  int rc = colvecQuantQueryPrepare(p->pB->pQuant, pVec, &p->qq);
  if (rc == COLVEC_OK) rc = colvecQuantQueryPrepareScan(&p->qq);
  return rc;
}

/* ColvecHnswEstimate.xDistBatch: estimates on the codes of nNode nodes. */
static void indexEstBatch(void *pState, const uint32_t *aNode, int nNode,
                          float *aOut) {
  IndexEst *p = (IndexEst *)pState;
  const uint8_t *apCode[2 * COLVEC_HNSW_MAX_M];
  int i, n;
  for (i = 0; i < nNode; i += n) {
    int j;
    n = nNode - i < 2 * COLVEC_HNSW_MAX_M ? nNode - i : 2 * COLVEC_HNSW_MAX_M;
    for (j = 0; j < n; j++) {
      apCode[j] = p->pB->aCode + (size_t)aNode[i + j] * p->pB->nCodeBytes;
    }
    colvecQuantScanBatch(&p->qq, apCode, n, aOut + i);
  }
}

/* ColvecHnswEstimate.xFree. */
static void indexEstFree(void *pState) {
  IndexEst *p = (IndexEst *)pState;
  if (p == NULL) return;
  colvecQuantQueryClear(&p->qq);
  sqlite3_free(p);
}

/* The build's estimate on the codes. */
static const ColvecHnswEstimate indexEstimate = {indexEstNew, indexEstPrepare,
                                                 indexEstBatch, indexEstFree};

/*
** Sets up the build of vector column iCol of pC over the vectors at aVec:
** the distance context *pCtx and, when pCfg is not NULL, the graph's
** parameters (no interrupt hook).
*/
static void indexBuildSetup(const ColvecConfig *pC, int iCol, const void *aVec,
                            ColvecHnswConfig *pCfg, IndexBuild *pCtx) {
  const ColvecColumn *pCol = &pC->aCol[iCol];
  pCtx->aVec = (const uint8_t *)aVec;
  pCtx->nByte = pCol->nByte;
  pCtx->nDim = pCol->nDim;
  pCtx->eElem = pCol->eElem;
  pCtx->eMetric = pCol->eMetric;
  pCtx->pK = colvecKernelsBest();
  if (pCfg) {
    memset(pCfg, 0, sizeof(*pCfg));
    pCfg->nM = pCol->nM;
    pCfg->nEfC = pCol->nEfC;
    pCfg->nBatch = COLVEC_HNSW_DEFAULT_BATCH;
    pCfg->nThread = pC->nBuildThread;
    pCfg->xPrefetch = indexBuildPrefetch;
  }
}

/*
** Whether the graph of column pCol is built on int8 codes (its own
** quantizer's): searches on the codes, links chosen on exact distances.
*/
static int indexBuildOnCodes(const ColvecColumn *pCol) {
  return pCol->eElem == COLVEC_ELEM_F32 && pCol->eQuant == COLVEC_QUANT_INT8;
}

/*
** Gives the build of pCtx the int8 codes aCode of quantizer pQuant, which
** its estimate (indexEstimate) searches on.
*/
static void indexBuildCodes(const ColvecQuant *pQuant, const uint8_t *aCode,
                            IndexBuild *pCtx) {
  pCtx->pQuant = pQuant;
  pCtx->aCode = aCode;
  pCtx->nCodeBytes = colvecQuantCodeBytes(pQuant);
}

/* Rows whose estimates a measuring scan takes at once. */
#define INDEX_PROBE_BATCH 64

/* Context of the searches that measure a new graph's recall. */
typedef struct IndexProbe IndexProbe;
struct IndexProbe {
  IndexBuild *pB;              /* the new segment's vectors and metric */
  const ColvecQuantQuery *pqq; /* prepared query on the codes, or NULL */
  const uint8_t *aCode;        /* the codes (with pqq) */
  int nCodeBytes;              /* bytes per code */
  uint32_t iQuery;             /* the row searched for */
};

/* indexBuildDist with NaN (inf - inf of huge vectors) as +infinity. */
static float indexProbeExact(IndexBuild *pB, uint32_t a, uint32_t b) {
  float r = indexBuildDist(pB, a, b);
  return r == r ? r : INFINITY;
}

/*
** Query-to-node distances of a measuring search for the nNode nodes aNode:
** the codes' estimates (the scan's, colvecQuantScanBatch), or vectors.
*/
static void indexProbeBatch(void *pCtx, const uint32_t *aNode, int nNode,
                            float *aOut) {
  IndexProbe *p = (IndexProbe *)pCtx;
  const uint8_t *apCode[INDEX_PROBE_BATCH];
  int i, n, j;
  for (i = 0; i < nNode; i += n) {
    n = nNode - i < INDEX_PROBE_BATCH ? nNode - i : INDEX_PROBE_BATCH;
    for (j = 0; j < n; j++) {
      if (p->pqq) {
        apCode[j] = p->aCode + (size_t)aNode[i + j] * p->nCodeBytes;
      } else {
        aOut[i + j] = indexProbeExact(p->pB, p->iQuery, aNode[i + j]);
      }
    }
    if (p->pqq) colvecQuantScanBatch(p->pqq, apCode, n, aOut + i);
  }
}

/* Query-to-node distance of a measuring search (indexProbeBatch). */
static float indexProbeDist(void *pCtx, uint32_t iNode) {
  float r;
  indexProbeBatch(pCtx, &iNode, 1, &r);
  return r;
}

/* qsort comparison of floats, ascending (NaN never reaches it). */
static int indexFloatCmp(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/*
** The nWant rows of the nRow nearest to the probe's query by
** indexProbeDist, as a scan of every row finds them: their numbers into
** aNode and distances into aDist, nearest first; *pnOut gets their count.
*/
static void indexProbeScan(IndexProbe *p, uint32_t nRow, int nWant,
                           uint32_t *aNode, float *aDist, int *pnOut) {
  uint32_t aRow[INDEX_PROBE_BATCH];
  float aEst[INDEX_PROBE_BATCH];
  int n = 0, j;
  uint32_t i;
  for (i = 0; i < nRow; i++) {
    float r;
    if (i % INDEX_PROBE_BATCH == 0) {
      int nBatch =
          nRow - i < INDEX_PROBE_BATCH ? (int)(nRow - i) : INDEX_PROBE_BATCH;
      for (j = 0; j < nBatch; j++)
        aRow[j] = i + (uint32_t)j;
      indexProbeBatch(p, aRow, nBatch, aEst);
    }
    r = aEst[i % INDEX_PROBE_BATCH];
    if (r != r) r = INFINITY;
    if (n == nWant && !(r < aDist[n - 1])) continue;
    if (n < nWant) n++;
    for (j = n - 1; j > 0 && aDist[j - 1] > r; j--) {
      aDist[j] = aDist[j - 1];
      aNode[j] = aNode[j - 1];
    }
    aDist[j] = r;
    aNode[j] = i;
  }
  *pnOut = n;
}

/*
** The truth of recall sample query iQ of nQuery over the nRow vectors of
** pB: its k-th smallest exact distance to the rows (k <= COLVEC_RECALL_K).
*/
static float indexTruth(IndexBuild *pB, uint32_t nRow, int k, int iQ,
                        int nQuery) {
  uint32_t iRow = (uint32_t)((uint64_t)iQ * nRow / (uint64_t)nQuery);
  float aTop[COLVEC_RECALL_K];
  int nTop = 0, i, j;
  /* the k smallest exact distances, by insertion */
  for (i = 0; i < (int)nRow; i++) {
    float r = indexProbeExact(pB, iRow, (uint32_t)i);
    if (nTop == k && !(r < aTop[k - 1])) continue;
    if (nTop < k) nTop++;
    for (j = nTop - 1; j > 0 && aTop[j - 1] > r; j--)
      aTop[j] = aTop[j - 1];
    aTop[j] = r;
  }
  return aTop[k - 1];
}

/*
** Measures the recall of graph pGraph over the nRow vectors of pB (see
** COLVEC_RECALL_QUERIES), or with pGraph NULL of a scan of every row:
** traversing the codes of pIn when pqq is not NULL
** (its quantizer's oversampling, the rows kept exact added to the
** candidates), else the vectors. Sets *pr to the share of the queries'
** results within their true k-th distance (ties count), read from aKth
** (indexTruth of each query, computed beforehand) unless it is NULL.
** Returns COLVEC_OK, COLVEC_NOMEM or COLVEC_INTERRUPT.
*/
static int indexMeasure(const ColvecHnsw *pGraph, IndexBuild *pB,
                        const ColvecIndexBuild *pIn, ColvecQuantQuery *pqq,
                        ColvecTick *pTick, uint32_t nRow, const float *aKth,
                        double *pr) {
  int rc = COLVEC_OK;
  int k = nRow < COLVEC_RECALL_K ? (int)nRow : COLVEC_RECALL_K;
  int nQuery = nRow < COLVEC_RECALL_QUERIES ? (int)nRow : COLVEC_RECALL_QUERIES;
  double rOver =
      pqq ? colvecQuantOversampling(colvecQuantType(pIn->pQuant)) : 1.0;
  int nWant = (int)ceil(k * rOver), nEf, nHit = 0, iQ, i, nOut;
  ColvecHnswSearch *pSearch = NULL;
  ColvecHnswQuery hq;
  IndexProbe probe;
  uint32_t *aNode;
  float *aDist;
  if (nWant > (int)nRow) nWant = (int)nRow;
  nEf = colvecHnswDefaultEf(nRow);
  if (nEf < nWant) nEf = nWant;
  aNode = sqlite3_malloc64(sizeof(uint32_t) * (sqlite3_uint64)nEf);
  aDist = sqlite3_malloc64(sizeof(float) * (sqlite3_uint64)(nEf + pIn->nExact));
  if (aNode == NULL || aDist == NULL ||
      (pGraph && (colvecHnswSearchNew(&pSearch) != COLVEC_OK ||
                  colvecHnswSearchReserve(pSearch, nRow, nEf) != COLVEC_OK))) {
    rc = COLVEC_NOMEM;
  }
  memset(&probe, 0, sizeof(probe));
  probe.pB = pB;
  probe.aCode = pIn->aCode;
  probe.nCodeBytes = pIn->pQuant ? colvecQuantCodeBytes(pIn->pQuant) : 0;
  memset(&hq, 0, sizeof(hq));
  hq.xDist = indexProbeDist;
  hq.xDistBatch = indexProbeBatch;
  hq.pCtx = &probe;
  for (iQ = 0; rc == COLVEC_OK && iQ < nQuery; iQ++) {
    uint32_t iRow = (uint32_t)((uint64_t)iQ * nRow / (uint64_t)nQuery);
    const float *pVec = (const float *)(pB->aVec + (size_t)iRow * pB->nByte);
    int nCand = 0;
    float rKth;
    if (colvecTickStop(pTick)) {
      rc = COLVEC_INTERRUPT;
      break;
    }
    rKth = aKth ? aKth[iQ] : indexTruth(pB, nRow, k, iQ, nQuery);
    /* the search as a query runs it: graph, then rescoring */
    probe.iQuery = iRow;
    probe.pqq = NULL;
    if (pqq) {
      /* the figure is stored, and segment bytes must not depend on the
      ** CPU that wrote them: the scan's integer estimator (the same sums
      ** with every kernel set), else the portable float kernels */
      colvecQuantQueryKernel(pqq, COLVEC_QUANT_KERNEL_SCALAR);
      if (colvecQuantQueryPrepare(pIn->pQuant, pVec, pqq) != COLVEC_OK ||
          colvecQuantQueryPrepareScan(pqq) != COLVEC_OK) {
        rc = COLVEC_NOMEM;
        break;
      }
      if (pqq->bScan) colvecQuantQueryKernel(pqq, COLVEC_QUANT_KERNEL_BEST);
      probe.pqq = pqq;
    }
    if (pGraph == NULL) {
      indexProbeScan(&probe, nRow, nWant, aNode, aDist, &nOut);
    } else if (colvecHnswSearch(pGraph, &hq, nEf, nWant, pSearch, aNode, aDist,
                                &nOut) != COLVEC_OK) {
      rc = COLVEC_NOMEM;
      break;
    }
    for (i = 0; i < nOut; i++) {
      uint32_t iNode = aNode[i];
      if (pqq && pIn->aExact && (pIn->aExact[iNode >> 3] >> (iNode & 7)) & 1) {
        continue; /* scored below, once */
      }
      aDist[nCand++] = indexProbeExact(pB, iRow, iNode);
    }
    for (i = 0; pqq && i < pIn->nExact; i++) {
      aDist[nCand++] = indexProbeExact(pB, iRow, pIn->aExactRow[i]);
    }
    qsort(aDist, (size_t)nCand, sizeof(float), indexFloatCmp);
    for (i = 0; i < nCand && i < k; i++) {
      if (aDist[i] <= rKth) nHit++;
    }
  }
  colvecHnswSearchFree(pSearch);
  sqlite3_free(aNode);
  sqlite3_free(aDist);
  *pr = nQuery > 0 ? (double)nHit / ((double)k * nQuery) : 1.0;
  return rc;
}

/*
** Returns 1 when job p (NULL allowed) has inserted every one of its rows
** and they are exactly aRowid[0..nRow), else 0.
*/
static int indexJobHolds(const ColvecIndexJob *p, const int64_t *aRowid,
                         int64_t nRow) {
  return p && p->nRow == nRow && colvecHnswBuilderCount(p->pBuilder) == nRow &&
         memcmp(p->aRowid, aRowid, (size_t)nRow * 8) == 0;
}

/*
** xBuild: builds the graph of the nRow vectors at aVec (rowids aRowid),
** serializes it into pB->aPart and measures its recall: on the codes of pB
** when there are any, and on the vectors when there are none or the codes
** fall below COLVEC_RECALL_FLOOR; pB->recall.eUsed says what the segment
** should keep. Returns COLVEC_OK or an error.
*/
static int hnswBuild(ColvecTick *pTick, const ColvecConfig *pC, int iCol,
                     const void *aVec, int64_t nRow, const int64_t *aRowid,
                     ColvecIndexBuild *pB) {
  ColvecHnsw *pGraph = NULL;
  ColvecHnswConfig cfg;
  ColvecQuantQuery qq;
  ColvecHnswRecall *pR = &pB->recall;
  IndexBuild ctx;
  const float *aKth = NULL; /* the truth the job's Steps computed */
  int rc;
  memset(&qq, 0, sizeof(qq));
  indexBuildSetup(pC, iCol, aVec, &cfg, &ctx);
  cfg.interrupt = pTick->hook;
  if (indexBuildOnCodes(&pC->aCol[iCol]) && pB->pQuant) {
    indexBuildCodes(pB->pQuant, pB->aCode, &ctx);
    cfg.pEstimate = &indexEstimate;
  }
  if (indexJobHolds(pB->pJob, aRowid, nRow)) {
    /* built in steps by the 'index' command: the same graph */
    rc = colvecHnswBuilderFinish(pB->pJob->pBuilder, &pGraph);
    if (pB->pJob->nKth == COLVEC_RECALL_QUERIES) aKth = pB->pJob->aKth;
  } else {
    rc = colvecHnswBuild(&cfg, (uint32_t)nRow, NULL, (const uint64_t *)aRowid,
                         indexBuildDist, &ctx, &pGraph);
  }
  if (rc == COLVEC_OK) {
    int64_t nSer = colvecHnswSerializedSize(pGraph);
    pB->aPart = sqlite3_malloc64((sqlite3_uint64)nSer + 8);
    if (pB->aPart == NULL) {
      rc = COLVEC_NOMEM;
    } else {
      rc = colvecHnswSerialize(pGraph, pB->aPart, (size_t)nSer);
      pB->nPart = nSer;
    }
  }
  memset(pR, 0, sizeof(*pR));
  pR->nQuery = nRow < COLVEC_RECALL_QUERIES ? (int)nRow : COLVEC_RECALL_QUERIES;
  pR->k = nRow < COLVEC_RECALL_K ? (int)nRow : COLVEC_RECALL_K;
  pR->rCodes = -1.0;
  pR->rVectors = -1.0;
  pR->eUsed = COLVEC_RECALL_CODES;
  if (rc == COLVEC_OK && pB->pQuant) {
    rc = indexMeasure(pGraph, &ctx, pB, &qq, pTick, (uint32_t)nRow, aKth,
                      &pR->rCodes);
  }
  if (rc == COLVEC_OK && !(pR->rCodes >= COLVEC_RECALL_FLOOR)) {
    rc = indexMeasure(pGraph, &ctx, pB, NULL, pTick, (uint32_t)nRow, aKth,
                      &pR->rVectors);
    pR->eUsed = pR->rVectors >= COLVEC_RECALL_FLOOR ? COLVEC_RECALL_VECTORS
                                                    : COLVEC_RECALL_EXACT;
  }
  colvecQuantQueryClear(&qq);
  colvecHnswFree(pGraph);
  return rc;
}

/* Starts a graph built in steps; see colvecInt.h. */
int colvecIndexHnswJobNew(const ColvecConfig *pC, int iCol, uint8_t *aVec,
                          int64_t *aRowid, int64_t nRow, ColvecIndexJob **pp) {
  ColvecHnswConfig cfg;
  ColvecIndexJob *p = sqlite3_malloc(sizeof(*p));
  int rc;
  *pp = NULL;
  if (p == NULL) {
    sqlite3_free(aVec);
    sqlite3_free(aRowid);
    return COLVEC_NOMEM;
  }
  memset(p, 0, sizeof(*p));
  indexBuildSetup(pC, iCol, aVec, &cfg, &p->ctx);
  p->aRowid = aRowid;
  p->nRow = nRow;
  if (indexBuildOnCodes(&pC->aCol[iCol]) &&
      (colvecLayoutIndexParts(&pC->aCol[iCol], nRow) &
       (1 << COLVEC_LAYOUT_QUANT))) {
    /* the codes colvecIndexWrite will make of these rows: the first Step
    ** makes them (it may be interrupted), the searches only read them */
    cfg.pEstimate = &indexEstimate;
    p->bCodes = 1;
  }
  rc =
      colvecHnswBuilderNew(&cfg, (uint32_t)nRow, NULL, (const uint64_t *)aRowid,
                           indexBuildDist, &p->ctx, &p->pBuilder);
  if (rc != COLVEC_OK) {
    colvecIndexHnswJobFree(p);
    return rc;
  }
  *pp = p;
  return COLVEC_OK;
}

/*
** Inserts the next rows of a job; see colvecInt.h. The first Step of a
** build on codes trains the column's quantizer on the job's rows and
** encodes them, as colvecIndexWrite will: the same quantizer and codes.
*/
int colvecIndexHnswJobStep(ColvecIndexJob *p, int64_t nMax, ColvecTick *pTick) {
  int rc;
  if (p->bCodes && p->pQuant == NULL) {
    const float *aF32 = (const float *)p->ctx.aVec;
    rc = colvecQuantTrainWith(COLVEC_QUANT_INT8, p->ctx.eMetric, p->ctx.nDim,
                              aF32, p->nRow, p->ctx.nDim, &pTick->hook,
                              &p->pQuant);
    if (rc == COLVEC_OK) {
      int nCode = colvecQuantCodeBytes(p->pQuant);
      p->aCode = sqlite3_malloc64((sqlite3_uint64)(nCode * p->nRow) + 8);
      rc = p->aCode ? colvecQuantEncodeWith(p->pQuant, aF32, p->nRow,
                                            p->ctx.nDim, &pTick->hook, p->aCode)
                    : COLVEC_NOMEM;
    }
    if (rc != COLVEC_OK) {
      colvecQuantFree(p->pQuant); /* a failed Step: the job is freed next */
      p->pQuant = NULL;
      return rc;
    }
    indexBuildCodes(p->pQuant, p->aCode, &p->ctx);
  }
  rc = colvecHnswBuilderStep(p->pBuilder,
                             nMax > 0x7fffffff ? 0x7fffffff : (uint32_t)nMax,
                             pTick->hook);
  /* the recall measurement's truth, in the share of the rows inserted, so
  ** that the rewrite after the last Step only searches (as many sample
  ** queries as the segment has rows, at most COLVEC_RECALL_QUERIES) */
  if (rc == COLVEC_OK && p->nRow >= COLVEC_RECALL_QUERIES) {
    int k = p->nRow < COLVEC_RECALL_K ? (int)p->nRow : COLVEC_RECALL_K;
    int64_t nIn = colvecHnswBuilderCount(p->pBuilder);
    int nWant = (int)((COLVEC_RECALL_QUERIES * nIn + p->nRow - 1) / p->nRow);
    for (; p->nKth < nWant; p->nKth++) {
      p->aKth[p->nKth] = indexTruth(&p->ctx, (uint32_t)p->nRow, k, p->nKth,
                                    COLVEC_RECALL_QUERIES);
    }
  }
  return rc;
}

/* Takes a complete job's quantizer and codes; see colvecInt.h. */
int colvecIndexHnswJobTake(ColvecIndexJob *p, const int64_t *aRowid,
                           int64_t nRow, ColvecQuant **ppQuant,
                           uint8_t **paCode) {
  if (p == NULL || p->pQuant == NULL || !indexJobHolds(p, aRowid, nRow)) {
    return 0;
  }
  *ppQuant = p->pQuant;
  *paCode = p->aCode;
  p->pQuant = NULL;
  p->aCode = NULL;
  p->ctx.pQuant = NULL;
  p->ctx.aCode = NULL;
  return 1;
}

/* Rows a job has inserted; see colvecInt.h. */
int64_t colvecIndexHnswJobCount(const ColvecIndexJob *p) {
  return colvecHnswBuilderCount(p->pBuilder);
}

/* Frees a job; see colvecInt.h. */
void colvecIndexHnswJobFree(ColvecIndexJob *p) {
  if (p == NULL) return;
  colvecHnswBuilderFree(p->pBuilder);
  colvecQuantFree(p->pQuant);
  sqlite3_free(p->aCode);
  sqlite3_free((void *)p->ctx.aVec);
  sqlite3_free(p->aRowid);
  sqlite3_free(p);
}

/* Measures the recall of a scan on codes; see colvecInt.h. */
int colvecIndexHnswMeasureScan(ColvecTick *pTick, const ColvecConfig *pC,
                               int iCol, const void *aVec, int64_t nRow,
                               const ColvecIndexBuild *pB, double *pr) {
  ColvecQuantQuery qq;
  IndexBuild ctx;
  int rc;
  memset(&qq, 0, sizeof(qq));
  indexBuildSetup(pC, iCol, aVec, NULL, &ctx);
  rc = indexMeasure(NULL, &ctx, pB, &qq, pTick, (uint32_t)nRow, NULL, pr);
  colvecQuantQueryClear(&qq);
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
  int64_t nVisit;              /* query-to-node distances computed */
  double rPass;                /* share of the rows aBits passes (seeds) */
  int bScan;                   /* estimate with colvecQuantScanBatch */
};

static float indexExactDist(IndexQuery *p, uint32_t iNode);

/* Query-to-node distance: on the codes (the estimator of
** indexQueryDistBatch), or on the float32 vector. */
static float indexQueryDist(void *pCtx, uint32_t iNode) {
  IndexQuery *p = (IndexQuery *)pCtx;
  p->nVisit++;
  if (p->pIdx->pQuant) {
    const uint8_t *pCode = p->pIdx->aCode + (size_t)iNode * p->pIdx->nCodeBytes;
    float rEst;
    if (!p->bScan) return colvecQuantDistance(p->pqq, pCode);
    colvecQuantScanBatch(p->pqq, &pCode, 1, &rEst);
    return rEst;
  }
  return indexExactDist(p, iNode);
}

/*
** Exact distance from the query to node iNode's float32 vector (mapped, or
** read into p->pBuf); +infinity when the read fails (the first failure is
** kept in p->rcRead and p->zErrRead).
*/
static float indexExactDist(IndexQuery *p, uint32_t iNode) {
  const void *pVec;
  char *zErr = NULL;
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
** codes, one estimator loop that prefetches ahead (the integer one where
** the CPU has a kernel for it, as the build and the exact scan use); on
** float32, indexQueryDist for each.
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
    p->nVisit += nNode;
    if (p->bScan) {
      colvecQuantScanBatch(p->pqq, apCode, nNode, aOut);
    } else {
      colvecQuantDistanceBatch(p->pqq, apCode, nNode, aOut);
    }
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

/* Most passing rows a two-hop search starts from (ColvecHnswQuery.xSeeds). */
#define INDEX_SEEDS 64

/*
** ColvecHnswQuery.xSeeds: writes to aSeed up to min(nMax, INDEX_SEEDS)
** rows of the filter bitmap, spread evenly over the passing rows (every
** (rPass x rows / INDEX_SEEDS)-th), and returns how many.
*/
static int indexSeeds(void *pCtx, uint32_t *aSeed, int nMax) {
  const IndexQuery *p = (const IndexQuery *)pCtx;
  int64_t nRow = p->h->nRow, iByte, nByte = (nRow + 7) / 8, nSkip = 0;
  int64_t nStep = (int64_t)(p->rPass * (double)nRow / INDEX_SEEDS);
  int n = 0;
  if (nMax > INDEX_SEEDS) nMax = INDEX_SEEDS;
  if (nStep < 1) nStep = 1;
  for (iByte = 0; iByte < nByte && n < nMax; iByte++) {
    unsigned b = p->aBits[iByte];
    while (b && n < nMax) {
      int64_t iRow = iByte * 8 + COLVEC_CTZ32(b);
      b &= b - 1;
      if (iRow >= nRow) break;
      if (nSkip-- > 0) continue;
      aSeed[n++] = (uint32_t)iRow;
      nSkip = nStep - 1;
    }
  }
  return n;
}

/*
** Makes room in the scratch for the graph's search state, nCand candidates
** and one vector of nByte bytes (access=file reads). Returns SQLITE_OK or
** SQLITE_NOMEM.
*/
static int indexReserve(ColvecIndexScratch *s, int nCand, int nByte) {
  if (s->pSearch == NULL && colvecHnswSearchNew(&s->pSearch) != COLVEC_OK) {
    return SQLITE_NOMEM;
  }
  return colvecRescoreReserve(s, nCand, nByte);
}

/*
** Makes the rows the codes leave out (pIdx->aExactRow) candidates of every
** search: drops them from the graph's nOut candidates s->aNode, then
** appends each that passes the filter (aBits; NULL: all) with its exact
** distance in s->aDist (what rescore=0 reports). Updates *pnOut. Returns
** SQLITE_OK or SQLITE_NOMEM; a failed vector read is left in ctx.
*/
static int hnswAddExact(const ColvecSegIndex *pIdx, ColvecIndexScratch *s,
                        IndexQuery *pCtx, const uint8_t *aBits, int *pnOut) {
  int i, n = 0, rc;
  int64_t j;
  for (i = 0; i < *pnOut; i++) {
    uint32_t iNode = s->aNode[i];
    if ((pIdx->aExact[iNode >> 3] >> (iNode & 7)) & 1) continue;
    s->aNode[n] = iNode;
    s->aDist[n++] = s->aDist[i];
  }
  rc = indexReserve(s, n + (int)pIdx->nExact, pCtx->pCol->nByte);
  if (rc != SQLITE_OK) return rc;
  pCtx->pBuf = s->pBuf;
  for (j = 0; j < pIdx->nExact; j++) {
    uint32_t iNode = pIdx->aExactRow[j];
    if (aBits && !((aBits[iNode >> 3] >> (iNode & 7)) & 1)) continue;
    s->aNode[n] = iNode;
    s->aDist[n++] = indexExactDist(pCtx, iNode);
  }
  *pnOut = n;
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
  nEf = q->ef > 0 ? q->ef : colvecHnswDefaultEf(h->nRow);
  if (nEf < nWant) nEf = (int)nWant;
  rc = indexReserve(s, nEf, pCol->nByte);
  if (rc == SQLITE_OK && colvecHnswSearchReserve(s->pSearch, (uint32_t)h->nRow,
                                                 nEf) != COLVEC_OK) {
    rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_OK && pIdx->pQuant &&
      (colvecQuantQueryPrepare(pIdx->pQuant, (const float *)q->pVec, &s->qq) !=
           COLVEC_OK ||
       colvecQuantQueryPrepareScan(&s->qq) != COLVEC_OK)) {
    rc = SQLITE_NOMEM;
  }
  if (rc != SQLITE_OK) return rc;
  memset(&ctx, 0, sizeof(ctx));
  ctx.bScan = pIdx->pQuant != NULL && colvecQuantScanIsNative(&s->qq);
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
  hq.bTwoHop = aBits != NULL && s->bTwoHop;
  hq.rPass = (float)s->rPass;
  hq.xSeeds = hq.bTwoHop ? indexSeeds : NULL;
  ctx.rPass = s->rPass;
  rc = colvecHnswSearch(pGraph, &hq, nEf, (int)nWant, s->pSearch, s->aNode,
                        s->aDist, &nOut);
  s->stat.zWay = "graph";
  s->stat.nVisit += ctx.nVisit;
  s->bGaveUp = hq.bTwoHop && rc == COLVEC_OK && s->pSearch->bGaveUp;
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
  if (s->bGaveUp) return SQLITE_OK; /* the caller scans instead */
  if (pIdx->nExact > 0) {
    rc = hnswAddExact(pIdx, s, &ctx, aBits, &nOut);
    if (ctx.rcRead != SQLITE_OK) {
      *pzErr = ctx.zErrRead;
      return ctx.rcRead;
    }
    if (rc != SQLITE_OK) return rc;
  }
  return colvecRescoreFinish(h, pIdx, s, q, pCol, pC->ePrefault, nOut, pTopk,
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
