/*
** colvec_vecapi.c — sqlite-vec's SQL function API on colvec:
**
**   vec_f32(v) vec_int8(v) vec_bit(v)     a vector with its type (subtype)
**   vec_length(v) vec_type(v)             number of elements, type name
**   vec_to_json(v)                        '[...]' as sqlite-vec prints it
**   vec_add(a, b) vec_sub(a, b)           element-wise sum and difference
**   vec_normalize(v)                      v / |v| (float32)
**   vec_slice(v, start, end)              elements start..end-1
**   vec_distance_l2/l1/cosine/hamming     distances, as sqlite-vec rounds them
**   vec_quantize_binary(v)                sign bits of a float32/int8 vector
**   vec_quantize_int8(v, 'unit')          [-1,1] floats to int8
**   vec_version() vec_debug()             colvec's version and build facts
**   vec_each(v)                           table function: one row an element
**
** Every function is registered under its colvec_* name (colvec_f32, ...,
** colvec_each) always, and under its vec_* name for connections where
** sqlite-vec does not provide it. The vec_* names are registered with a
** variable number of arguments (nArg -1; the count is checked when called):
** SQLite prefers a function registered with the exact count, so sqlite-vec
** loaded before or after colvec keeps its own functions, and its
** registration never has to replace one of colvec's (sqlite3_create_function
** refuses to replace a function while a statement runs, which is the case
** when load_extension() is called from SQL). The vec_each module, which
** would replace sqlite-vec's, is only registered when the connection has no
** vec_version() function yet (sqlite-vec registers both together); the test
** prepares "SELECT vec_version()", which reads no schema.
**
** Vector types travel as SQLite subtypes, as in sqlite-vec: float32 223,
** bit 224, int8 225; a value without one (or with JSON's, 74) is float32.
** colvec's vector columns give their values the subtype of their type.
** Where colvec and sqlite-vec differ (colvec refuses non-finite float32
** elements and malformed JSON, vec_version(), vec_debug()), README's
** "Coming from sqlite-vec" says so.
*/
#include "colvecInt.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Subtype of JSON text (SQLite's json functions, sqlite-vec's to_json). */
#define VECAPI_SUBTYPE_JSON 74

/*
** Function flags of SQLite 3.45+ that colvec's build headers (3.40) may not
** define: a function that sets a result subtype must say so there.
*/
#ifndef SQLITE_RESULT_SUBTYPE
#define SQLITE_RESULT_SUBTYPE 0x001000000
#endif

/* One row of the function table. */
typedef struct VecapiFunc VecapiFunc;
struct VecapiFunc {
  const char *zName; /* SQL name: what error messages name */
  int nArg;          /* number of arguments */
  void (*xFunc)(sqlite3_context *, int, sqlite3_value **); /* implementation */
  int iData;    /* per-function constant (metric, add/sub, ...) */
  int bSubtype; /* non-zero: sets a result subtype */
};

/* colvec_debug() and vec_debug(): one line per build fact; see colvecInt.h. */
void colvecVecapiDebug(sqlite3_context *pCtx, int argc, sqlite3_value **argv) {
  char *z;
  (void)argc;
  (void)argv;
  z = sqlite3_mprintf("version=%s\n"
                      "sqlite_version=%s\n"
                      "sqlite_min_version=%d\n"
                      "kernels_available=%s\n"
                      "kernels_chosen=%s\n"
                      "code_kernels=%s\n"
                      "page_size=%lld\n"
                      "mmap_fallbacks=%d (segments read with access=file: "
                      "too large for the address space)\n"
                      "build=%s\n"
                      "source=%s",
                      COLVEC_VERSION, sqlite3_libversion(),
                      COLVEC_MIN_SQLITE_VERSION_NUMBER,
                      colvecKernelsAvailable(), colvecKernelsBest()->zName,
                      colvecQuantKernelName(), (long long)colvecOsPageSize(),
                      colvecSegfileMapFallbacks(),
#ifdef COLVEC_DEBUG
                      "debug"
#else
                      "release"
#endif
                      ,
#ifdef COLVEC_AMALGAMATION
                      "amalgamation"
#else
                      "files"
#endif
  );
  sqlite3_result_text(pCtx, z, -1, sqlite3_free);
}

/* Returns the subtype of a vector of type eElem; see colvecInt.h. */
int colvecVecapiSubtype(ColvecElem eElem) {
  switch (eElem) {
  case COLVEC_ELEM_I8:
    return COLVEC_SUBTYPE_I8;
  case COLVEC_ELEM_BIT:
    return COLVEC_SUBTYPE_BIT;
  default:
    return COLVEC_SUBTYPE_F32;
  }
}

/* sqlite-vec's name of element type eElem (what vec_type() returns). */
static const char *vecapiTypeName(ColvecElem eElem) {
  switch (eElem) {
  case COLVEC_ELEM_I8:
    return "int8";
  case COLVEC_ELEM_BIT:
    return "bit";
  default:
    return "float32";
  }
}

/* Human name of a value's storage class for messages. */
static const char *vecapiValueType(int eType) {
  switch (eType) {
  case SQLITE_INTEGER:
    return "an integer";
  case SQLITE_FLOAT:
    return "a real";
  case SQLITE_TEXT:
    return "text";
  case SQLITE_BLOB:
    return "a blob";
  }
  return "NULL";
}

