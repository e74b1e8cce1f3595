/*
** powerloss.c — simulates the loss of everything not fsynced.
**
** kill -9 cannot test an fsync order: the page cache survives a killed
** process. This file keeps, for the process it runs in, an undo record of
** every change to the file system that no fsync has made durable yet, and
** plCrash() applies it in reverse: the files are left as a machine that
** lost power at that instant could leave them, in the most pessimistic
** case (nothing that was not synced reached the disk).
**
** It sees colvec's file calls through the os layer's test hook
** (colvecOsSetHook) and SQLite's through a VFS shim, "powerloss", installed
** as the default VFS over "unix". Files are named by path; both sides use
** the absolute paths SQLite gives (colvec derives its own from
** sqlite3_db_filename()).
**
** THE MODEL
**
** File contents. Before a write (or truncation) of a file, the bytes of the
** range that exist and the file size are saved, unless a record of the
** file already exists since its last fsync: each write adds one record, and
** the records are applied newest first, so the oldest one of a range wins.
** An fsync of the file (colvec SYNC, SQLite xSync) drops its records: its
** bytes and size are durable. At a crash, each file gets its saved bytes
** back and is cut to its size at the last fsync.
**
** Folder entries. Creating a file, renaming, unlinking, mkdir and rmdir
** change a folder; each change is kept until an fsync of that folder (colvec
** SYNCDIR; SQLite: xDelete with a directory sync, and the first xSync of a
** file SQLite opened with SQLITE_OPEN_CREATE as a main journal, WAL or
** super-journal, for which os_unix.c fsyncs the folder too). At a crash
** the changes not made durable are undone newest first: a created file is
** removed, a rename is moved back, an unlinked file comes back with its
** durable bytes, a made folder is removed with everything in it (its
** entry in its parent never reached the disk, so neither did what it
** holds), a removed folder comes back. So, as os_unix.c assumes, SQLite's
** database file itself is durable only once its folder is synced (its
** first journal or WAL does it), and xDelete of a rollback journal without
** a directory sync (synchronous=FULL) can be undone: the journal comes
** back hot and rolls the last transaction back; synchronous=EXTRA syncs
** the folder after the delete.
**
** Not modelled: the -shm file (SQLite rebuilds it), temporary files
** without a name, partial sector writes and reordering inside a file
** (SQLite's powersafe-overwrite assumption), and a folder fsync making
** entries of other folders durable.
**
** SYNC POINTS
**
** Every colvec SYNC and SYNCDIR, every VFS xSync and every xDelete with a
** directory sync is a sync point, numbered from 1 in the order they happen.
** plCrashAt(k, PL_BEFORE) crashes when sync point k is reached, before it
** runs; PL_AFTER crashes right after it succeeded.
*/
#include "powerloss.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "colvec_os.h"

/* Kinds of PlOp. */
#define PLOP_CREATE 1 /* a file was created */
#define PLOP_RENAME 2 /* zPath was renamed to zPath2 */
#define PLOP_UNLINK 3 /* zPath was removed; aImage holds its durable bytes */
#define PLOP_MKDIR 4  /* folder zPath was made */
#define PLOP_RMDIR 5  /* folder zPath was removed */

typedef struct PlUndo PlUndo;
typedef struct PlFile PlFile;
typedef struct PlOp PlOp;
typedef struct PlVfsFile PlVfsFile;

/* Bytes of a range as they were before a write since the last fsync. */
struct PlUndo {
  int64_t iOff;  /* offset of the range */
  int64_t n;     /* bytes in a */
  uint8_t *a;    /* the old bytes (malloc'ed) */
  PlUndo *pNext; /* the next older record */
};

/* A file with changes since its last fsync. */
struct PlFile {
  char *zPath;     /* its current path (malloc'ed) */
  int64_t nSynced; /* its size at the last fsync */
  PlUndo *pUndo;   /* records, newest first */
  PlFile *pNext;   /* next file with changes */
};

/* A change to a folder that no fsync of the folder has made durable. */
struct PlOp {
  int eOp;         /* PLOP_* */
  char *zPath;     /* the path changed (malloc'ed) */
  char *zPath2;    /* RENAME: the new path (malloc'ed), else NULL */
  char *zDir;      /* folder of zPath (malloc'ed) */
  char *zDir2;     /* RENAME: folder of zPath2 (malloc'ed), else NULL */
  int bDone1;      /* the change in zDir is durable */
  int bDone2;      /* RENAME: the change in zDir2 is durable */
  uint8_t *aImage; /* UNLINK: the file's durable bytes (malloc'ed) */
  int64_t nImage;  /* UNLINK: bytes in aImage */
  PlOp *pNext;     /* the next older change */
};

