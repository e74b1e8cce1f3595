/*
** colvec_backup.c — colvec_backup(dest [, schema]): a consistent online
** backup of a database whose colvec tables keep their segments in the
** sidecar folder.
**
** The copy is the database, made with SQLite's backup API, plus
** <dest>-colvec/<folder>/NNNNNN.seg for every segment that the manifest of
** the same snapshot names, for every colvec table of the schema.
**
** NOTES ON CONSISTENCY
**
** Everything is read in one read transaction of the calling connection:
** colvecStorageSchemaHold() starts it and keeps it open (an active
** statement) until the end of the call. In it, the list of colvec tables
** is read, each table is connected and its segment set refreshed
** (colvecSegmentTableRefresh opens and maps or opens every segment the
** snapshot's manifest names), the segment files are copied from those open
** handles (a newer commit's cleanup may unlink the files; an open mapping or
** descriptor still reads them), and finally the pages are copied with
** sqlite3_backup_step(p, -1). When the source connection already has a read
** transaction, backup_step uses it rather than opening its own, and copies
** every page in that one call, so the page copy is of the same snapshot and
** never restarts. In rollback-journal mode the read lock also makes other
** connections' commits wait for the end of the call (their busy timeout
** applies); in WAL mode they commit meanwhile and the copy is still of the
** snapshot the call began with. A snapshot that began long before (an open
** BEGIN ... read) may name files cleanup has already deleted: the refresh
** then fails with "the read transaction is too old, retry it".
**
** The call refuses to run inside a transaction that writes the schema:
** the copy would hold uncommitted pages and segments.
**
** The destination is untrusted input: a plain path (not ":memory:", not a
** URI) whose folder exists, is not inside a -colvec folder (whose files
** colvec's cleanup deletes), and where neither the file, its journal, WAL or
** -shm file nor its -colvec folder exist. The file is claimed by an
** exclusive create and the -colvec folder by mkdir, so a name that appears
** meanwhile is never overwritten. Segment files are written as colvec writes
** segments
** (.tmp, fsync, rename, folder fsync) before the database copy commits;
** the copy is fsynced at the end. On failure only what the call created is
** removed: the segment files it wrote, the folders it made (rmdir of an
** empty folder), the database file it created and SQLite's journal, WAL or
** -shm file of it. Every path the cleanup needs is allocated before the
** thing it names is created, so that the cleanup itself allocates nothing
** and still runs when memory has run out.
*/
#include "colvecInt.h"

#include <stdarg.h>
#include <string.h>

/* The names SQLite gives the files of a database, after its path. */
static const char *const backupDbSuffix[] = {"", "-journal", "-wal", "-shm"};
#define BACKUP_NDBFILE 4 /* entries of backupDbSuffix */

/* What one call of colvec_backup() has open or made, for its cleanup. */
typedef struct BackupCall BackupCall;
struct BackupCall {
  sqlite3 *db;          /* the source connection */
  const char *zDb;      /* the source schema */
  const char *zDest;    /* the destination path, as given */
  sqlite3_stmt *pHold;  /* holds the read transaction (active) */
  int nTab;             /* entries of azTab, apTab and azDir */
  int nColvec;          /* tables of azTab that are colvec tables */
  char **azTab;         /* per table: its name (possibly colvec's) */
  sqlite3_stmt **apTab; /* per table: a statement keeping it connected
                        ** (NULL: not a colvec table) */
  char **azDir;         /* per table: destination folder made, or NULL */
  char **azFile;        /* segment files written (nFile of nFileAlloc) */
  int nFileAlloc;       /* allocated entries of azFile */
  int nFile;            /* segment files copied (entries of azFile) */
  int bMadeDb;          /* the call created the file zDest */
  char *zRoot;          /* <dest file>-colvec, once made by the call */
  sqlite3 *pDest;       /* connection to the copy, or NULL */
  char *zErr;           /* error message (sqlite3_malloc'd), or NULL */
  /* zDest + backupDbSuffix[i], each allocated before zDest is created */
  char *azDbFile[BACKUP_NDBFILE];
};

