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
#include "colvec_filter.h"
#include "colvec_os.h"
#include "colvec_store.h"
#include "colvec_hnsw.h"
#include "colvec_order.h"
#include "colvec_plan.h"
#include "colvec_quant.h"
#include "colvec_segfile.h"
#include "colvec_topk.h"
#include "colvec_vector.h"

#include <assert.h>

typedef struct ColvecColumn ColvecColumn;
typedef struct ColvecConfig ColvecConfig;
typedef struct ColvecStorage ColvecStorage;
typedef struct ColvecKnnQuery ColvecKnnQuery;
typedef struct ColvecTick ColvecTick;
typedef struct ColvecSegHandle ColvecSegHandle;

/*************************************************************************
** Interface to code in colvec_base.c (mutex, interrupts, read errors)
*/

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

/*
** Enter and leave SQLITE_MUTEX_STATIC_MAIN, which guards the process-wide
** lists of connections (colvec.c) and open tables (colvec_vtab.c). No-ops
** with a SQLite that has no mutexes (built with SQLITE_THREADSAFE=0).
*/
void colvecMainMutexEnter(void);
void colvecMainMutexLeave(void);

/*
** Interrupts. Long loops (index builds, segment writes and merges, exact
** scans of segments, integrity checks) ask a ColvecTick every few thousand
** rows or megabyte whether sqlite3_interrupt() was called on the
** connection, and stop with SQLITE_INTERRUPT ("colvec: interrupted").
** SQLite then rolls the transaction back. A ColvecTick is also the
** ColvecInterrupt hook handed to the SQLite-free layers.
*/
struct ColvecTick {
  sqlite3 *db;          /* connection that may be interrupted */
  int bProbe;           /* no sqlite3_is_interrupted(): step a statement */
  double rNext;         /* with bProbe: monotonic ms of the next probe */
  int bStop;            /* an interrupt, or a probe out of memory, was
                        ** seen (sticky) */
  ColvecInterrupt hook; /* hook for the SQLite-free layers (this tick) */
};

/* Prepares tick p for connection db. */
void colvecTickInit(ColvecTick *p, sqlite3 *db);

/*
** Returns non-zero when the connection of tick p (a ColvecTick *) was
** interrupted, or when a probe (SQLite before 3.41) ran out of memory and
** so has already failed the running statement. Cheap: safe to call once
** per row.
*/
int colvecTickStop(void *p);

/* Sets *pzErr (when NULL) to "colvec: interrupted"; returns SQLITE_INTERRUPT.
 */
int colvecTickError(char **pzErr);

/*
** Maps the failure rc (COLVEC_*) of a segment read or open, whose ColvecErr
** holds iErrno, to an SQLite code: SQLITE_NOMEM when out of memory (ENOMEM
** included: a mapping that does not fit), SQLITE_IOERR_READ when the
** operating system refused a call, else COLVEC_CORRUPT_VTAB (a bad file,
** or one shorter than its header says).
*/
int colvecReadRc(int rc, int iErrno);

/*
** Maps the failure rc (COLVEC_*) of a file call that creates, writes,
** syncs or removes (a folder, a copy, a segment being written) to an SQLite
** code: SQLITE_NOMEM when it ran out of memory, else rcOther (the caller's
** code for that call: SQLITE_CANTOPEN, SQLITE_IOERR_FSYNC, ...).
*/
int colvecFileRc(int rc, int rcOther);

/*************************************************************************
** Interface to code in colvec.c (the entry point)
*/

/*************************************************************************
** Interface to code in colvec_config.c (CREATE arguments)
*/

/*
** Returns 1 when zSql, a table's statement in sqlite_schema, creates a
** virtual table of module colvec: the name after USING, read as SQLite
** reads it (any case, quoted or not, white space and comments between the
** words), else 0 (also for NULL). The one test of "is this a colvec
** table" (colvec_check(), colvec_backup()).
*/
int colvecConfigIsColvecSql(const char *zSql);

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
  int eQuant;           /* vector: quantize= (ColvecQuantType) */
  int nM;               /* vector: m= HNSW links per node */
  int nEfC;             /* vector: ef_construction= */
  int bNoIndex;         /* vector: index=none (exact search only) */
  int bStrict;          /* attribute: sqlite-vec's partition key or
                        ** auxiliary column: a value must have the
                        ** column's type exactly (NULL aside) */
  int bPartition;       /* attribute: declared "partition key" (large
                        ** partitions get segments of their own) */
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
  char *zDb;          /* schema name ("main", "temp", attached name) */
  char *zName;        /* table name */
  int nCol;           /* number of user columns */
  ColvecColumn *aCol; /* user columns, in declaration order */
  int nVector;        /* how many of them are vector columns */
  int nDeltaRows;     /* delta_rows=N: compaction threshold */
  int nDeferRows;     /* defer_rows=N: rows of segments a commit may leave
                      ** without their graph (0: none) */
  int eAccess;        /* access=mmap|file: COLVEC_SEG_MMAP or _FILE */
  int ePrefault;      /* prefault=none|willneed|populate */
  int bNoVerify;      /* verify=none: a sidecar file's section checksums
                      ** are not verified before its first use in a
                      ** process (verify=open, the default: they are) */
  int nBuildThread;   /* build_threads=N for HNSW builds */
  int iPk;            /* declared position of sqlite-vec's "id integer
                      ** primary key" (an alias of the rowid, not stored)
                      ** or "id text primary key", or -1 when none */
  char *zPk;          /* that column's name, or NULL */
  int bPkText;        /* the key is "text primary key": its values live in
                      ** shadow table T_ids (colvec_storage.c), mapped to
                      ** the rowid */
  int eStorage;       /* storage=sidecar|embedded given at CREATE
                      ** (COLVEC_STORAGE_*), or chosen by the database
                      ** (colvecConfigStorageChoose); the stored format
                      ** decides afterwards */
  int bStorageSet;    /* storage= was given in the arguments */
};

/* Values of ColvecConfig.eStorage. */
#define COLVEC_STORAGE_SIDECAR 0  /* segment files only (the default) */
#define COLVEC_STORAGE_EMBEDDED 1 /* also their bytes in the database */

/* Kinds of database, as colvecConfigDbKind() tells them. */
#define COLVEC_DB_FILE 0   /* a file on this machine's file system */
#define COLVEC_DB_MEMORY 1 /* no name: ":memory:", the temporary database */
#define COLVEC_DB_NOPATH 2 /* not a file here: memdb, dqlite's VFS, ... */

/*
** Returns the kind of schema zDb of db (COLVEC_DB_*): COLVEC_DB_MEMORY when
** it has no file name; COLVEC_DB_NOPATH when its VFS is memdb, or is neither
** a unix nor a win32 VFS and its name is not an absolute path to an existing
** file (a shim over the unix VFS names real files; dqlite's "demo" is no
** file); else COLVEC_DB_FILE.
*/
int colvecConfigDbKind(sqlite3 *db, const char *zDb);

/*
** At CREATE, settles p->eStorage by the kind of p's database: a database
** that is not a file (COLVEC_DB_NOPATH) cannot carry files beside it into
** copies or replicas, so its tables are embedded by default and an explicit
** storage=sidecar is refused. Returns SQLITE_OK, or SQLITE_ERROR with
** *pzErr set.
*/
int colvecConfigStorageChoose(sqlite3 *db, ColvecConfig *p, char **pzErr);

/* Default of the delta_rows table option. */
#define COLVEC_DEFAULT_DELTA_ROWS 1000

/*
** Default of the defer_rows table option: a bulk load of up to this many
** rows commits without building its graph, and its rows are searched by a
** scan of their codes until the 'index' command (or a merge) builds it.
*/
#define COLVEC_DEFAULT_DEFER_ROWS 20000

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

/* Fingerprint of the column layout, stored in segment headers. */
uint64_t colvecConfigFingerprint(const ColvecConfig *p);

/*
** Maps the index of a column in the declared schema (as xBestIndex,
** xColumn and xUpdate see it) to the index colvec uses (aCol[], then the
** hidden columns at nCol + COLVEC_HIDDEN_*): the same unless the table has
** an "id integer primary key" column, which (like the rowid, -1) maps to
** -1, or an "id text primary key" column, which maps to COLVEC_COL_TEXTID.
*/
int colvecConfigColumn(const ColvecConfig *p, int iDecl);

/* colvecConfigColumn's index of an "id text primary key" column. */
#define COLVEC_COL_TEXTID COLVEC_PLAN_TEXTID

/* Name of a metric as written in CREATE ("l2", "cosine", ...). */
const char *colvecMetricName(ColvecMetric eMetric);

typedef struct ColvecCell ColvecCell;

/*************************************************************************
** Interface to code in colvec_value.c (SQL values to column values)
*/

/*
** Reads SQL value pVal (BLOB or JSON text) as a vector for column pCol into
** aOut (pCol->nByte bytes). Returns SQLITE_OK, SQLITE_NOMEM, or
** SQLITE_ERROR with *pzErr set ("colvec: embedding expects 768 dimensions,
** got 767"). NULL, numbers and NaN/Inf elements are errors, and so is a
** value whose subtype (COLVEC_SUBTYPE_*: vec_f32(), vec_int8(), vec_bit(),
** a vector column) names another element type than the column's.
*/
int colvecValueToVector(sqlite3_value *pVal, const ColvecColumn *pCol,
                        void *aOut, char **pzErr);

/*
** Checks a value written to attribute column pCol as a STRICT table would:
** integer columns take integers, integral reals and integer-looking text;
** real columns take numbers and numeric text; text columns take text and
** numbers; blob columns take blobs; NULL is always allowed. Text is read
** as SQLite's numeric affinity reads it (colvecTextToNumber: spaces
** around, no hexadecimal), locale-independently and without copying pVal.
** Sets pCell->pVal to pVal and, for a non-NULL value of an integer or real
** column, pCell->eNum/iNum/rNum to the converted number (what is stored).
** Returns SQLITE_OK, or SQLITE_MISMATCH with *pzErr set ("colvec: year
** expects integer, got text 'abc'"), or SQLITE_NOMEM.
*/
int colvecValueCheckAttr(sqlite3_value *pVal, const ColvecColumn *pCol,
                         ColvecCell *pCell, char **pzErr);

/*
** The value written to one column: pVal bound as it is, or pBlob/nBlob (a
** vector in its binary form); both NULL in an update means "unchanged".
*/
struct ColvecCell {
  sqlite3_value *pVal; /* value to bind, or NULL */
  const void *pBlob;   /* vector bytes to bind, or NULL */
  int nBlob;           /* bytes at pBlob */
  int eNum;            /* COLVEC_NUM_INTEGER/REAL: store iNum/rNum, not pVal */
  int64_t iNum;        /* the integer column's value when eNum is INTEGER */
  double rNum;         /* the real column's value when eNum is REAL */
};

/*************************************************************************
** Interface to code in colvec_batch.c (rows held in memory)
**
** A batch holds rows column by column in memory: the pending rows of a bulk
** insert, or the delta rows being compacted. Values are stored in the
** column's storage type (attribute values already checked).
*/

/* One column of a batch. */
typedef struct ColvecBatchCol ColvecBatchCol;
struct ColvecBatchCol {
  uint8_t *aNull;     /* per row: 1 when NULL (attributes) */
  int64_t *aInt;      /* integer columns: values */
  double *aReal;      /* real columns: values */
  int64_t *aOff;      /* text/blob columns: nRow+1 offsets into aByte */
  uint8_t *aByte;     /* text/blob columns: bytes */
  int64_t nByteAlloc; /* text/blob columns: bytes allocated at aByte */
  uint8_t *aVec;      /* vector columns: nRow * nByte bytes */
};

/* Rows in memory. */
typedef struct ColvecBatch ColvecBatch;
struct ColvecBatch {
  const ColvecConfig *pConfig; /* table definition (not owned) */
  int64_t nRow;                /* rows held */
  int64_t nAlloc;              /* rows allocated */
  int64_t *aRowid;             /* rowid of each row */
  ColvecBatchCol *aCol;        /* one per user column */
  int64_t *aHash;              /* open-addressing set: row index + 1, 0 empty */
  int64_t nHash;               /* slots in aHash (a power of two) */
  int64_t nByte;               /* approximate memory held, for flush policy */
};

