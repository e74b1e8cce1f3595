/*
** colvec_vtab.c — the methods of the "colvec" virtual table.
**
** NOTES ON TRANSACTIONS
**
** Everything that decides what a table holds is in shadow tables: the delta
** rows, the manifest of live segment files, tombstones. Segment files are
** immutable and become part of the table only through a manifest row
** written inside the current transaction, after the file was fsynced and
** renamed into place (colvec_compact.c). SQLite's journal or WAL therefore
** gives the table atomic commits, ROLLBACK, SAVEPOINT/ROLLBACK TO and crash
** recovery as for any other table; a crash or rollback can only leave an
** orphan file, which a later writer deletes.
**
** The one piece of state in memory is the pending batch: rows inserted in
** this transaction and not written yet, so that a bulk load goes straight
** to a segment at commit instead of through the delta. Contract:
**   xUpdate      appends inserts to the batch; any other change, and any
**                read (xFilter), first flushes it into shadow tables/files;
**   xSavepoint   records the batch length; xRollbackTo truncates to it;
**   xSync        flushes and compacts — all work that can fail is here,
**                because SQLite ignores errors from xCommit; a COMMIT
**                that then fails with SQLITE_BUSY leaves the transaction
**                open, and the next COMMIT syncs again;
**   xRollback    drops the batch; cached segment sets are re-read.
**
** DDL: a table's segment folder is named by an id fixed at CREATE, so
** CREATE and RENAME touch no files, and DROP deletes files only in
** autocommit mode, when no ROLLBACK can bring the table back (see "Table
** folders" in doc/ARCHITECTURE.md).
*/
#include "colvecInt.h"

#include <math.h>
#include <string.h>

/* Shorthand: the table's error message (see colvec_cursor.c). */
#define vtabSetError colvecVtabSetError

/*
** Tables connected in this process, newest first, linked by pNextOpen;
** guarded by SQLITE_MUTEX_STATIC_MAIN (as colvec.c's list of connections;
** held only around the pointer updates). Lets colvec_check() reach a table
** without INSERT.
*/
static ColvecVtab *vtabOpenList = NULL;

/* Adds pTab to the open-table list. */
static void vtabListAdd(ColvecVtab *pTab) {
  colvecMainMutexEnter();
  pTab->pNextOpen = vtabOpenList;
  vtabOpenList = pTab;
  colvecMainMutexLeave();
}

/* Removes pTab from the open-table list (a no-op when it is not there). */
static void vtabListRemove(ColvecVtab *pTab) {
  ColvecVtab **pp;
  colvecMainMutexEnter();
  for (pp = &vtabOpenList; *pp; pp = &(*pp)->pNextOpen) {
    if (*pp == pTab) {
      *pp = pTab->pNextOpen;
      break;
    }
  }
  colvecMainMutexLeave();
}

/* Finds a connected table; see colvecInt.h. */
ColvecVtab *colvecVtabFind(sqlite3 *db, const char *zDb, const char *zTab) {
  ColvecVtab *p;
  colvecMainMutexEnter();
  for (p = vtabOpenList; p; p = p->pNextOpen) {
    if (p->db == db && sqlite3_stricmp(p->pConfig->zDb, zDb) == 0 &&
        sqlite3_stricmp(p->pConfig->zName, zTab) == 0) {
      break;
    }
  }
  colvecMainMutexLeave();
  return p;
}

/* Holds a table for a SQL function; see colvecInt.h. */
int colvecVtabHold(sqlite3 *db, const char *zFunc, const char *zDb,
                   const char *zTab, ColvecVtabHeld *p, char **pzErr) {
  char *zSql;
  int bColvec = 0, rc;
  memset(p, 0, sizeof(*p));
  zSql = sqlite3_mprintf("SELECT sql FROM \"%w\".sqlite_schema WHERE "
                         "type='table' AND name=%Q",
                         zDb, zTab);
  rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &p->pStmt, NULL) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if (rc == SQLITE_OK && sqlite3_step(p->pStmt) == SQLITE_ROW) {
    const char *zDef = (const char *)sqlite3_column_text(p->pStmt, 0);
    bColvec = colvecConfigIsColvecSql(zDef);
  }
  sqlite3_finalize(p->pStmt);
  p->pStmt = NULL;
  if (rc == SQLITE_NOMEM) return rc;
  if (rc != SQLITE_OK || !bColvec) {
    *pzErr = sqlite3_mprintf("colvec: %s: %s.%s is not a colvec table", zFunc,
                             zDb, zTab);
    return SQLITE_ERROR;
  }
  /* Preparing a statement on the table connects it (and keeps it so while
  ** prepared); a statement left open on a shadow table holds one read
  ** transaction, so every statement of the caller sees the same snapshot.
  ** No INSERT: it would need a write transaction, which a read-only
  ** connection refuses. */
  zSql = sqlite3_mprintf("SELECT rowid FROM \"%w\".\"%w\"", zDb, zTab);
  rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &p->pStmt, NULL) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if (rc == SQLITE_OK) rc = colvecStorageSnapshot(db, zDb, zTab, &p->pSnap);
  if (rc == SQLITE_OK) {
    p->pTab = colvecVtabFind(db, zDb, zTab);
    if (p->pTab == NULL) {
      *pzErr = sqlite3_mprintf("colvec: %s: %s.%s is not connected", zFunc, zDb,
                               zTab);
      rc = SQLITE_ERROR;
    }
  } else {
    *pzErr = sqlite3_mprintf("colvec: %s: %s", zFunc, sqlite3_errmsg(db));
  }
  if (rc != SQLITE_OK) colvecVtabRelease(p);
  return rc;
}

/* Releases what colvecVtabHold() holds; see colvecInt.h. */
void colvecVtabRelease(ColvecVtabHeld *p) {
  sqlite3_finalize(p->pSnap);
  sqlite3_finalize(p->pStmt);
  memset(p, 0, sizeof(*p));
}

/* Frees a table object and everything it owns (NULL allowed). */
static void vtabFree(ColvecVtab *pTab) {
  if (pTab) {
    vtabListRemove(pTab);
    sqlite3_free(pTab->zDamage);
    colvecBatchFree(&pTab->pending);
    colvecIndexScratchFree(&pTab->scratch);
    colvecCompactJobFree(pTab->pIndexJob);
    sqlite3_free(pTab->aMark);
    sqlite3_free(pTab->aTrace);
    colvecSegmentTableClose(pTab->pSegs);
    colvecStorageClose(pTab->pStorage);
    colvecConfigFree(pTab->pConfig);
    sqlite3_free(pTab->aRowBuf);
    sqlite3_free(pTab->aCell);
    sqlite3_free(pTab);
  }
}

