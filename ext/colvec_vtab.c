/*
** colvec_vtab.c — the methods of the "colvec" virtual table.
**
** NOTES ON TRANSACTIONS
**
** Every row of a colvec table currently lives in its T_delta shadow table
** (see colvec_storage.c), written by xUpdate with ordinary statements on the
** same connection. SQLite's journal or WAL therefore gives the table
** atomic commits, ROLLBACK, SAVEPOINT/ROLLBACK TO and crash recovery
** exactly as for any other table, and statement rollback on a constraint
** error (SQLITE_VTAB_CONSTRAINT_SUPPORT is declared). The table keeps no
** state in memory that could drift from the database, so it needs no
** xBegin/xSync/xCommit/xRollback/xSavepoint methods: they stay NULL until a
** layer with in-memory pending data (bulk-load buffers) needs them.
*/
#include "colvecInt.h"

#include <math.h>
#include <string.h>

typedef struct ColvecVtab ColvecVtab;
typedef struct ColvecCursor ColvecCursor;

/* One colvec table as seen by one connection. */
struct ColvecVtab {
  sqlite3_vtab base;       /* base class: must be first */
  sqlite3 *db;             /* connection */
  ColvecConfig *pConfig;   /* parsed definition */
  ColvecStorage *pStorage; /* shadow tables */
  unsigned char *aRowBuf;  /* room for one row's vectors (xUpdate) */
  ColvecCell *aCell;       /* one cell per user column (xUpdate) */
};

/* A cursor: either a scan of the delta or the sorted result of a KNN. */
struct ColvecCursor {
  sqlite3_vtab_cursor base; /* base class: must be first */
  int bKnn;                 /* 1 when iterating KNN hits */
  int mUsed;                /* user columns the statement reads (idxNum) */
  int bEof;                 /* no current row */
  sqlite3_stmt *pScan;      /* scan: the delta select, on the current row */
  ColvecTopk topk;          /* KNN: the hits, best first */
  int iHit;                 /* KNN: index of the current hit */
  sqlite3_stmt *pRow;       /* KNN: point lookup of a hit's columns */
  int bRowReady;            /* KNN: pRow holds the current hit's row */
  ColvecKnnQuery q;         /* KNN: parameters in force */
  void *pQueryVec;          /* KNN: query vector (binary form) */
};

/* Sets the error message of vtab pTab (taking ownership of zErr). */
static void vtabSetError(ColvecVtab *pTab, char *zErr) {
  sqlite3_free(pTab->base.zErrMsg);
  pTab->base.zErrMsg = zErr;
}

/* Frees a table object and everything it owns. */
static void vtabFree(ColvecVtab *pTab) {
  if (pTab) {
    colvecStorageClose(pTab->pStorage);
    colvecConfigFree(pTab->pConfig);
    sqlite3_free(pTab->aRowBuf);
    sqlite3_free(pTab->aCell);
    sqlite3_free(pTab);
  }
}

/*
** Common body of xCreate (bCreate=1) and xConnect: parses the arguments,
** declares the schema, creates or checks the shadow tables. Returns SQLITE_OK
** with *ppVtab set, or an error with *pzErr set.
*/
static int vtabInit(sqlite3 *db, int argc, const char *const *argv,
                    sqlite3_vtab **ppVtab, char **pzErr, int bCreate) {
  ColvecVtab *pTab = sqlite3_malloc(sizeof(ColvecVtab));
  int rc = SQLITE_OK;
  char *zDecl = NULL;
  *ppVtab = NULL;
  if (pTab == NULL) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->db = db;
  rc = colvecConfigParse(argc, argv, &pTab->pConfig, pzErr);
  if (rc == SQLITE_OK) {
    int64_t nBuf = 0;
    int i;
    for (i = 0; i < pTab->pConfig->nCol; i++) {
      nBuf += (pTab->pConfig->aCol[i].nByte + 7) & ~7;
    }
    pTab->aRowBuf = sqlite3_malloc64((sqlite3_uint64)nBuf);
    pTab->aCell =
        sqlite3_malloc64(sizeof(ColvecCell) * (sqlite3_uint64)pTab->pConfig->nCol);
    zDecl = colvecConfigDeclareSql(pTab->pConfig);
    if (pTab->aRowBuf == NULL || pTab->aCell == NULL || zDecl == NULL) {
      rc = SQLITE_NOMEM;
    }
  }
  if (rc == SQLITE_OK) {
    rc = sqlite3_declare_vtab(db, zDecl);
    if (rc != SQLITE_OK) {
      *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(db));
    }
  }
  if (rc == SQLITE_OK) {
    sqlite3_vtab_config(db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
    rc = colvecStorageOpen(db, pTab->pConfig, bCreate, &pTab->pStorage, pzErr);
  }
  sqlite3_free(zDecl);
  if (rc != SQLITE_OK) {
    vtabFree(pTab);
    return rc;
  }
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

/* xCreate: CREATE VIRTUAL TABLE ... USING colvec(...). */
static int vtabCreateMethod(sqlite3 *db, void *pAux, int argc,
                            const char *const *argv, sqlite3_vtab **ppVtab,
                            char **pzErr) {
  (void)pAux;
  return vtabInit(db, argc, argv, ppVtab, pzErr, 1);
}

/* xConnect: opening an existing table. */
static int vtabConnectMethod(sqlite3 *db, void *pAux, int argc,
                             const char *const *argv, sqlite3_vtab **ppVtab,
                             char **pzErr) {
  (void)pAux;
  return vtabInit(db, argc, argv, ppVtab, pzErr, 0);
}

/* xDisconnect: frees the table object. */
static int vtabDisconnectMethod(sqlite3_vtab *pVtab) {
  vtabFree((ColvecVtab *)pVtab);
  return SQLITE_OK;
}

/* xDestroy: DROP TABLE drops the shadow tables, then frees the object. */
static int vtabDestroyMethod(sqlite3_vtab *pVtab) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  int rc = colvecStorageDestroy(pTab->pStorage);
  if (rc == SQLITE_OK) vtabFree(pTab);
  return rc;
}

