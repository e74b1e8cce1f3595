/*
** testscale.h — shorter loops for Check suites that run emulated.
**
** Under qemu-user a suite runs 20 to 40 times slower than natively, so
** tool/ci/cross-check.sh sets COLVEC_TEST_SCALE=N (an integer >= 1) when it
** runs the suites under qemu. The long loops of the suites (random rounds,
** fault points sampled, queries per recall measurement) then take about
** 1/N of their iterations through testScaled(). Every test case, kernel
** set, quantizer and corruption case still runs, and every assertion of
** the rounds that run is checked; only the number of random rounds and
** sampled points drops. Unset, empty or 1 (the default `make check`): the
** full counts.
**
**   for (i = 0; i < testScaled(5000, 100); i++) ...
*/
#ifndef COLVEC_TESTSCALE_H
#define COLVEC_TESTSCALE_H

#include <stdlib.h>

/* Largest divisor accepted from COLVEC_TEST_SCALE. */
#define TESTSCALE_MAX 1000

/*
** Returns the divisor named by env COLVEC_TEST_SCALE: 1 when it is unset,
** empty, not a number or below 1; at most TESTSCALE_MAX.
*/
static int testScale(void)
#if defined(__GNUC__)
    __attribute__((unused))
#endif
    ;
static int testScale(void) {
  const char *z = getenv("COLVEC_TEST_SCALE");
  long n;
  if (z == NULL || z[0] == 0) return 1;
  n = strtol(z, NULL, 10);
  if (n < 1) return 1;
  return n > TESTSCALE_MAX ? TESTSCALE_MAX : (int)n;
}

/*
** Returns n divided by testScale(), but not below nMin (nor above n, when
** n itself is below nMin): the iteration count of a loop that runs n times
** natively.
*/
static int testScaled(int n, int nMin)
#if defined(__GNUC__)
    __attribute__((unused))
#endif
    ;
static int testScaled(int n, int nMin) {
  int m = n / testScale();
  if (m < nMin) m = nMin;
  return m < n ? m : n;
}

#endif /* COLVEC_TESTSCALE_H */
