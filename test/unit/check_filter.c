/*
** check_filter.c — Check suite for colvec_filter.c (pushed-down constraints
** evaluated over a segment's columns into a row bitmap).
**
** Differential against real SQLite: the same rows go into colvec column
** views and into an in-memory table t(a INTEGER, b REAL, c TEXT, d BLOB);
** for every (column, operator, right-hand side) tried, the bitmap must equal
** the rowids of "SELECT rowid FROM t WHERE col <op> ?". The right-hand
** side gets the column's affinity as SQLite gives it: numeric affinity
** through sqlite3_value_numeric_type for INTEGER/REAL, text conversion for
** TEXT, none for BLOB and for LIKE/GLOB patterns. LIKE and GLOB go through
** a matcher that asks SQLite ("SELECT (?2 LIKE ?1) IS TRUE"), as the
** extension's does.
**
** This test alone links Debian's libsqlite3 (the library under test does
** not). Set COLVEC_FILTER_BENCH=1 to also print throughput over 10M rows.
*/
#include "colvec_filter.h"
#include "colvec_order.h"
#include "colvec_os.h"
#include "../lib/testscale.h"
#include "../lib/testassert.h"

#include <check.h>
#include <float.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest text or blob a test cell holds. */
#define TF_MAXBYTES 32

/* Number of attribute columns of the test table (a, b, c, d). */
#define TF_NCOL 4

/* Most values of an IN list in test_random. */
#define TF_MAX_IN 40

/* One test value, as generated (before any affinity). */
typedef struct TfCell TfCell;
struct TfCell {
  int eType;              /* SQLITE_INTEGER .. SQLITE_NULL */
  int64_t i;              /* integer value */
  double r;               /* float value */
  uint8_t z[TF_MAXBYTES]; /* text or blob bytes */
  int n;                  /* bytes used in z */
};

/* The rows under test: per column the cells, and the colvec view of them. */
typedef struct TfData TfData;
struct TfData {
  int nRow;                        /* rows */
  TfCell *aCell[TF_NCOL];          /* cells, column by column */
  ColvecColumnView aView[TF_NCOL]; /* colvec views of the columns */
  int64_t *aInt;                   /* storage of column a */
  double *aReal;                   /* storage of column b */
  int64_t *aOff[2];                /* offsets of columns c and d */
  uint8_t *aByte[2];               /* bytes of columns c and d */
  uint8_t *aNull[TF_NCOL];         /* NULL bitmaps */
  sqlite3 *db;                     /* in-memory database holding table t */
  sqlite3_stmt *pEcho;             /* "SELECT ?1", to make sqlite3_values */
  ColvecOrder aOrder[TF_NCOL];     /* value orders, built on first use */
  int abOrder[TF_NCOL];            /* aOrder[i] is built */
};

/* The LIKE/GLOB matcher's state: SQLite decides each row. */
typedef struct TfMatch TfMatch;
struct TfMatch {
  sqlite3_stmt *apStmt[2]; /* "SELECT (?2 LIKE ?1) IS TRUE", then GLOB */
  int nCall;               /* calls made */
  int nFailAt;             /* fail the call numbered this (0: never) */
};

/* Column names and the storage kind of each. */
static const char *azTfCol[TF_NCOL] = {"a", "b", "c", "d"};
static const int aeTfStore[TF_NCOL] = {COLVEC_STORE_INT64, COLVEC_STORE_DOUBLE,
                                       COLVEC_STORE_TEXT, COLVEC_STORE_BLOB};

/* Deterministic generator state (xorshift64*). */
static uint64_t tfSeed = 0x3C6EF372FE94F82BULL;

/* Returns the next 64 pseudo-random bits. */
static uint64_t tfRand(void) {
  tfSeed ^= tfSeed >> 12;
  tfSeed ^= tfSeed << 25;
  tfSeed ^= tfSeed >> 27;
  return tfSeed * 0x2545F4914F6CDD1DULL;
}

/* Returns a random integer in [0, n). */
static int tfRandInt(int n) { return (int)(tfRand() % (uint64_t)n); }

/* Integers worth trying: boundaries of int64 and of exact doubles. */
static const int64_t aiTfInt[] = {0,
                                  1,
                                  -1,
                                  2,
                                  5,
                                  10,
                                  42,
                                  -7,
                                  1000,
                                  INT64_MAX,
                                  INT64_MIN,
                                  INT64_MAX - 1,
                                  INT64_MIN + 1,
                                  9007199254740992LL,
                                  9007199254740993LL,
                                  9007199254740991LL,
                                  -9007199254740993LL,
                                  -9007199254740992LL,
                                  4611686018427387904LL,
                                  9223372036854774784LL,
                                  9223372036854775295LL,
                                  -9223372036854774784LL};

/* Doubles worth trying: zeros, halves, extremes, 2^53 and 2^63 neighbours. */
static const double arTfReal[] = {0.0,
                                  -0.0,
                                  0.5,
                                  -0.5,
                                  1.0,
                                  1.5,
                                  5.0,
                                  10.0,
                                  4.999999999999999,
                                  -7.0,
                                  9007199254740992.0,
                                  9007199254740994.0,
                                  -9007199254740992.0,
                                  9223372036854775808.0,
                                  -9223372036854775808.0,
                                  9223372036854774784.0,
                                  -9223372036854774784.0,
                                  18446744073709551616.0,
                                  1e300,
                                  -1e300,
                                  DBL_MAX,
                                  -DBL_MAX,
                                  DBL_MIN,
                                  4.9406564584124654e-324,
                                  -4.9406564584124654e-324,
                                  4611686018427387904.0,
                                  0.1,
                                  1000.0};

/* Texts worth trying: empty, prefixes, numbers as text, LIKE wildcards. */
static const char *azTfText[] = {"",
                                 "a",
                                 "ab",
                                 "abc",
                                 "abd",
                                 "abcd",
                                 "b",
                                 "A",
                                 "aB",
                                 "AB",
                                 "5",
                                 "5.0",
                                 " 5",
                                 "5 ",
                                 "10",
                                 "-3",
                                 "1e3",
                                 "1e999",
                                 "0x10",
                                 "abc ",
                                 "a%",
                                 "%",
                                 "_",
                                 "a_c",
                                 "*",
                                 "a*",
                                 "[a-b]*",
                                 "?",
                                 "\xc3\xa9",
                                 "\xc3\x89",
                                 "\xc3\xa9"
                                 "a",
                                 "9223372036854775808",
                                 "9007199254740993",
                                 "-0",
                                 "1.5",
                                 "zz",
                                 "Inf",
                                 "-9223372036854775808",
                                 "4.9406564584124654e-324"};

/* Alphabet of random texts (units, so UTF-8 stays valid). */
static const char *azTfUnit[] = {"a",        "b", "A", "%", "_", "5", ".",
                                 "\xc3\xa9", "*", "[", "]", "?", " ", "1"};

/* Sets pCell to integer i. */
static void tfSetInt(TfCell *pCell, int64_t i) {
  memset(pCell, 0, sizeof(*pCell));
  pCell->eType = SQLITE_INTEGER;
  pCell->i = i;
}

/* Sets pCell to double r. */
static void tfSetReal(TfCell *pCell, double r) {
  memset(pCell, 0, sizeof(*pCell));
  pCell->eType = SQLITE_FLOAT;
  pCell->r = r;
}

/* Sets pCell to a text or blob (eType) of n bytes at z. */
static void tfSetBytes(TfCell *pCell, int eType, const void *z, int n) {
  memset(pCell, 0, sizeof(*pCell));
  TEST_INT(n, <=, TF_MAXBYTES);
  pCell->eType = eType;
  memcpy(pCell->z, z, n);
  pCell->n = n;
}

/* Fills pCell with a random integer: from the list, small, or any. */
static void tfPickInt(TfCell *pCell) {
  switch (tfRandInt(4)) {
  case 0:
    tfSetInt(pCell, (int64_t)(tfRand() >> tfRandInt(64)));
    break;
  case 1:
    tfSetInt(pCell, tfRandInt(41) - 20);
    break;
  default:
    tfSetInt(pCell, aiTfInt[tfRandInt(sizeof(aiTfInt) / sizeof(int64_t))]);
  }
}

/* Fills pCell with a random double: from the list, a small half, any. */
static void tfPickReal(TfCell *pCell) {
  switch (tfRandInt(5)) {
  case 0: {
    double r;
    uint64_t u = tfRand();
    memcpy(&r, &u, sizeof(r));
    tfSetReal(pCell, isnan(r) ? 3.25 : r);
    break;
  }
  case 1:
    tfSetReal(pCell, (tfRandInt(81) - 40) * 0.5);
    break;
  case 2:
    tfSetReal(pCell, tfRandInt(2) ? INFINITY : -INFINITY);
    break;
  default:
    tfSetReal(pCell, arTfReal[tfRandInt(sizeof(arTfReal) / sizeof(double))]);
  }
}

