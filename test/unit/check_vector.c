/*
** check_vector.c — Check suite for colvec_vector.c (JSON parsing, binary
** validation and JSON printing of vectors).
**
** Valid JSON arrays must give exactly the floats (float)strtod() gives for
** each number; malformed text must be refused with COLVEC_ERROR and a
** message containing "malformed"; conversions to float32/int8/bit columns
** are compared byte for byte with vectors built here; printing a float32
** vector and parsing it back must give the same bits for random, denormal,
** tiny, huge and signed-zero values. Out-of-memory paths use
** colvecMemFailAfter(); run the suite under ASan (detect_leaks=1) to check
** that they leak nothing.
*/
#include "colvec_vector.h"

#include <check.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic generator state (xorshift64*). */
static uint64_t tvSeed = 0x243F6A8885A308D3ULL;

/* Returns the next 64 pseudo-random bits. */
static uint64_t tvRand(void) {
  tvSeed ^= tvSeed >> 12;
  tvSeed ^= tvSeed << 25;
  tvSeed ^= tvSeed >> 27;
  return tvSeed * 0x2545F4914F6CDD1DULL;
}

/* Returns a random finite float whose bit pattern is uniform over all
** finite floats (so every exponent, denormals and both zeros occur). */
static float tvRandFiniteFloat(void) {
  for (;;) {
    uint32_t u = (uint32_t)(tvRand() >> 32);
    float f;
    memcpy(&f, &u, 4);
    if (isfinite(f)) return f;
  }
}

/* Returns non-zero when floats a and b have the same bit pattern. */
static int tvSameBits(float a, float b) { return memcmp(&a, &b, 4) == 0; }

/*
** Parses the NUL-terminated JSON text zJson with colvecJsonToFloats and
** checks it succeeds with exactly the values (float)strtod() gives for the
** nNum number tokens azNum[], bit for bit.
*/
static void tvExpectParse(const char *zJson, const char *const *azNum,
                          int nNum) {
  float *a = (float *)&tvSeed; /* sentinel: must be overwritten */
  int n = -1, i, rc;
  char zErr[COLVEC_VECTOR_ERRMAX] = "";
  rc = colvecJsonToFloats(zJson, (int)strlen(zJson), &a, &n, zErr);
  ck_assert_msg(rc == COLVEC_OK, "'%s' refused: rc=%d %s", zJson, rc, zErr);
  ck_assert_int_eq(n, nNum);
  if (nNum == 0) ck_assert_ptr_null(a);
  for (i = 0; i < nNum; i++) {
    float fWant = (float)strtod(azNum[i], NULL);
    ck_assert_msg(tvSameBits(a[i], fWant), "'%s' element %d: %.9g != %.9g",
                  zJson, i, (double)a[i], (double)fWant);
  }
  colvecFree(a);
}

/*
** Parses the first n bytes of z and checks it is refused with COLVEC_ERROR,
** a message containing "malformed", and no output array.
*/
static void tvExpectMalformedN(const char *z, int n) {
  float *a = (float *)&tvSeed; /* sentinel: must be reset to NULL */
  int nOut = -1, rc;
  char zErr[COLVEC_VECTOR_ERRMAX] = "";
  rc = colvecJsonToFloats(z, n, &a, &nOut, zErr);
  ck_assert_msg(rc == COLVEC_ERROR, "'%.*s' (n=%d) accepted: rc=%d", n, z, n,
                rc);
  ck_assert_msg(strstr(zErr, "malformed") != NULL, "'%.*s' message: %s", n, z,
                zErr);
  ck_assert_ptr_null(a);
  ck_assert_int_eq(nOut, 0);
}

/* tvExpectMalformedN() on a whole NUL-terminated string. */
static void tvExpectMalformed(const char *z) {
  tvExpectMalformedN(z, (int)strlen(z));
}

