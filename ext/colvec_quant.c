/*
** colvec_quant.c — the type-independent half of the quantizers: training
** entry point, serialization, encoding and query entry points, and the
** helpers shared by colvec_quant_int.c and colvec_quant_bit.c.
** See colvec_quant.h for the design and the on-disk layout.
*/
#include "colvec_os.h"
#include "colvec_quant.h"
#include "colvec_distance.h"

#include <math.h>
#include <string.h>

/*
** How many codes ahead colvecQuantDistanceBatch prefetches: in a graph
** search, all of a node's unvisited neighbours (at most 2M) are requested
** before the first is scored, measured ~10% faster than 4 ahead (50k x
** 1536, bit codes).
*/
#define QUANT_PREFETCH 64

/* Magic bytes at the start of the serialized form. */
static const uint8_t quantMagic[4] = {'C', 'V', 'Q', 'Z'};

/* Stores u at p, little-endian. */
static void quantPut32(uint8_t *p, uint32_t u) {
  p[0] = (uint8_t)u;
  p[1] = (uint8_t)(u >> 8);
  p[2] = (uint8_t)(u >> 16);
  p[3] = (uint8_t)(u >> 24);
}


/* Stores r at p as a little-endian IEEE float32. */
void colvecQuantPutF32(uint8_t *p, float r) {
  uint32_t u;
  memcpy(&u, &r, 4);
  quantPut32(p, u);
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
** Copies the nDim floats of v to aOut, dividing by the Euclidean norm when
** the metric is cosine (a zero vector stays zero).
*/
void colvecQuantInput(const ColvecQuant *pQuant, const float *v, float *aOut) {
  int i;
  int n = pQuant->nDim;
  memcpy(aOut, v, sizeof(float) * (size_t)n);
  if (pQuant->eMetric == COLVEC_METRIC_COSINE) {
    double s = 0.0;
    for (i = 0; i < n; i++)
      s += (double)v[i] * v[i];
    if (s > 0.0) {
      float rInv = (float)(1.0 / sqrt(s));
      for (i = 0; i < n; i++)
        aOut[i] *= rInv;
    }
  }
}

/* Returns non-zero when the running CPU can execute the AVX2 kernels. */
static int quantCpuHasAvx2(void) {
  const unsigned mNeed = COLVEC_CPU_AVX2 | COLVEC_CPU_FMA | COLVEC_CPU_POPCNT;
  return (colvecOsCpuFeatures() & mNeed) == mNeed;
}

/*
** Returns non-zero if the CPU (and the OS, for the register state) runs
** AVX-512F/BW/VL with the VPOPCNTDQ instruction (the bit codes' popcounts;
** the int8 kernel needs F/BW/VL).
*/
static int quantCpuHasAvx512Popcnt(void) {
  const unsigned mNeed = COLVEC_CPU_AVX512 | COLVEC_CPU_AVX512POP;
  return (colvecOsCpuFeatures() & mNeed) == mNeed;
}

/*
** Sets *pbAvx2 and *pbAvx512 to whether quantizers may use their AVX2 and
** AVX-512 kernels: when the CPU runs them, capped at the distance kernel
** set in use (colvecKernelsBest, which honours COLVEC_KERNELS): scalar (or
** NEON) allows no x86 kernel here, AVX2 no AVX-512 one. One variable then
** fixes every kernel.
*/
static void quantKernels(int *pbAvx2, int *pbAvx512) {
  const char *zSet = colvecKernelsBest()->zName;
  *pbAvx2 = quantCpuHasAvx2();
  *pbAvx512 = *pbAvx2 && quantCpuHasAvx512Popcnt();
  if (strcmp(zSet, "avx512") == 0) return;
  *pbAvx512 = 0;
  if (strcmp(zSet, "avx2") != 0) *pbAvx2 = 0;
}

/* Name of the fastest code kernel quantizers use (colvec_debug). */
const char *colvecQuantKernelName(void) {
  int bAvx2, bAvx512;
  quantKernels(&bAvx2, &bAvx512);
  return bAvx512 ? "avx512" : (bAvx2 ? "avx2" : "scalar");
}

/*
** Allocates a zeroed quantizer with its parameter arrays sized for eType,
** nDim and eMetric (already validated). For the bit type also builds the
** rotation from iSeed. Returns NULL on allocation failure.
*/
static ColvecQuant *quantAlloc(ColvecQuantType eType, ColvecMetric eMetric,
                               int nDim, uint64_t iSeed) {
  int rc = COLVEC_OK;
  ColvecQuant *p = colvecMallocZero(&rc, sizeof(ColvecQuant));
  if (p == NULL) return NULL;
  p->eType = eType;
  p->eMetric = eMetric;
  p->nDim = nDim;
  quantKernels(&p->bAvx2, &p->bAvx512);
  switch (eType) {
  case COLVEC_QUANT_INT8:
    p->nParam = 2 * nDim;
    p->nCodeByte = nDim + 4;
    break;
  case COLVEC_QUANT_INT4:
    p->nParam = 2 * nDim;
    p->nCodeByte = (nDim + 1) / 2 + 4;
    break;
  case COLVEC_QUANT_BIT:
    p->iSeed = iSeed;
    p->nPad = 64;
    while (p->nPad < nDim)
      p->nPad *= 2;
    p->nParam = nDim;
    p->nCodeByte = p->nPad / 8 + 8;
    break;
  default:
    break;
  }
  if (p->nParam > 0) {
    p->aParam = colvecMallocZero(&rc, (int64_t)sizeof(float) * p->nParam);
  }
  if (rc == COLVEC_OK && eType == COLVEC_QUANT_BIT) {
    rc = colvecQuantBitSetup(p);
  }
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
    colvecFree(pQuant->aSign);
    colvecFree(pQuant);
  }
}

