/*
** colvec_quant_neon.c — NEON code kernels (aarch64 only).
**
** Sets for int8, int4 and bit codes. Advanced SIMD is part of every
** aarch64 CPU, so no target attribute or run-time check is needed beyond
** the set's COLVEC_CPU_NEON. The int sums equal the portable ones up to
** rounding order; the bit rotation, query planes and popcounts give
** exactly the portable results (see colvec_quant_kernels.h).
*/
#include "colvec_quant_kernels.h"

#if defined(__aarch64__)

#include <arm_neon.h>

/*
** Adds w[0..16)*x to the four accumulators, x being 16 code values (0..255)
** widened to float: lanes 0-3 to *pA0, 4-7 to *pA1 and so on.
*/
static inline void quantNeonStep16(const float *w, uint8x16_t x,
                                   float32x4_t *pA0, float32x4_t *pA1,
                                   float32x4_t *pA2, float32x4_t *pA3) {
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
** NEON twin of colvecQuantCross8Scalar: 16 dimensions a step in four
** 4-lane accumulators, the tail by the portable kernel.
*/
static float quantNeonCross8(const float *w, const uint8_t *c, int n) {
  float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
  int i;
  for (i = 0; i + 16 <= n; i += 16) {
    quantNeonStep16(w + i, vld1q_u8(c + i), &a0, &a1, &a2, &a3);
  }
  return vaddvq_f32(vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3))) +
         colvecQuantCross8Scalar(w + i, c + i, n - i);
}

/*
** NEON twin of colvecQuantCross4Scalar: 8 code bytes (16 dimensions) a
** step, the nibbles interleaved back into dimension order, the tail by the
** portable kernel.
*/
static float quantNeonCross4(const float *w, const uint8_t *c, int n) {
  float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
  const uint8x8_t m = vdup_n_u8(15);
  int i;
  for (i = 0; i + 16 <= n; i += 16) {
    uint8x8_t b = vld1_u8(c + i / 2);
    uint8x8_t lo = vand_u8(b, m), hi = vshr_n_u8(b, 4);
    uint8x16_t x = vcombine_u8(vzip1_u8(lo, hi), vzip2_u8(lo, hi));
    quantNeonStep16(w + i, x, &a0, &a1, &a2, &a3);
  }
  return vaddvq_f32(vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3))) +
         colvecQuantCross4Scalar(w + i, c + i / 2, n - i);
}

/*
** NEON rotation round (ColvecQuantBitKernels.xRound). Every butterfly
** computes the same x+y and x-y as the portable transform, so the result
** is bit-identical. Stages h = 1, 2 run inside a register.
*/
static void quantNeonBitRound(float *a, const float *aSign, int n) {
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

/*
** NEON query planes (ColvecQuantBitKernels.xPlanes): a level is the count
** of thresholds reached (the same exact comparisons, false for NaN), four
** coordinates at a time; each plane's four bits are shifted into place and
** added across lanes.
*/
static int64_t quantNeonBitPlanes(const float *z, int nWord,
                                  const float *aThresh, uint64_t *aPlane) {
  static const int32_t aLane[4] = {0, 1, 2, 3};
  const int32x4_t vLane = vld1q_s32(aLane);
  const uint32x4_t vOne = vdupq_n_u32(1);
  uint32x4_t accU = vdupq_n_u32(0);
  int w, i, j;
  for (w = 0; w < nWord; w++) {
    uint64_t a[COLVEC_QUANT_QUERY_BITS] = {0};
    for (i = 0; i < 64; i += 4) {
      float32x4_t v = vld1q_f32(z + 64 * w + i);
      uint32x4_t u = vdupq_n_u32(0);
      for (j = 1; j < COLVEC_QUANT_QUERY_LEVELS; j++) {
        u = vsubq_u32(u, vcgeq_f32(v, vdupq_n_f32(aThresh[j])));
      }
      accU = vaddq_u32(accU, u);
      for (j = 0; j < COLVEC_QUANT_QUERY_BITS; j++) {
        uint32x4_t b = vandq_u32(vshlq_u32(u, vdupq_n_s32(-j)), vOne);
        a[j] |= (uint64_t)vaddvq_u32(vshlq_u32(b, vLane)) << i;
      }
    }
    for (j = 0; j < COLVEC_QUANT_QUERY_BITS; j++)
      aPlane[j * nWord + w] = a[j];
  }
  return (int64_t)vaddlvq_u32(accU);
}

/*
** NEON twin of the portable bit count over all nWord words, two at a time
** with VCNT (the odd last word by colvecQuantBitCount). Per byte the
** weighted count is at most 8*(1+2+4+8) = 120, so it is summed in bytes,
** then widened into 32-bit lanes that cannot overflow for any code size.
*/
static uint64_t quantNeonBitCount(const uint8_t *pBits, const uint64_t *aPlane,
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
  return vaddlvq_u32(accSum) +
         colvecQuantBitCount(pBits, aPlane, w, nWord, pnOne);
}

/* int8 estimate. */
static float quantNeonInt8Dist(const ColvecQuantQuery *pQuery,
                               const uint8_t *pCode) {
  return colvecQuantIntEstimate(pQuery, pCode, quantNeonCross8);
}

/* int8 estimates of a batch. */
static void quantNeonInt8Batch(const ColvecQuantQuery *pQuery,
                               const uint8_t *const *apCode, int nCode,
                               float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantNeonInt8Dist);
}

