/*
** colvec_quant_kernels.h — the code kernels of each instruction set
** (SQLite-free; private to colvec_quant*.c).
**
** The kernels that score quantized codes are grouped by instruction set,
** one file each, as the float32 distance kernels are:
**
**   colvec_quant_scalar.c  portable C, every type (the reference)
**   colvec_quant_avx2.c    AVX2 with FMA and POPCNT (x86-64)
**   colvec_quant_avx512.c  AVX-512 F/BW/VL with VPOPCNTDQ (x86-64)
**   colvec_quant_neon.c    Advanced SIMD (aarch64)
**
** Every file builds on every platform with the project's ordinary flags:
** its functions carry target attributes, and on another architecture it
** compiles to a colvecQuantIsa*() that returns NULL. A file's table
** (ColvecQuantIsa) holds, by stored type id, the kernel set it has for
** each quantizer type (NULL: none, e.g. int4 has no AVX-512 set).
** colvec_quant.c chooses once per quantizer: the first table, fastest
** first, whose set for the type the CPU runs and the ceilings allow. The
** portable table has a set for every type with codes, so one is always
** found; type NONE has none anywhere.
**
** The estimate around a kernel's inner loop (the code's stored factors,
** the query's constants, colvecQuantFinish) belongs to the quantizer type
** and is shared here as always-inlined functions without target
** attributes, so every set turns the same inner result into the same
** distance, and a set's xDistance is one direct call of its inner kernel.
**
** Adding an instruction set: one new file defining its colvecQuantIsa*()
** (declared below) and one entry in colvec_quant.c's list, fastest first.
** Adding a type's kernels to a set: one entry in that set's table.
*/
#ifndef COLVEC_QUANT_KERNELS_H
#define COLVEC_QUANT_KERNELS_H

#include "colvec_os.h"
#include "colvec_quant.h"

#include <string.h>

/* Bits of precision of the bit quantizer's query: 4 planes. */
#define COLVEC_QUANT_QUERY_BITS 4
/* Levels of the bit quantizer's quantized query: 2^COLVEC_QUANT_QUERY_BITS. */
#define COLVEC_QUANT_QUERY_LEVELS (1 << COLVEC_QUANT_QUERY_BITS)

/* The code kernel sets of one instruction set, by stored type id. */
typedef struct ColvecQuantIsa ColvecQuantIsa;
struct ColvecQuantIsa {
  /* the set for each ColvecQuantType; NULL: this instruction set has none */
  const ColvecQuantKernels *apType[COLVEC_QUANT_NTYPE];
};

/*
** The bit quantizer's kernel sets carry two more kernels, used by encoding
** and query preparation; its entries in a ColvecQuantIsa point at the
** base member, and colvec_quant_bit.c casts back.
*/
typedef struct ColvecQuantBitKernels ColvecQuantBitKernels;
struct ColvecQuantBitKernels {
  ColvecQuantKernels base; /* generic part: must be first */
  /* one rotation round on a[0..n): sign flips by aSign, then an
  ** unnormalised Walsh-Hadamard transform (n a power of two >= 64); every
  ** set gives bit-identical results */
  void (*xRound)(float *a, const float *aSign, int n);
  /* the rotated query z (64*nWord floats) quantized to 4-bit levels (the
  ** count of thresholds aThresh[1..15] each coordinate reaches) and written
  ** as 4 bit planes of nWord words to aPlane; returns the sum of the
  ** levels. Identical in every set. */
  int64_t (*xPlanes)(const float *z, int nWord, const float *aThresh,
                     uint64_t *aPlane);
};

/* The tables of the instruction sets; NULL when not built for this CPU
** architecture (the portable one never is). */
const ColvecQuantIsa *colvecQuantIsaScalar(void);
const ColvecQuantIsa *colvecQuantIsaAvx2(void);
const ColvecQuantIsa *colvecQuantIsaAvx512(void);
const ColvecQuantIsa *colvecQuantIsaNeon(void);

