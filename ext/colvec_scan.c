/*
** colvec_scan.c — evaluating a plan's filters over one segment, one column
** at a time, into a bitmap of passing rows (the filter phase: no other
** column is read). The values come from xFilter's argv; they are given the
** column's affinity first, as SQLite does when it compares, except the
** patterns of LIKE and GLOB (functions, which apply none). LIKE and GLOB
** are decided by SQLite itself, so that a KNN returns the rows its WHERE
** clause accepts, no more and no fewer.
*/
#include "colvecInt.h"

#include <string.h>

/*
** SQL deciding one LIKE or GLOB as the query's WHERE clause does, indexed
** by COLVEC_MATCH_GLOB: ?1 is the pattern, ?2 the column value. SQLite
** renders numbers as text its own way (which changed between versions),
** follows PRAGMA case_sensitive_like and calls an application's like() or
** glob(); IS TRUE takes the truth value a WHERE clause takes of the result.
*/
static const char *const azScanMatchSql[] = {"SELECT (?2 LIKE ?1) IS TRUE",
                                             "SELECT (?2 GLOB ?1) IS TRUE"};

/* Most entries of scanMatch()'s cache of verdicts (a power of two); a
** segment of fewer rows gets the power of two at or above its row count. */
#define SCAN_MATCH_CACHE 4096

/* One remembered verdict: a row value (bytes point into the segment, which
** stays mapped while the filter runs) and whether it matched. */
typedef struct ScanMatchEntry ScanMatchEntry;
struct ScanMatchEntry {
  ColvecScalar val; /* the value (eType 0: empty entry) */
  int bMatch;       /* SQLite's verdict for it */
};

/*
** Rows from which a segment's LIKE or GLOB looks for a shortcut: when the
** connection's like() or glob() is SQLite's own, text and integer values
** are matched with sqlite3_strlike() / sqlite3_strglob() directly (the
** same matcher, without a statement per value). Finding out costs a scan
** of PRAGMA function_list, worth it only over many rows.
*/
#define SCAN_MATCH_FAST_ROWS 4096

/* The state of scanMatch() over one segment column. */
typedef struct ScanMatch ScanMatch;
struct ScanMatch {
  sqlite3_stmt *pStmt;    /* an azScanMatchSql statement, the pattern bound */
  int rc;                 /* the error of a failed call, else SQLITE_OK */
  ScanMatchEntry *aCache; /* remembered verdicts, by value hash */
  unsigned mCache;        /* entries in aCache minus 1 */
  int bGlob;              /* GLOB, else LIKE */
  char *zFast;            /* the pattern as text when the shortcut applies */
  char *zText;            /* shortcut: a text value, NUL-terminated */
  int nText;              /* bytes allocated at zText */
};

/*
** Returns 1 when LIKE (bGlob=0) or GLOB (bGlob=1) on connection db is
** SQLite's own function, as sqlite3_strlike() / sqlite3_strglob() match:
** PRAGMA function_list shows no function of that name defined by the
** application (PRAGMA case_sensitive_like defines one too), and LIKE is
** not case-sensitive by compile option. 0 otherwise, or when it cannot
** tell (the pragma left out, out of memory). The answer is kept in the
** query's memo *pMemo: the functions cannot change while a statement runs.
*/
static int scanMatchBuiltin(sqlite3 *db, int bGlob, ColvecScanMemo *pMemo) {
  sqlite3_stmt *pStmt = NULL;
  unsigned mBit = 1u << bGlob;
  int bBuiltin = 1, rc;
  if (pMemo->mKnown & mBit) return (pMemo->mBuiltin & mBit) != 0;
  pMemo->mKnown |= mBit;
  if (!bGlob && sqlite3_compileoption_used("CASE_SENSITIVE_LIKE")) return 0;
  rc = sqlite3_prepare_v2(db,
                          "SELECT name FROM pragma_function_list "
                          "WHERE builtin = 0",
                          -1, &pStmt, NULL);
  while (rc == SQLITE_OK && bBuiltin && sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *zName = (const char *)sqlite3_column_text(pStmt, 0);
    if (zName && sqlite3_stricmp(zName, bGlob ? "glob" : "like") == 0) {
      bBuiltin = 0;
    }
  }
  if (sqlite3_finalize(pStmt) != SQLITE_OK || rc != SQLITE_OK) bBuiltin = 0;
  if (bBuiltin) pMemo->mBuiltin |= mBit;
  return bBuiltin;
}

/*
** The shortcut of scanMatch(): matches an INTEGER (rendered as SQLite
** renders it) or TEXT value *pRow against p->zFast. Returns 1, 0, or -1
** with p->rc set when out of memory.
*/
static int scanMatchFast(ScanMatch *p, const ColvecScalar *pRow) {
  char zNum[24];
  const char *zText = zNum;
  if (pRow->eType == COLVEC_TYPE_INTEGER) {
    sqlite3_snprintf(sizeof(zNum), zNum, "%lld", (long long)pRow->i);
  } else {
    if (pRow->n >= p->nText) {
      int nNew = pRow->n + 64;
      char *zNew = sqlite3_realloc64(p->zText, (sqlite3_uint64)nNew);
      if (zNew == NULL) {
        p->rc = SQLITE_NOMEM;
        return -1;
      }
      p->zText = zNew;
      p->nText = nNew;
    }
    if (pRow->n > 0) memcpy(p->zText, pRow->z, (size_t)pRow->n);
    p->zText[pRow->n] = 0; /* SQLite's matcher stops at a NUL too */
    zText = p->zText;
  }
  return (p->bGlob ? sqlite3_strglob(p->zFast, zText)
                   : sqlite3_strlike(p->zFast, zText, 0)) == 0;
}

