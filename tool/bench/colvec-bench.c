/*
** colvec-bench — one-thread benchmark driver for colvec and its peers.
**
** One engine per invocation (so peak RSS is the engine's own): it loads the
** extension (colvec, sqlite-vec's vec0 or vectorlite) with
** sqlite3_load_extension into a connection on a file database under the work
** folder, inserts the base vectors in one transaction, closes, reopens, and
** times the queries for every ef (and colvec oversampling) given, against
** exact ground truth. Each configuration is one TSV line on stdout, appended
** to --tsv and --md files when given.
**
** --phase load|query|all splits the run: `load` builds the database and
** records its load figures in <db>.load; `query` (a fresh process) reopens it,
** so its peak RSS is that of querying alone and its first_ms is the time from
** opening to the first answer. `all` (default) does both in one process.
** `path` prints the database path the other phases use, and exits.
**
** Build: gcc -O2 -std=c99 -D_GNU_SOURCE tool/bench/colvec-bench.c
** tool/bench/bench_data.c
**        $(pkg-config --cflags --libs sqlite3) -lz -lm -o colvec-bench
*/
#include "bench_data.h"

#include <ftw.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Most values accepted by the --ef and --oversampling lists. */
#define BENCH_MAX_SWEEP 32

/* The engines this driver knows. */
typedef enum BenchEngine {
  BENCH_ENGINE_COLVEC = 0,    /* colvec (this project) */
  BENCH_ENGINE_SQLITEVEC = 1, /* sqlite-vec vec0, brute force */
  BENCH_ENGINE_VECTORLITE = 2 /* vectorlite, hnswlib inside SQLite */
} BenchEngine;

/* Everything the command line sets, apart from the dataset. */
typedef struct BenchOpts BenchOpts;
struct BenchOpts {
  BenchEngine eEngine;      /* engine to measure */
  const char *zEngine;      /* its name as given */
  const char *zExt;         /* path of the extension's shared library */
  const char *zEntry;       /* entry point, NULL = SQLite's default rule */
  const char *zOptions;     /* colvec table options / vectorlite hnsw params */
  const char *zLabel;       /* config label for reports; NULL = zOptions */
  const char *zTsv;         /* TSV file to append to, or NULL */
  const char *zMd;          /* Markdown file to append to, or NULL */
  const char *zPhase;       /* "load", "query", "all" or "path" */
  int nK;                   /* k of every query */
  int aEf[BENCH_MAX_SWEEP]; /* ef values to sweep; 0 = engine default */
  int nEf;                  /* entries in aEf */
  double aOs[BENCH_MAX_SWEEP]; /* oversampling values (colvec); 0 = default */
  int nOs;                     /* entries in aOs */
  int iRescore;                /* colvec rescore constraint; -1 = not given */
  int nWarm;                   /* untimed warm-up queries per configuration */
  int nRun;   /* timed passes per configuration; fastest kept */
  int bEvict; /* drop the database's files from the page cache first */
  int bReuse; /* load phase: keep a database whose <db>.load exists */
};

/* Figures of a load, kept in <db>.load for a later query phase. */
typedef struct BenchLoad BenchLoad;
struct BenchLoad {
  int nBase;          /* rows loaded */
  double rSec;        /* load time, seconds */
  double rRssMb;      /* peak RSS of the loading process, MiB */
  int64_t nDiskBytes; /* bytes on disk after closing */
};

/* Prints the usage text to stderr and exits with status 2. */
static void benchUsage(void) {
  fprintf(stderr,
          "usage: colvec-bench --engine colvec|sqlite-vec|vectorlite --ext "
          "PATH [options]\n"
          "  --options STR      colvec table options (e.g. 'quantize=bit m=16'"
          ")\n"
          "                     or vectorlite hnsw params (default "
          "'ef_construction=200, M=16')\n"
          "  --label STR        config name in reports (default: options)\n"
          "  --entry NAME       extension entry point\n"
          "  --k K              neighbours per query (default 10)\n"
          "  --ef LIST          comma-separated ef values to sweep\n"
          "  --oversampling LIST  colvec oversampling values to sweep\n"
          "  --rescore 0|1      colvec rescore constraint\n"
          "  --warmup N         untimed queries per configuration (default "
          "20)\n"
          "  --runs N           timed passes per configuration, fastest kept"
          " (default 1)\n"
          "  --phase load|query|all|path   (default all; path: print the\n"
          "                     database path and exit)\n"
          "  --reuse            load phase: keep an existing database "
          "(<db>.load)\n"
          "  --evict            before the query phase, drop the database"
          " and\n"
          "                     its side files from the page cache (cold "
          "start)\n"
          "  --tsv FILE --md FILE     append results to these files\n%s",
          benchSpecUsage());
  exit(2);
}

