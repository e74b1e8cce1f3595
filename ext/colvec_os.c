/*
** colvec_os.c — the file layer of colvec_os.h, written once for every
** platform over the system calls of colvec_os_sys.h (colvec_os_unix.c:
** Linux, macOS, the BSDs; colvec_os_win.c: Windows): argument checks, the
** I/O test hook around every call, loops over short reads and writes, the
** walks that make and remove folders, listings, messages; and what needs
** no system call: CPU features, portable bit operations. See the header
** for the contract shared by every function: COLVEC_OK or an error code,
** and a "colvec: ..." message naming the file in the optional ColvecErr.
*/
#include "colvec_os_sys.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*************************************************************************
** Test hook (colvecOsSetHook).
*/

/* The installed test hook, or NULL (always, outside tests). */
static const ColvecOsHook *osHook = NULL;

/* Installs pHook (NULL removes it). */
void colvecOsSetHook(const ColvecOsHook *pHook) { osHook = pHook; }

/*
** Asks the test hook whether call eOp may proceed: returns 0, or the errno
** value the call must fail with. *pn is the byte count (WRITE only; NULL
** for other calls).
*/
static int osBefore(int eOp, const char *zPath, const char *zPath2,
                    int64_t iArg, int64_t *pn) {
  int64_t nDummy = 0;
  if (osHook == NULL || osHook->xBefore == NULL) return 0;
  return osHook->xBefore(osHook->pArg, eOp, zPath, zPath2, iArg,
                         pn ? pn : &nDummy);
}

/* Tells the test hook that call eOp succeeded. */
static void osAfter(int eOp, const char *zPath, const char *zPath2,
                    int64_t iArg, int64_t n) {
  if (osHook && osHook->xAfter) {
    osHook->xAfter(osHook->pArg, eOp, zPath, zPath2, iArg, n);
  }
}

/*
** Fails operation zOp on zPath with the errno value iErrno (chosen by the
** test hook, or the one a condition means): COLVEC_IOERR and the message
** a real failure would give.
*/
static int osInjected(ColvecErr *pErr, int iErrno, const char *zOp,
                      const char *zPath) {
  return colvecOsErrnoErr(pErr, iErrno, zOp, zPath);
}

/*************************************************************************
** Files, written once over the platform's system calls (colvec_os_sys.h).
*/

/*
** Opens zPath according to flags (COLVEC_OPEN_*; exactly one of READONLY
** and READWRITE; CREATE creates or truncates, EXCLUSIVE makes CREATE fail
** on an existing file). On success *ppFile is a new ColvecFile that the
** caller releases with colvecOsClose(). On error *ppFile is NULL; a path
** that names anything but a regular file (FIFO, folder, device) gives
** COLVEC_CORRUPT without blocking.
*/
int colvecOsOpen(const char *zPath, int flags, ColvecFile **ppFile,
                 ColvecErr *pErr) {
  ColvecFile *pFile;
  int rc, iFault;
  *ppFile = NULL;
  if (!((flags & COLVEC_OPEN_READONLY) && !(flags & COLVEC_OPEN_READWRITE) &&
        !(flags & COLVEC_OPEN_CREATE)) &&
      !((flags & COLVEC_OPEN_READWRITE) && !(flags & COLVEC_OPEN_READONLY))) {
    colvecErrSet(pErr, 0, "colvec: bad open flags 0x%x for \"%s\"", flags,
                 zPath);
    return COLVEC_RANGE;
  }
  iFault = osBefore(COLVEC_OSOP_OPEN, zPath, NULL, flags, NULL);
  if (iFault) return osInjected(pErr, iFault, "open", zPath);
  pFile = (ColvecFile *)colvecMalloc(sizeof(ColvecFile));
  if (pFile) {
    memset(pFile, 0, sizeof(*pFile));
    pFile->zPath = colvecOsStrndup(zPath, strlen(zPath));
  }
  if (pFile == NULL || pFile->zPath == NULL) {
    colvecFree(pFile);
    colvecErrSet(pErr, 0, "colvec: out of memory opening \"%s\"", zPath);
    return COLVEC_NOMEM;
  }
  rc = colvecOsSysOpen(pFile, flags, pErr);
  if (rc != COLVEC_OK) {
    colvecFree(pFile->zPath);
    colvecFree(pFile);
    return rc;
  }
  *ppFile = pFile;
  osAfter(COLVEC_OSOP_OPEN, zPath, NULL, flags, 0);
  return COLVEC_OK;
}