/*
** Returns the cache slot of value *p: a hash of its type and its bytes
** (the bit pattern of a number, so that -0.0 and 0.0 stay apart).
*/
static unsigned scanMatchSlot(const ColvecScalar *p, unsigned mCache) {
  const uint8_t *z;
  int n, k;
  uint64_t h = 14695981039346656037ULL ^ (uint64_t)p->eType;
  if (p->eType == COLVEC_TYPE_INTEGER) {
    z = (const uint8_t *)&p->i;
    n = (int)sizeof(p->i);
  } else if (p->eType == COLVEC_TYPE_FLOAT) {
    z = (const uint8_t *)&p->r;
    n = (int)sizeof(p->r);
  } else {
    z = p->z;
    n = p->n;
  }
  for (k = 0; k < n; k++)
    h = (h ^ z[k]) * 1099511628211ULL;
  return (unsigned)(h ^ (h >> 29)) & mCache;
}

/* Returns non-zero when values *a and *b are the same (type and bits). */
static int scanMatchSame(const ColvecScalar *a, const ColvecScalar *b) {
  if (a->eType != b->eType) return 0;
  switch (a->eType) {
  case COLVEC_TYPE_INTEGER:
    return a->i == b->i;
  case COLVEC_TYPE_FLOAT:
    return memcmp(&a->r, &b->r, sizeof(a->r)) == 0;
  case COLVEC_TYPE_TEXT:
  case COLVEC_TYPE_BLOB:
    return a->n == b->n && (a->n == 0 || memcmp(a->z, b->z, a->n) == 0);
  default:
    return 1;
  }
}

/*
** ColvecMatchFunc over SQLite: binds the row's value (as the column gives
** it to SQLite: integer, real, text, blob or NULL) and steps the statement,
** whose pattern is already bound (pPattern is not read). A value seen
** before in this column takes the verdict remembered for it (like() and
** glob() are taken to be deterministic, as SQLite's are). Returns 1 or 0,
** or -1 with p->rc set when SQLite fails (out of memory, an interrupt, an
** error raised by an application's like()).
*/
static int scanMatch(void *pCtx, int mFlags, const ColvecScalar *pPattern,
                     const ColvecScalar *pRow) {
  ScanMatch *p = (ScanMatch *)pCtx;
  sqlite3_stmt *pStmt = p->pStmt;
  ScanMatchEntry *pEntry = &p->aCache[scanMatchSlot(pRow, p->mCache)];
  int rc, bMatch = 0;
  (void)mFlags;
  (void)pPattern;
  if (p->zFast &&
      (pRow->eType == COLVEC_TYPE_INTEGER || pRow->eType == COLVEC_TYPE_TEXT)) {
    return scanMatchFast(p, pRow);
  }
  if (pEntry->val.eType != 0 && scanMatchSame(&pEntry->val, pRow)) {
    return pEntry->bMatch;
  }
  switch (pRow->eType) {
  case COLVEC_TYPE_INTEGER:
    rc = sqlite3_bind_int64(pStmt, 2, pRow->i);
    break;
  case COLVEC_TYPE_FLOAT:
    rc = sqlite3_bind_double(pStmt, 2, pRow->r);
    break;
  case COLVEC_TYPE_TEXT: /* "" for an empty value: NULL would bind NULL */
    rc = sqlite3_bind_text(pStmt, 2, pRow->n ? (const char *)pRow->z : "",
                           pRow->n, SQLITE_STATIC);
    break;
  case COLVEC_TYPE_BLOB:
    rc = sqlite3_bind_blob(pStmt, 2, pRow->n ? (const void *)pRow->z : "",
                           pRow->n, SQLITE_STATIC);
    break;
  default:
    rc = sqlite3_bind_null(pStmt, 2);
    break;
  }
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(pStmt);
    if (rc == SQLITE_ROW) {
      bMatch = sqlite3_column_int(pStmt, 0) != 0;
      rc = SQLITE_OK;
    }
    if (sqlite3_reset(pStmt) != SQLITE_OK && rc == SQLITE_OK) rc = SQLITE_ERROR;
    if (rc == SQLITE_DONE) rc = SQLITE_ERROR; /* no row: cannot happen */
  }
  if (rc != SQLITE_OK) {
    p->rc = rc;
    return -1;
  }
  pEntry->val = *pRow;
  pEntry->bMatch = bMatch;
  return bMatch;
}

/*
** Return of scanScalar and scanInCollect: a number compared with a text
** column. SQLite compares the two as text when the number carries no
** affinity (a literal, a bound parameter) and as numbers when it does (a
** CAST, another table's column, a subquery's), and xFilter cannot tell
** which: such a filter passes the rows that pass either way (scanTextNumber),
** and SQLite re-checks them.
*/
#define SCAN_TEXT_NUMBER 1

/* SQL rendering a number as text as the SQLite that runs renders it. */
static const char zScanTextSql[] = "SELECT CAST(?1 AS TEXT)";

