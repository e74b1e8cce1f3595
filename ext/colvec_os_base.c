/*
** colvec_os_base.c — what every file of the file layer, and the memory
** store, build their answers with: messages (ColvecErr), string copies,
** folder listings, the base name of a path. No system call but the C
** library's; the bottom of the os files (colvec_os.c and the platform
** files call it, it calls none of them).
*/
#include "colvec_os.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*************************************************************************
** Errors.
*/

/*
** Formats a message into pErr (when not NULL) and records iErrno. When
** iErrno is non-zero, ": <strerror>" is appended. The message is cut to
** COLVEC_ERRMSG_MAX-1 bytes.
*/
void colvecErrSet(ColvecErr *pErr, int iErrno, const char *zFmt, ...) {
  va_list ap;
  int n;
  if (pErr == NULL) return;
  pErr->iErrno = iErrno;
  va_start(ap, zFmt);
  n = vsnprintf(pErr->zMsg, sizeof(pErr->zMsg), zFmt, ap);
  va_end(ap);
  if (n < 0) {
    pErr->zMsg[0] = 0;
    n = 0;
  }
  if (iErrno != 0 && n < (int)sizeof(pErr->zMsg) - 1) {
    /* a full disk is said in words, whatever strerror() calls it */
    const char *zWhat = iErrno == ENOSPC ? "the disk is full" : NULL;
#ifdef EDQUOT
    if (iErrno == EDQUOT) zWhat = "the disk is full (quota exceeded)";
#endif
    if (zWhat) {
      snprintf(pErr->zMsg + n, sizeof(pErr->zMsg) - (size_t)n, ": %s (%s)",
               zWhat, strerror(iErrno));
    } else {
      snprintf(pErr->zMsg + n, sizeof(pErr->zMsg) - (size_t)n, ": %s",
               strerror(iErrno));
    }
  }
}

/* Resets pErr (when not NULL) to "no error". */
void colvecErrClear(ColvecErr *pErr) {
  if (pErr) {
    pErr->iErrno = 0;
    pErr->zMsg[0] = 0;
  }
}

/* Records a failed call; see colvec_os.h. */
int colvecOsErrnoErr(ColvecErr *pErr, int iErrno, const char *zOp,
                     const char *zPath) {
  errno = iErrno;
  colvecErrSet(pErr, iErrno, "colvec: cannot %s \"%s\"", zOp, zPath);
  return COLVEC_IOERR;
}

/* Copies n bytes of z into a new string; see colvec_os.h. */
char *colvecOsStrndup(const char *z, size_t n) {
  char *zOut = (char *)colvecMalloc((int64_t)n + 1);
  if (zOut) {
    memcpy(zOut, z, n);
    zOut[n] = 0;
  }
  return zOut;
}

/*************************************************************************
** Listings and paths.
*/

/* qsort() comparison of two char* by strcmp. */
static int osCompareNames(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts the nName strings of azName by strcmp (a deterministic listing). */
void colvecOsSortNames(char **azName, int nName) {
  if (nName > 1) qsort(azName, (size_t)nName, sizeof(char *), osCompareNames);
}

/* Starts an empty listing of names ending in zSuffix (all: NULL or ""). */
void colvecOsListInit(ColvecOsList *pList, const char *zSuffix) {
  memset(pList, 0, sizeof(*pList));
  pList->zSuffix = zSuffix;
  pList->nSuffix = zSuffix ? strlen(zSuffix) : 0;
}

/*
** Adds a copy of the nLen bytes of zName to pList, unless the name is "."
** or ".." or does not end in the list's suffix. COLVEC_OK, or COLVEC_NOMEM
** (the list keeps what it had).
*/
int colvecOsListAdd(ColvecOsList *pList, const char *zName, size_t nLen) {
  size_t nSuffix = pList->nSuffix;
  if ((nLen == 1 && zName[0] == '.') ||
      (nLen == 2 && zName[0] == '.' && zName[1] == '.')) {
    return COLVEC_OK;
  }
  if (nSuffix > 0 && (nLen < nSuffix || memcmp(zName + nLen - nSuffix,
                                               pList->zSuffix, nSuffix) != 0)) {
    return COLVEC_OK;
  }
  if (pList->nName == pList->nAlloc) {
    int nNew = pList->nAlloc ? pList->nAlloc * 2 : 16;
    char **aNew = (char **)colvecRealloc(
        pList->azName, (int64_t)nNew * (int64_t)sizeof(char *));
    if (aNew == NULL) return COLVEC_NOMEM;
    pList->azName = aNew;
    pList->nAlloc = nNew;
  }
  pList->azName[pList->nName] = colvecOsStrndup(zName, nLen);
  if (pList->azName[pList->nName] == NULL) return COLVEC_NOMEM;
  pList->nName++;
  return COLVEC_OK;
}

/*
** Ends the listing of zDir whose result so far is rc: on COLVEC_OK the
** names, sorted, go to *pazName and *pnName; otherwise they are freed, a
** COLVEC_NOMEM gets its message in pErr, and rc is returned.
*/
int colvecOsListFinish(ColvecOsList *pList, int rc, const char *zDir,
                       ColvecErr *pErr, char ***pazName, int *pnName) {
  if (rc == COLVEC_NOMEM) {
    colvecErrSet(pErr, 0, "colvec: out of memory listing \"%s\"", zDir);
  }
  if (rc != COLVEC_OK) {
    colvecOsListFree(pList->azName, pList->nName);
    memset(pList, 0, sizeof(*pList));
    return rc;
  }
  colvecOsSortNames(pList->azName, pList->nName);
  *pazName = pList->azName;
  *pnName = pList->nName;
  return COLVEC_OK;
}

/* Frees a list returned by colvecOsListDir() (NULL is a no-op). */
void colvecOsListFree(char **azName, int nName) {
  int i;
  if (azName == NULL) return;
  for (i = 0; i < nName; i++)
    colvecFree(azName[i]);
  colvecFree(azName);
}

/*
** Returns the last component of zPath (after the last separator: '/', and
** on Windows '' too).
*/
const char *colvecOsBaseName(const char *zPath) {
  const char *z = strrchr(zPath, '/');
#if defined(_WIN32)
  const char *zBack = strrchr(zPath, '\\');
  if (zBack && (z == NULL || zBack > z)) z = zBack;
#endif
  return z ? z + 1 : zPath;
}