/*
** Closes pFile and frees it (NULL is a no-op). Returns COLVEC_IOERR when
** the system reports an error (the object is freed all the same).
*/
int colvecOsClose(ColvecFile *pFile, ColvecErr *pErr) {
  int rc, iFault;
  if (pFile == NULL) return COLVEC_OK;
  iFault = osBefore(COLVEC_OSOP_CLOSE, pFile->zPath, NULL, 0, NULL);
  rc = colvecOsSysClose(pFile, pErr);
  if (rc == COLVEC_OK && iFault) {
    rc = osInjected(pErr, iFault, "close", pFile->zPath); /* closed anyway */
  } else if (rc == COLVEC_OK) {
    osAfter(COLVEC_OSOP_CLOSE, pFile->zPath, NULL, 0, 0);
  }
  colvecFree(pFile->zPath);
  colvecFree(pFile);
  return rc;
}

/*
** Reads exactly n bytes at offset iOff into pBuf, looping over short reads.
** Reaching the end of the file first is an error (COLVEC_IOERR, "short
** read"), as is a negative n or iOff (COLVEC_RANGE).
*/
int colvecOsRead(ColvecFile *pFile, void *pBuf, int64_t n, int64_t iOff,
                 ColvecErr *pErr) {
  uint8_t *p = (uint8_t *)pBuf;
  if (n < 0 || iOff < 0) {
    colvecErrSet(pErr, 0, "colvec: bad read range in \"%s\"", pFile->zPath);
    return COLVEC_RANGE;
  }
  if (osHook) {
    int iFault = osBefore(COLVEC_OSOP_READ, pFile->zPath, NULL, iOff, NULL);
    if (iFault) return osInjected(pErr, iFault, "read", pFile->zPath);
  }
  while (n > 0) {
    int64_t nGot = 0;
    int rc =
        colvecOsSysRead(pFile, p, n < COLVEC_OS_MAX_IO ? n : COLVEC_OS_MAX_IO,
                        iOff, &nGot, pErr);
    if (rc != COLVEC_OK) return rc;
    if (nGot == 0) {
      colvecErrSet(pErr, 0,
                   "colvec: cannot read \"%s\": short read at offset %lld",
                   pFile->zPath, (long long)iOff);
      return COLVEC_IOERR;
    }
    p += nGot;
    n -= nGot;
    iOff += nGot;
  }
  return COLVEC_OK;
}

/*
** Writes exactly n bytes from pBuf at offset iOff, looping over short
** writes. Returns COLVEC_IOERR on failure (disk full included). The test
** hook may fail it after only part of the bytes.
*/
int colvecOsWrite(ColvecFile *pFile, const void *pBuf, int64_t n, int64_t iOff,
                  ColvecErr *pErr) {
  const uint8_t *p = (const uint8_t *)pBuf;
  int64_t nAll = n, iOff0 = iOff;
  int iFault = 0;
  if (n < 0 || iOff < 0) {
    colvecErrSet(pErr, 0, "colvec: bad write range in \"%s\"", pFile->zPath);
    return COLVEC_RANGE;
  }
  if (osHook) {
    int64_t nAllow = n;
    iFault = osBefore(COLVEC_OSOP_WRITE, pFile->zPath, NULL, iOff, &nAllow);
    if (iFault && nAllow >= 0 && nAllow < n) n = nAllow; /* short write */
    if (iFault && n == nAll) n = 0;
  }
  while (n > 0) {
    int64_t nPut = 0;
    int rc =
        colvecOsSysWrite(pFile, p, n < COLVEC_OS_MAX_IO ? n : COLVEC_OS_MAX_IO,
                         iOff, &nPut, pErr);
    if (rc != COLVEC_OK) return rc;
    if (nPut == 0) return osInjected(pErr, ENOSPC, "write", pFile->zPath);
    p += nPut;
    n -= nPut;
    iOff += nPut;
  }
  if (iFault) return osInjected(pErr, iFault, "write", pFile->zPath);
  osAfter(COLVEC_OSOP_WRITE, pFile->zPath, NULL, iOff0, nAll);
  return COLVEC_OK;
}