/* An open file of the "powerloss" VFS. */
struct PlVfsFile {
  sqlite3_file base;   /* base class: pMethods */
  sqlite3_file *pReal; /* the "unix" file, allocated just after this */
  char *zPath;         /* its path (malloc'ed), NULL when unnamed */
  int bDirSync;        /* the first xSync also syncs the folder */
};

/* The state of the simulation (one per process). */
static struct {
  int bInstalled;       /* plInstall() has run */
  int nSync;            /* sync points seen so far */
  int iCrash;           /* crash at this sync point (0: never) */
  int eWhen;            /* PL_BEFORE or PL_AFTER */
  PlFile *pFile;        /* files with changes since their last fsync */
  PlOp *pOp;            /* folder changes not yet durable, newest first */
  char *zPendingCreate; /* colvec OPEN of a file that did not exist */
  sqlite3_vfs *pUnix;   /* the VFS under the shim */
  sqlite3_vfs vfs;      /* the shim */
  ColvecOsHook hook;    /* colvec's test hook */
} pl;

/* Serializes every callback and the interface. */
static pthread_mutex_t plMutex = PTHREAD_MUTEX_INITIALIZER;

/*************************************************************************
** Helpers.
*/

/* Returns a malloc'ed copy of z; aborts when memory runs out. */
static char *plStrdup(const char *z) {
  char *zCopy = strdup(z);
  if (zCopy == NULL) abort();
  return zCopy;
}

/* Returns a malloc'ed copy of the folder part of zPath ("." if none). */
static char *plDirOf(const char *zPath) {
  const char *zSlash = strrchr(zPath, '/');
  char *zDir;
  if (zSlash == NULL) return plStrdup(".");
  if (zSlash == zPath) return plStrdup("/");
  zDir = strndup(zPath, (size_t)(zSlash - zPath));
  if (zDir == NULL) abort();
  return zDir;
}

/* Returns the size of the file at zPath, or -1 if there is none. */
static int64_t plSizeOf(const char *zPath) {
  struct stat st;
  if (stat(zPath, &st) != 0) return -1;
  return (int64_t)st.st_size;
}

/*
** Reads n bytes at iOff of the open descriptor fd into a new malloc'ed
** buffer (short at the end of the file: *pnGot says how many).
*/
static uint8_t *plReadRange(int fd, int64_t iOff, int64_t n, int64_t *pnGot) {
  uint8_t *a = malloc(n > 0 ? (size_t)n : 1);
  int64_t nGot = 0;
  if (a == NULL) abort();
  while (nGot < n) {
    ssize_t r = pread(fd, a + nGot, (size_t)(n - nGot), (off_t)(iOff + nGot));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    nGot += r;
  }
  *pnGot = nGot;
  return a;
}

/* Writes n bytes of a at iOff of fd; aborts on failure (a broken test). */
static void plWriteRange(int fd, const uint8_t *a, int64_t n, int64_t iOff) {
  int64_t nPut = 0;
  while (nPut < n) {
    ssize_t r = pwrite(fd, a + nPut, (size_t)(n - nPut), (off_t)(iOff + nPut));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) abort();
    nPut += r;
  }
}

/* Returns the record of zPath, or NULL if it has none. */
static PlFile *plFileFind(const char *zPath) {
  PlFile *p;
  for (p = pl.pFile; p; p = p->pNext) {
    if (strcmp(p->zPath, zPath) == 0) return p;
  }
  return NULL;
}

/*
** Returns the record of zPath, making one whose durable size is nSize if
** it has none.
*/
static PlFile *plFileGet(const char *zPath, int64_t nSize) {
  PlFile *p = plFileFind(zPath);
  if (p == NULL) {
    p = calloc(1, sizeof(*p));
    if (p == NULL) abort();
    p->zPath = plStrdup(zPath);
    p->nSynced = nSize < 0 ? 0 : nSize;
    p->pNext = pl.pFile;
    pl.pFile = p;
  }
  return p;
}