/* int4 estimate. */
static float quantNeonInt4Dist(const ColvecQuantQuery *pQuery,
                               const uint8_t *pCode) {
  return colvecQuantIntEstimate(pQuery, pCode, quantNeonCross4);
}

/* int4 estimates of a batch. */
static void quantNeonInt4Batch(const ColvecQuantQuery *pQuery,
                               const uint8_t *const *apCode, int nCode,
                               float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantNeonInt4Dist);
}

/* Bit estimate. */
static float quantNeonBitDist(const ColvecQuantQuery *pQuery,
                              const uint8_t *pCode) {
  return colvecQuantBitEstimate(pQuery, pCode, quantNeonBitCount);
}

/* Bit estimates of a batch. */
static void quantNeonBitBatch(const ColvecQuantQuery *pQuery,
                              const uint8_t *const *apCode, int nCode,
                              float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantNeonBitDist);
}

/* The NEON int8 set. */
static const ColvecQuantKernels quantNeonInt8 = {
    .zName = "neon",
    .eSet = COLVEC_QUANT_KERNEL_NEON,
    .mCpu = COLVEC_CPU_NEON,
    .xDistance = quantNeonInt8Dist,
    .xDistanceBatch = quantNeonInt8Batch,
};

/* The NEON int4 set. */
static const ColvecQuantKernels quantNeonInt4 = {
    .zName = "neon",
    .eSet = COLVEC_QUANT_KERNEL_NEON,
    .mCpu = COLVEC_CPU_NEON,
    .xDistance = quantNeonInt4Dist,
    .xDistanceBatch = quantNeonInt4Batch,
};

/* The NEON bit set. */
static const ColvecQuantBitKernels quantNeonBit = {
    .base =
        {
            .zName = "neon",
            .eSet = COLVEC_QUANT_KERNEL_NEON,
            .mCpu = COLVEC_CPU_NEON,
            .xDistance = quantNeonBitDist,
            .xDistanceBatch = quantNeonBitBatch,
        },
    .xRound = quantNeonBitRound,
    .xPlanes = quantNeonBitPlanes,
};

/* The NEON table. */
static const ColvecQuantIsa quantNeonIsa = {
    .apType =
        {
            [COLVEC_QUANT_INT8] = &quantNeonInt8,
            [COLVEC_QUANT_INT4] = &quantNeonInt4,
            [COLVEC_QUANT_BIT] = &quantNeonBit.base,
        },
};

/* The NEON kernel table (see colvec_quant_kernels.h). */
const ColvecQuantIsa *colvecQuantIsaNeon(void) { return &quantNeonIsa; }

#else /* not aarch64 */

/* The NEON kernel table: none on this architecture. */
const ColvecQuantIsa *colvecQuantIsaNeon(void) { return NULL; }

#endif