/* Valid arrays, whitespace, exponents, signs and the empty array. */
START_TEST(test_json_valid) {
  static const char *const a1[] = {"1", "2.5", "-3"};
  static const char *const a2[] = {"1e3", "-2.5E-2", "0.1e+1", "0"};
  static const char *const a3[] = {"-0"};
  static const char *const a4[] = {"0.1", "0.2", "0.3", "-0.0"};
  static const char *const a5[] = {"3.4028235e38",   "1e-45",
                                   "1.17549435e-38", "1e-50",
                                   "-1e-50",         "123456789012345678"};
  static const char *const a6[] = {"1e39", "-1e400"};
  float *a = NULL;
  int n = -1;
  char zErr[COLVEC_VECTOR_ERRMAX];

  tvExpectParse("[1, 2.5, -3]", a1, 3);
  tvExpectParse(" \n[\t1e3 ,\r\n-2.5E-2,0.1e+1 , 0]\n\t ", a2, 4);
  tvExpectParse("[-0]", a3, 1);
  tvExpectParse("[0.1,0.2,0.3,-0.0]", a4, 4);
  tvExpectParse("[3.4028235e38, 1e-45, 1.17549435e-38, 1e-50, -1e-50, "
                "123456789012345678]",
                a5, 6);
  /* Out-of-range numbers become +-inf here; colvecFloatsToVector refuses
  ** them later. */
  tvExpectParse("[1e39,-1e400]", a6, 2);
  ck_assert(isinf((float)strtod("1e39", NULL)));
  tvExpectParse("[]", NULL, 0);
  tvExpectParse("  [ \n ]  ", NULL, 0);
  tvExpectParse("[]\n", NULL, 0);

  /* A trailing NUL counted in n is accepted. */
  ck_assert_int_eq(colvecJsonToFloats("[7]", 4, &a, &n, zErr), COLVEC_OK);
  ck_assert_int_eq(n, 1);
  ck_assert(a[0] == 7.0f);
  colvecFree(a);

  /* Not NUL-terminated: only the first n bytes are read. */
  {
    char zBuf[8];
    memcpy(zBuf, "[1,2]xyz", 8);
    ck_assert_int_eq(colvecJsonToFloats(zBuf, 5, &a, &n, zErr), COLVEC_OK);
    ck_assert_int_eq(n, 2);
    ck_assert(a[0] == 1.0f && a[1] == 2.0f);
    colvecFree(a);
  }
}
END_TEST

/* Large arrays (growth past the first 64-element allocation) parse exactly. */
START_TEST(test_json_large) {
  static const int anSize[] = {63, 64, 65, 128, 129, 1000, 4097};
  static const char *const azSep[] = {",", ", ", " ,\n", "\t,\r\n "};
  size_t iCase;
  for (iCase = 0; iCase < sizeof(anSize) / sizeof(anSize[0]); iCase++) {
    int nVal = anSize[iCase], i, n = -1, rc;
    float *aWant = colvecMalloc((int64_t)nVal * 4);
    char *z = colvecMalloc((int64_t)nVal * 40 + 8);
    float *a = NULL;
    size_t iOut = 0;
    char zErr[COLVEC_VECTOR_ERRMAX];
    ck_assert_ptr_nonnull(aWant);
    ck_assert_ptr_nonnull(z);
    z[iOut++] = '[';
    for (i = 0; i < nVal; i++) {
      char zNum[40];
      float f = tvRandFiniteFloat();
      /* Mix short decimals with full-precision exponent forms. */
      if (i % 3 == 0) f = (float)((int64_t)(tvRand() % 2001) - 1000) / 8.0f;
      snprintf(zNum, sizeof(zNum), i % 2 ? "%.9g" : "%.9e", (double)f);
      aWant[i] = (float)strtod(zNum, NULL);
      if (i > 0) {
        const char *zSep = azSep[i % 4];
        memcpy(&z[iOut], zSep, strlen(zSep));
        iOut += strlen(zSep);
      }
      memcpy(&z[iOut], zNum, strlen(zNum));
      iOut += strlen(zNum);
    }
    z[iOut++] = ']';
    rc = colvecJsonToFloats(z, (int)iOut, &a, &n, zErr);
    ck_assert_int_eq(rc, COLVEC_OK);
    ck_assert_int_eq(n, nVal);
    ck_assert_msg(memcmp(a, aWant, (size_t)nVal * 4) == 0,
                  "size %d: values differ", nVal);
    colvecFree(a);
    colvecFree(aWant);
    colvecFree(z);
  }
}
END_TEST

/* Malformed JSON is refused with a "malformed" message. */
START_TEST(test_json_malformed) {
  static const char *const azBad[] = {
      "",      "   ",        "1,2]",        "[1,2",    "{1}",
      "[1,]",  "[,1]",       "[1,,2]",      "[1 2]",   "[nan]",
      "[NaN]", "[Infinity]", "[-Infinity]", "[inf]",   "[0x10]",
      "[1e]",  "[1e+]",      "[1E-]",       "[-]",     "[1.]",
      "[.5]",  "[+1]",       "[01]",        "[1]x",    "[1] [2]",
      "[[1]]", "[\"1\"]",    "[true]",      "[null]",  "[1]]",
      "[1;2]", "[1.5.2]",    "[--1]",       "[1e5e5]", "[",
      "]",     "[1,2,]",     "x[1]",        "[1\v]",   "[1\f]"};
  size_t i;
  for (i = 0; i < sizeof(azBad) / sizeof(azBad[0]); i++) {
    tvExpectMalformed(azBad[i]);
  }
  /* n shorter than the buffer: the closing bracket lies beyond n. */
  tvExpectMalformedN("[1,2]", 4);
  tvExpectMalformedN("[1,2]", 1);
  tvExpectMalformedN("[1,2]", 0);
  tvExpectMalformedN("[]", 1);
  /* Cut inside a number: "[1e5]" read as "[1e". */
  tvExpectMalformedN("[1e5]", 3);
}
END_TEST