/* Initialises an empty batch for table pConfig. */
void colvecBatchInit(ColvecBatch *p, const ColvecConfig *pConfig);

/* Frees everything the batch holds; it is empty afterwards. */
void colvecBatchFree(ColvecBatch *p);

/*
** Appends a row: rowid iRowid and one cell per user column (attributes as
** checked sqlite3_values, vectors as bytes). Returns SQLITE_OK or
** SQLITE_NOMEM (the batch is unchanged).
*/
int colvecBatchAppend(ColvecBatch *p, int64_t iRowid, const ColvecCell *aCell);

/* Drops rows nRow.. (savepoint rollback). */
void colvecBatchTruncate(ColvecBatch *p, int64_t nRow);

/* Returns the index of the latest row with rowid iRowid, or -1. */
int64_t colvecBatchFind(const ColvecBatch *p, int64_t iRowid);

/* Largest rowid of rows iFirst.., or INT64_MIN when there are none. */
int64_t colvecBatchMaxRowid(const ColvecBatch *p, int64_t iFirst);

/*************************************************************************
** Interface to code in colvec_layout.c (what a segment holds, per column)
**
** The one owner of a segment's content: the only code that names section
** kinds (colvec_segfile.h) for columns. A segment holds the rowids, then,
** for each user column in order:
**   attribute   NULLBITMAP (only when some value is NULL), then ATTR_FIXED
**               (integer, real) or ATTR_VAROFFSETS + ATTR_VARBYTES (text,
**               blob)
**   vector      VECTORS, then the index parts colvecLayoutIndexParts()
**               gives it, in the order quantizer, codes, exact rows,
**               graph, recall (colvecIndexWrite may leave some out)
** Compaction hands it the rows (colvecLayoutWrite*), the index code the
** bytes of its parts (colvecLayoutWritePart). Opening a segment resolves
** every column's sections once into a ColvecLayoutCol; readers use those
** (no section lookup per row) and read a cell of a segment or of a batch
** through colvecLayoutCell, the one cell reader.
*/

/* Index parts of a vector column (bit numbers of colvecLayoutIndexParts). */
#define COLVEC_LAYOUT_QUANT 0  /* the trained quantizer, its own layout */
#define COLVEC_LAYOUT_CODES 1  /* one fixed-size code per row */
#define COLVEC_LAYOUT_GRAPH 2  /* the graph of the index type, its layout */
#define COLVEC_LAYOUT_EXACT 3  /* rows searched exactly beside the graph */
#define COLVEC_LAYOUT_RECALL 4 /* the graph's measured recall */
#define COLVEC_LAYOUT_NPART 5  /* number of index parts */

/* One user column of an open segment, resolved at open. */
typedef struct ColvecLayoutCol ColvecLayoutCol;
struct ColvecLayoutCol {
  const ColvecSegSection *pMain;  /* VECTORS (of the right size), ATTR_FIXED
                                  ** or ATTR_VAROFFSETS; NULL if missing */
  const ColvecSegSection *pBytes; /* text/blob: ATTR_VARBYTES, or NULL */
  const ColvecSegSection *pNull;  /* attribute: NULLBITMAP, or NULL */
  const ColvecSegSection *apPart[COLVEC_LAYOUT_NPART]; /* index parts */
  const uint8_t *aVec;   /* vector: base in the mapping, or NULL (file) */
  ColvecColumnView view; /* attribute: its values, valid when bView */
  int bView;             /* attribute: view loaded (colvecLayoutView) */
  void *apOwned[3];      /* access=file: the view's buffers */
};

/* A source of rows for a new segment: a batch, or a live segment. */
typedef struct ColvecSource ColvecSource;
struct ColvecSource {
  const ColvecBatch *pBatch; /* rows in memory, or NULL */
  int64_t iFirst;            /* batch: first row to take */
  ColvecSegHandle *pSeg;     /* a live segment (its live rows), or NULL */
};

/* One row of a new segment: where it comes from. */
typedef struct ColvecRowRef ColvecRowRef;
struct ColvecRowRef {
  int64_t iRowid; /* rowid */
  int iSrc;       /* index into the source array */
  int64_t iRow;   /* row within that source */
};

/*
** The index parts vector column pCol gets in a segment of nRow rows, as a
** mask of (1 << COLVEC_LAYOUT_*): quantizer and codes for float columns
** with quantize other than none; a graph for segments of
** COLVEC_INDEX_MIN_ROWS .. COLVEC_INDEX_MAX_ROWS rows unless index=none.
** 0 for attributes and empty segments. The one statement of the rule.
*/
int colvecLayoutIndexParts(const ColvecColumn *pCol, int64_t nRow);

/* Appends the rowid section of rows aRow[0..nRow-1]. Returns COLVEC_OK or
** the writer's error. */
int colvecLayoutWriteRowids(ColvecSegWriter *pW, const ColvecRowRef *aRow,
                            int64_t nRow);

/*
** Appends the sections of attribute column iCol for rows aRow[0..nRow-1]
** of sources aSrc: a NULL bitmap when any value is NULL, then fixed values
** or offsets + bytes. Returns SQLITE_OK or an error (*pzErr set when the
** writer did not fail).
*/
int colvecLayoutWriteAttr(const ColvecConfig *pC, ColvecSegWriter *pW,
                          ColvecTick *pTick, const ColvecSource *aSrc,
                          const ColvecRowRef *aRow, int64_t nRow, int iCol,
                          char **pzErr);

/*
** Appends the vectors of vector column iCol for rows aRow[0..nRow-1] of
** sources aSrc, reading unmapped segment vectors through pBuf (the column's
** nByte), and copies them contiguously to aAll when not NULL. Returns
** SQLITE_OK or an error.
*/
int colvecLayoutWriteVectors(const ColvecConfig *pC, ColvecSegWriter *pW,
                             ColvecTick *pTick, const ColvecSource *aSrc,
                             const ColvecRowRef *aRow, int64_t nRow, int iCol,
                             void *pBuf, uint8_t *aAll, char **pzErr);

/*
** Appends index part ePart (COLVEC_LAYOUT_*) of vector column iCol: n bytes
** at a; nStride is the size of one code (COLVEC_LAYOUT_CODES only).
** Returns COLVEC_OK or the writer's error.
*/
int colvecLayoutWritePart(ColvecSegWriter *pW, int iCol, int ePart, int nStride,
                          const void *a, int64_t n);

/*
** Resolves the sections of the just-opened segment h (file zPath, for
** messages) into h->aCol and loads its rowids. Returns SQLITE_OK, or an
** error with *pzErr set (not for SQLITE_NOMEM); colvecLayoutClose frees
** what was done either way.
*/
int colvecLayoutOpen(const ColvecConfig *pC, ColvecSegHandle *h,
                     const char *zPath, char **pzErr);

/* Frees what colvecLayoutOpen resolved and loaded. */
void colvecLayoutClose(const ColvecConfig *pC, ColvecSegHandle *h);

/*
** Makes the view of attribute column iCol of segment h available in
** *ppView (loaded once; access=file reads its sections into memory).
** Returns SQLITE_OK or an error with *pzErr set.
*/
int colvecLayoutView(const ColvecConfig *pC, ColvecSegHandle *h, int iCol,
                     const ColvecColumnView **ppView, char **pzErr);

/*
** Returns a pointer to vector column iCol (described by pCol) of row iRow
** of segment h: into the mapping, or read into pBuf (access=file, pBuf
** holds the column's nByte). Returns NULL with *pzErr and *pRc set on
** error: SQLITE_IOERR_READ when a read failed, COLVEC_CORRUPT_VTAB for a
** missing section.
*/
const void *colvecLayoutVector(ColvecSegHandle *h, const ColvecColumn *pCol,
                               int iCol, int64_t iRow, void *pBuf, char **pzErr,
                               int *pRc);

/*
** Returns the bytes of index part ePart of vector column iCol of h,
** *pnByte long: a pointer into the mapping, or (access=file) a buffer read
** into *ppOwned (caller frees). A missing part returns NULL with *pnByte 0
** and *pRc unchanged; an error returns NULL with *pRc set: SQLITE_NOMEM,
** SQLITE_IOERR_READ (the read failed) or COLVEC_CORRUPT_VTAB (the file is
** shorter than it says), with the reader's message in *pzErr.
*/
const void *colvecLayoutPart(ColvecSegHandle *h, int iCol, int ePart,
                             void **ppOwned, int64_t *pnByte, char **pzErr,
                             int *pRc);

/* The index parts column iCol of h has, as colvecLayoutIndexParts()
** gives them. */
int colvecLayoutPartMask(const ColvecSegHandle *h, int iCol);

/*
** The cell reader: reads column iCol of row iRow of source pSrc (a batch
** row, or a segment row) into *pOut: COLVEC_TYPE_NULL, _INTEGER (i),
** _FLOAT (r), _TEXT or _BLOB (z, n; z may be NULL when n is 0). A vector
** is a BLOB of the column's nByte, read into pBuf when its segment is not
** mapped. Returns SQLITE_OK or an error with *pzErr set.
*/
int colvecLayoutCell(const ColvecConfig *pC, const ColvecSource *pSrc, int iCol,
                     int64_t iRow, void *pBuf, ColvecScalar *pOut,
                     char **pzErr);

/* Sets the SQL result to cell *pV (a copy of its bytes). */
void colvecCellResult(sqlite3_context *pCtx, const ColvecScalar *pV);

/* Binds cell *pV to parameter iBind of pStmt, its bytes with destructor
** xDel. Returns the bind's result code. */
int colvecCellBind(sqlite3_stmt *pStmt, int iBind, const ColvecScalar *pV,
                   void (*xDel)(void *));

/*
** Sets the SQL result to column iCol of row iRow of segment h. Returns
** SQLITE_OK or an error with *pzErr set.
*/
int colvecLayoutResult(const ColvecConfig *pC, ColvecSegHandle *h, int iCol,
                       int64_t iRow, sqlite3_context *pCtx, char **pzErr);

/*
** Binds column iCol of row iRow of source pSrc to parameter iBind of pStmt
** (until its next step). Returns SQLITE_OK or an error with *pzErr set.
*/
int colvecLayoutBind(const ColvecConfig *pC, const ColvecSource *pSrc,
                     int64_t iRow, int iCol, sqlite3_stmt *pStmt, int iBind,
                     char **pzErr);

/*************************************************************************
** Interface to code in colvec_folder.c (where segment files are named and
** kept)
**
** Segment files live in <database file>-colvec/<folder>/NNNNNN.seg, where
** <folder> is an id chosen at CREATE (16 random hex digits, new on disk),
** recorded with the table (colvecStorageFolder) and never changed (RENAME
** touches no files); tables created before ids have the table name,
** %XX-escaped, instead. The name is validated whenever it is read back. A
** database without a file (":memory:", temporary, memdb) gets a name in
** the memory store instead (colvecFolderDbFile): its folders and segments
** live in memory, by the same code, until the connection closes. colvec
** deletes only segment-named files (NNNNNN.seg, NNNNNN.seg.tmp) and then a
** folder only when it is empty.
*/

/* Path of segment iSegid in folder zDir (sqlite3_malloc'd). */
char *colvecFolderSegPath(const char *zDir, int64_t iSegid,
                          const char *zSuffix);

/*
** Returns the store that holds schema zDb's segments: colvecStoreMem for
** a database without a file (":memory:", temporary, SQLite's memdb VFS),
** else colvecStoreFile. The one place a store is chosen.
*/
const ColvecStore *colvecFolderDbStore(sqlite3 *db, const char *zDb);

/*
** Returns the name that schema zDb's segment folders hang off
** ("<name>-colvec/<folder>"), sqlite3_malloc'd (NULL when out of memory):
** the database's file name, or for a database without a file (":memory:",
** temporary, SQLite's memdb VFS) COLVEC_STORE_MEM_ROOT/<connection>/
** <schema>, a path of the memory store that colvecFolderMemRelease() frees.
*/
char *colvecFolderDbFile(sqlite3 *db, const char *zDb);

