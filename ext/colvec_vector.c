/*
** colvec_vector.c — parsing, validating and printing vectors (SQLite-free).
** See colvec_vector.h for the interface.
*/
#include "colvec_vector.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest JSON number accepted, in characters. */
#define VECTOR_MAX_NUMBER 64

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
    while (i < n && vectorIsDigit(z[i])) i++;
  }
  if (i < n && z[i] == '.') {
    i++;
    iStart = i;
    while (i < n && vectorIsDigit(z[i])) i++;
    if (i == iStart) return -1;
  }
  if (i < n && (z[i] == 'e' || z[i] == 'E')) {
    i++;
    if (i < n && (z[i] == '+' || z[i] == '-')) i++;
    iStart = i;
    while (i < n && vectorIsDigit(z[i])) i++;
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
  char zNum[VECTOR_MAX_NUMBER + 1];

  *paOut = NULL;
  *pnOut = 0;
  while (i < n && vectorIsSpace(z[i])) i++;
  if (i >= n || z[i] != '[') {
    snprintf(zErr, COLVEC_VECTOR_ERRMAX,
             "malformed JSON: expected '[' at offset %d", i);
    return COLVEC_ERROR;
  }
  i++;
  while (i < n && vectorIsSpace(z[i])) i++;
  if (i < n && z[i] == ']') {
    i++;
  } else {
    for (;;) {
      int iEnd;
      while (i < n && vectorIsSpace(z[i])) i++;
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
      memcpy(zNum, &z[i], (size_t)(iEnd - i));
      zNum[iEnd - i] = 0;
      aOut[nOut++] = (float)strtod(zNum, NULL);
      i = iEnd;
      while (i < n && vectorIsSpace(z[i])) i++;
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
  while (i < n && vectorIsSpace(z[i])) i++;
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
    snprintf(zErr, COLVEC_VECTOR_ERRMAX, "expects %d dimensions, got %d",
             nDim, nVal);
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
** reads back as the same float32.
*/
static void vectorFormatFloat(float f, char *zBuf) {
  int nPrec;
  for (nPrec = 6; nPrec < 9; nPrec++) {
    snprintf(zBuf, 32, "%.*g", nPrec, (double)f);
    if ((float)strtod(zBuf, NULL) == f) return;
  }
  snprintf(zBuf, 32, "%.9g", (double)f);
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
