/*
** colvec_segments.c — colvec_segments(table [, schema]): a table-valued
** function (an eponymous-only virtual table) listing how a colvec table is
** stored and searched, one row per segment and vector column, then one row
** per vector column for the delta (rows not yet in a segment).
**
**   segid           the segment's id (file NNNNNN.seg); NULL for the delta
**   vector_column   the vector column the row describes
**   rows            rows held, deleted ones included (delta: its rows,
**                   with the rows this connection's open transaction holds
**                   in memory)
**   deleted         rows of the segment deleted since it was written
**   bytes           the segment's size (NULL for the delta)
**   storage         'sidecar', 'embedded', 'memory' or 'delta'
**   quantizer       codes the segment keeps ('int8', 'int4', 'bit'), or
**                   'none'
**   indexed         'graph', 'pending' (its graph deferred: the 'index'
**                   command builds it) or 'exact' (no graph)
**   search          'graph on codes' (then float32 rescoring), 'graph on
**                   vectors', 'scan codes' (a pending segment's codes,
**                   then float32 rescoring) or 'exact'
**   recall_codes    recall@10 the graph measured on the codes when it was
**                   built; NULL when not measured
**   recall_vectors  the same on the vectors (measured when the codes fell
**                   below the floor, or there are none); NULL when not
**   fallback        1 when the measure left out codes or graph that the
**                   table's options ask for, else 0
**
** and how the last KNN query this connection ran on the table searched the
** row's segment (or the delta), when it searched that vector column of it
** (else NULL):
**
**   last_search     'graph', 'scan codes' (then float32 rescoring), 'scan
**                   vectors', or 'skipped' (no row passed)
**   last_passing    rows that passed the query's filters and deletions
**   last_visited    distances computed: graph nodes, or rows scanned
**   last_rescored   candidates rescored with their float32 vectors
**   last_micros     time spent on it, in microseconds
**
** The table is read in one snapshot (colvecVtabHold), as colvec_check
** reads it, and nothing is written: it works on read-only connections. A
** damaged recall record is SQLITE_CORRUPT_VTAB, as in integrity-check. The
** schema is the second argument, or a "schema.table" first argument when
** no table of the main schema has that name.
*/
#include "colvecInt.h"

#include <string.h>

/* One row of the result. */
typedef struct SegmentsRow SegmentsRow;
struct SegmentsRow {
  int64_t iSegid;       /* segment id; unused for the delta */
  int bDelta;           /* the row describes the delta */
  char *zCol;           /* vector column name (owned) */
  int64_t nRow;         /* rows held */
  int64_t nDel;         /* rows deleted since written */
  int64_t nByte;        /* segment size in bytes */
  const char *zStorage; /* 'sidecar', 'embedded', 'memory' or 'delta' */
  const char *zQuant;   /* codes kept ('none' when none) */
  ColvecIndexInfo info; /* how the column is indexed and searched */
  int bTrace;           /* the last KNN searched it: trace is set */
  ColvecKnnTrace trace; /* how, when bTrace */
};

/* The virtual table: remembers its connection. */
typedef struct SegmentsVtab SegmentsVtab;
struct SegmentsVtab {
  sqlite3_vtab base; /* base class: must be first */
  sqlite3 *db;       /* connection */
};

/* A cursor: every row, computed by xFilter. */
typedef struct SegmentsCursor SegmentsCursor;
struct SegmentsCursor {
  sqlite3_vtab_cursor base; /* base class: must be first */
  SegmentsRow *aRow;        /* the rows */
  int nRow;                 /* entries in aRow */
  int nAlloc;               /* allocated entries of aRow */
  int iRow;                 /* current row */
};

