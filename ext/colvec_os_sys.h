/*
** colvec_os_sys.h — the system calls under the file layer, one platform
** each: colvec_os_unix.c (POSIX) and colvec_os_win.c (Win32). Only the
** os files include it. colvec_os.c writes every colvecOs* file call once,
** on top of these: argument checks, the I/O test hook, allocation, loops
** over short reads and writes, the walks of colvecOsMkdirUp and
** colvecOsRemoveTree, and the messages that do not come from the system.
**
** Each call makes one attempt (retrying only on EINTR) and never calls
** the test hook. On failure it records "colvec: cannot <what> \"<path>\""
** with the errno value closest to the system's error in pErr (which may
** be NULL) and returns COLVEC_IOERR, unless its comment says otherwise;
** a Windows path that cannot be converted gives COLVEC_NOMEM or
** COLVEC_RANGE.
*/
#ifndef COLVEC_OS_SYS_H
#define COLVEC_OS_SYS_H

#include "colvec_os.h"

#if !defined(_WIN32) && !defined(COLVEC_OMIT_THREADS)
#include <pthread.h>
#endif

/* Largest number of bytes handed to one read or write call. */
#define COLVEC_OS_MAX_IO ((int64_t)1 << 30)

/*
** colvecOsSysKind()'s answer for a link to a folder that is removed as a
** folder (a Windows junction or directory symbolic link); POSIX never
** gives it (a symbolic link is COLVEC_OS_OTHER).
*/
#define COLVEC_OS_DIRLINK 3

/*
** Opens pFile->zPath for flags (COLVEC_OPEN_*, already checked) into
** pFile's handle. Anything but a regular file (a FIFO, folder or device)
** is COLVEC_CORRUPT ("... is not a regular file"), without blocking.
*/
int colvecOsSysOpen(ColvecFile *pFile, int flags, ColvecErr *pErr);

/* Closes pFile's handle (pFile itself is the caller's). */
int colvecOsSysClose(ColvecFile *pFile, ColvecErr *pErr);

/*
** Reads at most n (<= COLVEC_OS_MAX_IO) bytes at iOff into p; *pnGot is
** the count, 0 at the end of the file.
*/
int colvecOsSysRead(ColvecFile *pFile, void *p, int64_t n, int64_t iOff,
                    int64_t *pnGot, ColvecErr *pErr);

/* Writes at most n (<= COLVEC_OS_MAX_IO) bytes of p at iOff; *pnPut. */
int colvecOsSysWrite(ColvecFile *pFile, const void *p, int64_t n, int64_t iOff,
                     int64_t *pnPut, ColvecErr *pErr);

/* Makes pFile's bytes durable. */
int colvecOsSysSync(ColvecFile *pFile, ColvecErr *pErr);

/* pFile's size, and its identity into *pId when not NULL (zeroed). */
int colvecOsSysFileStat(ColvecFile *pFile, int64_t *pnByte, ColvecFileId *pId,
                        ColvecErr *pErr);

/* Makes folder zDir's entries durable. */
int colvecOsSysSyncDir(const char *zDir, ColvecErr *pErr);

/*
** Renames zFrom to zTo: replacing zTo when bReplace, else failing with
** EEXIST when zTo exists (zFrom then stays).
*/
int colvecOsSysRename(const char *zFrom, const char *zTo, int bReplace,
                      ColvecErr *pErr);

/* Removes file zPath: COLVEC_OK, COLVEC_ERROR (no message) when absent. */
int colvecOsSysUnlink(const char *zPath, ColvecErr *pErr);

/*
** Creates folder zDir: COLVEC_OK, COLVEC_ERROR (no message) when
** something exists there; a missing parent is COLVEC_IOERR with ENOENT.
*/
int colvecOsSysMkdir(const char *zDir, ColvecErr *pErr);

/* Removes empty folder zDir: COLVEC_OK, COLVEC_ERROR when absent. */
int colvecOsSysRmdir(const char *zDir, ColvecErr *pErr);

/*
** What is at zPath, links not followed: COLVEC_OS_NONE, COLVEC_OS_DIR (a
** real folder), COLVEC_OS_DIRLINK, COLVEC_OS_OTHER, or -COLVEC_IOERR when
** it cannot be told (pErr says why).
*/
int colvecOsSysKind(const char *zPath, ColvecErr *pErr);

/*
** Whether zPath, links followed, is a folder: 1, 0, or -COLVEC_IOERR
** when it cannot be told.
*/
int colvecOsSysIsDir(const char *zPath, ColvecErr *pErr);

/* Adds the names in folder zDir to pList (COLVEC_NOMEM when out of it). */
int colvecOsSysListDir(const char *zDir, ColvecOsList *pList, ColvecErr *pErr);

/*
** Maps the first nByte (> 0) bytes of pFile read-only into pMap (a, and
** the platform's handle), then applies ePrefault (a failing hint is
** ignored).
*/
int colvecOsSysMap(ColvecFile *pFile, int64_t nByte, int ePrefault,
                   ColvecMap *pMap, ColvecErr *pErr);

/*
** Advice eAdvice (a COLVEC_ADVICE_* from NORMAL to SEQUENTIAL) on bytes
** [iOff, iOff+n) of pMap, inside it. COLVEC_IOERR when the system refused.
*/
int colvecOsSysMapAdvise(ColvecMap *pMap, int64_t iOff, int64_t n, int eAdvice,
                         ColvecErr *pErr);

/* A started thread (colvecOsThreadStart). */
struct ColvecThread {
  void *(*xMain)(void *); /* what it runs */
  void *pArg;             /* xMain's argument */
#if defined(_WIN32)
  void *h; /* the thread's HANDLE, from _beginthreadex */
#elif !defined(COLVEC_OMIT_THREADS)
  pthread_t tid; /* the POSIX thread */
#endif
};

/*
** Starts thread p running p->xMain(p->pArg). COLVEC_OK, or COLVEC_ERROR
** when the system started none (never called when colvecOsHaveThreads()
** is 0).
*/
int colvecOsSysThreadStart(ColvecThread *p);

/* Waits for thread p, started by colvecOsSysThreadStart, to end. */
void colvecOsSysThreadJoin(ColvecThread *p);

#endif /* COLVEC_OS_SYS_H */