/* Fills pCell with a random text: from the list, or 0..5 random units,
** rarely with an embedded NUL. */
static void tfPickText(TfCell *pCell) {
  char z[TF_MAXBYTES];
  int n = 0, k, nUnit;
  if (tfRandInt(2)) {
    const char *zT = azTfText[tfRandInt(sizeof(azTfText) / sizeof(char *))];
    tfSetBytes(pCell, SQLITE_TEXT, zT, (int)strlen(zT));
    return;
  }
  nUnit = tfRandInt(6);
  for (k = 0; k < nUnit; k++) {
    const char *zU = azTfUnit[tfRandInt(sizeof(azTfUnit) / sizeof(char *))];
    memcpy(z + n, zU, strlen(zU));
    n += (int)strlen(zU);
  }
  if (n > 0 && tfRandInt(20) == 0) z[tfRandInt(n)] = 0;
  tfSetBytes(pCell, SQLITE_TEXT, z, n);
}

/* Fills pCell with a random blob of 0..4 bytes from a small alphabet. */
static void tfPickBlob(TfCell *pCell) {
  static const uint8_t aAlpha[] = {0x00, 0x01, 'a', 'b', '5', 0xff};
  uint8_t z[8];
  int n = tfRandInt(5), k;
  for (k = 0; k < n; k++)
    z[k] = aAlpha[tfRandInt(sizeof(aAlpha))];
  tfSetBytes(pCell, SQLITE_BLOB, z, n);
}

/* Fills pCell with a random value of the storage kind of column iCol, NULL
** with probability nNullPct percent. */
static void tfPickForColumn(TfCell *pCell, int iCol, int nNullPct) {
  if (tfRandInt(100) < nNullPct) {
    memset(pCell, 0, sizeof(*pCell));
    pCell->eType = SQLITE_NULL;
    return;
  }
  switch (iCol) {
  case 0:
    tfPickInt(pCell);
    break;
  case 1:
    tfPickReal(pCell);
    break;
  case 2:
    tfPickText(pCell);
    break;
  default:
    tfPickBlob(pCell);
    break;
  }
}

/* Binds pCell to parameter i of pStmt. */
static void tfBind(sqlite3_stmt *pStmt, int i, const TfCell *pCell) {
  int rc;
  switch (pCell->eType) {
  case SQLITE_INTEGER:
    rc = sqlite3_bind_int64(pStmt, i, pCell->i);
    break;
  case SQLITE_FLOAT:
    rc = sqlite3_bind_double(pStmt, i, pCell->r);
    break;
  case SQLITE_TEXT:
    rc = sqlite3_bind_text(pStmt, i, (const char *)pCell->z, pCell->n,
                           SQLITE_TRANSIENT);
    break;
  case SQLITE_BLOB:
    rc = sqlite3_bind_blob(pStmt, i, pCell->z, pCell->n, SQLITE_TRANSIENT);
    break;
  default:
    rc = sqlite3_bind_null(pStmt, i);
    break;
  }
  TEST_EQ(rc, SQLITE_OK);
}

/* Executes SQL z on db, failing the test on error. */
static void tfExec(sqlite3 *db, const char *z) {
  char *zErr = NULL;
  int rc = sqlite3_exec(db, z, 0, 0, &zErr);
  ck_assert_msg(rc == SQLITE_OK, "%s: %s", z, zErr ? zErr : "?");
}

/* Sets bit i of a (LSB-first) when b. */
static void tfSetBit(uint8_t *a, int64_t i, int b) {
  if (b) a[i >> 3] |= (uint8_t)(1 << (i & 7));
}

/* Returns bit i of a. */
static int tfBit(const uint8_t *a, int64_t i) {
  return (a[i >> 3] >> (i & 7)) & 1;
}

/*
** Builds nRow rows (NULL with nNullPct percent per cell) into p: the colvec
** views and table t of a new in-memory database. Free with tfFree.
*/
static void tfBuild(TfData *p, int nRow, int nNullPct) {
  sqlite3_stmt *pIns = NULL;
  int i, iCol, nNullByte = (nRow + 7) / 8;
  int64_t anByte[2] = {0, 0};
  memset(p, 0, sizeof(*p));
  p->nRow = nRow;
  for (iCol = 0; iCol < TF_NCOL; iCol++) {
    p->aCell[iCol] = calloc(nRow + 1, sizeof(TfCell));
    p->aNull[iCol] = calloc(nNullByte + 1, 1);
    for (i = 0; i < nRow; i++) {
      tfPickForColumn(&p->aCell[iCol][i], iCol, nNullPct);
      tfSetBit(p->aNull[iCol], i, p->aCell[iCol][i].eType == SQLITE_NULL);
    }
  }
  p->aInt = calloc(nRow + 1, sizeof(int64_t));
  p->aReal = calloc(nRow + 1, sizeof(double));
  for (i = 0; i < 2; i++) {
    p->aOff[i] = calloc(nRow + 1, sizeof(int64_t));
    p->aByte[i] = calloc((size_t)nRow * TF_MAXBYTES + 1, 1);
  }
  for (i = 0; i < nRow; i++) {
    const TfCell *pA = &p->aCell[0][i], *pB = &p->aCell[1][i];
    p->aInt[i] = pA->eType == SQLITE_NULL ? 0 : pA->i;
    p->aReal[i] = pB->eType == SQLITE_NULL ? 0.0 : pB->r;
    for (iCol = 2; iCol < 4; iCol++) {
      const TfCell *pC = &p->aCell[iCol][i];
      memcpy(p->aByte[iCol - 2] + anByte[iCol - 2], pC->z, pC->n);
      anByte[iCol - 2] += pC->n;
      p->aOff[iCol - 2][i + 1] = anByte[iCol - 2];
    }
  }
  for (iCol = 0; iCol < TF_NCOL; iCol++) {
    ColvecColumnView *pV = &p->aView[iCol];
    pV->eStore = aeTfStore[iCol];
    pV->nRow = nRow;
    pV->aInt = p->aInt;
    pV->aReal = p->aReal;
    pV->aNull = p->aNull[iCol];
    if (iCol >= 2) {
      pV->aOff = p->aOff[iCol - 2];
      pV->aByte = p->aByte[iCol - 2];
      pV->nByte = anByte[iCol - 2];
    }
  }

  ck_assert_int_eq(sqlite3_open(":memory:", &p->db), SQLITE_OK);
  tfExec(p->db, "CREATE TABLE t(a INTEGER, b REAL, c TEXT, d BLOB);"
                "BEGIN;");
  ck_assert_int_eq(sqlite3_prepare_v2(p->db,
                                      "INSERT INTO t(rowid,a,b,c,d) "
                                      "VALUES(?,?,?,?,?)",
                                      -1, &pIns, 0),
                   SQLITE_OK);
  for (i = 0; i < nRow; i++) {
    sqlite3_bind_int64(pIns, 1, i + 1);
    for (iCol = 0; iCol < TF_NCOL; iCol++) {
      tfBind(pIns, iCol + 2, &p->aCell[iCol][i]);
    }
    TEST_EQ(sqlite3_step(pIns), SQLITE_DONE);
    sqlite3_reset(pIns);
  }
  sqlite3_finalize(pIns);
  tfExec(p->db, "COMMIT;");
  ck_assert_int_eq(sqlite3_prepare_v2(p->db, "SELECT ?1", -1, &p->pEcho, 0),
                   SQLITE_OK);
}

/* Releases everything tfBuild made. */
static void tfFree(TfData *p) {
  int i;
  sqlite3_finalize(p->pEcho);
  sqlite3_close(p->db);
  for (i = 0; i < TF_NCOL; i++) {
    free(p->aCell[i]);
    free(p->aNull[i]);
  }
  for (i = 0; i < 2; i++) {
    free(p->aOff[i]);
    free(p->aByte[i]);
  }
  free(p->aInt);
  free(p->aReal);
  for (i = 0; i < TF_NCOL; i++)
    colvecOrderFree(&p->aOrder[i]);
}