/*
** Sets p's error message to the printf-style message (the first one set
** wins) and returns rc.
*/
static int backupError(BackupCall *p, int rc, const char *zFmt, ...) {
  if (p->zErr == NULL) {
    va_list ap;
    va_start(ap, zFmt);
    p->zErr = sqlite3_vmprintf(zFmt, ap);
    va_end(ap);
  }
  return rc;
}

/*
** Returns the folder part of path z, sqlite3_malloc'd: everything before
** the last separator ("/" for "/x"), or "." when there is none. NULL when
** out of memory.
*/
static char *backupParent(const char *z) {
  const char *zBase = colvecOsBaseName(z);
  int n = (int)(zBase - z);
  if (n == 0) return sqlite3_mprintf(".");
  if (n == 1) return sqlite3_mprintf("%.1s", z);
  return sqlite3_mprintf("%.*s", n - 1, z);
}

/*
** Returns SQLITE_OK when nothing exists at the path zBase followed by
** zSuffix, else an error (set in p) saying so, or SQLITE_NOMEM.
*/
static int backupAbsent(BackupCall *p, const char *zBase, const char *zSuffix) {
  char *zPath = sqlite3_mprintf("%s%s", zBase, zSuffix);
  int rc = SQLITE_OK;
  if (zPath == NULL) return SQLITE_NOMEM;
  if (colvecStoreFile.xKind(zPath) != COLVEC_OS_NONE) {
    rc = backupError(p, SQLITE_CANTOPEN,
                     "colvec: colvec_backup: \"%s\" exists: the destination "
                     "must be a new name (nothing is overwritten)",
                     zPath);
  }
  sqlite3_free(zPath);
  return rc;
}

/*
** Returns 1 when a folder of path z (not its last part) is named like a
** sidecar folder, "<anything>-colvec" in any case, else 0.
*/
static int backupInSidecar(const char *z) {
  const char *zEnd = colvecOsBaseName(z), *zPart = z, *c;
  for (c = z; c < zEnd; c++) {
    if (*c == '/' || *c == '\\') {
      if (c - zPart >= 7 && sqlite3_strnicmp(c - 7, "-colvec", 7) == 0) {
        return 1;
      }
      zPart = c + 1;
    }
  }
  return 0;
}

/*
** Refuses a destination inside a sidecar folder (a -colvec folder, or a
** table folder in one), whether named so or reached through "..", a
** symbolic link or a relative path: colvec's cleanup deletes what it finds
** there, and a copy in one would vanish. zParent is the destination's
** folder, which exists. Returns SQLITE_OK, SQLITE_NOMEM, or an error set
** in p.
*/
static int backupCheckSidecar(BackupCall *p, const char *zParent) {
  char *zReal = colvecStoreFile.xRealPath(zParent);
  char *zProbe = zReal ? sqlite3_mprintf("%s/x", zReal) : NULL;
  int rc = SQLITE_OK;
  if (backupInSidecar(p->zDest) || (zProbe && backupInSidecar(zProbe))) {
    rc = backupError(p, SQLITE_MISUSE,
                     "colvec: colvec_backup: the destination '%s' is inside a "
                     "-colvec folder, where colvec keeps segment files and "
                     "deletes files it does not need: choose a path outside "
                     "it",
                     p->zDest);
  } else if (zReal && zProbe == NULL) {
    rc = SQLITE_NOMEM;
  }
  sqlite3_free(zProbe);
  colvecFree(zReal);
  return rc;
}

