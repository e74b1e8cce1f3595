/*
** testcheck.h — the check counter and seeded random numbers of the small
** test programs that print one line per check (amalg_app.c, pkg_load.c):
** testCheck() prints "ok NAME" or "FAIL NAME: DETAIL" and counts;
** testRand() draws deterministic floats in [-1, 1).
*/
#ifndef COLVEC_TESTCHECK_H
#define COLVEC_TESTCHECK_H

#include <stdio.h>

static int nCheck = 0; /* checks run */
static int nFail = 0;  /* checks failed */

/* Records one check: prints "ok NAME" or "FAIL NAME: DETAIL". */
static void testCheck(int bOk, const char *zName, const char *zDetail) {
  nCheck++;
  if (bOk) {
    printf("ok %s\n", zName);
  } else {
    nFail++;
    printf("FAIL %s: %s\n", zName, zDetail ? zDetail : "");
  }
}

/* Deterministic pseudo-random float in [-1, 1) from state *pSeed. */
static float testRand(unsigned int *pSeed) {
  *pSeed = *pSeed * 1103515245u + 12345u;
  return (float)((*pSeed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

#endif /* COLVEC_TESTCHECK_H */
