/*
** colvec_os_win.c — Win32 implementation of the file layer in colvec_os.h
** (Windows 8 and later; cross-compiled with mingw-w64 and tested under
** wine). See the header for the contract shared by every function:
** COLVEC_OK or an error code, and a "colvec: ..." message naming the file
** in the optional ColvecErr. What the platforms share (messages, the test
** hook, sorting names, CPU features) is in colvec_os.c.
**
** Paths are UTF-8, as SQLite gives them, and converted to UTF-16 for the
** W functions; '/' and '\' both separate. Windows errors are mapped to the
** errno values the callers test (ENOENT, ENOSPC, ENOMEM, ...), and the
** message carries both.
**
** Files are opened without FILE_SHARE_DELETE, and a mapping keeps a handle
** on its file until it is unmapped: a file that is open or mapped anywhere
** cannot be deleted or renamed over (as on Windows itself, whose mapped
** files refuse deletion), so colvecOsUnlink() fails and the caller defers
** the delete (colvecCompactCleanup keeps its trash rows and tries again).
*/
#include "colvec_os.h"

#if defined(_WIN32)

#include <errno.h>
#include <process.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

/* Largest number of bytes handed to one ReadFile()/WriteFile() call. */
#define OSWIN_MAX_IO ((int64_t)1 << 30)

/*************************************************************************
** Errors and paths.
*/

/* The errno value closest to Windows error code e. */
static int osWinErrno(DWORD e) {
  switch (e) {
  case ERROR_FILE_NOT_FOUND:
  case ERROR_PATH_NOT_FOUND:
  case ERROR_INVALID_DRIVE:
  case ERROR_BAD_NETPATH:
  case ERROR_BAD_NET_NAME:
    return ENOENT;
  case ERROR_DISK_FULL:
  case ERROR_HANDLE_DISK_FULL:
    return ENOSPC;
  case ERROR_NOT_ENOUGH_MEMORY:
  case ERROR_OUTOFMEMORY:
  case ERROR_COMMITMENT_LIMIT:
    return ENOMEM;
  case ERROR_ACCESS_DENIED:
  case ERROR_SHARING_VIOLATION:
  case ERROR_LOCK_VIOLATION:
  case ERROR_WRITE_PROTECT:
    return EACCES;
  case ERROR_FILE_EXISTS:
  case ERROR_ALREADY_EXISTS:
    return EEXIST;
  case ERROR_DIR_NOT_EMPTY:
    return ENOTEMPTY;
  case ERROR_TOO_MANY_OPEN_FILES:
    return EMFILE;
  case ERROR_DIRECTORY:
    return ENOTDIR;
  case ERROR_INVALID_NAME:
  case ERROR_FILENAME_EXCED_RANGE:
    return ENAMETOOLONG;
  default:
    return EIO;
  }
}

/*
** Records the failure of operation zOp on zPath, whose Windows error code
** is GetLastError(), in pErr (errno set to the closest value, the message
** naming both) and returns COLVEC_IOERR (COLVEC_NOMEM for ENOMEM is the
** caller's choice, as on POSIX).
*/
static int osWinIoErr(ColvecErr *pErr, const char *zOp, const char *zPath) {
  DWORD e = GetLastError();
  int iErrno = osWinErrno(e);
  colvecErrSet(pErr, iErrno, "colvec: cannot %s \"%s\" (Windows error %lu)",
               zOp, zPath, (unsigned long)e);
  errno = iErrno;
  return COLVEC_IOERR;
}

/*
** Returns zPath converted from UTF-8 to a NUL-terminated UTF-16 string
** from colvecMalloc (the caller frees it with colvecFree), or NULL with a
** message in pErr: COLVEC_NOMEM or COLVEC_RANGE (not UTF-8) in *pRc.
*/
static wchar_t *osWinWide(const char *zPath, ColvecErr *pErr, int *pRc) {
  int n =
      MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, zPath, -1, NULL, 0);
  wchar_t *zW;
  if (n <= 0) {
    colvecErrSet(pErr, 0, "colvec: path \"%s\" is not valid UTF-8", zPath);
    *pRc = COLVEC_RANGE;
    return NULL;
  }
  zW = (wchar_t *)colvecMalloc((int64_t)n * (int64_t)sizeof(wchar_t));
  if (zW == NULL) {
    colvecErrSet(pErr, 0, "colvec: out of memory converting \"%s\"", zPath);
    *pRc = COLVEC_NOMEM;
    return NULL;
  }
  MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, zPath, -1, zW, n);
  return zW;
}

/*
** Returns the UTF-16 string zW converted to UTF-8 from colvecMalloc (freed
** with colvecFree), or NULL when out of memory or not convertible.
*/
static char *osWinUtf8(const wchar_t *zW) {
  int n = WideCharToMultiByte(CP_UTF8, 0, zW, -1, NULL, 0, NULL, NULL);
  char *z;
  if (n <= 0) return NULL;
  z = (char *)colvecMalloc(n);
  if (z) WideCharToMultiByte(CP_UTF8, 0, zW, -1, z, n, NULL, NULL);
  return z;
}

/* Non-zero when c separates path components ('/' or '\'). */
static int osWinIsSep(char c) { return c == '/' || c == '\\'; }

