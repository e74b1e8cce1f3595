/*
** colvec_os.c — POSIX implementation of the file layer in colvec_os.h
** (Linux, macOS, the BSDs), and what every platform shares: messages, the
** test hook, sorting a listing, CPU features, portable bit operations.
** Windows is in colvec_os_win.c. See the header for the contract shared by
** every function: COLVEC_OK or an error code, and a "colvec: ..." message
** naming the file in the optional ColvecErr.
**
** Only POSIX.1-2008 is assumed (the file builds with
** -D_POSIX_C_SOURCE=200809L and no _GNU_SOURCE); everything beyond it has
** a fallback: MAP_POPULATE (Linux) and MADV_POPULATE_READ (Linux 5.14)
** fall back to MADV_WILLNEED, madvise() to posix_madvise(), O_CLOEXEC and
** O_DIRECTORY are used where defined, F_FULLFSYNC on macOS.
*/
/* realpath() is POSIX.1-2008, but glibc declares it only with the X/Open
** or default feature sets: strict POSIX builds (test/port/posix_strict.sh)
** ask for X/Open 7, which is POSIX.1-2008 plus XSI. */
#if defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) &&                     \
    !defined(_GNU_SOURCE) && !defined(_WIN32)
#define _XOPEN_SOURCE 700
#endif

#include "colvec_os.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(_WIN32)
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/*
** Segment offsets pass 2 GB: pread/pwrite need a 64-bit off_t, which 32-bit
** hosts give only with _FILE_OFFSET_BITS=64 (configure's AC_SYS_LARGEFILE).
** Without it the offsets would be truncated silently: refuse to compile.
*/
typedef char osOffTIs64Bits[sizeof(off_t) >= 8 ? 1 : -1];

#if !defined(COLVEC_OMIT_THREADS)
#include <pthread.h>
#define OS_HAVE_THREADS 1
#else
#define OS_HAVE_THREADS 0
#endif

#ifndef O_CLOEXEC
#define O_CLOEXEC 0 /* before POSIX.1-2008: descriptors may leak to exec */
#endif

/* madvise() is not POSIX: where <sys/mman.h> does not declare it (strict
** POSIX builds), posix_madvise() with the POSIX advice values. */
#if !defined(MADV_WILLNEED) && defined(POSIX_MADV_WILLNEED)
#define OS_POSIX_MADVISE 1
#define MADV_NORMAL POSIX_MADV_NORMAL
#define MADV_WILLNEED POSIX_MADV_WILLNEED
#define MADV_RANDOM POSIX_MADV_RANDOM
#define MADV_SEQUENTIAL POSIX_MADV_SEQUENTIAL
#endif
#endif /* !_WIN32 */

/* Permissions of created files and folders, before the umask. */
#define OS_FILE_MODE 0644
#define OS_DIR_MODE 0755

/* Largest number of bytes handed to one read()/write() call. */
#define OS_MAX_IO ((int64_t)1 << 30)

/*************************************************************************
** Errors.
*/

/*
** Formats a message into pErr (when not NULL) and records iErrno. When
** iErrno is non-zero, ": <strerror>" is appended. The message is cut to
** COLVEC_ERRMSG_MAX-1 bytes.
*/
void colvecErrSet(ColvecErr *pErr, int iErrno, const char *zFmt, ...) {
  va_list ap;
  int n;
  if (pErr == NULL) return;
  pErr->iErrno = iErrno;
  va_start(ap, zFmt);
  n = vsnprintf(pErr->zMsg, sizeof(pErr->zMsg), zFmt, ap);
  va_end(ap);
  if (n < 0) {
    pErr->zMsg[0] = 0;
    n = 0;
  }
  if (iErrno != 0 && n < (int)sizeof(pErr->zMsg) - 1) {
    /* a full disk is said in words, whatever strerror() calls it */
    const char *zWhat = iErrno == ENOSPC ? "the disk is full" : NULL;
#ifdef EDQUOT
    if (iErrno == EDQUOT) zWhat = "the disk is full (quota exceeded)";
#endif
    if (zWhat) {
      snprintf(pErr->zMsg + n, sizeof(pErr->zMsg) - (size_t)n, ": %s (%s)",
               zWhat, strerror(iErrno));
    } else {
      snprintf(pErr->zMsg + n, sizeof(pErr->zMsg) - (size_t)n, ": %s",
               strerror(iErrno));
    }
  }
}

/* Resets pErr (when not NULL) to "no error". */
void colvecErrClear(ColvecErr *pErr) {
  if (pErr) {
    pErr->iErrno = 0;
    pErr->zMsg[0] = 0;
  }
}

/*
** Records the current errno for operation zOp on zPath in pErr and returns
** COLVEC_IOERR, so callers can write `return osIoErr(...)`.
*/
static int osIoErr(ColvecErr *pErr, const char *zOp, const char *zPath) {
  int iErrno = errno;
  colvecErrSet(pErr, iErrno, "colvec: cannot %s \"%s\"", zOp, zPath);
  return COLVEC_IOERR;
}

