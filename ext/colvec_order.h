/*
** colvec_order.h — the value order of one segment column: its non-NULL rows
** sorted by value, so that an equality, an IN list or a range finds its
** rows by binary search instead of testing every row (SQLite-free).
** Implemented in colvec_order.c.
**
** Values are ordered as colvec_filter.h compares them (numbers exactly,
** text and blobs by memcmp then the shorter first), equal values by row.
** The rows that pass "value <op> x" for op EQ, IS (x not NULL), LT, LE,
** GT and GE are then one run of the order, and exactly the non-NULL rows
** colvecFilterEval passes for the same operator and value.
*/
#ifndef COLVEC_ORDER_H
#define COLVEC_ORDER_H

#include "colvec_core.h"
#include "colvec_filter.h"

/* One column's rows in value order. */
typedef struct ColvecOrder ColvecOrder;
struct ColvecOrder {
  int64_t nRow;        /* rows of the column it was built from */
  int64_t nValue;      /* non-NULL rows: the entries of aRow */
  uint32_t *aRow;      /* the non-NULL rows by value, equal values by row */
  int64_t nRun;        /* runs of equal values in aRow, with aRunStart */
  uint32_t *aRunStart; /* nRun + 1 entries: each run's first entry of aRow,
                       ** then nValue; NULL when runs are short */
  int64_t *aRunInt;    /* with aRunStart, an int64 column: each run's value */
  double *aRunReal;    /* with aRunStart, a double column: each run's value */
};

/*
** Builds the order of column pCol into *p (zeroed first). Returns
** COLVEC_OK; COLVEC_NOMEM; COLVEC_ERROR for a malformed view (as
** colvecFilterEval checks it) or one of more than 2^32-1 rows, with *p
** left empty. The work is O(nRow log nRow) comparisons; the memory is
** 4 bytes per row, plus 4 per row while it is built. A column with few
** distinct values (runs of COLVEC_ORDER_RUN_MIN rows or more on average:
** a partition key, a category) also gets a directory of its runs, 4 bytes
** per run plus 8 for a number's value, which colvecOrderRange searches
** instead of the rows: a few cache lines instead of two per probe.
*/
int colvecOrderBuild(const ColvecColumnView *pCol, ColvecOrder *p);

/* Average run length from which colvecOrderBuild keeps a directory. */
#define COLVEC_ORDER_RUN_MIN 4

/* Frees what colvecOrderBuild allocated in *p and zeroes it. */
void colvecOrderFree(ColvecOrder *p);

/*
** Whether colvecOrderRange answers operator eOp (EQ, IS, LT, LE, GT, GE):
** 1 or 0.
*/
int colvecOrderHandles(ColvecPlanOp eOp);

/*
** Sets [*piLo, *piHi) to the entries of p->aRow (the order of pCol) whose
** values pass "value <eOp> *pVal", for an operator colvecOrderHandles
** accepts. A NULL or NaN *pVal passes no row (IS NULL is not asked here).
** Returns COLVEC_OK, or COLVEC_ERROR for another operator or a value the
** view cannot read (malformed offsets).
*/
int colvecOrderRange(const ColvecColumnView *pCol, const ColvecOrder *p,
                     ColvecPlanOp eOp, const ColvecScalar *pVal, int64_t *piLo,
                     int64_t *piHi);

#endif /* COLVEC_ORDER_H */