/* Removes the record of zPath, if any (its bytes became durable or moot). */
static void plFileDrop(const char *zPath) {
  PlFile **pp;
  for (pp = &pl.pFile; *pp; pp = &(*pp)->pNext) {
    PlFile *p = *pp;
    if (strcmp(p->zPath, zPath) == 0) {
      PlUndo *pU, *pNext;
      *pp = p->pNext;
      for (pU = p->pUndo; pU; pU = pNext) {
        pNext = pU->pNext;
        free(pU->a);
        free(pU);
      }
      free(p->zPath);
      free(p);
      return;
    }
  }
}

/*
** Saves, before a write of n bytes at iOff (or a truncation to iOff, with
** n the bytes cut), the bytes of that range that exist in zPath.
*/
static void plSaveRange(const char *zPath, int64_t iOff, int64_t n) {
  int64_t nSize = plSizeOf(zPath), nGot = 0;
  PlFile *p;
  PlUndo *pU;
  int fd;
  if (nSize < 0) return; /* no file: nothing to save */
  p = plFileGet(zPath, nSize);
  if (iOff >= nSize) return; /* appended bytes: cut by nSynced */
  if (iOff + n > nSize) n = nSize - iOff;
  fd = open(zPath, O_RDONLY | O_CLOEXEC);
  if (fd < 0) abort();
  pU = calloc(1, sizeof(*pU));
  if (pU == NULL) abort();
  pU->iOff = iOff;
  pU->a = plReadRange(fd, iOff, n, &nGot);
  pU->n = nGot;
  close(fd);
  pU->pNext = p->pUndo;
  p->pUndo = pU;
}

/*
** Returns the durable bytes of the existing file zPath in a new malloc'ed
** buffer (its bytes with its records applied), their count in *pn.
*/
static uint8_t *plDurableImage(const char *zPath, int64_t *pn) {
  PlFile *p = plFileFind(zPath);
  int64_t nSize = plSizeOf(zPath), nGot = 0, nImage;
  uint8_t *a;
  PlUndo *pU;
  int fd = open(zPath, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || nSize < 0) abort();
  nImage = p ? p->nSynced : nSize;
  a = plReadRange(fd, 0, nSize, &nGot);
  close(fd);
  if (nImage > nGot) {
    a = realloc(a, (size_t)nImage);
    if (a == NULL) abort();
    memset(a + nGot, 0, (size_t)(nImage - nGot));
  }
  for (pU = p ? p->pUndo : NULL; pU; pU = pU->pNext) {
    int64_t nCopy = pU->n;
    if (pU->iOff >= nImage) continue;
    if (pU->iOff + nCopy > nImage) nCopy = nImage - pU->iOff;
    memcpy(a + pU->iOff, pU->a, (size_t)nCopy);
  }
  *pn = nImage;
  return a;
}

/* Records a folder change of kind eOp on zPath (and zPath2). */
static PlOp *plOpAdd(int eOp, const char *zPath, const char *zPath2) {
  PlOp *p = calloc(1, sizeof(*p));
  if (p == NULL) abort();
  p->eOp = eOp;
  p->zPath = plStrdup(zPath);
  p->zDir = plDirOf(zPath);
  if (zPath2) {
    p->zPath2 = plStrdup(zPath2);
    p->zDir2 = plDirOf(zPath2);
  } else {
    p->bDone2 = 1;
  }
  p->pNext = pl.pOp;
  pl.pOp = p;
  return p;
}

/* Records the unlink of the existing file zPath, keeping its durable bytes. */
static void plOpUnlink(const char *zPath) {
  int64_t n = 0;
  uint8_t *a = plDurableImage(zPath, &n);
  PlOp *p = plOpAdd(PLOP_UNLINK, zPath, NULL);
  p->aImage = a;
  p->nImage = n;
  plFileDrop(zPath);
}

/* Frees one folder change. */
static void plOpFree(PlOp *p) {
  free(p->zPath);
  free(p->zPath2);
  free(p->zDir);
  free(p->zDir2);
  free(p->aImage);
  free(p);
}

/* An fsync of folder zDir made its changes durable: forget them. */
static void plDirSynced(const char *zDir) {
  PlOp **pp = &pl.pOp;
  while (*pp) {
    PlOp *p = *pp;
    if (strcmp(p->zDir, zDir) == 0) p->bDone1 = 1;
    if (p->zDir2 && strcmp(p->zDir2, zDir) == 0) p->bDone2 = 1;
    if (p->bDone1 && p->bDone2) {
      *pp = p->pNext;
      plOpFree(p);
    } else {
      pp = &p->pNext;
    }
  }
}

