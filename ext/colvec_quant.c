/*
** colvec_quant.c — what every quantizer shares: the table of quantizer
** types, the choice of code kernels, the training driver, serialization,
** encoding and query entry points (which call the type's methods), and
** the helpers of colvec_quant_int.c and colvec_quant_bit.c. No code here
** depends on the type. See colvec_quant.h for the design and the on-disk
** layout.
*/
#include "colvec_os.h"
#include "colvec_quant.h"
#include "colvec_quant_kernels.h"
#include "colvec_distance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Layout of type NONE: no codes, no parameters, no query buffers. */
static void quantNoneLayout(ColvecQuant *p) { COLVEC_UNUSED(p); }

/* Type NONE: a column whose graph is searched on its float32 vectors. */
static const ColvecQuantMethods quantNoneMethods = {
    .zName = "none",
    .eType = COLVEC_QUANT_NONE,
    .rOversample = 1.0,
    .nRound = 0,
    .bSeeded = 0,
    .xLayout = quantNoneLayout,
    .xSetup = NULL,
    .xCheck = NULL,
    .xTrain = NULL,
    .xEncode = NULL,
    .xPrepare = NULL,
};

/*
** The quantizer types, indexed by the type id stored in the serialized
** form (and in the column's configuration). Adding a type: one entry here.
*/
static const ColvecQuantMethods *const aQuantMethods[] = {
    &quantNoneMethods,       /* COLVEC_QUANT_NONE */
    &colvecQuantInt8Methods, /* COLVEC_QUANT_INT8 */
    &colvecQuantInt4Methods, /* COLVEC_QUANT_INT4 */
    &colvecQuantBitMethods,  /* COLVEC_QUANT_BIT */
};

/* Number of quantizer types. */
#define QUANT_NTYPE ((int)(sizeof(aQuantMethods) / sizeof(aQuantMethods[0])))

/* The kernel tables (ColvecQuantIsa.apType) are sized by
** COLVEC_QUANT_NTYPE: it must count every type of the table above. */
typedef char quantNtypeCheck[QUANT_NTYPE == COLVEC_QUANT_NTYPE ? 1 : -1];

/* The kernel tables of the instruction sets, fastest first, the portable
** one last (colvec_quant_kernels.h). */
static const ColvecQuantIsa *(*const aQuantIsa[])(void) = {
    colvecQuantIsaAvx512,
    colvecQuantIsaAvx2,
    colvecQuantIsaNeon,
    colvecQuantIsaScalar,
};

/* The methods of stored type id eType, or NULL if there is no such type. */
static const ColvecQuantMethods *quantMethods(int eType) {
  if (eType < 0 || eType >= QUANT_NTYPE) return NULL;
  return aQuantMethods[eType];
}

/* Name of type eType for quantize=, or NULL past the last type. */
const char *colvecQuantName(int eType) {
  const ColvecQuantMethods *pM = quantMethods(eType);
  return pM ? pM->zName : NULL;
}

/* Default oversampling of searches on type eType's codes (1.0: unknown). */
double colvecQuantOversampling(int eType) {
  const ColvecQuantMethods *pM = quantMethods(eType);
  return pM ? pM->rOversample : 1.0;
}

/* Magic bytes at the start of the serialized form. */
static const uint8_t quantMagic[4] = {'C', 'V', 'Q', 'Z'};

/* Stores u at p, little-endian. */
static void quantPut32(uint8_t *p, uint32_t u) {
  p[0] = (uint8_t)u;
  p[1] = (uint8_t)(u >> 8);
  p[2] = (uint8_t)(u >> 16);
  p[3] = (uint8_t)(u >> 24);
}

/* FNV-1a hash of n bytes: the checksum of the serialized form. */
static uint32_t quantChecksum(const uint8_t *a, int64_t n) {
  uint32_t h = 2166136261u;
  int64_t i;
  for (i = 0; i < n; i++) {
    h ^= a[i];
    h *= 16777619u;
  }
  return h;
}