/*
** Parses the comma-separated list z into aInt (ints, when aDbl is NULL) or
** aDbl, at most BENCH_MAX_SWEEP values. Returns the count; exits on a bad
** list.
*/
static int benchParseList(const char *z, int *aInt, double *aDbl) {
  int n = 0;
  while (*z) {
    char *zEnd;
    double r = strtod(z, &zEnd);
    if (zEnd == z || n >= BENCH_MAX_SWEEP || r < 0) {
      fprintf(stderr, "bad list: %s\n", z);
      exit(2);
    }
    if (aDbl)
      aDbl[n] = r;
    else
      aInt[n] = (int)r;
    n++;
    z = *zEnd == ',' ? zEnd + 1 : zEnd;
  }
  return n;
}

/* Parses argv into *pOpts and *pSpec; exits with usage on any error. */
static void benchParseArgs(int argc, char **argv, BenchOpts *pOpts,
                           BenchSpec *pSpec) {
  int i;
  memset(pOpts, 0, sizeof(*pOpts));
  pOpts->nK = 10;
  pOpts->nEf = 1;
  pOpts->nOs = 1;
  pOpts->iRescore = -1;
  pOpts->nWarm = 20;
  pOpts->nRun = 1;
  pOpts->zPhase = "all";
  pOpts->zEngine = "";
  benchSpecInit(pSpec);
  for (i = 1; i < argc; i++) {
    const char *z = argv[i];
    int rc = benchSpecParseArg(pSpec, argc, argv, &i);
    if (rc < 0) benchUsage();
    if (rc > 0) continue;
    if (strcmp(z, "--reuse") == 0) {
      pOpts->bReuse = 1;
      continue;
    }
    if (strcmp(z, "--evict") == 0) {
      pOpts->bEvict = 1;
      continue;
    }
    if (strcmp(z, "--help") == 0 || strcmp(z, "-h") == 0 || i + 1 >= argc) {
      benchUsage();
    }
    if (strcmp(z, "--engine") == 0)
      pOpts->zEngine = argv[++i];
    else if (strcmp(z, "--ext") == 0)
      pOpts->zExt = argv[++i];
    else if (strcmp(z, "--entry") == 0)
      pOpts->zEntry = argv[++i];
    else if (strcmp(z, "--options") == 0)
      pOpts->zOptions = argv[++i];
    else if (strcmp(z, "--label") == 0)
      pOpts->zLabel = argv[++i];
    else if (strcmp(z, "--tsv") == 0)
      pOpts->zTsv = argv[++i];
    else if (strcmp(z, "--md") == 0)
      pOpts->zMd = argv[++i];
    else if (strcmp(z, "--phase") == 0)
      pOpts->zPhase = argv[++i];
    else if (strcmp(z, "--k") == 0)
      pOpts->nK = atoi(argv[++i]);
    else if (strcmp(z, "--warmup") == 0)
      pOpts->nWarm = atoi(argv[++i]);
    else if (strcmp(z, "--runs") == 0)
      pOpts->nRun = atoi(argv[++i]);
    else if (strcmp(z, "--rescore") == 0)
      pOpts->iRescore = atoi(argv[++i]);
    else if (strcmp(z, "--ef") == 0) {
      pOpts->nEf = benchParseList(argv[++i], pOpts->aEf, 0);
    } else if (strcmp(z, "--oversampling") == 0) {
      pOpts->nOs = benchParseList(argv[++i], 0, pOpts->aOs);
    } else {
      fprintf(stderr, "unknown option %s\n", z);
      benchUsage();
    }
  }
  if (strcmp(pOpts->zEngine, "colvec") == 0) {
    pOpts->eEngine = BENCH_ENGINE_COLVEC;
  } else if (strcmp(pOpts->zEngine, "sqlite-vec") == 0) {
    pOpts->eEngine = BENCH_ENGINE_SQLITEVEC;
  } else if (strcmp(pOpts->zEngine, "vectorlite") == 0) {
    pOpts->eEngine = BENCH_ENGINE_VECTORLITE;
    if (pOpts->zOptions == 0) pOpts->zOptions = "ef_construction=200, M=16";
  } else {
    fprintf(stderr, "--engine must be colvec, sqlite-vec or vectorlite\n");
    benchUsage();
  }
  if (pOpts->zExt == 0 || pOpts->nK <= 0 || pOpts->nRun <= 0 ||
      pOpts->nEf == 0 || pOpts->nOs == 0 ||
      (strcmp(pOpts->zPhase, "load") != 0 &&
       strcmp(pOpts->zPhase, "query") != 0 &&
       strcmp(pOpts->zPhase, "all") != 0 &&
       strcmp(pOpts->zPhase, "path") != 0)) {
    benchUsage();
  }
  if (pOpts->eEngine == BENCH_ENGINE_SQLITEVEC) {
    pOpts->nEf = pOpts->nOs = 1; /* brute force: nothing to sweep */
    pOpts->aEf[0] = 0;
    pOpts->aOs[0] = 0;
  }
  if (pOpts->eEngine != BENCH_ENGINE_COLVEC) {
    pOpts->nOs = 1; /* oversampling is colvec's alone */
    pOpts->aOs[0] = 0;
  }
  if (pOpts->zOptions == 0) pOpts->zOptions = "";
  if (pOpts->zLabel == 0) {
    pOpts->zLabel = pOpts->zOptions[0]                         ? pOpts->zOptions
                    : pOpts->eEngine == BENCH_ENGINE_SQLITEVEC ? "brute-force"
                                                               : "default";
  }
}

