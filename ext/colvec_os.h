/*
** colvec_os.h — the portable file layer under segment files (SQLite-free).
**
** Everything colvec does to the file system outside SQLite goes through
** here: open/create/close, positioned reads and writes that loop until every
** byte is moved (retrying EINTR), fsync of a file and of a folder, rename,
** unlink, mkdir -p, listing a folder, removing a folder tree, and read-only
** memory mappings with a prefault policy and range advice.
**
** Every function returns COLVEC_OK, COLVEC_IOERR (an operating-system call
** failed), COLVEC_NOMEM or COLVEC_RANGE (bad argument); colvecOsOpen() also
** COLVEC_CORRUPT when the path is not a regular file (it never blocks on a
** FIFO or device). On error the
** optional ColvecErr receives errno and a message that starts with
** "colvec: " and names the file, ready to hand to sqlite3_vtab.zErrMsg.
**
** Implemented for POSIX (Linux, macOS, the BSDs) in colvec_os.c and for
** Windows in colvec_os_win.c (CreateFileW, ReadFile/WriteFile with
** OVERLAPPED offsets, FlushFileBuffers,
** MoveFileExW(MOVEFILE_REPLACE_EXISTING|MOVEFILE_WRITE_THROUGH),
** CreateFileMappingW + MapViewOfFile, PrefetchVirtualMemory); each file
** compiles to nothing on the other platform. What they share (messages,
** the test hook, sorting names, CPU features, bit operations) is in
** colvec_os.c. On Windows a file that is open or mapped cannot be deleted
** or renamed over: colvecOsUnlink() fails and callers try again later.
** The os layer knows files on disk only: files kept in memory are another
** store (colvec_store.h), chosen above this layer.
*/
#ifndef COLVEC_OS_H
#define COLVEC_OS_H

#include "colvec_core.h"

typedef struct ColvecErr ColvecErr;
typedef struct ColvecFile ColvecFile;
typedef struct ColvecMap ColvecMap;

/* Size of the message buffer of a ColvecErr, terminating NUL included. */
#define COLVEC_ERRMSG_MAX 512

/*
** Where a failing call leaves its reason. Callers pass NULL when they do not
** want one. zMsg is always NUL-terminated; it is "" until an error is set.
*/
struct ColvecErr {
  int iErrno;                   /* errno of the failing call, 0 if none */
  char zMsg[COLVEC_ERRMSG_MAX]; /* "colvec: ..." message naming the file */
};

/*
** An open file. Opaque apart from this definition, which is here so that
** tests can look at the descriptor; never touch the members directly.
*/
struct ColvecFile {
#if defined(_WIN32)
  void *hFile; /* HANDLE of the open file */
#else
  int fd; /* POSIX file descriptor, close-on-exec */
#endif
  char *zPath; /* copy of the path, for messages (owned) */
  void *pMem;  /* a file of the memory store: its handle (else NULL) */
};

/*
** A read-only mapping of a whole file. a is NULL when the file is empty.
** The bytes stay valid until colvecOsMapClose(), even after the file it was
** made from is closed.
*/
struct ColvecMap {
  const uint8_t *a; /* first byte of the mapping */
  int64_t n;        /* bytes mapped (the file size at mapping time) */
  int bRandom;      /* MADV_RANDOM has been applied to some range */
  void *pMem;       /* a mapping of the memory store: its file, else NULL */
#if defined(_WIN32)
  void *hFile; /* HANDLE on the file, held while mapped (blocks deletes) */
#endif
};

/* Flags of colvecOsOpen(). */
#define COLVEC_OPEN_READONLY 0x01  /* open an existing file for reading */
#define COLVEC_OPEN_READWRITE 0x02 /* open an existing file read/write */
#define COLVEC_OPEN_CREATE 0x04    /* with READWRITE: create, or truncate */
#define COLVEC_OPEN_EXCLUSIVE 0x08 /* with CREATE: fail if it exists */

/* Prefault policies of colvecOsMapOpen(). */
#define COLVEC_PREFAULT_NONE 0     /* pages come in as they are touched */
#define COLVEC_PREFAULT_WILLNEED 1 /* MADV_WILLNEED: asynchronous readahead */
#define COLVEC_PREFAULT_POPULATE 2 /* MAP_POPULATE: read all before return */

/* Advice of colvecOsMapAdvise(). */
#define COLVEC_ADVICE_NORMAL 0     /* MADV_NORMAL: default readahead */
#define COLVEC_ADVICE_WILLNEED 1   /* MADV_WILLNEED: start reading now */
#define COLVEC_ADVICE_RANDOM 2     /* MADV_RANDOM: no readahead */
#define COLVEC_ADVICE_SEQUENTIAL 3 /* MADV_SEQUENTIAL: aggressive readahead */