/*
** The kernel sets each ceiling allows, as a mask of 1<<eSet, indexed by the
** ceiling (COLVEC_QUANT_KERNEL_*): BEST all; SCALAR the portable set; AVX2
** that and AVX2; AVX512 those and AVX-512; NEON the portable set and NEON.
*/
static const unsigned aQuantCapMask[] = {
    ~0u,                              /* BEST */
    1u << COLVEC_QUANT_KERNEL_SCALAR, /* SCALAR */
    (1u << COLVEC_QUANT_KERNEL_SCALAR) |
        (1u << COLVEC_QUANT_KERNEL_AVX2), /* AVX2 */
    (1u << COLVEC_QUANT_KERNEL_SCALAR) | (1u << COLVEC_QUANT_KERNEL_AVX2) |
        (1u << COLVEC_QUANT_KERNEL_AVX512), /* AVX512 */
    (1u << COLVEC_QUANT_KERNEL_SCALAR) |
        (1u << COLVEC_QUANT_KERNEL_NEON) /* NEON */
};

/* Mask of the sets ceiling eCap allows (an unknown ceiling: scalar only). */
static unsigned quantCapMask(int eCap) {
  if (eCap < 0 || eCap >= (int)(sizeof(aQuantCapMask) / sizeof(unsigned))) {
    return 1u << COLVEC_QUANT_KERNEL_SCALAR;
  }
  return aQuantCapMask[eCap];
}

/*
** The ceiling the process runs under: that of the distance kernel set in
** use (colvecKernelsBest(), which honours COLVEC_KERNELS), found by
** comparing set pointers. One variable then fixes every kernel.
*/
static int quantProcessCap(void) {
  const ColvecKernels *pBest = colvecKernelsBest();
  if (pBest == colvecKernelsAvx512()) return COLVEC_QUANT_KERNEL_AVX512;
  if (pBest == colvecKernelsAvx2()) return COLVEC_QUANT_KERNEL_AVX2;
  if (pBest == colvecKernelsNeon()) return COLVEC_QUANT_KERNEL_NEON;
  return COLVEC_QUANT_KERNEL_SCALAR;
}

/*
** Chooses the code kernels of type pM under ceiling eCap and the process's
** ceiling: its set in the first kernel table (fastest first) that has one
** the CPU runs (one colvecOsCpuFeatures() probe) and both ceilings allow.
** The portable table, last, has a set for every type with codes, needing
** nothing and always allowed, so such a type always gets one. Returns NULL
** for a type without codes (no table has a set for it).
*/
static const ColvecQuantKernels *
quantChooseKernels(const ColvecQuantMethods *pM, int eCap) {
  unsigned mCpu = colvecOsCpuFeatures();
  unsigned mAllow = quantCapMask(eCap) & quantCapMask(quantProcessCap());
  size_t i;
  for (i = 0; i < sizeof(aQuantIsa) / sizeof(aQuantIsa[0]); i++) {
    const ColvecQuantIsa *pIsa = aQuantIsa[i]();
    const ColvecQuantKernels *pK = pIsa ? pIsa->apType[pM->eType] : NULL;
    if (pK && (pK->mCpu & mCpu) == pK->mCpu &&
        (mAllow & (1u << pK->eSet)) != 0) {
      return pK;
    }
  }
  return NULL;
}

/*
** Name of the fastest code kernel set quantizers use (colvec_debug): the
** highest set chosen for any type.
*/
const char *colvecQuantKernelName(void) {
  const ColvecQuantKernels *pBest = NULL;
  int i;
  for (i = 0; i < QUANT_NTYPE; i++) {
    const ColvecQuantKernels *pK =
        quantChooseKernels(aQuantMethods[i], COLVEC_QUANT_KERNEL_BEST);
    if (pK && (pBest == NULL || pK->eSet > pBest->eSet)) pBest = pK;
  }
  return pBest ? pBest->zName : "scalar";
}

/*
** Allocates a zeroed quantizer of type pM with its parameter array sized by
** the type's layout for nDim and eMetric (already validated), its code
** kernels chosen, and its derived state built from iSeed (xSetup). Returns
** NULL on allocation failure.
*/
static ColvecQuant *quantAlloc(const ColvecQuantMethods *pM,
                               ColvecMetric eMetric, int nDim, uint64_t iSeed) {
  int rc = COLVEC_OK;
  ColvecQuant *p = colvecMallocZero(&rc, sizeof(ColvecQuant));
  if (p == NULL) return NULL;
  p->pMethods = pM;
  p->eMetric = eMetric;
  p->nDim = nDim;
  p->iSeed = iSeed;
  pM->xLayout(p);
  p->pKernels = quantChooseKernels(pM, COLVEC_QUANT_KERNEL_BEST);
  if (p->nParam > 0) {
    p->aParam = colvecMallocZero(&rc, (int64_t)sizeof(float) * p->nParam);
  }
  if (rc == COLVEC_OK && pM->xSetup) rc = pM->xSetup(p);
  if (rc != COLVEC_OK) {
    colvecQuantFree(p);
    p = NULL;
  }
  return p;
}

