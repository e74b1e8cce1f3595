/*
** colvec_folder.c — where a table's segment files are named and kept: the
** store and the name each schema's folders hang off (a file beside the
** database, or the memory store for a database without a file), the
** names of segment files, making a table's folder, and removing folders
** and files colvec can prove it made. Messages that quote memory paths
** are rewritten here too, since only this file gives those paths. See
** colvecInt.h for the interface.
*/
#include "colvecInt.h"

#include <string.h>

/* Path of segment iSegid in folder zDir, with suffix zSuffix. */
char *colvecFolderSegPath(const char *zDir, int64_t iSegid,
                          const char *zSuffix) {
  return sqlite3_mprintf("%s" COLVEC_OS_SEP "%06lld.seg%s", zDir,
                         (long long)iSegid, zSuffix);
}

/* The store of schema zDb's segments; see colvecInt.h. A database that
** is not a file here (colvecConfigDbKind) keeps them in memory. */
const ColvecStore *colvecFolderDbStore(sqlite3 *db, const char *zDb) {
  return colvecConfigDbKind(db, zDb) == COLVEC_DB_FILE ? &colvecStoreFile
                                                       : &colvecStoreMem;
}

/* The name segment folders hang off; see colvecInt.h. */
char *colvecFolderDbFile(sqlite3 *db, const char *zDb) {
  char *zOut, *z;
  int i;
  if (colvecConfigDbKind(db, zDb) == COLVEC_DB_FILE) {
    return sqlite3_mprintf("%s", sqlite3_db_filename(db, zDb));
  }
  /* COLVEC_STORE_MEM_ROOT/<connection>/<schema, bytes other than [A-Za-z0-9_]
  ** as %XX>: one name per connection and schema, no separator inside */
  zOut = sqlite3_malloc64(strlen(zDb) * 3 + 64);
  if (zOut == NULL) return NULL;
  sqlite3_snprintf(48, zOut, "%s" COLVEC_OS_SEP "%p" COLVEC_OS_SEP,
                   COLVEC_STORE_MEM_ROOT, (void *)db);
  z = zOut + strlen(zOut);
  for (i = 0; zDb[i]; i++) {
    unsigned char c = (unsigned char)zDb[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || c == '_') {
      *z++ = (char)c;
    } else {
      *z++ = '%';
      *z++ = "0123456789ABCDEF"[c >> 4];
      *z++ = "0123456789ABCDEF"[c & 15];
    }
  }
  *z = 0;
  return zOut;
}

/* Frees the segments of db's databases without a file; see colvecInt.h. */
void colvecFolderMemRelease(sqlite3 *db) {
  char zDir[64];
  sqlite3_snprintf(sizeof(zDir), zDir, "%s" COLVEC_OS_SEP "%p",
                   COLVEC_STORE_MEM_ROOT, (void *)db);
  colvecStoreMem.xRemoveTree(zDir, NULL);
}

/* A scratch folder of a connection in memory; see colvecInt.h. */
char *colvecFolderMemScratch(sqlite3 *db, const char *zUse, const char *zDir) {
  return sqlite3_mprintf(
      "%s" COLVEC_OS_SEP "%p" COLVEC_OS_SEP "-%s" COLVEC_OS_SEP "%s",
      COLVEC_STORE_MEM_ROOT, (void *)db, zUse, colvecOsBaseName(zDir));
}

/* Path of a table's segment folder; see colvecInt.h. */
char *colvecFolderPath(const char *zFile, const char *zFolder) {
  return sqlite3_mprintf("%s-colvec" COLVEC_OS_SEP "%s", zFile, zFolder);
}

/* Parses a segment file's name; see colvecInt.h. */
int colvecFolderParseName(const char *zName, int64_t *piSegid) {
  int64_t iSegid = 0;
  const char *z = zName;
  int nHex = 0;
  if (*z < '0' || *z > '9') return 0;
  while (*z >= '0' && *z <= '9' && iSegid < ((int64_t)1 << 50)) {
    iSegid = iSegid * 10 + (*z++ - '0');
  }
  if (*z >= '0' && *z <= '9') return 0; /* too many digits */
  if (strcmp(z, ".seg") != 0 && strcmp(z, ".seg.tmp") != 0) {
    /* the temporary of a rebuilt cache file: ".seg.<hex>.tmp" */
    if (strncmp(z, ".seg.", 5) != 0) return 0;
    for (z += 5; (*z >= '0' && *z <= '9') || (*z >= 'a' && *z <= 'f'); z++) {
      nHex++;
    }
    if (nHex == 0 || nHex > 16 || strcmp(z, ".tmp") != 0) return 0;
  }
  *piSegid = iSegid;
  return 1;
}

/* Returns non-zero for the names colvec gives segment files
** (colvecFolderParseName). */
static int folderIsSegmentName(const char *z) {
  int64_t iSegid;
  return colvecFolderParseName(z, &iSegid);
}

/* Removes a table folder's segment files, then the folder if empty. */
void colvecFolderRemove(const ColvecStore *pStore, const char *zDir) {
  char **azName = NULL;
  int nName = 0, i;
  if (pStore->xKind(zDir) != COLVEC_OS_DIR) return; /* never through a link */
  if (pStore->xListDir(zDir, NULL, &azName, &nName, NULL) != COLVEC_OK) return;
  for (i = 0; i < nName; i++) {
    char *zPath;
    if (!folderIsSegmentName(azName[i])) continue;
    zPath = sqlite3_mprintf("%s" COLVEC_OS_SEP "%s", zDir, azName[i]);
    if (zPath == NULL) break;
    if (pStore->xKind(zPath) != COLVEC_OS_DIR) pStore->xUnlink(zPath, NULL);
    sqlite3_free(zPath);
  }
  colvecOsListFree(azName, nName);
  pStore->xRmdir(zDir, NULL); /* fails, harmlessly, when other files remain */
}