/*
** Frees every memory folder and segment of connection db (called when the
** connection closes; mappings still open keep their bytes until closed).
*/
void colvecFolderMemRelease(sqlite3 *db);

/*
** Returns the path of segment folder zFolder of the database file zFile,
** "<zFile>-colvec/<zFolder>" (sqlite3_malloc'd; NULL when out of memory).
*/
char *colvecFolderPath(const char *zFile, const char *zFolder);

/*
** Chooses an id for a new table of schema zDb and creates its folder (a
** name nothing on disk, or in memory, uses yet), durably: the folder
** holding it is fsynced, and so is the database's folder, which holds
** <db>-colvec. Returns SQLITE_OK with *pzFolder set (sqlite3_malloc'd), or
** an error with *pzErr set.
*/
int colvecFolderNew(sqlite3 *db, const char *zDb, char **pzFolder,
                    char **pzErr);

/*
** Removes the segment-named files (NNNNNN.seg, NNNNNN.seg.tmp) of table
** folder zDir of store pStore, then zDir itself if that left it empty.
** Anything else is kept; a zDir that is not a real folder (a symbolic link)
** is not touched.
*/
void colvecFolderRemove(const ColvecStore *pStore, const char *zDir);

/*
** Removes orphan table folders of schema zDb: folders under <db>-colvec/
** whose name is an id that no colvec table (other than zSkip, which is
** being created or dropped) names, as colvecFolderRemove() does. Only
** safe while this connection holds the write lock in a transaction that
** cannot restore a dropped table: a CREATE or DROP in autocommit mode.
** Errors are ignored (nothing is removed that could not be proven).
*/
void colvecFolderSweepOrphans(sqlite3 *db, const char *zDb, const char *zSkip);

/*
** Parses a segment file's name: "NNNNNN.seg", the writer's "NNNNNN.seg.tmp"
** or a cache rebuild's "NNNNNN.seg.<hex>.tmp" (digits, at most 16 hex
** digits). Returns 1 with *piSegid set, or 0 for any other name (not
** colvec's to delete).
*/
int colvecFolderParseName(const char *zName, int64_t *piSegid);

/*
** Returns a copy of message zMsg (sqlite3_free it; NULL on OOM) in which
** every quoted path of a memory file ("<memory>/.../000001.seg": a
** database without a file, an embedded table's cache in memory, the copy
** integrity-check rebuilds) reads 000001.seg (in memory): the internal
** path means nothing to a user.
*/
char *colvecFolderUserMessage(const char *zMsg);

/*
** Returns the path of a scratch folder of connection db in the memory
** store for table folder zDir, "<memory root>/<connection>/-<zUse>/<base
** name of zDir>" (sqlite3_malloc'd; NULL when out of memory). No schema's
** memory name starts with '-', so it is no table's folder.
*/
char *colvecFolderMemScratch(sqlite3 *db, const char *zUse, const char *zDir);

/*************************************************************************
** Interface to code in colvec_segment.c (the live segments of a table)
**
** Where the files are is colvec_folder.c's; how their bytes are kept
** (sidecar or embedded) the table store's (ColvecTableStore, below).
** The live set is the table's manifest; rows deleted or replaced since a
** segment was written are its tombstones (both read through
** colvec_storage.c). Each connection keeps the segments it has opened
** (mapped) and re-reads the manifest only when the database changed.
*/

typedef struct ColvecSegIndex ColvecSegIndex;

/*
** A per-column cache that a reader of the segment (the index) hangs on the
** handle: opaque here, freed with the handle through its own destructor,
** so the segment code never calls up into the code that made it.
*/
typedef struct ColvecSegSlot ColvecSegSlot;
struct ColvecSegSlot {
  void *p;               /* the cached object, or NULL */
  void (*xFree)(void *); /* frees p (called once, at handle close) */
};

/* One open, live segment. */
struct ColvecSegHandle {
  int64_t iSegid;        /* id in the manifest (file NNNNNN.seg) */
  uint64_t cksum;        /* header checksum the manifest records */
  ColvecSeg *pSeg;       /* the open file */
  int64_t nRow;          /* rows in the file */
  const int64_t *aRowid; /* sorted rowids (mapping or aRowidOwned) */
  int64_t *aRowidOwned;  /* access=file: rowids read into memory */
  ColvecLayoutCol *aCol; /* per user column: its sections (layout) */
  int64_t *aTomb;        /* sorted tombstoned rowids of this segment */
  int64_t nTomb;         /* entries in aTomb */
  int64_t nTombAlloc;    /* allocated entries of aTomb */
  int nRef;              /* holders: the live set and open cursors */
  ColvecSegSlot *aSlot;  /* per user column: a reader's cache, or NULL */
};

/* The segments of one table as this connection sees them. */
typedef struct ColvecSegTable ColvecSegTable;
struct ColvecSegTable {
  sqlite3 *db;                 /* connection */
  const ColvecConfig *pConfig; /* table definition (not owned) */
  ColvecStorage *pStorage;     /* shadow tables (not owned) */
  char *zDir;                  /* folder of the segment files */
  const ColvecStore *pStore;   /* where they live (colvecFolderDbStore) */
  int bNoDir;                  /* zDir is a file or a link (embedded table):
                               ** segments are read into memory, nothing
                               ** is read or written there */
  int nSeg;                    /* live segments */
  ColvecSegHandle **apSeg;     /* live segments, ascending segid */
  sqlite3_int64 iDataVersion;  /* PRAGMA data_version at last refresh */
  int64_t iLocalGen;           /* colvecSegmentTableChanged() count seen */
  int64_t iLocalGenNow;        /* bumped by this connection's writes */
  int bValid;                  /* the cached set has been loaded */
};

/*
** Opens the segment set of a table in folder zFolder (validated or just
** made), whose manifest and tombstones pStorage reads (it must outlive the
** set), but reads nothing yet; a symbolic link or file in the folder's
** place is SQLITE_CORRUPT_VTAB, except for an embedded table, which then
** reads its segments from the database into memory (bNoDir). Returns
** SQLITE_OK with *pp set, or an error with *pzErr set.
*/
int colvecSegmentTableOpen(sqlite3 *db, const ColvecConfig *pConfig,
                           ColvecStorage *pStorage, const char *zFolder,
                           ColvecSegTable **pp, char **pzErr);

/* Closes every segment and frees the set. */
void colvecSegmentTableClose(ColvecSegTable *p);

/*
** Drops the set's references to its segments (unmapping those nothing
** else holds) and marks it for a reload. DROP calls it before deleting the
** files: Windows refuses to delete a mapped file.
*/
void colvecSegmentTableRelease(ColvecSegTable *p);

/* Takes a reference on h (a cursor iterating it keeps it open). */
void colvecSegmentHandleRef(ColvecSegHandle *h);

/* Drops a reference; the last one closes the file and frees h. */
void colvecSegmentHandleUnref(const ColvecConfig *pC, ColvecSegHandle *h);

/* Notes that this connection changed the manifest or tombstones. */
void colvecSegmentTableChanged(ColvecSegTable *p);

/*
** Brings the set up to date with the manifest and tombstones when the database
** changed since the last call: opens new segments, closes dropped ones.
** Returns SQLITE_OK or an error (SQLITE_CORRUPT_VTAB for a missing or
** damaged file) with *pzErr set.
*/
int colvecSegmentTableRefresh(ColvecSegTable *p, char **pzErr);

/*
** Finds live row iRowid: returns 1 with *piSeg and *piRow set, or 0.
** (Call colvecSegmentTableRefresh first.)
*/
int colvecSegmentLocate(const ColvecSegTable *p, int64_t iRowid, int *piSeg,
                        int64_t *piRow);

/* Returns non-zero when rowid iRowid of segment h is tombstoned. */
int colvecSegmentIsDead(const ColvecSegHandle *h, int64_t iRowid);

/*
** Returns the cache slot of user column iCol of h (one of pC->nCol, all
** empty at first), allocating the handle's slots on first use; NULL when
** out of memory. What a reader keeps there is freed with the handle.
*/
ColvecSegSlot *colvecSegmentSlot(ColvecSegHandle *h, const ColvecConfig *pC,
                                 int iCol);

/* Binary search of sorted a[0..n-1] for v: its index, or -1. */
int64_t colvecSegmentSearch(const int64_t *a, int64_t n, int64_t v);

/*
** Rebuilds the file of segment iSegid from the bytes the table's store
** keeps (a table store with bCache), first dropping every handle of the
** set so that nothing maps the old file (the caller refreshes it).
** Returns SQLITE_OK or an error with *pzErr set.
*/
int colvecSegmentRepair(ColvecSegTable *p, int64_t iSegid, char **pzErr);

/*************************************************************************
** The table stores (colvec_store_sidecar.c, colvec_store_embed.c): how a
** table keeps its segments' bytes, above the ColvecStore its files are in
** (colvec_store.h: disk or memory).
**
**   colvecTableStoreSidecar: the files in the table's folder are the
**     segments; the database holds only their manifest.
**   colvecTableStoreEmbedded (storage=embedded): the database holds every
**     segment's bytes (colvecStorageSegData*, colvec_storage.c) and the files
**     are a cache of them: verified before first use even with
**     verify=none, rebuilt when missing or damaged (into memory when the
**     folder cannot be written), and a file no row names is stale, not
**     damage.
**
** A table's store follows its format version and is chosen in one place,
** colvecSegmentTableStore(). Adding one (say, a store that fetches bytes
** over HTTP) is one file defining a ColvecTableStore and one line there.
*/

/*
** How a table store opens a segment file it has just rebuilt: supplied by
** colvec_segment.c, which owns the handles.
*/
typedef struct ColvecSegReopen ColvecSegReopen;
struct ColvecSegReopen {
  void *pCtx; /* the handle being opened (opaque to the store) */
  /* opens file zPath of store pStore as the segment and verifies every
  ** section (bMemo: through the process's memo of verified files).
  ** Returns SQLITE_OK, or an error with *pzErr set and the file closed. */
  int (*xOpen)(void *pCtx, const ColvecStore *pStore, const char *zPath,
               int bMemo, char **pzErr);
};

/* The methods of one table store; see the section comment. */
typedef struct ColvecTableStore ColvecTableStore;
struct ColvecTableStore {
  const char *zName; /* "sidecar", "embedded": colvec_segments().storage */
  int bCache;        /* 1: the files are a cache of bytes kept elsewhere */
  /* segment iSegid of set p could not be opened or failed a check with
  ** rc (never SQLITE_NOMEM or an interrupt), *pzErr saying why: rebuilds
  ** its file from the kept bytes and opens it through pReopen (NULL:
  ** rebuild only), or returns rc and *pzErr as they are */
  int (*xRecover)(ColvecSegTable *p, int64_t iSegid, int rc,
                  const ColvecSegReopen *pReopen, char **pzErr);
  /* segment iSegid's file zPath was just written, before the manifest
  ** names it: keeps its bytes inside the current transaction */
  int (*xKeep)(ColvecSegTable *p, int64_t iSegid, const char *zPath,
               char **pzErr);
  /* integrity-check of live segment h beyond its open file's checksums:
  ** what new connections would read (pInt may stop it). SQLITE_OK, or an
  ** error with *pzErr (COLVEC_CORRUPT_VTAB for damage) */
  int (*xCheck)(ColvecSegTable *p, ColvecSegHandle *h,
                const ColvecInterrupt *pInt, char **pzErr);
};

/* The files are the segments (colvec_store_sidecar.c). */
extern const ColvecTableStore colvecTableStoreSidecar;

/* The database keeps the bytes, the files cache them (colvec_store_embed.c). */
extern const ColvecTableStore colvecTableStoreEmbedded;

/*
** Sets *pp to the store of the table whose shadow tables pStorage reads,
** as of the current transaction. Returns SQLITE_OK or an error.
*/
int colvecSegmentTableStore(ColvecStorage *pStorage,
                            const ColvecTableStore **pp);