/*
** Sets the error "colvec: <zFunc>: <message>" on pCtx, the message made
** from printf-style zFmt and its arguments.
*/
static void vecapiError(sqlite3_context *pCtx, const char *zFunc,
                        const char *zFmt, ...) {
  va_list ap;
  char *zMsg, *z;
  va_start(ap, zFmt);
  zMsg = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  z = zMsg ? sqlite3_mprintf("colvec: %s: %s", zFunc, zMsg) : NULL;
  if (z == NULL) {
    sqlite3_result_error_nomem(pCtx);
  } else {
    sqlite3_result_error(pCtx, z, -1);
  }
  sqlite3_free(z);
  sqlite3_free(zMsg);
}

/* Frees what colvecVecapiRead allocated; see colvecInt.h. */
void colvecVecapiFree(ColvecVecapiVec *p) {
  colvecFree(p->pAlloc);
  p->pAlloc = NULL;
  p->a = NULL;
}

/*
** Reads value pVal as a vector of type eElem: a BLOB of raw elements (float32
** ones finite, a multiple of 4 bytes), or for float32 and int8 JSON text.
** Returns COLVEC_OK with *p filled, COLVEC_NOMEM, or COLVEC_ERROR with zErr
** (COLVEC_VECTOR_ERRMAX bytes) set.
*/
static int vecapiReadAs(sqlite3_value *pVal, ColvecElem eElem,
                        ColvecVecapiVec *p, char *zErr) {
  int eType = sqlite3_value_type(pVal);
  int rc = COLVEC_OK;
  memset(p, 0, sizeof(*p));
  p->eElem = eElem;
  if (eType == SQLITE_BLOB) {
    int nByte = sqlite3_value_bytes(pVal);
    const void *a = sqlite3_value_blob(pVal);
    if (nByte == 0) {
      snprintf(zErr, COLVEC_VECTOR_ERRMAX, "empty vector");
      return COLVEC_ERROR;
    }
    if (a == NULL) return COLVEC_NOMEM;
    if (eElem == COLVEC_ELEM_F32) {
      if (nByte % 4 != 0) {
        snprintf(zErr, COLVEC_VECTOR_ERRMAX,
                 "a float32 vector blob needs a multiple of 4 bytes, got %d",
                 nByte);
        return COLVEC_ERROR;
      }
      p->nDim = nByte / 4;
    } else {
      p->nDim = eElem == COLVEC_ELEM_BIT ? nByte * 8 : nByte;
    }
    rc = colvecVectorCheck(a, nByte, eElem, p->nDim, zErr);
    if (rc == COLVEC_OK) {
      /* a copy: float32 elements must be aligned for the kernels */
      p->pAlloc = colvecMalloc(nByte);
      if (p->pAlloc == NULL) return COLVEC_NOMEM;
      memcpy(p->pAlloc, a, (size_t)nByte);
      p->a = p->pAlloc;
    }
    return rc;
  }
  if (eType == SQLITE_TEXT && eElem != COLVEC_ELEM_BIT) {
    const char *z = (const char *)sqlite3_value_text(pVal);
    float *aVal = NULL;
    int nVal = 0;
    if (z == NULL) return COLVEC_NOMEM;
    rc = colvecJsonToFloats(z, sqlite3_value_bytes(pVal), &aVal, &nVal, zErr);
    if (rc == COLVEC_OK && nVal == 0) {
      snprintf(zErr, COLVEC_VECTOR_ERRMAX, "empty vector");
      rc = COLVEC_ERROR;
    }
    if (rc == COLVEC_OK) {
      /* int8 elements are written over the floats they come from */
      rc = colvecFloatsToVector(aVal, nVal, eElem, nVal, aVal, zErr);
    }
    if (rc != COLVEC_OK) {
      colvecFree(aVal);
      return rc;
    }
    p->pAlloc = aVal;
    p->a = aVal;
    p->nDim = nVal;
    return COLVEC_OK;
  }
  snprintf(zErr, COLVEC_VECTOR_ERRMAX, "expects a%s %s vector (%s), got %s",
           eElem == COLVEC_ELEM_I8 ? "n" : "", vecapiTypeName(eElem),
           eElem == COLVEC_ELEM_BIT ? "a BLOB" : "a BLOB or JSON text",
           vecapiValueType(eType));
  return COLVEC_ERROR;
}

/* Reads a vector argument; see colvecInt.h. */
int colvecVecapiRead(sqlite3_context *pCtx, const char *zFunc,
                     sqlite3_value *pVal, int eForce, ColvecVecapiVec *p) {
  char zErr[COLVEC_VECTOR_ERRMAX];
  ColvecElem eElem = COLVEC_ELEM_F32;
  int rc;
  zErr[0] = 0;
  if (eForce >= 0) {
    eElem = (ColvecElem)eForce;
  } else {
    int eSub = (int)sqlite3_value_subtype(pVal);
    switch (eSub) {
    case 0:
    case VECAPI_SUBTYPE_JSON:
    case COLVEC_SUBTYPE_F32:
      break;
    case COLVEC_SUBTYPE_I8:
      eElem = COLVEC_ELEM_I8;
      break;
    case COLVEC_SUBTYPE_BIT:
      eElem = COLVEC_ELEM_BIT;
      break;
    default:
      snprintf(zErr, sizeof(zErr),
               "unknown vector subtype %d (float32 223, bit 224, int8 225)",
               eSub);
      vecapiError(pCtx, zFunc, "%s", zErr);
      return 1;
    }
  }
  rc = vecapiReadAs(pVal, eElem, p, zErr);
  if (rc == COLVEC_OK) return 0;
  colvecVecapiFree(p);
  if (rc == COLVEC_NOMEM) {
    sqlite3_result_error_nomem(pCtx);
  } else {
    vecapiError(pCtx, zFunc, "%s", zErr);
  }
  return 1;
}