/*
** DROP TABLE in autocommit mode, after the shadow tables were dropped:
** removes the table's segment files and then its folder if empty (unless
** another table names the same folder, or that cannot be read), and
** sweeps orphan folders. The statement is the whole transaction, so no
** ROLLBACK can bring back a table whose folder this removes.
*/
static void vtabDropFiles(ColvecVtab *pTab) {
  const ColvecConfig *pC = pTab->pConfig;
  ColvecFolderList list;
  const char *zFolder = colvecOsBaseName(pTab->pSegs->zDir);
  if (colvecStorageFolderList(pTab->db, pC->zDb, pC->zName, &list) ==
      SQLITE_OK) {
    int i, bShared = 0;
    for (i = 0; i < list.n; i++) {
      bShared |= strcmp(list.azFolder[i], zFolder) == 0;
    }
    if (!bShared) colvecFolderRemove(pTab->pSegs->pStore, pTab->pSegs->zDir);
    colvecStorageFolderListFree(&list);
  }
  colvecFolderSweepOrphans(pTab->db, pC->zDb, pC->zName);
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
  char *zFolder = NULL;
  int bMadeFolder = 0; /* this CREATE made folder zFolder */
  *ppVtab = NULL;
  if (pTab == NULL) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->db = db;
  pTab->iTraceCol = -1;
  rc = colvecConfigParse(argc, argv, &pTab->pConfig, pzErr);
  if (rc == SQLITE_OK) {
    int64_t nBuf = 0;
    int i;
    for (i = 0; i < pTab->pConfig->nCol; i++) {
      nBuf += (pTab->pConfig->aCol[i].nByte + 7) & ~7;
    }
    pTab->aRowBuf = sqlite3_malloc64((sqlite3_uint64)nBuf);
    pTab->aCell = sqlite3_malloc64(sizeof(ColvecCell) *
                                   (sqlite3_uint64)pTab->pConfig->nCol);
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
    colvecBatchInit(&pTab->pending, pTab->pConfig);
    if (bCreate) {
      rc = colvecConfigStorageChoose(db, pTab->pConfig, pzErr);
    }
    if (rc == SQLITE_OK && bCreate) {
      /* CREATE never deletes anything of its own name: the new table gets
      ** a new folder. In autocommit mode the statement is the whole
      ** transaction and holds the write lock, so folders no table names
      ** are orphans for certain and are swept first. */
      if (sqlite3_get_autocommit(db)) {
        colvecFolderSweepOrphans(db, pTab->pConfig->zDb, pTab->pConfig->zName);
      }
      rc = colvecFolderNew(db, pTab->pConfig->zDb, &zFolder, pzErr);
      bMadeFolder = rc == SQLITE_OK;
    }
  }
  if (rc == SQLITE_OK) {
    rc = colvecStorageOpen(db, pTab->pConfig, bCreate, zFolder, &pTab->pStorage,
                           pzErr);
  }
  if (rc == SQLITE_OK && !bCreate) {
    rc = colvecStorageFolder(pTab->pStorage, &zFolder, pzErr);
    if (rc == SQLITE_OK) {
      /* a damaged or edited database: each table's cleanup would delete
      ** the other's files */
      rc = colvecStorageFolderShared(pTab->pStorage, zFolder, pzErr);
    }
  }
  if (rc == SQLITE_OK) {
    rc = colvecSegmentTableOpen(db, pTab->pConfig, pTab->pStorage, zFolder,
                                &pTab->pSegs, pzErr);
  }
  if (rc == COLVEC_CORRUPT_VTAB && !bCreate && pTab->pStorage) {
    /* no usable segment folder: connected as damaged, so that DROP TABLE
    ** still works; everything else fails with the message */
    pTab->zDamage = *pzErr ? *pzErr
                           : sqlite3_mprintf("colvec: table %s is "
                                             "damaged",
                                             pTab->pConfig->zName);
    *pzErr = NULL;
    colvecSegmentTableClose(pTab->pSegs);
    pTab->pSegs = NULL;
    rc = pTab->zDamage ? SQLITE_OK : SQLITE_NOMEM;
  }
  if (rc != SQLITE_OK && bMadeFolder) {
    /* the folder this failed CREATE made is still empty */
    char *zFile = colvecFolderDbFile(db, pTab->pConfig->zDb);
    char *zDir = zFile ? colvecFolderPath(zFile, zFolder) : NULL;
    if (zDir) colvecFolderDbStore(db, pTab->pConfig->zDb)->xRmdir(zDir, NULL);
    sqlite3_free(zDir);
    sqlite3_free(zFile);
  }
  sqlite3_free(zFolder);
  sqlite3_free(zDecl);
  if (rc != SQLITE_OK) {
    vtabFree(pTab);
    return rc;
  }
  vtabListAdd(pTab);
  pTab->bCreated = bCreate;
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

/*
** xDestroy: DROP TABLE drops the shadow tables. In autocommit mode it also
** removes the table's segment files and then its folder if empty
** (vtabDropFiles), unless the table is damaged (zDamage): then no file. Inside
** an explicit transaction the files stay (a
** ROLLBACK brings the table back, and files cannot be un-deleted); after
** such a DROP commits, the folder is an orphan that the next CREATE or
** DROP in autocommit mode removes.
*/
static int vtabDestroyMethod(sqlite3_vtab *pVtab) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  int rc = colvecStorageDestroy(pTab->pStorage);
  if (rc == SQLITE_OK) {
    /* a damaged table (no folder it can prove its own) deletes no file */
    if (sqlite3_get_autocommit(pTab->db) && pTab->pSegs) {
      colvecSegmentTableRelease(pTab->pSegs); /* unmapped: deletable anywhere */
      vtabDropFiles(pTab);
    }
    vtabFree(pTab);
  }
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

/* Most `distance` bounds of one KNN pushed into the search. */
#define VTAB_MAX_DIST 8

/*
** Maps an SQLite constraint operator on the distance column to a plan
** bound (COLVEC_OP_DIST_*, in the order of COLVEC_OP_LT..GE), or -1 when
** it is not a bound (=, !=, ...).
*/
static int vtabDistanceOp(unsigned char op) {
  int eOp = vtabFilterOp(op);
  if (eOp < COLVEC_OP_LT || eOp > COLVEC_OP_GE) return -1;
  return COLVEC_OP_DIST_LT + (eOp - COLVEC_OP_LT);
}

/* Names of the hidden KNN parameter columns, indexed by COLVEC_HIDDEN_*. */
static const char *const vtabHiddenName[] = {"distance", "k",  "oversampling",
                                             "rescore",  "ef", "command"};

/*
** Computes the idxNum used-columns mask (colvec_plan.h) from colUsed.
*/
static int vtabUsedMask(const ColvecConfig *pC, sqlite3_uint64 colUsed) {
  int mUsed = 0;
  int i;
  for (i = 0; i < pC->nCol + (pC->iPk >= 0); i++) {
    int bUsed = i < 63 ? (int)((colUsed >> i) & 1) : (int)(colUsed >> 63);
    int iCol = colvecConfigColumn(pC, i);
    if (bUsed && iCol >= 0) { /* the mask is of colvec's columns */
      mUsed |= iCol < COLVEC_PLAN_USED_HIGH ? (1 << iCol)
                                            : (1 << COLVEC_PLAN_USED_HIGH);
    }
  }
  return mUsed;
}

/*
** Appends argument (eOp, iCol) for constraint iCons to the plan and gives
** the constraint the next argvIndex.
*/
static void vtabPlanAdd(ColvecPlan *pPlan, sqlite3_index_info *pInfo, int iCons,
                        ColvecPlanOp eOp, int iCol, int bOmit) {
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
** columns; SQLite re-checks them (omit = 0). `id = ?` on a text primary key
** is EQ@i, looked up in T_ids by xFilter (a unique lookup, as for the
** rowid); its other tests are left to SQLite. MATCH and the KNN parameters
** are omitted. In a knn plan, up to 8 bounds on distance (<, <=, >, >=)
** become DISTANCE<, DISTANCE<=, DISTANCE>, DISTANCE>= arguments: the
** search returns the k nearest rows within them, compared with the very
** double the distance column reports. They are omitted: a bound given as
** text that reads as a number ('0.5', as sqlite-vec takes it) is that
** number, which SQLite's own test on the untyped column would not do. An
** unusable bound makes the knn plan SQLITE_CONSTRAINT (applied after the
** top k, it would drop rows). An unusable MATCH or KNN parameter (a join order
** that does
** not provide it yet) makes the plan SQLITE_CONSTRAINT; MATCH without any
** k or LIMIT, a second MATCH, or a KNN parameter without MATCH is an error.
*/
static int vtabBestIndexMethod(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  const ColvecConfig *pC = pTab->pConfig;
  int aiParam[COLVEC_HIDDEN_COUNT]; /* constraint index per KNN parameter */
  int iMatch = -1, iLimit = -1, iOffset = -1;
  int bMatchUnusable = 0, bParamUnusable = 0, bAllPushable = 1;
  int nFilter = 0, bRowidEq = 0, bTextIn = 0;
  int nDist = 0, bDistUnusable = 0;
  int aiDist[VTAB_MAX_DIST]; /* constraint index per distance bound */
  int aiFilter[COLVEC_PLAN_MAX_ARG];
  int aeFilter[COLVEC_PLAN_MAX_ARG];
  ColvecPlan plan;
  int i, rc;
  char *zIdx = NULL;

  memset(&plan, 0, sizeof(plan));
  for (i = 0; i < COLVEC_HIDDEN_COUNT; i++)
    aiParam[i] = -1;
  for (i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *p = &pInfo->aConstraint[i];
    int iCol = colvecConfigColumn(pC, p->iColumn);
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
        vtabSetError(pTab, sqlite3_mprintf("colvec: only one MATCH per query"));
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
      } else if (iHidden == COLVEC_HIDDEN_DISTANCE &&
                 vtabDistanceOp(p->op) >= 0) {
        if (!p->usable) {
          bDistUnusable = 1;
        } else if (nDist < VTAB_MAX_DIST) {
          aiDist[nDist++] = i;
        } else {
          bAllPushable = 0;
        }
      } else {
        bAllPushable = 0; /* other tests of distance, command: to SQLite */
      }
      continue;
    }
    eOp = vtabFilterOp(p->op);
    if (iCol == COLVEC_COL_TEXTID && eOp != COLVEC_OP_EQ) {
      /* a text primary key: = is looked up in T_ids (an IN list one
      ** value at a time), any other test is SQLite's on xColumn's values */
      eOp = -1;
    }
    if (!p->usable || eOp < 0 || nFilter >= COLVEC_PLAN_MAX_ARG - 8) {
      bAllPushable = 0;
      continue;
    }
    if (eOp == COLVEC_OP_EQ && iCol != COLVEC_COL_TEXTID &&
        sqlite3_vtab_in(pInfo, i, -1)) {
      eOp = COLVEC_OP_IN;
    }
    if (eOp == COLVEC_OP_EQ && iCol == COLVEC_COL_TEXTID &&
        sqlite3_vtab_in(pInfo, i, -1)) {
      bTextIn = 1; /* SQLite would run the plan once per value */
    }
    if (eOp == COLVEC_OP_EQ && iCol < 0) bRowidEq = 1; /* or a text id */
    aiFilter[nFilter] = i;
    aeFilter[nFilter] = eOp;
    nFilter++;
  }

  if (iMatch < 0) {
    if (bMatchUnusable) return SQLITE_CONSTRAINT;
    for (i = COLVEC_HIDDEN_K; i <= COLVEC_HIDDEN_EF; i++) {
      if (aiParam[i] >= 0) {
        vtabSetError(pTab,
                     sqlite3_mprintf("colvec: %s applies only to a KNN query "
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
    int iMatchCol = colvecConfigColumn(pC, pInfo->aConstraint[iMatch].iColumn);
    const ColvecColumn *pCol = &pC->aCol[iMatchCol];
    int bOrderDistance = pInfo->nOrderBy == 1 &&
                         colvecConfigColumn(pC, pInfo->aOrderBy[0].iColumn) ==
                             pC->nCol + COLVEC_HIDDEN_DISTANCE &&
                         !pInfo->aOrderBy[0].desc;
    /* a bound applied after the top k would drop rows: wait for a plan
    ** that provides it */
    if (bParamUnusable || bDistUnusable) return SQLITE_CONSTRAINT;
    if (bTextIn) {
      /* one KNN per listed id would return up to k rows per id, not the k
      ** nearest of them: refused rather than answered wrongly */
      vtabSetError(
          pTab, sqlite3_mprintf("colvec: a KNN query cannot filter %s (a text "
                                "primary key) with IN: filter one id (%s = ?)",
                                pC->zPk, pC->zPk));
      return SQLITE_ERROR;
    }
    plan.bKnn = 1;
    vtabPlanAdd(&plan, pInfo, iMatch, COLVEC_OP_MATCH, iMatchCol, 1);
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
    for (i = 0; i < nDist; i++) {
      vtabPlanAdd(
          &plan, pInfo, aiDist[i],
          (ColvecPlanOp)vtabDistanceOp(pInfo->aConstraint[aiDist[i]].op),
          COLVEC_PLAN_NOCOL, 1);
    }
    if (bOrderDistance) pInfo->orderByConsumed = 1;
    pInfo->estimatedCost = 1e3;
    pInfo->estimatedRows = 10;
  }

  for (i = 0; i < nFilter; i++) {
    int iCons = aiFilter[i];
    if (aeFilter[i] == COLVEC_OP_IN) sqlite3_vtab_in(pInfo, iCons, 1);
    int iCol = colvecConfigColumn(pC, pInfo->aConstraint[iCons].iColumn);
    vtabPlanAdd(&plan, pInfo, iCons, (ColvecPlanOp)aeFilter[i],
                iCol == COLVEC_COL_TEXTID ? COLVEC_PLAN_TEXTID
                : iCol < 0                ? COLVEC_PLAN_ROWID
                                          : iCol,
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

/*
** Runs a command written to the column named like the table, fts5-style:
** INSERT INTO t(t) VALUES('integrity-check'). Returns SQLITE_OK or an
** error with the table's message set.
*/
static int vtabCommand(ColvecVtab *pTab, sqlite3_value *pCmd) {
  const char *zCmd = (const char *)sqlite3_value_text(pCmd);
  char *zErr = NULL;
  int rc;
  if (zCmd == NULL) return SQLITE_NOMEM;
  if (sqlite3_stricmp(zCmd, "integrity-check") == 0) {
    rc = colvecWriteCheck(pTab, 1, NULL, &zErr);
  } else if (sqlite3_stricmp(zCmd, "optimize") == 0) {
    rc = colvecWriteCompact(pTab, 1, &zErr);
  } else if (sqlite3_strnicmp(zCmd, "index", 5) == 0 &&
             (zCmd[5] == 0 || zCmd[5] == '=')) {
    /* 'index' builds every deferred graph, 'index=N' about N rows of
    ** them (colvecCompactIndex) */
    sqlite3_int64 nBudget = 0;
    const char *z = zCmd + 6;
    if (zCmd[5] == 0) {
      nBudget = (sqlite3_int64)1 << 62;
    } else {
      while (*z >= '0' && *z <= '9' && nBudget < ((sqlite3_int64)1 << 40)) {
        nBudget = nBudget * 10 + (*z++ - '0');
      }
    }
    if (zCmd[5] == '=' && (z == zCmd + 6 || *z || nBudget < 1)) {
      zErr = sqlite3_mprintf("colvec: the index command takes a positive "
                             "number of rows, e.g. 'index=20000', got '%s'",
                             zCmd);
      rc = SQLITE_ERROR;
    } else {
      rc = colvecWriteIndex(pTab, nBudget, &zErr);
    }
  } else if (sqlite3_stricmp(zCmd, "embed") == 0 ||
             sqlite3_stricmp(zCmd, "sidecar") == 0) {
    rc = colvecCompactConvert(pTab->pSegs, pTab->pStorage,
                              sqlite3_stricmp(zCmd, "embed") == 0, &zErr);
  } else {
    zErr = sqlite3_mprintf("colvec: unknown command '%s' (expected "
                           "'optimize', 'index', 'index=N', "
                           "'integrity-check', 'embed' or 'sidecar')",
                           zCmd);
    rc = SQLITE_ERROR;
  }
  rc = colvecStorageDamaged(pTab->pStorage, rc, &zErr);
  if (zErr) vtabSetError(pTab, zErr);
  return rc;
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
      char zMsg[COLVEC_VECTOR_ERRMAX];
      unsigned eSub = sqlite3_value_subtype(pVal);
      if (sqlite3_value_type(pVal) == SQLITE_BLOB &&
          (eSub == 0 || eSub == (unsigned)colvecVecapiSubtype(pCol->eElem)) &&
          colvecVectorCheck(sqlite3_value_blob(pVal), sqlite3_value_bytes(pVal),
                            pCol->eElem, pCol->nDim, zMsg) == COLVEC_OK) {
        /* a valid BLOB is used where it is (valid until xUpdate returns);
        ** one typed as another element type goes on to be refused */
        pCell->pBlob = sqlite3_value_blob(pVal);
      } else {
        rc = colvecValueToVector(pVal, pCol, pBuf, &zErr);
        pCell->pBlob = pBuf;
      }
      pCell->nBlob = pCol->nByte;
      pBuf += (pCol->nByte + 7) & ~7;
    } else {
      rc = colvecValueCheckAttr(pVal, pCol, pCell, &zErr);
    }
    if (zErr) vtabSetError(pTab, zErr);
  }
  return rc;
}

/*
** Checks a new rowid value for INSERT/UPDATE: an integer, or NULL in an
** INSERT (choose one; an UPDATE to NULL is a mismatch, as for an ordinary
** rowid table). Returns SQLITE_OK or SQLITE_MISMATCH with the table's
** message set.
*/
static int vtabCheckRowid(ColvecVtab *pTab, sqlite3_value *pVal, int bInsert) {
  int eType = sqlite3_value_type(pVal);
  if (eType == SQLITE_INTEGER || (eType == SQLITE_NULL && bInsert)) {
    return SQLITE_OK;
  }
  vtabSetError(pTab, sqlite3_mprintf("colvec: rowid must be an integer"));
  return SQLITE_MISMATCH;
}

/*
** The body of xUpdate: DELETE (argc 1), INSERT (argv[0] NULL; the new rowid
** in *pRowid) or UPDATE. Returns SQLITE_OK or an error with the table's
** message set.
*/
static int vtabUpdate(ColvecVtab *pTab, int argc, sqlite3_value **argv,
                      sqlite_int64 *pRowid) {
  const ColvecConfig *pC = pTab->pConfig;
  int bInsert, i, rc;
  char *zErr = NULL;
  int eConflictMode = sqlite3_vtab_on_conflict(pTab->db);
  ColvecConflict eConflict =
      eConflictMode == SQLITE_REPLACE  ? COLVEC_CONFLICT_REPLACE
      : eConflictMode == SQLITE_IGNORE ? COLVEC_CONFLICT_IGNORE
                                       : COLVEC_CONFLICT_ABORT;

  if (argc == 1) {
    char *zErr = NULL;
    rc = colvecWriteDelete(pTab, sqlite3_value_int64(argv[0]), &zErr);
    rc = colvecStorageDamaged(pTab->pStorage, rc, &zErr);
    if (zErr) vtabSetError(pTab, zErr);
    return rc;
  }
  bInsert = sqlite3_value_type(argv[0]) == SQLITE_NULL;
  if (sqlite3_value_type(argv[2 + pC->nCol + COLVEC_HIDDEN_COMMAND]) !=
      SQLITE_NULL) {
    if (!bInsert) {
      vtabSetError(pTab,
                   sqlite3_mprintf("colvec: commands are run with INSERT INTO "
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
  rc = vtabCheckRowid(pTab, argv[1], bInsert);
  if (rc == SQLITE_OK) rc = vtabPrepareCells(pTab, argv, !bInsert);
  if (rc != SQLITE_OK) return rc;
  if (bInsert) {
    sqlite3_value *pNewRowid =
        sqlite3_value_type(argv[1]) == SQLITE_NULL ? NULL : argv[1];
    rc = colvecWriteInsert(pTab, pNewRowid, eConflict, pRowid, &zErr);
  } else {
    rc = colvecWriteUpdate(pTab, sqlite3_value_int64(argv[0]),
                           sqlite3_value_int64(argv[1]), eConflict, &zErr);
  }
  if (zErr == NULL && rc != SQLITE_OK && rc != SQLITE_CONSTRAINT) {
    zErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(pTab->db));
  }
  rc = colvecStorageDamaged(pTab->pStorage, rc, &zErr);
  if (zErr) {
    vtabSetError(pTab, zErr);
  } else if (rc == SQLITE_CONSTRAINT) {
    vtabSetError(pTab,
                 sqlite3_mprintf("UNIQUE constraint failed: %s.%s", pC->zName,
                                 pC->zPk && !pC->bPkText ? pC->zPk : "rowid"));
  }
  return rc;
}

/*
** INSERT or UPDATE of a table with an "id integer primary key" column
** (ColvecConfig.iPk): the id is the new rowid, so argv is passed on to
** vtabUpdate without the id's slot and with the id as argv[1]. An id left
** NULL in an INSERT takes the rowid written, if any (or a new one). A
** rowid and an id that disagree are refused. Returns what vtabUpdate
** returns.
*/
static int vtabUpdateKeyed(ColvecVtab *pTab, int argc, sqlite3_value **argv,
                           sqlite_int64 *pRowid) {
  const ColvecConfig *pC = pTab->pConfig;
  sqlite3_value *pId = argv[2 + pC->iPk];
  sqlite3_value **apArg;
  int rc = SQLITE_OK;
  apArg = colvecMallocZero(&rc, (int64_t)sizeof(sqlite3_value *) * argc);
  if (apArg == NULL) return rc;
  apArg[0] = argv[0];
  apArg[1] = argv[1];
  if (sqlite3_value_type(pId) != SQLITE_NULL && !sqlite3_value_nochange(pId)) {
    int bRowidGiven =
        sqlite3_value_type(argv[0]) == SQLITE_NULL
            ? sqlite3_value_type(argv[1]) != SQLITE_NULL
            : sqlite3_value_int64(argv[0]) != sqlite3_value_int64(argv[1]);
    int bIdChanged = sqlite3_value_type(argv[0]) == SQLITE_NULL ||
                     sqlite3_value_type(pId) != SQLITE_INTEGER ||
                     sqlite3_value_int64(argv[0]) != sqlite3_value_int64(pId);
    if (bRowidGiven && bIdChanged &&
        (sqlite3_value_type(pId) != SQLITE_INTEGER ||
         sqlite3_value_int64(argv[1]) != sqlite3_value_int64(pId))) {
      vtabSetError(pTab, sqlite3_mprintf("colvec: %s and rowid disagree (%s "
                                         "is an alias of the rowid)",
                                         pC->zPk, pC->zPk));
      rc = SQLITE_CONSTRAINT;
    } else if (sqlite3_value_type(pId) != SQLITE_INTEGER) {
      vtabSetError(pTab,
                   sqlite3_mprintf("colvec: %s must be an integer", pC->zPk));
      rc = SQLITE_MISMATCH;
    } else if (bIdChanged) {
      apArg[1] = pId;
    }
  }
  if (rc == SQLITE_OK) {
    memcpy(&apArg[2], &argv[2], sizeof(sqlite3_value *) * pC->iPk);
    memcpy(&apArg[2 + pC->iPk], &argv[3 + pC->iPk],
           sizeof(sqlite3_value *) * (argc - 3 - pC->iPk));
    rc = vtabUpdate(pTab, argc - 1, apArg, pRowid);
  }
  colvecFree(apArg);
  return rc;
}

/*
** Names the SQL type of value pVal for an error message: "an integer",
** "a real", "a blob" or "NULL".
*/
static const char *vtabTypeName(sqlite3_value *pVal) {
  switch (sqlite3_value_type(pVal)) {
  case SQLITE_INTEGER:
    return "an integer";
  case SQLITE_FLOAT:
    return "a real";
  case SQLITE_BLOB:
    return "a blob";
  case SQLITE_TEXT:
    return "text";
  default:
    return "NULL";
  }
}

/*
** INSERT, UPDATE or DELETE of a table with an "id text primary key"
** column (ColvecConfig.bPkText), whose values T_ids maps to rowids:
**
**   INSERT  the id must be TEXT (sqlite-vec refuses any other type, NULL
**           and a missing id too). A taken id is a UNIQUE constraint error,
**           skipped under OR IGNORE, and under OR REPLACE the row holding
**           it is deleted first. The row is written by vtabUpdate (argv
**           without the id's slot), then its id.
**   UPDATE  the id and the rowid cannot change (as in sqlite-vec, whose
**           text-keyed tables have no rowid): setting the id to the value
**           it has is allowed; other columns go to vtabUpdate.
**   DELETE  the row, then its id.
**
** Commands (INSERT INTO t(t) VALUES(...)) pass through. Returns SQLITE_OK
** or an error with the table's message set.
*/
static int vtabUpdateText(ColvecVtab *pTab, int argc, sqlite3_value **argv,
                          sqlite_int64 *pRowid) {
  const ColvecConfig *pC = pTab->pConfig;
  ColvecStorage *pS = pTab->pStorage;
  int eConflict = sqlite3_vtab_on_conflict(pTab->db);
  sqlite3_value *pId = argc > 1 ? argv[2 + pC->iPk] : NULL;
  sqlite3_value **apArg = NULL;
  sqlite3_int64 iTaken = 0;
  char *zErr = NULL;
  int rc = SQLITE_OK;
  int bInsert = argc > 1 && sqlite3_value_type(argv[0]) == SQLITE_NULL;
  int bCommand = argc > 1 &&
                 sqlite3_value_type(
                     argv[3 + pC->nCol + COLVEC_HIDDEN_COMMAND]) != SQLITE_NULL;

  if (argc == 1) {
    rc = vtabUpdate(pTab, argc, argv, pRowid);
    if (rc == SQLITE_OK) {
      rc = colvecStorageIdDelete(pS, sqlite3_value_int64(argv[0]));
      if (rc != SQLITE_OK) goto storage_error;
    }
    return rc;
  }
  if (bInsert && !bCommand) {
    if (sqlite3_value_type(pId) != SQLITE_TEXT) {
      vtabSetError(pTab, sqlite3_mprintf("colvec: %s is a text primary key: "
                                         "its value must be text, not %s",
                                         pC->zPk, vtabTypeName(pId)));
      return SQLITE_MISMATCH;
    }
    rc = colvecStorageIdFind(pS, pId, &iTaken, NULL);
    if (rc == SQLITE_ROW) {
      if (eConflict == SQLITE_IGNORE) return SQLITE_OK;
      if (eConflict != SQLITE_REPLACE) {
        vtabSetError(pTab, sqlite3_mprintf("UNIQUE constraint failed: %s.%s",
                                           pC->zName, pC->zPk));
        return SQLITE_CONSTRAINT;
      }
      rc = colvecWriteDelete(pTab, iTaken, &zErr);
      if (rc == SQLITE_OK) rc = colvecStorageIdDelete(pS, iTaken);
    } else if (rc == SQLITE_DONE) {
      rc = SQLITE_OK;
    }
    if (rc == SQLITE_OK && eConflict == SQLITE_REPLACE &&
        sqlite3_value_type(argv[1]) == SQLITE_INTEGER) {
      /* the row this one replaces takes its id along */
      rc = colvecStorageIdDelete(pS, sqlite3_value_int64(argv[1]));
    }
    if (rc != SQLITE_OK) goto storage_error;
  } else if (!bInsert) {
    if (sqlite3_value_type(argv[1]) != SQLITE_INTEGER ||
        sqlite3_value_int64(argv[0]) != sqlite3_value_int64(argv[1])) {
      vtabSetError(pTab, sqlite3_mprintf("colvec: the rowid of a table with a "
                                         "text primary key (%s) cannot change",
                                         pC->zPk));
      return SQLITE_CONSTRAINT;
    }
    if (!sqlite3_value_nochange(pId)) {
      int bSame = colvecStorageIdIs(pS, sqlite3_value_int64(argv[0]), pId);
      if (bSame < 0) {
        rc = -bSame;
        goto storage_error;
      }
      if (!bSame) {
        vtabSetError(pTab, sqlite3_mprintf("colvec: %s is a text primary key: "
                                           "an UPDATE cannot change it (delete "
                                           "the row and insert it again)",
                                           pC->zPk));
        return SQLITE_CONSTRAINT;
      }
    }
  }
  apArg = colvecMallocZero(&rc, (int64_t)sizeof(sqlite3_value *) * argc);
  if (apArg == NULL) return rc;
  apArg[0] = argv[0];
  apArg[1] = argv[1];
  memcpy(&apArg[2], &argv[2], sizeof(sqlite3_value *) * pC->iPk);
  memcpy(&apArg[2 + pC->iPk], &argv[3 + pC->iPk],
         sizeof(sqlite3_value *) * (argc - 3 - pC->iPk));
  rc = vtabUpdate(pTab, argc - 1, apArg, pRowid);
  colvecFree(apArg);
  if (rc == SQLITE_OK && bInsert && !bCommand) {
    sqlite3_int64 iNew = sqlite3_value_type(argv[1]) == SQLITE_INTEGER
                             ? sqlite3_value_int64(argv[1])
                             : *pRowid;
    rc = colvecStorageIdAdd(pS, pId, iNew);
    /* OR IGNORE of a taken rowid: the row was not written, nor is its id */
    if (rc == SQLITE_CONSTRAINT && eConflict == SQLITE_IGNORE) rc = SQLITE_OK;
    if (rc != SQLITE_OK) goto storage_error;
  }
  return rc;

storage_error:
  if (zErr == NULL && rc != SQLITE_NOMEM) {
    zErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(pTab->db));
  }
  rc = colvecStorageDamaged(pS, rc, &zErr);
  if (zErr) vtabSetError(pTab, zErr);
  return rc;
}

/*
** xUpdate: DELETE (argc 1), INSERT (argv[0] NULL) or UPDATE. The writes to
** shadow tables leave sqlite3_last_insert_rowid() as it was; SQLite sets
** it to *pRowid after an INSERT (a command returns the value it had).
*/
static int vtabUpdateMethod(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                            sqlite_int64 *pRowid) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  sqlite3_int64 iLastRowid = sqlite3_last_insert_rowid(pTab->db);
  int rc = colvecVtabDamaged(pTab);
  if (rc != SQLITE_OK) return rc;
  *pRowid = iLastRowid;
  if (pTab->pConfig->bPkText) {
    rc = vtabUpdateText(pTab, argc, argv, pRowid);
  } else if (argc > 1 && pTab->pConfig->iPk >= 0) {
    rc = vtabUpdateKeyed(pTab, argc, argv, pRowid);
  } else {
    rc = vtabUpdate(pTab, argc, argv, pRowid);
  }
  sqlite3_set_last_insert_rowid(pTab->db, iLastRowid);
  return rc;
}

/*
** xRename: ALTER TABLE ... RENAME TO zNew renames the shadow tables. No
** file is touched: the segment folder is named by the table's id, not by
** its name.
*/
static int vtabRenameMethod(sqlite3_vtab *pVtab, const char *zNew) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  int rc = colvecVtabDamaged(pTab);
  return rc == SQLITE_OK ? colvecStorageRename(pTab->pStorage, zNew) : rc;
}

/*
** Forgets the per-transaction state: pending rows, savepoint marks, the
** cached largest rowid and the generation of the transaction.
*/
static void vtabResetTransaction(ColvecVtab *pTab) {
  if (pTab->pStorage) pTab->pStorage->iTxnGen = -1;
  pTab->bCreated = 0;
  pTab->bMaxKnown = 0;
  colvecBatchTruncate(&pTab->pending, 0);
  pTab->nFlushed = 0;
  pTab->nMark = 0;
  pTab->iBulkSeg = 0;
}

/*
** Debug builds check the order of SQLite's transaction calls against the
** contract in NOTES ON TRANSACTIONS (a wrong order would lose pending
** rows); release builds compile this to nothing.
*/
#ifdef COLVEC_DEBUG
#define vtabTxnState(pTab, bOk, eNew)                                          \
  do {                                                                         \
    assert(bOk);                                                               \
    if ((eNew) >= 0) (pTab)->eTxn = (eNew);                                    \
  } while (0)
/*
** xSync and the savepoint methods come only inside a transaction the
** table is part of: after its xBegin, or in the transaction that CREATEd
** it (which it joins without xBegin). That includes a transaction already
** synced: a COMMIT that failed with SQLITE_BUSY after xSync leaves it
** open, to go on with more statements and a COMMIT that syncs again.
*/
#define vtabTxnInside(pTab)                                                    \
  ((pTab)->eTxn != COLVEC_TXN_NONE || (pTab)->bCreated)
#else
#define vtabTxnState(pTab, bOk, eNew)
#endif

/* xBegin: nothing is pending at the start of a transaction. */
static int vtabBeginMethod(sqlite3_vtab *pVtab) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  vtabTxnState(pTab, pTab->eTxn == COLVEC_TXN_NONE, COLVEC_TXN_OPEN);
  vtabResetTransaction(pTab);
  return SQLITE_OK;
}

/*
** xSync: all work that can fail happens here, before SQLite commits:
** pending rows are written (a bulk load straight to a segment), the delta
** is compacted when it passed delta_rows, segments are merged and unneeded
** files removed. Everything is recorded in shadow tables, so SQLite's
** commit (or a crash before it) decides whether any of it happened.
*/
static int vtabSyncMethod(sqlite3_vtab *pVtab) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  char *zErr = NULL;
  sqlite3_int64 iLastRowid;
  int rc;
  vtabTxnState(pTab, vtabTxnInside(pTab), COLVEC_TXN_SYNCED);
  pTab->nMark = 0;                     /* no savepoint outlives the commit */
  if (pTab->zDamage) return SQLITE_OK; /* it wrote nothing (xUpdate) */
  if (pTab->bCreated) {
    /* SQLite still syncs a table whose CREATE a ROLLBACK TO undid: its
    ** shadow tables are gone and there is nothing to write */
    int bExists = 0;
    rc = colvecStorageConfigExists(pTab->pStorage, &bExists);
    if (rc != SQLITE_OK || !bExists) return rc;
  }
  iLastRowid = sqlite3_last_insert_rowid(pTab->db);
  rc = colvecWriteCompact(pTab, 0, &zErr);
  sqlite3_set_last_insert_rowid(pTab->db, iLastRowid); /* as fts5 does */
  rc = colvecStorageDamaged(pTab->pStorage, rc, &zErr);
  if (zErr) vtabSetError(pTab, zErr);
  return rc;
}

/* xCommit: nothing left to do (SQLite ignores errors from here). */
static int vtabCommitMethod(sqlite3_vtab *pVtab) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  vtabTxnState(pTab, pTab->eTxn == COLVEC_TXN_SYNCED, COLVEC_TXN_NONE);
  assert(pTab->pending.nRow == pTab->nFlushed); /* xSync wrote everything */
  vtabResetTransaction(pTab);
  return SQLITE_OK;
}

/*
** xRollback: pending rows are dropped; SQLite itself undid the shadow
** tables, so the cached segment set is re-read.
*/
static int vtabRollbackMethod(sqlite3_vtab *pVtab) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  vtabTxnState(pTab, 1, COLVEC_TXN_NONE);
  vtabResetTransaction(pTab);
  if (pTab->pSegs) colvecSegmentTableChanged(pTab->pSegs);
  return SQLITE_OK;
}

/* Entries of ColvecVtab.aMark per savepoint (vtabSavepointMethod). */
#define VTAB_MARK 3

/*
** xSavepoint: remembers, for savepoint iSvpt, how many rows the pending
** batch held, how many of them were written, and the first segid of the
** bulk load under way, 0 if none (VTAB_MARK entries of aMark).
*/
static int vtabSavepointMethod(sqlite3_vtab *pVtab, int iSvpt) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  int i;
  vtabTxnState(pTab, vtabTxnInside(pTab), -1);
  if (iSvpt < 0) return SQLITE_OK;
  if (iSvpt >= pTab->nMark) {
    int64_t *aNew = sqlite3_realloc64(
        pTab->aMark, sizeof(int64_t) * VTAB_MARK * (sqlite3_uint64)(iSvpt + 1));
    if (aNew == NULL) return SQLITE_NOMEM;
    pTab->aMark = aNew;
  }
  for (i = pTab->nMark; i <= iSvpt; i++) {
    int64_t *a = &pTab->aMark[VTAB_MARK * i];
    a[0] = pTab->pending.nRow;
    a[1] = pTab->nFlushed;
    a[2] = pTab->iBulkSeg;
  }
  pTab->nMark = iSvpt + 1;
  return SQLITE_OK;
}

