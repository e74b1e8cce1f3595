/*
** fuzz_segment.c — libFuzzer target: the segment reader on mutated files.
**
** The input is a whole segment file. It is written to an in-memory file and
** read the way the module reads a segment, in both access modes (mmap and
** pread): colvecSegfileOpen (header, checksum, section table), every accessor
** on
** every section (data pointer, whole and element reads, scan, advice),
** colvecSegfileVerify, the attribute offsets as colvecLayoutView checks them,
** and
** for each vector column the quantizer (colvecQuantDeserialize, a prepared
** query, an estimate per code), the HNSW graph (lazy and full open, full
** check, serialisation) and searches over it, filtered and not.
**
** Most mutations break the header checksum, which stops the reader at the
** first check. A file whose header checksum is wrong is therefore also
** retried with its file size and header checksum fixed up, and a quantizer
** section with its FNV checksum fixed up: a damaged file with valid
** checksums is what a crafted file (or a bug in a writer) looks like, and
** the reader must be as safe on it as on random bytes.
**
** Invariants checked beyond "no crash, no sanitizer report": a search
** returns at most min(k, ef, N) distinct node ids below N, in ascending
** distance, and only nodes the filter accepts.
**
** Seeds: gen_seeds writes real segments of every column type and quantizer,
** with and without a graph (see gen_seeds.c).
*/
#include "colvec_core.h"
#include "colvec_hnsw.h"
#include "colvec_os.h"
#include "colvec_quant.h"
#include "colvec_segfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Largest file the target accepts (larger inputs are ignored). */
#define FZ_MAX_FILE (8 << 20)

/* Most codes or rows one check walks (keeps each execution short). */
#define FZ_MAX_WALK 4096

/* The in-memory file and its path (set up once). */
static int fzFd = -1;
static char fzPath[64];

/* Aborts with a message: an invariant of the reader was broken. */
#define FZ_CHECK(c)                                                            \
  do {                                                                         \
    if (!(c)) {                                                                \
      fprintf(stderr, "fuzz_segment: invariant failed: %s (line %d)\n", #c,    \
              __LINE__);                                                       \
      abort();                                                                 \
    }                                                                          \
  } while (0)

/* Search context: how the harness measures query-to-node distances. */
typedef struct FzQuery FzQuery;
struct FzQuery {
  const ColvecQuantQuery *pqq; /* prepared quantized query, or NULL */
  const uint8_t *aCode;        /* codes, nCode bytes each (with pqq) */
  int nCode;                   /* bytes per code */
  const uint8_t *aVec;         /* vectors, nStride bytes each (without pqq) */
  int64_t nStride;             /* bytes per vector */
  const float *aQuery;         /* float query (nStride/4 floats) */
  uint32_t nNode;              /* nodes of the graph */
  uint32_t iMod;               /* filter: accept node % iMod == 0 (0: all) */
};

/* Query-to-node distance: the code's estimate or float l2 (NaN -> +inf). */
static float fzDist(void *pCtx, uint32_t iNode) {
  const FzQuery *q = (const FzQuery *)pCtx;
  float r = 0.0f;
  FZ_CHECK(iNode < q->nNode);
  if (q->pqq) {
    r = colvecQuantDistance(q->pqq, q->aCode + (size_t)iNode * q->nCode);
  } else if (q->aVec) {
    const float *v = (const float *)(q->aVec + (size_t)iNode * q->nStride);
    int64_t i, n = q->nStride / 4;
    for (i = 0; i < n; i++) {
      float d = v[i] - q->aQuery[i];
      r += d * d;
    }
  } else {
    r = (float)(iNode % 97);
  }
  return r == r ? r : INFINITY;
}

/* Batch form of fzDist (exercises the batch path of the beam search). */
static void fzDistBatch(void *pCtx, const uint32_t *aNode, int nNode,
                        float *aOut) {
  int i;
  for (i = 0; i < nNode; i++)
    aOut[i] = fzDist(pCtx, aNode[i]);
}

/* Prefetch hint: only checks the id. */
static void fzPrefetch(void *pCtx, uint32_t iNode) {
  const FzQuery *q = (const FzQuery *)pCtx;
  FZ_CHECK(iNode < q->nNode);
}