/*
** Converts pCell into the ColvecScalar the vtab would pass for a constraint
** on column iCol: numeric affinity for a and b, text for c, none for d and
** for LIKE/GLOB (bNoAff). *ppVal receives the sqlite3_value the scalar
** points into (free with sqlite3_value_free after use).
*/
static void tfScalar(TfData *p, int iCol, int bNoAff, const TfCell *pCell,
                     ColvecScalar *pOut, sqlite3_value **ppVal) {
  sqlite3_value *pVal;
  int eType;
  tfBind(p->pEcho, 1, pCell);
  ck_assert_int_eq(sqlite3_step(p->pEcho), SQLITE_ROW);
  pVal = sqlite3_column_value(p->pEcho, 0);
  /* numeric affinity on the statement's own value: a sqlite3_value_dup()
  ** copy has no connection, which SQLite 3.53's numeric_type needs */
  if (!bNoAff && iCol <= 1) sqlite3_value_numeric_type(pVal);
  pVal = sqlite3_value_dup(pVal);
  ck_assert_ptr_nonnull(pVal);
  sqlite3_reset(p->pEcho);
  eType = sqlite3_value_type(pVal);
  if (!bNoAff && iCol == 2 &&
      (eType == SQLITE_INTEGER || eType == SQLITE_FLOAT)) {
    eType = SQLITE_TEXT; /* text affinity: SQLite's own rendering */
  }
  memset(pOut, 0, sizeof(*pOut));
  pOut->eType = eType;
  switch (eType) {
  case SQLITE_INTEGER:
    pOut->i = sqlite3_value_int64(pVal);
    break;
  case SQLITE_FLOAT:
    pOut->r = sqlite3_value_double(pVal);
    break;
  case SQLITE_TEXT:
    pOut->z = sqlite3_value_text(pVal);
    pOut->n = sqlite3_value_bytes(pVal);
    break;
  case SQLITE_BLOB:
    pOut->z = sqlite3_value_blob(pVal);
    pOut->n = sqlite3_value_bytes(pVal);
    break;
  default:
    break;
  }
  *ppVal = pVal;
}

/* Prepares the matcher's statements on db. */
static void tfMatchOpen(TfMatch *p, sqlite3 *db) {
  memset(p, 0, sizeof(*p));
  ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT (?2 LIKE ?1) IS TRUE", -1,
                                      &p->apStmt[0], 0),
                   SQLITE_OK);
  ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT (?2 GLOB ?1) IS TRUE", -1,
                                      &p->apStmt[1], 0),
                   SQLITE_OK);
}

/* Finalizes the matcher's statements. */
static void tfMatchClose(TfMatch *p) {
  sqlite3_finalize(p->apStmt[0]);
  sqlite3_finalize(p->apStmt[1]);
}

/* Binds scalar *pVal to parameter i of pStmt. */
static void tfBindScalar(sqlite3_stmt *pStmt, int i, const ColvecScalar *pVal) {
  switch (pVal->eType) {
  case COLVEC_TYPE_INTEGER:
    sqlite3_bind_int64(pStmt, i, pVal->i);
    break;
  case COLVEC_TYPE_FLOAT:
    sqlite3_bind_double(pStmt, i, pVal->r);
    break;
  case COLVEC_TYPE_TEXT:
    sqlite3_bind_text(pStmt, i, pVal->n ? (const char *)pVal->z : "", pVal->n,
                      SQLITE_STATIC);
    break;
  case COLVEC_TYPE_BLOB:
    sqlite3_bind_blob(pStmt, i, pVal->n ? (const void *)pVal->z : "", pVal->n,
                      SQLITE_STATIC);
    break;
  default:
    sqlite3_bind_null(pStmt, i);
  }
}

/* ColvecMatchFunc over SQLite: the pattern and the row are bound as given
** (numbers stay numbers, SQLite renders them). Returns -1 on the call
** numbered nFailAt. */
static int tfMatch(void *pCtx, int mFlags, const ColvecScalar *pPattern,
                   const ColvecScalar *pRow) {
  TfMatch *p = (TfMatch *)pCtx;
  sqlite3_stmt *pStmt = p->apStmt[(mFlags & COLVEC_MATCH_GLOB) ? 1 : 0];
  int bMatch;
  if (++p->nCall == p->nFailAt) return -1;
  tfBindScalar(pStmt, 1, pPattern);
  tfBindScalar(pStmt, 2, pRow);
  TEST_EQ(sqlite3_step(pStmt), SQLITE_ROW);
  bMatch = sqlite3_column_int(pStmt, 0);
  TEST_EQ(sqlite3_reset(pStmt), SQLITE_OK);
  return bMatch;
}

/* Writes a readable form of pCell into zBuf (nBuf bytes). */
static void tfDescribe(const TfCell *pCell, char *zBuf, int nBuf) {
  int k, n = 0;
  switch (pCell->eType) {
  case SQLITE_INTEGER:
    snprintf(zBuf, nBuf, "%lld", (long long)pCell->i);
    break;
  case SQLITE_FLOAT:
    snprintf(zBuf, nBuf, "%.17g", pCell->r);
    break;
  case SQLITE_NULL:
    snprintf(zBuf, nBuf, "NULL");
    break;
  default:
    n = snprintf(zBuf, nBuf, pCell->eType == SQLITE_TEXT ? "'" : "x'");
    for (k = 0; k < pCell->n && n < nBuf - 4; k++) {
      n += snprintf(zBuf + n, nBuf - n, "%02x", pCell->z[k]);
    }
    snprintf(zBuf + n, nBuf - n, "'");
  }
}

/* SQL text of each filter operator; %s is the column. */
static const char *tfOpSql(ColvecPlanOp eOp) {
  switch (eOp) {
  case COLVEC_OP_EQ:
    return "%s = ?";
  case COLVEC_OP_NE:
    return "%s != ?";
  case COLVEC_OP_LT:
    return "%s < ?";
  case COLVEC_OP_LE:
    return "%s <= ?";
  case COLVEC_OP_GT:
    return "%s > ?";
  case COLVEC_OP_GE:
    return "%s >= ?";
  case COLVEC_OP_IS:
    return "%s IS ?";
  case COLVEC_OP_ISNOT:
    return "%s IS NOT ?";
  case COLVEC_OP_ISNULL:
    return "%s IS NULL";
  case COLVEC_OP_NOTNULL:
    return "%s IS NOT NULL";
  case COLVEC_OP_LIKE:
    return "%s LIKE ?";
  case COLVEC_OP_GLOB:
    return "%s GLOB ?";
  default:
    return "%s IN (";
  }
}

/*
** Checks the two other ways of deciding "column iCol <eOp> aVal[0..nVal)"
** against aWant, SQLite's rows: (1) the runs of the column's value order
** (colvec_order.h), for the operators it answers and IN lists; (2)
** colvecFilterEval over a sparse bitmap, which must keep exactly its rows
** that SQLite passes (words without rows are skipped, others read word by
** word or whole).
*/
static void tfCheckOther(TfData *p, int iCol, ColvecPlanOp eOp,
                         ColvecScalar *aVal, int nVal, const uint8_t *aWant) {
  int nByte = (p->nRow + 7) / 8, i, j;
  uint8_t *aGot = calloc(nByte + 1, 1);
  uint8_t *aMask = calloc(nByte + 1, 1);
  int bIn = eOp == COLVEC_OP_IN;
  if ((colvecOrderHandles(eOp) && nVal > 0 &&
       !(eOp == COLVEC_OP_IS && aVal[0].eType == SQLITE_NULL)) ||
      bIn) {
    ColvecScalar aSorted[TF_MAX_IN];
    int nSorted = nVal;
    if (!p->abOrder[iCol]) {
      ck_assert_int_eq(colvecOrderBuild(&p->aView[iCol], &p->aOrder[iCol]),
                       COLVEC_OK);
      p->abOrder[iCol] = 1;
    }
    memcpy(aSorted, aVal, sizeof(ColvecScalar) * (size_t)nVal);
    if (bIn) nSorted = colvecFilterInSort(aSorted, nVal);
    for (i = 0; i < (bIn ? nSorted : 1); i++) {
      int64_t iLo, iHi, k;
      ck_assert_int_eq(colvecOrderRange(&p->aView[iCol], &p->aOrder[iCol],
                                        bIn ? COLVEC_OP_EQ : eOp, &aSorted[i],
                                        &iLo, &iHi),
                       COLVEC_OK);
      for (k = iLo; k < iHi; k++)
        tfSetBit(aGot, p->aOrder[iCol].aRow[k], 1);
    }
    for (i = 0; i < p->nRow; i++) {
      if (tfBit(aGot, i) != tfBit(aWant, i)) {
        ck_abort_msg("value order of %s, op %d: row %d: sqlite %d order %d",
                     azTfCol[iCol], (int)eOp, i + 1, tfBit(aWant, i),
                     tfBit(aGot, i));
      }
    }
  }
  /* a sparse start: one word in 8 has rows, a few chunks have none */
  for (i = 0; i < nByte; i += 8) {
    int bWord = tfRandInt(8) == 0 && (i / 512) % 3 != 1;
    for (j = i; j < i + 8 && j < nByte; j++) {
      aMask[j] = bWord ? (uint8_t)tfRand() : 0;
    }
  }
  if (p->nRow % 8) aMask[nByte - 1] &= (uint8_t)((1u << (p->nRow % 8)) - 1);
  if (eOp != COLVEC_OP_LIKE && eOp != COLVEC_OP_GLOB) {
    memcpy(aGot, aMask, nByte);
    ck_assert_int_eq(
        colvecFilterEval(&p->aView[iCol], eOp, aVal, nVal, NULL, NULL, aGot),
        COLVEC_OK);
    for (i = 0; i < p->nRow; i++) {
      /* one assertion per mismatch, not per row (each one is a message) */
      if (tfBit(aGot, i) != (tfBit(aMask, i) & tfBit(aWant, i))) {
        ck_abort_msg("sparse evaluation of %s, op %d: row %d: want %d got %d",
                     azTfCol[iCol], (int)eOp, i + 1,
                     tfBit(aMask, i) & tfBit(aWant, i), tfBit(aGot, i));
      }
    }
  }
  free(aGot);
  free(aMask);
}

