/*
** bench_data.c — dataset loaders, synthetic generator, exact ground truth
** with its on-disk cache, and the measurement helpers shared by the
** benchmark drivers. See bench_data.h for the interface.
**
** Every file is read through zlib's gzopen/gzread, which reads plain files
** as they are and gzipped files transparently. The code is also valid C++
** (explicit casts of malloc), so it links into tool/bench/hnswlib-bench.cpp
** however
** it is compiled.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* nftw, clock_gettime without -D_GNU_SOURCE */
#endif
#include "bench_data.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* Magic of the ground-truth cache files (8 bytes, includes the version). */
#define BENCH_GT_MAGIC "CVBGT001"

/* Latent dimensions of the synthetic generator (capped at nDim). */
#define BENCH_SYN_LATENT 32

/*
** Formats zFmt into zErr (nErr bytes) and returns 1, so error paths can
** write `return benchErr(zErr, nErr, "...")`.
*/
static int benchErr(char *zErr, int nErr, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  if (zErr && nErr > 0) vsnprintf(zErr, (size_t)nErr, zFmt, ap);
  va_end(ap);
  return 1;
}

/*
** Sets *p to the defaults: all of Fashion-MNIST from Debian's package, 1,000
** queries, L2, work folder "bench-data", 64 clusters and seed 1 for
** synthetic data (whose --dim defaults to 128 in benchSynthetic).
*/
void benchSpecInit(BenchSpec *p) {
  memset(p, 0, sizeof(*p));
  p->eSource = BENCH_SRC_FMNIST;
  p->zDir = "/usr/share/datasets/fashion-mnist";
  p->zWork = "bench-data";
  p->nQuery = 1000;
  p->nCluster = 64;
  p->iSeed = 1;
  p->eMetric = BENCH_METRIC_L2;
}

/*
** Text describing the dataset options benchSpecParseArg understands.
*/
const char *benchSpecUsage(void) {
  return "dataset options:\n"
         "  --dataset fashion-mnist|synthetic|file   (default fashion-mnist)\n"
         "  --data-dir DIR     Fashion-MNIST folder with the *-idx3-ubyte.gz\n"
         "  --base FILE        base vectors (.fvecs .ivecs .bvecs .npy or raw"
         " float32)\n"
         "  --query FILE       query vectors (same formats)\n"
         "  --n N              base vectors (default: all; synthetic 10000)\n"
         "  --queries Q        query vectors (default 1000)\n"
         "  --dim D            dimensions (synthetic: 128; raw float32 files)\n"
         "  --clusters C       synthetic clusters (default 64)\n"
         "  --seed S           synthetic seed (default 1)\n"
         "  --metric l2|cosine|dot   ground-truth metric (default l2)\n"
         "  --work-dir DIR     databases and ground-truth cache (bench-data)\n";
}

/*
** Parses a metric name into *peMetric. Returns 0 on success, 1 if unknown.
*/
int benchMetricParse(const char *z, BenchMetric *peMetric) {
  if (strcmp(z, "l2") == 0)
    *peMetric = BENCH_METRIC_L2;
  else if (strcmp(z, "cosine") == 0)
    *peMetric = BENCH_METRIC_COSINE;
  else if (strcmp(z, "dot") == 0)
    *peMetric = BENCH_METRIC_DOT;
  else
    return 1;
  return 0;
}

/* Returns the SQL spelling of eMetric ("l2", "cosine", "dot"). */
const char *benchMetricName(BenchMetric eMetric) {
  switch (eMetric) {
  case BENCH_METRIC_COSINE:
    return "cosine";
  case BENCH_METRIC_DOT:
    return "dot";
  default:
    return "l2";
  }
}

/*
** If argv[*pi] is a dataset option, stores its value in *p, advances *pi past
** the value and returns 1. Returns 0 if argv[*pi] is not a dataset option
** (nothing changes) and -1 with a message on stderr if its value is missing
** or invalid.
*/
int benchSpecParseArg(BenchSpec *p, int argc, char **argv, int *pi) {
  const char *zOpt = argv[*pi];
  const char *zVal;
  static const char *azKnown[] = {"--dataset", "--data-dir", "--base",
                                  "--query",   "--n",        "--queries",
                                  "--dim",     "--clusters", "--seed",
                                  "--metric",  "--work-dir", 0};
  int i;
  for (i = 0; azKnown[i] && strcmp(azKnown[i], zOpt) != 0; i++) {
  }
  if (azKnown[i] == 0) return 0;
  if (*pi + 1 >= argc) {
    fprintf(stderr, "option %s needs a value\n", zOpt);
    return -1;
  }
  zVal = argv[++*pi];
  if (strcmp(zOpt, "--dataset") == 0) {
    if (strcmp(zVal, "fashion-mnist") == 0)
      p->eSource = BENCH_SRC_FMNIST;
    else if (strcmp(zVal, "synthetic") == 0)
      p->eSource = BENCH_SRC_SYNTHETIC;
    else if (strcmp(zVal, "file") == 0)
      p->eSource = BENCH_SRC_FILE;
    else {
      fprintf(stderr, "unknown dataset %s\n", zVal);
      return -1;
    }
  } else if (strcmp(zOpt, "--data-dir") == 0)
    p->zDir = zVal;
  else if (strcmp(zOpt, "--base") == 0) {
    p->zBase = zVal;
    p->eSource = BENCH_SRC_FILE;
  } else if (strcmp(zOpt, "--query") == 0)
    p->zQuery = zVal;
  else if (strcmp(zOpt, "--work-dir") == 0)
    p->zWork = zVal;
  else if (strcmp(zOpt, "--n") == 0)
    p->nBase = atoi(zVal);
  else if (strcmp(zOpt, "--queries") == 0)
    p->nQuery = atoi(zVal);
  else if (strcmp(zOpt, "--dim") == 0)
    p->nDim = atoi(zVal);
  else if (strcmp(zOpt, "--clusters") == 0)
    p->nCluster = atoi(zVal);
  else if (strcmp(zOpt, "--seed") == 0) {
    p->iSeed = strtoull(zVal, 0, 10);
  } else if (benchMetricParse(zVal, &p->eMetric)) {
    fprintf(stderr, "unknown metric %s\n", zVal);
    return -1;
  }
  if (p->nBase < 0 || p->nQuery < 0 || p->nDim < 0 || p->nCluster < 0) {
    fprintf(stderr, "option %s: negative value\n", zOpt);
    return -1;
  }
  return 1;
}