/*
** xRelease: savepoints at and above iSvpt are gone. With none left, rows
** already written need not stay in memory.
*/
static int vtabReleaseMethod(sqlite3_vtab *pVtab, int iSvpt) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  vtabTxnState(pTab, vtabTxnInside(pTab), -1);
  if (iSvpt >= 0 && iSvpt < pTab->nMark) pTab->nMark = iSvpt;
  if (pTab->nMark == 0 && pTab->nFlushed > 0 &&
      pTab->nFlushed == pTab->pending.nRow) {
    colvecBatchTruncate(&pTab->pending, 0);
    pTab->nFlushed = 0;
  }
  return SQLITE_OK;
}

/*
** xRollbackTo: the batch returns to its length at savepoint iSvpt, and rows
** that were pending then but written since (SQLite has just undone that
** write in the shadow tables) are pending again.
*/
static int vtabRollbackToMethod(sqlite3_vtab *pVtab, int iSvpt) {
  ColvecVtab *pTab = (ColvecVtab *)pVtab;
  vtabTxnState(pTab, vtabTxnInside(pTab), -1);
  pTab->bMaxKnown = 0;
  if (iSvpt >= 0 && iSvpt < pTab->nMark) {
    const int64_t *a = &pTab->aMark[VTAB_MARK * iSvpt];
    colvecBatchTruncate(&pTab->pending, a[0]);
    pTab->nFlushed = a[1];
    /* the bulk load as it was: its segments written since are undone,
    ** those written before are back */
    pTab->iBulkSeg = a[2];
    pTab->nMark = iSvpt + 1;
  } else {
    /* a savepoint opened before this table joined the transaction (e.g.
    ** SAVEPOINT outside BEGIN): everything since xBegin is undone */
    colvecBatchTruncate(&pTab->pending, 0);
    pTab->nFlushed = 0;
    pTab->iBulkSeg = 0;
  }
  if (pTab->pSegs) colvecSegmentTableChanged(pTab->pSegs);
  return SQLITE_OK;
}

