/*
** colvec_topk.h — bounded top-k selection of (distance, rowid) pairs
** (SQLite-free). A max-heap of the k best seen so far; ties are broken by
** the smaller rowid so results are deterministic. Implemented in
** colvec_topk.c.
*/
#ifndef COLVEC_TOPK_H
#define COLVEC_TOPK_H

#include "colvec_core.h"

/* Largest k a query may ask for (sqlite-vec stops at 4096). */
#define COLVEC_MAX_K 100000

/* One candidate: its distance, its rowid and where it was found. */
typedef struct ColvecHit ColvecHit;
struct ColvecHit {
  double rDist;   /* distance to the query (smaller is better) */
  int64_t iRowid; /* rowid of the row */
  int64_t iRow;   /* its row in the source, or -1 (see colvecTopkPush) */
  int iSrc;       /* ColvecTopk.iSrc when it was pushed */
};

/*
** A range of distances (a KNN's `distance` bounds): rLo < d (or <= with
** bLoIncl) and d < rHi (or <= with bHiIncl). -INFINITY and +INFINITY with
** the inclusive flags set stand for no bound.
*/
typedef struct ColvecTopkRange ColvecTopkRange;
struct ColvecTopkRange {
  double rLo;  /* lower bound */
  double rHi;  /* upper bound */
  int bLoIncl; /* 1: rLo itself is in range */
  int bHiIncl; /* 1: rHi itself is in range */
};

/* The selection state. */
typedef struct ColvecTopk ColvecTopk;
struct ColvecTopk {
  int iSrc;              /* caller's tag of the source now pushing */
  int nMax;              /* k: how many hits to keep */
  int nHit;              /* hits held so far (<= nMax) */
  ColvecHit *aHit;       /* max-heap of nHit hits, worst at aHit[0] */
  int bRange;            /* 1: only hits in range are kept */
  ColvecTopkRange range; /* the range, when bRange */
  double rOfferMax;      /* bRange: largest distance offered, in range or not */
  int64_t nOfferIn;      /* bRange: hits offered in range, kept or not */
};

/*
** Prepares p to keep the k best hits (1 <= k <= COLVEC_MAX_K), allocating
** its array. Returns COLVEC_OK or COLVEC_NOMEM. Free with colvecTopkFree.
*/
int colvecTopkInit(ColvecTopk *p, int k);

/* Releases the array of p; p may be zeroed memory. */
void colvecTopkFree(ColvecTopk *p);

/*
** Keeps only hits whose distance lies in pRange from now on (NULL: all
** hits again). Also resets rOfferMax to -infinity and nOfferIn to 0.
*/
void colvecTopkSetRange(ColvecTopk *p, const ColvecTopkRange *pRange);

/* Returns non-zero when distance rDist lies in range pRange. */
int colvecTopkInRange(const ColvecTopkRange *pRange, double rDist);

/*
** Offers a hit: row iRow (-1 when the source has no row numbers) of the
** source the caller named in p->iSrc, with rowid iRowid. The hit keeps
** both, so that whoever reads the result finds the row without a search.
** A hit outside the range set by colvecTopkSetRange is not kept.
** Returns non-zero when it was kept. No allocation.
*/
int colvecTopkPush(ColvecTopk *p, double rDist, int64_t iRowid, int64_t iRow);

/*
** The distance a new hit must beat to be kept: the worst kept distance once
** k hits are held, +infinity before that.
*/
double colvecTopkBound(const ColvecTopk *p);

/*
** Sorts the kept hits best first (ascending distance, then rowid) in place;
** afterwards p->aHit[0..nHit-1] is the result and p must not be pushed to.
*/
void colvecTopkSort(ColvecTopk *p);

#endif /* COLVEC_TOPK_H */
