/*
** colvec_quant_bit.c — the 1-bit RaBitQ quantizer.
**
** Parameters: the centroid c of the training vectors (normalised first for
** cosine) and a rotation R rebuilt from a seed: COLVEC_QUANT_ROUNDS rounds
** of random sign flips followed by an (unnormalised) fast Walsh-Hadamard
** transform over nPad dimensions. R is a multiple of an orthogonal matrix;
** the common factor cancels in the estimator, so it is never applied.
**
** A vector x, with v = x - c and y = R v, is coded as the nPad bits
** b[i] = (y[i] > 0) plus two floats:
**   f1 = |v|^2 / sum |y[i]|                       (RaBitQ's 1/<o_bar,o>)
**   f0 = |v|^2 (l2, cosine) or <v, c> (dot)
** For a query q with qc = q - c and z = R qc, RaBitQ's unbiased estimate is
**   <v, qc> ~ f1 * sum (2 b[i] - 1) z[i]
** and then |x - q|^2 = |qc|^2 + |v|^2 - 2 <v, qc> and
** <x, q> = <c, q> + <v, c> + <v, qc>, finished by colvecQuantFinish.
**
** The query z is quantized to 4 bits, z[i] ~ lo + delta*u[i], u[i] in 0..15
** (rounded to the nearest level by comparisons with the midpoints, exact in
** every kernel), stored as 4 bit planes, so sum b[i] z[i] ~ lo*popcount(b) +
** delta * sum_j 2^j popcount(b & plane_j): integer popcounts only, done by
** bitCountScalar or its twins bitCountAvx2 and bitCountAvx512 (identical
** integers).
**
** Kernel sets (BitKernels, a ColvecQuantKernels with two more kernels):
** scalar, AVX2 and AVX-512 for the popcounts, and NEON on aarch64; the
** rotation round and the query's bit planes have a scalar, an AVX2 and a
** NEON version (the AVX-512 set uses the AVX2 ones), all giving identical
** results, so codes never depend on the set.
*/
#include "colvec_os.h"
#include "colvec_quant.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COLVEC_QUANT_AVX2 1
#include <immintrin.h>
#endif

#if defined(__aarch64__)
#define COLVEC_QUANT_NEON 1
#include <arm_neon.h>
#endif

/* Bits of query precision: 4 planes. */
#define BIT_QUERY_BITS 4
/* Levels of the quantized query: 2^BIT_QUERY_BITS. */
#define BIT_QUERY_LEVELS (1 << BIT_QUERY_BITS)

