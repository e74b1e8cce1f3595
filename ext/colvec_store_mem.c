/*
** colvec_store_mem.c — the memory store (colvec_store.h): folders and files
** kept in memory, for databases that have no file (":memory:", a temporary
** database, one loaded with sqlite3_deserialize). No system call.
**
** Paths start with COLVEC_STORE_MEM_ROOT, the root folder, which always
** exists; '/' and '\' both separate components. The tree is process-wide
** and guarded by one lock (calls are short: no I/O). Files are byte arrays
** (colvecMalloc'd, the first byte 64-byte aligned) that grow as they are
** written; folders are names. The methods behave as colvec_store.h says
** (POSIX on a local disk), with errno values in ColvecErr as the system
** would give them (ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, EBADF,
** EBUSY), and COLVEC_NOMEM when memory runs out. A mapping is a pointer to
** the file's bytes (no copy): a file is not written while it is mapped
** (the write fails with EBUSY). ColvecFile.pMem and ColvecMap.pMem hold
** this store's handles; the os layer's members of those structs are unused.
*/
#include "colvec_store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#include <windows.h>
#elif !defined(COLVEC_OMIT_THREADS)
#include <pthread.h>
#endif

/* Alignment of the first byte of every memory file (a section's). */
#define OSMEM_ALIGN 64

typedef struct OsMemNode OsMemNode;
typedef struct OsMemHandle OsMemHandle;

/* A file or folder of the tree, or the bytes of an unlinked file. */
struct OsMemNode {
  char *zPath;      /* full path, '/'-separated; NULL once unlinked */
  int bDir;         /* a folder */
  void *pAlloc;     /* the allocation holding the bytes, or NULL */
  uint8_t *a;       /* first byte: pAlloc rounded up to OSMEM_ALIGN */
  int64_t n;        /* file size in bytes */
  int64_t nAlloc;   /* bytes available from a */
  int nRef;         /* 1 while linked, + open files + mappings */
  int nMap;         /* mappings of the bytes (no write while > 0) */
  OsMemNode *pNext; /* next linked node (osMemList) */
};

/* What ColvecFile.pMem points at for a file opened in memory. */
struct OsMemHandle {
  OsMemNode *pNode; /* the file (one reference) */
  int bWrite;       /* opened read/write */
};

/* Every linked node of the process, in no order. Guarded by the lock. */
static OsMemNode *osMemList = NULL;

#if defined(_WIN32)
static SRWLOCK osMemMutex = SRWLOCK_INIT; /* guards osMemList and nodes */
/* Takes the lock of the tree. */
static void osMemEnter(void) { AcquireSRWLockExclusive(&osMemMutex); }
/* Releases the lock of the tree. */
static void osMemLeave(void) { ReleaseSRWLockExclusive(&osMemMutex); }
#elif !defined(COLVEC_OMIT_THREADS)
static pthread_mutex_t osMemMutex = PTHREAD_MUTEX_INITIALIZER; /* as above */
/* Takes the lock of the tree. */
static void osMemEnter(void) { pthread_mutex_lock(&osMemMutex); }
/* Releases the lock of the tree. */
static void osMemLeave(void) { pthread_mutex_unlock(&osMemMutex); }
#else
/* Takes the lock of the tree (a build without threads has none). */
static void osMemEnter(void) {}
/* Releases the lock of the tree. */
static void osMemLeave(void) {}
#endif

/* Returns non-zero when zPath lies in the memory tree (under its root). */
static int storeMemIs(const char *zPath) {
  size_t n = sizeof(COLVEC_STORE_MEM_ROOT) - 1;
  return zPath && strncmp(zPath, COLVEC_STORE_MEM_ROOT, n) == 0 &&
         (zPath[n] == 0 || zPath[n] == '/' || zPath[n] == '\\');
}

/*
** Returns a copy of zPath with '\' turned into '/' and without a trailing
** separator, from colvecMalloc (caller frees), or NULL when out of memory
** (with pErr set).
*/
static char *osMemNorm(const char *zPath, ColvecErr *pErr) {
  size_t n = strlen(zPath), i;
  char *z = (char *)colvecMalloc((int64_t)n + 1);
  if (z == NULL) {
    colvecErrSet(pErr, 0, "colvec: out of memory at \"%s\"", zPath);
    return NULL;
  }
  for (i = 0; i < n; i++)
    z[i] = zPath[i] == '\\' ? '/' : zPath[i];
  while (n > 0 && z[n - 1] == '/')
    n--;
  z[n] = 0;
  return z;
}

