/*
** colvec_tvf.c — what colvec's table-valued functions (colvec_segments in
** colvec_segments.c, vec_each in colvec_vecapi.c) share: their xDisconnect
** and the allocation of a zeroed cursor for their xOpen.
*/
#include "colvecInt.h"

#include <string.h>

/* xDisconnect of the table functions; see colvecInt.h. */
int colvecTvfDisconnect(sqlite3_vtab *pVtab) {
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

/* A zeroed cursor for a table function; see colvecInt.h. */
int colvecTvfCursor(size_t nByte, sqlite3_vtab_cursor **ppCur) {
  sqlite3_vtab_cursor *pCur = sqlite3_malloc64(nByte);
  if (pCur == NULL) return SQLITE_NOMEM;
  memset(pCur, 0, nByte);
  *ppCur = pCur;
  return SQLITE_OK;
}
