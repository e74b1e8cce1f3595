/*
** testdir.h — a private temporary folder for a Check suite, on POSIX and
** Windows (the library itself makes no temporary folder: databases
** without a file keep their segments in memory).
**
**   char zDir[512];
**   if (testTempDir(zDir, sizeof(zDir)) != 0) ... fail ...
**
** POSIX: mkdtemp() under $TMPDIR, else /tmp (mode 0700). Windows: a new
** folder "colvec-<pid>-<n>" under GetTempPathA()'s folder.
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
** Creates a new empty folder and writes its path to zOut (nOut bytes).
** Returns 0 on success, -1 when no folder could be made or the name does
** not fit (zOut is then "").
*/
static int testTempDir(char *zOut, size_t nOut) {
#if defined(_WIN32)
  char zBase[MAX_PATH + 1];
  DWORD n = GetTempPathA(sizeof(zBase), zBase);
  int i;
  zOut[0] = 0;
  if (n == 0 || n > MAX_PATH) return -1;
  for (i = 0; i < 100; i++) {
    int m = snprintf(zOut, nOut, "%scolvec-%lu-%d", zBase,
                     (unsigned long)GetCurrentProcessId(), i);
    if (m < 0 || (size_t)m >= nOut) break;
    if (CreateDirectoryA(zOut, NULL)) return 0;
    if (GetLastError() != ERROR_ALREADY_EXISTS) break;
  }
  zOut[0] = 0;
  return -1;
#else
  const char *zTmp = getenv("TMPDIR");
  int m =
      snprintf(zOut, nOut, "%s/colvec-XXXXXX", zTmp && zTmp[0] ? zTmp : "/tmp");
  if (m < 0 || (size_t)m >= nOut || mkdtemp(zOut) == NULL) {
    zOut[0] = 0;
    return -1;
  }
  return 0;
#endif
}

#endif /* COLVEC_TESTDIR_H */
