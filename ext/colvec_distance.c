/*
** colvec_distance.c — the portable scalar distance kernels, the run-time
** choice of kernel set, and the metric wrappers that turn raw sums into the
** distances reported to SQL.
**
** The scalar kernels are the reference the SIMD sets are tested against:
** plain C, float sums kept in four independent float accumulators (so the
** compiler can pipeline them), int8 and bit sums exact in int64.
*/
#include "colvec_distance.h"
#include "colvec_os.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
** Returns sum (a[i]-b[i])^2 over n floats (0 when n<=0).
*/
static float distL2sqF32(const float *a, const float *b, int n) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    float d0 = a[i] - b[i], d1 = a[i + 1] - b[i + 1];
    float d2 = a[i + 2] - b[i + 2], d3 = a[i + 3] - b[i + 3];
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; i < n; i++) {
    float d = a[i] - b[i];
    s0 += d * d;
  }
  return (s0 + s1) + (s2 + s3);
}

/*
** Returns sum |a[i]-b[i]| over n floats (0 when n<=0), in the same four
** accumulators as distL2sqF32().
*/
static float distL1F32(const float *a, const float *b, int n) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += fabsf(a[i] - b[i]);
    s1 += fabsf(a[i + 1] - b[i + 1]);
    s2 += fabsf(a[i + 2] - b[i + 2]);
    s3 += fabsf(a[i + 3] - b[i + 3]);
  }
  for (; i < n; i++)
    s0 += fabsf(a[i] - b[i]);
  return (s0 + s1) + (s2 + s3);
}

/*
** Returns sum |a[i]-b[i]| over n int8 values, exactly. No kernel set has
** its own version: int8 l1 columns are searched exactly (never quantized),
** and this loop is what every set uses.
*/
static int64_t distL1I8(const int8_t *a, const int8_t *b, int n) {
  int64_t s = 0;
  int i;
  for (i = 0; i < n; i++) {
    int d = (int)a[i] - (int)b[i];
    s += d < 0 ? -d : d;
  }
  return s;
}

/*
** Returns sum a[i]*b[i] over n floats (0 when n<=0).
*/
static float distDotF32(const float *a, const float *b, int n) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; i++)
    s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

/*
** Computes sum a*b, sum a*a and sum b*b over n floats in one pass and writes
** them to *pDot, *pNormA and *pNormB.
*/
static void distDotNormsF32(const float *a, const float *b, int n, float *pDot,
                            float *pNormA, float *pNormB) {
  float d0 = 0.0f, d1 = 0.0f, a0 = 0.0f, a1 = 0.0f, b0 = 0.0f, b1 = 0.0f;
  int i = 0;
  for (; i + 2 <= n; i += 2) {
    d0 += a[i] * b[i];
    d1 += a[i + 1] * b[i + 1];
    a0 += a[i] * a[i];
    a1 += a[i + 1] * a[i + 1];
    b0 += b[i] * b[i];
    b1 += b[i + 1] * b[i + 1];
  }
  if (i < n) {
    d0 += a[i] * b[i];
    a0 += a[i] * a[i];
    b0 += b[i] * b[i];
  }
  *pDot = d0 + d1;
  *pNormA = a0 + a1;
  *pNormB = b0 + b1;
}

/*
** Returns sum (a[i]-b[i])^2 over n int8 values, exactly.
*/
static int64_t distL2sqI8(const int8_t *a, const int8_t *b, int n) {
  int64_t s = 0;
  int i;
  for (i = 0; i < n; i++) {
    int d = (int)a[i] - (int)b[i];
    s += d * d;
  }
  return s;
}

/*
** Returns sum a[i]*b[i] over n int8 values, exactly.
*/
static int64_t distDotI8(const int8_t *a, const int8_t *b, int n) {
  int64_t s = 0;
  int i;
  for (i = 0; i < n; i++)
    s += (int)a[i] * (int)b[i];
  return s;
}

/*
** Computes sum a*b, sum a*a and sum b*b over n int8 values, exactly, and
** writes them to *pDot, *pNormA and *pNormB.
*/
static void distDotNormsI8(const int8_t *a, const int8_t *b, int n,
                           int64_t *pDot, int64_t *pNormA, int64_t *pNormB) {
  int64_t sd = 0, sa = 0, sb = 0;
  int i;
  for (i = 0; i < n; i++) {
    int x = a[i], y = b[i];
    sd += x * y;
    sa += x * x;
    sb += y * y;
  }
  *pDot = sd;
  *pNormA = sa;
  *pNormB = sb;
}

