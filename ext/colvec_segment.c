/*
** colvec_segment.c — the live segments of a table, as one connection sees
** them: finding the folder, opening and caching segment files, keeping
** them in step with the manifest and tombstones the table records
** (colvec_storage.c), and reading rows and columns out of them. See
** colvecInt.h for the interface.
*/
#include "colvecInt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Path of segment iSegid in folder zDir, with suffix zSuffix. */
char *colvecSegPath(const char *zDir, int64_t iSegid, const char *zSuffix) {
  return sqlite3_mprintf("%s" COLVEC_OS_SEP "%06lld.seg%s", zDir,
                         (long long)iSegid, zSuffix);
}

/* Frees one handle and closes its file (its last reference is gone). */
static void segHandleFree(const ColvecConfig *pC, ColvecSegHandle *h) {
  if (h) {
    int i;
    if (h->apOwned) {
      for (i = 0; i < pC->nCol * 3; i++)
        sqlite3_free(h->apOwned[i]);
    }
    sqlite3_free(h->apOwned);
    sqlite3_free(h->aView);
    sqlite3_free(h->abView);
    sqlite3_free(h->aRowidOwned);
    sqlite3_free(h->aTomb);
    if (h->aSlot) {
      for (i = 0; i < pC->nCol; i++) {
        if (h->aSlot[i].p) h->aSlot[i].xFree(h->aSlot[i].p);
      }
    }
    sqlite3_free(h->aSlot);
    colvecSegClose(h->pSeg);
    sqlite3_free(h);
  }
}

/* Takes a reference on h. */
void colvecSegHandleRef(ColvecSegHandle *h) { h->nRef++; }

/* Drops a reference on h; the last one frees it. */
void colvecSegHandleUnref(const ColvecConfig *pC, ColvecSegHandle *h) {
  if (h && --h->nRef <= 0) segHandleFree(pC, h);
}

/* Path of a table's segment folder; see colvecInt.h. */
char *colvecSegFolderPath(const char *zFile, const char *zFolder) {
  return sqlite3_mprintf("%s-colvec" COLVEC_OS_SEP "%s", zFile, zFolder);
}

/* Returns non-zero for the names colvec gives segment files:
** one or more digits, then ".seg" or ".seg.tmp". */
static int segIsSegmentName(const char *z) {
  const char *zEnd = z;
  while (*zEnd >= '0' && *zEnd <= '9')
    zEnd++;
  if (zEnd == z) return 0;
  return strcmp(zEnd, ".seg") == 0 || strcmp(zEnd, ".seg.tmp") == 0;
}

/* Removes a table folder's segment files, then the folder if empty. */
void colvecSegFolderRemove(const char *zDir) {
  char **azName = NULL;
  int nName = 0, i;
  if (colvecOsKind(zDir) != COLVEC_OS_DIR) return; /* never through a link */
  if (colvecOsListDir(zDir, NULL, &azName, &nName, NULL) != COLVEC_OK) return;
  for (i = 0; i < nName; i++) {
    char *zPath;
    if (!segIsSegmentName(azName[i])) continue;
    zPath = sqlite3_mprintf("%s" COLVEC_OS_SEP "%s", zDir, azName[i]);
    if (zPath == NULL) break;
    if (colvecOsKind(zPath) != COLVEC_OS_DIR) colvecOsUnlink(zPath, NULL);
    sqlite3_free(zPath);
  }
  colvecOsListFree(azName, nName);
  colvecOsRmdir(zDir, NULL); /* fails, harmlessly, when other files remain */
}

/* Removes orphan table folders; see colvecInt.h. */
void colvecSegSweepOrphans(sqlite3 *db, const char *zDb, const char *zSkip) {
  const char *zFile = sqlite3_db_filename(db, zDb);
  ColvecFolderList list;
  char *zRoot;
  char **azName = NULL;
  int nName = 0, i, j;
  if (zFile == NULL || zFile[0] == 0) return;
  zRoot = sqlite3_mprintf("%s-colvec", zFile);
  if (zRoot == NULL) return;
  if (colvecOsListDir(zRoot, NULL, &azName, &nName, NULL) == COLVEC_OK &&
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
        if (zDir) colvecSegFolderRemove(zDir);
        sqlite3_free(zDir);
      }
    }
    colvecStorageFolderListFree(&list);
  }
  colvecOsListFree(azName, nName);
  sqlite3_free(zRoot);
}

