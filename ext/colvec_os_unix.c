/*
** colvec_os_unix.c — the POSIX system calls under the file layer
** (colvec_os_sys.h) and the POSIX platform services of colvec_os.h
** (clocks, processor count, mapping advice, threads): Linux, macOS, the
** BSDs. Windows is colvec_os_win.c; what every platform shares is
** colvec_os.c.
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

#include "colvec_os_sys.h"

#if !defined(_WIN32)

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
/* Permissions of created files and folders, before the umask. */
#define OS_FILE_MODE 0644
#define OS_DIR_MODE 0755

/* Nanoseconds since 1970 of a stat time (seconds, nanoseconds). */
#define OS_NS(sec, nsec) ((int64_t)(sec)*1000000000 + (int64_t)(nsec))

/*
** Records the current errno for operation zOp on zPath in pErr and returns
** COLVEC_IOERR.
*/
static int osUnixErr(ColvecErr *pErr, const char *zOp, const char *zPath) {
  return colvecOsErrnoErr(pErr, errno, zOp, zPath);
}

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
  if (fstat(fd, &st) != 0) return osUnixErr(pErr, "stat", zPath);
  if (!S_ISREG(st.st_mode)) {
    colvecErrSet(pErr, 0, "colvec: \"%s\" is not a regular file", zPath);
    return COLVEC_CORRUPT;
  }
  flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return osUnixErr(pErr, "set flags of", zPath);
  }
  return COLVEC_OK;
}

