/*
** colvec_config.c — parsing of the CREATE VIRTUAL TABLE arguments.
**
**   CREATE VIRTUAL TABLE t USING colvec(
**     embedding float[768] distance_metric=cosine,   -- vector column
**     category text, year integer, price real        -- attribute columns
**   );
**
** Each argument is a column definition: a name (bare or quoted with "", '',
** `` or []), a type, and for vector columns `key=value` options. Vector
** types: float[N] (alias float32[N]), int8[N], bit[N] (N a multiple of 8).
** Attribute types: integer (int, int64, integer64, boolean, bool), real
** (float, double, float64, f64), text, blob: sqlite-vec's metadata types.
** Vector options: distance_metric=l2|cosine|dot|l1|hamming (l2 by
** default, hamming for bit vectors), quantize=none|int8|int4|bit (codes the
** HNSW search runs on; int8 by default for float vectors, none for l1,
** which no quantizer estimates), m=N (HNSW links
** per node, 16), ef_construction=N (200) and index=hnsw|none (none: every
** search is exact, the baseline the index is measured against).
**
** An argument that is a single key=value token is a table option:
**   delta_rows=N                  rows kept in the delta before compaction
**   defer_rows=N                  rows a commit may leave in segments
**                                 whose graph is not built yet (searched
**                                 by a scan of their codes; the 'index'
**                                 command builds it); 0: every graph is
**                                 built at commit
**   access=mmap|file              how segment files are read
**   prefault=none|willneed|populate  what to do when a segment is opened
**   verify=open|none              whether every section checksum of a
**                                 sidecar file is verified before its
**                                 first use in a process (embedded
**                                 tables' cache files always are)
**   build_threads=N               threads for HNSW builds (default: half
**                                 the cores, 1 to 4)
**   storage=sidecar|embedded      whether segment bytes are also kept in
**                                 the database (read at CREATE only: the
**                                 table's stored format decides after).
**                                 The default is sidecar for a file
**                                 database, embedded for a database that
**                                 is not a file (memdb, a replicated
**                                 engine's VFS), where sidecar is refused
**   chunk_size=N                  sqlite-vec's; checked as it checks it
**                                 (a positive multiple of 8) and ignored
**
** sqlite-vec's auxiliary columns (`+name type`) and partition keys (`name
** integer|text partition key`) are attribute columns: stored, returned and
** filterable (a KNN with name = ? searches the partition's rows).
** sqlite-vec's `id integer primary key` is an alias of the rowid and
** `id text primary key` a text key mapped to the rowid (shadow table
** T_ids); a primary key of another type is refused with a message that
** says what to write instead; so are SQL column constraints and
** collations after an attribute type (`not null`, `collate nocase`).
*/
#include "colvecInt.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Names that user columns may not take (besides the table's own name). */
static const char *const configReserved[] = {"rowid",    "oid", "_rowid_",
                                             "distance", "k",   "oversampling",
                                             "rescore",  "ef"};

/* Metric names, indexed by ColvecMetric. */
static const char *const configMetricNames[] = {"l2", "cosine", "dot",
                                                "hamming", "l1"};

/* Number of entries of configMetricNames. */
#define CONFIG_N_METRIC 5

/* Name of a metric as written in CREATE. */
const char *colvecMetricName(ColvecMetric eMetric) {
  if ((int)eMetric < 0 || (int)eMetric >= CONFIG_N_METRIC) return "?";
  return configMetricNames[eMetric];
}

/* Largest default of build_threads (README, "Embedding in an app"). */
#define CONFIG_MAX_DEFAULT_THREADS 4

/*
** The default of build_threads: half the online processors, at least 1 and
** at most CONFIG_MAX_DEFAULT_THREADS. An HNSW build runs inside the
** application's COMMIT; taking every core would stall the app's other
** threads (a phone's UI among them) for the length of the build. A table
** that must build faster says build_threads=N.
*/
static int configDefaultThreads(void) {
  int n = colvecOsCpuCount() / 2;
  if (n < 1) n = 1;
  return n > CONFIG_MAX_DEFAULT_THREADS ? CONFIG_MAX_DEFAULT_THREADS : n;
}

/* Frees a config and everything it owns (NULL allowed). */
void colvecConfigFree(ColvecConfig *p) {
  if (p) {
    int i;
    for (i = 0; i < p->nCol; i++)
      sqlite3_free(p->aCol[i].zName);
    sqlite3_free(p->aCol);
    sqlite3_free(p->zDb);
    sqlite3_free(p->zName);
    sqlite3_free(p->zPk);
    sqlite3_free(p);
  }
}

