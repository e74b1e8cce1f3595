/*
** colvec_func.c — scalar SQL functions:
**
**   colvec_version()               version string
**   colvec_debug()                 build facts (colvec_vecapi.c)
**   colvec_distance_l2(a, b)       Euclidean distance of two float vectors
**   colvec_distance_cosine(a, b)   1 - cosine similarity
**   colvec_distance_dot(a, b)      negative inner product
**   colvec_distance_hamming(a, b)  differing bits of two equal-length blobs
**   colvec_to_json(v)              vector -> '[...]' (int8/bit by subtype)
**   colvec_from_json(text)         '[...]' -> float32 blob
**   colvec_check(table [, schema]) integrity check: 'ok' or an error
**   colvec_backup(dest [, schema])  online backup (colvec_backup.c)
**   colvec_segments(table [, schema])  table function (colvec_segments.c)
**
** Float vectors are float32 BLOBs or JSON text, as in table columns; int8
** and bit vectors are recognised by their subtype (colvec_vecapi.c, which
** also has sqlite-vec's vec_* functions and reads every vector argument).
** Debug builds add colvec_test_fault(n): fail the allocation after n more,
** colvec_test_segment_bytes(n): the cap on one segment's write buffers,
** and colvec_test_pending_bytes(n): the pending bytes that start a bulk load.
*/
#include "colvecInt.h"

#include <stdio.h>
#include <string.h>

/* colvec_version(): the version string. */
static void funcVersion(sqlite3_context *pCtx, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  sqlite3_result_text(pCtx, COLVEC_VERSION, -1, SQLITE_STATIC);
}

/*
** colvec_distance_l2/cosine/dot(a, b): the metric comes from the function's
** user data. Both vectors must have the same type (float32 or int8, by
** their subtypes) and dimension.
*/
static void funcDistance(sqlite3_context *pCtx, int argc,
                         sqlite3_value **argv) {
  ColvecMetric eMetric = (ColvecMetric)(intptr_t)sqlite3_user_data(pCtx);
  const char *zFunc = eMetric == COLVEC_METRIC_L2 ? "colvec_distance_l2"
                      : eMetric == COLVEC_METRIC_COSINE
                          ? "colvec_distance_cosine"
                          : "colvec_distance_dot";
  ColvecVecapiVec a, b;
  char *zMsg = NULL;
  (void)argc;
  if (colvecVecapiRead(pCtx, zFunc, argv[0], -1, &a)) return;
  if (colvecVecapiRead(pCtx, zFunc, argv[1], -1, &b)) {
    colvecVecapiFree(&a);
    return;
  }
  if (a.eElem != b.eElem || a.eElem == COLVEC_ELEM_BIT) {
    zMsg = sqlite3_mprintf("colvec: %s: expects two float32 or two int8 "
                           "vectors, got %s and %s",
                           zFunc, colvecElemName(a.eElem),
                           colvecElemName(b.eElem));
  } else if (a.nDim != b.nDim) {
    zMsg = sqlite3_mprintf(
        "colvec: %s: vectors have different dimensions (%d and %d)", zFunc,
        a.nDim, b.nDim);
  } else {
    sqlite3_result_double(pCtx, colvecDistance(colvecKernelsBest(), eMetric,
                                               a.eElem, a.a, b.a, a.nDim));
  }
  if (zMsg) {
    sqlite3_result_error(pCtx, zMsg, -1);
    sqlite3_free(zMsg);
  }
  colvecVecapiFree(&a);
  colvecVecapiFree(&b);
}

/* colvec_distance_hamming(a, b): differing bits of two equal-length BLOBs. */
static void funcHamming(sqlite3_context *pCtx, int argc, sqlite3_value **argv) {
  int nA = sqlite3_value_bytes(argv[0]);
  int nB = sqlite3_value_bytes(argv[1]);
  (void)argc;
  if (sqlite3_value_type(argv[0]) != SQLITE_BLOB ||
      sqlite3_value_type(argv[1]) != SQLITE_BLOB || nA != nB || nA == 0) {
    sqlite3_result_error(pCtx,
                         "colvec: colvec_distance_hamming: expects two "
                         "non-empty BLOBs of the same length",
                         -1);
    return;
  }
  sqlite3_result_int64(
      pCtx, colvecDistance(colvecKernelsBest(), COLVEC_METRIC_HAMMING,
                           COLVEC_ELEM_BIT, sqlite3_value_blob(argv[0]),
                           sqlite3_value_blob(argv[1]), nA * 8));
}

/*
** colvec_to_json(v): a vector (BLOB or JSON; float32, or int8 or bit by its
** subtype) as canonical JSON: floats in the shortest form that reads back
** to the same float32.
*/
static void funcToJson(sqlite3_context *pCtx, int argc, sqlite3_value **argv) {
  ColvecVecapiVec v;
  char *zJson = NULL;
  (void)argc;
  if (colvecVecapiRead(pCtx, "colvec_to_json", argv[0], -1, &v)) return;
  if (colvecVectorToJson(v.a, v.eElem, v.nDim, &zJson) != COLVEC_OK) {
    sqlite3_result_error_nomem(pCtx);
  } else {
    sqlite3_result_text(pCtx, zJson, -1, SQLITE_TRANSIENT);
  }
  colvecFree(zJson);
  colvecVecapiFree(&v);
}

/* colvec_from_json(v): a float32 vector (JSON or BLOB) as a BLOB. */
static void funcFromJson(sqlite3_context *pCtx, int argc,
                         sqlite3_value **argv) {
  ColvecVecapiVec v;
  (void)argc;
  if (colvecVecapiRead(pCtx, "colvec_from_json", argv[0], COLVEC_ELEM_F32,
                       &v)) {
    return;
  }
  sqlite3_result_blob(pCtx, v.a, v.nDim * 4, SQLITE_TRANSIENT);
  colvecVecapiFree(&v);
}

