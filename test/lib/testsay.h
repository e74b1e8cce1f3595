/*
** testsay.h — how a forked test child reports to its parent: one line of
** printf-style text written to a pipe with a single write(), so lines from
** a child never interleave and nothing is left in a stdio buffer when the
** child _exit()s (check_oom.c, check_ioerr.c).
*/
#ifndef COLVEC_TESTSAY_H
#define COLVEC_TESTSAY_H

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* Longest line written, newline included; longer text is cut. */
#define TESTSAY_MAX 1400

/* Writes printf-style text and a newline to fd; _exit(3) if the pipe is
** gone (the parent died: nobody is left to report to). */
static void testSay(int fd, const char *zFmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), unused))
#endif
    ;
static void testSay(int fd, const char *zFmt, ...) {
  char z[TESTSAY_MAX];
  va_list ap;
  int n;
  va_start(ap, zFmt);
  n = vsnprintf(z, sizeof(z) - 1, zFmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (n > (int)sizeof(z) - 2) n = (int)sizeof(z) - 2;
  z[n++] = '\n';
  if (write(fd, z, (size_t)n) < 0) _exit(3);
}

#endif /* COLVEC_TESTSAY_H */