/* Numbers longer than 64 characters are refused; 64 are accepted. */
START_TEST(test_json_overlong) {
  char z[2100];
  float *a = NULL;
  int n = -1;
  char zErr[COLVEC_VECTOR_ERRMAX];
  /* "[0." + 62 digits "]" : a 64-character number. */
  memset(z, 0, sizeof(z));
  memcpy(z, "[0.", 3);
  memset(z + 3, '5', 62);
  z[65] = ']';
  ck_assert_int_eq(colvecJsonToFloats(z, 66, &a, &n, zErr), COLVEC_OK);
  ck_assert_int_eq(n, 1);
  ck_assert(tvSameBits(a[0], (float)strtod(z + 1, NULL)));
  colvecFree(a);
  /* 65 characters. */
  memset(z + 3, '5', 63);
  z[66] = ']';
  tvExpectMalformedN(z, 67);
  /* 2000 digits. */
  memset(z + 1, '9', 2000);
  z[2001] = ']';
  tvExpectMalformedN(z, 2002);
}
END_TEST

/* colvecFloatsToVector for float32 columns. */
START_TEST(test_to_vector_f32) {
  float aIn[3] = {1.5f, -0.0f, 1e-45f};
  float aOut[3];
  char zErr[COLVEC_VECTOR_ERRMAX] = "";
  float aBad[3];
  int i;

  ck_assert_int_eq(colvecFloatsToVector(aIn, 2, COLVEC_ELEM_F32, 3, aOut, zErr),
                   COLVEC_ERROR);
  ck_assert_msg(strstr(zErr, "expects 3 dimensions, got 2") != NULL, "%s",
                zErr);
  ck_assert_int_eq(colvecFloatsToVector(aIn, 3, COLVEC_ELEM_F32, 2, aOut, zErr),
                   COLVEC_ERROR);
  ck_assert_msg(strstr(zErr, "expects 2 dimensions, got 3") != NULL, "%s",
                zErr);

  ck_assert_int_eq(colvecFloatsToVector(aIn, 3, COLVEC_ELEM_F32, 3, aOut, zErr),
                   COLVEC_OK);
  ck_assert(memcmp(aIn, aOut, sizeof(aIn)) == 0);

  for (i = 0; i < 3; i++) {
    float aSpecial[3];
    int j;
    aSpecial[0] = INFINITY;
    aSpecial[1] = -INFINITY;
    aSpecial[2] = NAN;
    for (j = 0; j < 3; j++) {
      char zWant[32];
      memcpy(aBad, aIn, sizeof(aIn));
      aBad[i] = aSpecial[j];
      zErr[0] = 0;
      ck_assert_int_eq(
          colvecFloatsToVector(aBad, 3, COLVEC_ELEM_F32, 3, aOut, zErr),
          COLVEC_ERROR);
      snprintf(zWant, sizeof(zWant), "element %d", i);
      ck_assert_msg(strstr(zErr, zWant) != NULL, "%s", zErr);
    }
  }
}
END_TEST

/* colvecFloatsToVector for int8 columns: range and integrality. */
START_TEST(test_to_vector_i8) {
  float aIn[6] = {-128.0f, 127.0f, 0.0f, -1.0f, 5.0f, -0.0f};
  int8_t aWant[6] = {-128, 127, 0, -1, 5, 0};
  int8_t aOut[6];
  float aBadVal[8];
  char zErr[COLVEC_VECTOR_ERRMAX] = "";
  int i;
  aBadVal[0] = 128.0f;
  aBadVal[1] = -129.0f;
  aBadVal[2] = 1.5f;
  aBadVal[3] = -0.5f;
  aBadVal[4] = 127.0001f;
  aBadVal[5] = NAN;
  aBadVal[6] = INFINITY;
  aBadVal[7] = -1e30f;

  ck_assert_int_eq(colvecFloatsToVector(aIn, 6, COLVEC_ELEM_I8, 6, aOut, zErr),
                   COLVEC_OK);
  ck_assert(memcmp(aOut, aWant, 6) == 0);
  ck_assert_int_eq(colvecFloatsToVector(aIn, 5, COLVEC_ELEM_I8, 6, aOut, zErr),
                   COLVEC_ERROR);
  ck_assert_msg(strstr(zErr, "expects 6 dimensions, got 5") != NULL, "%s",
                zErr);
  for (i = 0; i < 8; i++) {
    float aBad[6];
    memcpy(aBad, aIn, sizeof(aIn));
    aBad[4] = aBadVal[i];
    zErr[0] = 0;
    ck_assert_msg(colvecFloatsToVector(aBad, 6, COLVEC_ELEM_I8, 6, aOut,
                                       zErr) == COLVEC_ERROR,
                  "int8 value %g accepted", (double)aBadVal[i]);
    ck_assert_msg(strstr(zErr, "element 4") != NULL, "%s", zErr);
  }
}
END_TEST

