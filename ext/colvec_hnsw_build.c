/*
** colvec_hnsw_build.c — building the HNSW graph (see colvec_hnsw.h for the
** layout and the determinism contract).
**
** Nodes are inserted in node order, nBatch at a time. For each batch:
**
**   phase A (parallel over the batch's nodes): node q descends the graph as
**     it was at the start of the batch, runs an efConstruction beam search
**     on each of its levels (on the caller's estimate when it gives one,
**     ColvecHnswConfig.pEstimate, the candidates found then rescored with
**     the exact distance), adds the earlier nodes of its own batch that
**     reach that level as candidates, selects its links with hnswlib's
**     heuristic on exact distances and writes its own lists. Nothing
**     reachable from the frozen graph points at a batch node yet, so
**     concurrent readers never see these writes.
**   gather (sequential): every link q -> t becomes a back-link request
**     (t, level, q), in node order.
**   phase C (parallel over target nodes, t % nWorker): each worker applies
**     the requests of its targets in request order — append, or re-run the
**     heuristic on a full list. Distinct targets touch distinct lists.
**   entry (sequential): a node above the current top level becomes the
**     entry point.
**
** Each list therefore depends only on the data and the parameters, never on
** which worker computed it: nThread changes speed, not bytes.
*/
#include "colvec_hnsw.h"
#include "colvec_os.h"

#include <math.h>
#include <string.h>

/* The stop flag is read by worker threads while the calling thread sets
** it: relaxed atomics (a late read only costs one more node). */
#define HNSW_FLAG_GET(p) COLVEC_ATOMIC_GET_INT(p)
#define HNSW_FLAG_SET(p) COLVEC_ATOMIC_SET_INT(p, 1)

/* Nodes prefetched ahead while candidates are rescored. */
#define HNSW_RESCORE_AHEAD 4

typedef struct HnswBuild HnswBuild;
typedef struct HnswBuildQuery HnswBuildQuery;
typedef struct HnswWorker HnswWorker;

/*
** The query "distance to node iQuery", as a ColvecHnswQuery context: the
** caller's estimate when there is one, else its exact distance.
*/
struct HnswBuildQuery {
  float (*xDist)(void *, uint32_t, uint32_t); /* caller's exact distance */
  void (*xPrefetch)(void *, uint32_t);        /* caller's hint, or NULL */
  void *pCtx;                                 /* their context */
  uint32_t iQuery;                            /* node being inserted */
  const ColvecHnswEstimate *pEstimate;        /* caller's estimate, or NULL */
  void *pEst; /* the worker's estimate state (prepared for iQuery) */
};

/* One worker's state and scratch (one per thread). */
struct HnswWorker {
  HnswBuild *pBuild;            /* the build this worker belongs to */
  int iWorker;                  /* 0..nWorker-1 */
  int rc;                       /* first error met in the current phase */
  int bMain;                    /* runs on the calling thread: may ask the
                                ** interrupt hook */
  void (*xPhase)(HnswWorker *); /* phase to run on the thread */
  ColvecHnswSearch *pSearch;    /* beam-search scratch */
  ColvecHnswPair *aCand;        /* candidates: nEfC+nBatch (>= nM0+1) */
  ColvecHnswPair *aSel;         /* selected links: nM0 */
  uint64_t *aSortTmp;           /* sort scratch: twice aCand's entries */
  float *aPeer;                 /* distance to each earlier batch node */
  HnswBuildQuery bq;            /* distance-to-q context */
  ColvecHnswQuery query;        /* search callbacks over bq */
};

/* A build in progress. */
struct HnswBuild {
  ColvecHnsw *pGraph;                         /* graph being filled */
  const uint8_t *aLevel;                      /* level of each node */
  const ColvecHnswEstimate *pEstimate;        /* searches' estimate, or NULL */
  float (*xDist)(void *, uint32_t, uint32_t); /* exact node distance */
  void (*xPrefetch)(void *, uint32_t);        /* caller's hint, or NULL */
  void *pCtx;                                 /* their context */
  uint32_t nEfC;                              /* efConstruction */
  uint32_t nBatch;                            /* nodes per batch */
  int nWorker;                                /* workers (threads) */
  HnswWorker *aWorker;                        /* nWorker workers */
  uint32_t iFirst;           /* first node of the current batch */
  uint32_t iEnd;             /* one past its last node */
  uint32_t *aReq;            /* back-link requests: target, level, node */
  uint32_t nReq;             /* requests in aReq */
  uint32_t nReqAlloc;        /* capacity of aReq, in requests */
  ColvecInterrupt interrupt; /* caller's interrupt hook (calling thread) */
  int bStop; /* set when the hook said stop; read by every worker */
};

