/*
** colvec_order.c — a segment column's rows in value order, searched for
** the run of rows an equality or a range passes (SQLite-free); see
** colvec_order.h.
**
** The order is built by a stable bottom-up merge sort of the row numbers
** (equal values keep their row order), comparing the column's values
** directly for int64 and double columns and through colvecFilterCompare
** for text and blobs, whose offsets are all checked once before sorting.
*/
#include "colvec_order.h"

#include <string.h>

/* Compares the values of rows a and b of a checked view: -1, 0, +1. */
typedef int (*OrderCmp)(const ColvecColumnView *pCol, uint32_t a, uint32_t b);

/* OrderCmp of an int64 column. */
static int orderCmpInt(const ColvecColumnView *pCol, uint32_t a, uint32_t b) {
  int64_t x = pCol->aInt[a], y = pCol->aInt[b];
  return (x > y) - (x < y);
}

/* OrderCmp of a double column (never NaN; -0.0 equals 0.0). */
static int orderCmpReal(const ColvecColumnView *pCol, uint32_t a, uint32_t b) {
  double x = pCol->aReal[a], y = pCol->aReal[b];
  return (x > y) - (x < y);
}

/* OrderCmp of a text or blob column: memcmp, then the shorter first. */
static int orderCmpVar(const ColvecColumnView *pCol, uint32_t a, uint32_t b) {
  int64_t nA = pCol->aOff[a + 1] - pCol->aOff[a];
  int64_t nB = pCol->aOff[b + 1] - pCol->aOff[b];
  int64_t nMin = nA < nB ? nA : nB;
  int c = nMin > 0 ? memcmp(pCol->aByte + pCol->aOff[a],
                            pCol->aByte + pCol->aOff[b], (size_t)nMin)
                   : 0;
  if (c != 0) return c < 0 ? -1 : +1;
  return (nA > nB) - (nA < nB);
}

/*
** Sorts the n rows at a by xCmp, stably, with the scratch array aTmp of n
** entries; the result may end in either array: returns the one holding it.
*/
static uint32_t *orderSort(const ColvecColumnView *pCol, OrderCmp xCmp,
                           uint32_t *a, uint32_t *aTmp, int64_t n) {
  int64_t nRun;
  for (nRun = 1; nRun < n; nRun *= 2) {
    int64_t iStart;
    for (iStart = 0; iStart < n; iStart += 2 * nRun) {
      int64_t iMid = iStart + nRun < n ? iStart + nRun : n;
      int64_t iEnd = iStart + 2 * nRun < n ? iStart + 2 * nRun : n;
      int64_t i = iStart, j = iMid, o = iStart;
      while (i < iMid && j < iEnd) {
        aTmp[o++] = xCmp(pCol, a[j], a[i]) < 0 ? a[j++] : a[i++];
      }
      while (i < iMid)
        aTmp[o++] = a[i++];
      while (j < iEnd)
        aTmp[o++] = a[j++];
    }
    {
      uint32_t *aSwap = a;
      a = aTmp;
      aTmp = aSwap;
    }
  }
  return a;
}

/*
** Gives order p (sorted, its rows' values compared by xCmp) the directory
** of its runs of equal values when they average COLVEC_ORDER_RUN_MIN
** entries or more: each run's first entry, and its value for int64 and
** double columns. Returns COLVEC_OK, or COLVEC_NOMEM (what it allocated
** is in *p, for colvecOrderFree).
*/
static int orderRuns(const ColvecColumnView *pCol, OrderCmp xCmp,
                     ColvecOrder *p) {
  int64_t i, nRun = 0;
  int rc = COLVEC_OK;
  for (i = 0; i < p->nValue; i++) {
    if (i == 0 || xCmp(pCol, p->aRow[i - 1], p->aRow[i]) != 0) nRun++;
  }
  if (nRun == 0 || nRun * COLVEC_ORDER_RUN_MIN > p->nValue) return COLVEC_OK;
  p->aRunStart = colvecMallocZero(&rc, (nRun + 1) * 4);
  if (pCol->eStore == COLVEC_STORE_INT64) {
    p->aRunInt = colvecMallocZero(&rc, nRun * 8);
  } else if (pCol->eStore == COLVEC_STORE_DOUBLE) {
    p->aRunReal = colvecMallocZero(&rc, nRun * 8);
  }
  if (rc != COLVEC_OK) return rc;
  for (i = 0, nRun = 0; i < p->nValue; i++) {
    uint32_t iRow = p->aRow[i];
    if (i > 0 && xCmp(pCol, p->aRow[i - 1], iRow) == 0) continue;
    p->aRunStart[nRun] = (uint32_t)i;
    if (p->aRunInt) p->aRunInt[nRun] = pCol->aInt[iRow];
    if (p->aRunReal) p->aRunReal[nRun] = pCol->aReal[iRow];
    nRun++;
  }
  p->aRunStart[nRun] = (uint32_t)p->nValue;
  p->nRun = nRun;
  return COLVEC_OK;
}