/* Makes the contents of pFile durable. COLVEC_IOERR on failure. */
int colvecOsSync(ColvecFile *pFile, ColvecErr *pErr) {
  int iFault = osBefore(COLVEC_OSOP_SYNC, pFile->zPath, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "fsync", pFile->zPath);
  if (colvecOsSysSync(pFile, pErr) != COLVEC_OK) return COLVEC_IOERR;
  osAfter(COLVEC_OSOP_SYNC, pFile->zPath, NULL, 0, 0);
  return COLVEC_OK;
}

/* Stores the current size of pFile in bytes in *pnByte. */
int colvecOsFileSize(ColvecFile *pFile, int64_t *pnByte, ColvecErr *pErr) {
  return colvecOsFileStat(pFile, pnByte, NULL, pErr);
}

/* Size and identity of pFile; see colvec_os.h. */
int colvecOsFileStat(ColvecFile *pFile, int64_t *pnByte, ColvecFileId *pId,
                     ColvecErr *pErr) {
  int iFault;
  if (pId) memset(pId, 0, sizeof(*pId));
  *pnByte = 0;
  iFault = osBefore(COLVEC_OSOP_SIZE, pFile->zPath, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "stat", pFile->zPath);
  return colvecOsSysFileStat(pFile, pnByte, pId, pErr);
}

/*************************************************************************
** Paths and folders.
*/

/*
** Makes the entries of folder zDir durable (after a create, rename or
** unlink in it). COLVEC_IOERR on failure.
*/
int colvecOsSyncDir(const char *zDir, ColvecErr *pErr) {
  int rc, iFault = osBefore(COLVEC_OSOP_SYNCDIR, zDir, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "fsync folder", zDir);
  rc = colvecOsSysSyncDir(zDir, pErr);
  if (rc == COLVEC_OK) osAfter(COLVEC_OSOP_SYNCDIR, zDir, NULL, 0, 0);
  return rc;
}

/*
** Makes durable the folder that holds zPath ("." when zPath has no
** separator; the root when its only separator is the first character).
*/
int colvecOsSyncParent(const char *zPath, ColvecErr *pErr) {
  const char *zBase = colvecOsBaseName(zPath);
  char *zDir;
  int rc;
  if (zBase == zPath) return colvecOsSyncDir(".", pErr);
  if (zBase == zPath + 1) return colvecOsSyncDir(COLVEC_OS_SEP, pErr);
  zDir = colvecOsStrndup(zPath, (size_t)(zBase - 1 - zPath));
  if (zDir == NULL) {
    colvecErrSet(pErr, 0, "colvec: out of memory syncing \"%s\"", zPath);
    return COLVEC_NOMEM;
  }
  rc = colvecOsSyncDir(zDir, pErr);
  colvecFree(zDir);
  return rc;
}

/* Renames zFrom to zTo through the test hook (colvecOsSysRename). */
static int osRename(const char *zFrom, const char *zTo, int bReplace,
                    ColvecErr *pErr) {
  int rc, iFault = osBefore(COLVEC_OSOP_RENAME, zFrom, zTo, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "rename", zFrom);
  rc = colvecOsSysRename(zFrom, zTo, bReplace, pErr);
  if (rc == COLVEC_OK) osAfter(COLVEC_OSOP_RENAME, zFrom, zTo, 0, 0);
  return rc;
}

