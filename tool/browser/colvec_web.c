/*
** colvec_web.c — the C side of colvec's browser build (tool/browser.sh):
** SQLite and colvec compiled to WebAssembly, with a small API for the
** JavaScript wrapper (colvec.mjs) to call. One database connection per
** handle; statements run with parameters given as a JSON array, and rows
** come back as JSON text, so no pointer crosses into JavaScript but the
** strings.
**
**   webOpen(path)           opens (creates) a database, colvec registered;
**                           returns a handle > 0, or 0 on failure
**   webExec(h, sql, params) runs every statement of sql; the last one's
**                           rows come back as JSON:
**                           {"columns":[...],"rows":[[...],...]} or
**                           {"error":"message"}; params (JSON array of
**                           numbers, strings and nulls, or NULL) bind to
**                           the last statement
**   webClose(h)             closes the connection
** The returned string is owned here and valid until the next call.
*/
#include "colvec.h"
#include <sqlite3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEB_MAX_DB 8 /* connections open at once */

static sqlite3 *aWebDb[WEB_MAX_DB + 1]; /* by handle; [0] unused */
static char *zWebOut = 0;               /* the last result returned */

/* A growing output buffer (sqlite3_str). */
typedef sqlite3_str WebOut;

/* Appends z as a JSON string literal. */
static void webString(WebOut *p, const char *z, int n) {
  int i;
  sqlite3_str_appendchar(p, 1, '"');
  for (i = 0; i < n; i++) {
    unsigned char c = (unsigned char)z[i];
    if (c == '"' || c == '\\') {
      sqlite3_str_appendf(p, "\\%c", c);
    } else if (c < 0x20) {
      sqlite3_str_appendf(p, "\\u%04x", c);
    } else {
      sqlite3_str_appendchar(p, 1, (char)c);
    }
  }
  sqlite3_str_appendchar(p, 1, '"');
}

/* Replaces the last result with the text of p (consumed) and returns it. */
static const char *webFinish(WebOut *p) {
  sqlite3_free(zWebOut);
  zWebOut = sqlite3_str_finish(p);
  return zWebOut ? zWebOut : "{\"error\":\"out of memory\"}";
}

/* Returns {"error": zMsg}. */
static const char *webError(const char *zMsg) {
  WebOut *p = sqlite3_str_new(0);
  sqlite3_str_appendall(p, "{\"error\":");
  webString(p, zMsg, (int)strlen(zMsg));
  sqlite3_str_appendall(p, "}");
  return webFinish(p);
}

/* Opens database zPath with colvec registered. Returns its handle, or 0. */
int webOpen(const char *zPath) {
  int h;
  sqlite3 *db = 0;
  for (h = 1; h <= WEB_MAX_DB && aWebDb[h]; h++) {
  }
  if (h > WEB_MAX_DB) return 0;
  if (sqlite3_open(zPath, &db) != SQLITE_OK ||
      sqlite3_colvec_init(db, 0, 0) != SQLITE_OK) {
    sqlite3_close(db);
    return 0;
  }
  aWebDb[h] = db;
  return h;
}

/* Closes handle h. */
void webClose(int h) {
  if (h < 1 || h > WEB_MAX_DB || !aWebDb[h]) return;
  sqlite3_close(aWebDb[h]);
  aWebDb[h] = 0;
}

/*
** Binds the JSON array zParams to statement pStmt through SQLite's own
** json_each (so no JSON parser lives here). Returns SQLITE_OK or an error.
*/
static int webBind(sqlite3 *db, sqlite3_stmt *pStmt, const char *zParams) {
  sqlite3_stmt *pEach = 0;
  int rc, i = 0;
  if (!zParams || !zParams[0]) return SQLITE_OK;
  rc = sqlite3_prepare_v2(db, "SELECT value FROM json_each(?)", -1, &pEach, 0);
  if (rc == SQLITE_OK) rc = sqlite3_bind_text(pEach, 1, zParams, -1, 0);
  while (rc == SQLITE_OK && sqlite3_step(pEach) == SQLITE_ROW) {
    rc = sqlite3_bind_value(pStmt, ++i, sqlite3_column_value(pEach, 0));
  }
  if (rc == SQLITE_OK)
    rc = sqlite3_finalize(pEach);
  else
    sqlite3_finalize(pEach);
  return rc;
}