/*
** Reads the two vector arguments of a binary function, which must have the
** same type and length. Returns 0 with *pA and *pB filled (free both), or
** non-zero with the function's error set and nothing to free.
*/
static int vecapiReadPair(sqlite3_context *pCtx, const char *zFunc,
                          sqlite3_value **argv, ColvecVecapiVec *pA,
                          ColvecVecapiVec *pB) {
  if (colvecVecapiRead(pCtx, zFunc, argv[0], -1, pA)) return 1;
  if (colvecVecapiRead(pCtx, zFunc, argv[1], -1, pB)) {
    colvecVecapiFree(pA);
    return 1;
  }
  if (pA->eElem != pB->eElem) {
    vecapiError(pCtx, zFunc, "the vectors have different types (%s and %s)",
                vecapiTypeName(pA->eElem), vecapiTypeName(pB->eElem));
  } else if (pA->nDim != pB->nDim) {
    vecapiError(pCtx, zFunc, "vectors have different dimensions (%d and %d)",
                pA->nDim, pB->nDim);
  } else {
    return 0;
  }
  colvecVecapiFree(pA);
  colvecVecapiFree(pB);
  return 1;
}

/* The function's table row, and so its SQL name. */
#define VECAPI_FUNC(pCtx) ((const VecapiFunc *)sqlite3_user_data(pCtx))

/*
** Sets the result to a vector of type eElem held in a (nByte bytes,
** colvecMalloc'd; the result takes it) and its subtype.
*/
static void vecapiResultVector(sqlite3_context *pCtx, ColvecElem eElem, void *a,
                               int nByte) {
  sqlite3_result_blob(pCtx, a, nByte, colvecFree);
  sqlite3_result_subtype(pCtx, (unsigned)colvecVecapiSubtype(eElem));
}

/*
** vec_f32(v), vec_int8(v), vec_bit(v): v read as the type of the function
** (iData, whatever subtype v has) and returned with that type's subtype.
*/
static void vecapiTyped(sqlite3_context *pCtx, int argc, sqlite3_value **argv) {
  const VecapiFunc *pF = VECAPI_FUNC(pCtx);
  ColvecVecapiVec v;
  (void)argc;
  if (colvecVecapiRead(pCtx, pF->zName, argv[0], pF->iData, &v)) return;
  vecapiResultVector(pCtx, v.eElem, v.pAlloc,
                     (int)colvecVectorBytes(v.eElem, v.nDim));
}

/* vec_length(v): number of elements (bits for a bit vector). */
static void vecapiLength(sqlite3_context *pCtx, int argc,
                         sqlite3_value **argv) {
  ColvecVecapiVec v;
  (void)argc;
  if (colvecVecapiRead(pCtx, VECAPI_FUNC(pCtx)->zName, argv[0], -1, &v)) return;
  sqlite3_result_int64(pCtx, v.nDim);
  colvecVecapiFree(&v);
}

/* vec_type(v): 'float32', 'int8' or 'bit'. */
static void vecapiType(sqlite3_context *pCtx, int argc, sqlite3_value **argv) {
  ColvecVecapiVec v;
  (void)argc;
  if (colvecVecapiRead(pCtx, VECAPI_FUNC(pCtx)->zName, argv[0], -1, &v)) return;
  sqlite3_result_text(pCtx, vecapiTypeName(v.eElem), -1, SQLITE_STATIC);
  colvecVecapiFree(&v);
}

/*
** vec_to_json(v): JSON text as sqlite-vec writes it: float32 elements with
** printf's %f (six decimals), int8 as integers, bits 0/1 least significant
** bit first; the result has JSON's subtype.
*/
static void vecapiToJson(sqlite3_context *pCtx, int argc,
                         sqlite3_value **argv) {
  ColvecVecapiVec v;
  sqlite3_str *pStr;
  char *z;
  int i, n;
  (void)argc;
  if (colvecVecapiRead(pCtx, VECAPI_FUNC(pCtx)->zName, argv[0], -1, &v)) return;
  pStr = sqlite3_str_new(sqlite3_context_db_handle(pCtx));
  sqlite3_str_appendchar(pStr, 1, '[');
  for (i = 0; i < v.nDim; i++) {
    if (i > 0) sqlite3_str_appendchar(pStr, 1, ',');
    switch (v.eElem) {
    case COLVEC_ELEM_F32:
      sqlite3_str_appendf(pStr, "%f", (double)((const float *)v.a)[i]);
      break;
    case COLVEC_ELEM_I8:
      sqlite3_str_appendf(pStr, "%d", ((const int8_t *)v.a)[i]);
      break;
    case COLVEC_ELEM_BIT:
      sqlite3_str_appendf(pStr, "%d",
                          (((const uint8_t *)v.a)[i / 8] >> (i % 8)) & 1);
      break;
    }
  }
  sqlite3_str_appendchar(pStr, 1, ']');
  n = sqlite3_str_length(pStr);
  z = sqlite3_str_finish(pStr);
  if (z == NULL) {
    sqlite3_result_error_nomem(pCtx);
  } else {
    sqlite3_result_text(pCtx, z, n, sqlite3_free);
    sqlite3_result_subtype(pCtx, VECAPI_SUBTYPE_JSON);
  }
  colvecVecapiFree(&v);
}

