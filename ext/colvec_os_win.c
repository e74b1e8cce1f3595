/*
** colvec_os_win.c — the Win32 system calls under the file layer
** (colvec_os_sys.h) and the Windows platform services of colvec_os.h
** (clocks, processor count, mapping advice, threads), for Windows 8 and
** later; cross-compiled with mingw-w64 and tested under wine. What the
** platforms share (argument checks, the test hook, loops and walks,
** messages, CPU features) is in colvec_os.c.
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
#include "colvec_os_sys.h"

#if defined(_WIN32)

#include <errno.h>
#include <process.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

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
** CreateFileW, shared for reading and writing but not for delete, so that
** a file in use is never deleted or renamed over. A folder or a device
** named like a file gives COLVEC_CORRUPT. See colvec_os_sys.h.
*/
int colvecOsSysOpen(ColvecFile *pFile, int flags, ColvecErr *pErr) {
  DWORD dwAccess = GENERIC_READ, dwCreate = OPEN_EXISTING;
  const char *zPath = pFile->zPath;
  int rc = COLVEC_OK;
  wchar_t *zW;
  HANDLE h;
  if (flags & COLVEC_OPEN_READWRITE) {
    dwAccess |= GENERIC_WRITE;
    if (flags & COLVEC_OPEN_CREATE) {
      dwCreate = (flags & COLVEC_OPEN_EXCLUSIVE) ? CREATE_NEW : CREATE_ALWAYS;
    }
  }
  zW = osWinWide(zPath, pErr, &rc);
  if (zW == NULL) return rc;
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
  } else {
    pFile->hFile = (void *)h;
  }
  colvecFree(zW);
  return rc;
}

/* CloseHandle; see colvec_os_sys.h. */
int colvecOsSysClose(ColvecFile *pFile, ColvecErr *pErr) {
  if (!CloseHandle((HANDLE)pFile->hFile)) {
    return osWinIoErr(pErr, "close", pFile->zPath);
  }
  return COLVEC_OK;
}

/* An OVERLAPPED that positions a synchronous ReadFile/WriteFile at iOff. */
static OVERLAPPED osWinAt(int64_t iOff) {
  OVERLAPPED ov;
  memset(&ov, 0, sizeof(ov));
  ov.Offset = (DWORD)((uint64_t)iOff & 0xffffffffu);
  ov.OffsetHigh = (DWORD)((uint64_t)iOff >> 32);
  return ov;
}

/* One ReadFile at an offset; see colvec_os_sys.h. */
int colvecOsSysRead(ColvecFile *pFile, void *p, int64_t n, int64_t iOff,
                    int64_t *pnGot, ColvecErr *pErr) {
  DWORD nGot = 0;
  OVERLAPPED ov = osWinAt(iOff);
  if (!ReadFile((HANDLE)pFile->hFile, p, (DWORD)n, &nGot, &ov)) {
    if (GetLastError() != ERROR_HANDLE_EOF) {
      return osWinIoErr(pErr, "read", pFile->zPath);
    }
    nGot = 0;
  }
  *pnGot = (int64_t)nGot;
  return COLVEC_OK;
}

/* One WriteFile at an offset; see colvec_os_sys.h. */
int colvecOsSysWrite(ColvecFile *pFile, const void *p, int64_t n, int64_t iOff,
                     int64_t *pnPut, ColvecErr *pErr) {
  DWORD nPut = 0;
  OVERLAPPED ov = osWinAt(iOff);
  if (!WriteFile((HANDLE)pFile->hFile, p, (DWORD)n, &nPut, &ov)) {
    return osWinIoErr(pErr, "write", pFile->zPath);
  }
  *pnPut = (int64_t)nPut;
  return COLVEC_OK;
}

/* FlushFileBuffers; see colvec_os_sys.h. */
int colvecOsSysSync(ColvecFile *pFile, ColvecErr *pErr) {
  if (!FlushFileBuffers((HANDLE)pFile->hFile)) {
    return osWinIoErr(pErr, "fsync", pFile->zPath);
  }
  return COLVEC_OK;
}

/* Nanoseconds since 1970 of a FILETIME-style count (100 ns since 1601). */
static int64_t osWinNs(uint64_t t) {
  return ((int64_t)t - (int64_t)116444736000000000LL) * 100;
}