/* Returns non-zero for the whitespace characters that separate tokens. */
static int configIsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/*
** Splits argument z into tokens separated by whitespace; '=' binds to its
** neighbours ("a = b" is the token "a=b") and quoted names stay whole.
** Returns an sqlite3_malloc'd array of sqlite3_malloc'd strings in *paTok
** with the count in *pnTok, or SQLITE_NOMEM. Quotes are kept; see
** configUnquote.
*/
static int configTokenize(const char *z, char ***paTok, int *pnTok) {
  int nTok = 0, nAlloc = 0;
  char **aTok = NULL;
  int i = 0;
  *paTok = NULL;
  *pnTok = 0;
  for (;;) {
    int iStart;
    char *zTok;
    while (configIsSpace(z[i]))
      i++;
    if (z[i] == 0) break;
    iStart = i;
    for (;;) {
      char c = z[i];
      if (c == '"' || c == '\'' || c == '`' || c == '[') {
        char cEnd = c == '[' ? ']' : c;
        i++;
        while (z[i] && !(z[i] == cEnd && z[i + 1] != cEnd)) {
          if (z[i] == cEnd) i++; /* doubled quote */
          i++;
        }
        if (z[i]) i++;
        continue;
      }
      if (c == 0) break;
      if (configIsSpace(c)) {
        /* whitespace followed by '=' or preceded by '=' does not split */
        int j = i;
        while (configIsSpace(z[j]))
          j++;
        if (z[j] == '=' || (i > iStart && z[i - 1] == '=')) {
          i = j;
          continue;
        }
        break;
      }
      i++;
    }
    zTok = sqlite3_malloc(i - iStart + 1);
    if (zTok == NULL) goto nomem;
    {
      /* copy, dropping whitespace around '=' outside quotes */
      int j, n = 0;
      char cQuote = 0;
      for (j = iStart; j < i; j++) {
        char c = z[j];
        if (cQuote) {
          if (c == cQuote) cQuote = 0;
        } else if (c == '"' || c == '\'' || c == '`') {
          cQuote = c;
        } else if (c == '[') {
          cQuote = ']';
        } else if (configIsSpace(c)) {
          continue;
        }
        zTok[n++] = c;
      }
      zTok[n] = 0;
    }
    if (nTok == nAlloc) {
      char **aNew;
      nAlloc = nAlloc ? nAlloc * 2 : 8;
      aNew = sqlite3_realloc(aTok, nAlloc * (int)sizeof(char *));
      if (aNew == NULL) {
        sqlite3_free(zTok);
        goto nomem;
      }
      aTok = aNew;
    }
    aTok[nTok++] = zTok;
  }
  *paTok = aTok;
  *pnTok = nTok;
  return SQLITE_OK;
nomem:
  while (nTok > 0)
    sqlite3_free(aTok[--nTok]);
  sqlite3_free(aTok);
  return SQLITE_NOMEM;
}

/* Frees a token array from configTokenize. */
static void configFreeTokens(char **aTok, int nTok) {
  int i;
  for (i = 0; i < nTok; i++)
    sqlite3_free(aTok[i]);
  sqlite3_free(aTok);
}

/*
** Removes SQL quoting from z in place: "a""b" -> a"b, [x] -> x. Returns
** SQLITE_OK, or SQLITE_ERROR when the quotes are unbalanced or the name is
** empty.
*/
static int configUnquote(char *z) {
  char q = z[0];
  int i, n = 0;
  if (q == '[') {
    int nLen = (int)strlen(z);
    if (nLen < 3 || z[nLen - 1] != ']') return SQLITE_ERROR;
    memmove(z, z + 1, (size_t)nLen - 2);
    z[nLen - 2] = 0;
    return SQLITE_OK;
  }
  if (q != '"' && q != '\'' && q != '`') return z[0] ? SQLITE_OK : SQLITE_ERROR;
  for (i = 1; z[i]; i++) {
    if (z[i] == q) {
      if (z[i + 1] == q) {
        z[n++] = q;
        i++;
      } else {
        break;
      }
    } else {
      z[n++] = z[i];
    }
  }
  if (z[i] != q || z[i + 1] != 0 || n == 0) return SQLITE_ERROR;
  z[n] = 0;
  return SQLITE_OK;
}

/*
** Parses a vector type "float[768]" into pCol. Returns 1 when zType is a
** vector type (even a malformed one, reported in *pzErr), 0 when it is not.
*/
static int configParseVectorType(const char *zType, ColvecColumn *pCol,
                                 char **pzErr) {
  static const struct {
    const char *zName;
    ColvecElem eElem;
  } aType[] = {{"float", COLVEC_ELEM_F32},
               {"float32", COLVEC_ELEM_F32},
               {"int8", COLVEC_ELEM_I8},
               {"bit", COLVEC_ELEM_BIT}};
  const char *zOpen = strchr(zType, '[');
  int i;
  long long nDim = 0;
  const char *z;
  if (zOpen == NULL) return 0;
  for (i = 0; i < (int)(sizeof(aType) / sizeof(aType[0])); i++) {
    int n = (int)strlen(aType[i].zName);
    if (zOpen - zType == n && sqlite3_strnicmp(zType, aType[i].zName, n) == 0) {
      break;
    }
  }
  if (i == (int)(sizeof(aType) / sizeof(aType[0]))) {
    *pzErr = sqlite3_mprintf(
        "colvec: column %s has unknown vector type '%s' (expected float[N], "
        "int8[N] or bit[N])",
        pCol->zName, zType);
    return 1;
  }
  for (z = zOpen + 1; *z >= '0' && *z <= '9' && nDim <= COLVEC_MAX_DIM; z++) {
    nDim = nDim * 10 + (*z - '0');
  }
  if (z == zOpen + 1 || *z != ']' || z[1] != 0 || nDim < 1 ||
      nDim > COLVEC_MAX_DIM) {
    *pzErr = sqlite3_mprintf(
        "colvec: column %s: dimensions in '%s' must be an integer between 1 "
        "and %d",
        pCol->zName, zType, COLVEC_MAX_DIM);
    return 1;
  }
  pCol->bVector = 1;
  pCol->eElem = aType[i].eElem;
  pCol->nDim = (int)nDim;
  if (pCol->eElem == COLVEC_ELEM_BIT && nDim % 8 != 0) {
    *pzErr = sqlite3_mprintf(
        "colvec: column %s: bit vectors need a multiple of 8 dimensions, got "
        "%d",
        pCol->zName, (int)nDim);
    return 1;
  }
  pCol->nByte = (int)colvecVectorBytes(pCol->eElem, pCol->nDim);
  pCol->eQuant =
      pCol->eElem == COLVEC_ELEM_F32 ? COLVEC_QUANT_INT8 : COLVEC_QUANT_NONE;
  pCol->nM = COLVEC_HNSW_DEFAULT_M;
  pCol->nEfC = COLVEC_HNSW_DEFAULT_EFC;
  pCol->eMetric =
      pCol->eElem == COLVEC_ELEM_BIT ? COLVEC_METRIC_HAMMING : COLVEC_METRIC_L2;
  return 1;
}