/*
** Reads exactly n bytes from pFile into pBuf. Returns 0 on success, 1 on a
** short read or error.
*/
static int benchGzRead(gzFile pFile, void *pBuf, int64_t n) {
  char *z = (char *)pBuf;
  while (n > 0) {
    unsigned int nChunk = n > (1 << 30) ? (1u << 30) : (unsigned int)n;
    int nGot = gzread(pFile, z, nChunk);
    if (nGot <= 0) return 1;
    z += nGot;
    n -= nGot;
  }
  return 0;
}

/* Decodes a big-endian 32-bit integer (IDX headers). */
static uint32_t benchBe32(const unsigned char *a) {
  return ((uint32_t)a[0] << 24) | ((uint32_t)a[1] << 16) |
         ((uint32_t)a[2] << 8) | (uint32_t)a[3];
}

/*
** Reads the first nWant images (0 = all) of the IDX3 file zPath as float32
** 0..255 into a malloc'd array *paOut (caller frees), setting *pnRow and
** *pnDim. Returns 0 on success, 1 with zErr set on error.
*/
static int benchReadIdx(const char *zPath, int nWant, float **paOut, int *pnRow,
                        int *pnDim, char *zErr, int nErr) {
  unsigned char aHdr[16];
  gzFile pFile = gzopen(zPath, "rb");
  unsigned char *aByte = 0;
  float *aOut = 0;
  int64_t nRow, nDim, i;
  if (pFile == 0) return benchErr(zErr, nErr, "cannot open %s", zPath);
  if (benchGzRead(pFile, aHdr, 16) || benchBe32(aHdr) != 0x00000803) {
    gzclose(pFile);
    return benchErr(zErr, nErr, "%s: not an IDX3 ubyte file", zPath);
  }
  nRow = benchBe32(aHdr + 4);
  nDim = (int64_t)benchBe32(aHdr + 8) * benchBe32(aHdr + 12);
  if (nWant > 0 && nWant < nRow) nRow = nWant;
  aByte = (unsigned char *)malloc((size_t)(nRow * nDim));
  aOut = (float *)malloc((size_t)(nRow * nDim) * sizeof(float));
  if (aByte == 0 || aOut == 0 || benchGzRead(pFile, aByte, nRow * nDim)) {
    free(aByte);
    free(aOut);
    gzclose(pFile);
    return benchErr(zErr, nErr, "%s: short file or out of memory", zPath);
  }
  for (i = 0; i < nRow * nDim; i++)
    aOut[i] = (float)aByte[i];
  free(aByte);
  gzclose(pFile);
  *paOut = aOut;
  *pnRow = (int)nRow;
  *pnDim = (int)nDim;
  return 0;
}

/* Returns 1 if zPath ends with zSuffix (optionally followed by ".gz"). */
static int benchHasSuffix(const char *zPath, const char *zSuffix) {
  size_t n = strlen(zPath), m = strlen(zSuffix);
  if (n > 3 && strcmp(zPath + n - 3, ".gz") == 0) n -= 3;
  return n >= m && strncmp(zPath + n - m, zSuffix, m) == 0;
}

/*
** Appends one row of nDim floats to the growing array *paOut (capacity
** *pnAlloc rows, *pnRow used). Returns 0, or 1 when out of memory.
*/
static int benchGrow(float **paOut, int64_t *pnAlloc, int64_t nRow, int nDim) {
  if (nRow >= *pnAlloc) {
    int64_t nNew = *pnAlloc ? *pnAlloc * 2 : 1024;
    float *aNew =
        (float *)realloc(*paOut, (size_t)(nNew * nDim) * sizeof(float));
    if (aNew == 0) return 1;
    *paOut = aNew;
    *pnAlloc = nNew;
  }
  return 0;
}

/*
** Reads the *vecs file zPath (each row: int32 dim, then dim elements of
** nElem bytes: 4 = float (fvecs), -4 = int32 (ivecs), 1 = uint8 (bvecs)),
** at most nWant rows (0 = all). Returns 0 with *paOut (malloc'd), *pnRow and
** *pnDim set, or 1 with zErr set.
*/
static int benchReadVecs(const char *zPath, int nElem, int nWant, float **paOut,
                         int *pnRow, int *pnDim, char *zErr, int nErr) {
  gzFile pFile = gzopen(zPath, "rb");
  float *aOut = 0;
  void *aRaw = 0;
  int64_t nRow = 0, nAlloc = 0;
  int32_t nDim = 0, nThis, i;
  int nByte = nElem < 0 ? -nElem : nElem;
  int rc = 0;
  if (pFile == 0) return benchErr(zErr, nErr, "cannot open %s", zPath);
  while ((nWant == 0 || nRow < nWant) && gzread(pFile, &nThis, 4) == 4) {
    float *aRow;
    if (nThis <= 0 || (nDim && nThis != nDim)) {
      rc = benchErr(zErr, nErr, "%s: bad row dimension %d", zPath, nThis);
      break;
    }
    if (nDim == 0) {
      nDim = nThis;
      aRaw = malloc((size_t)nDim * (size_t)nByte);
      if (aRaw == 0) {
        rc = benchErr(zErr, nErr, "out of memory");
        break;
      }
    }
    if (benchGrow(&aOut, &nAlloc, nRow, nDim)) {
      rc = benchErr(zErr, nErr, "out of memory");
      break;
    }
    if (benchGzRead(pFile, aRaw, (int64_t)nDim * nByte)) {
      rc = benchErr(zErr, nErr, "%s: truncated row %lld", zPath,
                    (long long)nRow);
      break;
    }
    aRow = aOut + nRow * nDim;
    for (i = 0; i < nDim; i++) {
      if (nElem == 4)
        aRow[i] = ((float *)aRaw)[i];
      else if (nElem == -4)
        aRow[i] = (float)((int32_t *)aRaw)[i];
      else
        aRow[i] = (float)((unsigned char *)aRaw)[i];
    }
    nRow++;
  }
  gzclose(pFile);
  free(aRaw);
  if (rc == 0 && nRow == 0) rc = benchErr(zErr, nErr, "%s: no rows", zPath);
  if (rc) {
    free(aOut);
    return rc;
  }
  *paOut = aOut;
  *pnRow = (int)nRow;
  *pnDim = nDim;
  return 0;
}

