/*
** colvec_scan.c — evaluating a plan's filters over one segment, one column
** at a time, into a bitmap of passing rows (the filter phase: no other
** column is read). The values come from xFilter's argv; they are given the
** column's affinity first, as SQLite does when it compares.
*/
#include "colvecInt.h"

#include <string.h>

/* Most values of an IN list evaluated in one call. */
#define SCAN_MAX_IN 4096

/*
** LIKE/GLOB through SQLite's own matchers. A BLOB never matches when SQLite
** was built with LIKE_DOESNT_MATCH_BLOBS (as Debian's is). Strings are
** copied to NUL-terminated buffers (SQLite stops at an embedded NUL too).
*/
static int scanMatch(void *pCtx, int mFlags, const uint8_t *zPattern,
                     int nPattern, const uint8_t *zText, int nText) {
  char *zP, *zT;
  int bMatch = 1; /* on OOM keep the row: SQLite re-checks */
  (void)pCtx;
  if ((mFlags & COLVEC_MATCH_BLOB) &&
      sqlite3_compileoption_used("LIKE_DOESNT_MATCH_BLOBS")) {
    return 0;
  }
  zP = sqlite3_mprintf("%.*s", nPattern, zPattern);
  zT = sqlite3_mprintf("%.*s", nText, zText);
  if (zP && zT) {
    bMatch = (mFlags & COLVEC_MATCH_GLOB) ? sqlite3_strglob(zP, zT) == 0
                                          : sqlite3_strlike(zP, zT, 0) == 0;
  }
  sqlite3_free(zP);
  sqlite3_free(zT);
  return bMatch;
}

/*
** Converts pVal into *pOut with the affinity of the column it is compared
** with: numeric for integer/real columns and the rowid, text for text
** columns, none for blob columns. A converted copy is kept in *ppDup
** (sqlite3_value_free it) so pOut's bytes stay valid.
*/
static int scanScalar(sqlite3_value *pVal, int eAffinity, ColvecScalar *pOut,
                      sqlite3_value **ppDup) {
  sqlite3_value *pDup = sqlite3_value_dup(pVal);
  int eType;
  *ppDup = pDup;
  memset(pOut, 0, sizeof(*pOut));
  if (pDup == NULL) return SQLITE_NOMEM;
  eType = sqlite3_value_type(pDup);
  if (eAffinity == COLVEC_ATTR_INTEGER || eAffinity == COLVEC_ATTR_REAL) {
    if (eType == SQLITE_TEXT) eType = sqlite3_value_numeric_type(pDup);
  } else if (eAffinity == COLVEC_ATTR_TEXT) {
    if (eType == SQLITE_INTEGER || eType == SQLITE_FLOAT) {
      sqlite3_value_text(pDup); /* converts the value to text */
      eType = SQLITE_TEXT;
    }
  }
  switch (eType) {
  case SQLITE_INTEGER:
    pOut->eType = COLVEC_TYPE_INTEGER;
    pOut->i = sqlite3_value_int64(pDup);
    break;
  case SQLITE_FLOAT:
    pOut->eType = COLVEC_TYPE_FLOAT;
    pOut->r = sqlite3_value_double(pDup);
    break;
  case SQLITE_TEXT:
    pOut->eType = COLVEC_TYPE_TEXT;
    pOut->z = sqlite3_value_text(pDup);
    pOut->n = sqlite3_value_bytes(pDup);
    break;
  case SQLITE_BLOB:
    pOut->eType = COLVEC_TYPE_BLOB;
    pOut->z = sqlite3_value_blob(pDup);
    pOut->n = sqlite3_value_bytes(pDup);
    break;
  default:
    pOut->eType = COLVEC_TYPE_NULL;
    break;
  }
  return SQLITE_OK;
}