/*
** Parses an attribute type name into pCol. Returns SQLITE_OK or
** SQLITE_ERROR with *pzErr set.
*/
static int configParseAttrType(const char *zType, ColvecColumn *pCol,
                               char **pzErr) {
  static const struct {
    const char *zName;
    ColvecAttr eAttr;
  } aType[] = {
      {"integer", COLVEC_ATTR_INTEGER}, {"int", COLVEC_ATTR_INTEGER},
      {"boolean", COLVEC_ATTR_INTEGER}, {"bool", COLVEC_ATTR_INTEGER},
      {"int64", COLVEC_ATTR_INTEGER},   {"integer64", COLVEC_ATTR_INTEGER},
      {"real", COLVEC_ATTR_REAL},       {"float", COLVEC_ATTR_REAL},
      {"double", COLVEC_ATTR_REAL},     {"float64", COLVEC_ATTR_REAL},
      {"f64", COLVEC_ATTR_REAL},        {"text", COLVEC_ATTR_TEXT},
      {"blob", COLVEC_ATTR_BLOB}};
  int i;
  for (i = 0; i < (int)(sizeof(aType) / sizeof(aType[0])); i++) {
    if (sqlite3_stricmp(zType, aType[i].zName) == 0) {
      pCol->eAttr = aType[i].eAttr;
      return SQLITE_OK;
    }
  }
  *pzErr = sqlite3_mprintf(
      "colvec: column %s has unknown type '%s' (expected float[N], int8[N], "
      "bit[N], integer, real, text or blob)",
      pCol->zName, zType);
  return SQLITE_ERROR;
}

/*
** Sets *pzErr to the message for an unknown quantize= value zVal of column
** pCol, listing the quantizer types ("none, int8, int4 or bit"). *pzErr is
** NULL on allocation failure (the caller's SQLITE_ERROR stands).
*/
static void configQuantError(const ColvecColumn *pCol, const char *zVal,
                             char **pzErr) {
  sqlite3_str *pStr = sqlite3_str_new(NULL);
  char *zList;
  int e;
  for (e = 0; colvecQuantName(e) != 0; e++) {
    const char *zSep = e == 0 ? "" : (colvecQuantName(e + 1) ? ", " : " or ");
    sqlite3_str_appendf(pStr, "%s%s", zSep, colvecQuantName(e));
  }
  zList = sqlite3_str_finish(pStr);
  *pzErr = zList ? sqlite3_mprintf("colvec: column %s: unknown quantize '%s' "
                                   "(expected %s)",
                                   pCol->zName, zVal, zList)
                 : 0;
  sqlite3_free(zList);
}

/*
** Applies one "key=value" option zOpt to vector column pCol. Returns
** SQLITE_OK or SQLITE_ERROR with *pzErr set.
*/
static int configParseVectorOption(const char *zOpt, ColvecColumn *pCol,
                                   char **pzErr) {
  const char *zEq = strchr(zOpt, '=');
  const char *zVal = zEq ? zEq + 1 : NULL;
  int nKey = zEq ? (int)(zEq - zOpt) : (int)strlen(zOpt);
  if (zEq && nKey == 15 && sqlite3_strnicmp(zOpt, "distance_metric", 15) == 0) {
    int e;
    for (e = 0; e < CONFIG_N_METRIC; e++) {
      if (sqlite3_stricmp(zVal, configMetricNames[e]) == 0) break;
    }
    if (e == CONFIG_N_METRIC) {
      *pzErr = sqlite3_mprintf(
          "colvec: column %s: unknown distance_metric '%s' (expected l2, "
          "cosine, dot, l1 or hamming)",
          pCol->zName, zVal);
      return SQLITE_ERROR;
    }
    if ((e == COLVEC_METRIC_HAMMING) != (pCol->eElem == COLVEC_ELEM_BIT)) {
      *pzErr = sqlite3_mprintf(
          "colvec: column %s: distance_metric=%s does not apply to %s "
          "vectors",
          pCol->zName, zVal, colvecElemName(pCol->eElem));
      return SQLITE_ERROR;
    }
    pCol->eMetric = (ColvecMetric)e;
    return SQLITE_OK;
  }
  if (zEq && nKey == 8 && sqlite3_strnicmp(zOpt, "quantize", 8) == 0) {
    const char *zName;
    int e;
    for (e = 0; (zName = colvecQuantName(e)) != 0; e++) {
      if (sqlite3_stricmp(zVal, zName) == 0) break;
    }
    if (zName == 0) {
      configQuantError(pCol, zVal, pzErr);
      return SQLITE_ERROR;
    }
    if (e != COLVEC_QUANT_NONE && pCol->eElem != COLVEC_ELEM_F32) {
      *pzErr = sqlite3_mprintf("colvec: column %s: quantize=%s applies only "
                               "to float vectors",
                               pCol->zName, zVal);
      return SQLITE_ERROR;
    }
    pCol->eQuant = e;
    return SQLITE_OK;
  }
  if (zEq && nKey == 5 && sqlite3_strnicmp(zOpt, "index", 5) == 0) {
    if (sqlite3_stricmp(zVal, "hnsw") == 0 ||
        sqlite3_stricmp(zVal, "none") == 0) {
      pCol->bNoIndex = sqlite3_stricmp(zVal, "none") == 0;
      return SQLITE_OK;
    }
    *pzErr = sqlite3_mprintf("colvec: column %s: unknown index '%s' "
                             "(expected hnsw or none)",
                             pCol->zName, zVal);
    return SQLITE_ERROR;
  }
  if (zEq &&
      ((nKey == 1 && sqlite3_strnicmp(zOpt, "m", 1) == 0) ||
       (nKey == 15 && sqlite3_strnicmp(zOpt, "ef_construction", 15) == 0))) {
    int bM = nKey == 1;
    int iMax = bM ? COLVEC_HNSW_MAX_M : COLVEC_HNSW_MAX_EFC;
    long long n = 0;
    const char *z;
    for (z = zVal; *z >= '0' && *z <= '9' && n <= iMax; z++)
      n = n * 10 + (*z - '0');
    if (z == zVal || *z || n < (bM ? 2 : 1) || n > iMax) {
      *pzErr = sqlite3_mprintf("colvec: column %s: %s must be an integer "
                               "between %d and %d, got '%s'",
                               pCol->zName, bM ? "m" : "ef_construction",
                               bM ? 2 : 1, iMax, zVal);
      return SQLITE_ERROR;
    }
    if (bM)
      pCol->nM = (int)n;
    else
      pCol->nEfC = (int)n;
    return SQLITE_OK;
  }
  *pzErr = sqlite3_mprintf(
      "colvec: column %s: unknown option '%s' (expected distance_metric=, "
      "quantize=, index=, m= or ef_construction=)",
      pCol->zName, zOpt);
  return SQLITE_ERROR;
}

