/*
** test/port/wincheck/check.h — the part of the Check unit-test API that
** colvec's
** Check suites use, for builds where Check itself is not available
** (mingw-w64: Debian ships no Check for Windows). `make check-windows`
** compiles the SQLite-free suites with -I test/port/wincheck so that their
** `#include <check.h>` finds this file; on Linux they use the real Check.
**
** It runs every test in the calling process (Check's CK_NOFORK mode: no
** isolation between tests, no timeouts). A failing assertion prints
** "file:line:F:tcase:test: message" as Check does and leaves the test
** through longjmp(); checked fixtures run around every test, unchecked
** ones around each test case. srunner_run_all() prints Check's summary
** line "NN%: Checks: N, Failures: N, Errors: 0", and with
** CK_VERBOSITY=verbose one line per test with its time.
**
** Header-only: every function is static inline, so each suite (one source
** file) gets its own copy.
*/
#ifndef COLVEC_WINCHECK_H
#define COLVEC_WINCHECK_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Run modes and fork status, accepted and ignored (no fork here). */
#define CK_SILENT 0  /* Check: no output */
#define CK_MINIMAL 1 /* Check: summary only */
#define CK_NORMAL 2  /* Check: summary and failures */
#define CK_VERBOSE 3 /* Check: every test */
#define CK_FORK 1    /* Check: a child per test (not available here) */
#define CK_NOFORK 2  /* Check: every test in the calling process */

/* Largest number of tests in one test case, and of test cases. */
#define CKW_MAX_TESTS 256
#define CKW_MAX_TCASES 16

/* A test function; _i is the loop index of Check's loop tests (0). */
typedef void (*CkwTestFn)(int _i);

/* A fixture function (setup or teardown). */
typedef void (*CkwFixtureFn)(void);

/* A test as START_TEST defines it (Check 0.15's type of the same name): a
** suite may pass `const TTest *` around as with real Check. */
typedef struct TTest TTest;
struct TTest {
  const char *zName; /* the test's name, for failure lines */
  CkwTestFn xFn;     /* its body */
};

typedef struct TCase TCase;
typedef struct Suite Suite;
typedef struct SRunner SRunner;

/* A test case: its tests and fixtures. */
struct TCase {
  const char *zName;                 /* name, for failure lines */
  CkwTestFn axTest[CKW_MAX_TESTS];   /* the tests, in order */
  const char *azTest[CKW_MAX_TESTS]; /* their names */
  int nTest;                         /* entries used in axTest */
  CkwFixtureFn xSetup;               /* checked fixture: before each test */
  CkwFixtureFn xTeardown;            /* checked fixture: after each test */
  CkwFixtureFn xUSetup;              /* unchecked fixture: before the case */
  CkwFixtureFn xUTeardown;           /* unchecked fixture: after the case */
};

/* A suite: its test cases. */
struct Suite {
  const char *zName;             /* name, printed when it runs */
  TCase *apCase[CKW_MAX_TCASES]; /* the test cases, in order */
  int nCase;                     /* entries used in apCase */
};

/* A runner: one suite and the counts of its last run. */
struct SRunner {
  Suite *pSuite; /* the suite to run */
  int nRun;      /* tests run */
  int nFail;     /* tests that failed */
};

/* Where a failing assertion jumps to (the running test's runner frame). */
static jmp_buf ckwJump;

/* Names of the running test case and test, for failure lines. */
static const char *ckwCase = "";
static const char *ckwTest = "";

/* Allocates zeroed memory or ends the process: test scaffolding only. */
static inline void *ckwAlloc(size_t n) {
  void *p = calloc(1, n);
  if (p == NULL) {
    fprintf(stderr, "check shim: out of memory\n");
    exit(2);
  }
  return p;
}

/* Creates a suite named zName. */
static inline Suite *suite_create(const char *zName) {
  Suite *s = (Suite *)ckwAlloc(sizeof(Suite));
  s->zName = zName;
  return s;
}

