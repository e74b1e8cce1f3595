/*
** colvec.h — public interface of the colvec SQLite extension.
**
** colvec adds the virtual-table module "colvec": K-nearest-neighbour search
** over vector columns, with ordinary attribute columns beside them.
**
** Loadable use:   .load ./colvec          (sqlite3 shell)
**                 sqlite3_load_extension(db, "./colvec", 0, &zErr);
** Static linking: compile the ext/ sources into the application with
**                 -DSQLITE_CORE and call sqlite3_colvec_init() once per
**                 connection, or register it with sqlite3_auto_extension().
*/
#ifndef COLVEC_H
#define COLVEC_H

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this release, as a string and as MAJOR*1000000+MINOR*1000+PATCH.
** The one place it is written: configure, the amalgamation, the Python wheel
** and the npm packages read it through tool/version.sh, which also checks
** that the two agree. CHANGELOG.md says what each version changed. */
#define COLVEC_VERSION "0.1.0"
#define COLVEC_VERSION_NUMBER 1000

/* Oldest SQLite the extension loads into (sqlite3_vtab_in, LIMIT
** constraints: 3.38; 3.38.2 is the oldest release the tests run on). */
#define COLVEC_MIN_SQLITE_VERSION_NUMBER 3038002

/*
** Registers the colvec module and its SQL functions on connection db.
** Returns SQLITE_OK, or an error code with *pzErrMsg set (sqlite3_malloc'd)
** when the running SQLite is older than COLVEC_MIN_SQLITE_VERSION_NUMBER.
** pApi is the loadable-extension routine table (NULL when statically linked).
*/
int sqlite3_colvec_init(sqlite3 *db, char **pzErrMsg,
                        const sqlite3_api_routines *pApi);

#ifdef __cplusplus
}
#endif
#endif /* COLVEC_H */