/*
** The quantizers estimate l2, cosine and dot distances only, so an l1
** column is searched on its float32 (or int8) vectors: its quantize=
** defaults to none, and any other quantize= is refused. bQuant is true
** when quantize= was written. Returns SQLITE_OK or SQLITE_ERROR with
** *pzErr set.
*/
static int configCheckL1(ColvecColumn *pCol, int bQuant, char **pzErr) {
  if (pCol->eMetric != COLVEC_METRIC_L1) return SQLITE_OK;
  if (bQuant && pCol->eQuant != COLVEC_QUANT_NONE) {
    *pzErr = sqlite3_mprintf(
        "colvec: column %s: quantize=%s does not support distance_metric=l1 "
        "(write quantize=none, or leave quantize= out)",
        pCol->zName, colvecQuantName(pCol->eQuant));
    return SQLITE_ERROR;
  }
  pCol->eQuant = COLVEC_QUANT_NONE;
  return SQLITE_OK;
}

/*
** Checks that name zName is not reserved and not taken by an earlier
** column. Returns SQLITE_OK or SQLITE_ERROR with *pzErr set.
*/
static int configCheckName(const ColvecConfig *p, const char *zName,
                           char **pzErr) {
  int i;
  for (i = 0; i < (int)(sizeof(configReserved) / sizeof(configReserved[0]));
       i++) {
    if (sqlite3_stricmp(zName, configReserved[i]) == 0) {
      *pzErr = sqlite3_mprintf("colvec: column name '%s' is reserved", zName);
      return SQLITE_ERROR;
    }
  }
  if (sqlite3_stricmp(zName, p->zName) == 0) {
    *pzErr = sqlite3_mprintf(
        "colvec: column name '%s' is reserved (it is the table's name)", zName);
    return SQLITE_ERROR;
  }
  for (i = 0; i < p->nCol + (p->zPk != 0); i++) {
    if (sqlite3_stricmp(zName, i < p->nCol ? p->aCol[i].zName : p->zPk) == 0) {
      *pzErr = sqlite3_mprintf("colvec: duplicate column name '%s'", zName);
      return SQLITE_ERROR;
    }
  }
  return SQLITE_OK;
}

/*
** Returns the value of zVal, a string of decimal digits, when it lies in
** [1, nMax]; 0 when it is empty, has another character, is 0 or exceeds
** nMax.
*/
static int configParseCount(const char *zVal, int nMax) {
  long long n = 0;
  const char *z;
  for (z = zVal; *z >= '0' && *z <= '9' && n <= nMax; z++)
    n = n * 10 + (*z - '0');
  return (z == zVal || *z || n < 1 || n > nMax) ? 0 : (int)n;
}

/* azAccess etc.: the values of a table option that names a choice, in
** the order of the numbers they set, NULL-terminated. */
static const char *const azAccess[] = {"mmap", "file", NULL};
static const char *const azPrefault[] = {"none", "willneed", "populate", NULL};
static const char *const azStorage[] = {"sidecar", "embedded", NULL};
static const char *const azVerify[] = {"open", "none", NULL};

/* A table option whose value is one of a few names. */
typedef struct ConfigChoice ConfigChoice;
struct ConfigChoice {
  const char *zKey;         /* option name */
  const char *const *azVal; /* its values (NULL-terminated) */
  const char *zExpect;      /* them, as the error message lists them */
  size_t iOffset;           /* the int of ColvecConfig set to the index */
};

/* The table options that name a choice. */
static const ConfigChoice aChoice[] = {
    {"access", azAccess, "mmap or file", offsetof(ColvecConfig, eAccess)},
    {"prefault", azPrefault, "none, willneed or populate",
     offsetof(ColvecConfig, ePrefault)},
    {"verify", azVerify, "open or none", offsetof(ColvecConfig, bNoVerify)},
    {"storage", azStorage, "sidecar or embedded",
     offsetof(ColvecConfig, eStorage)},
};

