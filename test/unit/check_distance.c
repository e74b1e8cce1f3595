/*
** check_distance.c — Check suite for the distance kernels.
**
** The scalar kernels are checked against sums computed here in double (or
** exactly in int64); every other kernel set this machine runs is checked
** against the scalar twin on seeded random data, for lengths 0..70 and a few
** long ones, at unaligned addresses: float results within a relative
** tolerance scaled by the sum of absolute terms, integer results exactly.
** Batch kernels must equal their single-vector kernels bit for bit. The
** metric wrappers are checked on hand-computed cases, and the
** COLVEC_KERNELS override in forked children.
*/
#include "colvec_distance.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <process.h>
#else
#include <sys/wait.h>
#include <unistd.h>
#endif

/* Names of the kernel sets, in the order of the colvecKernels*() getters. */
static const char *const tdazKernel[] = {"scalar", "avx2", "avx512", "neon"};

/* This program's path (argv[0]), for the child of tdBestInChild. */
static const char *tdzArgv0 = NULL;

/* Largest vector the random tests use (elements), plus room for offsets. */
#define TD_MAXN 4099
#define TD_PAD 16

/* Lengths tested besides 0..70. */
static const int tdaLongN[] = {127, 128, 129, 768, 1536, 4099};

/* Deterministic generator state (xorshift64*). */
static uint64_t tdSeed = 0x9E3779B97F4A7C15ULL;

/*
** Returns n bytes from colvecMalloc(), failing the test if there are none.
** Freed with colvecFree().
*/
static void *tdAlloc(int64_t n) {
  void *p = colvecMalloc(n);
  ck_assert_ptr_nonnull(p);
  return p;
}

/* Sets the generator seed. */
static void tdSrand(uint64_t s) { tdSeed = s ? s : 1; }

/* Returns the next 64 pseudo-random bits. */
static uint64_t tdRand(void) {
  tdSeed ^= tdSeed >> 12;
  tdSeed ^= tdSeed << 25;
  tdSeed ^= tdSeed >> 27;
  return tdSeed * 0x2545F4914F6CDD1DULL;
}

/* Returns a float uniform in [-1, 1). */
static float tdRandF(void) {
  return (float)((double)(tdRand() >> 40) / (double)(1 << 23) - 1.0);
}

/* Fills a[0..n-1] with random floats in [-1, 1). */
static void tdFillF32(float *a, int n) {
  int i;
  for (i = 0; i < n; i++)
    a[i] = tdRandF();
}

/* Fills a[0..n-1] with random bytes (also used for int8 vectors). */
static void tdFillBytes(void *p, int n) {
  uint8_t *a = (uint8_t *)p;
  int i;
  for (i = 0; i < n; i++)
    a[i] = (uint8_t)(tdRand() >> 56);
}

/*
** The kernel sets to compare with scalar: every one this machine runs,
** including the AVX-512 base set (its own Hamming kernel). Writes up to 5
** entries to ap and returns how many.
*/
static int tdSets(const ColvecKernels **ap) {
  int n = 0;
  if (colvecKernelsAvx2()) ap[n++] = colvecKernelsAvx2();
  if (colvecKernelsAvx512()) ap[n++] = colvecKernelsAvx512();
  if (colvecKernelsAvx512Base()) ap[n++] = colvecKernelsAvx512Base();
  if (colvecKernelsNeon()) ap[n++] = colvecKernelsNeon();
  return n;
}

/* Returns how many lengths tdLength() walks through. */
static int tdNLength(void) {
  return 71 + (int)(sizeof(tdaLongN) / sizeof(tdaLongN[0]));
}

/* Returns the iLen-th tested length: 0..70, then the long ones. */
static int tdLength(int iLen) {
  return iLen <= 70 ? iLen : tdaLongN[iLen - 71];
}

