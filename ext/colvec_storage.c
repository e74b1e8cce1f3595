/*
** colvec_storage.c — the shadow tables of a colvec table. Every SQL
** statement colvec runs on them, and on the pragmas it reads, is here; the
** other files call the functions below (colvecInt.h, "Interface to code in
** colvec_storage.c") and never see SQL text or a shadow-table name.
**
**   T_config(key TEXT PRIMARY KEY, value) WITHOUT ROWID
**       'version' -> COLVEC_FORMAT_VERSION when the table was created;
**       'folder' -> the segment folder's name (colvec_segment.c), fixed at
**       CREATE; 'next_segid', 'generation' (colvec_compact.c).
**   T_delta(rowid INTEGER PRIMARY KEY, c0, c1, ...)
**       one row per table row; ci holds user column i, vectors as BLOBs of
**       the column's binary form, attributes with the declared affinity.
**   T_manifest(segid INTEGER PRIMARY KEY, nrow, cksum, level)
**       the live segment files, their header checksums and tiers.
**   T_tomb(segid, rowid, PRIMARY KEY(segid, rowid)) WITHOUT ROWID
**       rows of segment segid deleted or replaced since it was written.
**   T_trash(segid INTEGER PRIMARY KEY, generation)
**       segments dropped by a merge, with the generation of the write
**       transaction that dropped them (negated when that transaction had
**       also created them); see colvecCompactCleanup.
**   T_segdata(segid INTEGER, chunk INTEGER, data BLOB,
**             PRIMARY KEY(segid, chunk))
**       storage=embedded only (format version COLVEC_FORMAT_EMBEDDED): the
**       bytes of every live segment file in COLVEC_EMBED_CHUNK pieces, so
**       that the files are a cache rebuilt from here (colvec_segment.c).
**       Created by CREATE with storage=embedded or by the 'embed' command;
**       a sidecar table made by an older colvec has none.
**   T_ids(rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE)
**       tables with a text primary key ("id text primary key") only: each
**       row's text id, written in the same transaction as the row.
**
** Statements are known by an id (STORAGE_*, below). Each is prepared on
** first use (SQLITE_PREPARE_PERSISTENT), kept in ColvecStorage.apStmt,
** reset after every use and finalized when the table disconnects. Only
** statements whose text depends on the call are prepared each time: the
** DDL (CREATE, DROP, RENAME, the check that the tables exist), an UPDATE
** of the columns given, a delta SELECT with the plan's filters, and the
** reads of other tables' T_config.
**
** Everything here goes through SQLite's own pages, so transactions,
** savepoints and crash recovery of the rows come from SQLite itself.
*/
#include "colvecInt.h"

#include <math.h>
#include <string.h>

/*
** Ids of the cached statements, indexes into ColvecStorage.apStmt and
** storageSql[]. The first three are built from the column list; the others
** are the format strings of storageSql[] (schema and table name).
*/
#define STORAGE_INSERT 0         /* INSERT INTO T_delta(rowid, c0..) */
#define STORAGE_INSERT_REPLACE 1 /* INSERT OR REPLACE INTO T_delta */
#define STORAGE_INSERT_IGNORE 2  /* INSERT OR IGNORE INTO T_delta */
#define STORAGE_DELTA_DELETE 3   /* one delta row, by rowid */
#define STORAGE_DELTA_EXISTS 4   /* whether a delta rowid exists */
#define STORAGE_DELTA_STAT 5     /* delta row count and largest rowid */
#define STORAGE_DELTA_CLEAR 6    /* every delta row */
#define STORAGE_CONFIG_GET 7     /* one T_config value */
#define STORAGE_CONFIG_SET 8     /* writes one T_config value */
#define STORAGE_MANIFEST_ADD 9   /* a new live segment */
#define STORAGE_MANIFEST_DEL 10  /* a segment leaves the live set */
#define STORAGE_MANIFEST_SCAN 11 /* the live segments, by segid */
#define STORAGE_TOMB_ADD 12      /* a tombstone */
#define STORAGE_TOMB_DROP 13     /* the tombstones of one segment */
#define STORAGE_TOMB_SCAN 14     /* every tombstone, by segid and rowid */
#define STORAGE_TRASH_ADD 15     /* a dropped segment, with its generation */
#define STORAGE_TRASH_PRUNE 16   /* trash rows no reader can need */
#define STORAGE_SEG_NEEDED 17    /* whether a row names a segment file */
#define STORAGE_DATA_VERSION 18  /* PRAGMA data_version of the schema */
#define STORAGE_JOURNAL_MODE 19  /* PRAGMA journal_mode of the schema */
#define STORAGE_SEGDATA_ADD 20   /* one chunk of a segment's bytes */
#define STORAGE_SEGDATA_DEL 21   /* the chunks of one segment */
#define STORAGE_SEGDATA_READ 22  /* the chunks of one segment, in order */
#define STORAGE_SEGDATA_CLEAR 23 /* every chunk */
#define STORAGE_SEG_BOUNDS 24    /* largest segid and generations named */
#define STORAGE_IDS_FIND 25      /* the rowid of a text id */
#define STORAGE_IDS_OF 26        /* the text id of a rowid */
#define STORAGE_IDS_ADD 27       /* maps a text id to a rowid */
#define STORAGE_IDS_DEL 28       /* the text id of a rowid goes */
#define STORAGE_IDS_SCAN 29      /* every text id, by rowid */
#define STORAGE_IDS_DUP 30       /* a text id held twice, if any */
#define STORAGE_NSTMT 31         /* number of ids */

#if STORAGE_NSTMT > COLVEC_STORAGE_NSTMT
#error "ColvecStorage.apStmt is too small"
#endif

/*
** SQL of each statement id from STORAGE_DELTA_DELETE on: an sqlite3_mprintf
** format that storageStmt gives the schema and the table name, four times (a
** format naming one table, or only the schema, leaves the rest unused).
** Parameters are described here when more than a key is bound, else by
** the function that binds them.
*/
static const char *const storageSql[STORAGE_NSTMT] = {
    /* STORAGE_INSERT, _REPLACE, _IGNORE: built by storageStmt */
    NULL,
    NULL,
    NULL,
    /* STORAGE_DELTA_DELETE */
    "DELETE FROM \"%w\".\"%w_delta\" WHERE rowid=?1",
    /* STORAGE_DELTA_EXISTS */
    "SELECT 1 FROM \"%w\".\"%w_delta\" WHERE rowid=?1",
    /* STORAGE_DELTA_STAT */
    "SELECT count(*), max(rowid) FROM \"%w\".\"%w_delta\"",
    /* STORAGE_DELTA_CLEAR */
    "DELETE FROM \"%w\".\"%w_delta\"",
    /* STORAGE_CONFIG_GET */
    "SELECT value FROM \"%w\".\"%w_config\" WHERE key=?1",
    /* STORAGE_CONFIG_SET */
    "REPLACE INTO \"%w\".\"%w_config\" VALUES(?1, ?2)",
    /* STORAGE_MANIFEST_ADD */
    "INSERT INTO \"%w\".\"%w_manifest\" VALUES(?1, ?2, ?3, ?4)",
    /* STORAGE_MANIFEST_DEL */
    "DELETE FROM \"%w\".\"%w_manifest\" WHERE segid=?1",
    /* STORAGE_MANIFEST_SCAN */
    "SELECT segid, nrow, cksum FROM \"%w\".\"%w_manifest\" ORDER BY segid",
    /* STORAGE_TOMB_ADD */
    "INSERT INTO \"%w\".\"%w_tomb\" VALUES(?1, ?2)",
    /* STORAGE_TOMB_DROP */
    "DELETE FROM \"%w\".\"%w_tomb\" WHERE segid=?1",
    /* STORAGE_TOMB_SCAN */
    "SELECT segid, rowid FROM \"%w\".\"%w_tomb\" ORDER BY segid, rowid",
    /* STORAGE_TRASH_ADD */
    "INSERT OR REPLACE INTO \"%w\".\"%w_trash\" VALUES(?1, ?2)",
    /* STORAGE_TRASH_PRUNE: ?1 the newest committed generation no longer
    ** kept (iKeep of colvecCompactCleanup), ?2 the generation whose created
    ** and dropped rows stay (its iLive: the current one, or 0 at xSync) */
    "DELETE FROM \"%w\".\"%w_trash\" WHERE "
    "(generation>=0 AND generation<=?1) OR (generation<0 AND generation<>-?2)",
    /* STORAGE_SEG_NEEDED: ?1 segid, ?2 and ?3 as for STORAGE_TRASH_PRUNE,
    ** ?4 non-zero: any trash row counts */
    "SELECT 1 FROM \"%w\".\"%w_manifest\" WHERE segid=?1 UNION ALL "
    "SELECT 1 FROM \"%w\".\"%w_trash\" WHERE segid=?1 AND "
    "((generation>=0 AND generation>?2) OR generation=-?3 OR ?4)",
    /* STORAGE_DATA_VERSION */
    "PRAGMA \"%w\".data_version",
    /* STORAGE_JOURNAL_MODE */
    "PRAGMA \"%w\".journal_mode",
    /* STORAGE_SEGDATA_ADD: ?1 segid, ?2 chunk number, ?3 the bytes */
    "INSERT INTO \"%w\".\"%w_segdata\" VALUES(?1, ?2, ?3)",
    /* STORAGE_SEGDATA_DEL */
    "DELETE FROM \"%w\".\"%w_segdata\" WHERE segid=?1",
    /* STORAGE_SEGDATA_READ: the chunks' places, not their bytes (length()
    ** and typeof() of a BLOB read no overflow page) */
    "SELECT rowid, chunk, length(data), typeof(data)='blob' FROM "
    "\"%w\".\"%w_segdata\" WHERE segid=?1 ORDER BY chunk",
    /* STORAGE_SEGDATA_CLEAR */
    "DELETE FROM \"%w\".\"%w_segdata\"",
    /* STORAGE_SEG_BOUNDS: the largest segid of the manifest and of the
    ** trash, the largest and smallest trash generation (NULL when empty) */
    "SELECT (SELECT max(segid) FROM \"%w\".\"%w_manifest\"), "
    "(SELECT max(segid) FROM \"%w\".\"%w_trash\"), "
    "(SELECT max(generation) FROM \"%w\".\"%w_trash\"), "
    "(SELECT min(generation) FROM \"%w\".\"%w_trash\")",
    /* STORAGE_IDS_FIND */
    "SELECT rowid FROM \"%w\".\"%w_ids\" WHERE id=?1",
    /* STORAGE_IDS_OF */
    "SELECT id FROM \"%w\".\"%w_ids\" WHERE rowid=?1",
    /* STORAGE_IDS_ADD: ?1 rowid, ?2 text id */
    "INSERT INTO \"%w\".\"%w_ids\"(rowid, id) VALUES(?1, ?2)",
    /* STORAGE_IDS_DEL */
    "DELETE FROM \"%w\".\"%w_ids\" WHERE rowid=?1",
    /* STORAGE_IDS_SCAN */
    "SELECT rowid, typeof(id) FROM \"%w\".\"%w_ids\" ORDER BY rowid",
    /* STORAGE_IDS_DUP: not through the UNIQUE index, which a damaged
    ** schema may have lost */
    "SELECT id FROM \"%w\".\"%w_ids\" NOT INDEXED GROUP BY id "
    "HAVING count(*)>1 LIMIT 1",
};