/*
** Converts pVal into *pOut with the affinity of the column it is compared
** with: numeric for integer/real columns and the rowid (text is read as
** SQLite's numeric affinity reads it, colvecTextToNumber), none for text
** and blob columns. Nothing is called on a copy of pVal and pVal is not
** changed (sqlite3_value_numeric_type on a sqlite3_value_dup copy crashed
** SQLite 3.53, which takes the value's database mutex there).
**
** Text and blob bytes are copied to *pzCopy (sqlite3_free it; NULL when
** nothing was copied), since an IN list's values are overwritten by the
** next sqlite3_vtab_in_next(). Returns SQLITE_OK, SQLITE_NOMEM, or
** SCAN_TEXT_NUMBER for a number compared with a text column (*pOut is the
** number as given).
*/
static int scanScalar(sqlite3_value *pVal, int eAffinity, ColvecScalar *pOut,
                      char **pzCopy) {
  int eType = sqlite3_value_type(pVal);
  const void *pBytes = NULL;
  *pzCopy = NULL;
  memset(pOut, 0, sizeof(*pOut));
  switch (eType) {
  case SQLITE_INTEGER:
    pOut->eType = COLVEC_TYPE_INTEGER;
    pOut->i = sqlite3_value_int64(pVal);
    return eAffinity == COLVEC_ATTR_TEXT ? SCAN_TEXT_NUMBER : SQLITE_OK;
  case SQLITE_FLOAT:
    pOut->eType = COLVEC_TYPE_FLOAT;
    pOut->r = sqlite3_value_double(pVal);
    return eAffinity == COLVEC_ATTR_TEXT ? SCAN_TEXT_NUMBER : SQLITE_OK;
  case SQLITE_TEXT:
    pBytes = sqlite3_value_text(pVal);
    pOut->n = sqlite3_value_bytes(pVal);
    if (pBytes == NULL) return SQLITE_NOMEM;
    if (eAffinity == COLVEC_ATTR_INTEGER || eAffinity == COLVEC_ATTR_REAL) {
      int eKind;
      if (colvecTextToNumber((const char *)pBytes, pOut->n, &eKind, &pOut->i,
                             &pOut->r) != COLVEC_OK) {
        return SQLITE_NOMEM;
      }
      if (eKind == COLVEC_NUM_INTEGER) {
        pOut->eType = COLVEC_TYPE_INTEGER;
        return SQLITE_OK;
      }
      if (eKind == COLVEC_NUM_REAL) {
        pOut->eType = COLVEC_TYPE_FLOAT;
        return SQLITE_OK;
      }
    }
    pOut->eType = COLVEC_TYPE_TEXT;
    break;
  case SQLITE_BLOB:
    pBytes = sqlite3_value_blob(pVal);
    pOut->n = sqlite3_value_bytes(pVal);
    pOut->eType = COLVEC_TYPE_BLOB;
    break;
  default:
    pOut->eType = COLVEC_TYPE_NULL;
    return SQLITE_OK;
  }
  if (pOut->n > 0) {
    *pzCopy = sqlite3_malloc64((sqlite3_uint64)pOut->n);
    if (*pzCopy == NULL) return SQLITE_NOMEM;
    memcpy(*pzCopy, pBytes, (size_t)pOut->n);
    pOut->z = (const uint8_t *)*pzCopy;
  }
  return SQLITE_OK;
}

/*
** Reads every value of IN list pArg (sqlite3_vtab_in_first/next) into
** *paVal, with column affinity eAffinity (scanScalar), their bytes
** copied into *pazCopy, *pnVal entries of both (sqlite3_free each copy and
** both arrays, also after an error); then sorts the values for
** colvecFilterEval and colvecFilterInHas and sets *pnEval to the number
** of distinct members kept (colvecFilterInSort). Returns SQLITE_OK,
** SQLITE_NOMEM, an error of the list, or SCAN_TEXT_NUMBER when a member is
** a number compared with a text column (kept as given; the list is then
** left unsorted, *pnEval 0, for scanBothOpen).
*/
static int scanInCollect(sqlite3_value *pArg, int eAffinity,
                         ColvecScalar **paVal, char ***pazCopy, int *pnVal,
                         int *pnEval) {
  /* every value of the list, on the heap (not on SQLite's stack) */
  sqlite3_value *pVal = NULL;
  ColvecScalar *aVal = NULL;
  char **azCopy = NULL;
  int nAlloc = 0, nVal = 0, rc, bTextNum = 0;
  for (rc = sqlite3_vtab_in_first(pArg, &pVal); rc == SQLITE_OK && pVal;
       rc = sqlite3_vtab_in_next(pArg, &pVal)) {
    if (nVal == nAlloc) {
      int nNew = nAlloc ? nAlloc * 2 : 64;
      ColvecScalar *aNew =
          sqlite3_realloc64(aVal, sizeof(ColvecScalar) * (sqlite3_uint64)nNew);
      char **azNew =
          aNew
              ? sqlite3_realloc64(azCopy, sizeof(char *) * (sqlite3_uint64)nNew)
              : NULL;
      if (aNew) aVal = aNew;
      if (azNew) azCopy = azNew;
      if (aNew == NULL || azNew == NULL) {
        rc = SQLITE_NOMEM;
        break;
      }
      nAlloc = nNew;
    }
    rc = scanScalar(pVal, eAffinity, &aVal[nVal], &azCopy[nVal]);
    nVal++;
    if (rc == SCAN_TEXT_NUMBER) {
      bTextNum = 1;
      rc = SQLITE_OK;
    }
    if (rc != SQLITE_OK) break; /* keep the error, not the next value */
  }
  if (rc == SQLITE_DONE) rc = SQLITE_OK; /* the end of the list */
  *paVal = aVal;
  *pazCopy = azCopy;
  *pnVal = nVal;
  /* both ways, 5 and 5.0 differ as text: scanBothOpen sorts */
  *pnEval = rc == SQLITE_OK && !bTextNum ? colvecFilterInSort(aVal, nVal) : 0;
  return rc == SQLITE_OK && bTextNum ? SCAN_TEXT_NUMBER : rc;
}

