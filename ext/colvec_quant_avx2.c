/*
** colvec_quant_avx2.c — AVX2 code kernels (x86-64 only).
**
** Sets for int8, int4 and bit codes. Every function that uses AVX2 carries
** a target attribute, so the file builds with the project's ordinary
** flags; the sets ask for AVX2, FMA and POPCNT (every AVX2 CPU has them;
** one set of bits for all types) and are chosen only on a CPU that has
** them (colvec_quant_kernels.h). The int sums equal the portable ones up
** to rounding order; the bit rotation, query planes and popcounts give
** exactly the portable results, so codes never depend on the set.
*/
#include "colvec_quant_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

/* Sum of the 8 lanes of v. */
__attribute__((target("avx2,fma"))) static float quantAvx2Hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

/* AVX2 twin of colvecQuantCross8Scalar, 16 dimensions a step. */
__attribute__((target("avx2,fma"))) static float
quantAvx2Cross8(const float *w, const uint8_t *c, int n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  float r;
  int i;
  for (i = 0; i + 16 <= n; i += 16) {
    __m128i b = _mm_loadu_si128((const __m128i *)(c + i));
    __m256 x0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b));
    __m256 x1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(b, 8)));
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), x0, a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8), x1, a1);
  }
  r = quantAvx2Hsum(_mm256_add_ps(a0, a1));
  _mm256_zeroupper(); /* no AVX-SSE transition penalty for the caller */
  return r + colvecQuantCross8Scalar(w + i, c + i, n - i);
}

/* AVX2 twin of colvecQuantCross4Scalar, 8 code bytes (16 dimensions) a
** step. */
__attribute__((target("avx2,fma"))) static float
quantAvx2Cross4(const float *w, const uint8_t *c, int n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  const __m128i m = _mm_set1_epi8(15);
  float r;
  int i;
  for (i = 0; i + 16 <= n; i += 16) {
    __m128i b = _mm_loadl_epi64((const __m128i *)(c + i / 2));
    __m128i lo = _mm_and_si128(b, m);
    __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), m);
    __m128i x = _mm_unpacklo_epi8(lo, hi); /* dims i..i+15 in order */
    __m256 x0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(x));
    __m256 x1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(x, 8)));
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), x0, a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8), x1, a1);
  }
  r = quantAvx2Hsum(_mm256_add_ps(a0, a1));
  _mm256_zeroupper(); /* no AVX-SSE transition penalty for the caller */
  return r + colvecQuantCross4Scalar(w + i, c + i / 2, n - i);
}

/*
** AVX2 rotation round (ColvecQuantBitKernels.xRound). Every butterfly
** computes the same x+y and x-y as the portable transform, so the result
** is bit-identical. Stages h = 1, 2, 4 run inside a register.
*/
__attribute__((target("avx2"))) void
colvecQuantBitRoundAvx2(float *a, const float *aSign, int n) {
  int h, i, j;
  for (i = 0; i < n; i += 8) {
    __m256 v =
        _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(aSign + i));
    __m256 y = _mm256_permute_ps(v, 0xB1); /* swap neighbours */
    v = _mm256_blend_ps(_mm256_add_ps(v, y), _mm256_sub_ps(y, v), 0xAA);
    y = _mm256_permute_ps(v, 0x4E); /* swap pairs */
    v = _mm256_blend_ps(_mm256_add_ps(v, y), _mm256_sub_ps(y, v), 0xCC);
    y = _mm256_permute2f128_ps(v, v, 0x01); /* swap halves */
    v = _mm256_blend_ps(_mm256_add_ps(v, y), _mm256_sub_ps(y, v), 0xF0);
    _mm256_storeu_ps(a + i, v);
  }
  for (h = 8; h < n; h *= 2) {
    for (i = 0; i < n; i += 2 * h) {
      for (j = i; j < i + h; j += 8) {
        __m256 x = _mm256_loadu_ps(a + j), y = _mm256_loadu_ps(a + j + h);
        _mm256_storeu_ps(a + j, _mm256_add_ps(x, y));
        _mm256_storeu_ps(a + j + h, _mm256_sub_ps(x, y));
      }
    }
  }
  _mm256_zeroupper(); /* no AVX-SSE transition penalty for the caller */
}

