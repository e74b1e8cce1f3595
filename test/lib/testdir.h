/*
** testdir.h — a private temporary folder for a test, on POSIX and Windows
** (the library itself makes no temporary folder: databases without a file
** keep their segments in memory).
**
**   char zDir[512];
**   if (testTempDir(zDir, sizeof(zDir)) != 0) ... fail ...
**   if (testTempDirIn("/dev/shm", "colvec-fault", zDir, sizeof(zDir)) ...
**
** POSIX: mkdtemp() of "<base>/<name>-XXXXXX" (mode 0700). Windows: a new
** folder "<base>\<name>-<pid>-<n>". The base is, when not given, $TMPDIR
** else /tmp on POSIX and GetTempPathA()'s folder on Windows.
*/
#ifndef COLVEC_TESTDIR_H
#define COLVEC_TESTDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <windows.h>
#else
#include <unistd.h>
#endif

/*
** Creates a new empty folder named after zName under folder zBase (NULL:
** the default above) and writes its path to zOut (nOut bytes). Returns 0
** on success, -1 when no folder could be made or the name does not fit
** (zOut is then "").
*/
static inline int testTempDirIn(const char *zBase, const char *zName,
                                char *zOut, size_t nOut) {
  const char *zSep;
  int m;
#if defined(_WIN32)
  char zTmp[MAX_PATH + 1];
  int i;
  zOut[0] = 0;
  if (zBase == NULL) {
    DWORD n = GetTempPathA(sizeof(zTmp), zTmp);
    if (n == 0 || n > MAX_PATH) return -1;
    zBase = zTmp;
  }
  zSep = zBase[0] && strchr("/\\", zBase[strlen(zBase) - 1]) ? "" : "\\";
  for (i = 0; i < 100; i++) {
    m = snprintf(zOut, nOut, "%s%s%s-%lu-%d", zBase, zSep, zName,
                 (unsigned long)GetCurrentProcessId(), i);
    if (m < 0 || (size_t)m >= nOut) break;
    if (CreateDirectoryA(zOut, NULL)) return 0;
    if (GetLastError() != ERROR_ALREADY_EXISTS) break;
  }
  zOut[0] = 0;
  return -1;
#else
  if (zBase == NULL) {
    zBase = getenv("TMPDIR");
    if (zBase == NULL || zBase[0] == 0) zBase = "/tmp";
  }
  zSep = zBase[0] && zBase[strlen(zBase) - 1] == '/' ? "" : "/";
  m = snprintf(zOut, nOut, "%s%s%s-XXXXXX", zBase, zSep, zName);
  if (m < 0 || (size_t)m >= nOut || mkdtemp(zOut) == NULL) {
    zOut[0] = 0;
    return -1;
  }
  return 0;
#endif
}

/* Creates a new empty folder "colvec-..." under the default base folder;
** as testTempDirIn(). */
static inline int testTempDir(char *zOut, size_t nOut) {
  return testTempDirIn(NULL, "colvec", zOut, nOut);
}

#endif /* COLVEC_TESTDIR_H */
