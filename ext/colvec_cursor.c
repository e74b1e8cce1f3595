/*
** colvec_cursor.c — reading a colvec table: xOpen, xFilter, xNext, xEof,
** xColumn, xRowid, xClose.
**
** A scan walks the live segments (rows passing the filters, computed
** column by column into one bitmap per segment during xFilter, while argv
** is valid), then the delta (colvecStorageSelect, with the same
** filters). A KNN search collects the k best rows of every segment and of
** the delta into a bounded heap and walks it; a hit's other columns are
** looked up by rowid only when the statement reads them. Pending rows of
** the current transaction are flushed first, so a statement sees its own
** transaction's writes.
*/
#include "colvecInt.h"

#include <math.h>
#include <string.h>

typedef struct ColvecCursor ColvecCursor;

/* A cursor: either a scan or the sorted result of a KNN search. */
struct ColvecCursor {
  sqlite3_vtab_cursor base; /* base class: must be first */
  int bKnn;                 /* 1 when iterating KNN hits */
  int mUsed;                /* user columns the statement reads (idxNum) */
  int bEof;                 /* no current row */
  int nSeg;                 /* scan: segments held (referenced) */
  ColvecSegHandle **apSeg;  /* scan: the segments */
  uint8_t **aaBits;         /* scan: passing rows of each segment */
  int iSeg;                 /* scan: current segment, nSeg = in the delta */
  int64_t iRow;             /* scan: current row of the segment */
  sqlite3_stmt *pScan;      /* scan: the delta select */
  ColvecTopk topk;          /* KNN: the hits, best first */
  int iHit;                 /* KNN: index of the current hit */
  sqlite3_stmt *pRow;       /* KNN: delta point lookup */
  int bRowReady;            /* KNN: the current hit has been located */
  int iHitSeg;              /* KNN: segment of the hit, -1 for the delta */
  int64_t iHitRow;          /* KNN: row of the hit in its segment */
  ColvecKnnQuery q;         /* KNN: parameters in force */
  void *pQueryVec;          /* KNN: query vector (binary form) */
  ColvecCursor *pNextOpen;  /* next cursor of the table's pCursorList */
};

/* xOpen: a new, empty cursor. */
int colvecCursorOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  ColvecCursor *pCur;
  int rc = colvecVtabDamaged(pTab);
  if (rc != SQLITE_OK) return rc;
  pCur = sqlite3_malloc(sizeof(ColvecCursor));
  if (pCur == NULL) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->bEof = 1;
  pCur->pNextOpen = pTab->pCursorList;
  pTab->pCursorList = pCur;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

/* Releases what the cursor holds from its last xFilter. */
static void cursorReset(ColvecCursor *pCur) {
  ColvecVtab *pTab = (ColvecVtab *)pCur->base.pVtab;
  int i;
  for (i = 0; i < pCur->nSeg; i++) {
    if (pCur->aaBits) sqlite3_free(pCur->aaBits[i]);
    colvecSegmentHandleUnref(pTab->pConfig, pCur->apSeg[i]);
  }
  sqlite3_free(pCur->aaBits);
  sqlite3_free(pCur->apSeg);
  colvecStorageSelectDone(pTab->pStorage, pCur->pScan);
  colvecStorageSelectDone(pTab->pStorage, pCur->pRow);
  colvecTopkFree(&pCur->topk);
  sqlite3_free(pCur->pQueryVec);
  pCur->aaBits = NULL;
  pCur->apSeg = NULL;
  pCur->nSeg = 0;
  pCur->pScan = NULL;
  pCur->pRow = NULL;
  pCur->pQueryVec = NULL;
  pCur->bRowReady = 0;
  pCur->iHit = 0;
  pCur->bEof = 1;
}

