/*
** colvec_value.c — turning SQL values into column values: vectors from
** BLOBs or JSON text, attributes checked as a STRICT table would. Every
** refusal names the column and what was expected.
*/
#include "colvecInt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Reads a vector value for column pCol; see colvecInt.h. */
int colvecValueToVector(sqlite3_value *pVal, const ColvecColumn *pCol,
                        void *aOut, char **pzErr) {
  char zErr[COLVEC_VECTOR_ERRMAX];
  int rc;
  zErr[0] = 0;
  switch (sqlite3_value_type(pVal)) {
  case SQLITE_BLOB: {
    const void *a = sqlite3_value_blob(pVal);
    int n = sqlite3_value_bytes(pVal);
    rc = colvecVectorCheck(a, n, pCol->eElem, pCol->nDim, zErr);
    if (rc == COLVEC_OK) memcpy(aOut, a, (size_t)n);
    break;
  }
  case SQLITE_TEXT: {
    const char *z = (const char *)sqlite3_value_text(pVal);
    int n = sqlite3_value_bytes(pVal);
    float *aVal = NULL;
    int nVal = 0;
    if (z == NULL) return SQLITE_NOMEM;
    rc = colvecJsonToFloats(z, n, &aVal, &nVal, zErr);
    if (rc == COLVEC_OK) {
      rc = colvecFloatsToVector(aVal, nVal, pCol->eElem, pCol->nDim, aOut,
                                zErr);
    }
    colvecFree(aVal);
    if (rc == COLVEC_NOMEM) return SQLITE_NOMEM;
    break;
  }
  case SQLITE_NULL:
    snprintf(zErr, sizeof(zErr), "must not be NULL");
    rc = COLVEC_ERROR;
    break;
  default:
    snprintf(zErr, sizeof(zErr),
             "expects a %s[%d] vector as a BLOB or JSON text, got a number",
             colvecElemName(pCol->eElem), pCol->nDim);
    rc = COLVEC_ERROR;
    break;
  }
  if (rc != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("colvec: %s %s", pCol->zName, zErr);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/*
** Returns the type text pVal would have after numeric affinity
** (SQLITE_INTEGER, SQLITE_FLOAT or SQLITE_TEXT), without changing pVal.
** Sets *pbNoMem on allocation failure.
*/
static int valueNumericType(sqlite3_value *pVal, int *pbNoMem) {
  sqlite3_value *pDup = sqlite3_value_dup(pVal);
  int eType;
  if (pDup == NULL) {
    *pbNoMem = 1;
    return SQLITE_TEXT;
  }
  eType = sqlite3_value_numeric_type(pDup);
  sqlite3_value_free(pDup);
  return eType;
}

/* Human name of a value's storage class for messages. */
static const char *valueTypeName(int eType) {
  switch (eType) {
  case SQLITE_INTEGER:
    return "integer";
  case SQLITE_FLOAT:
    return "real";
  case SQLITE_TEXT:
    return "text";
  case SQLITE_BLOB:
    return "blob";
  }
  return "null";
}

/* Checks an attribute value; see colvecInt.h. */
int colvecValueCheckAttr(sqlite3_value *pVal, const ColvecColumn *pCol,
                         char **pzErr) {
  static const char *const azAttr[] = {"integer", "real", "text", "blob"};
  int eType = sqlite3_value_type(pVal);
  int bOk = 0, bNoMem = 0;
  if (eType == SQLITE_NULL) return SQLITE_OK;
  switch (pCol->eAttr) {
  case COLVEC_ATTR_BLOB:
    bOk = eType == SQLITE_BLOB;
    break;
  case COLVEC_ATTR_INTEGER:
    if (eType == SQLITE_INTEGER) {
      bOk = 1;
    } else if (eType == SQLITE_FLOAT) {
      double r = sqlite3_value_double(pVal);
      bOk = r == floor(r) && r >= -9.2233720368547e18 && r <= 9.2233720368547e18;
    } else if (eType == SQLITE_TEXT) {
      int eNum = valueNumericType(pVal, &bNoMem);
      if (eNum == SQLITE_INTEGER) {
        bOk = 1;
      } else if (eNum == SQLITE_FLOAT) {
        double r = sqlite3_value_double(pVal);
        bOk = r == floor(r);
      }
    }
    break;
  case COLVEC_ATTR_REAL:
    if (eType == SQLITE_INTEGER || eType == SQLITE_FLOAT) {
      bOk = 1;
    } else if (eType == SQLITE_TEXT) {
      bOk = valueNumericType(pVal, &bNoMem) != SQLITE_TEXT;
    }
    break;
  default: /* COLVEC_ATTR_TEXT */
    bOk = eType != SQLITE_BLOB;
    break;
  }
  if (bNoMem) return SQLITE_NOMEM;
  if (bOk) return SQLITE_OK;
  if (eType == SQLITE_TEXT) {
    *pzErr = sqlite3_mprintf("colvec: %s expects %s, got text '%.40s'",
                             pCol->zName, azAttr[pCol->eAttr],
                             (const char *)sqlite3_value_text(pVal));
  } else {
    *pzErr = sqlite3_mprintf("colvec: %s expects %s, got %s", pCol->zName,
                             azAttr[pCol->eAttr], valueTypeName(eType));
  }
  return SQLITE_MISMATCH;
}