/*
** Returns a copy of the n first bytes of z, NUL-terminated, from
** colvecMalloc (the caller frees it with colvecFree), or NULL on OOM.
*/
static char *osStrndup(const char *z, size_t n) {
  char *zOut = (char *)colvecMalloc((int64_t)n + 1);
  if (zOut) {
    memcpy(zOut, z, n);
    zOut[n] = 0;
  }
  return zOut;
}

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
** Fails operation zOp on zPath with the errno value iErrno chosen by the
** test hook: COLVEC_IOERR and the message a real failure would give.
*/
static int osInjected(ColvecErr *pErr, int iErrno, const char *zOp,
                      const char *zPath) {
  errno = iErrno;
  return osIoErr(pErr, zOp, zPath);
}

/* Shared with colvec_os_win.c; see colvec_os.h. */
int colvecOsHookBefore(int eOp, const char *zPath, const char *zPath2,
                       int64_t iArg, int64_t *pn) {
  return osBefore(eOp, zPath, zPath2, iArg, pn);
}

/* Shared with colvec_os_win.c; see colvec_os.h. */
void colvecOsHookAfter(int eOp, const char *zPath, const char *zPath2,
                       int64_t iArg, int64_t n) {
  osAfter(eOp, zPath, zPath2, iArg, n);
}

/* Shared with colvec_os_win.c; see colvec_os.h. */
int colvecOsErrnoErr(ColvecErr *pErr, int iErrno, const char *zOp,
                     const char *zPath) {
  return osInjected(pErr, iErrno, zOp, zPath);
}

/* Shared with colvec_os_win.c; see colvec_os.h. */
char *colvecOsStrndup(const char *z, size_t n) { return osStrndup(z, n); }

#if !defined(_WIN32)
/*************************************************************************
** Files.
*/

/*
** Checks that descriptor fd, just opened on zPath with O_NONBLOCK, is a
** regular file, and clears O_NONBLOCK again. A FIFO, folder, device or
** socket named like a colvec file is refused with COLVEC_CORRUPT ("... is
** not a regular file"): reading it could block forever or never end.
** Returns COLVEC_OK, COLVEC_CORRUPT or COLVEC_IOERR.
*/
static int osCheckRegular(int fd, const char *zPath, ColvecErr *pErr) {
  struct stat st;
  int flags;
  if (fstat(fd, &st) != 0) return osIoErr(pErr, "stat", zPath);
  if (!S_ISREG(st.st_mode)) {
    colvecErrSet(pErr, 0, "colvec: \"%s\" is not a regular file", zPath);
    return COLVEC_CORRUPT;
  }
  flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return osIoErr(pErr, "set flags of", zPath);
  }
  return COLVEC_OK;
}

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
  int oflags = O_CLOEXEC;
  int fd;
  ColvecFile *pFile;

  *ppFile = NULL;
  if ((flags & COLVEC_OPEN_READONLY) && !(flags & COLVEC_OPEN_READWRITE) &&
      !(flags & COLVEC_OPEN_CREATE)) {
    oflags |= O_RDONLY;
  } else if ((flags & COLVEC_OPEN_READWRITE) &&
             !(flags & COLVEC_OPEN_READONLY)) {
    oflags |= O_RDWR;
    if (flags & COLVEC_OPEN_CREATE) oflags |= O_CREAT | O_TRUNC;
    if (flags & COLVEC_OPEN_EXCLUSIVE) oflags |= O_EXCL;
  } else {
    colvecErrSet(pErr, 0, "colvec: bad open flags 0x%x for \"%s\"", flags,
                 zPath);
    return COLVEC_RANGE;
  }

  {
    int iFault = osBefore(COLVEC_OSOP_OPEN, zPath, NULL, flags, NULL);
    if (iFault) return osInjected(pErr, iFault, "open", zPath);
  }
  pFile = (ColvecFile *)colvecMalloc(sizeof(ColvecFile));
  if (pFile) pFile->zPath = osStrndup(zPath, strlen(zPath));
  if (pFile == NULL || pFile->zPath == NULL) {
    colvecFree(pFile);
    colvecErrSet(pErr, 0, "colvec: out of memory opening \"%s\"", zPath);
    return COLVEC_NOMEM;
  }
  /* O_NONBLOCK: opening a FIFO (or a device) must not wait for a peer */
  do {
    fd = open(zPath, oflags | O_NONBLOCK, OS_FILE_MODE);
  } while (fd < 0 && errno == EINTR);
  if (fd >= 0) {
    int rc = osCheckRegular(fd, zPath, pErr);
    if (rc != COLVEC_OK) {
      close(fd);
      colvecFree(pFile->zPath);
      colvecFree(pFile);
      return rc;
    }
  }
  if (fd < 0) {
    int rc = osIoErr(pErr, "open", zPath);
    colvecFree(pFile->zPath);
    colvecFree(pFile);
    return rc;
  }
  pFile->fd = fd;
  *ppFile = pFile;
  osAfter(COLVEC_OSOP_OPEN, zPath, NULL, flags, 0);
  return COLVEC_OK;
}

