/*
** colvec_write.c — the write path: where an inserted, updated or deleted
** row goes (pending rows in memory, the delta, tombstones over segments),
** flushing pending rows, compaction, and the integrity check.
**
** A rowid is live in at most one place: the pending batch, the delta, or
** one segment (where it is not tombstoned). Inserts go to the pending
** batch, so a bulk load in one transaction is written straight to a
** segment at commit; every other change first flushes the pending rows.
*/
#include "colvecInt.h"

#include <string.h>

/* Context of writeBindRow: a row of a batch or of a segment. */
typedef struct WriteRow WriteRow;
struct WriteRow {
  const ColvecConfig *pConfig; /* table definition */
  ColvecSource src;            /* the batch or the segment */
  int64_t iRow;                /* row */
  char **pzErr;                /* error message out */
};

/* colvecStorageInsertWith callback: binds column iCol of the row. */
static int writeBindRow(void *pCtx, int iCol, sqlite3_stmt *pStmt, int iBind) {
  WriteRow *p = (WriteRow *)pCtx;
  return colvecLayoutBind(p->pConfig, &p->src, p->iRow, iCol, pStmt, iBind,
                          p->pzErr);
}

/*
** Bytes of pending rows written out at once (colvecWriteSetPendingBytes).
*/
static int64_t writePendingMax = COLVEC_PENDING_MAX_BYTES;

/* Sets the bytes of pending rows written out at once; see colvecInt.h. */
void colvecWriteSetPendingBytes(int64_t n) {
  writePendingMax = n > 0 ? n : COLVEC_PENDING_MAX_BYTES;
}

/*
** Writes rows iFirst.. of pBatch as a new segment (after refreshing the
** segment list). Its graph is deferred (bMayDefer: not for optimize) when
** the segments whose graph is deferred would then hold at most defer_rows
** rows: the commit returns without the build, and a search scans their
** codes until the 'index' command, optimize or a merge builds it. In a
** bulk load (pTab->iBulkSeg) it is always deferred: xSync builds the graphs
** of all the load's segments at once. Returns SQLITE_OK or an error with
** *pzErr set.
*/
static int writeBatchSegment(ColvecVtab *pTab, ColvecBatch *pBatch,
                             int64_t iFirst, int bMayDefer, char **pzErr) {
  ColvecSource src;
  int rc;
  src.pBatch = pBatch;
  src.iFirst = iFirst;
  src.pSeg = NULL;
  rc = colvecSegmentTableRefresh(pTab->pSegs, pzErr);
  if (rc == SQLITE_OK) {
    int64_t nDefer = pTab->pConfig->nDeferRows;
    int bDefer =
        bMayDefer && (pTab->iBulkSeg > 0 ||
                      (nDefer > 0 && colvecCompactDeferredRows(pTab->pSegs) +
                                             (pBatch->nRow - iFirst) <=
                                         nDefer));
    rc =
        colvecCompactWrite(pTab->pSegs, pTab->pStorage, &src, 1, bDefer, pzErr);
  }
  return rc;
}

static int writeFlush(ColvecVtab *pTab, int bMayDefer, char **pzErr);

/*
** Writes the pending rows; see colvecInt.h.
**
** Rows stay in memory after they are written while a savepoint is open: a
** ROLLBACK TO a savepoint opened before the write undoes the write in the
** shadow tables, and the rows, inserted before that savepoint, become
** pending again (see vtabRollbackToMethod).
**
** The shadow-table inserts leave sqlite3_last_insert_rowid() as it was: a
** flush runs inside a SELECT, UPDATE or DELETE of the table too.
*/
int colvecWriteFlush(ColvecVtab *pTab, char **pzErr) {
  return writeFlush(pTab, 1, pzErr);
}

/*
** Records that every pending row is written, and drops them unless an open
** savepoint may make them pending again.
*/
static void writeFlushed(ColvecVtab *pTab) {
  pTab->nFlushed = pTab->pending.nRow;
  if (pTab->nMark == 0) {
    colvecBatchTruncate(&pTab->pending, 0);
    pTab->nFlushed = 0;
  }
}

