/*
** check_plan.c — Check suite for colvec_plan.c (the idxStr plan passed from
** xBestIndex to xFilter).
**
** A few plans are compared with their exact expected strings; seeded random
** plans (every operator, the rowid column, large column indices, up to
** COLVEC_PLAN_MAX_ARG arguments) must decode to what was encoded; malformed
** strings must be refused with COLVEC_ERROR.
*/
#include "colvec_plan.h"
#include "../lib/testscale.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic generator state (xorshift64*). */
static uint64_t tpSeed = 0x13198A2E03707344ULL;

/* Returns the next 64 pseudo-random bits. */
static uint64_t tpRand(void) {
  tpSeed ^= tpSeed >> 12;
  tpSeed ^= tpSeed << 25;
  tpSeed ^= tpSeed >> 27;
  return tpSeed * 0x2545F4914F6CDD1DULL;
}

/* Appends argument (eOp, iCol) to plan p. */
static void tpAdd(ColvecPlan *p, ColvecPlanOp eOp, int iCol) {
  ck_assert_int_lt(p->nArg, COLVEC_PLAN_MAX_ARG);
  p->aArg[p->nArg].eOp = eOp;
  p->aArg[p->nArg].iCol = colvecPlanOpHasCol(eOp) ? iCol : COLVEC_PLAN_NOCOL;
  p->nArg++;
}

/* Checks that plans a and b are equal (kind and every argument). */
static void tpExpectSame(const ColvecPlan *a, const ColvecPlan *b,
                         const char *z) {
  int i;
  ck_assert_msg(a->bKnn == b->bKnn, "'%s': kind differs", z);
  ck_assert_msg(a->nArg == b->nArg, "'%s': %d args, want %d", z, b->nArg,
                a->nArg);
  for (i = 0; i < a->nArg; i++) {
    ck_assert_msg(a->aArg[i].eOp == b->aArg[i].eOp &&
                      a->aArg[i].iCol == b->aArg[i].iCol,
                  "'%s': arg %d is (%d,%d), want (%d,%d)", z, i, b->aArg[i].eOp,
                  b->aArg[i].iCol, a->aArg[i].eOp, a->aArg[i].iCol);
  }
}

/*
** Encodes p, checks the text equals zWant (when not NULL), decodes it and
** checks the result equals p.
*/
static void tpRoundTrip(const ColvecPlan *p, const char *zWant) {
  char *z = NULL;
  ColvecPlan back;
  ck_assert_int_eq(colvecPlanEncode(p, &z), COLVEC_OK);
  ck_assert_ptr_nonnull(z);
  if (zWant) ck_assert_str_eq(z, zWant);
  ck_assert_msg(colvecPlanDecode(z, &back) == COLVEC_OK, "'%s' refused", z);
  tpExpectSame(p, &back, z);
  colvecFree(z);
}

/* Operator names and which operators take a column. */
START_TEST(test_op_names) {
  static const char *const azWant[COLVEC_OP_COUNT] = {
      "MATCH",      "K",    "LIMIT",     "OFFSET",     "OVERSAMPLING",
      "RESCORE",    "EF",   "DISTANCE<", "DISTANCE<=", "DISTANCE>",
      "DISTANCE>=", "EQ",   "NE",        "LT",         "LE",
      "GT",         "GE",   "IS",        "ISNOT",      "ISNULL",
      "NOTNULL",    "LIKE", "GLOB",      "IN"};
  int e;
  for (e = 0; e < COLVEC_OP_COUNT; e++) {
    ck_assert_str_eq(colvecPlanOpName((ColvecPlanOp)e), azWant[e]);
    ck_assert_int_eq(colvecPlanOpHasCol((ColvecPlanOp)e) != 0,
                     e == COLVEC_OP_MATCH || e >= COLVEC_OP_EQ);
  }
  ck_assert_str_eq(colvecPlanOpName(COLVEC_OP_COUNT), "?");
  ck_assert_str_eq(colvecPlanOpName((ColvecPlanOp)-1), "?");
}
END_TEST

