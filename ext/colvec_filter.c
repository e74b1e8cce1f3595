/*
** colvec_filter.c — pushed-down constraints over a segment's columns
** (SQLite-free); see colvec_filter.h.
**
** Every constraint is first compiled into a FilterPred: a verdict for the
** non-NULL rows (none, all, an int64 range, a double range, a byte-string
** comparison, or a LIKE/GLOB match), an optional inversion, and whether NULL
** rows pass. Numeric comparisons all reduce to one closed range test, so
** the hot loops are a subtract-and-compare (int64) or two compares (double)
** per row with no branch. The column is processed in chunks of
** FILTER_CHUNK_ROWS rows: a kernel fills 64-bit words of verdicts, the NULL
** bitmap is folded in, and the words are ANDed into the caller's bytes.
*/
#include "colvec_filter.h"
#include "colvec_os.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 64-bit words per chunk, and rows per chunk (a multiple of 8 and 64). */
#define FILTER_CHUNK_WORDS 64
#define FILTER_CHUNK_ROWS (FILTER_CHUNK_WORDS * 64)

/* A chunk in which fewer than 1 / FILTER_SPARSE_SHARE of the words still
** hold passing rows is decided one word (64 rows) at a time. */
#define FILTER_SPARSE_SHARE 4

/* Verdict kinds of a compiled predicate, for the non-NULL rows. */
#define FILTER_NONE 0  /* no row passes */
#define FILTER_ALL 1   /* every row passes */
#define FILTER_INT 2   /* iLo <= v <= iHi, on an INT64 column */
#define FILTER_REAL 3  /* rLo <= v <= rHi, on a DOUBLE column */
#define FILTER_VAR 4   /* memcmp-order comparison with z[0..n), by mCmp */
#define FILTER_MATCH 5 /* xMatch with pattern pPattern */

/* Bits of an outcome mask: which comparison results pass. */
#define FILTER_LT 1 /* column value < constraint value */
#define FILTER_EQ 2 /* column value == constraint value */
#define FILTER_GT 4 /* column value > constraint value */

/* Largest and smallest int64, and 2^63 as a double. */
#define FILTER_I64_MAX ((int64_t)0x7FFFFFFFFFFFFFFFLL)
#define FILTER_I64_MIN (-FILTER_I64_MAX - 1)
#define FILTER_TWO63 9223372036854775808.0

/* One constraint compiled against one column. */
typedef struct FilterPred FilterPred;
struct FilterPred {
  int eKind;        /* FILTER_NONE .. FILTER_MATCH */
  int bNullPass;    /* 1 when NULL rows pass */
  uint64_t mInvert; /* XORed into the verdicts (0 or ~0) */
  int64_t iLo;      /* FILTER_INT: lowest passing value */
  int64_t iHi;      /* FILTER_INT: highest passing value */
  double rLo;       /* FILTER_REAL: lowest passing value */
  double rHi;       /* FILTER_REAL: highest passing value */
  int mCmp;         /* FILTER_VAR: FILTER_LT|EQ|GT outcomes passing */
  int mMatch;       /* FILTER_MATCH: COLVEC_MATCH_* flags */
  const ColvecScalar *pPattern; /* FILTER_MATCH: the pattern */
  const uint8_t *z;             /* FILTER_VAR: the value's bytes */
  int n;                        /* bytes at z */
};

/* What one evaluation reads: the column and the LIKE/GLOB matcher. */
typedef struct FilterCtx FilterCtx;
struct FilterCtx {
  const ColvecColumnView *pCol; /* the column */
  ColvecMatchFunc xMatch;       /* LIKE/GLOB matcher, or NULL */
  void *pMatchCtx;              /* first argument of xMatch */
};

/* Returns the outcome mask (FILTER_LT|EQ|GT) of comparison operator eOp;
** IN is compiled member by member as EQ. */
static int filterOpMask(ColvecPlanOp eOp) {
  switch (eOp) {
  case COLVEC_OP_EQ:
  case COLVEC_OP_IS:
  case COLVEC_OP_IN:
    return FILTER_EQ;
  case COLVEC_OP_NE:
  case COLVEC_OP_ISNOT:
    return FILTER_LT | FILTER_GT;
  case COLVEC_OP_LT:
    return FILTER_LT;
  case COLVEC_OP_LE:
    return FILTER_LT | FILTER_EQ;
  case COLVEC_OP_GT:
    return FILTER_GT;
  case COLVEC_OP_GE:
    return FILTER_GT | FILTER_EQ;
  default:
    return 0;
  }
}

/* Returns the ordering class of a column: 1 numbers, 2 text, 3 blob. */
static int filterStoreClass(int eStore) {
  if (eStore == COLVEC_STORE_TEXT) return 2;
  if (eStore == COLVEC_STORE_BLOB) return 3;
  return 1;
}

