/*
** colvec_base.c — the bottom of the SQLite-dependent layers: what every
** file above it may call and which calls nothing of colvec's own above the
** SQLite-free layers: the main mutex, the interrupt probe (ColvecTick),
** the map from a segment read's failure to an SQLite code, a table's
** error message and damage report (for the cursor and the table methods
** alike), and the debug-build hook where corruption is first noticed.
*/
#include "colvecInt.h"

#include <errno.h>
#include <string.h>

#ifdef COLVEC_DEBUG
/* Called where corruption is detected, so a debugger can break here. */
int colvecCorruptError(int iLine) {
  (void)iLine;
  return SQLITE_CORRUPT_VTAB;
}
#endif

/*
** Enters SQLITE_MUTEX_STATIC_MAIN; see colvecInt.h. A SQLite built
** with SQLITE_THREADSAFE=0 has no mutexes: its sqlite3_mutex_*() functions
** are not defined (a static link fails) and the API table a loaded
** extension is handed holds NULL in their place. colvec compiled with
** SQLITE_THREADSAFE=0 (the flag of the SQLite it is linked with) makes no
** call; otherwise the calls are made only when sqlite3_threadsafe() says
** the library has mutexes.
*/
void colvecMainMutexEnter(void) {
#if !defined(SQLITE_THREADSAFE) || SQLITE_THREADSAFE
  if (sqlite3_threadsafe()) {
    sqlite3_mutex_enter(sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_MAIN));
  }
#endif
}

/* Leaves SQLITE_MUTEX_STATIC_MAIN (the pair of colvecMainMutexEnter()). */
void colvecMainMutexLeave(void) {
#if !defined(SQLITE_THREADSAFE) || SQLITE_THREADSAFE
  if (sqlite3_threadsafe()) {
    sqlite3_mutex_leave(sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_MAIN));
  }
#endif
}

/* Maps a segment read's failure to an SQLite code; see colvecInt.h. */
int colvecReadRc(int rc, int iErrno) {
  if (rc == COLVEC_NOMEM) return SQLITE_NOMEM;
  if (rc == COLVEC_IOERR && iErrno == ENOMEM) return SQLITE_NOMEM;
  if (rc == COLVEC_IOERR && iErrno != 0) return SQLITE_IOERR_READ;
  return COLVEC_CORRUPT_VTAB; /* a bad file, or shorter than it says */
}

/* Maps a file call's failure to an SQLite code; see colvecInt.h. */
int colvecFileRc(int rc, int rcOther) {
  return rc == COLVEC_NOMEM ? SQLITE_NOMEM : rcOther;
}

/*************************************************************************
** The interrupt probe (see colvecInt.h).
**
** sqlite3_is_interrupted() exists from SQLite 3.41; a loadable extension
** may only call it when the host is that new (an older host's API table has
** no such entry). Older hosts are probed instead: a statement stepped while
** another statement of the connection runs (always the case here: the
** statement that called into the table, or the COMMIT running xSync) fails
** with SQLITE_INTERRUPT while the interrupt is pending, and leaves it
** pending. A probe costs a few microseconds, so it runs at most every 2 ms.
*/

/* Milliseconds on the monotonic clock. */
static double tickMillis(void) { return colvecOsMicros() * 1e-3; }

/* Prepares a tick; see colvecInt.h. */
void colvecTickInit(ColvecTick *p, sqlite3 *db) {
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->bProbe = 1;
#if SQLITE_VERSION_NUMBER >= 3041000
  p->bProbe = sqlite3_libversion_number() < 3041000;
#endif
  p->hook.xInterrupt = colvecTickStop;
  p->hook.pCtx = p;
}

/* Whether the connection was interrupted; see colvecInt.h. */
int colvecTickStop(void *pCtx) {
  ColvecTick *p = (ColvecTick *)pCtx;
  if (p->bStop) return 1;
  if (!p->bProbe) {
#if SQLITE_VERSION_NUMBER >= 3041000
    p->bStop = sqlite3_is_interrupted(p->db);
#endif
  } else {
    double rNow = tickMillis();
    if (rNow >= p->rNext) {
      sqlite3_stmt *pStmt = NULL;
      int rc = sqlite3_prepare_v2(p->db, "SELECT 1", -1, &pStmt, NULL);
      if (rc == SQLITE_OK) rc = sqlite3_step(pStmt);
      if (pStmt && sqlite3_finalize(pStmt) == SQLITE_INTERRUPT) {
        rc = SQLITE_INTERRUPT;
      }
      /* A probe that ran out of memory has failed the statement that
      ** called colvec: SQLite keeps the failed allocation as the state of
      ** the connection while that statement runs, and reports it when the
      ** statement ends. Stop now, so that the work is undone, not
      ** finished and then reported as failed. */
      p->bStop = rc == SQLITE_INTERRUPT || (rc & 0xff) == SQLITE_NOMEM;
      p->rNext = rNow + 2.0;
    }
  }
  return p->bStop;
}

/* The interrupt error; see colvecInt.h. */
int colvecTickError(char **pzErr) {
  if (pzErr && *pzErr == NULL) *pzErr = sqlite3_mprintf("colvec: interrupted");
  return SQLITE_INTERRUPT;
}

/* Sets the table's error message; see colvecInt.h. */
void colvecVtabSetError(ColvecVtab *pTab, char *zErr) {
  sqlite3_free(pTab->base.zErrMsg);
  pTab->base.zErrMsg = zErr;
}

/* Reports a damaged table's error; see colvecInt.h. */
int colvecVtabDamaged(ColvecVtab *pTab) {
  if (pTab->zDamage == NULL) return SQLITE_OK;
  sqlite3_free(pTab->base.zErrMsg);
  pTab->base.zErrMsg = sqlite3_mprintf("%s", pTab->zDamage);
  return COLVEC_CORRUPT_VTAB;
}