/* Creates a test case named zName. */
static inline TCase *tcase_create(const char *zName) {
  TCase *tc = (TCase *)ckwAlloc(sizeof(TCase));
  tc->zName = zName;
  return tc;
}

/* Adds tc to s. */
static inline void suite_add_tcase(Suite *s, TCase *tc) {
  if (s->nCase == CKW_MAX_TCASES) {
    fprintf(stderr, "check shim: too many test cases\n");
    exit(2);
  }
  s->apCase[s->nCase++] = tc;
}

/* Adds test x named zName to tc (through the tcase_add_test macro). */
static inline void ckwAddTest(TCase *tc, CkwTestFn x, const char *zName) {
  if (tc->nTest == CKW_MAX_TESTS) {
    fprintf(stderr, "check shim: too many tests\n");
    exit(2);
  }
  tc->axTest[tc->nTest] = x;
  tc->azTest[tc->nTest++] = zName;
}
#define tcase_add_test(tc, tf) ckwAddTest((tc), (tf)->xFn, (tf)->zName)

/* Sets the fixtures run around every test of tc. */
static inline void tcase_add_checked_fixture(TCase *tc, CkwFixtureFn xSetup,
                                             CkwFixtureFn xTeardown) {
  tc->xSetup = xSetup;
  tc->xTeardown = xTeardown;
}

/* Sets the fixtures run once around all the tests of tc. */
static inline void tcase_add_unchecked_fixture(TCase *tc, CkwFixtureFn xSetup,
                                               CkwFixtureFn xTeardown) {
  tc->xUSetup = xSetup;
  tc->xUTeardown = xTeardown;
}

/* Accepted and ignored: there are no timeouts without a child process. */
static inline void tcase_set_timeout(TCase *tc, double rSeconds) {
  (void)tc;
  (void)rSeconds;
}

/* Creates a runner for s. */
static inline SRunner *srunner_create(Suite *s) {
  SRunner *sr = (SRunner *)ckwAlloc(sizeof(SRunner));
  sr->pSuite = s;
  return sr;
}

/* Accepted and ignored: every test runs in this process. */
static inline void srunner_set_fork_status(SRunner *sr, int eFork) {
  (void)sr;
  (void)eFork;
}

/*
** Reports a failed assertion at zFile:iLine (message zFmt, or zExpr when
** zFmt is empty) and leaves the running test.
*/
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static inline void
ckwFail(const char *zFile, int iLine, const char *zExpr, const char *zFmt,
        ...) {
  va_list ap;
  fprintf(stderr, "%s:%d:F:%s:%s:0: ", zFile, iLine, ckwCase, ckwTest);
  if (zFmt && zFmt[0]) {
    va_start(ap, zFmt);
    vfprintf(stderr, zFmt, ap);
    va_end(ap);
  } else {
    fprintf(stderr, "Assertion '%s' failed", zExpr);
  }
  fputc('\n', stderr);
  fflush(stderr);
  longjmp(ckwJump, 1);
}

/* Runs test i of tc with its checked fixtures; returns 1 if it passed. */
static inline int ckwRunOne(TCase *tc, int i) {
  volatile int bPass = 1;
  ckwTest = tc->azTest[i];
  if (setjmp(ckwJump) == 0) {
    if (tc->xSetup) tc->xSetup();
    tc->axTest[i](0);
  } else {
    bPass = 0;
  }
  if (setjmp(ckwJump) == 0) {
    if (tc->xTeardown) tc->xTeardown();
  } else {
    bPass = 0;
  }
  return bPass;
}