/* Shadow-table suffixes: xShadowName, the existence check, DROP, RENAME.
** The first STORAGE_NSHADOW exist for every table; "segdata" only for
** embedded ones (and for tables once converted), "ids" only for tables with
** a text primary key. */
static const char *const storageSuffix[] = {
    "config", "delta", "manifest", "tomb", "trash", "segdata", "ids"};
#define STORAGE_NSHADOW 5
#define STORAGE_SHADOW_SEGDATA 5
#define STORAGE_SHADOW_IDS 6
#define STORAGE_NSHADOW_ALL 7
#define STORAGE_SEGDATA_DDL                                                    \
  "CREATE TABLE IF NOT EXISTS \"%w\".\"%w_segdata\"(segid INTEGER, chunk "     \
  "INTEGER, data BLOB NOT NULL, PRIMARY KEY(segid, chunk))"
#define STORAGE_IDS_DDL                                                        \
  "CREATE TABLE \"%w\".\"%w_ids\"(rowid INTEGER PRIMARY KEY, id TEXT NOT "     \
  "NULL UNIQUE)"

/*
** Runs one SQL statement built by sqlite3_mprintf (zSql is freed here).
** Returns SQLITE_OK or the error, with *pzErr set from the connection.
*/
static int storageExec(sqlite3 *db, char *zSql, char **pzErr) {
  int rc;
  if (zSql == NULL) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, zSql, 0, 0, NULL);
  if (rc != SQLITE_OK && pzErr) {
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(db));
  }
  sqlite3_free(zSql);
  return rc;
}

/*
** Returns cached statement iStmt of p, preparing it on first use, or NULL
** with *pRc set on error. The caller resets it after use.
*/
static sqlite3_stmt *storageStmt(ColvecStorage *p, int iStmt, int *pRc) {
  if (*pRc != SQLITE_OK) return NULL;
  if (p->apStmt[iStmt] == NULL) {
    const ColvecConfig *pC = p->pConfig;
    char *zSql;
    if (iStmt <= STORAGE_INSERT_IGNORE) {
      sqlite3_str *pStr = sqlite3_str_new(p->db);
      int i;
      sqlite3_str_appendf(pStr, "INSERT %s INTO \"%w\".\"%w_delta\"(rowid",
                          iStmt == STORAGE_INSERT_REPLACE  ? "OR REPLACE"
                          : iStmt == STORAGE_INSERT_IGNORE ? "OR IGNORE"
                                                           : "",
                          pC->zDb, pC->zName);
      for (i = 0; i < pC->nCol; i++)
        sqlite3_str_appendf(pStr, ", c%d", i);
      sqlite3_str_appendall(pStr, ") VALUES(?");
      for (i = 0; i < pC->nCol; i++)
        sqlite3_str_appendall(pStr, ", ?");
      sqlite3_str_appendall(pStr, ")");
      zSql = sqlite3_str_finish(pStr);
    } else {
      zSql = sqlite3_mprintf(storageSql[iStmt], pC->zDb, pC->zName, pC->zDb,
                             pC->zName, pC->zDb, pC->zName, pC->zDb, pC->zName);
    }
    if (zSql == NULL) {
      *pRc = SQLITE_NOMEM;
      return NULL;
    }
    *pRc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_PERSISTENT,
                              &p->apStmt[iStmt], NULL);
    sqlite3_free(zSql);
  }
  return p->apStmt[iStmt];
}

/*
** Steps a write statement once and resets it, clearing its bindings.
** Returns SQLITE_OK or the error (SQLITE_CONSTRAINT for a taken rowid).
*/
static int storageStepWrite(sqlite3_stmt *pStmt) {
  int rc = sqlite3_step(pStmt);
  int rc2 = sqlite3_reset(pStmt);
  sqlite3_clear_bindings(pStmt);
  if (rc == SQLITE_DONE || rc == SQLITE_ROW) return rc2;
  return rc2 != SQLITE_OK ? rc2 : rc;
}

/*
** Runs cached write statement iStmt with up to three integer parameters
** (nArg of them: a1, a2, a3). Returns SQLITE_OK or the error, with *pzErr
** set to "colvec: <SQLite's message>" when pzErr is not NULL.
*/
static int storageWrite(ColvecStorage *p, int iStmt, int nArg, sqlite3_int64 a1,
                        sqlite3_int64 a2, sqlite3_int64 a3, char **pzErr) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, iStmt, &rc);
  if (pStmt) {
    if (nArg > 0) sqlite3_bind_int64(pStmt, 1, a1);
    if (nArg > 1) sqlite3_bind_int64(pStmt, 2, a2);
    if (nArg > 2) sqlite3_bind_int64(pStmt, 3, a3);
    rc = storageStepWrite(pStmt);
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM && pzErr) {
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
  }
  return rc;
}

/*
** Reads the format version from T_config into *piVersion (0 when the row
** is missing). Returns SQLITE_OK or an error with *pzErr set.
*/
static int storageReadVersion(ColvecStorage *p, int *piVersion, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  sqlite3_int64 iVersion = 0;
  int rc = colvecStorageConfigGet(p, "version", &iVersion);
  *piVersion = (int)iVersion;
  if (rc == SQLITE_CORRUPT_VTAB) return SQLITE_OK; /* no row: version 0 */
  if ((rc & 0xff) == SQLITE_SCHEMA || (rc & 0xff) == SQLITE_BUSY ||
      (rc & 0xff) == SQLITE_LOCKED) {
    /* passed on as it is: SQLite retries a prepare that fails with
    ** SQLITE_SCHEMA once it has reset its schema (this happens when a
    ** failed CREATE VIRTUAL TABLE left the schema stale and a table is
    ** connected again while the statement is prepared) */
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
  } else if (rc != SQLITE_OK && rc != SQLITE_NOMEM) {
    *pzErr = sqlite3_mprintf("colvec: table %s: cannot read %s_config (%s)",
                             pC->zName, pC->zName, sqlite3_errmsg(p->db));
  }
  return rc;
}

/*
** Reads T_config.version of the table pConfig names with a statement of its
** own (no storage handle needed) into *piVersion (0 when missing or not an
** integer). Returns SQLITE_OK or the error of the read.
*/
static int storageVersionOf(sqlite3 *db, const ColvecConfig *pConfig,
                            int *piVersion) {
  sqlite3_stmt *pStmt = NULL;
  char *zSql = sqlite3_mprintf(
      "SELECT value FROM \"%w\".\"%w_config\" WHERE key='version'",
      pConfig->zDb, pConfig->zName);
  int rc;
  *piVersion = 0;
  if (zSql == NULL) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW &&
      sqlite3_column_type(pStmt, 0) == SQLITE_INTEGER) {
    *piVersion = sqlite3_column_int(pStmt, 0);
  }
  if (pStmt) rc = sqlite3_finalize(pStmt);
  return rc;
}

