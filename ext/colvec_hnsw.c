/*
** colvec_hnsw.c — the HNSW graph's layout, serialisation, validation and
** search. The layout and its invariants are described in colvec_hnsw.h;
** building is in colvec_hnsw_build.c.
**
** Search follows hnswlib: greedy descent through the upper levels, then a
** beam search of width ef on level 0. Unfiltered, the beam is one sorted
** pool of the best ef nodes found, expanded nearest first; filtered, it is
** hnswlib's min-heap of candidates to expand and max-heap of the best ef
** accepted nodes. Nodes the caller's xAccept rejects are expanded like any
** other but never enter the result heap, so a filtered search keeps
** widening until it holds ef accepted nodes (or the reachable graph is
** exhausted).
*/
#include "colvec_hnsw.h"
#include "colvec_os.h"

#include <math.h>
#include <string.h>

#define HNSW_PREFETCH(p) COLVEC_PREFETCH(p)

/* Distance of a node still ahead when the caller's xPrefetch is called. */
#define HNSW_PREFETCH_AHEAD 4

/*************************************************************************
** Level draw.
*/

/* splitmix64 finaliser: a fixed, portable 64-bit mix of x. */
static uint64_t hnswMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/*
** Returns the level of the node holding iRowid: the largest L such that
** hash(iRowid) < UINT64_MAX / M^L, i.e. P(level >= L) = M^-L, capped at
** COLVEC_HNSW_MAX_LEVEL. Integer arithmetic only, so every platform draws
** the same levels. Returns 0 when nM < 2.
*/
int colvecHnswLevel(uint64_t iRowid, int nM) {
  uint64_t h = hnswMix64(iRowid);
  uint64_t t = UINT64_MAX;
  int iLevel = 0;
  if (nM < 2) return 0;
  while (iLevel < COLVEC_HNSW_MAX_LEVEL) {
    t /= (uint64_t)nM;
    if (h >= t) break;
    iLevel++;
  }
  return iLevel;
}

/*************************************************************************
** Layout helpers.
*/

/*
** Allocates a graph of nNode nodes with link capacity nM (2*nM on level 0)
** whose node i has level aLevel[i] (aLevel may be NULL when nNode is 0).
** All link lists are empty (zero words); the directory is filled in; the
** graph has no entry yet (iMaxLevel -1). Returns COLVEC_OK and sets
** *ppGraph (free with colvecHnswFree), COLVEC_RANGE for a level above
** COLVEC_HNSW_MAX_LEVEL or an nM out of range, or COLVEC_NOMEM; *ppGraph
** is NULL on error.
*/
int colvecHnswAlloc(uint32_t nNode, int nM, const uint8_t *aLevel,
                    ColvecHnsw **ppGraph) {
  int rc = COLVEC_OK;
  ColvecHnsw *p = NULL;
  uint64_t nUpper = 0, nUpList = 0, nWord;
  uint32_t i, iDir = 0, iList = 0;

  *ppGraph = NULL;
  if (nM < 2 || nM > COLVEC_HNSW_MAX_M) return COLVEC_RANGE;
  for (i = 0; i < nNode; i++) {
    if (aLevel[i] > COLVEC_HNSW_MAX_LEVEL) return COLVEC_RANGE;
    if (aLevel[i] > 0) {
      nUpper++;
      nUpList += aLevel[i];
    }
  }
  if (nUpList > UINT32_MAX) return COLVEC_RANGE;
  p = (ColvecHnsw *)colvecMallocZero(&rc, sizeof(ColvecHnsw));
  if (p == NULL) return rc;
  p->nNode = nNode;
  p->nM = (uint32_t)nM;
  p->nM0 = 2 * (uint32_t)nM;
  p->nStride0 = 1 + p->nM0;
  p->nStrideUp = 1 + p->nM;
  p->iMaxLevel = -1;
  p->nUpper = (uint32_t)nUpper;
  p->nUpList = (uint32_t)nUpList;
  nWord = (uint64_t)nNode * p->nStride0 + nUpper * 3 + nUpList * p->nStrideUp;
  if (nWord > 0) {
    p->pOwned = colvecMallocZero(&rc, (int64_t)(nWord * 4));
    if (rc != COLVEC_OK) {
      colvecFree(p);
      return rc;
    }
    p->aLevel0 = (uint32_t *)p->pOwned;
    p->aUpDir = p->aLevel0 + (size_t)nNode * p->nStride0;
    p->aUpLink = p->aUpDir + (size_t)nUpper * 3;
  }
  for (i = 0; i < nNode; i++) {
    if (aLevel[i] > 0) {
      p->aUpDir[3 * (size_t)iDir] = i;
      p->aUpDir[3 * (size_t)iDir + 1] = aLevel[i];
      p->aUpDir[3 * (size_t)iDir + 2] = iList;
      iDir++;
      iList += aLevel[i];
    }
  }
  *ppGraph = p;
  return COLVEC_OK;
}

/* Releases a graph (built or opened); NULL is allowed. */
void colvecHnswFree(ColvecHnsw *pGraph) {
  if (pGraph) {
    colvecFree(pGraph->pOwned);
    colvecFree(pGraph);
  }
}

/* Number of nodes of the graph. */
uint32_t colvecHnswNodeCount(const ColvecHnsw *pGraph) { return pGraph->nNode; }

/* Level of the entry node, or -1 for an empty graph. */
int colvecHnswMaxLevel(const ColvecHnsw *pGraph) { return pGraph->iMaxLevel; }

/*
** Returns the directory index of node iNode (binary search over the
** ascending directory), or -1 when the node has no upper levels.
*/
int64_t colvecHnswDirFind(const ColvecHnsw *pGraph, uint32_t iNode) {
  uint32_t lo = 0, hi = pGraph->nUpper;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    uint32_t v = pGraph->aUpDir[3 * (size_t)mid];
    if (v == iNode) return mid;
    if (v < iNode) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return -1;
}