/*
** Evaluates "column iCol <eOp> aCell[0..nVal)" both ways and checks that the
** bitmaps are equal. Returns the number of rows SQLite found.
*/
static int tfCheck(TfData *p, int iCol, ColvecPlanOp eOp, const TfCell *aCell,
                   int nVal) {
  char zSql[512];
  ColvecScalar aVal[TF_MAX_IN];
  sqlite3_value *apVal[TF_MAX_IN];
  sqlite3_stmt *pStmt = NULL;
  TfMatch match;
  int nByte = (p->nRow + 7) / 8, i, nHit = 0;
  int bMatch = eOp == COLVEC_OP_LIKE || eOp == COLVEC_OP_GLOB;
  int bArg = eOp != COLVEC_OP_ISNULL && eOp != COLVEC_OP_NOTNULL;
  uint8_t *aWant = calloc(nByte + 1, 1);
  uint8_t *aGot = malloc(nByte + 1);
  int n = snprintf(zSql, sizeof(zSql), "SELECT rowid FROM t WHERE ");
  int nEval = nVal; /* values handed to colvecFilterEval */
  ck_assert_int_le(nVal, TF_MAX_IN);
  n += snprintf(zSql + n, sizeof(zSql) - n, tfOpSql(eOp), azTfCol[iCol]);
  if (eOp == COLVEC_OP_IN) {
    for (i = 0; i < nVal; i++) {
      n += snprintf(zSql + n, sizeof(zSql) - n, i ? ",?" : "?");
    }
    snprintf(zSql + n, sizeof(zSql) - n, ")");
  }
  ck_assert_int_eq(sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0), SQLITE_OK);
  for (i = 0; bArg && i < nVal; i++)
    tfBind(pStmt, i + 1, &aCell[i]);
  while (sqlite3_step(pStmt) == SQLITE_ROW) {
    tfSetBit(aWant, sqlite3_column_int64(pStmt, 0) - 1, 1);
    nHit++;
  }
  ck_assert_int_eq(sqlite3_finalize(pStmt), SQLITE_OK);

  for (i = 0; i < nVal; i++) {
    tfScalar(p, iCol, bMatch, &aCell[i], &aVal[i], &apVal[i]);
  }
  /* a long IN list is searched when sorted (every other list is sorted:
  ** member by member otherwise) */
  if (eOp == COLVEC_OP_IN && nVal > COLVEC_FILTER_IN_LINEAR && nVal % 2 == 0) {
    nEval = colvecFilterInSort(aVal, nVal);
  }
  tfMatchOpen(&match, p->db);
  memset(aGot, 0xff, nByte + 1);
  ck_assert_int_eq(colvecFilterEval(&p->aView[iCol], eOp, aVal, nEval, tfMatch,
                                    &match, aGot),
                   COLVEC_OK);
  tfMatchClose(&match);
  tfCheckOther(p, iCol, eOp, aVal, nEval, aWant);
  for (i = 0; i < p->nRow; i++) {
    int bWant = tfBit(aWant, i), bGot = tfBit(aGot, i);
    if (bWant != bGot) {
      char zRow[128], zRhs[128];
      tfDescribe(&p->aCell[iCol][i], zRow, sizeof(zRow));
      tfDescribe(nVal > 0 ? &aCell[0] : &p->aCell[iCol][i], zRhs, sizeof(zRhs));
      ck_abort_msg("%s [?1=%s, %d values] row %d (%s): sqlite %d colvec %d",
                   zSql, zRhs, nVal, i + 1, zRow, bWant, bGot);
    }
  }
  /* one value at a time (colvecFilterScalarPass) decides as SQLite does:
  ** the first 64 rows of each comparison */
  if (eOp >= COLVEC_OP_EQ && eOp <= COLVEC_OP_ISNOT) {
    for (i = 0; i < p->nRow && i < 64; i++) {
      ColvecScalar row;
      memset(&row, 0, sizeof(row));
      TEST_EQ(colvecFilterRowValue(&p->aView[iCol], i, &row), COLVEC_OK);
      TEST_EQ(colvecFilterScalarPass(eOp, &row, &aVal[0]), tfBit(aWant, i));
    }
  }
  for (i = p->nRow; i < nByte * 8; i++)
    TEST_EQ(tfBit(aGot, i), 0);
  ck_assert_int_eq(aGot[nByte], 0xff); /* no write past the bitmap */
  ck_assert_int_eq(colvecBitmapCount(aGot, p->nRow), nHit);
  for (i = 0; i < nVal; i++)
    sqlite3_value_free(apVal[i]);
  free(aWant);
  free(aGot);
  return nHit;
}

/* Fills pCell with a random right-hand side of any type, often a value
** taken from some row of some column. */
static void tfPickRhs(TfData *p, TfCell *pCell) {
  int e = tfRandInt(10);
  if (e < 3) {
    *pCell = p->aCell[tfRandInt(TF_NCOL)][tfRandInt(p->nRow)];
  } else if (e < 7) {
    tfPickForColumn(pCell, tfRandInt(TF_NCOL), 0);
  } else if (e == 7) {
    TfCell c = p->aCell[tfRandInt(2)][tfRandInt(p->nRow)];
    char z[64];
    int n;
    if (c.eType == SQLITE_INTEGER) {
      n = snprintf(z, sizeof(z), "%lld", (long long)c.i);
    } else if (c.eType == SQLITE_FLOAT) {
      n = snprintf(z, sizeof(z), "%.17g", c.r);
    } else {
      n = snprintf(z, sizeof(z), "abc");
    }
    tfSetBytes(pCell, SQLITE_TEXT, z, n < TF_MAXBYTES ? n : TF_MAXBYTES);
  } else if (e == 8) {
    memset(pCell, 0, sizeof(*pCell));
    pCell->eType = SQLITE_NULL;
  } else {
    tfPickReal(pCell);
    if (tfRandInt(2)) pCell->r = floor(pCell->r);
  }
}

