/*
** colvec_segment.c — the live segments of a table, as one connection sees
** them: finding the folder, opening and caching segment files, keeping
** them in step with the manifest and tombstones the table records
** (colvec_storage.c), finding rows by rowid. What a segment holds is
** colvec_layout.c's. See colvecInt.h for the interface.
*/
#include "colvecInt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Path of segment iSegid in folder zDir, with suffix zSuffix. */
char *colvecSegmentPath(const char *zDir, int64_t iSegid, const char *zSuffix) {
  return sqlite3_mprintf("%s" COLVEC_OS_SEP "%06lld.seg%s", zDir,
                         (long long)iSegid, zSuffix);
}

/* Frees one handle and closes its file (its last reference is gone). */
static void segHandleFree(const ColvecConfig *pC, ColvecSegHandle *h) {
  if (h) {
    int i;
    colvecLayoutClose(pC, h);
    sqlite3_free(h->aTomb);
    if (h->aSlot) {
      for (i = 0; i < pC->nCol; i++) {
        if (h->aSlot[i].p) h->aSlot[i].xFree(h->aSlot[i].p);
      }
    }
    sqlite3_free(h->aSlot);
    colvecSegfileClose(h->pSeg);
    sqlite3_free(h);
  }
}

/* Takes a reference on h. */
void colvecSegmentHandleRef(ColvecSegHandle *h) { h->nRef++; }

/* Drops a reference on h; the last one frees it. */
void colvecSegmentHandleUnref(const ColvecConfig *pC, ColvecSegHandle *h) {
  if (h && --h->nRef <= 0) segHandleFree(pC, h);
}

/* The store of schema zDb's segments; see colvecInt.h. A database that
** is not a file here (colvecConfigDbKind) keeps them in memory. */
const ColvecStore *colvecSegmentDbStore(sqlite3 *db, const char *zDb) {
  return colvecConfigDbKind(db, zDb) == COLVEC_DB_FILE ? &colvecStoreFile
                                                       : &colvecStoreMem;
}

/* The name segment folders hang off; see colvecInt.h. */
char *colvecSegmentDbFile(sqlite3 *db, const char *zDb) {
  char *zOut, *z;
  int i;
  if (colvecConfigDbKind(db, zDb) == COLVEC_DB_FILE) {
    return sqlite3_mprintf("%s", sqlite3_db_filename(db, zDb));
  }
  /* COLVEC_STORE_MEM_ROOT/<connection>/<schema, bytes other than [A-Za-z0-9_]
  ** as %XX>: one name per connection and schema, no separator inside */
  zOut = sqlite3_malloc64(strlen(zDb) * 3 + 64);
  if (zOut == NULL) return NULL;
  sqlite3_snprintf(48, zOut, "%s" COLVEC_OS_SEP "%p" COLVEC_OS_SEP,
                   COLVEC_STORE_MEM_ROOT, (void *)db);
  z = zOut + strlen(zOut);
  for (i = 0; zDb[i]; i++) {
    unsigned char c = (unsigned char)zDb[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || c == '_') {
      *z++ = (char)c;
    } else {
      *z++ = '%';
      *z++ = "0123456789ABCDEF"[c >> 4];
      *z++ = "0123456789ABCDEF"[c & 15];
    }
  }
  *z = 0;
  return zOut;
}

/* Frees the segments of db's databases without a file; see colvecInt.h. */
void colvecSegmentMemRelease(sqlite3 *db) {
  char zDir[64];
  sqlite3_snprintf(sizeof(zDir), zDir, "%s" COLVEC_OS_SEP "%p",
                   COLVEC_STORE_MEM_ROOT, (void *)db);
  colvecStoreMem.xRemoveTree(zDir, NULL);
}

/* Path of a table's segment folder; see colvecInt.h. */
char *colvecSegmentFolderPath(const char *zFile, const char *zFolder) {
  return sqlite3_mprintf("%s-colvec" COLVEC_OS_SEP "%s", zFile, zFolder);
}

/* Parses a segment file's name; see colvecInt.h. */
int colvecSegmentParseName(const char *zName, int64_t *piSegid) {
  int64_t iSegid = 0;
  const char *z = zName;
  int nHex = 0;
  if (*z < '0' || *z > '9') return 0;
  while (*z >= '0' && *z <= '9' && iSegid < ((int64_t)1 << 50)) {
    iSegid = iSegid * 10 + (*z++ - '0');
  }
  if (*z >= '0' && *z <= '9') return 0; /* too many digits */
  if (strcmp(z, ".seg") != 0 && strcmp(z, ".seg.tmp") != 0) {
    /* the temporary of a rebuilt cache file: ".seg.<hex>.tmp" */
    if (strncmp(z, ".seg.", 5) != 0) return 0;
    for (z += 5; (*z >= '0' && *z <= '9') || (*z >= 'a' && *z <= 'f'); z++) {
      nHex++;
    }
    if (nHex == 0 || nHex > 16 || strcmp(z, ".tmp") != 0) return 0;
  }
  *piSegid = iSegid;
  return 1;
}

/* Returns non-zero for the names colvec gives segment files
** (colvecSegmentParseName). */
static int segIsSegmentName(const char *z) {
  int64_t iSegid;
  return colvecSegmentParseName(z, &iSegid);
}

/* Removes a table folder's segment files, then the folder if empty. */
void colvecSegmentFolderRemove(const ColvecStore *pStore, const char *zDir) {
  char **azName = NULL;
  int nName = 0, i;
  if (pStore->xKind(zDir) != COLVEC_OS_DIR) return; /* never through a link */
  if (pStore->xListDir(zDir, NULL, &azName, &nName, NULL) != COLVEC_OK) return;
  for (i = 0; i < nName; i++) {
    char *zPath;
    if (!segIsSegmentName(azName[i])) continue;
    zPath = sqlite3_mprintf("%s" COLVEC_OS_SEP "%s", zDir, azName[i]);
    if (zPath == NULL) break;
    if (pStore->xKind(zPath) != COLVEC_OS_DIR) pStore->xUnlink(zPath, NULL);
    sqlite3_free(zPath);
  }
  colvecOsListFree(azName, nName);
  pStore->xRmdir(zDir, NULL); /* fails, harmlessly, when other files remain */
}