/*
** Fills *p with values aVal[0..nVal) both ways (ColvecScalar values as
** scanScalar gave them; numbers rendered as text by zScanTextSql on
** connection db); bIn: an IN list, whose two arrays are then sorted and
** made distinct (aVal too: p->aNum points to it). Returns SQLITE_OK,
** SQLITE_NOMEM or the rendering's error (*pzErr set when pzErr is given);
** scanBothClose(p) in every case.
*/
static int scanBothOpen(sqlite3 *db, ColvecScalar *aVal, int nVal, int bIn,
                        ColvecScanBoth *p, char **pzErr) {
  sqlite3_stmt *pStmt = NULL;
  int rc, i;
  memset(p, 0, sizeof(*p));
  p->aText = sqlite3_malloc64(sizeof(ColvecScalar) * (sqlite3_uint64)nVal + 1);
  p->azText = sqlite3_malloc64(sizeof(char *) * (sqlite3_uint64)nVal + 1);
  if (p->aText == NULL || p->azText == NULL) return SQLITE_NOMEM;
  memset(p->azText, 0, sizeof(char *) * (size_t)nVal);
  p->nAlloc = nVal;
  rc = sqlite3_prepare_v2(db, zScanTextSql, -1, &pStmt, NULL);
  for (i = 0; rc == SQLITE_OK && i < nVal; i++) {
    const ColvecScalar *pV = &aVal[i];
    ColvecScalar *pT = &p->aText[i];
    *pT = *pV;
    if (pV->eType != COLVEC_TYPE_INTEGER && pV->eType != COLVEC_TYPE_FLOAT) {
      continue;
    }
    sqlite3_reset(pStmt);
    if (pV->eType == COLVEC_TYPE_INTEGER) {
      rc = sqlite3_bind_int64(pStmt, 1, pV->i);
    } else {
      rc = sqlite3_bind_double(pStmt, 1, pV->r);
    }
    if (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW) {
      const char *z = (const char *)sqlite3_column_text(pStmt, 0);
      int n = sqlite3_column_bytes(pStmt, 0);
      p->azText[i] = z ? sqlite3_mprintf("%.*s", n, z) : NULL;
      if (p->azText[i] == NULL) {
        rc = SQLITE_NOMEM;
      } else {
        pT->eType = COLVEC_TYPE_TEXT;
        pT->z = (const uint8_t *)p->azText[i];
        pT->n = n;
      }
    } else if (rc == SQLITE_OK) {
      rc = sqlite3_reset(pStmt);
      if (rc == SQLITE_OK) rc = SQLITE_ERROR;
    }
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM && pzErr) {
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(pStmt);
  p->aNum = aVal;
  p->nNum = nVal;
  p->nText = nVal;
  if (rc == SQLITE_OK && bIn) {
    p->nNum = colvecFilterInSort(aVal, nVal);
    p->nText = colvecFilterInSort(p->aText, nVal);
  }
  return rc;
}

/* Frees what scanBothOpen allocated (p may be zeroed). */
static void scanBothClose(ColvecScanBoth *p) {
  int i;
  for (i = 0; i < p->nAlloc; i++)
    sqlite3_free(p->azText[i]);
  sqlite3_free(p->azText);
  sqlite3_free(p->aText);
  memset(p, 0, sizeof(*p));
}

/*
** Returns 1 when value *pCell of a text column passes operator eOp against
** p either way: as text against p->aText, or, read as SQLite's numeric
** affinity reads it, against p->aNum (unless p->nNum is 0: as text only);
** 0 when it passes neither; -1 when reading it as a number ran out of
** memory.
*/
static int scanBothPass(const ColvecScanBoth *p, ColvecPlanOp eOp,
                        const ColvecScalar *pCell) {
  ColvecScalar num = *pCell;
  int bIn = eOp == COLVEC_OP_IN;
  if (bIn ? colvecFilterInHas(p->aText, p->nText, pCell)
          : colvecFilterScalarPass(eOp, pCell, &p->aText[0])) {
    return 1;
  }
  if (p->nNum == 0) return 0; /* as text only, or an empty list */
  if (pCell->eType == COLVEC_TYPE_TEXT) {
    int eKind;
    if (colvecTextToNumber((const char *)pCell->z, pCell->n, &eKind, &num.i,
                           &num.r) != COLVEC_OK) {
      return -1;
    }
    if (eKind == COLVEC_NUM_INTEGER) num.eType = COLVEC_TYPE_INTEGER;
    if (eKind == COLVEC_NUM_REAL) num.eType = COLVEC_TYPE_FLOAT;
  }
  return bIn ? colvecFilterInHas(p->aNum, p->nNum, &num)
             : colvecFilterScalarPass(eOp, &num, &p->aNum[0]);
}

/*
** Clears in aBits every row of text column pView that passes operator eOp
** against p neither way (scanBothPass). Returns SQLITE_OK, SQLITE_NOMEM, or
** COLVEC_CORRUPT_VTAB for malformed offsets.
*/
static int scanBothEval(const ColvecColumnView *pView, ColvecPlanOp eOp,
                        const ColvecScanBoth *p, uint8_t *aBits) {
  int64_t iRow;
  for (iRow = colvecBitmapNext(aBits, 0, pView->nRow); iRow < pView->nRow;
       iRow = colvecBitmapNext(aBits, iRow + 1, pView->nRow)) {
    ColvecScalar cell;
    int bPass;
    memset(&cell, 0, sizeof(cell));
    if (colvecFilterRowValue(pView, iRow, &cell) != COLVEC_OK) {
      return COLVEC_CORRUPT_VTAB;
    }
    bPass = scanBothPass(p, eOp, &cell);
    if (bPass < 0) return SQLITE_NOMEM;
    if (!bPass) aBits[iRow >> 3] &= (uint8_t) ~(1u << (iRow & 7));
  }
  return SQLITE_OK;
}

/* Reads an IN list for the delta; see colvecInt.h. */
int colvecScanInOpen(sqlite3 *db, const ColvecConfig *pC, int iCol,
                     sqlite3_value *pArg, ColvecScanIn *p) {
  int eAffinity = COLVEC_ATTR_INTEGER, rc;
  memset(p, 0, sizeof(*p));
  p->iCol = iCol;
  if (iCol != COLVEC_PLAN_ROWID) {
    if (iCol < 0 || iCol >= pC->nCol) return SQLITE_ERROR;
    if (pC->aCol[iCol].bVector) {
      p->bAll = 1; /* SQLite checks these */
      return SQLITE_OK;
    }
    eAffinity = pC->aCol[iCol].eAttr;
  }
  rc =
      scanInCollect(pArg, eAffinity, &p->aVal, &p->azCopy, &p->nCopy, &p->nVal);
  if (rc == SCAN_TEXT_NUMBER) {
    p->bBoth = 1;
    rc = scanBothOpen(db, p->aVal, p->nCopy, 1, &p->both, NULL);
    p->both.nNum = 0; /* a KNN: as text, as the bound lists compare */
  }
  return rc;
}

/* Tests a delta row's value against an IN list; see colvecInt.h. */
int colvecScanInTest(const ColvecScanIn *p, sqlite3_value *pCell) {
  ColvecScalar v;
  int eType = sqlite3_value_type(pCell);
  if (p->bAll) return 1;
  memset(&v, 0, sizeof(v));
  switch (eType) {
  case SQLITE_INTEGER:
    v.eType = COLVEC_TYPE_INTEGER;
    v.i = sqlite3_value_int64(pCell);
    break;
  case SQLITE_FLOAT:
    v.eType = COLVEC_TYPE_FLOAT;
    v.r = sqlite3_value_double(pCell);
    break;
  case SQLITE_TEXT:
  case SQLITE_BLOB: /* the bytes as stored (text: UTF-8) */
    v.eType = eType == SQLITE_TEXT ? COLVEC_TYPE_TEXT : COLVEC_TYPE_BLOB;
    v.z = eType == SQLITE_TEXT ? sqlite3_value_text(pCell)
                               : (const uint8_t *)sqlite3_value_blob(pCell);
    v.n = v.z ? sqlite3_value_bytes(pCell) : 0;
    break;
  default:
    return 0; /* NULL is in no list */
  }
  if (p->bBoth) return scanBothPass(&p->both, COLVEC_OP_IN, &v);
  return colvecFilterInHas(p->aVal, p->nVal, &v);
}

/* Frees an IN list read by colvecScanInOpen; see colvecInt.h. */
void colvecScanInClose(ColvecScanIn *p) {
  int i;
  scanBothClose(&p->both);
  for (i = 0; i < p->nCopy; i++)
    sqlite3_free(p->azCopy[i]);
  sqlite3_free(p->azCopy);
  sqlite3_free(p->aVal);
  memset(p, 0, sizeof(*p));
}

/*
** Evaluates one filter argument (operator eOp on column iCol, value pArg)
** over segment h, ANDing into aBits. A number compared with a text column
** keeps the rows that pass either way in a scan (SCAN_TEXT_NUMBER; SQLite
** re-checks every row), and in a KNN (bKnn) those that pass as text: the
** k nearest must be decided here, and text is how SQLite compares a
** literal or a bound parameter (a number that carries numeric affinity,
** from a CAST or a column, may match rows of another spelling, '5.0' for
** 5, that the KNN then leaves out). An empty IN list clears aBits. LIKE and
** GLOB
** prepare their azScanMatchSql statement on the connection and ask it
** about each distinct value of the column (as far as the cache of verdicts
** holds them), or match with SQLite's own matcher when the query's memo
** pMemo says like()/glob() are SQLite's; its errors are returned with
** *pzErr set ("colvec: " and SQLite's message).
*/
static int scanOneFilter(ColvecSegTable *pSegs, ColvecSegHandle *h, int iCol,
                         ColvecPlanOp eOp, sqlite3_value *pArg, int bKnn,
                         ColvecScanMemo *pMemo, uint8_t *aBits, char **pzErr) {
  const ColvecConfig *pC = pSegs->pConfig;
  ColvecColumnView rowidView;
  const ColvecColumnView *pView;
  ColvecScalar aOne[1];      /* the value of a non-IN filter */
  char *azOne[1] = {NULL};   /* its copied bytes */
  ColvecScalar *aVal = aOne; /* values (an IN list's on the heap) */
  char **azCopy = azOne;     /* their copied bytes */
  ScanMatch match;           /* LIKE/GLOB: SQLite decides */
  int bMatch = eOp == COLVEC_OP_LIKE || eOp == COLVEC_OP_GLOB;
  int nVal = 0, i, rc = SQLITE_OK, eAffinity;
  int nEval = 1; /* values evaluated: an IN list's distinct members */

  memset(&match, 0, sizeof(match));
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
    rc = colvecLayoutView(pC, h, iCol, &pView, pzErr);
    if (rc != SQLITE_OK) return rc;
    eAffinity = pC->aCol[iCol].eAttr;
  }
  if (eOp == COLVEC_OP_IN) {
    aVal = NULL;
    azCopy = NULL;
    rc = scanInCollect(pArg, eAffinity, &aVal, &azCopy, &nVal, &nEval);
  } else if (eOp == COLVEC_OP_ISNULL || eOp == COLVEC_OP_NOTNULL) {
    aVal[0].eType = COLVEC_TYPE_NULL;
    nVal = 1;
  } else if (bMatch) {
    /* a pattern gets no affinity (LIKE and GLOB are functions) */
    rc = scanScalar(pArg, COLVEC_ATTR_BLOB, &aVal[0], &azCopy[0]);
    nVal = 1;
    if (rc == SQLITE_OK) {
      size_t nByte;
      match.mCache = 1;
      while (match.mCache < SCAN_MATCH_CACHE && match.mCache < h->nRow + 1) {
        match.mCache *= 2;
      }
      nByte = sizeof(ScanMatchEntry) * match.mCache--;
      match.aCache = sqlite3_malloc64(nByte);
      if (match.aCache == NULL) rc = SQLITE_NOMEM;
      if (match.aCache) memset(match.aCache, 0, nByte);
    }
    if (rc == SQLITE_OK) {
      rc = sqlite3_prepare_v2(pSegs->db, azScanMatchSql[eOp == COLVEC_OP_GLOB],
                              -1, &match.pStmt, NULL);
    }
    if (rc == SQLITE_OK) rc = sqlite3_bind_value(match.pStmt, 1, pArg);
    match.bGlob = eOp == COLVEC_OP_GLOB;
    if (rc == SQLITE_OK && h->nRow >= SCAN_MATCH_FAST_ROWS &&
        (pView->eStore == COLVEC_STORE_INT64 ||
         pView->eStore == COLVEC_STORE_TEXT) &&
        (aVal[0].eType == COLVEC_TYPE_TEXT ||
         aVal[0].eType == COLVEC_TYPE_INTEGER) &&
        (aVal[0].eType == COLVEC_TYPE_TEXT ? aVal[0].n : 20) <=
            sqlite3_limit(pSegs->db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, -1) &&
        scanMatchBuiltin(pSegs->db, match.bGlob, pMemo)) {
      /* SQLite's own matcher, on the pattern as its text (an integer's
      ** digits; text up to a NUL, as sqlite3_value_text gives it) */
      match.zFast =
          aVal[0].eType == COLVEC_TYPE_INTEGER
              ? sqlite3_mprintf("%lld", (long long)aVal[0].i)
              : sqlite3_mprintf("%.*s", aVal[0].n,
                                aVal[0].z ? (const char *)aVal[0].z : "");
      if (match.zFast == NULL) rc = SQLITE_NOMEM;
    }
    if (rc != SQLITE_OK && rc != SQLITE_NOMEM) {
      *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(pSegs->db));
    }
  } else {
    rc = scanScalar(pArg, eAffinity, &aVal[0], &azCopy[0]);
    nVal = 1;
  }
  if (rc == SQLITE_OK) {
    /* an IN list passes its nVal (maybe 0) members; others read aVal[0] */
    int rcEval = colvecFilterEval(pView, eOp, aVal, nEval,
                                  bMatch ? scanMatch : NULL, &match, aBits);
    if (rcEval == COLVEC_FILTER_ABORT) {
      rc = match.rc;
      if (rc != SQLITE_NOMEM) {
        *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(pSegs->db));
      }
    } else if (rcEval != COLVEC_OK) {
      rc = COLVEC_CORRUPT_VTAB;
    }
  } else if (rc == SCAN_TEXT_NUMBER) {
    ColvecScanBoth both;
    rc = scanBothOpen(pSegs->db, aVal, nVal, eOp == COLVEC_OP_IN, &both, pzErr);
    if (bKnn) both.nNum = 0; /* as text only */
    if (rc == SQLITE_OK) rc = scanBothEval(pView, eOp, &both, aBits);
    scanBothClose(&both);
  }
  if (rc == SQLITE_CORRUPT_VTAB) {
    *pzErr = sqlite3_mprintf("colvec: segment %lld of table %s is damaged",
                             (long long)h->iSegid, pC->zName);
  }
  sqlite3_finalize(match.pStmt);
  sqlite3_free(match.aCache);
  sqlite3_free(match.zFast);
  sqlite3_free(match.zText);
  for (i = 0; i < nVal; i++)
    sqlite3_free(azCopy[i]);
  if (aVal != aOne) { /* an IN list's arrays (NULL when it was empty) */
    sqlite3_free(aVal);
    sqlite3_free(azCopy);
  }
  return rc;
}

