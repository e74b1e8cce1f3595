/*
** colvec_distance_avx2.c — AVX2+FMA distance kernels (x86-64 only).
**
** Every function carries a target attribute, so the file builds with the
** project's ordinary flags; colvecKernelsAvx2() hands the set out only when
** the running CPU has AVX2, FMA and POPCNT. Loads are unaligned, tails of
** float vectors use masked loads (which never touch the masked-out bytes),
** int8 and bit tails are copied into zeroed stack buffers.
**
** Accuracy: float sums use four 8-lane accumulators, combined in a fixed
** order, so the single-vector and pair kernels give bit-identical results.
** int8 sums are exact: values are widened to int16 and multiplied with
** vpmaddwd into int32 lanes, which are moved into an int64 total every
** AVX2_I8_BLOCK elements, long before a lane could overflow.
*/
#include "colvec_distance.h"
#include "colvec_os.h"

#if defined(__x86_64__)

#include <immintrin.h>
#include <string.h>

/* Attribute of every function that uses AVX2 instructions. */
#define AVX2_TARGET __attribute__((target("avx2,fma,popcnt")))
/* The same for helpers that must be inlined into their callers. */
#define AVX2_INLINE                                                            \
  static inline __attribute__((always_inline, target("avx2,fma,popcnt")))

/*
** int8 elements per int32 accumulation block: 2048 steps of 16 elements add
** at most 2048*2*255^2 < 2^31 to one lane.
*/
#define AVX2_I8_BLOCK 32768

/* The int8 kernels share one body; these select what it computes. */
#define AVX2_I8_L2 0    /* sum (a-b)^2 */
#define AVX2_I8_DOT 1   /* sum a*b */
#define AVX2_I8_NORMS 2 /* sum a*b, sum a*a, sum b*b */

/* &avx2aMask[8-r] is a load mask that selects the first r of 8 lanes. */
static const int32_t avx2aMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                      0,  0,  0,  0,  0,  0,  0,  0};

/*
** Returns acc plus, lane by lane, (x-y)^2 when bL2 is set or x*y otherwise.
** bL2 is a constant at every call, so the test folds away.
*/
AVX2_INLINE __m256 avx2Step(int bL2, __m256 acc, __m256 x, __m256 y) {
  if (bL2) {
    __m256 d = _mm256_sub_ps(x, y);
    return _mm256_fmadd_ps(d, d, acc);
  }
  return _mm256_fmadd_ps(x, y, acc);
}