/*
** Returns the number of set bits of x (portable SWAR count, so the reference
** shares no code with the popcount instructions the SIMD sets use).
*/
static int distPopcount64(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return (int)((x * 0x0101010101010101ULL) >> 56);
}

/*
** Returns the number of differing bits of the nByte bytes at a and b.
*/
static int64_t distHamming(const uint8_t *a, const uint8_t *b, int nByte) {
  int64_t s = 0;
  int i = 0;
  for (; i + 8 <= nByte; i += 8) {
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    s += distPopcount64(x ^ y);
  }
  for (; i < nByte; i++)
    s += distPopcount64((uint64_t)(a[i] ^ b[i]));
  return s;
}

/*
** Pair kernel of the scalar set: two calls of the single kernel (so the
** results are trivially identical to it); the look-ahead is not used.
*/
static void distL2sqPairF32(const float *q, const float *v0, const float *v1,
                            int n, const float *pAhead0, const float *pAhead1,
                            float *pOut0, float *pOut1) {
  COLVEC_UNUSED(pAhead0);
  COLVEC_UNUSED(pAhead1);
  *pOut0 = distL2sqF32(q, v0, n);
  *pOut1 = distL2sqF32(q, v1, n);
}

/* The inner-product twin of distL2sqPairF32(). */
static void distDotPairF32(const float *q, const float *v0, const float *v1,
                           int n, const float *pAhead0, const float *pAhead1,
                           float *pOut0, float *pOut1) {
  COLVEC_UNUSED(pAhead0);
  COLVEC_UNUSED(pAhead1);
  *pOut0 = distDotF32(q, v0, n);
  *pOut1 = distDotF32(q, v1, n);
}

/* Batch form of distL2sqF32(): see ColvecKernels.xL2sqBatchF32. */
static void distL2sqBatchF32(const float *q, const float *const *apVec,
                             int nVec, int n, float *aOut) {
  colvecKernelsBatchF32(distL2sqPairF32, distL2sqF32, q, apVec, nVec, n, aOut);
}

/* Batch form of distDotF32(): see ColvecKernels.xDotBatchF32. */
static void distDotBatchF32(const float *q, const float *const *apVec, int nVec,
                            int n, float *aOut) {
  colvecKernelsBatchF32(distDotPairF32, distDotF32, q, apVec, nVec, n, aOut);
}

/* The scalar kernel set. */
static const ColvecKernels distScalar = {
    "scalar",         distL2sqF32,     distDotF32,     distDotNormsF32,
    distL2sqI8,       distDotI8,       distDotNormsI8, distHamming,
    distL2sqBatchF32, distDotBatchF32, distL1F32};

/*
** Returns the portable scalar kernels (static; never NULL, never freed).
*/
const ColvecKernels *colvecKernelsScalar(void) { return &distScalar; }

/*
** Returns the kernel set named zName if it is compiled in and the CPU runs
** it, else NULL. An unknown name also gives NULL.
*/
static const ColvecKernels *distByName(const char *zName) {
  if (strcmp(zName, "scalar") == 0) return colvecKernelsScalar();
  if (strcmp(zName, "avx2") == 0) return colvecKernelsAvx2();
  if (strcmp(zName, "avx512") == 0) return colvecKernelsAvx512();
  if (strcmp(zName, "neon") == 0) return colvecKernelsNeon();
  return 0;
}

/*
** Works out the kernel set colvecKernelsBest() returns: the one that
** COLVEC_KERNELS names (scalar if that one is unavailable or unknown), or,
** when the variable is unset or empty, the fastest available.
*/
static const ColvecKernels *distChoose(void) {
  const char *zEnv = getenv("COLVEC_KERNELS");
  const ColvecKernels *p;
  if (zEnv && zEnv[0]) {
    p = distByName(zEnv);
    return p ? p : colvecKernelsScalar();
  }
  if ((p = colvecKernelsAvx512()) != 0) return p;
  if ((p = colvecKernelsAvx2()) != 0) return p;
  if ((p = colvecKernelsNeon()) != 0) return p;
  return colvecKernelsScalar();
}