/* xShadowName: whether zName is the suffix of a colvec shadow table. */
static int vtabShadowNameMethod(const char *zName) {
  return colvecStorageIsShadow(zName);
}

/*
** xIntegrity (SQLite >= 3.44, module version 4): PRAGMA integrity_check and
** PRAGMA quick_check run the table's integrity check, the one behind
** INSERT INTO t(t) VALUES('integrity-check') and colvec_check(). A problem
** found is reported in *pzErr (sqlite3_malloc'd, freed by SQLite: one row
** of the pragma's result) with SQLITE_OK; only running out of memory fails
** the pragma itself. mFlags (bit 0: quick_check) changes nothing: the check
** is linear in the size of the table.
*/
static int vtabIntegrityMethod(sqlite3_vtab *pVtab, const char *zSchema,
                               const char *zTabName, int mFlags, char **pzErr) {
  char *zErr = NULL;
  int rc = colvecWriteCheck((ColvecVtab *)pVtab, 1, NULL, &zErr);
  (void)mFlags;
  if (rc == SQLITE_OK || rc == SQLITE_NOMEM) {
    sqlite3_free(zErr);
    return rc;
  }
  if (zErr == NULL) {
    zErr = sqlite3_mprintf("colvec: integrity-check: table %s.%s: %s", zSchema,
                           zTabName, sqlite3_errstr(rc));
  }
  *pzErr = zErr;
  return zErr ? SQLITE_OK : SQLITE_NOMEM;
}

