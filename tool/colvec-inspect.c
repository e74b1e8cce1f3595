/*
** colvec-inspect — dump and verify colvec segment files.
**
**   colvec-inspect [--file] FILE...
**
** For each FILE prints the header, the section table (kind, column, element
** size, flags, offset, length, checksum) and cheap per-section statistics
** (rowid and fixed-attribute min/max, null counts, variable-length totals,
** vector dimensions, rows kept out of the codes, the recall a graph
** measured when it was written), then verifies every section checksum and the
** content
** rules of colvecSegfileVerify(). --file reads with pread instead of mmap.
**
** Exit status: 0 when every file is intact, 1 when any file is corrupt or
** cannot be read (the message is printed), 2 on a usage error.
**
** SQLite-free: links the core library (libcolvec_core: the file layer,
** colvec_segfile.c, colvec_hnsw.c).
*/
#include "colvec_core.h"
#include "colvec_hnsw.h"
#include "colvec_os.h"
#include "colvec_segfile.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Running statistics over the 8-byte values of one section. */
typedef struct InspectStat InspectStat;
struct InspectStat {
  int bReal;        /* values are doubles, not int64 */
  int64_t nVal;     /* values seen (NaNs excluded for doubles) */
  int64_t iMin;     /* smallest int64 */
  int64_t iMax;     /* largest int64 */
  double rMin;      /* smallest double */
  double rMax;      /* largest double */
  int64_t nMaxGap;  /* largest difference of consecutive values (offsets) */
  int64_t iPrev;    /* previous int64 value */
  int64_t nBitLeft; /* NULLBITMAP: bits still to count (row count) */
  int64_t nSet;     /* NULLBITMAP: bits set */
};

/* Decodes the 8 little-endian bytes at a. */
static uint64_t inspectGet64(const uint8_t *a) {
  uint64_t v = 0;
  int i;
  for (i = 7; i >= 0; i--)
    v = (v << 8) | a[i];
  return v;
}

/* colvecSegfileScan callback: folds 8-byte values into the InspectStat. */
static int inspectValues(void *pCtx, const uint8_t *a, int64_t n) {
  InspectStat *p = (InspectStat *)pCtx;
  int64_t i;
  for (i = 0; i + 8 <= n; i += 8) {
    uint64_t u = inspectGet64(a + i);
    if (p->bReal) {
      double r;
      memcpy(&r, &u, sizeof(r));
      if (isnan(r)) continue;
      if (p->nVal == 0 || r < p->rMin) p->rMin = r;
      if (p->nVal == 0 || r > p->rMax) p->rMax = r;
    } else {
      int64_t v = (int64_t)u;
      if (p->nVal == 0 || v < p->iMin) p->iMin = v;
      if (p->nVal == 0 || v > p->iMax) p->iMax = v;
      if (p->nVal > 0 && v - p->iPrev > p->nMaxGap) p->nMaxGap = v - p->iPrev;
      p->iPrev = v;
    }
    p->nVal++;
  }
  return COLVEC_OK;
}

/* colvecSegfileScan callback: counts set bits among the first nBitLeft. */
static int inspectBits(void *pCtx, const uint8_t *a, int64_t n) {
  InspectStat *p = (InspectStat *)pCtx;
  int64_t i;
  int b;
  for (i = 0; i < n && p->nBitLeft > 0; i++) {
    for (b = 0; b < 8 && p->nBitLeft > 0; b++, p->nBitLeft--) {
      if (a[i] & (1u << b)) p->nSet++;
    }
  }
  return COLVEC_OK;
}

/*
** Prints the recall record of section pSec of pSeg (a graph's measure of
** itself when it was written, colvec_hnsw.h): the recall@k on the codes
** and on the vectors, and how the segment is searched. Returns COLVEC_OK
** or the error of a failing read (pErr set).
*/
static int inspectRecall(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                         ColvecErr *pErr) {
  static const char *const azUsed[] = {
      "the graph on the codes", "the graph on the vectors", "exact scans"};
  uint8_t a[COLVEC_RECALL_BYTES];
  ColvecHnswRecall r;
  int rc;
  if (pSec->nByte != COLVEC_RECALL_BYTES) {
    printf("  damaged recall record");
    return COLVEC_OK;
  }
  rc = colvecSegfileRead(pSeg, pSec, 0, a, COLVEC_RECALL_BYTES, pErr);
  if (rc != COLVEC_OK) return rc;
  if (colvecHnswRecallDecode(a, COLVEC_RECALL_BYTES, &r) != COLVEC_OK) {
    printf("  damaged recall record");
    return COLVEC_OK;
  }
  printf("  recall@%d over %d rows:", r.k, r.nQuery);
  if (r.rCodes >= 0) printf(" codes %.3f", r.rCodes);
  if (r.rVectors >= 0) printf(" vectors %.3f", r.rVectors);
  printf("; searched by %s", azUsed[r.eUsed]);
  return COLVEC_OK;
}