/*
** The body of colvecWriteFlush; bMayDefer 0 builds the graph of a segment
** it writes (optimize, which would rewrite a deferred one at once). In a
** bulk load the segment is not merged: xSync indexes and merges.
*/
static int writeFlush(ColvecVtab *pTab, int bMayDefer, char **pzErr) {
  ColvecBatch *pB = &pTab->pending;
  int64_t nNew = pB->nRow - pTab->nFlushed;
  sqlite3_int64 iLastRowid;
  int rc = SQLITE_OK;
  if (nNew == 0) return SQLITE_OK;
  iLastRowid = sqlite3_last_insert_rowid(pTab->db);
  if (nNew >= pTab->pConfig->nDeltaRows) {
    rc = writeBatchSegment(pTab, pB, pTab->nFlushed, bMayDefer, pzErr);
    if (rc == SQLITE_OK && pTab->iBulkSeg == 0) {
      rc = colvecCompactMerge(pTab->pSegs, pTab->pStorage, 0, pzErr);
    }
  } else {
    WriteRow row;
    memset(&row, 0, sizeof(row));
    row.pConfig = pTab->pConfig;
    row.src.pBatch = pB;
    row.pzErr = pzErr;
    for (row.iRow = pTab->nFlushed; rc == SQLITE_OK && row.iRow < pB->nRow;
         row.iRow++) {
      rc = colvecStorageInsertWith(pTab->pStorage, pB->aRowid[row.iRow],
                                   writeBindRow, &row);
    }
    if (rc != SQLITE_OK && *pzErr == NULL) {
      *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(pTab->db));
    }
  }
  if (rc == SQLITE_OK) writeFlushed(pTab);
  sqlite3_set_last_insert_rowid(pTab->db, iLastRowid);
  return rc;
}

/*
** The end of a bulk load (pTab->iBulkSeg), at xSync: the segments whose graph
** waits, those the load wrote (a read in its transaction may have written
** some too small for a graph) and the rows still pending are written as
** one segment (or as few as the segment cap allows) with its graph, which
** one build makes for every row at once, instead of a graph per segment
** written along the way and again per merge. When they hold no more than
** defer_rows rows, or bDefer is set (the 'index' command, which builds
** the graph itself, in steps if asked), the segment waits for its graph,
** as the same rows committed at once would. xSync calls it through
** colvecWriteCompact, and keeps sqlite3_last_insert_rowid(). Ends the
** bulk load. Returns SQLITE_OK or an error with *pzErr set.
*/
static int writeBulkEnd(ColvecVtab *pTab, int bDefer, char **pzErr) {
  ColvecSegTable *pSegs = pTab->pSegs;
  ColvecBatch *pB = &pTab->pending;
  int64_t nNew = pB->nRow - pTab->nFlushed;
  ColvecSource *aSrc;
  int rc = colvecSegmentTableRefresh(pSegs, pzErr);
  int64_t nWait = nNew; /* rows of the segment written */
  int nSrc = 0, i;
  if (rc != SQLITE_OK) return rc;
  aSrc = sqlite3_malloc64(sizeof(ColvecSource) *
                          (sqlite3_uint64)(pSegs->nSeg + 1));
  if (aSrc == NULL) return SQLITE_NOMEM;
  for (i = 0; i < pSegs->nSeg; i++) {
    if (!colvecIndexPending(pSegs->apSeg[i], pTab->pConfig) &&
        pSegs->apSeg[i]->iSegid < pTab->iBulkSeg) {
      continue;
    }
    aSrc[nSrc].pBatch = NULL;
    aSrc[nSrc].iFirst = 0;
    aSrc[nSrc++].pSeg = pSegs->apSeg[i];
    nWait += pSegs->apSeg[i]->nRow - pSegs->apSeg[i]->nTomb;
  }
  if (nNew > 0) {
    aSrc[nSrc].pBatch = pB;
    aSrc[nSrc].iFirst = pTab->nFlushed;
    aSrc[nSrc++].pSeg = NULL;
  }
  if (nSrc > 0) {
    rc = colvecCompactWrite(
        pSegs, pTab->pStorage, aSrc, nSrc,
        bDefer || nWait <= (int64_t)pTab->pConfig->nDeferRows, pzErr);
  }
  sqlite3_free(aSrc);
  if (rc == SQLITE_OK) {
    writeFlushed(pTab);
    /* a segment written later follows defer_rows again */
    pTab->iBulkSeg = 0;
  }
  return rc;
}