/*
** Maps an SQLite constraint operator on a rowid or attribute column to a
** plan operator. Returns -1 for operators colvec does not push down.
*/
static int vtabFilterOp(unsigned char op) {
  switch (op) {
  case SQLITE_INDEX_CONSTRAINT_EQ:
    return COLVEC_OP_EQ;
  case SQLITE_INDEX_CONSTRAINT_NE:
    return COLVEC_OP_NE;
  case SQLITE_INDEX_CONSTRAINT_LT:
    return COLVEC_OP_LT;
  case SQLITE_INDEX_CONSTRAINT_LE:
    return COLVEC_OP_LE;
  case SQLITE_INDEX_CONSTRAINT_GT:
    return COLVEC_OP_GT;
  case SQLITE_INDEX_CONSTRAINT_GE:
    return COLVEC_OP_GE;
  case SQLITE_INDEX_CONSTRAINT_IS:
    return COLVEC_OP_IS;
  case SQLITE_INDEX_CONSTRAINT_ISNOT:
    return COLVEC_OP_ISNOT;
  case SQLITE_INDEX_CONSTRAINT_ISNULL:
    return COLVEC_OP_ISNULL;
  case SQLITE_INDEX_CONSTRAINT_ISNOTNULL:
    return COLVEC_OP_NOTNULL;
  case SQLITE_INDEX_CONSTRAINT_LIKE:
    return COLVEC_OP_LIKE;
  case SQLITE_INDEX_CONSTRAINT_GLOB:
    return COLVEC_OP_GLOB;
  }
  return -1;
}

/* Names of the hidden KNN parameter columns, indexed by COLVEC_HIDDEN_*. */
static const char *const vtabHiddenName[] = {
    "distance", "k", "oversampling", "rescore", "ef", "command"};

/*
** Computes the idxNum used-columns mask (colvec_plan.h) from colUsed.
*/
static int vtabUsedMask(const ColvecConfig *pC, sqlite3_uint64 colUsed) {
  int mUsed = 0;
  int i;
  for (i = 0; i < pC->nCol; i++) {
    int bUsed = i < 63 ? (int)((colUsed >> i) & 1) : (int)(colUsed >> 63);
    if (bUsed) {
      mUsed |= i < COLVEC_PLAN_USED_HIGH ? (1 << i)
                                         : (1 << COLVEC_PLAN_USED_HIGH);
    }
  }
  return mUsed;
}

/*
** Appends argument (eOp, iCol) for constraint iCons to the plan and gives
** the constraint the next argvIndex.
*/
static void vtabPlanAdd(ColvecPlan *pPlan, sqlite3_index_info *pInfo,
                        int iCons, ColvecPlanOp eOp, int iCol, int bOmit) {
  pPlan->aArg[pPlan->nArg].eOp = eOp;
  pPlan->aArg[pPlan->nArg].iCol = iCol;
  pPlan->nArg++;
  pInfo->aConstraintUsage[iCons].argvIndex = pPlan->nArg;
  pInfo->aConstraintUsage[iCons].omit = (unsigned char)bOmit;
}