/* Next value of the splitmix64 generator whose state is *pState. */
static uint64_t bitSplitmix64(uint64_t *pState) {
  uint64_t z = (*pState += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/*
** The kernel sets of the bit quantizer: the generic part (distances), then
** the rotation round and the query quantization used by encoding and
** preparation.
*/
typedef struct BitKernels BitKernels;
struct BitKernels {
  ColvecQuantKernels base; /* generic part: must be first */
  /* one rotation round on a[0..n): sign flips by aSign, then bitFwht */
  void (*xRound)(float *a, const float *aSign, int n);
  /* the rotated query as 4 bit planes; returns the sum of the levels */
  int64_t (*xPlanes)(const float *z, int nWord, const float *aThresh,
                     uint64_t *aPlane);
};

/* The bit kernel set chosen for pQuant (its kernel lists hold BitKernels). */
static const BitKernels *bitKernels(const ColvecQuant *pQuant) {
  return (const BitKernels *)pQuant->pKernels;
}

/*
** Builds the rotation signs (aAux, COLVEC_QUANT_ROUNDS*nPad floats, +1 or
** -1) of a bit quantizer from its seed. Returns COLVEC_OK or COLVEC_NOMEM
** (aAux then NULL; the caller frees the quantizer).
*/
static int bitSetup(ColvecQuant *pQuant) {
  int rc = COLVEC_OK;
  int i, n = COLVEC_QUANT_ROUNDS * pQuant->nPad;
  uint64_t iState = pQuant->iSeed, iBits = 0;
  pQuant->aAux = colvecMallocZero(&rc, (int64_t)sizeof(float) * n);
  if (rc != COLVEC_OK) return rc;
  for (i = 0; i < n; i++) {
    if ((i & 63) == 0) iBits = bitSplitmix64(&iState);
    pQuant->aAux[i] = ((iBits >> (i & 63)) & 1) ? -1.0f : 1.0f;
  }
  return COLVEC_OK;
}

/* In-place unnormalised fast Walsh-Hadamard transform of a[0..n), n = 2^k. */
static void bitFwht(float *a, int n) {
  int h, i, j;
  for (h = 1; h < n; h *= 2) {
    for (i = 0; i < n; i += 2 * h) {
      for (j = i; j < i + h; j++) {
        float x = a[j], y = a[j + h];
        a[j] = x + y;
        a[j + h] = x - y;
      }
    }
  }
}

/* One rotation round on a[0..n): sign flips by aSign, then bitFwht. */
static void bitRoundScalar(float *a, const float *aSign, int n) {
  int i;
  for (i = 0; i < n; i++)
    a[i] *= aSign[i];
  bitFwht(a, n);
}

#ifdef COLVEC_QUANT_AVX2
/*
** AVX2 twin of one round (sign flips, then bitFwht) on a[0..n), n a power
** of two >= 64. Every butterfly computes the same x+y and x-y as bitFwht,
** so the result is bit-identical. Stages h = 1, 2, 4 run inside a register.
*/
__attribute__((target("avx2"))) static void
bitRoundAvx2(float *a, const float *aSign, int n) {
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
#endif

#ifdef COLVEC_QUANT_NEON
/*
** NEON twin of one round (sign flips, then bitFwht) on a[0..n), n a power
** of two >= 64. Every butterfly computes the same x+y and x-y as bitFwht,
** so the result is bit-identical. Stages h = 1, 2 run inside a register.
*/
static void bitRoundNeon(float *a, const float *aSign, int n) {
  int h, i, j;
  for (i = 0; i < n; i += 4) {
    float32x4_t v = vmulq_f32(vld1q_f32(a + i), vld1q_f32(aSign + i));
    float32x4_t y = vrev64q_f32(v); /* swap neighbours */
    v = vtrn1q_f32(vaddq_f32(v, y), vsubq_f32(v, y));
    y = vextq_f32(v, v, 2); /* swap pairs */
    v = vcombine_f32(vget_low_f32(vaddq_f32(v, y)),
                     vget_low_f32(vsubq_f32(v, y)));
    vst1q_f32(a + i, v);
  }
  for (h = 4; h < n; h *= 2) {
    for (i = 0; i < n; i += 2 * h) {
      for (j = i; j < i + h; j += 4) {
        float32x4_t x = vld1q_f32(a + j), y = vld1q_f32(a + j + h);
        vst1q_f32(a + j, vaddq_f32(x, y));
        vst1q_f32(a + j + h, vsubq_f32(x, y));
      }
    }
  }
}
#endif

/*
** Writes y = R v to aOut (nPad floats): v (nDim floats) padded with zeros,
** then for each round sign flips and a Walsh-Hadamard transform (the
** quantizer's kernel set's round; every set gives identical results).
*/
static void bitRotate(const ColvecQuant *pQuant, const float *v, float *aOut) {
  int r, i, n = pQuant->nPad;
  void (*xRound)(float *, const float *, int) = bitKernels(pQuant)->xRound;
  memcpy(aOut, v, sizeof(float) * (size_t)pQuant->nDim);
  for (i = pQuant->nDim; i < n; i++)
    aOut[i] = 0.0f;
  for (r = 0; r < COLVEC_QUANT_ROUNDS; r++) {
    xRound(aOut, pQuant->aAux + r * n, n);
  }
}

/* Loads the 64 bits at p (LSB-first byte order) as one word. */
static uint64_t bitLoad64(const uint8_t *p) {
  uint64_t u;
  memcpy(&u, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  u = COLVEC_BSWAP64(u);
#endif
  return u;
}

/*
** Sets the centroid (aParam) to the mean of the training vectors but the
** nSkip outliers aSkip (ascending), summed in double in input order. aTmp
** holds nDim floats of scratch. Returns COLVEC_OK, COLVEC_NOMEM, or
** COLVEC_INTERRUPT when hook pInt (may be NULL) said stop.
*/
static int bitTrain(ColvecQuant *pQuant, const float *aVec, int64_t nVec,
                    int64_t nStride, const int64_t *aSkip, int64_t nSkip,
                    float *aTmp, const ColvecInterrupt *pInt) {
  int rc = COLVEC_OK;
  int d, nDim = pQuant->nDim;
  int64_t i, nUsed = 0, iSkip = 0;
  double *aSum = colvecMallocZero(&rc, (int64_t)sizeof(double) * nDim);
  if (rc != COLVEC_OK) return rc;
  for (i = 0; i < nVec; i++) {
    if (i % COLVEC_QUANT_TICK == COLVEC_QUANT_TICK - 1 &&
        COLVEC_INTERRUPTED(pInt)) {
      colvecFree(aSum);
      return COLVEC_INTERRUPT;
    }
    if (iSkip < nSkip && aSkip[iSkip] == i) {
      iSkip++;
      continue;
    }
    colvecQuantInput(pQuant, aVec + i * nStride, aTmp);
    for (d = 0; d < nDim && isfinite(aTmp[d]); d++) {
    }
    if (d < nDim) continue; /* skip vectors with NaN or infinity */
    for (d = 0; d < nDim; d++)
      aSum[d] += aTmp[d];
    nUsed++;
  }
  for (d = 0; d < nDim; d++) {
    pQuant->aParam[d] = nUsed ? (float)(aSum[d] / (double)nUsed) : 0.0f;
  }
  colvecFree(aSum);
  return COLVEC_OK;
}

/*
** Writes the code of vector aVec to pCode (colvecQuantCodeBytes bytes).
** aTmp holds nPad + nDim floats of scratch.
*/
static void bitEncode(const ColvecQuant *pQuant, const float *aVec,
                      uint8_t *pCode, float *aTmp) {
  int i, nDim = pQuant->nDim, nPad = pQuant->nPad;
  const float *c = pQuant->aParam;
  float *y = aTmp, *v = aTmp + nPad;
  double rNorm = 0.0, rDotC = 0.0, rL1 = 0.0;
  float f1;
  colvecQuantInput(pQuant, aVec, v);
  for (i = 0; i < nDim; i++) {
    v[i] -= c[i];
    rNorm += (double)v[i] * v[i];
    rDotC += (double)v[i] * c[i];
  }
  bitRotate(pQuant, v, y);
  memset(pCode, 0, (size_t)nPad / 8);
  for (i = 0; i < nPad; i++) {
    if (y[i] > 0.0f) pCode[i / 8] |= (uint8_t)(1 << (i & 7));
    rL1 += fabs((double)y[i]);
  }
  f1 = rL1 > 0.0 ? (float)(rNorm / rL1) : 0.0f;
  colvecQuantPutF32(
      pCode + nPad / 8,
      (float)(pQuant->eMetric == COLVEC_METRIC_DOT ? rDotC : rNorm));
  colvecQuantPutF32(pCode + nPad / 8 + 4, f1);
}

/*
** Level of the 4-bit query coordinate x: the number of thresholds
** aThresh[1..15] (non-decreasing) that x reaches, by binary search.
*/
static int bitLevel(float x, const float *aThresh) {
  int u = x >= aThresh[8] ? 8 : 0;
  if (x >= aThresh[u + 4]) u += 4;
  if (x >= aThresh[u + 2]) u += 2;
  if (x >= aThresh[u + 1]) u += 1;
  return u;
}

/*
** Quantizes the rotated query z (64*nWord floats) to 4-bit levels (see
** bitLevel) and writes them as 4 bit planes of nWord words to aPlane.
** Returns the sum of the levels.
*/
static int64_t bitPlanesScalar(const float *z, int nWord, const float *aThresh,
                               uint64_t *aPlane) {
  int64_t nSumU = 0;
  int w, i, j;
  for (w = 0; w < nWord; w++) {
    uint64_t a[BIT_QUERY_BITS] = {0};
    for (i = 0; i < 64; i++) {
      uint64_t u = (uint64_t)bitLevel(z[64 * w + i], aThresh);
      nSumU += (int64_t)u;
      for (j = 0; j < BIT_QUERY_BITS; j++)
        a[j] |= ((u >> j) & 1) << i;
    }
    for (j = 0; j < BIT_QUERY_BITS; j++)
      aPlane[j * nWord + w] = a[j];
  }
  return nSumU;
}

#ifdef COLVEC_QUANT_AVX2
/*
** AVX2 twin of bitPlanesScalar: a level is the count of thresholds reached
** (the same exact comparisons), eight coordinates at a time; each plane
** bit is moved out with a sign-bit mask.
*/
__attribute__((target("avx2"))) static int64_t
bitPlanesAvx2(const float *z, int nWord, const float *aThresh,
              uint64_t *aPlane) {
  __m256 aT[BIT_QUERY_LEVELS - 1];
  __m256i accU = _mm256_setzero_si256();
  int64_t nSumU;
  int w, i, j;
  for (j = 1; j < BIT_QUERY_LEVELS; j++)
    aT[j - 1] = _mm256_set1_ps(aThresh[j]);
  for (w = 0; w < nWord; w++) {
    uint64_t a[BIT_QUERY_BITS] = {0};
    for (i = 0; i < 64; i += 8) {
      __m256 v = _mm256_loadu_ps(z + 64 * w + i);
      __m256i u = _mm256_setzero_si256();
      for (j = 0; j < BIT_QUERY_LEVELS - 1; j++) {
        u = _mm256_sub_epi32(
            u, _mm256_castps_si256(_mm256_cmp_ps(v, aT[j], _CMP_GE_OQ)));
      }
      accU = _mm256_add_epi32(accU, u);
      for (j = 0; j < BIT_QUERY_BITS; j++) {
        __m256 m = _mm256_castsi256_ps(_mm256_slli_epi32(u, 31 - j));
        a[j] |= (uint64_t)(unsigned)_mm256_movemask_ps(m) << i;
      }
    }
    for (j = 0; j < BIT_QUERY_BITS; j++)
      aPlane[j * nWord + w] = a[j];
  }
  accU = _mm256_hadd_epi32(accU, accU);
  accU = _mm256_hadd_epi32(accU, accU);
  nSumU = (int64_t)_mm256_extract_epi32(accU, 0) +
          (int64_t)_mm256_extract_epi32(accU, 4);
  _mm256_zeroupper(); /* no AVX-SSE transition penalty for the caller */
  return nSumU;
}
#endif

#ifdef COLVEC_QUANT_NEON
/*
** NEON twin of bitPlanesScalar: a level is the count of thresholds reached
** (the same exact comparisons, false for NaN), four coordinates at a time;
** each plane's four bits are shifted into place and added across lanes.
*/
static int64_t bitPlanesNeon(const float *z, int nWord, const float *aThresh,
                             uint64_t *aPlane) {
  static const int32_t aLane[4] = {0, 1, 2, 3};
  const int32x4_t vLane = vld1q_s32(aLane);
  const uint32x4_t vOne = vdupq_n_u32(1);
  uint32x4_t accU = vdupq_n_u32(0);
  int w, i, j;
  for (w = 0; w < nWord; w++) {
    uint64_t a[BIT_QUERY_BITS] = {0};
    for (i = 0; i < 64; i += 4) {
      float32x4_t v = vld1q_f32(z + 64 * w + i);
      uint32x4_t u = vdupq_n_u32(0);
      for (j = 1; j < BIT_QUERY_LEVELS; j++) {
        u = vsubq_u32(u, vcgeq_f32(v, vdupq_n_f32(aThresh[j])));
      }
      accU = vaddq_u32(accU, u);
      for (j = 0; j < BIT_QUERY_BITS; j++) {
        uint32x4_t b = vandq_u32(vshlq_u32(u, vdupq_n_s32(-j)), vOne);
        a[j] |= (uint64_t)vaddvq_u32(vshlq_u32(b, vLane)) << i;
      }
    }
    for (j = 0; j < BIT_QUERY_BITS; j++)
      aPlane[j * nWord + w] = a[j];
  }
  return (int64_t)vaddlvq_u32(accU);
}
#endif

/*
** Prepares the query: rotated query z in aWeight[0..nPad), its 4-bit
** version as bit planes in aPlane, and the constants rBase (|qc|^2 or
** <c,q>), rLow, rDelta, rSumQ. The query's buffers are large enough.
*/
static void bitPrepare(const ColvecQuant *pQuant, const float *aQuery,
                       ColvecQuantQuery *pQuery) {
  int i, j, nDim = pQuant->nDim, nPad = pQuant->nPad, nWord = nPad / 64;
  const float *c = pQuant->aParam;
  float *z = pQuery->aWeight, *q = pQuery->aWeight + nPad;
  float rLow, rHigh, rDelta, aThresh[BIT_QUERY_LEVELS];
  double rBase = 0.0;
  int64_t nSumU = 0;
  colvecQuantInput(pQuant, aQuery, q);
  for (i = 0; i < nDim; i++) {
    if (pQuant->eMetric == COLVEC_METRIC_DOT) rBase += (double)c[i] * q[i];
    q[i] -= c[i];
    if (pQuant->eMetric != COLVEC_METRIC_DOT) rBase += (double)q[i] * q[i];
  }
  bitRotate(pQuant, q, z);
  rLow = rHigh = z[0];
  for (i = 1; i < nPad; i++) {
    if (z[i] < rLow) rLow = z[i];
    if (z[i] > rHigh) rHigh = z[i];
  }
  rDelta = (rHigh - rLow) / (float)(BIT_QUERY_LEVELS - 1);
  if (!(rDelta > 0.0f) || !isfinite(rDelta)) rDelta = 0.0f;
  for (j = 1; j < BIT_QUERY_LEVELS; j++) {
    /* NaN when rDelta is 0: no comparison holds, every level is 0 */
    aThresh[j] = rDelta > 0.0f ? rLow + ((float)j - 0.5f) * rDelta : NAN;
  }
  aThresh[0] = -INFINITY;
  nSumU = bitKernels(pQuant)->xPlanes(z, nWord, aThresh, pQuery->aPlane);
  pQuery->rBase = (float)rBase;
  pQuery->rLow = rLow;
  pQuery->rDelta = rDelta;
  pQuery->rSumQ = (float)((double)nPad * rLow + (double)rDelta * nSumU);
}

/*
** Counts, over words iFirst..nWord-1 of the code bits pBits, the set bits
** (*pnOne, added to) and sum_j 2^j popcount(bits & plane_j) (returned).
** Always inlined, so that bitCountScalar and bitCountPopcnt share it.
*/
static inline __attribute__((always_inline)) uint64_t
bitCountBody(const uint8_t *pBits, const uint64_t *aPlane, int iFirst,
             int nWord, uint64_t *pnOne) {
  uint64_t nSum = 0, nOne = 0;
  int w, j;
  for (w = iFirst; w < nWord; w++) {
    uint64_t b = bitLoad64(pBits + 8 * w);
    nOne += (uint64_t)COLVEC_POPCOUNT64(b);
    for (j = 0; j < BIT_QUERY_BITS; j++) {
      nSum += (uint64_t)COLVEC_POPCOUNT64(b & aPlane[j * nWord + w]) << j;
    }
  }
  *pnOne += nOne;
  return nSum;
}

/* bitCountBody over all nWord words, compiled for any CPU: the portable
** kernel. */
static uint64_t bitCountScalar(const uint8_t *pBits, const uint64_t *aPlane,
                               int nWord, uint64_t *pnOne) {
  return bitCountBody(pBits, aPlane, 0, nWord, pnOne);
}

#ifdef COLVEC_QUANT_AVX2
/* bitCountBody with the POPCNT instruction (the AVX2 kernel's tail). */
__attribute__((target("popcnt"))) static uint64_t
bitCountPopcnt(const uint8_t *pBits, const uint64_t *aPlane, int iFirst,
               int nWord, uint64_t *pnOne) {
  return bitCountBody(pBits, aPlane, iFirst, nWord, pnOne);
}

/* Per-byte population counts of x (nibble lookup table). */
__attribute__((target("avx2"))) static __m256i bitPopcnt8(__m256i x) {
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
__attribute__((target("avx2"))) static uint64_t bitHsum64(__m256i v) {
  __m128i s =
      _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  return (uint64_t)_mm_cvtsi128_si64(s) +
         (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s));
}

/*
** AVX2 twin of bitCountScalar over all nWord words (four at a time, the
** rest by bitCountPopcnt). Per byte the weighted count is at most
** 8*(1+2+4+8) = 120, so it is summed in bytes before _mm256_sad_epu8.
*/
__attribute__((target("avx2"))) static uint64_t
bitCountAvx2(const uint8_t *pBits, const uint64_t *aPlane, int nWord,
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
    __m256i s = bitPopcnt8(_mm256_and_si256(b, p0));
    s = _mm256_add_epi8(
        s, _mm256_slli_epi16(bitPopcnt8(_mm256_and_si256(b, p1)), 1));
    s = _mm256_add_epi8(
        s, _mm256_slli_epi16(bitPopcnt8(_mm256_and_si256(b, p2)), 2));
    s = _mm256_add_epi8(
        s, _mm256_slli_epi16(bitPopcnt8(_mm256_and_si256(b, p3)), 3));
    accSum = _mm256_add_epi64(accSum, _mm256_sad_epu8(s, zero));
    accOne = _mm256_add_epi64(accOne, _mm256_sad_epu8(bitPopcnt8(b), zero));
  }
  *pnOne = bitHsum64(accOne);
  nSum = bitHsum64(accSum);
  _mm256_zeroupper(); /* no AVX-SSE transition penalty for the caller */
  return nSum + bitCountPopcnt(pBits, aPlane, w, nWord, pnOne);
}

/*
** AVX-512 twin of bitCountScalar over all nWord words, eight at a time with
** the VPOPCNTDQ instruction; a short last block is loaded under a mask
** (zeros count nothing).
*/
__attribute__((target("avx512f,avx512bw,avx512vpopcntdq"))) static uint64_t
bitCountAvx512(const uint8_t *pBits, const uint64_t *aPlane, int nWord,
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
#endif

#ifdef COLVEC_QUANT_NEON
/*
** NEON twin of bitCountScalar over all nWord words, two at a time with
** VCNT (the odd last word by bitCountBody). Per byte the weighted count is
** at most 8*(1+2+4+8) = 120, so it is summed in bytes, then widened into
** 32-bit lanes that cannot overflow for any code size.
*/
static uint64_t bitCountNeon(const uint8_t *pBits, const uint64_t *aPlane,
                             int nWord, uint64_t *pnOne) {
  uint32x4_t accSum = vdupq_n_u32(0), accOne = vdupq_n_u32(0);
  const uint8_t *aP = (const uint8_t *)aPlane;
  int w;
  for (w = 0; w + 2 <= nWord; w += 2) {
    uint8x16_t b = vld1q_u8(pBits + 8 * w);
    uint8x16_t s = vcntq_u8(vandq_u8(b, vld1q_u8(aP + 8 * w)));
    s = vaddq_u8(
        s,
        vshlq_n_u8(vcntq_u8(vandq_u8(b, vld1q_u8(aP + 8 * (nWord + w)))), 1));
    s = vaddq_u8(
        s, vshlq_n_u8(vcntq_u8(vandq_u8(b, vld1q_u8(aP + 8 * (2 * nWord + w)))),
                      2));
    s = vaddq_u8(
        s, vshlq_n_u8(vcntq_u8(vandq_u8(b, vld1q_u8(aP + 8 * (3 * nWord + w)))),
                      3));
    accSum = vpadalq_u16(accSum, vpaddlq_u8(s));
    accOne = vpadalq_u16(accOne, vpaddlq_u8(vcntq_u8(b)));
  }
  *pnOne += vaddlvq_u32(accOne);
  return vaddlvq_u32(accSum) + bitCountBody(pBits, aPlane, w, nWord, pnOne);
}
#endif

/*
** The estimate from a prepared bit query to one code, around the popcount
** kernel xCount. Always inlined with a constant xCount, so each kernel
** set's xDistance is a direct call of its kernel, and the arithmetic
** around it (compiled without target attributes in every set) turns
** identical integers into identical distances.
*/
static inline __attribute__((always_inline)) float bitDistance(
    const ColvecQuantQuery *pQuery, const uint8_t *pCode,
    uint64_t (*xCount)(const uint8_t *, const uint64_t *, int, uint64_t *)) {
  const ColvecQuant *pQuant = pQuery->pQuant;
  const uint8_t *pF = pCode + pQuant->nPad / 8;
  uint64_t nOne = 0, nSum;
  double rIp;
  nSum = xCount(pCode, pQuery->aPlane, pQuant->nPad / 64, &nOne);
  /* sum (2b-1) z  ~  2 * (lo * #ones + delta * weighted count) - sum z */
  rIp = 2.0 * ((double)pQuery->rLow * (double)nOne +
               (double)pQuery->rDelta * (double)nSum) -
        pQuery->rSumQ;
  return colvecQuantFinish(pQuant->eMetric, pQuery->rBase,
                           colvecQuantGetF32(pF),
                           (float)(colvecQuantGetF32(pF + 4) * rIp));
}

/* Bit estimate, portable kernel. */
static float bitDistScalar(const ColvecQuantQuery *pQuery,
                           const uint8_t *pCode) {
  return bitDistance(pQuery, pCode, bitCountScalar);
}

/* Bit estimates of a batch, portable kernel. */
static void bitBatchScalar(const ColvecQuantQuery *pQuery,
                           const uint8_t *const *apCode, int nCode,
                           float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, bitDistScalar);
}

/* The portable kernel set. */
static const BitKernels bitScalar = {
    .base =
        {
            .zName = "scalar",
            .eSet = COLVEC_QUANT_KERNEL_SCALAR,
            .mCpu = 0,
            .xDistance = bitDistScalar,
            .xDistanceBatch = bitBatchScalar,
        },
    .xRound = bitRoundScalar,
    .xPlanes = bitPlanesScalar,
};

#ifdef COLVEC_QUANT_AVX2
/* Bit estimate, AVX2 kernel. */
static float bitDistAvx2(const ColvecQuantQuery *pQuery, const uint8_t *pCode) {
  return bitDistance(pQuery, pCode, bitCountAvx2);
}

/* Bit estimates of a batch, AVX2 kernel. */
static void bitBatchAvx2(const ColvecQuantQuery *pQuery,
                         const uint8_t *const *apCode, int nCode, float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, bitDistAvx2);
}

/* Bit estimate, AVX-512 kernel. */
static float bitDistAvx512(const ColvecQuantQuery *pQuery,
                           const uint8_t *pCode) {
  return bitDistance(pQuery, pCode, bitCountAvx512);
}

/* Bit estimates of a batch, AVX-512 kernel. */
static void bitBatchAvx512(const ColvecQuantQuery *pQuery,
                           const uint8_t *const *apCode, int nCode,
                           float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, bitDistAvx512);
}

/* The AVX2 set (the POPCNT instruction does its tail). */
static const BitKernels bitAvx2 = {
    .base =
        {
            .zName = "avx2",
            .eSet = COLVEC_QUANT_KERNEL_AVX2,
            .mCpu = COLVEC_CPU_AVX2 | COLVEC_CPU_FMA | COLVEC_CPU_POPCNT,
            .xDistance = bitDistAvx2,
            .xDistanceBatch = bitBatchAvx2,
        },
    .xRound = bitRoundAvx2,
    .xPlanes = bitPlanesAvx2,
};

/* The AVX-512 set: VPOPCNTDQ popcounts, the AVX2 rotation and planes. */
static const BitKernels bitAvx512 = {
    .base =
        {
            .zName = "avx512",
            .eSet = COLVEC_QUANT_KERNEL_AVX512,
            .mCpu = COLVEC_CPU_AVX2 | COLVEC_CPU_FMA | COLVEC_CPU_POPCNT |
                    COLVEC_CPU_AVX512 | COLVEC_CPU_AVX512POP,
            .xDistance = bitDistAvx512,
            .xDistanceBatch = bitBatchAvx512,
        },
    .xRound = bitRoundAvx2,
    .xPlanes = bitPlanesAvx2,
};
#endif

#ifdef COLVEC_QUANT_NEON
/* Bit estimate, NEON kernel. */
static float bitDistNeon(const ColvecQuantQuery *pQuery, const uint8_t *pCode) {
  return bitDistance(pQuery, pCode, bitCountNeon);
}

/* Bit estimates of a batch, NEON kernel. */
static void bitBatchNeon(const ColvecQuantQuery *pQuery,
                         const uint8_t *const *apCode, int nCode, float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, bitDistNeon);
}