/*
** Builds the database path <work>/<engine>-<label>-<dataset key>.db into
** zOut, every character of label and key that is not alphanumeric, '-',
** '.' or '=' made '_'.
*/
static void benchDbPath(const BenchOpts *pOpts, const BenchSpec *pSpec,
                        const BenchData *pData, char *zOut, int nOut) {
  int n = snprintf(zOut, (size_t)nOut, "%s/", pSpec->zWork);
  char *z;
  snprintf(zOut + n, (size_t)(nOut - n), "%s-%.80s-%s-%s.db", pOpts->zEngine,
           pOpts->zLabel, pData->zKey, benchMetricName(pSpec->eMetric));
  for (z = zOut + n; *z; z++) {
    if (!((*z >= 'a' && *z <= 'z') || (*z >= 'A' && *z <= 'Z') ||
          (*z >= '0' && *z <= '9') || *z == '-' || *z == '.' || *z == '=')) {
      *z = '_';
    }
  }
}

/* nftw callback of benchRemoveTree: removes one file or emptied folder. */
static int benchRemoveOne(const char *zPath, const struct stat *pSt, int eType,
                          struct FTW *pFtw) {
  (void)pSt;
  (void)eType;
  (void)pFtw;
  remove(zPath);
  return 0;
}

/* Removes zPath and, if it is a folder, everything under it; returns 0. */
static int64_t benchRemoveTree(const char *zPath) {
  nftw(zPath, benchRemoveOne, 16, FTW_DEPTH | FTW_PHYS);
  return 0;
}

/*
** What the engines keep of a database <db>: the file, its journals,
** colvec's <db>-colvec/ folder and vectorlite's <db>.hnsw index.
*/
static const char *const benchDataSuffix[] = {"",        "-journal", "-wal",
                                              "-colvec", ".hnsw",    0};

/* Calls x on <zDb><suffix> for each of azSuffix; returns the sum. */
static int64_t benchEachPath(const char *zDb, const char *const *azSuffix,
                             int64_t (*x)(const char *)) {
  char zPath[1100];
  int64_t n = 0;
  int i;
  for (i = 0; azSuffix[i]; i++) {
    snprintf(zPath, sizeof(zPath), "%s%s", zDb, azSuffix[i]);
    n += x(zPath);
  }
  return n;
}

/*
** Removes the database zDb and every file an engine keeps beside it (see
** benchDataSuffix), its shared-memory file and the <db>.load record.
*/
static void benchRemoveDb(const char *zDb) {
  static const char *const azMore[] = {"-shm", ".load", 0};
  benchEachPath(zDb, benchDataSuffix, benchRemoveTree);
  benchEachPath(zDb, azMore, benchRemoveTree);
}