/* Column numbers of the declared table (the last two are arguments). */
#define SEGMENTS_SEGID 0
#define SEGMENTS_COLUMN 1
#define SEGMENTS_ROWS 2
#define SEGMENTS_DELETED 3
#define SEGMENTS_BYTES 4
#define SEGMENTS_STORAGE 5
#define SEGMENTS_QUANT 6
#define SEGMENTS_INDEXED 7
#define SEGMENTS_SEARCH 8
#define SEGMENTS_RECALL_CODES 9
#define SEGMENTS_RECALL_VECTORS 10
#define SEGMENTS_FALLBACK 11
#define SEGMENTS_LAST_SEARCH 12
#define SEGMENTS_LAST_PASSING 13
#define SEGMENTS_LAST_VISITED 14
#define SEGMENTS_LAST_RESCORED 15
#define SEGMENTS_LAST_MICROS 16
#define SEGMENTS_TABLE 17
#define SEGMENTS_SCHEMA 18

/* xConnect: one table shape for every use. */
static int segmentsConnect(sqlite3 *db, void *pAux, int argc,
                           const char *const *argv, sqlite3_vtab **ppVtab,
                           char **pzErr) {
  int rc;
  (void)pAux;
  (void)argc;
  (void)argv;
  (void)pzErr;
  rc = sqlite3_declare_vtab(
      db, "CREATE TABLE x(segid, vector_column, rows, deleted, bytes, "
          "storage, quantizer, indexed, search, recall_codes, recall_vectors, "
          "fallback, last_search, last_passing, last_visited, last_rescored, "
          "last_micros, tab HIDDEN, schema HIDDEN)");
  if (rc == SQLITE_OK) {
    SegmentsVtab *pNew = sqlite3_malloc(sizeof(*pNew));
    if (pNew == NULL) return SQLITE_NOMEM;
    memset(pNew, 0, sizeof(*pNew));
    pNew->db = db;
    /* it reads tables: never from the schema or a trigger */
    sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
    *ppVtab = &pNew->base;
  }
  return rc;
}

/* xOpen. */
static int segmentsOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur) {
  (void)pVtab;
  return colvecTvfCursor(sizeof(SegmentsCursor), ppCur);
}

/* Frees the rows of pCur. */
static void segmentsReset(SegmentsCursor *pCur) {
  int i;
  for (i = 0; i < pCur->nRow; i++)
    sqlite3_free(pCur->aRow[i].zCol);
  sqlite3_free(pCur->aRow);
  pCur->aRow = NULL;
  pCur->nRow = pCur->nAlloc = pCur->iRow = 0;
}

/* xClose. */
static int segmentsClose(sqlite3_vtab_cursor *pCursor) {
  segmentsReset((SegmentsCursor *)pCursor);
  sqlite3_free(pCursor);
  return SQLITE_OK;
}

/*
** xBestIndex: the table must be given (colvec_segments(t) or tab = t), the
** schema may be (idxNum 1); without the table the plan is refused
** (SQLITE_CONSTRAINT).
*/
static int segmentsBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo) {
  int i, iTab = -1, iSchema = -1;
  (void)pVtab;
  for (i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *p = &pInfo->aConstraint[i];
    if (p->op != SQLITE_INDEX_CONSTRAINT_EQ || !p->usable) continue;
    if (p->iColumn == SEGMENTS_TABLE) iTab = i;
    if (p->iColumn == SEGMENTS_SCHEMA) iSchema = i;
  }
  if (iTab < 0) return SQLITE_CONSTRAINT;
  pInfo->aConstraintUsage[iTab].argvIndex = 1;
  pInfo->aConstraintUsage[iTab].omit = 1;
  if (iSchema >= 0) {
    pInfo->aConstraintUsage[iSchema].argvIndex = 2;
    pInfo->aConstraintUsage[iSchema].omit = 1;
    pInfo->idxNum = 1;
  }
  pInfo->estimatedCost = 100.0;
  pInfo->estimatedRows = 10;
  return SQLITE_OK;
}