/* The methods of sqlite3_module versions 1 to 3, in order. */
#define COLVEC_MODULE_METHODS                                                  \
  vtabCreateMethod, vtabConnectMethod, vtabBestIndexMethod,                    \
      vtabDisconnectMethod, vtabDestroyMethod, colvecCursorOpen,               \
      colvecCursorClose, colvecCursorFilter, colvecCursorNext,                 \
      colvecCursorEof, colvecCursorColumn, colvecCursorRowid,                  \
      vtabUpdateMethod, vtabBeginMethod, vtabSyncMethod, vtabCommitMethod,     \
      vtabRollbackMethod, colvecCursorFindFunction, vtabRenameMethod,          \
      vtabSavepointMethod, vtabReleaseMethod, vtabRollbackToMethod,            \
      vtabShadowNameMethod

/*
** The module object, in two versions chosen at registration from the
** running SQLite (a loadable extension is built against one sqlite3.h and
** loaded into any SQLite from COLVEC_MIN_SQLITE_VERSION_NUMBER on):
**   colvecModule3  iVersion 3 (xShadowName), for SQLite before 3.44;
**   colvecModule4  iVersion 4, adds xIntegrity, for SQLite 3.44 and later.
** The sqlite3_module of a sqlite3.h older than 3.44 has no xIntegrity
** member; ColvecModule4 then appends the slot, where newer headers have it
** (right after xShadowName, a pointer-sized member, so no padding differs).
*/
typedef int (*ColvecIntegrityFn)(sqlite3_vtab *, const char *, const char *,
                                 int, char **);