/*
** Closes pFile and frees it (NULL is a no-op). Returns COLVEC_IOERR when
** close() reports an error (the object is freed all the same).
*/
int colvecOsClose(ColvecFile *pFile, ColvecErr *pErr) {
  int rc = COLVEC_OK;
  int iFault;
  if (pFile == NULL) return COLVEC_OK;
  iFault = osBefore(COLVEC_OSOP_CLOSE, pFile->zPath, NULL, 0, NULL);
  /* Never retry close() on EINTR: the descriptor is gone on Linux. */
  if (close(pFile->fd) != 0 && errno != EINTR) {
    rc = osIoErr(pErr, "close", pFile->zPath);
  } else if (iFault) {
    rc = osInjected(pErr, iFault, "close", pFile->zPath); /* closed anyway */
  } else {
    osAfter(COLVEC_OSOP_CLOSE, pFile->zPath, NULL, 0, 0);
  }
  colvecFree(pFile->zPath);
  colvecFree(pFile);
  return rc;
}

/*
** Reads exactly n bytes at offset iOff into pBuf, looping over short reads
** and EINTR. Reaching the end of the file first is an error (COLVEC_IOERR,
** "short read"), as is a negative n or iOff (COLVEC_RANGE).
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
    size_t nTry = (size_t)(n < OS_MAX_IO ? n : OS_MAX_IO);
    ssize_t nGot = pread(pFile->fd, p, nTry, (off_t)iOff);
    if (nGot < 0) {
      if (errno == EINTR) continue;
      return osIoErr(pErr, "read", pFile->zPath);
    }
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
** writes and EINTR. Returns COLVEC_IOERR on failure (disk full included).
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
    size_t nTry = (size_t)(n < OS_MAX_IO ? n : OS_MAX_IO);
    ssize_t nPut = pwrite(pFile->fd, p, nTry, (off_t)iOff);
    if (nPut < 0) {
      if (errno == EINTR) continue;
      return osIoErr(pErr, "write", pFile->zPath);
    }
    if (nPut == 0) {
      errno = ENOSPC;
      return osIoErr(pErr, "write", pFile->zPath);
    }
    p += nPut;
    n -= nPut;
    iOff += nPut;
  }
  if (iFault) return osInjected(pErr, iFault, "write", pFile->zPath);
  osAfter(COLVEC_OSOP_WRITE, pFile->zPath, NULL, iOff0, nAll);
  return COLVEC_OK;
}

/*
** Flushes the file descriptor fd to stable storage: F_FULLFSYNC on macOS
** (plain fsync there only reaches the drive's cache), fsync elsewhere.
** Returns 0 or -1 with errno set.
*/
static int osFsync(int fd) {
  int r;
#if defined(__APPLE__) && defined(F_FULLFSYNC)
  if (fcntl(fd, F_FULLFSYNC) == 0) return 0;
#endif
  do {
    r = fsync(fd);
  } while (r != 0 && errno == EINTR);
  return r;
}

/* Makes the contents of pFile durable. COLVEC_IOERR on failure. */
int colvecOsSync(ColvecFile *pFile, ColvecErr *pErr) {
  int iFault;
  iFault = osBefore(COLVEC_OSOP_SYNC, pFile->zPath, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "fsync", pFile->zPath);
  if (osFsync(pFile->fd) != 0) return osIoErr(pErr, "fsync", pFile->zPath);
  osAfter(COLVEC_OSOP_SYNC, pFile->zPath, NULL, 0, 0);
  return COLVEC_OK;
}

/* Stores the current size of pFile in bytes in *pnByte. */
int colvecOsFileSize(ColvecFile *pFile, int64_t *pnByte, ColvecErr *pErr) {
  return colvecOsFileStat(pFile, pnByte, NULL, pErr);
}

/* Nanoseconds since 1970 of a stat time (seconds, nanoseconds). */
#define OS_NS(sec, nsec) ((int64_t)(sec)*1000000000 + (int64_t)(nsec))