/*
** Asserts that got is within the float tolerance of want, where scale is
** the sum of the absolute values of the terms (the size rounding scales
** with); zWhat names the case in the failure message.
*/
static void tdNear(double got, double want, double scale, const char *zWhat,
                   const char *zSet, int n) {
  double tol = 1e-4 * fabs(want) + 1e-5 * scale + 1e-6;
  ck_assert_msg(fabs(got - want) <= tol, "%s %s n=%d: got %.9g want %.9g", zSet,
                zWhat, n, got, want);
}

/*
** The scalar kernels against sums computed here in double (floats) or
** int64 (int8, bits), at every tested length.
*/
START_TEST(test_scalar_reference) {
  const ColvecKernels *pS = colvecKernelsScalar();
  float *a = tdAlloc(sizeof(float) * TD_MAXN),
        *b = tdAlloc(sizeof(float) * TD_MAXN);
  int8_t *x = tdAlloc(TD_MAXN), *y = tdAlloc(TD_MAXN);
  int iLen;
  ck_assert_str_eq(pS->zName, "scalar");
  tdSrand(1);
  for (iLen = 0; iLen < tdNLength(); iLen++) {
    int n = tdLength(iLen), i;
    double l2 = 0, l1 = 0, dot = 0, na = 0, nb = 0, sDot = 0;
    int64_t il2 = 0, idot = 0, ina = 0, inb = 0, ham = 0;
    float fd, fa, fb;
    int64_t jd, ja, jb;
    tdFillF32(a, n);
    tdFillF32(b, n);
    tdFillBytes(x, n);
    tdFillBytes(y, n);
    for (i = 0; i < n; i++) {
      double d = (double)a[i] - b[i];
      int e = x[i] - y[i], bit;
      l2 += d * d;
      l1 += fabs(d);
      dot += (double)a[i] * b[i];
      sDot += fabs((double)a[i] * b[i]);
      na += (double)a[i] * a[i];
      nb += (double)b[i] * b[i];
      il2 += e * e;
      idot += x[i] * y[i];
      ina += x[i] * x[i];
      inb += y[i] * y[i];
      for (bit = 0; bit < 8; bit++)
        ham += ((x[i] ^ y[i]) >> bit) & 1;
    }
    tdNear(pS->xL2sqF32(a, b, n), l2, l2, "l2sq", "scalar", n);
    tdNear(pS->xL1F32(a, b, n), l1, l1, "l1", "scalar", n);
    tdNear(pS->xDotF32(a, b, n), dot, sDot, "dot", "scalar", n);
    pS->xDotNormsF32(a, b, n, &fd, &fa, &fb);
    tdNear(fd, dot, sDot, "dotnorms.dot", "scalar", n);
    tdNear(fa, na, na, "dotnorms.a", "scalar", n);
    tdNear(fb, nb, nb, "dotnorms.b", "scalar", n);
    ck_assert_int_eq(pS->xL2sqI8(x, y, n), il2);
    ck_assert_int_eq(pS->xDotI8(x, y, n), idot);
    pS->xDotNormsI8(x, y, n, &jd, &ja, &jb);
    ck_assert_int_eq(jd, idot);
    ck_assert_int_eq(ja, ina);
    ck_assert_int_eq(jb, inb);
    ck_assert_int_eq(pS->xHamming((uint8_t *)x, (uint8_t *)y, n), ham);
  }
  colvecFree(a);
  colvecFree(b);
  colvecFree(x);
  colvecFree(y);
}
END_TEST