/*
** Checks the destination path p->zDest as untrusted input: a file path (not
** empty, not ":memory:", not a URI, not in colvec's memory tree) whose
** folder exists and is not inside a -colvec folder, and at which neither the
** file, its journal, WAL or shared
** memory file nor its -colvec folder exist. Returns SQLITE_OK or an error
** set in p.
*/
static int backupCheckDest(BackupCall *p) {
  const char *z = p->zDest;
  char *zParent;
  int rc = SQLITE_OK, i;
  if (z[0] == 0 || strcmp(z, ":memory:") == 0 ||
      sqlite3_strnicmp(z, "file:", 5) == 0) {
    return backupError(p, SQLITE_MISUSE,
                       "colvec: colvec_backup: the destination must be the "
                       "path of a new database file, got '%s'",
                       z);
  }
  if (colvecOsBaseName(z)[0] == 0) {
    return backupError(p, SQLITE_MISUSE,
                       "colvec: colvec_backup: the destination '%s' names a "
                       "folder, not a file",
                       z);
  }
  zParent = backupParent(z);
  if (zParent == NULL) return SQLITE_NOMEM;
  if (colvecStoreFile.xKind(zParent) != COLVEC_OS_DIR) {
    rc = backupError(p, SQLITE_CANTOPEN,
                     "colvec: colvec_backup: folder \"%s\" of the destination "
                     "does not exist (or is not a folder)",
                     zParent);
  }
  if (rc == SQLITE_OK) rc = backupCheckSidecar(p, zParent);
  sqlite3_free(zParent);
  for (i = 0; rc == SQLITE_OK && i < BACKUP_NDBFILE; i++) {
    rc = backupAbsent(p, z, backupDbSuffix[i]);
  }
  if (rc == SQLITE_OK) rc = backupAbsent(p, z, "-colvec");
  return rc;
}

/*
** Lists, in p->azTab, the colvec tables of the schema (their statement
** names colvec after USING), and allocates the per-table arrays. Returns
** SQLITE_OK or an error
** set in p.
*/
static int backupListTables(BackupCall *p) {
  sqlite3_stmt *pStmt = NULL;
  char *zSql = sqlite3_mprintf("SELECT name, sql FROM \"%w\".sqlite_schema "
                               "WHERE type='table' AND "
                               "sql LIKE 'CREATE VIRTUAL TABLE%%'",
                               p->zDb);
  int rc =
      zSql ? sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, NULL) : SQLITE_NOMEM;
  int nAlloc = 0;
  sqlite3_free(zSql);
  while (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *zName = (const char *)sqlite3_column_text(pStmt, 0);
    const char *zCreate = (const char *)sqlite3_column_text(pStmt, 1);
    if (zName == NULL || !colvecConfigIsColvecSql(zCreate)) {
      continue;
    }
    if (p->nTab == nAlloc) {
      char **az;
      nAlloc = nAlloc * 2 + 8;
      az = (char **)sqlite3_realloc64(p->azTab, sizeof(char *) * nAlloc);
      if (az == NULL) {
        rc = SQLITE_NOMEM;
        break;
      }
      p->azTab = az;
    }
    p->azTab[p->nTab] = sqlite3_mprintf("%s", zName);
    if (p->azTab[p->nTab] == NULL) {
      rc = SQLITE_NOMEM;
      break;
    }
    p->nTab++;
  }
  if (pStmt) {
    int rc2 = sqlite3_finalize(pStmt);
    if (rc == SQLITE_OK) rc = rc2;
  }
  if (rc == SQLITE_OK) {
    int64_t nByte = (int64_t)sizeof(void *) * (p->nTab + 1);
    p->apTab = (sqlite3_stmt **)sqlite3_malloc64((sqlite3_uint64)nByte);
    p->azDir = (char **)sqlite3_malloc64((sqlite3_uint64)nByte);
    if (p->apTab == NULL || p->azDir == NULL) return SQLITE_NOMEM;
    memset(p->apTab, 0, (size_t)nByte);
    memset(p->azDir, 0, (size_t)nByte);
  } else if (rc != SQLITE_NOMEM) {
    backupError(p, rc, "colvec: colvec_backup: cannot read the schema: %s",
                sqlite3_errmsg(p->db));
  }
  return rc;
}

