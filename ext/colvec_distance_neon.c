/*
** colvec_distance_neon.c — NEON distance kernels (aarch64 only).
**
** NEON is part of every aarch64 CPU, so no run-time check is needed:
** colvecKernelsNeon() returns the set on aarch64 builds and NULL elsewhere.
** Kept deliberately plain: float sums in four 4-lane accumulators with a
** scalar tail, int8 sums widened to int16 and accumulated exactly in int32
** lanes that are moved into int64 every NEON_I8_BLOCK elements, Hamming with
** VCNT. The single-vector and pair kernels share their accumulation order,
** so batch results are bit-identical to single ones.
*/
#include "colvec_distance.h"
#include "colvec_os.h"

#if defined(__aarch64__)

#include <arm_neon.h>
#include <math.h>

/*
** int8 elements per int32 accumulation block: 4096 steps of 8 elements add
** at most 4096*2*255^2 < 2^31 to one lane.
*/
#define NEON_I8_BLOCK 32768

/*
** Returns acc plus, lane by lane, (x-y)^2 when bL2 is set or x*y otherwise.
*/
static inline float32x4_t neonStep(int bL2, float32x4_t acc, float32x4_t x,
                                   float32x4_t y) {
  if (bL2) {
    float32x4_t d = vsubq_f32(x, y);
    return vfmaq_f32(acc, d, d);
  }
  return vfmaq_f32(acc, x, y);
}

/* Returns the scalar term of one element: (x-y)^2 or x*y. */
static inline float neonTerm(int bL2, float x, float y) {
  return bL2 ? (x - y) * (x - y) : x * y;
}

/* Returns the sum of four accumulators and the scalar tail, in fixed order. */
static inline float neonHsum(float32x4_t s0, float32x4_t s1, float32x4_t s2,
                             float32x4_t s3, float tail) {
  return vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3))) + tail;
}

