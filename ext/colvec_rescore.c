/*
** colvec_rescore.c — rescoring: the exact distances of an index search's
** candidates, from the float32 vectors (mapped: several per kernel call,
** with read-ahead hints while the pages may not be resident; access=file:
** one read each), offered to the query's top-k heap, and the scratch's
** candidate buffers those searches fill. Every index type
** (colvec_index.c, colvec_index_hnsw.c) calls it; it calls only the layers
** below (colvec_layout.c, the kernels, colvec_topk.c). See colvecInt.h.
*/
#include "colvecInt.h"

#include <math.h>
#include <stdlib.h>

/* Candidates rescored per batch-kernel call. */
#define RESCORE_BATCH 256

/* qsort comparator for candidate node ids. */
static int rescoreNodeCmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Makes room for candidates and one vector; see colvecInt.h. */
int colvecRescoreReserve(ColvecIndexScratch *s, int nCand, int nByte) {
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
#define RESCORE_COLD_MICROS 20.0
/*
** Rescoring faster than this per vector means every page was resident
** (at most minor faults, which cost 1-3 us each on the test VM; a read
** from storage costs tens of microseconds or more).
*/
#define RESCORE_WARM_MICROS 5.0

/*
** Distances of the nOut mapped candidates (s->apVec, in row order) to the
** query, several vectors per kernel call for l2 and dot, offered to pTopk.
*/
static void rescoreMapped(ColvecSegHandle *h, ColvecIndexScratch *s,
                          const ColvecKnnQuery *q, const ColvecColumn *pCol,
                          int nOut, ColvecTopk *pTopk) {
  const ColvecKernels *pK = colvecKernelsBest();
  int i;
  if (pCol->eMetric == COLVEC_METRIC_L2 || pCol->eMetric == COLVEC_METRIC_DOT) {
    int bL2 = pCol->eMetric == COLVEC_METRIC_L2;
    for (i = 0; i < nOut; i += RESCORE_BATCH) {
      int j, n = nOut - i < RESCORE_BATCH ? nOut - i : RESCORE_BATCH;
      float aOut[RESCORE_BATCH];
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
** vector at a time through colvecLayoutVector (a mapped vector, or a read
** into s->pBuf). Returns SQLITE_OK, or an error with *pzErr set
** (SQLITE_IOERR_READ for a failed read, COLVEC_CORRUPT_VTAB).
*/
int colvecRescoreEach(ColvecSegHandle *h, ColvecIndexScratch *s,
                      const ColvecKnnQuery *q, const ColvecColumn *pCol,
                      int nOut, ColvecTopk *pTopk, char **pzErr) {
  const ColvecKernels *pK = colvecKernelsBest();
  int i;
  for (i = 0; i < nOut; i++) {
    int rc;
    const void *pVec =
        colvecLayoutVector(h, pCol, q->iCol, s->aNode[i], s->pBuf, pzErr, &rc);
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
static int rescoreVectors(ColvecSegHandle *h, ColvecSegIndex *pIdx,
                          ColvecIndexScratch *s, const ColvecKnnQuery *q,
                          const ColvecColumn *pCol, int ePrefault, int nOut,
                          ColvecTopk *pTopk, char **pzErr) {
  int i;
  s->stat.nRescore += nOut;
  qsort(s->aNode, (size_t)nOut, sizeof(uint32_t), rescoreNodeCmp);
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
    rescoreMapped(h, s, q, pCol, nOut, pTopk);
    if (nOut > 0 && ePrefault == COLVEC_PREFAULT_NONE) {
      double rPer = (colvecOsMicros() - tStart) / nOut;
      if (bHint && rPer < RESCORE_WARM_MICROS) pIdx->bWarm = 1;
      if (!bHint && rPer > RESCORE_COLD_MICROS) pIdx->bWarm = 0;
    }
    return SQLITE_OK;
  }
  return colvecRescoreEach(h, s, q, pCol, nOut, pTopk, pzErr);
}

/* Offers a graph search's candidates to pTopk; see colvecInt.h. */
int colvecRescoreFinish(ColvecSegHandle *h, ColvecSegIndex *pIdx,
                        ColvecIndexScratch *s, const ColvecKnnQuery *q,
                        const ColvecColumn *pCol, int ePrefault, int nOut,
                        ColvecTopk *pTopk, char **pzErr) {
  if (pIdx->pQuant == NULL) {
    /* traversed on the stored vectors: exact distances, which the search
    ** kept in float; the results' are recomputed as an exact scan reports
    ** them (double), so both kinds of segment rank alike */
    return colvecRescoreEach(h, s, q, pCol, nOut, pTopk, pzErr);
  }
  if (!q->bRescore) {
    /* the codes' estimates as they are */
    int i;
    for (i = 0; i < nOut; i++) {
      colvecTopkPush(pTopk, s->aDist[i], h->aRowid[s->aNode[i]], s->aNode[i]);
    }
    return SQLITE_OK;
  }
  return rescoreVectors(h, pIdx, s, q, pCol, ePrefault, nOut, pTopk, pzErr);
}