/*
** Connects every table of p->azTab (a statement on each, kept prepared so
** the table stays connected), forgets any that colvec did not connect
** (the list holds colvec tables only: a safety net), and brings each colvec
** table's segment set to the held snapshot, which opens every segment file
** it names. Returns SQLITE_OK or an error set in p.
*/
static int backupOpenTables(BackupCall *p) {
  int i, rc = SQLITE_OK;
  for (i = 0; rc == SQLITE_OK && i < p->nTab; i++) {
    const char *zTab = p->azTab[i];
    char *zSql =
        sqlite3_mprintf("SELECT rowid FROM \"%w\".\"%w\"", p->zDb, zTab);
    ColvecVtab *pTab;
    char *zErr = NULL;
    rc = zSql ? sqlite3_prepare_v2(p->db, zSql, -1, &p->apTab[i], NULL)
              : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if (rc != SQLITE_OK) {
      return backupError(p, rc, "colvec: colvec_backup: table %s: %s", zTab,
                         sqlite3_errmsg(p->db));
    }
    pTab = colvecVtabFind(p->db, p->zDb, zTab);
    if (pTab == NULL) {
      /* another module: not copied beyond its pages */
      sqlite3_finalize(p->apTab[i]);
      p->apTab[i] = NULL;
      continue;
    }
    p->nColvec++;
    rc = colvecVtabDamaged(pTab);
    if (rc != SQLITE_OK) {
      return backupError(p, rc, "colvec: colvec_backup: %s",
                         pTab->zDamage + 8 /* after "colvec: " */);
    }
    rc = colvecSegmentTableRefresh(pTab->pSegs, &zErr);
    if (rc != SQLITE_OK) {
      backupError(p, rc, "%s", zErr ? zErr : sqlite3_errstr(rc));
    }
    sqlite3_free(zErr);
  }
  return rc;
}

/*
** Claims the destination: creates the file exclusively (so a file that
** appeared since the check is not touched) and opens p->pDest on it, then
** makes <file>-colvec when the schema has colvec tables. Returns SQLITE_OK
** or an error set in p.
*/
static int backupClaim(BackupCall *p) {
  ColvecFile *pFile = NULL;
  ColvecErr err;
  char *zFile;
  int rc, i;
  colvecErrClear(&err);
  for (i = 0; i < BACKUP_NDBFILE; i++) {
    p->azDbFile[i] = sqlite3_mprintf("%s%s", p->zDest, backupDbSuffix[i]);
    if (p->azDbFile[i] == NULL) return SQLITE_NOMEM;
  }
  rc = colvecStoreFile.xOpen(p->zDest,
                             COLVEC_OPEN_READWRITE | COLVEC_OPEN_CREATE |
                                 COLVEC_OPEN_EXCLUSIVE,
                             &pFile, &err);
  if (rc != COLVEC_OK) {
    return backupError(p, colvecFileRc(rc, SQLITE_CANTOPEN),
                       "colvec: colvec_backup: %s", err.zMsg);
  }
  p->bMadeDb = 1;
  rc = colvecStoreFile.xClose(pFile, &err);
  if (rc != COLVEC_OK) {
    return backupError(p, colvecFileRc(rc, SQLITE_IOERR),
                       "colvec: colvec_backup: %s", err.zMsg);
  }
  rc = sqlite3_open_v2(p->zDest, &p->pDest, SQLITE_OPEN_READWRITE, NULL);
  if (rc != SQLITE_OK) {
    return backupError(
        p, rc, "colvec: colvec_backup: cannot open \"%s\": %s", p->zDest,
        p->pDest ? sqlite3_errmsg(p->pDest) : sqlite3_errstr(rc));
  }
  if (p->nColvec == 0) return SQLITE_OK;
  /* the folder colvec will look for when the copy is opened */
  zFile = colvecFolderDbFile(p->pDest, "main");
  if (zFile == NULL) return SQLITE_NOMEM;
  if (!colvecFolderDbStore(p->pDest, "main")->bDurable) {
    sqlite3_free(zFile);
    return backupError(p, SQLITE_MISUSE,
                       "colvec: colvec_backup: the destination '%s' is not a "
                       "file on disk",
                       p->zDest);
  }
  p->zRoot = sqlite3_mprintf("%s-colvec", zFile);
  sqlite3_free(zFile);
  if (p->zRoot == NULL) return SQLITE_NOMEM;
  rc = colvecStoreFile.xMkdir(p->zRoot, &err);
  if (rc != COLVEC_OK) {
    /* not made here: never removed here */
    rc = backupError(p, colvecFileRc(rc, SQLITE_CANTOPEN),
                     "colvec: colvec_backup: cannot create folder \"%s\"%s%s",
                     p->zRoot, err.zMsg[0] ? ": " : " (it exists)", err.zMsg);
    sqlite3_free(p->zRoot);
    p->zRoot = NULL;
  }
  return rc;
}