/*
** Returns the list (count word, then links) of local id `id` on iLevel: a
** node id on level 0, a directory index above. The caller guarantees that
** id is in range and that the node has that level.
*/
uint32_t *colvecHnswLinks(const ColvecHnsw *pGraph, int iLevel, uint32_t id) {
  if (iLevel == 0) return pGraph->aLevel0 + (size_t)id * pGraph->nStride0;
  return pGraph->aUpLink +
         ((size_t)pGraph->aUpDir[3 * (size_t)id + 2] + (size_t)iLevel - 1) *
             pGraph->nStrideUp;
}

/* Node id of local id `id` on iLevel (see colvecHnswLinks). */
static uint32_t hnswNodeOf(const ColvecHnsw *pGraph, int iLevel, uint32_t id) {
  return iLevel == 0 ? id : pGraph->aUpDir[3 * (size_t)id];
}

/*************************************************************************
** Serialisation and validation.
*/

/* Returns non-zero on a little-endian host. */
static int hnswHostIsLE(void) {
  const uint16_t x = 1;
  return *(const uint8_t *)&x == 1;
}

/* Stores v at a as 4 little-endian bytes. */
static void hnswPut32(uint8_t *a, uint32_t v) {
  a[0] = (uint8_t)v;
  a[1] = (uint8_t)(v >> 8);
  a[2] = (uint8_t)(v >> 16);
  a[3] = (uint8_t)(v >> 24);
}

/* Loads 4 little-endian bytes at a. */
static uint32_t hnswGet32(const uint8_t *a) {
  return (uint32_t)a[0] | ((uint32_t)a[1] << 8) | ((uint32_t)a[2] << 16) |
         ((uint32_t)a[3] << 24);
}

/* Words after the header: level 0, directory and upper lists. */
static uint64_t hnswBodyWords(const ColvecHnsw *p) {
  return (uint64_t)p->nNode * p->nStride0 + (uint64_t)p->nUpper * 3 +
         (uint64_t)p->nUpList * p->nStrideUp;
}

/* Bytes colvecHnswSerialize() writes for this graph. */
int64_t colvecHnswSerializedSize(const ColvecHnsw *pGraph) {
  return (int64_t)(4 * (COLVEC_HNSW_HEADER_WORDS + hnswBodyWords(pGraph)));
}

/*
** Writes the graph's serialised form (see colvec_hnsw.h) to aOut, which
** must hold at least colvecHnswSerializedSize() bytes. Returns COLVEC_OK, or
** COLVEC_RANGE (nothing written) when nOut is too small.
*/
int colvecHnswSerialize(const ColvecHnsw *pGraph, uint8_t *aOut, size_t nOut) {
  uint32_t aHdr[COLVEC_HNSW_HEADER_WORDS];
  uint64_t nBody = hnswBodyWords(pGraph), i;
  const ColvecHnsw *p = pGraph;
  if ((uint64_t)nOut < (uint64_t)colvecHnswSerializedSize(p)) {
    return COLVEC_RANGE;
  }
  memset(aHdr, 0, sizeof(aHdr));
  aHdr[0] = COLVEC_HNSW_MAGIC;
  aHdr[1] = COLVEC_HNSW_VERSION;
  aHdr[2] = p->nNode;
  aHdr[3] = p->nM;
  aHdr[4] = (uint32_t)(p->iMaxLevel + 1);
  aHdr[5] = p->iMaxLevel >= 0 ? p->iEntry : 0;
  aHdr[6] = p->nUpper;
  aHdr[7] = p->nUpList;
  for (i = 0; i < COLVEC_HNSW_HEADER_WORDS; i++)
    hnswPut32(&aOut[4 * i], aHdr[i]);
  aOut += 4 * COLVEC_HNSW_HEADER_WORDS;
  if (hnswHostIsLE()) {
    if (nBody > 0) memcpy(aOut, p->aLevel0, (size_t)(nBody * 4));
  } else {
    for (i = 0; i < nBody; i++)
      hnswPut32(&aOut[4 * i], p->aLevel0[i]);
  }
  return COLVEC_OK;
}

/*
** Validates the directory, the entry node and every upper-level list.
** Returns COLVEC_OK or COLVEC_CORRUPT.
*/
static int hnswCheckUpper(const ColvecHnsw *p) {
  uint64_t iList = 0;
  uint32_t i, j;
  int l;
  for (i = 0; i < p->nUpper; i++) {
    const uint32_t *aDir = &p->aUpDir[3 * (size_t)i];
    if (aDir[0] >= p->nNode) return COLVEC_CORRUPT;
    if (i > 0 && aDir[0] <= aDir[-3]) return COLVEC_CORRUPT;
    if (aDir[1] < 1 || (int64_t)aDir[1] > p->iMaxLevel) return COLVEC_CORRUPT;
    if (aDir[2] != iList) return COLVEC_CORRUPT;
    iList += aDir[1];
  }
  if (iList != p->nUpList) return COLVEC_CORRUPT;
  for (i = 0; i < p->nUpper; i++) {
    for (l = 1; l <= (int)p->aUpDir[3 * (size_t)i + 1]; l++) {
      const uint32_t *a = colvecHnswLinks(p, l, i);
      if (a[0] > p->nM) return COLVEC_CORRUPT;
      for (j = 1; j <= a[0]; j++) {
        if (a[j] >= p->nUpper) return COLVEC_CORRUPT;
        if (p->aUpDir[3 * (size_t)a[j] + 1] < (uint32_t)l) {
          return COLVEC_CORRUPT;
        }
      }
    }
  }
  return COLVEC_OK;
}

/* Validates every level-0 record. Returns COLVEC_OK or COLVEC_CORRUPT. */
static int hnswCheckLevel0(const ColvecHnsw *p) {
  uint32_t i, j;
  for (i = 0; i < p->nNode; i++) {
    const uint32_t *a = colvecHnswLinks(p, 0, i);
    if (a[0] > p->nM0) return COLVEC_CORRUPT;
    for (j = 1; j <= a[0]; j++) {
      if (a[j] >= p->nNode) return COLVEC_CORRUPT;
    }
  }
  return COLVEC_OK;
}