/* Returns the linked node at normalized path z, or NULL. Lock held. */
static OsMemNode *osMemFind(const char *z) {
  OsMemNode *p;
  for (p = osMemList; p; p = p->pNext) {
    if (strcmp(p->zPath, z) == 0) return p;
  }
  return NULL;
}

/*
** Returns non-zero when the folder that holds normalized path z exists:
** the root, or a linked folder node. Lock held.
*/
static int osMemParentOk(const char *z) {
  const char *zSlash = strrchr(z, '/');
  OsMemNode *p;
  size_t n;
  if (zSlash == NULL) return 0; /* the root has no parent */
  n = (size_t)(zSlash - z);
  if (n == sizeof(COLVEC_STORE_MEM_ROOT) - 1 &&
      memcmp(z, COLVEC_STORE_MEM_ROOT, n) == 0) {
    return 1;
  }
  for (p = osMemList; p; p = p->pNext) {
    if (p->bDir && strlen(p->zPath) == n && memcmp(p->zPath, z, n) == 0) {
      return 1;
    }
  }
  return 0;
}

/* Drops one reference on p; the last frees it (it is unlinked). Lock held. */
static void osMemUnref(OsMemNode *p) {
  if (--p->nRef == 0) {
    colvecFree(p->pAlloc);
    colvecFree(p->zPath);
    colvecFree(p);
  }
}

/* Removes p from the tree (its name goes; its bytes stay while referenced). */
static void osMemUnlinkNode(OsMemNode *p) {
  OsMemNode **pp;
  for (pp = &osMemList; *pp; pp = &(*pp)->pNext) {
    if (*pp == p) {
      *pp = p->pNext;
      break;
    }
  }
  colvecFree(p->zPath);
  p->zPath = NULL;
  p->pNext = NULL;
  osMemUnref(p);
}

/*
** Links a new node of normalized path z (taking ownership of z) as a folder
** or an empty file. Returns it, or NULL when out of memory (z freed). Lock
** held.
*/
static OsMemNode *osMemAdd(char *z, int bDir) {
  OsMemNode *p = (OsMemNode *)colvecMalloc(sizeof(OsMemNode));
  if (p == NULL) {
    colvecFree(z);
    return NULL;
  }
  memset(p, 0, sizeof(*p));
  p->zPath = z;
  p->bDir = bDir;
  p->nRef = 1;
  p->pNext = osMemList;
  osMemList = p;
  return p;
}

/* Sets pErr for a failing operation zOp on zPath and returns COLVEC_IOERR. */
static int osMemErr(ColvecErr *pErr, int iErrno, const char *zOp,
                    const char *zPath) {
  colvecErrSet(pErr, iErrno, "colvec: cannot %s \"%s\"", zOp, zPath);
  return COLVEC_IOERR;
}