/*
** Returns sum (a-b)^2 (bL2 set) or sum a*b over n floats. The layout of
** the loop is mirrored exactly by neonPairF32().
*/
static inline float neonSumF32(int bL2, const float *a, const float *b, int n) {
  float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
  float tail = 0.0f;
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = neonStep(bL2, s0, vld1q_f32(a + i), vld1q_f32(b + i));
    s1 = neonStep(bL2, s1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
    s2 = neonStep(bL2, s2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
    s3 = neonStep(bL2, s3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
  }
  for (; i + 4 <= n; i += 4) {
    s0 = neonStep(bL2, s0, vld1q_f32(a + i), vld1q_f32(b + i));
  }
  for (; i < n; i++)
    tail += neonTerm(bL2, a[i], b[i]);
  return neonHsum(s0, s1, s2, s3, tail);
}

/*
** Computes q against v0 and v1 in one pass (each exactly as neonSumF32()
** would) into *pOut0 and *pOut1, prefetching pAhead0 and pAhead1.
*/
static inline void neonPairF32(int bL2, const float *q, const float *v0,
                               const float *v1, int n, const float *pAhead0,
                               const float *pAhead1, float *pOut0,
                               float *pOut1) {
  float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
  float32x4_t t0 = s0, t1 = s0, t2 = s0, t3 = s0;
  float tailS = 0.0f, tailT = 0.0f;
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    float32x4_t x0 = vld1q_f32(q + i), x1 = vld1q_f32(q + i + 4);
    float32x4_t x2 = vld1q_f32(q + i + 8), x3 = vld1q_f32(q + i + 12);
    COLVEC_PREFETCH(pAhead0 + i);
    COLVEC_PREFETCH(pAhead1 + i);
    s0 = neonStep(bL2, s0, x0, vld1q_f32(v0 + i));
    s1 = neonStep(bL2, s1, x1, vld1q_f32(v0 + i + 4));
    s2 = neonStep(bL2, s2, x2, vld1q_f32(v0 + i + 8));
    s3 = neonStep(bL2, s3, x3, vld1q_f32(v0 + i + 12));
    t0 = neonStep(bL2, t0, x0, vld1q_f32(v1 + i));
    t1 = neonStep(bL2, t1, x1, vld1q_f32(v1 + i + 4));
    t2 = neonStep(bL2, t2, x2, vld1q_f32(v1 + i + 8));
    t3 = neonStep(bL2, t3, x3, vld1q_f32(v1 + i + 12));
  }
  for (; i + 4 <= n; i += 4) {
    float32x4_t x = vld1q_f32(q + i);
    s0 = neonStep(bL2, s0, x, vld1q_f32(v0 + i));
    t0 = neonStep(bL2, t0, x, vld1q_f32(v1 + i));
  }
  for (; i < n; i++) {
    tailS += neonTerm(bL2, q[i], v0[i]);
    tailT += neonTerm(bL2, q[i], v1[i]);
  }
  *pOut0 = neonHsum(s0, s1, s2, s3, tailS);
  *pOut1 = neonHsum(t0, t1, t2, t3, tailT);
}

/* Returns sum (a-b)^2 over n floats. */
static float neonL2sqF32(const float *a, const float *b, int n) {
  return neonSumF32(1, a, b, n);
}

/* Returns sum a*b over n floats. */
static float neonDotF32(const float *a, const float *b, int n) {
  return neonSumF32(0, a, b, n);
}

/* Pair kernel for xL2sqBatchF32 (see ColvecPairF32). */
static void neonL2sqPairF32(const float *q, const float *v0, const float *v1,
                            int n, const float *pAhead0, const float *pAhead1,
                            float *pOut0, float *pOut1) {
  neonPairF32(1, q, v0, v1, n, pAhead0, pAhead1, pOut0, pOut1);
}

/* Pair kernel for xDotBatchF32 (see ColvecPairF32). */
static void neonDotPairF32(const float *q, const float *v0, const float *v1,
                           int n, const float *pAhead0, const float *pAhead1,
                           float *pOut0, float *pOut1) {
  neonPairF32(0, q, v0, v1, n, pAhead0, pAhead1, pOut0, pOut1);
}

/* Batch of L2 sums (see ColvecKernels.xL2sqBatchF32). */
static void neonL2sqBatchF32(const float *q, const float *const *apVec,
                             int nVec, int n, float *aOut) {
  colvecKernelsBatchF32(neonL2sqPairF32, neonL2sqF32, q, apVec, nVec, n, aOut);
}

/* Batch of inner products (see ColvecKernels.xDotBatchF32). */
static void neonDotBatchF32(const float *q, const float *const *apVec, int nVec,
                            int n, float *aOut) {
  colvecKernelsBatchF32(neonDotPairF32, neonDotF32, q, apVec, nVec, n, aOut);
}

/*
** Computes sum a*b, sum a*a and sum b*b over n floats into *pDot, *pNormA
** and *pNormB.
*/
static void neonDotNormsF32(const float *a, const float *b, int n, float *pDot,
                            float *pNormA, float *pNormB) {
  float32x4_t d = vdupq_n_f32(0.0f), sa = d, sb = d;
  float td = 0.0f, ta = 0.0f, tb = 0.0f;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    float32x4_t x = vld1q_f32(a + i), y = vld1q_f32(b + i);
    d = vfmaq_f32(d, x, y);
    sa = vfmaq_f32(sa, x, x);
    sb = vfmaq_f32(sb, y, y);
  }
  for (; i < n; i++) {
    td += a[i] * b[i];
    ta += a[i] * a[i];
    tb += b[i] * b[i];
  }
  *pDot = vaddvq_f32(d) + td;
  *pNormA = vaddvq_f32(sa) + ta;
  *pNormB = vaddvq_f32(sb) + tb;
}

/* Returns sum (a-b)^2 over n int8 values, exactly. */
static int64_t neonL2sqI8(const int8_t *a, const int8_t *b, int n) {
  int64_t s = 0;
  int i = 0;
  while (i + 8 <= n) {
    int iEnd = n - i > NEON_I8_BLOCK ? i + NEON_I8_BLOCK : n;
    int32x4_t acc = vdupq_n_s32(0);
    for (; i + 8 <= iEnd; i += 8) {
      int16x8_t d = vsubl_s8(vld1_s8(a + i), vld1_s8(b + i));
      acc = vmlal_s16(acc, vget_low_s16(d), vget_low_s16(d));
      acc = vmlal_high_s16(acc, d, d);
    }
    s += vaddlvq_s32(acc);
  }
  for (; i < n; i++) {
    int d = (int)a[i] - (int)b[i];
    s += d * d;
  }
  return s;
}