/*
** Applies one table option "key=value" (delta_rows, access, prefault,
** verify, build_threads, storage) to p.
** Returns SQLITE_OK or SQLITE_ERROR with *pzErr set.
*/
static int configParseTableOption(ColvecConfig *p, const char *zOpt,
                                  char **pzErr) {
  const char *zEq = strchr(zOpt, '=');
  const char *zVal = zEq + 1;
  int nKey = (int)(zEq - zOpt);
  int i;
  if (nKey == 10 && sqlite3_strnicmp(zOpt, "delta_rows", 10) == 0) {
    int n = configParseCount(zVal, 10000000);
    if (n < 1) {
      *pzErr = sqlite3_mprintf(
          "colvec: delta_rows must be an integer between 1 and 10000000, got "
          "'%s'",
          zVal);
      return SQLITE_ERROR;
    }
    p->nDeltaRows = n;
    return SQLITE_OK;
  }
  if (nKey == 10 && sqlite3_strnicmp(zOpt, "defer_rows", 10) == 0) {
    int n = configParseCount(zVal, 10000000); /* 0 when not 1..max */
    if (n < 1 && strcmp(zVal, "0") != 0) {
      *pzErr = sqlite3_mprintf(
          "colvec: defer_rows must be an integer between 0 and 10000000, got "
          "'%s'",
          zVal);
      return SQLITE_ERROR;
    }
    p->nDeferRows = n;
    return SQLITE_OK;
  }
  if (nKey == 13 && sqlite3_strnicmp(zOpt, "build_threads", 13) == 0) {
    int n = configParseCount(zVal, COLVEC_HNSW_MAX_THREAD);
    if (n < 1) {
      *pzErr = sqlite3_mprintf("colvec: build_threads must be an integer "
                               "between 1 and %d, got '%s'",
                               COLVEC_HNSW_MAX_THREAD, zVal);
      return SQLITE_ERROR;
    }
    p->nBuildThread = n;
    return SQLITE_OK;
  }
  for (i = 0; i < (int)(sizeof(aChoice) / sizeof(aChoice[0])); i++) {
    const ConfigChoice *pCh = &aChoice[i];
    int iVal;
    if (nKey != (int)strlen(pCh->zKey) ||
        sqlite3_strnicmp(zOpt, pCh->zKey, nKey) != 0) {
      continue;
    }
    for (iVal = 0; pCh->azVal[iVal]; iVal++) {
      if (sqlite3_stricmp(zVal, pCh->azVal[iVal]) == 0) {
        *(int *)((char *)p + pCh->iOffset) = iVal;
        if (pCh->azVal == azStorage) p->bStorageSet = 1;
        return SQLITE_OK;
      }
    }
    *pzErr = sqlite3_mprintf("colvec: %s must be %s, got '%s'", pCh->zKey,
                             pCh->zExpect, zVal);
    return SQLITE_ERROR;
  }
  if (nKey == 10 && sqlite3_strnicmp(zOpt, "chunk_size", 10) == 0) {
    /*
    ** sqlite-vec's chunk_size sizes the blocks its rows are stored in.
    ** colvec has no such blocks (new rows go to the delta, then into
    ** segments of delta_rows rows or more), so the value is checked as
    ** sqlite-vec checks it and otherwise ignored.
    */
    int n = configParseCount(zVal, 0x7fffffff);
    if (n < 1) {
      *pzErr = sqlite3_mprintf(
          "colvec: chunk_size must be a positive integer, got '%s' (it is "
          "accepted for sqlite-vec's DDL and ignored: see delta_rows)",
          zVal);
      return SQLITE_ERROR;
    }
    if (n % 8 != 0) {
      *pzErr = sqlite3_mprintf(
          "colvec: chunk_size must be divisible by 8, got '%s' (it is "
          "accepted for sqlite-vec's DDL and ignored: see delta_rows)",
          zVal);
      return SQLITE_ERROR;
    }
    return SQLITE_OK;
  }
  *pzErr = sqlite3_mprintf(
      "colvec: unknown table option '%s' (expected delta_rows, defer_rows, "
      "access, prefault, verify, build_threads, storage or chunk_size)",
      zOpt);
  return SQLITE_ERROR;
}

/*
** Returns non-zero when the column definition aTok (nTok tokens) ends in
** "<zWord> key" right after its type, as in sqlite-vec's "user_id integer
** partition key" (zWord "partition") or "id text primary key" ("primary").
*/
static int configIsKey(char **aTok, int nTok, const char *zWord) {
  return nTok == 4 && sqlite3_stricmp(aTok[2], zWord) == 0 &&
         sqlite3_stricmp(aTok[3], "key") == 0;
}

/*
** sqlite-vec's "id integer primary key" (bText 0): an alias of the rowid,
** under its own name and at its place in the declared schema, stored
** nowhere (the rowid is); or its "id text primary key" (bText 1): a text
** key whose values the shadow table T_ids maps to rowids. pCol, just
** appended to p, is taken back out. Returns SQLITE_OK, SQLITE_ERROR with
** *pzErr set for a second primary key, or SQLITE_NOMEM.
*/
static int configPrimaryKey(ColvecConfig *p, ColvecColumn *pCol, int bText,
                            char **pzErr) {
  if (p->zPk) {
    *pzErr = sqlite3_mprintf("colvec: column %s: a table has one primary key "
                             "column, %s is one already",
                             pCol->zName, p->zPk);
    return SQLITE_ERROR;
  }
  p->zPk = pCol->zName;
  p->iPk = p->nCol - 1;
  p->bPkText = bText;
  memset(pCol, 0, sizeof(*pCol));
  p->nCol--;
  return SQLITE_OK;
}

/*
** sqlite-vec's "name type partition key": a KNN with name = ? searches the
** rows of that partition. colvec stores it as an attribute column, whose
** equality filter gives the same rows. sqlite-vec takes integer and text
** partition keys only, and so does colvec; their values are not converted
** (an integer key refuses '5' and 5.0, a text key 7). Returns SQLITE_OK or
** SQLITE_ERROR with *pzErr set (zType: the type as written).
*/
static int configPartitionKey(ColvecColumn *pCol, const char *zType,
                              char **pzErr) {
  if (pCol->eAttr == COLVEC_ATTR_INTEGER || pCol->eAttr == COLVEC_ATTR_TEXT) {
    pCol->bStrict = 1;
    pCol->bPartition = 1;
    return SQLITE_OK;
  }
  *pzErr = sqlite3_mprintf("colvec: column %s: a partition key must be "
                           "integer or text, got '%s'",
                           pCol->zName, zType);
  return SQLITE_ERROR;
}