/* Opens pFile->zPath; see colvec_os_sys.h. */
int colvecOsSysOpen(ColvecFile *pFile, int flags, ColvecErr *pErr) {
  int oflags = O_CLOEXEC, fd, rc;
  if (flags & COLVEC_OPEN_READWRITE) {
    oflags |= O_RDWR;
    if (flags & COLVEC_OPEN_CREATE) oflags |= O_CREAT | O_TRUNC;
    if (flags & COLVEC_OPEN_EXCLUSIVE) oflags |= O_EXCL;
  } else {
    oflags |= O_RDONLY;
  }
  /* O_NONBLOCK: opening a FIFO (or a device) must not wait for a peer */
  do {
    fd = open(pFile->zPath, oflags | O_NONBLOCK, OS_FILE_MODE);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return osUnixErr(pErr, "open", pFile->zPath);
  rc = osCheckRegular(fd, pFile->zPath, pErr);
  if (rc != COLVEC_OK) {
    close(fd);
    return rc;
  }
  pFile->fd = fd;
  return COLVEC_OK;
}

/* Closes pFile's descriptor; see colvec_os_sys.h. */
int colvecOsSysClose(ColvecFile *pFile, ColvecErr *pErr) {
  /* Never retry close() on EINTR: the descriptor is gone on Linux. */
  if (close(pFile->fd) != 0 && errno != EINTR) {
    return osUnixErr(pErr, "close", pFile->zPath);
  }
  return COLVEC_OK;
}

/* One pread(); see colvec_os_sys.h. */
int colvecOsSysRead(ColvecFile *pFile, void *p, int64_t n, int64_t iOff,
                    int64_t *pnGot, ColvecErr *pErr) {
  ssize_t nGot;
  do {
    nGot = pread(pFile->fd, p, (size_t)n, (off_t)iOff);
  } while (nGot < 0 && errno == EINTR);
  if (nGot < 0) return osUnixErr(pErr, "read", pFile->zPath);
  *pnGot = (int64_t)nGot;
  return COLVEC_OK;
}

/* One pwrite(); see colvec_os_sys.h. */
int colvecOsSysWrite(ColvecFile *pFile, const void *p, int64_t n, int64_t iOff,
                     int64_t *pnPut, ColvecErr *pErr) {
  ssize_t nPut;
  do {
    nPut = pwrite(pFile->fd, p, (size_t)n, (off_t)iOff);
  } while (nPut < 0 && errno == EINTR);
  if (nPut < 0) return osUnixErr(pErr, "write", pFile->zPath);
  *pnPut = (int64_t)nPut;
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

/* fsync (F_FULLFSYNC on macOS); see colvec_os_sys.h. */
int colvecOsSysSync(ColvecFile *pFile, ColvecErr *pErr) {
  if (osFsync(pFile->fd) != 0) return osUnixErr(pErr, "fsync", pFile->zPath);
  return COLVEC_OK;
}

/* fstat(); see colvec_os_sys.h. */
int colvecOsSysFileStat(ColvecFile *pFile, int64_t *pnByte, ColvecFileId *pId,
                        ColvecErr *pErr) {
  struct stat st;
  if (fstat(pFile->fd, &st) != 0) return osUnixErr(pErr, "stat", pFile->zPath);
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

/* Opens folder zDir and fsyncs it; see colvec_os_sys.h. */
int colvecOsSysSyncDir(const char *zDir, ColvecErr *pErr) {
  int fd, rc = COLVEC_OK;
  do {
    fd = open(zDir, O_RDONLY | O_CLOEXEC
#ifdef O_DIRECTORY
                        | O_DIRECTORY
#endif
    );
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return osUnixErr(pErr, "open folder", zDir);
  if (osFsync(fd) != 0) rc = osUnixErr(pErr, "fsync folder", zDir);
  close(fd);
  return rc;
}

/*
** rename(), or for !bReplace a hard link that makes the new name
** atomically (EEXIST when it is taken), then the old name goes; on a file
** system without hard links the target is checked first (the caller holds
** the table's write lock, so nobody else of colvec writes there
** meanwhile). See colvec_os_sys.h.
*/
int colvecOsSysRename(const char *zFrom, const char *zTo, int bReplace,
                      ColvecErr *pErr) {
  if (bReplace) {
    if (rename(zFrom, zTo) != 0) return osUnixErr(pErr, "rename", zFrom);
  } else if (link(zFrom, zTo) == 0) {
    /* a leftover zFrom is a ".seg.tmp" file, removed by cleanup */
    (void)unlink(zFrom);
  } else if (errno == EEXIST) {
    return osUnixErr(pErr, "rename (the new name exists)", zTo);
  } else if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP ||
             errno == ENOSYS || errno == EXDEV || errno == EMLINK) {
    struct stat st;
    if (lstat(zTo, &st) == 0) {
      errno = EEXIST;
      return osUnixErr(pErr, "rename (the new name exists)", zTo);
    }
    if (rename(zFrom, zTo) != 0) return osUnixErr(pErr, "rename", zFrom);
  } else {
    return osUnixErr(pErr, "rename", zFrom);
  }
  return COLVEC_OK;
}

/* unlink(); see colvec_os_sys.h. */
int colvecOsSysUnlink(const char *zPath, ColvecErr *pErr) {
  if (unlink(zPath) == 0) return COLVEC_OK;
  if (errno == ENOENT) return COLVEC_ERROR;
  return osUnixErr(pErr, "remove", zPath);
}

/* mkdir(); see colvec_os_sys.h. */
int colvecOsSysMkdir(const char *zDir, ColvecErr *pErr) {
  if (mkdir(zDir, OS_DIR_MODE) == 0) return COLVEC_OK;
  if (errno == EEXIST) return COLVEC_ERROR;
  return osUnixErr(pErr, "create folder", zDir);
}

/* rmdir(); see colvec_os_sys.h. */
int colvecOsSysRmdir(const char *zDir, ColvecErr *pErr) {
  if (rmdir(zDir) == 0) return COLVEC_OK;
  if (errno == ENOENT) return COLVEC_ERROR;
  return osUnixErr(pErr, "remove folder", zDir);
}

/* lstat(): a symbolic link is COLVEC_OS_OTHER; see colvec_os_sys.h. */
int colvecOsSysKind(const char *zPath, ColvecErr *pErr) {
  struct stat st;
  if (lstat(zPath, &st) != 0) {
    if (errno == ENOENT) return COLVEC_OS_NONE;
    return -osUnixErr(pErr, "stat", zPath);
  }
  return S_ISDIR(st.st_mode) ? COLVEC_OS_DIR : COLVEC_OS_OTHER;
}

/* stat(); see colvec_os_sys.h. */
int colvecOsSysIsDir(const char *zPath, ColvecErr *pErr) {
  struct stat st;
  if (stat(zPath, &st) != 0) return -osUnixErr(pErr, "stat", zPath);
  return S_ISDIR(st.st_mode) ? 1 : 0;
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
  zOut = colvecOsStrndup(zReal, strlen(zReal));
  free(zReal);
  return zOut;
}

/* readdir(); see colvec_os_sys.h. */
int colvecOsSysListDir(const char *zDir, ColvecOsList *pList, ColvecErr *pErr) {
  DIR *pDir = opendir(zDir);
  int rc = COLVEC_OK;
  if (pDir == NULL) return osUnixErr(pErr, "list folder", zDir);
  while (rc == COLVEC_OK) {
    struct dirent *pEnt;
    errno = 0;
    pEnt = readdir(pDir);
    if (pEnt == NULL) {
      if (errno != 0) rc = osUnixErr(pErr, "list folder", zDir);
      break;
    }
    rc = colvecOsListAdd(pList, pEnt->d_name, strlen(pEnt->d_name));
  }
  closedir(pDir);
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
** mmap() read-only and shared; POPULATE uses MAP_POPULATE on Linux and
** MADV_WILLNEED elsewhere, WILLNEED asks for asynchronous readahead. See
** colvec_os_sys.h.
*/
int colvecOsSysMap(ColvecFile *pFile, int64_t nByte, int ePrefault,
                   ColvecMap *pMap, ColvecErr *pErr) {
  int mflags = MAP_SHARED;
  void *p;
#if defined(MAP_POPULATE)
  if (ePrefault == COLVEC_PREFAULT_POPULATE) mflags |= MAP_POPULATE;
#endif
  p = mmap(NULL, (size_t)nByte, PROT_READ, mflags, pFile->fd, 0);
  if (p == MAP_FAILED) return osUnixErr(pErr, "map", pFile->zPath);
#if !defined(MAP_POPULATE)
  if (ePrefault == COLVEC_PREFAULT_POPULATE)
    ePrefault = COLVEC_PREFAULT_WILLNEED;
#endif
  if (ePrefault == COLVEC_PREFAULT_WILLNEED) {
    (void)osMadvise(p, (size_t)nByte, MADV_WILLNEED);
  }
  pMap->a = (const uint8_t *)p;
  return COLVEC_OK;
}

/* madvise() over whole pages; see colvec_os_sys.h. */
int colvecOsSysMapAdvise(ColvecMap *pMap, int64_t iOff, int64_t n, int eAdvice,
                         ColvecErr *pErr) {
  static const int aAdv[] = {MADV_NORMAL, MADV_WILLNEED, MADV_RANDOM,
                             MADV_SEQUENTIAL};
  int64_t iStart = iOff - iOff % colvecOsPageSize();
  if (osMadvise((void *)(pMap->a + iStart), (size_t)(iOff + n - iStart),
                aAdv[eAdvice]) != 0) {
    int iErrno = errno;
    colvecErrSet(pErr, iErrno, "colvec: madvise failed");
    return COLVEC_IOERR;
  }
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

/* Non-zero when this build can start threads. */
int colvecOsHaveThreads(void) { return OS_HAVE_THREADS; }

/* pthread_create; see colvec_os_sys.h. */
int colvecOsSysThreadStart(ColvecThread *p) {
#if OS_HAVE_THREADS
  return pthread_create(&p->tid, NULL, p->xMain, p->pArg) == 0 ? COLVEC_OK
                                                               : COLVEC_ERROR;
#else
  (void)p;
  return COLVEC_ERROR;
#endif
}

/* pthread_join; see colvec_os_sys.h. */
void colvecOsSysThreadJoin(ColvecThread *p) {
#if OS_HAVE_THREADS
  pthread_join(p->tid, NULL);
#else
  (void)p;
#endif
}

#endif /* !_WIN32 */