/*
** Computes sum a*b, sum a*a and sum b*b over n int8 values, exactly, into
** *pDot, *pNormA and *pNormB (either norm pointer may be NULL when the
** caller wants only the dot product).
*/
static void neonSumI8(const int8_t *a, const int8_t *b, int n, int64_t *pDot,
                      int64_t *pNormA, int64_t *pNormB) {
  int64_t sd = 0, sa = 0, sb = 0;
  int i = 0;
  while (i + 8 <= n) {
    int iEnd = n - i > NEON_I8_BLOCK ? i + NEON_I8_BLOCK : n;
    int32x4_t ad = vdupq_n_s32(0), aa = ad, ab = ad;
    for (; i + 8 <= iEnd; i += 8) {
      int8x8_t x = vld1_s8(a + i), y = vld1_s8(b + i);
      ad = vpadalq_s16(ad, vmull_s8(x, y));
      if (pNormA) aa = vpadalq_s16(aa, vmull_s8(x, x));
      if (pNormB) ab = vpadalq_s16(ab, vmull_s8(y, y));
    }
    sd += vaddlvq_s32(ad);
    sa += vaddlvq_s32(aa);
    sb += vaddlvq_s32(ab);
  }
  for (; i < n; i++) {
    sd += (int)a[i] * (int)b[i];
    sa += (int)a[i] * (int)a[i];
    sb += (int)b[i] * (int)b[i];
  }
  *pDot = sd;
  if (pNormA) *pNormA = sa;
  if (pNormB) *pNormB = sb;
}

/* Returns sum a*b over n int8 values, exactly. */
static int64_t neonDotI8(const int8_t *a, const int8_t *b, int n) {
  int64_t s;
  neonSumI8(a, b, n, &s, 0, 0);
  return s;
}

/* Exact dot product and squared norms of int8 vectors (see neonSumI8()). */
static void neonDotNormsI8(const int8_t *a, const int8_t *b, int n,
                           int64_t *pDot, int64_t *pNormA, int64_t *pNormB) {
  neonSumI8(a, b, n, pDot, pNormA, pNormB);
}

/* Returns the number of differing bits of the nByte bytes at a and b. */
static int64_t neonHamming(const uint8_t *a, const uint8_t *b, int nByte) {
  int64_t s = 0;
  int i = 0;
  for (; i + 16 <= nByte; i += 16) {
    uint8x16_t c = vcntq_u8(veorq_u8(vld1q_u8(a + i), vld1q_u8(b + i)));
    s += vaddlvq_u8(c);
  }
  for (; i < nByte; i++)
    s += COLVEC_POPCOUNT32((unsigned)(a[i] ^ b[i]));
  return s;
}

/* Returns sum |a-b| over n floats (the loop of neonSumF32()). */
static float neonL1F32(const float *a, const float *b, int n) {
  float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
  float tail = 0.0f;
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = vaddq_f32(s0, vabdq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
    s1 = vaddq_f32(s1, vabdq_f32(vld1q_f32(a + i + 4), vld1q_f32(b + i + 4)));
    s2 = vaddq_f32(s2, vabdq_f32(vld1q_f32(a + i + 8), vld1q_f32(b + i + 8)));
    s3 = vaddq_f32(s3, vabdq_f32(vld1q_f32(a + i + 12), vld1q_f32(b + i + 12)));
  }
  for (; i + 4 <= n; i += 4) {
    s0 = vaddq_f32(s0, vabdq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
  }
  for (; i < n; i++)
    tail += fabsf(a[i] - b[i]);
  return neonHsum(s0, s1, s2, s3, tail);
}

/* The NEON kernel set. */
static const ColvecKernels neonKernels = {
    "neon",           neonL2sqF32,     neonDotF32,     neonDotNormsF32,
    neonL2sqI8,       neonDotI8,       neonDotNormsI8, neonHamming,
    neonL2sqBatchF32, neonDotBatchF32, neonL1F32};

/* Returns the NEON kernels (static; never freed). */
const ColvecKernels *colvecKernelsNeon(void) { return &neonKernels; }

#else /* !__aarch64__ */

/* Not an aarch64 build: no NEON kernels. */
const ColvecKernels *colvecKernelsNeon(void) { return 0; }

#endif /* __aarch64__ */