/*
** Validates the whole graph (directory, upper lists, every level-0 record):
** what colvecHnswOpen() does without COLVEC_HNSW_OPEN_LAZY, for
** integrity-check. Returns COLVEC_OK or COLVEC_CORRUPT.
*/
int colvecHnswCheck(const ColvecHnsw *pGraph) {
  int rc = hnswCheckUpper(pGraph);
  if (rc == COLVEC_OK) rc = hnswCheckLevel0(pGraph);
  return rc;
}

/*
** Opens a serialised graph of exactly nData bytes at aData. On a
** little-endian host with 4-byte-aligned aData the graph reads the bytes in
** place (they must stay valid and unchanged until colvecHnswFree); otherwise
** it makes a private native-endian copy. Returns COLVEC_OK and sets
** *ppGraph, COLVEC_CORRUPT when anything is out of range or inconsistent
** (see the SAFETY note in colvec_hnsw.h; flags may hold
** COLVEC_HNSW_OPEN_LAZY), or COLVEC_NOMEM. *ppGraph is NULL on error.
*/
int colvecHnswOpen(const uint8_t *aData, size_t nData, int flags,
                   ColvecHnsw **ppGraph) {
  int rc = COLVEC_OK;
  uint32_t aHdr[COLVEC_HNSW_HEADER_WORDS];
  ColvecHnsw *p = NULL;
  uint64_t nBody, i;
  const uint8_t *aBody = aData + 4 * COLVEC_HNSW_HEADER_WORDS;

  *ppGraph = NULL;
  if (aData == NULL || nData < 4 * COLVEC_HNSW_HEADER_WORDS) {
    return COLVEC_CORRUPT;
  }
  for (i = 0; i < COLVEC_HNSW_HEADER_WORDS; i++)
    aHdr[i] = hnswGet32(&aData[4 * i]);
  if (aHdr[0] != COLVEC_HNSW_MAGIC || aHdr[1] != COLVEC_HNSW_VERSION) {
    return COLVEC_CORRUPT;
  }
  if (aHdr[3] < 2 || aHdr[3] > COLVEC_HNSW_MAX_M) return COLVEC_CORRUPT;
  if (aHdr[4] > COLVEC_HNSW_MAX_LEVEL + 1) return COLVEC_CORRUPT;
  for (i = 8; i < COLVEC_HNSW_HEADER_WORDS; i++) {
    if (aHdr[i] != 0) return COLVEC_CORRUPT;
  }
  if (aHdr[2] == 0) {
    if (aHdr[4] != 0 || aHdr[5] != 0 || aHdr[6] != 0 || aHdr[7] != 0) {
      return COLVEC_CORRUPT;
    }
  } else {
    if (aHdr[4] == 0 || aHdr[5] >= aHdr[2] || aHdr[6] > aHdr[2]) {
      return COLVEC_CORRUPT;
    }
  }

  p = (ColvecHnsw *)colvecMallocZero(&rc, sizeof(ColvecHnsw));
  if (p == NULL) return rc;
  p->nNode = aHdr[2];
  p->nM = aHdr[3];
  p->nM0 = 2 * p->nM;
  p->nStride0 = 1 + p->nM0;
  p->nStrideUp = 1 + p->nM;
  p->iMaxLevel = (int)aHdr[4] - 1;
  p->iEntry = aHdr[5];
  p->nUpper = aHdr[6];
  p->nUpList = aHdr[7];
  nBody = hnswBodyWords(p);
  if (nBody != (uint64_t)(nData / 4 - COLVEC_HNSW_HEADER_WORDS) ||
      nData % 4 != 0) {
    colvecFree(p);
    return COLVEC_CORRUPT;
  }

  if (nBody > 0) {
    if (hnswHostIsLE() && ((uintptr_t)aBody & 3) == 0) {
      /* In place: the arrays are only ever read through this graph. */
      p->aLevel0 = (uint32_t *)(uintptr_t)aBody;
    } else {
      p->pOwned = colvecMalloc((int64_t)(nBody * 4));
      if (p->pOwned == NULL) {
        colvecFree(p);
        return COLVEC_NOMEM;
      }
      p->aLevel0 = (uint32_t *)p->pOwned;
      for (i = 0; i < nBody; i++)
        p->aLevel0[i] = hnswGet32(&aBody[4 * i]);
    }
    p->aUpDir = p->aLevel0 + (size_t)p->nNode * p->nStride0;
    p->aUpLink = p->aUpDir + (size_t)p->nUpper * 3;
  }

  if (p->iMaxLevel == 0 && (p->nUpper != 0 || p->nUpList != 0)) {
    rc = COLVEC_CORRUPT;
  }
  if (rc == COLVEC_OK) rc = hnswCheckUpper(p);
  if (rc == COLVEC_OK && p->iMaxLevel > 0) {
    int64_t iUp = colvecHnswDirFind(p, p->iEntry);
    if (iUp < 0 || p->aUpDir[3 * iUp + 1] != (uint32_t)p->iMaxLevel) {
      rc = COLVEC_CORRUPT;
    } else {
      p->iEntryUp = (uint32_t)iUp;
    }
  }
  if (rc == COLVEC_OK && (flags & COLVEC_HNSW_OPEN_LAZY) == 0) {
    rc = hnswCheckLevel0(p);
  }
  if (rc != COLVEC_OK) {
    colvecHnswFree(p);
    return rc;
  }
  *ppGraph = p;
  return COLVEC_OK;
}

/*************************************************************************
** Search scratch and heaps.
*/

/*
** Allocates an empty search context. Returns COLVEC_OK and sets *ppSearch
** (free with colvecHnswSearchFree), or COLVEC_NOMEM with *ppSearch NULL.
** The context grows on first use; colvecHnswSearchReserve() presizes it.
*/
int colvecHnswSearchNew(ColvecHnswSearch **ppSearch) {
  int rc = COLVEC_OK;
  *ppSearch =
      (ColvecHnswSearch *)colvecMallocZero(&rc, sizeof(ColvecHnswSearch));
  return rc;
}

/* Releases a search context; NULL is allowed. */
void colvecHnswSearchFree(ColvecHnswSearch *pSearch) {
  if (pSearch) {
    colvecFree(pSearch->aVisit);
    colvecFree(pSearch->aTouched);
    colvecFree(pSearch->aCand);
    colvecFree(pSearch->aTop);
    colvecFree(pSearch->aPool);
    colvecFree(pSearch->aDone);
    colvecFree(pSearch);
  }
}

