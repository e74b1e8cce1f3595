/*
** colvec_distance_avx512.c — AVX-512 (F, BW, VL) distance kernels (x86-64
** only).
**
** Every function carries a target attribute, so the file builds with the
** project's ordinary flags; colvecKernelsAvx512() hands a set out only when
** the running CPU (and OS) support AVX-512 F, BW and VL. Tails use masked
** loads, which never touch the masked-out bytes, so any n and any alignment
** is fine. Hamming uses VPOPCNTQ where the CPU has AVX512_VPOPCNTDQ and a
** nibble-table count (VPSHUFB + VPSADBW) otherwise: two sets that differ
** only in xHamming.
**
** Accuracy: float sums use four 16-lane accumulators combined in a fixed
** order, so the single-vector and pair kernels are bit-identical. int8 sums
** are exact: int16 products summed by vpmaddwd into int32 lanes, moved into
** int64 every AVX512_I8_BLOCK elements.
*/
#include "colvec_distance.h"
#include "colvec_os.h"

#if defined(__x86_64__)

#include <immintrin.h>

/* Attribute of every function that uses AVX-512 instructions. */
#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
/* The same for helpers that must be inlined into their callers. */
#define AVX512_INLINE                                                          \
  static inline                                                                \
      __attribute__((always_inline, target("avx512f,avx512bw,avx512vl")))
/* Attribute of the VPOPCNTQ Hamming kernel. */
#define AVX512_POPCNT_TARGET                                                   \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vpopcntdq")))

/*
** int8 elements per int32 accumulation block: 1024 steps of 32 elements add
** at most 1024*2*255^2 < 2^31 to one lane.
*/
#define AVX512_I8_BLOCK 32768

/* The int8 kernels share one body; these select what it computes. */
#define AVX512_I8_L2 0    /* sum (a-b)^2 */
#define AVX512_I8_DOT 1   /* sum a*b */
#define AVX512_I8_NORMS 2 /* sum a*b, sum a*a, sum b*b */

/*
** Returns acc plus, lane by lane, (x-y)^2 when bL2 is set or x*y otherwise.
** bL2 is a constant at every call, so the test folds away.
*/
AVX512_INLINE __m512 avx512Step(int bL2, __m512 acc, __m512 x, __m512 y) {
  if (bL2) {
    __m512 d = _mm512_sub_ps(x, y);
    return _mm512_fmadd_ps(d, d, acc);
  }
  return _mm512_fmadd_ps(x, y, acc);
}