/*
** Appends a row for vector column iCol of pTab to pCur: of segment h, or of
** the delta when h is NULL. Returns SQLITE_OK or an error with *pzErr set.
*/
static int segmentsAdd(SegmentsCursor *pCur, ColvecVtab *pTab,
                       ColvecSegHandle *h, int iCol, const char *zStorage,
                       char **pzErr) {
  const ColvecConfig *pC = pTab->pConfig;
  SegmentsRow *p;
  int rc = SQLITE_OK;
  if (pCur->nRow == pCur->nAlloc) {
    int nNew = pCur->nAlloc ? 2 * pCur->nAlloc : 16;
    SegmentsRow *aNew = sqlite3_realloc64(pCur->aRow, sizeof(SegmentsRow) *
                                                          (sqlite3_uint64)nNew);
    if (aNew == NULL) return SQLITE_NOMEM;
    pCur->aRow = aNew;
    pCur->nAlloc = nNew;
  }
  p = &pCur->aRow[pCur->nRow];
  memset(p, 0, sizeof(*p));
  p->zStorage = zStorage;
  p->zQuant = "none";
  if (h) {
    p->iSegid = h->iSegid;
    p->nRow = h->nRow;
    p->nDel = h->nTomb;
    p->nByte = colvecSegfileFileSize(h->pSeg);
    rc = colvecIndexDescribe(h, pC, iCol, &p->info, pzErr);
    if (rc == SQLITE_OK && p->info.bCodes) {
      p->zQuant = colvecQuantName(pC->aCol[iCol].eQuant);
    }
  } else {
    sqlite3_int64 nDelta = 0;
    p->bDelta = 1;
    p->info.eSearch = COLVEC_RECALL_EXACT;
    rc = colvecStorageDeltaStat(pTab->pStorage, &nDelta, NULL);
    p->nRow = nDelta + (pTab->pending.nRow - pTab->nFlushed);
    if (rc != SQLITE_OK) {
      *pzErr = sqlite3_mprintf("colvec: colvec_segments: %s",
                               sqlite3_errmsg(pTab->db));
    }
  }
  if (iCol == pTab->iTraceCol) {
    int64_t iSegid = h ? h->iSegid : -1;
    int i;
    for (i = 0; i < pTab->nTrace; i++) {
      if (pTab->aTrace[i].iSegid == iSegid) {
        p->bTrace = 1;
        p->trace = pTab->aTrace[i];
      }
    }
  }
  if (rc == SQLITE_OK) {
    p->zCol = sqlite3_mprintf("%s", pC->aCol[iCol].zName);
    if (p->zCol == NULL) return SQLITE_NOMEM;
    pCur->nRow++;
  }
  return rc;
}

/*
** Fills pCur with the rows of table pTab: each segment's vector columns,
** then the delta's. Returns SQLITE_OK or an error with *pzErr set.
*/
static int segmentsFill(SegmentsCursor *pCur, ColvecVtab *pTab, char **pzErr) {
  const ColvecConfig *pC = pTab->pConfig;
  ColvecSegTable *pSegs = pTab->pSegs;
  const char *zStorage = "sidecar";
  const ColvecTableStore *pKeep = NULL;
  int i, iCol, rc;
  if (colvecVtabDamaged(pTab) != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("%s", pTab->base.zErrMsg);
    return COLVEC_CORRUPT_VTAB;
  }
  rc = colvecSegmentTableStore(pTab->pStorage, &pKeep);
  if (rc != SQLITE_OK) return rc;
  rc = colvecSegmentTableRefresh(pSegs, pzErr);
  if (pKeep->bCache) {
    zStorage = pKeep->zName;
  } else if (!pSegs->pStore->bDurable) {
    zStorage = "memory"; /* sidecar files of a database without a file */
  }
  for (i = 0; rc == SQLITE_OK && i < pSegs->nSeg; i++) {
    for (iCol = 0; rc == SQLITE_OK && iCol < pC->nCol; iCol++) {
      if (!pC->aCol[iCol].bVector) continue;
      rc = segmentsAdd(pCur, pTab, pSegs->apSeg[i], iCol, zStorage, pzErr);
    }
  }
  for (iCol = 0; rc == SQLITE_OK && iCol < pC->nCol; iCol++) {
    if (!pC->aCol[iCol].bVector) continue;
    rc = segmentsAdd(pCur, pTab, NULL, iCol, "delta", /* a label */ pzErr);
  }
  return rc;
}