/* Returns the ordering class of a value: 0 NULL, 1 numbers, 2 text, 3 blob. */
static int filterValueClass(const ColvecScalar *p) {
  switch (p->eType) {
  case COLVEC_TYPE_INTEGER:
    return 1;
  case COLVEC_TYPE_FLOAT:
    return isnan(p->r) ? 0 : 1;
  case COLVEC_TYPE_TEXT:
    return 2;
  case COLVEC_TYPE_BLOB:
    return 3;
  default:
    return 0;
  }
}

/* Sets p to pass no non-NULL row (bAll=0) or every one (bAll=1). */
static void filterSetConst(FilterPred *p, int bAll) {
  p->eKind = bAll ? FILTER_ALL : FILTER_NONE;
}

/*
** Compiles "int64 column <mCmp> exact value" into p, where the value lies
** between the integers iFloor <= value <= iCeil (equal when it is an
** integer). bNoFloor: no int64 is <= the value; bNoCeil: none is >= it.
*/
static void filterCompileInt(FilterPred *p, int mCmp, int64_t iFloor,
                             int64_t iCeil, int bNoFloor, int bNoCeil) {
  int bExact = !bNoFloor && !bNoCeil && iFloor == iCeil;
  int64_t iLo = FILTER_I64_MIN, iHi = FILTER_I64_MAX;
  p->eKind = FILTER_INT;
  if (mCmp == (FILTER_LT | FILTER_GT) || mCmp == FILTER_EQ) {
    if (!bExact) {
      filterSetConst(p, mCmp != FILTER_EQ);
      return;
    }
    iLo = iHi = iFloor;
    if (mCmp != FILTER_EQ) p->mInvert = ~(uint64_t)0;
  } else if (mCmp & FILTER_LT) { /* LT or LE: v <= largest passing */
    if (mCmp & FILTER_EQ) {      /* v <= value */
      if (bNoFloor) {
        filterSetConst(p, 0);
        return;
      }
      iHi = iFloor;
    } else if (bExact) { /* v < integer value */
      if (iFloor == FILTER_I64_MIN) {
        filterSetConst(p, 0);
        return;
      }
      iHi = iFloor - 1;
    } else { /* v < non-integer value: v <= floor */
      if (bNoFloor) {
        filterSetConst(p, 0);
        return;
      }
      iHi = iFloor;
    }
  } else { /* GT or GE: v >= smallest passing */
    if (mCmp & FILTER_EQ) {
      if (bNoCeil) {
        filterSetConst(p, 0);
        return;
      }
      iLo = iCeil;
    } else if (bExact) {
      if (iCeil == FILTER_I64_MAX) {
        filterSetConst(p, 0);
        return;
      }
      iLo = iCeil + 1;
    } else {
      if (bNoCeil) {
        filterSetConst(p, 0);
        return;
      }
      iLo = iCeil;
    }
  }
  p->iLo = iLo;
  p->iHi = iHi;
}

/*
** Compiles "double column <mCmp> exact value" into p, where rFloor is the
** largest double <= the value and rCeil the smallest double >= it (equal
** when the value is a double).
*/
static void filterCompileReal(FilterPred *p, int mCmp, double rFloor,
                              double rCeil) {
  int bExact = rFloor == rCeil;
  p->eKind = FILTER_REAL;
  p->rLo = -INFINITY;
  p->rHi = INFINITY;
  if (mCmp == (FILTER_LT | FILTER_GT) || mCmp == FILTER_EQ) {
    if (!bExact) {
      filterSetConst(p, mCmp != FILTER_EQ);
      return;
    }
    p->rLo = p->rHi = rFloor;
    if (mCmp != FILTER_EQ) p->mInvert = ~(uint64_t)0;
  } else if (mCmp & FILTER_LT) {
    if ((mCmp & FILTER_EQ) || !bExact) {
      p->rHi = rFloor;
    } else {
      if (rFloor == -INFINITY) {
        filterSetConst(p, 0);
        return;
      }
      p->rHi = nextafter(rFloor, -INFINITY);
    }
  } else {
    if ((mCmp & FILTER_EQ) || !bExact) {
      p->rLo = rCeil;
    } else {
      if (rCeil == INFINITY) {
        filterSetConst(p, 0);
        return;
      }
      p->rLo = nextafter(rCeil, INFINITY);
    }
  }
}

/*
** Returns -1, 0 or +1 as integer i is less than, equal to or greater than
** double r (not NaN), exactly (the portable branch of SQLite's
** sqlite3IntFloatCompare).
*/
static int filterIntFloatCompare(int64_t i, double r) {
  int64_t y;
  double s;
  if (r < -FILTER_TWO63) return +1;
  if (r >= FILTER_TWO63) return -1;
  y = (int64_t)r;
  if (i < y) return -1;
  if (i > y) return +1;
  s = (double)i;
  if (s < r) return -1;
  if (s > r) return +1;
  return 0;
}