typedef struct ColvecModule4 ColvecModule4;
struct ColvecModule4 {
  sqlite3_module base; /* versions 1-3 (and 4 with a >= 3.44 sqlite3.h) */
#if SQLITE_VERSION_NUMBER < 3044000
  ColvecIntegrityFn xIntegrity; /* version 4's slot, absent from base */
#endif
};
#if SQLITE_VERSION_NUMBER < 3044000
static const sqlite3_module colvecModule3 = {3, COLVEC_MODULE_METHODS};
static const ColvecModule4 colvecModule4 = {{4, COLVEC_MODULE_METHODS},
                                            vtabIntegrityMethod};
#else
/* every member initialized: no -Wmissing-field-initializers with -Wextra */
static const sqlite3_module colvecModule3 = {3, COLVEC_MODULE_METHODS, 0};
static const ColvecModule4 colvecModule4 = {
    {4, COLVEC_MODULE_METHODS, vtabIntegrityMethod}};
#endif

/* Registers the module on db; see colvecInt.h. */
int colvecVtabRegister(sqlite3 *db, void *pAux, void (*xDestroy)(void *)) {
  const sqlite3_module *pModule = &colvecModule3;
  if (sqlite3_libversion_number() >= 3044000) pModule = &colvecModule4.base;
  return sqlite3_create_module_v2(db, "colvec", pModule, pAux, xDestroy);
}