/*
** Flushes and compacts; see colvecInt.h. Ends by deleting files nothing
** needs, so an orphan left by a rolled-back or crashed writer is gone after
** the next committed write.
*/
int colvecWriteCompact(ColvecVtab *pTab, int bAll, char **pzErr) {
  sqlite3_int64 nDelta = 0;
  int bMerge = bAll || pTab->iBulkSeg > 0; /* its flushes did not merge */
  int rc = pTab->iBulkSeg > 0 && !bAll ? writeBulkEnd(pTab, 0, pzErr)
                                       : writeFlush(pTab, !bAll, pzErr);
  if (rc == SQLITE_OK)
    rc = colvecStorageDeltaStat(pTab->pStorage, &nDelta, NULL);
  if (rc == SQLITE_OK &&
      ((bAll && nDelta > 0) || nDelta > pTab->pConfig->nDeltaRows)) {
    ColvecBatch batch;
    colvecBatchInit(&batch, pTab->pConfig);
    rc = colvecStorageLoadDelta(pTab->pStorage, &batch, pzErr);
    if (rc == SQLITE_OK) rc = writeBatchSegment(pTab, &batch, 0, !bAll, pzErr);
    if (rc == SQLITE_OK) {
      rc = colvecStorageDeltaClear(pTab->pStorage, pzErr);
    }
    colvecBatchFree(&batch);
    bMerge = 1;
  }
  if (rc == SQLITE_OK && bMerge) {
    rc = colvecCompactMerge(pTab->pSegs, pTab->pStorage, bAll, pzErr);
  }
  if (rc == SQLITE_OK && bAll) pTab->iBulkSeg = 0; /* every row has its graph */
  if (rc == SQLITE_OK) {
    /* without bAll this is xSync: the files the transaction made and
    ** dropped (a bulk load's) go now */
    rc = colvecCompactCleanup(pTab->pSegs, pTab->pStorage, !bAll, pzErr);
  }
  return rc;
}

/* The 'index' command; see colvecInt.h. */
int colvecWriteIndex(ColvecVtab *pTab, sqlite3_int64 nBudget, char **pzErr) {
  /* in a bulk load, its segments first become one, whose graph this
  ** command builds and the commit then keeps (writeBulkEnd would build
  ** another at the commit) */
  int rc = pTab->iBulkSeg > 0 ? writeBulkEnd(pTab, 1, pzErr)
                              : colvecWriteFlush(pTab, pzErr);
  if (rc == SQLITE_OK) {
    rc = colvecCompactIndex(pTab->pSegs, pTab->pStorage, nBudget,
                            &pTab->pIndexJob, pzErr);
  }
  if (rc == SQLITE_OK) {
    rc = colvecCompactMerge(pTab->pSegs, pTab->pStorage, 0, pzErr);
  }
  if (rc == SQLITE_OK) {
    rc = colvecCompactCleanup(pTab->pSegs, pTab->pStorage, 0, pzErr);
  }
  return rc;
}

/*
** Returns 1 when rowid iRowid is live anywhere (pending, delta, segment),
** 0 when not, or a negative error code.
*/
static int writeRowExists(ColvecVtab *pTab, sqlite3_int64 iRowid,
                          char **pzErr) {
  int iSeg, rc;
  int64_t iRow;
  if (colvecBatchFind(&pTab->pending, iRowid) >= pTab->nFlushed) return 1;
  rc = colvecStorageDeltaHas(pTab->pStorage, iRowid);
  if (rc != 0) return rc;
  rc = colvecSegmentTableRefresh(pTab->pSegs, pzErr);
  if (rc != SQLITE_OK) return -rc;
  return colvecSegmentLocate(pTab->pSegs, iRowid, &iSeg, &iRow);
}

/*
** Records that rowid iRowid of segment h is dead (a tombstone) and tells
** the segment list to reload its tombstones. Returns SQLITE_OK or an error
** with *pzErr set.
*/
static int writeTombstone(ColvecVtab *pTab, const ColvecSegHandle *h,
                          sqlite3_int64 iRowid, char **pzErr) {
  int rc = colvecStorageTombAdd(pTab->pStorage, h->iSegid, iRowid, pzErr);
  colvecSegmentTableChanged(pTab->pSegs);
  return rc;
}

