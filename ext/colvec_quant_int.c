/*
** colvec_quant_int.c — int8 and int4 scalar quantizers.
**
** Parameters: per dimension d, min[d] and scale[d] = (max[d]-min[d])/L with
** L = 255 (int8) or 15 (int4), over all training vectors (normalised first
** for cosine). A vector x is coded as c[d] = round((x[d]-min[d])/scale[d])
** clamped to 0..L, plus one float f0 = sum (scale[d]*c[d])^2 (l2, cosine;
** 0 for dot). With y = x_decoded - min and q' = q - min:
**   |q - x|^2 ~ |q'|^2 + f0 - 2 * sum q'[d]*scale[d]*c[d]
**   <q, x>    ~ sum q[d]*min[d] + sum q[d]*scale[d]*c[d]
** so the per-query weights w[d] (q'[d]*scale[d] or q[d]*scale[d]) reduce the
** hot loop to one multiply-add per dimension (colvecQuantFinish does the
** rest).
**
** One file, two types (two ColvecQuantMethods at the end): int8 and int4
** share their parameters, training, query preparation and the estimate
** around the kernel; they differ only in the number of levels, the packing
** of a code (intLevels, the encoder's store) and the kernel that reads it,
** so splitting them would copy the shared two thirds. Kernel sets: int8
** scalar, AVX2 and AVX-512; int4 scalar and AVX2; on aarch64 NEON for
** both.
*/
#include "colvec_os.h"
#include "colvec_quant.h"

#include <math.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COLVEC_QUANT_AVX2 1
#include <immintrin.h>
#endif

#if defined(__aarch64__)
#define COLVEC_QUANT_NEON 1
#include <arm_neon.h>
#endif

/* Highest code value of the quantizer's type: 255 (int8) or 15 (int4). */
static int intLevels(const ColvecQuant *pQuant) {
  return pQuant->pMethods == &colvecQuantInt8Methods ? 255 : 15;
}

/* Bytes of the packed codes (before the float factor). */
static int intDataBytes(const ColvecQuant *pQuant) {
  return pQuant->nCodeByte - 4;
}

/*
** Sets min[] and scale[] (aParam) from nVec training vectors but the nSkip
** outliers aSkip (ascending): their codes are clipped to the range of the
** others. aTmp holds nDim floats of scratch. Non-finite values are
** ignored; a dimension with no finite value (or no vectors at all) gets
** min 0 and scale 0. A range too wide for float arithmetic (more than
** FLT_MAX) gets its scale computed in double. Returns COLVEC_OK, or
** COLVEC_INTERRUPT when hook pInt (may be NULL) said stop.
*/
static int intTrain(ColvecQuant *pQuant, const float *aVec, int64_t nVec,
                    int64_t nStride, const int64_t *aSkip, int64_t nSkip,
                    float *aTmp, const ColvecInterrupt *pInt) {
  int d;
  int64_t i, iSkip = 0;
  int nDim = pQuant->nDim;
  float *aMin = pQuant->aParam;
  float *aScale = pQuant->aParam + nDim; /* holds max[] until the end */
  for (d = 0; d < nDim; d++) {
    aMin[d] = HUGE_VALF;
    aScale[d] = -HUGE_VALF;
  }
  for (i = 0; i < nVec; i++) {
    if (i % COLVEC_QUANT_TICK == COLVEC_QUANT_TICK - 1 &&
        COLVEC_INTERRUPTED(pInt)) {
      return COLVEC_INTERRUPT;
    }
    if (iSkip < nSkip && aSkip[iSkip] == i) {
      iSkip++;
      continue;
    }
    colvecQuantInput(pQuant, aVec + i * nStride, aTmp);
    for (d = 0; d < nDim; d++) {
      float x = aTmp[d];
      if (!isfinite(x)) continue; /* NaN and infinities say nothing */
      if (x < aMin[d]) aMin[d] = x;
      if (x > aScale[d]) aScale[d] = x;
    }
  }
  for (d = 0; d < nDim; d++) {
    float r = (aScale[d] - aMin[d]) / (float)intLevels(pQuant);
    if (isinf(r) && isfinite(aScale[d]) && isfinite(aMin[d])) {
      r = (float)(((double)aScale[d] - aMin[d]) / intLevels(pQuant));
    }
    aScale[d] = (isfinite(r) && r > 0.0f) ? r : 0.0f;
    if (!isfinite(aMin[d])) aMin[d] = 0.0f; /* no finite value seen */
  }
  return COLVEC_OK;
}

