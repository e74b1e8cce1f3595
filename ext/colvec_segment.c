/*
** colvec_segment.c — the live segments of a table, as one connection sees
** them (the snapshot): opening, verifying and caching segment files,
** keeping them in step with the manifest and tombstones the table records
** (colvec_storage.c), finding rows by rowid. Where the files are named is
** colvec_folder.c's; how their bytes are kept, the table store's
** (colvec_store_sidecar.c, colvec_store_embed.c); what a segment holds,
** colvec_layout.c's. See colvecInt.h for the interface.
*/
#include "colvecInt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
  char *zFile = colvecFolderDbFile(db, pConfig->zDb);
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
  p->pStore = colvecFolderDbStore(db, pConfig->zDb);
  /* zFolder was validated (colvecStorageFolder) or just made
  ** (colvecFolderNew); a link in its place is never followed */
  p->zDir = zFile ? colvecFolderPath(zFile, zFolder) : NULL;
  if (p->zDir == NULL) {
    rc = SQLITE_NOMEM;
  } else if (p->pStore->xKind(p->zDir) == COLVEC_OS_OTHER) {
    /* a table whose files are a cache reads its segments from where its
    ** store keeps them instead */
    const ColvecTableStore *pKeep = NULL;
    rc = colvecSegmentTableStore(pStorage, &pKeep);
    if (rc == SQLITE_OK) {
      if (pKeep->bCache) {
        p->bNoDir = 1;
      } else {
        rc = segNotFolder(p, pzErr);
      }
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

/* The store of a table; see colvecInt.h. The one place it is chosen. */
int colvecSegmentTableStore(ColvecStorage *pStorage,
                            const ColvecTableStore **pp) {
  int bEmbed = colvecStorageEmbedded(pStorage);
  if (bEmbed < 0) return -bEmbed;
  *pp = bEmbed ? &colvecTableStoreEmbedded : &colvecTableStoreSidecar;
  return SQLITE_OK;
}

/* What segReopen opens: one handle of a set (ColvecSegReopen.pCtx). */
typedef struct SegReopen SegReopen;
struct SegReopen {
  ColvecSegTable *p;  /* the set */
  ColvecSegHandle *h; /* the handle, its file closed */
  int64_t nRow;       /* rows its manifest row gives */
};

/*
** ColvecSegReopen.xOpen: opens file zPath of store pStore as the handle of
** pCtx (a SegReopen) and verifies every section (bMemo: through the memo).
** Returns SQLITE_OK, or an error with *pzErr set and the file closed.
*/
static int segReopen(void *pCtx, const ColvecStore *pStore, const char *zPath,
                     int bMemo, char **pzErr) {
  SegReopen *pR = (SegReopen *)pCtx;
  int rc = segHandleOpenFile(pR->p, pStore, pR->h, zPath, pR->nRow, pzErr);
  if (rc == SQLITE_OK) {
    rc = segVerify(pR->p, pR->h, bMemo, pzErr);
    if (rc != SQLITE_OK) segHandleCloseFile(pR->p->pConfig, pR->h);
  }
  return rc;
}

/*
** Opens segment iSegid of the table of store pKeep and checks it against
** its manifest row (checksum cksum, nRow rows). Returns SQLITE_OK with *pp
** set, or an error (see segMissing for a file that does not exist).
** Before a file's first use in this process every section checksum is
** verified (segVerify; memory files, written by this process, are not),
** unless verify=none for a table whose files are its segments: a damaged
** file is COLVEC_CORRUPT_VTAB naming the file and section, never read.
** A file that failed is handed to the store (xRecover), which rebuilds it
** when it keeps the bytes elsewhere; with no folder (p->bNoDir) nothing is
** opened there first.
*/
static int segHandleOpen(ColvecSegTable *p, const ColvecTableStore *pKeep,
                         int64_t iSegid, uint64_t cksum, int64_t nRow,
                         ColvecSegHandle **pp, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  ColvecSegHandle *h = sqlite3_malloc(sizeof(ColvecSegHandle));
  char *zPath = colvecFolderSegPath(p->zDir, iSegid, "");
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
    /* nothing is read there: from the kept bytes, or the reason */
    rc = pKeep->bCache ? SQLITE_CANTOPEN : segNotFolder(p, pzErr);
  } else {
    rc = segHandleOpenFile(p, p->pStore, h, zPath, nRow, pzErr);
  }
  if (rc == SQLITE_OK && p->pStore->bDurable &&
      (!pC->bNoVerify || pKeep->bCache)) {
    rc = segVerify(p, h, 1, pzErr);
    /* closed: the store may rebuild it, as one that failed at open */
    if (rc != SQLITE_OK) segHandleCloseFile(pC, h);
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM &&
      (rc & 0xff) != SQLITE_INTERRUPT) {
    SegReopen r;
    ColvecSegReopen reopen;
    r.p = p;
    r.h = h;
    r.nRow = nRow;
    reopen.pCtx = &r;
    reopen.xOpen = segReopen;
    rc = pKeep->xRecover(p, iSegid, rc, &reopen, pzErr);
  }
  sqlite3_free(zPath);
  if (rc != SQLITE_OK) {
    segHandleFree(pC, h);
    return rc;
  }
  *pp = h;
  return SQLITE_OK;
}

/* Rebuilds a damaged file from the kept bytes; see colvecInt.h. */
int colvecSegmentRepair(ColvecSegTable *p, int64_t iSegid, char **pzErr) {
  const ColvecTableStore *pKeep = NULL;
  int rc;
  colvecSegmentTableRelease(p); /* every handle, so that nothing maps it */
  rc = colvecSegmentTableStore(p->pStorage, &pKeep);
  if (rc == SQLITE_OK) {
    rc = pKeep->xRecover(p, iSegid, COLVEC_CORRUPT_VTAB, NULL, pzErr);
  }
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
  ColvecSegTable *p;             /* the set; apSeg holds the old segments */
  ColvecSegHandle **apNew;       /* the new set, ascending segid */
  int nNew;                      /* entries of apNew */
  int nAlloc;                    /* allocated entries of apNew */
  const ColvecTableStore *pKeep; /* the table's store; NULL: not read yet */
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
  /* the store is read once per refresh, and only when a file is opened */
  if (h == NULL && pR->pKeep == NULL) {
    rc = colvecSegmentTableStore(p->pStorage, &pR->pKeep);
  }
  if (h == NULL && rc == SQLITE_OK) {
    rc = segHandleOpen(p, pR->pKeep, iSegid, cksum, nRow, &h, pzErr);
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

/* The cache slot of one column of a handle; see colvecInt.h. */
ColvecSegSlot *colvecSegmentSlot(ColvecSegHandle *h, const ColvecConfig *pC,
                                 int iCol) {
  if (iCol < 0 || iCol >= pC->nCol) return NULL;
  if (h->aSlot == NULL) {
    size_t nSlot = sizeof(ColvecSegSlot) * (size_t)pC->nCol;
    h->aSlot = sqlite3_malloc64(nSlot);
    if (h->aSlot == NULL) return NULL;
    memset(h->aSlot, 0, nSlot);
  }
  return &h->aSlot[iCol];
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
