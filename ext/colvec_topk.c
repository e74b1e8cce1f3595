/*
** colvec_topk.c — bounded top-k selection (SQLite-free); see colvec_topk.h.
*/
#include "colvec_topk.h"

#include <math.h>
#include <stdlib.h>

/* Returns non-zero when hit a ranks after hit b (worse, or tie and larger
** rowid). */
static int topkWorse(const ColvecHit *a, const ColvecHit *b) {
  if (a->rDist != b->rDist) return a->rDist > b->rDist;
  return a->iRowid > b->iRowid;
}

/* Allocates room for k hits; see header. */
int colvecTopkInit(ColvecTopk *p, int k) {
  p->iSrc = -1;
  p->bRange = 0;
  p->rOfferMax = -INFINITY;
  p->nOfferIn = 0;
  p->nMax = k;
  p->nHit = 0;
  p->aHit = colvecMalloc((int64_t)k * sizeof(ColvecHit));
  return p->aHit ? COLVEC_OK : COLVEC_NOMEM;
}

/* Releases the hit array. */
void colvecTopkFree(ColvecTopk *p) {
  colvecFree(p->aHit);
  p->aHit = NULL;
  p->nHit = 0;
}

/* Restores the max-heap property below slot i. */
static void topkSiftDown(ColvecHit *a, int n, int i) {
  for (;;) {
    int iL = 2 * i + 1, iR = iL + 1, iMax = i;
    ColvecHit t;
    if (iL < n && topkWorse(&a[iL], &a[iMax])) iMax = iL;
    if (iR < n && topkWorse(&a[iR], &a[iMax])) iMax = iR;
    if (iMax == i) return;
    t = a[i];
    a[i] = a[iMax];
    a[iMax] = t;
    i = iMax;
  }
}

/* Sets or clears the range; see header. */
void colvecTopkSetRange(ColvecTopk *p, const ColvecTopkRange *pRange) {
  p->bRange = pRange != NULL;
  if (pRange) p->range = *pRange;
  p->rOfferMax = -INFINITY;
  p->nOfferIn = 0;
}

/* Range test; see header. */
int colvecTopkInRange(const ColvecTopkRange *pRange, double rDist) {
  if (pRange->bLoIncl ? !(rDist >= pRange->rLo) : !(rDist > pRange->rLo)) {
    return 0;
  }
  return pRange->bHiIncl ? rDist <= pRange->rHi : rDist < pRange->rHi;
}

/* Offers a hit; see header. */
int colvecTopkPush(ColvecTopk *p, double rDist, int64_t iRowid, int64_t iRow) {
  ColvecHit h;
  if (p->bRange) {
    if (rDist > p->rOfferMax) p->rOfferMax = rDist;
    if (!colvecTopkInRange(&p->range, rDist)) return 0;
    p->nOfferIn++;
  }
  h.rDist = rDist;
  h.iRowid = iRowid;
  h.iRow = iRow;
  h.iSrc = p->iSrc;
  if (p->nHit < p->nMax) {
    int i = p->nHit++;
    while (i > 0) {
      int iUp = (i - 1) / 2;
      if (!topkWorse(&h, &p->aHit[iUp])) break;
      p->aHit[i] = p->aHit[iUp];
      i = iUp;
    }
    p->aHit[i] = h;
    return 1;
  }
  if (p->nMax == 0 || !topkWorse(&p->aHit[0], &h)) return 0;
  p->aHit[0] = h;
  topkSiftDown(p->aHit, p->nHit, 0);
  return 1;
}

/* The distance a new hit must beat; see header. */
double colvecTopkBound(const ColvecTopk *p) {
  if (p->nHit < p->nMax) return INFINITY;
  return p->aHit[0].rDist;
}

/* Sorts best first by repeatedly moving the heap's worst to the end. */
void colvecTopkSort(ColvecTopk *p) {
  int n = p->nHit;
  while (n > 1) {
    ColvecHit t = p->aHit[0];
    p->aHit[0] = p->aHit[n - 1];
    p->aHit[n - 1] = t;
    n--;
    topkSiftDown(p->aHit, n, 0);
  }
}