/*
** Returns the sum of the four accumulators' 64 lanes, added in a fixed
** order (the same for every kernel, which keeps them bit-identical).
*/
AVX512_INLINE float avx512Hsum(__m512 s0, __m512 s1, __m512 s2, __m512 s3) {
  return _mm512_reduce_add_ps(
      _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

/* Returns the mask of the first r (0..16) lanes. */
AVX512_INLINE __mmask16 avx512Mask16(int r) {
  return (__mmask16)((1u << r) - 1u);
}

/*
** Returns sum (a-b)^2 (bL2 set) or sum a*b over n floats. The layout of
** the loop is mirrored exactly by avx512PairF32().
*/
AVX512_INLINE float avx512SumF32(int bL2, const float *a, const float *b,
                                 int n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int i = 0;
  for (; i + 64 <= n; i += 64) {
    s0 = avx512Step(bL2, s0, _mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
    s1 = avx512Step(bL2, s1, _mm512_loadu_ps(a + i + 16),
                    _mm512_loadu_ps(b + i + 16));
    s2 = avx512Step(bL2, s2, _mm512_loadu_ps(a + i + 32),
                    _mm512_loadu_ps(b + i + 32));
    s3 = avx512Step(bL2, s3, _mm512_loadu_ps(a + i + 48),
                    _mm512_loadu_ps(b + i + 48));
  }
  for (; i + 16 <= n; i += 16) {
    s0 = avx512Step(bL2, s0, _mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
  }
  if (i < n) {
    __mmask16 m = avx512Mask16(n - i);
    s1 = avx512Step(bL2, s1, _mm512_maskz_loadu_ps(m, a + i),
                    _mm512_maskz_loadu_ps(m, b + i));
  }
  return avx512Hsum(s0, s1, s2, s3);
}

/*
** Computes q against v0 and v1 in one pass (each exactly as avx512SumF32()
** would) and writes the sums to *pOut0 and *pOut1, prefetching the same
** stretch of pAhead0 and pAhead1 as it goes.
*/
AVX512_INLINE void avx512PairF32(int bL2, const float *q, const float *v0,
                                 const float *v1, int n, const float *pAhead0,
                                 const float *pAhead1, float *pOut0,
                                 float *pOut1) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  __m512 t0 = s0, t1 = s0, t2 = s0, t3 = s0;
  int i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512 x0 = _mm512_loadu_ps(q + i), x1 = _mm512_loadu_ps(q + i + 16);
    __m512 x2 = _mm512_loadu_ps(q + i + 32), x3 = _mm512_loadu_ps(q + i + 48);
    COLVEC_PREFETCH(pAhead0 + i);
    COLVEC_PREFETCH(pAhead0 + i + 16);
    COLVEC_PREFETCH(pAhead0 + i + 32);
    COLVEC_PREFETCH(pAhead0 + i + 48);
    COLVEC_PREFETCH(pAhead1 + i);
    COLVEC_PREFETCH(pAhead1 + i + 16);
    COLVEC_PREFETCH(pAhead1 + i + 32);
    COLVEC_PREFETCH(pAhead1 + i + 48);
    s0 = avx512Step(bL2, s0, x0, _mm512_loadu_ps(v0 + i));
    s1 = avx512Step(bL2, s1, x1, _mm512_loadu_ps(v0 + i + 16));
    s2 = avx512Step(bL2, s2, x2, _mm512_loadu_ps(v0 + i + 32));
    s3 = avx512Step(bL2, s3, x3, _mm512_loadu_ps(v0 + i + 48));
    t0 = avx512Step(bL2, t0, x0, _mm512_loadu_ps(v1 + i));
    t1 = avx512Step(bL2, t1, x1, _mm512_loadu_ps(v1 + i + 16));
    t2 = avx512Step(bL2, t2, x2, _mm512_loadu_ps(v1 + i + 32));
    t3 = avx512Step(bL2, t3, x3, _mm512_loadu_ps(v1 + i + 48));
  }
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_loadu_ps(q + i);
    COLVEC_PREFETCH(pAhead0 + i);
    COLVEC_PREFETCH(pAhead1 + i);
    s0 = avx512Step(bL2, s0, x, _mm512_loadu_ps(v0 + i));
    t0 = avx512Step(bL2, t0, x, _mm512_loadu_ps(v1 + i));
  }
  if (i < n) {
    __mmask16 m = avx512Mask16(n - i);
    __m512 x = _mm512_maskz_loadu_ps(m, q + i);
    s1 = avx512Step(bL2, s1, x, _mm512_maskz_loadu_ps(m, v0 + i));
    t1 = avx512Step(bL2, t1, x, _mm512_maskz_loadu_ps(m, v1 + i));
  }
  *pOut0 = avx512Hsum(s0, s1, s2, s3);
  *pOut1 = avx512Hsum(t0, t1, t2, t3);
}

/* Returns sum (a-b)^2 over n floats. */
static AVX512_TARGET float avx512L2sqF32(const float *a, const float *b,
                                         int n) {
  return avx512SumF32(1, a, b, n);
}

/* Returns acc plus, lane by lane, |x-y|. */
AVX512_INLINE __m512 avx512AbsStep(__m512 acc, __m512 x, __m512 y) {
  return _mm512_add_ps(acc, _mm512_abs_ps(_mm512_sub_ps(x, y)));
}

/* Returns sum |a-b| over n floats (the loop of avx512SumF32()). */
static AVX512_TARGET float avx512L1F32(const float *a, const float *b, int n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int i = 0;
  for (; i + 64 <= n; i += 64) {
    s0 = avx512AbsStep(s0, _mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
    s1 = avx512AbsStep(s1, _mm512_loadu_ps(a + i + 16),
                       _mm512_loadu_ps(b + i + 16));
    s2 = avx512AbsStep(s2, _mm512_loadu_ps(a + i + 32),
                       _mm512_loadu_ps(b + i + 32));
    s3 = avx512AbsStep(s3, _mm512_loadu_ps(a + i + 48),
                       _mm512_loadu_ps(b + i + 48));
  }
  for (; i + 16 <= n; i += 16) {
    s0 = avx512AbsStep(s0, _mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
  }
  if (i < n) {
    __mmask16 m = avx512Mask16(n - i);
    s1 = avx512AbsStep(s1, _mm512_maskz_loadu_ps(m, a + i),
                       _mm512_maskz_loadu_ps(m, b + i));
  }
  return avx512Hsum(s0, s1, s2, s3);
}

/* Returns sum a*b over n floats. */
static AVX512_TARGET float avx512DotF32(const float *a, const float *b, int n) {
  return avx512SumF32(0, a, b, n);
}

/* Pair kernel for xL2sqBatchF32 (see ColvecPairF32). */
static AVX512_TARGET void avx512L2sqPairF32(const float *q, const float *v0,
                                            const float *v1, int n,
                                            const float *pAhead0,
                                            const float *pAhead1, float *pOut0,
                                            float *pOut1) {
  avx512PairF32(1, q, v0, v1, n, pAhead0, pAhead1, pOut0, pOut1);
}

/* Pair kernel for xDotBatchF32 (see ColvecPairF32). */
static AVX512_TARGET void avx512DotPairF32(const float *q, const float *v0,
                                           const float *v1, int n,
                                           const float *pAhead0,
                                           const float *pAhead1, float *pOut0,
                                           float *pOut1) {
  avx512PairF32(0, q, v0, v1, n, pAhead0, pAhead1, pOut0, pOut1);
}

/* Batch of L2 sums (see ColvecKernels.xL2sqBatchF32). */
static void avx512L2sqBatchF32(const float *q, const float *const *apVec,
                               int nVec, int n, float *aOut) {
  colvecKernelsBatchF32(avx512L2sqPairF32, avx512L2sqF32, q, apVec, nVec, n,
                        aOut);
}

/* Batch of inner products (see ColvecKernels.xDotBatchF32). */
static void avx512DotBatchF32(const float *q, const float *const *apVec,
                              int nVec, int n, float *aOut) {
  colvecKernelsBatchF32(avx512DotPairF32, avx512DotF32, q, apVec, nVec, n,
                        aOut);
}

/*
** Computes sum a*b, sum a*a and sum b*b over n floats and writes them to
** *pDot, *pNormA and *pNormB.
*/
static AVX512_TARGET void avx512DotNormsF32(const float *a, const float *b,
                                            int n, float *pDot, float *pNormA,
                                            float *pNormB) {
  __m512 d0 = _mm512_setzero_ps(), d1 = d0, a0 = d0, a1 = d0, b0 = d0, b1 = d0;
  __m512 z = d0;
  int i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 x0 = _mm512_loadu_ps(a + i), x1 = _mm512_loadu_ps(a + i + 16);
    __m512 y0 = _mm512_loadu_ps(b + i), y1 = _mm512_loadu_ps(b + i + 16);
    d0 = _mm512_fmadd_ps(x0, y0, d0);
    d1 = _mm512_fmadd_ps(x1, y1, d1);
    a0 = _mm512_fmadd_ps(x0, x0, a0);
    a1 = _mm512_fmadd_ps(x1, x1, a1);
    b0 = _mm512_fmadd_ps(y0, y0, b0);
    b1 = _mm512_fmadd_ps(y1, y1, b1);
  }
  for (; i < n; i += 16) {
    __mmask16 m = avx512Mask16(n - i < 16 ? n - i : 16);
    __m512 x = _mm512_maskz_loadu_ps(m, a + i);
    __m512 y = _mm512_maskz_loadu_ps(m, b + i);
    d0 = _mm512_fmadd_ps(x, y, d0);
    a0 = _mm512_fmadd_ps(x, x, a0);
    b0 = _mm512_fmadd_ps(y, y, b0);
  }
  *pDot = avx512Hsum(d0, d1, z, z);
  *pNormA = avx512Hsum(a0, a1, z, z);
  *pNormB = avx512Hsum(b0, b1, z, z);
}

/* Returns the sum of the sixteen int32 lanes of v, in int64 (no overflow). */
AVX512_INLINE int64_t avx512HsumI32(__m512i v) {
  __m512i lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v));
  __m512i hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v, 1));
  return (int64_t)_mm512_reduce_add_epi64(_mm512_add_epi64(lo, hi));
}