/* colvecFloatsToVector for bit columns: LSB-first packing, 0/1 only. */
START_TEST(test_to_vector_bit) {
  float aIn[10] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  uint8_t aOut[16];
  char zErr[COLVEC_VECTOR_ERRMAX] = "";
  int nDim;
  float aBadVal[4];
  int i;

  memset(aOut, 0xFF, sizeof(aOut));
  ck_assert_int_eq(
      colvecFloatsToVector(aIn, 10, COLVEC_ELEM_BIT, 10, aOut, zErr),
      COLVEC_OK);
  ck_assert_uint_eq(aOut[0], 0x01);
  ck_assert_uint_eq(aOut[1], 0x02); /* padding bits of the last byte zero */
  ck_assert_uint_eq(aOut[2], 0xFF); /* nothing written past 2 bytes */

  /* Random patterns against a reference packing. */
  for (nDim = 1; nDim <= 100; nDim++) {
    float aVal[100];
    uint8_t aWant[13];
    int nByte = (nDim + 7) / 8;
    memset(aWant, 0, sizeof(aWant));
    for (i = 0; i < nDim; i++) {
      int b = (int)(tvRand() >> 63);
      aVal[i] = (float)b;
      if (b) aWant[i >> 3] |= (uint8_t)(1 << (i & 7));
    }
    memset(aOut, 0xAA, sizeof(aOut));
    ck_assert_int_eq(
        colvecFloatsToVector(aVal, nDim, COLVEC_ELEM_BIT, nDim, aOut, zErr),
        COLVEC_OK);
    ck_assert_msg(memcmp(aOut, aWant, (size_t)nByte) == 0, "nDim=%d", nDim);
    ck_assert_uint_eq(aOut[nByte], 0xAA);
  }

  aBadVal[0] = 2.0f;
  aBadVal[1] = -1.0f;
  aBadVal[2] = 0.5f;
  aBadVal[3] = NAN;
  for (i = 0; i < 4; i++) {
    float aBad[10];
    memcpy(aBad, aIn, sizeof(aIn));
    aBad[9] = aBadVal[i];
    zErr[0] = 0;
    ck_assert_int_eq(
        colvecFloatsToVector(aBad, 10, COLVEC_ELEM_BIT, 10, aOut, zErr),
        COLVEC_ERROR);
    ck_assert_msg(strstr(zErr, "element 9") != NULL, "%s", zErr);
  }
  ck_assert_int_eq(
      colvecFloatsToVector(aIn, 9, COLVEC_ELEM_BIT, 10, aOut, zErr),
      COLVEC_ERROR);
  ck_assert_msg(strstr(zErr, "expects 10 dimensions, got 9") != NULL, "%s",
                zErr);
}
END_TEST

/* colvecVectorCheck: byte lengths and non-finite float32 elements. */
START_TEST(test_vector_check) {
  float a[4] = {1.0f, -0.0f, FLT_MAX, 1e-45f};
  uint8_t aByte[16];
  char zErr[COLVEC_VECTOR_ERRMAX] = "";
  int i;

  memset(aByte, 0x7F, sizeof(aByte));
  ck_assert_int_eq(colvecVectorCheck(a, 16, COLVEC_ELEM_F32, 4, zErr),
                   COLVEC_OK);
  ck_assert_int_eq(colvecVectorCheck(a, 12, COLVEC_ELEM_F32, 4, zErr),
                   COLVEC_ERROR);
  ck_assert_msg(strstr(zErr, "expects 4 dimensions, got 3") != NULL, "%s",
                zErr);
  ck_assert_int_eq(colvecVectorCheck(a, 20, COLVEC_ELEM_F32, 4, zErr),
                   COLVEC_ERROR);
  ck_assert_msg(strstr(zErr, "dimensions") != NULL, "%s", zErr);
  ck_assert_int_eq(colvecVectorCheck(a, 0, COLVEC_ELEM_F32, 4, zErr),
                   COLVEC_ERROR);
  ck_assert_int_eq(colvecVectorCheck(a, 15, COLVEC_ELEM_F32, 4, zErr),
                   COLVEC_ERROR);
  ck_assert_msg(strstr(zErr, "16") != NULL && strstr(zErr, "15") != NULL, "%s",
                zErr);

  for (i = 0; i < 4; i++) {
    float aBad[4];
    uint32_t u;
    char zWant[32];
    static const uint32_t auBits[] = {0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                      0x7F800001u, 0xFFFFFFFFu};
    size_t j;
    for (j = 0; j < sizeof(auBits) / sizeof(auBits[0]); j++) {
      memcpy(aBad, a, sizeof(a));
      u = auBits[j];
      memcpy(&aBad[i], &u, 4);
      zErr[0] = 0;
      ck_assert_int_eq(colvecVectorCheck(aBad, 16, COLVEC_ELEM_F32, 4, zErr),
                       COLVEC_ERROR);
      snprintf(zWant, sizeof(zWant), "element %d", i);
      ck_assert_msg(strstr(zErr, zWant) != NULL, "%s", zErr);
    }
  }

  /* int8: any byte values, length must equal nDim. */
  ck_assert_int_eq(colvecVectorCheck(aByte, 5, COLVEC_ELEM_I8, 5, zErr),
                   COLVEC_OK);
  ck_assert_int_eq(colvecVectorCheck(aByte, 4, COLVEC_ELEM_I8, 5, zErr),
                   COLVEC_ERROR);
  ck_assert_msg(strstr(zErr, "int8") != NULL, "%s", zErr);
  ck_assert_int_eq(colvecVectorCheck(aByte, 6, COLVEC_ELEM_I8, 5, zErr),
                   COLVEC_ERROR);

  /* bit: ceil(nDim/8) bytes. */
  ck_assert_int_eq(colvecVectorCheck(aByte, 2, COLVEC_ELEM_BIT, 10, zErr),
                   COLVEC_OK);
  ck_assert_int_eq(colvecVectorCheck(aByte, 2, COLVEC_ELEM_BIT, 16, zErr),
                   COLVEC_OK);
  ck_assert_int_eq(colvecVectorCheck(aByte, 1, COLVEC_ELEM_BIT, 10, zErr),
                   COLVEC_ERROR);
  ck_assert_msg(strstr(zErr, "bit") != NULL, "%s", zErr);
  ck_assert_int_eq(colvecVectorCheck(aByte, 3, COLVEC_ELEM_BIT, 16, zErr),
                   COLVEC_ERROR);
  ck_assert_int_eq(colvecVectorCheck(aByte, 1, COLVEC_ELEM_BIT, 8, zErr),
                   COLVEC_OK);
}
END_TEST