/* Exact distance between nodes a and b; NaN becomes +infinity. */
static float hnswNodeDist(const HnswBuild *pB, uint32_t a, uint32_t b) {
  float d = pB->xDist(pB->pCtx, a, b);
  return d != d ? INFINITY : d;
}

/* ColvecHnswQuery.xDist for the build: distance from the inserted node. */
static float hnswBuildQueryDist(void *pCtx, uint32_t iNode) {
  HnswBuildQuery *p = (HnswBuildQuery *)pCtx;
  float d;
  if (p->pEstimate) {
    p->pEstimate->xDistBatch(p->pEst, &iNode, 1, &d);
  } else {
    d = p->xDist(p->pCtx, p->iQuery, iNode);
  }
  return d != d ? INFINITY : d;
}

/* ColvecHnswQuery.xDistBatch of a build with an estimate: NaN as +inf. */
static void hnswBuildQueryEstBatch(void *pCtx, const uint32_t *aNode, int nNode,
                                   float *aOut) {
  HnswBuildQuery *p = (HnswBuildQuery *)pCtx;
  int i;
  p->pEstimate->xDistBatch(p->pEst, aNode, nNode, aOut);
  for (i = 0; i < nNode; i++) {
    if (aOut[i] != aOut[i]) aOut[i] = INFINITY;
  }
}

/* ColvecHnswQuery.xPrefetch for the build: the caller's hint. */
static void hnswBuildQueryPrefetch(void *pCtx, uint32_t iNode) {
  HnswBuildQuery *p = (HnswBuildQuery *)pCtx;
  p->xPrefetch(p->pCtx, iNode);
}

/* ColvecHnswQuery.xDistBatch for the build: all hints, then distances. */
static void hnswBuildQueryDistBatch(void *pCtx, const uint32_t *aNode,
                                    int nNode, float *aOut) {
  HnswBuildQuery *p = (HnswBuildQuery *)pCtx;
  int i;
  for (i = 0; i < nNode; i++)
    p->xPrefetch(p->pCtx, aNode[i]);
  for (i = 0; i < nNode; i++)
    aOut[i] = hnswBuildQueryDist(pCtx, aNode[i]);
}

/* Node id of local id `id` on iLevel (directory index above level 0). */
static uint32_t hnswNode(const ColvecHnsw *pG, int iLevel, uint32_t id) {
  return iLevel == 0 ? id : pG->aUpDir[3 * (size_t)id];
}

/* Local id of node iNode on iLevel (which the node must have). */
static uint32_t hnswLocal(const ColvecHnsw *pG, int iLevel, uint32_t iNode) {
  return iLevel == 0 ? iNode : (uint32_t)colvecHnswDirFind(pG, iNode);
}

/*
** hnswlib's neighbour-selection heuristic. aCand[0..nCand) are candidates
** (local ids on iLevel) sorted ascending by distance to the base node.
** Keeps a candidate when it is closer to the base than to every candidate
** already kept, until nKeep are kept; with fewer than nKeep candidates keeps
** them all. Writes the kept pairs to aOut and returns their number.
*/
static uint32_t hnswSelect(const HnswBuild *pB, int iLevel,
                           const ColvecHnswPair *aCand, uint32_t nCand,
                           uint32_t nKeep, ColvecHnswPair *aOut) {
  const ColvecHnsw *pG = pB->pGraph;
  uint32_t i, s, nOut = 0;
  if (nCand < nKeep) {
    memcpy(aOut, aCand, nCand * sizeof(ColvecHnswPair));
    return nCand;
  }
  for (i = 0; i < nCand && nOut < nKeep; i++) {
    uint32_t iNode = hnswNode(pG, iLevel, aCand[i].id);
    int bGood = 1;
    for (s = 0; s < nOut && bGood; s++) {
      float d = hnswNodeDist(pB, hnswNode(pG, iLevel, aOut[s].id), iNode);
      if (d < aCand[i].d) bGood = 0;
    }
    if (bGood) aOut[nOut++] = aCand[i];
  }
  return nOut;
}