/* xClose. */
int colvecCursorClose(sqlite3_vtab_cursor *pCursor) {
  ColvecCursor *pCur = (ColvecCursor *)pCursor;
  ColvecVtab *pTab = (ColvecVtab *)pCursor->pVtab;
  ColvecCursor **pp;
  for (pp = &pTab->pCursorList; *pp; pp = &(*pp)->pNextOpen) {
    if (*pp == pCur) {
      *pp = pCur->pNextOpen;
      break;
    }
  }
  cursorReset(pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/*
** Reads an integer KNN parameter (k, LIMIT, OFFSET, ef) from pVal into *pi.
** Integral reals are accepted. Returns SQLITE_OK, or SQLITE_ERROR with the
** table's error set when the value is not an integer in [iMin, iMax].
*/
static int cursorIntParam(ColvecVtab *pTab, sqlite3_value *pVal,
                          const char *zName, sqlite3_int64 iMin,
                          sqlite3_int64 iMax, sqlite3_int64 *pi) {
  int bBlob = sqlite3_value_type(pVal) == SQLITE_BLOB; /* before any cast */
  int eType = sqlite3_value_numeric_type(pVal);
  double r = sqlite3_value_double(pVal);
  sqlite3_int64 i = sqlite3_value_int64(pVal);
  if (eType == SQLITE_FLOAT && r == floor(r) && fabs(r) < 9e18) {
    i = (sqlite3_int64)r;
    eType = SQLITE_INTEGER;
  }
  if (eType != SQLITE_INTEGER || i < iMin || i > iMax) {
    /* what was given: a blob by its size, text as it reads, else the
    ** number or NULL */
    int nByte = sqlite3_value_bytes(pVal);
    const char *zText = (const char *)sqlite3_value_text(pVal);
    char *zGot = bBlob ? sqlite3_mprintf("a blob of %d byte%s", nByte,
                                         nByte == 1 ? "" : "s")
                 : eType == SQLITE_NULL ? sqlite3_mprintf("NULL")
                 : zText && zText[0]    ? sqlite3_mprintf("%s", zText)
                                        : sqlite3_mprintf("an empty string");
    colvecVtabSetError(
        pTab, sqlite3_mprintf("colvec: %s must be an integer between %lld "
                              "and %lld, got %s",
                              zName, iMin, iMax, zGot ? zGot : "?"));
    sqlite3_free(zGot);
    return SQLITE_ERROR;
  }
  *pi = i;
  return SQLITE_OK;
}

/*
** Default oversampling of a column, by the codes its search runs on: the
** quantizer type's (measured: int8 ranks as well at 1x as at 3x, 2x is
** kept; 4-bit and 1-bit codes need about 3x; float32 traversal needs none).
*/
static double cursorOversampling(const ColvecColumn *pCol) {
  return colvecQuantOversampling(pCol->eQuant);
}

/*
** Narrows q->range by the bound `distance OP pVal` (eOp one of
** COLVEC_OP_DIST_*). A number, or text that reads as one ('0.5'), is the
** bound; NULL, which no comparison passes, empties the result (*pbEmpty).
** Sets q->bRange. Returns SQLITE_OK, or SQLITE_ERROR with the table's
** error set for any other value.
*/
static int cursorDistanceBound(ColvecVtab *pTab, ColvecKnnQuery *q,
                               ColvecPlanOp eOp, sqlite3_value *pVal,
                               int *pbEmpty) {
  int bUpper = eOp == COLVEC_OP_DIST_LT || eOp == COLVEC_OP_DIST_LE;
  int bIncl = eOp == COLVEC_OP_DIST_LE || eOp == COLVEC_OP_DIST_GE;
  int eType = sqlite3_value_type(pVal);
  double r;
  if (eType == SQLITE_NULL) {
    *pbEmpty = 1;
    return SQLITE_OK;
  }
  eType = sqlite3_value_numeric_type(pVal);
  r = sqlite3_value_double(pVal);
  if ((eType != SQLITE_INTEGER && eType != SQLITE_FLOAT) || r != r) {
    const char *z = (const char *)sqlite3_value_text(pVal);
    colvecVtabSetError(
        pTab, sqlite3_mprintf("colvec: a bound on distance must be a number, "
                              "got '%s'",
                              z ? z : "?"));
    return SQLITE_ERROR;
  }
  q->bRange = 1;
  if (bUpper) {
    if (r < q->range.rHi || (r == q->range.rHi && !bIncl)) {
      q->range.rHi = r;
      q->range.bHiIncl = bIncl;
    }
  } else if (r > q->range.rLo || (r == q->range.rLo && !bIncl)) {
    q->range.rLo = r;
    q->range.bLoIncl = bIncl;
  }
  return SQLITE_OK;
}

/*
** Reads the KNN arguments of plan pPlan from argv into pCur->q (query
** vector, k, oversampling, rescore, ef, distance bounds) with their
** defaults, validating each. Sets *pbEmpty when k or LIMIT is 0 or a
** bound admits no row. Returns SQLITE_OK or an error with
** the table's message set.
*/
static int cursorKnnArgs(ColvecCursor *pCur, const ColvecPlan *pPlan,
                         sqlite3_value **argv, int *pbEmpty) {
  ColvecVtab *pTab = (ColvecVtab *)pCur->base.pVtab;
  ColvecKnnQuery *q = &pCur->q;
  sqlite3_int64 iLimit = -1, iOffset = 0, iVal;
  int i, rc = SQLITE_OK;
  memset(q, 0, sizeof(*q));
  q->bRescore = 1;
  q->range.rLo = -INFINITY;
  q->range.rHi = INFINITY;
  q->range.bLoIncl = 1;
  q->range.bHiIncl = 1;
  for (i = 0; rc == SQLITE_OK && i < pPlan->nArg; i++) {
    const ColvecPlanArg *pArg = &pPlan->aArg[i];
    switch (pArg->eOp) {
    case COLVEC_OP_MATCH: {
      const ColvecColumn *pCol;
      char *zErr = NULL;
      if (pArg->iCol < 0 || pArg->iCol >= pTab->pConfig->nCol ||
          !pTab->pConfig->aCol[pArg->iCol].bVector) {
        return SQLITE_ERROR;
      }
      pCol = &pTab->pConfig->aCol[pArg->iCol];
      q->iCol = pArg->iCol;
      if (q->rOversample == 0.0) q->rOversample = cursorOversampling(pCol);
      pCur->pQueryVec = sqlite3_malloc(pCol->nByte);
      if (pCur->pQueryVec == NULL) return SQLITE_NOMEM;
      rc = colvecValueToVector(argv[i], pCol, pCur->pQueryVec, &zErr);
      if (rc != SQLITE_OK) colvecVtabSetError(pTab, zErr);
      q->pVec = pCur->pQueryVec;
      break;
    }
    case COLVEC_OP_K:
      rc = cursorIntParam(pTab, argv[i], "k", 0, COLVEC_MAX_K, &iVal);
      q->k = (int)iVal;
      if (iVal == 0) *pbEmpty = 1;
      break;
    case COLVEC_OP_DIST_LT:
    case COLVEC_OP_DIST_LE:
    case COLVEC_OP_DIST_GT:
    case COLVEC_OP_DIST_GE:
      rc = cursorDistanceBound(pTab, q, pArg->eOp, argv[i], pbEmpty);
      break;
    case COLVEC_OP_LIMIT:
      rc = cursorIntParam(pTab, argv[i], "LIMIT", 0, COLVEC_MAX_K, &iLimit);
      break;
    case COLVEC_OP_OFFSET:
      rc = cursorIntParam(pTab, argv[i], "OFFSET", 0, COLVEC_MAX_K, &iOffset);
      break;
    case COLVEC_OP_EF:
      rc = cursorIntParam(pTab, argv[i], "ef", 1, COLVEC_MAX_K * 10, &iVal);
      q->ef = (int)iVal;
      break;
    case COLVEC_OP_RESCORE:
      rc = cursorIntParam(pTab, argv[i], "rescore", 0, 1, &iVal);
      q->bRescore = (int)iVal;
      break;
    case COLVEC_OP_OVERSAMPLING: {
      int eType = sqlite3_value_numeric_type(argv[i]);
      double r = sqlite3_value_double(argv[i]);
      if ((eType != SQLITE_INTEGER && eType != SQLITE_FLOAT) || !(r >= 1.0) ||
          r > 100.0) {
        colvecVtabSetError(
            pTab, sqlite3_mprintf("colvec: oversampling must be a number "
                                  "between 1.0 and 100.0"));
        rc = SQLITE_ERROR;
      }
      q->rOversample = r;
      break;
    }
    default:
      break; /* filters: applied by the storage layer */
    }
  }
  if (rc == SQLITE_OK && iLimit >= 0) {
    if (iLimit + iOffset > COLVEC_MAX_K) {
      colvecVtabSetError(
          pTab, sqlite3_mprintf("colvec: LIMIT plus OFFSET of a KNN query "
                                "must not exceed %d",
                                COLVEC_MAX_K));
      return SQLITE_ERROR;
    }
    q->k = (int)(iLimit + iOffset);
    if (iLimit == 0) *pbEmpty = 1;
  }
  return rc;
}

/*
** Returns the rowid of an `rowid = value` filter of the plan in *piRowid
** (1), or 0 when the plan has none usable.
*/
static int cursorRowidEq(const ColvecPlan *pPlan, sqlite3_value **argv,
                         sqlite3_int64 *piRowid) {
  int i;
  for (i = 0; i < pPlan->nArg; i++) {
    if (pPlan->aArg[i].eOp == COLVEC_OP_EQ &&
        pPlan->aArg[i].iCol == COLVEC_PLAN_ROWID &&
        sqlite3_value_numeric_type(argv[i]) == SQLITE_INTEGER) {
      *piRowid = sqlite3_value_int64(argv[i]);
      return 1;
    }
  }
  return 0;
}

/*
** Takes references on the live segments and computes, for each, the
** bitmap of rows passing the plan's filters (a rowid equality selects one
** row directly). Returns SQLITE_OK or an error with *pzErr set.
*/
static int cursorScanSegments(ColvecCursor *pCur, const ColvecPlan *pPlan,
                              sqlite3_value **argv, char **pzErr) {
  ColvecVtab *pTab = (ColvecVtab *)pCur->base.pVtab;
  ColvecSegTable *pSegs = pTab->pSegs;
  sqlite3_int64 iRowidEq = 0;
  int bRowidEq = cursorRowidEq(pPlan, argv, &iRowidEq);
  int iLocSeg = -1, i, rc = SQLITE_OK;
  ColvecScanMemo memo = {0, 0}; /* like()/glob() looked up once */
  int64_t iLocRow = 0;
  if (pSegs->nSeg == 0) return SQLITE_OK;
  if (bRowidEq && !colvecSegmentLocate(pSegs, iRowidEq, &iLocSeg, &iLocRow)) {
    return SQLITE_OK;
  }
  pCur->apSeg =
      sqlite3_malloc64(sizeof(ColvecSegHandle *) * (sqlite3_uint64)pSegs->nSeg);
  pCur->aaBits =
      sqlite3_malloc64(sizeof(uint8_t *) * (sqlite3_uint64)pSegs->nSeg);
  if (pCur->apSeg == NULL || pCur->aaBits == NULL) return SQLITE_NOMEM;
  for (i = 0; rc == SQLITE_OK && i < pSegs->nSeg; i++) {
    ColvecSegHandle *h = pSegs->apSeg[i];
    uint8_t *aBits;
    if (bRowidEq && i != iLocSeg) continue;
    aBits = sqlite3_malloc64((sqlite3_uint64)(h->nRow + 7) / 8 + 1);
    if (aBits == NULL) return SQLITE_NOMEM;
    colvecSegmentHandleRef(h);
    pCur->apSeg[pCur->nSeg] = h;
    pCur->aaBits[pCur->nSeg] = aBits;
    pCur->nSeg++;
    if (bRowidEq) {
      memset(aBits, 0, (size_t)(h->nRow + 7) / 8);
      aBits[iLocRow >> 3] = (uint8_t)(1u << (iLocRow & 7));
    } else {
      rc = colvecScanBitmap(pSegs, h, pPlan, argv, NULL, &memo, aBits, pzErr);
    }
  }
  return rc;
}

/*
** Moves a scan to its next row at or after (iSeg, iRow): the next passing
** row of a segment, else the delta's next row.
*/
static int cursorScanSettle(ColvecCursor *pCur) {
  while (pCur->iSeg < pCur->nSeg) {
    ColvecSegHandle *h = pCur->apSeg[pCur->iSeg];
    int64_t i = colvecBitmapNext(pCur->aaBits[pCur->iSeg], pCur->iRow, h->nRow);
    if (i < h->nRow) {
      pCur->iRow = i;
      return SQLITE_OK;
    }
    pCur->iSeg++;
    pCur->iRow = 0;
  }
  if (pCur->pScan == NULL) {
    pCur->bEof = 1;
    return SQLITE_OK;
  } else {
    int rc = sqlite3_step(pCur->pScan);
    pCur->bEof = rc != SQLITE_ROW;
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) return SQLITE_OK;
    colvecVtabSetError(
        (ColvecVtab *)pCur->base.pVtab,
        sqlite3_mprintf("colvec: %s",
                        sqlite3_errmsg(((ColvecVtab *)pCur->base.pVtab)->db)));
    return rc;
  }
}

/* Returns the number of filter arguments of the plan. */
static int cursorFilterCount(const ColvecPlan *pPlan) {
  int i, n = 0;
  for (i = 0; i < pPlan->nArg; i++) {
    if (pPlan->aArg[i].eOp >= COLVEC_OP_EQ) n++;
  }
  return n;
}

/*
** Starts the trace of a KNN on vector column iCol of pTab (the last_*
** columns of colvec_segments()): forgets the previous one and makes room
** for nSource sources. Returns SQLITE_OK or SQLITE_NOMEM.
*/
static int cursorTraceStart(ColvecVtab *pTab, int iCol, int nSource) {
  pTab->nTrace = 0;
  pTab->iTraceCol = iCol;
  if (nSource > pTab->nTraceAlloc) {
    ColvecKnnTrace *aNew = sqlite3_realloc64(
        pTab->aTrace, sizeof(ColvecKnnTrace) * (sqlite3_uint64)nSource);
    if (aNew == NULL) {
      pTab->iTraceCol = -1;
      return SQLITE_NOMEM;
    }
    pTab->aTrace = aNew;
    pTab->nTraceAlloc = nSource;
  }
  return SQLITE_OK;
}

/*
** Runs a KNN search into pCur->topk: each segment (its hits tagged with
** the segment's position in pSegs->apSeg and their row), then the delta
** (tag -1), then sorts the hits best first.
*/
static int cursorKnn(ColvecCursor *pCur, const ColvecPlan *pPlan,
                     sqlite3_value **argv, char **pzErr) {
  ColvecVtab *pTab = (ColvecVtab *)pCur->base.pVtab;
  ColvecSegTable *pSegs = pTab->pSegs;
  ColvecIndexScratch *s = &pTab->scratch;
  int nFilter = cursorFilterCount(pPlan), bFilter = nFilter > 0;
  ColvecScanMemo memo = {0, 0}; /* like()/glob() looked up once */
  ColvecKnnTrace *pT;
  int i, rc = SQLITE_OK;
  if (colvecTopkInit(&pCur->topk, pCur->q.k) != COLVEC_OK) return SQLITE_NOMEM;
  if (pCur->q.bRange) colvecTopkSetRange(&pCur->topk, &pCur->q.range);
  rc = cursorTraceStart(pTab, pCur->q.iCol, pSegs->nSeg + 1);
  for (i = 0; rc == SQLITE_OK && i < pSegs->nSeg; i++) {
    ColvecSegHandle *h = pSegs->apSeg[i];
    uint8_t *aBits = NULL;
    ColvecScanPick pick; /* the filter a value order answers best */
    int64_t nPass = h->nRow;
    double tStart = colvecOsMicros();
    memset(&s->stat, 0, sizeof(s->stat));
    pick.iArg = -1;
    if (bFilter) rc = colvecScanPick(pSegs, h, pPlan, argv, &pick, pzErr);
    if (rc == SQLITE_OK && pick.iArg >= 0 && pick.nPass == 0) {
      nPass = 0; /* a filter no row of the segment passes */
    } else if (rc == SQLITE_OK && (h->nTomb > 0 || bFilter)) {
      aBits = sqlite3_malloc64((sqlite3_uint64)(h->nRow + 7) / 8 + 1);
      if (aBits == NULL) return SQLITE_NOMEM;
      rc = colvecScanBitmap(pSegs, h, pPlan, argv, &pick, &memo, aBits, pzErr);
      if (nFilter == 1 && h->nTomb == 0 && pick.iArg >= 0 &&
          (pick.nPass == h->nRow ||
           pick.nPass * COLVEC_SCAN_ORDER_SHARE <= h->nRow)) {
        nPass = pick.nPass; /* the bitmap is the order's rows: counted */
      } else {
        nPass = colvecBitmapCount(aBits, h->nRow);
      }
      if (nPass == h->nRow) {
        /* every row passes: searched as without a filter */
        sqlite3_free(aBits);
        aBits = NULL;
      }
    }
    if (rc == SQLITE_OK) {
      pCur->topk.iSrc = i;
      rc = colvecIndexSearch(pSegs, h, s, &pCur->q, aBits, nPass, &pCur->topk,
                             pzErr);
    }
    sqlite3_free(aBits);
    pT = &pTab->aTrace[pTab->nTrace++];
    pT->iSegid = h->iSegid;
    pT->stat = s->stat;
    pT->nPass = nPass;
    pT->rMicros = colvecOsMicros() - tStart;
  }
  if (rc == SQLITE_OK) {
    double tStart = colvecOsMicros();
    pT = &pTab->aTrace[pTab->nTrace++];
    memset(pT, 0, sizeof(*pT));
    pCur->topk.iSrc = -1;
    rc = colvecKnnExact(pTab->pStorage, &pCur->q, pPlan, argv, &pCur->topk,
                        &pT->nPass, pzErr);
    pT->iSegid = -1;
    pT->stat.zWay = pT->nPass > 0 ? "scan vectors" : NULL;
    pT->stat.nVisit = pT->nPass;
    pT->rMicros = colvecOsMicros() - tStart;
  }
  if (rc == SQLITE_OK) colvecTopkSort(&pCur->topk);
  return rc;
}

/*
** A plan's `id = ?` on a text primary key (EQ@i) becomes `rowid = ?`
** (EQ@r): the id is looked up in T_ids and apArg, a copy of argv, gets the
** rowid in its place, a value the caller frees (*ppRowid). *pbEmpty is set
** when no row has the id. Returns SQLITE_OK or an error.
*/
static int cursorTextId(ColvecVtab *pTab, ColvecPlan *pPlan,
                        sqlite3_value **apArg, sqlite3_value **ppRowid,
                        int *pbEmpty) {
  int i, rc = SQLITE_OK;
  for (i = 0; rc == SQLITE_OK && i < pPlan->nArg; i++) {
    sqlite3_int64 iRowid;
    if (pPlan->aArg[i].iCol != COLVEC_PLAN_TEXTID) continue;
    if (*ppRowid || sqlite3_value_type(apArg[i]) == SQLITE_NULL ||
        sqlite3_value_type(apArg[i]) == SQLITE_BLOB) {
      /* two ids (a row has one), NULL or a blob: no row. A number finds
      ** the id that is its text, as SQLite's TEXT affinity compares */
      *pbEmpty = 1;
      continue;
    }
    rc = colvecStorageIdFind(pTab->pStorage, apArg[i], &iRowid, ppRowid);
    if (rc == SQLITE_ROW) {
      apArg[i] = *ppRowid;
      pPlan->aArg[i].iCol = COLVEC_PLAN_ROWID;
      rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
      *pbEmpty = 1;
      rc = SQLITE_OK;
    }
  }
  return rc;
}

/* xFilter: starts a scan or runs a KNN search; see the file comment. */
int colvecCursorFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv) {
  ColvecCursor *pCur = (ColvecCursor *)pCursor;
  ColvecVtab *pTab = (ColvecVtab *)pCursor->pVtab;
  ColvecPlan plan;
  char *zErr = NULL;
  sqlite3_value **apArg = NULL; /* argv with text ids made rowids */
  sqlite3_value *pIdRowid = NULL;
  int bNoRow = 0;
  int rc;

  cursorReset(pCur);
  if (colvecPlanDecode(idxStr, &plan) != COLVEC_OK || plan.nArg != argc) {
    colvecVtabSetError(pTab,
                       sqlite3_mprintf("colvec: malformed query plan '%s'",
                                       idxStr ? idxStr : ""));
    return SQLITE_ERROR;
  }
  pCur->mUsed = idxNum;
  pCur->bKnn = plan.bKnn;
  rc = colvecWriteFlush(pTab, &zErr);
  if (rc == SQLITE_OK && pTab->pConfig->bPkText && argc > 0) {
    apArg = colvecMallocZero(&rc, (int64_t)sizeof(sqlite3_value *) * argc);
    if (apArg) {
      memcpy(apArg, argv, sizeof(sqlite3_value *) * (size_t)argc);
      argv = apArg;
      rc = cursorTextId(pTab, &plan, apArg, &pIdRowid, &bNoRow);
    }
  }
  if (rc == SQLITE_OK && bNoRow) {
    /* no row has the id: nothing to search (KNN parameters unchecked) */
    colvecFree(apArg);
    return SQLITE_OK;
  }
  if (rc == SQLITE_OK) rc = colvecSegmentTableRefresh(pTab->pSegs, &zErr);
  if (rc == SQLITE_OK && !plan.bKnn) {
    rc = cursorScanSegments(pCur, &plan, argv, &zErr);
    if (rc == SQLITE_OK) {
      rc = colvecStorageSelect(pTab->pStorage, idxNum, &plan, argv, 0,
                               &pCur->pScan, &zErr);
    }
    if (rc == SQLITE_OK) {
      pCur->bEof = 0;
      pCur->iSeg = 0;
      pCur->iRow = 0;
      rc = cursorScanSettle(pCur);
    }
  } else if (rc == SQLITE_OK) {
    int bEmpty = 0;
    rc = cursorKnnArgs(pCur, &plan, argv, &bEmpty);
    if (rc == SQLITE_OK && !bEmpty) {
      rc = cursorKnn(pCur, &plan, argv, &zErr);
      pCur->bEof = rc != SQLITE_OK || pCur->topk.nHit == 0;
    }
  }
  sqlite3_value_free(pIdRowid);
  colvecFree(apArg);
  rc = colvecStorageDamaged(pTab->pStorage, rc, &zErr);
  if (zErr) colvecVtabSetError(pTab, zErr);
  return rc;
}

