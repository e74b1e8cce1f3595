/*
** gen_seeds.c — writes the seed corpora of the fuzz targets.
**
**   gen_seeds <dir>
**
** creates <dir>/fuzz_segment/, <dir>/fuzz_vector/, <dir>/fuzz_config/ and
** <dir>/fuzz_sql/. Segment seeds are real segments written through the
** SQLite-free writer (colvec_segfile.c, colvec_quant.c, colvec_hnsw_build.c)
** the way compaction writes them (colvec_compact.c, colvec_index.c): rowids;
** integer, real, text and blob attributes with NULL bitmaps; a float vector
** column with each quantizer (none, int8, int4, bit) and its codes; int8 and
** bit vector columns; HNSW graphs on small segments (fast to mutate) and one
** segment above the graph threshold (COLVEC_INDEX_MIN_ROWS = 2048 rows), and
** segments without a graph and without rows. Deterministic: the same bytes
** every run.
*/
#include "colvec_core.h"
#include "colvec_hnsw.h"
#include "colvec_quant.h"
#include "colvec_segfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Rows at and above which the module builds a graph (colvecInt.h). */
#define GS_GRAPH_ROWS 2048

/* Column indices of the seed segments (the module's user column order). */
#define GS_COL_INT 0
#define GS_COL_REAL 1
#define GS_COL_TEXT 2
#define GS_COL_BLOB 3
#define GS_COL_F32 4
#define GS_COL_I8 5
#define GS_COL_BIT 6

/* Shape of one seed segment. */
typedef struct GsShape GsShape;
struct GsShape {
  const char *zName; /* file name */
  int nRow;          /* rows */
  int nDim;          /* dimensions of the float and int8 columns */
  int nBitDim;       /* dimensions of the bit column (multiple of 8) */
  int eQuant;        /* quantizer of the float column */
  int bGraph;        /* build graphs */
  int nM;            /* HNSW M */
  int bAttrs;        /* write the attribute columns */
};

/* Exact-distance context of a build: nRow vectors of nByte bytes. */
typedef struct GsBuild GsBuild;
struct GsBuild {
  const uint8_t *aVec; /* vectors */
  int nByte;           /* bytes per vector */
  int eElem;           /* ColvecElem */
};