/*
** Compiles a comparison (outcome mask mCmp) between a numeric column and a
** numeric value pVal into p.
*/
static void filterCompileNumeric(FilterPred *p, int eStore, int mCmp,
                                 const ColvecScalar *pVal) {
  if (eStore == COLVEC_STORE_INT64) {
    if (pVal->eType == COLVEC_TYPE_INTEGER) {
      filterCompileInt(p, mCmp, pVal->i, pVal->i, 0, 0);
    } else {
      /* bNoFloor: no int64 is <= r; bNoCeil: none is >= r */
      double r = pVal->r;
      int bNoFloor = r < -FILTER_TWO63, bNoCeil = r >= FILTER_TWO63;
      int64_t iFloor = FILTER_I64_MIN, iCeil = FILTER_I64_MAX;
      if (!bNoFloor && !bNoCeil) {
        iFloor = (int64_t)floor(r);
        iCeil = (int64_t)ceil(r);
      } else if (bNoFloor) {
        iCeil = FILTER_I64_MIN;
      } else {
        iFloor = FILTER_I64_MAX;
      }
      filterCompileInt(p, mCmp, iFloor, iCeil, bNoFloor, bNoCeil);
    }
  } else if (pVal->eType == COLVEC_TYPE_FLOAT) {
    filterCompileReal(p, mCmp, pVal->r, pVal->r);
  } else {
    double d = (double)pVal->i;
    int c = filterIntFloatCompare(pVal->i, d);
    if (c == 0) {
      filterCompileReal(p, mCmp, d, d);
    } else if (c < 0) {
      filterCompileReal(p, mCmp, nextafter(d, -INFINITY), d);
    } else {
      filterCompileReal(p, mCmp, d, nextafter(d, INFINITY));
    }
  }
}

/*
** Compiles "column <eOp> *pVal" against pCol into *p (pVal unused for
** ISNULL/NOTNULL). LIKE and GLOB ask xMatch once about the NULL rows.
** Returns COLVEC_OK, COLVEC_FILTER_ABORT when xMatch failed, or
** COLVEC_ERROR for a malformed value or an operator that is no filter.
*/
static int filterCompile(const FilterCtx *pCtx, ColvecPlanOp eOp,
                         const ColvecScalar *pVal, FilterPred *p) {
  int eStore = pCtx->pCol->eStore;
  int eVal, mCmp;
  memset(p, 0, sizeof(*p));
  if (eOp == COLVEC_OP_ISNULL || eOp == COLVEC_OP_NOTNULL) {
    p->bNullPass = eOp == COLVEC_OP_ISNULL;
    filterSetConst(p, !p->bNullPass);
    return COLVEC_OK;
  }
  if (pVal->eType < COLVEC_TYPE_INTEGER || pVal->eType > COLVEC_TYPE_NULL) {
    return COLVEC_ERROR;
  }
  if ((pVal->eType == COLVEC_TYPE_TEXT || pVal->eType == COLVEC_TYPE_BLOB) &&
      (pVal->n < 0 || (pVal->n > 0 && pVal->z == NULL))) {
    return COLVEC_ERROR;
  }
  eVal = filterValueClass(pVal);
  if (eOp == COLVEC_OP_LIKE || eOp == COLVEC_OP_GLOB) {
    ColvecScalar nullRow; /* what the NULL rows hold */
    int bMatch;
    if (pCtx->xMatch == NULL) {
      filterSetConst(p, 1); /* permissive, see the header */
      return COLVEC_OK;
    }
    p->eKind = FILTER_MATCH;
    p->mMatch = eOp == COLVEC_OP_GLOB ? COLVEC_MATCH_GLOB : 0;
    p->pPattern = pVal;
    memset(&nullRow, 0, sizeof(nullRow));
    nullRow.eType = COLVEC_TYPE_NULL;
    bMatch = pCtx->xMatch(pCtx->pMatchCtx, p->mMatch, pVal, &nullRow);
    if (bMatch < 0) return COLVEC_FILTER_ABORT;
    p->bNullPass = bMatch > 0;
    return COLVEC_OK;
  }
  mCmp = filterOpMask(eOp);
  if (mCmp == 0) return COLVEC_ERROR;
  if (eVal == 0) { /* NULL value */
    p->bNullPass = eOp == COLVEC_OP_IS;
    filterSetConst(p, eOp == COLVEC_OP_ISNOT);
    return COLVEC_OK;
  }
  p->bNullPass = eOp == COLVEC_OP_ISNOT;
  if (filterStoreClass(eStore) != eVal) {
    int eOutcome = filterStoreClass(eStore) < eVal ? FILTER_LT : FILTER_GT;
    filterSetConst(p, (mCmp & eOutcome) != 0);
  } else if (eVal == 1) {
    filterCompileNumeric(p, eStore, mCmp, pVal);
  } else {
    p->eKind = FILTER_VAR;
    p->mCmp = mCmp;
    p->z = pVal->z;
    p->n = pVal->n;
  }
  return COLVEC_OK;
}