/* Filter: node % iMod == 0. */
static int fzAccept(void *pCtx, uint32_t iNode) {
  const FzQuery *q = (const FzQuery *)pCtx;
  FZ_CHECK(iNode < q->nNode);
  return q->iMod == 0 || iNode % q->iMod == 0;
}

/* Scan callback: touches every byte handed over. */
static int fzScanChunk(void *pCtx, const uint8_t *a, int64_t n) {
  uint64_t *pSum = (uint64_t *)pCtx;
  int64_t i;
  for (i = 0; i < n; i++)
    *pSum += a[i];
  return 0;
}

/* Makes the in-memory file hold exactly the n bytes at a. */
static int fzWriteFile(const uint8_t *a, size_t n) {
  if (fzFd < 0) {
    fzFd = memfd_create("colvec-fuzz-seg", 0);
    if (fzFd < 0) {
      perror("memfd_create");
      abort();
    }
    snprintf(fzPath, sizeof(fzPath), "/proc/self/fd/%d", fzFd);
  }
  if (ftruncate(fzFd, 0) != 0) return 1;
  if (n > 0 && pwrite(fzFd, a, n, 0) != (ssize_t)n) return 1;
  return 0;
}

/*
** Bytes of section pSec: the mapping, or a read into *ppOwned (freed by
** the caller). NULL when the read fails.
*/
static const uint8_t *fzBytes(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                              uint8_t **ppOwned) {
  const uint8_t *a = (const uint8_t *)colvecSegfileData(pSeg, pSec);
  ColvecErr err;
  if (a) return a;
  *ppOwned = (uint8_t *)malloc((size_t)pSec->nByte + 8);
  if (*ppOwned == NULL) return NULL;
  if (colvecSegfileRead(pSeg, pSec, 0, *ppOwned, pSec->nByte, &err) !=
      COLVEC_OK) {
    free(*ppOwned);
    *ppOwned = NULL;
    return NULL;
  }
  return *ppOwned;
}

/* Every accessor on one section, including refused out-of-range reads. */
static void fzSection(ColvecSeg *pSeg, const ColvecSegSection *pSec) {
  ColvecErr err;
  uint8_t aBuf[64];
  uint8_t *pOwned = NULL;
  const uint8_t *a;
  uint64_t nSum = 0;
  int64_t v = 0;
  double r = 0;
  FZ_CHECK(colvecSegfileKindName(pSec->eKind) != NULL);
  FZ_CHECK(colvecSegfileFind(pSeg, pSec->eKind, pSec->iColumn) != NULL);
  FZ_CHECK(pSec->iOffset >= 0 && pSec->nByte >= 0);
  FZ_CHECK(pSec->iOffset + pSec->nByte <= colvecSegfileFileSize(pSeg));
  a = fzBytes(pSeg, pSec, &pOwned);
  if (a) {
    int64_t i;
    for (i = 0; i < pSec->nByte; i++)
      nSum += a[i];
  }
  free(pOwned);
  /* FILE mode: the scan buffer is 1 MB whatever the section (costly
  ** under ASan), so only small files are scanned that way */
  if (colvecSegfileData(pSeg, pSec) || colvecSegfileFileSize(pSeg) < 4096) {
    colvecSegfileScan(pSeg, pSec, fzScanChunk, &nSum, &err);
  }
  colvecSegfileAdvise(pSeg, pSec, 0, pSec->nByte, 0);
  if (pSec->nElemSize > 0 && pSec->nElemSize <= sizeof(aBuf)) {
    int64_t nElem = pSec->nByte / pSec->nElemSize;
    colvecSegfileReadElem(pSeg, pSec, 0, aBuf, &err);
    colvecSegfileReadElem(pSeg, pSec, nElem - 1, aBuf, &err);
    FZ_CHECK(colvecSegfileReadElem(pSeg, pSec, nElem, aBuf, &err) != COLVEC_OK);
    FZ_CHECK(colvecSegfileReadElem(pSeg, pSec, -1, aBuf, &err) != COLVEC_OK);
  }
  colvecSegfileReadInt64(pSeg, pSec, 0, &v, &err);
  colvecSegfileReadDouble(pSeg, pSec, pSec->nByte / 8 - 1, &r, &err);
  colvecSegfileReadInt64(pSeg, pSec, INT64_MAX / 4, &v, &err);
  FZ_CHECK(colvecSegfileRead(pSeg, pSec, pSec->nByte, aBuf, 1, &err) !=
           COLVEC_OK);
  FZ_CHECK(colvecSegfileRead(pSeg, pSec, -1, aBuf, 1, &err) != COLVEC_OK);
  (void)nSum;
}