/* xNext. */
int colvecCursorNext(sqlite3_vtab_cursor *pCursor) {
  ColvecCursor *pCur = (ColvecCursor *)pCursor;
  if (pCur->bKnn) {
    pCur->iHit++;
    pCur->bRowReady = 0;
    pCur->bEof = pCur->iHit >= pCur->topk.nHit;
    return SQLITE_OK;
  }
  if (pCur->iSeg < pCur->nSeg) {
    pCur->iRow++;
  }
  return cursorScanSettle(pCur);
}

/* xEof. */
int colvecCursorEof(sqlite3_vtab_cursor *pCursor) {
  return ((ColvecCursor *)pCursor)->bEof;
}

/*
** Locates the current KNN hit: in a segment (iHitSeg, iHitRow: where the
** search found it, carried by the hit), or in the delta (pRow positioned
** on it by rowid). Returns SQLITE_OK or an error.
*/
static int cursorKnnLocate(ColvecCursor *pCur) {
  ColvecVtab *pTab = (ColvecVtab *)pCur->base.pVtab;
  const ColvecHit *pHit = &pCur->topk.aHit[pCur->iHit];
  sqlite3_int64 iRowid = pHit->iRowid;
  int rc = SQLITE_OK;
  if (pCur->bRowReady) return SQLITE_OK;
  if (pHit->iSrc >= 0) {
    pCur->iHitSeg = pHit->iSrc;
    pCur->iHitRow = pHit->iRow;
    pCur->bRowReady = 1;
    return SQLITE_OK;
  }
  pCur->iHitSeg = -1;
  if (pCur->pRow == NULL) {
    char *zErr = NULL;
    rc = colvecStorageSelect(pTab->pStorage, pCur->mUsed, NULL, NULL, 1,
                             &pCur->pRow, &zErr);
    if (rc != SQLITE_OK) {
      colvecVtabSetError(pTab, zErr);
      return rc;
    }
  } else {
    sqlite3_reset(pCur->pRow);
  }
  sqlite3_bind_int64(pCur->pRow, 1, iRowid);
  rc = sqlite3_step(pCur->pRow);
  if (rc != SQLITE_ROW) {
    colvecVtabSetError(
        pTab, sqlite3_mprintf("colvec: row %lld of %s vanished during a "
                              "query",
                              (long long)iRowid, pTab->pConfig->zName));
    return rc == SQLITE_DONE ? COLVEC_CORRUPT_VTAB : rc;
  }
  pCur->bRowReady = 1;
  return SQLITE_OK;
}