/* Appends row values of pStmt as a JSON array. Blobs become hex strings. */
static void webRow(WebOut *p, sqlite3_stmt *pStmt) {
  int i, n = sqlite3_column_count(pStmt);
  sqlite3_str_appendchar(p, 1, '[');
  for (i = 0; i < n; i++) {
    if (i) sqlite3_str_appendchar(p, 1, ',');
    switch (sqlite3_column_type(pStmt, i)) {
    case SQLITE_INTEGER:
      sqlite3_str_appendf(p, "%lld", sqlite3_column_int64(pStmt, i));
      break;
    case SQLITE_FLOAT:
      sqlite3_str_appendf(p, "%!.17g", sqlite3_column_double(pStmt, i));
      break;
    case SQLITE_TEXT:
      webString(p, (const char *)sqlite3_column_text(pStmt, i),
                sqlite3_column_bytes(pStmt, i));
      break;
    case SQLITE_BLOB: {
      const unsigned char *a = sqlite3_column_blob(pStmt, i);
      int j, nb = sqlite3_column_bytes(pStmt, i);
      sqlite3_str_appendchar(p, 1, '"');
      for (j = 0; j < nb; j++)
        sqlite3_str_appendf(p, "%02x", a[j]);
      sqlite3_str_appendchar(p, 1, '"');
      break;
    }
    default:
      sqlite3_str_appendall(p, "null");
    }
  }
  sqlite3_str_appendchar(p, 1, ']');
}

/* Runs every statement of zSql on handle h; see the top of the file. */
const char *webExec(int h, const char *zSql, const char *zParams) {
  sqlite3 *db;
  const char *zTail = zSql;
  WebOut *p = 0;
  int rc = SQLITE_OK;
  if (h < 1 || h > WEB_MAX_DB || !aWebDb[h]) return webError("bad handle");
  db = aWebDb[h];
  while (rc == SQLITE_OK && zTail && zTail[0]) {
    sqlite3_stmt *pStmt = 0;
    int nRow = 0, i;
    rc = sqlite3_prepare_v2(db, zTail, -1, &pStmt, &zTail);
    if (rc != SQLITE_OK) break;
    if (!pStmt) continue; /* whitespace or a comment */
    while (zTail[0] == ' ' || zTail[0] == '\n' || zTail[0] == '\t' ||
           zTail[0] == '\r' || zTail[0] == ';') {
      zTail++;
    }
    if (!zTail[0]) rc = webBind(db, pStmt, zParams); /* the last statement */
    if (p) sqlite3_free(sqlite3_str_finish(p));
    p = sqlite3_str_new(0);
    sqlite3_str_appendall(p, "{\"columns\":[");
    for (i = 0; i < sqlite3_column_count(pStmt); i++) {
      const char *zName = sqlite3_column_name(pStmt, i);
      if (i) sqlite3_str_appendchar(p, 1, ',');
      webString(p, zName, (int)strlen(zName));
    }
    sqlite3_str_appendall(p, "],\"rows\":[");
    while (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW) {
      if (nRow++) sqlite3_str_appendchar(p, 1, ',');
      webRow(p, pStmt);
    }
    sqlite3_str_appendall(p, "]}");
    if (rc == SQLITE_OK)
      rc = sqlite3_finalize(pStmt);
    else
      sqlite3_finalize(pStmt);
  }
  if (rc != SQLITE_OK) {
    if (p) sqlite3_free(sqlite3_str_finish(p));
    return webError(sqlite3_errmsg(db));
  }
  if (!p) return webError("no statement");
  return webFinish(p);
}
