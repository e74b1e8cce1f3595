/*
** colvecInt.h — internal interface of the colvec layers that talk to SQLite.
**
** One banner per file, in the manner of fts5Int.h. The SQLite-free layers
** (kernels, vector parsing, plan, top-k) have their own headers, included
** here so that every SQLite-facing file needs only this one.
*/
#ifndef COLVEC_INT_H
#define COLVEC_INT_H

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "colvec.h"
#include "colvec_core.h"
#include "colvec_distance.h"
#include "colvec_plan.h"
#include "colvec_topk.h"
#include "colvec_vector.h"

#include <assert.h>

typedef struct ColvecColumn ColvecColumn;
typedef struct ColvecConfig ColvecConfig;
typedef struct ColvecStorage ColvecStorage;

/*
** Debug builds turn SQLITE_CORRUPT_VTAB into a function call, so that a
** debugger can stop where corruption is first noticed.
*/
#ifdef COLVEC_DEBUG
int colvecCorruptError(int iLine);
#define COLVEC_CORRUPT_VTAB colvecCorruptError(__LINE__)
#else
#define COLVEC_CORRUPT_VTAB SQLITE_CORRUPT_VTAB
#endif

/*************************************************************************
** Interface to code in colvec_config.c (CREATE arguments)
*/

/* Types of attribute (non-vector) columns. */
typedef enum ColvecAttr {
  COLVEC_ATTR_INTEGER = 0, /* 64-bit integer (also "int", "boolean") */
  COLVEC_ATTR_REAL = 1,    /* 64-bit float ("real", "float", "double") */
  COLVEC_ATTR_TEXT = 2,    /* UTF-8 text */
  COLVEC_ATTR_BLOB = 3     /* bytes */
} ColvecAttr;

/* One user column of a colvec table. */
struct ColvecColumn {
  char *zName;          /* column name as declared */
  int bVector;          /* 1 for a vector column, 0 for an attribute */
  ColvecElem eElem;     /* vector: element type */
  int nDim;             /* vector: dimensions */
  int nByte;            /* vector: bytes per vector */
  ColvecMetric eMetric; /* vector: distance metric */
  ColvecAttr eAttr;     /* attribute: declared type */
};

/* Hidden columns follow the user columns, in this order. */
#define COLVEC_HIDDEN_DISTANCE 0     /* distance of the row to the query */
#define COLVEC_HIDDEN_K 1            /* k = N */
#define COLVEC_HIDDEN_OVERSAMPLING 2 /* oversampling = X */
#define COLVEC_HIDDEN_RESCORE 3      /* rescore = 0|1 */
#define COLVEC_HIDDEN_EF 4           /* ef = N */
#define COLVEC_HIDDEN_COMMAND 5      /* column named like the table */
#define COLVEC_HIDDEN_COUNT 6        /* number of hidden columns */

/* Most user columns a table may declare. */
#define COLVEC_MAX_COLUMNS 500

/* The parsed definition of a table. */
struct ColvecConfig {
  char *zDb;           /* schema name ("main", "temp", attached name) */
  char *zName;         /* table name */
  int nCol;            /* number of user columns */
  ColvecColumn *aCol;  /* user columns, in declaration order */
  int nVector;         /* how many of them are vector columns */
};

/*
** Parses the CREATE VIRTUAL TABLE arguments (argv[0] module, argv[1]
** schema, argv[2] table, argv[3..] column definitions and options) into a
** new ColvecConfig (*pp, freed with colvecConfigFree). Returns SQLITE_OK or
** an error code with *pzErr set to a "colvec: ..." message.
*/
int colvecConfigParse(int argc, const char *const *argv, ColvecConfig **pp,
                      char **pzErr);

/* Frees a config (NULL allowed). */
void colvecConfigFree(ColvecConfig *p);