/* Removes zPath and, if it is a folder, everything in it. */
static void plRemoveTree(const char *zPath) {
  struct stat st;
  if (lstat(zPath, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *pDir = opendir(zPath);
    struct dirent *pEnt;
    while (pDir && (pEnt = readdir(pDir)) != NULL) {
      char *zChild;
      if (strcmp(pEnt->d_name, ".") == 0 || strcmp(pEnt->d_name, "..") == 0) {
        continue;
      }
      if (asprintf(&zChild, "%s/%s", zPath, pEnt->d_name) < 0) abort();
      plRemoveTree(zChild);
      free(zChild);
    }
    if (pDir) closedir(pDir);
    rmdir(zPath);
  } else {
    unlink(zPath);
  }
}

/*
** Counts a sync point: crashes here if it is the chosen one and the crash
** comes before it. Returns its number.
*/
static int plSyncBefore(void) {
  int iSync = ++pl.nSync;
  if (iSync == pl.iCrash && pl.eWhen == PL_BEFORE) plCrash();
  return iSync;
}

/* After sync point iSync succeeded: crashes if chosen to. */
static void plSyncAfter(int iSync) {
  if (iSync == pl.iCrash && pl.eWhen == PL_AFTER) plCrash();
}

/*************************************************************************
** The crash.
*/

/*
** Puts every file back to its durable state (see the model above) and ends
** the process at once with PL_EXIT_CRASH. Called with or without the mutex.
*/
void plCrash(void) {
  PlFile *pF;
  PlOp *pOp;
  for (pF = pl.pFile; pF; pF = pF->pNext) {
    int fd = open(pF->zPath, O_WRONLY | O_CLOEXEC);
    PlUndo *pU;
    if (fd < 0) continue; /* removed since: its unlink record has it */
    for (pU = pF->pUndo; pU; pU = pU->pNext) {
      plWriteRange(fd, pU->a, pU->n, pU->iOff);
    }
    if (ftruncate(fd, (off_t)pF->nSynced) != 0) abort();
    close(fd);
  }
  for (pOp = pl.pOp; pOp; pOp = pOp->pNext) {
    switch (pOp->eOp) {
    case PLOP_CREATE:
      unlink(pOp->zPath);
      break;
    case PLOP_RENAME:
      if (rename(pOp->zPath2, pOp->zPath) != 0) abort();
      break;
    case PLOP_UNLINK: {
      int fd = open(pOp->zPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) abort();
      plWriteRange(fd, pOp->aImage, pOp->nImage, 0);
      close(fd);
      break;
    }
    case PLOP_MKDIR:
      plRemoveTree(pOp->zPath);
      break;
    case PLOP_RMDIR:
      if (mkdir(pOp->zPath, 0755) != 0 && errno != EEXIST) abort();
      break;
    }
  }
  _exit(PL_EXIT_CRASH);
}

/*************************************************************************
** colvec's side: the os layer's test hook.
*/

/* Before a colvec file call: records what it will change; may crash. */
static int plHookBefore(void *pArg, int eOp, const char *zPath,
                        const char *zPath2, int64_t iArg, int64_t *pn) {
  (void)pArg;
  pthread_mutex_lock(&plMutex);
  switch (eOp) {
  case COLVEC_OSOP_OPEN:
    if (iArg & COLVEC_OPEN_CREATE) {
      int64_t nSize = plSizeOf(zPath);
      free(pl.zPendingCreate);
      pl.zPendingCreate = NULL;
      if (nSize < 0) {
        pl.zPendingCreate = plStrdup(zPath);
      } else {
        plSaveRange(zPath, 0, nSize); /* truncated by the open */
      }
    }
    break;
  case COLVEC_OSOP_WRITE:
    plSaveRange(zPath, iArg, *pn);
    break;
  case COLVEC_OSOP_SYNC:
  case COLVEC_OSOP_SYNCDIR:
    plSyncBefore();
    break;
  case COLVEC_OSOP_RENAME:
    if (plSizeOf(zPath2) >= 0) plOpUnlink(zPath2); /* replaced */
    break;
  case COLVEC_OSOP_UNLINK:
    if (plSizeOf(zPath) >= 0) plOpUnlink(zPath);
    break;
  }
  pthread_mutex_unlock(&plMutex);
  return 0;
}

/* After a colvec file call succeeded: records it; may crash. */
static void plHookAfter(void *pArg, int eOp, const char *zPath,
                        const char *zPath2, int64_t iArg, int64_t n) {
  PlFile *p;
  (void)pArg;
  (void)iArg;
  (void)n;
  pthread_mutex_lock(&plMutex);
  switch (eOp) {
  case COLVEC_OSOP_OPEN:
    if (pl.zPendingCreate && strcmp(pl.zPendingCreate, zPath) == 0) {
      plOpAdd(PLOP_CREATE, zPath, NULL);
      plFileGet(zPath, 0);
    }
    free(pl.zPendingCreate);
    pl.zPendingCreate = NULL;
    break;
  case COLVEC_OSOP_SYNC:
    plFileDrop(zPath);
    plSyncAfter(pl.nSync);
    break;
  case COLVEC_OSOP_SYNCDIR:
    plDirSynced(zPath);
    plSyncAfter(pl.nSync);
    break;
  case COLVEC_OSOP_RENAME:
    plOpAdd(PLOP_RENAME, zPath, zPath2);
    p = plFileFind(zPath);
    if (p) {
      free(p->zPath);
      p->zPath = plStrdup(zPath2);
    }
    break;
  case COLVEC_OSOP_MKDIR:
    plOpAdd(PLOP_MKDIR, zPath, NULL);
    break;
  case COLVEC_OSOP_RMDIR:
    plOpAdd(PLOP_RMDIR, zPath, NULL);
    break;
  }
  pthread_mutex_unlock(&plMutex);
}

/*************************************************************************
** SQLite's side: the "powerloss" VFS, a shim over "unix".
*/

/* xClose: closes the real file. */
static int plClose(sqlite3_file *pFile) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  int rc = p->pReal->pMethods->xClose(p->pReal);
  free(p->zPath);
  p->zPath = NULL;
  return rc;
}

