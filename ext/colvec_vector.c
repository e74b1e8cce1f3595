/*
** colvec_vector.c — parsing, validating and printing vectors (SQLite-free).
** See colvec_vector.h for the interface.
*/
#include "colvec_vector.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest JSON number accepted, in characters. */
#define VECTOR_MAX_NUMBER 64

/* Bytes of the on-stack buffer vectorAtof uses before it allocates. */
#define VECTOR_ATOF_BUF 128

/*
** Returns the current LC_NUMERIC decimal point ("." in the C locale, ","
** in de_DE and many others), never NULL or empty. strtod and printf use
** it; JSON and SQL always write '.'.
*/
static const char *vectorDecimalPoint(void) {
  const struct lconv *pLc = localeconv();
  if (pLc && pLc->decimal_point && pLc->decimal_point[0]) {
    return pLc->decimal_point;
  }
  return ".";
}

/*
** Converts the decimal number z[0..n) (only digits, '+', '-', '.', 'e' and
** 'E', as JSON and SQL write numbers) to the nearest double, whatever the
** process's locale: the '.' is replaced by the locale's decimal point
** before strtod reads it. Returns COLVEC_OK with *pr set, or COLVEC_NOMEM
** (only numbers longer than VECTOR_ATOF_BUF bytes allocate).
*/
static int vectorAtof(const char *z, int n, double *pr) {
  char aBuf[VECTOR_ATOF_BUF];
  const char *zPoint = vectorDecimalPoint();
  size_t nPoint = strlen(zPoint);
  size_t nNeed = (size_t)n * nPoint + 1; /* every byte could be a '.' */
  char *zBuf = aBuf;
  size_t j = 0;
  int i;
  if (nNeed > sizeof(aBuf)) {
    zBuf = colvecMalloc((int64_t)nNeed);
    if (zBuf == NULL) return COLVEC_NOMEM;
  }
  for (i = 0; i < n; i++) {
    if (z[i] == '.') {
      memcpy(&zBuf[j], zPoint, nPoint);
      j += nPoint;
    } else {
      zBuf[j++] = z[i];
    }
  }
  zBuf[j] = 0;
  *pr = strtod(zBuf, NULL);
  if (zBuf != aBuf) colvecFree(zBuf);
  return COLVEC_OK;
}

/*
** Rewrites the number printf just wrote into zBuf (NUL-terminated) so that
** its decimal point is '.', whatever the locale's is.
*/
static void vectorFixDecimalPoint(char *zBuf) {
  const char *zPoint = vectorDecimalPoint();
  size_t nPoint = strlen(zPoint);
  char *zAt;
  if (nPoint == 1 && zPoint[0] == '.') return;
  zAt = strstr(zBuf, zPoint);
  if (zAt) {
    *zAt = '.';
    memmove(zAt + 1, zAt + nPoint, strlen(zAt + nPoint) + 1);
  }
}

