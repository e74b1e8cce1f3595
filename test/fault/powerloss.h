/*
** powerloss.h — power-loss simulation for tests (colvec and SQLite files).
**
** A test process calls plInstall() once, runs a workload, and at a chosen
** sync point plCrash() puts every file the process wrote back to what an
** fsync made durable, then ends the process with _exit(PL_EXIT_CRASH). The
** model is in powerloss.c's header comment. Not thread-safe to install;
** the callbacks themselves serialize.
*/
#ifndef COLVEC_POWERLOSS_H
#define COLVEC_POWERLOSS_H

/* Exit status of a process that plCrash() ended. */
#define PL_EXIT_CRASH 86

/* Where, relative to the chosen sync point, the crash happens. */
#define PL_BEFORE 0 /* the sync does not happen */
#define PL_AFTER 1  /* the sync happens, then the crash */

int plInstall(void);
void plCrashAt(int iSync, int eWhen);
int plSyncCount(void);
void plCrash(void);

#endif /* COLVEC_POWERLOSS_H */