/* Removes orphan table folders; see colvecInt.h. */
void colvecSegmentSweepOrphans(sqlite3 *db, const char *zDb,
                               const char *zSkip) {
  const ColvecStore *pStore = colvecSegmentDbStore(db, zDb);
  char *zFile = colvecSegmentDbFile(db, zDb);
  ColvecFolderList list;
  char *zRoot = zFile ? sqlite3_mprintf("%s-colvec", zFile) : NULL;
  char **azName = NULL;
  int nName = 0, i, j;
  sqlite3_free(zFile);
  if (zRoot == NULL) return;
  if (pStore->xListDir(zRoot, NULL, &azName, &nName, NULL) == COLVEC_OK &&
      nName > 0 &&
      colvecStorageFolderList(db, zDb, zSkip, &list) == SQLITE_OK) {
    for (i = 0; i < nName; i++) {
      int bNamed = 0;
      if (colvecStorageFolderCheck(azName[i], (int)strlen(azName[i])) !=
          COLVEC_FOLDER_ID) {
        continue; /* not a name colvec gives: not colvec's to remove */
      }
      for (j = 0; j < list.n && !bNamed; j++) {
        bNamed = strcmp(list.azFolder[j], azName[i]) == 0;
      }
      if (!bNamed) {
        char *zDir = sqlite3_mprintf("%s" COLVEC_OS_SEP "%s", zRoot, azName[i]);
        if (zDir) colvecSegmentFolderRemove(pStore, zDir);
        sqlite3_free(zDir);
      }
    }
    colvecStorageFolderListFree(&list);
  }
  colvecOsListFree(azName, nName);
  sqlite3_free(zRoot);
}

/* Chooses and creates a new table folder; see colvecInt.h. */
int colvecSegmentFolderNew(sqlite3 *db, const char *zDb, char **pzFolder,
                           char **pzErr) {
  const ColvecStore *pStore = colvecSegmentDbStore(db, zDb);
  char *zFile = colvecSegmentDbFile(db, zDb);
  char *zRoot = zFile ? sqlite3_mprintf("%s-colvec", zFile) : NULL;
  ColvecErr err;
  int rc = SQLITE_OK, iTry;
  *pzFolder = NULL;
  err.zMsg[0] = 0;
  sqlite3_free(zFile);
  if (zRoot == NULL) return SQLITE_NOMEM;
  rc = pStore->xMkdirUp(zRoot, 0, &err);
  if (rc != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("%s", err.zMsg);
    rc = rc == COLVEC_NOMEM ? SQLITE_NOMEM : SQLITE_CANTOPEN;
  }
  for (iTry = 0; rc == SQLITE_OK && iTry < 100; iTry++) {
    sqlite3_uint64 iRand = 0;
    char *zDir;
    int rcDir;
    sqlite3_randomness(sizeof(iRand), &iRand);
    *pzFolder = sqlite3_mprintf("%016llx", (unsigned long long)iRand);
    if (*pzFolder == NULL) {
      rc = SQLITE_NOMEM;
      break;
    }
    zDir = sqlite3_mprintf("%s" COLVEC_OS_SEP "%s", zRoot, *pzFolder);
    if (zDir == NULL) {
      rc = SQLITE_NOMEM;
      break;
    }
    /* mkdir fails on anything already there: the name is new on disk */
    rcDir = pStore->xMkdir(zDir, &err);
    /* Make the new folder's entry, and the -colvec folder's, durable: the
    ** segment files synced into it later are lost with it otherwise. */
    if (rcDir == COLVEC_OK) rcDir = pStore->xSyncParent(zDir, &err);
    if (rcDir == COLVEC_OK) rcDir = pStore->xSyncParent(zRoot, &err);
    if (rcDir != COLVEC_OK && rcDir != COLVEC_ERROR) pStore->xRmdir(zDir, NULL);
    sqlite3_free(zDir);
    if (rcDir == COLVEC_OK) break;
    sqlite3_free(*pzFolder);
    *pzFolder = NULL;
    if (rcDir != COLVEC_ERROR) {
      *pzErr = sqlite3_mprintf("%s", err.zMsg);
      rc = rcDir == COLVEC_NOMEM ? SQLITE_NOMEM : SQLITE_CANTOPEN;
    }
  }
  if (rc == SQLITE_OK && *pzFolder == NULL) {
    *pzErr =
        sqlite3_mprintf("colvec: cannot find a free folder name in %s", zRoot);
    rc = SQLITE_CANTOPEN;
  }
  sqlite3_free(zRoot);
  return rc;
}

/*
** Sets *pzErr to say that the segment folder of set p is not a folder (a
** file, a link, or something else) and returns SQLITE_CORRUPT_VTAB.
*/
static int segNotFolder(ColvecSegTable *p, char **pzErr) {
  *pzErr = sqlite3_mprintf("colvec: table %s: segment folder %s is not a "
                           "folder (symbolic links are not followed): "
                           "the table is damaged",
                           p->pConfig->zName, p->zDir);
  return SQLITE_CORRUPT_VTAB;
}

/* Opens the set; see colvecInt.h. */
int colvecSegmentTableOpen(sqlite3 *db, const ColvecConfig *pConfig,
                           ColvecStorage *pStorage, const char *zFolder,
                           ColvecSegTable **pp, char **pzErr) {
  ColvecSegTable *p = sqlite3_malloc(sizeof(ColvecSegTable));
  char *zFile = colvecSegmentDbFile(db, pConfig->zDb);
  int rc = SQLITE_OK;
  *pp = NULL;
  if (p == NULL) {
    sqlite3_free(zFile);
    return SQLITE_NOMEM;
  }
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->pConfig = pConfig;
  p->pStorage = pStorage;
  p->pStore = colvecSegmentDbStore(db, pConfig->zDb);
  /* zFolder was validated (colvecStorageFolder) or just made
  ** (colvecSegmentFolderNew); a link in its place is never followed */
  p->zDir = zFile ? colvecSegmentFolderPath(zFile, zFolder) : NULL;
  if (p->zDir == NULL) {
    rc = SQLITE_NOMEM;
  } else if (p->pStore->xKind(p->zDir) == COLVEC_OS_OTHER) {
    /* an embedded table reads its segments from the database instead */
    int bEmbed = colvecStorageEmbedded(pStorage);
    if (bEmbed < 0) {
      rc = -bEmbed;
    } else if (bEmbed) {
      p->bNoDir = 1;
    } else {
      rc = segNotFolder(p, pzErr);
    }
  }
  sqlite3_free(zFile);
  if (rc != SQLITE_OK) {
    colvecSegmentTableClose(p);
    return rc;
  }
  *pp = p;
  return SQLITE_OK;
}

/* Closes every segment and frees the set. */
void colvecSegmentTableClose(ColvecSegTable *p) {
  if (p) {
    int i;
    for (i = 0; i < p->nSeg; i++)
      colvecSegmentHandleUnref(p->pConfig, p->apSeg[i]);
    sqlite3_free(p->apSeg);
    sqlite3_free(p->zDir);
    sqlite3_free(p);
  }
}