/* Exact strings for hand-built plans. */
START_TEST(test_encode_exact) {
  ColvecPlan p;
  char zWant[1200];
  int i;

  memset(&p, 0, sizeof(p));
  p.bKnn = 1;
  tpAdd(&p, COLVEC_OP_MATCH, 0);
  tpAdd(&p, COLVEC_OP_K, 0);
  tpAdd(&p, COLVEC_OP_EQ, 1);
  tpAdd(&p, COLVEC_OP_GE, 2);
  tpRoundTrip(&p, "knn MATCH@0 K EQ@1 GE@2");

  memset(&p, 0, sizeof(p));
  tpAdd(&p, COLVEC_OP_EQ, COLVEC_PLAN_ROWID);
  tpRoundTrip(&p, "scan EQ@r");

  memset(&p, 0, sizeof(p));
  tpRoundTrip(&p, "scan");
  p.bKnn = 1;
  tpRoundTrip(&p, "knn");

  memset(&p, 0, sizeof(p));
  p.bKnn = 1;
  tpAdd(&p, COLVEC_OP_MATCH, 3);
  tpAdd(&p, COLVEC_OP_K, 0);
  tpAdd(&p, COLVEC_OP_LIMIT, 0);
  tpAdd(&p, COLVEC_OP_OFFSET, 0);
  tpAdd(&p, COLVEC_OP_OVERSAMPLING, 0);
  tpAdd(&p, COLVEC_OP_RESCORE, 0);
  tpAdd(&p, COLVEC_OP_EF, 0);
  tpRoundTrip(&p, "knn MATCH@3 K LIMIT OFFSET OVERSAMPLING RESCORE EF");

  /* distance bounds take no column; a bound with one is refused */
  memset(&p, 0, sizeof(p));
  p.bKnn = 1;
  for (i = 0; i < 7; i++) {
    static const ColvecPlanOp aOp[7] = {COLVEC_OP_MATCH,   COLVEC_OP_K,
                                        COLVEC_OP_DIST_GT, COLVEC_OP_DIST_GE,
                                        COLVEC_OP_DIST_LT, COLVEC_OP_DIST_LE,
                                        COLVEC_OP_EQ};
    tpAdd(&p, aOp[i], i == 6);
  }
  tpRoundTrip(&p,
              "knn MATCH@0 K DISTANCE> DISTANCE>= DISTANCE< DISTANCE<= EQ@1");
  ck_assert_int_eq(colvecPlanDecode("knn MATCH@0 K DISTANCE>@1", &p),
                   COLVEC_ERROR);
  ck_assert_int_eq(colvecPlanDecode("knn MATCH@0 K DISTANCE", &p),
                   COLVEC_ERROR);

  memset(&p, 0, sizeof(p));
  tpAdd(&p, COLVEC_OP_NE, 4);
  tpAdd(&p, COLVEC_OP_LT, 5);
  tpAdd(&p, COLVEC_OP_LE, COLVEC_PLAN_ROWID);
  tpAdd(&p, COLVEC_OP_GT, 6);
  tpAdd(&p, COLVEC_OP_IS, 7);
  tpAdd(&p, COLVEC_OP_ISNOT, 8);
  tpAdd(&p, COLVEC_OP_ISNULL, 9);
  tpAdd(&p, COLVEC_OP_NOTNULL, 10);
  tpAdd(&p, COLVEC_OP_LIKE, 11);
  tpAdd(&p, COLVEC_OP_GLOB, 12);
  tpAdd(&p, COLVEC_OP_IN, 100000);
  tpRoundTrip(&p, "scan NE@4 LT@5 LE@r GT@6 IS@7 ISNOT@8 ISNULL@9 "
                  "NOTNULL@10 LIKE@11 GLOB@12 IN@100000");

  /* The encoder ignores iCol of operators without a column. */
  memset(&p, 0, sizeof(p));
  p.bKnn = 1;
  p.nArg = 1;
  p.aArg[0].eOp = COLVEC_OP_K;
  p.aArg[0].iCol = 5;
  {
    char *z = NULL;
    ck_assert_int_eq(colvecPlanEncode(&p, &z), COLVEC_OK);
    ck_assert_str_eq(z, "knn K");
    colvecFree(z);
  }

  /* Longest operator name, COLVEC_PLAN_MAX_ARG times. */
  memset(&p, 0, sizeof(p));
  p.bKnn = 1;
  strcpy(zWant, "knn");
  for (i = 0; i < COLVEC_PLAN_MAX_ARG; i++) {
    tpAdd(&p, COLVEC_OP_OVERSAMPLING, 0);
    strcat(zWant, " OVERSAMPLING");
  }
  tpRoundTrip(&p, zWant);

  /* Longest column operator with 6-digit columns, MAX_ARG times. */
  memset(&p, 0, sizeof(p));
  strcpy(zWant, "scan");
  for (i = 0; i < COLVEC_PLAN_MAX_ARG; i++) {
    tpAdd(&p, COLVEC_OP_NOTNULL, 100000 + i % 10);
    sprintf(zWant + strlen(zWant), " NOTNULL@%d", 100000 + i % 10);
  }
  tpRoundTrip(&p, zWant);
}
END_TEST