/*
** The message for words after an attribute column's type (aTok[2..]),
** which colvec does not take: sqlite-vec's `primary key` and SQL's column
** constraints and collations. Each says what to write
** instead. Returns an sqlite3_malloc'd message, or NULL on OOM.
*/
static char *configTrailingError(const char *zName, char **aTok, int nTok) {
  sqlite3_str *pStr = sqlite3_str_new(NULL);
  char *zRest;
  int i;
  for (i = 2; i < nTok; i++) {
    sqlite3_str_appendf(pStr, "%s%s", i > 2 ? " " : "", aTok[i]);
  }
  zRest = sqlite3_str_finish(pStr);
  if (zRest == NULL) return NULL;
  if (configIsKey(aTok, nTok, "primary")) {
    sqlite3_free(zRest);
    return sqlite3_mprintf(
        "colvec: column %s: a primary key is 'integer' (an alias of the "
        "rowid) or 'text': declare '%s integer primary key' or '%s text "
        "primary key', and keep a %s key in an attribute column",
        zName, zName, zName, aTok[1]);
  }
  if (sqlite3_stricmp(aTok[2], "collate") == 0) {
    char *z = sqlite3_mprintf(
        "colvec: column %s: collations are not supported ('%s'): declare "
        "'%s %s' (text compares as BINARY)",
        zName, zRest, zName, aTok[1]);
    sqlite3_free(zRest);
    return z;
  }
  {
    char *z = sqlite3_mprintf(
        "colvec: column %s: column constraints are not supported ('%s'): "
        "declare '%s %s'",
        zName, zRest, zName, aTok[1]);
    sqlite3_free(zRest);
    return z;
  }
}

