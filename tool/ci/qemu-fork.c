/*
** qemu-fork.c — a fork() for programs run under qemu-user, preloaded by
** tool/ci/cross-check.sh (LD_PRELOAD in the guest).
**
** Under qemu-user 7.2 (Debian 12) the child of glibc's fork() can spin
** forever before returning, on some hosts, while the same clone system
** call made directly works. Check runs each test in a forked child, and
** several suites fork children of their own, so without this every suite
** hangs there. This fork() makes the system call itself and skips glibc's
** fork handlers: fine for the test programs, which fork while they run a
** single thread.
**
** pthread_create() hangs the same way there (the calling thread spins in
** glibc before the new thread's stack is mapped, for any program), so it
** reports that no thread could be started (EAGAIN): colvec then runs each
** worker's share on the calling thread, with the same result, and a test
** that needs a second thread fails instead of hanging (check_interrupt
** then interrupts from a signal handler).
*/
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/*
** Creates a child process as fork(2) does; returns 0 in the child, its
** pid in the parent, -1 (errno set) on failure.
*/
pid_t fork(void) { return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0); }

/* Starts no thread: returns EAGAIN (see the header comment). */
int pthread_create(pthread_t *pThread, const pthread_attr_t *pAttr,
                   void *(*xMain)(void *), void *pArg) {
  (void)pThread;
  (void)pAttr;
  (void)xMain;
  (void)pArg;
  return EAGAIN;
}
