/*
** colvec_os_mem.h — memory folders: the part of the file layer that keeps
** files in memory (SQLite-free, no system call). Only the file layer
** (colvec_os*.c) includes this header; the rest of colvec reaches memory
** folders through the ordinary calls of colvec_os.h with a path under
** COLVEC_OS_MEMROOT.
**
** A path whose first component is COLVEC_OS_MEMROOT ("<memory>") names a
** file or folder in a process-wide tree held in memory. Files are byte
** arrays (colvecMalloc'd, the first byte 64-byte aligned) that grow as they
** are written; folders are names. The operations behave as their POSIX
** counterparts do on a local disk: creating a file needs its folder,
** rename replaces the target, unlink removes the name while open files and
** mappings keep the bytes until the last of them is closed, rmdir refuses a
** folder that is not empty. fsync of a file or folder does nothing. The
** "root" itself always exists. '/' and '\' both separate components.
**
** A mapping of a memory file is a pointer to its bytes (no copy): a file is
** not written while it is mapped (the write fails with EBUSY).
**
** One process-wide lock guards the tree; calls are short (no I/O). Each
** function returns what its colvec_os.h counterpart returns, with errno
** values in ColvecErr as the system would give them (ENOENT, EEXIST,
** ENOTDIR, EISDIR, ENOTEMPTY, EBADF, EBUSY), and COLVEC_NOMEM when memory
** runs out. The test hook of colvec_os.h does not see these calls: they do
** not touch the file system.
*/
#ifndef COLVEC_OS_MEM_H
#define COLVEC_OS_MEM_H

#include "colvec_os.h"

int colvecOsMemOpen(const char *zPath, int flags, ColvecFile **ppFile,
                    ColvecErr *pErr);
int colvecOsMemClose(ColvecFile *pFile);
int colvecOsMemRead(ColvecFile *pFile, void *pBuf, int64_t n, int64_t iOff,
                    ColvecErr *pErr);
int colvecOsMemWrite(ColvecFile *pFile, const void *pBuf, int64_t n,
                     int64_t iOff, ColvecErr *pErr);
int colvecOsMemFileSize(ColvecFile *pFile, int64_t *pnByte);
int colvecOsMemSetSize(ColvecFile *pFile, int64_t n, void **ppData,
                       ColvecErr *pErr);
int colvecOsMemRename(const char *zFrom, const char *zTo, ColvecErr *pErr);
int colvecOsMemRenameNew(const char *zFrom, const char *zTo, ColvecErr *pErr);
int colvecOsMemUnlink(const char *zPath, ColvecErr *pErr);
int colvecOsMemKind(const char *zPath);
int colvecOsMemMkdir(const char *zDir, int bParents, ColvecErr *pErr);
int colvecOsMemRmdir(const char *zDir, ColvecErr *pErr);
int colvecOsMemListDir(const char *zDir, const char *zSuffix, char ***pazName,
                       int *pnName, ColvecErr *pErr);
int colvecOsMemRemoveTree(const char *zDir);
int colvecOsMemMapOpen(ColvecFile *pFile, int64_t nByte, ColvecMap **ppMap,
                       ColvecErr *pErr);
void colvecOsMemMapClose(ColvecMap *pMap);

#endif /* COLVEC_OS_MEM_H */