/* Returns non-zero for the six characters SQLite counts as space. */
static int vectorIsSqlSpace(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Converts SQL text to a number as SQLite's numeric affinity; see header. */
int colvecTextToNumber(const char *z, int n, int *peKind, int64_t *piOut,
                       double *prOut) {
  int i = 0, iStart, iEnd, nDigit = 0, bInt = 1;
  *peKind = COLVEC_NUM_NONE;
  *piOut = 0;
  *prOut = 0.0;
  while (i < n && vectorIsSqlSpace(z[i]))
    i++;
  iStart = i;
  if (i < n && (z[i] == '-' || z[i] == '+')) i++;
  while (i < n && z[i] >= '0' && z[i] <= '9')
    i++, nDigit++;
  if (i < n && z[i] == '.') {
    bInt = 0;
    i++;
    while (i < n && z[i] >= '0' && z[i] <= '9')
      i++, nDigit++;
  }
  if (nDigit == 0) return COLVEC_OK;
  if (i < n && (z[i] == 'e' || z[i] == 'E')) {
    int nExp = 0;
    bInt = 0;
    i++;
    if (i < n && (z[i] == '-' || z[i] == '+')) i++;
    while (i < n && z[i] >= '0' && z[i] <= '9')
      i++, nExp++;
    if (nExp == 0) return COLVEC_OK;
  }
  iEnd = i;
  while (i < n && vectorIsSqlSpace(z[i]))
    i++;
  if (i < n) return COLVEC_OK; /* anything else after the number */
  if (bInt) {
    /* an integer literal is an INTEGER when it fits in 64 bits */
    uint64_t u = 0, uMax;
    int bNeg = z[iStart] == '-', bFits = 1;
    uMax = bNeg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (i = iStart + (z[iStart] == '-' || z[iStart] == '+'); i < iEnd; i++) {
      unsigned d = (unsigned)(z[i] - '0');
      if (u > (uMax - d) / 10) {
        bFits = 0;
        break;
      }
      u = u * 10 + d;
    }
    if (bFits) {
      *peKind = COLVEC_NUM_INTEGER;
      *piOut = bNeg ? (int64_t)(0 - u) : (int64_t)u;
      return COLVEC_OK;
    }
  }
  if (vectorAtof(&z[iStart], iEnd - iStart, prOut) != COLVEC_OK) {
    return COLVEC_NOMEM;
  }
  *peKind = COLVEC_NUM_REAL;
  return COLVEC_OK;
}

/* Returns non-zero for the four JSON whitespace characters. */
static int vectorIsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Returns non-zero for an ASCII digit. */
static int vectorIsDigit(char c) { return c >= '0' && c <= '9'; }

/*
** Scans one JSON number starting at z[i] (n bytes in all) following the
** JSON grammar. Returns the offset just past it, or -1 when z[i] does not
** start a valid number.
*/
static int vectorScanNumber(const char *z, int n, int i) {
  int iStart;
  if (i < n && z[i] == '-') i++;
  if (i >= n || !vectorIsDigit(z[i])) return -1;
  if (z[i] == '0') {
    i++;
  } else {
    while (i < n && vectorIsDigit(z[i]))
      i++;
  }
  if (i < n && z[i] == '.') {
    i++;
    iStart = i;
    while (i < n && vectorIsDigit(z[i]))
      i++;
    if (i == iStart) return -1;
  }
  if (i < n && (z[i] == 'e' || z[i] == 'E')) {
    i++;
    if (i < n && (z[i] == '+' || z[i] == '-')) i++;
    iStart = i;
    while (i < n && vectorIsDigit(z[i]))
      i++;
    if (i == iStart) return -1;
  }
  return i;
}

/* Parses a JSON array of numbers; see colvec_vector.h. */
int colvecJsonToFloats(const char *z, int n, float **paOut, int *pnOut,
                       char *zErr) {
  float *aOut = NULL;
  int nOut = 0, nAlloc = 0;
  int i = 0;

  *paOut = NULL;
  *pnOut = 0;
  while (i < n && vectorIsSpace(z[i]))
    i++;
  if (i >= n || z[i] != '[') {
    snprintf(zErr, COLVEC_VECTOR_ERRMAX,
             "malformed JSON: expected '[' at offset %d", i);
    return COLVEC_ERROR;
  }
  i++;
  while (i < n && vectorIsSpace(z[i]))
    i++;
  if (i < n && z[i] == ']') {
    i++;
  } else {
    for (;;) {
      int iEnd;
      while (i < n && vectorIsSpace(z[i]))
        i++;
      iEnd = vectorScanNumber(z, n, i);
      if (iEnd < 0 || iEnd - i > VECTOR_MAX_NUMBER) {
        snprintf(zErr, COLVEC_VECTOR_ERRMAX,
                 "malformed JSON: expected a number at offset %d", i);
        colvecFree(aOut);
        return COLVEC_ERROR;
      }
      if (nOut == nAlloc) {
        int nNew = nAlloc ? nAlloc * 2 : 64;
        float *aNew = colvecRealloc(aOut, (int64_t)nNew * sizeof(float));
        if (aNew == NULL) {
          colvecFree(aOut);
          return COLVEC_NOMEM;
        }
        aOut = aNew;
        nAlloc = nNew;
      }
      {
        double r = 0.0;
        (void)vectorAtof(&z[i], iEnd - i, &r); /* short: never allocates */
        aOut[nOut++] = (float)r;
      }
      i = iEnd;
      while (i < n && vectorIsSpace(z[i]))
        i++;
      if (i < n && z[i] == ',') {
        i++;
        continue;
      }
      if (i < n && z[i] == ']') {
        i++;
        break;
      }
      snprintf(zErr, COLVEC_VECTOR_ERRMAX,
               "malformed JSON: expected ',' or ']' at offset %d", i);
      colvecFree(aOut);
      return COLVEC_ERROR;
    }
  }
  while (i < n && vectorIsSpace(z[i]))
    i++;
  if (i < n && z[i] != 0) {
    snprintf(zErr, COLVEC_VECTOR_ERRMAX,
             "malformed JSON: unexpected text after ']' at offset %d", i);
    colvecFree(aOut);
    return COLVEC_ERROR;
  }
  *paOut = aOut;
  *pnOut = nOut;
  return COLVEC_OK;
}

/* Converts parsed JSON numbers to a column's binary form; see header. */
int colvecFloatsToVector(const float *aVal, int nVal, ColvecElem eElem,
                         int nDim, void *aOut, char *zErr) {
  int i;
  if (nVal != nDim) {
    snprintf(zErr, COLVEC_VECTOR_ERRMAX, "expects %d dimensions, got %d", nDim,
             nVal);
    return COLVEC_ERROR;
  }
  switch (eElem) {
  case COLVEC_ELEM_F32:
    for (i = 0; i < nVal; i++) {
      if (!isfinite(aVal[i])) {
        snprintf(zErr, COLVEC_VECTOR_ERRMAX,
                 "element %d is not a finite float32", i);
        return COLVEC_ERROR;
      }
    }
    if (nVal > 0) memcpy(aOut, aVal, (size_t)nVal * sizeof(float));
    break;
  case COLVEC_ELEM_I8: {
    int8_t *a = (int8_t *)aOut;
    for (i = 0; i < nVal; i++) {
      float f = aVal[i];
      if (!(f >= -128.0f && f <= 127.0f) || f != floorf(f)) {
        snprintf(zErr, COLVEC_VECTOR_ERRMAX,
                 "element %d is not an integer in -128..127", i);
        return COLVEC_ERROR;
      }
      a[i] = (int8_t)f;
    }
    break;
  }
  case COLVEC_ELEM_BIT: {
    uint8_t *a = (uint8_t *)aOut;
    memset(a, 0, (size_t)colvecVectorBytes(eElem, nDim));
    for (i = 0; i < nVal; i++) {
      if (aVal[i] == 1.0f) {
        a[i / 8] |= (uint8_t)(1u << (i % 8));
      } else if (aVal[i] != 0.0f) {
        snprintf(zErr, COLVEC_VECTOR_ERRMAX, "element %d is not 0 or 1", i);
        return COLVEC_ERROR;
      }
    }
    break;
  }
  }
  return COLVEC_OK;
}

/* Checks a binary vector against a column; see header. */
int colvecVectorCheck(const void *a, int nByte, ColvecElem eElem, int nDim,
                      char *zErr) {
  int64_t nWant = colvecVectorBytes(eElem, nDim);
  if (nByte != nWant) {
    if (eElem == COLVEC_ELEM_F32 && nByte % 4 == 0) {
      snprintf(zErr, COLVEC_VECTOR_ERRMAX,
               "expects %d dimensions, got %d (a %d-byte float32 blob)", nDim,
               nByte / 4, nByte);
    } else {
      snprintf(zErr, COLVEC_VECTOR_ERRMAX,
               "expects a %lld-byte %s[%d] blob, got %d bytes",
               (long long)nWant, colvecElemName(eElem), nDim, nByte);
    }
    return COLVEC_ERROR;
  }
  if (eElem == COLVEC_ELEM_F32) {
    const unsigned char *p = (const unsigned char *)a;
    int i;
    for (i = 0; i < nDim; i++) {
      float f;
      memcpy(&f, p + 4 * (size_t)i, 4);
      if (!isfinite(f)) {
        snprintf(zErr, COLVEC_VECTOR_ERRMAX,
                 "element %d is not a finite float32", i);
        return COLVEC_ERROR;
      }
    }
  }
  return COLVEC_OK;
}

/*
** Formats float f into zBuf (at least 32 bytes) in the shortest %g form that
** reads back as the same float32, with '.' as the decimal point whatever
** the locale (9 significant digits always read back).
*/
static void vectorFormatFloat(float f, char *zBuf) {
  int nPrec;
  for (nPrec = 6; nPrec < 9; nPrec++) {
    double r = 0.0;
    snprintf(zBuf, 32, "%.*g", nPrec, (double)f);
    vectorFixDecimalPoint(zBuf);
    (void)vectorAtof(zBuf, (int)strlen(zBuf), &r); /* short: no allocation */
    if ((float)r == f) return;
  }
  snprintf(zBuf, 32, "%.9g", (double)f);
  vectorFixDecimalPoint(zBuf);
}

/* Prints a vector as JSON; see header. */
int colvecVectorToJson(const void *a, ColvecElem eElem, int nDim,
                       char **pzOut) {
  int64_t nAlloc = (int64_t)nDim * 34 + 3;
  char *z = colvecMalloc(nAlloc);
  int64_t iOut = 0;
  int i;
  *pzOut = NULL;
  if (z == NULL) return COLVEC_NOMEM;
  z[iOut++] = '[';
  for (i = 0; i < nDim; i++) {
    char zNum[32];
    int nNum;
    switch (eElem) {
    case COLVEC_ELEM_F32: {
      float f;
      memcpy(&f, (const unsigned char *)a + 4 * (size_t)i, 4);
      vectorFormatFloat(f, zNum);
      break;
    }
    case COLVEC_ELEM_I8:
      snprintf(zNum, sizeof(zNum), "%d", ((const int8_t *)a)[i]);
      break;
    case COLVEC_ELEM_BIT:
      snprintf(zNum, sizeof(zNum), "%d",
               (((const uint8_t *)a)[i / 8] >> (i % 8)) & 1);
      break;
    }
    nNum = (int)strlen(zNum);
    if (i > 0) z[iOut++] = ',';
    memcpy(&z[iOut], zNum, (size_t)nNum);
    iOut += nNum;
  }
  z[iOut++] = ']';
  z[iOut] = 0;
  *pzOut = z;
  return COLVEC_OK;
}

/* Name of an element type as written in CREATE. */
const char *colvecElemName(ColvecElem eElem) {
  switch (eElem) {
  case COLVEC_ELEM_F32:
    return "float";
  case COLVEC_ELEM_I8:
    return "int8";
  case COLVEC_ELEM_BIT:
    return "bit";
  }
  return "?";
}