/*
** Range kernel for int64: word w of aOut gets bit j set when
** iLo <= a[64w+j] <= iHi, for the n values at a (bits past n are 0).
*/
static void filterIntKernel(const int64_t *a, int64_t n, int64_t iLo,
                            int64_t iHi, uint64_t *aOut) {
  const uint64_t uLo = (uint64_t)iLo;
  const uint64_t uSpan = (uint64_t)iHi - (uint64_t)iLo;
  int64_t iW, nFull = n >> 6;
  for (iW = 0; iW < nFull; iW++) {
    const int64_t *pV = a + (iW << 6);
    uint64_t m = 0;
    int j;
    for (j = 0; j < 64; j++) {
      m |= (uint64_t)(((uint64_t)pV[j] - uLo) <= uSpan) << j;
    }
    aOut[iW] = m;
  }
  if (n & 63) {
    const int64_t *pV = a + (nFull << 6);
    uint64_t m = 0;
    int j;
    for (j = 0; j < (int)(n & 63); j++) {
      m |= (uint64_t)(((uint64_t)pV[j] - uLo) <= uSpan) << j;
    }
    aOut[nFull] = m;
  }
}

/*
** Range kernel for doubles: word w of aOut gets bit j set when
** rLo <= a[64w+j] <= rHi, for the n values at a (bits past n are 0).
*/
static void filterRealKernel(const double *a, int64_t n, double rLo, double rHi,
                             uint64_t *aOut) {
  int64_t iW, nFull = n >> 6;
  for (iW = 0; iW < nFull; iW++) {
    const double *pV = a + (iW << 6);
    uint64_t m = 0;
    int j;
    for (j = 0; j < 64; j++) {
      m |= (uint64_t)((pV[j] >= rLo) & (pV[j] <= rHi)) << j;
    }
    aOut[iW] = m;
  }
  if (n & 63) {
    const double *pV = a + (nFull << 6);
    uint64_t m = 0;
    int j;
    for (j = 0; j < (int)(n & 63); j++) {
      m |= (uint64_t)((pV[j] >= rLo) & (pV[j] <= rHi)) << j;
    }
    aOut[nFull] = m;
  }
}

/*
** Comparison kernel for text and blobs: bit i of aOut is set when row
** iRow+i of pCol compares with p->z[0..p->n) with an outcome in p->mCmp.
** Returns COLVEC_OK, or COLVEC_ERROR on decreasing offsets.
*/
static int filterVarKernel(const ColvecColumnView *pCol, const FilterPred *p,
                           int64_t iRow, int64_t n, uint64_t *aOut) {
  const int64_t *aOff = pCol->aOff + iRow;
  const uint8_t *aByte = pCol->aByte;
  const uint8_t *z = p->z;
  const int64_t nVal = p->n;
  int64_t i, iBad = 0;
  memset(aOut, 0, ((n + 63) >> 6) * sizeof(uint64_t));
  if (p->mCmp == FILTER_EQ) {
    for (i = 0; i < n; i++) {
      int64_t nRow = aOff[i + 1] - aOff[i];
      const uint8_t *zRow = aByte + aOff[i];
      int b = nRow == nVal &&
              (nVal == 0 || (zRow[0] == z[0] && memcmp(zRow, z, nVal) == 0));
      iBad |= nRow;
      aOut[i >> 6] |= (uint64_t)b << (i & 63);
    }
  } else {
    const int mCmp = p->mCmp;
    for (i = 0; i < n; i++) {
      int64_t nRow = aOff[i + 1] - aOff[i];
      int64_t nMin = nRow < nVal ? nRow : nVal;
      int c = nMin > 0 ? memcmp(aByte + aOff[i], z, (size_t)nMin) : 0;
      int eOutcome;
      if (c == 0) c = (nRow > nVal) - (nRow < nVal);
      eOutcome = c < 0 ? FILTER_LT : (c == 0 ? FILTER_EQ : FILTER_GT);
      iBad |= nRow;
      aOut[i >> 6] |= (uint64_t)((mCmp & eOutcome) != 0) << (i & 63);
    }
  }
  return iBad < 0 ? COLVEC_ERROR : COLVEC_OK;
}