/* The NEON set (Advanced SIMD is part of every aarch64 CPU). */
static const BitKernels bitNeon = {
    .base =
        {
            .zName = "neon",
            .eSet = COLVEC_QUANT_KERNEL_NEON,
            .mCpu = COLVEC_CPU_NEON,
            .xDistance = bitDistNeon,
            .xDistanceBatch = bitBatchNeon,
        },
    .xRound = bitRoundNeon,
    .xPlanes = bitPlanesNeon,
};
#endif

/* Bit kernel sets, fastest first. */
static const ColvecQuantKernels *const apBitKernels[] = {
#ifdef COLVEC_QUANT_AVX2
    &bitAvx512.base, &bitAvx2.base,
#endif
#ifdef COLVEC_QUANT_NEON
    &bitNeon.base,
#endif
    &bitScalar.base, NULL};

/*
** Layout of a bit quantizer: nDim padded to a power of two nPad >= 64,
** nPad/8 bytes of signs and two factors per code, the centroid as
** parameters, nDim + nPad floats of scratch and of query weights (rotated
** query, then the centred one), 4 planes of nPad/64 words.
*/
static void bitLayout(ColvecQuant *p) {
  p->nPad = 64;
  while (p->nPad < p->nDim)
    p->nPad *= 2;
  p->nParam = p->nDim;
  p->nCodeByte = p->nPad / 8 + 8;
  p->nScratch = p->nDim + p->nPad;
  p->nWeight = p->nDim + p->nPad;
  p->nPlane = BIT_QUERY_BITS * (p->nPad / 64);
}

/* The bit (RaBitQ) quantizer type. */
const ColvecQuantMethods colvecQuantBitMethods = {
    .zName = "bit",
    .eType = COLVEC_QUANT_BIT,
    .rOversample = 3.0,
    .nRound = COLVEC_QUANT_ROUNDS,
    .bSeeded = 1,
    .xLayout = bitLayout,
    .xSetup = bitSetup,
    .xCheck = NULL,
    .xTrain = bitTrain,
    .xEncode = bitEncode,
    .xPrepare = bitPrepare,
    .apKernels = apBitKernels,
};