/*
** colvec_check(table [, schema]): runs the table's integrity check (what
** INSERT INTO t(t) VALUES('integrity-check') runs, but writing nothing, so
** it works on a read-only connection) and returns 'ok', or fails with the
** problem found. A segment whose measured recall made it leave out its
** codes or graph (searched more slowly, not wrongly) is not a problem: the
** result is then 'ok' followed by one line per such segment column. Works
** on SQLite versions without xIntegrity (before 3.44).
*/
static void funcCheck(sqlite3_context *pCtx, int argc, sqlite3_value **argv) {
  sqlite3 *db = sqlite3_context_db_handle(pCtx);
  const char *zTab = (const char *)sqlite3_value_text(argv[0]);
  const char *zDb =
      argc > 1 ? (const char *)sqlite3_value_text(argv[1]) : "main";
  ColvecVtabHeld t;
  char *zErr = NULL, *zNote = NULL;
  int rc;
  if (zTab == NULL || zDb == NULL) {
    sqlite3_result_error(pCtx, "colvec: colvec_check: expects a table name",
                         -1);
    return;
  }
  rc = colvecVtabHold(db, "colvec_check", zDb, zTab, &t, &zErr);
  if (rc == SQLITE_OK) {
    rc = colvecWriteCheck(t.pTab, 0, &zNote, &zErr);
    colvecVtabRelease(&t);
  }
  if (rc == SQLITE_OK && zNote) {
    char *z = sqlite3_mprintf("ok\n%s", zNote);
    if (z) {
      sqlite3_result_text(pCtx, z, -1, sqlite3_free);
    } else {
      sqlite3_result_error_nomem(pCtx);
    }
  } else if (rc == SQLITE_OK) {
    sqlite3_result_text(pCtx, "ok", 2, SQLITE_STATIC);
  } else {
    sqlite3_result_error(pCtx, zErr ? zErr : sqlite3_errstr(rc), -1);
    sqlite3_result_error_code(pCtx, rc);
  }
  sqlite3_free(zNote);
  sqlite3_free(zErr);
}

#ifdef COLVEC_DEBUG
/* colvec_test_fault(n): make the allocation after n more fail (-1: off). */
static void funcTestFault(sqlite3_context *pCtx, int argc,
                          sqlite3_value **argv) {
  (void)argc;
  colvecMemFailAfter(sqlite3_value_int(argv[0]));
  sqlite3_result_null(pCtx);
}

/*
** colvec_test_segment_bytes(n): the largest buffer of a segment write (and
** so the rows of one segment; 0: the default), process-wide.
*/
static void funcTestSegmentBytes(sqlite3_context *pCtx, int argc,
                                 sqlite3_value **argv) {
  (void)argc;
  colvecCompactSetMaxBytes(sqlite3_value_int64(argv[0]));
  sqlite3_result_null(pCtx);
}

/*
** colvec_test_pending_bytes(n): the bytes of pending rows an INSERT writes
** out at once, starting a bulk load (0: the default), process-wide.
*/
static void funcTestPendingBytes(sqlite3_context *pCtx, int argc,
                                 sqlite3_value **argv) {
  (void)argc;
  colvecWriteSetPendingBytes(sqlite3_value_int64(argv[0]));
  sqlite3_result_null(pCtx);
}
#endif

/* Registers the functions; see colvecInt.h. */
int colvecFuncRegister(sqlite3 *db) {
  static const struct {
    const char *zName;
    int nArg;
    void (*xFunc)(sqlite3_context *, int, sqlite3_value **);
    intptr_t iData;
  } aFunc[] = {
      {"colvec_version", 0, funcVersion, 0},
      {"colvec_debug", 0, colvecVecapiDebug, 0},
      {"colvec_distance_l2", 2, funcDistance, COLVEC_METRIC_L2},
      {"colvec_distance_cosine", 2, funcDistance, COLVEC_METRIC_COSINE},
      {"colvec_distance_dot", 2, funcDistance, COLVEC_METRIC_DOT},
      {"colvec_distance_hamming", 2, funcHamming, 0},
      {"colvec_to_json", 1, funcToJson, 0},
      {"colvec_from_json", 1, funcFromJson, 0},
      {"colvec_check", 1, funcCheck, 0},
      {"colvec_check", 2, funcCheck, 0},
#ifdef COLVEC_DEBUG
      {"colvec_test_fault", 1, funcTestFault, 0},
      {"colvec_test_segment_bytes", 1, funcTestSegmentBytes, 0},
      {"colvec_test_pending_bytes", 1, funcTestPendingBytes, 0},
#endif
  };
  int rc = SQLITE_OK;
  int i;
  for (i = 0; rc == SQLITE_OK && i < (int)(sizeof(aFunc) / sizeof(aFunc[0]));
       i++) {
    int eFlags = SQLITE_UTF8 | SQLITE_INNOCUOUS | SQLITE_SUBTYPE;
    if (aFunc[i].xFunc == funcCheck) {
      eFlags = SQLITE_UTF8 | SQLITE_DIRECTONLY; /* reads tables: never from
                                                 ** schema or triggers */
    } else if (aFunc[i].xFunc != colvecVecapiDebug) {
      eFlags |= SQLITE_DETERMINISTIC;
    }
    rc = sqlite3_create_function_v2(db, aFunc[i].zName, aFunc[i].nArg, eFlags,
                                    (void *)aFunc[i].iData, aFunc[i].xFunc,
                                    NULL, NULL, NULL);
  }
  if (rc == SQLITE_OK) rc = colvecSegmentsRegister(db);
  return rc;
}