/*
** Value orders (colvec_order.h). A filter's rows are found in the order of
** its column when the column has been filtered on this segment more than
** SCAN_ORDER_AFTER times (a one-off query never pays for building it) and
** the segment has SCAN_ORDER_MIN_ROWS rows or more (below, testing every
** row costs as little). The order then drives the bitmap when the filter
** passes at most 1 / COLVEC_SCAN_ORDER_SHARE of the rows: the bitmap starts
** empty, the filter's runs set their rows, and the plan's other filters
** read only the words still holding rows (colvecFilterEval).
*/
#define SCAN_ORDER_AFTER 2
#define SCAN_ORDER_MIN_ROWS 4096

/* What a segment handle's slot keeps for one attribute column. */
typedef struct ScanOrderSlot ScanOrderSlot;
struct ScanOrderSlot {
  int nUse;          /* scans of the segment that filtered on the column */
  int bBuilt;        /* order is built */
  ColvecOrder order; /* the column's rows in value order, once bBuilt */
};

/* Frees a ScanOrderSlot (the slot's xFree). */
static void scanOrderFree(void *p) {
  colvecOrderFree(&((ScanOrderSlot *)p)->order);
  sqlite3_free(p);
}

/*
** Sets *ppOrder to the value order of attribute column iCol of h (view
** pView), or NULL when the column has none (yet). bUse: this is a new scan
** filtering on the column, which counts towards building it. Returns
** SQLITE_OK, SQLITE_NOMEM, or COLVEC_CORRUPT_VTAB for a malformed column.
*/
static int scanOrder(ColvecSegTable *pSegs, ColvecSegHandle *h, int iCol,
                     const ColvecColumnView *pView, int bUse,
                     const ColvecOrder **ppOrder) {
  ColvecSegSlot *pSlot;
  ScanOrderSlot *p;
  *ppOrder = NULL;
  if (h->nRow < SCAN_ORDER_MIN_ROWS) return SQLITE_OK;
  pSlot = colvecSegmentSlot(h, pSegs->pConfig, iCol);
  if (pSlot == NULL) return SQLITE_NOMEM;
  if (pSlot->p == NULL) {
    p = sqlite3_malloc(sizeof(ScanOrderSlot));
    if (p == NULL) return SQLITE_NOMEM;
    memset(p, 0, sizeof(*p));
    pSlot->p = p;
    pSlot->xFree = scanOrderFree;
  }
  p = (ScanOrderSlot *)pSlot->p;
  if (!p->bBuilt && bUse && ++p->nUse > SCAN_ORDER_AFTER) {
    int rc = colvecOrderBuild(pView, &p->order);
    if (rc == COLVEC_NOMEM) return SQLITE_NOMEM;
    if (rc != COLVEC_OK) return COLVEC_CORRUPT_VTAB;
    p->bBuilt = 1;
  }
  if (p->bBuilt) *ppOrder = &p->order;
  return SQLITE_OK;
}