/*
** Every SIMD set against scalar, float kernels, for every tested length
** and four relative misalignments of the two operands.
*/
START_TEST(test_simd_f32) {
  const ColvecKernels *pS = colvecKernelsScalar(), *ap[5];
  int nSet = tdSets(ap), iSet, iLen, iOff;
  float *a = tdAlloc(sizeof(float) * (TD_MAXN + TD_PAD));
  float *b = tdAlloc(sizeof(float) * (TD_MAXN + TD_PAD));
  tdSrand(2);
  for (iSet = 0; iSet < nSet; iSet++) {
    const ColvecKernels *pK = ap[iSet];
    for (iLen = 0; iLen < tdNLength(); iLen++) {
      for (iOff = 0; iOff < 4; iOff++) {
        int n = tdLength(iLen), i;
        float *pa = a + iOff, *pb = b + 3 - iOff + (iOff & 1) * 5;
        float rd, ra, rb, gd, ga, gb;
        double sL2 = 0, sL1 = 0, sDot = 0;
        tdFillF32(pa, n);
        tdFillF32(pb, n);
        for (i = 0; i < n; i++) {
          sL2 += ((double)pa[i] - pb[i]) * ((double)pa[i] - pb[i]);
          sL1 += fabs((double)pa[i] - pb[i]);
          sDot += fabs((double)pa[i] * pb[i]);
        }
        tdNear(pK->xL2sqF32(pa, pb, n), pS->xL2sqF32(pa, pb, n), sL2, "l2sq",
               pK->zName, n);
        tdNear(pK->xDotF32(pa, pb, n), pS->xDotF32(pa, pb, n), sDot, "dot",
               pK->zName, n);
        tdNear(pK->xL1F32(pa, pb, n), pS->xL1F32(pa, pb, n), sL1, "l1",
               pK->zName, n);
        pS->xDotNormsF32(pa, pb, n, &rd, &ra, &rb);
        pK->xDotNormsF32(pa, pb, n, &gd, &ga, &gb);
        tdNear(gd, rd, sDot, "dotnorms.dot", pK->zName, n);
        tdNear(ga, ra, ra, "dotnorms.a", pK->zName, n);
        tdNear(gb, rb, rb, "dotnorms.b", pK->zName, n);
      }
    }
  }
  colvecFree(a);
  colvecFree(b);
}
END_TEST

/*
** Every SIMD set against scalar, int8 and Hamming kernels, exactly, for
** every tested length and byte misalignments 0..3.
*/
START_TEST(test_simd_int) {
  const ColvecKernels *pS = colvecKernelsScalar(), *ap[5];
  int nSet = tdSets(ap), iSet, iLen, iOff;
  int8_t *x = tdAlloc(TD_MAXN + TD_PAD), *y = tdAlloc(TD_MAXN + TD_PAD);
  tdSrand(3);
  for (iSet = 0; iSet < nSet; iSet++) {
    const ColvecKernels *pK = ap[iSet];
    for (iLen = 0; iLen < tdNLength(); iLen++) {
      for (iOff = 0; iOff < 4; iOff++) {
        int n = tdLength(iLen);
        int8_t *px = x + iOff, *py = y + 7 - iOff;
        int64_t r[3], g[3];
        tdFillBytes(px, n);
        tdFillBytes(py, n);
        ck_assert_int_eq(pK->xL2sqI8(px, py, n), pS->xL2sqI8(px, py, n));
        ck_assert_int_eq(pK->xDotI8(px, py, n), pS->xDotI8(px, py, n));
        pS->xDotNormsI8(px, py, n, &r[0], &r[1], &r[2]);
        pK->xDotNormsI8(px, py, n, &g[0], &g[1], &g[2]);
        ck_assert_int_eq(g[0], r[0]);
        ck_assert_int_eq(g[1], r[1]);
        ck_assert_int_eq(g[2], r[2]);
        ck_assert_msg(pK->xHamming((uint8_t *)px, (uint8_t *)py, n) ==
                          pS->xHamming((uint8_t *)px, (uint8_t *)py, n),
                      "%s hamming nByte=%d", pK->zName, n);
      }
    }
  }
  colvecFree(x);
  colvecFree(y);
}
END_TEST