/*
** Copies the file of every segment of set p (refreshed in the read
** transaction being backed up) into the existing folder zDestDir under
** the same names, each written as NNNNNN.seg.tmp, fsynced and renamed;
** then fsyncs zDestDir. Copies from
** the open handles, so files a newer commit deleted are still copied.
** Records each file written in pCall->azFile. Returns SQLITE_OK, or an
** error with *pzErr set (files already written stay; the caller removes
** them).
*/
static int backupCopySegments(BackupCall *pCall, ColvecSegTable *p,
                              const char *zDestDir, ColvecTick *pTick,
                              char **pzErr) {
  ColvecErr err;
  int rc = SQLITE_OK, i;
  colvecErrClear(&err);
  for (i = 0; rc == SQLITE_OK && i < p->nSeg; i++) {
    ColvecSegHandle *h = p->apSeg[i];
    char *zTmp;
    if (pCall->nFile == pCall->nFileAlloc) {
      int nNew = pCall->nFileAlloc * 2 + 8;
      char **aNew = (char **)sqlite3_realloc64(pCall->azFile,
                                               sizeof(char *) * (size_t)nNew);
      if (aNew == NULL) return SQLITE_NOMEM;
      pCall->azFile = aNew;
      pCall->nFileAlloc = nNew;
    }
    zTmp = colvecFolderSegPath(zDestDir, h->iSegid, ".tmp");
    if (zTmp == NULL) return SQLITE_NOMEM;
    colvecSegmentHandleRef(h);
    rc = colvecSegfileCopyTo(h->pSeg, &colvecStoreFile, zTmp,
                             pTick ? &pTick->hook : NULL, &err);
    colvecSegmentHandleUnref(p->pConfig, h);
    if (rc == COLVEC_OK) {
      /* renamed to its name without ".tmp" (colvecSegfileCopyTo) */
      zTmp[strlen(zTmp) - 4] = 0;
      pCall->azFile[pCall->nFile++] = zTmp;
    } else {
      sqlite3_free(zTmp);
    }
    if (rc == COLVEC_INTERRUPT) {
      rc = colvecTickError(pzErr);
    } else if (rc != COLVEC_OK) {
      *pzErr = sqlite3_mprintf("%s", err.zMsg);
    }
  }
  if (rc == SQLITE_OK) {
    rc = colvecStoreFile.xSyncDir(zDestDir, &err);
    if (rc != COLVEC_OK) {
      *pzErr = sqlite3_mprintf("%s", err.zMsg);
      rc = colvecFileRc(rc, SQLITE_IOERR_FSYNC);
    }
  }
  return rc;
}

/*
** Copies every table's segment files into <root>/<its folder>/ (the folder
** name is the source table's, legacy names included), then makes the new
** folder entries durable. Returns SQLITE_OK or an error set in p.
*/
static int backupSegments(BackupCall *p) {
  ColvecTick tick;
  ColvecErr err;
  int i, rc = SQLITE_OK;
  colvecTickInit(&tick, p->db);
  colvecErrClear(&err);
  for (i = 0; rc == SQLITE_OK && i < p->nTab; i++) {
    ColvecVtab *pTab;
    char *zDir, *zErr = NULL;
    if (p->apTab[i] == NULL) continue; /* not a colvec table */
    pTab = colvecVtabFind(p->db, p->zDb, p->azTab[i]);
    if (pTab == NULL) return SQLITE_ERROR; /* connected by backupOpenTables */
    zDir = sqlite3_mprintf("%s" COLVEC_OS_SEP "%s", p->zRoot,
                           colvecOsBaseName(pTab->pSegs->zDir));
    if (zDir == NULL) return SQLITE_NOMEM;
    rc = colvecStoreFile.xMkdir(zDir, &err);
    if (rc != COLVEC_OK) {
      rc = backupError(p, colvecFileRc(rc, SQLITE_CANTOPEN),
                       "colvec: colvec_backup: cannot create folder \"%s\"%s%s",
                       zDir, err.zMsg[0] ? ": " : " (it exists)", err.zMsg);
      sqlite3_free(zDir);
      break;
    }
    p->azDir[i] = zDir;
    rc = backupCopySegments(p, pTab->pSegs, zDir, &tick, &zErr);
    if (rc != SQLITE_OK) {
      backupError(p, rc, "%s", zErr ? zErr : sqlite3_errstr(rc));
    }
    sqlite3_free(zErr);
  }
  if (rc == SQLITE_OK && p->zRoot) {
    rc = colvecStoreFile.xSyncDir(p->zRoot, &err);
    if (rc == COLVEC_OK) rc = colvecStoreFile.xSyncParent(p->zRoot, &err);
    if (rc != COLVEC_OK) {
      rc = backupError(p, colvecFileRc(rc, SQLITE_IOERR_FSYNC), "%s", err.zMsg);
    }
  }
  return rc;
}