/* Opens a memory file; see colvecOsOpen(). */
static int storeMemOpen(const char *zPath, int flags, ColvecFile **ppFile,
                        ColvecErr *pErr) {
  int bWrite = (flags & COLVEC_OPEN_READWRITE) != 0;
  char *z = osMemNorm(zPath, pErr);
  ColvecFile *pFile = NULL;
  OsMemHandle *pH = NULL;
  OsMemNode *p;
  int rc = COLVEC_OK;
  *ppFile = NULL;
  if (z == NULL) return COLVEC_NOMEM;
  pFile = (ColvecFile *)colvecMallocZero(&rc, sizeof(ColvecFile));
  pH = (OsMemHandle *)colvecMallocZero(&rc, sizeof(OsMemHandle));
  if (pFile)
    pFile->zPath = (char *)colvecMallocZero(&rc, (int64_t)strlen(z) + 1);
  if (rc != COLVEC_OK) {
    colvecErrSet(pErr, 0, "colvec: out of memory opening \"%s\"", zPath);
    goto fail;
  }
  osMemEnter();
  p = osMemFind(z);
  if (p && p->bDir) {
    rc = osMemErr(pErr, EISDIR, "open", zPath);
  } else if (p && (flags & COLVEC_OPEN_CREATE) &&
             (flags & COLVEC_OPEN_EXCLUSIVE)) {
    rc = osMemErr(pErr, EEXIST, "open", zPath);
  } else if (p == NULL && !(bWrite && (flags & COLVEC_OPEN_CREATE))) {
    rc = osMemErr(pErr, ENOENT, "open", zPath);
  } else if (p == NULL && !osMemParentOk(z)) {
    rc = osMemErr(pErr, ENOENT, "open", zPath);
  } else if (p == NULL) {
    char *zCopy = (char *)colvecMalloc((int64_t)strlen(z) + 1);
    if (zCopy) memcpy(zCopy, z, strlen(z) + 1);
    p = zCopy ? osMemAdd(zCopy, 0) : NULL;
    if (p == NULL) {
      colvecErrSet(pErr, 0, "colvec: out of memory opening \"%s\"", zPath);
      rc = COLVEC_NOMEM;
    }
  } else if (bWrite && (flags & COLVEC_OPEN_CREATE)) {
    if (p->nMap > 0) {
      rc = osMemErr(pErr, EBUSY, "open", zPath);
    } else {
      p->n = 0; /* truncate */
    }
  }
  if (rc == COLVEC_OK) {
    p->nRef++;
    pH->pNode = p;
    pH->bWrite = bWrite;
  }
  osMemLeave();
  if (rc != COLVEC_OK) goto fail;
  memcpy(pFile->zPath, z, strlen(z) + 1);
  pFile->pMem = pH;
  colvecFree(z);
  *ppFile = pFile;
  return COLVEC_OK;
fail:
  if (pFile) colvecFree(pFile->zPath);
  colvecFree(pFile);
  colvecFree(pH);
  colvecFree(z);
  return rc;
}

/* Closes a memory file (never fails); see colvecOsClose(). */
static int storeMemClose(ColvecFile *pFile, ColvecErr *pErr) {
  (void)pErr;
  if (pFile == NULL) return COLVEC_OK;
  OsMemHandle *pH = (OsMemHandle *)pFile->pMem;
  osMemEnter();
  osMemUnref(pH->pNode);
  osMemLeave();
  colvecFree(pH);
  colvecFree(pFile->zPath);
  colvecFree(pFile);
  return COLVEC_OK;
}

/* Copies bytes of a memory file out; see colvecOsRead(). */
static int storeMemRead(ColvecFile *pFile, void *pBuf, int64_t n, int64_t iOff,
                        ColvecErr *pErr) {
  OsMemNode *p = ((OsMemHandle *)pFile->pMem)->pNode;
  int rc = COLVEC_OK;
  osMemEnter();
  if (iOff > p->n || n > p->n - iOff) {
    colvecErrSet(pErr, 0,
                 "colvec: cannot read \"%s\": short read at offset %lld",
                 pFile->zPath, (long long)iOff);
    rc = COLVEC_IOERR;
  } else if (n > 0) {
    memcpy(pBuf, p->a + iOff, (size_t)n);
  }
  osMemLeave();
  return rc;
}

/*
** Growth of a memory file stops at this size (unless a write needs more):
** SQLite refuses single allocations of 2 GB and more, so growing a 1.5 GB
** file by half would fail where the bytes it needs still fit.
*/
#define OSMEM_GROW_MAX (((int64_t)1 << 31) - ((int64_t)1 << 20))

/*
** Makes room for at least nNeed bytes in p, growing by half again to keep
** appends amortized. Returns COLVEC_OK or COLVEC_NOMEM. Lock held.
*/
static int osMemGrow(OsMemNode *p, int64_t nNeed) {
  int64_t nNew;
  void *pNew;
  uint8_t *aNew;
  if (nNeed <= p->nAlloc) return COLVEC_OK;
  nNew = p->nAlloc + p->nAlloc / 2;
  if (nNew > OSMEM_GROW_MAX) nNew = OSMEM_GROW_MAX;
  if (nNew < nNeed) nNew = nNeed;
  if (nNew < 4096) nNew = 4096;
  pNew = colvecMalloc(nNew + OSMEM_ALIGN);
  if (pNew == NULL) return COLVEC_NOMEM;
  aNew = (uint8_t *)pNew + (OSMEM_ALIGN - (uintptr_t)pNew % OSMEM_ALIGN);
  if (p->n > 0) memcpy(aNew, p->a, (size_t)p->n);
  colvecFree(p->pAlloc);
  p->pAlloc = pNew;
  p->a = aNew;
  p->nAlloc = nNew;
  return COLVEC_OK;
}

