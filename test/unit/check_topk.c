/*
** check_topk.c — Check suite for colvec_topk.c (bounded top-k heap).
**
** On seeded random data with many duplicate distances (ties broken by the
** smaller rowid), for many k and n, every push's return value and every
** colvecTopkBound() are compared with a sorted reference list kept here by
** insertion, and the sorted result with a qsort() of all hits; plus hand
** cases for k=1, k>n and the bound before and after the heap fills.
*/
#include "colvec_topk.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic generator state (xorshift64*). */
static uint64_t tkSeed = 0xA4093822299F31D0ULL;

/* Returns the next 64 pseudo-random bits. */
static uint64_t tkRand(void) {
  tkSeed ^= tkSeed >> 12;
  tkSeed ^= tkSeed << 25;
  tkSeed ^= tkSeed >> 27;
  return tkSeed * 0x2545F4914F6CDD1DULL;
}

/* Returns negative, zero or positive as hit a ranks before, equal to or
** after hit b (ascending distance, then ascending rowid). */
static int tkCompare(const ColvecHit *a, const ColvecHit *b) {
  if (a->rDist < b->rDist) return -1;
  if (a->rDist > b->rDist) return 1;
  if (a->iRowid < b->iRowid) return -1;
  return a->iRowid > b->iRowid;
}

/* qsort() callback around tkCompare(). */
static int tkQsortCompare(const void *a, const void *b) {
  return tkCompare((const ColvecHit *)a, (const ColvecHit *)b);
}

/*
** Runs one random case: n hits with distinct rowids and distances drawn from
** nDistinct values (so many tie), pushed into a top-k of size k.
*/
static void tkRandomCase(int n, int k, int nDistinct) {
  ColvecHit *aAll = colvecMalloc((int64_t)(n ? n : 1) * sizeof(ColvecHit));
  ColvecHit *aRef = colvecMalloc((int64_t)k * sizeof(ColvecHit));
  ColvecTopk t;
  int i, nRef = 0, nWant = n < k ? n : k;

  ck_assert_ptr_nonnull(aAll);
  ck_assert_ptr_nonnull(aRef);
  /* Distinct rowids: a shuffled arithmetic sequence, some negative. */
  for (i = 0; i < n; i++) {
    aAll[i].iRowid = (int64_t)i * 7 - n * 2;
    aAll[i].rDist = (double)(int64_t)(tkRand() % (uint64_t)nDistinct) * 0.25 -
                    (double)nDistinct / 16.0;
  }
  for (i = n - 1; i > 0; i--) {
    int j = (int)(tkRand() % (uint64_t)(i + 1));
    int64_t iTmp = aAll[i].iRowid;
    aAll[i].iRowid = aAll[j].iRowid;
    aAll[j].iRowid = iTmp;
  }

  ck_assert_int_eq(colvecTopkInit(&t, k), COLVEC_OK);
  t.iSrc = 7; /* every hit must carry this source tag */
  for (i = 0; i < n; i++) {
    int bWant = nRef < k || tkCompare(&aAll[i], &aRef[k - 1]) < 0;
    int bGot = colvecTopkPush(&t, aAll[i].rDist, aAll[i].iRowid, i);
    ck_assert_msg((bGot != 0) == bWant, "n=%d k=%d push %d: got %d want %d", n,
                  k, i, bGot, bWant);
    if (bWant) {
      /* Insert into the sorted reference, dropping the worst when full. */
      int j = nRef < k ? nRef++ : k - 1;
      while (j > 0 && tkCompare(&aAll[i], &aRef[j - 1]) < 0) {
        aRef[j] = aRef[j - 1];
        j--;
      }
      aRef[j] = aAll[i];
    }
    ck_assert_int_eq(t.nHit, nRef);
    if (nRef < k) {
      ck_assert(isinf(colvecTopkBound(&t)) && colvecTopkBound(&t) > 0);
    } else {
      ck_assert(colvecTopkBound(&t) == aRef[k - 1].rDist);
    }
  }

  colvecTopkSort(&t);
  /* each hit still names where it was pushed from (source and row) */
  for (i = 0; i < t.nHit; i++) {
    ck_assert_int_eq(t.aHit[i].iSrc, 7);
    ck_assert(t.aHit[i].iRow >= 0 && t.aHit[i].iRow < n);
    ck_assert(aAll[t.aHit[i].iRow].iRowid == t.aHit[i].iRowid);
  }
  qsort(aAll, (size_t)n, sizeof(ColvecHit), tkQsortCompare);
  ck_assert_int_eq(t.nHit, nWant);
  for (i = 0; i < nWant; i++) {
    ck_assert_msg(
        t.aHit[i].rDist == aAll[i].rDist && t.aHit[i].iRowid == aAll[i].iRowid,
        "n=%d k=%d rank %d: (%g,%lld) want (%g,%lld)", n, k, i, t.aHit[i].rDist,
        (long long)t.aHit[i].iRowid, aAll[i].rDist, (long long)aAll[i].iRowid);
  }
  colvecTopkFree(&t);
  ck_assert_ptr_null(t.aHit);
  colvecFree(aAll);
  colvecFree(aRef);
}

