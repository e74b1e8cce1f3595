/*
** colvec_filter.h — evaluation of pushed-down WHERE constraints over one
** segment's attribute columns, column by column, into a bitmap of passing
** rows (SQLite-free). Implemented in colvec_filter.c.
**
** The result must never exclude a row that SQLite's own comparison accepts
** (SQLite re-checks every returned row, so keeping a failing row is only a
** waste). Every operator is exact except where noted below ("permissive").
**
** Semantics (BINARY collation), with v the column value and x the value:
**   - EQ NE LT LE GT GE and IN: false when v or x is NULL (an IN member that
**     is NULL never matches).
**   - IS / ISNOT treat NULL as a value; ISNULL / NOTNULL ignore x.
**   - Values of different classes order NULL < numbers < text < blob.
**   - Integer against real is compared exactly (as sqlite3IntFloatCompare:
**     2^53+1 > 9007199254740992.0, no rounding of either side); -0.0 == 0.0.
**   - Text and blob compare with memcmp, then the shorter first.
**   - LIKE / GLOB: xMatch(pCtx, mFlags, pPattern, pRow) decides every row,
**     given the pattern as it came (no affinity) and the row's value as the
**     column holds it (INTEGER for an INT64 column, FLOAT for a DOUBLE one,
**     TEXT or BLOB bytes, NULL). The NULL rows are decided by one call with
**     a NULL pRow. The caller evaluates them as the SQLite it runs on does
**     (its rendering of numbers as text, PRAGMA case_sensitive_like, an
**     application's like() or glob()), so the result is exact. Permissive:
**     with a NULL xMatch every non-NULL row passes.
** The caller has already given x the column's affinity, as SQLite would
** when comparing the column with a value that has no affinity.
*/
#ifndef COLVEC_FILTER_H
#define COLVEC_FILTER_H

#include "colvec_core.h"
#include "colvec_plan.h"

/* Storage kinds of one attribute column in a segment. */
#define COLVEC_STORE_INT64 1  /* ATTR_FIXED int64 */
#define COLVEC_STORE_DOUBLE 2 /* ATTR_FIXED double (COLVEC_SEGF_REAL) */
#define COLVEC_STORE_TEXT 3   /* VAROFFSETS + VARBYTES, UTF-8 text */
#define COLVEC_STORE_BLOB 4   /* VAROFFSETS + VARBYTES, raw bytes */

/* Value types of a ColvecScalar: SQLite's fundamental datatype numbers. */
#define COLVEC_TYPE_INTEGER 1 /* i holds the value */
#define COLVEC_TYPE_FLOAT 2   /* r holds the value (NaN counts as NULL) */
#define COLVEC_TYPE_TEXT 3    /* z[0..n) holds UTF-8 bytes */
#define COLVEC_TYPE_BLOB 4    /* z[0..n) holds the bytes */
#define COLVEC_TYPE_NULL 5    /* no value */

/* The right-hand side of a constraint, after the column's affinity. */
typedef struct ColvecScalar ColvecScalar;
struct ColvecScalar {
  int eType;        /* COLVEC_TYPE_* */
  int64_t i;        /* value when eType is INTEGER */
  double r;         /* value when eType is FLOAT */
  const uint8_t *z; /* bytes when eType is TEXT or BLOB (may be NULL if n=0) */
  int n;            /* number of bytes at z */
};

/* One stored attribute column of one segment, as pointers into memory. */
typedef struct ColvecColumnView ColvecColumnView;
struct ColvecColumnView {
  int eStore;           /* COLVEC_STORE_* */
  int64_t nRow;         /* rows in the segment */
  const int64_t *aInt;  /* INT64: nRow values (NULL rows hold anything) */
  const double *aReal;  /* DOUBLE: nRow values, never NaN */
  const int64_t *aOff;  /* TEXT/BLOB: nRow+1 offsets into aByte */
  const uint8_t *aByte; /* TEXT/BLOB: the bytes (text has no NUL added) */
  int64_t nByte;        /* TEXT/BLOB: bytes at aByte (aOff[nRow] <= it) */
  const uint8_t *aNull; /* (nRow+7)/8 bytes, bit i = row i is NULL; or NULL */
};

/* Flags of a ColvecMatchFunc call. */
#define COLVEC_MATCH_GLOB 1 /* GLOB; LIKE when clear */

/* Members of an IN list up to which colvecFilterEval tests each member
** over the rows; a longer list in colvecFilterInSort order is searched. */
#define COLVEC_FILTER_IN_LINEAR 8

/* Return of colvecFilterEval when xMatch failed (SQLITE_ABORT). */
#define COLVEC_FILTER_ABORT 4