/*
** Copies the pages of the held snapshot into p->pDest with the backup API
** in one step (so it never restarts), closes p->pDest and fsyncs the copy
** and its folder. Returns SQLITE_OK or an error set in p.
*/
static int backupPages(BackupCall *p) {
  sqlite3_backup *pB = sqlite3_backup_init(p->pDest, "main", p->db, p->zDb);
  ColvecFile *pFile = NULL;
  ColvecErr err;
  int rc;
  if (pB == NULL) {
    return backupError(p, sqlite3_errcode(p->pDest),
                       "colvec: colvec_backup: %s", sqlite3_errmsg(p->pDest));
  }
  rc = sqlite3_backup_step(pB, -1);
  if (rc == SQLITE_DONE) rc = SQLITE_OK;
  if (rc != SQLITE_OK) {
    backupError(p, rc, "colvec: colvec_backup: copying the database: %s",
                sqlite3_errstr(rc));
  }
  if (sqlite3_backup_finish(pB) != SQLITE_OK && rc == SQLITE_OK) {
    rc = backupError(p, sqlite3_errcode(p->pDest),
                     "colvec: colvec_backup: copying the database: %s",
                     sqlite3_errmsg(p->pDest));
  }
  if (rc != SQLITE_OK) return rc;
  rc = sqlite3_close(p->pDest);
  if (rc != SQLITE_OK) {
    return backupError(p, rc, "colvec: colvec_backup: closing the copy: %s",
                       sqlite3_errstr(rc));
  }
  p->pDest = NULL;
  colvecErrClear(&err);
  rc = colvecStoreFile.xOpen(p->zDest, COLVEC_OPEN_READWRITE, &pFile, &err);
  if (rc == COLVEC_OK) rc = colvecStoreFile.xSync(pFile, &err);
  if (pFile) {
    int rcClose = colvecStoreFile.xClose(pFile, rc == COLVEC_OK ? &err : NULL);
    if (rc == COLVEC_OK) rc = rcClose;
  }
  if (rc == COLVEC_OK) rc = colvecStoreFile.xSyncParent(p->zDest, &err);
  if (rc != COLVEC_OK) {
    return backupError(p, colvecFileRc(rc, SQLITE_IOERR_FSYNC),
                       "colvec: colvec_backup: %s", err.zMsg);
  }
  return SQLITE_OK;
}

/*
** Removes what a failed call created, and nothing else: segment-named files
** and the folders it made (each only if that leaves it empty), the copy and
** SQLite's journal or WAL of it (none existed before the call).
*/
static void backupUndo(BackupCall *p) {
  int i;
  if (p->pDest) {
    sqlite3_close(p->pDest);
    p->pDest = NULL;
  }
  for (i = 0; i < p->nFile; i++) {
    colvecStoreFile.xUnlink(p->azFile[i], NULL);
  }
  for (i = 0; p->azDir && i < p->nTab; i++) {
    /* fails, harmlessly, when files the call did not write are there */
    if (p->azDir[i]) colvecStoreFile.xRmdir(p->azDir[i], NULL);
  }
  if (p->zRoot) colvecStoreFile.xRmdir(p->zRoot, NULL);
  for (i = 0; p->bMadeDb && i < BACKUP_NDBFILE; i++) {
    if (colvecStoreFile.xKind(p->azDbFile[i]) != COLVEC_OS_NONE) {
      colvecStoreFile.xUnlink(p->azDbFile[i], NULL);
    }
  }
}

