/*
** colvec_plan.h — the query plan passed from xBestIndex to xFilter
** (SQLite-free). Implemented in colvec_plan.c.
**
** The plan travels as idxStr, readable in EXPLAIN QUERY PLAN:
**
**     idxStr  := kind ( ' ' arg )*
**     kind    := 'knn' | 'scan'
**     arg     := OP [ '@' col ]
**     col     := 'r' (the rowid) | 'i' (a text primary key, only with EQ:
**                xFilter turns it into EQ@r) | decimal index of a user
**                column
**
** Each arg names, in order, what xFilter's argv[i] holds. OP is one of the
** names in colvecPlanOpName(): MATCH@col (query vector for vector column
** col), K, LIMIT, OFFSET, OVERSAMPLING, RESCORE, EF (KNN parameters, no
** column), DISTANCE< DISTANCE<= DISTANCE> DISTANCE>= (bounds on the
** distance, applied inside the KNN search; no column), and the filter
** operators EQ NE LT LE GT GE IS ISNOT ISNULL
** NOTNULL LIKE GLOB IN (each with a column; IN receives the whole list via
** sqlite3_vtab_in). Example: "knn MATCH@0 K DISTANCE> EQ@1 GE@2".
**
** idxNum carries the columns the statement reads (colUsed): bit i for user
** column i < 30, bit 30 for "some column >= 30".
*/
#ifndef COLVEC_PLAN_H
#define COLVEC_PLAN_H

#include "colvec_core.h"

/* Most xFilter arguments one plan carries; further constraints are left to
** SQLite to evaluate. */
#define COLVEC_PLAN_MAX_ARG 48

/* Column index that stands for the rowid in a plan argument. */
#define COLVEC_PLAN_ROWID (-1)

/* Column index that stands for a text primary key ("id text primary key")
** in a plan argument. */
#define COLVEC_PLAN_TEXTID (-3)

/* idxNum bit meaning "a user column at index >= 30 is read". */
#define COLVEC_PLAN_USED_HIGH 30

/* Operators of plan arguments. */
typedef enum ColvecPlanOp {
  COLVEC_OP_MATCH = 0,    /* MATCH on a vector column: the query vector */
  COLVEC_OP_K,            /* k = N */
  COLVEC_OP_LIMIT,        /* LIMIT N (with ORDER BY distance) */
  COLVEC_OP_OFFSET,       /* OFFSET N, added to LIMIT */
  COLVEC_OP_OVERSAMPLING, /* oversampling = X */
  COLVEC_OP_RESCORE,      /* rescore = 0|1 */
  COLVEC_OP_EF,           /* ef = N */
  COLVEC_OP_DIST_LT,      /* distance < x */
  COLVEC_OP_DIST_LE,      /* distance <= x */
  COLVEC_OP_DIST_GT,      /* distance > x */
  COLVEC_OP_DIST_GE,      /* distance >= x */
  COLVEC_OP_EQ,           /* col = v */
  COLVEC_OP_NE,           /* col != v */
  COLVEC_OP_LT,           /* col < v */
  COLVEC_OP_LE,           /* col <= v */
  COLVEC_OP_GT,           /* col > v */
  COLVEC_OP_GE,           /* col >= v */
  COLVEC_OP_IS,           /* col IS v */
  COLVEC_OP_ISNOT,        /* col IS NOT v */
  COLVEC_OP_ISNULL,       /* col IS NULL (argument ignored) */
  COLVEC_OP_NOTNULL,      /* col IS NOT NULL (argument ignored) */
  COLVEC_OP_LIKE,         /* col LIKE v */
  COLVEC_OP_GLOB,         /* col GLOB v */
  COLVEC_OP_IN,           /* col IN (list) */
  COLVEC_OP_COUNT         /* number of operators */
} ColvecPlanOp;

/* One xFilter argument: what it is and which column it applies to. */
typedef struct ColvecPlanArg ColvecPlanArg;
struct ColvecPlanArg {
  ColvecPlanOp eOp; /* operator */
  int iCol;         /* user column, COLVEC_PLAN_ROWID, or -2 when none */
};

/* A decoded plan. */
typedef struct ColvecPlan ColvecPlan;
struct ColvecPlan {
  int bKnn;                                /* 1 for KNN, 0 for a scan */
  int nArg;                                /* entries used in aArg */
  ColvecPlanArg aArg[COLVEC_PLAN_MAX_ARG]; /* one per xFilter argument */
};

/* Column value meaning "this operator takes no column". */
#define COLVEC_PLAN_NOCOL (-2)

/* Name of an operator as written in idxStr ("MATCH", "EQ", ...). */
const char *colvecPlanOpName(ColvecPlanOp eOp);

/* Returns non-zero when operator eOp applies to a column. */
int colvecPlanOpHasCol(ColvecPlanOp eOp);

/*
** Writes plan p as idxStr into a newly allocated string (*pz, freed with
** colvecFree; SQLite takes it via needToFreeIdxStr only if allocated with
** sqlite3_malloc, which colvecMalloc is inside the extension). Returns
** COLVEC_OK or COLVEC_NOMEM.
*/
int colvecPlanEncode(const ColvecPlan *p, char **pz);

/*
** Parses idxStr z into *p. Returns COLVEC_OK, or COLVEC_ERROR when z is not
** a well-formed plan (unknown operator, missing or stray column, too many
** arguments).
*/
int colvecPlanDecode(const char *z, ColvecPlan *p);

#endif /* COLVEC_PLAN_H */