/* Builds the order of a column; see header. */
int colvecOrderBuild(const ColvecColumnView *pCol, ColvecOrder *p) {
  int64_t nRow, i, n = 0;
  uint32_t *a, *aTmp, *aSorted;
  OrderCmp xCmp;
  int rc = COLVEC_OK;
  memset(p, 0, sizeof(*p));
  if (pCol == NULL || colvecFilterViewCheck(pCol) != COLVEC_OK) {
    return COLVEC_ERROR;
  }
  nRow = pCol->nRow;
  if (nRow > (int64_t)0xFFFFFFFF) return COLVEC_ERROR;
  switch (pCol->eStore) {
  case COLVEC_STORE_INT64:
    xCmp = orderCmpInt;
    break;
  case COLVEC_STORE_DOUBLE:
    xCmp = orderCmpReal;
    break;
  default:
    xCmp = orderCmpVar;
    break;
  }
  a = colvecMallocZero(&rc, (nRow + 1) * 4);
  aTmp = colvecMallocZero(&rc, (nRow + 1) * 4);
  for (i = 0; rc == COLVEC_OK && i < nRow; i++) {
    ColvecScalar v; /* row i's value: checks its offsets */
    if (colvecFilterRowValue(pCol, i, &v) != COLVEC_OK) {
      rc = COLVEC_ERROR;
    } else if (v.eType != COLVEC_TYPE_NULL) {
      a[n++] = (uint32_t)i;
    }
  }
  if (rc != COLVEC_OK) {
    colvecFree(a);
    colvecFree(aTmp);
    return rc;
  }
  aSorted = orderSort(pCol, xCmp, a, aTmp, n);
  colvecFree(aSorted == a ? aTmp : a);
  p->nRow = nRow;
  p->nValue = n;
  p->aRow = aSorted;
  rc = orderRuns(pCol, xCmp, p);
  if (rc != COLVEC_OK) colvecOrderFree(p);
  return rc;
}

/* Frees an order; see header. */
void colvecOrderFree(ColvecOrder *p) {
  colvecFree(p->aRow);
  colvecFree(p->aRunStart);
  colvecFree(p->aRunInt);
  colvecFree(p->aRunReal);
  memset(p, 0, sizeof(*p));
}

/* Whether colvecOrderRange answers eOp; see header. */
int colvecOrderHandles(ColvecPlanOp eOp) {
  switch (eOp) {
  case COLVEC_OP_EQ:
  case COLVEC_OP_IS:
  case COLVEC_OP_LT:
  case COLVEC_OP_LE:
  case COLVEC_OP_GT:
  case COLVEC_OP_GE:
    return 1;
  default:
    return 0;
  }
}

/*
** Reads into *pV the value of entry i of what orderBound searches: run i
** of p's directory, or entry i of p->aRow when p has none. Returns
** COLVEC_OK, or COLVEC_ERROR when a row's value cannot be read.
*/
static int orderEntryValue(const ColvecColumnView *pCol, const ColvecOrder *p,
                           int64_t i, ColvecScalar *pV) {
  if (p->aRunInt) {
    pV->eType = COLVEC_TYPE_INTEGER;
    pV->i = p->aRunInt[i];
    return COLVEC_OK;
  }
  if (p->aRunReal) {
    pV->eType = COLVEC_TYPE_FLOAT;
    pV->r = p->aRunReal[i];
    return COLVEC_OK;
  }
  return colvecFilterRowValue(pCol, p->aRow[p->aRunStart ? p->aRunStart[i] : i],
                              pV);
}

/*
** Returns the first entry of p->aRow whose value compares with *pVal at
** or above (bAfterEqual=0: the first >= it) or strictly above
** (bAfterEqual=1: the first > it); p->nValue when there is none. A binary
** search of the runs when p has their directory, else of the rows. Sets
** *pRc to COLVEC_ERROR when a row's value cannot be read.
*/
static int64_t orderBound(const ColvecColumnView *pCol, const ColvecOrder *p,
                          const ColvecScalar *pVal, int bAfterEqual, int *pRc) {
  int64_t iLo = 0, iHi = p->aRunStart ? p->nRun : p->nValue;
  while (iLo < iHi) {
    int64_t iMid = iLo + (iHi - iLo) / 2;
    ColvecScalar v; /* the value of the middle entry */
    int c;
    if (orderEntryValue(pCol, p, iMid, &v) != COLVEC_OK) {
      *pRc = COLVEC_ERROR;
      return 0;
    }
    c = colvecFilterCompare(&v, pVal);
    if (c < 0 || (bAfterEqual && c == 0)) {
      iLo = iMid + 1;
    } else {
      iHi = iMid;
    }
  }
  return p->aRunStart ? p->aRunStart[iLo] : iLo;
}

/* Finds the run of passing rows; see header. */
int colvecOrderRange(const ColvecColumnView *pCol, const ColvecOrder *p,
                     ColvecPlanOp eOp, const ColvecScalar *pVal, int64_t *piLo,
                     int64_t *piHi) {
  int rc = COLVEC_OK;
  int bNull = pVal->eType == COLVEC_TYPE_NULL ||
              (pVal->eType == COLVEC_TYPE_FLOAT && pVal->r != pVal->r);
  *piLo = *piHi = 0;
  if (!colvecOrderHandles(eOp) || p->nRow != pCol->nRow) return COLVEC_ERROR;
  if (bNull) return COLVEC_OK; /* NULL and NaN compare with nothing */
  switch (eOp) {
  case COLVEC_OP_LT:
    *piHi = orderBound(pCol, p, pVal, 0, &rc);
    break;
  case COLVEC_OP_LE:
    *piHi = orderBound(pCol, p, pVal, 1, &rc);
    break;
  case COLVEC_OP_GT:
    *piLo = orderBound(pCol, p, pVal, 1, &rc);
    *piHi = p->nValue;
    break;
  case COLVEC_OP_GE:
    *piLo = orderBound(pCol, p, pVal, 0, &rc);
    *piHi = p->nValue;
    break;
  default: /* EQ, IS */
    *piLo = orderBound(pCol, p, pVal, 0, &rc);
    *piHi = orderBound(pCol, p, pVal, 1, &rc);
    break;
  }
  if (rc != COLVEC_OK) *piLo = *piHi = 0;
  return rc;
}
