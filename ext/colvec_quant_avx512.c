/*
** colvec_quant_avx512.c — AVX-512 code kernels (x86-64 only).
**
** Sets for int8 codes (16 dimensions a step in one register, the tail
** under a mask) and bit codes (VPOPCNTDQ popcounts; the rotation round and
** query planes are the AVX2 ones). int4 has no AVX-512 set: it runs the
** AVX2 one. Every set asks for AVX2, FMA, POPCNT, AVX-512 and VPOPCNTDQ,
** like the bit codes, so that one AVX-512 ceiling means one thing. The
** functions carry target attributes; see colvec_quant_kernels.h.
*/
#include "colvec_quant_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

/* AVX-512 twin of colvecQuantCross8Scalar (same value up to rounding
** order). */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static float
quantAvx512Cross8(const float *w, const uint8_t *c, int n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
  int i;
  for (i = 0; i + 32 <= n; i += 32) {
    __m512 x0 = _mm512_cvtepi32_ps(
        _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(c + i))));
    __m512 x1 = _mm512_cvtepi32_ps(
        _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(c + i + 16))));
    a0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i), x0, a0);
    a1 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i + 16), x1, a1);
  }
  for (; i < n; i += 16) {
    __mmask16 m = (__mmask16)(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
    __m512 x = _mm512_cvtepi32_ps(
        _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, c + i)));
    a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w + i), x, a0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}

/*
** AVX-512 twin of the portable bit count over all nWord words, eight at a
** time with the VPOPCNTDQ instruction; a short last block is loaded under
** a mask (zeros count nothing).
*/
__attribute__((target("avx512f,avx512bw,avx512vpopcntdq"))) static uint64_t
quantAvx512BitCount(const uint8_t *pBits, const uint64_t *aPlane, int nWord,
                    uint64_t *pnOne) {
  __m512i accSum = _mm512_setzero_si512(), accOne = _mm512_setzero_si512();
  uint64_t nSum;
  int w;
  for (w = 0; w < nWord; w += 8) {
    __mmask8 m = nWord - w >= 8 ? 0xFF : (__mmask8)((1u << (nWord - w)) - 1);
    __m512i b = _mm512_maskz_loadu_epi64(m, pBits + 8 * w);
    __m512i s0 = _mm512_popcnt_epi64(
        _mm512_and_si512(b, _mm512_maskz_loadu_epi64(m, aPlane + w)));
    __m512i s1 = _mm512_popcnt_epi64(
        _mm512_and_si512(b, _mm512_maskz_loadu_epi64(m, aPlane + nWord + w)));
    __m512i s2 = _mm512_popcnt_epi64(_mm512_and_si512(
        b, _mm512_maskz_loadu_epi64(m, aPlane + 2 * nWord + w)));
    __m512i s3 = _mm512_popcnt_epi64(_mm512_and_si512(
        b, _mm512_maskz_loadu_epi64(m, aPlane + 3 * nWord + w)));
    s0 = _mm512_add_epi64(s0, _mm512_slli_epi64(s1, 1));
    s2 = _mm512_add_epi64(s2, _mm512_slli_epi64(s3, 1));
    accSum = _mm512_add_epi64(accSum,
                              _mm512_add_epi64(s0, _mm512_slli_epi64(s2, 2)));
    accOne = _mm512_add_epi64(accOne, _mm512_popcnt_epi64(b));
  }
  *pnOne += (uint64_t)_mm512_reduce_add_epi64(accOne);
  nSum = (uint64_t)_mm512_reduce_add_epi64(accSum);
  _mm256_zeroupper(); /* no AVX-SSE transition penalty for the caller */
  return nSum;
}

/* int8 estimate. */
static float quantAvx512Int8Dist(const ColvecQuantQuery *pQuery,
                                 const uint8_t *pCode) {
  return colvecQuantIntEstimate(pQuery, pCode, quantAvx512Cross8);
}

/* int8 estimates of a batch. */
static void quantAvx512Int8Batch(const ColvecQuantQuery *pQuery,
                                 const uint8_t *const *apCode, int nCode,
                                 float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantAvx512Int8Dist);
}