/*
** Prints the statistics of section pSec of pSeg on stdout (rest of the
** line). Returns COLVEC_OK or the error of a failing read (pErr set).
*/
static int inspectStats(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                        ColvecErr *pErr) {
  InspectStat st;
  int rc = COLVEC_OK;
  uint64_t nRow = colvecSegfileRowCount(pSeg);
  memset(&st, 0, sizeof(st));
  switch (pSec->eKind) {
  case COLVEC_SEG_ROWIDS:
  case COLVEC_SEG_ATTR_FIXED:
  case COLVEC_SEG_ATTR_VAROFFSETS:
    st.bReal = (pSec->flags & COLVEC_SEGF_REAL) != 0 &&
               pSec->eKind == COLVEC_SEG_ATTR_FIXED;
    rc = colvecSegfileScan(pSeg, pSec, inspectValues, &st, pErr);
    if (rc != COLVEC_OK || st.nVal == 0) break;
    if (pSec->eKind == COLVEC_SEG_ATTR_VAROFFSETS) {
      printf("  total %lld bytes, longest value %lld", (long long)st.iMax,
             (long long)st.nMaxGap);
    } else if (st.bReal) {
      printf("  real min %.17g max %.17g", st.rMin, st.rMax);
    } else {
      printf("  min %lld max %lld", (long long)st.iMin, (long long)st.iMax);
    }
    break;
  case COLVEC_SEG_NULLBITMAP:
    st.nBitLeft = (int64_t)nRow;
    rc = colvecSegfileScan(pSeg, pSec, inspectBits, &st, pErr);
    if (rc == COLVEC_OK) printf("  %lld null", (long long)st.nSet);
    break;
  case COLVEC_SEG_VECTORS:
    if (pSec->flags & COLVEC_SEGF_REAL) {
      printf("  %llu x float[%u]", (unsigned long long)nRow,
             pSec->nElemSize / 4);
    } else {
      printf("  %llu x %u bytes", (unsigned long long)nRow, pSec->nElemSize);
    }
    break;
  case COLVEC_SEG_CODES:
    printf("  %llu x %u bytes", (unsigned long long)nRow, pSec->nElemSize);
    break;
  case COLVEC_SEG_EXACT:
    printf("  %lld rows searched exactly", (long long)(pSec->nByte / 4));
    break;
  case COLVEC_SEG_RECALL:
    rc = inspectRecall(pSeg, pSec, pErr);
    break;
  default:
    break;
  }
  return rc;
}

/*
** Dumps and verifies one file. Returns 0 when it is intact, 1 otherwise
** (the reason is printed on stderr and as a last line on stdout).
*/
static int inspectFile(const char *zPath, int eAccess) {
  ColvecSeg *pSeg = NULL;
  ColvecErr err;
  int rc, i;

  colvecErrClear(&err);
  printf("%s\n", zPath);
  rc = colvecSegfileOpen(&colvecStoreFile, zPath, eAccess, COLVEC_PREFAULT_NONE,
                         &pSeg, &err);
  if (rc == COLVEC_OK) {
    printf("  format version %u, header %d bytes, file %lld bytes\n",
           colvecSegfileVersion(pSeg), COLVEC_SEG_HEADER_SIZE,
           (long long)colvecSegfileFileSize(pSeg));
    printf("  rows %llu, schema fingerprint 0x%016llx\n",
           (unsigned long long)colvecSegfileRowCount(pSeg),
           (unsigned long long)colvecSegfileFingerprint(pSeg));
    printf("  %d sections, table at offset %lld, header checksum "
           "0x%016llx\n",
           colvecSegfileSectionCount(pSeg),
           (long long)colvecSegfileTableOffset(pSeg),
           (unsigned long long)colvecSegfileHeaderChecksum(pSeg));
    printf("  %3s %-15s %5s %6s %5s %12s %12s  %-18s  %s\n", "#", "kind", "col",
           "elem", "flags", "offset", "length", "checksum", "stats");
  }
  for (i = 0; rc == COLVEC_OK && i < colvecSegfileSectionCount(pSeg); i++) {
    const ColvecSegSection *pSec = colvecSegfileSection(pSeg, i);
    printf("  %3d %-15s %5u %6u %5x %12lld %12lld  0x%016llx", i,
           colvecSegfileKindName(pSec->eKind), pSec->iColumn, pSec->nElemSize,
           pSec->flags, (long long)pSec->iOffset, (long long)pSec->nByte,
           (unsigned long long)pSec->cksum);
    rc = inspectStats(pSeg, pSec, &err);
    printf("\n");
  }
  if (rc == COLVEC_OK) rc = colvecSegfileVerify(pSeg, &err);
  colvecSegfileClose(pSeg);
  if (rc != COLVEC_OK) {
    printf("  FAILED: %s\n", err.zMsg);
    fflush(stdout);
    fprintf(stderr, "%s\n", err.zMsg);
    return 1;
  }
  printf("  verify: ok\n");
  return 0;
}

/* Parses the arguments and inspects each file; see the file comment. */
int main(int argc, char **argv) {
  int i, nFile = 0, nBad = 0, eAccess = COLVEC_SEG_MMAP;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--file") == 0) {
      eAccess = COLVEC_SEG_FILE;
    } else if (strcmp(argv[i], "--help") == 0 || argv[i][0] == '-') {
      fprintf(stderr, "usage: %s [--file] FILE...\n", argv[0]);
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  for (i = 1; i < argc; i++) {
    if (argv[i][0] == '-') continue;
    if (nFile++ > 0) printf("\n");
    nBad += inspectFile(argv[i], eAccess);
  }
  if (nFile == 0) {
    fprintf(stderr, "usage: %s [--file] FILE...\n", argv[0]);
    return 2;
  }
  return nBad ? 1 : 0;
}
