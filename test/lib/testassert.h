/*
** testassert.h — assertions for the hot loops of the Check suites.
**
** Check's ck_assert_* macros record a mark point for every assertion that
** passes, and each mark point is one write() to the test's log: a loop of
** a million passing checks is a million system calls, most of a suite's
** time natively and far more under qemu-user and wine. These macros check
** the same conditions and call Check only on a failure, whose message
** names both expressions and their values. (A crash inside such a loop is
** reported at the last mark point before it.)
**
**   for (i = 0; i < nRow; i++) TEST_EQ(aGot[i], aWant[i]);
*/
#ifndef COLVEC_TESTASSERT_H
#define COLVEC_TESTASSERT_H

#include <check.h>
#include <stdint.h>

/* Fails the test unless integers X OP Y (OP one of == != < <= > >=). */
#define TEST_INT(X, OP, Y)                                                     \
  do {                                                                         \
    intmax_t testX_ = (intmax_t)(X), testY_ = (intmax_t)(Y);                   \
    if (!(testX_ OP testY_))                                                   \
      ck_abort_msg("Assertion '%s %s %s' failed: %jd, %jd", #X, #OP, #Y,       \
                   testX_, testY_);                                            \
  } while (0)

/* Fails the test unless integers X and Y are equal. */
#define TEST_EQ(X, Y) TEST_INT(X, ==, Y)

/* Fails the test unless expression E is true. */
#define TEST_TRUE(E)                                                           \
  do {                                                                         \
    if (!(E)) ck_abort_msg("Assertion '%s' failed", #E);                       \
  } while (0)

#endif /* COLVEC_TESTASSERT_H */
