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
  int eSub = (int)sqlite3_value_subtype(pVal);
  int rc;
  zErr[0] = 0;
  if ((eSub == COLVEC_SUBTYPE_F32 || eSub == COLVEC_SUBTYPE_I8 ||
       eSub == COLVEC_SUBTYPE_BIT) &&
      eSub != colvecVecapiSubtype(pCol->eElem)) {
    /* a value typed by vec_f32(), vec_int8(), vec_bit() or a vector column:
    ** its bytes mean elements of that type, not of this column's */
    *pzErr =
        sqlite3_mprintf("colvec: %s expects a%s %s[%d] vector, got %s vector",
                        pCol->zName, pCol->eElem == COLVEC_ELEM_I8 ? "n" : "",
                        colvecElemName(pCol->eElem), pCol->nDim,
                        eSub == COLVEC_SUBTYPE_F32  ? "a float32"
                        : eSub == COLVEC_SUBTYPE_I8 ? "an int8"
                                                    : "a bit");
    return SQLITE_ERROR;
  }
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
      rc =
          colvecFloatsToVector(aVal, nVal, pCol->eElem, pCol->nDim, aOut, zErr);
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
** Reads TEXT value pVal as SQLite's numeric affinity would (see
** colvecTextToNumber), from the value itself: no copy, no conversion of
** pVal. Returns SQLITE_OK with *peKind (COLVEC_NUM_*), *pi, *pr set, or
** SQLITE_NOMEM.
*/
static int valueTextNumber(sqlite3_value *pVal, int *peKind, int64_t *pi,
                           double *pr) {
  const char *z = (const char *)sqlite3_value_text(pVal);
  int n = sqlite3_value_bytes(pVal);
  if (z == NULL) return SQLITE_NOMEM;
  return colvecTextToNumber(z, n, peKind, pi, pr) == COLVEC_OK ? SQLITE_OK
                                                               : SQLITE_NOMEM;
}

/*
** Returns non-zero when double r is an integer an INTEGER column holds
** exactly (as SQLite's integer affinity converts it), with it in *pi.
*/
static int valueRealIsInt(double r, int64_t *pi) {
  if (!(r == floor(r) && r > -9223372036854775808.0 &&
        r < 9223372036854775808.0)) {
    return 0;
  }
  *pi = (int64_t)r;
  return 1;
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

/* Checks and converts an attribute value; see colvecInt.h. */
int colvecValueCheckAttr(sqlite3_value *pVal, const ColvecColumn *pCol,
                         ColvecCell *pCell, char **pzErr) {
  static const char *const azAttr[] = {"integer", "real", "text", "blob"};
  int eType = sqlite3_value_type(pVal);
  int bOk = 0, rc = SQLITE_OK, eKind = COLVEC_NUM_NONE;
  int64_t iNum = 0;
  double rNum = 0.0;
  pCell->pVal = pVal;
  if (eType == SQLITE_NULL) return SQLITE_OK;
  switch (eType) {
  case SQLITE_INTEGER:
    eKind = COLVEC_NUM_INTEGER;
    iNum = sqlite3_value_int64(pVal);
    break;
  case SQLITE_FLOAT:
    eKind = COLVEC_NUM_REAL;
    rNum = sqlite3_value_double(pVal);
    break;
  case SQLITE_TEXT:
    if (pCol->eAttr == COLVEC_ATTR_INTEGER || pCol->eAttr == COLVEC_ATTR_REAL) {
      rc = valueTextNumber(pVal, &eKind, &iNum, &rNum);
      if (rc != SQLITE_OK) return rc;
    }
    break;
  }
  switch (pCol->eAttr) {
  case COLVEC_ATTR_BLOB:
    bOk = eType == SQLITE_BLOB;
    break;
  case COLVEC_ATTR_INTEGER:
    if (eKind == COLVEC_NUM_INTEGER) {
      bOk = 1;
    } else if (eKind == COLVEC_NUM_REAL) {
      bOk = valueRealIsInt(rNum, &iNum);
    }
    if (bOk) {
      pCell->eNum = COLVEC_NUM_INTEGER;
      pCell->iNum = iNum;
    }
    break;
  case COLVEC_ATTR_REAL:
    if (eKind == COLVEC_NUM_INTEGER) {
      bOk = 1;
      rNum = (double)iNum;
    } else if (eKind == COLVEC_NUM_REAL) {
      bOk = !isnan(rNum);
    }
    if (bOk) {
      pCell->eNum = COLVEC_NUM_REAL;
      pCell->rNum = rNum;
    }
    break;
  default: /* COLVEC_ATTR_TEXT */
    bOk = eType != SQLITE_BLOB;
    break;
  }
  if (bOk && pCol->bStrict) {
    /* sqlite-vec converts no partition key or auxiliary value */
    static const int aeStrict[] = {SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT,
                                   SQLITE_BLOB};
    bOk = eType == aeStrict[pCol->eAttr];
  }
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