/* Size and identity of pFile; see colvec_os.h. */
int colvecOsFileStat(ColvecFile *pFile, int64_t *pnByte, ColvecFileId *pId,
                     ColvecErr *pErr) {
  struct stat st;
  int iFault;
  if (pId) memset(pId, 0, sizeof(*pId));
  iFault = osBefore(COLVEC_OSOP_SIZE, pFile->zPath, NULL, 0, NULL);
  *pnByte = 0;
  if (iFault) return osInjected(pErr, iFault, "stat", pFile->zPath);
  if (fstat(pFile->fd, &st) != 0) return osIoErr(pErr, "stat", pFile->zPath);
  *pnByte = (int64_t)st.st_size;
  if (pId) {
    pId->iDev = (uint64_t)st.st_dev;
    pId->iIno = (uint64_t)st.st_ino;
    pId->nSize = (int64_t)st.st_size;
#if defined(__APPLE__)
    pId->iMtimeNs = OS_NS(st.st_mtimespec.tv_sec, st.st_mtimespec.tv_nsec);
    pId->iCtimeNs = OS_NS(st.st_ctimespec.tv_sec, st.st_ctimespec.tv_nsec);
#else
    pId->iMtimeNs = OS_NS(st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    pId->iCtimeNs = OS_NS(st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
#endif
    pId->bValid = 1;
  }
  return COLVEC_OK;
}

/*************************************************************************
** Paths and folders.
*/

/*
** Makes the entries of folder zDir durable (after a create, rename or
** unlink in it). COLVEC_IOERR on failure.
*/
int colvecOsSyncDir(const char *zDir, ColvecErr *pErr) {
  int fd, rc = COLVEC_OK;
  int iFault;
  iFault = osBefore(COLVEC_OSOP_SYNCDIR, zDir, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "fsync folder", zDir);
  do {
    fd = open(zDir, O_RDONLY | O_CLOEXEC
#ifdef O_DIRECTORY
                        | O_DIRECTORY
#endif
    );
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return osIoErr(pErr, "open folder", zDir);
  if (osFsync(fd) != 0) rc = osIoErr(pErr, "fsync folder", zDir);
  close(fd);
  if (rc == COLVEC_OK) osAfter(COLVEC_OSOP_SYNCDIR, zDir, NULL, 0, 0);
  return rc;
}

/*
** Makes durable the folder that holds zPath ("." when zPath has no '/').
*/
int colvecOsSyncParent(const char *zPath, ColvecErr *pErr) {
  const char *zSlash = strrchr(zPath, '/');
  char *zDir;
  int rc;
  if (zSlash == NULL) return colvecOsSyncDir(".", pErr);
  if (zSlash == zPath) return colvecOsSyncDir("/", pErr);
  zDir = osStrndup(zPath, (size_t)(zSlash - zPath));
  if (zDir == NULL) {
    colvecErrSet(pErr, 0, "colvec: out of memory syncing \"%s\"", zPath);
    return COLVEC_NOMEM;
  }
  rc = colvecOsSyncDir(zDir, pErr);
  colvecFree(zDir);
  return rc;
}

/* Renames zFrom to zTo, atomically replacing zTo if it exists. */
int colvecOsRename(const char *zFrom, const char *zTo, ColvecErr *pErr) {
  int iFault;
  iFault = osBefore(COLVEC_OSOP_RENAME, zFrom, zTo, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "rename", zFrom);
  if (rename(zFrom, zTo) != 0) return osIoErr(pErr, "rename", zFrom);
  osAfter(COLVEC_OSOP_RENAME, zFrom, zTo, 0, 0);
  return COLVEC_OK;
}

/*
** Returns the absolute path of existing zPath with every symbolic link,
** "." and ".." resolved (colvecMalloc'd, colvecFree it), or NULL when it
** cannot be resolved or out of memory. A memory path is returned as is.
*/
char *colvecOsRealPath(const char *zPath) {
  char *zReal, *zOut;
  zReal = realpath(zPath, NULL);
  if (zReal == NULL) return NULL;
  zOut = osStrndup(zReal, strlen(zReal));
  free(zReal);
  return zOut;
}

/*
** Renames zFrom to zTo, which must not exist: never replaces a file. A
** hard link makes the new name atomically (EEXIST when it is taken), then
** the old name goes; on a file system without hard links the target is
** checked first (the caller holds the table's write lock, so nobody else
** of colvec writes there meanwhile). An existing target is COLVEC_IOERR
** with errno EEXIST; zFrom then stays.
*/
int colvecOsRenameNew(const char *zFrom, const char *zTo, ColvecErr *pErr) {
  int iFault;
  iFault = osBefore(COLVEC_OSOP_RENAME, zFrom, zTo, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "rename", zFrom);
  if (link(zFrom, zTo) == 0) {
    /* a leftover zFrom is a ".seg.tmp" file, removed by cleanup */
    (void)unlink(zFrom);
  } else if (errno == EEXIST) {
    return osIoErr(pErr, "rename (the new name exists)", zTo);
  } else if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP ||
             errno == ENOSYS || errno == EXDEV || errno == EMLINK) {
    struct stat st;
    if (lstat(zTo, &st) == 0) {
      errno = EEXIST;
      return osIoErr(pErr, "rename (the new name exists)", zTo);
    }
    if (rename(zFrom, zTo) != 0) return osIoErr(pErr, "rename", zFrom);
  } else {
    return osIoErr(pErr, "rename", zFrom);
  }
  osAfter(COLVEC_OSOP_RENAME, zFrom, zTo, 0, 0);
  return COLVEC_OK;
}

/*
** Removes file zPath. A file that does not exist is not an error, so that
** orphan cleanup can be repeated after a crash.
*/
int colvecOsUnlink(const char *zPath, ColvecErr *pErr) {
  int iFault;
  iFault = osBefore(COLVEC_OSOP_UNLINK, zPath, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "remove", zPath);
  if (unlink(zPath) != 0) {
    if (errno != ENOENT) return osIoErr(pErr, "remove", zPath);
  } else {
    osAfter(COLVEC_OSOP_UNLINK, zPath, NULL, 0, 0);
  }
  return COLVEC_OK;
}

/* Returns 1 when something (file, folder, link) exists at zPath, else 0. */
int colvecOsExists(const char *zPath) {
  struct stat st;
  return lstat(zPath, &st) == 0;
}

/*
** Says what is at zPath without following a symbolic link:
** COLVEC_OS_NONE (nothing), COLVEC_OS_DIR (a real folder) or
** COLVEC_OS_OTHER (a file, a symbolic link, anything else, or an error).
*/
int colvecOsKind(const char *zPath) {
  struct stat st;
  if (lstat(zPath, &st) != 0) {
    return errno == ENOENT ? COLVEC_OS_NONE : COLVEC_OS_OTHER;
  }
  return S_ISDIR(st.st_mode) ? COLVEC_OS_DIR : COLVEC_OS_OTHER;
}

/*
** Creates the one folder zDir (its parent must exist). Returns COLVEC_OK,
** COLVEC_ERROR without a message when something already exists at zDir
** (so that a caller choosing a fresh name can try another), or
** COLVEC_IOERR.
*/
int colvecOsMkdir(const char *zDir, ColvecErr *pErr) {
  int iFault;
  iFault = osBefore(COLVEC_OSOP_MKDIR, zDir, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "create folder", zDir);
  if (mkdir(zDir, OS_DIR_MODE) == 0) {
    osAfter(COLVEC_OSOP_MKDIR, zDir, NULL, 0, 0);
    return COLVEC_OK;
  }
  if (errno == EEXIST) return COLVEC_ERROR;
  return osIoErr(pErr, "create folder", zDir);
}

/*
** Removes folder zDir if it is empty (never its contents). Returns
** COLVEC_OK when it is gone (or was not there), else COLVEC_IOERR.
*/
int colvecOsRmdir(const char *zDir, ColvecErr *pErr) {
  int iFault;
  iFault = osBefore(COLVEC_OSOP_RMDIR, zDir, NULL, 0, NULL);
  if (iFault) return osInjected(pErr, iFault, "remove folder", zDir);
  if (rmdir(zDir) != 0) {
    if (errno != ENOENT) return osIoErr(pErr, "remove folder", zDir);
  } else {
    osAfter(COLVEC_OSOP_RMDIR, zDir, NULL, 0, 0);
  }
  return COLVEC_OK;
}

/*
** Creates folder zDir and, where they are missing, up to nUp of the
** folders above it (a table's folder and its "<db>-colvec" folder: 1).
** The folder above those must exist: nothing further up is ever made, so
** a removed database folder is not made again (COLVEC_IOERR, ENOENT, with
** a message that says so). An existing folder, or a link to one, is fine;
** an existing non-folder is COLVEC_IOERR (ENOTDIR).
*/
int colvecOsMkdirUp(const char *zDir, int nUp, ColvecErr *pErr) {
  size_t n = strlen(zDir), i;
  char *zBuf;
  int rc = COLVEC_OK, nSkip = 0, bTop = 1;
  struct stat st;

  if (n == 0) {
    colvecErrSet(pErr, 0, "colvec: empty folder name");
    return COLVEC_RANGE;
  }
  {
    int iFault = osBefore(COLVEC_OSOP_MKDIR, zDir, NULL, 0, NULL);
    if (iFault) return osInjected(pErr, iFault, "create folder", zDir);
  }
  zBuf = osStrndup(zDir, n);
  if (zBuf == NULL) {
    colvecErrSet(pErr, 0, "colvec: out of memory creating \"%s\"", zDir);
    return COLVEC_NOMEM;
  }
  /* The prefixes that end just before a '/', then the whole path: only
  ** the last nUp + 1 of them are visited, from the top. */
  for (i = 1; i < n; i++) {
    if (zBuf[i] == '/' && zBuf[i - 1] != '/') nSkip++;
  }
  nSkip -= nUp;
  for (i = 1; i <= n && rc == COLVEC_OK; i++) {
    if (i < n && zBuf[i] != '/') continue;
    if (i < n && zBuf[i - 1] == '/') continue; /* "//" */
    if (i < n && nSkip-- > 0) continue;
    zBuf[i] = 0;
    if (mkdir(zBuf, OS_DIR_MODE) == 0) {
      osAfter(COLVEC_OSOP_MKDIR, zBuf, NULL, 0, 0);
    } else if (errno == ENOENT && bTop) {
      colvecErrSet(pErr, ENOENT,
                   "colvec: cannot create folder \"%s\": the folder it "
                   "goes in does not exist (colvec does not create it)",
                   zBuf);
      rc = COLVEC_IOERR;
    } else if (errno != EEXIST) {
      rc = osIoErr(pErr, "create folder", zBuf);
    } else if (stat(zBuf, &st) != 0) {
      rc = osIoErr(pErr, "stat", zBuf);
    } else if (!S_ISDIR(st.st_mode)) {
      errno = ENOTDIR;
      rc = osIoErr(pErr, "create folder", zBuf);
    }
    bTop = 0;
    if (i < n) zBuf[i] = '/';
  }
  colvecFree(zBuf);
  return rc;
}

#endif /* !_WIN32 */

/* qsort() comparison of two char* by strcmp. */
static int osCompareNames(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts the nName strings of azName by strcmp (a deterministic listing). */
void colvecOsSortNames(char **azName, int nName) {
  if (nName > 1) qsort(azName, (size_t)nName, sizeof(char *), osCompareNames);
}

/* Starts an empty listing of names ending in zSuffix (all: NULL or ""). */
void colvecOsListInit(ColvecOsList *pList, const char *zSuffix) {
  memset(pList, 0, sizeof(*pList));
  pList->zSuffix = zSuffix;
  pList->nSuffix = zSuffix ? strlen(zSuffix) : 0;
}

/*
** Adds a copy of the nLen bytes of zName to pList, unless the name is "."
** or ".." or does not end in the list's suffix. COLVEC_OK, or COLVEC_NOMEM
** (the list keeps what it had).
*/
int colvecOsListAdd(ColvecOsList *pList, const char *zName, size_t nLen) {
  size_t nSuffix = pList->nSuffix;
  if ((nLen == 1 && zName[0] == '.') ||
      (nLen == 2 && zName[0] == '.' && zName[1] == '.')) {
    return COLVEC_OK;
  }
  if (nSuffix > 0 && (nLen < nSuffix || memcmp(zName + nLen - nSuffix,
                                               pList->zSuffix, nSuffix) != 0)) {
    return COLVEC_OK;
  }
  if (pList->nName == pList->nAlloc) {
    int nNew = pList->nAlloc ? pList->nAlloc * 2 : 16;
    char **aNew = (char **)colvecRealloc(
        pList->azName, (int64_t)nNew * (int64_t)sizeof(char *));
    if (aNew == NULL) return COLVEC_NOMEM;
    pList->azName = aNew;
    pList->nAlloc = nNew;
  }
  pList->azName[pList->nName] = colvecOsStrndup(zName, nLen);
  if (pList->azName[pList->nName] == NULL) return COLVEC_NOMEM;
  pList->nName++;
  return COLVEC_OK;
}

/*
** Ends the listing of zDir whose result so far is rc: on COLVEC_OK the
** names, sorted, go to *pazName and *pnName; otherwise they are freed, a
** COLVEC_NOMEM gets its message in pErr, and rc is returned.
*/
int colvecOsListFinish(ColvecOsList *pList, int rc, const char *zDir,
                       ColvecErr *pErr, char ***pazName, int *pnName) {
  if (rc == COLVEC_NOMEM) {
    colvecErrSet(pErr, 0, "colvec: out of memory listing \"%s\"", zDir);
  }
  if (rc != COLVEC_OK) {
    colvecOsListFree(pList->azName, pList->nName);
    memset(pList, 0, sizeof(*pList));
    return rc;
  }
  colvecOsSortNames(pList->azName, pList->nName);
  *pazName = pList->azName;
  *pnName = pList->nName;
  return COLVEC_OK;
}

#if !defined(_WIN32)

/*
** Lists the names (not paths) in folder zDir that end in zSuffix (all of
** them when zSuffix is NULL or ""), "." and ".." excluded, sorted by
** strcmp so the result is deterministic. On success *pazName is an array of
** *pnName strings that the caller frees with colvecOsListFree() (NULL when
** there are none). On error both are zeroed.
*/
int colvecOsListDir(const char *zDir, const char *zSuffix, char ***pazName,
                    int *pnName, ColvecErr *pErr) {
  DIR *pDir;
  struct dirent *pEnt;
  ColvecOsList list;
  int rc = COLVEC_OK;

  *pazName = NULL;
  *pnName = 0;
  {
    int iFault = osBefore(COLVEC_OSOP_LISTDIR, zDir, NULL, 0, NULL);
    if (iFault) return osInjected(pErr, iFault, "list folder", zDir);
  }
  pDir = opendir(zDir);
  if (pDir == NULL) return osIoErr(pErr, "list folder", zDir);
  colvecOsListInit(&list, zSuffix);
  while (rc == COLVEC_OK) {
    errno = 0;
    pEnt = readdir(pDir);
    if (pEnt == NULL) {
      if (errno != 0) rc = osIoErr(pErr, "list folder", zDir);
      break;
    }
    rc = colvecOsListAdd(&list, pEnt->d_name, strlen(pEnt->d_name));
  }
  closedir(pDir);
  return colvecOsListFinish(&list, rc, zDir, pErr, pazName, pnName);
}

#endif /* !_WIN32 */

/* Frees a list returned by colvecOsListDir() (NULL is a no-op). */
void colvecOsListFree(char **azName, int nName) {
  int i;
  if (azName == NULL) return;
  for (i = 0; i < nName; i++)
    colvecFree(azName[i]);
  colvecFree(azName);
}

#if !defined(_WIN32)

/*
** Removes zDir and everything below it (DROP TABLE). Symbolic links are
** removed, never followed. A zDir that does not exist is not an error.
** Stops at the first failure and returns COLVEC_IOERR.
*/
int colvecOsRemoveTree(const char *zDir, ColvecErr *pErr) {
  struct stat st;
  char **azName = NULL;
  int nName = 0, i, rc;

  if (lstat(zDir, &st) != 0) {
    if (errno == ENOENT) return COLVEC_OK;
    return osIoErr(pErr, "stat", zDir);
  }
  if (!S_ISDIR(st.st_mode)) return colvecOsUnlink(zDir, pErr);

  rc = colvecOsListDir(zDir, NULL, &azName, &nName, pErr);
  for (i = 0; i < nName && rc == COLVEC_OK; i++) {
    size_t nPath = strlen(zDir) + strlen(azName[i]) + 2;
    char *zPath = (char *)colvecMalloc((int64_t)nPath);
    if (zPath == NULL) {
      colvecErrSet(pErr, 0, "colvec: out of memory removing \"%s\"", zDir);
      rc = COLVEC_NOMEM;
      break;
    }
    snprintf(zPath, nPath, "%s/%s", zDir, azName[i]);
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
** Gives advice adv (MADV_*) on n bytes at page-aligned p: madvise(), or
** posix_madvise() where madvise() is not declared. Returns 0, or -1 with
** errno set.
*/
static int osMadvise(void *p, size_t n, int adv) {
#if defined(OS_POSIX_MADVISE)
  int e = posix_madvise(p, n, adv);
  if (e != 0) errno = e;
  return e == 0 ? 0 : -1;
#else
  return madvise(p, n, adv);
#endif
}

/*
** The system page size (4 KB on x86-64; 4, 16 or 64 KB on aarch64 kernels),
** looked up once (a benign race: every thread stores the same value).
*/
int64_t colvecOsPageSize(void) {
  static int64_t nPage = 0;
  if (nPage == 0) {
    long n = sysconf(_SC_PAGESIZE);
    nPage = n > 0 ? (int64_t)n : 4096;
  }
  return nPage;
}

/*
** Maps the first nByte bytes of pFile (normally its whole size) read-only
** and shared, then applies ePrefault (COLVEC_PREFAULT_*): POPULATE uses
** MAP_POPULATE on Linux and MADV_WILLNEED elsewhere; WILLNEED asks for
** asynchronous readahead. A failing prefault hint is ignored. On success
** *ppMap is released with colvecOsMapClose(), which may happen after pFile
** is closed. nByte==0 gives a mapping with a==NULL. On error *ppMap is NULL.
*/
int colvecOsMapOpen(ColvecFile *pFile, int64_t nByte, int ePrefault,
                    ColvecMap **ppMap, ColvecErr *pErr) {
  ColvecMap *pMap;
  void *p = NULL;
  int mflags = MAP_SHARED;

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
  if (nByte > 0) {
    int iFault = osBefore(COLVEC_OSOP_MAP, pFile->zPath, NULL, 0, NULL);
    if (iFault) {
      colvecFree(pMap);
      return osInjected(pErr, iFault, "map", pFile->zPath);
    }
#if defined(MAP_POPULATE)
    if (ePrefault == COLVEC_PREFAULT_POPULATE) mflags |= MAP_POPULATE;
#endif
    p = mmap(NULL, (size_t)nByte, PROT_READ, mflags, pFile->fd, 0);
    if (p == MAP_FAILED) {
      int rc = osIoErr(pErr, "map", pFile->zPath);
      colvecFree(pMap);
      return rc;
    }
#if !defined(MAP_POPULATE)
    if (ePrefault == COLVEC_PREFAULT_POPULATE)
      ePrefault = COLVEC_PREFAULT_WILLNEED;
#endif
    if (ePrefault == COLVEC_PREFAULT_WILLNEED) {
      (void)osMadvise(p, (size_t)nByte, MADV_WILLNEED);
    }
  }
  pMap->a = (const uint8_t *)p;
  pMap->n = nByte;
  pMap->bRandom = 0;
  *ppMap = pMap;
  return COLVEC_OK;
}

/*
** Gives the kernel advice eAdvice (COLVEC_ADVICE_*) about bytes
** [iOff, iOff+n) of the mapping; the range is widened to whole pages and
** clipped to the mapping. n<=0 is a no-op. Cheap enough to call once per
** rescoring candidate; it never allocates. Returns COLVEC_RANGE for a bad
** offset or advice, COLVEC_IOERR when madvise() fails (callers may ignore
** it: advice is a hint).
*/
int colvecOsMapAdvise(ColvecMap *pMap, int64_t iOff, int64_t n, int eAdvice,
                      ColvecErr *pErr) {
  int64_t nPage = colvecOsPageSize(), iStart, iEnd;
  int adv;
  if (n <= 0 || pMap->n == 0) return COLVEC_OK;
  if (iOff < 0 || iOff >= pMap->n) {
    colvecErrSet(pErr, 0, "colvec: advice offset %lld outside mapping",
                 (long long)iOff);
    return COLVEC_RANGE;
  }
  switch (eAdvice) {
  case COLVEC_ADVICE_NORMAL:
    adv = MADV_NORMAL;
    break;
  case COLVEC_ADVICE_WILLNEED:
    adv = MADV_WILLNEED;
    break;
  case COLVEC_ADVICE_RANDOM:
    adv = MADV_RANDOM;
    break;
  case COLVEC_ADVICE_SEQUENTIAL:
    adv = MADV_SEQUENTIAL;
    break;
  default:
    colvecErrSet(pErr, 0, "colvec: unknown mapping advice %d", eAdvice);
    return COLVEC_RANGE;
  }
  iStart = iOff - iOff % nPage;
  iEnd = (n > pMap->n - iOff) ? pMap->n : iOff + n;
  if (osMadvise((void *)(pMap->a + iStart), (size_t)(iEnd - iStart), adv) !=
      0) {
    int iErrno = errno;
    colvecErrSet(pErr, iErrno, "colvec: madvise failed");
    return COLVEC_IOERR;
  }
  if (eAdvice == COLVEC_ADVICE_RANDOM) pMap->bRandom = 1;
  return COLVEC_OK;
}

/* Unmaps and frees pMap (NULL is a no-op). */
void colvecOsMapClose(ColvecMap *pMap) {
  if (pMap == NULL) return;
  if (pMap->a) munmap((void *)pMap->a, (size_t)pMap->n);
  colvecFree(pMap);
}

/*************************************************************************
** Platform services.
*/

#if defined(__linux__) && !defined(MADV_POPULATE_READ)
#define MADV_POPULATE_READ 22 /* Linux 5.14: fault pages in, read-only */
#endif

#endif /* !_WIN32 */

/*
** Returns the last component of zPath (after the last separator: '/', and
** on Windows '' too).
*/
const char *colvecOsBaseName(const char *zPath) {
  const char *z = strrchr(zPath, '/');
#if defined(_WIN32)
  const char *zBack = strrchr(zPath, '\\');
  if (zBack && (z == NULL || zBack > z)) z = zBack;
#endif
  return z ? z + 1 : zPath;
}

#if !defined(_WIN32)

/* Microseconds on a monotonic clock (never goes back; origin unspecified). */
double colvecOsMicros(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Wall-clock time in nanoseconds since 1970 (the clock of file times). */
int64_t colvecOsWallNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return OS_NS(ts.tv_sec, ts.tv_nsec);
}

/* Number of online processors (at least 1). */
int colvecOsCpuCount(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (n > 1024 ? 1024 : (int)n);
}

/* Advice on any range of a mapping; see colvec_os.h. */
void colvecOsAdvise(const void *p, int64_t n, int eAdvice) {
  uintptr_t nPage = (uintptr_t)colvecOsPageSize();
  uintptr_t iStart = (uintptr_t)p & ~(nPage - 1);
  size_t nLen;
  if (n <= 0) return;
  nLen = (size_t)((uintptr_t)p + (uintptr_t)n - iStart);
  switch (eAdvice) {
  case COLVEC_ADVICE_POPULATE:
#if defined(__linux__) && !defined(OS_POSIX_MADVISE)
    if (madvise((void *)iStart, nLen, MADV_POPULATE_READ) == 0) break;
#endif
    (void)osMadvise((void *)iStart, nLen, MADV_WILLNEED);
    break;
  case COLVEC_ADVICE_WILLNEED:
    (void)osMadvise((void *)iStart, nLen, MADV_WILLNEED);
    break;
  case COLVEC_ADVICE_RANDOM:
    (void)osMadvise((void *)iStart, nLen, MADV_RANDOM);
    break;
  case COLVEC_ADVICE_SEQUENTIAL:
    (void)osMadvise((void *)iStart, nLen, MADV_SEQUENTIAL);
    break;
  default:
    (void)osMadvise((void *)iStart, nLen, MADV_NORMAL);
    break;
  }
}

#endif /* !_WIN32 */

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

#if !defined(_WIN32)
/* A started thread (colvecOsThreadStart). */
struct ColvecThread {
#if OS_HAVE_THREADS
  pthread_t tid; /* the POSIX thread */
#else
  int iUnused; /* no threads in this build */
#endif
};

/* Non-zero when this build can start threads. */
int colvecOsHaveThreads(void) { return OS_HAVE_THREADS; }

/*
** Starts a thread running xMain(pArg). On success *ppThread is joined and
** freed by colvecOsThreadJoin(). Returns COLVEC_ERROR (and *ppThread NULL)
** when no thread could be started, COLVEC_NOMEM on OOM: the caller then
** runs the work itself.
*/
int colvecOsThreadStart(ColvecThread **ppThread, void *(*xMain)(void *),
                        void *pArg) {
  *ppThread = NULL;
#if OS_HAVE_THREADS
  {
    ColvecThread *p = (ColvecThread *)colvecMalloc(sizeof(ColvecThread));
    if (p == NULL) return COLVEC_NOMEM;
    if (pthread_create(&p->tid, NULL, xMain, pArg) != 0) {
      colvecFree(p);
      return COLVEC_ERROR;
    }
    *ppThread = p;
    return COLVEC_OK;
  }
#else
  (void)xMain;
  (void)pArg;
  return COLVEC_ERROR;
#endif
}

/* Waits for pThread to end and frees it (NULL is a no-op). */
void colvecOsThreadJoin(ColvecThread *pThread) {
  if (pThread == NULL) return;
#if OS_HAVE_THREADS
  pthread_join(pThread->tid, NULL);
#endif
  colvecFree(pThread);
}

#endif /* !_WIN32 */

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