/* Removes orphan table folders; see colvecInt.h. */
void colvecFolderSweepOrphans(sqlite3 *db, const char *zDb, const char *zSkip) {
  const ColvecStore *pStore = colvecFolderDbStore(db, zDb);
  char *zFile = colvecFolderDbFile(db, zDb);
  ColvecFolderList list;
  char *zRoot = zFile ? sqlite3_mprintf("%s-colvec", zFile) : NULL;
  char **azName = NULL;
  int nName = 0, i, j;
  sqlite3_free(zFile);
  if (zRoot == NULL) return;
  if (pStore->xListDir(zRoot, NULL, &azName, &nName, NULL) == COLVEC_OK &&
      nName > 0 &&
      colvecStorageFolderList(db, zDb, zSkip, &list) == SQLITE_OK) {
    for (i = 0; i < nName; i++) {
      int bNamed = 0;
      if (colvecStorageFolderCheck(azName[i], (int)strlen(azName[i])) !=
          COLVEC_FOLDER_ID) {
        continue; /* not a name colvec gives: not colvec's to remove */
      }
      for (j = 0; j < list.n && !bNamed; j++) {
        bNamed = strcmp(list.azFolder[j], azName[i]) == 0;
      }
      if (!bNamed) {
        char *zDir = sqlite3_mprintf("%s" COLVEC_OS_SEP "%s", zRoot, azName[i]);
        if (zDir) colvecFolderRemove(pStore, zDir);
        sqlite3_free(zDir);
      }
    }
    colvecStorageFolderListFree(&list);
  }
  colvecOsListFree(azName, nName);
  sqlite3_free(zRoot);
}

/* Chooses and creates a new table folder; see colvecInt.h. */
int colvecFolderNew(sqlite3 *db, const char *zDb, char **pzFolder,
                    char **pzErr) {
  const ColvecStore *pStore = colvecFolderDbStore(db, zDb);
  char *zFile = colvecFolderDbFile(db, zDb);
  char *zRoot = zFile ? sqlite3_mprintf("%s-colvec", zFile) : NULL;
  ColvecErr err;
  int rc = SQLITE_OK, iTry;
  *pzFolder = NULL;
  err.zMsg[0] = 0;
  sqlite3_free(zFile);
  if (zRoot == NULL) return SQLITE_NOMEM;
  rc = pStore->xMkdirUp(zRoot, 0, &err);
  if (rc != COLVEC_OK) {
    *pzErr = sqlite3_mprintf("%s", err.zMsg);
    rc = colvecFileRc(rc, SQLITE_CANTOPEN);
  }
  for (iTry = 0; rc == SQLITE_OK && iTry < 100; iTry++) {
    sqlite3_uint64 iRand = 0;
    char *zDir;
    int rcDir;
    sqlite3_randomness(sizeof(iRand), &iRand);
    *pzFolder = sqlite3_mprintf("%016llx", (unsigned long long)iRand);
    if (*pzFolder == NULL) {
      rc = SQLITE_NOMEM;
      break;
    }
    zDir = sqlite3_mprintf("%s" COLVEC_OS_SEP "%s", zRoot, *pzFolder);
    if (zDir == NULL) {
      rc = SQLITE_NOMEM;
      break;
    }
    /* mkdir fails on anything already there: the name is new on disk */
    rcDir = pStore->xMkdir(zDir, &err);
    /* Make the new folder's entry, and the -colvec folder's, durable: the
    ** segment files synced into it later are lost with it otherwise. */
    if (rcDir == COLVEC_OK) rcDir = pStore->xSyncParent(zDir, &err);
    if (rcDir == COLVEC_OK) rcDir = pStore->xSyncParent(zRoot, &err);
    if (rcDir != COLVEC_OK && rcDir != COLVEC_ERROR) pStore->xRmdir(zDir, NULL);
    sqlite3_free(zDir);
    if (rcDir == COLVEC_OK) break;
    sqlite3_free(*pzFolder);
    *pzFolder = NULL;
    if (rcDir != COLVEC_ERROR) {
      *pzErr = sqlite3_mprintf("%s", err.zMsg);
      rc = colvecFileRc(rcDir, SQLITE_CANTOPEN);
    }
  }
  if (rc == SQLITE_OK && *pzFolder == NULL) {
    *pzErr =
        sqlite3_mprintf("colvec: cannot find a free folder name in %s", zRoot);
    rc = SQLITE_CANTOPEN;
  }
  sqlite3_free(zRoot);
  return rc;
}

/*
** Sets *pzErr to say that the segment folder of set p is not a folder (a
** file, a link, or something else) and returns SQLITE_CORRUPT_VTAB.
*/

/* Rewrites memory paths in a message; see colvecInt.h. */
char *colvecFolderUserMessage(const char *zMsg) {
  static const char zRoot[] = "\"" COLVEC_STORE_MEM_ROOT;
  sqlite3_str *pStr = sqlite3_str_new(NULL);
  const char *z = zMsg, *zAt;
  while ((zAt = strstr(z, zRoot)) != NULL) {
    const char *zEnd = strchr(zAt + 1, '"');
    const char *zBase;
    if (zEnd == NULL) break;
    for (zBase = zEnd; zBase > zAt + 1 && zBase[-1] != '/' && zBase[-1] != '\\';
         zBase--) {
    }
    sqlite3_str_append(pStr, z, (int)(zAt - z));
    sqlite3_str_appendf(pStr, "%.*s (in memory)", (int)(zEnd - zBase), zBase);
    z = zEnd + 1;
  }
  sqlite3_str_appendall(pStr, z);
  return sqlite3_str_finish(pStr);
}