/*
** Returns GetFileAttributesW() of zPath, or INVALID_FILE_ATTRIBUTES with
** GetLastError() set (ERROR_NOT_ENOUGH_MEMORY when the path could not be
** converted).
*/
static DWORD osWinAttributes(const char *zPath) {
  int rc = COLVEC_OK;
  wchar_t *zW = osWinWide(zPath, NULL, &rc);
  DWORD a;
  if (zW == NULL) {
    SetLastError(rc == COLVEC_NOMEM ? ERROR_NOT_ENOUGH_MEMORY
                                    : ERROR_INVALID_NAME);
    return INVALID_FILE_ATTRIBUTES;
  }
  a = GetFileAttributesW(zW);
  if (a == INVALID_FILE_ATTRIBUTES) {
    DWORD e = GetLastError();
    colvecFree(zW);
    SetLastError(e);
  } else {
    colvecFree(zW);
  }
  return a;
}

/*************************************************************************
** Files.
*/

/*
** Opens zPath according to flags (COLVEC_OPEN_*); see colvec_os.c for the
** contract. Files are shared for reading and writing but not for delete,
** so that a file in use is never deleted or renamed over. A folder or a
** device named like a file gives COLVEC_CORRUPT ("is not a regular file").
*/
int colvecOsOpen(const char *zPath, int flags, ColvecFile **ppFile,
                 ColvecErr *pErr) {
  DWORD dwAccess, dwCreate;
  ColvecFile *pFile;
  wchar_t *zW;
  HANDLE h;
  int rc = COLVEC_OK;

  *ppFile = NULL;
  if ((flags & COLVEC_OPEN_READONLY) && !(flags & COLVEC_OPEN_READWRITE) &&
      !(flags & COLVEC_OPEN_CREATE)) {
    dwAccess = GENERIC_READ;
    dwCreate = OPEN_EXISTING;
  } else if ((flags & COLVEC_OPEN_READWRITE) &&
             !(flags & COLVEC_OPEN_READONLY)) {
    dwAccess = GENERIC_READ | GENERIC_WRITE;
    dwCreate = OPEN_EXISTING;
    if (flags & COLVEC_OPEN_CREATE) {
      dwCreate = (flags & COLVEC_OPEN_EXCLUSIVE) ? CREATE_NEW : CREATE_ALWAYS;
    }
  } else {
    colvecErrSet(pErr, 0, "colvec: bad open flags 0x%x for \"%s\"", flags,
                 zPath);
    return COLVEC_RANGE;
  }
  {
    int iFault = colvecOsHookBefore(COLVEC_OSOP_OPEN, zPath, NULL, flags, NULL);
    if (iFault) return colvecOsErrnoErr(pErr, iFault, "open", zPath);
  }
  zW = osWinWide(zPath, pErr, &rc);
  if (zW == NULL) return rc;
  pFile = (ColvecFile *)colvecMalloc(sizeof(ColvecFile));
  if (pFile) {
    pFile->zPath = colvecOsStrndup(zPath, strlen(zPath));
  }
  if (pFile == NULL || pFile->zPath == NULL) {
    colvecFree(pFile);
    colvecFree(zW);
    colvecErrSet(pErr, 0, "colvec: out of memory opening \"%s\"", zPath);
    return COLVEC_NOMEM;
  }
  h = CreateFileW(zW, dwAccess, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                  dwCreate, FILE_ATTRIBUTE_NORMAL, NULL);
  if (h == INVALID_HANDLE_VALUE) {
    DWORD e = GetLastError();
    DWORD a = GetFileAttributesW(zW);
    if (e == ERROR_ACCESS_DENIED && a != INVALID_FILE_ATTRIBUTES &&
        (a & FILE_ATTRIBUTE_DIRECTORY)) {
      colvecErrSet(pErr, 0, "colvec: \"%s\" is not a regular file", zPath);
      rc = COLVEC_CORRUPT;
    } else {
      SetLastError(e);
      rc = osWinIoErr(pErr, "open", zPath);
    }
  } else if (GetFileType(h) != FILE_TYPE_DISK) {
    CloseHandle(h);
    colvecErrSet(pErr, 0, "colvec: \"%s\" is not a regular file", zPath);
    rc = COLVEC_CORRUPT;
  }
  colvecFree(zW);
  if (rc != COLVEC_OK) {
    colvecFree(pFile->zPath);
    colvecFree(pFile);
    return rc;
  }
  pFile->hFile = (void *)h;
  *ppFile = pFile;
  colvecOsHookAfter(COLVEC_OSOP_OPEN, zPath, NULL, flags, 0);
  return COLVEC_OK;
}

/*
** Closes pFile and frees it (NULL is a no-op). Returns COLVEC_IOERR when
** CloseHandle() fails (the object is freed all the same).
*/
int colvecOsClose(ColvecFile *pFile, ColvecErr *pErr) {
  int rc = COLVEC_OK, iFault;
  if (pFile == NULL) return COLVEC_OK;
  iFault = colvecOsHookBefore(COLVEC_OSOP_CLOSE, pFile->zPath, NULL, 0, NULL);
  if (!CloseHandle((HANDLE)pFile->hFile)) {
    rc = osWinIoErr(pErr, "close", pFile->zPath);
  } else if (iFault) {
    rc = colvecOsErrnoErr(pErr, iFault, "close", pFile->zPath);
  } else {
    colvecOsHookAfter(COLVEC_OSOP_CLOSE, pFile->zPath, NULL, 0, 0);
  }
  colvecFree(pFile->zPath);
  colvecFree(pFile);
  return rc;
}