/*
** Returns the sum of the four accumulators' 32 lanes, added in a fixed
** order (the same for every kernel, which keeps them bit-identical).
*/
AVX2_INLINE float avx2Hsum(__m256 s0, __m256 s1, __m256 s2, __m256 s3) {
  __m256 v = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/* Returns the load mask for the first r (1..7) lanes. */
AVX2_INLINE __m256i avx2TailMask(int r) {
  return _mm256_loadu_si256((const __m256i *)&avx2aMask[8 - r]);
}

/*
** Returns sum (a-b)^2 (bL2 set) or sum a*b over n floats. The layout of
** the loop is mirrored exactly by avx2PairF32().
*/
AVX2_INLINE float avx2SumF32(int bL2, const float *a, const float *b, int n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = avx2Step(bL2, s0, _mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    s1 = avx2Step(bL2, s1, _mm256_loadu_ps(a + i + 8),
                  _mm256_loadu_ps(b + i + 8));
    s2 = avx2Step(bL2, s2, _mm256_loadu_ps(a + i + 16),
                  _mm256_loadu_ps(b + i + 16));
    s3 = avx2Step(bL2, s3, _mm256_loadu_ps(a + i + 24),
                  _mm256_loadu_ps(b + i + 24));
  }
  for (; i + 8 <= n; i += 8) {
    s0 = avx2Step(bL2, s0, _mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
  }
  if (i < n) {
    __m256i m = avx2TailMask(n - i);
    s1 = avx2Step(bL2, s1, _mm256_maskload_ps(a + i, m),
                  _mm256_maskload_ps(b + i, m));
  }
  return avx2Hsum(s0, s1, s2, s3);
}

/*
** Computes q against v0 and v1 in one pass (each exactly as avx2SumF32()
** would) and writes the sums to *pOut0 and *pOut1, prefetching the same
** stretch of pAhead0 and pAhead1 as it goes.
*/
AVX2_INLINE void avx2PairF32(int bL2, const float *q, const float *v0,
                             const float *v1, int n, const float *pAhead0,
                             const float *pAhead1, float *pOut0, float *pOut1) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  __m256 t0 = s0, t1 = s0, t2 = s0, t3 = s0;
  int i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 x0 = _mm256_loadu_ps(q + i), x1 = _mm256_loadu_ps(q + i + 8);
    __m256 x2 = _mm256_loadu_ps(q + i + 16), x3 = _mm256_loadu_ps(q + i + 24);
    COLVEC_PREFETCH(pAhead0 + i);
    COLVEC_PREFETCH(pAhead0 + i + 16);
    COLVEC_PREFETCH(pAhead1 + i);
    COLVEC_PREFETCH(pAhead1 + i + 16);
    s0 = avx2Step(bL2, s0, x0, _mm256_loadu_ps(v0 + i));
    s1 = avx2Step(bL2, s1, x1, _mm256_loadu_ps(v0 + i + 8));
    s2 = avx2Step(bL2, s2, x2, _mm256_loadu_ps(v0 + i + 16));
    s3 = avx2Step(bL2, s3, x3, _mm256_loadu_ps(v0 + i + 24));
    t0 = avx2Step(bL2, t0, x0, _mm256_loadu_ps(v1 + i));
    t1 = avx2Step(bL2, t1, x1, _mm256_loadu_ps(v1 + i + 8));
    t2 = avx2Step(bL2, t2, x2, _mm256_loadu_ps(v1 + i + 16));
    t3 = avx2Step(bL2, t3, x3, _mm256_loadu_ps(v1 + i + 24));
  }
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_loadu_ps(q + i);
    COLVEC_PREFETCH(pAhead0 + i);
    COLVEC_PREFETCH(pAhead1 + i);
    s0 = avx2Step(bL2, s0, x, _mm256_loadu_ps(v0 + i));
    t0 = avx2Step(bL2, t0, x, _mm256_loadu_ps(v1 + i));
  }
  if (i < n) {
    __m256i m = avx2TailMask(n - i);
    __m256 x = _mm256_maskload_ps(q + i, m);
    s1 = avx2Step(bL2, s1, x, _mm256_maskload_ps(v0 + i, m));
    t1 = avx2Step(bL2, t1, x, _mm256_maskload_ps(v1 + i, m));
  }
  *pOut0 = avx2Hsum(s0, s1, s2, s3);
  *pOut1 = avx2Hsum(t0, t1, t2, t3);
}

/* Returns sum (a-b)^2 over n floats. */
static AVX2_TARGET float avx2L2sqF32(const float *a, const float *b, int n) {
  return avx2SumF32(1, a, b, n);
}

/* Returns acc plus, lane by lane, |x-y| (the sign bit cleared). */
AVX2_INLINE __m256 avx2AbsStep(__m256 acc, __m256 x, __m256 y) {
  return _mm256_add_ps(
      acc, _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_sub_ps(x, y)));
}