/*
** Finds the rows of segment h that filter argument pArg (operator eOp on
** column iCol) passes through the column's value order: sets *pnPass to
** their number, and their bits in aBits unless it is NULL (a count, which
** is a use of the column: scanOrder's bUse). *pnPass is -1 when the order
** cannot answer: not an attribute column, an operator it does not handle
** (EQ, IS with a value, LT, LE, GT, GE and IN are), a number compared with
** a text column (decided both ways by scanOneFilter), or no order yet.
** Returns SQLITE_OK or an error (SQLITE_NOMEM, an IN list's error,
** COLVEC_CORRUPT_VTAB with *pzErr set).
*/
static int scanOrderRows(ColvecSegTable *pSegs, ColvecSegHandle *h, int iCol,
                         ColvecPlanOp eOp, sqlite3_value *pArg, uint8_t *aBits,
                         int64_t *pnPass, char **pzErr) {
  const ColvecConfig *pC = pSegs->pConfig;
  const ColvecColumnView *pView = NULL;
  const ColvecOrder *pOrder = NULL;
  ColvecScalar aOne[1];      /* the value of a non-IN filter */
  char *azOne[1] = {NULL};   /* its copied bytes */
  ColvecScalar *aVal = aOne; /* values (an IN list's on the heap) */
  char **azCopy = azOne;     /* their copied bytes */
  int nCopy = 0, nVal = 0, i, rc;
  *pnPass = -1;
  if (iCol < 0 || iCol >= pC->nCol || pC->aCol[iCol].bVector) {
    return SQLITE_OK; /* the rowid, or a vector (SQLite checks these) */
  }
  if (eOp != COLVEC_OP_IN && !colvecOrderHandles(eOp)) return SQLITE_OK;
  rc = colvecLayoutView(pC, h, iCol, &pView, pzErr);
  if (rc == SQLITE_OK) {
    rc = scanOrder(pSegs, h, iCol, pView, aBits == NULL, &pOrder);
    if (rc == SQLITE_CORRUPT_VTAB) {
      *pzErr = sqlite3_mprintf("colvec: segment %lld of table %s is damaged",
                               (long long)h->iSegid, pC->zName);
    }
  }
  if (rc != SQLITE_OK || pOrder == NULL) return rc;
  if (eOp == COLVEC_OP_IN) {
    aVal = NULL;
    azCopy = NULL;
    rc = scanInCollect(pArg, pC->aCol[iCol].eAttr, &aVal, &azCopy, &nCopy,
                       &nVal);
    eOp = COLVEC_OP_EQ; /* each distinct member */
  } else {
    rc = scanScalar(pArg, pC->aCol[iCol].eAttr, &aVal[0], &azCopy[0]);
    nCopy = nVal = 1;
    if (eOp == COLVEC_OP_IS && aVal[0].eType == COLVEC_TYPE_NULL) nVal = -1;
  }
  if (rc == SQLITE_OK && nVal >= 0) {
    int64_t nPass = 0;
    for (i = 0; rc == SQLITE_OK && i < nVal; i++) {
      int64_t iLo, iHi, j;
      if (colvecOrderRange(pView, pOrder, eOp, &aVal[i], &iLo, &iHi) !=
          COLVEC_OK) {
        rc = COLVEC_CORRUPT_VTAB;
        break;
      }
      nPass += iHi - iLo;
      for (j = iLo; aBits && j < iHi; j++) {
        uint32_t iRow = pOrder->aRow[j];
        aBits[iRow >> 3] |= (uint8_t)(1u << (iRow & 7));
      }
    }
    if (rc == SQLITE_OK) *pnPass = nPass;
  }
  if (rc == SCAN_TEXT_NUMBER) rc = SQLITE_OK; /* *pnPass stays -1 */
  if (rc == SQLITE_CORRUPT_VTAB) {
    *pzErr = sqlite3_mprintf("colvec: segment %lld of table %s is damaged",
                             (long long)h->iSegid, pC->zName);
  }
  for (i = 0; i < nCopy; i++)
    sqlite3_free(azCopy[i]);
  if (aVal != aOne) {
    sqlite3_free(aVal);
    sqlite3_free(azCopy);
  }
  return rc;
}