/*
** Writes the code of vector aVec to pCode (colvecQuantCodeBytes bytes).
** aTmp holds nDim floats of scratch.
*/
static void intEncode(const ColvecQuant *pQuant, const float *aVec,
                      uint8_t *pCode, float *aTmp) {
  int d;
  int nDim = pQuant->nDim;
  int nLevel = intLevels(pQuant);
  const float *aMin = pQuant->aParam;
  const float *aScale = pQuant->aParam + nDim;
  int b8 = nLevel == 255; /* one byte per dimension, or two per byte */
  double rNorm = 0.0;
  colvecQuantInput(pQuant, aVec, aTmp);
  if (!b8) {
    for (d = 0; d < intDataBytes(pQuant); d++)
      pCode[d] = 0;
  }
  for (d = 0; d < nDim; d++) {
    int c = 0;
    if (aScale[d] > 0.0f) {
      float r = (aTmp[d] - aMin[d]) / aScale[d] + 0.5f;
      if (r >= (float)nLevel) {
        c = nLevel;
      } else if (r > 0.0f) { /* false for NaN */
        c = (int)r;
      }
    }
    rNorm += (double)(aScale[d] * (float)c) * (double)(aScale[d] * (float)c);
    if (b8) {
      pCode[d] = (uint8_t)c;
    } else {
      pCode[d / 2] |= (uint8_t)(c << ((d & 1) * 4));
    }
  }
  if (pQuant->eMetric == COLVEC_METRIC_DOT) rNorm = 0.0;
  colvecQuantPutF32(pCode + intDataBytes(pQuant), (float)rNorm);
}

/*
** Prepares the query: aWeight[d] = q'[d]*scale[d] and rBase as described at
** the top of this file. The query's buffers are already large enough.
*/
static void intPrepare(const ColvecQuant *pQuant, const float *aQuery,
                       ColvecQuantQuery *pQuery) {
  int d;
  int nDim = pQuant->nDim;
  const float *aMin = pQuant->aParam;
  const float *aScale = pQuant->aParam + nDim;
  float *w = pQuery->aWeight;
  double rBase = 0.0;
  colvecQuantInput(pQuant, aQuery, w);
  for (d = 0; d < nDim; d++) {
    if (pQuant->eMetric == COLVEC_METRIC_DOT) {
      rBase += (double)w[d] * aMin[d];
      w[d] = w[d] * aScale[d];
    } else {
      float r = w[d] - aMin[d];
      rBase += (double)r * r;
      w[d] = r * aScale[d];
    }
  }
  pQuery->rBase = (float)rBase;
}

/* sum w[d]*c[d] over n int8 codes, portable version. */
static float intCross8Scalar(const float *w, const uint8_t *c, int n) {
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  int i;
  for (i = 0; i + 4 <= n; i += 4) {
    a0 += w[i] * (float)c[i];
    a1 += w[i + 1] * (float)c[i + 1];
    a2 += w[i + 2] * (float)c[i + 2];
    a3 += w[i + 3] * (float)c[i + 3];
  }
  for (; i < n; i++)
    a0 += w[i] * (float)c[i];
  return (a0 + a1) + (a2 + a3);
}

/* sum w[d]*c[d] over n int4 codes (low nibble first), portable version. */
static float intCross4Scalar(const float *w, const uint8_t *c, int n) {
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  int i, nPair = n / 2;
  for (i = 0; i + 2 <= nPair; i += 2) {
    unsigned b0 = c[i], b1 = c[i + 1];
    a0 += w[2 * i] * (float)(b0 & 15);
    a1 += w[2 * i + 1] * (float)(b0 >> 4);
    a2 += w[2 * i + 2] * (float)(b1 & 15);
    a3 += w[2 * i + 3] * (float)(b1 >> 4);
  }
  for (; i < nPair; i++) {
    a0 += w[2 * i] * (float)(c[i] & 15);
    a1 += w[2 * i + 1] * (float)(c[i] >> 4);
  }
  if (n & 1) a0 += w[n - 1] * (float)(c[n / 2] & 15);
  return (a0 + a1) + (a2 + a3);
}

#ifdef COLVEC_QUANT_AVX2
/* Sum of the 8 lanes of v. */
__attribute__((target("avx2,fma"))) static float intHsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

