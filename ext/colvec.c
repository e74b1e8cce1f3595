/*
** colvec.c — entry point: checks the SQLite version, installs the memory
** methods, and registers the colvec module and SQL functions.
*/
#include "colvecInt.h"

SQLITE_EXTENSION_INIT1

/* Adapters from SQLite's allocator to colvec_mem.c's signatures. */
static void *colvecSqliteMalloc(uint64_t n) { return sqlite3_malloc64(n); }
static void *colvecSqliteRealloc(void *p, uint64_t n) {
  return sqlite3_realloc64(p, n);
}
static void colvecSqliteFree(void *p) { sqlite3_free(p); }

/*
** Connections that have colvec registered. Loading the extension twice into
** one connection must be a no-op: registering the SQL functions again while
** the loading statement runs fails with SQLITE_BUSY. Asking the connection
** (pragma_module_list) would read the schema before the module exists, which
** leaves the shadow tables unprotected in defensive mode, so colvec keeps its
** own list; an entry leaves it when SQLite destroys the module's client data
** (connection close).
*/
typedef struct ColvecLoaded ColvecLoaded;
struct ColvecLoaded {
  sqlite3 *db;         /* connection colvec is registered on */
  ColvecLoaded *pNext; /* next entry of loadedList */
};
static ColvecLoaded *loadedList =
    NULL; /* guarded by SQLITE_MUTEX_STATIC_MAIN */

/* Returns non-zero when connection db is in the list. */
static int colvecIsLoaded(sqlite3 *db) {
  ColvecLoaded *p;
  colvecMainMutexEnter();
  for (p = loadedList; p && p->db != db; p = p->pNext) {
  }
  colvecMainMutexLeave();
  return p != NULL;
}

/* Adds entry p to the list. */
static void colvecLoadedAdd(ColvecLoaded *p) {
  colvecMainMutexEnter();
  p->pNext = loadedList;
  loadedList = p;
  colvecMainMutexLeave();
}

/*
** Module client-data destructor, run when the connection closes: removes
** and frees the entry, and frees the segments its databases without a
** file kept in memory.
*/
static void colvecLoadedRemove(void *pArg) {
  ColvecLoaded **pp;
  colvecMainMutexEnter();
  for (pp = &loadedList; *pp; pp = &(*pp)->pNext) {
    if (*pp == (ColvecLoaded *)pArg) {
      *pp = (*pp)->pNext;
      break;
    }
  }
  colvecMainMutexLeave();
  colvecFolderMemRelease(((ColvecLoaded *)pArg)->db);
  sqlite3_free(pArg);
}

/*
** The extension entry point (the only exported symbol). Refuses to load
** into a SQLite older than COLVEC_MIN_SQLITE_VERSION_NUMBER with a message.
*/
#ifdef _WIN32
__declspec(dllexport)
#endif
    __attribute__((visibility("default"))) int sqlite3_colvec_init(
        sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
  int rc;
  ColvecLoaded *pLoaded;
  SQLITE_EXTENSION_INIT2(pApi);
  if (sqlite3_libversion_number() < COLVEC_MIN_SQLITE_VERSION_NUMBER) {
    if (pzErrMsg) {
      *pzErrMsg = sqlite3_mprintf(
          "colvec: needs SQLite 3.38.2 or later, this is SQLite %s",
          sqlite3_libversion());
    }
    return SQLITE_ERROR;
  }
  colvecMemSetMethods(colvecSqliteMalloc, colvecSqliteRealloc,
                      colvecSqliteFree);
  if (colvecIsLoaded(db)) return SQLITE_OK;
  pLoaded = sqlite3_malloc(sizeof(ColvecLoaded));
  if (pLoaded == NULL) return SQLITE_NOMEM;
  pLoaded->db = db;
  pLoaded->pNext = NULL;
  rc = colvecFuncRegister(db);
  if (rc == SQLITE_OK) rc = colvecBackupRegister(db);
  if (rc == SQLITE_OK) {
    /* from here on SQLite owns pLoaded and frees it via colvecLoadedRemove */
    colvecLoadedAdd(pLoaded);
    rc = colvecVtabRegister(db, pLoaded, colvecLoadedRemove);
  } else {
    sqlite3_free(pLoaded);
  }
  /* After the module: the vec_* probes prepare statements, which may read
  ** the schema, and shadow tables are only marked read-only (defensive
  ** mode) when the schema is read with the module known. */
  if (rc == SQLITE_OK) rc = colvecVecapiRegister(db);
  if (rc != SQLITE_OK && pzErrMsg) {
    *pzErrMsg =
        sqlite3_mprintf("colvec: registration failed: %s", sqlite3_errstr(rc));
  }
  return rc;
}