/* Reads one row's value; see header. */
int colvecFilterRowValue(const ColvecColumnView *pCol, int64_t iRow,
                         ColvecScalar *pRow) {
  if (pCol->aNull && (pCol->aNull[iRow >> 3] >> (iRow & 7)) & 1) {
    pRow->eType = COLVEC_TYPE_NULL;
    return COLVEC_OK;
  }
  switch (pCol->eStore) {
  case COLVEC_STORE_INT64:
    pRow->eType = COLVEC_TYPE_INTEGER;
    pRow->i = pCol->aInt[iRow];
    break;
  case COLVEC_STORE_DOUBLE:
    pRow->eType = COLVEC_TYPE_FLOAT;
    pRow->r = pCol->aReal[iRow];
    break;
  default: {
    int64_t a = pCol->aOff[iRow], b = pCol->aOff[iRow + 1];
    if (a < 0 || b < a || b > pCol->nByte || b - a > 0x7FFFFFFF) {
      return COLVEC_ERROR;
    }
    pRow->eType =
        pCol->eStore == COLVEC_STORE_TEXT ? COLVEC_TYPE_TEXT : COLVEC_TYPE_BLOB;
    pRow->z = pCol->aByte ? pCol->aByte + a : NULL;
    pRow->n = (int)(b - a);
    break;
  }
  }
  return COLVEC_OK;
}

/* Compares two values; see header. */
int colvecFilterCompare(const ColvecScalar *pA, const ColvecScalar *pB) {
  int eA = filterValueClass(pA), eB = filterValueClass(pB);
  if (eA != eB) return eA < eB ? -1 : +1;
  if (eA == 0) return 0;
  if (eA == 1) {
    if (pA->eType == COLVEC_TYPE_INTEGER) {
      if (pB->eType == COLVEC_TYPE_INTEGER) {
        return (pA->i > pB->i) - (pA->i < pB->i);
      }
      return filterIntFloatCompare(pA->i, pB->r);
    }
    if (pB->eType == COLVEC_TYPE_INTEGER) {
      return -filterIntFloatCompare(pB->i, pA->r);
    }
    return (pA->r > pB->r) - (pA->r < pB->r);
  } else {
    int nMin = pA->n < pB->n ? pA->n : pB->n;
    int c = nMin > 0 ? memcmp(pA->z, pB->z, (size_t)nMin) : 0;
    if (c != 0) return c < 0 ? -1 : +1;
    return (pA->n > pB->n) - (pA->n < pB->n);
  }
}

/* Decides one value against one operand; see header. */
int colvecFilterScalarPass(ColvecPlanOp eOp, const ColvecScalar *pRow,
                           const ColvecScalar *pVal) {
  int bNullRow = filterValueClass(pRow) == 0;
  int bNullVal = filterValueClass(pVal) == 0;
  int c;
  if (eOp == COLVEC_OP_IS || eOp == COLVEC_OP_ISNOT) {
    int bSame = bNullRow || bNullVal ? bNullRow && bNullVal
                                     : colvecFilterCompare(pRow, pVal) == 0;
    return eOp == COLVEC_OP_IS ? bSame : !bSame;
  }
  if (bNullRow || bNullVal) return 0;
  c = colvecFilterCompare(pRow, pVal);
  return (filterOpMask(eOp) & (c < 0   ? FILTER_LT
                               : c > 0 ? FILTER_GT
                                       : FILTER_EQ)) != 0;
}

/* qsort() comparator over ColvecScalar: filterScalarCmp. */
static int filterScalarSortCmp(const void *pA, const void *pB) {
  return colvecFilterCompare((const ColvecScalar *)pA,
                             (const ColvecScalar *)pB);
}

/* Sorts an IN list; see header. */
int colvecFilterInSort(ColvecScalar *aVal, int nVal) {
  int i, nOut = 0;
  if (nVal <= 0 || aVal == NULL) return 0;
  qsort(aVal, (size_t)nVal, sizeof(ColvecScalar), filterScalarSortCmp);
  for (i = 0; i < nVal; i++) {
    if (filterValueClass(&aVal[i]) == 0) continue; /* never matches */
    if (nOut > 0 && colvecFilterCompare(&aVal[nOut - 1], &aVal[i]) == 0)
      continue;
    aVal[nOut++] = aVal[i];
  }
  return nOut;
}

/* Searches a sorted IN list; see header. */
int colvecFilterInHas(const ColvecScalar *aVal, int nVal,
                      const ColvecScalar *pVal) {
  int iLo = 0, iHi = nVal - 1;
  if (filterValueClass(pVal) == 0) return 0;
  while (iLo <= iHi) {
    int iMid = iLo + (iHi - iLo) / 2;
    int c = colvecFilterCompare(&aVal[iMid], pVal);
    if (c == 0) return 1;
    if (c < 0) {
      iLo = iMid + 1;
    } else {
      iHi = iMid - 1;
    }
  }
  return 0;
}