/*************************************************************************
** Interface to code in colvec_compact.c (writing segments)
**
** The commit protocol: a segment is written to NNNNNN.seg.tmp, fsynced,
** renamed to NNNNNN.seg, its folder fsynced, and only then named in the
** manifest (colvecStorageManifestAdd) inside the current SQLite
** transaction, which is the single commit point. Segments a merge replaces
** move to the trash (colvecStorageManifestDrop); their
** files, and orphans left by rolled-back or crashed transactions, are
** deleted by a later writer (colvecCompactCleanup).
*/

/*
** Writes the live rows of aSrc[0..nSrc-1], in rowid order, as one new
** segment and records it in the manifest; segment sources leave the
** manifest (for the trash) with their tombstones. bDefer leaves the
** graphs out (colvecIndexWrite). Writes nothing when there
** is no live
** row. Batch sources are left for the caller to clear. Returns SQLITE_OK or
** an error with *pzErr set; on error no file is left behind.
*/
int colvecCompactWrite(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                       const ColvecSource *aSrc, int nSrc, int bDefer,
                       char **pzErr);

/*
** Returns the live rows of the segments of pSegs (as last refreshed) whose
** graph is deferred (colvecIndexPending).
*/
int64_t colvecCompactDeferredRows(ColvecSegTable *pSegs);

/*
** The graphs of a pending segment being built in steps by the 'index'
** command, kept by the connection between commands (ColvecVtab.pIndexJob):
** the segment, its live rows when the job began, and a graph build per
** vector column. Only the last step writes anything; a job whose segment
** was merged, rewritten or lost rows since is dropped and started again.
*/
typedef struct ColvecCompactJob ColvecCompactJob;

/* Frees a job (NULL allowed). */
void colvecCompactJobFree(ColvecCompactJob *p);

/*
** The 'index' command's work, about nBudget rows of graph building: the
** oldest segments whose graph is deferred that fit the budget whole are
** rewritten as one segment with its graph; when the oldest does not fit,
** its graphs are built nBudget rows further in *ppJob (started, or
** carried on from the last command), and once complete the segment is
** rewritten with them, which counts as the segment's rows against the
** budget: by the next command, unless what is left of the budget covers
** it (so that a paced step either builds or rewrites). Does nothing when
** no segment is pending. Returns
** SQLITE_OK or an error with *pzErr set (the job then dropped).
*/
int colvecCompactIndex(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                       int64_t nBudget, ColvecCompactJob **ppJob, char **pzErr);

/*
** Sets the largest buffer a segment write may need (n <= 0: the default,
** under SQLite's limit on one allocation), which caps the rows of one
** segment: larger merges and `optimize` write several segments, and
** segments over a quarter of the cap are not merged again. For debug
** builds' colvec_test_segment_bytes(); process-wide.
*/
void colvecCompactSetMaxBytes(int64_t n);

/*
** The 'embed' (bEmbed) and 'sidecar' commands: switches the table's storage
** inside the current transaction. Embedding stores the bytes of every live
** segment; going back to sidecar first makes sure every live segment has
** its file (rebuilding missing ones), then deletes the bytes. Nothing
** happens when the table already has that storage. Returns SQLITE_OK or an
** error with *pzErr set.
*/
int colvecCompactConvert(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                         int bEmbed, char **pzErr);

/*
** Size-tiered merging: while some tier (segments of 4^t..4^(t+1) times
** delta_rows live rows) holds 4 or more segments, merges that tier into one
** segment; a segment with more tombstoned than live rows is rewritten.
** bAll merges every segment into one (the optimize command), with its
** graph: a lone segment whose graph is deferred is rewritten too.
*/
int colvecCompactMerge(ColvecSegTable *pSegs, ColvecStorage *pStorage, int bAll,
                       char **pzErr);

/*
** Deletes the files nothing can need any more: segments dropped by earlier
** write transactions (in WAL mode only once COLVEC_WAL_KEEP more
** transactions have compacted since, for readers whose snapshot is older
** than their first read of the table), segments created and dropped inside
** one earlier transaction (never visible to anyone), and files no manifest
** or trash row names (orphans of rolled-back or crashed writers). With
** bCommit (at xSync, when no ROLLBACK TO can name them again) the segments
** created and dropped inside the current transaction go too. Call only
** inside a write transaction.
*/
int colvecCompactCleanup(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                         int bCommit, char **pzErr);

/*
** Integrity check of the counters and the folder: next_segid and
** generation must agree with the manifest and the trash
** (colvecStorageCounters); unless bCountersOnly, every segment file with a
** segid below next_segid (so not an orphan of a rolled-back writer) must be
** named by the manifest or the trash. Returns SQLITE_OK, or
** SQLITE_CORRUPT_VTAB with *pzErr saying what is wrong.
*/
int colvecCompactCheckFiles(ColvecSegTable *pSegs, ColvecStorage *pStorage,
                            int bCountersOnly, char **pzErr);

/*
** Write transactions (that compacted) for which WAL mode keeps the files of
** the segments a transaction dropped. A reader opens every segment of its
** snapshot when it first reads the table, so this matters only to a
** snapshot that began elsewhere and reads the table this much later.
*/
#define COLVEC_WAL_KEEP 16

/*************************************************************************
** Interface to code in colvec_index.c (per-segment ANN index)
**
** Each vector column of a segment may carry, as layout parts
** (colvec_layout.c, which decides which):
**   COLVEC_LAYOUT_QUANT  the trained quantizer (colvec_quant.c, serialised)
**   COLVEC_LAYOUT_CODES  one fixed-size code per row
**   COLVEC_LAYOUT_GRAPH  an HNSW graph over the rows (colvec_hnsw.c)
** The graph is built when the segment has at least COLVEC_INDEX_MIN_ROWS
** rows, its links chosen on float32 distances (its build's beam searches
** run on int8 codes when the column has them); searches traverse it on the
** codes (or on the
** float32 vectors with quantize=none), and the oversampled candidates are
** rescored with the float32 vectors.
*/

/* Segments smaller than this are searched exactly (no graph). */
#define COLVEC_INDEX_MIN_ROWS 2048

/* Segments larger than this get no graph either (node ids are 32-bit). */
#define COLVEC_INDEX_MAX_ROWS ((int64_t)UINT32_MAX)

/*
** How one search of one segment went, filled by the search (zeroed by its
** caller first) for colvec_segments()' last_* columns.
*/
typedef struct ColvecIndexStat ColvecIndexStat;
struct ColvecIndexStat {
  const char *zWay; /* "graph", "scan codes" or "scan vectors" (static) */
  int64_t nVisit;   /* distances computed: graph nodes, or rows scanned */
  int64_t nRescore; /* candidates rescored with their float32 vectors */
};

/* Scratch reused by every search of one table (no allocation per query). */
typedef struct ColvecIndexScratch ColvecIndexScratch;
struct ColvecIndexScratch {
  ColvecIndexStat stat;      /* the search of the segment now searched */
  ColvecHnswSearch *pSearch; /* HNSW visited tags and heaps */
  ColvecQuantQuery qq;       /* prepared quantized query */
  uint32_t *aNode;           /* candidate nodes */
  float *aDist;              /* candidate estimated distances */
  int nCand;                 /* capacity of aNode / aDist */
  const void **apVec;        /* rescoring: vector pointers of a batch */
  void *pBuf;                /* access=file: one vector */
  int nBuf;                  /* bytes allocated at pBuf */
  int bTwoHop;               /* the next graph search of a filter: two-hop,
                             ** may give up (colvecIndexSearch sets it) */
  double rPass;              /* bTwoHop: share of the segment's rows passing */
  int bGaveUp;               /* the two-hop search gave up: nothing found */
};

/* Frees the scratch's buffers (the struct itself is the caller's). */
void colvecIndexScratchFree(ColvecIndexScratch *p);

/*
** Index types. A segment's vector column is searched through one type,
** chosen once when the index is opened (colvec_index.c:indexType): the
** first type of the table whose layout part (ePart) the column has — at
** compaction, the first whose part colvecLayoutIndexParts() gives it —
** else the exact scan. A filter that passes few rows is scanned exactly
** whatever the type (colvecIndexSearch). Every type shares the quantizer,
** the codes and the float32 vectors of ColvecSegIndex, and rescoring
** (colvecRescoreFinish, colvec_rescore.c).
*/
/*
** A graph of one segment column built in steps (the 'index' command): the
** live vectors of the segment copied out, and an HNSW build that inserts
** them a budget at a time (colvec_index_hnsw.c). JobNew takes ownership of
** aVec (nRow vectors of the column, row order) and aRowid (their rowids,
** ascending), freed with the job; Step inserts at least nMax more rows (or
** all that are left), asking pTick; Count says how many are in. Once all
** are, colvecIndexWrite of exactly these rows (ColvecIndexBuild.pJob)
** writes the graph the job built, the same as a build in one go. A failed
** Step leaves a job only to free. Return COLVEC_OK, COLVEC_NOMEM or
** COLVEC_INTERRUPT.
*/
typedef struct ColvecIndexJob ColvecIndexJob;
int colvecIndexHnswJobNew(const ColvecConfig *pC, int iCol, uint8_t *aVec,
                          int64_t *aRowid, int64_t nRow, ColvecIndexJob **pp);
int colvecIndexHnswJobStep(ColvecIndexJob *p, int64_t nMax, ColvecTick *pTick);
int64_t colvecIndexHnswJobCount(const ColvecIndexJob *p);
/*
** With every row of job p inserted and aRowid[0..nRow) its rows, hands the
** int8 quantizer and codes its first Step made (those colvecIndexWrite
** would make of these rows) to the caller, who frees them, and returns 1;
** else 0 (nothing handed over).
*/
int colvecIndexHnswJobTake(ColvecIndexJob *p, const int64_t *aRowid,
                           int64_t nRow, ColvecQuant **ppQuant,
                           uint8_t **paCode);
void colvecIndexHnswJobFree(ColvecIndexJob *p);

/* What colvecIndexWrite hands an index type's xBuild, and gets back. */
typedef struct ColvecIndexBuild ColvecIndexBuild;
struct ColvecIndexBuild {
  const ColvecQuant *pQuant; /* the column's quantizer, or NULL */
  const uint8_t *aCode;      /* its codes, one per row, or NULL */
  const uint8_t *aExact;     /* bitmap of the rows kept exact, or NULL */
  const uint32_t *aExactRow; /* those rows, ascending */
  int64_t nExact;            /* number of rows kept exact */
  uint8_t *aPart;            /* out: the structure (sqlite3_malloc'd) */
  int64_t nPart;             /* out: its bytes */
  ColvecHnswRecall recall;   /* out: what the structure measured */
  ColvecIndexJob *pJob;      /* the graph of these rows built in steps
                             ** (all of them inserted), or NULL */
};

typedef struct ColvecIndexMethods ColvecIndexMethods;
struct ColvecIndexMethods {
  const char *zName; /* name, for messages and debugging */
  int ePart;         /* COLVEC_LAYOUT_* part holding its structure; -1 none */
  /* Builds the structure of nRow vectors at aVec (rowids aRowid, row
  ** order) into pB->aPart and measures its recall (pB->recall) searching
  ** the codes of pB (and, below the floor, the vectors); NULL: nothing to
  ** build. Returns COLVEC_OK, COLVEC_NOMEM, COLVEC_INTERRUPT or an error. */
  int (*xBuild)(ColvecTick *pTick, const ColvecConfig *pC, int iCol,
                const void *aVec, int64_t nRow, const int64_t *aRowid,
                ColvecIndexBuild *pB);
  /* Opens the structure (n bytes at a, which stay valid while it is open)
  ** of a segment of nRow rows into *ppState; NULL: nothing to open.
  ** Returns COLVEC_OK, COLVEC_NOMEM or COLVEC_CORRUPT. */
  int (*xOpen)(const void *a, int64_t n, int64_t nRow, void **ppState);
  /* Offers the best rows of h among the bitmap's (aBits; NULL: all) for
  ** query q to pTopk. Returns SQLITE_OK or an error with *pzErr set. */
  int (*xSearch)(ColvecSegTable *pSegs, ColvecSegHandle *h,
                 ColvecSegIndex *pIdx, ColvecIndexScratch *s,
                 const ColvecKnnQuery *q, const uint8_t *aBits,
                 ColvecTopk *pTopk, char **pzErr);
  /* Frees what xOpen made. */
  void (*xFree)(void *pState);
};