/* Sets the nRow bits of aBits, and clears the rest of its last byte. */
static void scanAllRows(uint8_t *aBits, int64_t nRow) {
  int64_t nByte = (nRow + 7) / 8;
  memset(aBits, 0xff, (size_t)nByte);
  if (nRow % 8) aBits[nByte - 1] = (uint8_t)((1u << (nRow % 8)) - 1);
}

/* Picks the filter a value order answers best; see colvecInt.h. */
int colvecScanPick(ColvecSegTable *pSegs, ColvecSegHandle *h,
                   const ColvecPlan *pPlan, sqlite3_value **argv,
                   ColvecScanPick *pPick, char **pzErr) {
  int i, rc = SQLITE_OK;
  pPick->iArg = -1;
  pPick->nPass = -1;
  for (i = 0; rc == SQLITE_OK && pPlan && i < pPlan->nArg; i++) {
    const ColvecPlanArg *pArg = &pPlan->aArg[i];
    int64_t nPass;
    if (pArg->eOp < COLVEC_OP_EQ) continue;
    rc = scanOrderRows(pSegs, h, pArg->iCol, pArg->eOp, argv[i], NULL, &nPass,
                       pzErr);
    if (nPass >= 0 && (pPick->nPass < 0 || nPass < pPick->nPass)) {
      pPick->nPass = nPass;
      pPick->iArg = i;
    }
  }
  return rc;
}

