/*
** colvec_quant_scalar.c — the portable code kernels (any CPU).
**
** One set per quantizer type with codes: int8, int4 and bit. They are the
** reference the SIMD sets (colvec_quant_avx2.c, _avx512.c, _neon.c) are
** tested against, and the int sums here are those sets' tails. See
** colvec_quant_kernels.h for how a set is chosen.
*/
#include "colvec_quant_kernels.h"

/* In-place unnormalised fast Walsh-Hadamard transform of a[0..n), n = 2^k. */
static void quantScalarFwht(float *a, int n) {
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

/* One rotation round on a[0..n): sign flips by aSign, then quantScalarFwht. */
static void quantScalarBitRound(float *a, const float *aSign, int n) {
  int i;
  for (i = 0; i < n; i++)
    a[i] *= aSign[i];
  quantScalarFwht(a, n);
}

/*
** Level of the 4-bit query coordinate x: the number of thresholds
** aThresh[1..15] (non-decreasing) that x reaches, by binary search.
*/
static int quantScalarBitLevel(float x, const float *aThresh) {
  int u = x >= aThresh[8] ? 8 : 0;
  if (x >= aThresh[u + 4]) u += 4;
  if (x >= aThresh[u + 2]) u += 2;
  if (x >= aThresh[u + 1]) u += 1;
  return u;
}

/* The query's bit planes (ColvecQuantBitKernels.xPlanes), one coordinate at
** a time. */
static int64_t quantScalarBitPlanes(const float *z, int nWord,
                                    const float *aThresh, uint64_t *aPlane) {
  int64_t nSumU = 0;
  int w, i, j;
  for (w = 0; w < nWord; w++) {
    uint64_t a[COLVEC_QUANT_QUERY_BITS] = {0};
    for (i = 0; i < 64; i++) {
      uint64_t u = (uint64_t)quantScalarBitLevel(z[64 * w + i], aThresh);
      nSumU += (int64_t)u;
      for (j = 0; j < COLVEC_QUANT_QUERY_BITS; j++)
        a[j] |= ((u >> j) & 1) << i;
    }
    for (j = 0; j < COLVEC_QUANT_QUERY_BITS; j++)
      aPlane[j * nWord + w] = a[j];
  }
  return nSumU;
}

/* colvecQuantBitCount over all nWord words, compiled for any CPU. */
static uint64_t quantScalarBitCount(const uint8_t *pBits,
                                    const uint64_t *aPlane, int nWord,
                                    uint64_t *pnOne) {
  return colvecQuantBitCount(pBits, aPlane, 0, nWord, pnOne);
}

/* int8 estimate. */
static float quantScalarInt8Dist(const ColvecQuantQuery *pQuery,
                                 const uint8_t *pCode) {
  return colvecQuantIntEstimate(pQuery, pCode, colvecQuantCross8Scalar);
}

/* int8 estimates of a batch. */
static void quantScalarInt8Batch(const ColvecQuantQuery *pQuery,
                                 const uint8_t *const *apCode, int nCode,
                                 float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantScalarInt8Dist);
}

/* colvecQuantDot8Scalar as a function (an estimate's kernel argument). */
static int32_t quantScalarDot8(const int16_t *w, const uint8_t *c, int n) {
  return colvecQuantDot8Scalar(w, c, n);
}

/* int8 integer estimate of a scan. */
static float quantScalarInt8ScanDist(const ColvecQuantQuery *pQuery,
                                     const uint8_t *pCode) {
  return colvecQuantScanEstimate(pQuery, pCode, quantScalarDot8);
}

/* int8 integer estimates of a scan's batch. */
static void quantScalarInt8Scan(const ColvecQuantQuery *pQuery,
                                const uint8_t *const *apCode, int nCode,
                                float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantScalarInt8ScanDist);
}

/* int4 estimate. */
static float quantScalarInt4Dist(const ColvecQuantQuery *pQuery,
                                 const uint8_t *pCode) {
  return colvecQuantIntEstimate(pQuery, pCode, colvecQuantCross4Scalar);
}

/* int4 estimates of a batch. */
static void quantScalarInt4Batch(const ColvecQuantQuery *pQuery,
                                 const uint8_t *const *apCode, int nCode,
                                 float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantScalarInt4Dist);
}

/* Bit estimate. */
static float quantScalarBitDist(const ColvecQuantQuery *pQuery,
                                const uint8_t *pCode) {
  return colvecQuantBitEstimate(pQuery, pCode, quantScalarBitCount);
}

/* Bit estimates of a batch. */
static void quantScalarBitBatch(const ColvecQuantQuery *pQuery,
                                const uint8_t *const *apCode, int nCode,
                                float *aOut) {
  colvecQuantBatchLoop(pQuery, apCode, nCode, aOut, quantScalarBitDist);
}

/* The portable int8 set. */
static const ColvecQuantKernels quantScalarInt8 = {
    .zName = "scalar",
    .eSet = COLVEC_QUANT_KERNEL_SCALAR,
    .mCpu = 0,
    .xDistance = quantScalarInt8Dist,
    .xDistanceBatch = quantScalarInt8Batch,
    .xScanBatch = quantScalarInt8Scan,
};

/* The portable int4 set. */
static const ColvecQuantKernels quantScalarInt4 = {
    .zName = "scalar",
    .eSet = COLVEC_QUANT_KERNEL_SCALAR,
    .mCpu = 0,
    .xDistance = quantScalarInt4Dist,
    .xDistanceBatch = quantScalarInt4Batch,
};

/* The portable bit set. */
static const ColvecQuantBitKernels quantScalarBit = {
    .base =
        {
            .zName = "scalar",
            .eSet = COLVEC_QUANT_KERNEL_SCALAR,
            .mCpu = 0,
            .xDistance = quantScalarBitDist,
            .xDistanceBatch = quantScalarBitBatch,
        },
    .xRound = quantScalarBitRound,
    .xPlanes = quantScalarBitPlanes,
};

/* The portable table: a set for every type with codes. */
static const ColvecQuantIsa quantScalarIsa = {
    .apType =
        {
            [COLVEC_QUANT_INT8] = &quantScalarInt8,
            [COLVEC_QUANT_INT4] = &quantScalarInt4,
            [COLVEC_QUANT_BIT] = &quantScalarBit.base,
        },
};

/* The portable kernel table (see colvec_quant_kernels.h). */
const ColvecQuantIsa *colvecQuantIsaScalar(void) { return &quantScalarIsa; }