/*
** The attribute checks of colvecLayoutView (colvec_layout.c) for column
** iCol: offsets start at 0, never decrease and end inside the bytes; then
** every value is read.
*/
static void fzVarColumn(ColvecSeg *pSeg, uint32_t iCol, int64_t nRow) {
  const ColvecSegSection *pOff =
      colvecSegfileFind(pSeg, COLVEC_SEG_ATTR_VAROFFSETS, iCol);
  const ColvecSegSection *pByte =
      colvecSegfileFind(pSeg, COLVEC_SEG_ATTR_VARBYTES, iCol);
  uint8_t *pOwnedOff = NULL, *pOwnedByte = NULL;
  const int64_t *aOff;
  const uint8_t *aByte = NULL;
  int64_t nByte = 0, i, j;
  uint64_t nSum = 0;
  if (pOff == NULL || pOff->nByte != 8 * (nRow + 1)) return;
  aOff = (const int64_t *)fzBytes(pSeg, pOff, &pOwnedOff);
  if (pByte) {
    aByte = fzBytes(pSeg, pByte, &pOwnedByte);
    nByte = pByte->nByte;
  }
  if (aOff && aOff[0] == 0 && aOff[nRow] <= nByte) {
    for (i = 0; i < nRow; i++) {
      if (aOff[i + 1] < aOff[i]) break;
    }
    if (i == nRow) {
      for (i = 0; i < nRow && i < FZ_MAX_WALK; i++) {
        for (j = aOff[i]; j < aOff[i + 1]; j++)
          nSum += aByte[j];
      }
    }
  }
  free(pOwnedOff);
  free(pOwnedByte);
  (void)nSum;
}

/*
** Searches graph pGraph with the distances of q, with k, ef and the
** filter chosen by iVariant, and checks the result's invariants.
*/
static void fzSearch(const ColvecHnsw *pGraph, FzQuery *q, int iVariant) {
  static const int aK[] = {1, 3, 10, 50};
  static const int aEf[] = {1, 16, 64, 200};
  ColvecHnswSearch *pSearch = NULL;
  ColvecHnswQuery hq;
  uint32_t aNode[256];
  float aDist[256];
  int nOut = -1, k = aK[iVariant & 3], nEf = aEf[(iVariant >> 2) & 3], i;
  int rc;
  uint32_t nNode = colvecHnswNodeCount(pGraph);
  memset(&hq, 0, sizeof(hq));
  hq.xDist = fzDist;
  hq.xPrefetch = fzPrefetch;
  hq.xDistBatch = (iVariant & 16) ? fzDistBatch : NULL;
  hq.xAccept = (iVariant & 32) ? fzAccept : NULL;
  hq.pCtx = q;
  q->iMod = (iVariant & 32) ? 3 : 0;
  if (nEf < k) nEf = k;
  if (colvecHnswSearchNew(&pSearch) != COLVEC_OK) return;
  if (colvecHnswSearchReserve(pSearch, nNode, nEf) == COLVEC_OK) {
    rc = colvecHnswSearch(pGraph, &hq, nEf, k, pSearch, aNode, aDist, &nOut);
    if (rc == COLVEC_OK) {
      FZ_CHECK(nOut >= 0 && nOut <= k && nOut <= nEf);
      FZ_CHECK((uint32_t)nOut <= nNode);
      for (i = 0; i < nOut; i++) {
        int j;
        FZ_CHECK(aNode[i] < nNode);
        FZ_CHECK(fzAccept(q, aNode[i]) || hq.xAccept == NULL);
        if (i > 0) FZ_CHECK(aDist[i - 1] <= aDist[i]);
        for (j = 0; j < i; j++)
          FZ_CHECK(aNode[j] != aNode[i]);
      }
    } else {
      FZ_CHECK(rc == COLVEC_CORRUPT || rc == COLVEC_NOMEM);
    }
  }
  colvecHnswSearchFree(pSearch);
}