/*
** Adds to the int32 accumulators the terms of eMode (AVX512_I8_*) for the
** first r (1..32) int8 values at a and b; the others are not read.
*/
AVX512_INLINE void avx512StepI8(int eMode, const int8_t *a, const int8_t *b,
                                int r, __m512i *pS0, __m512i *pS1,
                                __m512i *pS2) {
  __mmask32 m = r >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << r) - 1u);
  __m512i x = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, a));
  __m512i y = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, b));
  if (eMode == AVX512_I8_L2) {
    __m512i d = _mm512_sub_epi16(x, y);
    *pS0 = _mm512_add_epi32(*pS0, _mm512_madd_epi16(d, d));
  } else {
    *pS0 = _mm512_add_epi32(*pS0, _mm512_madd_epi16(x, y));
    if (eMode == AVX512_I8_NORMS) {
      *pS1 = _mm512_add_epi32(*pS1, _mm512_madd_epi16(x, x));
      *pS2 = _mm512_add_epi32(*pS2, _mm512_madd_epi16(y, y));
    }
  }
}

/*
** Computes the exact int8 sums of eMode over n elements into aSum[0..2]
** (aSum[0] is the L2 sum or dot product; aSum[1], aSum[2] the squared norms
** for AVX512_I8_NORMS).
*/
AVX512_INLINE void avx512SumI8(int eMode, const int8_t *a, const int8_t *b,
                               int n, int64_t *aSum) {
  __m512i z = _mm512_setzero_si512();
  int i = 0;
  aSum[0] = aSum[1] = aSum[2] = 0;
  while (i < n) {
    int iEnd = n - i > AVX512_I8_BLOCK ? i + AVX512_I8_BLOCK : n;
    __m512i s0 = z, s1 = z, s2 = z;
    for (; i < iEnd; i += 32) {
      avx512StepI8(eMode, a + i, b + i, iEnd - i, &s0, &s1, &s2);
    }
    aSum[0] += avx512HsumI32(s0);
    aSum[1] += avx512HsumI32(s1);
    aSum[2] += avx512HsumI32(s2);
  }
}