/*
** int8 extremes: every product and square at its limit, over 16 times the
** largest column width, so int32 lanes would overflow without the periodic
** int64 flushes.
*/
START_TEST(test_int8_extremes) {
  const ColvecKernels *ap[6];
  int n = 16 * COLVEC_MAX_DIM, nSet, iSet;
  int8_t *x = tdAlloc((size_t)n), *y = tdAlloc((size_t)n);
  uint8_t *u = tdAlloc((size_t)n), *v = tdAlloc((size_t)n);
  memset(x, 0x80, (size_t)n); /* -128 */
  memset(y, 0x7f, (size_t)n); /* 127 */
  memset(u, 0x00, (size_t)n);
  memset(v, 0xff, (size_t)n);
  ap[0] = colvecKernelsScalar();
  nSet = 1 + tdSets(ap + 1);
  for (iSet = 0; iSet < nSet; iSet++) {
    const ColvecKernels *pK = ap[iSet];
    int64_t d, na, nb;
    ck_assert_int_eq(pK->xL2sqI8(x, y, n), (int64_t)n * 255 * 255);
    ck_assert_int_eq(pK->xDotI8(x, y, n), -(int64_t)n * 128 * 127);
    ck_assert_int_eq(pK->xDotI8(x, x, n), (int64_t)n * 128 * 128);
    pK->xDotNormsI8(x, y, n, &d, &na, &nb);
    ck_assert_int_eq(d, -(int64_t)n * 128 * 127);
    ck_assert_int_eq(na, (int64_t)n * 128 * 128);
    ck_assert_int_eq(nb, (int64_t)n * 127 * 127);
    ck_assert_int_eq(pK->xHamming(u, v, n), (int64_t)n * 8);
    ck_assert_int_eq(pK->xHamming(u, v, n - 3), (int64_t)(n - 3) * 8);
  }
  colvecFree(x);
  colvecFree(y);
  colvecFree(u);
  colvecFree(v);
}
END_TEST

/*
** Batch kernels of every set (scalar included) equal, bit for bit, the
** single-vector kernels, for batches of 0..9 vectors at scattered unaligned
** addresses and several lengths; slots past nVec are left untouched.
*/
START_TEST(test_batch) {
  static const int aN[] = {0, 1, 7, 8, 15, 16, 31, 33, 63, 64, 65, 100, 768};
  const ColvecKernels *ap[6];
  int nSet, iSet, iN, nVec, i;
  float *pool = tdAlloc(sizeof(float) * 10 * (768 + TD_PAD));
  float *q = tdAlloc(sizeof(float) * (768 + TD_PAD));
  const float *apVec[10];
  float aOut[11];
  ap[0] = colvecKernelsScalar();
  nSet = 1 + tdSets(ap + 1);
  tdSrand(4);
  for (iSet = 0; iSet < nSet; iSet++) {
    const ColvecKernels *pK = ap[iSet];
    for (iN = 0; iN < (int)(sizeof(aN) / sizeof(aN[0])); iN++) {
      int n = aN[iN];
      tdFillF32(q + 1, n);
      for (i = 0; i < 10; i++) {
        /* vector i lives at a different offset, in reverse pool order */
        float *p = pool + (9 - i) * (768 + TD_PAD) + (i * 3) % 7;
        tdFillF32(p, n);
        apVec[i] = p;
      }
      for (nVec = 0; nVec <= 9; nVec++) {
        aOut[nVec] = -7.0f;
        pK->xL2sqBatchF32(q + 1, apVec, nVec, n, aOut);
        for (i = 0; i < nVec; i++) {
          float want = pK->xL2sqF32(q + 1, apVec[i], n);
          ck_assert_msg(memcmp(&aOut[i], &want, sizeof(float)) == 0,
                        "%s l2 batch n=%d nVec=%d i=%d: %.9g != %.9g",
                        pK->zName, n, nVec, i, aOut[i], want);
        }
        ck_assert(aOut[nVec] == -7.0f);
        pK->xDotBatchF32(q + 1, apVec, nVec, n, aOut);
        for (i = 0; i < nVec; i++) {
          float want = pK->xDotF32(q + 1, apVec[i], n);
          ck_assert_msg(memcmp(&aOut[i], &want, sizeof(float)) == 0,
                        "%s dot batch n=%d nVec=%d i=%d: %.9g != %.9g",
                        pK->zName, n, nVec, i, aOut[i], want);
        }
        ck_assert(aOut[nVec] == -7.0f);
      }
    }
  }
  colvecFree(pool);
  colvecFree(q);
}
END_TEST