/*
** vec_add(a, b) (iData 0) and vec_sub(a, b) (iData 1): element-wise, of two
** float32 or two int8 vectors of one length (int8 results wrap around, as
** sqlite-vec's do). Bit vectors are refused.
*/
static void vecapiArith(sqlite3_context *pCtx, int argc, sqlite3_value **argv) {
  const VecapiFunc *pF = VECAPI_FUNC(pCtx);
  ColvecVecapiVec a, b;
  int i;
  (void)argc;
  if (vecapiReadPair(pCtx, pF->zName, argv, &a, &b)) return;
  if (a.eElem == COLVEC_ELEM_BIT) {
    vecapiError(pCtx, pF->zName, "bit vectors cannot be added or subtracted");
  } else if (a.eElem == COLVEC_ELEM_F32) {
    float *pA = a.pAlloc;
    const float *pB = b.a;
    for (i = 0; i < a.nDim; i++) {
      pA[i] = pF->iData ? pA[i] - pB[i] : pA[i] + pB[i];
    }
  } else {
    int8_t *pA = a.pAlloc;
    const int8_t *pB = b.a;
    for (i = 0; i < a.nDim; i++) {
      int x = pF->iData ? pA[i] - pB[i] : pA[i] + pB[i];
      pA[i] = (int8_t)(uint8_t)(x & 0xff);
    }
  }
  if (a.eElem != COLVEC_ELEM_BIT) {
    vecapiResultVector(pCtx, a.eElem, a.pAlloc,
                       (int)colvecVectorBytes(a.eElem, a.nDim));
    a.pAlloc = NULL;
  }
  colvecVecapiFree(&a);
  colvecVecapiFree(&b);
}

/*
** vec_normalize(v): the float32 vector v divided by its Euclidean norm
** (computed in float32, as sqlite-vec does). A zero vector is refused: its
** direction is undefined.
*/
static void vecapiNormalize(sqlite3_context *pCtx, int argc,
                            sqlite3_value **argv) {
  const VecapiFunc *pF = VECAPI_FUNC(pCtx);
  ColvecVecapiVec v;
  float *a, rNorm;
  int i;
  (void)argc;
  if (colvecVecapiRead(pCtx, pF->zName, argv[0], -1, &v)) return;
  if (v.eElem != COLVEC_ELEM_F32) {
    vecapiError(pCtx, pF->zName, "only float32 vectors can be normalized");
    colvecVecapiFree(&v);
    return;
  }
  a = v.pAlloc;
  rNorm = (float)sqrt((double)colvecKernelsBest()->xDotF32(a, a, v.nDim));
  if (!(rNorm > 0.0f) || isinf(rNorm)) {
    vecapiError(pCtx, pF->zName,
                rNorm > 0.0f ? "the vector's norm overflows float32"
                             : "a zero vector has no direction");
    colvecVecapiFree(&v);
    return;
  }
  for (i = 0; i < v.nDim; i++)
    a[i] = a[i] / rNorm;
  vecapiResultVector(pCtx, COLVEC_ELEM_F32, a, v.nDim * 4);
}

/*
** vec_slice(v, start, end): elements start..end-1 of v, with v's type. For a
** bit vector start and end count bits and must be multiples of 8.
*/
static void vecapiSlice(sqlite3_context *pCtx, int argc, sqlite3_value **argv) {
  const VecapiFunc *pF = VECAPI_FUNC(pCtx);
  ColvecVecapiVec v;
  int64_t iStart, iEnd;
  (void)argc;
  if (colvecVecapiRead(pCtx, pF->zName, argv[0], -1, &v)) return;
  iStart = sqlite3_value_int64(argv[1]);
  iEnd = sqlite3_value_int64(argv[2]);
  if (iStart < 0 || iEnd < 0) {
    vecapiError(pCtx, pF->zName,
                "start (%lld) and end (%lld) must not be negative",
                (long long)iStart, (long long)iEnd);
  } else if (iEnd > v.nDim) {
    vecapiError(pCtx, pF->zName, "end (%lld) is past the vector's %d elements",
                (long long)iEnd, v.nDim);
  } else if (iStart >= iEnd) {
    vecapiError(pCtx, pF->zName,
                "start (%lld) must be less than end (%lld): a vector has at "
                "least one element",
                (long long)iStart, (long long)iEnd);
  } else if (v.eElem == COLVEC_ELEM_BIT && (iStart % 8 || iEnd % 8)) {
    vecapiError(pCtx, pF->zName,
                "start (%lld) and end (%lld) of a bit vector must be "
                "multiples of 8",
                (long long)iStart, (long long)iEnd);
  } else {
    int nElem = v.eElem == COLVEC_ELEM_F32 ? 4 : 1;
    int nDiv = v.eElem == COLVEC_ELEM_BIT ? 8 : 1;
    int64_t nByte = (iEnd - iStart) / nDiv * nElem;
    uint8_t *a = v.pAlloc;
    memmove(a, a + iStart / nDiv * nElem, (size_t)nByte);
    vecapiResultVector(pCtx, v.eElem, a, (int)nByte);
    return;
  }
  colvecVecapiFree(&v);
}

