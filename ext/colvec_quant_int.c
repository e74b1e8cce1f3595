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
** so splitting them would copy the shared two thirds. The kernels that
** score codes (sum w[d]*c[d], then colvecQuantIntEstimate) are grouped by
** instruction set in colvec_quant_scalar.c, _avx2.c, _avx512.c and
** _neon.c (see colvec_quant_kernels.h).
*/
#include "colvec_os.h"
#include "colvec_quant.h"

#include <math.h>

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

/*
** Rounds a prepared int8 query's weights to 16-bit integers for the scan's
** integer estimator: aScale16[d] = round(aWeight[d] / rScale16), the
** largest magnitude M = min(32767, (2^31 - 1) / (255 * nDim)), so that no
** partial sum of 255 * |aScale16[d]| over the nDim dimensions leaves 32
** bits, in whatever order a kernel adds. Returns 0 (nothing usable) when
** a weight is not finite or all are zero, or when M would be under
** COLVEC_QUANT_SCAN_MIN_STEPS (more than 8,224 dimensions).
*/
static int int8PrepareScan(const ColvecQuant *pQuant,
                           ColvecQuantQuery *pQuery) {
  int d, nDim = pQuant->nDim;
  const float *w = pQuery->aWeight;
  float rMax = 0.0f, rStep;
  int32_t nLimit = (int32_t)(2147483647 / (255 * (int64_t)nDim));
  if (nLimit > 32767) nLimit = 32767;
  for (d = 0; d < nDim; d++) {
    float r = fabsf(w[d]);
    if (!isfinite(r)) return 0;
    if (r > rMax) rMax = r;
  }
  if (rMax == 0.0f || nLimit < COLVEC_QUANT_SCAN_MIN_STEPS) return 0;
  rStep = rMax / (float)nLimit;
  if (!(rStep > 0.0f)) return 0; /* a subnormal maximum */
  for (d = 0; d < nDim; d++) {
    float r = floorf(w[d] / rStep + 0.5f);
    if (r > (float)nLimit) r = (float)nLimit;
    if (r < (float)-nLimit) r = (float)-nLimit;
    pQuery->aScale16[d] = (int16_t)r;
  }
  pQuery->rScale16 = rStep;
  return 1;
}

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
    .xPrepareScan = int8PrepareScan,
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
};