/* Asserts |got - want| <= 1e-6 (hand-computed wrapper results). */
#define TD_EQ(got, want)                                                       \
  ck_assert_msg(fabs((got) - (want)) <= 1e-6, "%s: got %.9g want %.9g", #got,  \
                (double)(got), (double)(want))

/*
** colvecDistance() on hand-computed cases, with every kernel set: l2 of a
** 3-4-5 triangle, cosine of parallel, orthogonal, opposite and zero vectors,
** dot, and Hamming of known bytes (including a partial last byte).
*/
START_TEST(test_metrics) {
  static const float f0[] = {0, 0, 0, 0}, f345[] = {3, 4, 0, 0};
  static const float fx[] = {1, 2, 3, 4}, fx2[] = {2, 4, 6, 8};
  static const float fneg[] = {-1, -2, -3, -4}, fo[] = {2, -1, 0, 0};
  static const float fe1[] = {1, 0, 0, 0}, fe2[] = {0, 1, 0, 0};
  static const int8_t i0[] = {0, 0, 0}, i345[] = {3, 4, 0};
  static const int8_t ia[] = {1, 2, 3}, ia2[] = {-2, -4, -6};
  static const int8_t io[] = {0, 0, 9};
  static const int8_t ib1[] = {10, 0, 0}, ib2[] = {1, 1, 0};
  static const uint8_t b1[] = {0x0F, 0xFF, 0x01}, b2[] = {0x00, 0x0F, 0xFF};
  const ColvecKernels *ap[6];
  int nSet, iSet;
  ap[0] = colvecKernelsScalar();
  nSet = 1 + tdSets(ap + 1);
  for (iSet = 0; iSet < nSet; iSet++) {
    const ColvecKernels *p = ap[iSet];
    ColvecElem F = COLVEC_ELEM_F32, I = COLVEC_ELEM_I8, B = COLVEC_ELEM_BIT;
    ColvecMetric L2 = COLVEC_METRIC_L2, COS = COLVEC_METRIC_COSINE;
    ColvecMetric DOT = COLVEC_METRIC_DOT, HAM = COLVEC_METRIC_HAMMING;
    ColvecMetric L1 = COLVEC_METRIC_L1;
    /* float32 */
    TD_EQ(colvecDistance(p, L2, F, f0, f345, 4), 5.0);
    TD_EQ(colvecDistance(p, L2, F, fx, fx, 4), 0.0);
    TD_EQ(colvecDistance(p, COS, F, fx, fx2, 4), 0.0);
    TD_EQ(colvecDistance(p, COS, F, fx, fneg, 4), 2.0);
    TD_EQ(colvecDistance(p, COS, F, fe1, fe2, 4), 1.0);
    TD_EQ(colvecDistance(p, COS, F, f0, fx, 4), 1.0);
    TD_EQ(colvecDistance(p, COS, F, fx, f0, 4), 1.0);
    TD_EQ(colvecDistance(p, COS, F, f0, f0, 4), 1.0);
    TD_EQ(colvecDistance(p, COS, F, fx, fo, 4), 1.0);    /* 2-2 = 0 */
    TD_EQ(colvecDistance(p, COS, F, f345, fe1, 4), 0.4); /* 1 - 3/5 */
    TD_EQ(colvecDistance(p, DOT, F, fx, fx2, 4), -60.0);
    TD_EQ(colvecDistance(p, DOT, F, fx, f0, 4), 0.0);
    TD_EQ(colvecDistance(p, L2, F, fx, fx2, 0), 0.0);
    TD_EQ(colvecDistance(p, L1, F, f0, f345, 4), 7.0);
    TD_EQ(colvecDistance(p, L1, F, fx, fneg, 4), 20.0);
    TD_EQ(colvecDistance(p, L1, F, fx, fx, 4), 0.0);
    TD_EQ(colvecDistance(p, L1, F, fx, fx2, 0), 0.0);
    /* int8 */
    TD_EQ(colvecDistance(p, L2, I, i0, i345, 3), 5.0);
    TD_EQ(colvecDistance(p, COS, I, ia, ia2, 3), 2.0);
    TD_EQ(colvecDistance(p, COS, I, ia, ia, 3), 0.0);
    TD_EQ(colvecDistance(p, COS, I, i345, io, 3), 1.0);
    TD_EQ(colvecDistance(p, COS, I, i0, ia, 3), 1.0);
    TD_EQ(colvecDistance(p, COS, I, ib1, ib2, 3),
          1.0 - 10.0 / (10.0 * sqrt(2.0)));
    TD_EQ(colvecDistance(p, DOT, I, ia, ia2, 3), 28.0);
    TD_EQ(colvecDistance(p, L1, I, ia, ia2, 3), 18.0);
    TD_EQ(colvecDistance(p, L1, I, i0, i345, 3), 7.0);
    /* bits: 0x0F^0x00 = 4, 0xFF^0x0F = 4, 0x01^0xFF = 7 differing bits */
    TD_EQ(colvecDistance(p, HAM, B, b1, b2, 24), 15.0);
    TD_EQ(colvecDistance(p, HAM, B, b1, b2, 16), 8.0);
    TD_EQ(colvecDistance(p, HAM, B, b1, b2, 12), 4.0);
    TD_EQ(colvecDistance(p, HAM, B, b1, b2, 4), 4.0);
    /* nDim=17: last byte 0xFE, only its bit 0 (0) counts */
    TD_EQ(colvecDistance(p, HAM, B, b1, b2, 17), 8.0);
    TD_EQ(colvecDistance(p, HAM, B, b1, b2, 18), 9.0);
    TD_EQ(colvecDistance(p, HAM, B, b1, b1, 24), 0.0);
  }
}
END_TEST

