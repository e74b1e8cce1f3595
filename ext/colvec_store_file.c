/*
** colvec_store_file.c — the file store: segment files and their folders on
** disk, beside the database (colvec_store.h). Each method is the os layer's
** call of the same name (colvec_os.c on POSIX, colvec_os_win.c on
** Windows), so the os layer's I/O test hook sees every one of them.
*/
#include "colvec_store.h"

/*
** A file on disk is filled with xWrite, never in place: *ppData is set to
** NULL. Returns COLVEC_OK, or COLVEC_RANGE for a negative n.
*/
static int storeFileWriteInPlace(ColvecFile *pFile, int64_t n, void **ppData,
                                 ColvecErr *pErr) {
  *ppData = NULL;
  if (n < 0) {
    colvecErrSet(pErr, 0, "colvec: bad write range in \"%s\"", pFile->zPath);
    return COLVEC_RANGE;
  }
  return COLVEC_OK;
}

/* Sidecar files on disk; see colvec_store.h. */
const ColvecStore colvecStoreFile = {
    "file", /* zName */
    1,      /* bDurable */
    colvecOsOpen,
    colvecOsClose,
    colvecOsRead,
    colvecOsWrite,
    storeFileWriteInPlace,
    colvecOsSync,
    colvecOsFileStat,
    colvecOsMapOpen,
    colvecOsMapAdvise,
    colvecOsMapClose,
    colvecOsSyncDir,
    colvecOsSyncParent,
    colvecOsRename,
    colvecOsRenameNew,
    colvecOsRealPath,
    colvecOsUnlink,
    colvecOsKind,
    colvecOsMkdir,
    colvecOsMkdirUp,
    colvecOsRmdir,
    colvecOsListDir,
    colvecOsRemoveTree,
};
