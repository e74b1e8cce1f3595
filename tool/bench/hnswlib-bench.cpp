/*
** hnswlib-bench — native hnswlib baseline for colvec-bench.
**
** Builds hnswlib::HierarchicalNSW<float> (Debian's libhnswlib-dev headers)
** on the same dataset as colvec-bench (tool/bench/bench_data.c, same options, same
** ground-truth cache), one thread, saves the index under the work folder
** (its size is the "disk" figure), reloads it (the time to load it and
** answer the first query is first_ms), then sweeps ef and prints the same
** TSV columns as colvec-bench.
**
** Build: gcc -O2 -std=c99 -D_GNU_SOURCE -c tool/bench/bench_data.c -o bench_data.o
**        g++ -O2 -march=native -std=c++17 tool/bench/hnswlib-bench.cpp bench_data.o
**            -lz -lpthread -o hnswlib-bench
*/
#include "bench_data.h"

#include <hnswlib/hnswlib.h>
#include <sys/stat.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

/* Command-line settings apart from the dataset. */
struct BenchHnswOpts {
  int nM = 16;               /* M: links per node */
  int nEfConstruction = 200; /* ef_construction */
  int nK = 10;               /* neighbours per query */
  int nWarm = 20;            /* untimed warm-up queries per ef */
  int nRun = 1;              /* timed passes per ef; fastest kept */
  int nThread = 1;           /* build threads (queries are one thread) */
  bool bReuse = false;       /* reuse a saved index and its .load record */
  std::vector<int> aEf;      /* ef values to sweep */
  const char *zTsv = 0;      /* TSV file to append to, or NULL */
  const char *zMd = 0;       /* Markdown file to append to, or NULL */
};

/* What hnswQueryOne needs: the index and the query vectors. */
struct BenchHnswCtx {
  hnswlib::HierarchicalNSW<float> *pIndex; /* index being timed */
  const BenchData *pData;                  /* query vectors */
};

/*
** BenchQueryFn of hnswlib: answers query iQuery of the BenchHnswCtx pCtx,
** storing up to nK zero-based row numbers in aId. Returns how many.
*/
static int hnswQueryOne(void *pCtx, int iQuery, int64_t *aId, int nK) {
  BenchHnswCtx *p = (BenchHnswCtx *)pCtx;
  auto q = p->pIndex->searchKnn(
      p->pData->aQuery + (int64_t)iQuery * p->pData->nDim, (size_t)nK);
  int n = 0;
  for (; !q.empty() && n < nK; q.pop())
    aId[n++] = (int64_t)q.top().second;
  return n;
}

/* Prints the usage text and exits with status 2. */
static void hnswUsage() {
  fprintf(stderr,
          "usage: hnswlib-bench [--m 16] [--ef-construction 200] [--k 10]\n"
          "  [--threads N (build)] [--reuse 1 (keep a saved index)]\n"
          "  [--ef LIST] [--warmup N] [--runs N] [--tsv FILE] [--md FILE]\n%s",
          benchSpecUsage());
  exit(2);
}

/* Parses argv into *pOpts and *pSpec; exits with usage on any error. */
static void hnswParseArgs(int argc, char **argv, BenchHnswOpts *pOpts,
                          BenchSpec *pSpec) {
  benchSpecInit(pSpec);
  for (int i = 1; i < argc; i++) {
    int rc = benchSpecParseArg(pSpec, argc, argv, &i);
    if (rc < 0) hnswUsage();
    if (rc > 0) continue;
    const char *z = argv[i];
    if (i + 1 >= argc) hnswUsage();
    const char *zVal = argv[++i];
    if (strcmp(z, "--m") == 0)
      pOpts->nM = atoi(zVal);
    else if (strcmp(z, "--ef-construction") == 0) {
      pOpts->nEfConstruction = atoi(zVal);
    } else if (strcmp(z, "--k") == 0)
      pOpts->nK = atoi(zVal);
    else if (strcmp(z, "--warmup") == 0)
      pOpts->nWarm = atoi(zVal);
    else if (strcmp(z, "--runs") == 0)
      pOpts->nRun = atoi(zVal);
    else if (strcmp(z, "--threads") == 0)
      pOpts->nThread = atoi(zVal);
    else if (strcmp(z, "--reuse") == 0)
      pOpts->bReuse = atoi(zVal) != 0;
    else if (strcmp(z, "--tsv") == 0)
      pOpts->zTsv = zVal;
    else if (strcmp(z, "--md") == 0)
      pOpts->zMd = zVal;
    else if (strcmp(z, "--ef") == 0) {
      for (const char *p = zVal; *p;) {
        char *zEnd;
        long v = strtol(p, &zEnd, 10);
        if (zEnd == p || v <= 0) hnswUsage();
        pOpts->aEf.push_back((int)v);
        p = *zEnd == ',' ? zEnd + 1 : zEnd;
      }
    } else
      hnswUsage();
  }
  if (pOpts->aEf.empty()) pOpts->aEf.push_back(10);
  if (pOpts->nK <= 0 || pOpts->nRun <= 0 || pOpts->nM <= 1 ||
      pOpts->nThread <= 0 ||
      pOpts->nEfConstruction <= 0) {
    hnswUsage();
  }
  if (pSpec->eMetric == BENCH_METRIC_COSINE) {
    fprintf(stderr, "hnswlib-bench: only l2 and dot\n");
    exit(2);
  }
}