/*
** Replaces the estimated distances of aCand[0..nCand) (local ids on
** iLevel) by exact distances to node q, prefetching a few nodes ahead.
*/
static void hnswRescore(const HnswBuild *pB, int iLevel, uint32_t q,
                        ColvecHnswPair *aCand, uint32_t nCand) {
  const ColvecHnsw *pG = pB->pGraph;
  uint32_t j;
  for (j = 0; pB->xPrefetch && j < nCand && j < HNSW_RESCORE_AHEAD; j++) {
    pB->xPrefetch(pB->pCtx, hnswNode(pG, iLevel, aCand[j].id));
  }
  for (j = 0; j < nCand; j++) {
    if (pB->xPrefetch && j + HNSW_RESCORE_AHEAD < nCand) {
      pB->xPrefetch(pB->pCtx,
                    hnswNode(pG, iLevel, aCand[j + HNSW_RESCORE_AHEAD].id));
    }
    aCand[j].d = hnswNodeDist(pB, q, hnswNode(pG, iLevel, aCand[j].id));
  }
}

/* Overwrites list a (count word + nCap links) with aSel[0..nSel). */
static void hnswWriteList(uint32_t *a, uint32_t nCap,
                          const ColvecHnswPair *aSel, uint32_t nSel) {
  uint32_t j;
  a[0] = nSel;
  for (j = 0; j < nCap; j++)
    a[1 + j] = j < nSel ? aSel[j].id : 0;
}

/*
** Phase A for node q: finds and writes q's own links on each of its levels
** against the graph frozen at the start of the batch plus the earlier
** nodes of the batch. Returns COLVEC_OK or an error from the beam search.
*/
static int hnswInsertLinks(HnswWorker *pW, uint32_t q) {
  HnswBuild *pB = pW->pBuild;
  ColvecHnsw *pG = pB->pGraph;
  const int lq = pB->aLevel[q];
  const int iTop = pG->iMaxLevel; /* frozen: only changes between batches */
  uint32_t iCurNode = pG->iEntry, iCurUp = pG->iEntryUp, j;
  float dCur = 0;
  int l, rc = COLVEC_OK;

  pW->bq.iQuery = q;
  if (pB->pEstimate) {
    rc = pB->pEstimate->xPrepare(pW->bq.pEst, q);
    if (rc != COLVEC_OK) return rc;
  }
  for (j = pB->iFirst; j < q; j++) {
    pW->aPeer[j - pB->iFirst] = hnswNodeDist(pB, q, j);
  }
  if (iTop >= 0) {
    dCur = hnswBuildQueryDist(&pW->bq, iCurNode);
    if (iTop > lq) {
      colvecHnswGreedy(pG, &pW->query, iTop, lq + 1, &iCurUp, &dCur);
      iCurNode = pG->aUpDir[3 * (size_t)iCurUp];
    }
  }
  for (l = lq; l >= 0 && rc == COLVEC_OK; l--) {
    uint32_t nCand = 0, nSel, nCap = l ? pG->nM : pG->nM0;
    if (l <= iTop) {
      ColvecHnswSearch *pS = pW->pSearch;
      rc = colvecHnswSearchLayer(pG, l, &pW->query, l ? iCurUp : iCurNode, dCur,
                                 pB->nEfC, pS);
      if (rc != COLVEC_OK) break;
      memcpy(pW->aCand, pS->aTop, pS->nTop * sizeof(ColvecHnswPair));
      nCand = pS->nTop;
      dCur = pS->aTop[0].d; /* the nearest: aTop is ascending */
      iCurUp = pS->aTop[0].id;
      iCurNode = hnswNode(pG, l, iCurUp);
      if (pB->pEstimate) hnswRescore(pB, l, q, pW->aCand, nCand);
    }
    for (j = pB->iFirst; j < q; j++) {
      if (pB->aLevel[j] >= l) {
        pW->aCand[nCand].d = pW->aPeer[j - pB->iFirst];
        pW->aCand[nCand].id = hnswLocal(pG, l, j);
        nCand++;
      }
    }
    colvecHnswSortPairs(pW->aCand, nCand, pW->aSortTmp);
    nSel = hnswSelect(pB, l, pW->aCand, nCand, pG->nM, pW->aSel);
    hnswWriteList(colvecHnswLinks(pG, l, hnswLocal(pG, l, q)), nCap, pW->aSel,
                  nSel);
  }
  return rc;
}

