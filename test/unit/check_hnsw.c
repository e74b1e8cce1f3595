/*
** check_hnsw.c — Check suite for the HNSW graph (ext/colvec_hnsw*.c).
**
** Seeded synthetic data: clustered Gaussian vectors, searched with exact
** float distances and compared with brute force. Asserts recall thresholds
** (measured, with margin), recall growing with ef, byte-identical builds
** whatever the thread count, serialise/open round trips, refusal of every
** truncation and survival of random corruptions, the filter callback, and
** the edge cases N = 0, N = 1, k > N. Graphs are built once per process and
** shared by the tests (the runner does not fork). Emulated
** (COLVEC_TEST_SCALE, see test/lib/testscale.h) the main data set has fewer
** vectors and the recall measurements fewer queries.
*/
#include "colvec_hnsw.h"
#include "../lib/testscale.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_DIM 32      /* dimensions of the main data set */
#define T_N 10000     /* vectors in the main data set (natively) */
#define T_NCLUSTER 40 /* Gaussian clusters */
#define T_NQUERY 200  /* queries per recall measurement (natively) */
#define T_K 10        /* k of recall@k */

/*
** Assertions that cost nothing when they pass (Check's ck_assert_* records
** every passing check with a system call: far too slow inside loops).
*/
#define T_ASSERT(c)                                                            \
  do {                                                                         \
    if (!(c)) ck_abort_msg("assertion failed: %s", #c);                        \
  } while (0)
#define T_CMP(a, op, b)                                                        \
  do {                                                                         \
    long long tA_ = (long long)(a), tB_ = (long long)(b);                      \
    if (!(tA_ op tB_)) {                                                       \
      ck_abort_msg("%s %s %s failed: %lld vs %lld", #a, #op, #b, tA_, tB_);    \
    }                                                                          \
  } while (0)
#define T_EQ(a, b) T_CMP(a, ==, b)
#define T_GE(a, b) T_CMP(a, >=, b)
#define T_GT(a, b) T_CMP(a, >, b)
#define T_LE(a, b) T_CMP(a, <=, b)
#define T_LT(a, b) T_CMP(a, <, b)

/* A data set plus the metric used on it. */
typedef struct TData TData;
struct TData {
  int nDim;    /* dimensions */
  uint32_t n;  /* vectors */
  float *aVec; /* n*nDim floats */
  int bDot;    /* 1: distance is -dot, 0: squared l2 */
};

/* Search context: the data and one query vector, plus callback counters. */
typedef struct TQuery TQuery;
struct TQuery {
  const TData *pData; /* data searched */
  const float *aQ;    /* query vector */
  uint32_t iMod;      /* filter: accept node when node % iMod == iRem */
  uint32_t iRem;      /* (iMod 0: accept node < iRem) */
  int nPrefetch;      /* xPrefetch calls */
  int bBadPrefetch;   /* xPrefetch got an id >= n */
};

/*************************************************************************
** Data and distances.
*/

/* splitmix64 step: the suite's only random source. */
static uint64_t tRand(uint64_t *pState) {
  uint64_t z = (*pState += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform double in (0,1). */
static double tUnif(uint64_t *pState) {
  return ((double)(tRand(pState) >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal draw (Box-Muller). */
static double tGauss(uint64_t *pState) {
  double u = tUnif(pState), v = tUnif(pState);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/*
** Fills aOut with n vectors of nDim drawn around T_NCLUSTER centres (the
** centres come from seed 1 always, so data and queries share them).
*/
static void tGenerate(float *aOut, uint32_t n, int nDim, uint64_t seed) {
  static float aCentre[T_NCLUSTER * 64];
  uint64_t s = 1;
  uint32_t i;
  int j;
  for (i = 0; i < (uint32_t)T_NCLUSTER * (uint32_t)nDim; i++) {
    aCentre[i] = (float)tGauss(&s);
  }
  for (i = 0; i < n; i++) {
    int c = (int)(tRand(&seed) % T_NCLUSTER);
    for (j = 0; j < nDim; j++) {
      aOut[(size_t)i * nDim + j] =
          aCentre[c * nDim + j] + 0.5f * (float)tGauss(&seed);
    }
  }
}

/* Distance between vectors a and b under the data set's metric. */
static float tVecDist(const TData *p, const float *a, const float *b) {
  float s = 0;
  int j;
  if (p->bDot) {
    for (j = 0; j < p->nDim; j++)
      s += a[j] * b[j];
    return -s;
  }
  for (j = 0; j < p->nDim; j++)
    s += (a[j] - b[j]) * (a[j] - b[j]);
  return s;
}

/* Build callback: distance between nodes a and b. */
static float tNodeDist(void *pCtx, uint32_t a, uint32_t b) {
  const TData *p = (const TData *)pCtx;
  return tVecDist(p, &p->aVec[(size_t)a * p->nDim],
                  &p->aVec[(size_t)b * p->nDim]);
}

/* Search callback: distance from the query to node i. */
static float tQueryDist(void *pCtx, uint32_t i) {
  const TQuery *q = (const TQuery *)pCtx;
  return tVecDist(q->pData, q->aQ, &q->pData->aVec[(size_t)i * q->pData->nDim]);
}

/* Search callback: counts prefetches and checks their range. */
static void tPrefetch(void *pCtx, uint32_t i) {
  TQuery *q = (TQuery *)pCtx;
  q->nPrefetch++;
  if (i >= q->pData->n) q->bBadPrefetch = 1;
}

/*
** Search callback xDistBatch: tQueryDist of each node; counts the nodes
** given and checks their range (flagged like a bad prefetch).
*/
static void tDistBatch(void *pCtx, const uint32_t *aNode, int nNode,
                       float *aOut) {
  TQuery *q = (TQuery *)pCtx;
  int i;
  for (i = 0; i < nNode; i++) {
    q->nPrefetch++;
    if (aNode[i] >= q->pData->n) q->bBadPrefetch = 1;
    aOut[i] = tQueryDist(pCtx, aNode[i]);
  }
}

/* Filter rule of a TQuery. */
static int tAcceptRule(const TQuery *q, uint32_t i) {
  return q->iMod ? i % q->iMod == q->iRem : i < q->iRem;
}

/* Search callback: the filter. */
static int tAccept(void *pCtx, uint32_t i) {
  return tAcceptRule((const TQuery *)pCtx, i);
}

/*
** Brute force: the k best nodes passing the query's filter (all when
** bFilter is 0), ascending by (distance, id). Returns their number.
*/
static int tBrute(const TQuery *q, int bFilter, int k, uint32_t *aNode,
                  float *aDist) {
  int n = 0, j;
  uint32_t i;
  for (i = 0; i < q->pData->n; i++) {
    float d;
    if (bFilter && !tAcceptRule(q, i)) continue;
    d = tQueryDist((void *)q, i);
    if (n == k && !(d < aDist[k - 1])) continue;
    j = n < k ? n++ : k - 1;
    while (j > 0 && aDist[j - 1] > d) {
      aDist[j] = aDist[j - 1];
      aNode[j] = aNode[j - 1];
      j--;
    }
    aDist[j] = d;
    aNode[j] = i;
  }
  return n;
}

/* Fraction of aTruth[0..nTruth) present in aGot[0..nGot). */
static double tOverlap(const uint32_t *aGot, int nGot, const uint32_t *aTruth,
                       int nTruth) {
  int i, j, nHit = 0;
  for (i = 0; i < nTruth; i++) {
    for (j = 0; j < nGot; j++) {
      if (aGot[j] == aTruth[i]) {
        nHit++;
        break;
      }
    }
  }
  return nTruth ? (double)nHit / nTruth : 1.0;
}

/*************************************************************************
** Shared fixtures, built once.
*/

static TData gL2, gDot;       /* main data sets */
static int gnVec;             /* vectors in gL2: T_N, fewer emulated */
static int gnQuery;           /* queries: T_NQUERY, fewer emulated */
static float *gaQuery;        /* gnQuery query vectors */
static ColvecHnsw *gpL2;      /* graph of gL2, built with 2 threads */
static ColvecHnsw *gpDot;     /* graph of gDot, efConstruction 100 */
static ColvecHnswSearch *gpS; /* shared search scratch */

/* Calls of tBuildPrefetch, and whether one named a node out of range. */
static int gnBuildPrefetch;
static int gbBadBuildPrefetch;

/* Build hint (ColvecHnswConfig.xPrefetch): counts calls, checks the id. */
static void tBuildPrefetch(void *pCtx, uint32_t iNode) {
  const TData *p = (const TData *)pCtx;
  __atomic_fetch_add(&gnBuildPrefetch, 1, __ATOMIC_RELAXED);
  if (iNode >= p->n) __atomic_store_n(&gbBadBuildPrefetch, 1, __ATOMIC_RELAXED);
}

/* Builds a graph of p with the given config; fails the test on error. */
static ColvecHnsw *tBuild(const TData *p, int nM, int nEfC, int nThread) {
  ColvecHnswConfig cfg;
  ColvecHnsw *pG = NULL;
  int rc;
  memset(&cfg, 0, sizeof(cfg));
  cfg.nM = nM;
  cfg.nEfC = nEfC;
  cfg.nThread = nThread;
  rc = colvecHnswBuild(&cfg, p->n, NULL, NULL, tNodeDist, (void *)p, &pG);
  T_EQ(rc, COLVEC_OK);
  T_ASSERT(NULL != pG);
  return pG;
}

/* Creates the main data sets and graphs on first use. */
static void tSetup(void) {
  if (gpL2) return;
  gnVec = testScaled(T_N, 3000);
  gnQuery = testScaled(T_NQUERY, 50);
  gL2.nDim = T_DIM;
  gL2.n = gnVec;
  gL2.aVec = (float *)malloc(sizeof(float) * gnVec * T_DIM);
  tGenerate(gL2.aVec, gnVec, T_DIM, 42);
  gDot = gL2;
  gDot.bDot = 1;
  gaQuery = (float *)malloc(sizeof(float) * gnQuery * T_DIM);
  tGenerate(gaQuery, gnQuery, T_DIM, 4242);
  gpL2 = tBuild(&gL2, 0, 0, 2);
  gpDot = tBuild(&gDot, 0, 100, 2);
}

/* Serialises pG into a fresh malloc'd buffer; *pn gets its size. */
static uint8_t *tSerialize(const ColvecHnsw *pG, size_t *pn) {
  int64_t n = colvecHnswSerializedSize(pG);
  uint8_t *a = (uint8_t *)malloc((size_t)n + 8);
  T_EQ(colvecHnswSerialize(pG, a, (size_t)n - 1), COLVEC_RANGE);
  T_EQ(colvecHnswSerialize(pG, a, (size_t)n), COLVEC_OK);
  *pn = (size_t)n;
  return a;
}

/* Mean recall@T_K of pG over the shared queries at beam width nEf. */
static double tRecall(const ColvecHnsw *pG, const TData *p, int nEf) {
  double sum = 0;
  int i;
  for (i = 0; i < gnQuery; i++) {
    TQuery q;
    ColvecHnswQuery hq = {tQueryDist, NULL, NULL, NULL, NULL, 0, 0.0f, NULL};
    uint32_t aGot[T_K], aTruth[T_K];
    float aGotD[T_K], aTruthD[T_K];
    int nGot, nTruth;
    memset(&q, 0, sizeof(q));
    q.pData = p;
    q.aQ = &gaQuery[(size_t)i * T_DIM];
    hq.pCtx = &q;
    T_EQ(colvecHnswSearch(pG, &hq, nEf, T_K, gpS, aGot, aGotD, &nGot),
         COLVEC_OK);
    T_EQ(nGot, T_K);
    nTruth = tBrute(&q, 0, T_K, aTruth, aTruthD);
    sum += tOverlap(aGot, nGot, aTruth, nTruth);
  }
  return sum / gnQuery;
}

/*************************************************************************
** Tests.
*/

/* Levels: deterministic, geometric with P(level >= L) = M^-L. */
START_TEST(test_level) {
  int aCount[4] = {0, 0, 0, 0};
  uint64_t i;
  for (i = 0; i < 200000; i++) {
    int l = colvecHnswLevel(i, 16);
    T_EQ(l, colvecHnswLevel(i, 16));
    T_LE(l, COLVEC_HNSW_MAX_LEVEL);
    if (l >= 1) aCount[1]++;
    if (l >= 2) aCount[2]++;
  }
  /* expected 12500 and 781 */
  T_GT(aCount[1], 12000);
  T_LT(aCount[1], 13000);
  T_GT(aCount[2], 650);
  T_LT(aCount[2], 920);
  T_EQ(colvecHnswLevel(7, 1), 0);
}
END_TEST

/* Recall@10 vs brute force, l2, and its growth with ef. */
START_TEST(test_recall_l2) {
  double r16, r64, r256;
  tSetup();
  r16 = tRecall(gpL2, &gL2, 16);
  r64 = tRecall(gpL2, &gL2, 64);
  r256 = tRecall(gpL2, &gL2, 256);
  printf("recall@10 l2:  ef16 %.4f ef64 %.4f ef256 %.4f\n", r16, r64, r256);
  T_ASSERT(r64 >= 0.97);
  T_ASSERT(r256 >= 0.99);
  T_ASSERT(r16 <= r64 && r64 <= r256 && r16 < r256);
}
END_TEST

/* Recall@10 vs brute force, inner product. */
START_TEST(test_recall_dot) {
  double r16, r64, r256;
  tSetup();
  r16 = tRecall(gpDot, &gDot, 16);
  r64 = tRecall(gpDot, &gDot, 64);
  r256 = tRecall(gpDot, &gDot, 256);
  printf("recall@10 dot: ef16 %.4f ef64 %.4f ef256 %.4f\n", r16, r64, r256);
  T_ASSERT(r64 >= 0.95);
  T_ASSERT(r16 <= r64 && r64 <= r256 && r16 < r256);
}
END_TEST

/*
** Same data and parameters -> identical bytes, built twice, with 1 thread
** and with 2 (3,000 nodes of the main set, 1,500 emulated, default
** parameters).
*/
START_TEST(test_determinism) {
  TData sub;
  ColvecHnsw *p1, *p2, *p3 = NULL;
  ColvecHnswConfig cfg;
  uint8_t *a1, *a2, *a3;
  size_t n1, n2, n3;
  tSetup();
  sub = gL2;
  sub.n = testScaled(3000, 1500);
  p1 = tBuild(&sub, 0, 0, 1);
  p2 = tBuild(&sub, 0, 0, 2);
  /* the prefetch hint changes nothing either (and is called, in range) */
  memset(&cfg, 0, sizeof(cfg));
  cfg.nThread = 2;
  cfg.xPrefetch = tBuildPrefetch;
  gnBuildPrefetch = 0;
  gbBadBuildPrefetch = 0;
  T_EQ(colvecHnswBuild(&cfg, sub.n, NULL, NULL, tNodeDist, &sub, &p3),
       COLVEC_OK);
  T_GT(gnBuildPrefetch, 1000);
  T_ASSERT(!gbBadBuildPrefetch);
  a1 = tSerialize(p1, &n1);
  a2 = tSerialize(p2, &n2);
  a3 = tSerialize(p3, &n3);
  T_EQ(n1, n2);
  T_ASSERT(memcmp(a1, a2, n1) == 0);
  T_EQ(n1, n3);
  T_ASSERT(memcmp(a1, a3, n1) == 0);
  T_GE(colvecHnswMaxLevel(p1), 2);
  free(a1);
  free(a2);
  free(a3);
  colvecHnswFree(p1);
  colvecHnswFree(p2);
  colvecHnswFree(p3);
}
END_TEST

/* One worker's state of the test estimate (ColvecHnswEstimate). */
typedef struct TEst TEst;
struct TEst {
  const TData *p;  /* the data */
  uint32_t iQuery; /* the node prepared */
  int bPrepared;   /* xPrepare was called */
};
static int gbEstCoarse;   /* the estimate rounds distances to quarters */
static int gnEstFailNew;  /* xNew fails when this reaches 1 (0: never) */
static int gbEstFailPrep; /* xPrepare fails */
static int gbEstBad;      /* xDistBatch met an unprepared state or bad id */

/* xNew of the test estimate; fails as gnEstFailNew says. */
static int tEstNew(void *pCtx, void **pp) {
  TEst *e;
  if (gnEstFailNew > 0 &&
      __atomic_sub_fetch(&gnEstFailNew, 1, __ATOMIC_RELAXED) == 0) {
    *pp = NULL;
    return COLVEC_NOMEM;
  }
  e = (TEst *)calloc(1, sizeof(TEst));
  e->p = (const TData *)pCtx;
  *pp = e;
  return COLVEC_OK;
}

/* xPrepare of the test estimate. */
static int tEstPrepare(void *pState, uint32_t iNode) {
  TEst *e = (TEst *)pState;
  if (gbEstFailPrep) return COLVEC_NOMEM;
  e->iQuery = iNode;
  e->bPrepared = 1;
  return COLVEC_OK;
}

/* xDistBatch: the exact distance, or (gbEstCoarse) rounded to quarters. */
static void tEstBatch(void *pState, const uint32_t *aNode, int nNode,
                      float *aOut) {
  TEst *e = (TEst *)pState;
  int i;
  for (i = 0; i < nNode; i++) {
    float d = tNodeDist((void *)e->p, e->iQuery, aNode[i]);
    if (!e->bPrepared || aNode[i] >= e->p->n) gbEstBad = 1;
    aOut[i] = gbEstCoarse ? floorf(d * 0.25f) * 4.0f : d;
  }
}

/* xFree of the test estimate. */
static void tEstFree(void *pState) { free(pState); }

static const ColvecHnswEstimate gEst = {tEstNew, tEstPrepare, tEstBatch,
                                        tEstFree};

/* Builds sub with the test estimate on nThread threads, in steps of nStep
** nodes (0: in one go); returns its serialised bytes (*pn: their size). */
static uint8_t *tEstBuild(const TData *p, int nThread, uint32_t nStep,
                          size_t *pn) {
  ColvecHnswConfig cfg;
  ColvecHnsw *pG = NULL;
  uint8_t *a;
  memset(&cfg, 0, sizeof(cfg));
  cfg.nThread = nThread;
  cfg.pEstimate = &gEst;
  if (nStep == 0) {
    T_EQ(colvecHnswBuild(&cfg, p->n, NULL, NULL, tNodeDist, (void *)p, &pG),
         COLVEC_OK);
  } else {
    ColvecHnswBuilder *pB = NULL;
    ColvecInterrupt none;
    memset(&none, 0, sizeof(none));
    T_EQ(
        colvecHnswBuilderNew(&cfg, p->n, NULL, NULL, tNodeDist, (void *)p, &pB),
        COLVEC_OK);
    while (colvecHnswBuilderCount(pB) < p->n) {
      T_EQ(colvecHnswBuilderStep(pB, nStep, none), COLVEC_OK);
    }
    T_EQ(colvecHnswBuilderFinish(pB, &pG), COLVEC_OK);
    colvecHnswBuilderFree(pB);
  }
  a = tSerialize(pG, pn);
  colvecHnswFree(pG);
  return a;
}

/*
** A build whose searches run on an estimate (ColvecHnswConfig.pEstimate):
** an estimate equal to the exact distance gives the graph of a build
** without one, byte for byte; a coarse one gives the same graph on one or
** two threads, in one go or in steps, with the recall of an exact build;
** a failing xNew or xPrepare fails the build with COLVEC_NOMEM.
*/
START_TEST(test_estimate) {
  TData sub;
  ColvecHnsw *p0, *pG = NULL;
  ColvecHnswConfig cfg;
  uint8_t *a0, *a1, *a2, *a3;
  size_t n0, n1, n2, n3;
  double r0, r1;
  tSetup();
  sub = gL2;
  sub.n = testScaled(3000, 1500);
  p0 = tBuild(&sub, 0, 0, 1);
  a0 = tSerialize(p0, &n0);
  gbEstCoarse = 0;
  gbEstBad = 0;
  a1 = tEstBuild(&sub, 2, 0, &n1);
  T_EQ(n0, n1);
  T_ASSERT(memcmp(a0, a1, n0) == 0);
  free(a1);
  gbEstCoarse = 1;
  a1 = tEstBuild(&sub, 1, 0, &n1);
  a2 = tEstBuild(&sub, 2, 0, &n2);
  a3 = tEstBuild(&sub, 2, 77, &n3);
  T_ASSERT(!gbEstBad);
  T_EQ(n1, n2);
  T_ASSERT(memcmp(a1, a2, n1) == 0);
  T_EQ(n1, n3);
  T_ASSERT(memcmp(a1, a3, n1) == 0);
  T_ASSERT(n0 != n1 || memcmp(a0, a1, n0) != 0); /* the estimate mattered */
  free(a1);
  free(a2);
  free(a3);
  /* recall of the coarse-estimate graph on the full data */
  memset(&cfg, 0, sizeof(cfg));
  cfg.nThread = 2;
  cfg.pEstimate = &gEst;
  T_EQ(colvecHnswBuild(&cfg, gL2.n, NULL, NULL, tNodeDist, &gL2, &pG),
       COLVEC_OK);
  r0 = tRecall(gpL2, &gL2, 64);
  r1 = tRecall(pG, &gL2, 64);
  printf("recall@10 l2 ef64: exact build %.4f, coarse estimate %.4f\n", r0, r1);
  T_ASSERT(r1 >= r0 - 0.02);
  colvecHnswFree(pG);
  pG = NULL;
  /* failures of the estimate's hooks */
  gnEstFailNew = 1;
  T_EQ(colvecHnswBuild(&cfg, sub.n, NULL, NULL, tNodeDist, &sub, &pG),
       COLVEC_NOMEM);
  T_ASSERT(pG == NULL);
  gnEstFailNew = 0;
  gbEstFailPrep = 1;
  T_EQ(colvecHnswBuild(&cfg, sub.n, NULL, NULL, tNodeDist, &sub, &pG),
       COLVEC_NOMEM);
  T_ASSERT(pG == NULL);
  gbEstFailPrep = 0;
  free(a0);
  colvecHnswFree(p0);
}
END_TEST

/* Interrupt hook of test_steps: always says stop. */
static int tStopNow(void *pCtx) {
  (void)pCtx;
  return 1;
}

/*
** A build in steps (colvecHnswBuilder*) makes the graph a build in one go
** makes, byte for byte, for uneven step sizes and one or two threads;
** Finish before the last node is COLVEC_RANGE; a failed step leaves a
** builder that refuses further steps.
*/
START_TEST(test_steps) {
  static const uint32_t aStep[] = {1, 7, 64, 333, 1000};
  TData sub;
  ColvecHnsw *p1, *p2 = NULL;
  ColvecHnswBuilder *pB = NULL;
  ColvecHnswConfig cfg;
  ColvecInterrupt none;
  uint8_t *a1, *a2;
  size_t n1, n2;
  int nThread, i = 0, nStep;
  tSetup();
  sub = gL2;
  sub.n = testScaled(3000, 1500);
  p1 = tBuild(&sub, 0, 0, 1);
  a1 = tSerialize(p1, &n1);
  memset(&none, 0, sizeof(none));
  for (nThread = 1; nThread <= 2; nThread++) {
    memset(&cfg, 0, sizeof(cfg));
    cfg.nThread = nThread;
    T_EQ(colvecHnswBuilderNew(&cfg, sub.n, NULL, NULL, tNodeDist, &sub, &pB),
         COLVEC_OK);
    T_EQ(colvecHnswBuilderCount(pB), 0);
    nStep = 0;
    while (colvecHnswBuilderCount(pB) < sub.n) {
      uint32_t nBefore = colvecHnswBuilderCount(pB);
      ColvecHnsw *pEarly = NULL;
      T_EQ(colvecHnswBuilderFinish(pB, &pEarly), COLVEC_RANGE);
      T_ASSERT(pEarly == NULL);
      T_EQ(colvecHnswBuilderStep(pB, aStep[i++ % 5], none), COLVEC_OK);
      T_GT(colvecHnswBuilderCount(pB), nBefore);
      nStep++;
    }
    T_EQ(colvecHnswBuilderFinish(pB, &p2), COLVEC_OK);
    colvecHnswBuilderFree(pB);
    a2 = tSerialize(p2, &n2);
    T_EQ(n1, n2);
    T_ASSERT(memcmp(a1, a2, n1) == 0);
    free(a2);
    colvecHnswFree(p2);
    /* every step size was used: steps round up to whole batches of 32, so
    ** the 1,500 nodes of an emulated run take 5 steps, 3,000 take 10 */
    T_GT(nStep, 4);
  }
  /* a step stopped by the interrupt hook: the builder is spent */
  T_EQ(colvecHnswBuilderNew(&cfg, sub.n, NULL, NULL, tNodeDist, &sub, &pB),
       COLVEC_OK);
  T_EQ(colvecHnswBuilderStep(pB, 100, none), COLVEC_OK);
  {
    ColvecInterrupt stop;
    stop.xInterrupt = tStopNow;
    stop.pCtx = NULL;
    T_EQ(colvecHnswBuilderStep(pB, 100, stop), COLVEC_INTERRUPT);
  }
  T_EQ(colvecHnswBuilderCount(pB), 0);
  T_EQ(colvecHnswBuilderStep(pB, 100, none), COLVEC_RANGE);
  colvecHnswBuilderFree(pB);
  free(a1);
  colvecHnswFree(p1);
}
END_TEST

/* Interrupt hook of test_interrupt: says stop on call *pCtx == 0. */
static int tInterrupt(void *pCtx) {
  int *pn = (int *)pCtx;
  return --*pn == 0;
}

/*
** The interrupt hook: asked as nodes are inserted (on the calling thread
** only), it stops the build with COLVEC_INTERRUPT and no graph, at once;
** a hook that never says stop changes nothing.
*/
START_TEST(test_interrupt) {
  TData sub;
  ColvecHnswConfig cfg;
  ColvecHnsw *pG, *pRef;
  uint8_t *a1, *a2;
  size_t n1, n2;
  int nThread, nLeft;
  tSetup();
  sub = gL2;
  sub.n = testScaled(3000, 1500);
  for (nThread = 1; nThread <= 2; nThread++) {
    memset(&cfg, 0, sizeof(cfg));
    cfg.nThread = nThread;
    cfg.interrupt.xInterrupt = tInterrupt;
    cfg.interrupt.pCtx = &nLeft;
    nLeft = 100;
    pG = (ColvecHnsw *)1;
    T_EQ(colvecHnswBuild(&cfg, sub.n, NULL, NULL, tNodeDist, &sub, &pG),
         COLVEC_INTERRUPT);
    T_ASSERT(pG == NULL);
    T_EQ(nLeft, 0); /* not asked again once it said stop */
  }
  nLeft = -1; /* never reaches 0 */
  T_EQ(colvecHnswBuild(&cfg, sub.n, NULL, NULL, tNodeDist, &sub, &pG),
       COLVEC_OK);
  /* asked about once per node of worker 0 (-1000 for 3,000 nodes) */
  T_ASSERT(nLeft < -(int)sub.n / 3);
  pRef = tBuild(&sub, 0, 0, 1);
  a1 = tSerialize(pG, &n1);
  a2 = tSerialize(pRef, &n2);
  T_EQ(n1, n2);
  T_ASSERT(memcmp(a1, a2, n1) == 0);
  free(a1);
  free(a2);
  colvecHnswFree(pG);
  colvecHnswFree(pRef);
}
END_TEST

/*
** Runs nQuery searches on pA and pB and asserts identical results (nodes,
** distances, counts).
*/
static void tSameResults(const ColvecHnsw *pA, const ColvecHnsw *pB,
                         const TData *p, int nEf, int k) {
  int i, j;
  for (i = 0; i < 50; i++) {
    TQuery q;
    ColvecHnswQuery hq = {tQueryDist, NULL, NULL, NULL, NULL, 0, 0.0f, NULL};
    uint32_t aNodeA[64], aNodeB[64];
    float aDistA[64], aDistB[64];
    int nA, nB;
    memset(&q, 0, sizeof(q));
    q.pData = p;
    q.aQ = &gaQuery[(size_t)i * T_DIM];
    hq.pCtx = &q;
    T_EQ(colvecHnswSearch(pA, &hq, nEf, k, gpS, aNodeA, aDistA, &nA),
         COLVEC_OK);
    T_EQ(colvecHnswSearch(pB, &hq, nEf, k, gpS, aNodeB, aDistB, &nB),
         COLVEC_OK);
    T_EQ(nA, nB);
    for (j = 0; j < nA; j++) {
      T_EQ(aNodeA[j], aNodeB[j]);
      T_ASSERT(aDistA[j] == aDistB[j]);
      if (j > 0) T_ASSERT(aDistA[j - 1] <= aDistA[j]);
    }
  }
}

/* serialise -> open (in place, copied, lazy) -> same search results. */
START_TEST(test_roundtrip) {
  uint8_t *a, *aOdd, *a2;
  size_t n, n2;
  ColvecHnsw *pIn = NULL, *pCopy = NULL, *pLazy = NULL;
  tSetup();
  a = tSerialize(gpL2, &n);
  T_EQ(colvecHnswOpen(a, n, 0, &pIn), COLVEC_OK);
  T_EQ(colvecHnswCheck(pIn), COLVEC_OK);
  T_ASSERT(NULL == pIn->pOwned); /* used in place */
  aOdd = (uint8_t *)malloc(n + 1);
  memcpy(aOdd + 1, a, n);
  T_EQ(colvecHnswOpen(aOdd + 1, n, 0, &pCopy), COLVEC_OK);
  T_ASSERT(NULL != pCopy->pOwned); /* misaligned: private copy */
  T_EQ(colvecHnswOpen(a, n, COLVEC_HNSW_OPEN_LAZY, &pLazy), COLVEC_OK);
  T_EQ(colvecHnswNodeCount(pIn), gnVec);
  T_EQ(colvecHnswMaxLevel(pIn), colvecHnswMaxLevel(gpL2));
  tSameResults(gpL2, pIn, &gL2, 64, 10);
  tSameResults(gpL2, pCopy, &gL2, 64, 10);
  tSameResults(gpL2, pLazy, &gL2, 32, 20);
  /* re-serialising an opened graph gives the same bytes */
  a2 = tSerialize(pCopy, &n2);
  T_EQ(n, n2);
  T_ASSERT(memcmp(a, a2, n) == 0);
  colvecHnswFree(pIn);
  colvecHnswFree(pCopy);
  colvecHnswFree(pLazy);
  free(a);
  free(a2);
  free(aOdd);
}
END_TEST

/* A small graph for the corruption tests: 400 x 8, M=4 (several levels). */
static ColvecHnsw *tSmallGraph(TData *pData) {
  static float aVec[400 * 8];
  pData->nDim = 8;
  pData->n = 400;
  pData->aVec = aVec;
  pData->bDot = 0;
  tGenerate(aVec, 400, 8, 7);
  return tBuild(pData, 4, 32, 1);
}

/* Every truncation (and an extension) of a serialised graph is refused. */
START_TEST(test_truncation) {
  TData d;
  ColvecHnsw *pG = tSmallGraph(&d), *pX = NULL;
  size_t n, i;
  uint8_t *a = tSerialize(pG, &n);
  uint8_t *aCopy = (uint8_t *)malloc(n + 4);
  T_GE(colvecHnswMaxLevel(pG), 2);
  for (i = 0; i < n; i++) {
    memcpy(aCopy, a, i); /* exact-size buffer so ASan sees overreads */
    T_EQ(colvecHnswOpen(i ? aCopy : NULL, i, 0, &pX), COLVEC_CORRUPT);
    T_ASSERT(NULL == pX);
  }
  memcpy(aCopy, a, n);
  memset(aCopy + n, 0, 4);
  T_EQ(colvecHnswOpen(aCopy, n + 4, 0, &pX), COLVEC_CORRUPT);
  T_EQ(colvecHnswOpen(aCopy, n, 0, &pX), COLVEC_OK);
  colvecHnswFree(pX);
  free(a);
  free(aCopy);
  colvecHnswFree(pG);
}
END_TEST

/*
** Random corruptions: open refuses or yields a graph whose searches end,
** return in-range nodes, and succeed when the graph was fully validated.
*/
START_TEST(test_corruption) {
  TData d;
  ColvecHnsw *pG = tSmallGraph(&d);
  size_t n, i;
  uint8_t *a = tSerialize(pG, &n);
  uint8_t *aBad = (uint8_t *)malloc(n);
  uint64_t s = 99;
  int iTrial, nRefused = 0, nLazyFail = 0;
  float aQ[8];
  for (iTrial = 0; iTrial < 3000; iTrial++) {
    int nHit = 1 + (int)(tRand(&s) % 4), h, bLazy;
    memcpy(aBad, a, n);
    for (h = 0; h < nHit; h++) {
      size_t iPos = (size_t)(tRand(&s) % n);
      if (tRand(&s) % 2) iPos = (iPos / 4) * 4; /* whole word */
      if (tRand(&s) % 3 == 0 && iPos + 4 <= n) {
        uint32_t v = (uint32_t)(tRand(&s) % 2 ? tRand(&s) % 512 : tRand(&s));
        memcpy(&aBad[iPos], &v, 4);
      } else {
        aBad[iPos] = (uint8_t)tRand(&s);
      }
    }
    for (bLazy = 0; bLazy < 2; bLazy++) {
      ColvecHnsw *pX = NULL;
      int rc = colvecHnswOpen(aBad, n, bLazy ? COLVEC_HNSW_OPEN_LAZY : 0, &pX);
      if (rc != COLVEC_OK) {
        T_EQ(rc, COLVEC_CORRUPT);
        T_ASSERT(NULL == pX);
        if (!bLazy) nRefused++;
        continue;
      }
      for (i = 0; i < 3; i++) {
        TQuery q;
        ColvecHnswQuery hq = {tQueryDist, tPrefetch, NULL, NULL,
                              NULL,       0,         0.0f, NULL};
        uint32_t aNode[16];
        float aDist[16];
        int nOut = -1, j;
        memset(&q, 0, sizeof(q));
        tGenerate(aQ, 1, 8, tRand(&s));
        q.pData = &d;
        q.aQ = aQ;
        hq.pCtx = &q;
        rc = colvecHnswSearch(pX, &hq, 16, 10, gpS, aNode, aDist, &nOut);
        T_ASSERT(rc == COLVEC_OK || (bLazy && rc == COLVEC_CORRUPT));
        if (rc != COLVEC_OK) nLazyFail++;
        T_GE(nOut, 0);
        T_LE(nOut, 10);
        T_ASSERT(!q.bBadPrefetch);
        for (j = 0; j < nOut; j++)
          T_LT(aNode[j], 400);
      }
      colvecHnswFree(pX);
    }
  }
  printf("corruption: %d of 3000 refused at open, %d lazy searches CORRUPT\n",
         nRefused, nLazyFail);
  T_GT(nRefused, 1500);
  free(a);
  free(aBad);
  colvecHnswFree(pG);
}
END_TEST

/*
** Runs one filtered search and asserts: only accepted nodes, the count is
** min(k, number accepted), and overlap with the filtered brute force is at
** least rMin. Returns the overlap.
*/
static double tFiltered(TQuery *q, int nEf, int k, int nAccepted, double rMin) {
  ColvecHnswQuery hq = {tQueryDist, NULL, tAccept, NULL, NULL, 0, 0.0f, NULL};
  uint32_t aNode[64], aTruth[64];
  float aDist[64], aTruthD[64];
  int nOut, nTruth, j;
  double r;
  hq.pCtx = q;
  T_EQ(colvecHnswSearch(gpL2, &hq, nEf, k, gpS, aNode, aDist, &nOut),
       COLVEC_OK);
  T_EQ(nOut, k < nAccepted ? k : nAccepted);
  for (j = 0; j < nOut; j++)
    T_ASSERT(tAcceptRule(q, aNode[j]));
  nTruth = tBrute(q, 1, k, aTruth, aTruthD);
  r = tOverlap(aNode, nOut, aTruth, nTruth);
  T_ASSERT(r >= rMin);
  return r;
}

/* The filter admits only accepted nodes and still returns k of them. */
START_TEST(test_filter) {
  double sum10 = 0, sum1 = 0;
  int i;
  tSetup();
  for (i = 0; i < 50; i++) {
    TQuery q;
    memset(&q, 0, sizeof(q));
    q.pData = &gL2;
    q.aQ = &gaQuery[(size_t)i * T_DIM];
    q.iMod = 10; /* 10 % selectivity */
    q.iRem = 3;
    sum10 += tFiltered(&q, 64, 10, gnVec / 10, 0.5);
    q.iMod = 100; /* 1 % */
    sum1 += tFiltered(&q, 64, 10, gnVec / 100, 0.5);
    q.iMod = 0; /* only nodes 0..5: fewer than k, all must be found */
    q.iRem = 6;
    T_ASSERT(tFiltered(&q, 64, 10, 6, 1.0) == 1.0);
  }
  printf("filtered recall@10: 10%% %.4f, 1%% %.4f\n", sum10 / 50, sum1 / 50);
  T_ASSERT(sum10 / 50 >= 0.95);
  T_ASSERT(sum1 / 50 >= 0.95);
}
END_TEST

/* Seeds of a two-hop search: 32 nodes = 3 (mod 10) spread over the graph. */
static int tSeeds(void *pCtx, uint32_t *aSeed, int nMax) {
  int j;
  (void)pCtx;
  for (j = 0; j < 32 && j < nMax; j++)
    aSeed[j] = (uint32_t)((j * (gnVec / 32)) / 10 * 10 + 3);
  return j;
}

/*
** The two-hop search (bTwoHop): at 10 % selectivity it returns k accepted
** nodes without giving up and with the recall of the classic filtered
** search, and as much from seeds when taken for sparse near the query; a
** filter admitting 6 nodes in all gives up (fewer than nEf are
** reachable), returning none, or returns all 6.
*/
START_TEST(test_filter_twohop) {
  double sum10 = 0, sumSeed = 0;
  int i, nGaveUp = 0;
  tSetup();
  for (i = 0; i < 50; i++) {
    ColvecHnswQuery hq = {tQueryDist, NULL, tAccept, NULL, NULL, 1, 0.1f, NULL};
    uint32_t aNode[64], aTruth[64];
    float aDist[64], aTruthD[64];
    int nOut, nTruth, j;
    TQuery q;
    memset(&q, 0, sizeof(q));
    q.pData = &gL2;
    q.aQ = &gaQuery[(size_t)i * T_DIM];
    q.iMod = 10;
    q.iRem = 3;
    hq.pCtx = &q;
    T_EQ(colvecHnswSearch(gpL2, &hq, 64, 10, gpS, aNode, aDist, &nOut),
         COLVEC_OK);
    if (gpS->bGaveUp) {
      T_EQ(nOut, 0);
      nGaveUp++;
      continue;
    }
    T_EQ(nOut, 10);
    for (j = 0; j < nOut; j++)
      T_ASSERT(tAcceptRule(&q, aNode[j]));
    nTruth = tBrute(&q, 1, 10, aTruth, aTruthD);
    sum10 += tOverlap(aNode, nOut, aTruth, nTruth);
    /* taken for sparse near the query (a share of 1 expected): the search
    ** starts from the seeds, accepted nodes spread over the graph */
    hq.rPass = 1.0f;
    hq.xSeeds = tSeeds;
    T_EQ(colvecHnswSearch(gpL2, &hq, 64, 10, gpS, aNode, aDist, &nOut),
         COLVEC_OK);
    T_ASSERT(!gpS->bGaveUp);
    T_EQ(nOut, 10);
    for (j = 0; j < nOut; j++)
      T_ASSERT(tAcceptRule(&q, aNode[j]));
    sumSeed += tOverlap(aNode, nOut, aTruth, nTruth);
    hq.xSeeds = NULL;
    q.iMod = 0; /* only nodes 0..5 */
    q.iRem = 6;
    hq.rPass = 6.0f / (float)gnVec;
    T_EQ(colvecHnswSearch(gpL2, &hq, 64, 10, gpS, aNode, aDist, &nOut),
         COLVEC_OK);
    T_ASSERT(gpS->bGaveUp ? nOut == 0 : nOut == 6);
    /* the classic search after a two-hop one: never gives up */
    hq.bTwoHop = 0;
    T_EQ(colvecHnswSearch(gpL2, &hq, 64, 10, gpS, aNode, aDist, &nOut),
         COLVEC_OK);
    T_EQ(nOut, 6);
    T_ASSERT(!gpS->bGaveUp);
  }
  printf("two-hop filtered recall@10: 10%% %.4f, %d of 50 gave up\n",
         nGaveUp < 50 ? sum10 / (50 - nGaveUp) : 0.0, nGaveUp);
  printf("two-hop from seeds: recall@10 %.4f\n",
         nGaveUp < 50 ? sumSeed / (50 - nGaveUp) : 0.0);
  T_LE(nGaveUp, 2);
  T_ASSERT(sum10 / (50 - nGaveUp) >= 0.95);
  T_ASSERT(sumSeed / (50 - nGaveUp) >= 0.9);
}
END_TEST

/*
** xPrefetch and xDistBatch see only valid nodes and change nothing: the
** same nodes and distances as xDist alone.
*/
START_TEST(test_prefetch) {
  int i, j;
  tSetup();
  for (i = 0; i < 20; i++) {
    TQuery q;
    ColvecHnswQuery hq = {tQueryDist, NULL, NULL, NULL, NULL, 0, 0.0f, NULL};
    uint32_t aA[10], aB[10], aC[10];
    float dA[10], dB[10], dC[10];
    int nA, nB, nC;
    memset(&q, 0, sizeof(q));
    q.pData = &gL2;
    q.aQ = &gaQuery[(size_t)i * T_DIM];
    hq.pCtx = &q;
    T_EQ(colvecHnswSearch(gpL2, &hq, 64, 10, gpS, aA, dA, &nA), 0);
    hq.xPrefetch = tPrefetch;
    T_EQ(colvecHnswSearch(gpL2, &hq, 64, 10, gpS, aB, dB, &nB), 0);
    T_EQ(nA, nB);
    for (j = 0; j < nA; j++)
      T_EQ(aA[j], aB[j]);
    T_GT(q.nPrefetch, 50);
    T_ASSERT(!q.bBadPrefetch);
    q.nPrefetch = 0;
    hq.xDistBatch = tDistBatch;
    T_EQ(colvecHnswSearch(gpL2, &hq, 64, 10, gpS, aC, dC, &nC), 0);
    T_EQ(nA, nC);
    for (j = 0; j < nA; j++) {
      T_EQ(aA[j], aC[j]);
      T_ASSERT(dA[j] == dC[j]);
    }
    T_GT(q.nPrefetch, 50); /* nodes handed to xDistBatch */
    T_ASSERT(!q.bBadPrefetch);
  }
}
END_TEST

/* Searches gpL2 for query i with pS; asserts the answer of pFresh. */
static void tSameAsFresh(ColvecHnswSearch *pS, ColvecHnswSearch *pFresh,
                         int i) {
  TQuery q;
  ColvecHnswQuery hq = {tQueryDist, NULL, NULL, NULL, NULL, 0, 0.0f, NULL};
  uint32_t aA[10], aB[10];
  float dA[10], dB[10];
  int nA, nB, j;
  memset(&q, 0, sizeof(q));
  q.pData = &gL2;
  q.aQ = &gaQuery[(size_t)i * T_DIM];
  hq.pCtx = &q;
  T_EQ(colvecHnswSearch(gpL2, &hq, 32, 10, pS, aA, dA, &nA), COLVEC_OK);
  T_EQ(colvecHnswSearch(gpL2, &hq, 32, 10, pFresh, aB, dB, &nB), COLVEC_OK);
  T_EQ(nA, 10);
  T_EQ(nA, nB);
  for (j = 0; j < nA; j++)
    T_EQ(aA[j], aB[j]);
}

/*
** The visited set is emptied before each search: after a search of a
** smaller graph (the set then grows), and after a search that stopped on a
** corrupt link half way (its marks still set), a search gives the answer
** of a fresh context.
*/
START_TEST(test_visit_reset) {
  ColvecHnswSearch *pFresh = NULL, *pOld = NULL;
  TData d;
  ColvecHnsw *pG = tSmallGraph(&d);
  size_t n;
  uint8_t *a = tSerialize(pG, &n);
  uint8_t *aBad = (uint8_t *)malloc(n);
  uint64_t s = 5;
  int i, iTrial, bStopped = 0;
  float aQ[8];
  tSetup();
  T_EQ(colvecHnswSearchNew(&pFresh), COLVEC_OK);
  T_EQ(colvecHnswSearchNew(&pOld), COLVEC_OK);
  /* a corrupt link met by a search of a lazily opened graph */
  for (iTrial = 0; iTrial < 20000 && !bStopped; iTrial++) {
    ColvecHnsw *pX = NULL;
    size_t iPos = (size_t)(tRand(&s) % (n / 4)) * 4;
    uint32_t v = 400 + (uint32_t)(tRand(&s) % 1000);
    memcpy(aBad, a, n);
    memcpy(&aBad[iPos], &v, 4);
    if (colvecHnswOpen(aBad, n, COLVEC_HNSW_OPEN_LAZY, &pX) == COLVEC_OK) {
      TQuery q;
      ColvecHnswQuery hq = {tQueryDist, NULL, NULL, NULL, NULL, 0, 0.0f, NULL};
      uint32_t aNode[16];
      float aDist[16];
      int nOut;
      memset(&q, 0, sizeof(q));
      tGenerate(aQ, 1, 8, tRand(&s));
      q.pData = &d;
      q.aQ = aQ;
      hq.pCtx = &q;
      if (colvecHnswSearch(pX, &hq, 64, 10, pOld, aNode, aDist, &nOut) ==
          COLVEC_CORRUPT) {
        bStopped = pOld->nTouched > 1;
      }
      colvecHnswFree(pX);
    }
  }
  T_ASSERT(bStopped);
  for (i = 0; i < 20; i++)
    tSameAsFresh(pOld, pFresh, i);
  colvecHnswSearchFree(pFresh);
  colvecHnswSearchFree(pOld);
  free(a);
  free(aBad);
  colvecHnswFree(pG);
}
END_TEST

/* k > N returns N (exactly, sorted); N = 1 and N = 0 work end to end. */
START_TEST(test_small) {
  static float aVec[5 * 8], aQ[8];
  uint32_t nN, aNode[16], aTruth[16];
  float aDist[16], aTruthD[16];
  int nOut, nTruth, j;
  tGenerate(aVec, 5, 8, 3);
  tGenerate(aQ, 1, 8, 4);
  for (nN = 0; nN <= 5; nN++) {
    TData d = {8, 0, aVec, 0};
    TQuery q;
    ColvecHnswQuery hq = {tQueryDist, tPrefetch, NULL, NULL,
                          NULL,       0,         0.0f, NULL};
    ColvecHnsw *pG, *pO = NULL;
    uint8_t *a;
    size_t n;
    d.n = nN;
    memset(&q, 0, sizeof(q));
    q.pData = &d;
    q.aQ = aQ;
    hq.pCtx = &q;
    pG = tBuild(&d, 0, 0, 2);
    T_EQ(colvecHnswNodeCount(pG), nN);
    a = tSerialize(pG, &n);
    T_EQ(colvecHnswOpen(a, n, 0, &pO), COLVEC_OK);
    T_EQ(colvecHnswSearch(pO, &hq, 64, 10, gpS, aNode, aDist, &nOut),
         COLVEC_OK);
    T_EQ(nOut, (int)nN);
    nTruth = tBrute(&q, 0, 10, aTruth, aTruthD);
    T_EQ(nTruth, (int)nN);
    for (j = 0; j < nOut; j++) {
      T_EQ(aNode[j], aTruth[j]);
      T_ASSERT(aDist[j] == aTruthD[j]);
    }
    /* ef below k limits the answer to ef nodes; k = 0 returns nothing */
    T_EQ(colvecHnswSearch(pO, &hq, 2, 10, gpS, aNode, aDist, &nOut), COLVEC_OK);
    T_EQ(nOut, nN < 2 ? (int)nN : 2);
    T_EQ(colvecHnswSearch(pO, &hq, 64, 0, gpS, aNode, aDist, &nOut), COLVEC_OK);
    T_EQ(nOut, 0);
    colvecHnswFree(pO);
    colvecHnswFree(pG);
    free(a);
  }
}
END_TEST

/*
** The default ef: 64 up to 131,072 nodes, then the smallest e with
** e^3 >= 2 x nodes, never above COLVEC_HNSW_MAX_DEFAULT_EF; it never
** shrinks as the graph grows.
*/
START_TEST(test_default_ef) {
  int64_t n;
  int ePrev = 0;
  ck_assert_int_eq(colvecHnswDefaultEf(0), 64);
  ck_assert_int_eq(colvecHnswDefaultEf(131072), 64);
  ck_assert_int_eq(colvecHnswDefaultEf(131073), 65);
  ck_assert_int_eq(colvecHnswDefaultEf(400000), 93);
  ck_assert_int_eq(colvecHnswDefaultEf(693589), 112);
  ck_assert_int_eq(colvecHnswDefaultEf(INT64_C(4294967295)), 1024);
  for (n = 1; n < INT64_C(1) << 40; n = n * 3 + 1) {
    int e = colvecHnswDefaultEf(n);
    ck_assert_int_ge(e, ePrev);
    ck_assert_int_le(e, COLVEC_HNSW_MAX_DEFAULT_EF);
    if (e > 64 && e < COLVEC_HNSW_MAX_DEFAULT_EF) {
      ck_assert((int64_t)e * e * e >= 2 * n);
      ck_assert((int64_t)(e - 1) * (e - 1) * (e - 1) < 2 * n);
    }
    ePrev = e;
  }
}
END_TEST

/* Bad parameters and caller-given levels out of range are refused. */
START_TEST(test_params) {
  static float aVec[10 * 8];
  TData d = {8, 10, aVec, 0};
  ColvecHnswConfig cfg;
  ColvecHnsw *pG = NULL;
  uint8_t aLevel[10];
  memset(&cfg, 0, sizeof(cfg));
  memset(aLevel, 0, sizeof(aLevel));
  cfg.nM = 1;
  T_EQ(colvecHnswBuild(&cfg, 10, NULL, NULL, tNodeDist, &d, &pG), COLVEC_RANGE);
  cfg.nM = COLVEC_HNSW_MAX_M + 1;
  T_EQ(colvecHnswBuild(&cfg, 10, NULL, NULL, tNodeDist, &d, &pG), COLVEC_RANGE);
  cfg.nM = 4;
  cfg.nThread = COLVEC_HNSW_MAX_THREAD + 1;
  T_EQ(colvecHnswBuild(&cfg, 10, NULL, NULL, tNodeDist, &d, &pG), COLVEC_RANGE);
  cfg.nThread = 1;
  aLevel[3] = COLVEC_HNSW_MAX_LEVEL + 1;
  T_EQ(colvecHnswBuild(&cfg, 10, aLevel, NULL, tNodeDist, &d, &pG),
       COLVEC_RANGE);
  T_ASSERT(NULL == pG);
  /* caller-given levels are honoured: node 3 becomes the only top node */
  aLevel[3] = 3;
  T_EQ(colvecHnswBuild(&cfg, 10, aLevel, NULL, tNodeDist, &d, &pG), COLVEC_OK);
  T_EQ(colvecHnswMaxLevel(pG), 3);
  T_EQ(pG->iEntry, 3);
  T_EQ(pG->nUpper, 1);
  colvecHnswFree(pG);
}
END_TEST

/* Every allocation failure is reported as COLVEC_NOMEM and leaks nothing. */
START_TEST(test_oom) {
  TData d;
  static float aVec[300 * 8];
  uint8_t *a = NULL;
  size_t n = 0;
  int i, rc = COLVEC_NOMEM;
  d.nDim = 8;
  d.n = 300;
  d.aVec = aVec;
  d.bDot = 0;
  tGenerate(aVec, 300, 8, 11);
  for (i = 0; rc == COLVEC_NOMEM; i++) {
    ColvecHnswConfig cfg = {4, 16, 8, 2, NULL, {NULL, NULL}, NULL};
    ColvecHnsw *pG = NULL, *pO = NULL;
    colvecMemFailAfter(i);
    rc = colvecHnswBuild(&cfg, 300, NULL, NULL, tNodeDist, &d, &pG);
    colvecMemFailAfter(-1);
    T_ASSERT(rc == COLVEC_OK || rc == COLVEC_NOMEM);
    if (rc == COLVEC_OK) {
      a = tSerialize(pG, &n);
      memmove(a + 1, a, n); /* misaligned: open must copy */
      colvecMemFailAfter(0);
      T_EQ(colvecHnswOpen(a + 1, n, 0, &pO), COLVEC_NOMEM);
      colvecMemFailAfter(1);
      T_EQ(colvecHnswOpen(a + 1, n, 0, &pO), COLVEC_NOMEM);
      colvecMemFailAfter(-1);
      T_EQ(colvecHnswOpen(a + 1, n, 0, &pO), COLVEC_OK);
      colvecHnswFree(pO);
      free(a);
    }
    colvecHnswFree(pG);
  }
  T_GT(i, 10);
}
END_TEST

/* Releases the shared fixtures. */
static void tTeardownAll(void) {
  colvecHnswFree(gpL2);
  colvecHnswFree(gpDot);
  colvecHnswSearchFree(gpS);
  free(gL2.aVec);
  free(gaQuery);
}

/* Assembles the suite. */
static Suite *hnswSuite(void) {
  Suite *s = suite_create("hnsw");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_level);
  tcase_add_test(tc, test_params);
  tcase_add_test(tc, test_default_ef);
  tcase_add_test(tc, test_small);
  tcase_add_test(tc, test_oom);
  tcase_add_test(tc, test_truncation);
  tcase_add_test(tc, test_corruption);
  tcase_add_test(tc, test_recall_l2);
  tcase_add_test(tc, test_recall_dot);
  tcase_add_test(tc, test_determinism);
  tcase_add_test(tc, test_steps);
  tcase_add_test(tc, test_estimate);
  tcase_add_test(tc, test_roundtrip);
  tcase_add_test(tc, test_filter);
  tcase_add_test(tc, test_filter_twohop);
  tcase_add_test(tc, test_prefetch);
  tcase_add_test(tc, test_visit_reset);
  tcase_add_test(tc, test_interrupt);
  suite_add_tcase(s, tc);
  return s;
}

/* Runs the suite without forking (fixtures are shared); exit 0 on success. */
int main(void) {
  SRunner *sr = srunner_create(hnswSuite());
  int nFailed;
  if (colvecHnswSearchNew(&gpS) != COLVEC_OK) return 1;
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  nFailed = srunner_ntests_failed(sr);
  srunner_free(sr);
  tTeardownAll();
  return nFailed == 0 ? 0 : 1;
}