/* xRead: passes through. */
static int plRead(sqlite3_file *pFile, void *pBuf, int n, sqlite3_int64 iOff) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xRead(p->pReal, pBuf, n, iOff);
}

/* xWrite: saves the old bytes first. */
static int plWrite(sqlite3_file *pFile, const void *pBuf, int n,
                   sqlite3_int64 iOff) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  if (p->zPath) {
    pthread_mutex_lock(&plMutex);
    plSaveRange(p->zPath, iOff, n);
    pthread_mutex_unlock(&plMutex);
  }
  return p->pReal->pMethods->xWrite(p->pReal, pBuf, n, iOff);
}

/* xTruncate: saves the bytes cut first. */
static int plTruncate(sqlite3_file *pFile, sqlite3_int64 nByte) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  if (p->zPath) {
    int64_t nSize;
    pthread_mutex_lock(&plMutex);
    nSize = plSizeOf(p->zPath);
    if (nSize > nByte) plSaveRange(p->zPath, nByte, nSize - nByte);
    pthread_mutex_unlock(&plMutex);
  }
  return p->pReal->pMethods->xTruncate(p->pReal, nByte);
}

/* xSync: a sync point; makes the file (and maybe its folder) durable. */
static int plSync(sqlite3_file *pFile, int flags) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  int rc, iSync;
  pthread_mutex_lock(&plMutex);
  iSync = plSyncBefore();
  pthread_mutex_unlock(&plMutex);
  rc = p->pReal->pMethods->xSync(p->pReal, flags);
  if (rc == SQLITE_OK) {
    pthread_mutex_lock(&plMutex);
    if (p->zPath) {
      plFileDrop(p->zPath);
      if (p->bDirSync) {
        char *zDir = plDirOf(p->zPath);
        plDirSynced(zDir);
        free(zDir);
      }
    }
    p->bDirSync = 0;
    plSyncAfter(iSync);
    pthread_mutex_unlock(&plMutex);
  }
  return rc;
}

/* xFileSize: passes through. */
static int plFileSize(sqlite3_file *pFile, sqlite3_int64 *pSize) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xFileSize(p->pReal, pSize);
}

/* xLock: passes through. */
static int plLock(sqlite3_file *pFile, int eLock) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xLock(p->pReal, eLock);
}

/* xUnlock: passes through. */
static int plUnlock(sqlite3_file *pFile, int eLock) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xUnlock(p->pReal, eLock);
}