/*
** Renames zFrom to zTo, atomically replacing zTo if it exists. On Windows
** it fails while either file is open or mapped.
*/
int colvecOsRename(const char *zFrom, const char *zTo, ColvecErr *pErr) {
  return osRename(zFrom, zTo, 1, pErr);
}

/*
** Renames zFrom to zTo, which must not exist: never replaces a file. An
** existing target is COLVEC_IOERR with errno EEXIST; zFrom then stays.
*/
int colvecOsRenameNew(const char *zFrom, const char *zTo, ColvecErr *pErr) {
  return osRename(zFrom, zTo, 0, pErr);
}

/*
** Removes file zPath. A file that does not exist is not an error, so that
** orphan cleanup can be repeated after a crash. On Windows a file open or
** mapped anywhere is not removed (COLVEC_IOERR, EACCES): the caller tries
** again later.
*/
int colvecOsUnlink(const char *zPath, ColvecErr *pErr) {
  int rc, iFault = osBefore(COLVEC_OSOP_UNLINK, zPath, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "remove", zPath);
  rc = colvecOsSysUnlink(zPath, pErr);
  if (rc == COLVEC_OK) osAfter(COLVEC_OSOP_UNLINK, zPath, NULL, 0, 0);
  return rc == COLVEC_ERROR ? COLVEC_OK : rc;
}

/*
** Says what is at zPath without following a link: COLVEC_OS_NONE
** (nothing), COLVEC_OS_DIR (a real folder) or COLVEC_OS_OTHER (a file, a
** link, anything else, or an error).
*/
int colvecOsKind(const char *zPath) {
  int k = colvecOsSysKind(zPath, NULL);
  return k == COLVEC_OS_NONE || k == COLVEC_OS_DIR ? k : COLVEC_OS_OTHER;
}

/*
** Returns 1 when something (file, folder, link) is known to exist at
** zPath, else 0 (also when that cannot be told).
*/
int colvecOsExists(const char *zPath) {
  return colvecOsSysKind(zPath, NULL) > COLVEC_OS_NONE;
}

/*
** Creates the one folder zDir (its parent must exist). Returns COLVEC_OK,
** COLVEC_ERROR without a message when something already exists at zDir
** (so that a caller choosing a fresh name can try another), or
** COLVEC_IOERR.
*/
int colvecOsMkdir(const char *zDir, ColvecErr *pErr) {
  int rc, iFault = osBefore(COLVEC_OSOP_MKDIR, zDir, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "create folder", zDir);
  rc = colvecOsSysMkdir(zDir, pErr);
  if (rc == COLVEC_OK) osAfter(COLVEC_OSOP_MKDIR, zDir, NULL, 0, 0);
  return rc;
}

/*
** Removes folder zDir if it is empty (never its contents). Returns
** COLVEC_OK when it is gone (or was not there), else COLVEC_IOERR.
*/
int colvecOsRmdir(const char *zDir, ColvecErr *pErr) {
  int rc, iFault = osBefore(COLVEC_OSOP_RMDIR, zDir, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "remove folder", zDir);
  rc = colvecOsSysRmdir(zDir, pErr);
  if (rc == COLVEC_OK) osAfter(COLVEC_OSOP_RMDIR, zDir, NULL, 0, 0);
  return rc == COLVEC_ERROR ? COLVEC_OK : rc;
}

/* Non-zero when c separates path components ('/', and '\' on Windows). */
static int osIsSep(char c) {
#if defined(_WIN32)
  if (c == '\\') return 1;
#endif
  return c == '/';
}