/*
** Phase C for one request: adds node q to node t's list on iLevel, or,
** when the list is full, re-selects it with the heuristic from its old
** links plus q.
*/
static void hnswBackLink(HnswWorker *pW, uint32_t t, int iLevel, uint32_t q) {
  HnswBuild *pB = pW->pBuild;
  const ColvecHnsw *pG = pB->pGraph;
  uint32_t *a = colvecHnswLinks(pG, iLevel, hnswLocal(pG, iLevel, t));
  uint32_t nCap = iLevel ? pG->nM : pG->nM0, n = a[0], j, nSel;
  if (n < nCap) {
    a[1 + n] = hnswLocal(pG, iLevel, q);
    a[0] = n + 1;
    return;
  }
  pW->aCand[0].d = hnswNodeDist(pB, t, q);
  pW->aCand[0].id = hnswLocal(pG, iLevel, q);
  for (j = 0; j < n; j++) {
    pW->aCand[1 + j].d = hnswNodeDist(pB, t, hnswNode(pG, iLevel, a[1 + j]));
    pW->aCand[1 + j].id = a[1 + j];
  }
  colvecHnswSortPairs(pW->aCand, n + 1, pW->aSortTmp);
  nSel = hnswSelect(pB, iLevel, pW->aCand, n + 1, nCap, pW->aSel);
  hnswWriteList(a, nCap, pW->aSel, nSel);
}

/*
** Returns non-zero when the build must stop: on the calling thread the
** caller's interrupt hook is asked (and its answer shared through bStop),
** other threads read bStop.
*/
static int hnswStopped(HnswWorker *pW) {
  HnswBuild *pB = pW->pBuild;
  if (HNSW_FLAG_GET(&pB->bStop)) return 1;
  if (pW->bMain && COLVEC_INTERRUPTED(&pB->interrupt)) {
    HNSW_FLAG_SET(&pB->bStop);
    return 1;
  }
  return 0;
}

/*
** Phase A on one worker: its share (q = iFirst+iWorker, step nWorker),
** asking before each node whether to stop.
*/
static void hnswPhaseLinks(HnswWorker *pW) {
  HnswBuild *pB = pW->pBuild;
  uint32_t q;
  for (q = pB->iFirst + (uint32_t)pW->iWorker;
       q < pB->iEnd && pW->rc == COLVEC_OK; q += (uint32_t)pB->nWorker) {
    if (hnswStopped(pW)) {
      pW->rc = COLVEC_INTERRUPT;
    } else {
      pW->rc = hnswInsertLinks(pW, q);
    }
  }
}

/* Phase C on one worker: the requests whose target t % nWorker is its own. */
static void hnswPhaseBackLinks(HnswWorker *pW) {
  HnswBuild *pB = pW->pBuild;
  uint32_t r;
  for (r = 0; r < pB->nReq; r++) {
    const uint32_t *a = &pB->aReq[3 * (size_t)r];
    if (a[0] % (uint32_t)pB->nWorker == (uint32_t)pW->iWorker) {
      hnswBackLink(pW, a[0], (int)a[1], a[2]);
    }
  }
}

/* Thread entry (colvecOsThreadStart): runs the worker's phase. */
static void *hnswThreadMain(void *p) {
  HnswWorker *pW = (HnswWorker *)p;
  pW->xPhase(pW);
  return NULL;
}

/*
** Runs xPhase on every worker — on its own thread for workers 1..n-1, on
** the calling thread for worker 0 — and waits for all of them. A thread
** that cannot be started (or a build without threads) runs its share on
** the calling thread instead (the result is the same). Returns the first
** worker error, or COLVEC_OK.
*/
static int hnswRunPhase(HnswBuild *pB, void (*xPhase)(HnswWorker *)) {
  int i, rc = COLVEC_OK;
  ColvecThread *apThread[COLVEC_HNSW_MAX_THREAD];
  for (i = 0; i < pB->nWorker; i++) {
    pB->aWorker[i].rc = COLVEC_OK;
    pB->aWorker[i].bMain = i == 0;
    pB->aWorker[i].xPhase = xPhase;
    apThread[i] = NULL;
  }
  for (i = 1; i < pB->nWorker; i++) {
    colvecOsThreadStart(&apThread[i], hnswThreadMain, &pB->aWorker[i]);
  }
  xPhase(&pB->aWorker[0]);
  for (i = 1; i < pB->nWorker; i++) {
    if (apThread[i]) {
      colvecOsThreadJoin(apThread[i]);
      continue;
    }
    pB->aWorker[i].bMain = 1; /* not started: runs here */
    xPhase(&pB->aWorker[i]);
  }
  for (i = 0; i < pB->nWorker && rc == COLVEC_OK; i++)
    rc = pB->aWorker[i].rc;
  return rc;
}