/*
** Evaluates one filter argument (operator eOp on column iCol, value pArg)
** over segment h, ANDing into aBits.
*/
static int scanOneFilter(ColvecSegTable *pSegs, ColvecSegHandle *h, int iCol,
                         ColvecPlanOp eOp, sqlite3_value *pArg, uint8_t *aBits,
                         char **pzErr) {
  const ColvecConfig *pC = pSegs->pConfig;
  ColvecColumnView rowidView;
  const ColvecColumnView *pView;
  ColvecScalar aOne[1];            /* the value of a non-IN filter */
  sqlite3_value *apOne[1];         /* its converted copy */
  ColvecScalar *aVal = aOne;       /* values (an IN list's on the heap) */
  sqlite3_value **apDup = apOne;   /* their converted copies */
  int nVal = 0, i, rc = SQLITE_OK, eAffinity;

  if (iCol == COLVEC_PLAN_ROWID) {
    memset(&rowidView, 0, sizeof(rowidView));
    rowidView.eStore = COLVEC_STORE_INT64;
    rowidView.nRow = h->nRow;
    rowidView.aInt = h->aRowid;
    pView = &rowidView;
    eAffinity = COLVEC_ATTR_INTEGER;
  } else {
    if (iCol < 0 || iCol >= pC->nCol) return SQLITE_ERROR;
    if (pC->aCol[iCol].bVector) return SQLITE_OK; /* SQLite checks these */
    rc = colvecSegView(pSegs, h, iCol, &pView, pzErr);
    if (rc != SQLITE_OK) return rc;
    eAffinity = pC->aCol[iCol].eAttr;
  }
  if (eOp == COLVEC_OP_IN) {
    /* up to SCAN_MAX_IN values: on the heap, not on SQLite's stack */
    sqlite3_value *pVal = NULL;
    aVal = sqlite3_malloc64(sizeof(ColvecScalar) * SCAN_MAX_IN);
    apDup = sqlite3_malloc64(sizeof(sqlite3_value *) * SCAN_MAX_IN);
    if (aVal == NULL || apDup == NULL) {
      sqlite3_free(aVal);
      sqlite3_free(apDup);
      return SQLITE_NOMEM;
    }
    for (rc = sqlite3_vtab_in_first(pArg, &pVal); rc == SQLITE_OK && pVal;
         rc = sqlite3_vtab_in_next(pArg, &pVal)) {
      if (nVal == SCAN_MAX_IN) {
        /* too long to evaluate here: keep every row, SQLite re-checks */
        rc = SQLITE_DONE;
        nVal = -nVal;
        break;
      }
      rc = scanScalar(pVal, eAffinity, &aVal[nVal], &apDup[nVal]);
      nVal++;
      if (rc != SQLITE_OK) break; /* keep the error, not the next value */
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  } else if (eOp == COLVEC_OP_ISNULL || eOp == COLVEC_OP_NOTNULL) {
    aVal[0].eType = COLVEC_TYPE_NULL;
  } else {
    int eType = sqlite3_value_type(pArg);
    if (eAffinity == COLVEC_ATTR_TEXT &&
        (eType == SQLITE_INTEGER || eType == SQLITE_FLOAT)) {
      /* SQLite may compare in the column's numeric form ('5.0' = 5 when
      ** the number carries an affinity of its own): keep every row and let
      ** SQLite decide. */
      return SQLITE_OK;
    }
    rc = scanScalar(pArg, eAffinity, &aVal[0], &apDup[0]);
    nVal = 1;
  }
  if (rc == SQLITE_OK && nVal >= 0) {
    if (colvecFilterEval(pView, eOp, aVal, nVal > 0 ? nVal : 1, scanMatch,
                         NULL, aBits) != COLVEC_OK) {
      rc = COLVEC_CORRUPT_VTAB;
      *pzErr = sqlite3_mprintf("colvec: segment %lld of table %s is damaged",
                               (long long)h->iSegid, pC->zName);
    }
  }
  if (nVal < 0) nVal = -nVal;
  for (i = 0; i < nVal; i++) sqlite3_value_free(apDup[i]);
  if (aVal != aOne) {
    sqlite3_free(aVal);
    sqlite3_free(apDup);
  }
  return rc;
}

/* Computes the bitmap of live, passing rows; see colvecInt.h. */
int colvecScanBitmap(ColvecSegTable *pSegs, ColvecSegHandle *h,
                     const ColvecPlan *pPlan, sqlite3_value **argv,
                     uint8_t *aBits, char **pzErr) {
  int64_t nByte = (h->nRow + 7) / 8, i;
  int rc = SQLITE_OK;
  memset(aBits, 0xff, (size_t)nByte);
  if (h->nRow % 8) aBits[nByte - 1] = (uint8_t)((1u << (h->nRow % 8)) - 1);
  for (i = 0; i < h->nTomb; i++) {
    /* tombstones are few: find each one's row */
    int64_t iRow = colvecSegSearch(h->aRowid, h->nRow, h->aTomb[i]);
    if (iRow >= 0) aBits[iRow >> 3] &= (uint8_t) ~(1u << (iRow & 7));
  }
  for (i = 0; rc == SQLITE_OK && pPlan && i < pPlan->nArg; i++) {
    const ColvecPlanArg *pArg = &pPlan->aArg[i];
    if (pArg->eOp < COLVEC_OP_EQ) continue;
    rc = scanOneFilter(pSegs, h, pArg->iCol, pArg->eOp, argv[i], aBits, pzErr);
  }
  return rc;
}