/* Frees a quantizer and its arrays (NULL is allowed). */
void colvecQuantFree(ColvecQuant *pQuant) {
  if (pQuant) {
    colvecFree(pQuant->aParam);
    colvecFree(pQuant->aAux);
    colvecFree(pQuant->aOutlier);
    colvecFree(pQuant);
  }
}

/* Returns non-zero if eMetric is a metric the quantizers support. */
static int quantMetricOk(int eMetric) {
  return eMetric == COLVEC_METRIC_L2 || eMetric == COLVEC_METRIC_COSINE ||
         eMetric == COLVEC_METRIC_DOT;
}

/*
** Trains a quantizer: see colvec_quant.h. The work is the type's xTrain;
** this function validates the arguments and owns the scratch buffer.
*/
int colvecQuantTrain(ColvecQuantType eType, ColvecMetric eMetric, int nDim,
                     const float *aVec, int64_t nVec, int64_t nStride,
                     ColvecQuant **ppQuant) {
  return colvecQuantTrainWith(eType, eMetric, nDim, aVec, nVec, nStride, NULL,
                              ppQuant);
}

/* Most floats the outlier rule's sample copies (4 MB). */
#define QUANT_SAMPLE_FLOATS (1 << 20)

/* Most rows in the outlier rule's sample. */
#define QUANT_SAMPLE_ROWS 1024

/*
** A row deviating from the per-dimension medians by more than this many
** times the QUANT_OUTLIER_QUANTILE of the sample's deviations is an
** outlier (see "Outliers" in colvec_quant.h).
*/
#define QUANT_OUTLIER_FACTOR 8.0

/* The quantile of the sample's deviations the rule scales: 90%. */
#define QUANT_OUTLIER_QUANTILE 0.9