/* Returns the bytes on disk of zDb and all the engines keep beside it. */
static int64_t benchDbBytes(const char *zDb) {
  return benchEachPath(zDb, benchDataSuffix, benchPathBytes);
}

/*
** Drops zDb and every side file of it from the page cache (see
** benchEvictPath) and prints how many bytes were advised.
*/
static void benchEvictDb(const char *zDb) {
  int64_t n = benchEachPath(zDb, benchDataSuffix, benchEvictPath);
  fprintf(stderr, "evicted %.1f MB from the page cache\n",
          (double)n / 1048576.0);
}

/*
** Opens zDb and loads the engine's extension into it. Returns the
** connection, or NULL after printing why (the connection is closed then).
*/
static sqlite3 *benchOpen(const BenchOpts *pOpts, const char *zDb) {
  sqlite3 *db = 0;
  char *zErr = 0;
  if (sqlite3_open(zDb, &db) != SQLITE_OK) {
    fprintf(stderr, "cannot open %s: %s\n", zDb, sqlite3_errmsg(db));
    sqlite3_close(db);
    return 0;
  }
  sqlite3_enable_load_extension(db, 1);
  if (sqlite3_load_extension(db, pOpts->zExt, pOpts->zEntry, &zErr) !=
      SQLITE_OK) {
    fprintf(stderr, "cannot load %s: %s\n", pOpts->zExt, zErr ? zErr : "?");
    sqlite3_free(zErr);
    sqlite3_close(db);
    return 0;
  }
  return db;
}

/* Runs zSql on db; prints the error and returns 1 on failure, else 0. */
static int benchExec(sqlite3 *db, const char *zSql) {
  char *zErr = 0;
  if (sqlite3_exec(db, zSql, 0, 0, &zErr) != SQLITE_OK) {
    fprintf(stderr, "%s\n  in: %s\n", zErr ? zErr : "?", zSql);
    sqlite3_free(zErr);
    return 1;
  }
  return 0;
}

/*
** Returns the CREATE VIRTUAL TABLE statement of the engine for nDim-wide
** vectors and nBase rows (sqlite3_mprintf'd: caller sqlite3_free()s), or
** NULL when the engine cannot do the metric.
*/
static char *benchCreateSql(const BenchOpts *pOpts, const BenchSpec *pSpec,
                            int nDim, int nBase, const char *zDb) {
  const char *zMetric = benchMetricName(pSpec->eMetric);
  switch (pOpts->eEngine) {
  case BENCH_ENGINE_COLVEC:
    return sqlite3_mprintf("CREATE VIRTUAL TABLE t USING colvec(embedding "
                           "float[%d] distance_metric=%s %s)",
                           nDim, zMetric, pOpts->zOptions);
  case BENCH_ENGINE_SQLITEVEC:
    if (pSpec->eMetric == BENCH_METRIC_DOT) return 0;
    return sqlite3_mprintf("CREATE VIRTUAL TABLE t USING vec0(embedding "
                           "float[%d] distance_metric=%s)",
                           nDim, zMetric);
  default:
    return sqlite3_mprintf(
        "CREATE VIRTUAL TABLE t USING vectorlite(embedding float32[%d] %s, "
        "hnsw(max_elements=%d, %s), '%q.hnsw')",
        nDim, pSpec->eMetric == BENCH_METRIC_DOT ? "ip" : zMetric, nBase,
        pOpts->zOptions, zDb);
  }
}