/*************************************************************************
** Errors.
*/
void colvecErrSet(ColvecErr *pErr, int iErrno, const char *zFmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void colvecErrClear(ColvecErr *pErr);

/*************************************************************************
** Files.
*/
int colvecOsOpen(const char *zPath, int flags, ColvecFile **ppFile,
                 ColvecErr *pErr);
int colvecOsClose(ColvecFile *pFile, ColvecErr *pErr);
int colvecOsRead(ColvecFile *pFile, void *pBuf, int64_t n, int64_t iOff,
                 ColvecErr *pErr);
int colvecOsWrite(ColvecFile *pFile, const void *pBuf, int64_t n, int64_t iOff,
                  ColvecErr *pErr);
int colvecOsSync(ColvecFile *pFile, ColvecErr *pErr);
int colvecOsFileSize(ColvecFile *pFile, int64_t *pnByte, ColvecErr *pErr);

/*
** What tells one version of a file from another without reading it: the
** file (device and inode; on Windows volume serial and file index), its
** size, and its modification and change times in nanoseconds since 1970
** (on Windows the last-write and change times of FileBasicInfo). A file
** rewritten in place changes a time (and the change time cannot be set
** back by a user), one replaced by a rename changes the inode. Memory
** files have none: bValid is 0.
*/
typedef struct ColvecFileId ColvecFileId;
struct ColvecFileId {
  uint64_t iDev;    /* device (volume serial number) */
  uint64_t iIno;    /* inode (file index) */
  int64_t nSize;    /* size in bytes */
  int64_t iMtimeNs; /* last modification, ns since 1970 */
  int64_t iCtimeNs; /* last status change, ns since 1970 */
  int bValid;       /* 1: the fields above describe a file on disk */
};

/*
** colvecOsFileSize, also filling *pId (one fstat; pId may be NULL).
*/
int colvecOsFileStat(ColvecFile *pFile, int64_t *pnByte, ColvecFileId *pId,
                     ColvecErr *pErr);

/*************************************************************************
** Paths and folders.
*/
int colvecOsSyncDir(const char *zDir, ColvecErr *pErr);
int colvecOsSyncParent(const char *zPath, ColvecErr *pErr);
int colvecOsRename(const char *zFrom, const char *zTo, ColvecErr *pErr);
int colvecOsRenameNew(const char *zFrom, const char *zTo, ColvecErr *pErr);
char *colvecOsRealPath(const char *zPath);
int colvecOsUnlink(const char *zPath, ColvecErr *pErr);
int colvecOsExists(const char *zPath);
int colvecOsMkdirUp(const char *zDir, int nUp, ColvecErr *pErr);
int colvecOsMkdir(const char *zDir, ColvecErr *pErr);
int colvecOsRmdir(const char *zDir, ColvecErr *pErr);

/* Results of colvecOsKind(): what is at a path, links not followed. */
#define COLVEC_OS_NONE 0  /* nothing */
#define COLVEC_OS_DIR 1   /* a real folder */
#define COLVEC_OS_OTHER 2 /* a file, a symbolic link, or unknown */
int colvecOsKind(const char *zPath);
int colvecOsListDir(const char *zDir, const char *zSuffix, char ***pazName,
                    int *pnName, ColvecErr *pErr);
void colvecOsListFree(char **azName, int nName);
int colvecOsRemoveTree(const char *zDir, ColvecErr *pErr);

/*************************************************************************
** Read-only mappings.
**
** Note from measurements: never prefault a range that
** carries MADV_RANDOM (MADV_POPULATE_READ under MADV_RANDOM took 268 s
** where MAP_POPULATE took 0.49 s). colvecOsMapOpen() prefaults before any
** advice can exist, so give COLVEC_ADVICE_RANDOM only afterwards; WILLNEED
** on a few pages of a random range (rescoring) is fine.
*/
int colvecOsMapOpen(ColvecFile *pFile, int64_t nByte, int ePrefault,
                    ColvecMap **ppMap, ColvecErr *pErr);
int colvecOsMapAdvise(ColvecMap *pMap, int64_t iOff, int64_t n, int eAdvice,
                      ColvecErr *pErr);
void colvecOsMapClose(ColvecMap *pMap);

/*************************************************************************
** Platform services: everything else colvec asks of the system. The rest
** of the code calls these (or the macros below) and never a system header
** of its own, so a port (Windows, a no-threads build, a new CPU) changes
** this file and colvec_os.c only.
*/

/* Path separator and the format piece that joins a folder and a name:
** sqlite3_mprintf("%s" COLVEC_OS_SEP "%s", zDir, zName). */
#if defined(_WIN32)
#define COLVEC_OS_SEP "\\"
#else
#define COLVEC_OS_SEP "/"
#endif

const char *colvecOsBaseName(const char *zPath);
int64_t colvecOsPageSize(void);
double colvecOsMicros(void);
int64_t colvecOsWallNs(void); /* wall-clock time, ns since 1970, as file
                              ** times are kept */
int colvecOsCpuCount(void);

/* Memory advice on any range of a read-only mapping, widened to whole pages
** (COLVEC_ADVICE_* above, or COLVEC_ADVICE_POPULATE: fault the pages in now,
** read-only, where the system can, else WILLNEED). A hint: never fails. */
#define COLVEC_ADVICE_POPULATE 4
void colvecOsAdvise(const void *p, int64_t n, int eAdvice);

/* CPU features, probed once (colvecOsCpuFeatures()). A bit is set only
** when the CPU has the instructions and the OS saves their registers. */
#define COLVEC_CPU_AVX2 0x01      /* AVX2 (x86-64) */
#define COLVEC_CPU_FMA 0x02       /* FMA3 */
#define COLVEC_CPU_POPCNT 0x04    /* POPCNT */
#define COLVEC_CPU_AVX512 0x08    /* AVX-512 F, BW and VL */
#define COLVEC_CPU_AVX512POP 0x10 /* AVX512_VPOPCNTDQ */
#define COLVEC_CPU_NEON 0x20      /* Advanced SIMD (aarch64) */
unsigned colvecOsCpuFeatures(void);

/*
** Threads: a started thread runs xMain(pArg) until colvecOsThreadJoin().
** Built with COLVEC_OMIT_THREADS (or where the platform has none),
** colvecOsThreadStart() returns COLVEC_ERROR and callers run the work
** themselves (colvecOsHaveThreads() says which, at compile time).
*/
typedef struct ColvecThread ColvecThread;
int colvecOsHaveThreads(void);
int colvecOsThreadStart(ColvecThread **ppThread, void *(*xMain)(void *),
                        void *pArg);
void colvecOsThreadJoin(ColvecThread *pThread);

/*
** Compiler services behind macros: prefetch for reading, bit counts, byte
** swap, relaxed atomics on an int and acquire/release ones on a pointer. With
** GCC and clang they are builtins; elsewhere portable C (slower, correct).
*/
#if defined(__GNUC__) || defined(__clang__)
#define COLVEC_PREFETCH(p) __builtin_prefetch(p)
#define COLVEC_POPCOUNT32(x) __builtin_popcount(x)
#define COLVEC_POPCOUNT64(x) __builtin_popcountll(x)
#define COLVEC_CTZ32(x) __builtin_ctz(x)
#define COLVEC_BSWAP64(x) __builtin_bswap64(x)
#define COLVEC_ATOMIC_GET_INT(p) __atomic_load_n((int *)(p), __ATOMIC_RELAXED)
#define COLVEC_ATOMIC_SET_INT(p, v)                                            \
  __atomic_store_n((int *)(p), (v), __ATOMIC_RELAXED)
#define COLVEC_ATOMIC_ACQUIRE_PTR(pp)                                          \
  __atomic_load_n((void **)(pp), __ATOMIC_ACQUIRE)
#define COLVEC_ATOMIC_RELEASE_PTR(pp, v)                                       \
  __atomic_store_n((void **)(pp), (void *)(v), __ATOMIC_RELEASE)
#else
#define COLVEC_PREFETCH(p) ((void)(p))
#define COLVEC_POPCOUNT32(x) colvecOsPopcount64((uint64_t)(uint32_t)(x))
#define COLVEC_POPCOUNT64(x) colvecOsPopcount64((uint64_t)(x))
#define COLVEC_CTZ32(x) colvecOsCtz32((uint32_t)(x))
#define COLVEC_BSWAP64(x) colvecOsBswap64((uint64_t)(x))
/* volatile accesses: acquire/release on x86 and under MSVC's default
** /volatile:ms; a port to a weaker model adds its own intrinsics here */
#define COLVEC_ATOMIC_GET_INT(p) (*(volatile int *)(p))
#define COLVEC_ATOMIC_SET_INT(p, v) (*(volatile int *)(p) = (v))
#define COLVEC_ATOMIC_ACQUIRE_PTR(pp) (*(void *volatile *)(pp))
#define COLVEC_ATOMIC_RELEASE_PTR(pp, v) (*(void *volatile *)(pp) = (void *)(v))
int colvecOsPopcount64(uint64_t x);
int colvecOsCtz32(uint32_t x);
uint64_t colvecOsBswap64(uint64_t x);
#endif

/*************************************************************************
** Test hook: I/O fault injection and power-loss simulation.
**
** A test installs a ColvecOsHook with colvecOsSetHook(); production code
** never does, and then each call below costs one predictable branch. The
** hook sees every call of this layer that touches the file system, by kind
** (COLVEC_OSOP_*), with the path(s) it names (for calls on an open file,
** the path it was opened with), before and after the call:
**
**   xBefore(pArg, eOp, zPath, zPath2, iArg, &n) runs first. Returning 0
**     lets the call proceed. Returning an errno value makes the call fail
**     with that errno without touching the file system, exactly as if the
**     operating system had refused it (COLVEC_IOERR and a message). For
**     COLVEC_OSOP_WRITE, setting n (the byte count, in and out) to a value
**     in [0, n) while returning an errno writes that many bytes first: a
**     short write followed by the error (disk full half-way). iArg is the
**     file offset for READ and WRITE, the COLVEC_OPEN_* flags for OPEN.
**   xAfter(pArg, eOp, zPath, zPath2, iArg, n) runs after a call that
**     succeeded, so that a test can keep its own record of what reached the
**     disk (for power loss: what was fsynced, and which entries of which
**     folders).
**
** zPath2 is the destination of RENAME and NULL otherwise. Either callback
** may be NULL. Calls may come from several threads (the hook serializes if
** it must). colvecOsSetHook(NULL) removes the hook; the struct must stay
** valid while installed.
*/
#define COLVEC_OSOP_OPEN 1     /* colvecOsOpen */
#define COLVEC_OSOP_CLOSE 2    /* colvecOsClose */
#define COLVEC_OSOP_READ 3     /* colvecOsRead */
#define COLVEC_OSOP_WRITE 4    /* colvecOsWrite */
#define COLVEC_OSOP_SYNC 5     /* colvecOsSync */
#define COLVEC_OSOP_SIZE 6     /* colvecOsFileSize */
#define COLVEC_OSOP_SYNCDIR 7  /* colvecOsSyncDir (and SyncParent) */
#define COLVEC_OSOP_RENAME 8   /* colvecOsRename */
#define COLVEC_OSOP_UNLINK 9   /* colvecOsUnlink (and in RemoveTree) */
#define COLVEC_OSOP_MKDIR 10   /* colvecOsMkdir, colvecOsMkdirUp */
#define COLVEC_OSOP_RMDIR 11   /* colvecOsRmdir (and in RemoveTree) */
#define COLVEC_OSOP_LISTDIR 12 /* colvecOsListDir */
#define COLVEC_OSOP_MAP 13     /* colvecOsMapOpen */
#define COLVEC_OSOP_COUNT 14   /* one more than the largest kind */

typedef struct ColvecOsHook ColvecOsHook;

/* Callbacks of a test hook; see above. */
struct ColvecOsHook {
  /* before a call: 0 to proceed, or an errno value to fail it */
  int (*xBefore)(void *pArg, int eOp, const char *zPath, const char *zPath2,
                 int64_t iArg, int64_t *pn);
  /* after a call that succeeded */
  void (*xAfter)(void *pArg, int eOp, const char *zPath, const char *zPath2,
                 int64_t iArg, int64_t n);
  void *pArg; /* passed to both callbacks */
};

void colvecOsSetHook(const ColvecOsHook *pHook);

/*************************************************************************
** Internal to the file layer (colvec_os_base.c): what every os file, and
** the memory store (colvec_store_mem.c), build messages and listings
** with. Nothing else calls these.
**
** colvecOsErrnoErr records "colvec: cannot <zOp> \"<zPath>\": <strerror>"
** with errno iErrno and returns COLVEC_IOERR. colvecOsStrndup copies n
** bytes into a NUL-terminated string from colvecMalloc (NULL on OOM).
** colvecOsSortNames sorts a listing by strcmp.
**
** A ColvecOsList collects the names of one folder listing on every
** platform (and for memory folders): colvecOsListAdd() copies a name unless
** it is "." or ".." or lacks the suffix (COLVEC_NOMEM when out of memory);
** colvecOsListFinish() takes the listing's result code: on COLVEC_OK it
** sorts the names and hands them out, else it frees them (with the
** out-of-memory message for COLVEC_NOMEM) and returns the code.
*/
typedef struct ColvecOsList ColvecOsList;
struct ColvecOsList {
  char **azName;       /* names so far (colvecMalloc), azName[0..nName) */
  int nName;           /* names collected */
  int nAlloc;          /* slots allocated in azName */
  const char *zSuffix; /* only names ending in it; NULL or "" for all */
  size_t nSuffix;      /* strlen(zSuffix), 0 for all */
};
int colvecOsErrnoErr(ColvecErr *pErr, int iErrno, const char *zOp,
                     const char *zPath);
char *colvecOsStrndup(const char *z, size_t n);
void colvecOsSortNames(char **azName, int nName);
void colvecOsListInit(ColvecOsList *pList, const char *zSuffix);
int colvecOsListAdd(ColvecOsList *pList, const char *zName, size_t nLen);
int colvecOsListFinish(ColvecOsList *pList, int rc, const char *zDir,
                       ColvecErr *pErr, char ***pazName, int *pnName);

#endif /* COLVEC_OS_H */