/*
** Creates the one folder zDir of colvecOsMkdirUp's walk (bTop: the first
** it visits, whose parent colvec never makes). An existing folder, or a
** link to one, is fine; an existing non-folder is COLVEC_IOERR (ENOTDIR).
*/
static int osMkdirStep(const char *zDir, int bTop, ColvecErr *pErr) {
  ColvecErr err;
  int rc, bDir;
  colvecErrClear(&err);
  rc = colvecOsSysMkdir(zDir, &err);
  if (rc == COLVEC_OK) {
    osAfter(COLVEC_OSOP_MKDIR, zDir, NULL, 0, 0);
    return COLVEC_OK;
  }
  if (rc == COLVEC_ERROR) {
    bDir = colvecOsSysIsDir(zDir, &err);
    if (bDir > 0) return COLVEC_OK;
    rc = bDir < 0 ? -bDir : osInjected(&err, ENOTDIR, "create folder", zDir);
  } else if (rc == COLVEC_IOERR && err.iErrno == ENOENT && bTop) {
    colvecErrSet(&err, ENOENT,
                 "colvec: cannot create folder \"%s\": the folder it goes in "
                 "does not exist (colvec does not create it)",
                 zDir);
  }
  if (pErr) *pErr = err;
  return rc;
}

/*
** Creates folder zDir and, where they are missing, up to nUp of the
** folders above it (a table's folder and its "<db>-colvec" folder: 1),
** splitting at separators. The folder above those must exist (a Windows
** drive "C:" or share "\\host\share" included): nothing further up is
** ever made, so a removed database folder is not made again (COLVEC_IOERR,
** ENOENT, with a message that says so). An existing folder, or a link to
** one, is fine; an existing non-folder is COLVEC_IOERR (ENOTDIR).
*/
int colvecOsMkdirUp(const char *zDir, int nUp, ColvecErr *pErr) {
  size_t n = strlen(zDir), i;
  char *zBuf;
  int rc = COLVEC_OK, nSkip = 0, bTop = 1, iFault;

  if (n == 0) {
    colvecErrSet(pErr, 0, "colvec: empty folder name");
    return COLVEC_RANGE;
  }
  iFault = osBefore(COLVEC_OSOP_MKDIR, zDir, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "create folder", zDir);
  zBuf = colvecOsStrndup(zDir, n);
  if (zBuf == NULL) {
    colvecErrSet(pErr, 0, "colvec: out of memory creating \"%s\"", zDir);
    return COLVEC_NOMEM;
  }
  /* The prefixes that end just before a separator, then the whole path:
  ** only the last nUp + 1 of them are visited, from the top. */
  for (i = 1; i < n; i++) {
    if (osIsSep(zBuf[i]) && !osIsSep(zBuf[i - 1])) nSkip++;
  }
  nSkip -= nUp;
  for (i = 1; i <= n && rc == COLVEC_OK; i++) {
    char cSave;
    if (i < n && !osIsSep(zBuf[i])) continue;
    if (i < n && osIsSep(zBuf[i - 1])) continue; /* "//", "\\host" */
    if (i < n && nSkip-- > 0) continue;
    cSave = zBuf[i];
    zBuf[i] = 0;
    rc = osMkdirStep(zBuf, bTop, pErr);
    bTop = 0;
    zBuf[i] = cSave;
  }
  colvecFree(zBuf);
  return rc;
}

/*
** Lists the names (not paths) in folder zDir that end in zSuffix (all of
** them when zSuffix is NULL or ""), "." and ".." excluded, sorted by
** strcmp so the result is deterministic. On success *pazName is an array of
** *pnName strings that the caller frees with colvecOsListFree() (NULL when
** there are none). On error both are zeroed.
*/
int colvecOsListDir(const char *zDir, const char *zSuffix, char ***pazName,
                    int *pnName, ColvecErr *pErr) {
  ColvecOsList list;
  int rc, iFault;
  *pazName = NULL;
  *pnName = 0;
  iFault = osBefore(COLVEC_OSOP_LISTDIR, zDir, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "list folder", zDir);
  colvecOsListInit(&list, zSuffix);
  rc = colvecOsSysListDir(zDir, &list, pErr);
  return colvecOsListFinish(&list, rc, zDir, pErr, pazName, pnName);
}