/*
** Creates the table in the fresh database zDb and inserts every base vector
** of pData (rowid = row number + 1, float32 BLOB) in one transaction, then
** closes the connection (vectorlite saves its index then) and fills *pLoad.
** Returns 0, or 1 after printing the error.
*/
static int benchLoad(const BenchOpts *pOpts, const BenchSpec *pSpec,
                     const BenchData *pData, const char *zDb,
                     BenchLoad *pLoad) {
  sqlite3 *db;
  sqlite3_stmt *pIns = 0;
  char *zSql;
  double t0;
  int i, rc = 0;
  benchRemoveDb(zDb);
  db = benchOpen(pOpts, zDb);
  if (db == 0) return 1;
  zSql = benchCreateSql(pOpts, pSpec, pData->nDim, pData->nBase, zDb);
  if (zSql == 0) {
    fprintf(stderr, "%s cannot do metric %s\n", pOpts->zEngine,
            benchMetricName(pSpec->eMetric));
    sqlite3_close(db);
    return 1;
  }
  fprintf(stderr, "%s\n", zSql);
  t0 = benchNow();
  rc = benchExec(db, zSql) || benchExec(db, "BEGIN");
  sqlite3_free(zSql);
  if (rc == 0 &&
      sqlite3_prepare_v2(db, "INSERT INTO t(rowid, embedding) VALUES (?, ?)",
                         -1, &pIns, 0) != SQLITE_OK) {
    fprintf(stderr, "prepare insert: %s\n", sqlite3_errmsg(db));
    rc = 1;
  }
  for (i = 0; rc == 0 && i < pData->nBase; i++) {
    sqlite3_bind_int64(pIns, 1, (sqlite3_int64)i + 1);
    sqlite3_bind_blob(pIns, 2, pData->aBase + (int64_t)i * pData->nDim,
                      pData->nDim * (int)sizeof(float), SQLITE_STATIC);
    if (sqlite3_step(pIns) != SQLITE_DONE) {
      fprintf(stderr, "insert row %d: %s\n", i + 1, sqlite3_errmsg(db));
      rc = 1;
    }
    sqlite3_reset(pIns);
    benchProgress("load", i + 1, pData->nBase);
  }
  sqlite3_finalize(pIns);
  if (rc == 0) rc = benchExec(db, "COMMIT");
  if (sqlite3_close(db) != SQLITE_OK) {
    fprintf(stderr, "close: %s\n", sqlite3_errmsg(db));
    rc = 1;
  }
  pLoad->nBase = pData->nBase;
  pLoad->rSec = benchNow() - t0;
  pLoad->rRssMb = benchPeakRssMb();
  pLoad->nDiskBytes = benchDbBytes(zDb);
  if (rc) return rc;
  fprintf(stderr,
          "%s: loaded %d rows in %.2f s (%.0f rows/s), %.1f MB on "
          "disk\n",
          pOpts->zEngine, pData->nBase, pLoad->rSec,
          pData->nBase / (pLoad->rSec > 0 ? pLoad->rSec : 1),
          (double)pLoad->nDiskBytes / 1048576.0);
  return rc;
}

/* Writes *pLoad to <zDb>.load. Returns 0, or 1 after printing the error. */
static int benchLoadSave(const char *zDb, const BenchLoad *pLoad) {
  char zPath[1100];
  FILE *pOut;
  snprintf(zPath, sizeof(zPath), "%s.load", zDb);
  pOut = fopen(zPath, "w");
  if (pOut == 0) {
    fprintf(stderr, "cannot write %s\n", zPath);
    return 1;
  }
  fprintf(pOut, "%d %.6f %.3f %lld\n", pLoad->nBase, pLoad->rSec, pLoad->rRssMb,
          (long long)pLoad->nDiskBytes);
  fclose(pOut);
  return 0;
}

/* Reads <zDb>.load into *pLoad. Returns 0, or 1 after printing the error. */
static int benchLoadRead(const char *zDb, BenchLoad *pLoad) {
  char zPath[1100];
  long long nDisk = 0;
  FILE *pIn;
  int n;
  snprintf(zPath, sizeof(zPath), "%s.load", zDb);
  pIn = fopen(zPath, "r");
  if (pIn == 0) {
    fprintf(stderr, "no %s: run --phase load first\n", zPath);
    return 1;
  }
  n = fscanf(pIn, "%d %lf %lf %lld", &pLoad->nBase, &pLoad->rSec,
             &pLoad->rRssMb, &nDisk);
  fclose(pIn);
  pLoad->nDiskBytes = nDisk;
  if (n != 4) {
    fprintf(stderr, "%s: unreadable\n", zPath);
    return 1;
  }
  return 0;
}