/* An OVERLAPPED that positions a synchronous ReadFile/WriteFile at iOff. */
static OVERLAPPED osWinAt(int64_t iOff) {
  OVERLAPPED ov;
  memset(&ov, 0, sizeof(ov));
  ov.Offset = (DWORD)((uint64_t)iOff & 0xffffffffu);
  ov.OffsetHigh = (DWORD)((uint64_t)iOff >> 32);
  return ov;
}

/*
** Reads exactly n bytes at offset iOff into pBuf, looping over short
** reads. Reaching the end of the file first is COLVEC_IOERR ("short
** read"); a negative n or iOff is COLVEC_RANGE.
*/
int colvecOsRead(ColvecFile *pFile, void *pBuf, int64_t n, int64_t iOff,
                 ColvecErr *pErr) {
  uint8_t *p = (uint8_t *)pBuf;
  if (n < 0 || iOff < 0) {
    colvecErrSet(pErr, 0, "colvec: bad read range in \"%s\"", pFile->zPath);
    return COLVEC_RANGE;
  }
  {
    int iFault =
        colvecOsHookBefore(COLVEC_OSOP_READ, pFile->zPath, NULL, iOff, NULL);
    if (iFault) return colvecOsErrnoErr(pErr, iFault, "read", pFile->zPath);
  }
  while (n > 0) {
    DWORD nTry = (DWORD)(n < OSWIN_MAX_IO ? n : OSWIN_MAX_IO), nGot = 0;
    OVERLAPPED ov = osWinAt(iOff);
    if (!ReadFile((HANDLE)pFile->hFile, p, nTry, &nGot, &ov)) {
      if (GetLastError() != ERROR_HANDLE_EOF) {
        return osWinIoErr(pErr, "read", pFile->zPath);
      }
      nGot = 0;
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
** writes. Returns COLVEC_IOERR on failure (disk full included).
*/
int colvecOsWrite(ColvecFile *pFile, const void *pBuf, int64_t n, int64_t iOff,
                  ColvecErr *pErr) {
  const uint8_t *p = (const uint8_t *)pBuf;
  int64_t nAll = n, iOff0 = iOff, nAllow = n;
  int iFault;
  if (n < 0 || iOff < 0) {
    colvecErrSet(pErr, 0, "colvec: bad write range in \"%s\"", pFile->zPath);
    return COLVEC_RANGE;
  }
  iFault =
      colvecOsHookBefore(COLVEC_OSOP_WRITE, pFile->zPath, NULL, iOff, &nAllow);
  if (iFault && nAllow >= 0 && nAllow < n) n = nAllow; /* short write */
  if (iFault && n == nAll) n = 0;
  while (n > 0) {
    DWORD nTry = (DWORD)(n < OSWIN_MAX_IO ? n : OSWIN_MAX_IO), nPut = 0;
    OVERLAPPED ov = osWinAt(iOff);
    if (!WriteFile((HANDLE)pFile->hFile, p, nTry, &nPut, &ov)) {
      return osWinIoErr(pErr, "write", pFile->zPath);
    }
    if (nPut == 0) return colvecOsErrnoErr(pErr, ENOSPC, "write", pFile->zPath);
    p += nPut;
    n -= nPut;
    iOff += nPut;
  }
  if (iFault) return colvecOsErrnoErr(pErr, iFault, "write", pFile->zPath);
  colvecOsHookAfter(COLVEC_OSOP_WRITE, pFile->zPath, NULL, iOff0, nAll);
  return COLVEC_OK;
}

/* Makes the contents of pFile durable (FlushFileBuffers). */
int colvecOsSync(ColvecFile *pFile, ColvecErr *pErr) {
  int iFault =
      colvecOsHookBefore(COLVEC_OSOP_SYNC, pFile->zPath, NULL, 0, NULL);
  if (iFault) return colvecOsErrnoErr(pErr, iFault, "fsync", pFile->zPath);
  if (!FlushFileBuffers((HANDLE)pFile->hFile)) {
    return osWinIoErr(pErr, "fsync", pFile->zPath);
  }
  colvecOsHookAfter(COLVEC_OSOP_SYNC, pFile->zPath, NULL, 0, 0);
  return COLVEC_OK;
}

/* Stores the current size of pFile in bytes in *pnByte. */
int colvecOsFileSize(ColvecFile *pFile, int64_t *pnByte, ColvecErr *pErr) {
  return colvecOsFileStat(pFile, pnByte, NULL, pErr);
}

/* Nanoseconds since 1970 of a FILETIME-style count (100 ns since 1601). */
static int64_t osWinNs(uint64_t t) {
  return ((int64_t)t - (int64_t)116444736000000000LL) * 100;
}

/*
** Size and identity of pFile; see colvec_os.h. The identity is
** GetFileInformationByHandle's volume serial, file index and last-write
** time, and FileBasicInfo's change time.
*/
int colvecOsFileStat(ColvecFile *pFile, int64_t *pnByte, ColvecFileId *pId,
                     ColvecErr *pErr) {
  if (pId) memset(pId, 0, sizeof(*pId));
  LARGE_INTEGER sz;
  int iFault =
      colvecOsHookBefore(COLVEC_OSOP_SIZE, pFile->zPath, NULL, 0, NULL);
  *pnByte = 0;
  if (iFault) return colvecOsErrnoErr(pErr, iFault, "stat", pFile->zPath);
  if (!GetFileSizeEx((HANDLE)pFile->hFile, &sz)) {
    return osWinIoErr(pErr, "stat", pFile->zPath);
  }
  *pnByte = (int64_t)sz.QuadPart;
  if (pId) {
    BY_HANDLE_FILE_INFORMATION info;
    FILE_BASIC_INFO basic;
    if (!GetFileInformationByHandle((HANDLE)pFile->hFile, &info) ||
        !GetFileInformationByHandleEx((HANDLE)pFile->hFile, FileBasicInfo,
                                      &basic, sizeof(basic))) {
      return osWinIoErr(pErr, "stat", pFile->zPath);
    }
    pId->iDev = (uint64_t)info.dwVolumeSerialNumber;
    pId->iIno = ((uint64_t)info.nFileIndexHigh << 32) | info.nFileIndexLow;
    pId->nSize = (int64_t)sz.QuadPart;
    pId->iMtimeNs =
        osWinNs(((uint64_t)info.ftLastWriteTime.dwHighDateTime << 32) |
                info.ftLastWriteTime.dwLowDateTime);
    pId->iCtimeNs = osWinNs((uint64_t)basic.ChangeTime.QuadPart);
    pId->bValid = 1;
  }
  return COLVEC_OK;
}

/*************************************************************************
** Paths and folders.
*/

/*
** Makes the entries of folder zDir durable. NTFS journals its metadata
** and MoveFileExW is called with MOVEFILE_WRITE_THROUGH, so this opens the
** folder (FILE_FLAG_BACKUP_SEMANTICS) and flushes it where the system
** allows; a refusal to flush a folder (ERROR_ACCESS_DENIED, or
** ERROR_INVALID_FUNCTION on file systems without it) is not an error. A
** folder that cannot be opened is COLVEC_IOERR.
*/
int colvecOsSyncDir(const char *zDir, ColvecErr *pErr) {
  wchar_t *zW;
  HANDLE h;
  int rc = COLVEC_OK;
  int iFault = colvecOsHookBefore(COLVEC_OSOP_SYNCDIR, zDir, NULL, 0, NULL);
  if (iFault) return colvecOsErrnoErr(pErr, iFault, "fsync folder", zDir);
  zW = osWinWide(zDir, pErr, &rc);
  if (zW == NULL) return rc;
  h = CreateFileW(zW, GENERIC_READ | GENERIC_WRITE,
                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                  OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
  if (h == INVALID_HANDLE_VALUE) {
    h = CreateFileW(zW, GENERIC_READ,
                    FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                    NULL, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
  }
  if (h == INVALID_HANDLE_VALUE) {
    rc = osWinIoErr(pErr, "open folder", zDir);
  } else {
    if (!FlushFileBuffers(h)) {
      DWORD e = GetLastError();
      if (e != ERROR_ACCESS_DENIED && e != ERROR_INVALID_FUNCTION &&
          e != ERROR_INVALID_HANDLE) {
        rc = osWinIoErr(pErr, "fsync folder", zDir);
      }
    }
    CloseHandle(h);
  }
  colvecFree(zW);
  if (rc == COLVEC_OK) colvecOsHookAfter(COLVEC_OSOP_SYNCDIR, zDir, NULL, 0, 0);
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
  if (zBase == zPath + 1) return colvecOsSyncDir("\\", pErr);
  zDir = colvecOsStrndup(zPath, (size_t)(zBase - 1 - zPath));
  if (zDir == NULL) {
    colvecErrSet(pErr, 0, "colvec: out of memory syncing \"%s\"", zPath);
    return COLVEC_NOMEM;
  }
  rc = colvecOsSyncDir(zDir, pErr);
  colvecFree(zDir);
  return rc;
}

/*
** Returns the absolute path of zPath with "." and ".." resolved
** (colvecMalloc'd, colvecFree it), or NULL when that fails. A memory path
** is returned as is.
*/
char *colvecOsRealPath(const char *zPath) {
  char *zFull, *zOut;
  zFull = _fullpath(NULL, zPath, 0);
  if (zFull == NULL) return NULL;
  zOut = colvecOsStrndup(zFull, strlen(zFull));
  free(zFull);
  return zOut;
}

/*
** Moves zFrom to zTo with MoveFileExW and flags dwFlags (written through
** to the disk), through the I/O fault hook. Returns COLVEC_OK or an error.
*/
static int osWinMove(const char *zFrom, const char *zTo, DWORD dwFlags,
                     ColvecErr *pErr) {
  wchar_t *zWFrom, *zWTo = NULL;
  int rc = COLVEC_OK;
  int iFault = colvecOsHookBefore(COLVEC_OSOP_RENAME, zFrom, zTo, 0, NULL);
  if (iFault) return colvecOsErrnoErr(pErr, iFault, "rename", zFrom);
  zWFrom = osWinWide(zFrom, pErr, &rc);
  if (zWFrom) zWTo = osWinWide(zTo, pErr, &rc);
  if (zWTo) {
    if (!MoveFileExW(zWFrom, zWTo, dwFlags | MOVEFILE_WRITE_THROUGH)) {
      rc = osWinIoErr(pErr, "rename", zFrom);
    }
  }
  colvecFree(zWFrom);
  colvecFree(zWTo);
  if (rc == COLVEC_OK) colvecOsHookAfter(COLVEC_OSOP_RENAME, zFrom, zTo, 0, 0);
  return rc;
}

/*
** Renames zFrom to zTo, which must not exist (MoveFileExW without
** MOVEFILE_REPLACE_EXISTING fails when it does), written through to the
** disk.
*/
int colvecOsRenameNew(const char *zFrom, const char *zTo, ColvecErr *pErr) {
  return osWinMove(zFrom, zTo, 0, pErr);
}

/*
** Renames zFrom to zTo, replacing zTo if it exists, written through to
** the disk (MoveFileExW). Fails while either file is open or mapped.
*/
int colvecOsRename(const char *zFrom, const char *zTo, ColvecErr *pErr) {
  return osWinMove(zFrom, zTo, MOVEFILE_REPLACE_EXISTING, pErr);
}

/*
** Removes file zPath. A file that does not exist is not an error. A file
** that is open or mapped (here or in another process) is not removed:
** COLVEC_IOERR (EACCES), and the caller tries again later.
*/
int colvecOsUnlink(const char *zPath, ColvecErr *pErr) {
  wchar_t *zW;
  int rc = COLVEC_OK;
  int iFault = colvecOsHookBefore(COLVEC_OSOP_UNLINK, zPath, NULL, 0, NULL);
  if (iFault) return colvecOsErrnoErr(pErr, iFault, "remove", zPath);
  zW = osWinWide(zPath, pErr, &rc);
  if (zW == NULL) return rc;
  if (!DeleteFileW(zW)) {
    DWORD e = GetLastError();
    if (e != ERROR_FILE_NOT_FOUND && e != ERROR_PATH_NOT_FOUND) {
      rc = osWinIoErr(pErr, "remove", zPath);
    }
  } else {
    colvecOsHookAfter(COLVEC_OSOP_UNLINK, zPath, NULL, 0, 0);
  }
  colvecFree(zW);
  return rc;
}

/* Returns 1 when something (file, folder, link) exists at zPath, else 0. */
int colvecOsExists(const char *zPath) {
  return osWinAttributes(zPath) != INVALID_FILE_ATTRIBUTES;
}

/*
** Says what is at zPath without following a link: COLVEC_OS_NONE,
** COLVEC_OS_DIR (a real folder, not a reparse point such as a junction or
** symbolic link) or COLVEC_OS_OTHER.
*/
int colvecOsKind(const char *zPath) {
  DWORD a = osWinAttributes(zPath);
  if (a == INVALID_FILE_ATTRIBUTES) {
    DWORD e = GetLastError();
    return (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND)
               ? COLVEC_OS_NONE
               : COLVEC_OS_OTHER;
  }
  if ((a & FILE_ATTRIBUTE_DIRECTORY) && !(a & FILE_ATTRIBUTE_REPARSE_POINT)) {
    return COLVEC_OS_DIR;
  }
  return COLVEC_OS_OTHER;
}

/*
** Creates the one folder zDir (its parent must exist). Returns COLVEC_OK,
** COLVEC_ERROR without a message when something already exists at zDir,
** or COLVEC_IOERR.
*/
int colvecOsMkdir(const char *zDir, ColvecErr *pErr) {
  wchar_t *zW;
  int rc = COLVEC_OK;
  int iFault = colvecOsHookBefore(COLVEC_OSOP_MKDIR, zDir, NULL, 0, NULL);
  if (iFault) return colvecOsErrnoErr(pErr, iFault, "create folder", zDir);
  zW = osWinWide(zDir, pErr, &rc);
  if (zW == NULL) return rc;
  if (CreateDirectoryW(zW, NULL)) {
    colvecOsHookAfter(COLVEC_OSOP_MKDIR, zDir, NULL, 0, 0);
  } else if (GetLastError() == ERROR_ALREADY_EXISTS ||
             GetLastError() == ERROR_FILE_EXISTS) {
    rc = COLVEC_ERROR;
  } else {
    rc = osWinIoErr(pErr, "create folder", zDir);
  }
  colvecFree(zW);
  return rc;
}

/*
** Removes folder zDir if it is empty (never its contents). Returns
** COLVEC_OK when it is gone (or was not there), else COLVEC_IOERR.
*/
int colvecOsRmdir(const char *zDir, ColvecErr *pErr) {
  wchar_t *zW;
  int rc = COLVEC_OK;
  int iFault = colvecOsHookBefore(COLVEC_OSOP_RMDIR, zDir, NULL, 0, NULL);
  if (iFault) return colvecOsErrnoErr(pErr, iFault, "remove folder", zDir);
  zW = osWinWide(zDir, pErr, &rc);
  if (zW == NULL) return rc;
  if (RemoveDirectoryW(zW)) {
    colvecOsHookAfter(COLVEC_OSOP_RMDIR, zDir, NULL, 0, 0);
  } else {
    DWORD e = GetLastError();
    if (e != ERROR_FILE_NOT_FOUND && e != ERROR_PATH_NOT_FOUND) {
      rc = osWinIoErr(pErr, "remove folder", zDir);
    }
  }
  colvecFree(zW);
  return rc;
}

/*
** Creates folder zDir and, where they are missing, up to nUp of the
** folders above it, splitting at '/' and '\'; see colvec_os.c for the
** contract. The folder above those must exist (a drive "C:" or a share
** "\\host\share" prefix included): nothing further up is ever made.
*/
int colvecOsMkdirUp(const char *zDir, int nUp, ColvecErr *pErr) {
  size_t n = strlen(zDir), i;
  char *zBuf;
  int rc = COLVEC_OK, nSkip = 0, bTop = 1;

  if (n == 0) {
    colvecErrSet(pErr, 0, "colvec: empty folder name");
    return COLVEC_RANGE;
  }
  {
    int iFault = colvecOsHookBefore(COLVEC_OSOP_MKDIR, zDir, NULL, 0, NULL);
    if (iFault) return colvecOsErrnoErr(pErr, iFault, "create folder", zDir);
  }
  zBuf = colvecOsStrndup(zDir, n);
  if (zBuf == NULL) {
    colvecErrSet(pErr, 0, "colvec: out of memory creating \"%s\"", zDir);
    return COLVEC_NOMEM;
  }
  /* The prefixes that end just before a separator, then the path: only
  ** the last nUp + 1 of them are visited, from the top. */
  for (i = 1; i < n; i++) {
    if (osWinIsSep(zBuf[i]) && !osWinIsSep(zBuf[i - 1])) nSkip++;
  }
  nSkip -= nUp;
  for (i = 1; i <= n && rc == COLVEC_OK; i++) {
    char cSave;
    wchar_t *zW;
    if (i < n && !osWinIsSep(zBuf[i])) continue;
    if (i < n && osWinIsSep(zBuf[i - 1])) continue; /* "//", "\\host" */
    if (i < n && nSkip-- > 0) continue;
    cSave = zBuf[i];
    zBuf[i] = 0;
    zW = osWinWide(zBuf, pErr, &rc);
    if (zW && CreateDirectoryW(zW, NULL)) {
      colvecOsHookAfter(COLVEC_OSOP_MKDIR, zBuf, NULL, 0, 0);
    } else if (zW) {
      DWORD e = GetLastError();
      DWORD a = GetFileAttributesW(zW);
      if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY)) {
        /* already there: fine */
      } else if (a != INVALID_FILE_ATTRIBUTES) {
        rc = colvecOsErrnoErr(pErr, ENOTDIR, "create folder", zBuf);
      } else if (bTop && e == ERROR_PATH_NOT_FOUND) {
        colvecErrSet(pErr, ENOENT,
                     "colvec: cannot create folder \"%s\": the folder it "
                     "goes in does not exist (colvec does not create it)",
                     zBuf);
        rc = COLVEC_IOERR;
      } else {
        SetLastError(e);
        rc = osWinIoErr(pErr, "create folder", zBuf);
      }
    }
    colvecFree(zW);
    bTop = 0;
    zBuf[i] = cSave;
  }
  colvecFree(zBuf);
  return rc;
}

/*
** Lists the names in folder zDir that end in zSuffix (all when NULL or
** ""), "." and ".." excluded, sorted by strcmp; see colvec_os.c for the
** contract. Names are returned in UTF-8.
*/
int colvecOsListDir(const char *zDir, const char *zSuffix, char ***pazName,
                    int *pnName, ColvecErr *pErr) {
  WIN32_FIND_DATAW fd;
  HANDLE hFind;
  ColvecOsList list;
  char *zPattern;
  wchar_t *zW;
  int rc = COLVEC_OK;
  size_t nDir = strlen(zDir);

  *pazName = NULL;
  *pnName = 0;
  {
    int iFault = colvecOsHookBefore(COLVEC_OSOP_LISTDIR, zDir, NULL, 0, NULL);
    if (iFault) return colvecOsErrnoErr(pErr, iFault, "list folder", zDir);
  }
  zPattern = (char *)colvecMalloc((int64_t)nDir + 3);
  if (zPattern == NULL) {
    colvecErrSet(pErr, 0, "colvec: out of memory listing \"%s\"", zDir);
    return COLVEC_NOMEM;
  }
  memcpy(zPattern, zDir, nDir);
  memcpy(zPattern + nDir, "\\*", 3);
  zW = osWinWide(zPattern, pErr, &rc);
  colvecFree(zPattern);
  if (zW == NULL) return rc;
  hFind = FindFirstFileExW(zW, FindExInfoBasic, &fd, FindExSearchNameMatch,
                           NULL, 0);
  colvecFree(zW);
  if (hFind == INVALID_HANDLE_VALUE) {
    return osWinIoErr(pErr, "list folder", zDir);
  }
  colvecOsListInit(&list, zSuffix);
  do {
    char *zName = osWinUtf8(fd.cFileName);
    if (zName == NULL) {
      rc = COLVEC_NOMEM;
      break;
    }
    rc = colvecOsListAdd(&list, zName, strlen(zName));
    colvecFree(zName);
  } while (rc == COLVEC_OK && FindNextFileW(hFind, &fd));
  if (rc == COLVEC_OK && GetLastError() != ERROR_NO_MORE_FILES) {
    rc = osWinIoErr(pErr, "list folder", zDir);
  }
  FindClose(hFind);
  return colvecOsListFinish(&list, rc, zDir, pErr, pazName, pnName);
}

/*
** Removes zDir and everything below it. Links and junctions are removed,
** never followed. A zDir that does not exist is not an error. Stops at the
** first failure (a file in use, for one) and returns COLVEC_IOERR.
*/
int colvecOsRemoveTree(const char *zDir, ColvecErr *pErr) {
  DWORD a = osWinAttributes(zDir);
  char **azName = NULL;
  int nName = 0, i, rc;
  if (a == INVALID_FILE_ATTRIBUTES) {
    DWORD e = GetLastError();
    if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) {
      return COLVEC_OK;
    }
    return osWinIoErr(pErr, "stat", zDir);
  }
  if (!(a & FILE_ATTRIBUTE_DIRECTORY)) return colvecOsUnlink(zDir, pErr);
  if (a & FILE_ATTRIBUTE_REPARSE_POINT) return colvecOsRmdir(zDir, pErr);
  rc = colvecOsListDir(zDir, NULL, &azName, &nName, pErr);
  for (i = 0; i < nName && rc == COLVEC_OK; i++) {
    size_t nPath = strlen(zDir) + strlen(azName[i]) + 2;
    char *zPath = (char *)colvecMalloc((int64_t)nPath);
    if (zPath == NULL) {
      colvecErrSet(pErr, 0, "colvec: out of memory removing \"%s\"", zDir);
      rc = COLVEC_NOMEM;
      break;
    }
    snprintf(zPath, nPath, "%s\\%s", zDir, azName[i]);
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

/* The system's page size and allocation granularity, asked once. */
static SYSTEM_INFO osWinSysInfo(void) {
  static SYSTEM_INFO si;
  static int bDone = 0; /* benign race: every thread stores the same */
  if (!bDone) {
    GetSystemInfo(&si);
    bDone = 1;
  }
  return si;
}

/* The system page size (4 KB on x86-64 Windows). */
int64_t colvecOsPageSize(void) {
  DWORD n = osWinSysInfo().dwPageSize;
  return n > 0 ? (int64_t)n : 4096;
}

/* PrefetchVirtualMemory (Windows 8), looked up at run time. */
typedef BOOL(WINAPI *OsWinPrefetchFn)(HANDLE, ULONG_PTR, void *, ULONG);

/*
** Asks the system to read bytes [p, p+n) of a mapping in the background
** (PrefetchVirtualMemory, where the system has it). Returns non-zero
** when the request was made.
*/
static int osWinPrefetch(const void *p, int64_t n) {
  static OsWinPrefetchFn xPrefetch = NULL;
  static int bLooked = 0; /* benign race: every thread finds the same */
  struct {
    void *VirtualAddress;
    SIZE_T NumberOfBytes;
  } range;
  if (!bLooked) {
    HMODULE hK = GetModuleHandleW(L"kernel32.dll");
    if (hK) {
      FARPROC f = GetProcAddress(hK, "PrefetchVirtualMemory");
      memcpy(&xPrefetch, &f, sizeof(xPrefetch));
    }
    bLooked = 1;
  }
  if (xPrefetch == NULL || n <= 0) return 0;
  range.VirtualAddress = (void *)p;
  range.NumberOfBytes = (SIZE_T)n;
  return xPrefetch(GetCurrentProcess(), 1, &range, 0) != 0;
}

/*
** Faults bytes [p, p+n) of a read-only mapping in now, one read per page
** (MAP_POPULATE's twin).
*/
static void osWinTouch(const void *p, int64_t n) {
  const volatile uint8_t *a = (const volatile uint8_t *)p;
  int64_t nPage = colvecOsPageSize(), i;
  uint8_t x = 0;
  for (i = 0; i < n; i += nPage)
    x ^= a[i];
  if (n > 0) x ^= a[n - 1];
  (void)x;
}

/*
** Maps the first nByte bytes of pFile read-only (CreateFileMappingW +
** MapViewOfFile) and applies ePrefault (POPULATE reads every page before
** returning, WILLNEED asks PrefetchVirtualMemory). The mapping keeps its
** own handle on the file, so the file cannot be deleted or renamed over
** until colvecOsMapClose(), which may come after pFile is closed.
*/
int colvecOsMapOpen(ColvecFile *pFile, int64_t nByte, int ePrefault,
                    ColvecMap **ppMap, ColvecErr *pErr) {
  ColvecMap *pMap;
  void *p = NULL;
  HANDLE hDup = NULL;

  *ppMap = NULL;
  if (nByte < 0 || (uint64_t)nByte > (uint64_t)SIZE_MAX) {
    colvecErrSet(pErr, 0,
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
    HANDLE hMap;
    int iFault =
        colvecOsHookBefore(COLVEC_OSOP_MAP, pFile->zPath, NULL, 0, NULL);
    if (iFault) {
      colvecFree(pMap);
      return colvecOsErrnoErr(pErr, iFault, "map", pFile->zPath);
    }
    hMap = CreateFileMappingW((HANDLE)pFile->hFile, NULL, PAGE_READONLY,
                              (DWORD)((uint64_t)nByte >> 32),
                              (DWORD)((uint64_t)nByte & 0xffffffffu), NULL);
    if (hMap != NULL) {
      p = MapViewOfFile(hMap, FILE_MAP_READ, 0, 0, (SIZE_T)nByte);
      CloseHandle(hMap); /* the view keeps the mapping alive */
    }
    if (p != NULL && !DuplicateHandle(GetCurrentProcess(), (HANDLE)pFile->hFile,
                                      GetCurrentProcess(), &hDup, 0, FALSE,
                                      DUPLICATE_SAME_ACCESS)) {
      DWORD e = GetLastError();
      UnmapViewOfFile(p);
      p = NULL;
      SetLastError(e);
    }
    if (p == NULL) {
      int rc = osWinIoErr(pErr, "map", pFile->zPath);
      colvecFree(pMap);
      return rc;
    }
    if (ePrefault == COLVEC_PREFAULT_POPULATE) {
      osWinTouch(p, nByte);
    } else if (ePrefault == COLVEC_PREFAULT_WILLNEED) {
      (void)osWinPrefetch(p, nByte);
    }
  }
  pMap->a = (const uint8_t *)p;
  pMap->n = nByte;
  pMap->bRandom = 0;
  pMap->hFile = (void *)hDup;
  *ppMap = pMap;
  return COLVEC_OK;
}

/*
** Advice about bytes [iOff, iOff+n) of the mapping: WILLNEED asks for a
** background read; Windows has no equivalent of the other kinds, which are
** accepted and recorded (RANDOM sets bRandom). COLVEC_RANGE for a bad
** offset or advice.
*/
int colvecOsMapAdvise(ColvecMap *pMap, int64_t iOff, int64_t n, int eAdvice,
                      ColvecErr *pErr) {
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
  if (eAdvice == COLVEC_ADVICE_WILLNEED)
    colvecOsAdvise(pMap->a + iOff, n, COLVEC_ADVICE_WILLNEED);
  if (eAdvice == COLVEC_ADVICE_RANDOM) pMap->bRandom = 1;
  return COLVEC_OK;
}

/* Unmaps and frees pMap and its file handle (NULL is a no-op). */
void colvecOsMapClose(ColvecMap *pMap) {
  if (pMap == NULL) return;
  if (pMap->a) UnmapViewOfFile((void *)pMap->a);
  if (pMap->hFile) CloseHandle((HANDLE)pMap->hFile);
  colvecFree(pMap);
}

/*************************************************************************
** Platform services.
*/

/* Microseconds on a monotonic clock (QueryPerformanceCounter). */
double colvecOsMicros(void) {
  static LARGE_INTEGER freq; /* ticks per second, asked once */
  LARGE_INTEGER now;
  if (freq.QuadPart == 0) QueryPerformanceFrequency(&freq);
  QueryPerformanceCounter(&now);
  return (double)now.QuadPart * 1e6 / (double)freq.QuadPart;
}

/* Wall-clock time in nanoseconds since 1970 (the clock of file times). */
int64_t colvecOsWallNs(void) {
  FILETIME ft;
  GetSystemTimeAsFileTime(&ft);
  return osWinNs(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime);
}

/* Number of processors (at least 1, at most 1024). */
int colvecOsCpuCount(void) {
  DWORD n = osWinSysInfo().dwNumberOfProcessors;
  return n < 1 ? 1 : (n > 1024 ? 1024 : (int)n);
}

/*
** Advice on any range of a mapping; see colvec_os.h. POPULATE reads every
** page now, WILLNEED asks for a background read; the other kinds have no
** Windows equivalent.
*/
void colvecOsAdvise(const void *p, int64_t n, int eAdvice) {
  if (n <= 0) return;
  if (eAdvice == COLVEC_ADVICE_POPULATE) {
    osWinTouch(p, n);
  } else if (eAdvice == COLVEC_ADVICE_WILLNEED) {
    (void)osWinPrefetch(p, n);
  }
}

#if !defined(COLVEC_OMIT_THREADS)
#define OSWIN_HAVE_THREADS 1
#else
#define OSWIN_HAVE_THREADS 0
#endif

/* A started thread (colvecOsThreadStart). */
struct ColvecThread {
  HANDLE h;               /* the thread, from _beginthreadex */
  void *(*xMain)(void *); /* what it runs */
  void *pArg;             /* xMain's argument */
};

/* Non-zero when this build can start threads. */
int colvecOsHaveThreads(void) { return OSWIN_HAVE_THREADS; }

#if OSWIN_HAVE_THREADS
/* The thread procedure: runs the ColvecThread's xMain(pArg). */
static unsigned __stdcall osWinThreadMain(void *p) {
  ColvecThread *pThread = (ColvecThread *)p;
  (void)pThread->xMain(pThread->pArg);
  return 0;
}
#endif

/*
** Starts a thread running xMain(pArg); see colvec_os.c. COLVEC_ERROR when
** no thread could be started (the caller runs the work itself),
** COLVEC_NOMEM on OOM.
*/
int colvecOsThreadStart(ColvecThread **ppThread, void *(*xMain)(void *),
                        void *pArg) {
  *ppThread = NULL;
#if OSWIN_HAVE_THREADS
  {
    ColvecThread *p = (ColvecThread *)colvecMalloc(sizeof(ColvecThread));
    uintptr_t h;
    if (p == NULL) return COLVEC_NOMEM;
    p->xMain = xMain;
    p->pArg = pArg;
    h = _beginthreadex(NULL, 0, osWinThreadMain, p, 0, NULL);
    if (h == 0) {
      colvecFree(p);
      return COLVEC_ERROR;
    }
    p->h = (HANDLE)h;
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
#if OSWIN_HAVE_THREADS
  WaitForSingleObject(pThread->h, INFINITE);
  CloseHandle(pThread->h);
#endif
  colvecFree(pThread);
}

#endif /* _WIN32 */
