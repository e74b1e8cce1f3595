/*
** check_segment.c — Check suite for the file layer (colvec_os.c) and
** colvec_segfile.c.
**
** Writes small segments under a private temporary folder
** (test/lib/testdir.h) and checks:
** checksum values against the reference XXH64 (xxhsum -H1), round trips in
** both access modes, byte-identical output for the same input, 64-byte
** alignment, that every truncation and every header/table bit flip gives
** COLVEC_CORRUPT, that body flips are caught by verify, that an unknown
** version is reported as such, tmp/rename/abort file hygiene, the OS
** helpers, and out-of-memory paths.
*/
#include "colvec_core.h"
#include "colvec_os.h"
#include "colvec_segfile.h"
#include "../lib/testdir.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <io.h>
#else
#include <fcntl.h>
#include <unistd.h>
#endif

/* Rows in the sample segment; not a multiple of 8 on purpose. */
#define T_NROW 61
/* Dimensions of the sample vectors (28-byte stride: forces padding). */
#define T_DIM 7
/* Bytes of the sample GRAPH section. */
#define T_NGRAPH 333

/* The private folder of the running test, from testTempDir(). */
static char tDir[512];

/* Sample data of one segment (filled by tFill). */
typedef struct TData TData;
struct TData {
  int64_t aRowid[T_NROW];          /* strictly ascending rowids */
  int64_t aInt[T_NROW];            /* ATTR_FIXED column 1 */
  double aReal[T_NROW];            /* ATTR_FIXED column 2 (REAL) */
  int64_t aOff[T_NROW + 1];        /* ATTR_VAROFFSETS column 3 */
  uint8_t aBytes[T_NROW * 5];      /* ATTR_VARBYTES column 3 */
  int64_t nBytes;                  /* bytes used in aBytes */
  uint8_t aNull[(T_NROW + 7) / 8]; /* NULLBITMAP column 3 */
  float aVec[T_NROW * T_DIM];      /* VECTORS column 4 */
  uint8_t aCode[T_NROW];           /* CODES column 4, stride 1 */
  uint8_t aGraph[T_NGRAPH];        /* GRAPH column 4 */
};

/* Returns the next value of a 64-bit LCG (deterministic test data). */
static uint64_t tRand(uint64_t *pState) {
  *pState = *pState * 6364136223846793005ULL + 1442695040888963407ULL;
  return *pState >> 17;
}

/* Fills p with deterministic sample data derived from iSeed. */
static void tFill(TData *p, uint64_t iSeed) {
  int i, j;
  uint64_t s = iSeed;
  int64_t r = -1000;
  memset(p, 0, sizeof(*p));
  for (i = 0; i < T_NROW; i++) {
    r += 1 + (int64_t)(tRand(&s) % 50);
    p->aRowid[i] = r;
    p->aInt[i] = (int64_t)(tRand(&s) % 100000) - 50000;
    p->aReal[i] = (double)(tRand(&s) % 1000) / 8.0 - 40.0;
    p->aOff[i] = p->nBytes;
    for (j = 0; j < (int)(tRand(&s) % 5); j++) {
      p->aBytes[p->nBytes++] = (uint8_t)('a' + tRand(&s) % 26);
    }
    if (tRand(&s) % 4 == 0) p->aNull[i / 8] |= (uint8_t)(1u << (i % 8));
    for (j = 0; j < T_DIM; j++) {
      p->aVec[i * T_DIM + j] = (float)(tRand(&s) % 2000) / 1000.0f - 1.0f;
    }
    p->aCode[i] = (uint8_t)tRand(&s);
  }
  p->aOff[T_NROW] = p->nBytes;
  for (i = 0; i < T_NGRAPH; i++)
    p->aGraph[i] = (uint8_t)tRand(&s);
}

/*
** Appends n bytes at pData to the writer in pieces of varying size (chunk
** pattern chosen by iChunk, 0 = one call) so the streaming checksum and
** buffering are exercised. Returns the writer's result code.
*/
static int tAppend(ColvecSegWriter *w, const void *pData, int64_t n,
                   int iChunk) {
  const uint8_t *a = (const uint8_t *)pData;
  int rc = COLVEC_OK;
  int64_t k = 0;
  while (rc == COLVEC_OK && n > 0) {
    int64_t nPiece = iChunk == 0 ? n : 1 + (k * 7 + iChunk) % 45;
    if (nPiece > n) nPiece = n;
    rc = colvecSegfileWriterAppend(w, a, nPiece);
    a += nPiece;
    n -= nPiece;
    k++;
  }
  return rc;
}

/* Writes one section (Begin, chunked Append, End). */
static int tSection(ColvecSegWriter *w, uint32_t eKind, uint32_t iCol,
                    uint32_t nElem, uint32_t flags, const void *p, int64_t n,
                    int iChunk) {
  int rc = colvecSegfileWriterBegin(w, eKind, iCol, nElem, flags);
  if (rc == COLVEC_OK) rc = tAppend(w, p, n, iChunk);
  if (rc == COLVEC_OK) rc = colvecSegfileWriterEnd(w);
  return rc;
}

/*
** Writes the sample segment of d to zPath (via zPath.tmp) with fingerprint
** 0x1234..., appending with chunk pattern iChunk. Returns the result of
** finish (or of the first failing step, after abort).
*/
static int tWrite(const char *zPath, const TData *d, int iChunk) {
  char zTmp[256];
  ColvecSegWriter *w = NULL;
  ColvecErr err;
  int rc;
  snprintf(zTmp, sizeof(zTmp), "%s.tmp", zPath);
  /* the writer never replaces a file: the tests rewrite on purpose */
  colvecOsUnlink(zPath, NULL);
  rc = colvecSegfileWriterOpen(&colvecStoreFile, zTmp, 0x1234567890ABCDEFULL,
                               &w, &err);
  if (rc != COLVEC_OK) return rc;
  rc = tSection(w, COLVEC_SEG_ROWIDS, 0, 8, 0, d->aRowid, sizeof(d->aRowid),
                iChunk);
  if (rc == COLVEC_OK) {
    rc = tSection(w, COLVEC_SEG_ATTR_FIXED, 1, 8, 0, d->aInt, sizeof(d->aInt),
                  iChunk);
  }
  if (rc == COLVEC_OK) {
    rc = tSection(w, COLVEC_SEG_ATTR_FIXED, 2, 8, COLVEC_SEGF_REAL, d->aReal,
                  sizeof(d->aReal), iChunk);
  }
  if (rc == COLVEC_OK) {
    rc = tSection(w, COLVEC_SEG_ATTR_VAROFFSETS, 3, 8, 0, d->aOff,
                  sizeof(d->aOff), iChunk);
  }
  if (rc == COLVEC_OK) {
    rc = tSection(w, COLVEC_SEG_ATTR_VARBYTES, 3, 0, 0, d->aBytes, d->nBytes,
                  iChunk);
  }
  if (rc == COLVEC_OK) {
    rc = tSection(w, COLVEC_SEG_NULLBITMAP, 3, 0, 0, d->aNull, sizeof(d->aNull),
                  iChunk);
  }
  if (rc == COLVEC_OK) {
    rc = tSection(w, COLVEC_SEG_VECTORS, 4, 4 * T_DIM, COLVEC_SEGF_REAL,
                  d->aVec, sizeof(d->aVec), iChunk);
  }
  if (rc == COLVEC_OK) {
    rc = tSection(w, COLVEC_SEG_CODES, 4, 1, 0, d->aCode, sizeof(d->aCode),
                  iChunk);
  }
  if (rc == COLVEC_OK) {
    rc = tSection(w, COLVEC_SEG_GRAPH, 4, 0, 0, d->aGraph, sizeof(d->aGraph),
                  iChunk);
  }
  if (rc != COLVEC_OK) {
    colvecSegfileWriterAbort(w);
    return rc;
  }
  return colvecSegfileWriterFinish(w, T_NROW, &err);
}