/* Checks that every shadow table exists; see colvecInt.h. */
int colvecStorageShadowCheck(sqlite3 *db, const ColvecConfig *pConfig,
                             char **pzErr) {
  sqlite3_stmt *pStmt = NULL;
  int rc = SQLITE_OK, i;
  char *zSql = sqlite3_mprintf(
      "SELECT 1 FROM \"%w\".sqlite_master WHERE type='table' AND "
      "name=(%Q || '_' || ?1) COLLATE NOCASE",
      pConfig->zDb, pConfig->zName);
  if (zSql == NULL) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  for (i = 0; rc == SQLITE_OK && i < STORAGE_NSHADOW_ALL; i++) {
    int bFound;
    if (i == STORAGE_SHADOW_SEGDATA) {
      /* T_segdata: only an embedded table must have it */
      int iVersion = 0;
      rc = storageVersionOf(db, pConfig, &iVersion);
      if (rc != SQLITE_OK) break;
      if (iVersion != COLVEC_FORMAT_EMBEDDED) continue;
    }
    if (i == STORAGE_SHADOW_IDS && !pConfig->bPkText) continue;
    sqlite3_bind_text(pStmt, 1, storageSuffix[i], -1, SQLITE_STATIC);
    bFound = sqlite3_step(pStmt) == SQLITE_ROW;
    rc = sqlite3_reset(pStmt);
    if (rc == SQLITE_OK && !bFound) {
      sqlite3_free(*pzErr);
      *pzErr = sqlite3_mprintf(
          "colvec: table %s is damaged: shadow table %s_%s is missing",
          pConfig->zName, pConfig->zName, storageSuffix[i]);
      rc = COLVEC_CORRUPT_VTAB;
    }
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM && *pzErr == NULL) {
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/* Explains an SQL error by a missing shadow table; see colvecInt.h. */
int colvecStorageDamaged(ColvecStorage *p, int rc, char **pzErr) {
  char *zErr = NULL;
  if (rc != SQLITE_ERROR || p == NULL) return rc;
  if (colvecStorageShadowCheck(p->db, p->pConfig, &zErr) ==
      SQLITE_CORRUPT_VTAB) {
    sqlite3_free(*pzErr);
    *pzErr = zErr;
    return SQLITE_CORRUPT_VTAB;
  }
  sqlite3_free(zErr);
  return rc;
}

/* Creates or checks the shadow tables; see colvecInt.h. */
int colvecStorageOpen(sqlite3 *db, const ColvecConfig *pConfig, int bCreate,
                      const char *zFolder, ColvecStorage **pp, char **pzErr) {
  static const char *const azType[] = {"INTEGER", "REAL", "TEXT", "BLOB"};
  int rc = SQLITE_OK;
  ColvecStorage *p = sqlite3_malloc(sizeof(ColvecStorage));
  *pp = NULL;
  if (p == NULL) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->pConfig = pConfig;
  p->iTxnGen = -1;
  if (bCreate) {
    sqlite3_str *pStr = sqlite3_str_new(db);
    int i;
    rc = storageExec(
        db,
        sqlite3_mprintf("CREATE TABLE \"%w\".\"%w_config\"(key TEXT PRIMARY "
                        "KEY, value) WITHOUT ROWID;"
                        "INSERT INTO \"%w\".\"%w_config\" VALUES('version', "
                        "%d), ('folder', %Q), ('next_segid', 1), "
                        "('generation', 0);"
                        "CREATE TABLE \"%w\".\"%w_manifest\"(segid INTEGER "
                        "PRIMARY KEY, nrow INTEGER NOT NULL, cksum INTEGER NOT "
                        "NULL, level INTEGER NOT NULL);"
                        "CREATE TABLE \"%w\".\"%w_tomb\"(segid INTEGER, rowid "
                        "INTEGER, PRIMARY KEY(segid, rowid)) WITHOUT ROWID;"
                        "CREATE TABLE \"%w\".\"%w_trash\"(segid INTEGER "
                        "PRIMARY KEY, generation INTEGER NOT NULL);",
                        pConfig->zDb, pConfig->zName, pConfig->zDb,
                        pConfig->zName,
                        pConfig->eStorage == COLVEC_STORAGE_EMBEDDED
                            ? COLVEC_FORMAT_EMBEDDED
                            : COLVEC_FORMAT_VERSION,
                        zFolder, pConfig->zDb, pConfig->zName, pConfig->zDb,
                        pConfig->zName, pConfig->zDb, pConfig->zName),
        pzErr);
    sqlite3_str_appendf(pStr,
                        "CREATE TABLE \"%w\".\"%w_delta\"(rowid INTEGER "
                        "PRIMARY KEY",
                        pConfig->zDb, pConfig->zName);
    for (i = 0; i < pConfig->nCol; i++) {
      const ColvecColumn *pCol = &pConfig->aCol[i];
      sqlite3_str_appendf(pStr, ", c%d %s", i,
                          pCol->bVector ? "BLOB" : azType[pCol->eAttr]);
    }
    sqlite3_str_appendall(pStr, ")");
    if (rc == SQLITE_OK) {
      rc = storageExec(db, sqlite3_str_finish(pStr), pzErr);
    } else {
      sqlite3_free(sqlite3_str_finish(pStr));
    }
    if (rc == SQLITE_OK && pConfig->eStorage == COLVEC_STORAGE_EMBEDDED) {
      rc = storageExec(
          db,
          sqlite3_mprintf(STORAGE_SEGDATA_DDL, pConfig->zDb, pConfig->zName),
          pzErr);
    }
    if (rc == SQLITE_OK && pConfig->bPkText) {
      rc = storageExec(
          db, sqlite3_mprintf(STORAGE_IDS_DDL, pConfig->zDb, pConfig->zName),
          pzErr);
    }
  } else {
    int iVersion = 0;
    rc = colvecStorageShadowCheck(db, pConfig, pzErr);
    if (rc == SQLITE_OK) rc = storageReadVersion(p, &iVersion, pzErr);
    if (rc == SQLITE_OK && iVersion != COLVEC_FORMAT_VERSION &&
        iVersion != COLVEC_FORMAT_EMBEDDED) {
      if (iVersion > COLVEC_FORMAT_EMBEDDED) {
        *pzErr = sqlite3_mprintf(
            "colvec: table %s uses storage format %d, newer than this colvec "
            "(%s, format %d): upgrade the colvec extension to open it",
            pConfig->zName, iVersion, COLVEC_VERSION, COLVEC_FORMAT_EMBEDDED);
      } else {
        *pzErr = sqlite3_mprintf(
            "colvec: table %s has no valid format version in %s_config "
            "(found %d): the table is damaged",
            pConfig->zName, pConfig->zName, iVersion);
      }
      rc = SQLITE_ERROR;
    }
  }
  if (rc != SQLITE_OK) {
    colvecStorageClose(p);
    return rc;
  }
  *pp = p;
  return SQLITE_OK;
}

/* Finalizes the cached statements and frees the handle. */
void colvecStorageClose(ColvecStorage *p) {
  if (p) {
    int i;
    for (i = 0; i < (int)(sizeof(p->apStmt) / sizeof(p->apStmt[0])); i++) {
      sqlite3_finalize(p->apStmt[i]);
    }
    for (i = 0; i < COLVEC_STORAGE_NSELECT; i++) {
      sqlite3_finalize(p->apSelect[i]);
    }
    sqlite3_free(p);
  }
}

/* Drops the shadow tables. */
int colvecStorageDestroy(ColvecStorage *p) {
  const ColvecConfig *pC = p->pConfig;
  int rc = SQLITE_OK;
  int i;
  for (i = 0; rc == SQLITE_OK && i < STORAGE_NSHADOW_ALL; i++) {
    rc = storageExec(p->db,
                     sqlite3_mprintf("DROP TABLE IF EXISTS \"%w\".\"%w_%s\"",
                                     pC->zDb, pC->zName, storageSuffix[i]),
                     NULL);
  }
  return rc;
}

/*
** Sets *pbExists to whether shadow table T_<zSuffix> exists. Returns
** SQLITE_OK or the error of the read.
*/
static int storageTableExists(ColvecStorage *p, const char *zSuffix,
                              int *pbExists) {
  const ColvecConfig *pC = p->pConfig;
  sqlite3_stmt *pStmt = NULL;
  char *zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE "
                               "type='table' AND name='%q_%q'",
                               pC->zDb, pC->zName, zSuffix);
  int rc;
  *pbExists = 0;
  if (zSql == NULL) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc == SQLITE_OK) {
    *pbExists = sqlite3_step(pStmt) == SQLITE_ROW;
    rc = sqlite3_finalize(pStmt);
  }
  return rc;
}

/* Renames the shadow tables to follow the table's new name zNew. */
int colvecStorageRename(ColvecStorage *p, const char *zNew) {
  const ColvecConfig *pC = p->pConfig;
  int rc = SQLITE_OK;
  int i;
  for (i = 0; rc == SQLITE_OK && i < STORAGE_NSHADOW_ALL; i++) {
    if (i >= STORAGE_NSHADOW) {
      /* T_segdata exists only for tables that were ever embedded, T_ids
      ** only for tables with a text primary key */
      int bExists = 0;
      rc = storageTableExists(p, storageSuffix[i], &bExists);
      if (rc != SQLITE_OK) break;
      if (!bExists) continue;
    }
    rc = storageExec(
        p->db,
        sqlite3_mprintf("ALTER TABLE \"%w\".\"%w_%s\" RENAME TO \"%w_%s\"",
                        pC->zDb, pC->zName, storageSuffix[i], zNew,
                        storageSuffix[i]),
        NULL);
  }
  return rc;
}

/* Binds cell pCell to parameter iBind of pStmt. */
static void storageBindCell(sqlite3_stmt *pStmt, int iBind,
                            const ColvecCell *pCell) {
  if (pCell->eNum == COLVEC_NUM_INTEGER) {
    sqlite3_bind_int64(pStmt, iBind, pCell->iNum);
  } else if (pCell->eNum == COLVEC_NUM_REAL) {
    sqlite3_bind_double(pStmt, iBind, pCell->rNum);
  } else if (pCell->pVal) {
    sqlite3_bind_value(pStmt, iBind, pCell->pVal);
  } else {
    sqlite3_bind_blob(pStmt, iBind, pCell->pBlob, pCell->nBlob, SQLITE_STATIC);
  }
}

/* Returns non-zero when cell pCell holds a value to write. */
static int storageCellSet(const ColvecCell *pCell) {
  return pCell->pVal != NULL || pCell->pBlob != NULL;
}

/* Returns 1 when row iRowid exists, 0 when not, or a negative error code. */
static int storageExists(ColvecStorage *p, sqlite3_int64 iRowid) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_DELTA_EXISTS, &rc);
  int bFound;
  if (pStmt == NULL) return -rc;
  sqlite3_bind_int64(pStmt, 1, iRowid);
  bFound = sqlite3_step(pStmt) == SQLITE_ROW;
  rc = sqlite3_reset(pStmt);
  return rc == SQLITE_OK ? bFound : -rc;
}

/* Inserts one row; see colvecInt.h. */
int colvecStorageInsert(ColvecStorage *p, sqlite3_value *pRowid,
                        const ColvecCell *aCell, ColvecConflict eConflict,
                        sqlite3_int64 *piRowid) {
  static const int aiStmt[] = {STORAGE_INSERT, STORAGE_INSERT_REPLACE,
                               STORAGE_INSERT_IGNORE};
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, aiStmt[eConflict], &rc);
  int i;
  if (pStmt == NULL) return rc;
  if (pRowid) {
    sqlite3_bind_value(pStmt, 1, pRowid);
  } else {
    sqlite3_bind_null(pStmt, 1);
  }
  for (i = 0; i < p->pConfig->nCol; i++) {
    storageBindCell(pStmt, i + 2, &aCell[i]);
  }
  rc = storageStepWrite(pStmt);
  if (rc == SQLITE_OK) {
    *piRowid =
        pRowid ? sqlite3_value_int64(pRowid) : sqlite3_last_insert_rowid(p->db);
  }
  return rc;
}

/* Updates one row; see colvecInt.h. */
int colvecStorageUpdate(ColvecStorage *p, sqlite3_int64 iOld,
                        sqlite3_int64 iNew, const ColvecCell *aCell,
                        ColvecConflict eConflict) {
  const ColvecConfig *pC = p->pConfig;
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = NULL;
  sqlite3_str *pStr;
  char *zSql;
  int i, iBind;
  if (iNew != iOld) {
    int bTaken = storageExists(p, iNew);
    if (bTaken < 0) return -bTaken;
    if (bTaken) {
      if (eConflict == COLVEC_CONFLICT_IGNORE) return SQLITE_OK;
      if (eConflict == COLVEC_CONFLICT_ABORT) return SQLITE_CONSTRAINT;
      rc = colvecStorageDelete(p, iNew);
      if (rc != SQLITE_OK) return rc;
    }
  }
  pStr = sqlite3_str_new(p->db);
  sqlite3_str_appendf(pStr, "UPDATE \"%w\".\"%w_delta\" SET rowid=?1", pC->zDb,
                      pC->zName);
  for (i = 0, iBind = 3; i < pC->nCol; i++) {
    if (storageCellSet(&aCell[i])) {
      sqlite3_str_appendf(pStr, ", c%d=?%d", i, iBind++);
    }
  }
  sqlite3_str_appendall(pStr, " WHERE rowid=?2");
  zSql = sqlite3_str_finish(pStr);
  if (zSql == NULL) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc != SQLITE_OK) return rc;
  sqlite3_bind_int64(pStmt, 1, iNew);
  sqlite3_bind_int64(pStmt, 2, iOld);
  for (i = 0, iBind = 3; i < pC->nCol; i++) {
    if (storageCellSet(&aCell[i])) storageBindCell(pStmt, iBind++, &aCell[i]);
  }
  sqlite3_step(pStmt);
  return sqlite3_finalize(pStmt);
}