/* Random plans decode to what was encoded. */
START_TEST(test_roundtrip_random) {
  static const int aiBigCol[] = {0,     1,     29,    30,    31,    999,
                                 32767, 65535, 65536, 99999, 100000};
  int iRound, nRound = testScaled(5000, 400);
  for (iRound = 0; iRound < nRound; iRound++) {
    ColvecPlan p;
    int i, nArg;
    memset(&p, 0, sizeof(p));
    p.bKnn = (int)(tpRand() & 1);
    switch (iRound % 4) {
    case 0:
      nArg = COLVEC_PLAN_MAX_ARG;
      break;
    case 1:
      nArg = 0;
      break;
    default:
      nArg = (int)(tpRand() % (COLVEC_PLAN_MAX_ARG + 1));
      break;
    }
    for (i = 0; i < nArg; i++) {
      ColvecPlanOp eOp = (ColvecPlanOp)(tpRand() % COLVEC_OP_COUNT);
      int iCol;
      switch (tpRand() % 4) {
      case 0:
        iCol = COLVEC_PLAN_ROWID;
        break;
      case 1:
        iCol = aiBigCol[tpRand() % (sizeof(aiBigCol) / sizeof(aiBigCol[0]))];
        break;
      case 2:
        iCol = (int)(tpRand() % 100001);
        break;
      default:
        iCol = (int)(tpRand() % 8);
        break;
      }
      tpAdd(&p, eOp, iCol);
    }
    tpRoundTrip(&p, NULL);
  }
}
END_TEST

/* Decoding well-formed strings written by hand. */
START_TEST(test_decode_valid) {
  ColvecPlan p;
  ck_assert_int_eq(colvecPlanDecode("knn MATCH@2 K EF IN@r", &p), COLVEC_OK);
  ck_assert_int_eq(p.bKnn, 1);
  ck_assert_int_eq(p.nArg, 4);
  ck_assert_int_eq(p.aArg[0].eOp, COLVEC_OP_MATCH);
  ck_assert_int_eq(p.aArg[0].iCol, 2);
  ck_assert_int_eq(p.aArg[1].eOp, COLVEC_OP_K);
  ck_assert_int_eq(p.aArg[1].iCol, COLVEC_PLAN_NOCOL);
  ck_assert_int_eq(p.aArg[2].eOp, COLVEC_OP_EF);
  ck_assert_int_eq(p.aArg[2].iCol, COLVEC_PLAN_NOCOL);
  ck_assert_int_eq(p.aArg[3].eOp, COLVEC_OP_IN);
  ck_assert_int_eq(p.aArg[3].iCol, COLVEC_PLAN_ROWID);

  ck_assert_int_eq(colvecPlanDecode("scan", &p), COLVEC_OK);
  ck_assert_int_eq(p.bKnn, 0);
  ck_assert_int_eq(p.nArg, 0);
  ck_assert_int_eq(colvecPlanDecode("scan LIKE@65535", &p), COLVEC_OK);
  ck_assert_int_eq(p.nArg, 1);
  ck_assert_int_eq(p.aArg[0].eOp, COLVEC_OP_LIKE);
  ck_assert_int_eq(p.aArg[0].iCol, 65535);
}
END_TEST