/* The opened index of one vector column of one segment. */
struct ColvecSegIndex {
  const ColvecIndexMethods *pMethods; /* its index type */
  void *pState;                       /* what the type's xOpen made, or NULL */
  void *pStateOwned;       /* access=file: the type's part read in memory */
  ColvecQuant *pQuant;     /* quantizer, or NULL: traverse on float32 */
  const uint8_t *aCode;    /* codes, nCodeBytes per row */
  int nCodeBytes;          /* bytes per code */
  void *pCodeOwned;        /* access=file: codes read into memory */
  const uint8_t *aVecBase; /* float32 vectors in the mapping, or NULL */
  int bWarm;               /* last rescoring found the vectors resident */
  uint32_t *aExactRow;     /* rows the codes leave out, ascending, or NULL */
  int64_t nExact;          /* entries of aExactRow */
  uint8_t *aExact;         /* bitmap of those rows (nRow bits), or NULL */
};

/* The HNSW index type (colvec_index_hnsw.c). */
extern const ColvecIndexMethods colvecIndexHnswMethods;

/*
** Measures, as the graph's build does (COLVEC_RECALL_QUERIES of the nRow
** vectors at aVec of column iCol searched for their COLVEC_RECALL_K
** nearest), the recall of a scan of every row's code in pB (pB->pQuant set)
** rescored as a search rescores: into *pr. For a segment whose graph is
** deferred, searched by that scan until the graph is built. Returns
** COLVEC_OK, COLVEC_NOMEM or COLVEC_INTERRUPT.
*/
int colvecIndexHnswMeasureScan(ColvecTick *pTick, const ColvecConfig *pC,
                               int iCol, const void *aVec, int64_t nRow,
                               const ColvecIndexBuild *pB, double *pr);

/*
** Writes the index sections of vector column iCol for nRow vectors held
** contiguously at aVec (the column's element type, row order) with rowids
** aRowid: quantizer and codes (float columns with quantize != none), and
** the graph (segments of COLVEC_INDEX_MIN_ROWS rows or more, unless
** index=none; int8 and bit columns are traversed on their own vectors).
** bDefer leaves the graph out (and the codes too when a scan of them
** measures a recall below COLVEC_RECALL_FLOOR): see colvecIndexPending.
** pJob, when not NULL, is the column's graph built in steps: used when it
** holds exactly these rows, else the graph is built here.
** pTick is asked throughout. Returns SQLITE_OK or an error with *pzErr set
** (SQLITE_INTERRUPT when interrupted), except a failed write of pW:
** COLVEC_IOERR with *pzErr unset, the writer's message and errno telling
** what happened (colvecSegfileWriterErrmsg, colvecSegfileWriterErrno).
*/
int colvecIndexWrite(ColvecSegWriter *pW, ColvecTick *pTick,
                     const ColvecConfig *pC, int iCol, const void *aVec,
                     int64_t nRow, const int64_t *aRowid, int bDefer,
                     ColvecIndexJob *pJob, char **pzErr);

/*
** Returns 1 when segment h has a vector column whose graph was deferred
** (colvecIndexWrite with bDefer): one that should have a graph by its
** rows and definition but has neither a graph nor a measured recall (a
** fallback that left the graph out has the latter), else 0. Such a column
** is searched by a scan of its codes until a rewrite builds its graph.
*/
int colvecIndexPending(ColvecSegHandle *h, const ColvecConfig *pC);

/*
** Offers to pTopk the best rows of segment h for query q: an HNSW search
** with oversampling and rescoring when the segment has a graph and the
** filter (aBits, nPass rows passing; aBits NULL when there is no filter) is
** not selective, else an exact scan of the passing rows. With distance
** bounds (q->bRange, also set on pTopk), a graph search is widened until
** it finds k rows in range, or its candidates pass the upper bound, or it
** would visit most of the segment, which is then scanned exactly.
*/
int colvecIndexSearch(ColvecSegTable *pSegs, ColvecSegHandle *h,
                      ColvecIndexScratch *pScratch, const ColvecKnnQuery *q,
                      const uint8_t *aBits, int64_t nPass, ColvecTopk *pTopk,
                      char **pzErr);

/* What one vector column of a segment keeps and how it is searched. */
typedef struct ColvecIndexInfo ColvecIndexInfo;
struct ColvecIndexInfo {
  int bCodes;              /* quantized codes are kept */
  int bGraph;              /* a graph is kept */
  int eSearch;             /* COLVEC_RECALL_*: how the column is searched */
  int bMeasured;           /* recall holds the stored RECALL record */
  int bFallback;           /* the measure left out codes or graph that the
                           ** table's options ask for */
  int bPending;            /* the graph was deferred (colvecIndexPending):
                           ** searched by a scan of the codes (or exactly,
                           ** without codes) until it is built */
  ColvecHnswRecall recall; /* the record, valid when bMeasured */
};

/*
** Describes vector column iCol of segment h into *p from the parts it has
** and its RECALL record, which is validated against them and against the
** segment's size: a record that cannot be what colvecIndexWrite stored (a
** figure below the floor for the setting kept, or above it for one left
** out; counts that do not match the rows) is damage. A segment without a
** record (written before segments measured themselves, or too small for a
** graph) is described by its parts. Returns SQLITE_OK, or
** COLVEC_CORRUPT_VTAB / SQLITE_NOMEM with *pzErr set.
*/
int colvecIndexDescribe(ColvecSegHandle *h, const ColvecConfig *pC, int iCol,
                        ColvecIndexInfo *p, char **pzErr);

/*************************************************************************
** Interface to code in colvec_rescore.c (exact distances of candidates)
*/

/*
** Offers the nOut candidates s->aNode of a search of segment h (estimated
** distances s->aDist) to pTopk: rescored with the float32 vectors (rows
** read in order, hinted when ePrefault is none and they may not be
** resident), or with the codes' estimates when q->bRescore is 0, or
** recomputed in double when the search ran on the stored vectors (no
** quantizer). May reorder s->aNode. Returns SQLITE_OK or an error.
*/
int colvecRescoreFinish(ColvecSegHandle *h, ColvecSegIndex *pIdx,
                        ColvecIndexScratch *s, const ColvecKnnQuery *q,
                        const ColvecColumn *pCol, int ePrefault, int nOut,
                        ColvecTopk *pTopk, char **pzErr);

/*
** Makes room in s for nCand candidates (s->aNode, s->aDist, s->apVec) and
** for one vector of nByte bytes (s->pBuf), keeping what is there when it
** is large enough. Returns SQLITE_OK or SQLITE_NOMEM.
*/
int colvecRescoreReserve(ColvecIndexScratch *s, int nCand, int nByte);

/*
** Offers to pTopk the exact distances of the nOut rows s->aNode of h, one
** vector at a time (a mapped vector, or a read into s->pBuf). Returns
** SQLITE_OK or an error with *pzErr set.
*/
int colvecRescoreEach(ColvecSegHandle *h, ColvecIndexScratch *s,
                      const ColvecKnnQuery *q, const ColvecColumn *pCol,
                      int nOut, ColvecTopk *pTopk, char **pzErr);

/*************************************************************************
** Interface to code in colvec_scan.c (filters over segments)
*/

/*
** What one query has learnt about the connection's like() and glob(), so
** that the segments it filters ask PRAGMA function_list once, not once
** each: bit COLVEC_MATCH_GLOB (1) for glob, bit 0 for like. Zeroed by the
** caller before its first colvecScanBitmap.
*/
typedef struct ColvecScanMemo ColvecScanMemo;
struct ColvecScanMemo {
  unsigned mKnown;   /* functions already looked up */
  unsigned mBuiltin; /* of those, the ones that are SQLite's own */
};

/*
** The filter of a plan that a value order answers with the fewest rows of
** one segment (colvecScanPick): the bitmap starts from its rows when they
** are few, and a segment where it passes none is skipped.
*/
/* A filter found through a value order drives a segment's bitmap when it
** passes at most 1 / COLVEC_SCAN_ORDER_SHARE of the rows: the bitmap is
** then exactly its rows (and the tombstones and other filters' work). */
#define COLVEC_SCAN_ORDER_SHARE 8

typedef struct ColvecScanPick ColvecScanPick;
struct ColvecScanPick {
  int iArg;      /* its argument in the plan, or -1: no order answers one */
  int64_t nPass; /* its rows in the segment (tombstoned ones too), or -1 */
};

/*
** Sets *pPick to the filter argument of pPlan (argv values) that a value
** order of segment h answers with the fewest rows. Counts as a use of
** each filtered column's order (built on its third use). Returns SQLITE_OK
** or an error with *pzErr set.
*/
int colvecScanPick(ColvecSegTable *pSegs, ColvecSegHandle *h,
                   const ColvecPlan *pPlan, sqlite3_value **argv,
                   ColvecScanPick *pPick, char **pzErr);

/*
** Sets in aBits (one bit per row of segment h, LSB-first) exactly the live
** rows (not tombstoned) that pass the plan's filter arguments (argv
** values; IN lists expanded). Rows SQLite would reject may pass (it
** re-checks); rows it would accept never fail. pPick is colvecScanPick's
** answer for h, or NULL to compute it here. pMemo is the query's memo
** (shared by its segments). Returns SQLITE_OK or an error with *pzErr set.
*/
int colvecScanBitmap(ColvecSegTable *pSegs, ColvecSegHandle *h,
                     const ColvecPlan *pPlan, sqlite3_value **argv,
                     const ColvecScanPick *pPick, ColvecScanMemo *pMemo,
                     uint8_t *aBits, char **pzErr);

/*
** The values of a filter comparing a text column with numbers, both ways
** (SQLite compares as text when the number carries no affinity — a
** literal, a bound parameter — and as numbers when it does — a CAST,
** another table's column; xFilter cannot tell which): a row passes when it
** passes either way, and SQLite re-checks it. aNum holds the values as
** given, aText each number rendered as text by the running SQLite (other
** values as they are); an IN list's two are sorted and distinct
** (colvecFilterInSort), another operator has one value in each.
*/
typedef struct ColvecScanBoth ColvecScanBoth;
struct ColvecScanBoth {
  const ColvecScalar *aNum; /* the values as given (not owned) */
  int nNum;                 /* entries of aNum */
  ColvecScalar *aText;      /* the values with numbers as text */
  int nText;                /* entries of aText used */
  char **azText;            /* the rendered texts (nAlloc entries) */
  int nAlloc;               /* entries of azText */
};

/*
** An IN list evaluated in C over delta rows, for the lists too long to be
** bound into the delta query (colvecStorageInBound): its members with the
** column's affinity, sorted and distinct (colvecFilterInSort), their bytes
** copied (valid after xFilter's argv is gone).
*/
typedef struct ColvecScanIn ColvecScanIn;
struct ColvecScanIn {
  int iCol;            /* user column, or COLVEC_PLAN_ROWID */
  int bAll;            /* 1: a vector column, every row passes */
  int bBoth;           /* 1: numbers against a text column, see both */
  int nVal;            /* members in aVal (sorted, distinct) */
  int nCopy;           /* entries of azCopy */
  ColvecScalar *aVal;  /* the members */
  char **azCopy;       /* their bytes (entries may be NULL) */
  ColvecScanBoth both; /* with bBoth: the members both ways */
};

/*
** Reads IN list pArg, compared with column iCol of table pC (or the rowid),
** into *p, as colvecScanBitmap reads it for a segment in a KNN: a vector
** column sets bAll; numbers compared with a text column set bBoth and are
** compared as text (rendered on connection db), as the lists bound into
** the delta query compare. Returns SQLITE_OK or an error (SQLITE_NOMEM, an
** error of
** the list or of the rendering); colvecScanInClose(p) in every case.
*/
int colvecScanInOpen(sqlite3 *db, const ColvecConfig *pC, int iCol,
                     sqlite3_value *pArg, ColvecScanIn *p);

/* Returns 1 when delta value pCell (as stored: no affinity is applied)
** equals a member of p (with bBoth, either way), or p->bAll is set; 0
** otherwise (always for NULL). A binary search: log2(members) comparisons;
** -1 when reading a text cell as a number ran out of memory. */
int colvecScanInTest(const ColvecScanIn *p, sqlite3_value *pCell);

