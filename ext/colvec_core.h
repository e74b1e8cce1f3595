/*
** colvec_core.h — definitions shared by every layer of colvec, including the
** layers that make no SQLite calls (distance kernels, vector parsing, plan
** encoding, top-k, segment format, quantizers, HNSW). Those layers include
** only this header and their own, so the Check suites can test them without a
** database. Layers that talk to SQLite include colvecInt.h instead.
*/
#ifndef COLVEC_CORE_H
#define COLVEC_CORE_H

#include <stddef.h>
#include <stdint.h>

/* Result codes of the SQLite-free layers; numerically equal to SQLite's. */
#define COLVEC_OK 0        /* success (SQLITE_OK) */
#define COLVEC_ERROR 1     /* generic error (SQLITE_ERROR) */
#define COLVEC_NOMEM 7     /* allocation failed (SQLITE_NOMEM) */
#define COLVEC_IOERR 10    /* I/O error (SQLITE_IOERR) */
#define COLVEC_CORRUPT 267 /* corrupt sidecar data (SQLITE_CORRUPT_VTAB) */
#define COLVEC_RANGE 25    /* argument out of range (SQLITE_RANGE) */
#define COLVEC_INTERRUPT                                                       \
  9 /* stopped by the interrupt hook (SQLITE_INTERRUPT) */

/*
** The interrupt hook of the long loops (HNSW build, quantizer training,
** segment verification): every few thousand rows or one megabyte of work
** they call xInterrupt(pCtx) and, when it returns non-zero, stop with
** COLVEC_INTERRUPT, releasing everything. It is only ever called on the
** thread that started the work; worker threads see a flag it sets. A NULL
** hook or xInterrupt means "never interrupted".
*/
typedef struct ColvecInterrupt ColvecInterrupt;
struct ColvecInterrupt {
  int (*xInterrupt)(void *pCtx); /* non-zero: stop now */
  void *pCtx;                    /* its argument */
};

/* Non-zero when hook p (may be NULL) asks to stop. */
#define COLVEC_INTERRUPTED(p)                                                  \
  ((p) && (p)->xInterrupt && (p)->xInterrupt((p)->pCtx))

/* Unused-parameter marker. */
#define COLVEC_UNUSED(x) (void)(x)

/*************************************************************************
** Interface to code in colvec_mem.c
**
** All memory goes through these three functions. The extension points them
** at sqlite3_malloc64/sqlite3_realloc64/sqlite3_free when it is loaded; the
** Check suites leave them at libc's. Debug builds can make the Nth
** allocation from now fail, to test out-of-memory paths.
*/
void *colvecMalloc(int64_t n);               /* NULL on failure or n<=0 */
void *colvecMallocZero(int *pRc, int64_t n); /* zeroed; sets *pRc on OOM */
void *colvecRealloc(void *p, int64_t n);     /* NULL on failure (p kept) */
void colvecFree(void *p);                    /* p may be NULL */
void colvecMemSetMethods(void *(*xMalloc)(uint64_t),
                         void *(*xRealloc)(void *, uint64_t),
                         void (*xFree)(void *));
void colvecMemFailAfter(int n); /* fail the (n+1)th allocation; -1 = never */

/*************************************************************************
** Element types and metrics of vector columns.
*/
typedef enum ColvecElem {
  COLVEC_ELEM_F32 = 0, /* float[N]: N little-endian float32 (4N bytes) */
  COLVEC_ELEM_I8 = 1,  /* int8[N]: N signed bytes */
  COLVEC_ELEM_BIT = 2  /* bit[N]: N bits packed LSB-first, N/8 bytes */
} ColvecElem;

typedef enum ColvecMetric {
  COLVEC_METRIC_L2 = 0,      /* Euclidean distance sqrt(sum (a-b)^2) */
  COLVEC_METRIC_COSINE = 1,  /* 1 - cos(a,b); 1.0 when either norm is 0 */
  COLVEC_METRIC_DOT = 2,     /* -(a.b), so that ascending is best first */
  COLVEC_METRIC_HAMMING = 3, /* number of differing bits (bit vectors) */
  COLVEC_METRIC_L1 = 4       /* Manhattan distance sum |a-b| */
} ColvecMetric;

/* Largest number of dimensions a vector column may declare. */
#define COLVEC_MAX_DIM 65536

/* Bytes taken by one vector of nDim elements of type eElem. */
int64_t colvecVectorBytes(ColvecElem eElem, int nDim);

#endif /* COLVEC_CORE_H */