/*
** Grows pSearch so that searches of graphs of up to nNode nodes with beam
** width up to nEf need no allocation (the candidate heap may still grow in
** a rare search that keeps more than 2*nEf candidates). Returns COLVEC_OK,
** COLVEC_RANGE when nEf exceeds 2^28, or COLVEC_NOMEM (the context stays
** valid, with its old capacity).
*/
int colvecHnswSearchReserve(ColvecHnswSearch *pSearch, uint32_t nNode,
                            int nEf) {
  ColvecHnswSearch *p = pSearch;
  uint32_t nTop, nCand;
  if (nEf > (1 << 28)) return COLVEC_RANGE;
  nTop = (uint32_t)(nEf < 1 ? 1 : nEf) + 1;
  nCand = nTop * 2 < 64 ? 64 : nTop * 2;
  if ((nNode + 63) / 64 > p->nVisit) {
    uint32_t nWord = (nNode + 63) / 64;
    uint64_t *a = (uint64_t *)colvecRealloc(p->aVisit, (int64_t)nWord * 8);
    uint32_t *aT;
    if (a == NULL) return COLVEC_NOMEM;
    memset(&a[p->nVisit], 0, (size_t)(nWord - p->nVisit) * 8);
    p->aVisit = a;
    aT = (uint32_t *)colvecRealloc(p->aTouched, (int64_t)nWord * 4);
    if (aT == NULL) return COLVEC_NOMEM;
    p->aTouched = aT;
    p->nVisit = nWord;
  }
  if (nTop > p->nTopAlloc) {
    ColvecHnswPair *a = (ColvecHnswPair *)colvecRealloc(
        p->aTop, (int64_t)nTop * (int64_t)sizeof(ColvecHnswPair));
    if (a == NULL) return COLVEC_NOMEM;
    p->aTop = a;
    p->nTopAlloc = nTop;
  }
  if (nTop > p->nPoolAlloc) {
    uint64_t *a = (uint64_t *)colvecRealloc(p->aPool, (int64_t)nTop * 8);
    uint8_t *aD;
    if (a == NULL) return COLVEC_NOMEM;
    p->aPool = a;
    aD = (uint8_t *)colvecRealloc(p->aDone, (int64_t)nTop);
    if (aD == NULL) return COLVEC_NOMEM;
    p->aDone = aD;
    p->nPoolAlloc = nTop;
  }
  if (nCand > p->nCandAlloc) {
    ColvecHnswPair *a = (ColvecHnswPair *)colvecRealloc(
        p->aCand, (int64_t)nCand * (int64_t)sizeof(ColvecHnswPair));
    if (a == NULL) return COLVEC_NOMEM;
    p->aCand = a;
    p->nCandAlloc = nCand;
  }
  return COLVEC_OK;
}

/*
** Empties the visited set: clears the words the last search set (also
** when it stopped early, on an error).
*/
static void hnswVisitReset(ColvecHnswSearch *p) {
  uint32_t i;
  for (i = 0; i < p->nTouched; i++)
    p->aVisit[p->aTouched[i]] = 0;
  p->nTouched = 0;
}

/*
** Adds node (local id) id to the visited set. Returns 1 when it was not in
** the set yet, 0 when it was.
*/
static int hnswVisit(ColvecHnswSearch *p, uint32_t id) {
  uint64_t *pW = &p->aVisit[id / 64];
  uint64_t m = (uint64_t)1 << (id % 64);
  if (*pW & m) return 0;
  if (*pW == 0) p->aTouched[p->nTouched++] = id / 64;
  *pW |= m;
  return 1;
}

/*
** Returns non-zero when a comes before b: smaller distance, ties broken by
** the smaller id (so equal distances order the same way everywhere). With
** bMax the order is reversed (max-heap).
*/
static int hnswBefore(ColvecHnswPair a, ColvecHnswPair b, int bMax) {
  if (bMax) {
    ColvecHnswPair t = a;
    a = b;
    b = t;
  }
  return a.d < b.d || (a.d == b.d && a.id < b.id);
}

/* Adds x to the heap a[0..*pn) (capacity checked by the caller). */
static void hnswHeapPush(ColvecHnswPair *a, uint32_t *pn, ColvecHnswPair x,
                         int bMax) {
  uint32_t i = (*pn)++;
  while (i > 0) {
    uint32_t iParent = (i - 1) / 2;
    if (!hnswBefore(x, a[iParent], bMax)) break;
    a[i] = a[iParent];
    i = iParent;
  }
  a[i] = x;
}

/* Removes and returns the root of the non-empty heap a[0..*pn). */
static ColvecHnswPair hnswHeapPop(ColvecHnswPair *a, uint32_t *pn, int bMax) {
  ColvecHnswPair top = a[0];
  ColvecHnswPair x = a[--(*pn)];
  uint32_t n = *pn, i = 0;
  while (1) {
    uint32_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && hnswBefore(a[c + 1], a[c], bMax)) c++;
    if (!hnswBefore(a[c], x, bMax)) break;
    a[i] = a[c];
    i = c;
  }
  if (n > 0) a[i] = x;
  return top;
}