/*
** Sum of |a[i]-b[i]| over n floats, in double, in order: sqlite-vec's L1 of
** float32 vectors, which vec_distance_l1 reproduces to the last bit. The
** l1 metric's kernels (ColvecKernels.xL1F32) sum in float32 lanes, a
** different rounding, so they are not used here; int8 vectors, summed
** exactly either way, go through colvecDistance.
*/
static double vecapiL1F32(const float *a, const float *b, int n) {
  double r = 0.0;
  int i;
  for (i = 0; i < n; i++)
    r += fabs((double)a[i] - (double)b[i]);
  return r;
}

/*
** vec_distance_l2/l1/cosine/hamming(a, b) (metric in iData; l1 is
** COLVEC_METRIC_HAMMING+1): the raw sums come from colvec's kernels, the
** result is rounded as sqlite-vec rounds it: l2 and cosine to float32, l1
** in double (float32) or an integer (int8), hamming a real. l2, l1 and cosine
** take float32 or int8 vectors, hamming bit vectors. A cosine with a zero
** vector is NULL (sqlite-vec's 0/0).
*/
static void vecapiDistance(sqlite3_context *pCtx, int argc,
                           sqlite3_value **argv) {
  const VecapiFunc *pF = VECAPI_FUNC(pCtx);
  const ColvecKernels *pK = colvecKernelsBest();
  ColvecVecapiVec a, b;
  int bHamming = pF->iData == COLVEC_METRIC_HAMMING;
  (void)argc;
  if (vecapiReadPair(pCtx, pF->zName, argv, &a, &b)) return;
  if (bHamming != (a.eElem == COLVEC_ELEM_BIT)) {
    vecapiError(pCtx, pF->zName, "not defined for %s vectors%s",
                vecapiTypeName(a.eElem), bHamming ? " (bit vectors only)" : "");
  } else if (bHamming) {
    sqlite3_result_double(pCtx, (double)pK->xHamming(a.a, b.a, a.nDim / 8));
  } else if (pF->iData == COLVEC_METRIC_L2) {
    float rSum = a.eElem == COLVEC_ELEM_F32
                     ? pK->xL2sqF32(a.a, b.a, a.nDim)
                     : (float)pK->xL2sqI8(a.a, b.a, a.nDim);
    sqlite3_result_double(pCtx, (double)(float)sqrt((double)rSum));
  } else if (pF->iData == COLVEC_METRIC_COSINE) {
    float rDot, rA, rB;
    if (a.eElem == COLVEC_ELEM_F32) {
      pK->xDotNormsF32(a.a, b.a, a.nDim, &rDot, &rA, &rB);
    } else {
      int64_t iDot, iA, iB;
      pK->xDotNormsI8(a.a, b.a, a.nDim, &iDot, &iA, &iB);
      rDot = (float)iDot;
      rA = (float)iA;
      rB = (float)iB;
    }
    if (rA == 0.0f || rB == 0.0f) {
      sqlite3_result_null(pCtx);
    } else {
      sqlite3_result_double(
          pCtx, (double)(float)(1.0 - (double)rDot / (sqrt((double)rA) *
                                                      sqrt((double)rB))));
    }
  } else if (a.eElem == COLVEC_ELEM_F32) {
    sqlite3_result_double(pCtx, vecapiL1F32(a.a, b.a, a.nDim));
  } else {
    sqlite3_result_int64(
        pCtx, (sqlite3_int64)colvecDistance(pK, COLVEC_METRIC_L1,
                                            COLVEC_ELEM_I8, a.a, b.a, a.nDim));
  }
  colvecVecapiFree(&a);
  colvecVecapiFree(&b);
}

/*
** vec_quantize_binary(v): one bit per element of a float32 or int8 vector
** (1 when the element is > 0), least significant bit first; the length must
** be a multiple of 8.
*/
static void vecapiQuantizeBinary(sqlite3_context *pCtx, int argc,
                                 sqlite3_value **argv) {
  const VecapiFunc *pF = VECAPI_FUNC(pCtx);
  ColvecVecapiVec v;
  uint8_t *aOut;
  int i;
  (void)argc;
  if (colvecVecapiRead(pCtx, pF->zName, argv[0], -1, &v)) return;
  if (v.eElem == COLVEC_ELEM_BIT) {
    vecapiError(pCtx, pF->zName, "expects a float32 or int8 vector, got bit");
  } else if (v.nDim % 8) {
    vecapiError(pCtx, pF->zName,
                "the vector's length (%d) must be a multiple of 8", v.nDim);
  } else if ((aOut = colvecMalloc(v.nDim / 8)) == NULL) {
    sqlite3_result_error_nomem(pCtx);
  } else {
    memset(aOut, 0, (size_t)v.nDim / 8);
    for (i = 0; i < v.nDim; i++) {
      int bSet = v.eElem == COLVEC_ELEM_F32 ? ((const float *)v.a)[i] > 0.0f
                                            : ((const int8_t *)v.a)[i] > 0;
      aOut[i / 8] |= (uint8_t)(bSet << (i % 8));
    }
    vecapiResultVector(pCtx, COLVEC_ELEM_BIT, aOut, v.nDim / 8);
  }
  colvecVecapiFree(&v);
}