/* Inserts a row whose columns a callback binds; see colvecInt.h. */
int colvecStorageInsertWith(ColvecStorage *p, sqlite3_int64 iRowid,
                            int (*xBind)(void *, int, sqlite3_stmt *, int),
                            void *pCtx) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_INSERT, &rc);
  int i;
  if (pStmt == NULL) return rc;
  sqlite3_bind_int64(pStmt, 1, iRowid);
  for (i = 0; rc == SQLITE_OK && i < p->pConfig->nCol; i++) {
    rc = xBind(pCtx, i, pStmt, i + 2);
  }
  if (rc != SQLITE_OK) {
    sqlite3_reset(pStmt);
    sqlite3_clear_bindings(pStmt);
    return rc;
  }
  return storageStepWrite(pStmt);
}

/* Deletes one row. */
int colvecStorageDelete(ColvecStorage *p, sqlite3_int64 iRowid) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_DELTA_DELETE, &rc);
  if (pStmt == NULL) return rc;
  sqlite3_bind_int64(pStmt, 1, iRowid);
  return storageStepWrite(pStmt);
}

/* Looks up the rowid of a text id; see colvecInt.h. */
int colvecStorageIdFind(ColvecStorage *p, sqlite3_value *pId,
                        sqlite3_int64 *piRowid, sqlite3_value **ppRowid) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_IDS_FIND, &rc);
  if (ppRowid) *ppRowid = NULL;
  if (pStmt == NULL) return rc;
  sqlite3_bind_value(pStmt, 1, pId);
  rc = sqlite3_step(pStmt);
  if (rc == SQLITE_ROW) {
    *piRowid = sqlite3_column_int64(pStmt, 0);
    if (ppRowid) {
      *ppRowid = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
      if (*ppRowid == NULL) rc = SQLITE_NOMEM;
    }
  }
  if (rc == SQLITE_ROW || rc == SQLITE_DONE || rc == SQLITE_NOMEM) {
    int rc2 = sqlite3_reset(pStmt);
    if (rc2 != SQLITE_OK && rc != SQLITE_NOMEM) rc = rc2;
  } else {
    sqlite3_reset(pStmt);
  }
  sqlite3_clear_bindings(pStmt);
  return rc;
}

/*
** Steps STORAGE_IDS_OF for row iRowid. Returns SQLITE_ROW (the id is
** column 0; the caller resets the statement), SQLITE_DONE or an error;
** *ppStmt is the statement in every case but an error of the prepare.
*/
static int storageIdOf(ColvecStorage *p, sqlite3_int64 iRowid,
                       sqlite3_stmt **ppStmt) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_IDS_OF, &rc);
  *ppStmt = pStmt;
  if (pStmt == NULL) return rc;
  sqlite3_bind_int64(pStmt, 1, iRowid);
  rc = sqlite3_step(pStmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    rc = sqlite3_reset(pStmt);
    if (rc == SQLITE_OK) rc = SQLITE_ERROR;
  }
  return rc;
}

/* Sets pCtx's result to the text id of a row; see colvecInt.h. */
int colvecStorageIdResult(ColvecStorage *p, sqlite3_int64 iRowid,
                          sqlite3_context *pCtx, char **pzErr) {
  sqlite3_stmt *pStmt = NULL;
  int rc = storageIdOf(p, iRowid, &pStmt);
  if (rc == SQLITE_ROW && sqlite3_column_type(pStmt, 0) == SQLITE_TEXT) {
    sqlite3_result_value(pCtx, sqlite3_column_value(pStmt, 0));
    rc = sqlite3_reset(pStmt);
  } else if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
    const ColvecConfig *pC = p->pConfig;
    sqlite3_reset(pStmt);
    *pzErr = sqlite3_mprintf("colvec: table %s is damaged: row %lld has no "
                             "text %s in %s_ids",
                             pC->zName, iRowid, pC->zPk, pC->zName);
    rc = COLVEC_CORRUPT_VTAB;
  }
  return rc;
}

/* Compares a text id with the one of a row; see colvecInt.h. */
int colvecStorageIdIs(ColvecStorage *p, sqlite3_int64 iRowid,
                      sqlite3_value *pId) {
  sqlite3_stmt *pStmt = NULL;
  int rc = storageIdOf(p, iRowid, &pStmt);
  int bSame = 0;
  if (rc == SQLITE_ROW) {
    int n = sqlite3_value_bytes(pId);
    const unsigned char *z = sqlite3_value_text(pId);
    bSame = sqlite3_column_type(pStmt, 0) == SQLITE_TEXT && z &&
            sqlite3_column_bytes(pStmt, 0) == n &&
            memcmp(sqlite3_column_text(pStmt, 0), z, (size_t)n) == 0;
  }
  if (rc == SQLITE_ROW || rc == SQLITE_DONE) rc = sqlite3_reset(pStmt);
  return rc == SQLITE_OK ? bSame : -rc;
}

/* Maps a text id to a row; see colvecInt.h. */
int colvecStorageIdAdd(ColvecStorage *p, sqlite3_value *pId,
                       sqlite3_int64 iRowid) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_IDS_ADD, &rc);
  if (pStmt == NULL) return rc;
  sqlite3_bind_int64(pStmt, 1, iRowid);
  sqlite3_bind_value(pStmt, 2, pId);
  rc = storageStepWrite(pStmt);
  return (rc & 0xff) == SQLITE_CONSTRAINT ? SQLITE_CONSTRAINT : rc;
}

/* Removes the text id of a row; see colvecInt.h. */
int colvecStorageIdDelete(ColvecStorage *p, sqlite3_int64 iRowid) {
  return storageWrite(p, STORAGE_IDS_DEL, 1, iRowid, 0, 0, NULL);
}

/* Integrity check of T_ids; see colvecInt.h. */
int colvecStorageIdCheck(ColvecStorage *p, sqlite3_int64 nLive,
                         int (*xLive)(void *, sqlite3_int64), void *pCtx,
                         char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  sqlite3_int64 nId = 0;
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_IDS_SCAN, &rc);
  while (pStmt && rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW) {
    sqlite3_int64 iRowid = sqlite3_column_int64(pStmt, 0);
    const char *zType = (const char *)sqlite3_column_text(pStmt, 1);
    int bLive;
    nId++;
    if (zType == NULL) {
      rc = SQLITE_NOMEM;
    } else if (strcmp(zType, "text") != 0) {
      *pzErr = sqlite3_mprintf("colvec: integrity-check: table %s: the %s of "
                               "row %lld in %s_ids is not text",
                               pC->zName, pC->zPk, iRowid, pC->zName);
      rc = COLVEC_CORRUPT_VTAB;
    } else if ((bLive = xLive(pCtx, iRowid)) < 0) {
      rc = -bLive;
    } else if (bLive == 0) {
      *pzErr = sqlite3_mprintf("colvec: integrity-check: table %s: %s_ids "
                               "holds the %s of rowid %lld, which is no row",
                               pC->zName, pC->zName, pC->zPk, iRowid);
      rc = COLVEC_CORRUPT_VTAB;
    }
  }
  if (pStmt) {
    int rc2 = sqlite3_reset(pStmt);
    if (rc == SQLITE_OK) rc = rc2;
  }
  if (rc == SQLITE_OK) {
    pStmt = storageStmt(p, STORAGE_IDS_DUP, &rc);
    if (pStmt && sqlite3_step(pStmt) == SQLITE_ROW) {
      *pzErr = sqlite3_mprintf("colvec: integrity-check: table %s: %s '%s' "
                               "is in %s_ids twice",
                               pC->zName, pC->zPk,
                               (const char *)sqlite3_column_text(pStmt, 0),
                               pC->zName);
      rc = COLVEC_CORRUPT_VTAB;
    }
    if (pStmt) {
      int rc2 = sqlite3_reset(pStmt);
      if (rc == SQLITE_OK) rc = rc2;
    }
  }
  if (rc == SQLITE_OK && nId != nLive) {
    *pzErr = sqlite3_mprintf("colvec: integrity-check: table %s: %lld rows "
                             "but %lld text %s values in %s_ids",
                             pC->zName, nLive, nId, pC->zPk, pC->zName);
    rc = COLVEC_CORRUPT_VTAB;
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM && *pzErr == NULL) {
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
  }
  return rc;
}

/* Returns non-zero when idxNum-style mask mUsed includes user column iCol. */
int colvecStorageUsesColumn(int mUsed, int iCol) {
  if (iCol >= COLVEC_PLAN_USED_HIGH) {
    return (mUsed >> COLVEC_PLAN_USED_HIGH) & 1;
  }
  return (mUsed >> iCol) & 1;
}

/* SQL text of each filter operator, indexed from COLVEC_OP_EQ. */
static const char *const storageOpSql[] = {
    "=",      "!=",      "<",           "<=",   ">",    ">=", "IS",
    "IS NOT", "IS NULL", "IS NOT NULL", "LIKE", "GLOB", "IN"};

/*
** Returns 1 when filter argument pArg (value pVal) is left to SQLite rather
** than written into the delta query: a number (or an IN list holding one)
** compared with a text column. SQLite may compare such a pair in numeric
** form ('5.0' = 5 when the number comes with an affinity of its own, as
** from an INTEGER column in a subquery), which a bound parameter, having
** no affinity, would not. In a scan every row is returned and SQLite
** re-checks; a KNN, which must decide its k rows itself, binds the value
** and compares as text, as SQLite compares a literal or a bound parameter
** (so does colvecScanBitmap on segments). LIKE and GLOB are functions,
** which apply no affinity: always written.
*/
static int storageFilterSkipped(const ColvecConfig *pC,
                                const ColvecPlanArg *pArg,
                                sqlite3_value *pVal) {
  const ColvecColumn *pCol;
  if (pArg->iCol == COLVEC_PLAN_ROWID || pArg->iCol < 0 ||
      pArg->iCol >= pC->nCol) {
    return 0;
  }
  pCol = &pC->aCol[pArg->iCol];
  if (pCol->bVector || pCol->eAttr != COLVEC_ATTR_TEXT ||
      pArg->eOp == COLVEC_OP_ISNULL || pArg->eOp == COLVEC_OP_NOTNULL ||
      pArg->eOp == COLVEC_OP_LIKE || pArg->eOp == COLVEC_OP_GLOB) {
    return 0;
  }
  if (pArg->eOp == COLVEC_OP_IN) {
    sqlite3_value *pMember = NULL;
    int rc;
    for (rc = sqlite3_vtab_in_first(pVal, &pMember); rc == SQLITE_OK && pMember;
         rc = sqlite3_vtab_in_next(pVal, &pMember)) {
      int e = sqlite3_value_type(pMember);
      if (e == SQLITE_INTEGER || e == SQLITE_FLOAT) return 1;
    }
    return 0;
  }
  return sqlite3_value_type(pVal) == SQLITE_INTEGER ||
         sqlite3_value_type(pVal) == SQLITE_FLOAT;
}