/* Random data against the sort-based reference, many k and n. */
START_TEST(test_random_reference) {
  static const int anN[] = {0, 1, 2, 3, 5, 10, 31, 100, 257, 1000, 3000};
  static const int anK[] = {1,  2,   3,   4,    7,    10,  16,
                            50, 100, 999, 1000, 1001, 5000};
  static const int anDistinct[] = {1, 3, 50, 1000000};
  size_t iN, iK, iD;
  for (iN = 0; iN < sizeof(anN) / sizeof(anN[0]); iN++) {
    for (iK = 0; iK < sizeof(anK) / sizeof(anK[0]); iK++) {
      for (iD = 0; iD < sizeof(anDistinct) / sizeof(anDistinct[0]); iD++) {
        tkRandomCase(anN[iN], anK[iK], anDistinct[iD]);
      }
    }
  }
}
END_TEST

/* k = 1 keeps the single best hit; ties go to the smaller rowid. */
START_TEST(test_k1) {
  ColvecTopk t;
  ck_assert_int_eq(colvecTopkInit(&t, 1), COLVEC_OK);
  ck_assert(isinf(colvecTopkBound(&t)));
  ck_assert_int_eq(colvecTopkPush(&t, 5.0, 10, -1), 1);
  ck_assert(colvecTopkBound(&t) == 5.0);
  ck_assert_int_eq(colvecTopkPush(&t, 6.0, 1, -1), 0);
  ck_assert_int_eq(colvecTopkPush(&t, 5.0, 11, -1), 0);
  ck_assert_int_eq(colvecTopkPush(&t, 5.0, 10, -1), 0);
  ck_assert_int_eq(colvecTopkPush(&t, 5.0, 3, -1), 1);
  ck_assert_int_eq(colvecTopkPush(&t, 5.0, 7, -1), 0);
  ck_assert(colvecTopkBound(&t) == 5.0);
  ck_assert_int_eq(colvecTopkPush(&t, -1.5, 99, -1), 1);
  ck_assert(colvecTopkBound(&t) == -1.5);
  colvecTopkSort(&t);
  ck_assert_int_eq(t.nHit, 1);
  ck_assert(t.aHit[0].rDist == -1.5);
  ck_assert_int_eq(t.aHit[0].iRowid, 99);
  colvecTopkFree(&t);
}
END_TEST

/* k larger than the number of hits: all kept, bound stays +infinity. */
START_TEST(test_k_gt_n) {
  ColvecTopk t;
  static const double arDist[] = {3.0, 1.0, 2.0, 1.0};
  static const int64_t aiRowid[] = {4, 9, 2, -5};
  static const int aiOrder[] = {3, 1, 2, 0}; /* expected ranking */
  int i;
  ck_assert_int_eq(colvecTopkInit(&t, 10), COLVEC_OK);
  for (i = 0; i < 4; i++) {
    ck_assert_int_eq(colvecTopkPush(&t, arDist[i], aiRowid[i], -1), 1);
    ck_assert(isinf(colvecTopkBound(&t)) && colvecTopkBound(&t) > 0);
  }
  colvecTopkSort(&t);
  ck_assert_int_eq(t.nHit, 4);
  for (i = 0; i < 4; i++) {
    ck_assert(t.aHit[i].rDist == arDist[aiOrder[i]]);
    ck_assert_int_eq(t.aHit[i].iRowid, aiRowid[aiOrder[i]]);
  }
  colvecTopkFree(&t);
}
END_TEST

/* The bound before and after filling, and push return values. */
START_TEST(test_bound) {
  ColvecTopk t;
  ck_assert_int_eq(colvecTopkInit(&t, 3), COLVEC_OK);
  ck_assert(isinf(colvecTopkBound(&t)));
  ck_assert_int_eq(colvecTopkPush(&t, 9.0, 1, -1), 1);
  ck_assert_int_eq(colvecTopkPush(&t, 1.0, 2, -1), 1);
  ck_assert(isinf(colvecTopkBound(&t)));
  ck_assert_int_eq(colvecTopkPush(&t, 5.0, 3, -1), 1);
  ck_assert(colvecTopkBound(&t) == 9.0);
  ck_assert_int_eq(colvecTopkPush(&t, 2.0, 4, -1), 1); /* evicts 9 */
  ck_assert(colvecTopkBound(&t) == 5.0);
  ck_assert_int_eq(colvecTopkPush(&t, 7.0, 5, -1), 0);
  ck_assert_int_eq(colvecTopkPush(&t, 5.0, 6, -1), 0); /* tie, larger rowid */
  ck_assert_int_eq(colvecTopkPush(&t, 5.0, 0, -1), 1); /* tie, smaller rowid */
  ck_assert(colvecTopkBound(&t) == 5.0);               /* (5,0) is now worst */
  ck_assert_int_eq(colvecTopkPush(&t, 5.0, 1, -1), 0); /* (5,1) ranks after */
  ck_assert_int_eq(colvecTopkPush(&t, INFINITY, -1, -1), 0);
  colvecTopkSort(&t);
  ck_assert_int_eq(t.nHit, 3);
  ck_assert(t.aHit[0].rDist == 1.0 && t.aHit[0].iRowid == 2);
  ck_assert(t.aHit[1].rDist == 2.0 && t.aHit[1].iRowid == 4);
  ck_assert(t.aHit[2].rDist == 5.0 && t.aHit[2].iRowid == 0);
  colvecTopkFree(&t);
}
END_TEST