/*
** Returns 1 when the nVal members at aVal are in colvecFilterInSort order
** (strictly increasing, none NULL or NaN, every text or blob well formed),
** else 0.
*/
static int filterInSorted(const ColvecScalar *aVal, int nVal) {
  int i;
  for (i = 0; i < nVal; i++) {
    const ColvecScalar *p = &aVal[i];
    if (filterValueClass(p) == 0) return 0;
    if ((p->eType == COLVEC_TYPE_TEXT || p->eType == COLVEC_TYPE_BLOB) &&
        (p->n < 0 || (p->n > 0 && p->z == NULL))) {
      return 0;
    }
    if (i > 0 && colvecFilterCompare(&aVal[i - 1], p) >= 0) return 0;
  }
  return 1;
}

/*
** IN kernel for a sorted list: bit i of aOut is set when row iRow+i of
** pCol equals a member of aVal[0..nVal) (colvecFilterInSort order); NULL
** rows are cleared by the caller. Returns COLVEC_OK or COLVEC_ERROR
** (malformed offsets).
*/
static int filterInKernel(const ColvecColumnView *pCol,
                          const ColvecScalar *aVal, int nVal, int64_t iRow,
                          int64_t n, uint64_t *aOut) {
  ColvecScalar row; /* the value of the row being looked up */
  int64_t i;
  memset(aOut, 0, ((n + 63) >> 6) * sizeof(uint64_t));
  memset(&row, 0, sizeof(row));
  for (i = 0; i < n; i++) {
    if (colvecFilterRowValue(pCol, iRow + i, &row) != COLVEC_OK)
      return COLVEC_ERROR;
    if (colvecFilterInHas(aVal, nVal, &row)) {
      aOut[i >> 6] |= (uint64_t)1 << (i & 63);
    }
  }
  return COLVEC_OK;
}

/*
** LIKE/GLOB kernel: bit i of aOut is set when row iRow+i matches pattern
** p->pPattern through pCtx->xMatch, given the row's value as the column
** stores it. Rows whose bit in aNullW is set are skipped. Returns
** COLVEC_OK, COLVEC_ERROR on decreasing offsets or a value too long for
** xMatch, or COLVEC_FILTER_ABORT when xMatch failed.
*/
static int filterMatchKernel(const FilterCtx *pCtx, const FilterPred *p,
                             int64_t iRow, int64_t n, const uint64_t *aNullW,
                             uint64_t *aOut) {
  const ColvecColumnView *pCol = pCtx->pCol;
  ColvecScalar row; /* the value of the row being matched */
  int64_t i;
  memset(aOut, 0, ((n + 63) >> 6) * sizeof(uint64_t));
  memset(&row, 0, sizeof(row));
  for (i = 0; i < n; i++) {
    int bMatch;
    if (aNullW && (aNullW[i >> 6] >> (i & 63)) & 1) continue;
    if (colvecFilterRowValue(pCol, iRow + i, &row) != COLVEC_OK)
      return COLVEC_ERROR;
    bMatch = pCtx->xMatch(pCtx->pMatchCtx, p->mMatch, p->pPattern, &row);
    if (bMatch < 0) return COLVEC_FILTER_ABORT;
    if (bMatch) aOut[i >> 6] |= (uint64_t)1 << (i & 63);
  }
  return COLVEC_OK;
}

/*
** Computes the verdicts of predicate p for rows [iRow, iRow+n) of the
** column into aOut ((n+63)/64 words, bits past n zero), NULL rows included
** as p says (aNullW: the chunk's NULL words, or NULL). Returns COLVEC_OK or
** COLVEC_ERROR (malformed offsets).
*/
static int filterPredWords(const FilterCtx *pCtx, const FilterPred *p,
                           int64_t iRow, int64_t n, const uint64_t *aNullW,
                           uint64_t *aOut) {
  const ColvecColumnView *pCol = pCtx->pCol;
  int64_t nW = (n + 63) >> 6, iW;
  uint64_t mLast = (n & 63) ? (((uint64_t)1 << (n & 63)) - 1) : ~(uint64_t)0;
  int rc = COLVEC_OK;
  switch (p->eKind) {
  case FILTER_NONE:
    memset(aOut, 0, nW * sizeof(uint64_t));
    break;
  case FILTER_ALL:
    memset(aOut, 0xff, nW * sizeof(uint64_t));
    break;
  case FILTER_INT:
    filterIntKernel(pCol->aInt + iRow, n, p->iLo, p->iHi, aOut);
    break;
  case FILTER_REAL:
    filterRealKernel(pCol->aReal + iRow, n, p->rLo, p->rHi, aOut);
    break;
  case FILTER_VAR:
    rc = filterVarKernel(pCol, p, iRow, n, aOut);
    break;
  default:
    rc = filterMatchKernel(pCtx, p, iRow, n, aNullW, aOut);
    break;
  }
  if (p->mInvert) {
    for (iW = 0; iW < nW; iW++)
      aOut[iW] ^= p->mInvert;
  }
  if (aNullW) {
    uint64_t mPass = p->bNullPass ? ~(uint64_t)0 : 0;
    for (iW = 0; iW < nW; iW++) {
      aOut[iW] = (aOut[iW] & ~aNullW[iW]) | (aNullW[iW] & mPass);
    }
  }
  aOut[nW - 1] &= mLast;
  return rc;
}

