/*
** colvec_distance_batch.c — the batch driver every float32 kernel set
** shares (colvecKernelsBatchF32): pairs of vectors through the set's pair
** kernel, with prefetches of the vectors that come next. Below the kernel
** files and their dispatcher (colvec_distance.c), which both call it.
*/
#include "colvec_distance.h"
#include "colvec_os.h"

/* Cache lines of each upcoming vector prefetched when a batch starts. */
#define BATCH_PREFETCH_LINES 4

/*
** Prefetches the first BATCH_PREFETCH_LINES cache lines (at most n floats) of
** the vector at p.
*/
static void batchPrefetchHead(const float *p, int n) {
  int i;
  for (i = 0; i < n && i < BATCH_PREFETCH_LINES * 16; i += 16) {
    COLVEC_PREFETCH(p + i);
  }
}

/*
** Batch driver shared by every kernel set (see colvec_distance.h): writes
** aOut[i] for each of the nVec vectors of apVec, two at a time through
** xPair, telling it which vectors come COLVEC_PREFETCH_AHEAD places later.
** The first vectors are prefetched here, since no earlier pair did it.
*/
void colvecKernelsBatchF32(ColvecPairF32 xPair,
                           float (*xOne)(const float *, const float *, int),
                           const float *q, const float *const *apVec, int nVec,
                           int n, float *aOut) {
  int i;
  for (i = 0; i < nVec && i < COLVEC_PREFETCH_AHEAD; i++) {
    batchPrefetchHead(apVec[i], n);
  }
  for (i = 0; i + 1 < nVec; i += 2) {
    int iAhead = i + COLVEC_PREFETCH_AHEAD;
    const float *pAhead0 = iAhead < nVec ? apVec[iAhead] : apVec[i];
    const float *pAhead1 = iAhead + 1 < nVec ? apVec[iAhead + 1] : pAhead0;
    xPair(q, apVec[i], apVec[i + 1], n, pAhead0, pAhead1, &aOut[i],
          &aOut[i + 1]);
  }
  if (i < nVec) aOut[i] = xOne(q, apVec[i], n);
}