/* AVX2 twin of intCross8Scalar (same value up to rounding order). */
__attribute__((target("avx2,fma"))) static float
intCross8Avx2(const float *w, const uint8_t *c, int n) {
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
  r = intHsum(_mm256_add_ps(a0, a1));
  _mm256_zeroupper(); /* no AVX-SSE transition penalty for the caller */
  return r + intCross8Scalar(w + i, c + i, n - i);
}

/* AVX2 twin of intCross4Scalar (same value up to rounding order). */
__attribute__((target("avx2,fma"))) static float
intCross4Avx2(const float *w, const uint8_t *c, int n) {
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
  r = intHsum(_mm256_add_ps(a0, a1));
  _mm256_zeroupper(); /* no AVX-SSE transition penalty for the caller */
  return r + intCross4Scalar(w + i, c + i / 2, n - i);
}

/*
** AVX-512 twin of intCross8Scalar: 16 dimensions a step in one register
** (the AVX2 kernel needs two), the tail under a mask.
*/
__attribute__((target("avx512f,avx512bw,avx512vl"))) static float
intCross8Avx512(const float *w, const uint8_t *c, int n) {
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
#endif

#ifdef COLVEC_QUANT_NEON
/*
** Adds w[0..16)*x to the four accumulators, x being 16 code values (0..255)
** widened to float: lanes 0-3 to *pA0, 4-7 to *pA1 and so on.
*/
static inline void intNeonStep16(const float *w, uint8x16_t x, float32x4_t *pA0,
                                 float32x4_t *pA1, float32x4_t *pA2,
                                 float32x4_t *pA3) {
  uint16x8_t lo = vmovl_u8(vget_low_u8(x));
  uint16x8_t hi = vmovl_high_u8(x);
  *pA0 =
      vfmaq_f32(*pA0, vld1q_f32(w), vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo))));
  *pA1 = vfmaq_f32(*pA1, vld1q_f32(w + 4), vcvtq_f32_u32(vmovl_high_u16(lo)));
  *pA2 = vfmaq_f32(*pA2, vld1q_f32(w + 8),
                   vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi))));
  *pA3 = vfmaq_f32(*pA3, vld1q_f32(w + 12), vcvtq_f32_u32(vmovl_high_u16(hi)));
}

/*
** NEON twin of intCross8Scalar (same value up to rounding order): 16
** dimensions a step in four 4-lane accumulators, the tail by the scalar
** kernel.
*/
static float intCross8Neon(const float *w, const uint8_t *c, int n) {
  float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
  int i;
  for (i = 0; i + 16 <= n; i += 16) {
    intNeonStep16(w + i, vld1q_u8(c + i), &a0, &a1, &a2, &a3);
  }
  return vaddvq_f32(vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3))) +
         intCross8Scalar(w + i, c + i, n - i);
}

/*
** NEON twin of intCross4Scalar (same value up to rounding order): 8 code
** bytes (16 dimensions) a step, the nibbles interleaved back into
** dimension order, the tail by the scalar kernel.
*/
static float intCross4Neon(const float *w, const uint8_t *c, int n) {
  float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
  const uint8x8_t m = vdup_n_u8(15);
  int i;
  for (i = 0; i + 16 <= n; i += 16) {
    uint8x8_t b = vld1_u8(c + i / 2);
    uint8x8_t lo = vand_u8(b, m), hi = vshr_n_u8(b, 4);
    uint8x16_t x = vcombine_u8(vzip1_u8(lo, hi), vzip2_u8(lo, hi));
    intNeonStep16(w + i, x, &a0, &a1, &a2, &a3);
  }
  return vaddvq_f32(vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3))) +
         intCross4Scalar(w + i, c + i / 2, n - i);
}
#endif

/*
** The estimate from a prepared query to one code, around the kernel xCross
** (sum w[d]*c[d]). Always inlined with a constant xCross, so each kernel
** set's xDistance is a direct call of its kernel; the arithmetic around it
** is compiled without target attributes in every set, so the sets differ
** only in the kernel's rounding.
*/
static inline __attribute__((always_inline)) float
intDistance(const ColvecQuantQuery *pQuery, const uint8_t *pCode,
            float (*xCross)(const float *, const uint8_t *, int)) {
  const ColvecQuant *pQuant = pQuery->pQuant;
  float f0 = colvecQuantGetF32(pCode + intDataBytes(pQuant));
  float rCross = xCross(pQuery->aWeight, pCode, pQuant->nDim);
  return colvecQuantFinish(pQuant->eMetric, pQuery->rBase, f0, rCross);
}

