/*
** colvec-loadbench.c — bulk-load rate of colvec against a plain SQLite
** table, in the same run: N seeded random float32 vectors of D dimensions
** inserted in ONE transaction through a prepared statement, timed from
** BEGIN to the end of COMMIT (colvec writes its segment, and builds its
** index unless the options say index=none, inside COMMIT).
**
** usage: colvec-loadbench --ext PATH [--n N] [--dim D] [--dir DIR]
**                         [--options "column options"]
** Prints one line per engine: engine, rows, seconds, rows/s, bytes on disk.
*/
#include <sqlite3.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <dirent.h>

/* Seconds on the monotonic clock. */
static double lbNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* xorshift64* generator: the next value in [0, 1). */
static double lbRand(uint64_t *pState) {
  uint64_t x = *pState;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *pState = x;
  return (double)((x * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

/* Bytes under path (a file, or a folder walked recursively). */
static long long lbBytes(const char *zPath) {
  struct stat st;
  long long n = 0;
  DIR *pDir;
  struct dirent *pEnt;
  if (stat(zPath, &st) != 0) return 0;
  if (!S_ISDIR(st.st_mode)) return (long long)st.st_size;
  pDir = opendir(zPath);
  if (pDir == NULL) return 0;
  while ((pEnt = readdir(pDir)) != NULL) {
    char zSub[4096];
    if (strcmp(pEnt->d_name, ".") == 0 || strcmp(pEnt->d_name, "..") == 0)
      continue;
    snprintf(zSub, sizeof(zSub), "%s/%s", zPath, pEnt->d_name);
    n += lbBytes(zSub);
  }
  closedir(pDir);
  return n;
}

/* Runs SQL or exits with the error. */
static void lbExec(sqlite3 *db, const char *zSql) {
  char *zErr = NULL;
  if (sqlite3_exec(db, zSql, 0, 0, &zErr) != SQLITE_OK) {
    fprintf(stderr, "colvec-loadbench: %s\n  in: %s\n", zErr, zSql);
    exit(1);
  }
}

/*
** Loads nRow vectors from aVec into a fresh database zPath with the table
** created by zCreate and rows inserted by zInsert; prints one result line.
*/
static void lbRun(const char *zEngine, const char *zPath, const char *zExt,
                  const char *zCreate, const char *zInsert, const float *aVec,
                  int nRow, int nDim) {
  sqlite3 *db;
  sqlite3_stmt *pStmt;
  char zSide[4200];
  double t0, t1;
  int i;
  char zCmd[4300];
  snprintf(zCmd, sizeof(zCmd), "rm -rf '%s' '%s-journal' '%s-colvec'", zPath,
           zPath, zPath);
  if (system(zCmd) != 0) exit(1);
  if (sqlite3_open(zPath, &db) != SQLITE_OK) exit(1);
  if (zExt) {
    char *zErr = NULL;
    sqlite3_enable_load_extension(db, 1);
    if (sqlite3_load_extension(db, zExt, 0, &zErr) != SQLITE_OK) {
      fprintf(stderr, "colvec-loadbench: %s\n", zErr);
      exit(1);
    }
  }
  lbExec(db, zCreate);
  if (sqlite3_prepare_v2(db, zInsert, -1, &pStmt, NULL) != SQLITE_OK) {
    fprintf(stderr, "colvec-loadbench: %s\n", sqlite3_errmsg(db));
    exit(1);
  }
  t0 = lbNow();
  lbExec(db, "BEGIN");
  for (i = 0; i < nRow; i++) {
    sqlite3_bind_int64(pStmt, 1, i + 1);
    sqlite3_bind_blob(pStmt, 2, aVec + (size_t)i * nDim, nDim * 4,
                      SQLITE_STATIC);
    if (sqlite3_step(pStmt) != SQLITE_DONE) {
      fprintf(stderr, "colvec-loadbench: %s\n", sqlite3_errmsg(db));
      exit(1);
    }
    sqlite3_reset(pStmt);
  }
  lbExec(db, "COMMIT");
  t1 = lbNow();
  sqlite3_finalize(pStmt);
  sqlite3_close(db);
  snprintf(zSide, sizeof(zSide), "%s-colvec", zPath);
  printf("%s\t%d\t%d\t%.2f\t%.0f\t%lld\n", zEngine, nRow, nDim, t1 - t0,
         nRow / (t1 - t0), lbBytes(zPath) + lbBytes(zSide));
  fflush(stdout);
}

int main(int argc, char **argv) {
  const char *zExt = NULL, *zDir = "bench-data",
             *zOptions = "quantize=none index=none";
  int nRow = 1000000, nDim = 128, i;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  float *aVec;
  char zPath[4096], zCreate[4096];
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--ext") == 0 && i + 1 < argc)
      zExt = argv[++i];
    else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
      nRow = atoi(argv[++i]);
    else if (strcmp(argv[i], "--dim") == 0 && i + 1 < argc)
      nDim = atoi(argv[++i]);
    else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
      zDir = argv[++i];
    else if (strcmp(argv[i], "--options") == 0 && i + 1 < argc)
      zOptions = argv[++i];
    else {
      fprintf(stderr, "usage: colvec-loadbench --ext PATH [--n N] [--dim D] "
                      "[--dir DIR] [--options STR]\n");
      return 2;
    }
  }
  if (zExt == NULL || nRow < 1 || nDim < 1) {
    fprintf(stderr, "colvec-loadbench: --ext is required\n");
    return 2;
  }
  aVec = malloc((size_t)nRow * nDim * sizeof(float));
  if (aVec == NULL) return 1;
  for (i = 0; i < nRow * nDim; i++)
    aVec[i] = (float)(2.0 * lbRand(&state) - 1.0);
  printf("engine\trows\tdim\tseconds\trows_per_s\tbytes_on_disk\n");
  snprintf(zPath, sizeof(zPath), "%s/loadbench-plain.db", zDir);
  lbRun("sqlite-blob-table", zPath, NULL,
        "CREATE TABLE t(id INTEGER PRIMARY KEY, embedding BLOB)",
        "INSERT INTO t(id, embedding) VALUES (?, ?)", aVec, nRow, nDim);
  snprintf(zPath, sizeof(zPath), "%s/loadbench-colvec.db", zDir);
  snprintf(zCreate, sizeof(zCreate),
           "CREATE VIRTUAL TABLE t USING colvec(embedding float[%d] %s)", nDim,
           zOptions);
  lbRun("colvec", zPath, zExt, zCreate,
        "INSERT INTO t(rowid, embedding) VALUES (?, ?)", aVec, nRow, nDim);
  free(aVec);
  return 0;
}