/*
** The index of vector column iCol (VECTORS section pVec): quantizer,
** codes and graph, as colvec_index.c opens them, then searches.
*/
static void fzIndex(ColvecSeg *pSeg, const ColvecSegSection *pVec,
                    int64_t nRow) {
  uint32_t iCol = pVec->iColumn;
  const ColvecSegSection *pSec;
  uint8_t *pOwnedVec = NULL, *pOwnedQ = NULL, *pOwnedCode = NULL;
  uint8_t *pOwnedGraph = NULL;
  const uint8_t *aVec = NULL, *aCode = NULL;
  ColvecQuant *pQuant = NULL;
  ColvecQuantQuery qq;
  FzQuery q;
  float *aQuery = NULL;
  int64_t nStride = pVec->nElemSize, i;
  int bQuery = 0;

  memset(&qq, 0, sizeof(qq));
  memset(&q, 0, sizeof(q));
  if (nStride <= 0 || pVec->nByte != nStride * nRow) return;
  aVec = fzBytes(pSeg, pVec, &pOwnedVec);
  if (aVec == NULL) return;
  aQuery = (float *)calloc((size_t)nStride / 4 + 1, sizeof(float));
  if (aQuery == NULL) goto out;
  /* the query: row 0's vector when the column holds floats */
  if (nRow > 0 && nStride % 4 == 0) {
    memcpy(aQuery, aVec, (size_t)nStride);
    for (i = 0; i < nStride / 4; i++) {
      if (!isfinite(aQuery[i])) aQuery[i] = 0.5f;
    }
  }

  pSec = colvecSegfileFind(pSeg, COLVEC_SEG_QUANT, iCol);
  if (pSec) {
    const uint8_t *a = fzBytes(pSeg, pSec, &pOwnedQ);
    int rc = a ? colvecQuantDeserialize(a, pSec->nByte, &pQuant) : COLVEC_ERROR;
    if (rc == COLVEC_CORRUPT && a && pSec->nByte >= 8) {
      /* again with a valid FNV-1a checksum: the fields must be checked */
      uint8_t *b = (uint8_t *)malloc((size_t)pSec->nByte);
      if (b) {
        uint32_t h = 2166136261u;
        memcpy(b, a, (size_t)pSec->nByte);
        for (i = 0; i < pSec->nByte - 4; i++) {
          h ^= b[i];
          h *= 16777619u;
        }
        b[pSec->nByte - 4] = (uint8_t)h;
        b[pSec->nByte - 3] = (uint8_t)(h >> 8);
        b[pSec->nByte - 2] = (uint8_t)(h >> 16);
        b[pSec->nByte - 1] = (uint8_t)(h >> 24);
        rc = colvecQuantDeserialize(b, pSec->nByte, &pQuant);
        free(b);
      }
    }
    FZ_CHECK(rc != COLVEC_OK || pQuant != NULL);
    FZ_CHECK(rc == COLVEC_OK || pQuant == NULL);
    /* the module requires the column's dimension (float: stride/4) */
    if (pQuant && (nStride % 4 != 0 || colvecQuantDim(pQuant) != nStride / 4)) {
      colvecQuantFree(pQuant);
      pQuant = NULL;
    }
    if (pQuant) {
      int64_t nSer = colvecQuantSerializedBytes(pQuant);
      uint8_t *b = (uint8_t *)malloc((size_t)nSer);
      ColvecQuant *p2 = NULL;
      int nCode = colvecQuantCodeBytes(pQuant);
      /* a quantizer that loaded serialises to a form that loads again */
      if (b) {
        colvecQuantSerialize(pQuant, b);
        FZ_CHECK(colvecQuantDeserialize(b, nSer, &p2) == COLVEC_OK);
        colvecQuantFree(p2);
        free(b);
      }
      pSec = colvecSegfileFind(pSeg, COLVEC_SEG_CODES, iCol);
      if (pSec && nCode > 0 && pSec->nByte == (int64_t)nCode * nRow) {
        aCode = fzBytes(pSeg, pSec, &pOwnedCode);
      }
      if (aCode && colvecQuantQueryPrepare(pQuant, aQuery, &qq) == COLVEC_OK) {
        const uint8_t *apCode[8];
        float aOut[8];
        int n = 0;
        bQuery = 1;
        for (i = 0; i < nRow && i < FZ_MAX_WALK; i++) {
          float r = colvecQuantDistance(&qq, aCode + (size_t)i * nCode);
          FZ_CHECK(r == r); /* never NaN: corrupt codes rank last */
          if (n < 8) apCode[n++] = aCode + (size_t)i * nCode;
        }
        colvecQuantDistanceBatch(&qq, apCode, n, aOut);
        for (i = 0; i < n; i++)
          FZ_CHECK(aOut[i] == aOut[i]);
      }
    }
  }

  pSec = colvecSegfileFind(pSeg, COLVEC_SEG_GRAPH, iCol);
  if (pSec && (pQuant == NULL || bQuery)) {
    const uint8_t *a = fzBytes(pSeg, pSec, &pOwnedGraph);
    ColvecHnsw *pLazy = NULL, *pFull = NULL;
    if (a) {
      int rcLazy =
          colvecHnswOpen(a, (size_t)pSec->nByte, COLVEC_HNSW_OPEN_LAZY, &pLazy);
      int rcFull = colvecHnswOpen(a, (size_t)pSec->nByte, 0, &pFull);
      /* a graph that passes the full check also passes the lazy one */
      if (rcFull == COLVEC_OK) FZ_CHECK(rcLazy == COLVEC_OK);
      if (rcLazy == COLVEC_OK) {
        int rcCheck = colvecHnswCheck(pLazy);
        if (rcFull == COLVEC_OK) FZ_CHECK(rcCheck == COLVEC_OK);
        if (colvecHnswNodeCount(pLazy) == (uint32_t)nRow) {
          int v;
          q.nNode = (uint32_t)nRow;
          q.aQuery = aQuery;
          if (bQuery) {
            q.pqq = &qq;
            q.aCode = aCode;
            q.nCode = colvecQuantCodeBytes(pQuant);
          } else if (nStride % 4 == 0) {
            q.aVec = aVec;
            q.nStride = nStride;
          }
          for (v = 0; v < 64; v += 13)
            fzSearch(pLazy, &q, v);
          if (pFull) fzSearch(pFull, &q, 63);
        }
      }
      if (pFull) {
        int64_t nSer = colvecHnswSerializedSize(pFull);
        uint8_t *b = nSer > 0 ? (uint8_t *)malloc((size_t)nSer) : NULL;
        if (b) {
          ColvecHnsw *p2 = NULL;
          FZ_CHECK(colvecHnswSerialize(pFull, b, (size_t)nSer) == COLVEC_OK);
          FZ_CHECK(colvecHnswOpen(b, (size_t)nSer, 0, &p2) == COLVEC_OK);
          colvecHnswFree(p2);
          free(b);
        }
      }
    }
    colvecHnswFree(pLazy);
    colvecHnswFree(pFull);
  }

out:
  colvecQuantQueryClear(&qq);
  colvecQuantFree(pQuant);
  free(aQuery);
  free(pOwnedVec);
  free(pOwnedQ);
  free(pOwnedCode);
  free(pOwnedGraph);
}