/*
** The sort key of pair p: unsigned order of keys is ascending (distance,
** id), NaN distances last, -0 equal to +0 (float comparison's order).
*/
static uint64_t hnswPairKey(ColvecHnswPair p) {
  uint32_t u;
  float d = p.d == 0.0f ? 0.0f : p.d; /* -0 as +0 */
  memcpy(&u, &d, 4);
  if (p.d != p.d) {
    u = 0xFFFFFFFFu; /* after +infinity (0xFF800000 below) */
  } else {
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
  return (uint64_t)u << 32 | p.id;
}

/* The pair of key k (NaN comes back as the default NaN, -0 as +0). */
static ColvecHnswPair hnswPairOfKey(uint64_t k) {
  ColvecHnswPair p;
  uint32_t u = (uint32_t)(k >> 32);
  if (u == 0xFFFFFFFFu) {
    p.d = NAN;
  } else {
    u = (u & 0x80000000u) ? (u & 0x7FFFFFFFu) : ~u;
    memcpy(&p.d, &u, 4);
  }
  p.id = (uint32_t)k;
  return p;
}

/*
** Sorts aPair ascending by (distance, id), NaN distances last: a bottom-up
** merge sort of 64-bit keys in aTmp (2*nPair entries), whose comparisons
** are single unsigned compares. The order is total, so the result is the
** one any sort gives.
*/
void colvecHnswSortPairs(ColvecHnswPair *aPair, uint32_t nPair,
                         uint64_t *aTmp) {
  uint64_t *a = aTmp, *b = aTmp + nPair, *t;
  uint32_t i, w;
  if (nPair < 2) return;
  for (i = 0; i < nPair; i++)
    a[i] = hnswPairKey(aPair[i]);
  for (w = 1; w < nPair; w *= 2) {
    for (i = 0; i < nPair; i += 2 * w) {
      uint32_t iL = i, iMid = i + w < nPair ? i + w : nPair;
      uint32_t iR = iMid, iEnd = i + 2 * w < nPair ? i + 2 * w : nPair, k = i;
      while (iL < iMid && iR < iEnd) {
        uint64_t x = a[iL], y = a[iR];
        int bLeft = x <= y;
        b[k++] = bLeft ? x : y;
        iL += (uint32_t)bLeft;
        iR += (uint32_t)!bLeft;
      }
      while (iL < iMid)
        b[k++] = a[iL++];
      while (iR < iEnd)
        b[k++] = a[iR++];
    }
    t = a;
    a = b;
    b = t;
  }
  for (i = 0; i < nPair; i++)
    aPair[i] = hnswPairOfKey(a[i]);
}

/*************************************************************************
** Search.
*/

/*
** Greedy descent (beam width 1) on levels iTop down to iBottom (both >= 1):
** on each level, moves from *piUp (a directory index) to any neighbour
** closer to the query until none is. On return *piUp and *pdCur hold the
** closest node found and its distance. Upper lists must have been
** validated (colvecHnswOpen, or built here). Each level takes at most
** nUpper moves, whatever xDist returns.
*/
void colvecHnswGreedy(const ColvecHnsw *pGraph, const ColvecHnswQuery *pQuery,
                      int iTop, int iBottom, uint32_t *piUp, float *pdCur) {
  uint32_t iCur = *piUp;
  float dCur = *pdCur;
  int iLevel;
  for (iLevel = iTop; iLevel >= iBottom; iLevel--) {
    uint32_t nMove = 0;
    int bChanged = 1;
    while (bChanged && nMove++ <= pGraph->nUpper) {
      const uint32_t *a = colvecHnswLinks(pGraph, iLevel, iCur);
      uint32_t j, n = a[0];
      bChanged = 0;
      for (j = 1; j <= n; j++) {
        uint32_t iNode = pGraph->aUpDir[3 * (size_t)a[j]];
        float d;
        if (pQuery->xPrefetch && j + HNSW_PREFETCH_AHEAD <= n) {
          pQuery->xPrefetch(
              pQuery->pCtx,
              pGraph->aUpDir[3 * (size_t)a[j + HNSW_PREFETCH_AHEAD]]);
        }
        d = pQuery->xDist(pQuery->pCtx, iNode);
        if (d < dCur) {
          dCur = d;
          iCur = a[j];
          bChanged = 1;
        }
      }
    }
  }
  *piUp = iCur;
  *pdCur = dCur;
}

/*
** The two-hop expansion of a filtered level-0 search (ACORN-1, Patel et
** al., SIGMOD 2024): of the links a (a[0] of them) of the node expanded,
** the unvisited neighbours pQuery->xAccept admits go to aNew (*pnNew
** entries) to be scored; each one it rejects is marked visited, never
** scored, and its own unvisited neighbours that xAccept admits go to aNew
** in its place, until aNew holds nM0 nodes. A filter that passes few rows
** thus scores only rows that pass, and the passing rows stay connected
** through the rejected ones. Returns COLVEC_OK, or COLVEC_CORRUPT when a
** link or a list is out of range.
*/
static int hnswTwoHop(const ColvecHnsw *pGraph, const ColvecHnswQuery *pQuery,
                      ColvecHnswSearch *pS, const uint32_t *a, uint32_t *aNew,
                      uint32_t *pnNew) {
  uint32_t aFail[2 * COLVEC_HNSW_MAX_M]; /* rejected neighbours */
  uint32_t j, k, n = a[0], nFail = 0, nNew = 0, nCap = pGraph->nM0;
  void *pCtx = pQuery->pCtx;
  for (j = 1; j <= n; j++) {
    uint32_t id = a[j];
    if (id >= pGraph->nNode) return COLVEC_CORRUPT;
    if (!hnswVisit(pS, id)) continue;
    if (pQuery->xAccept(pCtx, id)) {
      aNew[nNew++] = id;
    } else {
      aFail[nFail++] = id;
      HNSW_PREFETCH(colvecHnswLinks(pGraph, 0, id));
    }
  }
  for (j = 0; j < nFail && nNew < nCap; j++) {
    const uint32_t *b = colvecHnswLinks(pGraph, 0, aFail[j]);
    if (b[0] > pGraph->nM0) return COLVEC_CORRUPT;
    for (k = 1; k <= b[0] && nNew < nCap; k++) {
      uint32_t id = b[k];
      if (id >= pGraph->nNode) return COLVEC_CORRUPT;
      if (!pQuery->xAccept(pCtx, id) || !hnswVisit(pS, id)) continue;
      aNew[nNew++] = id;
    }
  }
  *pnNew = nNew;
  return COLVEC_OK;
}

/*
** Expands local id iCur on iLevel: its unvisited neighbours (the two-hop
** set of a filtered level-0 search) are marked visited and written to aNew
** with their distances to the query in aDist; *pnNew is set to their
** number. Returns COLVEC_OK, or COLVEC_CORRUPT when the list or a link is
** out of range.
*/
static int hnswExpand(const ColvecHnsw *pGraph, int iLevel,
                      const ColvecHnswQuery *pQuery, ColvecHnswSearch *pS,
                      uint32_t iCur, uint32_t *aNew, float *aDist,
                      uint32_t *pnNew) {
  const uint32_t nMax = iLevel ? pGraph->nM : pGraph->nM0;
  const uint32_t nLimit = iLevel ? pGraph->nUpper : pGraph->nNode;
  const uint32_t *a = colvecHnswLinks(pGraph, iLevel, iCur);
  void *pCtx = pQuery->pCtx;
  uint32_t aNode[2 * COLVEC_HNSW_MAX_M]; /* node ids of aNew (xDistBatch) */
  uint32_t j, n = a[0], nNew = 0;

  if (n > nMax) return COLVEC_CORRUPT;
  if (iLevel == 0 && pQuery->bTwoHop && pQuery->xAccept) {
    int rc = hnswTwoHop(pGraph, pQuery, pS, a, aNew, &nNew);
    if (rc != COLVEC_OK) return rc;
  } else {
    for (j = 1; j <= n; j++) {
      uint32_t id = a[j];
      if (id >= nLimit) return COLVEC_CORRUPT;
      if (hnswVisit(pS, id)) aNew[nNew++] = id;
    }
  }
  if (pQuery->xDistBatch) {
    for (j = 0; j < nNew; j++)
      aNode[j] = hnswNodeOf(pGraph, iLevel, aNew[j]);
    pQuery->xDistBatch(pCtx, aNode, (int)nNew, aDist);
  } else {
    for (j = 0; pQuery->xPrefetch && j < nNew && j < HNSW_PREFETCH_AHEAD; j++) {
      pQuery->xPrefetch(pCtx, hnswNodeOf(pGraph, iLevel, aNew[j]));
    }
    for (j = 0; j < nNew; j++) {
      if (pQuery->xPrefetch && j + HNSW_PREFETCH_AHEAD < nNew) {
        pQuery->xPrefetch(
            pCtx, hnswNodeOf(pGraph, iLevel, aNew[j + HNSW_PREFETCH_AHEAD]));
      }
      aDist[j] = pQuery->xDist(pCtx, hnswNodeOf(pGraph, iLevel, aNew[j]));
    }
  }
  *pnNew = nNew;
  return COLVEC_OK;
}

/*
** The beam of a filtered search (pQuery->xAccept set): hnswlib's
** searchBaseLayer, a min-heap of candidates to expand and a max-heap of
** the best nEf accepted nodes; rejected nodes are expanded but never
** enter the result. On return aTop is sorted ascending.
*/
static int hnswBeamHeap(const ColvecHnsw *pGraph, int iLevel,
                        const ColvecHnswQuery *pQuery, uint32_t iStart,
                        float dStart, uint32_t nEf, ColvecHnswSearch *pS) {
  void *pCtx = pQuery->pCtx;
  uint32_t aNew[2 * COLVEC_HNSW_MAX_M]; /* unvisited neighbours */
  float aDist[2 * COLVEC_HNSW_MAX_M];   /* their distances */
  float dLower = INFINITY;              /* worst distance in aTop */
  uint32_t n;
  ColvecHnswPair x;

  pS->nCand = 0;
  pS->nTop = 0;
  x.d = dStart;
  x.id = iStart;
  if (pQuery->xAccept(pCtx, hnswNodeOf(pGraph, iLevel, iStart))) {
    hnswHeapPush(pS->aTop, &pS->nTop, x, 1);
    dLower = dStart;
  }
  hnswHeapPush(pS->aCand, &pS->nCand, x, 0);

  while (pS->nCand > 0) {
    uint32_t j, nNew = 0;
    int rc;
    ColvecHnswPair c = pS->aCand[0];
    if (c.d > dLower && pS->nTop >= nEf) break;
    hnswHeapPop(pS->aCand, &pS->nCand, 0);
    if (pS->nCand > 0 && iLevel == 0) {
      HNSW_PREFETCH(colvecHnswLinks(pGraph, 0, pS->aCand[0].id));
    }
    rc = hnswExpand(pGraph, iLevel, pQuery, pS, c.id, aNew, aDist, &nNew);
    if (rc != COLVEC_OK) return rc;
    for (j = 0; j < nNew; j++) {
      if (pS->nTop < nEf || aDist[j] < dLower) {
        x.d = aDist[j];
        x.id = aNew[j];
        if (pS->nCand == pS->nCandAlloc) {
          uint32_t nNewAlloc = pS->nCandAlloc * 2;
          ColvecHnswPair *aC = (ColvecHnswPair *)colvecRealloc(
              pS->aCand, (int64_t)nNewAlloc * (int64_t)sizeof(ColvecHnswPair));
          if (aC == NULL) return COLVEC_NOMEM;
          pS->aCand = aC;
          pS->nCandAlloc = nNewAlloc;
        }
        hnswHeapPush(pS->aCand, &pS->nCand, x, 0);
        if (pQuery->xAccept(pCtx, hnswNodeOf(pGraph, iLevel, aNew[j]))) {
          hnswHeapPush(pS->aTop, &pS->nTop, x, 1);
          if (pS->nTop > nEf) hnswHeapPop(pS->aTop, &pS->nTop, 1);
          dLower = pS->aTop[0].d;
        }
      }
    }
  }
  for (n = pS->nTop; n > 1;) {
    x = hnswHeapPop(pS->aTop, &n, 1);
    pS->aTop[n] = x;
  }
  return COLVEC_OK;
}

/*
** Position in the ascending keys a[0..n) at which key k belongs (the
** number of keys below it). Branch-free halving: where the key lands is
** not predictable, so a comparison decides an offset, not a jump.
*/
static uint32_t hnswPoolFind(const uint64_t *a, uint32_t n, uint64_t k) {
  const uint64_t *p = a;
  if (n == 0) return 0;
  while (n > 1) {
    uint32_t nHalf = n / 2;
    p += p[nHalf] < k ? nHalf : 0;
    n -= nHalf;
  }
  return (uint32_t)(p - a) + (p[0] < k);
}

/*
** The beam of an unfiltered search: one pool of the best nEf nodes found,
** kept sorted by (distance, id), each marked once expanded; the search
** expands the first entry not yet expanded until every entry is. This is
** the order hnswlib's two heaps give (the nearest unexpanded node among
** the best nEf; a node pushed out of them is never expanded) with a
** binary search and a short move per admitted node instead of three heap
** operations. On return aTop holds the pool, ascending.
*/
static int hnswBeamPool(const ColvecHnsw *pGraph, int iLevel,
                        const ColvecHnswQuery *pQuery, uint32_t iStart,
                        float dStart, uint32_t nEf, ColvecHnswSearch *pS) {
  uint32_t aNew[2 * COLVEC_HNSW_MAX_M]; /* unvisited neighbours */
  float aDist[2 * COLVEC_HNSW_MAX_M];   /* their distances */
  uint64_t *aPool = pS->aPool;
  uint8_t *aDone = pS->aDone;
  uint32_t nPool = 1, iNext = 0, i;
  ColvecHnswPair x;

  x.d = dStart;
  x.id = iStart;
  aPool[0] = hnswPairKey(x);
  aDone[0] = 0;
  while (iNext < nPool) {
    uint32_t j, nNew = 0;
    uint32_t iCur = (uint32_t)aPool[iNext];
    int rc;
    aDone[iNext] = 1;
    while (iNext < nPool && aDone[iNext])
      iNext++;
    if (iNext < nPool && iLevel == 0) {
      HNSW_PREFETCH(colvecHnswLinks(pGraph, 0, (uint32_t)aPool[iNext]));
    }
    rc = hnswExpand(pGraph, iLevel, pQuery, pS, iCur, aNew, aDist, &nNew);
    if (rc != COLVEC_OK) return rc;
    for (j = 0; j < nNew; j++) {
      uint64_t k;
      uint32_t iAt, nMove;
      x.d = aDist[j];
      x.id = aNew[j];
      k = hnswPairKey(x);
      if (nPool == nEf && k >= aPool[nPool - 1]) continue;
      iAt = hnswPoolFind(aPool, nPool, k);
      nMove = (nPool == nEf ? nPool - 1 : nPool) - iAt;
      memmove(&aPool[iAt + 1], &aPool[iAt], nMove * sizeof(uint64_t));
      memmove(&aDone[iAt + 1], &aDone[iAt], nMove);
      aPool[iAt] = k;
      aDone[iAt] = 0;
      if (nPool < nEf) nPool++;
      if (iAt < iNext) {
        iNext = iAt; /* the next to expand: its list is needed soon */
        if (iLevel == 0) HNSW_PREFETCH(colvecHnswLinks(pGraph, 0, aNew[j]));
      }
    }
  }
  for (i = 0; i < nPool; i++)
    pS->aTop[i] = hnswPairOfKey(aPool[i]);
  pS->nTop = nPool;
  return COLVEC_OK;
}

/*
** Beam search of width nEf (>= 1) on iLevel from local id iStart (distance
** dStart), hnswlib's searchBaseLayer. Local ids are node ids on level 0 and
** directory indices above; pSearch must have been reserved for the graph's
** nNode and nEf. On return pSearch->aTop[0..nTop) holds the best nEf
** accepted nodes found (local ids), ascending by (distance, id). Returns
** COLVEC_OK, COLVEC_CORRUPT when a level-0 record is out of range, or
** COLVEC_NOMEM when the candidate heap could not grow.
*/
int colvecHnswSearchLayer(const ColvecHnsw *pGraph, int iLevel,
                          const ColvecHnswQuery *pQuery, uint32_t iStart,
                          float dStart, uint32_t nEf,
                          ColvecHnswSearch *pSearch) {
  hnswVisitReset(pSearch);
  hnswVisit(pSearch, iStart);
  if (pQuery->xAccept) {
    return hnswBeamHeap(pGraph, iLevel, pQuery, iStart, dStart, nEf, pSearch);
  }
  return hnswBeamPool(pGraph, iLevel, pQuery, iStart, dStart, nEf, pSearch);
}

/*
** Whether the rows pQuery->xAccept admits are sparse around level-0 node
** iStart: among its neighbours and theirs (counted with repeats), the
** admitted share is under a quarter of pQuery->rPass, the share over the
** whole graph, as when a filter is anti-correlated with the query. 0 for
** a neighbourhood of under 64 entries, and for links out of range (the
** search then reports them).
*/
static int hnswSparse(const ColvecHnsw *pGraph, const ColvecHnswQuery *pQuery,
                      uint32_t iStart) {
  const uint32_t *a = colvecHnswLinks(pGraph, 0, iStart);
  uint32_t j, k, nSeen = 0, nPass = 0;
  if (a[0] > pGraph->nM0) return 0;
  for (j = 1; j <= a[0]; j++)
    HNSW_PREFETCH(colvecHnswLinks(pGraph, 0, a[j] % pGraph->nNode));
  for (j = 1; j <= a[0]; j++) {
    const uint32_t *b;
    if (a[j] >= pGraph->nNode) return 0;
    nSeen++;
    nPass += pQuery->xAccept(pQuery->pCtx, a[j]) != 0;
    b = colvecHnswLinks(pGraph, 0, a[j]);
    if (b[0] > pGraph->nM0) return 0;
    for (k = 1; k <= b[0]; k++) {
      if (b[k] >= pGraph->nNode) return 0;
      nSeen++;
      nPass += pQuery->xAccept(pQuery->pCtx, b[k]) != 0;
    }
  }
  return nSeen >= 64 && 4.0 * nPass < (double)pQuery->rPass * nSeen;
}

/*
** Searches the graph for the k nodes nearest the query: greedy descent
** through the upper levels, then a beam of width nEf on level 0. Writes the
** best min(k, nEf, N) nodes that pQuery->xAccept admits (all when it is
** NULL) to aOutNode/aOutDist (room for k each), ascending by (distance,
** node id), and their number to *pnOut. pSearch is reused scratch; it grows
** if the graph or nEf is larger than it was reserved for. A two-hop
** search (pQuery->bTwoHop) may give up instead: pSearch->bGaveUp is set
** and *pnOut is 0. Returns COLVEC_OK, COLVEC_CORRUPT (corrupt level-0
** record met in a lazily opened graph) or COLVEC_NOMEM; *pnOut is 0 on
** error.
*/
int colvecHnswSearch(const ColvecHnsw *pGraph, const ColvecHnswQuery *pQuery,
                     int nEf, int k, ColvecHnswSearch *pSearch,
                     uint32_t *aOutNode, float *aOutDist, int *pnOut) {
  int rc;
  uint32_t iCur, n, i;
  float dCur;

  *pnOut = 0;
  if (k <= 0 || pGraph->nNode == 0) return COLVEC_OK;
  if (nEf < 1) nEf = 1;
  if ((uint32_t)nEf > pGraph->nNode) nEf = (int)pGraph->nNode;
  rc = colvecHnswSearchReserve(pSearch, pGraph->nNode, nEf);
  if (rc != COLVEC_OK) return rc;

  iCur = pGraph->iEntry;
  dCur = pQuery->xDist(pQuery->pCtx, iCur);
  if (pGraph->iMaxLevel > 0) {
    uint32_t iUp = pGraph->iEntryUp;
    colvecHnswGreedy(pGraph, pQuery, pGraph->iMaxLevel, 1, &iUp, &dCur);
    iCur = pGraph->aUpDir[3 * (size_t)iUp];
  }
  pSearch->bGaveUp = 0;
  if (pQuery->bTwoHop && pQuery->xAccept && hnswSparse(pGraph, pQuery, iCur)) {
    /* start from the nearest seed instead */
    uint32_t aSeed[2 * COLVEC_HNSW_MAX_M];
    float aSeedDist[2 * COLVEC_HNSW_MAX_M];
    int j, nStart;
    nStart = pQuery->xSeeds
                 ? pQuery->xSeeds(pQuery->pCtx, aSeed, 2 * COLVEC_HNSW_MAX_M)
                 : 0;
    if (nStart <= 0 || nStart > 2 * COLVEC_HNSW_MAX_M) {
      pSearch->bGaveUp = 1;
      return COLVEC_OK;
    }
    for (j = 0; j < nStart; j++) {
      if (aSeed[j] >= pGraph->nNode) return COLVEC_CORRUPT;
    }
    if (pQuery->xDistBatch) {
      pQuery->xDistBatch(pQuery->pCtx, aSeed, nStart, aSeedDist);
    } else {
      for (j = 0; j < nStart; j++)
        aSeedDist[j] = pQuery->xDist(pQuery->pCtx, aSeed[j]);
    }
    for (j = 0; j < nStart; j++) {
      if (j == 0 || aSeedDist[j] < dCur) {
        dCur = aSeedDist[j];
        iCur = aSeed[j];
      }
    }
    /* a wider beam: the way from the seeds to the query is longer */
    nEf = 2 * nEf < (int)pGraph->nNode ? 2 * nEf : (int)pGraph->nNode;
    rc = colvecHnswSearchReserve(pSearch, pGraph->nNode, nEf);
    if (rc != COLVEC_OK) return rc;
  }
  rc = colvecHnswSearchLayer(pGraph, 0, pQuery, iCur, dCur, (uint32_t)nEf,
                             pSearch);
  if (rc != COLVEC_OK) return rc;
  if (pQuery->bTwoHop && pQuery->xAccept && pSearch->nTop < (uint32_t)nEf) {
    pSearch->bGaveUp = 1;
    return COLVEC_OK;
  }

  n = pSearch->nTop < (uint32_t)k ? pSearch->nTop : (uint32_t)k;
  for (i = 0; i < n; i++) {
    aOutNode[i] = pSearch->aTop[i].id;
    aOutDist[i] = pSearch->aTop[i].d;
  }
  *pnOut = (int)n;
  return COLVEC_OK;
}

/* Version of the recall part's layout. */
#define HNSW_RECALL_VERSION 1

/* Encodes the recall record; see colvec_hnsw.h. */
void colvecHnswRecallEncode(const ColvecHnswRecall *p, uint8_t *a) {
  double aR[2];
  int i;
  aR[0] = p->rCodes;
  aR[1] = p->rVectors;
  memset(a, 0, COLVEC_RECALL_BYTES);
  hnswPut32(a, HNSW_RECALL_VERSION);
  hnswPut32(a + 4, (uint32_t)p->nQuery);
  hnswPut32(a + 8, (uint32_t)p->k);
  hnswPut32(a + 12, (uint32_t)p->eUsed);
  for (i = 0; i < 2; i++) {
    uint32_t u = aR[i] < 0.0 ? 0 : (uint32_t)(aR[i] * 1e6 + 0.5) + 1;
    hnswPut32(a + 16 + 8 * i, u);
  }
}

/* Decodes the recall record; see colvec_hnsw.h. */
int colvecHnswRecallDecode(const uint8_t *a, int64_t n, ColvecHnswRecall *p) {
  uint32_t aU[2];
  int i;
  if (n != COLVEC_RECALL_BYTES || hnswGet32(a) != HNSW_RECALL_VERSION) {
    return COLVEC_CORRUPT;
  }
  p->nQuery = (int)hnswGet32(a + 4);
  p->k = (int)hnswGet32(a + 8);
  p->eUsed = (int)hnswGet32(a + 12);
  for (i = 0; i < 2; i++) {
    aU[i] = hnswGet32(a + 16 + 8 * i);
    if (aU[i] > 1000001 || hnswGet32(a + 20 + 8 * i) != 0) {
      return COLVEC_CORRUPT;
    }
  }
  p->rCodes = aU[0] ? (aU[0] - 1) / 1e6 : -1.0;
  p->rVectors = aU[1] ? (aU[1] - 1) / 1e6 : -1.0;
  if (p->nQuery < 0 || p->nQuery > COLVEC_RECALL_QUERIES || p->k < 0 ||
      p->k > COLVEC_RECALL_K || p->eUsed < COLVEC_RECALL_CODES ||
      p->eUsed > COLVEC_RECALL_EXACT) {
    return COLVEC_CORRUPT;
  }
  return COLVEC_OK;
}