/* Releases every segment of the set; see colvecInt.h. */
void colvecSegmentTableRelease(ColvecSegTable *p) {
  int i;
  for (i = 0; i < p->nSeg; i++)
    colvecSegmentHandleUnref(p->pConfig, p->apSeg[i]);
  p->nSeg = 0;
  p->bValid = 0;
}

/* Notes a change made by this connection. */
void colvecSegmentTableChanged(ColvecSegTable *p) { p->iLocalGenNow++; }

/*
** Explains why the file of segment iSegid, which the manifest of the
** snapshot being read names, does not exist, in *pzErr, and returns the
** error code:
**   - the folder holds segments newer than the snapshot (segid at or above
**     its next_segid): a newer commit dropped the segment and its file was
**     deleted, so the read transaction is too old (SQLITE_BUSY_SNAPSHOT:
**     retrying it on a new snapshot works);
**   - none of the snapshot's segment files exists, and (WAL mode) the
**     newest commit no longer has the table: a newer autocommit DROP TABLE
**     removed them, the read transaction is too old (SQLITE_BUSY_SNAPSHOT);
**   - none of the snapshot's segment files exists: the database was copied
**     without its sidecar folder (SQLITE_CORRUPT_VTAB);
**   - else the file alone was removed (SQLITE_CORRUPT_VTAB).
*/
static int segMissing(ColvecSegTable *p, int64_t iSegid, const char *zPath,
                      char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  const char *zFile = sqlite3_db_filename(p->db, pC->zDb);
  const char *zBase = zFile ? colvecOsBaseName(zFile) : "";
  int bMem = !p->pStore->bDurable;
  sqlite3_int64 iNext = 0;
  char **azName = NULL;
  int nName = 0, nNewer = 0, nOlder = 0, i;
  if (colvecStorageConfigGet(p->pStorage, "next_segid", &iNext) ==
      SQLITE_NOMEM) {
    return SQLITE_NOMEM;
  }
  if (p->pStore->xListDir(p->zDir, ".seg", &azName, &nName, NULL) ==
      COLVEC_OK) {
    for (i = 0; i < nName; i++) {
      const char *z = azName[i];
      int64_t iId = 0;
      while (*z >= '0' && *z <= '9' && iId < ((int64_t)1 << 50)) {
        iId = iId * 10 + (*z++ - '0');
      }
      if (z == azName[i] || strcmp(z, ".seg") != 0) continue;
      if (iId >= iNext)
        nNewer++;
      else
        nOlder++;
    }
    colvecOsListFree(azName, nName);
  }
  if (nNewer > 0) {
    *pzErr = sqlite3_mprintf(
        "colvec: segment %lld of table %s was removed by a newer commit: "
        "the read transaction is too old, retry it",
        (long long)iSegid, pC->zName);
    return SQLITE_BUSY_SNAPSHOT;
  }
  if (nOlder == 0 && !bMem &&
      colvecStorageDroppedLater(p->pStorage, colvecOsBaseName(p->zDir))) {
    /* an autocommit DROP TABLE removed the files after this snapshot
    ** began (WAL mode) */
    *pzErr = sqlite3_mprintf(
        "colvec: table %s was dropped by a newer commit: the read "
        "transaction is too old, retry it",
        pC->zName);
    return SQLITE_BUSY_SNAPSHOT;
  }
  if (nOlder == 0 && bMem) {
    *pzErr = sqlite3_mprintf(
        "colvec: segment files of table %s are missing: a database without a "
        "file keeps them in the memory of the connection that wrote them, "
        "and this copy of it does not have them (see README 'Databases "
        "without a file')",
        pC->zName);
    return COLVEC_CORRUPT_VTAB;
  }
  if (nOlder == 0) {
    *pzErr = sqlite3_mprintf(
        "colvec: segment files of table %s are missing: the database was "
        "copied without its '%s-colvec' folder (copy the folder with the "
        "database, see README 'Files')",
        pC->zName, zBase);
    return COLVEC_CORRUPT_VTAB;
  }
  *pzErr = sqlite3_mprintf("colvec: segment file %s of table %s is missing",
                           zPath, pC->zName);
  return COLVEC_CORRUPT_VTAB;
}

/*************************************************************************
** Embedded tables: the segment files are a cache of the bytes the
** database holds (colvecStorageSegDataRead).
*/

/* Where the chunks of a segment being restored go (segRestoreSize etc.). */
typedef struct SegRestore SegRestore;
struct SegRestore {
  const ColvecStore *pStore; /* where the file is written */
  ColvecFile *pFile;         /* the file being written */
  uint8_t *aMem;     /* its bytes, filled in place (memory file), or NULL */
  uint8_t *aBuf;     /* one chunk on its way to a file on disk */
  int64_t nByte;     /* bytes the database holds for the segment */
  uint8_t aHead[56]; /* the header's first bytes, up to its file size */
  int bWriteErr;     /* a write failed (err holds why) */
  ColvecErr err;     /* the failed write's error */
};