/* Loads nByte <= 8 bytes at a as a little-endian word. */
static uint64_t filterLoadWord(const uint8_t *a, int nByte) {
  uint64_t w = 0;
  int k;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (nByte == 8) {
    memcpy(&w, a, 8); /* one load */
    return w;
  }
#endif
  for (k = 0; k < nByte; k++)
    w |= (uint64_t)a[k] << (8 * k);
  return w;
}

/* ANDs word w into the nByte <= 8 bytes at a, little-endian. */
static void filterAndWord(uint8_t *a, int nByte, uint64_t w) {
  int k;
  for (k = 0; k < nByte; k++)
    a[k] &= (uint8_t)(w >> (8 * k));
}

/* Checks a view; see header. */
int colvecFilterViewCheck(const ColvecColumnView *pCol) {
  int64_t nRow = pCol->nRow;
  if (nRow < 0) return COLVEC_ERROR;
  switch (pCol->eStore) {
  case COLVEC_STORE_INT64:
    return (nRow == 0 || pCol->aInt) ? COLVEC_OK : COLVEC_ERROR;
  case COLVEC_STORE_DOUBLE:
    return (nRow == 0 || pCol->aReal) ? COLVEC_OK : COLVEC_ERROR;
  case COLVEC_STORE_TEXT:
  case COLVEC_STORE_BLOB:
    if (nRow == 0) return COLVEC_OK;
    if (pCol->aOff == NULL || pCol->nByte < 0) return COLVEC_ERROR;
    if (pCol->aByte == NULL && pCol->nByte > 0) return COLVEC_ERROR;
    if (pCol->aOff[0] < 0 || pCol->aOff[nRow] > pCol->nByte) {
      return COLVEC_ERROR;
    }
    return COLVEC_OK;
  default:
    return COLVEC_ERROR;
  }
}

/*
** Computes the verdicts of "column <eOp> aVal" for rows [iRow, iRow+n)
** into aOut ((n+63)/64 words), the NULL rows as the operator says (aNullW:
** their words, or NULL). pPred is the compiled constraint of a non-IN
** operator; an IN list is searched (bSorted) or compiled member by member
** into pPred. Returns COLVEC_OK, COLVEC_ERROR or COLVEC_FILTER_ABORT.
*/
static int filterChunk(const FilterCtx *pCtx, ColvecPlanOp eOp,
                       FilterPred *pPred, const ColvecScalar *aVal, int nVal,
                       int bSorted, int64_t iRow, int64_t n,
                       const uint64_t *pNullW, uint64_t *aOut) {
  int64_t nW = (n + 63) >> 6, iW;
  uint64_t aTmp[FILTER_CHUNK_WORDS];
  int rc = COLVEC_OK, i;
  if (eOp != COLVEC_OP_IN) {
    return filterPredWords(pCtx, pPred, iRow, n, pNullW, aOut);
  }
  if (bSorted) {
    rc = filterInKernel(pCtx->pCol, aVal, nVal, iRow, n, aOut);
    for (iW = 0; pNullW && iW < nW; iW++)
      aOut[iW] &= ~pNullW[iW]; /* NULL is in no list */
    return rc;
  }
  memset(aOut, 0, nW * sizeof(uint64_t));
  for (i = 0; rc == COLVEC_OK && i < nVal; i++) {
    rc = filterCompile(pCtx, eOp, &aVal[i], pPred);
    if (rc == COLVEC_OK && pPred->eKind != FILTER_NONE) {
      rc = filterPredWords(pCtx, pPred, iRow, n, pNullW, aTmp);
      for (iW = 0; iW < nW; iW++)
        aOut[iW] |= aTmp[iW];
    }
  }
  return rc;
}