/* qsort comparison of floats, ascending (no NaN is ever compared). */
static int quantFloatCmp(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* qsort comparison of doubles, ascending (no NaN is ever compared). */
static int quantDoubleCmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/*
** Deviation of input vector x (nDim floats, after colvecQuantInput) from
** the medians aMed: the largest |x[d] - aMed[d]| over its finite
** components, in double (no overflow for any two floats); 0 when none is
** finite.
*/
static double quantDeviation(const float *x, const float *aMed, int nDim) {
  double r = 0.0;
  int d;
  for (d = 0; d < nDim; d++) {
    if (isfinite(x[d])) {
      double e = fabs((double)x[d] - (double)aMed[d]);
      if (e > r) r = e;
    }
  }
  return r;
}

/*
** Finds the outliers of nVec training vectors (see "Outliers" in
** colvec_quant.h) and stores them, ascending, in pQuant->aOutlier. A
** deterministic sample (rows j*nVec/nSample) gives each dimension's median
** and the QUANT_OUTLIER_QUANTILE of the rows' deviations from the medians;
** one pass then keeps every row deviating more than QUANT_OUTLIER_FACTOR
** times that. aTmp holds nDim floats of scratch. Returns COLVEC_OK,
** COLVEC_NOMEM or COLVEC_INTERRUPT.
*/
static int quantFindOutliers(ColvecQuant *pQuant, const float *aVec,
                             int64_t nVec, int64_t nStride, float *aTmp,
                             const ColvecInterrupt *pInt) {
  int rc = COLVEC_OK;
  int nDim = pQuant->nDim, d;
  int64_t nSample = QUANT_SAMPLE_FLOATS / nDim, j, i, nAlloc = 0;
  float *aSample, *aCol, *aMed;
  double *aDev, rLimit;
  if (nSample > QUANT_SAMPLE_ROWS) nSample = QUANT_SAMPLE_ROWS;
  if (nSample < 16) nSample = 16;
  if (nSample > nVec) nSample = nVec;
  if (nSample == 0) return COLVEC_OK;
  aSample = colvecMallocZero(&rc, (int64_t)sizeof(float) * nSample * nDim);
  aCol = colvecMallocZero(&rc, (int64_t)sizeof(float) * nSample);
  aMed = colvecMallocZero(&rc, (int64_t)sizeof(float) * nDim);
  aDev = colvecMallocZero(&rc, (int64_t)sizeof(double) * nSample);
  if (rc == COLVEC_OK) {
    for (j = 0; j < nSample; j++) {
      colvecQuantInput(pQuant, aVec + (j * nVec / nSample) * nStride,
                       aSample + j * nDim);
    }
    for (d = 0; d < nDim; d++) {
      int64_t n = 0;
      for (j = 0; j < nSample; j++) {
        float x = aSample[j * nDim + d];
        if (isfinite(x)) aCol[n++] = x;
      }
      qsort(aCol, (size_t)n, sizeof(float), quantFloatCmp);
      aMed[d] = n ? aCol[n / 2] : 0.0f;
    }
    for (j = 0; j < nSample; j++) {
      aDev[j] = quantDeviation(aSample + j * nDim, aMed, nDim);
    }
    qsort(aDev, (size_t)nSample, sizeof(double), quantDoubleCmp);
    rLimit = QUANT_OUTLIER_FACTOR *
             aDev[(int64_t)(QUANT_OUTLIER_QUANTILE * (double)(nSample - 1))];
    for (i = 0; rc == COLVEC_OK && i < nVec; i++) {
      if (i % COLVEC_QUANT_TICK == COLVEC_QUANT_TICK - 1 &&
          COLVEC_INTERRUPTED(pInt)) {
        rc = COLVEC_INTERRUPT;
        break;
      }
      colvecQuantInput(pQuant, aVec + i * nStride, aTmp);
      if (quantDeviation(aTmp, aMed, nDim) <= rLimit) continue;
      if (pQuant->nOutlier == nAlloc) {
        int64_t *aNew;
        nAlloc = nAlloc ? 2 * nAlloc : 16;
        aNew =
            colvecRealloc(pQuant->aOutlier, (int64_t)sizeof(int64_t) * nAlloc);
        if (aNew == NULL) {
          rc = COLVEC_NOMEM;
          break;
        }
        pQuant->aOutlier = aNew;
      }
      pQuant->aOutlier[pQuant->nOutlier++] = i;
    }
  }
  colvecFree(aSample);
  colvecFree(aCol);
  colvecFree(aMed);
  colvecFree(aDev);
  return rc;
}

/* The outliers training left out; see colvec_quant.h. */
const int64_t *colvecQuantOutliers(const ColvecQuant *pQuant, int64_t *pn) {
  *pn = pQuant->nOutlier;
  return pQuant->aOutlier;
}

/* Trains with an interrupt hook; see colvec_quant.h. */
int colvecQuantTrainWith(ColvecQuantType eType, ColvecMetric eMetric, int nDim,
                         const float *aVec, int64_t nVec, int64_t nStride,
                         const ColvecInterrupt *pInt, ColvecQuant **ppQuant) {
  int rc = COLVEC_OK;
  const ColvecQuantMethods *pM = quantMethods((int)eType);
  ColvecQuant *p;
  float *aTmp = NULL;
  *ppQuant = NULL;
  if (pM == NULL || !quantMetricOk(eMetric) || nDim < 1 ||
      nDim > COLVEC_MAX_DIM || nVec < 0 || (nVec > 0 && nStride < nDim) ||
      (nVec > 0 && aVec == NULL)) {
    return COLVEC_RANGE;
  }
  p = quantAlloc(pM, eMetric, nDim, pM->bSeeded ? COLVEC_QUANT_SEED : 0);
  if (p == NULL) return COLVEC_NOMEM;
  if (pM->xTrain) {
    aTmp = colvecMallocZero(&rc, (int64_t)sizeof(float) * p->nScratch);
    if (rc == COLVEC_OK) {
      rc = quantFindOutliers(p, aVec, nVec, nStride, aTmp, pInt);
    }
    if (rc == COLVEC_OK) {
      rc = pM->xTrain(p, aVec, nVec, nStride, p->aOutlier, p->nOutlier, aTmp,
                      pInt);
    }
  }
  colvecFree(aTmp);
  if (rc != COLVEC_OK) {
    colvecQuantFree(p);
    p = NULL;
  }
  *ppQuant = p;
  return rc;
}

/* Type of a quantizer. */
ColvecQuantType colvecQuantType(const ColvecQuant *pQuant) {
  return pQuant->pMethods->eType;
}

/* Metric of a quantizer. */
ColvecMetric colvecQuantMetric(const ColvecQuant *pQuant) {
  return pQuant->eMetric;
}

/* Dimensions of the vectors a quantizer encodes. */
int colvecQuantDim(const ColvecQuant *pQuant) { return pQuant->nDim; }

/* Bytes per code; 0 for COLVEC_QUANT_NONE. */
int colvecQuantCodeBytes(const ColvecQuant *pQuant) {
  return pQuant->nCodeByte;
}

/* Bytes of the serialized form: header, parameters, checksum. */
int64_t colvecQuantSerializedBytes(const ColvecQuant *pQuant) {
  return COLVEC_QUANT_HEADER_BYTES + 4 * (int64_t)pQuant->nParam + 4;
}

/* Writes the serialized form (layout in colvec_quant.h) to aOut. */
void colvecQuantSerialize(const ColvecQuant *pQuant, uint8_t *aOut) {
  int i;
  uint8_t *p = aOut + COLVEC_QUANT_HEADER_BYTES;
  memcpy(aOut, quantMagic, 4);
  aOut[4] = (uint8_t)(COLVEC_QUANT_VERSION & 0xff);
  aOut[5] = (uint8_t)(COLVEC_QUANT_VERSION >> 8);
  aOut[6] = (uint8_t)pQuant->pMethods->eType;
  aOut[7] = (uint8_t)pQuant->eMetric;
  quantPut32(aOut + 8, (uint32_t)pQuant->nDim);
  quantPut32(aOut + 12, (uint32_t)pQuant->pMethods->nRound);
  quantPut32(aOut + 16, (uint32_t)pQuant->iSeed);
  quantPut32(aOut + 20, (uint32_t)(pQuant->iSeed >> 32));
  quantPut32(aOut + 24, (uint32_t)pQuant->nParam);
  for (i = 0; i < pQuant->nParam; i++) {
    colvecQuantPutF32(p, pQuant->aParam[i]);
    p += 4;
  }
  quantPut32(p, quantChecksum(aOut, p - aOut));
}

/*
** Rebuilds a quantizer from untrusted bytes: see colvec_quant.h. The header
** is checked field by field before anything is allocated; the type's
** xCheck then judges the (finite) parameters.
*/
int colvecQuantDeserialize(const uint8_t *a, int64_t n, ColvecQuant **ppQuant) {
  int i;
  int eMetric, nDim, nRound, nParam;
  uint64_t iSeed;
  const ColvecQuantMethods *pM;
  ColvecQuant *p;
  *ppQuant = NULL;
  if (a == NULL || n < COLVEC_QUANT_HEADER_BYTES + 4) return COLVEC_CORRUPT;
  if (memcmp(a, quantMagic, 4) != 0) return COLVEC_CORRUPT;
  if ((a[4] | (a[5] << 8)) != COLVEC_QUANT_VERSION) return COLVEC_CORRUPT;
  pM = quantMethods(a[6]);
  eMetric = a[7];
  if (colvecQuantGet32(a + 8) > COLVEC_MAX_DIM) return COLVEC_CORRUPT;
  nDim = (int)colvecQuantGet32(a + 8);
  nRound = (int)colvecQuantGet32(a + 12);
  iSeed = colvecQuantGet32(a + 16) | ((uint64_t)colvecQuantGet32(a + 20) << 32);
  if (pM == NULL || !quantMetricOk(eMetric) || nDim < 1) {
    return COLVEC_CORRUPT;
  }
  if (nRound != pM->nRound) return COLVEC_CORRUPT;
  if (!pM->bSeeded && iSeed != 0) return COLVEC_CORRUPT;
  if (colvecQuantGet32(a + 24) > 2 * COLVEC_MAX_DIM) return COLVEC_CORRUPT;
  nParam = (int)colvecQuantGet32(a + 24);
  if (n != COLVEC_QUANT_HEADER_BYTES + 4 * (int64_t)nParam + 4) {
    return COLVEC_CORRUPT;
  }
  if (colvecQuantGet32(a + n - 4) != quantChecksum(a, n - 4))
    return COLVEC_CORRUPT;

  p = quantAlloc(pM, (ColvecMetric)eMetric, nDim, iSeed);
  if (p == NULL) return COLVEC_NOMEM;
  if (p->nParam != nParam) {
    colvecQuantFree(p);
    return COLVEC_CORRUPT;
  }
  for (i = 0; i < nParam; i++) {
    float r = colvecQuantGetF32(a + COLVEC_QUANT_HEADER_BYTES + 4 * i);
    if (!isfinite(r)) {
      colvecQuantFree(p);
      return COLVEC_CORRUPT;
    }
    p->aParam[i] = r;
  }
  if (pM->xCheck && pM->xCheck(p) != COLVEC_OK) {
    colvecQuantFree(p);
    return COLVEC_CORRUPT;
  }
  *ppQuant = p;
  return COLVEC_OK;
}

/*
** Encodes nVec vectors into consecutive codes: see colvec_quant.h. One
** scratch buffer for the whole batch. Returns COLVEC_OK or COLVEC_NOMEM.
*/
int colvecQuantEncodeBatch(const ColvecQuant *pQuant, const float *aVec,
                           int64_t nVec, int64_t nStride, uint8_t *aCode) {
  int rc = COLVEC_OK;
  int64_t i;
  float *aTmp;
  void (*xEncode)(const ColvecQuant *, const float *, uint8_t *, float *) =
      pQuant->pMethods->xEncode;
  if (xEncode == NULL || nVec <= 0) return COLVEC_OK;
  aTmp = colvecMallocZero(&rc, (int64_t)sizeof(float) * pQuant->nScratch);
  for (i = 0; rc == COLVEC_OK && i < nVec; i++) {
    xEncode(pQuant, aVec + i * nStride, aCode + i * pQuant->nCodeByte, aTmp);
  }
  colvecFree(aTmp);
  return rc;
}

/*
** colvecQuantEncodeBatch, COLVEC_QUANT_TICK vectors at a time, asking hook
** pInt (NULL: none) before each. Returns COLVEC_OK, COLVEC_NOMEM or
** COLVEC_INTERRUPT.
*/
int colvecQuantEncodeWith(const ColvecQuant *pQuant, const float *aVec,
                          int64_t nVec, int64_t nStride,
                          const ColvecInterrupt *pInt, uint8_t *aCode) {
  int rc = COLVEC_OK;
  int64_t i;
  for (i = 0; rc == COLVEC_OK && i < nVec; i += COLVEC_QUANT_TICK) {
    int64_t n = nVec - i < COLVEC_QUANT_TICK ? nVec - i : COLVEC_QUANT_TICK;
    if (COLVEC_INTERRUPTED(pInt)) return COLVEC_INTERRUPT;
    rc = colvecQuantEncodeBatch(pQuant, aVec + i * nStride, n, nStride,
                                aCode + i * pQuant->nCodeByte);
  }
  return rc;
}

/* Encodes one vector into pCode. Returns COLVEC_OK or COLVEC_NOMEM. */
int colvecQuantEncode(const ColvecQuant *pQuant, const float *aVec,
                      uint8_t *pCode) {
  return colvecQuantEncodeBatch(pQuant, aVec, 1, pQuant->nDim, pCode);
}

/*
** Prepares the estimator for one query: grows the query's buffers if they
** are too small (kept for the next query), lets the type's xPrepare fill
** them, and picks the query's kernels (the quantizer's, or those under the
** query's ceiling). Returns COLVEC_OK, COLVEC_NOMEM or COLVEC_RANGE (a type
** without estimator).
*/
int colvecQuantQueryPrepare(const ColvecQuant *pQuant, const float *aQuery,
                            ColvecQuantQuery *pQuery) {
  const ColvecQuantMethods *pM = pQuant->pMethods;
  pQuery->pQuant = NULL;
  pQuery->pKernels = NULL;
  if (pM->xPrepare == NULL || pQuant->pKernels == NULL) return COLVEC_RANGE;
  if (pQuery->nWeightAlloc < pQuant->nWeight) {
    float *aNew = colvecRealloc(pQuery->aWeight,
                                (int64_t)sizeof(float) * pQuant->nWeight);
    if (aNew == NULL) return COLVEC_NOMEM;
    pQuery->aWeight = aNew;
    pQuery->nWeightAlloc = pQuant->nWeight;
  }
  if (pQuery->nPlaneAlloc < pQuant->nPlane) {
    uint64_t *aNew = colvecRealloc(pQuery->aPlane,
                                   (int64_t)sizeof(uint64_t) * pQuant->nPlane);
    if (aNew == NULL) return COLVEC_NOMEM;
    pQuery->aPlane = aNew;
    pQuery->nPlaneAlloc = pQuant->nPlane;
  }
  pM->xPrepare(pQuant, aQuery, pQuery);
  pQuery->bScan = 0; /* until colvecQuantQueryPrepareScan */
  pQuery->pQuant = pQuant;
  pQuery->pKernels = pQuery->eKernel == COLVEC_QUANT_KERNEL_BEST
                         ? pQuant->pKernels
                         : quantChooseKernels(pM, pQuery->eKernel);
  return COLVEC_OK;
}

/* Frees the buffers of a query and zeroes the struct. */
void colvecQuantQueryClear(ColvecQuantQuery *pQuery) {
  colvecFree(pQuery->aWeight);
  colvecFree(pQuery->aPlane);
  colvecFree(pQuery->aScale16);
  memset(pQuery, 0, sizeof(*pQuery));
}

/*
** Caps the kernels of this query (and of those prepared with it later) at
** eKernel. Returns the name of the set now in use.
*/
const char *colvecQuantQueryKernel(ColvecQuantQuery *pQuery, int eKernel) {
  const ColvecQuant *pQuant = pQuery->pQuant;
  pQuery->eKernel = eKernel;
  if (pQuant == NULL) return "scalar";
  pQuery->pKernels = eKernel == COLVEC_QUANT_KERNEL_BEST
                         ? pQuant->pKernels
                         : quantChooseKernels(pQuant->pMethods, eKernel);
  return pQuery->pKernels->zName;
}

/*
** Caps the kernels of a quantizer (encoding, preparation, and the default
** of queries prepared later) at eKernel. Returns the name of the set now in
** use ("scalar" for a type without codes).
*/
const char *colvecQuantSetKernel(ColvecQuant *pQuant, int eKernel) {
  pQuant->pKernels = quantChooseKernels(pQuant->pMethods, eKernel);
  return pQuant->pKernels ? pQuant->pKernels->zName : "scalar";
}

/* Estimated distance from a prepared query to one code. */
float colvecQuantDistance(const ColvecQuantQuery *pQuery,
                          const uint8_t *pCode) {
  return pQuery->pKernels->xDistance(pQuery, pCode);
}

/*
** Estimated distances to nCode codes given by pointer: one call to the
** batch kernel of the query's set, which prefetches ahead.
*/
void colvecQuantDistanceBatch(const ColvecQuantQuery *pQuery,
                              const uint8_t *const *apCode, int nCode,
                              float *aOut) {
  pQuery->pKernels->xDistanceBatch(pQuery, apCode, nCode, aOut);
}

/* Prepares the scan's integer estimator; see colvec_quant.h. */
int colvecQuantQueryPrepareScan(ColvecQuantQuery *pQuery) {
  const ColvecQuant *pQuant = pQuery->pQuant;
  pQuery->bScan = 0;
  if (pQuant == NULL || pQuant->pMethods->xPrepareScan == NULL) {
    return COLVEC_OK;
  }
  if (pQuery->nScale16Alloc < pQuant->nWeight) {
    int16_t *aNew = colvecRealloc(pQuery->aScale16,
                                  (int64_t)sizeof(int16_t) * pQuant->nWeight);
    if (aNew == NULL) return COLVEC_NOMEM;
    pQuery->aScale16 = aNew;
    pQuery->nScale16Alloc = pQuant->nWeight;
  }
  pQuery->bScan = pQuant->pMethods->xPrepareScan(pQuant, pQuery);
  return COLVEC_OK;
}

/*
** Estimates of a scan; see colvec_quant.h. A set without an integer
** kernel of its own runs the portable set's, so that the estimates do not
** depend on the CPU.
*/
void colvecQuantScanBatch(const ColvecQuantQuery *pQuery,
                          const uint8_t *const *apCode, int nCode,
                          float *aOut) {
  const ColvecQuantKernels *pK = pQuery->pKernels;
  if (pQuery->bScan) {
    if (pK->xScanBatch == NULL) {
      pK = colvecQuantIsaScalar()->apType[pQuery->pQuant->pMethods->eType];
    }
    if (pK && pK->xScanBatch) {
      pK->xScanBatch(pQuery, apCode, nCode, aOut);
      return;
    }
  }
  pQuery->pKernels->xDistanceBatch(pQuery, apCode, nCode, aOut);
}

/* Whether the scan estimator has a kernel of its own; see colvec_quant.h. */
int colvecQuantScanIsNative(const ColvecQuantQuery *pQuery) {
  return pQuery->bScan && pQuery->pKernels->xScanBatch != NULL;
}
