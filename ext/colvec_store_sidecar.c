/*
** colvec_store_sidecar.c — the sidecar table store (the default; see
** ColvecTableStore in colvecInt.h): the segment files in the table's
** folder beside the database are the segments themselves, and the
** database holds only their manifest. A missing or damaged file is
** reported, never rebuilt: the bytes exist nowhere else.
*/
#include "colvecInt.h"

#include <string.h>

/*
** ColvecTableStore.xRecover: nothing to rebuild from; the failure rc and
** *pzErr stand.
*/
static int sidecarRecover(ColvecSegTable *p, int64_t iSegid, int rc,
                          const ColvecSegReopen *pReopen, char **pzErr) {
  (void)p;
  (void)iSegid;
  (void)pReopen;
  (void)pzErr;
  return rc;
}

/*
** ColvecTableStore.xKeep: the synced file is the segment; the database
** keeps nothing more.
*/
static int sidecarKeep(ColvecSegTable *p, int64_t iSegid, const char *zPath,
                       char **pzErr) {
  (void)p;
  (void)iSegid;
  (void)zPath;
  (void)pzErr;
  return SQLITE_OK;
}

/*
** ColvecTableStore.xCheck: a sidecar segment against the disk: the file its
** name
** gives must exist and be the file handle h has open (same device and
** inode where the os layer knows them). A connection keeps reading a
** segment it mapped after the file was removed or replaced, while every
** new connection fails; the check says so. Returns SQLITE_OK,
** COLVEC_CORRUPT_VTAB with *pzErr set, or SQLITE_NOMEM.
*/
static int sidecarCheck(ColvecSegTable *pSegs, ColvecSegHandle *h,
                        const ColvecInterrupt *pInt, char **pzErr) {
  const char *zName = pSegs->pConfig->zName;
  const ColvecFileId *pOld = colvecSegfileFileId(h->pSeg);
  char *zPath = colvecFolderSegPath(pSegs->zDir, h->iSegid, "");
  ColvecFile *pFile = NULL;
  ColvecFileId id;
  ColvecErr err;
  int64_t nByte = 0;
  int rc = SQLITE_OK, rcOpen, rcStat = COLVEC_OK;
  (void)pInt; /* one open and stat: nothing to interrupt */
  if (zPath == NULL) return SQLITE_NOMEM;
  memset(&id, 0, sizeof(id));
  colvecErrClear(&err);
  rcOpen = pSegs->pStore->xOpen(zPath, COLVEC_OPEN_READONLY, &pFile, &err);
  if (rcOpen == COLVEC_OK) {
    rcStat = pSegs->pStore->xFileStat(pFile, &nByte, &id, &err);
  }
  if (colvecReadRc(rcOpen, err.iErrno) == SQLITE_NOMEM ||
      colvecReadRc(rcStat, err.iErrno) == SQLITE_NOMEM) {
    rc = SQLITE_NOMEM; /* the check could not run: that is not damage */
  } else if (rcOpen != COLVEC_OK) {
    *pzErr = sqlite3_mprintf(
        "colvec: integrity-check: table %s: segment %lld cannot be opened "
        "from the disk (%s): this connection reads the copy it opened "
        "before, new connections fail",
        zName, (long long)h->iSegid, err.zMsg);
    rc = COLVEC_CORRUPT_VTAB;
  } else if (rcStat != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("colvec: integrity-check: table %s: %s", zName,
                             err.zMsg);
    rc = COLVEC_CORRUPT_VTAB;
  } else if (id.bValid && pOld->bValid &&
             (id.iDev != pOld->iDev || id.iIno != pOld->iIno)) {
    *pzErr = sqlite3_mprintf(
        "colvec: integrity-check: table %s: segment file %s was replaced "
        "by another file since this connection opened it",
        zName, zPath);
    rc = COLVEC_CORRUPT_VTAB;
  }
  if (pFile) pSegs->pStore->xClose(pFile, NULL);
  sqlite3_free(zPath);
  return rc;
}

/* The files are the segments; see colvecInt.h. */
const ColvecTableStore colvecTableStoreSidecar = {
    "sidecar", /* zName */
    0,         /* bCache */
    sidecarRecover,
    sidecarKeep,
    sidecarCheck,
};