/*
** xFilter: reads the table named by argv[0] (schema argv[1], or from a
** "schema.table" name) in one snapshot.
*/
static int segmentsFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                          const char *idxStr, int argc, sqlite3_value **argv) {
  SegmentsCursor *pCur = (SegmentsCursor *)pCursor;
  sqlite3_vtab *pVtab = pCursor->pVtab;
  SegmentsVtab *pV = (SegmentsVtab *)pVtab;
  const char *zArg = (const char *)sqlite3_value_text(argv[0]);
  const char *zDb =
      idxNum && argc > 1 ? (const char *)sqlite3_value_text(argv[1]) : "main";
  const char *zDot = zArg ? strchr(zArg, '.') : NULL;
  char *zErr = NULL, *zSchema = NULL;
  ColvecVtabHeld t;
  int rc;
  (void)idxStr;
  segmentsReset(pCur);
  if (zArg == NULL || zDb == NULL) {
    sqlite3_free(pVtab->zErrMsg);
    pVtab->zErrMsg =
        sqlite3_mprintf("colvec: colvec_segments: expects a table name");
    return SQLITE_ERROR;
  }
  rc = colvecVtabHold(pV->db, "colvec_segments", zDb, zArg, &t, &zErr);
  if (rc == SQLITE_ERROR && !idxNum && zDot && zDot > zArg) {
    /* no such table in main: "schema.table" */
    zSchema = sqlite3_mprintf("%.*s", (int)(zDot - zArg), zArg);
    if (zSchema == NULL) {
      rc = SQLITE_NOMEM;
    } else {
      sqlite3_free(zErr);
      zErr = NULL;
      rc = colvecVtabHold(pV->db, "colvec_segments", zSchema, zDot + 1, &t,
                          &zErr);
    }
  }
  if (rc == SQLITE_OK) {
    rc = segmentsFill(pCur, t.pTab, &zErr);
    colvecVtabRelease(&t);
  }
  if (rc != SQLITE_OK) {
    segmentsReset(pCur);
    if (zErr) {
      sqlite3_free(pVtab->zErrMsg);
      pVtab->zErrMsg = zErr;
      zErr = NULL;
    }
  }
  sqlite3_free(zErr);
  sqlite3_free(zSchema);
  return rc;
}

/* xNext. */
static int segmentsNext(sqlite3_vtab_cursor *pCursor) {
  ((SegmentsCursor *)pCursor)->iRow++;
  return SQLITE_OK;
}

/* xEof. */
static int segmentsEof(sqlite3_vtab_cursor *pCursor) {
  SegmentsCursor *pCur = (SegmentsCursor *)pCursor;
  return pCur->iRow >= pCur->nRow;
}

/* Sets the result to recall figure r, or NULL when not measured (r < 0). */
static void segmentsRecall(sqlite3_context *pCtx, const SegmentsRow *p,
                           double r) {
  if (p->info.bMeasured && r >= 0.0) sqlite3_result_double(pCtx, r);
}

/* xColumn of the last_* columns (iCol), from trace pT. */
static void segmentsTrace(sqlite3_context *pCtx, const ColvecKnnTrace *pT,
                          int iCol) {
  switch (iCol) {
  case SEGMENTS_LAST_SEARCH:
    sqlite3_result_text(pCtx, pT->stat.zWay ? pT->stat.zWay : "skipped", -1,
                        SQLITE_STATIC);
    break;
  case SEGMENTS_LAST_PASSING:
    sqlite3_result_int64(pCtx, pT->nPass);
    break;
  case SEGMENTS_LAST_VISITED:
    sqlite3_result_int64(pCtx, pT->stat.nVisit);
    break;
  case SEGMENTS_LAST_RESCORED:
    sqlite3_result_int64(pCtx, pT->stat.nRescore);
    break;
  case SEGMENTS_LAST_MICROS:
    sqlite3_result_double(pCtx, pT->rMicros);
    break;
  default:
    break;
  }
}