/* int8 estimate, portable kernel. */
static float int8DistScalar(const ColvecQuantQuery *pQuery,
                            const uint8_t *pCode) {
  return intDistance(pQuery, pCode, intCross8Scalar);
}

/* int8 estimates of a batch, portable kernel. */
static void int8BatchScalar(const ColvecQuantQuery *pQuery,
                            const uint8_t *const *apCode, int nCode,
                            float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, int8DistScalar);
}

/* int4 estimate, portable kernel. */
static float int4DistScalar(const ColvecQuantQuery *pQuery,
                            const uint8_t *pCode) {
  return intDistance(pQuery, pCode, intCross4Scalar);
}

/* int4 estimates of a batch, portable kernel. */
static void int4BatchScalar(const ColvecQuantQuery *pQuery,
                            const uint8_t *const *apCode, int nCode,
                            float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, int4DistScalar);
}

/* The portable kernel sets. */
static const ColvecQuantKernels int8Scalar = {
    .zName = "scalar",
    .eSet = COLVEC_QUANT_KERNEL_SCALAR,
    .mCpu = 0,
    .xDistance = int8DistScalar,
    .xDistanceBatch = int8BatchScalar,
};
static const ColvecQuantKernels int4Scalar = {
    .zName = "scalar",
    .eSet = COLVEC_QUANT_KERNEL_SCALAR,
    .mCpu = 0,
    .xDistance = int4DistScalar,
    .xDistanceBatch = int4BatchScalar,
};

#ifdef COLVEC_QUANT_AVX2
/* int8 estimate, AVX2 kernel. */
static float int8DistAvx2(const ColvecQuantQuery *pQuery,
                          const uint8_t *pCode) {
  return intDistance(pQuery, pCode, intCross8Avx2);
}

/* int8 estimates of a batch, AVX2 kernel. */
static void int8BatchAvx2(const ColvecQuantQuery *pQuery,
                          const uint8_t *const *apCode, int nCode,
                          float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, int8DistAvx2);
}

/* int8 estimate, AVX-512 kernel. */
static float int8DistAvx512(const ColvecQuantQuery *pQuery,
                            const uint8_t *pCode) {
  return intDistance(pQuery, pCode, intCross8Avx512);
}

/* int8 estimates of a batch, AVX-512 kernel. */
static void int8BatchAvx512(const ColvecQuantQuery *pQuery,
                            const uint8_t *const *apCode, int nCode,
                            float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, int8DistAvx512);
}

/* int4 estimate, AVX2 kernel. */
static float int4DistAvx2(const ColvecQuantQuery *pQuery,
                          const uint8_t *pCode) {
  return intDistance(pQuery, pCode, intCross4Avx2);
}

/* int4 estimates of a batch, AVX2 kernel. */
static void int4BatchAvx2(const ColvecQuantQuery *pQuery,
                          const uint8_t *const *apCode, int nCode,
                          float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, int4DistAvx2);
}

/*
** The x86-64 kernel sets. AVX2 asks for FMA and POPCNT too (every AVX2 CPU
** has them; one set of bits for all quantizers); AVX-512 for VPOPCNTDQ as
** well, like the bit codes, so that one AVX-512 ceiling means one thing.
*/
static const ColvecQuantKernels int8Avx2 = {
    .zName = "avx2",
    .eSet = COLVEC_QUANT_KERNEL_AVX2,
    .mCpu = COLVEC_CPU_AVX2 | COLVEC_CPU_FMA | COLVEC_CPU_POPCNT,
    .xDistance = int8DistAvx2,
    .xDistanceBatch = int8BatchAvx2,
};
static const ColvecQuantKernels int8Avx512 = {
    .zName = "avx512",
    .eSet = COLVEC_QUANT_KERNEL_AVX512,
    .mCpu = COLVEC_CPU_AVX2 | COLVEC_CPU_FMA | COLVEC_CPU_POPCNT |
            COLVEC_CPU_AVX512 | COLVEC_CPU_AVX512POP,
    .xDistance = int8DistAvx512,
    .xDistanceBatch = int8BatchAvx512,
};
static const ColvecQuantKernels int4Avx2 = {
    .zName = "avx2",
    .eSet = COLVEC_QUANT_KERNEL_AVX2,
    .mCpu = COLVEC_CPU_AVX2 | COLVEC_CPU_FMA | COLVEC_CPU_POPCNT,
    .xDistance = int4DistAvx2,
    .xDistanceBatch = int4BatchAvx2,
};
#endif