/* Every operator against every listed integer, double and text, on columns
** holding those same values (plus NULLs). */
START_TEST(test_extremes) {
  TfData d;
  int iCol, iOp, k;
  /* emulated: fewer random rows; the listed values are all still there */
  tfBuild(&d, testScaled(700, 100), 10);
  /* Put every listed value into the columns, so exact hits exist. */
  for (k = 0; k < (int)(sizeof(aiTfInt) / sizeof(int64_t)); k++) {
    d.aInt[k] = aiTfInt[k];
    tfSetInt(&d.aCell[0][k], aiTfInt[k]);
  }
  for (k = 0; k < (int)(sizeof(arTfReal) / sizeof(double)); k++) {
    d.aReal[k] = arTfReal[k];
    tfSetReal(&d.aCell[1][k], arTfReal[k]);
  }
  {
    sqlite3_stmt *pUp = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(d.db,
                                        "UPDATE t SET a=?, b=? "
                                        "WHERE rowid=?",
                                        -1, &pUp, 0),
                     SQLITE_OK);
    for (k = 0; k < 40; k++) {
      tfBind(pUp, 1, &d.aCell[0][k]);
      tfBind(pUp, 2, &d.aCell[1][k]);
      sqlite3_bind_int(pUp, 3, k + 1);
      ck_assert_int_eq(sqlite3_step(pUp), SQLITE_DONE);
      sqlite3_reset(pUp);
    }
    sqlite3_finalize(pUp);
    for (k = 0; k < 40; k++) { /* NULL bits follow the cells again */
      int iC;
      for (iC = 0; iC < 2; iC++) {
        d.aNull[iC][k >> 3] &= (uint8_t) ~(1 << (k & 7));
        tfSetBit(d.aNull[iC], k, d.aCell[iC][k].eType == SQLITE_NULL);
      }
    }
  }
  for (iCol = 0; iCol < TF_NCOL; iCol++) {
    for (iOp = COLVEC_OP_EQ; iOp <= COLVEC_OP_GLOB; iOp++) {
      TfCell c;
      for (k = 0; k < (int)(sizeof(aiTfInt) / sizeof(int64_t)); k++) {
        tfSetInt(&c, aiTfInt[k]);
        tfCheck(&d, iCol, (ColvecPlanOp)iOp, &c, 1);
      }
      for (k = 0; k < (int)(sizeof(arTfReal) / sizeof(double)); k++) {
        tfSetReal(&c, arTfReal[k]);
        tfCheck(&d, iCol, (ColvecPlanOp)iOp, &c, 1);
        tfSetReal(&c, -arTfReal[k]);
        tfCheck(&d, iCol, (ColvecPlanOp)iOp, &c, 1);
      }
      tfSetReal(&c, INFINITY);
      tfCheck(&d, iCol, (ColvecPlanOp)iOp, &c, 1);
      tfSetReal(&c, -INFINITY);
      tfCheck(&d, iCol, (ColvecPlanOp)iOp, &c, 1);
      for (k = 0; k < (int)(sizeof(azTfText) / sizeof(char *)); k++) {
        tfSetBytes(&c, SQLITE_TEXT, azTfText[k], (int)strlen(azTfText[k]));
        tfCheck(&d, iCol, (ColvecPlanOp)iOp, &c, 1);
        tfSetBytes(&c, SQLITE_BLOB, azTfText[k], (int)strlen(azTfText[k]));
        tfCheck(&d, iCol, (ColvecPlanOp)iOp, &c, 1);
      }
      memset(&c, 0, sizeof(c));
      c.eType = SQLITE_NULL;
      tfCheck(&d, iCol, (ColvecPlanOp)iOp, &c, 1);
    }
  }
  tfFree(&d);
}
END_TEST

/* Thousands of random (column, operator, value) triples, including IN lists
** with duplicates and NULLs, short and long (searched when sorted), over
** 5000 rows (two chunks, a partial word). */
START_TEST(test_random) {
  TfData d;
  int iRound, nNonEmpty = 0, nRound = testScaled(4000, 400);
  tfBuild(&d, 5000 + 37, 12);
  for (iRound = 0; iRound < nRound; iRound++) {
    TfCell aCell[TF_MAX_IN];
    int iCol = tfRandInt(TF_NCOL), nVal = 1, i;
    ColvecPlanOp eOp =
        (ColvecPlanOp)(COLVEC_OP_EQ +
                       tfRandInt(COLVEC_OP_IN - COLVEC_OP_EQ + 1));
    if (eOp == COLVEC_OP_IN) {
      nVal = tfRandInt(2) ? tfRandInt(7)
                          : COLVEC_FILTER_IN_LINEAR + 1 +
                                tfRandInt(TF_MAX_IN - COLVEC_FILTER_IN_LINEAR);
    }
    for (i = 0; i < nVal; i++) {
      if (i > 0 && tfRandInt(4) == 0)
        aCell[i] = aCell[tfRandInt(i)];
      else
        tfPickRhs(&d, &aCell[i]);
    }
    if (eOp == COLVEC_OP_ISNULL || eOp == COLVEC_OP_NOTNULL) nVal = 0;
    /* LIKE/GLOB ask SQLite row by row: one round in four is enough */
    if ((eOp == COLVEC_OP_LIKE || eOp == COLVEC_OP_GLOB) && iRound % 4) {
      continue;
    }
    if (tfCheck(&d, iCol, eOp, aCell, nVal) > 0) nNonEmpty++;
  }
  /* The comparisons were not all trivially empty. */
  ck_assert_int_gt(nNonEmpty, nRound * 7 / 20);
  tfFree(&d);
}
END_TEST

/* Columns without a NULL bitmap and row counts around word and chunk
** boundaries. */
START_TEST(test_sizes) {
  static const int anRow[] = {1, 7, 8, 63, 64, 65, 4095, 4096, 4097, 8200};
  int iSize;
  for (iSize = 0; iSize < (int)(sizeof(anRow) / sizeof(int)); iSize++) {
    TfData d;
    int iRound, iCol;
    tfBuild(&d, anRow[iSize], 0);
    for (iCol = 0; iCol < TF_NCOL; iCol++)
      d.aView[iCol].aNull = NULL;
    for (iRound = 0; iRound < testScaled(120, 24); iRound++) {
      TfCell c;
      ColvecPlanOp eOp = (ColvecPlanOp)(COLVEC_OP_EQ + iRound % 12);
      tfPickRhs(&d, &c);
      tfCheck(&d, iRound % TF_NCOL, eOp, &c, 1);
    }
    tfFree(&d);
  }
}
END_TEST

/* colvecFilterInSort and colvecFilterInHas: SQLite's equality across
** types (5 = 5.0, 2^53 + 1 != 2^53 as a double, text != blob, a NULL or NaN
** member never matches), duplicates dropped. */
START_TEST(test_in_sorted) {
  ColvecScalar a[9], v;
  int n, i;
  memset(a, 0, sizeof(a));
  memset(&v, 0, sizeof(v));
  a[0].eType = COLVEC_TYPE_TEXT, a[0].z = (const uint8_t *)"ab", a[0].n = 2;
  a[1].eType = COLVEC_TYPE_FLOAT, a[1].r = 5.0;
  a[2].eType = COLVEC_TYPE_NULL;
  a[3].eType = COLVEC_TYPE_INTEGER, a[3].i = 5;
  a[4].eType = COLVEC_TYPE_BLOB, a[4].z = (const uint8_t *)"ab", a[4].n = 2;
  a[5].eType = COLVEC_TYPE_FLOAT, a[5].r = NAN;
  a[6].eType = COLVEC_TYPE_INTEGER, a[6].i = (1LL << 53) + 1;
  a[7].eType = COLVEC_TYPE_TEXT, a[7].z = (const uint8_t *)"a", a[7].n = 1;
  a[8].eType = COLVEC_TYPE_FLOAT, a[8].r = -0.0;
  n = colvecFilterInSort(a, 9);
  ck_assert_int_eq(n, 6); /* NULL, NaN and one of 5 / 5.0 dropped */
  for (i = 1; i < n; i++) /* numbers, then text, then blob */
    ck_assert_int_le(a[i - 1].eType == COLVEC_TYPE_FLOAT ? 1 : a[i - 1].eType,
                     a[i].eType == COLVEC_TYPE_FLOAT ? 1 : a[i].eType);
  v.eType = COLVEC_TYPE_INTEGER, v.i = 5;
  ck_assert_int_eq(colvecFilterInHas(a, n, &v), 1);
  v.eType = COLVEC_TYPE_FLOAT, v.r = 5.0;
  ck_assert_int_eq(colvecFilterInHas(a, n, &v), 1);
  v.eType = COLVEC_TYPE_INTEGER, v.i = 0; /* = -0.0 */
  ck_assert_int_eq(colvecFilterInHas(a, n, &v), 1);
  v.eType = COLVEC_TYPE_FLOAT, v.r = 9007199254740992.0; /* 2^53 */
  ck_assert_int_eq(colvecFilterInHas(a, n, &v), 0);
  v.eType = COLVEC_TYPE_INTEGER, v.i = (1LL << 53) + 1;
  ck_assert_int_eq(colvecFilterInHas(a, n, &v), 1);
  v.eType = COLVEC_TYPE_FLOAT, v.r = 5.5;
  ck_assert_int_eq(colvecFilterInHas(a, n, &v), 0);
  v.eType = COLVEC_TYPE_TEXT, v.z = (const uint8_t *)"ab", v.n = 2;
  ck_assert_int_eq(colvecFilterInHas(a, n, &v), 1);
  v.n = 1;
  ck_assert_int_eq(colvecFilterInHas(a, n, &v), 1);
  v.eType = COLVEC_TYPE_BLOB;
  ck_assert_int_eq(colvecFilterInHas(a, n, &v), 0); /* only "ab" as a blob */
  v.eType = COLVEC_TYPE_NULL;
  ck_assert_int_eq(colvecFilterInHas(a, n, &v), 0);
  v.eType = COLVEC_TYPE_FLOAT, v.r = NAN;
  ck_assert_int_eq(colvecFilterInHas(a, n, &v), 0);
  ck_assert_int_eq(colvecFilterInSort(a, 0), 0);
  ck_assert_int_eq(colvecFilterInHas(a, 0, &v), 0);
}
END_TEST

