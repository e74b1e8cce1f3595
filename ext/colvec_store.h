/*
** colvec_store.h — where a segment's bytes live (SQLite-free).
**
** A ColvecStore is a methods table, as SQLite's sqlite3_vfs is: every
** call colvec makes on segment files and their folders goes through the
** store of the table it works for, never through a test on the path. Two
** stores exist, one file each:
**
**   colvecStoreFile (colvec_store_file.c): sidecar files on disk, through
**     the os layer (colvec_os.h, POSIX or Win32). The I/O test hook of the
**     os layer sees every call.
**   colvecStoreMem (colvec_store_mem.c): a process-wide tree of folders and
**     files held in memory, for databases without a file (":memory:",
**     temporary databases, SQLite's memdb VFS). fsync does nothing, a
**     mapping is a pointer to the bytes (no copy), no system call is made
**     and the test hook sees nothing.
**
** Both behave as a POSIX file system on a local disk does: creating a file
** needs its folder, rename replaces the target (xRenameNew refuses an
** existing one), unlink keeps the bytes of open files and mappings, rmdir
** refuses a folder that is not empty. Every method returns what its
** colvecOs* counterpart in colvec_os.h returns (COLVEC_OK, COLVEC_IOERR,
** COLVEC_NOMEM, COLVEC_RANGE, COLVEC_ERROR where documented there, with
** the reason in the optional ColvecErr). A file or mapping is used only
** with the store that made it.
**
** Adding a store (say, a read-only one over HTTP range requests) is one
** new file defining one more ColvecStore, and one line where a table
** picks its store (colvecFolderDbStore() in colvec_folder.c).
*/
#ifndef COLVEC_STORE_H
#define COLVEC_STORE_H

#include "colvec_os.h"

typedef struct ColvecStore ColvecStore;

/*
** The name the memory store gives its root folder. Paths of the memory
** store start with it; it appears in messages about memory files, which
** colvec rewrites before users see them (colvecFolderUserMessage()).
*/
#define COLVEC_STORE_MEM_ROOT "<memory>"

/* The methods of one store; see the header comment and colvec_os.h. */
struct ColvecStore {
  const char *zName; /* "file", "memory": for messages and tests */
  int bDurable;      /* 1: a sync reaches stable storage (0: no-op) */
  /* files */
  int (*xOpen)(const char *zPath, int flags, ColvecFile **ppFile,
               ColvecErr *pErr);                     /* colvecOsOpen() */
  int (*xClose)(ColvecFile *pFile, ColvecErr *pErr); /* colvecOsClose() */
  int (*xRead)(ColvecFile *pFile, void *pBuf, int64_t n, int64_t iOff,
               ColvecErr *pErr); /* colvecOsRead() */
  int (*xWrite)(ColvecFile *pFile, const void *pBuf, int64_t n, int64_t iOff,
                ColvecErr *pErr); /* colvecOsWrite() */
  /* offers a file just created empty for filling in place: a memory file
  ** is sized to n bytes at once and *ppData points at its bytes, which the
  ** caller writes before it maps, syncs or closes the file; the file store
  ** sets *ppData to NULL and the caller uses xWrite. COLVEC_RANGE for a
  ** negative n. */
  int (*xWriteInPlace)(ColvecFile *pFile, int64_t n, void **ppData,
                       ColvecErr *pErr);
  int (*xSync)(ColvecFile *pFile, ColvecErr *pErr); /* colvecOsSync() */
  int (*xFileStat)(ColvecFile *pFile, int64_t *pnByte, ColvecFileId *pId,
                   ColvecErr *pErr); /* colvecOsFileStat() */
  /* read-only mappings */
  int (*xMapOpen)(ColvecFile *pFile, int64_t nByte, int ePrefault,
                  ColvecMap **ppMap, ColvecErr *pErr); /* colvecOsMapOpen() */
  int (*xMapAdvise)(ColvecMap *pMap, int64_t iOff, int64_t n, int eAdvice,
                    ColvecErr *pErr); /* colvecOsMapAdvise() */
  void (*xMapClose)(ColvecMap *pMap); /* colvecOsMapClose() */
  /* paths and folders */
  int (*xSyncDir)(const char *zDir, ColvecErr *pErr); /* colvecOsSyncDir() */
  int (*xSyncParent)(const char *zPath,
                     ColvecErr *pErr); /* colvecOsSyncParent() */
  int (*xRename)(const char *zFrom, const char *zTo,
                 ColvecErr *pErr); /* colvecOsRename() */
  int (*xRenameNew)(const char *zFrom, const char *zTo,
                    ColvecErr *pErr);                 /* colvecOsRenameNew() */
  char *(*xRealPath)(const char *zPath);              /* colvecOsRealPath() */
  int (*xUnlink)(const char *zPath, ColvecErr *pErr); /* colvecOsUnlink() */
  int (*xKind)(const char *zPath);                    /* colvecOsKind() */
  int (*xMkdir)(const char *zDir, ColvecErr *pErr);   /* colvecOsMkdir() */
  int (*xMkdirUp)(const char *zDir, int nUp,
                  ColvecErr *pErr);                 /* colvecOsMkdirUp() */
  int (*xRmdir)(const char *zDir, ColvecErr *pErr); /* colvecOsRmdir() */
  int (*xListDir)(const char *zDir, const char *zSuffix, char ***pazName,
                  int *pnName, ColvecErr *pErr); /* colvecOsListDir() */
  int (*xRemoveTree)(const char *zDir,
                     ColvecErr *pErr); /* colvecOsRemoveTree() */
};

/* Sidecar files on disk (colvec_store_file.c). */
extern const ColvecStore colvecStoreFile;

/* Files in a process-wide tree in memory (colvec_store_mem.c). */
extern const ColvecStore colvecStoreMem;

#endif /* COLVEC_STORE_H */