/* xColumn (the argument columns: NULL). */
static int segmentsColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *pCtx,
                          int iCol) {
  SegmentsCursor *pCur = (SegmentsCursor *)pCursor;
  const SegmentsRow *p = &pCur->aRow[pCur->iRow];
  static const char *const azSearch[] = {"graph on codes", "graph on vectors",
                                         "exact"};
  switch (iCol) {
  case SEGMENTS_SEGID:
    if (!p->bDelta) sqlite3_result_int64(pCtx, p->iSegid);
    break;
  case SEGMENTS_COLUMN:
    sqlite3_result_text(pCtx, p->zCol, -1, SQLITE_TRANSIENT);
    break;
  case SEGMENTS_ROWS:
    sqlite3_result_int64(pCtx, p->nRow);
    break;
  case SEGMENTS_DELETED:
    sqlite3_result_int64(pCtx, p->nDel);
    break;
  case SEGMENTS_BYTES:
    if (!p->bDelta) sqlite3_result_int64(pCtx, p->nByte);
    break;
  case SEGMENTS_STORAGE:
    sqlite3_result_text(pCtx, p->zStorage, -1, SQLITE_STATIC);
    break;
  case SEGMENTS_QUANT:
    sqlite3_result_text(pCtx, p->zQuant, -1, SQLITE_STATIC);
    break;
  case SEGMENTS_INDEXED:
    sqlite3_result_text(pCtx,
                        p->info.bGraph     ? "graph"
                        : p->info.bPending ? "pending"
                                           : "exact",
                        -1, SQLITE_STATIC);
    break;
  case SEGMENTS_SEARCH:
    sqlite3_result_text(pCtx,
                        p->info.bPending && p->info.bCodes
                            ? "scan codes"
                            : azSearch[p->info.eSearch],
                        -1, SQLITE_STATIC);
    break;
  case SEGMENTS_RECALL_CODES:
    segmentsRecall(pCtx, p, p->info.recall.rCodes);
    break;
  case SEGMENTS_RECALL_VECTORS:
    segmentsRecall(pCtx, p, p->info.recall.rVectors);
    break;
  case SEGMENTS_FALLBACK:
    sqlite3_result_int(pCtx, p->info.bFallback);
    break;
  default:
    if (p->bTrace) segmentsTrace(pCtx, &p->trace, iCol);
    break;
  }
  return SQLITE_OK;
}

/* xRowid: the row's position in the result. */
static int segmentsRowid(sqlite3_vtab_cursor *pCursor, sqlite3_int64 *piRow) {
  *piRow = ((SegmentsCursor *)pCursor)->iRow;
  return SQLITE_OK;
}

/* The eponymous-only module of colvec_segments. */
static sqlite3_module segmentsModule = {
    0,                   /* iVersion */
    0,                   /* xCreate: eponymous only */
    segmentsConnect,     /* xConnect */
    segmentsBestIndex,   /* xBestIndex */
    colvecTvfDisconnect, /* xDisconnect */
    0,                   /* xDestroy */
    segmentsOpen,        /* xOpen */
    segmentsClose,       /* xClose */
    segmentsFilter,      /* xFilter */
    segmentsNext,        /* xNext */
    segmentsEof,         /* xEof */
    segmentsColumn,      /* xColumn */
    segmentsRowid,       /* xRowid */
    0,                   /* xUpdate */
    0,                   /* xBegin */
    0,                   /* xSync */
    0,                   /* xCommit */
    0,                   /* xRollback */
    0,                   /* xFindFunction */
    0,                   /* xRename */
    0,                   /* xSavepoint */
    0,                   /* xRelease */
    0,                   /* xRollbackTo */
    0,                   /* xShadowName */
#if SQLITE_VERSION_NUMBER >= 3044000
    0 /* xIntegrity */
#endif
};

/* Registers colvec_segments; see colvecInt.h. */
int colvecSegmentsRegister(sqlite3 *db) {
  return sqlite3_create_module(db, "colvec_segments", &segmentsModule, NULL);
}