/*
** Runs colvecKernelsBest() in a forked child with COLVEC_KERNELS set to
** zEnv (unset when NULL) and returns the name it chose, in zOut (nOut
** bytes). The child is needed because the choice is cached per process.
*/
#if defined(_WIN32)
static void tdBestInChild(const char *zEnv, char *zOut, int nOut) {
  /* No fork: run this program again with "--best", which exits with
  ** 10 + the index of the set it chose (tdBestMain) */
  intptr_t iExit;
  ck_assert_int_eq(_putenv_s("COLVEC_KERNELS", zEnv ? zEnv : ""), 0);
  iExit = _spawnl(_P_WAIT, tdzArgv0, tdzArgv0, "--best", (char *)NULL);
  ck_assert_int_eq(_putenv_s("COLVEC_KERNELS", ""), 0);
  ck_assert_int_ge(iExit, 10);
  ck_assert_int_lt(iExit, 14);
  snprintf(zOut, (size_t)nOut, "%s", tdazKernel[iExit - 10]);
}

/*
** The child of tdBestInChild: exits with 10 + the index of the set
** colvecKernelsBest() chose, 2 when the choice is not cached, 3 when its
** name is unknown.
*/
static int tdBestMain(void) {
  const ColvecKernels *p = colvecKernelsBest();
  int i;
  if (p != colvecKernelsBest()) return 2; /* must be cached */
  for (i = 0; i < 4; i++) {
    if (strcmp(p->zName, tdazKernel[i]) == 0) return 10 + i;
  }
  return 3;
}
#else
static void tdBestInChild(const char *zEnv, char *zOut, int nOut) {
  int aPipe[2], st = 0;
  ssize_t nRead;
  pid_t pid;
  ck_assert_int_eq(pipe(aPipe), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    const ColvecKernels *p;
    close(aPipe[0]);
    if (zEnv)
      setenv("COLVEC_KERNELS", zEnv, 1);
    else
      unsetenv("COLVEC_KERNELS");
    p = colvecKernelsBest();
    if (p != colvecKernelsBest()) _exit(2); /* must be cached */
    if (write(aPipe[1], p->zName, strlen(p->zName)) < 0) _exit(3);
    _exit(0);
  }
  close(aPipe[1]);
  nRead = read(aPipe[0], zOut, (size_t)nOut - 1);
  close(aPipe[0]);
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ck_assert_int_gt(nRead, 0);
  zOut[nRead] = 0;
}
#endif

