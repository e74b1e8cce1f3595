/*
** colvec_store_embed.c — the embedded table store (storage=embedded; see
** ColvecTableStore in colvecInt.h): the database keeps every segment's
** bytes in COLVEC_EMBED_CHUNK pieces (read and written through
** colvec_storage.c: colvecStorageSegDataAdd and colvecStorageSegDataRead), so a
** copy of the database file alone is the whole
** table. The files in the table's folder are a cache of those bytes:
** verified before first use, rebuilt from the database when missing or
** damaged, and kept in memory when the folder cannot be written
** (read-only media, permissions, a file or link in its place).
*/
#include "colvecInt.h"

#include <errno.h>
#include <string.h>

/* Where the chunks of a segment being restored go (embedRestoreSize etc.). */
typedef struct EmbedRestore EmbedRestore;
struct EmbedRestore {
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
static int embedRestoreSize(void *pCtx, sqlite3_int64 nByte, int nMaxChunk) {
  EmbedRestore *pR = (EmbedRestore *)pCtx;
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
static void *embedRestoreDest(void *pCtx, sqlite3_int64 iOff, int n) {
  EmbedRestore *pR = (EmbedRestore *)pCtx;
  (void)n;
  return pR->aMem ? (void *)(pR->aMem + iOff) : (void *)pR->aBuf;
}

/*
** ColvecSegDataSink.xChunk: the n bytes at offset iOff are at
** embedRestoreDest's place. Keeps the header's first bytes and writes the
** chunk to a file on disk (SQLITE_IOERR with bWriteErr set on failure).
*/
static int embedRestoreChunk(void *pCtx, sqlite3_int64 iOff, int n) {
  EmbedRestore *pR = (EmbedRestore *)pCtx;
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
static int embedRestoreWrite(ColvecSegTable *p, const ColvecStore *pStore,
                             int64_t iSegid, const char *zTmp, int bExcl,
                             int *pbOs, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  ColvecSegDataSink sink;
  EmbedRestore r;
  int rc;
  memset(&r, 0, sizeof(r));
  sink.pCtx = &r;
  sink.xSize = embedRestoreSize;
  sink.xDest = embedRestoreDest;
  sink.xChunk = embedRestoreChunk;
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
** Rebuilds the cache file of segment iSegid of the embedded table of set p
** from the stored bytes: into the table's folder (a unique
** NNNNNN.seg.<hex>.tmp, synced, renamed over NNNNNN.seg, folder synced;
** processes rebuilding at once write identical bytes), or, when the
** folder cannot be made or written (read-only media, permissions), into a
** memory file of the connection (colvecFolderMemScratch "cache"). Sets
** *pzOpen to the path to open (sqlite3_malloc'd) and *pbMem when it is
** such a memory file, which is opened in colvecStoreMem and unlinked once
** opened. Returns SQLITE_OK or an error with *pzErr.
*/
static int embedRestore(ColvecSegTable *p, int64_t iSegid, char **pzOpen,
                        int *pbMem, char **pzErr) {
  sqlite3_uint64 iRand = 0;
  char *zPath = colvecFolderSegPath(p->zDir, iSegid, "");
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
      rc = embedRestoreWrite(p, p->pStore, iSegid, zTmp, 1, &bOs, pzErr);
      if (rc == SQLITE_OK) {
        if (p->pStore->xRename(zTmp, zPath, NULL) != COLVEC_OK) {
          p->pStore->xUnlink(zTmp, NULL);
          bOs = 1;
        } else {
          /* a cache: a failure is harmless */
          p->pStore->xSyncDir(p->zDir, NULL);
        }
      }
    }
  }
  if (rc == SQLITE_OK && !bOs) {
    *pzOpen = zPath;
    zPath = NULL;
  } else if ((rc == SQLITE_OK || rc == SQLITE_IOERR) && bOs) {
    /* the folder cannot be written: keep the bytes in memory */
    char *zDir = colvecFolderMemScratch(p->db, "cache", p->zDir);
    char *zMem = zDir ? colvecFolderSegPath(zDir, iSegid, "") : NULL;
    rc = SQLITE_OK;
    if (zMem == NULL) {
      rc = SQLITE_NOMEM;
    } else if (colvecStoreMem.xMkdirUp(zDir, 0, NULL) != COLVEC_OK) {
      rc = SQLITE_NOMEM; /* a memory folder fails only for want of memory */
    } else {
      rc = embedRestoreWrite(p, &colvecStoreMem, iSegid, zMem, 0, &bOs, pzErr);
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

/*
** Replaces *pzErr, why the bytes the database holds for segment iSegid
** failed a check (with or without the "colvec: " prefix), by the message
** that says they are damaged, under "integrity-check: " when bCheck.
** Returns COLVEC_CORRUPT_VTAB, or SQLITE_NOMEM.
*/
static int embedDamaged(const ColvecConfig *pC, int64_t iSegid, int bCheck,
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
  zUser = zMsg ? colvecFolderUserMessage(zMsg) : NULL;
  sqlite3_free(zMsg);
  sqlite3_free(*pzErr);
  *pzErr = zUser;
  return zUser ? COLVEC_CORRUPT_VTAB : SQLITE_NOMEM;
}

/*
** ColvecTableStore.xRecover: the file of segment iSegid is missing or
** failed a check (rc, *pzErr): it is rebuilt from the stored bytes and
** opened through pReopen, once. The rebuilt bytes are verified in full
** while the page cache holds them; a failure there means the database's
** own bytes are damaged: COLVEC_CORRUPT_VTAB naming the table and
** segment, and no file of bad bytes is left for the next open to take.
*/
static int embedRecover(ColvecSegTable *p, int64_t iSegid, int rc,
                        const ColvecSegReopen *pReopen, char **pzErr) {
  char *zOpen = NULL;
  int bMem = 0;
  (void)rc; /* a cache: why it failed does not matter */
  sqlite3_free(*pzErr);
  *pzErr = NULL;
  rc = embedRestore(p, iSegid, &zOpen, &bMem, pzErr);
  if (rc == SQLITE_OK && pReopen) {
    rc = pReopen->xOpen(pReopen->pCtx, bMem ? &colvecStoreMem : p->pStore,
                        zOpen, !bMem, pzErr);
    if (rc == COLVEC_CORRUPT_VTAB) {
      rc = embedDamaged(p->pConfig, iSegid, 0, pzErr);
      /* the file is closed (Windows cannot delete an open file) */
      if (!bMem) p->pStore->xUnlink(zOpen, NULL);
    }
  }
  if (bMem) colvecStoreMem.xUnlink(zOpen, NULL); /* live while open */
  sqlite3_free(zOpen);
  return rc;
}

/*
** ColvecTableStore.xKeep: stores the bytes of finished segment file zPath
** as segment iSegid's chunks in the database, inside the current
** transaction. The file was just written or opened: its pages are in the
** page cache.
*/
static int embedKeep(ColvecSegTable *p, int64_t iSegid, const char *zPath,
                     char **pzErr) {
  const ColvecStore *pStore = p->pStore;
  ColvecFile *pFile = NULL;
  uint8_t *aBuf = NULL;
  int64_t nByte = 0, iOff;
  ColvecErr err;
  int rc;
  err.zMsg[0] = 0;
  rc = pStore->xOpen(zPath, COLVEC_OPEN_READONLY, &pFile, &err);
  if (rc == COLVEC_OK) rc = pStore->xFileStat(pFile, &nByte, NULL, &err);
  if (rc != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("%s", err.zMsg);
    rc = colvecReadRc(rc, err.iErrno);
  } else {
    aBuf = sqlite3_malloc64(COLVEC_EMBED_CHUNK);
    if (aBuf == NULL) rc = SQLITE_NOMEM;
  }
  for (iOff = 0; rc == SQLITE_OK && iOff < nByte; iOff += COLVEC_EMBED_CHUNK) {
    int n = (int)(nByte - iOff < COLVEC_EMBED_CHUNK ? nByte - iOff
                                                    : COLVEC_EMBED_CHUNK);
    if (pStore->xRead(pFile, aBuf, n, iOff, &err) != COLVEC_OK) {
      *pzErr = sqlite3_mprintf("%s", err.zMsg);
      rc = colvecReadRc(COLVEC_IOERR, err.iErrno);
    } else {
      rc = colvecStorageSegDataAdd(p->pStorage, iSegid,
                                   iOff / COLVEC_EMBED_CHUNK, aBuf, n, pzErr);
    }
  }
  if (pFile) pStore->xClose(pFile, NULL);
  sqlite3_free(aBuf);
  return rc;
}

/*
** ColvecTableStore.xCheck: checks the bytes the database holds for live
** segment h against its manifest row and the table's layout, and every
** section checksum, from a memory copy (colvecFolderMemScratch "check").
*/
static int embedCheck(ColvecSegTable *p, ColvecSegHandle *h,
                      const ColvecInterrupt *pInt, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  char *zDir = colvecFolderMemScratch(p->db, "check", p->zDir);
  char *zMem = zDir ? colvecFolderSegPath(zDir, h->iSegid, "") : NULL;
  ColvecSeg *pSeg = NULL;
  ColvecErr err;
  int rc = SQLITE_OK, bOs = 0;
  err.zMsg[0] = 0;
  if (zMem == NULL || colvecStoreMem.xMkdirUp(zDir, 0, NULL) != COLVEC_OK) {
    rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_OK)
    rc = embedRestoreWrite(p, &colvecStoreMem, h->iSegid, zMem, 0, &bOs, pzErr);
  if (rc == SQLITE_IOERR) rc = SQLITE_NOMEM; /* memory files fail so only */
  if (rc == COLVEC_CORRUPT_VTAB && *pzErr) {
    /* chunks missing or of the wrong total */
    rc = embedDamaged(pC, h->iSegid, 1, pzErr);
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
      rc = embedDamaged(pC, h->iSegid, 1, pzErr);
    }
    colvecSegfileClose(pSeg);
  }
  if (zMem) colvecStoreMem.xUnlink(zMem, NULL);
  sqlite3_free(zMem);
  sqlite3_free(zDir);
  return rc;
}

/* The database keeps the bytes, the files cache them; see colvecInt.h. */
const ColvecTableStore colvecTableStoreEmbedded = {
    "embedded", /* zName */
    1,          /* bCache */
    embedRecover,
    embedKeep,
    embedCheck,
};