/*
** xBestIndex. Plans are described in colvec_plan.h (idxStr grammar,
** idxNum = used columns). Two kinds:
**
**   knn   a usable MATCH on a vector column, with k from `k = N` or from
**         LIMIT (+ OFFSET) when the ORDER BY is absent or `distance ASC`
**         and every other constraint is pushed down (SQLite offers LIMIT
**         only then). ORDER BY distance is consumed. Cost 1e3.
**   scan  everything else; `rowid = ?` is a unique lookup (cost 1).
**         Otherwise cost 1e6, divided by 4 for each pushed filter.
**
** Filters pushed in both kinds: =, !=, <, <=, >, >=, IS, IS NOT, IS NULL,
** IS NOT NULL, LIKE, GLOB and IN (all at once) on the rowid and on user
** columns; SQLite re-checks them (omit = 0). MATCH and the KNN parameters
** are omitted. An unusable MATCH or KNN parameter (a join order that does
** not provide it yet) makes the plan SQLITE_CONSTRAINT; MATCH without any
** k or LIMIT, a second MATCH, or a KNN parameter without MATCH is an error.
*/
static int vtabBestIndexMethod(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  const ColvecConfig *pC = pTab->pConfig;
  int aiParam[COLVEC_HIDDEN_COUNT]; /* constraint index per KNN parameter */
  int iMatch = -1, iLimit = -1, iOffset = -1;
  int bMatchUnusable = 0, bParamUnusable = 0, bAllPushable = 1;
  int nFilter = 0, bRowidEq = 0;
  int aiFilter[COLVEC_PLAN_MAX_ARG];
  int aeFilter[COLVEC_PLAN_MAX_ARG];
  ColvecPlan plan;
  int i, rc;
  char *zIdx = NULL;

  memset(&plan, 0, sizeof(plan));
  for (i = 0; i < COLVEC_HIDDEN_COUNT; i++) aiParam[i] = -1;
  for (i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *p = &pInfo->aConstraint[i];
    int iCol = p->iColumn;
    int eOp;
    if (p->op == SQLITE_INDEX_CONSTRAINT_LIMIT) {
      iLimit = i;
      continue;
    }
    if (p->op == SQLITE_INDEX_CONSTRAINT_OFFSET) {
      iOffset = i;
      continue;
    }
    if (p->op == SQLITE_INDEX_CONSTRAINT_MATCH) {
      if (iCol < 0 || iCol >= pC->nCol || !pC->aCol[iCol].bVector) {
        vtabSetError(pTab, sqlite3_mprintf(
                               "colvec: MATCH applies only to vector columns"));
        return SQLITE_ERROR;
      }
      if (!p->usable) {
        bMatchUnusable = 1;
      } else if (iMatch >= 0) {
        vtabSetError(pTab,
                     sqlite3_mprintf("colvec: only one MATCH per query"));
        return SQLITE_ERROR;
      } else {
        iMatch = i;
      }
      continue;
    }
    if (iCol >= pC->nCol) {
      int iHidden = iCol - pC->nCol;
      if (iHidden >= COLVEC_HIDDEN_K && iHidden <= COLVEC_HIDDEN_EF) {
        if (p->op != SQLITE_INDEX_CONSTRAINT_EQ) {
          vtabSetError(pTab,
                       sqlite3_mprintf("colvec: %s supports only '=' (e.g. "
                                       "%s = 10)",
                                       vtabHiddenName[iHidden],
                                       vtabHiddenName[iHidden]));
          return SQLITE_ERROR;
        }
        if (!p->usable) {
          bParamUnusable = 1;
        } else {
          aiParam[iHidden] = i;
        }
      } else {
        bAllPushable = 0; /* distance and command: left to SQLite */
      }
      continue;
    }
    eOp = vtabFilterOp(p->op);
    if (!p->usable || eOp < 0 || nFilter >= COLVEC_PLAN_MAX_ARG - 8) {
      bAllPushable = 0;
      continue;
    }
    if (eOp == COLVEC_OP_EQ && sqlite3_vtab_in(pInfo, i, -1)) {
      eOp = COLVEC_OP_IN;
    }
    if (eOp == COLVEC_OP_EQ && iCol < 0) bRowidEq = 1;
    aiFilter[nFilter] = i;
    aeFilter[nFilter] = eOp;
    nFilter++;
  }

  if (iMatch < 0) {
    if (bMatchUnusable) return SQLITE_CONSTRAINT;
    for (i = COLVEC_HIDDEN_K; i <= COLVEC_HIDDEN_EF; i++) {
      if (aiParam[i] >= 0) {
        vtabSetError(pTab, sqlite3_mprintf(
                               "colvec: %s applies only to a KNN query "
                               "(<vector column> MATCH ?)",
                               vtabHiddenName[i]));
        return SQLITE_ERROR;
      }
    }
    if (bParamUnusable) return SQLITE_CONSTRAINT;
    plan.bKnn = 0;
    pInfo->estimatedCost = 1e6;
    pInfo->estimatedRows = 1000000;
  } else {
    const ColvecColumn *pCol = &pC->aCol[pInfo->aConstraint[iMatch].iColumn];
    int bOrderDistance =
        pInfo->nOrderBy == 1 &&
        pInfo->aOrderBy[0].iColumn == pC->nCol + COLVEC_HIDDEN_DISTANCE &&
        !pInfo->aOrderBy[0].desc;
    if (bParamUnusable) return SQLITE_CONSTRAINT;
    plan.bKnn = 1;
    vtabPlanAdd(&plan, pInfo, iMatch, COLVEC_OP_MATCH,
                pInfo->aConstraint[iMatch].iColumn, 1);
    if (aiParam[COLVEC_HIDDEN_K] >= 0) {
      vtabPlanAdd(&plan, pInfo, aiParam[COLVEC_HIDDEN_K], COLVEC_OP_K,
                  COLVEC_PLAN_NOCOL, 1);
    } else if (iLimit >= 0 && bAllPushable &&
               (pInfo->nOrderBy == 0 || bOrderDistance)) {
      vtabPlanAdd(&plan, pInfo, iLimit, COLVEC_OP_LIMIT, COLVEC_PLAN_NOCOL, 0);
      if (iOffset >= 0) {
        vtabPlanAdd(&plan, pInfo, iOffset, COLVEC_OP_OFFSET, COLVEC_PLAN_NOCOL,
                    0);
      }
    } else {
      vtabSetError(pTab, sqlite3_mprintf(
                             "colvec: a KNN query on %s needs 'k = N' or "
                             "'ORDER BY distance LIMIT N'%s",
                             pCol->zName,
                             sqlite3_libversion_number() < 3041000
                                 ? " (SQLite before 3.41 does not pass LIMIT "
                                   "to virtual tables: use k = N)"
                                 : ""));
      return SQLITE_ERROR;
    }
    if (aiParam[COLVEC_HIDDEN_OVERSAMPLING] >= 0) {
      vtabPlanAdd(&plan, pInfo, aiParam[COLVEC_HIDDEN_OVERSAMPLING],
                  COLVEC_OP_OVERSAMPLING, COLVEC_PLAN_NOCOL, 1);
    }
    if (aiParam[COLVEC_HIDDEN_RESCORE] >= 0) {
      vtabPlanAdd(&plan, pInfo, aiParam[COLVEC_HIDDEN_RESCORE],
                  COLVEC_OP_RESCORE, COLVEC_PLAN_NOCOL, 1);
    }
    if (aiParam[COLVEC_HIDDEN_EF] >= 0) {
      vtabPlanAdd(&plan, pInfo, aiParam[COLVEC_HIDDEN_EF], COLVEC_OP_EF,
                  COLVEC_PLAN_NOCOL, 1);
    }
    if (bOrderDistance) pInfo->orderByConsumed = 1;
    pInfo->estimatedCost = 1e3;
    pInfo->estimatedRows = 10;
  }

  for (i = 0; i < nFilter; i++) {
    int iCons = aiFilter[i];
    if (aeFilter[i] == COLVEC_OP_IN) sqlite3_vtab_in(pInfo, iCons, 1);
    vtabPlanAdd(&plan, pInfo, iCons, (ColvecPlanOp)aeFilter[i],
                pInfo->aConstraint[iCons].iColumn < 0
                    ? COLVEC_PLAN_ROWID
                    : pInfo->aConstraint[iCons].iColumn,
                0);
    if (!plan.bKnn) pInfo->estimatedCost /= 4;
  }
  if (!plan.bKnn && bRowidEq) {
    pInfo->estimatedCost = 1;
    pInfo->estimatedRows = 1;
    pInfo->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
  }

  pInfo->idxNum = vtabUsedMask(pC, pInfo->colUsed);
  rc = colvecPlanEncode(&plan, &zIdx);
  if (rc != COLVEC_OK) return SQLITE_NOMEM;
  pInfo->idxStr = zIdx;
  pInfo->needToFreeIdxStr = 1;
  return SQLITE_OK;
}