/* Returns a path "<tDir>/<zName>" in a static buffer (one at a time). */
static const char *tPath(const char *zName) {
  static char zBuf[4][640];
  static int i = 0;
  i = (i + 1) % 4;
  snprintf(zBuf[i], sizeof(zBuf[i]), "%s/%s", tDir, zName);
  return zBuf[i];
}

/* Reads file zPath into a malloc'd buffer (*pn bytes); caller frees. */
static uint8_t *tSlurp(const char *zPath, long *pn) {
  FILE *f = fopen(zPath, "rb");
  uint8_t *a;
  ck_assert_ptr_nonnull(f);
  fseek(f, 0, SEEK_END);
  *pn = ftell(f);
  fseek(f, 0, SEEK_SET);
  a = (uint8_t *)malloc((size_t)*pn + 1);
  ck_assert_int_eq((long)fread(a, 1, (size_t)*pn, f), *pn);
  fclose(f);
  return a;
}

/*
** Makes zPath hold exactly the n bytes at a. Writes in place and then
** truncates, rather than truncating to zero first: on ext4 a file
** truncated to zero and rewritten is flushed on close (auto_da_alloc),
** which made thousands of rewrites take seconds on a busy disk.
*/
static void tSpit(const char *zPath, const uint8_t *a, long n) {
#if defined(_WIN32)
  FILE *f = fopen(zPath, "r+b");
  if (f == NULL) f = fopen(zPath, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq((long)fwrite(a, 1, (size_t)n, f), n);
  ck_assert_int_eq(fflush(f), 0);
  ck_assert_int_eq(_chsize_s(_fileno(f), (__int64)n), 0);
  ck_assert_int_eq(fclose(f), 0);
#else
  int fd = open(zPath, O_WRONLY | O_CREAT, 0644);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq((long)pwrite(fd, a, (size_t)n, 0), n);
  ck_assert_int_eq(ftruncate(fd, (off_t)n), 0);
  close(fd);
#endif
}

/* Stores v little-endian at a. */
static void tPut32(uint8_t *a, uint32_t v) {
  int i;
  for (i = 0; i < 4; i++)
    a[i] = (uint8_t)(v >> (8 * i));
}

/*
** Recomputes the header checksum of the n-byte segment image a (after a
** test changed header or table bytes), as colvec_segfile.h defines it:
** the header with the field zeroed, then [table offset, file size).
*/
static void tReseal(uint8_t *a, long n) {
  ColvecHash hash;
  uint64_t h, iTable = 0;
  int i;
  for (i = 0; i < 8; i++)
    iTable |= (uint64_t)a[40 + i] << (8 * i);
  ck_assert_uint_le(iTable, (uint64_t)n);
  memset(a + 56, 0, 8);
  colvecHashInit(&hash);
  colvecHashUpdate(&hash, a, COLVEC_SEG_HEADER_SIZE);
  colvecHashUpdate(&hash, a + iTable, (int64_t)(n - (long)iTable));
  h = colvecHashFinal(&hash);
  for (i = 0; i < 8; i++)
    a[56 + i] = (uint8_t)(h >> (8 * i));
}

/* Opens zPath in mode eAccess and returns the rc (closing on success). */
static int tOpenRc(const char *zPath, int eAccess, ColvecErr *pErr) {
  ColvecSeg *pSeg = NULL;
  int rc = colvecSegfileOpen(&colvecStoreFile, zPath, eAccess,
                             COLVEC_PREFAULT_NONE, &pSeg, pErr);
  if (rc == COLVEC_OK) {
    ck_assert_ptr_nonnull(pSeg);
    colvecSegfileClose(pSeg);
  } else {
    ck_assert_ptr_null(pSeg);
  }
  return rc;
}

/* Creates the private folder before each test. */
static void tSetup(void) {
  colvecMemFailAfter(-1);
  ck_assert_int_eq(testTempDir(tDir, sizeof(tDir)), 0);
}

/* Removes the private folder after each test. */
static void tTeardown(void) {
  colvecMemFailAfter(-1);
  ck_assert_int_eq(colvecOsRemoveTree(tDir, NULL), COLVEC_OK);
}

/* XXH64 reference values, from `xxhsum -H1`. */
START_TEST(test_hash_reference) {
  uint8_t a[1000];
  int i, iSplit;
  for (i = 0; i < 1000; i++)
    a[i] = (uint8_t)((i * 7 + 3) & 255);
  ck_assert_uint_eq(colvecSegfileHash("", 0), 0xef46db3751d8e999ULL);
  ck_assert_uint_eq(colvecSegfileHash("a", 1), 0xd24ec4f1a98c6e5bULL);
  ck_assert_uint_eq(colvecSegfileHash("abc", 3), 0x44bc2cf5ad770999ULL);
  ck_assert_uint_eq(colvecSegfileHash(a, 32), 0x23c3c17ef790fd97ULL);
  ck_assert_uint_eq(colvecSegfileHash(a, 37), 0xe32ef63802f5a3fdULL);
  ck_assert_uint_eq(colvecSegfileHash(a, 1000), 0x5f235fa033f1a3fbULL);
  /* Any split into two or three pieces gives the same value. */
  for (iSplit = 0; iSplit <= 1000; iSplit += 13) {
    ColvecHash h;
    int iSplit2 = iSplit + (1000 - iSplit) / 3;
    colvecHashInit(&h);
    colvecHashUpdate(&h, a, iSplit);
    colvecHashUpdate(&h, a + iSplit, iSplit2 - iSplit);
    colvecHashUpdate(&h, a + iSplit2, 1000 - iSplit2);
    ck_assert_uint_eq(colvecHashFinal(&h), 0x5f235fa033f1a3fbULL);
  }
}
END_TEST

/*
** Checks that every section of the open segment holds exactly the bytes of
** d, through colvecSegfileRead, the element helpers, and (MMAP) direct
** pointers, which must be 64-byte aligned.
*/
static void tCheckContents(ColvecSeg *pSeg, const TData *d, int eAccess) {
  struct {
    uint32_t eKind, iCol;
    const void *p;
    int64_t n;
  } aWant[] = {
      {COLVEC_SEG_ROWIDS, 0, d->aRowid, sizeof(d->aRowid)},
      {COLVEC_SEG_ATTR_FIXED, 1, d->aInt, sizeof(d->aInt)},
      {COLVEC_SEG_ATTR_FIXED, 2, d->aReal, sizeof(d->aReal)},
      {COLVEC_SEG_ATTR_VAROFFSETS, 3, d->aOff, sizeof(d->aOff)},
      {COLVEC_SEG_ATTR_VARBYTES, 3, d->aBytes, d->nBytes},
      {COLVEC_SEG_NULLBITMAP, 3, d->aNull, sizeof(d->aNull)},
      {COLVEC_SEG_VECTORS, 4, d->aVec, sizeof(d->aVec)},
      {COLVEC_SEG_CODES, 4, d->aCode, sizeof(d->aCode)},
      {COLVEC_SEG_GRAPH, 4, d->aGraph, sizeof(d->aGraph)},
  };
  uint8_t aBuf[4096];
  ColvecErr err;
  int i;
  const ColvecSegSection *pSec;

  ck_assert_uint_eq(colvecSegfileRowCount(pSeg), T_NROW);
  ck_assert_uint_eq(colvecSegfileFingerprint(pSeg), 0x1234567890ABCDEFULL);
  ck_assert_int_eq(colvecSegfileSectionCount(pSeg), 9);
  for (i = 0; i < 9; i++) {
    pSec = colvecSegfileFind(pSeg, aWant[i].eKind, aWant[i].iCol);
    ck_assert_ptr_nonnull(pSec);
    ck_assert_ptr_eq(pSec, colvecSegfileSection(pSeg, i));
    ck_assert_int_eq(pSec->nByte, aWant[i].n);
    ck_assert_int_eq(pSec->iOffset % 64, 0);
    memset(aBuf, 0xAA, sizeof(aBuf));
    ck_assert_int_eq(colvecSegfileRead(pSeg, pSec, 0, aBuf, pSec->nByte, &err),
                     COLVEC_OK);
    ck_assert(memcmp(aBuf, aWant[i].p, (size_t)aWant[i].n) == 0);
    if (eAccess == COLVEC_SEG_MMAP) {
      const uint8_t *pData = (const uint8_t *)colvecSegfileData(pSeg, pSec);
      ck_assert_ptr_nonnull(pData);
      ck_assert_uint_eq((uintptr_t)pData % 64, 0);
      ck_assert(memcmp(pData, aWant[i].p, (size_t)aWant[i].n) == 0);
    } else {
      ck_assert_ptr_null(colvecSegfileData(pSeg, pSec));
    }
    /* Reads past the end of the section are refused. */
    ck_assert_int_eq(colvecSegfileRead(pSeg, pSec, 1, aBuf, pSec->nByte, &err),
                     COLVEC_RANGE);
  }
  ck_assert_ptr_null(colvecSegfileFind(pSeg, COLVEC_SEG_VECTORS, 5));
  ck_assert_ptr_null(colvecSegfileSection(pSeg, 9));

  /* Element helpers. */
  pSec = colvecSegfileFind(pSeg, COLVEC_SEG_ROWIDS, 0);
  for (i = 0; i < T_NROW; i++) {
    int64_t v;
    ck_assert_int_eq(colvecSegfileReadInt64(pSeg, pSec, i, &v, &err),
                     COLVEC_OK);
    ck_assert_int_eq(v, d->aRowid[i]);
  }
  ck_assert_int_eq(colvecSegfileReadElem(pSeg, pSec, T_NROW, aBuf, &err),
                   COLVEC_RANGE);
  ck_assert_int_eq(colvecSegfileReadElem(pSeg, pSec, -1, aBuf, &err),
                   COLVEC_RANGE);
  pSec = colvecSegfileFind(pSeg, COLVEC_SEG_ATTR_FIXED, 2);
  ck_assert_uint_eq(pSec->flags, COLVEC_SEGF_REAL);
  for (i = 0; i < T_NROW; i++) {
    double v;
    ck_assert_int_eq(colvecSegfileReadDouble(pSeg, pSec, i, &v, &err),
                     COLVEC_OK);
    ck_assert(v == d->aReal[i]);
  }
  pSec = colvecSegfileFind(pSeg, COLVEC_SEG_VECTORS, 4);
  ck_assert_uint_eq(pSec->nElemSize, 4 * T_DIM);
  ck_assert_int_eq(colvecSegfileReadElem(pSeg, pSec, 17, aBuf, &err),
                   COLVEC_OK);
  ck_assert(memcmp(aBuf, &d->aVec[17 * T_DIM], 4 * T_DIM) == 0);
  ck_assert_int_eq(colvecSegfileReadInt64(pSeg, pSec, 0, (int64_t *)aBuf, &err),
                   COLVEC_RANGE);
  /* Advice is harmless in both modes. */
  ck_assert_int_eq(
      colvecSegfileAdvise(pSeg, pSec, 0, pSec->nByte, COLVEC_ADVICE_WILLNEED),
      COLVEC_OK);
  ck_assert_int_eq(colvecSegfileVerify(pSeg, &err), COLVEC_OK);
}

/* Write once, read back identical bytes in both modes and all prefaults. */
START_TEST(test_roundtrip) {
  TData d;
  ColvecSeg *pSeg;
  ColvecErr err;
  const char *zPath = tPath("000001.seg");
  int eAccess, ePre;
  tFill(&d, 42);
  ck_assert_int_eq(tWrite(zPath, &d, 0), COLVEC_OK);
  for (eAccess = 0; eAccess < 2; eAccess++) {
    for (ePre = 0; ePre < 3; ePre++) {
      ck_assert_int_eq(colvecSegfileOpen(&colvecStoreFile, zPath, eAccess, ePre,
                                         &pSeg, &err),
                       COLVEC_OK);
      tCheckContents(pSeg, &d, eAccess);
      colvecSegfileClose(pSeg);
    }
  }
  ck_assert_int_eq(
      colvecSegfileOpen(&colvecStoreFile, zPath, 7, 0, &pSeg, &err),
      COLVEC_RANGE);
}
END_TEST

/* Same input, different append chunking: byte-identical files. */
START_TEST(test_deterministic) {
  TData d;
  long n1, n2, n3;
  uint8_t *a1, *a2, *a3;
  tFill(&d, 7);
  ck_assert_int_eq(tWrite(tPath("a.seg"), &d, 0), COLVEC_OK);
  ck_assert_int_eq(tWrite(tPath("b.seg"), &d, 5), COLVEC_OK);
  a1 = tSlurp(tPath("a.seg"), &n1);
  a2 = tSlurp(tPath("b.seg"), &n2);
  ck_assert_int_eq(n1, n2);
  ck_assert(memcmp(a1, a2, (size_t)n1) == 0);
  /* Different data gives a different file. */
  tFill(&d, 8);
  ck_assert_int_eq(tWrite(tPath("c.seg"), &d, 3), COLVEC_OK);
  a3 = tSlurp(tPath("c.seg"), &n3);
  ck_assert(n3 != n1 || memcmp(a1, a3, (size_t)n1) != 0);
  /* Header magic and version at their documented places. */
  ck_assert(memcmp(a1, "COLVSEG\x1a", 8) == 0);
  ck_assert_int_eq(a1[8], 1);
  free(a1);
  free(a2);
  free(a3);
}
END_TEST

/* Every truncation of the file is COLVEC_CORRUPT in both modes. */
START_TEST(test_truncation) {
  TData d;
  long n, i;
  uint8_t *a;
  ColvecErr err;
  const char *zPath = tPath("t.seg");
  tFill(&d, 3);
  ck_assert_int_eq(tWrite(zPath, &d, 0), COLVEC_OK);
  a = tSlurp(zPath, &n);
  for (i = n - 1; i >= 0; i--) {
#if defined(_WIN32)
    tSpit(zPath, a, i); /* no truncate(): the first i bytes, cut there */
#else
    ck_assert_int_eq(truncate(zPath, (off_t)i), 0);
#endif
    ck_assert_int_eq(tOpenRc(zPath, COLVEC_SEG_MMAP, &err), COLVEC_CORRUPT);
    ck_assert_int_eq(tOpenRc(zPath, COLVEC_SEG_FILE, &err), COLVEC_CORRUPT);
    ck_assert(strstr(err.zMsg, zPath) != NULL);
  }
  /* An extended file is corrupt too. */
  a[n] = 0;
  tSpit(zPath, a, n + 1);
  ck_assert_int_eq(tOpenRc(zPath, COLVEC_SEG_MMAP, &err), COLVEC_CORRUPT);
  ck_assert(strstr(err.zMsg, "truncated") != NULL);
  free(a);
}
END_TEST

/* Every single-bit flip in the header and the section table is caught. */
START_TEST(test_header_flips) {
  TData d;
  long n, iBit, iTable;
  uint8_t *a;
  ColvecErr err;
  ColvecSeg *pSeg;
  const char *zPath = tPath("f.seg");
  tFill(&d, 4);
  ck_assert_int_eq(tWrite(zPath, &d, 0), COLVEC_OK);
  ck_assert_int_eq(colvecSegfileOpen(&colvecStoreFile, zPath, COLVEC_SEG_FILE,
                                     0, &pSeg, &err),
                   COLVEC_OK);
  iTable = (long)colvecSegfileTableOffset(pSeg);
  colvecSegfileClose(pSeg);
  a = tSlurp(zPath, &n);
  ck_assert_int_eq(n - iTable, 9 * COLVEC_SEG_ENTRY_SIZE);
  for (iBit = 0; iBit < n * 8; iBit++) {
    long iByte = iBit / 8;
    if (iByte >= COLVEC_SEG_HEADER_SIZE && iByte < iTable) continue; /* body */
    a[iByte] ^= (uint8_t)(1u << (iBit % 8));
    tSpit(zPath, a, n);
    ck_assert_int_eq(tOpenRc(zPath, (int)(iBit & 1), &err), COLVEC_CORRUPT);
    a[iByte] ^= (uint8_t)(1u << (iBit % 8));
  }
  tSpit(zPath, a, n);
  ck_assert_int_eq(tOpenRc(zPath, COLVEC_SEG_MMAP, &err), COLVEC_OK);
  free(a);
}
END_TEST

/* Random bit flips in section bodies open fine but fail verify. */
START_TEST(test_body_flips) {
  TData d;
  long n;
  int i, k;
  uint8_t *a;
  ColvecErr err;
  ColvecSeg *pSeg;
  ColvecSegSection aSec[9];
  uint64_t s = 99;
  const char *zPath = tPath("b.seg");
  tFill(&d, 5);
  ck_assert_int_eq(tWrite(zPath, &d, 0), COLVEC_OK);
  ck_assert_int_eq(colvecSegfileOpen(&colvecStoreFile, zPath, COLVEC_SEG_FILE,
                                     0, &pSeg, &err),
                   COLVEC_OK);
  for (i = 0; i < 9; i++)
    aSec[i] = *colvecSegfileSection(pSeg, i);
  colvecSegfileClose(pSeg);
  a = tSlurp(zPath, &n);
  for (i = 0; i < 9; i++) {
    for (k = 0; k < 20; k++) {
      long iByte = (long)(aSec[i].iOffset +
                          (int64_t)(tRand(&s) % (uint64_t)aSec[i].nByte));
      uint8_t m = (uint8_t)(1u << (tRand(&s) % 8));
      int eAccess = k & 1;
      a[iByte] ^= m;
      tSpit(zPath, a, n);
      ck_assert_int_eq(
          colvecSegfileOpen(&colvecStoreFile, zPath, eAccess, 0, &pSeg, &err),
          COLVEC_OK);
      ck_assert_int_eq(colvecSegfileVerify(pSeg, &err), COLVEC_CORRUPT);
      ck_assert(strstr(err.zMsg, "checksum mismatch") != NULL);
      ck_assert(strstr(err.zMsg, colvecSegfileKindName(aSec[i].eKind)) != NULL);
      colvecSegfileClose(pSeg);
      a[iByte] ^= m;
    }
  }
  free(a);
}
END_TEST

/* A file from a newer format version is refused as such, not as corrupt. */
START_TEST(test_unknown_version) {
  TData d;
  long n;
  uint8_t *a;
  ColvecErr err;
  const char *zPath = tPath("v.seg");
  tFill(&d, 6);
  ck_assert_int_eq(tWrite(zPath, &d, 0), COLVEC_OK);
  a = tSlurp(zPath, &n);
  a[8] = 2; /* version 2 */
  tReseal(a, n);
  tSpit(zPath, a, n);
  ck_assert_int_eq(tOpenRc(zPath, COLVEC_SEG_MMAP, &err), COLVEC_ERROR);
  ck_assert(strstr(err.zMsg, "format version 2") != NULL);
  ck_assert(strstr(err.zMsg, "v.seg") != NULL);
  ck_assert(strstr(err.zMsg, "corrupt") == NULL);
  free(a);
}
END_TEST

/*
** Random damage anywhere (several bytes, maybe a truncation): opening,
** verifying and reading every section must return codes, never crash
** (run under -fsanitize=address,undefined to make that mean something).
*/
START_TEST(test_random_damage) {
  TData d;
  long n, nCut;
  int iRound, k, i;
  uint8_t *a, *b, aBuf[4096];
  uint64_t s = 2024;
  ColvecErr err;
  const char *zPath = tPath("r.seg");
  int nOpen = 0, nBad = 0;
  tFill(&d, 13);
  ck_assert_int_eq(tWrite(zPath, &d, 0), COLVEC_OK);
  a = tSlurp(zPath, &n);
  b = (uint8_t *)malloc((size_t)n);
  for (iRound = 0; iRound < 400; iRound++) {
    ColvecSeg *pSeg = NULL;
    int rc;
    memcpy(b, a, (size_t)n);
    for (k = 0; k < 1 + (int)(tRand(&s) % 8); k++) {
      b[tRand(&s) % (uint64_t)n] = (uint8_t)tRand(&s);
    }
    nCut = (tRand(&s) % 4 == 0) ? (long)(tRand(&s) % (uint64_t)n) : n;
    tSpit(zPath, b, nCut);
    rc = colvecSegfileOpen(&colvecStoreFile, zPath, iRound & 1, 0, &pSeg, &err);
    if (rc != COLVEC_OK) {
      ck_assert(rc == COLVEC_CORRUPT || rc == COLVEC_ERROR);
      nBad++;
      continue;
    }
    nOpen++;
    rc = colvecSegfileVerify(pSeg, &err);
    ck_assert(rc == COLVEC_OK || rc == COLVEC_CORRUPT);
    for (i = 0; i < colvecSegfileSectionCount(pSeg); i++) {
      const ColvecSegSection *pSec = colvecSegfileSection(pSeg, i);
      int64_t nRead = pSec->nByte < 4096 ? pSec->nByte : 4096;
      ck_assert_int_eq(
          colvecSegfileRead(pSeg, pSec, pSec->nByte - nRead, aBuf, nRead, &err),
          COLVEC_OK);
      if (pSec->nElemSize > 0 && pSec->nByte > 0) {
        ck_assert_int_eq(
            colvecSegfileReadElem(pSeg, pSec, pSec->nByte / pSec->nElemSize - 1,
                                  aBuf, &err),
            COLVEC_OK);
      }
    }
    colvecSegfileClose(pSeg);
  }
  ck_assert_int_gt(nOpen, 0); /* some damage hit only bodies */
  ck_assert_int_gt(nBad, 0);
  free(a);
  free(b);
}
END_TEST

/* Abort leaves nothing; finish leaves only the final name. */
START_TEST(test_tmp_rename_abort) {
  TData d;
  ColvecSegWriter *w;
  ColvecErr err;
  char **az;
  int n;
  tFill(&d, 9);
  ck_assert_int_eq(colvecSegfileWriterOpen(&colvecStoreFile, tPath("x.seg.tmp"),
                                           1, &w, &err),
                   COLVEC_OK);
  ck_assert_int_eq(tSection(w, COLVEC_SEG_GRAPH, 0, 0, 0, d.aGraph, 100, 0),
                   COLVEC_OK);
  ck_assert(colvecOsExists(tPath("x.seg.tmp")));
  colvecSegfileWriterAbort(w);
  ck_assert(!colvecOsExists(tPath("x.seg.tmp")));
  ck_assert(!colvecOsExists(tPath("x.seg")));

  ck_assert_int_eq(tWrite(tPath("y.seg"), &d, 0), COLVEC_OK);
  ck_assert_int_eq(colvecOsListDir(tDir, NULL, &az, &n, &err), COLVEC_OK);
  ck_assert_int_eq(n, 1);
  ck_assert_str_eq(az[0], "y.seg");
  colvecOsListFree(az, n);

  /* A path without .tmp is refused. */
  ck_assert_int_eq(
      colvecSegfileWriterOpen(&colvecStoreFile, tPath("z.seg"), 1, &w, &err),
      COLVEC_RANGE);
  ck_assert_ptr_null(w);
}
END_TEST

/* Writer misuse and rule violations fail finish and leave no file. */
START_TEST(test_writer_errors) {
  TData d;
  ColvecSegWriter *w;
  ColvecErr err;
  tFill(&d, 10);
  /* ROWIDS of the wrong length for nRow. */
  ck_assert_int_eq(colvecSegfileWriterOpen(&colvecStoreFile, tPath("e.seg.tmp"),
                                           1, &w, &err),
                   COLVEC_OK);
  ck_assert_int_eq(tSection(w, COLVEC_SEG_ROWIDS, 0, 8, 0, d.aRowid, 8 * 10, 0),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileWriterFinish(w, 11, &err), COLVEC_ERROR);
  ck_assert(strstr(err.zMsg, "ROWIDS") != NULL);
  ck_assert(!colvecOsExists(tPath("e.seg.tmp")));
  ck_assert(!colvecOsExists(tPath("e.seg")));
  /* Append outside a section; the error is sticky. */
  ck_assert_int_eq(colvecSegfileWriterOpen(&colvecStoreFile, tPath("e.seg.tmp"),
                                           1, &w, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileWriterAppend(w, "x", 1), COLVEC_ERROR);
  ck_assert(strstr(colvecSegfileWriterErrmsg(w), "outside") != NULL);
  ck_assert_int_eq(colvecSegfileWriterBegin(w, COLVEC_SEG_GRAPH, 0, 0, 0),
                   COLVEC_ERROR);
  ck_assert_int_eq(colvecSegfileWriterFinish(w, 0, &err), COLVEC_ERROR);
  ck_assert(!colvecOsExists(tPath("e.seg.tmp")));
  /* Section left open; duplicate (kind, column). */
  ck_assert_int_eq(colvecSegfileWriterOpen(&colvecStoreFile, tPath("e.seg.tmp"),
                                           1, &w, &err),
                   COLVEC_OK);
  ck_assert_int_eq(tSection(w, COLVEC_SEG_GRAPH, 2, 0, 0, "ab", 2, 0),
                   COLVEC_OK);
  ck_assert_int_eq(tSection(w, COLVEC_SEG_GRAPH, 2, 0, 0, "cd", 2, 0),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileWriterFinish(w, 0, &err), COLVEC_ERROR);
  ck_assert(strstr(err.zMsg, "both GRAPH column 2") != NULL);
  ck_assert_int_eq(colvecSegfileWriterOpen(&colvecStoreFile, tPath("e.seg.tmp"),
                                           1, &w, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileWriterBegin(w, COLVEC_SEG_GRAPH, 0, 0, 0),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileWriterFinish(w, 0, &err), COLVEC_ERROR);
  ck_assert(!colvecOsExists(tPath("e.seg.tmp")));
  ck_assert(!colvecOsExists(tPath("e.seg")));
}
END_TEST

/* verify() checks rowid order and var-offset consistency, not only sums. */
START_TEST(test_verify_content) {
  TData d;
  ColvecSeg *pSeg;
  ColvecErr err;
  const char *zPath = tPath("c.seg");
  tFill(&d, 11);
  d.aRowid[30] = d.aRowid[29]; /* duplicate rowid */
  ck_assert_int_eq(tWrite(zPath, &d, 0), COLVEC_OK);
  ck_assert_int_eq(colvecSegfileOpen(&colvecStoreFile, zPath, COLVEC_SEG_FILE,
                                     0, &pSeg, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileVerify(pSeg, &err), COLVEC_CORRUPT);
  ck_assert(strstr(err.zMsg, "out of order at element 30") != NULL);
  colvecSegfileClose(pSeg);

  tFill(&d, 11);
  d.aOff[T_NROW] = d.nBytes + 1; /* offsets end past the bytes */
  ck_assert_int_eq(tWrite(zPath, &d, 0), COLVEC_OK);
  ck_assert_int_eq(colvecSegfileOpen(&colvecStoreFile, zPath, COLVEC_SEG_MMAP,
                                     0, &pSeg, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileVerify(pSeg, &err), COLVEC_CORRUPT);
  ck_assert(strstr(err.zMsg, "column 3 offsets") != NULL);
  colvecSegfileClose(pSeg);
}
END_TEST

/* A segment with no rows and no sections round-trips. */
START_TEST(test_empty_segment) {
  ColvecSegWriter *w;
  ColvecSeg *pSeg;
  ColvecErr err;
  long n;
  uint8_t *a;
  ck_assert_int_eq(colvecSegfileWriterOpen(&colvecStoreFile, tPath("0.seg.tmp"),
                                           5, &w, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileWriterFinish(w, 0, &err), COLVEC_OK);
  a = tSlurp(tPath("0.seg"), &n);
  ck_assert_int_eq(n, COLVEC_SEG_HEADER_SIZE);
  free(a);
  ck_assert_int_eq(colvecSegfileOpen(&colvecStoreFile, tPath("0.seg"),
                                     COLVEC_SEG_MMAP, 2, &pSeg, &err),
                   COLVEC_OK);
  ck_assert_uint_eq(colvecSegfileRowCount(pSeg), 0);
  ck_assert_uint_eq(colvecSegfileFingerprint(pSeg), 5);
  ck_assert_int_eq(colvecSegfileSectionCount(pSeg), 0);
  ck_assert_int_eq(colvecSegfileVerify(pSeg, &err), COLVEC_OK);
  colvecSegfileClose(pSeg);
}
END_TEST

/*
** A vector or code section whose element size no column can have (more
** than a float vector of COLVEC_MAX_DIM dimensions) is refused when the
** segment opens, also when it has no rows: readers size buffers by it.
** The writer refuses to write one, so the test patches a valid file and
** reseals its checksum, as a crafted file would be.
*/
START_TEST(test_elemsize_bound) {
  static const uint32_t aKind[] = {COLVEC_SEG_VECTORS, COLVEC_SEG_CODES};
  const uint32_t nMax = COLVEC_SEG_MAX_ELEM;
  const uint32_t aSize[] = {nMax + 1, 0xFFFFFFF8u, 0xFFFFFFFFu};
  char zPath[640], zTmp[640];
  uint8_t *aRow = (uint8_t *)calloc(1, (size_t)nMax);
  uint8_t *a;
  long n;
  ColvecSegWriter *w;
  ColvecErr err;
  int i, j, nRow;
  ck_assert_ptr_nonnull(aRow);
  snprintf(zPath, sizeof(zPath), "%s", tPath("e.seg"));
  snprintf(zTmp, sizeof(zTmp), "%s", tPath("e.seg.tmp"));
  for (i = 0; i < 2; i++) {
    /* the largest allowed size opens, with one row and with none */
    for (nRow = 1; nRow >= 0; nRow--) {
      colvecOsUnlink(zPath, NULL); /* the writer never replaces a file */
      ck_assert_int_eq(
          colvecSegfileWriterOpen(&colvecStoreFile, zTmp, 5, &w, &err),
          COLVEC_OK);
      ck_assert_int_eq(
          tSection(w, aKind[i], 0, nMax, 0, aRow, (int64_t)nMax * nRow, 0),
          COLVEC_OK);
      ck_assert_int_eq(colvecSegfileWriterFinish(w, (uint64_t)nRow, &err),
                       COLVEC_OK);
      ck_assert_int_eq(tOpenRc(zPath, COLVEC_SEG_MMAP, &err), COLVEC_OK);
    }
    /* larger ones (on the empty file) do not */
    a = tSlurp(zPath, &n);
    for (j = 0; j < 3; j++) {
      tPut32(a + n - COLVEC_SEG_ENTRY_SIZE + 8, aSize[j]);
      tReseal(a, n);
      tSpit(zPath, a, n);
      ck_assert_int_eq(tOpenRc(zPath, COLVEC_SEG_MMAP, &err), COLVEC_CORRUPT);
      ck_assert_msg(strstr(err.zMsg, "has element size") != NULL, "%s",
                    err.zMsg);
      colvecErrClear(&err);
      ck_assert_int_eq(tOpenRc(zPath, COLVEC_SEG_FILE, &err), COLVEC_CORRUPT);
      colvecErrClear(&err);
    }
    /* the same bytes with the size put back open again */
    tPut32(a + n - COLVEC_SEG_ENTRY_SIZE + 8, nMax);
    tReseal(a, n);
    tSpit(zPath, a, n);
    ck_assert_int_eq(tOpenRc(zPath, COLVEC_SEG_MMAP, &err), COLVEC_OK);
    free(a);
  }
  free(aRow);
}
END_TEST

/* A section larger than the writer's buffer, written in odd pieces. */
START_TEST(test_large_section) {
  int64_t nRow = 5000, i;
  int nDim = 96;
  float *aVec = (float *)malloc((size_t)(nRow * nDim) * sizeof(float));
  ColvecSegWriter *w;
  ColvecSeg *pSeg;
  ColvecErr err;
  const ColvecSegSection *pSec;
  uint64_t s = 1;
  for (i = 0; i < nRow * nDim; i++)
    aVec[i] = (float)(tRand(&s) % 1000);
  ck_assert_int_eq(colvecSegfileWriterOpen(&colvecStoreFile, tPath("l.seg.tmp"),
                                           5, &w, &err),
                   COLVEC_OK);
  ck_assert_int_eq(
      colvecSegfileWriterBegin(w, COLVEC_SEG_VECTORS, 0, (uint32_t)nDim * 4, 0),
      COLVEC_OK);
  ck_assert_int_eq(colvecSegfileWriterAppend(w, aVec, 12345), COLVEC_OK);
  ck_assert_int_eq(colvecSegfileWriterAppend(w, (uint8_t *)aVec + 12345,
                                             nRow * nDim * 4 - 12345),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileWriterEnd(w), COLVEC_OK);
  ck_assert_int_eq(colvecSegfileWriterFinish(w, (uint64_t)nRow, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileOpen(&colvecStoreFile, tPath("l.seg"),
                                     COLVEC_SEG_MMAP, 1, &pSeg, &err),
                   COLVEC_OK);
  pSec = colvecSegfileFind(pSeg, COLVEC_SEG_VECTORS, 0);
  ck_assert(memcmp(colvecSegfileData(pSeg, pSec), aVec,
                   (size_t)(nRow * nDim * 4)) == 0);
  ck_assert_uint_eq(pSec->cksum, colvecSegfileHash(aVec, nRow * nDim * 4));
  ck_assert_int_eq(colvecSegfileVerify(pSeg, &err), COLVEC_OK);
  colvecSegfileClose(pSeg);
  ck_assert_int_eq(colvecSegfileOpen(&colvecStoreFile, tPath("l.seg"),
                                     COLVEC_SEG_FILE, 0, &pSeg, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileVerify(pSeg, &err), COLVEC_OK);
  colvecSegfileClose(pSeg);
  free(aVec);
}
END_TEST

/* Out-of-memory at every allocation: clean failure, no leak, no file. */
START_TEST(test_oom) {
  TData d;
  int iFail, bDone = 0;
  ColvecErr err;
  tFill(&d, 12);
  for (iFail = 0; !bDone && iFail < 200; iFail++) {
    ColvecSeg *pSeg = NULL;
    int rc;
    colvecOsRemoveTree(tPath("oom"), NULL);
    ck_assert_int_eq(colvecOsMkdirUp(tPath("oom"), 0, &err), COLVEC_OK);
    colvecMemFailAfter(iFail);
    rc = tWrite(tPath("oom/1.seg"), &d, 0);
    if (rc == COLVEC_OK) {
      rc = colvecSegfileOpen(&colvecStoreFile, tPath("oom/1.seg"), iFail & 1, 0,
                             &pSeg, &err);
      if (rc == COLVEC_OK) rc = colvecSegfileVerify(pSeg, &err);
      colvecSegfileClose(pSeg);
      if (rc == COLVEC_OK) bDone = 1;
    } else {
      ck_assert(!colvecOsExists(tPath("oom/1.seg")));
    }
    ck_assert(!colvecOsExists(tPath("oom/1.seg.tmp")));
    if (!bDone) ck_assert_int_eq(rc, COLVEC_NOMEM);
    colvecMemFailAfter(-1);
  }
  ck_assert(bDone);
  ck_assert_int_gt(iFail, 3);
}
END_TEST

/* errno the map hook fails COLVEC_OSOP_MAP with (0: let it through). */
static int tMapErrno = 0;

/* Test hook: fails every mapping with tMapErrno. */
static int tMapBefore(void *pArg, int eOp, const char *zPath,
                      const char *zPath2, int64_t iArg, int64_t *pn) {
  (void)pArg;
  (void)zPath;
  (void)zPath2;
  (void)iArg;
  (void)pn;
  return eOp == COLVEC_OSOP_MAP ? tMapErrno : 0;
}

/*
** A segment whose mapping does not fit in the address space (mmap refused
** with ENOMEM, as a multi-gigabyte file in a 32-bit process is) opens in
** file mode and reads back the same bytes; the open is counted. Any other
** mapping error still fails the open.
*/
START_TEST(test_map_fallback) {
  static const ColvecOsHook hook = {tMapBefore, NULL, NULL};
  TData d;
  ColvecSeg *pSeg = NULL;
  ColvecErr err;
  const char *zPath = tPath("000009.seg");
  int nBefore = colvecSegfileMapFallbacks();
  tFill(&d, 9);
  ck_assert_int_eq(tWrite(zPath, &d, 0), COLVEC_OK);
  colvecOsSetHook(&hook);
  tMapErrno = ENOMEM;
  ck_assert_int_eq(colvecSegfileOpen(&colvecStoreFile, zPath, COLVEC_SEG_MMAP,
                                     COLVEC_PREFAULT_NONE, &pSeg, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileAccess(pSeg), COLVEC_SEG_FILE);
  ck_assert_int_eq(colvecSegfileMapFallbacks(), nBefore + 1);
  tCheckContents(pSeg, &d, COLVEC_SEG_FILE);
  colvecSegfileClose(pSeg);
  tMapErrno = EACCES;
  ck_assert_int_eq(colvecSegfileOpen(&colvecStoreFile, zPath, COLVEC_SEG_MMAP,
                                     COLVEC_PREFAULT_NONE, &pSeg, &err),
                   COLVEC_IOERR);
  ck_assert_ptr_null(pSeg);
  ck_assert_int_eq(err.iErrno, EACCES);
  ck_assert_int_eq(colvecSegfileMapFallbacks(), nBefore + 1);
  colvecOsSetHook(NULL);
  ck_assert_int_eq(colvecSegfileOpen(&colvecStoreFile, zPath, COLVEC_SEG_MMAP,
                                     COLVEC_PREFAULT_NONE, &pSeg, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecSegfileAccess(pSeg), COLVEC_SEG_MMAP);
  tCheckContents(pSeg, &d, COLVEC_SEG_MMAP);
  colvecSegfileClose(pSeg);
}
END_TEST

/* OS helpers: mkdir -p, listing by suffix, unlink, remove tree, maps. */
START_TEST(test_os_helpers) {
  ColvecErr err;
  ColvecFile *f;
  ColvecMap *pMap;
  char **az;
  int n, i;
  int64_t nByte;
  uint8_t a[10000];
  /* nothing above the nUp folders allowed is made: a missing top fails */
  ck_assert_int_eq(colvecOsMkdirUp(tPath("db-colvec/docs/x"), 1, &err),
                   COLVEC_IOERR);
  ck_assert_int_eq(err.iErrno, ENOENT);
  ck_assert(strstr(err.zMsg, "does not exist") != NULL);
  ck_assert(!colvecOsExists(tPath("db-colvec")));
  ck_assert_int_eq(colvecOsMkdirUp(tPath("db-colvec/docs/x"), 2, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecOsMkdirUp(tPath("db-colvec/docs"), 1, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecOsMkdirUp(tPath("db-colvec/docs"), 0, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecOsMkdirUp(tPath("db-colvec/docs/x/y/z"), 1, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecOsKind(tPath("db-colvec/docs/x/y/z")), COLVEC_OS_DIR);
  ck_assert_int_eq(colvecOsRmdir(tPath("db-colvec/docs/x/y/z"), &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecOsRmdir(tPath("db-colvec/docs/x/y"), &err), COLVEC_OK);
  for (i = 3; i >= 1; i--) {
    char zName[64];
    snprintf(zName, sizeof(zName), "db-colvec/docs/%06d.seg", i);
    ck_assert_int_eq(colvecOsOpen(tPath(zName),
                                  COLVEC_OPEN_READWRITE | COLVEC_OPEN_CREATE,
                                  &f, &err),
                     COLVEC_OK);
    ck_assert_int_eq(colvecOsClose(f, &err), COLVEC_OK);
  }
  ck_assert_int_eq(colvecOsOpen(tPath("db-colvec/docs/000004.seg.tmp"),
                                COLVEC_OPEN_READWRITE | COLVEC_OPEN_CREATE, &f,
                                &err),
                   COLVEC_OK);
  for (i = 0; i < 10000; i++)
    a[i] = (uint8_t)(i * 31);
  ck_assert_int_eq(colvecOsWrite(f, a, 10000, 0, &err), COLVEC_OK);
  ck_assert_int_eq(colvecOsSync(f, &err), COLVEC_OK);
  ck_assert_int_eq(colvecOsFileSize(f, &nByte, &err), COLVEC_OK);
  ck_assert_int_eq(nByte, 10000);
  ck_assert_int_eq(
      colvecOsMapOpen(f, nByte, COLVEC_PREFAULT_POPULATE, &pMap, &err),
      COLVEC_OK);
  ck_assert_int_eq(colvecOsClose(f, &err), COLVEC_OK);
  ck_assert(memcmp(pMap->a, a, 10000) == 0);
  ck_assert_int_eq(
      colvecOsMapAdvise(pMap, 5000, 100, COLVEC_ADVICE_RANDOM, &err),
      COLVEC_OK);
  ck_assert_int_eq(pMap->bRandom, 1);
  ck_assert_int_eq(
      colvecOsMapAdvise(pMap, 9999, 100000, COLVEC_ADVICE_WILLNEED, &err),
      COLVEC_OK);
  ck_assert_int_eq(
      colvecOsMapAdvise(pMap, 10000, 1, COLVEC_ADVICE_NORMAL, &err),
      COLVEC_RANGE);
  ck_assert_int_eq(colvecOsMapAdvise(pMap, 0, 1, 99, &err), COLVEC_RANGE);
  colvecOsMapClose(pMap);

  ck_assert_int_eq(
      colvecOsListDir(tPath("db-colvec/docs"), ".seg", &az, &n, &err),
      COLVEC_OK);
  ck_assert_int_eq(n, 3);
  ck_assert_str_eq(az[0], "000001.seg");
  ck_assert_str_eq(az[2], "000003.seg");
  colvecOsListFree(az, n);
  ck_assert_int_eq(
      colvecOsListDir(tPath("db-colvec/docs"), ".tmp", &az, &n, &err),
      COLVEC_OK);
  ck_assert_int_eq(n, 1);
  colvecOsListFree(az, n);
  ck_assert_int_eq(colvecOsRename(tPath("db-colvec/docs/000004.seg.tmp"),
                                  tPath("db-colvec/docs/000004.seg"), &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecOsSyncParent(tPath("db-colvec/docs/000004.seg"), &err),
                   COLVEC_OK);
  /* a rename to a taken name fails and changes nothing: 000004.seg keeps
  ** its 10000 bytes, 000003.seg (empty) stays; a free name works */
  ck_assert_int_eq(colvecOsRenameNew(tPath("db-colvec/docs/000003.seg"),
                                     tPath("db-colvec/docs/000004.seg"), &err),
                   COLVEC_IOERR);
  ck_assert_int_eq(err.iErrno, EEXIST);
  ck_assert(colvecOsExists(tPath("db-colvec/docs/000003.seg")));
  ck_assert_int_eq(colvecOsOpen(tPath("db-colvec/docs/000004.seg"),
                                COLVEC_OPEN_READONLY, &f, &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecOsFileSize(f, &nByte, &err), COLVEC_OK);
  ck_assert_int_eq(nByte, 10000);
  ck_assert_int_eq(colvecOsClose(f, &err), COLVEC_OK);
  ck_assert_int_eq(colvecOsRenameNew(tPath("db-colvec/docs/000003.seg"),
                                     tPath("db-colvec/docs/000005.seg"), &err),
                   COLVEC_OK);
  ck_assert(!colvecOsExists(tPath("db-colvec/docs/000003.seg")));
  ck_assert_int_eq(colvecOsRenameNew(tPath("db-colvec/docs/000005.seg"),
                                     tPath("db-colvec/docs/000003.seg"), &err),
                   COLVEC_OK);
  ck_assert_int_eq(colvecOsOpen(tPath("db-colvec/docs/000002.seg"),
                                COLVEC_OPEN_READWRITE | COLVEC_OPEN_CREATE |
                                    COLVEC_OPEN_EXCLUSIVE,
                                &f, &err),
                   COLVEC_IOERR);
  ck_assert_int_eq(colvecOsOpen(tPath("x"),
                                COLVEC_OPEN_READONLY | COLVEC_OPEN_CREATE, &f,
                                &err),
                   COLVEC_RANGE);
  ck_assert_int_eq(colvecOsUnlink(tPath("db-colvec/docs/000001.seg"), &err),
                   COLVEC_OK);
  ck_assert(!colvecOsExists(tPath("db-colvec/docs/000001.seg")));
  ck_assert_int_eq(colvecOsUnlink(tPath("db-colvec/docs/000001.seg"), &err),
                   COLVEC_OK);

  /* Errors name the file. */
  ck_assert_int_eq(colvecOsOpen(tPath("nope"), COLVEC_OPEN_READONLY, &f, &err),
                   COLVEC_IOERR);
  ck_assert_ptr_null(f);
  ck_assert(strstr(err.zMsg, "nope") != NULL);
  ck_assert(strstr(err.zMsg, "colvec: ") == err.zMsg);
  ck_assert_int_eq(err.iErrno, 2 /* ENOENT */);
  ck_assert_int_eq(tOpenRc(tPath("nope"), COLVEC_SEG_MMAP, &err), COLVEC_IOERR);
  ck_assert_int_eq(
      colvecOsMkdirUp(tPath("db-colvec/docs/000002.seg/y"), 1, &err),
      COLVEC_IOERR);
  ck_assert_int_eq(colvecOsListDir(tPath("nope"), NULL, &az, &n, &err),
                   COLVEC_IOERR);

  ck_assert_int_eq(colvecOsRemoveTree(tPath("db-colvec"), &err), COLVEC_OK);
  ck_assert(!colvecOsExists(tPath("db-colvec")));
  ck_assert_int_eq(colvecOsRemoveTree(tPath("db-colvec"), &err), COLVEC_OK);
}
END_TEST

/* Builds the suite. */
static Suite *segmentSuite(void) {
  Suite *s = suite_create("segment");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, tSetup, tTeardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_hash_reference);
  tcase_add_test(tc, test_roundtrip);
  tcase_add_test(tc, test_deterministic);
  tcase_add_test(tc, test_truncation);
  tcase_add_test(tc, test_header_flips);
  tcase_add_test(tc, test_body_flips);
  tcase_add_test(tc, test_unknown_version);
  tcase_add_test(tc, test_random_damage);
  tcase_add_test(tc, test_tmp_rename_abort);
  tcase_add_test(tc, test_writer_errors);
  tcase_add_test(tc, test_verify_content);
  tcase_add_test(tc, test_empty_segment);
  tcase_add_test(tc, test_elemsize_bound);
  tcase_add_test(tc, test_large_section);
  tcase_add_test(tc, test_oom);
  tcase_add_test(tc, test_os_helpers);
  tcase_add_test(tc, test_map_fallback);
  suite_add_tcase(s, tc);
  return s;
}

/* Runs the suite; exit status 0 when every test passed. */
int main(void) {
  SRunner *sr = srunner_create(segmentSuite());
  int nFail;
  srunner_run_all(sr, CK_NORMAL);
  nFail = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nFail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