/* Writes bytes into a memory file; see colvecOsWrite(). */
static int storeMemWrite(ColvecFile *pFile, const void *pBuf, int64_t n,
                         int64_t iOff, ColvecErr *pErr) {
  OsMemHandle *pH = (OsMemHandle *)pFile->pMem;
  OsMemNode *p = pH->pNode;
  int rc = COLVEC_OK;
  if (n == 0) return COLVEC_OK;
  osMemEnter();
  if (!pH->bWrite) {
    rc = osMemErr(pErr, EBADF, "write", pFile->zPath);
  } else if (p->nMap > 0) {
    rc = osMemErr(pErr, EBUSY, "write", pFile->zPath);
  } else if (osMemGrow(p, iOff + n) != COLVEC_OK) {
    colvecErrSet(pErr, 0, "colvec: out of memory writing \"%s\"", pFile->zPath);
    rc = COLVEC_NOMEM;
  } else {
    if (iOff > p->n) memset(p->a + p->n, 0, (size_t)(iOff - p->n));
    memcpy(p->a + iOff, pBuf, (size_t)n);
    if (iOff + n > p->n) p->n = iOff + n;
  }
  osMemLeave();
  return rc;
}

/*
** Sets the size of an empty memory file opened read/write to exactly n
** bytes in one allocation (contents undefined) and sets *ppData to its
** first byte, which the caller fills before it maps or closes the file;
** the store's xWriteInPlace. Returns COLVEC_OK, COLVEC_NOMEM, or
** COLVEC_IOERR (EBADF: read-only; EBUSY: mapped or not empty).
*/
static int storeMemSetSize(ColvecFile *pFile, int64_t n, void **ppData,
                           ColvecErr *pErr) {
  OsMemHandle *pH = (OsMemHandle *)pFile->pMem;
  OsMemNode *p = pH->pNode;
  int rc = COLVEC_OK;
  *ppData = NULL;
  if (n < 0) {
    colvecErrSet(pErr, 0, "colvec: bad write range in \"%s\"", pFile->zPath);
    return COLVEC_RANGE;
  }
  osMemEnter();
  if (!pH->bWrite) {
    rc = osMemErr(pErr, EBADF, "write", pFile->zPath);
  } else if (p->nMap > 0 || p->n > 0) {
    rc = osMemErr(pErr, EBUSY, "write", pFile->zPath);
  } else if (osMemGrow(p, n) != COLVEC_OK) {
    colvecErrSet(pErr, 0, "colvec: out of memory writing \"%s\"", pFile->zPath);
    rc = COLVEC_NOMEM;
  } else {
    p->n = n;
    *ppData = p->a;
  }
  osMemLeave();
  return rc;
}

/*
** Stores the size of a memory file in *pnByte; a memory file has no
** identity on disk (*pId, when given, is zeroed: bValid 0). See
** colvecOsFileStat().
*/
static int storeMemFileStat(ColvecFile *pFile, int64_t *pnByte,
                            ColvecFileId *pId, ColvecErr *pErr) {
  (void)pErr;
  if (pId) memset(pId, 0, sizeof(*pId));
  osMemEnter();
  *pnByte = ((OsMemHandle *)pFile->pMem)->pNode->n;
  osMemLeave();
  return COLVEC_OK;
}

static int storeMemRename(const char *zFrom, const char *zTo, ColvecErr *pErr);

/* Renames a memory file to a name that must not exist; see
** colvecOsRenameNew(). */
static int storeMemRenameNew(const char *zFrom, const char *zTo,
                             ColvecErr *pErr) {
  char *z = osMemNorm(zTo, pErr); /* out of memory is not "it exists" */
  OsMemNode *p;
  if (z == NULL) return COLVEC_NOMEM;
  osMemEnter();
  p = osMemFind(z);
  osMemLeave();
  colvecFree(z);
  if (p) return osMemErr(pErr, EEXIST, "rename (the new name exists)", zTo);
  return storeMemRename(zFrom, zTo, pErr);
}