/*
** AVX2 query planes (ColvecQuantBitKernels.xPlanes): a level is the count
** of thresholds reached (the same exact comparisons as the portable
** kernel), eight coordinates at a time; each plane bit is moved out with a
** sign-bit mask.
*/
__attribute__((target("avx2"))) int64_t
colvecQuantBitPlanesAvx2(const float *z, int nWord, const float *aThresh,
                         uint64_t *aPlane) {
  __m256 aT[COLVEC_QUANT_QUERY_LEVELS - 1];
  __m256i accU = _mm256_setzero_si256();
  int64_t nSumU;
  int w, i, j;
  for (j = 1; j < COLVEC_QUANT_QUERY_LEVELS; j++)
    aT[j - 1] = _mm256_set1_ps(aThresh[j]);
  for (w = 0; w < nWord; w++) {
    uint64_t a[COLVEC_QUANT_QUERY_BITS] = {0};
    for (i = 0; i < 64; i += 8) {
      __m256 v = _mm256_loadu_ps(z + 64 * w + i);
      __m256i u = _mm256_setzero_si256();
      for (j = 0; j < COLVEC_QUANT_QUERY_LEVELS - 1; j++) {
        u = _mm256_sub_epi32(
            u, _mm256_castps_si256(_mm256_cmp_ps(v, aT[j], _CMP_GE_OQ)));
      }
      accU = _mm256_add_epi32(accU, u);
      for (j = 0; j < COLVEC_QUANT_QUERY_BITS; j++) {
        __m256 m = _mm256_castsi256_ps(_mm256_slli_epi32(u, 31 - j));
        a[j] |= (uint64_t)(unsigned)_mm256_movemask_ps(m) << i;
      }
    }
    for (j = 0; j < COLVEC_QUANT_QUERY_BITS; j++)
      aPlane[j * nWord + w] = a[j];
  }
  accU = _mm256_hadd_epi32(accU, accU);
  accU = _mm256_hadd_epi32(accU, accU);
  nSumU = (int64_t)_mm256_extract_epi32(accU, 0) +
          (int64_t)_mm256_extract_epi32(accU, 4);
  _mm256_zeroupper(); /* no AVX-SSE transition penalty for the caller */
  return nSumU;
}

/* colvecQuantBitCount with the POPCNT instruction (the AVX2 count's
** tail). */
__attribute__((target("popcnt"))) static uint64_t
quantAvx2BitCountPopcnt(const uint8_t *pBits, const uint64_t *aPlane,
                        int iFirst, int nWord, uint64_t *pnOne) {
  return colvecQuantBitCount(pBits, aPlane, iFirst, nWord, pnOne);
}

/* Per-byte population counts of x (nibble lookup table). */
__attribute__((target("avx2"))) static __m256i quantAvx2Popcnt8(__m256i x) {
  const __m256i lut =
      _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1,
                       2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i m = _mm256_set1_epi8(15);
  __m256i lo = _mm256_and_si256(x, m);
  __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), m);
  return _mm256_add_epi8(_mm256_shuffle_epi8(lut, lo),
                         _mm256_shuffle_epi8(lut, hi));
}

/* Sum of the four 64-bit lanes of v. */
__attribute__((target("avx2"))) static uint64_t quantAvx2Hsum64(__m256i v) {
  __m128i s =
      _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  return (uint64_t)_mm_cvtsi128_si64(s) +
         (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s));
}

/*
** AVX2 twin of the portable bit count over all nWord words (four at a
** time, the rest by quantAvx2BitCountPopcnt). Per byte the weighted count is at
** most 8*(1+2+4+8) = 120, so it is summed in bytes before _mm256_sad_epu8.
*/
__attribute__((target("avx2"))) static uint64_t
quantAvx2BitCount(const uint8_t *pBits, const uint64_t *aPlane, int nWord,
                  uint64_t *pnOne) {
  __m256i accSum = _mm256_setzero_si256(), accOne = _mm256_setzero_si256();
  const __m256i zero = _mm256_setzero_si256();
  uint64_t nSum;
  int w;
  for (w = 0; w + 4 <= nWord; w += 4) {
    __m256i b = _mm256_loadu_si256((const __m256i *)(pBits + 8 * w));
    __m256i p0 = _mm256_loadu_si256((const __m256i *)(aPlane + w));
    __m256i p1 = _mm256_loadu_si256((const __m256i *)(aPlane + nWord + w));
    __m256i p2 = _mm256_loadu_si256((const __m256i *)(aPlane + 2 * nWord + w));
    __m256i p3 = _mm256_loadu_si256((const __m256i *)(aPlane + 3 * nWord + w));
    __m256i s = quantAvx2Popcnt8(_mm256_and_si256(b, p0));
    s = _mm256_add_epi8(
        s, _mm256_slli_epi16(quantAvx2Popcnt8(_mm256_and_si256(b, p1)), 1));
    s = _mm256_add_epi8(
        s, _mm256_slli_epi16(quantAvx2Popcnt8(_mm256_and_si256(b, p2)), 2));
    s = _mm256_add_epi8(
        s, _mm256_slli_epi16(quantAvx2Popcnt8(_mm256_and_si256(b, p3)), 3));
    accSum = _mm256_add_epi64(accSum, _mm256_sad_epu8(s, zero));
    accOne =
        _mm256_add_epi64(accOne, _mm256_sad_epu8(quantAvx2Popcnt8(b), zero));
  }
  *pnOne = quantAvx2Hsum64(accOne);
  nSum = quantAvx2Hsum64(accSum);
  _mm256_zeroupper(); /* no AVX-SSE transition penalty for the caller */
  return nSum + quantAvx2BitCountPopcnt(pBits, aPlane, w, nWord, pnOne);
}

/* int8 estimate. */
static float quantAvx2Int8Dist(const ColvecQuantQuery *pQuery,
                               const uint8_t *pCode) {
  return colvecQuantIntEstimate(pQuery, pCode, quantAvx2Cross8);
}