/* Reads the file in access mode eAccess as the module would. */
static void fzReadAll(int eAccess) {
  ColvecSeg *pSeg = NULL;
  ColvecErr err;
  int rc, i, nSec;
  int64_t nRow;
  const ColvecSegSection *pRowid;

  err.zMsg[0] = 0;
  rc = colvecSegfileOpen(&colvecStoreFile, fzPath, eAccess, 0, &pSeg, &err);
  if (rc != COLVEC_OK) {
    FZ_CHECK(pSeg == NULL);
    FZ_CHECK(rc == COLVEC_CORRUPT || rc == COLVEC_ERROR || rc == COLVEC_NOMEM ||
             rc == COLVEC_IOERR);
    FZ_CHECK(strncmp(err.zMsg, "colvec: ", 8) == 0);
    return;
  }
  nRow = (int64_t)colvecSegfileRowCount(pSeg);
  FZ_CHECK(nRow >= 0);
  (void)colvecSegfileFingerprint(pSeg);
  (void)colvecSegfileHeaderChecksum(pSeg);
  FZ_CHECK(colvecSegfileVersion(pSeg) == COLVEC_SEG_VERSION);
  FZ_CHECK(colvecSegfileTableOffset(pSeg) <= colvecSegfileFileSize(pSeg));
  nSec = colvecSegfileSectionCount(pSeg);
  for (i = 0; i < nSec; i++)
    fzSection(pSeg, colvecSegfileSection(pSeg, i));
  FZ_CHECK(colvecSegfileSection(pSeg, nSec) == NULL);
  FZ_CHECK(colvecSegfileSection(pSeg, -1) == NULL);
  rc = colvecSegfileVerify(pSeg, &err);
  FZ_CHECK(rc == COLVEC_OK || rc == COLVEC_CORRUPT || rc == COLVEC_NOMEM ||
           rc == COLVEC_IOERR);

  /* the module refuses a segment without rowids for its row count */
  pRowid = colvecSegfileFind(pSeg, COLVEC_SEG_ROWIDS, 0);
  if (pRowid && pRowid->nByte == nRow * 8 && nRow <= (1 << 22)) {
    for (i = 0; i < nSec; i++) {
      const ColvecSegSection *pSec = colvecSegfileSection(pSeg, i);
      if (pSec->eKind == COLVEC_SEG_ATTR_VAROFFSETS) {
        fzVarColumn(pSeg, pSec->iColumn, nRow);
      } else if (pSec->eKind == COLVEC_SEG_VECTORS) {
        fzIndex(pSeg, pSec, nRow);
      }
    }
  }
  colvecSegfileClose(pSeg);
}

