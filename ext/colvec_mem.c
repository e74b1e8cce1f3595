/*
** colvec_mem.c — the one place colvec allocates memory.
**
** The extension points these wrappers at SQLite's allocator when it loads
** (so memory shows up in sqlite3_memory_used() and honours its limits); the
** Check suites leave them at libc's. colvecMemFailAfter() makes a chosen
** allocation fail, so out-of-memory paths can be tested without a
** testfixture build of SQLite.
*/
#include "colvec_core.h"

#include <stdlib.h>
#include <string.h>

/* libc fallbacks with the same signatures as sqlite3_malloc64 and friends. */
static void *memLibcMalloc(uint64_t n) { return malloc((size_t)n); }
static void *memLibcRealloc(void *p, uint64_t n) {
  return realloc(p, (size_t)n);
}
static void memLibcFree(void *p) { free(p); }

/* The allocator in use and the fault-injection countdown. */
static struct {
  void *(*xMalloc)(uint64_t);          /* allocate */
  void *(*xRealloc)(void *, uint64_t); /* resize */
  void (*xFree)(void *);               /* release */
  int nFailAfter; /* allocations that still succeed; -1 = never fail */
} memGlobal = {memLibcMalloc, memLibcRealloc, memLibcFree, -1};

/*
** Returns non-zero when the allocation being attempted must fail because
** colvecMemFailAfter() asked for it.
*/
static int memShouldFail(void) {
  if (memGlobal.nFailAfter < 0) return 0;
  if (memGlobal.nFailAfter == 0) return 1;
  memGlobal.nFailAfter--;
  return 0;
}

/*
** Installs the allocator (normally sqlite3_malloc64, sqlite3_realloc64 and
** sqlite3_free). Called once when the extension is registered.
*/
void colvecMemSetMethods(void *(*xMalloc)(uint64_t),
                         void *(*xRealloc)(void *, uint64_t),
                         void (*xFree)(void *)) {
  memGlobal.xMalloc = xMalloc;
  memGlobal.xRealloc = xRealloc;
  memGlobal.xFree = xFree;
}

/*
** Lets the next n allocations succeed and every later one fail, until it is
** called again with -1. Used by debug builds' colvec_test_fault() SQL
** function and by the Check suites.
*/
void colvecMemFailAfter(int n) { memGlobal.nFailAfter = n < 0 ? -1 : n; }

/* Allocates n bytes; returns NULL when n <= 0 or the allocation fails. */
void *colvecMalloc(int64_t n) {
  if (n <= 0 || memShouldFail()) return NULL;
  return memGlobal.xMalloc((uint64_t)n);
}

/*
** Allocates n zeroed bytes. On failure returns NULL and sets *pRc to
** COLVEC_NOMEM; does nothing and returns NULL when *pRc is already an error
** (the rc chain).
*/
void *colvecMallocZero(int *pRc, int64_t n) {
  void *p = NULL;
  if (*pRc == COLVEC_OK) {
    p = colvecMalloc(n);
    if (p) {
      memset(p, 0, (size_t)n);
    } else {
      *pRc = COLVEC_NOMEM;
    }
  }
  return p;
}

/*
** Resizes p to n bytes. Returns NULL on failure, leaving p allocated and
** owned by the caller.
*/
void *colvecRealloc(void *p, int64_t n) {
  if (n <= 0 || memShouldFail()) return NULL;
  return memGlobal.xRealloc(p, (uint64_t)n);
}

/* Releases p (NULL is allowed). */
void colvecFree(void *p) {
  if (p) memGlobal.xFree(p);
}

/* Bytes taken by one vector of nDim elements of type eElem. */
int64_t colvecVectorBytes(ColvecElem eElem, int nDim) {
  switch (eElem) {
  case COLVEC_ELEM_F32:
    return (int64_t)nDim * 4;
  case COLVEC_ELEM_I8:
    return nDim;
  case COLVEC_ELEM_BIT:
    return ((int64_t)nDim + 7) / 8;
  }
  return 0;
}