/* Returns sum |a-b| over n floats (the loop of avx2SumF32()). */
static AVX2_TARGET float avx2L1F32(const float *a, const float *b, int n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = avx2AbsStep(s0, _mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    s1 =
        avx2AbsStep(s1, _mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
    s2 = avx2AbsStep(s2, _mm256_loadu_ps(a + i + 16),
                     _mm256_loadu_ps(b + i + 16));
    s3 = avx2AbsStep(s3, _mm256_loadu_ps(a + i + 24),
                     _mm256_loadu_ps(b + i + 24));
  }
  for (; i + 8 <= n; i += 8) {
    s0 = avx2AbsStep(s0, _mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
  }
  if (i < n) {
    __m256i m = avx2TailMask(n - i);
    s1 = avx2AbsStep(s1, _mm256_maskload_ps(a + i, m),
                     _mm256_maskload_ps(b + i, m));
  }
  return avx2Hsum(s0, s1, s2, s3);
}

/* Returns sum a*b over n floats. */
static AVX2_TARGET float avx2DotF32(const float *a, const float *b, int n) {
  return avx2SumF32(0, a, b, n);
}

/* Pair kernel for xL2sqBatchF32 (see ColvecPairF32). */
static AVX2_TARGET void avx2L2sqPairF32(const float *q, const float *v0,
                                        const float *v1, int n,
                                        const float *pAhead0,
                                        const float *pAhead1, float *pOut0,
                                        float *pOut1) {
  avx2PairF32(1, q, v0, v1, n, pAhead0, pAhead1, pOut0, pOut1);
}

/* Pair kernel for xDotBatchF32 (see ColvecPairF32). */
static AVX2_TARGET void avx2DotPairF32(const float *q, const float *v0,
                                       const float *v1, int n,
                                       const float *pAhead0,
                                       const float *pAhead1, float *pOut0,
                                       float *pOut1) {
  avx2PairF32(0, q, v0, v1, n, pAhead0, pAhead1, pOut0, pOut1);
}

/* Batch of L2 sums (see ColvecKernels.xL2sqBatchF32). */
static void avx2L2sqBatchF32(const float *q, const float *const *apVec,
                             int nVec, int n, float *aOut) {
  colvecKernelsBatchF32(avx2L2sqPairF32, avx2L2sqF32, q, apVec, nVec, n, aOut);
}

/* Batch of inner products (see ColvecKernels.xDotBatchF32). */
static void avx2DotBatchF32(const float *q, const float *const *apVec, int nVec,
                            int n, float *aOut) {
  colvecKernelsBatchF32(avx2DotPairF32, avx2DotF32, q, apVec, nVec, n, aOut);
}

/*
** Computes sum a*b, sum a*a and sum b*b over n floats and writes them to
** *pDot, *pNormA and *pNormB.
*/
static AVX2_TARGET void avx2DotNormsF32(const float *a, const float *b, int n,
                                        float *pDot, float *pNormA,
                                        float *pNormB) {
  __m256 d0 = _mm256_setzero_ps(), d1 = d0, a0 = d0, a1 = d0, b0 = d0, b1 = d0;
  __m256 z = d0;
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 x0 = _mm256_loadu_ps(a + i), x1 = _mm256_loadu_ps(a + i + 8);
    __m256 y0 = _mm256_loadu_ps(b + i), y1 = _mm256_loadu_ps(b + i + 8);
    d0 = _mm256_fmadd_ps(x0, y0, d0);
    d1 = _mm256_fmadd_ps(x1, y1, d1);
    a0 = _mm256_fmadd_ps(x0, x0, a0);
    a1 = _mm256_fmadd_ps(x1, x1, a1);
    b0 = _mm256_fmadd_ps(y0, y0, b0);
    b1 = _mm256_fmadd_ps(y1, y1, b1);
  }
  for (; i < n; i += 8) {
    __m256i m = avx2TailMask(n - i < 8 ? n - i : 8);
    __m256 x = _mm256_maskload_ps(a + i, m), y = _mm256_maskload_ps(b + i, m);
    d0 = _mm256_fmadd_ps(x, y, d0);
    a0 = _mm256_fmadd_ps(x, x, a0);
    b0 = _mm256_fmadd_ps(y, y, b0);
  }
  *pDot = avx2Hsum(d0, d1, z, z);
  *pNormA = avx2Hsum(a0, a1, z, z);
  *pNormB = avx2Hsum(b0, b1, z, z);
}

/* Returns the sum of the eight int32 lanes of v, in int64 (no overflow). */
AVX2_INLINE int64_t avx2HsumI32(__m256i v) {
  __m256i lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v));
  __m256i hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1));
  int64_t a[4];
  _mm256_storeu_si256((__m256i *)a, _mm256_add_epi64(lo, hi));
  return a[0] + a[1] + a[2] + a[3];
}

/*
** Adds to the int32 accumulators the terms of eMode (AVX2_I8_*) for the 16
** int8 values at a and b.
*/
AVX2_INLINE void avx2StepI8(int eMode, const int8_t *a, const int8_t *b,
                            __m256i *pS0, __m256i *pS1, __m256i *pS2) {
  __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)a));
  __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)b));
  if (eMode == AVX2_I8_L2) {
    __m256i d = _mm256_sub_epi16(x, y);
    *pS0 = _mm256_add_epi32(*pS0, _mm256_madd_epi16(d, d));
  } else {
    *pS0 = _mm256_add_epi32(*pS0, _mm256_madd_epi16(x, y));
    if (eMode == AVX2_I8_NORMS) {
      *pS1 = _mm256_add_epi32(*pS1, _mm256_madd_epi16(x, x));
      *pS2 = _mm256_add_epi32(*pS2, _mm256_madd_epi16(y, y));
    }
  }
}