/*
** Removes zDir and everything below it (DROP TABLE). Links are removed,
** never followed. A zDir that does not exist is not an error. Stops at the
** first failure (on Windows, a file in use) and returns COLVEC_IOERR.
*/
int colvecOsRemoveTree(const char *zDir, ColvecErr *pErr) {
  char **azName = NULL;
  int nName = 0, i, rc;
  int eKind = colvecOsSysKind(zDir, pErr);
  if (eKind < 0) return -eKind;
  if (eKind == COLVEC_OS_NONE) return COLVEC_OK;
  if (eKind == COLVEC_OS_OTHER) return colvecOsUnlink(zDir, pErr);
  if (eKind == COLVEC_OS_DIRLINK) return colvecOsRmdir(zDir, pErr);
  rc = colvecOsListDir(zDir, NULL, &azName, &nName, pErr);
  for (i = 0; i < nName && rc == COLVEC_OK; i++) {
    size_t nPath = strlen(zDir) + strlen(azName[i]) + 2;
    char *zPath = (char *)colvecMalloc((int64_t)nPath);
    if (zPath == NULL) {
      colvecErrSet(pErr, 0, "colvec: out of memory removing \"%s\"", zDir);
      rc = COLVEC_NOMEM;
      break;
    }
    snprintf(zPath, nPath, "%s" COLVEC_OS_SEP "%s", zDir, azName[i]);
    rc = colvecOsRemoveTree(zPath, pErr);
    colvecFree(zPath);
  }
  colvecOsListFree(azName, nName);
  if (rc == COLVEC_OK) rc = colvecOsRmdir(zDir, pErr);
  return rc;
}

/*************************************************************************
** Read-only mappings.
*/

/*
** Maps the first nByte bytes of pFile (normally its whole size) read-only
** and shared, then applies ePrefault (COLVEC_PREFAULT_*: POPULATE reads
** every page in before returning, WILLNEED asks for background
** readahead; a failing hint is ignored). On success *ppMap is released
** with colvecOsMapClose(), which may happen after pFile is closed.
** nByte==0 gives a mapping with a==NULL. On error *ppMap is NULL.
*/
int colvecOsMapOpen(ColvecFile *pFile, int64_t nByte, int ePrefault,
                    ColvecMap **ppMap, ColvecErr *pErr) {
  ColvecMap *pMap;
  *ppMap = NULL;
  if (nByte < 0 || (uint64_t)nByte > (uint64_t)SIZE_MAX) {
    colvecErrSet(pErr, ENOMEM,
                 "colvec: cannot map \"%s\": %lld bytes do not fit in the "
                 "address space (use access mode 'file')",
                 pFile->zPath, (long long)nByte);
    return COLVEC_IOERR;
  }
  pMap = (ColvecMap *)colvecMalloc(sizeof(ColvecMap));
  if (pMap == NULL) {
    colvecErrSet(pErr, 0, "colvec: out of memory mapping \"%s\"", pFile->zPath);
    return COLVEC_NOMEM;
  }
  memset(pMap, 0, sizeof(*pMap));
  pMap->n = nByte;
  if (nByte > 0) {
    int rc, iFault = osBefore(COLVEC_OSOP_MAP, pFile->zPath, NULL, 0, NULL);
    rc = iFault ? osInjected(pErr, iFault, "map", pFile->zPath)
                : colvecOsSysMap(pFile, nByte, ePrefault, pMap, pErr);
    if (rc != COLVEC_OK) {
      colvecFree(pMap);
      return rc;
    }
  }
  *ppMap = pMap;
  return COLVEC_OK;
}

/*
** Gives the system advice eAdvice (COLVEC_ADVICE_*) about bytes
** [iOff, iOff+n) of the mapping, clipped to it. n<=0 is a no-op. Cheap
** enough to call once per rescoring candidate; it never allocates.
** Returns COLVEC_RANGE for a bad offset or advice, COLVEC_IOERR when the
** system refused (callers may ignore it: advice is a hint). RANDOM also
** sets pMap->bRandom.
*/
int colvecOsMapAdvise(ColvecMap *pMap, int64_t iOff, int64_t n, int eAdvice,
                      ColvecErr *pErr) {
  int rc;
  if (n <= 0 || pMap->n == 0) return COLVEC_OK;
  if (iOff < 0 || iOff >= pMap->n) {
    colvecErrSet(pErr, 0, "colvec: advice offset %lld outside mapping",
                 (long long)iOff);
    return COLVEC_RANGE;
  }
  if (eAdvice < COLVEC_ADVICE_NORMAL || eAdvice > COLVEC_ADVICE_SEQUENTIAL) {
    colvecErrSet(pErr, 0, "colvec: unknown mapping advice %d", eAdvice);
    return COLVEC_RANGE;
  }
  if (n > pMap->n - iOff) n = pMap->n - iOff;
  rc = colvecOsSysMapAdvise(pMap, iOff, n, eAdvice, pErr);
  if (rc == COLVEC_OK && eAdvice == COLVEC_ADVICE_RANDOM) pMap->bRandom = 1;
  return rc;
}