/* Most values of one IN list bound into the delta query; a longer list is
** evaluated outside SQL (colvecStorageInBound). */
#define STORAGE_IN_BIND_MAX 64

/* Decides whether an IN list is bound; see colvecInt.h. */
int colvecStorageInBound(ColvecStorage *p, const ColvecPlan *pPlan,
                         sqlite3_value **argv, int iArg) {
  sqlite3_value *pVal = NULL;
  int nVar = sqlite3_limit(p->db, SQLITE_LIMIT_VARIABLE_NUMBER, -1);
  int nIn = 0, nMax, n = 0, i, rc;
  for (i = 0; i < pPlan->nArg; i++) {
    if (pPlan->aArg[i].eOp == COLVEC_OP_IN) nIn++;
  }
  /* every other argument binds at most one value; the lists share the
  ** rest of the limit */
  nMax = nIn > 0 ? (nVar - pPlan->nArg) / nIn : 0;
  if (nMax > STORAGE_IN_BIND_MAX) nMax = STORAGE_IN_BIND_MAX;
  for (rc = sqlite3_vtab_in_first(argv[iArg], &pVal); rc == SQLITE_OK && pVal;
       rc = sqlite3_vtab_in_next(argv[iArg], &pVal)) {
    if (++n > nMax) return 0;
  }
  return 1; /* short, or an error that binding it reports */
}

/* Returns 1 when filter argument iArg of pPlan is left out of the delta
** query: storageFilterSkipped in a scan, or an IN list colvecStorageInBound
** leaves out. */
static int storageFilterLeftOut(ColvecStorage *p, const ColvecPlan *pPlan,
                                sqlite3_value **argv, int iArg) {
  const ColvecPlanArg *pArg = &pPlan->aArg[iArg];
  if (!pPlan->bKnn && storageFilterSkipped(p->pConfig, pArg, argv[iArg])) {
    return 1;
  }
  return pArg->eOp == COLVEC_OP_IN &&
         !colvecStorageInBound(p, pPlan, argv, iArg);
}

/*
** Appends the WHERE clause for the plan's filter arguments to pStr, and
** binds nothing yet: values are bound in the same order by
** storageBindFilters. Returns SQLITE_OK or an error (a malformed IN list).
*/
static int storageAppendFilters(sqlite3_str *pStr, ColvecStorage *p,
                                const ColvecPlan *pPlan, sqlite3_value **argv) {
  int i, bFirst = 1;
  for (i = 0; i < pPlan->nArg; i++) {
    const ColvecPlanArg *pArg = &pPlan->aArg[i];
    char zCol[24];
    if (pArg->eOp < COLVEC_OP_EQ) continue;
    if (storageFilterLeftOut(p, pPlan, argv, i)) continue;
    if (pArg->iCol == COLVEC_PLAN_ROWID) {
      memcpy(zCol, "rowid", 6);
    } else {
      sqlite3_snprintf(sizeof(zCol), zCol, "c%d", pArg->iCol);
    }
    sqlite3_str_appendall(pStr, bFirst ? " WHERE " : " AND ");
    bFirst = 0;
    sqlite3_str_appendf(pStr, "%s %s", zCol,
                        storageOpSql[pArg->eOp - COLVEC_OP_EQ]);
    if (pArg->eOp == COLVEC_OP_IN) {
      sqlite3_value *pVal = NULL;
      int rc, n = 0;
      sqlite3_str_appendall(pStr, " (");
      for (rc = sqlite3_vtab_in_first(argv[i], &pVal); rc == SQLITE_OK && pVal;
           rc = sqlite3_vtab_in_next(argv[i], &pVal)) {
        sqlite3_str_appendall(pStr, n++ ? ", ?" : "?");
      }
      if (rc != SQLITE_OK && rc != SQLITE_DONE) return rc;
      sqlite3_str_appendall(pStr, ")");
    } else if (pArg->eOp != COLVEC_OP_ISNULL &&
               pArg->eOp != COLVEC_OP_NOTNULL) {
      sqlite3_str_appendall(pStr, " ?");
    }
  }
  return SQLITE_OK;
}

/* Binds the filter values of the plan to pStmt, in storageAppendFilters'
** order. Returns SQLITE_OK or an error. */
static int storageBindFilters(sqlite3_stmt *pStmt, ColvecStorage *p,
                              const ColvecPlan *pPlan, sqlite3_value **argv) {
  int i, iBind = 1, rc = SQLITE_OK;
  for (i = 0; rc == SQLITE_OK && i < pPlan->nArg; i++) {
    const ColvecPlanArg *pArg = &pPlan->aArg[i];
    if (pArg->eOp < COLVEC_OP_EQ || pArg->eOp == COLVEC_OP_ISNULL ||
        pArg->eOp == COLVEC_OP_NOTNULL ||
        storageFilterLeftOut(p, pPlan, argv, i)) {
      continue;
    }
    if (pArg->eOp == COLVEC_OP_IN) {
      sqlite3_value *pVal = NULL;
      for (rc = sqlite3_vtab_in_first(argv[i], &pVal); rc == SQLITE_OK && pVal;
           rc = sqlite3_vtab_in_next(argv[i], &pVal)) {
        sqlite3_bind_value(pStmt, iBind++, pVal);
      }
      if (rc == SQLITE_DONE) rc = SQLITE_OK;
    } else {
      rc = sqlite3_bind_value(pStmt, iBind++, argv[i]);
    }
  }
  return rc;
}

/*
** Takes the statement kept for reuse whose SQL is zSql out of p->apSelect
** and returns it, or NULL when none is kept.
*/
static sqlite3_stmt *storageSelectTake(ColvecStorage *p, const char *zSql) {
  int i;
  for (i = 0; i < COLVEC_STORAGE_NSELECT; i++) {
    sqlite3_stmt *pStmt = p->apSelect[i];
    if (pStmt && strcmp(sqlite3_sql(pStmt), zSql) == 0) {
      p->apSelect[i] = NULL;
      return pStmt;
    }
  }
  return NULL;
}

/* Hands back a delta select; see colvecInt.h. */
int colvecStorageSelectDone(ColvecStorage *p, sqlite3_stmt *pStmt) {
  int rc, i;
  if (pStmt == NULL) return SQLITE_OK;
  rc = sqlite3_reset(pStmt);
  sqlite3_clear_bindings(pStmt);
  for (i = 0; rc == SQLITE_OK && i < COLVEC_STORAGE_NSELECT; i++) {
    if (p->apSelect[i] == NULL) {
      p->apSelect[i] = pStmt;
      return SQLITE_OK;
    }
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/* Prepares a delta select; see colvecInt.h. */
int colvecStorageSelect(ColvecStorage *p, int mUsed, const ColvecPlan *pPlan,
                        sqlite3_value **argv, int bOneRow,
                        sqlite3_stmt **ppStmt, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  sqlite3_str *pStr = sqlite3_str_new(p->db);
  char *zSql;
  int rc = SQLITE_OK;
  int i;
  *ppStmt = NULL;
  sqlite3_str_appendall(pStr, "SELECT rowid");
  for (i = 0; i < pC->nCol; i++) {
    if (colvecStorageUsesColumn(mUsed, i)) {
      sqlite3_str_appendf(pStr, ", c%d", i);
    } else {
      sqlite3_str_appendall(pStr, ", NULL");
    }
  }
  sqlite3_str_appendf(pStr, " FROM \"%w\".\"%w_delta\"", pC->zDb, pC->zName);
  if (bOneRow) {
    sqlite3_str_appendall(pStr, " WHERE rowid=?1");
  } else if (pPlan) {
    rc = storageAppendFilters(pStr, p, pPlan, argv);
  }
  zSql = sqlite3_str_finish(pStr);
  if (zSql == NULL) return SQLITE_NOMEM;
  if (rc == SQLITE_OK) {
    *ppStmt = storageSelectTake(p, zSql);
    if (*ppStmt == NULL) {
      rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_PERSISTENT,
                              ppStmt, NULL);
    }
  }
  sqlite3_free(zSql);
  if (rc == SQLITE_OK && pPlan && !bOneRow) {
    rc = storageBindFilters(*ppStmt, p, pPlan, argv);
  }
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
    sqlite3_finalize(*ppStmt);
    *ppStmt = NULL;
  }
  return rc;
}

/*
** Checks one stored value of column pCol in row iRowid. Returns SQLITE_OK or
** COLVEC_CORRUPT_VTAB with *pzErr describing the problem.
*/
static int storageCheckValue(const ColvecStorage *p, const ColvecColumn *pCol,
                             sqlite3_int64 iRowid, sqlite3_value *pVal,
                             char **pzErr) {
  static const int aeType[] = {SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT,
                               SQLITE_BLOB};
  int eType = sqlite3_value_type(pVal);
  if (pCol->bVector) {
    char zErr[COLVEC_VECTOR_ERRMAX];
    if (eType != SQLITE_BLOB ||
        colvecVectorCheck(sqlite3_value_blob(pVal), sqlite3_value_bytes(pVal),
                          pCol->eElem, pCol->nDim, zErr) != COLVEC_OK) {
      *pzErr = sqlite3_mprintf(
          "colvec: integrity-check: table %s row %lld: %s holds no valid "
          "%s[%d] vector",
          p->pConfig->zName, iRowid, pCol->zName, colvecElemName(pCol->eElem),
          pCol->nDim);
      return COLVEC_CORRUPT_VTAB;
    }
  } else if (eType != SQLITE_NULL && pCol->eAttr != COLVEC_ATTR_BLOB &&
             eType != aeType[pCol->eAttr]) {
    *pzErr = sqlite3_mprintf(
        "colvec: integrity-check: table %s row %lld: %s holds a value of the "
        "wrong type",
        p->pConfig->zName, iRowid, pCol->zName);
    return COLVEC_CORRUPT_VTAB;
  }
  return SQLITE_OK;
}

/* Checks every delta row; see colvecInt.h. */
int colvecStorageCheck(ColvecStorage *p, char **pzErr) {
  sqlite3_stmt *pStmt = NULL;
  int rc = colvecStorageSelect(p, -1, NULL, NULL, 0, &pStmt, pzErr);
  while (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW) {
    sqlite3_int64 iRowid = sqlite3_column_int64(pStmt, 0);
    int i;
    for (i = 0; rc == SQLITE_OK && i < p->pConfig->nCol; i++) {
      rc = storageCheckValue(p, &p->pConfig->aCol[i], iRowid,
                             sqlite3_column_value(pStmt, i + 1), pzErr);
    }
  }
  if (pStmt) {
    int rc2 = colvecStorageSelectDone(p, pStmt);
    if (rc == SQLITE_OK && rc2 != SQLITE_OK) {
      rc = rc2;
      *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
    }
  }
  return rc;
}