/*
** Reads a .npy file zPath holding a 2-d little-endian float32 ('<f4') or
** float64 ('<f8') array in C order, at most nWant rows (0 = all). Returns 0
** with *paOut (malloc'd float32), *pnRow and *pnDim set, or 1 with zErr set.
*/
static int benchReadNpy(const char *zPath, int nWant, float **paOut, int *pnRow,
                        int *pnDim, char *zErr, int nErr) {
  unsigned char aMagic[10];
  char *zHdr = 0;
  const char *zShape;
  gzFile pFile = gzopen(zPath, "rb");
  long long nRow = 0, nDim = 0;
  uint32_t nHdr;
  int bF64, rc = 0;
  float *aOut = 0;
  if (pFile == 0) return benchErr(zErr, nErr, "cannot open %s", zPath);
  if (benchGzRead(pFile, aMagic, 10) || memcmp(aMagic, "\x93NUMPY", 6) != 0) {
    gzclose(pFile);
    return benchErr(zErr, nErr, "%s: not a .npy file", zPath);
  }
  if (aMagic[6] == 1) {
    nHdr = aMagic[8] | ((uint32_t)aMagic[9] << 8);
  } else {
    unsigned char a2[2];
    if (benchGzRead(pFile, a2, 2)) rc = 1;
    nHdr = aMagic[8] | ((uint32_t)aMagic[9] << 8) | ((uint32_t)a2[0] << 16) |
           ((uint32_t)a2[1] << 24);
  }
  zHdr = (char *)calloc(1, (size_t)nHdr + 1);
  if (rc || zHdr == 0 || benchGzRead(pFile, zHdr, nHdr)) {
    rc = benchErr(zErr, nErr, "%s: bad .npy header", zPath);
  } else if (strstr(zHdr, "'fortran_order': True")) {
    rc = benchErr(zErr, nErr, "%s: Fortran order is not supported", zPath);
  } else if (strstr(zHdr, "'<f4'") == 0 && strstr(zHdr, "'<f8'") == 0) {
    rc = benchErr(zErr, nErr, "%s: dtype must be <f4 or <f8", zPath);
  } else if ((zShape = strstr(zHdr, "'shape': (")) == 0 ||
             sscanf(zShape + 10, "%lld, %lld", &nRow, &nDim) != 2 ||
             nRow <= 0 || nDim <= 0) {
    rc = benchErr(zErr, nErr, "%s: shape must be (rows, dim)", zPath);
  }
  bF64 = zHdr && strstr(zHdr, "'<f8'") != 0;
  if (rc == 0) {
    int64_t i, nVal;
    if (nWant > 0 && nWant < nRow) nRow = nWant;
    nVal = (int64_t)nRow * nDim;
    aOut = (float *)malloc((size_t)nVal * (bF64 ? 8 : 4));
    if (aOut == 0 || benchGzRead(pFile, aOut, nVal * (bF64 ? 8 : 4))) {
      rc = benchErr(zErr, nErr, "%s: short file or out of memory", zPath);
    } else if (bF64) {
      for (i = 0; i < nVal; i++)
        aOut[i] = (float)((double *)aOut)[i];
      aOut = (float *)realloc(aOut, (size_t)nVal * 4);
    }
  }
  free(zHdr);
  gzclose(pFile);
  if (rc) {
    free(aOut);
    return rc;
  }
  *paOut = aOut;
  *pnRow = (int)nRow;
  *pnDim = (int)nDim;
  return 0;
}

/*
** Reads a raw little-endian float32 file of nDim-wide rows, at most nWant
** rows (0 = all). A trailing partial row is an error (wrong --dim). Returns
** 0 with *paOut (malloc'd) and *pnRow set, or 1 with zErr set.
*/
static int benchReadRaw(const char *zPath, int nDim, int nWant, float **paOut,
                        int *pnRow, char *zErr, int nErr) {
  gzFile pFile;
  float *aOut = 0;
  int64_t nRow = 0, nAlloc = 0;
  int nRowBytes = nDim * 4, rc = 0;
  if (nDim <= 0) {
    return benchErr(zErr, nErr, "%s: raw float32 needs --dim", zPath);
  }
  pFile = gzopen(zPath, "rb");
  if (pFile == 0) return benchErr(zErr, nErr, "cannot open %s", zPath);
  while (rc == 0 && (nWant == 0 || nRow < nWant)) {
    int nGot;
    if (benchGrow(&aOut, &nAlloc, nRow, nDim)) {
      rc = benchErr(zErr, nErr, "out of memory");
      break;
    }
    nGot = gzread(pFile, aOut + nRow * nDim, (unsigned int)nRowBytes);
    if (nGot == 0) break;
    if (nGot != nRowBytes) {
      rc = benchErr(zErr, nErr, "%s: size is not a multiple of %d floats",
                    zPath, nDim);
    }
    nRow++;
  }
  gzclose(pFile);
  if (rc == 0 && nRow == 0) rc = benchErr(zErr, nErr, "%s: empty", zPath);
  if (rc) {
    free(aOut);
    return rc;
  }
  *paOut = aOut;
  *pnRow = (int)nRow;
  return 0;
}

/*
** Reads vector file zPath in the format its name says (.fvecs .ivecs .bvecs
** .npy, else raw float32 of nDim columns), at most nWant rows. Returns 0 with
** *paOut (malloc'd), *pnRow, *pnDim set, or 1 with zErr set.
*/
static int benchReadFile(const char *zPath, int nDim, int nWant, float **paOut,
                         int *pnRow, int *pnDim, char *zErr, int nErr) {
  if (benchHasSuffix(zPath, ".fvecs")) {
    return benchReadVecs(zPath, 4, nWant, paOut, pnRow, pnDim, zErr, nErr);
  }
  if (benchHasSuffix(zPath, ".ivecs")) {
    return benchReadVecs(zPath, -4, nWant, paOut, pnRow, pnDim, zErr, nErr);
  }
  if (benchHasSuffix(zPath, ".bvecs")) {
    return benchReadVecs(zPath, 1, nWant, paOut, pnRow, pnDim, zErr, nErr);
  }
  if (benchHasSuffix(zPath, ".npy")) {
    return benchReadNpy(zPath, nWant, paOut, pnRow, pnDim, zErr, nErr);
  }
  *pnDim = nDim;
  return benchReadRaw(zPath, nDim, nWant, paOut, pnRow, zErr, nErr);
}

/* State of the synthetic generator's PRNG (xoshiro256**). */
typedef struct BenchRng BenchRng;
struct BenchRng {
  uint64_t s[4]; /* generator state */
  int bHave;     /* 1 when rSpare holds an unused normal deviate */
  double rSpare; /* second deviate of the last Box-Muller pair */
};