/*
** Collects the back-link requests of the current batch (every link of
** every batch node, in node and level order) into pB->aReq. Returns
** COLVEC_OK or COLVEC_NOMEM.
*/
static int hnswGatherRequests(HnswBuild *pB) {
  const ColvecHnsw *pG = pB->pGraph;
  uint32_t q, j;
  int l;
  pB->nReq = 0;
  for (q = pB->iFirst; q < pB->iEnd; q++) {
    for (l = 0; l <= pB->aLevel[q]; l++) {
      const uint32_t *a = colvecHnswLinks(pG, l, hnswLocal(pG, l, q));
      if (pB->nReq + a[0] > pB->nReqAlloc) {
        uint32_t nNew = (pB->nReqAlloc + a[0]) * 2;
        uint32_t *aNew =
            (uint32_t *)colvecRealloc(pB->aReq, (int64_t)nNew * 12);
        if (aNew == NULL) return COLVEC_NOMEM;
        pB->aReq = aNew;
        pB->nReqAlloc = nNew;
      }
      for (j = 1; j <= a[0]; j++) {
        uint32_t *aR = &pB->aReq[3 * (size_t)pB->nReq++];
        aR[0] = hnswNode(pG, l, a[j]);
        aR[1] = (uint32_t)l;
        aR[2] = q;
      }
    }
  }
  return COLVEC_OK;
}

/* Makes the batch's highest node above the current top the entry point. */
static void hnswUpdateEntry(HnswBuild *pB) {
  ColvecHnsw *pG = pB->pGraph;
  uint32_t q;
  for (q = pB->iFirst; q < pB->iEnd; q++) {
    if ((int)pB->aLevel[q] > pG->iMaxLevel) {
      pG->iMaxLevel = pB->aLevel[q];
      pG->iEntry = q;
      pG->iEntryUp = pB->aLevel[q] ? (uint32_t)colvecHnswDirFind(pG, q) : 0;
    }
  }
}

/* Allocates every worker's scratch. Returns COLVEC_OK or COLVEC_NOMEM. */
static int hnswWorkersInit(HnswBuild *pB) {
  int rc = COLVEC_OK, i;
  uint32_t nCand = pB->nEfC + pB->nBatch;
  if (nCand < pB->pGraph->nM0 + 1) nCand = pB->pGraph->nM0 + 1;
  pB->aWorker = (HnswWorker *)colvecMallocZero(
      &rc, (int64_t)pB->nWorker * (int64_t)sizeof(HnswWorker));
  for (i = 0; i < pB->nWorker && rc == COLVEC_OK; i++) {
    HnswWorker *pW = &pB->aWorker[i];
    pW->pBuild = pB;
    pW->iWorker = i;
    pW->bq.xDist = pB->xDist;
    pW->bq.xPrefetch = pB->xPrefetch;
    pW->bq.pCtx = pB->pCtx;
    pW->query.xDist = hnswBuildQueryDist;
    if (pB->pEstimate) {
      pW->bq.pEstimate = pB->pEstimate;
      pW->query.xDistBatch = hnswBuildQueryEstBatch;
      if (rc == COLVEC_OK) rc = pB->pEstimate->xNew(pB->pCtx, &pW->bq.pEst);
    } else if (pB->xPrefetch) {
      pW->query.xPrefetch = hnswBuildQueryPrefetch;
      pW->query.xDistBatch = hnswBuildQueryDistBatch;
    }
    pW->query.pCtx = &pW->bq;
    pW->aCand = (ColvecHnswPair *)colvecMallocZero(
        &rc, (int64_t)nCand * (int64_t)sizeof(ColvecHnswPair));
    pW->aSortTmp = (uint64_t *)colvecMallocZero(
        &rc, (int64_t)nCand * 2 * (int64_t)sizeof(uint64_t));
    pW->aSel = (ColvecHnswPair *)colvecMallocZero(
        &rc, (int64_t)pB->pGraph->nM0 * (int64_t)sizeof(ColvecHnswPair));
    pW->aPeer = (float *)colvecMallocZero(&rc, (int64_t)pB->nBatch * 4);
    if (rc == COLVEC_OK) rc = colvecHnswSearchNew(&pW->pSearch);
    if (rc == COLVEC_OK) {
      rc = colvecHnswSearchReserve(pW->pSearch, pB->pGraph->nNode,
                                   (int)pB->nEfC);
    }
  }
  return rc;
}