/* A long sorted IN list over many rows costs rows x log(values), not rows x
** values: 200,000 members over 400,000 rows evaluate in a fraction of the
** 8e10 comparisons a member-by-member pass would need (checked by the
** result here; the work bound is what lets the suite finish at all). */
START_TEST(test_in_long) {
  enum { N_ROW = 400000, N_VAL = 200000 };
  ColvecColumnView v;
  int64_t *aInt = malloc(sizeof(int64_t) * N_ROW);
  ColvecScalar *aVal = malloc(sizeof(ColvecScalar) * N_VAL);
  uint8_t *aBits = malloc(N_ROW / 8);
  int i, n;
  for (i = 0; i < N_ROW; i++)
    aInt[i] = (int64_t)(N_ROW - i);
  memset(aVal, 0, sizeof(ColvecScalar) * N_VAL);
  for (i = 0; i < N_VAL; i++) { /* the odd numbers, in no order */
    aVal[i].eType = COLVEC_TYPE_INTEGER;
    aVal[i].i = (int64_t)((i * 7919LL) % N_VAL) * 2 + 1;
  }
  memset(&v, 0, sizeof(v));
  v.eStore = COLVEC_STORE_INT64;
  v.nRow = N_ROW;
  v.aInt = aInt;
  n = colvecFilterInSort(aVal, N_VAL);
  ck_assert_int_eq(n, N_VAL);
  memset(aBits, 0xff, N_ROW / 8);
  ck_assert_int_eq(
      colvecFilterEval(&v, COLVEC_OP_IN, aVal, n, NULL, NULL, aBits),
      COLVEC_OK);
  ck_assert_int_eq(colvecBitmapCount(aBits, N_ROW), N_ROW / 2);
  for (i = 0; i < N_ROW; i++)
    TEST_EQ((aBits[i >> 3] >> (i & 7)) & 1, (int)(aInt[i] & 1));
  free(aInt);
  free(aVal);
  free(aBits);
}
END_TEST

/* ANDing: a second constraint keeps only rows that pass both. */
START_TEST(test_and) {
  TfData d;
  uint8_t *aA, *aB, *aBoth;
  ColvecScalar v;
  int i, nByte;
  tfBuild(&d, 3000, 10);
  nByte = (d.nRow + 7) / 8;
  aA = malloc(nByte);
  aB = malloc(nByte);
  aBoth = malloc(nByte);
  memset(aA, 0xff, nByte);
  memset(aB, 0xff, nByte);
  memset(aBoth, 0xff, nByte);
  memset(&v, 0, sizeof(v));
  v.eType = COLVEC_TYPE_INTEGER;
  v.i = 0;
  ck_assert_int_eq(
      colvecFilterEval(&d.aView[0], COLVEC_OP_GE, &v, 1, NULL, NULL, aA),
      COLVEC_OK);
  ck_assert_int_eq(
      colvecFilterEval(&d.aView[0], COLVEC_OP_GE, &v, 1, NULL, NULL, aBoth),
      COLVEC_OK);
  v.eType = COLVEC_TYPE_FLOAT;
  v.r = 0.25;
  ck_assert_int_eq(
      colvecFilterEval(&d.aView[1], COLVEC_OP_LT, &v, 1, NULL, NULL, aB),
      COLVEC_OK);
  ck_assert_int_eq(
      colvecFilterEval(&d.aView[1], COLVEC_OP_LT, &v, 1, NULL, NULL, aBoth),
      COLVEC_OK);
  for (i = 0; i < nByte; i++)
    ck_assert_int_eq(aBoth[i], aA[i] & aB[i]);
  ck_assert_int_gt(colvecBitmapCount(aBoth, d.nRow), 0);
  ck_assert_int_lt(colvecBitmapCount(aBoth, d.nRow),
                   colvecBitmapCount(aA, d.nRow));
  free(aA);
  free(aB);
  free(aBoth);
  tfFree(&d);
}
END_TEST

/*
** Value orders on their own: an empty and an all-NULL column, equal values
** kept in row order, a malformed text column refused, an operator the
** order does not answer, and NULL and NaN values passing nothing.
*/
START_TEST(test_order) {
  ColvecColumnView v;
  ColvecOrder o;
  ColvecScalar x;
  int64_t aInt[6] = {5, -1, 5, 7, 5, -1};
  int64_t aOff[4] = {0, 1, 0, 2};
  uint8_t aNull[1] = {0x3f}, aByte[4] = {'a', 'b', 'c', 'd'};
  int64_t iLo, iHi;
  memset(&v, 0, sizeof(v));
  memset(&x, 0, sizeof(x));
  v.eStore = COLVEC_STORE_INT64;
  ck_assert_int_eq(colvecOrderBuild(&v, &o), COLVEC_OK); /* no rows */
  ck_assert_int_eq(o.nValue, 0);
  colvecOrderFree(&o);
  v.nRow = 6;
  v.aInt = aInt;
  v.aNull = aNull;
  ck_assert_int_eq(colvecOrderBuild(&v, &o), COLVEC_OK); /* all NULL */
  ck_assert_int_eq(o.nValue, 0);
  colvecOrderFree(&o);
  aNull[0] = 0x02; /* row 1 is NULL */
  ck_assert_int_eq(colvecOrderBuild(&v, &o), COLVEC_OK);
  ck_assert_int_eq(o.nValue, 5);
  ck_assert_int_eq(o.aRow[0], 5); /* -1 */
  ck_assert_int_eq(o.aRow[1], 0); /* the 5s, by row */
  ck_assert_int_eq(o.aRow[2], 2);
  ck_assert_int_eq(o.aRow[3], 4);
  ck_assert_int_eq(o.aRow[4], 3); /* 7 */
  x.eType = COLVEC_TYPE_FLOAT;
  x.r = 5.0;
  ck_assert_int_eq(colvecOrderRange(&v, &o, COLVEC_OP_EQ, &x, &iLo, &iHi),
                   COLVEC_OK);
  ck_assert_int_eq(iLo, 1);
  ck_assert_int_eq(iHi, 4);
  x.r = 5.5;
  ck_assert_int_eq(colvecOrderRange(&v, &o, COLVEC_OP_GT, &x, &iLo, &iHi),
                   COLVEC_OK);
  ck_assert_int_eq(iHi - iLo, 1);
  x.r = NAN;
  ck_assert_int_eq(colvecOrderRange(&v, &o, COLVEC_OP_LE, &x, &iLo, &iHi),
                   COLVEC_OK);
  ck_assert_int_eq(iHi - iLo, 0);
  x.eType = COLVEC_TYPE_NULL;
  ck_assert_int_eq(colvecOrderRange(&v, &o, COLVEC_OP_GE, &x, &iLo, &iHi),
                   COLVEC_OK);
  ck_assert_int_eq(iHi - iLo, 0);
  x.eType = COLVEC_TYPE_INTEGER;
  x.i = 5;
  ck_assert_int_eq(colvecOrderHandles(COLVEC_OP_NE), 0);
  ck_assert_int_eq(colvecOrderRange(&v, &o, COLVEC_OP_NE, &x, &iLo, &iHi),
                   COLVEC_ERROR);
  v.nRow = 5; /* not the column it was built from */
  ck_assert_int_eq(colvecOrderRange(&v, &o, COLVEC_OP_EQ, &x, &iLo, &iHi),
                   COLVEC_ERROR);
  colvecOrderFree(&o);
  ck_assert_ptr_null(o.aRow);

  memset(&v, 0, sizeof(v));
  v.eStore = COLVEC_STORE_TEXT;
  v.nRow = 3;
  v.aOff = aOff;
  v.aByte = aByte;
  v.nByte = 4;
  ck_assert_int_eq(colvecOrderBuild(&v, &o), COLVEC_ERROR); /* decreasing */
  ck_assert_ptr_null(o.aRow);
  aOff[2] = 1;
  ck_assert_int_eq(colvecOrderBuild(&v, &o), COLVEC_OK);
  ck_assert_int_eq(o.nValue, 3);
  ck_assert_int_eq(o.aRow[0], 1); /* "" */
  ck_assert_int_eq(o.aRow[1], 0); /* "a" */
  ck_assert_int_eq(o.aRow[2], 2); /* "b" */
  colvecOrderFree(&o);
  v.aOff = NULL;
  ck_assert_int_eq(colvecOrderBuild(&v, &o), COLVEC_ERROR);
  ck_assert_int_eq(colvecOrderBuild(NULL, &o), COLVEC_ERROR);
}
END_TEST