/* splitmix64: the generator's only random source. */
static uint64_t gsRand(uint64_t *pState) {
  uint64_t z = (*pState += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Exact distance between nodes a and b (squared l2, or bit/byte diffs). */
static float gsDist(void *pCtx, uint32_t a, uint32_t b) {
  const GsBuild *p = (const GsBuild *)pCtx;
  const uint8_t *x = p->aVec + (size_t)a * p->nByte;
  const uint8_t *y = p->aVec + (size_t)b * p->nByte;
  float r = 0;
  int i;
  if (p->eElem == COLVEC_ELEM_F32) {
    for (i = 0; i < p->nByte / 4; i++) {
      float d = ((const float *)x)[i] - ((const float *)y)[i];
      r += d * d;
    }
  } else if (p->eElem == COLVEC_ELEM_I8) {
    for (i = 0; i < p->nByte; i++) {
      float d = (float)(int8_t)x[i] - (float)(int8_t)y[i];
      r += d * d;
    }
  } else {
    for (i = 0; i < p->nByte; i++)
      r += (float)__builtin_popcount(x[i] ^ y[i]);
  }
  return r;
}

/* Appends one section; returns the writer's result code. */
static int gsSection(ColvecSegWriter *pW, uint32_t eKind, uint32_t iCol,
                     uint32_t nElem, uint32_t flags, const void *a, int64_t n) {
  int rc = colvecSegfileWriterBegin(pW, eKind, iCol, nElem, flags);
  if (rc == COLVEC_OK && n > 0) rc = colvecSegfileWriterAppend(pW, a, n);
  if (rc == COLVEC_OK) rc = colvecSegfileWriterEnd(pW);
  return rc;
}

/* Builds and appends the graph of one vector column. */
static int gsGraph(ColvecSegWriter *pW, uint32_t iCol, const GsShape *s,
                   const uint8_t *aVec, int nByte, int eElem,
                   const int64_t *aRowid) {
  ColvecHnswConfig cfg;
  GsBuild ctx;
  ColvecHnsw *pGraph = NULL;
  int64_t nSer;
  uint8_t *aBuf;
  int rc;
  memset(&cfg, 0, sizeof(cfg));
  cfg.nM = s->nM;
  cfg.nEfC = 32;
  cfg.nBatch = COLVEC_HNSW_DEFAULT_BATCH;
  cfg.nThread = 1;
  ctx.aVec = aVec;
  ctx.nByte = nByte;
  ctx.eElem = eElem;
  rc = colvecHnswBuild(&cfg, (uint32_t)s->nRow, NULL, (const uint64_t *)aRowid,
                       gsDist, &ctx, &pGraph);
  if (rc != COLVEC_OK) return rc;
  nSer = colvecHnswSerializedSize(pGraph);
  aBuf = (uint8_t *)malloc((size_t)nSer);
  rc = aBuf ? colvecHnswSerialize(pGraph, aBuf, (size_t)nSer) : COLVEC_NOMEM;
  if (rc == COLVEC_OK)
    rc = gsSection(pW, COLVEC_SEG_GRAPH, iCol, 4, 0, aBuf, nSer);
  free(aBuf);
  colvecHnswFree(pGraph);
  return rc;
}

/* Writes the segment of shape s to <zDir>/<s->zName>. */
static int gsSegment(const char *zDir, const GsShape *s, uint64_t iSeed) {
  char zPath[512], zTmp[520];
  ColvecSegWriter *pW = NULL;
  ColvecErr err;
  int n = s->nRow, nDim = s->nDim, nBitByte = s->nBitDim / 8, i, j, rc;
  int64_t *aRowid = calloc((size_t)n + 1, 8);
  int64_t *aInt = calloc((size_t)n + 1, 8);
  double *aReal = calloc((size_t)n + 1, 8);
  int64_t *aOff = calloc((size_t)n + 1, 8);
  uint8_t *aText = calloc((size_t)n * 8 + 1, 1);
  uint8_t *aNull = calloc((size_t)n / 8 + 1, 1);
  float *aF32 = calloc((size_t)n * nDim + 1, 4);
  int8_t *aI8 = calloc((size_t)n * nDim + 1, 1);
  uint8_t *aBit = calloc((size_t)n * nBitByte + 1, 1);
  int64_t nText = 0, r = 0;
  uint64_t st = iSeed;

  for (i = 0; i < n; i++) {
    r += 1 + (int64_t)(gsRand(&st) % 7);
    aRowid[i] = r;
    aInt[i] = (int64_t)(gsRand(&st) % 2001) - 1000;
    aReal[i] = (double)(gsRand(&st) % 4000) / 16.0 - 100.0;
    aOff[i] = nText;
    for (j = 0; j < (int)(gsRand(&st) % 6); j++) {
      aText[nText++] = (uint8_t)('a' + gsRand(&st) % 26);
    }
    if (gsRand(&st) % 5 == 0) aNull[i / 8] |= (uint8_t)(1u << (i % 8));
    for (j = 0; j < nDim; j++) {
      int c = (int)(i % 4); /* four clusters */
      aF32[(size_t)i * nDim + j] =
          (float)c + (float)(gsRand(&st) % 1000) / 1000.0f - 0.5f;
      aI8[(size_t)i * nDim + j] = (int8_t)((int)(gsRand(&st) % 255) - 127);
    }
    for (j = 0; j < nBitByte; j++)
      aBit[(size_t)i * nBitByte + j] = (uint8_t)gsRand(&st);
  }
  aOff[n] = nText;

  snprintf(zPath, sizeof(zPath), "%s/%s", zDir, s->zName);
  snprintf(zTmp, sizeof(zTmp), "%s.tmp", zPath);
  remove(zPath); /* regenerated: the writer never replaces a file */
  rc = colvecSegfileWriterOpen(&colvecStoreFile, zTmp,
                               0x636f6c7665632121ull ^ iSeed, &pW, &err);
  if (rc == COLVEC_OK)
    rc = gsSection(pW, COLVEC_SEG_ROWIDS, 0, 8, 0, aRowid, 8 * (int64_t)n);
  if (s->bAttrs) {
    if (rc == COLVEC_OK)
      rc = gsSection(pW, COLVEC_SEG_NULLBITMAP, GS_COL_INT, 0, 0, aNull,
                     (n + 7) / 8);
    if (rc == COLVEC_OK)
      rc = gsSection(pW, COLVEC_SEG_ATTR_FIXED, GS_COL_INT, 8, 0, aInt,
                     8 * (int64_t)n);
    if (rc == COLVEC_OK)
      rc = gsSection(pW, COLVEC_SEG_ATTR_FIXED, GS_COL_REAL, 8,
                     COLVEC_SEGF_REAL, aReal, 8 * (int64_t)n);
    if (rc == COLVEC_OK)
      rc = gsSection(pW, COLVEC_SEG_NULLBITMAP, GS_COL_TEXT, 0, 0, aNull,
                     (n + 7) / 8);
    if (rc == COLVEC_OK)
      rc = gsSection(pW, COLVEC_SEG_ATTR_VAROFFSETS, GS_COL_TEXT, 8, 0, aOff,
                     8 * ((int64_t)n + 1));
    if (rc == COLVEC_OK)
      rc = gsSection(pW, COLVEC_SEG_ATTR_VARBYTES, GS_COL_TEXT, 0, 0, aText,
                     nText);
    if (rc == COLVEC_OK)
      rc = gsSection(pW, COLVEC_SEG_ATTR_VAROFFSETS, GS_COL_BLOB, 8, 0, aOff,
                     8 * ((int64_t)n + 1));
    if (rc == COLVEC_OK)
      rc = gsSection(pW, COLVEC_SEG_ATTR_VARBYTES, GS_COL_BLOB, 0, 0, aText,
                     nText);
  }
  /* float column: vectors, then quantizer and codes, then graph */
  if (rc == COLVEC_OK)
    rc = gsSection(pW, COLVEC_SEG_VECTORS, GS_COL_F32, 4 * nDim, 0, aF32,
                   4 * (int64_t)n * nDim);
  if (rc == COLVEC_OK && s->eQuant != COLVEC_QUANT_NONE && n > 0) {
    ColvecQuant *pQ = NULL;
    rc = colvecQuantTrain((ColvecQuantType)s->eQuant, COLVEC_METRIC_L2, nDim,
                          aF32, n, nDim, &pQ);
    if (rc == COLVEC_OK) {
      int64_t nSer = colvecQuantSerializedBytes(pQ);
      int64_t nCode = colvecQuantCodeBytes(pQ);
      uint8_t *aBuf = malloc((size_t)(nSer > nCode * n ? nSer : nCode * n));
      colvecQuantSerialize(pQ, aBuf);
      rc = gsSection(pW, COLVEC_SEG_QUANT, GS_COL_F32, 0, 0, aBuf, nSer);
      if (rc == COLVEC_OK) rc = colvecQuantEncodeBatch(pQ, aF32, n, nDim, aBuf);
      if (rc == COLVEC_OK)
        rc = gsSection(pW, COLVEC_SEG_CODES, GS_COL_F32, (uint32_t)nCode, 0,
                       aBuf, nCode * n);
      free(aBuf);
    }
    colvecQuantFree(pQ);
  }
  if (rc == COLVEC_OK && s->bGraph && n > 0) {
    rc = gsGraph(pW, GS_COL_F32, s, (const uint8_t *)aF32, 4 * nDim,
                 COLVEC_ELEM_F32, aRowid);
  }
  if (s->bAttrs) {
    if (rc == COLVEC_OK)
      rc = gsSection(pW, COLVEC_SEG_VECTORS, GS_COL_I8, nDim, 0, aI8,
                     (int64_t)n * nDim);
    if (rc == COLVEC_OK && s->bGraph && n > 0) {
      rc = gsGraph(pW, GS_COL_I8, s, (const uint8_t *)aI8, nDim, COLVEC_ELEM_I8,
                   aRowid);
    }
    if (rc == COLVEC_OK)
      rc = gsSection(pW, COLVEC_SEG_VECTORS, GS_COL_BIT, nBitByte, 0, aBit,
                     (int64_t)n * nBitByte);
    if (rc == COLVEC_OK && s->bGraph && n > 0) {
      rc = gsGraph(pW, GS_COL_BIT, s, aBit, nBitByte, COLVEC_ELEM_BIT, aRowid);
    }
  }
  if (rc == COLVEC_OK) {
    rc = colvecSegfileWriterFinish(pW, (uint64_t)n, &err);
    if (rc != COLVEC_OK) fprintf(stderr, "gen_seeds: %s\n", err.zMsg);
  } else {
    fprintf(stderr, "gen_seeds: %s: %s\n", s->zName,
            colvecSegfileWriterErrmsg(pW));
    colvecSegfileWriterAbort(pW);
  }
  free(aRowid);
  free(aInt);
  free(aReal);
  free(aOff);
  free(aText);
  free(aNull);
  free(aF32);
  free(aI8);
  free(aBit);
  return rc;
}

/* Writes n bytes at a to <zDir>/<zName>. Returns 0 on success. */
static int gsFile(const char *zDir, const char *zName, const void *a,
                  size_t n) {
  char zPath[512];
  FILE *f;
  snprintf(zPath, sizeof(zPath), "%s/%s", zDir, zName);
  f = fopen(zPath, "wb");
  if (f == NULL || fwrite(a, 1, n, f) != n) {
    perror(zPath);
    if (f) fclose(f);
    return 1;
  }
  return fclose(f) != 0;
}

/* Creates <zBase>/<zSub> and returns its path in a static buffer. */
static const char *gsDir(const char *zBase, const char *zSub) {
  static char zPath[4][512];
  static int i = 0;
  i = (i + 1) % 4;
  snprintf(zPath[i], sizeof(zPath[i]), "%s/%s", zBase, zSub);
  if (mkdir(zBase, 0755) != 0 && errno != EEXIST) perror(zBase);
  if (mkdir(zPath[i], 0755) != 0 && errno != EEXIST) perror(zPath[i]);
  return zPath[i];
}

/* A seed given as a string literal that may hold NUL bytes. */
typedef struct GsBytes GsBytes;
struct GsBytes {
  const char *z; /* bytes */
  size_t n;      /* length */
};
#define GS_BYTES(s)                                                            \
  { s, sizeof(s) - 1 }

/* Vector seeds: byte 0 element type, byte 1 dimensions, byte 2 form. */
static const GsBytes gsVectorSeeds[] = {
    GS_BYTES("\x00\x04J[0.5, -1, 2e3, 0.125]"),
    GS_BYTES("\x00\x03J[ 1.0e-7 ,-0.0, 3.4028234e38 ]"),
    GS_BYTES("\x00\x02J[1,]"),
    GS_BYTES("\x00\x02J[1 2]"),
    GS_BYTES("\x01\x04J[127, -128, 0, 5]"),
    GS_BYTES("\x01\x02J[128, 1.5]"),
    GS_BYTES("\x02\x08J[1,0,1,0,1,1,1,1]"),
    GS_BYTES("\x02\x10J[1,0,1,0,1,1,1,1,0,0,0,0,1,1,1,1]"),
    GS_BYTES("\x00\x02J[\"1\", null]"),
    GS_BYTES("\x00\x02J[1e999, -1e999]"),
    GS_BYTES("\x00\x02B\x00\x00\x80\x3f\x00\x00\x00\xc0"),
    GS_BYTES("\x00\x02B\x00\x00\xc0\x7f\x00\x00\x80\x7f"),
    GS_BYTES("\x01\x03B\x7f\x80\x01"),
    GS_BYTES("\x02\x08B\xa5"),
};

/* CREATE seeds: the text between the parentheses of USING colvec(...). */
static const char *const gsConfigSeeds[] = {
    "embedding float[4]",
    "embedding float[8] distance_metric=cosine quantize=bit, category text, "
    "year integer, price real",
    "v int8[16] distance_metric=l2, tag blob, delta_rows=10",
    "b bit[64], n integer, access=file, prefault=willneed",
    "e float32[3] quantize=int4 m=4 ef_construction=8 index=hnsw, "
    "build_threads=1",
    "e float[2] index=none quantize=none, \"quoted name\" text, [br] int, "
    "`bt` double, 'sq' boolean",
    "e float[65536]",
    "e float[0]",
    "e bit[7]",
    "e float[4] distance_metric=hamming",
    "k float[4]",
    "e float[4], e text",
    "delta_rows=0, e float[4]",
    "e float[4] m=1000",
    "e float[4] quantize=int8 prefault=populate",
};

/* SQL seeds: the statement-program bytes of fuzz_sql (see fuzz_sql.c). */
static const unsigned char gsSqlSeed1[] = {
    0x00, 0x10, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
    0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14,
    0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f};

int main(int argc, char **argv) {
  static const GsShape aShape[] = {
      {"f32-none-graph.seg", 61, 4, 16, COLVEC_QUANT_NONE, 1, 2, 1},
      {"f32-int8-graph.seg", 40, 8, 8, COLVEC_QUANT_INT8, 1, 3, 1},
      {"f32-int4-graph.seg", 33, 5, 8, COLVEC_QUANT_INT4, 1, 2, 1},
      {"f32-bit-graph.seg", 37, 6, 8, COLVEC_QUANT_BIT, 1, 2, 1},
      {"f32-int8-nograph.seg", 61, 4, 16, COLVEC_QUANT_INT8, 0, 2, 1},
      {"f32-bit-nograph.seg", 9, 3, 8, COLVEC_QUANT_BIT, 0, 2, 0},
      {"empty.seg", 0, 4, 8, COLVEC_QUANT_NONE, 0, 2, 1},
      {"one-row.seg", 1, 4, 8, COLVEC_QUANT_INT8, 1, 2, 1},
      {"above-threshold.seg", GS_GRAPH_ROWS + 3, 2, 8, COLVEC_QUANT_INT8, 1, 2,
       0},
  };
  const char *zOut;
  const char *zDir;
  char zName[64];
  int i, nErr = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: %s <dir>\n", argv[0]);
    return 2;
  }
  zOut = argv[1];

  zDir = gsDir(zOut, "fuzz_segment");
  for (i = 0; i < (int)(sizeof(aShape) / sizeof(aShape[0])); i++) {
    if (gsSegment(zDir, &aShape[i], (uint64_t)i + 1) != COLVEC_OK) nErr++;
  }

  zDir = gsDir(zOut, "fuzz_vector");
  for (i = 0; i < (int)(sizeof(gsVectorSeeds) / sizeof(gsVectorSeeds[0]));
       i++) {
    snprintf(zName, sizeof(zName), "vector-%02d", i);
    nErr += gsFile(zDir, zName, gsVectorSeeds[i].z, gsVectorSeeds[i].n);
  }

  zDir = gsDir(zOut, "fuzz_config");
  for (i = 0; i < (int)(sizeof(gsConfigSeeds) / sizeof(gsConfigSeeds[0]));
       i++) {
    snprintf(zName, sizeof(zName), "create-%02d", i);
    nErr += gsFile(zDir, zName, gsConfigSeeds[i], strlen(gsConfigSeeds[i]));
  }

  zDir = gsDir(zOut, "fuzz_sql");
  nErr += gsFile(zDir, "program-01", gsSqlSeed1, sizeof(gsSqlSeed1));
  {
    /* longer programs: every opcode, then pseudo-random bytes */
    unsigned char a[600];
    uint64_t st = 7;
    int k;
    for (k = 0; k < 4; k++) {
      for (i = 0; i < (int)sizeof(a); i++) {
        a[i] =
            i < 64 ? (unsigned char)(i * (k + 1)) : (unsigned char)gsRand(&st);
      }
      snprintf(zName, sizeof(zName), "program-%02d", k + 2);
      nErr += gsFile(zDir, zName, a, 150 * (size_t)(k + 1));
    }
  }
  if (nErr) fprintf(stderr, "gen_seeds: %d errors\n", nErr);
  return nErr ? 1 : 0;
}