/* Deletes a row wherever it lives; see colvecInt.h. */
int colvecWriteDelete(ColvecVtab *pTab, sqlite3_int64 iRowid, char **pzErr) {
  int iSeg, rc, bDelta;
  int64_t iRow;
  rc = colvecWriteFlush(pTab, pzErr);
  if (rc != SQLITE_OK) return rc;
  bDelta = colvecStorageDeltaHas(pTab->pStorage, iRowid);
  if (bDelta < 0) return -bDelta;
  /* the largest row going: the next automatic rowid is computed again */
  if (pTab->bNoRow || iRowid >= pTab->iMaxRowid) pTab->bMaxKnown = 0;
  if (bDelta) return colvecStorageDelete(pTab->pStorage, iRowid);
  rc = colvecSegmentTableRefresh(pTab->pSegs, pzErr);
  if (rc == SQLITE_OK &&
      colvecSegmentLocate(pTab->pSegs, iRowid, &iSeg, &iRow)) {
    rc = writeTombstone(pTab, pTab->pSegs->apSeg[iSeg], iRowid, pzErr);
  }
  return rc;
}

/*
** Makes pTab->iMaxRowid the largest live rowid (unwritten pending rows, the
** delta, segment rows not tombstoned), or sets bNoRow when there is none.
** An INSERT without a rowid takes iMaxRowid + 1 (1 with no row), as SQLite
** does for a rowid table, and an INSERT with a larger rowid (every
** sequential bulk load) needs no lookup to prove it is new.
**
** The value is cached for the transaction (bMaxKnown) and kept up to date
** by inserts; whatever can lower it or change it otherwise forgets it:
** deleting the largest row (DELETE, REPLACE), any UPDATE (it may move a
** rowid), ROLLBACK TO, and the end of a transaction (another connection
** may commit before the next one). Flushes, compaction and merges move
** rows without changing the set of live rowids.
*/
static int writeMaxRowid(ColvecVtab *pTab, char **pzErr) {
  sqlite3_int64 iMax, iDelta, nDelta = 0;
  int i, rc, bAny;
  if (pTab->bMaxKnown) return SQLITE_OK;
  /* rows 0..nFlushed-1 are written (and may since have been deleted) */
  bAny = pTab->pending.nRow > pTab->nFlushed;
  iMax = colvecBatchMaxRowid(&pTab->pending, pTab->nFlushed);
  rc = colvecStorageDeltaStat(pTab->pStorage, &nDelta, &iDelta);
  if (rc == SQLITE_OK) rc = colvecSegmentTableRefresh(pTab->pSegs, pzErr);
  if (rc != SQLITE_OK) return rc;
  if (nDelta > 0) {
    bAny = 1;
    if (iDelta > iMax) iMax = iDelta;
  }
  for (i = 0; i < pTab->pSegs->nSeg; i++) {
    ColvecSegHandle *h = pTab->pSegs->apSeg[i];
    int64_t j = h->nRow - 1;
    /* the largest rowid of the segment that is not tombstoned, where it
    ** can matter */
    while (j >= 0 && (!bAny || h->aRowid[j] > iMax) &&
           colvecSegmentIsDead(h, h->aRowid[j])) {
      j--;
    }
    if (j >= 0 && (!bAny || h->aRowid[j] > iMax)) {
      iMax = h->aRowid[j];
      bAny = 1;
    }
  }
  pTab->iMaxRowid = iMax;
  pTab->bNoRow = !bAny;
  pTab->bMaxKnown = 1;
  return SQLITE_OK;
}