/* Evaluates a constraint into aBits; see header. */
int colvecFilterEval(const ColvecColumnView *pCol, ColvecPlanOp eOp,
                     const ColvecScalar *aVal, int nVal, ColvecMatchFunc xMatch,
                     void *pCtx, uint8_t *aBits) {
  FilterCtx ctx;
  FilterPred pred;
  uint64_t aNullW[FILTER_CHUNK_WORDS];
  uint64_t aOut[FILTER_CHUNK_WORDS];
  uint64_t aHave[FILTER_CHUNK_WORDS]; /* the chunk's bits before this one */
  int64_t iRow, nRow;
  int rc = COLVEC_OK;
  int bNoArg = eOp == COLVEC_OP_ISNULL || eOp == COLVEC_OP_NOTNULL;
  int bSorted; /* IN: a long list in colvecFilterInSort order, searched */

  if (pCol == NULL || colvecFilterViewCheck(pCol) != COLVEC_OK) {
    return COLVEC_ERROR;
  }
  if (eOp < COLVEC_OP_EQ || eOp > COLVEC_OP_IN) return COLVEC_ERROR;
  if (eOp == COLVEC_OP_IN ? (nVal < 0 || (nVal > 0 && aVal == NULL))
                          : (!bNoArg && (nVal < 1 || aVal == NULL))) {
    return COLVEC_ERROR;
  }
  nRow = pCol->nRow;
  if (nRow > 0 && aBits == NULL) return COLVEC_ERROR;
  ctx.pCol = pCol;
  ctx.xMatch = xMatch;
  ctx.pMatchCtx = pCtx;
  bSorted = eOp == COLVEC_OP_IN && nVal > COLVEC_FILTER_IN_LINEAR &&
            filterInSorted(aVal, nVal);
  if (eOp != COLVEC_OP_IN) {
    rc = filterCompile(&ctx, eOp, bNoArg ? NULL : &aVal[0], &pred);
  } else if (!bSorted) {
    int i;
    for (i = 0; rc == COLVEC_OK && i < nVal; i++) {
      rc = filterCompile(&ctx, eOp, &aVal[i], &pred);
    }
  }

  for (iRow = 0; rc == COLVEC_OK && iRow < nRow; iRow += FILTER_CHUNK_ROWS) {
    int64_t n =
        nRow - iRow < FILTER_CHUNK_ROWS ? nRow - iRow : FILTER_CHUNK_ROWS;
    int64_t nByte = (n + 7) >> 3, nW = (n + 63) >> 6, iW, nHave = 0;
    uint8_t *aDst = aBits + (iRow >> 3);
    const uint64_t *pNullW = NULL;
    for (iW = 0; iW < nW; iW++) {
      int64_t nLeft = nByte - iW * 8;
      aHave[iW] = filterLoadWord(aDst + iW * 8, nLeft < 8 ? (int)nLeft : 8);
      nHave += aHave[iW] != 0;
    }
    if (nHave == 0) continue; /* no row left to decide: ANDing keeps 0 */
    if (pCol->aNull) {
      const uint8_t *aSrc = pCol->aNull + (iRow >> 3);
      for (iW = 0; iW < nW; iW++) {
        int64_t nLeft = nByte - iW * 8;
        aNullW[iW] = filterLoadWord(aSrc + iW * 8, nLeft < 8 ? (int)nLeft : 8);
      }
      pNullW = aNullW;
    }
    if (nHave * FILTER_SPARSE_SHARE < nW) {
      /* few words still have rows (a selective filter came first): decide
      ** those 64 rows at a time */
      for (iW = 0; rc == COLVEC_OK && iW < nW; iW++) {
        int64_t nPart = n - iW * 64 < 64 ? n - iW * 64 : 64;
        aOut[iW] = 0;
        if (aHave[iW] == 0) continue;
        rc = filterChunk(&ctx, eOp, &pred, aVal, nVal, bSorted, iRow + iW * 64,
                         nPart, pNullW ? &aNullW[iW] : NULL, &aOut[iW]);
      }
    } else {
      rc = filterChunk(&ctx, eOp, &pred, aVal, nVal, bSorted, iRow, n, pNullW,
                       aOut);
    }
    for (iW = 0; iW < nW; iW++) {
      int64_t nLeft = nByte - iW * 8;
      filterAndWord(aDst + iW * 8, nLeft < 8 ? (int)nLeft : 8, aOut[iW]);
    }
  }
  return rc;
}

/* First set bit at or after i; see header. */
int64_t colvecBitmapNext(const uint8_t *aBits, int64_t i, int64_t nRow) {
  while (i < nRow) {
    unsigned b = (unsigned)(aBits[i >> 3] >> (i & 7));
    if (b != 0) {
      i += COLVEC_CTZ32(b);
      return i < nRow ? i : nRow;
    }
    i = (i | 7) + 1;
  }
  return nRow;
}

/* Counts set bits among the first nRow bits; see header. */
int64_t colvecBitmapCount(const uint8_t *aBits, int64_t nRow) {
  int64_t nFull = nRow >> 3, i, nSet = 0;
  for (i = 0; i + 8 <= nFull; i += 8) {
    uint64_t w = filterLoadWord(aBits + i, 8);
    if (w) nSet += COLVEC_POPCOUNT64(w); /* sparse bitmaps: mostly zero */
  }
  for (; i < nFull; i++) {
    int v = aBits[i];
    while (v)
      nSet += v & 1, v >>= 1;
  }
  if (nRow & 7) {
    int v = aBits[nFull] & ((1 << (nRow & 7)) - 1);
    while (v)
      nSet += v & 1, v >>= 1;
  }
  return nSet;
}