/*
** A range keeps only hits inside it, open or closed at either end, on
** distances with many ties at the bounds; rOfferMax sees every offer.
*/
START_TEST(test_range) {
  static const ColvecTopkRange aRange[] = {
      {1.0, INFINITY, 0, 1},  /* d > 1 */
      {1.0, INFINITY, 1, 1},  /* d >= 1 */
      {-INFINITY, 1.0, 1, 0}, /* d < 1 */
      {-INFINITY, 1.0, 1, 1}, /* d <= 1 */
      {0.5, 1.5, 0, 1},       /* 0.5 < d <= 1.5 */
      {1.5, 0.5, 1, 1},       /* empty */
  };
  int iCase;
  for (iCase = 0; iCase < (int)(sizeof(aRange) / sizeof(aRange[0])); iCase++) {
    const ColvecTopkRange *r = &aRange[iCase];
    ColvecTopk t;
    int i, nIn = 0, k = 7;
    double rMax = -INFINITY;
    ck_assert_int_eq(colvecTopkInit(&t, k), COLVEC_OK);
    colvecTopkSetRange(&t, r);
    for (i = 0; i < 40; i++) {
      double d = (double)(i % 9) * 0.25; /* 0 .. 2, each 4 or 5 times */
      int bIn = (r->bLoIncl ? d >= r->rLo : d > r->rLo) &&
                (r->bHiIncl ? d <= r->rHi : d < r->rHi);
      int bKept = colvecTopkPush(&t, d, i, i);
      ck_assert_int_eq(colvecTopkInRange(r, d), bIn);
      if (!bIn) ck_assert_int_eq(bKept, 0);
      nIn += bIn;
      if (d > rMax) rMax = d;
    }
    ck_assert(t.rOfferMax == rMax);
    ck_assert_int_eq(t.nOfferIn, nIn);
    ck_assert_int_eq(t.nHit, nIn < k ? nIn : k);
    colvecTopkSort(&t);
    for (i = 0; i < t.nHit; i++) {
      ck_assert(colvecTopkInRange(r, t.aHit[i].rDist));
      if (i > 0) ck_assert(t.aHit[i - 1].rDist <= t.aHit[i].rDist);
    }
    /* no range again: everything is kept */
    colvecTopkSetRange(&t, NULL);
    ck_assert_int_eq(colvecTopkPush(&t, -1.0, 100, 100), 1);
    colvecTopkFree(&t);
  }
}
END_TEST

/* Init reports NOMEM; pushing never allocates; Free accepts zeroed state. */
START_TEST(test_memory) {
  ColvecTopk t;
  int rc, i, nKept = 0;
  memset(&t, 0, sizeof(t));
  colvecTopkFree(&t);

  colvecMemFailAfter(0);
  rc = colvecTopkInit(&t, 100);
  colvecMemFailAfter(-1);
  ck_assert_int_eq(rc, COLVEC_NOMEM);
  ck_assert_ptr_null(t.aHit);
  colvecTopkFree(&t);

  ck_assert_int_eq(colvecTopkInit(&t, 100), COLVEC_OK);
  colvecMemFailAfter(0); /* any allocation from here on would fail */
  for (i = 0; i < 10000; i++) {
    nKept += colvecTopkPush(&t, (double)(tkRand() % 1000), i, -1) != 0;
  }
  colvecTopkSort(&t);
  colvecMemFailAfter(-1);
  ck_assert_int_eq(t.nHit, 100);
  ck_assert_int_ge(nKept, 100);
  for (i = 1; i < 100; i++) {
    ck_assert(tkCompare(&t.aHit[i - 1], &t.aHit[i]) < 0);
  }
  colvecTopkFree(&t);
}
END_TEST

/* Builds the suite. */
static Suite *tkSuite(void) {
  Suite *s = suite_create("topk");
  TCase *tc = tcase_create("topk");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_random_reference);
  tcase_add_test(tc, test_k1);
  tcase_add_test(tc, test_k_gt_n);
  tcase_add_test(tc, test_bound);
  tcase_add_test(tc, test_range);
  tcase_add_test(tc, test_memory);
  suite_add_tcase(s, tc);
  return s;
}

/* Runs the suite; exit status 0 when every test passed. */
int main(void) {
  SRunner *sr = srunner_create(tkSuite());
  int nFail;
  srunner_run_all(sr, CK_NORMAL);
  nFail = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nFail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