/* Inserts a row; see colvecInt.h. */
int colvecWriteInsert(ColvecVtab *pTab, sqlite3_value *pRowid,
                      ColvecConflict eConflict, sqlite3_int64 *piRowid,
                      char **pzErr) {
  sqlite3_int64 iRowid;
  int rc = writeMaxRowid(pTab, pzErr);
  if (rc != SQLITE_OK) return rc;
  if (pRowid) {
    int bExists = 0;
    iRowid = sqlite3_value_int64(pRowid);
    if (!pTab->bNoRow && iRowid <= pTab->iMaxRowid) {
      bExists = writeRowExists(pTab, iRowid, pzErr);
    }
    if (bExists < 0) return -bExists;
    if (bExists) {
      /* IGNORE leaves *piRowid (last_insert_rowid()) as it was */
      if (eConflict == COLVEC_CONFLICT_IGNORE) return SQLITE_OK;
      if (eConflict == COLVEC_CONFLICT_ABORT) return SQLITE_CONSTRAINT;
      rc = colvecWriteDelete(pTab, iRowid, pzErr);
    }
  } else if (pTab->bNoRow) {
    iRowid = 1;
  } else if (pTab->iMaxRowid == INT64_MAX) {
    /* SQLite would try random rowids; colvec stays deterministic */
    *pzErr = sqlite3_mprintf("colvec: no automatic rowid after %lld: insert "
                             "with an explicit rowid",
                             (long long)pTab->iMaxRowid);
    return SQLITE_FULL;
  } else {
    iRowid = pTab->iMaxRowid + 1;
  }
  if (rc == SQLITE_OK)
    rc = colvecBatchAppend(&pTab->pending, iRowid, pTab->aCell);
  if (rc == SQLITE_OK) {
    if (pTab->bNoRow || iRowid > pTab->iMaxRowid) pTab->iMaxRowid = iRowid;
    pTab->bNoRow = 0;
    *piRowid = iRowid;
    /* rows written already may stay in memory while a savepoint is open:
    ** only the unwritten ones count towards the limit */
    int64_t nUnwritten =
        pTab->pending.nByte -
        (pTab->pending.nRow > 0 ? (int64_t)((double)pTab->pending.nByte *
                                            pTab->nFlushed / pTab->pending.nRow)
                                : 0);
    if (nUnwritten > writePendingMax) {
      if (pTab->iBulkSeg == 0) {
        /* more rows may follow: no graph until xSync (a next segid is at
        ** least 1: colvecStorageCounters checks it) */
        sqlite3_int64 iNext = 0;
        rc = colvecStorageCounters(pTab->pStorage, &iNext, NULL, pzErr);
        if (rc == SQLITE_OK) pTab->iBulkSeg = iNext;
      }
      if (rc == SQLITE_OK) rc = colvecWriteFlush(pTab, pzErr);
    }
  }
  return rc;
}

/* Updates a row; see colvecInt.h. */
int colvecWriteUpdate(ColvecVtab *pTab, sqlite3_int64 iOld, sqlite3_int64 iNew,
                      ColvecConflict eConflict, char **pzErr) {
  int iSeg, rc, bDelta;
  int64_t iRow;
  pTab->bMaxKnown = 0; /* a rowid change may raise the maximum */
  rc = colvecWriteFlush(pTab, pzErr);
  if (rc != SQLITE_OK) return rc;
  bDelta = colvecStorageDeltaHas(pTab->pStorage, iOld);
  if (bDelta < 0) return -bDelta;
  rc = colvecSegmentTableRefresh(pTab->pSegs, pzErr);
  if (rc != SQLITE_OK) return rc;
  if (!bDelta) {
    /* the row lives in a segment: move it into the delta first */
    WriteRow ctx;
    if (!colvecSegmentLocate(pTab->pSegs, iOld, &iSeg, &iRow)) return SQLITE_OK;
    memset(&ctx, 0, sizeof(ctx));
    ctx.pConfig = pTab->pConfig;
    ctx.src.pSeg = pTab->pSegs->apSeg[iSeg];
    ctx.iRow = iRow;
    ctx.pzErr = pzErr;
    rc = colvecStorageInsertWith(pTab->pStorage, iOld, writeBindRow, &ctx);
    if (rc == SQLITE_OK) rc = writeTombstone(pTab, ctx.src.pSeg, iOld, pzErr);
    if (rc == SQLITE_OK) rc = colvecSegmentTableRefresh(pTab->pSegs, pzErr);
  }
  if (rc == SQLITE_OK && iNew != iOld &&
      colvecSegmentLocate(pTab->pSegs, iNew, &iSeg, &iRow)) {
    /* the new rowid is taken by a segment row */
    if (eConflict == COLVEC_CONFLICT_IGNORE) return SQLITE_OK;
    if (eConflict == COLVEC_CONFLICT_ABORT) return SQLITE_CONSTRAINT;
    rc = colvecWriteDelete(pTab, iNew, pzErr);
  }
  if (rc == SQLITE_OK) {
    rc =
        colvecStorageUpdate(pTab->pStorage, iOld, iNew, pTab->aCell, eConflict);
  }
  return rc;
}