/* Runs every test of the runner's suite and prints Check's summary. */
static inline void srunner_run_all(SRunner *sr, int eMode) {
  Suite *s = sr->pSuite;
  const char *zVerbosity = getenv("CK_VERBOSITY");
  int iCase, i;
  int bVerbose =
      eMode == CK_VERBOSE || (zVerbosity && strcmp(zVerbosity, "verbose") == 0);
  printf("Running suite(s): %s\n", s->zName);
  fflush(stdout);
  for (iCase = 0; iCase < s->nCase; iCase++) {
    TCase *tc = s->apCase[iCase];
    ckwCase = tc->zName;
    ckwTest = "(unchecked setup)";
    if (tc->xUSetup) {
      if (setjmp(ckwJump) == 0) {
        tc->xUSetup();
      } else {
        sr->nRun += tc->nTest;
        sr->nFail += tc->nTest;
        continue;
      }
    }
    for (i = 0; i < tc->nTest; i++) {
      clock_t t0 = clock();
      int bPass = ckwRunOne(tc, i);
      sr->nRun++;
      if (!bPass) sr->nFail++;
      if (bVerbose) {
        printf("%s:%s:%s: %s (%.2f s)\n", s->zName, tc->zName, tc->azTest[i],
               bPass ? "Passed" : "Failed",
               (double)(clock() - t0) / CLOCKS_PER_SEC);
        fflush(stdout);
      }
    }
    ckwTest = "(unchecked teardown)";
    if (tc->xUTeardown) {
      if (setjmp(ckwJump) == 0) {
        tc->xUTeardown();
      } else {
        sr->nFail++;
      }
    }
  }
  printf("%d%%: Checks: %d, Failures: %d, Errors: 0\n",
         sr->nRun ? 100 * (sr->nRun - sr->nFail) / sr->nRun : 100, sr->nRun,
         sr->nFail);
  fflush(stdout);
}

/* Number of tests that failed in the last srunner_run_all(). */
static inline int srunner_ntests_failed(SRunner *sr) { return sr->nFail; }

/* Frees the runner, its suite and its test cases. */
static inline void srunner_free(SRunner *sr) {
  int i;
  for (i = 0; i < sr->pSuite->nCase; i++)
    free(sr->pSuite->apCase[i]);
  free(sr->pSuite);
  free(sr);
}

/* A test: START_TEST(name) { ... } END_TEST defines its body name_fn and
** name, a `const TTest *` to pass to tcase_add_test(). */
#if defined(__GNUC__)
#define CKW_UNUSED __attribute__((unused))
#else
#define CKW_UNUSED
#endif
#define START_TEST(name)                                                       \
  static void name##_fn(int _i CKW_UNUSED);                                    \
  static const TTest name##_ttest = {#name, name##_fn};                        \
  static const TTest *name = &name##_ttest;                                    \
  static void name##_fn(int _i CKW_UNUSED)
#define END_TEST