/*
** Rewrites the file-size field and the header checksum of the file image a
** (n bytes) so that the header check passes; returns 0 when the image is
** too short or its table offset is out of range (nothing to fix).
*/
static int fzFixHeader(uint8_t *a, size_t n) {
  uint64_t iTable = 0, cksum;
  uint32_t nHdr;
  ColvecHash hash;
  int i;
  uint8_t aHdr[COLVEC_SEG_HEADER_SIZE];
  if (n < COLVEC_SEG_HEADER_SIZE) return 0;
  for (i = 0; i < 8; i++)
    a[48 + i] = (uint8_t)((uint64_t)n >> (8 * i));
  for (i = 7; i >= 0; i--)
    iTable = (iTable << 8) | a[40 + i];
  nHdr = (uint32_t)a[12] | ((uint32_t)a[13] << 8) | ((uint32_t)a[14] << 16) |
         ((uint32_t)a[15] << 24);
  if (nHdr != COLVEC_SEG_HEADER_SIZE || iTable < nHdr || iTable > n) return 0;
  memcpy(aHdr, a, sizeof(aHdr));
  memset(aHdr + 56, 0, 8);
  colvecHashInit(&hash);
  colvecHashUpdate(&hash, aHdr, sizeof(aHdr));
  colvecHashUpdate(&hash, a + iTable, (int64_t)(n - iTable));
  cksum = colvecHashFinal(&hash);
  for (i = 0; i < 8; i++)
    a[56 + i] = (uint8_t)(cksum >> (8 * i));
  return 1;
}

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData) {
  uint8_t *aFix;
  if (nData > FZ_MAX_FILE) return 0;
  if (fzWriteFile(aData, nData)) return 0;
  fzReadAll(COLVEC_SEG_MMAP);
  fzReadAll(COLVEC_SEG_FILE);

  /* the same bytes with a valid file size and header checksum */
  aFix = (uint8_t *)malloc(nData + 1);
  if (aFix == NULL) return 0;
  memcpy(aFix, aData, nData);
  if (fzFixHeader(aFix, nData) && memcmp(aFix, aData, nData) != 0 &&
      fzWriteFile(aFix, nData) == 0) {
    fzReadAll(COLVEC_SEG_MMAP);
    fzReadAll(COLVEC_SEG_FILE);
  }
  free(aFix);
  return 0;
}