/*
** LIKE/GLOB matcher: returns 1 when row value *pRow matches pattern
** *pPattern (the same pattern for every call of one colvecFilterEval),
** 0 when it does not, and a negative number on an error (the evaluation
** stops and returns COLVEC_FILTER_ABORT; the matcher keeps the reason).
** Text and blob bytes are not NUL-terminated.
*/
typedef int (*ColvecMatchFunc)(void *pCtx, int mFlags,
                               const ColvecScalar *pPattern,
                               const ColvecScalar *pRow);

/*
** ANDs the result of "column <eOp> value(s)" into aBits, one bit per row
** (LSB-first within each byte; (nRow+7)/8 bytes; the caller sets them to 1
** before the first constraint). Bits past nRow in the last byte are cleared.
** eOp is one of COLVEC_OP_EQ .. COLVEC_OP_IN. For COLVEC_OP_IN, aVal holds
** nVal >= 0 members (an empty list passes nothing); ISNULL and NOTNULL ignore
** aVal; every other operator reads aVal[0] (nVal >= 1). xMatch (may be NULL,
** see above) and pCtx serve LIKE and GLOB only.
**
** Returns COLVEC_OK, COLVEC_FILTER_ABORT when xMatch failed, or
** COLVEC_ERROR for an operator that is no filter, a malformed value, or a
** malformed view (missing array, offsets outside [0, nByte] or
** decreasing, among the rows read); after an error aBits holds unspecified
** bits. Allocates nothing. Only rows whose 64-bit word of aBits still has
** a bit set are read (a chunk of 4,096 rows with none is skipped whole, one
** with few such words is read word by word), so a constraint ANDed after a
** selective one costs what that one left. The work is linear in the rows
** read, times nVal for an IN list of up to COLVEC_FILTER_IN_LINEAR members
** or one not in colvecFilterInSort order, times log2(nVal) for a longer
** sorted one (each row's value is searched).
*/
int colvecFilterEval(const ColvecColumnView *pCol, ColvecPlanOp eOp,
                     const ColvecScalar *aVal, int nVal, ColvecMatchFunc xMatch,
                     void *pCtx, uint8_t *aBits);

/*
** Returns 1 when value *pRow passes "*pRow <eOp> *pVal" under the semantics
** above (EQ NE LT LE GT GE IS ISNOT; for IN, *pVal is one member), else 0.
** For callers that decide a few rows one at a time.
*/
int colvecFilterScalarPass(ColvecPlanOp eOp, const ColvecScalar *pRow,
                           const ColvecScalar *pVal);

/*
** Sets *pRow to the value row iRow (< pCol->nRow) of pCol holds, as the
** column stores it: NULL (its bit in aNull), INTEGER, FLOAT, or TEXT/BLOB
** bytes pointing into the column. Returns COLVEC_OK, or COLVEC_ERROR for
** offsets outside [0, nByte], decreasing, or a value longer than an int.
*/
int colvecFilterRowValue(const ColvecColumnView *pCol, int64_t iRow,
                         ColvecScalar *pRow);

/*
** Returns -1, 0 or +1 as value *pA orders before, equal to or after *pB
** in SQLite's comparison (BINARY collation): classes NULL < numbers <
** text < blob, numbers exactly, bytes by memcmp then the shorter first.
** Two NULLs (or NaNs) compare equal here.
*/
int colvecFilterCompare(const ColvecScalar *pA, const ColvecScalar *pB);

/*
** Checks view pCol: a known storage kind, the arrays it needs, offsets that
** start at or after 0 and end within nByte (each row's own offsets are
** checked where it is read). Returns COLVEC_OK or COLVEC_ERROR.
*/
int colvecFilterViewCheck(const ColvecColumnView *pCol);

/*
** Sorts the nVal members of an IN list at aVal in place into the order of
** the comparison (NULL < numbers < text < blob; numbers exactly, as
** sqlite3IntFloatCompare; text and blob by memcmp, then the shorter first),
** drops the members that never match (NULL, NaN) and all but one of equal
** members (5 and 5.0 are equal). Returns the number of members kept, at
** the start of aVal. The bytes the members point to are not moved.
*/
int colvecFilterInSort(ColvecScalar *aVal, int nVal);

/*
** Returns 1 when *pVal equals a member of aVal[0..nVal), a list in
** colvecFilterInSort order, and 0 otherwise (always 0 for NULL or NaN):
** a binary search, log2(nVal) comparisons.
*/
int colvecFilterInHas(const ColvecScalar *aVal, int nVal,
                      const ColvecScalar *pVal);

/* Returns the number of bits set among the first nRow bits of aBits. */
int64_t colvecBitmapCount(const uint8_t *aBits, int64_t nRow);

/*
** Returns the index of the first set bit of aBits at or after i, or nRow
** when none of bits i..nRow-1 is set. Skips clear bytes whole.
*/
int64_t colvecBitmapNext(const uint8_t *aBits, int64_t i, int64_t nRow);

#endif /* COLVEC_FILTER_H */