/* Computes the bitmap of live, passing rows; see colvecInt.h. */
int colvecScanBitmap(ColvecSegTable *pSegs, ColvecSegHandle *h,
                     const ColvecPlan *pPlan, sqlite3_value **argv,
                     const ColvecScanPick *pPick, ColvecScanMemo *pMemo,
                     uint8_t *aBits, char **pzErr) {
  int64_t nByte = (h->nRow + 7) / 8, i, nBest;
  int rc = SQLITE_OK, iBest;
  ColvecScanPick pick; /* pPick, or computed here */
  if (pPick == NULL) {
    rc = colvecScanPick(pSegs, h, pPlan, argv, &pick, pzErr);
    pPick = &pick;
  }
  iBest = pPick->iArg;
  nBest = pPick->nPass;
  if (rc != SQLITE_OK) return rc;
  if (iBest >= 0 && nBest == 0) {
    memset(aBits, 0, (size_t)nByte); /* the segment holds none of its rows */
    return SQLITE_OK;
  }
  if (iBest >= 0 && nBest == h->nRow) {
    /* every row passes it (a segment of one partition): nothing to test */
    scanAllRows(aBits, h->nRow);
  } else if (iBest >= 0 && nBest * COLVEC_SCAN_ORDER_SHARE <= h->nRow) {
    memset(aBits, 0, (size_t)nByte);
    rc =
        scanOrderRows(pSegs, h, pPlan->aArg[iBest].iCol, pPlan->aArg[iBest].eOp,
                      argv[iBest], aBits, &nBest, pzErr);
    if (rc != SQLITE_OK) return rc;
  } else {
    iBest = -1;
    scanAllRows(aBits, h->nRow);
  }
  for (i = 0; i < h->nTomb; i++) {
    /* tombstones are few: find each one's row */
    int64_t iRow = colvecSegmentSearch(h->aRowid, h->nRow, h->aTomb[i]);
    if (iRow >= 0) aBits[iRow >> 3] &= (uint8_t) ~(1u << (iRow & 7));
  }
  for (i = 0; rc == SQLITE_OK && pPlan && i < pPlan->nArg; i++) {
    const ColvecPlanArg *pArg = &pPlan->aArg[i];
    if (pArg->eOp < COLVEC_OP_EQ || i == iBest) continue;
    rc = scanOneFilter(pSegs, h, pArg->iCol, pArg->eOp, argv[i], pPlan->bKnn,
                       pMemo, aBits, pzErr);
  }
  return rc;
}