/* xLive of colvecStorageIdCheck: writeRowExists for the table pCtx. */
static int writeIdLive(void *pCtx, sqlite3_int64 iRowid) {
  char *zErr = NULL;
  int bLive = writeRowExists((ColvecVtab *)pCtx, iRowid, &zErr);
  sqlite3_free(zErr); /* the segments were refreshed without error before */
  return bLive;
}

/*
** Integrity check of a text primary key's T_ids against the live rows
** (pending, delta, segments less their tombstones, which the caller has
** checked name rows of their segments and no rowid twice). Returns
** SQLITE_OK or an error with *pzErr set.
*/
static int writeCheckIds(ColvecVtab *pTab, char **pzErr) {
  ColvecSegTable *pSegs = pTab->pSegs;
  sqlite3_int64 nLive = pTab->pending.nRow - pTab->nFlushed, nDelta = 0;
  int i, rc = colvecStorageDeltaStat(pTab->pStorage, &nDelta, NULL);
  nLive += nDelta;
  for (i = 0; i < pSegs->nSeg; i++) {
    nLive += pSegs->apSeg[i]->nRow - pSegs->apSeg[i]->nTomb;
  }
  if (rc == SQLITE_OK) {
    rc = colvecStorageIdCheck(pTab->pStorage, nLive, writeIdLive, pTab, pzErr);
  } else {
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(pTab->db));
  }
  return rc;
}

/*
** Validates the recall records of every vector column of segment h (a
** damaged one is COLVEC_CORRUPT_VTAB) and, when pzNote is not NULL, appends
** to *pzNote a line for each column whose measured recall made it leave
** out its codes or its graph. Returns SQLITE_OK or an error with *pzErr.
*/
static int writeCheckRecall(ColvecVtab *pTab, ColvecSegHandle *h, char **pzNote,
                            char **pzErr) {
  const ColvecConfig *pC = pTab->pConfig;
  int iCol, rc = SQLITE_OK;
  for (iCol = 0; rc == SQLITE_OK && iCol < pC->nCol; iCol++) {
    const ColvecColumn *pCol = &pC->aCol[iCol];
    ColvecIndexInfo info;
    char *zErr = NULL;
    if (!pCol->bVector) continue;
    rc = colvecIndexDescribe(h, pC, iCol, &info, &zErr);
    if (rc != SQLITE_OK) {
      *pzErr = zErr ? sqlite3_mprintf("colvec: integrity-check: table %s: %s",
                                      pC->zName, zErr + 8 /* "colvec: " */)
                    : NULL;
      sqlite3_free(zErr);
      if (*pzErr == NULL) rc = SQLITE_NOMEM;
    } else if (pzNote && info.bFallback) {
      int bCodes = info.recall.rCodes >= 0.0; /* the codes were measured */
      char *z = sqlite3_mprintf(
          "%z%ssegment %lld column %s: measured recall@%d %.2f on its %s%s "
          "is below %.2f: searched %s",
          *pzNote, *pzNote ? "\n" : "", (long long)h->iSegid, pCol->zName,
          info.recall.k, bCodes ? info.recall.rCodes : info.recall.rVectors,
          bCodes ? colvecQuantName(pCol->eQuant) : "float32",
          bCodes ? " codes" : " vectors", COLVEC_RECALL_FLOOR,
          info.eSearch == COLVEC_RECALL_VECTORS
              ? "through its graph on the float32 vectors"
              : "exactly, without its graph");
      if (z == NULL) rc = SQLITE_NOMEM;
      *pzNote = z;
    }
  }
  return rc;
}