/*
** Returns the CREATE TABLE statement to pass to sqlite3_declare_vtab, in
** memory from sqlite3_malloc (caller frees), or NULL on OOM.
*/
char *colvecConfigDeclareSql(const ColvecConfig *p);

/* Name of a metric as written in CREATE ("l2", "cosine", ...). */
const char *colvecMetricName(ColvecMetric eMetric);

/*************************************************************************
** Interface to code in colvec_value.c (SQL values to column values)
*/

/*
** Reads SQL value pVal (BLOB or JSON text) as a vector for column pCol into
** aOut (pCol->nByte bytes). Returns SQLITE_OK, SQLITE_NOMEM, or
** SQLITE_ERROR with *pzErr set ("colvec: embedding expects 768 dimensions,
** got 767"). NULL, numbers and NaN/Inf elements are errors.
*/
int colvecValueToVector(sqlite3_value *pVal, const ColvecColumn *pCol,
                        void *aOut, char **pzErr);

/*
** Checks a value written to attribute column pCol as a STRICT table would:
** integer columns take integers, integral reals and integer-looking text;
** real columns take numbers and numeric text; text columns take text and
** numbers; blob columns take anything; NULL is always allowed. The shadow
** column's affinity then stores the converted value. Returns SQLITE_OK, or
** SQLITE_MISMATCH with *pzErr set ("colvec: year expects integer, got
** text 'abc'"), or SQLITE_NOMEM.
*/
int colvecValueCheckAttr(sqlite3_value *pVal, const ColvecColumn *pCol,
                         char **pzErr);

/*************************************************************************
** Interface to code in colvec_storage.c (shadow tables and delta rows)
**
** Shadow tables of table T:
**   T_config(key TEXT PRIMARY KEY, value) WITHOUT ROWID  -- format version
**   T_delta(rowid INTEGER PRIMARY KEY, c0, c1, ...)       -- the rows
** Column ci of T_delta holds user column i (vectors as BLOBs).
*/

/* Version of the shadow-table format written by this build. */
#define COLVEC_FORMAT_VERSION 1

/* Conflict handling of an insert. */
typedef enum ColvecConflict {
  COLVEC_CONFLICT_ABORT = 0,   /* fail on an existing rowid */
  COLVEC_CONFLICT_REPLACE = 1, /* replace the existing row */
  COLVEC_CONFLICT_IGNORE = 2   /* keep the existing row, skip this one */
} ColvecConflict;

/*
** The value written to one column: pVal bound as it is, or pBlob/nBlob (a
** vector in its binary form); both NULL in an update means "unchanged".
*/
typedef struct ColvecCell ColvecCell;
struct ColvecCell {
  sqlite3_value *pVal; /* value to bind, or NULL */
  const void *pBlob;   /* vector bytes to bind, or NULL */
  int nBlob;           /* bytes at pBlob */
};

/* Handle on one table's shadow tables, owned by its sqlite3_vtab. */
struct ColvecStorage {
  sqlite3 *db;                /* connection */
  const ColvecConfig *pConfig; /* table definition (not owned) */
  sqlite3_stmt *apStmt[8];    /* cached statements, see colvec_storage.c */
};

/*
** Creates (bCreate) or checks (format version) the shadow tables and returns
** a new storage handle in *pp. Returns SQLITE_OK or an error with *pzErr.
*/
int colvecStorageOpen(sqlite3 *db, const ColvecConfig *pConfig, int bCreate,
                      ColvecStorage **pp, char **pzErr);

/* Finalizes the cached statements and frees the handle (NULL allowed). */
void colvecStorageClose(ColvecStorage *p);

/* Drops the shadow tables (DROP TABLE). */
int colvecStorageDestroy(ColvecStorage *p);

/* Renames the shadow tables for ALTER TABLE ... RENAME TO zNew. */
int colvecStorageRename(ColvecStorage *p, const char *zNew);