/*
** vec_quantize_int8(v, 'unit'): each float32 element of v (read as float32
** whatever its subtype) mapped from [-1, 1] onto -128..127 as sqlite-vec
** maps it (steps of 2/255, truncated, out-of-range values clamped). 'unit'
** is the only range.
*/
static void vecapiQuantizeInt8(sqlite3_context *pCtx, int argc,
                               sqlite3_value **argv) {
  const VecapiFunc *pF = VECAPI_FUNC(pCtx);
  const char *zRange = (const char *)sqlite3_value_text(argv[1]);
  ColvecVecapiVec v;
  int8_t *aOut;
  float rStep = (float)((1.0 - (-1.0)) / 255);
  int i;
  (void)argc;
  if (colvecVecapiRead(pCtx, pF->zName, argv[0], COLVEC_ELEM_F32, &v)) return;
  if (sqlite3_value_type(argv[1]) != SQLITE_TEXT || zRange == NULL ||
      sqlite3_stricmp(zRange, "unit") != 0 ||
      sqlite3_value_bytes(argv[1]) != 4) {
    vecapiError(pCtx, pF->zName,
                "unknown range %s%.40s%s, the range must be "
                "'unit'",
                zRange ? "'" : "", zRange ? zRange : "NULL", zRange ? "'" : "");
  } else if ((aOut = colvecMalloc(v.nDim)) == NULL) {
    sqlite3_result_error_nomem(pCtx);
  } else {
    for (i = 0; i < v.nDim; i++) {
      double r = (((const float *)v.a)[i] - (-1.0)) / rStep - 128;
      if (!(r <= 127.0)) r = 127.0;
      if (!(r >= -128.0)) r = -128.0;
      aOut[i] = (int8_t)r;
    }
    vecapiResultVector(pCtx, COLVEC_ELEM_I8, aOut, v.nDim);
  }
  colvecVecapiFree(&v);
}

/* vec_version(): colvec's version, so that it is clear what answers. */
static void vecapiVersion(sqlite3_context *pCtx, int argc,
                          sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  sqlite3_result_text(pCtx, "colvec " COLVEC_VERSION, -1, SQLITE_STATIC);
}

/*************************************************************************
** vec_each(v) / colvec_each(v): an eponymous table-valued function with
** one row per element of v: rowid the index, value the element (a real for
** float32, an integer for int8 and bit). The module's client data says the
** bit order: sqlite-vec's vec_each numbers a byte's bits from the most
** significant one (unlike its vec_to_json); colvec_each from the least
** significant, as colvec's bit columns, colvec_to_json and vec_to_json do.
*/
typedef struct VecapiEachVtab VecapiEachVtab;
struct VecapiEachVtab {
  sqlite3_vtab base; /* base class: must be first */
  int bMsb;          /* bits numbered from the most significant (vec_each) */
};

typedef struct VecapiEachCursor VecapiEachCursor;
struct VecapiEachCursor {
  sqlite3_vtab_cursor base; /* base class: must be first */
  ColvecVecapiVec v;        /* the vector being walked (a NULL: none) */
  int64_t iRow;             /* current element */
};

/* Column numbers of the declared table. */
#define VECAPI_EACH_VALUE 0
#define VECAPI_EACH_VECTOR 1

/* xConnect: one table shape for every use; pAux non-NULL: MSB-first bits. */
static int vecapiEachConnect(sqlite3 *db, void *pAux, int argc,
                             const char *const *argv, sqlite3_vtab **ppVtab,
                             char **pzErr) {
  int rc;
  (void)argc;
  (void)argv;
  (void)pzErr;
  rc = sqlite3_declare_vtab(db, "CREATE TABLE x(value, vector HIDDEN)");
  if (rc == SQLITE_OK) {
    VecapiEachVtab *pNew = sqlite3_malloc(sizeof(*pNew));
    if (pNew == NULL) return SQLITE_NOMEM;
    memset(pNew, 0, sizeof(*pNew));
    pNew->bMsb = pAux != NULL;
    sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
    *ppVtab = &pNew->base;
  }
  return rc;
}

/* xOpen. */
static int vecapiEachOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur) {
  (void)pVtab;
  return colvecTvfCursor(sizeof(VecapiEachCursor), ppCur);
}

/* xClose. */
static int vecapiEachClose(sqlite3_vtab_cursor *pCursor) {
  VecapiEachCursor *pCur = (VecapiEachCursor *)pCursor;
  colvecVecapiFree(&pCur->v);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/*
** xBestIndex: the hidden vector column must be given (vec_each(v) or
** vector = v); without it the plan is refused (SQLITE_CONSTRAINT).
*/
static int vecapiEachBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo) {
  int i;
  (void)pVtab;
  for (i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *p = &pInfo->aConstraint[i];
    if (p->iColumn == VECAPI_EACH_VECTOR &&
        p->op == SQLITE_INDEX_CONSTRAINT_EQ && p->usable) {
      pInfo->aConstraintUsage[i].argvIndex = 1;
      pInfo->aConstraintUsage[i].omit = 1;
      pInfo->estimatedCost = 1000.0;
      pInfo->estimatedRows = 1000;
      return SQLITE_OK;
    }
  }
  return SQLITE_CONSTRAINT;
}