/* Malformed strings are refused. */
START_TEST(test_decode_malformed) {
  static const char *const azBad[] = {"",
                                      "knnx",
                                      "scanx",
                                      "KNN",
                                      " knn",
                                      "kn",
                                      "knn  K",
                                      "knn K@1",
                                      "knn K@",
                                      "knn K@r",
                                      "knn EQ",
                                      "knn EQ@",
                                      "knn EQ@x",
                                      "knn EQ@r1",
                                      "knn EQ@rr",
                                      "knn EQ@-1",
                                      "knn EQ@1x",
                                      "knn EQ@@1",
                                      "knn EQ@ 1",
                                      "knn @1",
                                      "knn FOO@1",
                                      "knn FOO",
                                      "knn eq@1",
                                      "knn MATCH",
                                      "knn K ",
                                      "scan EQ@1 ",
                                      "knn ",
                                      "knn\tK",
                                      "knn K\t",
                                      "knn K\n",
                                      "scan EQ@1,GE@2",
                                      "knn EQ@99999999999",
                                      "knn EQ@2147483648",
                                      "knn EQ@4294967297",
                                      "knn EQ@100000000",
                                      "knn MATCH@0 K EQ@1 GE@",
                                      "knn ISNULL",
                                      "knn INN@1",
                                      "knn KK"};
  ColvecPlan p;
  char z[1024];
  size_t i;

  ck_assert_int_eq(colvecPlanDecode(NULL, &p), COLVEC_ERROR);
  for (i = 0; i < sizeof(azBad) / sizeof(azBad[0]); i++) {
    ck_assert_msg(colvecPlanDecode(azBad[i], &p) == COLVEC_ERROR,
                  "'%s' accepted", azBad[i]);
  }

  /* Exactly COLVEC_PLAN_MAX_ARG arguments pass; one more is refused. */
  strcpy(z, "knn");
  for (i = 0; i < COLVEC_PLAN_MAX_ARG; i++)
    strcat(z, " EQ@1");
  ck_assert_int_eq(colvecPlanDecode(z, &p), COLVEC_OK);
  ck_assert_int_eq(p.nArg, COLVEC_PLAN_MAX_ARG);
  strcat(z, " K");
  ck_assert_int_eq(colvecPlanDecode(z, &p), COLVEC_ERROR);
}
END_TEST

/* Encoding fails cleanly when allocation fails. */
START_TEST(test_encode_nomem) {
  ColvecPlan p;
  char *z = (char *)&p;
  int rc;
  memset(&p, 0, sizeof(p));
  p.bKnn = 1;
  tpAdd(&p, COLVEC_OP_MATCH, 0);
  colvecMemFailAfter(0);
  rc = colvecPlanEncode(&p, &z);
  colvecMemFailAfter(-1);
  ck_assert_int_eq(rc, COLVEC_NOMEM);
  ck_assert_ptr_null(z);
}
END_TEST

/* Builds the suite. */
static Suite *tpSuite(void) {
  Suite *s = suite_create("plan");
  TCase *tc = tcase_create("plan");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_op_names);
  tcase_add_test(tc, test_encode_exact);
  tcase_add_test(tc, test_roundtrip_random);
  tcase_add_test(tc, test_decode_valid);
  tcase_add_test(tc, test_decode_malformed);
  tcase_add_test(tc, test_encode_nomem);
  suite_add_tcase(s, tc);
  return s;
}

/* Runs the suite; exit status 0 when every test passed. */
int main(void) {
  SRunner *sr = srunner_create(tpSuite());
  int nFail;
  srunner_run_all(sr, CK_NORMAL);
  nFail = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nFail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