/*
** colvec_backup(dest [, schema]): copies schema (default 'main') and the
** segment files of its colvec tables, all of one snapshot, to the new
** database file dest and the folder dest-colvec. Returns the number of
** segment files copied. See the comment at the top of this file.
*/
static void backupFunc(sqlite3_context *pCtx, int argc, sqlite3_value **argv) {
  BackupCall call;
  BackupCall *p = &call;
  int rc = SQLITE_OK, i;
  memset(p, 0, sizeof(*p));
  p->db = sqlite3_context_db_handle(pCtx);
  p->zDest = (const char *)sqlite3_value_text(argv[0]);
  p->zDb = argc > 1 ? (const char *)sqlite3_value_text(argv[1]) : "main";
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT || p->zDest == NULL ||
      (int)strlen(p->zDest) != sqlite3_value_bytes(argv[0])) {
    rc = backupError(p, SQLITE_MISUSE,
                     "colvec: colvec_backup: the destination must be a file "
                     "path (TEXT without NUL)");
  } else if (p->zDb == NULL || sqlite3_db_filename(p->db, p->zDb) == NULL) {
    rc = backupError(p, SQLITE_ERROR,
                     "colvec: colvec_backup: no such schema: %s",
                     p->zDb ? p->zDb : "NULL");
  } else if (sqlite3_txn_state(p->db, p->zDb) == SQLITE_TXN_WRITE) {
    rc = backupError(p, SQLITE_MISUSE,
                     "colvec: colvec_backup: cannot run inside a transaction "
                     "that wrote to schema %s: commit or roll it back first",
                     p->zDb);
  }
  if (rc == SQLITE_OK) rc = backupCheckDest(p);
  if (rc == SQLITE_OK) {
    rc = colvecStorageSchemaHold(p->db, p->zDb, &p->pHold);
    if (rc != SQLITE_OK) {
      backupError(p, rc, "colvec: colvec_backup: %s", sqlite3_errmsg(p->db));
    }
  }
  if (rc == SQLITE_OK) rc = backupListTables(p);
  if (rc == SQLITE_OK) rc = backupOpenTables(p);
  if (rc == SQLITE_OK) rc = backupClaim(p);
  if (rc == SQLITE_OK) rc = backupSegments(p);
  if (rc == SQLITE_OK) rc = backupPages(p);
  if (rc != SQLITE_OK) backupUndo(p);

  for (i = 0; i < p->nTab; i++) {
    if (p->apTab) sqlite3_finalize(p->apTab[i]);
    if (p->azDir) sqlite3_free(p->azDir[i]);
    sqlite3_free(p->azTab[i]);
  }
  for (i = 0; i < p->nFile; i++)
    sqlite3_free(p->azFile[i]);
  for (i = 0; i < BACKUP_NDBFILE; i++)
    sqlite3_free(p->azDbFile[i]);
  sqlite3_free(p->azFile);
  sqlite3_free(p->apTab);
  sqlite3_free(p->azDir);
  sqlite3_free(p->azTab);
  sqlite3_free(p->zRoot);
  sqlite3_finalize(p->pHold);
  if (rc == SQLITE_OK) {
    sqlite3_result_int64(pCtx, p->nFile);
  } else if (rc == SQLITE_NOMEM && p->zErr == NULL) {
    sqlite3_result_error_nomem(pCtx);
  } else {
    sqlite3_result_error(pCtx, p->zErr ? p->zErr : sqlite3_errstr(rc), -1);
    sqlite3_result_error_code(pCtx, rc);
  }
  sqlite3_free(p->zErr);
}

/* Registers colvec_backup(); see colvecInt.h. */
int colvecBackupRegister(sqlite3 *db) {
  int rc = SQLITE_OK;
  int nArg;
  for (nArg = 1; rc == SQLITE_OK && nArg <= 2; nArg++) {
    /* writes files and reads every table: never from schema or triggers */
    rc = sqlite3_create_function_v2(db, "colvec_backup", nArg,
                                    SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL,
                                    backupFunc, NULL, NULL, NULL);
  }
  return rc;
}