/* Returns sum (a-b)^2 over n int8 values, exactly. */
static AVX512_TARGET int64_t avx512L2sqI8(const int8_t *a, const int8_t *b,
                                          int n) {
  int64_t aSum[3];
  avx512SumI8(AVX512_I8_L2, a, b, n, aSum);
  return aSum[0];
}

/* Returns sum a*b over n int8 values, exactly. */
static AVX512_TARGET int64_t avx512DotI8(const int8_t *a, const int8_t *b,
                                         int n) {
  int64_t aSum[3];
  avx512SumI8(AVX512_I8_DOT, a, b, n, aSum);
  return aSum[0];
}

/*
** Computes sum a*b, sum a*a and sum b*b over n int8 values, exactly, into
** *pDot, *pNormA and *pNormB.
*/
static AVX512_TARGET void avx512DotNormsI8(const int8_t *a, const int8_t *b,
                                           int n, int64_t *pDot,
                                           int64_t *pNormA, int64_t *pNormB) {
  int64_t aSum[3];
  avx512SumI8(AVX512_I8_NORMS, a, b, n, aSum);
  *pDot = aSum[0];
  *pNormA = aSum[1];
  *pNormB = aSum[2];
}

/* Returns the mask of the first r (1..64) bytes of a 64-byte load. */
AVX512_INLINE __mmask64 avx512Mask64(int r) {
  return r >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << r) - 1u);
}