/* xFilter: reads the vector (by its subtype); a bad one is an error. */
static int vecapiEachFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                            const char *idxStr, int argc,
                            sqlite3_value **argv) {
  VecapiEachCursor *pCur = (VecapiEachCursor *)pCursor;
  int bMsb = ((VecapiEachVtab *)pCursor->pVtab)->bMsb;
  char zErr[COLVEC_VECTOR_ERRMAX];
  int eSub, rc;
  (void)idxNum;
  (void)idxStr;
  (void)argc;
  colvecVecapiFree(&pCur->v);
  pCur->iRow = 0;
  zErr[0] = 0;
  eSub = (int)sqlite3_value_subtype(argv[0]);
  rc = vecapiReadAs(argv[0],
                    eSub == COLVEC_SUBTYPE_I8    ? COLVEC_ELEM_I8
                    : eSub == COLVEC_SUBTYPE_BIT ? COLVEC_ELEM_BIT
                                                 : COLVEC_ELEM_F32,
                    &pCur->v, zErr);
  if (rc == COLVEC_NOMEM) return SQLITE_NOMEM;
  if (rc != COLVEC_OK) {
    sqlite3_free(pCursor->pVtab->zErrMsg);
    pCursor->pVtab->zErrMsg = sqlite3_mprintf(
        "colvec: %s: %s", bMsb ? "vec_each" : "colvec_each", zErr);
    colvecVecapiFree(&pCur->v);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* xNext. */
static int vecapiEachNext(sqlite3_vtab_cursor *pCursor) {
  ((VecapiEachCursor *)pCursor)->iRow++;
  return SQLITE_OK;
}

/* xEof. */
static int vecapiEachEof(sqlite3_vtab_cursor *pCursor) {
  VecapiEachCursor *pCur = (VecapiEachCursor *)pCursor;
  return pCur->v.a == NULL || pCur->iRow >= pCur->v.nDim;
}

/* xColumn: the element (hidden column "vector": NULL). */
static int vecapiEachColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *pCtx,
                            int iCol) {
  VecapiEachCursor *pCur = (VecapiEachCursor *)pCursor;
  int64_t i = pCur->iRow;
  if (iCol != VECAPI_EACH_VALUE) return SQLITE_OK;
  switch (pCur->v.eElem) {
  case COLVEC_ELEM_F32:
    sqlite3_result_double(pCtx, ((const float *)pCur->v.a)[i]);
    break;
  case COLVEC_ELEM_I8:
    sqlite3_result_int(pCtx, ((const int8_t *)pCur->v.a)[i]);
    break;
  case COLVEC_ELEM_BIT: {
    int bMsb = ((VecapiEachVtab *)pCursor->pVtab)->bMsb;
    int iBit = bMsb ? 7 - (int)(i % 8) : (int)(i % 8);
    sqlite3_result_int(pCtx, (((const uint8_t *)pCur->v.a)[i / 8] >> iBit) & 1);
    break;
  }
  }
  return SQLITE_OK;
}

/* xRowid: the element's index. */
static int vecapiEachRowid(sqlite3_vtab_cursor *pCursor, sqlite3_int64 *piRow) {
  *piRow = ((VecapiEachCursor *)pCursor)->iRow;
  return SQLITE_OK;
}

/* The eponymous-only module of vec_each / colvec_each. */
static sqlite3_module vecapiEachModule = {
    0,                   /* iVersion */
    0,                   /* xCreate: eponymous only */
    vecapiEachConnect,   /* xConnect */
    vecapiEachBestIndex, /* xBestIndex */
    colvecTvfDisconnect, /* xDisconnect */
    0,                   /* xDestroy */
    vecapiEachOpen,      /* xOpen */
    vecapiEachClose,     /* xClose */
    vecapiEachFilter,    /* xFilter */
    vecapiEachNext,      /* xNext */
    vecapiEachEof,       /* xEof */
    vecapiEachColumn,    /* xColumn */
    vecapiEachRowid,     /* xRowid */
    0,                   /* xUpdate */
    0,                   /* xBegin */
    0,                   /* xSync */
    0,                   /* xCommit */
    0,                   /* xRollback */
    0,                   /* xFindFunction */
    0,                   /* xRename */
    0,                   /* xSavepoint */
    0,                   /* xRelease */
    0,                   /* xRollbackTo */
    0,                   /* xShadowName */
#if SQLITE_VERSION_NUMBER >= 3044000
    0 /* xIntegrity */
#endif
};

/*************************************************************************
** Registration.
*/

/*
** The function body of every vec_* name (registered with nArg -1): checks
** the number of arguments, then runs the function of the table row.
*/
static void vecapiVariadic(sqlite3_context *pCtx, int argc,
                           sqlite3_value **argv) {
  const VecapiFunc *pF = VECAPI_FUNC(pCtx);
  if (argc != pF->nArg) {
    vecapiError(pCtx, pF->zName, "expects %d argument%s, got %d", pF->nArg,
                pF->nArg == 1 ? "" : "s", argc);
    return;
  }
  pF->xFunc(pCtx, argc, argv);
}

/*
** Returns non-zero when connection db has a function zName taking nArg
** arguments: "SELECT zName(?, ...)" prepares (it reads no schema).
*/
static int vecapiHasFunction(sqlite3 *db, const char *zName, int nArg) {
  sqlite3_stmt *pStmt = NULL;
  char *zSql;
  int rc;
  zSql = sqlite3_mprintf("SELECT \"%w\"(%.*s)", zName,
                         nArg > 0 ? nArg * 2 - 1 : 0, "?,?,?");
  if (zSql == NULL) return 0;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return rc == SQLITE_OK;
}

/*
** Clears the error that vecapiHasFunction's failed prepares left on db:
** when colvec is registered through sqlite3_auto_extension(),
** sqlite3_open() reads the connection's error code after the extensions ran
** and would fail with "no such function: ...". Preparing an empty string
** succeeds and sets the error code back to SQLITE_OK without reading the
** schema (reading it before the module is known would leave the shadow
** tables writable in defensive mode).
*/
static void vecapiClearError(sqlite3 *db) {
  sqlite3_stmt *pStmt = NULL;
  sqlite3_prepare_v2(db, "", -1, &pStmt, NULL);
  sqlite3_finalize(pStmt);
}

/* Registers the functions and vec_each; see colvecInt.h. */
int colvecVecapiRegister(sqlite3 *db) {
  /* Each function twice: its colvec_* name first, then its vec_* name.
  ** vec_to_json, vec_distance_l2/cosine/hamming, vec_version and vec_debug
  ** have colvec_* functions of their own (colvec_func.c). */
  static const VecapiFunc aFunc[] = {
      {"colvec_f32", 1, vecapiTyped, COLVEC_ELEM_F32, 1},
      {"vec_f32", 1, vecapiTyped, COLVEC_ELEM_F32, 1},
      {"colvec_int8", 1, vecapiTyped, COLVEC_ELEM_I8, 1},
      {"vec_int8", 1, vecapiTyped, COLVEC_ELEM_I8, 1},
      {"colvec_bit", 1, vecapiTyped, COLVEC_ELEM_BIT, 1},
      {"vec_bit", 1, vecapiTyped, COLVEC_ELEM_BIT, 1},
      {"colvec_length", 1, vecapiLength, 0, 0},
      {"vec_length", 1, vecapiLength, 0, 0},
      {"colvec_type", 1, vecapiType, 0, 0},
      {"vec_type", 1, vecapiType, 0, 0},
      {"colvec_add", 2, vecapiArith, 0, 1},
      {"vec_add", 2, vecapiArith, 0, 1},
      {"colvec_sub", 2, vecapiArith, 1, 1},
      {"vec_sub", 2, vecapiArith, 1, 1},
      {"colvec_normalize", 1, vecapiNormalize, 0, 1},
      {"vec_normalize", 1, vecapiNormalize, 0, 1},
      {"colvec_slice", 3, vecapiSlice, 0, 1},
      {"vec_slice", 3, vecapiSlice, 0, 1},
      {"colvec_distance_l1", 2, vecapiDistance, COLVEC_METRIC_HAMMING + 1, 0},
      {"vec_distance_l1", 2, vecapiDistance, COLVEC_METRIC_HAMMING + 1, 0},
      {"colvec_quantize_binary", 1, vecapiQuantizeBinary, 0, 1},
      {"vec_quantize_binary", 1, vecapiQuantizeBinary, 0, 1},
      {"colvec_quantize_int8", 2, vecapiQuantizeInt8, 0, 1},
      {"vec_quantize_int8", 2, vecapiQuantizeInt8, 0, 1},
      {"vec_to_json", 1, vecapiToJson, 0, 1},
      {"vec_distance_l2", 2, vecapiDistance, COLVEC_METRIC_L2, 0},
      {"vec_distance_cosine", 2, vecapiDistance, COLVEC_METRIC_COSINE, 0},
      {"vec_distance_hamming", 2, vecapiDistance, COLVEC_METRIC_HAMMING, 0},
      {"vec_version", 0, vecapiVersion, 0, 0},
      {"vec_debug", 0, colvecVecapiDebug, 0, 0},
  };
  int bNewer = sqlite3_libversion_number() >= 3045000;
  int bVecEach = !vecapiHasFunction(db, "vec_version", 0);
  int rc = SQLITE_OK;
  int i;
  for (i = 0; rc == SQLITE_OK && i < (int)(sizeof(aFunc) / sizeof(aFunc[0]));
       i++) {
    const VecapiFunc *pF = &aFunc[i];
    int bVec = pF->zName[0] == 'v';
    int eFlags = SQLITE_UTF8 | SQLITE_INNOCUOUS | SQLITE_SUBTYPE;
    if (pF->xFunc != colvecVecapiDebug) eFlags |= SQLITE_DETERMINISTIC;
    if (pF->bSubtype && bNewer) eFlags |= SQLITE_RESULT_SUBTYPE;
    if (bVec && vecapiHasFunction(db, pF->zName, pF->nArg)) continue;
    rc = sqlite3_create_function_v2(
        db, pF->zName, bVec ? -1 : pF->nArg, eFlags, (void *)pF,
        bVec ? vecapiVariadic : pF->xFunc, NULL, NULL, NULL);
  }
  if (rc == SQLITE_OK) {
    rc = sqlite3_create_module_v2(db, "colvec_each", &vecapiEachModule, NULL,
                                  NULL);
  }
  if (rc == SQLITE_OK && bVecEach) {
    rc = sqlite3_create_module_v2(db, "vec_each", &vecapiEachModule,
                                  (void *)&vecapiEachModule, NULL);
  }
  if (rc == SQLITE_OK) vecapiClearError(db);
  return rc;
}