/* Renames a memory file, replacing the target; see colvecOsRename(). */
static int storeMemRename(const char *zFrom, const char *zTo, ColvecErr *pErr) {
  char *zF = osMemNorm(zFrom, pErr);
  char *zT = zF ? osMemNorm(zTo, pErr) : NULL;
  int rc = COLVEC_OK;
  OsMemNode *pSrc, *pDst;
  if (zT == NULL) {
    colvecFree(zF);
    return COLVEC_NOMEM;
  }
  osMemEnter();
  pSrc = osMemFind(zF);
  pDst = osMemFind(zT);
  if (pSrc == NULL) {
    rc = osMemErr(pErr, ENOENT, "rename", zFrom);
  } else if (!storeMemIs(zTo) || !osMemParentOk(zT)) {
    rc = osMemErr(pErr, ENOENT, "rename", zFrom);
  } else if (pSrc->bDir || (pDst && pDst->bDir)) {
    rc = osMemErr(pErr, EISDIR, "rename", zFrom);
  } else if (pSrc != pDst) {
    if (pDst) osMemUnlinkNode(pDst);
    colvecFree(pSrc->zPath);
    pSrc->zPath = zT;
    zT = NULL;
  }
  osMemLeave();
  colvecFree(zF);
  colvecFree(zT);
  return rc;
}

/* Removes a memory file (a missing one is fine); see colvecOsUnlink(). */
static int storeMemUnlink(const char *zPath, ColvecErr *pErr) {
  char *z = osMemNorm(zPath, pErr);
  OsMemNode *p;
  int rc = COLVEC_OK;
  if (z == NULL) return COLVEC_NOMEM;
  osMemEnter();
  p = osMemFind(z);
  if (p && p->bDir) {
    rc = osMemErr(pErr, EISDIR, "remove", zPath);
  } else if (p) {
    osMemUnlinkNode(p);
  }
  osMemLeave();
  colvecFree(z);
  return rc;
}

/* Says what is at a memory path (COLVEC_OS_*); see colvecOsKind(). */
static int storeMemKind(const char *zPath) {
  char *z = osMemNorm(zPath, NULL);
  OsMemNode *p;
  int eKind;
  if (z == NULL) return COLVEC_OS_OTHER;
  if (strcmp(z, COLVEC_STORE_MEM_ROOT) == 0) {
    colvecFree(z);
    return COLVEC_OS_DIR;
  }
  osMemEnter();
  p = osMemFind(z);
  eKind = p == NULL ? COLVEC_OS_NONE
          : p->bDir ? COLVEC_OS_DIR
                    : COLVEC_OS_OTHER;
  osMemLeave();
  colvecFree(z);
  return eKind;
}

/*
** Creates memory folder zDir: with bParents every missing parent too and
** an existing folder is fine (colvecOsMkdirUp()); without, the parent must
** exist and anything at zDir gives COLVEC_ERROR (colvecOsMkdir()).
*/
static int storeMemMkdir(const char *zDir, int bParents, ColvecErr *pErr) {
  char *z = osMemNorm(zDir, pErr);
  size_t n, i, nRoot = sizeof(COLVEC_STORE_MEM_ROOT) - 1;
  int rc = COLVEC_OK;
  if (z == NULL) return COLVEC_NOMEM;
  n = strlen(z);
  osMemEnter();
  /* each prefix that ends before a '/' after the root, then the whole */
  for (i = bParents ? nRoot + 1 : n; i <= n && rc == COLVEC_OK; i++) {
    OsMemNode *p;
    char *zPart;
    if (i < n && z[i] != '/') continue;
    z[i] = 0;
    p = osMemFind(z);
    if (p && !p->bDir) {
      rc = osMemErr(pErr, ENOTDIR, "create folder", z);
    } else if (p && !bParents) {
      rc = COLVEC_ERROR; /* something is there: the caller tries another */
    } else if (p == NULL && i > nRoot) {
      if (!osMemParentOk(z)) {
        rc = osMemErr(pErr, ENOENT, "create folder", z);
      } else {
        zPart = (char *)colvecMalloc((int64_t)i + 1);
        if (zPart) memcpy(zPart, z, i + 1);
        if (zPart == NULL || osMemAdd(zPart, 1) == NULL) {
          colvecErrSet(pErr, 0, "colvec: out of memory creating \"%s\"", zDir);
          rc = COLVEC_NOMEM;
        }
      }
    }
    if (i < n) z[i] = '/';
  }
  osMemLeave();
  colvecFree(z);
  return rc;
}