/*
** The portable int sums: the scalar set's inner kernels and the tails of
** the SIMD ones. Inline, so that each set's file has its own copy and a
** SIMD kernel's tail is no call into another file (a call there costs a
** spill of the partial sum on every code; measured with quant-bench).
*/
/* sum w[d]*c[d] over n int8 codes, in four accumulators. */
static inline float colvecQuantCross8Scalar(const float *w, const uint8_t *c,
                                            int n) {
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

/* sum w[d]*c[d] over n int4 codes (low nibble first), four accumulators. */
static inline float colvecQuantCross4Scalar(const float *w, const uint8_t *c,
                                            int n) {
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

/*
** sum w[d]*c[d] over n int8 codes and 16-bit integer weights (an exact
** integer: colvecQuantQueryPrepareScan keeps it within 32 bits).
*/
static inline int32_t colvecQuantDot8Scalar(const int16_t *w, const uint8_t *c,
                                            int n) {
  int32_t a0 = 0, a1 = 0;
  int i;
  for (i = 0; i + 2 <= n; i += 2) {
    a0 += (int32_t)w[i] * c[i];
    a1 += (int32_t)w[i + 1] * c[i + 1];
  }
  if (i < n) a0 += (int32_t)w[i] * c[i];
  return a0 + a1;
}

/*
** Inner kernels shared between sets: the AVX2 rotation round and query
** planes (which the AVX-512 set uses too). Declared only where they are
** defined, on x86-64 with GCC or clang: the amalgamation makes them
** static, and a static function declared but never defined is an error
** under -Werror on every other CPU.
*/
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
void colvecQuantBitRoundAvx2(float *a, const float *aSign, int n);
int64_t colvecQuantBitPlanesAvx2(const float *z, int nWord,
                                 const float *aThresh, uint64_t *aPlane);
#endif

/*
** The int8/int4 estimate from a prepared query to one code, around the
** inner kernel xCross (sum w[d]*c[d] over nDim dimensions; see
** colvec_quant_int.c). The code's factor f0 follows its data bytes.
*/
static inline __attribute__((always_inline)) float
colvecQuantIntEstimate(const ColvecQuantQuery *pQuery, const uint8_t *pCode,
                       float (*xCross)(const float *, const uint8_t *, int)) {
  const ColvecQuant *pQuant = pQuery->pQuant;
  float f0 = colvecQuantGetF32(pCode + pQuant->nCodeByte - 4);
  float rCross = xCross(pQuery->aWeight, pCode, pQuant->nDim);
  return colvecQuantFinish(pQuant->eMetric, pQuery->rBase, f0, rCross);
}

/*
** The int8 estimate of a scan (colvecQuantScanBatch) from a query prepared
** by colvecQuantQueryPrepareScan to one code, around the integer kernel
** xDot (sum w[d]*c[d] over nDim dimensions). Every set's xDot returns the
** same integer, so every set returns the same distance.
*/
static inline __attribute__((always_inline)) float colvecQuantScanEstimate(
    const ColvecQuantQuery *pQuery, const uint8_t *pCode,
    int32_t (*xDot)(const int16_t *, const uint8_t *, int)) {
  const ColvecQuant *pQuant = pQuery->pQuant;
  float f0 = colvecQuantGetF32(pCode + pQuant->nCodeByte - 4);
  int32_t iDot = xDot(pQuery->aScale16, pCode, pQuant->nDim);
  return colvecQuantFinish(pQuant->eMetric, pQuery->rBase, f0,
                           (float)((double)pQuery->rScale16 * (double)iDot));
}

/*
** The bit estimate from a prepared query to one code, around the popcount
** kernel xCount (sets of bits, and sum_j 2^j popcount(bits & plane_j);
** see colvec_quant_bit.c). Identical integers give identical distances.
*/
static inline __attribute__((always_inline)) float colvecQuantBitEstimate(
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

/* Loads the 64 code bits at p (LSB-first byte order) as one word. */
static inline uint64_t colvecQuantLoad64(const uint8_t *p) {
  uint64_t u;
  memcpy(&u, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  u = COLVEC_BSWAP64(u);
#endif
  return u;
}

/*
** Counts, over words iFirst..nWord-1 of the code bits pBits, the set bits
** (*pnOne, added to) and sum_j 2^j popcount(bits & plane_j) (returned).
** Always inlined, so that the portable kernel and the SIMD kernels' tails
** (compiled for their own instructions) share it.
*/
static inline __attribute__((always_inline)) uint64_t
colvecQuantBitCount(const uint8_t *pBits, const uint64_t *aPlane, int iFirst,
                    int nWord, uint64_t *pnOne) {
  uint64_t nSum = 0, nOne = 0;
  int w, j;
  for (w = iFirst; w < nWord; w++) {
    uint64_t b = colvecQuantLoad64(pBits + 8 * w);
    nOne += (uint64_t)COLVEC_POPCOUNT64(b);
    for (j = 0; j < COLVEC_QUANT_QUERY_BITS; j++) {
      nSum += (uint64_t)COLVEC_POPCOUNT64(b & aPlane[j * nWord + w]) << j;
    }
  }
  *pnOne += nOne;
  return nSum;
}

#endif /* COLVEC_QUANT_KERNELS_H */
