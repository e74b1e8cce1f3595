/*
** colvec_distance.h — distance kernels (SQLite-free).
**
** Every kernel has a portable scalar version; AVX2 and AVX-512 versions are
** compiled on x86-64 (function-level target attributes, so the rest of the
** build needs no special flags) and NEON on aarch64, and the fastest one the
** running CPU supports is chosen once at load time. The Check suite
** test/unit/check_distance.c compares every variant with the scalar twin.
**
** Implemented in colvec_distance.c (scalar, dispatch, metric wrappers),
** colvec_distance_avx2.c, colvec_distance_avx512.c, colvec_distance_neon.c.
*/
#ifndef COLVEC_DISTANCE_H
#define COLVEC_DISTANCE_H

#include "colvec_core.h"

/*
** One set of raw kernels. n counts elements for f32/i8, bytes for bit
** vectors. Raw kernels return sums, not distances: see colvecDistance().
*/
typedef struct ColvecKernels ColvecKernels;
struct ColvecKernels {
  const char *zName; /* "scalar", "avx2", "avx512", "neon" */
  float (*xL2sqF32)(const float *a, const float *b, int n); /* sum (a-b)^2 */
  float (*xDotF32)(const float *a, const float *b, int n);  /* sum a*b */
  /* sum a*b, sum a*a and sum b*b in one pass (for cosine) */
  void (*xDotNormsF32)(const float *a, const float *b, int n, float *pDot,
                       float *pNormA, float *pNormB);
  int64_t (*xL2sqI8)(const int8_t *a, const int8_t *b, int n); /* exact */
  int64_t (*xDotI8)(const int8_t *a, const int8_t *b, int n);  /* exact */
  /* dot, |a|^2, |b|^2 of int8 vectors, exact */
  void (*xDotNormsI8)(const int8_t *a, const int8_t *b, int n, int64_t *pDot,
                      int64_t *pNormA, int64_t *pNormB);
  int64_t (*xHamming)(const uint8_t *a, const uint8_t *b, int nByte);
  /*
  ** Batch of nVec float32 vectors against one query: aOut[i] = sum of
  ** (q - apVec[i])^2. Vectors are given by pointer (stable addresses into a
  ** mapping), so rescoring never copies them. Implementations may prefetch
  ** apVec[i+ahead] while computing apVec[i].
  */
  void (*xL2sqBatchF32)(const float *q, const float *const *apVec, int nVec,
                        int n, float *aOut);
  /*
  ** The same for the inner product: aOut[i] = sum q*apVec[i]. Both batch
  ** kernels give results bit-identical to xL2sqF32/xDotF32 of the same set,
  ** so a row scores the same whichever path computed it.
  */
  void (*xDotBatchF32)(const float *q, const float *const *apVec, int nVec,
                       int n, float *aOut);
  float (*xL1F32)(const float *a, const float *b, int n); /* sum |a-b| */
};

/*
** Interface between colvec_distance.c and the SIMD files (not for other
** callers). A pair kernel computes the raw sum of q against v0 and v1 in one
** pass, each bit-identical to the set's single-vector kernel, and may
** prefetch pAhead0/pAhead1 (vectors needed soon, n floats each; never NULL).
** colvecKernelsBatchF32() drives it over a batch: pairs of vectors, the
** vectors COLVEC_PREFETCH_AHEAD places further on passed as pAhead, the odd
** last vector given to xOne.
*/
#define COLVEC_PREFETCH_AHEAD 4
typedef void (*ColvecPairF32)(const float *q, const float *v0, const float *v1,
                              int n, const float *pAhead0, const float *pAhead1,
                              float *pOut0, float *pOut1);
void colvecKernelsBatchF32(ColvecPairF32 xPair,
                           float (*xOne)(const float *, const float *, int),
                           const float *q, const float *const *apVec, int nVec,
                           int n, float *aOut);

/* The portable scalar kernels (always available). */
const ColvecKernels *colvecKernelsScalar(void);
/* AVX2+FMA kernels, or NULL when not compiled in or the CPU lacks them. */
const ColvecKernels *colvecKernelsAvx2(void);
/*
** AVX-512 (F, BW, VL) kernels, or NULL when unavailable. The Hamming kernel
** uses VPOPCNTQ when the CPU has AVX512_VPOPCNTDQ.
*/
const ColvecKernels *colvecKernelsAvx512(void);
/*
** The AVX-512 set as used on CPUs without AVX512_VPOPCNTDQ (nibble-table
** Hamming kernel), or NULL when AVX-512 is unavailable; lets the tests cover
** both Hamming kernels on one machine.
*/
const ColvecKernels *colvecKernelsAvx512Base(void);
/* NEON kernels, or NULL when not compiled for aarch64. */
const ColvecKernels *colvecKernelsNeon(void);
/*
** The kernels used by the extension: the fastest available, chosen once.
** The environment variable COLVEC_KERNELS=scalar|avx2|avx512|neon forces one
** (for tests and benchmarks); an unavailable choice falls back to scalar.
*/
const ColvecKernels *colvecKernelsBest(void);
/* Comma-separated names of the kernel sets compiled in and usable here. */
const char *colvecKernelsAvailable(void);

/*
** Distance between two vectors of the same column, as reported to SQL:
** l2 -> sqrt(sum (a-b)^2), cosine -> 1 - a.b/(|a||b|) (1.0 if a norm is 0),
** dot -> -(a.b), l1 -> sum |a-b| (Manhattan distance, float32 and int8),
** hamming -> differing bits (bit vectors only).
** nDim counts elements; for bit vectors it counts bits, (nDim+7)/8 bytes
** are read and the pad bits of a partial last byte are ignored. Cosine is
** computed in double and clamped to [0, 2].
** Combinations that make no sense (l2 on bit vectors, hamming on floats) are
** refused by the schema parser and never reach here; should one arrive, bit
** vectors give the Hamming distance whatever the metric, and hamming on f32
** or int8 counts differing bits of their bytes.
*/
double colvecDistance(const ColvecKernels *pK, ColvecMetric eMetric,
                      ColvecElem eElem, const void *a, const void *b, int nDim);

#endif /* COLVEC_DISTANCE_H */