/*
** Prepares the KNN query of the engine for one configuration (ef, os; 0 =
** leave to the engine). Parameters: ?1 query BLOB, ?2 k, ?3 ef, ?4
** oversampling, ?5 rescore. Returns the statement or NULL after printing.
*/
static sqlite3_stmt *benchPrepareQuery(const BenchOpts *pOpts, sqlite3 *db,
                                       int iEf, double rOs) {
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  if (pOpts->eEngine == BENCH_ENGINE_VECTORLITE) {
    zSql = sqlite3_mprintf("SELECT rowid, distance FROM t WHERE knn_search("
                           "embedding, knn_param(?1, ?2%s))",
                           iEf > 0 ? ", ?3" : "");
  } else {
    zSql = sqlite3_mprintf(
        "SELECT rowid, distance FROM t WHERE embedding "
        "MATCH ?1 AND k = ?2%s%s%s",
        iEf > 0 ? " AND ef = ?3" : "", rOs > 0 ? " AND oversampling = ?4" : "",
        pOpts->eEngine == BENCH_ENGINE_COLVEC && pOpts->iRescore >= 0
            ? " AND rescore = ?5"
            : "");
  }
  if (zSql == 0 || sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) != SQLITE_OK) {
    fprintf(stderr, "prepare %s: %s\n", zSql ? zSql : "?", sqlite3_errmsg(db));
    pStmt = 0;
  }
  sqlite3_free(zSql);
  if (pStmt) {
    sqlite3_bind_int(pStmt, 2, pOpts->nK);
    if (iEf > 0) sqlite3_bind_int(pStmt, 3, iEf);
    if (rOs > 0) sqlite3_bind_double(pStmt, 4, rOs);
    if (pOpts->iRescore >= 0 && pOpts->eEngine == BENCH_ENGINE_COLVEC) {
      sqlite3_bind_int(pStmt, 5, pOpts->iRescore);
    }
  }
  return pStmt;
}

/* What benchQueryOne needs: the prepared query and the query vectors. */
typedef struct BenchQueryCtx BenchQueryCtx;
struct BenchQueryCtx {
  sqlite3_stmt *pStmt;    /* KNN query of the configuration being timed */
  const BenchData *pData; /* query vectors */
};

/*
** BenchQueryFn of the SQL engines: runs query iQuery on the statement of
** pCtx (a BenchQueryCtx), storing up to nK zero-based row numbers (rowid-1)
** in aId. Returns the number of rows, or -1 after printing an error.
*/
static int benchQueryOne(void *pCtx, int iQuery, int64_t *aId, int nK) {
  BenchQueryCtx *p = (BenchQueryCtx *)pCtx;
  int n = 0, rc;
  sqlite3_bind_blob(p->pStmt, 1,
                    p->pData->aQuery + (int64_t)iQuery * p->pData->nDim,
                    p->pData->nDim * (int)sizeof(float), SQLITE_STATIC);
  while ((rc = sqlite3_step(p->pStmt)) == SQLITE_ROW) {
    if (n < nK) aId[n++] = sqlite3_column_int64(p->pStmt, 0) - 1;
  }
  sqlite3_reset(p->pStmt);
  if (rc != SQLITE_DONE) {
    fprintf(stderr, "query %d: %s\n", iQuery,
            sqlite3_errmsg(sqlite3_db_handle(p->pStmt)));
    return -1;
  }
  return n;
}

/*
** Reopens zDb, times open-to-first-answer, then times every configuration
** of the sweep with benchTimeQueries and reports each through
** benchResultAppend. pBase carries the load figures. Returns 0, or 1 after
** printing the error.
*/
static int benchQuery(const BenchOpts *pOpts, const BenchData *pData,
                      const BenchTruth *pTruth, const char *zDb,
                      BenchResult *pBase) {
  double t0, tOpen = 0, tPrep = 0;
  sqlite3 *db;
  int64_t *aId = (int64_t *)malloc(sizeof(int64_t) * (size_t)pOpts->nK);
  int iEf, iOs, rc = 0;
  BenchQueryCtx ctx;
  if (pOpts->bEvict) benchEvictDb(zDb);
  t0 = benchNow();
  db = benchOpen(pOpts, zDb);
  tOpen = benchNow();
  ctx.pData = pData;
  if (db == 0 || aId == 0) rc = 1;
  for (iEf = 0; rc == 0 && iEf < pOpts->nEf; iEf++) {
    for (iOs = 0; rc == 0 && iOs < pOpts->nOs; iOs++) {
      BenchResult res = *pBase;
      ctx.pStmt =
          benchPrepareQuery(pOpts, db, pOpts->aEf[iEf], pOpts->aOs[iOs]);
      if (ctx.pStmt == 0) {
        rc = 1;
        break;
      }
      if (pBase->rFirstMs < 0) {
        tPrep = benchNow();
        rc = benchQueryOne(&ctx, 0, aId, pOpts->nK) < 0;
        pBase->rFirstMs = (benchNow() - t0) * 1000.0;
        /* One grep-able line: open, prepare (xConnect), first answer. */
        fprintf(stderr,
                "first-query\t%s\tevict=%d\topen_ms=%.1f\tprepare_ms=%.1f"
                "\tanswer_ms=%.1f\ttotal_ms=%.1f\n",
                pOpts->zLabel, pOpts->bEvict, (tOpen - t0) * 1000.0,
                (tPrep - tOpen) * 1000.0,
                pBase->rFirstMs - (tPrep - t0) * 1000.0, pBase->rFirstMs);
      }
      if (rc == 0) {
        rc = benchTimeQueries(benchQueryOne, &ctx, pData->nQuery, pOpts->nK,
                              pOpts->nWarm, pOpts->nRun, pTruth, &res);
      }
      sqlite3_finalize(ctx.pStmt);
      if (rc) break;
      res.iEf = pOpts->aEf[iEf];
      res.rOversample = pOpts->aOs[iOs];
      res.rFirstMs = pBase->rFirstMs;
      benchResultAppend(pOpts->zTsv, pOpts->zMd, &res);
    }
  }
  free(aId);
  sqlite3_close(db);
  return rc;
}