/*
** COLVEC_KERNELS forces a set; unset picks the fastest available; an
** unavailable or unknown name falls back to scalar. colvecKernelsAvailable()
** lists exactly the usable sets.
*/
START_TEST(test_dispatch) {
  const char *zAvail = colvecKernelsAvailable();
  const char *zFastest = colvecKernelsAvx512() ? "avx512"
                         : colvecKernelsAvx2() ? "avx2"
                         : colvecKernelsNeon() ? "neon"
                                               : "scalar";
  const char *const *azName = tdazKernel;
  const ColvecKernels *apGet[4];
  char zGot[32], zList[64] = "";
  int i;
  apGet[0] = colvecKernelsScalar();
  apGet[1] = colvecKernelsAvx2();
  apGet[2] = colvecKernelsAvx512();
  apGet[3] = colvecKernelsNeon();
  for (i = 0; i < 4; i++) {
    if (apGet[i] == 0) continue;
    ck_assert_str_eq(apGet[i]->zName, azName[i]);
    if (zList[0]) strcat(zList, ",");
    strcat(zList, azName[i]);
  }
  ck_assert_str_eq(zAvail, zList);
  tdBestInChild(0, zGot, sizeof(zGot));
  ck_assert_str_eq(zGot, zFastest);
  tdBestInChild("", zGot, sizeof(zGot));
  ck_assert_str_eq(zGot, zFastest);
  for (i = 0; i < 4; i++) {
    tdBestInChild(azName[i], zGot, sizeof(zGot));
    ck_assert_str_eq(zGot, apGet[i] ? azName[i] : "scalar");
  }
  tdBestInChild("bogus", zGot, sizeof(zGot));
  ck_assert_str_eq(zGot, "scalar");
  printf("check_distance: kernel sets available here: %s\n", zAvail);
}
END_TEST

/* Builds the suite. */
static Suite *tdSuite(void) {
  Suite *s = suite_create("distance");
  TCase *tc = tcase_create("kernels");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_scalar_reference);
  tcase_add_test(tc, test_simd_f32);
  tcase_add_test(tc, test_simd_int);
  tcase_add_test(tc, test_int8_extremes);
  tcase_add_test(tc, test_batch);
  tcase_add_test(tc, test_metrics);
  tcase_add_test(tc, test_dispatch);
  suite_add_tcase(s, tc);
  return s;
}

/*
** Runs the suite; exit status 0 when every test passed. On Windows,
** "--best" runs the child of tdBestInChild instead.
*/
int main(int argc, char **argv) {
  SRunner *sr;
  int nFail;
  tdzArgv0 = argv[0];
#if defined(_WIN32)
  if (argc > 1 && strcmp(argv[1], "--best") == 0) return tdBestMain();
#else
  (void)argc;
#endif
  sr = srunner_create(tdSuite());
  srunner_run_all(sr, CK_NORMAL);
  nFail = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nFail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