/*
** Writes one row: iRowid (or a new rowid when pRowid is NULL, returned in
** *piRowid) and aCell[0..nCol-1], already checked and converted. Returns
** SQLITE_OK, SQLITE_CONSTRAINT (rowid exists, eConflict ABORT) or an error.
*/
int colvecStorageInsert(ColvecStorage *p, sqlite3_value *pRowid,
                        const ColvecCell *aCell, ColvecConflict eConflict,
                        sqlite3_int64 *piRowid);

/*
** Updates row iOld: moves it to rowid iNew and sets the columns whose cell
** holds a value (an empty cell keeps the column). Returns SQLITE_OK,
** SQLITE_CONSTRAINT when iNew is taken (and eConflict is ABORT) or an error.
*/
int colvecStorageUpdate(ColvecStorage *p, sqlite3_int64 iOld,
                        sqlite3_int64 iNew, const ColvecCell *aCell,
                        ColvecConflict eConflict);

/* Deletes row iRowid (no error when it does not exist). */
int colvecStorageDelete(ColvecStorage *p, sqlite3_int64 iRowid);

/*
** Prepares "SELECT rowid, <columns> FROM T_delta WHERE <filters>": column
** 1+i of the result is user column i when bit i of the used-columns mask
** (idxNum encoding, colvec_plan.h) is set, NULL otherwise. The filters are
** the plan's filter arguments (argv values bound, IN lists expanded).
** bOneRow instead selects "WHERE rowid = ?1" for a point lookup (no plan).
** Returns SQLITE_OK with *ppStmt (caller finalizes) or an error with
** *pzErr.
*/
int colvecStorageSelect(ColvecStorage *p, int mUsed, const ColvecPlan *pPlan,
                        sqlite3_value **argv, int bOneRow,
                        sqlite3_stmt **ppStmt, char **pzErr);

/* Returns non-zero when used-columns mask mUsed (idxNum) includes column
** iCol. */
int colvecPlanUsesColumn(int mUsed, int iCol);

/*
** Runs the integrity check of the delta: every row's vectors have the
** column's size and finite elements, attributes the declared type.
** Returns SQLITE_OK, or SQLITE_CORRUPT_VTAB with *pzErr describing the
** first problem.
*/
int colvecStorageCheck(ColvecStorage *p, char **pzErr);

/*************************************************************************
** Interface to code in colvec_knn.c (exact KNN over the delta)
*/

/* Parameters of one KNN query, from MATCH and the hidden columns. */
typedef struct ColvecKnnQuery ColvecKnnQuery;
struct ColvecKnnQuery {
  int iCol;            /* vector column searched */
  const void *pVec;    /* query vector in the column's binary form */
  int k;               /* how many results */
  double rOversample;  /* oversampling factor (quantized search) */
  int bRescore;        /* rescore candidates with float32 vectors */
  int ef;              /* HNSW beam width; 0 = default */
};

/*
** Fills pTopk (initialised for q->k) with the q->k nearest rows of the
** delta that pass the plan's filters, sorted best first. Returns SQLITE_OK
** or an error with *pzErr set.
*/
int colvecKnnExact(ColvecStorage *pStorage, const ColvecKnnQuery *q,
                   const ColvecPlan *pPlan, sqlite3_value **argv,
                   ColvecTopk *pTopk, char **pzErr);

/*************************************************************************
** Interface to code in colvec_vtab.c (the virtual table methods)
*/

/*
** Registers the "colvec" module on db with client data pAux, which SQLite
** passes to xDestroy when the connection closes (also on failure).
*/
int colvecVtabRegister(sqlite3 *db, void *pAux, void (*xDestroy)(void *));

/*************************************************************************
** Interface to code in colvec_func.c (scalar SQL functions)
*/

/* Registers colvec_version(), colvec_debug(), colvec_distance_*(),
** colvec_to_json(), colvec_from_json() (and test hooks in debug builds). */
int colvecFuncRegister(sqlite3 *db);

#endif /* COLVEC_INT_H */