/*
** Computes the exact int8 sums of eMode over n elements into aSum[0..2]
** (aSum[0] is the L2 sum or dot product; aSum[1], aSum[2] the squared norms
** for AVX2_I8_NORMS).
*/
AVX2_INLINE void avx2SumI8(int eMode, const int8_t *a, const int8_t *b, int n,
                           int64_t *aSum) {
  __m256i z = _mm256_setzero_si256();
  int i = 0;
  aSum[0] = aSum[1] = aSum[2] = 0;
  while (i + 16 <= n) {
    int iEnd = n - i > AVX2_I8_BLOCK ? i + AVX2_I8_BLOCK : n;
    __m256i s0 = z, s1 = z, s2 = z;
    for (; i + 16 <= iEnd; i += 16) {
      avx2StepI8(eMode, a + i, b + i, &s0, &s1, &s2);
    }
    aSum[0] += avx2HsumI32(s0);
    aSum[1] += avx2HsumI32(s1);
    aSum[2] += avx2HsumI32(s2);
  }
  if (i < n) {
    int8_t aPadA[16] = {0}, aPadB[16] = {0};
    __m256i s0 = z, s1 = z, s2 = z;
    memcpy(aPadA, a + i, (size_t)(n - i));
    memcpy(aPadB, b + i, (size_t)(n - i));
    avx2StepI8(eMode, aPadA, aPadB, &s0, &s1, &s2);
    aSum[0] += avx2HsumI32(s0);
    aSum[1] += avx2HsumI32(s1);
    aSum[2] += avx2HsumI32(s2);
  }
}

/* Returns sum (a-b)^2 over n int8 values, exactly. */
static AVX2_TARGET int64_t avx2L2sqI8(const int8_t *a, const int8_t *b, int n) {
  int64_t aSum[3];
  avx2SumI8(AVX2_I8_L2, a, b, n, aSum);
  return aSum[0];
}

/* Returns sum a*b over n int8 values, exactly. */
static AVX2_TARGET int64_t avx2DotI8(const int8_t *a, const int8_t *b, int n) {
  int64_t aSum[3];
  avx2SumI8(AVX2_I8_DOT, a, b, n, aSum);
  return aSum[0];
}

/*
** Computes sum a*b, sum a*a and sum b*b over n int8 values, exactly, into
** *pDot, *pNormA and *pNormB.
*/
static AVX2_TARGET void avx2DotNormsI8(const int8_t *a, const int8_t *b, int n,
                                       int64_t *pDot, int64_t *pNormA,
                                       int64_t *pNormB) {
  int64_t aSum[3];
  avx2SumI8(AVX2_I8_NORMS, a, b, n, aSum);
  *pDot = aSum[0];
  *pNormA = aSum[1];
  *pNormB = aSum[2];
}

/* Returns the number of set bits of the xor of the 8 bytes at a and b. */
AVX2_INLINE int64_t avx2Popcount8(const uint8_t *a, const uint8_t *b) {
  uint64_t x, y;
  memcpy(&x, a, 8);
  memcpy(&y, b, 8);
  return (int64_t)_mm_popcnt_u64(x ^ y);
}

/*
** Returns the number of differing bits of the nByte bytes at a and b
** (64-bit POPCNT, four independent counts).
*/
static AVX2_TARGET int64_t avx2Hamming(const uint8_t *a, const uint8_t *b,
                                       int nByte) {
  int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int i = 0;
  for (; i + 32 <= nByte; i += 32) {
    s0 += avx2Popcount8(a + i, b + i);
    s1 += avx2Popcount8(a + i + 8, b + i + 8);
    s2 += avx2Popcount8(a + i + 16, b + i + 16);
    s3 += avx2Popcount8(a + i + 24, b + i + 24);
  }
  for (; i + 8 <= nByte; i += 8)
    s0 += avx2Popcount8(a + i, b + i);
  if (i < nByte) {
    uint8_t aPadA[8] = {0}, aPadB[8] = {0};
    memcpy(aPadA, a + i, (size_t)(nByte - i));
    memcpy(aPadB, b + i, (size_t)(nByte - i));
    s1 += avx2Popcount8(aPadA, aPadB);
  }
  return (s0 + s1) + (s2 + s3);
}

/* The AVX2 kernel set. */
static const ColvecKernels avx2Kernels = {
    "avx2",           avx2L2sqF32,     avx2DotF32,     avx2DotNormsF32,
    avx2L2sqI8,       avx2DotI8,       avx2DotNormsI8, avx2Hamming,
    avx2L2sqBatchF32, avx2DotBatchF32, avx2L1F32};

/*
** Returns the AVX2 kernels (static; never freed), or NULL when the CPU (or
** the OS, which must save the YMM state) lacks AVX2, FMA or POPCNT.
*/
const ColvecKernels *colvecKernelsAvx2(void) {
  const unsigned mNeed = COLVEC_CPU_AVX2 | COLVEC_CPU_FMA | COLVEC_CPU_POPCNT;
  if ((colvecOsCpuFeatures() & mNeed) == mNeed) return &avx2Kernels;
  return 0;
}

#else /* !__x86_64__ */

/* Not an x86-64 build: no AVX2 kernels. */
const ColvecKernels *colvecKernelsAvx2(void) { return 0; }

#endif /* __x86_64__ */