/* Assertions (Check's names and messages). */
#define ck_assert_msg(expr, ...)                                               \
  do {                                                                         \
    if (!(expr)) ckwFail(__FILE__, __LINE__, #expr, __VA_ARGS__);              \
  } while (0)
#define ck_assert(expr) ck_assert_msg(expr, "Assertion '%s' failed", #expr)
#define ck_abort_msg(...) ckwFail(__FILE__, __LINE__, "abort", __VA_ARGS__)

/* Integer comparisons, printed as long long / unsigned long long. */
#define CKW_INT_CMP(X, OP, Y)                                                  \
  do {                                                                         \
    long long ckwX = (long long)(X), ckwY = (long long)(Y);                    \
    if (!(ckwX OP ckwY)) {                                                     \
      ckwFail(__FILE__, __LINE__, "",                                          \
              "Assertion '%s' failed: %s == %lld, %s == %lld",                 \
              #X " " #OP " " #Y, #X, ckwX, #Y, ckwY);                          \
    }                                                                          \
  } while (0)
#define CKW_UINT_CMP(X, OP, Y)                                                 \
  do {                                                                         \
    unsigned long long ckwX = (unsigned long long)(X);                         \
    unsigned long long ckwY = (unsigned long long)(Y);                         \
    if (!(ckwX OP ckwY)) {                                                     \
      ckwFail(__FILE__, __LINE__, "",                                          \
              "Assertion '%s' failed: %s == %llu, %s == %llu",                 \
              #X " " #OP " " #Y, #X, ckwX, #Y, ckwY);                          \
    }                                                                          \
  } while (0)
#define ck_assert_int_eq(X, Y) CKW_INT_CMP(X, ==, Y)
#define ck_assert_int_ne(X, Y) CKW_INT_CMP(X, !=, Y)
#define ck_assert_int_lt(X, Y) CKW_INT_CMP(X, <, Y)
#define ck_assert_int_le(X, Y) CKW_INT_CMP(X, <=, Y)
#define ck_assert_int_gt(X, Y) CKW_INT_CMP(X, >, Y)
#define ck_assert_int_ge(X, Y) CKW_INT_CMP(X, >=, Y)
#define ck_assert_uint_eq(X, Y) CKW_UINT_CMP(X, ==, Y)
#define ck_assert_uint_ne(X, Y) CKW_UINT_CMP(X, !=, Y)
#define ck_assert_uint_lt(X, Y) CKW_UINT_CMP(X, <, Y)
#define ck_assert_uint_le(X, Y) CKW_UINT_CMP(X, <=, Y)
#define ck_assert_uint_gt(X, Y) CKW_UINT_CMP(X, >, Y)
#define ck_assert_uint_ge(X, Y) CKW_UINT_CMP(X, >=, Y)

/* Floating-point comparisons. */
#define CKW_FLOAT_CMP(X, OP, Y)                                                \
  do {                                                                         \
    double ckwX = (double)(X), ckwY = (double)(Y);                             \
    if (!(ckwX OP ckwY)) {                                                     \
      ckwFail(__FILE__, __LINE__, "",                                          \
              "Assertion '%s' failed: %s == %.9g, %s == %.9g",                 \
              #X " " #OP " " #Y, #X, ckwX, #Y, ckwY);                          \
    }                                                                          \
  } while (0)
#define ck_assert_float_le(X, Y) CKW_FLOAT_CMP(X, <=, Y)
#define ck_assert_float_lt(X, Y) CKW_FLOAT_CMP(X, <, Y)
#define ck_assert_float_ge(X, Y) CKW_FLOAT_CMP(X, >=, Y)
#define ck_assert_float_gt(X, Y) CKW_FLOAT_CMP(X, >, Y)
#define ck_assert_double_le(X, Y) CKW_FLOAT_CMP(X, <=, Y)
#define ck_assert_double_ge(X, Y) CKW_FLOAT_CMP(X, >=, Y)

/* Pointer and string assertions. */
#define ck_assert_ptr_eq(X, Y)                                                 \
  ck_assert_msg((const void *)(X) == (const void *)(Y),                        \
                "Assertion '%s == %s' failed", #X, #Y)
#define ck_assert_ptr_ne(X, Y)                                                 \
  ck_assert_msg((const void *)(X) != (const void *)(Y),                        \
                "Assertion '%s != %s' failed", #X, #Y)
#define ck_assert_ptr_null(X)                                                  \
  ck_assert_msg((const void *)(X) == NULL, "Assertion '%s == NULL' failed", #X)
#define ck_assert_ptr_nonnull(X)                                               \
  ck_assert_msg((const void *)(X) != NULL, "Assertion '%s != NULL' failed", #X)
#define ck_assert_str_eq(X, Y)                                                 \
  do {                                                                         \
    const char *ckwX = (X), *ckwY = (Y);                                       \
    if (ckwX == NULL || ckwY == NULL || strcmp(ckwX, ckwY) != 0) {             \
      ckwFail(__FILE__, __LINE__, "",                                          \
              "Assertion '%s == %s' failed: %s == \"%s\", %s == \"%s\"", #X,   \
              #Y, #X, ckwX ? ckwX : "(null)", #Y, ckwY ? ckwY : "(null)");     \
    }                                                                          \
  } while (0)

#endif /* COLVEC_WINCHECK_H */