/* Frees what colvecScanInOpen read into p (p may be zeroed). */
void colvecScanInClose(ColvecScanIn *p);

/*************************************************************************
** Interface to code in colvec_storage.c (shadow tables and delta rows)
**
** Every SQL statement on a table's shadow tables, and on the pragmas colvec
** reads, is in colvec_storage.c, which describes the tables; the rest of
** colvec calls the functions below and never names a table. A table's
** shadow tables hold its config (format version, folder, segid and
** generation counters), its delta (recent rows), its manifest (live
** segments), its tombstones (deleted rows of segments) and its trash
** (dropped segments awaiting deletion).
*/

/* Version of the shadow-table format of a sidecar table. */
#define COLVEC_FORMAT_VERSION 1

/* Version of the format of an embedded table (the database holds the bytes
** of every live segment): colvec builds that know only format 1 refuse to
** open it, so none writes a segment without its bytes. */
#define COLVEC_FORMAT_EMBEDDED 2

/* Bytes per stored chunk written (the last chunk of a segment is shorter).
** Readers follow chunk order and accept any sizes, so this is no part of
** the format; a build may set another (-DCOLVEC_EMBED_CHUNK=...). */
#ifndef COLVEC_EMBED_CHUNK
#define COLVEC_EMBED_CHUNK (1 << 20)
#endif

/* Room for the cached statements of one table (ids in colvec_storage.c). */
#define COLVEC_STORAGE_NSTMT 31

/* Room for delta selects kept for reuse (colvecStorageSelectDone): the KNN
** query, the scan and the point lookup of a table, and one more. */
#define COLVEC_STORAGE_NSELECT 4

/* Conflict handling of an insert. */
typedef enum ColvecConflict {
  COLVEC_CONFLICT_ABORT = 0,   /* fail on an existing rowid */
  COLVEC_CONFLICT_REPLACE = 1, /* replace the existing row */
  COLVEC_CONFLICT_IGNORE = 2   /* keep the existing row, skip this one */
} ColvecConflict;

/* Handle on one table's shadow tables, owned by its sqlite3_vtab. */
struct ColvecStorage {
  sqlite3 *db;                                /* connection */
  const ColvecConfig *pConfig;                /* table definition (not owned) */
  sqlite3_stmt *apStmt[COLVEC_STORAGE_NSTMT]; /* by id (colvec_storage.c) */
  sqlite3_stmt *apSelect[COLVEC_STORAGE_NSELECT]; /* delta selects handed
                                                  ** back, reset, for the
                                                  ** next with their SQL */
  sqlite3_int64 iTxnGen;   /* generation of the current write transaction,
                           ** -1 until it first compacts (colvec_compact.c) */
  sqlite3_int64 iTxnSegid; /* next_segid when it first compacted: segments
                           ** from here on were never committed */
};

/*
** Creates (bCreate) or checks (format version) the shadow tables and returns
** a new storage handle in *pp. Returns SQLITE_OK or an error with *pzErr.
*/
int colvecStorageOpen(sqlite3 *db, const ColvecConfig *pConfig, int bCreate,
                      const char *zFolder, ColvecStorage **pp, char **pzErr);

/*
** Reads integer key zKey of the config ("version", "next_segid",
** "generation") into *piVal. Returns SQLITE_OK, SQLITE_CORRUPT_VTAB when
** the row is missing (*piVal unchanged), or the error of the read
** (SQLITE_SCHEMA, SQLITE_BUSY, ...), without a message.
*/
int colvecStorageConfigGet(ColvecStorage *p, const char *zKey,
                           sqlite3_int64 *piVal);

/* Writes integer key zKey of the config. Returns SQLITE_OK or an error. */
int colvecStorageConfigSet(ColvecStorage *p, const char *zKey,
                           sqlite3_int64 iVal);

/*
** Reads the segment folder name recorded at CREATE into *pzFolder
** (sqlite3_malloc'd) and validates it (colvecStorageFolderCheck): a damaged
** value is SQLITE_CORRUPT_VTAB. Returns SQLITE_OK or an error with *pzErr.
*/
int colvecStorageFolder(ColvecStorage *p, char **pzFolder, char **pzErr);

/* Kinds of folder name (colvecStorageFolderCheck). */
#define COLVEC_FOLDER_ID 1      /* an id: COLVEC_FOLDER_ID_LEN hex digits */
#define COLVEC_FOLDER_LEGACY 2  /* old layout: the escaped table name */
#define COLVEC_FOLDER_ID_LEN 16 /* length of an id */
#define COLVEC_FOLDER_MAX 255   /* longest name accepted */

/*
** Classifies folder name z (n bytes, read back from the config): returns
** COLVEC_FOLDER_ID for an id ([0-9a-f]{16}), COLVEC_FOLDER_LEGACY for a
** name of the old layout (([A-Za-z0-9_-]|%[0-9A-F]{2})+), 0 for anything
** else. Neither kind can hold '/', '\', '.', NUL, or be empty or longer
** than COLVEC_FOLDER_MAX, so both name a folder directly under
** <db>-colvec/.
*/
int colvecStorageFolderCheck(const char *z, int n);

/* Table and folder names of every colvec table of a database. */
typedef struct ColvecFolderList ColvecFolderList;
struct ColvecFolderList {
  int n;           /* number of tables */
  char **azTable;  /* table names */
  char **azFolder; /* the folder each one's config names, unchecked */
};

/*
** Fills *pList with every colvec table of schema zDb except zSkip (may be
** NULL) and the folder its config names. Fails (leaving *pList empty)
** when any table that may be a colvec table cannot be read: then nothing
** can be proven unowned.
*/
int colvecStorageFolderList(sqlite3 *db, const char *zDb, const char *zSkip,
                            ColvecFolderList *pList);

/* Frees the contents of a list filled by colvecStorageFolderList(). */
void colvecStorageFolderListFree(ColvecFolderList *pList);

/*
** Refuses folder zFolder of table p when another colvec table of the same
** schema names it too (a damaged or edited database: each table's cleanup
** would delete the other's files): SQLITE_CORRUPT_VTAB with *pzErr set. A
** list that cannot be read skips the check. Returns SQLITE_OK otherwise.
*/
int colvecStorageFolderShared(ColvecStorage *p, const char *zFolder,
                              char **pzErr);

/*
** Sets *pbExists to whether table p's config table still exists (a CREATE
** undone by ROLLBACK TO leaves the table object without shadow tables).
** Returns SQLITE_OK or an error.
*/
int colvecStorageConfigExists(ColvecStorage *p, int *pbExists);

/* xShadowName: non-zero when zSuffix is the suffix of a shadow table. */
int colvecStorageIsShadow(const char *zSuffix);

/*
** colvec_check(): prepares and steps, in *ppSnap, a read of the config of
** table zTab of schema zDb (which need not be connected), so that the
** connection holds one read transaction until the caller finalizes
** *ppSnap (also on error). Returns SQLITE_OK or the error of the read.
*/
int colvecStorageSnapshot(sqlite3 *db, const char *zDb, const char *zTab,
                          sqlite3_stmt **ppSnap);

/*
** colvec_backup(): prepares and steps, in *ppHold, a read of schema zDb's
** sqlite_schema (an aggregate: one row, the statement stays active), so
** that the connection holds one read transaction on zDb, which every later
** read of the call shares, until the caller finalizes *ppHold (also on
** error). Returns SQLITE_OK or the error of the read.
*/
int colvecStorageSchemaHold(sqlite3 *db, const char *zDb,
                            sqlite3_stmt **ppHold);

/*
** Records new live segment iSegid (nRow rows, header checksum cksum, tier
** iLevel) in the manifest. Returns SQLITE_OK or an error with *pzErr set.
*/
int colvecStorageManifestAdd(ColvecStorage *p, sqlite3_int64 iSegid,
                             sqlite3_int64 nRow, sqlite3_uint64 cksum,
                             int iLevel, char **pzErr);

/*
** Moves segment iSegid from the manifest to the trash with generation iGen
** (negative: created in the same transaction) and drops its tombstones.
** Returns SQLITE_OK or an error with *pzErr set.
*/
int colvecStorageManifestDrop(ColvecStorage *p, sqlite3_int64 iSegid,
                              sqlite3_int64 iGen, char **pzErr);

/*
** Returns 1 when the table is embedded (its format version is
** COLVEC_FORMAT_EMBEDDED), 0 when not, or a negative SQLite error code.
** Read each time (one cached statement): another connection may have
** converted the table. Called by writes of segments and when a segment
** file cannot be used, never per query.
*/
int colvecStorageEmbedded(ColvecStorage *p);

/*
** Stores chunk iChunk (n bytes at a) of segment iSegid.
** Returns SQLITE_OK or an error with *pzErr set (not for SQLITE_NOMEM).
*/
int colvecStorageSegDataAdd(ColvecStorage *p, sqlite3_int64 iSegid,
                            sqlite3_int64 iChunk, const void *a, int n,
                            char **pzErr);

/*
** Where colvecStorageSegDataRead puts the bytes of a segment: xSize once,
** when the chunks are known, then for each chunk in order xDest (where its
** n bytes are to be read) and xChunk (they are there). A non-OK return
** from xSize or xChunk stops the read and is returned.
*/
typedef struct ColvecSegDataSink ColvecSegDataSink;
struct ColvecSegDataSink {
  void *pCtx; /* first argument of every callback */
  int (*xSize)(void *pCtx, sqlite3_int64 nByte, int nMaxChunk); /* totals */
  void *(*xDest)(void *pCtx, sqlite3_int64 iOff, int n); /* chunk goes here */
  int (*xChunk)(void *pCtx, sqlite3_int64 iOff, int n);  /* chunk is there */
};

/*
** Reads the stored bytes of segment iSegid into pSink: one query of the
** chunks' rowids and sizes (no overflow page read), then each chunk
** straight into place with an incremental-blob read. Chunks may have any
** sizes; they must be numbered 0, 1, ... and be BLOBs, or the result is
** COLVEC_CORRUPT_VTAB with *pzErr saying which. Returns SQLITE_OK or an
** error with *pzErr set (not for SQLITE_NOMEM or the sink's own errors).
** A segment without chunks is SQLITE_OK after xSize(pCtx, 0, 0) only.
*/
int colvecStorageSegDataRead(ColvecStorage *p, sqlite3_int64 iSegid,
                             const ColvecSegDataSink *pSink, char **pzErr);

/*
** Switches the table to embedded (bEmbed: creates the chunk table if needed,
** sets the format version; the caller stores the live segments' bytes) or
** to sidecar (deletes every chunk, sets format 1). Inside the
** current transaction. Returns SQLITE_OK or an error with *pzErr set.
*/
int colvecStorageSetEmbedded(ColvecStorage *p, int bEmbed, char **pzErr);

/*
** Calls xSeg(pCtx, segid, nrow, cksum, pzErr) for each live segment, in
** ascending segid, until it returns other than SQLITE_OK. Returns
** SQLITE_OK, xSeg's error (its *pzErr as xSeg left it), or an error of
** the read with *pzErr set (not for SQLITE_NOMEM).
*/
int colvecStorageManifestScan(ColvecStorage *p,
                              int (*xSeg)(void *, sqlite3_int64, sqlite3_int64,
                                          sqlite3_uint64, char **),
                              void *pCtx, char **pzErr);

/*
** Records that rowid iRowid of segment iSegid is deleted (a tombstone).
** Returns SQLITE_OK or an error with *pzErr set.
*/
int colvecStorageTombAdd(ColvecStorage *p, sqlite3_int64 iSegid,
                         sqlite3_int64 iRowid, char **pzErr);

/*
** Calls xTomb(pCtx, segid, rowid) for every tombstone, sorted by segid then
** rowid, until it returns other than SQLITE_OK. Returns SQLITE_OK or the
** first error, with *pzErr set for an error of the read (not for
** SQLITE_NOMEM).
*/
int colvecStorageTombScan(ColvecStorage *p,
                          int (*xTomb)(void *, sqlite3_int64, sqlite3_int64),
                          void *pCtx, char **pzErr);