/* xColumn. */
int colvecCursorColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *pCtx,
                       int iCol) {
  ColvecCursor *pCur = (ColvecCursor *)pCursor;
  ColvecVtab *pTab = (ColvecVtab *)pCursor->pVtab;
  const ColvecConfig *pC = pTab->pConfig;
  iCol = colvecConfigColumn(pC, iCol);
  if (iCol == COLVEC_COL_TEXTID) { /* "id text primary key": from T_ids */
    sqlite_int64 iRowid;
    char *zErr = NULL;
    int rc;
    if (sqlite3_vtab_nochange(pCtx)) return SQLITE_OK; /* UPDATE keeps it */
    colvecCursorRowid(pCursor, &iRowid);
    rc = colvecStorageIdResult(pTab->pStorage, iRowid, pCtx, &zErr);
    if (zErr) colvecVtabSetError(pTab, zErr);
    return rc;
  }
  if (iCol < 0) { /* "id integer primary key": the rowid */
    sqlite_int64 iRowid;
    colvecCursorRowid(pCursor, &iRowid);
    sqlite3_result_int64(pCtx, iRowid);
    return SQLITE_OK;
  }
  if (iCol < pC->nCol) {
    char *zErr = NULL;
    int rc = SQLITE_OK;
    if (pC->aCol[iCol].bVector && sqlite3_vtab_nochange(pCtx)) {
      return SQLITE_OK; /* UPDATE that leaves this vector as it is */
    }
    if (pCur->bKnn) {
      rc = cursorKnnLocate(pCur);
      if (rc != SQLITE_OK) return rc;
      if (pCur->iHitSeg >= 0) {
        rc = colvecLayoutResult(pC, pTab->pSegs->apSeg[pCur->iHitSeg], iCol,
                                pCur->iHitRow, pCtx, &zErr);
      } else {
        sqlite3_result_value(pCtx, sqlite3_column_value(pCur->pRow, 1 + iCol));
      }
    } else if (pCur->iSeg < pCur->nSeg) {
      rc = colvecLayoutResult(pC, pCur->apSeg[pCur->iSeg], iCol, pCur->iRow,
                              pCtx, &zErr);
    } else {
      sqlite3_result_value(pCtx, sqlite3_column_value(pCur->pScan, 1 + iCol));
    }
    if (zErr) colvecVtabSetError(pTab, zErr);
    if (rc == SQLITE_OK && pC->aCol[iCol].bVector) {
      /* the vector's type travels with it, as in sqlite-vec (vec_type(),
      ** vec_to_json(), colvec_to_json() read it) */
      sqlite3_result_subtype(
          pCtx, (unsigned)colvecVecapiSubtype(pC->aCol[iCol].eElem));
    }
    return rc;
  }
  if (!pCur->bKnn) return SQLITE_OK; /* hidden columns are NULL in scans */
  switch (iCol - pC->nCol) {
  case COLVEC_HIDDEN_DISTANCE:
    sqlite3_result_double(pCtx, pCur->topk.aHit[pCur->iHit].rDist);
    break;
  case COLVEC_HIDDEN_K:
    sqlite3_result_int(pCtx, pCur->q.k);
    break;
  case COLVEC_HIDDEN_OVERSAMPLING:
    sqlite3_result_double(pCtx, pCur->q.rOversample);
    break;
  case COLVEC_HIDDEN_RESCORE:
    sqlite3_result_int(pCtx, pCur->q.bRescore);
    break;
  case COLVEC_HIDDEN_EF:
    if (pCur->q.ef > 0) sqlite3_result_int(pCtx, pCur->q.ef);
    break;
  default:
    break;
  }
  return SQLITE_OK;
}