/* xCheckReservedLock: passes through. */
static int plCheckReservedLock(sqlite3_file *pFile, int *pResOut) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xCheckReservedLock(p->pReal, pResOut);
}

/* xFileControl: passes through. */
static int plFileControl(sqlite3_file *pFile, int op, void *pArg) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xFileControl(p->pReal, op, pArg);
}

/* xSectorSize: passes through. */
static int plSectorSize(sqlite3_file *pFile) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xSectorSize(p->pReal);
}

/* xDeviceCharacteristics: passes through. */
static int plDeviceCharacteristics(sqlite3_file *pFile) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xDeviceCharacteristics(p->pReal);
}

/* xShmMap: passes through (the -shm file is not modelled). */
static int plShmMap(sqlite3_file *pFile, int iPg, int pgsz, int bExtend,
                    void volatile **pp) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xShmMap(p->pReal, iPg, pgsz, bExtend, pp);
}

/* xShmLock: passes through. */
static int plShmLock(sqlite3_file *pFile, int iOff, int n, int flags) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xShmLock(p->pReal, iOff, n, flags);
}

/* xShmBarrier: passes through. */
static void plShmBarrier(sqlite3_file *pFile) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  p->pReal->pMethods->xShmBarrier(p->pReal);
}

/* xShmUnmap: passes through. */
static int plShmUnmap(sqlite3_file *pFile, int bDelete) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xShmUnmap(p->pReal, bDelete);
}

/* xFetch: passes through (reads only). */
static int plFetch(sqlite3_file *pFile, sqlite3_int64 iOff, int n, void **pp) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xFetch(p->pReal, iOff, n, pp);
}

/* xUnfetch: passes through. */
static int plUnfetch(sqlite3_file *pFile, sqlite3_int64 iOff, void *pPage) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  return p->pReal->pMethods->xUnfetch(p->pReal, iOff, pPage);
}

/* The methods of a "powerloss" file (version 3, like "unix"'s). */
static const sqlite3_io_methods plIoMethods = {
    3,
    plClose,
    plRead,
    plWrite,
    plTruncate,
    plSync,
    plFileSize,
    plLock,
    plUnlock,
    plCheckReservedLock,
    plFileControl,
    plSectorSize,
    plDeviceCharacteristics,
    plShmMap,
    plShmLock,
    plShmBarrier,
    plShmUnmap,
    plFetch,
    plUnfetch,
};

/* xOpen: opens the real file; records a creation. */
static int plOpen(sqlite3_vfs *pVfs, const char *zName, sqlite3_file *pFile,
                  int flags, int *pOutFlags) {
  PlVfsFile *p = (PlVfsFile *)pFile;
  int eType = flags & 0x0FFF00;
  int bNew = 0, rc;
  (void)pVfs;
  memset(p, 0, sizeof(*p));
  p->pReal = (sqlite3_file *)&p[1];
  if (zName && (flags & SQLITE_OPEN_CREATE) &&
      (flags & SQLITE_OPEN_DELETEONCLOSE) == 0) {
    bNew = plSizeOf(zName) < 0;
    p->bDirSync = eType == SQLITE_OPEN_MAIN_JOURNAL ||
                  eType == SQLITE_OPEN_WAL ||
                  eType == SQLITE_OPEN_SUPER_JOURNAL;
  }
  rc = pl.pUnix->xOpen(pl.pUnix, zName, p->pReal, flags, pOutFlags);
  if (rc != SQLITE_OK) return rc;
  p->base.pMethods = &plIoMethods;
  if (zName && (flags & SQLITE_OPEN_DELETEONCLOSE) == 0) {
    p->zPath = plStrdup(zName);
    if (bNew) {
      pthread_mutex_lock(&plMutex);
      plOpAdd(PLOP_CREATE, zName, NULL);
      plFileGet(zName, 0);
      pthread_mutex_unlock(&plMutex);
    }
  }
  return SQLITE_OK;
}