/*
** Returns 1 when segment file iSegid is still needed: the manifest names
** it, or a trash row that is kept (generation g >= 0 with g > iKeep, or -iGen,
** or any row when bAnyTrash; see colvecCompactCleanup), 0 when not, or a
** negative error code.
*/
int colvecStorageSegNeeded(ColvecStorage *p, sqlite3_int64 iSegid,
                           sqlite3_int64 iKeep, sqlite3_int64 iGen,
                           int bAnyTrash);

/*
** Bound of the counters next_segid and generation: a segment file's name
** holds at most 15 digits (colvecFolderParseName), and a counter this large
** can only come from a damaged database.
*/
#define COLVEC_COUNTER_MAX ((sqlite3_int64)999999999999999)

/*
** Reads the table's counters next_segid and generation into *piNextSegid
** and *piGen (either may be NULL) and checks them against the rows that
** name segments: next_segid must lie above every segid of the manifest and
** the trash, generation at or above every generation of the trash, both
** in range (below COLVEC_COUNTER_MAX). Called before a segment file is
** written or a file deleted, so that damaged counters never make colvec
** replace or delete a live segment. Returns SQLITE_OK, COLVEC_CORRUPT_VTAB
** with *pzErr saying what is wrong, or another error.
*/
int colvecStorageCounters(ColvecStorage *p, sqlite3_int64 *piNextSegid,
                          sqlite3_int64 *piGen, char **pzErr);

/*
** Integrity check of segment file zFile (segid iSegid, below next_segid):
** SQLITE_OK when the manifest or any trash row names it, else
** SQLITE_CORRUPT_VTAB with *pzErr saying so (or another error).
*/
int colvecStorageSegNamed(ColvecStorage *p, sqlite3_int64 iSegid,
                          const char *zFile, char **pzErr);

/*
** Drops the trash rows that colvecStorageSegNeeded(., iKeep, iGen, 0)
** no longer keeps. Returns SQLITE_OK or an error with *pzErr set.
*/
int colvecStorageTrashPrune(ColvecStorage *p, sqlite3_int64 iKeep,
                            sqlite3_int64 iGen, char **pzErr);

/*
** Reads PRAGMA data_version of the table's schema into *piVersion (it
** changes when another connection commits). Returns SQLITE_OK or an error.
*/
int colvecStorageDataVersion(ColvecStorage *p, sqlite3_int64 *piVersion);

/* Returns non-zero when the table's database is in WAL mode. */
int colvecStorageIsWal(ColvecStorage *p);

/*
** WAL mode: returns 1 when the newest commit of the table's database no
** longer has this table with segment folder zFolder (a newer commit dropped
** it, so a snapshot that still has it is too old), read through a
** read-only connection of its own; 0 when it does, when the database is
** not in WAL mode or has no file, or when that cannot be read.
*/
int colvecStorageDroppedLater(ColvecStorage *p, const char *zFolder);

/*
** Number of delta rows in *pn and the largest delta rowid in *piMax
** (INT64_MIN when the delta is empty); either pointer may be NULL.
*/
int colvecStorageDeltaStat(ColvecStorage *p, sqlite3_int64 *pn,
                           sqlite3_int64 *piMax);

/* Returns 1 when delta row iRowid exists, 0 when not, negative on error. */
int colvecStorageDeltaHas(ColvecStorage *p, sqlite3_int64 iRowid);

/* Deletes every delta row. Returns SQLITE_OK or an error with *pzErr. */
int colvecStorageDeltaClear(ColvecStorage *p, char **pzErr);

/*
** Appends every delta row to pBatch, checking each value (a damaged row
** gives SQLITE_CORRUPT_VTAB with *pzErr set).
*/
int colvecStorageLoadDelta(ColvecStorage *p, ColvecBatch *pBatch, char **pzErr);

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

/*
** Inserts row iRowid into the delta, each column bound by
** xBind(pCtx, iCol, pStmt, iBind). Returns SQLITE_OK or an error.
*/
int colvecStorageInsertWith(ColvecStorage *p, sqlite3_int64 iRowid,
                            int (*xBind)(void *, int, sqlite3_stmt *, int),
                            void *pCtx);

/* Deletes row iRowid (no error when it does not exist). */
int colvecStorageDelete(ColvecStorage *p, sqlite3_int64 iRowid);

/*
** Text primary keys ("id text primary key", ColvecConfig.bPkText): the
** shadow table T_ids maps each row's text id to its rowid, written in the
** same transaction as the row.
**
** colvecStorageIdFind looks up text id pId: SQLITE_ROW with *piRowid set
** (and, when ppRowid is not NULL, *ppRowid a protected copy of the rowid
** value, freed with sqlite3_value_free), SQLITE_DONE when no row has it,
** or an error.
*/
int colvecStorageIdFind(ColvecStorage *p, sqlite3_value *pId,
                        sqlite3_int64 *piRowid, sqlite3_value **ppRowid);

/*
** Sets the result of pCtx to the text id of row iRowid. Returns SQLITE_OK,
** COLVEC_CORRUPT_VTAB with *pzErr set when the row has no text id (or not
** a text one), or an error of the read.
*/
int colvecStorageIdResult(ColvecStorage *p, sqlite3_int64 iRowid,
                          sqlite3_context *pCtx, char **pzErr);

/*
** Compares text id pId with the one of row iRowid: 1 when equal, 0 when
** not (or the row has none), or a negative error code.
*/
int colvecStorageIdIs(ColvecStorage *p, sqlite3_int64 iRowid,
                      sqlite3_value *pId);

/* Maps text id pId to row iRowid. SQLITE_CONSTRAINT when either is taken. */
int colvecStorageIdAdd(ColvecStorage *p, sqlite3_value *pId,
                       sqlite3_int64 iRowid);

/* Removes the text id of row iRowid (no error when it has none). */
int colvecStorageIdDelete(ColvecStorage *p, sqlite3_int64 iRowid);

/*
** Integrity check of T_ids: every id is TEXT and names a live row
** (xLive(pCtx, rowid) returns 1 for a live row, 0 for none, negative for
** an error), no id is there twice, and there are as many ids as the nLive
** live rows. Returns SQLITE_OK or COLVEC_CORRUPT_VTAB with *pzErr set (or
** an error of the read).
*/
int colvecStorageIdCheck(ColvecStorage *p, sqlite3_int64 nLive,
                         int (*xLive)(void *, sqlite3_int64), void *pCtx,
                         char **pzErr);

/*
** Prepares a select of the delta rows that pass the filters, giving the
** rowid, then the user columns: column 1+i of the result is user column i
** when bit i of the used-columns mask (idxNum encoding, colvec_plan.h) is
** set, NULL otherwise. The filters are
** the plan's filter arguments (argv values bound, IN lists expanded).
** bOneRow instead selects the one row whose rowid is bound to parameter 1
** (a point lookup, no plan).
** Returns SQLITE_OK with *ppStmt (the caller hands it back with
** colvecStorageSelectDone) or an error with *pzErr. A statement handed
** back earlier with the same SQL is reused: a KNN query or a scan does not
** compile its delta select again each time it runs.
*/
int colvecStorageSelect(ColvecStorage *p, int mUsed, const ColvecPlan *pPlan,
                        sqlite3_value **argv, int bOneRow,
                        sqlite3_stmt **ppStmt, char **pzErr);

/*
** Hands back a statement of colvecStorageSelect (NULL is a no-op): resets
** it and keeps it for reuse, or finalizes it. Returns what sqlite3_reset
** returns: SQLITE_OK, or the error of its last step.
*/
int colvecStorageSelectDone(ColvecStorage *p, sqlite3_stmt *pStmt);

/*
** Returns 1 when the IN list of plan argument iArg (argv[iArg]) is bound
** into the delta query by colvecStorageSelect, 0 when it is left out (the
** query then returns rows the list rejects: SQLite re-checks a scan, a KNN
** tests the list itself, colvecScanInTest). A list is bound when it holds
** at most 64 values and the plan's lists together stay within the
** connection's SQLITE_LIMIT_VARIABLE_NUMBER; IN lists therefore have no
** length limit.
*/
int colvecStorageInBound(ColvecStorage *p, const ColvecPlan *pPlan,
                         sqlite3_value **argv, int iArg);

/* Returns non-zero when used-columns mask mUsed (idxNum) includes column
** iCol. */
int colvecStorageUsesColumn(int mUsed, int iCol);

/*
** Runs the integrity check of the delta: every row's vectors have the
** column's size and finite elements, attributes the declared type.
** Returns SQLITE_OK, or SQLITE_CORRUPT_VTAB with *pzErr describing the
** first problem.
*/
int colvecStorageCheck(ColvecStorage *p, char **pzErr);

/*
** Checks that every shadow table of table pConfig exists. Returns SQLITE_OK,
** or SQLITE_CORRUPT_VTAB with *pzErr set to "colvec: table T is damaged:
** shadow table T_x is missing" (the first missing one), or another error.
*/
int colvecStorageShadowCheck(sqlite3 *db, const ColvecConfig *pConfig,
                             char **pzErr);

/*
** Called with the result rc of a method that used the shadow tables: when
** rc is an SQL error (SQLITE_ERROR) and a shadow table is missing, replaces
** *pzErr (freeing it) with the "is damaged" message and returns
** SQLITE_CORRUPT_VTAB; otherwise returns rc and leaves *pzErr unchanged
** (but sqlite3_errmsg() may have been reset: read it first).
*/
int colvecStorageDamaged(ColvecStorage *p, int rc, char **pzErr);

/*************************************************************************
** Interface to code in colvec_knn.c (exact KNN over the delta)
*/

/* Parameters of one KNN query, from MATCH and the hidden columns. */
struct ColvecKnnQuery {
  int iCol;              /* vector column searched */
  const void *pVec;      /* query vector in the column's binary form */
  int k;                 /* how many results */
  double rOversample;    /* oversampling factor (quantized search) */
  int bRescore;          /* rescore candidates with float32 vectors */
  int ef;                /* HNSW beam width; 0 = default */
  int bRange;            /* 1: only rows with a distance in range qualify */
  ColvecTopkRange range; /* `distance` bounds, when bRange */
};

/*
** Offers to pTopk (initialised for q->k) every row of the delta that
** passes the plan's filters with its exact distance (row -1: delta rows
** are found again by rowid), and sets *pnPass to how many passed. The
** caller sorts. Returns SQLITE_OK or an error with *pzErr set.
*/
int colvecKnnExact(ColvecStorage *pStorage, const ColvecKnnQuery *q,
                   const ColvecPlan *pPlan, sqlite3_value **argv,
                   ColvecTopk *pTopk, int64_t *pnPass, char **pzErr);

/*
** How the last KNN query of a connection searched one source of a table:
** a segment or the delta (colvec_segments()' last_* columns).
*/
typedef struct ColvecKnnTrace ColvecKnnTrace;
struct ColvecKnnTrace {
  int64_t iSegid;       /* the segment, or -1: the delta */
  ColvecIndexStat stat; /* how it was searched (zWay NULL: no row passed) */
  int64_t nPass;        /* rows that passed the filters and deletions */
  double rMicros;       /* time spent on it, in microseconds */
};

/*************************************************************************
** Interface to code in colvec_write.c (the write path)
*/