/*
** Loads the dataset and ground truth, builds, saves and reloads the index,
** sweeps ef. Returns the exit status: 0, 1 on error (hnswlib's exceptions
** are caught by main), 2 on usage.
*/
static int hnswMain(int argc, char **argv) {
  BenchHnswOpts opts;
  BenchSpec spec;
  BenchData data;
  BenchTruth truth;
  BenchResult res;
  char zErr[512];
  hnswParseArgs(argc, argv, &opts, &spec);
  mkdir(spec.zWork, 0777);
  if (benchDataLoad(&spec, 1, &data, zErr, sizeof(zErr)) ||
      benchGroundTruth(&spec, &data, &truth, zErr, sizeof(zErr))) {
    fprintf(stderr, "hnswlib-bench: %s\n", zErr);
    return 1;
  }
  hnswlib::SpaceInterface<float> *pSpace;
  if (spec.eMetric == BENCH_METRIC_DOT) {
    pSpace = new hnswlib::InnerProductSpace(data.nDim);
  } else {
    pSpace = new hnswlib::L2Space(data.nDim);
  }

  std::string zPath = std::string(spec.zWork) + "/hnswlib-M" +
                      std::to_string(opts.nM) + "-efc" +
                      std::to_string(opts.nEfConstruction) + "-" + data.zKey +
                      "-" + benchMetricName(spec.eMetric) + ".bin";
  std::string zLoadPath = zPath + ".load";
  double rBuild = 0, rLoadRss = 0;
  FILE *pLoad = opts.bReuse ? fopen(zLoadPath.c_str(), "r") : 0;
  if (pLoad) {
    /* --reuse 1: the saved index and its build figures. */
    int nOk = fscanf(pLoad, "%lf %lf", &rBuild, &rLoadRss);
    fclose(pLoad);
    if (nOk != 2) pLoad = 0;
    else fprintf(stderr, "hnswlib: reusing %s\n", zPath.c_str());
  }
  if (pLoad == 0) {
    /* Build: nThread threads take rows from a shared counter (hnswlib's
    ** addPoint is thread-safe, as its Python binding uses it). */
    double t0 = benchNow();
    auto *pIndex = new hnswlib::HierarchicalNSW<float>(
        pSpace, data.nBase, opts.nM, opts.nEfConstruction, 100);
    std::atomic<int> iNext(0);
    auto xWork = [&]() {
      for (int i; (i = iNext++) < data.nBase;) {
        pIndex->addPoint(data.aBase + (int64_t)i * data.nDim, (size_t)i);
        if (opts.nThread == 1) benchProgress("build", i + 1, data.nBase);
      }
    };
    std::vector<std::thread> aThread;
    for (int i = 1; i < opts.nThread; i++) aThread.emplace_back(xWork);
    xWork();
    for (auto &t : aThread) t.join();
    rBuild = benchNow() - t0;
    fprintf(stderr, "hnswlib: built %d rows in %.2f s (%d threads)\n",
            data.nBase, rBuild, opts.nThread);
    pIndex->saveIndex(zPath);
    delete pIndex;
    rLoadRss = benchPeakRssMb();
    FILE *pOut = fopen(zLoadPath.c_str(), "w");
    if (pOut) {
      fprintf(pOut, "%.6f %.3f\n", rBuild, rLoadRss);
      fclose(pOut);
    }
  }
  int nBase = data.nBase;
  free(data.aBase);
  data.aBase = 0;

  memset(&res, 0, sizeof(res));
  snprintf(res.zEngine, sizeof(res.zEngine), "hnswlib");
  snprintf(res.zConfig, sizeof(res.zConfig), "M=%d ef_construction=%d", opts.nM,
           opts.nEfConstruction);
  snprintf(res.zDataset, sizeof(res.zDataset), "%s", data.zName);
  res.nBase = nBase;
  res.nDim = data.nDim;
  res.nQuery = data.nQuery;
  res.nK = opts.nK;
  res.rLoadSec = rBuild;
  res.rLoadRate = rBuild > 0 ? nBase / rBuild : 0;
  res.nDiskBytes = benchPathBytes(zPath.c_str());
  res.rLoadRssMb = rLoadRss;

  /* Reload and answer the first query: the cold-start figure. */
  double t0 = benchNow();
  auto *pIndex = new hnswlib::HierarchicalNSW<float>(pSpace, zPath);
  pIndex->setEf((size_t)opts.aEf[0]);
  pIndex->searchKnn(data.aQuery, (size_t)opts.nK);
  res.rFirstMs = (benchNow() - t0) * 1000.0;

  BenchHnswCtx ctx = {pIndex, &data};
  for (int iEf : opts.aEf) {
    pIndex->setEf((size_t)iEf);
    res.iEf = iEf;
    if (benchTimeQueries(hnswQueryOne, &ctx, data.nQuery, opts.nK, opts.nWarm,
                         opts.nRun, &truth, &res)) {
      return 1;
    }
    benchResultAppend(opts.zTsv, opts.zMd, &res);
  }
  delete pIndex;
  delete pSpace;
  benchTruthFree(&truth);
  benchDataFree(&data);
  return 0;
}

/*
** Entry point: runs hnswMain, turning an exception from hnswlib (cannot
** write or read the index file, out of memory) into a message and status 1.
*/
int main(int argc, char **argv) {
  try {
    return hnswMain(argc, argv);
  } catch (const std::exception &e) {
    fprintf(stderr, "hnswlib-bench: %s\n", e.what());
    return 1;
  }
}