/*
** ColvecSegDataSink.xSize: the segment has nByte bytes in chunks of at most
** nMaxChunk. Sizes a memory file at once (its bytes are read in place), or
** allocates one chunk's buffer for a file on disk. SQLITE_NOMEM, or
** SQLITE_IOERR with bWriteErr set when the file refused.
*/
static int segRestoreSize(void *pCtx, sqlite3_int64 nByte, int nMaxChunk) {
  SegRestore *pR = (SegRestore *)pCtx;
  void *aMem = NULL;
  int rc;
  pR->nByte = nByte;
  rc = pR->pStore->xWriteInPlace(pR->pFile, nByte, &aMem, &pR->err);
  if (rc == COLVEC_NOMEM) return SQLITE_NOMEM;
  if (rc != COLVEC_OK) {
    pR->bWriteErr = 1;
    return SQLITE_IOERR;
  }
  pR->aMem = (uint8_t *)aMem;
  if (pR->aMem == NULL && nMaxChunk > 0) {
    pR->aBuf = sqlite3_malloc(nMaxChunk);
    if (pR->aBuf == NULL) return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* ColvecSegDataSink.xDest: where the chunk at offset iOff is read to. */
static void *segRestoreDest(void *pCtx, sqlite3_int64 iOff, int n) {
  SegRestore *pR = (SegRestore *)pCtx;
  (void)n;
  return pR->aMem ? (void *)(pR->aMem + iOff) : (void *)pR->aBuf;
}

/*
** ColvecSegDataSink.xChunk: the n bytes at offset iOff are at
** segRestoreDest's place. Keeps the header's first bytes and writes the
** chunk to a file on disk (SQLITE_IOERR with bWriteErr set on failure).
*/
static int segRestoreChunk(void *pCtx, sqlite3_int64 iOff, int n) {
  SegRestore *pR = (SegRestore *)pCtx;
  const uint8_t *a = pR->aMem ? pR->aMem + iOff : pR->aBuf;
  if (iOff < (int64_t)sizeof(pR->aHead)) {
    int64_t nHead = (int64_t)sizeof(pR->aHead) - iOff;
    memcpy(pR->aHead + iOff, a, (size_t)(n < nHead ? n : nHead));
  }
  if (pR->aMem == NULL && n > 0 &&
      pR->pStore->xWrite(pR->pFile, a, n, iOff, &pR->err) != COLVEC_OK) {
    pR->bWriteErr = 1;
    return SQLITE_IOERR;
  }
  return SQLITE_OK;
}

/*
** Writes the bytes the database holds for segment iSegid to file zTmp
** (created; it must not exist when bExcl) and syncs it.
** Returns SQLITE_OK; SQLITE_IOERR with *pbOs set when the operating system
** refused a call (the caller may try elsewhere); or another error with
** *pzErr set: COLVEC_CORRUPT_VTAB when there are no or broken chunks, or
** their total is not the size the segment's header gives.
** zTmp is removed on failure.
*/
static int segRestoreWrite(ColvecSegTable *p, const ColvecStore *pStore,
                           int64_t iSegid, const char *zTmp, int bExcl,
                           int *pbOs, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  ColvecSegDataSink sink;
  SegRestore r;
  int rc;
  memset(&r, 0, sizeof(r));
  sink.pCtx = &r;
  sink.xSize = segRestoreSize;
  sink.xDest = segRestoreDest;
  sink.xChunk = segRestoreChunk;
  *pbOs = 0;
  r.pStore = pStore;
  rc = pStore->xOpen(zTmp,
                     COLVEC_OPEN_READWRITE | COLVEC_OPEN_CREATE |
                         (bExcl ? COLVEC_OPEN_EXCLUSIVE : 0),
                     &r.pFile, &r.err);
  if (rc != COLVEC_OK) {
    *pbOs = rc != COLVEC_NOMEM;
    return rc == COLVEC_NOMEM ? SQLITE_NOMEM : SQLITE_IOERR;
  }
  rc = colvecStorageSegDataRead(p->pStorage, iSegid, &sink, pzErr);
  if (rc == SQLITE_OK && r.nByte == 0) rc = COLVEC_CORRUPT_VTAB;
  if (rc == SQLITE_OK) {
    /* the header's file size (u64 little-endian at 48) must be the total */
    uint64_t nHead = 0;
    int i;
    for (i = 7; i >= 0; i--)
      nHead = (nHead << 8) | r.aHead[48 + i];
    if (r.nByte < (int64_t)sizeof(r.aHead) || nHead != (uint64_t)r.nByte) {
      *pzErr = sqlite3_mprintf(
          "colvec: segment %lld of table %s: the database holds %lld bytes "
          "for it, its header says %llu: the table is damaged",
          (long long)iSegid, pC->zName, (long long)r.nByte,
          (unsigned long long)nHead);
      rc = COLVEC_CORRUPT_VTAB;
    }
  }
  if (rc == COLVEC_CORRUPT_VTAB && *pzErr == NULL) {
    *pzErr = sqlite3_mprintf(
        "colvec: segment %lld of table %s: its file is missing or damaged "
        "and the database does not hold its bytes: the table is damaged",
        (long long)iSegid, pC->zName);
  }
  if (rc == SQLITE_OK && pStore->xSync(r.pFile, &r.err) != COLVEC_OK) {
    r.bWriteErr = 1;
    rc = SQLITE_IOERR;
  }
  if (pStore->xClose(r.pFile, rc == SQLITE_OK ? &r.err : NULL) != COLVEC_OK &&
      rc == SQLITE_OK) {
    r.bWriteErr = 1;
    rc = SQLITE_IOERR;
  }
  sqlite3_free(r.aBuf);
  if (rc != SQLITE_OK) pStore->xUnlink(zTmp, NULL);
  *pbOs = r.bWriteErr;
  if (r.bWriteErr && r.err.iErrno == ENOMEM) rc = SQLITE_NOMEM;
  return rc;
}

/*
** Rebuilds the cache file of segment iSegid of an embedded table from
** the stored bytes: into the table's folder (a unique NNNNNN.seg.<hex>.tmp,
** synced, renamed over NNNNNN.seg, folder synced; processes rebuilding at
** once write identical bytes), or, when the folder cannot be made or
** written (read-only media, permissions), into a memory file of the
** connection in the memory store (COLVEC_STORE_MEM_ROOT/<connection>/-cache/
** <folder>/, no '-' in a schema's memory name). Sets *pzOpen to the path to
** open (sqlite3_malloc'd) and *pbMem when it is such a memory file, which
** the caller opens in colvecStoreMem and unlinks once opened. Returns SQLITE_OK
*or an error with *pzErr.
*/
static int segRestore(ColvecSegTable *p, int64_t iSegid, char **pzOpen,
                      int *pbMem, char **pzErr) {
  sqlite3_uint64 iRand = 0;
  char *zPath = colvecSegmentPath(p->zDir, iSegid, "");
  char *zTmp;
  int rc = SQLITE_OK, bOs = 0;
  *pzOpen = NULL;
  *pbMem = 0;
  sqlite3_randomness(sizeof(iRand), &iRand);
  zTmp = sqlite3_mprintf("%s" COLVEC_OS_SEP "%06lld.seg.%016llx.tmp", p->zDir,
                         (long long)iSegid, (unsigned long long)iRand);
  if (zPath == NULL || zTmp == NULL) rc = SQLITE_NOMEM;
  if (rc == SQLITE_OK) {
    if (p->bNoDir || p->pStore->xMkdirUp(p->zDir, 1, NULL) != COLVEC_OK) {
      bOs = 1; /* no folder, or cannot make it: try memory */
    } else {
      rc = segRestoreWrite(p, p->pStore, iSegid, zTmp, 1, &bOs, pzErr);
      if (rc == SQLITE_OK) {
        if (p->pStore->xRename(zTmp, zPath, NULL) != COLVEC_OK) {
          p->pStore->xUnlink(zTmp, NULL);
          bOs = 1;
        } else {
          p->pStore->xSyncDir(p->zDir,
                              NULL); /* a cache: a failure is harmless */
        }
      }
    }
  }
  if (rc == SQLITE_OK && !bOs) {
    *pzOpen = zPath;
    zPath = NULL;
  } else if ((rc == SQLITE_OK || rc == SQLITE_IOERR) && bOs) {
    /* the folder cannot be written: keep the bytes in memory */
    char *zDir = sqlite3_mprintf(
        "%s" COLVEC_OS_SEP "%p" COLVEC_OS_SEP "-cache" COLVEC_OS_SEP "%s",
        COLVEC_STORE_MEM_ROOT, (void *)p->db, colvecOsBaseName(p->zDir));
    char *zMem = zDir ? colvecSegmentPath(zDir, iSegid, "") : NULL;
    rc = SQLITE_OK;
    if (zMem == NULL) {
      rc = SQLITE_NOMEM;
    } else if (colvecStoreMem.xMkdirUp(zDir, 0, NULL) != COLVEC_OK) {
      rc = SQLITE_NOMEM; /* a memory folder fails only for want of memory */
    } else {
      rc = segRestoreWrite(p, &colvecStoreMem, iSegid, zMem, 0, &bOs, pzErr);
    }
    if (rc == SQLITE_IOERR) rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK) {
      *pzOpen = zMem;
      *pbMem = 1;
      zMem = NULL;
    }
    sqlite3_free(zMem);
    sqlite3_free(zDir);
  }
  sqlite3_free(zPath);
  sqlite3_free(zTmp);
  return rc;
}

/* Closes the file of segment h and its layout; h can be opened again. */
static void segHandleCloseFile(const ColvecConfig *pC, ColvecSegHandle *h) {
  colvecLayoutClose(pC, h);
  colvecSegfileClose(h->pSeg);
  h->pSeg = NULL;
  h->nRow = 0;
  h->aRowid = NULL;
}

/*
** Opens file zPath as segment h (h->iSegid, h->cksum) and checks it against
** its manifest row (nRow rows) and the table's layout. Returns SQLITE_OK,
** or an error with *pzErr set and h->pSeg closed; a file that does not
** exist is explained by segMissing.
*/
static int segHandleOpenFile(ColvecSegTable *p, const ColvecStore *pStore,
                             ColvecSegHandle *h, const char *zPath,
                             int64_t nRow, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  ColvecErr err;
  int rc;
  err.zMsg[0] = 0;
  rc = colvecSegfileOpen(pStore, zPath, pC->eAccess, pC->ePrefault, &h->pSeg,
                         &err);
  if (rc == COLVEC_IOERR && err.iErrno == ENOENT) {
    rc = segMissing(p, h->iSegid, zPath, pzErr);
  } else if (rc != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("%s", err.zMsg[0] ? err.zMsg
                                               : "colvec: cannot open segment");
    rc = colvecReadRc(rc, err.iErrno);
  } else if (colvecSegfileHeaderChecksum(h->pSeg) != h->cksum ||
             (int64_t)colvecSegfileRowCount(h->pSeg) != nRow ||
             colvecSegfileFingerprint(h->pSeg) != colvecConfigFingerprint(pC)) {
    *pzErr = sqlite3_mprintf(
        "colvec: segment %s does not match the manifest of table %s", zPath,
        pC->zName);
    rc = COLVEC_CORRUPT_VTAB;
  }
  if (rc == SQLITE_OK) {
    h->nRow = nRow;
    rc = colvecLayoutOpen(pC, h, zPath, pzErr);
  }
  if (rc != SQLITE_OK) segHandleCloseFile(pC, h);
  return rc;
}

/*************************************************************************
** The memo of verified files: the segment files (sidecar files, and the
** cache files of embedded tables) whose section checksums this process
** has verified (segVerify), so that a file is read in full once per
** process, not once per connection. An
** entry is the file's identity (device, inode, size, modification and
** change times: colvecOsFileStat) and header checksum; a file rewritten
** in place or replaced has another identity and is verified again. A file
** changed less than SEG_MEMO_RACY_NS before it was verified is not
** remembered (a change within the granularity of the file system's
** timestamps would keep its times: git's "racily clean" problem), so it
** is verified again by the next connection that opens it. A fixed table,
** no allocation: when full, entries are replaced in turn. Guarded by
** SQLite's main mutex (colvecMainMutexEnter; nothing with SQLITE_THREADSAFE
** builds that have none).
*/

#define SEG_MEMO_SIZE 512 /* files remembered; then replaced in turn */
#define SEG_MEMO_RACY_NS ((int64_t)2000000000) /* 2 s: FAT's granularity */

/* One verified file. */
typedef struct SegMemoEntry SegMemoEntry;
struct SegMemoEntry {
  ColvecFileId id; /* the file as it was verified */
  uint64_t cksum;  /* its header checksum */
};

/* The memo (process-wide). */
static struct {
  SegMemoEntry a[SEG_MEMO_SIZE]; /* entries; the first n are used */
  int n;                         /* entries used */
  int iNext;                     /* entry replaced next once full */
} segMemo;

/* Returns non-zero when entry e is file pId with header checksum cksum. */
static int segMemoSame(const SegMemoEntry *e, const ColvecFileId *pId,
                       uint64_t cksum) {
  return e->id.iDev == pId->iDev && e->id.iIno == pId->iIno &&
         e->id.nSize == pId->nSize && e->id.iMtimeNs == pId->iMtimeNs &&
         e->id.iCtimeNs == pId->iCtimeNs && e->cksum == cksum;
}

/*
** Returns non-zero when the file of segment pSeg, as it was opened, was
** verified before in this process.
*/
static int segMemoHas(const ColvecSeg *pSeg) {
  const ColvecFileId *pId = colvecSegfileFileId(pSeg);
  uint64_t cksum = colvecSegfileHeaderChecksum(pSeg);
  int i, bHas = 0;
  if (!pId->bValid) return 0;
  colvecMainMutexEnter();
  for (i = 0; i < segMemo.n && !bHas; i++) {
    bHas = segMemoSame(&segMemo.a[i], pId, cksum);
  }
  colvecMainMutexLeave();
  return bHas;
}

/*
** Remembers that the file of segment pSeg, as it was opened, passed
** colvecSegfileVerify; it replaces an entry of the same file (device and
** inode). Does nothing for a memory file or one changed less than
** SEG_MEMO_RACY_NS ago.
*/
static void segMemoAdd(const ColvecSeg *pSeg) {
  const ColvecFileId *pId = colvecSegfileFileId(pSeg);
  int64_t iChanged;
  int i;
  if (!pId->bValid) return;
  iChanged = pId->iMtimeNs > pId->iCtimeNs ? pId->iMtimeNs : pId->iCtimeNs;
  if (iChanged >= colvecOsWallNs() - SEG_MEMO_RACY_NS) return;
  colvecMainMutexEnter();
  for (i = 0; i < segMemo.n; i++) {
    if (segMemo.a[i].id.iDev == pId->iDev &&
        segMemo.a[i].id.iIno == pId->iIno) {
      break;
    }
  }
  if (i == segMemo.n) {
    if (segMemo.n < SEG_MEMO_SIZE) {
      segMemo.n++;
    } else {
      i = segMemo.iNext;
      segMemo.iNext = (segMemo.iNext + 1) % SEG_MEMO_SIZE;
    }
  }
  segMemo.a[i].id = *pId;
  segMemo.a[i].cksum = colvecSegfileHeaderChecksum(pSeg);
  colvecMainMutexLeave();
}

/*
** Verifies every section checksum of open segment h
** (colvecSegfileVerifyWith, asking the connection whether it was interrupted
** before each megabyte). With bMemo the memo is asked first, and told
** when the file passes (a file in the folder; not bytes read into
** memory). Returns SQLITE_OK; COLVEC_CORRUPT_VTAB with *pzErr when a
** checksum (or the order of rowids or offsets) fails; SQLITE_INTERRUPT,
** SQLITE_NOMEM, or an I/O error with *pzErr.
*/
static int segVerify(ColvecSegTable *p, ColvecSegHandle *h, int bMemo,
                     char **pzErr) {
  ColvecTick tick;
  ColvecErr err;
  int rc;
  if (bMemo && segMemoHas(h->pSeg)) return SQLITE_OK;
  colvecErrClear(&err);
  colvecTickInit(&tick, p->db);
  rc = colvecSegfileVerifyWith(h->pSeg, &tick.hook, &err);
  if (rc == COLVEC_OK) {
    if (bMemo) segMemoAdd(h->pSeg);
    return SQLITE_OK;
  }
  if (rc == COLVEC_INTERRUPT) return colvecTickError(pzErr);
  *pzErr = sqlite3_mprintf("%s", err.zMsg);
  return colvecReadRc(rc, err.iErrno);
}

/*
** Replaces *pzErr, why the bytes the database holds for segment iSegid
** failed a check (with or without the "colvec: " prefix), by the message
** that says they are damaged, under "integrity-check: " when bCheck.
** Returns COLVEC_CORRUPT_VTAB, or SQLITE_NOMEM.
*/
static int segDamaged(const ColvecConfig *pC, int64_t iSegid, int bCheck,
                      char **pzErr) {
  const char *zWhy = *pzErr ? *pzErr : "?";
  const char *zCorrupt;
  char *zMsg, *zUser;
  if (strncmp(zWhy, "colvec: ", 8) == 0) zWhy += 8;
  /* "segment "<memory>/..." is corrupt: why": the copy in memory is no
  ** file of the user's, only the why is news */
  if (strncmp(zWhy, "segment \"" COLVEC_STORE_MEM_ROOT,
              9 + strlen(COLVEC_STORE_MEM_ROOT)) == 0 &&
      (zCorrupt = strstr(zWhy, "\" is corrupt: ")) != NULL) {
    zWhy = zCorrupt + 14;
  }
  zMsg = sqlite3_mprintf("colvec: %stable %s: the bytes the database holds "
                         "for segment %lld are damaged: %s",
                         bCheck ? "integrity-check: " : "", pC->zName,
                         (long long)iSegid, zWhy);
  zUser = zMsg ? colvecSegmentUserMessage(zMsg) : NULL;
  sqlite3_free(zMsg);
  sqlite3_free(*pzErr);
  *pzErr = zUser;
  return zUser ? COLVEC_CORRUPT_VTAB : SQLITE_NOMEM;
}

/* Rewrites memory paths in a message; see colvecInt.h. */
char *colvecSegmentUserMessage(const char *zMsg) {
  static const char zRoot[] = "\"" COLVEC_STORE_MEM_ROOT;
  sqlite3_str *pStr = sqlite3_str_new(NULL);
  const char *z = zMsg, *zAt;
  while ((zAt = strstr(z, zRoot)) != NULL) {
    const char *zEnd = strchr(zAt + 1, '"');
    const char *zBase;
    if (zEnd == NULL) break;
    for (zBase = zEnd; zBase > zAt + 1 && zBase[-1] != '/' && zBase[-1] != '\\';
         zBase--) {
    }
    sqlite3_str_append(pStr, z, (int)(zAt - z));
    sqlite3_str_appendf(pStr, "%.*s (in memory)", (int)(zEnd - zBase), zBase);
    z = zEnd + 1;
  }
  sqlite3_str_appendall(pStr, z);
  return sqlite3_str_finish(pStr);
}

/*
** Returns whether the table of set p is embedded (1) or not (0), or a
** negated error code; *pbEmbed caches the answer for one refresh (-1: not
** read yet). Read only when a file is opened, so a sidecar table pays one
** cached read of the table options per refresh that opens a segment file.
*/
static int segEmbedded(ColvecSegTable *p, int *pbEmbed) {
  if (*pbEmbed < 0) {
    int b = colvecStorageEmbedded(p->pStorage);
    if (b < 0) return b;
    *pbEmbed = b;
  }
  return *pbEmbed;
}

/*
** Opens segment iSegid and checks it against its manifest row (checksum
** cksum, nRow rows). Returns SQLITE_OK with *pp set, or an error (see
** segMissing for a file that does not exist). *pbEmbed caches whether the
** table is embedded (segEmbedded). Before a file's first use in this
** process every section checksum is verified (segVerify; memory files,
** written by this process, are not): a damaged sidecar file is
** COLVEC_CORRUPT_VTAB naming the file and section, never read. For an
** embedded table the file is a cache: one that is missing or fails any
** check is rebuilt from the stored bytes (segRestore) and opened again,
** once; with no folder (p->bNoDir) the bytes go straight into memory. The
** rebuilt bytes are verified in full too, while the page cache holds
** them; a failure there means the database's own bytes are damaged:
** COLVEC_CORRUPT_VTAB naming the table and segment.
*/
static int segHandleOpen(ColvecSegTable *p, int64_t iSegid, uint64_t cksum,
                         int64_t nRow, int *pbEmbed, ColvecSegHandle **pp,
                         char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  ColvecSegHandle *h = sqlite3_malloc(sizeof(ColvecSegHandle));
  char *zPath = colvecSegmentPath(p->zDir, iSegid, "");
  int rc = SQLITE_OK;
  *pp = NULL;
  if (h == NULL || zPath == NULL) {
    sqlite3_free(h);
    sqlite3_free(zPath);
    return SQLITE_NOMEM;
  }
  memset(h, 0, sizeof(*h));
  h->nRef = 1;
  h->iSegid = iSegid;
  h->cksum = cksum;
  if (p->bNoDir) {
    /* nothing is read there: from the stored bytes, or the reason */
    int bEmbed = segEmbedded(p, pbEmbed);
    rc = bEmbed < 0 ? -bEmbed
         : bEmbed   ? SQLITE_CANTOPEN
                    : segNotFolder(p, pzErr);
  } else {
    rc = segHandleOpenFile(p, p->pStore, h, zPath, nRow, pzErr);
  }
  if (rc == SQLITE_OK && p->pStore->bDurable) {
    /* verify=none skips a sidecar file, never an embedded table's cache */
    int bCheck = pC->bNoVerify ? segEmbedded(p, pbEmbed) : 1;
    if (bCheck < 0) {
      rc = -bCheck;
    } else if (bCheck) {
      rc = segVerify(p, h, 1, pzErr);
    }
    /* closed: a stale cache file is rebuilt below, as one that failed
    ** at open; a sidecar table's file is reported */
    if (rc != SQLITE_OK) segHandleCloseFile(pC, h);
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM &&
      (rc & 0xff) != SQLITE_INTERRUPT) {
    int bEmbed = segEmbedded(p, pbEmbed);
    if (bEmbed < 0) {
      rc = -bEmbed;
    } else if (bEmbed) {
      char *zOpen = NULL;
      int bMem = 0;
      sqlite3_free(*pzErr);
      *pzErr = NULL;
      rc = segRestore(p, iSegid, &zOpen, &bMem, pzErr);
      if (rc == SQLITE_OK) {
        rc = segHandleOpenFile(p, bMem ? &colvecStoreMem : p->pStore, h, zOpen,
                               nRow, pzErr);
      }
      if (rc == SQLITE_OK) {
        rc = segVerify(p, h, !bMem, pzErr);
        if (rc == COLVEC_CORRUPT_VTAB) {
          rc = segDamaged(pC, iSegid, 0, pzErr);
          if (!bMem) {
            /* closed first (Windows cannot delete an open file): no file
            ** of bad bytes is left for the next open to take */
            segHandleCloseFile(pC, h);
            p->pStore->xUnlink(zOpen, NULL);
          }
        }
      }
      if (bMem) colvecStoreMem.xUnlink(zOpen, NULL); /* live while open */
      sqlite3_free(zOpen);
    }
  }
  sqlite3_free(zPath);
  if (rc != SQLITE_OK) {
    segHandleFree(pC, h);
    return rc;
  }
  *pp = h;
  return SQLITE_OK;
}

/* Checks an embedded segment's stored bytes; see colvecInt.h. */
int colvecSegmentCheckData(ColvecSegTable *p, ColvecSegHandle *h,
                           const ColvecInterrupt *pInt, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  char *zDir = sqlite3_mprintf(
      "%s" COLVEC_OS_SEP "%p" COLVEC_OS_SEP "-check" COLVEC_OS_SEP "%s",
      COLVEC_STORE_MEM_ROOT, (void *)p->db, colvecOsBaseName(p->zDir));
  char *zMem = zDir ? colvecSegmentPath(zDir, h->iSegid, "") : NULL;
  ColvecSeg *pSeg = NULL;
  ColvecErr err;
  int rc = SQLITE_OK, bOs = 0;
  err.zMsg[0] = 0;
  if (zMem == NULL || colvecStoreMem.xMkdirUp(zDir, 0, NULL) != COLVEC_OK) {
    rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_OK)
    rc = segRestoreWrite(p, &colvecStoreMem, h->iSegid, zMem, 0, &bOs, pzErr);
  if (rc == SQLITE_IOERR) rc = SQLITE_NOMEM; /* memory files fail so only */
  if (rc == COLVEC_CORRUPT_VTAB && *pzErr) {
    /* chunks missing or of the wrong total */
    rc = segDamaged(pC, h->iSegid, 1, pzErr);
  }
  if (rc == SQLITE_OK) {
    rc = colvecSegfileOpen(&colvecStoreMem, zMem, COLVEC_SEG_FILE,
                           COLVEC_PREFAULT_NONE, &pSeg, &err);
    if (rc == COLVEC_OK &&
        (colvecSegfileHeaderChecksum(pSeg) != h->cksum ||
         (int64_t)colvecSegfileRowCount(pSeg) != h->nRow ||
         colvecSegfileFingerprint(pSeg) != colvecConfigFingerprint(pC))) {
      sqlite3_snprintf(sizeof(err.zMsg), err.zMsg,
                       "they do not match the manifest");
      rc = COLVEC_CORRUPT;
    }
    if (rc == COLVEC_OK) rc = colvecSegfileVerifyWith(pSeg, pInt, &err);
    if (rc == COLVEC_INTERRUPT) {
      rc = colvecTickError(pzErr);
    } else if (rc == COLVEC_NOMEM) {
      rc = SQLITE_NOMEM;
    } else if (rc != COLVEC_OK) {
      *pzErr = sqlite3_mprintf("%s", err.zMsg);
      rc = segDamaged(pC, h->iSegid, 1, pzErr);
    }
    colvecSegfileClose(pSeg);
  }
  if (zMem) colvecStoreMem.xUnlink(zMem, NULL);
  sqlite3_free(zMem);
  sqlite3_free(zDir);
  return rc;
}

/* Rebuilds a damaged cache file; see colvecInt.h. */
int colvecSegmentRepair(ColvecSegTable *p, int64_t iSegid, char **pzErr) {
  char *zOpen = NULL;
  int bMem = 0, rc;
  colvecSegmentTableRelease(p); /* every handle, so that nothing maps it */
  rc = segRestore(p, iSegid, &zOpen, &bMem, pzErr);
  if (bMem) colvecStoreMem.xUnlink(zOpen, NULL);
  sqlite3_free(zOpen);
  return rc;
}

/* Where the tombstones being loaded go (segAddTomb's context). */
typedef struct SegTombs SegTombs;
struct SegTombs {
  ColvecSegTable *p; /* the set, its segments' nTomb zeroed */
  int iSeg;          /* index in p->apSeg of the last segid seen */
};

/*
** colvecStorageTombScan callback: appends tombstone (iSegid, iRowid) to its
** segment in the set of pCtx (a SegTombs *); tombstones of segments not in
** the set are skipped. They come sorted by segid, then rowid, so the set
** is walked once. Returns SQLITE_OK or SQLITE_NOMEM.
*/
static int segAddTomb(void *pCtx, sqlite3_int64 iSegid, sqlite3_int64 iRowid) {
  SegTombs *pT = (SegTombs *)pCtx;
  ColvecSegTable *p = pT->p;
  ColvecSegHandle *h;
  while (pT->iSeg < p->nSeg && p->apSeg[pT->iSeg]->iSegid < iSegid) {
    pT->iSeg++;
  }
  if (pT->iSeg >= p->nSeg || p->apSeg[pT->iSeg]->iSegid != iSegid) {
    return SQLITE_OK;
  }
  h = p->apSeg[pT->iSeg];
  if (h->nTomb == h->nTombAlloc) {
    int64_t nNew = h->nTombAlloc ? h->nTombAlloc * 2 : 64;
    int64_t *aNew = sqlite3_realloc64(h->aTomb, (sqlite3_uint64)nNew * 8);
    if (aNew == NULL) return SQLITE_NOMEM;
    h->aTomb = aNew;
    h->nTombAlloc = nNew;
  }
  h->aTomb[h->nTomb++] = iRowid;
  return SQLITE_OK;
}

/*
** Re-reads the tombstones of every live segment. Returns SQLITE_OK or an
** error with *pzErr set (not for SQLITE_NOMEM).
*/
static int segLoadTombs(ColvecSegTable *p, char **pzErr) {
  SegTombs t;
  int i;
  for (i = 0; i < p->nSeg; i++)
    p->apSeg[i]->nTomb = 0;
  t.p = p;
  t.iSeg = 0;
  return colvecStorageTombScan(p->pStorage, segAddTomb, &t, pzErr);
}

/* The set being built by a refresh (segAddSeg's context). */
typedef struct SegRefresh SegRefresh;
struct SegRefresh {
  ColvecSegTable *p;       /* the set; apSeg holds the old segments */
  ColvecSegHandle **apNew; /* the new set, ascending segid */
  int nNew;                /* entries of apNew */
  int nAlloc;              /* allocated entries of apNew */
  int bEmbed;              /* the table is embedded; -1: not read yet */
};

/*
** colvecStorageManifestScan callback: appends live segment iSegid (nRow
** rows, header checksum cksum) to the new set of pCtx (a SegRefresh *),
** reusing the old set's handle when it is the same file, else opening it.
** Returns SQLITE_OK or an error with *pzErr set.
*/
static int segAddSeg(void *pCtx, sqlite3_int64 iSegid, sqlite3_int64 nRow,
                     sqlite3_uint64 cksum, char **pzErr) {
  SegRefresh *pR = (SegRefresh *)pCtx;
  ColvecSegTable *p = pR->p;
  ColvecSegHandle *h = NULL;
  int rc = SQLITE_OK, i;
  if (pR->nNew == pR->nAlloc) {
    ColvecSegHandle **a;
    int nAlloc = pR->nAlloc ? pR->nAlloc * 2 : 16;
    a = sqlite3_realloc64(pR->apNew, sizeof(*a) * (sqlite3_uint64)nAlloc);
    if (a == NULL) return SQLITE_NOMEM;
    pR->apNew = a;
    pR->nAlloc = nAlloc;
  }
  for (i = 0; i < p->nSeg; i++) {
    ColvecSegHandle *pOld = p->apSeg[i];
    if (pOld && pOld->iSegid == iSegid && pOld->cksum == cksum) {
      h = pOld;
      p->apSeg[i] = NULL; /* moved to the new set */
      break;
    }
  }
  if (h == NULL) {
    rc = segHandleOpen(p, iSegid, cksum, nRow, &pR->bEmbed, &h, pzErr);
  }
  if (rc == SQLITE_OK) pR->apNew[pR->nNew++] = h;
  return rc;
}

/* Brings the set up to date; see colvecInt.h. */
int colvecSegmentTableRefresh(ColvecSegTable *p, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  sqlite3_int64 iVersion = 0;
  SegRefresh r;
  int i;
  int rc = colvecStorageDataVersion(p->pStorage, &iVersion);
  if (rc != SQLITE_OK) return rc;
  if (p->bValid && iVersion == p->iDataVersion &&
      p->iLocalGen == p->iLocalGenNow) {
    return SQLITE_OK;
  }
  memset(&r, 0, sizeof(r));
  r.p = p;
  r.bEmbed = -1;
  rc = colvecStorageManifestScan(p->pStorage, segAddSeg, &r, pzErr);
  for (i = 0; i < p->nSeg; i++)
    colvecSegmentHandleUnref(pC, p->apSeg[i]);
  sqlite3_free(p->apSeg);
  p->apSeg = r.apNew;
  p->nSeg = r.nNew;
  if (rc == SQLITE_OK) rc = segLoadTombs(p, pzErr);
  p->bValid = rc == SQLITE_OK;
  p->iDataVersion = iVersion;
  p->iLocalGen = p->iLocalGenNow;
  return rc;
}

/* Binary search of sorted a[0..n-1] for v: index or -1. */
int64_t colvecSegmentSearch(const int64_t *a, int64_t n, int64_t v) {
  int64_t lo = 0, hi = n - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (a[mid] == v) return mid;
    if (a[mid] < v)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* Returns non-zero when rowid iRowid of segment h is tombstoned. */
int colvecSegmentIsDead(const ColvecSegHandle *h, int64_t iRowid) {
  return h->nTomb > 0 && colvecSegmentSearch(h->aTomb, h->nTomb, iRowid) >= 0;
}

/* Finds a live row; see colvecInt.h. */
int colvecSegmentLocate(const ColvecSegTable *p, int64_t iRowid, int *piSeg,
                        int64_t *piRow) {
  int i;
  for (i = p->nSeg - 1; i >= 0; i--) {
    const ColvecSegHandle *h = p->apSeg[i];
    int64_t iRow;
    if (h->nRow == 0 || iRowid < h->aRowid[0] ||
        iRowid > h->aRowid[h->nRow - 1]) {
      continue;
    }
    iRow = colvecSegmentSearch(h->aRowid, h->nRow, iRowid);
    if (iRow >= 0 && !colvecSegmentIsDead(h, iRowid)) {
      *piSeg = i;
      *piRow = iRow;
      return 1;
    }
  }
  return 0;
}

/* Copies the live set's files; see colvecInt.h. */
int colvecSegmentTableCopy(ColvecSegTable *p, const char *zDestDir,
                           ColvecTick *pTick, int *pnFile, char **pzErr) {
  ColvecErr err;
  int rc = SQLITE_OK, i;
  colvecErrClear(&err);
  for (i = 0; rc == SQLITE_OK && i < p->nSeg; i++) {
    ColvecSegHandle *h = p->apSeg[i];
    char *zTmp = colvecSegmentPath(zDestDir, h->iSegid, ".tmp");
    if (zTmp == NULL) return SQLITE_NOMEM;
    colvecSegmentHandleRef(h);
    rc = colvecSegfileCopyTo(h->pSeg, &colvecStoreFile, zTmp,
                             pTick ? &pTick->hook : NULL, &err);
    colvecSegmentHandleUnref(p->pConfig, h);
    sqlite3_free(zTmp);
    if (rc == COLVEC_INTERRUPT) {
      rc = colvecTickError(pzErr);
    } else if (rc != COLVEC_OK) {
      *pzErr = sqlite3_mprintf("%s", err.zMsg);
    } else {
      (*pnFile)++;
    }
  }
  if (rc == SQLITE_OK &&
      colvecStoreFile.xSyncDir(zDestDir, &err) != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("%s", err.zMsg);
    rc = SQLITE_IOERR_FSYNC;
  }
  return rc;
}
