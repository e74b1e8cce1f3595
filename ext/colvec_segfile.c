/*
** colvec_segfile.c — segment files: the XXH64 checksum, the streaming
** writer and the validating reader. The format is described in
** colvec_segfile.h. Nothing read from a file is trusted: every offset and
** length is checked before use and a bad file gives COLVEC_CORRUPT with a
** message, never an assert or a crash.
*/
#include "colvec_segfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Size of the writer's buffer and of the reader's scan chunks. */
#define SEG_BUFSIZE ((int64_t)1 << 20)

/* Most bytes the section table may take (frozen preamble rule). */
#define SEG_MAX_TABLE ((int64_t)COLVEC_SEG_MAX_SECTION * COLVEC_SEG_ENTRY_SIZE)

/* Size of the version-independent header preamble. */
#define SEG_PREAMBLE 64

/* Offset of the header checksum field (part of the frozen preamble). */
#define SEG_CKSUM_OFFSET 56

/* Largest row count accepted, so that 8*(N+1) cannot overflow int64. */
#define SEG_MAX_ROWS ((uint64_t)INT64_MAX / 16)

/*************************************************************************
** Little-endian encoding, independent of the host's byte order.
*/

/* Stores v at a as 4 little-endian bytes. */
static void segPut32(uint8_t *a, uint32_t v) {
  a[0] = (uint8_t)v;
  a[1] = (uint8_t)(v >> 8);
  a[2] = (uint8_t)(v >> 16);
  a[3] = (uint8_t)(v >> 24);
}

/* Stores v at a as 8 little-endian bytes. */
static void segPut64(uint8_t *a, uint64_t v) {
  segPut32(a, (uint32_t)v);
  segPut32(a + 4, (uint32_t)(v >> 32));
}

/* Returns the 4 little-endian bytes at a. */
static uint32_t segGet32(const uint8_t *a) {
  return (uint32_t)a[0] | ((uint32_t)a[1] << 8) | ((uint32_t)a[2] << 16) |
         ((uint32_t)a[3] << 24);
}

/* Returns the 8 little-endian bytes at a. */
static uint64_t segGet64(const uint8_t *a) {
  return (uint64_t)segGet32(a) | ((uint64_t)segGet32(a + 4) << 32);
}

/*************************************************************************
** Checksum: XXH64, seed 0 (identical to `xxhsum -H1`, checked against it
** in test/unit/check_segment.c). Measured 6.8-10.7 GB/s on one core of the
** shared 2-vCPU machine at -O2 (64 MiB buffer hashed 10 times), so
** integrity-check is bounded by I/O, not by hashing.
*/
#define XXP1 0x9E3779B185EBCA87ULL
#define XXP2 0xC2B2AE3D27D4EB4FULL
#define XXP3 0x165667B19E3779F9ULL
#define XXP4 0x85EBCA77C2B2AE63ULL
#define XXP5 0x27D4EB2F165667C5ULL