/* Probes the CPU once; see colvecOsCpuFeatures(). */
static unsigned osCpuProbe(void) {
  unsigned m = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) m |= COLVEC_CPU_AVX2;
  if (__builtin_cpu_supports("fma")) m |= COLVEC_CPU_FMA;
  if (__builtin_cpu_supports("popcnt")) m |= COLVEC_CPU_POPCNT;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl")) {
    m |= COLVEC_CPU_AVX512;
    if (__builtin_cpu_supports("avx512vpopcntdq")) m |= COLVEC_CPU_AVX512POP;
  }
#elif defined(__aarch64__)
  m |= COLVEC_CPU_NEON; /* Advanced SIMD is mandatory on AArch64 */
#endif
  return m;
}

/*
** Returns the COLVEC_CPU_* bits of the running CPU. Probed on the first
** call and cached; concurrent first calls compute the same value.
*/
unsigned colvecOsCpuFeatures(void) {
  static int mCache = 0; /* the bits | 0x4000: probed; 0: not yet */
  int m = COLVEC_ATOMIC_GET_INT(&mCache);
  if (m == 0) {
    m = (int)osCpuProbe() | 0x4000;
    COLVEC_ATOMIC_SET_INT(&mCache, m);
  }
  return (unsigned)m & 0x3fffu;
}

/*
** Starts a thread running xMain(pArg). On success *ppThread is joined and
** freed by colvecOsThreadJoin(). Returns COLVEC_ERROR (and *ppThread NULL)
** when no thread could be started, COLVEC_NOMEM on OOM: the caller then
** runs the work itself.
*/
int colvecOsThreadStart(ColvecThread **ppThread, void *(*xMain)(void *),
                        void *pArg) {
  ColvecThread *p;
  *ppThread = NULL;
  if (!colvecOsHaveThreads()) return COLVEC_ERROR;
  p = (ColvecThread *)colvecMalloc(sizeof(ColvecThread));
  if (p == NULL) return COLVEC_NOMEM;
  p->xMain = xMain;
  p->pArg = pArg;
  if (colvecOsSysThreadStart(p) != COLVEC_OK) {
    colvecFree(p);
    return COLVEC_ERROR;
  }
  *ppThread = p;
  return COLVEC_OK;
}

/* Waits for pThread to end and frees it (NULL is a no-op). */
void colvecOsThreadJoin(ColvecThread *pThread) {
  if (pThread == NULL) return;
  colvecOsSysThreadJoin(pThread);
  colvecFree(pThread);
}

#if !defined(__GNUC__) && !defined(__clang__)
/* Number of set bits in x (portable twin of __builtin_popcountll). */
int colvecOsPopcount64(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return (int)((x * 0x0101010101010101ULL) >> 56);
}

/* Index of the lowest set bit of x, which is not 0. */
int colvecOsCtz32(uint32_t x) {
  int n = 0;
  while ((x & 1) == 0) {
    x >>= 1;
    n++;
  }
  return n;
}

/* x with its bytes in reverse order. */
uint64_t colvecOsBswap64(uint64_t x) {
  uint64_t r = 0;
  int i;
  for (i = 0; i < 8; i++) {
    r = (r << 8) | (x & 0xff);
    x >>= 8;
  }
  return r;
}
#endif