/*
** Entry point: parses the options, loads the dataset and its ground truth,
** then loads and/or queries the engine as --phase says. Exit status 0 on
** success, 1 on any failure, 2 on a usage error.
*/
int main(int argc, char **argv) {
  BenchOpts opts;
  BenchSpec spec;
  BenchData data;
  BenchTruth truth;
  BenchLoad load;
  BenchResult res;
  char zErr[512];
  char zDb[1024];
  int bLoad, bQuery, rc;
  benchParseArgs(argc, argv, &opts, &spec);
  bLoad = strcmp(opts.zPhase, "query") != 0;
  bQuery = strcmp(opts.zPhase, "load") != 0;
  mkdir(spec.zWork, 0777);
  if (strcmp(opts.zPhase, "path") == 0) {
    /* --phase path: print the database path and stop */
    if (benchDataLoad(&spec, 0, &data, zErr, sizeof(zErr))) {
      fprintf(stderr, "colvec-bench: %s\n", zErr);
      benchDataFree(&data);
      return 1;
    }
    benchDbPath(&opts, &spec, &data, zDb, sizeof(zDb));
    printf("%s\n", zDb);
    benchDataFree(&data);
    return 0;
  }
  if (benchDataLoad(&spec, bLoad, &data, zErr, sizeof(zErr)) ||
      benchGroundTruth(&spec, &data, &truth, zErr, sizeof(zErr))) {
    fprintf(stderr, "colvec-bench: %s\n", zErr);
    benchDataFree(&data);
    return 1;
  }
  benchDbPath(&opts, &spec, &data, zDb, sizeof(zDb));
  memset(&load, 0, sizeof(load));
  if (bLoad && opts.bReuse && access(zDb, F_OK) == 0) {
    FILE *pOld;
    char zLoad[1100];
    snprintf(zLoad, sizeof(zLoad), "%s.load", zDb);
    pOld = fopen(zLoad, "r");
    if (pOld) {
      fclose(pOld);
      fprintf(stderr, "reusing %s\n", zDb);
      bLoad = 0;
    }
  }
  if (bLoad) {
    rc =
        benchLoad(&opts, &spec, &data, zDb, &load) || benchLoadSave(zDb, &load);
    free(data.aBase); /* the query phase does not need the base */
    data.aBase = 0;
  } else {
    rc = benchLoadRead(zDb, &load);
  }
  if (rc == 0 && bQuery) {
    memset(&res, 0, sizeof(res));
    snprintf(res.zEngine, sizeof(res.zEngine), "%s", opts.zEngine);
    snprintf(res.zConfig, sizeof(res.zConfig), "%s", opts.zLabel);
    snprintf(res.zDataset, sizeof(res.zDataset), "%s", data.zName);
    res.nBase = load.nBase;
    res.nDim = data.nDim;
    res.nQuery = data.nQuery;
    res.nK = opts.nK;
    res.rLoadSec = load.rSec;
    res.rLoadRate = load.rSec > 0 ? load.nBase / load.rSec : 0;
    res.nDiskBytes = load.nDiskBytes;
    res.rLoadRssMb = load.rRssMb;
    res.rFirstMs = -1;
    rc = benchQuery(&opts, &data, &truth, zDb, &res);
  }
  benchTruthFree(&truth);
  benchDataFree(&data);
  return rc ? 1 : 0;
}