/* One colvec table as seen by one connection. */
typedef struct ColvecVtab ColvecVtab;
struct ColvecVtab {
  sqlite3_vtab base;           /* base class: must be first */
  sqlite3 *db;                 /* connection */
  ColvecConfig *pConfig;       /* parsed definition */
  ColvecStorage *pStorage;     /* shadow tables */
  ColvecSegTable *pSegs;       /* segment files */
  ColvecBatch pending;         /* rows inserted in this transaction */
  int64_t nFlushed;            /* pending rows 0..nFlushed-1 are written */
  int64_t *aMark;              /* per savepoint: nRow, nFlushed, iBulkSeg */
  int nMark;                   /* open savepoints with a mark */
  unsigned char *aRowBuf;      /* room for one row's vectors (xUpdate) */
  ColvecCell *aCell;           /* one cell per user column (xUpdate) */
  ColvecIndexScratch scratch;  /* buffers reused by every KNN search */
  ColvecCompactJob *pIndexJob; /* graphs the 'index' command is building in
                               ** steps, or NULL (colvecCompactIndex) */
  int64_t iBulkSeg;            /* first segid of the bulk load under way
                               ** (colvecWriteCompact), 0 if none */
  ColvecKnnTrace *aTrace;      /* the last KNN query: one entry per source */
  int nTrace;                  /* entries of aTrace in use */
  int nTraceAlloc;             /* entries allocated at aTrace */
  int iTraceCol;               /* vector column the last KNN searched, or -1 */
#ifdef COLVEC_DEBUG
  int eTxn; /* debug: COLVEC_TXN_* state, checks call order */
#endif
  int bMaxKnown;           /* iMaxRowid and bNoRow are valid */
  int bNoRow;              /* no live row at all (iMaxRowid meaningless) */
  sqlite3_int64 iMaxRowid; /* largest live rowid */
  ColvecVtab *pNextOpen;   /* next table of the open-table list
                           ** (colvecVtabFind), guarded by a mutex */
  int bCreated;            /* CREATEd in the current transaction, which a
                           ** ROLLBACK TO may have undone (see xSync) */
  struct ColvecCursor *pCursorList; /* open cursors (xFindFunction) */
  char *zDamage; /* connected damaged (no usable segment folder): why; every
                 ** read, write and check fails with it, DROP TABLE works;
                 ** pSegs is NULL */
};

/*
** A damaged table (ColvecVtab.zDamage): sets pTab's error message to why and
** returns SQLITE_CORRUPT_VTAB; returns SQLITE_OK for an intact table.
** In colvec_base.c, below the cursor and the table methods that call it.
*/
int colvecVtabDamaged(ColvecVtab *pTab);

/* Debug builds: where a table is in SQLite's transaction calls. */
#define COLVEC_TXN_NONE 0   /* outside a transaction (or after xCommit) */
#define COLVEC_TXN_OPEN 1   /* after xBegin */
#define COLVEC_TXN_SYNCED 2 /* after xSync, before xCommit */

/* Pending rows beyond this many bytes are written out at once. */
#define COLVEC_PENDING_MAX_BYTES (256 * 1024 * 1024)

/*
** Sets the bytes of pending rows that are written out at once (n <= 0:
** COLVEC_PENDING_MAX_BYTES). For debug builds' colvec_test_pending_bytes();
** process-wide.
*/
void colvecWriteSetPendingBytes(int64_t n);

/*
** Writes the pending rows: as a segment when there are delta_rows or more
** of them, else into the delta. Returns SQLITE_OK or an error with *pzErr.
*/
int colvecWriteFlush(ColvecVtab *pTab, char **pzErr);

/*
** Flushes, then compacts the delta into a segment when it holds more than
** delta_rows rows (or any rows, with bAll), merges segments (all of them
** with bAll) and deletes files nothing needs.
**
** A bulk load (ColvecVtab.iBulkSeg) starts when an INSERT finds more pending
** rows than memory should hold (COLVEC_PENDING_MAX_BYTES) and lasts until
** the transaction ends: the rows are written out as segments without their
** graphs and without merges, and at xSync those segments and the rows left
** are written again as one segment with its graph (or as few as the
** segment cap allows), so that every row goes into one graph build.
*/
int colvecWriteCompact(ColvecVtab *pTab, int bAll, char **pzErr);

/*
** The 'index' command: flushes (in a bulk load, writes the load's rows as
** one segment waiting for its graph, ending the load), then does about
** nBudget rows of the deferred graphs' building (colvecCompactIndex),
** merges as a commit does and deletes files nothing needs. Returns
** SQLITE_OK or an error with *pzErr set.
*/
int colvecWriteIndex(ColvecVtab *pTab, sqlite3_int64 nBudget, char **pzErr);

/* Inserts a row (pRowid NULL: a new rowid); see colvec_write.c. */
int colvecWriteInsert(ColvecVtab *pTab, sqlite3_value *pRowid,
                      ColvecConflict eConflict, sqlite3_int64 *piRowid,
                      char **pzErr);

/* Updates row iOld to rowid iNew with pTab->aCell; see colvec_write.c. */
int colvecWriteUpdate(ColvecVtab *pTab, sqlite3_int64 iOld, sqlite3_int64 iNew,
                      ColvecConflict eConflict, char **pzErr);

/* Deletes row iRowid wherever it lives. */
int colvecWriteDelete(ColvecVtab *pTab, sqlite3_int64 iRowid, char **pzErr);

/*
** Full integrity check: delta rows, segment files, manifest, tombstones,
** and for a sidecar table that the manifest or trash names every file of
** the folder (an embedded table's folder is a cache: a file no row names
** is stale, not damage). bFlush: write pending rows first (the
** 'integrity-check' command, inside a write); 0 (colvec_check(), maybe on
** a read-only connection) writes nothing and leaves pending rows, which
** are in memory only, unchecked. A segment's measured recall is checked
** against its parts (a damaged record is corruption); one whose recall made
** it leave out codes or graph is not damage: when pzNote is not NULL, a
** line per such segment column is appended to *pzNote (sqlite3_malloc'd,
** lines separated by newlines; NULL when there are none; the caller frees
** it, also on error).
*/
int colvecWriteCheck(ColvecVtab *pTab, int bFlush, char **pzNote, char **pzErr);

/*************************************************************************
** Interface to code in colvec_cursor.c (reading: xOpen .. xRowid)
*/
int colvecCursorOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur);
int colvecCursorClose(sqlite3_vtab_cursor *pCursor);
int colvecCursorFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv);
int colvecCursorNext(sqlite3_vtab_cursor *pCursor);
int colvecCursorEof(sqlite3_vtab_cursor *pCursor);
int colvecCursorColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *pCtx,
                       int iCol);
int colvecCursorRowid(sqlite3_vtab_cursor *pCursor, sqlite_int64 *piRowid);

/*
** xFindFunction: overloads match(query, vector column) with a function that
** is true on the rows of this table's KNN cursors whose query it is. SQLite
** honours xBestIndex's omit only for its first 16 constraints, so with more
** WHERE terms it may evaluate a KNN's MATCH term on every row it returns;
** anywhere else (an OR, a result column) the function is an error, as
** before. Returns 1 (overloaded) or 0.
*/
int colvecCursorFindFunction(sqlite3_vtab *pVtab, int nArg, const char *zName,
                             void (**pxFunc)(sqlite3_context *, int,
                                             sqlite3_value **),
                             void **ppArg);

/*
** Sets the table's error message (taking ownership of zErr). In
** colvec_base.c, below the cursor and the table methods that call it.
*/
void colvecVtabSetError(ColvecVtab *pTab, char *zErr);

/*************************************************************************
** Interface to code in colvec_vtab.c (the virtual table methods)
*/

/*
** Registers the "colvec" module on db with client data pAux, which SQLite
** passes to xDestroy when the connection closes (also on failure).
*/
int colvecVtabRegister(sqlite3 *db, void *pAux, void (*xDestroy)(void *));

/*
** Returns the connected table zTab of schema zDb on connection db (the one
** connected last, if SQLite holds several), or NULL. The table stays valid
** only while a statement that uses it is prepared (SQLite may disconnect it
** otherwise). Serves colvec_check(), which must not go through INSERT.
*/
ColvecVtab *colvecVtabFind(sqlite3 *db, const char *zDb, const char *zTab);

/* A colvec table reached from a SQL function, held for one snapshot. */
typedef struct ColvecVtabHeld ColvecVtabHeld;
struct ColvecVtabHeld {
  sqlite3_stmt *pStmt; /* a read of the table: keeps it connected */
  sqlite3_stmt *pSnap; /* a read of its config: holds one read transaction */
  ColvecVtab *pTab;    /* the connected table */
};

/*
** Connects colvec table zTab of schema zDb for SQL function zFunc (named in
** messages) and holds one read transaction (a snapshot) on it until
** colvecVtabRelease(p), without writing anything. Returns SQLITE_OK with
** *p filled, or an error with *pzErr set (not a colvec table, no such
** schema, a read that failed); nothing is held then.
*/
int colvecVtabHold(sqlite3 *db, const char *zFunc, const char *zDb,
                   const char *zTab, ColvecVtabHeld *p, char **pzErr);

/* Releases what colvecVtabHold() holds (also of a zeroed *p). */
void colvecVtabRelease(ColvecVtabHeld *p);

/*************************************************************************
** Interface to code in colvec_tvf.c (what the table functions share)
*/

/* xDisconnect of the table functions (colvec_segments, vec_each): frees
** the sqlite3_vtab, allocated with sqlite3_malloc. */
int colvecTvfDisconnect(sqlite3_vtab *pVtab);

/* A zeroed cursor of nByte bytes (its sqlite3_vtab_cursor first) in *ppCur,
** for a table function's xOpen. Returns SQLITE_OK or SQLITE_NOMEM. */
int colvecTvfCursor(size_t nByte, sqlite3_vtab_cursor **ppCur);

/*************************************************************************
** Interface to code in colvec_backup.c (online backup)
*/

/*
** Registers colvec_backup(dest [, schema]): the database and the segment
** files of its colvec tables, of one snapshot, copied to a new file dest
** and dest-colvec/. Called by sqlite3_colvec_init.
*/
int colvecBackupRegister(sqlite3 *db);

/*
** Registers the table-valued function colvec_segments(table [, schema])
** (colvec_segments.c): how each segment of a colvec table is stored,
** indexed and searched, and its measured recall. Called by
** colvecFuncRegister.
*/
int colvecSegmentsRegister(sqlite3 *db);

/*************************************************************************
** Interface to code in colvec_func.c (scalar SQL functions)
*/

/* Registers colvec_version(), colvec_debug(), colvec_distance_*(),
** colvec_to_json(), colvec_from_json(), colvec_check() and test hooks in
** debug builds. */
int colvecFuncRegister(sqlite3 *db);

/*************************************************************************
** Interface to code in colvec_vecapi.c (sqlite-vec's vec_* functions)
*/

/* colvec_debug() and vec_debug(): one line per build fact. */
void colvecVecapiDebug(sqlite3_context *pCtx, int argc, sqlite3_value **argv);

/* Subtypes that say a vector value's element type (sqlite-vec's). */
#define COLVEC_SUBTYPE_F32 223 /* float32 */
#define COLVEC_SUBTYPE_BIT 224 /* bit */
#define COLVEC_SUBTYPE_I8 225  /* int8 */

/* A vector argument as read by colvecVecapiRead. */
typedef struct ColvecVecapiVec ColvecVecapiVec;
struct ColvecVecapiVec {
  ColvecElem eElem; /* element type */
  int nDim;         /* number of elements (bits for a bit vector) */
  const void *a;    /* the elements (pAlloc) */
  void *pAlloc;     /* colvecMalloc'd copy; freed by colvecVecapiFree */
};

/* The subtype of a vector of element type eElem (COLVEC_SUBTYPE_*). */
int colvecVecapiSubtype(ColvecElem eElem);

/*
** Reads argument pVal of SQL function zFunc as a vector: of element type
** eForce when it is >= 0, else of the type its subtype says (none or JSON's:
** float32). float32 and int8 vectors are BLOBs or JSON text, bit vectors
** BLOBs; float32 elements must be finite; empty vectors are refused.
** Returns 0 with *p filled (free it with colvecVecapiFree), or non-zero
** with the error "colvec: <zFunc>: ..." set on pCtx and nothing to free.
*/
int colvecVecapiRead(sqlite3_context *pCtx, const char *zFunc,
                     sqlite3_value *pVal, int eForce, ColvecVecapiVec *p);

/* Frees the copy a colvecVecapiRead vector holds (p itself is the caller's). */
void colvecVecapiFree(ColvecVecapiVec *p);

/*
** Registers sqlite-vec's functions: always under their colvec_* names,
** under their vec_* names (variable argument count) when the connection has
** no function of that name and argument count, and the table-valued
** functions colvec_each and (when the connection has no vec_version())
** vec_each. See the top of colvec_vecapi.c.
*/
int colvecVecapiRegister(sqlite3 *db);

#endif /* COLVEC_INT_H */
