/*
** qemu-fork.c — a fork() for programs run under qemu-user, preloaded by
** tool/cross-check.sh (LD_PRELOAD in the guest).
**
** Under qemu-user 7.2 (Debian 12) the child of glibc's fork() can spin
** forever before returning, on some hosts, while the same clone system
** call made directly works. Check runs each test in a forked child, and
** several suites fork children of their own, so without this every suite
** hangs there. This fork() makes the system call itself and skips glibc's
** fork handlers: fine for the test programs, which fork while they run a
** single thread.
*/
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/*
** Creates a child process as fork(2) does; returns 0 in the child, its
** pid in the parent, -1 (errno set) on failure.
*/
pid_t fork(void) { return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0); }
