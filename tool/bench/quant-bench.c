/*
** quant-bench.c — per-code cost of the quantized-distance kernels, each
** kernel the CPU runs against the others on the same codes (in cache), and
** the cost of preparing a bit query. Numbers in doc/BENCHMARKS.md.
**
** Build (from the top of the tree, after a build in build/):
**   gcc -O2 -Iext -Ibuild tool/bench/quant-bench.c build/.libs/libcolvec_core.a
*\
**       -lm -lpthread -o quant-bench
** usage: quant-bench [DIM]   (default 784; 2,000 random codes per type)
*/
#include "colvec_quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Codes per type, and passes over them per timing. */
#define QB_CODES 2000
#define QB_PASSES 300

/* Microseconds on the monotonic clock. */
static double qbMicros(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

/* Name of quantizer type t. */
static const char *qbTypeName(int t) {
  return t == COLVEC_QUANT_INT8   ? "int8"
         : t == COLVEC_QUANT_INT4 ? "int4"
                                  : "bit";
}

/*
** Times every kernel ceiling (best, AVX2, scalar) of one quantizer type on
** nDim-dimensional codes of aVec, three times each, interleaved.
*/
static void qbType(int t, const float *aVec, int nDim) {
  static const int aeKernel[] = {COLVEC_QUANT_KERNEL_BEST,
                                 COLVEC_QUANT_KERNEL_AVX2,
                                 COLVEC_QUANT_KERNEL_SCALAR};
  ColvecQuant *p = NULL;
  ColvecQuantQuery q = {0};
  uint8_t *aCode;
  int nCode, i, iPass, iRep, k;
  if (colvecQuantTrain(t, COLVEC_METRIC_L2, nDim, aVec, QB_CODES, nDim, &p) !=
      COLVEC_OK) {
    fprintf(stderr, "quant-bench: training failed\n");
    exit(1);
  }
  nCode = colvecQuantCodeBytes(p);
  aCode = malloc((size_t)nCode * QB_CODES);
  if (aCode == NULL ||
      colvecQuantEncodeBatch(p, aVec, QB_CODES, nDim, aCode) != COLVEC_OK ||
      colvecQuantQueryPrepare(p, aVec, &q) != COLVEC_OK) {
    fprintf(stderr, "quant-bench: encoding failed\n");
    exit(1);
  }
  for (iRep = 0; iRep < 3; iRep++) {
    for (k = 0; k < 3; k++) {
      const char *zKernel = colvecQuantQueryKernel(&q, aeKernel[k]);
      volatile float rSink = 0.0f;
      double t0 = qbMicros();
      int nPass = aeKernel[k] == COLVEC_QUANT_KERNEL_SCALAR ? QB_PASSES / 10
                                                            : QB_PASSES;
      for (iPass = 0; iPass < nPass; iPass++) {
        for (i = 0; i < QB_CODES; i++) {
          rSink += colvecQuantDistance(&q, aCode + (size_t)i * nCode);
        }
      }
      printf("%-4s %4d-d  %-6s %7.1f ns/code\n", qbTypeName(t), nDim, zKernel,
             (qbMicros() - t0) * 1e3 / ((double)nPass * QB_CODES));
    }
  }
  if (t == COLVEC_QUANT_BIT) {
    double t0 = qbMicros();
    for (i = 0; i < QB_CODES; i++) {
      colvecQuantQueryPrepare(p, aVec + (size_t)i * nDim, &q);
    }
    printf("bit  %4d-d  query preparation %.2f us\n", nDim,
           (qbMicros() - t0) / QB_CODES);
  }
  colvecQuantQueryClear(&q);
  colvecQuantFree(p);
  free(aCode);
}

/* Runs every quantizer type on seeded uniform vectors. */
int main(int argc, char **argv) {
  int nDim = argc > 1 ? atoi(argv[1]) : 784, i, t;
  float *aVec;
  if (nDim < 1 || nDim > 65536) {
    fprintf(stderr, "usage: quant-bench [DIM]\n");
    return 2;
  }
  aVec = malloc(sizeof(float) * (size_t)nDim * QB_CODES);
  if (aVec == NULL) return 1;
  srand(1);
  for (i = 0; i < nDim * QB_CODES; i++) {
    aVec[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  }
  for (t = COLVEC_QUANT_INT8; t <= COLVEC_QUANT_BIT; t++)
    qbType(t, aVec, nDim);
  free(aVec);
  return 0;
}