/*
** Returns non-zero when normalized path zChild lies directly in folder zDir
** (nDir bytes); with bDeep, anywhere below it.
*/
static int osMemIsBelow(const char *zChild, const char *zDir, size_t nDir,
                        int bDeep) {
  if (strncmp(zChild, zDir, nDir) != 0 || zChild[nDir] != '/') return 0;
  return bDeep || strchr(zChild + nDir + 1, '/') == NULL;
}

/* Removes an empty memory folder; see colvecOsRmdir(). */
static int storeMemRmdir(const char *zDir, ColvecErr *pErr) {
  char *z = osMemNorm(zDir, pErr);
  OsMemNode *p, *pDir = NULL;
  size_t n;
  int rc = COLVEC_OK;
  if (z == NULL) return COLVEC_NOMEM;
  n = strlen(z);
  osMemEnter();
  for (p = osMemList; p && rc == COLVEC_OK; p = p->pNext) {
    if (strcmp(p->zPath, z) == 0) pDir = p;
    if (osMemIsBelow(p->zPath, z, n, 0)) {
      rc = osMemErr(pErr, ENOTEMPTY, "remove folder", zDir);
    }
  }
  if (rc == COLVEC_OK && pDir && !pDir->bDir) {
    rc = osMemErr(pErr, ENOTDIR, "remove folder", zDir);
  } else if (rc == COLVEC_OK && pDir) {
    osMemUnlinkNode(pDir);
  }
  osMemLeave();
  colvecFree(z);
  return rc;
}

/* Lists a memory folder, sorted; see colvecOsListDir(). */
static int storeMemListDir(const char *zDir, const char *zSuffix,
                           char ***pazName, int *pnName, ColvecErr *pErr) {
  char *z = osMemNorm(zDir, pErr);
  ColvecOsList list;
  size_t n;
  int rc = COLVEC_OK;
  OsMemNode *p;
  *pazName = NULL;
  *pnName = 0;
  if (z == NULL) return COLVEC_NOMEM;
  n = strlen(z);
  colvecOsListInit(&list, zSuffix);
  osMemEnter();
  p = osMemFind(z);
  if (strcmp(z, COLVEC_STORE_MEM_ROOT) != 0 && (p == NULL || !p->bDir)) {
    rc = osMemErr(pErr, p ? ENOTDIR : ENOENT, "list folder", zDir);
  }
  for (p = osMemList; p && rc == COLVEC_OK; p = p->pNext) {
    if (!osMemIsBelow(p->zPath, z, n, 0)) continue;
    rc = colvecOsListAdd(&list, p->zPath + n + 1, strlen(p->zPath + n + 1));
  }
  osMemLeave();
  colvecFree(z);
  return colvecOsListFinish(&list, rc, zDir, pErr, pazName, pnName);
}

/*
** Removes memory path zDir and everything below it; see
** colvecOsRemoveTree(). A path shorter than 256 bytes is normalized on the
** stack, so that freeing a connection's tree at close never fails; a
** longer one can fail with COLVEC_NOMEM.
*/
static int storeMemRemoveTree(const char *zDir, ColvecErr *pErr) {
  char zBuf[256];
  char *z = zBuf, *zHeap = NULL;
  OsMemNode *p, *pNext;
  size_t n = strlen(zDir), i;
  (void)pErr;
  if (n < sizeof(zBuf)) {
    for (i = 0; i <= n; i++)
      zBuf[i] = zDir[i] == '\\' ? '/' : zDir[i];
    while (n > 0 && zBuf[n - 1] == '/')
      zBuf[--n] = 0;
  } else {
    z = zHeap = osMemNorm(zDir, NULL);
    if (z == NULL) return COLVEC_NOMEM;
    n = strlen(z);
  }
  osMemEnter();
  for (p = osMemList; p; p = pNext) {
    pNext = p->pNext;
    if (strcmp(p->zPath, z) == 0 || osMemIsBelow(p->zPath, z, n, 1)) {
      osMemUnlinkNode(p);
    }
  }
  osMemLeave();
  colvecFree(zHeap);
  return COLVEC_OK;
}