/*
** Prints nDim float32 values with colvecVectorToJson, parses the text back
** and checks every value comes back with the same bits.
*/
static void tvRoundTripF32(const float *a, int nDim) {
  char *z = NULL;
  float *aBack = NULL;
  int n = -1, i;
  char zErr[COLVEC_VECTOR_ERRMAX] = "";
  ck_assert_int_eq(colvecVectorToJson(a, COLVEC_ELEM_F32, nDim, &z), COLVEC_OK);
  ck_assert_ptr_nonnull(z);
  ck_assert_int_eq(z[0], '[');
  ck_assert_int_eq(z[strlen(z) - 1], ']');
  ck_assert_int_eq(colvecJsonToFloats(z, (int)strlen(z), &aBack, &n, zErr),
                   COLVEC_OK);
  ck_assert_int_eq(n, nDim);
  for (i = 0; i < nDim; i++) {
    ck_assert_msg(tvSameBits(a[i], aBack[i]), "%.9g printed in '%.60s...'",
                  (double)a[i], z);
  }
  colvecFree(aBack);
  colvecFree(z);
}

/*
** Checks that the float32 vector a[0..nDim-1] prints as exactly zWant.
*/
static void tvExpectJson(const void *a, ColvecElem eElem, int nDim,
                         const char *zWant) {
  char *z = NULL;
  ck_assert_int_eq(colvecVectorToJson(a, eElem, nDim, &z), COLVEC_OK);
  ck_assert_str_eq(z, zWant);
  colvecFree(z);
}

/* float32 printing: exact short forms and bit-exact round trips. */
START_TEST(test_json_print_f32) {
  float aSpecial[] = {0.0f,         -0.0f,
                      1.0f,         -1.0f,
                      0.1f,         0.5f,
                      1.0f / 3.0f,  FLT_MAX,
                      -FLT_MAX,     FLT_MIN,
                      -FLT_MIN,     1e-45f,
                      -1e-45f,      1.17549421e-38f, /* max denormal */
                      16777216.0f,  16777218.0f,
                      123456792.0f, 3.14159274f,
                      1e-40f,       1e38f,
                      2.5e-30f,     0.099999994f};
  float aSmall[3] = {1.0f, 0.5f, -2.0f};
  float aTenth[2] = {0.1f, -0.25f};
  float aZero[2] = {-0.0f, 0.0f};
  float *aRand = colvecMalloc(1000 * 4);
  int iRound, i;

  tvExpectJson(aSmall, COLVEC_ELEM_F32, 3, "[1,0.5,-2]");
  tvExpectJson(aTenth, COLVEC_ELEM_F32, 2, "[0.1,-0.25]");
  tvExpectJson(aZero, COLVEC_ELEM_F32, 2, "[-0,0]");
  tvExpectJson(aSmall, COLVEC_ELEM_F32, 0, "[]");

  tvRoundTripF32(aSpecial, (int)(sizeof(aSpecial) / sizeof(aSpecial[0])));
  for (i = 0; i < (int)(sizeof(aSpecial) / sizeof(aSpecial[0])); i++) {
    tvRoundTripF32(&aSpecial[i], 1);
  }

  /* Random bit patterns: every exponent, many denormals. */
  ck_assert_ptr_nonnull(aRand);
  for (iRound = 0; iRound < 100; iRound++) {
    for (i = 0; i < 1000; i++)
      aRand[i] = tvRandFiniteFloat();
    tvRoundTripF32(aRand, 1000);
  }
  /* Denormals only, and values near 1. */
  for (iRound = 0; iRound < 20; iRound++) {
    for (i = 0; i < 1000; i++) {
      uint32_t u = (uint32_t)(tvRand() >> 32);
      if (iRound % 2) {
        u = (u & 0x807FFFFFu); /* exponent 0: denormal or zero */
      } else {
        u = (u & 0x807FFFFFu) | 0x3F800000u; /* [1, 2) */
      }
      memcpy(&aRand[i], &u, 4);
    }
    tvRoundTripF32(aRand, 1000);
  }
  colvecFree(aRand);
}
END_TEST