/*
** AVX-512 twin of colvecQuantDot8Scalar (the same integer), 64 dimensions
** a step (codes widened to 16 bits, VPMADDWD with the weights), the tail
** under a mask.
*/
__attribute__((target("avx512f,avx512bw,avx512vl"))) static int32_t
quantAvx512Dot8(const int16_t *w, const uint8_t *c, int n) {
  __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512();
  int i;
  for (i = 0; i + 64 <= n; i += 64) {
    __m512i x0 =
        _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(c + i)));
    __m512i x1 =
        _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(c + i + 32)));
    a0 = _mm512_add_epi32(a0, _mm512_madd_epi16(x0, _mm512_loadu_si512(w + i)));
    a1 = _mm512_add_epi32(
        a1, _mm512_madd_epi16(x1, _mm512_loadu_si512(w + i + 32)));
  }
  for (; i < n; i += 32) {
    __mmask32 m = n - i >= 32 ? 0xFFFFFFFFu : (1u << (n - i)) - 1;
    __m512i x = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(m, c + i));
    a0 = _mm512_add_epi32(
        a0, _mm512_madd_epi16(x, _mm512_maskz_loadu_epi16(m, w + i)));
  }
  return _mm512_reduce_add_epi32(_mm512_add_epi32(a0, a1));
}

/* int8 integer estimate of a scan. */
static float quantAvx512Int8ScanDist(const ColvecQuantQuery *pQuery,
                                     const uint8_t *pCode) {
  return colvecQuantScanEstimate(pQuery, pCode, quantAvx512Dot8);
}

/* int8 integer estimates of a scan's batch. */
static void quantAvx512Int8Scan(const ColvecQuantQuery *pQuery,
                                const uint8_t *const *apCode, int nCode,
                                float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantAvx512Int8ScanDist);
}

/* Bit estimate. */
static float quantAvx512BitDist(const ColvecQuantQuery *pQuery,
                                const uint8_t *pCode) {
  return colvecQuantBitEstimate(pQuery, pCode, quantAvx512BitCount);
}

/* Bit estimates of a batch. */
static void quantAvx512BitBatch(const ColvecQuantQuery *pQuery,
                                const uint8_t *const *apCode, int nCode,
                                float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantAvx512BitDist);
}

/* CPU features every AVX-512 set needs. */
#define QUANT_AVX512_CPU                                                       \
  (COLVEC_CPU_AVX2 | COLVEC_CPU_FMA | COLVEC_CPU_POPCNT | COLVEC_CPU_AVX512 |  \
   COLVEC_CPU_AVX512POP)

/* The AVX-512 int8 set. */
static const ColvecQuantKernels quantAvx512Int8 = {
    .zName = "avx512",
    .eSet = COLVEC_QUANT_KERNEL_AVX512,
    .mCpu = QUANT_AVX512_CPU,
    .xDistance = quantAvx512Int8Dist,
    .xDistanceBatch = quantAvx512Int8Batch,
    .xScanBatch = quantAvx512Int8Scan,
};

/* The AVX-512 bit set: VPOPCNTDQ popcounts, the AVX2 rotation and planes. */
static const ColvecQuantBitKernels quantAvx512Bit = {
    .base =
        {
            .zName = "avx512",
            .eSet = COLVEC_QUANT_KERNEL_AVX512,
            .mCpu = QUANT_AVX512_CPU,
            .xDistance = quantAvx512BitDist,
            .xDistanceBatch = quantAvx512BitBatch,
        },
    .xRound = colvecQuantBitRoundAvx2,
    .xPlanes = colvecQuantBitPlanesAvx2,
};

/* The AVX-512 table (no int4 set). */
static const ColvecQuantIsa quantAvx512Isa = {
    .apType =
        {
            [COLVEC_QUANT_INT8] = &quantAvx512Int8,
            [COLVEC_QUANT_BIT] = &quantAvx512Bit.base,
        },
};

/* The AVX-512 kernel table (see colvec_quant_kernels.h). */
const ColvecQuantIsa *colvecQuantIsaAvx512(void) { return &quantAvx512Isa; }

#else /* not x86-64 */

/* The AVX-512 kernel table: none on this architecture. */
const ColvecQuantIsa *colvecQuantIsaAvx512(void) { return NULL; }

#endif