#ifdef COLVEC_QUANT_NEON
/* int8 estimate, NEON kernel. */
static float int8DistNeon(const ColvecQuantQuery *pQuery,
                          const uint8_t *pCode) {
  return intDistance(pQuery, pCode, intCross8Neon);
}

/* int8 estimates of a batch, NEON kernel. */
static void int8BatchNeon(const ColvecQuantQuery *pQuery,
                          const uint8_t *const *apCode, int nCode,
                          float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, int8DistNeon);
}

/* int4 estimate, NEON kernel. */
static float int4DistNeon(const ColvecQuantQuery *pQuery,
                          const uint8_t *pCode) {
  return intDistance(pQuery, pCode, intCross4Neon);
}

/* int4 estimates of a batch, NEON kernel. */
static void int4BatchNeon(const ColvecQuantQuery *pQuery,
                          const uint8_t *const *apCode, int nCode,
                          float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, int4DistNeon);
}

/* The aarch64 kernel sets (Advanced SIMD is part of every aarch64 CPU). */
static const ColvecQuantKernels int8Neon = {
    .zName = "neon",
    .eSet = COLVEC_QUANT_KERNEL_NEON,
    .mCpu = COLVEC_CPU_NEON,
    .xDistance = int8DistNeon,
    .xDistanceBatch = int8BatchNeon,
};
static const ColvecQuantKernels int4Neon = {
    .zName = "neon",
    .eSet = COLVEC_QUANT_KERNEL_NEON,
    .mCpu = COLVEC_CPU_NEON,
    .xDistance = int4DistNeon,
    .xDistanceBatch = int4BatchNeon,
};
#endif

/* int8 kernel sets, fastest first. */
static const ColvecQuantKernels *const apInt8Kernels[] = {
#ifdef COLVEC_QUANT_AVX2
    &int8Avx512, &int8Avx2,
#endif
#ifdef COLVEC_QUANT_NEON
    &int8Neon,
#endif
    &int8Scalar, NULL};

/* int4 kernel sets, fastest first. */
static const ColvecQuantKernels *const apInt4Kernels[] = {
#ifdef COLVEC_QUANT_AVX2
    &int4Avx2,
#endif
#ifdef COLVEC_QUANT_NEON
    &int4Neon,
#endif
    &int4Scalar, NULL};

/* Layout of an int8 quantizer: nDim code bytes and the factor. */
static void int8Layout(ColvecQuant *p) {
  p->nPad = p->nDim;
  p->nParam = 2 * p->nDim;
  p->nCodeByte = p->nDim + 4;
  p->nScratch = p->nDim;
  p->nWeight = p->nDim;
  p->nPlane = 0;
}

/* Layout of an int4 quantizer: two dimensions per code byte, the factor. */
static void int4Layout(ColvecQuant *p) {
  int8Layout(p);
  p->nCodeByte = (p->nDim + 1) / 2 + 4;
}

/*
** Checks deserialized int parameters: the scales (second half) are >= 0
** (the minima may be anything finite). Returns COLVEC_OK or
** COLVEC_CORRUPT.
*/
static int intCheck(const ColvecQuant *pQuant) {
  int d;
  for (d = 0; d < pQuant->nDim; d++) {
    if (pQuant->aParam[pQuant->nDim + d] < 0.0f) return COLVEC_CORRUPT;
  }
  return COLVEC_OK;
}

/* The int8 quantizer type. */
const ColvecQuantMethods colvecQuantInt8Methods = {
    .zName = "int8",
    .eType = COLVEC_QUANT_INT8,
    .rOversample = 2.0,
    .nRound = 0,
    .bSeeded = 0,
    .xLayout = int8Layout,
    .xSetup = NULL,
    .xCheck = intCheck,
    .xTrain = intTrain,
    .xEncode = intEncode,
    .xPrepare = intPrepare,
    .apKernels = apInt8Kernels,
};

/* The int4 quantizer type. */
const ColvecQuantMethods colvecQuantInt4Methods = {
    .zName = "int4",
    .eType = COLVEC_QUANT_INT4,
    .rOversample = 3.0,
    .nRound = 0,
    .bSeeded = 0,
    .xLayout = int4Layout,
    .xSetup = NULL,
    .xCheck = intCheck,
    .xTrain = intTrain,
    .xEncode = intEncode,
    .xPrepare = intPrepare,
    .apKernels = apInt4Kernels,
};