/* Seeds pRng from iSeed through splitmix64. */
static void benchRngSeed(BenchRng *pRng, uint64_t iSeed) {
  int i;
  for (i = 0; i < 4; i++) {
    uint64_t z = (iSeed += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    pRng->s[i] = z ^ (z >> 31);
  }
  pRng->bHave = 0;
}

/* Returns the next uniform double in [0,1). */
static double benchRngUniform(BenchRng *pRng) {
  uint64_t *s = pRng->s;
  uint64_t x = s[1] * 5;
  uint64_t r = ((x << 7) | (x >> 57)) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return (double)(r >> 11) * (1.0 / 9007199254740992.0);
}

/* Returns a standard normal deviate (Box-Muller, both halves used). */
static double benchRngNormal(BenchRng *pRng) {
  double u, v, r;
  if (pRng->bHave) {
    pRng->bHave = 0;
    return pRng->rSpare;
  }
  do {
    u = benchRngUniform(pRng);
  } while (u <= 1e-300);
  v = benchRngUniform(pRng);
  r = sqrt(-2.0 * log(u));
  pRng->rSpare = r * sin(6.283185307179586 * v);
  pRng->bHave = 1;
  return r * cos(6.283185307179586 * v);
}

/*
** Fills aOut (nRow*nDim floats) with points of the synthetic distribution:
** a cluster is drawn (unequal weights aCum, cumulative), a latent point is
** its centre plus Gaussian noise of the cluster's own spread aSigma, it is
** projected to nDim by aProj (nDim x nLat), and small isotropic noise is
** added. Low intrinsic dimension with overlapping clusters of unequal size
** and spread: realistic, and not trivially easy for a graph index.
*/
static void benchSynthFill(BenchRng *pRng, int nDim, int nCluster, int nLat,
                           const double *aCum, const double *aSigma,
                           const double *aCentre, const double *aProj,
                           float *aOut, int nRow) {
  double aLat[BENCH_SYN_LATENT];
  int iRow, j, l, c;
  for (iRow = 0; iRow < nRow; iRow++) {
    double u = benchRngUniform(pRng);
    float *aRow = aOut + (int64_t)iRow * nDim;
    for (c = 0; c < nCluster - 1 && aCum[c] < u; c++) {
    }
    for (l = 0; l < nLat; l++) {
      aLat[l] = aCentre[c * nLat + l] + aSigma[c] * benchRngNormal(pRng);
    }
    for (j = 0; j < nDim; j++) {
      double r = 0.15 * benchRngNormal(pRng);
      for (l = 0; l < nLat; l++)
        r += aProj[j * nLat + l] * aLat[l];
      aRow[j] = (float)r;
    }
  }
}

/*
** Generates the synthetic dataset of pSpec into pData: base rows from one
** PRNG stream, queries from another, so a smaller --n gives a prefix of a
** larger one and the queries do not depend on --n. Returns 0 or 1 (OOM).
*/
static int benchSynthetic(const BenchSpec *pSpec, int bWithBase,
                          BenchData *pData, char *zErr, int nErr) {
  int nDim = pSpec->nDim ? pSpec->nDim : 128, i;
  int nLat = nDim < BENCH_SYN_LATENT ? nDim : BENCH_SYN_LATENT;
  int nC = pSpec->nCluster > 0 ? pSpec->nCluster : 1;
  int nBase = pSpec->nBase ? pSpec->nBase : 10000;
  double *aCum = (double *)malloc(sizeof(double) * (size_t)nC);
  double *aSigma = (double *)malloc(sizeof(double) * (size_t)nC);
  double *aCentre = (double *)malloc(sizeof(double) * (size_t)(nC * nLat));
  double *aProj = (double *)malloc(sizeof(double) * (size_t)(nDim * nLat));
  double rSum = 0;
  BenchRng rng;
  int rc = 0;
  if (aCum == 0 || aSigma == 0 || aCentre == 0 || aProj == 0) {
    rc = benchErr(zErr, nErr, "out of memory");
    goto synth_out;
  }
  benchRngSeed(&rng, pSpec->iSeed);
  for (i = 0; i < nC; i++) {
    aCum[i] = rSum += 0.2 + 1.6 * benchRngUniform(&rng);
    aSigma[i] = 0.5 + 0.7 * benchRngUniform(&rng);
  }
  for (i = 0; i < nC; i++)
    aCum[i] /= rSum;
  for (i = 0; i < nC * nLat; i++)
    aCentre[i] = benchRngNormal(&rng);
  for (i = 0; i < nDim * nLat; i++)
    aProj[i] = benchRngNormal(&rng) / sqrt(nLat);
  pData->nDim = nDim;
  pData->nQuery = pSpec->nQuery ? pSpec->nQuery : 1000;
  pData->aQuery = (float *)malloc(sizeof(float) * (size_t)pData->nQuery * nDim);
  if (bWithBase) {
    pData->nBase = nBase;
    pData->aBase = (float *)malloc(sizeof(float) * (size_t)nBase * nDim);
  }
  if (pData->aQuery == 0 || (bWithBase && pData->aBase == 0)) {
    rc = benchErr(zErr, nErr, "out of memory");
    goto synth_out;
  }
  if (bWithBase) {
    benchRngSeed(&rng, pSpec->iSeed ^ 0xba5eba5eull);
    benchSynthFill(&rng, nDim, nC, nLat, aCum, aSigma, aCentre, aProj,
                   pData->aBase, nBase);
  }
  benchRngSeed(&rng, pSpec->iSeed ^ 0x9e7e9e7eull);
  benchSynthFill(&rng, nDim, nC, nLat, aCum, aSigma, aCentre, aProj,
                 pData->aQuery, pData->nQuery);
  snprintf(pData->zName, sizeof(pData->zName), "synthetic-%dd", nDim);
  snprintf(pData->zKey, sizeof(pData->zKey), "synth3-n%d-q%d-d%d-c%d-s%llu",
           nBase, pData->nQuery, nDim, nC, (unsigned long long)pSpec->iSeed);
synth_out:
  free(aCum);
  free(aSigma);
  free(aCentre);
  free(aProj);
  return rc;
}

/*
** Writes into zOut (nOut bytes) the final path component of zPath with its
** size and modification time, so the key changes when the file does.
*/
static void benchFileStamp(const char *zPath, char *zOut, int nOut) {
  struct stat st;
  const char *zBase = strrchr(zPath, '/');
  zBase = zBase ? zBase + 1 : zPath;
  if (stat(zPath, &st) != 0) memset(&st, 0, sizeof(st));
  snprintf(zOut, (size_t)nOut, "%.60s-%lld-%lld", zBase, (long long)st.st_size,
           (long long)st.st_mtime);
}

/*
** Loads the dataset pSpec describes into *pData (zeroed first). Without
** bWithBase only the queries are read (a querying process does not need the
** base; the key is the same). Returns 0, or 1 with zErr set; on error
** *pData holds nothing to free.
*/
int benchDataLoad(const BenchSpec *pSpec, int bWithBase, BenchData *pData,
                  char *zErr, int nErr) {
  char zPath[1024];
  int rc = 0, nDim2 = 0;
  memset(pData, 0, sizeof(*pData));
  if (pSpec->eSource == BENCH_SRC_SYNTHETIC) {
    rc = benchSynthetic(pSpec, bWithBase, pData, zErr, nErr);
  } else if (pSpec->eSource == BENCH_SRC_FMNIST) {
    if (bWithBase) {
      snprintf(zPath, sizeof(zPath), "%s/train-images-idx3-ubyte.gz",
               pSpec->zDir);
      rc = benchReadIdx(zPath, pSpec->nBase, &pData->aBase, &pData->nBase,
                        &pData->nDim, zErr, nErr);
    }
    if (rc == 0) {
      snprintf(zPath, sizeof(zPath), "%s/t10k-images-idx3-ubyte.gz",
               pSpec->zDir);
      rc = benchReadIdx(zPath, pSpec->nQuery, &pData->aQuery, &pData->nQuery,
                        &nDim2, zErr, nErr);
    }
    if (rc == 0) {
      pData->nDim = nDim2;
      strcpy(pData->zName, "fashion-mnist");
      snprintf(pData->zKey, sizeof(pData->zKey), "fmnist-n%d-q%d",
               pSpec->nBase ? pSpec->nBase : 60000, pData->nQuery);
    }
  } else {
    char zStamp[2][128];
    if (pSpec->zBase == 0 || pSpec->zQuery == 0) {
      return benchErr(zErr, nErr, "--dataset file needs --base and --query");
    }
    if (bWithBase) {
      rc = benchReadFile(pSpec->zBase, pSpec->nDim, pSpec->nBase, &pData->aBase,
                         &pData->nBase, &pData->nDim, zErr, nErr);
    }
    if (rc == 0) {
      rc = benchReadFile(pSpec->zQuery, pSpec->nDim, pSpec->nQuery,
                         &pData->aQuery, &pData->nQuery, &nDim2, zErr, nErr);
    }
    if (rc == 0 && bWithBase && nDim2 != pData->nDim) {
      rc = benchErr(zErr, nErr, "base has %d dimensions, queries %d",
                    pData->nDim, nDim2);
    }
    if (rc == 0) {
      pData->nDim = nDim2;
      benchFileStamp(pSpec->zBase, zStamp[0], 128);
      benchFileStamp(pSpec->zQuery, zStamp[1], 128);
      {
        const char *zB = strrchr(pSpec->zBase, '/');
        char *zDot;
        snprintf(pData->zName, sizeof(pData->zName), "%.60s",
                 zB ? zB + 1 : pSpec->zBase);
        if ((zDot = strchr(pData->zName, '.')) != 0) *zDot = 0;
      }
      snprintf(pData->zKey, sizeof(pData->zKey), "file-%.100s-%.100s-n%d-q%d",
               zStamp[0], zStamp[1], pSpec->nBase, pData->nQuery);
    }
  }
  if (rc) benchDataFree(pData);
  return rc;
}

/* Frees what benchDataLoad allocated and zeroes *pData. */
void benchDataFree(BenchData *pData) {
  free(pData->aBase);
  free(pData->aQuery);
  memset(pData, 0, sizeof(*pData));
}

/* Frees what benchGroundTruth allocated and zeroes *pTruth. */
void benchTruthFree(BenchTruth *pTruth) {
  free(pTruth->aId);
  free(pTruth->aDist);
  memset(pTruth, 0, sizeof(*pTruth));
}

/*
** Returns the distance between a and b (nDim floats) under eMetric, as the
** engines define it: L2 = sqrt of the sum of squares, cosine = 1 - cos (1
** when a norm is 0), dot = -(a.b). Eight accumulators let the compiler
** vectorise without -ffast-math.
*/
float benchDistance(BenchMetric eMetric, const float *a, const float *b,
                    int nDim) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float na[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float nb[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float rSum = 0, rNa = 0, rNb = 0;
  int i, j;
  if (eMetric == BENCH_METRIC_L2) {
    for (i = 0; i + 8 <= nDim; i += 8) {
      for (j = 0; j < 8; j++) {
        float d = a[i + j] - b[i + j];
        s[j] += d * d;
      }
    }
    for (; i < nDim; i++)
      rSum += (a[i] - b[i]) * (a[i] - b[i]);
    for (j = 0; j < 8; j++)
      rSum += s[j];
    return sqrtf(rSum);
  }
  for (i = 0; i + 8 <= nDim; i += 8) {
    for (j = 0; j < 8; j++) {
      s[j] += a[i + j] * b[i + j];
      na[j] += a[i + j] * a[i + j];
      nb[j] += b[i + j] * b[i + j];
    }
  }
  for (; i < nDim; i++) {
    rSum += a[i] * b[i];
    rNa += a[i] * a[i];
    rNb += b[i] * b[i];
  }
  for (j = 0; j < 8; j++) {
    rSum += s[j];
    rNa += na[j];
    rNb += nb[j];
  }
  if (eMetric == BENCH_METRIC_DOT) return -rSum;
  if (rNa == 0 || rNb == 0) return 1.0f;
  return 1.0f - rSum / sqrtf(rNa * rNb);
}

/*
** Pushes (iId, rDist) into the max-heap aId/aDist of *pn entries (capacity
** nK): kept if there is room or it beats the current worst.
*/
static void benchHeapPush(int32_t *aId, float *aDist, int *pn, int nK,
                          int32_t iId, float rDist) {
  int i, n = *pn;
  if (n == nK) {
    if (rDist >= aDist[0]) return;
    i = 0; /* replace the root, sift down */
    for (;;) {
      int c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && aDist[c + 1] > aDist[c]) c++;
      if (aDist[c] <= rDist) break;
      aId[i] = aId[c];
      aDist[i] = aDist[c];
      i = c;
    }
  } else {
    i = n++; /* append, sift up */
    while (i > 0 && aDist[(i - 1) / 2] < rDist) {
      aId[i] = aId[(i - 1) / 2];
      aDist[i] = aDist[(i - 1) / 2];
      i = (i - 1) / 2;
    }
  }
  aId[i] = iId;
  aDist[i] = rDist;
  *pn = n;
}

/*
** Sorts n (id, dist) pairs ascending by distance, then id (insertion sort:
** n is at most BENCH_GT_K).
*/
static void benchSortPairs(int32_t *aId, float *aDist, int n) {
  int i, j;
  for (i = 1; i < n; i++) {
    int32_t iId = aId[i];
    float r = aDist[i];
    for (j = i;
         j > 0 && (aDist[j - 1] > r || (aDist[j - 1] == r && aId[j - 1] > iId));
         j--) {
      aId[j] = aId[j - 1];
      aDist[j] = aDist[j - 1];
    }
    aId[j] = iId;
    aDist[j] = r;
  }
}

/*
** Builds the cache file name of the ground truth of pData under eMetric into
** zOut (nOut bytes): <work>/gt-<key>-<metric>.bin, '/' in the key made '_'.
*/
static void benchTruthPath(const BenchSpec *pSpec, const BenchData *pData,
                           char *zOut, int nOut) {
  char *z;
  int n = snprintf(zOut, (size_t)nOut, "%s/gt-", pSpec->zWork);
  snprintf(zOut + n, (size_t)(nOut - n), "%s-%s.bin", pData->zKey,
           benchMetricName(pSpec->eMetric));
  for (z = zOut + n; *z; z++) {
    if (*z == '/' || *z == ' ') *z = '_';
  }
}

/*
** Reads the cached ground truth at zPath into *pTruth if it exists and
** matches nQuery and nDim. Returns 0 when loaded, 1 otherwise (nothing to
** free then).
*/
static int benchTruthRead(const char *zPath, int nQuery, int nDim,
                          BenchTruth *pTruth) {
  char aMagic[8];
  int32_t aHdr[4];
  int64_t n;
  FILE *pIn = fopen(zPath, "rb");
  if (pIn == 0) return 1;
  if (fread(aMagic, 8, 1, pIn) != 1 || memcmp(aMagic, BENCH_GT_MAGIC, 8) != 0 ||
      fread(aHdr, sizeof(aHdr), 1, pIn) != 1 || aHdr[0] != nQuery ||
      aHdr[1] <= 0 || aHdr[1] > BENCH_GT_K || aHdr[3] != nDim) {
    fclose(pIn);
    return 1;
  }
  n = (int64_t)aHdr[0] * aHdr[1];
  pTruth->nQuery = aHdr[0];
  pTruth->nK = aHdr[1];
  pTruth->aId = (int32_t *)malloc((size_t)n * 4);
  pTruth->aDist = (float *)malloc((size_t)n * 4);
  if (pTruth->aId == 0 || pTruth->aDist == 0 ||
      fread(pTruth->aId, 4, (size_t)n, pIn) != (size_t)n ||
      fread(pTruth->aDist, 4, (size_t)n, pIn) != (size_t)n) {
    benchTruthFree(pTruth);
    fclose(pIn);
    return 1;
  }
  fclose(pIn);
  return 0;
}

/*
** Writes *pTruth to zPath (through a temporary file renamed into place, so a
** killed run leaves no half file). Errors only print a warning: the cache is
** an optimisation.
*/
static void benchTruthWrite(const char *zPath, const BenchTruth *pTruth,
                            int nBase, int nDim) {
  char zTmp[1100];
  int32_t aHdr[4];
  int64_t n = (int64_t)pTruth->nQuery * pTruth->nK;
  FILE *pOut;
  int bOk;
  snprintf(zTmp, sizeof(zTmp), "%s.tmp%d", zPath, (int)getpid());
  pOut = fopen(zTmp, "wb");
  if (pOut == 0) {
    fprintf(stderr, "warning: cannot write %s: %s\n", zTmp, strerror(errno));
    return;
  }
  aHdr[0] = pTruth->nQuery;
  aHdr[1] = pTruth->nK;
  aHdr[2] = nBase;
  aHdr[3] = nDim;
  bOk = fwrite(BENCH_GT_MAGIC, 8, 1, pOut) == 1 &&
        fwrite(aHdr, sizeof(aHdr), 1, pOut) == 1 &&
        fwrite(pTruth->aId, 4, (size_t)n, pOut) == (size_t)n &&
        fwrite(pTruth->aDist, 4, (size_t)n, pOut) == (size_t)n;
  if (fclose(pOut) != 0) bOk = 0;
  if (!bOk || rename(zTmp, zPath) != 0) {
    fprintf(stderr, "warning: cannot write %s\n", zPath);
    remove(zTmp);
  }
}

/*
** Fills *pTruth with the exact top-BENCH_GT_K neighbours of every query of
** pData under pSpec->eMetric, from the cache under pSpec->zWork when it is
** there, else by brute force over pData->aBase (which must then be loaded;
** the result is cached). Returns 0, or 1 with zErr set.
*/
int benchGroundTruth(const BenchSpec *pSpec, BenchData *pData,
                     BenchTruth *pTruth, char *zErr, int nErr) {
  char zPath[1024];
  int nK, iQ, i;
  double t0;
  memset(pTruth, 0, sizeof(*pTruth));
  benchTruthPath(pSpec, pData, zPath, sizeof(zPath));
  if (benchTruthRead(zPath, pData->nQuery, pData->nDim, pTruth) == 0) return 0;
  if (pData->aBase == 0) {
    return benchErr(zErr, nErr,
                    "no cached ground truth at %s; run a load "
                    "first",
                    zPath);
  }
  nK = pData->nBase < BENCH_GT_K ? pData->nBase : BENCH_GT_K;
  pTruth->nQuery = pData->nQuery;
  pTruth->nK = nK;
  pTruth->aId = (int32_t *)malloc(sizeof(int32_t) * (size_t)pData->nQuery * nK);
  pTruth->aDist = (float *)malloc(sizeof(float) * (size_t)pData->nQuery * nK);
  if (pTruth->aId == 0 || pTruth->aDist == 0) {
    benchTruthFree(pTruth);
    return benchErr(zErr, nErr, "out of memory");
  }
  t0 = benchNow();
  for (iQ = 0; iQ < pData->nQuery; iQ++) {
    const float *aQ = pData->aQuery + (int64_t)iQ * pData->nDim;
    int32_t *aId = pTruth->aId + (int64_t)iQ * nK;
    float *aDist = pTruth->aDist + (int64_t)iQ * nK;
    int n = 0;
    for (i = 0; i < pData->nBase; i++) {
      float r =
          benchDistance(pSpec->eMetric, aQ,
                        pData->aBase + (int64_t)i * pData->nDim, pData->nDim);
      benchHeapPush(aId, aDist, &n, nK, i, r);
    }
    benchSortPairs(aId, aDist, n);
    benchProgress("ground truth", iQ + 1, pData->nQuery);
  }
  fprintf(stderr, "ground truth: %d queries x %d base in %.1f s -> %s\n",
          pData->nQuery, pData->nBase, benchNow() - t0, zPath);
  benchTruthWrite(zPath, pTruth, pData->nBase, pData->nDim);
  return 0;
}

/* Returns a monotonic clock reading in seconds. */
double benchNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
** Times nQuery queries answered by xQuery(pCtx, ...): nWarm untimed ones
** first, then nRun timed passes over all queries, keeping the fastest pass
** (the machine is shared: the fastest pass is the least disturbed). Fills
** pRes->rQps, rP50Ms, rP99Ms, rRecall (recall@nK of the first pass) and
** rQueryRssMb. Returns 0, or 1 if a query failed or memory ran out.
*/
int benchTimeQueries(BenchQueryFn xQuery, void *pCtx, int nQuery, int nK,
                     int nWarm, int nRun, const BenchTruth *pTruth,
                     BenchResult *pRes) {
  int64_t *aId = (int64_t *)malloc(sizeof(int64_t) * (size_t)nK);
  double *aLat = (double *)malloc(sizeof(double) * (size_t)nQuery);
  double *aBest = (double *)malloc(sizeof(double) * (size_t)nQuery);
  double rRecall = 0, rBest = 0;
  int iRun, iQ, rc = 0;
  if (aId == 0 || aLat == 0 || aBest == 0 || nQuery <= 0) rc = 1;
  for (iQ = 0; rc == 0 && iQ < nWarm; iQ++) {
    rc = xQuery(pCtx, iQ % nQuery, aId, nK) < 0;
  }
  for (iRun = 0; rc == 0 && iRun < nRun; iRun++) {
    double tAll = benchNow();
    for (iQ = 0; rc == 0 && iQ < nQuery; iQ++) {
      double t1 = benchNow();
      int n = xQuery(pCtx, iQ, aId, nK);
      aLat[iQ] = (benchNow() - t1) * 1000.0;
      if (n < 0)
        rc = 1;
      else if (iRun == 0)
        rRecall += benchRecall(pTruth, iQ, aId, n, nK);
    }
    tAll = benchNow() - tAll;
    if (rc == 0 && (iRun == 0 || tAll < rBest)) {
      rBest = tAll;
      memcpy(aBest, aLat, sizeof(double) * (size_t)nQuery);
    }
  }
  if (rc == 0) {
    pRes->rQps = nQuery / (rBest > 0 ? rBest : 1e-9);
    pRes->rRecall = rRecall / nQuery;
    pRes->rP50Ms = benchPercentile(aBest, nQuery, 50);
    pRes->rP99Ms = benchPercentile(aBest, nQuery, 99);
    pRes->rQueryRssMb = benchPeakRssMb();
  }
  free(aId);
  free(aLat);
  free(aBest);
  return rc;
}

/* Returns the peak resident set size of this process so far, in MiB. */
double benchPeakRssMb(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
  return (double)ru.ru_maxrss / 1024.0;
}

/* qsort comparison of doubles, ascending. */
static int benchCmpDouble(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/*
** Returns the rPct percentile (0..100, nearest rank) of the nVal values in
** aVal, which it sorts in place. Returns 0 when nVal is 0.
*/
double benchPercentile(double *aVal, int nVal, double rPct) {
  int i;
  if (nVal <= 0) return 0;
  qsort(aVal, (size_t)nVal, sizeof(double), benchCmpDouble);
  i = (int)ceil(rPct / 100.0 * nVal) - 1;
  if (i < 0) i = 0;
  if (i >= nVal) i = nVal - 1;
  return aVal[i];
}

/*
** Returns recall@nK of the nId zero-based base row numbers aId answered for
** query iQuery: the fraction of the nK true neighbours found. An answer not
** among the first nK true neighbours still counts when the ground truth shows
** it at exactly the k-th distance (ties, e.g. duplicate images), the
** tolerance ann-benchmarks also allows. Duplicated answers count once.
*/
double benchRecall(const BenchTruth *pTruth, int iQuery, const int64_t *aId,
                   int nId, int nK) {
  const int32_t *aTrue = pTruth->aId + (int64_t)iQuery * pTruth->nK;
  const float *aDist = pTruth->aDist + (int64_t)iQuery * pTruth->nK;
  float rMax;
  int i, j, nHit = 0;
  if (nK > pTruth->nK) nK = pTruth->nK;
  if (nK <= 0) return 0;
  rMax = aDist[nK - 1];
  rMax += 1e-5f * fabsf(rMax) + 1e-6f;
  for (i = 0; i < nId; i++) {
    int bDup = 0;
    for (j = 0; j < i && !bDup; j++)
      bDup = aId[j] == aId[i];
    if (bDup) continue;
    for (j = 0; j < pTruth->nK && aDist[j] <= rMax; j++) {
      if (aTrue[j] == aId[i]) {
        nHit++;
        break;
      }
    }
  }
  return (double)(nHit > nK ? nK : nHit) / nK;
}

/* Column names of the TSV output, in the order benchResultTsv writes. */
static const char *benchTsvHeader =
    "engine\tconfig\tdataset\tn\tdim\tqueries\tk\tef\toversampling\tload_s"
    "\tload_rows_per_s\tdisk_mb\tload_rss_mb\tquery_rss_mb\tfirst_ms\tqps"
    "\tp50_ms\tp99_ms\trecall";

/*
** Writes *p as one TSV line to pOut, preceded by the header line when
** bHeader. Unknown values are written as -1.
*/
void benchResultTsv(FILE *pOut, const BenchResult *p, int bHeader) {
  if (bHeader) fprintf(pOut, "%s\n", benchTsvHeader);
  fprintf(pOut,
          "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%g\t%.3f\t%.1f\t%.2f\t%.1f\t%.1f"
          "\t%.2f\t%.1f\t%.4f\t%.4f\t%.4f\n",
          p->zEngine, p->zConfig[0] ? p->zConfig : "-", p->zDataset, p->nBase,
          p->nDim, p->nQuery, p->nK, p->iEf, p->rOversample, p->rLoadSec,
          p->rLoadRate,
          p->nDiskBytes < 0 ? -1.0 : (double)p->nDiskBytes / 1048576.0,
          p->rLoadRssMb, p->rQueryRssMb, p->rFirstMs, p->rQps, p->rP50Ms,
          p->rP99Ms, p->rRecall);
}

/*
** Writes *p as one Markdown table row to pOut, preceded by the header and
** separator rows when bHeader.
*/
void benchResultMarkdown(FILE *pOut, const BenchResult *p, int bHeader) {
  if (bHeader) {
    fprintf(pOut, "| engine | config | dataset | n | k | ef | os | load s |"
                  " rows/s | disk MB | load RSS MB | query RSS MB |"
                  " first ms | QPS | p50 ms | p99 ms | recall@k |\n");
    fprintf(pOut, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
                  "--:|--:|--:|--:|\n");
  }
  fprintf(pOut,
          "| %s | %s | %s | %d | %d | %d | %g | %.1f | %.0f | %.1f | %.0f |"
          " %.0f | %.1f | %.0f | %.3f | %.3f | %.4f |\n",
          p->zEngine, p->zConfig[0] ? p->zConfig : "-", p->zDataset, p->nBase,
          p->nK, p->iEf, p->rOversample, p->rLoadSec, p->rLoadRate,
          p->nDiskBytes < 0 ? -1.0 : (double)p->nDiskBytes / 1048576.0,
          p->rLoadRssMb, p->rQueryRssMb, p->rFirstMs, p->rQps, p->rP50Ms,
          p->rP99Ms, p->rRecall);
}

/* Returns 1 if zPath is missing or empty. */
static int benchFileEmpty(const char *zPath) {
  struct stat st;
  return stat(zPath, &st) != 0 || st.st_size == 0;
}

/*
** Writes *p to stdout as TSV and appends it to the files zTsv and zMd (each
** may be NULL), writing a header first into a file that is new or empty.
** Returns 0, or 1 if a file could not be opened (a message is printed).
*/
int benchResultAppend(const char *zTsv, const char *zMd, const BenchResult *p) {
  const char *az[2];
  int i, rc = 0;
  az[0] = zTsv;
  az[1] = zMd;
  benchResultTsv(stdout, p, 0);
  fflush(stdout);
  for (i = 0; i < 2; i++) {
    FILE *pOut;
    int bHeader;
    if (az[i] == 0) continue;
    bHeader = benchFileEmpty(az[i]);
    pOut = fopen(az[i], "a");
    if (pOut == 0) {
      fprintf(stderr, "cannot append to %s: %s\n", az[i], strerror(errno));
      rc = 1;
      continue;
    }
    if (i == 0)
      benchResultTsv(pOut, p, bHeader);
    else
      benchResultMarkdown(pOut, p, bHeader);
    fclose(pOut);
  }
  return rc;
}

/*
** Draws a progress bar "zWhat [=====   ] 42%" on stderr when stderr is a
** terminal, redrawing only when the percentage changes; ends the line when
** iDone reaches nTotal. Does nothing when stderr is not a terminal.
*/
void benchProgress(const char *zWhat, int64_t iDone, int64_t nTotal) {
  static int bTty = -1;
  static int iLast = -1;
  int iPct, i;
  if (bTty < 0) bTty = isatty(2);
  if (!bTty || nTotal <= 0) return;
  iPct = (int)(iDone * 100 / nTotal);
  if (iPct == iLast && iDone < nTotal) return;
  iLast = iPct;
  fprintf(stderr, "\r%-14s [", zWhat);
  for (i = 0; i < 40; i++)
    fputc(i < iPct * 40 / 100 ? '=' : ' ', stderr);
  fprintf(stderr, "] %3d%% %lld/%lld", iPct, (long long)iDone,
          (long long)nTotal);
  if (iDone >= nTotal) {
    fputc('\n', stderr);
    iLast = -1;
  }
}

/* Running total for benchPathBytes (nftw gives no user pointer). */
static int64_t benchWalkTotal = 0;

/* nftw callback of benchPathBytes: adds the size of each regular file. */
static int benchWalkOne(const char *zPath, const struct stat *pSt, int eType,
                        struct FTW *pFtw) {
  (void)zPath;
  (void)pFtw;
  if (eType == FTW_F) benchWalkTotal += (int64_t)pSt->st_size;
  return 0;
}

/*
** Returns the bytes taken by zPath: the size of a file, or the sum of the
** regular files under a folder. Returns 0 when zPath does not exist.
*/
int64_t benchPathBytes(const char *zPath) {
  struct stat st;
  if (stat(zPath, &st) != 0) return 0;
  if (!S_ISDIR(st.st_mode)) return (int64_t)st.st_size;
  benchWalkTotal = 0;
  nftw(zPath, benchWalkOne, 16, FTW_PHYS);
  return benchWalkTotal;
}

/* Running total for benchEvictPath (nftw gives no user pointer). */
static int64_t benchEvictTotal = 0;

/*
** nftw callback of benchEvictPath: flushes one regular file (dirty pages
** cannot be dropped) and asks the kernel to drop its cached pages.
*/
static int benchEvictOne(const char *zPath, const struct stat *pSt, int eType,
                         struct FTW *pFtw) {
  int fd;
  (void)pFtw;
  if (eType != FTW_F) return 0;
  fd = open(zPath, O_RDONLY);
  if (fd < 0) return 0;
  fdatasync(fd);
  if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0) {
    benchEvictTotal += (int64_t)pSt->st_size;
  }
  close(fd);
  return 0;
}

/*
** Drops zPath (a file, or every regular file under a folder) from the page
** cache with posix_fadvise(POSIX_FADV_DONTNEED), after fdatasync. Pages
** mapped by a running process stay. Returns the bytes of the files advised;
** 0 when zPath does not exist.
*/
int64_t benchEvictPath(const char *zPath) {
  benchEvictTotal = 0;
  nftw(zPath, benchEvictOne, 16, FTW_PHYS);
  return benchEvictTotal;
}