/* Returns non-zero if eType names a quantizer type. */
static int quantTypeOk(int eType) {
  return eType >= COLVEC_QUANT_NONE && eType <= COLVEC_QUANT_BIT;
}

/* Returns non-zero if eMetric is a metric the quantizers support. */
static int quantMetricOk(int eMetric) {
  return eMetric == COLVEC_METRIC_L2 || eMetric == COLVEC_METRIC_COSINE ||
         eMetric == COLVEC_METRIC_DOT;
}

/* Floats of scratch that encoding one vector needs. */
static int64_t quantScratchFloats(const ColvecQuant *pQuant) {
  return (int64_t)pQuant->nDim + pQuant->nPad;
}

/*
** Trains a quantizer: see colvec_quant.h. The per-type work is in
** colvecQuantIntTrain and colvecQuantBitTrain; this function validates the
** arguments and owns the scratch buffer.
*/
int colvecQuantTrain(ColvecQuantType eType, ColvecMetric eMetric, int nDim,
                     const float *aVec, int64_t nVec, int64_t nStride,
                     ColvecQuant **ppQuant) {
  return colvecQuantTrainWith(eType, eMetric, nDim, aVec, nVec, nStride, NULL,
                              ppQuant);
}

/* Trains with an interrupt hook; see colvec_quant.h. */
int colvecQuantTrainWith(ColvecQuantType eType, ColvecMetric eMetric,
                         int nDim, const float *aVec, int64_t nVec,
                         int64_t nStride, const ColvecInterrupt *pInt,
                         ColvecQuant **ppQuant) {
  int rc = COLVEC_OK;
  ColvecQuant *p;
  float *aTmp = NULL;
  *ppQuant = NULL;
  if (!quantTypeOk(eType) || !quantMetricOk(eMetric) || nDim < 1 ||
      nDim > COLVEC_MAX_DIM || nVec < 0 || (nVec > 0 && nStride < nDim) ||
      (nVec > 0 && aVec == NULL)) {
    return COLVEC_RANGE;
  }
  p = quantAlloc(eType, eMetric, nDim, COLVEC_QUANT_SEED);
  if (p == NULL) return COLVEC_NOMEM;
  if (eType != COLVEC_QUANT_NONE) {
    aTmp =
        colvecMallocZero(&rc, (int64_t)sizeof(float) * quantScratchFloats(p));
  }
  if (rc == COLVEC_OK) {
    if (eType == COLVEC_QUANT_BIT) {
      rc = colvecQuantBitTrain(p, aVec, nVec, nStride, aTmp, pInt);
    } else if (eType != COLVEC_QUANT_NONE) {
      rc = colvecQuantIntTrain(p, aVec, nVec, nStride, aTmp, pInt);
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
  return pQuant->eType;
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
  int bBit = pQuant->eType == COLVEC_QUANT_BIT;
  memcpy(aOut, quantMagic, 4);
  aOut[4] = (uint8_t)(COLVEC_QUANT_VERSION & 0xff);
  aOut[5] = (uint8_t)(COLVEC_QUANT_VERSION >> 8);
  aOut[6] = (uint8_t)pQuant->eType;
  aOut[7] = (uint8_t)pQuant->eMetric;
  quantPut32(aOut + 8, (uint32_t)pQuant->nDim);
  quantPut32(aOut + 12, bBit ? COLVEC_QUANT_ROUNDS : 0);
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
** is checked field by field before anything is allocated.
*/
int colvecQuantDeserialize(const uint8_t *a, int64_t n, ColvecQuant **ppQuant) {
  int i;
  int eType, eMetric, nDim, nRound, nParam;
  uint64_t iSeed;
  ColvecQuant *p;
  *ppQuant = NULL;
  if (a == NULL || n < COLVEC_QUANT_HEADER_BYTES + 4) return COLVEC_CORRUPT;
  if (memcmp(a, quantMagic, 4) != 0) return COLVEC_CORRUPT;
  if ((a[4] | (a[5] << 8)) != COLVEC_QUANT_VERSION) return COLVEC_CORRUPT;
  eType = a[6];
  eMetric = a[7];
  if (colvecQuantGet32(a + 8) > COLVEC_MAX_DIM) return COLVEC_CORRUPT;
  nDim = (int)colvecQuantGet32(a + 8);
  nRound = (int)colvecQuantGet32(a + 12);
  iSeed = colvecQuantGet32(a + 16) | ((uint64_t)colvecQuantGet32(a + 20) << 32);
  if (!quantTypeOk(eType) || !quantMetricOk(eMetric) || nDim < 1) {
    return COLVEC_CORRUPT;
  }
  if (nRound != (eType == COLVEC_QUANT_BIT ? COLVEC_QUANT_ROUNDS : 0)) {
    return COLVEC_CORRUPT;
  }
  if (eType != COLVEC_QUANT_BIT && iSeed != 0) return COLVEC_CORRUPT;
  if (colvecQuantGet32(a + 24) > 2 * COLVEC_MAX_DIM) return COLVEC_CORRUPT;
  nParam = (int)colvecQuantGet32(a + 24);
  if (n != COLVEC_QUANT_HEADER_BYTES + 4 * (int64_t)nParam + 4) {
    return COLVEC_CORRUPT;
  }
  if (colvecQuantGet32(a + n - 4) != quantChecksum(a, n - 4)) return COLVEC_CORRUPT;

  p = quantAlloc((ColvecQuantType)eType, (ColvecMetric)eMetric, nDim, iSeed);
  if (p == NULL) return COLVEC_NOMEM;
  if (p->nParam != nParam) {
    colvecQuantFree(p);
    return COLVEC_CORRUPT;
  }
  for (i = 0; i < nParam; i++) {
    float r = colvecQuantGetF32(a + COLVEC_QUANT_HEADER_BYTES + 4 * i);
    /* Every parameter is finite; int scales (second half) are >= 0. */
    if (!isfinite(r) || (eType != COLVEC_QUANT_BIT && i >= nDim && r < 0)) {
      colvecQuantFree(p);
      return COLVEC_CORRUPT;
    }
    p->aParam[i] = r;
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
  if (pQuant->eType == COLVEC_QUANT_NONE || nVec <= 0) return COLVEC_OK;
  aTmp = colvecMallocZero(&rc,
                          (int64_t)sizeof(float) * quantScratchFloats(pQuant));
  for (i = 0; rc == COLVEC_OK && i < nVec; i++) {
    const float *v = aVec + i * nStride;
    uint8_t *pCode = aCode + i * pQuant->nCodeByte;
    if (pQuant->eType == COLVEC_QUANT_BIT) {
      colvecQuantBitEncode(pQuant, v, pCode, aTmp);
    } else {
      colvecQuantIntEncode(pQuant, v, pCode, aTmp);
    }
  }
  colvecFree(aTmp);
  return rc;
}

/* Encodes one vector into pCode. Returns COLVEC_OK or COLVEC_NOMEM. */
int colvecQuantEncode(const ColvecQuant *pQuant, const float *aVec,
                      uint8_t *pCode) {
  return colvecQuantEncodeBatch(pQuant, aVec, 1, pQuant->nDim, pCode);
}

/*
** Prepares the estimator for one query: grows the query's buffers if they
** are too small (kept for the next query), then lets the type's code fill
** them. Returns COLVEC_OK, COLVEC_NOMEM or COLVEC_RANGE (type NONE).
*/
int colvecQuantQueryPrepare(const ColvecQuant *pQuant, const float *aQuery,
                            ColvecQuantQuery *pQuery) {
  int nWeight = pQuant->nDim + pQuant->nPad;
  int nPlane = pQuant->nPad / 16; /* 4 planes of nPad/64 words */
  pQuery->pQuant = NULL;
  if (pQuant->eType == COLVEC_QUANT_NONE) return COLVEC_RANGE;
  if (pQuery->nWeightAlloc < nWeight) {
    float *aNew =
        colvecRealloc(pQuery->aWeight, (int64_t)sizeof(float) * nWeight);
    if (aNew == NULL) return COLVEC_NOMEM;
    pQuery->aWeight = aNew;
    pQuery->nWeightAlloc = nWeight;
  }
  if (pQuery->nPlaneAlloc < nPlane) {
    uint64_t *aNew =
        colvecRealloc(pQuery->aPlane, (int64_t)sizeof(uint64_t) * nPlane);
    if (aNew == NULL) return COLVEC_NOMEM;
    pQuery->aPlane = aNew;
    pQuery->nPlaneAlloc = nPlane;
  }
  if (pQuant->eType == COLVEC_QUANT_BIT) {
    colvecQuantBitPrepare(pQuant, aQuery, pQuery);
  } else {
    colvecQuantIntPrepare(pQuant, aQuery, pQuery);
  }
  pQuery->pQuant = pQuant;
  return COLVEC_OK;
}

/* Frees the buffers of a query and zeroes the struct. */
void colvecQuantQueryClear(ColvecQuantQuery *pQuery) {
  colvecFree(pQuery->aWeight);
  colvecFree(pQuery->aPlane);
  memset(pQuery, 0, sizeof(*pQuery));
}

/*
** Caps the kernels of later colvecQuantDistance calls at eKernel (a
** COLVEC_QUANT_KERNEL_* value). Returns the name of the kernel now in use.
*/
const char *colvecQuantQueryKernel(ColvecQuantQuery *pQuery, int eKernel) {
  const ColvecQuant *p = pQuery->pQuant;
  pQuery->eKernel = eKernel;
  if (eKernel == COLVEC_QUANT_KERNEL_SCALAR || p == NULL || !p->bAvx2) {
    return "scalar";
  }
  if (eKernel == COLVEC_QUANT_KERNEL_BEST && p->bAvx512 &&
      (p->eType == COLVEC_QUANT_BIT || p->eType == COLVEC_QUANT_INT8)) {
    return "avx512";
  }
  return "avx2";
}

/* Estimated distance from a prepared query to one code. */
float colvecQuantDistance(const ColvecQuantQuery *pQuery,
                          const uint8_t *pCode) {
  if (pQuery->pQuant->eType == COLVEC_QUANT_BIT) {
    return colvecQuantBitDistance(pQuery, pCode);
  }
  return colvecQuantIntDistance(pQuery, pCode);
}

/* Prefetches every cache line of the nByte-byte code at p. */
static void quantPrefetchCode(const uint8_t *p, int nByte) {
  int iLine;
  for (iLine = 0; iLine < nByte; iLine += 64)
    COLVEC_PREFETCH(p + iLine);
  COLVEC_PREFETCH(p + nByte - 1);
}

/*
** Estimated distances to nCode codes given by pointer, prefetching the code
** QUANT_PREFETCH places ahead (every cache line of it; the first ones
** before the loop).
*/
void colvecQuantDistanceBatch(const ColvecQuantQuery *pQuery,
                              const uint8_t *const *apCode, int nCode,
                              float *aOut) {
  int i;
  int bBit = pQuery->pQuant->eType == COLVEC_QUANT_BIT;
  int nByte = pQuery->pQuant->nCodeByte;
  for (i = 0; i < nCode && i < QUANT_PREFETCH; i++)
    quantPrefetchCode(apCode[i], nByte);
  for (i = 0; i < nCode; i++) {
    if (i + QUANT_PREFETCH < nCode) {
      quantPrefetchCode(apCode[i + QUANT_PREFETCH], nByte);
    }
    aOut[i] = bBit ? colvecQuantBitDistance(pQuery, apCode[i])
                   : colvecQuantIntDistance(pQuery, apCode[i]);
  }
}