/* xDelete: records the unlink; with dirSync a sync point of the folder. */
static int plDelete(sqlite3_vfs *pVfs, const char *zName, int dirSync) {
  int rc, iSync = 0;
  (void)pVfs;
  pthread_mutex_lock(&plMutex);
  if (plSizeOf(zName) >= 0) plOpUnlink(zName);
  if (dirSync & 1) iSync = plSyncBefore();
  pthread_mutex_unlock(&plMutex);
  rc = pl.pUnix->xDelete(pl.pUnix, zName, dirSync);
  if (rc == SQLITE_OK && (dirSync & 1)) {
    char *zDir = plDirOf(zName);
    pthread_mutex_lock(&plMutex);
    plDirSynced(zDir);
    free(zDir);
    plSyncAfter(iSync);
    pthread_mutex_unlock(&plMutex);
  }
  return rc;
}

/* xAccess: passes through. */
static int plAccess(sqlite3_vfs *pVfs, const char *zName, int flags,
                    int *pResOut) {
  (void)pVfs;
  return pl.pUnix->xAccess(pl.pUnix, zName, flags, pResOut);
}

/* xFullPathname: passes through. */
static int plFullPathname(sqlite3_vfs *pVfs, const char *zName, int nOut,
                          char *zOut) {
  (void)pVfs;
  return pl.pUnix->xFullPathname(pl.pUnix, zName, nOut, zOut);
}

/* xRandomness: passes through. */
static int plRandomness(sqlite3_vfs *pVfs, int n, char *zOut) {
  (void)pVfs;
  return pl.pUnix->xRandomness(pl.pUnix, n, zOut);
}

/* xSleep: passes through. */
static int plSleep(sqlite3_vfs *pVfs, int nMicro) {
  (void)pVfs;
  return pl.pUnix->xSleep(pl.pUnix, nMicro);
}

/* xCurrentTime: passes through. */
static int plCurrentTime(sqlite3_vfs *pVfs, double *pTime) {
  (void)pVfs;
  return pl.pUnix->xCurrentTime(pl.pUnix, pTime);
}

/* xGetLastError: passes through. */
static int plGetLastError(sqlite3_vfs *pVfs, int n, char *zOut) {
  (void)pVfs;
  return pl.pUnix->xGetLastError(pl.pUnix, n, zOut);
}

/* xCurrentTimeInt64: passes through. */
static int plCurrentTimeInt64(sqlite3_vfs *pVfs, sqlite3_int64 *pTime) {
  (void)pVfs;
  return pl.pUnix->xCurrentTimeInt64(pl.pUnix, pTime);
}

/*************************************************************************
** Interface.
*/

/*
** Installs the simulation in this process: the "powerloss" VFS as the
** default and colvec's os hook. Returns SQLITE_OK, or an error code when
** "unix" is missing or registration fails. Call it once, before opening a
** database.
*/
int plInstall(void) {
  if (pl.bInstalled) return SQLITE_OK;
  pl.pUnix = sqlite3_vfs_find("unix");
  if (pl.pUnix == NULL) return SQLITE_ERROR;
  pl.vfs.iVersion = 2;
  pl.vfs.szOsFile = (int)sizeof(PlVfsFile) + pl.pUnix->szOsFile;
  pl.vfs.mxPathname = pl.pUnix->mxPathname;
  pl.vfs.zName = "powerloss";
  pl.vfs.xOpen = plOpen;
  pl.vfs.xDelete = plDelete;
  pl.vfs.xAccess = plAccess;
  pl.vfs.xFullPathname = plFullPathname;
  pl.vfs.xRandomness = plRandomness;
  pl.vfs.xSleep = plSleep;
  pl.vfs.xCurrentTime = plCurrentTime;
  pl.vfs.xGetLastError = plGetLastError;
  pl.vfs.xCurrentTimeInt64 = plCurrentTimeInt64;
  pl.hook.xBefore = plHookBefore;
  pl.hook.xAfter = plHookAfter;
  pl.hook.pArg = NULL;
  colvecOsSetHook(&pl.hook);
  pl.bInstalled = 1;
  return sqlite3_vfs_register(&pl.vfs, 1);
}

/*
** Chooses the crash: at sync point iSync (1-based; 0 never), before it
** runs (PL_BEFORE) or after it succeeded (PL_AFTER).
*/
void plCrashAt(int iSync, int eWhen) {
  pthread_mutex_lock(&plMutex);
  pl.iCrash = iSync;
  pl.eWhen = eWhen;
  pthread_mutex_unlock(&plMutex);
}

/* Returns the number of sync points seen so far. */
int plSyncCount(void) {
  int n;
  pthread_mutex_lock(&plMutex);
  n = pl.nSync;
  pthread_mutex_unlock(&plMutex);
  return n;
}