/* int8 and bit printing, and their round trip through JSON. */
START_TEST(test_json_print_int) {
  int8_t aI8[5] = {-128, 127, 0, -1, 42};
  uint8_t aBit[2] = {0x05, 0x02};
  uint8_t aOnes[2] = {0xFF, 0xFF};
  int nDim;

  tvExpectJson(aI8, COLVEC_ELEM_I8, 5, "[-128,127,0,-1,42]");
  tvExpectJson(aI8, COLVEC_ELEM_I8, 0, "[]");
  tvExpectJson(aBit, COLVEC_ELEM_BIT, 10, "[1,0,1,0,0,0,0,0,0,1]");
  tvExpectJson(aOnes, COLVEC_ELEM_BIT, 10, "[1,1,1,1,1,1,1,1,1,1]");
  tvExpectJson(aBit, COLVEC_ELEM_BIT, 3, "[1,0,1]");

  for (nDim = 1; nDim <= 67; nDim++) {
    int8_t aIn8[67], aOut8[67];
    uint8_t aInB[9], aOutB[9];
    int i, n = -1;
    char *z = NULL;
    float *a = NULL;
    char zErr[COLVEC_VECTOR_ERRMAX] = "";
    int nByte = (nDim + 7) / 8;
    for (i = 0; i < nDim; i++)
      aIn8[i] = (int8_t)(tvRand() >> 56);
    memset(aInB, 0, sizeof(aInB));
    for (i = 0; i < nDim; i++) {
      if (tvRand() >> 63) aInB[i / 8] |= (uint8_t)(1 << (i % 8));
    }

    ck_assert_int_eq(colvecVectorToJson(aIn8, COLVEC_ELEM_I8, nDim, &z),
                     COLVEC_OK);
    ck_assert_int_eq(colvecJsonToFloats(z, (int)strlen(z), &a, &n, zErr),
                     COLVEC_OK);
    ck_assert_int_eq(
        colvecFloatsToVector(a, n, COLVEC_ELEM_I8, nDim, aOut8, zErr),
        COLVEC_OK);
    ck_assert(memcmp(aIn8, aOut8, (size_t)nDim) == 0);
    colvecFree(a);
    colvecFree(z);

    ck_assert_int_eq(colvecVectorToJson(aInB, COLVEC_ELEM_BIT, nDim, &z),
                     COLVEC_OK);
    ck_assert_int_eq((int)strlen(z), 2 * nDim + 1);
    ck_assert_int_eq(colvecJsonToFloats(z, (int)strlen(z), &a, &n, zErr),
                     COLVEC_OK);
    ck_assert_int_eq(
        colvecFloatsToVector(a, n, COLVEC_ELEM_BIT, nDim, aOutB, zErr),
        COLVEC_OK);
    ck_assert(memcmp(aInB, aOutB, (size_t)nByte) == 0);
    colvecFree(a);
    colvecFree(z);
  }
}
END_TEST

/* Element type names. */
START_TEST(test_elem_name) {
  ck_assert_str_eq(colvecElemName(COLVEC_ELEM_F32), "float");
  ck_assert_str_eq(colvecElemName(COLVEC_ELEM_I8), "int8");
  ck_assert_str_eq(colvecElemName(COLVEC_ELEM_BIT), "bit");
}
END_TEST

