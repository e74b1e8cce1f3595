/*
** bench_data.h — datasets, exact ground truth and measurement helpers shared
** by the benchmark drivers (tool/bench/colvec-bench.c,
** tool/bench/hnswlib-bench.cpp).
**
** The tools are not part of the extension: they use libc malloc and may link
** zlib and libsqlite3. This header is plain C and usable from C++.
**
** A dataset is described by a BenchSpec (filled from the command line by
** benchSpecParseArg), materialised by benchDataLoad into a BenchData (base
** vectors, query vectors, both float32 row-major), and given exact top-100
** neighbours by benchGroundTruth, which caches them in a file under the
** work directory keyed by the dataset's identity and the metric.
*/
#ifndef BENCH_DATA_H
#define BENCH_DATA_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct BenchSpec BenchSpec;
typedef struct BenchData BenchData;
typedef struct BenchTruth BenchTruth;
typedef struct BenchResult BenchResult;

/* Number of exact neighbours kept per query in the ground truth. */
#define BENCH_GT_K 100

/* Metrics of the ground truth (and of the engines' tables). */
typedef enum BenchMetric {
  BENCH_METRIC_L2 = 0,     /* Euclidean distance */
  BENCH_METRIC_COSINE = 1, /* 1 - cos(a,b) */
  BENCH_METRIC_DOT = 2     /* -(a.b) */
} BenchMetric;

/* Kinds of dataset. */
typedef enum BenchSource {
  BENCH_SRC_FMNIST = 0,    /* Fashion-MNIST IDX files (gzipped) */
  BENCH_SRC_SYNTHETIC = 1, /* seeded clustered Gaussian */
  BENCH_SRC_FILE = 2       /* .fvecs / .npy / raw float32 files */
} BenchSource;

/*************************************************************************
** Interface to the dataset code in bench_data.c
*/

/* What to load; filled by benchSpecInit + benchSpecParseArg. */
struct BenchSpec {
  BenchSource eSource; /* kind of dataset */
  const char *zDir;    /* Fashion-MNIST folder */
  const char *zBase;   /* base vector file (BENCH_SRC_FILE) */
  const char *zQuery;  /* query vector file (BENCH_SRC_FILE) */
  const char *zWork;   /* work folder: databases and ground-truth cache */
  int nBase;           /* base vectors wanted; 0 = all the source has */
  int nQuery;          /* query vectors wanted; 0 = all the source has */
  int nDim;            /* dimensions (synthetic, raw float32 files) */
  int nCluster;        /* synthetic: number of Gaussian clusters */
  uint64_t iSeed;      /* synthetic: PRNG seed */
  BenchMetric eMetric; /* metric of the ground truth */
};

/* A loaded dataset. Free with benchDataFree. */
struct BenchData {
  int nDim;       /* dimensions of every vector */
  int nBase;      /* rows in aBase (0 when loaded without base) */
  int nQuery;     /* rows in aQuery */
  float *aBase;   /* nBase*nDim floats, row-major; malloc'd */
  float *aQuery;  /* nQuery*nDim floats, row-major; malloc'd */
  char zName[64]; /* short dataset name for reports, e.g. "fashion-mnist" */
  char zKey[256]; /* identity of the data (name, sizes, seed, file stamp) */
};

/* Exact neighbours: BENCH_GT_K per query, ascending distance. */
struct BenchTruth {
  int nQuery;   /* queries covered */
  int nK;       /* neighbours per query (BENCH_GT_K or fewer if nBase<100) */
  int32_t *aId; /* nQuery*nK zero-based base row numbers; malloc'd */
  float *aDist; /* nQuery*nK distances matching aId; malloc'd */
};

void benchSpecInit(BenchSpec *p);
int benchSpecParseArg(BenchSpec *p, int argc, char **argv, int *pi);
const char *benchSpecUsage(void);
int benchMetricParse(const char *z, BenchMetric *peMetric);
const char *benchMetricName(BenchMetric eMetric);

int benchDataLoad(const BenchSpec *p, int bWithBase, BenchData *pData,
                  char *zErr, int nErr);
void benchDataFree(BenchData *pData);

int benchGroundTruth(const BenchSpec *pSpec, BenchData *pData,
                     BenchTruth *pTruth, char *zErr, int nErr);
void benchTruthFree(BenchTruth *pTruth);
float benchDistance(BenchMetric eMetric, const float *a, const float *b,
                    int nDim);

/*************************************************************************
** Interface to the measurement helpers in bench_data.c
*/

/* One measured configuration: one TSV line / one Markdown table row. */
struct BenchResult {
  char zEngine[32];   /* colvec, sqlite-vec, vectorlite or hnswlib */
  char zConfig[128];  /* table options or build parameters, no tabs */
  char zDataset[64];  /* dataset name */
  int nBase;          /* rows indexed */
  int nDim;           /* dimensions */
  int nQuery;         /* queries timed */
  int nK;             /* k asked for */
  int iEf;            /* ef used for search; 0 when not applicable */
  double rOversample; /* colvec oversampling; 0 when not applicable */
  double rLoadSec;    /* seconds to load (insert + build + commit) */
  double rLoadRate;   /* rows per second during the load */
  int64_t nDiskBytes; /* bytes on disk after the load; -1 unknown */
  double rLoadRssMb;  /* peak RSS of the loading process, MiB; -1 unknown */
  double rQueryRssMb; /* peak RSS of the querying process, MiB */
  double rFirstMs;    /* open to first answer, ms; -1 when not measured */
  double rQps;        /* queries per second, one thread */
  double rP50Ms;      /* median latency, ms */
  double rP99Ms;      /* 99th percentile latency, ms */
  double rRecall;     /* mean recall@k against the exact ground truth */
};

/*
** Callback answering query iQuery: stores up to nK zero-based base row
** numbers in aId and returns how many, or -1 on error (already reported).
*/
typedef int (*BenchQueryFn)(void *pCtx, int iQuery, int64_t *aId, int nK);

double benchNow(void);
int benchTimeQueries(BenchQueryFn xQuery, void *pCtx, int nQuery, int nK,
                     int nWarm, int nRun, const BenchTruth *pTruth,
                     BenchResult *pRes);
double benchPeakRssMb(void);
double benchPercentile(double *aVal, int nVal, double rPct);
double benchRecall(const BenchTruth *pTruth, int iQuery, const int64_t *aId,
                   int nId, int nK);
void benchResultTsv(FILE *pOut, const BenchResult *p, int bHeader);
void benchResultMarkdown(FILE *pOut, const BenchResult *p, int bHeader);
int benchResultAppend(const char *zTsv, const char *zMd, const BenchResult *p);
void benchProgress(const char *zWhat, int64_t iDone, int64_t nTotal);
int64_t benchPathBytes(const char *zPath);
int64_t benchEvictPath(const char *zPath);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_DATA_H */