/*
** "Maps" a memory file: the mapping points at its bytes and holds a
** reference on them, so that unlinking the file keeps them readable; see
** colvecOsMapOpen().
*/
static int storeMemMapOpen(ColvecFile *pFile, int64_t nByte, int ePrefault,
                           ColvecMap **ppMap, ColvecErr *pErr) {
  (void)ePrefault; /* the bytes are in memory already */
  OsMemNode *p = ((OsMemHandle *)pFile->pMem)->pNode;
  ColvecMap *pMap = (ColvecMap *)colvecMalloc(sizeof(ColvecMap));
  int rc = COLVEC_OK;
  *ppMap = NULL;
  if (pMap == NULL) {
    colvecErrSet(pErr, 0, "colvec: out of memory mapping \"%s\"", pFile->zPath);
    return COLVEC_NOMEM;
  }
  memset(pMap, 0, sizeof(*pMap));
  osMemEnter();
  if (nByte < 0 || nByte > p->n) {
    rc = osMemErr(pErr, EINVAL, "map", pFile->zPath);
  } else {
    p->nRef++;
    p->nMap++;
    pMap->a = nByte > 0 ? p->a : NULL;
    pMap->n = nByte;
    pMap->pMem = p;
  }
  osMemLeave();
  if (rc != COLVEC_OK) {
    colvecFree(pMap);
    return rc;
  }
  *ppMap = pMap;
  return COLVEC_OK;
}

/* Releases a mapping of a memory file; see colvecOsMapClose(). */
static void storeMemMapClose(ColvecMap *pMap) {
  if (pMap == NULL) return;
  OsMemNode *p = (OsMemNode *)pMap->pMem;
  osMemEnter();
  p->nMap--;
  osMemUnref(p);
  osMemLeave();
  colvecFree(pMap);
}

/* Nothing to make durable in memory: a sync of a file or folder is a no-op
** that succeeds. */
static int storeMemSync(ColvecFile *pFile, ColvecErr *pErr) {
  (void)pFile;
  (void)pErr;
  return COLVEC_OK;
}

/* As storeMemSync(), for the folder (or parent folder) of a path. */
static int storeMemSyncPath(const char *zPath, ColvecErr *pErr) {
  (void)zPath;
  (void)pErr;
  return COLVEC_OK;
}

/* Memory advice on the bytes of a memory file: nothing to advise. */
static int storeMemMapAdvise(ColvecMap *pMap, int64_t iOff, int64_t n,
                             int eAdvice, ColvecErr *pErr) {
  (void)pMap;
  (void)iOff;
  (void)n;
  (void)eAdvice;
  (void)pErr;
  return COLVEC_OK;
}

/* A memory path is its own canonical form: returns a copy (colvecMalloc,
** caller frees), or NULL when out of memory. See colvecOsRealPath(). */
static char *storeMemRealPath(const char *zPath) {
  return colvecOsStrndup(zPath, strlen(zPath));
}

/* Creates memory folder zDir, whose parent must exist; see colvecOsMkdir(). */
static int storeMemMkdirOne(const char *zDir, ColvecErr *pErr) {
  return storeMemMkdir(zDir, 0, pErr);
}

/*
** Creates memory folder zDir and all its missing parents, whatever nUp
** (the memory tree is colvec's own); see colvecOsMkdirUp().
*/
static int storeMemMkdirUp(const char *zDir, int nUp, ColvecErr *pErr) {
  (void)nUp;
  return storeMemMkdir(zDir, 1, pErr);
}

/* Files in a process-wide tree in memory; see colvec_store.h. */
const ColvecStore colvecStoreMem = {
    "memory", /* zName */
    0,        /* bDurable */
    storeMemOpen,
    storeMemClose,
    storeMemRead,
    storeMemWrite,
    storeMemSetSize,
    storeMemSync,
    storeMemFileStat,
    storeMemMapOpen,
    storeMemMapAdvise,
    storeMemMapClose,
    storeMemSyncPath,
    storeMemSyncPath,
    storeMemRename,
    storeMemRenameNew,
    storeMemRealPath,
    storeMemUnlink,
    storeMemKind,
    storeMemMkdirOne,
    storeMemMkdirUp,
    storeMemRmdir,
    storeMemListDir,
    storeMemRemoveTree,
};