/* int8 estimates of a batch. */
static void quantAvx2Int8Batch(const ColvecQuantQuery *pQuery,
                               const uint8_t *const *apCode, int nCode,
                               float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantAvx2Int8Dist);
}

/*
** AVX2 twin of colvecQuantDot8Scalar (the same integer), 32 dimensions a
** step: codes widened to 16 bits, VPMADDWD with the weights.
*/
__attribute__((target("avx2"))) static int32_t
quantAvx2Dot8(const int16_t *w, const uint8_t *c, int n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
  __m128i h;
  int i;
  for (i = 0; i + 32 <= n; i += 32) {
    __m256i x0 =
        _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(c + i)));
    __m256i x1 =
        _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(c + i + 16)));
    a0 = _mm256_add_epi32(
        a0,
        _mm256_madd_epi16(x0, _mm256_loadu_si256((const __m256i *)(w + i))));
    a1 = _mm256_add_epi32(
        a1, _mm256_madd_epi16(
                x1, _mm256_loadu_si256((const __m256i *)(w + i + 16))));
  }
  a0 = _mm256_add_epi32(a0, a1);
  h = _mm_add_epi32(_mm256_castsi256_si128(a0),
                    _mm256_extracti128_si256(a0, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
  _mm256_zeroupper(); /* no AVX-SSE transition penalty for the caller */
  return _mm_cvtsi128_si32(h) + colvecQuantDot8Scalar(w + i, c + i, n - i);
}

/* int8 integer estimate of a scan. */
static float quantAvx2Int8ScanDist(const ColvecQuantQuery *pQuery,
                                   const uint8_t *pCode) {
  return colvecQuantScanEstimate(pQuery, pCode, quantAvx2Dot8);
}

/* int8 integer estimates of a scan's batch. */
static void quantAvx2Int8Scan(const ColvecQuantQuery *pQuery,
                              const uint8_t *const *apCode, int nCode,
                              float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantAvx2Int8ScanDist);
}

/* int4 estimate. */
static float quantAvx2Int4Dist(const ColvecQuantQuery *pQuery,
                               const uint8_t *pCode) {
  return colvecQuantIntEstimate(pQuery, pCode, quantAvx2Cross4);
}

/* int4 estimates of a batch. */
static void quantAvx2Int4Batch(const ColvecQuantQuery *pQuery,
                               const uint8_t *const *apCode, int nCode,
                               float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantAvx2Int4Dist);
}

/* Bit estimate. */
static float quantAvx2BitDist(const ColvecQuantQuery *pQuery,
                              const uint8_t *pCode) {
  return colvecQuantBitEstimate(pQuery, pCode, quantAvx2BitCount);
}

/* Bit estimates of a batch. */
static void quantAvx2BitBatch(const ColvecQuantQuery *pQuery,
                              const uint8_t *const *apCode, int nCode,
                              float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantAvx2BitDist);
}

/* CPU features every AVX2 set needs. */
#define QUANT_AVX2_CPU (COLVEC_CPU_AVX2 | COLVEC_CPU_FMA | COLVEC_CPU_POPCNT)

/* The AVX2 int8 set. */
static const ColvecQuantKernels quantAvx2Int8 = {
    .zName = "avx2",
    .eSet = COLVEC_QUANT_KERNEL_AVX2,
    .mCpu = QUANT_AVX2_CPU,
    .xDistance = quantAvx2Int8Dist,
    .xDistanceBatch = quantAvx2Int8Batch,
    .xScanBatch = quantAvx2Int8Scan,
};

/* The AVX2 int4 set. */
static const ColvecQuantKernels quantAvx2Int4 = {
    .zName = "avx2",
    .eSet = COLVEC_QUANT_KERNEL_AVX2,
    .mCpu = QUANT_AVX2_CPU,
    .xDistance = quantAvx2Int4Dist,
    .xDistanceBatch = quantAvx2Int4Batch,
};

/* The AVX2 bit set (the POPCNT instruction does its tail). */
static const ColvecQuantBitKernels quantAvx2Bit = {
    .base =
        {
            .zName = "avx2",
            .eSet = COLVEC_QUANT_KERNEL_AVX2,
            .mCpu = QUANT_AVX2_CPU,
            .xDistance = quantAvx2BitDist,
            .xDistanceBatch = quantAvx2BitBatch,
        },
    .xRound = colvecQuantBitRoundAvx2,
    .xPlanes = colvecQuantBitPlanesAvx2,
};

/* The AVX2 table. */
static const ColvecQuantIsa quantAvx2Isa = {
    .apType =
        {
            [COLVEC_QUANT_INT8] = &quantAvx2Int8,
            [COLVEC_QUANT_INT4] = &quantAvx2Int4,
            [COLVEC_QUANT_BIT] = &quantAvx2Bit.base,
        },
};

/* The AVX2 kernel table (see colvec_quant_kernels.h). */
const ColvecQuantIsa *colvecQuantIsaAvx2(void) { return &quantAvx2Isa; }

#else /* not x86-64 */

/* The AVX2 kernel table: none on this architecture. */
const ColvecQuantIsa *colvecQuantIsaAvx2(void) { return NULL; }

#endif