/* Reads integer key zKey of T_config into *piVal; see colvecInt.h. */
int colvecStorageConfigGet(ColvecStorage *p, const char *zKey,
                           sqlite3_int64 *piVal) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_CONFIG_GET, &rc);
  if (pStmt == NULL) return rc;
  sqlite3_bind_text(pStmt, 1, zKey, -1, SQLITE_STATIC);
  rc = sqlite3_step(pStmt);
  if (rc == SQLITE_ROW) {
    *piVal = sqlite3_column_int64(pStmt, 0);
    rc = SQLITE_OK;
  } else if (rc == SQLITE_DONE) {
    rc = COLVEC_CORRUPT_VTAB;
  }
  /* any other code is an error of the read (SQLITE_SCHEMA inside xConnect,
  ** SQLITE_BUSY, ...), never "missing": the caller passes it on */
  sqlite3_reset(pStmt);
  sqlite3_clear_bindings(pStmt);
  return rc;
}

/* Writes integer key zKey of T_config; see colvecInt.h. */
int colvecStorageConfigSet(ColvecStorage *p, const char *zKey,
                           sqlite3_int64 iVal) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_CONFIG_SET, &rc);
  if (pStmt == NULL) return rc;
  sqlite3_bind_text(pStmt, 1, zKey, -1, SQLITE_STATIC);
  sqlite3_bind_int64(pStmt, 2, iVal);
  return storageStepWrite(pStmt);
}

/* Reads and validates the segment folder name; see colvecInt.h. */
int colvecStorageFolder(ColvecStorage *p, char **pzFolder, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_CONFIG_GET, &rc);
  *pzFolder = NULL;
  if (pStmt) {
    sqlite3_bind_text(pStmt, 1, "folder", -1, SQLITE_STATIC);
    rc = sqlite3_step(pStmt);
  }
  if (rc == SQLITE_ROW) {
    /* untrusted: a TEXT value without NUL that names a folder directly
    ** under <db>-colvec/, checked before any file is touched */
    int eType = sqlite3_column_type(pStmt, 0); /* before any conversion */
    const char *z = (const char *)sqlite3_column_text(pStmt, 0);
    int n = sqlite3_column_bytes(pStmt, 0);
    rc = SQLITE_OK;
    if (eType != SQLITE_TEXT || z == NULL || (int)strlen(z) != n ||
        colvecStorageFolderCheck(z, n) == 0) {
      *pzErr = sqlite3_mprintf(
          "colvec: table %s: invalid segment folder name in %s_config (it "
          "must name a folder directly under the database's -colvec "
          "folder): the table is damaged",
          pC->zName, pC->zName);
      rc = SQLITE_CORRUPT_VTAB;
    } else {
      *pzFolder = sqlite3_mprintf("%s", z);
      if (*pzFolder == NULL) rc = SQLITE_NOMEM;
    }
  } else if (rc == SQLITE_DONE) {
    *pzErr = sqlite3_mprintf("colvec: table %s has no segment folder in "
                             "%s_config: the table is damaged",
                             pC->zName, pC->zName);
    rc = SQLITE_CORRUPT_VTAB;
  } else if (rc != SQLITE_NOMEM) {
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
  }
  if (pStmt) sqlite3_reset(pStmt);
  return rc;
}

/*
** Number of delta rows in *pn and the largest delta rowid in *piMax
** (INT64_MIN when the delta is empty); either pointer may be NULL.
*/
int colvecStorageDeltaStat(ColvecStorage *p, sqlite3_int64 *pn,
                           sqlite3_int64 *piMax) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_DELTA_STAT, &rc);
  if (piMax) *piMax = INT64_MIN;
  if (pStmt == NULL) return rc;
  if (sqlite3_step(pStmt) == SQLITE_ROW) {
    if (pn) *pn = sqlite3_column_int64(pStmt, 0);
    if (piMax && sqlite3_column_type(pStmt, 1) != SQLITE_NULL) {
      *piMax = sqlite3_column_int64(pStmt, 1);
    }
  }
  return sqlite3_reset(pStmt);
}

/* Returns 1 when delta row iRowid exists, 0 when not, negative on error. */
int colvecStorageDeltaHas(ColvecStorage *p, sqlite3_int64 iRowid) {
  return storageExists(p, iRowid);
}

/* Empties the delta; see colvecInt.h. */
int colvecStorageDeltaClear(ColvecStorage *p, char **pzErr) {
  return storageWrite(p, STORAGE_DELTA_CLEAR, 0, 0, 0, 0, pzErr);
}

/* Loads every delta row into batch pBatch; see colvecInt.h. */
int colvecStorageLoadDelta(ColvecStorage *p, ColvecBatch *pBatch,
                           char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  sqlite3_stmt *pStmt = NULL;
  ColvecCell *aCell =
      sqlite3_malloc64(sizeof(ColvecCell) * (sqlite3_uint64)pC->nCol);
  int rc;
  if (aCell == NULL) return SQLITE_NOMEM;
  rc = colvecStorageSelect(p, -1, NULL, NULL, 0, &pStmt, pzErr);
  while (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW) {
    sqlite3_int64 iRowid = sqlite3_column_int64(pStmt, 0);
    int i;
    for (i = 0; rc == SQLITE_OK && i < pC->nCol; i++) {
      sqlite3_value *pVal = sqlite3_column_value(pStmt, i + 1);
      memset(&aCell[i], 0, sizeof(ColvecCell));
      rc = storageCheckValue(p, &pC->aCol[i], iRowid, pVal, pzErr);
      if (pC->aCol[i].bVector) {
        aCell[i].pBlob = sqlite3_value_blob(pVal);
        aCell[i].nBlob = sqlite3_value_bytes(pVal);
      } else {
        aCell[i].pVal = pVal;
      }
    }
    if (rc == SQLITE_OK) rc = colvecBatchAppend(pBatch, iRowid, aCell);
  }
  if (pStmt) {
    int rc2 = colvecStorageSelectDone(p, pStmt);
    if (rc == SQLITE_OK) rc = rc2;
  }
  sqlite3_free(aCell);
  return rc;
}

/*************************************************************************
** The segments recorded for the table: T_manifest, T_tomb, T_trash.
*/

/* Records a new live segment; see colvecInt.h. */
int colvecStorageManifestAdd(ColvecStorage *p, sqlite3_int64 iSegid,
                             sqlite3_int64 nRow, sqlite3_uint64 cksum,
                             int iLevel, char **pzErr) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_MANIFEST_ADD, &rc);
  if (pStmt) {
    sqlite3_bind_int64(pStmt, 1, iSegid);
    sqlite3_bind_int64(pStmt, 2, nRow);
    sqlite3_bind_int64(pStmt, 3, (sqlite3_int64)cksum);
    sqlite3_bind_int64(pStmt, 4, iLevel);
    rc = storageStepWrite(pStmt);
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM) {
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
  }
  return rc;
}

/* Moves a segment from the manifest to the trash; see colvecInt.h. */
int colvecStorageManifestDrop(ColvecStorage *p, sqlite3_int64 iSegid,
                              sqlite3_int64 iGen, char **pzErr) {
  int rc = storageWrite(p, STORAGE_MANIFEST_DEL, 1, iSegid, 0, 0, pzErr);
  if (rc == SQLITE_OK) {
    rc = storageWrite(p, STORAGE_TOMB_DROP, 1, iSegid, 0, 0, pzErr);
  }
  if (rc == SQLITE_OK) {
    rc = storageWrite(p, STORAGE_TRASH_ADD, 2, iSegid, iGen, 0, pzErr);
  }
  if (rc == SQLITE_OK) {
    /* an embedded table's copy of the bytes goes in the same transaction;
    ** the file stays for older readers until cleanup */
    int bEmbed = colvecStorageEmbedded(p);
    if (bEmbed < 0) rc = -bEmbed;
    if (bEmbed > 0) {
      rc = storageWrite(p, STORAGE_SEGDATA_DEL, 1, iSegid, 0, 0, pzErr);
    }
  }
  return rc;
}

/*************************************************************************
** The bytes of segments of an embedded table: T_segdata.
*/

/* Whether the table is embedded; see colvecInt.h. */
int colvecStorageEmbedded(ColvecStorage *p) {
  sqlite3_int64 iVersion = 0;
  int rc = colvecStorageConfigGet(p, "version", &iVersion);
  if (rc != SQLITE_OK) return rc == SQLITE_CORRUPT_VTAB ? 0 : -rc;
  return iVersion == COLVEC_FORMAT_EMBEDDED;
}

/* Stores one chunk of a segment's bytes; see colvecInt.h. */
int colvecStorageSegDataAdd(ColvecStorage *p, sqlite3_int64 iSegid,
                            sqlite3_int64 iChunk, const void *a, int n,
                            char **pzErr) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_SEGDATA_ADD, &rc);
  if (pStmt) {
    sqlite3_bind_int64(pStmt, 1, iSegid);
    sqlite3_bind_int64(pStmt, 2, iChunk);
    sqlite3_bind_blob(pStmt, 3, a, n, SQLITE_STATIC);
    rc = storageStepWrite(pStmt);
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM) {
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
  }
  return rc;
}

/*
** Reads the places of the chunks of segment iSegid: their rowids into
** *paRowid and sizes into *paLen (sqlite3_malloc'd, caller frees, also on
** error), their number into *pnChunk. Returns SQLITE_OK, SQLITE_NOMEM,
** COLVEC_CORRUPT_VTAB with *pzErr for a chunk missing or not a BLOB, or
** another error with *pzErr set.
*/
static int storageSegDataPlaces(ColvecStorage *p, sqlite3_int64 iSegid,
                                sqlite3_int64 **paRowid, int **paLen,
                                int *pnChunk, char **pzErr) {
  int rc = SQLITE_OK, rcReset, nAlloc = 0;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_SEGDATA_READ, &rc);
  *paRowid = NULL;
  *paLen = NULL;
  *pnChunk = 0;
  if (pStmt == NULL) return rc;
  sqlite3_bind_int64(pStmt, 1, iSegid);
  while (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW) {
    int n = *pnChunk;
    if (n == nAlloc) {
      sqlite3_int64 *aR;
      int *aL;
      nAlloc = nAlloc ? nAlloc * 2 : 16;
      aR = sqlite3_realloc64(*paRowid, sizeof(sqlite3_int64) * nAlloc);
      if (aR) *paRowid = aR;
      aL = aR ? sqlite3_realloc64(*paLen, sizeof(int) * nAlloc) : NULL;
      if (aL) *paLen = aL;
      if (aL == NULL) {
        rc = SQLITE_NOMEM;
        break;
      }
    }
    if (sqlite3_column_int64(pStmt, 1) != n || !sqlite3_column_int(pStmt, 3) ||
        sqlite3_column_int(pStmt, 2) <= 0) {
      /* colvec never stores an empty chunk */
      *pzErr = sqlite3_mprintf(
          "colvec: segment %lld of table %s: chunk %d of its stored bytes is "
          "%s: the table is damaged",
          (long long)iSegid, p->pConfig->zName, n,
          sqlite3_column_int64(pStmt, 1) != n ? "missing"
          : !sqlite3_column_int(pStmt, 3)     ? "not a BLOB"
                                              : "empty");
      rc = COLVEC_CORRUPT_VTAB;
      break;
    }
    (*paRowid)[n] = sqlite3_column_int64(pStmt, 0);
    (*paLen)[n] = sqlite3_column_int(pStmt, 2);
    *pnChunk = n + 1;
  }
  rcReset = sqlite3_reset(pStmt);
  if (rc == SQLITE_OK && rcReset != SQLITE_OK) {
    rc = rcReset;
    if (rc != SQLITE_NOMEM) {
      *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
    }
  }
  return rc;
}