/*
** Size and identity: GetFileInformationByHandle's volume serial, file
** index and last-write time, and FileBasicInfo's change time. See
** colvec_os_sys.h.
*/
int colvecOsSysFileStat(ColvecFile *pFile, int64_t *pnByte, ColvecFileId *pId,
                        ColvecErr *pErr) {
  LARGE_INTEGER sz;
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
** Flushes folder zDir. NTFS journals its metadata and MoveFileExW is
** called with MOVEFILE_WRITE_THROUGH, so this opens the folder
** (FILE_FLAG_BACKUP_SEMANTICS) and flushes it where the system allows; a
** refusal to flush a folder (ERROR_ACCESS_DENIED, or
** ERROR_INVALID_FUNCTION on file systems without it) is not an error. A
** folder that cannot be opened is COLVEC_IOERR. See colvec_os_sys.h.
*/
int colvecOsSysSyncDir(const char *zDir, ColvecErr *pErr) {
  wchar_t *zW;
  HANDLE h;
  int rc = COLVEC_OK;
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
** MoveFileExW, written through to the disk; without bReplace (no
** MOVEFILE_REPLACE_EXISTING) it fails when zTo exists. Fails while either
** file is open or mapped. See colvec_os_sys.h.
*/
int colvecOsSysRename(const char *zFrom, const char *zTo, int bReplace,
                      ColvecErr *pErr) {
  wchar_t *zWFrom, *zWTo = NULL;
  int rc = COLVEC_OK;
  zWFrom = osWinWide(zFrom, pErr, &rc);
  if (zWFrom) zWTo = osWinWide(zTo, pErr, &rc);
  if (zWTo && !MoveFileExW(zWFrom, zWTo,
                           (bReplace ? MOVEFILE_REPLACE_EXISTING : 0) |
                               MOVEFILE_WRITE_THROUGH)) {
    rc = osWinIoErr(pErr, "rename", zFrom);
  }
  colvecFree(zWFrom);
  colvecFree(zWTo);
  return rc;
}

/* Non-zero when Windows error e says a path does not exist. */
static int osWinIsMissing(DWORD e) {
  return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND;
}

/*
** DeleteFileW. A file that is open or mapped (here or in another
** process) is not removed: COLVEC_IOERR (EACCES). See colvec_os_sys.h.
*/
int colvecOsSysUnlink(const char *zPath, ColvecErr *pErr) {
  int rc = COLVEC_OK;
  wchar_t *zW = osWinWide(zPath, pErr, &rc);
  if (zW == NULL) return rc;
  if (!DeleteFileW(zW)) {
    rc = osWinIsMissing(GetLastError()) ? COLVEC_ERROR
                                        : osWinIoErr(pErr, "remove", zPath);
  }
  colvecFree(zW);
  return rc;
}

/* CreateDirectoryW; see colvec_os_sys.h. */
int colvecOsSysMkdir(const char *zDir, ColvecErr *pErr) {
  int rc = COLVEC_OK;
  wchar_t *zW = osWinWide(zDir, pErr, &rc);
  if (zW == NULL) return rc;
  if (!CreateDirectoryW(zW, NULL)) {
    DWORD e = GetLastError();
    rc = (e == ERROR_ALREADY_EXISTS || e == ERROR_FILE_EXISTS)
             ? COLVEC_ERROR
             : osWinIoErr(pErr, "create folder", zDir);
  }
  colvecFree(zW);
  return rc;
}

/* RemoveDirectoryW; see colvec_os_sys.h. */
int colvecOsSysRmdir(const char *zDir, ColvecErr *pErr) {
  int rc = COLVEC_OK;
  wchar_t *zW = osWinWide(zDir, pErr, &rc);
  if (zW == NULL) return rc;
  if (!RemoveDirectoryW(zW)) {
    rc = osWinIsMissing(GetLastError())
             ? COLVEC_ERROR
             : osWinIoErr(pErr, "remove folder", zDir);
  }
  colvecFree(zW);
  return rc;
}

/*
** GetFileAttributesW, which describes a reparse point (a junction or
** symbolic link) itself: a folder one is COLVEC_OS_DIRLINK, removed as a
** folder and never entered. See colvec_os_sys.h.
*/
int colvecOsSysKind(const char *zPath, ColvecErr *pErr) {
  DWORD a = osWinAttributes(zPath);
  if (a == INVALID_FILE_ATTRIBUTES) {
    if (osWinIsMissing(GetLastError())) return COLVEC_OS_NONE;
    return -osWinIoErr(pErr, "stat", zPath);
  }
  if (!(a & FILE_ATTRIBUTE_DIRECTORY)) return COLVEC_OS_OTHER;
  if (a & FILE_ATTRIBUTE_REPARSE_POINT) return COLVEC_OS_DIRLINK;
  return COLVEC_OS_DIR;
}

/* Whether zPath is a folder or a link to one; see colvec_os_sys.h. */
int colvecOsSysIsDir(const char *zPath, ColvecErr *pErr) {
  DWORD a = osWinAttributes(zPath);
  if (a == INVALID_FILE_ATTRIBUTES) return -osWinIoErr(pErr, "stat", zPath);
  return (a & FILE_ATTRIBUTE_DIRECTORY) ? 1 : 0;
}

/* FindFirstFileExW and FindNextFileW, names in UTF-8; see colvec_os_sys.h. */
int colvecOsSysListDir(const char *zDir, ColvecOsList *pList, ColvecErr *pErr) {
  WIN32_FIND_DATAW fd;
  HANDLE hFind;
  char *zPattern;
  wchar_t *zW;
  int rc = COLVEC_OK;
  size_t nDir = strlen(zDir);
  zPattern = (char *)colvecMalloc((int64_t)nDir + 3);
  if (zPattern == NULL) return COLVEC_NOMEM;
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
  do {
    char *zName = osWinUtf8(fd.cFileName);
    if (zName == NULL) {
      rc = COLVEC_NOMEM;
      break;
    }
    rc = colvecOsListAdd(pList, zName, strlen(zName));
    colvecFree(zName);
  } while (rc == COLVEC_OK && FindNextFileW(hFind, &fd));
  if (rc == COLVEC_OK && GetLastError() != ERROR_NO_MORE_FILES) {
    rc = osWinIoErr(pErr, "list folder", zDir);
  }
  FindClose(hFind);
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
** CreateFileMappingW + MapViewOfFile; POPULATE reads every page before
** returning, WILLNEED asks PrefetchVirtualMemory. The mapping keeps its
** own handle on the file (pMap->hFile), so the file cannot be deleted or
** renamed over until colvecOsMapClose(), which may come after pFile is
** closed. See colvec_os_sys.h.
*/
int colvecOsSysMap(ColvecFile *pFile, int64_t nByte, int ePrefault,
                   ColvecMap *pMap, ColvecErr *pErr) {
  HANDLE hDup = NULL, hMap;
  void *p = NULL;
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
  if (p == NULL) return osWinIoErr(pErr, "map", pFile->zPath);
  if (ePrefault == COLVEC_PREFAULT_POPULATE) {
    osWinTouch(p, nByte);
  } else if (ePrefault == COLVEC_PREFAULT_WILLNEED) {
    (void)osWinPrefetch(p, nByte);
  }
  pMap->a = (const uint8_t *)p;
  pMap->hFile = (void *)hDup;
  return COLVEC_OK;
}

/*
** WILLNEED asks for a background read; Windows has no equivalent of the
** other kinds, which are accepted. See colvec_os_sys.h.
*/
int colvecOsSysMapAdvise(ColvecMap *pMap, int64_t iOff, int64_t n, int eAdvice,
                         ColvecErr *pErr) {
  (void)pErr;
  if (eAdvice == COLVEC_ADVICE_WILLNEED) (void)osWinPrefetch(pMap->a + iOff, n);
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

/* _beginthreadex; see colvec_os_sys.h. */
int colvecOsSysThreadStart(ColvecThread *p) {
#if OSWIN_HAVE_THREADS
  uintptr_t h = _beginthreadex(NULL, 0, osWinThreadMain, p, 0, NULL);
  if (h == 0) return COLVEC_ERROR;
  p->h = (void *)h;
  return COLVEC_OK;
#else
  (void)p;
  return COLVEC_ERROR;
#endif
}

/* Waits for the thread's handle, then closes it; see colvec_os_sys.h. */
void colvecOsSysThreadJoin(ColvecThread *p) {
#if OSWIN_HAVE_THREADS
  WaitForSingleObject((HANDLE)p->h, INFINITE);
  CloseHandle((HANDLE)p->h);
#else
  (void)p;
#endif
}

#endif /* _WIN32 */