/* Releases the workers' scratch and the request array. */
static void hnswBuildCleanup(HnswBuild *pB) {
  int i;
  if (pB->aWorker) {
    for (i = 0; i < pB->nWorker; i++) {
      colvecHnswSearchFree(pB->aWorker[i].pSearch);
      if (pB->pEstimate && pB->pEstimate->xFree) {
        pB->pEstimate->xFree(pB->aWorker[i].bq.pEst);
      }
      colvecFree(pB->aWorker[i].aCand);
      colvecFree(pB->aWorker[i].aSel);
      colvecFree(pB->aWorker[i].aSortTmp);
      colvecFree(pB->aWorker[i].aPeer);
    }
    colvecFree(pB->aWorker);
  }
  colvecFree(pB->aReq);
}

/* A build that can be run in steps (colvec_hnsw.h). */
struct ColvecHnswBuilder {
  HnswBuild b;        /* the build; b.iEnd: nodes inserted so far */
  uint32_t nNode;     /* nodes of the graph */
  uint8_t *aOwnLevel; /* levels computed here (b.aLevel), or NULL */
};

/*
** Starts a build (see the interface comment in colvec_hnsw.h). Returns
** COLVEC_OK and sets *pp, COLVEC_RANGE for a parameter or level out of
** range, or COLVEC_NOMEM; *pp is NULL on error.
*/
int colvecHnswBuilderNew(const ColvecHnswConfig *pConfig, uint32_t nNode,
                         const uint8_t *aLevel, const uint64_t *aRowid,
                         float (*xDist)(void *pCtx, uint32_t a, uint32_t b),
                         void *pCtx, ColvecHnswBuilder **pp) {
  int rc = COLVEC_OK;
  int nM = pConfig && pConfig->nM ? pConfig->nM : COLVEC_HNSW_DEFAULT_M;
  int nEfC = pConfig && pConfig->nEfC ? pConfig->nEfC : COLVEC_HNSW_DEFAULT_EFC;
  int nBatch =
      pConfig && pConfig->nBatch ? pConfig->nBatch : COLVEC_HNSW_DEFAULT_BATCH;
  int nThread = pConfig && pConfig->nThread ? pConfig->nThread : 1;
  ColvecHnswBuilder *p;
  HnswBuild *pB;

  *pp = NULL;
  if (nM < 2 || nM > COLVEC_HNSW_MAX_M || nEfC < 1 ||
      nEfC > COLVEC_HNSW_MAX_EFC || nBatch < 1 ||
      nBatch > COLVEC_HNSW_MAX_BATCH || nThread < 1 ||
      nThread > COLVEC_HNSW_MAX_THREAD) {
    return COLVEC_RANGE;
  }
  p = (ColvecHnswBuilder *)colvecMallocZero(&rc, sizeof(*p));
  if (p == NULL) return COLVEC_NOMEM;
  p->nNode = nNode;
  if (aLevel == NULL && nNode > 0) {
    uint32_t i;
    p->aOwnLevel = (uint8_t *)colvecMalloc((int64_t)nNode);
    if (p->aOwnLevel == NULL) {
      colvecFree(p);
      return COLVEC_NOMEM;
    }
    for (i = 0; i < nNode; i++) {
      p->aOwnLevel[i] = (uint8_t)colvecHnswLevel(aRowid ? aRowid[i] : i, nM);
    }
    aLevel = p->aOwnLevel;
  }
  pB = &p->b;
  pB->aLevel = aLevel;
  pB->xDist = xDist;
  pB->xPrefetch = pConfig ? pConfig->xPrefetch : NULL;
  pB->pEstimate = pConfig ? pConfig->pEstimate : NULL;
  if (pConfig) pB->interrupt = pConfig->interrupt;
  pB->pCtx = pCtx;
  pB->nEfC = (uint32_t)nEfC;
  pB->nBatch = (uint32_t)nBatch;
  pB->nWorker = nThread < nBatch ? nThread : nBatch;
  {
    /* More workers than CPUs only add thread starts and barrier waits: the
    ** graph is the same for any worker count. */
    int nCpu = colvecOsCpuCount();
    if (nCpu > 0 && pB->nWorker > nCpu) pB->nWorker = nCpu;
  }
  rc = colvecHnswAlloc(nNode, nM, aLevel, &pB->pGraph);
  if (rc == COLVEC_OK && nNode > 0) rc = hnswWorkersInit(pB);
  if (rc != COLVEC_OK) {
    colvecHnswBuilderFree(p);
    return rc;
  }
  *pp = p;
  return COLVEC_OK;
}