/* Integrity check; see colvecInt.h. */
int colvecWriteCheck(ColvecVtab *pTab, int bFlush, char **pzNote,
                     char **pzErr) {
  const ColvecConfig *pC = pTab->pConfig;
  ColvecSegTable *pSegs = pTab->pSegs;
  int rc = colvecStorageShadowCheck(pTab->db, pC, pzErr);
  const ColvecTableStore *pKeep = NULL;
  int i, nRepair = 0;
  ColvecTick tick;
  if (rc == SQLITE_OK && pTab->zDamage) {
    *pzErr = sqlite3_mprintf("colvec: integrity-check: %s",
                             pTab->zDamage + 8 /* after "colvec: " */);
    return COLVEC_CORRUPT_VTAB;
  }
  colvecTickInit(&tick, pTab->db);
  if (rc == SQLITE_OK && bFlush) rc = colvecWriteFlush(pTab, pzErr);
  if (rc == SQLITE_OK) rc = colvecStorageCheck(pTab->pStorage, pzErr);
  if (rc == SQLITE_OK) rc = colvecSegmentTableStore(pTab->pStorage, &pKeep);
  /* the manifest afresh: this connection's own writes to the shadow
  ** tables leave PRAGMA data_version alone */
  colvecSegmentTableChanged(pSegs);
  if (rc == SQLITE_OK) rc = colvecSegmentTableRefresh(pSegs, pzErr);
  for (i = 0; rc == SQLITE_OK && i < pSegs->nSeg; i++) {
    ColvecSegHandle *h = pSegs->apSeg[i];
    ColvecErr err;
    int64_t j;
    err.zMsg[0] = 0;
    /* what new connections will read, not only what this one maps: the
    ** files on disk, or the kept bytes a damaged file is rebuilt from */
    rc = pKeep->xCheck(pSegs, h, &tick.hook, pzErr);
    if (rc != SQLITE_OK) break;
    rc = colvecSegfileVerifyWith(h->pSeg, &tick.hook, &err);
    if (rc == COLVEC_INTERRUPT) {
      rc = colvecTickError(pzErr);
      break;
    }
    if (rc != COLVEC_OK && pKeep->bCache && nRepair <= pSegs->nSeg) {
      /* a damaged cache file of good bytes: rebuilt, and the check starts
      ** over on the new set */
      nRepair++;
      rc = colvecSegmentRepair(pSegs, h->iSegid, pzErr);
      if (rc == SQLITE_OK) rc = colvecSegmentTableRefresh(pSegs, pzErr);
      i = -1;
      continue;
    }
    if (rc != COLVEC_OK) {
      char *zWhy = colvecFolderUserMessage(err.zMsg); /* no internal path */
      *pzErr = zWhy ? sqlite3_mprintf("colvec: integrity-check: table %s: %s",
                                      pC->zName, zWhy)
                    : NULL;
      sqlite3_free(zWhy);
      rc = *pzErr ? COLVEC_CORRUPT_VTAB : SQLITE_NOMEM;
      break;
    }
    rc = writeCheckRecall(pTab, h, pzNote, pzErr);
    for (j = 0; rc == SQLITE_OK && j < h->nTomb; j++) {
      int64_t v = h->aTomb[j];
      if (colvecSegmentSearch(h->aRowid, h->nRow, v) < 0) {
        *pzErr = sqlite3_mprintf(
            "colvec: integrity-check: table %s: tombstone for rowid %lld names "
            "segment %lld, which does not hold it",
            pC->zName, (long long)v, (long long)h->iSegid);
        rc = COLVEC_CORRUPT_VTAB;
      }
    }
    /* a live rowid must not also be live in a later segment or the delta */
    for (j = 0; rc == SQLITE_OK && j < h->nRow; j++) {
      int64_t iRowid = h->aRowid[j], iRow;
      int iSeg, bDelta;
      if ((j & 1023) == 0 && colvecTickStop(&tick)) {
        rc = colvecTickError(pzErr);
        break;
      }
      if (colvecSegmentIsDead(h, iRowid)) continue;
      bDelta = colvecStorageDeltaHas(pTab->pStorage, iRowid);
      if (bDelta < 0) {
        rc = -bDelta;
      } else if (bDelta || (colvecSegmentLocate(pSegs, iRowid, &iSeg, &iRow) &&
                            iSeg != i)) {
        *pzErr = sqlite3_mprintf(
            "colvec: integrity-check: table %s: rowid %lld is stored twice",
            pC->zName, (long long)iRowid);
        rc = COLVEC_CORRUPT_VTAB;
      }
    }
  }
  if (rc == SQLITE_OK && pC->bPkText) rc = writeCheckIds(pTab, pzErr);
  if (rc == SQLITE_OK) {
    /* an embedded table's folder is a cache: a file no row names (one an
    ** old WAL reader rebuilt for its snapshot) is stale, not damage; the
    ** next cleanup deletes it. Only its counters are checked. */
    rc = colvecCompactCheckFiles(pSegs, pTab->pStorage, pKeep->bCache, pzErr);
  }
  return rc;
}