/* Allocation failures give COLVEC_NOMEM, no output, and no leak. */
START_TEST(test_nomem) {
  char *z;
  float *a;
  int n, rc, nFail, bDone = 0;
  char zErr[COLVEC_VECTOR_ERRMAX];
  float aVec[3] = {1, 2, 3};
  char *zBig = colvecMalloc(1000 * 4 + 2);
  int i;

  a = (float *)aVec;
  n = -1;
  colvecMemFailAfter(0);
  rc = colvecJsonToFloats("[1,2]", 5, &a, &n, zErr);
  colvecMemFailAfter(-1);
  ck_assert_int_eq(rc, COLVEC_NOMEM);
  ck_assert_ptr_null(a);
  ck_assert_int_eq(n, 0);

  z = (char *)aVec;
  colvecMemFailAfter(0);
  rc = colvecVectorToJson(aVec, COLVEC_ELEM_F32, 3, &z);
  colvecMemFailAfter(-1);
  ck_assert_int_eq(rc, COLVEC_NOMEM);
  ck_assert_ptr_null(z);

  /* 1000 elements: the array grows several times; fail each step in turn. */
  ck_assert_ptr_nonnull(zBig);
  zBig[0] = '[';
  for (i = 0; i < 1000; i++) {
    memcpy(&zBig[1 + 4 * i], i ? ",1.5" : " 1.5", 4);
  }
  zBig[4001] = ']';
  for (nFail = 0; nFail < 20 && !bDone; nFail++) {
    a = (float *)aVec;
    n = -1;
    colvecMemFailAfter(nFail);
    rc = colvecJsonToFloats(zBig, 4002, &a, &n, zErr);
    colvecMemFailAfter(-1);
    if (rc == COLVEC_OK) {
      ck_assert_int_eq(n, 1000);
      ck_assert(a[0] == 1.5f && a[999] == 1.5f);
      colvecFree(a);
      bDone = 1;
    } else {
      ck_assert_int_eq(rc, COLVEC_NOMEM);
      ck_assert_ptr_null(a);
      ck_assert_int_eq(n, 0);
    }
  }
  ck_assert_msg(bDone, "never succeeded");
  ck_assert_int_gt(nFail, 2); /* at least two allocations were exercised */
  colvecFree(zBig);
}
END_TEST

/*
** Checks colvecTextToNumber(z) gives kind eWant and, for numbers, the value
** iWant (integers) or rWant (reals, bit for bit).
*/
static void tvExpectNumber(const char *z, int eWant, int64_t iWant,
                           double rWant) {
  int eKind = -1;
  int64_t i = -1;
  double r = -1.0;
  ck_assert_int_eq(colvecTextToNumber(z, (int)strlen(z), &eKind, &i, &r),
                   COLVEC_OK);
  ck_assert_msg(eKind == eWant, "'%s': kind %d, expected %d", z, eKind, eWant);
  if (eWant == COLVEC_NUM_INTEGER) {
    ck_assert_msg(i == iWant, "'%s': %lld, expected %lld", z, (long long)i,
                  (long long)iWant);
  } else if (eWant == COLVEC_NUM_REAL) {
    ck_assert_msg(memcmp(&r, &rWant, sizeof(r)) == 0 || (r == rWant),
                  "'%s': %.17g, expected %.17g", z, r, rWant);
  }
}

/* Text read as SQLite's numeric affinity reads it. */
START_TEST(test_text_to_number) {
  static const char zNul[] = {'1', '2', 0, '3'};
  int eKind = -1;
  int64_t i;
  double r;
  tvExpectNumber("2020", COLVEC_NUM_INTEGER, 2020, 0);
  tvExpectNumber("  12  ", COLVEC_NUM_INTEGER, 12, 0);
  tvExpectNumber("\t\n\v\f\r7\r\n", COLVEC_NUM_INTEGER, 7, 0);
  tvExpectNumber("+7", COLVEC_NUM_INTEGER, 7, 0);
  tvExpectNumber("-0", COLVEC_NUM_INTEGER, 0, 0);
  tvExpectNumber("007", COLVEC_NUM_INTEGER, 7, 0);
  tvExpectNumber("9223372036854775807", COLVEC_NUM_INTEGER, INT64_MAX, 0);
  tvExpectNumber("-9223372036854775808", COLVEC_NUM_INTEGER, INT64_MIN, 0);
  tvExpectNumber("9223372036854775808", COLVEC_NUM_REAL, 0,
                 9223372036854775808.0);
  tvExpectNumber("-9223372036854775809", COLVEC_NUM_REAL, 0,
                 -9223372036854775808.0);
  tvExpectNumber("1e3", COLVEC_NUM_REAL, 0, 1000.0);
  tvExpectNumber("1E+3", COLVEC_NUM_REAL, 0, 1000.0);
  tvExpectNumber("2.5e-1", COLVEC_NUM_REAL, 0, 0.25);
  tvExpectNumber("12.0", COLVEC_NUM_REAL, 0, 12.0);
  tvExpectNumber(".5", COLVEC_NUM_REAL, 0, 0.5);
  tvExpectNumber("5.", COLVEC_NUM_REAL, 0, 5.0);
  tvExpectNumber(" -0.1 ", COLVEC_NUM_REAL, 0, -0.1);
  tvExpectNumber("1e400", COLVEC_NUM_REAL, 0, HUGE_VAL);
  tvExpectNumber("1e-400", COLVEC_NUM_REAL, 0, 0.0);
  {
    /* longer than the on-stack buffer: allocates (C locale: strtod agrees) */
    char zLong[300];
    memset(zLong, '0', sizeof(zLong));
    zLong[1] = '.';
    memcpy(&zLong[sizeof(zLong) - 6], "1e200", 6);
    tvExpectNumber(zLong, COLVEC_NUM_REAL, 0, strtod(zLong, NULL));
  }
  {
    const char *azNot[] = {"",
                           " ",
                           "abc",
                           "0x10",
                           "0X1F",
                           "1e",
                           "1e+",
                           ".",
                           "-",
                           "+",
                           "e5",
                           ".e5",
                           "1,5",
                           "1 2",
                           "12x",
                           "--1",
                           "inf",
                           "NaN",
                           "1.5.2",
                           "1e5.5",
                           "\xc2\xa0"
                           "5"};
    int k;
    for (k = 0; k < (int)(sizeof(azNot) / sizeof(azNot[0])); k++) {
      tvExpectNumber(azNot[k], COLVEC_NUM_NONE, 0, 0);
    }
  }
  /* an embedded NUL ends nothing: the text is not a number */
  ck_assert_int_eq(colvecTextToNumber(zNul, 4, &eKind, &i, &r), COLVEC_OK);
  ck_assert_int_eq(eKind, COLVEC_NUM_NONE);
  /* the length counts, not a terminator */
  ck_assert_int_eq(colvecTextToNumber("123", 2, &eKind, &i, &r), COLVEC_OK);
  ck_assert_int_eq(eKind, COLVEC_NUM_INTEGER);
  ck_assert_int_eq(i, 12);
}
END_TEST

