/*
** dq_preload.c — registers colvec in a process that opens SQLite
** connections through a library it does not control (a dqlite node), for
** test/client/dqlite.sh. Loaded with LD_PRELOAD, it wraps sqlite3_open_v2(): the
** first call registers the extension named by $COLVEC_EXT with
** sqlite3_auto_extension(), then every call goes on to SQLite's own. The
** registration waits for that first open because go-dqlite configures
** SQLite (single-threaded mode) when it starts, which fails once SQLite is
** initialized; sqlite3_auto_extension() initializes it.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

/* The signature of sqlite3_open_v2(). */
typedef int (*DqOpenFn)(const char *, sqlite3 **, int, const char *);

static pthread_once_t dqOnce = PTHREAD_ONCE_INIT; /* first open registers */

/* Loads $COLVEC_EXT and registers its entry point for every connection;
** reports on stderr (the node's log) and aborts when it cannot. */
static void dqRegister(void) {
  const char *zExt = getenv("COLVEC_EXT");
  void *pLib = zExt ? dlopen(zExt, RTLD_NOW | RTLD_LOCAL) : NULL;
  void *pInit = pLib ? dlsym(pLib, "sqlite3_colvec_init") : NULL;
  if (pInit == NULL) {
    fprintf(stderr, "dq_preload: cannot load colvec from %s: %s\n",
            zExt ? zExt : "(COLVEC_EXT unset)", dlerror());
    abort();
  }
  if (sqlite3_auto_extension((void (*)(void))pInit) != SQLITE_OK) {
    fprintf(stderr, "dq_preload: sqlite3_auto_extension failed\n");
    abort();
  }
  fprintf(stderr, "dq_preload: colvec registered from %s\n", zExt);
}

/* sqlite3_open_v2(), after registering colvec once. */
int sqlite3_open_v2(const char *zFile, sqlite3 **ppDb, int flags,
                    const char *zVfs) {
  DqOpenFn xReal = (DqOpenFn)dlsym(RTLD_NEXT, "sqlite3_open_v2");
  pthread_once(&dqOnce, dqRegister);
  return xReal(zFile, ppDb, flags, zVfs);
}