/*
** Parses one column definition (already tokenized) and appends it to p.
** Returns SQLITE_OK or an error with *pzErr set.
*/
static int configParseColumn(ColvecConfig *p, char **aTok, int nTok,
                             char **pzErr) {
  ColvecColumn *pCol = &p->aCol[p->nCol];
  int i, rc;
  int bQuant = 0; /* true if quantize= was given */
  int bAux = 0;   /* true for sqlite-vec's "+name type" */
  memset(pCol, 0, sizeof(*pCol));
  if (strchr(aTok[0], '=') && aTok[0][0] != '"' && aTok[0][0] != '[' &&
      aTok[0][0] != '`' && aTok[0][0] != '\'') {
    if (nTok > 1) {
      *pzErr = sqlite3_mprintf("colvec: malformed table option '%s %s'",
                               aTok[0], aTok[1]);
      return SQLITE_ERROR;
    }
    return configParseTableOption(p, aTok[0], pzErr);
  }
  if (aTok[0][0] == '+') {
    /*
    ** sqlite-vec's auxiliary column: stored and returned, never used by a
    ** KNN filter there, its values never converted. colvec makes it an
    ** attribute column (a filter on it works) that converts no value.
    */
    memmove(aTok[0], aTok[0] + 1, strlen(aTok[0]));
    bAux = 1;
  }
  if (configUnquote(aTok[0]) != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("colvec: malformed column name %s", aTok[0]);
    return SQLITE_ERROR;
  }
  if (nTok < 2) {
    *pzErr = sqlite3_mprintf("colvec: column %s needs a type", aTok[0]);
    return SQLITE_ERROR;
  }
  if (p->nCol >= COLVEC_MAX_COLUMNS) {
    /* counted here, not as arguments: table options are no columns */
    *pzErr = sqlite3_mprintf("colvec: too many columns: a table has at most "
                             "%d (vector and attribute columns together)",
                             COLVEC_MAX_COLUMNS);
    return SQLITE_ERROR;
  }
  rc = configCheckName(p, aTok[0], pzErr);
  if (rc != SQLITE_OK) return rc;
  pCol->zName = sqlite3_mprintf("%s", aTok[0]);
  if (pCol->zName == NULL) return SQLITE_NOMEM;
  p->nCol++; /* from here on pCol is owned by p */
  if (configParseVectorType(aTok[1], pCol, pzErr)) {
    if (*pzErr) return SQLITE_ERROR;
    if (bAux) {
      *pzErr = sqlite3_mprintf("colvec: column %s: an auxiliary column "
                               "(+%s) cannot be a vector column",
                               pCol->zName, pCol->zName);
      return SQLITE_ERROR;
    }
    p->nVector++;
    for (i = 2; i < nTok; i++) {
      if (sqlite3_strnicmp(aTok[i], "quantize=", 9) == 0) bQuant = 1;
      rc = configParseVectorOption(aTok[i], pCol, pzErr);
      if (rc != SQLITE_OK) return rc;
    }
    return configCheckL1(pCol, bQuant, pzErr);
  }
  rc = configParseAttrType(aTok[1], pCol, pzErr);
  if (rc == SQLITE_OK && !bAux && configIsKey(aTok, nTok, "primary") &&
      (sqlite3_stricmp(aTok[1], "integer") == 0 ||
       sqlite3_stricmp(aTok[1], "text") == 0)) {
    return configPrimaryKey(p, pCol, pCol->eAttr == COLVEC_ATTR_TEXT, pzErr);
  }
  if (rc == SQLITE_OK && !bAux && configIsKey(aTok, nTok, "partition")) {
    return configPartitionKey(pCol, aTok[1], pzErr);
  }
  if (rc == SQLITE_OK) pCol->bStrict = bAux;
  if (rc == SQLITE_OK && nTok > 2) {
    *pzErr = configTrailingError(pCol->zName, aTok, nTok);
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  return rc;
}

/* Parses the CREATE arguments; see colvecInt.h. */
int colvecConfigParse(int argc, const char *const *argv, ColvecConfig **pp,
                      char **pzErr) {
  int rc = SQLITE_OK;
  int i;
  ColvecConfig *p = sqlite3_malloc(sizeof(ColvecConfig));
  *pp = NULL;
  if (p == NULL) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->nDeltaRows = COLVEC_DEFAULT_DELTA_ROWS;
  p->nDeferRows = COLVEC_DEFAULT_DEFER_ROWS;
  p->iPk = -1;
  p->nBuildThread = configDefaultThreads();
  p->zDb = sqlite3_mprintf("%s", argv[1]);
  p->zName = sqlite3_mprintf("%s", argv[2]);
  if (p->zDb == NULL || p->zName == NULL) {
    rc = SQLITE_NOMEM;
  } else {
    p->aCol =
        sqlite3_malloc64(sizeof(ColvecColumn) * (argc > 3 ? argc - 3 : 1));
    if (p->aCol == NULL) rc = SQLITE_NOMEM;
  }
  for (i = 3; rc == SQLITE_OK && i < argc; i++) {
    char **aTok = NULL;
    int nTok = 0;
    rc = configTokenize(argv[i], &aTok, &nTok);
    if (rc == SQLITE_OK) {
      if (nTok == 0) {
        *pzErr = sqlite3_mprintf("colvec: empty column definition");
        rc = SQLITE_ERROR;
      } else {
        rc = configParseColumn(p, aTok, nTok, pzErr);
      }
    }
    configFreeTokens(aTok, nTok);
  }
  if (rc == SQLITE_OK && p->nVector == 0) {
    *pzErr = sqlite3_mprintf(
        "colvec: table %s needs at least one vector column, e.g. "
        "'embedding float[768]'",
        p->zName);
    rc = SQLITE_ERROR;
  }
  if (rc != SQLITE_OK) {
    colvecConfigFree(p);
    return rc;
  }
  *pp = p;
  return SQLITE_OK;
}

/* Builds the CREATE TABLE statement for sqlite3_declare_vtab. */
char *colvecConfigDeclareSql(const ColvecConfig *p) {
  static const char *const azAffinity[] = {"INTEGER", "REAL", "TEXT", "BLOB"};
  sqlite3_str *pStr = sqlite3_str_new(NULL);
  int i;
  sqlite3_str_appendall(pStr, "CREATE TABLE x(");
  for (i = 0; i <= p->nCol; i++) {
    const ColvecColumn *pCol = &p->aCol[i];
    if (i == p->iPk) {
      sqlite3_str_appendf(pStr, "\"%w\" %s, ", p->zPk,
                          p->bPkText ? "TEXT" : "INTEGER");
    }
    if (i == p->nCol) break;
    sqlite3_str_appendf(pStr, "\"%w\"", pCol->zName);
    if (!pCol->bVector) {
      sqlite3_str_appendf(pStr, " %s", azAffinity[pCol->eAttr]);
    }
    sqlite3_str_appendall(pStr, ", ");
  }
  sqlite3_str_appendf(pStr,
                      "distance HIDDEN, k HIDDEN, oversampling HIDDEN, "
                      "rescore HIDDEN, ef HIDDEN, \"%w\" HIDDEN)",
                      p->zName);
  return sqlite3_str_finish(pStr);
}

/* Maps a declared column index to colvec's; see colvecInt.h. */
int colvecConfigColumn(const ColvecConfig *p, int iDecl) {
  if (iDecl < 0 || p->iPk < 0 || iDecl < p->iPk) return iDecl;
  if (iDecl == p->iPk) return p->bPkText ? COLVEC_COL_TEXTID : -1;
  return iDecl - 1;
}

/*
** Fingerprint of the table's column layout (types, dimensions, metrics),
** stored in every segment header: a segment written for another layout is
** refused. Names are left out: they do not change what a file holds.
*/
uint64_t colvecConfigFingerprint(const ColvecConfig *p) {
  ColvecHash h;
  int i;
  colvecHashInit(&h);
  for (i = 0; i < p->nCol; i++) {
    const ColvecColumn *pCol = &p->aCol[i];
    int32_t a[5];
    a[0] = pCol->bVector;
    a[1] = pCol->bVector ? (int32_t)pCol->eElem : (int32_t)pCol->eAttr;
    a[2] = pCol->nDim;
    a[3] = pCol->bVector ? (int32_t)pCol->eMetric : 0;
    a[4] = i;
    colvecHashUpdate(&h, a, sizeof(a));
  }
  return colvecHashFinal(&h);
}

/* Returns non-zero when zPath is absolute (POSIX, or a Windows drive or
** share path). */
static int configPathAbsolute(const char *zPath) {
  if (zPath[0] == '/' || zPath[0] == '\\') return 1;
  return ((zPath[0] >= 'a' && zPath[0] <= 'z') ||
          (zPath[0] >= 'A' && zPath[0] <= 'Z')) &&
         zPath[1] == ':' && (zPath[2] == '\\' || zPath[2] == '/');
}

/* The kind of a schema's database; see colvecInt.h. */
int colvecConfigDbKind(sqlite3 *db, const char *zDb) {
  const char *zFile = sqlite3_db_filename(db, zDb);
  sqlite3_vfs *pVfs = NULL;
  const char *zVfs;
  int rcVfs = sqlite3_file_control(db, zDb, SQLITE_FCNTL_VFS_POINTER, &pVfs);
  /* memdb first: SQLite 3.53 and later give a memdb database
  ** no file name, so it would otherwise pass for ":memory:" */
  if (rcVfs == SQLITE_OK && pVfs && pVfs->zName &&
      strcmp(pVfs->zName, "memdb") == 0) {
    return COLVEC_DB_NOPATH;
  }
  if (zFile == NULL || zFile[0] == 0) return COLVEC_DB_MEMORY;
  if (rcVfs != SQLITE_OK || pVfs == NULL || pVfs->zName == NULL) {
    return COLVEC_DB_NOPATH;
  }
  zVfs = pVfs->zName;
  if (strncmp(zVfs, "unix", 4) == 0 || strncmp(zVfs, "win32", 5) == 0) {
    return COLVEC_DB_FILE;
  }
  /* another VFS: a shim over a file VFS names a real file by its full
  ** path; a VFS of its own (dqlite's) names a database, not a file */
  return configPathAbsolute(zFile) && colvecOsKind(zFile) == COLVEC_OS_OTHER
             ? COLVEC_DB_FILE
             : COLVEC_DB_NOPATH;
}

/* Settles a new table's storage by its database; see colvecInt.h. */
int colvecConfigStorageChoose(sqlite3 *db, ColvecConfig *p, char **pzErr) {
  sqlite3_vfs *pVfs = NULL;
  if (colvecConfigDbKind(db, p->zDb) != COLVEC_DB_NOPATH) return SQLITE_OK;
  if (!p->bStorageSet) {
    p->eStorage = COLVEC_STORAGE_EMBEDDED;
    return SQLITE_OK;
  }
  if (p->eStorage == COLVEC_STORAGE_EMBEDDED) return SQLITE_OK;
  sqlite3_file_control(db, p->zDb, SQLITE_FCNTL_VFS_POINTER, &pVfs);
  *pzErr = sqlite3_mprintf(
      "colvec: storage=sidecar is not possible for table %s: database %s is "
      "not a file on this machine's file system (VFS %s), so files beside "
      "it would not follow it into copies or replicas; write "
      "storage=embedded, or leave storage out (embedded is the default "
      "there)",
      p->zName, p->zDb, pVfs && pVfs->zName ? pVfs->zName : "unknown");
  return SQLITE_ERROR;
}

/*
** Moves past the white space and comments at z; returns the first byte
** of what follows.
*/
static const char *configSkipSpace(const char *z) {
  for (;;) {
    while (*z == ' ' || *z == '\t' || *z == '\n' || *z == '\r' || *z == '\f' ||
           *z == '\v') {
      z++;
    }
    if (z[0] == '-' && z[1] == '-') {
      while (*z && *z != '\n')
        z++;
    } else if (z[0] == '/' && z[1] == '*') {
      const char *zEnd = strstr(z + 2, "*/");
      z = zEnd ? zEnd + 2 : z + strlen(z);
    } else {
      return z;
    }
  }
}

/*
** Reads the SQL token at z (after any white space): a quoted name ("..",
** '..', `..` with their doubled quotes, or [..]), a bare word, or one other
** character. Sets *pn to its length (0 at the end of the text) and returns
** where it starts.
*/
static const char *configToken(const char *z, int *pn) {
  const char *zStart = configSkipSpace(z);
  const char *p = zStart;
  char cEnd = 0;
  if (*p == '"' || *p == '\'' || *p == '`') cEnd = *p;
  if (*p == '[') cEnd = ']';
  if (cEnd) {
    for (p++; *p; p++) {
      if (*p == cEnd) {
        if (cEnd != ']' && p[1] == cEnd) {
          p++;
        } else {
          p++;
          break;
        }
      }
    }
  } else if (*p == '_' || *p == '$' || (*p & 0x80) ||
             (*p >= '0' && *p <= '9') ||
             ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z')) {
    while (*p == '_' || *p == '$' || (*p & 0x80) || (*p >= '0' && *p <= '9') ||
           ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z')) {
      p++;
    }
  } else if (*p) {
    p++;
  }
  *pn = (int)(p - zStart);
  return zStart;
}

/* Whether token z (n bytes) is word zWord, in any case, unquoted. */
static int configTokenIs(const char *z, int n, const char *zWord) {
  return n == (int)strlen(zWord) && sqlite3_strnicmp(z, zWord, n) == 0;
}

/* Whether a table's CREATE statement names colvec; see colvecInt.h. */
int colvecConfigIsColvecSql(const char *zSql) {
  static const char *const azHead[] = {"CREATE", "VIRTUAL", "TABLE"};
  const char *z = zSql;
  const char *zTok;
  int i, n;
  if (z == NULL) return 0;
  for (i = 0; i < 3; i++) {
    zTok = configToken(z, &n);
    if (!configTokenIs(zTok, n, azHead[i])) return 0;
    z = zTok + n;
  }
  zTok = configToken(z, &n);
  if (configTokenIs(zTok, n, "IF")) {
    /* IF NOT EXISTS */
    for (i = 0; i < 2; i++) {
      zTok = configToken(zTok + n, &n);
    }
    zTok = configToken(zTok + n, &n);
  }
  if (n == 0) return 0;
  z = zTok + n; /* past the table name or the schema name */
  zTok = configToken(z, &n);
  if (n == 1 && zTok[0] == '.') {
    zTok = configToken(zTok + n, &n); /* the table name */
    zTok = configToken(zTok + n, &n);
  }
  if (!configTokenIs(zTok, n, "USING")) return 0;
  zTok = configToken(zTok + n, &n);
  if (n >= 2 &&
      (zTok[0] == '"' || zTok[0] == '\'' || zTok[0] == '`' || zTok[0] == '[')) {
    /* a quoted module name: "colvec" (no doubled quote can be in it) */
    return n == 8 && sqlite3_strnicmp(zTok + 1, "colvec", 6) == 0;
  }
  return configTokenIs(zTok, n, "colvec");
}