/* Reads the chunks of one segment into a sink; see colvecInt.h. */
int colvecStorageSegDataRead(ColvecStorage *p, sqlite3_int64 iSegid,
                             const ColvecSegDataSink *pSink, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  sqlite3_int64 *aRowid = NULL, nByte = 0, iOff = 0;
  int *aLen = NULL, nChunk = 0, nMax = 0, i;
  sqlite3_blob *pBlob = NULL;
  char *zTab = NULL;
  int rc = storageSegDataPlaces(p, iSegid, &aRowid, &aLen, &nChunk, pzErr);
  for (i = 0; rc == SQLITE_OK && i < nChunk; i++) {
    nByte += aLen[i];
    if (aLen[i] > nMax) nMax = aLen[i];
  }
  if (rc == SQLITE_OK) rc = pSink->xSize(pSink->pCtx, nByte, nMax);
  if (rc == SQLITE_OK && nChunk > 0) {
    zTab = sqlite3_mprintf("%s_segdata", pC->zName);
    if (zTab == NULL) rc = SQLITE_NOMEM;
  }
  for (i = 0; rc == SQLITE_OK && i < nChunk; i++) {
    void *aDest = pSink->xDest(pSink->pCtx, iOff, aLen[i]);
    if (pBlob == NULL) {
      rc =
          sqlite3_blob_open(p->db, pC->zDb, zTab, "data", aRowid[i], 0, &pBlob);
    } else {
      rc = sqlite3_blob_reopen(pBlob, aRowid[i]);
    }
    if (rc == SQLITE_OK && sqlite3_blob_bytes(pBlob) != aLen[i]) {
      *pzErr = sqlite3_mprintf(
          "colvec: segment %lld of table %s: chunk %d of its stored bytes "
          "changed while it was read",
          (long long)iSegid, pC->zName, i);
      rc = COLVEC_CORRUPT_VTAB;
      break;
    }
    if (rc == SQLITE_OK && aLen[i] > 0) {
      rc = sqlite3_blob_read(pBlob, aDest, aLen[i], 0);
    }
    if (rc != SQLITE_OK) {
      if (rc != SQLITE_NOMEM) {
        *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
      }
      break;
    }
    rc = pSink->xChunk(pSink->pCtx, iOff, aLen[i]);
    iOff += aLen[i];
  }
  sqlite3_blob_close(pBlob);
  sqlite3_free(zTab);
  sqlite3_free(aRowid);
  sqlite3_free(aLen);
  return rc;
}

/* Switches the table's storage; see colvecInt.h. */
int colvecStorageSetEmbedded(ColvecStorage *p, int bEmbed, char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  int rc = SQLITE_OK;
  if (bEmbed) {
    rc = storageExec(
        p->db, sqlite3_mprintf(STORAGE_SEGDATA_DDL, pC->zDb, pC->zName), pzErr);
  } else {
    /* the table itself stays, empty: DROP TABLE cannot run while the
    ** statement that gave the command does; DROP of the colvec table
    ** removes it, an older colvec ignores it */
    rc = storageWrite(p, STORAGE_SEGDATA_CLEAR, 0, 0, 0, 0, pzErr);
  }
  if (rc == SQLITE_OK) {
    rc = colvecStorageConfigSet(
        p, "version", bEmbed ? COLVEC_FORMAT_EMBEDDED : COLVEC_FORMAT_VERSION);
    if (rc != SQLITE_OK && rc != SQLITE_NOMEM) {
      *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
    }
  }
  return rc;
}

/* Steps through the live segments; see colvecInt.h. */
int colvecStorageManifestScan(ColvecStorage *p,
                              int (*xSeg)(void *, sqlite3_int64, sqlite3_int64,
                                          sqlite3_uint64, char **),
                              void *pCtx, char **pzErr) {
  int rc = SQLITE_OK, rcCb = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_MANIFEST_SCAN, &rc);
  while (pStmt && rcCb == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW) {
    rcCb = xSeg(pCtx, sqlite3_column_int64(pStmt, 0),
                sqlite3_column_int64(pStmt, 1),
                (sqlite3_uint64)sqlite3_column_int64(pStmt, 2), pzErr);
  }
  if (pStmt) rc = sqlite3_reset(pStmt);
  if (rcCb != SQLITE_OK) return rcCb;
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM) {
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
  }
  return rc;
}

/* Records a tombstone; see colvecInt.h. */
int colvecStorageTombAdd(ColvecStorage *p, sqlite3_int64 iSegid,
                         sqlite3_int64 iRowid, char **pzErr) {
  return storageWrite(p, STORAGE_TOMB_ADD, 2, iSegid, iRowid, 0, pzErr);
}

/* Steps through every tombstone; see colvecInt.h. */
int colvecStorageTombScan(ColvecStorage *p,
                          int (*xTomb)(void *, sqlite3_int64, sqlite3_int64),
                          void *pCtx, char **pzErr) {
  int rc = SQLITE_OK, rcCb = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_TOMB_SCAN, &rc);
  while (pStmt && rcCb == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW) {
    rcCb = xTomb(pCtx, sqlite3_column_int64(pStmt, 0),
                 sqlite3_column_int64(pStmt, 1));
  }
  if (pStmt) rc = sqlite3_reset(pStmt);
  if (rcCb != SQLITE_OK) rc = rcCb;
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM) {
    *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
  }
  return rc;
}

/* Whether a row still names a segment file; see colvecInt.h. */
int colvecStorageSegNeeded(ColvecStorage *p, sqlite3_int64 iSegid,
                           sqlite3_int64 iKeep, sqlite3_int64 iGen,
                           int bAnyTrash) {
  int rc = SQLITE_OK, bNeeded;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_SEG_NEEDED, &rc);
  if (pStmt == NULL) return -rc;
  sqlite3_bind_int64(pStmt, 1, iSegid);
  sqlite3_bind_int64(pStmt, 2, iKeep);
  sqlite3_bind_int64(pStmt, 3, iGen);
  sqlite3_bind_int(pStmt, 4, bAnyTrash);
  bNeeded = sqlite3_step(pStmt) == SQLITE_ROW;
  rc = sqlite3_reset(pStmt);
  return rc == SQLITE_OK ? bNeeded : -rc;
}

/* Reads and checks the segment counters; see colvecInt.h. */
int colvecStorageCounters(ColvecStorage *p, sqlite3_int64 *piNextSegid,
                          sqlite3_int64 *piGen, char **pzErr) {
  const char *zName = p->pConfig->zName;
  sqlite3_int64 iNext = 0, iGen = 0, iMaxSeg = 0, iMaxGen = 0, iLo;
  const char *zWhy = NULL;
  int rc = colvecStorageConfigGet(p, "next_segid", &iNext);
  sqlite3_stmt *pStmt;
  if (rc == SQLITE_OK) rc = colvecStorageConfigGet(p, "generation", &iGen);
  if (rc == COLVEC_CORRUPT_VTAB) {
    *pzErr = sqlite3_mprintf("colvec: table %s is damaged: %s_config lacks "
                             "next_segid or generation",
                             zName, zName);
    return rc;
  }
  pStmt = storageStmt(p, STORAGE_SEG_BOUNDS, &rc);
  if (pStmt && sqlite3_step(pStmt) == SQLITE_ROW) {
    int i;
    for (i = 0; i < 2; i++) {
      sqlite3_int64 v = sqlite3_column_int64(pStmt, i);
      if (v > iMaxSeg) iMaxSeg = v;
    }
    iMaxGen = sqlite3_column_int64(pStmt, 2);
    /* a row -g names transaction g (created and dropped in it) */
    iLo = sqlite3_column_int64(pStmt, 3);
    if (iLo < 0) {
      iLo = iLo < -COLVEC_COUNTER_MAX ? COLVEC_COUNTER_MAX : -iLo;
      if (iLo > iMaxGen) iMaxGen = iLo;
    }
  }
  if (pStmt) rc = sqlite3_reset(pStmt);
  if (rc != SQLITE_OK) {
    if (rc != SQLITE_NOMEM) {
      *pzErr = sqlite3_mprintf("colvec: %s", sqlite3_errmsg(p->db));
    }
    return rc;
  }
  if (iNext < 1 || iNext >= COLVEC_COUNTER_MAX) {
    zWhy = "next_segid is out of range";
  } else if (iNext <= iMaxSeg) {
    zWhy = "next_segid names a segment that already exists";
  } else if (iGen < 0 || iGen >= COLVEC_COUNTER_MAX) {
    zWhy = "generation is out of range";
  } else if (iGen < iMaxGen) {
    zWhy = "generation is older than a dropped segment";
  }
  if (zWhy) {
    *pzErr = sqlite3_mprintf(
        "colvec: table %s is damaged: %s_config %s (next_segid %lld, "
        "generation %lld; largest segid named %lld, generation %lld); no "
        "file was written",
        zName, zName, zWhy, (long long)iNext, (long long)iGen,
        (long long)iMaxSeg, (long long)iMaxGen);
    return COLVEC_CORRUPT_VTAB;
  }
  if (piNextSegid) *piNextSegid = iNext;
  if (piGen) *piGen = iGen;
  return SQLITE_OK;
}

/* Integrity check of one segment file's name; see colvecInt.h. */
int colvecStorageSegNamed(ColvecStorage *p, sqlite3_int64 iSegid,
                          const char *zFile, char **pzErr) {
  /* any trash row counts, however old: its file may await cleanup */
  int bNamed = colvecStorageSegNeeded(p, iSegid, 0, 0, 1);
  if (bNamed < 0) return -bNamed;
  if (bNamed == 0) {
    const char *zName = p->pConfig->zName;
    *pzErr = sqlite3_mprintf(
        "colvec: integrity-check: table %s: segment file %s is named by no "
        "row of %s_manifest or %s_trash",
        zName, zFile, zName, zName);
    return COLVEC_CORRUPT_VTAB;
  }
  return SQLITE_OK;
}