/*
** Parsing and printing under a locale whose decimal point is ',' (what a
** program that calls setlocale(LC_ALL, "") gets in Germany): JSON and SQL
** numbers still use '.'. The locale must exist in CI (tool/install-deps.sh
** generates it); elsewhere a missing locale skips this test with a note.
*/
START_TEST(test_locale_comma) {
  static const char *const azLocale[] = {"de_DE.UTF-8", "de_DE.utf8", "de_DE",
                                         /* Windows' names */
                                         "de-DE", "German_Germany.1252"};
  float aHalf[2] = {0.5f, 0.25f};
  float aOut[3];
  float *a = NULL;
  int n = 0, k, eKind;
  int64_t iNum;
  double rNum;
  char zErr[COLVEC_VECTOR_ERRMAX] = "";
  const char *zSet = NULL;
  for (k = 0; zSet == NULL && k < 5; k++) {
    zSet = setlocale(LC_ALL, azLocale[k]);
  }
  if (zSet == NULL) {
    ck_assert_msg(getenv("CI") == NULL,
                  "locale de_DE.UTF-8 is missing (tool/install-deps.sh "
                  "generates it)");
    fprintf(stderr, "SKIP test_locale_comma: locale de_DE.UTF-8 is not "
                    "installed (tool/install-deps.sh generates it)\n");
    return;
  }
  ck_assert_str_eq(localeconv()->decimal_point, ",");

  ck_assert_int_eq(colvecJsonToFloats("[0.5, 0.25, -1.5e-3]", 20, &a, &n, zErr),
                   COLVEC_OK);
  ck_assert_int_eq(n, 3);
  aOut[0] = 0.5f;
  aOut[1] = 0.25f;
  aOut[2] = -0.0015f;
  for (k = 0; k < 3; k++) {
    ck_assert_msg(tvSameBits(a[k], aOut[k]), "element %d: %g", k, (double)a[k]);
  }
  colvecFree(a);
  tvExpectJson(aHalf, COLVEC_ELEM_F32, 2, "[0.5,0.25]");
  for (k = 0; k < 2000; k++) {
    float f = tvRandFiniteFloat();
    tvRoundTripF32(&f, 1);
  }
  ck_assert_int_eq(colvecTextToNumber(" 2.5 ", 5, &eKind, &iNum, &rNum),
                   COLVEC_OK);
  ck_assert_int_eq(eKind, COLVEC_NUM_REAL);
  ck_assert(rNum == 2.5);
  ck_assert_int_eq(colvecTextToNumber("2,5", 3, &eKind, &iNum, &rNum),
                   COLVEC_OK);
  ck_assert_int_eq(eKind, COLVEC_NUM_NONE);
  setlocale(LC_ALL, "C");
}
END_TEST

/* Builds the suite. */
static Suite *tvSuite(void) {
  Suite *s = suite_create("vector");
  TCase *tc = tcase_create("vector");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_json_valid);
  tcase_add_test(tc, test_json_large);
  tcase_add_test(tc, test_json_malformed);
  tcase_add_test(tc, test_json_overlong);
  tcase_add_test(tc, test_to_vector_f32);
  tcase_add_test(tc, test_to_vector_i8);
  tcase_add_test(tc, test_to_vector_bit);
  tcase_add_test(tc, test_vector_check);
  tcase_add_test(tc, test_json_print_f32);
  tcase_add_test(tc, test_json_print_int);
  tcase_add_test(tc, test_elem_name);
  tcase_add_test(tc, test_nomem);
  tcase_add_test(tc, test_text_to_number);
  tcase_add_test(tc, test_locale_comma);
  suite_add_tcase(s, tc);
  return s;
}

/* Runs the suite; exit status 0 when every test passed. */
int main(void) {
  SRunner *sr = srunner_create(tvSuite());
  int nFail;
  srunner_run_all(sr, CK_NORMAL);
  nFail = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nFail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