/* Inserts the next nodes; see colvec_hnsw.h. */
int colvecHnswBuilderStep(ColvecHnswBuilder *p, uint32_t nMax,
                          ColvecInterrupt interrupt) {
  HnswBuild *pB = &p->b;
  uint32_t iStop;
  int rc = COLVEC_OK;
  if (pB->iEnd > p->nNode) return COLVEC_RANGE; /* a step failed before */
  iStop = p->nNode - pB->iEnd > nMax ? pB->iEnd + nMax : p->nNode;
  pB->interrupt = interrupt;
  pB->bStop = 0;
  /* whole batches, so that the graph is the one a build in one go makes */
  for (pB->iFirst = pB->iEnd; rc == COLVEC_OK && pB->iFirst < iStop;
       pB->iFirst = pB->iEnd) {
    pB->iEnd =
        p->nNode - pB->iFirst > pB->nBatch ? pB->iFirst + pB->nBatch : p->nNode;
    rc = hnswRunPhase(pB, hnswPhaseLinks);
    if (rc == COLVEC_OK) rc = hnswGatherRequests(pB);
    if (rc == COLVEC_OK) rc = hnswRunPhase(pB, hnswPhaseBackLinks);
    if (rc == COLVEC_OK) hnswUpdateEntry(pB);
  }
  if (rc != COLVEC_OK) pB->iEnd = p->nNode + 1; /* unusable from now on */
  return rc;
}

/* Nodes inserted so far; see colvec_hnsw.h. */
uint32_t colvecHnswBuilderCount(const ColvecHnswBuilder *p) {
  return p->b.iEnd > p->nNode ? 0 : p->b.iEnd;
}

/* Hands over the finished graph; see colvec_hnsw.h. */
int colvecHnswBuilderFinish(ColvecHnswBuilder *p, ColvecHnsw **ppGraph) {
  *ppGraph = NULL;
  if (p->b.iEnd != p->nNode) return COLVEC_RANGE;
  *ppGraph = p->b.pGraph;
  p->b.pGraph = NULL;
  return COLVEC_OK;
}

/* Frees a builder and its graph; see colvec_hnsw.h. */
void colvecHnswBuilderFree(ColvecHnswBuilder *p) {
  if (p == NULL) return;
  hnswBuildCleanup(&p->b);
  colvecHnswFree(p->b.pGraph);
  colvecFree(p->aOwnLevel);
  colvecFree(p);
}

/*
** Builds the graph in one go (see the interface comment in colvec_hnsw.h).
** Returns
** COLVEC_OK and sets *ppGraph, COLVEC_RANGE for a parameter or level out of
** range, COLVEC_NOMEM, COLVEC_INTERRUPT when the interrupt hook said stop,
** or an error from the search. *ppGraph is NULL on error, and everything
** allocated here is released.
*/
int colvecHnswBuild(const ColvecHnswConfig *pConfig, uint32_t nNode,
                    const uint8_t *aLevel, const uint64_t *aRowid,
                    float (*xDist)(void *pCtx, uint32_t a, uint32_t b),
                    void *pCtx, ColvecHnsw **ppGraph) {
  ColvecHnswBuilder *p = NULL;
  ColvecInterrupt none;
  int rc;
  *ppGraph = NULL;
  memset(&none, 0, sizeof(none));
  rc = colvecHnswBuilderNew(pConfig, nNode, aLevel, aRowid, xDist, pCtx, &p);
  if (rc == COLVEC_OK) {
    rc = colvecHnswBuilderStep(p, nNode, pConfig ? pConfig->interrupt : none);
  }
  if (rc == COLVEC_OK) rc = colvecHnswBuilderFinish(p, ppGraph);
  colvecHnswBuilderFree(p);
  return rc;
}