/* Drops trash rows no reader can need; see colvecInt.h. */
int colvecStorageTrashPrune(ColvecStorage *p, sqlite3_int64 iKeep,
                            sqlite3_int64 iGen, char **pzErr) {
  return storageWrite(p, STORAGE_TRASH_PRUNE, 2, iKeep, iGen, 0, pzErr);
}

/*************************************************************************
** Pragmas of the table's schema.
*/

/* PRAGMA data_version of the table's schema; see colvecInt.h. */
int colvecStorageDataVersion(ColvecStorage *p, sqlite3_int64 *piVersion) {
  int rc = SQLITE_OK;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_DATA_VERSION, &rc);
  if (pStmt == NULL) return rc;
  if (sqlite3_step(pStmt) == SQLITE_ROW) {
    *piVersion = sqlite3_column_int64(pStmt, 0);
  }
  return sqlite3_reset(pStmt);
}

/* Whether the table's database is in WAL mode; see colvecInt.h. */
int colvecStorageIsWal(ColvecStorage *p) {
  int rc = SQLITE_OK, bWal = 0;
  sqlite3_stmt *pStmt = storageStmt(p, STORAGE_JOURNAL_MODE, &rc);
  if (pStmt == NULL) return 0;
  if (sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *z = (const char *)sqlite3_column_text(pStmt, 0);
    bWal = z && sqlite3_stricmp(z, "wal") == 0;
  }
  sqlite3_reset(pStmt);
  return bWal;
}

/* Whether a newer commit dropped the table; see colvecInt.h. */
int colvecStorageDroppedLater(ColvecStorage *p, const char *zFolder) {
  const ColvecConfig *pC = p->pConfig;
  const char *zFile = sqlite3_db_filename(p->db, pC->zDb);
  sqlite3 *db2 = NULL;
  sqlite3_stmt *pStmt = NULL;
  char *zSql;
  int bDropped = 0, rc;
  if (zFile == NULL || zFile[0] == 0 || !colvecStorageIsWal(p)) return 0;
  zSql = sqlite3_mprintf(
      "SELECT value FROM \"main\".\"%w_config\" WHERE key='folder'", pC->zName);
  if (zSql == NULL) return 0;
  /* a connection of its own reads the newest commit (this one is held at
  ** its snapshot); it reads one shadow table, no colvec table */
  rc = sqlite3_open_v2(zFile, &db2, SQLITE_OPEN_READONLY, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_prepare_v2(db2, zSql, -1, &pStmt, NULL);
    if (rc == SQLITE_ERROR &&
        sqlite3_strglob("no such table: *", sqlite3_errmsg(db2)) == 0) {
      bDropped = 1; /* gone */
    }
  }
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(pStmt);
    if (rc == SQLITE_DONE) {
      bDropped = 1;
    } else if (rc == SQLITE_ROW) {
      const char *z = (const char *)sqlite3_column_text(pStmt, 0);
      /* the name was taken by a newer table */
      bDropped = z == NULL || strcmp(z, zFolder) != 0;
    }
  }
  sqlite3_finalize(pStmt);
  sqlite3_close(db2);
  sqlite3_free(zSql);
  return bDropped;
}

/*************************************************************************
** The names of the shadow tables and the folders of every table.
*/

/* Returns non-zero when c is a letter, a digit, '_' or '-'. */
static int storageLegacyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* Returns non-zero when c is an upper-case hexadecimal digit. */
static int storageHexUpper(char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
}

/* Classifies a folder name read back from T_config; see colvecInt.h. */
int colvecStorageFolderCheck(const char *z, int n) {
  int i, bId = n == COLVEC_FOLDER_ID_LEN;
  if (z == NULL || n <= 0 || n > COLVEC_FOLDER_MAX) return 0;
  for (i = 0; i < n && bId; i++) {
    bId = (z[i] >= '0' && z[i] <= '9') || (z[i] >= 'a' && z[i] <= 'f');
  }
  if (bId) return COLVEC_FOLDER_ID;
  /* the old layout: the table name, bytes other than [A-Za-z0-9_-] as %XX */
  for (i = 0; i < n; i++) {
    if (storageLegacyChar(z[i])) continue;
    if (z[i] == '%' && i + 2 < n && storageHexUpper(z[i + 1]) &&
        storageHexUpper(z[i + 2])) {
      i += 2;
      continue;
    }
    return 0;
  }
  return COLVEC_FOLDER_LEGACY;
}

/* Frees a list returned by colvecStorageFolderList(). */
void colvecStorageFolderListFree(ColvecFolderList *pList) {
  int i;
  for (i = 0; i < pList->n; i++) {
    sqlite3_free(pList->azTable[i]);
    sqlite3_free(pList->azFolder[i]);
  }
  sqlite3_free(pList->azTable);
  sqlite3_free(pList->azFolder);
  memset(pList, 0, sizeof(*pList));
}

/*
** Appends (zTable, the folder named in zTable's T_config) to pList.
** Returns SQLITE_OK, or an error when the folder cannot be read.
*/
static int storageFolderListAdd(sqlite3 *db, const char *zDb,
                                const char *zTable, ColvecFolderList *pList) {
  sqlite3_stmt *pStmt = NULL;
  char *zSql = sqlite3_mprintf(
      "SELECT value FROM \"%w\".\"%w_config\" WHERE key='folder'", zDb, zTable);
  int rc;
  if (zSql == NULL) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  if (rc == SQLITE_OK) {
    if (sqlite3_step(pStmt) == SQLITE_ROW) {
      int n = pList->n;
      if ((n & 15) == 0) {
        char **a1 =
            sqlite3_realloc64(pList->azTable, sizeof(char *) * (n + 16));
        char **a2 =
            a1 ? sqlite3_realloc64(pList->azFolder, sizeof(char *) * (n + 16))
               : NULL;
        if (a1) pList->azTable = a1;
        if (a2) pList->azFolder = a2;
        if (a2 == NULL) rc = SQLITE_NOMEM;
      }
      if (rc == SQLITE_OK) {
        /* any value, even a damaged one, counts as named (text up to a NUL) */
        const char *z = (const char *)sqlite3_column_text(pStmt, 0);
        pList->azTable[n] = sqlite3_mprintf("%s", zTable);
        pList->azFolder[n] = sqlite3_mprintf("%s", z ? z : "");
        pList->n++;
        if (pList->azTable[n] == NULL || pList->azFolder[n] == NULL) {
          rc = SQLITE_NOMEM;
        }
      }
    } else {
      rc = SQLITE_CORRUPT_VTAB; /* no folder row: cannot tell what it names */
    }
    {
      int rc2 = sqlite3_finalize(pStmt);
      if (rc == SQLITE_OK) rc = rc2;
    }
  }
  return rc;
}

/* Lists the folders every colvec table of a database names; see colvecInt.h. */
int colvecStorageFolderList(sqlite3 *db, const char *zDb, const char *zSkip,
                            ColvecFolderList *pList) {
  sqlite3_stmt *pStmt = NULL;
  char *zSql = sqlite3_mprintf(
      "SELECT name, sql FROM \"%w\".sqlite_schema WHERE type='table' AND "
      "sql LIKE 'CREATE VIRTUAL TABLE%%'",
      zDb);
  int rc;
  memset(pList, 0, sizeof(*pList));
  if (zSql == NULL) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
  sqlite3_free(zSql);
  while (rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *zName = (const char *)sqlite3_column_text(pStmt, 0);
    const char *zCreate = (const char *)sqlite3_column_text(pStmt, 1);
    if (zName == NULL || zCreate == NULL) continue;
    if (zSkip && sqlite3_stricmp(zName, zSkip) == 0) continue;
    /* a colvec table's statement names the module; any other is skipped,
    ** a table that merely mentions colvec must be readable as one */
    if (sqlite3_strlike("%colvec%", zCreate, 0) != 0) continue;
    rc = storageFolderListAdd(db, zDb, zName, pList);
  }
  if (pStmt) {
    int rc2 = sqlite3_finalize(pStmt);
    if (rc == SQLITE_OK) rc = rc2;
  }
  if (rc != SQLITE_OK) colvecStorageFolderListFree(pList);
  return rc;
}

/* Refuses a folder another table names too; see colvecInt.h. */
int colvecStorageFolderShared(ColvecStorage *p, const char *zFolder,
                              char **pzErr) {
  const ColvecConfig *pC = p->pConfig;
  ColvecFolderList list;
  int rc = SQLITE_OK, i;
  if (colvecStorageFolderList(p->db, pC->zDb, pC->zName, &list) != SQLITE_OK) {
    return SQLITE_OK;
  }
  for (i = 0; i < list.n && rc == SQLITE_OK; i++) {
    if (strcmp(list.azFolder[i], zFolder) == 0) {
      *pzErr = sqlite3_mprintf("colvec: table %s: segment folder %s in "
                               "%s_config is also named by table %s: the "
                               "table is damaged",
                               pC->zName, zFolder, pC->zName, list.azTable[i]);
      rc = SQLITE_CORRUPT_VTAB;
    }
  }
  colvecStorageFolderListFree(&list);
  return rc;
}

/* xShadowName; see colvecInt.h. */
int colvecStorageIsShadow(const char *zSuffix) {
  int i;
  for (i = 0; i < STORAGE_NSHADOW_ALL; i++) {
    if (sqlite3_stricmp(zSuffix, storageSuffix[i]) == 0) return 1;
  }
  return 0;
}

/* Whether the table's T_config exists; see colvecInt.h. */
int colvecStorageConfigExists(ColvecStorage *p, int *pbExists) {
  return storageTableExists(p, "config", pbExists);
}

/* Begins the read of colvec_check(); see colvecInt.h. */
int colvecStorageSnapshot(sqlite3 *db, const char *zDb, const char *zTab,
                          sqlite3_stmt **ppSnap) {
  char *zSql =
      sqlite3_mprintf("SELECT key FROM \"%w\".\"%w_config\"", zDb, zTab);
  int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, ppSnap, NULL) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if (rc == SQLITE_OK) {
    int rcStep = sqlite3_step(*ppSnap);
    if (rcStep != SQLITE_ROW && rcStep != SQLITE_DONE)
      rc = sqlite3_reset(*ppSnap);
  }
  return rc;
}

/* Begins the read of colvec_backup(); see colvecInt.h. */
int colvecStorageSchemaHold(sqlite3 *db, const char *zDb,
                            sqlite3_stmt **ppHold) {
  char *zSql =
      sqlite3_mprintf("SELECT count(*) FROM \"%w\".sqlite_schema", zDb);
  int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, ppHold, NULL) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if (rc == SQLITE_OK && sqlite3_step(*ppHold) != SQLITE_ROW) {
    rc = sqlite3_reset(*ppHold);
    if (rc == SQLITE_OK) rc = SQLITE_ERROR;
  }
  return rc;
}