/* xOpen: a new, empty cursor. */
static int vtabOpenMethod(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur) {
  ColvecCursor *pCur = sqlite3_malloc(sizeof(ColvecCursor));
  (void)pVtab;
  if (pCur == NULL) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->bEof = 1;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

/* Releases what the cursor holds from its last xFilter. */
static void vtabCursorReset(ColvecCursor *pCur) {
  sqlite3_finalize(pCur->pScan);
  sqlite3_finalize(pCur->pRow);
  colvecTopkFree(&pCur->topk);
  sqlite3_free(pCur->pQueryVec);
  pCur->pScan = NULL;
  pCur->pRow = NULL;
  pCur->pQueryVec = NULL;
  pCur->bRowReady = 0;
  pCur->iHit = 0;
  pCur->bEof = 1;
}

/* xClose. */
static int vtabCloseMethod(sqlite3_vtab_cursor *pCursor) {
  ColvecCursor *pCur = (ColvecCursor *)pCursor;
  vtabCursorReset(pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/*
** Reads an integer KNN parameter (k, LIMIT, OFFSET, ef) from pVal into *pi.
** Integral reals are accepted. Returns SQLITE_OK, or SQLITE_ERROR with the
** table's error set when the value is not an integer in [iMin, iMax].
*/
static int vtabIntParam(ColvecVtab *pTab, sqlite3_value *pVal,
                        const char *zName, sqlite3_int64 iMin,
                        sqlite3_int64 iMax, sqlite3_int64 *pi) {
  int eType = sqlite3_value_numeric_type(pVal);
  double r = sqlite3_value_double(pVal);
  sqlite3_int64 i = sqlite3_value_int64(pVal);
  if (eType == SQLITE_FLOAT && r == floor(r) && fabs(r) < 9e18) {
    i = (sqlite3_int64)r;
    eType = SQLITE_INTEGER;
  }
  if (eType != SQLITE_INTEGER || i < iMin || i > iMax) {
    vtabSetError(pTab, sqlite3_mprintf(
                           "colvec: %s must be an integer between %lld and "
                           "%lld, got %s",
                           zName, iMin, iMax,
                           eType == SQLITE_NULL
                               ? "NULL"
                               : (const char *)sqlite3_value_text(pVal)));
    return SQLITE_ERROR;
  }
  *pi = i;
  return SQLITE_OK;
}

/*
** Reads the KNN arguments of plan pPlan from argv into pCur->q (query
** vector, k, oversampling, rescore, ef) with their defaults, validating
** each. Sets *pbEmpty when LIMIT is 0. Returns SQLITE_OK or an error with
** the table's message set.
*/
static int vtabKnnArgs(ColvecCursor *pCur, const ColvecPlan *pPlan,
                       sqlite3_value **argv, int *pbEmpty) {
  ColvecVtab *pTab = (ColvecVtab *)pCur->base.pVtab;
  ColvecKnnQuery *q = &pCur->q;
  sqlite3_int64 iLimit = -1, iOffset = 0, iVal;
  int i, rc = SQLITE_OK;
  memset(q, 0, sizeof(*q));
  q->rOversample = 3.0;
  q->bRescore = 1;
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
      pCur->pQueryVec = sqlite3_malloc(pCol->nByte);
      if (pCur->pQueryVec == NULL) return SQLITE_NOMEM;
      rc = colvecValueToVector(argv[i], pCol, pCur->pQueryVec, &zErr);
      if (rc != SQLITE_OK) vtabSetError(pTab, zErr);
      q->pVec = pCur->pQueryVec;
      break;
    }
    case COLVEC_OP_K:
      rc = vtabIntParam(pTab, argv[i], "k", 1, COLVEC_MAX_K, &iVal);
      q->k = (int)iVal;
      break;
    case COLVEC_OP_LIMIT:
      rc = vtabIntParam(pTab, argv[i], "LIMIT", 0, COLVEC_MAX_K, &iLimit);
      break;
    case COLVEC_OP_OFFSET:
      rc = vtabIntParam(pTab, argv[i], "OFFSET", 0, COLVEC_MAX_K, &iOffset);
      break;
    case COLVEC_OP_EF:
      rc = vtabIntParam(pTab, argv[i], "ef", 1, COLVEC_MAX_K * 10, &iVal);
      q->ef = (int)iVal;
      break;
    case COLVEC_OP_RESCORE:
      rc = vtabIntParam(pTab, argv[i], "rescore", 0, 1, &iVal);
      q->bRescore = (int)iVal;
      break;
    case COLVEC_OP_OVERSAMPLING: {
      int eType = sqlite3_value_numeric_type(argv[i]);
      double r = sqlite3_value_double(argv[i]);
      if ((eType != SQLITE_INTEGER && eType != SQLITE_FLOAT) || !(r >= 1.0) ||
          r > 100.0) {
        vtabSetError(pTab, sqlite3_mprintf(
                               "colvec: oversampling must be a number "
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
      vtabSetError(pTab, sqlite3_mprintf(
                             "colvec: LIMIT plus OFFSET of a KNN query must "
                             "not exceed %d",
                             COLVEC_MAX_K));
      return SQLITE_ERROR;
    }
    q->k = (int)(iLimit + iOffset);
    *pbEmpty = iLimit == 0;
  }
  return rc;
}

/*
** xFilter: starts a scan or runs a KNN search according to the plan in
** idxStr (colvec_plan.h) and the arguments in argv.
*/
static int vtabFilterMethod(sqlite3_vtab_cursor *pCursor, int idxNum,
                            const char *idxStr, int argc,
                            sqlite3_value **argv) {
  ColvecCursor *pCur = (ColvecCursor *)pCursor;
  ColvecVtab *pTab = (ColvecVtab *)pCursor->pVtab;
  ColvecPlan plan;
  char *zErr = NULL;
  int rc;

  vtabCursorReset(pCur);
  if (colvecPlanDecode(idxStr, &plan) != COLVEC_OK || plan.nArg != argc) {
    vtabSetError(pTab, sqlite3_mprintf("colvec: malformed query plan '%s'",
                                       idxStr ? idxStr : ""));
    return SQLITE_ERROR;
  }
  pCur->mUsed = idxNum;
  pCur->bKnn = plan.bKnn;
  if (!plan.bKnn) {
    rc = colvecStorageSelect(pTab->pStorage, idxNum, &plan, argv, 0,
                             &pCur->pScan, &zErr);
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(pCur->pScan);
      pCur->bEof = rc != SQLITE_ROW;
      rc = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? SQLITE_OK : rc;
      if (rc != SQLITE_OK) {
        zErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(pTab->db));
      }
    }
  } else {
    int bEmpty = 0;
    rc = vtabKnnArgs(pCur, &plan, argv, &bEmpty);
    if (rc == SQLITE_OK && !bEmpty) {
      rc = colvecTopkInit(&pCur->topk, pCur->q.k) == COLVEC_OK ? SQLITE_OK
                                                              : SQLITE_NOMEM;
      if (rc == SQLITE_OK) {
        rc = colvecKnnExact(pTab->pStorage, &pCur->q, &plan, argv, &pCur->topk,
                            &zErr);
      }
      pCur->bEof = rc != SQLITE_OK || pCur->topk.nHit == 0;
    }
  }
  if (zErr) vtabSetError(pTab, zErr);
  return rc;
}

/* xNext. */
static int vtabNextMethod(sqlite3_vtab_cursor *pCursor) {
  ColvecCursor *pCur = (ColvecCursor *)pCursor;
  if (pCur->bKnn) {
    pCur->iHit++;
    pCur->bRowReady = 0;
    pCur->bEof = pCur->iHit >= pCur->topk.nHit;
    return SQLITE_OK;
  } else {
    int rc = sqlite3_step(pCur->pScan);
    pCur->bEof = rc != SQLITE_ROW;
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) return SQLITE_OK;
    vtabSetError((ColvecVtab *)pCursor->pVtab,
                 sqlite3_mprintf("colvec: %s",
                                 sqlite3_errmsg(((ColvecVtab *)pCursor->pVtab)
                                                    ->db)));
    return rc;
  }
}

/* xEof. */
static int vtabEofMethod(sqlite3_vtab_cursor *pCursor) {
  return ((ColvecCursor *)pCursor)->bEof;
}

/*
** Makes pCur->pRow hold the columns of the current KNN hit, looking the
** row up by rowid on first use. Returns SQLITE_OK or an error.
*/
static int vtabKnnLoadRow(ColvecCursor *pCur) {
  ColvecVtab *pTab = (ColvecVtab *)pCur->base.pVtab;
  int rc = SQLITE_OK;
  if (pCur->bRowReady) return SQLITE_OK;
  if (pCur->pRow == NULL) {
    char *zErr = NULL;
    rc = colvecStorageSelect(pTab->pStorage, pCur->mUsed, NULL, NULL, 1,
                             &pCur->pRow, &zErr);
    if (rc != SQLITE_OK) {
      vtabSetError(pTab, zErr);
      return rc;
    }
  } else {
    sqlite3_reset(pCur->pRow);
  }
  sqlite3_bind_int64(pCur->pRow, 1, pCur->topk.aHit[pCur->iHit].iRowid);
  rc = sqlite3_step(pCur->pRow);
  if (rc != SQLITE_ROW) {
    vtabSetError(pTab, sqlite3_mprintf(
                           "colvec: row %lld of %s vanished during a query",
                           pCur->topk.aHit[pCur->iHit].iRowid,
                           pTab->pConfig->zName));
    return rc == SQLITE_DONE ? COLVEC_CORRUPT_VTAB : rc;
  }
  pCur->bRowReady = 1;
  return SQLITE_OK;
}

/* xColumn. */
static int vtabColumnMethod(sqlite3_vtab_cursor *pCursor,
                            sqlite3_context *pCtx, int iCol) {
  ColvecCursor *pCur = (ColvecCursor *)pCursor;
  ColvecVtab *pTab = (ColvecVtab *)pCursor->pVtab;
  const ColvecConfig *pC = pTab->pConfig;
  if (iCol < pC->nCol) {
    sqlite3_stmt *pStmt = pCur->pScan;
    if (pC->aCol[iCol].bVector && sqlite3_vtab_nochange(pCtx)) {
      return SQLITE_OK; /* UPDATE that leaves this vector as it is */
    }
    if (pCur->bKnn) {
      int rc = vtabKnnLoadRow(pCur);
      if (rc != SQLITE_OK) return rc;
      pStmt = pCur->pRow;
    }
    sqlite3_result_value(pCtx, sqlite3_column_value(pStmt, 1 + iCol));
    return SQLITE_OK;
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
static int vtabRowidMethod(sqlite3_vtab_cursor *pCursor, sqlite_int64 *piRowid) {
  ColvecCursor *pCur = (ColvecCursor *)pCursor;
  if (pCur->bKnn) {
    *piRowid = pCur->topk.aHit[pCur->iHit].iRowid;
  } else {
    *piRowid = sqlite3_column_int64(pCur->pScan, 0);
  }
  return SQLITE_OK;
}

/*
** Runs a command written to the column named like the table, fts5-style:
** INSERT INTO t(t) VALUES('integrity-check'). Returns SQLITE_OK or an
** error with the table's message set.
*/
static int vtabCommand(ColvecVtab *pTab, sqlite3_value *pCmd) {
  const char *zCmd = (const char *)sqlite3_value_text(pCmd);
  char *zErr = NULL;
  int rc;
  if (zCmd && sqlite3_stricmp(zCmd, "integrity-check") == 0) {
    rc = colvecStorageCheck(pTab->pStorage, &zErr);
    if (zErr) vtabSetError(pTab, zErr);
    return rc;
  }
  vtabSetError(pTab, sqlite3_mprintf(
                         "colvec: unknown command '%s' (expected "
                         "'integrity-check')",
                         zCmd ? zCmd : ""));
  return SQLITE_ERROR;
}

/*
** Checks and converts the column values of an INSERT or UPDATE
** (argv[2..2+nCol-1]) into pTab->aCell, vectors into pTab->aRowBuf. In an
** UPDATE, columns SQLite marks unchanged give empty cells. Returns
** SQLITE_OK or an error with the table's message set.
*/
static int vtabPrepareCells(ColvecVtab *pTab, sqlite3_value **argv,
                            int bUpdate) {
  const ColvecConfig *pC = pTab->pConfig;
  unsigned char *pBuf = pTab->aRowBuf;
  int i, rc = SQLITE_OK;
  for (i = 0; rc == SQLITE_OK && i < pC->nCol; i++) {
    const ColvecColumn *pCol = &pC->aCol[i];
    sqlite3_value *pVal = argv[2 + i];
    ColvecCell *pCell = &pTab->aCell[i];
    char *zErr = NULL;
    memset(pCell, 0, sizeof(*pCell));
    if (bUpdate && sqlite3_value_nochange(pVal)) continue;
    if (pCol->bVector) {
      rc = colvecValueToVector(pVal, pCol, pBuf, &zErr);
      pCell->pBlob = pBuf;
      pCell->nBlob = pCol->nByte;
      pBuf += (pCol->nByte + 7) & ~7;
    } else {
      rc = colvecValueCheckAttr(pVal, pCol, &zErr);
      pCell->pVal = pVal;
    }
    if (zErr) vtabSetError(pTab, zErr);
  }
  return rc;
}

/*
** Reads a new rowid value for INSERT/UPDATE: NULL (INSERT only: choose
** one), an integer, or anything that converts losslessly to one. Returns
** SQLITE_OK or SQLITE_MISMATCH with the table's message set.
*/
static int vtabCheckRowid(ColvecVtab *pTab, sqlite3_value *pVal) {
  int eType = sqlite3_value_type(pVal);
  if (eType == SQLITE_INTEGER || eType == SQLITE_NULL) return SQLITE_OK;
  vtabSetError(pTab, sqlite3_mprintf("colvec: rowid must be an integer"));
  return SQLITE_MISMATCH;
}

/* xUpdate: DELETE (argc 1), INSERT (argv[0] NULL) or UPDATE. */
static int vtabUpdateMethod(sqlite3_vtab *pVtab, int argc,
                            sqlite3_value **argv, sqlite_int64 *pRowid) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  const ColvecConfig *pC = pTab->pConfig;
  int bInsert, i, rc;
  int eConflictMode = sqlite3_vtab_on_conflict(pTab->db);
  ColvecConflict eConflict = eConflictMode == SQLITE_REPLACE
                                 ? COLVEC_CONFLICT_REPLACE
                             : eConflictMode == SQLITE_IGNORE
                                 ? COLVEC_CONFLICT_IGNORE
                                 : COLVEC_CONFLICT_ABORT;

  if (argc == 1) {
    return colvecStorageDelete(pTab->pStorage, sqlite3_value_int64(argv[0]));
  }
  bInsert = sqlite3_value_type(argv[0]) == SQLITE_NULL;
  if (sqlite3_value_type(argv[2 + pC->nCol + COLVEC_HIDDEN_COMMAND]) !=
      SQLITE_NULL) {
    if (!bInsert) {
      vtabSetError(pTab, sqlite3_mprintf(
                             "colvec: commands are run with INSERT INTO "
                             "%s(%s) VALUES('...')",
                             pC->zName, pC->zName));
      return SQLITE_ERROR;
    }
    return vtabCommand(pTab, argv[2 + pC->nCol + COLVEC_HIDDEN_COMMAND]);
  }
  for (i = COLVEC_HIDDEN_DISTANCE; i <= COLVEC_HIDDEN_EF; i++) {
    sqlite3_value *pVal = argv[2 + pC->nCol + i];
    if (sqlite3_value_type(pVal) != SQLITE_NULL &&
        !sqlite3_value_nochange(pVal)) {
      vtabSetError(pTab, sqlite3_mprintf("colvec: cannot write hidden column "
                                         "%s",
                                         vtabHiddenName[i]));
      return SQLITE_ERROR;
    }
  }
  rc = vtabCheckRowid(pTab, argv[1]);
  if (rc == SQLITE_OK) rc = vtabPrepareCells(pTab, argv, !bInsert);
  if (rc != SQLITE_OK) return rc;
  if (bInsert) {
    sqlite3_value *pNewRowid =
        sqlite3_value_type(argv[1]) == SQLITE_NULL ? NULL : argv[1];
    rc = colvecStorageInsert(pTab->pStorage, pNewRowid, pTab->aCell, eConflict,
                             pRowid);
  } else {
    sqlite3_int64 iNew = sqlite3_value_type(argv[1]) == SQLITE_NULL
                             ? sqlite3_value_int64(argv[0])
                             : sqlite3_value_int64(argv[1]);
    rc = colvecStorageUpdate(pTab->pStorage, sqlite3_value_int64(argv[0]), iNew,
                             pTab->aCell, eConflict);
  }
  if (rc == SQLITE_CONSTRAINT) {
    vtabSetError(pTab,
                 sqlite3_mprintf("UNIQUE constraint failed: %s.rowid",
                                 pC->zName));
  } else if (rc != SQLITE_OK) {
    vtabSetError(pTab, sqlite3_mprintf("colvec: %s", sqlite3_errmsg(pTab->db)));
  }
  return rc;
}

/* xRename: ALTER TABLE ... RENAME TO zNew renames the shadow tables. */
static int vtabRenameMethod(sqlite3_vtab *pVtab, const char *zNew) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  return colvecStorageRename(pTab->pStorage, zNew);
}

/* xShadowName: the suffixes of colvec's shadow tables. */
static int vtabShadowNameMethod(const char *zName) {
  static const char *const azShadow[] = {"config", "delta"};
  int i;
  for (i = 0; i < (int)(sizeof(azShadow) / sizeof(azShadow[0])); i++) {
    if (sqlite3_stricmp(zName, azShadow[i]) == 0) return 1;
  }
  return 0;
}

/* The module object. */
static sqlite3_module colvecModule = {
    3,                    /* iVersion: xShadowName */
    vtabCreateMethod,     /* xCreate */
    vtabConnectMethod,    /* xConnect */
    vtabBestIndexMethod,  /* xBestIndex */
    vtabDisconnectMethod, /* xDisconnect */
    vtabDestroyMethod,    /* xDestroy */
    vtabOpenMethod,       /* xOpen */
    vtabCloseMethod,      /* xClose */
    vtabFilterMethod,     /* xFilter */
    vtabNextMethod,       /* xNext */
    vtabEofMethod,        /* xEof */
    vtabColumnMethod,     /* xColumn */
    vtabRowidMethod,      /* xRowid */
    vtabUpdateMethod,     /* xUpdate */
    NULL,                 /* xBegin */
    NULL,                 /* xSync */
    NULL,                 /* xCommit */
    NULL,                 /* xRollback */
    NULL,                 /* xFindFunction */
    vtabRenameMethod,     /* xRename */
    NULL,                 /* xSavepoint */
    NULL,                 /* xRelease */
    NULL,                 /* xRollbackTo */
    vtabShadowNameMethod, /* xShadowName */
#if SQLITE_VERSION_NUMBER >= 3044000
    NULL /* xIntegrity */
#endif
};

/* Registers the module on db; see colvecInt.h. */
int colvecVtabRegister(sqlite3 *db, void *pAux, void (*xDestroy)(void *)) {
  return sqlite3_create_module_v2(db, "colvec", &colvecModule, pAux, xDestroy);
}