/*
** Returns the number of differing bits of the nByte bytes at a and b,
** counting each byte with a 16-entry nibble table (AVX-512 BW only).
*/
static AVX512_TARGET int64_t avx512HammingLut(const uint8_t *a,
                                              const uint8_t *b, int nByte) {
  const __m512i lut = _mm512_broadcast_i32x4(
      _mm_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4));
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  __m512i acc = _mm512_setzero_si512();
  int i;
  for (i = 0; i < nByte; i += 64) {
    __mmask64 m = avx512Mask64(nByte - i);
    __m512i x = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, a + i),
                                 _mm512_maskz_loadu_epi8(m, b + i));
    __m512i lo = _mm512_and_si512(x, low4);
    __m512i hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), low4);
    __m512i c = _mm512_add_epi8(_mm512_shuffle_epi8(lut, lo),
                                _mm512_shuffle_epi8(lut, hi));
    acc = _mm512_add_epi64(acc, _mm512_sad_epu8(c, _mm512_setzero_si512()));
  }
  return (int64_t)_mm512_reduce_add_epi64(acc);
}

/*
** Returns the number of differing bits of the nByte bytes at a and b,
** counted with VPOPCNTQ (needs AVX512_VPOPCNTDQ).
*/
static AVX512_POPCNT_TARGET int64_t avx512HammingPopcnt(const uint8_t *a,
                                                        const uint8_t *b,
                                                        int nByte) {
  __m512i acc = _mm512_setzero_si512();
  int i;
  for (i = 0; i < nByte; i += 64) {
    __mmask64 m = avx512Mask64(nByte - i);
    __m512i x = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, a + i),
                                 _mm512_maskz_loadu_epi8(m, b + i));
    acc = _mm512_add_epi64(acc, _mm512_popcnt_epi64(x));
  }
  return (int64_t)_mm512_reduce_add_epi64(acc);
}

/* The AVX-512 kernel set for CPUs without VPOPCNTQ. */
static const ColvecKernels avx512Kernels = {
    "avx512",           avx512L2sqF32,     avx512DotF32,     avx512DotNormsF32,
    avx512L2sqI8,       avx512DotI8,       avx512DotNormsI8, avx512HammingLut,
    avx512L2sqBatchF32, avx512DotBatchF32, avx512L1F32};

/* The same with the VPOPCNTQ Hamming kernel. */
static const ColvecKernels avx512KernelsPopcnt = {
    "avx512",          avx512L2sqF32,       avx512DotF32,
    avx512DotNormsF32, avx512L2sqI8,        avx512DotI8,
    avx512DotNormsI8,  avx512HammingPopcnt, avx512L2sqBatchF32,
    avx512DotBatchF32, avx512L1F32};

/*
** Returns the AVX-512 kernels without VPOPCNTQ (static; never freed), or
** NULL when the CPU (or the OS, which must save the ZMM state) lacks
** AVX-512 F, BW or VL.
*/
const ColvecKernels *colvecKernelsAvx512Base(void) {
  if ((colvecOsCpuFeatures() & COLVEC_CPU_AVX512) == 0) return 0;
  return &avx512Kernels;
}

/*
** Returns the best AVX-512 kernels this CPU runs (static; never freed): the
** VPOPCNTQ set when the CPU has AVX512_VPOPCNTDQ, else the base set, else
** NULL.
*/
const ColvecKernels *colvecKernelsAvx512(void) {
  if (colvecKernelsAvx512Base() == 0) return 0;
  if (colvecOsCpuFeatures() & COLVEC_CPU_AVX512POP) return &avx512KernelsPopcnt;
  return &avx512Kernels;
}

#else /* !__x86_64__ */

/* Not an x86-64 build: no AVX-512 kernels. */
const ColvecKernels *colvecKernelsAvx512Base(void) { return 0; }

/* Not an x86-64 build: no AVX-512 kernels. */
const ColvecKernels *colvecKernelsAvx512(void) { return 0; }

#endif /* __x86_64__ */