/*
** The directory of runs a column of few distinct values gets: an int64, a
** double (0.0 and -0.0 one value) and a text column with NULLs. Every
** operator the order answers, on each stored value and between and beyond
** them, finds the same entries through the directory as through the rows
** (the same order without it), and the passing rows are those a test of
** every row passes.
*/
START_TEST(test_order_runs) {
  static const char *const azText[] = {"", "a", "ab", "b", "ba"};
  static const ColvecPlanOp aeOp[] = {COLVEC_OP_EQ, COLVEC_OP_IS, COLVEC_OP_LT,
                                      COLVEC_OP_LE, COLVEC_OP_GT, COLVEC_OP_GE};
  enum { N = 1000 };
  int64_t aInt[N], aOff[N + 1];
  double aReal[N];
  uint8_t aNull[N / 8 + 1], aByte[N * 2];
  int i, iStore, iOp, iProbe;
  memset(aNull, 0, sizeof(aNull));
  aOff[0] = 0;
  for (i = 0; i < N; i++) {
    const char *z = azText[(i * 3) % 5];
    aInt[i] = (i * 7) % 13 - 6;
    aReal[i] = ((i * 5) % 11) * 0.5 - 2.0;
    if (aReal[i] == 0.0 && i % 2) aReal[i] = -0.0;
    memcpy(aByte + aOff[i], z, strlen(z));
    aOff[i + 1] = aOff[i] + (int64_t)strlen(z);
    if (i % 9 == 4) aNull[i >> 3] |= (uint8_t)(1u << (i & 7));
  }
  for (iStore = 0; iStore < 3; iStore++) {
    ColvecColumnView v;
    ColvecOrder o, bare;
    memset(&v, 0, sizeof(v));
    v.eStore = iStore == 0   ? COLVEC_STORE_INT64
               : iStore == 1 ? COLVEC_STORE_DOUBLE
                             : COLVEC_STORE_TEXT;
    v.nRow = N;
    v.aInt = aInt;
    v.aReal = aReal;
    v.aOff = iStore == 2 ? aOff : NULL;
    v.aByte = iStore == 2 ? aByte : NULL;
    v.nByte = aOff[N];
    v.aNull = aNull;
    ck_assert_int_eq(colvecOrderBuild(&v, &o), COLVEC_OK);
    ck_assert_ptr_nonnull(o.aRunStart);
    ck_assert_int_eq(o.nRun, iStore == 0 ? 13 : iStore == 1 ? 11 : 5);
    ck_assert_int_eq(o.aRunStart[0], 0);
    ck_assert_int_eq(o.aRunStart[o.nRun], o.nValue);
    if (iStore == 0) ck_assert_ptr_nonnull(o.aRunInt);
    if (iStore == 1) ck_assert_ptr_nonnull(o.aRunReal);
    if (iStore == 2) {
      ck_assert_ptr_null(o.aRunInt);
      ck_assert_ptr_null(o.aRunReal);
    }
    bare = o;
    bare.aRunStart = NULL;
    bare.aRunInt = NULL;
    bare.aRunReal = NULL;
    for (iOp = 0; iOp < (int)(sizeof(aeOp) / sizeof(aeOp[0])); iOp++) {
      for (iProbe = 0; iProbe < 40; iProbe++) {
        ColvecScalar x;
        int64_t iLo, iHi, jLo, jHi, k, nWant = 0;
        memset(&x, 0, sizeof(x));
        if (iStore == 2) {
          static const char *const azProbe[] = {"",  "a",  "aa", "ab", "abc",
                                                "b", "ba", "bb", "c",  "0"};
          const char *z = azProbe[iProbe % 10];
          x.eType = COLVEC_TYPE_TEXT;
          x.z = (const uint8_t *)z;
          x.n = (int)strlen(z);
        } else if (iProbe % 2) {
          x.eType = COLVEC_TYPE_FLOAT;
          x.r = iProbe / 4.0 - 5.0; /* on values, between and beyond */
        } else {
          x.eType = COLVEC_TYPE_INTEGER;
          x.i = iProbe / 2 - 10;
        }
        ck_assert_int_eq(colvecOrderRange(&v, &o, aeOp[iOp], &x, &iLo, &iHi),
                         COLVEC_OK);
        ck_assert_int_eq(colvecOrderRange(&v, &bare, aeOp[iOp], &x, &jLo, &jHi),
                         COLVEC_OK);
        ck_assert_int_eq(iLo, jLo);
        ck_assert_int_eq(iHi, jHi);
        for (k = 0; k < N; k++) {
          ColvecScalar r;
          int c;
          TEST_EQ(colvecFilterRowValue(&v, k, &r), COLVEC_OK);
          if (r.eType == COLVEC_TYPE_NULL) continue;
          c = colvecFilterCompare(&r, &x);
          switch (aeOp[iOp]) {
          case COLVEC_OP_LT:
            nWant += c < 0;
            break;
          case COLVEC_OP_LE:
            nWant += c <= 0;
            break;
          case COLVEC_OP_GT:
            nWant += c > 0;
            break;
          case COLVEC_OP_GE:
            nWant += c >= 0;
            break;
          default:
            nWant += c == 0;
            break;
          }
        }
        ck_assert_int_eq(iHi - iLo, nWant);
      }
    }
    colvecOrderFree(&o);
    ck_assert_ptr_null(o.aRunStart);
  }
}
END_TEST

/* Malformed views, values and operators give COLVEC_ERROR. */
START_TEST(test_errors) {
  int64_t aInt[4] = {1, 2, 3, 4};
  int64_t aOff[5] = {0, 1, 2, 3, 4};
  const uint8_t aByte[4] = {'a', 'b', 'c', 'd'};
  uint8_t aBits[1] = {0xff};
  ColvecColumnView v;
  ColvecScalar s;
  memset(&s, 0, sizeof(s));
  s.eType = COLVEC_TYPE_INTEGER;

  memset(&v, 0, sizeof(v));
  v.eStore = COLVEC_STORE_INT64;
  v.nRow = 4;
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_EQ, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR); /* no aInt */
  v.aInt = aInt;
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_EQ, &s, 1, 0, 0, aBits),
                   COLVEC_OK);
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_MATCH, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR);
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_K, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR);
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_EQ, NULL, 1, 0, 0, aBits),
                   COLVEC_ERROR);
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_EQ, &s, 0, 0, 0, aBits),
                   COLVEC_ERROR);
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_IN, &s, -1, 0, 0, aBits),
                   COLVEC_ERROR);
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_ISNULL, NULL, 0, 0, 0, aBits),
                   COLVEC_OK);
  s.eType = 9;
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_LT, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR);
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_IN, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR);
  s.eType = COLVEC_TYPE_TEXT;
  s.n = 3; /* z NULL */
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_LT, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR);
  s.n = -1;
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_LT, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR);
  s.n = 0;
  v.eStore = 99;
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_LT, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR);
  v.eStore = COLVEC_STORE_INT64;
  v.nRow = -1;
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_LT, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR);

  memset(&v, 0, sizeof(v));
  v.eStore = COLVEC_STORE_TEXT;
  v.nRow = 4;
  v.aByte = aByte;
  v.nByte = 4;
  s.eType = COLVEC_TYPE_TEXT;
  s.z = aByte;
  s.n = 1;
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_EQ, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR); /* no offsets */
  v.aOff = aOff;
  aBits[0] = 0xff;
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_EQ, &s, 1, 0, 0, aBits),
                   COLVEC_OK);
  ck_assert_int_eq(aBits[0], 0x01);
  v.nByte = 3; /* last offset past the bytes */
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_EQ, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR);
  v.nByte = 4;
  aOff[2] = 0; /* decreasing */
  aBits[0] = 0x0f;
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_EQ, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR);
  aBits[0] = 0x0f;
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_GT, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR);
  /* rows an earlier filter excluded are not read at all */
  aBits[0] = 0;
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_GT, &s, 1, 0, 0, aBits),
                   COLVEC_OK);
  aBits[0] = 0x0f;
  {
    sqlite3 *db = NULL;
    TfMatch match;
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    tfMatchOpen(&match, db);
    ck_assert_int_eq(
        colvecFilterEval(&v, COLVEC_OP_LIKE, &s, 1, tfMatch, &match, aBits),
        COLVEC_ERROR);
    tfMatchClose(&match);
    sqlite3_close(db);
  }
  aOff[0] = -1;
  aOff[2] = 2;
  ck_assert_int_eq(colvecFilterEval(&v, COLVEC_OP_EQ, &s, 1, 0, 0, aBits),
                   COLVEC_ERROR);
}
END_TEST