/* xRowid. */
int colvecCursorRowid(sqlite3_vtab_cursor *pCursor, sqlite_int64 *piRowid) {
  ColvecCursor *pCur = (ColvecCursor *)pCursor;
  if (pCur->bKnn) {
    *piRowid = pCur->topk.aHit[pCur->iHit].iRowid;
  } else if (pCur->iSeg < pCur->nSeg) {
    *piRowid = pCur->apSeg[pCur->iSeg]->aRowid[pCur->iRow];
  } else {
    *piRowid = sqlite3_column_int64(pCur->pScan, 0);
  }
  return SQLITE_OK;
}

/*
** The overloaded match(query, vector): 1 when an open KNN cursor of the
** table (the user data) stands on a row and searches for this query (the
** same vector once converted for its column), which is the case for every
** row SQLite gets from a KNN whose MATCH term it did not omit; an error
** anywhere else, such as a MATCH inside an OR.
*/
static void cursorMatchFunc(sqlite3_context *pCtx, int argc,
                            sqlite3_value **argv) {
  ColvecVtab *pTab = (ColvecVtab *)sqlite3_user_data(pCtx);
  ColvecCursor *pCur;
  (void)argc;
  for (pCur = pTab->pCursorList; pCur; pCur = pCur->pNextOpen) {
    const ColvecColumn *pCol;
    void *pVec;
    char *zErr = NULL;
    int bSame;
    if (!pCur->bKnn || pCur->bEof || pCur->pQueryVec == NULL) continue;
    pCol = &pTab->pConfig->aCol[pCur->q.iCol];
    pVec = sqlite3_malloc(pCol->nByte);
    if (pVec == NULL) {
      sqlite3_result_error_nomem(pCtx);
      return;
    }
    bSame = colvecValueToVector(argv[0], pCol, pVec, &zErr) == SQLITE_OK &&
            memcmp(pVec, pCur->pQueryVec, (size_t)pCol->nByte) == 0;
    sqlite3_free(zErr);
    sqlite3_free(pVec);
    if (bSame) {
      sqlite3_result_int(pCtx, 1);
      return;
    }
  }
  sqlite3_result_error(pCtx,
                       "colvec: MATCH is usable only as a KNN constraint: "
                       "'<vector column> MATCH ?' joined to the other WHERE "
                       "terms with AND, with k = N or ORDER BY distance "
                       "LIMIT N",
                       -1);
}

/* xFindFunction; see colvecInt.h. */
int colvecCursorFindFunction(sqlite3_vtab *pVtab, int nArg, const char *zName,
                             void (**pxFunc)(sqlite3_context *, int,
                                             sqlite3_value **),
                             void **ppArg) {
  if (nArg != 2 || sqlite3_stricmp(zName, "match") != 0) return 0;
  *pxFunc = cursorMatchFunc;
  *ppArg = pVtab;
  return 1;
}