/*
** Returns the kernel set the extension uses (static; never NULL). It is
** chosen on the first call and cached; concurrent first calls all compute
** the same answer, and the cache is read and written atomically, so the
** race is harmless.
*/
const ColvecKernels *colvecKernelsBest(void) {
  static const ColvecKernels *pBest = 0;
  const ColvecKernels *p =
      (const ColvecKernels *)COLVEC_ATOMIC_ACQUIRE_PTR(&pBest);
  if (p == 0) {
    p = distChoose();
    COLVEC_ATOMIC_RELEASE_PTR(&pBest, p);
  }
  return p;
}

/*
** Returns the comma-separated names of the usable kernel sets, in the order
** scalar, avx2, avx512, neon (a static string; never freed).
*/
const char *colvecKernelsAvailable(void) {
  static const char *const azList[8] = {"scalar",
                                        "scalar,avx2",
                                        "scalar,avx512",
                                        "scalar,avx2,avx512",
                                        "scalar,neon",
                                        "scalar,avx2,neon",
                                        "scalar,avx512,neon",
                                        "scalar,avx2,avx512,neon"};
  int m = 0;
  if (colvecKernelsAvx2()) m |= 1;
  if (colvecKernelsAvx512()) m |= 2;
  if (colvecKernelsNeon()) m |= 4;
  return azList[m];
}

/*
** Returns the number of differing bits of two bit vectors of nDim bits
** (packed LSB-first). Pad bits of a partial last byte are ignored.
*/
static double distHammingBits(const ColvecKernels *pK, const uint8_t *a,
                              const uint8_t *b, int nDim) {
  int nFull = nDim / 8;
  int nRest = nDim % 8;
  int64_t s = pK->xHamming(a, b, nFull);
  if (nRest) {
    unsigned x = (unsigned)(a[nFull] ^ b[nFull]) & ((1u << nRest) - 1u);
    s += distPopcount64(x);
  }
  return (double)s;
}

/*
** Returns the cosine distance 1 - dot/sqrt(na*nb), or 1.0 when either
** squared norm is 0. Rounding can push the cosine just past +-1, so the
** result is clamped to [0, 2].
*/
static double distCosine(double dot, double na, double nb) {
  double r;
  if (na <= 0.0 || nb <= 0.0) return 1.0;
  r = 1.0 - dot / sqrt(na * nb);
  return r < 0.0 ? 0.0 : (r > 2.0 ? 2.0 : r);
}

/*
** Returns the distance between vectors a and b of nDim elements of type
** eElem under eMetric, using kernel set pK (see colvec_distance.h). Bit
** vectors always give the Hamming distance, and the Hamming metric on f32 or
** int8 vectors counts differing bits of their bytes; neither combination is
** accepted by the schema parser, so this is only a safe default.
*/
double colvecDistance(const ColvecKernels *pK, ColvecMetric eMetric,
                      ColvecElem eElem, const void *a, const void *b,
                      int nDim) {
  if (eElem == COLVEC_ELEM_BIT) {
    return distHammingBits(pK, (const uint8_t *)a, (const uint8_t *)b, nDim);
  }
  if (eMetric == COLVEC_METRIC_HAMMING) {
    int nByte = eElem == COLVEC_ELEM_F32 ? nDim * 4 : nDim;
    return distHammingBits(pK, (const uint8_t *)a, (const uint8_t *)b,
                           nByte * 8);
  }
  if (eElem == COLVEC_ELEM_F32) {
    const float *x = (const float *)a, *y = (const float *)b;
    float dot, na, nb;
    switch (eMetric) {
    case COLVEC_METRIC_L2:
      return sqrt((double)pK->xL2sqF32(x, y, nDim));
    case COLVEC_METRIC_DOT:
      return -(double)pK->xDotF32(x, y, nDim);
    case COLVEC_METRIC_L1:
      return (double)pK->xL1F32(x, y, nDim);
    default:
      pK->xDotNormsF32(x, y, nDim, &dot, &na, &nb);
      return distCosine(dot, na, nb);
    }
  } else {
    const int8_t *x = (const int8_t *)a, *y = (const int8_t *)b;
    int64_t dot, na, nb;
    switch (eMetric) {
    case COLVEC_METRIC_L2:
      return sqrt((double)pK->xL2sqI8(x, y, nDim));
    case COLVEC_METRIC_DOT:
      return -(double)pK->xDotI8(x, y, nDim);
    case COLVEC_METRIC_L1:
      return (double)distL1I8(x, y, nDim);
    default:
      pK->xDotNormsI8(x, y, nDim, &dot, &na, &nb);
      return distCosine((double)dot, (double)na, (double)nb);
    }
  }
}