/* Chooses and creates a new table folder; see colvecInt.h. */
int colvecSegFolderNew(sqlite3 *db, const char *zDb, char **pzFolder,
                       char **pzErr) {
  const char *zFile = sqlite3_db_filename(db, zDb);
  int bFile = zFile != NULL && zFile[0] != 0;
  char *zRoot = bFile ? sqlite3_mprintf("%s-colvec", zFile) : NULL;
  ColvecErr err;
  int rc = SQLITE_OK, iTry;
  *pzFolder = NULL;
  err.zMsg[0] = 0;
  if (bFile && zRoot == NULL) return SQLITE_NOMEM;
  if (bFile && colvecOsMkdirP(zRoot, &err) != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("%s", err.zMsg);
    rc = SQLITE_CANTOPEN;
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
    if (!bFile) break; /* no folder is made: the table uses a private one */
    zDir = sqlite3_mprintf("%s" COLVEC_OS_SEP "%s", zRoot, *pzFolder);
    if (zDir == NULL) {
      rc = SQLITE_NOMEM;
      break;
    }
    /* mkdir fails on anything already there: the name is new on disk */
    rcDir = colvecOsMkdir(zDir, &err);
    /* Make the new folder's entry, and the -colvec folder's, durable: the
    ** segment files synced into it later are lost with it otherwise. */
    if (rcDir == COLVEC_OK) rcDir = colvecOsSyncParent(zDir, &err);
    if (rcDir == COLVEC_OK) rcDir = colvecOsSyncParent(zRoot, &err);
    if (rcDir != COLVEC_OK && rcDir != COLVEC_ERROR) colvecOsRmdir(zDir, NULL);
    sqlite3_free(zDir);
    if (rcDir == COLVEC_OK) break;
    sqlite3_free(*pzFolder);
    *pzFolder = NULL;
    if (rcDir != COLVEC_ERROR) {
      *pzErr = sqlite3_mprintf("%s", err.zMsg);
      rc = SQLITE_CANTOPEN;
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

/* Opens the set; see colvecInt.h. */
int colvecSegTableOpen(sqlite3 *db, const ColvecConfig *pConfig,
                       ColvecStorage *pStorage, const char *zFolder,
                       ColvecSegTable **pp, char **pzErr) {
  ColvecSegTable *p = sqlite3_malloc(sizeof(ColvecSegTable));
  const char *zFile = sqlite3_db_filename(db, pConfig->zDb);
  int rc = SQLITE_OK;
  *pp = NULL;
  if (p == NULL) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->pConfig = pConfig;
  p->pStorage = pStorage;
  if (zFile == NULL || zFile[0] == 0) {
    /* no file: a private temporary folder */
    char *zTemp = NULL;
    ColvecErr err;
    colvecErrClear(&err);
    rc = colvecOsTempDir(&zTemp, &err);
    if (rc == COLVEC_OK) {
      p->zDir = sqlite3_mprintf("%s", zTemp);
      if (p->zDir == NULL) {
        colvecOsRmdir(zTemp, NULL);
        rc = SQLITE_NOMEM;
      } else {
        p->bTempDir = 1;
      }
      colvecFree(zTemp);
    } else if (rc == COLVEC_NOMEM) {
      rc = SQLITE_NOMEM;
    } else {
      *pzErr = sqlite3_mprintf("%s", err.zMsg);
      rc = SQLITE_CANTOPEN;
    }
  } else {
    /* zFolder was validated (colvecStorageFolder) or just made
    ** (colvecSegFolderNew); a link in its place is never followed */
    p->zDir = colvecSegFolderPath(zFile, zFolder);
    if (p->zDir == NULL) {
      rc = SQLITE_NOMEM;
    } else if (colvecOsKind(p->zDir) == COLVEC_OS_OTHER) {
      *pzErr = sqlite3_mprintf("colvec: table %s: segment folder %s is not a "
                               "folder (symbolic links are not followed): "
                               "the table is damaged",
                               pConfig->zName, p->zDir);
      rc = SQLITE_CORRUPT_VTAB;
    }
  }
  if (rc != SQLITE_OK) {
    colvecSegTableClose(p);
    return rc;
  }
  *pp = p;
  return SQLITE_OK;
}

/* Closes every segment and frees the set. */
void colvecSegTableClose(ColvecSegTable *p) {
  if (p) {
    int i;
    for (i = 0; i < p->nSeg; i++)
      colvecSegHandleUnref(p->pConfig, p->apSeg[i]);
    sqlite3_free(p->apSeg);
    if (p->bTempDir && p->zDir) colvecSegFolderRemove(p->zDir);
    sqlite3_free(p->zDir);
    sqlite3_free(p);
  }
}

/* Notes a change made by this connection. */
void colvecSegTableChanged(ColvecSegTable *p) { p->iLocalGenNow++; }

/*
** Explains why the file of segment iSegid, which the manifest of the
** snapshot being read names, does not exist, in *pzErr, and returns the
** error code:
**   - the folder holds segments newer than the snapshot (segid at or above
**     its next_segid): a newer commit dropped the segment and its file was
**     deleted, so the read transaction is too old (SQLITE_BUSY_SNAPSHOT:
**     retrying it on a new snapshot works);
**   - none of the snapshot's segment files exists: the database was copied
**     without its sidecar folder (SQLITE_CORRUPT_VTAB);
**   - else the file alone was removed (SQLITE_CORRUPT_VTAB).
*/
static int segMissing(ColvecSegTable *p, int64_t iSegid, const char *zPath,
                      char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  const char *zFile = sqlite3_db_filename(p->db, pC->zDb);
  const char *zBase = zFile ? colvecOsBaseName(zFile) : "";
  sqlite3_int64 iNext = 0;
  char **azName = NULL;
  int nName = 0, nNewer = 0, nOlder = 0, i;
  if (colvecStorageConfigGet(p->pStorage, "next_segid", &iNext) ==
      SQLITE_NOMEM) {
    return SQLITE_NOMEM;
  }
  if (colvecOsListDir(p->zDir, ".seg", &azName, &nName, NULL) == COLVEC_OK) {
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

/*
** The code of a failed colvecSegSectionBytes() call whose buffer slot is
** pOwned: a buffer was allocated, so the read failed (SQLITE_IOERR_READ),
** else the allocation did (SQLITE_NOMEM).
*/
static int segBytesRc(void *pOwned) {
  return pOwned ? SQLITE_IOERR_READ : SQLITE_NOMEM;
}

/* Maps a segment read's failure to an SQLite code; see colvecInt.h. */
int colvecSegReadRc(int rc, int iErrno) {
  if (rc == COLVEC_NOMEM) return SQLITE_NOMEM;
  if (rc == COLVEC_IOERR && iErrno == ENOMEM) return SQLITE_NOMEM;
  if (rc == COLVEC_IOERR && iErrno != 0) return SQLITE_IOERR_READ;
  return COLVEC_CORRUPT_VTAB; /* a bad file, or shorter than it says */
}

/*
** Opens segment iSegid and checks it against its manifest row (checksum
** cksum, nRow rows). Returns SQLITE_OK with *pp set, or an error (see
** segMissing for a file that does not exist).
*/
static int segHandleOpen(ColvecSegTable *p, int64_t iSegid, uint64_t cksum,
                         int64_t nRow, ColvecSegHandle **pp, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  ColvecSegHandle *h = sqlite3_malloc(sizeof(ColvecSegHandle));
  char *zPath = colvecSegPath(p->zDir, iSegid, "");
  const ColvecSegSection *pSec;
  ColvecErr err;
  int rc = SQLITE_OK;
  *pp = NULL;
  err.zMsg[0] = 0;
  if (h == NULL || zPath == NULL) {
    sqlite3_free(h);
    sqlite3_free(zPath);
    return SQLITE_NOMEM;
  }
  memset(h, 0, sizeof(*h));
  h->nRef = 1;
  h->iSegid = iSegid;
  h->cksum = cksum;
  rc = colvecSegOpen(zPath, pC->eAccess, pC->ePrefault, &h->pSeg, &err);
  if (rc == COLVEC_IOERR && err.iErrno == ENOENT) {
    rc = segMissing(p, iSegid, zPath, pzErr);
  } else if (rc != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("%s", err.zMsg[0] ? err.zMsg
                                               : "colvec: cannot open segment");
    rc = colvecSegReadRc(rc, err.iErrno);
  } else if (colvecSegHeaderChecksum(h->pSeg) != cksum ||
             (int64_t)colvecSegRowCount(h->pSeg) != nRow ||
             colvecSegFingerprint(h->pSeg) != colvecConfigFingerprint(pC)) {
    *pzErr = sqlite3_mprintf(
        "colvec: segment %s does not match the manifest of table %s", zPath,
        pC->zName);
    rc = COLVEC_CORRUPT_VTAB;
  }
  if (rc == SQLITE_OK) {
    h->nRow = nRow;
    pSec = colvecSegFind(h->pSeg, COLVEC_SEG_ROWIDS, 0);
    h->aView =
        sqlite3_malloc64(sizeof(ColvecColumnView) * (sqlite3_uint64)pC->nCol);
    h->abView = sqlite3_malloc64((sqlite3_uint64)pC->nCol);
    h->apOwned =
        sqlite3_malloc64(sizeof(void *) * 3 * (sqlite3_uint64)pC->nCol);
    /* zero what was allocated: segHandleFree walks apOwned */
    if (h->abView) memset(h->abView, 0, (size_t)pC->nCol);
    if (h->apOwned)
      memset(h->apOwned, 0, sizeof(void *) * 3 * (size_t)pC->nCol);
    if (h->aView == NULL || h->abView == NULL || h->apOwned == NULL) {
      rc = SQLITE_NOMEM;
    }
    if (rc == SQLITE_OK && (pSec == NULL || pSec->nByte != nRow * 8)) {
      *pzErr = sqlite3_mprintf("colvec: segment %s has no valid rowids", zPath);
      rc = COLVEC_CORRUPT_VTAB;
    } else if (rc == SQLITE_OK && nRow > 0) {
      void *pOwned = NULL;
      int64_t nByte;
      h->aRowid = (const int64_t *)colvecSegSectionBytes(
          h, COLVEC_SEG_ROWIDS, 0, &pOwned, &nByte, pzErr);
      h->aRowidOwned = (int64_t *)pOwned;
      if (h->aRowid == NULL) rc = segBytesRc(pOwned);
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
  if (h == NULL) rc = segHandleOpen(p, iSegid, cksum, nRow, &h, pzErr);
  if (rc == SQLITE_OK) pR->apNew[pR->nNew++] = h;
  return rc;
}

/* Brings the set up to date; see colvecInt.h. */
int colvecSegTableRefresh(ColvecSegTable *p, char **pzErr) {
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
    colvecSegHandleUnref(pC, p->apSeg[i]);
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
int64_t colvecSegSearch(const int64_t *a, int64_t n, int64_t v) {
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
int colvecSegIsDead(const ColvecSegHandle *h, int64_t iRowid) {
  return h->nTomb > 0 && colvecSegSearch(h->aTomb, h->nTomb, iRowid) >= 0;
}

/* Finds a live row; see colvecInt.h. */
int colvecSegLocate(const ColvecSegTable *p, int64_t iRowid, int *piSeg,
                    int64_t *piRow) {
  int i;
  for (i = p->nSeg - 1; i >= 0; i--) {
    const ColvecSegHandle *h = p->apSeg[i];
    int64_t iRow;
    if (h->nRow == 0 || iRowid < h->aRowid[0] ||
        iRowid > h->aRowid[h->nRow - 1]) {
      continue;
    }
    iRow = colvecSegSearch(h->aRowid, h->nRow, iRowid);
    if (iRow >= 0 && !colvecSegIsDead(h, iRowid)) {
      *piSeg = i;
      *piRow = iRow;
      return 1;
    }
  }
  return 0;
}

/* Bytes of one section, mapped or read; see colvecInt.h. */
const void *colvecSegSectionBytes(ColvecSegHandle *h, uint32_t eKind, int iCol,
                                  void **ppOwned, int64_t *pnByte,
                                  char **pzErr) {
  const ColvecSegSection *pSec = colvecSegFind(h->pSeg, eKind, (uint32_t)iCol);
  ColvecErr err;
  err.zMsg[0] = 0;
  *pnByte = 0;
  if (pSec == NULL) return NULL;
  *pnByte = pSec->nByte;
  if (colvecSegData(h->pSeg, pSec)) return colvecSegData(h->pSeg, pSec);
  *ppOwned = sqlite3_malloc64((sqlite3_uint64)pSec->nByte + 8);
  if (*ppOwned == NULL) {
    *pzErr = sqlite3_mprintf("colvec: out of memory");
    return NULL;
  }
  if (colvecSegRead(h->pSeg, pSec, 0, *ppOwned, pSec->nByte, &err) !=
      COLVEC_OK) {
    *pzErr = sqlite3_mprintf("%s", err.zMsg);
    return NULL;
  }
  return *ppOwned;
}

/* Makes the view of attribute column iCol available; see colvecInt.h. */
int colvecSegView(ColvecSegTable *p, ColvecSegHandle *h, int iCol,
                  const ColvecColumnView **ppView, char **pzErr) {
  const ColvecColumn *pCol = &p->pConfig->aCol[iCol];
  ColvecColumnView *pView = &h->aView[iCol];
  void **apOwned = &h->apOwned[iCol * 3];
  int64_t nByte = 0, nNull = 0;
  if (!h->abView[iCol]) {
    /* buffers left by an earlier attempt that failed (a read error) */
    sqlite3_free(apOwned[0]);
    sqlite3_free(apOwned[1]);
    sqlite3_free(apOwned[2]);
    apOwned[0] = apOwned[1] = apOwned[2] = NULL;
    memset(pView, 0, sizeof(*pView));
    pView->nRow = h->nRow;
    pView->aNull = colvecSegSectionBytes(h, COLVEC_SEG_NULLBITMAP, iCol,
                                         &apOwned[2], &nNull, pzErr);
    if (*pzErr) return segBytesRc(apOwned[2]);
    switch (pCol->eAttr) {
    case COLVEC_ATTR_INTEGER:
      pView->eStore = COLVEC_STORE_INT64;
      pView->aInt = colvecSegSectionBytes(h, COLVEC_SEG_ATTR_FIXED, iCol,
                                          &apOwned[0], &nByte, pzErr);
      if (*pzErr) return segBytesRc(apOwned[0]);
      if (pView->aInt == NULL && h->nRow > 0) goto corrupt;
      if (nByte != h->nRow * 8) goto corrupt;
      break;
    case COLVEC_ATTR_REAL:
      pView->eStore = COLVEC_STORE_DOUBLE;
      pView->aReal = colvecSegSectionBytes(h, COLVEC_SEG_ATTR_FIXED, iCol,
                                           &apOwned[0], &nByte, pzErr);
      if (*pzErr) return segBytesRc(apOwned[0]);
      if (pView->aReal == NULL && h->nRow > 0) goto corrupt;
      if (nByte != h->nRow * 8) goto corrupt;
      break;
    default:
      pView->eStore = pCol->eAttr == COLVEC_ATTR_TEXT ? COLVEC_STORE_TEXT
                                                      : COLVEC_STORE_BLOB;
      pView->aOff = colvecSegSectionBytes(h, COLVEC_SEG_ATTR_VAROFFSETS, iCol,
                                          &apOwned[0], &nByte, pzErr);
      if (*pzErr) return segBytesRc(apOwned[0]);
      if (pView->aOff == NULL) goto corrupt;
      nByte = 0;
      pView->aByte = colvecSegSectionBytes(h, COLVEC_SEG_ATTR_VARBYTES, iCol,
                                           &apOwned[1], &nByte, pzErr);
      if (*pzErr) return segBytesRc(apOwned[1]);
      pView->nByte = nByte;
      if (pView->aOff[h->nRow] > nByte || pView->aOff[0] != 0) goto corrupt;
      {
        /* every reader indexes aByte with these: check them all once */
        int64_t i;
        for (i = 0; i < h->nRow; i++) {
          if (pView->aOff[i + 1] < pView->aOff[i]) goto corrupt;
        }
      }
      break;
    }
    h->abView[iCol] = 1;
  }
  *ppView = pView;
  return SQLITE_OK;
corrupt:
  if (*pzErr == NULL) {
    *pzErr = sqlite3_mprintf(
        "colvec: segment %lld of table %s lacks a valid section for column %s",
        (long long)h->iSegid, p->pConfig->zName, pCol->zName);
  }
  return COLVEC_CORRUPT_VTAB;
}

/* Base address of vector column iCol in a mapped segment; see colvecInt.h. */
const uint8_t *colvecSegVectorBase(ColvecSegHandle *h, const ColvecColumn *pCol,
                                   int iCol) {
  const ColvecSegSection *pSec =
      colvecSegFind(h->pSeg, COLVEC_SEG_VECTORS, (uint32_t)iCol);
  if (pSec == NULL || pSec->nByte != h->nRow * pCol->nByte) return NULL;
  return (const uint8_t *)colvecSegData(h->pSeg, pSec);
}

/* Returns a pointer to one vector; see colvecInt.h. */
const void *colvecSegVector(ColvecSegHandle *h, const ColvecColumn *pCol,
                            int iCol, int64_t iRow, void *pBuf, char **pzErr,
                            int *pRc) {
  const ColvecSegSection *pSec =
      colvecSegFind(h->pSeg, COLVEC_SEG_VECTORS, (uint32_t)iCol);
  const uint8_t *aBase;
  ColvecErr err;
  int rc;
  if (pSec == NULL || pSec->nByte != h->nRow * pCol->nByte) {
    *pzErr = sqlite3_mprintf("colvec: segment %lld lacks vectors for %s",
                             (long long)h->iSegid, pCol->zName);
    *pRc = COLVEC_CORRUPT_VTAB;
    return NULL;
  }
  aBase = (const uint8_t *)colvecSegData(h->pSeg, pSec);
  if (aBase) return aBase + iRow * pCol->nByte;
  err.zMsg[0] = 0;
  err.iErrno = 0;
  rc =
      colvecSegRead(h->pSeg, pSec, iRow * pCol->nByte, pBuf, pCol->nByte, &err);
  if (rc != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("%s", err.zMsg);
    *pRc = colvecSegReadRc(rc, err.iErrno);
    return NULL;
  }
  return pBuf;
}

/* Sets the SQL result to one column of a segment row; see colvecInt.h. */
int colvecSegResult(ColvecSegTable *p, ColvecSegHandle *h, int iCol,
                    int64_t iRow, sqlite3_context *pCtx, char **pzErr) {
  const ColvecColumn *pCol = &p->pConfig->aCol[iCol];
  const ColvecColumnView *pView;
  int rc;
  if (pCol->bVector) {
    void *pBuf = NULL;
    const void *pVec;
    if (colvecSegAccess(h->pSeg) == COLVEC_SEG_FILE) {
      pBuf = sqlite3_malloc(pCol->nByte);
      if (pBuf == NULL) return SQLITE_NOMEM;
    }
    pVec = colvecSegVector(h, pCol, iCol, iRow, pBuf, pzErr, &rc);
    if (pVec) sqlite3_result_blob(pCtx, pVec, pCol->nByte, SQLITE_TRANSIENT);
    sqlite3_free(pBuf);
    return pVec ? SQLITE_OK : rc;
  }
  rc = colvecSegView(p, h, iCol, &pView, pzErr);
  if (rc != SQLITE_OK) return rc;
  if (pView->aNull && (pView->aNull[iRow >> 3] >> (iRow & 7)) & 1) {
    sqlite3_result_null(pCtx);
    return SQLITE_OK;
  }
  switch (pView->eStore) {
  case COLVEC_STORE_INT64:
    sqlite3_result_int64(pCtx, pView->aInt[iRow]);
    break;
  case COLVEC_STORE_DOUBLE:
    sqlite3_result_double(pCtx, pView->aReal[iRow]);
    break;
  default: {
    int64_t iStart = pView->aOff[iRow], iEnd = pView->aOff[iRow + 1];
    if (iStart < 0 || iEnd < iStart || iEnd > pView->nByte) {
      *pzErr =
          sqlite3_mprintf("colvec: segment %lld of table %s: bad offsets "
                          "in column %s",
                          (long long)h->iSegid, p->pConfig->zName, pCol->zName);
      return COLVEC_CORRUPT_VTAB;
    }
    if (iEnd == iStart) {
      if (pView->eStore == COLVEC_STORE_TEXT) {
        sqlite3_result_text(pCtx, "", 0, SQLITE_STATIC);
      } else {
        sqlite3_result_zeroblob(pCtx, 0);
      }
    } else if (pView->eStore == COLVEC_STORE_TEXT) {
      sqlite3_result_text(pCtx, (const char *)pView->aByte + iStart,
                          (int)(iEnd - iStart), SQLITE_TRANSIENT);
    } else {
      sqlite3_result_blob(pCtx, pView->aByte + iStart, (int)(iEnd - iStart),
                          SQLITE_TRANSIENT);
    }
    break;
  }
  }
  return SQLITE_OK;
}

/* Binds one segment value to a statement parameter; see colvecInt.h. */
int colvecSegBind(ColvecSegTable *p, ColvecSegHandle *h, int64_t iRow, int iCol,
                  sqlite3_stmt *pStmt, int iBind, char **pzErr) {
  const ColvecColumn *pCol = &p->pConfig->aCol[iCol];
  const ColvecColumnView *pView;
  int rc;
  if (pCol->bVector) {
    void *pBuf = sqlite3_malloc(pCol->nByte);
    const void *pVec;
    if (pBuf == NULL) return SQLITE_NOMEM;
    pVec = colvecSegVector(h, pCol, iCol, iRow, pBuf, pzErr, &rc);
    if (pVec)
      sqlite3_bind_blob(pStmt, iBind, pVec, pCol->nByte, SQLITE_TRANSIENT);
    sqlite3_free(pBuf);
    return pVec ? SQLITE_OK : rc;
  }
  rc = colvecSegView(p, h, iCol, &pView, pzErr);
  if (rc != SQLITE_OK) return rc;
  if (pView->aNull && (pView->aNull[iRow >> 3] >> (iRow & 7)) & 1) {
    return sqlite3_bind_null(pStmt, iBind);
  }
  switch (pView->eStore) {
  case COLVEC_STORE_INT64:
    return sqlite3_bind_int64(pStmt, iBind, pView->aInt[iRow]);
  case COLVEC_STORE_DOUBLE:
    return sqlite3_bind_double(pStmt, iBind, pView->aReal[iRow]);
  default: {
    int64_t a = pView->aOff[iRow], b = pView->aOff[iRow + 1];
    if (a < 0 || b < a || b > pView->nByte) return COLVEC_CORRUPT_VTAB;
    if (pView->eStore == COLVEC_STORE_TEXT) {
      return sqlite3_bind_text(pStmt, iBind,
                               b > a ? (const char *)pView->aByte + a : "",
                               (int)(b - a), SQLITE_TRANSIENT);
    }
    return sqlite3_bind_blob(pStmt, iBind,
                             b > a ? pView->aByte + a : (const void *)"",
                             (int)(b - a), SQLITE_TRANSIENT);
  }
  }
}