/* Rotates x left by r bits (0 < r < 64). */
static uint64_t hashRotl(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

/* Loads 8 bytes at p as a little-endian word (unaligned access is fine). */
static uint64_t hashLoad64(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
#else
  return segGet64(p);
#endif
}

/* One XXH64 lane step: mixes input word w into accumulator acc. */
static uint64_t hashRound(uint64_t acc, uint64_t w) {
  acc += w * XXP2;
  acc = hashRotl(acc, 31);
  return acc * XXP1;
}

/* Folds lane accumulator v into the final hash h. */
static uint64_t hashMerge(uint64_t h, uint64_t v) {
  h ^= hashRound(0, v);
  return h * XXP1 + XXP4;
}

/*
** Consumes nStripe complete 32-byte stripes at p into the four lanes of
** pHash. This is the throughput loop; the four independent lanes let the
** CPU overlap the multiplies.
*/
static void hashStripes(ColvecHash *pHash, const uint8_t *p, int64_t nStripe) {
  uint64_t v0 = pHash->v[0], v1 = pHash->v[1];
  uint64_t v2 = pHash->v[2], v3 = pHash->v[3];
  int64_t i;
  for (i = 0; i < nStripe; i++, p += 32) {
    v0 = hashRound(v0, hashLoad64(p));
    v1 = hashRound(v1, hashLoad64(p + 8));
    v2 = hashRound(v2, hashLoad64(p + 16));
    v3 = hashRound(v3, hashLoad64(p + 24));
  }
  pHash->v[0] = v0;
  pHash->v[1] = v1;
  pHash->v[2] = v2;
  pHash->v[3] = v3;
}

/* Starts a new checksum (seed 0). */
void colvecHashInit(ColvecHash *pHash) {
  memset(pHash, 0, sizeof(*pHash));
  pHash->v[0] = XXP1 + XXP2;
  pHash->v[1] = XXP2;
  pHash->v[2] = 0;
  pHash->v[3] = (uint64_t)0 - XXP1;
}

/*
** Feeds n bytes at p (n<=0 is a no-op). Splitting the input into pieces
** of any sizes gives the same final value as one call.
*/
void colvecHashUpdate(ColvecHash *pHash, const void *p, int64_t n) {
  const uint8_t *a = (const uint8_t *)p;
  if (n <= 0) return;
  pHash->nTotal += (uint64_t)n;
  if (pHash->nBuf + n < 32) {
    memcpy(pHash->aBuf + pHash->nBuf, a, (size_t)n);
    pHash->nBuf += (int)n;
    return;
  }
  if (pHash->nBuf > 0) {
    int nFill = 32 - pHash->nBuf;
    memcpy(pHash->aBuf + pHash->nBuf, a, (size_t)nFill);
    hashStripes(pHash, pHash->aBuf, 1);
    a += nFill;
    n -= nFill;
    pHash->nBuf = 0;
  }
  if (n >= 32) {
    hashStripes(pHash, a, n / 32);
    a += n - n % 32;
    n %= 32;
  }
  if (n > 0) {
    memcpy(pHash->aBuf, a, (size_t)n);
    pHash->nBuf = (int)n;
  }
}

/* Returns the checksum of everything fed so far; pHash is not changed. */
uint64_t colvecHashFinal(const ColvecHash *pHash) {
  uint64_t h;
  const uint8_t *p = pHash->aBuf;
  int n = pHash->nBuf;
  if (pHash->nTotal >= 32) {
    h = hashRotl(pHash->v[0], 1) + hashRotl(pHash->v[1], 7) +
        hashRotl(pHash->v[2], 12) + hashRotl(pHash->v[3], 18);
    h = hashMerge(h, pHash->v[0]);
    h = hashMerge(h, pHash->v[1]);
    h = hashMerge(h, pHash->v[2]);
    h = hashMerge(h, pHash->v[3]);
  } else {
    h = pHash->v[2] + XXP5; /* v[2] is still the seed */
  }
  h += pHash->nTotal;
  for (; n >= 8; n -= 8, p += 8) {
    h ^= hashRound(0, hashLoad64(p));
    h = hashRotl(h, 27) * XXP1 + XXP4;
  }
  if (n >= 4) {
    h ^= (uint64_t)segGet32(p) * XXP1;
    h = hashRotl(h, 23) * XXP2 + XXP3;
    p += 4;
    n -= 4;
  }
  for (; n > 0; n--, p++) {
    h ^= (uint64_t)(*p) * XXP5;
    h = hashRotl(h, 11) * XXP1;
  }
  h ^= h >> 33;
  h *= XXP2;
  h ^= h >> 29;
  h *= XXP3;
  h ^= h >> 32;
  return h;
}

/* Returns the checksum of the n bytes at p in one call. */
uint64_t colvecSegfileHash(const void *p, int64_t n) {
  ColvecHash h;
  colvecHashInit(&h);
  colvecHashUpdate(&h, p, n);
  return colvecHashFinal(&h);
}

/*************************************************************************
** Rules shared by the writer and the reader.
*/

/* Returns the name of section kind eKind ("UNKNOWN" for others). */
const char *colvecSegfileKindName(uint32_t eKind) {
  switch (eKind) {
  case COLVEC_SEG_ROWIDS:
    return "ROWIDS";
  case COLVEC_SEG_ATTR_FIXED:
    return "ATTR_FIXED";
  case COLVEC_SEG_ATTR_VAROFFSETS:
    return "ATTR_VAROFFSETS";
  case COLVEC_SEG_ATTR_VARBYTES:
    return "ATTR_VARBYTES";
  case COLVEC_SEG_NULLBITMAP:
    return "NULLBITMAP";
  case COLVEC_SEG_VECTORS:
    return "VECTORS";
  case COLVEC_SEG_CODES:
    return "CODES";
  case COLVEC_SEG_GRAPH:
    return "GRAPH";
  case COLVEC_SEG_QUANT:
    return "QUANT";
  case COLVEC_SEG_EXACT:
    return "EXACT";
  case COLVEC_SEG_RECALL:
    return "RECALL";
  }
  return "UNKNOWN";
}

/* Rounds n up to a multiple of COLVEC_SEG_ALIGN (n small enough). */
static int64_t segAlignUp(int64_t n) {
  return (n + COLVEC_SEG_ALIGN - 1) & ~(int64_t)(COLVEC_SEG_ALIGN - 1);
}

/*
** Checks section iSec of aSec against the rules of colvec_segfile.h for a
** file of nRow rows whose sections must lie in [iFirst, iTable). Returns
** 0 when it obeys them; otherwise writes the reason (naming the section)
** to zWhy and returns 1. Offsets and lengths have already been converted
** to int64 (values above INT64_MAX are rejected by the caller).
*/
static int segCheckSection(const ColvecSegSection *aSec, int iSec,
                           uint64_t nRow, int64_t iFirst, int64_t iTable,
                           char *zWhy, size_t nWhy) {
  const ColvecSegSection *p = &aSec[iSec];
  const char *zKind = colvecSegfileKindName(p->eKind);
  int64_t nWant = -1; /* required length, -1 = any */
  int64_t iMin = iFirst;
  int i;

  if (iSec > 0)
    iMin = segAlignUp(aSec[iSec - 1].iOffset + aSec[iSec - 1].nByte);
  if (p->eKind == 0) {
    snprintf(zWhy, nWhy, "section %d has kind 0", iSec);
    return 1;
  }
  if (p->flags & ~(uint32_t)COLVEC_SEGF_KNOWN) {
    snprintf(zWhy, nWhy, "section %d (%s) has unknown flags 0x%x", iSec, zKind,
             p->flags);
    return 1;
  }
  if (p->iOffset % COLVEC_SEG_ALIGN != 0 || p->iOffset < iMin ||
      p->iOffset > iTable || p->nByte > iTable - p->iOffset) {
    snprintf(zWhy, nWhy,
             "section %d (%s column %u) at offset %lld length %lld is "
             "misplaced (must be %d-aligned within [%lld, %lld))",
             iSec, zKind, p->iColumn, (long long)p->iOffset,
             (long long)p->nByte, COLVEC_SEG_ALIGN, (long long)iMin,
             (long long)iTable);
    return 1;
  }
  switch (p->eKind) {
  case COLVEC_SEG_ROWIDS:
  case COLVEC_SEG_ATTR_FIXED:
    if (p->nElemSize != 8) goto bad_elemsize;
    nWant = (int64_t)nRow * 8;
    break;
  case COLVEC_SEG_ATTR_VAROFFSETS:
    if (p->nElemSize != 8) goto bad_elemsize;
    nWant = ((int64_t)nRow + 1) * 8;
    break;
  case COLVEC_SEG_ATTR_VARBYTES:
    if (p->nElemSize != 0) goto bad_elemsize;
    break;
  case COLVEC_SEG_NULLBITMAP:
    if (p->nElemSize != 0) goto bad_elemsize;
    nWant = ((int64_t)nRow + 7) / 8;
    break;
  case COLVEC_SEG_VECTORS:
  case COLVEC_SEG_CODES:
    if (p->nElemSize == 0 || p->nElemSize > COLVEC_SEG_MAX_ELEM) {
      goto bad_elemsize;
    }
    if (nRow > 0 && (uint64_t)p->nElemSize > (uint64_t)INT64_MAX / nRow) {
      goto bad_length;
    }
    nWant = (int64_t)nRow * (int64_t)p->nElemSize;
    break;
  case COLVEC_SEG_EXACT:
    if (p->nElemSize != 4) goto bad_elemsize;
    if ((uint64_t)p->nByte / 4 > nRow) goto bad_length;
    break;
  case COLVEC_SEG_RECALL:
    if (p->nElemSize != 0) goto bad_elemsize;
    break;
  default:
    break;
  }
  if (nWant >= 0 && p->nByte != nWant) goto bad_length;
  if (p->nElemSize > 0 && p->nByte % p->nElemSize != 0) goto bad_length;
  for (i = 0; i < iSec; i++) {
    if (aSec[i].eKind == p->eKind && aSec[i].iColumn == p->iColumn) {
      snprintf(zWhy, nWhy, "sections %d and %d are both %s column %u", i, iSec,
               zKind, p->iColumn);
      return 1;
    }
  }
  return 0;

bad_elemsize:
  snprintf(zWhy, nWhy, "section %d (%s column %u) has element size %u", iSec,
           zKind, p->iColumn, p->nElemSize);
  return 1;
bad_length:
  snprintf(zWhy, nWhy,
           "section %d (%s column %u, element size %u) has length %lld, "
           "which does not fit %llu rows",
           iSec, zKind, p->iColumn, p->nElemSize, (long long)p->nByte,
           (unsigned long long)nRow);
  return 1;
}

/* Encodes section p as a table entry of COLVEC_SEG_ENTRY_SIZE bytes at a. */
static void segEncodeEntry(uint8_t *a, const ColvecSegSection *p) {
  memset(a, 0, COLVEC_SEG_ENTRY_SIZE);
  segPut32(a, p->eKind);
  segPut32(a + 4, p->iColumn);
  segPut32(a + 8, p->nElemSize);
  segPut32(a + 12, p->flags);
  segPut64(a + 16, (uint64_t)p->iOffset);
  segPut64(a + 24, (uint64_t)p->nByte);
  segPut64(a + 32, p->cksum);
}

/*************************************************************************
** Writer.
*/

/* A segment being written (see colvecSegfileWriterOpen). */
struct ColvecSegWriter {
  const ColvecStore *pStore; /* where the file is written */
  ColvecFile *pFile;         /* the .tmp file, NULL once closed */
  char *zTmp;                /* path of the .tmp file (owned) */
  char *zFinal;              /* zTmp without ".tmp" (owned) */
  uint64_t fingerprint;      /* schema fingerprint for the header */
  int rc;                    /* sticky result code; once set, calls no-op */
  ColvecErr err;             /* message that goes with rc */
  uint8_t *aBuf;             /* write buffer of SEG_BUFSIZE bytes */
  int64_t nBuf;              /* bytes used in aBuf */
  int64_t iBufOff;           /* file offset where aBuf[0] goes */
  ColvecSegSection *aSec;    /* sections written so far */
  int nSec;                  /* entries used in aSec */
  int nSecAlloc;             /* entries allocated in aSec */
  int bInSection;            /* a section is open (Begin without End) */
  ColvecHash hash;           /* checksum of the open section */
};

/* Sets the sticky error of p (if none is set yet) with a formatted reason. */
static void segWriterError(ColvecSegWriter *p, int rc, const char *zFmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void segWriterError(ColvecSegWriter *p, int rc, const char *zFmt, ...) {
  char zWhy[256];
  va_list ap;
  if (p->rc != COLVEC_OK) return;
  va_start(ap, zFmt);
  vsnprintf(zWhy, sizeof(zWhy), zFmt, ap);
  va_end(ap);
  p->rc = rc;
  colvecErrSet(&p->err, 0, "colvec: writing segment \"%s\": %s", p->zTmp, zWhy);
}

/* Writes the buffered bytes of p to the file (sets p->rc on failure). */
static void segWriterFlush(ColvecSegWriter *p) {
  if (p->rc == COLVEC_OK && p->nBuf > 0) {
    p->rc = p->pStore->xWrite(p->pFile, p->aBuf, p->nBuf, p->iBufOff, &p->err);
  }
  p->iBufOff += p->nBuf;
  p->nBuf = 0;
}

/*
** Appends n bytes at pData to the file through the buffer; pData NULL
** appends n zero bytes. Does not touch the section checksum.
*/
static void segWriterRaw(ColvecSegWriter *p, const void *pData, int64_t n) {
  const uint8_t *a = (const uint8_t *)pData;
  while (p->rc == COLVEC_OK && n > 0) {
    int64_t nCopy;
    if (p->nBuf == 0 && a != NULL && n >= SEG_BUFSIZE) {
      /* Large block: write it straight from the caller's memory. */
      p->rc = p->pStore->xWrite(p->pFile, a, n, p->iBufOff, &p->err);
      p->iBufOff += n;
      return;
    }
    nCopy = SEG_BUFSIZE - p->nBuf;
    if (nCopy > n) nCopy = n;
    if (a) {
      memcpy(p->aBuf + p->nBuf, a, (size_t)nCopy);
      a += nCopy;
    } else {
      memset(p->aBuf + p->nBuf, 0, (size_t)nCopy);
    }
    p->nBuf += nCopy;
    n -= nCopy;
    if (p->nBuf == SEG_BUFSIZE) segWriterFlush(p);
  }
}

/* Returns the file offset of the next byte p will write. */
static int64_t segWriterPos(const ColvecSegWriter *p) {
  return p->iBufOff + p->nBuf;
}

/* Appends zero bytes up to the next COLVEC_SEG_ALIGN boundary. */
static void segWriterPad(ColvecSegWriter *p) {
  int64_t iPos = segWriterPos(p);
  segWriterRaw(p, NULL, segAlignUp(iPos) - iPos);
}

/* Closes (if open) and unlinks the tmp file, frees p and everything it owns. */
static void segWriterFree(ColvecSegWriter *p, int bUnlink) {
  if (p->pFile) p->pStore->xClose(p->pFile, NULL);
  if (bUnlink && p->zTmp) p->pStore->xUnlink(p->zTmp, NULL);
  colvecFree(p->zTmp);
  colvecFree(p->zFinal);
  colvecFree(p->aBuf);
  colvecFree(p->aSec);
  colvecFree(p);
}

/*
** Creates the file zTmpPath of store pStore (removing whatever has its
** name first), which must
** end in ".tmp", to
** write a segment that finish renames to zTmpPath without ".tmp".
** fingerprint goes into the header unchanged. On success *ppWriter must be
** passed to colvecSegfileWriterFinish() or colvecSegfileWriterAbort(), which
** free
** it. On error *ppWriter is NULL, pErr says why and no file is left.
*/
int colvecSegfileWriterOpen(const ColvecStore *pStore, const char *zTmpPath,
                            uint64_t fingerprint, ColvecSegWriter **ppWriter,
                            ColvecErr *pErr) {
  size_t n = strlen(zTmpPath);
  int rc = COLVEC_OK;
  ColvecSegWriter *p;

  *ppWriter = NULL;
  if (n <= 4 || strcmp(zTmpPath + n - 4, ".tmp") != 0) {
    colvecErrSet(pErr, 0, "colvec: segment temporary \"%s\" must end in .tmp",
                 zTmpPath);
    return COLVEC_RANGE;
  }
  p = (ColvecSegWriter *)colvecMallocZero(&rc, sizeof(ColvecSegWriter));
  if (p) {
    p->zTmp = (char *)colvecMallocZero(&rc, (int64_t)n + 1);
    p->zFinal = (char *)colvecMallocZero(&rc, (int64_t)n - 3);
    p->aBuf = (uint8_t *)colvecMallocZero(&rc, SEG_BUFSIZE);
  }
  if (rc != COLVEC_OK) {
    if (p) segWriterFree(p, 0);
    colvecErrSet(pErr, 0, "colvec: out of memory writing \"%s\"", zTmpPath);
    return rc;
  }
  memcpy(p->zTmp, zTmpPath, n + 1);
  memcpy(p->zFinal, zTmpPath, n - 4);
  p->fingerprint = fingerprint;
  p->pStore = pStore;
  /* a stale temporary (crash, or anything named like one) is replaced */
  pStore->xUnlink(zTmpPath, NULL);
  rc = pStore->xOpen(zTmpPath,
                     COLVEC_OPEN_READWRITE | COLVEC_OPEN_CREATE |
                         COLVEC_OPEN_EXCLUSIVE,
                     &p->pFile, pErr);
  if (rc != COLVEC_OK) {
    segWriterFree(p, 0);
    return rc;
  }
  /* The header is written by finish; bodies start after it. */
  p->iBufOff = COLVEC_SEG_HEADER_SIZE;
  *ppWriter = p;
  return COLVEC_OK;
}

/*
** Starts a new section of kind eKind (COLVEC_SEG_*), column iColumn,
** element size nElemSize (0 for byte streams) and flags (COLVEC_SEGF_*).
** Returns the writer's sticky result code; COLVEC_ERROR when a section is
** already open or there are too many sections.
*/
int colvecSegfileWriterBegin(ColvecSegWriter *p, uint32_t eKind,
                             uint32_t iColumn, uint32_t nElemSize,
                             uint32_t flags) {
  ColvecSegSection *pSec;
  if (p->rc != COLVEC_OK) return p->rc;
  if (p->bInSection) {
    segWriterError(p, COLVEC_ERROR, "section begun while another is open");
    return p->rc;
  }
  if (p->nSec >= COLVEC_SEG_MAX_SECTION) {
    segWriterError(p, COLVEC_ERROR, "more than %d sections",
                   COLVEC_SEG_MAX_SECTION);
    return p->rc;
  }
  if (p->nSec == p->nSecAlloc) {
    int nNew = p->nSecAlloc ? p->nSecAlloc * 2 : 16;
    ColvecSegSection *aNew = (ColvecSegSection *)colvecRealloc(
        p->aSec, (int64_t)nNew * (int64_t)sizeof(ColvecSegSection));
    if (aNew == NULL) {
      segWriterError(p, COLVEC_NOMEM, "out of memory");
      return p->rc;
    }
    p->aSec = aNew;
    p->nSecAlloc = nNew;
  }
  pSec = &p->aSec[p->nSec];
  memset(pSec, 0, sizeof(*pSec));
  pSec->eKind = eKind;
  pSec->iColumn = iColumn;
  pSec->nElemSize = nElemSize;
  pSec->flags = flags;
  pSec->iOffset = segWriterPos(p); /* aligned: previous End padded */
  colvecHashInit(&p->hash);
  p->bInSection = 1;
  return COLVEC_OK;
}

/*
** Appends n bytes at pData to the open section (any number of calls, any
** sizes). The bytes are copied, so pData may be reused at once. Returns the
** sticky result code; COLVEC_ERROR when no section is open.
*/
int colvecSegfileWriterAppend(ColvecSegWriter *p, const void *pData,
                              int64_t n) {
  if (p->rc != COLVEC_OK) return p->rc;
  if (!p->bInSection) {
    segWriterError(p, COLVEC_ERROR, "bytes appended outside a section");
    return p->rc;
  }
  if (n < 0 || (n > 0 && pData == NULL)) {
    segWriterError(p, COLVEC_RANGE, "bad append of %lld bytes", (long long)n);
    return p->rc;
  }
  colvecHashUpdate(&p->hash, pData, n);
  segWriterRaw(p, pData, n);
  return p->rc;
}

/*
** Closes the open section: records its length and checksum and pads the
** file with zeros to the next 64-byte boundary. Returns the sticky result
** code; COLVEC_ERROR when no section is open.
*/
int colvecSegfileWriterEnd(ColvecSegWriter *p) {
  ColvecSegSection *pSec;
  if (p->rc != COLVEC_OK) return p->rc;
  if (!p->bInSection) {
    segWriterError(p, COLVEC_ERROR, "section ended but none is open");
    return p->rc;
  }
  pSec = &p->aSec[p->nSec];
  pSec->nByte = segWriterPos(p) - pSec->iOffset;
  pSec->cksum = colvecHashFinal(&p->hash);
  p->nSec++;
  p->bInSection = 0;
  segWriterPad(p);
  return p->rc;
}

/*
** Completes the segment for nRow rows: checks every section against the
** format's rules, writes the section table and the header, fsyncs and
** closes the file, renames it from .tmp to its final name (which must not
** exist: a file there is never replaced, COLVEC_IOERR with errno EEXIST)
** and fsyncs the folder. Always frees p. On error (including an earlier
** sticky error of p) the .tmp file is removed, pErr gets the message and
** the code is returned; nothing is left under the final name unless it
** was there before.
*/
int colvecSegfileWriterFinish(ColvecSegWriter *p, uint64_t nRow,
                              ColvecErr *pErr) {
  uint8_t aHdr[COLVEC_SEG_HEADER_SIZE];
  uint8_t *aTable = NULL;
  int64_t iTable = 0, nTable = 0;
  int i, rc;
  char zWhy[256];
  ColvecHash hash;

  if (p->rc == COLVEC_OK && p->bInSection) {
    segWriterError(p, COLVEC_ERROR, "finished with a section still open");
  }
  if (p->rc == COLVEC_OK && nRow > SEG_MAX_ROWS) {
    segWriterError(p, COLVEC_RANGE, "row count %llu too large",
                   (unsigned long long)nRow);
  }
  if (p->rc == COLVEC_OK) {
    iTable = segWriterPos(p);
    nTable = (int64_t)p->nSec * COLVEC_SEG_ENTRY_SIZE;
    for (i = 0; i < p->nSec && p->rc == COLVEC_OK; i++) {
      if (segCheckSection(p->aSec, i, nRow, COLVEC_SEG_HEADER_SIZE, iTable,
                          zWhy, sizeof(zWhy))) {
        segWriterError(p, COLVEC_ERROR, "%s", zWhy);
      }
    }
  }
  if (p->rc == COLVEC_OK && nTable > 0) {
    aTable = (uint8_t *)colvecMalloc(nTable);
    if (aTable == NULL) segWriterError(p, COLVEC_NOMEM, "out of memory");
  }
  if (p->rc == COLVEC_OK) {
    for (i = 0; i < p->nSec; i++) {
      segEncodeEntry(aTable + (int64_t)i * COLVEC_SEG_ENTRY_SIZE, &p->aSec[i]);
    }
    segWriterRaw(p, aTable, nTable);
    segWriterFlush(p);
  }
  if (p->rc == COLVEC_OK) {
    memset(aHdr, 0, sizeof(aHdr));
    memcpy(aHdr, COLVEC_SEG_MAGIC, 8);
    segPut32(aHdr + 8, COLVEC_SEG_VERSION);
    segPut32(aHdr + 12, COLVEC_SEG_HEADER_SIZE);
    segPut32(aHdr + 16, 0);
    segPut32(aHdr + 20, (uint32_t)p->nSec);
    segPut64(aHdr + 24, p->fingerprint);
    segPut64(aHdr + 32, nRow);
    segPut64(aHdr + 40, (uint64_t)iTable);
    segPut64(aHdr + 48, (uint64_t)(iTable + nTable));
    colvecHashInit(&hash);
    colvecHashUpdate(&hash, aHdr, sizeof(aHdr));
    colvecHashUpdate(&hash, aTable, nTable);
    segPut64(aHdr + SEG_CKSUM_OFFSET, colvecHashFinal(&hash));
    p->rc = p->pStore->xWrite(p->pFile, aHdr, sizeof(aHdr), 0, &p->err);
  }
  colvecFree(aTable);
  if (p->rc == COLVEC_OK) p->rc = p->pStore->xSync(p->pFile, &p->err);
  if (p->rc == COLVEC_OK) {
    p->rc = p->pStore->xClose(p->pFile, &p->err);
    p->pFile = NULL;
  }
  /* never over an existing file: a damaged database must not make colvec
  ** replace a segment */
  if (p->rc == COLVEC_OK)
    p->rc = p->pStore->xRenameNew(p->zTmp, p->zFinal, &p->err);
  if (p->rc == COLVEC_OK) {
    p->rc = p->pStore->xSyncParent(p->zFinal, &p->err);
    /* Renamed but not durable: remove it rather than leave a doubt. */
    if (p->rc != COLVEC_OK) p->pStore->xUnlink(p->zFinal, NULL);
  }
  rc = p->rc;
  if (rc != COLVEC_OK && pErr) *pErr = p->err;
  segWriterFree(p, rc != COLVEC_OK);
  return rc;
}

/* Abandons the segment: closes and removes the .tmp file, frees p. */
void colvecSegfileWriterAbort(ColvecSegWriter *p) {
  if (p) segWriterFree(p, 1);
}

/* Returns the message of p's sticky error ("" when there is none). */
const char *colvecSegfileWriterErrmsg(ColvecSegWriter *p) {
  return p->err.zMsg;
}

/* Returns the errno of p's sticky error (0 when none, or not from the OS). */
int colvecSegfileWriterErrno(ColvecSegWriter *p) { return p->err.iErrno; }

/*************************************************************************
** Reader.
*/

/*
** Segments that colvecSegfileOpen was asked to map but read with pread, because
** the mapping did not fit in the address space (see colvecSegfileAccess).
*/
static int segMapFallbacks = 0;

/* An open segment (see colvecSegfileOpen). */
struct ColvecSeg {
  const ColvecStore *pStore; /* where the file lives */
  char *zPath;               /* path, for messages (owned) */
  int eAccess;               /* COLVEC_SEG_MMAP or COLVEC_SEG_FILE */
  ColvecFile *pFile;         /* open file (FILE mode only) */
  ColvecMap *pMap;           /* mapping of the whole file (MMAP mode only) */
  uint32_t iVersion;         /* format version from the header */
  uint64_t fingerprint;      /* schema fingerprint from the header */
  uint64_t nRow;             /* row count */
  uint64_t cksum;            /* header checksum */
  int64_t nFile;             /* file size */
  int64_t iTable;            /* offset of the section table */
  int nSec;                  /* number of sections */
  ColvecSegSection *aSec;    /* decoded section table */
  ColvecFileId id;           /* the file's identity when it was opened */
};

/*
** Formats "colvec: segment "<path>" is corrupt: <reason>" into pErr and
** returns COLVEC_CORRUPT.
*/
static int segCorrupt(ColvecErr *pErr, const char *zPath, const char *zFmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int segCorrupt(ColvecErr *pErr, const char *zPath, const char *zFmt,
                      ...) {
  char zWhy[256];
  va_list ap;
  va_start(ap, zFmt);
  vsnprintf(zWhy, sizeof(zWhy), zFmt, ap);
  va_end(ap);
  colvecErrSet(pErr, 0, "colvec: segment \"%s\" is corrupt: %s", zPath, zWhy);
  return COLVEC_CORRUPT;
}

/*
** Reads and checks the header and section table of p->pFile (size nFile)
** and fills p's header fields and aSec. Returns COLVEC_OK, COLVEC_CORRUPT,
** COLVEC_ERROR (unknown version), COLVEC_IOERR or COLVEC_NOMEM.
*/
static int segLoadHeader(ColvecSeg *p, int64_t nFile, ColvecErr *pErr) {
  uint8_t aPre[SEG_PREAMBLE];
  uint8_t *aHdr = NULL, *aTable = NULL;
  uint32_t nHdr, nSec, flags;
  uint64_t nFileHdr, iTable, cksum;
  int64_t nTable;
  int rc, i;
  char zWhy[256];
  ColvecHash hash;

  /* Frozen preamble: magic, header size, file size, table bounds. */
  if (nFile < SEG_PREAMBLE) {
    return segCorrupt(pErr, p->zPath,
                      "file is %lld bytes, too short for a header (truncated?)",
                      (long long)nFile);
  }
  rc = p->pStore->xRead(p->pFile, aPre, SEG_PREAMBLE, 0, pErr);
  if (rc != COLVEC_OK) return rc;
  if (memcmp(aPre, COLVEC_SEG_MAGIC, 8) != 0) {
    return segCorrupt(pErr, p->zPath, "bad magic (not a colvec segment)");
  }
  nHdr = segGet32(aPre + 12);
  nSec = segGet32(aPre + 20);
  iTable = segGet64(aPre + 40);
  nFileHdr = segGet64(aPre + 48);
  cksum = segGet64(aPre + SEG_CKSUM_OFFSET);
  if (nFileHdr != (uint64_t)nFile) {
    return segCorrupt(pErr, p->zPath,
                      "header says %llu bytes but the file has %lld "
                      "(truncated or extended)",
                      (unsigned long long)nFileHdr, (long long)nFile);
  }
  if (nHdr < SEG_PREAMBLE || nHdr > 65536 || nHdr % 8 != 0 ||
      (int64_t)nHdr > nFile) {
    return segCorrupt(pErr, p->zPath, "bad header size %u", nHdr);
  }
  if (iTable < nHdr || iTable > nFileHdr ||
      (int64_t)(nFileHdr - iTable) > SEG_MAX_TABLE) {
    return segCorrupt(pErr, p->zPath, "section table offset %llu out of bounds",
                      (unsigned long long)iTable);
  }
  nTable = (int64_t)(nFileHdr - iTable);

  /* Checksum over header (checksum field zeroed) + table. */
  aHdr = (uint8_t *)colvecMalloc(nHdr);
  if (nTable > 0) aTable = (uint8_t *)colvecMalloc(nTable);
  if (aHdr == NULL || (nTable > 0 && aTable == NULL)) {
    colvecErrSet(pErr, 0, "colvec: out of memory opening \"%s\"", p->zPath);
    rc = COLVEC_NOMEM;
    goto out;
  }
  rc = p->pStore->xRead(p->pFile, aHdr, nHdr, 0, pErr);
  if (rc == COLVEC_OK) {
    rc = p->pStore->xRead(p->pFile, aTable, nTable, (int64_t)iTable, pErr);
  }
  if (rc != COLVEC_OK) goto out;
  memset(aHdr + SEG_CKSUM_OFFSET, 0, 8);
  colvecHashInit(&hash);
  colvecHashUpdate(&hash, aHdr, nHdr);
  colvecHashUpdate(&hash, aTable, nTable);
  if (colvecHashFinal(&hash) != cksum) {
    rc = segCorrupt(pErr, p->zPath, "header checksum mismatch");
    goto out;
  }

  /* The file is intact; now it must be a version this build reads. */
  p->iVersion = segGet32(aHdr + 8);
  if (p->iVersion != COLVEC_SEG_VERSION) {
    colvecErrSet(pErr, 0,
                 "colvec: segment \"%s\" has format version %u, but this "
                 "build of colvec reads version %d: upgrade colvec",
                 p->zPath, p->iVersion, COLVEC_SEG_VERSION);
    rc = COLVEC_ERROR;
    goto out;
  }

  /* Version 1 rules. */
  flags = segGet32(aHdr + 16);
  p->fingerprint = segGet64(aHdr + 24);
  p->nRow = segGet64(aHdr + 32);
  p->cksum = cksum;
  p->nFile = nFile;
  p->iTable = (int64_t)iTable;
  if (nHdr != COLVEC_SEG_HEADER_SIZE) {
    rc = segCorrupt(pErr, p->zPath, "header size %u, expected %d", nHdr,
                    COLVEC_SEG_HEADER_SIZE);
  } else if (flags != 0) {
    rc = segCorrupt(pErr, p->zPath, "unknown header flags 0x%x", flags);
  } else if (iTable % COLVEC_SEG_ALIGN != 0) {
    rc = segCorrupt(pErr, p->zPath, "section table offset %llu unaligned",
                    (unsigned long long)iTable);
  } else if (nSec > COLVEC_SEG_MAX_SECTION ||
             (int64_t)nSec * COLVEC_SEG_ENTRY_SIZE != nTable) {
    rc = segCorrupt(pErr, p->zPath,
                    "%u sections do not fill the %lld-byte section table", nSec,
                    (long long)nTable);
  } else if (p->nRow > SEG_MAX_ROWS) {
    rc = segCorrupt(pErr, p->zPath, "row count %llu too large",
                    (unsigned long long)p->nRow);
  }
  if (rc != COLVEC_OK) goto out;

  if (nSec > 0) {
    p->aSec = (ColvecSegSection *)colvecMallocZero(
        &rc, (int64_t)nSec * (int64_t)sizeof(ColvecSegSection));
    if (rc != COLVEC_OK) {
      colvecErrSet(pErr, 0, "colvec: out of memory opening \"%s\"", p->zPath);
      goto out;
    }
  }
  for (i = 0; i < (int)nSec; i++) {
    const uint8_t *a = aTable + (int64_t)i * COLVEC_SEG_ENTRY_SIZE;
    ColvecSegSection *pSec = &p->aSec[i];
    uint64_t iOff = segGet64(a + 16), nByte = segGet64(a + 24);
    if (iOff > (uint64_t)INT64_MAX || nByte > (uint64_t)INT64_MAX) {
      rc = segCorrupt(pErr, p->zPath, "section %d has offset %llu length %llu",
                      i, (unsigned long long)iOff, (unsigned long long)nByte);
      goto out;
    }
    pSec->eKind = segGet32(a);
    pSec->iColumn = segGet32(a + 4);
    pSec->nElemSize = segGet32(a + 8);
    pSec->flags = segGet32(a + 12);
    pSec->iOffset = (int64_t)iOff;
    pSec->nByte = (int64_t)nByte;
    pSec->cksum = segGet64(a + 32);
    if (segCheckSection(p->aSec, i, p->nRow, COLVEC_SEG_HEADER_SIZE, p->iTable,
                        zWhy, sizeof(zWhy))) {
      rc = segCorrupt(pErr, p->zPath, "%s", zWhy);
      goto out;
    }
  }
  p->nSec = (int)nSec;

out:
  colvecFree(aHdr);
  colvecFree(aTable);
  return rc;
}

/*
** Opens the segment zPath of store pStore for reading with access mode eAccess
** (COLVEC_SEG_MMAP: the file is mapped with prefault policy ePrefault and
** its descriptor closed; COLVEC_SEG_FILE: kept open for pread, ePrefault
** ignored). Checks magic, header checksum, version, sizes and the section
** table (not the section checksums: see colvecSegfileVerify). On success
** *ppSeg is released with colvecSegfileClose(). On error *ppSeg is NULL and
** pErr names the file: COLVEC_CORRUPT, COLVEC_ERROR (format version
** unknown), COLVEC_IOERR, COLVEC_NOMEM or COLVEC_RANGE (bad eAccess).
*/
int colvecSegfileOpen(const ColvecStore *pStore, const char *zPath, int eAccess,
                      int ePrefault, ColvecSeg **ppSeg, ColvecErr *pErr) {
  ColvecSeg *p;
  int rc = COLVEC_OK;
  int64_t nFile = 0;
  size_t n = strlen(zPath);

  *ppSeg = NULL;
  if (eAccess != COLVEC_SEG_MMAP && eAccess != COLVEC_SEG_FILE) {
    colvecErrSet(pErr, 0, "colvec: bad access mode %d for \"%s\"", eAccess,
                 zPath);
    return COLVEC_RANGE;
  }
  p = (ColvecSeg *)colvecMallocZero(&rc, sizeof(ColvecSeg));
  if (p) p->zPath = (char *)colvecMallocZero(&rc, (int64_t)n + 1);
  if (rc != COLVEC_OK) {
    colvecFree(p);
    colvecErrSet(pErr, 0, "colvec: out of memory opening \"%s\"", zPath);
    return rc;
  }
  memcpy(p->zPath, zPath, n + 1);
  p->eAccess = eAccess;
  p->pStore = pStore;
  rc = pStore->xOpen(zPath, COLVEC_OPEN_READONLY, &p->pFile, pErr);
  if (rc == COLVEC_OK) rc = pStore->xFileStat(p->pFile, &nFile, &p->id, pErr);
  if (rc == COLVEC_OK) rc = segLoadHeader(p, nFile, pErr);
  if (rc == COLVEC_OK && eAccess == COLVEC_SEG_MMAP) {
    ColvecErr errMap;
    errMap.zMsg[0] = 0;
    errMap.iErrno = 0;
    rc = pStore->xMapOpen(p->pFile, nFile, ePrefault, &p->pMap, &errMap);
    if (rc == COLVEC_OK) {
      /* the mapping outlives the descriptor; a failing close() of a file
      ** only read cannot lose data, so it does not fail the open */
      p->pStore->xClose(p->pFile, NULL);
      p->pFile = NULL;
    } else if (rc == COLVEC_IOERR && errMap.iErrno == ENOMEM) {
      /* no room in the address space: read this segment with pread */
      p->eAccess = COLVEC_SEG_FILE;
      p->pMap = NULL;
      rc = COLVEC_OK;
      /* a diagnostic count: two racing opens may count once */
      COLVEC_ATOMIC_SET_INT(&segMapFallbacks,
                            COLVEC_ATOMIC_GET_INT(&segMapFallbacks) + 1);
    } else if (pErr) {
      *pErr = errMap;
    }
  }
  if (rc != COLVEC_OK) {
    colvecSegfileClose(p);
    return rc;
  }
  *ppSeg = p;
  return COLVEC_OK;
}

/* The access mode pSeg was opened in (see colvec_segfile.h). */
int colvecSegfileAccess(const ColvecSeg *pSeg) { return pSeg->eAccess; }

/* Segments opened with pread because mapping them was refused (ENOMEM). */
int colvecSegfileMapFallbacks(void) {
  return COLVEC_ATOMIC_GET_INT(&segMapFallbacks);
}

/* Closes pSeg (NULL is a no-op): unmaps, closes the file, frees. */
void colvecSegfileClose(ColvecSeg *pSeg) {
  if (pSeg == NULL) return;
  pSeg->pStore->xMapClose(pSeg->pMap);
  pSeg->pStore->xClose(pSeg->pFile, NULL);
  colvecFree(pSeg->aSec);
  colvecFree(pSeg->zPath);
  colvecFree(pSeg);
}

/* Returns the number of rows N of the segment. */
uint64_t colvecSegfileRowCount(const ColvecSeg *pSeg) { return pSeg->nRow; }

/* Returns the schema fingerprint the writer was given. */
uint64_t colvecSegfileFingerprint(const ColvecSeg *pSeg) {
  return pSeg->fingerprint;
}

/* Returns the format version from the header (COLVEC_SEG_VERSION). */
uint32_t colvecSegfileVersion(const ColvecSeg *pSeg) { return pSeg->iVersion; }

/* Returns the file size in bytes (checked equal to the header's). */
int64_t colvecSegfileFileSize(const ColvecSeg *pSeg) { return pSeg->nFile; }

/* Returns the checksum of the header and section table. */
/* The identity of the file of pSeg when it was opened; see the header. */
const ColvecFileId *colvecSegfileFileId(const ColvecSeg *pSeg) {
  return &pSeg->id;
}

uint64_t colvecSegfileHeaderChecksum(const ColvecSeg *pSeg) {
  return pSeg->cksum;
}

/* Returns the file offset of the section table. */
int64_t colvecSegfileTableOffset(const ColvecSeg *pSeg) { return pSeg->iTable; }

/* Returns the number of sections. */
int colvecSegfileSectionCount(const ColvecSeg *pSeg) { return pSeg->nSec; }

/* Returns section i (in file order), or NULL when i is out of range. */
const ColvecSegSection *colvecSegfileSection(const ColvecSeg *pSeg, int i) {
  if (i < 0 || i >= pSeg->nSec) return NULL;
  return &pSeg->aSec[i];
}

/* Returns the section (eKind, iColumn), or NULL when there is none. */
const ColvecSegSection *colvecSegfileFind(const ColvecSeg *pSeg, uint32_t eKind,
                                          uint32_t iColumn) {
  int i;
  for (i = 0; i < pSeg->nSec; i++) {
    if (pSeg->aSec[i].eKind == eKind && pSeg->aSec[i].iColumn == iColumn) {
      return &pSeg->aSec[i];
    }
  }
  return NULL;
}

/*
** In MMAP mode, returns a pointer to the first byte of section pSec in the
** mapping (64-byte aligned; valid until colvecSegfileClose). In FILE mode
** returns NULL: use colvecSegfileRead.
*/
const void *colvecSegfileData(const ColvecSeg *pSeg,
                              const ColvecSegSection *pSec) {
  if (pSeg->pMap == NULL || pSeg->pMap->a == NULL) return NULL;
  return pSeg->pMap->a + pSec->iOffset;
}

/*
** Copies n bytes starting iOff bytes into section pSec to pBuf, in either
** access mode. COLVEC_RANGE (with a message) when [iOff, iOff+n) is not
** inside the section; COLVEC_IOERR when a FILE-mode read fails.
*/
int colvecSegfileRead(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                      int64_t iOff, void *pBuf, int64_t n, ColvecErr *pErr) {
  if (iOff < 0 || n < 0 || iOff > pSec->nByte || n > pSec->nByte - iOff) {
    colvecErrSet(pErr, 0,
                 "colvec: read of %lld bytes at %lld outside %s section "
                 "of \"%s\"",
                 (long long)n, (long long)iOff,
                 colvecSegfileKindName(pSec->eKind), pSeg->zPath);
    return COLVEC_RANGE;
  }
  if (n == 0) return COLVEC_OK;
  if (pSeg->pMap) {
    memcpy(pBuf, pSeg->pMap->a + pSec->iOffset + iOff, (size_t)n);
    return COLVEC_OK;
  }
  return pSeg->pStore->xRead(pSeg->pFile, pBuf, n, pSec->iOffset + iOff, pErr);
}

/*
** Copies element iElem (nElemSize bytes) of the fixed-width section pSec to
** pBuf. COLVEC_RANGE when the section has no element size or iElem is out
** of range.
*/
int colvecSegfileReadElem(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                          int64_t iElem, void *pBuf, ColvecErr *pErr) {
  int64_t nElem;
  if (pSec->nElemSize == 0) {
    colvecErrSet(pErr, 0, "colvec: %s section has no element size",
                 colvecSegfileKindName(pSec->eKind));
    return COLVEC_RANGE;
  }
  nElem = pSec->nByte / pSec->nElemSize;
  if (iElem < 0 || iElem >= nElem) {
    colvecErrSet(pErr, 0, "colvec: element %lld outside %s section (%lld)",
                 (long long)iElem, colvecSegfileKindName(pSec->eKind),
                 (long long)nElem);
    return COLVEC_RANGE;
  }
  return colvecSegfileRead(pSeg, pSec, iElem * pSec->nElemSize, pBuf,
                           pSec->nElemSize, pErr);
}

/*
** Reads element iElem of an 8-byte section (ROWIDS, ATTR_FIXED,
** ATTR_VAROFFSETS) as a little-endian int64 into *pVal.
*/
int colvecSegfileReadInt64(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                           int64_t iElem, int64_t *pVal, ColvecErr *pErr) {
  uint8_t a[8];
  int rc;
  *pVal = 0;
  if (pSec->nElemSize != 8) {
    colvecErrSet(pErr, 0, "colvec: %s section is not 8 bytes wide",
                 colvecSegfileKindName(pSec->eKind));
    return COLVEC_RANGE;
  }
  rc = colvecSegfileReadElem(pSeg, pSec, iElem, a, pErr);
  if (rc == COLVEC_OK) *pVal = (int64_t)segGet64(a);
  return rc;
}

/* Reads element iElem of an 8-byte section as a little-endian double. */
int colvecSegfileReadDouble(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                            int64_t iElem, double *pVal, ColvecErr *pErr) {
  int64_t v;
  int rc = colvecSegfileReadInt64(pSeg, pSec, iElem, &v, pErr);
  memcpy(pVal, &v, sizeof(*pVal));
  return rc;
}

/*
** Gives advice eAdvice (COLVEC_ADVICE_*) for bytes [iOff, iOff+n) of
** section pSec (clipped to it). A no-op returning COLVEC_OK in FILE mode.
** Never allocates; meant for per-candidate WILLNEED while rescoring.
*/
int colvecSegfileAdvise(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                        int64_t iOff, int64_t n, int eAdvice) {
  if (pSeg->pMap == NULL || iOff < 0 || iOff >= pSec->nByte) return COLVEC_OK;
  if (n > pSec->nByte - iOff) n = pSec->nByte - iOff;
  return pSeg->pStore->xMapAdvise(pSeg->pMap, pSec->iOffset + iOff, n, eAdvice,
                                  NULL);
}

/*
** Calls xChunk(pCtx, a, n) for consecutive pieces of section pSec in order
** (each piece a multiple of 8 bytes long except possibly the last), in
** either access mode. FILE mode reads into one buffer allocated here. A
** non-zero return from xChunk stops the scan and is returned.
*/
int colvecSegfileScan(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                      int (*xChunk)(void *pCtx, const uint8_t *a, int64_t n),
                      void *pCtx, ColvecErr *pErr) {
  uint8_t *aBuf = NULL;
  int64_t iOff = 0;
  int rc = COLVEC_OK;
  if (pSeg->pMap == NULL && pSec->nByte > 0) {
    aBuf = (uint8_t *)colvecMalloc(SEG_BUFSIZE);
    if (aBuf == NULL) {
      colvecErrSet(pErr, 0, "colvec: out of memory reading \"%s\"",
                   pSeg->zPath);
      return COLVEC_NOMEM;
    }
  }
  while (rc == COLVEC_OK && iOff < pSec->nByte) {
    int64_t n = pSec->nByte - iOff;
    if (n > SEG_BUFSIZE) n = SEG_BUFSIZE;
    if (pSeg->pMap) {
      rc = xChunk(pCtx, pSeg->pMap->a + pSec->iOffset + iOff, n);
    } else {
      rc =
          pSeg->pStore->xRead(pSeg->pFile, aBuf, n, pSec->iOffset + iOff, pErr);
      if (rc == COLVEC_OK) rc = xChunk(pCtx, aBuf, n);
    }
    iOff += n;
  }
  colvecFree(aBuf);
  return rc;
}

/* State of the content checks of colvecSegfileVerify for one section. */
typedef struct SegCheck SegCheck;
struct SegCheck {
  ColvecHash hash;  /* checksum of the bytes seen so far */
  int bOrdered;     /* check int64 values: ROWIDS strictly, else >= */
  int bStrict;      /* 1: strictly ascending (ROWIDS) */
  int bFirst;       /* no value seen yet */
  int bBad;         /* an order violation was seen */
  int64_t iBadElem; /* index of the first violating element */
  int64_t iElem;    /* index of the next element */
  int64_t iFirst;   /* first value seen */
  int64_t iLast;    /* last value seen */
  const ColvecInterrupt *pInt; /* asked before each chunk, or NULL */
};

/*
** colvecSegfileScan callback of colvecSegfileVerify: hashes and checks order.
** Returns COLVEC_INTERRUPT (stopping the scan) when the hook says stop.
*/
static int segCheckChunk(void *pCtx, const uint8_t *a, int64_t n) {
  SegCheck *p = (SegCheck *)pCtx;
  int64_t i;
  if (COLVEC_INTERRUPTED(p->pInt)) return COLVEC_INTERRUPT;
  colvecHashUpdate(&p->hash, a, n);
  if (!p->bOrdered) return COLVEC_OK;
  for (i = 0; i + 8 <= n; i += 8, p->iElem++) {
    int64_t v = (int64_t)segGet64(a + i);
    if (p->bFirst) {
      p->iFirst = v;
      p->bFirst = 0;
    } else if (!p->bBad && (v < p->iLast || (p->bStrict && v == p->iLast))) {
      p->bBad = 1;
      p->iBadElem = p->iElem;
    }
    p->iLast = v;
  }
  return COLVEC_OK;
}

/*
** Integrity check: recomputes every section checksum, and checks that
** ROWIDS are strictly ascending and that each ATTR_VAROFFSETS section
** starts at 0, never decreases and ends at the length of the ATTR_VARBYTES
** section of the same column. Reads the whole file. Returns COLVEC_OK,
** COLVEC_CORRUPT with a message naming the file and section, or an I/O or
** memory error.
*/
int colvecSegfileVerify(ColvecSeg *pSeg, ColvecErr *pErr) {
  return colvecSegfileVerifyWith(pSeg, NULL, pErr);
}

/* colvecSegfileVerify with an interrupt hook; see colvec_segfile.h. */
int colvecSegfileVerifyWith(ColvecSeg *pSeg, const ColvecInterrupt *pInt,
                            ColvecErr *pErr) {
  int i, rc = COLVEC_OK;
  for (i = 0; i < pSeg->nSec && rc == COLVEC_OK; i++) {
    const ColvecSegSection *pSec = &pSeg->aSec[i];
    const char *zKind = colvecSegfileKindName(pSec->eKind);
    SegCheck chk;
    memset(&chk, 0, sizeof(chk));
    colvecHashInit(&chk.hash);
    chk.bFirst = 1;
    chk.pInt = pInt;
    chk.bOrdered = pSec->eKind == COLVEC_SEG_ROWIDS ||
                   pSec->eKind == COLVEC_SEG_ATTR_VAROFFSETS;
    chk.bStrict = pSec->eKind == COLVEC_SEG_ROWIDS;
    rc = colvecSegfileScan(pSeg, pSec, segCheckChunk, &chk, pErr);
    if (rc != COLVEC_OK) break;
    if (colvecHashFinal(&chk.hash) != pSec->cksum) {
      rc = segCorrupt(pErr, pSeg->zPath,
                      "section %d (%s column %u) checksum mismatch", i, zKind,
                      pSec->iColumn);
    } else if (chk.bBad) {
      rc = segCorrupt(pErr, pSeg->zPath,
                      "section %d (%s column %u) out of order at element %lld",
                      i, zKind, pSec->iColumn, (long long)chk.iBadElem);
    } else if (pSec->eKind == COLVEC_SEG_ATTR_VAROFFSETS) {
      const ColvecSegSection *pBytes =
          colvecSegfileFind(pSeg, COLVEC_SEG_ATTR_VARBYTES, pSec->iColumn);
      if (pBytes == NULL) {
        rc = segCorrupt(pErr, pSeg->zPath,
                        "column %u has offsets but no ATTR_VARBYTES section",
                        pSec->iColumn);
      } else if (chk.iFirst != 0 || chk.iLast != pBytes->nByte) {
        rc = segCorrupt(pErr, pSeg->zPath,
                        "column %u offsets span [%lld, %lld], expected "
                        "[0, %lld]",
                        pSec->iColumn, (long long)chk.iFirst,
                        (long long)chk.iLast, (long long)pBytes->nByte);
      }
    }
  }
  return rc;
}

/*************************************************************************
** Copy (online backup).
*/

/* Bytes colvecSegfileCopyTo moves per read and write. */
#define SEG_COPY_CHUNK (1024 * 1024)

/*
** Copies the whole file of open segment pSeg (its nFile bytes, read from
** the mapping or with pread, so a file unlinked since it was opened is
** still copied) to a new file zTmpPath, which must end in ".tmp" and must
** not exist; fsyncs it and renames it to zTmpPath without ".tmp". The
** caller fsyncs the folder. Asks hook pInt (NULL: none) before each
** megabyte. Returns COLVEC_OK, or an error with pErr set and nothing left
** at either name.
*/
int colvecSegfileCopyTo(ColvecSeg *pSeg, const ColvecStore *pTo,
                        const char *zTmpPath, const ColvecInterrupt *pInt,
                        ColvecErr *pErr) {
  size_t n = strlen(zTmpPath);
  ColvecFile *pOut = NULL;
  uint8_t *aBuf = NULL;
  char *zFinal = NULL;
  int64_t iOff = 0;
  int rc = COLVEC_OK;

  if (n <= 4 || strcmp(zTmpPath + n - 4, ".tmp") != 0) {
    colvecErrSet(pErr, 0, "colvec: segment temporary \"%s\" must end in .tmp",
                 zTmpPath);
    return COLVEC_RANGE;
  }
  zFinal = (char *)colvecMallocZero(&rc, (int64_t)n - 3);
  if (pSeg->pMap == NULL)
    aBuf = (uint8_t *)colvecMallocZero(&rc, SEG_COPY_CHUNK);
  if (rc != COLVEC_OK) {
    colvecFree(zFinal);
    colvecErrSet(pErr, 0, "colvec: out of memory copying \"%s\"", pSeg->zPath);
    return rc;
  }
  memcpy(zFinal, zTmpPath, n - 4);
  rc = pTo->xOpen(zTmpPath,
                  COLVEC_OPEN_READWRITE | COLVEC_OPEN_CREATE |
                      COLVEC_OPEN_EXCLUSIVE,
                  &pOut, pErr);
  while (rc == COLVEC_OK && iOff < pSeg->nFile) {
    int64_t nChunk = pSeg->nFile - iOff;
    const uint8_t *a;
    if (nChunk > SEG_COPY_CHUNK) nChunk = SEG_COPY_CHUNK;
    if (COLVEC_INTERRUPTED(pInt)) {
      colvecErrSet(pErr, 0, "colvec: interrupted");
      rc = COLVEC_INTERRUPT;
      break;
    }
    if (pSeg->pMap) {
      a = pSeg->pMap->a + iOff;
    } else {
      rc = pSeg->pStore->xRead(pSeg->pFile, aBuf, nChunk, iOff, pErr);
      a = aBuf;
    }
    if (rc == COLVEC_OK) rc = pTo->xWrite(pOut, a, nChunk, iOff, pErr);
    iOff += nChunk;
  }
  if (rc == COLVEC_OK) rc = pTo->xSync(pOut, pErr);
  if (pOut) {
    int rc2 = pTo->xClose(pOut, rc == COLVEC_OK ? pErr : NULL);
    if (rc == COLVEC_OK) rc = rc2;
  }
  if (rc == COLVEC_OK) rc = pTo->xRename(zTmpPath, zFinal, pErr);
  /* pOut was set only when this call created the temporary */
  if (rc != COLVEC_OK && pOut) pTo->xUnlink(zTmpPath, NULL);
  colvecFree(zFinal);
  colvecFree(aBuf);
  return rc;
}
