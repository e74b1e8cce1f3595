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
** delta * sum_j 2^j popcount(b & plane_j): integer popcounts only
** (colvecQuantBitEstimate turns them into the distance).
**
** The kernels (popcounts, rotation round, query planes) are grouped by
** instruction set in colvec_quant_scalar.c, _avx2.c, _avx512.c and
** _neon.c; a bit set is a ColvecQuantBitKernels (colvec_quant_kernels.h).
** Every set gives identical results, so codes never depend on the set.
*/
#include "colvec_os.h"
#include "colvec_quant.h"
#include "colvec_quant_kernels.h"

#include <math.h>
#include <string.h>

/* Next value of the splitmix64 generator whose state is *pState. */
static uint64_t bitSplitmix64(uint64_t *pState) {
  uint64_t z = (*pState += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The bit kernel set chosen for pQuant (every table holds the bit sets'
** base member, colvec_quant_kernels.h). */
static const ColvecQuantBitKernels *bitKernels(const ColvecQuant *pQuant) {
  return (const ColvecQuantBitKernels *)pQuant->pKernels;
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
** Prepares the query: rotated query z in aWeight[0..nPad), its 4-bit
** version as bit planes in aPlane, and the constants rBase (|qc|^2 or
** <c,q>), rLow, rDelta, rSumQ. The query's buffers are large enough.
*/
static void bitPrepare(const ColvecQuant *pQuant, const float *aQuery,
                       ColvecQuantQuery *pQuery) {
  int i, j, nDim = pQuant->nDim, nPad = pQuant->nPad, nWord = nPad / 64;
  const float *c = pQuant->aParam;
  float *z = pQuery->aWeight, *q = pQuery->aWeight + nPad;
  float rLow, rHigh, rDelta, aThresh[COLVEC_QUANT_QUERY_LEVELS];
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
  rDelta = (rHigh - rLow) / (float)(COLVEC_QUANT_QUERY_LEVELS - 1);
  if (!(rDelta > 0.0f) || !isfinite(rDelta)) rDelta = 0.0f;
  for (j = 1; j < COLVEC_QUANT_QUERY_LEVELS; j++) {
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
  p->nPlane = COLVEC_QUANT_QUERY_BITS * (p->nPad / 64);
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
};