/* LIKE over an integer column through the matcher: the integers as SQLite
** renders them, the NULL rows decided by one call, a failing matcher
** stopping the evaluation, and no matcher keeping every non-NULL row. */
START_TEST(test_match) {
  int64_t aInt[4] = {1, 12, 0, -21};
  uint8_t aNull[1] = {0x04}; /* row 2 is NULL */
  uint8_t aBits[1];
  ColvecColumnView v;
  ColvecScalar pat;
  TfMatch match;
  sqlite3 *db = NULL;
  memset(&v, 0, sizeof(v));
  v.eStore = COLVEC_STORE_INT64;
  v.nRow = 4;
  v.aInt = aInt;
  v.aNull = aNull;
  memset(&pat, 0, sizeof(pat));
  pat.eType = COLVEC_TYPE_TEXT;
  pat.z = (const uint8_t *)"%1%";
  pat.n = 3;
  ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
  tfMatchOpen(&match, db);
  aBits[0] = 0xff;
  ck_assert_int_eq(
      colvecFilterEval(&v, COLVEC_OP_LIKE, &pat, 1, tfMatch, &match, aBits),
      COLVEC_OK);
  ck_assert_int_eq(aBits[0], 0x0b);
  ck_assert_int_eq(match.nCall, 4); /* the NULL rows once, 3 other rows */
  pat.z = (const uint8_t *)"-*";
  pat.n = 2;
  aBits[0] = 0xff;
  match.nCall = 0;
  ck_assert_int_eq(
      colvecFilterEval(&v, COLVEC_OP_GLOB, &pat, 1, tfMatch, &match, aBits),
      COLVEC_OK);
  ck_assert_int_eq(aBits[0], 0x08);
  match.nCall = 0;
  match.nFailAt = 1; /* the NULL rows' call */
  ck_assert_int_eq(
      colvecFilterEval(&v, COLVEC_OP_LIKE, &pat, 1, tfMatch, &match, aBits),
      COLVEC_FILTER_ABORT);
  match.nCall = 0;
  match.nFailAt = 3; /* a row's call */
  ck_assert_int_eq(
      colvecFilterEval(&v, COLVEC_OP_LIKE, &pat, 1, tfMatch, &match, aBits),
      COLVEC_FILTER_ABORT);
  aBits[0] = 0xff;
  ck_assert_int_eq(
      colvecFilterEval(&v, COLVEC_OP_LIKE, &pat, 1, NULL, NULL, aBits),
      COLVEC_OK);
  ck_assert_int_eq(aBits[0], 0x0b); /* permissive: the non-NULL rows */
  tfMatchClose(&match);
  sqlite3_close(db);
}
END_TEST

/* Returns seconds on the monotonic clock (the os layer's). */
static double tfNow(void) { return colvecOsMicros() * 1e-6; }

/*
** Evaluates filter (eOp, *pVal) over view pView into aBits five times
** (each from an all-set bitmap) and returns the fastest run, in seconds.
*/
static double tfBestEval(const ColvecColumnView *pView, ColvecPlanOp eOp,
                         const ColvecScalar *pVal, uint8_t *aBits) {
  double rBest = 1e9;
  int iRep;
  for (iRep = 0; iRep < 5; iRep++) {
    double t0;
    memset(aBits, 0xff, (size_t)(pView->nRow + 7) / 8);
    t0 = tfNow();
    colvecFilterEval(pView, eOp, pVal, 1, NULL, NULL, aBits);
    t0 = tfNow() - t0;
    if (t0 < rBest) rBest = t0;
  }
  return rBest;
}

/* Prints the throughput of "int64 >= x" and "text = x" over 10M rows
** (COLVEC_FILTER_BENCH only; a measurement, not a test). */
static void tfBench(void) {
  const int64_t nRow = 10000000;
  int64_t i, nSet = 0;
  ColvecColumnView v;
  ColvecScalar s;
  uint8_t *aBits = malloc((nRow + 7) / 8);
  int64_t *aInt = malloc(nRow * sizeof(int64_t));
  int64_t *aOff = malloc((nRow + 1) * sizeof(int64_t));
  uint8_t *aByte = malloc(nRow * 8);
  double rBest;
  aOff[0] = 0;
  for (i = 0; i < nRow; i++) {
    int n = 1 + (int)(tfRand() % 8), k;
    aInt[i] = (int64_t)(tfRand() % 1000000);
    for (k = 0; k < n; k++)
      aByte[aOff[i] + k] = "abcd"[tfRand() % 4];
    aOff[i + 1] = aOff[i] + n;
  }
  memset(&v, 0, sizeof(v));
  memset(&s, 0, sizeof(s));
  v.eStore = COLVEC_STORE_INT64;
  v.nRow = nRow;
  v.aInt = aInt;
  s.eType = COLVEC_TYPE_INTEGER;
  s.i = 500000;
  rBest = tfBestEval(&v, COLVEC_OP_GE, &s, aBits);
  nSet = colvecBitmapCount(aBits, nRow);
  printf("bench int64 >= x: 10M rows, best of 5 %.2f ms = %.0f Mrows/s "
         "(%lld pass)\n",
         rBest * 1e3, nRow / rBest / 1e6, (long long)nSet);
  v.eStore = COLVEC_STORE_TEXT;
  v.aOff = aOff;
  v.aByte = aByte;
  v.nByte = aOff[nRow];
  s.eType = COLVEC_TYPE_TEXT;
  s.z = (const uint8_t *)"abca";
  s.n = 4;
  rBest = tfBestEval(&v, COLVEC_OP_EQ, &s, aBits);
  nSet = colvecBitmapCount(aBits, nRow);
  printf("bench text = x:   10M rows, best of 5 %.2f ms = %.0f Mrows/s "
         "(%lld pass)\n",
         rBest * 1e3, nRow / rBest / 1e6, (long long)nSet);
  free(aBits);
  free(aInt);
  free(aOff);
  free(aByte);
}

/*
** colvecBitmapNext finds every set bit in order, and nothing past nRow,
** on random bitmaps of every density (all clear to all set) and sizes
** that end inside a byte, with stray set bits beyond nRow.
*/
START_TEST(test_bitmap_next) {
  static const int anRow[] = {0, 1, 7, 8, 9, 63, 64, 65, 1000, 4099};
  static const int anPerMille[] = {0, 1, 50, 500, 999, 1000};
  uint8_t aBits[4099 / 8 + 2];
  uint64_t iState = 7;
  int r, d;
  for (r = 0; r < (int)(sizeof(anRow) / sizeof(anRow[0])); r++) {
    for (d = 0; d < (int)(sizeof(anPerMille) / sizeof(anPerMille[0])); d++) {
      int64_t nRow = anRow[r], i, iNext = -1, nSeen = 0;
      memset(aBits, 0xff, sizeof(aBits)); /* bits past nRow stay set */
      for (i = 0; i < nRow; i++) {
        iState = iState * 6364136223846793005ULL + 1442695040888963407ULL;
        if ((int)((iState >> 33) % 1000) >= anPerMille[d]) {
          aBits[i >> 3] &= (uint8_t) ~(1u << (i & 7));
        }
      }
      for (i = 0; i < nRow; i++) {
        int bSet = (aBits[i >> 3] >> (i & 7)) & 1;
        if (iNext < i) iNext = colvecBitmapNext(aBits, i, nRow);
        if (bSet) {
          ck_assert_int_eq(iNext, i);
          nSeen++;
        } else {
          ck_assert_int_gt(iNext, i);
        }
      }
      ck_assert_int_eq(colvecBitmapNext(aBits, nRow, nRow), nRow);
      ck_assert_int_eq(nSeen, colvecBitmapCount(aBits, nRow));
    }
  }
}
END_TEST

/* Builds the suite. */
static Suite *tfSuite(void) {
  Suite *s = suite_create("filter");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_extremes);
  tcase_add_test(tc, test_random);
  tcase_add_test(tc, test_sizes);
  tcase_add_test(tc, test_and);
  tcase_add_test(tc, test_in_sorted);
  tcase_add_test(tc, test_in_long);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_order);
  tcase_add_test(tc, test_order_runs);
  tcase_add_test(tc, test_match);
  tcase_add_test(tc, test_bitmap_next);
  suite_add_tcase(s, tc);
  return s;
}

/* Runs the suite; exits non-zero on failure. */
int main(void) {
  SRunner *sr = srunner_create(tfSuite());
  int nFail;
  if (getenv("COLVEC_FILTER_BENCH")) tfBench();
  srunner_run_all(sr, CK_NORMAL);
  nFail = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nFail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
