/*
** fuzz_vector.c — libFuzzer target: vector JSON and BLOB parsing
** (colvec_vector.c).
**
** Input: byte 0 picks the element type (float, int8, bit), byte 1 the
** column's dimensions (float/int8: 1..64; bit: 8..256 in steps of 8),
** byte 2 the form ('B': the rest is a BLOB; anything else: JSON text), and
** the rest is the value, passed with its exact length (no NUL terminator,
** so an over-read is an ASan report).
**
** Invariants beyond "no crash": a value that is accepted prints as JSON
** that parses back to the same bytes (round trip), for JSON and BLOB input
** alike; an error always comes with a message; the parsed element count is
** never negative.
*/
#include "colvec_core.h"
#include "colvec_vector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Aborts with a message: an invariant of the parser was broken. */
#define FZ_CHECK(c)                                                            \
  do {                                                                         \
    if (!(c)) {                                                                \
      fprintf(stderr, "fuzz_vector: invariant failed: %s (line %d)\n", #c,     \
              __LINE__);                                                       \
      abort();                                                                 \
    }                                                                          \
  } while (0)

/*
** Parses JSON z (n bytes) into a vector of nDim elements of eElem at aOut.
** Returns COLVEC_OK or the first error (zErr set).
*/
static int fzParse(const char *z, int n, ColvecElem eElem, int nDim,
                   uint8_t *aOut, char *zErr) {
  float *aVal = NULL;
  int nVal = -1;
  int rc = colvecJsonToFloats(z, n, &aVal, &nVal, zErr);
  if (rc == COLVEC_OK) {
    FZ_CHECK(nVal >= 0);
    rc = colvecFloatsToVector(aVal, nVal, eElem, nDim, aOut, zErr);
  }
  colvecFree(aVal);
  if (rc != COLVEC_OK && rc != COLVEC_NOMEM) FZ_CHECK(zErr[0] != 0);
  return rc;
}

/* Prints vector a and checks that the text parses back to the same bytes. */
static void fzRoundTrip(const uint8_t *a, ColvecElem eElem, int nDim) {
  char *zJson = NULL;
  char zErr[COLVEC_VECTOR_ERRMAX];
  int64_t nByte = colvecVectorBytes(eElem, nDim);
  uint8_t *aBack = (uint8_t *)malloc((size_t)nByte);
  int rc;
  FZ_CHECK(aBack != NULL);
  zErr[0] = 0;
  rc = colvecVectorToJson(a, eElem, nDim, &zJson);
  if (rc == COLVEC_OK) {
    rc = fzParse(zJson, (int)strlen(zJson), eElem, nDim, aBack, zErr);
    if (rc != COLVEC_OK) {
      fprintf(stderr, "fuzz_vector: printed \"%s\" does not parse: %s\n", zJson,
              zErr);
      abort();
    }
    if (memcmp(a, aBack, (size_t)nByte) != 0) {
      fprintf(stderr, "fuzz_vector: \"%s\" reads back different bytes\n",
              zJson);
      abort();
    }
  }
  colvecFree(zJson);
  free(aBack);
}

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData) {
  ColvecElem eElem;
  int nDim, rc;
  int64_t nByte;
  uint8_t *aVec;
  char zErr[COLVEC_VECTOR_ERRMAX];
  const uint8_t *aVal;
  int nVal;
  if (nData < 3 || nData > (1 << 20)) return 0;
  eElem = (ColvecElem)(aData[0] % 3);
  nDim = eElem == COLVEC_ELEM_BIT ? 8 * (1 + aData[1] % 32) : 1 + aData[1] % 64;
  nByte = colvecVectorBytes(eElem, nDim);
  FZ_CHECK(nByte > 0);
  aVal = aData + 3;
  nVal = (int)(nData - 3);

  /* the value in a buffer of its exact size: over-reads are reported */
  {
    uint8_t *aCopy = (uint8_t *)malloc(nVal > 0 ? (size_t)nVal : 1);
    FZ_CHECK(aCopy != NULL);
    memcpy(aCopy, aVal, (size_t)nVal);
    aVec = (uint8_t *)malloc((size_t)nByte);
    FZ_CHECK(aVec != NULL);
    zErr[0] = 0;
    if (aData[2] == 'B') {
      rc = colvecVectorCheck(aCopy, nVal, eElem, nDim, zErr);
      if (rc == COLVEC_OK) {
        FZ_CHECK(nVal == nByte);
        fzRoundTrip(aCopy, eElem, nDim);
      } else {
        FZ_CHECK(zErr[0] != 0);
      }
    } else {
      rc = fzParse((const char *)aCopy, nVal, eElem, nDim, aVec, zErr);
      if (rc == COLVEC_OK) {
        FZ_CHECK(colvecVectorCheck(aVec, (int)nByte, eElem, nDim, zErr) ==
                 COLVEC_OK);
        fzRoundTrip(aVec, eElem, nDim);
      }
    }
    free(aCopy);
    free(aVec);
  }
  return 0;
}
